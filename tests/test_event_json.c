/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_event_json.c: events written as JSON (dpzo_event_parse_json, docs/accountant.md
 * section 7): every kind gives the event its C constructor gives (same description, same
 * RDP), RDP of the closed-form leaves (Gaussian alpha/(2 s^2), zCDP xi + rho alpha, tree
 * aggregation alpha d/(2 s^2)), and every kind of bad input is refused with its status and a
 * message naming the JSON path. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static const double ORDERS[] = {1.5, 2.0, 10.0, 33.3};
#define N_ORDERS 4

static dpzo_event *parse_ok(dpzo_ctx *ctx, const char *text)
{
    dpzo_event *e = NULL;
    dpzo_status st = dpzo_event_parse_json(ctx, text, &e);
    if (st != DPZO_OK || e == NULL)
        fail_msg("parsing %s failed: %s (%s)", text, dpzo_status_name(st), dpzo_ctx_errmsg(ctx));
    return e;
}

/* The parsed event and the constructed one describe alike and have the same RDP. */
static void same(dpzo_ctx *ctx, const char *text, dpzo_event *built)
{
    assert_non_null(built);
    dpzo_event *e = parse_ok(ctx, text);
    char d1[512], d2[512];
    dpzo_event_describe(e, d1, sizeof d1);
    dpzo_event_describe(built, d2, sizeof d2);
    if (strcmp(d1, d2) != 0)
        fail_msg("%s: %s != %s", text, d1, d2);
    double r1[N_ORDERS], r2[N_ORDERS];
    dpzo_status s1 = dpzo_event_rdp(ctx, e, ORDERS, N_ORDERS, r1);
    dpzo_status s2 = dpzo_event_rdp(ctx, built, ORDERS, N_ORDERS, r2);
    assert_int_equal(s1, s2);
    for (int i = 0; s1 == DPZO_OK && i < N_ORDERS; i++)
        assert_true(r1[i] == r2[i] || (isinf(r1[i]) && isinf(r2[i])));
    dpzo_event_free(e);
    dpzo_event_free(built);
}

static void test_every_kind(void **state)
{
    dpzo_ctx *ctx = *state;
    same(ctx, "{\"type\": \"Gaussian\", \"noise_multiplier\": 1.1}",
         dpzo_event_gaussian(ctx, 1.1));
    same(ctx, "{\"type\": \"GaussianDpEvent\", \"noise_multiplier\": 0}",
         dpzo_event_gaussian(ctx, 0.0));
    same(ctx, "{\"type\": \"Laplace\", \"noise_multiplier\": 2.5}", dpzo_event_laplace(ctx, 2.5));
    same(ctx, "{\"type\": \"NonPrivate\"}", dpzo_event_non_private(ctx));
    same(ctx, "{\"type\": \"NoOp\"}", dpzo_event_composed(ctx, NULL, 0));
    same(ctx, "{\"type\": \"NoOpDpEvent\"}", dpzo_event_composed(ctx, NULL, 0));
    same(ctx, "{\"type\": \"ZCDp\", \"rho\": 0.5}", dpzo_event_zcdp(ctx, 0.5, 0.0));
    same(ctx, "{\"type\": \"ZCDpEvent\", \"rho\": 0.25, \"xi\": 0.125}",
         dpzo_event_zcdp(ctx, 0.25, 0.125));
    same(ctx, "{\"type\": \"RandomizedResponse\", \"noise_parameter\": 0.5, \"num_buckets\": 4}",
         dpzo_event_randomized_response(ctx, 0.5, 4));
    same(ctx, "{\"type\": \"DiscreteLaplace\", \"noise_parameter\": 0.7, \"sensitivity\": 3}",
         dpzo_event_discrete_laplace(ctx, 0.7, 3));
    uint64_t counts[3] = {100, 1000, 7};
    same(ctx, "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 3, "
              "\"step_counts\": [100, 1000, 7]}",
         dpzo_event_tree_aggregation(ctx, 3.0, counts, 3));
    same(ctx, "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 3, "
              "\"step_counts\": 1000}",
         dpzo_event_tree_aggregation(ctx, 3.0, counts + 1, 1));
    same(ctx, "{\"type\": \"MultiEpochTreeAggregation\", \"noise_multiplier\": 7, "
              "\"total_steps\": 2000, \"max_participation\": 6, \"min_separation\": 313}",
         dpzo_event_tree_aggregation_multi_epoch(ctx, 7.0, 2000, 6, 313));
    same(ctx, "{\"type\": \"SelfComposed\", \"count\": 1000, \"event\": {\"type\": "
              "\"PoissonSampled\", \"sampling_probability\": 0.01, \"event\": {\"type\": "
              "\"Gaussian\", \"noise_multiplier\": 1.1}}}",
         sgm_event(ctx, 0.01, 1.1, 1000));
    same(ctx, "{\"type\": \"SampledWithoutReplacement\", \"source_dataset_size\": 60000, "
              "\"sample_size\": 256, \"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 2}}",
         dpzo_event_wor_sampled(ctx, 256, 60000, dpzo_event_gaussian(ctx, 2.0)));
    dpzo_event *parts[2] = {sgm_event(ctx, 0.01, 1.1, 10), dpzo_event_laplace(ctx, 4.0)};
    same(ctx, "{\"type\": \"Composed\", \"events\": [{\"type\": \"SelfComposed\", \"count\": 10, "
              "\"event\": {\"type\": \"PoissonSampled\", \"sampling_probability\": 0.01, "
              "\"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 1.1}}}, {\"type\": "
              "\"Laplace\", \"noise_multiplier\": 4}]}",
         dpzo_event_composed(ctx, parts, 2));
    same(ctx, "{\"type\": \"Composed\", \"events\": []}", dpzo_event_composed(ctx, NULL, 0));
    /* whitespace, key order and exponents do not matter; a count written 1e3 is 1000 */
    same(ctx, " {\n\"count\": 1e3, \"event\": {\"noise_multiplier\": 11e-1, \"type\": "
              "\"Gaussian\"}, \"type\": \"SelfComposed\"}\t",
         dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, 1.1), 1000));
}

/* RDP of the leaves against their closed forms, computed here. */
static void test_closed_forms(void **state)
{
    dpzo_ctx *ctx = *state;
    double r[N_ORDERS];
    dpzo_event *e = parse_ok(ctx, "{\"type\": \"Gaussian\", \"noise_multiplier\": 1.5}");
    assert_ok(ctx, dpzo_event_rdp(ctx, e, ORDERS, N_ORDERS, r));
    for (int i = 0; i < N_ORDERS; i++)
        assert_rel(r[i], ORDERS[i] / (2 * 1.5 * 1.5), 1e-15);
    dpzo_event_free(e);
    e = parse_ok(ctx, "{\"type\": \"SelfComposed\", \"count\": 7, \"event\": {\"type\": \"ZCDp\", "
                      "\"rho\": 0.03, \"xi\": 0.01}}");
    assert_ok(ctx, dpzo_event_rdp(ctx, e, ORDERS, N_ORDERS, r));
    for (int i = 0; i < N_ORDERS; i++)
        assert_rel(r[i], 7 * (0.01 + 0.03 * ORDERS[i]), 1e-14);
    dpzo_event_free(e);
    /* 2000 steps: depth = bit length of 2000 = 11 */
    e = parse_ok(ctx, "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 4, "
                      "\"step_counts\": [2000, 3, 0]}");
    assert_ok(ctx, dpzo_event_rdp(ctx, e, ORDERS, N_ORDERS, r));
    for (int i = 0; i < N_ORDERS; i++)
        assert_rel(r[i], ORDERS[i] * 11 / (2 * 16.0), 1e-15);
    dpzo_event_free(e);
    /* an empty composition releases nothing: epsilon 0 */
    e = parse_ok(ctx, "{\"type\": \"NoOp\"}");
    dpzo_dp_result res;
    dpzo_rdp_options o = dpzo_rdp_options_default();
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, &o, &res));
    assert_true(res.epsilon == 0.0);
    dpzo_event_free(e);
}

typedef struct {
    const char *text;
    dpzo_status status;
    const char *message; /* a substring of the message */
} bad_case;

static void test_bad_inputs(void **state)
{
    dpzo_ctx *ctx = *state;
    static const bad_case cases[] = {
        /* not JSON, or not an event object */
        {"", DPZO_EPARSE, "not valid JSON"},
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": 1} x", DPZO_EPARSE, ""},
        {"[1, 2]", DPZO_EPARSE, "event must be an event object"},
        {"{}", DPZO_EPARSE, "event: missing \"type\""},
        {"{\"type\": 3}", DPZO_EPARSE, "event.type must be a string"},
        {"{\"type\": \"Gauss\"}", DPZO_EPARSE, "unknown event type \"Gauss\""},
        {"{\"type\": \"gaussian\", \"noise_multiplier\": 1}", DPZO_EPARSE, "unknown event type"},
        /* keys */
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": 1, \"sigma\": 1}", DPZO_EPARSE,
         "event: unknown key \"sigma\" for a Gaussian event"},
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": 1, \"noise_multiplier\": 2}",
         DPZO_EPARSE, "key \"noise_multiplier\" appears twice"},
        {"{\"type\": \"Gaussian\", \"type\": \"Gaussian\", \"noise_multiplier\": 1}", DPZO_EPARSE,
         "key \"type\" appears twice"},
        {"{\"type\": \"Gaussian\"}", DPZO_EPARSE, "a Gaussian event needs \"noise_multiplier\""},
        {"{\"type\": \"NonPrivate\", \"epsilon\": 1}", DPZO_EPARSE, "it has no fields"},
        {"{\"type\": \"SelfComposed\", \"count\": 3, \"inner\": {}}", DPZO_EPARSE,
         "unknown key \"inner\""},
        /* types */
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": \"1\"}", DPZO_EPARSE,
         "event.noise_multiplier must be a number, got a string"},
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": true}", DPZO_EPARSE, "got a boolean"},
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": null}", DPZO_EPARSE, "got null"},
        {"{\"type\": \"SelfComposed\", \"count\": \"3\", \"event\": {\"type\": \"NoOp\"}}",
         DPZO_EPARSE, "event.count must be a whole number, got a string"},
        {"{\"type\": \"SelfComposed\", \"count\": 3, \"event\": [1]}", DPZO_EPARSE,
         "event.event must be an event object"},
        {"{\"type\": \"Composed\", \"events\": {\"type\": \"NoOp\"}}", DPZO_EPARSE,
         "event.events must be an array, got an object"},
        {"{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 1, \"step_counts\": "
         "\"7\"}", DPZO_EPARSE, "step_counts must be an array of whole numbers or one"},
        /* values */
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": -1}", DPZO_EINVAL,
         "event.noise_multiplier must be >= 0, got -1"},
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": 1e999}", DPZO_EINVAL,
         "event.noise_multiplier must be finite"},
        {"{\"type\": \"PoissonSampled\", \"sampling_probability\": 1.5, \"event\": {\"type\": "
         "\"Gaussian\", \"noise_multiplier\": 1}}", DPZO_EINVAL,
         "event.sampling_probability must be in [0, 1], got 1.5"},
        {"{\"type\": \"SelfComposed\", \"count\": 2.5, \"event\": {\"type\": \"NoOp\"}}",
         DPZO_EINVAL, "event.count must be a whole number, got 2.5"},
        {"{\"type\": \"SelfComposed\", \"count\": -1, \"event\": {\"type\": \"NoOp\"}}",
         DPZO_EINVAL, "event.count must be a whole number in [0, 2^53], got -1"},
        {"{\"type\": \"SelfComposed\", \"count\": 1e20, \"event\": {\"type\": \"NoOp\"}}",
         DPZO_EINVAL, "event.count must be a whole number in [0, 2^53]"},
        {"{\"type\": \"SelfComposed\", \"count\": 9007199254740993, \"event\": {\"type\": "
         "\"NoOp\"}}", DPZO_EPARSE, "9007199254740993"},
        {"{\"type\": \"SelfComposed\", \"count\": 9.007199254740993e15, \"event\": {\"type\": "
         "\"NoOp\"}}", DPZO_EPARSE, "event.count must be a whole number: the number"},
        {"{\"type\": \"RandomizedResponse\", \"noise_parameter\": 0.5, \"num_buckets\": 0}",
         DPZO_EINVAL, "event.num_buckets must be a whole number in [1, 2^53], got 0"},
        {"{\"type\": \"SampledWithoutReplacement\", \"source_dataset_size\": 10, \"sample_size\": "
         "11, \"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": 1}}", DPZO_EINVAL,
         "event: sampling without replacement needs 0 <= batch <= n"},
        {"{\"type\": \"ZCDp\", \"rho\": 0.1, \"xi\": -0.5}", DPZO_EINVAL,
         "event.xi must be >= 0, got -0.5"},
        {"{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 1, \"step_counts\": []}",
         DPZO_EINVAL, "event.step_counts must not be empty"},
        {"{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": 1, \"step_counts\": "
         "[5, -2]}", DPZO_EINVAL, "event.step_counts[1] must be a whole number in [0, 2^53]"},
        {"{\"type\": \"MultiEpochTreeAggregation\", \"noise_multiplier\": 1, \"total_steps\": "
         "100, \"max_participation\": 2}", DPZO_EPARSE, "min_separation"},
        {"{\"type\": \"MultiEpochTreeAggregation\", \"noise_multiplier\": 1, \"total_steps\": "
         "100, \"max_participation\": -2, \"min_separation\": 3}", DPZO_EINVAL,
         "event.max_participation must be a whole number in [0, 2^53], got -2"},
        {"{\"type\": \"MultiEpochTreeAggregation\", \"noise_multiplier\": 1, \"total_steps\": "
         "1e9, \"max_participation\": 10, \"min_separation\": 1e6}", DPZO_EINVAL,
         "beyond dpzo's limits"},
        /* paths reach into the tree */
        {"{\"type\": \"Composed\", \"events\": [{\"type\": \"NoOp\"}, {\"type\": \"SelfComposed\", "
         "\"count\": 2, \"event\": {\"type\": \"Gaussian\", \"noise_multiplier\": -3}}]}",
         DPZO_EINVAL, "event.events[1].event.noise_multiplier must be >= 0"},
        /* refused kinds */
        {"{\"type\": \"Unsupported\"}", DPZO_EINVAL, "event: a Unsupported event has no privacy"},
        {"{\"type\": \"UnsupportedDpEvent\"}", DPZO_EINVAL, "UnsupportedDpEvent"},
        {"{\"type\": \"Composed\", \"events\": [{\"type\": \"Unsupported\"}]}", DPZO_EINVAL,
         "event.events[0]: a Unsupported event"},
        /* the kinds issue 30 added later: checked by key and range like the others */
        {"{\"type\": \"RepeatAndSelect\", \"mean\": 3, \"shape\": -2, \"event\": {\"type\": "
         "\"Gaussian\", \"noise_multiplier\": 1}}", DPZO_EINVAL, "event.shape must be >= -1"},
        {"{\"type\": \"MixtureOfGaussians\", \"standard_deviation\": 1, \"sensitivities\": "
         "[0, 1], \"sampling_probs\": [1]}", DPZO_EINVAL, "one probability per sensitivity"},
        {"{\"type\": \"RepeatAndSelect\", \"mean\": 3, \"k\": 1}", DPZO_EPARSE,
         "unknown key \"k\" for a RepeatAndSelect event"},
        /* JSON rules of docs/files.md */
        {"{\"type\": \"Gaussian\", \"noise_multiplier\": 1, \"\\u0000\": 1}", DPZO_EPARSE, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dpzo_event *e = (dpzo_event *)1;
        dpzo_status st = dpzo_event_parse_json(ctx, cases[i].text, &e);
        const char *msg = dpzo_ctx_errmsg(ctx);
        if (st != cases[i].status || e != NULL || strstr(msg, cases[i].message) == NULL)
            fail_msg("case %zu %s: got %s, \"%s\"; expected %s, \"%s\"", i, cases[i].text,
                     dpzo_status_name(st), msg, dpzo_status_name(cases[i].status),
                     cases[i].message);
        assert_null(dpzo_event_from_json(ctx, cases[i].text));
    }
    dpzo_event *e = (dpzo_event *)1;
    assert_int_equal(dpzo_event_parse_json(ctx, NULL, &e), DPZO_EINVAL);
    assert_null(e);
}

static char *repeat_text(const char *open, const char *mid, const char *close, size_t n)
{
    size_t len = n * (strlen(open) + strlen(close)) + strlen(mid) + 1;
    char *s = malloc(len), *p = s;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s", open);
    p += sprintf(p, "%s", mid);
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s", close);
    return s;
}

static void expect(dpzo_ctx *ctx, const char *text, dpzo_status want, const char *sub)
{
    dpzo_event *e = NULL;
    dpzo_status st = dpzo_event_parse_json(ctx, text, &e);
    if (st != want || strstr(dpzo_ctx_errmsg(ctx), sub) == NULL)
        fail_msg("got %s \"%s\", expected %s \"%s\"", dpzo_status_name(st), dpzo_ctx_errmsg(ctx),
                 dpzo_status_name(want), sub);
    if (want == DPZO_OK)
        assert_non_null(e);
    dpzo_event_free(e);
}

/* Depth bombs and huge arrays. */
static void test_limits(void **state)
{
    dpzo_ctx *ctx = *state;
    const char *open = "{\"type\": \"SelfComposed\", \"count\": 2, \"event\": ";
    const char *leaf = "{\"type\": \"Gaussian\", \"noise_multiplier\": 8}";
    /* 63 wrappers and the leaf: 64 levels, the limit */
    char *t = repeat_text(open, leaf, "}", DPZO_EVENT_JSON_MAX_DEPTH - 1);
    expect(ctx, t, DPZO_OK, "");
    free(t);
    t = repeat_text(open, leaf, "}", DPZO_EVENT_JSON_MAX_DEPTH);
    expect(ctx, t, DPZO_EINVAL, "events nested deeper than 64");
    free(t);
    /* deeper than cJSON's own nesting limit: refused as JSON before any event is read */
    t = repeat_text("[", "1", "]", 100000);
    expect(ctx, t, DPZO_EPARSE, "not valid JSON");
    free(t);
    /* arrays: 2^20 entries in all */
    size_t n = (size_t)DPZO_EVENT_JSON_MAX_NODES + 1;
    char *s = malloc(n * 2 + 200);
    assert_non_null(s);
    char *p = s + sprintf(s, "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": "
                             "1, \"step_counts\": [");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, i ? ",1" : "1");
    sprintf(p, "]}");
    expect(ctx, s, DPZO_EINVAL, "event.step_counts: more than 1048576 entries");
    /* a little under the limit is read (the event's depth is that of one step: 1) */
    p = s + sprintf(s, "{\"type\": \"SingleEpochTreeAggregation\", \"noise_multiplier\": "
                       "1, \"step_counts\": [");
    for (size_t i = 0; i < 100000; i++)
        p += sprintf(p, i ? ",1" : "1");
    sprintf(p, "]}");
    expect(ctx, s, DPZO_OK, "");
    free(s);
    /* many small events: the count is over the whole tree */
    const char *item = "{\"type\": \"NoOp\"},";
    size_t m = 600000;
    s = malloc(m * strlen(item) * 2 + 200);
    assert_non_null(s);
    p = s + sprintf(s, "{\"type\": \"Composed\", \"events\": [{\"type\": \"Composed\", "
                       "\"events\": [");
    for (size_t i = 0; i < m; i++)
        p += sprintf(p, "%s", item);
    p[-1] = ']';
    p += sprintf(p, "}, {\"type\": \"Composed\", \"events\": [");
    for (size_t i = 0; i < m; i++)
        p += sprintf(p, "%s", item);
    p[-1] = ']';
    sprintf(p, "}]}");
    expect(ctx, s, DPZO_EINVAL, "more than 1048576 events and array entries in one event");
    free(s);
}

static void test_file(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = NULL;
    assert_int_equal(dpzo_event_read_json_file(ctx, "/nonexistent/event.json", &e), DPZO_EPARSE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "/nonexistent/event.json"));
    assert_null(e);
    assert_int_equal(dpzo_event_read_json_file(ctx, "/", &e), DPZO_EPARSE);
    char path[] = "/tmp/dpzo_test_event_json_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *bad = "{\"type\": \"PoissonSampled\", \"sampling_probability\": 2, \"event\": "
                      "{\"type\": \"NoOp\"}}";
    assert_true(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    assert_int_equal(dpzo_event_read_json_file(ctx, path, &e), DPZO_EINVAL);
    char want[200];
    snprintf(want, sizeof want, "event file %s: event.sampling_probability must be in [0, 1]",
             path);
    if (strstr(dpzo_ctx_errmsg(ctx), want) == NULL)
        fail_msg("%s", dpzo_ctx_errmsg(ctx));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"type\": \"SelfComposed\", \"count\": 4, \"event\": {\"type\": \"Laplace\", "
          "\"noise_multiplier\": 2}}\n", f);
    fclose(f);
    assert_ok(ctx, dpzo_event_read_json_file(ctx, path, &e));
    /* pure DP: 4 Laplace(b = 2) releases are (4 / 2, 0)-DP; RDP at order 2 of one is
     * log(2/3 e^{1/2} + 1/3 e^{-1}) (Mironov 2017, table II) */
    double r, o = 2.0;
    assert_ok(ctx, dpzo_event_rdp(ctx, e, &o, 1, &r));
    assert_rel(r, 4 * log(2.0 / 3 * exp(0.5) + 1.0 / 3 * exp(-1.0)), 1e-14);
    dpzo_event_free(e);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_kind, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_closed_forms, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_inputs, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_limits, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_file, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests_name("event_json", tests, NULL, NULL);
}
