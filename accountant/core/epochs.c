/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/epochs.c: training length in epochs -> steps, the one rule every front end
 * (the CLI, claim files, the Python package) uses. */
#include <math.h>
#include "internal.h"

#define MAX_STEPS 9007199254740992.0 /* 2^53: steps stay exact as doubles */

__extension__ typedef unsigned __int128 u128;

/* ceil(epochs n / batch) exactly: epochs = m 2^-k (m < 2^53 an integer), so m n < 2^117
 * and ceil(ceil(m n / batch) / 2^k) is the ceiling sought (nested ceilings of divisions
 * by positive integers compose). epochs <= 2^53 here, so k >= -1. */
static u128 ceil_epochs_times(double epochs, uint64_t n, uint64_t batch)
{
    int e;
    double f = frexp(epochs, &e);
    uint64_t m = (uint64_t)ldexp(f, 53);
    int k = 53 - e;
    u128 u = ((u128)m * n + batch - 1) / batch;
    if (k <= 0)
        return u << -k;
    if (k >= 128)
        return u != 0;
    return (u >> k) + ((u & (((u128)1 << k) - 1)) != 0);
}

dpzo_status dpzo_steps_from_epochs(dpzo_ctx *ctx, double epochs, double q, uint64_t batch,
                                   uint64_t n, uint64_t *steps)
{
    if (!(epochs >= 0.0 && isfinite(epochs)))
        return dpzo__fail(ctx, DPZO_EINVAL, "epochs must be finite and >= 0, got %g", epochs);
    if (n > 0) {
        if (batch < 1 || batch > n)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "batch size must be in [1, dataset size] for epochs, got %llu "
                              "of %llu",
                              (unsigned long long)batch, (unsigned long long)n);
        /* n / batch >= 1: more epochs than 2^53 are more steps */
        u128 t = epochs <= MAX_STEPS ? ceil_epochs_times(epochs, n, batch) : 0;
        if (epochs > MAX_STEPS || t > (u128)MAX_STEPS)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "%g epochs of %llu / %llu is more than 2^53 steps", epochs,
                              (unsigned long long)n, (unsigned long long)batch);
        *steps = (uint64_t)t;
        return DPZO_OK;
    }
    if (!(q > 0.0 && q <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "epochs need a sampling rate in (0, 1] (an epoch is 1 / q steps), "
                          "got %g",
                          q);
    /* ceill(epochs / q) is within one of the ceiling (the quotient is rounded to 64 bits);
     * fma gives the sign of t q - epochs exactly (t <= 2^53 is exact, and the difference,
     * a multiple of 2^-1074, does not round to 0), so t is made the least with t q >= epochs */
    long double tl = ceill((long double)epochs / (long double)q);
    double t = tl <= (long double)MAX_STEPS ? (double)tl : INFINITY;
    if (t < MAX_STEPS && fma(t, q, -epochs) < 0.0)
        t += 1.0;
    else if (t >= 1.0 && t <= MAX_STEPS && fma(t - 1.0, q, -epochs) >= 0.0)
        t -= 1.0;
    if (!(t <= MAX_STEPS && fma(t, q, -epochs) >= 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "%g epochs is more than 2^53 steps", epochs);
    *steps = (uint64_t)t;
    return DPZO_OK;
}
