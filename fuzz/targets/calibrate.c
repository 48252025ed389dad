/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target calibrate: dpzo_calibrate_noise / _steps / _sampling_rate and their tight
 * (PLD) variants, every parameter from the whole range. The PLD variants run the PLD many
 * times; its work grows with 1/grid (dpzo/pld.h), so they get grid 1e-3 and a 64 MiB
 * memory limit (the RDP variants get nothing but the fuzzer's values).
 * Checks: status OK or an error with a message; when OK, the calibrated value is finite
 * and in its range (sigma 0 only where the sampling bound 1 - (1 - q)^steps <= delta makes
 * noise unnecessary), the certified epsilon is not NaN, >= 0 and meets the target; for the
 * RDP noise calibration, the RDP accountant recomputes a proven epsilon at that sigma that
 * meets the target; the calibrated setting is not below what one step alone spends. */
#include "../fuzz_util.h"
#include "dpzo/calibrate.h"
#include "dpzo/convert.h"
#include "dpzo/event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in);
    double eps = fz_double(&in), delta = fz_double(&in), q = fz_double(&in);
    double sigma = fz_double(&in), tol = fz_double(&in);
    uint64_t steps = fz_count(&in);
    FZ_LOG("  mode %u eps %.17g delta %.17g q %.17g sigma %.17g tol %.17g steps %llu\n", mode,
           eps, delta, q, sigma, tol, (unsigned long long)steps);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_pld_options po;
    dpzo_pld_options_default(&po);
    po.grid = 1e-3;
    po.memory_limit = (size_t)64 << 20;
    /* and orders up to 1e4 for the PLD's tilt and RDP comparison: the RDP sums run over
     * every integer below the order, and a PLD calibration asks for them at dozens of
     * sigmas (q 3.6e-306, delta 1.7e-310, 50 steps took 37 s at the default 1e5, found by
     * the seed-1 run of this stop; the library's cost there is a known open item) */
    dpzo_rdp_options ro = dpzo_rdp_options_default();
    ro.alpha_max = 1e4;
    po.rdp = &ro;
    if (mode & 8)
        po.method = DPZO_PLD_PRV;
    int tight = (mode & 4) != 0;
    dpzo_calibration c;
    dpzo_status st;
    const char *what;
    switch (mode & 3) {
    case 0:
    case 3:
        what = tight ? "dpzo_calibrate_noise_pld" : "dpzo_calibrate_noise";
        st = tight ? dpzo_calibrate_noise_pld(ctx, eps, delta, q, steps, tol, &po, &c)
                   : dpzo_calibrate_noise(ctx, eps, delta, q, steps, tol, NULL, &c);
        if (fz_ok(ctx, st, what)) {
            /* sigma 0 only when no noise is needed: no step uses a record at all except with
             * probability 1 - (1 - q)^steps <= delta (the sampling bound, issue 28; q = 0
             * or no steps among them); the library decides that rounded upward, so the
             * double estimate here gets a relative slack of 1e-9 */
            double p_used = steps == 0 || q == 0.0 ? 0.0 : q >= 1.0 ? 1.0
                            : -expm1((double)steps * log1p(-q));
            if (!((c.value > 0.0 || (c.value == 0.0 && p_used <= delta * (1.0 + 1e-9)))
                  && isfinite(c.value)))
                fz_fail("%s: sigma %.17g (a record is used with probability %.17g, delta "
                        "%.17g)", what, c.value, p_used, delta);
            sigma = c.value;
        }
        break;
    case 1:
        what = tight ? "dpzo_calibrate_steps_pld" : "dpzo_calibrate_steps";
        st = tight ? dpzo_calibrate_steps_pld(ctx, eps, delta, q, sigma, &po, &c)
                   : dpzo_calibrate_steps(ctx, eps, delta, q, sigma, NULL, &c);
        if (fz_ok(ctx, st, what)) {
            if (!(c.value >= 1.0 && c.value <= 0x1p64 && c.value == floor(c.value)))
                fz_fail("%s: steps %.17g", what, c.value);
            steps = (uint64_t)fmin(c.value, 0x1p63);
        }
        break;
    default:
        what = tight ? "dpzo_calibrate_sampling_rate_pld" : "dpzo_calibrate_sampling_rate";
        st = tight ? dpzo_calibrate_sampling_rate_pld(ctx, eps, delta, sigma, steps, tol, &po, &c)
                   : dpzo_calibrate_sampling_rate(ctx, eps, delta, sigma, steps, tol, NULL, &c);
        if (fz_ok(ctx, st, what)) {
            if (!(c.value > 0.0 && c.value <= 1.0))
                fz_fail("%s: sampling rate %.17g", what, c.value);
            q = c.value;
        }
        break;
    }
    if (st == DPZO_OK) {
        fz_check_upper(what, c.epsilon, c.epsilon_lower);
        if (!(c.epsilon <= eps)) /* the library's own test (meets): no slack */
            fz_fail("%s: certified epsilon %.17g above the target %.17g", what, c.epsilon, eps);
        if (steps > 0) /* 0 steps spend nothing: any noise meets any target */
            fz_check_not_below_one_step(what, q, sigma, eps, delta);
        if ((mode & 3) == 0 && !tight && (mode & 16)) {
            dpzo_event *ev = dpzo_event_self_composed(
                ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma)), steps);
            dpzo_dp_result r;
            if (ev == NULL)
                fz_fail("%s: the calibrated sigma %.17g makes no event: %s", what, sigma,
                        dpzo_ctx_errmsg(ctx));
            if (fz_ok(ctx, dpzo_event_epsilon(ctx, ev, delta, NULL, &r), "dpzo_event_epsilon") &&
                !fz_le(r.epsilon, eps, 1e-9, 0.0))
                fz_fail("%s: sigma %.17g recomputes to epsilon %.17g above the target %.17g",
                        what, sigma, r.epsilon, eps);
            dpzo_event_free(ev);
        }
    }
    dpzo_ctx_free(ctx);
    return 0;
}
