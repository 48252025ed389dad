/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/zo_step.h: the zeroth-order step with the model outside it (docs/plugin.md).
 *
 * `dpzo train` evaluates dpzo's own models; a user of PyTorch (dpzo.torch) or of any other
 * framework evaluates theirs. The step object holds everything else of a run, the same code
 * and semantics as `dpzo train` (docs/trainer.md section 2, docs/algorithms.md): the plan
 * and its noise profile (verified, the plan checked before the first step), the batch
 * sampler (Poisson, or fixed batches with a without-replacement profile; the sampling seed
 * from getrandom), the step's Q directions keyed by (seed, t, k), the learning rate and
 * the stage of step t, the release (per-example clipping, noise from the CSPRNG, one
 * draw per query) and the ledger (a proven upper bound after every step), and the update.
 *
 * A step t, the caller's model evaluating per-example losses:
 *
 *   dpzo_zo_begin(ctx, zo)                     refuses a step past the plan (the budget);
 *                                              sets up the directions u_0 .. u_{Q-1}
 *   for k < Q: losses at theta + lambda u_k and theta - lambda u_k (dpzo_dir_perturb /
 *              dpzo_cuda_dir_perturb write the perturbed weights out of place, so theta
 *              is never written and nothing drifts)
 *   dpzo_zo_clip_sum(zo, lp, lm, b, qsum)      per-example differences, clipped, summed
 *   dpzo_zo_release(ctx, zo, qsum, released)   + noise (private), counted
 *        or dpzo_zo_adopt(ctx, zo, released)   (data parallel: the ranks that did not draw
 *                                              take the drawing rank's released values)
 *   dpzo_zo_update(zo, j0, n, dt, theta)       for each tensor: theta -= (lr/Q) sum g_k u_k,
 *                                              one pass (dpzo_zo_update_cuda on a GPU)
 *   dpzo_zo_end(ctx, zo)                       the step is done; the ledger moves on
 *
 * Algorithms: dpzero, mezo (non-private), dpzoso (stages: lambda_s, lr_s; prox 0),
 * pazo-m (the caller computes the public gradient g_pub at theta, on its public batch, and
 * applies it with dpzo_zo_update_public before dpzo_zo_update: theta -= lr alpha g_pub,
 * then the ZO part with (1 - alpha)), pazo-p (after dpzo_zo_begin the caller hands the k
 * public gradients to dpzo_zo_set_public; the directions are then G c_q, and the step goes
 * on as above) and pazo-s (dpzo_zo_set_public, then the candidates' losses: for each
 * pending candidate j < dpzo_zo_candidates() the per-example losses at
 * theta - lr_t g_j (dpzo_zo_candidate, coefficient -lr_t), dpzo_zo_clip_sum_candidates,
 * dpzo_zo_release; a second part with the noisy candidate when configured; then
 * dpzo_zo_update applies the step chosen). pazo-p and pazo-s keep the public gradients
 * in host memory (CPU tensors); dpzopo (DP-ZOSO's stages with a data-free pruning mask:
 * at the first step of a stage that needs a new mask, dpzo_zo_score_queries() > 0: the
 * caller evaluates its linearised network (every weight |theta_j|, an all-ones input,
 * the outputs summed) at |theta| +- beta v_p for each score query p and hands the sums
 * and theta to dpzo_zo_set_score; the directions are then masked; the mask is in host
 * memory). dpsgd and sgd are refused with DPZO_EUNSUPPORTED and a message. */
#ifndef DPZO_ZO_STEP_H
#define DPZO_ZO_STEP_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/status.h"
#include "dpzo/trainer.h"
#include "dpzo/zo_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpzo_zo dpzo_zo;

/* Parses the step's configuration: the keys of `dpzo train`'s configuration that describe
 * the step (algorithm, profile, steps, batch_size, batching, lr, lr_schedule, lambda,
 * direction, radius, queries, clip, seed, stages), with its checks and messages. The keys
 * of dpzo's own models and files (model, data, eval_every, metrics, checkpoint,
 * checkpoint_every, pretrain) are refused: the caller owns those. */
dpzo_status dpzo_zo_config_parse(dpzo_ctx *ctx, const char *json, const char *base_dir,
                                 dpzo_train_config *out);

/* A run of cfg over `dim` tuned parameters (all tensors, in the caller's global order) and
 * a private data set of n rows (mezo: any n >= 1, the sampler's population). Private
 * algorithms open the profile (verified) and check the plan against it: a plan beyond the
 * profile is refused with DPZO_EINFEASIBLE. Draws the sampling seed from getrandom. */
dpzo_status dpzo_zo_create(dpzo_ctx *ctx, const dpzo_train_config *cfg, uint64_t dim,
                           uint64_t n, dpzo_zo **out);
/* dpzo_zo_config_parse then dpzo_zo_create: for bindings, which then need no struct. */
dpzo_status dpzo_zo_open(dpzo_ctx *ctx, const char *json, const char *base_dir, uint64_t dim,
                         uint64_t n, dpzo_zo **out);
void dpzo_zo_free(dpzo_zo *zo);

/* The batch of step t: its row indices (ascending for Poisson) into idx (capacity: n for
 * Poisson, B for fixed batches); returns the count. A pure function of (sampling seed, t). */
size_t dpzo_zo_batch(dpzo_zo *zo, uint64_t t, size_t *idx);
/* The largest batch dpzo_zo_batch can return (n for Poisson, B for fixed batches). */
size_t dpzo_zo_batch_capacity(const dpzo_zo *zo);
/* The sampling seed (secret: it determines the batches; state_dict keeps it beside theta)
 * and its replacement on resume or from the drawing rank. A seed anyone else knows makes
 * the batches public, which voids the amplification by subsampling the ledger counts on:
 * only ever set a seed this run drew (getrandom at dpzo_zo_create). */
uint64_t dpzo_zo_sampling_seed(const dpzo_zo *zo);
dpzo_status dpzo_zo_set_sampling_seed(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t seed);

/* Starts step t = dpzo_zo_steps_done(zo). DPZO_EINFEASIBLE (nothing changes) when t is the
 * plan's T: a further step would exceed the plan and, for private runs, the profile's
 * budget (the message gives the epsilon spent and the budget). DPZO_EINVAL when a step is
 * already begun and not ended. */
dpzo_status dpzo_zo_begin(dpzo_ctx *ctx, dpzo_zo *zo);
unsigned dpzo_zo_queries(const dpzo_zo *zo);
/* The begun step's perturbation lambda_t and learning rate (stage values for dpzoso). */
double dpzo_zo_lambda(const dpzo_zo *zo);
double dpzo_zo_lr(const dpzo_zo *zo);
/* The learning rate of step t (the schedule, or DP-ZOSO's / DP-ZOPO's stage rate), the
 * value dpzo_zo_lr gives once step t is begun; NaN for t >= the plan's steps. */
double dpzo_zo_lr_at(const dpzo_zo *zo, uint64_t t);
/* Direction k < Q of the begun step (NULL otherwise): for dpzo_dir_perturb and its CUDA
 * twin (a plain direction: no mult, no vec, usable on both). */
const dpzo_dir *dpzo_zo_direction(const dpzo_zo *zo, unsigned k);

/* pazo-p, pazo-s, after dpzo_zo_begin: the step's k = public.k public gradients at theta
 * (row j: the mean-loss gradient of the caller's public batch j, over the global index), a
 * k x dim float array that must stay valid and unchanged until dpzo_zo_end. pazo-p
 * replaces it IN PLACE by its basis (docs/algorithms.md 5: Gram-Schmidt twice, or
 * normalisation; dpzo_zo_basis() columns kept) and sets the directions G c_q; pazo-s
 * sets up its k candidates theta - lr_t g_j. */
dpzo_status dpzo_zo_set_public(dpzo_ctx *ctx, dpzo_zo *zo, float *G, unsigned k);
unsigned dpzo_zo_basis(const dpzo_zo *zo);
/* pazo-s: the candidates pending (k in the first part, 1 in the second, else 0), candidate
 * j as an explicit direction (evaluate at theta - lr_t u: dpzo_dir_perturb with alpha
 * -dpzo_zo_lr()), and after the release the one taken (k: the noisy one; -1 before). */
unsigned dpzo_zo_candidates(const dpzo_zo *zo);
const dpzo_dir *dpzo_zo_candidate(const dpzo_zo *zo, unsigned j);
int dpzo_zo_choice(const dpzo_zo *zo);
/* pazo-s: loss is b rows of m = dpzo_zo_candidates() per-example losses; each row (a
 * non-finite loss counted as 1e150) clipped in L2 to the part's share of C
 * (dpzo_privacy_clip_part: k / (k + 1) and 1 / (k + 1), or all of C without the noisy
 * candidate), summed into qsum (m). */
dpzo_status dpzo_zo_clip_sum_candidates(dpzo_ctx *ctx, dpzo_zo *zo, const double *loss,
                                        size_t b, double *qsum);
/* The number of values the pending release takes and gives: Q, or pazo-s's part. */
unsigned dpzo_zo_release_size(const dpzo_zo *zo);

/* dpzopo: the score's queries pending in the begun step (prune.queries at the first step
 * of a stage that needs a new mask, else 0), the direction v_p of query p (Gaussian,
 * keyed by (seed ^ a constant, stage - 1, p)) and beta = prune.lambda: the caller
 * evaluates its linearised network at |theta| + beta v_p and |theta| - beta v_p (out of
 * place: dpzo_dir_perturb of |theta| with alpha +-beta). */
unsigned dpzo_zo_score_queries(const dpzo_zo *zo);
const dpzo_dir *dpzo_zo_score_direction(const dpzo_zo *zo, unsigned p);
double dpzo_zo_score_lambda(const dpzo_zo *zo);
/* The score's sums lp[p], lm[p] (p < prune.queries) and theta (dim floats: the current
 * parameters in the global order, as float): the score, the stage's mask (docs/algorithms.md
 * 3) and the masked directions of the begun step. */
dpzo_status dpzo_zo_set_score(dpzo_ctx *ctx, dpzo_zo *zo, const double *lp, const double *lm,
                              const float *theta);
/* dpzopo: the current stage's mask (dim multipliers; NULL before the first) for a
 * checkpoint, and its restoration on resume (after dpzo_zo_set_steps_done, before the next
 * step; finite, >= 0, not all zero). */
const float *dpzo_zo_mask(const dpzo_zo *zo);
dpzo_status dpzo_zo_set_mask(dpzo_ctx *ctx, dpzo_zo *zo, const float *mask);

/* The batch's part of the release: lp and lm are b rows of Q losses (row i, query k: the
 * loss of example i at theta + lambda u_k and theta - lambda u_k). d_ik = (lp - lm) /
 * (2 lambda); private runs zero a row with a non-finite entry and clip each row as the
 * profile says (dpzo_privacy_clip); qsum[k] = sum over i, in order. Also adds the mean of
 * lp and lm at query 0 to the step's loss. b = 0 gives zeros. */
dpzo_status dpzo_zo_clip_sum(dpzo_ctx *ctx, dpzo_zo *zo, const double *lp, const double *lm,
                             size_t b, double *qsum);
/* The release: qsum is the whole batch's clipped sums (summed over ranks when data
 * parallel); private runs add one noise draw per query from the CSPRNG (counted).
 * released (Q, may be NULL) receives qsum + noise: what other ranks adopt. */
dpzo_status dpzo_zo_release(dpzo_ctx *ctx, dpzo_zo *zo, const double *qsum, double *released);
/* Takes the released values of the rank that drew the noise (data parallel), for the
 * same step (the pending part for pazo-s). The ledger's epsilon holds only when these
 * are another step object's dpzo_zo_release output for this step: values without that
 * rank's CSPRNG noise are not private, and the library cannot tell. */
dpzo_status dpzo_zo_adopt(dpzo_ctx *ctx, dpzo_zo *zo, const double *released);
/* The released value of query k divided by B: g_k (NaN before the release). */
double dpzo_zo_gradient(const dpzo_zo *zo, unsigned k);

/* The update of the begun, released step on elements [j0, j0 + n) of the global parameter
 * vector, stored as dt at theta: theta_j -= (lr_t / Q) g_k u_kj for k = 0 .. Q-1 in one pass
 * (dpzo_dir_update; for DPZO_F32 the bits of `dpzo train`'s update). DPZO_EINVAL before
 * the release or past dim. */
dpzo_status dpzo_zo_update(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                           dpzo_dtype dt, void *theta);
/* The same on the device (theta_dev a device pointer), queued on stream (a cudaStream_t,
 * NULL: the legacy default stream). */
dpzo_status dpzo_zo_update_cuda(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                dpzo_dtype dt, void *theta_dev, void *stream);
/* pazo-m: theta_j -= lr_t alpha grad_j on elements [j0, j0 + n) (grad: n floats of this
 * tensor's public gradient, element i for global index j0 + i), one pass, as `dpzo train`
 * does before the ZO part: theta = T((float)((double)theta - lr alpha (double)grad)).
 * DPZO_EINVAL for other algorithms or before the release. The CUDA version reads grad_dev
 * and theta_dev on the device, queued on stream. */
dpzo_status dpzo_zo_update_public(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                  dpzo_dtype dt, void *theta, const float *grad);
dpzo_status dpzo_zo_update_public_cuda(dpzo_ctx *ctx, const dpzo_zo *zo, uint64_t j0, size_t n,
                                       dpzo_dtype dt, void *theta_dev, const float *grad_dev,
                                       void *stream);
/* Ends the begun, released step: steps_done + 1. */
dpzo_status dpzo_zo_end(dpzo_ctx *ctx, dpzo_zo *zo);

/* Abandons the begun step (the caller's evaluation failed): before the release nothing was
 * released and nothing is counted, the step can be begun again; after the release the
 * step is counted (its noise was drawn and the release made: the ledger never forgets it)
 * and the object moves on, whatever the update did. No-op when no step is begun. */
void dpzo_zo_abort(dpzo_zo *zo);
/* Steps done; on resume (before any step of this object) the saved count: the ledger
 * continues from there (DPZO_EINVAL past the plan or after a step began). */
uint64_t dpzo_zo_steps_done(const dpzo_zo *zo);
dpzo_status dpzo_zo_set_steps_done(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t steps);
/* A proven upper bound on the epsilon spent by the steps done (at dpzo_zo_delta); +inf
 * for non-private runs. The profile's budget and delta (NaN when non-private). */
double dpzo_zo_epsilon(const dpzo_zo *zo);
double dpzo_zo_budget(const dpzo_zo *zo);
double dpzo_zo_delta(const dpzo_zo *zo);
/* Noise values drawn by this object (a count, for tests: Q per released step). */
uint64_t dpzo_zo_noise_draws(const dpzo_zo *zo);
/* The mean training loss of the steps since the last call ((lp + lm) / 2 at query 0), and
 * resets it; NaN when there were none. */
double dpzo_zo_take_loss(dpzo_zo *zo);
/* The configuration (with the sphere radius resolved) and the profile (NULL: non-private). */
const dpzo_train_config *dpzo_zo_config(const dpzo_zo *zo);
const dpzo_profile *dpzo_zo_profile(const dpzo_zo *zo);

#ifdef __cplusplus
}
#endif
#endif
