/* accountant/rdp_sgm.c: RDP of the Poisson-sampled Gaussian mechanism, fast path.
 *
 * Mironov, Talwar, Zhang 2019 (arXiv:1908.10530), section 3.3. With
 * mu0 = N(0, s^2), mu = (1-q) mu0 + q N(1, s^2), RDP(alpha) = log(A_alpha)/(alpha-1),
 * A_alpha = E_{mu0}[(mu/mu0)^alpha].
 *  - integer alpha: A = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 s^2)),
 *    all terms positive, summed in log space with a running scale (no overflow at
 *    alpha = 1e4 and beyond);
 *  - fractional alpha: split at z0 = s^2 log(1/q - 1) + 1/2 and expand both halves in
 *    binomial series; the k-th terms are
 *      T0_k = C(alpha,k) q^k (1-q)^(alpha-k) e^((k^2-k)/(2s^2)) erfc((k-z0)/(sqrt2 s))/2,
 *      T1_k = C(alpha,k) q^j (1-q)^k e^((j^2-j)/(2s^2)) erfc((z0-j)/(sqrt2 s))/2, j = alpha-k.
 *    For k > alpha the signs of C(alpha,k) alternate and |T_{k+1}| <= |T_k| (k-alpha)/(k+1)
 *    (from erfc(x+h)/erfc(x) <= exp(-2xh-h^2)), so each tail is bounded by its first
 *    omitted term (Leibniz). The sum stops when the next terms are below 2^-60 of it.
 * The certified twin of this file is rdp_sgm_certified.c. */
#include <math.h>
#include <gsl/gsl_sf_erf.h>
#include "internal.h"
#include "rdp_sgm.h"

/* A sum of positive numbers kept as exp(m) * s, so that terms of any size can be
 * added with one exp each and no overflow. */
typedef struct {
    double m, s;
} scaled_sum;

static void scaled_add(scaled_sum *acc, double log_term)
{
    if (log_term == -INFINITY)
        return;
    if (acc->s == 0.0) {
        acc->m = log_term;
        acc->s = 1.0;
    } else if (log_term <= acc->m) {
        acc->s += exp(log_term - acc->m);
    } else {
        acc->s = acc->s * exp(acc->m - log_term) + 1.0;
        acc->m = log_term;
    }
}

static double scaled_log(const scaled_sum *acc)
{
    return acc->s > 0.0 ? acc->m + log(acc->s) : -INFINITY;
}

double dpzo__sgm_log_a_int(double q, double sigma, double alpha)
{
    const double lq = log(q), l1q = log1p(-q), c = 1.0 / (2.0 * sigma * sigma);
    const uint64_t n = (uint64_t)alpha;
    scaled_sum acc = {0.0, 0.0};
    double log_binom = 0.0; /* log C(alpha, k) */
    for (uint64_t k = 0; k <= n; k++) {
        double kd = (double)k;
        scaled_add(&acc, log_binom + kd * lq + (alpha - kd) * l1q + (kd * kd - kd) * c);
        log_binom += log((alpha - kd) / (kd + 1.0));
    }
    return scaled_log(&acc);
}

/* log(erfc(x)/2) */
static double log_half_erfc(double x) { return gsl_sf_log_erfc(x) - M_LN2; }

double dpzo__sgm_log_a_frac(double q, double sigma, double alpha, uint64_t max_terms)
{
    const double lq = log(q), l1q = log1p(-q), c = 1.0 / (2.0 * sigma * sigma);
    const double z0 = sigma * sigma * (l1q - lq) + 0.5;
    const double s2 = M_SQRT2 * sigma;
    scaled_sum pos = {0.0, 0.0}, neg = {0.0, 0.0};
    double log_binom = 0.0; /* log |C(alpha, k)| */
    int sign = 1;
    for (uint64_t k = 0; k < max_terms; k++) {
        double kd = (double)k, j = alpha - kd;
        double t0 = log_binom + kd * lq + j * l1q + (kd * kd - kd) * c
                    + log_half_erfc((kd - z0) / s2);
        double t1 = log_binom + j * lq + kd * l1q + (j * j - j) * c
                    + log_half_erfc((z0 - j) / s2);
        scaled_sum *acc = sign > 0 ? &pos : &neg;
        scaled_add(acc, t0);
        scaled_add(acc, t1);
        if (kd > alpha + 1.0) {
            /* Leibniz: the remainder is below the next term, itself below this one. */
            double lp = scaled_log(&pos), ln = scaled_log(&neg);
            double total = lp + log1p(-exp(ln - lp));
            double next = dpzo__log_add(t0, t1);
            if (next < total - 42.0) /* 2^-60 relative */
                break;
        }
        double ratio = (alpha - kd) / (kd + 1.0);
        if (ratio < 0.0)
            sign = -sign;
        log_binom += log(fabs(ratio));
    }
    double lp = scaled_log(&pos), ln = scaled_log(&neg);
    if (!(ln < lp))
        return 0.0; /* cannot happen for exact arithmetic: A >= 1 */
    return lp + log1p(-exp(ln - lp));
}

int dpzo__is_integer(double x) { return x == floor(x) && x < 9.0e15; }

dpzo_status dpzo_rdp_sampled_gaussian(dpzo_ctx *ctx, double q, double sigma, double alpha,
                                      double *rdp)
{
    dpzo_status st;
    if ((st = dpzo__check_rate(ctx, q)) || (st = dpzo__check_sigma(ctx, sigma))
        || (st = dpzo__check_order(ctx, alpha)))
        return st;
    if (q == 0.0) {
        *rdp = 0.0;
        return DPZO_OK;
    }
    if (sigma == 0.0) {
        *rdp = INFINITY;
        return DPZO_OK;
    }
    if (q == 1.0) {
        *rdp = alpha / (2.0 * sigma * sigma);
        return DPZO_OK;
    }
    double log_a = dpzo__is_integer(alpha) ? dpzo__sgm_log_a_int(q, sigma, alpha)
                                           : dpzo__sgm_log_a_frac(q, sigma, alpha,
                                                                  DPZO_SGM_MAX_TERMS);
    if (isnan(log_a))
        return dpzo__fail(ctx, DPZO_ENOCONV,
                          "RDP of sampled Gaussian (q=%g, sigma=%g, alpha=%g) is not finite",
                          q, sigma, alpha);
    *rdp = log_a > 0.0 ? log_a / (alpha - 1.0) : 0.0;
    return DPZO_OK;
}

dpzo_status dpzo_rdp_gaussian(dpzo_ctx *ctx, double sigma, double alpha, double *rdp)
{
    return dpzo_rdp_sampled_gaussian(ctx, 1.0, sigma, alpha, rdp);
}
