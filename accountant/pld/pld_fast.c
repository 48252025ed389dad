/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_fast.c: cells of a Poisson-sampled Gaussian step's privacy loss, many at
 * a time.
 *
 * pld_discretize.c discretises a step from the P- and Q-masses of the buckets between
 * consecutive losses x_0 < x_1 < ... . pld_source.c computes each point's tails one at a
 * time in log space (about fourteen scalar logarithms, exponentials and erfc a point, with
 * the bucket masses). For the Poisson-sampled Gaussian (remove or add pair, q < 1), the
 * common case at 10^4 - 10^5 points a step, this file computes the masses in linear space
 * with array calls of vmath.c (erfc, log, expm1) and an explicit error bound for every one.
 *
 * Thresholds. Write l' = l (remove) or -l (add). L > l is r > rs (remove) or r < rs (add)
 * with rs = g^-1(l') = log(expm1(l') / q + 1), computed as z = em / q + 1 (em = expm1(l'))
 * and rs = log z: no cancellation against log q. For l' <= log(1 - q), rs = -inf exactly.
 * Component j of the mixture (P0 = N(0, sigma^2), P1 = N(1, sigma^2)) has the standardised
 * threshold t_j = sigma rs + b (j = 0) or sigma rs - b (j = 1), b = 1 / (2 sigma).
 *
 * Cells. The computed thresholds rs~_k are doubles; the outcomes with r between two
 * consecutive ones form a cell, and the cells partition the line (a decrease between
 * neighbours would show as a nonpositive mass, which is flagged). The masses computed are
 * those of the cells, so an error in rs~_k moves a cell's boundary but does not make its
 * masses inconsistent: P and Q, and the two components, are read at the same rs~_k.
 * - Optimistic side (`pess` = 0): merging the outcomes of any partition is a
 *   post-processing, so the cells between the computed rs~_k serve as they are.
 * - Pessimistic side: a cell is split between the grid points below and above it, so its
 *   losses must not exceed the upper one. Each rs~_k is moved by its error bound D_rs (down
 *   for remove, up for add) so that the moved threshold lies on the safe side of the exact
 *   g^-1(l'_k): a cell's losses then lie in [x_k - sl_k, x_k+1] with sl_k = 2.0002 D_rs (g
 *   has slope at most 1). pld_discretize.c splits it from x_k - sl_k and raises the lower
 *   part to x_k (raising a loss only increases every hockey-stick divergence).
 * D_rs: em has relative error REL (DPZO__VM_REL, vmath.h), the product with 1/q rounded
 * and the sum add 2u |em| / q and u z: z is off by at most a = (REL + 2.01u) |em| / q + u z,
 * and with a <= 1e-3 z required (else flagged) rs is off by at most
 * D_rs = 1.0011 a / z + REL |rs| (-log(1 - x) <= 1.0011 x for x <= 1e-3; a factor 1.0001
 * covers products of small errors). The move itself is rounded: rs~ -+ (D_rs + 2u |rs|).
 *
 * Masses. Within a cell the two components' thresholds t_j are computed from the same
 * rs~ with a product and a sum rounded (b = 0.5 / sigma rounded too): t_j is off by at most
 * u (|sigma rs~| + b + |t_j|), and the scaling |t| / sqrt 2 by 2.0001 u |t| more in units of
 * t: D = u (|sigma rs~| + b) + 3.0001 u |t|. e = erfc(|t| / sqrt 2) / 2 is the small one of
 * Phibar(t) and Phi(t). The hazard of the normal distribution satisfies phi(s)/Phibar(s) <
 * (s + sqrt(s^2 + 4)) / 2 <= s + 1 for s >= 0 (Birnbaum 1942), and the large side's,
 * phi / (1 - e), is below 2 phi(0) < 1, so a small tail at an argument off by at most D
 * (with D (|t| + D + 1) <= 1e-3, else flagged) is off by a relative
 *   eta = 1.001 REL + 1.0011 D (|t| + D + 1)
 * (erfc's own error and the argument's; e^x - 1 <= 1.0011 x there), and a large side
 * 1 - e by eta + u (its absolute error eta e + u over 1 - e >= 1/2). A component's mass
 * between thresholds t_lo < t_hi is e_lo - e_hi (both >= 0), e_hi - e_lo (both < 0) or
 * (1 - e_lo) - e_hi, off by at most eta_lo e_lo + eta_hi e_hi plus u |m| (and u for
 * 1 - e_lo). The remove pair has P = (1 - q) P0 + q P1 and Q = P0, the add pair P = P0
 * and Q the mixture; the mixture adds 4u relative to the larger of its two bounds. A mass
 * not above four times its bound, a tail below 2^-960 (its relative error is not kept
 * near the subnormals) and a loss |l'| >= 700 are flagged: the caller then discretises
 * the step the scalar way. A cell between two thresholds at -inf is empty (masses 0). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "pld_fast.h"
#include "vmath.h"

#define UR (0.5 * DBL_EPSILON) /* unit roundoff u */
#define REL DPZO__VM_REL
#define TINY 0x1p-960

int dpzo__pld_fast_applies(const dpzo__pld_source *s)
{
    return s->base == DPZO__PLD_GAUSSIAN
           && (s->pair == DPZO__PLD_REMOVE || s->pair == DPZO__PLD_ADD) && s->q > 0.0
           && s->q < 1.0 && s->scale > 1e-100 && s->scale < 1e100;
}

/* The loops below are plain arithmetic over arrays, compiled for AVX-512 and AVX2 as well
 * (common/dpzo_clones.h: the same IEEE operations in every clone, so the same results). */
#include "dpzo_clones.h"
#define FAST_CLONES DPZO_KERNEL_CLONES

/* l' for the vector functions; flag 1: beyond their range, -1: rs = -inf exactly */
static FAST_CLONES void loop_args(const double *restrict x, size_t m, double sgn, double l1q,
                                  double *restrict arg, double *restrict flag)
{
    for (size_t k = 0; k < m; k++) {
        double l = sgn * x[k];
        int minf = !(l > l1q), bad = !(l < 700.0) | (l != l);
        flag[k] = bad ? 1.0 : minf ? -1.0 : 0.0;
        arg[k] = (bad | minf) ? 0.0 : l;
    }
}

/* z = em / q + 1 into arg, and 1.0011 a / z (the part of D_rs from z's error) into h */
static FAST_CLONES void loop_z(const double *restrict em, size_t m, double inv_q,
                               double *restrict arg, double *restrict h, double *restrict flag)
{
    for (size_t k = 0; k < m; k++) {
        double z = em[k] * inv_q + 1.0, a = (REL + 2.01 * UR) * fabs(em[k]) * inv_q + UR * z;
        int bad = (flag[k] > 0.0) | ((flag[k] == 0.0) & (!(z > 0.0) | !(a <= 1e-3 * z)));
        int use = (flag[k] == 0.0) & !bad;
        flag[k] = bad ? 1.0 : flag[k];
        arg[k] = use ? z : 1.0;
        h[k] = use ? 1.0011 * a / (use ? z : 1.0) : 0.0;
    }
}

/* the cells' thresholds t0, t1 (moved by D_rs in the direction `mv` when it is nonzero), the
 * tails' relative error bounds h0, h1, erfc's arguments a0, a1, the loss slack sl */
static FAST_CLONES void loop_t(const double *restrict rs, size_t m, double sg, double b, double mv,
                               double *restrict t0, double *restrict t1, double *restrict h0,
                               double *restrict h1, double *restrict a0, double *restrict a1,
                               double *restrict sl, double *restrict flag)
{
    for (size_t k = 0; k < m; k++) {
        double drs = (h0[k] + REL * fabs(rs[k])) * 1.0001;
        double mvd = mv * (drs + 2.0 * UR * fabs(rs[k])) * 1.0001;
        double r = rs[k] + mvd;
        double c = sg * r, tt0 = c + b, tt1 = c - b;
        double base = UR * (fabs(c) + b);
        double D0 = (base + 3.0001 * UR * fabs(tt0)) * 1.0001;
        double D1 = (base + 3.0001 * UR * fabs(tt1)) * 1.0001;
        double s0 = D0 * (fabs(tt0) + D0 + 1.0), s1 = D1 * (fabs(tt1) + D1 + 1.0);
        int minf = flag[k] < 0.0;
        /* s0, s1 are NaN or inf when the thresholds are */
        int bad = (flag[k] > 0.0) | ((minf == 0) & (!(s0 <= 1e-3) | !(s1 <= 1e-3)));
        int use = (minf == 0) & (bad == 0);
        flag[k] = bad ? 1.0 : flag[k];
        t0[k] = use ? tt0 : -INFINITY;
        t1[k] = use ? tt1 : -INFINITY;
        h0[k] = use ? 1.001 * REL + 1.0011 * s0 : 0.0;
        h1[k] = use ? 1.001 * REL + 1.0011 * s1 : 0.0;
        a0[k] = use ? fabs(tt0) * M_SQRT1_2 : 0.0;
        a1[k] = use ? fabs(tt1) * M_SQRT1_2 : 0.0;
        sl[k] = use ? 2.0002 * fabs(mvd) : 0.0;
    }
}

/* the small tails e = erfc / 2 (exactly 0 at rs = -inf: the lower tail there) */
static FAST_CLONES void loop_half(double *restrict e0, double *restrict e1, size_t m,
                                  double *restrict flag)
{
    for (size_t k = 0; k < m; k++) {
        int minf = flag[k] < 0.0;
        e0[k] = minf ? 0.0 : 0.5 * e0[k];
        e1[k] = minf ? 0.0 : 0.5 * e1[k];
        int bad = (flag[k] > 0.0) | ((minf == 0) & (!(e0[k] >= TINY) | !(e1[k] >= TINY)));
        flag[k] = bad ? 1.0 : flag[k];
    }
}

/* One component's mass between the thresholds tl < th (small tails el, eh, their relative
 * error bounds hl, hh), and its relative error bound (negative: unusable) */
static inline double comp_mass(double tl, double el, double hl, double th, double eh, double hh,
                               double *rel)
{
    double mm = tl >= 0.0 ? el - eh : th < 0.0 ? eh - el : (1.0 - el) - eh;
    double err = hl * el + hh * eh + UR * (fabs(mm) + ((tl < 0.0) & (th >= 0.0) ? 1.0 : 0.0));
    int good = (mm > 0.0) & (err <= 0.25 * mm);
    *rel = good ? err / (good ? mm : 1.0) * (1.0 + 4.0 * UR) : -1.0;
    return mm;
}

/* the cells: points lo = k + dl and hi = k + dh (dl, dh: 0 and 1 in the order of t) */
static FAST_CLONES void loop_cells(const double *restrict t0, const double *restrict t1,
                                   const double *restrict e0, const double *restrict e1,
                                   const double *restrict h0, const double *restrict h1,
                                   const double *restrict flag, size_t nb, int add, double q,
                                   double omq, double *restrict pb, double *restrict qb,
                                   double *restrict ep, double *restrict eq,
                                   double *restrict good)
{
    const size_t dl = add ? 1 : 0, dh = add ? 0 : 1;
    for (size_t k = 0; k < nb; k++) {
        size_t lo = k + dl, hi = k + dh;
        double r0, r1;
        double m0 = comp_mass(t0[lo], e0[lo], h0[lo], t0[hi], e0[hi], h0[hi], &r0);
        double m1 = comp_mass(t1[lo], e1[lo], h1[lo], t1[hi], e1[hi], h1[hi], &r1);
        double mix = omq * m0 + q * m1;
        double rmix = (r0 > r1 ? r0 : r1) * (1.0 + 4.0 * UR) + 4.0 * UR;
        double g = (r0 < r1 ? r0 : r1) >= 0.0 ? 1.0 : 0.0;
        /* both thresholds -inf: an empty cell, exactly */
        int empty = (flag[k] < 0.0) & (flag[k + 1] < 0.0);
        good[k] = empty ? 1.0 : (flag[k] <= 0.0) & (flag[k + 1] <= 0.0) ? g : 0.0;
        pb[k] = empty ? 0.0 : add ? m0 : mix;
        qb[k] = empty ? 0.0 : add ? mix : m0;
        ep[k] = empty ? 0.0 : add ? r0 : rmix;
        eq[k] = empty ? 0.0 : add ? rmix : r0;
    }
}

/* An upper bound on the P-mass of r on the given side of point k's threshold (upper: r
 * above it) */
static double p_side(const double *t0, const double *t1, const double *e0, const double *e1,
                     const double *h0, const double *h1, size_t k, int upper, int add, double q)
{
    /* component j's tail on that side: e where it is the small one, else 1 - e */
    double v[2], t[2] = {t0[k], t1[k]}, e[2] = {e0[k], e1[k]}, h[2] = {h0[k], h1[k]};
    for (int j = 0; j < 2; j++) {
        int small = upper ? t[j] >= 0.0 : t[j] < 0.0;
        v[j] = small ? e[j] * (1.0 + h[j]) : (1.0 - e[j]) * (1.0 + h[j] + UR);
    }
    double p = add ? v[0] : (1.0 - q) * v[0] + q * v[1];
    p *= 1.0 + 4.0 * UR;
    return p < 1.0 ? p : 1.0;
}

size_t dpzo__pld_fast_cells(const dpzo__pld_source *s, const double *x, size_t m, int pess,
                            double *pb, double *qb, double *ep, double *eq, double *sl,
                            double *below, double *above, double *w)
{
    if (m < 2)
        return 0;
    const int add = s->pair == DPZO__PLD_ADD;
    const double q = s->q, sg = s->scale, b = 0.5 / sg;
    const double inv_q = 1.0 / q, l1q = log1p(-q), omq = 1.0 - q;
    double *t0 = w, *t1 = w + m, *e0 = w + 2 * m, *e1 = w + 3 * m, *h0 = w + 4 * m,
           *h1 = w + 5 * m, *arg = w + 6 * m, *flag = w + 7 * m, *good = w + 8 * m;
    loop_args(x, m, add ? -1.0 : 1.0, l1q, arg, flag);
    dpzo__vm_expm1(arg, e0, m);
    loop_z(e0, m, inv_q, arg, h0, flag);
    dpzo__vm_log(arg, arg, m); /* rs */
    /* moved to the safe side: down for remove (L grows with r), up for add */
    loop_t(arg, m, sg, b, !pess ? 0.0 : add ? 1.0 : -1.0, t0, t1, h0, h1, e0, e1, good, flag);
    /* per point, sl: the slack of the cell whose lower loss end the point is */
    if (sl != NULL)
        memcpy(sl, good, (m - 1) * sizeof *sl);
    dpzo__vm_erfc(e0, e0, m);
    dpzo__vm_erfc(e1, e1, m);
    loop_half(e0, e1, m, flag);
    loop_cells(t0, t1, e0, e1, h0, h1, flag, m - 1, add, q, omq, pb, qb, ep, eq, good);
    size_t nbad = 0;
    for (size_t k = 0; k + 1 < m; k++)
        nbad += good[k] == 0.0;
    if (below != NULL) /* P(L <= x_0): remove r <= rs_0, add r >= rs_0 */
        *below = flag[0] > 0.0 ? 1.0 : p_side(t0, t1, e0, e1, h0, h1, 0, add, add, q);
    if (above != NULL) /* P(L > x_m-1): remove r > rs, add r < rs */
        *above = flag[m - 1] > 0.0 ? 1.0 : p_side(t0, t1, e0, e1, h0, h1, m - 1, !add, add, q);
    return nbad + (flag[0] > 0.0) + (flag[m - 1] > 0.0);
}

/* The pessimistic split of cells 0 .. mc-1 (x: their lower grid points; pld_discretize.c's
 * pess_fast states the rules): ratios, guards and fractions in array loops, the logarithms
 * and exponentials by vmath.c. */

static FAST_CLONES void loop_ratio_fix(const double *restrict pb, const double *restrict qb,
                                       size_t mc, double *restrict v, double *restrict fix)
{
    for (size_t i = 0; i < mc; i++) {
        double r = pb[i] / (qb[i] > 0.0 ? qb[i] : 1.0);
        int normal = (qb[i] > 0.0) & (r >= DBL_MIN) & (r <= DBL_MAX);
        v[i] = normal ? r : 1.0;
        fix[i] = normal ? 0.0 : 1.0;
    }
}

/* -frac into v, the excess into ex; returns the largest slack over d (NaN-safe: 1 if any) */
static FAST_CLONES double loop_frac(const double *restrict x, const double *restrict pb,
                                    const double *restrict ep, const double *restrict eq,
                                    const double *restrict sl, size_t mc, double d,
                                    double hi_guard, double *restrict v, double *restrict ex)
{
    double worst = 0.0;
    for (size_t i = 0; i < mc; i++) {
        double lr = v[i], g = dpzo__pld_ratio_guard(lr, ep[i], eq[i]) + hi_guard;
        double w = d + sl[i], f = lr - (x[i] - sl[i]) + g;
        f = f < 0.0 ? 0.0 : f > w ? w : f;
        v[i] = pb[i] > 0.0 ? -f : 0.0;
        ex[i] = 2.0 * g + 2.5 * sl[i];
        double r = sl[i] <= 1e-6 * d ? 0.0 : 1.0;
        worst = r > worst ? r : worst;
    }
    return worst;
}

/* the excess bins (dpzo__pld_excess_bin), as doubles */
static FAST_CLONES void loop_bins(const double *restrict ex, size_t mc, double inv, double d,
                                  double *restrict jb)
{
    for (size_t i = 0; i < mc; i++)
        jb[i] = dpzo__pld_excess_bin(ex[i], d, inv);
}

static FAST_CLONES void loop_place(const double *restrict pb, const double *restrict v, size_t mc,
                                   double inv_norm, double *restrict lo, double *restrict hi)
{
    for (size_t i = 0; i < mc; i++) {
        double h = pb[i] * -v[i] * inv_norm;
        hi[i] = h > pb[i] ? pb[i] : h;
        lo[i] = pb[i] - hi[i];
    }
}

int dpzo__pld_fast_split(const double *x, const double *pb, const double *qb, const double *ep,
                         const double *eq, const double *sl, size_t mc, double d, double d_eff,
                         double *p, double exc_mass[64], double *v, double *ex, double *hi)
{
    const double inv_norm = 1.0 / -expm1(-d);
    const double hi_guard = (2.0 * REL + 5.0 * UR * 2.0) * expm1(1.000001 * d) * (1.0 + 8.0 * UR);
    loop_ratio_fix(pb, qb, mc, v, hi); /* hi: the ratios to fix, first */
    dpzo__vm_log(v, v, mc);
    if (loop_frac(x, pb, ep, eq, sl, mc, d, hi_guard, v, ex) != 0.0)
        return -1;
    /* ratios outside the normal range (rare): two logarithms, the guard on each */
    for (size_t i = 0; i < mc; i++) {
        if (hi[i] == 0.0 || !(pb[i] > 0.0))
            continue;
        double g, f, w = d + sl[i];
        if (qb[i] > 0.0) {
            const double lp = log(pb[i]), lq = log(qb[i]);
            g = 2.0 * (ep[i] + eq[i]) + 4.0 * DBL_EPSILON * (fabs(lp) + fabs(lq) + 1.0) + hi_guard;
            f = lp - lq - (x[i] - sl[i]) + g;
        } else {
            g = 0.5 * d; /* no Q-mass: the merged loss is +inf, all of it goes up */
            f = w;
        }
        f = f < 0.0 ? 0.0 : f > w ? w : f;
        v[i] = -f;
        ex[i] = 2.0 * g + 2.5 * sl[i];
    }
    dpzo__vm_expm1(v, v, mc);
    /* the coupling terms (pld_internal.h), bins relative to d_eff; r raised by 4u so that
     * rounding never puts an excess in a bin below its own */
    loop_bins(ex, mc, (1.0 + 4.0 * UR) / d_eff, d, hi);
    for (size_t i = 0; i < mc; i++)
        exc_mass[(int)hi[i]] += pb[i];
    loop_place(pb, v, mc, inv_norm, ex, hi); /* ex, hi: the lower and upper parts */
    p[0] += ex[0];
    for (size_t i = 1; i < mc; i++)
        p[i] += ex[i] + hi[i - 1];
    p[mc] += hi[mc - 1];
    return 0;
}

/* grid point i0 + i: ((double)(i0 + i) + off) d, as pld_discretize.c's grid_loss (the integer
 * sum is exact below 2^53, so the double is the same) */
static FAST_CLONES void loop_grid(double i0, double off, double d, size_t m, double *restrict x)
{
    for (size_t i = 0; i < m; i++)
        x[i] = ((i0 + (double)i) + off) * d;
}

void dpzo__pld_grid(long i0, double off, double d, size_t m, double *x)
{
    loop_grid((double)i0, off, d, m, x);
}

/* Optimistic side: which merged cells land at their grid points. v: the ratios' logs */
static FAST_CLONES void loop_merge(const double *restrict lk, const double *restrict pb,
                                   const double *restrict ep, const double *restrict eq,
                                   const double *restrict v, const double *restrict fix, size_t mc,
                                   double *restrict opt, double *restrict below)
{
    for (size_t i = 0; i < mc; i++) {
        double lstar = v[i] - dpzo__pld_ratio_guard(v[i], ep[i], eq[i]);
        int at = (lstar >= lk[i]) & (fix[i] == 0.0) & (pb[i] > 0.0);
        opt[i] += at ? pb[i] : 0.0;
        below[i] = (pb[i] > 0.0) & !at ? 1.0 : 0.0;
    }
}

void dpzo__pld_fast_merge(const double *lk, const double *pb, const double *qb, const double *ep,
                          const double *eq, size_t mc, double *opt, double *below, double *v,
                          double *fix)
{
    loop_ratio_fix(pb, qb, mc, v, fix);
    dpzo__vm_log(v, v, mc);
    loop_merge(lk, pb, ep, eq, v, fix, mc, opt, below);
    for (size_t i = 0; i < mc; i++) { /* ratios outside the normal range (rare) */
        if (fix[i] == 0.0 || !(pb[i] > 0.0))
            continue;
        double lstar = INFINITY; /* no Q-mass */
        if (qb[i] > 0.0) {
            const double lp = log(pb[i]), lq = log(qb[i]);
            lstar = lp - lq - 2.0 * (ep[i] + eq[i]) - 4.0 * DBL_EPSILON * (fabs(lp) + fabs(lq) + 1.0);
        }
        if (lstar >= lk[i]) {
            opt[i] += pb[i];
            below[i] = 0.0;
        }
    }
}

/* The optimistic boundaries' interior (pld_discretize.c's opt_boundaries): the slope of the
 * pessimistic masses from p[k-1], p[k+1]. kind: 1 a normal ratio, 0 a zero mass, 2 other */
static FAST_CLONES void loop_slope_ratio(const double *restrict pm, const double *restrict pp,
                                         size_t mc, double *restrict v, double *restrict kind)
{
    for (size_t i = 0; i < mc; i++) {
        int pos = (pm[i] > 0.0) & (pp[i] > 0.0);
        double r = pp[i] / (pos ? pm[i] : 1.0);
        int normal = pos & (r > 0.0) & (r <= DBL_MAX);
        v[i] = normal ? r : 1.0;
        kind[i] = normal ? 1.0 : pos ? 2.0 : 0.0;
    }
}

static FAST_CLONES void loop_bnd(const double *restrict v, const double *restrict kind, size_t mc,
                                 double i0, double off, double d, double *restrict bnd)
{
    for (size_t i = 0; i < mc; i++) {
        double slope = kind[i] == 1.0 ? fabs(v[i]) / (2.0 * d) : 1.0 / d;
        double sh = d * d * (1.0 / 12.0 + slope / 6.0);
        sh = sh > 0.25 * d ? 0.25 * d : sh;
        bnd[i] = ((i0 + (double)i) + off) * d - 0.5 * d + sh;
    }
}

void dpzo__pld_opt_bnd_interior(const double *p, size_t k0, size_t mc, long bot, double d,
                                double off, double *bnd, double *v, double *kind)
{
    loop_slope_ratio(p + k0 - 1, p + k0 + 1, mc, v, kind);
    dpzo__vm_log(v, v, mc);
    loop_bnd(v, kind, mc, (double)(bot + (long)k0), off, d, bnd + k0);
    for (size_t i = 0; i < mc; i++) { /* ratios outside the normal range (rare) */
        if (kind[i] != 2.0)
            continue;
        size_t k = k0 + i;
        double slope = fabs(log(p[k + 1]) - log(p[k - 1])) / (2.0 * d);
        double sh = d * d * (1.0 / 12.0 + slope / 6.0);
        sh = sh > 0.25 * d ? 0.25 * d : sh;
        bnd[k] = ((double)(bot + (long)k) + off) * d - 0.5 * d + sh;
    }
}
