/* accountant/ival.c: outward-rounded interval arithmetic on MPFR (see ival.h). */
#include "ival.h"

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

void ival_hull_zero(ival *r, const ival *a)
{
    ival_set(r, a);
    if (mpfr_sgn(r->lo) > 0)
        mpfr_set_zero(r->lo, 1);
    if (mpfr_sgn(r->hi) < 0)
        mpfr_set_zero(r->hi, 1);
}

void ival_add(ival *r, const ival *a, const ival *b)
{
    mpfr_add(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_add(r->hi, a->hi, b->hi, MPFR_RNDU);
}

void ival_sub(ival *r, const ival *a, const ival *b)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_sub(t, a->lo, b->hi, MPFR_RNDD);
    mpfr_sub(r->hi, a->hi, b->lo, MPFR_RNDU);
    mpfr_swap(r->lo, t);
    mpfr_clear(t);
}

void ival_neg(ival *r, const ival *a)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_neg(t, a->hi, MPFR_RNDD);
    mpfr_neg(r->hi, a->lo, MPFR_RNDU);
    mpfr_swap(r->lo, t);
    mpfr_clear(t);
}

/* Products of all endpoint pairs; the min rounded down and the max rounded up. */
void ival_mul(ival *r, const ival *a, const ival *b)
{
    mpfr_prec_t p = mpfr_get_prec(r->lo);
    mpfr_t lo, hi, t;
    mpfr_inits2(p, lo, hi, t, (mpfr_ptr)0);
    mpfr_mul(lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_mul(hi, a->lo, b->lo, MPFR_RNDU);
    mpfr_mul(t, a->lo, b->hi, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_mul(t, a->lo, b->hi, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_mul(t, a->hi, b->lo, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_mul(t, a->hi, b->lo, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_mul(t, a->hi, b->hi, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_mul(t, a->hi, b->hi, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_swap(r->lo, lo);
    mpfr_swap(r->hi, hi);
    mpfr_clears(lo, hi, t, (mpfr_ptr)0);
}

void ival_div(ival *r, const ival *a, const ival *b)
{
    mpfr_prec_t p = mpfr_get_prec(r->lo);
    mpfr_t lo, hi, t;
    mpfr_inits2(p, lo, hi, t, (mpfr_ptr)0);
    mpfr_div(lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_div(hi, a->lo, b->lo, MPFR_RNDU);
    mpfr_div(t, a->lo, b->hi, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_div(t, a->lo, b->hi, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_div(t, a->hi, b->lo, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_div(t, a->hi, b->lo, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_div(t, a->hi, b->hi, MPFR_RNDD);
    mpfr_min(lo, lo, t, MPFR_RNDD);
    mpfr_div(t, a->hi, b->hi, MPFR_RNDU);
    mpfr_max(hi, hi, t, MPFR_RNDU);
    mpfr_swap(r->lo, lo);
    mpfr_swap(r->hi, hi);
    mpfr_clears(lo, hi, t, (mpfr_ptr)0);
}

#define IVAL_MONOTONE(name, fn)                                                       \
    void name(ival *r, const ival *a)                                                 \
    {                                                                                 \
        fn(r->lo, a->lo, MPFR_RNDD);                                                  \
        fn(r->hi, a->hi, MPFR_RNDU);                                                  \
    }
IVAL_MONOTONE(ival_exp, mpfr_exp)
IVAL_MONOTONE(ival_expm1, mpfr_expm1)
IVAL_MONOTONE(ival_log1p, mpfr_log1p)

void ival_erfc(ival *r, const ival *a)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_erfc(t, a->hi, MPFR_RNDD); /* erfc is decreasing */
    mpfr_erfc(r->hi, a->lo, MPFR_RNDU);
    mpfr_swap(r->lo, t);
    mpfr_clear(t);
}

void ival_min(ival *r, const ival *a, const ival *b)
{
    mpfr_min(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_min(r->hi, a->hi, b->hi, MPFR_RNDU);
}

void ival_max(ival *r, const ival *a, const ival *b)
{
    mpfr_max(r->lo, a->lo, b->lo, MPFR_RNDD);
    mpfr_max(r->hi, a->hi, b->hi, MPFR_RNDU);
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
    if (mpfr_sgn(a->lo) <= 0)
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
    if (mpfr_sgn(a->lo) <= 0)
        mpfr_set_zero(r->lo, 1);
    else
        mpfr_sqrt(r->lo, a->lo, MPFR_RNDD);
    if (mpfr_sgn(a->hi) <= 0)
        mpfr_set_zero(r->hi, 1);
    else
        mpfr_sqrt(r->hi, a->hi, MPFR_RNDU);
}
