/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target lmo_pld: dpzo_lmo_pld_epsilon_limit, the LMO parameters and options from the
 * whole range; the loss grid, whose inverse sets the work (dpzo/lmo.h, docs/lmo.md), is kept
 * in [1e-3, 0.1], and the memory limit is 64 MiB, as in the other PLD targets
 * (pld_common.h). dpzo_lmo_pld_epsilon's default limit, 2 GiB, equals libFuzzer's
 * -rss_limit_mb: many steps drive a run to a composition of 2^25 points, within that limit
 * (1.6 GiB) but not with AddressSanitizer's shadow and quarantine (up to 256 MB of earlier
 * inputs' freed memory) on top, and for minutes (an out-of-memory report in CI). The two
 * "-oom" inputs in fuzz/regressions/lmo_pld peaked at 1.7 GB in 54 s and 1.8 GB in 3 min
 * alone that way; they are refused at once now.
 * Checks: status OK or an error with a message; when OK, the proven upper epsilon is not
 * NaN, >= 0 and >= the lower end; the lower end never exceeds the RDP accountant's proven
 * bound for the same run (dpzo_lmo_epsilon), since one of the two would then be false. */
#include "lmo_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in);
    dpzo_lmo l;
    fz_lmo(&in, &l);
    dpzo_lmo_account_options o = fz_lmo_options(&in);
    double grid = fz_double(&in);
    if (!(grid >= 1e-3 && grid <= 0.1))
        grid = 1e-3;
    FZ_LOG("  lmo wG %.17g k %.17g theta %.17g wE %.17g lam %.17g wU %.17g a %.17g b %.17g\n"
           "  bound %d sampling %d l1 %d C %.17g q %.17g B %llu n %llu T %llu delta %.17g "
           "max_order %u\n",
           l.gamma_weight, l.gamma_shape, l.gamma_scale, l.exp_weight, l.exp_rate,
           l.uniform_weight, l.uniform_low, l.uniform_high, (int)o.bound, (int)o.sampling,
           o.vector_l1, o.sensitivity, o.q, (unsigned long long)o.batch,
           (unsigned long long)o.n, (unsigned long long)o.steps, o.delta, o.max_order);
    FZ_LOG("  grid %.17g\n", grid);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_pld_result r;
    if (fz_ok(ctx, dpzo_lmo_pld_epsilon_limit(ctx, &l, &o, grid, (size_t)64 << 20, &r),
              "dpzo_lmo_pld_epsilon_limit")) {
        fz_check_upper("dpzo_lmo_pld_epsilon_limit", r.epsilon_upper, r.epsilon_lower);
        dpzo_lmo_account_result rr;
        if ((mode & 1) && r.epsilon_lower > 0.0 &&
            fz_ok(ctx, dpzo_lmo_epsilon(ctx, &l, &o, &rr), "dpzo_lmo_epsilon") &&
            !fz_le(r.epsilon_lower, rr.epsilon, 1e-9, 1e-12))
            fz_fail("dpzo_lmo_pld_epsilon_limit: lower end %.17g above the RDP accountant's proven "
                    "%.17g",
                    r.epsilon_lower, rr.epsilon);
    }
    dpzo_ctx_free(ctx);
    return 0;
}
