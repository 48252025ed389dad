/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_mog.c: dp_accounting's MixtureOfGaussiansDpEvent and
 * TruncatedSubsampledGaussianDpEvent in the C algebra (issue 30): RDP fast and certified
 * against mpmath (tests/ref/make_mog_reference.py: quadrature of both Renyi divergences from
 * the densities, the multinomial closed form, the binomial sums), the reduction to the
 * Poisson-sampled Gaussian, the bad inputs, the PLD/PRV sources of both. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/mog_values.h"

static dpzo_event *mog(dpzo_ctx *ctx, double sigma, int k, const double *c, const double *p)
{
    return dpzo_event_mixture_of_gaussians(ctx, sigma, c, p, (size_t)k);
}

static void rdp1(dpzo_ctx *ctx, const dpzo_event *e, double alpha, double *fast,
                 dpzo_bound *cert)
{
    assert_non_null(e);
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &alpha, 1, fast));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, cert));
}

/* both directions against the quadrature: the certified interval encloses the larger,
 * tightly; the fast value is close */
static void test_mog_rdp(void **state)
{
    dpzo_ctx *ctx = *state;
    double worst = 0.0;
    for (size_t i = 0; i < sizeof MOG_RDP / sizeof *MOG_RDP; i++) {
        dpzo_event *e = mog(ctx, MOG_RDP[i].sigma, MOG_RDP[i].k, MOG_RDP[i].c, MOG_RDP[i].p);
        double fast, ref = fmax(MOG_RDP[i].fwd, MOG_RDP[i].rev);
        dpzo_bound b;
        rdp1(ctx, e, MOG_RDP[i].alpha, &fast, &b);
        double slack = 1e-15 * ref;
        if (!(b.lower <= ref + slack && b.upper >= ref - slack))
            fail_msg("row %zu: [%.17g, %.17g] does not enclose %.17g", i, b.lower, b.upper, ref);
        double w = (b.upper - b.lower) / ref;
        worst = w > worst ? w : worst;
        if (!(w <= 4e-3))
            fail_msg("row %zu: [%.17g, %.17g] is wide around %.17g", i, b.lower, b.upper, ref);
        assert_rel(fast, ref, 1e-3);
        assert_true(b.value >= b.lower && b.value <= b.upper);
        dpzo_event_free(e);
    }
    print_message("widest certified interval: %.3g of the value\n", worst);
}

/* c = {0, 1} is the Poisson-sampled Gaussian: against its binomial sum and dpzo's own */
static void test_mog_is_sgm(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof SGM_RDP / sizeof *SGM_RDP; i++) {
        double q = SGM_RDP[i].q, c[2] = {0.0, 1.0}, p[2] = {1.0 - q, q};
        dpzo_event *e = mog(ctx, SGM_RDP[i].sigma, 2, c, p);
        double fast, ref = SGM_RDP[i].rdp;
        dpzo_bound b, s;
        rdp1(ctx, e, SGM_RDP[i].alpha, &fast, &b);
        assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, q, SGM_RDP[i].sigma,
                                                           SGM_RDP[i].alpha, &s));
        if (!(b.lower <= ref * (1 + 1e-15) && b.upper >= ref * (1 - 1e-15)))
            fail_msg("q %g sigma %g alpha %g: [%.17g, %.17g] does not enclose %.17g", q,
                     SGM_RDP[i].sigma, SGM_RDP[i].alpha, b.lower, b.upper, ref);
        assert_true(b.lower <= s.upper && s.lower <= b.upper); /* the two paths agree */
        assert_rel(fast, ref, 1e-3);
        dpzo_event_free(e);
    }
}

static void test_mog_edges(void **state)
{
    dpzo_ctx *ctx = *state;
    double c0[2] = {0.0, 0.0}, p0[2] = {0.5, 0.5}, fast;
    dpzo_bound b;
    /* nothing released: every sensitivity 0 */
    dpzo_event *e = mog(ctx, 1.0, 2, c0, p0);
    rdp1(ctx, e, 4.0, &fast, &b);
    assert_true(fast == 0.0 && b.upper <= 1e-300); /* (the plan's sum nudges 0 an ulp up) */
    dpzo_event_free(e);
    /* no noise */
    double c1[2] = {0.0, 1.0};
    e = mog(ctx, 0.0, 2, c1, p0);
    rdp1(ctx, e, 4.0, &fast, &b);
    assert_true(isinf(fast) && isinf(b.upper));
    dpzo_event_free(e);
    /* p = 0 components are dropped; sums within 1e-9 of 1 are normalised */
    double c3[3] = {0.0, 5.0, 1.0}, p3[3] = {0.9, 0.0, 0.1 + 1e-10};
    e = mog(ctx, 1.0, 3, c3, p3);
    assert_non_null(e);
    char d[256];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "mixture_of_gaussians(sigma=1, [0:0.90000000000000002, "
                           "1:0.1000000001])");
    assert_int_equal(dpzo_event_get_kind(e), DPZO_EVENT_MIXTURE_OF_GAUSSIANS);
    rdp1(ctx, e, 2.0, &fast, &b);
    assert_true(b.upper < 0.0171 && b.lower > 0.0170); /* the q = 0.1 mixture at order 2 */
    dpzo_event_free(e);
    /* the Gaussian of the largest sensitivity caps it: one component, alpha c^2 / 2 s^2 */
    double c4[1] = {3.0}, p4[1] = {1.0};
    e = mog(ctx, 1.5, 1, c4, p4);
    rdp1(ctx, e, 10.0, &fast, &b);
    assert_true(b.lower <= 20.0 && b.upper >= 20.0 && b.upper <= 20.0 * (1 + 1e-12));
    dpzo_event_free(e);
    /* huge orders and tiny noise stay proven (the cap) and finite */
    e = mog(ctx, 1e-9, 2, c1, p0);
    rdp1(ctx, e, 1000.0, &fast, &b);
    assert_true(isfinite(b.upper) && b.upper >= fast);
    dpzo_event_free(e);
}

static void test_mog_bad(void **state)
{
    dpzo_ctx *ctx = *state;
    double c[2] = {0.0, 1.0}, p[2] = {0.5, 0.5};
    double cn[2] = {0.0, -1.0}, cnan[2] = {0.0, NAN}, cinf[2] = {0.0, INFINITY};
    double pbig[2] = {-0.5, 1.5}, psum[2] = {0.5, 0.4}, pnan[2] = {NAN, 0.5};
    struct { dpzo_event *e; const char *msg; } cases[] = {
        {dpzo_event_mixture_of_gaussians(ctx, 1.0, c, p, 0), "1 to 1024 components"},
        {dpzo_event_mixture_of_gaussians(ctx, 1.0, NULL, p, 2), "1 to 1024 components"},
        {dpzo_event_mixture_of_gaussians(ctx, 1.0, c, p, DPZO_MOG_MAX_COMPONENTS + 1),
         "1 to 1024 components"},
        {mog(ctx, -1.0, 2, c, p), "standard_deviation"},
        {mog(ctx, NAN, 2, c, p), "standard_deviation"},
        {mog(ctx, INFINITY, 2, c, p), "standard_deviation"},
        {mog(ctx, 1.0, 2, cn, p), "sensitivities[1]"},
        {mog(ctx, 1.0, 2, cnan, p), "sensitivities[1]"},
        {mog(ctx, 1.0, 2, cinf, p), "sensitivities[1]"},
        {mog(ctx, 1.0, 2, c, pbig), "sampling_probs[0]"},
        {mog(ctx, 1.0, 2, c, pnan), "sampling_probs[0]"},
        {mog(ctx, 1.0, 2, c, psum), "sum to 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].e != NULL)
            fail_msg("case %zu accepted", i);
        /* each constructor call overwrote the message: check the last one only fully */
    }
    assert_null(mog(ctx, 1.0, 2, c, psum));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sum to 1"));
    assert_null(mog(ctx, 1.0, 2, cn, p));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sensitivities[1]"));
    assert_null(mog(ctx, NAN, 2, c, p));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "standard_deviation"));
    /* not under a sampler: the RDP accountant samples Gaussians only */
    dpzo_event *s = dpzo_event_poisson_sampled(ctx, 0.1, mog(ctx, 1.0, 2, c, p));
    dpzo_dp_result r;
    assert_int_equal(dpzo_event_epsilon(ctx, s, 1e-5, NULL, &r), DPZO_EUNSUPPORTED);
    dpzo_event_free(s);
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

/* composition adds; the PLD/PRV compose the mixture's loss distribution */
static void test_mog_compose_and_fallback(void **state)
{
    dpzo_ctx *ctx = *state;
    double c[2] = {0.0, 1.0}, p[2] = {0.95, 0.05};
    dpzo_event *e = dpzo_event_self_composed(ctx, mog(ctx, 1.0, 2, c, p), 50);
    dpzo_event *one = mog(ctx, 1.0, 2, c, p);
    double a = 6.0, r50, r1;
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &a, 1, &r50));
    assert_ok(ctx, dpzo_event_rdp(ctx, one, &a, 1, &r1));
    assert_rel(r50, 50.0 * r1, 1e-14);
    dpzo_dp_result dr;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &dr));
    /* the mixture is the sampled Gaussian here: its (certified) epsilon is close to dpzo's
     * sampled-Gaussian epsilon, and not below it by more than the rounding */
    dpzo_event *g = sgm_event(ctx, 0.05, 1.0, 50);
    dpzo_dp_result gr;
    assert_ok(ctx, dpzo_event_epsilon(ctx, g, 1e-5, NULL, &gr));
    assert_rel(dr.epsilon, gr.epsilon, 2e-3);
    /* PLD and PRV: the mixture's own loss distribution (pld_source.c), whose intervals
     * must meet those of the sampled Gaussian's independent source, below RDP's */
    for (int prv = 0; prv < 2; prv++) {
        dpzo_pld_result r, rg;
        double pe = pld_eps(ctx, e, 1e-5, prv, &r), ge = pld_eps(ctx, g, 1e-5, prv, &rg);
        assert_false(r.fallback);
        if (!(r.epsilon_lower <= ge && rg.epsilon_lower <= pe && pe < dr.epsilon))
            fail_msg("%s: mixture [%.17g, %.17g], sampled Gaussian [%.17g, %.17g], RDP %.17g",
                     prv ? "prv" : "pld", r.epsilon_lower, pe, rg.epsilon_lower, ge, dr.epsilon);
    }
    dpzo_event_free(e);
    dpzo_event_free(one);
    dpzo_event_free(g);
}

static dpzo_event *tsg(dpzo_ctx *ctx, unsigned long long n, double q, unsigned long long B,
                       double sigma)
{
    return dpzo_event_truncated_subsampled_gaussian(ctx, n, q, B, sigma);
}

static void test_tsg(void **state)
{
    dpzo_ctx *ctx = *state;
    double fast;
    dpzo_bound b;
    /* the bound of docs/accountant.md 3.8, evaluated by mpmath: enclosed */
    for (size_t i = 0; i < sizeof TSG_BOUND / sizeof *TSG_BOUND; i++) {
        dpzo_event *e = tsg(ctx, TSG_BOUND[i].n, TSG_BOUND[i].q, TSG_BOUND[i].B,
                            TSG_BOUND[i].sigma);
        rdp1(ctx, e, TSG_BOUND[i].alpha, &fast, &b);
        double ref = TSG_BOUND[i].rdp, sl = 1e-12 * ref;
        if (!(b.lower <= ref + sl && b.upper >= ref - sl && b.upper - b.lower <= 1e-9 * ref))
            fail_msg("TSG_BOUND %zu: [%.17g, %.17g] against %.17g", i, b.lower, b.upper, ref);
        assert_rel(fast, ref, 1e-9);
        dpzo_event_free(e);
    }
    /* one concrete dataset pair (a lower bound on the truth): below dpzo's bound */
    for (size_t i = 0; i < sizeof TSG_TRUE / sizeof *TSG_TRUE; i++) {
        dpzo_event *e = tsg(ctx, TSG_TRUE[i].n, TSG_TRUE[i].q, TSG_TRUE[i].B, TSG_TRUE[i].sigma);
        rdp1(ctx, e, TSG_TRUE[i].alpha, &fast, &b);
        if (!(b.upper >= TSG_TRUE[i].rdp))
            fail_msg("TSG_TRUE %zu: bound %.17g below the instance's %.17g", i, b.upper,
                     TSG_TRUE[i].rdp);
        print_message("instance %zu: true %.6g, dpzo bound %.6g\n", i, TSG_TRUE[i].rdp,
                      b.upper);
        dpzo_event_free(e);
    }
    /* never truncated (B > n): exactly the Poisson-sampled Gaussian */
    dpzo_event *e = tsg(ctx, 100, 0.1, 101, 1.3);
    dpzo_event *g = dpzo_event_poisson_sampled(ctx, 0.1, dpzo_event_gaussian(ctx, 1.3));
    dpzo_bound s;
    double gfast;
    rdp1(ctx, e, 7.5, &fast, &b);
    rdp1(ctx, g, 7.5, &gfast, &s);
    assert_true(b.lower == s.lower && b.upper == s.upper && fast == gfast);
    dpzo_event_free(e);
    dpzo_event_free(g);
    /* nothing released; no noise */
    const unsigned long long zn[3][2] = {{0, 10}, {100, 0}, {100, 10}};
    for (int i = 0; i < 3; i++) {
        e = tsg(ctx, zn[i][0], i == 2 ? 0.0 : 0.5, zn[i][1], 1.0);
        rdp1(ctx, e, 3.0, &fast, &b);
        assert_true(fast == 0.0 && b.upper <= 1e-300);
        dpzo_event_free(e);
    }
    e = tsg(ctx, 100, 0.5, 10, 0.0);
    rdp1(ctx, e, 3.0, &fast, &b);
    assert_true(isinf(b.upper));
    char d[160];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "truncated_subsampled_gaussian(n=100, q=0.5, batch=10, sigma=0)");
    assert_int_equal(dpzo_event_get_kind(e), DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN);
    dpzo_event_free(e);
    /* bad inputs name the parameter */
    assert_null(tsg(ctx, 100, 1.5, 10, 1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sampling_probability"));
    assert_null(tsg(ctx, 100, NAN, 10, 1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "sampling_probability"));
    assert_null(tsg(ctx, 100, 0.1, 10, -1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "noise_multiplier"));
    assert_null(tsg(ctx, 100, 0.1, 10, INFINITY));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "noise_multiplier"));
    assert_null(tsg(ctx, (1ull << 53) + 1, 0.1, 10, 1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "dataset_size"));
    /* PLD/PRV: the dominating pair (pld_source.c), below RDP and above the sampled
     * Gaussian it mixes in; its lower end a concrete instance's, below that Gaussian's */
    e = dpzo_event_self_composed(ctx, tsg(ctx, 1000, 0.05, 60, 1.0), 20);
    dpzo_event *sg = sgm_event(ctx, 0.05, 1.0, 20);
    dpzo_dp_result dr;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &dr));
    for (int prv = 0; prv < 2; prv++) {
        dpzo_pld_result r, rg;
        double pe = pld_eps(ctx, e, 1e-5, prv, &r), ge = pld_eps(ctx, sg, 1e-5, prv, &rg);
        assert_false(r.fallback);
        assert_true(r.epsilon_lower > 0.0 && r.epsilon_lower <= ge);
        assert_non_null(strstr(r.reason, "concrete instance"));
        if (!(rg.epsilon_lower <= pe && pe < dr.epsilon))
            fail_msg("%s: truncated %.17g, sampled Gaussian [%.17g, %.17g], RDP %.17g",
                     prv ? "prv" : "pld", pe, rg.epsilon_lower, ge, dr.epsilon);
    }
    dpzo_event_free(sg);
    dpzo_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mog_rdp, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_mog_is_sgm, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_mog_edges, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_mog_bad, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_mog_compose_and_fallback, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_tsg, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
