/* accountant/rdp_sgm.h: internals of the sampled-Gaussian RDP shared by its two paths. */
#ifndef DPZO_RDP_SGM_H
#define DPZO_RDP_SGM_H
#include <stdint.h>

#define DPZO_SGM_MAX_TERMS 2000000u
/* Most terms of Euler's transform of the alternating tail (see rdp_sgm.c). */
#define DPZO_SGM_EULER_TERMS 160

int dpzo__is_integer(double x);
/* log A_alpha for 0 < q < 1, sigma > 0 (fast path). */
double dpzo__sgm_log_a_int(double q, double sigma, double alpha);
double dpzo__sgm_log_a_frac(double q, double sigma, double alpha, uint64_t max_terms);

#endif
