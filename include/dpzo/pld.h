/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/pld.h: tight accountants. Privacy loss distributions (PLD) and the privacy
 * random variable accountant (PRV, Gopi-Lee-Wutschitz 2021), on the same event
 * algebra as the RDP accountant (dpzo/event.h).
 *
 * Every answer is an interval [lower, upper] that contains the true epsilon (or delta)
 * of the event; `upper` is a proven upper bound and is what a guarantee may quote
 * (`epsilon` / `delta` repeat it). `estimate` is the accountant's point value.
 *
 *  PLD: each step is discretised twice on the grid {i d}: a pessimistic distribution
 *       that dominates the true pair (connect-the-dots) and an optimistic one that it
 *       dominates (merged outcomes). Both are composed by FFT, exponentially tilted so
 *       that small deltas (down to 1e-300) are resolved; FFT rounding, truncation and
 *       aliasing are bounded and added to (or subtracted from) the answer. Poisson
 *       sampling is accounted in both adjacency directions (add and remove) and the
 *       larger epsilon reported.
 *  PRV: the pessimistic distribution on a mesh chosen from the error target eps_error
 *       (Gopi et al., Thm 5.5 style), lower end by their coupling argument: the
 *       discretised loss differs from the true one by a bounded, nearly centred amount
 *       per step, so by Hoeffding's inequality the sum is off by more than eps_error
 *       with probability at most delta_error.
 *
 * When the accountant cannot resolve the answer (a window or tilt that does not cover
 * it) or the interval is wider than an accuracy the caller asked for, the RDP
 * accountant's certified bound is computed too, the upper end becomes the smaller of the
 * two proven bounds, and the result says so (fallback = 1, reason, rdp_epsilon). Memory
 * is counted before it is allocated (the steps' arrays, discretisation scratch, FFT
 * buffers and plans, both directions where they run at the same time): a PLD request
 * whose need exceeds memory_limit is refused with DPZO_ENOMEM and a message giving the
 * size; PRV instead uses the finest mesh that fits (its eps_error then exceeds the one
 * asked for, and is reported). dpzo_pld_plan reports the need beforehand. */
#ifndef DPZO_PLD_H
#define DPZO_PLD_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/convert.h"
#include "dpzo/event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DPZO_PLD_CONNECT_DOTS = 0, DPZO_PLD_PRV = 1 } dpzo_pld_method;

typedef struct {
    dpzo_pld_method method;
    double grid;          /* PLD: loss discretisation interval in (0, 1], used as given (a
                             query that would not fit memory_limit at it is refused); 0, what
                             dpzo_pld_options_default sets: 1e-4, coarsened by powers of two
                             where the query would not fit memory_limit (the grid used is the
                             result's `grid`, and its `reason` notes it) */
    double eps_error;     /* PRV: epsilon error target (default 0.01). PLD: if > 0, fall
                             back to RDP when upper - lower exceeds it (default 0: never) */
    double delta_error;   /* PRV: delta error (default 1e-3 of delta; for delta queries
                             1e-3 of the estimate). The mesh is solved for eps_error at
                             this delta_error when given, else at 1e-13 (delta 1e-10): it
                             does not depend on delta, so epsilon(delta) does not rise with
                             delta; below delta 1e-10 the interval is then wider than
                             eps_error (reported in the result's eps_error) */
    size_t memory_limit;  /* bytes the query may hold at once (default 2 GiB) */
    const dpzo_rdp_options *rdp; /* RDP options for the tilt and the fallback (NULL: default) */
    int ladder;           /* PLD at a grid given: 1 answers with the tightest ends over the
                             ladder {1, 2, 5} x 10^k from the grid rounded down to it up to 1,
                             so that no finer grid gives a looser end (about twice the work;
                             the result's `grid` is the rung); 0 (default): that grid alone.
                             The CLI's --grid and Python's grid= set it */
} dpzo_pld_options;

void dpzo_pld_options_default(dpzo_pld_options *opts);

typedef struct {
    double epsilon;      /* = epsilon_upper */
    double epsilon_lower, epsilon_estimate, epsilon_upper;
    double delta;        /* = delta_upper */
    double delta_lower, delta_estimate, delta_upper;
    int fallback;        /* 1: RDP was consulted; the upper end is min(tight, RDP) */
    char reason[200];    /* why the tight accountant did not answer ("" when it did) */
    double rdp_epsilon;  /* RDP's certified epsilon / delta when it was computed, else NaN */
    double grid;         /* grid interval or mesh used */
    double eps_error, delta_error; /* PRV error terms (0 for PLD) */
    size_t fft_size;     /* largest FFT length used */
    size_t memory_bytes; /* peak bytes the query held: its discretised steps with their
                            scratch, or with its compositions (both directions when they ran
                            in parallel); at most memory_limit */
    double tilt;         /* the exponential tilt lambda used */
} dpzo_pld_result;

/* A custom scalar noise for the PLD accountant (the LMO noise of noisesearch/ uses it):
 * the pair P0 = noise, P1 = noise + shift, described through r = log dP1/dP0 (the privacy
 * loss of the plain mechanism). r must have no atoms. `tails` reports, at a threshold s,
 *   lg[j] = log P_j(r > s),  ll[j] = log P_j(r <= s)   (j = 0: P0, j = 1: P1)
 * and *err, a bound on the absolute error of those four logs. Outcomes are assigned to
 * {r > s} or {r <= s} by computed cell boundaries; loss_slack bounds how far an outcome's
 * true r may lie on the wrong side of s (the accountant widens every loss bucket by it,
 * which keeps the pessimistic distribution dominating). r_min, r_max enclose the
 * essential range of r. The callback may run in two threads at once. */
typedef struct dpzo_pld_noise {
    void *data;
    void (*tails)(void *data, double s, double lg[2], double ll[2], double *err);
    double r_min, r_max;
    double loss_slack;
    double tilt;     /* the exponential tilt to compose at (e.g. an RDP accountant's optimal
                        order minus 1); <= 0: chosen from the discretised steps */
} dpzo_pld_noise;

/* epsilon of `steps` releases of a custom noise, each on a batch drawn by Poisson
 * sampling with rate q (q = 1: no sampling; add and remove adjacency are both accounted)
 * or, with wor != 0, a fixed-size batch drawn without replacement at rate q (replace-one
 * adjacency; the noise's shift must then be the replace-one sensitivity). Connect-the-dots
 * only (opts->method must be DPZO_PLD_CONNECT_DOTS); there is no RDP fallback: when the
 * composed window does not resolve the answer after the retries, the result claims nothing
 * (epsilon_upper = +inf, epsilon_lower = 0, reason set) and the caller should use another
 * accountant; otherwise the upper end is the pessimistic bound. */
dpzo_status dpzo_pld_noise_epsilon(dpzo_ctx *ctx, const dpzo_pld_noise *noise, double q, int wor,
                                   uint64_t steps, double delta, const dpzo_pld_options *opts,
                                   dpzo_pld_result *out);

/* epsilon for a target delta in (0, 1); opts may be NULL (PLD defaults). */
dpzo_status dpzo_pld_epsilon(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                             const dpzo_pld_options *opts, dpzo_pld_result *out);
/* delta for a target epsilon >= 0. */
dpzo_status dpzo_pld_delta(dpzo_ctx *ctx, const dpzo_event *event, double epsilon,
                           const dpzo_pld_options *opts, dpzo_pld_result *out);
/* What an epsilon query (want_delta = 0) or delta query would hold at its peak, and its
 * FFT length, without composing anything (the steps are discretised, at every mesh PRV
 * tries). A retry at another tilt or window, which the plan does not foresee, is checked
 * against memory_limit before it allocates. */
dpzo_status dpzo_pld_plan(dpzo_ctx *ctx, const dpzo_event *event, double target, int want_delta,
                          const dpzo_pld_options *opts, size_t *bytes, size_t *fft_size);

#ifdef __cplusplus
}
#endif
#endif
