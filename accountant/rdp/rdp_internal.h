/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_internal.h: the RDP accountant's private declarations, shared by its
 * files and used by the rooms above it (pld.c's tilt and fallback, calibrate.c, the noise
 * search's LMO accounting). Moved here from the accountant's one internal.h. */
#ifndef DPZO_RDP_INTERNAL_H
#define DPZO_RDP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

/* The double estimate of dpzo_rdp_wor_gaussian's bound (rdp_wor.c), for ranking orders:
 * the same terms and stopping rules, not certified. */
dpzo_status dpzo__rdp_wor_fast(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                               double alpha, double *rdp);

/* One-order conversion from RDP r to epsilon (convert.h formulas): the double
 * estimate, and a proven upper bound (MPFR at prec bits, r taken as an upper bound). */
/* rdp_leaves.c: RDP of a non-private, zCDP, randomized response or discrete Laplace leaf
 * at order alpha (fast: value = lower = upper; certified: a proven enclosure). */
dpzo_status dpzo__rdp_leaf(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                           dpzo_bound *out);
/* rdp_mog.c: RDP of a mixture-of-Gaussians or truncated sampled Gaussian leaf (same
 * contract as dpzo__rdp_leaf; alpha already checked). */
dpzo_status dpzo__rdp_mog_leaf(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                               dpzo_bound *out);
/* rdp_mog.c: bounds on the probability that a truncated sampled Gaussian leaf's sample is
 * cut, P(Bin(dataset_size, q) >= B): the upper one returned (0: never cut), the lower one in
 * *lower (0 where only the upper one is computed); and q_max = qB/(B + 1) rounded up, at
 * most q, the largest rate at which a cut sample holds the record. */
double dpzo__tsg_cut_prob(dpzo_ctx *ctx, const dpzo_event *e, double *lower);
double dpzo__tsg_qmax_up(const dpzo_event *e);
double dpzo__rdp_eps_estimate(double alpha, double r, double delta, dpzo_conversion conv);
double dpzo__rdp_eps_upper(long prec, double alpha, double r, double delta,
                           dpzo_conversion conv);
/* The same for delta at eps: log delta (estimate), and delta (proven upper bound)
 * (convert_delta.c). */
double dpzo__rdp_log_delta_estimate(double alpha, double r, double eps, dpzo_conversion conv);
double dpzo__rdp_delta_upper(long prec, double alpha, double r, double eps,
                             dpzo_conversion conv);

/* The RDP of an inner event at any order (fast, or its certified enclosure), as plan.c
 * evaluates it: handed to rdp_select.c as a callback with the inner event's plan, so that
 * the recursion (a selection of a selection...) needs no call cycle between the files. */
typedef dpzo_status (*dpzo__rdp_oracle)(dpzo_ctx *ctx, const void *inner, double alpha,
                                        int certified, dpzo_bound *out);

/* rdp_select.c: RDP of a repeat-and-select event (Papernot-Steinke 2022; `rdp_of(inner,..)`
 * is its inner event's RDP) or of a Gaussian on a sample drawn with replacement (rdp_of
 * unused), at order alpha (fast: value = lower = upper, an estimate of the bound;
 * certified: the bound's enclosure, its upper end proven). */
dpzo_status dpzo__rdp_select(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                             dpzo_bound *out, dpzo__rdp_oracle rdp_of, const void *inner);

/* epsilon (want_delta = 0) or delta query; certify = 0 skips the certified step and
 * reports the fast estimate in epsilon/delta as well (used inside searches). */
dpzo_status dpzo__event_query(dpzo_ctx *ctx, const dpzo_event *event, double target,
                              int want_delta, const dpzo_rdp_options *opts, int certify,
                              dpzo_dp_result *out);

/* An event flattened to sum_i count_i RDP(term_i) (plan.c). A term is a sampled
 * Gaussian (leaf == NULL: q, sigma) or another leaf event. */
#define DPZO_PLAN_MAX_DISTINCT 4096
typedef struct {
    double q, sigma;
    const dpzo_event *leaf;
    double count;
} dpzo__plan_term;
typedef struct {
    dpzo__plan_term *terms;
    size_t n, cap;
    double rounding; /* 0, or the relative grid step of a dominating rounding */
} dpzo__plan;

dpzo_status dpzo__plan_build(dpzo_ctx *ctx, const dpzo_event *event, int allow_rounding,
                             dpzo__plan *plan);
void dpzo__plan_free(dpzo__plan *plan);
dpzo_status dpzo__plan_rdp(dpzo_ctx *ctx, const dpzo__plan *plan, double alpha, int certified,
                           dpzo_bound *out);
/* Fast values at many orders at once (shares per-term work across orders). */
dpzo_status dpzo__plan_rdp_curve(dpzo_ctx *ctx, const dpzo__plan *plan, const double *orders,
                                 size_t n, double *out);
/* Certified bounds at many orders: dpzo__plan_rdp(certified) at each, terms outside. */
dpzo_status dpzo__plan_rdp_curve_certified(dpzo_ctx *ctx, const dpzo__plan *plan,
                                           const double *orders, size_t n, dpzo_bound *out);

#endif
