/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_outputs_cli.c: every output of every command is checked before the command's
 * work starts (issue 28, item 6; docs/files.md, "Outputs are checked first"). An output that
 * cannot be written (a directory, a path in a missing folder, a FIFO with no reader,
 * /dev/full, a read-only filesystem) must stop the command with exit 2 and a message naming
 * the path before any training step, search or report: no metrics line, no search
 * checkpoint, no report on stdout; an existing checkpoint or metrics file stays as it was.
 * Every command runs under `timeout`, so a blocking open fails the test instead of hanging
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define CLI_DIR_TAG "outputs_cli"
#include "cli_dir.h"

/* exit 2, the path named on stderr, nothing on stdout (no report, no evaluation line) */
static void refused(result *r, const char *path)
{
    if (r->status != 2 || strstr(r->err, path) == NULL || r->out[0] != '\0')
        fail_msg("exit %d (want 2), stderr '%s' (want '%s' named), stdout '%.300s' (want "
                 "empty)",
                 r->status, r->err, path, r->out);
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* A folder that cannot take a new file: a chmod 0500 folder for a user; root writes there
 * anyway, so root gets /sys, where even root cannot create files. NULL: none available. */
static const char *readonly_dir(void)
{
    if (geteuid() != 0) {
        const char *p = at("ro");
        if (!exists(p) && mkdir(p, 0500) != 0)
            return NULL;
        return p;
    }
    struct stat sb;
    if (stat("/sys/kernel", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/sys/kernel", F_OK) == 0) {
        /* make sure it refuses: a probe the test makes itself */
        int fd = open("/sys/kernel/dpzo-probe", O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            close(fd);
            unlink("/sys/kernel/dpzo-probe");
            return NULL;
        }
        return "/sys/kernel";
    }
    return NULL;
}

static int have_fmnist(void)
{
    return system("test -d /usr/share/datasets/fashion-mnist || test -n \"$DPZO_FMNIST_DIR\"") ==
           0;
}

/* A MeZO run long enough that finishing it first would be noticed: 300 steps, an evaluation
 * (a metrics line) every 10. */
#define TRAIN "train --config run.json --json"

static void train_setup(void)
{
    put("run.json", "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 300, "
                    "\"batch_size\": 30, \"lr\": 0.01, \"eval_every\": 10, "
                    "\"metrics\": \"m.jsonl\", \"data\": {\"train_subset\": 300}}");
}

static void no_metrics(void)
{
    if (exists(at("m.jsonl")))
        fail_msg("the metrics file was made: training started before the output was checked");
}

static void test_train_checkpoint(void **state)
{
    (void)state;
    if (!have_fmnist())
        skip();
    train_setup();
    /* a directory */
    assert_int_equal(mkdir(at("ckdir"), 0755), 0);
    refused(run(TRAIN " --checkpoint ckdir"), "ckdir");
    no_metrics();
    /* a path in a missing folder */
    refused(run(TRAIN " --checkpoint nowhere/run.ckpt"), "nowhere/run.ckpt");
    no_metrics();
    /* a FIFO with no reader: refused at once, the FIFO left */
    assert_int_equal(mkfifo(at("ck.fifo"), 0644), 0);
    refused(run(TRAIN " --checkpoint ck.fifo"), "ck.fifo");
    no_metrics();
    assert_true(kind_is(at("ck.fifo"), S_IFIFO));
    /* /dev/full: refused, still the device */
    refused(run(TRAIN " --checkpoint /dev/full"), "/dev/full");
    no_metrics();
    assert_true(kind_is("/dev/full", S_IFCHR));
    /* a folder of a read-only filesystem (or /proc/self, where no file can be made) */
    refused(run(TRAIN " --checkpoint /proc/self/run.ckpt"), "/proc/self/run.ckpt");
    no_metrics();
    const char *ro = readonly_dir();
    if (ro != NULL) {
        char p[1100];
        snprintf(p, sizeof p, "%s/run.ckpt", ro);
        refused(run(TRAIN " --checkpoint %s", p), p);
        no_metrics();
    }
    /* the configuration's "checkpoint" is checked the same way */
    put("run2.json", "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 300, "
                     "\"batch_size\": 30, \"lr\": 0.01, \"eval_every\": 10, "
                     "\"metrics\": \"m.jsonl\", \"checkpoint\": \"ckdir\", "
                     "\"data\": {\"train_subset\": 300}}");
    refused(run("train --config run2.json --json"), "ckdir");
    no_metrics();
    /* an existing metrics file is not emptied when the checkpoint is refused */
    put("m.jsonl", "{\"step\": 0}\n");
    refused(run(TRAIN " --checkpoint nowhere/run.ckpt"), "nowhere/run.ckpt");
    char buf[256];
    slurp_to(at("m.jsonl"), buf, sizeof buf);
    assert_string_equal(buf, "{\"step\": 0}\n");
    assert_int_equal(unlink(at("m.jsonl")), 0);
}

static void test_train_metrics(void **state)
{
    (void)state;
    if (!have_fmnist())
        skip();
    train_setup();
    /* an existing checkpoint stays as it is when the metrics output is refused */
    put("keep.ckpt", "old checkpoint");
    refused(run(TRAIN " --checkpoint keep.ckpt --metrics /dev/full"), "/dev/full");
    char buf[4096];
    slurp_to(at("keep.ckpt"), buf, sizeof buf);
    assert_string_equal(buf, "old checkpoint");
    refused(run(TRAIN " --checkpoint keep.ckpt --metrics nowhere/m.jsonl"), "nowhere/m.jsonl");
    assert_int_equal(mkfifo(at("m.fifo"), 0644), 0);
    refused(run(TRAIN " --checkpoint keep.ckpt --metrics m.fifo"), "m.fifo");
    slurp_to(at("keep.ckpt"), buf, sizeof buf);
    assert_string_equal(buf, "old checkpoint");
    /* and a good run still writes both */
    result *r = run("train --config run.json --steps 20 --checkpoint ok.ckpt --json");
    assert_int_equal(r->status, 0);
    assert_true(kind_is(at("ok.ckpt"), S_IFREG));
    slurp_to(at("m.jsonl"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"step\": 20"));
}

#define PROFILE_ARGS "profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch"

static void test_profile(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("pdir"), 0755), 0);
    refused(run(PROFILE_ARGS " -o pdir"), "pdir");
    refused(run(PROFILE_ARGS " --output nowhere/p.json"), "nowhere/p.json");
    refused(run(PROFILE_ARGS " -o /dev/full"), "/dev/full");
    assert_int_equal(mkfifo(at("p.fifo"), 0644), 0);
    refused(run(PROFILE_ARGS " -o p.fifo"), "p.fifo");
    assert_true(kind_is(at("p.fifo"), S_IFIFO));
    refused(run(PROFILE_ARGS " -o /proc/self/p.json"), "/proc/self/p.json");
    /* a FIFO with a reader: written, and the reader gets the whole profile (the check's
     * own open must not hand the reader an end-of-file first) */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd '%s' && (timeout 60 cat p.fifo > fifo.txt &) && sleep 0.3",
             dir);
    assert_int_equal(system(cmd), 0);
    result *r = run(PROFILE_ARGS " -o p.fifo");
    assert_int_equal(r->status, 0);
    snprintf(cmd, sizeof cmd, "sleep 0.3; grep -q '\"sha256\"' '%s/fifo.txt'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_lmo_search(void **state)
{
    (void)state;
    put("grid.json", "{\"gamma_weight\": [0.2, 0.3, 0.5], \"exp_weight\": [0.2, 0.4], "
                     "\"uniform_weight\": [0.1, 0.3], \"gamma\": [[0.5, 1], [1, 2]], "
                     "\"exp_rate\": [2, 5], \"uniform\": [[1, 2]]}");
#define SEARCH "lmo search --grid grid.json --epsilon 3 --delta 1e-10 --checkpoint s.ckpt"
    /* -o is checked before the search: the search's own checkpoint is never written */
    assert_int_equal(mkdir(at("sdir"), 0755), 0);
    refused(run(SEARCH " -o sdir"), "sdir");
    assert_false(exists(at("s.ckpt")));
    refused(run(SEARCH " -o nowhere/p.json"), "nowhere/p.json");
    assert_false(exists(at("s.ckpt")));
    refused(run(SEARCH " -o /dev/full"), "/dev/full");
    assert_false(exists(at("s.ckpt")));
    assert_int_equal(mkfifo(at("s.fifo"), 0644), 0);
    refused(run(SEARCH " -o s.fifo"), "s.fifo");
    assert_false(exists(at("s.ckpt")));
    /* the search checkpoint itself (already checked before the search by its first write) */
    refused(run("lmo search --grid grid.json --epsilon 3 --delta 1e-10 --checkpoint /dev/full"),
            "/dev/full");
}

#define AUDIT_ARGS                                                                         \
    "audit --noise-multiplier 1.1 --sampling-rate 0.01 --steps 100 --delta 1e-5 "           \
    "--epsilon 1 --no-calibrate --no-plots"

static void test_audit_markdown(void **state)
{
    (void)state;
    /* checked before the audit: no report is printed and then lost */
    assert_int_equal(mkdir(at("mddir"), 0755), 0);
    refused(run(AUDIT_ARGS " --markdown mddir"), "mddir");
    refused(run(AUDIT_ARGS " --markdown nowhere/r.md"), "nowhere/r.md");
    refused(run(AUDIT_ARGS " --markdown /dev/full"), "/dev/full");
    assert_int_equal(mkfifo(at("md.fifo"), 0644), 0);
    refused(run(AUDIT_ARGS " --markdown md.fifo"), "md.fifo");
    refused(run(AUDIT_ARGS " --markdown /proc/self/r.md"), "/proc/self/r.md");
}

static void test_plot(void **state)
{
    (void)state;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        skip(); /* without gnuplot plot fails before any output anyway */
    const char *noise = "plot noise --gamma-weight 0.1 --gamma-shape 1 --gamma-scale 0.5 "
                        "--exp-weight 0.1 --exp-rate 5 --uniform-weight 0.1 --uniform-low 1 "
                        "--uniform-high 2";
    assert_int_equal(mkdir(at("d.svg"), 0755), 0);
    refused(run("%s -o d.svg", noise), "d.svg");
    refused(run("%s -o nowhere/p.svg", noise), "nowhere/p.svg");
    assert_int_equal(mkfifo(at("pic.svg"), 0644), 0);
    refused(run("%s -o pic.svg", noise), "pic.svg");
    refused(run("%s -o /proc/self/p.svg", noise), "/proc/self/p.svg");
    put("claim.json", "{\"name\": \"c\", \"noise_multiplier\": 1.1, \"sampling_rate\": 0.01, "
                      "\"steps\": 100, \"delta\": 1e-5, \"epsilon\": 1}");
    refused(run("plot epsilon-delta claim.json -o nowhere/c.png"), "nowhere/c.png");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_checkpoint), cmocka_unit_test(test_train_metrics),
        cmocka_unit_test(test_profile),          cmocka_unit_test(test_lmo_search),
        cmocka_unit_test(test_audit_markdown),   cmocka_unit_test(test_plot),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
