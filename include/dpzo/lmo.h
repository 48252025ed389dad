/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/lmo.h: the LMO-DP noise (Yang et al. 2024, "LMO-DP"): a Laplace noise whose
 * inverse scale is a random weighted sum of Gamma, Exponential and Uniform variables.
 *
 *   X | Y ~ Laplace(0, 1/Y),   Y = wG*Gamma(k, theta) + wE*Exp(rate lam) + wU*Uniform(a, b)
 *
 * with independent components (docs/lmo.md). A weight of 0 drops its component.
 * The Exponential is parameterised by its RATE everywhere (mean 1/lam): this is
 * the law the accountant analyses and the law the samplers draw. The released
 * code of the paper drew Exp with mean lam; that "scale" reading is only offered
 * by dpzo_lmo_paper_* replicas.
 *
 * Privacy is for a scalar query of L1 sensitivity C ("sensitivity" below) with
 * noise X added once: every bound here is for P = X against Q = X + C. That covers
 * every shift |D| <= C: the density of X is symmetric and nonincreasing in |x|, and for
 * any such density D_alpha(X || X + D) is nondecreasing in D >= 0 (docs/lmo.md, 2). */
#ifndef DPZO_LMO_H
#define DPZO_LMO_H

#include <stdint.h>
#include "dpzo/pld.h"
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double gamma_weight, gamma_shape, gamma_scale; /* wG >= 0; k > 0, theta > 0 */
    double exp_weight, exp_rate;                   /* wE >= 0; lam > 0 (rate) */
    double uniform_weight, uniform_low, uniform_high; /* wU >= 0; 0 <= a < b */
} dpzo_lmo;

/* Checks every parameter (finite, in range, at least one weight > 0) and fails
 * with a message naming the first bad one. */
dpzo_status dpzo_lmo_validate(dpzo_ctx *ctx, const dpzo_lmo *lmo);

/* ---- The distribution (double precision; stable in every regime) ---------- */

/* log E[e^{tY}]; +inf where the MGF is infinite (t*wG*theta >= 1 or t*wE >= lam). */
double dpzo_lmo_log_mgf(const dpzo_lmo *lmo, double t);
/* d/dt log E[e^{tY}] (finite inside the domain). */
double dpzo_lmo_dlog_mgf(const dpzo_lmo *lmo, double t);
/* log density of X: f(x) = M_Y'(-|x|)/2. */
double dpzo_lmo_log_pdf(const dpzo_lmo *lmo, double x);
double dpzo_lmo_pdf(const dpzo_lmo *lmo, double x);
/* P(X <= x) and P(X > x) (each accurate in its own tail). */
double dpzo_lmo_cdf(const dpzo_lmo *lmo, double x);
double dpzo_lmo_sf(const dpzo_lmo *lmo, double x);

typedef struct {
    double mean_y;      /* E[Y] */
    double mean_abs;    /* E|X| = E[1/Y] */
    double variance;    /* Var X = 2 E[1/Y^2] (may be +inf) */
    double usefulness;  /* P(|X| <= gamma) = 1 - M_Y(-gamma) */
    double gamma;       /* the gamma used */
} dpzo_lmo_stats;

/* Moments by adaptive quadrature (GSL qagiu) to a relative 1e-10. */
dpzo_status dpzo_lmo_stats_compute(dpzo_ctx *ctx, const dpzo_lmo *lmo, double gamma,
                                   dpzo_lmo_stats *out);

/* Pure DP of the scalar mechanism at sensitivity C: eps0 = log(E[Y] / E[Y e^{-CY}]),
 * enclosed in MPFR interval arithmetic (upper is proven). */
dpzo_status dpzo_lmo_eps0(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                          dpzo_bound *out);
/* The pure-DP bound for a VECTOR of i.i.d. LMO noises (one Y per coordinate) on an
 * L1-clipped query, ||Delta||_1 <= C: C * E[Y^2] / E[Y] (upper proven). */
dpzo_status dpzo_lmo_eps0_vector(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                                 dpzo_bound *out);

/* ---- Sampling ---------------------------------------------------------------- */

typedef struct dpzo_lmo_sampler dpzo_lmo_sampler;
/* Deterministic, seeded (GSL mt19937): for research and Monte Carlo only. */
dpzo_lmo_sampler *dpzo_lmo_sampler_seeded(dpzo_ctx *ctx, const dpzo_lmo *lmo, uint64_t seed);
/* Fed by the operating system's CSPRNG (getrandom): for noise that protects data. */
dpzo_lmo_sampler *dpzo_lmo_sampler_secure(dpzo_ctx *ctx, const dpzo_lmo *lmo);
/* n draws of X (multiply by C for sensitivity C). Fails only if the CSPRNG fails. */
dpzo_status dpzo_lmo_sample(dpzo_ctx *ctx, dpzo_lmo_sampler *s, double *out, size_t n);
void dpzo_lmo_sampler_free(dpzo_lmo_sampler *s);
/* The same samplers drawing N(0, 1) instead (GSL's ziggurat on the same generators): the
 * trainer's Gaussian noise. Use dpzo_lmo_sample / dpzo_lmo_sampler_free with them. */
dpzo_lmo_sampler *dpzo_gaussian_sampler_seeded(dpzo_ctx *ctx, uint64_t seed);
dpzo_lmo_sampler *dpzo_gaussian_sampler_secure(dpzo_ctx *ctx);

/* ---- Per-step RDP -------------------------------------------------------------- */

typedef enum {
    DPZO_LMO_BOUND_MGF = 0, /* (*) of the spec: D_alpha of (X, Y) jointly; +inf outside
                               the MGF domain. Proven upper bound. */
    DPZO_LMO_BOUND_EXACT,   /* D_alpha of the mixture itself, enclosed (to 1e-7) by
                               convexity bounds on grid cells and bounded tails: lower
                               and upper are proven, given exp/log accurate to 2^-48
                               (docs/lmo.md, 3). */
    DPZO_LMO_BOUND_PURE,    /* eps0 converted to RDP (Steinke's tight conversion). */
    DPZO_LMO_BOUND_BEST     /* the pointwise minimum of the three upper bounds */
} dpzo_lmo_bound_kind;

/* Parses "mgf", "exact", "pure", "best". */
dpzo_status dpzo_lmo_bound_parse(dpzo_ctx *ctx, const char *name, dpzo_lmo_bound_kind *kind);
const char *dpzo_lmo_bound_name(dpzo_lmo_bound_kind kind);

/* RDP of one scalar release at each order (alpha > 1). out[i].upper is a proven upper
 * bound on the per-step RDP; .value is the best estimate; .lower is a proven lower
 * bound on the mixture's true RDP for EXACT/BEST and equals value otherwise. */
dpzo_status dpzo_lmo_rdp(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                         dpzo_lmo_bound_kind kind, const double *orders, size_t n,
                         dpzo_bound *out);

/* ---- Accounting a training run ---------------------------------------------- */

typedef enum {
    DPZO_LMO_SAMPLING_NONE = 0, /* every step sees the whole dataset */
    DPZO_LMO_SAMPLING_POISSON,  /* add/remove adjacency; Zhu-Wang 2019 Thm 6 */
    DPZO_LMO_SAMPLING_WOR       /* fixed batches without replacement, replace-one
                                   adjacency; Wang-Balle-Kasiviswanathan 2019 Thm 9 */
} dpzo_lmo_sampling;

typedef struct {
    double sensitivity;          /* sensitivity of the noised scalar under the scheme's
                                    adjacency (default 1): the clipping bound C for Poisson
                                    (add/remove), but 2C for WOR (replace-one: one example
                                    swapped moves a clipped sum by up to 2C) */
    dpzo_lmo_bound_kind bound;   /* per-step curve (default BEST); the amplified pure-DP
                                    curve and the pure-DP route are always used as well */
    dpzo_lmo_sampling sampling;  /* default NONE */
    double q;                    /* Poisson rate */
    uint64_t batch, n;           /* WOR batch and dataset size */
    uint64_t steps;              /* T >= 1 */
    double delta;                /* target delta in (0, 1) */
    unsigned max_order;          /* integer orders 2..max_order (default 256) */
    int vector_l1;               /* 1: each step adds i.i.d. LMO noise to every coordinate
                                    of an L1-clipped vector (||Delta||_1 <= sensitivity).
                                    Only the MGF bound (superadditive over coordinates) and
                                    the vector pure-DP bound C E[Y^2]/E[Y] are sound there:
                                    bound EXACT is refused, BEST and PURE use them. */
} dpzo_lmo_account_options;

dpzo_lmo_account_options dpzo_lmo_account_options_default(void);

typedef struct {
    double epsilon;          /* proven upper bound */
    double epsilon_estimate; /* from the estimated curves */
    double order;            /* argmin order (0 when a pure-DP route won) */
    const char *route;       /* "rdp", "pure-dp" (T*eps0 or amplified eps0 composed) */
    double eps0;             /* proven upper bound on the per-step pure-DP epsilon */
    int order_at_edge;       /* optimum at the largest order: raise max_order */
} dpzo_lmo_account_result;

dpzo_status dpzo_lmo_epsilon(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                             const dpzo_lmo_account_options *opts,
                             dpzo_lmo_account_result *out);

/* The same run by the PLD accountant (dpzo/pld.h), built from the density of X
 * (noisesearch/lmo_pld.c, docs/lmo.md "PLD"). Scalar queries only (vector_l1 is refused);
 * sensitivity, sampling, q / batch / n, steps and delta come from opts, bound and
 * max_order are ignored. grid: the loss discretisation (0: 1e-4). out->epsilon_upper
 * (= out->epsilon) is a proven upper bound (under the error model of docs/lmo.md, PLD),
 * out->epsilon_lower a lower bound from the optimistic distribution; when the composed
 * window does not resolve the answer it claims nothing (epsilon_upper = +inf, reason
 * says why). DPZO_ENOCONV: a loss-bucket boundary could not be located (use RDP).
 * Memory: the PLD accountant's default limit, 2 GiB (dpzo_pld_options.memory_limit); a run
 * whose discretisation or composition needs more fails with DPZO_ENOMEM and a message
 * (the work grows with the steps and 1/grid). dpzo_lmo_pld_epsilon_limit sets the limit. */
dpzo_status dpzo_lmo_pld_epsilon(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                 const dpzo_lmo_account_options *opts, double grid,
                                 dpzo_pld_result *out);
/* dpzo_lmo_pld_epsilon with the memory the PLD may hold at once (what it discretises and
 * composes, as dpzo_pld_options.memory_limit in dpzo/pld.h) bounded by memory_limit bytes
 * (0: the default, 2 GiB). A step's discretisation or a composition that would exceed it
 * is refused with DPZO_ENOMEM and a message naming the need and the limit. */
dpzo_status dpzo_lmo_pld_epsilon_limit(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                       const dpzo_lmo_account_options *opts, double grid,
                                       size_t memory_limit, dpzo_pld_result *out);

/* Both accountants on the same run (`dpzo lmo epsilon --accountant pld`): out is
 * dpzo_lmo_epsilon's result with its epsilon replaced by the PLD's proven upper end when
 * that is smaller (route "pld", order 0); pld is the PLD result, with rdp_epsilon set to
 * the RDP bound. When the PLD cannot certify the run (a bucket boundary not located,
 * DPZO_ENOCONV, or more memory than allowed, DPZO_ENOMEM) it claims nothing
 * (epsilon_upper +inf, epsilon_lower 0, reason the message) and the RDP bound stands. */
dpzo_status dpzo_lmo_epsilon_pld(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                 const dpzo_lmo_account_options *opts, double grid,
                                 dpzo_lmo_account_result *out, dpzo_pld_result *pld);

/* ---- The offline search ------------------------------------------------------- */

/* A grid of LMO parameters: the Cartesian product of eight lists, enumerated as an
 * odometer with gamma_weight fastest, then exp_weight, uniform_weight, the
 * (gamma_scale, gamma_shape) pairs, exp_rate, and the (uniform_low, uniform_high)
 * pairs slowest (the order of the paper's released search). */
typedef struct dpzo_lmo_grid dpzo_lmo_grid;

/* "paper" (183,708 points: U(b-1, b) for b = 1..9, which contains the released
 * profiles) or "paper-script" (40,824 points: U(0,1), U(1,2)). */
dpzo_status dpzo_lmo_grid_preset(dpzo_ctx *ctx, const char *name, dpzo_lmo_grid **out);
/* JSON: {"gamma_weight": [..], "exp_weight": [..], "uniform_weight": [..],
 *        "gamma": [[scale, shape], ..], "exp_rate": [..], "uniform": [[low, high], ..]} */
dpzo_status dpzo_lmo_grid_from_json(dpzo_ctx *ctx, const char *json, dpzo_lmo_grid **out);
size_t dpzo_lmo_grid_size(const dpzo_lmo_grid *grid);
void dpzo_lmo_grid_point(const dpzo_lmo_grid *grid, size_t index, dpzo_lmo *out);
const char *dpzo_lmo_grid_name(const dpzo_lmo_grid *grid); /* preset name or "custom" */
void dpzo_lmo_grid_free(dpzo_lmo_grid *grid);

typedef enum {
    DPZO_LMO_OBJ_USEFULNESS = 0, /* maximise P(|X| <= gamma) (R2DP; gamma = 0.9 default) */
    DPZO_LMO_OBJ_MEAN_ABS,       /* minimise E|X| */
    DPZO_LMO_OBJ_VARIANCE,       /* minimise Var X */
    DPZO_LMO_OBJ_MAX_EPSILON     /* the released code's: spend as much of the budget as possible */
} dpzo_lmo_objective;
dpzo_status dpzo_lmo_objective_parse(dpzo_ctx *ctx, const char *name, dpzo_lmo_objective *out);
const char *dpzo_lmo_objective_name(dpzo_lmo_objective objective);

typedef struct {
    dpzo_lmo_objective objective;
    double usefulness_gamma;            /* default 0.9 */
    double epsilon;                     /* target epsilon */
    int paper;                          /* 1: the paper's single-step code epsilon (at
                                           account.delta) against the target, with its
                                           pre-filter and strict "<" (bug-compatible) */
    dpzo_lmo_account_options account;   /* sound mode: the run being accounted */
    int pld;                            /* sound mode, 1: a candidate is also feasible when
                                           the PLD accountant (dpzo_lmo_pld_epsilon, grid
                                           1e-3, then 1e-4 when that does not decide) proves
                                           it; which candidates are tried: docs/lmo.md 7
                                           (max-epsilon: the largest epsilon <= target
                                           proven by RDP or PLD). Scalar queries only. */
    unsigned pld_max;                   /* at most this many PLD evaluations (default 1000) */
    unsigned threads;                   /* 0: all cores */
    const char *checkpoint;             /* file to save progress to / resume from, or NULL */
    /* called now and then from the calling thread: phase name, fraction done, and the
     * estimated seconds left (negative when unknown) */
    void (*progress)(void *user, const char *phase, double fraction, double eta_s);
    void *progress_user;
    volatile int *interrupt;            /* set to nonzero (e.g. from SIGINT) to stop */
} dpzo_lmo_search_options;

dpzo_lmo_search_options dpzo_lmo_search_options_default(void);

typedef struct {
    size_t index;            /* grid index of the winner (the first of its class) */
    size_t class_size;       /* grid points defining the same distribution */
    dpzo_lmo lmo;
    double epsilon;          /* the constraint's value: proven total epsilon (sound mode)
                                or the code epsilon (paper mode) */
    double order;            /* its optimal order (0: pure-DP route) */
    double objective_value;
    double usefulness, mean_abs, variance; /* the winner's (variance may be inf) */
    size_t n_points, n_unique, n_exact;    /* grid size, distinct distributions, and
                                              candidates certified (dpzo_lmo_epsilon, with
                                              the exact integral for bounds exact/best) */
    double seconds;
    int resumed;             /* progress was loaded from the checkpoint */
    int by_pld;              /* epsilon is the PLD accountant's bound (it was smaller) */
    double pld_lower;        /* pld mode: the winner's PLD lower end when by_pld, else NaN */
    size_t n_pld;            /* PLD evaluations made (pld mode; replayed ones included) */
} dpzo_lmo_search_result;

/* DPZO_EINFEASIBLE when no grid point meets the target; DPZO_EINTERRUPTED when
 * stopped (the checkpoint, if any, holds the progress). */
dpzo_status dpzo_lmo_search(dpzo_ctx *ctx, const dpzo_lmo_grid *grid,
                            const dpzo_lmo_search_options *opts, dpzo_lmo_search_result *out);

/* ---- Paper mode (bug-compatible replicas; NOT privacy guarantees) ------------ */

/* The released code's single-step epsilon: (*) at sensitivity 1 with its domain bug
 * (out-of-domain MGFs evaluated with numpy's IEEE semantics), orders 2..128, CKS
 * conversion at delta (the paper used 1e-10). Reports the argmin order. lmo must be
 * valid (dpzo_lmo_validate): this replica checks nothing, like the code it copies. The code's
 * accountant read exp_rate as a rate (its sampler did not: see docs/lmo.md). */
double dpzo_lmo_paper_step_epsilon(const dpzo_lmo *lmo, double delta, double *order);

typedef enum { DPZO_LMO_PAPER_ORDERS_PT = 0, DPZO_LMO_PAPER_ORDERS_INT = 1 } dpzo_lmo_paper_orders;

/* The paper's "total epsilon": the Poisson-subsampled Gaussian with the classical
 * sigma = sqrt(2 ln(1.25/delta))/eps_step, composed over T steps, CKS conversion over
 * the private-transformers orders (PT) or 2..128 (INT). */
dpzo_status dpzo_lmo_paper_total_epsilon(dpzo_ctx *ctx, double eps_step, double delta,
                                         double q, uint64_t steps,
                                         dpzo_lmo_paper_orders orders, double *epsilon);

#ifdef __cplusplus
}
#endif
#endif
