/* SPDX-License-Identifier: Apache-2.0 */
/* cli/output.c: JSON output helpers and the schedule-file reader. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "dpzo_io.h"
#include "dpzo_json.h"
#include "output.h"

/* Numbers are written with 17 significant digits, which read back as exactly the same
 * double. (cJSON's own printer settles for 15 digits when they read back within an ulp,
 * which can print a proven upper bound one ulp below itself.) */
static cJSON *number_item(double v)
{
    if (isnan(v)) /* "none": e.g. calibrate's tight_to when no value fails the target */
        return cJSON_CreateNull();
    if (!isfinite(v))
        return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
}

const char *fmt_dir(char *buf, size_t size, double v, int digits, int dir)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "%s", v > 0 ? "inf" : "-inf");
        return buf;
    }
    mpfr_t x;
    mpfr_init2(x, 64);
    mpfr_set_d(x, v, MPFR_RNDN); /* exact */
    mpfr_snprintf(buf, size, "%.*R*g", digits, dir > 0 ? MPFR_RNDU : MPFR_RNDD, x);
    mpfr_clear(x);
    return buf;
}

void json_number(cJSON *obj, const char *key, double v)
{
    cJSON_AddItemToObject(obj, key, number_item(v));
}

void json_number_array(cJSON *obj, const char *key, const double *v, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, number_item(v[i]));
}

void json_print(cJSON *obj)
{
    char *s = cJSON_Print(obj);
    if (s != NULL) {
        puts(s);
        free(s);
    }
    cJSON_Delete(obj);
}

static int schedule_field(const char *path, int idx, const cJSON *entry, const char *key,
                          double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry, key);
    if (!cJSON_IsNumber(v))
        return cli_usage_error("schedule %s: entry %d: \"%s\" must be a number", path, idx, key);
    char why[512]; /* steps, an integer: only a literal that is exactly its value (issue 28, 9) */
    if (strcmp(key, "steps") == 0 && dpzo_json_check_integer(v, why, sizeof why) != 0)
        return cli_usage_error("schedule %s: entry %d: steps must be an integer: %s", path, idx,
                               why);
    *out = v->valuedouble;
    return 0;
}

int cli_check_output(const char *path, const char *what, unsigned flags)
{
    char err[DPZO_IO_ERRMAX];
    if (dpzo_io_check_output(path, what, flags, err, sizeof err) == 0)
        return 0;
    return cli_usage_error("%s (checked before the work; nothing was done)", err);
}

int schedule_read(const char *path, dpzo_phase **phases, size_t *n)
{
    /* a regular file only (a FIFO or device is refused before any read), at most 64 MiB */
    char *text = NULL, err[DPZO_IO_ERRMAX];
    size_t len = 0;
    if (dpzo_io_read_file(path, "schedule file", DPZO_IO_LIMIT_JSON, &text, &len, err,
                          sizeof err) != 0)
        return cli_usage_error("cannot read %s", err);
    cJSON *root = NULL;
    int jst = dpzo_json_parse(text, len, &root, NULL, err, sizeof err);
    free(text);
    if (jst == DPZO_JSON_REFUSED)
        return cli_usage_error("schedule %s: %s", path, err);
    if (!cJSON_IsArray(root) || cJSON_GetArraySize(root) == 0) {
        cJSON_Delete(root);
        return cli_usage_error("schedule %s: expected a non-empty JSON array of "
                               "{\"noise_multiplier\", \"sampling_rate\", \"steps\"} objects",
                               path);
    }
    size_t count = (size_t)cJSON_GetArraySize(root);
    dpzo_phase *p = calloc(count, sizeof *p);
    int rc = p == NULL ? cli_out_of_memory() : 0;
    int idx = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, root)
    {
        if (rc)
            break;
        idx++;
        double s = 0, q = 0, t = 0;
        if (!cJSON_IsObject(entry)) {
            rc = cli_usage_error("schedule %s: entry %d is not an object", path, idx);
            break;
        }
        for (const cJSON *k = entry->child; k != NULL && !rc; k = k->next)
            if (strcmp(k->string, "noise_multiplier") && strcmp(k->string, "sampling_rate")
                && strcmp(k->string, "steps"))
                rc = cli_usage_error("schedule %s: entry %d: unknown key \"%s\"", path, idx,
                                     k->string);
        if (rc || (rc = schedule_field(path, idx, entry, "noise_multiplier", &s))
            || (rc = schedule_field(path, idx, entry, "sampling_rate", &q))
            || (rc = schedule_field(path, idx, entry, "steps", &t)))
            break;
        if (!(s >= 0.0) || !isfinite(s))
            rc = cli_usage_error("schedule %s: entry %d: noise_multiplier must be >= 0, got %g",
                                 path, idx, s);
        else if (!(q >= 0.0 && q <= 1.0))
            rc = cli_usage_error("schedule %s: entry %d: sampling_rate must be in [0, 1], got %g",
                                 path, idx, q);
        else if (!(t >= 0.0 && t < 0x1p53 && t == floor(t))) /* JSON numbers are doubles */
            rc = cli_usage_error(
                "schedule %s: entry %d: steps must be an integer in [0, 2^53), got %.17g", path,
                idx, t);
        else
            p[idx - 1] = (dpzo_phase){s, q, (uint64_t)t};
    }
    cJSON_Delete(root);
    if (rc) {
        free(p);
        return rc;
    }
    *phases = p;
    *n = count;
    return 0;
}
