/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/stagewise.c: DP-ZOSO's stages and DP-ZOPO's masks (docs/algorithms.md, sections 2
 * and 3), a module below the step object (zo_step.c), which sequences the step; it calls
 * nothing above it. The caller of the step evaluates the linearised network for the
 * pruning score (train_step.c for dpzo's own models).
 *
 * DP-ZOSO is DPZero run in S stages. Stage s (1-based) starts at step
 * T_1 (2^(s-1) - 1), runs T_s = T_1 2^(s-1) steps (the last stage runs to the end of the
 * run), with smoothing lambda_s = lambda (lambda_last / lambda)^((s-1)/(S-1)) and learning
 * rate lr lr_decay^(s-1). With prox > 0 the update also pulls towards the stage's anchor
 * theta^(s-1) (the parameters at the stage's start): theta <- theta - lr_s prox (theta -
 * theta^(s-1)), a deterministic function of released values (no privacy cost).
 *
 * DP-ZOPO adds a mask m (P floats) to the directions: u_j = m_j z_j with z_j the same
 * Philox normal as without the mask (keyed by the global index j), so frozen coordinates
 * (m_j = 0) are neither perturbed nor updated. The mask comes from the data-free ZO score
 * of the paper's Algorithm 3: the linearised network (every parameter |theta_j|, input all
 * ones) has output sum L; its ZO gradient g = mean_p (L(|theta| + b v_p) - L(|theta| - b v_p))
 * / (2b) v_p, and score_j = g_j theta_j. The mask keeps round(r d) coordinates (at least 1)
 * by |score|: the smallest by default (the authors' code; it agrees with the incremental
 * strategy's forced inclusion and with the rank formula), or the largest; incremental
 * masks first keep the previous stage's coordinates. Multipliers: 1, or rank-based
 * A - (A - B) rank / n_sel. The mask uses no data: no privacy cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"


void dpzo__stage_of(const dpzo_train_config *c, uint64_t t, dpzo__stage *out)
{
    const unsigned S = c->stages.count;
    uint64_t T1 = c->stages.first_steps;
    if (T1 == 0) {
        double fill = ldexp(1.0, (int)S) - 1.0; /* 2^S - 1 stage units */
        T1 = (uint64_t)ceil((double)c->steps / fill);
        if (T1 == 0)
            T1 = 1;
    }
    unsigned s = 1;
    uint64_t start = 0, len = T1;
    while (s < S && t >= start + len && len <= (UINT64_MAX >> 2)) {
        start += len;
        len *= 2;
        s++;
    }
    if (s == S || start + len > c->steps) /* the last stage runs to the end */
        len = c->steps > start ? c->steps - start : 0;
    out->s = s;
    out->start = start;
    out->len = len;
    double lam_last = isnan(c->stages.lambda_last) ? c->lambda : c->stages.lambda_last;
    double x = S > 1 ? (double)(s - 1) / (double)(S - 1) : 0.0;
    out->lambda = s == 1 ? c->lambda : s == S ? lam_last : c->lambda * pow(lam_last / c->lambda, x);
    out->lr = c->lr * pow(c->stages.lr_decay, (double)(s - 1));
    double growth = dpzo__prune_growth(&c->prune);
    int fixed = c->prune.strategy == DPZO_PRUNE_STATIC;
    double rate = c->prune.rate * (fixed ? 1.0 : pow(growth, (double)(s - 1)));
    out->rate = rate < 1.0 ? rate : 1.0;
}

/* ---- the data-free pruning score --------------------------------------------------- */

typedef struct {
    double key;
    size_t j;
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

dpzo_status dpzo__prune_dir(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned s, unsigned p,
                            uint64_t P, dpzo_dir *v)
{
    return dpzo_dir_init(ctx, v, DPZO_DIR_GAUSSIAN, c->seed ^ DPZO__PRUNE_SEED_TWEAK, s - 1, p,
                         P, 1.0);
}

dpzo_status dpzo__prune_score(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned s,
                              const double *lp, const double *lm, const float *theta, size_t P,
                              double *score)
{
    const dpzo_prune_config *pc = &c->prune;
    memset(score, 0, P * sizeof *score);
    for (unsigned p = 0; p < pc->queries; p++) {
        dpzo_dir v;
        dpzo_status st = dpzo__prune_dir(ctx, c, s, p, P, &v);
        if (st != DPZO_OK)
            return st;
        double cp = (lp[p] - lm[p]) / (2.0 * pc->lambda) / (double)pc->queries;
        if (!isfinite(cp))
            cp = 0.0; /* an overflowing linearised network: this query says nothing */
        for (size_t j = 0; j < P; j++)
            score[j] += cp * dpzo_dir_at(&v, j);
    }
    for (size_t j = 0; j < P; j++)
        score[j] *= (double)theta[j];
    return DPZO_OK;
}

dpzo_status dpzo__prune_select(dpzo_ctx *ctx, const dpzo_prune_config *pc, const double *score,
                               size_t P, double rate, const float *prev, float *mask,
                               size_t *n_sel)
{
    keyed *order = malloc(P * sizeof *order);
    if (order == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "pruning: out of memory");
    /* ascending keys: the selected coordinates come first */
    double sign = pc->select_largest ? -1.0 : 1.0;
    for (size_t j = 0; j < P; j++) {
        double key = fabs(score[j]);
        if (!isfinite(key))
            key = HUGE_VAL; /* never preferred */
        order[j].key = prev != NULL && prev[j] != 0.0f ? -HUGE_VAL : sign * key;
        order[j].j = j;
    }
    qsort(order, P, sizeof *order, by_key);
    size_t n = (size_t)llround(rate * (double)P);
    n = n < 1 ? 1 : n > P ? P : n;
    memset(mask, 0, P * sizeof *mask);
    for (size_t r = 0; r < n; r++) {
        double m = pc->rank ? pc->rank_upper - (pc->rank_upper - pc->rank_lower) *
                                                   (double)r / (double)n
                            : 1.0;
        mask[order[r].j] = (float)m;
    }
    *n_sel = n;
    free(order);
    return DPZO_OK;
}
