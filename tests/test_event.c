/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_event.c: the event algebra: counts compose for every event kind (the
 * dp_accounting exponential-mechanism bug ignored them), nesting, schedules, the
 * effective sigma of composed Gaussians, sampling without replacement, validation. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/reference_values.h"

static const double ORDERS[] = {1.5, 2.0, 10.0, 33.3};
#define N_ORDERS 4

static void rdp_of(dpzo_ctx *ctx, const dpzo_event *e, double *out)
{
    assert_non_null(e);
    assert_ok(ctx, dpzo_event_rdp(ctx, e, ORDERS, N_ORDERS, out));
}

typedef dpzo_event *(*make_fn)(dpzo_ctx *);
static dpzo_event *mk_gauss(dpzo_ctx *c) { return dpzo_event_gaussian(c, 2.0); }
static dpzo_event *mk_laplace(dpzo_ctx *c) { return dpzo_event_laplace(c, 3.0); }
static dpzo_event *mk_poisson(dpzo_ctx *c)
{
    return dpzo_event_poisson_sampled(c, 0.03, dpzo_event_gaussian(c, 1.2));
}
static dpzo_event *mk_wor(dpzo_ctx *c)
{
    return dpzo_event_wor_sampled(c, 16, 1000, dpzo_event_gaussian(c, 1.2));
}

static void test_counts_compose(void **state)
{
    dpzo_ctx *ctx = *state;
    make_fn makers[] = {mk_gauss, mk_laplace, mk_poisson, mk_wor};
    for (size_t m = 0; m < 4; m++) {
        double one[N_ORDERS], five[N_ORDERS], nested[N_ORDERS], list[N_ORDERS];
        dpzo_event *e1 = makers[m](ctx);
        dpzo_event *e5 = dpzo_event_self_composed(ctx, makers[m](ctx), 5);
        dpzo_event *e12 =
            dpzo_event_self_composed(ctx, dpzo_event_self_composed(ctx, makers[m](ctx), 3), 4);
        dpzo_event *parts[3] = {makers[m](ctx), makers[m](ctx),
                                dpzo_event_self_composed(ctx, makers[m](ctx), 0)};
        dpzo_event *e2 = dpzo_event_composed(ctx, parts, 3);
        rdp_of(ctx, e1, one);
        rdp_of(ctx, e5, five);
        rdp_of(ctx, e12, nested);
        rdp_of(ctx, e2, list);
        for (int i = 0; i < N_ORDERS; i++) {
            assert_true(one[i] > 0);
            assert_rel(five[i], 5 * one[i], 1e-15);
            assert_rel(nested[i], 12 * one[i], 1e-15);
            assert_rel(list[i], 2 * one[i], 1e-15);
        }
        /* certified bounds compose too */
        dpzo_bound b1[N_ORDERS], b5[N_ORDERS];
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, e1, ORDERS, N_ORDERS, b1));
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, e5, ORDERS, N_ORDERS, b5));
        for (int i = 0; i < N_ORDERS; i++) {
            assert_true(b5[i].lower <= 5 * b1[i].value && 5 * b1[i].value <= b5[i].upper);
            assert_true(b5[i].upper - b5[i].lower <= 1e-12 * b5[i].upper);
        }
        dpzo_event_free(e1);
        dpzo_event_free(e5);
        dpzo_event_free(e12);
        dpzo_event_free(e2);
    }
}

static void test_schedule(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_phase ph[3] = {{1.0, 0.01, 100}, {2.0, 0.02, 50}, {0.8, 0.001, 1000}};
    dpzo_event *s = dpzo_event_from_schedule(ctx, ph, 3);
    double total[N_ORDERS], sum[N_ORDERS] = {0};
    rdp_of(ctx, s, total);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N_ORDERS; i++) {
            double r;
            assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, ph[k].sampling_rate,
                                                     ph[k].noise_multiplier, ORDERS[i], &r));
            sum[i] += ph[k].steps * r;
        }
    for (int i = 0; i < N_ORDERS; i++)
        assert_rel(total[i], sum[i], 1e-14);
    char d[512];
    dpzo_event_describe(s, d, sizeof d);
    assert_non_null(strstr(d, "repeat(100, poisson(q=0.01"));
    dpzo_event_free(s);
    dpzo_phase bad = {NAN, 0.1, 3};
    assert_null(dpzo_event_from_schedule(ctx, &bad, 1));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "phase 1"));
}

/* Two Gaussian queries on the same Poisson batch = one Gaussian with
 * sigma^-2 = sigma1^-2 + sigma2^-2 (here 1/1 + 1/1 -> 1/sqrt 2). */
static void test_effective_sigma(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *two[2] = {dpzo_event_gaussian(ctx, 1.0), dpzo_event_gaussian(ctx, 1.0)};
    dpzo_event *a = dpzo_event_poisson_sampled(ctx, 0.05, dpzo_event_composed(ctx, two, 2));
    dpzo_event *b = dpzo_event_poisson_sampled(ctx, 0.05, dpzo_event_gaussian(ctx, M_SQRT1_2));
    double ra[N_ORDERS], rb[N_ORDERS];
    rdp_of(ctx, a, ra);
    rdp_of(ctx, b, rb);
    for (int i = 0; i < N_ORDERS; i++)
        assert_rel(ra[i], rb[i], 1e-12);
    dpzo_event_free(a);
    dpzo_event_free(b);
    dpzo_event *lap = dpzo_event_poisson_sampled(ctx, 0.05, dpzo_event_laplace(ctx, 1.0));
    assert_int_equal(dpzo_event_rdp(ctx, lap, ORDERS, 1, ra), DPZO_EUNSUPPORTED);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "laplace"));
    dpzo_event_free(lap);
}

/* WBK19 Theorem 27 bound against an independent 50-digit mpmath evaluation. */
static void test_wor_reference(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < DPZO_REF_WOR_N; i++) {
        const dpzo_ref_wor *t = &DPZO_REF_WOR[i];
        uint64_t n = 1000, batch = (uint64_t)llround(t->q * n);
        assert_true((double)batch / n == t->q);
        dpzo_bound b;
        assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, batch, n, t->sigma, t->alpha, &b));
        double ref = strtod(t->rdp, NULL);
        assert_rel(b.value, ref, 1e-12);
        assert_true(b.lower <= nextafter(ref, INFINITY) && nextafter(ref, -INFINITY) <= b.upper);
    }
    /* fractional orders interpolate log A linearly (convexity): between the neighbours */
    dpzo_bound lo, mid, hi;
    assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, 10, 1000, 1.0, 4.0, &lo));
    assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, 10, 1000, 1.0, 4.5, &mid));
    assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, 10, 1000, 1.0, 5.0, &hi));
    assert_rel(mid.value * 3.5, 0.5 * (lo.value * 3 + hi.value * 4), 1e-12);
    /* without replacement at batch/n = q costs more than Poisson at q (replace-one) */
    double p;
    assert_ok(ctx, dpzo_rdp_sampled_gaussian(ctx, 0.01, 1.0, 8.0, &p));
    dpzo_bound w;
    assert_ok(ctx, dpzo_rdp_wor_gaussian(ctx, 10, 1000, 1.0, 8.0, &w));
    assert_true(w.value > p);
}

/* More than 4096 distinct sampled Gaussians: the accountant rounds sigma down and q up
 * to a fine grid (a dominating composition) and says so; the certified epsilon stays
 * above the exact RDP's epsilon at that order and within the grid's looseness of it. */
static void test_large_composition(void **state)
{
    dpzo_ctx *ctx = *state;
    enum { N = 6000 };
    dpzo_event **list = malloc(N * sizeof *list);
    assert_non_null(list);
    for (int i = 0; i < N; i++)
        list[i] = dpzo_event_poisson_sampled(ctx, 0.01 + 1e-7 * i,
                                             dpzo_event_gaussian(ctx, 1.0 + (double)i / N));
    dpzo_event *e = dpzo_event_composed(ctx, list, N);
    free(list);
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-6, NULL, &r));
    assert_true(r.rounding > 0.0 && r.rounding < 1e-3);
    double exact_rdp, eps_exact;
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &r.order, 1, &exact_rdp));
    assert_ok(ctx, dpzo_rdp_to_epsilon(ctx, r.order, exact_rdp, 1e-6, DPZO_CONVERSION_IMPROVED,
                                       &eps_exact));
    assert_true(r.rdp >= exact_rdp && r.epsilon >= eps_exact);
    assert_true(r.rdp <= exact_rdp * (1.0 + 4.0 * r.rounding));
    dpzo_event_free(e);
}

/* A sampler wrapping one Gaussian uses its sigma exactly: 1/sqrt(1/sigma^2) in double
 * rounds above sigma for about one sigma in ten, which once put the certified upper bound
 * below the true RDP (review finding). Compositions of Gaussians round sigma_eff down. */
static void test_sigma_exact(void **state)
{
    dpzo_ctx *ctx = *state;
    double alpha = 8.5;
    for (int i = 0; i < 200; i++) {
        double sigma = 0.5 + i * 0.0137037037;
        dpzo_event *e = dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_gaussian(ctx, sigma));
        dpzo_bound ev, direct;
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, &ev));
        assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.01, sigma, alpha, &direct));
        assert_true(ev.upper >= direct.lower && ev.lower <= direct.upper);
        dpzo_event_free(e);
        /* two queries at sigma*sqrt(2) each act as one at sigma: never a larger sigma */
        dpzo_event *two[2] = {dpzo_event_gaussian(ctx, sigma * M_SQRT2),
                              dpzo_event_gaussian(ctx, sigma * M_SQRT2)};
        e = dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_composed(ctx, two, 2));
        assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, &alpha, 1, &ev));
        assert_true(ev.upper >= direct.lower * (1 - 1e-14));
        dpzo_event_free(e);
    }
    /* a huge but finite sigma still spends privacy (sigma^-2 underflows in double) */
    dpzo_event *g = dpzo_event_self_composed(
        ctx, dpzo_event_gaussian(ctx, 1.4e154), 3);
    dpzo_event *p = dpzo_event_poisson_sampled(ctx, 1.0, g);
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_delta(ctx, p, 1.0, NULL, &r));
    assert_true(r.delta > 0.0);
    dpzo_event_free(p);
}

static void test_validation(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_null(dpzo_event_gaussian(ctx, -1.0));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "noise multiplier"));
    assert_null(dpzo_event_laplace(ctx, NAN));
    assert_null(dpzo_event_poisson_sampled(ctx, 1.5, dpzo_event_gaussian(ctx, 1.0)));
    assert_null(dpzo_event_poisson_sampled(ctx, 0.5, NULL));
    assert_null(dpzo_event_wor_sampled(ctx, 11, 10, dpzo_event_gaussian(ctx, 1.0)));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "batch=11"));
    assert_null(dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, 1.0), (1ull << 60)));
    dpzo_event *list[2] = {dpzo_event_gaussian(ctx, 1.0), NULL};
    assert_null(dpzo_event_composed(ctx, list, 2));
    dpzo_bound b;
    assert_int_equal(dpzo_rdp_wor_gaussian(ctx, 5, 0, 1.0, 2.0, &b), DPZO_EINVAL);
    double r;
    assert_int_equal(dpzo_event_rdp(ctx, NULL, ORDERS, 1, &r), DPZO_EINVAL);
}

/* Epochs to steps: rounded up, exact for whole epochs of fixed batches. 60 / 0.01 is
 * 5999.99999999999987... in long double (0.01 is slightly above 1/100): 6000, not 6001;
 * 60 / (256 / 60000) = 14062.5 -> 14063; 60 x 60000 / 256 = 14062.5 -> 14063. */
static void test_epochs(void **state)
{
    dpzo_ctx *ctx = *state;
    const struct {
        double epochs, q;
        uint64_t batch, n, steps;
    } ok[] = {{60, 0.01, 0, 0, 6000},
              {60, 256.0 / 60000, 0, 0, 14063},
              {60, 0, 256, 60000, 14063},
              {0.5, 0, 256, 60000, 118},
              {1, 0, 3, 10, 4},
              {3, 0, 3, 9, 9},
              {0, 0.5, 0, 0, 0},
              {2.5, 1.0, 0, 0, 3},
              {9007199254740992.0, 0, 1, 1, 9007199254740992ull},
              {1e9, 0, 1, 9000000, 9000000000000000ull},
              /* E / q lies above an integer by less than long double resolves (exact
               * ceilings by Python's fractions): ceill(E / q) was one step short */
              {0x1.8235cp+17, 0x1.9d5fec833abfep-36, 0, 0, 8415295009738226ull},
              {0x1.e60a526p+26, 0x1.fc714e03f8e2ap-23, 0, 0, 538146050275802ull},
              /* fractional epochs of datasets above 2^63: E n needs up to 117 bits, and
               * ceill(E n / B) in long double was one step short */
              {0x1.94604777ce3ffp+33, 0, 35184372088832ull, 14898833922246485907ull,
               5745632376394520ull},
              {0x1.7f5d165da781fp+24, 0, 1099511627776ull, 14791829865519010780ull,
               337997047962405ull}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t t = 7;
        assert_ok(ctx, dpzo_steps_from_epochs(ctx, ok[i].epochs, ok[i].q, ok[i].batch, ok[i].n,
                                              &t));
        assert_int_equal(t, ok[i].steps);
    }
    const struct {
        double epochs, q;
        uint64_t batch, n;
    } bad[] = {{-1, 0.5, 0, 0},  {NAN, 0.5, 0, 0}, {INFINITY, 0.5, 0, 0}, {1, 0, 0, 0},
               {1, 1.5, 0, 0},   {1, NAN, 0, 0},   {1, 0, 0, 10},         {1, 0, 11, 10},
               {1e20, 0.5, 0, 0}, {1e9, 0, 1, 10000000}, {1e300, 0, 3, 10}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t t = 7;
        assert_int_equal(
            dpzo_steps_from_epochs(ctx, bad[i].epochs, bad[i].q, bad[i].batch, bad[i].n, &t),
            DPZO_EINVAL);
        assert_int_equal(t, 7);
        assert_true(strlen(dpzo_ctx_errmsg(ctx)) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counts_compose, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_schedule, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_effective_sigma, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_wor_reference, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_large_composition, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_sigma_exact, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_validation, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_epochs, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests_name("event", tests, NULL, NULL);
}
