/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/rdp.h: Renyi differential privacy (RDP) curves of mechanisms and events.
 *
 * Two arithmetic paths:
 *  - fast: IEEE double, log-space sums; relative error stated in docs/accountant.md
 *    and checked against the certified path by the test suite;
 *  - certified: MPFR interval arithmetic, every rounding directed outward and every
 *    truncated series tail bounded analytically; `upper` is a proven upper bound on
 *    the exact RDP, `lower` a proven lower bound.
 *
 * Orders alpha must satisfy 1 < alpha <= DPZO_MAX_ORDER (1e6: the integer sums cost
 * O(alpha) terms). Results may be +inf (e.g. sigma = 0). */
#define DPZO_MAX_ORDER 1000000
#ifndef DPZO_RDP_H
#define DPZO_RDP_H

#include <stdint.h>
#include "dpzo/status.h"
#include "dpzo/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Gaussian mechanism, sensitivity 1: alpha / (2 sigma^2). */
dpzo_status dpzo_rdp_gaussian(dpzo_ctx *ctx, double sigma, double alpha, double *rdp);

/* Laplace mechanism, sensitivity 1, scale b (Mironov 2017, Prop. 6). */
dpzo_status dpzo_rdp_laplace(dpzo_ctx *ctx, double b, double alpha, double *rdp);
dpzo_status dpzo_rdp_laplace_certified(dpzo_ctx *ctx, double b, double alpha,
                                       dpzo_bound *rdp);

/* Poisson-sampled Gaussian (Mironov-Talwar-Zhang 2019): integer orders by the exact
 * binomial sum in log space, fractional orders by the two-sided erfc series with
 * signs respected. Closed forms for q = 0, q = 1, sigma = 0. */
dpzo_status dpzo_rdp_sampled_gaussian(dpzo_ctx *ctx, double q, double sigma, double alpha,
                                      double *rdp);
dpzo_status dpzo_rdp_sampled_gaussian_certified(dpzo_ctx *ctx, double q, double sigma,
                                                double alpha, dpzo_bound *rdp);

/* Gaussian on a batch of `batch` records sampled without replacement from `n`,
 * replace-one adjacency (Wang-Balle-Kasiviswanathan 2019, Thm. 27 for integer
 * orders, Cor. 10 interpolation of the CGF for fractional orders). An upper bound
 * on the RDP; the result's lower/upper bracket that bound, value is its estimate. */
dpzo_status dpzo_rdp_wor_gaussian(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                                  double alpha, dpzo_bound *rdp);

/* RDP of a whole event at each order (fast path). rdp[i] for orders[i]. */
dpzo_status dpzo_event_rdp(dpzo_ctx *ctx, const dpzo_event *event, const double *orders,
                           size_t n_orders, double *rdp);
/* Certified: out[i].upper is a proven upper bound on the event's RDP at orders[i]. */
dpzo_status dpzo_event_rdp_certified(dpzo_ctx *ctx, const dpzo_event *event,
                                     const double *orders, size_t n_orders, dpzo_bound *out);

#ifdef __cplusplus
}
#endif
#endif
