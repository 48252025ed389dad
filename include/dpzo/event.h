/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/event.h: privacy events as a small algebra (a tagged tree).
 *
 * Leaves are mechanisms (Gaussian, Laplace); inner nodes are amplification by
 * sampling (Poisson, or a fixed batch drawn without replacement), repetition
 * (self-composition) and heterogeneous composition. Any accountant consumes the
 * same tree. Constructors that take child events take ownership of them, also
 * when they fail (then the children are freed), so constructors can be nested:
 *
 *   dpzo_event *e = dpzo_event_self_composed(ctx,
 *       dpzo_event_poisson_sampled(ctx, 256.0 / 60000, dpzo_event_gaussian(ctx, 1.1)),
 *       14063);
 *
 * A NULL child makes the parent fail with the child's message kept in ctx.
 *
 * Conventions. Gaussian(sigma): noise multiplier sigma, i.e. sum query with
 * L2 sensitivity 1 and noise N(0, sigma^2). Laplace(b): L1 sensitivity 1, noise
 * scale b (pure DP with epsilon = 1/b). Poisson sampling uses add/remove-one
 * adjacency; sampling without replacement uses replace-one adjacency with the
 * inner mechanism's sensitivity taken for that relation (as in
 * Wang-Balle-Kasiviswanathan 2019 and Google's dp_accounting). */
#ifndef DPZO_EVENT_H
#define DPZO_EVENT_H

#include <stdint.h>
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DPZO_EVENT_GAUSSIAN,
    DPZO_EVENT_LAPLACE,
    DPZO_EVENT_POISSON_SAMPLED,
    DPZO_EVENT_WOR_SAMPLED,
    DPZO_EVENT_SELF_COMPOSED,
    DPZO_EVENT_COMPOSED,
    DPZO_EVENT_NON_PRIVATE,
    DPZO_EVENT_ZCDP,
    DPZO_EVENT_RANDOMIZED_RESPONSE,
    DPZO_EVENT_DISCRETE_LAPLACE,
    DPZO_EVENT_TREE_AGGREGATION,
    DPZO_EVENT_REPEAT_AND_SELECT,
    DPZO_EVENT_WR_SAMPLED,
    DPZO_EVENT_MIXTURE_OF_GAUSSIANS,
    DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN
} dpzo_event_kind;

typedef struct dpzo_event dpzo_event;

dpzo_event *dpzo_event_gaussian(dpzo_ctx *ctx, double noise_multiplier);
dpzo_event *dpzo_event_laplace(dpzo_ctx *ctx, double scale);
/* A release without any privacy guarantee: epsilon is +inf at every delta < 1 in every
 * accountant (dp_accounting's NonPrivateDpEvent). */
dpzo_event *dpzo_event_non_private(dpzo_ctx *ctx);
/* A mechanism satisfying (xi, rho)-zCDP: RDP(alpha) <= xi + rho alpha at every alpha > 1
 * (Bun-Steinke 2016; rho, xi finite and >= 0). The PLD/PRV accountants answer with the RDP
 * accountant's bound for events holding one (no privacy loss distribution is known). */
dpzo_event *dpzo_event_zcdp(dpzo_ctx *ctx, double rho, double xi);
/* Randomized response over k >= 1 buckets with noise parameter p in [0, 1]: with
 * probability p a uniformly random bucket, else the true one (dp_accounting's
 * RandomizedResponseDpEvent), replace-one adjacency (the true bucket changes). p = 0 has no
 * noise (epsilon +inf), p = 1 or k = 1 releases nothing. */
dpzo_event *dpzo_event_randomized_response(dpzo_ctx *ctx, double p, uint64_t k);
/* The discrete Laplace mechanism: integer noise with P(x) proportional to
 * exp(-t |x|) (t = noise parameter, finite and >= 0; t = 0 is treated as no noise, as
 * dp_accounting does) on an integer query of L1 sensitivity s (s = 0 releases nothing).
 * Pure DP with epsilon t s. */
dpzo_event *dpzo_event_discrete_laplace(dpzo_ctx *ctx, double t, uint64_t sensitivity);
/* One epoch of DP-FTRL's tree aggregation (Kairouz et al. 2021, appendix D;
 * dp_accounting's SingleEpochTreeAggregationDpEvent): n >= 1 trees, restarted between,
 * tree i over step_counts[i] steps, every node of every tree released with Gaussian noise
 * of `noise_multiplier` times the per-node sensitivity, and every record in at most one
 * step of all the trees. A record then changes at most one node per level of its tree, so
 * the release is a Gaussian mechanism of squared L2 sensitivity
 * depth = max_i ceil(log2(step_counts[i] + 1)) (0 for trees of 0 steps: nothing released):
 * RDP(alpha) = alpha depth / (2 sigma^2), and the PLD/PRV accountants use the Gaussian of
 * noise multiplier sigma / sqrt(depth) (rounded down). Not allowed under a sampler.
 * Fails (DPZO_EINVAL) for n = 0 or sigma < 0 or not finite; sigma = 0 with depth > 0 is
 * epsilon +inf. The step counts are the caller's (copied from). */
dpzo_event *dpzo_event_tree_aggregation(dpzo_ctx *ctx, double noise_multiplier,
                                        const uint64_t *step_counts, size_t n);
/* DP-FTRL's tree aggregation without restarts over several participations (Kairouz et al.
 * 2021, arXiv 2103.00039 v3, appendix D.2, Theorem D.3; TF Privacy's
 * compute_rdp_single_tree): one forest over `total_steps` = T steps (a complete binary tree
 * per binary digit of T, largest first), every node (the sum of the steps under it)
 * released with Gaussian noise of `noise_multiplier` times a step's sensitivity, and every
 * record in at most `max_participations` = E steps, any two with at least `min_separation`
 * = xi steps between them. The release is the Gaussian mechanism of squared L2 sensitivity
 * zeta* = the largest sum over the forest's nodes of (the record's steps under the node)^2
 * over such patterns (dpzo_tree_sensitivity_squared), attained: RDP(alpha) =
 * alpha zeta* / (2 sigma^2); PLD/PRV use the Gaussian of noise sigma / sqrt(zeta*) (rounded
 * down). The event is a DPZO_EVENT_TREE_AGGREGATION (one tree) that keeps E and xi. Not
 * allowed under a sampler. Fails (DPZO_EINVAL) for sigma < 0 or not finite, and as
 * dpzo_tree_sensitivity_squared does. */
dpzo_event *dpzo_event_tree_aggregation_multi_epoch(dpzo_ctx *ctx, double noise_multiplier,
                                                    uint64_t total_steps,
                                                    uint64_t max_participations,
                                                    uint64_t min_separation);
/* zeta* above, exactly (an integer), by the paper's dynamic program over the forest's
 * blocks, and a pattern attaining it: `steps` (room for steps_cap entries, at least
 * min(E, the most that fit, 2^20), or NULL with steps_cap 0) receives its *n_steps step indices
 * (0-based, increasing); the program's maximum is checked against the pattern's own sum.
 * zeta* = 0 for T = 0 or E = 0; one participation gives the bit length of T. The program
 * keeps, per tree level, (E + 1)(xi + 1) rows of a few steps each: DPZO_EUNSUPPORTED beyond
 * 2^24 rows, 2^25 steps or about 2^36 updates, or where E^2 (levels) reaches 2^29 (docs/accountant.md 3.6: T 2000, E 6, xi 313
 * in under 1 ms; T 10^6, E 100, xi 9999 in 0.9 s). */
dpzo_status dpzo_tree_sensitivity_squared(dpzo_ctx *ctx, uint64_t total_steps,
                                          uint64_t max_participations,
                                          uint64_t min_separation, uint64_t *zeta,
                                          uint64_t *steps, size_t steps_cap, size_t *n_steps);
/* Private selection (Papernot-Steinke 2022, "Hyperparameter Tuning with Renyi Differential
 * Privacy"; dp_accounting's RepeatAndSelectDpEvent): `inner` is run K times, K random with
 * E[K] = mean, and only the best run is released. shape = +inf: K ~ Poisson(mean);
 * -1 < shape < +inf: K truncated negative binomial with eta = shape (1: geometric, 0:
 * logarithmic). RDP from the paper's Theorems 2 and 6 (docs/accountant.md 3.7): it needs the
 * inner event's RDP at other orders, so `inner` may be any event the RDP accountant
 * analyses; the PLD/PRV accountants answer with the RDP bound. Not allowed under a sampler.
 * Fails (DPZO_EINVAL) for mean < 1 or not finite, shape <= -1 or NaN. */
dpzo_event *dpzo_event_repeat_and_select(dpzo_ctx *ctx, dpzo_event *inner, double mean,
                                         double shape);
/* A sample of `sample_size` records drawn uniformly with replacement from `n` (n >= 1,
 * 0 <= sample_size <= 2^53), then `inner` (dp_accounting's SampledWithReplacementDpEvent):
 * replace-one adjacency, `inner` a Gaussian subtree (as for the other samplers) whose noise
 * multiplier is relative to the replace-one sensitivity of one copy of a record, a record
 * drawn k times moving the query by at most k. RDP from docs/accountant.md 3.7 (joint
 * convexity over the copies of the record, and m steps of a batch of one); the PLD/PRV
 * accountants answer with the RDP bound. */
dpzo_event *dpzo_event_wr_sampled(dpzo_ctx *ctx, uint64_t n, uint64_t sample_size,
                                  dpzo_event *inner);
/* The mixture-of-Gaussians mechanism (Choquette-Choo, Ganesh, Steinke, Thakurta 2023,
 * "Privacy amplification for matrix mechanisms"; dp_accounting's MixtureOfGaussiansDpEvent):
 * N(0, sigma^2) on one neighbour, sum_i p_i N(c_i, sigma^2) on the other, both directions
 * (add/remove-one adjacency). n in [1, DPZO_MOG_MAX_COMPONENTS]; every c_i finite and
 * >= 0, every p_i in [0, 1], and sum p_i within 1e-9 of 1 (the mixture uses p_i / sum p);
 * components of p_i = 0 are dropped. sigma = 0 is epsilon +inf (unless every c_i of
 * p_i > 0 is 0: nothing released). RDP: both Renyi divergences by a certified quadrature
 * (docs/accountant.md 3.8); the PLD/PRV accountants compose its privacy loss distribution
 * (both directions). Not allowed under a sampler. The arrays are the caller's (copied from). */
#define DPZO_MOG_MAX_COMPONENTS 1024
dpzo_event *dpzo_event_mixture_of_gaussians(dpzo_ctx *ctx, double standard_deviation,
                                            const double *sensitivities,
                                            const double *sampling_probs, size_t n);
/* The Gaussian mechanism (noise multiplier sigma, L2 sensitivity 1) on a Poisson sample
 * (rate q) of a dataset of n records truncated to at most B records by keeping a uniformly
 * random B-subset (dp_accounting's TruncatedSubsampledGaussianDpEvent, arXiv 2508.15089),
 * add/remove-one adjacency. Fails (DPZO_EINVAL) for q outside [0, 1] or sigma < 0 or not
 * finite; q = 0, B = 0 or n = 0 release nothing, sigma = 0 is epsilon +inf. RDP: a proven
 * mixture bound over the truncation event (docs/accountant.md 3.8); the PLD/PRV accountants
 * compose a dominating pair (the upper end) and a concrete instance (the lower end). Not
 * allowed under a sampler. */
dpzo_event *dpzo_event_truncated_subsampled_gaussian(dpzo_ctx *ctx, uint64_t dataset_size,
                                                  double sampling_probability,
                                                  uint64_t truncated_batch_size,
                                                  double noise_multiplier);
/* Each record is included independently with probability q (0 <= q <= 1). */
dpzo_event *dpzo_event_poisson_sampled(dpzo_ctx *ctx, double q, dpzo_event *inner);
/* A batch of `batch` records drawn without replacement from `n` (1 <= batch <= n). */
dpzo_event *dpzo_event_wor_sampled(dpzo_ctx *ctx, uint64_t batch, uint64_t n,
                                   dpzo_event *inner);
/* `count` >= 0 repetitions of `inner` (count 0 is the no-op event). */
dpzo_event *dpzo_event_self_composed(dpzo_ctx *ctx, dpzo_event *inner, uint64_t count);
/* Composition of n >= 0 events; takes ownership of every entry of `events`
 * (the array itself stays the caller's). */
dpzo_event *dpzo_event_composed(dpzo_ctx *ctx, dpzo_event **events, size_t n);

/* Events written as JSON (docs/accountant.md, section 7): one object per event,
 * {"type": NAME, FIELD: VALUE, ...} with NAME a dp_accounting class name without "DpEvent"
 * ("Gaussian", "Laplace", "NoOp", "NonPrivate", "ZCDp", "RandomizedResponse",
 * "DiscreteLaplace", "SingleEpochTreeAggregation", "PoissonSampled",
 * "SampledWithoutReplacement", "SelfComposed", "Composed"; the whole class name, e.g.
 * "GaussianDpEvent", is accepted too) and FIELD that class's field names, e.g.
 *   {"type": "SelfComposed", "count": 1000,
 *    "event": {"type": "PoissonSampled", "sampling_probability": 0.01,
 *              "event": {"type": "Gaussian", "noise_multiplier": 1.1}}}
 * Strict: an unknown or repeated key, a value of the wrong type or a missing field is
 * DPZO_EPARSE, a number out of its range (NaN, negative, a probability above 1, a count that
 * is not a whole number in [0, 2^53]) DPZO_EINVAL, as are nesting deeper than
 * DPZO_EVENT_JSON_MAX_DEPTH, more than DPZO_EVENT_JSON_MAX_NODES events and array entries,
 * and "Unsupported" (dp_accounting's UnsupportedDpEvent). A kind dpzo knows by name but does
 * not account is DPZO_EUNSUPPORTED. Each message names the JSON path, "event.event.count".
 * The text follows docs/files.md's JSON rules (dpzo_json_parse: no NUL, nothing after the
 * value, integers exactly doubles). *out is the new event (NULL on failure). */
#define DPZO_EVENT_JSON_MAX_DEPTH 64
#define DPZO_EVENT_JSON_MAX_NODES (1 << 20)
dpzo_status dpzo_event_parse_json(dpzo_ctx *ctx, const char *text, dpzo_event **out);
/* The same, returning the event (NULL on failure, message in ctx). */
dpzo_event *dpzo_event_from_json(dpzo_ctx *ctx, const char *text);
/* A file holding one event (a regular file of at most 64 MiB); messages start with
 * "event file PATH: ". */
dpzo_status dpzo_event_read_json_file(dpzo_ctx *ctx, const char *path, dpzo_event **out);

void dpzo_event_free(dpzo_event *event);

/* Inspection (for printing and for other accountants). */
dpzo_event_kind dpzo_event_get_kind(const dpzo_event *event);
/* A one-line description, e.g. "poisson(q=0.01, gaussian(sigma=1))"; truncated to size. */
void dpzo_event_describe(const dpzo_event *event, char *buf, size_t size);

/* Training length: `epochs` passes over the data as a number of steps, rounded up so that
 * never fewer steps are accounted than run. Poisson sampling at rate q (n = 0): an epoch is
 * 1/q steps, steps = ceil(epochs / q). Batches of `batch` of `n` (n > 0, q ignored):
 * steps = ceil(epochs n / batch). Both ceilings are exact (of the doubles given). Fails
 * (DPZO_EINVAL) for epochs < 0 or not finite, q outside (0, 1], batch outside [1, n], or
 * more than 2^53 steps. The CLI's --epochs, claim files' "epochs" and Python's epochs=
 * all use it. */
dpzo_status dpzo_steps_from_epochs(dpzo_ctx *ctx, double epochs, double q, uint64_t batch,
                                   uint64_t n, uint64_t *steps);

/* One phase of a heterogeneous training schedule: `steps` Poisson-sampled
 * Gaussian steps at rate q with noise multiplier sigma. */
typedef struct {
    double noise_multiplier;
    double sampling_rate;
    uint64_t steps;
} dpzo_phase;

/* The event of a whole schedule: composed(self_composed(poisson(q_i, gaussian(s_i)), T_i)). */
dpzo_event *dpzo_event_from_schedule(dpzo_ctx *ctx, const dpzo_phase *phases, size_t n);

#ifdef __cplusplus
}
#endif
#endif
