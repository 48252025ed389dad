/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_paper.c: bug-compatible replicas of the LMO-DP paper's numbers.
 * These are NOT privacy guarantees (docs/lmo.md explains each defect); they exist so
 * the paper's tables can be reproduced and audited.
 *
 * Single-step "code epsilon" (the released check_privacy_and_statistics.py, spec 2.1,
 * 2.4, 6 B3): (*) at sensitivity 1 for alpha = 2..128, with the MGFs evaluated by the
 * plain formulas even outside their domain, in IEEE double as numpy does:
 *   M_G(t) = (1 - theta wG t)^(-k)    negative base: NaN unless k is an integer
 *   M_E(t) = lam / (lam - wE t)       negative beyond the pole
 *   M_U(t) = (e^{wU t b} - e^{wU t a}) / (wU t (b - a))   overflow: inf, inf - inf = NaN
 * An order whose value is NaN, infinite or negative (a negative "RDP" comes from the
 * out-of-domain evaluations) is dropped; the rest go through the CKS conversion at
 * delta, minimised over the orders. Dropping the negative ones is what reproduces
 * the released profiles' numbers (a zero clamp would report epsilon 0).
 *
 * "Total epsilon" (spec 2.6): the paper reports, for a per-step epsilon, the epsilon
 * of a Poisson-subsampled GAUSSIAN with sigma = sqrt(2 ln(1.25/delta)) / eps_step,
 * composed over T steps, converted with CKS over the private-transformers order list
 * {1.1, ..., 10.9} u {12, ..., 127} (PT) or over 2..128 (INT). The LMO noise plays no
 * part in it. Integer orders use the accountant's binomial sum; fractional ones the
 * paper's own truncated series (below), so every published digit comes out. */
#include <float.h>
#include <math.h>
#include "lmo_internal.h"

void dpzo__lmo_paper_factors(const dpzo_lmo *l, double t, double f[3])
{
    f[0] = l->gamma_weight > 0.0
               ? pow(1.0 - l->gamma_scale * (l->gamma_weight * t), -l->gamma_shape)
               : 1.0;
    f[1] = l->exp_weight > 0.0 ? l->exp_rate / (l->exp_rate - l->exp_weight * t) : 1.0;
    f[2] = 1.0;
    if (l->uniform_weight > 0.0) {
        double s = l->uniform_weight * t;
        if (s != 0.0)
            f[2] = (exp(s * l->uniform_high) - exp(s * l->uniform_low)) /
                   (s * (l->uniform_high - l->uniform_low));
    }
}

/* M_Y(t) as the released code multiplied it (a factor of 1 is exact) */
static double paper_mgf(const dpzo_lmo *l, double t)
{
    double f[3];
    dpzo__lmo_paper_factors(l, t, f);
    return 1.0 * f[0] * f[1] * f[2];
}

static double cks_eps(double alpha, double r, double delta)
{
    if (delta * delta + expm1(-r) >= 0.0)
        return 0.0;
    if (alpha > 1.01)
        return r + log1p(-1.0 / alpha) - log(delta * alpha) / (alpha - 1.0);
    return INFINITY;
}

double dpzo__lmo_paper_eps_from_mgf(const double *m_plus, const double *m_minus, double delta,
                                    double *order)
{
    double best = INFINITY, best_order = 0.0;
    for (int a = 2; a <= 128; a++) {
        double alpha = a;
        double v = (alpha * m_plus[a - 2] + (alpha - 1.0) * m_minus[a - 2]) / (2.0 * alpha - 1.0);
        double r = log(v) / (alpha - 1.0);
        if (!isfinite(r) || r < 0.0) /* out-of-domain garbage: NaN, inf or negative */
            continue;
        double e = cks_eps(alpha, r, delta);
        if (e < best) {
            best = e;
            best_order = alpha;
        }
    }
    if (order)
        *order = best_order;
    return best < 0.0 ? 0.0 : best;
}

double dpzo_lmo_paper_step_epsilon(const dpzo_lmo *lmo, double delta, double *order)
{
    double mp[127], mm[127];
    for (int a = 2; a <= 128; a++) {
        mp[a - 2] = paper_mgf(lmo, a - 1.0);
        mm[a - 2] = paper_mgf(lmo, -(double)a);
    }
    return dpzo__lmo_paper_eps_from_mgf(mp, mm, delta, order);
}

/* log(e^a - e^b) (a >= b), in the released code's form (log(e^a + e^b) is the
 * accountant's dpzo__log_add) */
static double lsub(double a, double b)
{
    if (b == -INFINITY)
        return a;
    if (a == b)
        return -INFINITY;
    return log(expm1(a - b)) + b;
}

/* log erfc(x) as the paper's accountant evaluated it: log(erfc(x)), and the asymptotic
 * series beyond 26 where erfc underflows. */
static double paper_log_erfc(double x)
{
    if (x < 26.0)
        return log(erfc(x));
    double r = 1.0 / (2.0 * x * x), sum = 1.0, t = 1.0;
    for (int n = 1; n < 100; n++) {
        t *= -(2 * n - 1) * r;
        if (fabs(t) < 1e-17)
            break;
        sum += t;
    }
    return -x * x - log(x) - 0.5 * log(M_PI) + log(sum);
}

/* The Poisson-subsampled Gaussian's log A at a fractional order as the paper's
 * accountant computed it (Mironov-Talwar-Zhang 2019, Sec. 3.3; the private-transformers /
 * TF Privacy double-precision series): two series in i with log erfc, terms of either
 * sign, stopped once both terms of a step fall below e^-30. The stopping rule leaves a
 * relative error of about 1e-13 in the published numbers, which this reproduces. */
static double paper_log_a_frac(double q, double sigma, double alpha)
{
    double la0 = -INFINITY, la1 = -INFINITY;
    double z0 = sigma * sigma * log(1.0 / q - 1.0) + 0.5;
    /* binom(alpha, i) in the released code's operation order: it recomputed the product
     * (alpha - 0)/1 * (alpha - 1)/2 * ... from 1 for every i; carrying it over from i - 1
     * performs the same operations in the same order (the same bits) in O(1) a term
     * instead of O(i), so the 100,000-term cap costs milliseconds, not hours */
    double coef = 1.0;
    for (int i = 0; i < 100000; i++) {
        if (i > 0)
            coef = coef * (alpha - (i - 1)) / i;
        double j = alpha - i;
        double lc = log(fabs(coef));
        double lt0 = lc + i * log(q) + j * log(1 - q);
        double lt1 = lc + j * log(q) + i * log(1 - q);
        double le0 = log(0.5) + paper_log_erfc((i - z0) / (sqrt(2.0) * sigma));
        double le1 = log(0.5) + paper_log_erfc((z0 - j) / (sqrt(2.0) * sigma));
        double ls0 = lt0 + (i * (double)i - i) / (2 * (sigma * sigma)) + le0;
        double ls1 = lt1 + (j * j - j) / (2 * (sigma * sigma)) + le1;
        if (coef > 0.0) {
            la0 = dpzo__log_add(la0, ls0);
            la1 = dpzo__log_add(la1, ls1);
        } else {
            la0 = lsub(la0, ls0);
            la1 = lsub(la1, ls1);
        }
        if (isnan(ls0) || isnan(ls1))
            return NAN; /* no stopping rule can fire: the order is dropped */
        if (fmax(ls0, ls1) < -30.0)
            break;
    }
    return dpzo__log_add(la0, la1);
}

/* Orders of the two lists (static storage). */
static size_t paper_orders(dpzo_lmo_paper_orders which, double *out)
{
    size_t n = 0;
    if (which == DPZO_LMO_PAPER_ORDERS_PT) {
        for (int x = 1; x <= 99; x++)
            out[n++] = 1.0 + x / 10.0;
        for (int a = 12; a <= 127; a++)
            out[n++] = a;
    } else {
        for (int a = 2; a <= 128; a++)
            out[n++] = a;
    }
    return n;
}

double dpzo__lmo_paper_sigma(double eps_step, double delta)
{
    /* ln(1.25/delta) as ln 1.25 - ln delta: 1.25/delta overflows to inf for delta below
     * 1.25/DBL_MAX (subnormal deltas such as 1e-320), which gave sigma = inf */
    return sqrt(2.0 * (log(1.25) - log(delta))) / eps_step;
}

dpzo_status dpzo_lmo_paper_total_epsilon(dpzo_ctx *ctx, double eps_step, double delta,
                                         double q, uint64_t steps,
                                         dpzo_lmo_paper_orders which, double *epsilon)
{
    if (!(isfinite(eps_step) && eps_step > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "per-step epsilon must be finite and > 0, got %g",
                          eps_step);
    if (!(delta > 0.0 && delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", delta);
    if (!(q >= 0.0 && q <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in [0, 1], got %g", q);
    if (steps < 1)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be >= 1, got %llu",
                          (unsigned long long)steps);
    if (which != DPZO_LMO_PAPER_ORDERS_PT && which != DPZO_LMO_PAPER_ORDERS_INT)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown order list %d", (int)which);
    double orders[256];
    size_t n = paper_orders(which, orders);
    double sigma = dpzo__lmo_paper_sigma(eps_step, delta);
    /* sigma^2 must stay finite: the series' terms divide by 2 sigma^2 and its centre is
     * sigma^2 log(1/q - 1); beyond, every term is NaN or infinite */
    if (!(sigma * sigma >= DBL_MIN && isfinite(sigma * sigma)))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "per-step epsilon %g at delta %g gives the paper's Gaussian noise "
                          "multiplier %g, whose square is outside the normal double range "
                          "(sigma must be in [1.5e-154, 1.3e154])",
                          eps_step, delta, sigma);
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double r;
        if (orders[i] != floor(orders[i]) && q > 0.0 && q < 1.0) {
            r = paper_log_a_frac(q, sigma, orders[i]) / (orders[i] - 1.0);
        } else {
            dpzo_status st = dpzo_rdp_sampled_gaussian(ctx, q, sigma, orders[i], &r);
            if (st)
                return st;
        }
        double e = cks_eps(orders[i], (double)steps * r, delta);
        if (e < best)
            best = e;
    }
    *epsilon = best > 0.0 ? best : 0.0;
    return DPZO_OK;
}
