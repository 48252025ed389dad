/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_checkpoint.c: the trainer's and the LMO search's checkpoints as files
 * (docs/files.md): edited fields refused by name even when the checksum is recomputed,
 * non-regular destinations never replaced, and kill -9 at random moments (fixed seed)
 * always leaving a checkpoint that loads, validates and never understates the epsilon spent,
 * with no temporaries left behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testutil.h"
#include "train_fixtures.h"
#include "train_internal.h"
#include "dpzo_sha256.h"
#include "dpzo/lmo.h"
#include "dpzo_io.h"

#define TMP DPZO_TEST_TMP

static char dir[512];

static const char *at(const char *name) { return test_path(dir, name); }

static int setup(void **state)
{
    *state = dpzo_ctx_new();
    snprintf(dir, sizeof dir, "%s/ckpt_test_XXXXXX", TMP);
    return *state == NULL || mkdtemp(dir) == NULL;
}

static int teardown(void **state)
{
    dpzo_ctx_free(*state);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) != 0;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    char *s = NULL, err[DPZO_IO_ERRMAX];
    if (dpzo_io_read_file(path, "test", (size_t)1 << 26, &s, n, err, sizeof err) != 0)
        fail_msg("%s", err);
    return (unsigned char *)s;
}

static void spill(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void rehash(unsigned char *b, size_t n)
{
    dpzo__sha256 h;
    dpzo__sha256_init(&h);
    dpzo__sha256_update(&h, b, n - 32);
    dpzo__sha256_final(&h, b + n - 32);
}

/* Names in dir that look like a temporary of base (".BASE.tmp."). */
static int temporaries(const char *base)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char prefix[300];
    snprintf(prefix, sizeof prefix, ".%s" DPZO_IO_TMP_TAG, base);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 ||
             strstr(e->d_name, ".tmp") != NULL;
    closedir(d);
    return n;
}

/* ---- re-hashed edits of a trainer checkpoint ------------------------------------------ */

/* Header offsets (trainer/checkpoint.c: magic 8, version 4, then the state in order). */
enum {
    OFF_ALGORITHM = 12, OFF_STEP = 56, OFF_STEPS = 64, OFF_SEED = 72, OFF_BATCHING = 88,
    OFF_LR = 108, OFF_LR_LAST = 116, OFF_SCHEDULE = 124, OFF_LEDGER = 128, OFF_EPSILON = 136,
    OFF_METRICS = 144, OFF_LOSS_SUM = 152, OFF_TEST_ACC = 168, OFF_SECONDS = 184
};

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static void test_rehashed_fields_refused(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 4, 2, 0.3, 1, 1);
    dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:", 10, 10.0, 0.01);
    snprintf(c.metrics, sizeof c.metrics, "%s", at("f.jsonl"));
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 4, NULL, NULL));
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, at("f.ckpt")));
    dpzo_trainer_free(tr);
    size_t n;
    unsigned char *good = slurp(at("f.ckpt"), &n);
    assert_int_equal(n, DPZO_CKPT_HEADER + 4 * 10 + 32);
    /* the unedited file resumes (the control) */
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_resume(ctx, tr, at("f.ckpt")));
    dpzo_trainer_free(tr);
    static const struct {
        size_t off;
        int bytes;
        uint64_t value;
        const char *msg;
    } cases[] = {
        {OFF_ALGORITHM, 4, 10, "field algorithm is 10"},
        {OFF_ALGORITHM, 4, 0, "field algorithm is 0"},   /* in range, not this run's */
        {OFF_BATCHING, 4, 7, "field batching is 7"},
        {OFF_BATCHING, 4, 1, "field batching is 1"},
        {OFF_SCHEDULE, 4, 9, "field lr_schedule is 9"},
        {OFF_SCHEDULE, 4, 2, "field lr_schedule is 2"},
        {OFF_STEPS, 8, 11, "field steps"},
        {OFF_STEP, 8, 11, "field step is 11"},
        {OFF_LEDGER, 8, 3, "field ledger_steps is 3"},
        {OFF_SEED, 8, 8, "field seed is 8"},
        {OFF_METRICS, 8, 0, "not this run's"},
        {OFF_METRICS, 8, 5, "not this run's"},          /* not at a line's end */
        {OFF_EPSILON, 8, 0x3fe0000000000000ull, "ledger says"}, /* 0.5; the run is non-private */
        {OFF_TEST_ACC, 8, 0x4000000000000000ull, "field test_acc is 2"},
        {OFF_SECONDS, 8, 0xbff0000000000000ull, "field seconds is -1"},
        {OFF_LOSS_SUM, 8, 0x7ff8000000000000ull, "field loss_sum is nan"},
        {DPZO_CKPT_HEADER + 4, 4, 0x7fc00000u, "state value 1"},                 /* theta NaN */
        {DPZO_CKPT_HEADER + 8, 4, 0x7f800000u, "state value 2"},                 /* theta inf */
    };
    const uint64_t lr_cases[3] = {f64_bits(NAN), f64_bits(INFINITY), f64_bits(0.02)};
    const char *lr_msgs[3] = {"field lr is nan", "field lr is inf", "field lr is 0.02"};
    size_t ncase = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < ncase + 4; i++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, good, n);
        const char *msg;
        if (i < ncase) {
            put_le(copy + cases[i].off, cases[i].value, cases[i].bytes);
            msg = cases[i].msg;
        } else if (i < ncase + 3) {
            put_le(copy + OFF_LR, lr_cases[i - ncase], 8);
            msg = lr_msgs[i - ncase];
        } else {
            put_le(copy + OFF_LR_LAST, f64_bits(-1.0), 8);
            msg = "field lr_last is -1";
        }
        rehash(copy, n);
        spill(at("bad.ckpt"), copy, n);
        free(copy);
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        dpzo_status st = dpzo_trainer_resume(ctx, tr, at("bad.ckpt"));
        if (st == DPZO_OK || strstr(dpzo_ctx_errmsg(ctx), msg) == NULL)
            fail_msg("case %zu: status %d, message '%s' lacks '%s'", i, (int)st,
                     dpzo_ctx_errmsg(ctx), msg);
        dpzo_trainer_free(tr);
    }
    /* the metrics file was left alone by every refusal */
    size_t mlen;
    free(slurp(at("f.jsonl"), &mlen));
    assert_true(mlen > 0);
    free(good);
    cluster_sets_free(&sets);
}

/* A DP-ZOPO checkpoint holds theta, the stage's anchor and the stage's mask (P floats each).
 * A mask whose checksum was redone but that selects nothing, or has a negative multiplier,
 * is refused by name before the metrics file is cut (issue 29: the mask is the step
 * object's, restored with its checks; before, any finite mask was taken as it was). */
static void test_rehashed_mask_refused(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 4, 2, 0.3, 1, 1);
    write_profile(ctx, at("m.json"), 0.1, 10, 1.0);
    dpzo_train_config c = base_config(DPZO_ALG_DPZOPO, "mlp:", 10, 10.0, 0.01);
    set_private(&c, at("m.json"), 1.0);
    snprintf(c.metrics, sizeof c.metrics, "%s", at("m.jsonl"));
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 4, NULL, NULL));
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, at("m.ckpt")));
    const size_t P = dpzo_trainer_n_params(tr);
    dpzo_trainer_free(tr);
    size_t n, mlen0, mlen1;
    unsigned char *good = slurp(at("m.ckpt"), &n);
    assert_int_equal(P, 10);
    assert_int_equal(n, DPZO_CKPT_HEADER + 4 * 3 * P + 32);
    free(slurp(at("m.jsonl"), &mlen0));
    const size_t mask_at = DPZO_CKPT_HEADER + 4 * 2 * P;
    size_t selected = 0;
    for (size_t j = 0; j < P; j++) {
        float m;
        memcpy(&m, good + mask_at + 4 * j, sizeof m);
        selected += m != 0.0f;
    }
    assert_true(selected > 0 && selected < P); /* the control: a real mask */
    for (int k = 0; k < 2; k++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, good, n);
        if (k == 0)
            memset(copy + mask_at, 0, 4 * P);
        else
            put_le(copy + mask_at + 4 * (P - 1), 0xbf800000u, 4); /* -1.0f */
        rehash(copy, n);
        spill(at("badmask.ckpt"), copy, n);
        free(copy);
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        dpzo_status st = dpzo_trainer_resume(ctx, tr, at("badmask.ckpt"));
        const char *want = k == 0 ? "the mask selects nothing" : "multiplier 9 is -1";
        if (st == DPZO_OK || strstr(dpzo_ctx_errmsg(ctx), want) == NULL)
            fail_msg("mask case %d: status %d, message '%s' lacks '%s'", k, (int)st,
                     dpzo_ctx_errmsg(ctx), want);
        /* refused before anything changed: the trainer resumes the good file */
        assert_ok(ctx, dpzo_trainer_resume(ctx, tr, at("m.ckpt")));
        dpzo_trainer_free(tr);
        free(slurp(at("m.jsonl"), &mlen1));
        assert_int_equal(mlen1, mlen0);
    }
    free(good);
    cluster_sets_free(&sets);
}

/* ---- destinations ---------------------------------------------------------------------- */

static void test_checkpoint_destinations(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 4, 2, 0.3, 1, 1);
    dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:", 10, 10.0, 0.01);
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 2, NULL, NULL));
    struct stat sb;
    /* a device is refused, never replaced (was: /dev/full became a regular file) */
    assert_int_equal(dpzo_trainer_save(ctx, tr, "/dev/full"), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "character device"));
    assert_int_equal(lstat("/dev/full", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(dpzo_trainer_save(ctx, tr, "/dev/null"), DPZO_EINVAL);
    assert_int_equal(lstat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    /* a FIFO: refused when saving, refused at once when resuming (no blocking open) */
    assert_int_equal(mkfifo(at("p.ckpt"), 0644), 0);
    assert_int_equal(dpzo_trainer_save(ctx, tr, at("p.ckpt")), DPZO_EINVAL);
    assert_int_equal(lstat(at("p.ckpt"), &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    dpzo_trainer *fresh;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &fresh));
    assert_int_equal(dpzo_trainer_resume(ctx, fresh, at("p.ckpt")), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "FIFO"));
    unlink(at("p.ckpt"));
    /* a link at the destination: written through to its regular target */
    assert_int_equal(mkdir(at("real"), 0755), 0);
    FILE *f = fopen(at("real/t.ckpt"), "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink("real/t.ckpt", at("l.ckpt")), 0);
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, at("l.ckpt")));
    assert_int_equal(lstat(at("l.ckpt"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(stat(at("real/t.ckpt"), &sb), 0);
    assert_int_equal(sb.st_size, DPZO_CKPT_HEADER + 4 * 10 + 32);
    assert_ok(ctx, dpzo_trainer_resume(ctx, fresh, at("l.ckpt")));
    dpzo_trainer_free(fresh);
    /* a link planted at the old temporary name is not followed */
    f = fopen(at("victim"), "w");
    fputs("precious", f);
    fclose(f);
    assert_int_equal(symlink(at("victim"), at("v.ckpt.tmp")), 0);
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, at("v.ckpt")));
    size_t vn;
    unsigned char *v = slurp(at("victim"), &vn);
    assert_int_equal(vn, 8);
    assert_memory_equal(v, "precious", 8);
    free(v);
    unlink(at("v.ckpt.tmp"));
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- kill -9 ---------------------------------------------------------------------------- */

static uint64_t kill_rng = 0x6b696c6c2d39ull; /* fixed: the kill moments repeat */

static unsigned kill_delay_us(unsigned lo, unsigned hi)
{
    kill_rng = kill_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (unsigned)((kill_rng >> 33) % (hi - lo));
}

/* The child: resume when a checkpoint exists, run to the end (it is killed before). */
static void train_child(const dpzo_train_config *c, const cluster_sets *sets)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_trainer *tr;
    if (ctx == NULL || dpzo_trainer_create(ctx, c, &sets->tr, &sets->te, &tr) != DPZO_OK)
        _exit(3);
    if (access(c->checkpoint, F_OK) == 0 && dpzo_trainer_resume(ctx, tr, c->checkpoint) != DPZO_OK)
        _exit(4);
    dpzo_status st = dpzo_trainer_run(ctx, tr, 0, NULL, NULL);
    _exit(st == DPZO_OK || st == DPZO_EINFEASIBLE ? 0 : 5);
}

/* The step field of the checkpoint at path, 0 when it is missing or short. */
static uint64_t ckpt_step(const char *path)
{
    unsigned char b[8];
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    ssize_t r = pread(fd, b, 8, OFF_STEP);
    close(fd);
    uint64_t step = 0;
    for (int i = 7; r == 8 && i >= 0; i--)
        step = step << 8 | b[i];
    return step;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_kill_training(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(200, 20, 4, 2, 0.3, 1, 1);
    const uint64_t T = 3000;
    write_profile(ctx, at("k.json"), 0.1, T, 1.0);
    dpzo_train_config c = base_config(DPZO_ALG_DPZERO, "mlp:", T, 20.0, 0.01);
    set_private(&c, at("k.json"), 1.0);
    snprintf(c.checkpoint, sizeof c.checkpoint, "%s", at("k.ckpt"));
    snprintf(c.metrics, sizeof c.metrics, "%s", at("k.jsonl"));
    c.checkpoint_every = 1;
    c.eval_every = 5;
    uint64_t last_step = 0;
    int loaded = 0;
    for (int kill_no = 0; kill_no < 10; kill_no++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            train_child(&c, &sets);
        /* kill at a random moment after the child has made progress (a new checkpoint), so
         * that every round tests a resume however slow the machine (sanitizers, load) */
        for (int waited = 0; waited < 20000 && ckpt_step(c.checkpoint) <= last_step &&
                             waitpid(pid, NULL, WNOHANG) == 0;
             waited++)
            usleep(1000);
        usleep(kill_delay_us(0, 40000));
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("kill %d: the child ended by itself (status %d) before the kill", kill_no,
                     status);
        if (access(c.checkpoint, F_OK) != 0)
            continue; /* killed before its first checkpoint */
        /* the checkpoint loads and validates */
        size_t n;
        unsigned char *raw = slurp(c.checkpoint, &n);
        double stored;
        memcpy(&stored, raw + OFF_EPSILON, 8);
        uint64_t step = 0;
        for (int i = 7; i >= 0; i--)
            step = step << 8 | raw[OFF_STEP + i];
        free(raw);
        dpzo_trainer *tr;
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        assert_ok(ctx, dpzo_trainer_resume(ctx, tr, c.checkpoint));
        dpzo_train_report r;
        dpzo_trainer_report_now(tr, &r);
        assert_int_equal(r.step, step);
        assert_true(step >= last_step); /* a checkpoint never goes back */
        last_step = step;
        /* the epsilon reported after the resume is the ledger's for that step, never less
         * than what the checkpoint recorded */
        assert_true(r.epsilon_spent >= stored);
        assert_true(r.epsilon_spent ==
                    dpzo_privacy_epsilon_after(dpzo_trainer_privacy(tr), step));
        assert_true(step == 0 || r.epsilon_spent > 0);
        dpzo_trainer_free(tr);
        loaded++;
        /* temporaries: none, or only the documented ".k.ckpt.tmp.PID.*" of the killed child
         * (its last moment between link and rename), removed by the next write */
        char prefix[64];
        snprintf(prefix, sizeof prefix, ".k.ckpt" DPZO_IO_TMP_TAG "%ld.", (long)pid);
        DIR *d = opendir(dir);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strstr(e->d_name, ".tmp") != NULL && strncmp(e->d_name, prefix, strlen(prefix)))
                fail_msg("kill %d: unexpected temporary %s", kill_no, e->d_name);
        closedir(d);
    }
    assert_true(loaded >= 9);
    assert_true(last_step > 0);
    /* one more write cleans up whatever a kill left */
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_resume(ctx, tr, c.checkpoint));
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, c.checkpoint));
    dpzo_trainer_free(tr);
    assert_int_equal(temporaries("k.ckpt"), 0);
    cluster_sets_free(&sets);
}

static const char *const small_grid =
    "{\"gamma_weight\": [0.2, 0.3, 0.5], \"exp_weight\": [0.2, 0.4], \"uniform_weight\": [0.1, "
    "0.3], \"gamma\": [[0.5, 1], [1, 2]], \"exp_rate\": [2, 5], \"uniform\": [[1, 2]]}";

static dpzo_lmo_search_options search_options(const char *ckpt)
{
    dpzo_lmo_search_options o = dpzo_lmo_search_options_default();
    o.account.delta = 1e-10;
    o.account.sampling = DPZO_LMO_SAMPLING_POISSON;
    o.account.q = 0.03;
    o.account.steps = 192;
    o.epsilon = 3.0;
    o.threads = 1;
    o.checkpoint = ckpt;
    return o;
}

static void test_kill_search(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_lmo_grid *g;
    assert_ok(ctx, dpzo_lmo_grid_from_json(ctx, small_grid, &g));
    /* the MGF bound: each search takes milliseconds, so ten kills stay quick under the
     * sanitizers too (the checkpoint holds the same arrays) */
    dpzo_lmo_search_options o = search_options(NULL);
    o.account.bound = DPZO_LMO_BOUND_MGF;
    dpzo_lmo_search_result ref, r;
    double t0 = now_seconds();
    assert_ok(ctx, dpzo_lmo_search(ctx, g, &o, &ref));
    /* kill moments are drawn in [0.2, 2] times the search's own duration here, so that some
     * kills land before, some during and some after the checkpoint's writes */
    const double span_us = 1e6 * (now_seconds() - t0);
    assert_true(ref.epsilon > 2.0 && ref.epsilon <= 3.0);
    o.checkpoint = at("s.ckpt");
    int resumed = 0;
    for (int kill_no = 0; kill_no < 10; kill_no++) {
        if (kill_no % 3 == 0)
            unlink(at("s.ckpt")); /* start afresh now and then: kills land in the first save */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            dpzo_ctx *cc = dpzo_ctx_new();
            dpzo_lmo_search_result cr;
            dpzo_status st = dpzo_lmo_search(cc, g, &o, &cr);
            (void)st;
            for (;;) /* wait for the kill, so that every round ends the same way */
                pause();
        }
        usleep((useconds_t)(span_us * kill_delay_us(200, 2000) / 1000.0));
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (access(o.checkpoint, F_OK) == 0) {
            assert_ok(ctx, dpzo_lmo_search(ctx, g, &o, &r));
            assert_true(r.resumed);
            resumed++;
            assert_int_equal(r.index, ref.index);
            assert_true(r.epsilon >= ref.epsilon); /* never understated */
            assert_true(r.epsilon == ref.epsilon);
        }
        char prefix[64];
        snprintf(prefix, sizeof prefix, ".s.ckpt" DPZO_IO_TMP_TAG "%ld.", (long)pid);
        DIR *d = opendir(dir);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strstr(e->d_name, ".tmp") != NULL && strncmp(e->d_name, prefix, strlen(prefix)))
                fail_msg("kill %d: unexpected temporary %s", kill_no, e->d_name);
        closedir(d);
    }
    assert_true(resumed >= 2);
    unlink(at("s.ckpt"));
    assert_ok(ctx, dpzo_lmo_search(ctx, g, &o, &r));
    assert_int_equal(temporaries("s.ckpt"), 0);
    unlink(at("s.ckpt"));
    dpzo_lmo_grid_free(g);
}

/* ---- the search checkpoint's checksum and fields --------------------------------------- */

static void test_search_checkpoint_refusals(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_lmo_grid *g;
    assert_ok(ctx, dpzo_lmo_grid_from_json(ctx, small_grid, &g));
    dpzo_lmo_search_options o = search_options(at("e.ckpt"));
    dpzo_lmo_search_result ref, r;
    unlink(at("e.ckpt"));
    assert_ok(ctx, dpzo_lmo_search(ctx, g, &o, &ref));
    size_t n;
    unsigned char *good = slurp(at("e.ckpt"), &n);
    uint64_t cand;
    memcpy(&cand, good + 16, 8);
    assert_int_equal(n, 24 + 10 * 8 * cand + 32);
    const size_t best = 24 + 3 * 8 * cand + 8 * (size_t)ref.index; /* ARR_BEST of the winner */
    const size_t eps = 24 + 1 * 8 * cand;                           /* ARR_EPS of slot 0 */
    static const struct {
        int kind; /* 0: edit the winner's cached best (re-hashed), 1: flip a byte (not
                   * re-hashed), 2: truncate, 3: negative cached eps (re-hashed), 4: magic */
        const char *msg;
    } cases[] = {{0, "below the recomputed"},
                 {1, "checksum mismatch"},
                 {2, "truncated or corrupted"},
                 {3, "out of their domain"},
                 {4, "not a dpzo search checkpoint"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, good, n);
        size_t len = n;
        double v;
        switch (cases[i].kind) {
        case 0: /* was: "epsilon 0.00100000001 (proven upper bound)" and that profile */
            v = 0.001;
            memcpy(copy + best, &v, 8);
            rehash(copy, n);
            break;
        case 1:
            copy[eps + 3] ^= 0x01; /* was: resumed */
            break;
        case 2:
            len = n - 100; /* was: "a different search" */
            break;
        case 3:
            v = -1.0;
            memcpy(copy + eps, &v, 8);
            rehash(copy, n);
            break;
        default:
            copy[0] = 'X';
        }
        spill(at("e.ckpt"), copy, len);
        free(copy);
        dpzo_status st = dpzo_lmo_search(ctx, g, &o, &r);
        if (st == DPZO_OK || strstr(dpzo_ctx_errmsg(ctx), cases[i].msg) == NULL)
            fail_msg("case %zu: status %d, message '%s' lacks '%s'", i, (int)st,
                     dpzo_ctx_errmsg(ctx), cases[i].msg);
    }
    /* an intact file resumes with the reference answer */
    spill(at("e.ckpt"), good, n);
    assert_ok(ctx, dpzo_lmo_search(ctx, g, &o, &r));
    assert_true(r.resumed && r.index == ref.index && r.epsilon == ref.epsilon);
    /* a FIFO is refused at once; a device at the destination is refused, not replaced */
    o.checkpoint = at("sf.ckpt");
    assert_int_equal(mkfifo(o.checkpoint, 0644), 0);
    assert_int_equal(dpzo_lmo_search(ctx, g, &o, &r), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "FIFO"));
    unlink(o.checkpoint);
    free(good);
    dpzo_lmo_grid_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rehashed_fields_refused),
        cmocka_unit_test(test_rehashed_mask_refused),
        cmocka_unit_test(test_checkpoint_destinations),
        cmocka_unit_test(test_search_checkpoint_refusals),
        cmocka_unit_test(test_kill_training),
        cmocka_unit_test(test_kill_search),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
