/* accountant/epochs.c: training length in epochs -> steps, the one rule every front end
 * (the CLI, claim files, the Python package) uses. */
#include <math.h>
#include "internal.h"

#define MAX_STEPS 9007199254740992.0 /* 2^53: steps stay exact as doubles */

dpzo_status dpzo_steps_from_epochs(dpzo_ctx *ctx, double epochs, double q, uint64_t batch,
                                   uint64_t n, uint64_t *steps)
{
    if (!(epochs >= 0.0 && isfinite(epochs)))
        return dpzo__fail(ctx, DPZO_EINVAL, "epochs must be finite and >= 0, got %g", epochs);
    long double t;
    if (n > 0) {
        if (batch < 1 || batch > n)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "batch size must be in [1, dataset size] for epochs, got %llu "
                              "of %llu",
                              (unsigned long long)batch, (unsigned long long)n);
        if (epochs == floor(epochs) && epochs <= MAX_STEPS) {
            /* whole epochs: ceil(E N / B) exactly in integers (E N < 2^117) */
            __extension__ typedef unsigned __int128 u128;
            u128 num = (u128)(uint64_t)epochs * n;
            u128 t128 = (num + batch - 1) / batch;
            if (t128 > (u128)MAX_STEPS)
                return dpzo__fail(ctx, DPZO_EINVAL,
                                  "%g epochs of %llu / %llu is more than 2^53 steps", epochs,
                                  (unsigned long long)n, (unsigned long long)batch);
            *steps = (uint64_t)t128;
            return DPZO_OK;
        }
        t = ceill((long double)epochs * (long double)n / (long double)batch);
    } else {
        if (!(q > 0.0 && q <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "epochs need a sampling rate in (0, 1] (an epoch is 1 / q "
                              "steps), got %g",
                              q);
        t = ceill((long double)epochs / (long double)q);
    }
    if (!(t <= (long double)MAX_STEPS))
        return dpzo__fail(ctx, DPZO_EINVAL, "%g epochs is more than 2^53 steps", epochs);
    *steps = (uint64_t)t;
    return DPZO_OK;
}
