/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/zo_cuda.h: the launchers behind dpzo/cuda.h (private). kernels/cuda/api.c
 * checks the arguments and turns errors into dpzo_status; the launchers (zo_cuda.cu, or
 * stub.c in a build without CUDA) only run kernels. Each returns NULL on success or a
 * static message (cudaGetErrorString's, or the stub's). Device pointers throughout. */
#ifndef DPZO_KERNELS_ZO_CUDA_H
#define DPZO_KERNELS_ZO_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/cuda.h"
#include "dpzo/zo_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The elements of a Philox block never straddle two of these (zo_dir.c's SPHERE_BLOCK). */
#define DPZO_CU_SPHERE_BLOCK 4096
/* Directions one axpy pass applies (more are applied in several passes: same bits). */
#define DPZO_CU_MAX_DIRS 8

/* *ok = 1 when a device runs a probe kernel; else 0 and the reason is returned. */
const char *dpzo__cu_probe(int *ok);
const char *dpzo__cu_device_info(char *name, size_t name_len, int *major, int *minor,
                                 int *sms);
void dpzo__cu_set_launch(unsigned blocks, unsigned threads);
const char *dpzo__cu_malloc(void **p, size_t bytes);
void dpzo__cu_free(void *p);
const char *dpzo__cu_copy(void *dst, const void *src, size_t bytes, int to_device);
const char *dpzo__cu_sync(void);
/* out[i] for i < n, element j = j0 + i: axpy = 0: u_j of dirs[0] (k = 1); axpy = 1:
 * t = out[i], then t = (float)((double)t + alpha[d] * (double)u_j(dirs[d])) for d < k in
 * order (NaN when j >= dirs[d].dim), out[i] = t. k <= DPZO_CU_MAX_DIRS. */
const char *dpzo__cu_apply(const dpzo_dir *dirs, const double *alpha, unsigned k, int axpy,
                           uint64_t j0, size_t n, float *out);
/* The typed kernels (dpzo_cuda_dir_perturb / _update), queued on `stream` (a cudaStream_t,
 * NULL: the legacy default stream): for i < n, element j = j0 + i, v = (float)x[i] of type
 * dt (dpzo_dtype), then v = (float)((double)v + alpha[d] * (double)u_j(dirs[d])) for d < k
 * in order, out[i] = T(v) rounded as kernels/zo_dtype.h; out[i] = T(NaN) when j is past
 * any direction's dim. x may equal out (the in-place update). Any k >= 1: more than
 * DPZO_CU_MAX_DIRS directions go to the device in a stream-ordered allocation. */
const char *dpzo__cu_typed(const dpzo_dir *dirs, const double *alpha, unsigned k, int dt,
                           uint64_t j0, size_t n, const void *x, void *out, void *stream);
/* The blocked sum of squares of dir's raw draws (times mult when set). */
const char *dpzo__cu_sumsq(const dpzo_dir *dir, double *total);
const char *dpzo__cu_clip_sum(double *diff, size_t b, unsigned Q, int mode, double clip,
                              double *qsum, double *factor);

#ifdef __cplusplus
}
#endif
#endif
