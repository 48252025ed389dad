/* dpzo/trainer.h: differentially private zeroth-order training (DPZero and baselines),
 * the privacy object that ties a run to its noise profile, and checkpoints.
 *
 * The privacy object (dpzo_privacy) is the ONLY place where a run's noise is drawn and its
 * privacy is counted: it reads and verifies a noise profile (checksum and guarantee), checks
 * that the run's plan is covered by the profile's accounting context, clips per-example
 * query values the way the accounting assumes, draws the noise from the operating system's
 * CSPRNG (never from a seed), and reports the epsilon spent after t steps (a proven upper
 * bound, cheap to query).
 *
 * Several queries per step. A step with Q queries releases, for the batch, the sum over
 * examples of each example's Q-vector of clipped values plus one noise draw per query:
 *   gaussian profile: the per-example Q-vector is clipped in L2 norm to C and each query gets
 *                     N(0, (sigma C)^2): the step is exactly the Gaussian release the profile
 *                     accounts (an L2-sensitivity-C vector query), whatever Q is;
 *   lmo profile:      Q = 1 with clip "scalar" (the value clipped to [-C, C]); Q > 1 needs a
 *                     profile with clip "l1": the Q-vector is clipped in L1 norm to C and each
 *                     query gets its own LMO draw at sensitivity C (docs/lmo.md, 5).
 * So a profile accounted for T releases covers a run of T steps for any Q. */
#ifndef DPZO_TRAINER_H
#define DPZO_TRAINER_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/model.h"
#include "dpzo/profile.h"
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the privacy object ---------------------------------------------------------- */

typedef enum {
    DPZO_BATCH_POISSON = 0, /* each example joins a step with probability q = B / n */
    DPZO_BATCH_SHUFFLE = 1  /* fixed batches of B from a shuffle (without replacement) */
} dpzo_batching;

typedef struct {
    dpzo_batching batching;
    double batch_size;   /* B: expected (Poisson) or exact (shuffle) batch size */
    uint64_t n;          /* the private dataset's size */
    uint64_t steps;      /* T: steps the run plans */
    unsigned queries;    /* Q >= 1 noised scalars per step (1 for DP-SGD: one vector) */
    double clip;         /* C the run clips to: must equal the profile's sensitivity (for
                            shuffled batches, the profile's replace-one sensitivity is 2C) */
    int vector;          /* 1: DP-SGD (one Gaussian vector release per step, any length) */
} dpzo_privacy_plan;

typedef struct dpzo_privacy dpzo_privacy;

/* Reads and verifies `profile_path` (a profile that fails dpzo_profile_verify, or whose
 * accountant is "paper", is refused) and checks the plan against it: same noise use
 * (clip, queries), sampling scheme and rate (Poisson q = B/n must equal the profile's rate;
 * shuffled batches need a "wor" profile with batch B and dataset n), the same C, and
 * T <= the profile's steps. A plan that would spend more than the profile's budget is
 * refused with DPZO_EINFEASIBLE and a message saying by how much. */
dpzo_status dpzo_privacy_open(dpzo_ctx *ctx, const char *profile_path,
                              const dpzo_privacy_plan *plan, dpzo_privacy **out);
void dpzo_privacy_free(dpzo_privacy *p);
const dpzo_profile *dpzo_privacy_profile(const dpzo_privacy *p);
/* The budget: the profile's epsilon at its delta, for all of its steps. */
double dpzo_privacy_budget(const dpzo_privacy *p);
double dpzo_privacy_delta(const dpzo_privacy *p);
/* A proven upper bound on the epsilon (at the profile's delta) spent by the first t steps;
 * nondecreasing in t, 0 at t = 0, at most the budget for t <= the profile's steps, +inf
 * beyond. O(1) after dpzo_privacy_open (a table computed there). */
double dpzo_privacy_epsilon_after(const dpzo_privacy *p, uint64_t t);
/* Clips one example's n values in place to the run's C (n = Q for ZO queries, the gradient
 * length for DP-SGD; L2 for gaussian, L1 for lmo; a scalar to [-C, C]). Returns the factor
 * applied (1 when not clipped). float version for gradients. */
double dpzo_privacy_clip(const dpzo_privacy *p, double *values, size_t n);
double dpzo_privacy_clip_float(const dpzo_privacy *p, float *values, size_t n);
/* n noise draws for n coordinates, already scaled (sigma C or C X), from the CSPRNG.
 * Fails only when the CSPRNG fails. */
dpzo_status dpzo_privacy_noise(dpzo_ctx *ctx, dpzo_privacy *p, double *out, size_t n);


#ifdef __cplusplus
}
#endif
#endif
