/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target grid: the LMO grid reader (dpzo_lmo_grid_from_json, what `dpzo lmo search
 * --grid FILE` parses).
 * Checks: status OK or an error with a message; a grid read has at least one point, at
 * most 2^32, and its first and last points validate (dpzo_lmo_validate). */
#include "../fuzz_util.h"
#include "dpzo/lmo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    char *text = fz_rest_string(&in, NULL);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL) {
        free(text);
        return 0;
    }
    dpzo_lmo_grid *g = NULL;
    if (fz_ok(ctx, dpzo_lmo_grid_from_json(ctx, text, &g), "dpzo_lmo_grid_from_json")) {
        size_t n = dpzo_lmo_grid_size(g);
        if (n < 1 || n > ((size_t)1 << 32))
            fz_fail("grid of %zu points accepted", n);
        dpzo_lmo p;
        dpzo_lmo_grid_point(g, 0, &p);
        if (!fz_ok(ctx, dpzo_lmo_validate(ctx, &p), "dpzo_lmo_validate"))
            fz_fail("grid point 0 does not validate: %s", dpzo_ctx_errmsg(ctx));
        dpzo_lmo_grid_point(g, n - 1, &p);
        if (!fz_ok(ctx, dpzo_lmo_validate(ctx, &p), "dpzo_lmo_validate"))
            fz_fail("grid point %zu does not validate: %s", n - 1, dpzo_ctx_errmsg(ctx));
        dpzo_lmo_grid_free(g);
    }
    free(text);
    dpzo_ctx_free(ctx);
    return 0;
}
