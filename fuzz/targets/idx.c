/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target idx: the IDX reader (dpzo_idx_load). Input: two bytes giving the length L of
 * the image file (little-endian, capped by the input), the image file's L bytes, then the
 * label file. Both are written to temporary files (plain; the reader also takes gzip, and
 * a gzip magic at the start of either part exercises that path).
 * Checks: status OK or an error with a message; a data set read has n >= 1 rows of
 * dim = rows * cols floats in [0, 1] and labels in [0, n_classes). */
#include "../fuzz_util.h"
#include "dpzo/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    size_t L = fz_u8(&in);
    L |= (size_t)fz_u8(&in) << 8;
    size_t rest = size - in.pos;
    if (L > rest)
        L = rest;
    const char *img = fz_write_file(0, "images.idx", data + in.pos, L);
    const char *lab = fz_write_file(1, "labels.idx", data + in.pos + L, rest - L);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    dpzo_dataset ds;
    if (fz_ok(ctx, dpzo_idx_load(ctx, img, lab, &ds), "dpzo_idx_load")) {
        if (ds.n < 1 || ds.dim < 1 || (ds.rows * ds.cols != ds.dim && ds.rows != 0))
            fz_fail("idx: data set with n %zu, dim %zu, shape %zu x %zu", ds.n, ds.dim, ds.rows,
                    ds.cols);
        for (size_t i = 0; i < ds.n * ds.dim; i++)
            if (!(ds.x[i] >= 0.0f && ds.x[i] <= 1.0f))
                fz_fail("idx: pixel %zu is %g", i, (double)ds.x[i]);
        for (size_t i = 0; i < ds.n; i++)
            if (ds.y[i] < 0 || ds.y[i] >= ds.n_classes)
                fz_fail("idx: label %zu is %d of %d classes", i, (int)ds.y[i], ds.n_classes);
        dpzo_dataset_free(&ds);
    }
    dpzo_ctx_free(ctx);
    return 0;
}
