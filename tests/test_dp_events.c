/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_dp_events.c: dp_accounting's simple events in the C algebra (issue 30, first
 * slice): non-private, zCDP, randomized response and discrete Laplace, through the RDP
 * accountant (fast and certified) and the PLD/PRV accountants (their fallback). References:
 * tests/ref/make_dp_events_reference.py (mpmath from the definitions). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/dp_events_values.h"

#define N_ORD 6
static const double ORD[N_ORD] = {1.01, 1.5, 2.0, 7.0, 64.0, 1000.0};

static void rdp1(dpzo_ctx *ctx, dpzo_event *e, double alpha, double *fast, dpzo_bound *cert)
{
    assert_non_null(e);
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &alpha, 1, fast));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, cert));
    dpzo_event_free(e);
}

/* the reference's 20 digits, as a double, may lie an ulp or two from the truth */
static void assert_encloses(dpzo_bound b, double ref)
{
    double slack = 4e-16 * fabs(ref);
    if (!(b.lower <= ref + slack && b.upper >= ref - slack))
        fail_msg("[%.17g, %.17g] does not enclose %.17g", b.lower, b.upper, ref);
    if (!(b.upper - b.lower <= 1e-13 * fabs(ref) + 1e-300))
        fail_msg("[%.17g, %.17g] is wide", b.lower, b.upper);
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

/* The PLD and PRV ends of a finite-PLD event (issue 30) around its exact epsilon: upper at
 * or above it, within the PLD's 1e-3 (the PRV's eps_error), and never above RDP's. */
static void check_tight(dpzo_ctx *ctx, const dpzo_event *e, double delta, double exact,
                        double rdp, const char *what)
{
    for (int prv = 0; prv < 2; prv++) {
        dpzo_pld_result r;
        double hi = pld_eps(ctx, e, delta, prv, &r);
        double tol = prv ? r.eps_error : fmax(1e-3 * exact, 1e-6);
        if (!(hi >= exact && r.epsilon_lower <= exact && hi <= rdp * (1.0 + 1e-12)
              && hi <= exact + tol))
            fail_msg("%s (%s) at delta %g: [%.17g, %.17g], exact %.17g, RDP %.17g", what,
                     prv ? "prv" : "pld", delta, r.epsilon_lower, hi, exact, rdp);
    }
}

static double rdp_eps(dpzo_ctx *ctx, const dpzo_event *e, double delta)
{
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, delta, NULL, &r));
    return r.epsilon;
}

static void test_non_private(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = dpzo_event_non_private(ctx);
    char d[64];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "non_private()");
    assert_int_equal(dpzo_event_get_kind(e), DPZO_EVENT_NON_PRIVATE);
    double r[N_ORD];
    dpzo_bound b[N_ORD];
    assert_ok(ctx, dpzo_event_rdp(ctx, e, ORD, N_ORD, r));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, ORD, N_ORD, b));
    for (int i = 0; i < N_ORD; i++)
        assert_true(isinf(r[i]) && isinf(b[i].upper) && isinf(b[i].lower));
    /* with a Gaussian beside it, still infinite, in every accountant */
    dpzo_event *list[2] = {e, dpzo_event_gaussian(ctx, 5.0)};
    dpzo_event *c = dpzo_event_composed(ctx, list, 2);
    assert_non_null(c);
    assert_true(isinf(rdp_eps(ctx, c, 1e-5)));
    dpzo_dp_result dr;
    assert_ok(ctx, dpzo_event_delta(ctx, c, 3.0, NULL, &dr));
    assert_true(dr.delta == 1.0);
    dpzo_pld_result pr;
    assert_true(isinf(pld_eps(ctx, c, 1e-5, 0, &pr)));
    assert_true(pr.epsilon_lower == INFINITY); /* proven: an unsampled release of the record */
    assert_true(isinf(pld_eps(ctx, c, 1e-5, 1, &pr)));
    dpzo_event_free(c);
    /* inside a sampling step: refused by the RDP accountant (it samples Gaussians only) */
    dpzo_event *s = dpzo_event_poisson_sampled(ctx, 0.1, dpzo_event_non_private(ctx));
    assert_int_equal(dpzo_event_epsilon(ctx, s, 1e-5, NULL, &dr), DPZO_EUNSUPPORTED);
    dpzo_event_free(s);
}

static void test_zcdp(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int i = 0; i < N_ORD; i++) {
        double f;
        dpzo_bound b;
        rdp1(ctx, dpzo_event_zcdp(ctx, 0.3, 0.01), ORD[i], &f, &b);
        double want = 0.01 + 0.3 * ORD[i];
        assert_rel(f, want, 1e-15);
        assert_true(b.lower <= want && b.upper >= want && b.upper <= want * (1 + 1e-15));
    }
    /* the conversion: never looser than the direct zCDP one, rho + 2 sqrt(rho log(1/delta))
     * (Bun-Steinke 2016, Prop. 1.3), and above the improved conversion's optimum lower bound */
    const double rhos[] = {1e-6, 1e-3, 0.05, 0.5, 2.0, 30.0};
    const double deltas[] = {1e-3, 1e-5, 1e-10};
    for (size_t i = 0; i < sizeof rhos / sizeof *rhos; i++)
        for (size_t j = 0; j < 3; j++) {
            dpzo_event *e = dpzo_event_zcdp(ctx, rhos[i], 0.0);
            double eps = rdp_eps(ctx, e, deltas[j]);
            double direct = rhos[i] + 2.0 * sqrt(rhos[i] * log(1.0 / deltas[j]));
            /* (eps 0 where the total variation bound sqrt(1 - e^-RDP) <= delta proves it) */
            if (!(eps <= direct && eps >= 0.0))
                fail_msg("rho %g delta %g: dpzo %.17g, direct %.17g", rhos[i], deltas[j], eps,
                         direct);
            /* the PLD and PRV answer with the RDP bound and say why */
            dpzo_pld_result r;
            double pe = pld_eps(ctx, e, deltas[j], 0, &r);
            assert_true(r.fallback);
            assert_non_null(strstr(r.reason, "zCDP"));
            assert_rel(pe, eps, 1e-12);
            pe = pld_eps(ctx, e, deltas[j], 1, &r);
            assert_true(r.fallback);
            assert_rel(pe, eps, 1e-12);
            dpzo_event_free(e);
        }
    /* monotone in rho */
    double prev = 0.0;
    for (double rho = 0.01; rho < 10.0; rho *= 1.7) {
        dpzo_event *e = dpzo_event_zcdp(ctx, rho, 0.0);
        double eps = rdp_eps(ctx, e, 1e-6);
        assert_true(eps > prev);
        prev = eps;
        dpzo_event_free(e);
    }
    /* rho = xi = 0 spends nothing; bad values are refused with the value named */
    dpzo_event *z = dpzo_event_zcdp(ctx, 0.0, 0.0);
    assert_true(rdp_eps(ctx, z, 1e-6) == 0.0);
    dpzo_pld_result r;
    assert_true(pld_eps(ctx, z, 1e-6, 0, &r) == 0.0);
    dpzo_event_free(z);
    assert_null(dpzo_event_zcdp(ctx, -1.0, 0.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "rho=-1"));
    assert_null(dpzo_event_zcdp(ctx, 1.0, NAN));
    assert_null(dpzo_event_zcdp(ctx, INFINITY, 0.0));
}

static void test_randomized_response(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof RR_RDP / sizeof *RR_RDP; i++) {
        double f;
        dpzo_bound b;
        rdp1(ctx, dpzo_event_randomized_response(ctx, RR_RDP[i].p, RR_RDP[i].k),
             RR_RDP[i].alpha, &f, &b);
        assert_rel(f, RR_RDP[i].rdp, 1e-11);
        assert_encloses(b, RR_RDP[i].rdp);
    }
    for (size_t i = 0; i < sizeof RR_EPS / sizeof *RR_EPS; i++) {
        dpzo_event *e = dpzo_event_randomized_response(ctx, RR_EPS[i].p, RR_EPS[i].k);
        double eps = rdp_eps(ctx, e, RR_EPS[i].delta);
        double pure = log1p((double)RR_EPS[i].k * (1.0 - RR_EPS[i].p) / RR_EPS[i].p);
        /* sound, and no looser than pure DP by more than the conversion term at the
         * largest order searched (alpha_max 1e5) */
        double slack = 2.0 * log(1.0 / RR_EPS[i].delta) / 1e5;
        if (!(eps >= RR_EPS[i].eps && eps <= pure + slack))
            fail_msg("RR %g %llu: dpzo %.17g, exact %.17g, pure %.17g", RR_EPS[i].p,
                     RR_EPS[i].k, eps, RR_EPS[i].eps, pure);
        /* PLD and PRV: randomized response's own finite PLD (issue 30) */
        check_tight(ctx, e, RR_EPS[i].delta, RR_EPS[i].eps, eps, "RR");
        dpzo_event_free(e);
    }
    /* edges: no noise is infinite (everywhere), p = 1 or k = 1 spends nothing */
    double f;
    dpzo_bound b;
    rdp1(ctx, dpzo_event_randomized_response(ctx, 0.0, 4), 2.0, &f, &b);
    assert_true(isinf(f) && isinf(b.upper));
    dpzo_event *e0 = dpzo_event_randomized_response(ctx, 0.0, 4);
    dpzo_pld_result r;
    assert_true(isinf(pld_eps(ctx, e0, 1e-5, 0, &r)));
    dpzo_event_free(e0);
    rdp1(ctx, dpzo_event_randomized_response(ctx, 1.0, 4), 2.0, &f, &b);
    assert_true(f == 0.0 && b.upper < 1e-300); /* the sum's upward nudge */
    rdp1(ctx, dpzo_event_randomized_response(ctx, 0.2, 1), 2.0, &f, &b);
    assert_true(f == 0.0 && b.upper < 1e-300); /* the sum's upward nudge */
    /* near p = 1 the certified bound stays positive (no rounding to a free release) */
    rdp1(ctx, dpzo_event_randomized_response(ctx, 1.0 - 0x1p-50, 2), 2.0, &f, &b);
    assert_true(b.upper > 0.0 && b.upper >= f);
    /* monotone: more noise (larger p) never costs more, more buckets never less at p fixed */
    for (int i = 0; i < N_ORD; i++) {
        double prev = INFINITY;
        for (double p = 0.01; p < 1.0; p += 0.07) {
            rdp1(ctx, dpzo_event_randomized_response(ctx, p, 7), ORD[i], &f, &b);
            assert_true(b.upper <= prev);
            prev = b.upper;
        }
    }
    assert_null(dpzo_event_randomized_response(ctx, 1.5, 2));
    assert_null(dpzo_event_randomized_response(ctx, 0.5, 0));
    assert_null(dpzo_event_randomized_response(ctx, NAN, 2));
}

static void test_discrete_laplace(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof DL_RDP / sizeof *DL_RDP; i++) {
        double f;
        dpzo_bound b;
        rdp1(ctx, dpzo_event_discrete_laplace(ctx, DL_RDP[i].t, DL_RDP[i].s), DL_RDP[i].alpha,
             &f, &b);
        assert_rel(f, DL_RDP[i].rdp, 1e-10);
        assert_encloses(b, DL_RDP[i].rdp);
    }
    for (size_t i = 0; i < sizeof DL_EPS / sizeof *DL_EPS; i++) {
        dpzo_event *e = dpzo_event_discrete_laplace(ctx, DL_EPS[i].t, DL_EPS[i].s);
        double eps = rdp_eps(ctx, e, DL_EPS[i].delta);
        double pure = DL_EPS[i].t * (double)DL_EPS[i].s;
        double slack = 2.0 * log(1.0 / DL_EPS[i].delta) / 1e5;
        if (!(eps >= DL_EPS[i].eps && eps <= pure + slack))
            fail_msg("DL %g %llu: dpzo %.17g, exact %.17g, pure %.17g", DL_EPS[i].t,
                     DL_EPS[i].s, eps, DL_EPS[i].eps, pure);
        check_tight(ctx, e, DL_EPS[i].delta, DL_EPS[i].eps, eps, "DL");
        dpzo_event_free(e);
    }
    double f;
    dpzo_bound b;
    rdp1(ctx, dpzo_event_discrete_laplace(ctx, 0.0, 3), 2.0, &f, &b);
    assert_true(isinf(f) && isinf(b.upper));
    rdp1(ctx, dpzo_event_discrete_laplace(ctx, 0.7, 0), 2.0, &f, &b);
    assert_true(f == 0.0 && b.upper < 1e-300); /* the sum's upward nudge */
    /* huge sensitivity: the closed geometric form, still below pure DP */
    rdp1(ctx, dpzo_event_discrete_laplace(ctx, 1e-9, UINT64_C(1) << 40), 3.0, &f, &b);
    assert_true(b.upper <= 1e-9 * 0x1p40 * (1 + 1e-15) && b.upper >= f && f > 0.0);
    /* monotone in t (less noise costs more) and in the sensitivity */
    for (int i = 0; i < N_ORD; i++) {
        double prev = 0.0;
        for (double t = 0.01; t < 20.0; t *= 1.9) {
            rdp1(ctx, dpzo_event_discrete_laplace(ctx, t, 3), ORD[i], &f, &b);
            assert_true(b.upper >= prev);
            prev = b.upper;
        }
        prev = 0.0;
        for (uint64_t s = 1; s < 100; s += 7) {
            rdp1(ctx, dpzo_event_discrete_laplace(ctx, 0.3, s), ORD[i], &f, &b);
            assert_true(b.upper >= prev);
            prev = b.upper;
        }
    }
    char d[96];
    dpzo_event *e = dpzo_event_discrete_laplace(ctx, 0.5, 3);
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "discrete_laplace(t=0.5, sensitivity=3)");
    dpzo_event_free(e);
    assert_null(dpzo_event_discrete_laplace(ctx, -1.0, 1));
    assert_null(dpzo_event_discrete_laplace(ctx, INFINITY, 1));
}

/* composition adds: a repeated and composed mix equals the weighted sum of its leaves */
static void test_compose_mix(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *list[3] = {
        dpzo_event_self_composed(ctx, dpzo_event_randomized_response(ctx, 0.4, 3), 5),
        dpzo_event_zcdp(ctx, 0.02, 0.0),
        dpzo_event_self_composed(ctx, dpzo_event_discrete_laplace(ctx, 0.8, 2), 3)};
    dpzo_event *c = dpzo_event_composed(ctx, list, 3);
    double r[N_ORD], a[N_ORD], z[N_ORD], l[N_ORD];
    assert_ok(ctx, dpzo_event_rdp(ctx, c, ORD, N_ORD, r));
    dpzo_event *ea = dpzo_event_randomized_response(ctx, 0.4, 3);
    dpzo_event *ez = dpzo_event_zcdp(ctx, 0.02, 0.0);
    dpzo_event *el = dpzo_event_discrete_laplace(ctx, 0.8, 2);
    assert_ok(ctx, dpzo_event_rdp(ctx, ea, ORD, N_ORD, a));
    assert_ok(ctx, dpzo_event_rdp(ctx, ez, ORD, N_ORD, z));
    assert_ok(ctx, dpzo_event_rdp(ctx, el, ORD, N_ORD, l));
    for (int i = 0; i < N_ORD; i++)
        assert_rel(r[i], 5 * a[i] + z[i] + 3 * l[i], 1e-14);
    char d[256];
    dpzo_event_describe(c, d, sizeof d);
    assert_string_equal(d, "compose[repeat(5, randomized_response(p=0.40000000000000002, k=3)), "
                           "zcdp(rho=0.02, xi=0), repeat(3, discrete_laplace(t=0.80000000000000004, "
                           "sensitivity=2))]");
    dpzo_event_free(c);
    dpzo_event_free(ea);
    dpzo_event_free(ez);
    dpzo_event_free(el);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_non_private, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_zcdp, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_randomized_response, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_discrete_laplace, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_compose_mix, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
