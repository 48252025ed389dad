/* SPDX-License-Identifier: Apache-2.0 */
/* cli/lmo_cmd.c: `dpzo lmo info|rdp|epsilon|sample|search`. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "account.h"
#include "commands.h"
#include "output.h"
#include "dpzo_io.h"
#include "dpzo_json.h"

#define LMO_PARAM_OPTS                                                                      \
    {"gamma-weight", 1}, {"gamma-shape", 1}, {"gamma-scale", 1}, {"exp-weight", 1},       \
        {"exp-rate", 1}, {"uniform-weight", 1}, {"uniform-low", 1}, {"uniform-high", 1},  \
        {"profile", 1}

#define LMO_PARAM_HELP                                                                      \
    "The noise: X | Y ~ Laplace(0, 1/Y), Y = wG*Gamma(k, theta) + wE*Exp(rate lam)\n"       \
    "           + wU*Uniform(a, b), independent (docs/lmo.md). Give all eight of\n"        \
    "  --gamma-weight wG --gamma-shape k --gamma-scale theta --exp-weight wE\n"              \
    "  --exp-rate lam --uniform-weight wU --uniform-low a --uniform-high b\n"                \
    "(a weight of 0 drops its component; the exponential takes its RATE), or\n"            \
    "  --profile FILE   an LMO noise profile (from dpzo lmo search -o)\n"

/* The paper's numbers in fixed point with `dec` decimals, as the docs show them; past
 * 1e9 (or not finite) in %g form, so a huge value is not printed as 300 digits. */
static const char *paper_fmt(char *buf, size_t size, double v, int dec)
{
    if (isfinite(v) && fabs(v) < 1e9)
        snprintf(buf, size, "%.*f", dec, v);
    else
        snprintf(buf, size, "%.*g", dec, v);
    return buf;
}

#define SAMPLING_OPTS {"sampling-rate", 1}, {"batch-size", 1}, {"dataset-size", 1}, {"steps", 1}

static const char *const lmo_keys[8] = {"gamma-weight", "gamma-shape", "gamma-scale",
                                        "exp-weight",   "exp-rate",    "uniform-weight",
                                        "uniform-low",  "uniform-high"};

/* The LMO parameters from the options (or a profile). Returns 0 or the exit status. */
static int lmo_params(const parsed_args *a, dpzo_lmo *lmo, double *sensitivity)
{
    if (args_has(a, "profile")) {
        for (int i = 0; i < 8; i++)
            if (args_has(a, lmo_keys[i]))
                return cli_usage_error("give either --profile or --%s, not both", lmo_keys[i]);
        dpzo_ctx *ctx = dpzo_ctx_new();
        dpzo_profile p;
        dpzo_profile_init(&p);
        dpzo_status st = dpzo_profile_read_file(ctx, args_get(a, "profile"), &p);
        int rc = 0;
        if (st)
            rc = report_failure(ctx, st);
        else if (p.kind != DPZO_NOISE_LMO)
            rc = cli_usage_error("profile %s holds gaussian noise, not LMO", args_get(a, "profile"));
        else {
            *lmo = p.lmo;
            if (sensitivity)
                *sensitivity = p.sensitivity;
        }
        dpzo_profile_free(&p);
        dpzo_ctx_free(ctx);
        return rc;
    }
    double *f[8] = {&lmo->gamma_weight, &lmo->gamma_shape,    &lmo->gamma_scale,
                    &lmo->exp_weight,   &lmo->exp_rate,       &lmo->uniform_weight,
                    &lmo->uniform_low,  &lmo->uniform_high};
    for (int i = 0; i < 8; i++) {
        if (!args_has(a, lmo_keys[i]))
            return cli_usage_error("--%s is required (or give --profile FILE)", lmo_keys[i]);
        if (parse_real(lmo_keys[i], args_get(a, lmo_keys[i]), f[i]))
            return 2;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    int rc = st ? report_failure(ctx, st) : 0;
    dpzo_ctx_free(ctx);
    return rc;
}

static int get_sensitivity(const parsed_args *a, double *c)
{
    if (!args_has(a, "sensitivity"))
        return 0;
    if (parse_real("sensitivity", args_get(a, "sensitivity"), c))
        return 2;
    if (!(*c > 0.0))
        return cli_usage_error("--sensitivity must be > 0, got %s", args_get(a, "sensitivity"));
    return 0;
}

/* The common start of the subcommands that take LMO parameters: parse, --help, the
 * parameters and --sensitivity. Returns -1 after printing the help (exit 0), else 0 or
 * the exit status. */
static int lmo_begin(int argc, char **argv, const opt_spec *specs, const char *help,
                     parsed_args *a, dpzo_lmo *l, double *c)
{
    if (args_parse(argc, argv, specs, a))
        return 2;
    if (args_has(a, "help")) {
        fputs(help, stdout);
        return -1;
    }
    int rc = lmo_params(a, l, c);
    return rc ? rc : get_sensitivity(a, c);
}

static void lmo_json(cJSON *o, const dpzo_lmo *l)
{
    cJSON *p = cJSON_AddObjectToObject(o, "lmo");
    json_number(p, "gamma_weight", l->gamma_weight);
    json_number(p, "gamma_shape", l->gamma_shape);
    json_number(p, "gamma_scale", l->gamma_scale);
    json_number(p, "exp_weight", l->exp_weight);
    json_number(p, "exp_rate", l->exp_rate);
    json_number(p, "uniform_weight", l->uniform_weight);
    json_number(p, "uniform_low", l->uniform_low);
    json_number(p, "uniform_high", l->uniform_high);
}

static void lmo_print(const dpzo_lmo *l)
{
    printf("noise        X | Y ~ Laplace(0, 1/Y), Y = %g*Gamma(k=%g, theta=%g) + %g*Exp(rate=%g)"
           " + %g*U(%g, %g)\n",
           l->gamma_weight, l->gamma_shape, l->gamma_scale, l->exp_weight, l->exp_rate,
           l->uniform_weight, l->uniform_low, l->uniform_high);
}

/* Sampling scheme and steps into account options. Returns 0 or the exit status. */
static int sampling_params(const parsed_args *a, dpzo_lmo_account_options *o)
{
    int has_q = args_has(a, "sampling-rate"), has_b = args_has(a, "batch-size"),
        has_n = args_has(a, "dataset-size");
    if (has_q && (has_b || has_n))
        return cli_usage_error("give --sampling-rate (Poisson) or --batch-size with "
                               "--dataset-size (fixed batches), not both");
    if (has_b != has_n)
        return cli_usage_error("--batch-size and --dataset-size go together");
    if (has_q) {
        if (parse_real("sampling-rate", args_get(a, "sampling-rate"), &o->q))
            return 2;
        o->sampling = DPZO_LMO_SAMPLING_POISSON;
    } else if (has_b) {
        if (parse_count("batch-size", args_get(a, "batch-size"), &o->batch) ||
            parse_count("dataset-size", args_get(a, "dataset-size"), &o->n))
            return 2;
        o->sampling = DPZO_LMO_SAMPLING_WOR;
    }
    if (args_has(a, "steps") && parse_count("steps", args_get(a, "steps"), &o->steps))
        return 2;
    if (args_has(a, "max-order")) {
        uint64_t m;
        if (parse_count("max-order", args_get(a, "max-order"), &m))
            return 2;
        if (m < 2 || m > 4096)
            return cli_usage_error("--max-order must be in [2, 4096], got %s",
                                   args_get(a, "max-order"));
        o->max_order = (unsigned)m;
    }
    return 0;
}

static const char *sampling_name(dpzo_lmo_sampling s)
{
    return s == DPZO_LMO_SAMPLING_POISSON ? "poisson" : s == DPZO_LMO_SAMPLING_WOR ? "wor" : "none";
}

/* --clip l1 with --bound exact: the exact mixture bound is proven for one scalar only, so
 * the two options exclude each other (exit 2, docs/cli.md), before any work. Before, lmo
 * epsilon exited 1 from the accountant and lmo search answered "no grid point meets". */
static int clip_bound_check(const parsed_args *a, const char *clip)
{
    const char *b = args_get(a, "bound");
    if (strcmp(clip, "l1") == 0 && b != NULL && strcmp(b, "exact") == 0)
        return cli_usage_error("--bound exact is proven for scalar queries only (--clip "
                               "scalar); with --clip l1 use mgf, pure or best");
    return 0;
}

/* --clip scalar|l1|l2-paper; returns 0 or the exit status. */
static int clip_param(const parsed_args *a, const char **clip, dpzo_lmo_account_options *o)
{
    const char *c = args_get(a, "clip");
    *clip = "scalar";
    if (c == NULL || strcmp(c, "scalar") == 0)
        return 0;
    if (strcmp(c, "l1") == 0) {
        *clip = "l1";
        o->vector_l1 = 1;
        return 0;
    }
    if (strcmp(c, "l2-paper") == 0) {
        *clip = "l2-paper";
        return 0;
    }
    return cli_usage_error("--clip must be scalar, l1 or l2-paper, got '%s'", c);
}

#define CLIP_HELP                                                                              \
    "  --clip scalar   one noised scalar per step (default; the zeroth-order trainer)\n"       \
    "  --clip l1       i.i.d. noise on every coordinate of an L1-clipped vector: only the\n"   \
    "                  MGF bound and the vector pure-DP bound C E[Y^2]/E[Y] hold there\n"      \
    "  --clip l2-paper the paper's L2-clipped vectors: guarantee not established (search\n"   \
    "                  with --accountant paper only)\n"

/* ---- info ---------------------------------------------------------------------- */

static const char *help_info =
    "usage: dpzo lmo info PARAMS [--sensitivity C] [--usefulness-gamma G] [--json]\n"
    "\n"
    "The noise's pure-DP epsilon at sensitivity C (default 1; a proven upper bound), the\n"
    "same for a vector of such noises on an L1-clipped query (C E[Y^2]/E[Y]), its mean\n"
    "absolute value E|X|, variance, usefulness P(|X| <= G) (G = 0.9 by default), E[Y],\n"
    "and the released LMO-DP code's single-step epsilon at delta 1e-10 (paper mode: not a\n"
    "guarantee). Moments may be inf (heavy tails when the uniform starts at 0).\n"
    "JSON keys: lmo, sensitivity, eps0, eps0_vector, mean_abs, variance, usefulness,\n"
    "usefulness_gamma, mean_y, paper_step_epsilon, paper_step_order; mean_abs and variance\n"
    "are null, with moments_error saying why, when their quadrature cannot handle the\n"
    "parameters (e.g. a weight of 1e-320).\n\n" LMO_PARAM_HELP;

static int lmo_info(int argc, char **argv)
{
    static const opt_spec specs[] = {LMO_PARAM_OPTS, {"sensitivity", 1}, {"usefulness-gamma", 1},
                                     {"json", 0}, {"help", 0}, {NULL, 0}};
    parsed_args a;
    dpzo_lmo l;
    double c = 1.0, g = 0.9;
    int rc = lmo_begin(argc, argv, specs, help_info, &a, &l, &c);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    if (args_has(&a, "usefulness-gamma") &&
        parse_real("usefulness-gamma", args_get(&a, "usefulness-gamma"), &g))
        return 2;
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_bound e0, ev;
    dpzo_lmo_stats s;
    dpzo_status st;
    char why[300] = "";
    if ((st = dpzo_lmo_eps0(ctx, &l, c, &e0)) || (st = dpzo_lmo_eps0_vector(ctx, &l, c, &ev)) ||
        ((st = dpzo_lmo_stats_compute(ctx, &l, g, &s)) && st != DPZO_ENOCONV)) {
        rc = report_failure(ctx, st);
        dpzo_ctx_free(ctx);
        return rc;
    }
    if (st == DPZO_ENOCONV) {
        /* the moments' quadrature cannot handle these parameters (a weight or scale of
         * 1e-320, say): the privacy numbers stand; the moments are reported as not
         * computed, and the closed forms (usefulness 1 - M_Y(-G), E[Y]) still are */
        snprintf(why, sizeof why, "%s", dpzo_ctx_errmsg(ctx));
        s.mean_abs = s.variance = NAN;
        s.usefulness = -expm1(dpzo_lmo_log_mgf(&l, -g));
        s.mean_y = dpzo_lmo_dlog_mgf(&l, 0.0);
        s.gamma = g;
    }
    double po;
    double pe = dpzo_lmo_paper_step_epsilon(&l, 1e-10, &po);
    char b1[32], b2[32];
    if (args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        lmo_json(o, &l);
        json_number(o, "sensitivity", c);
        json_number(o, "eps0", e0.upper);
        json_number(o, "eps0_vector", ev.upper);
        if (why[0]) {
            cJSON_AddNullToObject(o, "mean_abs");
            cJSON_AddNullToObject(o, "variance");
            cJSON_AddStringToObject(o, "moments_error", why);
        } else {
            json_number(o, "mean_abs", c * s.mean_abs);
            json_number(o, "variance", c * c * s.variance);
        }
        json_number(o, "usefulness", s.usefulness);
        json_number(o, "usefulness_gamma", g);
        json_number(o, "mean_y", s.mean_y);
        json_number(o, "paper_step_epsilon", pe);
        json_number(o, "paper_step_order", po);
        json_print(o);
    } else {
        lmo_print(&l);
        printf("sensitivity  %g (noise C*X)\n", c);
        printf("eps0         %s   pure DP of one scalar release (proven upper bound)\n",
               FMT_UP(b1, e0.upper, 7));
        printf("eps0 vector  %s   i.i.d. noise on an L1-clipped vector (proven upper bound)\n",
               FMT_UP(b2, ev.upper, 7));
        if (why[0]) {
            printf("E|C X|       n/a: %s\n", why);
            printf("Var C X      n/a\n");
        } else {
            printf("E|C X|       %.7g\n", c * s.mean_abs);
            printf("Var C X      %.7g\n", c * c * s.variance);
        }
        printf("usefulness   %.9g   P(|X| <= %g)\n", s.usefulness, g);
        printf("E[Y]         %.7g\n", s.mean_y);
        char b3[48];
        printf("paper        %s @ order %g: the released code's single-step epsilon at delta "
               "1e-10 (NOT a guarantee; docs/lmo.md)\n",
               paper_fmt(b3, sizeof b3, pe, 9), po);
    }
    dpzo_ctx_free(ctx);
    return 0;
}

/* ---- rdp ------------------------------------------------------------------------ */

static const char *help_rdp =
    "usage: dpzo lmo rdp PARAMS --orders LIST [--bound mgf|exact|pure|best]\n"
    "                    [--sensitivity C] [--json]\n"
    "\n"
    "Per-step Renyi DP of one scalar release with LMO noise at sensitivity C (default 1),\n"
    "at each order of the comma-separated LIST (each > 1). Bounds (default best):\n"
    "  mgf    the MGF bound (*) of the paper, corrected: inf outside the MGF domain\n"
    "  exact  the mixture's own divergence, enclosed by interval arithmetic\n"
    "  pure   eps0 through the tight pure-DP -> RDP conversion\n"
    "  best   the pointwise minimum of the three\n"
    "Every `rdp` value is a proven upper bound; with exact/best, `rdp_lower` is a proven\n"
    "lower bound on the mechanism's true RDP (with mgf/pure it only encloses the bound).\n"
    "The divergence is nondecreasing in the shift, so sensitivity C covers every |shift| <= C.\n"
    "JSON keys: orders, rdp, rdp_lower, rdp_estimate, bound, sensitivity, lmo.\n\n" LMO_PARAM_HELP;

static int lmo_rdp(int argc, char **argv)
{
    static const opt_spec specs[] = {LMO_PARAM_OPTS, {"orders", 1}, {"bound", 1},
                                     {"sensitivity", 1}, {"json", 0}, {"help", 0}, {NULL, 0}};
    parsed_args a;
    dpzo_lmo l;
    double c = 1.0;
    int rc = lmo_begin(argc, argv, specs, help_rdp, &a, &l, &c);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    if (!args_has(&a, "orders"))
        return cli_usage_error("--orders is required, e.g. --orders 2,4,8,16,32");
    double *orders;
    size_t n;
    if ((rc = parse_order_list("orders", args_get(&a, "orders"), &orders, &n)))
        return rc;
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_lmo_bound_kind kind = DPZO_LMO_BOUND_BEST;
    dpzo_status st = DPZO_OK;
    if (args_has(&a, "bound"))
        st = dpzo_lmo_bound_parse(ctx, args_get(&a, "bound"), &kind);
    dpzo_bound *b = malloc(n * sizeof *b);
    if (st == DPZO_OK && b != NULL)
        st = dpzo_lmo_rdp(ctx, &l, c, kind, orders, n, b);
    if (st || b == NULL) {
        rc = b == NULL ? 1 : report_failure(ctx, st);
        free(b);
        free(orders);
        dpzo_ctx_free(ctx);
        return rc;
    }
    if (args_has(&a, "json")) {
        double *up = malloc(n * sizeof *up), *lo = malloc(n * sizeof *lo),
               *es = malloc(n * sizeof *es);
        for (size_t i = 0; up && lo && es && i < n; i++) {
            up[i] = b[i].upper;
            lo[i] = b[i].lower;
            es[i] = b[i].value;
        }
        cJSON *o = cJSON_CreateObject();
        lmo_json(o, &l);
        json_number(o, "sensitivity", c);
        cJSON_AddStringToObject(o, "bound", dpzo_lmo_bound_name(kind));
        json_number_array(o, "orders", orders, n);
        json_number_array(o, "rdp", up, n);
        json_number_array(o, "rdp_lower", lo, n);
        json_number_array(o, "rdp_estimate", es, n);
        json_print(o);
        free(up);
        free(lo);
        free(es);
    } else {
        lmo_print(&l);
        printf("bound %s, sensitivity %g\n%10s  %-14s %-14s\n", dpzo_lmo_bound_name(kind), c,
               "order", "rdp (upper)", "lower");
        for (size_t i = 0; i < n; i++) {
            char u[32], d[32];
            /* a lower bound on the true RDP exists only for exact and best */
            int has_lower = kind == DPZO_LMO_BOUND_EXACT || kind == DPZO_LMO_BOUND_BEST;
            printf("%10g  %-14s %-14s\n", orders[i], FMT_UP(u, b[i].upper, 9),
                   has_lower ? FMT_DOWN(d, b[i].lower, 9) : "-");
        }
    }
    free(b);
    free(orders);
    dpzo_ctx_free(ctx);
    return 0;
}

/* ---- epsilon -------------------------------------------------------------------- */

static const char *help_epsilon =
    "usage: dpzo lmo epsilon PARAMS --delta D [--steps T]\n"
    "                        [--sampling-rate Q | --batch-size B --dataset-size N]\n"
    "                        [--bound mgf|exact|pure|best] [--sensitivity C]\n"
    "                        [--max-order L] [--clip scalar|l1]\n"
    "                        [--accountant rdp|pld [--pld-grid G]]\n"
    "                        [--paper-step-epsilon E] [--json]\n"
    "\n"
    "Total epsilon at delta D of T steps (default 1), each releasing one scalar with LMO\n"
    "noise at sensitivity C: without sampling, with Poisson sampling at rate Q (add/remove\n"
    "adjacency; Zhu-Wang 2019), or with fixed batches of B out of N drawn without\n"
    "replacement (replace-one adjacency, Wang-Balle-Kasiviswanathan 2019; C is then the\n"
    "replace-one sensitivity, 2x the clipping bound of a clipped sum). Integer orders\n"
    "2..L (default 256). A proven upper bound. --bound picks the per-step curve; the\n"
    "amplified pure-DP curve and route are always taken as well. For comparison it prints\n"
    "the paper's numbers for the same noise: the released code's single-step epsilon and the\n"
    "\"gaussian-equivalent total\" (neither is a guarantee; docs/lmo.md), computed from the\n"
    "code epsilon or from --paper-step-epsilon E (the nominal per-step epsilon the paper\n"
    "used, e.g. 0.3 for lmo_eps0.3).\n"
    "--accountant pld also runs the PLD accountant on the noise's density (scalar queries;\n"
    "loss grid G, default 1e-4; docs/lmo.md, PLD): it prints the PLD's proven interval\n"
    "[lower, upper], and epsilon is its upper end (the RDP bound when that is smaller, e.g.\n"
    "when the PLD's window is not resolved; route says which).\n"
    "JSON keys: epsilon, epsilon_estimate, order, route, eps0, delta, steps, sampling,\n"
    "sampling_rate, bound, clip, sensitivity, lmo, paper_step_epsilon,\n"
    "paper_total_epsilon, accountant; with pld also epsilon_lower (the PLD's proven lower\n"
    "end), rdp_epsilon, pld_epsilon (its upper end), pld_estimate, pld_grid, and\n"
    "pld_reason when the PLD claims nothing (its upper end is then inf: the window is not\n"
    "resolved, the loss range needs too many grid points, or a boundary was not located).\n" CLIP_HELP "\n" LMO_PARAM_HELP;

static int lmo_epsilon(int argc, char **argv)
{
    static const opt_spec specs[] = {LMO_PARAM_OPTS, SAMPLING_OPTS, {"delta", 1}, {"bound", 1},
                                     {"sensitivity", 1}, {"max-order", 1}, {"clip", 1},
                                     {"paper-step-epsilon", 1}, {"accountant", 1},
                                     {"pld-grid", 1}, {"json", 0}, {"help", 0}, {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_epsilon, stdout);
        return 0;
    }
    const char *acct = args_get(&a, "accountant");
    int use_pld = acct != NULL && strcmp(acct, "pld") == 0;
    if (acct != NULL && !use_pld && strcmp(acct, "rdp") != 0)
        return cli_usage_error("--accountant must be rdp or pld, got '%s'", acct);
    double pld_grid = 1e-4;
    if (args_has(&a, "pld-grid")) {
        if (!use_pld)
            return cli_usage_error("--pld-grid goes with --accountant pld");
        if (parse_real("pld-grid", args_get(&a, "pld-grid"), &pld_grid))
            return 2;
        if (!(pld_grid > 0.0 && pld_grid <= 0.1))
            return cli_usage_error("--pld-grid must be in (0, 0.1], got %g", pld_grid);
    }
    dpzo_lmo l;
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    const char *clip;
    int rc = lmo_params(&a, &l, &o.sensitivity);
    if (rc || (rc = get_sensitivity(&a, &o.sensitivity)) || (rc = sampling_params(&a, &o)) ||
        (rc = clip_param(&a, &clip, &o)))
        return rc;
    if (strcmp(clip, "l2-paper") == 0)
        return cli_usage_error("no guarantee is established for L2-clipped vectors with LMO "
                               "noise (the paper's mode); use --clip l1");
    if (use_pld && strcmp(clip, "l1") == 0) /* as lmo search: refused before any work */
        return cli_usage_error("--accountant pld covers scalar queries only (--clip scalar); "
                               "for --clip l1 use the rdp accountant");
    if ((rc = clip_bound_check(&a, clip)))
        return rc;
    if (!args_has(&a, "delta"))
        return cli_usage_error("--delta is required");
    if (parse_real("delta", args_get(&a, "delta"), &o.delta))
        return 2;
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_status st = DPZO_OK;
    if (args_has(&a, "bound"))
        st = dpzo_lmo_bound_parse(ctx, args_get(&a, "bound"), &o.bound);
    dpzo_lmo_account_result r;
    dpzo_pld_result pr;
    double rdp_eps = NAN;
    if (st == DPZO_OK && use_pld) {
        st = dpzo_lmo_epsilon_pld(ctx, &l, &o, pld_grid, &r, &pr);
        rdp_eps = pr.rdp_epsilon;
    } else if (st == DPZO_OK) {
        st = dpzo_lmo_epsilon(ctx, &l, &o, &r);
    }
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_ctx_free(ctx);
        return rc;
    }
    double po, pt = NAN;
    double pe = dpzo_lmo_paper_step_epsilon(&l, o.delta, &po), pstep = pe;
    if (args_has(&a, "paper-step-epsilon") &&
        (parse_real("paper-step-epsilon", args_get(&a, "paper-step-epsilon"), &pstep) ||
         (!(pstep > 0.0) && cli_usage_error("--paper-step-epsilon must be > 0, got %s",
                                          args_get(&a, "paper-step-epsilon"))))) {
        dpzo_ctx_free(ctx);
        return 2;
    }
    double q = o.sampling == DPZO_LMO_SAMPLING_POISSON ? o.q
               : o.sampling == DPZO_LMO_SAMPLING_WOR ? (double)o.batch / (double)o.n
                                                     : 1.0;
    if (pstep > 0.0 && isfinite(pstep) &&
        dpzo_lmo_paper_total_epsilon(ctx, pstep, o.delta, q, o.steps, DPZO_LMO_PAPER_ORDERS_PT,
                                     &pt) != DPZO_OK) {
        pt = NAN;
        if (args_has(&a, "paper-step-epsilon")) { /* the user's value cannot be used */
            rc = cli_usage_error("--paper-step-epsilon %s: %s",
                                 args_get(&a, "paper-step-epsilon"), dpzo_ctx_errmsg(ctx));
            dpzo_ctx_free(ctx);
            return rc;
        }
    }
    char b1[32], b2[32];
    if (args_has(&a, "json")) {
        cJSON *j = cJSON_CreateObject();
        lmo_json(j, &l);
        json_number(j, "sensitivity", o.sensitivity);
        cJSON_AddStringToObject(j, "bound", dpzo_lmo_bound_name(o.bound));
        cJSON_AddStringToObject(j, "clip", clip);
        cJSON_AddStringToObject(j, "sampling", sampling_name(o.sampling));
        json_number(j, "sampling_rate", q);
        json_number(j, "steps", (double)o.steps);
        json_number(j, "delta", o.delta);
        json_number(j, "epsilon", r.epsilon);
        json_number(j, "epsilon_estimate", r.epsilon_estimate);
        json_number(j, "order", r.order);
        cJSON_AddStringToObject(j, "route", r.route);
        json_number(j, "eps0", r.eps0);
        json_number(j, "paper_step_epsilon", pe);
        cJSON_AddStringToObject(j, "accountant", use_pld ? "pld" : "rdp");
        if (use_pld) {
            json_number(j, "epsilon_lower", pr.epsilon_lower);
            json_number(j, "rdp_epsilon", rdp_eps);
            json_number(j, "pld_epsilon", pr.epsilon_upper);
            json_number(j, "pld_estimate", pr.epsilon_estimate);
            json_number(j, "pld_grid", pld_grid);
            if (isinf(pr.epsilon_upper)) /* the PLD claims nothing: why */
                cJSON_AddStringToObject(j, "pld_reason", pr.reason[0] ? pr.reason : "not resolved");
        }
        if (isnan(pt))
            cJSON_AddNullToObject(j, "paper_total_epsilon");
        else
            json_number(j, "paper_total_epsilon", pt);
        json_print(j);
    } else {
        lmo_print(&l);
        printf("run          %llu step(s), sampling %s", (unsigned long long)o.steps,
               sampling_name(o.sampling));
        if (o.sampling != DPZO_LMO_SAMPLING_NONE)
            printf(" (rate %.6g)", q);
        printf(", sensitivity %g, delta %g, bound %s\n", o.sensitivity, o.delta,
               dpzo_lmo_bound_name(o.bound));
        printf("epsilon      %s   proven upper bound (%s", FMT_UP(b1, r.epsilon, 7), r.route);
        if (r.order > 0)
            printf(", order %g", r.order);
        printf(")%s\n", r.order_at_edge ? "  [optimum at --max-order: raise it]" : "");
        if (use_pld) {
            char b3[32], b4[32], b5[32];
            printf("rdp          %s   proven upper bound (RDP accountant)\n",
                   FMT_UP(b3, rdp_eps, 7));
            printf("pld          [%s, %s]   proven interval (PLD accountant, grid %g)%s%s\n",
                   FMT_DOWN(b4, pr.epsilon_lower, 7), FMT_UP(b5, pr.epsilon_upper, 7), pld_grid,
                   isinf(pr.epsilon_upper) ? "; claims nothing: " : "",
                   isinf(pr.epsilon_upper) ? (pr.reason[0] ? pr.reason : "not resolved") : "");
        }
        printf("eps0         %s   per step, pure DP\n", FMT_UP(b2, r.eps0, 7));
        char b6[48], b7[48];
        printf("paper        step %s @ order %g; \"total\" %s (gaussian-equivalent)\n"
               "             neither is a guarantee (docs/lmo.md)\n",
               paper_fmt(b6, sizeof b6, pe, 9), po,
               isnan(pt) ? "n/a" : paper_fmt(b7, sizeof b7, pt, 6));
    }
    dpzo_ctx_free(ctx);
    return 0;
}

/* ---- sample ------------------------------------------------------------------------ */

static const char *help_sample =
    "usage: dpzo lmo sample PARAMS -n N [--seed S] [--sensitivity C] [--json]\n"
    "\n"
    "N draws of C*X, one per line. Without --seed the draws come from the operating\n"
    "system's CSPRNG (getrandom): use these for noise that protects data. With --seed S\n"
    "they come from a seeded GSL generator (mt19937): reproducible, for research only.\n"
    "JSON keys: samples, seeded, seed, sensitivity, lmo.\n\n" LMO_PARAM_HELP;

static int lmo_sample(int argc, char **argv)
{
    static const opt_spec specs[] = {LMO_PARAM_OPTS, {"n", 1}, {"seed", 1}, {"sensitivity", 1},
                                     {"json", 0}, {"help", 0}, {NULL, 0}};
    parsed_args a;
    dpzo_lmo l;
    double c = 1.0;
    int rc = lmo_begin(argc, argv, specs, help_sample, &a, &l, &c);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    uint64_t n, seed = 0;
    if (!args_has(&a, "n"))
        return cli_usage_error("-n N (the number of draws) is required");
    if (parse_count("n", args_get(&a, "n"), &n) ||
        (args_has(&a, "seed") && parse_count("seed", args_get(&a, "seed"), &seed)))
        return 2;
    if (n > 100000000)
        return cli_usage_error("-n must be at most 1e8, got %s", args_get(&a, "n"));
    dpzo_ctx *ctx = dpzo_ctx_new();
    int seeded = args_has(&a, "seed");
    dpzo_lmo_sampler *s = seeded ? dpzo_lmo_sampler_seeded(ctx, &l, seed)
                                 : dpzo_lmo_sampler_secure(ctx, &l);
    double *x = malloc((n ? n : 1) * sizeof *x);
    dpzo_status st = s == NULL ? DPZO_EINVAL : x == NULL ? DPZO_ENOMEM : DPZO_OK;
    if (st == DPZO_OK)
        st = dpzo_lmo_sample(ctx, s, x, n);
    for (uint64_t i = 0; st == DPZO_OK && i < n; i++) {
        double v = c * x[i];
        if (!isfinite(v)) { /* a draw is finite; C times it need not be in double */
            rc = cli_usage_error("sensitivity %g: draw %llu, C * %.17g, is not finite in "
                                 "double; use a smaller --sensitivity", c,
                                 (unsigned long long)i + 1, x[i]);
            free(x);
            dpzo_lmo_sampler_free(s);
            dpzo_ctx_free(ctx);
            return rc;
        }
    }
    if (st) {
        rc = report_failure(ctx, st);
    } else if (args_has(&a, "json")) {
        for (uint64_t i = 0; i < n; i++)
            x[i] *= c;
        cJSON *o = cJSON_CreateObject();
        lmo_json(o, &l);
        json_number(o, "sensitivity", c);
        cJSON_AddBoolToObject(o, "seeded", seeded);
        if (seeded)
            json_number(o, "seed", (double)seed);
        else
            cJSON_AddNullToObject(o, "seed");
        json_number_array(o, "samples", x, n);
        json_print(o);
    } else {
        for (uint64_t i = 0; i < n; i++)
            printf("%.17g\n", c * x[i]);
    }
    free(x);
    dpzo_lmo_sampler_free(s);
    dpzo_ctx_free(ctx);
    return rc;
}

/* ---- search -------------------------------------------------------------------------- */

static const char *help_search =
    "usage: dpzo lmo search --epsilon E --delta D [--grid paper|paper-script|FILE]\n"
    "                       [--accountant rdp|pld|paper] [--objective usefulness|mean-abs|\n"
    "                        variance|max-epsilon] [--usefulness-gamma G]\n"
    "                       [--steps T] [--sampling-rate Q | --batch-size B --dataset-size N]\n"
    "                       [--bound best|mgf|exact|pure] [--sensitivity C] [--max-order L]\n"
    "                       [--clip scalar|l1|l2-paper] [--threads K]\n"
    "                       [--checkpoint FILE] [-o PROFILE] [--json]\n"
    "\n"
    "Searches a grid of LMO parameters for the noise that best meets the objective while\n"
    "its privacy meets the target. Grid points that define the same distribution are\n"
    "tried once (the first in grid order; ties go to the earlier point).\n"
    "  --accountant rdp (default): the proven total epsilon of the run (T steps, default\n"
    "      1; sampling as in `dpzo lmo epsilon`) must be <= E.\n"
    "  --accountant paper: the released code's single-step epsilon at D must be < E\n"
    "      (bug-compatible replica; NOT a guarantee; --steps and sampling are ignored).\n"
    "  --accountant pld: as rdp, and a candidate is also feasible when the PLD accountant\n"
    "      (built from the noise's density; scalar queries) proves it; epsilon is the\n"
    "      smaller proven bound. Candidates RDP rules out are tried in objective order when\n"
    "      their RDP lower bracket times the smallest PLD/RDP ratio seen is within the\n"
    "      target; at most 1000 PLD evaluations (grid 1e-3, then 1e-4). With max-epsilon:\n"
    "      the largest epsilon <= E proven by either.\n"
    "Objectives (default usefulness): usefulness P(|X| <= G), G = 0.9; mean-abs E|X|;\n"
    "variance; max-epsilon (the released code's: the largest epsilon under the target).\n"
    "Grids: paper (183,708 points, contains the released profiles), paper-script (40,824),\n"
    "or a JSON FILE {\"gamma_weight\": [..], \"exp_weight\": [..], \"uniform_weight\": [..],\n"
    "\"gamma\": [[scale, shape], ..], \"exp_rate\": [..], \"uniform\": [[low, high], ..]}.\n"
    "Uses all cores (--threads K to limit); shows progress with an ETA on a terminal.\n"
    "Ctrl-C stops it; with --checkpoint FILE the progress is saved there and the same\n"
    "command resumes from it (the answer is the same as an uninterrupted run).\n"
    "Prints the noise profile (JSON) to stdout, or writes it to PROFILE with -o and prints\n"
    "a summary. With --json the profile goes to stdout (also with -o).\n" CLIP_HELP;

static volatile int search_interrupted = 0;
static void on_sigint(int sig)
{
    (void)sig;
    search_interrupted = 1;
}

static void progress_bar(void *user, const char *phase, double frac, double eta)
{
    (void)user;
    static double last = 0.0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = ts.tv_sec + 1e-9 * ts.tv_nsec;
    if (frac < 1.0 && now - last < 0.1)
        return;
    last = now;
    int w = 30, k = (int)(frac * w + 0.5);
    char bar[64];
    for (int i = 0; i < w; i++)
        bar[i] = i < k ? '#' : '.';
    bar[w] = '\0';
    if (eta >= 0.0)
        fprintf(stderr, "\r%-10s [%s] %5.1f%%  ETA %5.1f s ", phase, bar, 100.0 * frac, eta);
    else
        fprintf(stderr, "\r%-10s [%s] %5.1f%%              ", phase, bar, 100.0 * frac);
    if (strcmp(phase, "done") == 0)
        fputc('\n', stderr);
    fflush(stderr);
}

static void command_line(int argc, char **argv, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "dpzo lmo search");
    for (int i = 0; i < argc && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, " %s", argv[i]);
}

static int lmo_search_cmd(int argc, char **argv)
{
    static const opt_spec specs[] = {{"epsilon", 1}, {"delta", 1}, {"grid", 1}, {"accountant", 1},
                                     {"objective", 1}, {"usefulness-gamma", 1}, SAMPLING_OPTS,
                                     {"bound", 1}, {"sensitivity", 1}, {"max-order", 1},
                                     {"threads", 1}, {"checkpoint", 1}, {"o", 1}, {"clip", 1},
                                     {"json", 0}, {"help", 0}, {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_search, stdout);
        return 0;
    }
    dpzo_lmo_search_options o = dpzo_lmo_search_options_default();
    if (!args_has(&a, "epsilon") || !args_has(&a, "delta"))
        return cli_usage_error("--epsilon and --delta are required");
    if (parse_real("epsilon", args_get(&a, "epsilon"), &o.epsilon) ||
        parse_real("delta", args_get(&a, "delta"), &o.account.delta))
        return 2;
    if (args_has(&a, "usefulness-gamma") &&
        parse_real("usefulness-gamma", args_get(&a, "usefulness-gamma"), &o.usefulness_gamma))
        return 2;
    const char *clip;
    int rc = get_sensitivity(&a, &o.account.sensitivity);
    if (rc || (rc = sampling_params(&a, &o.account)) || (rc = clip_param(&a, &clip, &o.account)))
        return rc;
    const char *acct = args_get(&a, "accountant");
    if (acct == NULL || strcmp(acct, "rdp") == 0)
        o.paper = 0;
    else if (strcmp(acct, "paper") == 0)
        o.paper = 1;
    else if (strcmp(acct, "pld") == 0)
        o.pld = 1;
    else
        return cli_usage_error("--accountant must be rdp, pld or paper, got '%s'", acct);
    if (o.pld && o.account.vector_l1)
        return cli_usage_error("--accountant pld covers scalar queries only (--clip scalar); "
                               "for --clip l1 use the rdp accountant");
    if (!o.paper && strcmp(clip, "l2-paper") == 0)
        return cli_usage_error("--clip l2-paper has no established guarantee: it is only "
                               "available with --accountant paper");
    if (!o.paper && (rc = clip_bound_check(&a, clip)))
        return rc;
    if (o.paper && (args_has(&a, "steps") || args_has(&a, "sampling-rate") ||
                    args_has(&a, "batch-size")))
        fprintf(stderr, "dpzo: note: --accountant paper uses the single-step epsilon; --steps "
                        "and sampling are recorded but not accounted\n");
    if (args_has(&a, "threads")) {
        uint64_t t;
        if (parse_count("threads", args_get(&a, "threads"), &t))
            return 2;
        if (t < 1 || t > 64)
            return cli_usage_error("--threads must be in [1, 64], got %s", args_get(&a, "threads"));
        o.threads = (unsigned)t;
    }
    o.checkpoint = args_get(&a, "checkpoint");
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_status st = DPZO_OK;
    if (args_has(&a, "objective"))
        st = dpzo_lmo_objective_parse(ctx, args_get(&a, "objective"), &o.objective);
    if (st == DPZO_OK && args_has(&a, "bound"))
        st = dpzo_lmo_bound_parse(ctx, args_get(&a, "bound"), &o.account.bound);
    const char *gname = args_get(&a, "grid");
    if (gname == NULL)
        gname = "paper";
    dpzo_lmo_grid *grid = NULL;
    if (st == DPZO_OK) {
        if (strcmp(gname, "paper") == 0 || strcmp(gname, "paper-script") == 0) {
            st = dpzo_lmo_grid_preset(ctx, gname, &grid);
        } else {
            /* a regular file only (a FIFO or /dev/zero is refused before any read), at
             * most 64 MiB (docs/files.md) */
            char *buf = NULL, err[DPZO_IO_ERRMAX];
            size_t len = 0;
            if (dpzo_io_read_file(gname, "grid file", DPZO_IO_LIMIT_GRID, &buf, &len, err,
                                  sizeof err) != 0) {
                fprintf(stderr, "dpzo: error: %s\n", err);
                dpzo_ctx_free(ctx);
                return 2;
            }
            if (len == 0) {
                free(buf);
                fprintf(stderr, "dpzo: error: grid file %s is empty\n", gname);
                dpzo_ctx_free(ctx);
                return 2;
            }
            char jerr[DPZO_IO_ERRMAX];
            if (dpzo_json_check_nul(buf, len, jerr, sizeof jerr) != 0) {
                free(buf);
                fprintf(stderr, "dpzo: error: grid file %s: %s\n", gname, jerr);
                dpzo_ctx_free(ctx);
                return 2;
            }
            st = dpzo_lmo_grid_from_json(ctx, buf, &grid);
            free(buf);
            if (st) {
                fprintf(stderr, "dpzo: error: grid file %s: %s\n", gname, dpzo_ctx_errmsg(ctx));
                dpzo_ctx_free(ctx);
                return st == DPZO_EINVAL || st == DPZO_EPARSE ? 2 : 1;
            }
        }
    }
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_ctx_free(ctx);
        return rc;
    }
    /* -o is checked before the search, which may take hours (issue 28, item 6) */
    if (args_get(&a, "o") != NULL &&
        (rc = cli_check_output(args_get(&a, "o"), "profile", DPZO_IO_DIRECT)) != 0) {
        dpzo_lmo_grid_free(grid);
        dpzo_ctx_free(ctx);
        return rc;
    }
    if (isatty(STDERR_FILENO))
        o.progress = progress_bar;
    o.interrupt = &search_interrupted;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old);
    dpzo_lmo_search_result r;
    st = dpzo_lmo_search(ctx, grid, &o, &r);
    sigaction(SIGINT, &old, NULL);
    if (st == DPZO_EINTERRUPTED) {
        /* the library says whether the progress was saved (a checkpoint that can no
         * longer be written is not) */
        fprintf(stderr, "\ndpzo: %s%s\n", dpzo_ctx_errmsg(ctx),
                o.checkpoint == NULL ? " (use --checkpoint FILE to be able to resume)"
                : strstr(dpzo_ctx_errmsg(ctx), "NOT saved") ? ""
                                                            : ": run the same command to resume");
        dpzo_lmo_grid_free(grid);
        dpzo_ctx_free(ctx);
        return 130;
    }
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_lmo_grid_free(grid);
        dpzo_ctx_free(ctx);
        return rc;
    }
    /* the profile */
    char command[512];
    command_line(argc, argv, command, sizeof command);
    dpzo_profile p;
    st = dpzo_profile_from_lmo_search(ctx, &o, &r, dpzo_lmo_grid_name(grid), clip, command, &p);
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_lmo_grid_free(grid);
        dpzo_ctx_free(ctx);
        return rc;
    }
    const char *out = args_get(&a, "o");
    char *json = NULL;
    st = out ? dpzo_profile_write_file(ctx, &p, out) : DPZO_OK;
    if (st == DPZO_OK && (out == NULL || args_has(&a, "json")))
        st = dpzo_profile_to_json(ctx, &p, &json);
    if (st) {
        rc = report_failure(ctx, st);
    } else if (json) {
        fputs(json, stdout);
        fputc('\n', stdout);
    }
    if (st == DPZO_OK && !args_has(&a, "json")) {
        FILE *s = json ? stderr : stdout;
        fprintf(s, "grid %s: %zu points, %zu distinct, %zu certified",
                dpzo_lmo_grid_name(grid), r.n_points, r.n_unique, r.n_exact);
        if (o.pld)
            fprintf(s, ", %zu PLD evaluations", r.n_pld);
        fprintf(s, "%s\n", r.resumed ? " (resumed)" : "");
        if (isatty(STDERR_FILENO)) /* timings vary: only on a terminal */
            fprintf(stderr, "search time %.2f s\n", r.seconds);
        fprintf(s, "chosen: grid index %zu (class of %zu equivalent points)\n", r.index,
                r.class_size);
        /* a proven epsilon is printed rounded up; the paper replica as computed */
        char eb[32];
        if (o.paper)
            snprintf(eb, sizeof eb, "%.9g", r.epsilon);
        else
            FMT_UP(eb, r.epsilon, 9);
        char desc[96], lb[32];
        if (o.paper)
            snprintf(desc, sizeof desc, "paper replica, NOT a guarantee");
        else if (r.by_pld)
            snprintf(desc, sizeof desc, "proven upper bound, PLD accountant; lower end %s",
                     FMT_DOWN(lb, r.pld_lower, 9));
        else
            snprintf(desc, sizeof desc, "proven upper bound");
        fprintf(s,
                "  Y = %g*Gamma(k=%g, theta=%g) + %g*Exp(rate=%g) + %g*U(%g, %g)\n"
                "  epsilon %s (%s), usefulness(%g) %.9g, E|X| %.6g, Var X %.6g\n",
                r.lmo.gamma_weight, r.lmo.gamma_shape, r.lmo.gamma_scale, r.lmo.exp_weight,
                r.lmo.exp_rate, r.lmo.uniform_weight, r.lmo.uniform_low, r.lmo.uniform_high, eb,
                desc, o.usefulness_gamma, r.usefulness, r.mean_abs, r.variance);
        if (out)
            fprintf(s, "profile written to %s\n", out);
    }
    free(json);
    dpzo_profile_free(&p);
    dpzo_lmo_grid_free(grid);
    dpzo_ctx_free(ctx);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------ */

static const char *help_lmo =
    "usage: dpzo lmo SUBCOMMAND [OPTIONS]   (dpzo lmo SUBCOMMAND --help)\n"
    "\n"
    "LMO-DP noise (a Laplace noise with a random inverse scale; docs/lmo.md):\n"
    "  info     pure-DP epsilon, moments and usefulness of one noise\n"
    "  rdp      its per-step Renyi DP (MGF bound, exact mixture, pure DP, or the best)\n"
    "  epsilon  the proven total epsilon of a training run, beside the paper's numbers\n"
    "  sample   draws (CSPRNG by default; --seed for reproducible research draws)\n"
    "  search   the offline grid search; writes a noise profile\n";

int cmd_lmo(int argc, char **argv)
{
    if (argc < 1) {
        fputs(help_lmo, stderr);
        return 2;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(help_lmo, stdout);
        return 0;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } sub[] = {{"info", lmo_info},     {"rdp", lmo_rdp},       {"epsilon", lmo_epsilon},
               {"sample", lmo_sample}, {"search", lmo_search_cmd}};
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        if (strcmp(argv[0], sub[i].name) == 0)
            return sub[i].run(argc - 1, argv + 1);
    const char *names[sizeof sub / sizeof *sub + 1] = {NULL};
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        names[i] = sub[i].name;
    return cli_unknown_word("lmo subcommand", argv[0], names, "try dpzo lmo --help");
}
