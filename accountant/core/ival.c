/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/ival.c: outward-rounded interval arithmetic on MPFR (see ival.h). */
#include "ival.h"

/* A NaN end (inf - inf, 0 * inf, an operand already NaN) says nothing about where the
 * value lies: it is widened to the whole line on that side, so no later operation can
 * mistake it for a finite or small end (mpfr_min/mpfr_max ignore NaN operands and
 * mpfr_sgn reads NaN as 0). */
static void widen_nan(ival *r)
{
    if (mpfr_nan_p(r->lo))
        mpfr_set_inf(r->lo, -1);
    if (mpfr_nan_p(r->hi))
        mpfr_set_inf(r->hi, 1);
}

void ival_init(ival *x, mpfr_prec_t prec)
{
    mpfr_init2(x->lo, prec);
    mpfr_init2(x->hi, prec);
    mpfr_set_zero(x->lo, 1);
    mpfr_set_zero(x->hi, 1);
}

void ival_clear(ival *x)
{
    mpfr_clear(x->lo);
    mpfr_clear(x->hi);
}

void ival_set_d(ival *r, double d)
{
    mpfr_set_d(r->lo, d, MPFR_RNDD);
    mpfr_set_d(r->hi, d, MPFR_RNDU);
}

void ival_set_ui(ival *r, unsigned long u)
{
    mpfr_set_ui(r->lo, u, MPFR_RNDD);
    mpfr_set_ui(r->hi, u, MPFR_RNDU);
}

void ival_set(ival *r, const ival *a)
{
    mpfr_set(r->lo, a->lo, MPFR_RNDD);
    mpfr_set(r->hi, a->hi, MPFR_RNDU);
}

void ival_add(ival *r, const ival *a, const ival *b)
{
    mpfr_add(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_add(r->hi, a->hi, b->hi, MPFR_RNDU);
    widen_nan(r);
}

void ival_sub(ival *r, const ival *a, const ival *b)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_sub(t, a->lo, b->hi, MPFR_RNDD);
    mpfr_sub(r->hi, a->hi, b->lo, MPFR_RNDU);
    mpfr_swap(r->lo, t);
    mpfr_clear(t);
    widen_nan(r);
}

void ival_neg(ival *r, const ival *a)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_neg(t, a->hi, MPFR_RNDD);
    mpfr_neg(r->hi, a->lo, MPFR_RNDU);
    mpfr_swap(r->lo, t);
    mpfr_clear(t);
    widen_nan(r);
}

typedef int (*mpfr_binop)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/* op over all endpoint pairs; the min rounded down and the max rounded up (products, and
 * quotients by an interval without 0, take their extremes at endpoints). */
static void endpoint_hull(ival *r, const ival *a, const ival *b, mpfr_binop op)
{
    mpfr_prec_t p = mpfr_get_prec(r->lo);
    mpfr_t lo, hi, t;
    mpfr_inits2(p, lo, hi, t, (mpfr_ptr)0);
    mpfr_set_inf(lo, 1);
    mpfr_set_inf(hi, -1);
    mpfr_srcptr xs[2] = {a->lo, a->hi}, ys[2] = {b->lo, b->hi};
    int undefined = 0; /* 0 * inf, inf / inf, a NaN operand: no enclosure but the line */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            op(t, xs[i], ys[j], MPFR_RNDD);
            undefined |= mpfr_nan_p(t);
            mpfr_min(lo, lo, t, MPFR_RNDD);
            op(t, xs[i], ys[j], MPFR_RNDU);
            undefined |= mpfr_nan_p(t);
            mpfr_max(hi, hi, t, MPFR_RNDU);
        }
    if (undefined) {
        mpfr_set_inf(lo, -1);
        mpfr_set_inf(hi, 1);
    }
    mpfr_swap(r->lo, lo);
    mpfr_swap(r->hi, hi);
    mpfr_clears(lo, hi, t, (mpfr_ptr)0);
}

void ival_mul(ival *r, const ival *a, const ival *b) { endpoint_hull(r, a, b, mpfr_mul); }
void ival_div(ival *r, const ival *a, const ival *b) { endpoint_hull(r, a, b, mpfr_div); }

#define IVAL_MONOTONE(name, fn)                                                       \
    void name(ival *r, const ival *a)                                                 \
    {                                                                                 \
        fn(r->lo, a->lo, MPFR_RNDD);                                                  \
        fn(r->hi, a->hi, MPFR_RNDU);                                                  \
        widen_nan(r);                                                                 \
    }
IVAL_MONOTONE(ival_exp, mpfr_exp)
IVAL_MONOTONE(ival_expm1, mpfr_expm1)
IVAL_MONOTONE(ival_log1p, mpfr_log1p)

/* Brackets D(x) = x + (1/2)/(x + 1/(x + (3/2)/(x + ...))), Laplace's continued fraction
 * with erfc(x) = e^{-x^2} / (sqrt(pi) D), for a point x >= 3: d_lo <= D <= d_hi.
 * MPFR's erfc is correct but slow there (up to 0.3 ms at x ~ 10). The partial numerators
 * and denominators are positive, so the convergents D_n alternate around D (even ones
 * below, odd ones above) and two consecutive ones bracket it; their numerators and
 * denominators are carried as positive intervals with directed rounding. */
static void laplace_cf(mpfr_t d_lo, mpfr_t d_hi, mpfr_srcptr x)
{
    mpfr_prec_t p = mpfr_get_prec(d_lo) + 16;
    mpfr_t p0l, p0h, p1l, p1h, q0l, q0h, q1l, q1h, t, an;
    mpfr_inits2(p, p0l, p0h, p1l, p1h, q0l, q0h, q1l, q1h, t, an, (mpfr_ptr)0);
    /* P_{-1} = 1, Q_{-1} = 0; P_0 = x, Q_0 = 1 */
    mpfr_set_ui(p0l, 1, MPFR_RNDD);
    mpfr_set_ui(p0h, 1, MPFR_RNDU);
    mpfr_set_zero(q0l, 1);
    mpfr_set_zero(q0h, 1);
    mpfr_set(p1l, x, MPFR_RNDD);
    mpfr_set(p1h, x, MPFR_RNDU);
    mpfr_set_ui(q1l, 1, MPFR_RNDD);
    mpfr_set_ui(q1h, 1, MPFR_RNDU);
    mpfr_set(d_lo, x, MPFR_RNDD); /* D_0 = x < D */
    mpfr_set_inf(d_hi, 1);
    for (unsigned long n = 1; n < 1000000; n++) {
        mpfr_set_ui(an, n, MPFR_RNDN);
        mpfr_div_2ui(an, an, 1, MPFR_RNDN); /* n/2, exact */
        /* P_n = x P_{n-1} + a_n P_{n-2}, lower and upper; same for Q */
        mpfr_mul(t, an, p0l, MPFR_RNDD);
        mpfr_fma(p0l, x, p1l, t, MPFR_RNDD);
        mpfr_mul(t, an, p0h, MPFR_RNDU);
        mpfr_fma(p0h, x, p1h, t, MPFR_RNDU);
        mpfr_mul(t, an, q0l, MPFR_RNDD);
        mpfr_fma(q0l, x, q1l, t, MPFR_RNDD);
        mpfr_mul(t, an, q0h, MPFR_RNDU);
        mpfr_fma(q0h, x, q1h, t, MPFR_RNDU);
        mpfr_swap(p0l, p1l);
        mpfr_swap(p0h, p1h);
        mpfr_swap(q0l, q1l);
        mpfr_swap(q0h, q1h);
        /* convergents are formed (two divisions) only every fourth step: an even one,
         * then the odd one after it, and the gap between them is tested */
        if (n % 4 == 0)
            mpfr_div(d_lo, p1l, q1h, MPFR_RNDD); /* even convergents lie below D */
        else if (n % 4 == 1 || n == 1) {
            mpfr_div(d_hi, p1h, q1l, MPFR_RNDU); /* odd convergents lie above D */
            mpfr_sub(t, d_hi, d_lo, MPFR_RNDU);
            mpfr_div(t, t, d_lo, MPFR_RNDU);
            if (mpfr_cmp_ui_2exp(t, 1, 4 - (long)mpfr_get_prec(d_lo)) < 0) /* ends rounded too */
                break;
        }
    }
    mpfr_clears(p0l, p0h, p1l, p1h, q0l, q0h, q1l, q1h, t, an, (mpfr_ptr)0);
}

/* 1/sqrt(pi) rounded down (dir < 0) or up. */
static void inv_sqrt_pi(mpfr_t r, int dir)
{
    mpfr_const_pi(r, dir < 0 ? MPFR_RNDU : MPFR_RNDD);
    mpfr_rec_sqrt(r, r, dir < 0 ? MPFR_RNDD : MPFR_RNDU);
}

/* Bound on erfc(x) (dir < 0: from below, else from above) at a point x >= 3. */
static void erfc_cf(mpfr_t r, mpfr_srcptr x, int dir)
{
    mpfr_prec_t p = mpfr_get_prec(r) + 8;
    mpfr_t d_lo, d_hi, e, t;
    mpfr_inits2(p, d_lo, d_hi, e, t, (mpfr_ptr)0);
    laplace_cf(d_lo, d_hi, x);
    mpfr_sqr(e, x, dir < 0 ? MPFR_RNDU : MPFR_RNDD);
    mpfr_neg(e, e, MPFR_RNDN);
    mpfr_exp(e, e, dir < 0 ? MPFR_RNDD : MPFR_RNDU);
    inv_sqrt_pi(t, dir);
    mpfr_mul(e, e, t, dir < 0 ? MPFR_RNDD : MPFR_RNDU);
    mpfr_div(r, e, dir < 0 ? d_hi : d_lo, dir < 0 ? MPFR_RNDD : MPFR_RNDU);
    mpfr_clears(d_lo, d_hi, e, t, (mpfr_ptr)0);
}

/* Encloses erfcx(x) = e^{x^2} erfc(x) at a point x in [lo, hi] with one evaluation:
 * the continued fraction's bracket for x >= 3, else MPFR's correctly rounded erfc. */
static void erfcx_bracket(mpfr_t lo, mpfr_t hi, mpfr_srcptr x)
{
    mpfr_prec_t p = mpfr_get_prec(lo) + 8;
    mpfr_t a, b;
    mpfr_inits2(p, a, b, (mpfr_ptr)0);
    if (mpfr_cmp_ui(x, 3) >= 0) {
        laplace_cf(a, b, x); /* D in [a, b] */
        inv_sqrt_pi(lo, -1);
        mpfr_div(lo, lo, b, MPFR_RNDD);
        inv_sqrt_pi(hi, 1);
        mpfr_div(hi, hi, a, MPFR_RNDU);
    } else {
        /* erfc correctly rounded to nearest is within half an ulp: one ulp either side
         * encloses it; e^{x^2} with directed roundings (x^2 may be large for x << 0) */
        mpfr_erfc(a, x, MPFR_RNDN);
        mpfr_nextbelow(a);
        mpfr_sqr(b, x, MPFR_RNDD);
        mpfr_exp(b, b, MPFR_RNDD);
        mpfr_mul(lo, a, b, MPFR_RNDD);
        mpfr_nextabove(a);
        mpfr_nextabove(a);
        mpfr_sqr(b, x, MPFR_RNDU);
        mpfr_exp(b, b, MPFR_RNDU);
        mpfr_mul(hi, a, b, MPFR_RNDU);
    }
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* erfcx is decreasing on the whole real line with |erfcx'(t)| = |2t erfcx(t) - 2/sqrt(pi)|
 * <= 2/sqrt(pi) for t >= 0 and <= 2/sqrt(pi) + 2|t| erfcx(t) for t < 0. One bracket at
 * a->lo gives the upper end; the lower end subtracts the width times that slope bound. */
void ival_erfcx(ival *r, const ival *a)
{
    mpfr_prec_t p = mpfr_get_prec(r->lo);
    mpfr_t lo, hi, w, slope;
    mpfr_inits2(p + 8, lo, hi, w, slope, (mpfr_ptr)0);
    erfcx_bracket(lo, hi, a->lo);
    mpfr_sub(w, a->hi, a->lo, MPFR_RNDU);
    if (mpfr_sgn(w) > 0) {
        mpfr_set_d(slope, 1.1284, MPFR_RNDU); /* > 2/sqrt(pi) = 1.12837... */
        if (mpfr_sgn(a->lo) < 0) {
            mpfr_t t;
            mpfr_init2(t, p + 8);
            mpfr_abs(t, a->lo, MPFR_RNDU);
            mpfr_mul(t, t, hi, MPFR_RNDU);
            mpfr_mul_2ui(t, t, 1, MPFR_RNDU);
            mpfr_add(slope, slope, t, MPFR_RNDU);
            mpfr_clear(t);
        }
        mpfr_mul(w, w, slope, MPFR_RNDU);
        mpfr_sub(lo, lo, w, MPFR_RNDD);
    }
    mpfr_set(r->lo, lo, MPFR_RNDD);
    mpfr_set(r->hi, hi, MPFR_RNDU);
    mpfr_clears(lo, hi, w, slope, (mpfr_ptr)0);
    widen_nan(r);
}

void ival_erfc(ival *r, const ival *a)
{
    mpfr_t lo;
    mpfr_init2(lo, mpfr_get_prec(r->lo));
    /* erfc is decreasing: the lower bound comes from a->hi, the upper from a->lo */
    if (mpfr_cmp_ui(a->hi, 3) >= 0 && mpfr_number_p(a->hi))
        erfc_cf(lo, a->hi, -1);
    else
        mpfr_erfc(lo, a->hi, MPFR_RNDD);
    if (mpfr_cmp_ui(a->lo, 3) >= 0 && mpfr_number_p(a->lo))
        erfc_cf(r->hi, a->lo, 1);
    else
        mpfr_erfc(r->hi, a->lo, MPFR_RNDU);
    mpfr_swap(r->lo, lo);
    mpfr_clear(lo);
    widen_nan(r);
}

void ival_min(ival *r, const ival *a, const ival *b)
{
    mpfr_min(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_min(r->hi, a->hi, b->hi, MPFR_RNDU);
    if (mpfr_nan_p(a->lo) || mpfr_nan_p(b->lo))
        mpfr_set_inf(r->lo, -1);
    if (mpfr_nan_p(a->hi) && mpfr_nan_p(b->hi))
        mpfr_set_inf(r->hi, 1);
}

void ival_max(ival *r, const ival *a, const ival *b)
{
    mpfr_max(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_max(r->hi, a->hi, b->hi, MPFR_RNDU);
    if (mpfr_nan_p(a->hi) || mpfr_nan_p(b->hi))
        mpfr_set_inf(r->hi, 1);
    if (mpfr_nan_p(a->lo) && mpfr_nan_p(b->lo))
        mpfr_set_inf(r->lo, -1);
}

double ival_lo_d(const ival *a) { return mpfr_get_d(a->lo, MPFR_RNDD); }
double ival_hi_d(const ival *a) { return mpfr_get_d(a->hi, MPFR_RNDU); }

double ival_mid_d(const ival *a)
{
    mpfr_t m;
    mpfr_init2(m, mpfr_get_prec(a->lo) + 1);
    mpfr_add(m, a->lo, a->hi, MPFR_RNDN);
    mpfr_div_2ui(m, m, 1, MPFR_RNDN);
    double d = mpfr_get_d(m, MPFR_RNDN);
    mpfr_clear(m);
    return d;
}

/* log and sqrt are defined on the part of the operand that is >= 0 (> 0 for log):
 * a lower end at or below zero gives -inf (log) or 0 (sqrt) below. */
void ival_log(ival *r, const ival *a)
{
    if (mpfr_nan_p(a->hi)) {
        mpfr_set_inf(r->lo, -1);
        mpfr_set_inf(r->hi, 1);
        return;
    }
    if (mpfr_nan_p(a->lo) || mpfr_sgn(a->lo) <= 0)
        mpfr_set_inf(r->lo, -1);
    else
        mpfr_log(r->lo, a->lo, MPFR_RNDD);
    if (mpfr_sgn(a->hi) <= 0)
        mpfr_set_inf(r->hi, -1);
    else
        mpfr_log(r->hi, a->hi, MPFR_RNDU);
}

void ival_sqrt(ival *r, const ival *a)
{
    if (mpfr_nan_p(a->hi)) {
        mpfr_set_zero(r->lo, 1);
        mpfr_set_inf(r->hi, 1);
        return;
    }
    if (mpfr_nan_p(a->lo) || mpfr_sgn(a->lo) <= 0)
        mpfr_set_zero(r->lo, 1);
    else
        mpfr_sqrt(r->lo, a->lo, MPFR_RNDD);
    if (mpfr_sgn(a->hi) <= 0)
        mpfr_set_zero(r->hi, 1);
    else
        mpfr_sqrt(r->hi, a->hi, MPFR_RNDU);
}
