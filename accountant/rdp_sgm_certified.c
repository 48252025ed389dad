/* accountant/rdp_sgm_certified.c: RDP of the Poisson-sampled Gaussian, certified path.
 *
 * The sums of rdp_sgm.c (Mironov-Talwar-Zhang 2019) evaluated in MPFR interval
 * arithmetic (ival.h): every operation is rounded outward, so the computed interval
 * contains the exact sum, and the result encloses the exact RDP: `upper` is a proven
 * upper bound. Integer orders are summed here; fractional orders, with their
 * alternating tail, in rdp_sgm_frac_certified.c. The working precision grows with
 * -log2(log A), so A close to 1 loses nothing. */
#include <math.h>
#include "internal.h"
#include "ival.h"
#include "rdp_sgm.h"

/* Encloses log A_alpha at integer alpha (0 < q < 1, sigma > 0):
 * A = sum_k C(alpha,k) q^k (1-q)^(alpha-k) e^{(k^2-k)/(2 s^2)}, all terms positive,
 * accumulated as exp(log_term - shift) with shift the fast estimate of log A, so the
 * scaled sum is near 1. */
static void certified_log_a_int(mpfr_prec_t prec, double q, double sigma, uint64_t n,
                                double shift, ival *log_a)
{
    ival qv, lq, l1q, c, sh, log_binom, kk, t, u, sum;
    ival *all[] = {&qv, &lq, &l1q, &c, &sh, &log_binom, &kk, &t, &u, &sum};
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], prec);
    ival_set_d(&qv, q);
    ival_log(&lq, &qv);
    ival_neg(&t, &qv);
    ival_log1p(&l1q, &t);
    ival_set_d(&t, sigma);
    ival_mul(&t, &t, &t);
    ival_add(&t, &t, &t);
    ival_set_ui(&u, 1);
    ival_div(&c, &u, &t); /* 1/(2 sigma^2) */
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
        ival_exp(&u, &u);
        ival_add(&sum, &sum, &u);
        /* log C(n,k+1) = log C(n,k) + log(n-k) - log(k+1) */
        if (k < n) {
            ival_set_ui(&t, (unsigned long)(n - k));
            ival_log(&t, &t);
            ival_add(&log_binom, &log_binom, &t);
            ival_set_ui(&t, (unsigned long)(k + 1));
            ival_log(&t, &t);
            ival_sub(&log_binom, &log_binom, &t);
        }
    }
    ival_log(log_a, &sum);
    ival_add(log_a, log_a, &sh);
    for (size_t i = 0; i < n_all; i++)
        ival_clear(all[i]);
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
                      + (inv_s2 > 700.0 ? inv_s2 : log(expm1(inv_s2)));
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
    } else {
        if (dpzo__is_integer(alpha))
            certified_log_a_int((mpfr_prec_t)prec, q, sigma, (uint64_t)alpha, log_a_est, &r);
        else
            dpzo__sgm_certified_log_a_frac((mpfr_prec_t)prec, q, sigma, alpha, log_a_est,
                                           log_log_a, &r);
        ival_set_d(&a1, alpha - 1.0); /* exact: alpha > 1 and both are doubles near */
        mpfr_set_d(a1.lo, alpha, MPFR_RNDD);
        mpfr_sub_ui(a1.lo, a1.lo, 1, MPFR_RNDD);
        mpfr_set_d(a1.hi, alpha, MPFR_RNDU);
        mpfr_sub_ui(a1.hi, a1.hi, 1, MPFR_RNDU);
        ival_div(&r, &r, &a1);
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
