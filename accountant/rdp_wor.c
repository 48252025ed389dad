/* accountant/rdp_wor.c: RDP of the Gaussian mechanism on a batch sampled without
 * replacement, replace-one adjacency (Wang, Balle, Kasiviswanathan 2019).
 *
 * Integer alpha >= 2, q = batch/n, cgf(x) = x(x+1)/(2 sigma^2) (the Gaussian's
 * (alpha-1) RDP(alpha) at x = alpha-1), D(m) = m-th forward difference at 0 of
 * g(a) = exp(cgf(a-1)). Theorem 27 of WBK19:
 *   A <= 1 + q^2 C(alpha,2) min(4 (e^{1/s^2} - 1), 2 e^{1/s^2})
 *          + sum_{i=3}^{alpha} q^i C(alpha,i) min(4 sqrt(|D(2 floor(i/2))| |D(2 ceil(i/2))|),
 *                                                2 e^{cgf(i-1)}),
 * RDP <= log(A)/(alpha-1). For alpha > 256 only the second branch of the min is used
 * (a looser but valid bound; the difference table costs O(alpha^2)), as dp_accounting
 * does. Fractional alpha: linear interpolation of log A between floor and ceil
 * (WBK19 Cor. 10: the CGF is convex), log A(1) = 0.
 *
 * Everything is computed in interval arithmetic; the forward differences cancel
 * heavily, so the precision is raised until the enclosure is tight. */
#include <math.h>
#include <stdlib.h>
#include "internal.h"
#include "ival.h"

#define WOR_EXACT_MAX_ALPHA 256

/* Encloses the WBK19 bound on log A at integer order n >= 2 (q < 1, sigma > 0). */
static int wor_log_a_int(mpfr_prec_t p, uint64_t batch, uint64_t size, double sigma,
                         unsigned long n, ival *out)
{
    unsigned long m_max = n <= WOR_EXACT_MAX_ALPHA ? n + 1 : 0;
    ival c, qv, lq, t, u, v, sum, binom, term, two, four;
    ival *all[] = {&c, &qv, &lq, &t, &u, &v, &sum, &binom, &term, &two, &four};
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], p);
    ival *g = NULL, *d = NULL;
    if (m_max > 0) {
        g = malloc((m_max + 1) * sizeof *g);
        d = malloc((m_max + 1) * sizeof *d);
        if (g == NULL || d == NULL) {
            free(g);
            free(d);
            for (size_t i = 0; i < n_all; i++)
                ival_clear(all[i]);
            return -1;
        }
    }
    ival_set_d(&t, sigma);
    ival_mul(&t, &t, &t);
    ival_add(&t, &t, &t);
    ival_set_ui(&u, 1);
    ival_div(&c, &u, &t); /* 1/(2 sigma^2) */
    ival_set_ui(&two, 2);
    ival_set_ui(&four, 4);
    /* q = batch/size enclosed exactly (no double rounding of the ratio) */
    mpfr_set_ui(qv.lo, (unsigned long)batch, MPFR_RNDD);
    mpfr_div_ui(qv.lo, qv.lo, (unsigned long)size, MPFR_RNDD);
    mpfr_set_ui(qv.hi, (unsigned long)batch, MPFR_RNDU);
    mpfr_div_ui(qv.hi, qv.hi, (unsigned long)size, MPFR_RNDU);
    ival_log(&lq, &qv);

    /* D(m) = sum_i (-1)^(m-i) C(m,i) g(i), g(i) = exp((i-1) i c) */
    for (unsigned long i = 0; i <= m_max && m_max > 0; i++) {
        ival_init(&g[i], p);
        ival_init(&d[i], p);
        ival_set_d(&t, (double)i * ((double)i - 1.0)); /* exact: small integers */
        ival_mul(&t, &t, &c);
        ival_exp(&g[i], &t);
    }
    for (unsigned long m = 0; m <= m_max && m_max > 0; m++) {
        ival_set_ui(&d[m], 0);
        ival_set_ui(&binom, 1);
        for (unsigned long i = 0; i <= m; i++) {
            ival_mul(&term, &binom, &g[i]);
            if ((m - i) % 2 == 1)
                ival_neg(&term, &term);
            ival_add(&d[m], &d[m], &term);
            ival_set_ui(&t, m - i);
            ival_mul(&binom, &binom, &t);
            ival_set_ui(&t, i + 1);
            ival_div(&binom, &binom, &t);
        }
        /* |D(m)| */
        if (mpfr_sgn(d[m].hi) < 0)
            ival_neg(&d[m], &d[m]);
        else if (mpfr_sgn(d[m].lo) < 0)
            mpfr_set_zero(d[m].lo, 1);
    }

    /* sum = 1 + sum_{i>=2} q^i C(n,i) min(...); binom = C(n, i) */
    ival_set_ui(&sum, 1);
    ival_set_ui(&binom, 1);
    for (unsigned long i = 1; i <= n; i++) {
        ival_set_ui(&t, n - i + 1);
        ival_mul(&binom, &binom, &t);
        ival_set_ui(&t, i);
        ival_div(&binom, &binom, &t);
        if (i < 2)
            continue;
        /* second branch: 2 exp(cgf(i-1)) = 2 exp((i-1) i c) */
        ival_set_d(&t, (double)i * ((double)i - 1.0));
        ival_mul(&t, &t, &c);
        ival_exp(&v, &t);
        ival_mul(&v, &v, &two);
        if (i == 2) {
            ival_set_ui(&t, 2);
            ival_mul(&t, &t, &c);   /* 1/sigma^2 */
            ival_expm1(&u, &t);
            ival_mul(&u, &u, &four);
            ival_min(&v, &v, &u);
        } else if (m_max > 0) {
            ival_mul(&u, &d[2 * (i / 2)], &d[2 * ((i + 1) / 2)]);
            ival_sqrt(&u, &u);
            ival_mul(&u, &u, &four);
            ival_min(&v, &v, &u);
        }
        ival_set_ui(&t, i);
        ival_mul(&t, &t, &lq);
        ival_exp(&t, &t);           /* q^i */
        ival_mul(&term, &t, &binom);
        ival_mul(&term, &term, &v);
        ival_add(&sum, &sum, &term);
    }
    ival_log(out, &sum);
    for (unsigned long i = 0; i <= m_max && m_max > 0; i++) {
        ival_clear(&g[i]);
        ival_clear(&d[i]);
    }
    free(g);
    free(d);
    for (size_t i = 0; i < n_all; i++)
        ival_clear(all[i]);
    return 0;
}

/* Encloses log A at integer n, raising the precision until the width is below
 * 2^-50 relative (or the precision cap is reached: the enclosure stays valid). */
static int wor_log_a_tight(long base_prec, uint64_t batch, uint64_t size, double sigma,
                           unsigned long n, double *lo,
                           double *hi)
{
    if (n <= 1) {
        *lo = *hi = 0.0;
        return 0;
    }
    double growth = log2(2.0 + 1.0 / (sigma * sigma)) + 2.0;
    long p = base_prec + 64 + (long)((double)(n <= WOR_EXACT_MAX_ALPHA ? n : 0) * growth);
    for (int attempt = 0; attempt < 4; attempt++, p *= 2) {
        ival r;
        ival_init(&r, (mpfr_prec_t)p);
        if (wor_log_a_int((mpfr_prec_t)p, batch, size, sigma, n, &r)) {
            ival_clear(&r);
            return -1;
        }
        *lo = ival_lo_d(&r);
        *hi = ival_hi_d(&r);
        ival_clear(&r);
        if (*hi - *lo <= ldexp(fabs(*hi), -50) || !isfinite(*hi))
            break;
    }
    return 0;
}

dpzo_status dpzo_rdp_wor_gaussian(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                                  double alpha, dpzo_bound *rdp)
{
    dpzo_status st;
    if ((st = dpzo__check_sigma(ctx, sigma)) || (st = dpzo__check_order(ctx, alpha)))
        return st;
    if (n == 0 || batch > n)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sampling without replacement needs 0 <= batch <= n, got batch=%llu, "
                          "n=%llu", (unsigned long long)batch, (unsigned long long)n);
    if (batch == 0) {
        *rdp = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (sigma == 0.0) {
        *rdp = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    if (batch == n)
        return dpzo_rdp_sampled_gaussian_certified(ctx, 1.0, sigma, alpha, rdp);
    unsigned long af = (unsigned long)floor(alpha), ac = (unsigned long)ceil(alpha);
    double lo_f, hi_f, lo_c, hi_c;
    long p = dpzo_ctx_precision(ctx);
    if (wor_log_a_tight(p, batch, n, sigma, af, &lo_f, &hi_f)
        || wor_log_a_tight(p, batch, n, sigma, ac, &lo_c, &hi_c))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory in sampling-without-replacement RDP");
    /* (1-t) logA(af) + t logA(ac), t = alpha - af; divided by alpha - 1, rounded outward */
    double t = alpha - (double)af;
    double lo = ((1.0 - t) * lo_f + t * lo_c) / (alpha - 1.0);
    double hi = ((1.0 - t) * hi_f + t * hi_c) / (alpha - 1.0);
    /* a handful of double roundings happened above: widen by far more than they can cost */
    lo -= ldexp(fabs(lo), -45);
    hi += ldexp(fabs(hi), -45);
    if (lo < 0.0)
        lo = 0.0;
    *rdp = (dpzo_bound){0.5 * (lo + hi), lo, hi};
    return DPZO_OK;
}
