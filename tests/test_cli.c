/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_cli.c: the dpzo command line: JSON keys and values, text output, and every
 * error path (exit status 2, exactly one line on stderr, nothing on stdout). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include <dpzo/blas.h>
#include "testutil.h"
#include "cliutil.h"

static run_result *run(const char *args) { return cli_run(args, "cli"); }

static cJSON *run_json(const char *args)
{
    run_result *r = run(args);
    if (r->status != 0)
        fail_msg("dpzo %s exited %d: %s", args, r->status, r->err);
    cJSON *j = cJSON_Parse(r->out);
    assert_non_null(j);
    return j;
}

static double num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v))
        fail_msg("JSON key %s missing or not a number", key);
    return v->valuedouble;
}

static void expect_error(const char *args, const char *needle);

static void write_file(const char *name, const char *text)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", DPZO_TEST_TMP, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_epsilon_json(void **state)
{
    (void)state;
    cJSON *j = run_json("epsilon --noise-multiplier 1.1 --sampling-rate 0.004266666666666667 "
                        "--steps 14063 --delta 1e-5 --orders tf --json");
    assert_rel(num(j, "epsilon"), 2.5970795196566616, 1e-10);
    assert_true(num(j, "order") == 8);
    assert_true(num(j, "delta") == 1e-5);
    assert_true(num(j, "epsilon") >= num(j, "epsilon_estimate"));
    cJSON_Delete(j);
    j = run_json("epsilon --noise-multiplier 1.1 --sampling-rate 0.004266666666666667 "
                 "--steps 14063 --delta 1e-5 --orders tf --conversion standard --json");
    assert_rel(num(j, "epsilon"), 3.0092111729975137, 1e-10);
    cJSON_Delete(j);
    j = run_json("epsilon --noise-multiplier 1.1 --sampling-rate 0.004266666666666667 "
                 "--steps 14063 --delta 1e-5 --orders 2,4,8,16 --json");
    assert_rel(num(j, "epsilon"), 2.5970795196566616, 1e-10); /* optimum at 8 again */
    cJSON_Delete(j);
    /* sigma = 0 gives infinite epsilon, written as the string "inf" */
    j = run_json("epsilon --noise-multiplier 0 --sampling-rate 0.1 --steps 3 --delta 1e-5 --json");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "epsilon");
    assert_true(cJSON_IsString(e) && strcmp(e->valuestring, "inf") == 0);
    cJSON_Delete(j);
    run_result *r = run("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "certified upper bound"));
    assert_null(strstr(r->out, "nan"));
    /* no failing neighbour: every rate UP TO 1 meets a target that q = 1 meets */
    r = run("calibrate --solve-for sampling-rate --epsilon 100 --delta 1e-5 --noise-multiplier 1 "
            "--steps 10");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "none   (every sampling-rate up to 1 meets the target)"));
    /* text prints the guarantee rounded up: never below the JSON value (review finding:
     * 6.1620893711985154 used to print as 6.162089371) */
    j = run_json("epsilon --noise-multiplier 0.8 --sampling-rate 0.02 --steps 500 --delta 1e-6 --json");
    double exact = num(j, "epsilon");
    cJSON_Delete(j);
    r = run("epsilon --noise-multiplier 0.8 --sampling-rate 0.02 --steps 500 --delta 1e-6");
    const char *line = strstr(r->out, "\n  epsilon ");
    assert_non_null(line);
    double printed = strtod(line + strlen("\n  epsilon "), NULL);
    assert_true(printed >= exact && printed - exact < 1e-8);
}

/* --accountant pld|prv: the interval keys, epsilon = the upper end, below RDP's value;
 * the tight-only options are rejected without a tight accountant. */
static void test_tight_accountants(void **state)
{
    (void)state;
    const char *mnist = "--noise-multiplier 1.1 --sampling-rate 0.004266666666666667 "
                        "--steps 14063 --delta 1e-5 --json";
    char args[512];
    snprintf(args, sizeof args, "epsilon %s --accountant pld", mnist);
    cJSON *j = run_json(args);
    assert_true(num(j, "epsilon") == num(j, "epsilon_upper"));
    assert_true(num(j, "epsilon_lower") <= 2.3817788 && num(j, "epsilon_upper") >= 2.3817788);
    assert_true(num(j, "epsilon_upper") < 2.3818 && num(j, "epsilon_lower") > 2.35);
    assert_true(num(j, "grid") == 1e-4 && num(j, "memory_bytes") > 0);
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(j, "fallback");
    assert_true(cJSON_IsBool(fb) && cJSON_IsFalse(fb));
    cJSON_Delete(j);
    snprintf(args, sizeof args, "epsilon %s --accountant prv --eps-error 0.02", mnist);
    j = run_json(args);
    assert_true(num(j, "epsilon_upper") - num(j, "epsilon_lower") <= 0.021);
    assert_true(num(j, "eps_error") <= 0.02 + 1e-12 && num(j, "mesh") > 0);
    cJSON_Delete(j);
    j = run_json("delta --noise-multiplier 1 --sampling-rate 1 --steps 1 --epsilon 1 "
                 "--accountant pld --json");
    assert_true(num(j, "delta_lower") <= 0.12693673750664397);
    assert_true(num(j, "delta_upper") >= 0.12693673750664397);
    cJSON_Delete(j);
    j = run_json("calibrate --epsilon 8 --delta 1e-5 --sampling-rate 0.04 --steps 2250 "
                 "--accountant pld --tolerance 1e-4 --json");
    assert_true(num(j, "epsilon") <= 8.0 && num(j, "epsilon_lower") <= num(j, "epsilon"));
    assert_rel(num(j, "noise_multiplier"), 1.3458999950, 2e-4);
    cJSON_Delete(j);
    /* over the limit: the PLD refuses; PRV answers on the finest mesh that fits (issue 20),
     * meeting the PLD's interval at grid 1e-4, [145.1718, 145.4982] (report_pld.md) */
    run_result *r = run("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 "
                        "--delta 1e-6 --accountant pld --grid 1e-5 --memory-limit 64");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "memory limit of 64 MiB"));
    j = run_json("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 "
                 "--delta 1e-6 --accountant prv --memory-limit 64 --json");
    assert_true(num(j, "memory_bytes") <= 64.0 * 1048576.0 && num(j, "eps_error") > 0.01);
    assert_true(num(j, "epsilon_lower") <= 145.4982 && num(j, "epsilon_upper") >= 145.1718);
    cJSON_Delete(j);
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5 "
                 "--accountant xyz", "--accountant must be rdp, pld or prv");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5 "
                 "--grid 1e-3", "--grid needs --accountant pld or prv");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5 "
                 "--accountant pld --grid 0", "--grid must be in (0, 1]");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5 "
                 "--accountant prv --grid 1e-3", "--grid is for --accountant pld");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 10 --delta 1e-5 "
                 "--accountant pld --delta-error 1e-9", "--delta-error is for --accountant prv");
}

static void test_delta_rdp_calibrate(void **state)
{
    (void)state;
    cJSON *j = run_json("delta --noise-multiplier 1 --sampling-rate 0.01 --steps 1000 "
                        "--epsilon 2 --json");
    double d = num(j, "delta");
    assert_true(d > 0 && d < 1e-3);
    cJSON_Delete(j);
    j = run_json("rdp --noise-multiplier 2.5 --sampling-rate 0.01 --steps 50 "
                 "--orders 1.5,5,100 --json");
    const char *keys[] = {"orders", "rdp", "rdp_lower", "rdp_upper"};
    for (int k = 0; k < 4; k++)
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, keys[k])), 3);
    const cJSON *up = cJSON_GetObjectItemCaseSensitive(j, "rdp_upper");
    assert_rel(cJSON_GetArrayItem(up, 2)->valuedouble, 1.67416308e+02, 1e-7);
    cJSON_Delete(j);
    j = run_json("calibrate --epsilon 8 --delta 1e-5 --sampling-rate 0.04 --steps 2250 "
                 "--orders opacus --json");
    assert_true(fabs(num(j, "noise_multiplier") - 1.416) < 2e-3);
    assert_true(num(j, "epsilon") <= 8.0);
    cJSON_Delete(j);
    j = run_json("calibrate --solve-for steps --epsilon 3 --delta 1e-5 --sampling-rate 0.01 "
                 "--noise-multiplier 1 --json");
    assert_true(num(j, "steps") == floor(num(j, "steps")) && num(j, "epsilon") <= 3.0);
    cJSON_Delete(j);
}

/* Shuffled fixed batches, replace-one: dp_accounting 0.6.0 (RdpAccountant REPLACE_ONE,
 * SampledWithoutReplacementDpEvent(60000, 256, Gaussian(1.1)) x 14063) gives
 * 5.243466908809535 at order 5. */
static void test_fixed_batches(void **state)
{
    (void)state;
    cJSON *j = run_json("epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 "
                        "--steps 14063 --delta 1e-5 --json");
    assert_rel(num(j, "epsilon"), 5.243466908809535, 1e-9);
    assert_true(num(j, "order") == 5);
    cJSON_Delete(j);
    expect_error("epsilon --noise-multiplier 1 --batch-size 300 --dataset-size 200 --steps 3 "
                     "--delta 1e-5", "batch-size");
    expect_error("epsilon --noise-multiplier 1 --batch-size 30 --steps 3 --delta 1e-5",
                     "dataset-size");
    expect_error("epsilon --noise-multiplier 1 --batch-size 30 --dataset-size 100 "
                     "--sampling-rate 0.3 --steps 3 --delta 1e-5", "not both");
}

static void test_schedule(void **state)
{
    (void)state;
    write_file("sched.json", "[{\"noise_multiplier\": 1.1, \"sampling_rate\": "
                             "0.004266666666666667, \"steps\": 14063}]");
    char args[1024];
    snprintf(args, sizeof args, "epsilon --schedule %s/sched.json --delta 1e-5 --orders tf --json",
             DPZO_TEST_TMP);
    cJSON *j = run_json(args);
    assert_rel(num(j, "epsilon"), 2.5970795196566616, 1e-10);
    cJSON_Delete(j);
    /* two phases equal one phase with the steps added */
    write_file("sched2.json", "[{\"noise_multiplier\": 1.0, \"sampling_rate\": 0.01, \"steps\": 400},"
                              " {\"noise_multiplier\": 1.0, \"sampling_rate\": 0.01, \"steps\": 600}]");
    snprintf(args, sizeof args, "epsilon --schedule %s/sched2.json --delta 1e-5 --json",
             DPZO_TEST_TMP);
    j = run_json(args);
    cJSON *k = run_json("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 1000 "
                        "--delta 1e-5 --json");
    assert_rel(num(j, "epsilon"), num(k, "epsilon"), 1e-9);
    cJSON_Delete(j);
    cJSON_Delete(k);
}

static void expect_error(const char *args, const char *needle)
{
    run_result *r = run(args);
    if (r->status != 2)
        fail_msg("dpzo %s: exit %d, expected 2 (stderr: %s)", args, r->status, r->err);
    size_t len = strlen(r->err);
    if (!(len > 0 && strchr(r->err, '\n') == r->err + len - 1))
        fail_msg("dpzo %s: stderr is not one line: '%s'", args, r->err);
    if (needle != NULL && strstr(r->err, needle) == NULL)
        fail_msg("dpzo %s: stderr '%s' does not mention '%s'", args, r->err, needle);
    if (r->out[0] != '\0')
        fail_msg("dpzo %s: printed to stdout on error: %s", args, r->out);
}

static void test_errors(void **state)
{
    (void)state;
    const char *base = "--sampling-rate 0.01 --steps 10 --delta 1e-5";
    char a[512];
    const char *sigmas[] = {"nan", "inf", "-1", "abc", "''"};
    for (int i = 0; i < 5; i++) {
        snprintf(a, sizeof a, "epsilon --noise-multiplier %s %s", sigmas[i], base);
        expect_error(a, "noise-multiplier");
    }
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 1.5 --steps 10 --delta 1e-5",
                 "sampling-rate");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate -0.1 --steps 10 --delta 1e-5",
                 "sampling-rate");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --delta 0", "delta");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --delta 1", "delta");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 1.5 --delta 1e-5",
                 "steps");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps -3 --delta 1e-5",
                 "steps");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --delta 1e-5 "
                 "--orders 1,2", "order");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --delta 1e-5 "
                 "--orders nonsense", "grid");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --delta 1e-5 "
                 "--conversion fancy", "conversion");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10", "delta");
    expect_error("epsilon --noise-multiplier 1 --steps 10 --delta 1e-5", "sampling-rate");
    expect_error("epsilon --bogus 3", "bogus");
    expect_error("frobnicate", "frobnicate");
    expect_error("delta --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --epsilon -1",
                 "epsilon");
    expect_error("rdp --noise-multiplier 1 --sampling-rate 0.1 --orders 0.5,2", "order");
    expect_error("rdp --noise-multiplier 1 --sampling-rate 0.1 --orders 1e20", "order");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 3 --delta 1e-5 "
                 "--alpha-max 1e7", "alpha-max");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --sampling-rate 0.1", "steps");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --sampling-rate 0.1 --steps 10 "
                 "--solve-for magic", "solve-for");
    write_file("bad1.json", "[{\"noise_multiplier\": 1.0, \"sampling_rate\": 0.1}]");
    write_file("bad2.json", "{not json");
    write_file("bad3.json", "[{\"noise_multiplier\": 1.0, \"sampling_rate\": 0.1, \"steps\": 2.5}]");
    write_file("bad4.json", "[{\"noise_multiplier\": -1, \"sampling_rate\": 0.1, \"steps\": 2}]");
    write_file("bad5.json", "[]");
    write_file("bad6.json", "[{\"noise_multiplier\": 1.0, \"sampling_rate\": 0.1, "
                            "\"steps\": 9007199254740993}]");
    const char *bad[] = {"bad1.json", "bad2.json", "bad3.json", "bad4.json", "bad5.json",
                         "bad6.json", "missing.json"};
    for (int i = 0; i < 7; i++) {
        snprintf(a, sizeof a, "epsilon --schedule %s/%s --delta 1e-5", DPZO_TEST_TMP, bad[i]);
        expect_error(a, "schedule");
    }
}

#define T1_03 "--gamma-weight 0.1 --gamma-shape 1 --gamma-scale 0.5 --exp-weight 0.1 " \
              "--exp-rate 5 --uniform-weight 0.1 --uniform-low 1 --uniform-high 2"

static double arr_at(const cJSON *j, const char *key, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
    const cJSON *v = cJSON_GetArrayItem(a, i);
    if (cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0)
        return INFINITY;
    if (!cJSON_IsNumber(v))
        fail_msg("JSON %s[%d] missing", key, i);
    return v->valuedouble;
}

/* dpzo lmo: the JSON keys, spec anchors through the CLI, errors */
static void test_lmo_commands(void **state)
{
    (void)state;
    cJSON *j = run_json("lmo rdp " T1_03 " --orders 2,10,20,21 --bound mgf --json");
    assert_rel(arr_at(j, "orders", 1), 10.0, 0);
    assert_rel(arr_at(j, "rdp", 0), 0.0473837134027, 1e-11);
    assert_rel(arr_at(j, "rdp", 2), 0.305373895861, 1e-11);
    assert_true(arr_at(j, "rdp", 3) == INFINITY); /* "inf" outside the MGF domain */
    cJSON_Delete(j);
    j = run_json("lmo info " T1_03 " --json");
    assert_rel(num(j, "eps0"), 0.234704, 5e-6);
    assert_rel(num(j, "mean_abs"), 4.87415, 2e-6);
    assert_rel(num(j, "usefulness"), 0.178414547, 1e-8);
    assert_true(num(j, "variance") > 0.0);
    assert_rel(num(j, "paper_step_epsilon"), 0.2932127545299491, 1e-14); /* the replica's */
    cJSON_Delete(j);
    j = run_json("lmo sample " T1_03 " -n 5 --seed 3 --json");
    cJSON *k = run_json("lmo sample " T1_03 " -n 5 --seed 3 --json");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "samples")), 5);
    for (int i = 0; i < 5; i++) /* seeded draws are reproducible */
        assert_true(arr_at(j, "samples", i) == arr_at(k, "samples", i));
    cJSON_Delete(j);
    cJSON_Delete(k);
    j = run_json("lmo epsilon " T1_03 " --delta 1e-10 --json");
    assert_string_equal(cJSON_GetObjectItem(j, "route")->valuestring, "pure-dp");
    assert_rel(num(j, "epsilon"), 0.234704, 5e-6);
    cJSON_Delete(j);
    /* the search prints the profile; its noise.lmo object has the keys */
    j = run_json("lmo search --grid paper-script --accountant paper --objective max-epsilon "
                 "--epsilon 0.3 --delta 1e-10 --json");
    const cJSON *lmo = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "noise"), "lmo");
    const char *keys[] = {"gamma_weight", "gamma_shape",    "gamma_scale", "exp_weight",
                          "exp_rate",     "uniform_weight", "uniform_low", "uniform_high"};
    double want[] = {0.1, 1, 0.5, 0.1, 5, 0.1, 1, 2};
    for (int i = 0; i < 8; i++)
        assert_rel(num(lmo, keys[i]), want[i], 1e-15);
    for (int i = 0; i < 8; i++) /* and the same object at the top level */
        assert_rel(num(cJSON_GetObjectItem(j, "lmo"), keys[i]), want[i], 1e-15);
    cJSON_Delete(j);
    /* the PLD accountant: its proven interval, epsilon its upper end (below RDP's here) */
    j = run_json("lmo epsilon --gamma-weight 1 --gamma-shape 2 --gamma-scale 0.5 --exp-weight 0.5 "
                 "--exp-rate 2 --uniform-weight 1 --uniform-low 1 --uniform-high 2 --delta 1e-5 "
                 "--steps 1000 --sampling-rate 0.01 --accountant pld --pld-grid 1e-3 --json");
    assert_string_equal(cJSON_GetObjectItem(j, "accountant")->valuestring, "pld");
    assert_string_equal(cJSON_GetObjectItem(j, "route")->valuestring, "pld");
    assert_true(num(j, "epsilon") == num(j, "pld_epsilon"));
    assert_true(num(j, "pld_epsilon") < 0.9 * num(j, "rdp_epsilon"));
    assert_true(num(j, "epsilon_lower") > 0.0 && num(j, "epsilon_lower") <= num(j, "epsilon"));
    assert_rel(num(j, "epsilon"), 3.9557450, 1e-6);      /* measured 3.955745044 */
    assert_rel(num(j, "epsilon_lower"), 3.9266492, 1e-6); /* 3.926649199 */
    assert_rel(num(j, "rdp_epsilon"), 4.8588875, 1e-6);
    assert_true(num(j, "pld_grid") == 1e-3);
    cJSON_Delete(j);
    /* the pld search: a noise RDP cannot prove at 3, a profile that verifies */
    {
        char grid[512], prof[512], cmd[2048];
        snprintf(grid, sizeof grid, "%s/cli-pld-grid.json", DPZO_TEST_TMP);
        snprintf(prof, sizeof prof, "%s/cli-pld-profile.json", DPZO_TEST_TMP);
        FILE *f = fopen(grid, "w");
        assert_non_null(f);
        fputs("{\"gamma_weight\": [0.1, 0.3], \"exp_weight\": [0.1, 0.4], \"uniform_weight\": "
              "[0.4, 0.6], \"gamma\": [[0.5, 1], [1, 2]], \"exp_rate\": [5], \"uniform\": "
              "[[1, 2]]}", f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "lmo search --grid %s --accountant pld --epsilon 3 --delta 1e-10 "
                 "--sampling-rate 0.030408314773570897 --steps 192 -o %s --json", grid, prof);
        j = run_json(cmd);
        const cJSON *acc = cJSON_GetObjectItem(j, "accounting");
        assert_string_equal(cJSON_GetObjectItem(acc, "accountant")->valuestring, "pld");
        assert_rel(num(acc, "epsilon"), 2.99556297, 1e-8); /* the PLD's bound at grid 1e-3 */
        assert_true(num(acc, "epsilon") <= 3.0);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(acc, "order")));
        assert_rel(num(cJSON_GetObjectItem(j, "objective"), "usefulness"), 0.646460777, 1e-8);
        assert_rel(num(cJSON_GetObjectItem(j, "objective"), "grid_index"), 14, 0);
        cJSON_Delete(j);
        snprintf(cmd, sizeof cmd, "profile verify %s --json", prof);
        j = run_json(cmd);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
        assert_true(num(j, "epsilon_recomputed") <= 3.0);
        assert_true(num(j, "epsilon_lower") <= num(j, "epsilon_recomputed"));
        cJSON_Delete(j);
        /* the profile feeds lmo epsilon: the same PLD bound at the search's grid (RDP: 4.12) */
        snprintf(cmd, sizeof cmd, "lmo epsilon --profile %s --delta 1e-10 --sampling-rate "
                 "0.030408314773570897 --steps 192 --accountant pld --pld-grid 1e-3 --json", prof);
        j = run_json(cmd);
        assert_rel(num(j, "epsilon"), 2.99556297, 1e-8);
        assert_rel(num(j, "epsilon_lower"), 2.98681743, 1e-8);
        assert_rel(num(j, "rdp_epsilon"), 4.12068968, 1e-8);
        cJSON_Delete(j);
        remove(grid);
        remove(prof);
    }
    expect_error("lmo search --epsilon 1 --delta 1e-5 --accountant pld --clip l1", "scalar");
    expect_error("lmo rdp " T1_03 " --orders 2 --bound exactish", "bound");
    expect_error("lmo rdp --gamma-weight 0.1 --orders 2", "gamma-shape");
    expect_error("lmo info --gamma-weight -1 --gamma-shape 1 --gamma-scale 0.5 --exp-weight 0.1 "
                 "--exp-rate 5 --uniform-weight 0.1 --uniform-low 1 --uniform-high 2",
                 "gamma weight");
    expect_error("lmo epsilon " T1_03, "--delta");
    expect_error("lmo epsilon " T1_03 " --delta 1e-5 --clip l2-paper", "L2");
    expect_error("lmo sample " T1_03, "-n");
    expect_error("lmo epsilon " T1_03 " --delta 1e-5 --accountant prv", "rdp or pld");
    expect_error("lmo epsilon " T1_03 " --delta 1e-5 --pld-grid 1e-3", "--accountant pld");
    expect_error("lmo search --epsilon 1 --delta 1e-5 --clip l2-paper", "paper");
    expect_error("lmo search --epsilon 1 --delta 1e-5 --grid /nonexistent.json", "grid");
    expect_error("lmo frobnicate", "frobnicate");
}

/* --epochs E: T = ceil(E N / B) with fixed batches, ceil(E / Q) for Poisson. 60 epochs of
 * 60000/256 is 14062.5, so 14063 steps: dp_accounting 0.6.0 gives 5.243466908809535 at
 * 14063 steps of B = 256 of 60000 (test_fixed_batches), and TF Privacy's
 * compute_dp_sgd_privacy counts the same 14063 steps for 60 epochs. */
static void test_epochs(void **state)
{
    (void)state;
    cJSON *j = run_json("epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 "
                        "--epochs 60 --delta 1e-5 --json");
    assert_rel(num(j, "epsilon"), 5.243466908809535, 1e-9);
    double e_epochs = num(j, "epsilon");
    cJSON_Delete(j);
    j = run_json("epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 "
                 "--steps 14063 --delta 1e-5 --json");
    assert_true(num(j, "epsilon") == e_epochs);
    cJSON_Delete(j);
    /* Poisson: 60 / 0.004266666666666667 = 14062.4999...: 14063 steps as well */
    static const char *const pairs[][2] = {
        {"epsilon --noise-multiplier 1.1 --sampling-rate 0.004266666666666667 --epochs 60 "
         "--delta 1e-5 --json",
         "epsilon --noise-multiplier 1.1 --sampling-rate 0.004266666666666667 --steps 14063 "
         "--delta 1e-5 --json"},
        /* half an epoch: 0.5 x 60000 / 256 = 117.1875, rounded up to 118 */
        {"epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --epochs 0.5 "
         "--delta 1e-5 --json",
         "epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --steps 118 "
         "--delta 1e-5 --json"},
        /* whole epochs are exact: 3 x 1000 / 7 = 428.57 -> 429 */
        {"delta --noise-multiplier 2 --batch-size 7 --dataset-size 1000 --epochs 3 "
         "--epsilon 1 --json",
         "delta --noise-multiplier 2 --batch-size 7 --dataset-size 1000 --steps 429 "
         "--epsilon 1 --json"},
        {"delta --noise-multiplier 1 --sampling-rate 0.01 --epochs 2.5 --epsilon 2 --json",
         "delta --noise-multiplier 1 --sampling-rate 0.01 --steps 250 --epsilon 2 --json"},
        {"calibrate --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --epochs 10 --json",
         "calibrate --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --steps 1000 --json"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        cJSON *a = run_json(pairs[i][0]), *b = run_json(pairs[i][1]);
        const char *key = strncmp(pairs[i][0], "delta", 5) == 0       ? "delta"
                          : strncmp(pairs[i][0], "calibrate", 9) == 0 ? "noise_multiplier"
                                                                       : "epsilon";
        if (num(a, key) != num(b, key))
            fail_msg("%s: %s %.17g, with steps %.17g", pairs[i][0], key, num(a, key),
                     num(b, key));
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    j = run_json("calibrate --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --epochs 10 --json");
    assert_true(num(j, "steps") == 1000);
    cJSON_Delete(j);
    run_result *r = run("epsilon --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 "
                        "--epochs 60 --delta 1e-5");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "14063 steps (60 epochs of 60000 / 256, rounded up)"));
    /* ambiguous or meaningless combinations: exit 2 with one line naming the problem */
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --steps 10 --epochs 1 "
                 "--delta 1e-5", "give --steps or --epochs, not both");
    expect_error("epsilon --schedule x.json --epochs 1 --delta 1e-5", "--schedule replaces");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --epochs -1 --delta 1e-5",
                 "--epochs must be >= 0");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0.1 --epochs nan --delta 1e-5",
                 "epochs");
    expect_error("epsilon --noise-multiplier 1 --sampling-rate 0 --epochs 1 --delta 1e-5",
                 "--epochs needs a sampling rate > 0");
    expect_error("epsilon --noise-multiplier 1 --batch-size 0 --dataset-size 10 --epochs 1 "
                 "--delta 1e-5", "--epochs needs --batch-size >= 1");
    expect_error("epsilon --noise-multiplier 1 --batch-size 1 --dataset-size 9007199254740992 "
                 "--epochs 2 --delta 1e-5", "more than 2^53 steps");
    /* audit's inline claim takes its steps from the same library rule */
    expect_error("audit --noise-multiplier 1 --batch-size 1 --dataset-size 1000000 --sampling "
                 "fixed --epochs 1e11 --epsilon 1 --delta 1e-5", "more than 2^53 steps");
    expect_error("calibrate --solve-for steps --epsilon 1 --delta 1e-5 --sampling-rate 0.01 "
                 "--noise-multiplier 1 --epochs 3", "--epochs is what --solve-for steps");
    expect_error("calibrate --solve-for sampling-rate --epsilon 1 --delta 1e-5 "
                 "--noise-multiplier 1 --epochs 3", "ambiguous");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --sampling-rate 0.01",
                 "--steps (or --epochs) is required");
}

/* calibrate with fixed batches: the library's without-replacement calibration. The sigma
 * it returns, fed back to `dpzo epsilon` with the same B and N, meets the target, and one
 * tolerance less misses it; the profile writer's own bisection (another code path of the
 * library) lands within the same tolerance. */
static void test_calibrate_fixed(void **state)
{
    (void)state;
    static const char *const acc[] = {"rdp", "pld"};
    double sigma_of[2];
    for (int k = 0; k < 2; k++) {
        char args[512];
        snprintf(args, sizeof args,
                 "calibrate --epsilon 3 --delta 1e-5 --batch-size 256 --dataset-size 60000 "
                 "--epochs 60 --accountant %s --json", acc[k]);
        cJSON *j = run_json(args);
        double sigma = num(j, "noise_multiplier"), tight = num(j, "tight_to");
        assert_true(num(j, "steps") == 14063 && num(j, "batch_size") == 256);
        assert_true(num(j, "dataset_size") == 60000 && num(j, "epsilon") <= 3.0);
        assert_true(tight < sigma && (sigma - tight) / sigma <= (k ? 1.1e-4 : 1.1e-6));
        cJSON_Delete(j);
        sigma_of[k] = sigma;
        double eps[2];
        for (int side = 0; side < 2; side++) {
            snprintf(args, sizeof args,
                     "epsilon --noise-multiplier %.17g --batch-size 256 --dataset-size 60000 "
                     "--steps 14063 --delta 1e-5 --accountant %s --json",
                     side ? tight : sigma, acc[k]);
            j = run_json(args);
            eps[side] = num(j, "epsilon");
            cJSON_Delete(j);
        }
        if (!(eps[0] <= 3.0 && eps[1] > 3.0 && eps[0] > 3.0 - 1e-3))
            fail_msg("%s: epsilon %.17g at sigma %.17g, %.17g at tight_to %.17g", acc[k],
                     eps[0], sigma, eps[1], tight);
    }
    assert_true(sigma_of[1] < sigma_of[0]); /* the tight accountant needs less noise */
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/cli_wor_profile.json", DPZO_TEST_TMP);
    snprintf(args, sizeof args,
             "profile gaussian --epsilon 3 --delta 1e-5 --batch-size 256 --dataset-size 60000 "
             "--epochs 60 --created 2026-11-21T12:00:00Z -o %s --json", path);
    cJSON *j = run_json(args);
    assert_rel(num(j, "noise_multiplier"), sigma_of[0], 2e-6);
    cJSON_Delete(j);
    static char text[65536];
    slurp(path, text, sizeof text);
    j = cJSON_Parse(text);
    assert_non_null(j);
    const cJSON *acc_obj = cJSON_GetObjectItemCaseSensitive(j, "accounting");
    assert_non_null(acc_obj);
    assert_true(num(acc_obj, "steps") == 14063); /* --epochs 60 of 60000 / 256 */
    cJSON_Delete(j);
    expect_error("calibrate --solve-for steps --epsilon 1 --delta 1e-5 --batch-size 3 "
                 "--dataset-size 10 --noise-multiplier 1", "noise multiplier only");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --batch-size 3 --steps 10",
                 "--batch-size and --dataset-size go together");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --batch-size 30 --dataset-size 10 "
                 "--steps 10", "--batch-size must be at most --dataset-size");
    expect_error("calibrate --epsilon 1 --delta 1e-5 --batch-size 3 --dataset-size 10 "
                 "--sampling-rate 0.3 --steps 10", "not both");
}

/* Every command and subcommand: -h prints exactly what --help prints. */
static void test_short_help(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "", "epsilon", "delta", "rdp", "calibrate", "demo", "profile", "profile gaussian",
        "profile show", "profile verify", "lmo", "lmo info", "lmo rdp", "lmo epsilon",
        "lmo sample", "lmo search", "train", "audit", "audit attack", "audit one-run", "plot",
        "plot epsilon-delta", "plot epsilon-steps", "plot curves", "plot noise"};
    static char longer[65536];
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char a[128];
        snprintf(a, sizeof a, "%s --help", cmds[i]);
        run_result *r = run(a);
        if (r->status != 0 || strstr(r->out, "usage: dpzo") == NULL)
            fail_msg("dpzo %s: exit %d, no usage", a, r->status);
        memcpy(longer, r->out, sizeof longer);
        snprintf(a, sizeof a, "%s -h", cmds[i]);
        r = run(a);
        if (r->status != 0 || strcmp(r->out, longer) != 0 || r->err[0] != '\0')
            fail_msg("dpzo %s: exit %d, output differs from --help", a, r->status);
    }
}

/* A misspelt option names the nearest one; an option far from every known one does not
 * guess. Exit status 2, one line on stderr. */
static void test_suggestions(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"epsilon --noise-multipler 1 --sampling-rate 0.1 --steps 1 --delta 1e-5",
         "unknown option '--noise-multipler'; did you mean --noise-multiplier?"},
        {"delta --epsilom 1", "did you mean --epsilon?"},
        {"rdp --order 2", "did you mean --orders?"},
        {"calibrate --tolerence 1e-3", "did you mean --tolerance?"},
        {"calibrate --dataset-sise 10", "did you mean --dataset-size?"},
        {"epsilon --epoch 3", "did you mean --epochs?"},
        {"epsilon --smaplign-rate 0.1", "did you mean --sampling-rate?"},
        {"demo --hepl", "did you mean --help?"},
        {"profile gaussian --epslion 1", "did you mean --epsilon?"},
        {"profile verify --jsno x.json", "did you mean --json?"},
        {"lmo info --gama-shape 1", "did you mean --gamma-shape?"},
        {"lmo search --objectiv x", "did you mean --objective?"},
        {"train --confg run.json", "did you mean --config?"},
        {"audit --noise-multiplyer 2", "did you mean --noise-multiplier?"},
        {"audit attack --tpp 3", "did you mean --tp?"},
        {"plot curves --point 3", "did you mean --points?"},
        {"plot noise --profil x.json", "did you mean --profile?"},
        {"calibrat --epsilon 1", "unknown command 'calibrat'; did you mean calibrate?"},
        {"lmo serch", "did you mean search?"},
        {"profile verfy x.json", "did you mean verify?"},
        {"plot curvs", "did you mean curves?"},
        /* a one-letter option is named as it is spelt, -o */
        {"lmo search -o", "option -o needs a value"},
        {"plot noise -o a.png -o b.png", "option -o given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_error(cases[i][0], cases[i][1]);
    static const char *const far[] = {"epsilon --zzzzzzzz 1", "calibrate -x 1", "frobnicate",
                                      "lmo search -x 1"};
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
        expect_error(far[i], "unknown");
        run_result *r = run(far[i]);
        assert_null(strstr(r->err, "did you mean"));
    }
}

/* Runs a shell command line, stdout and stderr captured apart. */
static run_result *run_sh(const char *line)
{
    static run_result r;
    char cmd[8192], p[1024];
    snprintf(cmd, sizeof cmd, "%s >%s/cli_sh.out 2>%s/cli_sh.err", line, DPZO_TEST_TMP,
             DPZO_TEST_TMP);
    int st = system(cmd);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    snprintf(p, sizeof p, "%s/cli_sh.out", DPZO_TEST_TMP);
    slurp(p, r.out, sizeof r.out);
    snprintf(p, sizeof p, "%s/cli_sh.err", DPZO_TEST_TMP);
    slurp(p, r.err, sizeof r.err);
    return &r;
}

/* Progress is drawn only on a terminal: never into a file or a pipe (so tests and docs
 * never see it), never with --json. On a terminal (util-linux `script` gives the command a
 * pty) it is overwritten with \r and erased before the results are printed. */
static void test_progress(void **state)
{
    (void)state;
    const char *cal = "calibrate --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --steps 1000 "
                      "--accountant pld";
    run_result *r = run(cal);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->err, "");
    assert_null(strchr(r->out, '\r'));
    char line[2048];
    r = run("audit --noise-multiplier 2.1 --batch-size 64 --dataset-size 100000 --sampling "
            "poisson --epochs 10 --epsilon 1 --delta 1e-5 --brief --no-calibrate");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->err, "");
    if (run_sh("script -V")->status != 0) {
        print_message("no util-linux script: the terminal path is not tested here\n");
        return;
    }
    snprintf(line, sizeof line, "script -qec '%s %s' /dev/null", DPZO_CLI, cal);
    r = run_sh(line);
    assert_int_equal(r->status, 0);
    const char *first = strstr(r->out, "\rdpzo calibrate: bisection on the pld accountant");
    const char *erase = strstr(r->out, "\r\033[Kdpzo calibrate: solve for noise-multiplier");
    if (first == NULL || erase == NULL || first > erase)
        fail_msg("no progress line, or not erased before the results: '%.300s'", r->out);
    assert_null(strstr(erase + 4, "\033[K")); /* nothing after the results */
    /* on a 50-column terminal each progress line fits in 49 characters: the claim's name
     * is cut, the count and the elapsed time stay */
    snprintf(line, sizeof line,
             "script -qec 'stty cols 50; %s audit --noise-multiplier 2.1 --batch-size 64 "
             "--dataset-size 100000 --sampling poisson --epochs 10 --epsilon 1 --delta 1e-5 "
             "--brief --no-calibrate --name \"a claim with a name much longer than the "
             "terminal is wide\"' /dev/null", DPZO_CLI);
    r = run_sh(line);
    assert_int_equal(r->status, 0);
    int lines = 0;
    for (const char *p = strstr(r->out, "\rdpzo audit: 0/1 claims, a claim"); p != NULL;
         p = strstr(p + 1, "\rdpzo audit: ")) {
        const char *end = strstr(p, "\033[K");
        assert_non_null(end);
        if (!(end - p - 1 <= 49 && strncmp(end - 3, " s)", 3) == 0 && strstr(p, "...") < end))
            fail_msg("progress line of %d characters: '%.*s'", (int)(end - p - 1),
                     (int)(end - p - 1), p + 1);
        lines++;
    }
    assert_true(lines >= 1);
    snprintf(line, sizeof line, "script -qec '%s %s --json' /dev/null", DPZO_CLI, cal);
    r = run_sh(line);
    assert_int_equal(r->status, 0);
    assert_null(strstr(r->out, "\033[K"));
    assert_null(strstr(r->out, "bisection"));
    assert_true(r->out[0] == '{');
}

/* profile verify prints each guarantee once, rounded up. With the PLD accountant the
 * recomputed bound of this profile is 2.999866252941...: the library's detail line prints
 * it with %.10g, rounded to nearest, and the result line used to repeat it. */
static void test_profile_verify_once(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/cli_verify_pld.json", DPZO_TEST_TMP);
    snprintf(args, sizeof args,
             "profile gaussian --epsilon 3 --delta 1e-5 --sampling-rate 0.01 --steps 1000 "
             "--accountant pld --created 2026-11-21T12:00:00Z -o %s", path);
    assert_int_equal(run(args)->status, 0);
    snprintf(args, sizeof args, "profile verify --json %s", path);
    cJSON *j = run_json(args);
    double rec = num(j, "epsilon_recomputed"), lower = num(j, "epsilon_lower");
    cJSON_Delete(j);
    snprintf(args, sizeof args, "profile verify %s", path);
    run_result *r = run(args);
    assert_int_equal(r->status, 0);
    const char *up = strstr(r->out, "\n  recomputed       ");
    const char *lo = strstr(r->out, "\n  recomputed lower ");
    assert_non_null(up);
    assert_non_null(lo);
    double shown_up = strtod(up + 20, NULL), shown_lo = strtod(lo + 20, NULL);
    assert_true(shown_up >= rec && shown_up - rec < 1e-8);
    assert_true(shown_lo <= lower && lower - shown_lo < 1e-8);
    /* the guarantee's digits appear once: on the "recomputed" line */
    char digits[32];
    snprintf(digits, sizeof digits, "%.*s", (int)strcspn(up + 20, " "), up + 20);
    assert_true(strlen(digits) >= 8);
    const char *first = strstr(r->out, digits);
    assert_true(first != NULL && strstr(first + 1, digits) == NULL);
    assert_non_null(strstr(r->out, "result           OK: recomputed epsilon (the proven upper "
                                   "bound above) <= stored epsilon\n"));
}

/* `dpzo train --verbose`: the BLAS line in the header and the "blas" object of --json say
 * which kernels ran, and they are dpzo_blas_choose's decision for what OpenBLAS chose, this
 * CPU and the environment (issue 27). Needs Fashion-MNIST (dataset-fashion-mnist). */
static const char *blas_field(const cJSON *b, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, key);
    if (!cJSON_IsString(v))
        fail_msg("blas.%s missing or not a string", key);
    return v->valuestring;
}

static void check_train_blas(const char *coretype)
{
    if (coretype != NULL)
        setenv("OPENBLAS_CORETYPE", coretype, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
    unsetenv("DPZO_BLAS_SELECT");
    char args[1024];
    snprintf(args, sizeof args, "train --config %s/blas-run.json --steps 2 --verbose --json",
             DPZO_TEST_TMP);
    cJSON *j = run_json(args);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "blas");
    assert_non_null(b);
    const char *chosen = blas_field(b, "chosen_by_openblas");
    dpzo_blas_choice want;
    dpzo_blas_choose(chosen, dpzo_cpu_features(), coretype, NULL, &want);
    assert_string_equal(blas_field(b, "kernels"), want.core);
    assert_string_equal(blas_field(b, "reason"), want.reason);
    assert_string_equal(blas_field(b, "cpu"), dpzo_isa_name(dpzo_cpu_isa(dpzo_cpu_features())));
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "switched")),
                     want.do_switch);
    assert_non_null(strstr(blas_field(b, "library"), "OpenBLAS"));
    if (coretype != NULL) /* the user's choice is what runs */
        assert_true(strcasecmp(blas_field(b, "kernels"), coretype) == 0);
    cJSON_Delete(j);
    /* the header says the same, on one line */
    snprintf(args, sizeof args, "train --config %s/blas-run.json --steps 2 --verbose",
             DPZO_TEST_TMP);
    run_result *r = run(args);
    assert_int_equal(r->status, 0);
    char line[512];
    snprintf(line, sizeof line, ", %s kernels (%s)\n", want.core, want.reason);
    const char *at = strstr(r->out, "\n  BLAS           OpenBLAS ");
    if (at == NULL || strstr(at, line) == NULL)
        fail_msg("no BLAS line ending '%s' in:\n%s", line, r->out);
    /* without --verbose, neither */
    snprintf(args, sizeof args, "train --config %s/blas-run.json --steps 2 --json",
             DPZO_TEST_TMP);
    j = run_json(args);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "blas"));
    cJSON_Delete(j);
}

static void test_train_verbose_blas(void **state)
{
    (void)state;
    write_file("blas-run.json",
               "{\"algorithm\": \"mezo\", \"model\": \"mlp:8\", \"steps\": 2, "
               "\"batch_size\": 64, \"lr\": 0.001, \"lambda\": 0.001, \"seed\": 3}");
    const char *saved = getenv("OPENBLAS_CORETYPE");
    char keep[64] = "";
    if (saved != NULL)
        snprintf(keep, sizeof keep, "%s", saved);
    check_train_blas(NULL);
    check_train_blas("Prescott"); /* what OpenBLAS 0.3.21 gives a CPU it does not know */
    if (saved != NULL)
        setenv("OPENBLAS_CORETYPE", keep, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
}

static void test_help(void **state)
{
    (void)state;
    const char *cmds[] = {"epsilon", "delta", "rdp", "calibrate", "demo"};
    for (int i = 0; i < 5; i++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", cmds[i]);
        run_result *r = run(a);
        assert_int_equal(r->status, 0);
        assert_non_null(strstr(r->out, "usage: dpzo"));
    }
    run_result *r = run("--help");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "calibrate"));
}

/* dpzo --version: the command's version, then the library's (dpzo_version()); issue 27. */
static void test_version(void **state)
{
    (void)state;
    run_result *r = run("--version");
    assert_int_equal(r->status, 0);
    assert_string_equal(r->out, "dpzo " DPZO_VERSION_STRING "\nlibdpzo " DPZO_VERSION_STRING
                                " (accountants: rdp, pld, prv)\n");
    assert_string_equal(r->err, "");
    assert_string_equal(dpzo_version(), DPZO_VERSION_STRING); /* the archives' answer */
    expect_error("--version 2", "unexpected argument '2'");
}

/* dpzo help [COMMAND [SUBCOMMAND]] prints exactly what dpzo [COMMAND [SUBCOMMAND]] --help
 * prints; an unknown command is refused, naming the commands (issue 27). */
static void test_help_command(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"help", "--help"},
        {"help epsilon", "epsilon --help"},
        {"help calibrate", "calibrate --help"},
        {"help lmo", "lmo --help"},
        {"help lmo search", "lmo search --help"},
        {"help profile verify", "profile verify --help"},
        {"help audit attack", "audit attack --help"},
        {"help plot noise", "plot noise --help"},
        {"help train", "train --help"},
        {"help help", "--help"},
    };
    static char want[65536];
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        run_result *r = run(pairs[i][1]);
        if (r->status != 0 || strstr(r->out, "usage: dpzo") == NULL)
            fail_msg("dpzo %s: exit %d, no usage", pairs[i][1], r->status);
        memcpy(want, r->out, sizeof want);
        r = run(pairs[i][0]);
        if (r->status != 0 || strcmp(r->out, want) != 0 || r->err[0] != '\0')
            fail_msg("dpzo %s: exit %d, output differs from dpzo %s", pairs[i][0], r->status,
                     pairs[i][1]);
    }
    /* the top-level help lists help and --version */
    run_result *r = run("--help");
    assert_non_null(strstr(r->out, "\n  help       dpzo help COMMAND [SUBCOMMAND]: the same as "
                                   "dpzo COMMAND [SUBCOMMAND] --help\n"));
    assert_non_null(strstr(r->out, "\n  --version  the versions of this command and of the "
                                   "dpzo library it runs on\n"));
    static const char *const list = "(commands: epsilon, delta, rdp, calibrate, demo, profile, "
                                    "lmo, train, audit, plot, help)";
    expect_error("help bogus", "unknown command 'bogus' ");
    expect_error("help bogus", list);
    expect_error("help bogus epsilon", "unknown command 'bogus' ");
    expect_error("help calibrat", "unknown command 'calibrat'; did you mean calibrate? ");
    expect_error("help calibrat", list);
    expect_error("help --bogus", "unknown command '--bogus'");
    expect_error("bogus", list); /* the same message without help */
    /* a subcommand's own refusal, as dpzo lmo serch --help gives it */
    expect_error("help lmo serch", "did you mean search?");
    r = run("help bogus");
    assert_null(strstr(r->err, "did you mean"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epsilon_json), cmocka_unit_test(test_tight_accountants),
        cmocka_unit_test(test_delta_rdp_calibrate),
        cmocka_unit_test(test_fixed_batches), cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lmo_commands),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_help_command),
        cmocka_unit_test(test_epochs),
        cmocka_unit_test(test_calibrate_fixed),
        cmocka_unit_test(test_short_help),
        cmocka_unit_test(test_suggestions),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_profile_verify_once),
        cmocka_unit_test(test_train_verbose_blas),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
