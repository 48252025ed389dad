/* SPDX-License-Identifier: Apache-2.0 */
/* cli/plot.c: gnuplot glue and the privacy curves of claims (cli/plot.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "dpzo_io.h"
#include "plot.h"

static int executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

static const char *search_path(const char *name)
{
    static char buf[4096];
    if (strchr(name, '/') != NULL)
        return executable(name) ? name : NULL;
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len > 0 && len + strlen(name) + 2 < sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (executable(buf))
                return buf;
        }
        if (end == NULL)
            break;
        path = end + 1;
    }
    return NULL;
}

const char *plot_gnuplot(void)
{
    const char *env = getenv("DPZO_GNUPLOT");
    return search_path(env != NULL && env[0] != '\0' ? env : "gnuplot");
}

int plot_add(plot_panel *p, const char *label, const double *x, const double *y, size_t n,
             int color, int dash, int points)
{
    plot_series *s = realloc(p->s, (p->ns + 1) * sizeof *s);
    if (s == NULL)
        return 1;
    p->s = s;
    plot_series *t = &s[p->ns];
    memset(t, 0, sizeof *t);
    t->x = malloc((n ? n : 1) * sizeof *t->x);
    t->y = malloc((n ? n : 1) * sizeof *t->y);
    if (t->x == NULL || t->y == NULL) {
        free(t->x);
        free(t->y);
        return 1;
    }
    if (n > 0) {
        memcpy(t->x, x, n * sizeof *x);
        memcpy(t->y, y, n * sizeof *y);
    }
    t->n = n;
    snprintf(t->label, sizeof t->label, "%s", label);
    t->color = color;
    t->dash = dash;
    t->points = points;
    p->ns++;
    return 0;
}

void plot_panels_free(plot_panel *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < p[i].ns; j++) {
            free(p[i].s[j].x);
            free(p[i].s[j].y);
        }
        free(p[i].s);
        p[i].s = NULL;
        p[i].ns = 0;
    }
}

/* A gnuplot single-quoted string: ' doubles. */
static void quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

int plot_path_ok(const char *path) { return ends_with(path, ".png") || ends_with(path, ".svg"); }

static void remove_dir(const char *dir, const plot_panel *panels, size_t n)
{
    char path[4200];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < panels[i].ns; j++) {
            snprintf(path, sizeof path, "%s/s%zu_%zu.dat", dir, i, j);
            unlink(path);
        }
    snprintf(path, sizeof path, "%s/plot.gp", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/gnuplot.log", dir);
    unlink(path);
    rmdir(dir);
}

static int run_gnuplot(const char *gp, const char *script, const char *log)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        execl(gp, gp, script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int write_script(const char *script, const char *dir, const char *path, const char *title,
                        const plot_panel *panels, size_t n, int cairo)
{
    FILE *f = fopen(script, "w");
    if (f == NULL)
        return 1;
    int svg = ends_with(path, ".svg");
    size_t titled = 0; /* key entries: they go below the first panel */
    for (size_t j = 0; n > 0 && j < panels[0].ns; j++)
        titled += panels[0].s[j].label[0] != '\0';
    unsigned w = 620 * (unsigned)n, h = 430 + 17 * (unsigned)titled;
    if (svg)
        fprintf(f, "set terminal svg size %u,%u font 'sans,11' noenhanced\n", w, h);
    else if (cairo)
        fprintf(f, "set terminal pngcairo size %u,%u font 'sans,10' noenhanced\n", w, h);
    else
        fprintf(f, "set terminal png size %u,%u noenhanced\n", w, h);
    fputs("set output ", f);
    quoted(f, path);
    fputs("\nset datafile missing 'NaN'\nset grid\nset autoscale xfix\n", f);
    fputs("set multiplot layout 1,", f);
    fprintf(f, "%zu title ", n);
    quoted(f, title);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const plot_panel *p = &panels[i];
        if (i == 0)
            fputs("set key outside below left Left reverse maxcols 1 font ',9'\n", f);
        else
            fputs("unset key\n", f);
        fputs("set title ", f);
        quoted(f, p->title);
        fputs("\nset xlabel ", f);
        quoted(f, p->xlabel);
        fputs("\nset ylabel ", f);
        quoted(f, p->ylabel);
        fprintf(f, "\n%s logscale x\n%s logscale y\nset format x '%s'\nset format y '%s'\nplot ",
                p->logx ? "set" : "unset", p->logy ? "set" : "unset", p->logx ? "%.0e" : "%g",
                p->logy ? "%.0e" : "%g");
        for (size_t j = 0; j < p->ns; j++) {
            const plot_series *s = &p->s[j];
            char file[4200];
            snprintf(file, sizeof file, "%s/s%zu_%zu.dat", dir, i, j);
            if (j)
                fputs(", \\\n     ", f);
            if (s->n == 0) /* a key entry only */
                fputs("NaN", f);
            else {
                quoted(f, file);
                fputs(" using 1:2", f);
            }
            char lc[32];
            if (s->color > 0)
                snprintf(lc, sizeof lc, "lc %d", s->color);
            else
                snprintf(lc, sizeof lc, "lc rgb 'black'");
            if (s->points)
                fprintf(f, " with points pt 7 ps 1.6 %s", lc);
            else
                fprintf(f, " with lines lw 2 %s dt %d", lc, s->dash);
            if (s->label[0]) {
                fputs(" title ", f);
                quoted(f, s->label);
            } else {
                fputs(" notitle", f);
            }
        }
        fputc('\n', f);
    }
    fputs("unset multiplot\nset output\n", f);
    return fclose(f) != 0;
}

int plot_render(const char *path, const char *title, const plot_panel *panels, size_t n,
                char *err, size_t errsize)
{
    const char *gp = plot_gnuplot();
    if (gp == NULL) {
        snprintf(err, errsize, "%s", PLOT_NO_GNUPLOT);
        return 1;
    }
    char gpbuf[4096];
    snprintf(gpbuf, sizeof gpbuf, "%s", gp);
    if (!ends_with(path, ".png") && !ends_with(path, ".svg")) {
        snprintf(err, errsize, "the picture's file name must end in .png or .svg, got '%s'", path);
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/dpzo-plot-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        snprintf(err, errsize, "cannot create a temporary directory: %s", strerror(errno));
        return 1;
    }
    int rc = 0;
    char file[4200];
    for (size_t i = 0; i < n && !rc; i++)
        for (size_t j = 0; j < panels[i].ns && !rc; j++) {
            snprintf(file, sizeof file, "%s/s%zu_%zu.dat", dir, i, j);
            FILE *f = fopen(file, "w");
            if (f == NULL) {
                rc = 1;
                break;
            }
            const plot_series *s = &panels[i].s[j];
            for (size_t k = 0; k < s->n; k++) {
                if (isfinite(s->x[k]) && isfinite(s->y[k]))
                    fprintf(f, "%.10g %.10g\n", s->x[k], s->y[k]);
                else
                    fprintf(f, "%.10g NaN\n", isfinite(s->x[k]) ? s->x[k] : 0.0);
            }
            rc = fclose(f) != 0;
        }
    /* gnuplot draws into the private folder; the picture is then written to path atomically
     * (a device or FIFO directly, never replaced; docs/files.md) */
    char script[4200], log[4200], pic[4200];
    snprintf(pic, sizeof pic, "%s/picture%s", dir, ends_with(path, ".svg") ? ".svg" : ".png");
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);
    if (rc) {
        snprintf(err, errsize, "cannot write the plot data in %s", dir);
    } else {
        int st = -1;
        for (int cairo = 1; cairo >= 0 && st != 0; cairo--) {
            if (write_script(script, dir, pic, title, panels, n, cairo)) {
                snprintf(err, errsize, "cannot write the gnuplot script in %s", dir);
                rc = 1;
                break;
            }
            st = run_gnuplot(gpbuf, script, log);
            if (ends_with(path, ".svg"))
                break; /* the svg terminal is built in: no other to try */
        }
        if (!rc && st != 0) {
            char line[300] = "";
            FILE *f = fopen(log, "r");
            if (f != NULL) {
                while (fgets(line, sizeof line, f) != NULL)
                    if (strstr(line, "rror") != NULL || strstr(line, "annot") != NULL)
                        break;
                fclose(f);
            }
            line[strcspn(line, "\n")] = '\0';
            snprintf(err, errsize, "gnuplot (%s) failed%s%s", gpbuf, line[0] ? ": " : "", line);
            rc = 1;
        }
    }
    if (!rc) {
        char *bytes = NULL, ioerr[DPZO_IO_ERRMAX];
        size_t len = 0;
        if (dpzo_io_read_file(pic, "picture", DPZO_IO_LIMIT_PICTURE, &bytes, &len, ioerr,
                              sizeof ioerr) != 0 || len == 0) {
            snprintf(err, errsize, "gnuplot wrote no picture to %s", path);
            rc = 1;
        } else if (dpzo_io_write_file(path, "picture", bytes, len, DPZO_IO_DIRECT, ioerr,
                                      sizeof ioerr) != 0) {
            snprintf(err, errsize, "%s", ioerr);
            rc = 2; /* the output cannot be written: as when the check refuses it */
        }
        free(bytes);
    }
    unlink(pic);
    remove_dir(dir, panels, n);
    return rc;
}

/* ---- Privacy curves of claims ---------------------------------------------------- */

static void short_name(const dpzo_claim_spec *s, size_t i, size_t n, char *buf, size_t size)
{
    (void)n;
    size_t len = strlen(s->name);
    snprintf(buf, size, "%zu. %.80s%s", i + 1, s->name, len > 80 ? "..." : "");
}

int plot_claim_panels(dpzo_ctx *ctx, const dpzo_claim_spec *specs, size_t n, int which,
                      const plot_curve_options *o, plot_panel *panels, size_t *np, char *err,
                      size_t errsize)
{
    size_t k = o->points >= 3 ? o->points : 12;
    err[0] = '\0';
    double *x = malloc(k * sizeof *x), *rdp = malloc(k * sizeof *rdp),
           *up = malloc(k * sizeof *up), *lo = malloc(k * sizeof *lo);
    int rc = 0;
    *np = 0;
    if (x == NULL || rdp == NULL || up == NULL || lo == NULL) {
        snprintf(err, errsize, "out of memory");
        rc = 1;
    }
    dpzo_audit_options ao;
    dpzo_audit_options_default(&ao);
    ao.prv = 0;
    ao.calibrate = 0;
    for (int axis = PLOT_EPS_DELTA; axis <= PLOT_EPS_STEPS && !rc; axis <<= 1) {
        if (!(which & axis))
            continue;
        plot_panel *p = &panels[(*np)++];
        memset(p, 0, sizeof *p);
        p->logx = 1;
        snprintf(p->ylabel, sizeof p->ylabel, "epsilon");
        if (axis == PLOT_EPS_DELTA) {
            snprintf(p->title, sizeof p->title, "epsilon against delta");
            snprintf(p->xlabel, sizeof p->xlabel, "delta");
        } else {
            snprintf(p->title, sizeof p->title, "epsilon against steps (at the claimed delta)");
            snprintf(p->xlabel, sizeof p->xlabel, "steps");
        }
        for (size_t c = 0; c < n && !rc; c++) {
            const dpzo_claim_spec *s = &specs[c];
            const dpzo_claim *cl = &s->claim;
            dpzo_audit_mechanism mb;
            const dpzo_audit_mechanism *mech = dpzo_claim_spec_mechanism(ctx, s, &mb);
            if (s->noise != DPZO_CLAIM_NOISE_GAUSSIAN && mech == NULL) {
                snprintf(err, errsize, "%s", dpzo_ctx_errmsg(ctx));
                rc = 1;
                break;
            }
            double a, b;
            if (axis == PLOT_EPS_DELTA) {
                /* the defaults stay inside [1e-300, 0.2]; given ends are the caller's
                 * (dpzo plot refuses values outside [1e-300, 1)) */
                a = o->delta_min > 0.0 ? o->delta_min : fmax(1e-300, cl->delta * 1e-4);
                b = o->delta_max > 0.0 ? o->delta_max : fmin(0.2, cl->delta * 1e4);
            } else {
                /* at most 2^53 steps (every count is exact in double, and llround below
                 * cannot overflow) */
                b = o->steps_max > 0.0 ? o->steps_max : fmin(2.0 * (double)cl->steps, 0x1p53);
                a = fmax(1.0, b / 1000.0);
            }
            if (!(b > a) || (axis == PLOT_EPS_STEPS && !(b <= 0x1p53))) {
                snprintf(err, errsize, "empty or invalid %s range [%g, %g]%s",
                         axis == PLOT_EPS_DELTA ? "delta" : "steps", a, b,
                         axis == PLOT_EPS_DELTA ? " (the claim's delta with --delta-min / "
                                                  "--delta-max)"
                                                : " (steps at most 2^53)");
                rc = 2; /* bad input */
                break;
            }
            size_t m = 0;
            for (size_t i = 0; i < k; i++) {
                double t = exp(log(a) + (log(b) - log(a)) * (double)i / (double)(k - 1));
                uint64_t steps = cl->steps;
                double delta = cl->delta;
                if (axis == PLOT_EPS_DELTA) {
                    delta = t;
                } else {
                    steps = (uint64_t)llround(t);
                    if (m > 0 && (double)steps == x[m - 1])
                        continue;
                }
                if (o->progress != NULL) {
                    char what[160];
                    snprintf(what, sizeof what, "points, %.80s, epsilon against %s",
                             s->name, axis == PLOT_EPS_DELTA ? "delta" : "steps");
                    size_t axes = (which & PLOT_EPS_DELTA ? 1u : 0u)
                                  + (which & PLOT_EPS_STEPS ? 1u : 0u);
                    progress_step(o->progress, ((*np - 1) * n + c) * k + i, axes * n * k, what);
                }
                dpzo_audit_bounds bd;
                double grid = o->grid > 0.0 ? o->grid : mech != NULL ? 1e-3 : 1e-4;
                dpzo_status st = dpzo_audit_bounds_at(ctx, cl, mech, cl->sampling, steps, delta,
                                                      grid, &ao, &bd);
                if (st) {
                    snprintf(err, errsize, "%s", dpzo_ctx_errmsg(ctx));
                    rc = st == DPZO_EINVAL ? 2 : 1; /* a value out of range: bad input */
                    break;
                }
                x[m] = axis == PLOT_EPS_DELTA ? delta : (double)steps;
                rdp[m] = bd.rdp;
                double tight = fmin(isnan(bd.pld_upper) ? INFINITY : bd.pld_upper,
                                    isnan(bd.prv_upper) ? INFINITY : bd.prv_upper);
                up[m] = isfinite(tight) ? tight : NAN;
                lo[m] = bd.lower > 0.0 || !isnan(bd.pld_lower) ? bd.lower : NAN;
                m++;
            }
            if (rc)
                break;
            int drawable = 0; /* gnuplot fails on a log-scale panel without a finite point */
            for (size_t i = 0; i < m; i++)
                drawable |= (isfinite(rdp[i]) && rdp[i] > 0.0) || (isfinite(up[i]) && up[i] > 0.0)
                            || (isfinite(lo[i]) && lo[i] > 0.0);
            if (!drawable) {
                snprintf(err, errsize, "%.200s (%s%g, steps %llu): no finite positive epsilon "
                         "on the %s range [%g, %g] (every bound is 0, infinite or undefined), "
                         "nothing to draw",
                         s->name, mech ? "sampling rate " : "noise multiplier ",
                         mech ? cl->sampling_rate : cl->noise_multiplier,
                         (unsigned long long)cl->steps,
                         axis == PLOT_EPS_DELTA ? "delta" : "steps", a, b);
                rc = 2; /* the inputs describe nothing drawable */
                break;
            }
            char label[200];
            int color = (int)c + 1;
            double cx = axis == PLOT_EPS_DELTA ? cl->delta : (double)cl->steps, cy = cl->epsilon;
            if (n == 1) {
                rc |= plot_add(p, "RDP accountant (certified upper bound)", x, rdp, m, color, 3, 0);
                rc |= plot_add(p, "PLD accountant (proven upper bound)", x, up, m, color, 1, 0);
                rc |= plot_add(p, "proven lower bound", x, lo, m, color, 2, 0);
                snprintf(label, sizeof label, "the claim: epsilon %g at delta %g", cl->epsilon,
                         cl->delta);
                if (cl->epsilon > 0.0) /* 0: a mechanism without a claim */
                    rc |= plot_add(p, label, &cx, &cy, 1, color, 1, 1);
            } else {
                short_name(s, c, n, label, sizeof label);
                rc |= plot_add(p, "", x, rdp, m, color, 3, 0);
                rc |= plot_add(p, label, x, up, m, color, 1, 0);
                rc |= plot_add(p, "", x, lo, m, color, 2, 0);
                if (cl->epsilon > 0.0)
                    rc |= plot_add(p, "", &cx, &cy, 1, color, 1, 1);
            }
            if (rc && !err[0])
                snprintf(err, errsize, "out of memory");
        }
    }
    if (!rc && n > 1) /* what the line styles mean */
        for (size_t i = 0; i < *np && !rc; i++) {
            rc |= plot_add(&panels[i], "dotted: RDP accountant (certified upper bound)", NULL,
                           NULL, 0, 0, 3, 0);
            rc |= plot_add(&panels[i], "solid: PLD accountant (proven upper bound)", NULL, NULL,
                           0, 0, 1, 0);
            rc |= plot_add(&panels[i], "dashed: proven lower bound", NULL, NULL, 0, 0, 2, 0);
            rc |= plot_add(&panels[i], "point: the claim", NULL, NULL, 0, 0, 1, 1);
        }
    free(x);
    free(rdp);
    free(up);
    free(lo);
    if (rc) {
        plot_panels_free(panels, *np);
        *np = 0;
    }
    return rc;
}
