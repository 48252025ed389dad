/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_pld.c: the privacy loss distribution of the LMO mechanism, for the PLD
 * accountant (dpzo_pld_noise_epsilon in accountant/pld/pld.c).
 *
 * The pair is P0 = X, P1 = X + c (c the sensitivity) with r(x) = log p(x - c) - log p(x).
 * log p(u) = phi(|u|) with phi convex and decreasing on [0, inf) (p is a mixture of
 * exponentials in |u|, so log-convex there). Hence, with E = phi(0) - phi(c) and
 * ymin = ess inf Y (phi'(u) -> -ymin):
 *   on (-inf, 0]: r(x) = phi(u + c) - phi(u), u = -x, is nonincreasing in x, from
 *                 -c ymin (x -> -inf) down to -E;
 *   on [0, c]:    r(x) = phi(c - x) - phi(x) increases from -E to E;
 *   on [c, inf):  r decreases from E to c ymin;
 * and r(c - x) = -r(x). So {r > s} = (-inf, y1) u (y2, y3) with y1 <= 0 <= y2 <= c <= y3,
 * one root per monotone piece, and its P0- and P1-probabilities come from the CDF of X
 * (P(X > x) = M_Y(-x) / 2 for x >= 0).
 *
 * Roots are bracketed by a safeguarded regula falsi (Illinois) on each piece (the
 * unbounded pieces parametrised by x = -expm1(t), x = c + expm1(t), t in [0, t_end])
 * until the computed r differs by at most 1e-12 across the bracket. With r evaluated to
 * within e(x), an outcome assigned to {r > s} has true r > s - slack_root and one
 * assigned to {r <= s} has true r <= s + slack_root, slack_root = |r~(xa) - r~(xb)| +
 * 2 (e(xa) + e(xb)); the accountant widens every loss bucket by LOSS_SLACK (1e-8), and a
 * root whose slack exceeds it is reported (the query fails).
 *
 * The unbounded pieces end at t_end, where P(X > expm1(t_end)) < e^-8000 (piece_end), or
 * at TMAX for tails that never get that small. Up to this version they always ran to TMAX
 * (|x| ~ 1e307) and a large slack was excused wherever the density at the bracket was below
 * e^-8000. That was wrong: past |x| = 2^53 c the computed x - c is a neighbour of x, r~
 * jumps between values like 0 and -2 c ymin, and a warm-started bracket could settle on
 * such a jump (say at x = -1.2e16 for s = -0.588) instead of the true root (near x = -2):
 * the excuse then covered the misassignment of every outcome in between, which carry most
 * of the mass. The pessimistic distribution stopped dominating (its hockey-stick curve fell
 * below the exact one at negative epsilons, checked against mpmath) and the intervals of
 * different grids disagreed (docs/lmo.md, PLD).
 *
 * Error model (docs/lmo.md, "PLD"): every log value v computed in double (log density,
 * log tail) is taken to be within 512 u (2 + |v| + |log p(0)|) of the exact value at the
 * exact argument (u = 2^-53), which covers the few roundings of log_mgf/dlog_mgf with
 * exp/log/log1p/expm1 accurate to a few ulps (the same assumption as the exact RDP
 * enclosure) and the rounding of x - c (phi convex: |phi'(u)| u <= 2 (phi(u/2) - phi(u))).
 * Differences of tails carry their cancellation factor. Only outcomes beyond t_end, whose
 * P0- and P1-masses are both below e^-8000, may be misassigned by more than the slack;
 * changing the pair there moves each step by a total variation below e^-7000, which
 * changes the composed delta by at most K e^-7000 (1 + e^eps), far below the smallest
 * positive double for eps <= 6000. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/lmo.h"
#include "dpzo/pld.h"
#include "lmo_internal.h"
#include "internal.h"

#define U DBL_EPSILON
#define LOSS_SLACK 1e-8
#define R_TOL 1e-12
#define TMAX 709.0
#define NEGLIGIBLE_LOG_TAIL (-8000.0)
#define LMO_PLD_MAX_POINTS 1e6 /* grid points a step (about 20 s of root finding) */

typedef struct {
    dpzo_lmo lmo;
    double c;          /* the shift */
    double lp0;        /* log p(0) */
    double E;          /* r~(c) = log p(0) - log p(c) */
    double r_lo_inf;   /* r(-inf) = -c ymin */
    atomic_int bad;    /* a root whose slack exceeded LOSS_SLACK where it matters */
    unsigned long id;  /* this query (for the warm start) */
    double t_end;      /* where the unbounded pieces stop (TMAX, or earlier when the tails
                          beyond are negligible) */
    int negligible;    /* the tails beyond t_end are below e^NEGLIGIBLE_LOG_TAIL */
    struct lmo_pt {
        double t, r, e;
    } end[3][2];       /* each piece's ends, t = 0 and t = t1 */
} lmo_pld;

static double err_of(const lmo_pld *d, double v)
{
    return isfinite(v) ? 512.0 * U * (2.0 + fabs(v) + fabs(d->lp0)) : INFINITY;
}

/* r~(x) and its error bound */
static double r_at(const lmo_pld *d, double x, double *e)
{
    double a = dpzo_lmo_log_pdf(&d->lmo, x - d->c), b = dpzo_lmo_log_pdf(&d->lmo, x);
    *e = err_of(d, a) + err_of(d, b);
    return a - b;
}

/* piece 0: x = -expm1(t); 1: x = t; 2: x = c + expm1(t) */
static double x_of(const lmo_pld *d, int piece, double t)
{
    return piece == 0 ? -expm1(t) : piece == 1 ? t : d->c + expm1(t);
}

/* Marks the query bad when an assignment's slack exceeds LOSS_SLACK. (No exemption for a
 * small density at the bracket: where r~ is that far off, the misassigned outcomes reach
 * to the true root, wherever it lies; only the tails beyond t_end may be given up, in
 * root().) */
static void check_slack(lmo_pld *d, double slack)
{
    if (!(slack <= LOSS_SLACK))
        atomic_store(&d->bad, 1);
}

/* An upper bound on log P(X > expm1(t)) (= log P(X < -expm1(t))), nonincreasing in t. */
static double log_tail_up(const lmo_pld *d, double t)
{
    double v = -M_LN2 + dpzo_lmo_log_mgf(&d->lmo, -expm1(t));
    return v == -INFINITY ? v : v + err_of(d, v); /* err_of(NaN or inf) = inf */
}

/* Where the unbounded pieces stop. Far out, r~ is useless: once |x| passes 2^53 c, x - c
 * rounds to a neighbour of x and r~ takes values like 0 or -2 c ymin, far from r (the
 * error model says so: e(x) grows with |log p(x)|), so a bracket there can hold a
 * spurious sign change. The pieces therefore end at the first t (bisection) with
 * P(X > expm1(t)) below e^NEGLIGIBLE_LOG_TAIL: beyond x = -expm1(t) (piece 0) and
 * x = c + expm1(t) (piece 2) both P0 and P1 have mass below e^-8000, and outcomes there
 * may be assigned to either side (docs/lmo.md, PLD). Heavy tails that never get that
 * small keep TMAX, and the region beyond is handled through the limit of r. */
static double piece_end(const lmo_pld *d, int *negligible)
{
    double lo = 0.0, hi = TMAX;
    if (!(log_tail_up(d, hi) < NEGLIGIBLE_LOG_TAIL)) {
        *negligible = 0;
        return TMAX;
    }
    for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
        double m = 0.5 * (lo + hi);
        if (log_tail_up(d, m) < NEGLIGIBLE_LOG_TAIL)
            hi = m;
        else
            lo = m;
    }
    *negligible = 1;
    return hi;
}

/* One evaluation point of a piece: t, r~, its error bound, log p */
typedef struct lmo_pt pt;

static pt eval_pt(const lmo_pld *d, int piece, double t)
{
    pt p;
    p.t = t;
    p.r = r_at(d, x_of(d, piece, t), &p.e);
    return p;
}

/* Warm start: the last two roots found on each piece by this thread for this query (the
 * discretiser asks for neighbouring levels one after the other). */
static _Thread_local struct {
    unsigned long query;
    int n;
    double s[2], t[2];
} warm[3];

/* The boundary of {r > s} on one piece, t in [0, t1]:
 *   piece 0 (x <= 0, r~ increasing in t): set = {x < y1}; y1 = 0: all, -inf: none
 *   piece 1 (0 <= x <= c, increasing):    set = {x > y2}; y2 = 0: all, c: none
 *   piece 2 (x >= c, decreasing in t):    set = {x < y3}; y3 = +inf: all, c: none
 * Beyond x(t1) (pieces 0 and 2) r continues monotonically to its limit lim = -+c ymin. */
static double root(lmo_pld *d, int piece, double s)
{
    int inc = piece != 2;
    const pt *p0 = &d->end[piece][0], *p1 = &d->end[piece][1];
    double lim = piece == 0 ? d->r_lo_inf : -d->r_lo_inf;
    int in0 = p0->r > s, in1 = p1->r > s;
    /* beyond x(t1) (pieces 0 and 2): given up when negligible, else bounded by lim */
    const int beyond = piece != 1 && !d->negligible;
    if (inc ? in0 : in1) {
        /* all: every point has r >= r(x0) (inc) or >= min(r(x1), lim) (dec) */
        if (inc)
            check_slack(d, p0->e);
        else
            check_slack(d, beyond ? fmax(p1->e, s - lim) : p1->e);
        return piece == 2 ? INFINITY : 0.0;
    }
    if (inc ? !in1 : !in0) {
        /* none: every point has r <= max(r(x1), lim) (inc) or <= r(x0) (dec) */
        if (inc)
            check_slack(d, beyond ? fmax(p1->e, lim - s) : p1->e);
        else
            check_slack(d, p0->e);
        return piece == 0 ? -INFINITY : d->c;
    }
    /* bracket: a with pred true, b with pred false */
    pt a = inc ? *p1 : *p0, b = inc ? *p0 : *p1;
    if (warm[piece].query == d->id && warm[piece].n > 0) {
        /* predict the root from the last two (secant in s), then grow a bracket around it */
        double tp = warm[piece].t[0], step;
        if (warm[piece].n > 1 && warm[piece].s[0] != warm[piece].s[1]) {
            double slope = (warm[piece].t[0] - warm[piece].t[1]) / (warm[piece].s[0] - warm[piece].s[1]);
            step = slope * (s - warm[piece].s[0]);
            tp += step;
            step = fabs(step) * 0.05;
        } else {
            step = 1e-6 * (fabs(tp) + 1e-3);
        }
        double lo = fmin(a.t, b.t), hi = fmax(a.t, b.t);
        if (!(step > 0.0))
            step = 1e-9 * (fabs(tp) + 1e-3);
        if (tp > lo && tp < hi) {
            pt m = eval_pt(d, piece, tp);
            int in_m = m.r > s;
            /* moving toward the false end (in_m) or the true end (!in_m) */
            double dir = (in_m ? b.t : a.t) > tp ? 1.0 : -1.0;
            if (in_m)
                a = m;
            else
                b = m;
            for (int k = 0; k < 60; k++) {
                double tn = m.t + dir * step;
                if (!(tn > lo && tn < hi))
                    break;
                pt n = eval_pt(d, piece, tn);
                if ((n.r > s) != in_m) {
                    if (in_m)
                        b = n;
                    else
                        a = n;
                    break;
                }
                if (in_m)
                    a = n;
                else
                    b = n;
                m = n;
                step *= 4.0;
            }
        }
    }
    int side = 0;
    for (int it = 0; it < 400 && a.r - b.r > R_TOL; it++) {
        double tm;
        if (it % 4 == 3) {
            tm = 0.5 * (a.t + b.t); /* a bisection now and then keeps the bracket shrinking */
        } else {
            /* Illinois: halve the value at the end that stayed twice */
            double fa = (a.r - s) * (side == 1 ? 0.5 : 1.0), fb = (b.r - s) * (side == -1 ? 0.5 : 1.0);
            tm = b.t + (a.t - b.t) * (-fb) / (fa - fb);
        }
        if (!(tm > fmin(a.t, b.t) && tm < fmax(a.t, b.t)))
            tm = 0.5 * (a.t + b.t);
        if (tm == a.t || tm == b.t)
            break;
        pt m = eval_pt(d, piece, tm);
        if (m.r > s) {
            a = m;
            side = -1; /* the false end stayed */
        } else {
            b = m;
            side = 1;
        }
    }
    if (warm[piece].query != d->id)
        warm[piece].query = d->id, warm[piece].n = 0;
    warm[piece].s[1] = warm[piece].s[0];
    warm[piece].t[1] = warm[piece].t[0];
    warm[piece].s[0] = s;
    warm[piece].t[0] = b.t;
    warm[piece].n = warm[piece].n < 2 ? warm[piece].n + 1 : 2;
    /* the points between x(a) and x(b) go into the set: their r is >= r(x(b)) >
     * r~(x(a)) - |r~(x(a)) - r~(x(b))| - e(b) > s - slack; by monotonicity every point
     * outside the bracket is on its side, beyond x(t1) included */
    check_slack(d, fabs(a.r - b.r) + 2.0 * (a.e + b.e));
    return x_of(d, piece, b.t);
}

/* log P(X < y) and log P(X > y) for X ~ LMO (continuous), with error bounds */
static void log_cdf_sf(const lmo_pld *d, double y, double *lf, double *ls, double *ef, double *es)
{
    if (y == -INFINITY || y == INFINITY) {
        *lf = y < 0.0 ? -INFINITY : 0.0;
        *ls = y < 0.0 ? 0.0 : -INFINITY;
        *ef = *es = 0.0;
        return;
    }
    double small = -M_LN2 + dpzo_lmo_log_mgf(&d->lmo, -fabs(y)); /* the tail beyond |y| */
    double large = log1p(-0.5 * exp(dpzo_lmo_log_mgf(&d->lmo, -fabs(y))));
    /* d log1p(-z) / d log z = -z / (1 - z), z <= 1/2 */
    double es_ = err_of(d, small), el = 2.0 * es_ * exp(small) + 4.0 * U;
    *lf = y < 0.0 ? small : large;
    *ls = y < 0.0 ? large : small;
    *ef = y < 0.0 ? es_ : el;
    *es = y < 0.0 ? el : es_;
}

/* log P(a < X < b) for a short interval on one side of 0 (0 <= a < b or a < b <= 0), by
 * the bounds of a convex integrand: p is log-convex, hence convex, on each side of 0, so
 * (b - a) p(mid) <= P(a < X < b) <= (b - a) (p(a) + p(b)) / 2 (midpoint and trapezoid
 * rules). Returns the log of the geometric mean of the two with the half-width (plus the
 * evaluation error) as the error bound: no cancellation, whatever the interval's size. */
static double log_between_short(const lmo_pld *d, double a, double b, double *err)
{
    double h = b - a, la = dpzo_lmo_log_pdf(&d->lmo, a), lb = dpzo_lmo_log_pdf(&d->lmo, b);
    double lm = dpzo_lmo_log_pdf(&d->lmo, a + 0.5 * h);
    double lo = log(h) + lm, hi = log(h) + dpzo__log_add(la, lb) - M_LN2;
    if (hi < lo)
        hi = lo; /* rounding: the bounds are ordered mathematically */
    double e = err_of(d, la) + err_of(d, lb) + err_of(d, lm) + 8.0 * U * (fabs(log(h)) + 1.0);
    *err = 0.5 * (hi - lo) + e;
    return 0.5 * (lo + hi);
}

/* log P(a < X < b), a < b, and its error bound */
static double log_between(const lmo_pld *d, double a, double b, double *err)
{
    double fa, sa, efa, esa, fb, sb, efb, esb;
    if (!(a < b)) {
        *err = 0.0;
        return -INFINITY;
    }
    log_cdf_sf(d, a, &fa, &sa, &efa, &esa);
    log_cdf_sf(d, b, &fb, &sb, &efb, &esb);
    if (b <= 0.0 || a >= 0.0) {
        /* both on one side: the difference of the small tails */
        double hi = b <= 0.0 ? fb : sa, lo = b <= 0.0 ? fa : sb;
        double ehi = b <= 0.0 ? efb : esa, elo = b <= 0.0 ? efa : esb;
        if (hi == -INFINITY) {
            *err = 0.0;
            return -INFINITY;
        }
        double diff = lo - hi; /* <= 0 */
        double m = -expm1(diff);
        if (m < 1e-3 && isfinite(a) && isfinite(b))
            return log_between_short(d, a, b, err); /* the difference would cancel */
        if (!(m > 0.0)) {
            *err = INFINITY;
            return -INFINITY;
        }
        *err = ehi + (ehi + elo) * (lo == -INFINITY ? 0.0 : exp(diff) / m) + 4.0 * U;
        return hi + log(m);
    }
    /* 0 in (a, b): one minus both small tails, or for a short interval the two sides */
    double z = exp(fa) + exp(sb);
    if (z > 0.999 && isfinite(a) && isfinite(b)) {
        double e1, e2, l1 = log_between_short(d, a, 0.0, &e1), l2 = log_between_short(d, 0.0, b, &e2);
        *err = fmax(e1, e2);
        return dpzo__log_add(l1, l2);
    }
    *err = (efa + esb) * z / (1.0 - z) + 8.0 * U;
    return log1p(-z);
}

static double lse(double a, double b) { return dpzo__log_add(a, b); }

static void tails(void *data, double s, double lg[2], double ll[2], double *err)
{
    lmo_pld *d = data;
    double y1 = root(d, 0, s);
    double y2 = root(d, 1, s);
    double y3 = root(d, 2, s);
    double e = 0.0;
    for (int j = 0; j < 2; j++) {
        double sh = j == 0 ? 0.0 : d->c; /* P1(A) = P0(A - c) */
        double e1, e2, e3, e4;
        /* {r > s} = (-inf, y1) u (y2, y3); {r <= s} = [y1, y2] u [y3, inf) */
        double g1 = log_between(d, -INFINITY, y1 - sh, &e1);
        double g2 = log_between(d, y2 - sh, y3 - sh, &e2);
        double l1 = log_between(d, y1 - sh, y2 - sh, &e3);
        double l2 = log_between(d, y3 - sh, INFINITY, &e4);
        lg[j] = lse(g1, g2);
        ll[j] = lse(l1, l2);
        double eg = fmax(e1, e2), el = fmax(e3, e4);
        e = fmax(e, fmax(eg, el));
    }
    *err = e;
}

dpzo_status dpzo__lmo_pld_noise_new(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c,
                                    dpzo_pld_noise *out)
{
    lmo_pld *d = calloc(1, sizeof *d);
    if (d == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    d->lmo = *lmo;
    d->c = c;
    d->lp0 = dpzo_lmo_log_pdf(lmo, 0.0);
    d->E = d->lp0 - dpzo_lmo_log_pdf(lmo, d->c);
    d->r_lo_inf = -d->c * dpzo__lmo_ymin(lmo);
    atomic_init(&d->bad, 0);
    static atomic_ulong next_id = 1;
    d->id = atomic_fetch_add(&next_id, 1);
    d->t_end = piece_end(d, &d->negligible);
    for (int piece = 0; piece < 3; piece++) {
        d->end[piece][0] = eval_pt(d, piece, 0.0);
        d->end[piece][1] = eval_pt(d, piece, piece == 1 ? d->c : d->t_end);
    }
    double emax = d->E + 2.0 * err_of(d, d->lp0) + LOSS_SLACK;
    dpzo_pld_noise n = {d, tails, -emax, emax, LOSS_SLACK, 0.0};
    *out = n;
    return DPZO_OK;
}

int dpzo__lmo_pld_noise_bad(const dpzo_pld_noise *n)
{
    return atomic_load(&((lmo_pld *)n->data)->bad);
}

void dpzo__lmo_pld_noise_free(dpzo_pld_noise *n)
{
    if (n != NULL) {
        free(n->data);
        n->data = NULL;
    }
}

/* The interval of dpzo_pld_noise_epsilon: the upper end is proven (under the error model
 * above); an unresolved window claims nothing (upper = +inf). memory_limit: the PLD
 * accountant's (dpzo_pld_options.memory_limit; 0: its default). */
static dpzo_status pld_interval(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                const dpzo_lmo_account_options *o, double grid,
                                size_t memory_limit, dpzo_pld_result *out);

dpzo_status dpzo_lmo_pld_epsilon(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                 const dpzo_lmo_account_options *o, double grid,
                                 dpzo_pld_result *out)
{
    return pld_interval(ctx, lmo, o, grid, 0, out);
}

dpzo_status dpzo_lmo_pld_epsilon_limit(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                       const dpzo_lmo_account_options *o, double grid,
                                       size_t memory_limit, dpzo_pld_result *out)
{
    return pld_interval(ctx, lmo, o, grid, memory_limit, out);
}

dpzo_status dpzo__lmo_pld_interval(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                   const dpzo_lmo_account_options *o, double grid,
                                   dpzo_pld_result *out)
{
    return pld_interval(ctx, lmo, o, grid, 0, out);
}

static dpzo_status pld_interval(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                const dpzo_lmo_account_options *o, double grid,
                                size_t memory_limit, dpzo_pld_result *out)
{
    dpzo_status st;
    if ((st = dpzo_lmo_validate(ctx, lmo)))
        return st;
    if (o->vector_l1)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "the PLD of LMO noise covers scalar queries only (vector_l1 is not "
                          "supported; use the RDP accountant)");
    if (!(o->sensitivity > 0.0 && isfinite(o->sensitivity)))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g",
                          o->sensitivity);
    if (o->steps < 1)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be >= 1, got %llu",
                          (unsigned long long)o->steps);
    double q = 1.0;
    int wor = 0;
    if (o->sampling == DPZO_LMO_SAMPLING_POISSON) {
        if (!(o->q > 0.0 && o->q <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in (0, 1], got %g", o->q);
        q = o->q;
    } else if (o->sampling == DPZO_LMO_SAMPLING_WOR) {
        if (!(o->batch >= 1 && o->n >= o->batch))
            return dpzo__fail(ctx, DPZO_EINVAL, "without replacement needs 1 <= batch <= n");
        q = (double)o->batch / (double)o->n;
        wor = 1;
    }
    if (!(grid >= 0.0 && grid <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "PLD grid must be in (0, 1] (0: the default), got %g",
                          grid);
    dpzo_pld_noise noise;
    if ((st = dpzo__lmo_pld_noise_new(ctx, lmo, o->sensitivity, &noise)))
        return st;
    /* The work. Every loss of the sampled pair lies within +-log(1 + q (e^E - 1)) (E = r_max,
     * the plain pair's largest loss), so one step needs at most 2 that / grid + 4 grid points,
     * each costing about 20 us of root finding (three roots and four tails). Past
     * LMO_PLD_MAX_POINTS the run would take minutes to hours (e^E ~ 1e20 and more for
     * extreme parameters): claim nothing, in constant time, and say why. */
    double d = grid > 0.0 ? grid : 1e-4, E = noise.r_max;
    double amp = q < 1.0 ? log1p(q * expm1(E)) : E;
    if (amp == INFINITY && isfinite(E))
        amp = E + log(q) + 1.0; /* q e^E overflows: log(1 + q (e^E - 1)) < E + log q + 1 */
    double span = 2.0 * amp;
    double pts = span / d + 4.0;
    if (!(pts <= LMO_PLD_MAX_POINTS)) {
        memset(out, 0, sizeof *out);
        out->epsilon_lower = 0.0;
        out->epsilon = out->epsilon_upper = out->epsilon_estimate = INFINITY;
        out->delta = out->delta_upper = out->delta_estimate = 1.0;
        out->rdp_epsilon = NAN;
        out->grid = d;
        double need = dpzo__up(span / (LMO_PLD_MAX_POINTS - 4.0));
        int len = snprintf(out->reason, sizeof out->reason,
                           "the loss range +-%.4g needs %.3g grid points a step at grid %g "
                           "(at most %.0e): use ",
                           0.5 * span, pts, d, (double)LMO_PLD_MAX_POINTS);
        if (len > 0 && (size_t)len < sizeof out->reason)
            snprintf(out->reason + len, sizeof out->reason - (size_t)len,
                     need <= 0.1 ? "a grid >= %.2g or the RDP accountant" : "the RDP accountant",
                     need);
        dpzo__lmo_pld_noise_free(&noise);
        return DPZO_OK;
    }
    /* the tilt: the RDP accountant's optimal order for the same run, minus 1 (as the
     * built-in events do); without one the accountant picks it from the steps */
    double tilt = 0.0;
    dpzo_lmo_account_result rr;
    dpzo_lmo_account_options ro = *o;
    ro.bound = DPZO_LMO_BOUND_MGF; /* cheap; only its order is used */
    if (dpzo_lmo_epsilon(ctx, lmo, &ro, &rr) == DPZO_OK && rr.order > 1.0)
        tilt = rr.order - 1.0;
    noise.tilt = tilt;
    dpzo_pld_options po;
    dpzo_pld_options_default(&po);
    if (grid > 0.0)
        po.grid = grid;
    if (memory_limit > 0)
        po.memory_limit = memory_limit;
    st = dpzo_pld_noise_epsilon(ctx, &noise, q, wor, o->steps, o->delta, &po, out);
    if (st == DPZO_OK && dpzo__lmo_pld_noise_bad(&noise))
        st = dpzo__fail(ctx, DPZO_ENOCONV,
                        "LMO PLD: a loss-bucket boundary could not be located to within %g; "
                        "use the RDP accountant for these parameters", LOSS_SLACK);
    dpzo__lmo_pld_noise_free(&noise);
    return st;
}

dpzo_status dpzo_lmo_epsilon_pld(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                 const dpzo_lmo_account_options *opts, double grid,
                                 dpzo_lmo_account_result *out, dpzo_pld_result *pld)
{
    dpzo_status st = dpzo_lmo_epsilon(ctx, lmo, opts, out);
    if (st)
        return st;
    double rdp = out->epsilon;
    st = dpzo_lmo_pld_epsilon(ctx, lmo, opts, grid, pld);
    if (st == DPZO_ENOCONV || st == DPZO_ENOMEM) {
        /* the PLD cannot certify these parameters: it claims nothing, the RDP bound stands */
        memset(pld, 0, sizeof *pld);
        pld->epsilon_upper = pld->epsilon = pld->epsilon_estimate = INFINITY;
        snprintf(pld->reason, sizeof pld->reason, "%s", dpzo_ctx_errmsg(ctx));
        st = DPZO_OK;
    }
    if (st)
        return st;
    pld->rdp_epsilon = rdp;
    if (pld->epsilon_upper <= out->epsilon) { /* both proven: the smaller is the run's */
        out->epsilon = pld->epsilon_upper;
        out->epsilon_estimate = pld->epsilon_estimate;
        out->route = "pld";
        out->order = 0.0;
        out->order_at_edge = 0;
    }
    return DPZO_OK;
}
