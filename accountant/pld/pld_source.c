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
#include <stdlib.h>
#include "pld_internal.h"

#define U (0.5 * DBL_EPSILON)

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

/* Randomized response and the discrete Laplace mechanism (issue 30): pairs whose privacy
 * loss takes finitely many values, with closed-form masses.
 *
 * Randomized response, k >= 2 buckets, noise p in (0, 1): the output is the true bucket with
 * probability a = 1 - p + p/k, each other bucket with b = p/k. Under replace-one adjacency
 * (x -> x') every pair of inputs gives, up to relabelling, P = (a on x, b on x', b on the
 * k - 2 others), Q = (b on x, a on x', b on the others): the loss is +L on x (P-mass a,
 * Q-mass b), -L on x' (b, a) and 0 on the others ((k-2) b under both), L = log(a/b). The
 * pair is its own mirror image (exchanging P and Q relabels x and x'), so one direction
 * covers both.
 *
 * Discrete Laplace, parameter t > 0, sensitivity s >= 1: P(x) = tanh(t/2) e^(-t|x|) on the
 * integers, Q(x) = P(x - s). The loss t(|x - s| - |x|) is ts for x <= 0, -ts for x >= s and
 * t(s - 2x) between, so {L > l} = {X <= m} with m the largest integer with t(s - 2m) > l,
 * clamped to [0, s - 1] for -ts <= l < ts. With F(n) = P(X <= n) = e^(-t|n|)/(1 + e^-t) for
 * n <= 0 and 1 - F(-n-1) above: P(L > l) = F(m), Q(L > l) = F(m - s), P(L <= l) = F(-m-1),
 * Q(L <= l) = F(s - m - 1). The mirror x -> s - x exchanges P and Q: one direction again.
 *
 * The masses are closed forms evaluated with a few roundings (err bounds their logs); the
 * split of outcomes at a threshold l compares l with computed losses (RR: +-L formed from
 * two logarithms; DLAP: m from (s - l/t)/2), which may put an atom whose true loss lies
 * within `slack` of l on the wrong side: pld_discretize.c widens each bucket by the slack,
 * which keeps the pessimistic side dominating. Every computed set {L > l} is a union of
 * atoms nondecreasing as l falls, so the tails are monotone. */
typedef struct {
    double L, la, lb, l1a, l1b, slack, err;
} rr_consts;

static void rr_setup(const dpzo__pld_source *s, rr_consts *c)
{
    const double p = s->scale, k = (double)s->k, lp = log(p), lk = log(k);
    /* log a, a = 1 - p + p/k: for p >= 1/2, 1 - p is exact (Sterbenz) and a is formed with two
     * roundings (log1p(-p (k - 1)/k) would amplify its argument's rounding by up to k - 1) */
    c->la = p >= 0.5 ? log((1.0 - p) + p / k) : log1p(-p * ((k - 1.0) / k));
    c->lb = lp - lk;                         /* log b */
    c->l1a = lp + log1p(-1.0 / k);           /* log(1 - a) = log((k - 1) b) */
    c->l1b = log1p(-exp(c->lb));             /* log(1 - b) */
    c->L = c->la - c->lb;
    c->err = 8.0 * U * (fabs(lp) + lk + 2.0);
    c->slack = 2.0 * c->err;
}

static double dlap_logF(double t, double l1e, double n)
{
    if (n <= 0.0)
        return t * n - l1e;
    return log1p(-exp(-t * (n + 1.0) - l1e));
}

static void finite_tails(const dpzo__pld_source *s, double l, dpzo__pld_tails *t)
{
    if (s->base == DPZO__PLD_RR) {
        rr_consts c;
        rr_setup(s, &c);
        t->err = c.err;
        if (l >= c.L) {
            t->pg = t->qg = -INFINITY;
            t->pl = t->ql = 0.0;
        } else if (l >= 0.0) {
            t->pg = c.la, t->qg = c.lb, t->pl = c.l1a, t->ql = c.l1b;
        } else if (l >= -c.L) {
            t->pg = c.l1b, t->qg = c.l1a, t->pl = c.lb, t->ql = c.la;
        } else {
            t->pg = t->qg = 0.0;
            t->pl = t->ql = -INFINITY;
        }
        return;
    }
    const double tp = s->scale, sd = (double)s->k, ts = tp * sd;
    const double l1e = log1p(exp(-tp)); /* log(1 + e^-t) */
    t->err = 4.0 * U * (ts + 2.0);
    if (l >= ts) {
        t->pg = t->qg = -INFINITY;
        t->pl = t->ql = 0.0;
        return;
    }
    if (l < -ts) {
        t->pg = t->qg = 0.0;
        t->pl = t->ql = -INFINITY;
        return;
    }
    double m = ceil(0.5 * (sd - l / tp)) - 1.0;
    m = m < 0.0 ? 0.0 : m > sd - 1.0 ? sd - 1.0 : m;
    t->pg = dlap_logF(tp, l1e, m);
    t->qg = dlap_logF(tp, l1e, m - sd);
    t->pl = dlap_logF(tp, l1e, -m - 1.0);
    t->ql = dlap_logF(tp, l1e, sd - m - 1.0);
}

/* The mixture of Gaussians (issue 30; docs/accountant.md 3.8): in units of sigma, N(0, 1)
 * against M = sum_i w_i N(d_i, 1) (d_i >= 0, w_i > 0). The remove pair (P = M, Q = N(0, 1))
 * has the loss L(y) = log sum_i w_i exp(d_i y - d_i^2/2), a log-sum-exp of affine functions:
 * convex, nondecreasing, L' a weighted mean of the d_i, in [d_min, d_max]; strictly
 * increasing (some d_i > 0), from log w_0 (the weight at d_i = 0; -inf without one) to +inf.
 * So {L > l} = {Y > y*}, L(y*) = l, and P(L > l) = sum_i w_i Phibar(y* - d_i),
 * Q(L > l) = Phibar(y*). The add pair (P = N(0, 1), Q = M) has the loss -L:
 * {-L > l} = {Y < y*(-l)}. The root is found by Newton's method from the right (for a convex
 * increasing function every step from the left lands right of the root and the steps from
 * the right fall to it). The cells between computed roots partition the line; an outcome
 * beyond a computed root y_c has a true loss at least L(y_c) >= l - |L_c(y_c) - l| - e_L (e_L
 * bounds the evaluation error of L): that is each point's slack (pld_discretize.c widens
 * the buckets by it). Adjacent thresholds the discretisation asks for lie at least d / 2^17
 * apart in loss, far more than twice the slack (about 1e-15 |l|), so the computed roots are
 * ordered as the thresholds are. */
dpzo__pld_mog *dpzo__pld_mog_new(double sigma, const double *c, const double *p, size_t n)
{
    dpzo__pld_mog *m = calloc(1, sizeof *m);
    double *buf = malloc(3 * (n ? n : 1) * sizeof *buf);
    if (m == NULL || buf == NULL) {
        free(m);
        free(buf);
        return NULL;
    }
    m->d = buf;
    m->lw = buf + n;
    m->hd = buf + 2 * n;
    m->c = c;
    m->p = p;
    m->sigma = sigma;
    double sum = 0.0, w0 = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    const double lsum = log(sum);
    m->dmin = INFINITY;
    m->dmax = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i] > 0.0))
            continue;
        if (c[i] == 0.0) {
            w0 += p[i];
            continue;
        }
        m->d[k] = c[i] / sigma;
        m->lw[k] = log(p[i]) - lsum;
        m->hd[k] = 0.5 * m->d[k] * m->d[k];
        m->dmin = m->d[k] < m->dmin ? m->d[k] : m->dmin;
        m->dmax = m->d[k] > m->dmax ? m->d[k] : m->dmax;
        k++;
    }
    /* the components at d = 0 as one: a constant term of L */
    m->lw0 = w0 > 0.0 ? log(w0) - lsum : -INFINITY;
    if (w0 > 0.0) {
        m->d[k] = 0.0;
        m->lw[k] = m->lw0;
        m->hd[k] = 0.0;
        m->dmin = 0.0;
        k++;
    }
    m->n = k;
    /* the sum of p (n <= 1024 terms) and the logs: a few n u in each log w_i */
    m->err = 4.0 * U * (fabs(lsum) + 2.0) + 2.0 * (double)n * U;
    return m;
}

void dpzo__pld_mog_free(dpzo__pld_mog *m)
{
    if (m == NULL)
        return;
    free(m->d);
    free(m);
}

int dpzo__pld_mog_cmp(const dpzo__pld_mog *a, const dpzo__pld_mog *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (a->sigma != b->sigma)
        return a->sigma < b->sigma ? -1 : 1;
    for (size_t i = 0; i < a->n; i++) {
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i] ? -1 : 1;
        if (a->lw[i] != b->lw[i])
            return a->lw[i] < b->lw[i] ? -1 : 1;
    }
    return 0;
}

/* L(y), L'(y) and a bound on the error of the computed L. The log-sum-exp moves with each
 * term's error weighted by the term's share: a term's rounding (4u times its magnitude) counts
 * in proportion to e^(a_i - L), so a term of -5e150 beside one of -0.7 adds nothing (taking the
 * largest magnitude instead made the bound 1e135 at y = -1e150). */
static double mog_loss(const dpzo__pld_mog *m, double y, double *slope, double *err)
{
    double mx = -INFINITY;
    for (size_t i = 0; i < m->n; i++) {
        double a = m->lw[i] + (m->d[i] * y - m->hd[i]);
        mx = a > mx ? a : mx;
    }
    double s = 0.0, sd = 0.0, sm = 0.0;
    for (size_t i = 0; i < m->n; i++) {
        double e = exp(m->lw[i] + (m->d[i] * y - m->hd[i]) - mx);
        s += e;
        sd += e * m->d[i];
        sm += e * (fabs(m->lw[i]) + fabs(m->d[i] * y) + m->hd[i] + 1.0);
    }
    *slope = sd / s;
    double L = mx + log(s);
    *err = 4.0 * U * (1.01 * sm / s + fabs(L) + log((double)m->n) + 3.0) + m->err;
    return L;
}

/* y with L(y) = l (l above the infimum of L), and that point's slack */
static _Thread_local const dpzo__pld_mog *mog_last_key;
static _Thread_local double mog_last_y;

/* The root is sought in [-MOG_Y, MOG_Y]: a root beyond (a component of sensitivity 1e-300
 * makes L almost flat) is left at the bound, where the outcomes it would misassign, beyond
 * MOG_Y - d_max, have a mass below e^(-1e299) under both P and Q, no double: they count
 * for nothing, and the point's slack is the evaluation error alone. MOG_Y keeps d_i y finite
 * (d_i <= 1e6, flatten() in pld.c). */
#define MOG_Y 1e150

static double mog_root(const dpzo__pld_mog *m, double l, double *slack)
{
    double y = mog_last_key == m && fabs(mog_last_y) < MOG_Y ? mog_last_y : 0.0, g, e;
    double f = mog_loss(m, y, &g, &e) - l;
    /* A Newton step from the left of the root lands right of it (L is convex; where the
     * slope underflows, the step is at least the distance at slope d_max); from the right the
     * steps fall monotonically to it. */
    for (int it = 0; it < 400 && fabs(f) > e; it++) {
        double y2;
        if (f < 0.0) {
            if (y >= MOG_Y)
                break;
            double step = g > 0.0 ? -f / g : INFINITY;
            double least = -f / m->dmax;
            if (!(step < 1e300) || step < least)
                step = least > 1.0 ? least : 1.0 + fabs(y);
            y2 = y + step < MOG_Y ? y + step : MOG_Y;
            if (y2 == y) /* the step is lost in y's rounding (far left, L almost flat) */
                y2 = y < 0.0 ? 0.0 : (2.0 * y < MOG_Y ? 2.0 * y : MOG_Y);
        } else {
            if (y <= -MOG_Y)
                break;
            double step = f / g;
            if (!(step > 4.0 * U * fabs(y)) || !isfinite(step))
                step = 1.0 + fabs(y); /* the slope underflowed: far left of the flat part */
            y2 = y - step > -MOG_Y ? y - step : -MOG_Y;
            if (y2 == y)
                break;
        }
        double g2, e2, f2 = mog_loss(m, y2, &g2, &e2) - l;
        if (isnan(f2) || (f > 0.0 && f2 < 0.0 && !(fabs(f2) < fabs(f))))
            break; /* rounding noise at the root */
        y = y2, f = f2, g = g2, e = e2;
    }
    mog_last_key = m;
    mog_last_y = y;
    const int beyond = (y <= -MOG_Y && f > 0.0) || (y >= MOG_Y && f < 0.0);
    *slack = (beyond ? 0.0 : fabs(f)) + e;
    return y;
}

/* log sum_i w_i Phibar(y - d_i) (*hi) and log sum_i w_i Phi(y - d_i) (*lo), one erfc a
 * component, and a bound on the error of each log (into *err, the larger kept) */
static double lse_err(const double *a, const double *x, size_t n, double extra, double *r)
{
    double mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        mx = a[i] > mx ? a[i] : mx;
    if (mx == -INFINITY) {
        *r = mx;
        return 0.0;
    }
    /* each term's rounding weighted by its share, as in mog_loss */
    double sum = 0.0, sm = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = exp(a[i] - mx);
        sum += e;
        sm += isfinite(a[i]) ? e * (fabs(a[i]) + 1.0 + x[i]) : 0.0;
    }
    *r = mx + log(sum);
    return 4.0 * U * (1.01 * sm / sum + fabs(*r) + log((double)n) + 3.0) + extra;
}

static void mog_tail(const dpzo__pld_mog *m, double y, double *hi, double *lo, double *err)
{
    double ah[DPZO_MOG_MAX_COMPONENTS], al[DPZO_MOG_MAX_COMPONENTS], xd[DPZO_MOG_MAX_COMPONENTS];
    for (size_t i = 0; i < m->n; i++) {
        double lg, ll, z = y - m->d[i];
        gauss_tails(z, 3, &lg, &ll);
        ah[i] = m->lw[i] + lg;
        al[i] = m->lw[i] + ll;
        /* d_i = c_i / sigma is rounded (by u d_i): the component's own boundary moves by that,
         * and |d log Phibar(z) / dz|, |d log Phi(z) / dz| <= |z| + 1 */
        xd[i] = 0.26 * m->d[i] * (fabs(z) + 1.0);
    }
    /* the argument y - d_i also carries the root's rounding, which the slack covers (it moves
     * the cells' common boundary, not a mass); the log-sum-exp its own */
    double e1 = lse_err(ah, xd, m->n, m->err, hi), e2 = lse_err(al, xd, m->n, m->err, lo);
    e1 = e1 > e2 ? e1 : e2;
    *err = e1 > *err ? e1 : *err;
}

static void mog_tails(const dpzo__pld_source *s, double l, dpzo__pld_tails *t)
{
    const dpzo__pld_mog *m = s->mog;
    const int add = s->pair == DPZO__PLD_ADD;
    const double target = add ? -l : l; /* the remove loss at the boundary */
    t->err = 0.0;
    t->slack = 0.0;
    /* at or below the infimum of L every outcome has L > target (remove) */
    if (!(target > m->lw0) || target == INFINITY || isnan(target)) {
        int all = !(target > m->lw0); /* remove: {L > l} is everything */
        double hi = all ? 0.0 : -INFINITY, lo = all ? -INFINITY : 0.0;
        if (add) { /* {-L > l} = {L < target}: nothing when target <= inf L */
            double x = hi;
            hi = lo, lo = x;
        }
        t->pg = t->qg = hi;
        t->pl = t->ql = lo;
        return;
    }
    double slack;
    double y = mog_root(m, target, &slack);
    t->slack = slack;
    double qhi, qlo;
    gauss_tails(y, 3, &qhi, &qlo);
    double mhi, mlo;
    mog_tail(m, y, &mhi, &mlo, &t->err);
    if (!add) { /* {L > l} = {Y > y} */
        t->pg = mhi, t->qg = qhi, t->pl = mlo, t->ql = qlo;
    } else {    /* {-L > l} = {Y < y}: P = N(0, 1), Q = M */
        t->pg = qlo, t->qg = mlo, t->pl = qhi, t->ql = mhi;
    }
}

/* The truncated sampled Gaussian (issue 30; docs/accountant.md 3.8). Reveal, beside the
 * output, whether the others' sample (m of them, the same law under both neighbours) reached
 * the cap B: given m < B the pair is the Poisson-sampled Gaussian (q, sigma); given m >= B it
 * is a mixture, over a coupling of the cut, of Poisson-sampled Gaussian pairs of rate
 * q_m <= q_max = qB/(B + 1) and shift at most 2, each a post-processing of the pair
 * (q_max, sigma / 2) (Gaussian experiments are ordered by the shift, sampled ones by the
 * rate). So the step is dominated by the pair that reveals a coin I, P(I = 2) = t = P(m >= B):
 * (q, sigma) if I = 1, (q_max, sigma / 2) if I = 2. t is known within [t_lo, t_up]: the
 * weight t_up - t_lo goes to (q, sigma / 2), which dominates both (a post-processing of it
 * turns it into either), so the pair with weights 1 - t_up, t_lo, t_up - t_lo dominates the
 * one at t. Its tails at every threshold are the weighted sums of the three pairs'. */
static void tsg_tails(const dpzo__pld_source *s, double l, int part, dpzo__pld_tails *t)
{
    dpzo__pld_source c[3] = {*s, *s, *s};
    const double w[3] = {1.0 - s->w2, s->w_lo, s->w2 - s->w_lo};
    for (int i = 0; i < 3; i++)
        c[i].base = DPZO__PLD_GAUSSIAN;
    c[1].scale = c[2].scale = 0.5 * s->scale; /* exact */
    c[1].q = s->q2;
    double acc[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, err = 0.0;
    for (int i = 0; i < 3; i++) {
        if (!(w[i] > 0.0))
            continue;
        dpzo__pld_tails ti;
        dpzo__pld_tails_part(&c[i], l, part, &ti);
        /* 1 - t_up and t_up - t_lo are formed exactly when t_up >= 1/2 (Sterbenz) and else
         * within half an ulp: log1p(-t_up) and the logs below carry it */
        const double lw = i == 0 ? log1p(-s->w2) : log(w[i]);
        acc[0] = dpzo__log_add(acc[0], lw + ti.pg);
        acc[1] = dpzo__log_add(acc[1], lw + ti.qg);
        acc[2] = dpzo__log_add(acc[2], lw + ti.pl);
        acc[3] = dpzo__log_add(acc[3], lw + ti.ql);
        double e = ti.err + 4.0 * U * (fabs(lw) + 2.0);
        err = e > err ? e : err;
    }
    t->pg = part & 1 ? acc[0] : NAN;
    t->qg = part & 1 ? acc[1] : NAN;
    t->pl = part & 2 ? acc[2] : NAN;
    t->ql = part & 2 ? acc[3] : NAN;
    t->err = err + 4.0 * U * 3.0;
    t->slack = 0.0;
}

double dpzo__pld_slack(const dpzo__pld_source *s)
{
    if (s->base == DPZO__PLD_CUSTOM)
        return s->noise->loss_slack;
    if (s->base == DPZO__PLD_RR) {
        rr_consts c;
        rr_setup(s, &c);
        return c.slack;
    }
    if (s->base == DPZO__PLD_DLAP) /* t|v - v*| <= U(|l| + 2ts) for v = fl(s - fl(l/t)) */
        return 8.0 * U * (s->scale * (double)s->k) + DBL_MIN;
    if (s->base == DPZO__PLD_MOG) /* per point (mog_tails); positive: the buckets widen */
        return DBL_MIN;
    return 0.0;
}

void dpzo__pld_tails_at(const dpzo__pld_source *s, double l, dpzo__pld_tails *t)
{
    dpzo__pld_tails_part(s, l, 3, t);
}

void dpzo__pld_tails_part(const dpzo__pld_source *s, double l, int part, dpzo__pld_tails *t)
{
    /* L is a nondecreasing function of r with slope at most 1 (g' = q e^r / (1 - q + q e^r)
     * <= 1), so a misassignment by at most loss_slack in r is one by at most that in L */
    t->slack = dpzo__pld_slack(s);
    if (s->base == DPZO__PLD_RR || s->base == DPZO__PLD_DLAP) {
        finite_tails(s, l, t);
        return;
    }
    if (s->base == DPZO__PLD_MOG) {
        mog_tails(s, l, t);
        return;
    }
    if (s->base == DPZO__PLD_TSG) {
        tsg_tails(s, l, part, t);
        return;
    }
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
    if (s->base == DPZO__PLD_TSG) { /* both components share the edges of rate q */
        dpzo__pld_source a = *s;
        a.base = DPZO__PLD_GAUSSIAN;
        dpzo__pld_support(&a, lmin, lmax);
        return;
    }
    if (s->base == DPZO__PLD_MOG) {
        /* remove: (log w_0, inf), rounded outward; add: its mirror */
        double lo = s->mog->lw0;
        if (isfinite(lo))
            lo -= 4.0 * U * (fabs(lo) + 1.0) + s->mog->err;
        *lmin = s->pair == DPZO__PLD_ADD ? -INFINITY : lo;
        *lmax = s->pair == DPZO__PLD_ADD ? -lo : INFINITY;
        return;
    }
    if (s->base == DPZO__PLD_RR || s->base == DPZO__PLD_DLAP) {
        /* the largest computed loss, widened by the slack: the grid must cover the true one */
        double top;
        if (s->base == DPZO__PLD_RR) {
            rr_consts c;
            rr_setup(s, &c);
            top = c.L + c.slack;
        } else {
            top = s->scale * (double)s->k * (1.0 + 2.0 * U) + dpzo__pld_slack(s);
        }
        *lmin = -top;
        *lmax = top;
        return;
    }
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
