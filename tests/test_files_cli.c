/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_files_cli.c: the file rules of docs/files.md through the command line:
 * outputs (profile -o, audit --markdown, plot -o) never replace a device or FIFO and write
 * through links; inputs (grids, profiles, claims, schedules, configurations) that are
 * FIFOs, devices or too large are refused at once. Every command runs under `timeout`, so a
 * blocking open fails the test instead of hanging it. */
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

#define CLI_DIR_TAG "files_cli"
#include "cli_dir.h"

static void expect(result *r, int status, const char *needle)
{
    if (r->status != status || (needle != NULL && strstr(r->err, needle) == NULL))
        fail_msg("exit %d (want %d), stderr '%s' (want '%s')", r->status, status, r->err,
                 needle ? needle : "");
}

#define PROFILE_ARGS "profile gaussian --epsilon 1 --delta 1e-5 --steps 10 --full-batch"

static void test_profile_outputs(void **state)
{
    (void)state;
    /* a FIFO without a reader: refused at once, the FIFO left (was: replaced by a file) */
    assert_int_equal(mkfifo(at("out.fifo"), 0644), 0);
    expect(run(PROFILE_ARGS " -o out.fifo"), 2, "no reader"); /* checked before the work */
    assert_true(kind_is(at("out.fifo"), S_IFIFO));
    /* /dev/null: written directly, still the device */
    expect(run(PROFILE_ARGS " -o /dev/null"), 0, NULL);
    assert_true(kind_is("/dev/null", S_IFCHR));
    /* "-": standard output */
    result *r = run(PROFILE_ARGS " -o -");
    expect(r, 0, NULL);
    assert_non_null(strstr(r->out, "\"dpzo-noise-profile\""));
    /* through a link: the target is replaced, the link stays; no temporary is left */
    assert_int_equal(mkdir(at("real"), 0755), 0);
    put("real/p.json", "old");
    assert_int_equal(symlink("real/p.json", at("p.json")), 0);
    put("victim", "precious");
    assert_int_equal(symlink("victim", at("real/p.json.tmp")), 0);
    expect(run(PROFILE_ARGS " -o p.json"), 0, NULL);
    assert_true(kind_is(at("p.json"), S_IFLNK));
    char buf[8192];
    slurp_to(at("real/p.json"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"dpzo-noise-profile\""));
    slurp_to(at("victim"), buf, sizeof buf);
    assert_string_equal(buf, "precious");
    expect(run("profile verify p.json"), 0, NULL);
    char cmd[1200]; /* no temporary left: only the planted link has "tmp" in its name */
    snprintf(cmd, sizeof cmd, "test $(ls -a '%s/real' | grep -c tmp) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_inputs_refused(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(at("in.fifo"), 0644), 0);
    /* was: lmo search --grid /dev/zero grew to 6.4 GB; every reader blocked on a FIFO */
    expect(run("lmo search --epsilon 1 --delta 1e-5 --grid /dev/zero"), 2, "character device");
    expect(run("lmo search --epsilon 1 --delta 1e-5 --grid in.fifo"), 2, "FIFO");
    expect(run("profile show in.fifo"), 2, "FIFO");
    expect(run("profile verify /dev/zero"), 2, "character device");
    expect(run("audit in.fifo"), 2, "FIFO");
    expect(run("epsilon --schedule in.fifo --delta 1e-5"), 2, "FIFO");
    result *r = run("train --config in.fifo");
    assert_true(r->status != 0);
    assert_non_null(strstr(r->err, "FIFO"));
    /* over the limit: a sparse 64 MiB + 1 grid is refused before it is read */
    int fd = open(at("big.json"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)(64 << 20) + 1), 0);
    close(fd);
    expect(run("lmo search --epsilon 1 --delta 1e-5 --grid big.json"), 2,
           "more than the limit of 67108864 bytes");
    expect(run("audit big.json"), 2, "more than the limit of 67108864 bytes");
    expect(run("profile show big.json"), 2, "more than the limit of 67108864 bytes");
}

#define AUDIT_ARGS                                                                         \
    "audit --noise-multiplier 1.1 --sampling-rate 0.01 --steps 100 --delta 1e-5 "           \
    "--epsilon 1 --no-calibrate --no-plots"

static void test_markdown_and_plot(void **state)
{
    (void)state;
    /* --markdown through a link: the target replaced whole, the link kept */
    put("old.md", "old report");
    assert_int_equal(symlink("old.md", at("r.md")), 0);
    expect(run(AUDIT_ARGS " --markdown r.md"), 0, NULL);
    assert_true(kind_is(at("r.md"), S_IFLNK));
    char buf[65536];
    slurp_to(at("old.md"), buf, sizeof buf);
    assert_non_null(strstr(buf, "# Privacy audit"));
    /* --markdown at a FIFO with no reader: refused, the FIFO left */
    assert_int_equal(mkfifo(at("md.fifo"), 0644), 0);
    expect(run(AUDIT_ARGS " --markdown md.fifo"), 2, "no reader");
    assert_true(kind_is(at("md.fifo"), S_IFIFO));
    /* plot -o (gnuplot is needed; without it the command fails before any output) */
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        return;
    put("old.svg", "old picture");
    assert_int_equal(symlink("old.svg", at("pic.svg")), 0);
    const char *noise = "plot noise --gamma-weight 0.1 --gamma-shape 1 --gamma-scale 0.5 "
                        "--exp-weight 0.1 --exp-rate 5 --uniform-weight 0.1 --uniform-low 1 "
                        "--uniform-high 2";
    expect(run("%s -o pic.svg", noise), 0, NULL);
    assert_true(kind_is(at("pic.svg"), S_IFLNK));
    slurp_to(at("old.svg"), buf, sizeof buf);
    assert_non_null(strstr(buf, "<svg"));
    assert_int_equal(mkfifo(at("pic2.svg"), 0644), 0);
    result *r = run("%s -o pic2.svg", noise);
    assert_true(r->status != 0);
    assert_non_null(strstr(r->err, "no reader"));
    assert_true(kind_is(at("pic2.svg"), S_IFIFO));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_outputs),
        cmocka_unit_test(test_inputs_refused),
        cmocka_unit_test(test_markdown_and_plot),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
