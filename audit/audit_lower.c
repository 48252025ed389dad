/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit_lower.c: a proven lower bound on the epsilon of T Poisson-sampled
 * Gaussian releases from one hypothesis test, for the audit's lower end where the tight
 * accountants cannot run (a noise so small, or a composition so long, that the PLD grid
 * would not fit in memory).
 *
 * The pair: each step releases x_i ~ P1 = (1 - q) N(0, s^2) + q N(1, s^2) on one dataset and
 * x_i ~ Q1 = N(0, s^2) on its neighbour (the realised pairs of audit.c's header comment,
 * in units of the shift). For any set E of outputs, (epsilon, delta)-DP requires
 * P(E) <= e^epsilon Q(E) + delta, so every threshold t gives
 *     epsilon >= log(P(E_t) - delta) - log(Q(E_t)),   E_t = { max_i x_i > t },
 * whenever P(E_t) > delta, with
 *     P(E_t) = 1 - (1 - p1)^T,  p1 = (1 - q) Phi_bar(t / s) + q Phi_bar((t - 1) / s),
 *     Q(E_t) = 1 - (1 - Phi_bar(t / s))^T.
 * With q = 1 the T releases are equivalent to one of noise s / sqrt(T) (their mean is
 * sufficient), and the same formula is used with T = 1 and that noise.
 * The threshold is searched on a grid and refined by golden section (any t is valid: the search only affects how tight
 * the bound is); the bound at each t is evaluated in outward-rounded MPFR interval
 * arithmetic (ival.h), so the returned number is a proven lower bound. */
#include <math.h>
#include "internal.h"
#include "audit_internal.h"
#include "ival.h"

#define PREC 96

/* the lower end of the bound at threshold t (-inf when P(E_t) <= delta) */
static double bound_at(double t, const ival *q, const ival *s, double T, double delta)
{
    ival a, b, p, qq, one, x;
    ival *all[] = {&a, &b, &p, &qq, &one, &x};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ival_init(all[i], PREC);
    ival_set_ui(&one, 1);
    /* Phi_bar(y) = erfc(y / sqrt 2) / 2; a <- Phi_bar(t / s), b <- Phi_bar((t - 1) / s) */
    ival_set_ui(&x, 2);
    ival_sqrt(&x, &x);
    ival_mul(&x, &x, s); /* s sqrt 2 */
    ival_set_d(&a, t);
    ival_div(&a, &a, &x);
    ival_erfc(&a, &a);
    mpfr_div_2ui(a.lo, a.lo, 1, MPFR_RNDD);
    mpfr_div_2ui(a.hi, a.hi, 1, MPFR_RNDU);
    ival_set_d(&b, t);
    ival_sub(&b, &b, &one);
    ival_div(&b, &b, &x);
    ival_erfc(&b, &b);
    mpfr_div_2ui(b.lo, b.lo, 1, MPFR_RNDD);
    mpfr_div_2ui(b.hi, b.hi, 1, MPFR_RNDU);
    /* p1 = (1 - q) a + q b */
    ival_sub(&p, &one, q);
    ival_mul(&p, &p, &a);
    ival_mul(&b, &b, q);
    ival_add(&p, &p, &b);
    ival_min(&p, &p, &one);
    /* P = -expm1(T log1p(-p1)), Q = -expm1(T log1p(-a)) */
    ival_set_d(&x, T);
    ival_neg(&p, &p);
    ival_log1p(&p, &p);
    ival_mul(&p, &p, &x);
    ival_expm1(&p, &p);
    ival_neg(&p, &p);
    ival_neg(&qq, &a);
    ival_log1p(&qq, &qq);
    ival_mul(&qq, &qq, &x);
    ival_expm1(&qq, &qq);
    ival_neg(&qq, &qq);
    /* log(P - delta) - log(Q) */
    ival_set_d(&x, delta);
    ival_sub(&p, &p, &x);
    double out = -INFINITY;
    if (mpfr_sgn(p.lo) > 0 && mpfr_sgn(qq.hi) > 0 && mpfr_number_p(qq.hi)) {
        ival_log(&p, &p);
        ival_log(&qq, &qq);
        ival_sub(&p, &p, &qq);
        out = mpfr_number_p(p.lo) ? ival_lo_d(&p) : -INFINITY;
    }
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ival_clear(all[i]);
    return out;
}

double dpzo__sgm_test_lower(const dpzo__test_pair *pair, double delta, double *threshold)
{
    double best = 0.0, best_t = NAN, best_step = 0.0;
    if (threshold)
        *threshold = NAN;
    const dpzo__test_pair *c = pair;
    if (!(c->q_num > 0.0 && c->q_num <= c->q_den && isfinite(c->q_den))
        || !(c->sigma > 0.0 && isfinite(c->sigma)) || !(c->shift > 0.0 && isfinite(c->shift))
        || !(c->sum >= 1.0 && c->sum <= 9007199254740992.0) || c->releases < 1
        || c->releases > ((uint64_t)1 << 53) || !(delta >= 0.0 && delta < 1.0))
        return 0.0;
    ival qi, s, n;
    ival_init(&qi, PREC);
    ival_init(&s, PREC);
    ival_init(&n, PREC);
    ival_set_d(&qi, c->q_num);
    ival_set_d(&n, c->q_den);
    ival_div(&qi, &qi, &n);
    ival_set_d(&s, c->sum);
    ival_sqrt(&s, &s);
    ival_set_d(&n, c->sigma);
    ival_mul(&s, &s, &n);
    ival_set_d(&n, c->shift);
    ival_div(&s, &s, &n);
    double T = (double)c->releases; /* <= 2^53: exact */
    if (c->q_num == c->q_den && T > 1.0) {
        ival_set_d(&n, T);
        ival_sqrt(&n, &n);
        ival_div(&s, &s, &n);
        T = 1.0;
    }
    ival_clear(&n);
    double sm = mpfr_get_d(s.lo, MPFR_RNDN); /* the grid's scale only */
    /* thresholds around the shifted mode (1 + sm z), in units of the noise (sm z), and
     * between the two means (i / 160: where the noise is so small that both scaled grids
     * collapse onto 0 and 1) */
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i <= 160; i++) {
            double z = pass == 0 ? -10.0 + 0.125 * i : 0.0625 * i;
            double t = pass == 0 ? 1.0 + sm * z : pass == 1 ? sm * z : i / 160.0;
            if (!isfinite(t))
                continue;
            double v = bound_at(t, &qi, &s, T, delta);
            if (v > best) {
                best = v;
                best_t = t;
                best_step = pass == 0 ? 0.125 * sm : pass == 1 ? 0.0625 * sm : 1.0 / 160.0;
            }
        }
    /* golden-section refinement between the best point's neighbours (f is unimodal
     * there in every case tests/ref/make_audit_lower_reference.py scans) */
    if (best > 0.0) {
        const double g = 0.6180339887498949;
        double a = best_t - best_step, b = best_t + best_step;
        double tc = b - g * (b - a), td = a + g * (b - a);
        double fc = bound_at(tc, &qi, &s, T, delta), fd = bound_at(td, &qi, &s, T, delta);
        for (int i = 0; i < 40; i++) {
            if (fc > fd) {
                b = td;
                td = tc;
                fd = fc;
                tc = b - g * (b - a);
                fc = bound_at(tc, &qi, &s, T, delta);
            } else {
                a = tc;
                tc = td;
                fc = fd;
                td = a + g * (b - a);
                fd = bound_at(td, &qi, &s, T, delta);
            }
        }
        if (fc > best) {
            best = fc;
            best_t = tc;
        }
        if (fd > best) {
            best = fd;
            best_t = td;
        }
    }
    ival_clear(&qi);
    ival_clear(&s);
    if (threshold)
        *threshold = best_t;
    return best;
}
