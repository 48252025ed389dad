/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/stub.c: the launchers of a build without CUDA (no nvcc, -DDPZO_CUDA=OFF or
 * DPZO_SANITIZE): no device, and every launcher fails, so dpzo/cuda.h links everywhere
 * and reports DPZO_EUNSUPPORTED with this reason. */
#include "zo_cuda.h"

static const char *const NO_CUDA = "this dpzo was built without CUDA (no nvcc found, or "
                                   "-DDPZO_CUDA=OFF / DPZO_SANITIZE)";

const char *dpzo__cu_probe(int *ok)
{
    *ok = 0;
    return NO_CUDA;
}

const char *dpzo__cu_device_info(char *name, size_t name_len, int *major, int *minor, int *sms)
{
    (void)name, (void)name_len, (void)major, (void)minor, (void)sms;
    return NO_CUDA;
}

void dpzo__cu_set_launch(unsigned blocks, unsigned threads) { (void)blocks, (void)threads; }

const char *dpzo__cu_malloc(void **p, size_t bytes)
{
    (void)bytes;
    *p = NULL;
    return NO_CUDA;
}

void dpzo__cu_free(void *p) { (void)p; }

const char *dpzo__cu_copy(void *dst, const void *src, size_t bytes, int to_device)
{
    (void)dst, (void)src, (void)bytes, (void)to_device;
    return NO_CUDA;
}

const char *dpzo__cu_sync(void) { return NO_CUDA; }

const char *dpzo__cu_apply(const dpzo_dir *dirs, const double *alpha, unsigned k, int axpy,
                           uint64_t j0, size_t n, float *out)
{
    (void)dirs, (void)alpha, (void)k, (void)axpy, (void)j0, (void)n, (void)out;
    return NO_CUDA;
}

const char *dpzo__cu_typed(const dpzo_dir *dirs, const double *alpha, unsigned k, int dt,
                           uint64_t j0, size_t n, const void *x, void *out, void *stream)
{
    (void)dirs, (void)alpha, (void)k, (void)dt, (void)j0, (void)n, (void)x, (void)out;
    (void)stream;
    return NO_CUDA;
}

const char *dpzo__cu_sumsq(const dpzo_dir *dir, double *total)
{
    (void)dir, (void)total;
    return NO_CUDA;
}

const char *dpzo__cu_clip_sum(double *diff, size_t b, unsigned Q, int mode, double clip,
                              double *qsum, double *factor)
{
    (void)diff, (void)b, (void)Q, (void)mode, (void)clip, (void)qsum, (void)factor;
    return NO_CUDA;
}
