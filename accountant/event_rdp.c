/* accountant/event_rdp.c: the RDP curve of an event tree, fast and certified.
 *
 * Composition adds RDP at each order (Mironov 2017, Prop. 1); self-composition
 * multiplies by the count. Sampling amplification is available for Gaussian
 * subtrees (a composition of Gaussians queried on the same batch is one Gaussian
 * with sigma_eff^-2 = sum sigma_i^-2, as in dp_accounting). In the certified path
 * upper bounds are added and multiplied with one ulp of upward slack per
 * operation (round-to-nearest errs by at most half an ulp), lower bounds likewise
 * downward, so sums of 10^6 events stay proven. */
#include <math.h>
#include "internal.h"

static double up(double x) { return isfinite(x) ? nextafter(x, INFINITY) : x; }
static double down(double x)
{
    double d = isfinite(x) ? nextafter(x, -INFINITY) : x;
    return d < 0.0 ? 0.0 : d;
}

/* One event at one order into b (value, lower, upper); certified selects the path. */
static dpzo_status rdp_at(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                          dpzo_bound *b)
{
    dpzo_status st = DPZO_OK;
    double sigma;
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
    case DPZO_EVENT_POISSON_SAMPLED: {
        double q = e->kind == DPZO_EVENT_GAUSSIAN ? 1.0 : e->param;
        if (e->kind == DPZO_EVENT_GAUSSIAN)
            sigma = e->param;
        else if ((st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
            return st;
        if (isinf(sigma) || q == 0.0) {
            *b = (dpzo_bound){0.0, 0.0, 0.0};
            return DPZO_OK;
        }
        if (certified)
            return dpzo_rdp_sampled_gaussian_certified(ctx, q, sigma, alpha, b);
        st = dpzo_rdp_sampled_gaussian(ctx, q, sigma, alpha, &b->value);
        b->lower = b->upper = b->value;
        return st;
    }
    case DPZO_EVENT_LAPLACE:
        if (certified)
            return dpzo_rdp_laplace_certified(ctx, e->param, alpha, b);
        st = dpzo_rdp_laplace(ctx, e->param, alpha, &b->value);
        b->lower = b->upper = b->value;
        return st;
    case DPZO_EVENT_WOR_SAMPLED:
        if ((st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
            return st;
        if (isinf(sigma)) {
            *b = (dpzo_bound){0.0, 0.0, 0.0};
            return DPZO_OK;
        }
        return dpzo_rdp_wor_gaussian(ctx, e->batch, e->n, sigma, alpha, b);
    case DPZO_EVENT_SELF_COMPOSED: {
        if (e->count == 0) {
            *b = (dpzo_bound){0.0, 0.0, 0.0};
            return DPZO_OK;
        }
        if ((st = rdp_at(ctx, e->inner, alpha, certified, b)))
            return st;
        double c = (double)e->count;
        b->value *= c;
        b->lower = down(b->lower * c);
        b->upper = up(b->upper * c);
        return DPZO_OK;
    }
    case DPZO_EVENT_COMPOSED: {
        dpzo_bound sum = {0.0, 0.0, 0.0};
        for (size_t i = 0; i < e->n_children; i++) {
            dpzo_bound c;
            if ((st = rdp_at(ctx, e->children[i], alpha, certified, &c)))
                return st;
            sum.value += c.value;
            sum.lower = down(sum.lower + c.lower);
            sum.upper = up(sum.upper + c.upper);
        }
        *b = sum;
        return DPZO_OK;
    }
    }
    return dpzo__fail(ctx, DPZO_EINVAL, "corrupt event (kind %d)", (int)e->kind);
}

dpzo_status dpzo__event_rdp_one(dpzo_ctx *ctx, const dpzo_event *event, double alpha,
                                int certified, dpzo_bound *out)
{
    dpzo_status st = dpzo__check_order(ctx, alpha);
    return st ? st : rdp_at(ctx, event, alpha, certified, out);
}

/* Both public curve functions flatten the event once (exact: no rounding) and then
 * cost one evaluation per distinct term and order. */
static dpzo_status curve(dpzo_ctx *ctx, const dpzo_event *event, const double *orders,
                        size_t n_orders, int certified, dpzo_bound *out, double *values)
{
    dpzo__plan plan;
    dpzo_status st = dpzo__plan_build(ctx, event, 0, &plan);
    if (st == DPZO_OK && !certified) {
        st = dpzo__plan_rdp_curve(ctx, &plan, orders, n_orders, values);
        n_orders = 0;
    }
    for (size_t i = 0; i < n_orders && st == DPZO_OK; i++) {
        dpzo_bound b;
        st = dpzo__plan_rdp(ctx, &plan, orders[i], certified, &b);
        if (st == DPZO_OK && out != NULL)
            out[i] = b;
        if (st == DPZO_OK && values != NULL)
            values[i] = b.value;
    }
    dpzo__plan_free(&plan);
    return st;
}

dpzo_status dpzo_event_rdp(dpzo_ctx *ctx, const dpzo_event *event, const double *orders,
                           size_t n_orders, double *rdp)
{
    return curve(ctx, event, orders, n_orders, 0, NULL, rdp);
}

dpzo_status dpzo_event_rdp_certified(dpzo_ctx *ctx, const dpzo_event *event,
                                     const double *orders, size_t n_orders, dpzo_bound *out)
{
    return curve(ctx, event, orders, n_orders, 1, out, NULL);
}
