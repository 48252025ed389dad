/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_source.c: tail probabilities of the privacy loss of one step.
 *
 * Every pair is built from P0 = noise and P1 = noise + 1 (sensitivity 1), whose
 * log-likelihood ratio r(x) = log p1(x)/p0(x) is nondecreasing in the output x:
 *   Gaussian(sigma): r = (2x - 1) / (2 sigma^2);
 *   Laplace(b):      r = (|x| - |x - 1|) / b in [-1/b, 1/b] (atoms at both ends).
 * Poisson sampling with rate q maps r to L = g(r) = log(1 - q + q e^r) (remove) or
 * L = -g(r) (add), both monotone, so {L > l} is a half-line in x and its P- and
 * Q-probabilities are mixtures of the noise's tails, evaluated in log space.
 *
 * A custom noise (dpzo_pld_noise) reports the tails of r under P0 and P1 itself; the
 * sampled pairs are built from them exactly as for the built-in noises. It also reports
 * an error bound on its logs and a slack on its cell boundaries (pld_discretize.c widens
 * the buckets by it). The WOR argument below uses only the symmetry of the noise
 * (P1 reflected about 1/2 is P0, so r(1 - x) = -r(x)), which a custom noise must have.
 *
 * Sampling without replacement (batch B of n, gamma = B/n, replace-one adjacency).
 * For eps >= 0, Balle, Barthe and Gaboardi (NeurIPS 2018, advanced joint convexity,
 * Thm 10) bound the sampled mechanism's hockey-stick divergence by
 * gamma * H_{e^eps'}(P1 || P0) with 1 + (e^eps - 1)/gamma = e^eps', which is exactly the
 * divergence of the pair A = ((1-gamma) P0 + gamma P1, P0) at e^eps. Replace-one
 * adjacency is symmetric, so for eps < 0 the mechanism's divergence is at most
 * 1 - e^eps (1 - delta(-eps)). The loss distribution omega with omega = omega_A on
 * (0, inf), omega(-l) = e^-l omega_A(l) on (-inf, 0) and the remaining mass at 0
 * (1 - P_A(L > 0) - Q_A(L > 0) >= 0: Q_A(L > 0) = P0(r > 0), and both P0(r <= 0) and
 * P1(r <= 0) = P0(r >= 0) are at least P0(r > 0) for a symmetric noise, since
 * P0(r > 0) <= P1(r > 0) = P0(r < 0); for the Gaussian, with t = 1/(2 sigma),
 * Q_A(L > 0) = Phi(-t) and P_A(L <= 0) = (1-gamma) Phi(t) + gamma Phi(-t) >= Phi(-t)) is the loss distribution of a symmetric pair (e^-l integrates to 1), its divergence
 * equals A's for eps >= 0 and the symmetric extension for eps < 0: it dominates the
 * mechanism at every eps, so it may be composed. On l < 0 its tails are A's with P and
 * Q exchanged: P(L <= l) = Q_A(L_A >= -l), Q(L <= l) = P_A(L_A >= -l). */
#include <float.h>
#include <math.h>
#include "pld_internal.h"

/* log(Phi(-z)) = log P(N(0,1) > z), accurate for all z. */
static double log_phibar(double z)
{
    if (z < -5.0)
        return log1p(-0.5 * erfc(-z * M_SQRT1_2));
    if (z < 37.0)
        return log(0.5 * erfc(z * M_SQRT1_2));
    /* Mills ratio: Phibar(z) = phi(z)/z (1 - 1/z^2 + 3/z^4 - 15/z^6 + 105/z^8 - 945/z^10
     * + 10395/z^12 - ...), the truncation error is below the next term, 135135/z^14
     * < 2e-17 relative at z >= 37: within the rounding model (the three terms the series
     * had before left 3e-11, an unaccounted underestimate of the tail) */
    double z2 = z * z, w = 1.0 / z2;
    double s = 1.0 + w * (-1.0 + w * (3.0 + w * (-15.0 + w * (105.0 + w * (-945.0 + w * 10395.0)))));
    return -0.5 * z2 - log(z) - 0.5 * log(2.0 * M_PI) + log(s);
}

/* log P(Z > t) (want & 1), log P(Z <= t) (want & 2) for a standard normal Z (t = +-inf
 * included); a tail not wanted may be NaN */
static void gauss_tails(double t, int want, double *lg, double *ll)
{
    /* one erfc for both tails: the small one directly, the other as log1p of it */
    double a = fabs(t), small, large;
    if (a < 37.0) {
        double e = 0.5 * erfc(a * M_SQRT1_2);
        small = want & (t >= 0.0 ? 1 : 2) ? log(e) : NAN;
        large = want & (t >= 0.0 ? 2 : 1) ? log1p(-e) : NAN;
    } else {
        small = log_phibar(a);
        large = -exp(small); /* log1p(-x) = -x to double precision for x < 1e-300 */
    }
    *lg = t >= 0.0 ? small : large;
    *ll = t >= 0.0 ? large : small;
}

/* log P(X > x), log P(X <= x) for X = noise + mu. */
static void noise_tails(dpzo__pld_base base, double scale, double mu, double x, double *lg,
                        double *ll)
{
    if (x == -INFINITY) {
        *lg = 0.0;
        *ll = -INFINITY;
        return;
    }
    if (x == INFINITY) {
        *lg = -INFINITY;
        *ll = 0.0;
        return;
    }
    double t = (x - mu) / scale;
    if (base == DPZO__PLD_GAUSSIAN) {
        gauss_tails(t, 3, lg, ll);
    } else if (t >= 0.0) {
        *lg = -M_LN2 - t;
        *ll = log1p(-0.5 * exp(-t));
    } else {
        *lg = log1p(-0.5 * exp(t));
        *ll = -M_LN2 + t;
    }
}

/* The threshold x with {r(X) > rs} = {X > x} (also {r(X) <= rs} = {X <= x} up to
 * null sets for continuous noise). */
static double threshold(const dpzo__pld_source *s, double rs)
{
    if (rs == -INFINITY)
        return -INFINITY;
    if (rs == INFINITY)
        return INFINITY;
    if (s->base == DPZO__PLD_GAUSSIAN)
        return s->scale * s->scale * rs + 0.5;
    double b = s->scale;
    if (rs < -1.0 / b)
        return -INFINITY;
    if (rs >= 1.0 / b)
        return INFINITY;
    return 0.5 * (b * rs + 1.0);
}

/* The threshold x with {r(X) < rs} = {X < x}. */
static double threshold_lt(const dpzo__pld_source *s, double rs)
{
    if (s->base == DPZO__PLD_GAUSSIAN || rs == -INFINITY || rs == INFINITY)
        return threshold(s, rs);
    double b = s->scale;
    if (rs <= -1.0 / b)
        return -INFINITY;
    if (rs > 1.0 / b)
        return INFINITY;
    return 0.5 * (b * rs + 1.0);
}

/* log q and log(1 - q), kept for the last q this thread asked for: the tails are evaluated
 * at every grid point of a step with the same q (the same values as computing them anew,
 * five fewer logarithms an evaluation) */
static _Thread_local double memo_q = -1.0, memo_lq, memo_l1q;

static double log_q(double q)
{
    if (q != memo_q) {
        memo_lq = log(q);
        memo_l1q = log1p(-q);
        memo_q = q;
    }
    return memo_lq;
}

static double log1m_q(double q)
{
    log_q(q);
    return memo_l1q;
}

/* g^{-1}(l) = log((e^l - 1 + q)/q); -inf at or below log(1 - q). */
static double ginv(double q, double l)
{
    if (q == 1.0)
        return l;
    if (l <= log1m_q(q))
        return -INFINITY;
    /* e^l overflows above l = 709.78: there log(e^l - 1 + q) = l + log1p(-(1 - q) e^-l),
     * computed without forming e^l (a loss beyond the double range of e^l is no different) */
    if (l > 1.0)
        return l + log1p(-(1.0 - q) * exp(-l)) - log_q(q);
    return log(expm1(l) + q) - log_q(q);
}

static double mix(double q, double a0, double a1)
{
    return q == 1.0 ? a1 : dpzo__log_add(log1m_q(q) + a0, log_q(q) + a1);
}

/* g[j] = log P_j(r > rs), l[j] = log P_j(r <= rs) (lt = 0), or of r < rs and r >= rs
 * (lt = 1); *err: the custom noise's error bound on these logs (0 for built-ins).
 * want & 1: g wanted, want & 2: l wanted (the Gaussian may leave the other NaN). */
static void r_tails(const dpzo__pld_source *s, double rs, int lt, int want, double g[2],
                    double l[2], double *err)
{
    *err = 0.0;
    if (s->base == DPZO__PLD_CUSTOM) {
        if (rs == -INFINITY || rs == INFINITY) {
            g[0] = g[1] = rs < 0.0 ? 0.0 : -INFINITY;
            l[0] = l[1] = rs < 0.0 ? -INFINITY : 0.0;
            return;
        }
        /* r has no atoms: {r < rs} and {r <= rs} have the same probabilities */
        s->noise->tails(s->noise->data, rs, g, l, err);
        return;
    }
    if (s->base == DPZO__PLD_GAUSSIAN && isfinite(rs)) {
        /* (x - mu) / sigma with x = sigma^2 rs + 1/2, formed without sigma^2 (which
         * overflows for sigma > 1e154 and underflows below 1e-154): sigma rs + (1/2 - mu)
         * / sigma. The two terms cannot be infinite with opposite signs for finite rs. */
        double a = s->scale * rs, b = 0.5 / s->scale;
        gauss_tails(a + b, want, &g[0], &l[0]);
        gauss_tails(a - b, want, &g[1], &l[1]);
        return;
    }
    double x = lt ? threshold_lt(s, rs) : threshold(s, rs);
    noise_tails(s->base, s->scale, 0.0, x, &g[0], &l[0]);
    noise_tails(s->base, s->scale, 1.0, x, &g[1], &l[1]);
}

/* part & 1: the upper tails (pg, qg), part & 2: the lower ones (pl, ql); the others NaN */
static void remove_tails(const dpzo__pld_source *s, double q, double l, int part,
                         dpzo__pld_tails *t)
{
    double g[2], ll[2];
    r_tails(s, ginv(q, l), 0, part, g, ll, &t->err);
    t->pg = part & 1 ? mix(q, g[0], g[1]) : NAN;
    t->pl = part & 2 ? mix(q, ll[0], ll[1]) : NAN;
    t->qg = part & 1 ? g[0] : NAN;
    t->ql = part & 2 ? ll[0] : NAN;
}

void dpzo__pld_tails_at(const dpzo__pld_source *s, double l, dpzo__pld_tails *t)
{
    dpzo__pld_tails_part(s, l, 3, t);
}

void dpzo__pld_tails_part(const dpzo__pld_source *s, double l, int part, dpzo__pld_tails *t)
{
    /* L is a nondecreasing function of r with slope at most 1 (g' = q e^r / (1 - q + q e^r)
     * <= 1), so a misassignment by at most loss_slack in r is one by at most that in L */
    t->slack = s->base == DPZO__PLD_CUSTOM ? s->noise->loss_slack : 0.0;
    const int swap = (part & 1) << 1 | (part & 2) >> 1; /* upper <-> lower */
    if (s->pair == DPZO__PLD_REMOVE) {
        remove_tails(s, s->q, l, part, t);
    } else if (s->pair == DPZO__PLD_ADD) {
        /* {L > l} = {g(r) < -l} = {X < x}: P = P0, Q = mixture */
        double g[2], ll[2];
        r_tails(s, ginv(s->q, -l), 1, swap, g, ll, &t->err);
        t->pg = part & 1 ? ll[0] : NAN;
        t->pl = part & 2 ? g[0] : NAN;
        t->qg = part & 1 ? mix(s->q, ll[0], ll[1]) : NAN;
        t->ql = part & 2 ? mix(s->q, g[0], g[1]) : NAN;
    } else if (l >= 0.0) {
        remove_tails(s, s->q, l, part, t);
    } else {
        dpzo__pld_tails a;
        remove_tails(s, s->q, -l, swap, &a);
        t->err = a.err;
        t->pl = a.qg;
        t->pg = a.ql;
        t->ql = a.pg;
        t->qg = a.pl;
    }
}

void dpzo__pld_support(const dpzo__pld_source *s, double *lmin, double *lmax)
{
    double q = s->q;
    double g_lo = q == 1.0 ? -INFINITY : log1p(-q), g_hi = INFINITY;
    if (s->base == DPZO__PLD_LAPLACE || s->base == DPZO__PLD_CUSTOM) {
        double lo = -1.0 / s->scale, hi = 1.0 / s->scale;
        if (s->base == DPZO__PLD_CUSTOM)
            lo = s->noise->r_min, hi = s->noise->r_max;
        /* rounded outward: the grid must cover the support */
        g_lo = q == 1.0 ? lo : log1p(-q + q * exp(lo));
        /* log(1 - q + q e^hi), without forming e^hi where it would overflow */
        g_hi = q == 1.0 ? hi : hi > 1.0 ? hi + log(q + (1.0 - q) * exp(-hi)) : log1p(q * expm1(hi));
        if (s->base == DPZO__PLD_CUSTOM) {
            g_lo = isfinite(g_lo) ? g_lo - 4.0 * DBL_EPSILON * (fabs(g_lo) + 1.0) : g_lo;
            g_hi = isfinite(g_hi) ? g_hi + 4.0 * DBL_EPSILON * (fabs(g_hi) + 1.0) : g_hi;
        }
    }
    switch (s->pair) {
    case DPZO__PLD_REMOVE:
        *lmin = g_lo;
        *lmax = g_hi;
        break;
    case DPZO__PLD_ADD:
        *lmin = -g_hi;
        *lmax = -g_lo;
        break;
    default:
        *lmin = -g_hi;
        *lmax = g_hi;
        break;
    }
}
