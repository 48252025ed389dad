/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cpu/philox.c: the counter-based generator and the exactly specified normal
 * transform behind dpzo/zo_dir.h. This file is the SPECIFICATION the CUDA kernels must
 * reproduce bit for bit; everything below is binary64 round-to-nearest-even with one
 * rounding per operation (no FMA contraction: the pragma below for compilers that honour
 * it (GCC ignores it and warns, hence the #if), -ffp-contract=off for GCC in
 * kernels/CMakeLists.txt; nvcc needs --fmad=false or the __dadd_rn/__dmul_rn intrinsics).
 *
 * 1. Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11, "Parallel random numbers: as easy
 *    as 1, 2, 3"). Counter (x0, x1, x2, x3), key (k0, k1), all uint32. One round:
 *        (hi0, lo0) = 0xD2511F53 * x0   (the 64-bit product split in halves)
 *        (hi1, lo1) = 0xCD9E8D57 * x2
 *        (x0, x1, x2, x3) <- (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
 *    Ten rounds; between consecutive rounds the key is bumped by the Weyl increments
 *    k0 += 0x9E3779B9, k1 += 0xBB67AE85 (mod 2^32), so round r (0-based) uses
 *    k0 + r * 0x9E3779B9, k1 + r * 0xBB67AE85. Checked against Random123's KAT vectors.
 *
 * 2. The direction's stream (kernels/cpu/zo_dir.c). Element j of the direction with
 *    (seed, step, query) comes from the Philox block with
 *        key     = (k0, k1) = ((uint32)seed, (uint32)(seed >> 32))
 *        counter = ((uint32)(j >> 2), (uint32)(j >> 34), (uint32)step, query)
 *    (step < 2^32 is enforced by dpzo_dir_init, so the packing is injective in
 *    (j >> 2, step, query)): one block feeds the four elements 4m .. 4m + 3, m = j >> 2.
 *    With output words (w0, w1, w2, w3):
 *        GAUSSIAN / SPHERE: (z0, z1) = dpzo_normal_pair(w0, w1),
 *                           (z2, z3) = dpzo_normal_pair(w2, w3); element j is z_(j & 3).
 *        RADEMACHER:        element j is -1 if bit 31 of w_(j & 3) is set, else +1.
 *    SPHERE multiplies by scale = radius / sqrt(S), where S = sum over j < dim of z_j * z_j
 *    (each square rounded to double, then added) in this order: blocks of 4096 consecutive
 *    elements [4096 b, min(4096 (b + 1), dim)); each block summed left to right starting
 *    from +0.0; the block sums summed left to right starting from +0.0. The element
 *    written by dpzo_dir_fill is (float)(scale * z_j) (one double product, then one
 *    rounding to float; GAUSSIAN and RADEMACHER have scale = 1).
 *
 * 3. dpzo_normal_pair(a, b): Box-Muller.
 *        u1 = (a + 1) * 2^-32  in (0, 1]     (exact: a + 1 <= 2^32)
 *        L  = dpzo__log(u1)                  (section 4)
 *        r  = sqrt(-2 * L)                   (-2 * L exact; r = -0.0 when a = 2^32 - 1)
 *        (s, c) = dpzo__sincos_turn32(b)     (sin and cos of 2 pi b / 2^32, section 5)
 *        z0 = r * c,  z1 = r * s
 *    |z| <= sqrt(64 ln 2) = 6.66: the 32-bit u1 truncates the tails at probability
 *    2.7e-11, which no statistic of a zeroth-order direction can see.
 *
 * 4. dpzo__log(x), x a positive normal double (subnormals are first scaled by 2^54):
 *        from the bits, x = 2^k * m with m in [1, 2); if m > SQRT2 (the double
 *        0x1.6a09e667f3bcdp+0) then m = m * 0.5, k = k + 1.
 *        f = m - 1 (exact)   s = f / (2 + f)   z = s * s   hfsq = 0.5 * f * f
 *        R = z * (L1 + z * (L2 + ... + z * L10)), Ln = double nearest 2 / (2n + 1)
 *            (Taylor series of 2 atanh(s) / s - 2 in z, truncated after z^10)
 *        log = k * LN2_HI - ((hfsq - (s * (hfsq + R) + k * LN2_LO)) - f)
 *    with LN2_HI = 0x1.62e42fef00000p-1 (ln 2 truncated to 33 bits, so k * LN2_HI is
 *    exact) and LN2_LO = 0x1.473de6af278edp-34 (ln 2 - LN2_HI, rounded). Operations in
 *    exactly this order and grouping (the identity behind it: log(1 + f) = 2 atanh(s)
 *    = f - hfsq + s (hfsq + R)).
 *
 * 5. dpzo__sincos_turn32(b): with all integer arithmetic mod 2^32,
 *        q  = ((b + 2^29) >> 30)               quadrant of the nearest quarter turn
 *        rr = b - q * 2^30,  r = rr as a signed 32-bit integer (|r| <= 2^29)
 *        t  = r * PH + r * PL    PH = 0x1.921fb4p-30: 2 pi / 2^32 truncated to 23 significant
 *                                bits, so r * PH is exact; PL = 0x1.4442d18469899p-54: the
 *                                rest (2 pi / 2^32 - PH) rounded
 *        z  = t * t
 *        sin t = t + (t * z) * (S1 + z * (S2 + ... + z * S8)), Sk = nearest (-1)^k/(2k+1)!
 *        cos t: hz = 0.5 * z, w = 1 - hz,
 *               cos t = w + (((1 - w) - hz) + (z * z) * (C2 + z * (C3 + ... + z * C8))),
 *               Ck = nearest (-1)^k / (2k)!
 *        (sin, cos) of the angle = (sin t, cos t), (cos t, -sin t), (-sin t, -cos t),
 *        (-cos t, sin t) for q = 0, 1, 2, 3.
 *    The reduction is exact, so sin and cos keep a small relative error even next to
 *    their zeros. All coefficients are listed as hexadecimal literals in kernels/zo_core.h
 *    (the scalar cores of sections 1-5, one source for this file and the CUDA kernels).
 *
 * Accuracy (tests/test_zo_dir.c): log, and sin/cos on [-pi/4, pi/4], within 1 ulp of glibc;
 * the normal pair within 2 ulps of 40-digit values. Bit-exactness: the generator
 * tests/ref/gen_zo_dir_values.py re-implements sections 2-5 in Python floats (constants
 * derived from their definitions) and the test requires identical bits (exact values and a
 * hash of 200000 pairs); the CUDA kernels compile the same cores (kernels/zo_core.h) and
 * tests/test_cuda.c compares them with this file bit for bit. */
#if defined(__clang__) || !defined(__GNUC__)
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "dpzo/zo_dir.h"
#include "zo_math.h"
#include "../zo_core.h"

/* ---- implementation notes ---------------------------------------------------------
 * Every step of sections 1-5 is written once, as a scalar core in kernels/zo_core.h (the
 * one source shared with the CUDA kernels, kernels/cuda/zo_cuda.cu): always inlined and
 * branch-free on its normal path. The scalar entry points below (dpzo__log,
 * dpzo_normal_pair, ...) and the batched generator dpzo__dir_raw_blocks at the end of
 * this file, whose loops GCC vectorises (AVX-512, AVX2 and SSE2 versions, picked at run
 * time), inline those cores. A vector lane performs exactly the IEEE operations of the
 * scalar code in the same order (no FMA: -ffp-contract=off; no reassociation: no
 * -ffast-math), so the lanes and the scalar code agree bit for bit. Integer-to-double
 * conversions of values that are exact either way are done by bit tricks (AVX2 has no
 * 64-bit integer conversion), which give the same doubles as the C conversions. The one
 * stage not shared is the vector Philox (x86 intrinsics, integer arithmetic, so exact by
 * construction). */

#if defined(__GNUC__)
#define DPZO_CORE static inline __attribute__((always_inline))
#else
#define DPZO_CORE static inline
#endif

/* ---- Philox4x32-10 --------------------------------------------------------------- */

dpzo_philox_ctr dpzo_philox4x32_10(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1)
{
    return dpzo_hd_philox(ctr, k0, k1);
}

/* ---- log ------------------------------------------------------------------------- */

double dpzo__log(double x)
{
    if (!(x > 0.0)) /* 0, negative, NaN */
        return x == 0.0 ? -INFINITY : NAN;
    if (x == INFINITY)
        return x;
    int64_t k = 0;
    if (x < 0x1p-1022) { /* subnormal: exact scaling into the normal range */
        x *= 0x1p54;
        k = -54;
    }
    return dpzo_hd_log_core(dpzo_hd_bits_of(x), k);
}

/* ---- sin, cos on [-pi/4, pi/4]; sin, cos of 2 pi b / 2^32 --------------------------- */

double dpzo__sin_kernel(double x) { return dpzo_hd_sin_core(x); }

double dpzo__cos_kernel(double x) { return dpzo_hd_cos_core(x); }

void dpzo__sincos_turn32(uint32_t b, double *s, double *c) { dpzo_hd_sincos_core(b, s, c); }

/* ---- the normal pair ------------------------------------------------------------- */

void dpzo_normal_pair(uint32_t a, uint32_t b, double *z0, double *z1)
{
    dpzo_hd_normal_pair(a, b, z0, z1);
}

/* ---- the batched stream (section 2) ---------------------------------------------- */

/* dpzo__dir_raw_blocks works on a chunk of up to DPZO_RAW_CHUNK Philox blocks in stages,
 * each a straight-line loop over arrays: the blocks' words (vector Philox, below), then
 * the normal pairs (u1's log and r = sqrt(-2 L), sin / cos and the products; one loop or
 * two, see raw_from_words), then the interleaving into element order. Separate stages
 * keep each loop body short, so consecutive iterations' long dependency chains (Horner
 * polynomials, a division, a square root) overlap in the out-of-order window. GCC
 * vectorises the stage loops; each lane performs exactly the scalar core's operations. */

typedef struct {
    uint32_t k0, k1, step, query;
} philox_key;

/* The words of blocks m0 + i, i in [i0, nb), one at a time. */
DPZO_CORE void philox_words_scalar(philox_key key, uint64_t m0, size_t i0, size_t nb,
                                   uint32_t *restrict w0, uint32_t *restrict w1,
                                   uint32_t *restrict w2, uint32_t *restrict w3)
{
    for (size_t i = i0; i < nb; i++) {
        uint64_t m = m0 + i;
        dpzo_philox_ctr ctr = {{(uint32_t)m, (uint32_t)(m >> 32), key.step, key.query}};
        dpzo_philox_ctr w = dpzo_hd_philox(ctr, key.k0, key.k1);
        w0[i] = w.v[0];
        w1[i] = w.v[1];
        w2[i] = w.v[2];
        w3[i] = w.v[3];
    }
}

/* The raw values of the chunk's elements from its words: the normal pairs
 * (z0, z1) = normal_pair(w0, w1) and (z2, z3) = normal_pair(w2, w3) of each block, then
 * the interleaving into element order. ONE_LOOP (a constant of each caller) picks the
 * loop structure; each element gets the same operations either way (the same bits):
 *   1: both pairs' radius and angle in one loop body (the AVX2 and AVX-512 versions):
 *      more independent Horner chains per iteration for the out-of-order core to overlap
 *      (the loop reloads a few of its constants from the stack, loads only, which costs
 *      less than the chains' latency);
 *   0: the radii of both pairs in one loop, the angles and products in a second (the SSE2
 *      and portable versions; the one-loop body ran 27% slower with SSE2).
 * Measured on a 2-core AMD EPYC (Zen 4, avx512f) against the former structure (radius,
 * then angle, for one pair at a time): dpzo_dir_fill 5-7% faster with each of AVX-512,
 * AVX2 and SSE2 (bench/results/avx2_clones.md). */
DPZO_CORE void raw_from_words(dpzo_dir_kind kind, int one_loop, size_t nb,
                              const uint32_t *restrict w0, const uint32_t *restrict w1,
                              const uint32_t *restrict w2, const uint32_t *restrict w3,
                              double *restrict v)
{
    if (kind == DPZO_DIR_RADEMACHER) {
        for (size_t i = 0; i < nb; i++) {
            v[4 * i] = dpzo__sign_of(w0[i]);
            v[4 * i + 1] = dpzo__sign_of(w1[i]);
            v[4 * i + 2] = dpzo__sign_of(w2[i]);
            v[4 * i + 3] = dpzo__sign_of(w3[i]);
        }
        return;
    }
    double c0[DPZO_RAW_CHUNK], s0[DPZO_RAW_CHUNK], c1[DPZO_RAW_CHUNK], s1[DPZO_RAW_CHUNK];
    if (one_loop) {
        for (size_t i = 0; i < nb; i++) {
            double r0 = dpzo_hd_radius(w0[i]), r1 = dpzo_hd_radius(w2[i]), sn, cs;
            dpzo_hd_sincos_core(w1[i], &sn, &cs);
            c0[i] = r0 * cs;
            s0[i] = r0 * sn;
            dpzo_hd_sincos_core(w3[i], &sn, &cs);
            c1[i] = r1 * cs;
            s1[i] = r1 * sn;
        }
    } else {
        double r0[DPZO_RAW_CHUNK], r1[DPZO_RAW_CHUNK];
        for (size_t i = 0; i < nb; i++) {
            r0[i] = dpzo_hd_radius(w0[i]);
            r1[i] = dpzo_hd_radius(w2[i]);
        }
        for (size_t i = 0; i < nb; i++) {
            double sn, cs;
            dpzo_hd_sincos_core(w1[i], &sn, &cs);
            c0[i] = r0[i] * cs;
            s0[i] = r0[i] * sn;
            dpzo_hd_sincos_core(w3[i], &sn, &cs);
            c1[i] = r1[i] * cs;
            s1[i] = r1[i] * sn;
        }
    }
    for (size_t i = 0; i < nb; i++) {
        v[4 * i] = c0[i];
        v[4 * i + 1] = s0[i];
        v[4 * i + 2] = c1[i];
        v[4 * i + 3] = s1[i];
    }
}

DPZO_CORE philox_key key_of(const dpzo_dir *dir)
{
    philox_key key = {(uint32_t)dir->seed, (uint32_t)(dir->seed >> 32), (uint32_t)dir->step,
                      dir->query};
    return key;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DPZO_X86_SIMD 1

/* Vector Philox on 64-bit lanes, one block per lane: PMULUDQ multiplies the low 32-bit
 * halves of the lanes into full 64-bit products, so (hi, lo) = (p >> 32, low half of p).
 * The high halves of x1, x3 (and hence x0, x2) carry junk from the products; no result
 * depends on it (PMULUDQ ignores it, XOR is lane-local and the words are the low halves).
 * Written once as macros over the vector width: V the vector type, P the intrinsic prefix,
 * SPLAT64 / IOTA the counter's lanes, XOR3 a three-way XOR, STORE32 stores the lanes' low
 * halves as uint32, ONE_LOOP the normal pairs' loop structure (raw_from_words). (GCC
 * does not turn C's 32x32->64 products into PMULUDQ by itself.) */
#define PHILOX_VEC_ROUND(V, P, XOR3, r)                                                   \
    do {                                                                                  \
        V p0_ = P##_mul_epu32(x0, mul0), p1_ = P##_mul_epu32(x2, mul1);                   \
        x0 = XOR3(P##_srli_epi64(p1_, 32), x1,                                            \
                  P##_set1_epi32((int)(key.k0 + (uint32_t)(r) * 0x9E3779B9u)));          \
        x1 = p1_;                                                                         \
        x2 = XOR3(P##_srli_epi64(p0_, 32), x3,                                            \
                  P##_set1_epi32((int)(key.k1 + (uint32_t)(r) * 0xBB67AE85u)));          \
        x3 = p0_;                                                                         \
    } while (0)

#define RAW_BLOCKS_FN(NAME, TARGET, V, P, LANES, SPLAT64, IOTA, XOR3, STORE32, ONE_LOOP)  \
    TARGET static void NAME(const dpzo_dir *dir, uint64_t m0, size_t nb,                  \
                            double *restrict v)                                           \
    {                                                                                     \
        uint32_t w0[DPZO_RAW_CHUNK], w1[DPZO_RAW_CHUNK], w2[DPZO_RAW_CHUNK],              \
            w3[DPZO_RAW_CHUNK];                                                           \
        const philox_key key = key_of(dir);                                               \
        const V mul0 = P##_set1_epi32((int)0xD2511F53u);                                  \
        const V mul1 = P##_set1_epi32((int)0xCD9E8D57u);                                  \
        size_t i = 0;                                                                     \
        for (; i + (LANES) <= nb; i += (LANES)) {                                         \
            V x0 = P##_add_epi64(SPLAT64((long long)(m0 + i)), IOTA);                     \
            V x1 = P##_srli_epi64(x0, 32);                                                \
            V x2 = P##_set1_epi32((int)key.step), x3 = P##_set1_epi32((int)key.query);    \
            PHILOX_VEC_ROUND(V, P, XOR3, 0);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 1);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 2);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 3);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 4);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 5);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 6);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 7);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 8);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 9);                                              \
            STORE32(w0 + i, x0);                                                          \
            STORE32(w1 + i, x1);                                                          \
            STORE32(w2 + i, x2);                                                          \
            STORE32(w3 + i, x3);                                                          \
        }                                                                                 \
        philox_words_scalar(key, m0, i, nb, w0, w1, w2, w3);                              \
        raw_from_words(dir->kind, (ONE_LOOP), nb, w0, w1, w2, w3, v);                     \
    }

#define XOR3_512(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)
#define STORE32_512(p, x)                                                                 \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtepi64_epi32(x))
#define XOR3_256(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define STORE32_256(p, x)                                                                 \
    _mm_storeu_si128((__m128i *)(void *)(p),                                              \
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(                  \
                         (x), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))))
#define XOR3_128(a, b, c) _mm_xor_si128(_mm_xor_si128((a), (b)), (c))
#define STORE32_128(p, x)                                                                 \
    _mm_storel_epi64((__m128i *)(void *)(p),                                              \
                     _mm_shuffle_epi32((x), _MM_SHUFFLE(3, 1, 2, 0)))

RAW_BLOCKS_FN(raw_blocks_avx512, __attribute__((target("avx512f"))), __m512i, _mm512, 8,
              _mm512_set1_epi64, _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), XOR3_512,
              STORE32_512, 1)
RAW_BLOCKS_FN(raw_blocks_avx2, __attribute__((target("avx2"))), __m256i, _mm256, 4,
              _mm256_set1_epi64x, _mm256_setr_epi64x(0, 1, 2, 3), XOR3_256, STORE32_256, 1)
RAW_BLOCKS_FN(raw_blocks_sse2, , __m128i, _mm, 2, _mm_set1_epi64x, _mm_set_epi64x(1, 0),
              XOR3_128, STORE32_128, 0)
#endif

static void raw_blocks_portable(const dpzo_dir *dir, uint64_t m0, size_t nb,
                                double *restrict v)
{
    uint32_t w0[DPZO_RAW_CHUNK], w1[DPZO_RAW_CHUNK], w2[DPZO_RAW_CHUNK], w3[DPZO_RAW_CHUNK];
    philox_words_scalar(key_of(dir), m0, 0, nb, w0, w1, w2, w3);
    raw_from_words(dir->kind, 0, nb, w0, w1, w2, w3, v);
}

/* Which implementation dpzo__dir_raw_blocks runs: -1 the best the CPU supports, else a
 * DPZO_RAW_* value (set by dpzo__dir_raw_impl, for tests and benchmarks). */
static _Atomic int raw_impl_forced = -1;

int dpzo__dir_raw_impl(int impl)
{
    if (impl < -1 || impl > DPZO_RAW_AVX512)
        return -1;
#ifdef DPZO_X86_SIMD
    if ((impl == DPZO_RAW_AVX512 && !__builtin_cpu_supports("avx512f")) ||
        (impl == DPZO_RAW_AVX2 && !__builtin_cpu_supports("avx2")))
        return -1;
#else
    if (impl > DPZO_RAW_PORTABLE)
        return -1;
#endif
    atomic_store_explicit(&raw_impl_forced, impl, memory_order_relaxed);
    return 0;
}

void dpzo__dir_raw_blocks(const dpzo_dir *dir, uint64_t m0, size_t nb, double *v)
{
    if (nb > DPZO_RAW_CHUNK)
        nb = DPZO_RAW_CHUNK;
    int impl = atomic_load_explicit(&raw_impl_forced, memory_order_relaxed);
#ifdef DPZO_X86_SIMD
    if (impl < 0)
#ifdef DPZO_EMULATE_AVX2 /* a build standing in for an AVX2-only CPU (CMake DPZO_EMULATE_AVX2) */
        impl = __builtin_cpu_supports("avx2") ? DPZO_RAW_AVX2 : DPZO_RAW_SSE2;
#else
        impl = __builtin_cpu_supports("avx512f") ? DPZO_RAW_AVX512
               : __builtin_cpu_supports("avx2")  ? DPZO_RAW_AVX2
                                                 : DPZO_RAW_SSE2;
#endif
    switch (impl) {
    case DPZO_RAW_AVX512:
        raw_blocks_avx512(dir, m0, nb, v);
        return;
    case DPZO_RAW_AVX2:
        raw_blocks_avx2(dir, m0, nb, v);
        return;
    case DPZO_RAW_SSE2:
        raw_blocks_sse2(dir, m0, nb, v);
        return;
    default:
        break;
    }
#endif
    raw_blocks_portable(dir, m0, nb, v);
}
