/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/calibrate.c: noise multiplier, steps or sampling rate for a target
 * (epsilon, delta), Poisson-sampled Gaussian training.
 *
 * epsilon is monotone in each parameter (decreasing in sigma, increasing in steps
 * and q), so a bracket is grown geometrically and bisected on the fast estimate
 * until it is `tolerance` wide; the feasible end is then certified, and moved one
 * tolerance step further while its certified epsilon exceeds the target (rare:
 * only when fast and certified straddle the target). The result therefore meets
 * the target provably and is tight to the tolerance. */
#include <math.h>
#include <string.h>
#include "dpzo/pld.h"
#include "internal.h"
#include "pld_internal.h"
#include "rdp_internal.h"

#define DEFAULT_RTOL 1e-6
#define DEFAULT_RTOL_TIGHT 1e-4

typedef enum { PARAM_SIGMA, PARAM_STEPS, PARAM_RATE } param_kind;

typedef struct {
    dpzo_ctx *ctx;
    param_kind kind;
    double sigma, q, steps; /* the fixed ones; the free one is the argument */
    uint64_t batch, n;      /* n > 0: a batch of `batch` of n drawn without replacement
                               each step (replace-one adjacency) instead of Poisson at q */
    double epsilon, delta;
    const dpzo_rdp_options *opts;
    int evaluations;
    const dpzo_pld_options *tight; /* NULL: the RDP accountant */
    double eps_lower;              /* lower end of the last tight evaluation */
} problem;

/* The ends of the searches: the most noise, and the lowest sampling rate, tried. */
#define SIGMA_MAX 1e12
#define RATE_MIN 1e-15

/* epsilon at parameter value x; certify selects the proven upper bound. */
static dpzo_status eps_at(problem *p, double x, int certify, dpzo_dp_result *res)
{
    double sigma = p->sigma, q = p->q, steps = p->steps;
    if (p->kind == PARAM_SIGMA)
        sigma = x;
    else if (p->kind == PARAM_STEPS)
        steps = x;
    else
        q = x;
    dpzo_event *g = dpzo_event_gaussian(p->ctx, sigma);
    dpzo_event *e = dpzo_event_self_composed(
        p->ctx,
        p->n > 0 ? dpzo_event_wor_sampled(p->ctx, p->batch, p->n, g)
                 : dpzo_event_poisson_sampled(p->ctx, q, g),
        (uint64_t)steps);
    if (e == NULL)
        return DPZO_EINVAL;
    p->evaluations++;
    dpzo_status st;
    if (p->tight != NULL) {
        /* the tight accountants' upper end is always proven: no separate certification;
         * the search reads the upper end only, the certification the lower end too */
        dpzo_pld_result t;
        st = certify ? dpzo_pld_epsilon(p->ctx, e, p->delta, p->tight, &t)
                     : dpzo__pld_epsilon_upper(p->ctx, e, p->delta, p->tight, &t);
        memset(res, 0, sizeof *res);
        res->epsilon = t.epsilon;
        res->epsilon_estimate = t.epsilon_estimate;
        res->delta = p->delta;
        res->order = NAN;
        p->eps_lower = t.epsilon_lower;
    } else {
        st = dpzo__event_query(p->ctx, e, p->delta, 0, p->opts, certify, res);
        p->eps_lower = NAN;
    }
    dpzo_event_free(e);
    return st;
}

static int meets(const problem *p, const dpzo_dp_result *r) { return r->epsilon <= p->epsilon; }

/* The sampling bound of the noise problem's event (sampling_bound.c): 1 - P(no step uses the
 * record), which does not depend on sigma. */
static double noise_sampling_bound(const problem *p)
{
    dpzo_event g = {.kind = DPZO_EVENT_GAUSSIAN, .param = 1.0};
    dpzo_event s = {.kind = p->n > 0 ? DPZO_EVENT_WOR_SAMPLED : DPZO_EVENT_POISSON_SAMPLED,
                    .param = p->q, .batch = p->batch, .n = p->n, .inner = &g};
    dpzo_event c = {.kind = DPZO_EVENT_SELF_COMPOSED, .count = (uint64_t)p->steps, .inner = &s};
    return dpzo__event_sampling_bound(&c);
}

static dpzo_status check_target(dpzo_ctx *ctx, double epsilon, double delta)
{
    dpzo_status st;
    if ((st = dpzo__check_epsilon(ctx, epsilon)) || (st = dpzo__check_delta(ctx, delta)))
        return st;
    if (epsilon == 0.0)
        return dpzo__fail(ctx, DPZO_EINFEASIBLE, "target epsilon 0 cannot be met with RDP");
    return DPZO_OK;
}

static void finish(problem *p, double value, const dpzo_dp_result *cert, double other,
                   double eps_other, dpzo_calibration *out)
{
    out->value = value;
    out->epsilon = cert->epsilon;
    out->order = cert->order;
    out->other_side = other;
    out->epsilon_other_side = eps_other;
    out->evaluations = p->evaluations;
    out->epsilon_lower = p->eps_lower;
}

/* From a bracket (pass meets the target, fail does not), bisects on the fast epsilon until
 * the two are one tolerance apart (integer: adjacent), then certifies `pass`, stepping
 * one tolerance further from `fail` while the certificate misses the target. */
static dpzo_status bisect_and_certify(problem *p, double pass, double fail, double eps_fail,
                                      double rtol, int integer, const char *what, double limit,
                                      dpzo_calibration *out)
{
    dpzo_status st;
    dpzo_dp_result r;
    while (integer ? fabs(pass - fail) > 1.0 : fabs(pass - fail) > rtol * pass) {
        double mid = 0.5 * (pass + fail);
        if (integer)
            mid = floor(mid);
        if ((st = eps_at(p, mid, 0, &r)))
            return st;
        if (meets(p, &r))
            pass = mid;
        else {
            fail = mid;
            eps_fail = r.epsilon;
        }
    }
    for (int i = 0;; i++) {
        if ((st = eps_at(p, pass, 1, &r)))
            return st;
        if (meets(p, &r))
            break;
        if (i == 0) {
            /* the certificate missed where the fast estimate passed: first the far end of the
             * search (`limit`: the most noise, the fewest steps, the lowest rate it accepts),
             * whose certificate missing means none between does (the certified epsilon is
             * monotone in each). Below delta ~ 1e-300 the conversion alone costs
             * log(1/delta) / (alpha - 1) at the largest order, more than the fast estimate
             * says: a fuzzed target of 2e-305 at delta 6e-315 walked 64 certifications up to
             * sigma 2e192 (85 s on the project's 2-core AMD EPYC) before this check. The
             * certified epsilon's monotonicity is that of the bound at each order; the chosen
             * order may move, which can only make this refusal early, never a bound unsound. */
            dpzo_dp_result rl;
            if ((st = eps_at(p, limit, 1, &rl)))
                return st;
            if (!meets(p, &rl))
                return dpzo__fail(p->ctx, DPZO_EINFEASIBLE,
                                  "epsilon %g cannot be certified: even %s = %g gives %.6g "
                                  "at delta %g (the far end of the search)",
                                  p->epsilon, what, limit, rl.epsilon, p->delta);
        }
        /* steps of one tolerance first, then doubling (the fast estimate can be far off
         * where the RDP underflows or overflows a double: q = 1e-300, sigma = 1e-153), so
         * 64 steps span any range of doubles */
        double away = pass > fail ? 1.0 : -1.0, next;
        double grow = i < 8 ? 1.0 : ldexp(1.0, i - 8);
        next = integer ? pass + away * grow : pass * pow(1.0 + rtol * grow, away);
        if (i == 64 || (integer && next < 1.0) || !isfinite(next) || next == pass)
            return dpzo__fail(p->ctx, DPZO_ENOCONV, "could not certify %s near %.9g", what,
                              pass);
        fail = pass;
        eps_fail = r.epsilon; /* certified: it missed the target */
        pass = next;
    }
    finish(p, pass, &r, fail, eps_fail, out);
    return DPZO_OK;
}

static dpzo_status check_tolerance(dpzo_ctx *ctx, double tolerance, const dpzo_pld_options *tight,
                                   double *rtol)
{
    /* below 1e-12 a relative step of the bisection nears the spacing of doubles (2^-52):
     * it would stop making progress */
    if (!(tolerance == 0.0 || (tolerance >= 1e-12 && tolerance < 0.5)))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "tolerance must be 0 (the default) or in [1e-12, 0.5), got %g",
                          tolerance);
    *rtol = tolerance > 0.0 ? tolerance : tight ? DEFAULT_RTOL_TIGHT : DEFAULT_RTOL;
    return DPZO_OK;
}

/* batch, n: 0, 0 for Poisson sampling at q; else without replacement (q = batch / n). */
static dpzo_status calibrate_noise(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                   uint64_t batch, uint64_t n, uint64_t steps, double tolerance,
                                   const dpzo_rdp_options *opts, const dpzo_pld_options *tight,
                                   dpzo_calibration *out)
{
    dpzo_status st;
    double rtol = DEFAULT_RTOL;
    if ((st = check_target(ctx, epsilon, delta)) || (st = dpzo__check_rate(ctx, q))
        || (st = check_tolerance(ctx, tolerance, tight, &rtol)))
        return st;
    problem p = {ctx, PARAM_SIGMA, 0.0, q, (double)steps, batch, n, epsilon, delta,
                 opts, 0, tight, NAN};
    dpzo_dp_result r;
    memset(out, 0, sizeof *out);
    if (q == 0.0 || steps == 0) { /* no privacy spent at any sigma: sigma 0 */
        if ((st = eps_at(&p, 0.0, 1, &r)))
            return st;
        finish(&p, 0.0, &r, NAN, NAN, out); /* no failing sigma exists to report */
        return DPZO_OK;
    }
    if (delta >= noise_sampling_bound(&p)) {
        /* delta is at least the sampling bound: epsilon is 0 at every sigma, 0 included
         * (issue 28, item 4: PRV returned sigma 0.004940986634 "tight to 0.004940509796",
         * RDP 0.2710373 "tight to 0.2710371", where sigma 0 meets the target). Certified
         * there; no failing sigma exists to report. */
        if ((st = eps_at(&p, 0.0, 1, &r)))
            return st;
        if (meets(&p, &r)) {
            finish(&p, 0.0, &r, NAN, NAN, out);
            return DPZO_OK;
        }
    }
    /* bracket [fail, pass] by doubling, then halving when sigma = 1 already passes */
    double fail = 0.0, pass = 1.0, eps_fail = INFINITY;
    for (;;) {
        if ((st = eps_at(&p, pass, 0, &r)))
            return st;
        if (meets(&p, &r))
            break;
        fail = pass;
        eps_fail = r.epsilon;
        pass *= 2.0;
        if (pass > SIGMA_MAX)
            return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                              "no noise multiplier up to 1e12 reaches epsilon %g", epsilon);
    }
    while (fail == 0.0 && pass >= 1e-300) {
        if ((st = eps_at(&p, pass / 2.0, 0, &r)))
            return st;
        if (meets(&p, &r))
            pass /= 2.0;
        else {
            fail = pass / 2.0;
            eps_fail = r.epsilon;
        }
    }
    if (fail == 0.0) {
        /* every sigma down to 1e-300 meets the target (fast estimate): certify that one;
         * no failing value exists to report (other_side NAN) */
        if ((st = eps_at(&p, pass, 1, &r)))
            return st;
        if (meets(&p, &r)) {
            finish(&p, pass, &r, NAN, NAN, out);
            return DPZO_OK;
        }
        fail = pass / 2.0; /* the certificate missed: search upwards from here */
        eps_fail = r.epsilon;
    }
    return bisect_and_certify(&p, pass, fail, eps_fail, rtol, 0, "sigma", SIGMA_MAX, out);
}

static dpzo_status calibrate_steps(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                   double sigma, const dpzo_rdp_options *opts,
                                   const dpzo_pld_options *tight, dpzo_calibration *out)
{
    dpzo_status st;
    if ((st = check_target(ctx, epsilon, delta)) || (st = dpzo__check_rate(ctx, q))
        || (st = dpzo__check_sigma(ctx, sigma)))
        return st;
    problem p = {ctx, PARAM_STEPS, sigma, q, 0.0, 0, 0, epsilon, delta, opts, 0, tight, NAN};
    dpzo_dp_result r;
    memset(out, 0, sizeof *out);
    if ((st = eps_at(&p, 1.0, 0, &r)))
        return st;
    if (!meets(&p, &r))
        return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                          "a single step already spends epsilon %.6g > target %g", r.epsilon,
                          epsilon);
    double pass = 1.0, fail = 2.0, eps_fail = INFINITY;
    for (;;) {
        if ((st = eps_at(&p, fail, 0, &r)))
            return st;
        if (!meets(&p, &r)) {
            eps_fail = r.epsilon;
            break;
        }
        pass = fail;
        fail *= 2.0;
        if (fail > 0x1p52) {
            /* every count up to 2^52, the largest accepted, meets the target (fast
             * estimate): certify 2^52 and report no failing count (other_side NAN), as
             * calibrate_noise does when every sigma down to 1e-300 meets it. If the
             * certificate misses, bisect_and_certify steps down from 2^52. */
            if ((st = eps_at(&p, pass, 1, &r)))
                return st;
            if (meets(&p, &r)) {
                finish(&p, pass, &r, NAN, NAN, out);
                return DPZO_OK;
            }
            return bisect_and_certify(&p, pass, pass, r.epsilon, 0.0, 1, "steps", 1.0, out);
        }
    }
    return bisect_and_certify(&p, pass, fail, eps_fail, 0.0, 1, "steps", 1.0, out);
}

static dpzo_status calibrate_rate(dpzo_ctx *ctx, double epsilon, double delta, double sigma,
                                  uint64_t steps, double tolerance, const dpzo_rdp_options *opts,
                                  const dpzo_pld_options *tight, dpzo_calibration *out)
{
    dpzo_status st;
    double rtol = DEFAULT_RTOL;
    if ((st = check_target(ctx, epsilon, delta)) || (st = dpzo__check_sigma(ctx, sigma))
        || (st = check_tolerance(ctx, tolerance, tight, &rtol)))
        return st;
    problem p = {ctx,   PARAM_RATE, sigma, 0.0, (double)steps, 0, 0, epsilon, delta, opts, 0,
                 tight, NAN};
    dpzo_dp_result r;
    memset(out, 0, sizeof *out);
    if ((st = eps_at(&p, 1.0, 0, &r)))
        return st;
    if (meets(&p, &r)) {
        if ((st = eps_at(&p, 1.0, 1, &r)))
            return st;
        if (meets(&p, &r)) {
            finish(&p, 1.0, &r, NAN, NAN, out); /* no rate fails the target */
            return DPZO_OK;
        }
    }
    double pass = 0.5, fail = 1.0, eps_fail = r.epsilon;
    for (;;) {
        if ((st = eps_at(&p, pass, 0, &r)))
            return st;
        if (meets(&p, &r))
            break;
        fail = pass;
        eps_fail = r.epsilon;
        pass /= 2.0;
        if (pass < RATE_MIN)
            return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                              "no sampling rate down to 1e-15 reaches epsilon %g", epsilon);
    }
    return bisect_and_certify(&p, pass, fail, eps_fail, rtol, 0, "q", RATE_MIN, out);
}

dpzo_status dpzo_calibrate_noise(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                 uint64_t steps, double tolerance,
                                 const dpzo_rdp_options *opts, dpzo_calibration *out)
{
    return calibrate_noise(ctx, epsilon, delta, q, 0, 0, steps, tolerance, opts, NULL, out);
}

static dpzo_status check_wor(dpzo_ctx *ctx, uint64_t batch, uint64_t n)
{
    if (batch < 1 || batch > n)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "batch size must be in [1, dataset size], got %llu of %llu",
                          (unsigned long long)batch, (unsigned long long)n);
    return DPZO_OK;
}

dpzo_status dpzo_calibrate_noise_wor(dpzo_ctx *ctx, double epsilon, double delta, uint64_t batch,
                                     uint64_t n, uint64_t steps, double tolerance,
                                     const dpzo_rdp_options *opts, dpzo_calibration *out)
{
    dpzo_status st = check_wor(ctx, batch, n);
    return st ? st
              : calibrate_noise(ctx, epsilon, delta, (double)batch / (double)n, batch, n, steps,
                                tolerance, opts, NULL, out);
}

dpzo_status dpzo_calibrate_steps(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                 double sigma, const dpzo_rdp_options *opts,
                                 dpzo_calibration *out)
{
    return calibrate_steps(ctx, epsilon, delta, q, sigma, opts, NULL, out);
}

dpzo_status dpzo_calibrate_sampling_rate(dpzo_ctx *ctx, double epsilon, double delta,
                                         double sigma, uint64_t steps, double tolerance,
                                         const dpzo_rdp_options *opts, dpzo_calibration *out)
{
    return calibrate_rate(ctx, epsilon, delta, sigma, steps, tolerance, opts, NULL, out);
}

static const dpzo_pld_options *tight_or_default(const dpzo_pld_options *opts,
                                                dpzo_pld_options *buf)
{
    if (opts != NULL)
        return opts;
    dpzo_pld_options_default(buf);
    return buf;
}

dpzo_status dpzo_calibrate_noise_pld(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                     uint64_t steps, double tolerance,
                                     const dpzo_pld_options *opts, dpzo_calibration *out)
{
    dpzo_pld_options b;
    opts = tight_or_default(opts, &b);
    return calibrate_noise(ctx, epsilon, delta, q, 0, 0, steps, tolerance, opts->rdp, opts, out);
}

dpzo_status dpzo_calibrate_noise_wor_pld(dpzo_ctx *ctx, double epsilon, double delta,
                                         uint64_t batch, uint64_t n, uint64_t steps,
                                         double tolerance, const dpzo_pld_options *opts,
                                         dpzo_calibration *out)
{
    dpzo_pld_options b;
    opts = tight_or_default(opts, &b);
    dpzo_status st = check_wor(ctx, batch, n);
    return st ? st
              : calibrate_noise(ctx, epsilon, delta, (double)batch / (double)n, batch, n, steps,
                                tolerance, opts->rdp, opts, out);
}

dpzo_status dpzo_calibrate_steps_pld(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                     double sigma, const dpzo_pld_options *opts,
                                     dpzo_calibration *out)
{
    dpzo_pld_options b;
    opts = tight_or_default(opts, &b);
    return calibrate_steps(ctx, epsilon, delta, q, sigma, opts->rdp, opts, out);
}

dpzo_status dpzo_calibrate_sampling_rate_pld(dpzo_ctx *ctx, double epsilon, double delta,
                                             double sigma, uint64_t steps, double tolerance,
                                             const dpzo_pld_options *opts,
                                             dpzo_calibration *out)
{
    dpzo_pld_options b;
    opts = tight_or_default(opts, &b);
    return calibrate_rate(ctx, epsilon, delta, sigma, steps, tolerance, opts->rdp, opts, out);
}
