/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_tree_aggregation.c: DP-FTRL's single-epoch tree aggregation (issue 30; dp_accounting's
 * SingleEpochTreeAggregationDpEvent) through the RDP accountant (fast and certified) and the
 * PLD/PRV accountants. References: tests/ref/make_tree_aggregation_reference.py (mpmath from
 * the definitions: the online tree's released nodes counted per step, Renyi divergence by
 * quadrature, the exact Gaussian hockey stick). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include <mpfr.h>
#include "internal.h"
#include "ref/tree_aggregation_values.h"

#define N_ORD 6
static const double ORD[N_ORD] = {1.01, 1.5, 2.0, 7.0, 64.0, 1000.0};

static void rdp1(dpzo_ctx *ctx, dpzo_event *e, double alpha, double *fast, dpzo_bound *cert)
{
    assert_non_null(e);
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &alpha, 1, fast));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, cert));
    dpzo_event_free(e);
}

static dpzo_event *tree1(dpzo_ctx *ctx, double sigma, uint64_t t)
{
    return dpzo_event_tree_aggregation(ctx, sigma, &t, 1);
}

static void test_rdp_reference(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof TREE_RDP / sizeof TREE_RDP[0]; i++) {
        uint64_t steps[3];
        for (int j = 0; j < 3; j++)
            steps[j] = TREE_RDP[i].steps[j];
        dpzo_event *e = dpzo_event_tree_aggregation(ctx, TREE_RDP[i].sigma, steps, TREE_RDP[i].n);
        assert_non_null(e);
        char d[160], want[160];
        dpzo_event_describe(e, d, sizeof d);
        snprintf(want, sizeof want, "depth=%llu)", TREE_RDP[i].depth);
        assert_non_null(strstr(d, want));
        double f;
        dpzo_bound b;
        rdp1(ctx, e, TREE_RDP[i].alpha, &f, &b);
        double ref = TREE_RDP[i].rdp, slack = 4e-16 * ref;
        assert_rel(f, ref, 1e-15);
        if (!(b.lower <= ref + slack && b.upper >= ref - slack && b.upper - b.lower <= 1e-14 * ref))
            fail_msg("row %zu: [%.17g, %.17g] against %.17g", i, b.lower, b.upper, ref);
        /* the Gaussian of the same sensitivity, composed depth times, spends exactly as much */
        dpzo_event *g = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, TREE_RDP[i].sigma),
                                                 TREE_RDP[i].depth);
        double fg;
        dpzo_bound bg;
        rdp1(ctx, g, TREE_RDP[i].alpha, &fg, &bg);
        assert_rel(f, fg, 1e-14);
    }
}

static void test_edges(void **state)
{
    dpzo_ctx *ctx = *state;
    double f;
    dpzo_bound b;
    /* T = 1: one leaf, one node: the Gaussian itself */
    rdp1(ctx, tree1(ctx, 1.7, 1), 3.0, &f, &b);
    assert_rel(f, 3.0 / (2 * 1.7 * 1.7), 1e-15);
    /* sigma 0: +inf everywhere, certified too */
    rdp1(ctx, tree1(ctx, 0.0, 5), 2.0, &f, &b);
    assert_true(isinf(f) && isinf(b.lower) && isinf(b.upper));
    /* trees of 0 steps release nothing, even without noise */
    uint64_t zeros[2] = {0, 0};
    rdp1(ctx, dpzo_event_tree_aggregation(ctx, 0.0, zeros, 2), 2.0, &f, &b);
    if (!(f == 0.0 && b.lower == 0.0 && b.upper <= 1e-300)) /* the sum rounds 0 up */
        fail_msg("%g [%g, %g]", f, b.lower, b.upper);
    /* refusals */
    uint64_t one = 1;
    assert_null(dpzo_event_tree_aggregation(ctx, 1.0, &one, 0));
    assert_null(dpzo_event_tree_aggregation(ctx, 1.0, NULL, 1));
    assert_null(dpzo_event_tree_aggregation(ctx, -1.0, &one, 1));
    assert_null(dpzo_event_tree_aggregation(ctx, NAN, &one, 1));
    assert_null(dpzo_event_tree_aggregation(ctx, INFINITY, &one, 1));
    /* the largest count: depth 64 */
    uint64_t big = UINT64_MAX;
    rdp1(ctx, dpzo_event_tree_aggregation(ctx, 2.0, &big, 1), 2.0, &f, &b);
    assert_rel(f, 2.0 * 64 / 8.0, 1e-15);
    /* description */
    uint64_t two[2] = {5, 10};
    dpzo_event *e = dpzo_event_tree_aggregation(ctx, 1.5, two, 2);
    char d[160];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "tree_aggregation(sigma=1.5, trees=2, max_steps=10, depth=4)");
    assert_int_equal(dpzo_event_get_kind(e), DPZO_EVENT_TREE_AGGREGATION);
    /* under a sampler: refused, as the other non-Gaussian leaves */
    dpzo_event *s = dpzo_event_poisson_sampled(ctx, 0.01, e);
    assert_non_null(s);
    dpzo_status st = dpzo_event_rdp(ctx, s, ORD, 1, &f);
    assert_int_equal(st, DPZO_EUNSUPPORTED);
    dpzo_event_free(s);
}

static void test_monotone(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int i = 0; i < N_ORD; i++) {
        double prev = INFINITY;
        for (double sigma = 0.25; sigma < 20.0; sigma *= 1.5) {
            double f;
            dpzo_bound b;
            rdp1(ctx, tree1(ctx, sigma, 100), ORD[i], &f, &b);
            assert_true(b.upper < prev);
            prev = b.upper;
        }
        prev = 0.0;
        for (uint64_t t = 1; t < 5000; t = 2 * t + (t & 1)) {
            double f;
            dpzo_bound b;
            rdp1(ctx, tree1(ctx, 1.3, t), ORD[i], &f, &b);
            assert_true(b.upper >= prev);
            prev = b.upper;
        }
    }
}

static void test_pld(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int prv = 0; prv < 2; prv++) {
        for (size_t i = 0; i < sizeof TREE_EPS / sizeof TREE_EPS[0]; i++) {
            uint64_t steps[2] = {TREE_EPS[i].steps[0], TREE_EPS[i].steps[1]};
            dpzo_event *e = dpzo_event_tree_aggregation(ctx, TREE_EPS[i].sigma, steps,
                                                        TREE_EPS[i].n);
            assert_non_null(e);
            dpzo_pld_options o;
            dpzo_pld_options_default(&o);
            if (prv)
                o.method = DPZO_PLD_PRV;
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, TREE_EPS[i].delta, &o, &r));
            double ref = TREE_EPS[i].eps;
            if (!(r.epsilon_upper >= ref && r.epsilon_lower <= ref * (1 + 1e-12)))
                fail_msg("%s row %zu: [%.17g, %.17g] against %.17g", prv ? "PRV" : "PLD", i,
                         r.epsilon_lower, r.epsilon_upper, ref);
            assert_true(r.epsilon_upper <= ref * 1.01 + 1e-3);
            assert_int_equal(r.fallback, 0);
            /* the RDP accountant's bound is sound and looser */
            dpzo_dp_result rr;
            assert_ok(ctx, dpzo_event_epsilon(ctx, e, TREE_EPS[i].delta, NULL, &rr));
            assert_true(rr.epsilon >= ref);
            dpzo_event_free(e);
        }
    }
    /* no noise: epsilon +inf */
    dpzo_event *e = tree1(ctx, 0.0, 8);
    dpzo_pld_result r;
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
    assert_true(isinf(r.epsilon));
    dpzo_event_free(e);
}

/* in a composition: adds like its Gaussian equivalent */
static void test_compose(void **state)
{
    dpzo_ctx *ctx = *state;
    uint64_t steps[2] = {7, 3}; /* depth 3 */
    dpzo_event *list[2] = {dpzo_event_self_composed(
                               ctx, dpzo_event_tree_aggregation(ctx, 1.2, steps, 2), 4),
                           dpzo_event_gaussian(ctx, 0.9)};
    dpzo_event *c = dpzo_event_composed(ctx, list, 2);
    double r[N_ORD];
    assert_ok(ctx, dpzo_event_rdp(ctx, c, ORD, N_ORD, r));
    for (int i = 0; i < N_ORD; i++)
        assert_rel(r[i], ORD[i] * (4 * 3 / (2 * 1.2 * 1.2) + 1 / (2 * 0.9 * 0.9)), 1e-14);
    dpzo_event_free(c);
}

/* the PLD's Gaussian sigma / sqrt(depth) is never above the true quotient: at depths whose
 * rounded sqrt r squares to the depth exactly in doubles without being its root (11: r is
 * below sqrt(11)), sigma = r once gave back exactly 1, above r / sqrt(11) */
static void test_gaussian_sigma_rounding(void **state)
{
    dpzo_ctx *ctx = *state;
    for (uint64_t depth = 1; depth <= 64; depth++) {
        double sigmas[3] = {sqrt((double)depth), 1.0, 0.7};
        for (int j = 0; j < 3; j++) {
            uint64_t t = UINT64_C(1) << (depth - 1); /* bit length = depth */
            dpzo_event *e = dpzo_event_tree_aggregation(ctx, sigmas[j], &t, 1);
            assert_non_null(e);
            double s = dpzo__tree_gaussian_sigma(e);
            /* s <= sigma / sqrt(d) <=> s^2 d <= sigma^2, both exact at 256 bits */
            mpfr_t l, r;
            mpfr_inits2(256, l, r, (mpfr_ptr)0);
            mpfr_set_d(l, s, MPFR_RNDN);
            mpfr_sqr(l, l, MPFR_RNDN);
            mpfr_mul_ui(l, l, (unsigned long)depth, MPFR_RNDN);
            mpfr_set_d(r, sigmas[j], MPFR_RNDN);
            mpfr_sqr(r, r, MPFR_RNDN);
            assert_true(mpfr_cmp(l, r) <= 0);
            /* the lower end's multiplier, rounded up: s_up^2 d >= sigma^2, within 4 ulps */
            double u = dpzo__tree_gaussian_sigma_up(e);
            mpfr_set_d(l, u, MPFR_RNDN);
            mpfr_sqr(l, l, MPFR_RNDN);
            mpfr_mul_ui(l, l, (unsigned long)depth, MPFR_RNDN);
            assert_true(mpfr_cmp(l, r) >= 0);
            assert_true(u >= s && u <= s * (1.0 + 0x1p-50));
            mpfr_clears(l, r, (mpfr_ptr)0);
            assert_true(s > 0.0);
            dpzo_event_free(e);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rdp_reference, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_edges, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_monotone, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pld, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_compose, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_sigma_rounding, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
