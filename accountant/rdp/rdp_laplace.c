/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_laplace.c: RDP of the Laplace mechanism (Mironov 2017, Prop. 6).
 *
 * Sensitivity 1, scale b, eps = 1/b:
 *   RDP(alpha) = eps + log1p((alpha-1) expm1((1-2 alpha) eps) / (2 alpha - 1)) / (alpha-1),
 * an exact closed form. The certified variant evaluates it in interval arithmetic. */
#include <math.h>
#include "rdp_internal.h"
#include "ival.h"

static dpzo_status check_scale(dpzo_ctx *ctx, double b)
{
    if (!(b >= 0.0) || !isfinite(b))
        return dpzo__fail(ctx, DPZO_EINVAL, "Laplace scale must be finite and >= 0, got %g", b);
    return DPZO_OK;
}

dpzo_status dpzo_rdp_laplace(dpzo_ctx *ctx, double b, double alpha, double *rdp)
{
    dpzo_status st;
    if ((st = check_scale(ctx, b)) || (st = dpzo__check_order(ctx, alpha)))
        return st;
    if (b == 0.0) {
        *rdp = INFINITY;
        return DPZO_OK;
    }
    double eps = 1.0 / b;
    double r = eps + log1p((alpha - 1.0) * expm1((1.0 - 2.0 * alpha) * eps) / (2.0 * alpha - 1.0))
                         / (alpha - 1.0);
    *rdp = r > 0.0 ? r : 0.0;
    return DPZO_OK;
}

dpzo_status dpzo_rdp_laplace_certified(dpzo_ctx *ctx, double b, double alpha, dpzo_bound *rdp)
{
    double fast;
    dpzo_status st = dpzo_rdp_laplace(ctx, b, alpha, &fast);
    if (st)
        return st;
    if (b == 0.0) {
        *rdp = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    mpfr_prec_t p = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    ival eps, a, am1, t, u, one;
    ival *all[] = {&eps, &a, &am1, &t, &u, &one};
    for (size_t i = 0; i < 6; i++)
        ival_init(all[i], p);
    ival_set_ui(&one, 1);
    ival_set_d(&t, b);
    ival_div(&eps, &one, &t);
    ival_set_d(&a, alpha);
    ival_sub(&am1, &a, &one);
    ival_add(&t, &a, &a);
    ival_sub(&t, &one, &t);          /* 1 - 2 alpha */
    ival_mul(&u, &t, &eps);
    ival_expm1(&u, &u);
    ival_mul(&u, &u, &am1);
    ival_neg(&t, &t);                /* 2 alpha - 1 */
    ival_div(&u, &u, &t);
    ival_log1p(&u, &u);
    ival_div(&u, &u, &am1);
    ival_add(&u, &u, &eps);
    double lo = ival_lo_d(&u), hi = ival_hi_d(&u);
    for (size_t i = 0; i < 6; i++)
        ival_clear(all[i]);
    if (lo < 0.0)
        lo = 0.0;
    double v = fast < lo ? lo : fast > hi ? hi : fast;
    *rdp = (dpzo_bound){v, lo, hi};
    return DPZO_OK;
}
