/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target lmo_search_ckpt: the LMO search checkpoint loader (noisesearch/search.c,
 * reached through dpzo_lmo_search with opts.checkpoint set) on a 16-point grid. Input: one
 * mode byte, then
 *   mode 0: the checkpoint file itself;
 *   mode 1: edits (2-byte offset, byte) applied to a valid checkpoint of this search,
 *           re-hashed (fuzz/ckpt_input.h);
 *   mode 2: a valid checkpoint's first 24 bytes (magic, fingerprint, count), then the
 *           input as the cached arrays, then their SHA-256 (what a forger controls).
 * Checks: status OK or an error with a message; when OK, the winner is a grid point whose
 * epsilon, recomputed from scratch by dpzo_lmo_epsilon with the search's accounting, meets
 * the target, and the reported epsilon is not below that recomputed proven bound (the RDP
 * search reports dpzo_lmo_epsilon's bound): a checkpoint can slow a search down or be
 * refused, never make it report a smaller epsilon or a point that does not qualify. */
#include "../ckpt_input.h"
#include "dpzo/lmo.h"

static const char *const grid_json =
    "{\"gamma_weight\": [0.9, 0.3], \"exp_weight\": [0.1], \"uniform_weight\": [0.5, 0.25],"
    " \"gamma\": [[1, 2], [3, 2]], \"exp_rate\": [5], \"uniform\": [[1, 2], [2, 4]]}";

static dpzo_lmo_search_options options(const char *ckpt)
{
    dpzo_lmo_search_options o = dpzo_lmo_search_options_default();
    o.objective = DPZO_LMO_OBJ_USEFULNESS;
    o.epsilon = 3.0;
    o.account.bound = DPZO_LMO_BOUND_MGF;
    o.account.sampling = DPZO_LMO_SAMPLING_POISSON;
    o.account.q = 0.01;
    o.account.steps = 100;
    o.account.delta = 1e-5;
    o.account.max_order = 64;
    o.threads = 1;
    o.checkpoint = ckpt;
    return o;
}

static unsigned char *valid;
static size_t valid_n;
static dpzo_lmo_grid *grid;

static void init_once(dpzo_ctx *ctx)
{
    if (grid != NULL)
        return;
    if (!fz_ok(ctx, dpzo_lmo_grid_from_json(ctx, grid_json, &grid), "grid"))
        fz_fail("lmo_search_ckpt: the grid does not read: %s", dpzo_ctx_errmsg(ctx));
    char path[512];
    snprintf(path, sizeof path, "%s/valid.ckpt", fz_tmpdir());
    unlink(path);
    dpzo_lmo_search_options o = options(path);
    dpzo_lmo_search_result r;
    if (!fz_ok(ctx, dpzo_lmo_search(ctx, grid, &o, &r), "dpzo_lmo_search"))
        fz_fail("lmo_search_ckpt: the reference search fails: %s", dpzo_ctx_errmsg(ctx));
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fz_fail("lmo_search_ckpt: the reference search wrote no checkpoint at %s", path);
    valid = malloc(1 << 20);
    valid_n = fread(valid, 1, 1 << 20, f);
    fclose(f);
    if (valid_n < 24)
        fz_fail("lmo_search_ckpt: the reference checkpoint has %zu bytes", valid_n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    init_once(ctx);
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in) % 3;
    size_t n;
    unsigned char *buf = fz_ckpt_input(&in, data, size, mode, valid, valid_n, 24, &n);
    const char *path = fz_write_file(0, "search.ckpt", buf, n);
    free(buf);
    dpzo_lmo_search_options o = options(path);
    dpzo_lmo_search_result r;
    if (fz_ok(ctx, dpzo_lmo_search(ctx, grid, &o, &r), "dpzo_lmo_search")) {
        if (r.index >= dpzo_lmo_grid_size(grid))
            fz_fail("lmo_search_ckpt: winner index %zu of %zu points", r.index,
                    dpzo_lmo_grid_size(grid));
        dpzo_lmo p;
        dpzo_lmo_grid_point(grid, r.index, &p);
        dpzo_lmo_account_result a;
        if (!fz_ok(ctx, dpzo_lmo_epsilon(ctx, &p, &o.account, &a), "dpzo_lmo_epsilon"))
            fz_fail("lmo_search_ckpt: the winner %zu cannot be accounted: %s", r.index,
                    dpzo_ctx_errmsg(ctx));
        fz_check_upper("lmo_search_ckpt", r.epsilon, NAN);
        if (!fz_le(a.epsilon, o.epsilon, 1e-9, 0.0))
            fz_fail("lmo_search_ckpt: winner %zu recomputes to epsilon %.17g above the target "
                    "%.17g (the search said %.17g)",
                    r.index, a.epsilon, o.epsilon, r.epsilon);
        if (!fz_le(a.epsilon, r.epsilon, 1e-9, 1e-12))
            fz_fail("lmo_search_ckpt: the search reports epsilon %.17g for winner %zu, whose "
                    "proven bound recomputes to %.17g",
                    r.epsilon, r.index, a.epsilon);
    }
    dpzo_ctx_free(ctx);
    return 0;
}
