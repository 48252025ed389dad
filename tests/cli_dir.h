/* SPDX-License-Identifier: Apache-2.0 */
/* tests/cli_dir.h: the harness of the command-line tests (test_files_cli,
 * test_outputs_cli, test_exit_codes_cli): dpzo (DPZO_CLI) runs under `timeout 120` inside
 * a private temporary folder (CLI_DIR_TAG names it), stdout and stderr captured, so that a
 * blocking open fails the test instead of hanging it; run_in also puts shell text before
 * it or sends its standard output elsewhere. Include it once, after cmocka.h. */
#ifndef DPZO_TESTS_CLI_DIR_H
#define DPZO_TESTS_CLI_DIR_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

static char dir[512];

typedef struct {
    int status;
    char out[16384], err[4096];
} result;

static const char *at(const char *name) { return test_path(dir, name); }

static void slurp_to(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* dpzo ARGS in the folder, under `timeout 120`: `pre` (NULL: none) is shell text put before
 * it (an environment assignment, or `ulimit -S -f 4; trap '' XFSZ;`), `out` (NULL:
 * cli.out, which r.out then holds) where its standard output goes (/dev/full). */
static result *vrun_in(const char *pre, const char *out, const char *fmt, va_list ap)
{
    static result r;
    char args[4096], cmd[8192];
    vsnprintf(args, sizeof args, fmt, ap);
    unlink(at("cli.out"));
    unlink(at("cli.err"));
    snprintf(cmd, sizeof cmd,
             "cd '%s' || exit 99; %s timeout 120 %s %s >%s 2>cli.err </dev/null", dir,
             pre ? pre : "", DPZO_CLI, args, out ? out : "cli.out");
    int st = system(cmd);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    slurp_to(at("cli.out"), r.out, sizeof r.out);
    slurp_to(at("cli.err"), r.err, sizeof r.err);
    if (r.status == 124)
        fail_msg("dpzo %s: timed out (blocked?)", args);
    return &r;
}

static result *run_in(const char *pre, const char *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), unused));
static result *run_in(const char *pre, const char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result *r = vrun_in(pre, out, fmt, ap);
    va_end(ap);
    return r;
}

static result *run(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static result *run(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result *r = vrun_in(NULL, NULL, fmt, ap);
    va_end(ap);
    return r;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int kind_is(const char *path, mode_t kind)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && (sb.st_mode & S_IFMT) == kind;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/" CLI_DIR_TAG "_XXXXXX", DPZO_TEST_TMP);
    return mkdtemp(dir) == NULL;
}

/* u+w first: a test may leave a read-only folder behind */
static int teardown(void **state)
{
    (void)state;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    return system(cmd) != 0;
}

#endif
