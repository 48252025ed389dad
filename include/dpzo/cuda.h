/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/cuda.h: the CUDA backend's host API (C-callable; kernels/cuda, docs/cuda.md).
 *
 * Every kernel reproduces the CPU reference of the same name BIT FOR BIT, whatever the
 * launch geometry: each output element is a function of its index alone (grid-stride
 * loops; the generator's cores are the same source, kernels/zo_core.h, compiled without
 * FMA contraction), and every reduction has a fixed order (documented per function).
 *
 *   dpzo_cuda_dir_fill / _axpy / _axpy_multi    = dpzo_dir_fill / dpzo_dir_axpy (one or
 *                                                 several in sequence, in one pass)
 *   dpzo_cuda_dir_init / _set_mult (SPHERE norm) = dpzo_dir_init / dpzo_dir_set_mult
 *   dpzo_cuda_clip_sum                          = trainer/zo_step.c's per-example clip
 *                                                 (dpzo_privacy_clip) and sum per query
 *
 * Memory: the float / double arrays passed to these functions are DEVICE pointers (from
 * dpzo_cuda_malloc or cudaMalloc), including a direction's mult and vec (a dpzo_dir given
 * to a dpzo_cuda_* function must have its mult and vec, when not NULL, in device memory;
 * such a direction must not be given to the CPU functions, and the reverse).
 *
 * Work is queued on the legacy default stream and runs asynchronously, except where a
 * function returns a value computed on the device (dpzo_cuda_dir_init and _set_mult for
 * SPHERE, dpzo_cuda_dir_sumsq), which waits for it. Errors: a dpzo_status, with the CUDA
 * error named in the context's message; a device error is reported as
 * DPZO_EUNSUPPORTED (no device, no driver, a build without CUDA, a launch failure).
 *
 * Built without CUDA (no nvcc, -DDPZO_CUDA=OFF), the library is a stub:
 * dpzo_cuda_available() is 0 and every other function fails with DPZO_EUNSUPPORTED. */
#ifndef DPZO_CUDA_H
#define DPZO_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/status.h"
#include "dpzo/zo_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build has CUDA and a device runs its kernels (the first call probes the
 * device with a trivial kernel), else 0; never aborts, whether there is no driver, no
 * device, or no kernel image for the device. Cached after the first call. */
int dpzo_cuda_available(void);
/* Why dpzo_cuda_available() is 0 ("" when it is 1), a static string. */
const char *dpzo_cuda_unavailable_reason(void);
/* The device's name and compute capability; DPZO_EUNSUPPORTED when none is available. */
dpzo_status dpzo_cuda_device_info(dpzo_ctx *ctx, char *name, size_t name_len, int *cc_major,
                                  int *cc_minor, int *sm_count);

/* Launch geometry for the kernels (tests: results must not depend on it): blocks and
 * threads per block, 0 for the default (256 threads, enough blocks to fill the device).
 * threads must be a multiple of 32 in [32, 1024]; DPZO_EINVAL otherwise. Process-wide. */
dpzo_status dpzo_cuda_set_launch(dpzo_ctx *ctx, unsigned blocks, unsigned threads);

/* Device memory (plain cudaMalloc; never managed memory). */
dpzo_status dpzo_cuda_malloc(dpzo_ctx *ctx, void **ptr, size_t bytes);
void dpzo_cuda_free(void *ptr);
dpzo_status dpzo_cuda_to_device(dpzo_ctx *ctx, void *dst_dev, const void *src, size_t bytes);
dpzo_status dpzo_cuda_to_host(dpzo_ctx *ctx, void *dst, const void *src_dev, size_t bytes);
dpzo_status dpzo_cuda_synchronize(dpzo_ctx *ctx);

/* dpzo_dir_init with the SPHERE norm computed on the device (the same blocked order:
 * blocks of 4096 elements, each summed left to right from +0.0 in double, then the block
 * sums left to right; one device thread per sum), so dir->scale is bit-identical to the
 * CPU's. The same argument checks and failures as dpzo_dir_init. */
dpzo_status dpzo_cuda_dir_init(dpzo_ctx *ctx, dpzo_dir *dir, dpzo_dir_kind kind, uint64_t seed,
                               uint64_t step, uint32_t query, uint64_t dim, double radius);
/* dpzo_dir_set_mult with mult_dev (dim floats) in device memory; the SPHERE scale is
 * computed on the device as above, bit-identical to the CPU's. The caller guarantees
 * mult_dev's values are finite and >= 0 (they are not checked on the device). */
dpzo_status dpzo_cuda_dir_set_mult(dpzo_ctx *ctx, dpzo_dir *dir, const float *mult_dev,
                                   double radius);
/* The sum of squares behind the SPHERE scale: over j < dir->dim, x_j = z_j (raw draw,
 * before scale; GAUSSIAN and SPHERE streams) or z_j * (double)mult[j] when dir->mult is
 * set, summed in the blocked order above. */
dpzo_status dpzo_cuda_dir_sumsq(dpzo_ctx *ctx, const dpzo_dir *dir, double *sumsq);

/* out_dev[i] = element j0 + i of dir, as dpzo_dir_fill (NaN past dir->dim). */
dpzo_status dpzo_cuda_dir_fill(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                               float *out_dev);
/* theta_dev[i] += alpha u_{j0+i}, as dpzo_dir_axpy:
 * theta = (float)((double)theta + alpha * (double)u), u the float element. */
dpzo_status dpzo_cuda_dir_axpy(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                               double alpha, float *theta_dev);
/* k axpys in one pass over theta: the same bits as dpzo_dir_axpy(dirs[0], alpha[0]), then
 * dirs[1], ... in this order (each intermediate rounded to float). For the fused
 * restore + update + next perturbation, and the Q-query update. k >= 1; dirs and alpha
 * are host arrays. */
dpzo_status dpzo_cuda_dir_axpy_multi(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha,
                                     unsigned k, uint64_t j0, size_t n, float *theta_dev);

/* The typed kernels of dpzo/zo_dir.h on the device, queued on `stream` (a cudaStream_t;
 * NULL: the legacy default stream), so they order with the caller's work on that stream
 * (the PyTorch plugin passes torch.cuda.current_stream().cuda_stream). The same bits as
 * dpzo_dir_perturb / dpzo_dir_update on the CPU, whatever the launch geometry. x_dev,
 * out_dev and theta_dev are device pointers; dirs and alpha host arrays (k >= 1). */
dpzo_status dpzo_cuda_dir_perturb(dpzo_ctx *ctx, const dpzo_dir *dir, uint64_t j0, size_t n,
                                  double alpha, dpzo_dtype dt, const void *x_dev,
                                  void *out_dev, void *stream);
dpzo_status dpzo_cuda_dir_update(dpzo_ctx *ctx, const dpzo_dir *dirs, const double *alpha,
                                 unsigned k, uint64_t j0, size_t n, dpzo_dtype dt,
                                 void *theta_dev, void *stream);

/* The clipping of the step object's release (trainer/zo_step.c), on the device. */
typedef enum {
    DPZO_CUDA_CLIP_NONE = 0, /* no clipping, no zeroing (mezo) */
    DPZO_CUDA_CLIP_L2 = 1,   /* gaussian profiles */
    DPZO_CUDA_CLIP_L1 = 2    /* lmo profiles */
} dpzo_cuda_clip_mode;
/* diff_dev: b rows of Q doubles (row i = example i's differences), clipped IN PLACE as
 * the step object does: a row with a non-finite entry becomes zero; s = sum over the row,
 * left to right from +0.0, of v^2 (L2) or |v| (L1); a non-finite s zeroes the row; with
 * norm = sqrt(s) (L2) or s (L1), f = norm > clip ? clip / norm : 1, and when f < 1 the row
 * is multiplied by f (1 - 1e-12). Then qsum_dev[k] = sum over rows i = 0, 1, ..., b - 1 of
 * row i's entry k, from +0.0 in this order; factor_dev (NULL or b doubles) receives each
 * row's f (0 for a zeroed row). The same bits as the CPU. clip > 0 and finite for the
 * clipping modes. b = 0 gives qsum = 0. */
dpzo_status dpzo_cuda_clip_sum(dpzo_ctx *ctx, double *diff_dev, size_t b, unsigned Q,
                               dpzo_cuda_clip_mode mode, double clip, double *qsum_dev,
                               double *factor_dev);

#ifdef __cplusplus
}
#endif
#endif
