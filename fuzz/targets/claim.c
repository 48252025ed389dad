/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target claim: the audit claim reader (dpzo_claims_from_json on the input text with a
 * private temporary directory for relative profile paths; dpzo_claims_read_file on the
 * same text in a temporary file).
 * Checks: status OK or an error with a message; every claim read passes
 * dpzo_claim_validate, and its mechanism can be formed (dpzo_claim_spec_mechanism); an
 * event claim's event reads back (dpzo_event_parse_json). */
#include "../fuzz_util.h"
#include "dpzo/audit_claim.h"

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
    dpzo_claim_spec *specs = NULL;
    size_t n = 0;
    dpzo_status st;
    if (mode & 1)
        st = dpzo_claims_read_file(ctx, fz_write_file(0, "claims.json", text, len), &specs, &n);
    else
        st = dpzo_claims_from_json(ctx, text, fz_tmpdir(), "fuzz.json", &specs, &n);
    if (fz_ok(ctx, st, "dpzo_claims_from_json")) {
        for (size_t i = 0; i < n; i++) {
            if (specs[i].noise == DPZO_CLAIM_NOISE_EVENT) { /* issue 30: its event reads back */
                dpzo_event *e = NULL;
                if (specs[i].event_json == NULL
                    || !fz_ok(ctx, dpzo_event_parse_json(ctx, specs[i].event_json, &e),
                              "dpzo_event_parse_json"))
                    fz_fail("claim %zu: the event of an event claim that was read does not read "
                            "back: %s", i, dpzo_ctx_errmsg(ctx));
                dpzo_event_free(e);
                continue;
            }
            if (!fz_ok(ctx, dpzo_claim_validate(ctx, &specs[i].claim), "dpzo_claim_validate"))
                fz_fail("claim %zu of a file that was read does not validate: %s", i,
                        dpzo_ctx_errmsg(ctx));
            dpzo_audit_mechanism buf;
            if (specs[i].noise == DPZO_CLAIM_NOISE_LMO &&
                dpzo_claim_spec_mechanism(ctx, &specs[i], &buf) == NULL)
                fz_fail("claim %zu: an LMO claim that was read has no mechanism: %s", i,
                        dpzo_ctx_errmsg(ctx));
        }
        free(specs);
    }
    free(text);
    dpzo_ctx_free(ctx);
    return 0;
}
