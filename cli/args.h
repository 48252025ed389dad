/* SPDX-License-Identifier: Apache-2.0 */
/* cli/args.h: strict parsing of command-line options ("--name value" or "--name=value"). */
#ifndef DPZO_CLI_ARGS_H
#define DPZO_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#define ARGS_MAX 32

typedef struct {
    const char *name; /* without the leading "--" */
    int takes_value;
} opt_spec;

typedef struct {
    const char *names[ARGS_MAX];
    const char *values[ARGS_MAX];
    size_t n;
} parsed_args;

/* Fills `out`; on error prints one line to stderr and returns 2. An unknown option names
 * the nearest known one when it is plausibly a typo ("did you mean --noise-multiplier?");
 * -h stands for --help wherever --help is an option. */
int args_parse(int argc, char **argv, const opt_spec *specs, parsed_args *out);
/* Edit distance (insertions, deletions, substitutions, swaps of neighbours). */
size_t args_edit_distance(const char *a, size_t na, const char *b, size_t nb);
/* The option of `specs` nearest to name[0..len), or NULL when none is close (at most a
 * third of the letters, 1 to 3, differ), two are equally close, or name is shorter than
 * 3 letters. */
const char *args_nearest(const opt_spec *specs, const char *name, size_t len);
/* "unknown WHAT 'word'; did you mean CHOICE?" (or "(HINT)" when none is close) on stderr;
 * choices ends with NULL. Returns 2. */
int cli_unknown_word(const char *what, const char *word, const char *const *choices,
                     const char *hint);
const char *args_get(const parsed_args *a, const char *name); /* NULL if absent */
int args_has(const parsed_args *a, const char *name);

/* Strict converters: print "dpzo: error: ..." and return 2 on failure. */
int parse_real(const char *opt, const char *text, double *out);      /* finite */
int parse_count(const char *opt, const char *text, uint64_t *out);  /* 0..2^53 integer */
/* A count computed from a double (epochs x N / B, ...): refused (exit status 2, naming
 * `what` and the value) unless in [0, 2^53]; truncates toward zero. Never cast a double
 * to an integer type without this: out-of-range casts are undefined behaviour. */
int args_count_of(const char *what, double v, uint64_t *out);
/* A comma-separated list of orders (each finite and > 1); *out is malloc'ed. */
int parse_order_list(const char *opt, const char *text, double **out, size_t *n);

/* One-line error on stderr; returns 2 (the exit status for bad input). */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "dpzo: error: out of memory" on stderr; returns 1 (not the input's fault: docs/cli.md). */
int cli_out_of_memory(void);

#endif
