/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit_lmo.c: the LMO noise as a mechanism of the audit (dpzo/audit.h).
 *
 * One scalar release of C X per step (docs/lmo.md). The upper bound is the LMO RDP
 * accountant's (dpzo_lmo_epsilon): Poisson, fixed batches (without replacement, WBK), or
 * shuffled batches as ceil(T/k) unsampled releases (no amplification). There is no lower
 * bound: the PLD built from the noise's density (dpzo_lmo_pld_epsilon), which gave one, was
 * inconsistent across grids on a sampled run until its root finder was fixed (docs/lmo.md,
 * PLD); the audit has not been switched back to it, so an LMO claim is HOLDS or
 * UNDETERMINED, never VIOLATED. The lower-bound pairs to use then: Poisson and full batches
 * realise the mechanism itself; fixed batches of B of n realise the Poisson pair at
 * q = B/n with shift C (swap a zero contribution for a full one). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpzo/audit_claim.h"

static dpzo_status lmo_bounds(dpzo_ctx *ctx, void *data, const dpzo_claim *c,
                              dpzo_sampling_scheme scheme, uint64_t steps, double delta,
                              double grid, const dpzo_audit_options *opts, dpzo_audit_bounds *b)
{
    (void)opts;
    (void)grid;
    const dpzo_lmo *lmo = data;
    double sens = dpzo_claim_sensitivity(c);
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    o.sensitivity = sens;
    o.delta = delta;
    o.steps = steps;
    switch (scheme) {
    case DPZO_SAMPLING_POISSON:
        o.sampling = DPZO_LMO_SAMPLING_POISSON;
        o.q = c->sampling_rate;
        break;
    case DPZO_SAMPLING_FIXED:
        o.sampling = DPZO_LMO_SAMPLING_WOR;
        o.batch = c->batch_size;
        o.n = c->dataset_size;
        break;
    case DPZO_SAMPLING_SHUFFLED: {
        uint64_t k = c->dataset_size / c->batch_size;
        o.steps = (steps + k - 1) / k;
        break;
    }
    default:
        break;
    }
    dpzo_lmo_account_result r;
    dpzo_status st = dpzo_lmo_epsilon(ctx, lmo, &o, &r);
    if (st)
        return st;
    b->rdp = r.epsilon;
    b->rdp_order = r.order;
    b->upper = r.epsilon;
    b->upper_from = "rdp";
    /* no lower bound and no PLD yet (the audit has not been switched back to the fixed LMO
     * PLD, docs/audit.md 10); the pld fields stay NaN (not computed) */
    return DPZO_OK;
}

dpzo_status dpzo_lmo_audit_mechanism(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                     dpzo_audit_mechanism *mech)
{
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (st)
        return st;
    memset(mech, 0, sizeof *mech);
    mech->data = (void *)lmo;
    mech->name = "LMO";
    mech->bounds = lmo_bounds;
    mech->pld_grid = 1e-3; /* the density-based PLD is costly: start coarse, refine if needed */
    snprintf(mech->describe, sizeof mech->describe,
             "LMO noise: X | Y ~ Laplace(0, C/Y), Y = %g Gamma(%g, %g) + %g Exp(rate %g) + "
             "%g U(%g, %g)",
             lmo->gamma_weight, lmo->gamma_shape, lmo->gamma_scale, lmo->exp_weight,
             lmo->exp_rate, lmo->uniform_weight, lmo->uniform_low, lmo->uniform_high);
    return DPZO_OK;
}
