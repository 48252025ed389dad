/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cpu/zo_math.h: private pieces of the exactly specified normal transform
 * (kernels/cpu/philox.c), exposed for tests/test_zo_dir.c and as the reference for the
 * CUDA port (the scalar cores themselves live in kernels/zo_core.h, one source for both).
 * Every function uses only IEEE-754 binary64 +, -, *, /, sqrt (no FMA contraction) and
 * exact bit manipulation, so its result is fully determined. */
#ifndef DPZO_KERNELS_ZO_MATH_H
#define DPZO_KERNELS_ZO_MATH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "dpzo/zo_dir.h"
#include "../zo_core.h" /* the scalar cores, shared with the CUDA kernels */

/* Vector width dispatch for zo_dir.c's loops over a chunk's elements: GCC compiles
 * AVX-512, AVX2 and baseline versions and picks one at load time (dpzo__dir_raw_blocks
 * dispatches by itself, see philox.c). The results do not depend on it: each vector lane
 * performs the scalar code's IEEE operations in the same order (-ffp-contract=off, no
 * reassociation). */
#include "dpzo_clones.h" /* DPZO_KERNEL_CLONES */

/* Natural logarithm; -inf at +-0, NaN below 0 or at NaN, +inf at +inf. Within 1 ulp over
 * the positive doubles (tested against libm). */
double dpzo__log(double x);
/* sin(x), cos(x) for |x| <= pi/4 (Taylor polynomials; outside that range the truncation
 * error grows). Within 1 ulp there (tested against libm). */
double dpzo__sin_kernel(double x);
double dpzo__cos_kernel(double x);
/* sin and cos of the angle 2 pi b / 2^32 (b turns of 2^-32), with the exact quadrant
 * reduction of philox.c. */
void dpzo__sincos_turn32(uint32_t b, double *s, double *c);

/* +1 or -1 from the top bit of w, without a branch (the RADEMACHER element, philox.c
 * section 2). */
static inline double dpzo__sign_of(uint32_t w) { return dpzo_hd_sign_of(w); }

/* The blocks of the batched generator (256 elements). */
#define DPZO_RAW_CHUNK 64
/* The raw values (before dir->scale) of elements 4 m0 .. 4 (m0 + nb) - 1, nb <=
 * DPZO_RAW_CHUNK (larger nb is clamped), into v[0 .. 4 nb): the same doubles as the scalar
 * path (dpzo_philox4x32_10 of the section 2 counter, then dpzo_normal_pair or the signs),
 * computed a chunk at a time in vectorised loops. */
void dpzo__dir_raw_blocks(const dpzo_dir *dir, uint64_t m0, size_t nb, double *v);
/* The implementations of dpzo__dir_raw_blocks (x86-64: vector Philox with SSE2, AVX2 or
 * AVX-512 and the stages compiled for that ISA; elsewhere only PORTABLE). */
enum { DPZO_RAW_PORTABLE = 0, DPZO_RAW_SSE2 = 1, DPZO_RAW_AVX2 = 2, DPZO_RAW_AVX512 = 3 };
/* Forces dpzo__dir_raw_blocks onto one implementation (-1: the best the CPU supports, the
 * default); returns -1 (and changes nothing) when this CPU or build lacks it. Process-wide:
 * for tests and benchmarks (every implementation gives the same bits). */
int dpzo__dir_raw_impl(int impl);

/* v[k] = (float)((double)v[k] + alpha * (double)u[k]), k < n: dpzo_dir_axpy's operation on
 * direction elements already generated (the trainer's direction cache), dispatched by
 * vector width like the generator's own loops. u and v must not overlap. */
void dpzo__axpy_floats(size_t n, double alpha, const float *u, float *v);

#endif
