/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/zo_core.h: the scalar cores of the direction generator, ONE source for the CPU
 * (kernels/cpu/philox.c, whose sections 1-5 specify every operation) and the CUDA kernels
 * (kernels/cuda/zo_cuda.cu).
 *
 * Every function here is binary64 round-to-nearest-even, one rounding per operation, in
 * the order written: the including translation unit must not contract a * b + c into an
 * FMA (GCC: -ffp-contract=off; nvcc: -fmad=false, with --prec-div=true --prec-sqrt=true and
 * no --use_fast_math; kernels/CMakeLists.txt sets both) nor reassociate (no -ffast-math).
 * Then the host and the device compute the same bits: +, -, *, / and sqrt of doubles are
 * correctly rounded on both, and everything else is exact integer or bit manipulation.
 *
 * DPZO_HD marks each function: in C it is static, inline and always inlined (the CPU's
 * vectorised loops in philox.c inline these same cores, so a vector lane performs the
 * scalar operations); under nvcc it is also __host__ __device__. The polynomial
 * coefficients are macros (hexadecimal literals, exact) so that device code needs no host
 * variables. */
#ifndef DPZO_KERNELS_ZO_CORE_H
#define DPZO_KERNELS_ZO_CORE_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "dpzo/zo_dir.h"

#if defined(__CUDACC__)
#define DPZO_HD static __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define DPZO_HD static inline __attribute__((always_inline))
#else
#define DPZO_HD static inline
#endif

#if !defined(__CUDACC__) && (defined(__clang__) || !defined(__GNUC__))
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- exact conversions ------------------------------------------------------------- */

DPZO_HD uint64_t dpzo_hd_bits_of(double x)
{
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

DPZO_HD double dpzo_hd_double_of(uint64_t b)
{
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
#endif
}

/* (double)a, exactly: 2^52 + a has a in the low significand bits; subtracting 2^52 is
 * exact. */
DPZO_HD double dpzo_hd_u32_to_double(uint32_t a)
{
    return dpzo_hd_double_of(0x4330000000000000ull | (uint64_t)a) - 0x1p52;
}

/* (double)k for |k| < 2^31, exactly (the same trick on k + 2^31; k = 0 gives +0.0, as
 * (double)0 does). */
DPZO_HD double dpzo_hd_small_int_to_double(int64_t k)
{
    return dpzo_hd_double_of(0x4330000000000000ull + (uint64_t)(k + 0x80000000ll)) -
           (0x1p52 + 0x1p31);
}

/* ---- Philox4x32-10 (philox.c section 1) -------------------------------------------- */

/* One round with the round's key (k0, k1). On the device the 32 x 32 -> 64-bit products
 * are split with __umulhi (one IMAD.HI each instead of a 64-bit multiply); the same
 * integers either way. */
#if defined(__CUDA_ARCH__)
#define DPZO_HD_PHILOX_ROUND(k0, k1)                                                      \
    do {                                                                                  \
        uint32_t hi0_ = __umulhi(0xD2511F53u, x0), lo0_ = 0xD2511F53u * x0;               \
        uint32_t hi1_ = __umulhi(0xCD9E8D57u, x2), lo1_ = 0xCD9E8D57u * x2;               \
        x0 = hi1_ ^ x1 ^ (k0);                                                            \
        x1 = lo1_;                                                                        \
        x2 = hi0_ ^ x3 ^ (k1);                                                            \
        x3 = lo0_;                                                                        \
    } while (0)
#else
#define DPZO_HD_PHILOX_ROUND(k0, k1)                                                      \
    do {                                                                                  \
        uint64_t p0_ = (uint64_t)0xD2511F53u * x0;                                        \
        uint64_t p1_ = (uint64_t)0xCD9E8D57u * x2;                                        \
        x0 = (uint32_t)(p1_ >> 32) ^ x1 ^ (k0);                                           \
        x1 = (uint32_t)p1_;                                                               \
        x2 = (uint32_t)(p0_ >> 32) ^ x3 ^ (k1);                                           \
        x3 = (uint32_t)p0_;                                                               \
    } while (0)
#endif

DPZO_HD dpzo_philox_ctr dpzo_hd_philox(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1)
{
    uint32_t x0 = ctr.v[0], x1 = ctr.v[1], x2 = ctr.v[2], x3 = ctr.v[3];
    /* round r uses (k0 + r 0x9E3779B9, k1 + r 0xBB67AE85), unrolled */
    DPZO_HD_PHILOX_ROUND(k0, k1);
    DPZO_HD_PHILOX_ROUND(k0 + 0x9E3779B9u, k1 + 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 2u * 0x9E3779B9u, k1 + 2u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 3u * 0x9E3779B9u, k1 + 3u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 4u * 0x9E3779B9u, k1 + 4u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 5u * 0x9E3779B9u, k1 + 5u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 6u * 0x9E3779B9u, k1 + 6u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 7u * 0x9E3779B9u, k1 + 7u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 8u * 0x9E3779B9u, k1 + 8u * 0xBB67AE85u);
    DPZO_HD_PHILOX_ROUND(k0 + 9u * 0x9E3779B9u, k1 + 9u * 0xBB67AE85u);
    dpzo_philox_ctr out = {{x0, x1, x2, x3}};
    return out;
}
#undef DPZO_HD_PHILOX_ROUND

/* The Philox block m of the direction stream (seed, step, query) (philox.c section 2):
 * key ((uint32)seed, (uint32)(seed >> 32)), counter ((uint32)m, (uint32)(m >> 32), step,
 * query); it feeds the elements 4m .. 4m + 3. */
DPZO_HD dpzo_philox_ctr dpzo_hd_block_words(uint64_t seed, uint32_t step, uint32_t query,
                                            uint64_t m)
{
    dpzo_philox_ctr ctr = {{(uint32_t)m, (uint32_t)(m >> 32), step, query}};
    return dpzo_hd_philox(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* ---- log (section 4) ------------------------------------------------------------------ */

#define DPZO_HD_LN2_HI 0x1.62e42fef00000p-1
#define DPZO_HD_LN2_LO 0x1.473de6af278edp-34
#define DPZO_HD_SQRT2_BITS 0x3ff6a09e667f3bcdull /* 0x1.6a09e667f3bcdp+0, sqrt(2) rounded */
/* 2 / (2n + 1), n = 1..10 */
#define DPZO_HD_L1 0x1.5555555555555p-1
#define DPZO_HD_L2 0x1.999999999999ap-2
#define DPZO_HD_L3 0x1.2492492492492p-2
#define DPZO_HD_L4 0x1.c71c71c71c71cp-3
#define DPZO_HD_L5 0x1.745d1745d1746p-3
#define DPZO_HD_L6 0x1.3b13b13b13b14p-3
#define DPZO_HD_L7 0x1.1111111111111p-3
#define DPZO_HD_L8 0x1.e1e1e1e1e1e1ep-4
#define DPZO_HD_L9 0x1.af286bca1af28p-4
#define DPZO_HD_L10 0x1.8618618618618p-4

/* log(2^k0 x) for x the positive normal double with bits xbits (section 4; |k0| small). */
DPZO_HD double dpzo_hd_log_core(uint64_t xbits, int64_t k0)
{
    /* m = the significand in [1, 2); when m > SQRT2, m * 0.5 and k + 1 (written without
     * a branch: the exponent field 1022 instead of 1023 is exactly m * 0.5). Both
     * significands are below 2^52, so the signed comparison is the unsigned one. */
    uint64_t mant = xbits & 0x000fffffffffffffull;
    int64_t big = (int64_t)mant > (int64_t)(DPZO_HD_SQRT2_BITS & 0x000fffffffffffffull);
    int64_t k = k0 + (int64_t)(xbits >> 52) - 1023 + big;
    double m = dpzo_hd_double_of(mant | ((uint64_t)(1023 - big) << 52));
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double hfsq = 0.5 * f * f;
    double R =
        z * (DPZO_HD_L1 +
             z * (DPZO_HD_L2 +
                  z * (DPZO_HD_L3 +
                       z * (DPZO_HD_L4 +
                            z * (DPZO_HD_L5 +
                                 z * (DPZO_HD_L6 +
                                      z * (DPZO_HD_L7 +
                                           z * (DPZO_HD_L8 +
                                                z * (DPZO_HD_L9 + z * DPZO_HD_L10)))))))));
    double dk = dpzo_hd_small_int_to_double(k);
    return dk * DPZO_HD_LN2_HI - ((hfsq - (s * (hfsq + R) + dk * DPZO_HD_LN2_LO)) - f);
}

/* ---- sin, cos on [-pi/4, pi/4] -------------------------------------------------------- */

/* (-1)^k / (2k + 1)!, k = 1..8 */
#define DPZO_HD_S1 (-0x1.5555555555555p-3)
#define DPZO_HD_S2 0x1.1111111111111p-7
#define DPZO_HD_S3 (-0x1.a01a01a01a01ap-13)
#define DPZO_HD_S4 0x1.71de3a556c734p-19
#define DPZO_HD_S5 (-0x1.ae64567f544e4p-26)
#define DPZO_HD_S6 0x1.6124613a86d09p-33
#define DPZO_HD_S7 (-0x1.ae7f3e733b81fp-41)
#define DPZO_HD_S8 0x1.952c77030ad4ap-49
/* (-1)^k / (2k)!, k = 2..8 */
#define DPZO_HD_C2 0x1.5555555555555p-5
#define DPZO_HD_C3 (-0x1.6c16c16c16c17p-10)
#define DPZO_HD_C4 0x1.a01a01a01a01ap-16
#define DPZO_HD_C5 (-0x1.27e4fb7789f5cp-22)
#define DPZO_HD_C6 0x1.1eed8eff8d898p-29
#define DPZO_HD_C7 (-0x1.93974a8c07c9dp-37)
#define DPZO_HD_C8 0x1.ae7f3e733b81fp-45

DPZO_HD double dpzo_hd_sin_core(double x)
{
    double z = x * x;
    double p = DPZO_HD_S1 +
               z * (DPZO_HD_S2 +
                    z * (DPZO_HD_S3 +
                         z * (DPZO_HD_S4 +
                              z * (DPZO_HD_S5 +
                                   z * (DPZO_HD_S6 + z * (DPZO_HD_S7 + z * DPZO_HD_S8))))));
    return x + (x * z) * p;
}

DPZO_HD double dpzo_hd_cos_core(double x)
{
    double z = x * x;
    double q = DPZO_HD_C2 +
               z * (DPZO_HD_C3 +
                    z * (DPZO_HD_C4 +
                         z * (DPZO_HD_C5 +
                              z * (DPZO_HD_C6 + z * (DPZO_HD_C7 + z * DPZO_HD_C8)))));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + (z * z) * q);
}

/* ---- sin, cos of 2 pi b / 2^32 (section 5) -------------------------------------------- */

#define DPZO_HD_PH 0x1.921fb4p-30
#define DPZO_HD_PL 0x1.4442d18469899p-54

/* Section 5, in 64-bit integer lanes (the mod 2^32 arithmetic made explicit by masks, so
 * that a vector lane keeps the width of the doubles it feeds). */
DPZO_HD void dpzo_hd_sincos_core(uint32_t b32, double *s, double *c)
{
    const uint64_t b = b32, m32 = 0xffffffffull;
    uint64_t q = ((b + 0x20000000u) & m32) >> 30;
    uint64_t rr = (b - (q << 30)) & m32;
    int64_t r = (int64_t)rr - (int64_t)((rr >> 31) << 32);
    double dr = dpzo_hd_small_int_to_double(r); /* (double)r: |r| <= 2^29 */
    double t = dr * DPZO_HD_PH + dr * DPZO_HD_PL;
    double st = dpzo_hd_sin_core(t), ct = dpzo_hd_cos_core(t);
    /* (st, ct), (ct, -st), (-st, -ct), (-ct, st) for q = 0..3, without branches (q is
     * random, so a branch would mispredict): swap when q is odd, then negate (flip the
     * sign bit, which is exactly IEEE negation) sin when q >= 2 and cos when q is 1 or 2 */
    uint64_t sb = dpzo_hd_bits_of(st), cb = dpzo_hd_bits_of(ct);
    uint64_t swap = (uint64_t)0 - (q & 1), diff = (sb ^ cb) & swap;
    sb ^= diff;
    cb ^= diff;
    sb ^= (q >> 1) << 63;
    cb ^= ((q ^ (q >> 1)) & 1) << 63;
    *s = dpzo_hd_double_of(sb);
    *c = dpzo_hd_double_of(cb);
}

/* ---- the normal pair (section 3) and the sign (section 2) ------------------------------ */

/* r = sqrt(-2 log u1), u1 = (a + 1) 2^-32 in [2^-32, 1] (a normal double). */
DPZO_HD double dpzo_hd_radius(uint32_t a)
{
    double u1 = (dpzo_hd_u32_to_double(a) + 1.0) * 0x1p-32;
    return sqrt(-2.0 * dpzo_hd_log_core(dpzo_hd_bits_of(u1), 0));
}

DPZO_HD void dpzo_hd_normal_pair(uint32_t a, uint32_t b, double *z0, double *z1)
{
    double r = dpzo_hd_radius(a);
    double s, c;
    dpzo_hd_sincos_core(b, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

/* +1 or -1 from the top bit of w, without a branch (the RADEMACHER element). */
DPZO_HD double dpzo_hd_sign_of(uint32_t w)
{
    return dpzo_hd_double_of(0x3ff0000000000000ull | ((uint64_t)(w >> 31) << 63));
}

/* The raw values (before dir->scale) of the four elements 4m .. 4m + 3 of a GAUSSIAN,
 * SPHERE (rademacher = 0) or RADEMACHER (rademacher = 1) stream. */
DPZO_HD void dpzo_hd_raw4(uint64_t seed, uint32_t step, uint32_t query, int rademacher,
                          uint64_t m, double v[4])
{
    dpzo_philox_ctr w = dpzo_hd_block_words(seed, step, query, m);
    if (rademacher) {
        v[0] = dpzo_hd_sign_of(w.v[0]);
        v[1] = dpzo_hd_sign_of(w.v[1]);
        v[2] = dpzo_hd_sign_of(w.v[2]);
        v[3] = dpzo_hd_sign_of(w.v[3]);
    } else {
        dpzo_hd_normal_pair(w.v[0], w.v[1], &v[0], &v[1]);
        dpzo_hd_normal_pair(w.v[2], w.v[3], &v[2], &v[3]);
    }
}

#endif
