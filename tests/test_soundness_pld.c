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
#include "dpzo/audit.h"

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


/* No noise (sigma 0 or -0): epsilon is +inf; sampled at q < 1 only the trivial lower end
 * is proven (delta(eps) >= q, so for delta >= q epsilon is finite). Was a memory refusal. */
static void test_zero_noise(void **state)
{
    dpzo_ctx *ctx = *state;
    const double zeros[2] = {0.0, -0.0};
    for (int m = 0; m < 2; m++)
        for (int z = 0; z < 2; z++) {
            dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
            dpzo_pld_result r;
            dpzo_event *e = dpzo_event_gaussian(ctx, zeros[z]);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && isinf(r.epsilon_lower));
            dpzo_event_free(e);
            e = poisson(ctx, 0.004, zeros[z], 3);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && r.epsilon_lower == 0.0);
            assert_ok(ctx, dpzo_pld_delta(ctx, e, 1.0, &o, &r));
            assert_true(r.delta_upper == 1.0 && r.delta_lower <= 0.004);
            dpzo_event_free(e);
            e = dpzo_event_wor_sampled(ctx, 256, 60000, dpzo_event_gaussian(ctx, zeros[z]));
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && r.epsilon_lower == 0.0);
            dpzo_event_free(e);
        }
}

/* Huge noise: the losses vanish; epsilon 0 is right (delta(0) = TV distance ~ 1e-311);
 * sigma 1e308 overflowed sigma^2 and the grid index arithmetic (UBSan) before. */
static void test_huge_noise(void **state)
{
    dpzo_ctx *ctx = *state;
    const double sig[3] = {1e18, 1e154, 1e308};
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 3; i++) {
            dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
            dpzo_pld_result r;
            dpzo_event *e = poisson(ctx, 0.004, sig[i], 1000);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(r.epsilon_lower <= r.epsilon_upper && r.epsilon_upper >= 0.0
                        && r.epsilon_upper < 1e-3);
            dpzo_event_free(e);
            e = dpzo_event_wor_sampled(ctx, 256, 60000, dpzo_event_gaussian(ctx, sig[i]));
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(r.epsilon_lower <= r.epsilon_upper && r.epsilon_upper < 1e-3);
            dpzo_event_free(e);
        }
}

/* A mechanism whose accountants contradict each other (lower 709.78 > upper 0, what the
 * without-replacement RDP bug produced): the audit must not call the claim HOLDS nor
 * print an interval with lower > upper. */
static dpzo_status broken_bounds(dpzo_ctx *ctx, void *data, const dpzo_claim *claim,
                                 dpzo_sampling_scheme scheme, uint64_t steps, double delta,
                                 double grid, const dpzo_audit_options *o, dpzo_audit_bounds *out)
{
    (void)ctx, (void)data, (void)claim, (void)scheme, (void)steps, (void)delta, (void)grid, (void)o;
    out->upper = 0.0;
    out->upper_from = "rdp";
    out->lower = 709.78037;
    out->lower_from = "pld";
    return DPZO_OK;
}

static void test_audit_inconsistent(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_int_equal(dpzo_verdict_of(709.78, 0.0, 1.0), DPZO_VERDICT_UNDETERMINED);
    assert_int_equal(dpzo_verdict_of(NAN, 0.5, 1.0), DPZO_VERDICT_UNDETERMINED);
    assert_int_equal(dpzo_verdict_of(0.0, 0.5, 1.0), DPZO_VERDICT_HOLDS);
    dpzo_claim c;
    dpzo_claim_init(&c);
    c.noise_multiplier = 1e-4;
    c.sampling = DPZO_SAMPLING_FIXED;
    c.batch_size = 256;
    c.dataset_size = 60000;
    c.steps = 1;
    c.epsilon = 1.0;
    c.delta = 1e-5;
    dpzo_audit_mechanism mech;
    memset(&mech, 0, sizeof mech);
    mech.name = "broken";
    mech.bounds = broken_bounds;
    dpzo_audit_options o;
    dpzo_audit_options_default(&o);
    o.calibrate = 0;
    dpzo_audit_result r;
    assert_ok(ctx, dpzo_audit_claim(ctx, &c, &mech, &o, &r));
    assert_int_equal(r.verdict, DPZO_VERDICT_UNDETERMINED);
    assert_true(r.flags & DPZO_AUDIT_INCONSISTENT);
    assert_true(r.bounds.lower <= r.bounds.upper);
    assert_true(r.bounds.lower == 0.0 && isinf(r.bounds.upper));
    dpzo_audit_bounds b;
    assert_ok(ctx, dpzo_audit_bounds_at(ctx, &c, &mech, c.sampling, 1, 1e-5, 1e-4, &o, &b));
    assert_true(b.lower <= b.upper);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_noise_poisson),
        cmocka_unit_test(test_tiny_noise_wor),
        cmocka_unit_test(test_tiny_noise_delta),
        cmocka_unit_test(test_zero_noise),
        cmocka_unit_test(test_huge_noise),
        cmocka_unit_test(test_audit_inconsistent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
