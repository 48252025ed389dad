/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_query.c: delta(eps) and eps(delta) from a composed, tilted PLD.
 *
 * delta(eps) = P(L = inf) + sum_{l_j > eps} (1 - e^{eps - l_j}) m_j with the composed
 * masses m_j = exp(logscale - lambda l_j) y_j. Bounds (pld_compose.c gives the terms):
 *   upper: y_j + err, times (1 + rel); plus the pessimistic mass at +inf and the tilted
 *          mass above the window (at most above * exp(logscale - lambda l_top));
 *   lower: max(0, y_j - err) times (1 - rel), minus what folding may have brought into
 *          the window (outside * exp(logscale - lambda max(eps, l_bottom)));
 *   both, for a tree composition (pld_tree.c): the misplaced mass m, anywhere in the
 *          window and anywhere in truth, adds m exp(logscale - lambda eps) to the upper
 *          side and is subtracted like aliased mass from the lower ones;
 *   estimate: y_j and the mass at +inf, as computed;
 *   side 3: the pessimistic distribution with the lower side's error treatment (the PRV
 *          accountant's lower end starts from it).
 * Masses are handled relative to exp(logscale - lambda l_ref), l_ref the tilted mean;
 * windows reaching more than e^600 below it are reported as unresolved.
 *
 * Rounding of the read-off (issue 28). The error terms above bound the composition; the
 * read-off's own arithmetic (logs, exps and sums in double) is rounded in the bound's safe
 * direction here: upward for side 0, downward for sides 1 and 3 (side 2, the estimate, to
 * nearest). Every positive mass stays positive on side 0: a product exp(log a + b) whose
 * result underflows is moved one double up, so a pessimistic mass at +infinity of 2^-1074
 * (pld_discretize.c, pld_compose.c) gives an upper end of at least 2^-1074, never 0. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "pld_internal.h"

#define U (0.5 * DBL_EPSILON)

/* A bound in direction dir (+1 up, -1 down, 0 as computed) on the exact value of v, a
 * positive result computed with relative error at most rel, or below DBL_MIN with an
 * absolute error of at most one ulp (2^-1074; the relative model fails among the
 * subnormals). 3u covers the rounding of the correction itself. 0 stays 0: every caller's
 * 0 is exact (no positive term). */
static double round_dir(double v, double rel, int dir)
{
    if (dir == 0 || !(v > 0.0) || !isfinite(v))
        return v;
    double w = v * (1.0 + (double)dir * (rel + 3.0 * U));
    if (w < DBL_MIN)
        w = nextafter(w, dir > 0 ? INFINITY : 0.0);
    return w > 0.0 ? w : 0.0;
}

typedef struct {
    double lbot, ltop;
    int side_arr; /* which composed array */
} frame;

static int make_frame(const dpzo__pld_composed *c, int side, frame *f)
{
    f->side_arr = side == 1 ? 1 : 0;
    f->lbot = ((double)c->w0 + c->off) * c->d;
    f->ltop = ((double)(c->w0 + (long)c->N - 1) + c->off) * c->d;
    return c->y[f->side_arr] != NULL;
}

static double loss_at(const dpzo__pld_composed *c, size_t j)
{
    return ((double)(c->w0 + (long)j) + c->off) * c->d;
}

/* entry j's tilted mass with the side's error treatment (0 if not positive) */
static double side_y(const dpzo__pld_composed *c, int side, const frame *f, size_t j)
{
    double y;
    if (side == 0)
        y = (c->y[0][j] + c->err[0]) * (1.0 + c->rel);
    else if (side == 1 || side == 3)
        y = (c->y[f->side_arr][j] - c->err[f->side_arr]) * (1.0 - c->rel);
    else
        y = c->y[0][j];
    return y > 0.0 ? y : 0.0;
}

/* a * exp(b) without 0 * inf, rounded in direction dir: log, the sum and exp each round by
 * at most an ulp or two of their results, a relative 2u (|log a| + |b| + 2) in all (4u
 * taken); b = 0 returns a itself, exactly. */
static double scaled_dir(double a, double b, int dir)
{
    if (!(a > 0.0))
        return 0.0;
    if (b == 0.0)
        return a;
    double la = log(a);
    return round_dir(exp(la + b), 4.0 * U * (fabs(la) + fabs(b) + 2.0), dir);
}

/* a * exp(b) as an upper bound (the terms added on side 0, subtracted on sides 1 and 3) */
static double scaled(double a, double b) { return scaled_dir(a, b, 1); }

/* a + b (a, b >= 0) rounded up: exact where either is 0 or the result is below DBL_MIN
 * (a sum whose exact value is subnormal is computed exactly), else one double up */
static double add_up(double a, double b)
{
    double s = a + b;
    return a > 0.0 && b > 0.0 && s >= DBL_MIN ? nextafter(s, INFINITY) : s;
}

/* The constant additions at eps (mass at +inf, above the window, below it) or, for the
 * lower sides, minus the alias term, in units of exp(unit_log). */
static double extras(const dpzo__pld_composed *c, int side, const frame *f, double eps,
                     double unit_log)
{
    double ls = c->logscale[f->side_arr] - unit_log;
    if (side == 1 || side == 3) {
        /* misplaced mass (pld_tree.c) sits somewhere in the window: like aliased mass,
         * it adds at most its mass times e^{-lambda max(eps, l_bottom)} */
        double at = eps > f->lbot ? eps : f->lbot;
        return -scaled(add_up(c->outside[f->side_arr], c->misplaced[f->side_arr]),
                       ls - c->lambda * at);
    }
    /* side 0: every term and sum rounded up (the estimate's terms too: they are the same
     * masses, and the inf mass, at unit_log 0, is taken as it is) */
    double x = scaled(c->inf_mass, -unit_log);
    if (side == 0) {
        double a = c->above[0] * (1.0 + c->rel);
        x = add_up(x, scaled(a > 0.0 ? nextafter(a, INFINITY) : 0.0, ls - c->lambda * f->ltop));
        if (eps < f->lbot) /* losses in (eps, l_bottom) are outside the window */
            x = add_up(x, scaled(c->outside[0], ls - c->lambda * eps));
        /* misplaced mass belongs at unknown losses: those above eps add at most its mass
         * times e^{-lambda eps} (lambda >= 0) */
        x = add_up(x, scaled(c->misplaced[0], ls - c->lambda * eps));
    }
    return x;
}

double dpzo__pld_delta_at(const dpzo__pld_composed *c, int side, double eps)
{
    frame f;
    if (!make_frame(c, side, &f))
        return NAN;
    /* log-sum-exp of (1 - e^{eps - l}) y exp(logscale - lambda l) over l > eps */
    const double ls = c->logscale[f.side_arr];
    const int dir = side == 0 ? 1 : side == 2 ? 0 : -1;
    double mx = -INFINITY, mag = 0.0;
    for (size_t j = 0; j < c->N; j++) {
        double l = loss_at(c, j), y = side_y(c, side, &f, j);
        if (l > eps && y > 0.0) {
            double a = log(-expm1(eps - l)), b = log(y);
            double t = a + b + ls - c->lambda * l;
            mx = t > mx ? t : mx;
            /* the magnitudes the term's rounding is relative to */
            double m = fabs(a) + fabs(b) + fabs(ls) + fabs(c->lambda * l) + fabs(l) + fabs(eps);
            mag = m > mag ? m : mag;
        }
    }
    double sum = 0.0, comp = 0.0;
    size_t nterms = 0;
    if (mx > -INFINITY)
        for (size_t j = 0; j < c->N; j++) {
            double l = loss_at(c, j), y = side_y(c, side, &f, j);
            if (l > eps && y > 0.0) {
                double x = exp(log(-expm1(eps - l)) + log(y) + ls - c->lambda * l - mx);
                /* compensated (Neumaier) summation: error 2u of the sum plus O(n u^2) */
                double s = sum + x;
                comp += fabs(sum) >= x ? (sum - s) + x : (x - s) + sum;
                sum = s;
                nterms++;
            }
        }
    sum += comp;
    /* Each term's exponent is a sum of five logs and products, each within a few u of its
     * magnitude (expm1, log and exp within an ulp or two; eps - l within u |eps - l|, whose
     * effect on log(-expm1(eps - l)) is at most u): 4u (mag + |mx| + 4) relative per term;
     * the compensated sum of positive terms 2u + 2 n^2 u^2; scaled() its own. The product
     * of (1 + each) is below 1 + 1.01 x their sum. */
    double rel = 1.01 * (4.0 * U * (mag + fabs(mx) + 4.0) + 2.0 * U
                         + 2.0 * (double)nterms * (double)nterms * U * U);
    double r = round_dir(scaled_dir(sum, mx, dir), rel, dir);
    double x = extras(c, side, &f, eps, 0.0);
    /* the last addition: exact where its result is below DBL_MIN (a sum of two doubles whose
     * exact value is subnormal is computed exactly), else within half an ulp */
    double v = r + x;
    if (dir != 0 && r != 0.0 && x != 0.0 && v >= DBL_MIN)
        v = nextafter(v, dir > 0 ? INFINITY : 0.0);
    if (side == 1 || side == 3)
        return v > 0.0 ? v : 0.0;
    return v < 1.0 ? v : 1.0;
}

double dpzo__pld_epsilon_for(const dpzo__pld_composed *c, int side, double delta, int *inside)
{
    frame f;
    *inside = 0;
    if (!make_frame(c, side, &f))
        return side == 1 || side == 3 ? 0.0 : INFINITY;
    const int lower = side == 1 || side == 3;
    /* Scan from the top. A = sum of the masses at losses >= l, B = sum of mass * e^{-l},
     * both in units of exp(unit) with unit = logscale - lambda ltop + shift; `shift` grows
     * (and A, B shrink) whenever the weights approach overflow, so any tilt and window
     * width are representable. */
    const double base = c->logscale[f.side_arr] - c->lambda * f.ltop;
    double shift = 0.0;
    const double log_delta = log(delta);
    if (!lower && extras(c, side, &f, f.ltop, log_delta) > 1.0)
        return INFINITY; /* the mass at +inf or above the window alone exceeds delta */
    const double *y = c->y[f.side_arr];
    const double err = c->err[f.side_arr];
    /* 1e-12 covers the drift of the recurrences below (256 steps of 2u each). The
     * exponents (lw, the target's, the extras' unit) are sums of terms up to
     * mx = |logscale| + lambda (|l_top| + |l_bottom|) in size (the shift is at most
     * lambda (l_top - l_bottom) + 600), each rounded a few times, and the recurrence's
     * factor e^{lambda d} carries lambda d u into each of up to 256 steps: an error of at
     * most ex in every exponent, a relative 1.01 ex in each mass and in the target. Masses
     * (A, B and the extras) inflated by kappa >= (1 + 1.01 ex) / (1 - 1.01 ex) on side 0
     * (deflated on the lower sides) make the crossing a bound whatever those errors were
     * (issue 30: at grid 0.5 and tilt 200, where mx is 1e5, the upper end of one randomized
     * response fell 2e-11 below the truth). */
    const double mx = fabs(c->logscale[f.side_arr]) + c->lambda * (fabs(f.ltop) + fabs(f.lbot));
    const double ex = 4.0 * U * (fabs(log_delta) + 3.0 * mx + 700.0 + 256.0 * c->lambda * c->d);
    const double kappa = side == 0 ? 1.0 + 3.0 * ex : lower ? 1.0 - 3.0 * ex : 1.0;
    const double scale = side == 0 ? (1.0 + c->rel) * (1.0 + 1e-12) * kappa
                                   : lower ? (1.0 - c->rel) * (1.0 - 1e-12) * kappa : 1.0;
    const double up = side == 0 ? err : lower ? -err : 0.0;
    const double step_w = exp(c->lambda * c->d), step_e = exp(-c->d);
    /* w = e^{-lambda (l - ltop) - shift}; B is kept relative to the current loss:
     * B = sum_{j >= current} mass_j e^{-(l_j - l)}, so e^{eps - l} B is the e^eps term */
    double A = 0.0, B = 0.0, w = 0.0, target = 0.0, X0 = 0.0;
    for (size_t jj = c->N; jj-- > 0;) {
        double l = loss_at(c, jj);
        if ((c->N - 1 - jj) % 256 == 0) {
            /* resynchronise the recurrence; rescale when the weights get large */
            double lw = -c->lambda * (l - f.ltop) - shift;
            if (lw > 600.0) {
                double s = lw - 300.0;
                shift += s;
                A *= exp(-s);
                B *= exp(-s);
                lw -= s;
            }
            w = exp(lw);
            target = exp(log_delta - base - shift);
            X0 = lower ? 0.0 : extras(c, side, &f, f.ltop, base + shift);
        } else {
            w *= step_w;
            if (w > 1e250) { /* rescale between resynchronisations too */
                shift += 300.0;
                A *= exp(-300.0);
                B *= exp(-300.0);
                w *= exp(-300.0);
                target = exp(log_delta - base - shift);
                X0 = lower ? 0.0 : extras(c, side, &f, f.ltop, base + shift);
            }
        }
        double yy = (y[jj] + up) * scale;
        B *= step_e;
        if (yy > 0.0) {
            A += yy * w;
            B += yy * w;
        }
        if (!isfinite(A) || !isfinite(B))
            return lower ? 0.0 : INFINITY; /* not representable: no claim beyond the trivial */
        double lo = l - c->d; /* eps in [lo, l): the losses above eps are those >= l */
        /* lower sides: the alias term at max(lo, l_bottom); lo >= l_bottom except at j = 0 */
        double X = lower || (side == 0 && c->misplaced[0] > 0.0)
                       ? extras(c, side, &f, lo, base + shift) /* eps-dependent terms at lo */
                       : X0;
        X *= side == 0 ? kappa : lower ? 2.0 - kappa : 1.0;
        if (A + X - step_e * B > target) {
            if (jj == 0)
                break; /* the crossing may lie below the window */
            /* the crossing in [lo, l): A + X - e^{eps - l} B = target. It grows with A + X
             * and falls with target and B: the upper end rounds its numerator up and the
             * quotient and the logarithm up, the lower ends all down (a cancelling
             * numerator then moves it by a lot, but only towards the safe end of the
             * cell, where it is clamped: at l the scan had delta <= target, and at lo
             * delta > target) */
            double eps = l;
            if (B > 0.0) {
                const int dir = side == 0 ? 1 : side == 2 ? 0 : -1;
                double num = (A + X) * (1.0 + 4.0 * U * dir) - target;
                num *= 1.0 + 2.0 * U * dir;
                double g = num > 0.0 ? log(num / B * (1.0 + 2.0 * U * dir)) : -INFINITY;
                eps = l + g;
                if (dir != 0 && isfinite(eps))
                    eps += dir * 4.0 * U * (fabs(l) + fabs(g) + 1.0);
            }
            if (eps > l)
                eps = l;
            if (eps < lo)
                eps = lo;
            *inside = 1;
            return eps;
        }
    }
    /* The scan completed without crossing: delta(eps) <= delta at every eps >= l_bottom, so
     * l_bottom bounds epsilon from above (the answer may lie below the window) */
    return f.lbot;
}
