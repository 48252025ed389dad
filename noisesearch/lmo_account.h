/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_account.h: accounting pieces shared with the search. */
#ifndef DPZO_LMO_ACCOUNT_H
#define DPZO_LMO_ACCOUNT_H

#include "lmo_internal.h"

#define DPZO_LMO_DEFAULT_MAX_ORDER 256
#define DPZO_LMO_MAX_ORDER 4096

/* The integer orders at which the run's epsilon is evaluated: every order to 64, then
 * every 2nd to 128, 4th to 256, 8th beyond, and max_order. out needs max_order + 1. */
size_t dpzo__lmo_eval_orders(unsigned max_order, unsigned *out);
/* q for Poisson, batch/n without replacement, 1 without sampling. */
double dpzo__lmo_sampling_rate(const dpzo_lmo_account_options *o);
dpzo_status dpzo__lmo_check_options(dpzo_ctx *ctx, const dpzo_lmo_account_options *o);

/* Per-step curve at l = 2..L: up[l] proven upper bounds, est[l] estimates (arrays of
 * L + 1 entries; 0 and 1 unused). */
dpzo_status dpzo__lmo_step_curve(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c,
                                 dpzo_lmo_bound_kind kind, unsigned L, double *up, double *est);

/* Total epsilon of the run from a per-step curve base[l] (l = 2..max_order) and eps0:
 * double precision (ranking), and proven (upper bounds in, upward rounding). */
double dpzo__lmo_total_eps_fast(const double *base, double eps0,
                                const dpzo_lmo_account_options *o, double *order);
dpzo_status dpzo__lmo_total_eps_certified(dpzo_ctx *ctx, const double *base_up, double eps0_up,
                                          const dpzo_lmo_account_options *o,
                                          const double *fast_base, double fast_eps0,
                                          dpzo_lmo_account_result *out);

#endif
