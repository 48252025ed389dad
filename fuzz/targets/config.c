/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target config: the training configuration reader (dpzo_train_config_parse on the
 * input text, dpzo_train_config_read_file on the same text in a temporary file), paths
 * resolved against a private temporary directory.
 * Checks: status OK or an error with a message; a configuration that parsed passes
 * dpzo_train_config_validate, and the per-step query count is at least 1. */
#include "../fuzz_util.h"
#include "dpzo/trainer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in);
    size_t len;
    char *text = fz_rest_string(&in, &len);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL) {
        free(text);
        return 0;
    }
    dpzo_train_config *c = malloc(sizeof *c);
    if (c == NULL)
        abort();
    dpzo_status st;
    if (mode & 1)
        st = dpzo_train_config_read_file(ctx, fz_write_file(0, "train.json", text, len), c);
    else
        st = dpzo_train_config_parse(ctx, text, (mode & 2) ? fz_tmpdir() : NULL, c);
    if (fz_ok(ctx, st, "dpzo_train_config_parse")) {
        if (!fz_ok(ctx, dpzo_train_config_validate(ctx, c), "dpzo_train_config_validate"))
            fz_fail("a parsed configuration does not validate: %s", dpzo_ctx_errmsg(ctx));
        if (dpzo_train_queries_per_step(c) < 1)
            fz_fail("a parsed configuration has no query per step");
    }
    free(c);
    free(text);
    dpzo_ctx_free(ctx);
    return 0;
}
