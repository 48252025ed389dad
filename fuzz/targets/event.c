/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target event: events written as JSON (dpzo_event_parse_json, what `dpzo epsilon
 * --event FILE` and a claim's "event" read; docs/accountant.md section 7).
 * Checks: status OK with an event, or an error with a message and no event; an event read
 * can be described and its RDP at order 2 computed or refused with a message. */
#include "../fuzz_util.h"
#include "dpzo/dpzo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = fz_make(data, size);
    char *text = fz_rest_string(&in, NULL);
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL) {
        free(text);
        return 0;
    }
    dpzo_event *e = NULL;
    dpzo_status st = dpzo_event_parse_json(ctx, text, &e);
    if (fz_ok(ctx, st, "dpzo_event_parse_json")) {
        if (e == NULL)
            fz_fail("dpzo_event_parse_json returned OK without an event");
        char d[256];
        dpzo_event_describe(e, d, sizeof d);
        double order = 2.0, rdp;
        fz_ok(ctx, dpzo_event_rdp(ctx, e, &order, 1, &rdp), "dpzo_event_rdp");
        dpzo_event_free(e);
    } else if (e != NULL) {
        fz_fail("dpzo_event_parse_json failed (%s) but returned an event", dpzo_ctx_errmsg(ctx));
    }
    free(text);
    dpzo_ctx_free(ctx);
    return 0;
}
