/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target profile: the noise profile reader (dpzo_profile_from_json, and
 * dpzo_profile_read_file through a temporary file), then validation, the JSON round trip
 * and, for RDP profiles, dpzo_profile_verify. Input: one mode byte, then the profile text.
 * Mode bit 0 re-computes the checksum of the text (dpzo_profile_checksum) and writes it
 * into its "sha256" member, so that the fuzzer reaches the field checks behind the
 * checksum as a forger would.
 * Checks: status OK or an error with a message; a profile read back validates, writes and
 * reads back the same; a verified Gaussian profile (ok = 1) states an epsilon that is not
 * below what one step alone spends, and the recomputed bound is within the stated one. */
#include "../fuzz_util.h"
#include <cjson/cJSON.h>
#include "dpzo/profile.h"

static char *rehash(dpzo_ctx *ctx, const char *text)
{
    cJSON *root = cJSON_Parse(text);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "sha256");
    char *bare = cJSON_PrintUnformatted(root), sha[65];
    char *out = NULL;
    if (bare != NULL && dpzo_profile_checksum(ctx, bare, sha, NULL) == DPZO_OK) {
        cJSON_AddStringToObject(root, "sha256", sha);
        out = cJSON_PrintUnformatted(root);
    }
    free(bare);
    cJSON_Delete(root);
    return out;
}

static void check_profile(dpzo_ctx *ctx, dpzo_profile *p, int verify)
{
    if (!fz_ok(ctx, dpzo_profile_validate(ctx, p), "dpzo_profile_validate"))
        fz_fail("a profile that was read does not validate: %s", dpzo_ctx_errmsg(ctx));
    char *json = NULL;
    if (!fz_ok(ctx, dpzo_profile_to_json(ctx, p, &json), "dpzo_profile_to_json"))
        fz_fail("a profile that was read cannot be written: %s", dpzo_ctx_errmsg(ctx));
    dpzo_profile back;
    if (!fz_ok(ctx, dpzo_profile_from_json(ctx, json, &back), "dpzo_profile_from_json (back)"))
        fz_fail("a profile written does not read back: %s", dpzo_ctx_errmsg(ctx));
    if (memcmp(&back.epsilon, &p->epsilon, sizeof(double)) != 0 ||
        memcmp(&back.delta, &p->delta, sizeof(double)) != 0 || back.steps != p->steps)
        fz_fail("profile round trip changed epsilon %.17g -> %.17g", p->epsilon, back.epsilon);
    dpzo_profile_free(&back);
    free(json);
    if (!verify || strcmp(p->accountant, "rdp") != 0)
        return;
    dpzo_profile_check chk;
    if (!fz_ok(ctx, dpzo_profile_verify(ctx, p, &chk), "dpzo_profile_verify") || !chk.ok)
        return;
    fz_check_upper("dpzo_profile_verify", chk.epsilon_recomputed, chk.epsilon_lower);
    if (!fz_le(chk.epsilon_recomputed, p->epsilon, 1e-9, 1e-12))
        fz_fail("dpzo_profile_verify: ok with recomputed %.17g above the stated %.17g",
                chk.epsilon_recomputed, p->epsilon);
    if (p->kind == DPZO_NOISE_GAUSSIAN && p->steps > 0) {
        double q = strcmp(p->sampling, "poisson") == 0 ? p->sampling_rate
                   : strcmp(p->sampling, "wor") == 0
                       ? (p->dataset_size ? (double)p->batch_size / (double)p->dataset_size : NAN)
                       : 1.0;
        fz_check_not_below_one_step("verified profile", q, p->noise_multiplier, p->epsilon,
                                    p->delta);
    }
}

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
    if (mode & 1) {
        char *h = rehash(ctx, text);
        if (h != NULL) {
            free(text);
            text = h;
            len = strlen(h);
        }
    }
    dpzo_profile p;
    dpzo_status st;
    if (mode & 4) {
        const char *path = fz_write_file(0, "profile.json", text, len);
        st = dpzo_profile_read_file(ctx, path, &p);
    } else {
        st = dpzo_profile_from_json(ctx, text, &p);
    }
    if (fz_ok(ctx, st, "dpzo_profile_from_json")) {
        check_profile(ctx, &p, (mode & 2) != 0);
        dpzo_profile_free(&p);
    }
    free(text);
    dpzo_ctx_free(ctx);
    return 0;
}
