/* accountant/pld_query.c: delta(eps) and eps(delta) from a composed, tilted PLD.
 *
 * delta(eps) = P(L = inf) + sum_{l_j > eps} (1 - e^{eps - l_j}) m_j with the composed
 * masses m_j = exp(logscale - lambda l_j) y_j. Bounds (pld_compose.c gives the terms):
 *   upper: y_j + err, times (1 + rel); plus the pessimistic mass at +inf and the tilted
 *          mass above the window (at most above * exp(logscale - lambda l_top));
 *   lower: max(0, y_j - err) times (1 - rel), minus what folding may have brought into
 *          the window (outside * exp(logscale - lambda max(eps, l_bottom)));
 *   estimate: y_j and the mass at +inf, as computed;
 *   side 3: the pessimistic distribution with the lower side's error treatment (the PRV
 *          accountant's lower end starts from it).
 * Masses are handled relative to exp(logscale - lambda l_ref), l_ref the tilted mean;
 * windows reaching more than e^600 below it are reported as unresolved. */
#include <math.h>
#include <stdlib.h>
#include "pld_internal.h"

typedef struct {
    double lref, lbot, ltop;
    double scale_log; /* log of the unit: logscale - lambda lref */
    int side_arr;     /* which composed array */
} frame;

static int make_frame(const dpzo__pld_composed *c, int side, frame *f)
{
    int s = side == 1 ? 1 : 0;
    f->side_arr = s;
    f->lbot = ((double)c->w0 + c->off) * c->d;
    f->ltop = ((double)(c->w0 + (long)c->N - 1) + c->off) * c->d;
    /* masses above the reference underflow harmlessly (they are negligible there);
     * below it they grow by at most e^{(lambda + 1)(lref - lbot)} */
    f->lref = c->lmean > f->lbot ? (c->lmean < f->ltop ? c->lmean : f->ltop) : f->lbot;
    f->scale_log = c->logscale[s] - c->lambda * f->lref;
    return (c->lambda + 1.0) * (f->lref - f->lbot) < 600.0 && c->y[s] != NULL;
}

/* entry j's mass relative to the unit, with the side's error treatment */
static double mass(const dpzo__pld_composed *c, int side, const frame *f, size_t j)
{
    double l = ((double)(c->w0 + (long)j) + c->off) * c->d, y;
    if (side == 0)
        y = (c->y[0][j] + c->err[0]) * (1.0 + c->rel);
    else if (side == 1 || side == 3)
        y = (c->y[f->side_arr][j] - c->err[f->side_arr]) * (1.0 - c->rel);
    else
        y = c->y[0][j];
    if (!(y > 0.0))
        return 0.0;
    return y * exp(-c->lambda * (l - f->lref));
}

/* a * exp(b) without 0 * inf */
static double scaled(double a, double b) { return a > 0.0 ? exp(log(a) + b) : 0.0; }

/* constant additions (in units), and the alias subtraction at eps for the lower side */
static double extras(const dpzo__pld_composed *c, int side, const frame *f, double eps)
{
    if (side == 1 || side == 3) {
        double at = eps > f->lbot ? eps : f->lbot;
        return -scaled(c->outside[f->side_arr], -c->lambda * (at - f->lref));
    }
    double x = scaled(c->inf_mass, -f->scale_log);
    if (side == 0) {
        x += scaled(c->above[0] * (1.0 + c->rel), -c->lambda * (f->ltop - f->lref));
        if (eps < f->lbot) /* losses in (eps, l_bottom) are outside the window */
            x += scaled(c->outside[0], -c->lambda * (eps - f->lref));
    }
    return x;
}

double dpzo__pld_delta_at(const dpzo__pld_composed *c, int side, double eps)
{
    frame f;
    if (!make_frame(c, side, &f))
        return NAN; /* the tilt spans too much of the window: not resolved */
    double sum = 0.0;
    for (size_t j = 0; j < c->N; j++) {
        double l = ((double)(c->w0 + (long)j) + c->off) * c->d;
        if (l > eps)
            sum += -expm1(eps - l) * mass(c, side, &f, j);
    }
    double r = scaled(sum, f.scale_log) + (side == 1 || side == 3 ? -1.0 : 1.0)
               * scaled(fabs(extras(c, side, &f, eps)), f.scale_log);
    if (side == 1 || side == 3)
        return r > 0.0 ? r : 0.0;
    return r < 1.0 ? r : 1.0;
}

double dpzo__pld_epsilon_for(const dpzo__pld_composed *c, int side, double delta, int *inside)
{
    frame f;
    *inside = 0;
    if (!make_frame(c, side, &f))
        return side == 1 || side == 3 ? 0.0 : INFINITY;
    const int lower = side == 1 || side == 3;
    double target = exp(log(delta) - f.scale_log);
    double A = 0.0, B = 0.0; /* sums over l_j >= current of m_j and m_j e^{-(l_j - lref)} */
    /* constant part of the extras (upper sides) and the alias coefficient (lower sides);
     * the window bottom term of the upper side never applies here (eps >= l_bottom) */
    double X0 = lower ? 0.0 : extras(c, side, &f, f.ltop);
    if (!lower && X0 > target)
        return INFINITY; /* the mass at +inf or above the window alone exceeds delta */
    const double *y = c->y[f.side_arr];
    const double err = c->err[f.side_arr];
    /* 1e-12 covers the drift of the recurrences below (256 steps of 2u each) */
    const double scale = side == 0 ? (1.0 + c->rel) * (1.0 + 1e-12)
                                   : lower ? (1.0 - c->rel) * (1.0 - 1e-12) : 1.0;
    const double alias = lower ? c->outside[f.side_arr] * (1.0 + 1e-12) : 0.0;
    const double up = side == 0 ? err : lower ? -err : 0.0;
    const double step_w = exp(c->lambda * c->d), step_b = exp((c->lambda + 1.0) * c->d);
    const double step_e = exp(-c->d), emd = exp(c->lambda * c->d);
    double w = 0.0, wb = 0.0, el = 0.0; /* e^{-lambda (l - lref)}, e^{-(lambda+1)(l - lref)}, e^{lo - lref} */
    for (size_t jj = c->N; jj-- > 0;) {
        double l = ((double)(c->w0 + (long)jj) + c->off) * c->d;
        if ((c->N - 1 - jj) % 256 == 0) { /* resynchronise the recurrences */
            w = exp(-c->lambda * (l - f.lref));
            wb = exp(-(c->lambda + 1.0) * (l - f.lref));
            el = exp(l - c->d - f.lref);
        } else {
            w *= step_w;
            wb *= step_b;
            el *= step_e;
        }
        double yy = (y[jj] + up) * scale;
        if (yy > 0.0) {
            A += yy * w;
            B += yy * wb;
        }
        double lo = l - c->d; /* eps in [lo, l): the losses above eps are those >= l */
        /* lower sides: the alias term at max(lo, l_bottom), lo >= l_bottom except at j = 0 */
        double X = lower ? -alias * w * emd : X0;
        if (A + X - el * B > target) {
            if (jj == 0)
                break; /* the crossing may lie below the window */
            double eps = B > 0.0 ? f.lref + log((A + X - target) / B) : l;
            if (eps > l)
                eps = l;
            if (eps < lo)
                eps = lo;
            *inside = 1;
            return eps;
        }
    }
    return f.lbot; /* below the window: not resolved */
}
