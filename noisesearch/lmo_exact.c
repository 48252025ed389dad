/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_exact.c: the exact Renyi divergence of the LMO mixture, enclosed.
 *
 * Problem (spec 2.2). X ~ f_X = p, p(x) = M_Y'(-|x|)/2; P = law of X, Q = law of X + C
 * (C > 0), q(x) = p(x - C). For alpha > 1
 *     D_alpha = 1/(alpha-1) log I(alpha),   I(alpha) = Int p^alpha q^(1-alpha) dx
 *             = Int g,   g = p r^(alpha-1),   r = p/q.
 * Output, for many orders at once from ONE grid of density values: lower <= D_alpha <=
 * upper, proven (under the rounding model below), and an estimate: the spec's GSL
 * quadrature in dpzo__lmo_exact_rdp (clamped into [lower, upper]), the midpoint of
 * [lower, upper] in dpzo__lmo_exact_rdp_ex without DPZO_LMO_EXACT_QUAD_VALUE.
 *
 * Facts used (mu(dy) = y P_Y(dy), K(t) = log Int e^{ty} mu(dy) = log M_Y'(t), t <= 0):
 *  (F1) log p(x) = K(-|x|) - log 2. K is convex (Hoelder): K'(t) = E_t[Y] > 0 is the
 *       mean of the tilted law e^{ty} mu / M_Y'(t) and K'' = Var_t[Y] >= 0. Write
 *       d(s) = K'(-s) = M_Y''(-s)/M_Y'(-s): d > 0, and d is nonincreasing in s >= 0.
 *  (F2) On each piece (-inf,0], [0,C], [C,inf) both x -> -|x| and x -> -|x - C| are
 *       affine, so log p and log q = log p(. - C) are CONVEX on each piece, with
 *       (log p)' = d(|x|) for x < 0, -d(x) for x > 0, and (log q)' = d(|x-C|) for
 *       x < C, -d(x-C) for x > C (one-sided at the kinks 0 and C).
 *  (F3) log r = log p - log q. On (-inf,0]: (log r)' = K'(x) - K'(x-C) >= 0, and
 *       r = Int e^{xy} mu / Int e^{(x-C)y} mu >= 1. On [C,inf): (log r)' =
 *       K'(C-x) - K'(-x) >= 0 and r <= 1 (e^{-xy} <= e^{-(x-C)y}). On [0,C]:
 *       (log r)' = -K'(-x) - K'(x-C) < 0, and p is nonincreasing there. Hence g is
 *       nondecreasing on (-inf,0] and nonincreasing on [0,C], and on [C,inf)
 *       g <= p <= p(0) <= g(0): the maximum of g is g(0) (the quadrature's shift).
 *  (F4) Symmetry: q(x) = p(C - x) (p is even), and x -> C - x maps Int p^a q^(1-a)
 *       onto Int q^a p^(1-a), so D_alpha(P||Q) = D_alpha(Q||P) exactly; one
 *       direction is computed.
 *
 * Cells. The grid x_0 < ... < x_N contains 0 and C, so every cell [a,b] (width H)
 * lies in one piece. With phi = log g = alpha log p - (alpha-1) log q and (F2):
 *   log p <= its chord,  log p >= max(tangent at a, tangent at b),  same for log q, so
 *   phi <= alpha chord_p - (alpha-1) max(tangents_q)     (upper envelope)
 *   phi >= alpha max(tangents_p) - (alpha-1) chord_q     (lower envelope).
 * On [a, m] (m the midpoint) the upper envelope is <= the line through a that uses
 * the tangent of log q at a, on [m, b] <= the line through b that uses the tangent at
 * b; the lower envelope is >= the analogous lines built from the tangents of log p.
 * Each half-cell bound is the integral of exp(line), e^A (H/2) E(z) with
 * E(z) = expm1(z)/z, in closed form. Endpoint values and slopes enter as enclosures
 * (the upper ends where an upper bound needs them, the lower ends elsewhere), so the
 * envelopes hold for the true p and q. The gap is second order: about
 * (alpha k_p + (alpha-1) k_q) H^2/8 relative per cell (k = curvature of log p, log q),
 * i.e. about (k_p + k_q) H^2/8 in D, whatever alpha.
 *
 * Tails, by (F3), beyond a left point L <= 0 and a right point R >= C:
 *   Int_{-inf}^L g in [F_X(L), r(L)^(alpha-1) F_X(L)],  F_X(L) = M_Y(L)/2,
 *   Int_R^inf g   in [r(R)^(alpha-1) S_X(R), S_X(R)],   S_X(R) = M_Y(-R)/2,
 * and Int_x^C g <= g(x) (C - x) for 0 <= x <= C. Each order uses the cells between
 * the innermost grid points where these bounds' gaps are below about
 * tol (alpha-1) I / 100 (bisection: the gaps are monotone in the cut point), so large
 * orders touch only the cells near 0. Tails can be polynomial (wU a = 0:
 * M_Y(-s) ~ s^-nu); the grid grows outwards until the tail GAP (not the tail mass) is
 * negligible, up to |x| = 1e150. Inside the range, terms below e^T (T chosen so that
 * all of them together stay below 1e-3 tol (alpha-1) I) count e^T in the upper sum and
 * 0 in the lower one.
 *
 * Grid. Start: cells of width min(C, 1/E[Y])/8 on [0, C], doubling outwards to where
 * a double-precision estimate of the tail gaps is small. Refinement: for up to 6
 * probe orders (the smallest, the largest, log-spaced ones between) each cell's share
 * of the gap of D is computed; cells are bisected (geometrically in far tails),
 * largest share first, until every probe's predicted gap is below 0.65 tol, skipping
 * shares below tol/(4 N) (equidistribution); the ends move out while a tail gap
 * exceeds tol/20. When every probe is below 0.85 tol, every order is evaluated; an
 * order above tol joins the probes (at most 12) and refinement resumes. At most
 * DPZO_LMO_EXACT_MAX_POINTS points: past the cap the bounds are returned as computed
 * (still proven; info->capped and the achieved gap say so). The same when the worst probe
 * gap has not halved in three rounds (it shrinks about 4x a round when double resolves
 * the density; it stays infinite for noise scales of 1e-17 against C = 1): extreme
 * parameters cost milliseconds instead of seconds at the cap.
 *
 * Density values. For s = |x| (or an interval of s when x - C is not a double):
 *   log M_Y(-s) = -k log1p(c s) - log1p(e s) - wU a s + log((1 - e^{-z})/z),
 *   L1 = k c/(1 + c s) + e/(1 + e s) + wU (a + w hm(z)),  hm(z) = 1/z - 1/expm1(z),
 *   L2 = k c^2/(1 + c s)^2 + e^2/(1 + e s)^2 + (wU w)^2 hp(z),  hp(z) = 1/z^2 - e^z/expm1(z)^2,
 *   log p = log M_Y(-s) + log L1 - log 2,   d(s) = L1 + L2/L1,
 * with c = wG theta, e = wE/lam, w = b - a, z = wU w s. The uniform parts are monotone
 * in z (so an interval of z maps to the values at its ends): log((1-e^{-z})/z) =
 * log Int_0^1 e^{-zv} dv and hm (the tilted Uniform(0,1)'s mean) decrease, and so does
 * hp (its variance): hp' is minus its third cumulant, (1/4)(cosh y/sinh^3 y - 1/y^3)
 * with y = z/2, negative by Lazarevic's inequality (sinh y/y)^3 > cosh y. Near z = 0
 * they use their alternating Bernoulli series with the next term as error bound.
 *
 * Rounding model (what "proven" rests on). The point values are computed in double
 * interval arithmetic: +,-,*,/ are IEEE round-to-nearest, and each result is widened
 * by at least one ulp outwards, which encloses the exact result; exp, expm1, log,
 * log1p are ASSUMED accurate to 2^-48 relative (>= 16 ulp; glibc documents at most
 * 1-2 ulp for these on x86-64 and aarch64) and are widened by that. The per-order
 * log-sum-exp runs in plain double; its error is bounded a priori (Higham's bounds for
 * sums of positive terms and short expressions, same libm assumption, E(z) by its
 * Taylor polynomial for |z| <= 1/50 with remainder < 2^-54) and added as slack:
 *   eps = 16u (alpha Mg + |S| + max|log H/2| + |tail exponents|)
 *         + 2^-48 (7 + max|log H/2| + |log sum|) + 1.01 n u,   u = 2^-53,
 * Mg = max over the cells used of |log p| + |log q| + |log M_Y| + |chord rises| +
 * |slopes * H| + 1, n = number of terms. Double was chosen over MPFR for speed:
 * dpzo__lmo_log_pdf_ival costs about 70 us a point, and a 1e-7 enclosure needs 2,000
 * to 60,000 points. test_lmo_exact checks the point enclosures against the MPFR ones
 * (lmo_mgf.c) and against 40-digit mpmath values, and the results against 40-digit
 * mpmath values of D_alpha.
 *
 * Cost (one core, orders 2..256, tol 1e-7): about 2,000-12,000 points and 15-50 ms
 * CPU for the spec's profiles; a pathological heavy tail (Gamma(1/2) alone, S_X(x) ~
 * x^-1/2) 55,000 points, 120 ms. The quadrature estimate adds about 0.1 ms an order.
 *
 * The quadrature (dpzo__lmo_exact_quad): S = log g(0) (the maximum, F3), then
 * Int exp(log g - S) by GSL qagil / qags / qagiu on (-inf,0], [0,C], [C,inf) in
 * double, S added back in log space (S is at most alpha eps0 + O(1), so double holds
 * it). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include "lmo_exact.h"

#define U_RND 0x1p-53    /* unit roundoff of double */
#define LIBM_REL 0x1p-48 /* assumed relative accuracy of exp, expm1, log, log1p */
#define X_MAX 1e150      /* farthest grid end */
#define MAX_ROUNDS 60
#define MAX_PROBES 12    /* orders that steer the refinement */
#define STOP_FRAC 0.85   /* refinement stops when every probe's gap is below this * tol */
#define TARGET_FRAC 0.65  /* and aims each round at this * tol */

/* ---- double interval arithmetic ------------------------------------------------- */

typedef struct {
    double lo, hi;
} dint;

/* One ulp (or more) down / up: x -+ |x| 2^-52 moves past the neighbouring double for
 * every normal x, and 2^-1074 covers zero and subnormals (inf and NaN propagate). */
static inline double rdn(double x)
{
    return isinf(x) ? x : (x - fabs(x) * 0x1p-52) - 0x1p-1074;
}
static inline double rup(double x)
{
    return isinf(x) ? x : (x + fabs(x) * 0x1p-52) + 0x1p-1074;
}
/* a libm result widened by its assumed error (and an absolute floor for subnormals) */
static inline double ldn(double y) { return y - fabs(y) * LIBM_REL - 0x1p-1060; }
static inline double lup(double y) { return y + fabs(y) * LIBM_REL + 0x1p-1060; }

static inline dint dpt(double x) { return (dint){x, x}; }
static inline dint dadd(dint a, dint b) { return (dint){rdn(a.lo + b.lo), rup(a.hi + b.hi)}; }
static inline dint dsub(dint a, dint b) { return (dint){rdn(a.lo - b.hi), rup(a.hi - b.lo)}; }

static dint dmul(dint a, dint b)
{
    double p1 = a.lo * b.lo, p2 = a.lo * b.hi, p3 = a.hi * b.lo, p4 = a.hi * b.hi;
    return (dint){rdn(fmin(fmin(p1, p2), fmin(p3, p4))), rup(fmax(fmax(p1, p2), fmax(p3, p4)))};
}

/* b must not contain 0 */
static dint ddiv(dint a, dint b)
{
    double p1 = a.lo / b.lo, p2 = a.lo / b.hi, p3 = a.hi / b.lo, p4 = a.hi / b.hi;
    return (dint){rdn(fmin(fmin(p1, p2), fmin(p3, p4))), rup(fmax(fmax(p1, p2), fmax(p3, p4)))};
}

static inline dint dlog(dint a) { return (dint){ldn(log(a.lo)), lup(log(a.hi))}; }
static inline dint dlog1p(dint a) { return (dint){ldn(log1p(a.lo)), lup(log1p(a.hi))}; }
static inline dint dnonneg(dint a) { return (dint){a.lo < 0.0 ? 0.0 : a.lo, a.hi}; }

/* ---- the uniform component's functions, with error bounds ------------------------- */

/* log((1 - e^{-z})/z) for z >= 0 (decreasing in z); *err bounds |returned - exact|. */
static double lmu_pt(double z, double *err)
{
    if (z == 0.0) {
        *err = 0.0;
        return 0.0;
    }
    if (z < 1e-3) {
        /* -z/2 + z^2/24 - z^4/2880 + z^6/90720 - ... (alternating, decreasing) */
        double z2 = z * z;
        *err = 2e-5 * z2 * z2 * z2 + 4.0 * U_RND * (z / 2 + z2 / 24);
        return -z / 2 + z2 / 24 - z2 * z2 / 2880;
    }
    double t1 = log(-expm1(-z)), t2 = log(z);
    *err = LIBM_REL * (2.5 + fabs(t1) + fabs(t2)) + 2.0 * U_RND * fabs(t1 - t2);
    return t1 - t2;
}

/* h(-z) = 1/z - 1/expm1(z), the mean of the tilted Uniform(0,1) (decreasing in z). */
static double hm_pt(double z, double *err)
{
    if (z < 1e-2) {
        /* 1/2 - z/12 + z^3/720 - z^5/30240 + ... */
        double z2 = z * z;
        *err = z2 * z2 * z / 30240 + 4.0 * U_RND * (0.5 + z / 12 + z2 * z / 720) + 0x1p-1060;
        return 0.5 - z / 12 + z2 * z / 720;
    }
    double a = 1.0 / z, b = 1.0 / expm1(z);
    *err = (a + b) * (LIBM_REL + 4.0 * U_RND) + 0x1p-1060;
    return a - b;
}

/* h'(z) = 1/z^2 - e^{-z}/expm1(-z)^2, the variance of the tilted Uniform(0,1)
 * (decreasing in z >= 0, see eval_s). */
static double hp_pt(double z, double *err)
{
    if (z < 0.1) {
        /* 1/12 - z^2/240 + z^4/6048 - z^6/172800 + ... */
        double z2 = z * z;
        *err = z2 * z2 * z2 / 172800 + 4.0 * U_RND * (1.0 / 12 + z2 / 240) + 0x1p-1060;
        return 1.0 / 12 - z2 / 240 + z2 * z2 / 6048;
    }
    double iz = 1.0 / z, a = iz * iz, em = expm1(-z), b = exp(-z) / (em * em);
    /* 2^-1000 covers 1/z^2 underflowing */
    *err = (a + b) * (4.0 * LIBM_REL + 8.0 * U_RND) + 0x1p-1000;
    return a - b;
}

/* ---- the MGF of Y and the density, enclosed ------------------------------------- */

typedef struct {
    int g, e, u;
    double k;
    dint c, kc, kc2;      /* wG theta, k c, k c^2 */
    dint ee, ee2;         /* wE / lam, its square */
    dint wua, wuw, wuw2;  /* wU a, wU (b - a), its square */
    dint ln2;
} mgfc;

static void mgfc_init(const dpzo_lmo *l, mgfc *m)
{
    memset(m, 0, sizeof *m);
    m->g = l->gamma_weight > 0.0;
    m->e = l->exp_weight > 0.0;
    m->u = l->uniform_weight > 0.0;
    if (m->g) {
        m->k = l->gamma_shape;
        m->c = dmul(dpt(l->gamma_weight), dpt(l->gamma_scale));
        m->kc = dmul(dpt(l->gamma_shape), m->c);
        m->kc2 = dmul(m->kc, m->c);
    }
    if (m->e) {
        m->ee = ddiv(dpt(l->exp_weight), dpt(l->exp_rate));
        m->ee2 = dmul(m->ee, m->ee);
    }
    if (m->u) {
        dint w = dsub(dpt(l->uniform_high), dpt(l->uniform_low));
        m->wua = dnonneg(dmul(dpt(l->uniform_weight), dpt(l->uniform_low)));
        m->wuw = dmul(dpt(l->uniform_weight), w);
        m->wuw2 = dmul(m->wuw, m->wuw);
    }
    m->ln2 = (dint){rdn(M_LN2), rup(M_LN2)};
}

/* log M_Y(-s), log p at |x| = s, and d(s), for s in the interval s (s.lo >= 0). */
static void eval_s(const mgfc *m, dint s, dint *lmgf, dint *lpdf, dint *dd)
{
    dint lm = dpt(0.0), L1 = dpt(0.0), L2 = dpt(0.0);
    if (m->g) {
        dint a = dnonneg(dmul(m->c, s));
        dint l = dlog1p(a);
        lm = dsub(lm, (dint){rdn(m->k * l.lo), rup(m->k * l.hi)});
        dint den = dadd(dpt(1.0), a);
        L1 = dadd(L1, ddiv(m->kc, den));
        L2 = dadd(L2, ddiv(m->kc2, dmul(den, den)));
    }
    if (m->e) {
        dint a = dnonneg(dmul(m->ee, s));
        lm = dsub(lm, dlog1p(a));
        dint den = dadd(dpt(1.0), a);
        L1 = dadd(L1, ddiv(m->ee, den));
        L2 = dadd(L2, ddiv(m->ee2, dmul(den, den)));
    }
    if (m->u) {
        dint z = dnonneg(dmul(m->wuw, s));
        double e1, e2;
        double v1 = lmu_pt(z.hi, &e1), v2 = lmu_pt(z.lo, &e2); /* decreasing */
        dint lmu = {rdn(v1 - e1), rup(v2 + e2)};
        lm = dadd(lm, dsub(lmu, dmul(m->wua, s)));
        v1 = hm_pt(z.hi, &e1);
        v2 = hm_pt(z.lo, &e2); /* decreasing */
        dint hm = {rdn(v1 - e1), rup(v2 + e2)};
        L1 = dadd(L1, dadd(m->wua, dmul(m->wuw, hm)));
        /* h' is decreasing on z >= 0: its derivative is minus the third cumulant of
         * the tilted Uniform(0,1), (1/4)(1/y^3 - cosh y / sinh^3 y) with y = z/2, and
         * that is > 0 by Lazarevic's inequality (sinh y / y)^3 > cosh y (y != 0) */
        v1 = hp_pt(z.hi, &e1);
        v2 = hp_pt(z.lo, &e2);
        dint hp = {rdn(v1 - e1), rup(v2 + e2)};
        if (hp.lo < 0.0)
            hp.lo = 0.0;
        L2 = dadd(L2, dmul(m->wuw2, hp));
    }
    if (L1.lo <= 0.0)
        L1.lo = 0x1p-1074; /* the true value is > 0; only reached if it underflows */
    *lmgf = lm;
    *lpdf = dsub(dadd(lm, dlog(L1)), m->ln2);
    *dd = dadd(L1, ddiv(L2, L1));
}

void dpzo__lmo_exact_point(const dpzo_lmo *lmo, double s_lo, double s_hi, double log_mgf[2],
                           double log_pdf[2], double dlog_pdf[2])
{
    mgfc m;
    mgfc_init(lmo, &m);
    dint a, b, c;
    eval_s(&m, (dint){s_lo, s_hi}, &a, &b, &c);
    log_mgf[0] = a.lo;
    log_mgf[1] = a.hi;
    log_pdf[0] = b.lo;
    log_pdf[1] = b.hi;
    dlog_pdf[0] = c.lo;
    dlog_pdf[1] = c.hi;
}

/* b - a enclosed (exact when the subtraction is, by the TwoSum test). */
static dint diff_enc(double b, double a)
{
    double s = b - a, bb = s - b;
    double err = (b - (s - bb)) + (-a - bb);
    if (err == 0.0)
        return dpt(s);
    return (dint){rdn(s), rup(s)};
}

static dint abs_enc(dint v)
{
    if (v.lo >= 0.0)
        return v;
    if (v.hi <= 0.0)
        return (dint){-v.hi, -v.lo};
    return (dint){0.0, fmax(-v.lo, v.hi)};
}

/* ---- grid --------------------------------------------------------------------------- */

typedef struct {
    double x;
    dint P, Q;   /* log p(x), log q(x) */
    dint DP, DQ; /* d(|x|), d(|x - C|) */
    dint MP, MQ; /* log M_Y(-|x|), log M_Y(-|x - C|) */
    double wP, wQ; /* P.hi - P.lo and Q.hi - Q.lo, rounded up */
} gpoint;

/* Order-independent data of a cell [a, b] for its four half-cell terms (upper/lower,
 * left/right): exponent A = alpha P - (alpha-1) Q at the end point, argument
 * z = (alpha X - (alpha-1) Y)/2 of E(z), with
 *   upper left:  P1 = P(a).hi, Q1 = Q(a).lo, X =  dP, Y =  K1
 *   upper right: P2 = P(b).hi, Q2 = Q(b).lo, X = -dP, Y = -K2
 *   lower left:  P3 = P(a).lo, Q3 = Q(a).hi, X =  K3, Y =  dQ
 *   lower right: P4 = P(b).lo, Q4 = Q(b).hi, X = -K4, Y = -dQ
 * dP, dQ the rises of the upper ends of log p, log q across the cell (their chords);
 * K1 <= (log q)'(a+) H, K2 >= (log q)'(b-) H, K3 <= (log p)'(a+) H, K4 >= (log p)'(b-) H
 * (tangent slopes times the width). The sums read A from the points (shared by
 * neighbouring cells); P1..Q4 here serve the shift and the cut estimates. */
typedef struct {
    double P1, Q1, P2, Q2, P3, Q3, P4, Q4;
    double dP, dQ, K1, K2, K3, K4;
    double hh, hl;   /* H/2 rounded up / down */
    double lhh, lhl; /* log(H/2) rounded up / down */
    double mag, lmag; /* magnitudes for the rounding slack: |P|+|Q|+|MP|+|rises|+|K|, |log H/2| */
} cellc;

typedef struct {
    const dpzo_lmo *lmo;
    mgfc m;
    double C;
    gpoint *pt;
    size_t np, cap;
    cellc *cell;    /* np - 1 */
    size_t i0, iC;  /* indices of the points 0 and C */
} grid;

static void eval_point(grid *g, gpoint *p)
{
    dint s = dpt(fabs(p->x));
    eval_s(&g->m, s, &p->MP, &p->P, &p->DP);
    dint sq = abs_enc(diff_enc(p->x, g->C));
    eval_s(&g->m, sq, &p->MQ, &p->Q, &p->DQ);
    p->wP = rup(p->P.hi - p->P.lo);
    p->wQ = rup(p->Q.hi - p->Q.lo);
}

static double lower_times(double v, dint H) { return v >= 0 ? rdn(v * H.lo) : rdn(v * H.hi); }
static double upper_times(double v, dint H) { return v >= 0 ? rup(v * H.hi) : rup(v * H.lo); }
static double amax(dint a) { return fmax(fabs(a.lo), fabs(a.hi)); }

static void build_cells(grid *g)
{
    for (size_t i = 0; i < g->np; i++) {
        if (g->pt[i].x == 0.0)
            g->i0 = i;
        if (g->pt[i].x == g->C)
            g->iC = i;
    }
    for (size_t i = 0; i + 1 < g->np; i++) {
        const gpoint *a = &g->pt[i], *b = &g->pt[i + 1];
        cellc *c = &g->cell[i];
        /* piece: signs of (log p)' = sp d(|x|) and (log q)' = sq d(|x - C|) */
        int sp = b->x <= 0.0 ? 1 : -1;
        int sq = a->x >= g->C ? -1 : 1;
        dint H = diff_enc(b->x, a->x);
        c->P1 = a->P.hi;
        c->Q1 = a->Q.lo;
        c->P2 = b->P.hi;
        c->Q2 = b->Q.lo;
        c->P3 = a->P.lo;
        c->Q3 = a->Q.hi;
        c->P4 = b->P.lo;
        c->Q4 = b->Q.hi;
        c->dP = b->P.hi - a->P.hi;
        c->dQ = b->Q.hi - a->Q.hi;
        c->K1 = lower_times(sq > 0 ? a->DQ.lo : -a->DQ.hi, H);
        c->K2 = upper_times(sq > 0 ? b->DQ.hi : -b->DQ.lo, H);
        c->K3 = lower_times(sp > 0 ? a->DP.lo : -a->DP.hi, H);
        c->K4 = upper_times(sp > 0 ? b->DP.hi : -b->DP.lo, H);
        c->hh = rup(H.hi * 0.5);
        c->hl = rdn(H.lo * 0.5);
        c->lhh = lup(log(c->hh));
        c->lhl = ldn(log(c->hl));
        c->mag = fmax(amax(a->P) + amax(a->Q) + amax(a->MP),
                      amax(b->P) + amax(b->Q) + amax(b->MP)) +
                 fabs(c->dP) + fabs(c->dQ) + fabs(c->K1) + fabs(c->K2) + fabs(c->K3) +
                 fabs(c->K4) + 1.0;
        c->lmag = fmax(fabs(c->lhh), fabs(c->lhl));
    }
}

/* E(z) = expm1(z)/z for |z| <= 1/50 by its Taylor polynomial: the remainder is below
 * |z|^7/40000 < 2^-54 and Horner's rounding below 8u, relative. */
static inline double e_poly(double z)
{
    return 1.0 +
           z * (1.0 / 2 +
                z * (1.0 / 6 + z * (1.0 / 24 + z * (1.0 / 120 + z * (1.0 / 720 + z / 5040)))));
}

static inline double pos(double z) { return z > 0.0 ? z : 0.0; }

/* E(-y) = (1 - e^{-y})/y for y >= 0, in (0, 1]. */
static inline double em(double y) { return y > 0.0 ? -expm1(-y) / y : 1.0; }

typedef struct {
    double logU, logL;          /* the enclosure of log I (slack included) */
    double tailL_gap, tailR_gap; /* (upper - lower)/(lower sum) of the grid's end tails,
                                    0 when the order's range stops inside the grid */
    size_t lo, hi;              /* the cells used: [lo, hi) */
} order_res;

/* log upper bound of Int_{-inf}^{x_i} g (x_i <= 0) and of Int_{x_j}^{inf} g (x_j >= C):
 * r(x_i)^(alpha-1) F(x_i) and S(x_j) (F3). */
static double left_tail_up(const grid *g, size_t i, double a1)
{
    const gpoint *p = &g->pt[i];
    return rup(rup(a1 * rup(p->P.hi - p->Q.lo)) + rup(p->MP.hi - g->m.ln2.lo));
}
static double right_tail_up(const grid *g, size_t j) { return rup(g->pt[j].MP.hi - g->m.ln2.lo); }

/* Approximate logs of the tails' gaps (upper - lower bound) at a cut point: only
 * choose the cuts, the bounds themselves are computed with directed rounding. */
static double left_gap_log(const grid *g, size_t i, double a1)
{
    const gpoint *p = &g->pt[i];
    double v = a1 * (p->P.hi - p->Q.lo) + (p->wP + p->wQ);
    double lg = v > 30.0 ? v : (v > 0.0 ? log(expm1(v)) : -INFINITY);
    return p->MP.hi - M_LN2 + lg;
}
static double right_gap_log(const grid *g, size_t j, double a1)
{
    const gpoint *p = &g->pt[j];
    double v = a1 * (p->P.lo - p->Q.hi);
    double lg = v < -30.0 ? 0.0 : (v < 0.0 ? log(-expm1(v)) : -INFINITY);
    return p->MP.hi - M_LN2 + lg;
}

/* log of an upper bound on Int_{x_k}^{C} g (0 <= x_k <= C): g(x_k) (C - x_k), g being
 * nonincreasing on [0, C] (F3). */
static double mid_up(const grid *g, size_t k, double alpha, double a1)
{
    const gpoint *p = &g->pt[k];
    dint w = diff_enc(g->C, p->x);
    if (w.hi <= 0.0)
        return -INFINITY;
    double lw = lup(log(w.hi));
    return rup(rup(rup(alpha * p->P.hi) - rdn(a1 * p->Q.lo)) + lw);
}

/* The enclosure of log I(alpha). Cells whose joint contribution is provably below
 * tol (alpha-1) I / 100 are replaced by the tail bounds of (F3) at the cut points.
 * cellgap (optional, np - 1 entries) receives each cell's (upper - lower)/(lower sum),
 * 0 outside the range used. */
static void order_sums(const grid *g, double alpha, double tol, double *cellgap, order_res *res)
{
    const double a1 = alpha - 1.0; /* exact for 1 < alpha < 2^53 */
    const size_t np = g->np, i0 = g->i0, iC = g->iC;
    /* a rough lower estimate of log I from the two cells at 0 (only sets the cuts) */
    double lI;
    {
        double S0 = alpha * g->pt[i0].P.hi - a1 * g->pt[i0].Q.lo, s = 0.0;
        for (size_t i = i0 - 1; i <= i0; i++) {
            const cellc *c = &g->cell[i];
            double z = 0.5 * (alpha * c->K3 - a1 * c->dQ);
            s += exp(alpha * c->P3 - a1 * c->Q3 + pos(z) + c->lhl - S0) * em(fabs(z));
            z = 0.5 * (a1 * c->dQ - alpha * c->K4);
            s += exp(alpha * c->P4 - a1 * c->Q4 + pos(z) + c->lhl - S0) * em(fabs(z));
        }
        lI = fmax(0.0, S0 + log(s)); /* I >= 1 as D >= 0 */
    }
    const double thr = lI + log(0.01 * tol * a1);
    /* left cut: the largest iL <= i0 where the left tail's gap is small (bisection; the
     * gap F (r^(alpha-1) - 1) is nondecreasing in x) */
    size_t iL = 0;
    if (left_gap_log(g, 0, a1) <= thr) {
        size_t lo = 0, hi = i0; /* cond(lo) holds */
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (left_gap_log(g, mid, a1) <= thr)
                lo = mid;
            else
                hi = mid - 1;
        }
        iL = lo;
        if (iL == i0)
            iL = i0 - 1; /* keep the cell at 0 */
    }
    /* right cut: the smallest jR >= iC where the right tail's gap S (1 - r^(alpha-1)) is
     * small (nonincreasing in x) */
    size_t jR = np - 1;
    if (right_gap_log(g, np - 1, a1) <= thr) {
        size_t lo = iC, hi = np - 1; /* cond(hi) holds */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (right_gap_log(g, mid, a1) <= thr)
                hi = mid;
            else
                lo = mid + 1;
        }
        jR = lo;
    }
    /* middle cut: when even [C, inf) is negligible, also drop [x_k, C] */
    size_t kM = 0;
    double midU = -INFINITY;
    if (jR == iC && right_tail_up(g, iC) <= thr - 1.0) {
        size_t lo = i0 + 1, hi = iC; /* find the smallest k with mid_up <= thr - 1 */
        if (mid_up(g, lo, alpha, a1) <= thr - 1.0) {
            hi = lo;
        } else {
            while (lo + 1 < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (mid_up(g, mid, alpha, a1) <= thr - 1.0)
                    hi = mid;
                else
                    lo = mid;
            }
        }
        if (hi < iC) {
            kM = hi;
            midU = mid_up(g, kM, alpha, a1);
        }
    }
    const size_t cend = kM ? kM : jR; /* cells [iL, cend) */
    /* tails (log, before the shift) */
    double tLu = left_tail_up(g, iL, a1);
    double tLl = rdn(g->pt[iL].MP.lo - g->m.ln2.hi);
    double tRu, tRl;
    if (kM) {
        double a = right_tail_up(g, iC), b = midU;
        double hi = fmax(a, b), lo = fmin(a, b);
        tRu = rup(hi + lup(log1p(lup(exp(rup(lo - hi)))))); /* log(e^a + e^b) */
        tRl = -INFINITY;
    } else {
        const gpoint *pn = &g->pt[jR];
        tRu = right_tail_up(g, jR);
        tRl = rdn(rdn(a1 * rdn(pn->P.lo - pn->Q.hi)) + rdn(pn->MP.lo - g->m.ln2.hi));
    }
    /* pass 1: the shift S = the largest upper exponent, and the magnitudes (over the
     * cells used) that the rounding slack scales with */
    double S = fmax(tLu, tRu), Mg = 1.0, lhmax = 0.0;
    for (size_t i = iL; i < cend; i++) {
        const cellc *c = &g->cell[i];
        Mg = fmax(Mg, c->mag);
        lhmax = fmax(lhmax, c->lmag);
        double A1 = alpha * c->P1 - a1 * c->Q1, z1 = 0.5 * (alpha * c->dP - a1 * c->K1);
        double A2 = alpha * c->P2 - a1 * c->Q2, z2 = 0.5 * (a1 * c->K2 - alpha * c->dP);
        double e1 = A1 + pos(z1) + c->lhh, e2 = A2 + pos(z2) + c->lhh;
        if (e1 > S)
            S = e1;
        if (e2 > S)
            S = e2;
    }
    const size_t nc = cend - iL;
    /* terms below e^T (relative to e^S) are skipped: together at most 1e-3 tol (alpha-1) I
     * (the upper sum counts e^T for each) */
    const double T = fmin(0.0, lI - S) + log(1e-3 * tol * a1 / ((double)nc + 1.0));
    const double eT = exp(T) * (1.0 + 1e-12);
    double U = 0.0, L = 0.0;
    if (cellgap)
        memset(cellgap, 0, (np - 1) * sizeof *cellgap);
    /* Each point's factor w = exp(A - S), A = alpha P.hi - (alpha-1) Q.lo, serves the two
     * upper half-cell terms next to it (computed when first needed); the lower terms
     * use A - delta, delta = alpha (P.hi - P.lo) + (alpha-1) (Q.hi - Q.lo) rounded up,
     * and e^{-delta} >= 1 - delta. E(z) comes from its Taylor polynomial for |z| <= 1/50. */
    double Aa = alpha * g->pt[iL].P.hi - a1 * g->pt[iL].Q.lo - S, wa = -1.0;
    double da = (alpha * g->pt[iL].wP + a1 * g->pt[iL].wQ) * (1.0 + 4.0 * U_RND);
    for (size_t i = iL; i < cend; i++) {
        const cellc *c = &g->cell[i];
        const gpoint *pb = &g->pt[i + 1];
        double Ab = alpha * pb->P.hi - a1 * pb->Q.lo - S, wb = -1.0;
        double db = (alpha * pb->wP + a1 * pb->wQ) * (1.0 + 4.0 * U_RND);
        int fa = Aa > -700.0 && c->lhh < 700.0, fb = Ab > -700.0 && c->lhh < 700.0;
        double u = 0.0, l = 0.0, z, e;
        /* upper, left half */
        z = 0.5 * (alpha * c->dP - a1 * c->K1);
        e = Aa + pos(z) + c->lhh;
        if (e < T) {
            u += eT;
        } else if (fa && fabs(z) <= 0.02) {
            if (wa < 0.0)
                wa = exp(Aa);
            u += wa * c->hh * e_poly(z);
        } else {
            u += exp(e) * em(fabs(z));
        }
        /* upper, right half */
        z = 0.5 * (a1 * c->K2 - alpha * c->dP);
        e = Ab + pos(z) + c->lhh;
        if (e < T) {
            u += eT;
        } else if (fb && fabs(z) <= 0.02) {
            wb = exp(Ab);
            u += wb * c->hh * e_poly(z);
        } else {
            u += exp(e) * em(fabs(z));
        }
        /* lower, left half */
        z = 0.5 * (alpha * c->K3 - a1 * c->dQ);
        e = Aa - da + pos(z) + c->lhl;
        if (e >= T) {
            if (fa && fabs(z) <= 0.02) {
                if (wa < 0.0)
                    wa = exp(Aa);
                l += wa * (1.0 - da) * c->hl * e_poly(z);
            } else {
                l += exp(e) * em(fabs(z));
            }
        }
        /* lower, right half */
        z = 0.5 * (a1 * c->dQ - alpha * c->K4);
        e = Ab - db + pos(z) + c->lhl;
        if (e >= T) {
            if (fb && fabs(z) <= 0.02) {
                if (wb < 0.0)
                    wb = exp(Ab);
                l += wb * (1.0 - db) * c->hl * e_poly(z);
            } else {
                l += exp(e) * em(fabs(z));
            }
        }
        U += u;
        L += l;
        if (cellgap)
            cellgap[i] = u - l;
        Aa = Ab;
        wa = wb;
        da = db;
    }
    double tlu = exp(tLu - S), tll = exp(tLl - S), tru = exp(tRu - S), trl = exp(tRl - S);
    U += tlu + tru;
    L += tll + trl;
    /* slack (see the top of the file) */
    double n = 4.0 * (double)nc + 4.0;
    double tmax = fmax(fabs(tLu), fabs(tRu));
    double eps = 16.0 * U_RND * (alpha * Mg + fabs(S) + lhmax + tmax) +
                 LIBM_REL * (6.0 + lhmax) + 1.01 * n * U_RND;
    U += n * 0x1p-1070; /* products that may have underflowed */
    double lu = log(U), ll = L > 0.0 ? log(L) : -INFINITY;
    double su = eps + LIBM_REL * (1.0 + fabs(lu)) + 4.0 * U_RND * (fabs(S) + fabs(lu));
    res->logU = rup(S + lu + su);
    if (L > 0.0) {
        double sl = eps + LIBM_REL * (1.0 + fabs(ll)) + 4.0 * U_RND * (fabs(S) + fabs(ll));
        res->logL = rdn(S + ll - sl);
    } else {
        res->logL = -INFINITY;
    }
    double Lpos = L > 0.0 ? L : DBL_MIN;
    if (cellgap)
        for (size_t i = iL; i < cend; i++)
            cellgap[i] /= Lpos;
    res->tailL_gap = iL == 0 ? (tlu - tll) / Lpos : 0.0;
    res->tailR_gap = (!kM && jR == np - 1) ? (tru - trl) / Lpos : 0.0;
    res->lo = iL;
    res->hi = cend;
}

static void to_bound(double alpha, const order_res *r, dpzo_bound *b)
{
    double a1 = alpha - 1.0;
    /* NaN or -inf sums mean double could not evaluate the density at all (wE/lam = 1e319
     * overflows, say): nothing is proven then, and the upper end must say so (+inf; a NaN
     * here was printed as an upper bound of -inf) */
    double up = isnan(r->logU) || r->logU == -INFINITY ? INFINITY : rup(r->logU / a1);
    double lo = isfinite(r->logL) && up < INFINITY ? rdn(r->logL / a1) : 0.0;
    if (lo < 0.0)
        lo = 0.0; /* D_alpha >= 0 */
    if (up < lo)
        up = lo; /* cannot happen unless both are at the rounding level of 0 */
    b->lower = lo;
    b->upper = up;
    b->value = 0.5 * (lo + up);
}

/* ---- double-precision helpers for the tails --------------------------------------- */

/* log of a double-precision estimate of the left / right tail gap divided by (alpha-1)
 * and by the lower sum exp(logI): decide how far the grid must reach. */
static double left_tail_gap_log(const dpzo_lmo *l, double C, double x, double alpha,
                                double logI)
{
    double a1 = alpha - 1.0;
    double lF = dpzo_lmo_log_mgf(l, x) - M_LN2;
    double lr = dpzo_lmo_log_pdf(l, x) - dpzo_lmo_log_pdf(l, x - C);
    if (!(lr > 0.0))
        lr = 0.0;
    double v = a1 * lr;
    double lg = v > 30.0 ? v : (v > 0.0 ? log(expm1(v)) : -INFINITY);
    if (v == 0.0)
        lg = log(a1) + log(fmax(lr, 1e-300)); /* ~ (alpha-1) lr */
    return lF + lg - log(a1) - logI;
}

static double right_tail_gap_log(const dpzo_lmo *l, double C, double x, double alpha,
                                 double logI)
{
    double a1 = alpha - 1.0;
    double lS = dpzo_lmo_log_mgf(l, -x) - M_LN2;
    double lr = dpzo_lmo_log_pdf(l, x) - dpzo_lmo_log_pdf(l, x - C); /* <= 0 */
    if (!(lr < 0.0))
        lr = -1e-300;
    double v = a1 * lr;
    double lg = v < -30.0 ? 0.0 : log(-expm1(v));
    return lS + lg - log(a1) - logI;
}

/* ---- grid management ---------------------------------------------------------------- */

static int grid_reserve(grid *g, size_t n)
{
    if (n <= g->cap)
        return 0;
    size_t cap = g->cap ? g->cap : 256;
    while (cap < n)
        cap *= 2;
    gpoint *p = realloc(g->pt, cap * sizeof *p);
    if (!p)
        return -1;
    g->pt = p;
    cellc *c = realloc(g->cell, cap * sizeof *c);
    if (!c)
        return -1;
    g->cell = c;
    g->cap = cap;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Insert the sorted, distinct new abscissae xs[0..k) (none already present): merges
 * and evaluates the new points. */
static int grid_insert(grid *g, const double *xs, size_t k)
{
    if (k == 0)
        return 0;
    if (grid_reserve(g, g->np + k))
        return -1;
    size_t i = g->np, j = k, o = g->np + k;
    while (j > 0) {
        if (i > 0 && g->pt[i - 1].x > xs[j - 1]) {
            g->pt[--o] = g->pt[--i];
        } else {
            gpoint *p = &g->pt[--o];
            p->x = xs[--j];
            eval_point(g, p);
        }
    }
    g->np += k;
    return 0;
}

/* A point strictly inside (a, b): geometric mean far from the kinks, else the middle;
 * NaN if none exists. */
static double split_point(double a, double b, double C)
{
    double m;
    if (a >= C && b - C > 8.0 * (a - C) && a - C > 0.0)
        m = C + sqrt(a - C) * sqrt(b - C);
    else if (b <= 0.0 && -a > 8.0 * (-b) && b < 0.0)
        m = -sqrt(-a) * sqrt(-b);
    else
        m = a + 0.5 * (b - a);
    if (!(m > a && m < b)) {
        m = a + 0.5 * (b - a);
        if (!(m > a && m < b))
            return NAN;
    }
    return m;
}

typedef struct {
    double gap;
    size_t i;
} cgap;

static int cmp_cgap_desc(const void *a, const void *b)
{
    double x = ((const cgap *)a)->gap, y = ((const cgap *)b)->gap;
    return (x < y) - (x > y);
}

/* ---- the driver --------------------------------------------------------------------- */

static dpzo_status check_args(dpzo_ctx *ctx, const dpzo_lmo *lmo, double C, const double *orders,
                              size_t n, dpzo_bound *out)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (st)
        return st;
    if (!(isfinite(C) && C > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g", C);
    if (n > 0 && (orders == NULL || out == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "no orders or no output array given");
    for (size_t i = 0; i < n; i++)
        if (!(orders[i] > 1.0) || !(orders[i] <= DPZO_MAX_ORDER))
            return dpzo__fail(ctx, DPZO_EINVAL, "RDP order must be in (1, %d], got %g",
                              DPZO_MAX_ORDER, orders[i]);
    return DPZO_OK;
}

/* Choose up to 6 probe orders from the sorted distinct orders. */
static size_t pick_probes(const double *sorted, size_t m, double *probes)
{
    if (m <= 6) {
        memcpy(probes, sorted, m * sizeof *probes);
        return m;
    }
    size_t k = 0;
    double lo = log(sorted[0] - 1.0), hi = log(sorted[m - 1] - 1.0);
    for (int j = 0; j < 6; j++) {
        double target = lo + (hi - lo) * j / 5.0;
        size_t best = 0;
        for (size_t i = 1; i < m; i++)
            if (fabs(log(sorted[i] - 1.0) - target) < fabs(log(sorted[best] - 1.0) - target))
                best = i;
        if (k == 0 || probes[k - 1] != sorted[best])
            probes[k++] = sorted[best];
    }
    return k;
}

dpzo_status dpzo__lmo_exact_rdp_ex(dpzo_ctx *ctx, const dpzo_lmo *lmo, double C,
                                   const double *orders, size_t n, double tol, unsigned flags,
                                   dpzo_bound *out, dpzo__lmo_exact_info *info)
{
    dpzo_status st = check_args(ctx, lmo, C, orders, n, out);
    if (st)
        return st;
    if (!(tol > 0.0) || !isfinite(tol))
        tol = DPZO_LMO_EXACT_DEFAULT_TOL;
    dpzo__lmo_exact_info inf0;
    memset(&inf0, 0, sizeof inf0);
    if (n == 0) {
        if (info)
            *info = inf0;
        return DPZO_OK;
    }

    grid g;
    memset(&g, 0, sizeof g);
    g.lmo = lmo;
    g.C = C;
    mgfc_init(lmo, &g.m);
    double *sorted = malloc(n * sizeof *sorted);
    double *probes = malloc(MAX_PROBES * sizeof *probes);
    double *xs = NULL, *cg = NULL, *cgmax = NULL;
    cgap *order = NULL;
    order_res *pres = malloc(MAX_PROBES * sizeof *pres);
    double *pgap = malloc(MAX_PROBES * sizeof *pgap);
    if (!sorted || !probes || !pres || !pgap)
        goto nomem;
    memcpy(sorted, orders, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || sorted[i] != sorted[m - 1])
            sorted[m++] = sorted[i];
    size_t npr = pick_probes(sorted, m, probes);

    /* initial grid */
    {
        double EY = dpzo_lmo_dlog_mgf(lmo, 0.0);
        double h0 = fmin(C, 1.0 / EY) / 8.0;
        /* clamped in double before the cast: C / h0 is huge or inf (or NaN) when E[Y]
         * overflows (wE/lam = 0.1/1e-300), and an out-of-range float-to-integer cast is
         * undefined (UBSan, fuzz/known/lmo_rdp) */
        double r0 = ceil(C / h0);
        size_t n0 = !(r0 <= 4096.0) ? 4096 : r0 < 2.0 ? 2 : (size_t)r0;
        size_t cap0 = n0 + 4096;
        double *x0 = malloc(cap0 * sizeof *x0);
        if (!x0)
            goto nomem;
        size_t k = 0;
        double ltarget = log(0.02 * tol);
        /* a lower estimate of log I for each probe: |phi'| <= 2 alpha d(0) (d is
         * nonincreasing), so I >= g(0) / (2 alpha d(0)); and I >= 1 */
        double lm0[2], lp0[2], d0[2], lmC[2], lpC[2], dC[2];
        dpzo__lmo_exact_point(lmo, 0.0, 0.0, lm0, lp0, d0);
        dpzo__lmo_exact_point(lmo, C, C, lmC, lpC, dC);
        for (size_t j = 0; j < npr; j++) {
            double al = probes[j];
            pgap[j] = fmax(0.0, al * lp0[0] - (al - 1.0) * lpC[1] - log(2.0 * al * d0[1]));
        }
        /* left: -h0 2^j until the tail gap estimate is small for every probe */
        double xl = -h0;
        for (;;) {
            x0[k++] = xl;
            int ok = 1;
            for (size_t j = 0; j < npr && ok; j++)
                if (left_tail_gap_log(lmo, C, xl, probes[j], pgap[j]) > ltarget)
                    ok = 0;
            if (ok || -xl * 2.0 > X_MAX || k > 2000)
                break;
            xl *= 2.0;
        }
        x0[k++] = 0.0;
        for (size_t j = 1; j < n0; j++) {
            double x = C * (double)j / (double)n0;
            if (x > x0[k - 1] && x < C)
                x0[k++] = x;
        }
        x0[k++] = C;
        double dr = h0;
        for (;;) {
            double xr = C + dr;
            x0[k++] = xr;
            int ok = 1;
            for (size_t j = 0; j < npr && ok; j++)
                if (right_tail_gap_log(lmo, C, xr, probes[j], pgap[j]) > ltarget)
                    ok = 0;
            if (ok || xr * 2.0 > X_MAX || k > cap0 - 2)
                break;
            dr *= 2.0;
        }
        qsort(x0, k, sizeof *x0, cmp_double);
        if (grid_insert(&g, x0, k)) {
            free(x0);
            goto nomem;
        }
        free(x0);
    }

    int rounds = 0, capped = 0;
    double achieved = INFINITY, worst_hist[MAX_ROUNDS];
    for (;;) {
        /* refinement rounds on the probes */
        for (; rounds < MAX_ROUNDS; rounds++) {
            build_cells(&g);
            size_t nc = g.np - 1;
            free(cg);
            free(cgmax);
            cg = malloc(nc * (npr + 1) * sizeof *cg);
            cgmax = calloc(nc, sizeof *cgmax);
            if (!cg || !cgmax)
                goto nomem;
            double worst = 0.0, tl = 0.0, tr = 0.0;
            for (size_t j = 0; j < npr; j++) {
                double a1 = probes[j] - 1.0;
                double *cgj = cg + j * nc;
                order_sums(&g, probes[j], tol, cgj, &pres[j]);
                double gap = (pres[j].logU - pres[j].logL) / a1;
                pgap[j] = isnan(gap) ? INFINITY : gap;
                if (!(gap <= worst))
                    worst = isnan(gap) ? INFINITY : fmax(worst, gap);
                for (size_t i = 0; i < nc; i++) {
                    cgj[i] /= a1;
                    if (cgj[i] > cgmax[i])
                        cgmax[i] = cgj[i];
                }
                if (pres[j].tailL_gap / a1 > tl)
                    tl = pres[j].tailL_gap / a1;
                if (pres[j].tailR_gap / a1 > tr)
                    tr = pres[j].tailR_gap / a1;
            }
            if (worst <= STOP_FRAC * tol)
                break;
            if (capped)
                break;
            /* A refinement that works shrinks the worst gap about 4x a round (second
             * order in the cell width). One that has not halved it in three rounds, or
             * whose gap stays infinite (double cannot resolve the density: noise scales
             * like 1e-17 against C = 1, or C = 1e18), would only run into the point cap
             * after seconds of work for the same useless bounds: stop (the bounds are
             * proven whatever the grid; info->capped says so). */
            worst_hist[rounds] = worst;
            if (rounds >= 3 && !(worst < INFINITY && worst <= 0.5 * worst_hist[rounds - 3])) {
                capped = 1;
                break;
            }
            /* new abscissae */
            size_t kmax = nc + 130;
            free(xs);
            xs = malloc(kmax * sizeof *xs);
            free(order);
            order = malloc(nc * sizeof *order);
            if (!xs || !order)
                goto nomem;
            size_t k = 0;
            /* tails: move the ends out while their gap is too large */
            if (tl > 0.05 * tol) {
                double xl = g.pt[0].x;
                for (int t = 0; t < 60 && -xl * 2.0 <= X_MAX; t++) {
                    xl *= 2.0;
                    xs[k++] = xl;
                    int ok = 1;
                    for (size_t j = 0; j < npr && ok; j++) {
                        double lI = fmax(0.0, pres[j].logL);
                        if (left_tail_gap_log(lmo, C, xl, probes[j], lI) > log(0.01 * tol))
                            ok = 0;
                    }
                    if (ok)
                        break;
                }
            }
            if (tr > 0.05 * tol) {
                double dr = g.pt[g.np - 1].x - C;
                for (int t = 0; t < 60 && (C + 2.0 * dr) <= X_MAX; t++) {
                    dr *= 2.0;
                    xs[k++] = C + dr;
                    int ok = 1;
                    for (size_t j = 0; j < npr && ok; j++) {
                        double lI = fmax(0.0, pres[j].logL);
                        if (right_tail_gap_log(lmo, C, C + dr, probes[j], lI) > log(0.01 * tol))
                            ok = 0;
                    }
                    if (ok)
                        break;
                }
            }
            /* cells: the largest shares (over the probes) first, until every probe's
             * predicted gap is below TARGET_FRAC tol (a split cell keeps about 1/4 of
             * its share: the bounds' gap is O(H^2) per unit length), but no cell whose
             * share is below tol/(4 N): refining those does not pay (the next round
             * sees the new shares) */
            size_t room = DPZO_LMO_EXACT_MAX_POINTS > g.np + k
                              ? DPZO_LMO_EXACT_MAX_POINTS - g.np - k
                              : 0;
            for (size_t i = 0; i < nc; i++) {
                order[i].gap = cgmax[i];
                order[i].i = i;
            }
            qsort(order, nc, sizeof *order, cmp_cgap_desc);
            const double tau = 0.25 * tol / (double)nc;
            for (size_t r = 0; r < nc && order[r].gap >= tau; r++) {
                double pm = 0.0;
                for (size_t j = 0; j < npr; j++)
                    pm = fmax(pm, pgap[j]);
                if (pm <= TARGET_FRAC * tol)
                    break;
                if (room == 0) {
                    capped = 1;
                    break;
                }
                size_t i = order[r].i;
                double x = split_point(g.pt[i].x, g.pt[i + 1].x, C);
                if (isnan(x))
                    continue;
                xs[k++] = x;
                room--;
                for (size_t j = 0; j < npr; j++)
                    pgap[j] -= 0.75 * cg[j * nc + i];
            }
            if (k == 0)
                break; /* nothing left to refine */
            qsort(xs, k, sizeof *xs, cmp_double);
            /* the tail points are outside the grid and the midpoints inside distinct
             * cells, so all are new and distinct */
            if (grid_insert(&g, xs, k))
                goto nomem;
        }
        /* every order */
        build_cells(&g);
        achieved = 0.0;
        size_t nbad = 0;
        double worst_a = 0.0, worst_gap = 0.0;
        for (size_t i = 0; i < n; i++) {
            order_res r;
            order_sums(&g, orders[i], tol, NULL, &r);
            to_bound(orders[i], &r, &out[i]);
            double gap = out[i].upper - out[i].lower;
            if (!(gap <= achieved))
                achieved = gap;
            if (gap > tol) {
                nbad++;
                if (gap > worst_gap) {
                    worst_gap = gap;
                    worst_a = orders[i];
                }
            }
        }
        if (nbad == 0 || capped || rounds >= MAX_ROUNDS || npr >= MAX_PROBES)
            break;
        /* refine for the worst order too */
        int seen = 0;
        for (size_t j = 0; j < npr; j++)
            if (probes[j] == worst_a)
                seen = 1;
        if (seen)
            break;
        probes[npr++] = worst_a;
    }

    inf0.quad_outside = 0;
    /* capped, stalled or unbounded: double cannot resolve this density, and GSL's adaptive
     * quadrature would spend seconds an order for an estimate no better than the midpoint */
    if ((flags & DPZO_LMO_EXACT_QUAD_VALUE) && !capped && isfinite(achieved)) {
        for (size_t i = 0; i < n; i++) {
            double v = dpzo__lmo_exact_quad(lmo, C, orders[i], NULL);
            if (!(v >= out[i].lower && v <= out[i].upper)) {
                inf0.quad_outside++;
                v = isnan(v) ? out[i].value : fmin(fmax(v, out[i].lower), out[i].upper);
            }
            out[i].value = v;
        }
    }
    inf0.points = g.np;
    inf0.rounds = rounds;
    inf0.achieved_gap = achieved;
    inf0.x_left = g.pt[0].x;
    inf0.x_right = g.pt[g.np - 1].x;
    inf0.capped = capped;
    if (info)
        *info = inf0;
    free(sorted);
    free(probes);
    free(pres);
    free(pgap);
    free(xs);
    free(cg);
    free(cgmax);
    free(order);
    free(g.pt);
    free(g.cell);
    return DPZO_OK;
nomem:
    free(sorted);
    free(probes);
    free(pres);
    free(pgap);
    free(xs);
    free(cg);
    free(cgmax);
    free(order);
    free(g.pt);
    free(g.cell);
    return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory in the exact LMO integrator");
}

dpzo_status dpzo__lmo_exact_rdp(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                                const double *orders, size_t n, double tol, dpzo_bound *out,
                                double *achieved_gap)
{
    dpzo__lmo_exact_info info;
    dpzo_status st = dpzo__lmo_exact_rdp_ex(ctx, lmo, sensitivity, orders, n, tol,
                                            DPZO_LMO_EXACT_QUAD_VALUE, out, &info);
    if (st == DPZO_OK && achieved_gap)
        *achieved_gap = info.achieved_gap;
    return st;
}

/* ---- the quadrature estimate ---------------------------------------------------------- */

typedef struct {
    const dpzo_lmo *lmo;
    double C, alpha, S;
} qparams;

static double q_integrand(double x, void *vp)
{
    const qparams *q = vp;
    double v = q->alpha * dpzo_lmo_log_pdf(q->lmo, x) -
               (q->alpha - 1.0) * dpzo_lmo_log_pdf(q->lmo, x - q->C) - q->S;
    return exp(v);
}

double dpzo__lmo_exact_quad(const dpzo_lmo *lmo, double C, double alpha, double *relerr)
{
    enum { LIMIT = 2000 };
    qparams q = {lmo, C, alpha, 0.0};
    /* the maximum of the integrand is at x = 0 (fact F3) */
    q.S = alpha * dpzo_lmo_log_pdf(lmo, 0.0) - (alpha - 1.0) * dpzo_lmo_log_pdf(lmo, -C);
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(LIMIT);
    if (!w)
        return NAN;
    gsl_function f = {q_integrand, &q};
    /* GSL's default handler aborts; integration failures are reported by status (the
     * handler is switched off once per process: dpzo__gsl_quiet) */
    dpzo__gsl_quiet();
    double r1 = 0, e1 = 0, r2 = 0, e2 = 0, r3 = 0, e3 = 0;
    int s1 = gsl_integration_qagil(&f, 0.0, 0.0, 1e-11, LIMIT, w, &r1, &e1);
    int s2 = gsl_integration_qags(&f, 0.0, C, 0.0, 1e-11, LIMIT, w, &r2, &e2);
    int s3 = gsl_integration_qagiu(&f, C, 0.0, 1e-11, LIMIT, w, &r3, &e3);
    gsl_integration_workspace_free(w);
    double tot = r1 + r2 + r3;
    /* roundoff warnings (the requested 1e-11 is near double resolution) still leave a
     * usable estimate; anything else does not */
    int bad = (s1 && s1 != GSL_EROUND) || (s2 && s2 != GSL_EROUND) || (s3 && s3 != GSL_EROUND);
    if (relerr)
        *relerr = (e1 + e2 + e3) / tot;
    if (bad || !(tot > 0.0) || !isfinite(tot))
        return NAN;
    return (q.S + log(tot)) / (alpha - 1.0);
}
