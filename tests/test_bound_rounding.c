/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_bound_rounding.c (issue 28, item 1): every bound the accountants return is
 * rounded in its safe direction, down to the last double.
 *  - delta(eps) of a Poisson-subsampled Gaussian at huge noise, tiny rates or large eps is
 *    positive but far below the smallest positive double (1.18e-32104799 at sigma 1000,
 *    q 1e-4, eps 3): the proven upper bound of the RDP, PLD and PRV accountants must be at
 *    least the smallest double above the truth (2^-1074 = 4.94e-324, never 0), and the
 *    proven lower bound at most the largest double below it (0). Before the fix the PLD
 *    and PRV returned an upper bound of 0: the step's pessimistic mass at +infinity,
 *    exp(log P(L > top)), underflowed to 0 (accountant/pld/pld_discretize.c).
 *  - Rows whose truth is a double (3.04e-305, and the subnormal 1.34e-321) check the
 *    rounding near and below DBL_MIN against the exact value.
 *  - epsilon(delta) where the true epsilon is tiny but positive: upper end >= truth,
 *    lower end <= truth.
 * The exact values are tests/ref/bound_rounding_values.h (mpmath,
 * tests/ref/make_bound_rounding_reference.py). */
#include <float.h>
#include <stdlib.h>
#include "testutil.h"
#include "ref/bound_rounding_values.h"

#define NROWS(a) (sizeof(a) / sizeof *(a))

static dpzo_event *poisson(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    dpzo_event *s = q < 1.0 ? dpzo_event_poisson_sampled(ctx, q, g) : g;
    return steps == 1 ? s : dpzo_event_self_composed(ctx, s, steps);
}

static dpzo_pld_options tight(dpzo_pld_method m)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = m;
    o.memory_limit = (size_t)512 << 20;
    return o;
}

static const char *const NAMES[2] = {"pld", "prv"};
static const dpzo_pld_method METHODS[2] = {DPZO_PLD_CONNECT_DOTS, DPZO_PLD_PRV};

/* upper >= the smallest double at or above the truth; lower <= the largest below it */
static void check_delta(const bound_delta_row *r, const char *acc, double upper, double lower)
{
    if (!(upper >= r->up))
        fail_msg("%s delta(sigma %g, q %g, T %lu, eps %g): upper bound %.17g below the truth %s",
                 acc, r->sigma, r->q, r->steps, r->eps, upper, r->truth);
    if (r->steps == 1 && !(lower <= r->down))
        fail_msg("%s delta(sigma %g, q %g, eps %g): lower bound %.17g above the truth %s", acc,
                 r->sigma, r->q, r->eps, lower, r->truth);
    if (!(lower <= upper) || !(upper <= 1.0) || !(lower >= 0.0))
        fail_msg("%s delta(sigma %g, q %g, T %lu, eps %g): [%.17g, %.17g]", acc, r->sigma, r->q,
                 r->steps, r->eps, lower, upper);
}

static void test_delta_rdp(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < NROWS(BOUND_DELTA_ROWS); i++) {
        const bound_delta_row *r = &BOUND_DELTA_ROWS[i];
        dpzo_dp_result res;
        dpzo_event *e = poisson(ctx, r->q, r->sigma, r->steps);
        assert_ok(ctx, dpzo_event_delta(ctx, e, r->eps, NULL, &res));
        dpzo_event_free(e);
        check_delta(r, "rdp", res.delta, 0.0);
    }
}

static void test_delta_tight(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < NROWS(BOUND_DELTA_ROWS); i++) {
            const bound_delta_row *r = &BOUND_DELTA_ROWS[i];
            dpzo_pld_options o = tight(METHODS[m]);
            dpzo_pld_result res;
            dpzo_event *e = poisson(ctx, r->q, r->sigma, r->steps);
            assert_ok(ctx, dpzo_pld_delta(ctx, e, r->eps, &o, &res));
            dpzo_event_free(e);
            check_delta(r, NAMES[m], res.delta_upper, res.delta_lower);
            if (res.delta != res.delta_upper)
                fail_msg("%s: delta %.17g is not the upper end %.17g", NAMES[m], res.delta,
                         res.delta_upper);
        }
}

/* The issue's query itself, end by end: the upper end is exactly the smallest positive
 * double (what the RDP accountant reports), the lower end 0. */
static void test_issue_query(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = tight(METHODS[m]);
        dpzo_pld_result res;
        dpzo_event *e = poisson(ctx, 1e-4, 1000.0, 1);
        assert_ok(ctx, dpzo_pld_delta(ctx, e, 3.0, &o, &res));
        dpzo_event_free(e);
        if (res.delta_upper != DBL_TRUE_MIN || res.delta_lower != 0.0)
            fail_msg("%s: [%.17g, %.17g], expected [0, 2^-1074]", NAMES[m], res.delta_lower,
                     res.delta_upper);
    }
    dpzo_dp_result rr;
    dpzo_event *e = poisson(ctx, 1e-4, 1000.0, 1);
    assert_ok(ctx, dpzo_event_delta(ctx, e, 3.0, NULL, &rr));
    dpzo_event_free(e);
    assert_true(rr.delta == DBL_TRUE_MIN);
}

static void test_epsilon_tiny(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < NROWS(BOUND_EPS_ROWS); i++) {
        const bound_eps_row *r = &BOUND_EPS_ROWS[i];
        dpzo_event *e = poisson(ctx, r->q, r->sigma, r->steps);
        dpzo_dp_result rr;
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, r->delta, NULL, &rr));
        if (!(rr.epsilon >= r->up))
            fail_msg("rdp epsilon(sigma %g, q %g, delta %g) = %.17g below the truth %s", r->sigma,
                     r->q, r->delta, rr.epsilon, r->truth);
        for (int m = 0; m < 2; m++) {
            dpzo_pld_options o = tight(METHODS[m]);
            dpzo_pld_result res;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, r->delta, &o, &res));
            if (!(res.epsilon_upper >= r->up) || !(res.epsilon_lower <= r->down)
                || res.epsilon != res.epsilon_upper)
                fail_msg("%s epsilon(sigma %g, q %g, delta %g) = [%.17g, %.17g]: the truth %s "
                         "must lie inside",
                         NAMES[m], r->sigma, r->q, r->delta, res.epsilon_lower, res.epsilon_upper,
                         r->truth);
        }
        dpzo_event_free(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_issue_query, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_delta_rdp, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_delta_tight, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_epsilon_tiny, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
