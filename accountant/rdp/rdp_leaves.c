/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_leaves.c: RDP of the leaves with closed forms besides Gaussian and
 * Laplace: non-private, zCDP, randomized response, discrete Laplace (docs/accountant.md,
 * "dp_accounting's simple events", has the derivations).
 *
 *   non-private:          +inf at every order.
 *   zCDP (rho, xi):       xi + rho alpha (Bun-Steinke 2016, Def. 1.1), exact.
 *   randomized response:  p in [0, 1], k buckets, replace-one. With b = p/k, a = 1 - p + b
 *                         and L = log(a/b), the worst pair is P = (a, b, b, ..., b),
 *                         Q = (b, a, b, ..., b), and
 *                           D_alpha = L + (log a + log1p(e^{-(2 alpha - 1) L}
 *                                                      + (k - 2) e^{-alpha L})) / (alpha - 1),
 *                         exact (equal to log(a^alpha b^(1-alpha) + b^alpha a^(1-alpha)
 *                         + (k-2) b) / (alpha - 1)).
 *   discrete Laplace:     P(x) = tanh(t/2) e^{-t|x|} on the integers, shift s >= 1,
 *                         u = (2 alpha - 1) t, r = e^{-u}:
 *                           D_alpha = t s + log B / (alpha - 1),
 *                           B = (1 + r^s) / (1 + e^{-t}) + tanh(t/2) r (1 - r^{s-1}) / (1 - r),
 *                         exact (the three ranges x <= 0, 0 < x < s, x >= s of the sum
 *                         sum_x P(x)^alpha P(x - s)^(1 - alpha) are geometric series).
 *   tree aggregation:     a Gaussian of squared sensitivity d (the depth) and noise sigma:
 *                         alpha d / (2 sigma^2), exact; 0 for d = 0, +inf for sigma = 0.
 *
 * The certified variants evaluate the same expressions in MPFR interval arithmetic
 * (ival.h: every operation rounded outward), so the upper end is a proven upper bound. */
#include <math.h>
#include "rdp_internal.h"
#include "ival.h"

/* ---- fast (double) ---------------------------------------------------------------- */

static double rr_fast(double p, uint64_t k, double alpha)
{
    if (k == 1 || p == 1.0)
        return 0.0;
    if (p == 0.0)
        return INFINITY;
    double kd = (double)k;
    double la = log1p(-p * (1.0 - 1.0 / kd));  /* log a */
    double L = log1p(kd * (1.0 - p) / p);      /* log(a / b) */
    if (!isfinite(L)) /* p subnormal: k (1 - p) / p overflows */
        L = log(kd * (1.0 - p)) - log(p);
    double s = exp(-(2.0 * alpha - 1.0) * L) + (kd - 2.0) * exp(-alpha * L);
    double r = L + (la + log1p(s)) / (alpha - 1.0);
    return r < 0.0 ? 0.0 : r > L ? L : r;
}

static double dlap_fast(double t, uint64_t s, double alpha)
{
    if (s == 0)
        return 0.0;
    if (t == 0.0)
        return INFINITY;
    double sd = (double)s, u = (2.0 * alpha - 1.0) * t;
    double B = (1.0 + exp(-sd * u)) / (1.0 + exp(-t));
    if (s > 1)
        B += tanh(0.5 * t) * exp(-u) * expm1(-(sd - 1.0) * u) / expm1(-u);
    double eps = t * sd, r = eps + log(B) / (alpha - 1.0);
    return r < 0.0 ? 0.0 : r > eps ? eps : r;
}

/* ---- certified (MPFR intervals) ----------------------------------------------------- */

enum { NV = 10 };

static void rr_ival(mpfr_prec_t prec, double p, uint64_t k, double alpha, ival *out)
{
    ival v[NV];
    for (int i = 0; i < NV; i++)
        ival_init(&v[i], prec);
    ival *pp = &v[0], *kk = &v[1], *a = &v[2], *b = &v[3], *L = &v[4], *am1 = &v[5],
         *x = &v[6], *y = &v[7], *one = &v[8], *al = &v[9];
    ival_set_ui(one, 1);
    ival_set_d(pp, p);
    ival_set_d(kk, (double)k); /* k <= 2^53: exact */
    ival_set_d(al, alpha);
    ival_sub(am1, al, one);
    ival_div(b, pp, kk);
    ival_sub(a, one, pp);
    ival_add(a, a, b);
    ival_div(L, a, b);
    ival_log(L, L);
    /* x = e^{-(2 alpha - 1) L} */
    ival_add(x, al, am1);
    ival_mul(x, x, L);
    ival_neg(x, x);
    ival_exp(x, x);
    /* y = (k - 2) e^{-alpha L} */
    ival_mul(y, al, L);
    ival_neg(y, y);
    ival_exp(y, y);
    ival_set_d(b, (double)k - 2.0); /* exact: k <= 2^53 */
    ival_mul(y, y, b);
    ival_add(x, x, y);
    ival_log1p(x, x);
    ival_log(a, a);
    ival_add(x, x, a);
    ival_div(x, x, am1);
    ival_add(out, x, L);
    ival_min(out, out, L); /* D_alpha <= D_inf = L: both proven, keep the tighter */
    for (int i = 0; i < NV; i++)
        ival_clear(&v[i]);
}

/* alpha d / (2 sigma^2) */
static void tree_ival(mpfr_prec_t prec, double sigma, uint64_t d, double alpha, ival *out)
{
    ival v[3];
    for (int i = 0; i < 3; i++)
        ival_init(&v[i], prec);
    ival_set_d(&v[0], sigma);
    ival_mul(&v[0], &v[0], &v[0]);
    ival_set_ui(&v[1], 2);
    ival_mul(&v[0], &v[0], &v[1]);      /* 2 sigma^2 */
    ival_set_d(&v[1], alpha);
    ival_set_ui(&v[2], (unsigned long)d); /* d <= 2^53 */
    ival_mul(&v[1], &v[1], &v[2]);
    ival_div(out, &v[1], &v[0]);
    for (int i = 0; i < 3; i++)
        ival_clear(&v[i]);
}

static void dlap_ival(mpfr_prec_t prec, double t, uint64_t s, double alpha, ival *out)
{
    ival v[NV];
    for (int i = 0; i < NV; i++)
        ival_init(&v[i], prec);
    ival *tt = &v[0], *u = &v[1], *B = &v[2], *x = &v[3], *y = &v[4], *one = &v[5],
         *al = &v[6], *sd = &v[7], *eps = &v[8], *am1 = &v[9];
    ival_set_ui(one, 1);
    ival_set_d(tt, t);
    ival_set_d(al, alpha);
    ival_set_d(sd, (double)s); /* s <= 2^53: exact */
    ival_sub(am1, al, one);
    ival_add(u, al, am1);      /* 2 alpha - 1 */
    ival_mul(u, u, tt);
    ival_mul(eps, tt, sd);
    /* (1 + e^{-s u}) / (1 + e^{-t}) */
    ival_mul(x, sd, u);
    ival_neg(x, x);
    ival_exp(x, x);
    ival_add(x, x, one);
    ival_neg(y, tt);
    ival_exp(y, y);
    ival_add(y, y, one);       /* 1 + e^{-t}, kept for tanh(t/2) */
    ival_div(B, x, y);
    if (s > 1) {
        /* tanh(t/2) = -expm1(-t) / (1 + e^{-t}) */
        ival_neg(x, tt);
        ival_expm1(x, x);
        ival_neg(x, x);
        ival_div(x, x, y);
        /* e^{-u} expm1(-(s-1) u) / expm1(-u) (a ratio of two negatives) */
        ival_neg(y, u);
        ival_exp(y, y);
        ival_mul(x, x, y);
        ival_sub(y, sd, one);
        ival_mul(y, y, u);
        ival_neg(y, y);
        ival_expm1(y, y);
        ival_mul(x, x, y);
        ival_neg(y, u);
        ival_expm1(y, y);
        ival_div(x, x, y);
        ival_add(B, B, x);
    }
    ival_log(B, B);
    ival_div(B, B, am1);
    ival_add(out, eps, B);
    ival_min(out, out, eps); /* pure DP: D_alpha <= t s */
    for (int i = 0; i < NV; i++)
        ival_clear(&v[i]);
}

dpzo_status dpzo__rdp_leaf(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                           dpzo_bound *out)
{
    dpzo_status st = dpzo__check_order(ctx, alpha);
    if (st)
        return st;
    double fast;
    int exact = 0; /* 0 (nothing released) or +inf (no noise), from the parameters alone */
    switch (e->kind) {
    case DPZO_EVENT_NON_PRIVATE:
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    case DPZO_EVENT_MIXTURE_OF_GAUSSIANS:
    case DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN: /* rdp_mog.c */
        return dpzo__rdp_mog_leaf(ctx, e, alpha, certified, out);
    case DPZO_EVENT_ZCDP:
        fast = e->param2 + e->param * alpha;
        if (!certified) {
            *out = (dpzo_bound){fast, fast, fast};
        } else { /* two roundings, each within an ulp: one nudge each way per operation */
            double lo = dpzo__down(e->param2 + dpzo__down(e->param * alpha));
            double hi = dpzo__up(e->param2 + dpzo__up(e->param * alpha));
            *out = (dpzo_bound){fast, lo > 0.0 ? lo : 0.0, hi};
        }
        return DPZO_OK;
    case DPZO_EVENT_RANDOMIZED_RESPONSE:
        fast = rr_fast(e->param, e->n, alpha);
        exact = e->n == 1 || e->param == 1.0 || e->param == 0.0;
        break;
    case DPZO_EVENT_DISCRETE_LAPLACE:
        fast = dlap_fast(e->param, e->n, alpha);
        exact = e->n == 0 || e->param == 0.0;
        break;
    case DPZO_EVENT_TREE_AGGREGATION:
        exact = e->n == 0 || e->param == 0.0;
        fast = e->n == 0 ? 0.0 : e->param == 0.0 ? INFINITY
             : alpha * (double)e->n / (2.0 * e->param * e->param);
        break;
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "corrupt event (kind %d)", (int)e->kind);
    }
    if (!certified || exact) {
        *out = (dpzo_bound){fast, fast, fast};
        return DPZO_OK;
    }
    mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    ival r;
    ival_init(&r, prec);
    if (e->kind == DPZO_EVENT_RANDOMIZED_RESPONSE)
        rr_ival(prec, e->param, e->n, alpha, &r);
    else if (e->kind == DPZO_EVENT_TREE_AGGREGATION)
        tree_ival(prec, e->param, e->n, alpha, &r);
    else
        dlap_ival(prec, e->param, e->n, alpha, &r);
    double lo = ival_lo_d(&r), hi = ival_hi_d(&r);
    ival_clear(&r);
    if (lo < 0.0)
        lo = 0.0;
    if (hi < lo) /* only where the true value is 0 and the enclosure straddles it */
        hi = lo;
    double v = isnan(fast) ? hi : fast < lo ? lo : fast > hi ? hi : fast;
    *out = (dpzo_bound){v, lo, hi};
    return DPZO_OK;
}
