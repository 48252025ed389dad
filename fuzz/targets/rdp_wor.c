/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target rdp_wor: the RDP accountant's epsilon of T steps of the Gaussian on batches
 * of B of n drawn without replacement (replace-one), every parameter from the whole range,
 * and dpzo_rdp_wor_gaussian at one order.
 * Checks: status OK or an error with a message; when OK, the proven epsilon is not NaN and
 * >= 0 and not below what one step alone spends at q = B/n (fz_check_not_below_one_step);
 * the RDP upper end is not NaN, >= 0 and >= its lower end; doubling sigma never raises
 * epsilon. */
#include "../fuzz_util.h"
#include "dpzo/convert.h"
#include "dpzo/event.h"
#include "dpzo/rdp.h"

static int epsilon_of(dpzo_ctx *ctx, uint64_t b, uint64_t n, double sigma, uint64_t steps,
                      double delta, dpzo_dp_result *r)
{
    dpzo_event *ev = dpzo_event_self_composed(
        ctx, dpzo_event_wor_sampled(ctx, b, n, dpzo_event_gaussian(ctx, sigma)), steps);
    if (ev == NULL) {
        if (dpzo_ctx_errmsg(ctx)[0] == '\0')
            fz_fail("rdp_wor: event refused without a message");
        return 0;
    }
    dpzo_status st = dpzo_event_epsilon(ctx, ev, delta, NULL, r);
    dpzo_event_free(ev);
    return fz_ok(ctx, st, "dpzo_event_epsilon (wor)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint64_t b = fz_count(&in), n = fz_count(&in), steps = fz_count(&in);
    double sigma = fz_double(&in), delta = fz_double(&in), alpha = fz_double(&in);
    uint8_t mode = fz_u8(&in);
    FZ_LOG("  B %llu n %llu steps %llu sigma %.17g delta %.17g alpha %.17g mode %u\n",
           (unsigned long long)b, (unsigned long long)n, (unsigned long long)steps, sigma, delta,
           alpha, mode);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    if (mode & 1) {
        dpzo_bound rb;
        if (fz_ok(ctx, dpzo_rdp_wor_gaussian(ctx, b, n, sigma, alpha, &rb),
                  "dpzo_rdp_wor_gaussian"))
            fz_check_upper("dpzo_rdp_wor_gaussian", rb.upper, rb.lower);
    } else {
        dpzo_dp_result r, r2;
        if (epsilon_of(ctx, b, n, sigma, steps, delta, &r)) {
            fz_check_upper("rdp_wor epsilon", r.epsilon, NAN);
            if (steps > 0 && n > 0)
                fz_check_not_below_one_step("rdp_wor", (double)b / (double)n, sigma, r.epsilon,
                                            delta);
            if ((mode & 2) && isfinite(2.0 * sigma) &&
                epsilon_of(ctx, b, n, 2.0 * sigma, steps, delta, &r2) &&
                !fz_le(r2.epsilon, r.epsilon, 1e-6, 1e-12))
                fz_fail("rdp_wor: epsilon %.17g at sigma %.17g rises to %.17g at 2 sigma "
                        "(B %llu, n %llu, T %llu, delta %.17g)",
                        r.epsilon, sigma, r2.epsilon, (unsigned long long)b,
                        (unsigned long long)n, (unsigned long long)steps, delta);
        }
    }
    dpzo_ctx_free(ctx);
    return 0;
}
