/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/step.c: one training step of each algorithm (docs/trainer.md, section 2).
 *
 * Zeroth order (dpzero, mezo), step t with batch S, Q queries, perturbation lambda:
 *   u_k   = the direction (seed, t, k), k < Q, regenerated, never stored;
 *   d_ik  = (f(theta + lambda u_k; x_i) - f(theta - lambda u_k; x_i)) / (2 lambda), evaluated
 *           with on-the-fly perturbation (theta is not written);
 *   dpzero: each example's Q-vector clipped by the privacy object (L2 to C for a Gaussian
 *           profile); g_k = (sum_i d_ik + z_k) / B, z_k one noise draw per query per step,
 *           also for an empty batch; mezo: g_k = sum_i d_ik / B;
 *   theta <- theta - (eta_t / Q) g_k u_k for each k (the mean of the Q one-direction
 *           updates), each one fused pass dpzo_dir_axpy.
 * First order, dpsgd: per-example gradients (in chunks of at most 64 MiB) clipped in L2 to
 * C, summed, plus N(0, (sigma C)^2) per coordinate, divided by B; sgd: the batch's mean
 * gradient. B is the expected batch size (Poisson) or the batch size (shuffle): dividing
 * by the realised size would make the update depend on it without accounting for that. */
#include <math.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"
#include "zo_math.h" /* kernels/cpu: dpzo__axpy_floats */

dpzo_status dpzo__model_failed(dpzo_ctx *ctx, dpzo_status st, const char *what)
{
    return dpzo__fail(ctx, st, "%s failed: %s", what, dpzo_status_name(st));
}

dpzo_status dpzo__zo_differences(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                 double lambda, const dpzo_dataset *ds, const size_t *idx,
                                 size_t b, double *lp, double *lm, double *d, size_t stride)
{
    return dpzo__zo_differences_u(m, theta, dir, lambda, ds, idx, b, lp, lm, d, stride, NULL);
}

dpzo_status dpzo__zo_differences_u(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                   double lambda, const dpzo_dataset *ds, const size_t *idx,
                                   size_t b, double *lp, double *lm, double *d, size_t stride,
                                   float *u_keep)
{
    /* both signs in one fused pass: the same bits as two dpzo_model_losses calls */
    dpzo_status st =
        dpzo__model_losses_pm_u(m, theta, dir, lambda, ds, idx, b, lp, lm, u_keep);
    if (st != DPZO_OK)
        return st;
    for (size_t i = 0; i < b; i++)
        d[i * stride] = (lp[i] - lm[i]) / (2.0 * lambda);
    return DPZO_OK;
}

size_t dpzo__pe_chunk(size_t P, double batch)
{
    size_t cap = ((size_t)64 << 20) / (P * sizeof(float));
    size_t want = (size_t)ceil(batch);
    size_t c = want < cap ? want : cap;
    return c > 0 ? c : 1;
}

/* The noise of step t's release: n draws into out, counted. */
dpzo_status dpzo__draw_noise(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, double *out,
                              size_t n)
{
    dpzo_status st = DPZO_OK;
    if (tr->noise_hook != NULL)
        tr->noise_hook(tr->noise_user, t, out, n);
    else
        st = dpzo_privacy_noise(ctx, tr->privacy, out, n);
    if (st == DPZO_OK)
        tr->noise_draws += n;
    return st;
}

void dpzo__zo_clip_row(const dpzo_privacy *p, double *v, unsigned Q)
{
    for (unsigned k = 0; k < Q; k++)
        if (!isfinite(v[k])) {
            memset(v, 0, Q * sizeof *v);
            break;
        }
    dpzo_privacy_clip(p, v, Q);
}

/* qsum[k] = sum_i (clipped) d_ik, plus one noise draw per query when private. */
static dpzo_status zo_release(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b)
{
    const unsigned Q = tr->cfg.queries;
    for (unsigned k = 0; k < Q; k++)
        tr->qsum[k] = 0.0;
    for (size_t i = 0; i < b; i++) {
        double *v = tr->vals + i * Q;
        if (tr->privacy != NULL)
            dpzo__zo_clip_row(tr->privacy, v, Q);
        for (unsigned k = 0; k < Q; k++)
            tr->qsum[k] += v[k];
    }
    memcpy(tr->last_clean, tr->qsum, Q * sizeof *tr->qsum);
    if (tr->privacy != NULL) {
        dpzo_status st = dpzo__draw_noise(ctx, tr, t, tr->qnoise, Q);
        if (st != DPZO_OK)
            return st;
        for (unsigned k = 0; k < Q; k++)
            tr->qsum[k] += tr->qnoise[k];
    }
    memcpy(tr->last_noisy, tr->qsum, Q * sizeof *tr->qsum);
    return DPZO_OK;
}

/* The directions of the trainer's own ZO algorithms (dpzero, mezo, pazo-m): the
 * configured kind and radius, keyed by (seed, t, k). */
static dpzo_status plain_dir(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, unsigned k,
                             dpzo_dir *dir)
{
    const dpzo_train_config *c = &tr->cfg;
    return dpzo_dir_init(ctx, dir, c->direction, c->seed, t, k, tr->P, tr->radius);
}

dpzo_status dpzo__zo_estimate(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b,
                              double lambda, dpzo__dir_setup setup)
{
    const unsigned Q = tr->cfg.queries;
    tr->ucache_ok = 0;
    for (unsigned k = 0; k < Q; k++) {
        dpzo_status st = (setup != NULL ? setup : plain_dir)(ctx, tr, t, k, &tr->dirs[k]);
        if (st != DPZO_OK)
            return st;
        if (b == 0)
            continue;
        float *keep = tr->ucache != NULL ? tr->ucache + (size_t)k * tr->P : NULL;
        st = dpzo__zo_differences_u(tr->model, tr->theta, &tr->dirs[k], lambda, &tr->priv,
                                    tr->idx, b, tr->lp, tr->lm, tr->vals + k, Q, keep);
        if (st != DPZO_OK)
            return dpzo__model_failed(ctx, st, "zeroth-order evaluation");
        if (k == 0) /* (f(+) + f(-)) / 2 = f(theta) + O(lambda^2): the loss for free */
            for (size_t i = 0; i < b; i++)
                tr->loss_sum += 0.5 * (tr->lp[i] + tr->lm[i]);
    }
    tr->loss_count += b;
    tr->ucache_ok = tr->ucache != NULL && b > 0; /* every direction was generated */
    return zo_release(ctx, tr, t, b);
}

dpzo_status dpzo__zo_update(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, double coef,
                            dpzo__dir_setup setup)
{
    if (tr->ucache_ok) { /* the floats dpzo_dir_axpy would generate, kept by the evaluation */
        for (unsigned k = 0; k < tr->cfg.queries; k++) {
            const double alpha = coef * (tr->qsum[k] / tr->B);
            dpzo__axpy_floats(tr->P, alpha, tr->ucache + (size_t)k * tr->P, tr->theta);
        }
        tr->ucache_ok = 0;
        return DPZO_OK;
    }
    for (unsigned k = 0; k < tr->cfg.queries; k++) {
        if (setup != NULL) { /* the direction's buffer was reused: set it up again */
            dpzo_status st = setup(ctx, tr, t, k, &tr->dirs[k]);
            if (st != DPZO_OK)
                return st;
        }
        dpzo_dir_axpy(&tr->dirs[k], 0, tr->P, coef * (tr->qsum[k] / tr->B), tr->theta);
    }
    return DPZO_OK;
}

/* DPZero / MeZO: theta <- theta - (eta / Q) sum_k g_k u_k. */
static dpzo_status zo_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    dpzo_status st = dpzo__zo_estimate(ctx, tr, t, b, tr->cfg.lambda, NULL);
    if (st != DPZO_OK)
        return st;
    return dpzo__zo_update(ctx, tr, t, -lr / (double)tr->cfg.queries, NULL);
}

static dpzo_status dpsgd_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr)
{
    const size_t P = tr->P;
    memset(tr->gsum, 0, P * sizeof *tr->gsum);
    for (size_t c0 = 0; c0 < b; c0 += tr->pe_chunk) {
        size_t cb = b - c0 < tr->pe_chunk ? b - c0 : tr->pe_chunk;
        double mean = 0.0;
        dpzo_status st = dpzo_model_grad(tr->model, tr->theta, &tr->priv, tr->idx + c0, cb,
                                         tr->grad, tr->per_ex, &mean);
        if (st != DPZO_OK)
            return dpzo__model_failed(ctx, st, "per-example gradients");
        tr->loss_sum += mean * (double)cb;
        for (size_t e = 0; e < cb; e++) {
            float *g = tr->per_ex + e * P;
            dpzo_privacy_clip_float(tr->privacy, g, P);
            for (size_t j = 0; j < P; j++)
                tr->gsum[j] += (double)g[j];
        }
    }
    tr->loss_count += b;
    dpzo_status st = dpzo__draw_noise(ctx, tr, t, tr->gnoise, P);
    if (st != DPZO_OK)
        return st;
    for (size_t j = 0; j < P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] - lr * ((tr->gsum[j] + tr->gnoise[j]) / tr->B));
    return DPZO_OK;
}

static dpzo_status sgd_step(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b, double lr)
{
    if (b == 0)
        return DPZO_OK;
    double mean = 0.0;
    dpzo_status st = dpzo_model_grad(tr->model, tr->theta, &tr->priv, tr->idx, b, tr->grad, NULL,
                                     &mean);
    if (st != DPZO_OK)
        return dpzo__model_failed(ctx, st, "gradient");
    tr->loss_sum += mean * (double)b;
    tr->loss_count += b;
    for (size_t j = 0; j < tr->P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] - lr * (double)tr->grad[j]);
    return DPZO_OK;
}

dpzo_status dpzo__train_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b)
{
    double lr = dpzo_lr_at(tr->cfg.lr_schedule, tr->cfg.lr, t, tr->cfg.steps);
    tr->lr_last = lr;
    switch (tr->cfg.algorithm) {
    case DPZO_ALG_DPZERO:
    case DPZO_ALG_MEZO:
        return zo_step(ctx, tr, t, b, lr);
    case DPZO_ALG_DPSGD:
        return dpsgd_step(ctx, tr, t, b, lr);
    case DPZO_ALG_DPZOSO:
    case DPZO_ALG_DPZOPO:
        return dpzo__stagewise_step(ctx, tr, t, b);
    case DPZO_ALG_PAZO_M:
    case DPZO_ALG_PAZO_P:
    case DPZO_ALG_PAZO_S:
        return dpzo__pazo_step(ctx, tr, t, b, lr);
    default:
        return sgd_step(ctx, tr, b, lr);
    }
}
