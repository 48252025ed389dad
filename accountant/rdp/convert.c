/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/convert.c: RDP -> (epsilon, delta) and the order optimisation.
 *
 * Formulas are in include/dpzo/convert.h. Search: the objective (epsilon, or
 * log delta) is scanned on a coarse order grid from alpha = 8 outwards, pruned by
 * proven lower bounds (RDP is nondecreasing in alpha, so beyond alpha every order
 * gives epsilon >= RDP(alpha) - (1 + log alpha)/(alpha - 1); below alpha < 1/delta the
 * improved conversion term alone is decreasing in alpha), then refined by golden
 * section between the best point's neighbours. With sampling without replacement in
 * the event (its bound is not unimodal in alpha), the integers around that order and
 * every named grid's orders are tried too (wor_candidates). Whatever order is found,
 * the answer is the certified RDP upper bound at that order converted with upward
 * rounding, so search accuracy affects tightness, never soundness. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rdp_internal.h"
#include "ival.h"

#define COARSE_MAX 512
#define GOLDEN_RTOL 1e-6
/* orders below the coarse grid: 1 + 0.01 / 2^k down to 1 + LOW_MIN */
#define LOW_MAX 40
#define LOW_MIN 1e-9

/* ---- single-order formulas (fast, double) ---------------------------------- */

static double conv_term(double alpha, double delta, dpzo_conversion conv)
{
    if (conv == DPZO_CONVERSION_STANDARD)
        return -log(delta) / (alpha - 1.0);
    return log1p(-1.0 / alpha) - (log(delta) + log(alpha)) / (alpha - 1.0);
}

static double eps_formula(double alpha, double r, double delta, dpzo_conversion conv)
{
    if (r == INFINITY)
        return INFINITY;
    double tv2 = -expm1(-r); /* total variation sqrt(1 - e^-r) <= delta, in logs: delta^2
                                may underflow */
    if (tv2 == 0.0 || log(tv2) <= 2.0 * log(delta))
        return 0.0;
    double e = r + conv_term(alpha, delta, conv);
    return e > 0.0 ? e : 0.0;
}

static double log_delta_formula(double alpha, double r, double eps, dpzo_conversion conv)
{
    return dpzo__rdp_log_delta_estimate(alpha, r, eps, conv); /* convert_delta.c */
}

/* ---- certified single-order conversions (MPFR, outward rounding) ------------- */

/* Upper bound on epsilon at order alpha from an RDP upper bound r. */
static double eps_upper(long prec, double alpha, double r, double delta, dpzo_conversion conv)
{
    if (r == INFINITY)
        return INFINITY;
    ival a, rr, d, t, u, one;
    ival *all[] = {&a, &rr, &d, &t, &u, &one};
    for (size_t i = 0; i < 6; i++)
        ival_init(all[i], (mpfr_prec_t)prec);
    ival_set_ui(&one, 1);
    ival_set_d(&a, alpha);
    ival_set_d(&rr, r);
    ival_set_d(&d, delta);
    double result;
    /* total variation test, proven: -expm1(-r) <= delta^2 */
    ival_neg(&t, &rr);
    ival_expm1(&t, &t);
    ival_neg(&t, &t);
    ival_mul(&u, &d, &d);
    if (mpfr_cmp(t.hi, u.lo) <= 0) {
        result = 0.0;
    } else {
        ival_log(&t, &d);
        ival_sub(&u, &a, &one); /* alpha - 1 */
        if (conv == DPZO_CONVERSION_STANDARD) {
            ival_div(&t, &t, &u);
            ival_sub(&t, &rr, &t);
        } else {
            ival_log(&d, &a);
            ival_add(&t, &t, &d); /* log delta + log alpha */
            ival_div(&t, &t, &u);
            ival_sub(&t, &rr, &t);
            ival_div(&d, &one, &a);
            ival_neg(&d, &d);
            ival_log1p(&d, &d);
            ival_add(&t, &t, &d);
        }
        result = ival_hi_d(&t);
        if (result < 0.0)
            result = 0.0;
    }
    for (size_t i = 0; i < 6; i++)
        ival_clear(all[i]);
    return result;
}

static double delta_upper(long prec, double alpha, double r, double eps, dpzo_conversion conv)
{
    return dpzo__rdp_delta_upper(prec, alpha, r, eps, conv); /* convert_delta.c */
}

/* ---- public single-order and curve conversions ------------------------------ */

static dpzo_status check_conv(dpzo_ctx *ctx, dpzo_conversion conv)
{
    if (conv != DPZO_CONVERSION_IMPROVED && conv != DPZO_CONVERSION_STANDARD)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown conversion %d", (int)conv);
    return DPZO_OK;
}

static dpzo_status check_rdp_value(dpzo_ctx *ctx, double r)
{
    if (!(r >= 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "RDP value must be >= 0 (or +inf), got %g", r);
    return DPZO_OK;
}

dpzo_status dpzo_rdp_to_epsilon(dpzo_ctx *ctx, double alpha, double rdp, double delta,
                                dpzo_conversion conversion, double *epsilon)
{
    dpzo_status st;
    if ((st = dpzo__check_order(ctx, alpha)) || (st = check_rdp_value(ctx, rdp))
        || (st = dpzo__check_delta(ctx, delta)) || (st = check_conv(ctx, conversion)))
        return st;
    *epsilon = eps_formula(alpha, rdp, delta, conversion);
    return DPZO_OK;
}

dpzo_status dpzo_rdp_to_delta(dpzo_ctx *ctx, double alpha, double rdp, double epsilon,
                              dpzo_conversion conversion, double *delta)
{
    dpzo_status st;
    if ((st = dpzo__check_order(ctx, alpha)) || (st = check_rdp_value(ctx, rdp))
        || (st = dpzo__check_epsilon(ctx, epsilon)) || (st = check_conv(ctx, conversion)))
        return st;
    *delta = exp(log_delta_formula(alpha, rdp, epsilon, conversion));
    return DPZO_OK;
}

static dpzo_status curve_best(dpzo_ctx *ctx, const double *orders, const double *rdp, size_t n,
                              double target, int want_delta, dpzo_conversion conv,
                              double *best_value, double *best_order)
{
    dpzo_status st;
    if (n == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "an RDP curve needs at least one order");
    if ((st = check_conv(ctx, conv)))
        return st;
    double best = INFINITY, order = orders[0];
    for (size_t i = 0; i < n; i++) {
        if ((st = dpzo__check_order(ctx, orders[i])) || (st = check_rdp_value(ctx, rdp[i])))
            return st;
        double v = want_delta ? log_delta_formula(orders[i], rdp[i], target, conv)
                              : eps_formula(orders[i], rdp[i], target, conv);
        if (v < best) {
            best = v;
            order = orders[i];
        }
    }
    *best_value = want_delta ? exp(best) : best;
    *best_order = order;
    return DPZO_OK;
}

dpzo_status dpzo_rdp_curve_to_epsilon(dpzo_ctx *ctx, const double *orders, const double *rdp,
                                      size_t n, double delta, dpzo_conversion conversion,
                                      double *epsilon, double *order)
{
    dpzo_status st = dpzo__check_delta(ctx, delta);
    return st ? st : curve_best(ctx, orders, rdp, n, delta, 0, conversion, epsilon, order);
}

dpzo_status dpzo_rdp_curve_to_delta(dpzo_ctx *ctx, const double *orders, const double *rdp,
                                    size_t n, double epsilon, dpzo_conversion conversion,
                                    double *delta, double *order)
{
    dpzo_status st = dpzo__check_epsilon(ctx, epsilon);
    return st ? st : curve_best(ctx, orders, rdp, n, epsilon, 1, conversion, delta, order);
}

/* ---- event queries: order search ------------------------------------------- */

dpzo_rdp_options dpzo_rdp_options_default(void)
{
    dpzo_rdp_options o;
    memset(&o, 0, sizeof o);
    o.conversion = DPZO_CONVERSION_IMPROVED;
    o.grid = DPZO_ORDERS_CONTINUOUS;
    o.alpha_max = 1e5;
    return o;
}

typedef struct {
    dpzo_ctx *ctx;
    const dpzo__plan *plan;
    double target; /* delta (epsilon query) or epsilon (delta query) */
    int want_delta;
    dpzo_conversion conv;
    dpzo_status st;
} objective;

/* The value the order search minimises: epsilon, or log delta. A fast RDP of 0 in a
 * delta query is (at huge sigma) an underflowed positive value: its total variation term
 * log sqrt(1 - e^-0) = -inf would tie every order at delta 0 and leave the choice to
 * chance, though the certified RDP is positive; such orders are ranked by the
 * conversion term alone (RDP taken as 0). Likewise in an epsilon query, where the total
 * variation test would give epsilon 0 at every order (sigma 1e300, delta 5e-324 was
 * certified at order 8: epsilon 105.9 instead of 0.0074). */
static double rank_value(double alpha, double r, double target, int want_delta,
                         dpzo_conversion conv)
{
    if (!want_delta) {
        if (r == 0.0) { /* the total variation shortcut would tie every order at 0 */
            double e = conv_term(alpha, target, conv);
            return e > 0.0 ? e : 0.0;
        }
        return eps_formula(alpha, r, target, conv);
    }
    if (r == 0.0) {
        double ld = conv == DPZO_CONVERSION_STANDARD
                        ? (alpha - 1.0) * -target
                        : (alpha - 1.0) * (-target + log1p(-1.0 / alpha)) - log(alpha);
        return ld < 0.0 ? ld : 0.0;
    }
    return log_delta_formula(alpha, r, target, conv);
}

/* The fast objective at alpha: epsilon, or log delta. Stores the RDP in *rdp. */
static double obj_eval(objective *o, double alpha, double *rdp)
{
    dpzo_bound b;
    if (o->st == DPZO_OK)
        o->st = dpzo__plan_rdp(o->ctx, o->plan, alpha, 0, &b);
    if (o->st != DPZO_OK)
        return INFINITY;
    *rdp = b.value;
    return rank_value(alpha, b.value, o->target, o->want_delta, o->conv);
}

/* Proven lower bound on the objective at every order >= alpha, given RDP(alpha) = r. */
static double bound_above(const objective *o, double alpha, double r)
{
    if (!o->want_delta)
        return o->conv == DPZO_CONVERSION_STANDARD ? r : r - (1.0 + log(alpha)) / (alpha - 1.0);
    double d = r - o->target;
    double tv = r > 0.0 ? 0.5 * log(-expm1(-r)) : -INFINITY;
    if (!(d > 0.0))
        return -INFINITY;
    double lb;
    if (o->conv == DPZO_CONVERSION_STANDARD)
        lb = (alpha - 1.0) * d;
    else
        lb = alpha * d >= 1.0 ? (alpha - 1.0) * d - 1.0 - log(alpha) : -d + log(d);
    return lb < tv ? lb : tv;
}

/* Proven lower bound on epsilon at every order <= alpha (epsilon queries only). */
static double bound_below(const objective *o, double alpha)
{
    if (o->want_delta)
        return -INFINITY;
    if (o->conv == DPZO_CONVERSION_IMPROVED && !(alpha < 1.0 / o->target))
        return -INFINITY;
    return conv_term(alpha, o->target, o->conv);
}

static size_t coarse_orders(double alpha_max, double *out)
{
    static const double head[] = {1.01, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75};
    size_t n = 0;
    for (size_t i = 0; i < sizeof head / sizeof *head && head[i] < alpha_max; i++)
        out[n++] = head[i];
    for (double a = 2.0; a < alpha_max && n < COARSE_MAX - 1; a = fmax(a + 1.0, floor(a * 1.2)))
        out[n++] = a;
    out[n++] = alpha_max;
    return n;
}

static int plan_has_wor(const dpzo__plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->terms[i].leaf != NULL && p->terms[i].leaf->kind == DPZO_EVENT_WOR_SAMPLED)
            return 1;
    return 0;
}

/* Sampling without replacement: its bound is not unimodal in the order. It is
 * piecewise smooth between integers (log A is interpolated linearly), and it switches
 * between the WBK19 sum's regimes (the table of exact differences ends at 257, a sum's
 * largest terms move from its head to its tail as the order grows), so golden section
 * may end at a local minimum, or a hair off the integer kink it converges to. Both
 * integers around the search's order and every order of every named grid (opacus,
 * dp_accounting, tf) within [alpha_lo, alpha_max] are tried as well: the order chosen
 * then ranks no worse than any named grid's best. */
static dpzo_status wor_candidates(objective *o, double alpha_max, double alpha_lo,
                                  double *best, double *best_alpha, int *at_edge)
{
    static const dpzo_order_grid grids[] = {DPZO_ORDERS_OPACUS, DPZO_ORDERS_DP_ACCOUNTING,
                                            DPZO_ORDERS_TF};
    double r, found = *best_alpha;
    double near[2] = {floor(found), ceil(found)};
    for (size_t g = 0; g <= sizeof grids / sizeof *grids; g++) {
        const double *orders = near;
        size_t n = 2;
        if (g < sizeof grids / sizeof *grids)
            n = dpzo_order_grid_values(grids[g], &orders);
        for (size_t i = 0; i < n; i++) {
            double a = orders[i];
            if (!(a >= alpha_lo && a <= alpha_max) || a == found)
                continue;
            double v = obj_eval(o, a, &r);
            if (o->st)
                return o->st;
            if (v < *best) {
                *best = v;
                *best_alpha = a;
            }
        }
    }
    if (*best_alpha != found)
        *at_edge = *best_alpha <= alpha_lo || *best_alpha >= alpha_max;
    return DPZO_OK;
}

static dpzo_status continuous_search(objective *o, double alpha_max, double *best_alpha,
                                     int *at_edge)
{
    double grid[COARSE_MAX + LOW_MAX], val[COARSE_MAX + LOW_MAX], r;
    size_t n = coarse_orders(alpha_max, grid);
    for (size_t i = 0; i < n; i++)
        val[i] = NAN;
    size_t start = 0;
    while (start + 1 < n && grid[start] < 8.0)
        start++;
    double best = INFINITY;
    size_t bi = start;
    for (size_t i = start; i < n; i++) { /* upwards */
        val[i] = obj_eval(o, grid[i], &r);
        if (o->st)
            return o->st;
        if (val[i] < best) {
            best = val[i];
            bi = i;
        }
        if (bound_above(o, grid[i], r) >= best)
            break;
    }
    for (size_t i = start; i-- > 0;) { /* downwards */
        if (bound_below(o, grid[i]) >= best)
            break;
        val[i] = obj_eval(o, grid[i], &r);
        if (o->st)
            return o->st;
        if (val[i] <= best) {
            best = val[i];
            bi = i;
        }
    }
    if (!isfinite(best)) {
        *at_edge = (bi == 0 || bi == n - 1);
        *best_alpha = grid[bi];
        return DPZO_OK; /* infinite everywhere (e.g. sigma = 0): nothing to refine */
    }
    if (bi == 0) {
        /* The best order may lie below the grid's first, 1.01: at sigma 0.01, q 0.004, 1000
         * steps, delta 1e-5 epsilon is 4.49e6 at 1.01 and 8.44e4 at 1.0003, and the PLD's
         * tilt (alpha - 1) taken from 1.01 set its window far above the answer. alpha - 1 is
         * halved while that improves, down to LOW_MIN; an epsilon query stops where the
         * conversion term alone reaches the best. */
        double low[LOW_MAX], lval[LOW_MAX];
        size_t m = 0, lb = 0; /* orders tried; the best's position among them, plus one */
        for (double s = 0.5 * (grid[0] - 1.0); m < LOW_MAX && s >= LOW_MIN; s *= 0.5) {
            double a = 1.0 + s;
            if (bound_below(o, a) >= best) {
                low[m] = a; /* no order at or below a wins: the golden section's lower end */
                lval[m++] = INFINITY;
                break;
            }
            double v = obj_eval(o, a, &r);
            if (o->st)
                return o->st;
            low[m] = a;
            lval[m++] = v;
            if (!(v < best))
                break;
            best = v;
            lb = m;
        }
        /* the grid with the orders tried below it in front, ascending */
        memmove(grid + m, grid, n * sizeof *grid);
        memmove(val + m, val, n * sizeof *val);
        for (size_t i = 0; i < m; i++) {
            grid[m - 1 - i] = low[i];
            val[m - 1 - i] = lval[i];
        }
        n += m;
        bi = lb > 0 ? m - lb : m;
    }
    *at_edge = (bi == 0 || bi == n - 1);
    *best_alpha = grid[bi];
    /* golden section on [grid[bi-1], grid[bi+1]] */
    double a = grid[bi > 0 ? bi - 1 : 0], b = grid[bi + 1 < n ? bi + 1 : n - 1];
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = obj_eval(o, x1, &r), f2 = obj_eval(o, x2, &r);
    /* relative to alpha - 1 below the coarse grid (at 1 + 1e-8, 1e-6 b is 100 alpha - 1) */
    for (int it = 0; it < 80 && (b - a) > GOLDEN_RTOL * fmin(b, 100.0 * (b - 1.0)) && !o->st;
         it++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = obj_eval(o, x1, &r);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = obj_eval(o, x2, &r);
        }
    }
    if (o->st)
        return o->st;
    if (f1 < best) {
        best = f1;
        *best_alpha = x1;
    }
    if (f2 < best) {
        best = f2;
        *best_alpha = x2;
    }
    if (plan_has_wor(o->plan))
        return wor_candidates(o, alpha_max, grid[0], &best, best_alpha, at_edge);
    return DPZO_OK;
}

static dpzo_status query_plan(dpzo_ctx *ctx, const dpzo__plan *plan, double target,
                              int want_delta, const dpzo_rdp_options *opts, int certify,
                              dpzo_dp_result *out);

dpzo_status dpzo__event_query(dpzo_ctx *ctx, const dpzo_event *event, double target,
                              int want_delta, const dpzo_rdp_options *opts, int certify,
                              dpzo_dp_result *out)
{
    dpzo_rdp_options o = opts != NULL ? *opts : dpzo_rdp_options_default();
    dpzo_status st;
    if (event == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "event is NULL");
    if ((st = check_conv(ctx, o.conversion)))
        return st;
    if (o.grid == DPZO_ORDERS_CONTINUOUS && !(o.alpha_max > 1.01 && o.alpha_max <= DPZO_MAX_ORDER))
        return dpzo__fail(ctx, DPZO_EINVAL, "alpha_max must be in (1.01, %g], got %g",
                          (double)DPZO_MAX_ORDER, o.alpha_max);
    dpzo__plan plan;
    if ((st = dpzo__plan_build(ctx, event, 1, &plan)))
        return st;
    st = query_plan(ctx, &plan, target, want_delta, &o, certify, out);
    dpzo__plan_free(&plan);
    if (st)
        return st;
    /* the sampling bound (sampling_bound.c): delta(eps) <= 1 - P(the record is never used) at
     * every eps >= 0, whatever the RDP says (issue 28, item 4: sigma 0.0049367, q 2.076e-5,
     * one step, delta 0.018754 gave epsilon 20024.3, where the exact epsilon is 0) */
    double sb = dpzo__event_sampling_bound(event);
    if (want_delta) {
        out->delta = out->delta < sb ? out->delta : sb;
        out->delta_estimate = out->delta_estimate < sb ? out->delta_estimate : sb;
    } else if (target >= sb) {
        out->epsilon = out->epsilon_estimate = 0.0;
    }
    return DPZO_OK;
}

static dpzo_status query_plan(dpzo_ctx *ctx, const dpzo__plan *plan, double target,
                              int want_delta, const dpzo_rdp_options *opts, int certify,
                              dpzo_dp_result *out)
{
    dpzo_rdp_options o = *opts;
    dpzo_status st;
    objective obj = {ctx, plan, target, want_delta, o.conversion, DPZO_OK};
    double alpha = 0.0;
    int at_edge = 0;
    if (o.grid == DPZO_ORDERS_CONTINUOUS) {
        if ((st = continuous_search(&obj, o.alpha_max, &alpha, &at_edge)))
            return st;
    } else {
        const double *orders = o.orders;
        size_t n = o.n_orders;
        if (o.grid != DPZO_ORDERS_CUSTOM)
            n = dpzo_order_grid_values(o.grid, &orders);
        if (n == 0 || orders == NULL)
            return dpzo__fail(ctx, DPZO_EINVAL, "the order list is empty");
        double *curve = malloc(n * sizeof *curve);
        if (curve == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory for %zu orders", n);
        if ((st = dpzo__plan_rdp_curve(ctx, plan, orders, n, curve))) {
            free(curve);
            return st;
        }
        double best = INFINITY;
        size_t bi = 0;
        for (size_t i = 0; i < n; i++) {
            double v = rank_value(orders[i], curve[i], target, want_delta, o.conversion);
            if (v < best) {
                best = v;
                bi = i;
            }
        }
        free(curve);
        alpha = orders[bi];
        at_edge = (bi == 0 || bi == n - 1);
    }
    /* certify at the chosen order */
    dpzo_bound b;
    if ((st = dpzo__plan_rdp(ctx, plan, alpha, certify, &b)))
        return st;
    long prec = dpzo_ctx_precision(ctx);
    memset(out, 0, sizeof *out);
    out->order = alpha;
    out->rdp = b.upper;
    out->order_at_edge = at_edge;
    out->rounding = plan->rounding;
    if (want_delta) {
        out->epsilon = out->epsilon_estimate = target;
        out->delta_estimate = exp(log_delta_formula(alpha, b.value, target, o.conversion));
        out->delta = certify ? delta_upper(prec, alpha, b.upper, target, o.conversion)
                             : out->delta_estimate;
    } else {
        out->delta = out->delta_estimate = target;
        out->epsilon_estimate = eps_formula(alpha, b.value, target, o.conversion);
        out->epsilon = certify ? eps_upper(prec, alpha, b.upper, target, o.conversion)
                               : out->epsilon_estimate;
    }
    return DPZO_OK;
}

dpzo_status dpzo_event_epsilon(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                               const dpzo_rdp_options *opts, dpzo_dp_result *out)
{
    dpzo_status st = dpzo__check_delta(ctx, delta);
    return st ? st : dpzo__event_query(ctx, event, delta, 0, opts, 1, out);
}

dpzo_status dpzo_event_delta(dpzo_ctx *ctx, const dpzo_event *event, double epsilon,
                             const dpzo_rdp_options *opts, dpzo_dp_result *out)
{
    dpzo_status st = dpzo__check_epsilon(ctx, epsilon);
    return st ? st : dpzo__event_query(ctx, event, epsilon, 1, opts, 1, out);
}

/* ---- for other modules (internal.h) ------------------------------------------- */

double dpzo__rdp_eps_estimate(double alpha, double r, double delta, dpzo_conversion conv)
{
    return eps_formula(alpha, r, delta, conv);
}

double dpzo__rdp_eps_upper(long prec, double alpha, double r, double delta,
                           dpzo_conversion conv)
{
    return eps_upper(prec, alpha, r, delta, conv);
}
