/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_rdp.c: RDP of the sampled Gaussian, Gaussian and Laplace against published
 * vectors and 50-digit mpmath references (tests/ref), closed forms and large orders. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/reference_values.h"

/* dp_accounting rdp_privacy_accountant_test: q=0.01, sigma=2.5, 50 steps. Integer
 * orders agree (rtol 1e-4 in their test). At fractional orders dp_accounting adds
 * |terms| of the series, an upper bound that is loose there: the exact value (mpmath
 * quadrature, 0.000650070897188 at 1.5) is lower, so ours must be <= theirs. */
static void test_dp_accounting_vector(void **state)
{
    dpzo_ctx *ctx = *state;
    const double orders[] = {1.5, 2.5, 5, 50, 100};
    const double dpa[] = {6.70579741e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02,
                          1.67416308e+02};
    for (size_t i = 0; i < 5; i++) {
        double r;
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.01, 2.5, orders[i], &r));
        r *= 50;
        if (orders[i] == floor(orders[i]))
            assert_rel(r, dpa[i], 1e-7);
        else
            assert_true(r <= dpa[i]);
    }
    double r;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.01, 2.5, 1.5, &r));
    assert_rel(50 * r, 0.000650070897188039736746412288517, 1e-10);
}

/* autodp unit_test_dp_sgd_poisson_sampling_add_remove (TF Privacy values), 1 step. */
static void test_autodp_table(void **state)
{
    dpzo_ctx *ctx = *state;
    static const struct {
        double q, sigma, alpha, rdp;
    } v[] = {
        {0.01, 1.0, 2, 0.00017181342207453428}, {0.01, 1.0, 10, 0.03827041889494864},
        {0.01, 1.0, 25, 7.70294772682218},      {0.01, 1.0, 128, 59.358568631445074},
        {0.01, 2.0, 1.25, 1.7710637990830963e-05}, {0.01, 2.0, 64, 3.321746408681008},
        {0.01, 0.5, 4, 1.8618755130319669},     {0.01, 0.5, 4.5, 3.0791796010526946},
        {0.01, 10.0, 2, 1.005016203373883e-06}, {0.01, 0.1, 128, 6395.3585686314445},
        {0.05, 0.5, 2, 0.12574712688706774},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        double r;
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, v[i].q, v[i].sigma, v[i].alpha, &r));
        assert_rel(r, v[i].rdp, 1e-9);
    }
}

/* Every mpmath reference (quadrature for fractional orders, exact sums for integer
 * ones, 50 digits): the fast path within its stated error (docs/accountant.md:
 * 1e-9 relative plus 1e-14/(alpha-1) absolute, the latter from forming A ~ 1 in
 * double at fractional orders), the certified enclosure containing the reference. */
static void test_mpmath_references(void **state)
{
    dpzo_ctx *ctx = *state;
    double worst = 0.0;
    for (size_t i = 0; i < DPZO_REF_SGM_N; i++) {
        const dpzo_ref_sgm *t = &DPZO_REF_SGM[i];
        double ref = strtod(t->rdp, NULL), r;
        dpzo_bound b;
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, t->q, t->sigma, t->alpha, &r));
        assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, t->q, t->sigma, t->alpha, &b));
        double err = fabs(r - ref) / (1e-9 * ref + 1e-14 / (t->alpha - 1.0));
        if (err > worst)
            worst = err;
        if (!(err <= 1.0))
            fail_msg("q=%g sigma=%g alpha=%g: fast %.17g vs mpmath %.17g", t->q, t->sigma,
                     t->alpha, r, ref);
        /* the reference is itself rounded to a double: allow one ulp */
        if (!(b.lower <= nextafter(ref, INFINITY) && nextafter(ref, -INFINITY) <= b.upper))
            fail_msg("q=%g sigma=%g alpha=%g: [%.17g, %.17g] misses mpmath %.17g", t->q,
                     t->sigma, t->alpha, b.lower, b.upper, ref);
    }
    print_message("%zu mpmath references, worst fast-path error / stated bound %.3g\n",
                  (size_t)DPZO_REF_SGM_N, worst);
}

static void test_closed_forms(void **state)
{
    dpzo_ctx *ctx = *state;
    double r;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.0, 1.0, 3.5, &r));
    assert_true(r == 0.0);
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 1.0, 2.0, 3.5, &r));
    assert_true(r == 3.5 / 8.0);
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.3, 0.0, 3.5, &r));
    assert_true(r == INFINITY);
    assert_ok(ctx, dpzo_rdp_gaussian(ctx, 4.0, 10.0, &r));
    assert_true(r == 10.0 / 32.0);
    dpzo_bound b;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 1.0, 3.0, 7.25, &b));
    assert_true(b.lower <= 7.25 / 18.0 && 7.25 / 18.0 <= b.upper);
    assert_true(b.upper - b.lower <= 4e-16);
}

/* Laplace: Mironov 2017 Prop 6 against mpmath-evaluated closed form
 * (b=1, alpha=2: log(2/3 e + 1/3 e^-2) = 0.61912362999859288339978853654, mpmath 50 digits). */
static void test_laplace(void **state)
{
    dpzo_ctx *ctx = *state;
    double r;
    /* mpmath: log(2/3*e^1 + 1/3*e^-2) for alpha=2, b=1 */
    assert_ok(ctx, dpzo_rdp_laplace(ctx, 1.0, 2.0, &r));
    assert_rel(r, 0.61912362999859288, 1e-13);
    dpzo_bound b;
    assert_ok(ctx, dpzo_rdp_laplace_certified(ctx, 1.0, 2.0, &b));
    assert_true(b.lower <= 0.61912362999859288 && 0.61912362999859288 <= b.upper);
    /* large alpha tends to epsilon = 1/b from below */
    assert_ok(ctx, dpzo_rdp_laplace(ctx, 0.5, 1e6, &r));
    assert_true(r < 2.0 && r > 1.999);
    /* monotone in alpha */
    double prev = 0.0;
    for (double a = 1.01; a < 200; a *= 1.3) {
        assert_ok(ctx, dpzo_rdp_laplace(ctx, 2.0, a, &r));
        assert_true(r >= prev);
        prev = r;
    }
}

/* Opacus returns NaN for alpha >= 2048 (binomial overflow); dp_accounting gives these. */
static void test_large_orders(void **state)
{
    dpzo_ctx *ctx = *state;
    const double orders[] = {1024, 2048, 4096, 10000, 100000};
    const double dpa[] = {507.39032818137656, 1019.3925800972626, 2043.393705230328,
                          4995.3943692509365, NAN};
    for (size_t i = 0; i < 5; i++) {
        double r;
        assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.01, 1.0, orders[i], &r));
        assert_true(isfinite(r));
        if (!isnan(dpa[i]))
            assert_rel(r, dpa[i], 1e-12);
        /* q^2-free limit: RDP <= alpha/(2 sigma^2) always */
        assert_true(r <= orders[i] / 2.0);
    }
    dpzo_bound b;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.01, 1.0, 10000, &b));
    assert_true(b.lower <= 4995.3943692509365 && 4995.3943692509365 <= b.upper);
}

static void test_bad_inputs(void **state)
{
    dpzo_ctx *ctx = *state;
    double r;
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, NAN, 1, 2, &r), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sampling rate"));
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 1.5, 1, 2, &r), DPZO_EINVAL);
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, -1, 2, &r), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "-1"));
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, INFINITY, 2, &r), DPZO_EINVAL);
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, 1, 1.0, &r), DPZO_EINVAL);
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, 1, INFINITY, &r), DPZO_EINVAL);
    assert_int_equal(dpzo_rdp_laplace(ctx, -2, 2, &r), DPZO_EINVAL);
    dpzo_bound b;
    assert_int_equal(dpzo_rdp_sampled_gaussian_certified(ctx, 0.1, 1, 0.5, &b), DPZO_EINVAL);
    /* orders above 1e6 are refused (1e20 used to overflow an index: review finding) */
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, 1, 1e20, &r), DPZO_EINVAL);
    assert_int_equal(dpzo_rdp_sampled_gaussian(ctx, 0.1, 1, 1e6 + 0.5, &r), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "1e+06"));
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.1, 1, 1e6, &r));
    assert_true(isfinite(r) && r > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dp_accounting_vector, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_autodp_table, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_mpmath_references, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_closed_forms, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_laplace, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_large_orders, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_inputs, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests_name("rdp", tests, NULL, NULL);
}
