/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_pld_memory.c: the PLD and PRV accountants stay within their memory limit, as
 * measured: each query runs in a forked child, and the child's peak resident size
 * (getrusage of the child, ru_maxrss) may exceed its resident size before the query (its
 * high-water mark then, VmHWM) by at most the limit plus a slack for what the byte
 * accounting does not cover (the event, the RDP accountant, the second direction's thread
 * stack and malloc's own bookkeeping). The same measurement checks that dpzo_pld_plan's
 * count bounds the query's peak, and that a million-step PRV query answers within a limit
 * with an interval consistent with the PLD's and, at q = 1, with the exact mu-GDP epsilon.
 *
 * Under AddressSanitizer (CI runs the C tests with ASan and UBSan) every allocation carries
 * redzones and freed memory is held in quarantine, so the resident size says nothing about
 * the accountant's allocations: there the resident-size assertions are skipped, and the
 * queries' answers and reported byte counts are still checked (against the million-step
 * PLD's interval as release builds compute it, which keeps the test near 10 s). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define MIB ((size_t)1 << 20)
/* resident bytes beyond the accounted ones a query may add (see the file comment) */
#define SLACK_KB (16L * 1024)

typedef struct {
    double q, sigma;
    uint64_t steps;
    double delta;
    int prv;
    double grid;        /* PLD grid, or PRV eps_error */
    size_t limit;       /* bytes */
} spec;

typedef struct {
    int status;         /* dpzo_status of the query */
    int plan_status;
    double lo, est, hi, eps_error, grid;
    int fallback;
    size_t memory_bytes, fft, plan_bytes;
    long base_kb;       /* the child's VmHWM before the query */
    char msg[200];
} answer;

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) {
            v = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static void child(const spec *s, int fd)
{
    answer a;
    memset(&a, 0, sizeof a);
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_event *e = sgm_event(ctx, s->q, s->sigma, s->steps);
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    o.method = s->prv ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS;
    if (s->prv)
        o.eps_error = s->grid;
    else
        o.grid = s->grid;
    o.memory_limit = s->limit;
    size_t fft = 0;
    a.base_kb = status_kb("VmHWM:");
    a.plan_status = (int)dpzo_pld_plan(ctx, e, s->delta, 0, &o, &a.plan_bytes, &fft);
    dpzo_pld_result r;
    a.status = (int)dpzo_pld_epsilon(ctx, e, s->delta, &o, &r);
    if (a.status == DPZO_OK) {
        a.lo = r.epsilon_lower;
        a.est = r.epsilon_estimate;
        a.hi = r.epsilon_upper;
        a.eps_error = r.eps_error;
        a.grid = r.grid;
        a.fallback = r.fallback;
        a.memory_bytes = r.memory_bytes;
        a.fft = r.fft_size;
    } else {
        snprintf(a.msg, sizeof a.msg, "%s", dpzo_ctx_errmsg(ctx));
    }
    const char *p = (const char *)&a;
    size_t left = sizeof a;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        p += w;
        left -= (size_t)w;
    }
    _exit(0);
}

/* Runs the query in a child; *peak_kb: the child's peak resident size. */
static answer run(const spec *s, long *peak_kb)
{
    int fd[2];
    answer a;
    memset(&a, 0, sizeof a);
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        child(s, fd[1]);
    }
    close(fd[1]);
    char *p = (char *)&a;
    size_t got = 0;
    while (got < sizeof a) {
        ssize_t r = read(fd[0], p + got, sizeof a - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd[0]);
    int wst = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    assert_int_equal(wait4(pid, &wst, 0, &ru), pid);
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    assert_int_equal(got, sizeof a);
    *peak_kb = ru.ru_maxrss; /* kilobytes on Linux */
    return a;
}

/* The query's resident growth stays within the limit (and, answered, within the plan). */
static void check_rss(const spec *s, const answer *a, long peak_kb, int answered)
{
    long grew = peak_kb - a->base_kb;
    print_message("  %s q=%g sigma=%g steps=%llu delta=%g limit %zu MiB: status %d, peak %ld KiB "
                  "(+%ld KiB over %ld KiB before), reported %zu KiB, plan %zu KiB, FFT %zu\n",
                  s->prv ? "PRV" : "PLD", s->q, s->sigma, (unsigned long long)s->steps, s->delta,
                  s->limit / MIB, a->status, peak_kb, grew, a->base_kb, a->memory_bytes / 1024,
                  a->plan_bytes / 1024, a->fft);
    if (answered) {
        assert_true(a->memory_bytes <= s->limit);
        assert_true(a->memory_bytes > 0);
    }
    if (UNDER_ASAN)
        return; /* resident sizes are not the accountant's under ASan (file comment) */
    assert_true(a->base_kb > 0 && peak_kb > 0);
    if (!(grew <= (long)(s->limit / 1024) + SLACK_KB))
        fail_msg("resident size grew by %ld KiB, above the limit %zu KiB + slack %ld KiB", grew,
                 s->limit / 1024, SLACK_KB);
    if (answered && a->plan_status == DPZO_OK && !(grew <= (long)(a->plan_bytes / 1024) + SLACK_KB))
        fail_msg("resident size grew by %ld KiB, above the plan's %zu KiB + slack %ld KiB", grew,
                 a->plan_bytes / 1024, SLACK_KB);
}

/* PLD at grid 1e-4, 1e5 steps of q = 0.01, sigma = 1 (44 MiB): refused under 32 MiB
 * before allocating, answered under 64 MiB; PRV at its default eps_error 0.01 needs
 * about 800 MiB there: it answers under 64 MiB with a coarser mesh, a larger (reported)
 * eps_error, and an interval that meets the PLD's. */
static void test_limit_respected(void **state)
{
    (void)state;
    long peak;
    spec s = {0.01, 1.0, 100000, 1e-6, 0, 1e-4, 32 * MIB};
    answer a = run(&s, &peak);
    assert_int_equal(a.status, DPZO_ENOMEM);
    assert_non_null(strstr(a.msg, "memory limit"));
    check_rss(&s, &a, peak, 0);

    s.limit = 64 * MIB;
    answer pld = run(&s, &peak);
    assert_int_equal(pld.status, DPZO_OK);
    assert_int_equal(pld.fallback, 0);
    check_rss(&s, &pld, peak, 1);
    /* report_pld.md: [27.63925, 27.67282] */
    assert_true(pld.lo > 27.63 && pld.hi < 27.68);

    spec p = {0.01, 1.0, 100000, 1e-6, 1, 0.01, 64 * MIB};
    answer prv = run(&p, &peak);
    assert_int_equal(prv.status, DPZO_OK);
    assert_int_equal(prv.fallback, 0);
    check_rss(&p, &prv, peak, 1);
    assert_true(prv.eps_error > 0.01 && prv.eps_error < 0.2); /* the mesh that fits */
    assert_true(prv.lo <= pld.hi && pld.lo <= prv.hi);
    assert_true(prv.lo <= prv.est && prv.est <= prv.hi && prv.hi - prv.lo <= 2.0 * prv.eps_error);
}

/* A million PRV steps within 96 MiB: q = 0.01, sigma = 1, delta = 1e-6 against the PLD at
 * grid 1e-4 (report_pld.md: [145.1718, 145.4982]); q = 1, sigma = 0.3, delta = 1e-30
 * (issue 20: 2.9 GB resident, then a failure) against the exact mu-GDP epsilon,
 * mu = 1000 / 0.3: 5593767.9728994018 (mpmath, 60 digits, root of
 * Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2) = 1e-30). */
static void test_million_prv_steps(void **state)
{
    (void)state;
    long peak;
    spec s = {0.01, 1.0, 1000000, 1e-6, 0, 1e-4, 256 * MIB};
    answer pld;
    if (UNDER_ASAN) {
        /* the suite's time under ASan: the PLD's interval as release builds compute it */
        memset(&pld, 0, sizeof pld);
        pld.lo = 145.1718;
        pld.hi = 145.4982;
    } else {
        pld = run(&s, &peak);
        assert_int_equal(pld.status, DPZO_OK);
        check_rss(&s, &pld, peak, 1);
        assert_true(pld.lo > 145.17 && pld.lo < 145.18 && pld.hi > 145.49 && pld.hi < 145.50);
    }
    spec p = {0.01, 1.0, 1000000, 1e-6, 1, 0.01, 96 * MIB};
    answer prv = run(&p, &peak);
    assert_int_equal(prv.status, DPZO_OK);
    assert_int_equal(prv.fallback, 0);
    check_rss(&p, &prv, peak, 1);
    assert_true(prv.lo <= pld.hi && pld.lo <= prv.hi);
    assert_true(prv.hi - prv.lo < pld.hi - pld.lo); /* and tighter than the PLD at 1e-4 */

    spec g = {1.0, 0.3, 1000000, 1e-30, 1, 0.01, 64 * MIB};
    answer gdp = run(&g, &peak);
    assert_int_equal(gdp.status, DPZO_OK);
    assert_int_equal(gdp.fallback, 0);
    check_rss(&g, &gdp, peak, 1);
    const double exact = 5593767.9728994018;
    /* the mesh that fits 64 MiB is 0.049: an epsilon error of about 600 */
    if (!(gdp.lo <= exact && exact <= gdp.hi && gdp.hi - gdp.lo < 2.0 * gdp.eps_error))
        fail_msg("[%.10g, %.10g] does not bracket %.10g within 2 x %g", gdp.lo, gdp.hi, exact,
                 gdp.eps_error);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_respected),
        cmocka_unit_test(test_million_prv_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
