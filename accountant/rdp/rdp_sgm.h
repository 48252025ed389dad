/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_sgm.h: internals of the sampled-Gaussian RDP shared by its two paths. */
#ifndef DPZO_RDP_SGM_H
#define DPZO_RDP_SGM_H
#include <stddef.h>
#include <stdint.h>
#include "ival.h"

/* Most terms of Euler's transform of the alternating tail (see rdp_sgm.c). */
#define DPZO_SGM_EULER_TERMS 160

int dpzo__is_integer(double x);
/* log(erfc(x)/2) in double (libm erfc, asymptotic series beyond x = 25). */
double dpzo__log_half_erfc(double x);

/* Constants of the linear-arithmetic fractional series for one (q, sigma), and the
 * alpha-independent half of its terms, cached so a curve over many orders shares them. */
#define DPZO_SGM_CURVE_CACHE 400
typedef struct {
    double c, z0, s2, x0sq, l1q;
    int ok;
    size_t n_v0;
    double v0[DPZO_SGM_CURVE_CACHE];
} dpzo__sgm_linear;
/* 0 < q < 1, sigma > 0 */
void dpzo__sgm_linear_init(dpzo__sgm_linear *L, double q, double sigma);
/* Fast RDP for valid inputs (closed forms included; L initialised when 0 < q < 1 and
 * sigma > 0, unused otherwise); NAN only if the sums fail. */
double dpzo__sgm_rdp_fast(dpzo__sgm_linear *L, double q, double sigma, double alpha);

/* Encloses log A_alpha at fractional alpha (rdp_sgm_frac_certified.c); log_a_est and
 * log_log_a (an estimate of log A and of its log) only size precisions and tails. */
void dpzo__sgm_certified_log_a_frac(mpfr_prec_t prec, double q, double sigma, double alpha,
                                    double log_a_est, double log_log_a, ival *log_a);

#endif
