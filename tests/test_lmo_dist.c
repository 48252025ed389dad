/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_lmo_dist.c: the LMO noise distribution: density/cdf, moments, eps0 and the
 * samplers (noisesearch/lmo_mgf.c, lmo_stats.c, lmo_sample.c).
 *
 * References: the spec anchors (lmo-dp.md sections 1.3, 5.5, 5.8) and mpmath values at
 * 50 digits from tests/ref/make_lmo_dist_reference.py (tests/ref/lmo_dist_values.h).
 * Tolerances:
 *   log pdf, cdf, sf, usefulness, E[Y]: 1e-12 relative. These are closed forms in
 *     double; the error is a few ulps times |log M_Y| (up to ~4e4 at x = -1e4), so
 *     1e-12 is honest with a margin of ~10x on the worst case measured.
 *   E|X|, Var X: 1e-12 relative. The quadrature is asked for 1e-10 (the documented
 *     accuracy), but Gauss-Kronrod on these smooth pieces lands far below: the worst
 *     error measured over every case here is 1.1e-14 (E[1/Y^2] ~ 1e100 of U(1e-100, 3)),
 *     most are ~2e-16.
 *   eps0: the interval (128-bit MPFR) must contain the 45-digit mpmath value and be
 *     narrower than 1e-25 relative; the public doubles must contain the nearest double.
 *   Spec anchors: half a unit of the last printed digit. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include "testutil.h"
#include "lmo_internal.h"
#include "ref/lmo_dist_values.h"

/* Private functions of lmo_stats.c / lmo_sample.c (not in lmo_internal.h). */

/* A profile in the spec table's order (wG, wE, wU; theta, k; lam; ua, ub). */
static dpzo_lmo L(double wG, double wE, double wU, double theta, double k, double lam,
                  double a, double b)
{
    dpzo_lmo l = {.gamma_weight = wG, .gamma_shape = k, .gamma_scale = theta,
                  .exp_weight = wE, .exp_rate = lam,
                  .uniform_weight = wU, .uniform_low = a, .uniform_high = b};
    return l;
}

static dpzo_lmo ref_lmo(const dpzo_lmo_ref_profile *r)
{
    return L(r->wG, r->wE, r->wU, r->theta, r->k, r->lam, r->a, r->b);
}

/* |got - want| <= half (a half unit of the last printed digit) */
#define assert_digits(got, want, half)                                                    \
    do {                                                                                  \
        double g2_ = (got), w2_ = (want), h2_ = (half) * (1.0 + 1e-9);                    \
        if (!(fabs(g2_ - w2_) <= h2_))                                                    \
            fail_msg("%s = %.12g, expected %.12g +- %g", #got, g2_, w2_, (half));         \
    } while (0)

/* relative, or exact 0 / inf */
static void check_rel(const char *what, const char *name, double got, double want, double rtol)
{
    if (isinf(want)) {
        if (!(isinf(got) && got > 0))
            fail_msg("%s (%s) = %.17g, expected +inf", what, name, got);
        return;
    }
    if (want == 0.0) {
        if (!(got >= 0.0 && got < 1e-300))
            fail_msg("%s (%s) = %.17g, expected 0", what, name, got);
        return;
    }
    if (!(isfinite(got) && fabs(got - want) <= rtol * fabs(want)))
        fail_msg("%s (%s) = %.17g, expected %.17g (rel err %.3g > %g)", what, name, got, want,
                 fabs(got - want) / fabs(want), rtol);
}

/* ---- spec anchors -------------------------------------------------------------- */

static void test_spec_density_anchors(void **state)
{
    (void)state;
    dpzo_lmo l = L(.1, .1, .1, .5, 1, 5, 1, 2); /* task1 eps0.3 */
    assert_rel(dpzo_lmo_pdf(&l, 0.0), 0.11, 1e-14);
    assert_digits(dpzo_lmo_pdf(&l, 1.0), 0.0869885130929, 0.5e-13);
    assert_digits(exp(dpzo_lmo_log_mgf(&l, -0.9)), 0.821585452916, 0.5e-12);
    assert_digits(dpzo_lmo_log_mgf(&l, 1.0), 0.221912633655, 0.5e-12);
    assert_rel(dpzo_lmo_pdf(&l, 1.0), dpzo_lmo_pdf(&l, -1.0), 0.0);
}

typedef struct {
    const char *name;
    dpzo_lmo l;
    double mean_abs, mean_abs_half, usef, usef_half;
} spec_stats_row;

static void test_spec_stats_anchors(void **state)
{
    dpzo_ctx *ctx = *state;
    /* spec section 5.8 (rate convention): E|X| to 5 decimals, U_0.9 to 9 */
    const spec_stats_row rows[] = {
        {"eps0.3", L(.1, .1, .1, .5, 1, 5, 1, 2), 4.87415, 0.5e-5, 0.178414547, 0.5e-9},
        {"eps0.7", L(.1, .1, .1, .5, 1, 5, 5, 6), 1.62743, 0.5e-5, 0.426799280, 0.5e-9},
        {"eps2", L(.1, .1, .2, 1, 2, 5, 7, 8), 0.58575, 0.5e-5, 0.785371290, 0.5e-9},
        {"eps3", L(.1, .1, .9, 1, 2, 5, 2, 3), 0.41078, 0.5e-5, 0.887859838, 0.5e-9},
        {"eps5", L(.1, .9, .7, 7.5, 1, 1, 6, 7), 0.16647, 0.5e-5, 0.994414922, 0.5e-9},
        {"ou0.3", L(.1, .9, .1, 7.5, 1, 1, 1, 2), 0.87201, 0.5e-5, 0.711714086, 0.5e-9},
        {"ou0.7", L(.1, .9, .1, 7.5, 1, 1, 5, 6), 0.58600, 0.5e-5, 0.798869742, 0.5e-9},
        {"ou2", L(.1, .9, .2, 7.5, 1, 1, 8, 9), 0.33044, 0.5e-5, 0.928480874, 0.5e-9},
        {"ou3", L(.3, .1, .3, 3, 2, 5, 8, 9), 0.24567, 0.5e-5, 0.969695466, 0.5e-9},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        dpzo_lmo_stats s;
        assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &rows[i].l, 0.9, &s));
        if (fabs(s.mean_abs - rows[i].mean_abs) > rows[i].mean_abs_half * (1 + 1e-9) ||
            fabs(s.usefulness - rows[i].usef) > rows[i].usef_half * (1 + 1e-9))
            fail_msg("%s: E|X| = %.10g (spec %.5f), U = %.12g (spec %.9f)", rows[i].name,
                     s.mean_abs, rows[i].mean_abs, s.usefulness, rows[i].usef);
        assert_true(s.gamma == 0.9);
        assert_true(isfinite(s.variance) && s.variance > s.mean_abs * s.mean_abs);
    }
}

static void test_spec_eps0_anchors(void **state)
{
    dpzo_ctx *ctx = *state;
    const struct {
        dpzo_lmo l;
        double eps0;
    } rows[] = {
        /* section 5.8 table (rate) */
        {L(.1, .1, .1, .5, 1, 5, 1, 2), 0.234704},
        {L(.1, .1, .1, .5, 1, 5, 5, 6), 0.624010},
        {L(.1, .1, .2, 1, 2, 5, 7, 8), 1.721574},
        {L(.1, .1, .9, 1, 2, 5, 2, 3), 2.461992},
        {L(.1, .9, .7, 7.5, 1, 1, 6, 7), 5.867112},
        {L(.1, .9, .1, 7.5, 1, 1, 1, 2), 1.888696},
        {L(.1, .9, .1, 7.5, 1, 1, 5, 6), 2.166966},
        {L(.1, .9, .2, 7.5, 1, 1, 8, 9), 3.153666},
        {L(.3, .1, .3, 3, 2, 5, 8, 9), 4.069056},
        /* the other fig6 files */
        {L(.1, .1, .1, 7.5, 1, .5, 0, 1), 1.230949},
        {L(.1, .1, .9, 2, 2, 1, 1, 2), 1.856504},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        dpzo_bound b;
        assert_ok(ctx, dpzo_lmo_eps0(ctx, &rows[i].l, 1.0, &b));
        assert_digits(b.value, rows[i].eps0, 0.5e-6);
        assert_true(b.lower <= b.value && b.value <= b.upper);
    }
    /* fig6 series (.1,.1,.1; .5,1; 5; b-1, b), b = 1..9 */
    const double fig6[9] = {0.148690, 0.234704, 0.329510, 0.426800, 0.525136,
                            0.624010, 0.723198, 0.822584, 0.922104};
    for (int b = 1; b <= 9; b++) {
        dpzo_lmo l = L(.1, .1, .1, .5, 1, 5, b - 1, b);
        dpzo_bound e;
        assert_ok(ctx, dpzo_lmo_eps0(ctx, &l, 1.0, &e));
        assert_digits(e.value, fig6[b - 1], 0.5e-6);
    }
}

/* ---- mpmath references -------------------------------------------------------- */

static void test_ref_density(void **state)
{
    (void)state;
    for (size_t i = 0; i < DPZO_LMO_REF_N; i++) {
        const dpzo_lmo_ref_profile *r = &DPZO_LMO_REF[i];
        dpzo_lmo l = ref_lmo(r);
        for (size_t j = 0; j < 6; j++) {
            double x = DPZO_LMO_REF_XS[j];
            check_rel("log_pdf", r->name, dpzo_lmo_log_pdf(&l, x), r->log_pdf[j], 1e-12);
            check_rel("cdf", r->name, dpzo_lmo_cdf(&l, x), r->cdf[j], 1e-12);
            check_rel("sf", r->name, dpzo_lmo_sf(&l, x), r->sf[j], 1e-12);
            check_rel("pdf", r->name, dpzo_lmo_pdf(&l, x), exp(r->log_pdf[j]), 1e-12);
        }
    }
}

static void test_ref_moments(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < DPZO_LMO_REF_N; i++) {
        const dpzo_lmo_ref_profile *r = &DPZO_LMO_REF[i];
        dpzo_lmo l = ref_lmo(r);
        dpzo_lmo_stats s;
        assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &l, 0.9, &s));
        check_rel("mean_y", r->name, s.mean_y, r->mean_y, 1e-14);
        check_rel("mean_abs", r->name, s.mean_abs, r->mean_abs, 1e-12);
        check_rel("variance", r->name, s.variance, r->variance, 1e-12);
        check_rel("usefulness", r->name, s.usefulness, r->usefulness, 1e-12);
    }
}

/* lo <= v <= hi with v the decimal string (45 digits: slack 1e-44 relative) */
static void check_encloses(const char *name, const ival *e, const char *str)
{
    mpfr_t v, slack;
    mpfr_init2(v, 256);
    mpfr_init2(slack, 256);
    mpfr_set_str(v, str, 10, MPFR_RNDN);
    mpfr_mul_d(slack, v, 1e-44, MPFR_RNDN);
    mpfr_abs(slack, slack, MPFR_RNDN);
    mpfr_t lo, hi;
    mpfr_init2(lo, 256);
    mpfr_init2(hi, 256);
    mpfr_sub(lo, v, slack, MPFR_RNDN);
    mpfr_add(hi, v, slack, MPFR_RNDN);
    int ok = mpfr_cmp(e->lo, hi) <= 0 && mpfr_cmp(e->hi, lo) >= 0;
    /* width relative to the value */
    mpfr_sub(lo, e->hi, e->lo, MPFR_RNDU);
    mpfr_div(lo, lo, v, MPFR_RNDU);
    double width = mpfr_get_d(lo, MPFR_RNDU);
    mpfr_clears(v, slack, lo, hi, (mpfr_ptr)0);
    if (!ok)
        fail_msg("%s: eps0 enclosure [%.17g, %.17g] misses %s", name, ival_lo_d(e),
                 ival_hi_d(e), str);
    if (!(width >= 0.0 && width < 1e-25))
        fail_msg("%s: eps0 enclosure relative width %.3g >= 1e-25", name, width);
}

static void test_ref_eps0(void **state)
{
    dpzo_ctx *ctx = *state;
    ival e;
    ival_init(&e, DPZO_LMO_PREC);
    for (size_t i = 0; i < DPZO_LMO_REF_N; i++) {
        const dpzo_lmo_ref_profile *r = &DPZO_LMO_REF[i];
        dpzo_lmo l = ref_lmo(r);
        for (size_t j = 0; j < 2; j++) {
            double c = DPZO_LMO_REF_CS[j];
            assert_int_equal(dpzo__lmo_eps0_ival(&l, c, &e), 0);
            check_encloses(r->name, &e, r->eps0_str[j]);
            dpzo_bound b, v;
            assert_ok(ctx, dpzo_lmo_eps0(ctx, &l, c, &b));
            assert_true(b.lower <= r->eps0[j] && r->eps0[j] <= b.upper);
            assert_true(b.upper - b.lower <= 4 * (nextafter(b.upper, INFINITY) - b.upper));
            check_rel("eps0", r->name, b.value, r->eps0[j], 1e-15);
            assert_ok(ctx, dpzo_lmo_eps0_vector(ctx, &l, c, &v));
            assert_true(v.lower <= r->eps0_vector[j] && r->eps0_vector[j] <= v.upper);
            check_rel("eps0_vector", r->name, v.value, r->eps0_vector[j], 1e-15);
            /* eps0 is concave with eps0'(0) = E[Y^2]/E[Y]: the vector bound is above */
            assert_true(b.upper < v.lower);
        }
    }
    for (size_t i = 0; i < DPZO_LMO_REF_EPS0_N; i++) {
        const dpzo_lmo_ref_eps0 *r = &DPZO_LMO_REF_EPS0[i];
        dpzo_lmo l = L(r->wG, r->wE, r->wU, r->theta, r->k, r->lam, r->a, r->b);
        assert_int_equal(dpzo__lmo_eps0_ival(&l, 1.0, &e), 0);
        check_encloses(r->name, &e, r->eps0_str);
    }
    ival_clear(&e);
}

/* ---- closed forms and the finiteness rule ---------------------------------------- */

static void test_gamma_closed_forms(void **state)
{
    dpzo_ctx *ctx = *state;
    /* Gamma only: E[1/Y] = 1/(c (k-1)), E[1/Y^2] = 1/(c^2 (k-1)(k-2)), c = wG theta */
    const struct {
        double wG, theta, k;
    } g[] = {
        {0.4, 0.7, 3.5}, {0.5, 2.0, 1.2}, {1.0, 1.0, 1.01}, {0.3, 3.0, 2.05},
        {0.2, 0.02, 50.0}, {0.8, 5.0, 2.0}, {1.0, 1.0, 1.0}, {0.3, 2.0, 0.5},
        {0.1, 1.0, 1.0 + 1e-3}, {2.0, 0.25, 1000.0}, {1.0, 1.0, 1.0 + 1e-6},
        {1.0, 1.0, 2.0 + 1e-4}, {1e-6, 1.0, 3.0}, {1e6, 1.0, 3.0},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        dpzo_lmo l = L(g[i].wG, 0, 0, g[i].theta, g[i].k, 1, 0, 1);
        double c = g[i].wG * g[i].theta, k = g[i].k;
        double m1 = k > 1 ? 1.0 / (c * (k - 1)) : INFINITY;
        double m2 = k > 2 ? 2.0 / (c * c * (k - 1) * (k - 2)) : INFINITY;
        dpzo_lmo_stats s;
        char name[64];
        snprintf(name, sizeof name, "gamma k=%g", k);
        assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &l, 0.9, &s));
        check_rel("mean_abs", name, s.mean_abs, m1, 1e-12);
        check_rel("variance", name, s.variance, m2, 1e-12);
        check_rel("mean_y", name, s.mean_y, c * k, 1e-15);
        /* U = 1 - (1 + 0.9 c)^-k */
        check_rel("usefulness", name, s.usefulness, -expm1(-k * log1p(0.9 * c)), 1e-13);
    }
}

static void test_infinite_moments(void **state)
{
    dpzo_ctx *ctx = *state;
    /* (lmo, E|X| finite?, Var finite?): nu = k[G] + 1[E] + 1[U with a = 0]; ymin > 0
     * makes everything finite */
    const struct {
        dpzo_lmo l;
        int m1, m2;
    } rows[] = {
        {L(0, 1, 0, 1, 1, 2, 0, 1), 0, 0},        /* Exp only: nu = 1 */
        {L(0, 0, 1, 1, 1, 1, 0, 3), 0, 0},        /* U(0, b) only: nu = 1 */
        {L(0, 0, 1, 1, 1, 1, 1e-3, 3), 1, 1},     /* U(a > 0, b): ymin > 0 */
        {L(0, .5, .8, 1, 1, 2, 0, 1), 1, 0},      /* Exp + U(0, 1): nu = 2 */
        {L(.5, .5, 0, 1, 0.5, 2, 0, 1), 1, 0},    /* Gamma(0.5) + Exp: nu = 1.5 */
        {L(.5, .5, 0, 1, 1e-300, 2, 0, 1), 1, 0}, /* nu = 1 + 1e-300: rule is exact */
        {L(.5, .5, .5, 1, 0.5, 2, 0, 1), 1, 1},   /* nu = 2.5 */
        {L(.5, .5, .5, 1, 0.5, 2, 0.5, 1), 1, 1}, /* ymin > 0 */
        {L(.5, 0, .5, 1, 1.0, 2, 0, 1), 1, 0},    /* nu = 2 exactly */
        {L(.5, 0, 0, 1, 0.999, 2, 0, 1), 0, 0},   /* nu < 1 */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        dpzo_lmo_stats s;
        dpzo_status st = dpzo_lmo_stats_compute(ctx, &rows[i].l, 0.9, &s);
        if (i == 5) {
            /* E[1/Y] ~ 1/(nu - 1) = 1e300: finite but beyond any quadrature */
            assert_true(st == DPZO_OK || st == DPZO_ENOCONV);
            if (st == DPZO_ENOCONV)
                continue;
        } else {
            assert_ok(ctx, st);
        }
        if (rows[i].m1 != (isfinite(s.mean_abs) != 0) || rows[i].m2 != (isfinite(s.variance) != 0))
            fail_msg("row %zu: E|X| = %g, Var = %g; expected finite: %d, %d", i, s.mean_abs,
                     s.variance, rows[i].m1, rows[i].m2);
        if (!isfinite(s.mean_abs))
            assert_true(isinf(s.mean_abs) && s.mean_abs > 0);
        if (!isfinite(s.variance))
            assert_true(isinf(s.variance) && s.variance > 0);
        if (isfinite(s.variance))
            assert_true(s.variance > s.mean_abs * s.mean_abs);
    }
    /* U(a, b) only, in closed form: E[1/Y] = log(b/a)/(wU (b - a)), E[1/Y^2] = 1/(wU^2 a b) */
    dpzo_lmo u = L(0, 0, 1.5, 1, 1, 1, 1e-3, 3);
    dpzo_lmo_stats s;
    assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &u, 0.5, &s));
    assert_rel(s.mean_abs, log(3.0 / 1e-3) / (1.5 * (3 - 1e-3)), 1e-12);
    assert_rel(s.variance, 2.0 / (1.5 * 1.5 * 1e-3 * 3), 1e-12);
    /* ymin = 1.5e-100: Var X = 1.3e100, still to the full accuracy */
    u.uniform_low = 1e-100;
    assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &u, 0.5, &s));
    assert_rel(s.mean_abs, log(3.0 / 1e-100) / (1.5 * 3), 1e-12);
    assert_rel(s.variance, 2.0 / (1.5 * 1.5 * 1e-100 * 3), 1e-12);
}

/* ---- consistency ------------------------------------------------------------------ */

static double pdf_fn(double x, void *p) { return dpzo_lmo_pdf(p, x); }

static void test_normalisation_and_cdf(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    dpzo_lmo ls[2] = {L(.1, .1, .1, .5, 1, 5, 1, 2), L(.3, .2, .5, 2, 1.5, 3, 0, 2)};
    for (int i = 0; i < 2; i++) {
        gsl_function F = {.function = pdf_fn, .params = &ls[i]};
        double r1, r2, err;
        assert_int_equal(gsl_integration_qags(&F, 0, 10, 0, 1e-12, 1000, ws, &r1, &err), 0);
        assert_int_equal(gsl_integration_qagiu(&F, 10, 0, 1e-12, 1000, ws, &r2, &err), 0);
        assert_rel(2 * (r1 + r2), 1.0, 1e-10);
        /* P(X <= 3) - P(X <= -2) = int_{-2}^{3} f */
        assert_int_equal(gsl_integration_qags(&F, -2, 3, 0, 1e-12, 1000, ws, &r1, &err), 0);
        assert_rel(dpzo_lmo_cdf(&ls[i], 3) - dpzo_lmo_cdf(&ls[i], -2), r1, 1e-11);
        double prev = 0.0;
        for (double x = -60; x <= 60; x += 0.01) {
            double c = dpzo_lmo_cdf(&ls[i], x), s = dpzo_lmo_sf(&ls[i], x);
            assert_true(c >= prev && c >= 0.0 && c <= 1.0);
            prev = c;
            assert_true(fabs(c + s - 1.0) <= 2e-16);
            assert_true(dpzo_lmo_pdf(&ls[i], x) == dpzo_lmo_pdf(&ls[i], -x));
            assert_true(dpzo_lmo_sf(&ls[i], x) == dpzo_lmo_cdf(&ls[i], -x));
        }
        /* cdf' = pdf (central difference) */
        for (double x = -7.3; x < 8; x += 1.1) {
            double h = 1e-5;
            double d = (dpzo_lmo_cdf(&ls[i], x + h) - dpzo_lmo_cdf(&ls[i], x - h)) / (2 * h);
            assert_rel(d, dpzo_lmo_pdf(&ls[i], x), 1e-6);
        }
    }
    gsl_integration_workspace_free(ws);
}

static void test_domain_edges(void **state)
{
    (void)state;
    /* Gamma edge at t = 1/(wG theta) = 4 exactly (0.5 * 0.5 * 4 == 1 in double) */
    dpzo_lmo g = L(.5, .25, .3, .5, 2, 2, 1, 2); /* Exp edge at lam/wE = 8 */
    assert_true(isfinite(dpzo_lmo_log_mgf(&g, nextafter(4.0, 0.0))));
    assert_true(dpzo_lmo_log_mgf(&g, nextafter(4.0, 0.0)) > 30.0); /* -k log(2^-52)-ish */
    assert_true(isinf(dpzo_lmo_log_mgf(&g, 4.0)) && dpzo_lmo_log_mgf(&g, 4.0) > 0);
    assert_true(isinf(dpzo_lmo_log_mgf(&g, 5.0)));
    assert_true(isinf(dpzo_lmo_dlog_mgf(&g, 4.0)));
    assert_true(isfinite(dpzo_lmo_dlog_mgf(&g, nextafter(4.0, 0.0))));
    dpzo_lmo e = L(0, .25, .3, 1, 1, 2, 1, 2);
    assert_true(isfinite(dpzo_lmo_log_mgf(&e, nextafter(8.0, 0.0))));
    assert_true(isinf(dpzo_lmo_log_mgf(&e, 8.0)) && dpzo_lmo_log_mgf(&e, 8.0) > 0);
    assert_true(isinf(dpzo_lmo_log_mgf(&e, 1e300)));
    assert_true(isinf(dpzo_lmo_dlog_mgf(&e, 8.0)));
    assert_true(isfinite(dpzo_lmo_log_mgf(&e, -1e300)));
    /* the interval versions agree on the edges */
    ival t, out;
    ival_init(&t, DPZO_LMO_PREC);
    ival_init(&out, DPZO_LMO_PREC);
    ival_set_d(&t, 4.0);
    assert_int_equal(dpzo__lmo_log_mgf_ival(&g, &t, &out), 1);
    ival_set_d(&t, nextafter(4.0, 0.0));
    assert_int_equal(dpzo__lmo_log_mgf_ival(&g, &t, &out), 0);
    ival_set_d(&t, 8.0);
    assert_int_equal(dpzo__lmo_log_mgf_ival(&e, &t, &out), 1);
    ival_clear(&t);
    ival_clear(&out);

    /* M_U at wU t = +-900 with U(8, 9): no overflow (e^{8100} is far beyond double) */
    dpzo_lmo u = L(0, 0, .9, 1, 1, 1, 8, 9);
    double s = 900.0;
    assert_rel(dpzo_lmo_log_mgf(&u, 1000.0), s * 9 + log1p(-exp(-s)) - log(s), 1e-14);
    assert_rel(dpzo_lmo_log_mgf(&u, -1000.0), -s * 8 + log1p(-exp(-s)) - log(s), 1e-14);
    assert_rel(dpzo_lmo_dlog_mgf(&u, 1000.0), 0.9 * (9 - 1 / s), 1e-14);
    assert_rel(dpzo_lmo_dlog_mgf(&u, -1000.0), 0.9 * (8 + 1 / s), 1e-14);
    assert_true(dpzo_lmo_log_mgf(&u, 0.0) == 0.0);
}

static void test_validation(void **state)
{
    dpzo_ctx *ctx = *state;
    const dpzo_lmo good = L(.1, .1, .1, .5, 1, 5, 1, 2);
    assert_ok(ctx, dpzo_lmo_validate(ctx, &good));
    dpzo_lmo bad[10];
    for (int i = 0; i < 10; i++)
        bad[i] = good;
    bad[0].gamma_weight = NAN;
    bad[1].exp_weight = -0.1;
    bad[2].gamma_weight = bad[2].exp_weight = bad[2].uniform_weight = 0.0;
    bad[3].uniform_low = 2.0; /* a == b */
    bad[4].uniform_low = 3.0; /* a > b */
    bad[5].exp_rate = 0.0;
    bad[6].gamma_shape = NAN;
    bad[7].gamma_scale = -1.0;
    bad[8].uniform_high = INFINITY;
    bad[9].uniform_low = -0.5;
    dpzo_lmo_stats s;
    dpzo_bound b;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(dpzo_lmo_validate(ctx, &bad[i]), DPZO_EINVAL);
        assert_true(strlen(dpzo_ctx_errmsg(ctx)) > 0);
        assert_int_equal(dpzo_lmo_stats_compute(ctx, &bad[i], 0.9, &s), DPZO_EINVAL);
        assert_int_equal(dpzo_lmo_eps0(ctx, &bad[i], 1.0, &b), DPZO_EINVAL);
        assert_int_equal(dpzo_lmo_eps0_vector(ctx, &bad[i], 1.0, &b), DPZO_EINVAL);
        assert_null(dpzo_lmo_sampler_seeded(ctx, &bad[i], 1));
        assert_null(dpzo_lmo_sampler_secure(ctx, &bad[i]));
    }
    assert_int_equal(dpzo_lmo_validate(ctx, NULL), DPZO_EINVAL);
    /* a zero weight drops its component's parameters from the check */
    dpzo_lmo z = L(0, .5, 0, NAN, -1, 2, 5, 1);
    assert_ok(ctx, dpzo_lmo_validate(ctx, &z));
    /* gamma and C */
    const double badc[] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(dpzo_lmo_stats_compute(ctx, &good, badc[i], &s), DPZO_EINVAL);
        assert_int_equal(dpzo_lmo_eps0(ctx, &good, badc[i], &b), DPZO_EINVAL);
        assert_int_equal(dpzo_lmo_eps0_vector(ctx, &good, badc[i], &b), DPZO_EINVAL);
    }
}

/* ---- samplers ----------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sup |F_n - F|, sorting x */
static double ks_stat(const dpzo_lmo *l, double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = dpzo_lmo_cdf(l, x[i]);
        d = fmax(d, fmax(f - (double)i / n, (double)(i + 1) / n - f));
    }
    return d;
}

/* KS below the 0.1% critical value; mean |X| and P(|X| <= 0.9) within 5 SE. */
static void check_sample(dpzo_ctx *ctx, const char *name, const dpzo_lmo *l, double *x,
                         size_t n, int check_mean)
{
    double sa = 0, sa2 = 0, hit = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(isfinite(x[i]));
        sa += fabs(x[i]);
        sa2 += x[i] * x[i];
        hit += fabs(x[i]) <= 0.9;
    }
    dpzo_lmo_stats s;
    assert_ok(ctx, dpzo_lmo_stats_compute(ctx, l, 0.9, &s));
    double m = sa / n;
    double se = sqrt((sa2 / n - m * m) / n);
    if (check_mean && !(fabs(m - s.mean_abs) <= 5 * se))
        fail_msg("%s: mean |X| = %.6g, E|X| = %.6g, 5 SE = %.3g", name, m, s.mean_abs, 5 * se);
    double p = hit / n, sep = sqrt(s.usefulness * (1 - s.usefulness) / n);
    if (!(fabs(p - s.usefulness) <= 5 * sep))
        fail_msg("%s: P(|X| <= 0.9) = %.6g, usefulness %.6g, 5 SE = %.3g", name, p,
                 s.usefulness, 5 * sep);
    double d = ks_stat(l, x, n), crit = 1.949 / sqrt((double)n);
    if (!(d < crit))
        fail_msg("%s: KS D = %.5g >= %.5g (n = %zu)", name, d, crit, n);
}

static void test_seeded_sampler(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 200000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    /* task1 eps0.3: lam = 5, so drawing Exp with MEAN lam (the paper's bug) would show */
    dpzo_lmo l = L(.1, .1, .1, .5, 1, 5, 1, 2);
    dpzo_lmo_sampler *a = dpzo_lmo_sampler_seeded(ctx, &l, 20240611);
    dpzo_lmo_sampler *b = dpzo_lmo_sampler_seeded(ctx, &l, 20240611);
    dpzo_lmo_sampler *c = dpzo_lmo_sampler_seeded(ctx, &l, 20240612);
    assert_non_null(a);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, 1000));
    assert_ok(ctx, dpzo_lmo_sample(ctx, b, y, 1000));
    assert_memory_equal(x, y, 1000 * sizeof *x);
    assert_ok(ctx, dpzo_lmo_sample(ctx, c, y, 1000));
    size_t same = 0;
    for (size_t i = 0; i < 1000; i++)
        same += x[i] == y[i];
    assert_true(same < 5);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, 0));
    assert_int_equal(dpzo_lmo_sample(ctx, a, NULL, 5), DPZO_EINVAL);
    assert_int_equal(dpzo_lmo_sample(ctx, NULL, x, 5), DPZO_EINVAL);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, n));
    check_sample(ctx, "task1 eps0.3", &l, x, n, 1);
    dpzo_lmo_sampler_free(a);
    dpzo_lmo_sampler_free(b);
    dpzo_lmo_sampler_free(c);

    /* ua = 0, Gamma k = 1.5 (GSL's k >= 1 branch); Gamma k = 0.05 (k < 1 branch), with
     * a heavy-tailed |X| (Var finite but 2e2): KS and usefulness only for that one */
    const struct {
        const char *name;
        dpzo_lmo l;
        int mean;
    } more[] = {
        {"all_ua0", L(.3, .2, .5, 2, 1.5, 3, 0, 2), 1},
        {"heavy_var", L(.6, .3, .4, 1.5, 0.05, 2, 0, 3), 0},
        {"exp_unif0", L(0, .5, .8, 1, 1, 2, 0, 1), 0},
    };
    for (size_t i = 0; i < 3; i++) {
        dpzo_lmo_sampler *s = dpzo_lmo_sampler_seeded(ctx, &more[i].l, 7 + i);
        assert_non_null(s);
        assert_ok(ctx, dpzo_lmo_sample(ctx, s, x, n / 2));
        check_sample(ctx, more[i].name, &more[i].l, x, n / 2, more[i].mean);
        dpzo_lmo_sampler_free(s);
    }
    dpzo_lmo_sampler_free(NULL);
    free(x);
    free(y);
}

static void test_secure_sampler(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 50000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    dpzo_lmo l = L(.1, .9, .7, 7.5, 1, 1, 6, 7); /* eps5 */
    dpzo_lmo_sampler *a = dpzo_lmo_sampler_secure(ctx, &l);
    dpzo_lmo_sampler *b = dpzo_lmo_sampler_secure(ctx, &l);
    assert_non_null(a);
    assert_non_null(b);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, 1000));
    assert_ok(ctx, dpzo_lmo_sample(ctx, b, y, 1000));
    size_t same = 0;
    for (size_t i = 0; i < 1000; i++)
        same += x[i] == y[i];
    assert_true(same < 5);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, n));
    check_sample(ctx, "secure eps5", &l, x, n, 1);
    dpzo_lmo_sampler_free(a);
    dpzo_lmo_sampler_free(b);
    free(x);
    free(y);
}

/* ---- fake entropy sources for the secure generator -------------------------------- */

static uint64_t fake_state;
static size_t fake_bytes;  /* bytes handed out so far */
static size_t fake_limit;  /* fail after this many bytes */
static int fake_calls;

static uint8_t fake_byte(void)
{
    /* splitmix64 bytes: a deterministic stream */
    uint64_t z = (fake_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (uint8_t)((z ^ (z >> 31)) >> 56);
}

/* full reads */
static ssize_t fake_full(void *buf, size_t len, unsigned flags)
{
    (void)flags;
    for (size_t i = 0; i < len; i++)
        ((uint8_t *)buf)[i] = fake_byte();
    fake_bytes += len;
    return (ssize_t)len;
}

/* every other call EINTR, otherwise at most 37 bytes; fails (ENOSYS) past fake_limit */
static ssize_t fake_choppy(void *buf, size_t len, unsigned flags)
{
    (void)flags;
    if (++fake_calls % 2 == 0) {
        errno = EINTR;
        return -1;
    }
    if (fake_bytes >= fake_limit) {
        errno = ENOSYS;
        return -1;
    }
    size_t m = len < 37 ? len : 37;
    if (m > fake_limit - fake_bytes)
        m = fake_limit - fake_bytes;
    for (size_t i = 0; i < m; i++)
        ((uint8_t *)buf)[i] = fake_byte();
    fake_bytes += m;
    return (ssize_t)m;
}

static void test_secure_entropy_handling(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 20000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    dpzo_lmo l = L(.3, .2, .5, 2, 1.5, 3, 0, 2);

    /* the same byte stream, delivered whole or in EINTR-interrupted short reads, gives the
     * same draws */
    dpzo_lmo_sampler *a = dpzo_lmo_sampler_secure(ctx, &l);
    assert_non_null(a);
    fake_state = 42;
    fake_bytes = 0;
    assert_int_equal(dpzo__lmo_sampler_set_entropy(a, fake_full), 0);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, x, n));
    size_t used = fake_bytes;
    assert_true(used > 8 * n); /* at least one 8-byte uniform per draw */
    fake_state = 42;
    fake_bytes = 0;
    fake_calls = 0;
    fake_limit = (size_t)-1;
    assert_int_equal(dpzo__lmo_sampler_set_entropy(a, fake_choppy), 0);
    assert_ok(ctx, dpzo_lmo_sample(ctx, a, y, n));
    assert_memory_equal(x, y, n * sizeof *x);
    assert_int_equal(fake_bytes, used);
    assert_true(fake_calls > 2 * (int)(used / 37));
    check_sample(ctx, "fake stream", &l, y, n, 1);

    /* a failure after the first refill: the call fails and writes NaN; sticky */
    fake_state = 7;
    fake_bytes = 0;
    fake_calls = 0;
    fake_limit = 4096 + 100;
    assert_int_equal(dpzo__lmo_sampler_set_entropy(a, fake_choppy), 0);
    dpzo_status st = dpzo_lmo_sample(ctx, a, x, n);
    assert_int_not_equal(st, DPZO_OK);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "getrandom"));
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(x[i]));
    fake_limit = (size_t)-1; /* the source recovers; the sampler stays failed */
    x[0] = 1.0;
    assert_int_not_equal(dpzo_lmo_sample(ctx, a, x, 1), DPZO_OK);
    dpzo_lmo_sampler_free(a);

    /* a seeded sampler has no entropy source to replace */
    dpzo_lmo_sampler *s = dpzo_lmo_sampler_seeded(ctx, &l, 1);
    assert_int_equal(dpzo__lmo_sampler_set_entropy(s, fake_full), 1);
    dpzo_lmo_sampler_free(s);
    free(x);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spec_density_anchors, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_spec_stats_anchors, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_spec_eps0_anchors, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ref_density, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ref_moments, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_ref_eps0, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_gamma_closed_forms, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_infinite_moments, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_normalisation_and_cdf, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_domain_edges, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_validation, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_seeded_sampler, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_secure_sampler, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_secure_entropy_handling, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
