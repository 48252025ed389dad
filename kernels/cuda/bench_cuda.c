/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/bench_cuda.c: dpzo-bench-cuda, the CUDA kernels' achieved bandwidth against
 * the device's measured device-to-device copy bandwidth (issue 8's goal: >= 80%).
 *
 *   dpzo-bench-cuda [d] [out.tsv]
 *
 * d parameters (default 2^28 fp32, 1 GiB); each kernel is timed with CUDA events, 3
 * warm-ups then 20 timed runs, median reported. Bytes counted: copy 2 x 4d (read + write),
 * fill 4d (write), axpy and the fused two-direction axpy 8d (read + write theta once), the
 * SPHERE norm 0 (it reads nothing: the time is the generator's and the ordered sums'). The
 * inputs are random (never zeros). Prints a table; with out.tsv also writes it there.
 * Exits 77 without a usable device. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/cuda.h"
#include "dpzo/dpzo.h"

#define WARM 3
#define REPS 20

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "dpzo-bench-cuda: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static void check_st(dpzo_ctx *ctx, dpzo_status st, const char *what)
{
    if (st != DPZO_OK) {
        fprintf(stderr, "dpzo-bench-cuda: %s: %s\n", what, dpzo_ctx_errmsg(ctx));
        exit(1);
    }
}

typedef enum { K_COPY, K_FILL, K_AXPY, K_AXPY2, K_SUMSQ } kernel_kind;

typedef struct {
    dpzo_ctx *ctx;
    uint64_t d;
    float *a, *b;
    dpzo_dir dir[2];
    double alpha[2];
} bench;

static void run_once(bench *B, kernel_kind k)
{
    double s;
    switch (k) {
    case K_COPY:
        check(cudaMemcpy(B->b, B->a, B->d * sizeof(float), cudaMemcpyDeviceToDevice), "copy");
        break;
    case K_FILL:
        check_st(B->ctx, dpzo_cuda_dir_fill(B->ctx, &B->dir[0], 0, B->d, B->b), "fill");
        break;
    case K_AXPY:
        check_st(B->ctx, dpzo_cuda_dir_axpy(B->ctx, &B->dir[0], 0, B->d, B->alpha[0], B->a),
                 "axpy");
        break;
    case K_AXPY2:
        check_st(B->ctx,
                 dpzo_cuda_dir_axpy_multi(B->ctx, B->dir, B->alpha, 2, 0, B->d, B->a), "axpy2");
        break;
    case K_SUMSQ:
        check_st(B->ctx, dpzo_cuda_dir_sumsq(B->ctx, &B->dir[0], &s), "sumsq");
        break;
    }
}

/* The median time in seconds of REPS runs. */
static double time_kernel(bench *B, kernel_kind k)
{
    cudaEvent_t e0, e1;
    double t[REPS];
    check(cudaEventCreate(&e0), "event");
    check(cudaEventCreate(&e1), "event");
    for (int i = 0; i < WARM; i++)
        run_once(B, k);
    check(cudaDeviceSynchronize(), "warm-up");
    for (int i = 0; i < REPS; i++) {
        float ms = 0.0f;
        check(cudaEventRecord(e0, 0), "record");
        run_once(B, k);
        check(cudaEventRecord(e1, 0), "record");
        check(cudaEventSynchronize(e1), "sync");
        check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        t[i] = ms * 1e-3;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    qsort(t, REPS, sizeof t[0], cmp_double);
    return 0.5 * (t[REPS / 2 - 1] + t[REPS / 2]);
}

int main(int argc, char **argv)
{
    uint64_t d = argc > 1 ? strtoull(argv[1], NULL, 10) : (1ull << 28);
    FILE *out = argc > 2 ? fopen(argv[2], "w") : NULL;
    if (!dpzo_cuda_available()) {
        printf("dpzo-bench-cuda: skipped: %s\n", dpzo_cuda_unavailable_reason());
        return 77;
    }
    bench B = {.ctx = dpzo_ctx_new(), .d = d, .alpha = {-1e-3, 2e-3}};
    char name[256];
    int major, minor, sms;
    check_st(B.ctx, dpzo_cuda_device_info(B.ctx, name, sizeof name, &major, &minor, &sms),
             "device");
    check_st(B.ctx, dpzo_cuda_malloc(B.ctx, (void **)&B.a, d * sizeof(float)), "malloc");
    check_st(B.ctx, dpzo_cuda_malloc(B.ctx, (void **)&B.b, d * sizeof(float)), "malloc");
    /* random theta: a Gaussian fill, so neither buffer is zeros */
    check_st(B.ctx, dpzo_dir_init(B.ctx, &B.dir[0], DPZO_DIR_GAUSSIAN, 7, 1, 0, d, 1.0), "dir");
    check_st(B.ctx, dpzo_cuda_dir_fill(B.ctx, &B.dir[0], 0, d, B.a), "fill");
    check_st(B.ctx, dpzo_cuda_dir_fill(B.ctx, &B.dir[0], 0, d, B.b), "fill");
    check_st(B.ctx, dpzo_cuda_synchronize(B.ctx), "sync");

    printf("device: %s (sm_%d%d, %d SMs); d = %llu fp32 parameters (%.2f GB)\n", name, major,
           minor, sms, (unsigned long long)d, 4e-9 * (double)d);
    if (out != NULL)
        fprintf(out, "device\tkernel\tdirection\td\tbytes\tmedian_s\tGB_per_s\tpct_of_copy\n");
    double tc = time_kernel(&B, K_COPY), copy_bw = 8.0 * (double)d / tc;
    printf("%-34s %12s %10s %8s\n", "kernel", "median ms", "GB/s", "% copy");
    printf("%-34s %12.4f %10.1f %8.1f\n", "device-to-device copy (r+w)", tc * 1e3,
           copy_bw * 1e-9, 100.0);
    if (out != NULL)
        fprintf(out, "%s\tcopy\t-\t%llu\t%.0f\t%.6e\t%.1f\t100.0\n", name,
                (unsigned long long)d, 8.0 * (double)d, tc, copy_bw * 1e-9);
    const dpzo_dir_kind kinds[] = {DPZO_DIR_GAUSSIAN, DPZO_DIR_RADEMACHER};
    const struct {
        kernel_kind k;
        const char *name;
        double bytes_per;
    } ks[] = {{K_FILL, "fill (w)", 4.0},
              {K_AXPY, "axpy (r+w)", 8.0},
              {K_AXPY2, "axpy, 2 directions fused (r+w)", 8.0},
              {K_SUMSQ, "sphere sum of squares", 0.0}};
    for (size_t ki = 0; ki < 2; ki++) {
        for (int q = 0; q < 2; q++)
            check_st(B.ctx, dpzo_dir_init(B.ctx, &B.dir[q], kinds[ki], 11, 5, (uint32_t)q, d,
                                          1.0),
                     "dir");
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            if (ks[i].k == K_SUMSQ && kinds[ki] == DPZO_DIR_RADEMACHER)
                continue;
            double t = time_kernel(&B, ks[i].k);
            double bw = ks[i].bytes_per * (double)d / t;
            char label[96];
            snprintf(label, sizeof label, "%s, %s", ks[i].name, dpzo_dir_kind_name(kinds[ki]));
            printf("%-34s %12.4f %10.1f %8.1f\n", label, t * 1e3, bw * 1e-9,
                   100.0 * bw / copy_bw);
            if (out != NULL)
                fprintf(out, "%s\t%s\t%s\t%llu\t%.0f\t%.6e\t%.1f\t%.1f\n", name, ks[i].name,
                        dpzo_dir_kind_name(kinds[ki]), (unsigned long long)d,
                        ks[i].bytes_per * (double)d, t, bw * 1e-9, 100.0 * bw / copy_bw);
        }
    }
    if (out != NULL)
        fclose(out);
    dpzo_cuda_free(B.a);
    dpzo_cuda_free(B.b);
    dpzo_ctx_free(B.ctx);
    return 0;
}
