/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/zo_internal.h: the step object's private side (trainer/zo_step.c), for
 * `dpzo train`'s caller (train_step.c, first_order.c, resume.c) and the tests.
 *
 * `dpzo train` is a loop over the same step object as dpzo.torch (dpzo/zo_step.h); it
 * creates it with DPZO__ZO_TRAINER, which adds what only dpzo's own models need:
 *   - the first-order baselines (dpsgd, sgd): the step object samples, begins, releases
 *     (dpzo__zo_release_vector: one noise draw per coordinate, counted by the ledger) and
 *     ends their steps; first_order.c computes and applies the gradient;
 *   - DP-ZOSO's proximal pull: the step object keeps the stage's anchor (theta at the
 *     stage's first step, taken by dpzo__zo_begin_host) and applies the pull in
 *     dpzo_zo_update before the zeroth-order part (float32 on the host);
 *   - the direction cache: the floats of the step's directions as the evaluation generated
 *     them (dpzo__zo_direction_cache, then dpzo__zo_cache_filled), read by dpzo_zo_update
 *     instead of generating them again (the same bits);
 *   - the tests' noise hook and the last release's values. */
#ifndef DPZO_ZO_INTERNAL_H
#define DPZO_ZO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/trainer.h"
#include "dpzo/zo_step.h"
#include "train_internal.h"

#define DPZO__ZO_TRAINER 1u
/* The largest direction cache: 64 MiB. */
#define DPZO__UCACHE_MAX_BYTES ((size_t)64 << 20)

/* The training loss's accumulators (the mean since the last metrics line): the step object
 * adds each step's examples; the trainer reads, resets and checkpoints them. */
typedef struct {
    double sum;
    uint64_t count;
} dpzo__loss_acc;

/* Tests only: replaces the privacy object's CSPRNG draws by hook(user, step, out, n), so
 * that private runs can be compared bit for bit. */
typedef void (*dpzo__noise_hook)(void *user, uint64_t step, double *out, size_t n);

dpzo_status dpzo__zo_create(dpzo_ctx *ctx, const dpzo_train_config *cfg, uint64_t dim,
                            uint64_t n, unsigned flags, dpzo_zo **out);
/* dpzo_zo_begin, then (stagewise, DPZO__ZO_TRAINER) the stage's anchor from theta at a
 * stage's first step. */
dpzo_status dpzo__zo_begin_host(dpzo_ctx *ctx, dpzo_zo *zo, const float *theta);
/* The begun step's cache slot for direction k (dim floats), NULL when there is none; the
 * caller writes the direction's floats there while evaluating and then says so. */
float *dpzo__zo_direction_cache(dpzo_zo *zo, unsigned k);
void dpzo__zo_cache_filled(dpzo_zo *zo);
/* dpsgd / sgd: the begun step's release of a gradient sum (n values): private runs draw n
 * noise values into noisy and add sum (noisy[j] = sum[j] + z_j); sgd releases nothing. */
dpzo_status dpzo__zo_release_vector(dpzo_ctx *ctx, dpzo_zo *zo, const double *sum,
                                    double *noisy, size_t n);
dpzo__loss_acc *dpzo__zo_loss(dpzo_zo *zo);
void dpzo__zo_set_noise_hook(dpzo_zo *zo, dpzo__noise_hook hook, void *user);
dpzo_privacy *dpzo__zo_privacy(const dpzo_zo *zo);
const dpzo__sampler *dpzo__zo_sampler(const dpzo_zo *zo);
/* The state a checkpoint keeps besides theta: the anchor (stagewise, DPZO__ZO_TRAINER) and
 * the mask (dpzopo), dim floats each, NULL when not kept; and the restoration on resume of
 * the steps done with them (either may be NULL when not kept; nothing changes on error;
 * check_only: only the checks, nothing changes). */
void dpzo__zo_state(const dpzo_zo *zo, const float **anchor, const float **mask);
dpzo_status dpzo__zo_restore(dpzo_ctx *ctx, dpzo_zo *zo, uint64_t steps, const float *anchor,
                             const float *mask, int check_only);
/* The last step's releases: the clipped sums each took and the values it gave (R values:
 * Q, or PAZO-S's k candidates then the noisy one), and the noise draws so far. */
const double *dpzo__zo_last_clean(const dpzo_zo *zo);
const double *dpzo__zo_last_noisy(const dpzo_zo *zo);
/* DP-ZOPO: the current mask's selected count. */
size_t dpzo__zo_mask_count(const dpzo_zo *zo);
/* Tests only: the step object's own copy of the configuration, to change a setting mid-run
 * (the trainer's copy, tr->cfg, is not read by the step). */
dpzo_train_config *dpzo__zo_config_mut(dpzo_zo *zo);
/* Tests only: whether the direction cache exists, and its removal (the update then
 * generates the directions itself). */
int dpzo__zo_has_cache(const dpzo_zo *zo);
void dpzo__zo_drop_cache(dpzo_zo *zo);

#endif
