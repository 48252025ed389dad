/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/zo_dtype.h: the element types of dpzo_dtype (dpzo/zo_dir.h) converted to and from
 * float, ONE source for the CPU (kernels/cpu/zo_dir.c) and the CUDA kernels
 * (kernels/cuda/zo_cuda.cu), so both write the same bits.
 *
 * Integer and bit manipulation, plus two float operations: an exact product, and the sum
 * that rounds the f16 subnormals (under the default rounding to nearest; flush-to-zero and
 * denormals-are-zero modes change neither):
 *   bf16 -> float, f16 -> float: exact (every bf16 and f16 value is a float; a NaN keeps
 *     its sign and payload);
 *   float -> bf16, float -> f16: round to nearest, ties to even, including the f16
 *     subnormals; a finite value at or past the halfway point above the largest finite
 *     value becomes an infinity of its sign; a NaN becomes a quiet NaN of its sign (the
 *     payload's top bits kept, the quiet bit set).
 * Every function is branch-free (selects written as masks: GCC does not if-convert chains
 * of ?: here), so the CPU loops over a chunk vectorise. */
#ifndef DPZO_KERNELS_ZO_DTYPE_H
#define DPZO_KERNELS_ZO_DTYPE_H

#include <stdint.h>
#include <string.h>
#include "zo_core.h" /* DPZO_HD */

DPZO_HD uint32_t dpzo_hd_f32_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)__float_as_uint(x);
#else
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

DPZO_HD float dpzo_hd_f32_of(uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
#endif
}

/* c ? a : b for c = 0 or 1, as mask arithmetic. */
DPZO_HD uint32_t dpzo_hd_sel(uint32_t c, uint32_t a, uint32_t b)
{
    return b ^ ((a ^ b) & (0u - c));
}

/* bf16 is the top half of a float. */
DPZO_HD float dpzo_hd_bf16_to_f32(uint16_t h) { return dpzo_hd_f32_of((uint32_t)h << 16); }

DPZO_HD uint16_t dpzo_hd_f32_to_bf16(float x)
{
    uint32_t u = dpzo_hd_f32_bits(x);
    /* adding 0x7fff plus the kept part's lowest bit rounds the dropped half to nearest,
     * ties to even; a carry runs into the exponent (the largest finite values round up
     * to the infinity's pattern 0x7f80). No overflow of u: the largest non-NaN pattern is
     * 0xff800000. */
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t quiet_nan = (u >> 16) | 0x0040u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

/* f16: sign, 5 exponent bits (bias 15), 10 fraction bits. */
DPZO_HD float dpzo_hd_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu, m = (uint32_t)h & 0x3ffu;
    uint32_t normal = sign | ((e + (127u - 15u)) << 23) | (m << 13);
    uint32_t inf_nan = sign | 0x7f800000u | (m << 13);
    /* a subnormal (or zero) is m 2^-24: (float)m is exact (m < 2^10) and the product by a
     * power of two is exact, a normal float (>= 2^-24) or +0 */
    uint32_t sub = sign | dpzo_hd_f32_bits((float)(int32_t)m * 0x1p-24f);
    return dpzo_hd_f32_of(dpzo_hd_sel(e == 31u, inf_nan, dpzo_hd_sel(e == 0u, sub, normal)));
}

DPZO_HD uint16_t dpzo_hd_f32_to_f16(float x)
{
    uint32_t u = dpzo_hd_f32_bits(x);
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    /* normal results (|x| >= 2^-14, float pattern 0x38800000): drop 13 fraction bits
     * rounding to nearest even as for bf16, then rebias the exponent (127 -> 15); a
     * carry out of the fraction bumps the exponent */
    uint32_t normal = ((a + 0xfffu + ((a >> 13) & 1u)) >> 13) - ((127u - 15u) << 10);
    /* subnormal results (|x| < 2^-14): the count of 2^-24 units |x| 2^24 rounded to
     * nearest even, which is what the float addition |x| + 0.5 does (the sum lies in
     * [0.5, 1), where the float spacing is 2^-24): the count is the sum's pattern minus
     * 0.5's. The sum is a normal float, so flush-to-zero cannot change it, and an input
     * a denormals-are-zero mode reads as 0 (a float subnormal) has the result 0 anyway. */
    uint32_t sub = dpzo_hd_f32_bits(dpzo_hd_f32_of(a) + 0.5f) - 0x3f000000u;
    /* 0x477ff000 = 65520, halfway between 65504 (the largest f16) and 2^16: it and
     * everything above round to infinity (65504's fraction is odd) */
    uint32_t r = dpzo_hd_sel(a >= 0x38800000u, normal, sub);
    r = dpzo_hd_sel(a >= 0x477ff000u, 0x7c00u, r);
    r = dpzo_hd_sel(a > 0x7f800000u, 0x7e00u | ((a >> 13) & 0x3ffu), r);
    return (uint16_t)(sign | r);
}

#endif
