/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_fft.c: times accountant/pld/fft.c, forward + inverse in place, best of 5, for
 * the sizes the PLD accountant uses; with --gsl also GSL's mixed-radix forward
 * (gsl_fft_complex_forward) for comparison. Prints a table. Usage:
 *   dpzo-bench-fft [--gsl] */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_fft_complex.h>
#include "fft.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "dpzo-bench-fft: out of memory\n");
        exit(1);
    }
    return p;
}

static double gsl_forward_ms(size_t n, const double complex *x0)
{
    gsl_fft_complex_wavetable *wt = gsl_fft_complex_wavetable_alloc(n);
    gsl_fft_complex_workspace *ws = gsl_fft_complex_workspace_alloc(n);
    double *x = xmalloc(2 * n * sizeof *x), best = INFINITY;
    if (wt == NULL || ws == NULL) {
        fprintf(stderr, "dpzo-bench-fft: GSL allocation failed\n");
        exit(1);
    }
    for (int rep = 0; rep < 5; rep++) {
        memcpy(x, x0, 2 * n * sizeof *x);
        double t0 = now();
        gsl_fft_complex_forward(x, 1, n, wt, ws);
        best = fmin(best, now() - t0);
    }
    free(x);
    gsl_fft_complex_workspace_free(ws);
    gsl_fft_complex_wavetable_free(wt);
    return 1e3 * best;
}

int main(int argc, char **argv)
{
    int gsl = argc > 1 && strcmp(argv[1], "--gsl") == 0;
    if (argc > 2 || (argc == 2 && !gsl)) {
        fprintf(stderr, "usage: dpzo-bench-fft [--gsl]\n");
        return 2;
    }
    const unsigned sizes[] = {16, 18, 20, 21, 22};
    printf("| n    | plan ms | forward ms | inverse ms | fwd+inv ms | ns/(n log2 n) "
           "| round-trip err |%s\n",
           gsl ? " GSL forward ms |" : "");
    printf("|------|---------|------------|------------|------------|---------------"
           "|----------------|%s\n",
           gsl ? "----------------|" : "");
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = (size_t)1 << sizes[si];
        double complex *x0 = xmalloc(n * sizeof *x0), *x = xmalloc(n * sizeof *x);
        srand(12345);
        for (size_t i = 0; i < n; i++) {
            double re = (double)rand() / RAND_MAX - 0.5, im = (double)rand() / RAND_MAX - 0.5;
            x0[i] = re + im * I;
        }
        memcpy(x, x0, n * sizeof *x);
        double t0 = now();
        dpzo__fft_plan *plan = dpzo__fft_plan_create(n);
        double t_plan = now() - t0;
        if (plan == NULL) {
            fprintf(stderr, "dpzo-bench-fft: plan for n = %zu failed\n", n);
            return 1;
        }
        double best_f = INFINITY, best_i = INFINITY, best_fi = INFINITY;
        for (int rep = 0; rep < 5; rep++) {
            t0 = now();
            dpzo__fft_forward(plan, x);
            double t1 = now();
            dpzo__fft_inverse(plan, x);
            double t2 = now();
            best_f = fmin(best_f, t1 - t0);
            best_i = fmin(best_i, t2 - t1);
            best_fi = fmin(best_fi, t2 - t0);
        }
        double err = 0.0;
        for (size_t i = 0; i < n; i++)
            err = fmax(err, cabs(x[i] - x0[i]));
        printf("| 2^%u | %7.2f | %10.2f | %10.2f | %10.2f | %13.3f | %14.2e |", sizes[si],
               1e3 * t_plan, 1e3 * best_f, 1e3 * best_i, 1e3 * best_fi,
               1e9 * best_fi / 2 / ((double)n * sizes[si]), err);
        if (gsl)
            printf(" %14.2f |", gsl_forward_ms(n, x0));
        printf("\n");
        fflush(stdout);
        dpzo__fft_plan_free(plan);
        free(x);
        free(x0);
    }
    return 0;
}
