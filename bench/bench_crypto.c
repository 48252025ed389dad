/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_crypto.c: the cost of dpzo's cryptography (issue 29, bench/results/crypto.md).
 *
 *   dpzo-bench-crypto [--rounds R]
 *
 *   poisson  one Poisson batch (trainer/sampler.c, q = 256 / 60,000) at n = 60,000 and
 *            n = 1,000,000 rows, with each version of the sampler this CPU runs;
 *   sha256   SHA-256 of 100 MB (dpzo__sha256 and libsodium's crypto_hash_sha256).
 * R rounds (default 15); in each, every version is timed one after the other (so that load
 * from other jobs hits them alike): 20 batches at n = 60,000, 2 at n = 1e6, one digest of
 * 100 MB. Each batch or digest is one sample; printed are the minimum and the median over
 * all samples, in wall-clock time and in this process's CPU time (single-threaded, so the
 * CPU time does not count time other jobs take the core away). Every version's batches
 * are checked against the scalar one's, and the digests against each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include "dpzo/dpzo.h"
#include "train_internal.h"
#include "sha256.h"

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
    printf("%-34s wall min %9.1f median %9.1f   cpu min %9.1f median %9.1f %s (%zu samples)\n",
           what, scale * s->wall[0], scale * s->wall[s->n / 2], scale * s->cpu[0],
           scale * s->cpu[s->n / 2], unit, s->n);
}

static const char *const IMPL_NAME[] = {"hand-written scalar", "hand-written AVX2",
                                        "hand-written AVX-512", "libsodium"};
enum { N_IMPL = DPZO_SAMPLER_SODIUM + 1 };

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
    if (sodium_init() < 0 || rounds < 1)
        return 1;
    dpzo_ctx *ctx = dpzo_ctx_new();
    static const size_t ns[2] = {60000, 1000000};
    static const int reps[2] = {20, 2};
    size_t *idx = malloc(ns[1] * sizeof *idx), *ref = malloc(ns[1] * sizeof *ref);
    const size_t mb = 100 * 1000 * 1000;
    unsigned char *data = malloc(mb);
    if (ctx == NULL || idx == NULL || ref == NULL || data == NULL)
        return 1;
    for (size_t i = 0; i < mb; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 13);
    int have[N_IMPL];
    samples poisson[2][N_IMPL], sha[2];
    memset(poisson, 0, sizeof poisson);
    memset(sha, 0, sizeof sha);
    for (int v = 0; v < N_IMPL; v++)
        have[v] = dpzo__sampler_impl(v) == 0;
    dpzo__sampler_impl(-1);
    dpzo__sampler s[2];
    for (int k = 0; k < 2; k++)
        if (dpzo__sampler_init(ctx, &s[k], DPZO_BATCH_POISSON, 0x5eed, ns[k], 256.0 / 60000.0 * (double)ns[k], 0) != DPZO_OK) {
            fprintf(stderr, "%s\n", dpzo_ctx_errmsg(ctx));
            return 1;
        }
    uint64_t step = 0;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++)
            for (int rep = 0; rep < reps[k]; rep++, step++) {
                dpzo__sampler_impl(DPZO_SAMPLER_SCALAR);
                size_t nref = dpzo__sampler_batch(&s[k], step, ref);
                for (int v = 0; v < N_IMPL; v++) {
                    if (!have[v])
                        continue;
                    dpzo__sampler_impl(v);
                    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
                    size_t b = dpzo__sampler_batch(&s[k], step, idx);
                    double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
                    add(&poisson[k][v], w1 - w0, c1 - c0);
                    if (b != nref || memcmp(idx, ref, b * sizeof *idx) != 0) {
                        fprintf(stderr, "%s: batch %llu of n = %zu differs from the scalar one\n",
                                IMPL_NAME[v], (unsigned long long)step, ns[k]);
                        return 1;
                    }
                }
            }
        unsigned char d[2][32];
        for (int v = 0; v < 2; v++) {
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            if (v == 0) {
                dpzo__sha256 h;
                dpzo__sha256_init(&h);
                dpzo__sha256_update(&h, data, mb);
                dpzo__sha256_final(&h, d[0]);
            } else
                crypto_hash_sha256(d[1], data, mb);
            double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
            add(&sha[v], w1 - w0, c1 - c0);
        }
        if (memcmp(d[0], d[1], 32) != 0) {
            fprintf(stderr, "the SHA-256 digests differ\n");
            return 1;
        }
    }
    dpzo__sampler_impl(-1);
    printf("Poisson batch, q = 256/60000 (microseconds per batch):\n");
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < N_IMPL; v++)
            if (have[v]) {
                char what[64];
                snprintf(what, sizeof what, "  n = %zu, %s", ns[k], IMPL_NAME[v]);
                report(what, &poisson[k][v], 1e6, "us");
            }
    printf("SHA-256 of 100 MB (milliseconds; MB/s = 1e5 / ms):\n");
    report("  hand-written (noisesearch)", &sha[0], 1e3, "ms");
    report("  libsodium crypto_hash_sha256", &sha[1], 1e3, "ms");
    for (int k = 0; k < 2; k++) {
        dpzo__sampler_free(&s[k]);
        for (int v = 0; v < N_IMPL; v++)
            free(poisson[k][v].wall), free(poisson[k][v].cpu);
    }
    for (int v = 0; v < 2; v++)
        free(sha[v].wall), free(sha[v].cpu);
    free(idx);
    free(ref);
    free(data);
    dpzo_ctx_free(ctx);
    return 0;
}
