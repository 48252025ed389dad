/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/api.c: dpzo/cuda.h's argument checks, statuses and messages, around the
 * launchers of zo_cuda.cu (or stub.c in a build without CUDA). Plain C: it computes only
 * what the CPU computes the same way (the SPHERE scale radius / sqrt(sum), from the
 * device's sum of squares). */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include "dpzo/cuda.h"
#include "internal.h"
#include "zo_cuda.h"
#include "../dir_check.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok;
static const char *probe_why = "not probed";

static void probe(void)
{
    const char *why = dpzo__cu_probe(&probe_ok);
    probe_why = probe_ok ? "" : (why != NULL ? why : "no usable CUDA device");
}

int dpzo_cuda_available(void)
{
    pthread_once(&probe_once, probe);
    return probe_ok;
}

const char *dpzo_cuda_unavailable_reason(void)
{
    pthread_once(&probe_once, probe);
    return probe_why;
}

/* DPZO_EUNSUPPORTED with the CUDA message, or DPZO_OK when err is NULL. */
static dpzo_status cu_fail(dpzo_ctx *ctx, const char *what, const char *err)
{
    if (err == NULL)
        return DPZO_OK;
    return dpzo__fail(ctx, DPZO_EUNSUPPORTED, "cuda: %s: %s", what, err);
}

static dpzo_status need_device(dpzo_ctx *ctx, const char *what)
{
    if (dpzo_cuda_available())
        return DPZO_OK;
    return dpzo__fail(ctx, DPZO_EUNSUPPORTED, "cuda: %s: no usable device (%s)", what,
                      dpzo_cuda_unavailable_reason());
}

dpzo_status dpzo_cuda_device_info(dpzo_ctx *ctx, char *name, size_t name_len, int *cc_major,
                                  int *cc_minor, int *sm_count)
{
    dpzo_status st = need_device(ctx, "device info");
    if (st != DPZO_OK)
        return st;
    return cu_fail(ctx, "device info",
                   dpzo__cu_device_info(name, name_len, cc_major, cc_minor, sm_count));
}

dpzo_status dpzo_cuda_set_launch(dpzo_ctx *ctx, unsigned blocks, unsigned threads)
{
    if (threads != 0 && (threads < 32 || threads > 1024 || threads % 32 != 0))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "cuda: threads per block must be 0 or a multiple of 32 in "
                          "[32, 1024], got %u",
                          threads);
    if (blocks > 0x7fffffffu)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: blocks must be < 2^31, got %u", blocks);
    dpzo__cu_set_launch(blocks, threads);
    return DPZO_OK;
}

dpzo_status dpzo_cuda_malloc(dpzo_ctx *ctx, void **ptr, size_t bytes)
{
    if (ptr == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: malloc: ptr is NULL");
    *ptr = NULL;
    dpzo_status st = need_device(ctx, "malloc");
    if (st != DPZO_OK)
        return st;
    const char *err = dpzo__cu_malloc(ptr, bytes);
    if (err != NULL) {
        *ptr = NULL;
        return dpzo__fail(ctx, DPZO_ENOMEM, "cuda: malloc of %zu bytes: %s", bytes, err);
    }
    return DPZO_OK;
}

void dpzo_cuda_free(void *ptr)
{
    if (ptr != NULL)
        dpzo__cu_free(ptr);
}

dpzo_status dpzo_cuda_to_device(dpzo_ctx *ctx, void *dst_dev, const void *src, size_t bytes)
{
    if (bytes == 0)
        return DPZO_OK;
    if (dst_dev == NULL || src == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: copy to device: NULL pointer");
    dpzo_status st = need_device(ctx, "copy to device");
    return st != DPZO_OK ? st : cu_fail(ctx, "copy to device", dpzo__cu_copy(dst_dev, src, bytes, 1));
}

dpzo_status dpzo_cuda_to_host(dpzo_ctx *ctx, void *dst, const void *src_dev, size_t bytes)
{
    if (bytes == 0)
        return DPZO_OK;
    if (dst == NULL || src_dev == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: copy to host: NULL pointer");
    dpzo_status st = need_device(ctx, "copy to host");
    return st != DPZO_OK ? st : cu_fail(ctx, "copy to host", dpzo__cu_copy(dst, src_dev, bytes, 0));
}

dpzo_status dpzo_cuda_synchronize(dpzo_ctx *ctx)
{
    dpzo_status st = need_device(ctx, "synchronize");
    return st != DPZO_OK ? st : cu_fail(ctx, "synchronize", dpzo__cu_sync());
}

/* ---- directions ------------------------------------------------------------------------ */

/* The checks of a direction handed to a kernel. */
static dpzo_status check_dir(dpzo_ctx *ctx, const dpzo_dir *dir, const char *what)
{
    if (dir == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: dir is NULL", what);
    if (dir->vec == NULL && ((unsigned)dir->kind > DPZO_DIR_RADEMACHER || dir->dim == 0 ||
                             (dir->step >> 32) != 0))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: the direction is not set up", what);
    if (dir->vec != NULL && dir->dim == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: explicit direction of dim 0", what);
    return need_device(ctx, what);
}

dpzo_status dpzo_cuda_dir_sumsq(dpzo_ctx *ctx, const dpzo_dir *dir, double *sumsq)
{
    dpzo_status st = check_dir(ctx, dir, "sum of squares");
    if (st != DPZO_OK)
        return st;
    if (dir->vec != NULL || dir->kind == DPZO_DIR_RADEMACHER || sumsq == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "cuda: sum of squares: needs a gaussian or sphere stream and an "
                          "output");
    return cu_fail(ctx, "sum of squares", dpzo__cu_sumsq(dir, sumsq));
}

dpzo_status dpzo_cuda_dir_init(dpzo_ctx *ctx, dpzo_dir *dir, dpzo_dir_kind kind, uint64_t seed,
                               uint64_t step, uint32_t query, uint64_t dim, double radius)
{
    /* the CPU's checks and failures: a GAUSSIAN-kind call never sums anything, so it is
     * dpzo_dir_init itself; SPHERE is set up as GAUSSIAN first (the same checks), then
     * the norm comes from the device */
    if (kind != DPZO_DIR_SPHERE)
        return dpzo_dir_init(ctx, dir, kind, seed, step, query, dim, radius);
    dpzo_dir d;
    dpzo_status st = dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, seed, step, query, dim, 1.0);
    if (st != DPZO_OK)
        return st;
    if (!(radius > 0.0 && isfinite(radius)))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sphere direction radius must be > 0 and finite, got %g", radius);
    d.kind = DPZO_DIR_SPHERE;
    double total;
    st = dpzo_cuda_dir_sumsq(ctx, &d, &total);
    if (st == DPZO_OK)
        st = dpzo__sphere_scale(ctx, &d, total, radius, 0, &d.scale);
    if (st != DPZO_OK)
        return st;
    *dir = d;
    return DPZO_OK;
}

dpzo_status dpzo_cuda_dir_set_mult(dpzo_ctx *ctx, dpzo_dir *dir, const float *mult_dev,
                                   double radius)
{
    dpzo_status st = dpzo__mult_check(ctx, dir, mult_dev, radius);
    if (st != DPZO_OK)
        return st;
    if (dir->kind == DPZO_DIR_SPHERE) {
        dpzo_dir raw = *dir;
        raw.scale = 1.0;
        raw.mult = mult_dev;
        double total;
        st = dpzo_cuda_dir_sumsq(ctx, &raw, &total);
        if (st == DPZO_OK)
            st = dpzo__sphere_scale(ctx, &raw, total, radius, 1, &dir->scale);
        if (st != DPZO_OK)
            return st;
    }
    dir->mult = mult_dev;
    return DPZO_OK;
}

/* k >= 1 valid directions, their coefficients when needed (need_alpha) and a range
 * [j0, j0 + n) that does not overflow. */
static dpzo_status check_dirs(dpzo_ctx *ctx, const dpzo_dir *dirs, unsigned k, int need_alpha,
                              const double *alpha, uint64_t j0, size_t n, const char *what)
{
    if (dirs == NULL || k == 0 || (need_alpha && alpha == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: no direction", what);
    for (unsigned d = 0; d < k; d++) {
        dpzo_status st = check_dir(ctx, &dirs[d], what);
        if (st != DPZO_OK)
            return st;
    }
    if (n > 0 && j0 > UINT64_MAX - n)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: j0 + n overflows", what);
    return DPZO_OK;
}

/* The launcher's k <= DPZO_CU_MAX_DIRS directions at a time: each pass applies its
 * directions in order, so the passes in order give the same bits as one pass. */
static dpzo_status apply(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha, unsigned k,
                         int axpy, uint64_t j0, size_t n, float *out, const char *what)
{
    if (out == NULL && n > 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: output is NULL", what);
    dpzo_status st = check_dirs(ctx, dirs, k, axpy, alpha, j0, n, what);
    if (st != DPZO_OK || n == 0)
        return st;
    for (unsigned d0 = 0; d0 < k; d0 += DPZO_CU_MAX_DIRS) {
        unsigned kk = k - d0 < DPZO_CU_MAX_DIRS ? k - d0 : DPZO_CU_MAX_DIRS;
        dpzo_status st = cu_fail(ctx, what,
                                 dpzo__cu_apply(dirs + d0, axpy ? alpha + d0 : NULL, kk,
                                                axpy, j0, n, out));
        if (st != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

dpzo_status dpzo_cuda_dir_fill(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                               float *out_dev)
{
    return apply(ctx, dir, NULL, 1, 0, j0, n, out_dev, "fill");
}

dpzo_status dpzo_cuda_dir_axpy(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                               double alpha, float *theta_dev)
{
    return apply(ctx, dir, &alpha, 1, 1, j0, n, theta_dev, "axpy");
}

dpzo_status dpzo_cuda_dir_axpy_multi(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha,
                                     unsigned k, uint64_t j0, size_t n, float *theta_dev)
{
    return apply(ctx, dirs, alpha, k, 1, j0, n, theta_dev, "axpy");
}

/* The typed kernels: the argument checks, then one launch on the caller's stream (x = out
 * for the in-place update). */
static dpzo_status typed(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha, unsigned k,
                         uint64_t j0, size_t n, dpzo_dtype dt, const void *x, void *out,
                         void *stream, const char *what)
{
    if (dpzo_dtype_size(dt) == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: unknown element type %d", what, (int)dt);
    if (n > 0 && (x == NULL || out == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: %s: NULL array", what);
    dpzo_status st = check_dirs(ctx, dirs, k, 1, alpha, j0, n, what);
    if (st != DPZO_OK || n == 0)
        return st;
    return cu_fail(ctx, what, dpzo__cu_typed(dirs, alpha, k, (int)dt, j0, n, x, out, stream));
}

dpzo_status dpzo_cuda_dir_perturb(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                                  double alpha, dpzo_dtype dt, const void *x_dev,
                                  void *out_dev, void *stream)
{
    return typed(ctx, dir, &alpha, 1, j0, n, dt, x_dev, out_dev, stream, "perturb");
}

dpzo_status dpzo_cuda_dir_update(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha,
                                 unsigned k, uint64_t j0, size_t n, dpzo_dtype dt,
                                 void *theta_dev, void *stream)
{
    return typed(ctx, dirs, alpha, k, j0, n, dt, theta_dev, theta_dev, stream, "update");
}

/* ---- clipping ---------------------------------------------------------------------------- */

dpzo_status dpzo_cuda_clip_sum(dpzo_ctx *ctx, double *diff_dev, size_t b, unsigned Q,
                               dpzo_cuda_clip_mode mode, double clip, double *qsum_dev,
                               double *factor_dev)
{
    if ((unsigned)mode > DPZO_CUDA_CLIP_L1)
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: clip-sum: unknown mode %d", (int)mode);
    if (mode != DPZO_CUDA_CLIP_NONE && !(clip > 0.0 && isfinite(clip)))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: clip-sum: clip must be > 0 and finite, got %g",
                          clip);
    if (Q == 0 || qsum_dev == NULL || (b > 0 && diff_dev == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: clip-sum: Q = 0 or a NULL array");
    if (b > SIZE_MAX / Q / sizeof(double))
        return dpzo__fail(ctx, DPZO_EINVAL, "cuda: clip-sum: b * Q overflows");
    dpzo_status st = need_device(ctx, "clip-sum");
    if (st != DPZO_OK)
        return st;
    return cu_fail(ctx, "clip-sum",
                   dpzo__cu_clip_sum(diff_dev, b, Q, (int)mode, clip, qsum_dev, factor_dev));
}
