/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_audit_lower.c: the audit's threshold-test lower bound (audit/audit_lower.c,
 * issue 28 item 5): without-replacement claims at tiny noise could only HOLD or be
 * UNDETERMINED, because the PLD's lower end does not fit in memory there.
 *
 * Oracles: tests/ref/audit_lower_values.h (mpmath, 60 digits,
 * tests/ref/make_audit_lower_reference.py): the supremum over thresholds of the test's
 * bound, which the C answer (the bound at one threshold, rounded down) may not exceed and
 * must reach to 1e-3; the exact one-release epsilon where T = 1 (closed form), which no
 * lower bound may exceed; the PLD accountant's proven upper end where it runs; the audit's
 * verdicts on the issue's claim. */
#include <stdlib.h>
#include <string.h>
#include <dpzo/audit.h>
#include "internal.h"
#include "audit_internal.h"
#include "ref/audit_lower_values.h"
#include "testutil.h"

#define N_CASES (sizeof audit_lower_cases / sizeof *audit_lower_cases)

static dpzo__test_pair pair_of(const struct audit_lower_case *c)
{
    dpzo__test_pair p = {c->q_num, c->q_den, c->sigma, c->shift, c->sum, c->releases};
    return p;
}

static void test_against_mpmath(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CASES; i++) {
        const struct audit_lower_case *c = &audit_lower_cases[i];
        dpzo__test_pair p = pair_of(c);
        double t, v = dpzo__sgm_test_lower(&p, c->delta, &t);
        if (!(v <= c->sup))
            fail_msg("%s: %.17g above the supremum %.17g of the test's bounds", c->name, v,
                     c->sup);
        if (c->sup > 0.0 ? !(v >= c->sup * (1.0 - 1e-3)) : !(v == 0.0 && isnan(t)))
            fail_msg("%s: %.17g at threshold %.17g, supremum %.17g", c->name, v, t, c->sup);
        if (c->exact >= 0.0 && !(v <= c->exact))
            fail_msg("%s: %.17g above the exact epsilon %.17g", c->name, v, c->exact);
    }
}

/* The PLD's proven upper end on the same composed pair (Poisson-sampled Gaussian, noise in
 * units of the shift) is an upper bound on the truth: the test must stay below it. */
static void test_below_pld_upper(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < N_CASES; i++) {
        const struct audit_lower_case *c = &audit_lower_cases[i];
        if (c->sum != 1.0 || c->q_den != 1.0 || c->sigma < 0.1)
            continue; /* the PLD of these fits in memory at the default grid */
        dpzo__test_pair p = pair_of(c);
        double v = dpzo__sgm_test_lower(&p, c->delta, NULL);
        dpzo_event *e = dpzo_event_self_composed(
            ctx,
            dpzo_event_poisson_sampled(ctx, c->q_num / c->q_den,
                                       dpzo_event_gaussian(ctx, c->sigma / c->shift)),
            c->releases);
        assert_non_null(e);
        dpzo_pld_options o;
        dpzo_pld_options_default(&o);
        dpzo_pld_result r;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, c->delta, &o, &r));
        dpzo_event_free(e);
        if (!(v <= r.epsilon_upper))
            fail_msg("%s: test %.17g above the PLD's proven upper end %.17g", c->name, v,
                     r.epsilon_upper);
        /* and it is informative: within a factor 2 of the tight accountant's lower end */
        if (!(v >= 0.5 * r.epsilon_lower))
            fail_msg("%s: test %.17g, PLD lower end %.17g", c->name, v, r.epsilon_lower);
    }
}

/* More noise, a larger delta, fewer releases or a smaller rate can only lower the bound
 * (each is a post-processing or a weaker claim); bad arguments prove nothing (0). */
static void test_monotone_and_domain(void **state)
{
    (void)state;
    dpzo__test_pair base = {256, 60000, 1e-2, 1, 1, 1000};
    double v0 = dpzo__sgm_test_lower(&base, 1e-5, NULL);
    assert_true(v0 > 1000.0);
    double prev = v0;
    for (double s = 1.5e-2; s < 3.0; s *= 1.5) {
        dpzo__test_pair p = base;
        p.sigma = s;
        double v = dpzo__sgm_test_lower(&p, 1e-5, NULL);
        if (!(v <= prev))
            fail_msg("sigma %g: %.17g above %.17g at less noise", s, v, prev);
        prev = v;
    }
    prev = v0;
    for (double d = 1e-4; d < 0.5; d *= 10.0) {
        double v = dpzo__sgm_test_lower(&base, d, NULL);
        if (!(v <= prev))
            fail_msg("delta %g: %.17g above %.17g at a smaller delta", d, v, prev);
        prev = v;
    }
    dpzo__test_pair fewer = base;
    fewer.releases = 10;
    assert_true(dpzo__sgm_test_lower(&fewer, 1e-5, NULL) <= v0);
    const dpzo__test_pair bad[] = {
        {0, 1, 1, 1, 1, 1},   {2, 1, 1, 1, 1, 1},        {1, 2, 0, 1, 1, 1},
        {1, 2, NAN, 1, 1, 1}, {1, 2, INFINITY, 1, 1, 1}, {1, 2, 1, 0, 1, 1},
        {1, 2, 1, 1, 0, 1},   {1, 2, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double t = 0.0;
        assert_true(dpzo__sgm_test_lower(&bad[i], 1e-5, &t) == 0.0);
        assert_true(isnan(t));
    }
    /* the smallest noise (the truth is +inf): both scaled grids collapse onto t = 0 and 1,
     * where P - delta or Q is 1/2; a threshold between the means proves 7.4e8 (MPFR's
     * smallest positive number bounds Q), where 52.5 was all the scaled grids found */
    dpzo__test_pair subnormal = {1, 1, 5e-324, 1, 1, 1};
    assert_true(dpzo__sgm_test_lower(&subnormal, 0.5, NULL) > 7e8);
    assert_true(dpzo__sgm_test_lower(&base, 1.0, NULL) == 0.0);
    assert_true(dpzo__sgm_test_lower(&base, NAN, NULL) == 0.0);
}

static void audit_fixed(dpzo_ctx *ctx, dpzo_sampling_scheme s, double sigma, double eps,
                        dpzo_audit_result *r)
{
    dpzo_claim c;
    dpzo_claim_init(&c);
    c.noise_multiplier = sigma;
    c.sampling = s;
    c.batch_size = 256;
    c.dataset_size = 60000;
    c.steps = 1000;
    c.epsilon = eps;
    c.delta = 1e-5;
    dpzo_audit_options o;
    dpzo_audit_options_default(&o);
    o.calibrate = 0;
    o.prv = 0; /* the upper end from RDP alone: the PRV takes seconds at this noise */
    assert_ok(ctx, dpzo_audit_claim(ctx, &c, NULL, &o, r));
}

/* The issue's claim: epsilon 1 at sigma 1e-4, B 256 of 60000 (fixed batches, 1000 steps)
 * was UNDETERMINED [0, 2.0e11]; the true epsilon is at least the test's 5.0e7. */
static void test_issue_claim(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_audit_result r;
    audit_fixed(ctx, DPZO_SAMPLING_FIXED, 1e-4, 1.0, &r);
    assert_int_equal(r.verdict, DPZO_VERDICT_VIOLATED);
    assert_string_equal(r.bounds.lower_from, "test");
    assert_true(r.bounds.lower_elsewhere);
    assert_true(r.bounds.lower <= audit_lower_cases[0].sup);
    assert_true(r.bounds.lower >= audit_lower_cases[0].sup * (1.0 - 1e-3));
    assert_true(r.bounds.lower <= r.bounds.upper);
    assert_false(r.flags & DPZO_AUDIT_NO_LOWER);
    /* shuffled batches of the same run: 4 complete epochs, each summing k = 234 full batches */
    audit_fixed(ctx, DPZO_SAMPLING_SHUFFLED, 1e-4, 1.0, &r);
    assert_int_equal(r.verdict, DPZO_VERDICT_VIOLATED);
    assert_true(r.bounds.lower > 1e5); /* about 1 / (2 (1e-4)^2 234) */
    /* a claim above the truth stays undecided or holds: never VIOLATED by the test */
    audit_fixed(ctx, DPZO_SAMPLING_FIXED, 1e-4, 2.1e11, &r);
    assert_int_equal(r.verdict, DPZO_VERDICT_HOLDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_mpmath),
        cmocka_unit_test_setup_teardown(test_below_pld_upper, ctx_setup, ctx_teardown),
        cmocka_unit_test(test_monotone_and_domain),
        cmocka_unit_test_setup_teardown(test_issue_claim, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
