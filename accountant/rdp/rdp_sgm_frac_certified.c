/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_sgm_frac_certified.c: certified log A_alpha of the Poisson-sampled
 * Gaussian at fractional orders.
 *
 * Completing the square in the Mironov-Talwar-Zhang terms (rdp_sgm.c) removes every
 * exponential: with c = 1/(2 s^2), z0 = s^2 log(1/q - 1) + 1/2 (so c (2 z0 - 1) =
 * log((1-q)/q)) and erfcx(x) = e^{x^2} erfc(x),
 *   T0_k + T1_k = C(alpha,k) K (erfcx(x_k) + erfcx(y_k)),   K = (1-q)^alpha e^{-c z0^2} / 2,
 *   x_k = (k - z0)/(sqrt2 s),  y_k = (k + z0 - alpha)/(sqrt2 s).
 * So A = K S with S = sum_k C(alpha,k) (erfcx(x_k) + erfcx(y_k)): per term one binomial
 * update and two erfcx enclosures (ival_erfcx: Laplace's continued fraction for x >= 3,
 * MPFR below). Terms k < k0 = ceil(alpha) are summed directly; the alternating tail by
 * Euler's transform with the enclosures of rdp_sgm.c (E_j in [0, b_k0], remainder in
 * [0, b_k0 2^-(J+1)]). Each erfcx is evaluated only to the precision its term needs:
 * 2^-64 of the term's share of min(A, A log A). */
#include <math.h>
#include "rdp_internal.h"
#include "ival.h"
#include "rdp_sgm.h"

#define EULER_MAX 200

typedef struct {
    mpfr_prec_t prec;
    ival alpha, z0, s2, binom, x, e1, e2, t; /* s2 holds 1/(sqrt2 sigma) */
    double log_s_scale; /* log of (S's share of min(A, A log A)) */
} frac_work;

/* log erfcx(x) in double, for sizing precisions only */
static double log_erfcx_d(double x) { return x * x + dpzo__log_half_erfc(x) + M_LN2; }

/* e = erfcx(x_k) + erfcx(y_k), each at the precision its share needs */
static void term(frac_work *w, uint64_t k, double log_binom_d, ival *e)
{
    ival_set_ui(&w->t, (unsigned long)k);
    ival_sub(&w->x, &w->t, &w->z0);
    ival_mul(&w->x, &w->x, &w->s2);
    ival_add(&w->t, &w->t, &w->z0);
    ival_sub(&w->t, &w->t, &w->alpha);
    ival_mul(&w->t, &w->t, &w->s2);
    ival *args[2] = {&w->x, &w->t}, *outs[2] = {&w->e1, &w->e2};
    for (int i = 0; i < 2; i++) {
        double need = 64.0 + (log_binom_d + log_erfcx_d(ival_mid_d(args[i])) - w->log_s_scale)
                                 / M_LN2;
        mpfr_prec_t bits = !(need < (double)w->prec) ? w->prec : need < 24.0 ? 24
                                                                            : (mpfr_prec_t)need;
        ival tmp;
        ival_init(&tmp, bits);
        ival_erfcx(&tmp, args[i]);
        ival_set(outs[i], &tmp);
        ival_clear(&tmp);
    }
    ival_add(e, &w->e1, &w->e2);
}

void dpzo__sgm_certified_log_a_frac(mpfr_prec_t prec, double q, double sigma, double alpha,
                                    double log_a_est, double log_log_a, ival *log_a)
{
    frac_work w;
    ival *all[] = {&w.alpha, &w.z0, &w.s2, &w.binom, &w.x, &w.e1, &w.e2, &w.t};
    for (size_t i = 0; i < 8; i++)
        ival_init(all[i], prec);
    w.prec = prec;
    ival qv, l1q, c, logk, sum, e, tmp;
    ival *mine[] = {&qv, &l1q, &c, &logk, &sum, &e, &tmp};
    for (size_t i = 0; i < 7; i++)
        ival_init(mine[i], prec);

    /* z0, sqrt2 sigma, c and log K = alpha log1p(-q) - c z0^2 - log 2 */
    ival_set_d(&qv, q);
    ival_neg(&tmp, &qv);
    ival_log1p(&l1q, &tmp);
    ival_log(&tmp, &qv);
    ival_sub(&w.z0, &l1q, &tmp); /* log((1-q)/q) */
    ival_set_d(&tmp, sigma);
    ival_mul(&tmp, &tmp, &tmp);
    ival_mul(&w.z0, &w.z0, &tmp);
    ival_add(&tmp, &tmp, &tmp); /* 2 sigma^2 */
    ival_set_ui(&e, 1);
    ival_div(&c, &e, &tmp);
    ival_set_d(&tmp, 0.5);
    ival_add(&w.z0, &w.z0, &tmp);
    ival_set_ui(&tmp, 2);
    ival_sqrt(&w.s2, &tmp);
    ival_set_d(&tmp, sigma);
    ival_mul(&w.s2, &w.s2, &tmp);
    ival_set_ui(&tmp, 1);
    ival_div(&w.s2, &tmp, &w.s2); /* 1/(sqrt2 sigma) */
    ival_set_d(&w.alpha, alpha);
    ival_mul(&logk, &w.alpha, &l1q);
    ival_mul(&tmp, &w.z0, &w.z0);
    ival_mul(&tmp, &tmp, &c);
    ival_sub(&logk, &logk, &tmp);
    ival_set_ui(&tmp, 2);
    ival_log(&tmp, &tmp);
    ival_sub(&logk, &logk, &tmp);
    double log_k_d = ival_mid_d(&logk);
    w.log_s_scale = log_a_est - log_k_d + (log_log_a < 0.0 ? log_log_a : 0.0);

    /* direct terms k < k0 */
    uint64_t k0 = (uint64_t)ceil(alpha);
    ival_set_ui(&sum, 0);
    ival_set_ui(&w.binom, 1); /* |C(alpha, k)| */
    double log_binom_d = 0.0;
    int sign = 1;
    for (uint64_t k = 0; k < k0; k++) {
        term(&w, k, log_binom_d, &e);
        ival_mul(&e, &e, &w.binom);
        if (sign < 0)
            ival_neg(&e, &e);
        ival_add(&sum, &sum, &e);
        /* |C(alpha, k+1)| = |C(alpha, k)| |alpha - k| / (k + 1) */
        ival_set_ui(&tmp, (unsigned long)k);
        ival_sub(&tmp, &w.alpha, &tmp);
        if (mpfr_sgn(tmp.hi) < 0) {
            ival_neg(&tmp, &tmp);
            sign = -sign;
        }
        ival_mul(&w.binom, &w.binom, &tmp);
        ival_set_ui(&tmp, (unsigned long)(k + 1));
        ival_div(&w.binom, &w.binom, &tmp);
        log_binom_d += log(fabs((alpha - (double)k) / ((double)k + 1.0)));
    }

    /* Euler's transform of the alternating tail */
    ival b[EULER_MAX + 1];
    size_t n_b = 0, j_max = 0;
    for (uint64_t k = k0; n_b <= j_max; k++, n_b++) {
        ival_init(&b[n_b], prec);
        term(&w, k, log_binom_d, &e);
        ival_mul(&b[n_b], &e, &w.binom);
        if (n_b == 0) {
            double need = (log(ival_hi_d(&b[0])) - w.log_s_scale) / M_LN2 + 58.0;
            j_max = !(need > 0.0) ? 0 : need >= EULER_MAX ? EULER_MAX : (size_t)ceil(need);
        }
        ival_set_ui(&tmp, (unsigned long)k);
        ival_sub(&tmp, &tmp, &w.alpha); /* k > alpha here */
        ival_mul(&w.binom, &w.binom, &tmp);
        ival_set_ui(&tmp, (unsigned long)(k + 1));
        ival_div(&w.binom, &w.binom, &tmp);
        log_binom_d += log(((double)k - alpha) / ((double)k + 1.0));
    }
    ival b0, euler;
    ival_init(&b0, prec);
    ival_init(&euler, prec);
    ival_set(&b0, &b[0]);
    ival_set_ui(&euler, 0);
    for (size_t j = 0; j <= j_max; j++) {
        ival_set(&tmp, &b[0]); /* E_j, provably in [0, b_k0] */
        if (mpfr_sgn(tmp.lo) < 0)
            mpfr_set_zero(tmp.lo, 1);
        if (mpfr_cmp(tmp.hi, b0.hi) > 0)
            mpfr_set(tmp.hi, b0.hi, MPFR_RNDU);
        mpfr_div_2ui(tmp.lo, tmp.lo, (unsigned long)j + 1, MPFR_RNDD);
        mpfr_div_2ui(tmp.hi, tmp.hi, (unsigned long)j + 1, MPFR_RNDU);
        ival_add(&euler, &euler, &tmp);
        for (size_t i = 0; i + j < j_max; i++)
            ival_sub(&b[i], &b[i], &b[i + 1]);
    }
    mpfr_set_zero(b0.lo, 1); /* remainder in [0, b_k0 2^-(J+1)] */
    mpfr_div_2ui(b0.hi, b0.hi, (unsigned long)j_max + 1, MPFR_RNDU);
    ival_add(&euler, &euler, &b0);
    if (sign < 0)
        ival_neg(&euler, &euler);
    ival_add(&sum, &sum, &euler);

    ival_log(log_a, &sum);
    ival_add(log_a, log_a, &logk);

    for (size_t i = 0; i < n_b; i++)
        ival_clear(&b[i]);
    ival_clear(&b0);
    ival_clear(&euler);
    for (size_t i = 0; i < 7; i++)
        ival_clear(mine[i]);
    for (size_t i = 0; i < 8; i++)
        ival_clear(all[i]);
}
