/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_soundness_pld_work.c (issue 15): the PLD accountant answers at tiny delta with
 * bounded work, and a step whose loss is beyond the grid's index range claims nothing
 * (the RDP bound stands) instead of failing.
 *  - Tiny delta (1e-100 .. 1e-300, sigma 1.1, q 0.0042667, 1000 steps): the answer is
 *    resolved in at most twice the planned FFT length (the remove direction composed once;
 *    work counted by the engine's counter of FFT points, not timed). Before: the add direction's window
 *    was cut below its answer, the retries doubled the shared tilt, composed the remove
 *    direction again at up to 2^23 points far above its answer, and fell back to RDP.
 *    The interval is checked against the RDP accountant (upper end at most its certified
 *    epsilon) and against one step's closed form (the upper end's delta1 <= delta).
 *  - delta 1e-320: the steps' truncated tails alone exceed delta; the RDP bound is
 *    returned without composing anything.
 *  - Gaussian sigma 1e-8 (loss ~5e15, beyond 2^52 grid steps): the RDP bound, with a
 *    reason naming the noise scale (before: "no finite mass", EINVAL), and the audit's
 *    Gaussian of equal epsilon for an LMO noise of gamma shape 1e18 (dpzo plot noise)
 *    exists (before: the same EINVAL, exit 2). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/pld_delta1.h"
#include "dpzo/audit.h"
#include "dpzo/audit_claim.h"
#include "dpzo/lmo.h"
#include "pld_internal.h"

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

static dpzo_event *poisson(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    dpzo_event *s = q < 1.0 ? dpzo_event_poisson_sampled(ctx, q, g) : g;
    return steps == 1 ? s : dpzo_event_self_composed(ctx, s, steps);
}

/* Unsampled: delta(eps) = Phibar((x - 1)/s) - e^eps Phibar(x/s) <= Phibar((x - 1)/s), the
 * form that stays finite where e^eps overflows even a long double (eps ~ 5e15). */
static long double gauss_delta_ub(long double eps, long double s)
{
    long double x = s * s * eps + 0.5L;
    return 0.5L * erfcl((x - 1.0L) / s * (long double)M_SQRT1_2);
}

static const double Q = 0.004266666666666667, SIGMA = 1.1;

static void test_tiny_delta_one_composition(void **state)
{
    dpzo_ctx *ctx = *state;
    const double deltas[3] = {1e-100, 1e-200, 1e-300};
    double prev_lower = 0.0;
    dpzo_event *e = poisson(ctx, Q, SIGMA, 1000);
    for (int i = 0; i < 3; i++) {
        dpzo_pld_options o;
        dpzo_pld_options_default(&o);
        o.grid = 1e-3;
        size_t bytes = 0, fft = 0;
        assert_ok(ctx, dpzo_pld_plan(ctx, e, deltas[i], 0, &o, &bytes, &fft));
        unsigned long long before = dpzo__pld_fft_points;
        dpzo_pld_result r;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, deltas[i], &o, &r));
        unsigned long long work = dpzo__pld_fft_points - before;
        /* resolved by the PLD itself in at most twice the planned FFT length (the remove
         * direction once; the add direction, smaller, again with its window reaching its
         * support's top) */
        print_message("delta %g: %llu FFT points composed, plan %zu\n", deltas[i], work, fft);
        if (r.fallback)
            fail_msg("delta %g: fell back (%s)", deltas[i], r.reason);
        if (!(work <= 2ull * fft))
            fail_msg("delta %g: %llu FFT points composed, planned %zu a direction", deltas[i],
                     work, fft);
        dpzo_dp_result rr;
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, deltas[i], NULL, &rr));
        assert_true(r.epsilon_lower <= r.epsilon_upper);
        assert_true(r.epsilon_upper <= rr.epsilon);
        /* a proven epsilon cannot be below one step's */
        assert_true(delta1(r.epsilon_upper, SIGMA, Q) <= (long double)deltas[i]);
        /* epsilon grows as delta shrinks */
        assert_true(r.epsilon_upper >= prev_lower);
        prev_lower = r.epsilon_lower;
    }
    dpzo_event_free(e);
}

static void test_delta_below_truncation(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = poisson(ctx, Q, SIGMA, 1000);
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.grid = 1e-3;
    unsigned long long before = dpzo__pld_fft_points;
    dpzo_pld_result r;
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-320, &o, &r));
    assert_true(dpzo__pld_fft_points == before); /* nothing composed */
    assert_true(r.fallback);
    assert_non_null(strstr(r.reason, "+infinity"));
    dpzo_rdp_options ro = dpzo_rdp_options_default();
    dpzo_dp_result rr;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-320, &ro, &rr));
    assert_true(r.epsilon == rr.epsilon && r.epsilon_upper == rr.epsilon);
    assert_true(r.epsilon_lower == 0.0);
    assert_true(delta1(r.epsilon, SIGMA, Q) <= 1e-320L);
    dpzo_event_free(e);
}

static void test_loss_beyond_grid(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o;
        dpzo_pld_options_default(&o);
        o.method = m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS;
        if (m)
            o.eps_error = 0.05;
        else
            o.grid = 0.0164641;
        dpzo_event *g = dpzo_event_gaussian(ctx, 1e-8);
        dpzo_pld_result r;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, g, 1e-5, &o, &r));
        assert_true(r.fallback);
        assert_non_null(strstr(r.reason, "noise scale 1e-08"));
        dpzo_dp_result rr;
        assert_ok(ctx, dpzo_event_epsilon(ctx, g, 1e-5, NULL, &rr));
        assert_true(r.epsilon_upper == rr.epsilon && r.epsilon_lower == 0.0);
        /* the Gaussian's own delta at that epsilon (mu = 1e8): at most 1e-5 */
        assert_true(gauss_delta_ub(r.epsilon_upper, 1e-8L) <= 1e-5L);
        dpzo_event_free(g);
    }
}

static void test_lmo_extreme_equal_gaussian(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_lmo lmo = {0.5, 1e18, 1.0, 0.3, 1.0, 0.2, 0.1, 1.0};
    dpzo_audit_mechanism mech;
    assert_ok(ctx, dpzo_lmo_audit_mechanism(ctx, &lmo, &mech));
    dpzo_claim c;
    dpzo_claim_init(&c);
    c.sampling = DPZO_SAMPLING_FULL;
    c.steps = 1;
    c.delta = 1e-5;
    double eps = 0.0, sigma = 0.0;
    assert_ok(ctx, dpzo_audit_equal_gaussian(ctx, &c, &mech, NULL, &eps, &sigma));
    dpzo_bound eps0;
    assert_ok(ctx, dpzo_lmo_eps0(ctx, &lmo, 1.0, &eps0));
    assert_true(eps > 1e17 && eps <= eps0.upper);
    /* the Gaussian of that sigma spends at most eps (closed form, one release) */
    assert_true(sigma > 0.0 && sigma < 1e-8);
    assert_true(gauss_delta_ub(eps, sigma) <= 1e-5L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_delta_one_composition),
        cmocka_unit_test(test_delta_below_truncation),
        cmocka_unit_test(test_loss_beyond_grid),
        cmocka_unit_test(test_lmo_extreme_equal_gaussian),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
