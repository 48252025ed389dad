/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_json.c: see dpzo_json.h. cJSON parses; a scan of the text, in document order,
 * finds what cJSON loses (a \u0000 escape, an integer literal's exact digits), and a walk of
 * the tree in the same order names the key that holds it. */
#include "dpzo_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the scan found first: the n-th string (keys and values counted together) or the
 * n-th number, in document order. */
typedef struct {
    int kind; /* 0 none, 1 string with U+0000, 2 integer literal beyond 2^53 */
    size_t index;
    size_t offset;
    char digits[48];
    char as[32]; /* the double the integer would read as */
} finding;

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_hex_zero4(const char *s, const char *end)
{
    return end - s >= 4 && s[0] == '0' && s[1] == '0' && s[2] == '0' && s[3] == '0';
}

/* An integer literal (an optional '-', then digits only) that no double holds exactly: its
 * magnitude exceeds 2^53 and strtod's nearest double, printed exactly (glibc's %.0f prints
 * a double's exact value), has other digits. 2^53 + 2 is held; 2^53 + 1 is not. The double
 * it would read as goes to `as`. */
static int inexact_integer(const char *s, size_t n, char *as, size_t aslen)
{
    static const char limit[] = "9007199254740992";
    const char *d = s;
    size_t m = n;
    if (m > 0 && d[0] == '-')
        d++, m--;
    while (m > 1 && d[0] == '0')
        d++, m--;
    if (m < sizeof limit - 1 || (m == sizeof limit - 1 && memcmp(d, limit, m) <= 0))
        return 0;
    char num[400], exact[400];
    if (m >= sizeof num - 1) { /* more than 398 digits: beyond every finite double */
        snprintf(as, aslen, "%s", s[0] == '-' ? "-inf" : "inf");
        return 1;
    }
    memcpy(num, d, m);
    num[m] = '\0';
    double x = strtod(num, NULL);
    if (!isfinite(x)) {
        snprintf(as, aslen, "%s", s[0] == '-' ? "-inf" : "inf");
        return 1;
    }
    snprintf(exact, sizeof exact, "%.0f", x);
    snprintf(as, aslen, "%s%.17g", s[0] == '-' ? "-" : "", x);
    return strcmp(exact, num) != 0;
}

/* Walks the text of a valid JSON value (cJSON accepted it) and stops at the first finding. */
static void scan(const char *t, const char *end, finding *f)
{
    size_t strings = 0, numbers = 0;
    for (const char *p = t; p < end;) {
        if (*p == '"') {
            const char *start = p++;
            for (; p < end && *p != '"'; p++) {
                if (*p != '\\')
                    continue;
                p++;
                if (p < end && *p == 'u' && is_hex_zero4(p + 1, end)) {
                    f->kind = 1;
                    f->index = strings;
                    f->offset = (size_t)(start - t);
                    return;
                }
            }
            p++;
            strings++;
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            const char *start = p;
            while (p < end && strchr("0123456789+-.eE", *p) != NULL && *p != '\0')
                p++;
            size_t n = (size_t)(p - start);
            if (strcspn(start, ".eE") >= n &&
                inexact_integer(start, n, f->as, sizeof f->as)) {
                f->kind = 2;
                f->index = numbers;
                f->offset = (size_t)(start - t);
                snprintf(f->digits, sizeof f->digits, "%.*s%s", n > 40 ? 40 : (int)n, start,
                         n > 40 ? "..." : "");
                return;
            }
            numbers++;
        } else {
            p++;
        }
    }
}

/* Walks the tree in document order to the finding's string or number and writes its key. */
typedef struct {
    const finding *f;
    size_t strings, numbers;
    char path[256];
    int found; /* 1: at the value, 2: at a key */
} walker;

static void walk(walker *w, const cJSON *it, const char *path)
{
    char here[256];
    for (const cJSON *c = it->child; c != NULL && !w->found; c = c->next) {
        if (cJSON_IsObject(it)) {
            snprintf(here, sizeof here, "%s%s%s", path, *path ? "." : "",
                     c->string ? c->string : "");
            if (w->f->kind == 1 && w->strings++ == w->f->index) {
                w->found = 2;
                snprintf(w->path, sizeof w->path, "%s", here);
                return;
            }
        } else {
            /* the index: count the siblings before c */
            int k = 0;
            for (const cJSON *s = it->child; s != c; s = s->next)
                k++;
            snprintf(here, sizeof here, "%s[%d]", path, k);
        }
        if ((cJSON_IsString(c) && w->f->kind == 1 && w->strings++ == w->f->index) ||
            (cJSON_IsNumber(c) && w->f->kind == 2 && w->numbers++ == w->f->index)) {
            w->found = 1;
            snprintf(w->path, sizeof w->path, "%s", here);
            return;
        }
        if (cJSON_IsArray(c) || cJSON_IsObject(c))
            walk(w, c, here);
    }
}

int dpzo_json_check_nul(const char *text, size_t len, char *err, size_t errlen)
{
    const char *nul = memchr(text, '\0', len);
    if (nul == NULL)
        return 0;
    snprintf(err, errlen, "a NUL byte at byte %zu (JSON text holds none, and no dpzo file "
             "may hold U+0000)", (size_t)(nul - text));
    return DPZO_JSON_REFUSED;
}

int dpzo_json_parse(const char *text, size_t len, cJSON **root, size_t *syntax_at, char *err,
                    size_t errlen)
{
    *root = NULL;
    if (syntax_at != NULL)
        *syntax_at = 0;
    if (dpzo_json_check_nul(text, len, err, errlen) != 0)
        return DPZO_JSON_REFUSED;
    const char *end = NULL;
    cJSON *tree = cJSON_ParseWithOpts(text, &end, 0);
    if (tree == NULL) {
        if (syntax_at != NULL)
            *syntax_at = end != NULL && end >= text ? (size_t)(end - text) : 0;
        snprintf(err, errlen, "not valid JSON (error at byte %zu)",
                 end != NULL && end >= text ? (size_t)(end - text) : (size_t)0);
        return DPZO_JSON_SYNTAX;
    }
    const char *after = end;
    while (after < text + len && is_ws(*after))
        after++;
    if (after < text + len) {
        cJSON_Delete(tree);
        snprintf(err, errlen, "not valid JSON: bytes after the JSON value, at byte %zu (only "
                 "whitespace may follow it)", (size_t)(after - text));
        return DPZO_JSON_REFUSED;
    }
    finding f = {0};
    scan(text, end, &f);
    if (f.kind == 0) {
        *root = tree;
        return DPZO_JSON_OK;
    }
    walker w = {&f, 0, 0, "", 0};
    if (f.kind == 1 && cJSON_IsString(tree) && f.index == 0)
        w.found = 1;
    else if (f.kind == 2 && cJSON_IsNumber(tree) && f.index == 0)
        w.found = 1;
    else
        walk(&w, tree, "");
    cJSON_Delete(tree);
    const char *key = w.path[0] ? w.path : "(top level)";
    if (f.kind == 1)
        snprintf(err, errlen, "%s '%s' holds U+0000 (\\u0000, at byte %zu): no string of a "
                 "dpzo file may hold it, since the text after it would be invisible",
                 w.found == 2 ? "the key" : "key", key, f.offset);
    else
        snprintf(err, errlen, "key '%s': the integer %s is beyond 2^53 = 9007199254740992 and "
                 "no double holds it exactly: it would read as %s (at byte %zu)",
                 key, f.digits, f.as, f.offset);
    return DPZO_JSON_REFUSED;
}
