/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_json.c: see dpzo_json.h. cJSON parses; a scan of the text, in document order,
 * finds what cJSON loses (a \u0000 escape, an integer literal's exact digits), and a walk of
 * the tree in the same order names the key that holds it. A last walk of the tree and the
 * text together keeps, for the integer fields, the literal of each number whose double is a
 * whole number other than its value (dpzo_json_check_integer). */
#include "dpzo_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the scan found first: the n-th string (keys and values counted together) or the
 * n-th number, in document order. */
typedef struct {
    int kind; /* 0 none, 1 string with U+0000, 2 integer literal beyond 2^53, 3 a number
                 JSON's grammar refuses (cJSON's strtod takes it) */
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

/* The end of the number literal at p, in a text cJSON accepted. */
static const char *number_end(const char *p, const char *end)
{
    while (p < end && *p != '\0' && strchr("0123456789+-.eE", *p) != NULL)
        p++;
    return p;
}

/* 1 when s[0..n) is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (RFC 8259;
 * cJSON hands its literals to strtod, which also takes 03, 1. and 1.e5) */
static int rfc8259_number(const char *s, size_t n)
{
    size_t i = 0, d;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else {
        for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
    }
    if (i < n && s[i] == '.') {
        for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
    }
    return i == n;
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
            p = number_end(p, end);
            size_t n = (size_t)(p - start);
            /* digits only (bounded to the literal: strcspn would scan on to the next '.', 'e'
             * or the text's end, quadratic in a long array of integers, issue 30) */
            int digits_only = memchr(start, '.', n) == NULL && memchr(start, 'e', n) == NULL
                              && memchr(start, 'E', n) == NULL;
            int kind = !rfc8259_number(start, n) ? 3
                     : digits_only && inexact_integer(start, n, f->as, sizeof f->as) ? 2 : 0;
            if (kind != 0) {
                f->kind = kind;
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
            (cJSON_IsNumber(c) && w->f->kind >= 2 && w->numbers++ == w->f->index)) {
            w->found = 1;
            snprintf(w->path, sizeof w->path, "%s", here);
            return;
        }
        if (cJSON_IsArray(c) || cJSON_IsObject(c))
            walk(w, c, here);
    }
}

/* ---- integer fields: the literal behind a number ------------------------------------- */

/* 1 when an integer field must refuse the literal s[0..n) that reads as x: it is written with
 * a fraction or an exponent, x is a whole number, and the value the literal denotes is not x
 * ("9.007199254740993e15" reads as 2^53, "100.00000000000000001" as 100, "1e-400" as 0).
 * Exact: the literal's digits, without leading and trailing zeros, and its power of ten are
 * compared with the exact decimal digits of x (glibc's %.0f prints them). A literal of
 * digits only is dpzo_json_parse's own rule, and a double that is not a whole number is
 * refused by every integer field already. */
static int inexact_whole(const char *s, size_t n, double x)
{
    if (memchr(s, '.', n) == NULL && memchr(s, 'e', n) == NULL && memchr(s, 'E', n) == NULL)
        return 0;
    if (!isfinite(x) || x != floor(x))
        return 0;
    const char *p = s, *e = s + n;
    int neg = p < e && *p == '-';
    p += neg;
    const char *i0 = p;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    size_t ni = (size_t)(p - i0), nf = 0;
    const char *f0 = p;
    if (p < e && *p == '.') {
        f0 = ++p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        nf = (size_t)(p - f0);
    }
    long long ex = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        if (++p < e && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        for (; p < e; p++)
            if (ex < 1000000000LL) /* beyond, the value is 0 or beyond every double anyway */
                ex = 10 * ex + (*p - '0');
        ex = eneg ? -ex : ex;
    }
    size_t m = ni + nf, a = 0;
#define DIGIT(k) ((k) < ni ? i0[(k)] : f0[(k) - ni])
    while (a < m && DIGIT(a) == '0')
        a++;
    if (a == m)
        return x != 0.0; /* the literal is zero */
    size_t b = m - 1;
    while (DIGIT(b) == '0')
        b--;
    /* the value: the digits a..b, times 10^p10 */
    long long p10 = ex - (long long)nf + (long long)(m - 1 - b);
    if (p10 < 0 || x == 0.0 || neg != (x < 0.0))
        return 1; /* not a whole number, or another sign, though it reads as one */
    char exact[400];
    int len = snprintf(exact, sizeof exact, "%.0f", fabs(x));
    size_t nd = b - a + 1;
    if (len < 0 || (long long)len != (long long)nd + p10)
        return 1;
    for (size_t k = 0; k < (size_t)len; k++)
        if (exact[k] != (k < nd ? DIGIT(a + k) : '0'))
            return 1;
#undef DIGIT
    return 0;
}

/* Gives each number of the tree whose literal an integer field must refuse a copy of that
 * literal in its valuestring: the numbers of the tree and the number literals of the text,
 * both in document order, are walked together. -1 when out of memory. */
typedef struct {
    const char *p, *end;
} literal_cursor;

static int mark_literals(literal_cursor *k, cJSON *it)
{
    if (cJSON_IsNumber(it)) {
        const char *p = k->p;
        while (p < k->end && *p != '-' && !(*p >= '0' && *p <= '9')) {
            if (*p == '"') { /* a key or a string: skipped whole */
                for (p++; p < k->end && *p != '"'; p++)
                    if (*p == '\\')
                        p++;
            }
            p++;
        }
        const char *stop = number_end(p, k->end);
        k->p = stop;
        size_t n = (size_t)(stop - p);
        if (inexact_whole(p, n, it->valuedouble)) {
            char *lit = cJSON_malloc(n + 1);
            if (lit == NULL)
                return -1;
            memcpy(lit, p, n);
            lit[n] = '\0';
            it->valuestring = lit; /* a number's valuestring is NULL; cJSON_Delete frees it */
        }
        return 0;
    }
    for (cJSON *c = it->child; c != NULL; c = c->next)
        if (mark_literals(k, c) != 0)
            return -1;
    return 0;
}

int dpzo_json_check_integer(const cJSON *item, char *err, size_t errlen)
{
    if (!cJSON_IsNumber(item) || item->valuestring == NULL)
        return 0;
    size_t n = strlen(item->valuestring);
    snprintf(err, errlen, "the number %.*s%s is not exactly an integer: it would read as %.17g",
             n > 40 ? 40 : (int)n, item->valuestring, n > 40 ? "..." : "", item->valuedouble);
    return -1;
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
        literal_cursor k = {text, end};
        if (mark_literals(&k, tree) != 0) {
            cJSON_Delete(tree);
            snprintf(err, errlen, "out of memory");
            return DPZO_JSON_REFUSED;
        }
        *root = tree;
        return DPZO_JSON_OK;
    }
    walker w = {&f, 0, 0, "", 0};
    if (f.kind == 1 && cJSON_IsString(tree) && f.index == 0)
        w.found = 1;
    else if (f.kind >= 2 && cJSON_IsNumber(tree) && f.index == 0)
        w.found = 1;
    else
        walk(&w, tree, "");
    cJSON_Delete(tree);
    const char *key = w.path[0] ? w.path : "(top level)";
    if (f.kind == 1)
        snprintf(err, errlen, "%s '%s' holds U+0000 (\\u0000, at byte %zu): no string of a "
                 "dpzo file may hold it, since the text after it would be invisible",
                 w.found == 2 ? "the key" : "key", key, f.offset);
    else if (f.kind == 3)
        snprintf(err, errlen, "not valid JSON: key '%s': the number %s is not written as JSON "
                 "writes numbers (no leading zero, digits on both sides of a point; at byte "
                 "%zu)", key, f.digits, f.offset);
    else
        snprintf(err, errlen, "key '%s': the integer %s is beyond 2^53 = 9007199254740992 and "
                 "no double holds it exactly: it would read as %s (at byte %zu)",
                 key, f.digits, f.as, f.offset);
    return DPZO_JSON_REFUSED;
}
