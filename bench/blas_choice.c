/* SPDX-License-Identifier: Apache-2.0 */
/* bench/blas_choice.c: the products of mlp:128's DPZero step (for each sign X[256x784] W1^T
 * and H[256x128] W2^T, 104 MFLOP) with the cblas_sgemm of a BLAS loaded by path, one
 * thread, best of 3,000 repetitions. bench/blas_choice.sh runs it on Debian's OpenBLAS
 * under each kernel set and on Debian's BLIS, to choose how dpzo gets full-width kernels
 * on CPUs OpenBLAS 0.3.21 does not know (issue 27; docs/trainer.md section 4.3).
 *   usage: dpzo-blas-choice LIBRARY.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY.so\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "blas_choice: %s\n", dlerror());
        return 1;
    }
    sgemm_fn gemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
    if (gemm == NULL) {
        fprintf(stderr, "blas_choice: %s has no cblas_sgemm\n", argv[1]);
        return 1;
    }
    /* the kernels: OpenBLAS's core name, or BLIS's sub-configuration */
    const char *(*ob_core)(void) = (const char *(*)(void))dlsym(h, "openblas_get_corename");
    void (*ob_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    int (*bli_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
    const char *(*bli_name)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
    const char *kernels = ob_core ? ob_core() : bli_id && bli_name ? bli_name(bli_id()) : "?";
    if (ob_threads)
        ob_threads(1);
    enum { B = 256, D = 784, H = 128, C = 10 };
    float *x = malloc(sizeof(float) * B * D), *w1 = malloc(sizeof(float) * H * D),
          *hid = malloc(sizeof(float) * B * H), *w2 = malloc(sizeof(float) * C * H),
          *out = malloc(sizeof(float) * B * C);
    if (!x || !w1 || !hid || !w2 || !out)
        return 1;
    for (int i = 0; i < B * D; i++)
        x[i] = (float)(i % 255) / 255.0f;
    for (int i = 0; i < H * D; i++)
        w1[i] = (float)((i * 7) % 13 - 6) * 0.01f;
    for (int i = 0; i < C * H; i++)
        w2[i] = (float)((i * 5) % 11 - 5) * 0.01f;
    double best = 1e30;
    for (int r = 0; r < 3000; r++) {
        double t = now_s();
        for (int s = 0; s < 2; s++) { /* 101 RowMajor, 111 NoTrans, 112 Trans */
            gemm(101, 111, 112, B, H, D, 1.0f, x, D, w1, D, 0.0f, hid, H);
            gemm(101, 111, 112, B, C, H, 1.0f, hid, H, w2, H, 0.0f, out, C);
        }
        t = now_s() - t;
        if (t < best)
            best = t;
    }
    double flop = 2.0 * 2.0 * B * (double)(D * H + H * C);
    printf("{\"library\": \"%s\", \"kernels\": \"%s\", \"seconds\": %.6g, \"gflops\": %.1f}\n",
           argv[1], kernels, best, flop / best * 1e-9);
    free(x), free(w1), free(hid), free(w2), free(out);
    return 0;
}
