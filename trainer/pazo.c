/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/pazo.c: the public-data methods (docs/algorithms.md, sections 4-6) and public
 * pre-training.
 *
 * Public rows are reached through ordinary first-order gradients (mean cross-entropy of a
 * public batch at the current theta, no clipping, no noise: public data costs no privacy,
 * and theta is already a released value). Public batches come from shuffled epochs of the
 * public rows keyed by the configuration's seed: batch j of step t is place t k + j of that
 * stream (k = 1 for PAZO-M), a pure function of (seed, t, j).
 *
 *   PAZO-M: theta <- theta - lr (alpha g_pub + (1 - alpha) / Q sum_k g_k u_k), u_k on the
 *           sphere of radius d^(1/4) (the norms of both parts match), g_k DPZero's noisy
 *           mean of clipped central differences.
 *   PAZO-P: G = the k public gradients orthonormalised (or normalised); u_k = G c_k with
 *           c_k on the sphere of radius sqrt(k') (k' the kept columns) in R^k'; the same
 *           private release along u_k; theta <- theta - lr / Q sum_k g_k u_k.
 *   PAZO-S: candidates theta - lr g_j (j < k, the public gradients); each example's k
 *           losses there (a k-vector clipped in L2 to C sqrt(k / (k+1))) summed and noised
 *           (sigma C each): f_j = noisy sum / B; the best j^; then the noisy candidate
 *           g' = g_j^ + s z (z ~ N(0, I) keyed by (seed, t, k)), its losses clipped to
 *           C / sqrt(k+1), noised: f' ; the step takes g' if f' < f_j^ else g_j^. Without
 *           the noisy candidate the k-vector gets all of C. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"

size_t dpzo__public_batch(dpzo_trainer *tr, uint64_t t, unsigned j, size_t *idx)
{
    uint64_t per = tr->cfg.algorithm == DPZO_ALG_PAZO_M ? 1 : tr->cfg.pub.k;
    return dpzo__sampler_batch(&tr->pub_sampler, t * per + j, idx);
}

/* grad = the mean-loss gradient of public batch j of step t. */
static dpzo_status public_grad(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, unsigned j,
                               float *grad)
{
    size_t nb = dpzo__public_batch(tr, t, j, tr->pub_idx);
    dpzo_status st = dpzo_model_grad(tr->model, tr->theta, &tr->pub, tr->pub_idx, nb, grad,
                                     NULL, NULL);
    return st == DPZO_OK ? DPZO_OK : dpzo__model_failed(ctx, st, "public gradient");
}

dpzo_status dpzo__pretrain(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    const dpzo_pretrain_config *w = &tr->cfg.pretrain;
    dpzo__sampler smp = {0};
    size_t *idx = malloc(tr->pub.n * sizeof *idx);
    float *grad = malloc(tr->P * sizeof *grad);
    dpzo_status st = idx && grad ? DPZO_OK
                                 : dpzo__fail(ctx, DPZO_ENOMEM, "pretrain: out of memory");
    if (st == DPZO_OK)
        st = dpzo__sampler_init(ctx, &smp, DPZO_BATCH_SHUFFLE, tr->cfg.seed ^ 0x7072657472616eull,
                                tr->pub.n, w->batch_size, 0);
    for (uint64_t t = 0; t < w->steps && st == DPZO_OK; t++) {
        size_t nb = dpzo__sampler_batch(&smp, t, idx);
        st = dpzo_model_grad(tr->model, tr->theta, &tr->pub, idx, nb, grad, NULL, NULL);
        if (st != DPZO_OK) {
            st = dpzo__model_failed(ctx, st, "pretrain gradient");
            break;
        }
        for (size_t j = 0; j < tr->P; j++)
            tr->theta[j] = (float)((double)tr->theta[j] - w->lr * (double)grad[j]);
    }
    dpzo__sampler_free(&smp);
    free(idx);
    free(grad);
    return st;
}

/* ---- PAZO-M ------------------------------------------------------------------------ */

static dpzo_status pazo_m(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    const double alpha = tr->cfg.pub.alpha;
    dpzo_status st = public_grad(ctx, tr, t, 0, tr->grad);
    if (st == DPZO_OK)
        st = dpzo__zo_estimate(ctx, tr, t, b, tr->cfg.lambda, NULL);
    if (st != DPZO_OK)
        return st;
    for (size_t j = 0; j < tr->P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] - lr * alpha * (double)tr->grad[j]);
    return dpzo__zo_update(ctx, tr, t, -lr * (1.0 - alpha) / (double)tr->cfg.queries, NULL);
}

/* ---- PAZO-P ------------------------------------------------------------------------ */

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * (double)b[i];
    return s;
}

unsigned dpzo__span_basis(float *G, unsigned k, size_t P, int orthonormalize)
{
    unsigned kept = 0;
    for (unsigned j = 0; j < k; j++) {
        float *g = G + (size_t)j * P;
        double n0 = sqrt(dot(g, g, P));
        if (!(n0 > 0.0 && isfinite(n0)))
            continue; /* zero or not finite: no direction */
        float *dst = G + (size_t)kept * P;
        if (dst != g)
            memcpy(dst, g, P * sizeof *dst);
        double n1 = n0;
        if (orthonormalize) {
            /* modified Gram-Schmidt against the kept columns, twice ("twice is enough") */
            for (int pass = 0; pass < 2; pass++)
                for (unsigned i = 0; i < kept; i++) {
                    const float *q = G + (size_t)i * P;
                    double c = dot(dst, q, P);
                    for (size_t x = 0; x < P; x++)
                        dst[x] = (float)((double)dst[x] - c * (double)q[x]);
                }
            n1 = sqrt(dot(dst, dst, P));
            if (!(n1 > 1e-6 * n0) || !isfinite(n1))
                continue; /* (nearly) in the span already: dropped */
        }
        for (size_t x = 0; x < P; x++)
            dst[x] = (float)((double)dst[x] / n1);
        kept++;
    }
    return kept;
}

dpzo_status dpzo__span_vector(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t, unsigned k,
                              const float *G, unsigned m, size_t P, double *coef, float *out)
{
    if (m == 0) {
        memset(out, 0, P * sizeof *out); /* no public direction: a zero step */
        return DPZO_OK;
    }
    dpzo_dir cd;
    dpzo_status st = dpzo_dir_init(ctx, &cd, c->direction, c->seed, t, k, m, sqrt((double)m));
    if (st != DPZO_OK)
        return st;
    for (unsigned i = 0; i < m; i++)
        coef[i] = dpzo_dir_at(&cd, i);
    for (size_t x = 0; x < P; x++) {
        double v = 0.0;
        for (unsigned i = 0; i < m; i++)
            v += coef[i] * (double)G[(size_t)i * P + x];
        out[x] = (float)v;
    }
    return DPZO_OK;
}

/* u_k = G c_k into vbuf (dpzo__span_vector). */
static dpzo_status span_dir(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, unsigned k,
                            dpzo_dir *dir)
{
    dpzo_status st = dpzo__span_vector(ctx, &tr->cfg, t, k, tr->gpub, tr->basis, tr->P,
                                       tr->coef, tr->vbuf);
    return st != DPZO_OK ? st : dpzo_dir_init_vector(ctx, dir, tr->vbuf, tr->P);
}

static dpzo_status pazo_p(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    const unsigned k = tr->cfg.pub.k;
    for (unsigned j = 0; j < k; j++) {
        dpzo_status st = public_grad(ctx, tr, t, j, tr->gpub + (size_t)j * tr->P);
        if (st != DPZO_OK)
            return st;
    }
    tr->basis = dpzo__span_basis(tr->gpub, k, tr->P, tr->cfg.pub.orthonormalize);
    dpzo_status st = dpzo__zo_estimate(ctx, tr, t, b, tr->cfg.lambda, span_dir);
    if (st != DPZO_OK)
        return st;
    return dpzo__zo_update(ctx, tr, t, -lr / (double)tr->cfg.queries, span_dir);
}

/* ---- PAZO-S ------------------------------------------------------------------------ */

/* Per-example losses at theta - lr g (g: P floats) into tr->lp. */
static dpzo_status candidate_losses(dpzo_ctx *ctx, dpzo_trainer *tr, const float *g, double lr,
                                    size_t b)
{
    if (b == 0)
        return DPZO_OK;
    dpzo_dir d;
    dpzo_status st = dpzo_dir_init_vector(ctx, &d, g, tr->P);
    if (st != DPZO_OK)
        return st;
    dpzo_perturb step = {&d, lr, -1};
    st = dpzo_model_losses(tr->model, tr->theta, &step, &tr->priv, tr->idx, b, tr->lp);
    return st == DPZO_OK ? DPZO_OK : dpzo__model_failed(ctx, st, "candidate losses");
}

/* The noisy sums of queries [q0, q0 + n) from tr->vals (b x Q, already clipped). */
static dpzo_status release_part(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b,
                                unsigned q0, unsigned n)
{
    const unsigned Q = dpzo_train_queries_per_step(&tr->cfg);
    for (unsigned k = q0; k < q0 + n; k++) {
        double sum = 0.0;
        for (size_t i = 0; i < b; i++)
            sum += tr->vals[i * Q + k];
        tr->last_clean[k] = sum;
    }
    dpzo_status st = dpzo__draw_noise(ctx, tr, t, tr->qnoise + q0, n);
    for (unsigned k = q0; k < q0 + n && st == DPZO_OK; k++)
        tr->qsum[k] = tr->last_noisy[k] = tr->last_clean[k] + tr->qnoise[k];
    return st;
}

/* A loss that overflowed (or is NaN) at a candidate counts as a very large one, so that
 * candidate is not preferred: 1e150 before clipping (its square, summed over at most 65
 * values, stays finite, and the clip then scales the example's vector to its share). A
 * fixed substitute: the example's contribution still has norm at most its share of C. */
void dpzo__pazo_s_clip_row(const dpzo_privacy *p, const dpzo_public_config *u, double *v,
                           unsigned m, int part)
{
    const unsigned k = u->k;
    const double share = part == 2            ? 1.0 / (double)(k + 1)
                         : u->noisy_candidate ? (double)k / (double)(k + 1)
                                              : 1.0;
    for (unsigned j = 0; j < m; j++)
        if (!isfinite(v[j]))
            v[j] = 1e150;
    dpzo_privacy_clip_part(p, v, m, share);
}

unsigned dpzo__pazo_s_best(const double *released, unsigned k)
{
    unsigned best = 0;
    for (unsigned j = 1; j < k; j++)
        if (released[j] < released[best])
            best = j;
    return best;
}

dpzo_status dpzo__pazo_s_noisy(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t,
                               const float *best, size_t P, float *out)
{
    /* g' = g_best + s z, z keyed by (seed, t, k): a public, reproducible exploration */
    dpzo_dir z;
    memcpy(out, best, P * sizeof *out);
    dpzo_status st = dpzo_dir_init(ctx, &z, DPZO_DIR_GAUSSIAN, c->seed, t, c->pub.k, P, 1.0);
    if (st == DPZO_OK)
        dpzo_dir_axpy(&z, 0, P, c->pub.candidate_scale, out);
    return st;
}

static dpzo_status pazo_s(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    const dpzo_public_config *u = &tr->cfg.pub;
    const unsigned k = u->k, Q = dpzo_train_queries_per_step(&tr->cfg);
    const size_t P = tr->P;
    dpzo_status st = DPZO_OK;
    for (unsigned j = 0; j < k && st == DPZO_OK; j++) {
        float *g = tr->gpub + (size_t)j * P;
        st = public_grad(ctx, tr, t, j, g);
        if (st == DPZO_OK)
            st = candidate_losses(ctx, tr, g, lr, b);
        for (size_t i = 0; i < b && st == DPZO_OK; i++)
            tr->vals[i * Q + j] = tr->lp[i];
        if (j == 0 && st == DPZO_OK) /* f(theta - lr g_0) ~ f(theta): the loss shown */
            for (size_t i = 0; i < b; i++)
                tr->loss_sum += tr->lp[i];
    }
    if (st != DPZO_OK)
        return st;
    tr->loss_count += b;
    for (size_t i = 0; i < b; i++)
        dpzo__pazo_s_clip_row(tr->privacy, u, tr->vals + i * Q, k, 1);
    if ((st = release_part(ctx, tr, t, b, 0, k)) != DPZO_OK)
        return st;
    unsigned best = dpzo__pazo_s_best(tr->qsum, k);
    const float *step = tr->gpub + (size_t)best * P;
    tr->last_choice = (int)best;
    if (u->noisy_candidate) {
        if ((st = dpzo__pazo_s_noisy(ctx, &tr->cfg, t, step, P, tr->vbuf)) != DPZO_OK ||
            (st = candidate_losses(ctx, tr, tr->vbuf, lr, b)) != DPZO_OK)
            return st;
        for (size_t i = 0; i < b; i++) {
            double *v = tr->vals + i * Q + k;
            *v = tr->lp[i];
            dpzo__pazo_s_clip_row(tr->privacy, u, v, 1, 2);
        }
        if ((st = release_part(ctx, tr, t, b, k, 1)) != DPZO_OK)
            return st;
        if (tr->qsum[k] < tr->qsum[best]) { /* compared on the same scale: both sums / B */
            step = tr->vbuf;
            tr->last_choice = (int)k;
        }
    }
    for (size_t j = 0; j < P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] - lr * (double)step[j]);
    return DPZO_OK;
}

dpzo_status dpzo__pazo_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    switch (tr->cfg.algorithm) {
    case DPZO_ALG_PAZO_M:
        return pazo_m(ctx, tr, t, b, lr);
    case DPZO_ALG_PAZO_P:
        return pazo_p(ctx, tr, t, b, lr);
    default:
        return pazo_s(ctx, tr, t, b, lr);
    }
}
