/* SPDX-License-Identifier: Apache-2.0 */
/* What the LMO targets share: an LMO noise and its accounting options from the input. */
#include "../fuzz_util.h"
#include "dpzo/lmo.h"

static FZ_UNUSED void fz_lmo(fz_in *in, dpzo_lmo *l)
{
    l->gamma_weight = fz_double(in);
    l->gamma_shape = fz_double(in);
    l->gamma_scale = fz_double(in);
    l->exp_weight = fz_double(in);
    l->exp_rate = fz_double(in);
    l->uniform_weight = fz_double(in);
    l->uniform_low = fz_double(in);
    l->uniform_high = fz_double(in);
}

/* max_order sets the work (integer orders 2..max_order, dpzo/lmo.h): at most 1024 here. */
static FZ_UNUSED dpzo_lmo_account_options fz_lmo_options(fz_in *in)
{
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    uint8_t sel = fz_u8(in);
    o.bound = (dpzo_lmo_bound_kind)(sel & 3);
    o.sampling = (dpzo_lmo_sampling)((sel >> 2) % 3);
    o.vector_l1 = (sel >> 4) & 1;
    o.sensitivity = fz_double(in);
    o.q = fz_double(in);
    o.batch = fz_count(in);
    o.n = fz_count(in);
    o.steps = fz_count(in);
    o.delta = fz_double(in);
    if (sel & 32)
        o.max_order = fz_u32(in) % 1025;
    return o;
}
