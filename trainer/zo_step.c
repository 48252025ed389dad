/* trainer/zo_step.c: the zeroth-order step with the model outside it (dpzo/zo_step.h).
 *
 * The same pieces as `dpzo train`'s step (trainer/step.c, stagewise.c): the privacy object,
 * the sampler, the directions keyed by (seed, t, k), the clipping of a row
 * (dpzo__zo_clip_row), the update coefficients (-lr / Q) (qsum_k / B) and the stage
 * schedule (dpzo__stage_of). Only the losses come from the caller. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/cuda.h"
#include "dpzo/zo_step.h"
#include "internal.h"
#include "train_internal.h"

typedef enum { ZO_IDLE = 0, ZO_BEGUN = 1, ZO_RELEASED = 2 } zo_phase;

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
    uint64_t noise_draws;
    double loss_sum;
    uint64_t loss_count;
};

dpzo_status dpzo_zo_create(dpzo_ctx *ctx, const dpzo_train_config *cfg, uint64_t dim,
                           uint64_t n, dpzo_zo **out)
{
    if (cfg == NULL || out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "zo step: NULL configuration or output");
    *out = NULL;
    dpzo_status st = dpzo__train_config_check(ctx, cfg, 1);
    if (st != DPZO_OK)
        return st;
    const dpzo_algorithm a = cfg->algorithm;
    if (a != DPZO_ALG_DPZERO && a != DPZO_ALG_MEZO && a != DPZO_ALG_DPZOSO &&
        a != DPZO_ALG_PAZO_M)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "zo step: algorithm %s is not available with an external model yet "
                          "(dpzero, mezo, dpzoso and pazo-m are; `dpzo train` runs every "
                          "algorithm on dpzo's own models)",
                          dpzo_algorithm_name(a));
    if (a == DPZO_ALG_DPZOSO && cfg->stages.prox > 0.0)
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
    dpzo_zo *zo = calloc(1, sizeof *zo);
    if (zo == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "zo step: out of memory");
    zo->cfg = *cfg;
    zo->dim = dim;
    zo->n = n;
    zo->B = cfg->batch_size;
    zo->radius = dpzo__train_radius(cfg, (size_t)dim);
    const unsigned Q = cfg->queries;
    zo->dirs = calloc(Q, sizeof *zo->dirs);
    zo->g = calloc(Q, sizeof *zo->g);
    zo->alpha = calloc(Q, sizeof *zo->alpha);
    zo->row = calloc(Q, sizeof *zo->row);
    zo->noise = calloc(Q, sizeof *zo->noise);
    if (zo->dirs == NULL || zo->g == NULL || zo->alpha == NULL || zo->row == NULL ||
        zo->noise == NULL) {
        dpzo_zo_free(zo);
        return dpzo__fail(ctx, DPZO_ENOMEM, "zo step: out of memory");
    }
    if (dpzo_algorithm_is_private(a)) {
        dpzo_privacy_plan plan = {.batching = cfg->batching,
                                  .batch_size = cfg->batch_size,
                                  .n = n,
                                  .steps = cfg->steps,
                                  .queries = Q,
                                  .clip = cfg->clip};
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
    if (c->algorithm == DPZO_ALG_DPZOSO) {
        dpzo__stage g;
        dpzo__stage_of(c, t, &g);
        zo->lambda = g.lambda;
        zo->lr = g.lr;
    } else {
        zo->lambda = c->lambda;
        zo->lr = dpzo_lr_at(c->lr_schedule, c->lr, t, c->steps);
    }
    for (unsigned k = 0; k < c->queries; k++) {
        dpzo_status st = dpzo_dir_init(ctx, &zo->dirs[k], c->direction, c->seed, t, k,
                                       zo->dim, zo->radius);
        if (st != DPZO_OK)
            return st;
        zo->g[k] = NAN;
    }
    zo->phase = ZO_BEGUN;
    return DPZO_OK;
}

unsigned dpzo_zo_queries(const dpzo_zo *zo) { return zo->cfg.queries; }
double dpzo_zo_lambda(const dpzo_zo *zo) { return zo->lambda; }
double dpzo_zo_lr(const dpzo_zo *zo) { return zo->lr; }

const dpzo_dir *dpzo_zo_direction(const dpzo_zo *zo, unsigned k)
{
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

dpzo_status dpzo_zo_clip_sum(dpzo_ctx *ctx, dpzo_zo *zo, const double *lp, const double *lm,
                             size_t b, double *qsum)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, "clip_sum");
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
            dpzo__zo_clip_row(zo->privacy, zo->row, Q);
        for (unsigned k = 0; k < Q; k++)
            qsum[k] += zo->row[k];
        zo->loss_sum += 0.5 * (lp[i * Q] + lm[i * Q]);
    }
    zo->loss_count += b;
    return DPZO_OK;
}

/* g_k and the update's coefficients from the released sums (trainer/step.c's order). */
static void set_released(dpzo_zo *zo, const double *released)
{
    const double share = zo->cfg.algorithm == DPZO_ALG_PAZO_M ? 1.0 - zo->cfg.pub.alpha : 1.0;
    const double coef = -zo->lr * share / (double)zo->cfg.queries;
    for (unsigned k = 0; k < zo->cfg.queries; k++) {
        zo->g[k] = released[k] / zo->B;
        zo->alpha[k] = coef * zo->g[k];
    }
    zo->phase = ZO_RELEASED;
}

dpzo_status dpzo_zo_release(dpzo_ctx *ctx, dpzo_zo *zo, const double *qsum, double *released)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, "release");
    if (st != DPZO_OK)
        return st;
    const unsigned Q = zo->cfg.queries;
    for (unsigned k = 0; k < Q; k++)
        if (!isfinite(qsum[k]))
            return dpzo__fail(ctx, DPZO_EINVAL, "zo step: release: sum %u is not finite", k);
    for (unsigned k = 0; k < Q; k++)
        zo->noise[k] = 0.0;
    if (zo->privacy != NULL) {
        if ((st = dpzo_privacy_noise(ctx, zo->privacy, zo->noise, Q)) != DPZO_OK)
            return st;
        zo->noise_draws += Q;
    }
    for (unsigned k = 0; k < Q; k++) {
        zo->row[k] = qsum[k] + zo->noise[k];
        if (released != NULL)
            released[k] = zo->row[k];
    }
    set_released(zo, zo->row);
    return DPZO_OK;
}

dpzo_status dpzo_zo_adopt(dpzo_ctx *ctx, dpzo_zo *zo, const double *released)
{
    dpzo_status st = need_phase(ctx, zo, ZO_BEGUN, "adopt");
    if (st != DPZO_OK)
        return st;
    for (unsigned k = 0; k < zo->cfg.queries; k++)
        if (!isfinite(released[k]))
            return dpzo__fail(ctx, DPZO_EINVAL, "zo step: adopt: value %u is not finite", k);
    set_released(zo, released);
    return DPZO_OK;
}

double dpzo_zo_gradient(const dpzo_zo *zo, unsigned k)
{
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

dpzo_status dpzo_zo_update(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                           dpzo_dtype dt, void *theta)
{
    dpzo_status st = check_update(ctx, zo, j0, n, dt);
    if (st == DPZO_OK && n > 0)
        dpzo_dir_update(zo->dirs, zo->alpha, zo->cfg.queries, j0, n, dt, theta);
    return st;
}

dpzo_status dpzo_zo_update_cuda(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                dpzo_dtype dt, void *theta_dev, void *stream)
{
    dpzo_status st = check_update(ctx, zo, j0, n, dt);
    if (st != DPZO_OK || n == 0)
        return st;
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
    if (zo->phase == ZO_RELEASED)
        zo->done++;
    zo->phase = ZO_IDLE;
}

uint64_t dpzo_zo_steps_done(const dpzo_zo *zo) { return zo->done; }

dpzo_status dpzo_zo_set_steps_done(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t steps)
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
    zo->done = steps;
    return DPZO_OK;
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
    double m = zo->loss_count > 0 ? zo->loss_sum / (double)zo->loss_count : NAN;
    zo->loss_sum = 0.0;
    zo->loss_count = 0;
    return m;
}

const dpzo_train_config *dpzo_zo_config(const dpzo_zo *zo) { return &zo->cfg; }

const dpzo_profile *dpzo_zo_profile(const dpzo_zo *zo)
{
    return zo->privacy != NULL ? dpzo_privacy_profile(zo->privacy) : NULL;
}
