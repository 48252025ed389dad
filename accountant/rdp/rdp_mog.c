/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_mog.c: RDP of dp_accounting's mixture-of-Gaussians and truncated
 * Poisson-sampled Gaussian events (docs/accountant.md 3.8 has the derivations).
 *
 * Mixture of Gaussians (sigma, c_i, p_i). In units of sigma (y = x / sigma, d_i = c_i / sigma,
 * w_i = p_i / sum p) the pair is M = sum_i w_i N(d_i, 1) and N = N(0, 1), with the privacy
 * loss L(y) = log(M/N)(y) = log sum_i w_i exp(d_i y - d_i^2 / 2), convex in y (a
 * log-sum-exp of affine functions) with slope L' in [d_min, d_max]. Both directions are
 *   (alpha - 1) D_alpha(M || N) = log E_Z[e^{alpha L(Z)}],
 *   (alpha - 1) D_alpha(N || M) = log E_Z[e^{-(alpha - 1) L(Z)}],   Z ~ N(0, 1),
 * one integral I(beta) = E_Z[e^{beta L(Z)}] at beta = alpha and beta = -(alpha - 1).
 * Between grid points u < v, L lies above its tangent at the midpoint and below its chord;
 * on the two tails it lies above the tangent at the end point and below the line of slope
 * d_max (right) or d_min (left) through it. With an affine bound A + s (y - y0) the piece
 * integrates in closed form:
 *   int_u^v phi(y) e^{beta (A + s (y - y0))} dy
 *       = e^{beta (A - s y0) + (beta s)^2 / 2} (Phi(v - beta s) - Phi(u - beta s)),
 * so the sums over the pieces enclose I(beta) (upper from the chord / extreme-slope lines
 * when beta > 0 and from the tangents when beta < 0, lower the other way). The certified
 * path evaluates every piece in MPFR interval arithmetic (ival.h): the enclosure holds
 * for whatever grid is used; the grid (double, adaptive: steps of
 * sqrt(8 tol / (|beta| L'')) where L is curved, at most MOG_MAX_CELLS cells) only sets how
 * tight it is. Both directions are also at most alpha d_max^2 / 2 (joint convexity of
 * e^{(alpha - 1) D_alpha}: the Gaussian of the largest sensitivity), kept where smaller.
 *
 * Truncated Poisson-sampled Gaussian (n, q, B, sigma). With m ~ Bin(N, q) other records
 * sampled (N = n: the neighbour may hold n records besides the one they differ in),
 * the pair is, given m < B, the Poisson-sampled Gaussian (q, sigma), and given m >= B a
 * Poisson-sampled Gaussian of rate q_m = q B / (m + 1) <= q_max = q B / (B + 1) and
 * sensitivity 2 (the record displaces another: noise multiplier sigma / 2). Joint
 * convexity over m, convexity of A(q) = e^{(alpha-1) RDP_sgm(q)} in q with A(0) = 1, and
 * sum_{m >= B} P(m) q_m = B / (N + 1) P(Bin(N + 1, q) >= B + 1) =: s give, with
 * A1 = A(q, sigma), A2 = A(q_max, sigma / 2) and t = P(m >= B),
 *   e^{(alpha-1) RDP} <= min(A1 + (s / q_max)(A2 - 1), A1 + t max(0, A2 - A1)),
 * t and s bounded above by the binomial tails summed in intervals (Chernoff's
 * exp(-N KL(k/N || q)) where the sum would be too long). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "rdp_internal.h"
#include "rdp_sgm.h"
#include "ival.h"

#define MOG_WINDOW 12.0       /* grid reaches this many units beyond where the mass is */
#define MOG_TOL 1e-5          /* per-cell relative slack aimed at */
#define MOG_MAX_STEP 0.5
#define MOG_MAX_CELLS 20000

/* ---- the mixture in doubles ---------------------------------------------------------- */

typedef struct {
    size_t k;
    double *d, *lw; /* d_i = c_i / sigma, lw_i = log w_i - d_i^2 / 2 */
    double dmin, dmax;
} mog_d;

static int mog_d_init(mog_d *m, const dpzo_event *e)
{
    m->k = e->n_mix;
    m->d = malloc(2 * m->k * sizeof *m->d);
    if (m->d == NULL)
        return -1;
    m->lw = m->d + m->k;
    m->dmin = INFINITY;
    m->dmax = 0.0;
    double ls = log(e->param2);
    for (size_t i = 0; i < m->k; i++) {
        double d = e->mix[i] / e->param;
        m->d[i] = d;
        m->lw[i] = log(e->mix[m->k + i]) - ls - 0.5 * d * d;
        m->dmin = d < m->dmin ? d : m->dmin;
        m->dmax = d > m->dmax ? d : m->dmax;
    }
    return 0;
}

/* L(y), L'(y), L''(y) */
static void mog_eval(const mog_d *m, double y, double *L, double *L1, double *L2)
{
    double mx = -INFINITY;
    for (size_t i = 0; i < m->k; i++) {
        double t = m->lw[i] + m->d[i] * y;
        mx = t > mx ? t : mx;
    }
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (size_t i = 0; i < m->k; i++) {
        double w = exp(m->lw[i] + m->d[i] * y - mx);
        s0 += w;
        s1 += w * m->d[i];
        s2 += w * m->d[i] * m->d[i];
    }
    *L = mx + log(s0);
    if (L1 != NULL)
        *L1 = s1 / s0;
    if (L2 != NULL) {
        double v = s2 / s0 - (s1 / s0) * (s1 / s0);
        *L2 = v > 0.0 ? v : 0.0;
    }
}

/* The grid y_0 < ... < y_N for one beta (N <= MOG_MAX_CELLS); returns N, or 0 when out
 * of memory. *ys is the caller's to free. */
static size_t mog_grid(const mog_d *m, double beta, double **ys)
{
    double a = beta * m->dmin, b = beta * m->dmax;
    double lo = (a < b ? a : b) - MOG_WINDOW, hi = (a < b ? b : a) + MOG_WINDOW;
    double hmin = (hi - lo) / (MOG_MAX_CELLS - 2), ab = fabs(beta);
    double *y = malloc((MOG_MAX_CELLS + 1) * sizeof *y);
    if (y == NULL)
        return 0;
    size_t n = 0;
    y[n++] = lo;
    double x = lo;
    while (x < hi && n <= MOG_MAX_CELLS - 1) {
        double L, L1, c0, c1;
        mog_eval(m, x, &L, &L1, &c0);
        double h = c0 > 0.0 ? sqrt(8.0 * MOG_TOL / (ab * c0)) : MOG_MAX_STEP;
        h = h > MOG_MAX_STEP ? MOG_MAX_STEP : h < hmin ? hmin : h;
        mog_eval(m, x + h, &L, &L1, &c1); /* the curvature may grow across the cell */
        if (c1 > c0) {
            h = sqrt(8.0 * MOG_TOL / (ab * c1));
            h = h > MOG_MAX_STEP ? MOG_MAX_STEP : h < hmin ? hmin : h;
        }
        x = x + h > hi ? hi : x + h;
        y[n++] = x;
    }
    if (x < hi) /* cell budget spent: one last (wide) cell; the bounds stay valid */
        y[n++] = hi;
    *ys = y;
    return n - 1;
}

/* log(Phi(v) - Phi(u)) for u < v (either may be infinite) */
static double log_ndiff(double u, double v)
{
    const double r2 = M_SQRT1_2;
    if (u == -INFINITY)
        return dpzo__log_half_erfc(-v * r2);
    if (v == INFINITY)
        return dpzo__log_half_erfc(u * r2);
    if (u >= 0.0) {
        double a = dpzo__log_half_erfc(u * r2), b = dpzo__log_half_erfc(v * r2);
        return a + log(-expm1(b - a));
    }
    if (v <= 0.0) {
        double a = dpzo__log_half_erfc(-v * r2), b = dpzo__log_half_erfc(-u * r2);
        return a + log(-expm1(b - a));
    }
    return log1p(-0.5 * (erfc(v * r2) + erfc(-u * r2)));
}

/* log of int_u^v phi(y) e^{beta (A + s (y - y0))} dy */
static double log_piece(double beta, double A, double s, double y0, double u, double v)
{
    double k = beta * s;
    return beta * (A - s * y0) + 0.5 * k * k + log_ndiff(u - k, v - k);
}

/* Double estimates of log I(beta)'s two bounds (the fast path's value is their middle). */
static int mog_log_i_fast(const mog_d *m, double beta, double *lo, double *hi)
{
    double *y;
    size_t n = mog_grid(m, beta, &y);
    if (n == 0)
        return -1;
    double up = -INFINITY, dn = -INFINITY; /* from L's upper lines / from its tangents */
    double Lu, L1u, Lv, L1v;
    mog_eval(m, y[0], &Lu, &L1u, NULL);
    up = dpzo__log_add(up, log_piece(beta, Lu, m->dmin, y[0], -INFINITY, y[0]));
    dn = dpzo__log_add(dn, log_piece(beta, Lu, L1u, y[0], -INFINITY, y[0]));
    for (size_t j = 0; j < n; j++) {
        double u = y[j], v = y[j + 1], t = 0.5 * (u + v), Lt, L1t;
        mog_eval(m, v, &Lv, &L1v, NULL);
        mog_eval(m, t, &Lt, &L1t, NULL);
        up = dpzo__log_add(up, log_piece(beta, Lu, (Lv - Lu) / (v - u), u, u, v));
        dn = dpzo__log_add(dn, log_piece(beta, Lt, L1t, t, u, v));
        Lu = Lv;
        L1u = L1v;
    }
    up = dpzo__log_add(up, log_piece(beta, Lu, m->dmax, y[n], y[n], INFINITY));
    dn = dpzo__log_add(dn, log_piece(beta, Lu, L1u, y[n], y[n], INFINITY));
    free(y);
    /* beta > 0: e^{beta L} is largest on L's upper lines; beta < 0 on its tangents */
    *hi = beta > 0.0 ? up : dn;
    *lo = beta > 0.0 ? dn : up;
    return 0;
}

/* ---- the mixture in MPFR intervals ---------------------------------------------------- */

typedef struct {
    size_t k;
    ival *d, *lw;
    ival dmin, dmax, sqrt1_2, half, one;
    ival t[8];
} mog_iv;

static int mog_iv_init(mog_iv *m, const dpzo_event *e, mpfr_prec_t prec)
{
    m->k = e->n_mix;
    m->d = malloc(2 * m->k * sizeof *m->d);
    if (m->d == NULL)
        return -1;
    m->lw = m->d + m->k;
    ival_init(&m->dmin, prec);
    ival_init(&m->dmax, prec);
    ival_init(&m->sqrt1_2, prec);
    ival_init(&m->half, prec);
    ival_init(&m->one, prec);
    for (int i = 0; i < 8; i++)
        ival_init(&m->t[i], prec);
    ival *sig = &m->t[0], *ls = &m->t[1], *x = &m->t[2];
    ival_set_ui(&m->one, 1);
    ival_set_d(&m->half, 0.5);
    ival_set_ui(&m->sqrt1_2, 2);
    ival_sqrt(&m->sqrt1_2, &m->sqrt1_2);
    ival_div(&m->sqrt1_2, &m->one, &m->sqrt1_2);
    ival_set_d(sig, e->param);
    ival_set_ui(ls, 0); /* sum p, in intervals: the mixture's own normalisation */
    for (size_t i = 0; i < m->k; i++) {
        ival_set_d(x, e->mix[m->k + i]);
        ival_add(ls, ls, x);
    }
    ival_log(ls, ls);
    size_t imin = 0, imax = 0;
    for (size_t i = 0; i < m->k; i++) {
        ival_init(&m->d[i], prec);
        ival_init(&m->lw[i], prec);
        ival_set_d(x, e->mix[i]);
        ival_div(&m->d[i], x, sig);
        ival_set_d(x, e->mix[m->k + i]);
        ival_log(&m->lw[i], x);
        ival_sub(&m->lw[i], &m->lw[i], ls);
        ival_mul(x, &m->d[i], &m->d[i]);
        ival_mul(x, x, &m->half);
        ival_sub(&m->lw[i], &m->lw[i], x);
        imin = e->mix[i] < e->mix[imin] ? i : imin;
        imax = e->mix[i] > e->mix[imax] ? i : imax;
    }
    ival_set(&m->dmin, &m->d[imin]);
    ival_set(&m->dmax, &m->d[imax]);
    return 0;
}

static void mog_iv_clear(mog_iv *m)
{
    for (size_t i = 0; i < m->k; i++) {
        ival_clear(&m->d[i]);
        ival_clear(&m->lw[i]);
    }
    free(m->d);
    ival_clear(&m->dmin);
    ival_clear(&m->dmax);
    ival_clear(&m->sqrt1_2);
    ival_clear(&m->half);
    ival_clear(&m->one);
    for (int i = 0; i < 8; i++)
        ival_clear(&m->t[i]);
}

/* L(y) and (if L1) L'(y) at the exact double y */
static void mog_iv_eval(mog_iv *m, double y, ival *L, ival *L1)
{
    ival *yy = &m->t[0], *s0 = &m->t[1], *s1 = &m->t[2], *x = &m->t[3];
    ival_set_d(yy, y);
    ival_set_ui(s0, 0);
    ival_set_ui(s1, 0);
    for (size_t i = 0; i < m->k; i++) {
        ival_mul(x, &m->d[i], yy);
        ival_add(x, x, &m->lw[i]);
        ival_exp(x, x);
        ival_add(s0, s0, x);
        if (L1 != NULL) {
            ival_mul(x, x, &m->d[i]);
            ival_add(s1, s1, x);
        }
    }
    ival_log(L, s0);
    if (L1 != NULL)
        ival_div(L1, s1, s0);
}

/* acc += int_u^v phi(y) e^{beta (A + s (y - y0))} dy (u = -inf / v = +inf where has_u /
 * has_v is 0) */
static void mog_iv_piece(mog_iv *m, const ival *beta, const ival *A, const ival *s, double y0,
                         int has_u, double u, int has_v, double v, ival *acc)
{
    ival *k = &m->t[3], *x = &m->t[4], *a = &m->t[5], *b = &m->t[6], *ex = &m->t[7];
    ival_mul(k, beta, s);
    /* exponent beta (A - s y0) + k^2 / 2 */
    ival_set_d(x, y0);
    ival_mul(x, x, s);
    ival_sub(x, A, x);
    ival_mul(ex, x, beta);
    ival_mul(x, k, k);
    ival_mul(x, x, &m->half);
    ival_add(ex, ex, x);
    ival_exp(ex, ex);
    /* Phi(v - k) - Phi(u - k), from the upper tails Q(z) = erfc(z / sqrt 2) / 2 where
     * the cell lies right of the shift, else from the lower ones */
    double kmid = ival_mid_d(k);
    int right = !has_v || (has_u && u - kmid >= 0.0); /* a right tail: Q(u') alone */
    if (has_u) {
        ival_set_d(a, u);
        ival_sub(a, a, k);
        ival_mul(a, a, &m->sqrt1_2);
        if (!right)
            ival_neg(a, a);
        ival_erfc(a, a);
    }
    if (has_v) {
        ival_set_d(b, v);
        ival_sub(b, b, k);
        ival_mul(b, b, &m->sqrt1_2);
        if (!right)
            ival_neg(b, b);
        ival_erfc(b, b);
    }
    if (right)
        has_v ? ival_sub(x, a, b) : ival_set(x, a);   /* Q(u') - Q(v') */
    else
        has_u ? ival_sub(x, b, a) : ival_set(x, b);   /* Q(-v') - Q(-u') */
    ival_mul(x, x, &m->half);
    ival_mul(x, x, ex);
    ival_add(acc, acc, x);
}

/* Encloses log I(beta) */
static int mog_log_i_cert(const mog_d *md, mog_iv *m, double beta_d, mpfr_prec_t prec,
                          double *lo, double *hi)
{
    double *y;
    size_t n = mog_grid(md, beta_d, &y);
    if (n == 0)
        return -1;
    ival v[10];
    for (int i = 0; i < 10; i++)
        ival_init(&v[i], prec);
    ival *beta = &v[0], *up = &v[1], *dn = &v[2], *Lu = &v[3], *L1u = &v[4], *Lv = &v[5],
         *Lt = &v[6], *L1t = &v[7], *s = &v[8], *wd = &v[9];
    ival_set_d(beta, beta_d);
    ival_set_ui(up, 0);
    ival_set_ui(dn, 0);
    mog_iv_eval(m, y[0], Lu, L1u);
    mog_iv_piece(m, beta, Lu, &m->dmin, y[0], 0, 0.0, 1, y[0], up);
    mog_iv_piece(m, beta, Lu, L1u, y[0], 0, 0.0, 1, y[0], dn);
    for (size_t j = 0; j < n; j++) {
        double u = y[j], w = y[j + 1], t = 0.5 * (u + w);
        mog_iv_eval(m, w, Lv, NULL);
        mog_iv_eval(m, t, Lt, L1t);
        ival_sub(s, Lv, Lu);
        ival_set_d(wd, w); /* the chord's slope over the exact width w - u */
        ival_set_d(L1u, u);
        ival_sub(wd, wd, L1u);
        ival_div(s, s, wd);
        mog_iv_piece(m, beta, Lu, s, u, 1, u, 1, w, up);
        mog_iv_piece(m, beta, Lt, L1t, t, 1, u, 1, w, dn);
        ival_set(Lu, Lv);
    }
    mog_iv_eval(m, y[n], Lu, L1u);
    mog_iv_piece(m, beta, Lu, &m->dmax, y[n], 1, y[n], 0, 0.0, up);
    mog_iv_piece(m, beta, Lu, L1u, y[n], 1, y[n], 0, 0.0, dn);
    free(y);
    ival_log(up, up);
    ival_log(dn, dn);
    ival *H = beta_d > 0.0 ? up : dn, *Lo = beta_d > 0.0 ? dn : up;
    *hi = ival_hi_d(H);
    *lo = ival_lo_d(Lo);
    for (int i = 0; i < 10; i++)
        ival_clear(&v[i]);
    return 0;
}

static dpzo_status mog_rdp(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                           dpzo_bound *out)
{
    double cmax = 0.0;
    for (size_t i = 0; i < e->n_mix; i++)
        cmax = e->mix[i] > cmax ? e->mix[i] : cmax;
    if (cmax == 0.0) { /* M = N: nothing released */
        *out = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (e->param == 0.0) {
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    /* the cap alpha d_max^2 / 2 (both directions), outward-rounded */
    double dmax_up = dpzo__up(cmax / e->param);
    double cap = dpzo__up(dpzo__up(0.5 * alpha) * dpzo__up(dmax_up * dmax_up));
    if (!(dmax_up <= 1e6)) { /* beyond, the quadrature's grid is meaningless: the cap */
        *out = (dpzo_bound){cap, 0.0, cap};
        return DPZO_OK;
    }
    mog_d md;
    if (mog_d_init(&md, e))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a mixture of Gaussians");
    double am1 = alpha - 1.0, flo, fhi, rlo, rhi;
    int oom = 0;
    if (!certified) {
        oom = mog_log_i_fast(&md, alpha, &flo, &fhi) || mog_log_i_fast(&md, -am1, &rlo, &rhi);
        free(md.d);
        if (oom)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a mixture of Gaussians");
        /* the estimate: the tangents err about half as much as the chords (h^2/24 against
         * h^2/12 of L'' per cell), in opposite directions */
        double f = (flo + fhi + flo) / (3.0 * am1);
        double r = (rlo + rhi + rhi) / (3.0 * am1);
        double v = f > r ? f : r;
        v = v < 0.0 ? 0.0 : v > cap ? cap : v;
        if (isnan(v))
            return dpzo__fail(ctx, DPZO_ENOCONV,
                              "RDP of the mixture of Gaussians at alpha=%g is not finite", alpha);
        *out = (dpzo_bound){v, v, v};
        return DPZO_OK;
    }
    mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    mog_iv m;
    if (mog_iv_init(&m, e, prec)) {
        free(md.d);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a mixture of Gaussians");
    }
    oom = mog_log_i_cert(&md, &m, alpha, prec, &flo, &fhi)
          || mog_log_i_cert(&md, &m, -am1, prec, &rlo, &rhi);
    mog_iv_clear(&m);
    free(md.d);
    if (oom)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for a mixture of Gaussians");
    /* divide by alpha - 1 (exact enough: alpha - 1 is exact for alpha in (1, 2^53]);
     * the nudges make both quotients proven */
    double lo_f = dpzo__down(flo / am1), lo_r = dpzo__down(rlo / am1);
    double hi_f = dpzo__up(fhi / am1), hi_r = dpzo__up(rhi / am1);
    if (flo < 0.0)
        lo_f = 0.0;
    if (rlo < 0.0)
        lo_r = 0.0;
    double lo = lo_f > lo_r ? lo_f : lo_r, hi = hi_f > hi_r ? hi_f : hi_r;
    if (isnan(hi) || !(hi <= cap))
        hi = cap;
    if (isnan(lo))
        lo = 0.0;
    if (lo > hi)
        lo = hi;
    double fast = 0.5 * (lo + hi);
    *out = (dpzo_bound){fast, lo, hi};
    return DPZO_OK;
}

/* ---- truncated Poisson-sampled Gaussian ----------------------------------------------- */

/* An upper bound on P(Bin(N, q) >= k) (Chernoff: exp(-N KL(k/N || q)) where k > N q;
 * 0 where k > N; 1 otherwise), rounded up. */
static double chernoff_up(mpfr_prec_t prec, double N, double k, double q)
{
    if (k > N)
        return 0.0;
    if (!(k > N * q) || q >= 1.0)
        return 1.0; /* (N q rounded: an exact comparison would only tighten, never loosen) */
    if (q == 0.0)
        return 0.0;
    ival v[6];
    for (int i = 0; i < 6; i++)
        ival_init(&v[i], prec);
    ival *x = &v[0], *qq = &v[1], *kl = &v[2], *a = &v[3], *b = &v[4], *one = &v[5];
    ival_set_ui(one, 1);
    ival_set_d(x, k);
    ival_set_d(a, N);
    ival_div(x, x, a);
    ival_set_d(qq, q);
    ival_div(kl, x, qq);
    ival_log(kl, kl);
    ival_mul(kl, kl, x);
    if (k < N) {
        ival_sub(a, one, x);
        ival_sub(b, one, qq);
        ival_div(b, a, b);
        ival_log(b, b);
        ival_mul(b, b, a);
        ival_add(kl, kl, b);
    } else { /* x = 1: KL = log(1/q) exactly, P = q^N */
        ival_set_ui(b, 0);
    }
    ival_set_d(a, N);
    ival_mul(kl, kl, a);
    ival_neg(kl, kl);
    ival_exp(kl, kl);
    double r = ival_hi_d(kl);
    for (int i = 0; i < 6; i++)
        ival_clear(&v[i]);
    return r > 1.0 ? 1.0 : r;
}

/* log Gamma(x + 1) at the exact integer x, enclosed */
static void lfact(ival *r, double x)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r->lo));
    mpfr_set_d(t, x + 1.0, MPFR_RNDN); /* x < 2^53 - 1: exact */
    mpfr_lngamma(r->lo, t, MPFR_RNDD);
    mpfr_lngamma(r->hi, t, MPFR_RNDU);
    mpfr_clear(t);
}

/* An upper bound on P(Bin(N, q) >= k): the sum of the terms from k on in intervals (the
 * first by log-Gammas, the rest by the ratio (N - m) q / ((m + 1)(1 - q)), which decreases
 * in m, so once it is below 1 the rest is at most term r / (1 - r)), where that takes at
 * most 10^6 terms; else, and always as a cap, Chernoff's bound (1 where k <= N q). */
static double binom_tail(mpfr_prec_t prec, double N, double k, double q, double *lower)
{
    double ch = chernoff_up(prec, N, k, q);
    *lower = 0.0;
    if (ch == 0.0 || N >= 0x1p53 - 2.0 || q >= 1.0 || q <= 0.0)
        return ch;
    ival v[8];
    for (int i = 0; i < 8; i++)
        ival_init(&v[i], prec);
    ival *term = &v[0], *sum = &v[1], *x = &v[2], *r = &v[3], *lq = &v[4], *one = &v[5],
         *qr = &v[6], *y = &v[7];
    ival_set_ui(one, 1);
    ival_set_d(lq, q);
    ival_sub(qr, one, lq);
    ival_div(qr, lq, qr); /* q / (1 - q) */
    ival_log(lq, lq);
    /* term_k = C(N, k) q^k (1 - q)^(N - k) */
    lfact(term, N);
    lfact(x, k);
    ival_sub(term, term, x);
    lfact(x, N - k);
    ival_sub(term, term, x);
    ival_set_d(x, k);
    ival_mul(x, x, lq);
    ival_add(term, term, x);
    ival_set_d(x, -q);
    ival_log1p(x, x);
    ival_set_d(y, N - k);
    ival_mul(x, x, y);
    ival_add(term, term, x);
    ival_exp(term, term);
    ival_set_ui(sum, 0);
    double res = ch;
    for (double m = k; m <= N && m < k + 1e6; m += 1.0) {
        ival_add(sum, sum, term);
        if (m == N) {
            res = ival_hi_d(sum);
            *lower = ival_lo_d(sum);
            break;
        }
        ival_set_d(r, N - m);
        ival_set_d(x, m + 1.0);
        ival_div(r, r, x);
        ival_mul(r, r, qr);
        if (mpfr_cmp_ui(r->hi, 1) < 0) {
            /* rest <= term r / (1 - r): stop once that is below 2^-60 of the sum */
            ival_mul(x, term, r);
            ival_sub(y, one, r);
            ival_div(x, x, y);
            mpfr_t t;
            mpfr_init2(t, prec);
            mpfr_mul_2si(t, sum->lo, -60, MPFR_RNDD);
            int small = mpfr_cmp(x->hi, t) <= 0;
            mpfr_clear(t);
            if (small) {
                *lower = ival_lo_d(sum); /* the terms summed; the rest is positive */
                ival_add(sum, sum, x);
                res = ival_hi_d(sum);
                break;
            }
        }
        ival_mul(term, term, r);
    }
    for (int i = 0; i < 8; i++)
        ival_clear(&v[i]);
    res = res < ch ? res : ch;
    *lower = *lower < res ? *lower : res;
    return res;
}

/* An upper bound on P(Bin(N, q) >= k) (binom_tail without its lower one). */
static double binom_tail_up(mpfr_prec_t prec, double N, double k, double q)
{
    double lo;
    return binom_tail(prec, N, k, q, &lo);
}

double dpzo__tsg_cut_prob(dpzo_ctx *ctx, const dpzo_event *e, double *lower)
{
    *lower = 0.0;
    if (e->param2 == 0.0 || e->batch == 0 || e->n == 0)
        return 0.0;
    mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    return binom_tail(prec, (double)e->n, (double)e->batch, e->param2, lower);
}

double dpzo__tsg_qmax_up(const dpzo_event *e)
{
    double q = e->param2, B = (double)e->batch;
    double qmax = dpzo__up(dpzo__up(q * B) / nextafter(B + 1.0, 0.0));
    return qmax > q || !(qmax > 0.0) ? q : qmax; /* q >= q_m too (and never 0) */
}

static dpzo_status tsg_rdp(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                           dpzo_bound *out)
{
    double q = e->param2, sigma = e->param;
    if (q == 0.0 || e->batch == 0 || e->n == 0) {
        *out = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (sigma == 0.0) {
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    dpzo_status st;
    dpzo_bound r1, r2;
    if (certified)
        st = dpzo_rdp_sampled_gaussian_certified(ctx, q, sigma, alpha, &r1);
    else {
        st = dpzo_rdp_sampled_gaussian(ctx, q, sigma, alpha, &r1.value);
        r1.lower = r1.upper = r1.value;
    }
    if (st)
        return st;
    double N = (double)e->n, B = (double)e->batch; /* both <= 2^53: exact */
    mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    double t_hi = binom_tail_up(prec, N, B, q);
    if (t_hi == 0.0) { /* at most B others: never truncated */
        *out = r1;
        return DPZO_OK;
    }
    double qmax = dpzo__tsg_qmax_up(e);
    double s_hi = binom_tail_up(prec, N + 1.0, B + 1.0, q);
    s_hi = dpzo__up(dpzo__up(B / nextafter(N + 1.0, 0.0)) * s_hi);
    double s2 = dpzo__up(qmax * t_hi);
    s_hi = s2 < s_hi ? s2 : s_hi;
    double r = s_hi / qmax; /* the chord's weight, rounded up below */
    r = dpzo__up(r);
    if (certified)
        st = dpzo_rdp_sampled_gaussian_certified(ctx, qmax, 0.5 * sigma, alpha, &r2);
    else {
        st = dpzo_rdp_sampled_gaussian(ctx, qmax, 0.5 * sigma, alpha, &r2.value);
        r2.lower = r2.upper = r2.value;
    }
    if (st)
        return st;
    double am1 = alpha - 1.0;
    if (!certified) {
        double x1 = am1 * r1.value, x2 = am1 * r2.value;
        /* log(A1 + r (A2 - 1)) and log(A1 + t max(0, A2 - A1)) */
        double b1 = x2 > 0.0 ? dpzo__log_add(x1, log(r) + x2 + log(-expm1(-x2))) : x1;
        double b2 = x2 > x1 ? dpzo__log_add(x1, log(t_hi) + x2 + log(-expm1(x1 - x2))) : x1;
        double v = (b1 < b2 ? b1 : b2) / am1;
        if (isnan(v))
            return dpzo__fail(ctx, DPZO_ENOCONV,
                              "RDP of the truncated sampled Gaussian at alpha=%g is not finite",
                              alpha);
        *out = (dpzo_bound){v, v, v};
        return DPZO_OK;
    }
    if (isinf(r1.upper) || isinf(r2.upper)) {
        *out = (dpzo_bound){INFINITY, r1.lower, INFINITY};
        return DPZO_OK;
    }
    /* the bound is increasing in both RDPs: evaluate it over their enclosures */
    ival v[8];
    for (int i = 0; i < 8; i++)
        ival_init(&v[i], prec);
    ival *A1 = &v[0], *A2 = &v[1], *x = &v[2], *b1 = &v[3], *b2 = &v[4], *one = &v[5],
         *a = &v[6], *z = &v[7];
    ival_set_ui(one, 1);
    ival_set_d(a, am1);
    mpfr_set_d(x->lo, r1.lower, MPFR_RNDD);
    mpfr_set_d(x->hi, r1.upper, MPFR_RNDU);
    ival_mul(A1, x, a);
    ival_exp(A1, A1);
    mpfr_set_d(x->lo, r2.lower, MPFR_RNDD);
    mpfr_set_d(x->hi, r2.upper, MPFR_RNDU);
    ival_mul(A2, x, a);
    ival_exp(A2, A2);
    ival_sub(b1, A2, one);
    ival_set_d(x, r);
    ival_mul(b1, b1, x);
    ival_add(b1, b1, A1);
    ival_sub(b2, A2, A1);
    ival_set_ui(z, 0);
    ival_max(b2, b2, z);
    ival_set_d(x, t_hi);
    ival_mul(b2, b2, x);
    ival_add(b2, b2, A1);
    ival_min(b1, b1, b2);
    ival_log(b1, b1);
    ival_div(b1, b1, a);
    double lo = ival_lo_d(b1), hi = ival_hi_d(b1);
    for (int i = 0; i < 8; i++)
        ival_clear(&v[i]);
    lo = lo < 0.0 ? 0.0 : lo;
    hi = hi < lo ? lo : hi;
    *out = (dpzo_bound){0.5 * (lo + hi), lo, hi};
    return DPZO_OK;
}

dpzo_status dpzo__rdp_mog_leaf(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                               dpzo_bound *out)
{
    if (e->kind == DPZO_EVENT_MIXTURE_OF_GAUSSIANS)
        return mog_rdp(ctx, e, alpha, certified, out);
    return tsg_rdp(ctx, e, alpha, certified, out);
}
