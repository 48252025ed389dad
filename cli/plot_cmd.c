/* SPDX-License-Identifier: Apache-2.0 */
/* cli/plot_cmd.c: `dpzo plot`: privacy curves of claims and mechanisms, and the LMO noise
 * density against the Gaussian of equal epsilon, drawn with gnuplot (cli/plot.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpzo/dpzo.h>
#include <dpzo/audit_claim.h>
#include "audit_cli.h"
#include "commands.h"
#include "dpzo_io.h"
#include "output.h"
#include "plot.h"

static const char *plot_help =
    "usage: dpzo plot epsilon-delta CLAIM.json... [claim flags] -o FILE.png|FILE.svg [options]\n"
    "       dpzo plot epsilon-steps CLAIM.json... [claim flags] -o FILE [options]\n"
    "       dpzo plot curves        CLAIM.json... [claim flags] -o FILE [options]\n"
    "       dpzo plot noise (--profile FILE | LMO parameters | CLAIM.json) -o FILE [options]\n"
    "\n"
    "People would rather look at a privacy curve than read one. The pictures are drawn with\n"
    "gnuplot (Debian: gnuplot-nox), as PNG or SVG by the output file's extension.\n"
    "\n"
    "epsilon-delta   epsilon against delta (log scale) for each claim or mechanism: the RDP\n"
    "                accountant's certified upper bound (dotted), the PLD accountant's proven\n"
    "                upper (solid) and lower (dashed) bounds, and the claim as a point\n"
    "epsilon-steps   the same against the number of steps, at the claimed delta\n"
    "curves          both, side by side (the figure of `dpzo audit --markdown`)\n"
    "noise           the LMO noise density against the Gaussian of equal epsilon: the\n"
    "                smallest Gaussian noise multiplier whose proven epsilon is at most the LMO\n"
    "                noise's proven epsilon for the same release (one release by default,\n"
    "                or the run of --sampling-rate/--steps or of the claim file), linear and\n"
    "                log scale. Below epsilon 1 it also draws the classical\n"
    "                sigma = sqrt(2 ln(1.25/delta))/epsilon that the LMO-DP paper compares with\n"
    "\n"
    "CLAIM.json are claim files or noise profiles (see dpzo audit --help); several are drawn in\n"
    "one picture, one colour each.\n"
    "\n"
    CLAIM_HELP
    "  (--epsilon is optional here: without it, or with 0, no claim point is drawn.)\n"
    "\n"
    "Options:\n"
    "  -o FILE             the picture (.png or .svg; required)\n"
    "  --points N          points per curve (default 12)\n"
    "  --delta-min D --delta-max D   the delta range, each in [1e-300, 1) (default claimed\n"
    "                      delta / 1e4 to x 1e4, within [1e-300, 0.2])\n"
    "  --steps-max T       the steps range ends at T, an integer in [2, 2^53] (default\n"
    "                      twice the claim's steps)\n"
    "  --grid G            PLD grid of the curves (default 1e-4, LMO noise 1e-3; coarser is\n"
    "                      faster and looser, and every upper bound stays proven)\n"
    "  noise: --profile FILE (an LMO profile) or --gamma-weight --gamma-shape --gamma-scale\n"
    "         --exp-weight --exp-rate --uniform-weight --uniform-low --uniform-high;\n"
    "         --delta D (default 1e-5), --sampling-rate Q --steps T (a Poisson run)\n"
    "\n"
    "Exit status: 0 success, 2 bad input, 1 other failure (gnuplot missing or failing).\n";

static int get_pos(const parsed_args *a, const char *name, double *out)
{
    const char *v = args_get(a, name);
    if (v == NULL)
        return 0;
    if (parse_real(name, v, out))
        return 2;
    if (!(*out > 0.0))
        return cli_usage_error("--%s must be > 0, got %s", name, v);
    return 0;
}

static int plot_claims_cmd(int which, int argc, char **argv)
{
    static const opt_spec specs[] = {CLAIM_OPTS,        {"o", 1},         {"points", 1},
                                     {"delta-min", 1},  {"delta-max", 1}, {"steps-max", 1},
                                     {"grid", 1},       {"help", 0},      {NULL, 0}};
    const char **files;
    int nfiles, rc = 0;
    parsed_args a;
    plot_curve_options po = {0, 0, 0, 12, 0, NULL};
    cli_progress pg;
    uint64_t points = 12;
    const char *out = NULL;
    if ((rc = cli_parse_files(argc, argv, specs, &files, &nfiles, &a)))
        goto done;
    if (args_has(&a, "help")) {
        fputs(plot_help, stdout);
        goto done;
    }
    if ((out = args_get(&a, "o")) == NULL || !plot_path_ok(out)) {
        rc = cli_usage_error("-o FILE.png or FILE.svg is required%s%s%s", out ? " (got '" : "",
                             out ? out : "", out ? "')" : "");
        goto done;
    }
    /* checked before the curves are computed and drawn (issue 28, item 6) */
    if ((rc = cli_check_output(out, "picture", DPZO_IO_DIRECT)) != 0)
        goto done;
    if (args_has(&a, "points")
        && ((rc = parse_count("points", args_get(&a, "points"), &points)) || points < 3
            || points > 200)) {
        rc = rc ? rc : cli_usage_error("--points must be in [3, 200]");
        goto done;
    }
    po.points = (size_t)points;
    if ((rc = get_pos(&a, "delta-min", &po.delta_min)) ||
        (rc = get_pos(&a, "delta-max", &po.delta_max)) || (rc = get_pos(&a, "grid", &po.grid)))
        goto done;
    if (args_has(&a, "steps-max")) { /* a count: an integer in [2, 2^53] */
        uint64_t t;
        if ((rc = parse_count("steps-max", args_get(&a, "steps-max"), &t)))
            goto done;
        if (t < 2) {
            rc = cli_usage_error("--steps-max must be in [2, 2^53], got %s",
                                 args_get(&a, "steps-max"));
            goto done;
        }
        po.steps_max = (double)t;
    }
    for (int i = 0; i < 2; i++) {
        double v = i ? po.delta_max : po.delta_min;
        if (v != 0.0 && !(v >= 1e-300 && v < 1.0)) {
            rc = cli_usage_error("--%s must be in [1e-300, 1), got %s",
                                 i ? "delta-max" : "delta-min",
                                 args_get(&a, i ? "delta-max" : "delta-min"));
            goto done;
        }
    }
    if (po.delta_min > 0 && po.delta_max > 0 && po.delta_min >= po.delta_max) {
        rc = cli_usage_error("the delta range must satisfy delta-min < delta-max, got %s and %s",
                             args_get(&a, "delta-min"), args_get(&a, "delta-max"));
        goto done;
    }
    if (po.grid > 1.0) {
        rc = cli_usage_error("--grid must be in (0, 1], got %s", args_get(&a, "grid"));
        goto done;
    }
    if (plot_gnuplot() == NULL) {
        fprintf(stderr, "dpzo: error: %s\n", PLOT_NO_GNUPLOT);
        rc = 1;
        goto done;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    claim_set cs;
    if (ctx == NULL) {
        rc = cli_out_of_memory();
        goto done;
    }
    if ((rc = claims_load(ctx, files, nfiles, &a, 0, &cs)) == 0)
        for (size_t i = 0; i < cs.n && !rc; i++)
            if (cs.specs[i].noise == DPZO_CLAIM_NOISE_EVENT)
                rc = cli_usage_error("claim %s states an event: dpzo plot draws the curves of "
                                     "a mechanism claim (check an event claim with dpzo audit)",
                                     cs.specs[i].name);
    if (rc == 0) {
        plot_panel panels[2];
        size_t np = 0;
        char err[400] = "", title[240];
        progress_begin(&pg, "dpzo plot", 0);
        po.progress = &pg;
        int prc = plot_claim_panels(ctx, cs.specs, cs.n, which, &po, panels, &np, err,
                                    sizeof err);
        int rrc = 0;
        if (!prc) {
            if (cs.n == 1)
                snprintf(title, sizeof title, "%.200s", cs.specs[0].name);
            else
                snprintf(title, sizeof title, "%zu claims", cs.n);
            progress_step(&pg, 0, 0, "drawing with gnuplot");
            rrc = plot_render(out, title, panels, np, err, sizeof err);
        }
        progress_end(&pg);
        if (prc) {
            fprintf(stderr, "dpzo: error: %s\n", err);
            rc = prc; /* 2: a range or value out of bounds; 1: any other failure */
        } else {
            if (rrc) {
                fprintf(stderr, "dpzo: error: %s\n", err);
                rc = rrc; /* 2: the picture could not be written; 1: gnuplot */
            } else {
                size_t curves = 0;
                for (size_t i = 0; i < np; i++)
                    curves += panels[i].ns;
                printf("dpzo plot: wrote %s (%zu panel%s, %zu series, %zu claim%s)\n", out, np,
                       np == 1 ? "" : "s", curves, cs.n, cs.n == 1 ? "" : "s");
            }
            plot_panels_free(panels, np);
        }
    }
    claims_free(&cs);
    dpzo_ctx_free(ctx);
done:
    free(files);
    return rc;
}

static const char *lmo_keys[8] = {"gamma-weight", "gamma-shape",    "gamma-scale",
                                  "exp-weight",   "exp-rate",       "uniform-weight",
                                  "uniform-low",  "uniform-high"};

static int plot_noise(int argc, char **argv)
{
    static const opt_spec specs[] = {
        {"profile", 1},     {"gamma-weight", 1}, {"gamma-shape", 1},   {"gamma-scale", 1},
        {"exp-weight", 1},  {"exp-rate", 1},     {"uniform-weight", 1}, {"uniform-low", 1},
        {"uniform-high", 1}, {"delta", 1},       {"sampling-rate", 1}, {"steps", 1},
        {"o", 1},           {"help", 0},         {NULL, 0}};
    const char *files[2] = {NULL, NULL};
    const char **fl;
    int nfiles, rc;
    parsed_args a;
    rc = cli_parse_files(argc, argv, specs, &fl, &nfiles, &a);
    files[0] = nfiles ? fl[0] : NULL;
    free(fl);
    if (rc)
        return rc;
    if (args_has(&a, "help")) {
        fputs(plot_help, stdout);
        return 0;
    }
    if (nfiles > 1)
        return cli_usage_error("one claim file at a time for dpzo plot noise");
    const char *out = args_get(&a, "o");
    if (out == NULL || !plot_path_ok(out))
        return cli_usage_error("-o FILE.png or FILE.svg is required%s%s%s", out ? " (got '" : "",
                               out ? out : "", out ? "')" : "");
    if ((rc = cli_check_output(out, "picture", DPZO_IO_DIRECT)) != 0) /* before the work */
        return rc;
    int n_lmo = 0;
    for (int i = 0; i < 8; i++)
        n_lmo += args_has(&a, lmo_keys[i]);
    if ((files[0] != NULL) + args_has(&a, "profile") + (n_lmo > 0) != 1)
        return cli_usage_error("give the LMO noise once: a claim file, --profile FILE or the "
                               "eight --gamma-*/--exp-*/--uniform-* parameters");
    if (n_lmo > 0 && n_lmo < 8)
        return cli_usage_error("the LMO noise needs all eight parameters (--gamma-weight "
                               "--gamma-shape --gamma-scale --exp-weight --exp-rate "
                               "--uniform-weight --uniform-low --uniform-high)");
    if (plot_gnuplot() == NULL) {
        fprintf(stderr, "dpzo: error: %s\n", PLOT_NO_GNUPLOT);
        return 1;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return cli_out_of_memory();
    dpzo_claim_spec spec, *loaded = NULL;
    size_t nloaded = 0;
    dpzo_claim_spec_init(&spec);
    rc = 0;
    if (files[0] != NULL) {
        if (dpzo_claims_read_file(ctx, files[0], &loaded, &nloaded))
            rc = cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
        else if (nloaded != 1 || loaded[0].noise != DPZO_CLAIM_NOISE_LMO)
            rc = cli_usage_error("%s: dpzo plot noise needs one claim with an LMO noise", files[0]);
        else
            spec = loaded[0];
        free(loaded);
    } else {
        dpzo_claim *c = &spec.claim;
        spec.noise = DPZO_CLAIM_NOISE_LMO;
        if (args_has(&a, "profile")) {
            dpzo_profile pr;
            if (dpzo_profile_read_file(ctx, args_get(&a, "profile"), &pr))
                rc = cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
            else {
                if (pr.kind != DPZO_NOISE_LMO)
                    rc = cli_usage_error("%s is not an LMO profile", args_get(&a, "profile"));
                spec.lmo = pr.lmo;
                dpzo_profile_free(&pr);
            }
        } else {
            double *dst[8] = {&spec.lmo.gamma_weight, &spec.lmo.gamma_shape,
                              &spec.lmo.gamma_scale,  &spec.lmo.exp_weight,
                              &spec.lmo.exp_rate,     &spec.lmo.uniform_weight,
                              &spec.lmo.uniform_low,  &spec.lmo.uniform_high};
            for (int i = 0; i < 8 && !rc; i++)
                rc = parse_real(lmo_keys[i], args_get(&a, lmo_keys[i]), dst[i]);
            if (!rc && dpzo_lmo_validate(ctx, &spec.lmo))
                rc = cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
        }
        c->delta = 1e-5;
        c->sampling = DPZO_SAMPLING_FULL;
        c->steps = 1;
        c->sensitivity = 1.0;
        const char *v;
        if (!rc && (v = args_get(&a, "delta")) != NULL
            && (parse_real("delta", v, &c->delta) || !(c->delta > 0.0 && c->delta < 1.0)))
            rc = cli_usage_error("--delta must be in (0, 1), got %s", v);
        if (!rc && args_has(&a, "sampling-rate") != args_has(&a, "steps"))
            rc = cli_usage_error("--sampling-rate and --steps come together");
        if (!rc && args_has(&a, "sampling-rate")) {
            c->sampling = DPZO_SAMPLING_POISSON;
            if (parse_real("sampling-rate", args_get(&a, "sampling-rate"), &c->sampling_rate)
                || parse_count("steps", args_get(&a, "steps"), &c->steps))
                rc = 2;
        }
        snprintf(spec.name, sizeof spec.name, "LMO noise");
    }
    if (!rc && dpzo_claim_validate(ctx, &spec.claim))
        rc = cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
    double eps = NAN, sigma = NAN;
    dpzo_audit_mechanism mb;
    cli_progress pg;
    progress_begin(&pg, "dpzo plot noise", 0);
    if (!rc) {
        progress_step(&pg, 0, 0, "the LMO noise's epsilon and the Gaussian of equal epsilon");
        const dpzo_audit_mechanism *mech = dpzo_claim_spec_mechanism(ctx, &spec, &mb);
        dpzo_status st = mech == NULL ? DPZO_EINVAL
                                      : dpzo_audit_equal_gaussian(ctx, &spec.claim, mech, NULL,
                                                                  &eps, &sigma);
        if (st == DPZO_EINFEASIBLE) /* epsilon 0 or inf: these inputs have no comparison */
            rc = cli_usage_error("%s (noise, --delta, --sampling-rate and --steps give no "
                                 "finite positive epsilon)", dpzo_ctx_errmsg(ctx));
        else if (st)
            rc = report_failure(ctx, st);
    }
    if (rc) {
        progress_end(&pg);
        dpzo_ctx_free(ctx);
        return rc;
    }
    const dpzo_claim *c = &spec.claim;
    const dpzo_lmo *lmo = &spec.lmo;
    double C = dpzo_claim_sensitivity(c), X = 4.0 * sigma * C;
    for (double t = C; t < 1e6 * C; t *= 1.5)
        if (dpzo_lmo_sf(lmo, t / C) < 5e-4) {
            X = fmax(X, t);
            break;
        }
    int classical = c->sampling == DPZO_SAMPLING_FULL && c->steps == 1 && eps < 1.0;
    double s_cl = sqrt(2.0 * (log(1.25) - log(c->delta))) / eps; /* 1.25/1e-320 overflows */
    enum { N = 801 };
    double *x = malloc(N * sizeof *x), *fl_ = malloc(N * sizeof *fl_), *fg = malloc(N * sizeof *fg),
           *fc = malloc(N * sizeof *fc);
    plot_panel panels[2];
    memset(panels, 0, sizeof panels);
    if (x == NULL || fl_ == NULL || fg == NULL || fc == NULL)
        rc = cli_out_of_memory();
    for (int i = 0; !rc && i < N; i++) {
        x[i] = -X + 2.0 * X * i / (N - 1);
        fl_[i] = dpzo_lmo_pdf(lmo, x[i] / C) / C;
        double z = x[i] / (sigma * C), zc = x[i] / (s_cl * C);
        fg[i] = exp(-0.5 * z * z) / (sigma * C * sqrt(2.0 * M_PI));
        fc[i] = exp(-0.5 * zc * zc) / (s_cl * C * sqrt(2.0 * M_PI));
    }
    char lab[200], title[240], b1[40], b2[40];
    for (int p = 0; !rc && p < 2; p++) {
        plot_panel *pp = &panels[p];
        snprintf(pp->title, sizeof pp->title, p == 0 ? "density" : "density (log scale)");
        snprintf(pp->xlabel, sizeof pp->xlabel, "noise (units of the sensitivity C)");
        snprintf(pp->ylabel, sizeof pp->ylabel, "density");
        pp->logy = p;
        snprintf(lab, sizeof lab, "LMO (epsilon <= %s)", fmt_dir(b1, sizeof b1, eps, 6, 1));
        rc |= plot_add(pp, lab, x, fl_, N, 1, 1, 0);
        snprintf(lab, sizeof lab, "Gaussian sigma %s (same proven epsilon)",
                 fmt_dir(b2, sizeof b2, sigma, 6, 1));
        rc |= plot_add(pp, lab, x, fg, N, 2, 1, 0);
        if (classical) {
            snprintf(lab, sizeof lab, "Gaussian sigma %.6g = sqrt(2 ln(1.25/delta))/epsilon", s_cl);
            rc |= plot_add(pp, lab, x, fc, N, 3, 2, 0);
        }
    }
    char err[400] = "";
    if (c->sampling == DPZO_SAMPLING_FULL && c->steps == 1)
        snprintf(title, sizeof title, "LMO noise against the Gaussian of equal epsilon: one "
                                      "release, delta %g", c->delta);
    else
        snprintf(title, sizeof title, "LMO noise against the Gaussian of equal epsilon: %llu "
                                      "steps, delta %g", (unsigned long long)c->steps, c->delta);
    progress_step(&pg, 0, 0, "drawing with gnuplot");
    int rrc = rc ? 0 : plot_render(out, title, panels, 2, err, sizeof err);
    progress_end(&pg);
    if (rrc) {
        fprintf(stderr, "dpzo: error: %s\n", err);
        rc = rrc; /* 2: the picture could not be written; 1: gnuplot */
    }
    if (!rc) {
        dpzo_audit_mechanism m2;
        dpzo_lmo_audit_mechanism(ctx, lmo, &m2);
        printf("dpzo plot noise: wrote %s\n", out);
        printf("  noise      %s\n", m2.describe);
        printf("  run        %s, delta %g\n",
               c->sampling == DPZO_SAMPLING_FULL && c->steps == 1 ? "one release"
                                                                  : "the claim's run",
               c->delta);
        printf("  epsilon    %s (proven upper bound of the LMO noise)\n",
               fmt_dir(b1, sizeof b1, eps, 8, 1));
        printf("  Gaussian   noise multiplier %s has a proven epsilon at most that\n",
               fmt_dir(b2, sizeof b2, sigma, 6, 1));
        if (classical)
            printf("  classical  sigma = sqrt(2 ln(1.25/delta))/epsilon = %.6g (the paper's "
                   "comparison)\n", s_cl);
    }
    plot_panels_free(panels, 2);
    free(x);
    free(fl_);
    free(fg);
    free(fc);
    dpzo_ctx_free(ctx);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    if (argc == 0) {
        fputs(plot_help, stderr);
        return 2;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0
        || strcmp(argv[0], "help") == 0) {
        fputs(plot_help, stdout);
        return 0;
    }
    if (strcmp(argv[0], "epsilon-delta") == 0)
        return plot_claims_cmd(PLOT_EPS_DELTA, argc - 1, argv + 1);
    if (strcmp(argv[0], "epsilon-steps") == 0)
        return plot_claims_cmd(PLOT_EPS_STEPS, argc - 1, argv + 1);
    if (strcmp(argv[0], "curves") == 0)
        return plot_claims_cmd(PLOT_EPS_DELTA | PLOT_EPS_STEPS, argc - 1, argv + 1);
    if (strcmp(argv[0], "noise") == 0)
        return plot_noise(argc - 1, argv + 1);
    static const char *const names[] = {"epsilon-delta", "epsilon-steps", "curves", "noise", NULL};
    return cli_unknown_word("plot", argv[0], names,
                            "epsilon-delta, epsilon-steps, curves or noise; see dpzo plot --help");
}
