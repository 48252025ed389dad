/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_soundness_pld.c (issue 15): the PLD and PRV accountants' bounds are proven
 * on the whole input range.
 *  - Tiny noise: one step's privacy loss reaches thousands, far beyond ln(DBL_MAX) =
 *    709.78, where e^l overflows; the interval must still contain the exact epsilon
 *    (tests/ref/pld_soundness_values.h, mpmath at 50 digits) for Poisson sampling (both
 *    adjacencies) and without replacement (whose dominating pair is the remove pair at
 *    rate gamma on eps >= 0), and delta(eps) at eps = 709.78 must not be understated.
 *  - Extreme inputs (sigma 1e308, 5e-324, ...): answered or refused, never a smaller
 *    epsilon than an independent lower bound.
 *  - Monotonicity over random pairs (fixed seed, coarse grids): proven upper epsilon
 *    non-increasing in sigma, non-decreasing in steps and sampling rate; lower <= upper;
 *    upper >= an independent lower bound (the exact epsilon of one step, which the
 *    composition cannot fall below). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "ref/pld_delta1.h"
#include "ref/pld_soundness_values.h"
#include "dpzo/audit.h"

#define NROWS(a) (sizeof(a) / sizeof *(a))

static int setup(void **state)
{
    *state = dpzo_ctx_new();
    return *state == NULL;
}

static int teardown(void **state)
{
    dpzo_ctx_free(*state);
    return 0;
}

static dpzo_pld_options opts(dpzo_pld_method m, double grid)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = m;
    o.grid = grid;
    if (m == DPZO_PLD_PRV)
        o.eps_error = grid;
    o.memory_limit = (size_t)256 << 20;
    return o;
}

static dpzo_event *poisson(dpzo_ctx *ctx, double q, double sigma, uint64_t steps)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    dpzo_event *s = q < 1.0 ? dpzo_event_poisson_sampled(ctx, q, g) : g;
    return steps == 1 ? s : dpzo_event_self_composed(ctx, s, steps);
}

/* One step at tiny noise, Poisson sampling: [lower, upper] contains the exact epsilon and
 * the upper end is within a few grid steps of it. Before the fix every row read 709.78. */
static void test_tiny_noise_poisson(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_eps); i++) {
            const pld_snd_eps_row *v = &pld_snd_eps[i];
            dpzo_event *e = poisson(ctx, v->q, v->sigma, 1);
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, v->delta, &o, &r));
            if (!(r.epsilon_lower <= v->eps_poisson && r.epsilon_upper >= v->eps_poisson
                  && r.epsilon_upper <= v->eps_poisson + 0.2 + 1e-5 * v->eps_poisson))
                fail_msg("%s sigma %g q %g delta %g: [%.12g, %.12g], exact %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, v->delta, r.epsilon_lower,
                         r.epsilon_upper, v->eps_poisson);
            assert_true(r.epsilon == r.epsilon_upper);
            dpzo_event_free(e);
        }
    }
}

/* Without replacement (batch B of N, gamma = B/N): the accountant's pair is the remove
 * pair at rate gamma on eps >= 0, so its upper end must reach that pair's exact epsilon. */
static void test_tiny_noise_wor(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_eps); i++) {
            const pld_snd_eps_row *v = &pld_snd_eps[i];
            uint64_t n = 60000, b = (uint64_t)llround(v->q * (double)n);
            if ((double)b / (double)n != v->q)
                continue;
            dpzo_event *e = dpzo_event_wor_sampled(ctx, b, n, dpzo_event_gaussian(ctx, v->sigma));
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, v->delta, &o, &r));
            if (!(r.epsilon_upper >= v->eps_remove && r.epsilon_lower <= r.epsilon_upper
                  && r.epsilon_upper <= v->eps_remove + 0.2 + 1e-5 * v->eps_remove))
                fail_msg("WOR %s sigma %g gamma %g: [%.12g, %.12g], pair's epsilon %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, r.epsilon_lower, r.epsilon_upper,
                         v->eps_remove);
            dpzo_event_free(e);
        }
    }
}

/* delta(eps) beyond 709.78: the interval contains the exact value (it was ~1e-5 before). */
static void test_tiny_noise_delta(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        for (size_t i = 0; i < NROWS(pld_snd_delta); i++) {
            const pld_snd_delta_row *v = &pld_snd_delta[i];
            dpzo_event *e = poisson(ctx, v->q, v->sigma, 1);
            dpzo_pld_result r;
            assert_ok(ctx, dpzo_pld_delta(ctx, e, v->eps, &o, &r));
            double tol = 1e-12 * v->delta_poisson;
            if (!(r.delta_lower <= v->delta_poisson + tol && r.delta_upper >= v->delta_poisson - tol))
                fail_msg("%s sigma %g q %g eps %g: [%.12g, %.12g], exact %.12g",
                         m ? "PRV" : "PLD", v->sigma, v->q, v->eps, r.delta_lower, r.delta_upper,
                         v->delta_poisson);
            dpzo_event_free(e);
        }
    }
}


/* No noise (sigma 0 or -0): epsilon is +inf; sampled at q < 1 only the trivial lower end
 * is proven (delta(eps) >= q, so for delta >= q epsilon is finite). Was a memory refusal. */
static void test_zero_noise(void **state)
{
    dpzo_ctx *ctx = *state;
    const double zeros[2] = {0.0, -0.0};
    for (int m = 0; m < 2; m++)
        for (int z = 0; z < 2; z++) {
            dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
            dpzo_pld_result r;
            dpzo_event *e = dpzo_event_gaussian(ctx, zeros[z]);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && isinf(r.epsilon_lower));
            dpzo_event_free(e);
            e = poisson(ctx, 0.004, zeros[z], 3);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && r.epsilon_lower == 0.0);
            assert_ok(ctx, dpzo_pld_delta(ctx, e, 1.0, &o, &r));
            /* issue 28, item 4: with no noise delta(eps) is the sampling bound 1 - (1 - q)^3
             * (0.011952064, each step that samples the record reveals it); it was 1 */
            assert_true(r.delta_upper >= 0.011952064 && r.delta_upper <= 0.011952064 * (1 + 1e-12)
                        && r.delta_lower <= r.delta_upper);
            dpzo_event_free(e);
            e = dpzo_event_wor_sampled(ctx, 256, 60000, dpzo_event_gaussian(ctx, zeros[z]));
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(isinf(r.epsilon_upper) && r.epsilon_lower == 0.0);
            dpzo_event_free(e);
        }
}

/* T unsampled Gaussian steps compose exactly to mu-GDP, mu = sqrt(T)/sigma: the PRV and
 * PLD intervals must contain the exact epsilon (mpmath, tests/ref). At sigma 5e200 and
 * T 5.5e11 (mu 1.5e-195, exact epsilon 0) the PRV reported the lower end 3.5e-5, at
 * sigma 1e100 and T 1e12 the lower end 0.0084: the rounding guard of each step's
 * discretisation shifted the composed loss by ~1e-14 a step, which the coupling bound
 * did not count. PLD may refuse the huge-T rows (memory); PRV must answer. */
static void test_gdp_exact(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < NROWS(pld_snd_gdp); i++) {
        const pld_snd_gdp_row *v = &pld_snd_gdp[i];
        for (int m = 0; m < 3; m++) {
            dpzo_pld_options o;
            dpzo_pld_options_default(&o);
            o.method = m == 0 ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS;
            o.grid = m == 1 ? 0.01 : m == 2 ? 0.05 : 0.0;
            o.memory_limit = (size_t)512 << 20;
            dpzo_event *e = poisson(ctx, 1.0, v->sigma, v->steps);
            dpzo_pld_result r;
            dpzo_status st = dpzo_pld_epsilon(ctx, e, v->delta, &o, &r);
            dpzo_event_free(e);
            if (st == DPZO_ENOMEM && m > 0)
                continue;
            assert_ok(ctx, st);
            if (!(r.epsilon_lower <= v->eps && r.epsilon_upper >= v->eps))
                fail_msg("%s sigma %.17g T %llu delta %g (mu %g): [%.12g, %.12g], exact %.12g",
                         m ? "PLD" : "PRV", v->sigma, v->steps, v->delta, v->mu,
                         r.epsilon_lower, r.epsilon_upper, v->eps);
        }
    }
}

/* Beyond 1e8 steps the PLD and PRV claim nothing (the buckets' mass rounding is not in
 * their error term) and return the RDP accountant's certified bound, saying so; 1e8 steps
 * themselves are still composed. Sampled steps (q 0.5): unsampled Gaussian steps are one
 * Gaussian step since issue 30 (pld.c, merge_gaussians), answered by the PLD at any count. */
static void test_step_limit(void **state)
{
    dpzo_ctx *ctx = *state;
    for (int m = 0; m < 2; m++) {
        dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
        dpzo_pld_result r;
        dpzo_event *e = poisson(ctx, 0.5, 1e6, 100000001);
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
        dpzo_dp_result rd;
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &rd));
        dpzo_event_free(e);
        assert_true(r.fallback == 1 && strstr(r.reason, "1e+08") != NULL);
        assert_true(r.epsilon_upper == rd.epsilon && r.epsilon_lower == 0.0);
    }
    dpzo_pld_options o = opts(DPZO_PLD_PRV, 0.05);
    dpzo_pld_result r;
    dpzo_event *e = poisson(ctx, 0.5, 1e6, 100000000);
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
    dpzo_event_free(e);
    assert_true(strstr(r.reason, "1e+08") == NULL);
    e = poisson(ctx, 1.0, 1e6, 100000001);
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
    dpzo_event_free(e);
    assert_true(r.fallback == 0 && r.epsilon_lower <= r.epsilon_upper);
}

/* Huge noise: the losses vanish; epsilon 0 is right (delta(0) = TV distance ~ 1e-311);
 * sigma 1e308 overflowed sigma^2 and the grid index arithmetic (UBSan) before. */
static void test_huge_noise(void **state)
{
    dpzo_ctx *ctx = *state;
    const double sig[3] = {1e18, 1e154, 1e308};
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 3; i++) {
            dpzo_pld_options o = opts(m ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
            dpzo_pld_result r;
            dpzo_event *e = poisson(ctx, 0.004, sig[i], 1000);
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(r.epsilon_lower <= r.epsilon_upper && r.epsilon_upper >= 0.0
                        && r.epsilon_upper < 1e-3);
            dpzo_event_free(e);
            e = dpzo_event_wor_sampled(ctx, 256, 60000, dpzo_event_gaussian(ctx, sig[i]));
            assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
            assert_true(r.epsilon_lower <= r.epsilon_upper && r.epsilon_upper < 1e-3);
            dpzo_event_free(e);
        }
}

/* A mechanism whose accountants contradict each other (lower 709.78 > upper 0, what the
 * without-replacement RDP bug produced): the audit must not call the claim HOLDS nor
 * print an interval with lower > upper. */
static dpzo_status broken_bounds(dpzo_ctx *ctx, void *data, const dpzo_claim *claim,
                                 dpzo_sampling_scheme scheme, uint64_t steps, double delta,
                                 double grid, const dpzo_audit_options *o, dpzo_audit_bounds *out)
{
    (void)ctx, (void)data, (void)claim, (void)scheme, (void)steps, (void)delta, (void)grid, (void)o;
    out->upper = 0.0;
    out->upper_from = "rdp";
    out->lower = 709.78037;
    out->lower_from = "pld";
    return DPZO_OK;
}

static void test_audit_inconsistent(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_int_equal(dpzo_verdict_of(709.78, 0.0, 1.0), DPZO_VERDICT_UNDETERMINED);
    assert_int_equal(dpzo_verdict_of(NAN, 0.5, 1.0), DPZO_VERDICT_UNDETERMINED);
    assert_int_equal(dpzo_verdict_of(0.0, 0.5, 1.0), DPZO_VERDICT_HOLDS);
    dpzo_claim c;
    dpzo_claim_init(&c);
    c.noise_multiplier = 1e-4;
    c.sampling = DPZO_SAMPLING_FIXED;
    c.batch_size = 256;
    c.dataset_size = 60000;
    c.steps = 1;
    c.epsilon = 1.0;
    c.delta = 1e-5;
    dpzo_audit_mechanism mech;
    memset(&mech, 0, sizeof mech);
    mech.name = "broken";
    mech.bounds = broken_bounds;
    dpzo_audit_options o;
    dpzo_audit_options_default(&o);
    o.calibrate = 0;
    dpzo_audit_result r;
    assert_ok(ctx, dpzo_audit_claim(ctx, &c, &mech, &o, &r));
    assert_int_equal(r.verdict, DPZO_VERDICT_UNDETERMINED);
    assert_true(r.flags & DPZO_AUDIT_INCONSISTENT);
    assert_true(r.bounds.lower <= r.bounds.upper);
    assert_true(r.bounds.lower == 0.0 && isinf(r.bounds.upper));
    dpzo_audit_bounds b;
    assert_ok(ctx, dpzo_audit_bounds_at(ctx, &c, &mech, c.sampling, 1, 1e-5, 1e-4, &o, &b));
    assert_true(b.lower <= b.upper);
}

/* ---- Monotonicity over random pairs (issue 15) ----------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static double urand(void) /* xorshift64*, uniform in [0, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Du) >> 11) * 0x1p-53;
}

typedef struct {
    double sigma, q;
    uint64_t steps;
    int wor;
} setting;

static void eval(dpzo_ctx *ctx, const setting *x, int method, double delta, dpzo_pld_result *r)
{
    dpzo_pld_options o = opts(method ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS, 0.05);
    dpzo_event *e;
    if (x->wor) {
        uint64_t n = 1u << 20, b = (uint64_t)llround(x->q * (double)n);
        e = dpzo_event_wor_sampled(ctx, b ? b : 1, n, dpzo_event_gaussian(ctx, x->sigma));
        if (x->steps > 1)
            e = dpzo_event_self_composed(ctx, e, x->steps);
    } else {
        e = poisson(ctx, x->q, x->sigma, x->steps);
    }
    dpzo_status st = dpzo_pld_epsilon(ctx, e, delta, &o, r);
    if (st != DPZO_OK)
        fail_msg("%s sigma %.17g q %.17g T %llu wor %d: %s", method ? "PRV" : "PLD", x->sigma,
                 x->q, (unsigned long long)x->steps, x->wor, dpzo_ctx_errmsg(ctx));
    dpzo_event_free(e);
    if (!(r->epsilon_lower <= r->epsilon_upper))
        fail_msg("lower %.17g > upper %.17g (sigma %g q %g T %llu)", r->epsilon_lower,
                 r->epsilon_upper, x->sigma, x->q, (unsigned long long)x->steps);
    double qq = x->wor ? (double)llround(x->q * (double)(1u << 20)) / (double)(1u << 20) : x->q;
    if (isfinite(r->epsilon_upper) && r->epsilon_upper < 11000.0) {
        long double d1 = delta1(r->epsilon_upper, x->sigma, qq);
        if (!(d1 <= (long double)delta * (1.0L + 1e-6L)))
            fail_msg("%s sigma %.17g q %.17g T %llu wor %d: upper %.17g, but one step alone "
                     "has delta %.6Lg > %g there", method ? "PRV" : "PLD", x->sigma, x->q,
                     (unsigned long long)x->steps, x->wor, r->epsilon_upper, d1, delta);
    }
}

/* a is at least as private as b (larger sigma, or fewer steps, or smaller q), with results
 * ra and rb: a's lower end must not exceed b's upper end, and the proven upper ends must be
 * non-increasing in sigma and non-decreasing in steps and rate (up to the slack below). */
static void check_pair(const setting *a, const dpzo_pld_result *ra, const setting *b,
                       const dpzo_pld_result *rb, int method)
{
    /* lower(a) <= upper(b) is the theorem (true epsilon is monotone). The upper ends are
     * monotone up to the discretisation: on a coarse grid the pessimistic losses move by
     * whole grid steps as sigma or q shift the grid's offset (sigma 2.83 and 4.85 at q 1.4e-3,
     * T 19, delta 1e-9, grid 0.05 give 0.199 and 0.300; the exact values are about 0.012 and
     * 0.007; at T 32 the gap reaches 5 grid steps). Allowed: the pessimistic rounding of
     * every step's loss by at most one grid step, T d (PRV: with its epsilon error). */
    double T = (double)(a->steps > b->steps ? a->steps : b->steps);
    double tol = 1e-9 * rb->epsilon_upper + T * fmax(ra->grid, rb->grid);
    if (method == 1)
        tol += fmax(ra->eps_error, rb->eps_error);
    if (!(ra->epsilon_lower <= rb->epsilon_upper && ra->epsilon_upper <= rb->epsilon_upper + tol))
        fail_msg("%s: (sigma %.17g q %.17g T %llu wor %d) -> [%.17g, %.17g] is less private "
                 "than (sigma %.17g q %.17g T %llu) -> [%.17g, %.17g]", method ? "PRV" : "PLD",
                 a->sigma, a->q, (unsigned long long)a->steps, a->wor, ra->epsilon_lower,
                 ra->epsilon_upper, b->sigma, b->q, (unsigned long long)b->steps,
                 rb->epsilon_lower, rb->epsilon_upper);
}

static void eval_pair(dpzo_ctx *ctx, const setting *a, const setting *b, int method, double delta)
{
    dpzo_pld_result ra, rb;
    eval(ctx, a, method, delta, &ra);
    eval(ctx, b, method, delta, &rb);
    check_pair(a, &ra, b, &rb, method);
}

static void test_monotone_random_pairs(void **state)
{
    dpzo_ctx *ctx = *state;
    int pairs = 0;
    for (int it = 0; it < 80; it++) {
        setting x, y;
        x.sigma = exp(log(0.3) + urand() * log(20.0 / 0.3));
        x.q = exp(log(1e-3) + urand() * log(1.0 / 1e-3));
        x.steps = 1 + (uint64_t)(urand() * 24.0);
        /* the RDP tilt of a without-replacement step costs ~1 s: two of them */
        x.wor = it == 6 || it == 13;
        if (x.wor)
            x.q = fmin(x.q, 0.5), x.sigma = fmin(x.sigma, 2.0);
        int method = it & 1;
        double delta = urand() < 0.5 ? 1e-5 : 1e-9;
        dpzo_pld_result rx, ry;
        eval(ctx, &x, method, delta, &rx);
        y = x;
        y.sigma = x.sigma * (1.0 + urand()); /* more noise: more private */
        eval(ctx, &y, method, delta, &ry);
        check_pair(&y, &ry, &x, &rx, method);
        y = x;
        y.steps = x.steps + 1 + (uint64_t)(urand() * 8.0);
        eval(ctx, &y, method, delta, &ry);
        check_pair(&x, &rx, &y, &ry, method);
        y = x;
        y.q = fmin(x.wor ? 0.5 : 1.0, x.q * (1.0 + urand()));
        eval(ctx, &y, method, delta, &ry);
        check_pair(&x, &rx, &y, &ry, method);
        pairs += 3;
    }
    /* the pairs that found the ln(DBL_MAX) cap: sigma 0.005 .. 0.02 all read 10642.51 */
    static const double tiny[] = {0.01, 0.015, 0.02, 0.04};
    for (int method = 0; method < 2; method++)
        for (size_t i = 0; i + 1 < NROWS(tiny); i++) {
            setting a = {tiny[i + 1], 0.004, 2, 0}, b = {tiny[i], 0.004, 2, 0};
            eval_pair(ctx, &a, &b, method, 1e-5);
            pairs++;
        }
    /* huge noise against ordinary noise */
    for (int method = 0; method < 2; method++) {
        setting a = {1e308, 0.004, 10, 0}, b = {1.0, 0.004, 10, 0};
        eval_pair(ctx, &a, &b, method, 1e-5);
        a.wor = b.wor = 1;
        eval_pair(ctx, &a, &b, method, 1e-5);
        pairs += 2;
    }
    print_message("%d pairs\n", pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_noise_poisson),
        cmocka_unit_test(test_tiny_noise_wor),
        cmocka_unit_test(test_tiny_noise_delta),
        cmocka_unit_test(test_zero_noise),
        cmocka_unit_test(test_huge_noise),
        cmocka_unit_test(test_gdp_exact),
        cmocka_unit_test(test_step_limit),
        cmocka_unit_test(test_audit_inconsistent),
        cmocka_unit_test(test_monotone_random_pairs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
