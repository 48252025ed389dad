/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/train_step.c: one step of `dpzo train`: dpzo's own C models as the step object's
 * caller (docs/trainer.md, section 2).
 *
 * The step is the step object's (zo_step.c, dpzo/zo_step.h), the same sequence dpzo.torch
 * drives with a PyTorch model: sample the batch, begin (directions, learning rate, stage),
 * evaluate what the step asks for, release (clip, noise, ledger), update, end. What is
 * here is only the evaluation, with the trainer's model, data and buffers:
 *   - the per-example losses at theta + lambda u_k and theta - lambda u_k (one fused pass
 *     per direction, theta never written; the direction's floats kept in the step
 *     object's cache for the update);
 *   - PAZO's public gradients: mean cross-entropy gradients of public batches at theta
 *     (public data costs no privacy; batch j of step t is place t k + j of shuffled epochs
 *     of the public rows keyed by the configuration's seed, k = 1 for PAZO-M and DPMD);
 *   - PAZO-S's candidates' losses at theta - lr_t g_j;
 *   - DP-ZOPO's linearised network at |theta| +- beta v_p for the stage's pruning score;
 *   - the first-order baselines (dpsgd, sgd, dpmd) go through first_order.c.
 * Public pre-training (non-private SGD on the public rows before the first step) is here
 * too: it is the trainer's model and data, not a step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"
#include "zo_internal.h"

dpzo_status dpzo__zo_differences(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                 double lambda, const dpzo_dataset *ds, const size_t *idx,
                                 size_t b, double *lp, double *lm, double *d, size_t stride)
{
    /* both signs in one fused pass: the same bits as two dpzo_model_losses calls */
    dpzo_status st = dpzo__model_losses_pm_u(m, theta, dir, lambda, ds, idx, b, lp, lm, NULL);
    if (st != DPZO_OK)
        return st;
    for (size_t i = 0; i < b; i++)
        d[i * stride] = (lp[i] - lm[i]) / (2.0 * lambda);
    return DPZO_OK;
}

/* ---- public data --------------------------------------------------------------------- */

size_t dpzo__public_batch(dpzo_trainer *tr, uint64_t t, unsigned j, size_t *idx)
{
    const dpzo_algorithm a = tr->cfg.algorithm;
    uint64_t per = a == DPZO_ALG_PAZO_M || a == DPZO_ALG_DPMD ? 1 : tr->cfg.pub.k;
    return dpzo__sampler_batch(&tr->pub_sampler, t * per + j, idx);
}

/* grad = the mean-loss gradient of public batch j of step t at theta. */
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

/* ---- what the step asks of the model ------------------------------------------------- */

dpzo_status dpzo__prune_sums(dpzo_ctx *ctx, dpzo_model *model, const dpzo_dataset *shape,
                             const float *theta, size_t P, const dpzo_dir *const *v,
                             unsigned n, double beta, double *lp, double *lm)
{
    const size_t K = (size_t)shape->n_classes, D = shape->dim;
    float *abs_theta = malloc(P * sizeof *abs_theta);
    float *ones = malloc(D * sizeof *ones);
    double *logits = malloc(2 * K * sizeof *logits);
    dpzo_status st = DPZO_OK;
    if (abs_theta == NULL || ones == NULL || logits == NULL) {
        st = dpzo__fail(ctx, DPZO_ENOMEM, "pruning score: out of memory");
        goto done;
    }
    for (size_t j = 0; j < P; j++)
        abs_theta[j] = fabsf(theta[j]);
    for (size_t i = 0; i < D; i++)
        ones[i] = 1.0f;
    int32_t label = 0;
    dpzo_dataset one = {.n = 1, .dim = D, .rows = shape->rows, .cols = shape->cols,
                        .n_classes = shape->n_classes, .x = ones, .y = &label};
    size_t row = 0;
    for (unsigned p = 0; p < n; p++) {
        dpzo_perturb plus = {v[p], beta, +1}, minus = {v[p], beta, -1};
        st = dpzo_model_logits(model, abs_theta, &plus, &one, &row, 1, logits);
        if (st == DPZO_OK)
            st = dpzo_model_logits(model, abs_theta, &minus, &one, &row, 1, logits + K);
        if (st != DPZO_OK) {
            st = dpzo__model_failed(ctx, st, "pruning score");
            break;
        }
        lp[p] = lm[p] = 0.0;
        for (size_t k = 0; k < K; k++) {
            lp[p] += logits[k];
            lm[p] += logits[K + k];
        }
    }
done:
    free(abs_theta);
    free(ones);
    free(logits);
    return st;
}

/* DP-ZOPO at a stage's first step: the score's sums, then the stage's mask. */
static dpzo_status score(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    dpzo_zo *zo = tr->zo;
    const unsigned n = dpzo_zo_score_queries(zo);
    const dpzo_dir **v = malloc(n * sizeof *v);
    double *sums = malloc(2 * (size_t)n * sizeof *sums);
    dpzo_status st = v != NULL && sums != NULL
                         ? DPZO_OK
                         : dpzo__fail(ctx, DPZO_ENOMEM, "pruning: out of memory");
    for (unsigned p = 0; p < n && st == DPZO_OK; p++)
        v[p] = dpzo_zo_score_direction(zo, p);
    if (st == DPZO_OK)
        st = dpzo__prune_sums(ctx, tr->model, &tr->priv, tr->theta, tr->P, v, n,
                              dpzo_zo_score_lambda(zo), sums, sums + n);
    if (st == DPZO_OK)
        st = dpzo_zo_set_score(ctx, zo, sums, sums + n, tr->theta);
    free(v);
    free(sums);
    return st;
}

/* The batch's losses along each direction into tr->LP, tr->LM (b x Q), then the release. */
static dpzo_status evaluate_release(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b)
{
    dpzo_zo *zo = tr->zo;
    const unsigned Q = dpzo_zo_queries(zo);
    const double lambda = dpzo_zo_lambda(zo);
    for (unsigned k = 0; k < Q && b > 0; k++) {
        dpzo_status st = dpzo__model_losses_pm_u(tr->model, tr->theta, dpzo_zo_direction(zo, k),
                                                 lambda, &tr->priv, tr->idx, b, tr->lp, tr->lm,
                                                 dpzo__zo_direction_cache(zo, k));
        if (st != DPZO_OK)
            return dpzo__model_failed(ctx, st, "zeroth-order evaluation");
        for (size_t i = 0; i < b; i++) {
            tr->LP[i * Q + k] = tr->lp[i];
            tr->LM[i * Q + k] = tr->lm[i];
        }
    }
    if (b > 0) /* every direction's floats were generated */
        dpzo__zo_cache_filled(zo);
    dpzo_status st = dpzo_zo_clip_sum(ctx, zo, tr->LP, tr->LM, b, tr->qsum);
    return st != DPZO_OK ? st : dpzo_zo_release(ctx, zo, tr->qsum, NULL);
}

/* PAZO-S: each pending part's candidates' losses at theta - lr_t g_j, released. */
static dpzo_status candidates(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b)
{
    dpzo_zo *zo = tr->zo;
    for (unsigned m; (m = dpzo_zo_candidates(zo)) > 0;) {
        for (unsigned j = 0; j < m && b > 0; j++) {
            dpzo_perturb step = {dpzo_zo_candidate(zo, j), dpzo_zo_lr(zo), -1};
            dpzo_status st = dpzo_model_losses(tr->model, tr->theta, &step, &tr->priv, tr->idx,
                                               b, tr->lp);
            if (st != DPZO_OK)
                return dpzo__model_failed(ctx, st, "candidate losses");
            for (size_t i = 0; i < b; i++)
                tr->LP[i * m + j] = tr->lp[i];
        }
        dpzo_status st = dpzo_zo_clip_sum_candidates(ctx, zo, tr->LP, b, tr->qsum);
        if (st == DPZO_OK)
            st = dpzo_zo_release(ctx, zo, tr->qsum, NULL);
        if (st != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

/* The zeroth-order algorithms' step t on the batch's b rows (the step is begun). */
static dpzo_status zo_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b)
{
    dpzo_zo *zo = tr->zo;
    const dpzo_algorithm a = tr->cfg.algorithm;
    dpzo_status st = DPZO_OK;
    if (dpzo_zo_score_queries(zo) > 0 && (st = score(ctx, tr)) != DPZO_OK)
        return st;
    if (a == DPZO_ALG_PAZO_M)
        st = public_grad(ctx, tr, t, 0, tr->grad);
    if (a == DPZO_ALG_PAZO_P || a == DPZO_ALG_PAZO_S) {
        const unsigned k = tr->cfg.pub.k;
        for (unsigned j = 0; j < k && st == DPZO_OK; j++)
            st = public_grad(ctx, tr, t, j, tr->gpub + (size_t)j * tr->P);
        if (st == DPZO_OK)
            st = dpzo_zo_set_public(ctx, zo, tr->gpub, k);
    }
    if (st == DPZO_OK)
        st = a == DPZO_ALG_PAZO_S ? candidates(ctx, tr, b) : evaluate_release(ctx, tr, b);
    if (st == DPZO_OK && a == DPZO_ALG_PAZO_M)
        st = dpzo_zo_update_public(ctx, zo, 0, tr->P, DPZO_F32, tr->theta, tr->grad);
    if (st == DPZO_OK)
        st = dpzo_zo_update(ctx, zo, 0, tr->P, DPZO_F32, tr->theta);
    return st;
}

dpzo_status dpzo__trainer_step(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    dpzo_zo *zo = tr->zo;
    const uint64_t t = dpzo_zo_steps_done(zo);
    const size_t b = dpzo_zo_batch(zo, t, tr->idx);
    dpzo_status st = dpzo__zo_begin_host(ctx, zo, tr->theta);
    if (st != DPZO_OK)
        return st;
    tr->lr_last = dpzo_zo_lr(zo);
    const dpzo_algorithm a = tr->cfg.algorithm;
    if (!dpzo_algorithm_is_first_order(a))
        st = zo_step(ctx, tr, t, b);
    else if (a != DPZO_ALG_DPMD /* dpmd: its public gradient at the step's theta first */
             || (st = public_grad(ctx, tr, t, 0, tr->gpub)) == DPZO_OK)
        st = dpzo__first_order_step(ctx, tr, t, b);
    if (st != DPZO_OK) {
        dpzo_zo_abort(zo); /* a release already made is counted by the ledger */
        return st;
    }
    return dpzo_zo_end(ctx, zo);
}
