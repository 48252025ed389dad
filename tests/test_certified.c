/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_certified.c: the fast path stays within its stated relative error of
 * the certified path over sigma 0.3..50, q 1e-6..1, alpha 1.01..1e4, and the
 * certified enclosure is well-formed and tight. */
#include "testutil.h"

/* Stated in docs/accountant.md: |fast - exact| <= 1e-9 exact + 1e-14/(alpha-1). */
#define FAST_RTOL 1e-9
#define FAST_ATOL_LOG_A 1e-14

static void check_point(dpzo_ctx *ctx, double q, double sigma, double alpha, double *worst)
{
    double r;
    dpzo_bound b;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, q, sigma, alpha, &r));
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, q, sigma, alpha, &b));
    if (!(b.lower <= b.value && b.value <= b.upper && b.lower >= 0.0))
        fail_msg("ill-formed bound at q=%g sigma=%g alpha=%g: [%g, %g, %g]", q, sigma, alpha,
                 b.lower, b.value, b.upper);
    if (isinf(b.upper)) {
        assert_true(isinf(r));
        return;
    }
    double err = fabs(r - b.upper) / (FAST_RTOL * b.upper + FAST_ATOL_LOG_A / (alpha - 1.0));
    double width = b.upper > 0 ? (b.upper - b.lower) / b.upper : 0.0;
    if (err > *worst)
        *worst = err;
    if (!(err <= 1.0 && width <= 1e-12))
        fail_msg("q=%g sigma=%g alpha=%g: fast %.17g certified [%.17g, %.17g]", q, sigma,
                 alpha, r, b.lower, b.upper);
}

static void test_grid(void **state)
{
    dpzo_ctx *ctx = *state;
    const double sigmas[] = {0.3, 0.7, 1.0, 2.0, 5.0, 15.0, 50.0};
    const double qs[] = {1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 1.0};
    const double alphas[] = {1.01, 1.1, 1.5, 2.0, 2.75, 4.0, 9.5, 32.0, 100.5, 256.0, 1000.0,
                             10000.0};
    double worst = 0.0;
    size_t n = 0;
    for (size_t i = 0; i < sizeof sigmas / sizeof *sigmas; i++)
        for (size_t j = 0; j < sizeof qs / sizeof *qs; j++)
            for (size_t k = 0; k < sizeof alphas / sizeof *alphas; k++, n++)
                check_point(ctx, qs[j], sigmas[i], alphas[k], &worst);
    print_message("%zu grid points, worst fast-vs-certified error / stated bound %.3g\n", n, worst);
}

/* Properties: monotone in sigma (decreasing), q and alpha (increasing). */
static void test_monotone(void **state)
{
    dpzo_ctx *ctx = *state;
    double prev, r;
    prev = INFINITY;
    for (double s = 0.3; s < 60; s *= 1.37) {
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.02, s, 6.5, &r));
        assert_true(r <= prev);
        prev = r;
    }
    prev = 0.0;
    for (double q = 1e-6; q <= 1.0; q *= 1.9) {
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, q, 1.3, 6.5, &r));
        assert_true(r >= prev);
        prev = r;
    }
    prev = 0.0;
    for (double a = 1.01; a < 3000; a *= 1.21) {
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.05, 1.3, a, &r));
        assert_true(r >= prev);
        prev = r;
    }
}

/* Raising the working precision keeps the enclosure valid and nests it. */
static void test_precision(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_bound lo, hi;
    assert_ok(ctx, dpzo_ctx_set_precision(ctx, 64));
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.1, 1.0, 1.1, &lo));
    assert_ok(ctx, dpzo_ctx_set_precision(ctx, 512));
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.1, 1.0, 1.1, &hi));
    /* dp_accounting fails to converge here and drops the order; mpmath quadrature:
     * 0.00809856846807383940690... */
    const double exact = 0.0080985684680738394;
    assert_true(lo.lower <= exact && exact <= lo.upper);
    assert_true(hi.lower <= exact && exact <= hi.upper);
    assert_true(hi.upper - hi.lower <= 4e-18);
    assert_int_equal(dpzo_ctx_set_precision(ctx, 10), DPZO_EINVAL);
    /* q so small that q^2 underflows: the precision still follows log A (~1e-600 here),
     * so the upper bound is tiny instead of stalling at 2^-160/(alpha-1) (review finding) */
    assert_ok(ctx, dpzo_ctx_set_precision(ctx, 128));
    dpzo_bound t;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 1e-300, 50.0, 1.5, &t));
    assert_true(t.lower >= 0.0 && t.upper < 1e-300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grid, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_monotone, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_precision, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests_name("certified", tests, NULL, NULL);
}
