/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_stats.c: moments and usefulness of the LMO noise (by quadrature),
 * and its pure-DP epsilon (enclosed in interval arithmetic).
 *
 * Moments (spec section 1.4). With f(x | Y) = (Y/2) e^{-Y|x|},
 *   E|X|   = E[1/Y]       = int_0^inf M_Y(-s) ds,
 *   Var X  = 2 E[1/Y^2]   = 2 int_0^inf s M_Y(-s) ds,
 *   P(|X| <= gamma) = 1 - M_Y(-gamma).
 *
 * When are they finite? Write M_Y(-s) = prod of the factors of the present components:
 *   Gamma:   (1 + wG theta s)^{-k}           ~ (wG theta)^{-k} s^{-k}
 *   Exp:     lam / (lam + wE s)              ~ (lam / wE) s^{-1}
 *   Uniform: e^{-wU a s} (1 - e^{-wU (b-a) s}) / (wU (b-a) s)
 *            ~ e^{-ymin s} s^{-1} / (wU (b-a))   (ymin = wU a)
 * If ymin > 0, M_Y(-s) decays exponentially and every moment is finite (Y >= ymin).
 * If ymin = 0, M_Y(-s) ~ L s^{-nu} with
 *   nu = (wG > 0 ? k : 0) + (wE > 0 ? 1 : 0) + (wU > 0 && a == 0 ? 1 : 0)
 * and L = (wG theta)^{-k} (lam / wE) / (wU b) over the present factors, so
 * int^inf s^{p-1} M_Y(-s) ds is finite iff nu > p: E[1/Y] iff nu > 1, E[1/Y^2] iff
 * nu > 2. (Equivalently: Y has a density ~ y^{nu-1} at 0, so E[Y^-p] < inf iff nu > p.)
 * The test "nu > p" is done without rounding: the non-Gamma part of nu is an integer m,
 * so it reads m > p, or wG > 0 and k > p - m (exact in double).
 *
 * Quadrature of int_0^inf s^{p-1} M_Y(-s) ds, in three pieces, each with GSL to a
 * relative 1e-10 (the pieces are positive, but for the tail correction below, which is
 * less than 0.3 of its own power-law term, so the sum is as accurate):
 *   [0, s0], s0 = 1/E[Y]: qags in s (smooth, bounded);
 *   [s0, s1]: qags in u = log s, where s1 lies past every scale of the factors
 *             (1/(wG theta), lam/wE, 1/(wU (b-a)), 1/ymin) times 4 max(nu, 1);
 *   [s1, inf): if ymin > 0, qagiu in u = log s (the integrand decays doubly
 *             exponentially in u);
 *             if ymin = 0, s^{p-1} M_Y(-s) = L s^{-1-q} e^{D(s)}, q = nu - p > 0, with
 *             D <= 0, D -> 0 written factor by factor without cancellation: the power
 *             law integrates exactly to L s1^{-q} / q and the rest,
 *             L s^{-1-q} expm1(D(s)) = O(s^{-2-q}), goes to qagiu in u = log s.
 *             A heavy tail (q small, e.g. Gamma k = 1 + 1e-6 alone) thus costs nothing,
 *             where plain quadrature would chase a slowly decaying integrand. s1 is
 *             far enough out that e^{D(s1)} >= ~e^{-1/4}, so the negative correction
 *             cannot cancel the power-law term.
 *
 * GSL's error handler is switched off (dpzo__gsl_quiet, once per process) before the first
 * quadrature: the library must never abort; every GSL status is checked instead. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include "lmo_internal.h"

/* The interval core of dpzo_lmo_eps0 (C finite > 0, lmo valid): 0 on success. */

#define STATS_EPSREL 1e-10
#define STATS_LIMIT 1000

typedef struct {
    const dpzo_lmo *lmo;
    int p;         /* the moment: s^{p-1} M_Y(-s) */
    double q;      /* nu - p: s^{p-1} M_Y(-s) ~ L s^{-1-q} (ymin = 0) */
    double log_L;  /* log L */
} moment_params;

/* s^{p-1} M_Y(-s) */
static double f_head(double s, void *vp)
{
    const moment_params *mp = vp;
    double lm = dpzo_lmo_log_mgf(mp->lmo, -s);
    double v = exp(lm);
    return mp->p == 1 ? v : s * v;
}

/* e^{p u} M_Y(-e^u): the integrand in u = log s */
static double f_log(double u, void *vp)
{
    const moment_params *mp = vp;
    double s = exp(u);
    if (!isfinite(s))
        return 0.0;
    double l = (double)mp->p * u + dpzo_lmo_log_mgf(mp->lmo, -s);
    return isnan(l) ? 0.0 : exp(l);
}

/* ymin = 0 (no Uniform with a > 0): s^nu M_Y(-s) = L e^{D(s)} factor by factor,
 *   Gamma (1/s + wG theta)^{-k}: L_G = (wG theta)^{-k},  D_G = -k log1p(1/(wG theta s))
 *   Exp   lam/(lam/s + wE):      L_E = lam / wE,          D_E = -log1p(lam/(wE s))
 *   U(0,b) -expm1(-wU b s)/(wU b): L_U = 1/(wU b),        D_U = log1p(-e^{-wU b s})
 * so D(s) <= 0 is free of cancellation and -> 0 as s -> inf. */
static double log_tail_const(const dpzo_lmo *lmo)
{
    double r = 0.0;
    if (lmo->gamma_weight > 0.0)
        r -= lmo->gamma_shape * log(lmo->gamma_weight * lmo->gamma_scale);
    if (lmo->exp_weight > 0.0)
        r += log(lmo->exp_rate / lmo->exp_weight);
    if (lmo->uniform_weight > 0.0)
        r -= log(lmo->uniform_weight * lmo->uniform_high);
    return r;
}

static double tail_delta(const dpzo_lmo *lmo, double s)
{
    double r = 0.0;
    if (lmo->gamma_weight > 0.0)
        r -= lmo->gamma_shape * log1p(1.0 / (lmo->gamma_weight * lmo->gamma_scale * s));
    if (lmo->exp_weight > 0.0)
        r -= log1p(lmo->exp_rate / (lmo->exp_weight * s));
    if (lmo->uniform_weight > 0.0)
        r += log1p(-exp(-lmo->uniform_weight * lmo->uniform_high * s));
    return r;
}

/* e^{p u} M_Y(-e^u) - L e^{-q u} = L e^{-q u} expm1(D(e^u)) <= 0: the tail beyond s1
 * less its power law, in u = log s (decays like e^{-(1+q) u}) */
static double f_tail_corr(double u, void *vp)
{
    const moment_params *mp = vp;
    double s = exp(u);
    if (!isfinite(s))
        return 0.0;
    return exp(mp->log_L - mp->q * u) * expm1(tail_delta(mp->lmo, s));
}

static dpzo_status gsl_fail(dpzo_ctx *ctx, const char *what, int status)
{
    return dpzo__fail(ctx, DPZO_ENOCONV,
                      "LMO %s: quadrature did not reach a relative 1e-10 (GSL: %s)", what,
                      gsl_strerror(status));
}

/* int_0^inf s^{p-1} M_Y(-s) ds (finite case), to a relative 1e-10. */
static dpzo_status moment_integral(dpzo_ctx *ctx, const dpzo_lmo *lmo, int p,
                                   gsl_integration_workspace *ws, const char *what,
                                   double *out)
{
    /* nu = k + m, m the integer part of the non-Gamma factors; q = nu - p is formed as
     * k + (m - p) so that it keeps every digit of k (k = 1e-300, m = p: q = 1e-300) */
    int m = (lmo->exp_weight > 0.0) + (lmo->uniform_weight > 0.0 && lmo->uniform_low == 0.0);
    double k = lmo->gamma_weight > 0.0 ? lmo->gamma_shape : 0.0;
    double nu = k + m;
    moment_params mp = {.lmo = lmo, .p = p, .q = k + (double)(m - p), .log_L = 0.0};
    double ymin = dpzo__lmo_ymin(lmo);
    double s0 = 1.0 / dpzo_lmo_dlog_mgf(lmo, 0.0);
    double scale = 0.0;
    if (lmo->gamma_weight > 0.0)
        scale = fmax(scale, 1.0 / (lmo->gamma_weight * lmo->gamma_scale));
    if (lmo->exp_weight > 0.0)
        scale = fmax(scale, lmo->exp_rate / lmo->exp_weight);
    if (lmo->uniform_weight > 0.0)
        scale = fmax(scale, 1.0 / (lmo->uniform_weight *
                                   (lmo->uniform_high - lmo->uniform_low)));
    double s1 = fmax(s0, 4.0 * fmax(nu, 1.0) * scale);
    if (ymin > 0.0)
        s1 = fmax(s1, 1.0 / ymin);
    if (!isfinite(s0) || !isfinite(s1))
        return dpzo__fail(ctx, DPZO_ENOCONV, "LMO %s: the parameters are out of the range "
                                              "the quadrature handles", what);
    double log_s1 = log(s1);

    gsl_function F = {.function = f_head, .params = &mp};
    double total = 0.0, r, err;
    int st = gsl_integration_qags(&F, 0.0, s0, 0.0, STATS_EPSREL, STATS_LIMIT, ws, &r, &err);
    if (st)
        return gsl_fail(ctx, what, st);
    total += r;
    F.function = f_log;
    if (s1 > s0) {
        st = gsl_integration_qags(&F, log(s0), log_s1, 0.0, STATS_EPSREL, STATS_LIMIT, ws, &r,
                                  &err);
        if (st)
            return gsl_fail(ctx, what, st);
        total += r;
    }
    if (ymin > 0.0) {
        st = gsl_integration_qagiu(&F, log_s1, 0.0, STATS_EPSREL, STATS_LIMIT, ws, &r, &err);
    } else {
        /* int_{s1}^inf L s^{-1-q} ds = L s1^{-q} / q exactly, plus the correction */
        mp.log_L = log_tail_const(lmo);
        total += exp(mp.log_L - mp.q * log_s1 - log(mp.q));
        F.function = f_tail_corr;
        st = gsl_integration_qagiu(&F, log_s1, 0.0, STATS_EPSREL, STATS_LIMIT, ws, &r, &err);
    }
    if (st)
        return gsl_fail(ctx, what, st);
    total += r;
    if (!isfinite(total))
        return dpzo__fail(ctx, DPZO_ENOCONV, "LMO %s: the quadrature overflowed", what);
    *out = total;
    return DPZO_OK;
}

/* E[Y^{-p}] finite? (see the header comment; exact, no rounding of nu) */
static int inverse_moment_finite(const dpzo_lmo *lmo, int p)
{
    if (dpzo__lmo_ymin(lmo) > 0.0)
        return 1;
    int m = (lmo->exp_weight > 0.0) + (lmo->uniform_weight > 0.0 && lmo->uniform_low == 0.0);
    if (m > p)
        return 1;
    return lmo->gamma_weight > 0.0 && lmo->gamma_shape > (double)(p - m);
}

dpzo_status dpzo_lmo_stats_compute(dpzo_ctx *ctx, const dpzo_lmo *lmo, double gamma,
                                   dpzo_lmo_stats *out)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (st)
        return st;
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no output given for the LMO statistics");
    if (!(isfinite(gamma) && gamma > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "usefulness gamma must be finite and > 0, got %g",
                          gamma);
    dpzo__gsl_quiet();
    dpzo_lmo_stats r = {.gamma = gamma};
    r.mean_y = dpzo_lmo_dlog_mgf(lmo, 0.0);
    r.usefulness = -expm1(dpzo_lmo_log_mgf(lmo, -gamma));
    r.mean_abs = INFINITY;
    r.variance = INFINITY;
    int need1 = inverse_moment_finite(lmo, 1), need2 = inverse_moment_finite(lmo, 2);
    if (need1 || need2) {
        gsl_integration_workspace *ws = gsl_integration_workspace_alloc(STATS_LIMIT);
        if (ws == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory (quadrature workspace)");
        if (need1)
            st = moment_integral(ctx, lmo, 1, ws, "E|X|", &r.mean_abs);
        if (!st && need2) {
            st = moment_integral(ctx, lmo, 2, ws, "Var X", &r.variance);
            r.variance *= 2.0;
        }
        gsl_integration_workspace_free(ws);
        if (st)
            return st;
    }
    *out = r;
    return DPZO_OK;
}

/* ---- pure DP ---------------------------------------------------------------- */

static dpzo_status check_sensitivity(dpzo_ctx *ctx, double c)
{
    if (!(isfinite(c) && c > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g", c);
    return DPZO_OK;
}

int dpzo__lmo_eps0_ival(const dpzo_lmo *lmo, double sensitivity, ival *out)
{
    /* eps0 = log M_Y'(0) - log M_Y'(-C)
     *      = log (log M)'(0) - log M_Y(-C) - log (log M)'(-C)   (M_Y(0) = 1) */
    ival t, a, b, c;
    ival_init(&t, DPZO_LMO_PREC);
    ival_init(&a, DPZO_LMO_PREC);
    ival_init(&b, DPZO_LMO_PREC);
    ival_init(&c, DPZO_LMO_PREC);
    int bad = 0;
    ival_set_ui(&t, 0);
    bad |= dpzo__lmo_dlog_mgf_ival(lmo, &t, &a);
    ival_set_d(&t, -sensitivity);
    bad |= dpzo__lmo_log_mgf_ival(lmo, &t, &b);
    bad |= dpzo__lmo_dlog_mgf_ival(lmo, &t, &c);
    if (!bad) {
        ival_log(&a, &a);
        ival_log(&c, &c);
        ival_sub(&a, &a, &b);
        ival_sub(out, &a, &c);
    }
    ival_clear(&t);
    ival_clear(&a);
    ival_clear(&b);
    ival_clear(&c);
    return bad;
}

static void bound_from_ival(const ival *v, dpzo_bound *out)
{
    out->lower = ival_lo_d(v);
    out->upper = ival_hi_d(v);
    out->value = ival_mid_d(v);
}

dpzo_status dpzo_lmo_eps0(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                          dpzo_bound *out)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (!st)
        st = check_sensitivity(ctx, sensitivity);
    if (st)
        return st;
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no output given for eps0");
    ival e;
    ival_init(&e, DPZO_LMO_PREC);
    /* t <= 0 lies inside the MGF domain, so this cannot report +inf */
    if (dpzo__lmo_eps0_ival(lmo, sensitivity, &e)) {
        ival_clear(&e);
        return dpzo__fail(ctx, DPZO_EINVAL, "LMO eps0: MGF infinite at t <= 0 (internal error)");
    }
    bound_from_ival(&e, out);
    ival_clear(&e);
    return DPZO_OK;
}

dpzo_status dpzo_lmo_eps0_vector(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                                 dpzo_bound *out)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (!st)
        st = check_sensitivity(ctx, sensitivity);
    if (st)
        return st;
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no output given for eps0_vector");
    ival m1, m2, c;
    ival_init(&m1, DPZO_LMO_PREC);
    ival_init(&m2, DPZO_LMO_PREC);
    ival_init(&c, DPZO_LMO_PREC);
    dpzo__lmo_mean_y_ival(lmo, &m1);
    dpzo__lmo_second_moment_y_ival(lmo, &m2);
    ival_set_d(&c, sensitivity);
    ival_div(&m2, &m2, &m1);
    ival_mul(&m2, &m2, &c);
    bound_from_ival(&m2, out);
    ival_clear(&m1);
    ival_clear(&m2);
    ival_clear(&c);
    return DPZO_OK;
}
