/* kernels/cpu/zo_math.h: private pieces of the exactly specified normal transform
 * (kernels/cpu/philox.c), exposed for tests/test_zo_dir.c and as the reference for the
 * CUDA port. Every function uses only IEEE-754 binary64 +, -, *, /, sqrt (no FMA
 * contraction) and exact bit manipulation, so its result is fully determined. */
#ifndef DPZO_KERNELS_ZO_MATH_H
#define DPZO_KERNELS_ZO_MATH_H

#include <stdint.h>

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

#endif
