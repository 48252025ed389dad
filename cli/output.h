/* SPDX-License-Identifier: Apache-2.0 */
/* cli/output.h: JSON helpers (non-finite numbers as the strings "inf"/"-inf") and
 * the event built from the command line or a schedule file. */
#ifndef DPZO_CLI_OUTPUT_H
#define DPZO_CLI_OUTPUT_H

#include <cjson/cJSON.h>
#include <dpzo/dpzo.h>
#include "args.h"

void json_number(cJSON *obj, const char *key, double v);
/* v with `digits` significant digits, rounded up (dir > 0) or down (dir < 0), so that a
 * printed guarantee is never below (or a printed lower bound above) the proven value.
 * Non-finite values print as inf / -inf. Writes into buf and returns it. */
const char *fmt_dir(char *buf, size_t size, double v, int digits, int dir);
#define FMT_UP(buf, v, digits) fmt_dir(buf, sizeof buf, v, digits, 1)
#define FMT_DOWN(buf, v, digits) fmt_dir(buf, sizeof buf, v, digits, -1)
void json_number_array(cJSON *obj, const char *key, const double *v, size_t n);
/* Prints the object to stdout and frees it. */
void json_print(cJSON *obj);

/* Checks, before the command's work, that the output path can be written (common/dpzo_io.h,
 * dpzo_io_check_output; flags as the real write's: DPZO_IO_DIRECT where a device, FIFO or
 * "-" is written directly). 0, or prints "dpzo: error: ..." naming the path and returns 2
 * (bad input, as an unwritable --metrics file has always been; docs/files.md). */
int cli_check_output(const char *path, const char *what, unsigned flags);

/* Reads a schedule file (JSON array of {"noise_multiplier", "sampling_rate", "steps"}).
 * On error prints one line and returns 2. *phases is malloc'ed. */
int schedule_read(const char *path, dpzo_phase **phases, size_t *n);

#endif
