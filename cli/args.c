/* SPDX-License-Identifier: Apache-2.0 */
/* cli/args.c: strict option parsing. Every value is checked completely: "1.5x", "",
 * "nan", "inf" and out-of-range numbers are errors with exit status 2. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpzo/rdp.h>
#include "args.h"

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dpzo: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

int cli_out_of_memory(void)
{
    fputs("dpzo: error: out of memory\n", stderr);
    return 1;
}

/* one-letter options are spelled -n, -o; the others --name */
static const char *dashes(const char *opt) { return opt[0] && !opt[1] ? "-" : "--"; }

size_t args_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    /* Damerau-Levenshtein (optimal string alignment): a swap of two neighbours costs 1,
     * like an insertion, a deletion or a substitution. Option names are short (< 64). */
    enum { W = 64 };
    if (na >= W || nb >= W)
        return na > nb ? na : nb;
    size_t d[W + 1][W + 1];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]
                && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *args_nearest(const opt_spec *specs, const char *name, size_t len)
{
    /* a suggestion only when it is plausibly a typo: at most a third of the name's letters
     * differ (at least 1, at most 3), and no other option is as close */
    if (len < 3) /* -x is no typo of -o */
        return NULL;
    size_t limit = len / 3 > 3 ? 3 : len / 3; /* >= 1: len >= 3 */
    const char *best = NULL;
    size_t best_d = limit + 1;
    int tie = 0;
    for (const opt_spec *p = specs; p->name != NULL; p++) {
        size_t d = args_edit_distance(name, len, p->name, strlen(p->name));
        if (d < best_d) {
            best = p->name, best_d = d, tie = 0;
        } else if (d == best_d) {
            tie = 1;
        }
    }
    return tie ? NULL : best;
}

static int unknown_option(const opt_spec *specs, int short_opt, const char *name, size_t len)
{
    const char *near = args_nearest(specs, name, len);
    const char *dash = short_opt ? "-" : "--";
    if (near != NULL)
        return cli_usage_error("unknown option '%s%.*s'; did you mean %s%s?", dash, (int)len,
                               name, dashes(near), near);
    return cli_usage_error("unknown option '%s%.*s' (see --help)", dash, (int)len, name);
}

int cli_unknown_word(const char *what, const char *word, const char *const *choices,
                     const char *hint)
{
    opt_spec specs[ARGS_MAX + 1];
    size_t n = 0;
    for (; choices[n] != NULL && n < ARGS_MAX; n++)
        specs[n] = (opt_spec){choices[n], 0};
    specs[n] = (opt_spec){NULL, 0};
    const char *near = args_nearest(specs, word, strlen(word));
    if (near != NULL)
        return cli_usage_error("unknown %s '%s'; did you mean %s?", what, word, near);
    return cli_usage_error("unknown %s '%s' (%s)", what, word, hint);
}

int args_parse(int argc, char **argv, const opt_spec *specs, parsed_args *out)
{
    out->n = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        /* one-letter options are also accepted with one dash: -n 10, -o FILE */
        int short_opt = arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && arg[2] == '\0';
        if (strncmp(arg, "--", 2) != 0 && !short_opt)
            return cli_usage_error("unexpected argument '%s' (options start with --)", arg);
        const char *name = arg + (short_opt ? 1 : 2), *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_spec *s = NULL;
        for (const opt_spec *p = specs; p->name != NULL; p++)
            if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
                s = p;
        /* -h is --help wherever --help exists */
        if (s == NULL && short_opt && len == 1 && name[0] == 'h')
            for (const opt_spec *p = specs; p->name != NULL; p++)
                if (strcmp(p->name, "help") == 0)
                    s = p;
        if (s == NULL)
            return unknown_option(specs, short_opt, name, len);
        if (args_has(out, s->name))
            return cli_usage_error("option %s%s given twice", dashes(s->name), s->name);
        const char *value = NULL;
        if (s->takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_usage_error("option %s%s needs a value", dashes(s->name), s->name);
        } else if (eq) {
            return cli_usage_error("option %s%s takes no value", dashes(s->name), s->name);
        }
        if (out->n == ARGS_MAX)
            return cli_usage_error("too many options");
        out->names[out->n] = s->name;
        out->values[out->n] = value;
        out->n++;
    }
    return 0;
}

const char *args_get(const parsed_args *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->names[i], name) == 0)
            return a->values[i] != NULL ? a->values[i] : "";
    return NULL;
}

int args_has(const parsed_args *a, const char *name) { return args_get(a, name) != NULL; }

int parse_real(const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* ERANGE also flags underflow to a subnormal, which is a fine value (1e-320), and to
     * zero, which is not: '1e-400' is not 0 */
    int overflow = errno == ERANGE && fabs(v) > 1.0;
    if (*text == '\0' || isspace((unsigned char)*text) || *end != '\0' || overflow
        || !isfinite(v))
        return cli_usage_error("%s%s must be a finite number, got '%s'", dashes(opt), opt, text);
    if (errno == ERANGE && v == 0.0)
        return cli_usage_error("%s%s: '%s' is below the smallest positive double (4.9e-324); "
                               "write 0 for zero", dashes(opt), opt, text);
    *out = v;
    return 0;
}

int args_count_of(const char *what, double v, uint64_t *out)
{
    if (!(v >= 0.0 && v <= 0x1p53))
        return cli_usage_error("%s must be a count in [0, 2^53], got %.17g", what, v);
    *out = (uint64_t)v;
    return 0;
}

int parse_count(const char *opt, const char *text, uint64_t *out)
{
    if (*text == '\0' || strspn(text, "0123456789") != strlen(text))
        return cli_usage_error("%s%s must be a non-negative integer (digits only, at most "
                               "2^53), got '%s'", dashes(opt), opt, text);
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno == ERANGE || v > (1ull << 53))
        return cli_usage_error("%s%s must be at most 2^53, got '%s'", dashes(opt), opt, text);
    *out = (uint64_t)v;
    return 0;
}

int parse_order_list(const char *opt, const char *text, double **out, size_t *n)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    double *v = malloc(cap * sizeof *v);
    if (v == NULL)
        return cli_out_of_memory();
    char *copy = strdup(text);
    if (copy == NULL) {
        free(v);
        return cli_out_of_memory();
    }
    size_t k = 0;
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        rc = parse_real(opt, tok, &v[k]);
        if (rc == 0 && !(v[k] > 1.0 && v[k] <= DPZO_MAX_ORDER))
            rc = cli_usage_error("--%s: every order must be in (1, 1e6], got %s", opt, tok);
        k++;
    }
    free(copy);
    if (rc == 0 && k == 0)
        rc = cli_usage_error("--%s: empty list of orders", opt);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}
