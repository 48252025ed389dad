/* SPDX-License-Identifier: Apache-2.0 */
/* cli/plot.h: pictures with gnuplot (Debian: gnuplot-nox). The data and a gnuplot script
 * go to a temporary directory, gnuplot draws a PNG (pngcairo) or an SVG, and the directory
 * is removed. $DPZO_GNUPLOT names the program if it is not `gnuplot` on the PATH. */
#ifndef DPZO_CLI_PLOT_H
#define DPZO_CLI_PLOT_H

#include <stddef.h>
#include <dpzo/audit_claim.h>
#include "progress.h"

typedef struct {
    char label[200];
    double *x, *y; /* owned (malloc'ed); NaN = no value */
    size_t n;
    int color;     /* 1, 2, ...: one colour per claim or noise */
    int dash;      /* 1 solid, 2 dashed, 3 dotted, ... */
    int points;    /* 1: draw points only */
} plot_series;

typedef struct {
    char title[200], xlabel[80], ylabel[80];
    int logx, logy;
    plot_series *s; /* owned */
    size_t ns;
} plot_panel;

/* 1 when the file name ends in .png or .svg (any case). */
int plot_path_ok(const char *path);
/* The gnuplot program, or NULL when it cannot be found. */
const char *plot_gnuplot(void);
/* The message printed when gnuplot is missing. */
#define PLOT_NO_GNUPLOT                                                                    \
    "gnuplot not found: dpzo draws its pictures with gnuplot (Debian: apt-get install "     \
    "gnuplot-nox, or scripts/install-deps.sh); set DPZO_GNUPLOT to use another binary"

/* Draws the panels side by side into `path` (.png or .svg). 0 on success; 2 when the
 * picture cannot be written to `path` (an unwritable output, exit status 2); otherwise 1
 * (gnuplot missing or failing, the temporary folder), with a one-line reason in err. */
int plot_render(const char *path, const char *title, const plot_panel *panels, size_t n,
                char *err, size_t errsize);

/* Adds a series (copies x and y); 0 or 1 when out of memory. */
int plot_add(plot_panel *p, const char *label, const double *x, const double *y, size_t n,
             int color, int dash, int points);
void plot_panels_free(plot_panel *p, size_t n);

enum { PLOT_EPS_DELTA = 1, PLOT_EPS_STEPS = 2 };

typedef struct {
    double delta_min, delta_max; /* 0: around each claim's delta */
    double steps_max;            /* 0: twice each claim's steps */
    size_t points;               /* per curve (default 12) */
    double grid;                 /* PLD grid of the curves (0: 1e-4, LMO noise 1e-3) */
    cli_progress *progress;      /* NULL: none; else each point is reported */
} plot_curve_options;

/* Computes the privacy curves of the claims (RDP, PLD upper and lower, the claim itself)
 * into panels `which` (PLOT_EPS_DELTA | PLOT_EPS_STEPS). 0; 2 with the reason in err when
 * an input is out of range (an empty delta or steps range, more than 2^53 steps, a value
 * the accountant refuses: exit status 2); 1 with the reason for any other failure. */
int plot_claim_panels(dpzo_ctx *ctx, const dpzo_claim_spec *specs, size_t n, int which,
                      const plot_curve_options *o, plot_panel *panels, size_t *np, char *err,
                      size_t errsize);

#endif
