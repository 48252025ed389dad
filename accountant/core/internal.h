/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/internal.h: private declarations shared by the accountant's files. */
#ifndef DPZO_ACCOUNTANT_INTERNAL_H
#define DPZO_ACCOUNTANT_INTERNAL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include "dpzo/dpzo.h"

#define DPZO_ERRMSG_SIZE 512

/* cache: a cache that a module above the context keeps in it (today rdp_wor.c's per-sigma
 * enclosures of the WBK19 terms, for a few sigmas), freed with the context by the function
 * that module stored in cache_free. The context knows nothing else of it, so it calls no
 * accountant code above it (a second module wanting a cache would get a slot of its own). */
struct dpzo_ctx {
    char errmsg[DPZO_ERRMSG_SIZE];
    long precision; /* MPFR bits for the certified path */
    void *cache;
    void (*cache_free)(void *cache);
};

/* The double estimate of dpzo_rdp_wor_gaussian's bound (rdp_wor.c), for ranking orders:
 * the same terms and stopping rules, not certified. */
dpzo_status dpzo__rdp_wor_fast(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                               double alpha, double *rdp);

/* Switches GSL's aborting error handler off, once per process (ctx.c); every function that
 * calls GSL routines that may report an error calls it first. */
void dpzo__gsl_quiet(void);

/* Records a formatted message in ctx (if not NULL) and returns status. */
dpzo_status dpzo__fail(dpzo_ctx *ctx, dpzo_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Input checks shared by the public functions: each returns DPZO_OK or fails with a
 * message naming the parameter. */
dpzo_status dpzo__check_order(dpzo_ctx *ctx, double alpha);
dpzo_status dpzo__check_sigma(dpzo_ctx *ctx, double sigma);
dpzo_status dpzo__check_rate(dpzo_ctx *ctx, double q);
dpzo_status dpzo__check_delta(dpzo_ctx *ctx, double delta);
dpzo_status dpzo__check_epsilon(dpzo_ctx *ctx, double epsilon);

/* One ulp of slack towards +inf / -inf (clamped at 0): a round-to-nearest result errs
 * by at most half an ulp, so this turns it into a proven upper / lower bound. */
static inline double dpzo__up(double x) { return isfinite(x) ? nextafter(x, INFINITY) : x; }
static inline double dpzo__down(double x)
{
    double d = isfinite(x) ? nextafter(x, -INFINITY) : x;
    return d < 0.0 ? 0.0 : d;
}

/* log(exp(a) + exp(b)) without overflow; -inf is the additive identity. */
double dpzo__log_add(double a, double b);

/* audit_lower.c: a proven lower bound (>= 0) on epsilon(delta) of `releases` releases of
 * the pair (1 - q) N(0, s^2) + q N(1, s^2) against N(0, s^2), q = q_num / q_den and
 * s = sigma sqrt(sum) / shift (sum: releases added up into one, as the shuffled audit's
 * epoch; 1 otherwise), all formed in interval arithmetic; from the best threshold test on
 * the largest release. *threshold (may be NULL) gets that threshold, in units of the shift
 * (NaN when no test proves anything, and 0 is returned). */
typedef struct {
    double q_num, q_den, sigma, shift, sum;
    uint64_t releases;
} dpzo__test_pair;
double dpzo__sgm_test_lower(const dpzo__test_pair *pair, double delta, double *threshold);

struct dpzo_event {
    dpzo_event_kind kind;
    double param;        /* sigma, b or q */
    uint64_t batch, n;   /* WOR sampling */
    uint64_t count;      /* self-composition */
    dpzo_event *inner;   /* sampled / self-composed child */
    dpzo_event **children;
    size_t n_children;
};

/* sampling_bound.c: an upper bound, rounded up, on delta(eps) at every eps >= 0: 1 - P(no
 * step uses the record the neighbours differ in), prod over the steps of (1 - q) for Poisson
 * sampling and (1 - B/n) for batches drawn without replacement (1 where an unsampled step
 * uses it). epsilon(delta) = 0 is proven wherever delta is at least this. */
double dpzo__event_sampling_bound(const dpzo_event *e);
/* The same for `count` steps each using the record with probability q. */
double dpzo__sampling_bound(double q, uint64_t count);

/* One-order conversion from RDP r to epsilon (convert.h formulas): the double
 * estimate, and a proven upper bound (MPFR at prec bits, r taken as an upper bound). */
double dpzo__rdp_eps_estimate(double alpha, double r, double delta, dpzo_conversion conv);
double dpzo__rdp_eps_upper(long prec, double alpha, double r, double delta,
                           dpzo_conversion conv);

/* The effective noise multiplier of a Gaussian-only subtree (a Gaussian, or
 * compositions of Gaussians: sigma_eff^-2 = sum count_i sigma_i^-2). Fails with
 * DPZO_EUNSUPPORTED when the subtree holds anything else. */
dpzo_status dpzo__effective_sigma(dpzo_ctx *ctx, const dpzo_event *event, double *sigma);


/* epsilon (want_delta = 0) or delta query; certify = 0 skips the certified step and
 * reports the fast estimate in epsilon/delta as well (used inside searches). */
dpzo_status dpzo__event_query(dpzo_ctx *ctx, const dpzo_event *event, double target,
                              int want_delta, const dpzo_rdp_options *opts, int certify,
                              dpzo_dp_result *out);

/* An event flattened to sum_i count_i RDP(term_i) (plan.c). A term is a sampled
 * Gaussian (leaf == NULL: q, sigma) or another leaf event. */
#define DPZO_PLAN_MAX_DISTINCT 4096
typedef struct {
    double q, sigma;
    const dpzo_event *leaf;
    double count;
} dpzo__plan_term;
typedef struct {
    dpzo__plan_term *terms;
    size_t n, cap;
    double rounding; /* 0, or the relative grid step of a dominating rounding */
} dpzo__plan;

dpzo_status dpzo__plan_build(dpzo_ctx *ctx, const dpzo_event *event, int allow_rounding,
                             dpzo__plan *plan);
void dpzo__plan_free(dpzo__plan *plan);
dpzo_status dpzo__plan_rdp(dpzo_ctx *ctx, const dpzo__plan *plan, double alpha, int certified,
                           dpzo_bound *out);
/* Fast values at many orders at once (shares per-term work across orders). */
dpzo_status dpzo__plan_rdp_curve(dpzo_ctx *ctx, const dpzo__plan *plan, const double *orders,
                                 size_t n, double *out);
/* Certified bounds at many orders: dpzo__plan_rdp(certified) at each, terms outside. */
dpzo_status dpzo__plan_rdp_curve_certified(dpzo_ctx *ctx, const dpzo__plan *plan,
                                           const double *orders, size_t n, dpzo_bound *out);

#endif
