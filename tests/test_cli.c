/* tests/test_cli.c: the dpzo command line: JSON keys and values, text output, and every
 * error path (exit status 2, exactly one line on stderr, nothing on stdout). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
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
    run_result *r = run("epsilon --noise-multiplier 1 --sampling-rate 0.01 --steps 1000000 "
                        "--delta 1e-6 --accountant prv --memory-limit 64");
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "memory limit of 64 MiB"));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epsilon_json), cmocka_unit_test(test_tight_accountants),
        cmocka_unit_test(test_delta_rdp_calibrate),
        cmocka_unit_test(test_fixed_batches), cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lmo_commands),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
