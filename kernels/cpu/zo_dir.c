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

#define SPHERE_BLOCK 4096 /* the norm's summation block (a multiple of 4: a Philox block
                          * never straddles two) */

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

/* +1 or -1 from the top bit of w, without a branch (the bit is random). */
static inline double sign_of(uint32_t w)
{
    uint64_t bits = 0x3ff0000000000000ull | ((uint64_t)(w >> 31) << 63);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* The raw values (before scale) of elements 4m .. 4m + 3: GAUSSIAN / SPHERE the normal
 * pairs of words (w0, w1) and (w2, w3); RADEMACHER the signs of w0 .. w3. */
static inline void raw_quad(const dpzo_dir *dir, uint64_t m, double v[4])
{
    dpzo_philox_ctr w = block_words(dir, m);
    if (dir->kind == DPZO_DIR_RADEMACHER) {
        for (int k = 0; k < 4; k++)
            v[k] = sign_of(w.v[k]);
    } else {
        dpzo_normal_pair(w.v[0], w.v[1], &v[0], &v[1]);
        dpzo_normal_pair(w.v[2], w.v[3], &v[2], &v[3]);
    }
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
        for (uint64_t j0 = 0; j0 < dim; j0 += SPHERE_BLOCK) {
            uint64_t j1 = dim - j0 < SPHERE_BLOCK ? dim : j0 + SPHERE_BLOCK;
            double block = 0.0;
            for (uint64_t j = j0; j < j1; j += 4) {
                double v[4];
                raw_quad(&d, j >> 2, v);
                int nk = j1 - j < 4 ? (int)(j1 - j) : 4;
                for (int k = 0; k < nk; k++)
                    block += v[k] * v[k];
            }
            total += block;
        }
        if (!(total > 0.0 && isfinite(total)))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "sphere direction: the Gaussian draw has norm^2 %g (seed %llu, "
                              "step %llu, query %u, dim %llu); use another seed",
                              total, (unsigned long long)seed, (unsigned long long)step,
                              (unsigned)query, (unsigned long long)dim);
        d.scale = radius / sqrt(total);
    }
    *dir = d;
    return DPZO_OK;
}

double dpzo_dir_at(const dpzo_dir *dir, uint64_t j)
{
    if (j >= dir->dim)
        return NAN;
    dpzo_philox_ctr w = block_words(dir, j >> 2);
    unsigned k = (unsigned)(j & 3);
    if (dir->kind == DPZO_DIR_RADEMACHER)
        return dir->scale * sign_of(w.v[k]);
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

/* out[i] = f(out[i], u_{j0+i}) for the valid i, u the float element; one Philox block per
 * four elements (a partial block at an unaligned start or end). AXPY selects
 * theta += alpha * u, else out = u. */
static inline void apply(const dpzo_dir *dir, uint64_t j0, size_t nv, int axpy, double alpha,
                         float *out)
{
    const double scale = dir->scale;
    size_t i = 0;
    uint64_t j = j0;
    double v[4];
#define DPZO_EMIT(k, x)                                                                  \
    do {                                                                                  \
        float u_ = (float)(scale * (x));                                                  \
        out[k] = axpy ? (float)((double)out[k] + alpha * (double)u_) : u_;                \
    } while (0)
    if (nv > 0 && (j & 3)) { /* the head: elements (j & 3) .. 3 of a block */
        raw_quad(dir, j >> 2, v);
        for (unsigned k = (unsigned)(j & 3); k < 4 && i < nv; k++, i++)
            DPZO_EMIT(i, v[k]);
        j = j0 + i;
    }
    for (; i + 4 <= nv; i += 4, j += 4) {
        raw_quad(dir, j >> 2, v);
        DPZO_EMIT(i, v[0]);
        DPZO_EMIT(i + 1, v[1]);
        DPZO_EMIT(i + 2, v[2]);
        DPZO_EMIT(i + 3, v[3]);
    }
    if (i < nv) { /* the tail: elements 0 .. nv - i - 1 of a block */
        raw_quad(dir, j >> 2, v);
        for (unsigned k = 0; i < nv; k++, i++)
            DPZO_EMIT(i, v[k]);
    }
#undef DPZO_EMIT
}

void dpzo_dir_fill(const dpzo_dir *dir, uint64_t j0, size_t n, float *out)
{
    size_t nv = valid_count(dir, j0, n);
    apply(dir, j0, nv, 0, 0.0, out);
    for (size_t i = nv; i < n; i++)
        out[i] = NAN;
}

void dpzo_dir_axpy(const dpzo_dir *dir, uint64_t j0, size_t n, double alpha, float *theta)
{
    size_t nv = valid_count(dir, j0, n);
    apply(dir, j0, nv, 1, alpha, theta);
    for (size_t i = nv; i < n; i++)
        theta[i] = NAN;
}
