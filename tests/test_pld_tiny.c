/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_pld_tiny.c (issue 28, item 4): the tight accountants at tiny noise and their
 * consistency: what a fallback quotes, the sampling bound delta <= 1 - (1 - q)^T, epsilon
 * non-increasing in delta, memory refusals predicted before the work, and a grid that fits. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#include "ref/pld_soundness_values.h"
#include "ref/tiny_noise_values.h"

static dpzo_pld_options pld_opts(void)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    return o;
}

static dpzo_pld_options prv_opts(void)
{
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = DPZO_PLD_PRV;
    return o;
}

/* The number a fallback's reason quotes after `key` (NaN when it quotes none). */
static double quoted(const char *reason, const char *key)
{
    const char *p = strstr(reason, key);
    if (p == NULL)
        return NAN;
    for (p += strlen(key); *p != '\0' && !(*p >= '0' && *p <= '9'); p++)
        ; /* past a word such as "certified" */
    return *p == '\0' ? NAN : strtod(p, NULL);
}

/* Sub-item 1: a PRV fallback reported rdp_bound 0 with a reason quoting 0.0001543 for the RDP
 * bound (sigma 100, q 1e-4, 1000 steps, delta 3e-5): the reason compared the upper end with
 * the standard conversion's estimate (the tilt's), the fallback reported the certified
 * improved one. Whatever a reason quotes as the RDP accountant's bound must be rdp_epsilon,
 * and it must name the accountant that answered. */
static void test_fallback_quotes_its_bound(void **state)
{
    dpzo_ctx *ctx = *state;
    static const struct {
        double q, sigma, delta;
        uint64_t steps;
    } cases[] = {{1e-4, 100, 3e-5, 1000}, {1e-3, 100, 3e-5, 10}, {0.01, 100, 3e-5, 1},
                 {0.01, 100, 1e-5, 1}};
    int quoting = 0; /* fallbacks whose reason quotes a number: the check must run */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpzo_event *e = sgm_event(ctx, cases[i].q, cases[i].sigma, cases[i].steps);
        dpzo_pld_options o = prv_opts();
        dpzo_pld_result r;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, cases[i].delta, &o, &r));
        if (r.fallback) {
            double v = quoted(r.reason, "RDP accountant's ");
            quoting += !isnan(v);
            if (!isnan(v) && !(v >= r.rdp_epsilon && v <= r.rdp_epsilon * (1.0 + 1e-9)))
                fail_msg("case %zu: the reason \"%s\" quotes %.10g, rdp_epsilon is %.17g", i,
                         r.reason, v, r.rdp_epsilon);
            if (strstr(r.reason, "PLD's") != NULL)
                fail_msg("case %zu: a PRV result's reason names the PLD: \"%s\"", i, r.reason);
            assert_true(r.epsilon_upper <= r.rdp_epsilon);
        }
        dpzo_event_free(e);
    }
    assert_true(quoting > 0);
}


/* Row i of tiny_bounds at noise sigma: T steps of Poisson(q) or of batches of B of n. */
static dpzo_event *row_event(dpzo_ctx *ctx, size_t i, double sigma)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    dpzo_event *s = tiny_bounds[i].batch > 0
                        ? dpzo_event_wor_sampled(ctx, tiny_bounds[i].batch, tiny_bounds[i].n, g)
                        : dpzo_event_poisson_sampled(ctx, tiny_bounds[i].q, g);
    return dpzo_event_self_composed(ctx, s, tiny_bounds[i].steps);
}

/* epsilon(delta) upper end from accountant a (0 RDP, 1 PLD, 2 PRV); DPZO_OK or the status */
static dpzo_status eps_of(dpzo_ctx *ctx, int a, const dpzo_event *e, double delta, double *up)
{
    dpzo_status st;
    if (a == 0) {
        dpzo_dp_result r;
        st = dpzo_event_epsilon(ctx, e, delta, NULL, &r);
        *up = r.epsilon;
        return st;
    }
    dpzo_pld_options o = a == 1 ? pld_opts() : prv_opts();
    dpzo_pld_result r;
    st = dpzo_pld_epsilon(ctx, e, delta, &o, &r);
    *up = r.epsilon_upper;
    if (st == DPZO_OK && !(r.epsilon_lower <= r.epsilon_upper && r.epsilon_lower >= 0.0))
        fail_msg("accountant %d: lower end %.17g, upper %.17g", a, r.epsilon_lower, *up);
    return st;
}

static dpzo_status delta_of(dpzo_ctx *ctx, int a, const dpzo_event *e, double eps, double *up)
{
    dpzo_status st;
    if (a == 0) {
        dpzo_dp_result r;
        st = dpzo_event_delta(ctx, e, eps, NULL, &r);
        *up = r.delta;
        return st;
    }
    dpzo_pld_options o = a == 1 ? pld_opts() : prv_opts();
    dpzo_pld_result r;
    st = dpzo_pld_delta(ctx, e, eps, &o, &r);
    *up = r.delta_upper;
    return st;
}

static const char *const acc_name[] = {"rdp", "pld", "prv"};

/* Sub-item 2: at sigma 0.0049367, q 2.076e-5, one step, delta 0.018754 the exact epsilon is 0
 * (delta(0) < q < delta, tests/ref/make_tiny_noise_reference.py); the PLD refused for memory,
 * PRV answered 35.41 and RDP 20024.3. Every step uses the record with probability q at most,
 * so delta(eps) <= 1 - (1 - q)^T at every eps >= 0: all three accountants answer 0. */
static void test_issue_case_is_zero(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_true(tiny_delta0_up < 0.018754);
    dpzo_event *e = sgm_event(ctx, 2.076e-5, 0.0049367, 1);
    for (int a = 0; a < 3; a++) {
        double up = NAN;
        dpzo_status st = eps_of(ctx, a, e, 0.018754, &up);
        if (st != DPZO_OK || up != 0.0)
            fail_msg("%s: epsilon %.17g (%s: %s), the exact epsilon is 0", acc_name[a], up,
                     dpzo_status_name(st), st ? dpzo_ctx_errmsg(ctx) : "");
    }
    dpzo_event_free(e);
}

/* The bound at each row, against mpmath: with no noise it is delta(eps) itself, so epsilon is
 * 0 at delta = the smallest double at or above 1 - (1 - q)^T and must stay positive (here
 * +inf) just below it; delta(1) is the bound, to 1e-12 relative, never below it. At the
 * issue's tiny noise the same delta gives 0. */
static void test_sampling_bound_rows(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t i = 0; i < sizeof tiny_bounds / sizeof tiny_bounds[0]; i++) {
        double up = tiny_bounds[i].up;
        for (int a = 0; a < 3; a++) {
            dpzo_event *e = row_event(ctx, i, 0.0);
            double v = NAN;
            dpzo_status st;
            if (up < 1.0) {
                st = eps_of(ctx, a, e, up, &v);
                if (st != DPZO_OK || v != 0.0)
                    fail_msg("%s, %s, sigma 0: epsilon(%.17g) = %.17g (%s), not 0",
                             tiny_bounds[i].label, acc_name[a], up, v, dpzo_status_name(st));
                double below = up * (1.0 - 1e-9);
                st = eps_of(ctx, a, e, below, &v);
                if (below > 0.0 && (st != DPZO_OK || !(v > 0.0)))
                    fail_msg("%s, %s, sigma 0: epsilon(%.17g) = %.17g (%s), below the bound "
                             "(truth %s) it is +inf", tiny_bounds[i].label, acc_name[a], below,
                             v, dpzo_status_name(st), tiny_bounds[i].truth);
            }
            st = delta_of(ctx, a, e, 1.0, &v);
            if (st != DPZO_OK || !(v >= up && v <= up * (1.0 + 1e-12)))
                fail_msg("%s, %s, sigma 0: delta(1) = %.17g (%s), the exact delta is %s",
                         tiny_bounds[i].label, acc_name[a], v, dpzo_status_name(st),
                         tiny_bounds[i].truth);
            dpzo_event_free(e);
            if (up < 1.0 && tiny_bounds[i].steps <= 100) {
                e = row_event(ctx, i, 0.0049367);
                st = eps_of(ctx, a, e, up, &v);
                if (st != DPZO_OK || v != 0.0)
                    fail_msg("%s, %s, sigma 0.0049367: epsilon(%.17g) = %.17g (%s), not 0",
                             tiny_bounds[i].label, acc_name[a], up, v, dpzo_status_name(st));
                dpzo_event_free(e);
            }
        }
    }
}

/* calibrate --accountant prv at the issue's case returned sigma 0.004940986634, "tight to
 * 0.004940509796 (epsilon there 3.767575432 > target)", where sigma 0 meets the target: it
 * must return 0, with no failing value to report. */
static void test_calibrate_at_sampling_bound(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_calibration c;
    for (int a = 0; a < 3; a++) {
        dpzo_pld_options o = a == 1 ? pld_opts() : prv_opts();
        dpzo_status st = a == 0 ? dpzo_calibrate_noise(ctx, 1.0, 0.018754, 2.076e-5, 1, 0, NULL, &c)
                                : dpzo_calibrate_noise_pld(ctx, 1.0, 0.018754, 2.076e-5, 1, 0, &o, &c);
        if (st != DPZO_OK || c.value != 0.0 || !isnan(c.other_side) || c.epsilon != 0.0)
            fail_msg("%s: sigma %.17g, tight to %.17g, epsilon %.17g (%s)", acc_name[a], c.value,
                     c.other_side, c.epsilon, dpzo_status_name(st));
        st = a == 0 ? dpzo_calibrate_noise_wor(ctx, 1.0, 0.018754, 1, 48170, 7, 0, NULL, &c)
                    : dpzo_calibrate_noise_wor_pld(ctx, 1.0, 0.018754, 1, 48170, 7, 0, &o, &c);
        if (st != DPZO_OK || c.value != 0.0 || !isnan(c.other_side))
            fail_msg("%s, batches: sigma %.17g, tight to %.17g (%s)", acc_name[a], c.value,
                     c.other_side, dpzo_status_name(st));
    }
}

/* Sub-item 3: epsilon(delta) must be non-increasing. PRV solved its mesh from delta (the
 * coupling's delta_error = delta / 1000), so a larger delta got a coarser mesh and a larger
 * upper end: sigma 14.907054457228305, batches of 111 of 1095118, one step gave 0.0027288953
 * at delta 2.28e-9 and 0.0028491447 at 4.53e-8. */
static void test_issue_pair_monotone(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = dpzo_event_self_composed(
        ctx, dpzo_event_wor_sampled(ctx, 111, 1095118, dpzo_event_gaussian(ctx, 14.907054457228305)),
        1);
    for (int a = 1; a < 3; a++) {
        double small = NAN, large = NAN;
        assert_ok(ctx, eps_of(ctx, a, e, 2.28e-9, &small));
        assert_ok(ctx, eps_of(ctx, a, e, 4.53e-8, &large));
        if (!(large <= small))
            fail_msg("%s: epsilon %.17g at delta 4.53e-8 above %.17g at 2.28e-9", acc_name[a],
                     large, small);
    }
    dpzo_event_free(e);
}

/* The same on a ladder of deltas for seeded cases (Poisson and batches, 1 to 1000 steps):
 * each accountant's upper end never rises as delta does. */
static void test_monotone_in_delta(void **state)
{
    dpzo_ctx *ctx = *state;
    uint64_t seed = 0x28a4;
    const double deltas[] = {1e-14, 1e-11, 3e-10, 2.28e-9, 4.53e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3};
    const size_t nd = sizeof deltas / sizeof deltas[0];
    for (int c = 0; c < 8; c++) {
        double sigma = exp(log(0.5) + test_urand(&seed) * log(40.0));
        double q = exp(log(1e-4) + test_urand(&seed) * log(1e3));
        uint64_t steps = (uint64_t)exp(test_urand(&seed) * log(1000.0));
        int wor = c % 2;
        uint64_t n = 1000000, batch = (uint64_t)(q * (double)n) + 1;
        dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
        dpzo_event *e = dpzo_event_self_composed(
            ctx, wor ? dpzo_event_wor_sampled(ctx, batch, n, g) : dpzo_event_poisson_sampled(ctx, q, g),
            steps);
        for (int a = 1; a < 3; a++) {
            double prev = INFINITY, prev_d = 0.0;
            for (size_t i = 0; i < nd; i++) {
                double v = NAN;
                assert_ok(ctx, eps_of(ctx, a, e, deltas[i], &v));
                if (!(v <= prev))
                    fail_msg("%s, sigma %.6g, %s %.6g, %llu steps: epsilon %.17g at delta %g above "
                             "%.17g at %g", acc_name[a], sigma, wor ? "B/n" : "q",
                             wor ? (double)batch / (double)n : q, (unsigned long long)steps, v,
                             deltas[i], prev, prev_d);
                prev = v;
                prev_d = deltas[i];
            }
        }
        dpzo_event_free(e);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Sub-item 4: at sigma 0.0243, q 1, 9 steps, delta 4.5e-206, grid 1e-4 the PLD spent 35 s and
 * 1.8 GB discretising 2.5e7 points a step before refusing the composition (2122 MiB, FFT
 * length 2^25, over the 2048 MiB limit). The refusal is predicted before the steps are
 * discretised: at once (well under the 35 s; 5 s allows a sanitizer build), with the size,
 * and dpzo_pld_plan says so as fast. */
static void test_refusal_predicted(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, 0.0243), 9);
    dpzo_pld_options o = pld_opts();
    o.grid = 1e-4;
    dpzo_pld_result r;
    double t0 = now_s();
    assert_int_equal(dpzo_pld_epsilon(ctx, e, 4.5e-206, &o, &r), DPZO_ENOMEM);
    double t1 = now_s();
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "memory limit"));
    if (!(t1 - t0 < 5.0))
        fail_msg("the refusal took %.1f s: %s", t1 - t0, dpzo_ctx_errmsg(ctx));
    size_t bytes = 0, fft = 0;
    t0 = now_s();
    assert_ok(ctx, dpzo_pld_plan(ctx, e, 4.5e-206, 0, &o, &bytes, &fft));
    t1 = now_s();
    /* the 9 unsampled Gaussian steps are one step of noise 0.0081 since issue 30 (pld.c,
     * merge_gaussians): 2^24 points, 5823 MiB predicted */
    assert_true(bytes > o.memory_limit && fft >= ((size_t)1 << 24));
    if (!(t1 - t0 < 5.0))
        fail_msg("the plan took %.1f s", t1 - t0);
    dpzo_event_free(e);
}

/* Sub-item 5: the default grid refused sigma 0.01, q 0.004, one step, delta 1e-5 ("discretising
 * the steps needs more than the memory limit of 2048 MiB at grid 0.0001"), where PRV answers
 * at a coarser mesh. The default grid is now coarsened until the query fits, and the result
 * says which grid and why; the interval contains the exact 5274.19572 (mpmath,
 * tests/ref/make_pld_soundness_reference.py). A grid the caller chose is still refused. */
static void test_default_grid_fits(void **state)
{
    dpzo_ctx *ctx = *state;
    const pld_snd_eps_row *v = &pld_snd_eps[0];
    assert_true(v->sigma == 0.01 && v->q == 0.004 && v->delta == 1e-5);
    dpzo_event *e = sgm_event(ctx, v->q, v->sigma, 1);
    dpzo_pld_options o = pld_opts();
    dpzo_pld_result r;
    dpzo_status st = dpzo_pld_epsilon(ctx, e, v->delta, &o, &r);
    if (st != DPZO_OK)
        fail_msg("default grid: %s (%s)", dpzo_status_name(st), dpzo_ctx_errmsg(ctx));
    if (!(r.epsilon_lower <= v->eps_poisson && v->eps_poisson <= r.epsilon_upper && !r.fallback
          && r.grid > 1e-4 && strstr(r.reason, "grid") != NULL && r.memory_bytes <= o.memory_limit))
        fail_msg("[%.10g, %.10g] at grid %g (%s), exact %.10g", r.epsilon_lower, r.epsilon_upper,
                 r.grid, r.reason, v->eps_poisson);
    o.grid = 1e-4;
    assert_int_equal(dpzo_pld_epsilon(ctx, e, v->delta, &o, &r), DPZO_ENOMEM);
    dpzo_event_free(e);
    /* the note names a fractional limit as given (issue 28, item 11): it printed "2 MiB" */
    e = sgm_event(ctx, 0.01, 1.0, 1000);
    o = pld_opts();
    o.memory_limit = 3 * ((size_t)1 << 19); /* 1.5 MiB */
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, &o, &r));
    if (strstr(r.reason, "memory limit of 1.5 MiB") == NULL)
        fail_msg("coarsened at a 1.5 MiB limit: \"%s\"", r.reason);
    dpzo_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fallback_quotes_its_bound),
        cmocka_unit_test(test_issue_case_is_zero),
        cmocka_unit_test(test_sampling_bound_rows),
        cmocka_unit_test(test_calibrate_at_sampling_bound),
        cmocka_unit_test(test_issue_pair_monotone),
        cmocka_unit_test(test_monotone_in_delta),
        cmocka_unit_test(test_refusal_predicted),
        cmocka_unit_test(test_default_grid_fits),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
