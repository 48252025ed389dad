/* SPDX-License-Identifier: Apache-2.0 */
/* tests/cliutil.h: running the dpzo binary from a test (needs DPZO_CLI and DPZO_TEST_TMP). */
#ifndef DPZO_CLIUTIL_H
#define DPZO_CLIUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

typedef struct {
    int status;
    char out[65536];
    char err[4096];
} run_result;

static inline void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `dpzo ARGS`, capturing stdout and stderr in DPZO_TEST_TMP/TAG.out and TAG.err (one
 * tag per test program: ctest runs them in parallel). The result is static. */
static inline run_result *cli_run(const char *args, const char *tag)
{
    static run_result r;
    char cmd[16384];
    int len = snprintf(cmd, sizeof cmd, "%s %s >%s/%s.out 2>%s/%s.err", DPZO_CLI, args,
                       DPZO_TEST_TMP, tag, DPZO_TEST_TMP, tag);
    int st = len > 0 && (size_t)len < sizeof cmd ? system(cmd) : -1; /* never run a cut one */
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s.out", DPZO_TEST_TMP, tag);
    slurp(p, r.out, sizeof r.out);
    snprintf(p, sizeof p, "%s/%s.err", DPZO_TEST_TMP, tag);
    slurp(p, r.err, sizeof r.err);
    return &r;
}

#endif
