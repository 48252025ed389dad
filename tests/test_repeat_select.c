/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_repeat_select.c: repeat-and-select (private selection, Papernot-Steinke 2022)
 * and sampling with replacement (issue 30), through the RDP accountant (fast and certified)
 * and the PLD/PRV accountants (their fallback). References: tests/ref/
 * make_repeat_select_reference.py (mpmath from the papers' statements). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/repeat_select_values.h"

static void rdp1(dpzo_ctx *ctx, const dpzo_event *e, double alpha, double *fast,
                 dpzo_bound *cert)
{
    assert_non_null(e);
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &alpha, 1, fast));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, cert));
    if (!(cert->lower <= cert->value && cert->value <= cert->upper))
        fail_msg("enclosure [%.17g, %.17g] misses its value %.17g", cert->lower, cert->upper,
                 cert->value);
}

static double rdp_eps(dpzo_ctx *ctx, const dpzo_event *e, double delta)
{
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, delta, NULL, &r));
    return r.epsilon;
}

static double pld_eps(dpzo_ctx *ctx, const dpzo_event *e, double delta, int prv,
                      dpzo_pld_result *r)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    if (prv)
        o.method = DPZO_PLD_PRV;
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, delta, &o, r));
    return r->epsilon;
}

static dpzo_event *ref_inner(dpzo_ctx *ctx, int kind, double p0, double p1, uint64_t p2)
{
    if (kind == 0)
        return dpzo_event_gaussian(ctx, p0);
    if (kind == 1)
        return dpzo_event_laplace(ctx, p0);
    return sgm_event(ctx, p0, p1, p2);
}

/* dpzo's bound is the paper's at a chosen lambda_hat (or delta order): never below the
 * optimum over the same domain, and within 1e-9 of it */
static void test_rs_reference(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof RS_RDP / sizeof *RS_RDP; i++) {
        dpzo_event *e = dpzo_event_repeat_and_select(
            ctx, ref_inner(ctx, RS_RDP[i].inner, RS_RDP[i].p0, RS_RDP[i].p1, RS_RDP[i].p2),
            RS_RDP[i].mean, RS_RDP[i].shape);
        double f;
        dpzo_bound b;
        rdp1(ctx, e, RS_RDP[i].alpha, &f, &b);
        double ref = RS_RDP[i].rdp;
        if (!(b.upper >= ref * (1 - 1e-15)))
            fail_msg("case %zu: certified %.17g below the paper's optimum %.17g", i, b.upper,
                     ref);
        if (!(f <= ref * (1 + 1e-9) && b.upper <= ref * (1 + 1e-9)))
            fail_msg("case %zu: fast %.17g / certified %.17g above the optimum %.17g", i, f,
                     b.upper, ref);
        dpzo_event_free(e);
    }
}

static void test_rs_properties(void **state)
{
    dpzo_ctx *ctx = *state;
    const double shapes[] = {INFINITY, 2.0, 1.0, 0.5, 0.0, -0.5};
    /* a composed, sampled inner event: epsilon at least the inner's, rises with the mean */
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        double prev = 0.0;
        dpzo_event *inner = sgm_event(ctx, 0.01, 1.0, 1000);
        double e0 = rdp_eps(ctx, inner, 1e-5);
        dpzo_event_free(inner);
        for (double mean = 1.0; mean < 1e4; mean *= 7.0) {
            dpzo_event *e = dpzo_event_repeat_and_select(ctx, sgm_event(ctx, 0.01, 1.0, 1000),
                                                         mean, shapes[s]);
            double eps = rdp_eps(ctx, e, 1e-5);
            if (!(eps >= e0 && eps >= prev))
                fail_msg("shape %g mean %g: epsilon %.17g (inner %.17g, previous %.17g)",
                         shapes[s], mean, eps, e0, prev);
            prev = eps;
            /* PLD and PRV: the RDP bound, with the reason */
            dpzo_pld_result r;
            double pe = pld_eps(ctx, e, 1e-5, s % 2, &r);
            assert_true(r.fallback);
            assert_non_null(strstr(r.reason, "repeat-and-select"));
            assert_rel(pe, eps, 1e-12);
            dpzo_event_free(e);
        }
    }
    /* pure DP inner (Laplace b = 2: 0.5-DP): the geometric's (eta = 1) RDP at a huge order
     * tends to (2 + eta) eps = 1.5 (Papernot-Steinke Thm. 2 as lambda, lambda_hat -> inf;
     * Liu-Talwar's 3 eps): at alpha = 1e5 at most 1.5 + 2 log(1/gamma)/1e5 +
     * log(mean)/(alpha - 1), gamma = 1/mean, lambda_hat the grid's last order (1e5) */
    for (double mean = 2.0; mean < 2000.0; mean *= 10.0) {
        dpzo_event *e = dpzo_event_repeat_and_select(ctx, dpzo_event_laplace(ctx, 2.0), mean,
                                                     1.0);
        double f;
        dpzo_bound b;
        rdp1(ctx, e, 1e5, &f, &b);
        double cap = 1.5 + 2.0 * log(mean) / 1e5 + log(mean) / (1e5 - 1.0);
        if (!(b.upper <= cap && b.upper >= 0.5))
            fail_msg("mean %g: RDP at 1e5 %.17g, cap %.17g", mean, b.upper, cap);
        dpzo_event_free(e);
    }
    /* shapes near -1 put log gamma near -2300 (mean 10) or -2e7 (mean 1e9): solved in logs */
    for (double mean = 10.0; mean < 2e9; mean *= 1e4) {
        dpzo_event *inner = sgm_event(ctx, 0.01, 1.0, 100);
        double e0 = rdp_eps(ctx, inner, 1e-6);
        dpzo_event_free(inner);
        dpzo_event *e = dpzo_event_repeat_and_select(ctx, sgm_event(ctx, 0.01, 1.0, 100), mean,
                                                     -0.999);
        double eps = rdp_eps(ctx, e, 1e-6);
        if (!(isfinite(eps) && eps > e0))
            fail_msg("shape -0.999 mean %g: epsilon %.17g (inner %.17g)", mean, eps, e0);
        dpzo_event_free(e);
    }
    /* mean 1 (K = 1): the inner event itself, exactly */
    {
        double a = 6.5, f0, f1;
        dpzo_bound b0, b1;
        dpzo_event *in = sgm_event(ctx, 0.02, 1.3, 50);
        rdp1(ctx, in, a, &f0, &b0);
        dpzo_event *e = dpzo_event_repeat_and_select(ctx, in, 1.0, 1.0);
        rdp1(ctx, e, a, &f1, &b1);
        assert_rel(f1, f0, 1e-15);
        assert_rel(b1.upper, b0.upper, 1e-15); /* the outer sum's ulp nudges */
        assert_true(b1.upper >= b0.upper);
        dpzo_event_free(e);
    }
    /* nothing released inside: 0; no noise inside: +inf */
    {
        double f;
        dpzo_bound b;
        dpzo_event *e = dpzo_event_repeat_and_select(ctx, dpzo_event_composed(ctx, NULL, 0),
                                                     10.0, INFINITY);
        rdp1(ctx, e, 3.0, &f, &b);
        assert_true(f == 0.0 && b.upper < 1e-300); /* (the sum's nudge above 0) */
        assert_true(rdp_eps(ctx, e, 1e-6) == 0.0);
        dpzo_event_free(e);
        e = dpzo_event_repeat_and_select(ctx, dpzo_event_non_private(ctx), 10.0, 1.0);
        rdp1(ctx, e, 3.0, &f, &b);
        assert_true(isinf(f) && isinf(b.upper));
        dpzo_event_free(e);
    }
    /* nested selections, composition beside one */
    {
        dpzo_event *list[2] = {
            dpzo_event_repeat_and_select(
                ctx, dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 4.0), 3.0, 1.0),
                5.0, INFINITY),
            dpzo_event_gaussian(ctx, 3.0)};
        dpzo_event *c = dpzo_event_composed(ctx, list, 2);
        double eps = rdp_eps(ctx, c, 1e-5);
        assert_true(eps > 0.0 && isfinite(eps));
        char d[256];
        dpzo_event_describe(c, d, sizeof d);
        assert_non_null(strstr(d, "repeat_and_select(mean=5, shape=inf, repeat_and_select(mean=3"));
        dpzo_event_free(c);
    }
    /* under a sampler: refused with the sampler's message */
    dpzo_event *s = dpzo_event_poisson_sampled(
        ctx, 0.1, dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), 2.0, 1.0));
    dpzo_dp_result dr;
    assert_int_equal(dpzo_event_epsilon(ctx, s, 1e-5, NULL, &dr), DPZO_EUNSUPPORTED);
    dpzo_event_free(s);
    /* bad parameters, named */
    assert_null(dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), 0.5, 1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "mean=0.5"));
    assert_null(dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), NAN, 1.0));
    assert_null(dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), 3.0, -1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "shape=-1"));
    assert_null(dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), 3.0, NAN));
    assert_null(dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 1.0), INFINITY, 1.0));
    assert_null(dpzo_event_repeat_and_select(ctx, NULL, 3.0, 1.0));
}

/* m * RDP_WOR(1 of n, sigma / sqrt(m)), the bound (b), certified */
static double wr_split(dpzo_ctx *ctx, uint64_t n, uint64_t m, double sigma, double alpha)
{
    dpzo_bound b;
    double s = m == 1 ? sigma : nextafter(sigma / nextafter(sqrt((double)m), INFINITY), 0.0);
    assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, 1, n, s, alpha, &b));
    return b.upper * (double)m;
}

static void test_wr(void **state)
{
    dpzo_ctx *ctx = *state;
    /* the minimum of the joint-convexity and paired sums (exact references) and the split
     * bound */
    for (size_t i = 0; i < sizeof WR_JOINT / sizeof *WR_JOINT; i++) {
        uint64_t n = WR_JOINT[i].n, m = WR_JOINT[i].m;
        dpzo_event *e =
            dpzo_event_wr_sampled(ctx, n, m, dpzo_event_gaussian(ctx, WR_JOINT[i].sigma));
        double f;
        dpzo_bound b;
        rdp1(ctx, e, WR_JOINT[i].alpha, &f, &b);
        double split = wr_split(ctx, n, m, WR_JOINT[i].sigma, WR_JOINT[i].alpha);
        double want = fmin(fmin(WR_JOINT[i].joint, WR_JOINT[i].pair), split);
        if (!(b.upper >= want * (1 - 1e-12) && b.upper <= want * (1 + 1e-12)))
            fail_msg("case %zu: certified %.17g, joint %.17g, paired %.17g, split %.17g", i,
                     b.upper, WR_JOINT[i].joint, WR_JOINT[i].pair, split);
        assert_rel(f, b.upper, 1e-12);
        dpzo_event_free(e);
    }
    /* n = 1: every draw is the record, the Gaussian of sensitivity m: alpha m^2 / (2 s^2) */
    for (uint64_t m = 1; m < 40; m += 7) {
        dpzo_event *e = dpzo_event_wr_sampled(ctx, 1, m, dpzo_event_gaussian(ctx, 2.5));
        double f;
        dpzo_bound b;
        rdp1(ctx, e, 3.0, &f, &b);
        double want = 3.0 * (double)(m * m) / (2.0 * 6.25);
        assert_true(b.upper >= want && b.upper <= want * (1 + 1e-14));
        dpzo_event_free(e);
    }
    /* m = 1 is a batch of one drawn without replacement: never above that bound */
    for (uint64_t n = 2; n < 100000; n *= 9) {
        dpzo_event *e = dpzo_event_wr_sampled(ctx, n, 1, dpzo_event_gaussian(ctx, 1.2));
        double f;
        dpzo_bound b;
        rdp1(ctx, e, 4.0, &f, &b);
        dpzo_event *w = dpzo_event_wor_sampled(ctx, 1, n, dpzo_event_gaussian(ctx, 1.2));
        double fw;
        dpzo_bound bw;
        rdp1(ctx, w, 4.0, &fw, &bw);
        assert_true(b.upper <= bw.upper && f <= fw);
        dpzo_event_free(w);
        dpzo_event_free(e);
    }
    /* monotone: up in m, down in n and in sigma */
    const double orders[] = {1.5, 2.0, 8.0, 32.0};
    for (size_t j = 0; j < 4; j++) {
        double prev = 0.0;
        for (uint64_t m = 1; m <= 1024; m *= 4) {
            dpzo_event *e = dpzo_event_wr_sampled(ctx, 10000, m, dpzo_event_gaussian(ctx, 3.0));
            double f;
            dpzo_bound b;
            rdp1(ctx, e, orders[j], &f, &b);
            if (!(b.upper >= prev))
                fail_msg("order %g m %llu: %.17g below %.17g", orders[j], (unsigned long long)m,
                         b.upper, prev);
            prev = b.upper;
            dpzo_event_free(e);
        }
        prev = INFINITY;
        for (uint64_t n = 2; n <= 1000000; n *= 10) {
            dpzo_event *e = dpzo_event_wr_sampled(ctx, n, 8, dpzo_event_gaussian(ctx, 3.0));
            double f;
            dpzo_bound b;
            rdp1(ctx, e, orders[j], &f, &b);
            assert_true(b.upper <= prev);
            prev = b.upper;
            dpzo_event_free(e);
        }
        prev = INFINITY;
        for (double s = 0.5; s < 100.0; s *= 2.0) {
            dpzo_event *e = dpzo_event_wr_sampled(ctx, 1000, 8, dpzo_event_gaussian(ctx, s));
            double f;
            dpzo_bound b;
            rdp1(ctx, e, orders[j], &f, &b);
            assert_true(b.upper <= prev);
            prev = b.upper;
            dpzo_event_free(e);
        }
    }
    /* edges: nothing drawn, no noise, noise +inf */
    double f;
    dpzo_bound b;
    dpzo_event *e = dpzo_event_wr_sampled(ctx, 100, 0, dpzo_event_gaussian(ctx, 1.0));
    rdp1(ctx, e, 2.0, &f, &b);
    assert_true(f == 0.0 && b.upper < 1e-300);
    dpzo_event_free(e);
    e = dpzo_event_wr_sampled(ctx, 100, 3, dpzo_event_gaussian(ctx, 0.0));
    rdp1(ctx, e, 2.0, &f, &b);
    assert_true(isinf(f) && isinf(b.upper));
    dpzo_event_free(e);
    /* the sampling bound: delta >= 1 - (1 - 1/n)^m gives epsilon 0 */
    e = dpzo_event_wr_sampled(ctx, 100, 3, dpzo_event_gaussian(ctx, 0.5));
    assert_true(rdp_eps(ctx, e, 0.03) == 0.0); /* 1 - 0.99^3 = 0.029701 */
    assert_true(rdp_eps(ctx, e, 0.029) > 0.0);
    /* PLD/PRV: the RDP bound, with the reason */
    dpzo_pld_result r;
    double pe = pld_eps(ctx, e, 1e-5, 0, &r);
    assert_true(r.fallback);
    assert_non_null(strstr(r.reason, "with replacement"));
    assert_rel(pe, rdp_eps(ctx, e, 1e-5), 1e-12);
    char d[128];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "with_replacement(sample_size=3, n=100, gaussian(sigma=0.5))");
    dpzo_event_free(e);
    /* a non-Gaussian inner event, and bad sizes, are refused */
    e = dpzo_event_wr_sampled(ctx, 100, 3, dpzo_event_laplace(ctx, 1.0));
    dpzo_dp_result dr;
    assert_int_equal(dpzo_event_epsilon(ctx, e, 1e-5, NULL, &dr), DPZO_EUNSUPPORTED);
    dpzo_event_free(e);
    assert_null(dpzo_event_wr_sampled(ctx, 0, 3, dpzo_event_gaussian(ctx, 1.0)));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "n=0"));
    assert_null(dpzo_event_wr_sampled(ctx, 10, (UINT64_C(1) << 53) + 1,
                                      dpzo_event_gaussian(ctx, 1.0)));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sample_size="));
}

/* repetition multiplies the RDP of both leaves, fast and certified */
static void test_counts_compose(void **state)
{
    dpzo_ctx *ctx = *state;
    const double orders[] = {1.5, 4.0, 20.0};
    for (int kind = 0; kind < 3; kind++) {
        dpzo_event *one = NULL, *five = NULL;
        for (int rep = 0; rep < 2; rep++) {
            dpzo_event *e;
            if (kind == 0)
                e = dpzo_event_repeat_and_select(ctx, sgm_event(ctx, 0.05, 1.0, 20), 8.0, 1.0);
            else if (kind == 1)
                e = dpzo_event_repeat_and_select(ctx, dpzo_event_gaussian(ctx, 3.0), 8.0,
                                                 INFINITY);
            else
                e = dpzo_event_wr_sampled(ctx, 500, 6, dpzo_event_gaussian(ctx, 2.0));
            if (rep == 0)
                one = e;
            else
                five = dpzo_event_self_composed(ctx, e, 5);
        }
        double r1[3], r5[3];
        dpzo_bound b1[3], b5[3];
        assert_ok(ctx, dpzo_event_rdp(ctx, one, orders, 3, r1));
        assert_ok(ctx, dpzo_event_rdp(ctx, five, orders, 3, r5));
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, one, orders, 3, b1));
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, five, orders, 3, b5));
        for (int i = 0; i < 3; i++) {
            assert_true(r1[i] > 0.0);
            assert_rel(r5[i], 5 * r1[i], 1e-15);
            assert_true(b5[i].upper >= 5 * b1[i].upper * (1 - 1e-15));
            assert_rel(b5[i].upper, 5 * b1[i].upper, 1e-14);
        }
        dpzo_event_free(one);
        dpzo_event_free(five);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rs_reference, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_rs_properties, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_wr, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_counts_compose, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
