/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_soundness_lmo.c: issue 15 for the LMO noise. Property tests over random
 * pairs (fixed-seed PRNG, so a failure reproduces) that the proven epsilon of
 * dpzo_lmo_epsilon is monotone where the mathematics says it must be:
 *   - non-decreasing in the number of steps (composition adds nonnegative RDP),
 *   - non-decreasing in the sampling rate, Poisson and without replacement (the
 *     amplification bounds and the amplified pure epsilon grow with the rate),
 *   - non-increasing when the noise grows relative to the sensitivity (sensitivity down:
 *     every per-step curve is nondecreasing in the shift, docs/lmo.md 2),
 * and that the PLD accountant's proven interval is ordered (lower <= upper), including
 * extreme parameter pairs (steps 1 and 2^53, rates 1e-300 and 1, sensitivities 1e-300 and
 * 1e18, delta 1e-300). Also regressions for the hangs of issue 15 (each must answer
 * within the test's time, with a proven bound or a refusal).
 *
 * The per-step curve is the MGF bound or the pure-DP curve for the random pairs (MPFR
 * interval arithmetic, milliseconds); a few pairs use the default best curve, whose
 * exact-integral enclosure is only 1e-7 wide per step, so those compare with that slack
 * (steps x 2e-7). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#include "dpzo/lmo.h"
#include "lmo_rdp.h"

/* splitmix64: fixed seed, same sequence everywhere */
static uint64_t rng_state = 0x15A11CE5u;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }
static double log_unif(double lo, double hi) { return exp(log(lo) + (log(hi) - log(lo)) * unif()); }

/* a random valid LMO noise, parameters over several decades */
static dpzo_lmo rand_lmo(void)
{
    dpzo_lmo l;
    l.gamma_weight = unif() < 0.2 ? 0.0 : log_unif(0.01, 2.0);
    l.gamma_shape = log_unif(0.5, 5.0);
    l.gamma_scale = log_unif(0.1, 10.0);
    l.exp_weight = unif() < 0.2 ? 0.0 : log_unif(0.01, 2.0);
    l.exp_rate = log_unif(0.2, 10.0);
    l.uniform_weight = log_unif(0.01, 2.0); /* never all three weights 0 */
    l.uniform_low = unif() < 0.3 ? 0.0 : log_unif(0.1, 5.0);
    l.uniform_high = l.uniform_low + log_unif(0.1, 3.0);
    return l;
}

static double eps_of(dpzo_ctx *ctx, const dpzo_lmo *l, const dpzo_lmo_account_options *o)
{
    dpzo_lmo_account_result r;
    dpzo_status st = dpzo_lmo_epsilon(ctx, l, o, &r);
    if (st != DPZO_OK)
        fail_msg("dpzo_lmo_epsilon failed: %s (%s)", dpzo_status_name(st), dpzo_ctx_errmsg(ctx));
    if (!(r.epsilon >= 0.0)) /* +inf is allowed (a bound that says nothing), NaN is not */
        fail_msg("epsilon %g is not a nonnegative number", r.epsilon);
    return r.epsilon;
}

/* a <= b up to `slack` (absolute) and a relative 1e-12 (outward roundings of the two
 * enclosures may differ by ulps where the mathematics gives equality) */
#define assert_le(a, b, slack, what, ...)                                                  \
    do {                                                                                  \
        double a_ = (a), b_ = (b);                                                        \
        if (!(a_ <= b_ + (slack) + 1e-12 * fabs(b_) || b_ == INFINITY))                   \
            fail_msg("%s: %.17g > %.17g " what, #a, a_, b_, __VA_ARGS__);                 \
    } while (0)

static dpzo_lmo_bound_kind cheap_bound(int i) { return i % 2 ? DPZO_LMO_BOUND_MGF : DPZO_LMO_BOUND_PURE; }

static void test_monotone_in_steps(void **state)
{
    dpzo_ctx *ctx = *state;
    rng_state = 1;
    for (int i = 0; i < 60; i++) {
        dpzo_lmo l = rand_lmo();
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.bound = cheap_bound(i);
        o.max_order = 16;
        o.delta = log_unif(1e-12, 1e-3);
        o.sensitivity = log_unif(0.01, 10.0);
        int wor = i % 3 == 2;
        if (wor) {
            o.sampling = DPZO_LMO_SAMPLING_WOR;
            o.n = 1 + (uint64_t)log_unif(10.0, 1e7);
            o.batch = 1 + (uint64_t)(unif() * (double)(o.n - 1));
        } else if (i % 3 == 1) {
            o.sampling = DPZO_LMO_SAMPLING_POISSON;
            o.q = log_unif(1e-5, 1.0);
        }
        uint64_t t1 = 1 + (uint64_t)log_unif(1.0, 1e6), t2 = t1 + (uint64_t)log_unif(1.0, 1e6);
        if (i == 0)
            t1 = 1, t2 = (uint64_t)1 << 53; /* the extreme pair */
        o.steps = t1;
        double e1 = eps_of(ctx, &l, &o);
        o.steps = t2;
        double e2 = eps_of(ctx, &l, &o);
        assert_le(e1, e2, 0.0, "(pair %d: steps %llu then %llu)", i, (unsigned long long)t1,
                  (unsigned long long)t2);
    }
}

static void test_monotone_in_rate(void **state)
{
    dpzo_ctx *ctx = *state;
    rng_state = 2;
    for (int i = 0; i < 60; i++) {
        dpzo_lmo l = rand_lmo();
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.bound = cheap_bound(i);
        o.max_order = 16;
        o.delta = log_unif(1e-12, 1e-3);
        o.sensitivity = log_unif(0.01, 10.0);
        o.steps = (uint64_t)log_unif(1.0, 1e5);
        double e1, e2, r1, r2;
        if (i % 2) {
            o.sampling = DPZO_LMO_SAMPLING_POISSON;
            r1 = log_unif(1e-6, 1.0);
            r2 = fmin(1.0, r1 * log_unif(1.0, 1e4));
            if (i == 1)
                r1 = 1e-300, r2 = 1.0; /* the extreme pair */
            o.q = r1;
            e1 = eps_of(ctx, &l, &o);
            o.q = r2;
            e2 = eps_of(ctx, &l, &o);
        } else {
            o.sampling = DPZO_LMO_SAMPLING_WOR;
            o.n = 2 + (uint64_t)log_unif(10.0, 1e9);
            uint64_t b1 = 1 + (uint64_t)(unif() * (double)(o.n - 1) * 0.5);
            uint64_t b2 = b1 + (uint64_t)(unif() * (double)(o.n - b1));
            if (i == 0)
                o.n = (uint64_t)1 << 53, b1 = 1, b2 = o.n; /* the extreme pair */
            r1 = (double)b1 / (double)o.n;
            r2 = (double)b2 / (double)o.n;
            o.batch = b1;
            e1 = eps_of(ctx, &l, &o);
            o.batch = b2;
            e2 = eps_of(ctx, &l, &o);
        }
        assert_le(e1, e2, 0.0, "(pair %d: rate %g then %g, %s)", i, r1, r2,
                  i % 2 ? "Poisson" : "without replacement");
    }
}

static void test_more_noise_never_hurts(void **state)
{
    dpzo_ctx *ctx = *state;
    rng_state = 3;
    for (int i = 0; i < 60; i++) {
        dpzo_lmo l = rand_lmo();
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.bound = cheap_bound(i);
        o.max_order = 16;
        o.delta = log_unif(1e-12, 1e-3);
        o.steps = (uint64_t)log_unif(1.0, 1e5);
        if (i % 3 == 1) {
            o.sampling = DPZO_LMO_SAMPLING_POISSON;
            o.q = log_unif(1e-5, 1.0);
        } else if (i % 3 == 2) {
            o.sampling = DPZO_LMO_SAMPLING_WOR;
            o.n = 1000;
            o.batch = 1 + (uint64_t)(unif() * 999.0);
        }
        /* noise scaled up by s relative to the query = sensitivity divided by s */
        double c2 = log_unif(1e-3, 100.0), c1 = c2 / log_unif(1.0, 1e3);
        if (i == 0)
            c1 = 1e-300, c2 = 1e18; /* the extreme pair */
        o.sensitivity = c1;
        double e1 = eps_of(ctx, &l, &o);
        o.sensitivity = c2;
        double e2 = eps_of(ctx, &l, &o);
        assert_le(e1, e2, 0.0, "(pair %d: sensitivity %g then %g)", i, c1, c2);
    }
}

/* the default (best) curve: the exact enclosure is 1e-7 wide per step, so epsilon may
 * move by about steps x 1e-7 where the mathematics is monotone */
static void test_best_curve_pairs(void **state)
{
    dpzo_ctx *ctx = *state;
    rng_state = 4;
    for (int i = 0; i < 5; i++) {
        dpzo_lmo l = rand_lmo();
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.max_order = 16;
        o.delta = 1e-6;
        o.sampling = DPZO_LMO_SAMPLING_POISSON;
        o.q = log_unif(1e-3, 0.5);
        o.steps = (uint64_t)log_unif(1.0, 1e3);
        double base = eps_of(ctx, &l, &o), slack = 2e-7 * (double)o.steps * 2.0;
        o.steps *= 2;
        double more_steps = eps_of(ctx, &l, &o);
        o.steps /= 2;
        assert_le(base, more_steps, slack, "(best pair %d, steps x2)", i);
        o.q *= 2.0;
        double more_rate = eps_of(ctx, &l, &o);
        o.q /= 2.0;
        assert_le(base, more_rate, slack, "(best pair %d, rate x2)", i);
        o.sensitivity = 0.5;
        double more_noise = eps_of(ctx, &l, &o);
        assert_le(more_noise, base, slack, "(best pair %d, sensitivity / 2)", i);
    }
}

static void test_pld_interval_ordered(void **state)
{
    dpzo_ctx *ctx = *state;
    rng_state = 5;
    for (int i = 0; i < 10; i++) {
        dpzo_lmo l = rand_lmo();
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.delta = log_unif(1e-10, 1e-3);
        o.sensitivity = log_unif(0.1, 2.0);
        o.steps = (uint64_t)log_unif(1.0, 100.0);
        if (i % 2) {
            o.sampling = DPZO_LMO_SAMPLING_POISSON;
            o.q = log_unif(1e-3, 1.0);
        }
        if (i == 0) { /* extreme: a subnormal delta, huge sensitivity */
            o.delta = 1e-300;
            o.sensitivity = 1e18;
        }
        dpzo_pld_result r;
        dpzo_status st = dpzo_lmo_pld_epsilon(ctx, &l, &o, 1e-2, &r);
        if (st == DPZO_ENOCONV)
            continue; /* "cannot certify": the caller keeps RDP (lmo epsilon does) */
        assert_ok(ctx, st);
        if (!(r.epsilon_lower >= 0.0 && r.epsilon_lower <= r.epsilon_upper))
            fail_msg("pair %d: PLD interval [%g, %g] is not ordered", i, r.epsilon_lower,
                     r.epsilon_upper);
        if (isinf(r.epsilon_upper) && r.reason[0] == '\0')
            fail_msg("pair %d: the PLD claims nothing without saying why", i);
    }
}

/* issue 15: these hung (minutes to hours). Each must answer within a fraction of a second
 * (the test's wall clock bound is generous for ASan): the RDP bound, and the PLD claiming
 * nothing with its reason, because one step would need ~1e7..1e22 grid points. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_extreme_parameters_answer(void **state)
{
    dpzo_ctx *ctx = *state;
    const dpzo_lmo base = {0.1, 1, 0.5, 0.1, 5, 0.1, 1, 2};
    struct {
        int field;
        double v, sens;
    } cases[] = {{1, 1e18, 1}, {2, 1e308, 1}, {5, 1e18, 1}, {4, 1e-300, 1}, {-1, 0, 1e18}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dpzo_lmo l = base;
        if (cases[i].field >= 0)
            ((double *)&l)[cases[i].field] = cases[i].v;
        dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
        o.delta = 1e-10;
        o.sampling = DPZO_LMO_SAMPLING_POISSON;
        o.q = 0.030408314773570897;
        o.steps = 192;
        o.sensitivity = cases[i].sens;
        double t0 = now_s();
        dpzo_lmo_account_result r;
        assert_ok(ctx, dpzo_lmo_epsilon(ctx, &l, &o, &r));
        assert_true(r.epsilon > 0.0); /* a number (these noises are far from private) */
        dpzo_pld_result pr;
        assert_ok(ctx, dpzo_lmo_pld_epsilon(ctx, &l, &o, 1e-4, &pr));
        assert_true(pr.epsilon_upper == INFINITY && pr.epsilon_lower == 0.0);
        assert_non_null(strstr(pr.reason, "grid points"));
        double dt = now_s() - t0;
        if (dt > 20.0)
            fail_msg("case %zu took %.1f s", i, dt);
    }
}

/* The paper's "total" at a subnormal delta or a subnormal per-step epsilon: sigma
 * overflowed to inf and the fractional-order series ran 1e5 terms of O(i) each (hours).
 * Now: a finite number for the subnormal delta (sigma = sqrt(2 ln(1.25/delta))/eps is
 * finite), a refusal naming the value for sigma beyond double range. */
static void test_paper_total_bounded(void **state)
{
    dpzo_ctx *ctx = *state;
    double e;
    double t0 = now_s();
    assert_ok(ctx, dpzo_lmo_paper_total_epsilon(ctx, 737.7, 1e-320, 0.01, 100,
                                                DPZO_LMO_PAPER_ORDERS_PT, &e));
    assert_true(isfinite(e) && e > 0.0);
    assert_int_equal(dpzo_lmo_paper_total_epsilon(ctx, 1e-320, 1e-5, 0.01, 100,
                                                  DPZO_LMO_PAPER_ORDERS_PT, &e),
                     DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "per-step epsilon 9.99989e-321"));
    assert_int_equal(dpzo_lmo_paper_total_epsilon(ctx, 1e200, 1e-5, 0.01, 100,
                                                  DPZO_LMO_PAPER_ORDERS_PT, &e),
                     DPZO_EINVAL);
    if (now_s() - t0 > 20.0)
        fail_msg("the paper's total took %.1f s", now_s() - t0);
}

/* The exact curve where double cannot evaluate the density (wE/lam = 0.1/1e-320
 * overflows): its sums were NaN, printed as an upper bound of -inf. Nothing is proven
 * there: the upper end must be +inf (the best curve then falls back on eps0). */
static void test_exact_unevaluable_is_inf(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_lmo l = {0.1, 1, 0.5, 0.1, 1e-320, 0.1, 1, 2};
    double orders[] = {2, 64};
    dpzo_bound b[2], e0;
    assert_ok(ctx, dpzo_lmo_rdp(ctx, &l, 1.0, DPZO_LMO_BOUND_EXACT, orders, 2, b));
    for (int i = 0; i < 2; i++) {
        assert_true(b[i].upper == INFINITY);
        assert_true(b[i].lower >= 0.0 && b[i].lower <= b[i].upper);
    }
    assert_ok(ctx, dpzo_lmo_eps0(ctx, &l, 1.0, &e0));
    assert_ok(ctx, dpzo_lmo_rdp(ctx, &l, 1.0, DPZO_LMO_BOUND_BEST, orders, 2, b));
    for (int i = 0; i < 2; i++)
        assert_true(b[i].upper > 0.0 && b[i].upper <= e0.upper);
}

/* The binned lower bound (the search's pruning) at C = 1e18: far-out bins whose masses
 * are differences of ~1e17 log tails made a zero Q-mass, inf - inf = NaN, reported as 0,
 * so no candidate was ever pruned. It must be a useful lower bound again, and below the
 * exact enclosure's upper end. */
static void test_binned_lower_at_huge_sensitivity(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_lmo l = {0.1, 1, 0.5, 0.1, 5, 0.1, 1, 2};
    double orders[] = {2, 16, 256}, bl[3];
    dpzo_bound up[3];
    dpzo__lmo_binned_rdp_lower(&l, 1e18, orders, 3, bl);
    assert_ok(ctx, dpzo_lmo_rdp(ctx, &l, 1e18, DPZO_LMO_BOUND_BEST, orders, 3, up));
    for (int i = 0; i < 3; i++) {
        if (!(bl[i] >= 0.5e17 && bl[i] <= up[i].upper))
            fail_msg("order %g: binned lower bound %g, upper %g", orders[i], bl[i], up[i].upper);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_monotone_in_steps, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_monotone_in_rate, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_more_noise_never_hurts, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_best_curve_pairs, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pld_interval_ordered, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_extreme_parameters_answer, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_paper_total_bounded, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_exact_unevaluable_is_inf, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_binned_lower_at_huge_sensitivity, ctx_setup,
                                        ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
