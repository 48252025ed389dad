/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/zo_dir.h: zeroth-order directions regenerated from a few integers.
 *
 * A direction u in R^d is never stored. Element j (the GLOBAL parameter index, independent
 * of how parameters are split into tensors) is a pure function of (seed, step, query, j):
 * Philox4x32-10 (Salmon et al., SC'11; Random123) keyed by the 64-bit seed, with the 128-bit
 * counter (j / 4 as 64 bits, step as 32 bits, query) (the exact packing is documented in
 * kernels/cpu/philox.c, section 2: elements 4m .. 4m + 3 share one Philox block, words
 * (w0, w1) giving the normal pair of 4m, 4m + 1 and (w2, w3) that of 4m + 2, 4m + 3) and a
 * Box-Muller normal transform that uses only IEEE-754 basic operations (+ - * / sqrt, no
 * FMA contraction) and dpzo's own polynomial log/sin/cos, so the CUDA kernels can
 * reproduce it bit-exactly.
 *
 *   GAUSSIAN:   u_j ~ N(0, 1) i.i.d.
 *   SPHERE:     u = radius * z / ||z||, z Gaussian as above; ||z||^2 is summed in a fixed
 *               blocked order (documented) so it is reproducible. radius: sqrt(d), d^(1/4), ...
 *   RADEMACHER: u_j = +-1 with probability 1/2 each. */
#ifndef DPZO_ZO_DIR_H
#define DPZO_ZO_DIR_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DPZO_DIR_GAUSSIAN = 0, DPZO_DIR_SPHERE = 1, DPZO_DIR_RADEMACHER = 2 } dpzo_dir_kind;

typedef struct {
    dpzo_dir_kind kind;
    uint64_t seed;
    uint64_t step;
    uint32_t query;
    uint64_t dim;  /* d: the number of parameters */
    double scale;  /* factor applied to the raw draw: 1 (GAUSSIAN, RADEMACHER) or
                      radius / ||z|| (SPHERE, computed by dpzo_dir_init) */
    const float *mult; /* NULL, or dim per-coordinate multipliers m_j (a mask, 0 freezes j):
                          element j is the float product (float)(scale z_j) * m_j, z_j keyed
                          by the global index j as without it (dpzo_dir_set_mult) */
    const float *vec;  /* NULL, or an explicit direction: element j is vec[j] (kind, seed,
                          scale and mult are then unused; dpzo_dir_init_vector) */
} dpzo_dir;

/* Sets up the direction (for SPHERE computes ||z|| over all dim elements: one pass, the cost
 * of a dpzo_dir_fill of dim elements). radius is used by SPHERE only (> 0, finite). Fails
 * with DPZO_EINVAL (dir untouched) on an unknown kind, dim = 0, step >= 2^32 (the counter
 * holds 32 bits of it) or a bad SPHERE radius. */
dpzo_status dpzo_dir_init(dpzo_ctx *ctx, dpzo_dir *dir, dpzo_dir_kind kind, uint64_t seed,
                          uint64_t step, uint32_t query, uint64_t dim, double radius);
/* Makes dir (set up by dpzo_dir_init) a masked direction: element j becomes
 * (float)(scale z_j) * mult[j] (mult: dim floats, finite, >= 0, outliving dir). For SPHERE
 * the radius then applies to the masked vector: scale = radius / ||mult (.) z||, the squares
 * summed in the order of dpzo_dir_init (blocks, each left to right, then the block sums);
 * DPZO_EINVAL when that norm is 0 (an all-zero mask). */
dpzo_status dpzo_dir_set_mult(dpzo_ctx *ctx, dpzo_dir *dir, const float *mult, double radius);
/* An explicit direction: element j is vec[j] (dim floats, outliving dir); DPZO_EINVAL on
 * NULL or dim = 0. For directions that are not a function of a few integers (PAZO-P's G u,
 * PAZO-S's candidate steps). */
dpzo_status dpzo_dir_init_vector(dpzo_ctx *ctx, dpzo_dir *dir, const float *vec, uint64_t dim);
/* Element j (j < dim) of the direction; NaN when j >= dim. */
double dpzo_dir_at(const dpzo_dir *dir, uint64_t j);
/* out[i] = element j0 + i as float, i.e. (float)(scale * z_j), i < n (j0 + n <= dim; elements
 * past dim are written as NaN); one Philox block per four elements (plus a partial block
 * at an unaligned start or end), and the same floats however [j0, j0 + n) is split into
 * calls. */
void dpzo_dir_fill(const dpzo_dir *dir, uint64_t j0, size_t n, float *out);
/* theta[i] += alpha * u_{j0+i} (the fused update), i < n; computed as
 * theta[i] = (float)((double)theta[i] + alpha * (double)u) with u the float element (elements
 * past dim make theta[i] NaN). Applying +alpha then -alpha does NOT restore theta bit for
 * bit in general (the intermediate is rounded to float); the result is within one float ulp
 * of the larger of the intermediate and the result (tests/test_zo_dir.c measures it). */
void dpzo_dir_axpy(const dpzo_dir *dir, uint64_t j0, size_t n, double alpha, float *theta);
/* ---- parameters of other floating-point types (the PyTorch plugin, docs/plugin.md) ------
 * The element types of tensors the kernels read and write in place or out of place. bf16
 * and f16 values are read exactly (every one is a float); a result is computed in float as
 * for DPZO_F32 and then rounded to the type, to nearest with ties to even (overflow gives
 * an infinity of the right sign, a NaN stays a NaN). */
typedef enum { DPZO_F32 = 0, DPZO_BF16 = 1, DPZO_F16 = 2 } dpzo_dtype;
/* Bytes per element (4, 2, 2) and the name ("float32", "bfloat16", "float16"); 0 and NULL
 * for an unknown type. */
size_t dpzo_dtype_size(dpzo_dtype dt);
const char *dpzo_dtype_name(dpzo_dtype dt);
/* Out of place: out[i] = T((float)((double)(float)x[i] + alpha * (double)u_{j0+i})), i < n,
 * x and out of type dt (distinct, not overlapping). x is never written: evaluating at
 * theta + lambda u and theta - lambda u leaves theta bit-identical, in every type (the
 * perturbation MeZO applies in place cannot be undone in bf16/f16: MeZO#42). For DPZO_F32
 * these are the bits dpzo_dir_axpy writes into a copy of x, and the weights dpzo's own
 * models read under a perturbation (dpzo/model.h). */
void dpzo_dir_perturb(const dpzo_dir *dir, uint64_t j0, size_t n, double alpha, dpzo_dtype dt,
                      const void *x, void *out);
/* In place, k >= 1 directions in one pass: v = (float)theta[i]; for m = 0 .. k-1:
 * v = (float)((double)v + alpha[m] * (double)u^m_{j0+i}); theta[i] = T(v). For DPZO_F32 the
 * same bits as dpzo_dir_axpy(dirs[0], alpha[0]), then dirs[1], ... (the trainer's update). */
void dpzo_dir_update(const dpzo_dir *dirs, const double *alpha, unsigned k, uint64_t j0,
                     size_t n, dpzo_dtype dt, void *theta);

/* The name ("gaussian", "sphere", "rademacher") and its inverse (-1 when unknown). */
const char *dpzo_dir_kind_name(dpzo_dir_kind kind);
int dpzo_dir_kind_parse(const char *name);

/* Raw generator (exposed for tests and for the CUDA port). */
typedef struct {
    uint32_t v[4];
} dpzo_philox_ctr;
/* Philox4x32-10: out = bijection of ctr under key (k0, k1). */
dpzo_philox_ctr dpzo_philox4x32_10(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1);
/* The exactly specified standard normal pair from two uniform 32-bit words. */
void dpzo_normal_pair(uint32_t a, uint32_t b, double *z0, double *z1);

#ifdef __cplusplus
}
#endif
#endif
