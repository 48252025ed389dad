/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target lmo_rdp: dpzo_lmo_epsilon (the LMO noise's RDP accountant: bounds mgf, exact,
 * pure, best; sampling none, Poisson, without replacement; scalar and L1 vector), the LMO
 * parameters and options from the whole range (max_order at most 1024: the work grows
 * with it, dpzo/lmo.h).
 * Checks: status OK or an error with a message; when OK, epsilon and eps0 are not NaN and
 * >= 0; halving the sensitivity (the same noise relative to a sensitivity twice as small)
 * never raises epsilon. */
#include "lmo_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in);
    dpzo_lmo l;
    fz_lmo(&in, &l);
    dpzo_lmo_account_options o = fz_lmo_options(&in);
    FZ_LOG("  lmo wG %.17g k %.17g theta %.17g wE %.17g lam %.17g wU %.17g a %.17g b %.17g\n"
           "  bound %d sampling %d l1 %d C %.17g q %.17g B %llu n %llu T %llu delta %.17g "
           "max_order %u\n",
           l.gamma_weight, l.gamma_shape, l.gamma_scale, l.exp_weight, l.exp_rate,
           l.uniform_weight, l.uniform_low, l.uniform_high, (int)o.bound, (int)o.sampling,
           o.vector_l1, o.sensitivity, o.q, (unsigned long long)o.batch,
           (unsigned long long)o.n, (unsigned long long)o.steps, o.delta, o.max_order);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_lmo_account_result r, r2;
    if (fz_ok(ctx, dpzo_lmo_epsilon(ctx, &l, &o, &r), "dpzo_lmo_epsilon")) {
        fz_check_upper("dpzo_lmo_epsilon", r.epsilon, NAN);
        if (isnan(r.eps0) || r.eps0 < 0.0)
            fz_fail("dpzo_lmo_epsilon: eps0 %.17g", r.eps0);
        if (mode & 1) {
            dpzo_lmo_account_options o2 = o;
            o2.sensitivity = o.sensitivity / 2.0;
            if (o2.sensitivity > 0.0 &&
                fz_ok(ctx, dpzo_lmo_epsilon(ctx, &l, &o2, &r2), "dpzo_lmo_epsilon (C/2)") &&
                !fz_le(r2.epsilon, r.epsilon, 1e-6, 1e-12))
                fz_fail("dpzo_lmo_epsilon: epsilon %.17g at sensitivity %.17g rises to %.17g "
                        "at half of it",
                        r.epsilon, o.sensitivity, r2.epsilon);
        }
    }
    dpzo_ctx_free(ctx);
    return 0;
}
