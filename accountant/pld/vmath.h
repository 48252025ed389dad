/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/vmath.h: elementary functions over arrays, for the PLD discretisation.
 *
 * dpzo__vm_erfc / _log / _expm1 fill y[i] = f(x[i]) for i < n. Where glibc's vector math
 * library (libmvec, glibc 2.35 or later on x86-64) is linked and the CPU has AVX2 and FMA,
 * its 4-wide AVX2 versions are called (the same ones on AVX-512 machines, so results do not
 * depend on which of the two a machine has); elsewhere the scalar libm functions.
 *
 * Accuracy. glibc's tests hold its scalar functions and libmvec's to a few ulp (the largest
 * errors its test suite has measured are listed in the manual's "Known Maximum Errors in
 * Math Functions"; libmvec's are meant to stay within 4 ulp). These are measurements, not
 * proofs: every bound dpzo derives from these functions assumes DPZO__VM_ULPS ulp, more
 * than twice those, i.e. a relative error of at most DPZO__VM_REL for finite normal
 * results, and test_vmath checks the functions this build calls against 40-digit
 * references (mpmath) over the arguments the discretisation uses, failing at half the
 * assumption. */
#ifndef DPZO_VMATH_H
#define DPZO_VMATH_H

#include <float.h>
#include <stddef.h>

#define DPZO__VM_ULPS 10.0
/* an ulp of a normal double x is at most 2^-52 |x| */
#define DPZO__VM_REL (DPZO__VM_ULPS * DBL_EPSILON)

void dpzo__vm_erfc(const double *x, double *y, size_t n);
void dpzo__vm_log(const double *x, double *y, size_t n);
void dpzo__vm_expm1(const double *x, double *y, size_t n);
/* 1 where the vector versions are in use, 0 where the scalar ones are; force >= 0 sets it
 * (tests: 0 compares the scalar path; a request for 1 is ignored where they are missing) */
int dpzo__vm_vector(int force);

#endif
