/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/audit.h: privacy audits.
 *
 * 1. Claim checking. A claim is a published statement "this training run is
 *    (epsilon, delta)-DP": a mechanism (a Gaussian noise multiplier here; other noises
 *    through dpzo_audit_mechanism, e.g. the LMO noise of dpzo/audit_claim.h), how batches
 *    were drawn, the number of steps, the adjacency and the claimed (epsilon, delta).
 *    dpzo_audit_claim brackets the true epsilon of that mechanism between a proven lower
 *    bound and a proven upper bound and answers
 *      HOLDS         the upper bound is at most the claimed epsilon,
 *      VIOLATED      the lower bound exceeds it (the mechanism is NOT (eps, delta)-DP),
 *      UNDETERMINED  the claim lies inside the interval.
 *    Upper: the smallest proven upper bound of the RDP (certified), PLD and PRV
 *    accountants. Lower: the tight accountants' proven lower ends, computed on a pair of
 *    adjacent datasets that the stated sampling and adjacency can produce (docs/audit.md
 *    says which pair for each scheme). It also reports the noise multiplier the claim
 *    would have needed, the claim under the authors' own accountant when it is stated,
 *    and the assumption mismatches it can detect.
 *
 * 2. Lower bounds from attacks: membership-inference outcomes (counts at a threshold, or
 *    scores of canaries in and out) give epsilon lower bounds at a stated confidence from
 *    Clopper-Pearson intervals; guesses about randomly included canaries give the one-run
 *    bound of Steinke, Nasr and Jagielski (2023). These are statistical statements about
 *    the implementation that was attacked, true with the stated confidence.
 *
 * Conventions. noise_multiplier sigma: the noise added to the sum of per-example
 * contributions clipped to C has standard deviation sigma*C. The sensitivity of that sum
 * is C under add/remove and zero-out adjacency and 2C under replace-one adjacency (one
 * example swapped for another), unless the claim says otherwise. */
#ifndef DPZO_AUDIT_H
#define DPZO_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/convert.h"
#include "dpzo/pld.h"
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Claims ---------------------------------------------------------------------- */

typedef enum {
    DPZO_SAMPLING_POISSON = 0, /* each example joins each step with probability q */
    DPZO_SAMPLING_FIXED,       /* each step draws B of n without replacement, independently */
    DPZO_SAMPLING_SHUFFLED,    /* each epoch shuffles the data and cuts it into batches of B */
    DPZO_SAMPLING_FULL,        /* every step uses the whole dataset */
    DPZO_SAMPLING_UNSTATED     /* (pipeline only) not known */
} dpzo_sampling_scheme;

typedef enum {
    DPZO_ADJACENCY_DEFAULT = 0, /* add-remove for poisson and full, replace-one otherwise */
    DPZO_ADJACENCY_ADD_REMOVE,
    DPZO_ADJACENCY_REPLACE_ONE,
    DPZO_ADJACENCY_ZERO_OUT     /* one example replaced by one that contributes nothing */
} dpzo_adjacency;

typedef struct {
    double noise_multiplier;  /* Gaussian sigma > 0 (ignored with a custom mechanism) */
    double sensitivity;       /* sensitivity of the noised sum in units of C; 0: from the
                                 adjacency (1 add-remove / zero-out, 2 replace-one) */
    dpzo_sampling_scheme sampling;
    double sampling_rate;     /* poisson: q in (0, 1] */
    uint64_t batch_size;      /* fixed, shuffled: B (poisson: optional, with dataset_size) */
    uint64_t dataset_size;    /* n; 0 = not stated (required by fixed and shuffled) */
    uint64_t steps;           /* T >= 1 */
    dpzo_adjacency adjacency;
    double epsilon, delta;    /* the claim: epsilon >= 0, 0 < delta < 1 */
    /* Context for the mismatch checks (all optional). */
    dpzo_sampling_scheme pipeline;    /* how the code actually drew batches (UNSTATED) */
    uint64_t effective_batch_size;    /* examples per optimiser step after gradient
                                         accumulation (0: not stated) */
    int has_accountant;               /* 1: the authors' accountant is stated: */
    dpzo_rdp_options accountant;      /*    the RDP orders and conversion they used */
} dpzo_claim;

/* Zeroes everything, sampling POISSON, pipeline UNSTATED, accountant = RDP defaults. */
void dpzo_claim_init(dpzo_claim *claim);
/* Every field in range and consistent; fails with a message naming the field. */
dpzo_status dpzo_claim_validate(dpzo_ctx *ctx, const dpzo_claim *claim);

const char *dpzo_sampling_name(dpzo_sampling_scheme s); /* "poisson", "fixed", ... */
const char *dpzo_adjacency_name(dpzo_adjacency a);     /* "add-remove", ... */
/* The adjacency actually accounted (DEFAULT resolved) and the sensitivity in units of C. */
dpzo_adjacency dpzo_claim_adjacency(const dpzo_claim *claim);
double dpzo_claim_sensitivity(const dpzo_claim *claim);

/* ---- Bounds on the epsilon of a claim's mechanism --------------------------------- */

typedef struct {
    double upper;            /* smallest proven upper bound (+inf if none is finite) */
    double lower;            /* largest proven lower bound on the true epsilon (>= 0) */
    const char *upper_from;  /* "rdp", "pld", "prv" or "none" */
    const char *lower_from;  /* "pld", "prv", "test" (the threshold test of docs/audit.md
                                section 3) or "none" */
    double rdp;              /* RDP accountant's certified epsilon (NaN: not computed) */
    double rdp_order;
    double pld_upper, pld_lower, pld_grid; /* NaN: not computed */
    double prv_upper, prv_lower;           /* NaN: not computed */
    int lower_elsewhere;                   /* 1: pld_lower was computed on a realised pair
                                              other than the (dominating) pair of the upper
                                              end: fixed and shuffled batches */
    double upper_slack, lower_slack;       /* how far a finer PLD grid could move the upper
                                              end down / the lower end up: the width of the
                                              PLD interval of the event each end came from
                                              (NaN: refining cannot help) */
} dpzo_audit_bounds;

typedef struct {
    double pld_grid;       /* first PLD grid (default 1e-4) */
    double pld_grid_min;   /* while UNDETERMINED, refine the grid 10x down to this (1e-6) */
    size_t memory_limit;   /* bytes one tight computation may hold (default 1 GiB) */
    int prv;               /* also run PRV (default 1) */
    int calibrate;         /* compute the noise multiplier the claim needed (default 1) */
} dpzo_audit_options;

void dpzo_audit_options_default(dpzo_audit_options *opts);

/* A mechanism other than the Gaussian. `bounds` fills out->upper, lower and whichever of
 * the accountant fields it computed, for the claim's sampling scheme `scheme` (which may
 * differ from claim->sampling: the pipeline check), with `steps` and `delta` in place of
 * the claim's; grid is the PLD grid to use. It must follow the same rule as the built-in
 * Gaussian: upper proven, lower a proven lower bound on the true epsilon. */
typedef struct {
    void *data;
    const char *name;     /* e.g. "lmo" */
    char describe[200];   /* one line describing the noise */
    double pld_grid;      /* its first PLD grid in an audit (0: the options'); refined from
                             there while the claim is undecided */
    dpzo_status (*bounds)(dpzo_ctx *ctx, void *data, const dpzo_claim *claim,
                          dpzo_sampling_scheme scheme, uint64_t steps, double delta,
                          double grid, const dpzo_audit_options *opts,
                          dpzo_audit_bounds *out);
} dpzo_audit_mechanism;

/* Bounds for the claim's mechanism (mech NULL: Gaussian) under sampling `scheme`, with
 * `steps` and `delta` replacing the claim's (the curves of dpzo plot). One PLD grid. */
dpzo_status dpzo_audit_bounds_at(dpzo_ctx *ctx, const dpzo_claim *claim,
                                 const dpzo_audit_mechanism *mech,
                                 dpzo_sampling_scheme scheme, uint64_t steps, double delta,
                                 double grid, const dpzo_audit_options *opts,
                                 dpzo_audit_bounds *out);

/* ---- The audit -------------------------------------------------------------------- */

typedef enum {
    DPZO_VERDICT_HOLDS = 0,
    DPZO_VERDICT_VIOLATED = 1,
    DPZO_VERDICT_UNDETERMINED = 2
} dpzo_verdict;

/* The work a claim's own RDP orders (the stated accountant) may ask of the audit, which
 * evaluates the claim under them: each order alpha counts alpha + DPZO_CLAIM_ORDER_WORK
 * units (the cost model of a profile's curve, dpzo/profile.h) and the orders at most
 * DPZO_CLAIM_MAX_ORDER_WORK. On a 2-core Intel Xeon one order near 1e6 cost 14 s, near
 * 1e5 3 s; 20000 orders near 100, 0.4 s; 1000 orders of fixed batches, 1 s. The published
 * claims of docs/audits ask at most 96645. dpzo_claim_validate refuses more
 * (DPZO_EINVAL), so every reader does, before any work. */
#define DPZO_CLAIM_ORDER_WORK 250.0
#define DPZO_CLAIM_MAX_ORDER_WORK 1000000.0

const char *dpzo_verdict_name(dpzo_verdict v); /* "HOLDS", "VIOLATED", "UNDETERMINED" */
/* The rule: upper <= epsilon: HOLDS; lower > epsilon: VIOLATED; else UNDETERMINED
 * (always UNDETERMINED when lower > upper or either is NaN: such bounds certify nothing). */
dpzo_verdict dpzo_verdict_of(double lower, double upper, double epsilon);

/* Assumption mismatches (bits of dpzo_audit_result.flags). */
enum {
    DPZO_AUDIT_POISSON_FOR_FIXED = 1u << 0, /* fixed or shuffled batches accounted as Poisson */
    DPZO_AUDIT_ORDERS_TOO_SHORT = 1u << 1,  /* the authors' RDP orders cannot certify it */
    DPZO_AUDIT_DELTA_LARGE = 1u << 2,       /* delta >= 1/n */
    DPZO_AUDIT_EFFECTIVE_BATCH = 1u << 3,   /* q counts a per-device batch, not the step's */
    DPZO_AUDIT_ADJACENCY = 1u << 4,         /* add-remove stated for fixed-size batches */
    DPZO_AUDIT_STATED_ACCOUNTANT = 1u << 5, /* the authors' own accountant exceeds the claim */
    DPZO_AUDIT_NO_LOWER = 1u << 6,          /* no lower bound available for this scheme */
    DPZO_AUDIT_INCONSISTENT = 1u << 7       /* the accountants contradicted each other
                                               (lower > upper): both ends withdrawn */
};

/* The name of one mismatch bit ("poisson-for-fixed", ..., "inconsistent": docs/audit.md
 * section 4), NULL for anything that is not exactly one known bit. */
const char *dpzo_audit_flag_name(unsigned flag);

#define DPZO_AUDIT_MAX_NOTES 8

typedef struct {
    dpzo_verdict verdict;
    dpzo_audit_bounds bounds;  /* the mechanism as the claim accounts it */
    char accounted[200];       /* one line: what was accounted, e.g. "14063 steps, Poisson
                                  q=0.00426667, Gaussian sigma 1.1, add-remove" */
    double stated_epsilon;     /* claim under the authors' accountant (NaN: not stated) */
    double stated_order;
    double sigma_needed;       /* the noise multiplier (units of C) the claim needed: the
                                  smallest Gaussian noise multiplier, to 1e-3 relative, whose
                                  proven epsilon with the claim's sampling and steps meets the
                                  claim (the smaller of the two below); NaN when not computed */
    double sigma_needed_tight; /* the same with "proven" = the smaller of the certified RDP
                                  bound and the PRV accountant's upper end (error target 2% of
                                  the claim, within [0.002, 0.05]; fixed batches: the PLD on
                                  grid 1e-3) */
    double sigma_needed_rdp;   /* the same with the certified RDP accountant alone */
    unsigned flags;            /* DPZO_AUDIT_* mismatches */
    size_t n_notes;
    char notes[DPZO_AUDIT_MAX_NOTES][360]; /* one line per mismatch or remark */
    /* When the claim states a pipeline that differs from its accounted sampling: the
     * same claim judged for the pipeline that ran. */
    int has_pipeline;
    dpzo_verdict pipeline_verdict;
    dpzo_audit_bounds pipeline_bounds;
    char pipeline_accounted[200];
} dpzo_audit_result;

/* Audits one claim (mech NULL: the Gaussian of claim->noise_multiplier). opts may be
 * NULL (defaults). A claim that is checked is not an error whatever the verdict. */
dpzo_status dpzo_audit_claim(dpzo_ctx *ctx, const dpzo_claim *claim,
                             const dpzo_audit_mechanism *mech, const dpzo_audit_options *opts,
                             dpzo_audit_result *out);

/* The Gaussian that costs as much as the claim's mechanism over the claim's run (its
 * sampling, steps and delta; the claimed epsilon is ignored): *epsilon is the mechanism's
 * proven upper bound there (one PLD grid), *sigma the smallest Gaussian noise multiplier
 * (units of C) whose proven epsilon for the same run is at most *epsilon, in the sense and to
 * the precision of dpzo_audit_result.sigma_needed_tight. */
dpzo_status dpzo_audit_equal_gaussian(dpzo_ctx *ctx, const dpzo_claim *claim,
                                      const dpzo_audit_mechanism *mech,
                                      const dpzo_audit_options *opts, double *epsilon,
                                      double *sigma);

/* ---- Lower bounds from attacks ----------------------------------------------------- */

/* One-sided Clopper-Pearson bounds for k successes in n trials: with probability at least
 * `level` over the trials, p <= upper (resp. p >= lower). k <= n, n >= 1, 0 < level < 1.
 * Computed with GSL's beta quantiles and widened outward by a relative 1e-9 (GSL's own
 * error, measured in tests/test_audit.c, is far below that). */
dpzo_status dpzo_clopper_pearson_upper(dpzo_ctx *ctx, uint64_t k, uint64_t n, double level,
                                       double *upper);
dpzo_status dpzo_clopper_pearson_lower(dpzo_ctx *ctx, uint64_t k, uint64_t n, double level,
                                       double *lower);

typedef struct {
    uint64_t tp, fp, tn, fn; /* members guessed in / out, non-members guessed in / out */
} dpzo_attack_counts;

typedef struct {
    double epsilon;          /* lower bound on epsilon (0: the outcome proves nothing) */
    double confidence, delta;
    double fpr, fnr;         /* observed false positive / false negative rates */
    double fpr_upper, fnr_upper; /* their Clopper-Pearson upper bounds as used */
    double threshold;        /* scores: the threshold that gave the bound (NaN: counts) */
    size_t thresholds;       /* scores: thresholds tried (the Bonferroni factor) */
    dpzo_attack_counts counts; /* the counts at that threshold */
} dpzo_attack_bound;

/* An (epsilon, delta)-DP mechanism forces FPR + e^eps FNR >= 1 - delta and
 * FNR + e^eps FPR >= 1 - delta for any membership test (Kairouz et al. 2015), so
 *   eps >= max( log((1 - delta - FPR)/FNR), log((1 - delta - FNR)/FPR) ).
 * With the two rates replaced by one-sided Clopper-Pearson upper bounds, each at level
 * 1 - (1 - confidence)/2, the bound holds with probability at least `confidence`. */
dpzo_status dpzo_attack_epsilon_counts(dpzo_ctx *ctx, const dpzo_attack_counts *c,
                                       double delta, double confidence,
                                       dpzo_attack_bound *out);
/* From scores (higher = "member"): members' scores `in`, non-members' `out`. A finite
 * threshold t guesses "member" for score >= t. threshold NaN tries every distinct score
 * and reports the largest bound, each computed at confidence 1 - (1 - confidence)/K for
 * K thresholds (Bonferroni), so the reported bound holds at `confidence`. */
dpzo_status dpzo_attack_epsilon_scores(dpzo_ctx *ctx, const double *in, size_t n_in,
                                       const double *out_scores, size_t n_out,
                                       double threshold, double delta, double confidence,
                                       dpzo_attack_bound *out);

/* One-run auditing (Steinke, Nasr, Jagielski 2023): m canaries, each included with
 * probability 1/2 independently; the auditor guesses r of them (the rest abstain) and v
 * guesses are right. For an (eps, delta)-DP algorithm the p-value of v is at most
 *   P[B >= v] + 2 m delta max_{1<=i<=v} P[v - i <= B < v] / i,  B ~ Binomial(r, e^eps/(1+e^eps)).
 * dpzo_one_run_p_value evaluates it (capped at 1); dpzo_one_run_epsilon returns the
 * largest eps whose p-value is below 1 - confidence (to 1e-9, rounded down): the
 * algorithm is not (eps', delta)-DP for any eps' < that, at the stated confidence. */
dpzo_status dpzo_one_run_p_value(dpzo_ctx *ctx, uint64_t m, uint64_t r, uint64_t v,
                                 double epsilon, double delta, double *p);
dpzo_status dpzo_one_run_epsilon(dpzo_ctx *ctx, uint64_t m, uint64_t r, uint64_t v,
                                 double delta, double confidence, double *epsilon);
/* Guesses from canary scores: the k_pos highest scores are guessed "in", the k_neg lowest
 * "out" (k_pos + k_neg <= n_in + n_out); returns m, r and the number of right guesses v. */
dpzo_status dpzo_one_run_from_scores(dpzo_ctx *ctx, const double *in, size_t n_in,
                                     const double *out_scores, size_t n_out, uint64_t k_pos,
                                     uint64_t k_neg, uint64_t *m, uint64_t *r, uint64_t *v);

#ifdef __cplusplus
}
#endif
#endif
