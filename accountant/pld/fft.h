/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/fft.h: complex FFT of power-of-two length, used to compose privacy-loss
 * distributions. Single-threaded, in place, natural order in and out.
 *
 * Method: depth-first (cache-oblivious) radix-4 decimation in frequency, with one
 * twiddle-free radix-2 stage at the end when log2(n) is odd, followed by a cache-blocked
 * in-place bit-reversal permutation (which also applies the exact 1/n of the inverse).
 * Twiddle factors are precomputed per stage in the plan; a plan is read-only after
 * creation, so one plan may be used by several threads at once.
 *
 * Twiddle accuracy. Only angles in [0, pi/4] are evaluated: in long double (64-bit
 * mantissa on x86_64), as w = A[hi] * B[lo] with A, B from cosl/sinl (error about
 * 2^-60), then rounded once to double; every other twiddle follows by exact symmetries
 * (swapping and negating real and imaginary parts). Hence each stored twiddle w'
 * satisfies |w' - w| <= u + 2^-59 < mu := 2u, u = 2^-53. Where long double has fewer
 * than 64 bits, each angle is evaluated directly in double (argument error <= 1.6u,
 * sin/cos error <= 1 ulp) and the bound uses mu := 4u.
 *
 * Error bound (dpzo__fft_error_bound). Higham, "Accuracy and Stability of Numerical
 * Algorithms", 2nd ed., Thm 24.2: a radix-2 Cooley-Tukey FFT whose twiddles have error
 * <= mu computes y' with ||y' - y||_2 <= ((1 + eta0)^L - 1) ||y||_2
 * <= L eta0 / (1 - L eta0) ||y||_2, L = log2 n, eta0 = mu + gamma4 (sqrt(2) + mu),
 * gamma4 = 4u / (1 - 4u). The proof writes the FFT as y = A_L ... A_1 x with each
 * A_k = sqrt(2) x (unitary) and shows fl(A_k z) = (A_k + dA_k) z with
 * ||dA_k|| <= eta0 ||A_k||; the product of the norms is sqrt(n) = ||y|| / ||x||.
 * Here one radix-4 step is, exactly, D B2 B1: B1 and B2 are radix-2 butterfly stages
 * whose only twiddles are 1 and -i (+i for the inverse), and multiplying by +-i is exact
 * (a swap and a sign change), so each costs one rounded complex addition per entry,
 * ||dB|| <= u ||B||; D is the diagonal of twiddles w^j, w^2j, w^3j, applied with the
 * standard complex product, so fl(w' z) = w z (1 + e), |e| <= mu + sqrt(2) gamma2 (1 + mu)
 * (Higham Lemma 3.5). A radix-4 step therefore has relative perturbation
 * (1 + u)^2 (1 + mu + sqrt(2) gamma2 (1 + mu)) - 1 <= (1 + eta0)^2 - 1, the final
 * twiddle-free radix-2 stage (odd L) has u <= eta0, and the bit reversal and the
 * power-of-two scaling are exact, so Higham's bound holds with L = log2 n.
 * dpzo__fft_error_bound returns it times a safety factor of 2, rounded up.
 * The same induction along the butterfly graph (every intermediate value is a sum of
 * inputs times unit-modulus factors) gives the componentwise form
 * |y'_j - y_j| <= ((1 + eta0)^L - 1) sum_m |x_m| <= eta(n) sum_m |x_m|.
 * Both assume no overflow and ignore underflow (each underflowing operation adds at
 * most 2^-1074 absolute error; the 1/n scaling of the inverse is exact unless the
 * result is subnormal). */
#ifndef DPZO_FFT_H
#define DPZO_FFT_H

#include <complex.h>
#include <stddef.h>

typedef struct dpzo__fft_plan dpzo__fft_plan;

/* n must be a power of two >= 2 (and < 2^58 with 64-bit size_t). Returns NULL on bad n
 * or allocation failure. */
dpzo__fft_plan *dpzo__fft_plan_create(size_t n);
void dpzo__fft_plan_free(dpzo__fft_plan *plan);
/* Bytes dpzo__fft_plan_create(n) will allocate (so callers can check a memory limit
 * first); 0 for a bad n. The transforms themselves allocate nothing (they use 8 KiB
 * of stack). */
size_t dpzo__fft_plan_bytes(size_t n);
/* In place: X_j = sum_m x_m exp(-2 pi i j m / n). */
void dpzo__fft_forward(const dpzo__fft_plan *plan, double complex *x);
/* In place, normalised: x_m = (1/n) sum_j X_j exp(+2 pi i j m / n). */
void dpzo__fft_inverse(const dpzo__fft_plan *plan, double complex *x);
/* eta(n): a proven bound such that for the computed y' = fl(FFT(x)) (either direction,
 * before the 1/n scaling, which is exact for powers of two),
 * ||y' - FFT(x)||_2 <= eta(n) * ||FFT(x)||_2. See the comment at the top of this file.
 * Returns +inf for a bad n. */
double dpzo__fft_error_bound(size_t n);

#endif
