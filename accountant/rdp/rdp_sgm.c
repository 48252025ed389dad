/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_sgm.c: RDP of the Poisson-sampled Gaussian mechanism, fast path.
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
 *    For k >= k0 = ceil(alpha) the signs of C(alpha,k) alternate, and b_k = |T0_k| + |T1_k|
 *    is a completely monotone (Hausdorff moment) sequence in k: |C(alpha,k)| is a Beta
 *    integral int_0^1 t^(k-alpha-1) (1-t)^alpha dt times a constant, and each erfc factor is
 *    a moment E[x(Z)^k] of x = q e^{(2Z-1)/(2s^2)}/(1-q) in (0,1) (resp. its inverse on the
 *    right of z0); products and sums of moment sequences are moment sequences. Hence
 *      sum_{n>=0} (-1)^n b_{k0+n} = sum_{j>=0} E_j / 2^(j+1),
 *      E_j = sum_i (-1)^i C(j,i) b_{k0+i} in [0, b_{k0}]   (Euler's transform),
 *    with the remainder after J terms in [0, b_{k0} 2^-(J+1)]. J is chosen so that this
 *    is below 2^-62 of the sum: about alpha + 60 terms in all, instead of the thousands
 *    the raw alternating series needs when it decays polynomially (q = 0.1, sigma = 1).
 *    The fractional sum is formed as A itself, so its absolute error on log A is a few
 *    units of 2^-53: relative accuracy degrades when log A is tiny (q <= 1e-4 with
 *    alpha near 1); the certified path has no such limit and is what guarantees use.
 * The certified twin of this file is rdp_sgm_certified.c. */
#include <math.h>
#include "rdp_internal.h"
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

/* log A for integer alpha, through A - 1 = sum_{k>=2} C(alpha,k) q^k (1-q)^(alpha-k)
 * expm1((k^2-k)/(2 s^2)) (the k = 0, 1 terms of A sum with the rest of the binomial
 * identity to 1): all terms positive and no cancellation when A is close to 1. */
static double sgm_log_a_int(double q, double sigma, double alpha)
{
    const double lq = log(q), l1q = log1p(-q), c = 1.0 / (2.0 * sigma * sigma);
    const uint64_t n = (uint64_t)alpha;
    scaled_sum acc = {0.0, 0.0};
    /* log C(alpha, k) = base + log(p): the ratios (alpha-k)/(k+1) are multiplied into p
     * and folded into base only every 16 steps, so a term costs one exp (and, while
     * (k^2-k)c < 37, one expm1 and log; beyond, log(expm1(x)) = x to the last bit) */
    double base = log(alpha) + log((alpha - 1.0) / 2.0), p = 1.0;
    for (uint64_t k = 2; k <= n; k++) {
        double kd = (double)k, x = (kd * kd - kd) * c;
        double lt = base + kd * lq + (alpha - kd) * l1q + (x > 37.0 ? x : log(expm1(x)));
        double approx = lt + ilogb(p) * M_LN2; /* within 0.7 of the term's log */
        if (acc.s == 0.0) {
            acc.m = approx;
            acc.s = p * exp(lt - approx);
        } else if (approx <= acc.m + 1.0) {
            acc.s += p * exp(lt - acc.m);
        } else {
            acc.s = acc.s * exp(acc.m - approx) + p * exp(lt - approx);
            acc.m = approx;
        }
        p *= (alpha - kd) / (kd + 1.0);
        if ((k & 15u) == 0 || p > 1e150 || p < 1e-150) {
            base += log(p);
            p = 1.0;
        }
    }
    double lam = scaled_log(&acc); /* log(A - 1) */
    return lam > 0.0 ? lam + log1p(exp(-lam)) : log1p(exp(lam));
}

/* log(erfc(x)/2): libm's erfc while it does not underflow, else the asymptotic
 * expansion erfc(x) = e^{-x^2}/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + ...),
 * whose truncation after the x^-8 term is below 1e-17 relative for x >= 25. */
double dpzo__log_half_erfc(double x)
{
    if (x < 25.0)
        return log(0.5 * erfc(x));
    double y = 1.0 / (x * x);
    double series = 1.0 + y * (-0.5 + y * (0.75 + y * (-1.875 + y * 6.5625)));
    return -x * x - log(x) - 0.5 * log(M_PI) + log(series) - M_LN2;
}

/* sum_n (-1)^n b_n for the completely monotone b_0 = 1 >= b_1 >= ... given in d[0..J]:
 * Euler's transform sum_j E_j / 2^(j+1), E_j = sum_i (-1)^i C(j,i) b_i >= 0 (see the file
 * comment), truncated after J. The difference table is updated in place (d is
 * destroyed): after step j, d[0] holds (-1)^j Delta^j b_0. */
static double euler_sum(double *d, uint64_t j_max)
{
    double euler = 0.0;
    for (uint64_t jj = 0; jj <= j_max; jj++) {
        euler += ldexp(d[0] > 0.0 ? d[0] : 0.0, -(int)jj - 1);
        for (uint64_t i = 0; i + jj < j_max; i++)
            d[i] -= d[i + 1];
    }
    return euler;
}

static double sgm_log_a_frac(double q, double sigma, double alpha)
{
    const double lq = log(q), l1q = log1p(-q), c = 1.0 / (2.0 * sigma * sigma);
    const double z0 = sigma * sigma * (l1q - lq) + 0.5;
    const double s2 = M_SQRT2 * sigma;
    const uint64_t k0 = (uint64_t)ceil(alpha); /* signs alternate from here on */
    scaled_sum pos = {0.0, 0.0}, neg = {0.0, 0.0};
    double log_binom = 0.0; /* log |C(alpha, k)| */
    double tail[DPZO_SGM_EULER_TERMS + 1];
    int sign = 1, tail_sign = 1;
    uint64_t j_max = 0;
    for (uint64_t k = 0; k <= k0 + j_max; k++) {
        double kd = (double)k, j = alpha - kd;
        double t0 = log_binom + kd * lq + j * l1q + (kd * kd - kd) * c
                    + dpzo__log_half_erfc((kd - z0) / s2);
        double t1 = log_binom + j * lq + kd * l1q + (j * j - j) * c
                    + dpzo__log_half_erfc((z0 - j) / s2);
        if (k < k0) {
            scaled_sum *acc = sign > 0 ? &pos : &neg;
            scaled_add(acc, t0);
            scaled_add(acc, t1);
        } else {
            double b = dpzo__log_add(t0, t1);
            if (k == k0) {
                /* the Euler transform of the tail needs J terms with b_k0 2^-J below
                 * 2^-62 of the sum (see the file comment) */
                double lp = scaled_log(&pos), ln = scaled_log(&neg);
                double total = lp + log1p(-exp(ln - lp));
                double need = (b - total) / M_LN2 + 62.0;
                j_max = !(need > 0.0) ? 0 : need >= DPZO_SGM_EULER_TERMS ? DPZO_SGM_EULER_TERMS
                                                                          : (uint64_t)ceil(need);
                tail_sign = sign;
                tail[0] = b;
            } else {
                tail[k - k0] = b;
            }
        }
        double ratio = (alpha - kd) / (kd + 1.0);
        if (ratio < 0.0)
            sign = -sign;
        log_binom += log(fabs(ratio));
    }
    const double log_b0 = tail[0];
    for (uint64_t i = 0; i <= j_max; i++)
        tail[i] = exp(tail[i] - log_b0); /* b_{k0+i} / b_{k0} */
    double euler = euler_sum(tail, j_max);
    scaled_add(tail_sign > 0 ? &pos : &neg, log_b0 + log(euler));
    double lp = scaled_log(&pos), ln = scaled_log(&neg);
    if (!(ln < lp))
        return 0.0; /* cannot happen for exact arithmetic: A >= 1 */
    return lp + log1p(-exp(ln - lp));
}

/* exp(d) erfc(x) for x = the term's erfc argument and d = x^2 - x0^2, without
 * overflow: directly while erfc(x) is representable, else through the asymptotic
 * erfcx(x) = e^{x^2} erfc(x) ~ (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8))/(x sqrt(pi))
 * (truncation below 1e-17 relative for x >= 25), times e^{-x0^2}. */
static double scaled_erfc(double x, double d, double x0sq)
{
    if (x < 25.0)
        return exp(d) * erfc(x);
    double y = 1.0 / (x * x);
    double series = 1.0 + y * (-0.5 + y * (0.75 + y * (-1.875 + y * 6.5625)));
    return exp(-x0sq) * series / (x * sqrt(M_PI));
}

/* log A at fractional alpha in linear arithmetic.
 * Completing the square (see rdp_sgm_frac_certified.c) gives
 *   T0_k / T0_0 = C(alpha,k) e^{x_k^2 - x_0^2} erfc(x_k) / erfc(x_0),
 *   T1_k / T0_0 = C(alpha,k) e^{y_k^2 - x_0^2} erfc(y_k) / erfc(x_0),
 * with x_k = (k - z0)/(sqrt2 s), y_k = (k + z0 - alpha)/(sqrt2 s), and the exponents
 * x_k^2 - x_0^2 = k (k - 2 z0) c, y_k^2 - x_0^2 = (k - alpha)(k - alpha + 2 z0) c
 * formed without cancellation. Two erfc and two exp per index, no logarithms: about
 * twice as fast as the log-space sum below. Returns NAN when a value leaves the
 * double range (large alpha, tiny sigma); the caller then uses the log-space sum. */
void dpzo__sgm_linear_init(dpzo__sgm_linear *L, double q, double sigma)
{
    L->c = 1.0 / (2.0 * sigma * sigma);
    L->z0 = sigma * sigma * (log1p(-q) - log(q)) + 0.5;
    L->s2 = M_SQRT2 * sigma;
    L->x0sq = L->z0 * L->z0 * L->c;
    L->l1q = log1p(-q);
    L->ok = erfc(-L->z0 / L->s2) > 1e-300 && L->x0sq <= 700.0;
    L->n_v0 = 0;
}

/* The T0 half of index k (independent of alpha, so cached across orders). */
static double t0_half(dpzo__sgm_linear *L, uint64_t k)
{
    if (k < L->n_v0)
        return L->v0[k];
    double kd = (double)k;
    double v = scaled_erfc((kd - L->z0) / L->s2, kd * (kd - 2.0 * L->z0) * L->c, L->x0sq);
    if (k == L->n_v0 && k < DPZO_SGM_CURVE_CACHE)
        L->v0[L->n_v0++] = v;
    return v;
}

static double sgm_linear_log_a(dpzo__sgm_linear *L, double alpha)
{
    if (!L->ok || alpha > 200.0)
        return NAN;
    const double z0 = L->z0, c = L->c, s2 = L->s2, x0sq = L->x0sq;
    /* A = T0_0 total / erfc(x_0) = (1-q)^alpha total / 2 */
    const double log_scale = alpha * L->l1q - M_LN2;
    const uint64_t k0 = (uint64_t)ceil(alpha);
    double binom = 1.0, head = 0.0, tail[DPZO_SGM_EULER_TERMS + 1];
    uint64_t j_max = 0;
    int tail_sign = 1;
    for (uint64_t k = 0; k <= k0 + j_max; k++) {
        double kd = (double)k, m = kd - alpha;
        double v = t0_half(L, k)
                   + scaled_erfc((kd + z0 - alpha) / s2, m * (m + 2.0 * z0) * c, x0sq);
        double b = binom * v; /* signed */
        if (k < k0) {
            head += b;
        } else {
            if (k == k0) {
                tail_sign = b < 0.0 ? -1 : 1;
                double need = log2(fabs(b) / fabs(head)) + 52.0;
                j_max = !(need > 0.0) ? 0 : need >= DPZO_SGM_EULER_TERMS ? DPZO_SGM_EULER_TERMS
                                                                          : (uint64_t)ceil(need);
            }
            tail[k - k0] = fabs(b);
        }
        binom *= (alpha - kd) / (kd + 1.0);
    }
    double scale = tail[0];
    for (uint64_t i = 0; i <= j_max; i++)
        tail[i] /= scale;
    double euler = euler_sum(tail, j_max);
    double total = head + tail_sign * scale * euler;
    double r = log_scale + log(total);
    return isfinite(r) && total > 0.0 ? r : NAN;
}

int dpzo__is_integer(double x) { return x == floor(x) && x < 9.0e15; }

double dpzo__sgm_rdp_fast(dpzo__sgm_linear *L, double q, double sigma, double alpha)
{
    if (q == 0.0)
        return 0.0;
    if (sigma == 0.0)
        return INFINITY;
    if (q == 1.0)
        return alpha / (2.0 * sigma * sigma);
    if (!(1.0 / (2.0 * sigma * sigma) < INFINITY))
        return INFINITY; /* c = 1/(2 sigma^2) overflows: the estimate is +inf (the certified
                            path, in MPFR, says what it can prove) */
    double log_a;
    if (dpzo__is_integer(alpha))
        log_a = sgm_log_a_int(q, sigma, alpha);
    else if (isnan(log_a = sgm_linear_log_a(L, alpha)))
        log_a = sgm_log_a_frac(q, sigma, alpha);
    if (!dpzo__is_integer(alpha) && !(log_a > 0.0)) {
        /* The fractional sums carry an absolute error of a few 2^-53 on log A (or failed):
         * a log A lost to 0 would read as "no privacy spent" (sigma = 1e5, q = 0.004).
         * log A is convex in alpha with log A(1) = 0: the chord between the integer
         * orders around alpha, exact to a factor below 2/alpha, stands in. */
        double af = floor(alpha), t = alpha - af;
        double lf = af >= 2.0 ? sgm_log_a_int(q, sigma, af) : 0.0;
        double lc = sgm_log_a_int(q, sigma, af + 1.0);
        double chord = (af >= 2.0 ? (1.0 - t) * lf : 0.0) + t * lc;
        log_a = chord;
    }
    if (isnan(log_a))
        return NAN;
    return log_a > 0.0 ? log_a / (alpha - 1.0) : 0.0;
}

dpzo_status dpzo_rdp_sampled_gaussian(dpzo_ctx *ctx, double q, double sigma, double alpha,
                                      double *rdp)
{
    dpzo_status st;
    if ((st = dpzo__check_rate(ctx, q)) || (st = dpzo__check_sigma(ctx, sigma))
        || (st = dpzo__check_order(ctx, alpha)))
        return st;
    dpzo__sgm_linear L;
    if (q > 0.0 && q < 1.0 && sigma > 0.0)
        dpzo__sgm_linear_init(&L, q, sigma);
    double r = dpzo__sgm_rdp_fast(&L, q, sigma, alpha);
    if (isnan(r))
        return dpzo__fail(ctx, DPZO_ENOCONV,
                          "RDP of sampled Gaussian (q=%g, sigma=%g, alpha=%g) is not finite",
                          q, sigma, alpha);
    *rdp = r;
    return DPZO_OK;
}

dpzo_status dpzo_rdp_gaussian(dpzo_ctx *ctx, double sigma, double alpha, double *rdp)
{
    return dpzo_rdp_sampled_gaussian(ctx, 1.0, sigma, alpha, rdp);
}
