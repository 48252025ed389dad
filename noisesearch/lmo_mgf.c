/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_mgf.c: the moment generating function of Y and the density of X,
 * in double precision and in interval arithmetic.
 *
 *   log M_Y(t) = -k log1p(-wG theta t) - log1p(-wE t / lam) + log M_U(wU t)
 *   log M_U(s) = s a + log(expm1(s w) / (s w)),  w = b - a,  M_U(0) = 1
 *   (log M_Y)'(t) = wG k theta / (1 - wG theta t) + wE / (lam - wE t) + wU psi_U(wU t)
 *   psi_U(s) = a + w h(s w),  h(u) = 1/(1 - e^{-u}) - 1/u,  h(0) = 1/2
 *   f_X(x) = M_Y'(-|x|) / 2 = M_Y(-|x|) (log M_Y)'(-|x|) / 2
 *
 * Near u = 0, h is evaluated by its series (the difference cancels), and
 * expm1/log1p keep every other place accurate; large arguments stay in log space,
 * so nothing overflows for |t| up to the double range. */
#include <math.h>
#include "lmo_internal.h"

static int finite_nonneg(double x) { return isfinite(x) && x >= 0.0; }
static int finite_pos(double x) { return isfinite(x) && x > 0.0; }

dpzo_status dpzo_lmo_validate(dpzo_ctx *ctx, const dpzo_lmo *lmo)
{
    if (lmo == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no LMO parameters given");
    if (!finite_nonneg(lmo->gamma_weight))
        return dpzo__fail(ctx, DPZO_EINVAL, "gamma weight must be finite and >= 0, got %g",
                          lmo->gamma_weight);
    if (!finite_nonneg(lmo->exp_weight))
        return dpzo__fail(ctx, DPZO_EINVAL, "exponential weight must be finite and >= 0, got %g",
                          lmo->exp_weight);
    if (!finite_nonneg(lmo->uniform_weight))
        return dpzo__fail(ctx, DPZO_EINVAL, "uniform weight must be finite and >= 0, got %g",
                          lmo->uniform_weight);
    if (lmo->gamma_weight == 0.0 && lmo->exp_weight == 0.0 && lmo->uniform_weight == 0.0)
        return dpzo__fail(ctx, DPZO_EINVAL, "at least one of the three weights must be > 0");
    if (lmo->gamma_weight > 0.0) {
        if (!finite_pos(lmo->gamma_shape))
            return dpzo__fail(ctx, DPZO_EINVAL, "gamma shape must be finite and > 0, got %g",
                              lmo->gamma_shape);
        if (!finite_pos(lmo->gamma_scale))
            return dpzo__fail(ctx, DPZO_EINVAL, "gamma scale must be finite and > 0, got %g",
                              lmo->gamma_scale);
    }
    if (lmo->exp_weight > 0.0 && !finite_pos(lmo->exp_rate))
        return dpzo__fail(ctx, DPZO_EINVAL, "exponential rate must be finite and > 0, got %g",
                          lmo->exp_rate);
    if (lmo->uniform_weight > 0.0) {
        if (!finite_nonneg(lmo->uniform_low))
            return dpzo__fail(ctx, DPZO_EINVAL, "uniform low must be finite and >= 0, got %g",
                              lmo->uniform_low);
        if (!isfinite(lmo->uniform_high) || !(lmo->uniform_high > lmo->uniform_low))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "uniform high must be finite and > uniform low (%g), got %g",
                              lmo->uniform_low, lmo->uniform_high);
    }
    return DPZO_OK;
}

/* ---- double precision ------------------------------------------------------ */

/* log(expm1(z)/z), the log MGF of Uniform(0, 1) at z. */
static double log_expm1_over(double z)
{
    if (fabs(z) < 1e-4)
        return z / 2.0 + z * z / 24.0 - z * z * z * z / 2880.0;
    if (z > 0.0)
        return z + log(-expm1(-z)) - log(z);
    return log(-expm1(z)) - log(-z);
}

/* h(u) = 1/(1 - e^{-u}) - 1/u, the mean of the exponentially tilted Uniform(0, 1). */
static double h_tilt(double u)
{
    if (fabs(u) < 1e-2) {
        double u2 = u * u;
        return 0.5 + u * (1.0 / 12.0 + u2 * (-1.0 / 720.0 + u2 * (1.0 / 30240.0 -
                                                                     u2 / 1209600.0)));
    }
    if (u > 0.0)
        return 1.0 / (-expm1(-u)) - 1.0 / u;
    /* u < 0: 1/(1 - e^{-u}) = e^{u} / expm1(u), written without overflow */
    return exp(u) / expm1(u) - 1.0 / u;
}

double dpzo_lmo_log_mgf(const dpzo_lmo *lmo, double t)
{
    double r = 0.0;
    if (t == 0.0)
        return 0.0;
    if (lmo->gamma_weight > 0.0) {
        double a = lmo->gamma_weight * lmo->gamma_scale * t;
        if (a >= 1.0)
            return INFINITY;
        r -= lmo->gamma_shape * log1p(-a);
    }
    if (lmo->exp_weight > 0.0) {
        double a = lmo->exp_weight * t;
        if (a >= lmo->exp_rate)
            return INFINITY;
        r -= log1p(-a / lmo->exp_rate);
    }
    if (lmo->uniform_weight > 0.0) {
        double s = lmo->uniform_weight * t;
        double w = lmo->uniform_high - lmo->uniform_low;
        r += s * lmo->uniform_low + log_expm1_over(s * w);
    }
    return r;
}

double dpzo_lmo_dlog_mgf(const dpzo_lmo *lmo, double t)
{
    double r = 0.0;
    if (lmo->gamma_weight > 0.0) {
        double c = lmo->gamma_weight * lmo->gamma_scale;
        if (c * t >= 1.0)
            return INFINITY;
        r += lmo->gamma_shape * c / (1.0 - c * t);
    }
    if (lmo->exp_weight > 0.0) {
        if (lmo->exp_weight * t >= lmo->exp_rate)
            return INFINITY;
        r += lmo->exp_weight / (lmo->exp_rate - lmo->exp_weight * t);
    }
    if (lmo->uniform_weight > 0.0) {
        double w = lmo->uniform_high - lmo->uniform_low;
        r += lmo->uniform_weight *
             (lmo->uniform_low + w * h_tilt(lmo->uniform_weight * t * w));
    }
    return r;
}

double dpzo_lmo_log_pdf(const dpzo_lmo *lmo, double x)
{
    double s = -fabs(x);
    return -M_LN2 + dpzo_lmo_log_mgf(lmo, s) + log(dpzo_lmo_dlog_mgf(lmo, s));
}

double dpzo_lmo_pdf(const dpzo_lmo *lmo, double x) { return exp(dpzo_lmo_log_pdf(lmo, x)); }

double dpzo_lmo_cdf(const dpzo_lmo *lmo, double x)
{
    if (x < 0.0)
        return 0.5 * exp(dpzo_lmo_log_mgf(lmo, x));
    return 1.0 - 0.5 * exp(dpzo_lmo_log_mgf(lmo, -x));
}

double dpzo_lmo_sf(const dpzo_lmo *lmo, double x) { return dpzo_lmo_cdf(lmo, -x); }

/* ---- intervals ----------------------------------------------------------------- */

#define PREC DPZO_LMO_PREC

/* r = c (a double constant, exact) */
static void setd(ival *r, double c) { ival_set_d(r, c); }

/* log(expm1(z)/z) for an interval z not containing 0. */
static void log_expm1_over_ival(const ival *z, ival *out)
{
    ival e, a;
    ival_init(&e, PREC);
    ival_init(&a, PREC);
    if (mpfr_sgn(z->lo) > 0) {
        /* z + log(-expm1(-z)) - log(z): monotone pieces, each enclosed */
        ival_neg(&a, z);
        ival_expm1(&e, &a);
        ival_neg(&e, &e);
        ival_log(&e, &e);
        ival_add(&e, &e, z);
        ival_log(&a, z);
        ival_sub(out, &e, &a);
    } else {
        ival_expm1(&e, z);
        ival_neg(&e, &e);
        ival_log(&e, &e);
        ival_neg(&a, z);
        ival_log(&a, &a);
        ival_sub(out, &e, &a);
    }
    ival_clear(&e);
    ival_clear(&a);
}

/* h(u) enclosed for an interval u of one sign (not containing 0). */
static void h_tilt_ival(const ival *u, ival *out)
{
    ival a, b, one;
    ival_init(&a, PREC);
    ival_init(&b, PREC);
    ival_init(&one, PREC);
    ival_set_ui(&one, 1);
    double umax = fmax(fabs(ival_lo_d(u)), fabs(ival_hi_d(u)));
    if (umax < 1e-3) {
        /* 1/2 + u/12 - u^3/720 + R: h(u) = 1/2 + sum_n B_2n u^(2n-1) / (2n)!, whose terms
         * alternate in sign and decrease in size for |u| < 2 pi, so |R| <= |u|^5/30240
         * (the next term); 30000 leaves margin */
        setd(&a, 12.0);
        ival_div(&a, u, &a);
        ival_mul(&b, u, u);
        ival_mul(&b, &b, u);
        setd(out, 720.0);
        ival_div(&b, &b, out);
        ival_sub(&a, &a, &b);
        setd(&b, 0.5);
        ival_add(&a, &a, &b);
        double r = umax * umax * umax * umax * umax / 3e4 * (1.0 + 1e-10);
        mpfr_sub_d(a.lo, a.lo, r, MPFR_RNDD);
        mpfr_add_d(a.hi, a.hi, r, MPFR_RNDU);
        ival_set(out, &a);
    } else {
        /* 1/(1 - e^{-u}) - 1/u with 1 - e^{-u} = -expm1(-u) */
        ival_neg(&a, u);
        ival_expm1(&a, &a);
        ival_neg(&a, &a);
        ival_div(&a, &one, &a);
        ival_div(&b, &one, u);
        ival_sub(out, &a, &b);
    }
    ival_clear(&a);
    ival_clear(&b);
    ival_clear(&one);
}

static int ival_is_zero(const ival *t) { return mpfr_zero_p(t->lo) && mpfr_zero_p(t->hi); }

int dpzo__lmo_log_mgf_ival(const dpzo_lmo *lmo, const ival *t, ival *out)
{
    ival r, a, c;
    ival_init(&r, PREC);
    ival_init(&a, PREC);
    ival_init(&c, PREC);
    ival_set_ui(&r, 0);
    int inf = 0;
    if (!ival_is_zero(t)) {
        if (lmo->gamma_weight > 0.0) {
            setd(&c, lmo->gamma_weight);
            setd(&a, lmo->gamma_scale);
            ival_mul(&c, &c, &a);
            ival_mul(&a, &c, t); /* wG theta t */
            if (mpfr_cmp_ui(a.hi, 1) >= 0) {
                inf = 1;
                goto done;
            }
            ival_neg(&a, &a);
            ival_log1p(&a, &a);
            setd(&c, lmo->gamma_shape);
            ival_mul(&a, &a, &c);
            ival_sub(&r, &r, &a);
        }
        if (lmo->exp_weight > 0.0) {
            setd(&c, lmo->exp_weight);
            ival_mul(&a, &c, t);
            setd(&c, lmo->exp_rate);
            ival_div(&a, &a, &c); /* wE t / lam */
            if (mpfr_cmp_ui(a.hi, 1) >= 0) {
                inf = 1;
                goto done;
            }
            ival_neg(&a, &a);
            ival_log1p(&a, &a);
            ival_sub(&r, &r, &a);
        }
        if (lmo->uniform_weight > 0.0) {
            ival s, w;
            ival_init(&s, PREC);
            ival_init(&w, PREC);
            setd(&c, lmo->uniform_weight);
            ival_mul(&s, &c, t);
            setd(&w, lmo->uniform_high);
            setd(&c, lmo->uniform_low);
            ival_sub(&w, &w, &c);
            ival_mul(&a, &s, &c);
            ival_add(&r, &r, &a); /* s a */
            ival_mul(&a, &s, &w);
            log_expm1_over_ival(&a, &a);
            ival_add(&r, &r, &a);
            ival_clear(&s);
            ival_clear(&w);
        }
    }
    ival_set(out, &r);
done:
    ival_clear(&r);
    ival_clear(&a);
    ival_clear(&c);
    return inf;
}

int dpzo__lmo_dlog_mgf_ival(const dpzo_lmo *lmo, const ival *t, ival *out)
{
    ival r, a, c, one;
    ival_init(&r, PREC);
    ival_init(&a, PREC);
    ival_init(&c, PREC);
    ival_init(&one, PREC);
    ival_set_ui(&r, 0);
    ival_set_ui(&one, 1);
    int inf = 0;
    if (lmo->gamma_weight > 0.0) {
        setd(&c, lmo->gamma_weight);
        setd(&a, lmo->gamma_scale);
        ival_mul(&c, &c, &a); /* wG theta */
        ival_mul(&a, &c, t);
        ival_sub(&a, &one, &a);
        if (mpfr_sgn(a.lo) <= 0) {
            inf = 1;
            goto done;
        }
        ival_div(&a, &c, &a);
        setd(&c, lmo->gamma_shape);
        ival_mul(&a, &a, &c);
        ival_add(&r, &r, &a);
    }
    if (lmo->exp_weight > 0.0) {
        setd(&c, lmo->exp_weight);
        ival_mul(&a, &c, t);
        ival_neg(&a, &a);
        setd(&one, lmo->exp_rate);
        ival_add(&a, &a, &one); /* lam - wE t */
        ival_set_ui(&one, 1);
        if (mpfr_sgn(a.lo) <= 0) {
            inf = 1;
            goto done;
        }
        ival_div(&a, &c, &a);
        ival_add(&r, &r, &a);
    }
    if (lmo->uniform_weight > 0.0) {
        ival w, u;
        ival_init(&w, PREC);
        ival_init(&u, PREC);
        setd(&w, lmo->uniform_high);
        setd(&c, lmo->uniform_low);
        ival_sub(&w, &w, &c);
        if (ival_is_zero(t)) {
            setd(&a, 0.5);
        } else {
            setd(&u, lmo->uniform_weight);
            ival_mul(&u, &u, t);
            ival_mul(&u, &u, &w);
            h_tilt_ival(&u, &a);
        }
        ival_mul(&a, &a, &w);
        ival_add(&a, &a, &c); /* psi_U = a + w h */
        setd(&c, lmo->uniform_weight);
        ival_mul(&a, &a, &c);
        ival_add(&r, &r, &a);
        ival_clear(&w);
        ival_clear(&u);
    }
    ival_set(out, &r);
done:
    ival_clear(&r);
    ival_clear(&a);
    ival_clear(&c);
    ival_clear(&one);
    return inf;
}

void dpzo__lmo_log_pdf_ival(const dpzo_lmo *lmo, double x, ival *out)
{
    ival t, a, b;
    ival_init(&t, PREC);
    ival_init(&a, PREC);
    ival_init(&b, PREC);
    setd(&t, -fabs(x));
    (void)dpzo__lmo_log_mgf_ival(lmo, &t, &a);  /* t <= 0: always finite */
    (void)dpzo__lmo_dlog_mgf_ival(lmo, &t, &b);
    ival_log(&b, &b);
    ival_add(&a, &a, &b);
    setd(&b, 2.0);
    ival_log(&b, &b);
    ival_sub(out, &a, &b);
    ival_clear(&t);
    ival_clear(&a);
    ival_clear(&b);
}

void dpzo__lmo_mean_y_ival(const dpzo_lmo *lmo, ival *out)
{
    ival t;
    ival_init(&t, PREC);
    ival_set_ui(&t, 0);
    (void)dpzo__lmo_dlog_mgf_ival(lmo, &t, out);
    ival_clear(&t);
}

void dpzo__lmo_second_moment_y_ival(const dpzo_lmo *lmo, ival *out)
{
    /* E[Y^2] = Var Y + E[Y]^2, Var Y = wG^2 k theta^2 + wE^2 / lam^2 + wU^2 w^2 / 12 */
    ival v, a, c;
    ival_init(&v, PREC);
    ival_init(&a, PREC);
    ival_init(&c, PREC);
    ival_set_ui(&v, 0);
    if (lmo->gamma_weight > 0.0) {
        setd(&a, lmo->gamma_weight);
        setd(&c, lmo->gamma_scale);
        ival_mul(&a, &a, &c);
        ival_mul(&a, &a, &a);
        setd(&c, lmo->gamma_shape);
        ival_mul(&a, &a, &c);
        ival_add(&v, &v, &a);
    }
    if (lmo->exp_weight > 0.0) {
        setd(&a, lmo->exp_weight);
        setd(&c, lmo->exp_rate);
        ival_div(&a, &a, &c);
        ival_mul(&a, &a, &a);
        ival_add(&v, &v, &a);
    }
    if (lmo->uniform_weight > 0.0) {
        setd(&a, lmo->uniform_high);
        setd(&c, lmo->uniform_low);
        ival_sub(&a, &a, &c);
        setd(&c, lmo->uniform_weight);
        ival_mul(&a, &a, &c);
        ival_mul(&a, &a, &a);
        setd(&c, 12.0);
        ival_div(&a, &a, &c);
        ival_add(&v, &v, &a);
    }
    dpzo__lmo_mean_y_ival(lmo, &a);
    ival_mul(&a, &a, &a);
    ival_add(out, &v, &a);
    ival_clear(&v);
    ival_clear(&a);
    ival_clear(&c);
}
