/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/calibrate.h: find the noise multiplier, number of steps or sampling rate that
 * meets a target (epsilon, delta) for Poisson-sampled Gaussian training.
 *
 * Method: monotone bracketing then bisection on the fast epsilon, followed by a
 * certified check. The returned parameter provably meets the target (its certified
 * epsilon <= target), and the parameter one tolerance step on the other side does
 * not meet it by the fast estimate, so the answer is tight to `tolerance`:
 *  - noise multiplier: smallest sigma, relative tolerance (default 1e-6);
 *  - steps: largest integer T (exact);
 *  - sampling rate: largest q, relative tolerance (default 1e-6). */
#ifndef DPZO_CALIBRATE_H
#define DPZO_CALIBRATE_H

#include <stdint.h>
#include "dpzo/convert.h"
#include "dpzo/pld.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double value;      /* the calibrated parameter (sigma, steps or q) */
    double epsilon;    /* certified epsilon upper bound at value (<= target) */
    double order;      /* order achieving it */
    double other_side; /* the parameter one tolerance step beyond: fails the target; NAN
                          when no value fails: every sigma down to the search's end
                          (1e-300; sigma 0 when q = 0 or steps = 0, no privacy spent) or
                          every count up to 2^52 or the rate 1 meets it */
    double epsilon_other_side; /* its epsilon (> target): the fast estimate, or the
                                  certified bound where certification stepped past it;
                                  NAN with other_side */
    int evaluations;   /* accountant evaluations spent */
    double epsilon_lower; /* tight accountants: the proven lower end at value (RDP: NaN) */
} dpzo_calibration;

/* tolerance <= 0 selects the default. opts may be NULL. */
dpzo_status dpzo_calibrate_noise(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                 uint64_t steps, double tolerance,
                                 const dpzo_rdp_options *opts, dpzo_calibration *out);
dpzo_status dpzo_calibrate_steps(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                 double sigma, const dpzo_rdp_options *opts,
                                 dpzo_calibration *out);
dpzo_status dpzo_calibrate_sampling_rate(dpzo_ctx *ctx, double epsilon, double delta,
                                         double sigma, uint64_t steps, double tolerance,
                                         const dpzo_rdp_options *opts,
                                         dpzo_calibration *out);

/* The noise multiplier for `steps` batches of `batch` records drawn without replacement
 * from `n` each step (1 <= batch <= n; replace-one adjacency, the event
 * dpzo_event_wor_sampled). This is a proof for batches drawn afresh each step, not for the
 * batches of one shuffled pass (docs/audit.md 3). */
dpzo_status dpzo_calibrate_noise_wor(dpzo_ctx *ctx, double epsilon, double delta, uint64_t batch,
                                     uint64_t n, uint64_t steps, double tolerance,
                                     const dpzo_rdp_options *opts, dpzo_calibration *out);

/* The same with a tight accountant (dpzo/pld.h; opts NULL: PLD defaults). Bisection runs
 * on the accountant's proven upper end, so the result meets the target provably; the
 * default tolerance is 1e-4 (relative) because each evaluation composes distributions. */
dpzo_status dpzo_calibrate_noise_pld(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                     uint64_t steps, double tolerance,
                                     const dpzo_pld_options *opts, dpzo_calibration *out);
dpzo_status dpzo_calibrate_noise_wor_pld(dpzo_ctx *ctx, double epsilon, double delta,
                                         uint64_t batch, uint64_t n, uint64_t steps,
                                         double tolerance, const dpzo_pld_options *opts,
                                         dpzo_calibration *out);
dpzo_status dpzo_calibrate_steps_pld(dpzo_ctx *ctx, double epsilon, double delta, double q,
                                     double sigma, const dpzo_pld_options *opts,
                                     dpzo_calibration *out);
dpzo_status dpzo_calibrate_sampling_rate_pld(dpzo_ctx *ctx, double epsilon, double delta,
                                             double sigma, uint64_t steps, double tolerance,
                                             const dpzo_pld_options *opts,
                                             dpzo_calibration *out);

#ifdef __cplusplus
}
#endif
#endif
