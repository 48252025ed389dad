/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cpu/zo_dir.c: directions regenerated from (seed, step, query, j). The stream,
 * the counter packing and the SPHERE norm's summation order are specified in
 * kernels/cpu/philox.c (section 2); this file implements them. Elements at j >= dim are
 * NaN (a caller's range bug shows up loudly instead of silently reading another stream). */
#if defined(__clang__) || !defined(__GNUC__)
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <string.h>
#include "dpzo/zo_dir.h"
#include "internal.h"
#include "zo_math.h"
#include "../dir_check.h"
#include "../zo_dtype.h"

#define SPHERE_BLOCK 4096 /* the norm's summation block (a multiple of 4: a Philox block
                          * never straddles two) */
#define SPHERE_GROUP 4    /* blocks whose sums dpzo_dir_init computes side by side */
_Static_assert(SPHERE_GROUP == 4, "group_sumsq keeps SPHERE_GROUP = 4 named accumulators");

static const char *const kind_names[] = {"gaussian", "sphere", "rademacher"};

const char *dpzo_dir_kind_name(dpzo_dir_kind kind)
{
    return (unsigned)kind < 3 ? kind_names[kind] : "?";
}

int dpzo_dir_kind_parse(const char *name)
{
    if (name == NULL)
        return -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

/* The Philox block of elements 4m .. 4m + 3 (m = j >> 2; the counter is
 * ((uint32)m, (uint32)(m >> 32), step, query) = ((uint32)(j >> 2), (uint32)(j >> 34), ...)). */
static inline dpzo_philox_ctr block_words(const dpzo_dir *dir, uint64_t m)
{
    dpzo_philox_ctr ctr = {{(uint32_t)m, (uint32_t)(m >> 32), (uint32_t)dir->step, dir->query}};
    return dpzo_philox4x32_10(ctr, (uint32_t)dir->seed, (uint32_t)(dir->seed >> 32));
}

/* The sum of the squared raw values of elements [j0, j0 + n), left to right from +0.0. */
static double block_sumsq(const dpzo_dir *d, uint64_t j0, uint64_t n)
{
    double sum = 0.0, v[4 * DPZO_RAW_CHUNK];
    for (uint64_t j = j0; j < j0 + n; j += 4 * DPZO_RAW_CHUNK) {
        uint64_t left = j0 + n - j;
        size_t ne = left < 4 * DPZO_RAW_CHUNK ? (size_t)left : 4 * DPZO_RAW_CHUNK;
        dpzo__dir_raw_blocks(d, j >> 2, (ne + 3) / 4, v);
        for (size_t k = 0; k < ne; k++)
            sum += v[k] * v[k];
    }
    return sum;
}

/* block_sumsq of the SPHERE_GROUP full blocks starting at j0 (a multiple of SPHERE_BLOCK),
 * side by side: each block's sum is its own chain of additions, in its own left-to-right
 * order, so the chains overlap instead of each costing an addition's latency per
 * element. */
static void group_sumsq(const dpzo_dir *d, uint64_t j0, double sum[SPHERE_GROUP])
{
    double v[SPHERE_GROUP][4 * DPZO_RAW_CHUNK];
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (uint64_t c = 0; c < SPHERE_BLOCK; c += 4 * DPZO_RAW_CHUNK) {
        for (int g = 0; g < SPHERE_GROUP; g++)
            dpzo__dir_raw_blocks(d, (j0 + (uint64_t)g * SPHERE_BLOCK + c) >> 2, DPZO_RAW_CHUNK,
                                 v[g]);
        for (size_t k = 0; k < 4 * DPZO_RAW_CHUNK; k++) {
            s0 += v[0][k] * v[0][k];
            s1 += v[1][k] * v[1][k];
            s2 += v[2][k] * v[2][k];
            s3 += v[3][k] * v[3][k];
        }
    }
    sum[0] = s0;
    sum[1] = s1;
    sum[2] = s2;
    sum[3] = s3;
}

dpzo_status dpzo_dir_init(dpzo_ctx *ctx, dpzo_dir *dir, dpzo_dir_kind kind, uint64_t seed,
                          uint64_t step, uint32_t query, uint64_t dim, double radius)
{
    if (dir == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "direction: dir is NULL");
    if ((unsigned)kind > DPZO_DIR_RADEMACHER)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "direction kind must be gaussian, sphere or rademacher, got %d",
                          (int)kind);
    if (dim == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "direction dim must be > 0");
    if (step >> 32)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "direction step must be < 2^32 (it fills one 32-bit counter word), "
                          "got %llu",
                          (unsigned long long)step);
    if (kind == DPZO_DIR_SPHERE && !(radius > 0.0 && isfinite(radius)))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sphere direction radius must be > 0 and finite, got %g", radius);
    dpzo_dir d = {.kind = kind, .seed = seed, .step = step, .query = query, .dim = dim,
                  .scale = 1.0};
    if (kind == DPZO_DIR_SPHERE) {
        /* sum of squares in the documented order: blocks of SPHERE_BLOCK elements, each
         * left to right, then the block sums left to right */
        double total = 0.0;
        uint64_t j0 = 0;
        for (; dim - j0 >= SPHERE_GROUP * SPHERE_BLOCK; j0 += SPHERE_GROUP * SPHERE_BLOCK) {
            double block[SPHERE_GROUP];
            group_sumsq(&d, j0, block);
            for (int g = 0; g < SPHERE_GROUP; g++)
                total += block[g];
        }
        for (; j0 < dim; j0 += SPHERE_BLOCK)
            total += block_sumsq(&d, j0, dim - j0 < SPHERE_BLOCK ? dim - j0 : SPHERE_BLOCK);
        dpzo_status st = dpzo__sphere_scale(ctx, &d, total, radius, 0, &d.scale);
        if (st != DPZO_OK)
            return st;
    }
    *dir = d;
    return DPZO_OK;
}

dpzo_status dpzo__sphere_scale(dpzo_ctx *ctx, const dpzo_dir *d, double total, double radius,
                               int masked, double *scale)
{
    if (!(total > 0.0 && isfinite(total))) {
        if (masked)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "masked sphere direction: the masked draw has norm^2 %g", total);
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sphere direction: the Gaussian draw has norm^2 %g (seed %llu, "
                          "step %llu, query %u, dim %llu); use another seed",
                          total, (unsigned long long)d->seed, (unsigned long long)d->step,
                          (unsigned)d->query, (unsigned long long)d->dim);
    }
    *scale = radius / sqrt(total);
    return DPZO_OK;
}

dpzo_status dpzo__mult_check(dpzo_ctx *ctx, const dpzo_dir *dir, const void *mult, double radius)
{
    if (dir == NULL || mult == NULL || dir->vec != NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "masked direction: NULL direction or multipliers");
    if (dir->kind == DPZO_DIR_SPHERE && !(radius > 0.0 && isfinite(radius)))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sphere direction radius must be > 0 and finite, got %g", radius);
    return DPZO_OK;
}

dpzo_status dpzo_dir_set_mult(dpzo_ctx *ctx, dpzo_dir *dir, const float *mult, double radius)
{
    dpzo_status st = dpzo__mult_check(ctx, dir, mult, radius);
    if (st != DPZO_OK)
        return st;
    if (dir->kind == DPZO_DIR_SPHERE) {
        dpzo_dir raw = *dir;
        raw.scale = 1.0;
        raw.mult = NULL;
        double total = 0.0, v[4 * DPZO_RAW_CHUNK];
        for (uint64_t b0 = 0; b0 < dir->dim; b0 += SPHERE_BLOCK) {
            uint64_t bend = b0 + SPHERE_BLOCK < dir->dim ? b0 + SPHERE_BLOCK : dir->dim;
            double sum = 0.0;
            for (uint64_t j = b0; j < bend; j += 4 * DPZO_RAW_CHUNK) {
                size_t ne = bend - j < 4 * DPZO_RAW_CHUNK ? (size_t)(bend - j) : 4 * DPZO_RAW_CHUNK;
                dpzo__dir_raw_blocks(&raw, j >> 2, (ne + 3) / 4, v);
                for (size_t k = 0; k < ne; k++) {
                    double x = v[k] * (double)mult[j + k];
                    sum += x * x;
                }
            }
            total += sum;
        }
        if ((st = dpzo__sphere_scale(ctx, dir, total, radius, 1, &dir->scale)) != DPZO_OK)
            return st;
    }
    dir->mult = mult;
    return DPZO_OK;
}

dpzo_status dpzo_dir_init_vector(dpzo_ctx *ctx, dpzo_dir *dir, const float *vec, uint64_t dim)
{
    if (dir == NULL || vec == NULL || dim == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "explicit direction: NULL vector or dim 0");
    dpzo_dir d = {.kind = DPZO_DIR_GAUSSIAN, .dim = dim, .scale = 1.0, .vec = vec};
    *dir = d;
    return DPZO_OK;
}

double dpzo_dir_at(const dpzo_dir *dir, uint64_t j)
{
    if (j >= dir->dim)
        return NAN;
    if (dir->vec != NULL)
        return (double)dir->vec[j];
    if (dir->mult != NULL) {
        dpzo_dir raw = *dir;
        raw.mult = NULL;
        return (double)((float)dpzo_dir_at(&raw, j) * dir->mult[j]);
    }
    dpzo_philox_ctr w = block_words(dir, j >> 2);
    unsigned k = (unsigned)(j & 3);
    if (dir->kind == DPZO_DIR_RADEMACHER)
        return dir->scale * dpzo__sign_of(w.v[k]);
    double z[2];
    dpzo_normal_pair(w.v[k & 2], w.v[(k & 2) + 1], &z[0], &z[1]);
    return dir->scale * z[k & 1];
}

/* The number of valid elements in [j0, j0 + n). */
static size_t valid_count(const dpzo_dir *dir, uint64_t j0, size_t n)
{
    if (j0 >= dir->dim)
        return 0;
    uint64_t left = dir->dim - j0;
    return (uint64_t)n < left ? n : (size_t)left;
}

/* out[i] = f(out[i], u_{j0+i}) for the valid i < nv, u the float element: the raw values
 * of a chunk of Philox blocks (dpzo__dir_raw_blocks; partial blocks at an unaligned start
 * or end), then the chunk's elements in one vectorised loop. AXPY selects
 * theta += alpha * u, else out = u. */
DPZO_KERNEL_CLONES static void apply(const dpzo_dir *dir, uint64_t j0, size_t nv, int axpy,
                                     double alpha, float *restrict out)
{
    const double scale = dir->scale;
    double v[4 * DPZO_RAW_CHUNK];
    size_t i = 0;
    while (i < nv) {
        uint64_t j = j0 + i, m = j >> 2;
        size_t skip = (size_t)(j & 3); /* elements of the first block before j */
        size_t ne = 4 * DPZO_RAW_CHUNK - skip;
        ne = ne < nv - i ? ne : nv - i;
        dpzo__dir_raw_blocks(dir, m, (skip + ne + 3) / 4, v);
        const double *restrict x = v + skip;
        float *restrict o = out + i;
        if (axpy) {
            for (size_t k = 0; k < ne; k++)
                o[k] = (float)((double)o[k] + alpha * (double)(float)(scale * x[k]));
        } else {
            for (size_t k = 0; k < ne; k++)
                o[k] = (float)(scale * x[k]);
        }
        i += ne;
    }
}

/* apply() for masked and explicit directions: u_j from the explicit vector, or the plain
 * direction's float element times mult[j] (produced in chunks into a buffer). */
static void apply_special(const dpzo_dir *dir, uint64_t j0, size_t nv, int axpy, double alpha,
                          float *restrict out)
{
    float buf[4 * DPZO_RAW_CHUNK];
    dpzo_dir raw = *dir;
    raw.mult = NULL;
    for (size_t i = 0; i < nv; i += 4 * DPZO_RAW_CHUNK) {
        size_t ne = nv - i < 4 * DPZO_RAW_CHUNK ? nv - i : 4 * DPZO_RAW_CHUNK;
        const float *u;
        if (dir->vec != NULL) {
            u = dir->vec + j0 + i;
        } else {
            apply(&raw, j0 + i, ne, 0, 0.0, buf);
            for (size_t k = 0; k < ne; k++)
                buf[k] *= dir->mult[j0 + i + k];
            u = buf;
        }
        if (axpy)
            for (size_t k = 0; k < ne; k++)
                out[i + k] = (float)((double)out[i + k] + alpha * (double)u[k]);
        else
            memcpy(out + i, u, ne * sizeof *u);
    }
}

void dpzo_dir_fill(const dpzo_dir *dir, uint64_t j0, size_t n, float *out)
{
    size_t nv = valid_count(dir, j0, n);
    if (dir->vec != NULL || dir->mult != NULL)
        apply_special(dir, j0, nv, 0, 0.0, out);
    else
        apply(dir, j0, nv, 0, 0.0, out);
    for (size_t i = nv; i < n; i++)
        out[i] = NAN;
}

void dpzo_dir_axpy(const dpzo_dir *dir, uint64_t j0, size_t n, double alpha, float *theta)
{
    size_t nv = valid_count(dir, j0, n);
    if (dir->vec != NULL || dir->mult != NULL)
        apply_special(dir, j0, nv, 1, alpha, theta);
    else
        apply(dir, j0, nv, 1, alpha, theta);
    for (size_t i = nv; i < n; i++)
        theta[i] = NAN;
}

/* ---- parameters of other floating-point types ------------------------------------------- */

size_t dpzo_dtype_size(dpzo_dtype dt)
{
    switch (dt) {
    case DPZO_F32:
        return 4;
    case DPZO_BF16:
    case DPZO_F16:
        return 2;
    }
    return 0;
}

const char *dpzo_dtype_name(dpzo_dtype dt)
{
    switch (dt) {
    case DPZO_F32:
        return "float32";
    case DPZO_BF16:
        return "bfloat16";
    case DPZO_F16:
        return "float16";
    }
    return NULL;
}

/* The typed kernels work a chunk of at most TCHUNK elements at a time (the chunk of the
 * batched generator, so a chunk starting at an aligned j takes DPZO_RAW_CHUNK Philox
 * blocks): the chunk's values as floats in v[], each direction's float elements in u[]
 * (dpzo_dir_fill of the chunk, all of it below dim), each step a loop of its own over the
 * chunk (vectorised, in L1). */
#define TCHUNK (4 * DPZO_RAW_CHUNK)

/* v[k] = (float)(src[k]) for the type dt, k < ne (exact). */
DPZO_KERNEL_CLONES static void chunk_load(dpzo_dtype dt, const void *src, size_t ne,
                                          float *restrict v)
{
    if (dt == DPZO_F32) {
        memcpy(v, src, ne * sizeof *v);
    } else if (dt == DPZO_BF16) {
        const uint16_t *restrict s = src;
        for (size_t k = 0; k < ne; k++)
            v[k] = dpzo_hd_bf16_to_f32(s[k]);
    } else {
        const uint16_t *restrict s = src;
        for (size_t k = 0; k < ne; k++)
            v[k] = dpzo_hd_f16_to_f32(s[k]);
    }
}

/* dst[k] = T(v[k]), rounded to nearest even (zo_dtype.h), k < ne. */
DPZO_KERNEL_CLONES static void chunk_store(dpzo_dtype dt, const float *restrict v, size_t ne,
                                           void *dst)
{
    if (dt == DPZO_F32) {
        memcpy(dst, v, ne * sizeof *v);
    } else if (dt == DPZO_BF16) {
        uint16_t *restrict d = dst;
        for (size_t k = 0; k < ne; k++)
            d[k] = dpzo_hd_f32_to_bf16(v[k]);
    } else {
        uint16_t *restrict d = dst;
        for (size_t k = 0; k < ne; k++)
            d[k] = dpzo_hd_f32_to_f16(v[k]);
    }
}

/* v[k] = (float)((double)v[k] + alpha * (double)u[k]): dpzo_dir_axpy's operation. */
DPZO_KERNEL_CLONES static void chunk_axpy(size_t ne, double alpha, const float *restrict u,
                                          float *restrict v)
{
    for (size_t k = 0; k < ne; k++)
        v[k] = (float)((double)v[k] + alpha * (double)u[k]);
}

void dpzo__axpy_floats(size_t n, double alpha, const float *u, float *v)
{
    chunk_axpy(n, alpha, u, v);
}

/* out[k] = T((float)((double)x[k] + alpha * (double)u[k])), k < ne: chunk_load, chunk_axpy
 * and chunk_store fused into one loop per type. */
DPZO_KERNEL_CLONES static void chunk_perturb(dpzo_dtype dt, size_t ne, double alpha,
                                             const float *restrict u, const void *x, void *out)
{
    if (dt == DPZO_F32) {
        const float *restrict s = x;
        float *restrict d = out;
        for (size_t k = 0; k < ne; k++)
            d[k] = (float)((double)s[k] + alpha * (double)u[k]);
    } else if (dt == DPZO_BF16) {
        const uint16_t *restrict s = x;
        uint16_t *restrict d = out;
        for (size_t k = 0; k < ne; k++)
            d[k] = dpzo_hd_f32_to_bf16(
                (float)((double)dpzo_hd_bf16_to_f32(s[k]) + alpha * (double)u[k]));
    } else {
        const uint16_t *restrict s = x;
        uint16_t *restrict d = out;
        for (size_t k = 0; k < ne; k++)
            d[k] = dpzo_hd_f32_to_f16(
                (float)((double)dpzo_hd_f16_to_f32(s[k]) + alpha * (double)u[k]));
    }
}

/* Elements [from, n) of a typed array set to T(NaN) (past a direction's dim): the pattern
 * converted once, then copied. */
static void store_nan(dpzo_dtype dt, size_t from, size_t n, void *dst)
{
    const float nan_f = NAN;
    unsigned char pat[sizeof nan_f];
    chunk_store(dt, &nan_f, 1, pat);
    size_t es = dpzo_dtype_size(dt);
    for (size_t i = from; i < n; i++)
        memcpy((char *)dst + i * es, pat, es);
}

void dpzo_dir_perturb(const dpzo_dir *dir, uint64_t j0, size_t n, double alpha, dpzo_dtype dt,
                      const void *x, void *out)
{
    size_t es = dpzo_dtype_size(dt);
    if (es == 0 || n == 0)
        return;
    size_t nv = valid_count(dir, j0, n);
    float u[TCHUNK];
    for (size_t i = 0; i < nv;) {
        uint64_t j = j0 + i;
        size_t ne = TCHUNK - (size_t)(j & 3);
        ne = ne < nv - i ? ne : nv - i;
        dpzo_dir_fill(dir, j, ne, u);
        chunk_perturb(dt, ne, alpha, u, (const char *)x + i * es, (char *)out + i * es);
        i += ne;
    }
    store_nan(dt, nv, n, out);
}

void dpzo_dir_update(const dpzo_dir *dirs, const double *alpha, unsigned k, uint64_t j0,
                     size_t n, dpzo_dtype dt, void *theta)
{
    size_t es = dpzo_dtype_size(dt);
    if (es == 0 || n == 0 || k == 0)
        return;
    /* past any direction's dim an element is NaN (as in the sequence of dpzo_dir_axpy
     * calls, where the NaN then stays) */
    size_t nv = n;
    for (unsigned m = 0; m < k; m++) {
        size_t c = valid_count(&dirs[m], j0, n);
        nv = c < nv ? c : nv;
    }
    float v[TCHUNK], u[TCHUNK];
    for (size_t i = 0; i < nv;) {
        uint64_t j = j0 + i;
        size_t ne = TCHUNK - (size_t)(j & 3);
        ne = ne < nv - i ? ne : nv - i;
        char *t = (char *)theta + i * es;
        chunk_load(dt, t, ne, v);
        for (unsigned m = 0; m < k; m++) {
            dpzo_dir_fill(&dirs[m], j, ne, u);
            chunk_axpy(ne, alpha[m], u, v);
        }
        chunk_store(dt, v, ne, t);
        i += ne;
    }
    store_nan(dt, nv, n, theta);
}
