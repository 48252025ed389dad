/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/event.c: constructing, inspecting and freeing privacy events. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static dpzo_event *new_event(dpzo_ctx *ctx, dpzo_event_kind kind)
{
    dpzo_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        dpzo__fail(ctx, DPZO_ENOMEM, "out of memory allocating an event");
    else
        e->kind = kind;
    return e;
}

void dpzo_event_free(dpzo_event *event)
{
    if (event == NULL)
        return;
    dpzo_event_free(event->inner);
    for (size_t i = 0; i < event->n_children; i++)
        dpzo_event_free(event->children[i]);
    free(event->children);
    free(event->mix);
    free(event);
}

dpzo_event *dpzo_event_gaussian(dpzo_ctx *ctx, double noise_multiplier)
{
    if (dpzo__check_sigma(ctx, noise_multiplier))
        return NULL;
    dpzo_event *e = new_event(ctx, DPZO_EVENT_GAUSSIAN);
    if (e != NULL)
        e->param = noise_multiplier;
    return e;
}

dpzo_event *dpzo_event_laplace(dpzo_ctx *ctx, double scale)
{
    if (!(scale >= 0.0) || !isfinite(scale)) {
        dpzo__fail(ctx, DPZO_EINVAL, "Laplace scale must be finite and >= 0, got %g", scale);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_LAPLACE);
    if (e != NULL)
        e->param = scale;
    return e;
}

dpzo_event *dpzo_event_non_private(dpzo_ctx *ctx)
{
    return new_event(ctx, DPZO_EVENT_NON_PRIVATE);
}

dpzo_event *dpzo_event_zcdp(dpzo_ctx *ctx, double rho, double xi)
{
    if (!(rho >= 0.0) || !isfinite(rho) || !(xi >= 0.0) || !isfinite(xi)) {
        dpzo__fail(ctx, DPZO_EINVAL, "zCDP needs finite rho >= 0 and xi >= 0, got rho=%g, xi=%g",
                   rho, xi);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_ZCDP);
    if (e != NULL) {
        e->param = rho;
        e->param2 = xi;
    }
    return e;
}

dpzo_event *dpzo_event_randomized_response(dpzo_ctx *ctx, double p, uint64_t k)
{
    if (!(p >= 0.0 && p <= 1.0) || k < 1 || k > (UINT64_C(1) << 53)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "randomized response needs a noise parameter p in [0, 1] and 1 <= k <= 2^53 "
                   "buckets, got p=%g, k=%llu", p, (unsigned long long)k);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_RANDOMIZED_RESPONSE);
    if (e != NULL) {
        e->param = p;
        e->n = k;
    }
    return e;
}

dpzo_event *dpzo_event_discrete_laplace(dpzo_ctx *ctx, double t, uint64_t sensitivity)
{
    if (!(t >= 0.0) || !isfinite(t) || sensitivity > (UINT64_C(1) << 53)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "discrete Laplace needs a finite noise parameter >= 0 and a sensitivity <= "
                   "2^53, got parameter=%g, sensitivity=%llu", t,
                   (unsigned long long)sensitivity);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_DISCRETE_LAPLACE);
    if (e != NULL) {
        e->param = t;
        e->n = sensitivity;
    }
    return e;
}

dpzo_event *dpzo_event_tree_aggregation(dpzo_ctx *ctx, double noise_multiplier,
                                        const uint64_t *step_counts, size_t n)
{
    if (n == 0 || step_counts == NULL) {
        dpzo__fail(ctx, DPZO_EINVAL, "tree aggregation needs at least one step count");
        return NULL;
    }
    if (dpzo__check_sigma(ctx, noise_multiplier))
        return NULL;
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = step_counts[i] > max ? step_counts[i] : max;
    /* ceil(log2(T + 1)) = floor(log2 T) + 1 = the bit length of T (0 for T = 0), exactly */
    uint64_t depth = 0;
    for (uint64_t t = max; t != 0; t >>= 1)
        depth++;
    dpzo_event *e = new_event(ctx, DPZO_EVENT_TREE_AGGREGATION);
    if (e != NULL) {
        e->param = noise_multiplier;
        e->n = depth;
        e->count = max;
        e->batch = (uint64_t)n;
    }
    return e;
}

dpzo_event *dpzo_event_tree_aggregation_multi_epoch(dpzo_ctx *ctx, double noise_multiplier,
                                                    uint64_t total_steps,
                                                    uint64_t max_participations,
                                                    uint64_t min_separation)
{
    if (dpzo__check_sigma(ctx, noise_multiplier))
        return NULL;
    uint64_t zeta = 0;
    if (dpzo_tree_sensitivity_squared(ctx, total_steps, max_participations, min_separation,
                                      &zeta, NULL, 0, NULL))
        return NULL;
    dpzo_event *e = new_event(ctx, DPZO_EVENT_TREE_AGGREGATION);
    if (e != NULL) {
        e->param = noise_multiplier;
        e->n = zeta; /* below 2^29 (tree_sens.c refuses larger): exact as a double */
        e->count = total_steps;
        e->batch = 1;
        e->tree_parts = max_participations;
        e->tree_sep = min_separation;
        e->tree_multi = 1;
    }
    return e;
}

dpzo_event *dpzo_event_mixture_of_gaussians(dpzo_ctx *ctx, double standard_deviation,
                                            const double *sensitivities,
                                            const double *sampling_probs, size_t n)
{
    if (n == 0 || n > DPZO_MOG_MAX_COMPONENTS || sensitivities == NULL
        || sampling_probs == NULL) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "mixture of Gaussians needs 1 to %d components (sensitivities and "
                   "sampling_probs of the same length), got %zu", DPZO_MOG_MAX_COMPONENTS, n);
        return NULL;
    }
    if (!(standard_deviation >= 0.0) || !isfinite(standard_deviation)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "mixture of Gaussians: standard_deviation must be finite and >= 0, got %g",
                   standard_deviation);
        return NULL;
    }
    double sum = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double c = sensitivities[i], p = sampling_probs[i];
        if (!(c >= 0.0) || !isfinite(c)) {
            dpzo__fail(ctx, DPZO_EINVAL,
                       "mixture of Gaussians: sensitivities[%zu] must be finite and >= 0, "
                       "got %g", i, c);
            return NULL;
        }
        if (!(p >= 0.0 && p <= 1.0)) {
            dpzo__fail(ctx, DPZO_EINVAL,
                       "mixture of Gaussians: sampling_probs[%zu] must be in [0, 1], got %g",
                       i, p);
            return NULL;
        }
        sum += p;
        k += p > 0.0;
    }
    /* n <= 1024 terms in [0, 1]: the rounded sum errs by far less than the tolerance */
    if (!(fabs(sum - 1.0) <= 1e-9)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "mixture of Gaussians: sampling_probs must sum to 1 (within 1e-9), "
                   "got %.17g", sum);
        return NULL;
    }
    double *mix = malloc(2 * k * sizeof *mix);
    if (mix == NULL) {
        dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a mixture of %zu Gaussians", k);
        return NULL;
    }
    for (size_t i = 0, j = 0; i < n; i++)
        if (sampling_probs[i] > 0.0) {
            mix[j] = sensitivities[i];
            mix[k + j] = sampling_probs[i];
            j++;
        }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_MIXTURE_OF_GAUSSIANS);
    if (e == NULL) {
        free(mix);
        return NULL;
    }
    e->param = standard_deviation;
    e->param2 = sum;
    e->mix = mix;
    e->n_mix = k;
    return e;
}

dpzo_event *dpzo_event_truncated_subsampled_gaussian(dpzo_ctx *ctx, uint64_t dataset_size,
                                                  double sampling_probability,
                                                  uint64_t truncated_batch_size,
                                                  double noise_multiplier)
{
    if (!(sampling_probability >= 0.0 && sampling_probability <= 1.0)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "truncated sampled Gaussian: sampling_probability must be in [0, 1], "
                   "got %g", sampling_probability);
        return NULL;
    }
    if (!(noise_multiplier >= 0.0) || !isfinite(noise_multiplier)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "truncated sampled Gaussian: noise_multiplier must be finite and >= 0, "
                   "got %g", noise_multiplier);
        return NULL;
    }
    if (dataset_size > (UINT64_C(1) << 53) || truncated_batch_size > (UINT64_C(1) << 53)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "truncated sampled Gaussian: dataset_size and truncated_batch_size must be "
                   "<= 2^53, got %llu and %llu", (unsigned long long)dataset_size,
                   (unsigned long long)truncated_batch_size);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN);
    if (e != NULL) {
        e->param = noise_multiplier;
        e->param2 = sampling_probability;
        e->n = dataset_size;
        e->batch = truncated_batch_size;
    }
    return e;
}

/* sigma / sqrt(d) rounded toward `dir` (0: down, INFINITY: up), exact where it can be */
static double tree_sigma(const dpzo_event *tree, double dir)
{
    double sigma = tree->param, d = (double)tree->n; /* d <= 2^29: exact */
    if (tree->n == 1)
        return sigma;
    double r = sqrt(d); /* correctly rounded */
    /* exact only for a perfect square: r * r == d also holds, after rounding, for r = the
     * rounded sqrt(11) (below the root), whose exact quotient would then be too large */
    int r_exact = r == floor(r) && r * r == d;
    double s = sigma / r;
    if (r_exact && fma(s, r, -sigma) == 0.0)
        return s; /* sigma / sqrt(d) exactly */
    /* sqrt rounded away from dir's side by at most an ulp, then the quotient toward it by at
     * most one more ulp each */
    s = sigma / (r_exact ? r : nextafter(r, dir == 0.0 ? INFINITY : 0.0));
    s = nextafter(s, dir);
    return s < 0.0 ? 0.0 : s;
}

double dpzo__tree_gaussian_sigma(const dpzo_event *tree)
{
    return tree_sigma(tree, 0.0);
}

double dpzo__tree_gaussian_sigma_up(const dpzo_event *tree)
{
    return tree_sigma(tree, INFINITY);
}

/* A NULL inner means its constructor failed and left its message in ctx. */
dpzo_event *dpzo_event_poisson_sampled(dpzo_ctx *ctx, double q, dpzo_event *inner)
{
    if (inner == NULL)
        return NULL;
    if (dpzo__check_rate(ctx, q)) {
        dpzo_event_free(inner);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_POISSON_SAMPLED);
    if (e == NULL) {
        dpzo_event_free(inner);
        return NULL;
    }
    e->param = q;
    e->inner = inner;
    return e;
}

dpzo_event *dpzo_event_wor_sampled(dpzo_ctx *ctx, uint64_t batch, uint64_t n, dpzo_event *inner)
{
    if (inner == NULL)
        return NULL;
    if (n == 0 || batch > n) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "sampling without replacement needs 0 <= batch <= n and n > 0, got batch=%llu, "
                   "n=%llu", (unsigned long long)batch, (unsigned long long)n);
        dpzo_event_free(inner);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_WOR_SAMPLED);
    if (e == NULL) {
        dpzo_event_free(inner);
        return NULL;
    }
    e->batch = batch;
    e->n = n;
    e->inner = inner;
    return e;
}

dpzo_event *dpzo_event_repeat_and_select(dpzo_ctx *ctx, dpzo_event *inner, double mean,
                                         double shape)
{
    if (inner == NULL)
        return NULL;
    if (!(mean >= 1.0) || !isfinite(mean) || !(shape > -1.0)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "repeat-and-select needs a finite mean >= 1 and a shape > -1 (+inf: "
                   "Poisson), got mean=%g, shape=%g", mean, shape);
        dpzo_event_free(inner);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_REPEAT_AND_SELECT);
    if (e == NULL) {
        dpzo_event_free(inner);
        return NULL;
    }
    e->param = mean;
    e->param2 = shape;
    e->inner = inner;
    return e;
}

dpzo_event *dpzo_event_wr_sampled(dpzo_ctx *ctx, uint64_t n, uint64_t sample_size,
                                  dpzo_event *inner)
{
    if (inner == NULL)
        return NULL;
    if (n == 0 || sample_size > (UINT64_C(1) << 53)) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "sampling with replacement needs n >= 1 and 0 <= sample_size <= 2^53, "
                   "got n=%llu, sample_size=%llu", (unsigned long long)n,
                   (unsigned long long)sample_size);
        dpzo_event_free(inner);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_WR_SAMPLED);
    if (e == NULL) {
        dpzo_event_free(inner);
        return NULL;
    }
    e->batch = sample_size;
    e->n = n;
    e->inner = inner;
    return e;
}

dpzo_event *dpzo_event_self_composed(dpzo_ctx *ctx, dpzo_event *inner, uint64_t count)
{
    if (inner == NULL)
        return NULL;
    if (count > (1ull << 53)) {
        dpzo__fail(ctx, DPZO_EINVAL, "composition count %llu exceeds 2^53",
                   (unsigned long long)count);
        dpzo_event_free(inner);
        return NULL;
    }
    dpzo_event *e = new_event(ctx, DPZO_EVENT_SELF_COMPOSED);
    if (e == NULL) {
        dpzo_event_free(inner);
        return NULL;
    }
    e->count = count;
    e->inner = inner;
    return e;
}

dpzo_event *dpzo_event_composed(dpzo_ctx *ctx, dpzo_event **events, size_t n)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++)
        failed |= events[i] == NULL;
    dpzo_event *e = failed ? NULL : new_event(ctx, DPZO_EVENT_COMPOSED);
    if (e != NULL && n > 0) {
        e->children = malloc(n * sizeof *e->children);
        if (e->children == NULL) {
            dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing %zu events", n);
            free(e);
            e = NULL;
        }
    }
    if (e == NULL) {
        for (size_t i = 0; i < n; i++)
            dpzo_event_free(events[i]);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        e->children[i] = events[i];
    e->n_children = n;
    return e;
}

dpzo_event_kind dpzo_event_get_kind(const dpzo_event *event) { return event->kind; }

/* Writes what fits into buf[0..size) (buf may be NULL when size is 0) and returns the
 * length the whole description needs, like snprintf. */
static size_t describe(const dpzo_event *e, char *buf, size_t size)
{
    size_t used = 0;
#define AT (used < size ? buf + used : NULL)
#define LEFT (used < size ? size - used : 0)
#define PUT(...)                                                                          \
    do {                                                                                  \
        int w_ = snprintf(AT, LEFT, __VA_ARGS__);                                         \
        used += w_ > 0 ? (size_t)w_ : 0;                                                  \
    } while (0)
#define SUB(child) used += describe(child, AT, LEFT)
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN: PUT("gaussian(sigma=%.17g)", e->param); break;
    case DPZO_EVENT_LAPLACE: PUT("laplace(b=%.17g)", e->param); break;
    case DPZO_EVENT_NON_PRIVATE: PUT("non_private()"); break;
    case DPZO_EVENT_ZCDP: PUT("zcdp(rho=%.17g, xi=%.17g)", e->param, e->param2); break;
    case DPZO_EVENT_RANDOMIZED_RESPONSE:
        PUT("randomized_response(p=%.17g, k=%llu)", e->param, (unsigned long long)e->n);
        break;
    case DPZO_EVENT_DISCRETE_LAPLACE:
        PUT("discrete_laplace(t=%.17g, sensitivity=%llu)", e->param, (unsigned long long)e->n);
        break;
    case DPZO_EVENT_TREE_AGGREGATION:
        if (e->tree_multi) {
            PUT("tree_aggregation(sigma=%.17g, steps=%llu, max_participations=%llu, "
                "min_separation=%llu, sensitivity_squared=%llu)", e->param,
                (unsigned long long)e->count, (unsigned long long)e->tree_parts,
                (unsigned long long)e->tree_sep, (unsigned long long)e->n);
            break;
        }
        PUT("tree_aggregation(sigma=%.17g, trees=%llu, max_steps=%llu, depth=%llu)", e->param,
            (unsigned long long)e->batch, (unsigned long long)e->count,
            (unsigned long long)e->n);
        break;
    case DPZO_EVENT_MIXTURE_OF_GAUSSIANS:
        PUT("mixture_of_gaussians(sigma=%.17g, [", e->param);
        for (size_t i = 0; i < e->n_mix; i++)
            PUT("%s%.17g:%.17g", i > 0 ? ", " : "", e->mix[i], e->mix[e->n_mix + i]);
        PUT("])");
        break;
    case DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN:
        PUT("truncated_subsampled_gaussian(n=%llu, q=%.17g, batch=%llu, sigma=%.17g)",
            (unsigned long long)e->n, e->param2, (unsigned long long)e->batch, e->param);
        break;
    case DPZO_EVENT_POISSON_SAMPLED:
        PUT("poisson(q=%.17g, ", e->param);
        SUB(e->inner);
        PUT(")");
        break;
    case DPZO_EVENT_WOR_SAMPLED:
        PUT("without_replacement(batch=%llu, n=%llu, ", (unsigned long long)e->batch,
            (unsigned long long)e->n);
        SUB(e->inner);
        PUT(")");
        break;
    case DPZO_EVENT_REPEAT_AND_SELECT:
        PUT("repeat_and_select(mean=%.17g, shape=%.17g, ", e->param, e->param2);
        SUB(e->inner);
        PUT(")");
        break;
    case DPZO_EVENT_WR_SAMPLED:
        PUT("with_replacement(sample_size=%llu, n=%llu, ", (unsigned long long)e->batch,
            (unsigned long long)e->n);
        SUB(e->inner);
        PUT(")");
        break;
    case DPZO_EVENT_SELF_COMPOSED:
        PUT("repeat(%llu, ", (unsigned long long)e->count);
        SUB(e->inner);
        PUT(")");
        break;
    case DPZO_EVENT_COMPOSED:
        PUT("compose[");
        for (size_t i = 0; i < e->n_children; i++) {
            if (i > 0)
                PUT(", ");
            SUB(e->children[i]);
        }
        PUT("]");
        break;
    }
#undef PUT
#undef SUB
#undef AT
#undef LEFT
    return used;
}

void dpzo_event_describe(const dpzo_event *event, char *buf, size_t size)
{
    if (buf == NULL || size == 0)
        return;
    buf[0] = '\0';
    describe(event, buf, size);
}

/* An upper bound on the Gaussian "precision" sum count_i / sigma_i^2 of a Gaussian-only
 * subtree: every operation is nudged one ulp up (round-to-nearest errs by half an ulp),
 * and a sigma^-2 that underflows becomes the smallest positive double, so a finite
 * sigma never counts as "spends nothing". */
static dpzo_status precision_upper(dpzo_ctx *ctx, const dpzo_event *e, double *prec)
{
    dpzo_status st;
    double p = 0.0, inner;
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
        if (e->param == 0.0) {
            p = INFINITY;
        } else {
            double inv = dpzo__up(1.0 / e->param);
            p = dpzo__up(inv * inv);
            if (p == 0.0)
                p = DBL_TRUE_MIN;
        }
        break;
    case DPZO_EVENT_SELF_COMPOSED:
        if ((st = precision_upper(ctx, e->inner, &inner)))
            return st;
        p = e->count == 0 || inner == 0.0 ? 0.0 : dpzo__up((double)e->count * inner);
        break;
    case DPZO_EVENT_COMPOSED:
        for (size_t i = 0; i < e->n_children; i++) {
            if ((st = precision_upper(ctx, e->children[i], &inner)))
                return st;
            p = dpzo__up(p + inner);
        }
        break;
    default: {
        char d[160];
        dpzo_event_describe(e, d, sizeof d);
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "a sampled event must wrap Gaussian mechanisms only (RDP accountant), "
                          "got %s", d);
    }
    }
    *prec = p;
    return DPZO_OK;
}

dpzo_status dpzo__effective_sigma(dpzo_ctx *ctx, const dpzo_event *e, double *sigma)
{
    if (e->kind == DPZO_EVENT_GAUSSIAN) { /* exact: no rounding to risk */
        *sigma = e->param;
        return DPZO_OK;
    }
    double prec = 0.0;
    dpzo_status st = precision_upper(ctx, e, &prec);
    if (st)
        return st;
    if (prec == 0.0)
        *sigma = INFINITY; /* only zero-count repetitions: nothing is released */
    else if (prec == INFINITY)
        *sigma = 0.0;
    else /* rounded down: a smaller sigma can only raise the RDP */
        *sigma = nextafter(1.0 / dpzo__up(sqrt(prec)), 0.0);
    return DPZO_OK;
}

dpzo_event *dpzo_event_from_schedule(dpzo_ctx *ctx, const dpzo_phase *phases, size_t n)
{
    if (n == 0) {
        dpzo__fail(ctx, DPZO_EINVAL, "a schedule needs at least one phase");
        return NULL;
    }
    dpzo_event **list = malloc(n * sizeof *list);
    if (list == NULL) {
        dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a schedule of %zu phases", n);
        return NULL;
    }
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        list[i] = failed ? NULL
                         : dpzo_event_self_composed(
                               ctx,
                               dpzo_event_poisson_sampled(
                                   ctx, phases[i].sampling_rate,
                                   dpzo_event_gaussian(ctx, phases[i].noise_multiplier)),
                               phases[i].steps);
        if (list[i] == NULL && !failed) {
            failed = 1;
            char msg[DPZO_ERRMSG_SIZE];
            snprintf(msg, sizeof msg, "schedule phase %zu: %s", i + 1, dpzo_ctx_errmsg(ctx));
            dpzo__fail(ctx, DPZO_EINVAL, "%s", msg);
        }
    }
    dpzo_event *e = dpzo_event_composed(ctx, list, n);
    free(list);
    return e;
}
