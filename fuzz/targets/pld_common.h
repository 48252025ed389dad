/* SPDX-License-Identifier: Apache-2.0 */
/* The PLD and PRV targets (fuzz/targets/pld.c, prv.c): dpzo_pld_epsilon and dpzo_pld_delta
 * of T steps of the Gaussian, Poisson-sampled, sampled without replacement or unsampled,
 * every parameter from the whole range. The work grows with 1/grid and with the memory
 * the options allow (dpzo/pld.h): the target passes a memory limit of 64 MiB so that
 * every input runs in bounded time and memory; the grid itself is the fuzzer's.
 * Checks: status OK or an error with a message; when OK, the proven upper epsilon is not
 * NaN, >= 0 and >= the lower end; delta in [0, 1] with lower <= upper; the claimed pair
 * is not below what one step alone spends; the lower end never exceeds the RDP
 * accountant's proven upper bound on the same event (one of the two would be false). */
#include "../fuzz_util.h"
#include "dpzo/convert.h"
#include "dpzo/event.h"
#include "dpzo/pld.h"

static int fz_pld_one(const uint8_t *data, size_t size, dpzo_pld_method method, const char *what)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in);
    double sigma = fz_double(&in), q = fz_double(&in), target = fz_double(&in);
    uint64_t steps = fz_count(&in), b = fz_count(&in), n = fz_count(&in);
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = method;
    if (mode & 4)
        o.grid = fz_double(&in);
    if (mode & 8)
        o.eps_error = fz_double(&in);
    if (mode & 16)
        o.delta_error = fz_double(&in);
    o.memory_limit = (size_t)64 << 20;
    FZ_LOG("  mode %u sigma %.17g q %.17g target %.17g steps %llu B %llu n %llu grid %.17g "
           "eps_error %.17g delta_error %.17g\n",
           mode, sigma, q, target, (unsigned long long)steps, (unsigned long long)b,
           (unsigned long long)n, o.grid, o.eps_error, o.delta_error);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_event *inner = dpzo_event_gaussian(ctx, sigma);
    double q_pair = 1.0; /* the rate of fz_check_not_below_one_step's pair */
    switch ((mode >> 5) & 3) {
    case 0:
        inner = dpzo_event_poisson_sampled(ctx, q, inner);
        q_pair = q;
        break;
    case 1:
        inner = dpzo_event_wor_sampled(ctx, b, n, inner);
        q_pair = n > 0 ? (double)b / (double)n : NAN;
        break;
    default:
        break;
    }
    dpzo_event *ev = dpzo_event_self_composed(ctx, inner, steps);
    if (ev == NULL) {
        if (dpzo_ctx_errmsg(ctx)[0] == '\0')
            fz_fail("%s: event refused without a message", what);
        dpzo_ctx_free(ctx);
        return 0;
    }
    dpzo_pld_result r;
    if (mode & 1) {
        if (fz_ok(ctx, dpzo_pld_delta(ctx, ev, target, &o, &r), "dpzo_pld_delta")) {
            if (!(r.delta_upper >= 0.0 && r.delta_upper <= 1.0 && r.delta == r.delta_upper))
                fz_fail("%s: proven delta %.17g (delta %.17g) outside [0, 1]", what,
                        r.delta_upper, r.delta);
            if (!(r.delta_lower <= r.delta_upper) && !isnan(r.delta_lower))
                fz_fail("%s: delta lower end %.17g above the upper end %.17g", what,
                        r.delta_lower, r.delta_upper);
            if (steps > 0 && r.delta_upper < 1.0)
                fz_check_not_below_one_step(what, q_pair, sigma, target, r.delta_upper);
        }
    } else if (fz_ok(ctx, dpzo_pld_epsilon(ctx, ev, target, &o, &r), "dpzo_pld_epsilon")) {
        fz_check_upper(what, r.epsilon_upper, r.epsilon_lower);
        if (r.epsilon != r.epsilon_upper)
            fz_fail("%s: epsilon %.17g differs from its upper end %.17g", what, r.epsilon,
                    r.epsilon_upper);
        if (steps > 0)
            fz_check_not_below_one_step(what, q_pair, sigma, r.epsilon_upper, target);
        dpzo_dp_result rr;
        if ((mode & 2) && r.epsilon_lower > 0.0 &&
            fz_ok(ctx, dpzo_event_epsilon(ctx, ev, target, NULL, &rr), "dpzo_event_epsilon") &&
            !fz_le(r.epsilon_lower, rr.epsilon, 1e-9, 1e-12))
            fz_fail("%s: lower end %.17g above the RDP accountant's proven %.17g (sigma %.17g, "
                    "T %llu, delta %.17g)",
                    what, r.epsilon_lower, rr.epsilon, sigma, (unsigned long long)steps, target);
    }
    dpzo_event_free(ev);
    dpzo_ctx_free(ctx);
    return 0;
}
