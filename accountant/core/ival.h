/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/ival.h: closed intervals [lo, hi] of MPFR numbers with outward rounding.
 *
 * Every operation rounds lo down and hi up, so the true result of the exact real
 * operation on any points of the operands lies in the result. MPFR's functions are
 * correctly rounded, which makes each directed rounding a proven bound. This is
 * what the certified path of the accountant is written in. */
#ifndef DPZO_IVAL_H
#define DPZO_IVAL_H

#include <mpfr.h>

typedef struct {
    mpfr_t lo, hi;
} ival;

void ival_init(ival *x, mpfr_prec_t prec);
void ival_clear(ival *x);
void ival_set_d(ival *r, double d);          /* exact for prec >= 53 */
void ival_set_ui(ival *r, unsigned long u);
void ival_set(ival *r, const ival *a);
void ival_add(ival *r, const ival *a, const ival *b);
void ival_sub(ival *r, const ival *a, const ival *b);
void ival_mul(ival *r, const ival *a, const ival *b);
void ival_div(ival *r, const ival *a, const ival *b); /* b must not contain 0 */
void ival_neg(ival *r, const ival *a);
void ival_exp(ival *r, const ival *a);
void ival_expm1(ival *r, const ival *a);
void ival_log(ival *r, const ival *a);   /* lo <= 0 gives -inf below */
void ival_log1p(ival *r, const ival *a);
void ival_sqrt(ival *r, const ival *a);
void ival_erfc(ival *r, const ival *a);
void ival_erfcx(ival *r, const ival *a); /* e^{x^2} erfc(x) */
void ival_min(ival *r, const ival *a, const ival *b);
void ival_max(ival *r, const ival *a, const ival *b);
double ival_lo_d(const ival *a);  /* rounded down to double */
double ival_hi_d(const ival *a);  /* rounded up to double */
double ival_mid_d(const ival *a);

#endif
