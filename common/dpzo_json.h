/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_json.h: the one JSON parser of every file dpzo reads (docs/files.md, "JSON
 * text"). Over cJSON it adds the rules that cJSON does not keep:
 *   - no NUL byte anywhere in the text, and no U+0000 (the escape \u0000) in any string,
 *     key or value: cJSON's C strings end there, so a checksum or a comparison would miss
 *     what follows while any other JSON parser sees it (issue 28, item 8);
 *   - nothing but whitespace (space, tab, LF, CR) after the top-level value;
 *   - no integer literal (digits only, no fraction or exponent) that no double holds
 *     exactly: beyond 2^53 not every integer is a double, and 9007199254740993 would be
 *     read as 9007199254740992 (issue 28, item 9). The integer fields' own ranges (at most
 *     2^53) refuse the integers beyond 2^53 that a double does hold.
 * A refusal names the key: "provenance.command", "gamma[0][1]".
 * A number written with a fraction or an exponent is read as its nearest double, which an
 * integer field must not take when it is a whole number other than the literal's value:
 * dpzo_json_check_integer. */
#ifndef DPZO_JSON_H
#define DPZO_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

enum {
    DPZO_JSON_OK = 0,
    DPZO_JSON_SYNTAX = 1, /* not valid JSON: *syntax_at is the byte offset of the error */
    DPZO_JSON_REFUSED = 2 /* valid JSON that breaks a rule above: err says which, and where */
};

/* Parses text[0..len) (text[len] must be '\0'). On success *root is the tree (cJSON_Delete
 * it). Otherwise *root is NULL; err receives a message without a file name (callers prefix
 * theirs), and *syntax_at (may be NULL) the offset of a syntax error. */
int dpzo_json_parse(const char *text, size_t len, cJSON **root, size_t *syntax_at, char *err,
                    size_t errlen);

/* Integer fields (issue 28, item 9). The nearest double of a literal written with a
 * fraction or an exponent may be a whole number other than the value the literal denotes:
 * "9.007199254740993e15" reads as 9007199254740992 = 2^53, "100.00000000000000001" as 100,
 * "1e-400" as 0. dpzo_json_parse keeps the literal of each such number in its item's
 * valuestring (otherwise NULL for a number, and unused by cJSON; cJSON_Delete frees it).
 * For a number of a tree from dpzo_json_parse: 0 when an integer field may take its value
 * (the literal is exactly that double, or its double is not a whole number, which the field
 * refuses anyway); -1 otherwise, with err "the number 9.007199254740993e15 is not exactly an
 * integer: it would read as 9007199254740992" for the caller to prefix with its key. Double
 * fields take the nearest double, as before. */
int dpzo_json_check_integer(const cJSON *item, char *err, size_t errlen);

/* The NUL-byte rule alone, for readers whose parser takes a C string (the library's text
 * entry points): 0 when text[0..len) holds no NUL byte, else DPZO_JSON_REFUSED with the
 * message dpzo_json_parse gives. */
int dpzo_json_check_nul(const char *text, size_t len, char *err, size_t errlen);

#endif
