/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/event_rdp.c: the public RDP curves of an event, fast and certified.
 *
 * The event is flattened into a plan (plan.c): composition adds RDP at each order
 * (Mironov 2017, Prop. 1), repetition multiplies it, and sampled Gaussian subtrees
 * become one term each. */
#include "rdp_internal.h"

/* Both public curve functions flatten the event once (exact: no rounding) and then
 * cost one evaluation per distinct term and order. */
static dpzo_status curve(dpzo_ctx *ctx, const dpzo_event *event, const double *orders,
                        size_t n_orders, int certified, dpzo_bound *out, double *values)
{
    if (n_orders > 0 && (orders == NULL || (certified ? out == NULL : values == NULL)))
        return dpzo__fail(ctx, DPZO_EINVAL, "orders and the output array must not be NULL");
    dpzo__plan plan;
    dpzo_status st = dpzo__plan_build(ctx, event, 0, &plan);
    if (st == DPZO_OK)
        st = certified ? dpzo__plan_rdp_curve_certified(ctx, &plan, orders, n_orders, out)
                       : dpzo__plan_rdp_curve(ctx, &plan, orders, n_orders, values);
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
