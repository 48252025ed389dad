/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_sgm_certified.c: RDP of the Poisson-sampled Gaussian, certified path.
 *
 * The sums of rdp_sgm.c (Mironov-Talwar-Zhang 2019) evaluated in MPFR interval
 * arithmetic (ival.h): every operation is rounded outward, so the computed interval
 * contains the exact sum, and the result encloses the exact RDP: `upper` is a proven
 * upper bound. Integer orders are summed here; fractional orders, with their
 * alternating tail, in rdp_sgm_frac_certified.c. The working precision grows with
 * -log2(log A), so A close to 1 loses nothing. */
#include <math.h>
#include "rdp_internal.h"
#include "ival.h"
#include "rdp_sgm.h"

/* Encloses log A_alpha at integer alpha (0 < q < 1, sigma > 0):
 * A = sum_k C(alpha,k) q^k (1-q)^(alpha-k) e^{(k^2-k)/(2 s^2)}, all terms positive,
 * accumulated as exp(log_term - shift) with shift the fast estimate of log A, so the
 * scaled sum is near 1; a term above e^shift moves the shift up to it. */
/* log C(n, k+1) from log C(n, k): + log(n-k) - log(k+1), both enclosed; t is scratch */
static void next_log_binom(ival *log_binom, uint64_t n, uint64_t k, ival *t)
{
    ival_set_ui(t, (unsigned long)(n - k));
    ival_log(t, t);
    ival_add(log_binom, log_binom, t);
    ival_set_ui(t, (unsigned long)(k + 1));
    ival_log(t, t);
    ival_sub(log_binom, log_binom, t);
}

/* The sums' early stop: once the ratio bound rho of later terms to the current one is below
 * e^-0.7 < 1/2 (room for the double roundings in log_rho), the rest adds at most the term u;
 * when u is below the sum's resolution, its upper end takes u and the sum is done (1). */
static int tail_done(double log_rho, ival *sum, const ival *u, ival *t, mpfr_prec_t prec)
{
    if (!(log_rho < -0.7))
        return 0;
    mpfr_mul_2si(t->lo, sum->lo, -(long)prec - 8, MPFR_RNDD);
    if (mpfr_cmp(u->hi, t->lo) >= 0)
        return 0;
    mpfr_add(sum->hi, sum->hi, u->hi, MPFR_RNDU);
    return 1;
}

/* Both sums' constants: log q, log(1-q) and c = 1/(2 sigma^2), enclosed (t, u scratch). */
static void sum_constants(double q, double sigma, ival *qv, ival *lq, ival *l1q, ival *c, ival *t,
                          ival *u)
{
    ival_set_d(qv, q);
    ival_log(lq, qv);
    ival_neg(t, qv);
    ival_log1p(l1q, t);
    ival_set_d(t, sigma);
    ival_mul(t, t, t);
    ival_add(t, t, t);
    ival_set_ui(u, 1);
    ival_div(c, u, t);
}

static void certified_log_a_int(mpfr_prec_t prec, double q, double sigma, uint64_t n,
                                double shift, ival *log_a)
{
    ival qv, lq, l1q, c, sh, log_binom, kk, t, u, sum;
    ival *all[] = {&qv, &lq, &l1q, &c, &sh, &log_binom, &kk, &t, &u, &sum};
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], prec);
    sum_constants(q, sigma, &qv, &lq, &l1q, &c, &t, &u);
    ival_set_d(&sh, shift);
    ival_set_ui(&log_binom, 0);
    ival_set_ui(&sum, 0);
    for (uint64_t k = 0; k <= n; k++) {
        /* log C(n,k) + k log q + (n-k) log(1-q) + (k^2-k) c - shift */
        ival_set_ui(&kk, (unsigned long)k);
        ival_mul(&t, &kk, &lq);
        ival_add(&u, &log_binom, &t);
        ival_set_ui(&t, (unsigned long)(n - k));
        ival_mul(&t, &t, &l1q);
        ival_add(&u, &u, &t);
        ival_set_d(&t, (double)k * ((double)k - 1.0)); /* exact: k <= 1e6 < 2^26 */
        ival_mul(&t, &t, &c);
        ival_add(&u, &u, &t);
        ival_sub(&u, &u, &sh);
        if (mpfr_sgn(u.hi) > 0 && mpfr_number_p(u.hi)) {
            /* the term exceeds e^shift (a double shift of 1e40 is off by 1e24 nats):
             * move the shift up to it, sum e^{-d}, so no exp overflows */
            mpfr_neg(t.lo, u.hi, MPFR_RNDD);
            mpfr_neg(t.hi, u.hi, MPFR_RNDU);
            ival_exp(&t, &t);
            ival_mul(&sum, &sum, &t);
            mpfr_add(sh.lo, sh.lo, u.hi, MPFR_RNDD);
            mpfr_add(sh.hi, sh.hi, u.hi, MPFR_RNDU);
            mpfr_sub(u.lo, u.lo, u.hi, MPFR_RNDD);
            mpfr_set_zero(u.hi, 1);
        }
        ival_exp(&u, &u);
        ival_add(&sum, &sum, &u);
        /* Tail: term(k+1)/term(k) = (n-k)/(k+1) q/(1-q) e^{2kc} <= rho(k) =
         * (n-k)/(k+1) q/(1-q) e^{2nc}, decreasing in k; once rho(k) <= 1/2 the terms after k
         * sum to at most term(k) rho/(1 - rho) <= term(k). When that is below the sum's
         * resolution, it is added as [0, term(k)] and the sum stops (at large sigma and
         * alpha = 1e5 the terms past k ~ nq + a few hundred are all negligible). */
        if (k < n && mpfr_sgn(sum.lo) > 0) {
            double log_rho = log((double)(n - k)) - log((double)k + 1.0) + log(q) - log1p(-q)
                             + (double)n / (sigma * sigma);
            if (tail_done(log_rho, &sum, &u, &t, prec))
                break;
        }
        if (k < n)
            next_log_binom(&log_binom, n, k, &t);
    }
    ival_log(log_a, &sum);
    ival_add(log_a, log_a, &sh);
    for (size_t i = 0; i < n_all; i++)
        ival_clear(all[i]);
}

/* Encloses log A at integer alpha = n when A is close to 1 (log A < 1/2), through
 *   A - 1 = sum_{k>=2} C(n,k) q^k (1-q)^(n-k) expm1((k^2-k) c)
 * (the k = 0, 1 terms and the binomial identity give the 1): every term is positive, so
 * the working precision needs no raise however small log A is (sigma = 1e308 gives
 * log A ~ 1e-600, which the direct sum would need 2000 more bits to resolve). Terms stay
 * below A - 1 < e^{1/2}: no shift. The tail is cut as in certified_log_a_int, with the
 * ratio bound term(k+1)/term(k) <= (n-k)/(k+1) q/(1-q) e^{2nc} (1 + 2/(k-1))
 * (expm1(a + 2kc)/expm1(a) <= e^{2kc} + expm1(2kc)/a <= e^{2kc} (1 + 2kc/a), a = k(k-1)c). */
static void certified_log_a_int_small(mpfr_prec_t prec, double q, double sigma, uint64_t n,
                                      ival *log_a)
{
    ival qv, lq, l1q, c, log_binom, t, u, sum;
    ival *all[] = {&qv, &lq, &l1q, &c, &log_binom, &t, &u, &sum};
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], prec);
    sum_constants(q, sigma, &qv, &lq, &l1q, &c, &t, &u);
    /* log C(n, 2) */
    ival_set_ui(&t, (unsigned long)n);
    ival_set_ui(&u, (unsigned long)(n - 1));
    ival_mul(&t, &t, &u);
    ival_log(&log_binom, &t);
    ival_set_ui(&t, 2);
    ival_log(&t, &t);
    ival_sub(&log_binom, &log_binom, &t);
    ival_set_ui(&sum, 0);
    for (uint64_t k = 2; k <= n; k++) {
        ival_set_ui(&t, (unsigned long)k);
        ival_mul(&u, &t, &lq);
        ival_add(&u, &u, &log_binom);
        ival_set_ui(&t, (unsigned long)(n - k));
        ival_mul(&t, &t, &l1q);
        ival_add(&u, &u, &t);
        ival_exp(&u, &u);
        ival_set_d(&t, (double)k * ((double)k - 1.0)); /* exact: k <= 1e6 < 2^26 */
        ival_mul(&t, &t, &c);
        ival_expm1(&t, &t);
        ival_mul(&u, &u, &t);
        ival_add(&sum, &sum, &u);
        if (k < n && mpfr_sgn(sum.lo) > 0) {
            double log_rho = log((double)(n - k)) - log((double)k + 1.0) + log(q) - log1p(-q)
                             + (double)n / (sigma * sigma) + log1p(2.0 / ((double)k - 1.0));
            if (tail_done(log_rho, &sum, &u, &t, prec))
                break;
        }
        if (k < n)
            next_log_binom(&log_binom, n, k, &t);
    }
    ival_log1p(log_a, &sum);
    for (size_t i = 0; i < n_all; i++)
        ival_clear(all[i]);
}

/* r <- r / (alpha - 1), with alpha - 1 enclosed (a1 is scratch) */
static void divide_by_alpha_minus_1(ival *r, ival *a1, double alpha)
{
    mpfr_set_d(a1->lo, alpha, MPFR_RNDD);
    mpfr_sub_ui(a1->lo, a1->lo, 1, MPFR_RNDD);
    mpfr_set_d(a1->hi, alpha, MPFR_RNDU);
    mpfr_sub_ui(a1->hi, a1->hi, 1, MPFR_RNDU);
    ival_div(r, r, a1);
}

/* RDP at fractional alpha from the certified integer orders around it: log A is convex
 * in alpha with log A(1) = 0, so with af = floor(alpha), t = alpha - af,
 *   log A(alpha) <= (1 - t) log A(af) + t log A(af + 1),
 * and log A(alpha) >= log A(af) (A_alpha is nondecreasing in alpha for alpha >= 1). */
static dpzo_status chord_bound(dpzo_ctx *ctx, double q, double sigma, double alpha,
                               double *lo, double *hi)
{
    double af = floor(alpha), t = alpha - af;
    dpzo_bound bf = {0.0, 0.0, 0.0}, bc;
    dpzo_status st;
    if (af >= 2.0 && (st = dpzo_rdp_sampled_gaussian_certified(ctx, q, sigma, af, &bf)))
        return st;
    if ((st = dpzo_rdp_sampled_gaussian_certified(ctx, q, sigma, af + 1.0, &bc)))
        return st;
    /* log A = (order - 1) RDP; a few roundings below, widened by far more */
    double h = (af >= 2.0 ? (1.0 - t) * (af - 1.0) * bf.upper : 0.0) + t * af * bc.upper;
    h /= alpha - 1.0;
    h += ldexp(fabs(h), -45);
    double l = af >= 2.0 ? (af - 1.0) * bf.lower / (alpha - 1.0) : 0.0;
    l -= ldexp(fabs(l), -45);
    *hi = h;
    *lo = l > 0.0 ? l : 0.0;
    return DPZO_OK;
}

dpzo_status dpzo_rdp_sampled_gaussian_certified(dpzo_ctx *ctx, double q, double sigma,
                                                double alpha, dpzo_bound *rdp)
{
    double fast;
    dpzo_status st = dpzo_rdp_sampled_gaussian(ctx, q, sigma, alpha, &fast);
    if (st)
        return st;
    if (q == 0.0 || sigma == 0.0) { /* exact: 0 and +inf */
        *rdp = (dpzo_bound){fast, fast, fast};
        return DPZO_OK;
    }
    long prec = dpzo_ctx_precision(ctx);
    /* log A, to size the precision and the Euler tail; when the fast path lost it to
     * rounding (log A below 1e-16), the leading small-q term C(alpha,2) q^2 (e^{1/s^2} - 1)
     * gives its magnitude */
    double log_a_est = fast * (alpha - 1.0);
    /* log of log A: from the fast value, or, when that is lost to rounding (log A below
     * 1e-12), from the leading small-q term C(alpha,2) q^2 (e^{1/s^2} - 1) formed in logs
     * (q^2 underflows for q < 1e-154) */
    double inv_s2 = 1.0 / (sigma * sigma);
    double log_lead = log(0.5 * alpha * (alpha - 1.0)) + 2.0 * log(q)
                      + (inv_s2 > 700.0   ? inv_s2
                         : inv_s2 < 1e-10 ? -2.0 * log(sigma) /* 1/s^2 underflows near 1e154 */
                                          : log(expm1(inv_s2)));
    double log_log_a = log_a_est > 1e-12 ? log(log_a_est) : log_lead - 2.0 * M_LN2;
    if (log_a_est <= 1e-12 && isfinite(log_log_a))
        log_a_est = exp(log_log_a);
    if (log_log_a < 0.0 && isfinite(log_log_a))
        prec += (long)ceil(-log_log_a / M_LN2);
    if (prec > 32768)
        prec = 32768; /* beyond this the enclosure stays valid, only looser */
    prec += 32;
    ival r, a1;
    ival_init(&r, prec);
    ival_init(&a1, prec);
    if (q == 1.0) {
        ival_set_d(&r, sigma);
        ival_mul(&r, &r, &r);
        ival_add(&r, &r, &r);
        ival_set_d(&a1, alpha);
        ival_div(&r, &a1, &r);
    } else if (dpzo__is_integer(alpha) && log_a_est < 0.5 && isfinite(log_log_a)) {
        /* A close to 1: the A - 1 form needs no precision raise */
        ival_clear(&r);
        ival_init(&r, (mpfr_prec_t)(dpzo_ctx_precision(ctx) + 32));
        certified_log_a_int_small((mpfr_prec_t)(dpzo_ctx_precision(ctx) + 32), q, sigma,
                                  (uint64_t)alpha, &r);
        divide_by_alpha_minus_1(&r, &a1, alpha);
    } else if (dpzo__is_integer(alpha)) {
        certified_log_a_int((mpfr_prec_t)prec, q, sigma, (uint64_t)alpha, log_a_est, &r);
        divide_by_alpha_minus_1(&r, &a1, alpha);
    } else if (alpha > 1e4) {
        /* Beyond order 10^4 the chord between the integer orders around alpha (below) is
         * within 1/(4 alpha^2) relative of the exact value and costs two integer sums with
         * a truncated tail; the fractional series costs alpha erfcx enclosures. */
        double clo, chi;
        if ((st = chord_bound(ctx, q, sigma, alpha, &clo, &chi))) {
            ival_clear(&r);
            ival_clear(&a1);
            return st;
        }
        mpfr_set_d(r.lo, clo, MPFR_RNDD);
        mpfr_set_d(r.hi, chi, MPFR_RNDU);
    } else {
        /* The completed-square form holds e^{-c z0^2} times erfcx terms near e^{c z0^2}:
         * beyond about sigma = 7e3 (q = 0.004) or below sigma = 1e-6 these leave MPFR's
         * default exponent range (2^30 bits). Widen it for this computation only, and
         * only where the range is per thread (a thread-safe MPFR), so no other thread's
         * arithmetic sees the change; elsewhere the chord below takes over. */
        mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
        int widen = mpfr_buildopt_tls_p();
        if (widen) {
            mpfr_set_emin(mpfr_get_emin_min());
            mpfr_set_emax(mpfr_get_emax_max());
        }
        dpzo__sgm_certified_log_a_frac((mpfr_prec_t)prec, q, sigma, alpha, log_a_est,
                                       log_log_a, &r);
        divide_by_alpha_minus_1(&r, &a1, alpha);
        double flo = ival_lo_d(&r), fhi = ival_hi_d(&r); /* doubles: in either range */
        if (widen) {
            mpfr_set_emin(emin);
            mpfr_set_emax(emax);
        }
        /* Where even that overflows (or the enclosure is loose), log A_alpha is convex
         * in alpha (a log moment generating function, log A_1 = 0), so the chord
         * between the integer orders around alpha bounds it: a proven fallback. */
        if (!(fhi < INFINITY) || !(fhi - flo <= ldexp(fabs(fhi), -40))) {
            double clo, chi;
            if ((st = chord_bound(ctx, q, sigma, alpha, &clo, &chi))) {
                ival_clear(&r);
                ival_clear(&a1);
                return st;
            }
            if (!(fhi <= chi))
                fhi = chi;
            if (!(flo >= clo))
                flo = clo;
        }
        mpfr_set_d(r.lo, flo, MPFR_RNDD);
        mpfr_set_d(r.hi, fhi, MPFR_RNDU);
    }
    double lo = ival_lo_d(&r), hi = ival_hi_d(&r);
    ival_clear(&r);
    ival_clear(&a1);
    if (lo < 0.0)
        lo = 0.0; /* Renyi divergences are >= 0 */
    if (!(hi >= lo))
        return dpzo__fail(ctx, DPZO_ENOCONV,
                          "certified RDP failed for q=%g, sigma=%g, alpha=%g", q, sigma, alpha);
    double v = fast < lo ? lo : fast > hi ? hi : fast;
    *rdp = (dpzo_bound){v, lo, hi};
    return DPZO_OK;
}
