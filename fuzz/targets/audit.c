/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target audit: dpzo_audit_claim on a claim whose every field comes from the input
 * (Gaussian, or the LMO noise through dpzo_lmo_audit_mechanism). The PLD's work grows with
 * 1/grid and the refinement goes down to pld_grid_min (dpzo/audit.h): the target keeps the
 * grid in [1e-3, 0.1], pld_grid_min >= 1e-4 and the memory at 64 MiB.
 * Checks: status OK or an error with a message; when OK, upper is not NaN and >= 0, the
 * lower end is >= 0 and <= upper, the verdict follows the rule of dpzo_verdict_of, and a
 * HOLDS verdict on a Gaussian with Poisson or full batches is not below what one step
 * alone spends. */
#include "lmo_common.h"
#include "dpzo/audit.h"
#include "dpzo/audit_claim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in), sel = fz_u8(&in);
    dpzo_claim c;
    dpzo_claim_init(&c);
    c.noise_multiplier = fz_double(&in);
    if (mode & 1)
        c.sensitivity = fz_double(&in);
    c.sampling = (dpzo_sampling_scheme)(sel % 4);
    c.sampling_rate = fz_double(&in);
    c.batch_size = fz_count(&in);
    c.dataset_size = fz_count(&in);
    c.steps = fz_count(&in);
    c.adjacency = (dpzo_adjacency)((sel >> 2) % 4);
    c.epsilon = fz_double(&in);
    c.delta = fz_double(&in);
    if (mode & 2)
        c.pipeline = (dpzo_sampling_scheme)((sel >> 4) % 5);
    if (mode & 4)
        c.effective_batch_size = fz_count(&in);
    dpzo_audit_options o;
    dpzo_audit_options_default(&o);
    o.pld_grid = fz_double(&in);
    if (!(o.pld_grid >= 1e-3 && o.pld_grid <= 0.1))
        o.pld_grid = 1e-3;
    o.pld_grid_min = o.pld_grid / 10.0;
    o.memory_limit = (size_t)64 << 20;
    o.prv = (mode >> 3) & 1;
    o.calibrate = (mode >> 4) & 1;
    FZ_LOG("  mode %u sigma %.17g sensitivity %.17g sampling %d q %.17g B %llu n %llu T %llu "
           "adjacency %d eps %.17g delta %.17g pipeline %d effective %llu grid %.17g\n",
           mode, c.noise_multiplier, c.sensitivity, (int)c.sampling, c.sampling_rate,
           (unsigned long long)c.batch_size, (unsigned long long)c.dataset_size,
           (unsigned long long)c.steps, (int)c.adjacency, c.epsilon, c.delta, (int)c.pipeline,
           (unsigned long long)c.effective_batch_size, o.pld_grid);
    dpzo_lmo l;
    int lmo = (mode >> 5) & 1;
    if (lmo)
        fz_lmo(&in, &l);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_audit_mechanism mech;
    const dpzo_audit_mechanism *m = NULL;
    if (lmo) {
        if (!fz_ok(ctx, dpzo_lmo_audit_mechanism(ctx, &l, &mech), "dpzo_lmo_audit_mechanism")) {
            dpzo_ctx_free(ctx);
            return 0;
        }
        m = &mech;
    }
    dpzo_audit_result *r = malloc(sizeof *r);
    if (r == NULL)
        abort();
    if (fz_ok(ctx, dpzo_audit_claim(ctx, &c, m, &o, r), "dpzo_audit_claim")) {
        const dpzo_audit_bounds *b = &r->bounds;
        fz_check_upper("dpzo_audit_claim", b->upper, b->lower);
        if (!(b->lower >= 0.0))
            fz_fail("dpzo_audit_claim: lower end %.17g", b->lower);
        if (r->verdict != dpzo_verdict_of(b->lower, b->upper, c.epsilon))
            fz_fail("dpzo_audit_claim: verdict %s for [%.17g, %.17g] against %.17g",
                    dpzo_verdict_name(r->verdict), b->lower, b->upper, c.epsilon);
        double s = dpzo_claim_sensitivity(&c);
        if (!lmo && r->verdict == DPZO_VERDICT_HOLDS && s > 0.0 && c.steps > 0 &&
            (c.sampling == DPZO_SAMPLING_POISSON || c.sampling == DPZO_SAMPLING_FULL))
            fz_check_not_below_one_step("dpzo_audit_claim HOLDS",
                                        c.sampling == DPZO_SAMPLING_FULL ? 1.0 : c.sampling_rate,
                                        c.noise_multiplier / s, c.epsilon, c.delta);
        if (r->has_pipeline) {
            const dpzo_audit_bounds *p = &r->pipeline_bounds;
            fz_check_upper("dpzo_audit_claim (pipeline)", p->upper, p->lower);
        }
    }
    free(r);
    dpzo_ctx_free(ctx);
    return 0;
}
