/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_discretize.c: one step's privacy loss distribution on the grid {i d}.
 *
 * Both discretisations work bucket by bucket from exact P- and Q-probabilities of
 * loss intervals (pld_source.c), never from differences of hockey-stick values:
 *
 * Pessimistic (connect the dots, Doroshenko et al. 2022). The outcomes with loss in
 * (l_i, l_i + d] are replaced by two outcomes with losses l_i and l_i + d carrying the
 * same P- and Q-mass: with l* = log(P_B/Q_B) (the bucket's merged loss, in
 * [l_i, l_i + d]) the upper outcome gets P_B (1 - e^{-(l* - l_i)}) / (1 - e^{-d}). The
 * true pair is a post-processing of the split one (every outcome with likelihood ratio
 * in [e^l_i, e^{l_i+d}] is a randomisation of those two extremes), so the result
 * dominates it, and domination survives composition. Rounding: l* - l_i is raised by a
 * bound on its floating-point error, which only moves mass up. The P-mass above the top
 * grid point goes to +infinity (pess_inf); the mass below the bottom point is moved up
 * onto it.
 *
 * Optimistic (merging). Each bucket (b_i, b_{i+1}] around l_i is merged into one
 * outcome; merging outcomes is a post-processing, so the merged pair is dominated by
 * the true one, and so is any pair obtained by lowering its losses. The merged loss
 * l* lies near the bucket's centre - d^2/24 + (d^2/12) (log f)', so the boundaries are
 * shifted up by s_i = d^2 (1/6 + |(log f)'|/3) (slope from the pessimistic masses) and
 * l* then almost always lands at or above l_i, where its mass is placed; otherwise it
 * goes to the grid point below l* (still valid, a little looser). Tails are dropped.
 * The cost of optimism is O(d^2) per step instead of the O(d) of rounding losses down. */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld_fast.h"
#include "pld_internal.h"
#include "vmath.h"

#define U DBL_EPSILON

static double grid_loss(long i, double d, double off) { return ((double)i + off) * d; }

/* An upper bound on e^x for a log tail x computed by pld_source.c (err: the custom noise's
 * bound on its error beyond the rounding model). The mass above the top grid point goes to
 * +infinity and is the whole pessimistic delta at every eps above the grid, so it must not
 * be rounded down, least of all to 0: at sigma 1000, q 1e-4 the top point's tail is about
 * e^-240000 (one step's losses all lie within a grid step of 0, and the tail beyond the
 * first point is far below tau), whose exp() underflows to 0, and delta(3), exactly
 * 1.18e-32104799, was reported as a proven upper bound of 0 (issue 28). Here x is raised by
 * a bound on its own rounding (8u (|x| + 1), the model of between() below, plus err), the
 * exponential's relative error (a few ulps) is covered by 4u, and where the result is below
 * DBL_MIN, where exp() is only accurate to an absolute ulp of 2^-1074, it is moved one
 * double up: a finite x, however negative, gives at least 2^-1074; only x = -inf (a
 * support that ends at or below the top point) gives 0, exactly. */
static double exp_up(double x, double err)
{
    if (x == -INFINITY)
        return 0.0;
    double v = exp(x + 8.0 * U * (fabs(x) + 1.0) + err) * (1.0 + 4.0 * U);
    if (v < DBL_MIN)
        v = nextafter(v, INFINITY);
    return v < 1.0 ? v : 1.0;
}

static double grid_offset(const dpzo__pld_source *s, double d);

/* smallest i in [a, b] with pred true (pred(b) true, pred monotone) */
static long first_true(const dpzo__pld_source *s, double d, double off, double lt, int upper,
                       long a, long b)
{
    while (b - a > 1) {
        long m = a + (b - a) / 2;
        dpzo__pld_tails t;
        dpzo__pld_tails_at(s, grid_loss(m, d, off), &t);
        int ok = upper ? t.pg <= lt : t.pl > lt;
        if (ok)
            b = m;
        else
            a = m;
    }
    return b;
}

/* [bot, top]: P(L > top d) <= tau, P(L <= bot d) <= tau, clipped to the support. */
static int find_range(const dpzo__pld_source *s, double d, double tau, long *bot, long *top)
{
    double off = grid_offset(s, d);
    double lmin, lmax, lt = log(tau);
    dpzo__pld_support(s, &lmin, &lmax);
    const double lim = 0x1p52;
    long cap_hi = isfinite(lmax) && lmax / d < lim ? (long)ceil(lmax / d - off) : (long)lim;
    long cap_lo = isfinite(lmin) && lmin / d > -lim ? (long)floor(lmin / d - off) : -(long)lim;
    while (isfinite(lmax) && cap_hi < (long)lim && grid_loss(cap_hi, d, off) < lmax)
        cap_hi++; /* the top grid point must not fall below the support's maximum */
    dpzo__pld_tails t;
    /* upper end: exponential search for a point with P(L > i d) <= tau */
    long a = cap_lo > 0 ? cap_lo : (cap_hi < 0 ? cap_hi : 0), step = 1, b;
    dpzo__pld_tails_at(s, grid_loss(a, d, off), &t);
    if (t.pg <= lt) {
        b = a;
        for (;;) {
            long c = b - step < cap_lo ? cap_lo : b - step;
            dpzo__pld_tails_at(s, grid_loss(c, d, off), &t);
            if (!(t.pg <= lt) || c == cap_lo) {
                a = c;
                break;
            }
            b = c;
            step *= 2;
        }
        *top = t.pg <= lt ? a : first_true(s, d, off, lt, 1, a, b);
    } else {
        for (;;) {
            b = a + step > cap_hi ? cap_hi : a + step;
            dpzo__pld_tails_at(s, grid_loss(b, d, off), &t);
            if (t.pg <= lt || b == cap_hi)
                break;
            a = b;
            step *= 2;
            if (step > (long)lim)
                return -1;
        }
        /* stopped by the index cap 2^52 rather than the support: mass above it would all
         * be put at +infinity (and a step whose whole loss lies there has no finite mass):
         * the grid cannot index this step */
        if (!(t.pg <= lt) && b == (long)lim && cap_hi == (long)lim)
            return -1;
        *top = first_true(s, d, off, lt, 1, a, b);
    }
    /* lower end: largest i with P(L <= i d) <= tau, i.e. first_true(pl > lt) - 1 */
    b = *top;
    step = 1;
    for (;;) {
        a = b - step < cap_lo ? cap_lo : b - step;
        dpzo__pld_tails_at(s, grid_loss(a, d, off), &t);
        if (t.pl <= lt || a == cap_lo)
            break;
        b = a;
        step *= 2;
        if (step > (long)lim)
            return -1;
    }
    if (t.pl > lt) {
        *bot = a; /* a == cap_lo: the whole support */
    } else {
        *bot = first_true(s, d, off, lt, 0, a, b) - 1;
    }
    if (*bot > *top)
        *bot = *top;
    if (dpzo__pld_slack(s) > 0.0)
        (*top)++; /* the top bucket's widened upper end needs a grid point above it */
    return 0;
}

size_t dpzo__pld_points(const dpzo__pld_source *s, double d, double tau)
{
    long bot, top;
    if (find_range(s, d, tau, &bot, &top))
        return SIZE_MAX;
    return (size_t)(top - bot + 1);
}

/* P(a < L <= b) from the log tails at a and b (upper tails where they are small). */
static double between(double ga, double la, double gb, double lb, double extra,
                      double *relerr)
{
    double m;
    if (ga < -M_LN2) {
        double diff = gb - ga;
        m = gb == -INFINITY ? exp(ga) : exp(ga) * -expm1(diff);
        *relerr = gb == -INFINITY ? 8.0 * U
                                  : 8.0 * U * (fabs(ga) + fabs(gb) + 2.0) / fmax(fabs(diff), DBL_MIN)
                                        + 8.0 * U;
        if (extra > 0.0 && gb != -INFINITY)
            *relerr += 2.0 * extra / fmax(fabs(diff), DBL_MIN);
    } else {
        double diff = la - lb;
        m = la == -INFINITY ? exp(lb) : exp(lb) * -expm1(diff);
        *relerr = la == -INFINITY ? 8.0 * U
                                  : 8.0 * U * (fabs(la) + fabs(lb) + 2.0) / fmax(fabs(diff), DBL_MIN)
                                        + 8.0 * U;
        if (extra > 0.0 && la != -INFINITY)
            *relerr += 2.0 * extra / fmax(fabs(diff), DBL_MIN);
    }
    /* the log of a computed tail is off by at most `extra`: a relative error of e^extra - 1 */
    if (extra > 0.0)
        *relerr += 2.0 * extra;
    /* below DBL_MIN exp and the product keep an absolute error of an ulp or two, 2^-1074
     * each, not a relative one (issue 30: randomized response at p = 2^-1074 has a Q-mass
     * of 2.5e-324 at its top atom, whose merged loss then fell 1e-4 short) */
    if (m > 0.0 && m < DBL_MIN)
        *relerr += 4.0 * DBL_TRUE_MIN / m;
    return m > 0.0 ? m : 0.0;
}

/* The merged loss of the bucket between two tail records, rounded down by its error
 * bound (-inf when the bucket is empty); pb, qb: the bucket's P- and Q-masses. */
static double merged_loss(const dpzo__pld_tails *a, const dpzo__pld_tails *b, double *pb,
                          double *qb)
{
    double ep, eq, ex = a->err + b->err;
    *pb = between(a->pg, a->pl, b->pg, b->pl, ex, &ep);
    *qb = between(a->qg, a->ql, b->qg, b->ql, ex, &eq);
    if (*pb == 0.0)
        return -INFINITY;
    /* a Q-mass of 0 is exact only where a tail says nothing lies beyond; else it underflowed
     * (below 2^-1074: randomized response at p = 2^-1074, k = 10 has 4.9e-325 at its top
     * atom) and is at most a few 2^-1074, which bounds the merged loss from below */
    if (*qb == 0.0 && (a->qg == -INFINITY || b->ql == -INFINITY))
        return INFINITY;
    double lp = log(*pb), lq = *qb > 0.0 ? log(*qb) : log(4.0 * DBL_TRUE_MIN);
    /* merging is a post-processing whatever the cell holds: no slack is needed here */
    return lp - lq - 2.0 * (ep + eq) - 4.0 * U * (fabs(lp) + fabs(lq) + 1.0);
}

/* A proven lower end of the support of L under P where one is known to a few ulps, else
 * -inf: a sampled Gaussian's remove pair (log1p(-q), within an ulp or two of log(1 - q)) and
 * a mixture of Gaussians' (already rounded outward). Every outcome then has loss at least
 * this, so every bucket's merged loss does too: the optimistic side's first bucket goes to
 * the first grid point wherever that point lies at or below it, whatever the rounding of
 * the bucket's own merged loss says. The grid offset puts that point at the first bucket's
 * merged loss rounded down by its error bound, below log(1 - q) by ~4u (|l| + 1); a merged
 * loss computed again over the optimistic bucket fell on either side of it, and where it fell
 * below, the first point had nowhere lower to go and the bucket's mass was dropped (the whole
 * 1 - q: sigma 0.01, q 0.004 lost it at grids 0.05, 0.2 and 0.5 and kept it at 0.02, 0.1 and
 * 1; the optimistic composition then held only the sampled outcomes, its window grew to 2^27
 * points and, at the tilt the RDP's order search gives since issue 30, the query was
 * refused; before, it fell back to the RDP bound). */
static double support_floor(const dpzo__pld_source *s)
{
    if (s->pair != DPZO__PLD_REMOVE
        || !(s->base == DPZO__PLD_GAUSSIAN || s->base == DPZO__PLD_TSG || s->base == DPZO__PLD_MOG))
        return -INFINITY;
    double lmin, lmax;
    dpzo__pld_support(s, &lmin, &lmax);
    if (!isfinite(lmin))
        return -INFINITY;
    return s->base == DPZO__PLD_MOG ? lmin : lmin - 2.0 * U * fabs(lmin) - DBL_TRUE_MIN;
}

/* The grid offset. Sampled pairs pile mass up against one end of their bounded support
 * (remove: just above log(1-q); add: just below -log(1-q)). A grid point is put at the
 * merged loss of the d-wide bucket at that end (three fixed-point steps), so the pile is
 * represented almost exactly by both discretisations; Laplace, randomized response and the
 * discrete Laplace mechanism put their upper atom on
 * the grid. Unsampled Gaussian and without-replacement pairs use offset 0. */
static double grid_offset(const dpzo__pld_source *s, double d)
{
    double lmin, lmax, g;
    dpzo__pld_support(s, &lmin, &lmax);
    if (s->pair == DPZO__PLD_WOR || (s->base == DPZO__PLD_GAUSSIAN && s->q == 1.0))
        return 0.0;
    if (s->base == DPZO__PLD_LAPLACE || s->base == DPZO__PLD_RR || s->base == DPZO__PLD_DLAP) {
        g = lmax + 4.0 * U * fabs(lmax); /* the atom at or just below a grid point */
    } else {
        int add = s->pair == DPZO__PLD_ADD;
        double edge = add ? lmax : lmin;
        if (!isfinite(edge))
            return 0.0;
        dpzo__pld_tails a, b;
        double pb, qb;
        dpzo__pld_tails_at(s, add ? edge - d : edge, &a);
        dpzo__pld_tails_at(s, add ? edge : edge + d, &b);
        g = merged_loss(&a, &b, &pb, &qb);
        for (int it = 0; it < 3 && isfinite(g); it++) {
            dpzo__pld_tails_at(s, g - 0.5 * d, &a);
            dpzo__pld_tails_at(s, g + 0.5 * d, &b);
            double g2 = merged_loss(&a, &b, &pb, &qb);
            if (!isfinite(g2) || g2 < lmin || g2 > lmax)
                break;
            g = g2;
        }
    }
    if (!isfinite(g) || fabs(g / d) > 0x1p40)
        return 0.0;
    double f = g / d - floor(g / d);
    return f >= 0.0 && f < 1.0 ? f : 0.0;
}

/* The tails at increasing losses x_0 < ... < x_{m-1} (xs, or the grid points from bot),
 * for the buckets between neighbours. between() reads a bucket's upper tails when the
 * log upper tail at its lower end (P's, and Q's for Q) is below -log 2, else its lower
 * tails: a point is evaluated with the side its bucket below reads for both P and Q, then
 * again in full where its own bucket would read the other side (near the medians; a
 * lower-only point is kept only where log P(L <= l) and log Q(L <= l) are below
 * -log 2 - 1e-3, so that its upper tails, left NaN, are above -log 2 and between() reads
 * the lower ones as it would have). The first and last points, and custom noises, are
 * evaluated in full. The values read are those of full evaluations: the results are the
 * same, with about a third of the logarithms of the tails saved. */
static void tails_run(const dpzo__pld_source *s, const double *xs, long bot, double d, double off,
                      size_t m, dpzo__pld_tails *t)
{
    const int partial = s->base == DPZO__PLD_GAUSSIAN || s->base == DPZO__PLD_LAPLACE;
    for (size_t k = 0; k < m; k++) {
        double x = xs != NULL ? xs[k] : grid_loss(bot + (long)k, d, off);
        if (!partial || k == 0 || k + 1 == m) {
            dpzo__pld_tails_at(s, x, &t[k]);
            continue;
        }
        const dpzo__pld_tails *b = &t[k - 1];
        int up = b->pg < -M_LN2 && b->qg < -M_LN2;
        int lo = !(b->pg < -M_LN2) && !(b->qg < -M_LN2);
        if (!up && !lo) {
            dpzo__pld_tails_at(s, x, &t[k]);
            continue;
        }
        dpzo__pld_tails_part(s, x, up ? 1 : 2, &t[k]);
        int keep = up ? t[k].pg < -M_LN2 && t[k].qg < -M_LN2
                      : t[k].pl < -M_LN2 - 1e-3 && t[k].ql < -M_LN2 - 1e-3;
        if (!keep)
            dpzo__pld_tails_at(s, x, &t[k]);
    }
}

void dpzo__pld_pmf_free(dpzo__pld_pmf *p)
{
    if (p == NULL)
        return;
    free(p->pess);
    free(p->opt);
    memset(p, 0, sizeof *p);
}

/* Adds a bucket's P-mass to the bin of its excess mean displacement (the coupling terms,
 * pld_internal.h: bin j holds excesses in (2^-(j+1) d, 2^-j d], bin 63 those below). */
static void excess_add(double exc_mass[64], double excess, double d, double pb)
{
    /* a bucket's mean displacement is at most d: bin 0 at most */
    exc_mass[(int)dpzo__pld_excess_bin(excess, d, (1.0 + 2.0 * DBL_EPSILON) / d)] += pb;
}

/* The largest excesses are left to the failure probability while their P-mass stays within
 * tau; the rest bound the bias. */
static void excess_finish(const double exc_mass[64], double d, double tau, dpzo__pld_pmf *out)
{
    double bad = 0.0;
    int j = 0;
    while (j < 63 && bad + exc_mass[j] * (1.0 + 1e-9) <= tau) {
        bad += exc_mass[j] * (1.0 + 1e-9);
        j++;
    }
    out->bias = ldexp(d, -j);
    out->bad_mass = bad;
}

/* The optimistic side's bucket boundaries b_k = l_k - d/2 + s_k, k = 0..n (file comment),
 * from the pessimistic masses' slope. */
static void opt_boundaries(const double *p, size_t n, long bot, double d, double off, double *bnd)
{
    enum { CH = 256 };
    double v[CH], kind[CH];
    /* the interior in array loops (pld_fast.c: the ratios' logarithms by vmath.c; any
     * slope gives a valid boundary, its accuracy only decides how often the optimistic
     * split is needed) */
    for (size_t k0 = 1; k0 + 1 < n; k0 += CH) {
        size_t mc = n - 1 - k0 < CH ? n - 1 - k0 : CH;
        dpzo__pld_opt_bnd_interior(p, k0, mc, bot, d, off, bnd, v, kind);
    }
    /* the ends: k = 0, n - 1 (one-sided) and n (no slope) */
    for (size_t k = 0; k <= n; k++) {
        if (k == 1 && n > 2)
            k = n - 1;
        size_t km = k == 0 ? 0 : k - 1, kp = k + 1 < n ? k + 1 : n - 1;
        double slope = 0.0;
        if (kp > km && p[km] > 0.0 && p[kp] > 0.0)
            slope = fabs(log(p[kp]) - log(p[km])) / ((double)(kp - km) * d);
        else if (kp > km)
            slope = 1.0 / d;
        double sh = d * d * (1.0 / 12.0 + slope / 6.0);
        if (sh > 0.25 * d)
            sh = 0.25 * d;
        bnd[k] = grid_loss(bot + (long)k, d, off) - 0.5 * d + sh;
    }
}

/* A bucket or cell k (P-mass pb, lower boundary b_k) whose merged loss fell below l_k: keep at
 * l_k the largest upper part (c, b_k+1] whose merged loss is still >= l_k (bisection on c in
 * [b_k, l_k]; c = l_k qualifies unless rounding says otherwise, and then nothing is kept), the
 * rest goes one point down (its merged loss is >= b_k > l_{k-1}). upper(arg, c, &p): whether
 * the part above c provably merges at or above l_k, and its P-mass p. */
typedef int (*upper_part_fn)(void *arg, double c, double lk, double *p);

static void opt_bisect(double bk, double lk, double pb, size_t k, double *opt, upper_part_fn upper,
                       void *arg)
{
    double clo = bk, chi = lk, pu = 0.0, p;
    if (upper(arg, lk, lk, &p))
        pu = p;
    for (int it = 0; it < 16 && pu > 0.0; it++) {
        double c = 0.5 * (clo + chi);
        if (upper(arg, c, lk, &p)) {
            chi = c;
            pu = p;
        } else {
            clo = c;
        }
    }
    opt[k] += pu;
    if (k > 0)
        opt[k - 1] += pb - pu > 0.0 ? pb - pu : 0.0;
}

/* the scalar way: the tails at c against those at b_k+1 (tk1, in full) */
typedef struct {
    const dpzo__pld_source *s;
    const dpzo__pld_tails *tk1;
} scalar_upper;

static int upper_scalar(void *arg, double c, double lk, double *p)
{
    const scalar_upper *u = arg;
    dpzo__pld_tails tc;
    double q;
    dpzo__pld_tails_at(u->s, c, &tc);
    return merged_loss(&tc, u->tk1, p, &q) >= lk;
}

static void opt_below(const dpzo__pld_source *s, double bk, const dpzo__pld_tails *tk1, double lk,
                      double pb, size_t k, double *opt)
{
    scalar_upper u = {s, tk1};
    opt_bisect(bk, lk, pb, k, opt, upper_scalar, &u);
}

/* The fast path (pld_fast.c): cells evaluated a chunk at a time. */
#define FAST_CHUNK 2048

typedef struct {
    double *x, *pb, *qb, *ep, *eq, *sl, *v, *w;
} fast_ws;

static size_t fast_chunk_points(size_t n) { return (n < FAST_CHUNK ? n : FAST_CHUNK) + 1; }

size_t dpzo__pld_discretize_fixed_bytes(const dpzo__pld_source *s, size_t n)
{
    if (!dpzo__pld_fast_applies(s))
        return 0;
    return fast_chunk_points(n) * (7 + DPZO__PLD_FAST_SCRATCH) * sizeof(double);
}

static int fast_ws_alloc(fast_ws *W, size_t n)
{
    const size_t m = fast_chunk_points(n);
    W->x = malloc(m * (7 + DPZO__PLD_FAST_SCRATCH) * sizeof(double));
    if (W->x == NULL)
        return -1;
    W->pb = W->x + m;
    W->qb = W->pb + m;
    W->ep = W->qb + m;
    W->eq = W->ep + m;
    W->sl = W->eq + m;
    W->v = W->sl + m;
    W->w = W->v + m;
    return 0;
}

/* A cell's merged loss, rounded down by its error bound (pld_fast.c: pb, qb > 0), from its
 * ratio's logarithm lr where the ratio is a normal double, else from two logarithms. */
static double cell_merged(double pb, double qb, double ep, double eq, double lr, double *guard)
{
    double r = pb / qb;
    if (r >= DBL_MIN && r <= DBL_MAX) {
        *guard = dpzo__pld_ratio_guard(lr, ep, eq);
        return lr;
    }
    const double lp = log(pb), lq = log(qb);
    *guard = 2.0 * (ep + eq) + 4.0 * U * (fabs(lp) + fabs(lq) + 1.0);
    return lp - lq;
}

/* The pessimistic masses of a Poisson-sampled Gaussian step from pld_fast.c's cells: cell k
 * holds losses in [l_k - sl_k, l_k+1] (sl_k <= 1e-6 d, else the step is refused: returns
 * -1; sl_k is about 1e-14). It is split by connect-the-dots between l_k - sl_k and l_k+1 (its merged loss raised
 * by its guard), and the lower part raised to l_k. The upper share is taken as
 * pb (1 - e^-frac) / (1 - e^-d), at least (1 - e^-frac) / (1 - e^-w) for the width
 * w = d + sl_k, and its rounding (at most 2 REL + 5u relative) is made up for by raising
 * frac by (2 REL + 5u)(e^w - 1) (d/df log(1 - e^-f) = 1 / (e^f - 1) >= 1 / (e^w - 1)).
 * The excess mean displacement over the exact split of the exact bucket (the coupling
 * terms): 2 guard as in the scalar path, plus sl_k for the raised lower part, plus at most
 * sl_k for the share's denominator and (w^2 - d^2) / 8 <= sl_k d / 4 for the wider split:
 * 2 guard + 2.5 sl_k (d <= 1; the caller's d_eff = (1 + 2.5e-6) d bounds every one). */
static int pess_fast(const dpzo__pld_source *s, long bot, double d, double off, size_t n,
                     double *p, double *pinf, double exc_mass[64], double d_eff, fast_ws *W)
{
    const size_t m = fast_chunk_points(n);
    for (size_t k0 = 0; k0 + 1 < n; k0 += FAST_CHUNK) {
        size_t mc = n - 1 - k0 < FAST_CHUNK ? n - 1 - k0 : FAST_CHUNK;
        dpzo__pld_grid(bot + (long)k0, off, d, mc + 1, W->x);
        double below, above;
        if (dpzo__pld_fast_cells(s, W->x, mc + 1, 1, W->pb, W->qb, W->ep, W->eq, W->sl, &below,
                                 &above, W->w))
            return -1;
        if (k0 == 0)
            p[0] += below; /* P(L <= l_0), raised to l_0 */
        if (k0 + mc + 1 == n)
            *pinf = above;
        if (dpzo__pld_fast_split(W->x, W->pb, W->qb, W->ep, W->eq, W->sl, mc, d, d_eff, p + k0,
                                 exc_mass, W->v, W->w, W->w + m))
            return -1;
    }
    return 0;
}

/* The fast way (pld_fast.c): the cells between the thresholds of b_k, c and b_k+1, computed
 * as in the chunk (the same doubles: vmath.c's results do not depend on the position), so the
 * upper one is part of cell k; a part not within cell k's mass is not kept. */
typedef struct {
    const dpzo__pld_source *s;
    double bk, bk1, pb;
} fast_upper;

static int upper_fast(void *arg, double c, double lk, double *p)
{
    const fast_upper *u = arg;
    double xs[3] = {u->bk, c, u->bk1}, pb[2], qb[2], ep[2], eq[2], w[3 * DPZO__PLD_FAST_SCRATCH];
    if (dpzo__pld_fast_cells(u->s, xs, 3, 0, pb, qb, ep, eq, NULL, NULL, NULL, w) != 0
        || !(pb[1] > 0.0) || pb[1] > u->pb)
        return 0;
    double g, lr = cell_merged(pb[1], qb[1], ep[1], eq[1], log(pb[1] / qb[1]), &g);
    *p = pb[1];
    return lr - g >= lk;
}

static void opt_below_fast(const dpzo__pld_source *s, const double *bnd, size_t k, double lk,
                           double pb, double *opt)
{
    fast_upper u = {s, bnd[k], bnd[k + 1], pb};
    opt_bisect(bnd[k], lk, pb, k, opt, upper_fast, &u);
}

/* The optimistic masses: the cells between the boundaries bnd, merged, each at l_k where
 * its merged loss (rounded down by its error bound) is at least l_k, else opt_below_fast.
 * Returns -1 where pld_fast.c flags a cell (the step is then discretised the scalar way). */
static int opt_fast(const dpzo__pld_source *s, const double *bnd, long bot, double d, double off,
                    size_t n, double *opt, fast_ws *W)
{
    const size_t m = fast_chunk_points(n);
    const double floor0 = support_floor(s);
    for (size_t k0 = 0; k0 < n; k0 += FAST_CHUNK) {
        size_t mc = n - k0 < FAST_CHUNK ? n - k0 : FAST_CHUNK;
        if (dpzo__pld_fast_cells(s, bnd + k0, mc + 1, 0, W->pb, W->qb, W->ep, W->eq, NULL, NULL,
                                 NULL, W->w))
            return -1;
        double *below = W->w, *fix = W->w + m;
        dpzo__pld_grid(bot + (long)k0, off, d, mc, W->x);
        dpzo__pld_fast_merge(W->x, W->pb, W->qb, W->ep, W->eq, mc, opt + k0, below, W->v, fix);
        for (size_t i = 0; i < mc; i++) {
            if (below[i] == 0.0)
                continue;
            if (k0 + i == 0 && W->x[i] <= floor0)
                opt[0] += W->pb[i]; /* at or above the support's floor (support_floor) */
            else
                opt_below_fast(s, bnd, k0 + i, W->x[i], W->pb[i], opt);
        }
    }
    return 0;
}

/* Both sides of a Poisson-sampled Gaussian step by pld_fast.c; -1 where it flags a cell (the
 * caller then clears the arrays and takes the scalar way). */
static int discretize_fast(const dpzo__pld_source *s, long bot, double d, double off, double tau,
                           int want_opt, double *bnd, fast_ws *W, dpzo__pld_pmf *out)
{
    const size_t n = out->n;
    double exc_mass[64] = {0.0};
    const double d_eff = d * (1.0 + 2.5e-6);
    if (n < 2 || pess_fast(s, bot, d, off, n, out->pess, &out->pess_inf, exc_mass, d_eff, W))
        return -1;
    excess_finish(exc_mass, d_eff, tau, out);
    if (want_opt) {
        opt_boundaries(out->pess, n, bot, d, off, bnd);
        if (opt_fast(s, bnd, bot, d, off, n, out->opt, W))
            return -1;
    }
    return 0;
}

/* Tests: 1 routes Poisson-sampled Gaussian steps through pld_fast.c (the default), 0 through
 * the scalar tails. */
static _Atomic int fast_enabled = 1;
_Atomic unsigned long long dpzo__pld_fast_steps;

void dpzo__pld_discretize_fast(int on) { fast_enabled = on != 0; }

dpzo_status dpzo__pld_discretize(dpzo_ctx *ctx, const dpzo__pld_source *s, double d, double tau,
                                 int want_opt, size_t max_points, dpzo__pld_pmf *out)
{
    memset(out, 0, sizeof *out);
    long bot, top;
    if (find_range(s, d, tau, &bot, &top))
        return dpzo__fail(ctx, DPZO_EINVAL, "privacy loss range too wide for grid step %g", d);
    size_t n = (size_t)(top - bot + 1);
    if (n > max_points)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "one step needs %zu grid points (more than the limit %zu)", n,
                          max_points);
    int fast = fast_enabled && dpzo__pld_fast_applies(s);
    fast_ws W = {0};
    dpzo__pld_tails *t = malloc((n + 1) * sizeof *t);
    double *bnd = want_opt ? malloc((n + 1) * sizeof *bnd) : NULL;
    out->pess = calloc(n, sizeof *out->pess);
    out->opt = want_opt ? calloc(n, sizeof *out->opt) : NULL;
    if ((fast && fast_ws_alloc(&W, n) != 0) || t == NULL || out->pess == NULL
        || (want_opt && (out->opt == NULL || bnd == NULL))) {
        free(t);
        free(bnd);
        free(W.x);
        dpzo__pld_pmf_free(out);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory discretising a step (%zu points)", n);
    }
    const double off = grid_offset(s, d);
    out->lo = bot;
    out->off = off;
    out->n = n;
    double *p = out->pess;
    if (fast) {
        int st = discretize_fast(s, bot, d, off, tau, want_opt, bnd, &W, out);
        free(W.x);
        if (st == 0) {
            dpzo__pld_fast_steps++;
            free(bnd);
            free(t);
            return DPZO_OK;
        }
        /* a cell pld_fast.c cannot bound: the scalar way, from the start */
        memset(p, 0, n * sizeof *p);
        if (want_opt)
            memset(out->opt, 0, n * sizeof *out->opt);
        out->pess_inf = out->bias = out->bad_mass = 0.0;
    }
    /* the coupling terms (pld_internal.h): P-mass per binary order of the excess mean
     * displacement over d */
    double exc_mass[64] = {0.0};
    const double inv_norm = 1.0 / -expm1(-d);
    tails_run(s, NULL, bot, d, off, n, t);
    /* slack (custom noises): the cell between l_k and l_k+1 holds losses in
     * [l_k - sl, l_k+1 + sl]. Its connect-the-dots split is taken at those two ends; the
     * lower part is raised to l_k (raising a loss only increases every hockey-stick
     * divergence), the upper part split again between l_k+1 and l_k+2 (or +infinity). */
    const double sl0 = t[0].slack;
    double inf_extra = 0.0;
    if (sl0 > 0.0 && n > 1)
        p[1] += exp(t[0].pl); /* losses up to l_0 + sl: raised to l_1 */
    else if (sl0 > 0.0)
        inf_extra += exp(t[0].pl);
    else
        p[0] = exp(t[0].pl);
    /* the slack may differ from point to point (a mixture of Gaussians' roots): a bucket
     * takes the larger of its two ends' */
    double sl = -1.0, w = d, inv_w = inv_norm, up2 = 0.0;
    for (size_t k = 0; k + 1 < n; k++) {
        const double slk = t[k].slack > t[k + 1].slack ? t[k].slack : t[k + 1].slack;
        if (slk != sl) {
            sl = slk;
            w = d + 2.0 * sl;
            inv_w = sl > 0.0 ? 1.0 / -expm1(-w) : inv_norm;
            up2 = sl > 0.0 ? -expm1(-sl) * inv_norm : 0.0;
        }
        double ep, eq, ex = t[k].err + t[k + 1].err;
        double pb = between(t[k].pg, t[k].pl, t[k + 1].pg, t[k + 1].pl, ex, &ep);
        double qb = between(t[k].qg, t[k].ql, t[k + 1].qg, t[k + 1].ql, ex, &eq);
        if (pb == 0.0)
            continue;
        double hi, excess = d; /* qb == 0: the merged loss is not bounded below */
        if (qb == 0.0) {
            hi = pb;
        } else {
            const double lpb = log(pb), lqb = log(qb);
            double frac = lpb - lqb - (grid_loss(bot + (long)k, d, off) - sl);
            double guard = 2.0 * (ep + eq) + 4.0 * U * (fabs(lpb) + fabs(lqb) + 1.0);
            frac += guard;
            frac = frac < 0.0 ? 0.0 : frac > w ? w : frac;
            /* the guard is raised from a merged loss within `guard` of the true one:
             * frac exceeds it by at most 2 guard (and d), which moves the bucket's
             * mean up by at most that, plus the rounding of hi */
            /* with a slack the split is wider (d + 2 sl: its bias grows by at most sl d / 2),
             * the lower part is raised by at most sl and the share moved one point up
             * below moves the mean by at most sl more */
            excess = 2.0 * guard + 3.0 * sl < d ? 2.0 * guard + 3.0 * sl : d;
            hi = pb * -expm1(-frac) * inv_w;
            if (hi > pb)
                hi = pb;
        }
        excess_add(exc_mass, excess, d, pb);
        p[k] += pb - hi;
        if (sl > 0.0) {
            /* hi sits at l_k+1 + sl: the share (1 - e^-sl)/(1 - e^-d) goes one point up */
            double h2 = hi * up2 * (1.0 + 4.0 * U);
            h2 = h2 > hi ? hi : h2;
            if (k + 2 < n)
                p[k + 2] += h2;
            else
                inf_extra += h2;
            hi -= h2;
        }
        p[k + 1] += hi;
    }
    out->pess_inf = exp_up(t[n - 1].pg, t[n - 1].err) + inf_extra;
    excess_finish(exc_mass, d, tau, out);
    if (want_opt) {
        opt_boundaries(p, n, bot, d, off, bnd);
        tails_run(s, bnd, 0, 0.0, 0.0, n + 1, t);
        const double floor0 = support_floor(s);
        for (size_t k = 0; k < n; k++) {
            double pb, qb;
            double lstar = merged_loss(&t[k], &t[k + 1], &pb, &qb);
            if (pb == 0.0)
                continue;
            double lk = grid_loss(bot + (long)k, d, off);
            if (lstar >= lk || (k == 0 && lk <= floor0)) {
                out->opt[k] += pb;
                continue;
            }
            /* the bisection's buckets may read the other side of b_{k+1}: in full (a custom
             * noise's are: its tails are not asked for twice, they may depend on the
             * order of the calls) */
            if (isnan(t[k + 1].pg) || isnan(t[k + 1].qg) || isnan(t[k + 1].pl)
                || isnan(t[k + 1].ql))
                dpzo__pld_tails_at(s, bnd[k + 1], &t[k + 1]);
            opt_below(s, bnd[k], &t[k + 1], lk, pb, k, out->opt);
        }
    }
    free(bnd);
    free(t);
    return DPZO_OK;
}
