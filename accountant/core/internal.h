/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/internal.h: the accountant core's private declarations, which every module
 * of dpzo includes: the context's layout, error reporting and input checks, rounding helpers,
 * and the event tree with what both accountants read off it (the sampling bound, the
 * effective noise of a Gaussian subtree). Nothing here names the RDP or PLD accountants:
 * rdp/rdp_internal.h and pld/pld_internal.h hold their own. */
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

struct dpzo_event {
    dpzo_event_kind kind;
    double param;        /* sigma, b, q, rho (zCDP), p (randomized response) or t
                            (discrete Laplace) */
    double param2;       /* xi (zCDP); shape (repeat-and-select, whose param is the mean) */
    uint64_t batch, n;   /* WOR sampling; n: k (randomized response), s (discrete Laplace),
                            the depth (tree aggregation); batch: the number of trees;
                            WR sampling: batch = sample size, n = dataset size */
    uint64_t count;      /* self-composition; the largest step count (tree aggregation) */
    uint64_t tree_parts, tree_sep; /* tree aggregation without restarts (tree_multi): E and
                            xi; n is then zeta*, count T */
    int tree_multi;
    dpzo_event *inner;   /* sampled / self-composed child */
    dpzo_event **children;
    size_t n_children;
    double *mix;         /* mixture of Gaussians: c_0..c_{k-1} then p_0..p_{k-1} (p_i > 0);
                            param = sigma, param2 = sum p_i. Truncated sampled Gaussian:
                            param = sigma, param2 = q, n = dataset size, batch = B */
    size_t n_mix;        /* k */
};

/* sampling_bound.c: an upper bound, rounded up, on delta(eps) at every eps >= 0: 1 - P(no
 * step uses the record the neighbours differ in), prod over the steps of (1 - q) for Poisson
 * sampling and (1 - B/n) for batches drawn without replacement (1 where an unsampled step
 * uses it). epsilon(delta) = 0 is proven wherever delta is at least this. */
double dpzo__event_sampling_bound(const dpzo_event *e);
/* The same for `count` steps each using the record with probability q. */
double dpzo__sampling_bound(double q, uint64_t count);

/* The effective noise multiplier of a Gaussian-only subtree (a Gaussian, or
 * compositions of Gaussians: sigma_eff^-2 = sum count_i sigma_i^-2). Fails with
 * DPZO_EUNSUPPORTED when the subtree holds anything else. */
dpzo_status dpzo__effective_sigma(dpzo_ctx *ctx, const dpzo_event *event, double *sigma);

/* Tree aggregation of noise multiplier sigma > 0 and depth d >= 1 is the Gaussian mechanism
 * of noise multiplier sigma / sqrt(d): that ratio, rounded down (exact where it can be), so
 * a PLD of the returned multiplier dominates the true one. 0 only where it underflows. */
double dpzo__tree_gaussian_sigma(const dpzo_event *tree);
/* The same rounded up (equal to it where it is exact): a Gaussian of that multiplier is
 * dominated by the true one, so its lower ends bound the tree's from below. */
double dpzo__tree_gaussian_sigma_up(const dpzo_event *tree);

/* event_json.c: the event of a parsed JSON value (docs/accountant.md section 7); `path`
 * names it in messages ("event", "claims[1].event"). For readers of larger files (claims). */
struct cJSON;
dpzo_status dpzo__event_from_cjson(dpzo_ctx *ctx, const struct cJSON *item, const char *path,
                                   dpzo_event **out);

#endif
