/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/convert.h: from RDP to (epsilon, delta), and the epsilon / delta of an event.
 *
 * Conversions (for one order alpha > 1 with RDP value r):
 *  - improved (default; Balle et al. 2020 Thm 21 = Canonne-Kamath-Steinke 2020
 *    Prop 12 = Asoodeh et al. 2020): eps = r + log1p(-1/alpha) - log(delta*alpha)/(alpha-1),
 *    delta = exp((alpha-1)(r - eps + log1p(-1/alpha))) / alpha;
 *  - standard (Mironov 2017 Prop 3): eps = r + log(1/delta)/(alpha-1).
 * delta is also bounded by sqrt(1 - exp(-r)) (Bretagnolle-Huber; KL <= D_alpha).
 *
 * The order is optimised over a grid or, by default, continuously. The returned
 * epsilon is computed from the certified RDP upper bound at the chosen order with
 * upward rounding, so it is a proven upper bound whatever order was chosen. */
#ifndef DPZO_CONVERT_H
#define DPZO_CONVERT_H

#include "dpzo/status.h"
#include "dpzo/event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DPZO_CONVERSION_IMPROVED = 0, DPZO_CONVERSION_STANDARD = 1 } dpzo_conversion;

typedef enum {
    DPZO_ORDERS_CONTINUOUS = 0, /* optimise alpha over (1, alpha_max] */
    DPZO_ORDERS_OPACUS,         /* Opacus RDPAccountant.DEFAULT_ALPHAS (151 orders) */
    DPZO_ORDERS_TF,             /* TF Privacy compute_dp_sgd_privacy (72 orders) */
    DPZO_ORDERS_DP_ACCOUNTING,  /* dp_accounting DEFAULT_RDP_ORDERS (156 orders) */
    DPZO_ORDERS_CUSTOM          /* an explicit list */
} dpzo_order_grid;

/* The named grid's orders (static storage); returns the count, 0 for CONTINUOUS/CUSTOM. */
size_t dpzo_order_grid_values(dpzo_order_grid grid, const double **orders);
/* Parses "default", "continuous", "opacus", "tf", "dp_accounting". */
dpzo_status dpzo_order_grid_parse(dpzo_ctx *ctx, const char *name, dpzo_order_grid *grid);

typedef struct {
    dpzo_conversion conversion;
    dpzo_order_grid grid;
    const double *orders; /* for DPZO_ORDERS_CUSTOM */
    size_t n_orders;
    double alpha_max;     /* continuous search bound, default 1e5 */
} dpzo_rdp_options;

/* conversion IMPROVED, grid CONTINUOUS, alpha_max 1e5. */
dpzo_rdp_options dpzo_rdp_options_default(void);

typedef struct {
    double epsilon;          /* proven upper bound (certified RDP, upward rounding) */
    double epsilon_estimate; /* the same conversion from the fast RDP value */
    double delta;            /* proven upper bound for delta queries, else the input */
    double delta_estimate;
    double order;            /* the order that achieved the optimum */
    double rdp;              /* certified RDP upper bound at that order */
    int order_at_edge;       /* 1 when the optimum sits at the first/last allowed order */
    double rounding;         /* 0, or (compositions of more than 4096 distinct sampled
                                Gaussians) the relative step to which each sigma was
                                rounded down and q up: a dominating, still proven bound */
} dpzo_dp_result;

/* Single-order conversions from an RDP value (exact formulas, double rounding;
 * use the event functions below for certified answers). */
dpzo_status dpzo_rdp_to_epsilon(dpzo_ctx *ctx, double alpha, double rdp, double delta,
                                dpzo_conversion conversion, double *epsilon);
dpzo_status dpzo_rdp_to_delta(dpzo_ctx *ctx, double alpha, double rdp, double epsilon,
                              dpzo_conversion conversion, double *delta);

/* Best epsilon over a tabulated curve (orders[i], rdp[i]); reports the order. */
dpzo_status dpzo_rdp_curve_to_epsilon(dpzo_ctx *ctx, const double *orders, const double *rdp,
                                      size_t n, double delta, dpzo_conversion conversion,
                                      double *epsilon, double *order);
dpzo_status dpzo_rdp_curve_to_delta(dpzo_ctx *ctx, const double *orders, const double *rdp,
                                    size_t n, double epsilon, dpzo_conversion conversion,
                                    double *delta, double *order);

/* epsilon(delta) and delta(epsilon) of an event. opts may be NULL (defaults). */
dpzo_status dpzo_event_epsilon(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                               const dpzo_rdp_options *opts, dpzo_dp_result *out);
dpzo_status dpzo_event_delta(dpzo_ctx *ctx, const dpzo_event *event, double epsilon,
                             const dpzo_rdp_options *opts, dpzo_dp_result *out);

#ifdef __cplusplus
}
#endif
#endif
