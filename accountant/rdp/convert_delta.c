/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/convert_delta.c: RDP -> delta at one order (the formulas of
 * include/dpzo/convert.h), fast and certified. Moved out of convert.c so that rdp_select.c
 * (the Poisson repeat-and-select bound needs the inner event's delta) can use them without a
 * call cycle through convert.c's order search, which evaluates plans. */
#include <math.h>
#include "rdp_internal.h"
#include "ival.h"

/* log delta at order alpha from RDP r (the double estimate) */
double dpzo__rdp_log_delta_estimate(double alpha, double r, double eps, dpzo_conversion conv)
{
    if (r == INFINITY)
        return 0.0;
    double ld = conv == DPZO_CONVERSION_STANDARD
                    ? (alpha - 1.0) * (r - eps)
                    : (alpha - 1.0) * (r - eps + log1p(-1.0 / alpha)) - log(alpha);
    double tv = r > 0.0 ? 0.5 * log(-expm1(-r)) : -INFINITY;
    if (tv < ld)
        ld = tv;
    return ld < 0.0 ? ld : 0.0;
}

/* Upper bound on delta at order alpha from an RDP upper bound r. */
double dpzo__rdp_delta_upper(long prec, double alpha, double r, double eps,
                             dpzo_conversion conv)
{
    if (r == INFINITY)
        return 1.0;
    ival a, rr, e, t, u, one;
    ival *all[] = {&a, &rr, &e, &t, &u, &one};
    for (size_t i = 0; i < 6; i++)
        ival_init(all[i], (mpfr_prec_t)prec);
    ival_set_ui(&one, 1);
    ival_set_d(&a, alpha);
    ival_set_d(&rr, r);
    ival_set_d(&e, eps);
    ival_sub(&t, &rr, &e);
    ival_sub(&u, &a, &one);
    if (conv == DPZO_CONVERSION_STANDARD) {
        ival_mul(&t, &t, &u);
    } else {
        ival_div(&e, &one, &a);
        ival_neg(&e, &e);
        ival_log1p(&e, &e);
        ival_add(&t, &t, &e);
        ival_mul(&t, &t, &u);
        ival_log(&e, &a);
        ival_sub(&t, &t, &e);
    }
    ival_exp(&t, &t); /* delta from the conversion */
    double d = ival_hi_d(&t);
    /* total variation: sqrt(1 - e^-r) */
    ival_neg(&u, &rr);
    ival_expm1(&u, &u);
    ival_neg(&u, &u);
    ival_sqrt(&u, &u);
    double tv = ival_hi_d(&u);
    for (size_t i = 0; i < 6; i++)
        ival_clear(all[i]);
    if (tv < d)
        d = tv;
    return d < 1.0 ? d : 1.0;
}
