/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_crypto.c: the cost of dpzo's cryptography (issue 29, bench/results/crypto.md).
 *
 *   dpzo-bench-crypto [--rounds R]
 *
 *   poisson  one Poisson batch (trainer/sampler.c, q = 256 / 60,000) at n = 60,000 and
 *            n = 1,000,000 rows, with each version this CPU has: libsodium's keystream,
 *            dpzo's AVX2 and AVX-512 blocks (interleaved round by round);
 *   sha256   SHA-256 of 100 MB (common/dpzo_sha256.c).
 * R rounds (default 15); each times 20 batches at n = 60,000, 2 at n = 1e6 and one digest
 * of 100 MB. Each batch or digest is one sample; printed are the minimum and the median over
 * all samples, in wall-clock time and in this process's CPU time (single-threaded, so the
 * CPU time does not count time other jobs take the core away). The comparison with the
 * hand-written SHA-256 it replaced was made by this program at commit 891d60c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpzo/dpzo.h"
#include "train_internal.h"
#include "dpzo_sha256.h"

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double *wall, *cpu;
    size_t n, cap;
} samples;

static void add(samples *s, double wall, double cpu)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->wall = realloc(s->wall, s->cap * sizeof *s->wall);
        s->cpu = realloc(s->cpu, s->cap * sizeof *s->cpu);
        if (s->wall == NULL || s->cpu == NULL)
            exit(1);
    }
    s->wall[s->n] = wall;
    s->cpu[s->n++] = cpu;
}

static void report(const char *what, samples *s, double scale, const char *unit)
{
    qsort(s->wall, s->n, sizeof *s->wall, cmp_double);
    qsort(s->cpu, s->n, sizeof *s->cpu, cmp_double);
    printf("%-32s wall min %9.1f median %9.1f   cpu min %9.1f median %9.1f %s (%zu samples)\n",
           what, scale * s->wall[0], scale * s->wall[s->n / 2], scale * s->cpu[0],
           scale * s->cpu[s->n / 2], unit, s->n);
    free(s->wall);
    free(s->cpu);
}

int main(int argc, char **argv)
{
    int rounds = 15;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: dpzo-bench-crypto [--rounds R]\n");
            return 2;
        }
    }
    if (rounds < 1)
        return 2;
    dpzo_ctx *ctx = dpzo_ctx_new();
    static const size_t ns[2] = {60000, 1000000};
    static const int reps[2] = {20, 2};
    size_t *idx = malloc(ns[1] * sizeof *idx);
    const size_t mb = 100 * 1000 * 1000;
    unsigned char *data = malloc(mb);
    if (ctx == NULL || idx == NULL || data == NULL)
        return 1;
    for (size_t i = 0; i < mb; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 13);
    samples poisson[3][2], sha;
    memset(poisson, 0, sizeof poisson);
    memset(&sha, 0, sizeof sha);
    dpzo__sampler s[2];
    for (int k = 0; k < 2; k++)
        if (dpzo__sampler_init(ctx, &s[k], DPZO_BATCH_POISSON, 0x5eed, ns[k],
                               256.0 / 60000.0 * (double)ns[k], 0) != DPZO_OK) {
            fprintf(stderr, "%s\n", dpzo_ctx_errmsg(ctx));
            return 1;
        }
    uint64_t step = 0;
    size_t rows = 0;
    for (int r = 0; r < rounds; r++) {
        for (int impl = DPZO_SAMPLER_SODIUM; impl <= DPZO_SAMPLER_AVX512; impl++) {
            if (dpzo__sampler_impl(impl) != 0)
                continue;
            for (int k = 0; k < 2; k++)
                for (int rep = 0; rep < reps[k]; rep++, step++) {
                    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
                    rows += dpzo__sampler_batch(&s[k], step, idx);
                    double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
                    add(&poisson[impl][k], w1 - w0, c1 - c0);
                }
        }
        dpzo__sampler_impl(-1);
        unsigned char d[32];
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        dpzo__sha256 h;
        dpzo__sha256_init(&h);
        dpzo__sha256_update(&h, data, mb);
        dpzo__sha256_final(&h, d);
        double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
        add(&sha, w1 - w0, c1 - c0);
        rows += d[0];
    }
    printf("Poisson batch, q = 256/60000 (microseconds per batch; %zu rows drawn):\n", rows);
    static const char *const names[3] = {"libsodium", "dpzo AVX2", "dpzo AVX-512"};
    for (int impl = 0; impl < 3; impl++)
        for (int k = 0; k < 2; k++) {
            if (poisson[impl][k].n == 0)
                continue; /* not on this CPU */
            char what[64];
            snprintf(what, sizeof what, "  %s, n = %zu", names[impl], ns[k]);
            report(what, &poisson[impl][k], 1e6, "us");
        }
    for (int k = 0; k < 2; k++)
        dpzo__sampler_free(&s[k]);
    printf("SHA-256 of 100 MB (milliseconds; MB/s = 1e5 / ms):\n");
    report("  crypto_hash_sha256", &sha, 1e3, "ms");
    free(idx);
    free(data);
    dpzo_ctx_free(ctx);
    return 0;
}
