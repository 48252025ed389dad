/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_internal.h: the privacy-loss-distribution engine shared by the PLD and
 * PRV accountants (pld_source.c, pld_discretize.c, pld_compose.c, pld.c). */
#ifndef DPZO_PLD_INTERNAL_H
#define DPZO_PLD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/pld.h"
#include "internal.h"

/* One step's dominating pair (P, Q), described by its privacy loss L = log dP/dQ.
 * base: the noise (Gaussian of standard deviation `scale`, or Laplace of scale
 * `scale`) added to a query of sensitivity 1; the pair is built from
 * P1 = noise + 1 and P0 = noise + 0:
 *   REMOVE: P = (1-q) P0 + q P1, Q = P0           (q = 1: the plain mechanism)
 *   ADD:    P = P0, Q = (1-q) P0 + q P1
 *   WOR:    the symmetric pair whose loss distribution is REMOVE(q)'s on losses > 0,
 *           mirrored (omega(-l) = e^-l omega(l)) on losses < 0, plus an atom at 0
 *           (pld_source.c explains why it dominates sampling without replacement). */
/* RR and DLAP (issue 30) are whole pairs, not noises: randomized response with k buckets
 * and noise p (scale = p, k), and the discrete Laplace mechanism of parameter t on an integer
 * query of sensitivity s (scale = t, k = s). Both are symmetric and never sampled here: pair
 * is REMOVE and q 1; their losses take finitely many values (pld_source.c). */
typedef enum {
    DPZO__PLD_GAUSSIAN,
    DPZO__PLD_LAPLACE,
    DPZO__PLD_CUSTOM,
    DPZO__PLD_RR,
    DPZO__PLD_DLAP,
    DPZO__PLD_MOG,
    DPZO__PLD_TSG
} dpzo__pld_base;
typedef enum { DPZO__PLD_REMOVE, DPZO__PLD_ADD, DPZO__PLD_WOR } dpzo__pld_pair;

typedef struct {
    dpzo__pld_base base;
    dpzo__pld_pair pair;
    double scale; /* sigma or b, > 0 and finite */
    double q;     /* sampling rate in (0, 1] */
    const dpzo_pld_noise *noise; /* CUSTOM: the noise's loss tails (scale unused) */
    uint64_t k;   /* RR: the number of buckets (>= 2); DLAP: the sensitivity (>= 1) */
    const struct dpzo__pld_mog *mog; /* MOG: the mixture (pld_source.c; pair REMOVE or ADD) */
    double w2;    /* TSG: the upper bound on the cut probability (pld_source.c) */
    double w_lo;  /* TSG: its lower bound */
    double q2;    /* TSG: q_max, the rate of the cut component */
} dpzo__pld_source;

/* A mixture of Gaussians (issue 30): N(0, 1) against sum_i w_i N(d_i, 1) in units of sigma
 * (d_i = c_i / sigma >= 0, w_i = p_i / sum p > 0), REMOVE: P the mixture, ADD: P = N(0, 1). */
typedef struct dpzo__pld_mog {
    size_t n;
    double *d, *lw, *hd;  /* d_i, log w_i, d_i^2 / 2 (n entries each) */
    double dmin, dmax;
    double lw0;           /* log of the weight of the components with d_i = 0 (-inf if none) */
    double err;           /* bound on the error of each log w_i and d_i-derived term */
    const double *c, *p;  /* the event's arrays (for comparing mixtures) */
    double sigma;
} dpzo__pld_mog;
/* From a mixture-of-Gaussians event's sigma > 0 and arrays; NULL when out of memory. */
dpzo__pld_mog *dpzo__pld_mog_new(double sigma, const double *c, const double *p, size_t n);
void dpzo__pld_mog_free(dpzo__pld_mog *m);
/* Orders mixtures (for merging equal steps): 0 when they are the same mixture. */
int dpzo__pld_mog_cmp(const dpzo__pld_mog *a, const dpzo__pld_mog *b);

/* log P(L > l), log Q(L > l), log P(L <= l), log Q(L <= l); err: a bound on the absolute
 * error of each of these logs beyond the built-in rounding model (0 for built-in noises);
 * slack: how far the true loss of an outcome counted in {L > l} may lie below l, or of
 * one counted in {L <= l} above l (0 for built-in noises; see dpzo_pld_noise). */
typedef struct {
    double pg, qg, pl, ql;
    double err, slack;
} dpzo__pld_tails;

void dpzo__pld_tails_at(const dpzo__pld_source *s, double l, dpzo__pld_tails *t);
/* The same, part & 1: the upper tails pg, qg only, part & 2: the lower ones pl, ql only (the
 * others may be NaN); the values computed are those of dpzo__pld_tails_at. */
void dpzo__pld_tails_part(const dpzo__pld_source *s, double l, int part, dpzo__pld_tails *t);
/* How far an outcome counted in {L > l} may lie below l, or one counted in {L <= l} above l
 * (the tails' `slack`): a custom noise's loss_slack, the rounding of the RR and DLAP atoms'
 * losses; 0 for the built-in noises. */
double dpzo__pld_slack(const dpzo__pld_source *s);
/* The support of L under P: inf / sup (may be -inf / +inf). */
void dpzo__pld_support(const dpzo__pld_source *s, double *lmin, double *lmax);

/* One step discretised on the grid {(i + off) d}: masses for indices lo .. lo+n-1. The
 * offset puts the end of a bounded support where mass piles up (the bottom of a
 * remove pair, the top of an add pair, the upper atom of Laplace) on a grid point.
 * pess: connect-the-dots split of each bucket, the tail above the grid in pess_inf,
 *       the tail below lumped onto the first point: dominates the true pair.
 * opt:  buckets merged into single outcomes (a post-processing of the true pair) whose
 *       losses are rounded down onto the grid, tails dropped: dominated by it.
 * Either array may be NULL when not requested.
 * Coupling terms of pess (the PRV lower ends, pld.c): the split of a bucket whose true
 * merged loss lies s above l_i moves its losses up by d (1 - e^-s)/(1 - e^-d) - s <= B(d)
 * on average; the rounding guard added to s raises that mean by at most `bias` more,
 * except on buckets of total P-mass `bad_mass` (<= tau), where it is not bounded. */
typedef struct {
    long lo;
    double off;   /* the grid is {(i + off) d}, off in [0, 1) */
    size_t n;
    double *pess, *opt;
    double pess_inf;
    double bias, bad_mass;
} dpzo__pld_pmf;

/* dpzo_pld_epsilon for a caller that reads the upper end only (calibration's search): a
 * batch drawn without replacement gets no concrete instance's lower end (a second query,
 * pld.c wor_lower); its lower end is then the trivial 0. */
dpzo_status dpzo__pld_epsilon_upper(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                                    const dpzo_pld_options *opts, dpzo_pld_result *out);

/* tau: the tail mass (under P) allowed outside the grid at each end. */
dpzo_status dpzo__pld_discretize(dpzo_ctx *ctx, const dpzo__pld_source *s, double d, double tau,
                                 int want_opt, size_t max_points, dpzo__pld_pmf *out);
/* Bytes dpzo__pld_discretize holds for a step of n points beside its per-point arrays (the
 * fast path's chunk buffers, pld_fast.h; 0 where that path does not apply). */
size_t dpzo__pld_discretize_fixed_bytes(const dpzo__pld_source *s, size_t n);
/* Tests: 0 sends Poisson-sampled Gaussian steps through the scalar tails instead of
 * pld_fast.c (1, the default). Not thread-safe against running queries. */
void dpzo__pld_discretize_fast(int on);
/* Steps (one direction each) discretised by pld_fast.c since the process started. */
extern _Atomic unsigned long long dpzo__pld_fast_steps;
/* The number of grid points dpzo__pld_discretize would use (for memory planning). */
size_t dpzo__pld_points(const dpzo__pld_source *s, double d, double tau);
void dpzo__pld_pmf_free(dpzo__pld_pmf *p);

/* A composition: sum over terms of count x (one step's PMF). */
typedef struct {
    const dpzo__pld_pmf *pmf;
    uint64_t count;
} dpzo__pld_term;

/* The composed distribution, exponentially tilted by lambda >= 0 so that double
 * precision resolves its upper tail: the composed mass at loss l_k = (w0 + k + off) d
 * is exp(logscale - lambda l_k) * y[k], k = 0 .. N-1, up to the error terms. */
typedef struct {
    double d, lambda;
    long w0;
    double off;          /* composed grid offset: index k has loss (w0 + k + off) d */
    size_t N;
    double *y[2];        /* [0] pessimistic, [1] optimistic (NULL if not composed) */
    double logscale[2];
    double err[2];       /* bound on |computed - exact folded| for every y entry */
    double rel;          /* relative error from rounding the inputs (both sides) */
    double above[2];     /* tilted mass above the window (Chernoff bound) */
    double outside[2];   /* tilted mass outside the window (aliased into it) */
    double misplaced[2]; /* tilted mass put in the wrong place by intermediate windows
                            (pld_tree.c), anywhere in the window; 0 without a tree */
    double inf_mass;     /* pessimistic mass at +infinity */
    size_t bytes;        /* bytes the composition needed */
    int top_covered;     /* the window reaches the top of the composition's support */
    int folded;          /* a step was longer than the window: its ends were folded in */
} dpzo__pld_composed;

typedef struct {
    double lambda;       /* tilt */
    double tau_tilt;     /* tilted mass allowed outside the window (each side) */
    size_t memory_limit; /* bytes the composition may hold */
    int want_opt;
    int tree;            /* 0: a tree of short transforms where cheaper (pld_tree.c),
                            1: never, 2: always (three or more distinct steps) */
    size_t held;         /* bytes the caller holds beside it (only for the refusal's message:
                            the query's limit is memory_limit + held) */
} dpzo__pld_compose_opts;

/* Bytes the composition of these terms would allocate, its FFT size, and (span, may be
 * NULL) the grid points its window needs before the FFT size rounds them up to a power of
 * two (the window's extent in loss units, span x d, hardly depends on d: pld.c's PRV
 * chooses the mesh that fits the memory limit from it). */
dpzo_status dpzo__pld_compose_plan(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                   const dpzo__pld_compose_opts *o, size_t *fft_size,
                                   size_t *bytes, double *span);
/* The same window's span (grid points before rounding to a power of two) and how far its
 * Chernoff window's nearer end lies inside the composition's support before clipping (grid
 * points; negative where the support clips it), without the plan's buffers (pld.c predicts a
 * finer grid's window from a coarse one with it). */
dpzo_status dpzo__pld_compose_extent(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n,
                                     double d, const dpzo__pld_compose_opts *o, double *span,
                                     double *margin);
/* Buffers reused across compositions (the composed arrays live in it). */
typedef struct {
    size_t cap, hcap, plan_n;
    struct dpzo__fft_plan *plan;
    double _Complex *work, *prod; /* work: N entries, the pessimistic output in place */
    double *ra, *ea, *y;          /* y: the optimistic output, N entries */
} dpzo__pld_ws;
void dpzo__pld_ws_free(dpzo__pld_ws *w);
/* After `freed` bytes were freed: returns the allocator's free pages to the system when that
 * is at least 4 MiB (glibc), so that the resident size follows the accounted bytes. */
void dpzo__pld_release(size_t freed);
/* Bytes a composition of FFT length N holds at its peak (want_opt: the optimistic side too). */
size_t dpzo__pld_compose_bytes(size_t N, size_t n_terms, size_t max_points, int want_opt);
dpzo_status dpzo__pld_compose(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                              const dpzo__pld_compose_opts *o, dpzo__pld_ws *ws,
                              dpzo__pld_composed *out);
/* The same; cover_top != 0 extends the window to the support's top where that is cheap
 * (at most doubled, or 2^20 points, within the memory limit): out->top_covered says so. */
dpzo_status dpzo__pld_compose_cover(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                    const dpzo__pld_compose_opts *o, int cover_top,
                                    dpzo__pld_ws *ws, dpzo__pld_composed *out);
void dpzo__pld_composed_free(dpzo__pld_composed *c);
/* The composition's pessimistic mass at +infinity, 1 - prod_t (1 - pess_inf_t)^count_t,
 * rounded up: positive whenever a step's pess_inf is (pld_compose.c). */
double dpzo__pld_inf_mass(const dpzo__pld_term *terms, size_t n);
/* Work done by dpzo__pld_compose since the process started: the sum over its calls of the
 * FFT length times the number of distinct steps (a tree composition, pld_tree.c: each
 * node's length times its two children) (for tests that the work is bounded). */
extern _Atomic unsigned long long dpzo__pld_fft_points;

/* The split composition (pld_direct.c): the whole support composed by direct convolution
 * of each step's head and FFT convolution of tails only, with componentwise relative
 * error; for few sampled steps at small rates, where the FFT's absolute error exceeds a
 * small delta. *used = 0 (and DPZO_OK) where it does not apply. */
typedef struct {
    double *buf;
    size_t cap;
} dpzo__pld_split_ws;
void dpzo__pld_split_ws_free(dpzo__pld_split_ws *w);
dpzo_status dpzo__pld_compose_split(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                    const dpzo__pld_compose_opts *o, dpzo__pld_split_ws *ws,
                                    dpzo__pld_composed *out, int *used);

/* Bounds from a composed distribution. side 0: pessimistic (upper bounds, error terms
 * added), 1: optimistic (lower bounds, error terms subtracted), 2: the pessimistic
 * distribution as computed (the estimate, no error terms), 3: the pessimistic
 * distribution with error terms subtracted (a lower bound on its exact composition). */
double dpzo__pld_delta_at(const dpzo__pld_composed *c, int side, double eps);
/* Smallest eps with delta(eps) <= delta for side 0 and 2; largest eps with
 * delta(eps) > delta for sides 1 and 3. *inside = 0 when the answer is not resolved by the
 * window (it lies below it). */
double dpzo__pld_epsilon_for(const dpzo__pld_composed *c, int side, double delta, int *inside);

#endif
