/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_profile.c: noise profiles (dpzo/profile.h, docs/profile.md): SHA-256 against
 * the FIPS 180-2 examples and hashlib, the checksum rule against an independent Python
 * implementation (tests/ref/make_profile_reference.py), bit-exact round trips, key order
 * and number spelling independence, tampering, every validation rule, Gaussian profiles
 * calibrated and verified, the `dpzo profile` commands, and LMO profiles (last: they
 * need the LMO accountant). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "testutil.h"
#include "cliutil.h"
#include "dpzo_sha256.h"
#include "ref/profile_reference.h"

/* ---- helpers --------------------------------------------------------------------- */

static void rawify17(cJSON *it)
{
    if (cJSON_IsNumber(it)) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.17g", it->valuedouble);
        it->type = cJSON_Raw;
        it->valuestring = strdup(isfinite(it->valuedouble) ? buf : "1e999");
        return;
    }
    for (cJSON *c = it->child; c != NULL; c = c->next)
        rawify17(c);
}

/* The tree printed with every number spelled "%.17g" (exact, but not the writer's
 * spelling), so edits below never change a value by re-printing it. */
static char *print_exact(const cJSON *root)
{
    cJSON *d = cJSON_Duplicate(root, 1);
    rawify17(d);
    char *t = cJSON_Print(d);
    cJSON_Delete(d);
    return t;
}

/* Replaces the tree's "sha256" by the checksum of its content and prints it. */
static char *with_checksum(dpzo_ctx *ctx, cJSON *root)
{
    cJSON_DeleteItemFromObjectCaseSensitive(root, "sha256");
    char *t = print_exact(root), sha[65];
    assert_ok(ctx, dpzo_profile_checksum(ctx, t, sha, NULL));
    free(t);
    cJSON_AddStringToObject(root, "sha256", sha);
    return print_exact(root);
}

/* The member at a dotted path ("accounting.delta"), its parent and last key. */
static cJSON *at(cJSON *root, const char *path, cJSON **parent, const char **key)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    cJSON *cur = root, *par = NULL;
    char *save = NULL, *last = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        par = cur;
        last = tok;
        cur = cur ? cJSON_GetObjectItemCaseSensitive(cur, tok) : NULL;
    }
    if (parent)
        *parent = par;
    if (key)
        *key = last;
    return cur;
}

/* Sets (or adds) the member at path to the JSON value text; NULL deletes it. */
static void edit(cJSON *root, const char *path, const char *value)
{
    cJSON *parent;
    const char *key;
    cJSON *cur = at(root, path, &parent, &key);
    assert_non_null(parent);
    if (value == NULL) {
        assert_non_null(cur);
        cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
        return;
    }
    int dup = value[0] == '+';
    cJSON *v = cJSON_Parse(value + dup);
    assert_non_null(v);
    if (cur != NULL && !dup)
        cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v);
    else
        cJSON_AddItemToObject(parent, key, v);
}

static dpzo_profile gaussian_struct(void)
{
    dpzo_profile p;
    dpzo_profile_init(&p);
    p.kind = DPZO_NOISE_GAUSSIAN;
    p.noise_multiplier = 1.1;
    p.sensitivity = 1.0;
    strcpy(p.clip, "l2");
    strcpy(p.accountant, "rdp");
    strcpy(p.sampling, "poisson");
    p.sampling_rate = 0.01;
    p.steps = 100;
    p.delta = 1e-5;
    strcpy(p.adjacency, "add-remove");
    p.epsilon = 1.0;
    strcpy(p.epsilon_bound, "proven-upper");
    strcpy(p.command, "tests/test_profile.c");
    strcpy(p.created, "2026-11-21T12:00:00Z");
    return p;
}

/* A full LMO profile: wor sampling, curve with +inf, objective. */
static dpzo_profile lmo_struct(void)
{
    dpzo_profile p;
    dpzo_profile_init(&p);
    p.kind = DPZO_NOISE_LMO;
    p.lmo = (dpzo_lmo){0.5, 2.0, 1.0 / 3.0, 0.3, 2.5, 0.2, 5.0, 6.0};
    p.sensitivity = 0.1;
    strcpy(p.clip, "scalar");
    strcpy(p.accountant, "rdp");
    strcpy(p.bound, "exact");
    strcpy(p.sampling, "wor");
    p.batch_size = 2048;
    p.dataset_size = 67349;
    p.sampling_rate = 2048.0 / 67349.0;
    p.steps = 192;
    p.delta = 1e-10;
    strcpy(p.adjacency, "replace-one");
    p.epsilon = 0.7071067811865476;
    strcpy(p.epsilon_bound, "proven-upper");
    p.order = 17.5;
    p.eps0 = 0.2347;
    const double o[4] = {1.5, 2.0, 64.0, 1e6}, r[4] = {1e-300, 0.1, 0x1p-1074, INFINITY};
    assert_int_equal(dpzo_profile_set_rdp(NULL, &p, o, r, 4), DPZO_OK);
    p.has_objective = 1;
    strcpy(p.objective, "mean-abs");
    p.objective_value = 1.2345678901234567;
    p.usefulness_gamma = 0.9;
    p.usefulness = 0.951229424500714;
    p.mean_abs = 1.2345678901234567;
    p.variance = INFINITY;
    strcpy(p.grid, "paper");
    p.grid_index = 4711;
    strcpy(p.command, "search \"with quotes\"\tand tab");
    strcpy(p.created, "2026-11-21T12:00:00Z");
    return p;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#define ASSERT_SAME(field)                                                                 \
    do {                                                                                  \
        if (!same_double(a->field, b->field))                                             \
            fail_msg("%s: %.17g != %.17g", #field, a->field, b->field);                   \
    } while (0)
#define ASSERT_STR(field) assert_string_equal(a->field, b->field)

static void assert_profiles_equal(const dpzo_profile *a, const dpzo_profile *b)
{
    assert_int_equal(a->kind, b->kind);
    ASSERT_SAME(noise_multiplier);
    ASSERT_SAME(lmo.gamma_weight);
    ASSERT_SAME(lmo.gamma_shape);
    ASSERT_SAME(lmo.gamma_scale);
    ASSERT_SAME(lmo.exp_weight);
    ASSERT_SAME(lmo.exp_rate);
    ASSERT_SAME(lmo.uniform_weight);
    ASSERT_SAME(lmo.uniform_low);
    ASSERT_SAME(lmo.uniform_high);
    ASSERT_SAME(sensitivity);
    ASSERT_STR(clip);
    assert_int_equal(a->queries_per_step, b->queries_per_step);
    ASSERT_STR(accountant);
    ASSERT_STR(bound);
    ASSERT_STR(sampling);
    ASSERT_SAME(sampling_rate);
    assert_true(a->batch_size == b->batch_size && a->dataset_size == b->dataset_size);
    assert_true(a->steps == b->steps);
    ASSERT_SAME(delta);
    ASSERT_STR(adjacency);
    ASSERT_SAME(epsilon);
    ASSERT_STR(epsilon_bound);
    /* NaN (null) fields: compare as NaN-or-equal (the struct's NaN payload is not kept) */
    assert_true(isnan(a->order) ? isnan(b->order) : same_double(a->order, b->order));
    assert_true(isnan(a->eps0) ? isnan(b->eps0) : same_double(a->eps0, b->eps0));
    assert_int_equal(a->n_orders, b->n_orders);
    for (size_t i = 0; i < a->n_orders; i++) {
        assert_true(same_double(a->orders[i], b->orders[i]));
        assert_true(same_double(a->rdp[i], b->rdp[i]));
    }
    assert_int_equal(a->has_objective, b->has_objective);
    if (a->has_objective) {
        ASSERT_STR(objective);
        ASSERT_SAME(objective_value);
        double x[4] = {a->usefulness_gamma, a->usefulness, a->mean_abs, a->variance};
        double y[4] = {b->usefulness_gamma, b->usefulness, b->mean_abs, b->variance};
        for (int i = 0; i < 4; i++)
            assert_true(isnan(x[i]) ? isnan(y[i]) : same_double(x[i], y[i]));
        ASSERT_STR(grid);
        assert_int_equal(a->grid_index, b->grid_index);
    }
    ASSERT_STR(version);
    ASSERT_STR(command);
    ASSERT_STR(created);
}

/* ---- SHA-256 --------------------------------------------------------------------- */

/* FIPS 180-4's vectors and the million a's, whole and in pieces, are in test_sha256.c; here
 * the padding boundaries against hashlib (tests/ref/make_profile_reference.py). */
static void test_sha256_padding(void **state)
{
    (void)state;
    char hex[65];
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    for (size_t i = 0; i < sizeof SHA_REF_A / sizeof *SHA_REF_A; i++) {
        assert_true(SHA_REF_A[i].n <= 1000000);
        dpzo__sha256_hex(a, SHA_REF_A[i].n, hex);
        assert_string_equal(hex, SHA_REF_A[i].hex);
    }
    free(a);
}

/* ---- the checksum rule against the Python implementation ------------------------- */

static void test_reference_fixture(void **state)
{
    dpzo_ctx *ctx = *state;
    char sha[65], *canon = NULL;
    assert_ok(ctx, dpzo_profile_checksum(ctx, PROFILE_REF_JSON, sha, &canon));
    assert_string_equal(canon, PROFILE_REF_CANONICAL);
    assert_string_equal(sha, PROFILE_REF_SHA256);
    free(canon);
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_from_json(ctx, PROFILE_REF_JSON, &p));
    assert_string_equal(p.sha256, PROFILE_REF_SHA256);
    /* the values the Python side wrote, read back exactly */
    assert_true(p.kind == DPZO_NOISE_LMO);
    assert_true(p.lmo.gamma_scale == 1.0 / 3.0 && p.lmo.uniform_low == 5.0);
    assert_true(p.sampling_rate == 2048.0 / 67349.0);
    assert_true(p.batch_size == 2048 && p.dataset_size == 67349 && p.steps == 192);
    assert_true(p.n_orders == 5 && p.orders[4] == 1e6 && p.rdp[0] == 1e-300);
    assert_true(p.rdp[2] == 0x1p-1074 && isinf(p.rdp[3]) && p.rdp[4] == 123456789012345678.0);
    assert_true(isinf(p.variance) && p.grid_index == 123456 && p.has_objective);
    assert_string_equal(p.command, "make_profile_reference.py \"quoted\" back\\slash\ttab \001 "
                                   "\303\251t\303\251 \316\265");
    /* our writer produces the same canonical content, so the same checksum */
    char *json;
    assert_ok(ctx, dpzo_profile_to_json(ctx, &p, &json));
    assert_string_equal(p.sha256, PROFILE_REF_SHA256);
    assert_ok(ctx, dpzo_profile_checksum(ctx, json, sha, &canon));
    assert_string_equal(canon, PROFILE_REF_CANONICAL);
    free(canon);
    free(json);
    dpzo_profile_free(&p);
}

/* ---- round trips ----------------------------------------------------------------- */

static void round_trip(dpzo_ctx *ctx, dpzo_profile *p)
{
    char *json, *json2;
    assert_ok(ctx, dpzo_profile_to_json(ctx, p, &json));
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_from_json(ctx, json, &q));
    assert_profiles_equal(p, &q);
    assert_string_equal(p->sha256, q.sha256);
    assert_ok(ctx, dpzo_profile_to_json(ctx, &q, &json2));
    assert_string_equal(json, json2); /* reading and writing again is byte-stable */
    free(json);
    free(json2);
    dpzo_profile_free(&q);
}

static void test_round_trip(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile g = gaussian_struct(), l = lmo_struct();
    round_trip(ctx, &g);
    round_trip(ctx, &l);
    /* also through a file */
    char path[1024];
    snprintf(path, sizeof path, "%s/profile_rt.json", DPZO_TEST_TMP);
    assert_ok(ctx, dpzo_profile_write_file(ctx, &l, path));
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_read_file(ctx, path, &q));
    assert_profiles_equal(&l, &q);
    dpzo_profile_free(&q);
    dpzo_profile_free(&l);
    dpzo_profile_free(&g);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Every double must come back with the same bits: random bit patterns (all binades,
 * subnormals included) and the edges of the integer rule. */
static void test_round_trip_doubles(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile p = gaussian_struct();
    static const double edges[] = {0x1p53 - 1, 0x1p53, 0x1p53 + 2, 1e15 + 0.5, 0x1p-1074,
                                   0x1p-1022,  1e300, 1.7976931348623157e308, 0.1, 1.0 / 3.0,
                                   2.0 / 3.0,  1e22, 5e-324, 123456789.000001};
    uint64_t seed = 42;
    for (int i = 0; i < 1500; i++) {
        double x;
        if (i < (int)(sizeof edges / sizeof *edges)) {
            x = edges[i];
        } else {
            uint64_t bits = splitmix(&seed) & 0x7fffffffffffffffull; /* positive */
            memcpy(&x, &bits, sizeof x);
            if (!isfinite(x) || x == 0.0)
                continue;
        }
        p.sensitivity = x;
        uint64_t dbits = (splitmix(&seed) >> 12) | 0x3ff0000000000000ull; /* [1, 2) */
        memcpy(&p.delta, &dbits, sizeof p.delta);
        p.delta -= 1.0; /* [0, 1) with 52 random bits */
        if (p.delta == 0.0)
            continue;
        char *json;
        assert_ok(ctx, dpzo_profile_to_json(ctx, &p, &json));
        dpzo_profile q;
        assert_ok(ctx, dpzo_profile_from_json(ctx, json, &q));
        if (!same_double(q.sensitivity, x) || !same_double(q.delta, p.delta))
            fail_msg("%a or %a did not round-trip", x, p.delta);
        free(json);
        dpzo_profile_free(&q);
    }
}

/* The checksum does not depend on key order, whitespace or how numbers are spelled. */
static void test_canonical_independent_of_layout(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile l = lmo_struct();
    char *json;
    assert_ok(ctx, dpzo_profile_to_json(ctx, &l, &json));
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    /* reverse the members of every object */
    cJSON *stack[64];
    int top = 0;
    stack[top++] = root;
    while (top > 0) {
        cJSON *o = stack[--top];
        cJSON *items[32];
        int n = 0;
        for (cJSON *c = o->child; c != NULL; c = c->next)
            items[n++] = c;
        for (int i = 0; i < n; i++)
            cJSON_DetachItemViaPointer(o, items[i]);
        for (int i = n - 1; i >= 0; i--) {
            cJSON_AddItemToArray(o, items[i]); /* keeps the key */
            if (cJSON_IsObject(items[i]))
                stack[top++] = items[i];
        }
    }
    char *variant = print_exact(root); /* "%.17g" numbers, tabs and newlines */
    assert_string_not_equal(variant, json);
    assert_non_null(strstr(variant, "0.10000000000000001")); /* sensitivity, spelled long */
    char sha[65];
    assert_ok(ctx, dpzo_profile_checksum(ctx, variant, sha, NULL));
    assert_string_equal(sha, l.sha256);
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_from_json(ctx, variant, &q)); /* the stored checksum holds */
    assert_profiles_equal(&l, &q);
    dpzo_profile_free(&q);
    /* and without any whitespace at all */
    char *flat = cJSON_PrintUnformatted(root);
    assert_ok(ctx, dpzo_profile_checksum(ctx, flat, sha, NULL));
    assert_string_equal(sha, l.sha256);
    free(flat);
    free(variant);
    cJSON_Delete(root);
    free(json);
    dpzo_profile_free(&l);
}

static void test_tampering(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile g = gaussian_struct();
    g.epsilon = 2.5;
    char *json;
    assert_ok(ctx, dpzo_profile_to_json(ctx, &g, &json));
    char *e = strstr(json, "\"epsilon\":");
    assert_non_null(e);
    char *digit = strchr(e, '2');
    assert_non_null(digit);
    *digit = '3'; /* epsilon 2.5 -> 3.5: still a valid value */
    char computed[65], msg[1024];
    assert_ok(ctx, dpzo_profile_checksum(ctx, json, computed, NULL));
    dpzo_profile q;
    assert_int_equal(dpzo_profile_from_json(ctx, json, &q), DPZO_EPARSE);
    snprintf(msg, sizeof msg,
             "profile: checksum mismatch: the file was modified after it was written "
             "(expected %s, computed %s)", g.sha256, computed);
    assert_string_equal(dpzo_ctx_errmsg(ctx), msg);
    assert_null(q.orders);
    /* an edited checksum is caught the same way */
    *digit = '2';
    char *s = strstr(json, g.sha256);
    assert_non_null(s);
    s[10] = s[10] == '0' ? '1' : '0';
    assert_int_equal(dpzo_profile_from_json(ctx, json, &q), DPZO_EPARSE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "checksum mismatch"));
    free(json);
    dpzo_profile_free(&g);
}

/* ---- validation ------------------------------------------------------------------ */

typedef struct {
    int lmo;             /* base profile: 0 gaussian, 1 lmo */
    const char *path;    /* dotted path */
    const char *value;   /* JSON text; NULL deletes; "+..." adds a second member */
    dpzo_status status;
    const char *needle;  /* must appear in the message */
} edit_case;

static const edit_case EDITS[] = {
    {0, "accounting.delta", NULL, DPZO_EPARSE, "missing field accounting.delta"},
    {0, "schema_version", "2", DPZO_EPARSE, "unknown schema_version 2"},
    {0, "schema_version", "\"1\"", DPZO_EPARSE, "schema_version must be a number"},
    {0, "format", "\"something-else\"", DPZO_EPARSE, "format must be \"dpzo-noise-profile\""},
    {0, "format", NULL, DPZO_EPARSE, "missing field format"},
    {0, "noise.gaussian.noise_multiplier", "-1.1", DPZO_EINVAL,
     "noise.gaussian.noise_multiplier must be finite and > 0, got -1.1"},
    {0, "noise.gaussian.noise_multiplier", "0", DPZO_EINVAL, "noise.gaussian.noise_multiplier"},
    {0, "noise.gaussian.noise_multiplier", "1e999", DPZO_EPARSE,
     "noise.gaussian.noise_multiplier: number out of the double range"},
    {0, "noise.gaussian", "{\"sigma\": 1}", DPZO_EPARSE, "unknown field noise.gaussian.sigma"},
    {0, "noise.kind", "\"laplace\"", DPZO_EINVAL, "noise.kind"},
    {0, "noise.kind", "\"lmo\"", DPZO_EPARSE, "noise.gaussian must be absent or null"},
    {0, "noise.lmo", "{}", DPZO_EPARSE, "noise.lmo must be absent or null"},
    {0, "noise.sensitivity", "0", DPZO_EINVAL, "noise.sensitivity"},
    {0, "noise.clip", "\"l1\"", DPZO_EINVAL, "noise.clip must be \"l2\""},
    {0, "noise.queries_per_step", "2", DPZO_EINVAL, "noise.queries_per_step must be 1"},
    {0, "noise.foo", "1", DPZO_EPARSE, "unknown field noise.foo"},
    {0, "extra", "true", DPZO_EPARSE, "unknown field extra"},
    {0, "accounting.steps", "+100", DPZO_EPARSE, "field accounting.steps appears twice"},
    {0, "accounting.sampling", "\"bernoulli\"", DPZO_EINVAL,
     "accounting.sampling must be \"poisson\", \"wor\" or \"none\", got \"bernoulli\""},
    {0, "accounting.accountant", "\"paper\"", DPZO_EINVAL, "accounting.accountant"},
    {0, "accounting.accountant", "\"moments\"", DPZO_EINVAL, "accounting.accountant"},
    {0, "accounting.adjacency", "\"replace-one\"", DPZO_EINVAL,
     "accounting.adjacency must be \"add-remove\" with sampling \"poisson\""},
    {0, "accounting.delta", "1.5", DPZO_EINVAL, "accounting.delta must be in (0, 1)"},
    {0, "accounting.delta", "\"1e-5\"", DPZO_EPARSE, "accounting.delta must be a number"},
    {0, "accounting.sampling_rate", "1.5", DPZO_EINVAL, "accounting.sampling_rate"},
    {0, "accounting.steps", "0", DPZO_EINVAL, "accounting.steps"},
    {0, "accounting.steps", "10.5", DPZO_EPARSE, "accounting.steps must be an integer"},
    {0, "accounting.epsilon", "-1", DPZO_EINVAL, "accounting.epsilon"},
    {0, "accounting.epsilon", "null", DPZO_EPARSE, "null field accounting.epsilon"},
    {0, "accounting.epsilon_bound", "\"paper-claim (guarantee not established)\"", DPZO_EINVAL,
     "accounting.epsilon_bound must be \"proven-upper\""},
    {0, "accounting.bound", "\"mgf\"", DPZO_EINVAL, "accounting.bound is for lmo noise"},
    {0, "accounting.eps0", "0.5", DPZO_EINVAL, "accounting.eps0 is for lmo noise"},
    {0, "accounting.batch_size", "10", DPZO_EINVAL, "accounting.batch_size"},
    {0, "accounting.order", "1", DPZO_EINVAL, "accounting.order"},
    {0, "accounting.rdp", "{\"orders\": [2, 3], \"per_step\": [0.1]}", DPZO_EPARSE,
     "accounting.rdp.orders and per_step"},
    {0, "provenance.created", "\"yesterday\"", DPZO_EINVAL, "provenance.created"},
    {0, "provenance.created", "\"2026-13-21T12:00:00Z\"", DPZO_EINVAL, "provenance.created"},
    {0, "provenance.command", "7", DPZO_EPARSE, "provenance.command must be a string"},
    {0, "provenance", NULL, DPZO_EPARSE, "missing field provenance"},
    {0, "objective", "[]", DPZO_EPARSE, "objective must be an object"},
    {1, "noise.lmo.exp_weight", "-0.3", DPZO_EINVAL, "noise.lmo.exp_weight must be >= 0"},
    {1, "noise.lmo.gamma_weight", NULL, DPZO_EPARSE, "missing field noise.lmo.gamma_weight"},
    {1, "noise.lmo.uniform_high", "4", DPZO_EINVAL, "noise.lmo: uniform high"},
    {1, "noise.lmo.gamma_shape", "0", DPZO_EINVAL, "noise.lmo: gamma shape"},
    {1, "noise.lmo.extra", "1", DPZO_EPARSE, "unknown field noise.lmo.extra"},
    {1, "noise.gaussian", "{\"noise_multiplier\": 1}", DPZO_EPARSE,
     "noise.gaussian must be absent or null"},
    {1, "noise.clip", "\"l2-paper\"", DPZO_EINVAL, "allowed only with accounting.accountant"},
    {1, "noise.clip", "\"l2\"", DPZO_EINVAL, "noise.clip must be"},
    {1, "noise.clip", "\"l1\"", DPZO_EINVAL, "accounting.bound \"exact\" is not known to hold"},
    {1, "accounting.bound", "\"tight\"", DPZO_EINVAL, "accounting.bound must be"},
    {1, "accounting.bound", NULL, DPZO_EINVAL, "accounting.bound must be"},
    {1, "accounting.bound", "\"\"", DPZO_EPARSE, "accounting.bound must be null or"},
    {1, "accounting.accountant", "\"prv\"", DPZO_EINVAL,
     "accounting.accountant must be \"rdp\", \"pld\" or \"paper\" for lmo noise"},
    {1, "accounting.sampling_rate", "0.03", DPZO_EINVAL,
     "accounting.sampling_rate must be batch_size / dataset_size"},
    {1, "accounting.batch_size", "70000", DPZO_EINVAL, "accounting.batch_size"},
    {1, "accounting.dataset_size", NULL, DPZO_EINVAL, "accounting.batch_size and dataset_size"},
    {1, "accounting.adjacency", "\"add-remove\"", DPZO_EINVAL, "accounting.adjacency"},
    {1, "accounting.eps0", "-0.1", DPZO_EINVAL, "accounting.eps0"},
    {1, "accounting.rdp.orders", "[1.5, 2, 2, 1e6]", DPZO_EINVAL,
     "accounting.rdp.orders must increase strictly"},
    {1, "accounting.rdp.orders", "[1, 2, 64, 1e6]", DPZO_EINVAL, "accounting.rdp.orders[0]"},
    {1, "accounting.rdp.per_step", "[1e-300, 0.1, -1, \"inf\"]", DPZO_EINVAL,
     "accounting.rdp.per_step[2]"},
    {1, "accounting.rdp.per_step", "[1e-300, 0.1, 0, \"infinity\"]", DPZO_EPARSE,
     "accounting.rdp.per_step[3] must be a number or \"inf\""},
    {1, "objective.name", "\"accuracy\"", DPZO_EINVAL, "objective.name"},
    {1, "objective.usefulness", "1.5", DPZO_EINVAL, "objective.usefulness"},
    {1, "objective.variance", "\"infinite\"", DPZO_EPARSE, "objective.variance"},
    {1, "objective.grid_index", "-3", DPZO_EPARSE, "objective.grid_index"},
    {1, "objective.value", NULL, DPZO_EPARSE, "missing field objective.value"},
};

static void test_validation_errors(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile base[2] = {gaussian_struct(), lmo_struct()};
    char *text[2];
    for (int b = 0; b < 2; b++) {
        assert_ok(ctx, dpzo_profile_to_json(ctx, &base[b], &text[b]));
        dpzo_profile q;
        assert_ok(ctx, dpzo_profile_from_json(ctx, text[b], &q)); /* the bases are valid */
        dpzo_profile_free(&q);
    }
    for (size_t i = 0; i < sizeof EDITS / sizeof *EDITS; i++) {
        const edit_case *c = &EDITS[i];
        cJSON *root = cJSON_Parse(text[c->lmo]);
        edit(root, c->path, c->value);
        char *json = with_checksum(ctx, root); /* so that only the edit is wrong */
        dpzo_profile q;
        dpzo_status st = dpzo_profile_from_json(ctx, json, &q);
        const char *msg = dpzo_ctx_errmsg(ctx);
        if (st != c->status || strstr(msg, c->needle) == NULL || strncmp(msg, "profile: ", 9))
            fail_msg("edit %s = %s: got %s \"%s\", expected %s with \"%s\"", c->path,
                     c->value ? c->value : "(deleted)", dpzo_status_name(st), msg,
                     dpzo_status_name(c->status), c->needle);
        assert_null(q.orders); /* nothing left allocated on failure */
        free(json);
        cJSON_Delete(root);
    }
    /* the checksum member itself */
    static const struct {
        const char *value;
        const char *needle;
    } sha_cases[] = {{"\"abc\"", "sha256 must be 64 lowercase hexadecimal digits"},
                     {"null", "null field sha256"},
                     {NULL, "missing field sha256"}};
    for (size_t i = 0; i < 3; i++) {
        cJSON *root = cJSON_Parse(text[0]);
        edit(root, "sha256", sha_cases[i].value);
        char *json = print_exact(root);
        dpzo_profile q;
        assert_int_equal(dpzo_profile_from_json(ctx, json, &q), DPZO_EPARSE);
        assert_non_null(strstr(dpzo_ctx_errmsg(ctx), sha_cases[i].needle));
        free(json);
        cJSON_Delete(root);
    }
    /* not a profile at all */
    static const char *const junk[] = {"", "{", "[1, 2]", "null", "{\"format\": 1}"};
    for (size_t i = 0; i < 5; i++) {
        dpzo_profile q;
        assert_int_equal(dpzo_profile_from_json(ctx, junk[i], &q), DPZO_EPARSE);
    }
    size_t len = strlen(text[0]);
    char *trailing = malloc(len + 3);
    memcpy(trailing, text[0], len);
    memcpy(trailing + len, " x", 3);
    dpzo_profile q;
    assert_int_equal(dpzo_profile_from_json(ctx, trailing, &q), DPZO_EPARSE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "not valid JSON"));
    free(trailing);
    assert_int_equal(dpzo_profile_read_file(ctx, "/nonexistent/p.json", &q), DPZO_EPARSE);
    /* the writer refuses an invalid struct, naming the field */
    char *json;
    base[0].noise_multiplier = 0.0;
    assert_int_equal(dpzo_profile_to_json(ctx, &base[0], &json), DPZO_EINVAL);
    assert_null(json);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "noise.gaussian.noise_multiplier"));
    for (int b = 0; b < 2; b++) {
        free(text[b]);
        dpzo_profile_free(&base[b]);
    }
}

/* ---- Gaussian profiles: calibration and verification ------------------------------- */

static void test_gaussian_calibrated(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile_gaussian_spec s = {.epsilon = 3.0, .delta = 1e-5, .sampling_rate = 0.01,
                                    .steps = 1000, .created = "2026-11-21T12:00:00Z"};
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &s, &p));
    dpzo_calibration c;
    assert_ok(ctx, dpzo_calibrate_noise(ctx, 3.0, 1e-5, 0.01, 1000, 0, NULL, &c));
    assert_true(p.noise_multiplier == c.value); /* exactly the calibration API's sigma */
    assert_true(p.epsilon <= 3.0);
    /* the recorded epsilon is the RDP accountant's at that sigma */
    dpzo_event *e = sgm_event(ctx, 0.01, p.noise_multiplier, 1000);
    dpzo_dp_result r;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &r));
    dpzo_event_free(e);
    assert_true(p.epsilon == r.epsilon && p.order == r.order);
    assert_true(strcmp(p.sampling, "poisson") == 0 && strcmp(p.adjacency, "add-remove") == 0);
    assert_true(p.sensitivity == 1.0 && isnan(p.eps0) && p.n_orders == 28);
    /* the per-step curve: one sampled step, certified upper bounds; orders increase */
    for (size_t i = 0; i < p.n_orders; i++) {
        dpzo_bound b;
        assert_ok(ctx, dpzo_rdp_sampled_gaussian_certified(ctx, 0.01, p.noise_multiplier,
                                                           p.orders[i], &b));
        assert_true(p.rdp[i] >= b.upper); /* the event path adds a few ulps of slack */
        assert_rel(p.rdp[i], b.upper, 1e-14);
        assert_true(i == 0 || p.rdp[i] > p.rdp[i - 1]);
    }
    dpzo_profile_check k;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_true(k.ok);
    assert_true(k.epsilon_recomputed == p.epsilon && k.rdp_checked == 28);
    assert_true(k.rdp_worst_ratio == 1.0);

    /* the written file, read back, verifies; epsilon edited lower does not */
    char *json;
    assert_ok(ctx, dpzo_profile_to_json(ctx, &p, &json));
    cJSON *root = cJSON_Parse(json);
    cJSON *eps = at(root, "accounting.epsilon", NULL, NULL);
    cJSON_SetNumberValue(eps, 2.9);
    char *lowered = with_checksum(ctx, root);
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_from_json(ctx, lowered, &q));
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "stored epsilon 2.9 is below the proven bound"));
    dpzo_profile_free(&q);
    free(lowered);
    /* more than needed is fine */
    cJSON_SetNumberValue(eps, 3.5);
    char *raised = with_checksum(ctx, root);
    assert_ok(ctx, dpzo_profile_from_json(ctx, raised, &q));
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_true(k.ok);
    dpzo_profile_free(&q);
    free(raised);
    /* a per-step RDP value edited lower fails too */
    cJSON_SetNumberValue(eps, p.epsilon);
    cJSON *v = cJSON_GetArrayItem(at(root, "accounting.rdp.per_step", NULL, NULL), 5);
    cJSON_SetNumberValue(v, p.rdp[5] * 0.999);
    char *curve = with_checksum(ctx, root);
    assert_ok(ctx, dpzo_profile_from_json(ctx, curve, &q));
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "per-step RDP at order 3 is stored as"));
    assert_rel(k.rdp_worst_ratio, 1.0 / 0.999, 1e-12);
    dpzo_profile_free(&q);
    free(curve);
    cJSON_Delete(root);
    free(json);
    dpzo_profile_free(&p);
}

/* Fixed batches and full batches go through dpzo's own bisection: it must meet the
 * target and be tight to the tolerance (by the accountant used directly). */
static void test_gaussian_bisection(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile p;
    dpzo_profile_gaussian_spec s = {.epsilon = 2.0, .delta = 1e-6, .sampling = "none",
                                    .steps = 20, .sensitivity = 0.5, .created = NULL};
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &s, &p));
    assert_true(strcmp(p.sampling, "none") == 0 && p.sampling_rate == 1.0);
    assert_true(p.sensitivity == 0.5 && strlen(p.created) == 20); /* created: now */
    for (int side = 0; side < 2; side++) {
        double sigma = side == 0 ? p.noise_multiplier : p.noise_multiplier / (1.0 + 2e-6);
        dpzo_event *e = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, sigma), 20);
        dpzo_dp_result r;
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-6, NULL, &r));
        dpzo_event_free(e);
        assert_true(side == 0 ? r.epsilon <= 2.0 : r.epsilon > 2.0);
    }
    /* the Gaussian curve is alpha / (2 sigma^2) per step */
    for (size_t i = 0; i < p.n_orders; i++)
        assert_rel(p.rdp[i], p.orders[i] / (2.0 * p.noise_multiplier * p.noise_multiplier),
                   1e-12);
    dpzo_profile_free(&p);

    s = (dpzo_profile_gaussian_spec){.epsilon = 3.0, .delta = 1e-5, .sampling = "wor",
                                     .batch_size = 10, .dataset_size = 1000, .steps = 300,
                                     .created = "2026-11-21T12:00:00Z"};
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &s, &p));
    assert_true(strcmp(p.adjacency, "replace-one") == 0 && p.sampling_rate == 0.01);
    assert_true(p.batch_size == 10 && p.dataset_size == 1000);
    for (int side = 0; side < 2; side++) {
        double sigma = side == 0 ? p.noise_multiplier : p.noise_multiplier / (1.0 + 2e-6);
        dpzo_event *e = dpzo_event_self_composed(
            ctx, dpzo_event_wor_sampled(ctx, 10, 1000, dpzo_event_gaussian(ctx, sigma)), 300);
        dpzo_dp_result r;
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, NULL, &r));
        dpzo_event_free(e);
        assert_true(side == 0 ? r.epsilon <= 3.0 && r.epsilon == p.epsilon : r.epsilon > 3.0);
    }
    /* verify recomputes the without-replacement curve (its first 12 orders here: the
     * certified bound at orders near 256 takes most of a second) */
    assert_true(p.n_orders == 28 && p.orders[11] == 8.0);
    double o12[12], r12[12];
    memcpy(o12, p.orders, sizeof o12);
    memcpy(r12, p.rdp, sizeof r12);
    assert_ok(ctx, dpzo_profile_set_rdp(ctx, &p, o12, r12, 12));
    dpzo_profile_check k;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_true(k.ok && k.rdp_checked == 12 && k.rdp_worst_ratio == 1.0);
    dpzo_profile_free(&p);

    /* bad specifications */
    s = (dpzo_profile_gaussian_spec){.epsilon = 3.0, .delta = 1e-5, .sampling_rate = 0.0,
                                     .steps = 10};
    assert_int_equal(dpzo_profile_gaussian(ctx, &s, &p), DPZO_EINVAL);
    s.sampling_rate = 0.1;
    s.accountant = "moments";
    assert_int_equal(dpzo_profile_gaussian(ctx, &s, &p), DPZO_EINVAL);
    s.accountant = NULL;
    s.created = "noon";
    assert_int_equal(dpzo_profile_gaussian(ctx, &s, &p), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "provenance.created"));
}

/* A tight-accountant profile: verify recomputes with PLD and reports its lower end. */
static void test_gaussian_pld_verify(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile p = gaussian_struct();
    p.noise_multiplier = 0.9;
    p.steps = 1000;
    strcpy(p.accountant, "pld");
    dpzo_event *e = sgm_event(ctx, 0.01, 0.9, 1000);
    dpzo_pld_result r;
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, NULL, &r));
    dpzo_event_free(e);
    p.epsilon = r.epsilon;
    dpzo_profile_check k;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_true(k.ok && k.epsilon_recomputed == r.epsilon && k.epsilon_lower == r.epsilon_lower);
    assert_true(isnan(k.order) && k.rdp_checked == 0);
    /* RDP's bound is larger: the same number claimed under rdp fails */
    strcpy(p.accountant, "rdp");
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    assert_true(k.epsilon_recomputed > r.epsilon);
    strcpy(p.accountant, "pld");
    p.epsilon = r.epsilon_lower; /* below the proven upper end */
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    dpzo_profile_free(&p);
}

/* ---- the command line -------------------------------------------------------------- */

static run_result *run(const char *args) { return cli_run(args, "profile_cli"); }

static void expect_status(const char *args, int status, const char *needle_out,
                          const char *needle_err)
{
    run_result *r = run(args);
    if (r->status != status || (needle_out && !strstr(r->out, needle_out))
        || (needle_err && !strstr(r->err, needle_err)))
        fail_msg("dpzo %s: exit %d (want %d)\nstdout: %s\nstderr: %s", args, r->status, status,
                 r->out, r->err);
    if (status == 2) { /* usage errors: one line on stderr, nothing on stdout */
        assert_string_equal(r->out, "");
        assert_non_null(strchr(r->err, '\n'));
        assert_null(strchr(strchr(r->err, '\n') + 1, '\n'));
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_cli(void **state)
{
    dpzo_ctx *ctx = *state;
    char file[1024], args[4096];
    snprintf(file, sizeof file, "%s/profile_cli.json", DPZO_TEST_TMP);
    snprintf(args, sizeof args,
             "profile gaussian --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --steps 1000 "
             "--created 2026-11-21T12:00:00Z -o %s", file);
    expect_status(args, 0, "wrote", NULL);
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_read_file(ctx, file, &p));
    dpzo_calibration c;
    assert_ok(ctx, dpzo_calibrate_noise(ctx, 3.0, 1e-5, 0.01, 1000, 0, NULL, &c));
    assert_true(p.noise_multiplier == c.value);
    assert_non_null(strstr(p.command, "dpzo profile gaussian --epsilon 3 --delta 1e-5"));
    assert_string_equal(p.created, "2026-11-21T12:00:00Z");
    /* without -o the profile goes to stdout, identical to the file */
    snprintf(args, sizeof args,
             "profile gaussian --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --steps 1000 "
             "--created 2026-11-21T12:00:00Z");
    run_result *r = run(args);
    assert_int_equal(r->status, 0);
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_from_json(ctx, r->out, &q));
    assert_true(q.noise_multiplier == p.noise_multiplier && q.epsilon == p.epsilon);
    dpzo_profile_free(&q);

    snprintf(args, sizeof args, "profile show %s", file);
    expect_status(args, 0, "valid, checksum OK", NULL);
    assert_non_null(strstr(run(args)->out, p.sha256));
    snprintf(args, sizeof args, "profile show --json %s", file);
    r = run(args);
    assert_int_equal(r->status, 0);
    cJSON *j = cJSON_Parse(r->out);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "valid")));
    cJSON *prof = cJSON_GetObjectItem(j, "profile");
    assert_true(at(prof, "noise.gaussian.noise_multiplier", NULL, NULL)->valuedouble
                == p.noise_multiplier);
    assert_string_equal(cJSON_GetObjectItem(prof, "sha256")->valuestring, p.sha256);
    cJSON_Delete(j);

    snprintf(args, sizeof args, "profile verify %s", file);
    expect_status(args, 0, "OK: recomputed epsilon", NULL);
    snprintf(args, sizeof args, "profile verify %s --json", file);
    r = run(args);
    assert_int_equal(r->status, 0);
    j = cJSON_Parse(r->out);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    assert_true(cJSON_GetObjectItem(j, "epsilon_recomputed")->valuedouble == p.epsilon);
    assert_true(cJSON_GetObjectItem(j, "rdp_checked")->valuedouble == 28);
    cJSON_Delete(j);

    /* tampered: exit 2, the checksum message */
    char text[65536];
    slurp(file, text, sizeof text);
    char *d = strstr(text, "\"steps\":\t1000");
    assert_non_null(d);
    d[9] = '2'; /* 1000 -> 2000 */
    char bad[1024];
    snprintf(bad, sizeof bad, "%s/profile_cli_tampered.json", DPZO_TEST_TMP);
    write_text(bad, text);
    snprintf(args, sizeof args, "profile show %s", bad);
    expect_status(args, 2, NULL, "checksum mismatch: the file was modified after it was written");
    snprintf(args, sizeof args, "profile verify %s", bad);
    expect_status(args, 2, NULL, "checksum mismatch");

    /* epsilon lowered and re-checksummed: valid, but verify fails with exit 1 */
    cJSON *root = cJSON_Parse(text);
    cJSON_SetNumberValue(at(root, "accounting.steps", NULL, NULL), 1000);
    cJSON_SetNumberValue(at(root, "accounting.epsilon", NULL, NULL), 2.5);
    char *lowered = with_checksum(ctx, root);
    write_text(bad, lowered);
    free(lowered);
    cJSON_Delete(root);
    snprintf(args, sizeof args, "profile show %s", bad);
    expect_status(args, 0, "valid, checksum OK", NULL);
    snprintf(args, sizeof args, "profile verify %s", bad);
    expect_status(args, 1, "FAILED: stored epsilon 2.5 is below the proven bound", NULL);
    snprintf(args, sizeof args, "profile verify --json %s", bad);
    r = run(args);
    assert_int_equal(r->status, 1);
    j = cJSON_Parse(r->out);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);

    /* an LMO profile is summarised with its mixture, bound, eps0 and objective */
    dpzo_profile l = lmo_struct();
    snprintf(bad, sizeof bad, "%s/profile_cli_lmo.json", DPZO_TEST_TMP);
    assert_ok(ctx, dpzo_profile_write_file(ctx, &l, bad));
    snprintf(args, sizeof args, "profile show %s", bad);
    r = run(args);
    assert_int_equal(r->status, 0);
    static const char *const lmo_lines[] = {
        "lmo: X | Y ~ Laplace(0, C/Y), Y = 0.5 Gamma(shape 2, scale 0.3333333333) + 0.3 "
        "Exp(rate 2.5) + 0.2 Uniform(5, 6)",
        "C = 0.1, scalar clipping", "fixed batches of 2048 of 67349 without replacement",
        "0.7071067811865476   (proven-upper; rdp accountant, bound exact, order 17.5)",
        "eps0             0.2347", "4 orders from 1.5 to 1000000", "mean-abs = 1.23456789",
        "Var X = inf", "paper, index 4711"};
    for (size_t i = 0; i < sizeof lmo_lines / sizeof *lmo_lines; i++)
        if (!strstr(r->out, lmo_lines[i]))
            fail_msg("profile show of an LMO profile lacks \"%s\":\n%s", lmo_lines[i], r->out);
    dpzo_profile_free(&l);

    /* usage errors */
    expect_status("profile", 2, NULL, "needs a subcommand");
    expect_status("profile laplace", 2, NULL, "unknown profile subcommand 'laplace'");
    expect_status("profile show", 2, NULL, "give the profile file");
    expect_status("profile show a.json b.json", 2, NULL, "one profile file at a time");
    expect_status("profile show /nonexistent/p.json", 2, NULL, "cannot open");
    expect_status("profile verify --quiet x.json", 2, NULL, "unknown option '--quiet'");
    expect_status("profile gaussian --delta 1e-5 --sampling-rate 0.01 --steps 10", 2, NULL,
                  "--epsilon is required");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10", 2, NULL,
                  "give exactly one of --sampling-rate");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch "
                  "--sampling-rate 0.1", 2, NULL, "give exactly one of");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --batch-size 5", 2, NULL,
                  "--batch-size and --dataset-size go together");
    expect_status("profile gaussian --epsilon 1 --delta 2 --steps 10 --full-batch", 2, NULL,
                  "--delta must be in (0, 1)");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch "
                  "--accountant moments", 2, NULL, "--accountant must be rdp, pld or prv");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch "
                  "--created noon", 2, NULL, "provenance.created");
    expect_status("profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch "
                  "-o /nonexistent/dir/p.json", 2, NULL,
                  "cannot write: cannot open its folder /nonexistent/dir"); /* before the
                  work (issue 28, item 6), so a usage error like an unwritable --metrics */
    /* --help of each explains every option */
    static const struct {
        const char *cmd;
        const char *opts[14];
    } helps[] = {
        {"profile --help", {"gaussian", "show", "verify", NULL}},
        {"profile gaussian --help",
         {"--epsilon", "--delta", "--steps", "--sampling-rate", "--batch-size", "--dataset-size",
          "--full-batch", "--accountant", "--sensitivity", "--tolerance", "--created", "-o",
          "--output", "--json"}},
        {"profile show --help", {"FILE", "--json", NULL}},
        {"profile verify --help", {"FILE", "--json", "Exit status", NULL}},
    };
    for (size_t i = 0; i < 4; i++) {
        r = run(helps[i].cmd);
        assert_int_equal(r->status, 0);
        for (size_t k = 0; k < 14 && helps[i].opts[k]; k++)
            if (!strstr(r->out, helps[i].opts[k]))
                fail_msg("%s does not mention %s", helps[i].cmd, helps[i].opts[k]);
    }
    dpzo_profile_free(&p);
}

/* ---- the work a curve asks of verification (issue 28, item 7) ---------------------- */

/* The text of `base` (a profile without a curve) with accounting.rdp set to the n orders
 * (per-step values 1e6, above every bound) and its checksum recomputed, as a forger would:
 * only the work the curve asks for is wrong. */
static char *with_curve(dpzo_ctx *ctx, dpzo_profile *base, const double *orders, size_t n)
{
    char *text;
    assert_ok(ctx, dpzo_profile_to_json(ctx, base, &text));
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *rdp = cJSON_CreateObject(), *o = cJSON_CreateArray(), *v = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(o, cJSON_CreateNumber(orders[i]));
        cJSON_AddItemToArray(v, cJSON_CreateNumber(1e6));
    }
    cJSON_AddItemToObject(rdp, "orders", o);
    cJSON_AddItemToObject(rdp, "per_step", v);
    cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "accounting");
    cJSON_ReplaceItemInObjectCaseSensitive(a, "rdp", rdp);
    char *json = with_checksum(ctx, root);
    cJSON_Delete(root);
    return json;
}

/* dpzo_profile_from_json of the forged text: the status, and the message in msg. */
static dpzo_status read_curve(dpzo_ctx *ctx, dpzo_profile *base, const double *orders, size_t n,
                              char *msg, size_t size)
{
    char *json = with_curve(ctx, base, orders, n);
    dpzo_profile q;
    dpzo_status st = dpzo_profile_from_json(ctx, json, &q);
    snprintf(msg, size, "%s", st == DPZO_OK ? "" : dpzo_ctx_errmsg(ctx));
    if (st == DPZO_OK)
        dpzo_profile_free(&q);
    free(json);
    return st;
}

#define HAS(s, sub)                                                                     \
    do {                                                                                \
        if (strstr((s), (sub)) == NULL)                                                 \
            fail_msg("\"%s\" lacks \"%s\"", (s), (sub));                                \
    } while (0)

/* One order 1e6 cost 13.6 s of CPU to certify (the Poisson-sampled Gaussian), and a curve
 * may hold any number of orders: every reader refuses a curve that verification would
 * recompute at more than 100000 units of work (an order alpha counts alpha + 250), before
 * any work, naming the field, the limit and what the profile asks. */
static void test_curve_work(void **state)
{
    dpzo_ctx *ctx = *state;
    char msg[1024];
    assert_true(DPZO_PROFILE_MAX_WORK == 100000.0 && DPZO_PROFILE_ORDER_WORK == 250.0);
    dpzo_profile g = gaussian_struct(); /* Poisson sampling: the costly certification */
    const double one[1] = {1e6};
    assert_int_equal(read_curve(ctx, &g, one, 1, msg, sizeof msg), DPZO_EINVAL);
    HAS(msg, "profile: accounting.rdp.orders");
    HAS(msg, "1000250 units of work"); /* what it asks: 1e6 + 250 */
    HAS(msg, "1 order summing to 1000000");
    HAS(msg, "the limit of 100000");
    /* many small orders: each counts its fixed part too */
    static double many[1000];
    for (int i = 0; i < 1000; i++)
        many[i] = 1.001 + 0.001 * i;
    assert_int_equal(read_curve(ctx, &g, many, 1000, msg, sizeof msg), DPZO_EINVAL);
    HAS(msg, "1000 orders summing to");
    HAS(msg, "the limit of 100000");
    /* the limit itself is allowed, a hair above it is not */
    const double edge[2] = {99750.0, 99750.5};
    assert_int_equal(read_curve(ctx, &g, edge, 1, msg, sizeof msg), DPZO_OK);
    assert_int_equal(read_curve(ctx, &g, edge + 1, 1, msg, sizeof msg), DPZO_EINVAL);
    HAS(msg, "100000.5 units of work");
    const double two[2] = {49750.0, 49750.0 + 1e-9};
    assert_int_equal(read_curve(ctx, &g, two, 2, msg, sizeof msg), DPZO_EINVAL);

    /* the writer and dpzo_profile_verify refuse the same struct, before any work */
    assert_ok(ctx, dpzo_profile_set_rdp(ctx, &g, one, one, 1));
    char *json = NULL;
    assert_int_equal(dpzo_profile_to_json(ctx, &g, &json), DPZO_EINVAL);
    assert_null(json);
    HAS(dpzo_ctx_errmsg(ctx), "accounting.rdp.orders");
    dpzo_profile_check k;
    assert_int_equal(dpzo_profile_verify(ctx, &g, &k), DPZO_EINVAL);
    HAS(dpzo_ctx_errmsg(ctx), "the limit of 100000");
    assert_int_equal(dpzo_profile_validate(ctx, &g), DPZO_EINVAL);
    dpzo_profile_free(&g);
    g = gaussian_struct();

    /* the curve dpzo profile gaussian records: 28 orders summing to 1589.5, 8589.5 units */
    dpzo_profile_gaussian_spec s = {.epsilon = 3.0, .delta = 1e-5, .sampling_rate = 0.01,
                                    .steps = 100, .created = "2026-11-21T12:00:00Z"};
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &s, &p));
    double sum = 0.0;
    for (size_t i = 0; i < p.n_orders; i++)
        sum += p.orders[i];
    assert_true(p.n_orders == 28 && sum == 1589.5);
    assert_ok(ctx, dpzo_profile_to_json(ctx, &p, &json));
    free(json);
    dpzo_profile_free(&p);

    /* lmo: counted where verification recomputes the curve (no sampling; for l1 only with
     * bound mgf); a sampled step's curve is not recomputed and asks for no work */
    dpzo_profile l = lmo_struct(); /* wor, a curve up to 1e6 */
    assert_ok(ctx, dpzo_profile_validate(ctx, &l));
    dpzo_profile_free(&l);
    l = lmo_struct();
    dpzo_profile_free(&l); /* drop its curve */
    strcpy(l.sampling, "none");
    strcpy(l.adjacency, "add-remove");
    l.sampling_rate = 1.0;
    l.batch_size = l.dataset_size = 0;
    assert_int_equal(read_curve(ctx, &l, one, 1, msg, sizeof msg), DPZO_EINVAL);
    HAS(msg, "accounting.rdp.orders");
    strcpy(l.clip, "l1");
    strcpy(l.bound, "pure"); /* the l1 curve is checked with bound mgf only */
    assert_int_equal(read_curve(ctx, &l, one, 1, msg, sizeof msg), DPZO_OK);
    strcpy(l.bound, "mgf");
    assert_int_equal(read_curve(ctx, &l, one, 1, msg, sizeof msg), DPZO_EINVAL);
    strcpy(l.accountant, "paper"); /* nothing is recomputed in paper mode */
    strcpy(l.epsilon_bound, "paper-claim (guarantee not established)");
    assert_int_equal(read_curve(ctx, &l, one, 1, msg, sizeof msg), DPZO_OK);

    /* the command line: show and verify exit 2 at once, as for any invalid profile; train
     * refuses the profile before its first step */
    char file[1024], args[4096];
    snprintf(file, sizeof file, "%s/profile_cli_work.json", DPZO_TEST_TMP);
    json = with_curve(ctx, &g, one, 1);
    write_text(file, json);
    free(json);
    snprintf(args, sizeof args, "profile verify %s", file);
    expect_status(args, 2, NULL, "accounting.rdp.orders asks verification for 1000250 units");
    snprintf(args, sizeof args, "profile show %s", file);
    expect_status(args, 2, NULL, "the limit of 100000");
    if (system("test -d /usr/share/datasets/fashion-mnist || test -n \"$DPZO_FMNIST_DIR\"")
        == 0) {
        char cfg[1024], text[2048];
        snprintf(cfg, sizeof cfg, "%s/profile_cli_work_train.json", DPZO_TEST_TMP);
        snprintf(text, sizeof text,
                 "{\"algorithm\": \"dpzero\", \"model\": \"mlp:\", \"steps\": 100, "
                 "\"batch_size\": 5.12, \"lr\": 0.001, \"clip\": 1.0, \"seed\": 1, "
                 "\"data\": {\"train_subset\": 512}, \"profile\": \"%s\"}", file);
        write_text(cfg, text);
        snprintf(args, sizeof args, "train --config %s --steps 1", cfg);
        run_result *r = run(args);
        if (r->status != 2 || strstr(r->err, "accounting.rdp.orders") == NULL)
            fail_msg("dpzo %s: exit %d (want 2)\nstderr: %s", args, r->status, r->err);
    }
    dpzo_profile_free(&g);
}

/* ---- LMO profiles (need the LMO accountant) --------------------------------------- */

/* The spec's task1 eps0.3 profile (wG = wE = wU = 0.1, k = 1, theta = 0.5, rate 5,
 * U(1, 2)), one step, no sampling, MGF bound, sensitivity 1. */
static dpzo_profile task1_profile(void)
{
    dpzo_profile p;
    dpzo_profile_init(&p);
    p.kind = DPZO_NOISE_LMO;
    p.lmo = (dpzo_lmo){0.1, 1.0, 0.5, 0.1, 5.0, 0.1, 1.0, 2.0};
    p.sensitivity = 1.0;
    strcpy(p.clip, "scalar");
    strcpy(p.accountant, "rdp");
    strcpy(p.bound, "mgf");
    strcpy(p.sampling, "none");
    p.sampling_rate = 1.0;
    p.steps = 1;
    p.delta = 1e-10;
    strcpy(p.adjacency, "add-remove");
    strcpy(p.epsilon_bound, "proven-upper");
    strcpy(p.command, "tests/test_profile.c");
    strcpy(p.created, "2026-11-21T12:00:00Z");
    return p;
}

static void test_lmo_verify(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile p = task1_profile();
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    o.bound = DPZO_LMO_BOUND_MGF;
    o.delta = 1e-10;
    dpzo_lmo_account_result res;
    assert_ok(ctx, dpzo_lmo_epsilon(ctx, &p.lmo, &o, &res));
    p.epsilon = res.epsilon;
    /* the spec's anchors (spec 5.8): (*) at orders 2, 10, 20 and +inf at 21; eps0 0.234704
     * (6 digits: stored as 0.2347045, above every value that rounds to it) */
    const double orders[4] = {2, 10, 20, 21};
    const double anchors[4] = {0.0473837134027, 0.172335499842, 0.305373895861, INFINITY};
    assert_ok(ctx, dpzo_profile_set_rdp(ctx, &p, orders, anchors, 4));
    p.eps0 = 0.2347045;
    dpzo_profile_check k;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    if (!k.ok)
        fail_msg("task1 profile does not verify: %s", k.detail);
    assert_true(k.epsilon_recomputed == res.epsilon && k.rdp_checked == 4);
    assert_rel(k.rdp_worst_ratio, 1.0, 1e-9);
    assert_true(k.eps0_recomputed <= 0.2347045 && k.eps0_recomputed >= 0.2347035);
    round_trip(ctx, &p);
    /* each stored bound lowered in turn fails */
    p.epsilon = res.epsilon * (1.0 - 1e-6);
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "below the proven bound"));
    p.epsilon = res.epsilon;
    p.rdp[1] = 0.1723354;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "per-step RDP at order 10"));
    p.rdp[1] = anchors[1];
    p.eps0 = 0.2347035;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "eps0"));
    /* paper mode never verifies; l1 vectors have no accountant yet */
    strcpy(p.accountant, "paper");
    strcpy(p.clip, "l2-paper");
    strcpy(p.epsilon_bound, "paper-claim (guarantee not established)");
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "paper mode: guarantee not established"));
    round_trip(ctx, &p);
    /* l1-clipped vectors: the accountant's vector mode (MGF bound and C E[Y^2]/E[Y]) */
    strcpy(p.accountant, "rdp");
    strcpy(p.clip, "l1");
    strcpy(p.epsilon_bound, "proven-upper");
    o.vector_l1 = 1;
    assert_ok(ctx, dpzo_lmo_epsilon(ctx, &p.lmo, &o, &res));
    p.epsilon = res.epsilon;
    p.eps0 = res.eps0;
    assert_ok(ctx, dpzo_profile_verify(ctx, &p, &k));
    if (!k.ok)
        fail_msg("l1 profile does not verify: %s", k.detail);
    assert_true(k.rdp_checked == 4); /* the MGF curve holds for vectors */
    dpzo_bound ev;
    assert_ok(ctx, dpzo_lmo_eps0_vector(ctx, &p.lmo, 1.0, &ev));
    assert_true(k.eps0_recomputed == ev.upper);
    strcpy(p.bound, "exact");
    assert_int_equal(dpzo_profile_verify(ctx, &p, &k), DPZO_EINVAL);
    dpzo_profile_free(&p);
}

/* An LMO profile accounted by the PLD (what `dpzo lmo search --accountant pld` writes):
 * the SST-2 run (q = 2048/67350, 192 steps, delta 1e-10) with a noise that RDP cannot
 * prove at epsilon 3 (2.9953739 by the PLD at grid 1e-4, 2.9955630 at 1e-3, 4.1206897 by
 * RDP). Written, read back and verified: verify recomputes the PLD bound (grid 1e-3, then
 * 1e-4 here) and its lower end; a stored epsilon below
 * it, or below the PLD's lower end, fails; the same noise under accountant "rdp" fails. */
static void test_lmo_pld_verify(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_profile p = task1_profile();
    p.lmo = (dpzo_lmo){0.1, 2.0, 1.0, 0.4, 5.0, 0.6, 1.0, 2.0};
    strcpy(p.accountant, "pld");
    strcpy(p.bound, "best");
    strcpy(p.sampling, "poisson");
    p.sampling_rate = 0.030408314773570897;
    p.steps = 192;
    dpzo_lmo_account_options o = dpzo_profile_lmo_options(&p);
    dpzo_pld_result pr;
    dpzo_lmo_account_result rr;
    assert_ok(ctx, dpzo_lmo_pld_epsilon(ctx, &p.lmo, &o, 1e-4, &pr));
    assert_ok(ctx, dpzo_lmo_epsilon(ctx, &p.lmo, &o, &rr));
    assert_rel(pr.epsilon_upper, 2.99537385, 1e-8);
    assert_rel(rr.epsilon, 4.12068968, 1e-8);
    assert_true(pr.epsilon_upper <= 3.0 && rr.epsilon > 3.0);
    p.epsilon = pr.epsilon_upper;
    char path[1024];
    snprintf(path, sizeof path, "%s/profile_lmo_pld.json", DPZO_TEST_TMP);
    assert_ok(ctx, dpzo_profile_write_file(ctx, &p, path));
    dpzo_profile q;
    assert_ok(ctx, dpzo_profile_read_file(ctx, path, &q));
    remove(path);
    assert_string_equal(q.accountant, "pld");
    assert_true(q.epsilon == p.epsilon);
    round_trip(ctx, &q);
    dpzo_profile_check k;
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    if (!k.ok)
        fail_msg("pld profile does not verify: %s", k.detail);
    assert_true(k.epsilon_recomputed == pr.epsilon_upper);
    assert_true(k.epsilon_lower >= pr.epsilon_lower && k.epsilon_lower <= k.epsilon_recomputed);
    assert_true(isnan(k.order));
    assert_non_null(strstr(k.detail, "PLD bound"));
    /* a stored epsilon below the PLD bound fails, and so does one below its lower end */
    q.epsilon = pr.epsilon_upper * (1.0 - 1e-6);
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_false(k.ok);
    assert_non_null(strstr(k.detail, "below the proven bound"));
    q.epsilon = 0.99 * pr.epsilon_lower;
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_false(k.ok);
    /* RDP alone cannot prove the stored epsilon */
    q.epsilon = pr.epsilon_upper;
    strcpy(q.accountant, "rdp");
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_false(k.ok);
    assert_true(isnan(k.epsilon_lower));
    /* a pld profile whose epsilon is RDP's verifies too (the smaller proven bound) */
    strcpy(q.accountant, "pld");
    q.epsilon = rr.epsilon;
    assert_ok(ctx, dpzo_profile_verify(ctx, &q, &k));
    assert_true(k.ok && k.epsilon_recomputed <= rr.epsilon);
    /* the PLD covers scalar queries only: an l1 pld profile is invalid */
    strcpy(q.clip, "l1");
    assert_int_equal(dpzo_profile_verify(ctx, &q, &k), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "covers scalar queries only"));
    dpzo_profile_free(&q);
    dpzo_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_padding),
        cmocka_unit_test_setup_teardown(test_reference_fixture, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_doubles, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_canonical_independent_of_layout, ctx_setup,
                                        ctx_teardown),
        cmocka_unit_test_setup_teardown(test_tampering, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_validation_errors, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_calibrated, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_bisection, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_pld_verify, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_cli, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_curve_work, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_lmo_verify, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_lmo_pld_verify, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
