/* SPDX-License-Identifier: Apache-2.0 */
/* cli/progress.h: a progress line for long commands (plot, audit, PLD/PRV calibration).
 *
 * Shown only when stderr is a terminal and the output is not JSON: written to stderr,
 * overwritten in place with \r, cleared when the work ends. Tests and the docs run without
 * a terminal, so their outputs never contain it. The library never prints: the commands
 * report what they loop over (progress_step), and a ticker thread redraws the elapsed time
 * while one long library call runs. */
#ifndef DPZO_CLI_PROGRESS_H
#define DPZO_CLI_PROGRESS_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

typedef struct {
    int on;                /* drawing (stderr is a terminal, not --json) */
    const char *label;     /* "dpzo plot" */
    char what[160];        /* the item under way */
    size_t done, total;    /* total 0: no count */
    struct timespec start;
    int ticking;           /* the ticker thread runs */
    int stop;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} cli_progress;

/* Starts the line when stderr is a terminal and json is 0 (otherwise every call below
 * does nothing). `label` must outlive the progress. */
void progress_begin(cli_progress *p, const char *label, int json);
/* `done` of `total` items finished (total 0: uncounted), `what` is under way now. */
void progress_step(cli_progress *p, size_t done, size_t total, const char *what);
/* Clears the line and stops the ticker. */
void progress_end(cli_progress *p);

/* The line's text: "LABEL: DONE/TOTAL WHAT (S s)", WHAT cut with "..." so that the line
 * fits in `width` characters (when the rest does). Returns buf. */
const char *progress_format(char *buf, size_t size, size_t width, const char *label,
                            size_t done, size_t total, const char *what, double elapsed);

#endif
