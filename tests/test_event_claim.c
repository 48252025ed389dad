/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_event_claim.c: claims that state an event (docs/audit.md section 2, "Claims
 * about any event"; issue 30): the proven interval brackets the exact epsilon of a Gaussian
 * release (Balle-Wang 2018's formula, solved here by bisection), the verdicts follow, an
 * event claim of T Poisson-sampled Gaussian steps gets the interval of the same mechanism
 * claim, tree aggregation gets the lower end of a record at step 0, events without a
 * realised PLD pair (zCDP, sampling without replacement) get no lower bound, and malformed event claims are refused with the key. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include <dpzo/audit_claim.h>

/* delta(eps) of the Gaussian mechanism with mu = sensitivity / sigma (exact: Balle and Wang
 * 2018, Theorem 8), and eps(delta) by bisection on it (delta decreases in eps). */
static double phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double gauss_delta(double mu, double eps)
{
    return phi(mu / 2 - eps / mu) - exp(eps) * phi(-mu / 2 - eps / mu);
}
static double gauss_epsilon(double mu, double delta)
{
    double lo = 0.0, hi = 100.0;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (gauss_delta(mu, mid) > delta)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static dpzo_claim_spec *read_claims(dpzo_ctx *ctx, const char *json, size_t *n)
{
    dpzo_claim_spec *s = NULL;
    assert_ok(ctx, dpzo_claims_from_json(ctx, json, NULL, "test.json", &s, n));
    return s;
}

static void audit_one(dpzo_ctx *ctx, const dpzo_claim_spec *s, dpzo_claim_report *rep)
{
    dpzo_audit_options o;
    dpzo_audit_options_default(&o);
    o.calibrate = 0;
    assert_ok(ctx, dpzo_claim_spec_audit(ctx, s, &o, rep));
}

static void claim_text(char *buf, size_t size, const char *event, double eps)
{
    snprintf(buf, size, "{\"format\": \"dpzo-claim\", \"name\": \"t\", \"event\": %s, "
                        "\"epsilon\": %.17g, \"delta\": 1e-5}", event, eps);
}

/* One Gaussian release, sigma 2: the interval holds the exact epsilon; a claim 1% above is
 * HOLDS, 1% below VIOLATED. */
static void test_gaussian_exact(void **state)
{
    dpzo_ctx *ctx = *state;
    const char *ev = "{\"type\": \"Gaussian\", \"noise_multiplier\": 2}";
    double truth = gauss_epsilon(0.5, 1e-5);
    const double factors[] = {1.01, 0.99};
    const dpzo_verdict want[] = {DPZO_VERDICT_HOLDS, DPZO_VERDICT_VIOLATED};
    for (int k = 0; k < 2; k++) {
        char text[400];
        claim_text(text, sizeof text, ev, truth * factors[k]);
        size_t n;
        dpzo_claim_spec *s = read_claims(ctx, text, &n);
        assert_int_equal(n, 1);
        assert_int_equal(s[0].noise, DPZO_CLAIM_NOISE_EVENT);
        assert_non_null(s[0].event_json);
        dpzo_claim_report rep;
        audit_one(ctx, &s[0], &rep);
        const dpzo_audit_bounds *b = &rep.audit.bounds;
        if (!(b->lower <= truth * (1 + 1e-9) && truth <= b->upper * (1 + 1e-9)
              && b->upper - b->lower < 1e-3))
            fail_msg("[%.17g, %.17g] does not hold %.17g", b->lower, b->upper, truth);
        assert_true(b->rdp >= b->upper);
        assert_int_equal(rep.audit.verdict, want[k]);
        assert_int_equal(rep.audit.flags & DPZO_AUDIT_NO_LOWER, 0);
        free(s);
    }
}

/* T Poisson-sampled Gaussian steps stated as an event: the interval of the same claim stated
 * with "mechanism" and "sampling" (the audit's own Gaussian path). */
static void test_same_as_mechanism_claim(void **state)
{
    dpzo_ctx *ctx = *state;
    const char *text =
        "{\"format\": \"dpzo-claims\", \"claims\": ["
        "{\"mechanism\": {\"noise\": \"gaussian\", \"noise_multiplier\": 1.1}, \"sampling\": "
        "{\"scheme\": \"poisson\", \"rate\": 0.01}, \"steps\": 1000, \"epsilon\": 1.6, "
        "\"delta\": 1e-5, \"accountant\": {\"orders\": [2, 4, 8, 16, 32]}},"
        "{\"event\": {\"type\": \"SelfComposed\", \"count\": 1000, \"event\": {\"type\": "
        "\"PoissonSampled\", \"sampling_probability\": 0.01, \"event\": {\"type\": \"Gaussian\", "
        "\"noise_multiplier\": 1.1}}}, \"epsilon\": 1.6, \"delta\": 1e-5}]}";
    size_t n;
    dpzo_claim_spec *s = read_claims(ctx, text, &n);
    assert_int_equal(n, 2);
    /* one allocation holds the specs, the first claim's orders and the second's event */
    assert_int_equal(s[0].claim.accountant.n_orders, 5);
    assert_true(s[0].claim.accountant.orders[4] == 32.0);
    assert_null(s[0].event_json);
    assert_non_null(strstr(s[1].event_json, "\"count\":1000"));
    dpzo_claim_report r0, r1;
    audit_one(ctx, &s[0], &r0);
    audit_one(ctx, &s[1], &r1);
    assert_true(r0.audit.bounds.upper == r1.audit.bounds.upper);
    assert_true(r0.audit.bounds.rdp == r1.audit.bounds.rdp);
    assert_true(r1.audit.bounds.lower <= r1.audit.bounds.upper && r1.audit.bounds.lower > 1.5);
    assert_int_equal(r0.audit.verdict, DPZO_VERDICT_HOLDS);
    assert_int_equal(r1.audit.verdict, DPZO_VERDICT_HOLDS);
    /* the stored text is the event: it reads back to the same description */
    dpzo_event *a = NULL, *b = dpzo_event_self_composed(
        ctx, dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_gaussian(ctx, 1.1)), 1000);
    assert_ok(ctx, dpzo_event_parse_json(ctx, s[1].event_json, &a));
    char da[200], db[200];
    dpzo_event_describe(a, da, sizeof da);
    dpzo_event_describe(b, db, sizeof db);
    assert_string_equal(da, db);
    dpzo_event_free(a);
    dpzo_event_free(b);
    free(s);
}

/* Tree aggregation of 2000 steps (depth 11) at sigma 7 is the Gaussian of mu = sqrt(11)/7:
 * the upper end is above its exact epsilon and close to it; no lower bound is claimed. */
static void test_no_lower(void **state)
{
    dpzo_ctx *ctx = *state;
    double truth = gauss_epsilon(sqrt(11.0) / 7.0, 1e-5);
    char text[600];
    claim_text(text, sizeof text,
               "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 7, "
               "\"step_counts\": [2000, 5]}", truth * 0.99);
    size_t n;
    dpzo_claim_spec *s = read_claims(ctx, text, &n);
    dpzo_claim_report rep;
    audit_one(ctx, &s[0], &rep);
    const dpzo_audit_bounds *b = &rep.audit.bounds;
    /* tree aggregation: realised (a record at step 0), its lower end the Gaussian's at the
     * noise multiplier rounded up: the claim 1% below the truth is VIOLATED */
    assert_true(b->upper >= truth && b->upper < truth * 1.001);
    assert_true(b->lower <= truth && b->lower > truth * 0.999);
    assert_false(rep.audit.flags & DPZO_AUDIT_NO_LOWER);
    assert_int_equal(rep.audit.verdict, DPZO_VERDICT_VIOLATED);
    free(s);
    /* zCDP, rho = 0.1, delta 1e-5: within Bun-Steinke's conversion rho + 2 sqrt(rho log(1/d))
     * (Proposition 1.3), which is a valid bound dpzo's conversion must not exceed */
    double bs = 0.1 + 2 * sqrt(0.1 * log(1e5));
    claim_text(text, sizeof text, "{\"type\": \"ZCDp\", \"rho\": 0.1}", bs);
    s = read_claims(ctx, text, &n);
    audit_one(ctx, &s[0], &rep);
    assert_true(rep.audit.bounds.upper <= bs && rep.audit.bounds.upper > 0.5 * bs);
    assert_true(rep.audit.flags & DPZO_AUDIT_NO_LOWER);
    assert_int_equal(rep.audit.verdict, DPZO_VERDICT_HOLDS);
    free(s);
    /* sampling without replacement: a dominating pair, no lower bound */
    claim_text(text, sizeof text,
               "{\"type\": \"SelfComposed\", \"count\": 100, \"event\": {\"type\": "
               "\"SampledWithoutReplacement\", \"source_dataset_size\": 1000, \"sample_size\": "
               "10, \"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 1}}}", 0.01);
    s = read_claims(ctx, text, &n);
    audit_one(ctx, &s[0], &rep);
    assert_true(rep.audit.flags & DPZO_AUDIT_NO_LOWER);
    assert_int_equal(rep.audit.verdict, DPZO_VERDICT_UNDETERMINED);
    free(s);
}

static void test_bad_event_claims(void **state)
{
    dpzo_ctx *ctx = *state;
#define EV "\"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 2}, "
    static const struct {
        const char *json;
        dpzo_status st;
        const char *msg;
    } cases[] = {
        {"{\"format\": \"dpzo-claim\", " EV "\"steps\": 3, \"epsilon\": 1, \"delta\": 1e-5}",
         DPZO_EPARSE, "a claim with an event has no \"steps\""},
        {"{\"format\": \"dpzo-claim\", " EV "\"mechanism\": {\"noise\": \"gaussian\", "
         "\"noise_multiplier\": 1}, \"epsilon\": 1, \"delta\": 1e-5}",
         DPZO_EPARSE, "has no \"mechanism\""},
        {"{\"format\": \"dpzo-claim\", " EV "\"sampling\": {\"scheme\": \"full\"}, "
         "\"epsilon\": 1, \"delta\": 1e-5}", DPZO_EPARSE, "has no \"sampling\""},
        {"{\"format\": \"dpzo-claim\", " EV "\"attack\": {\"tp\": 1, \"fp\": 1, \"tn\": 1, "
         "\"fn\": 1}, \"epsilon\": 1, \"delta\": 1e-5}", DPZO_EPARSE, "has no \"attack\""},
        {"{\"format\": \"dpzo-claim\", " EV "\"delta\": 1e-5}", DPZO_EPARSE,
         "missing \"epsilon\""},
        {"{\"format\": \"dpzo-claim\", " EV "\"epsilon\": -1, \"delta\": 1e-5}", DPZO_EINVAL,
         "\"epsilon\" must be >= 0"},
        {"{\"format\": \"dpzo-claim\", " EV "\"epsilon\": 1, \"delta\": 1}", DPZO_EINVAL,
         "\"delta\" must be in (0, 1)"},
        {"{\"format\": \"dpzo-claim\", \"event\": {\"type\": \"Gaussian\", \"sigma\": 2}, "
         "\"epsilon\": 1, \"delta\": 1e-5}", DPZO_EPARSE,
         "claim file test.json: event: unknown key \"sigma\""},
        {"{\"format\": \"dpzo-claims\", \"claims\": [{" EV "\"epsilon\": 1, \"delta\": 1e-5}, "
         "{\"event\": {\"type\": \"SelfComposed\", \"count\": 1.5, \"event\": {\"type\": "
         "\"NoOp\"}}, \"epsilon\": 1, \"delta\": 1e-5}]}", DPZO_EINVAL,
         "claim file test.json: claims[1]: event.count must be a whole number"},
        {"{\"format\": \"dpzo-claim\", \"event\": {\"type\": \"Unsupported\"}, \"epsilon\": 1, "
         "\"delta\": 1e-5}", DPZO_EINVAL, "Unsupported"},
        {"{\"format\": \"dpzo-claim\", \"event\": [], \"epsilon\": 1, \"delta\": 1e-5}",
         DPZO_EPARSE, "event must be an event object"},
    };
#undef EV
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dpzo_claim_spec *s = NULL;
        size_t n = 0;
        dpzo_status st = dpzo_claims_from_json(ctx, cases[i].json, NULL, "test.json", &s, &n);
        if (st != cases[i].st || strstr(dpzo_ctx_errmsg(ctx), cases[i].msg) == NULL)
            fail_msg("case %zu: %s \"%s\", expected %s \"%s\"", i, dpzo_status_name(st),
                     dpzo_ctx_errmsg(ctx), dpzo_status_name(cases[i].st), cases[i].msg);
        assert_null(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gaussian_exact, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_same_as_mechanism_claim, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_no_lower, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_event_claims, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests_name("event_claim", tests, NULL, NULL);
}
