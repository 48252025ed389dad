/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target rdp_poisson: the RDP accountant's epsilon and delta of T steps of the
 * Poisson-sampled Gaussian (dpzo_event_epsilon / dpzo_event_delta, certified path), every
 * parameter a double or count from the whole range.
 * Checks: status OK or an error with a message; when OK, the proven epsilon is not NaN and
 * >= 0, the proven delta is in [0, 1]; the claimed (epsilon, delta) is not below what one
 * step alone spends (fz_check_not_below_one_step); doubling sigma never raises epsilon. */
#include "../fuzz_util.h"
#include "dpzo/convert.h"
#include "dpzo/event.h"

static dpzo_event *run_event(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    return dpzo_event_self_composed(ctx, dpzo_event_poisson_sampled(ctx, q,
                                                                    dpzo_event_gaussian(ctx, sigma)),
                                    steps);
}

static int epsilon_of(dpzo_ctx *ctx, double q, double sigma, uint64_t steps, double delta,
                      dpzo_dp_result *r)
{
    dpzo_event *ev = run_event(ctx, q, sigma, steps);
    if (ev == NULL) {
        if (dpzo_ctx_errmsg(ctx)[0] == '\0')
            fz_fail("rdp_poisson: event refused without a message");
        return 0;
    }
    dpzo_status st = dpzo_event_epsilon(ctx, ev, delta, NULL, r);
    dpzo_event_free(ev);
    return fz_ok(ctx, st, "dpzo_event_epsilon");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    double q = fz_double(&in), sigma = fz_double(&in), target = fz_double(&in);
    uint64_t steps = fz_count(&in);
    uint8_t mode = fz_u8(&in);
    FZ_LOG("  q %.17g sigma %.17g target %.17g steps %llu mode %u\n", q, sigma, target,
           (unsigned long long)steps, mode);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_dp_result r;
    if (mode & 1) {
        /* delta query at epsilon = target */
        dpzo_event *ev = run_event(ctx, q, sigma, steps);
        if (ev != NULL) {
            dpzo_status st = dpzo_event_delta(ctx, ev, target, NULL, &r);
            if (fz_ok(ctx, st, "dpzo_event_delta")) {
                if (!(r.delta >= 0.0 && r.delta <= 1.0))
                    fz_fail("rdp_poisson: proven delta %.17g outside [0, 1]", r.delta);
                if (steps > 0 && r.delta < 1.0)
                    fz_check_not_below_one_step("rdp_poisson delta", q, sigma, target,
                                                r.delta);
            }
            dpzo_event_free(ev);
        } else if (dpzo_ctx_errmsg(ctx)[0] == '\0') {
            fz_fail("rdp_poisson: event refused without a message");
        }
    } else if (epsilon_of(ctx, q, sigma, steps, target, &r)) {
        fz_check_upper("rdp_poisson epsilon", r.epsilon, NAN);
        if (steps > 0)
            fz_check_not_below_one_step("rdp_poisson", q, sigma, r.epsilon, target);
        /* monotonicity: twice the noise never costs more */
        dpzo_dp_result r2;
        if ((mode & 2) && isfinite(2.0 * sigma) && epsilon_of(ctx, q, 2.0 * sigma, steps, target, &r2)) {
            if (!fz_le(r2.epsilon, r.epsilon, 1e-6, 1e-12))
                fz_fail("rdp_poisson: epsilon %.17g at sigma %.17g rises to %.17g at 2 sigma "
                        "(q %.17g, T %llu, delta %.17g)",
                        r.epsilon, sigma, r2.epsilon, q, (unsigned long long)steps, target);
        }
    }
    dpzo_ctx_free(ctx);
    return 0;
}
