/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_rdp.c: per-step RDP curves of the LMO mechanism (scalar query,
 * L1 sensitivity C; P = X, Q = X + C).
 *
 *  - MGF bound, spec (*): D_alpha of (X, Y) with Y revealed, an upper bound on the
 *    mixture's RDP by post-processing:
 *      eps(alpha) = log([alpha M_Y((alpha-1)C) + (alpha-1) M_Y(-alpha C)] / (2 alpha - 1)) / (alpha-1)
 *    +inf where M_Y((alpha-1)C) is infinite (wG theta (alpha-1) C >= 1 or wE (alpha-1) C >= lam).
 *  - Pure DP: the mechanism is eps0-DP (eps0 = log E[Y]/E[Y e^{-CY}], attained at x = 0),
 *    and an eps0-DP mechanism has RDP at most that of randomized response
 *    (Steinke 2024, "Pure DP to RDP", Thm 4):
 *      eps0 - log((1 + e^{-eps0}) / (1 + e^{-(2 alpha - 1) eps0})) / (alpha - 1),
 *    which is increasing in eps0, so eps0's proven upper bound gives a proven bound.
 *  - Exact: the mixture's own divergence (lmo_exact.c), enclosed.
 *  - Binned lower bound: D_alpha(P||Q) >= D_alpha of the two laws pushed through a
 *    partition of the line (data processing); the bin masses are closed-form CDF
 *    values. Cheap; the search uses it to discard candidates without the exact
 *    integral (double precision: a pruning heuristic with a safety margin, never a
 *    reported bound).
 *
 * The certified versions run in MPFR interval arithmetic (ival.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lmo_internal.h"
#include "lmo_rdp.h"
#include "lmo_exact.h"

static const char *const bound_names[] = {"mgf", "exact", "pure", "best"};

dpzo_status dpzo_lmo_bound_parse(dpzo_ctx *ctx, const char *name, dpzo_lmo_bound_kind *kind)
{
    for (int i = 0; i < 4; i++)
        if (name != NULL && strcmp(name, bound_names[i]) == 0) {
            *kind = (dpzo_lmo_bound_kind)i;
            return DPZO_OK;
        }
    return dpzo__fail(ctx, DPZO_EINVAL, "unknown bound '%s' (expected mgf, exact, pure or best)",
                      name ? name : "(null)");
}

const char *dpzo_lmo_bound_name(dpzo_lmo_bound_kind kind)
{
    return (unsigned)kind < 4 ? bound_names[kind] : "?";
}

/* ---- double precision (search) -------------------------------------------------- */

double dpzo__lmo_mgf_rdp(const dpzo_lmo *lmo, double c, double alpha)
{
    double a = dpzo_lmo_log_mgf(lmo, (alpha - 1.0) * c);
    if (a == INFINITY)
        return INFINITY;
    a += log(alpha);
    double b = dpzo_lmo_log_mgf(lmo, -alpha * c) + log(alpha - 1.0);
    return (dpzo__log_add(a, b) - log(2.0 * alpha - 1.0)) / (alpha - 1.0);
}

double dpzo__lmo_eps0_estimate(const dpzo_lmo *lmo, double c)
{
    return -dpzo_lmo_log_mgf(lmo, -c) + log(dpzo_lmo_dlog_mgf(lmo, 0.0)) -
           log(dpzo_lmo_dlog_mgf(lmo, -c));
}

double dpzo__lmo_pure_rdp(double eps0, double alpha)
{
    if (!(eps0 > 0.0))
        return 0.0;
    /* log(1 + e^{-e}) - log(1 + e^{-(2a-1)e}) */
    double l = log1p(exp(-eps0)) - log1p(exp(-(2.0 * alpha - 1.0) * eps0));
    double r = eps0 - l / (alpha - 1.0);
    return r < eps0 ? (r > 0.0 ? r : 0.0) : eps0;
}

/* Partition points for the binned lower bound: symmetric about C/2, fine near the
 * two centres, geometric in the tails. Returns the count (<= cap). */
static size_t bin_points(const dpzo_lmo *lmo, double c, double *t, size_t cap)
{
    size_t n = 0;
    double ymean = dpzo_lmo_dlog_mgf(lmo, 0.0);
    double scale = 1.0 / ymean; /* the typical |X| */
    /* core: 16 cells over [-C, 2C] */
    for (int j = 0; j <= 16 && n < cap; j++)
        t[n++] = -c + 3.0 * c * j / 16.0;
    /* tails: x = -C - s, 2C + s with s geometric from scale/8 to 1e6 scale */
    for (double s = scale / 8.0; s < 1e6 * scale && n + 2 <= cap; s *= 1.6) {
        t[n++] = -c - s;
        t[n++] = 2.0 * c + s;
    }
    /* sort (insertion; n is small) */
    for (size_t i = 1; i < n; i++) {
        double v = t[i];
        size_t j = i;
        while (j > 0 && t[j - 1] > v) {
            t[j] = t[j - 1];
            j--;
        }
        t[j] = v;
    }
    return n;
}

#define MAX_BINS 128

void dpzo__lmo_binned_rdp_lower(const dpzo_lmo *lmo, double c, const double *orders, size_t n,
                                double *out)
{
    double t[MAX_BINS];
    size_t m = bin_points(lmo, c, t, MAX_BINS);
    double lp[MAX_BINS + 1], lq[MAX_BINS + 1];
    int unsure[MAX_BINS + 1];
    /* masses of (-inf, t0], (t0, t1], ..., (t_{m-1}, inf) under P = X and Q = X + C.
     * Left of the median use CDF differences, right of it survival differences. */
    for (size_t b = 0; b <= m; b++) {
        unsure[b] = 0;
        double lo = b == 0 ? -INFINITY : t[b - 1];
        double hi = b == m ? INFINITY : t[b];
        for (int w = 0; w < 2; w++) {
            double sh = w == 0 ? 0.0 : c; /* Q(X + C in bin) = P(X in bin - C) */
            double a = lo - sh, z = hi - sh, lm;
            /* tail bins in log space (their masses underflow long before their logs):
             * log F(x) = log(1/2) + log M_Y(x) for x <= 0, log S(x) = the same at -x */
            if (z <= 0.0) {
                double lz = -M_LN2 + dpzo_lmo_log_mgf(lmo, z);
                double la = a == -INFINITY ? -INFINITY : -M_LN2 + dpzo_lmo_log_mgf(lmo, a);
                /* la = lz = -inf far out (both masses underflow in log space too):
                 * -inf - -inf would be NaN and turn the whole bound into 0 */
                lm = la == -INFINITY ? lz : lz + log1p(-exp(la - lz));
                unsure[b] |= la != -INFINITY && !(lz - la > 1e-9 * fabs(lz) + 1e-6);
            } else if (a >= 0.0) {
                double la = -M_LN2 + dpzo_lmo_log_mgf(lmo, -a);
                double lz = z == INFINITY ? -INFINITY : -M_LN2 + dpzo_lmo_log_mgf(lmo, -z);
                lm = lz == -INFINITY ? la : la + log1p(-exp(lz - la));
                unsure[b] |= lz != -INFINITY && !(la - lz > 1e-9 * fabs(la) + 1e-6);
            } else {
                double mass = 1.0 - (a == -INFINITY ? 0.0 : dpzo_lmo_cdf(lmo, a)) -
                              (z == INFINITY ? 0.0 : dpzo_lmo_sf(lmo, z));
                lm = mass > 0.0 ? log(mass) : -INFINITY;
            }
            (w == 0 ? lp : lq)[b] = lm;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double alpha = orders[i], mx = -INFINITY;
        double terms[MAX_BINS + 1];
        for (size_t b = 0; b <= m; b++) {
            /* a bin whose mass is a difference of two nearly equal log tails (far out,
             * where the logs are ~1e17 and their rounding exceeds the difference) is left
             * out: dropping terms only lowers the sum, so the bound stays a lower one,
             * and a garbage zero Q-mass would make it infinite (inf - inf: NaN, then 0) */
            double v = unsure[b] || lp[b] == -INFINITY || lq[b] == -INFINITY
                           ? -INFINITY /* Q-mass 0 is an underflow here (full support) */
                           : alpha * lp[b] + (1.0 - alpha) * lq[b];
            terms[b] = v;
            if (v > mx)
                mx = v;
        }
        double s = 0.0;
        for (size_t b = 0; b <= m && mx > -INFINITY; b++)
            s += exp(terms[b] - mx);
        double r = (mx + log(s)) / (alpha - 1.0);
        out[i] = r > 0.0 ? r : 0.0;
    }
}

/* ---- interval versions (reported bounds) ------------------------------------------ */

#define PREC DPZO_LMO_PREC

/* (*) enclosed; returns 1 for +inf. */
static int mgf_rdp_ival(const dpzo_lmo *lmo, double c, double alpha, ival *out)
{
    ival a, b, t, one;
    ival_init(&a, PREC);
    ival_init(&b, PREC);
    ival_init(&t, PREC);
    ival_init(&one, PREC);
    ival_set_ui(&one, 1);
    ival_set_d(&t, alpha);
    ival_sub(&t, &t, &one);
    ival_set_d(&a, c);
    ival_mul(&t, &t, &a); /* (alpha - 1) C */
    int inf = dpzo__lmo_log_mgf_ival(lmo, &t, &a);
    if (!inf) {
        ival_set_d(&t, alpha);
        ival_log(&t, &t);
        ival_add(&a, &a, &t); /* log alpha + log M((alpha-1)C) */
        ival_set_d(&t, -alpha);
        ival_set_d(&b, c);
        ival_mul(&t, &t, &b);
        (void)dpzo__lmo_log_mgf_ival(lmo, &t, &b);
        ival_set_d(&t, alpha);
        ival_sub(&t, &t, &one);
        ival_log(&t, &t);
        ival_add(&b, &b, &t); /* log(alpha-1) + log M(-alpha C) */
        /* a + log1p(exp(b - a)) (b - a may have either sign; exp/log1p are monotone) */
        ival_sub(&t, &b, &a);
        ival_exp(&t, &t);
        ival_log1p(&t, &t);
        ival_add(&a, &a, &t);
        ival_set_d(&t, 2.0 * alpha - 1.0); /* exact for alpha < 2^52 */
        ival_log(&t, &t);
        ival_sub(&a, &a, &t);
        ival_set_d(&t, alpha);
        ival_sub(&t, &t, &one);
        ival_div(out, &a, &t);
    }
    ival_clear(&a);
    ival_clear(&b);
    ival_clear(&t);
    ival_clear(&one);
    return inf;
}

/* Randomized response's RDP at eps0 (an interval), enclosed. */
static void pure_rdp_ival(const ival *eps0, double alpha, ival *out)
{
    ival a, b, t;
    ival_init(&a, PREC);
    ival_init(&b, PREC);
    ival_init(&t, PREC);
    ival_neg(&a, eps0);
    ival_exp(&a, &a);
    ival_log1p(&a, &a); /* log(1 + e^{-eps0}) */
    ival_set_d(&t, -(2.0 * alpha - 1.0));
    ival_mul(&b, &t, eps0);
    ival_exp(&b, &b);
    ival_log1p(&b, &b);
    ival_sub(&a, &a, &b);
    ival_set_d(&t, alpha - 1.0);
    ival_div(&a, &a, &t);
    ival_sub(out, eps0, &a);
    ival_clear(&a);
    ival_clear(&b);
    ival_clear(&t);
}

static dpzo_status check_common(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (st)
        return st;
    if (!(isfinite(c) && c > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g", c);
    return DPZO_OK;
}

dpzo_status dpzo_lmo_rdp(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c, dpzo_lmo_bound_kind kind,
                         const double *orders, size_t n, dpzo_bound *out)
{
    dpzo_status st = check_common(ctx, lmo, c);
    if (st)
        return st;
    if ((unsigned)kind > DPZO_LMO_BOUND_BEST)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown LMO bound kind %d", (int)kind);
    for (size_t i = 0; i < n; i++)
        if (!(orders[i] > 1.0) || !(orders[i] <= DPZO_MAX_ORDER))
            return dpzo__fail(ctx, DPZO_EINVAL, "RDP order must be in (1, %d], got %g",
                              DPZO_MAX_ORDER, orders[i]);
    dpzo_bound *ex = NULL;
    if (kind == DPZO_LMO_BOUND_EXACT || kind == DPZO_LMO_BOUND_BEST) {
        ex = malloc((n ? n : 1) * sizeof *ex);
        if (ex == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        double gap;
        st = dpzo__lmo_exact_rdp(ctx, lmo, c, orders, n, DPZO_LMO_EXACT_TOL, ex, &gap);
        if (st) {
            free(ex);
            return st;
        }
    }
    ival e0, r;
    ival_init(&e0, PREC);
    ival_init(&r, PREC);
    (void)dpzo__lmo_eps0_ival(lmo, c, &e0); /* t = -C <= 0: always finite */
    for (size_t i = 0; i < n; i++) {
        double alpha = orders[i];
        dpzo_bound m = {INFINITY, INFINITY, INFINITY}, p;
        if (kind == DPZO_LMO_BOUND_MGF || kind == DPZO_LMO_BOUND_BEST) {
            if (!mgf_rdp_ival(lmo, c, alpha, &r)) {
                m.lower = ival_lo_d(&r);
                m.upper = ival_hi_d(&r);
                m.value = ival_mid_d(&r);
            }
        }
        pure_rdp_ival(&e0, alpha, &r);
        p.lower = ival_lo_d(&r);
        p.upper = fmin(ival_hi_d(&r), ival_hi_d(&e0));
        p.value = fmin(ival_mid_d(&r), ival_mid_d(&e0));
        if (p.lower < 0.0)
            p.lower = 0.0;
        switch (kind) {
        case DPZO_LMO_BOUND_MGF:
            out[i] = m;
            break;
        case DPZO_LMO_BOUND_PURE:
            out[i] = p;
            break;
        case DPZO_LMO_BOUND_EXACT:
            out[i] = ex[i];
            break;
        default: {
            double up = fmin(fmin(m.upper, p.upper), ex[i].upper);
            double val = fmin(fmin(m.value, p.value), ex[i].value);
            out[i].upper = up;
            out[i].value = val < up ? val : up;
            out[i].lower = ex[i].lower < out[i].value ? ex[i].lower : out[i].value;
        }
        }
    }
    ival_clear(&e0);
    ival_clear(&r);
    free(ex);
    return DPZO_OK;
}

/* A proven upper bound on (*) at one order (for lmo_account.c); +inf outside the domain. */
double dpzo__lmo_mgf_rdp_upper(const dpzo_lmo *lmo, double c, double alpha)
{
    ival r;
    ival_init(&r, PREC);
    double v = mgf_rdp_ival(lmo, c, alpha, &r) ? INFINITY : ival_hi_d(&r);
    ival_clear(&r);
    return v;
}

/* A proven upper bound on the randomized-response RDP at eps0 <= eps0_upper. */
double dpzo__lmo_pure_rdp_upper(double eps0_upper, double alpha)
{
    ival e, r;
    ival_init(&e, PREC);
    ival_init(&r, PREC);
    ival_set_d(&e, eps0_upper);
    pure_rdp_ival(&e, alpha, &r);
    double v = fmin(ival_hi_d(&r), eps0_upper);
    ival_clear(&e);
    ival_clear(&r);
    return v;
}
