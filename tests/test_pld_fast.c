/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_pld_fast.c (issue 20, item 4): the discretisation of Poisson-sampled Gaussian
 * steps by pld_fast.c's cells against the scalar path (pld_source.c's tails in log space),
 * which test_pld_ref and test_soundness_pld check against 50-digit references on their own:
 *  - 36 seeded random steps (remove and add pairs, sigma 0.3 to 30, q 1e-5 to 0.9, grids
 *    1e-2 to 1e-4, tau 1e-12): the fast path runs (dpzo__pld_fast_steps counts it), on the
 *    same grid (lo, n, offset), and both sides' masses agree with the scalar path's to
 *    1e-9 in total (l1 distance; masses sum to about 1), the mass at +infinity to 1e-12;
 *  - pessimistic side: the P-expectation of e^-L over the grid, the Q-mass it keeps, is
 *    at most 1 (connect-the-dots keeps it per cell, raising losses lowers it) and within
 *    1e-6 of 1 - Q(L > top);
 *  - a step whose tails fall below 2^-960 inside its range (sigma 0.03) goes the scalar
 *    way: no fast step is counted and the arrays equal the scalar path's bit for bit;
 *  - the optimistic side keeps the mass piled at a remove pair's floor log(1 - q) (sigma
 *    0.005 to 0.02, grids 0.02 to 1, both paths: its masses sum to 1 within 1e-9);
 *  - the public accountant on 200 distinct steps (sigma = linspace(1, 2, 200), q 0.01,
 *    delta 1e-6, grid 1e-3): the interval with the fast path is within 1e-8 relative of
 *    the scalar path's at both ends. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "pld_internal.h"

/* delta(eps) of one discretised step: sum of p (1 - e^(eps - l))_+ (pessimistic side: with
 * the mass at +infinity) */
static double hockey(const dpzo__pld_pmf *p, int side, double d, double eps)
{
    const double *a = side == 0 ? p->pess : p->opt;
    double s = side == 0 ? p->pess_inf : 0.0;
    for (size_t i = 0; i < p->n; i++) {
        double l = ((double)(p->lo + (long)i) + p->off) * d;
        if (l > eps)
            s += a[i] * -expm1(eps - l);
    }
    return s;
}

static double mass(const dpzo__pld_pmf *p)
{
    double s = p->pess_inf;
    for (size_t i = 0; i < p->n; i++)
        s += p->pess[i];
    return s;
}

static void check_pair(dpzo_ctx *ctx, const dpzo__pld_source *s, double d, double tau,
                       int expect_fast)
{
    dpzo__pld_pmf f, g;
    unsigned long long before = dpzo__pld_fast_steps;
    dpzo__pld_discretize_fast(1);
    assert_ok(ctx, dpzo__pld_discretize(ctx, s, d, tau, 1, (size_t)1 << 24, &f));
    unsigned long long ran = dpzo__pld_fast_steps - before;
    dpzo__pld_discretize_fast(0);
    assert_ok(ctx, dpzo__pld_discretize(ctx, s, d, tau, 1, (size_t)1 << 24, &g));
    dpzo__pld_discretize_fast(1);
    assert_int_equal(ran, expect_fast ? 1 : 0);
    assert_int_equal(f.lo, g.lo);
    assert_int_equal(f.n, g.n);
    assert_true(f.off == g.off);
    double sum = 0.0, qmass = 0.0;
    for (size_t i = 0; i < f.n; i++) {
        sum += f.pess[i];
        qmass += f.pess[i] * exp(-((double)(f.lo + (long)i) + f.off) * d);
    }
    if (expect_fast) {
        /* the single step's hockey-stick divergence at three epsilons, both sides */
        double lmax = ((double)(f.lo + (long)f.n - 1) + f.off) * d, worst = 0.0;
        for (int k = 0; k < 3; k++) {
            double eps = (k == 0 ? 0.0 : k == 1 ? 0.1 : 0.5) * fmax(lmax, 0.0);
            for (int side = 0; side < 2; side++) {
                double a = hockey(&f, side, d, eps), b = hockey(&g, side, d, eps);
                double r = fabs(a - b) / (b + 1e-300);
                worst = r > worst && b > 1e-14 ? r : worst;
            }
        }
        double dm = fabs(mass(&f) - mass(&g));
        printf("  sigma %-9.4g q %-9.3g %s d %-8.2g n %-7zu hockey-stick rel diff %.2e, mass diff %.1e\n",
               s->scale, s->q, s->pair == DPZO__PLD_ADD ? "add   " : "remove", d, f.n, worst, dm);
        if (!(worst <= 1e-7 && dm <= 1e-12 && fabs(f.pess_inf - g.pess_inf) <= 1e-12))
            fail_msg("sigma %g q %g pair %d d %g: hockey-stick rel diff %.3g, mass diff %.3g, "
                     "inf %.3g vs %.3g", s->scale, s->q, (int)s->pair, d, worst, dm, f.pess_inf,
                     g.pess_inf);
    } else {
        assert_memory_equal(f.pess, g.pess, f.n * sizeof *f.pess);
        assert_memory_equal(f.opt, g.opt, f.n * sizeof *f.opt);
        assert_true(f.pess_inf == g.pess_inf && f.bias == g.bias);
    }
    /* the Q-mass the pessimistic pair keeps on the grid */
    dpzo__pld_tails top;
    dpzo__pld_tails_at(s, ((double)(f.lo + (long)f.n - 1) + f.off) * d, &top);
    double qkept = 1.0 - exp(top.qg);
    if (!(qmass <= 1.0 + 1e-12 && qmass >= qkept - 1e-6 && fabs(sum + f.pess_inf - 1.0) < 1e-6))
        fail_msg("sigma %g q %g pair %d d %g: Q-mass %.15g (kept %.15g), P-mass %.15g",
                 s->scale, s->q, (int)s->pair, d, qmass, qkept, sum + f.pess_inf);
    dpzo__pld_pmf_free(&f);
    dpzo__pld_pmf_free(&g);
}

static void test_fast_vs_scalar(void **state)
{
    dpzo_ctx *ctx = *state;
    uint64_t seed = 20261127;
    int done = 0;
    for (int c = 0; done < 36; c++) {
        dpzo__pld_source s = {DPZO__PLD_GAUSSIAN, c % 2 ? DPZO__PLD_ADD : DPZO__PLD_REMOVE,
                              pow(10.0, -0.5 + 2.0 * test_urand(&seed)),
                              pow(10.0, -5.0 + 4.95 * test_urand(&seed)), NULL, 0, NULL, 0.0, 0.0, 0.0};
        double d = pow(10.0, -2.0 - 2.0 * test_urand(&seed));
        /* a few hundred thousand points at most: the scalar path's time */
        size_t n = dpzo__pld_points(&s, d, 1e-12);
        if (n == SIZE_MAX || n > 300000 || n < 4)
            continue;
        check_pair(ctx, &s, d, 1e-12, 1);
        done++;
    }
}

static void test_fallback(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo__pld_source s = {DPZO__PLD_GAUSSIAN, DPZO__PLD_REMOVE, 0.03, 0.5, NULL, 0, NULL, 0.0, 0.0, 0.0};
    check_pair(ctx, &s, 1e-2, 1e-12, 0);
}

/* The optimistic side keeps the pile at a remove pair's floor log(1 - q) at every grid, by
 * both paths. At sigma 0.01, q 0.004 the first bucket's merged loss, computed again, fell
 * below the first grid point at grids 0.5, 0.2 and 0.05 (the point is the grid offset's
 * rounded-down estimate of the same merged loss), and with no point below it the bucket's
 * mass, 1 - q, was dropped: the optimistic side held 0.004 of 1, the composition's window
 * (sized on both sides) grew to 2^27 points at grid 0.05 and, with the RDP tilt of
 * cc72c8d, the query was refused (before it, the query fell back to the RDP bound). */
static void test_opt_keeps_floor(void **state)
{
    dpzo_ctx *ctx = *state;
    static const double grids[] = {1.0, 0.5, 0.2, 0.1, 0.05, 0.02};
    static const double sq[][2] = {{0.01, 0.004}, {0.02, 0.001}, {0.005, 0.01}};
    for (size_t c = 0; c < sizeof sq / sizeof *sq; c++)
        for (size_t g = 0; g < sizeof grids / sizeof *grids; g++)
            for (int fast = 1; fast >= 0; fast--) {
                dpzo__pld_source s = {DPZO__PLD_GAUSSIAN, DPZO__PLD_REMOVE, sq[c][0], sq[c][1],
                                      NULL, 0, NULL, 0.0, 0.0, 0.0};
                if (dpzo__pld_points(&s, grids[g], 1e-12) > 600000)
                    continue;
                dpzo__pld_pmf f;
                dpzo__pld_discretize_fast(fast);
                dpzo_status st = dpzo__pld_discretize(ctx, &s, grids[g], 1e-12, 1,
                                                      (size_t)1 << 24, &f);
                dpzo__pld_discretize_fast(1);
                assert_ok(ctx, st);
                double opt = 0.0;
                for (size_t i = 0; i < f.n; i++)
                    opt += f.opt[i];
                /* the tails dropped are at most tau = 1e-12 each; merging loses no mass */
                if (!(fabs(opt - 1.0) < 1e-9))
                    fail_msg("sigma %g q %g grid %g (%s path): optimistic mass %.17g, not 1",
                             sq[c][0], sq[c][1], grids[g], fast ? "fast" : "scalar", opt);
                dpzo__pld_pmf_free(&f);
            }
}

static void interval(dpzo_ctx *ctx, const dpzo_event *e, int fast, dpzo_pld_result *r)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.grid = 1e-3;
    dpzo__pld_discretize_fast(fast);
    dpzo_status st = dpzo_pld_epsilon(ctx, e, 1e-6, &o, r);
    dpzo__pld_discretize_fast(1);
    assert_ok(ctx, st);
}

static void test_accountant(void **state)
{
    dpzo_ctx *ctx = *state;
    enum { N = 200 };
    dpzo_event *steps[N];
    for (int i = 0; i < N; i++)
        steps[i] = dpzo_event_poisson_sampled(ctx, 0.01,
                                              dpzo_event_gaussian(ctx, 1.0 + (double)i / (N - 1)));
    dpzo_event *e = dpzo_event_composed(ctx, steps, N);
    assert_non_null(e);
    dpzo_pld_result a, b;
    unsigned long long before = dpzo__pld_fast_steps;
    interval(ctx, e, 1, &a);
    assert_true(dpzo__pld_fast_steps - before == 2 * N);
    interval(ctx, e, 0, &b);
    printf("  fast [%.12f, %.12f], scalar [%.12f, %.12f]\n", a.epsilon_lower, a.epsilon_upper,
           b.epsilon_lower, b.epsilon_upper);
    assert_rel(a.epsilon_upper, b.epsilon_upper, 1e-8);
    assert_rel(a.epsilon_lower, b.epsilon_lower, 1e-8);
    dpzo_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_vs_scalar),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_opt_keeps_floor),
        cmocka_unit_test(test_accountant),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
