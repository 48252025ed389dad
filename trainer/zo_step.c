/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/zo_step.c: the step object (dpzo/zo_step.h), the one sequence of a training step.
 *
 * It holds everything of a run but the model: the plan and its privacy object, the batch
 * sampler, the step's directions keyed by (seed, t, k), the learning rate and the stage of
 * step t, the release (per-example clipping, noise, one draw per query) with the ledger, and
 * the update. The algorithms are modules below it that call nothing above them: the stage
 * schedule and the pruning mask (stagewise.c), the public span and PAZO-S's candidates
 * (pazo.c). Its callers evaluate the losses: dpzo.torch's user model through the public API,
 * and `dpzo train`'s own C models (train_step.c), which create it with DPZO__ZO_TRAINER
 * (zo_internal.h) for what only they need: the first-order baselines' release, the stage's
 * anchor for DP-ZOSO's proximal pull, the direction cache, and the tests' noise hook. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/cuda.h"
#include "dpzo/zo_step.h"
#include "internal.h"
#include "train_internal.h"
#include "zo_internal.h"
#include "zo_math.h" /* kernels/cpu: dpzo__axpy_floats */

typedef enum { ZO_IDLE = 0, ZO_BEGUN = 1, ZO_RELEASED = 2 } zo_phase;

/* One example's Q differences as the release takes them: a row with a non-finite entry
 * becomes zero (a fixed value: one example still moves the sum by at most C, and a NaN
 * never reaches the release), then clipped by the privacy object. */
static void clip_row(const dpzo_privacy *p, double *v, unsigned Q)
{
    for (unsigned k = 0; k < Q; k++)
        if (!isfinite(v[k])) {
            memset(v, 0, Q * sizeof *v);
            break;
        }
    dpzo_privacy_clip(p, v, Q);
}

struct dpzo_zo {
    dpzo_train_config cfg;
    uint64_t dim, n;
    double B, radius;
    dpzo_privacy *privacy; /* NULL: mezo */
    uint64_t sampling_seed;
    dpzo__sampler sampler;
    uint64_t done;         /* steps done */
    zo_phase phase;
    double lambda, lr;     /* of the begun step */
    dpzo_dir *dirs;        /* Q */
    double *g;             /* Q: released / B */
    double *alpha;         /* Q: the update's coefficients */
    double *row;           /* Q: scratch for one example's differences */
    double *noise;         /* Q */
    unsigned R;            /* sums released per step: Q, or k (+ 1) for pazo-s */
    /* pazo-p / pazo-s (docs/algorithms.md 5, 6) */
    float *G;              /* the caller's k x dim public gradients of the begun step */
    unsigned basis;        /* pazo-p: the columns kept */
    float *vbuf;           /* pazo-p: Q x dim directions G c_q; pazo-s: the noisy candidate */
    double *coef;          /* pazo-p: one direction's coefficients */
    unsigned part;         /* pazo-s: 1 (the k candidates), 2 (the noisy one), 0 (done) */
    unsigned best;         /* pazo-s: the argmin of part 1 */
    int choice;            /* pazo-s: the candidate taken (k: the noisy one), -1 before */
    double f_best;         /* pazo-s: its noisy sum */
    dpzo_dir noisy;        /* pazo-s: the noisy candidate as an explicit direction */
    dpzo_dir step_dir;     /* pazo-s: the step taken */
    /* dpzopo (docs/algorithms.md 3) */
    float *mask;           /* dim multipliers of the current stage */
    size_t mask_count;     /* coordinates it selects */
    unsigned stage;        /* the stage whose mask is set (0: none) */
    unsigned pending;      /* the stage whose mask the begun step waits for (0: none) */
    double pending_rate;
    dpzo_dir *score_dirs;  /* prune.queries: the score's directions v_p */
    uint64_t noise_draws;
    dpzo__loss_acc loss;
    /* DPZO__ZO_TRAINER only */
    unsigned flags;
    float *anchor;         /* stagewise: theta at the start of stage anchor_stage (dim) */
    unsigned anchor_stage;
    float *ucache;         /* Q x dim: the directions' floats the caller's evaluation kept */
    int ucache_ok;         /* ucache holds the begun step's directions */
    dpzo__noise_hook noise_hook;
    void *noise_user;
    double *last_clean, *last_noisy; /* what each release of the last step took and gave */
};

dpzo_status dpzo_zo_create(dpzo_ctx *ctx, const dpzo_train_config *cfg, uint64_t dim,
                           uint64_t n, dpzo_zo **out)
{
    if (cfg == NULL || out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: NULL configuration or output");
    *out = NULL;
    return dpzo__zo_create(ctx, cfg, dim, n, 0, out);
}

dpzo_status dpzo__zo_create(dpzo_ctx *ctx, const dpzo_train_config *cfg, uint64_t dim,
                            uint64_t n, unsigned flags, dpzo_zo **out)
{
    const int trainer = (flags & DPZO__ZO_TRAINER) != 0;
    /* dpzo train validated the whole configuration, and its sampler checks the data */
    dpzo_status st = trainer ? DPZO_OK : dpzo__train_config_check(ctx, cfg, 1);
    if (st != DPZO_OK)
        return st;
    const dpzo_algorithm a = cfg->algorithm;
    const int first_order = dpzo_algorithm_is_first_order(a);
    if (trainer)
        goto checked;
    if (first_order)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "zo step: algorithm %s is not available with an external model "
                          "(the zeroth-order ones are; `dpzo train` runs %s on dpzo's own "
                          "models)",
                          dpzo_algorithm_name(a), dpzo_algorithm_name(a));
    if (dpzo_algorithm_is_stagewise(a) && cfg->stages.prox > 0.0)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "zo step: 'stages.prox' > 0 needs the stage's anchor, which the step "
                          "with an external model does not keep yet; leave it 0");
    if (dim == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: no parameters to tune (dim 0)");
    if (n == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: the data set has no rows (n 0)");
    if (cfg->batching == DPZO_BATCH_SHUFFLE && cfg->batch_size > (double)n)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "zo step: fixed batches of %g rows from a data set of %llu rows",
                          cfg->batch_size, (unsigned long long)n);
checked:;
    dpzo_zo *zo = calloc(1, sizeof *zo);
    if (zo == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "zo step: out of memory");
    zo->cfg = *cfg;
    zo->flags = flags;
    zo->dim = dim;
    zo->n = n;
    zo->B = cfg->batch_size;
    zo->radius = dpzo__train_radius(cfg, (size_t)dim);
    const unsigned Q = cfg->queries, R = dpzo_train_queries_per_step(cfg);
    const unsigned W = (Q > R ? Q : R) + cfg->pub.k + 1; /* room for every list */
    zo->R = R;
    zo->dirs = calloc(W, sizeof *zo->dirs);
    zo->g = calloc(W, sizeof *zo->g);
    zo->alpha = calloc(W, sizeof *zo->alpha);
    zo->row = calloc(W, sizeof *zo->row);
    zo->noise = calloc(W, sizeof *zo->noise);
    zo->coef = calloc(W, sizeof *zo->coef);
    zo->last_clean = calloc(W, sizeof *zo->last_clean);
    zo->last_noisy = calloc(W, sizeof *zo->last_noisy);
    int bad = zo->last_clean == NULL || zo->last_noisy == NULL;
    if (a == DPZO_ALG_PAZO_P || a == DPZO_ALG_PAZO_S) {
        size_t rows = a == DPZO_ALG_PAZO_P ? Q : 1;
        if (dim > SIZE_MAX / sizeof(float) / rows)
            bad = 1;
        else
            bad = (zo->vbuf = malloc((size_t)dim * rows * sizeof *zo->vbuf)) == NULL;
    }
    if (a == DPZO_ALG_DPZOPO && !bad)
        bad = (zo->mask = calloc((size_t)dim, sizeof *zo->mask)) == NULL ||
              (zo->score_dirs = calloc(cfg->prune.queries, sizeof *zo->score_dirs)) == NULL;
    if (trainer && dpzo_algorithm_is_stagewise(a) && !bad)
        bad = (zo->anchor = calloc((size_t)dim, sizeof *zo->anchor)) == NULL;
    /* the direction cache: the floats of the step's directions, generated once by the
     * evaluation and read by the update (at most DPZO__UCACHE_MAX_BYTES; pazo-s evaluates
     * candidate steps instead) */
    if (trainer && !first_order && a != DPZO_ALG_PAZO_S && !bad &&
        (uint64_t)Q * dim <= DPZO__UCACHE_MAX_BYTES / sizeof(float))
        bad = (zo->ucache = malloc((size_t)Q * (size_t)dim * sizeof *zo->ucache)) == NULL;
    if (bad || zo->dirs == NULL || zo->g == NULL || zo->alpha == NULL || zo->row == NULL ||
        zo->noise == NULL || zo->coef == NULL) {
        dpzo_zo_free(zo);
        return dpzo__fail(ctx, DPZO_ENOMEM, "zo step: out of memory");
    }
    if (dpzo_algorithm_is_private(a)) {
        dpzo_privacy_plan plan = {.batching = cfg->batching,
                                  .batch_size = cfg->batch_size,
                                  .n = n,
                                  .steps = cfg->steps,
                                  .queries = R,
                                  .clip = cfg->clip,
                                  .vector = a == DPZO_ALG_DPSGD || a == DPZO_ALG_DPMD,
                                  .adaptive = a == DPZO_ALG_PAZO_S};
        st = dpzo_privacy_open(ctx, cfg->profile, &plan, &zo->privacy);
    }
    uint64_t seed = 0;
    if (st == DPZO_OK && (st = dpzo__random_seed(ctx, &seed)) == DPZO_OK)
        st = dpzo_zo_set_sampling_seed(ctx, zo, seed);
    if (st != DPZO_OK) {
        dpzo_zo_free(zo);
        return st;
    }
    *out = zo;
    return DPZO_OK;
}

dpzo_status dpzo_zo_open(dpzo_ctx *ctx, const char *json, const char *base_dir, uint64_t dim,
                         uint64_t n, dpzo_zo **out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: NULL output");
    *out = NULL;
    dpzo_train_config cfg;
    dpzo_status st = dpzo_zo_config_parse(ctx, json, base_dir, &cfg);
    return st != DPZO_OK ? st : dpzo_zo_create(ctx, &cfg, dim, n, out);
}

void dpzo_zo_free(dpzo_zo *zo)
{
    if (zo == NULL)
        return;
    dpzo_privacy_free(zo->privacy);
    dpzo__sampler_free(&zo->sampler);
    free(zo->dirs);
    free(zo->g);
    free(zo->alpha);
    free(zo->row);
    free(zo->noise);
    free(zo->coef);
    free(zo->vbuf);
    free(zo->mask);
    free(zo->score_dirs);
    free(zo->anchor);
    free(zo->ucache);
    free(zo->last_clean);
    free(zo->last_noisy);
    free(zo);
}

size_t dpzo_zo_batch(dpzo_zo *zo, uint64_t t, size_t *idx)
{
    return dpzo__sampler_batch(&zo->sampler, t, idx);
}

size_t dpzo_zo_batch_capacity(const dpzo_zo *zo)
{
    return zo->cfg.batching == DPZO_BATCH_SHUFFLE ? (size_t)zo->cfg.batch_size : (size_t)zo->n;
}

uint64_t dpzo_zo_sampling_seed(const dpzo_zo *zo) { return zo->sampling_seed; }

dpzo_status dpzo_zo_set_sampling_seed(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t seed)
{
    dpzo__sampler s;
    dpzo_status st = dpzo__sampler_init(ctx, &s, zo->cfg.batching, seed, (size_t)zo->n,
                                        zo->cfg.batch_size,
                                        dpzo_algorithm_is_private(zo->cfg.algorithm));
    if (st != DPZO_OK)
        return st;
    dpzo__sampler_free(&zo->sampler);
    zo->sampler = s;
    zo->sampling_seed = seed;
    return DPZO_OK;
}

static dpzo_status need_phase(dpzo_ctx *ctx, const dpzo_zo *zo, zo_phase want,
                              const char *what);

/* pazo-p and pazo-s: the step's directions come from the caller's public gradients. */
static int is_first_order(const dpzo_zo *zo)
{
    return dpzo_algorithm_is_first_order(zo->cfg.algorithm);
}

static int uses_public_span(const dpzo_zo *zo)
{
    return zo->cfg.algorithm == DPZO_ALG_PAZO_P || zo->cfg.algorithm == DPZO_ALG_PAZO_S;
}

/* The step's Q directions keyed by (seed, t, k); dpzopo's masked by the stage's mask (a
 * sphere's radius for the selected coordinates' count), as trainer/stagewise.c does. */
static dpzo_status plain_dirs(dpzo_ctx *ctx, dpzo_zo *zo)
{
    const dpzo_train_config *c = &zo->cfg;
    double radius = zo->radius;
    if (zo->mask != NULL)
        radius = dpzo__train_radius(c, zo->mask_count > 0 ? zo->mask_count : 1);
    for (unsigned k = 0; k < c->queries; k++) {
        dpzo_status st = dpzo_dir_init(ctx, &zo->dirs[k], c->direction, c->seed, zo->done, k,
                                       zo->dim, radius);
        if (st == DPZO_OK && zo->mask != NULL)
            st = dpzo_dir_set_mult(ctx, &zo->dirs[k], zo->mask, radius);
        if (st != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

dpzo_status dpzo_zo_begin(dpzo_ctx *ctx, dpzo_zo *zo)
{
    if (zo->phase != ZO_IDLE)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: step %llu was begun and not ended",
                          (unsigned long long)zo->done);
    const dpzo_train_config *c = &zo->cfg;
    const uint64_t t = zo->done;
    if (t >= c->steps) {
        if (zo->privacy != NULL)
            return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                              "zo step: refused: the plan's %llu steps are done (epsilon "
                              "spent %.9g of the budget %.9g at delta %.3g); another step "
                              "would be beyond what the profile accounts",
                              (unsigned long long)c->steps, dpzo_zo_epsilon(zo),
                              dpzo_privacy_budget(zo->privacy), dpzo_privacy_delta(zo->privacy));
        return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                          "zo step: refused: the plan's %llu steps are done",
                          (unsigned long long)c->steps);
    }
    zo->pending = 0;
    zo->ucache_ok = 0;
    zo->lr = dpzo_zo_lr_at(zo, t);
    if (dpzo_algorithm_is_stagewise(c->algorithm)) {
        dpzo__stage g;
        dpzo__stage_of(c, t, &g);
        zo->lambda = g.lambda;
        if (zo->mask != NULL && g.s != zo->stage) {
            if (g.s == 1 || c->prune.strategy != DPZO_PRUNE_STATIC) {
                zo->pending = g.s; /* the caller's score first (dpzo_zo_set_score) */
                zo->pending_rate = g.rate;
                for (unsigned p = 0; p < c->prune.queries; p++) {
                    dpzo_status st = dpzo__prune_dir(ctx, c, g.s, p, zo->dim,
                                                     &zo->score_dirs[p]);
                    if (st != DPZO_OK)
                        return st;
                }
                zo->phase = ZO_BEGUN;
                return DPZO_OK;
            }
            zo->stage = g.s; /* static: stage 1's mask stays */
        }
    } else {
        zo->lambda = c->lambda;
    }
    zo->G = NULL;
    zo->part = 0;
    zo->choice = -1;
    for (unsigned k = 0; k < zo->R; k++)
        zo->g[k] = NAN;
    if (!uses_public_span(zo) && !is_first_order(zo)) {
        dpzo_status st = plain_dirs(ctx, zo);
        if (st != DPZO_OK)
            return st;
    }
    zo->phase = ZO_BEGUN;
    return DPZO_OK;
}

unsigned dpzo_zo_score_queries(const dpzo_zo *zo)
{
    return zo->phase == ZO_BEGUN && zo->pending ? zo->cfg.prune.queries : 0;
}

const dpzo_dir *dpzo_zo_score_direction(const dpzo_zo *zo, unsigned p)
{
    return p < dpzo_zo_score_queries(zo) ? &zo->score_dirs[p] : NULL;
}

double dpzo_zo_score_lambda(const dpzo_zo *zo) { return zo->cfg.prune.lambda; }

dpzo_status dpzo_zo_set_score(dpzo_ctx *ctx, dpzo_zo *zo, const double *lp, const double *lm,
                              const float *theta)
{
    if (dpzo_zo_score_queries(zo) == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_score: no mask is pending (dpzopo, "
                          "at a stage's first step)");
    if (lp == NULL || lm == NULL || theta == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_score: NULL argument");
    const size_t P = (size_t)zo->dim;
    const dpzo_train_config *c = &zo->cfg;
    int incremental = c->prune.strategy == DPZO_PRUNE_INCREMENTAL && zo->pending > 1;
    double *score = malloc(P * sizeof *score);
    float *prev = incremental ? malloc(P * sizeof *prev) : NULL;
    dpzo_status st = score != NULL && (!incremental || prev != NULL)
                         ? DPZO_OK
                         : dpzo__fail(ctx, DPZO_ENOMEM, "pruning: out of memory");
    if (prev != NULL)
        memcpy(prev, zo->mask, P * sizeof *prev);
    if (st == DPZO_OK)
        st = dpzo__prune_score(ctx, c, zo->pending, lp, lm, theta, P, score);
    if (st == DPZO_OK)
        st = dpzo__prune_select(ctx, &c->prune, score, P, zo->pending_rate, prev, zo->mask,
                                &zo->mask_count);
    free(score);
    free(prev);
    if (st != DPZO_OK)
        return st;
    zo->stage = zo->pending;
    zo->pending = 0;
    return plain_dirs(ctx, zo);
}

const float *dpzo_zo_mask(const dpzo_zo *zo)
{
    return zo->mask != NULL && zo->stage > 0 ? zo->mask : NULL;
}

/* A saved mask's multipliers: finite, >= 0, not all zero; *count the selected ones. */
static dpzo_status check_mask(dpzo_ctx *ctx, const dpzo_zo *zo, const float *mask,
                              size_t *count)
{
    *count = 0;
    for (uint64_t j = 0; j < zo->dim; j++) {
        if (!(mask[j] >= 0.0f && isfinite(mask[j])))
            return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_mask: multiplier %llu is %g",
                              (unsigned long long)j, (double)mask[j]);
        *count += mask[j] != 0.0f;
    }
    if (*count == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_mask: the mask selects nothing");
    return DPZO_OK;
}

dpzo_status dpzo_zo_set_mask(dpzo_ctx *ctx, dpzo_zo *zo, const float *mask)
{
    if (zo->mask == NULL || zo->phase != ZO_IDLE || zo->done == 0 || mask == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_mask: a dpzopo run's saved mask, "
                          "after dpzo_zo_set_steps_done and before its next step");
    size_t count = 0;
    dpzo_status st = check_mask(ctx, zo, mask, &count);
    if (st != DPZO_OK)
        return st;
    dpzo__stage g;
    dpzo__stage_of(&zo->cfg, zo->done - 1, &g);
    memcpy(zo->mask, mask, (size_t)zo->dim * sizeof *mask);
    zo->mask_count = count;
    zo->stage = g.s;
    return DPZO_OK;
}

dpzo_status dpzo_zo_set_public(dpzo_ctx *ctx, dpzo_zo *zo, float *G, unsigned k)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, "set_public");
    if (st != DPZO_OK)
        return st;
    const dpzo_train_config *c = &zo->cfg;
    if (!uses_public_span(zo))
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: public gradients belong to pazo-p and "
                          "pazo-s, not to %s", dpzo_algorithm_name(c->algorithm));
    if (zo->G != NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: the step's public gradients are set");
    if (G == NULL || k != c->pub.k)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_public needs public.k = %u "
                          "gradients, got %u", c->pub.k, k);
    const size_t P = (size_t)zo->dim;
    const uint64_t t = zo->done;
    zo->G = G;
    if (c->algorithm == DPZO_ALG_PAZO_S) { /* the candidates theta - lr g_j */
        for (unsigned j = 0; j < k; j++)
            if ((st = dpzo_dir_init_vector(ctx, &zo->dirs[j], G + (size_t)j * P, zo->dim)) !=
                DPZO_OK)
                return st;
        zo->part = 1;
        return DPZO_OK;
    }
    /* pazo-p: the basis in place, then u_q = G c_q, c_q the configured kind in R^basis */
    zo->basis = dpzo__span_basis(G, k, P, c->pub.orthonormalize);
    const unsigned m = zo->basis;
    for (unsigned q = 0; q < c->queries; q++) {
        float *v = zo->vbuf + (size_t)q * P;
        if ((st = dpzo__span_vector(ctx, c, t, q, G, m, P, zo->coef, v)) != DPZO_OK ||
            (st = dpzo_dir_init_vector(ctx, &zo->dirs[q], v, zo->dim)) != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

unsigned dpzo_zo_basis(const dpzo_zo *zo) { return zo->basis; }

unsigned dpzo_zo_candidates(const dpzo_zo *zo)
{
    if (zo->phase != ZO_BEGUN || zo->cfg.algorithm != DPZO_ALG_PAZO_S)
        return 0;
    return zo->part == 1 ? zo->cfg.pub.k : zo->part == 2 ? 1 : 0;
}

const dpzo_dir *dpzo_zo_candidate(const dpzo_zo *zo, unsigned j)
{
    if (j >= dpzo_zo_candidates(zo))
        return NULL;
    return zo->part == 1 ? &zo->dirs[j] : &zo->noisy;
}

int dpzo_zo_choice(const dpzo_zo *zo) { return zo->choice; }

unsigned dpzo_zo_release_size(const dpzo_zo *zo)
{
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S)
        return dpzo_zo_candidates(zo);
    return zo->cfg.queries;
}

double dpzo_zo_lr_at(const dpzo_zo *zo, uint64_t t)
{
    const dpzo_train_config *c = &zo->cfg;
    if (t >= c->steps)
        return NAN;
    if (dpzo_algorithm_is_stagewise(c->algorithm)) {
        dpzo__stage g;
        dpzo__stage_of(c, t, &g);
        return g.lr;
    }
    return dpzo_lr_at(c->lr_schedule, c->lr, t, c->steps);
}

unsigned dpzo_zo_queries(const dpzo_zo *zo) { return zo->cfg.queries; }
double dpzo_zo_lambda(const dpzo_zo *zo) { return zo->lambda; }
double dpzo_zo_lr(const dpzo_zo *zo) { return zo->lr; }

const dpzo_dir *dpzo_zo_direction(const dpzo_zo *zo, unsigned k)
{
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S || is_first_order(zo) ||
        (zo->cfg.algorithm == DPZO_ALG_PAZO_P && zo->G == NULL) || zo->pending)
        return NULL;
    return zo->phase != ZO_IDLE && k < zo->cfg.queries ? &zo->dirs[k] : NULL;
}

static dpzo_status need_phase(dpzo_ctx *ctx, const dpzo_zo *zo, zo_phase want, const char *what)
{
    if (zo->phase == want)
        return DPZO_OK;
    static const char *const names[] = {"no step is begun", "the step is not released yet",
                                        "the step is already released"};
    return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: %s", what, names[zo->phase]);
}

/* The ZO algorithms' evaluations are ready to be summed (pazo-p: once the basis is set). */
static dpzo_status need_directions(dpzo_ctx *ctx, const dpzo_zo *zo, const char *what)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, what);
    if (st != DPZO_OK)
        return st;
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: pazo-s releases candidates' losses "
                          "(dpzo_zo_clip_sum_candidates)", what);
    if (is_first_order(zo))
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: %s releases a gradient", what,
                          dpzo_algorithm_name(zo->cfg.algorithm));
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_P && zo->G == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: pazo-p needs the step's public "
                          "gradients first (dpzo_zo_set_public)", what);
    if (zo->pending)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: dpzopo needs the stage's pruning "
                          "score first (dpzo_zo_set_score)", what);
    return DPZO_OK;
}

dpzo_status dpzo_zo_clip_sum(dpzo_ctx *ctx, dpzo_zo *zo, const double *lp, const double *lm,
                             size_t b, double *qsum)
{
    dpzo_status st = need_directions(ctx, zo, "clip_sum");
    if (st != DPZO_OK)
        return st;
    if (b > 0 && (lp == NULL || lm == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: clip_sum: NULL losses");
    const unsigned Q = zo->cfg.queries;
    for (unsigned k = 0; k < Q; k++)
        qsum[k] = 0.0;
    for (size_t i = 0; i < b; i++) {
        for (unsigned k = 0; k < Q; k++)
            zo->row[k] = (lp[i * Q + k] - lm[i * Q + k]) / (2.0 * zo->lambda);
        if (zo->privacy != NULL)
            clip_row(zo->privacy, zo->row, Q);
        for (unsigned k = 0; k < Q; k++)
            qsum[k] += zo->row[k];
        zo->loss.sum += 0.5 * (lp[i * Q] + lm[i * Q]);
    }
    zo->loss.count += b;
    return DPZO_OK;
}

dpzo_status dpzo_zo_clip_sum_candidates(dpzo_ctx *ctx, dpzo_zo *zo, const double *loss,
                                        size_t b, double *qsum)
{
    const unsigned m = dpzo_zo_candidates(zo);
    if (m == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: clip_sum_candidates: no candidates are "
                          "pending (pazo-s after dpzo_zo_set_public)");
    if (b > 0 && loss == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: clip_sum_candidates: NULL losses");
    for (unsigned j = 0; j < m; j++)
        qsum[j] = 0.0;
    for (size_t i = 0; i < b; i++) {
        memcpy(zo->row, loss + i * m, m * sizeof *zo->row);
        dpzo__pazo_s_clip_row(zo->privacy, &zo->cfg.pub, zo->row, m, (int)zo->part);
        for (unsigned j = 0; j < m; j++)
            qsum[j] += zo->row[j];
        if (zo->part == 1) /* f(theta - lr g_0) ~ f(theta): the loss shown */
            zo->loss.sum += loss[i * m];
    }
    if (zo->part == 1)
        zo->loss.count += b;
    return DPZO_OK;
}

/* The update's coefficients from the released sums (trainer/step.c's order), or pazo-s's
 * choice; a pazo-s first part sets up the noisy candidate and stays begun. */
static dpzo_status set_released(dpzo_ctx *ctx, dpzo_zo *zo, const double *released)
{
    const dpzo_train_config *c = &zo->cfg;
    if (c->algorithm != DPZO_ALG_PAZO_S) {
        const double share = c->algorithm == DPZO_ALG_PAZO_M ? 1.0 - c->pub.alpha : 1.0;
        const double coef = -zo->lr * share / (double)c->queries;
        for (unsigned k = 0; k < c->queries; k++) {
            zo->g[k] = released[k] / zo->B;
            zo->alpha[k] = coef * zo->g[k];
        }
        zo->phase = ZO_RELEASED;
        return DPZO_OK;
    }
    const size_t P = (size_t)zo->dim;
    const unsigned k = c->pub.k;
    dpzo_status st = DPZO_OK;
    if (zo->part == 1) {
        unsigned best = dpzo__pazo_s_best(released, k);
        zo->best = best;
        zo->f_best = released[best];
        zo->choice = (int)best;
        if (c->pub.noisy_candidate) {
            if ((st = dpzo__pazo_s_noisy(ctx, c, zo->done, zo->G + (size_t)best * P, P,
                                         zo->vbuf)) != DPZO_OK ||
                (st = dpzo_dir_init_vector(ctx, &zo->noisy, zo->vbuf, zo->dim)) != DPZO_OK)
                return st;
            zo->part = 2;
            return DPZO_OK;
        }
    } else if (released[0] < zo->f_best) { /* part 2: the noisy candidate against the best */
        zo->choice = (int)k;
    }
    zo->part = 0;
    const float *step = zo->choice == (int)k ? zo->vbuf : zo->G + (size_t)zo->best * P;
    if ((st = dpzo_dir_init_vector(ctx, &zo->step_dir, step, zo->dim)) != DPZO_OK)
        return st;
    zo->alpha[0] = -zo->lr;
    zo->phase = ZO_RELEASED;
    return DPZO_OK;
}

/* The values of the pending release: Q, or the pazo-s part's candidates. */
static dpzo_status release_count(dpzo_ctx *ctx, const dpzo_zo *zo, const char *what,
                                 unsigned *m)
{
    dpzo_status st = zo->cfg.algorithm == DPZO_ALG_PAZO_S
                         ? need_phase(ctx, zo, ZO_BEGUN, what)
                         : need_directions(ctx, zo, what);
    if (st != DPZO_OK)
        return st;
    *m = dpzo_zo_release_size(zo);
    if (*m == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: %s: pazo-s needs the step's public "
                          "gradients first (dpzo_zo_set_public)", what);
    return DPZO_OK;
}

/* n noise draws of the begun step: the privacy object's, or the tests' hook; counted. */
static dpzo_status draw_noise(dpzo_ctx *ctx, dpzo_zo *zo, double *out, size_t n)
{
    if (zo->noise_hook != NULL)
        zo->noise_hook(zo->noise_user, zo->done, out, n);
    else {
        dpzo_status st = dpzo_privacy_noise(ctx, zo->privacy, out, n);
        if (st != DPZO_OK)
            return st;
    }
    zo->noise_draws += n;
    return DPZO_OK;
}

dpzo_status dpzo_zo_release(dpzo_ctx *ctx, dpzo_zo *zo, const double *qsum, double *released)
{
    unsigned m = 0;
    dpzo_status st = release_count(ctx, zo, "release", &m);
    if (st != DPZO_OK)
        return st;
    for (unsigned k = 0; k < m; k++)
        if (!isfinite(qsum[k]))
            return dpzo__fail(ctx, DPZO_EINVAL, "zo step: release: sum %u is not finite", k);
    for (unsigned k = 0; k < m; k++)
        zo->noise[k] = 0.0;
    if (zo->privacy != NULL && (st = draw_noise(ctx, zo, zo->noise, m)) != DPZO_OK)
        return st;
    const unsigned off = zo->part == 2 ? zo->cfg.pub.k : 0; /* pazo-s's noisy candidate */
    for (unsigned k = 0; k < m; k++) {
        zo->row[k] = qsum[k] + zo->noise[k];
        if (released != NULL)
            released[k] = zo->row[k];
        zo->last_clean[off + k] = qsum[k];
        zo->last_noisy[off + k] = zo->row[k];
    }
    return set_released(ctx, zo, zo->row);
}

dpzo_status dpzo_zo_adopt(dpzo_ctx *ctx, dpzo_zo *zo, const double *released)
{
    unsigned m = 0;
    dpzo_status st = release_count(ctx, zo, "adopt", &m);
    if (st != DPZO_OK)
        return st;
    for (unsigned k = 0; k < m; k++)
        if (!isfinite(released[k]))
            return dpzo__fail(ctx, DPZO_EINVAL, "zo step: adopt: value %u is not finite", k);
    return set_released(ctx, zo, released);
}

double dpzo_zo_gradient(const dpzo_zo *zo, unsigned k)
{
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S)
        return NAN;
    return zo->phase == ZO_RELEASED && k < zo->cfg.queries ? zo->g[k] : NAN;
}

static dpzo_status check_update(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                dpzo_dtype dt)
{
    dpzo_status st = need_phase(ctx, zo, ZO_RELEASED, "update");
    if (st != DPZO_OK)
        return st;
    if (j0 > zo->dim || n > zo->dim - j0)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "zo step: update of [%llu, %llu) past the %llu parameters",
                          (unsigned long long)j0, (unsigned long long)(j0 + n),
                          (unsigned long long)zo->dim);
    if (dpzo_dtype_size(dt) == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: unknown element type %d", (int)dt);
    return DPZO_OK;
}

/* DP-ZOSO's proximal pull towards the stage's anchor, before the zeroth-order part:
 * theta_j -= lr_s prox (theta_j - anchor_j) (docs/algorithms.md 2). */
static void prox_pull(const dpzo_zo *zo, uint64_t j0, size_t n, float *theta)
{
    const double a = zo->lr * zo->cfg.stages.prox;
    const float *anchor = zo->anchor + j0;
    for (size_t j = 0; j < n; j++)
        theta[j] = (float)((double)theta[j] - a * ((double)theta[j] - (double)anchor[j]));
}

dpzo_status dpzo_zo_update(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                           dpzo_dtype dt, void *theta)
{
    dpzo_status st = check_update(ctx, zo, j0, n, dt);
    if (st != DPZO_OK || n == 0)
        return st;
    if (zo->anchor != NULL && zo->cfg.stages.prox > 0.0) {
        if (dt != DPZO_F32)
            return dpzo__fail(ctx, DPZO_EUNSUPPORTED, "zo step: the proximal pull updates "
                              "float32 parameters only");
        prox_pull(zo, j0, n, theta);
    }
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S) {
        dpzo_dir_update(&zo->step_dir, zo->alpha, 1, j0, n, dt, theta);
    } else if (zo->ucache_ok && dt == DPZO_F32) { /* the floats dpzo_dir_update generates */
        for (unsigned k = 0; k < zo->cfg.queries; k++)
            dpzo__axpy_floats(n, zo->alpha[k], zo->ucache + k * (size_t)zo->dim + j0,
                              (float *)theta);
    } else {
        dpzo_dir_update(zo->dirs, zo->alpha, zo->cfg.queries, j0, n, dt, theta);
    }
    return st;
}

dpzo_status dpzo_zo_update_cuda(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                dpzo_dtype dt, void *theta_dev, void *stream)
{
    dpzo_status st = check_update(ctx, zo, j0, n, dt);
    if (st != DPZO_OK || n == 0)
        return st;
    if (zo->cfg.algorithm == DPZO_ALG_PAZO_S || zo->cfg.algorithm == DPZO_ALG_PAZO_P ||
        zo->cfg.algorithm == DPZO_ALG_DPZOPO || zo->anchor != NULL)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "zo step: %s keeps its public gradients or mask in host memory: its "
                          "update runs on CPU tensors",
                          dpzo_algorithm_name(zo->cfg.algorithm));
    return dpzo_cuda_dir_update(ctx, zo->dirs, zo->alpha, zo->cfg.queries, j0, n, dt, theta_dev,
                                stream);
}

static dpzo_status public_dir(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                              dpzo_dtype dt, const float *grad, dpzo_dir *d, double *a)
{
    dpzo_status st = check_update(ctx, zo, j0, n, dt);
    if (st != DPZO_OK)
        return st;
    if (zo->cfg.algorithm != DPZO_ALG_PAZO_M)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: a public gradient belongs to pazo-m, not "
                          "to %s", dpzo_algorithm_name(zo->cfg.algorithm));
    *a = -zo->lr * zo->cfg.pub.alpha;
    return n > 0 ? dpzo_dir_init_vector(ctx, d, grad, n) : DPZO_OK;
}

dpzo_status dpzo_zo_update_public(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                  dpzo_dtype dt, void *theta, const float *grad)
{
    dpzo_dir d;
    double a;
    dpzo_status st = public_dir(ctx, zo, j0, n, dt, grad, &d, &a);
    if (st == DPZO_OK && n > 0)
        dpzo_dir_update(&d, &a, 1, 0, n, dt, theta);
    return st;
}

dpzo_status dpzo_zo_update_public_cuda(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                       dpzo_dtype dt, void *theta_dev, const float *grad_dev,
                                       void *stream)
{
    dpzo_dir d;
    double a;
    dpzo_status st = public_dir(ctx, zo, j0, n, dt, grad_dev, &d, &a);
    if (st != DPZO_OK || n == 0)
        return st;
    return dpzo_cuda_dir_update(ctx, &d, &a, 1, 0, n, dt, theta_dev, stream);
}

dpzo_status dpzo_zo_end(dpzo_ctx *ctx, dpzo_zo *zo)
{
    dpzo_status st = need_phase(ctx, zo, ZO_RELEASED, "end");
    if (st != DPZO_OK)
        return st;
    zo->done++;
    zo->phase = ZO_IDLE;
    return DPZO_OK;
}

void dpzo_zo_abort(dpzo_zo *zo)
{
    if (zo->phase == ZO_RELEASED || zo->part == 2) /* a release was made: it counts */
        zo->done++;
    zo->part = 0;
    zo->phase = ZO_IDLE;
}

uint64_t dpzo_zo_steps_done(const dpzo_zo *zo) { return zo->done; }

/* The checks of dpzo_zo_set_steps_done. */
static dpzo_status check_steps(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t steps)
{
    if (zo->phase != ZO_IDLE)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: set_steps_done during a step");
    if (steps > zo->cfg.steps)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "zo step: %llu steps done is past the plan's %llu",
                          (unsigned long long)steps, (unsigned long long)zo->cfg.steps);
    if (steps < zo->done)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "zo step: this run has done %llu steps; it cannot go back to %llu "
                          "(the epsilon they spent is not returned)",
                          (unsigned long long)zo->done, (unsigned long long)steps);
    return DPZO_OK;
}

dpzo_status dpzo_zo_set_steps_done(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t steps)
{
    dpzo_status st = check_steps(ctx, zo, steps);
    if (st == DPZO_OK)
        zo->done = steps;
    return st;
}

double dpzo_zo_epsilon(const dpzo_zo *zo)
{
    return zo->privacy != NULL ? dpzo_privacy_epsilon_after(zo->privacy, zo->done) : INFINITY;
}

double dpzo_zo_budget(const dpzo_zo *zo)
{
    return zo->privacy != NULL ? dpzo_privacy_budget(zo->privacy) : NAN;
}

double dpzo_zo_delta(const dpzo_zo *zo)
{
    return zo->privacy != NULL ? dpzo_privacy_delta(zo->privacy) : NAN;
}

uint64_t dpzo_zo_noise_draws(const dpzo_zo *zo) { return zo->noise_draws; }

double dpzo_zo_take_loss(dpzo_zo *zo)
{
    double m = zo->loss.count > 0 ? zo->loss.sum / (double)zo->loss.count : NAN;
    zo->loss.sum = 0.0;
    zo->loss.count = 0;
    return m;
}

const dpzo_train_config *dpzo_zo_config(const dpzo_zo *zo) { return &zo->cfg; }

const dpzo_profile *dpzo_zo_profile(const dpzo_zo *zo)
{
    return zo->privacy != NULL ? dpzo_privacy_profile(zo->privacy) : NULL;
}

/* ---- dpzo train's side (zo_internal.h) ------------------------------------------------ */

dpzo_status dpzo__zo_begin_host(dpzo_ctx *ctx, dpzo_zo *zo, const float *theta)
{
    dpzo_status st = dpzo_zo_begin(ctx, zo);
    if (st != DPZO_OK || zo->anchor == NULL)
        return st;
    dpzo__stage g;
    dpzo__stage_of(&zo->cfg, zo->done, &g);
    if (g.s != zo->anchor_stage) { /* the stage's first step: its anchor */
        memcpy(zo->anchor, theta, (size_t)zo->dim * sizeof *zo->anchor);
        zo->anchor_stage = g.s;
    }
    return DPZO_OK;
}

float *dpzo__zo_direction_cache(dpzo_zo *zo, unsigned k)
{
    if (zo->ucache == NULL || zo->phase != ZO_BEGUN || k >= zo->cfg.queries)
        return NULL;
    return zo->ucache + k * (size_t)zo->dim;
}

void dpzo__zo_cache_filled(dpzo_zo *zo) { zo->ucache_ok = zo->ucache != NULL; }

dpzo_status dpzo__zo_release_vector(dpzo_ctx *ctx, dpzo_zo *zo, const double *sum,
                                    double *noisy, size_t n)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, "release_vector");
    if (st != DPZO_OK)
        return st;
    if (!is_first_order(zo))
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: release_vector: %s releases per query",
                          dpzo_algorithm_name(zo->cfg.algorithm));
    if (zo->privacy != NULL) {
        if ((st = draw_noise(ctx, zo, noisy, n)) != DPZO_OK)
            return st;
        for (size_t j = 0; j < n; j++)
            noisy[j] = sum[j] + noisy[j];
    }
    zo->phase = ZO_RELEASED;
    return DPZO_OK;
}

dpzo__loss_acc *dpzo__zo_loss(dpzo_zo *zo) { return &zo->loss; }

void dpzo__zo_set_noise_hook(dpzo_zo *zo, dpzo__noise_hook hook, void *user)
{
    zo->noise_hook = hook;
    zo->noise_user = user;
}

dpzo_privacy *dpzo__zo_privacy(const dpzo_zo *zo) { return zo->privacy; }
const dpzo__sampler *dpzo__zo_sampler(const dpzo_zo *zo) { return &zo->sampler; }

void dpzo__zo_state(const dpzo_zo *zo, const float **anchor, const float **mask)
{
    *anchor = zo->anchor;
    *mask = zo->mask;
}

dpzo_status dpzo__zo_restore(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t steps, const float *anchor,
                             const float *mask, int check_only)
{
    size_t count = 0;
    dpzo_status st = DPZO_OK;
    if (zo->mask != NULL && mask != NULL && steps > 0 &&
        (st = check_mask(ctx, zo, mask, &count)) != DPZO_OK)
        return st;
    if ((st = check_steps(ctx, zo, steps)) != DPZO_OK || check_only)
        return st;
    zo->done = steps;
    if (zo->anchor != NULL && anchor != NULL) {
        memcpy(zo->anchor, anchor, (size_t)zo->dim * sizeof *zo->anchor);
        zo->anchor_stage = 0;
        if (zo->done > 0) { /* the stage of the last step done holds this anchor */
            dpzo__stage g;
            dpzo__stage_of(&zo->cfg, zo->done - 1, &g);
            zo->anchor_stage = g.s;
        }
    }
    if (zo->mask != NULL && mask != NULL && zo->done > 0)
        return dpzo_zo_set_mask(ctx, zo, mask);
    return DPZO_OK;
}

const double *dpzo__zo_last_clean(const dpzo_zo *zo) { return zo->last_clean; }
const double *dpzo__zo_last_noisy(const dpzo_zo *zo) { return zo->last_noisy; }
size_t dpzo__zo_mask_count(const dpzo_zo *zo) { return zo->mask_count; }
dpzo_train_config *dpzo__zo_config_mut(dpzo_zo *zo) { return &zo->cfg; }
int dpzo__zo_has_cache(const dpzo_zo *zo) { return zo->ucache != NULL; }

void dpzo__zo_drop_cache(dpzo_zo *zo)
{
    free(zo->ucache);
    zo->ucache = NULL;
    zo->ucache_ok = 0;
}
