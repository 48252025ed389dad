/* SPDX-License-Identifier: Apache-2.0 */
/* cli/audit_cmd.c: `dpzo audit`: published claims against proven bounds, and epsilon
 * lower bounds from attack results (dpzo/audit.h, dpzo/audit_claim.h). Parsing and
 * printing only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpzo/dpzo.h>
#include <dpzo/audit_claim.h>
#include "audit_cli.h"
#include "progress.h"
#include "commands.h"
#include "output.h"
#include "plot.h"
#include "dpzo_io.h"
#include "dpzo_json.h"

static const char *audit_help =
    "usage: dpzo audit CLAIM.json... [options]\n"
    "       dpzo audit [claim flags] [options]\n"
    "       dpzo audit attack (--tp N --fp N --tn N --fn N | --scores FILE) [options]\n"
    "       dpzo audit one-run (--canaries M --guesses R --correct V | --scores FILE\n"
    "                           --positive K [--negative K]) [options]\n"
    "\n"
    "Checks published (epsilon, delta) claims. For each claim the true epsilon of the stated\n"
    "mechanism is bracketed by proven bounds: the upper end is the smallest proven upper bound\n"
    "of the RDP (certified), PLD and PRV accountants; the lower end is the larger of a tight\n"
    "accountant's proven lower bound and a threshold test's (where the PLD cannot run), on a\n"
    "pair of datasets the stated sampling can produce. The verdict:\n"
    "  HOLDS         the upper bound is at most the claimed epsilon;\n"
    "  VIOLATED      the lower bound exceeds it: the mechanism is not (epsilon, delta)-DP;\n"
    "  UNDETERMINED  the claimed epsilon lies inside the interval.\n"
    "It also prints the RDP-only value, the noise multiplier the claim would have needed, the\n"
    "claim under the authors' own accountant when the claim states it, and the assumption\n"
    "mismatches it detects (fixed batches accounted as Poisson, an order grid too short to\n"
    "certify, delta >= 1/n, a sampling rate from a per-device batch, ...).\n"
    "\n"
    "CLAIM.json is a claim file (docs/audit.md, section 2; docs/audits/ holds the published\n"
    "claims of the LMO-DP, DP-ZOPO and PAZO papers and the TF Privacy tutorial) or a noise\n"
    "profile (its stored epsilon is the claim). A claim may state any event, written as\n"
    "JSON with dp_accounting's names, in place of the mechanism, sampling and steps:\n"
    "{\"event\": {\"type\": \"ZCDp\", \"rho\": 0.81}, \"epsilon\": 8.9, \"delta\": 1e-10}\n"
    "(docs/audit.md section 2.2; docs/accountant.md section 7).\n"
    "\n"
    CLAIM_HELP
    "\n"
    "Options:\n"
    "  --json              machine-readable output (all 17 digits)\n"
    "  --markdown FILE     also write a Markdown report, with each claim's privacy curves\n"
    "                      drawn next to it as FILE-N.png (needs gnuplot)\n"
    "  --no-plots          no figures in the Markdown report\n"
    "  --grid G            first PLD grid (default 1e-4); refined 10x down to 1e-6 while a\n"
    "                      claim is UNDETERMINED\n"
    "  --no-prv            skip the PRV accountant\n"
    "  --no-calibrate      skip the noise multiplier the claim needed\n"
    "  --brief             the table and one line of mismatches per claim\n"
    "  --only N            only the N-th claim of the files (and flags)\n"
    "  --tp, --fp, --tn, --fn N, --confidence C  an attack on the run of the (single) claim:\n"
    "                      its empirical lower bound is printed next to the proven interval\n"
    "\n"
    "Exit status: 0 when every claim was checked (whatever the verdicts), 2 bad input,\n"
    "1 other failure. `dpzo audit attack --help` and `dpzo audit one-run --help` explain\n"
    "the attack bounds.\n";

/* ---- Shared with dpzo plot ------------------------------------------------------------ */

static void split_files(int argc, char **argv, const opt_spec *specs, const char **files,
                        int *nfiles, char **rest, int *nrest)
{
    *nfiles = *nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != '\0') {
            rest[(*nrest)++] = argv[i];
            const char *name = a + (a[1] == '-' ? 2 : 1);
            if (strchr(name, '=') != NULL)
                continue;
            for (const opt_spec *s = specs; s->name != NULL; s++)
                if (strcmp(s->name, name) == 0 && s->takes_value && i + 1 < argc) {
                    rest[(*nrest)++] = argv[++i];
                    break;
                }
        } else {
            files[(*nfiles)++] = a;
        }
    }
}

int cli_parse_files(int argc, char **argv, const opt_spec *specs, const char ***files,
                    int *nfiles, parsed_args *a)
{
    *files = calloc((size_t)argc + 1, sizeof **files);
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (*files == NULL || rest == NULL) {
        free(*files);
        free(rest);
        *files = NULL;
        *nfiles = 0;
        return cli_out_of_memory();
    }
    split_files(argc, argv, specs, *files, nfiles, rest, &nrest);
    int rc = args_parse(nrest, rest, specs, a); /* a points into argv, not into rest */
    free(rest);
    return rc;
}

static int scheme_of(const char *s, dpzo_sampling_scheme *out)
{
    if (strcmp(s, "poisson") == 0)
        *out = DPZO_SAMPLING_POISSON;
    else if (strcmp(s, "fixed") == 0)
        *out = DPZO_SAMPLING_FIXED;
    else if (strcmp(s, "shuffled") == 0)
        *out = DPZO_SAMPLING_SHUFFLED;
    else if (strcmp(s, "full") == 0)
        *out = DPZO_SAMPLING_FULL;
    else
        return 0;
    return 1;
}

static const char *inline_opts[] = {"noise-multiplier", "sampling-rate", "batch-size",
                                    "dataset-size",     "sampling",      "steps",
                                    "epochs",           "epsilon",       "delta",
                                    "adjacency",        "pipeline",      "effective-batch-size",
                                    "orders",           "conversion",    "name"};

static int inline_claim(dpzo_ctx *ctx, const parsed_args *a, int need_epsilon, claim_set *cs,
                        dpzo_claim_spec *s)
{
    dpzo_claim *c = &s->claim;
    const char *v;
    dpzo_claim_spec_init(s);
    snprintf(s->name, sizeof s->name, "%s", args_has(a, "name") ? args_get(a, "name")
                                                                : "command-line claim");
    snprintf(s->source, sizeof s->source, "command line");
    if ((v = args_get(a, "noise-multiplier")) == NULL)
        return cli_usage_error("a claim on the command line needs --noise-multiplier");
    if (parse_real("noise-multiplier", v, &c->noise_multiplier))
        return 2;
    if (!(c->noise_multiplier > 0.0))
        return cli_usage_error("--noise-multiplier must be > 0, got %s", v);
    int has_q = args_has(a, "sampling-rate"), has_b = args_has(a, "batch-size"),
        has_n = args_has(a, "dataset-size");
    if (has_b && parse_count("batch-size", args_get(a, "batch-size"), &c->batch_size))
        return 2;
    if (has_n && parse_count("dataset-size", args_get(a, "dataset-size"), &c->dataset_size))
        return 2;
    if (has_q && parse_real("sampling-rate", args_get(a, "sampling-rate"), &c->sampling_rate))
        return 2;
    if ((v = args_get(a, "sampling")) != NULL) {
        if (!scheme_of(v, &c->sampling))
            return cli_usage_error("--sampling must be poisson, fixed, shuffled or full, got '%s'",
                                   v);
    } else if (has_q) {
        c->sampling = DPZO_SAMPLING_POISSON;
    } else if (has_b || has_n) {
        c->sampling = DPZO_SAMPLING_FIXED;
    } else {
        return cli_usage_error("state the sampling: --sampling-rate Q, or --batch-size B "
                               "--dataset-size N, or --sampling full");
    }
    if (c->sampling == DPZO_SAMPLING_POISSON && !has_q) {
        if (!has_b || !has_n)
            return cli_usage_error("Poisson sampling needs --sampling-rate or --batch-size and "
                                   "--dataset-size");
        if (c->dataset_size == 0)
            return cli_usage_error("--dataset-size must be >= 1");
        c->sampling_rate = (double)c->batch_size / (double)c->dataset_size;
    }
    if ((c->sampling == DPZO_SAMPLING_FIXED || c->sampling == DPZO_SAMPLING_SHUFFLED)
        && (!has_b || !has_n))
        return cli_usage_error("--sampling %s needs --batch-size and --dataset-size",
                               dpzo_sampling_name(c->sampling));
    if (args_has(a, "steps") == args_has(a, "epochs"))
        return cli_usage_error("give exactly one of --steps and --epochs");
    if ((v = args_get(a, "steps")) != NULL && parse_count("steps", v, &c->steps))
        return 2;
    if ((v = args_get(a, "epochs")) != NULL) {
        double e;
        if (parse_real("epochs", v, &e))
            return 2;
        if (!(e > 0.0 && e < 1e12))
            return cli_usage_error("--epochs must be in (0, 1e12), got %s", v);
        /* the library's one rule (dpzo_steps_from_epochs), as in claim files */
        int fixed = c->sampling != DPZO_SAMPLING_FULL && c->batch_size > 0
                    && c->dataset_size > 0;
        double q = c->sampling == DPZO_SAMPLING_FULL ? 1.0 : c->sampling_rate;
        if (dpzo_steps_from_epochs(ctx, e, q, fixed ? c->batch_size : 0,
                                   fixed ? c->dataset_size : 0, &c->steps) != DPZO_OK)
            return cli_usage_error("--epochs %s: %s", v, dpzo_ctx_errmsg(ctx));
    }
    if ((v = args_get(a, "epsilon")) != NULL) {
        if (parse_real("epsilon", v, &c->epsilon))
            return 2;
    } else if (need_epsilon) {
        return cli_usage_error("a claim on the command line needs --epsilon (the claimed value)");
    }
    if ((v = args_get(a, "delta")) == NULL)
        return cli_usage_error("a claim on the command line needs --delta");
    if (parse_real("delta", v, &c->delta))
        return 2;
    if ((v = args_get(a, "adjacency")) != NULL) {
        if (strcmp(v, "add-remove") == 0)
            c->adjacency = DPZO_ADJACENCY_ADD_REMOVE;
        else if (strcmp(v, "replace-one") == 0)
            c->adjacency = DPZO_ADJACENCY_REPLACE_ONE;
        else if (strcmp(v, "zero-out") == 0)
            c->adjacency = DPZO_ADJACENCY_ZERO_OUT;
        else
            return cli_usage_error("--adjacency must be add-remove, replace-one or zero-out, "
                                   "got '%s'", v);
    }
    if ((v = args_get(a, "pipeline")) != NULL && !scheme_of(v, &c->pipeline))
        return cli_usage_error("--pipeline must be poisson, fixed, shuffled or full, got '%s'", v);
    if ((v = args_get(a, "effective-batch-size")) != NULL
        && parse_count("effective-batch-size", v, &c->effective_batch_size))
        return 2;
    if (args_has(a, "orders") || args_has(a, "conversion")) {
        int rc = order_choice_parse(a, &cs->oc);
        if (rc)
            return rc;
        c->has_accountant = 1;
        c->accountant = cs->oc.opts;
    }
    if (dpzo_claim_validate(ctx, c))
        return cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
    return 0;
}

int claims_load(dpzo_ctx *ctx, const char **files, int nfiles, const parsed_args *a,
                int need_epsilon, claim_set *out)
{
    memset(out, 0, sizeof *out);
    int has_inline = 0;
    for (size_t i = 0; i < sizeof inline_opts / sizeof *inline_opts; i++)
        has_inline |= args_has(a, inline_opts[i]);
    out->blocks = calloc((size_t)nfiles + 1, sizeof *out->blocks);
    size_t total = 0;
    size_t *counts = calloc((size_t)nfiles + 1, sizeof *counts);
    if (out->blocks == NULL || counts == NULL) {
        free(counts);
        return cli_out_of_memory();
    }
    for (int i = 0; i < nfiles; i++) {
        if (dpzo_claims_read_file(ctx, files[i], &out->blocks[i], &counts[i])) {
            free(counts);
            return cli_usage_error("%s", dpzo_ctx_errmsg(ctx));
        }
        out->nblocks++;
        total += counts[i];
    }
    out->specs = calloc(total + 1, sizeof *out->specs);
    if (out->specs == NULL) {
        free(counts);
        return cli_out_of_memory();
    }
    for (int i = 0; i < nfiles; i++)
        for (size_t j = 0; j < counts[i]; j++)
            out->specs[out->n++] = out->blocks[i][j];
    free(counts);
    if (has_inline) {
        int rc = inline_claim(ctx, a, need_epsilon, out, &out->specs[out->n]);
        if (rc)
            return rc;
        out->n++;
        out->inline_claim = 1;
    }
    if (out->n == 0)
        return cli_usage_error("no claim: give claim files or a claim on the command line "
                               "(see --help)");
    return 0;
}

void claims_free(claim_set *s)
{
    for (size_t i = 0; i < s->nblocks; i++)
        free(s->blocks[i]);
    free(s->blocks);
    free(s->specs);
    order_choice_free(&s->oc);
    memset(s, 0, sizeof *s);
}

/* ---- Printing ---------------------------------------------------------------------- */


static void json_num_or_null(cJSON *o, const char *key, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, key);
    else
        json_number(o, key, v);
}

static const char *up8(char *buf, size_t size, double v)
{
    return isnan(v) ? "-" : fmt_dir(buf, size, v, 8, 1);
}
static const char *down8(char *buf, size_t size, double v)
{
    return isnan(v) ? "-" : fmt_dir(buf, size, v, 8, -1);
}

/* "tf orders, standard conversion" */
static const char *accountant_desc(const dpzo_claim *c, char *buf, size_t size)
{
    const dpzo_rdp_options *o = &c->accountant;
    const char *conv = o->conversion == DPZO_CONVERSION_STANDARD ? "standard" : "improved";
    double amax = 0.0;
    switch (o->grid) {
    case DPZO_ORDERS_TF: snprintf(buf, size, "TF Privacy's 72 orders, %s conversion", conv); break;
    case DPZO_ORDERS_OPACUS:
        snprintf(buf, size, "orders 1.1..10.9 and 12..63, %s conversion", conv);
        break;
    case DPZO_ORDERS_DP_ACCOUNTING:
        snprintf(buf, size, "dp_accounting's 156 orders, %s conversion", conv);
        break;
    case DPZO_ORDERS_CUSTOM:
        for (size_t i = 0; i < o->n_orders; i++)
            amax = fmax(amax, o->orders[i]);
        snprintf(buf, size, "%zu listed orders up to %g, %s conversion", o->n_orders, amax, conv);
        break;
    default: snprintf(buf, size, "continuous orders, %s conversion", conv); break;
    }
    return buf;
}

static void bounds_line(const dpzo_audit_bounds *b, char *line, size_t size)
{
    char r[40], pl[40], pu[40], vl[40], vu[40];
    size_t len = (size_t)snprintf(line, size, "RDP %s", up8(r, sizeof r, b->rdp));
    if (!isnan(b->pld_upper) && len < size && b->lower_elsewhere)
        len += (size_t)snprintf(line + len, size - len,
                                "; PLD %s (grid %g), and %s on the realised pair",
                                up8(pu, sizeof pu, b->pld_upper), b->pld_grid,
                                down8(pl, sizeof pl, b->pld_lower));
    else if (!isnan(b->pld_upper) && len < size)
        len += (size_t)snprintf(line + len, size - len, "; PLD [%s, %s] (grid %g)",
                                down8(pl, sizeof pl, b->pld_lower),
                                up8(pu, sizeof pu, b->pld_upper), b->pld_grid);
    if (!isnan(b->prv_upper) && len < size && isnan(b->prv_lower))
        snprintf(line + len, size - len, "; PRV %s", up8(vu, sizeof vu, b->prv_upper));
    else if (!isnan(b->prv_upper) && len < size)
        snprintf(line + len, size - len, "; PRV [%s, %s]", down8(vl, sizeof vl, b->prv_lower),
                 up8(vu, sizeof vu, b->prv_upper));
}

static void print_text(const claim_set *cs, const dpzo_claim_report *r, int brief)
{
    char b1[40], b2[40], b3[40], b4[40];
    printf("dpzo audit: %zu claim%s; proven intervals for the true epsilon (lower on a realised "
           "pair, upper from RDP/PLD/PRV)\n",
           cs->n, cs->n == 1 ? "" : "s");
    printf("   #  verdict       claimed eps  delta      lower         upper         RDP only      "
           "sigma     needed\n");
    for (size_t i = 0; i < cs->n; i++) {
        const dpzo_claim *c = &cs->specs[i].claim;
        const dpzo_audit_result *a = &r[i].audit;
        char sig[24];
        if (cs->specs[i].noise == DPZO_CLAIM_NOISE_GAUSSIAN)
            snprintf(sig, sizeof sig, "%.6g", c->noise_multiplier);
        else
            snprintf(sig, sizeof sig, "%s",
                     cs->specs[i].noise == DPZO_CLAIM_NOISE_EVENT ? "event" : "LMO");
        printf("  %2zu  %-12s  %-11.6g  %-9.3g  %-12s  %-12s  %-12s  %-8s  %s\n", i + 1,
               dpzo_verdict_name(a->verdict), c->epsilon, c->delta,
               down8(b1, sizeof b1, a->bounds.lower), up8(b2, sizeof b2, a->bounds.upper),
               up8(b3, sizeof b3, a->bounds.rdp), sig,
               isnan(a->sigma_needed) ? "-" : fmt_dir(b4, sizeof b4, a->sigma_needed, 6, 1));
    }
    if (brief) {
        for (size_t i = 0; i < cs->n; i++) {
            const dpzo_audit_result *a = &r[i].audit;
            printf("  %2zu  %s\n", i + 1, cs->specs[i].name);
            int any = 0;
            for (unsigned k = 0; k < 32; k++)
                if ((a->flags & (1u << k)) && dpzo_audit_flag_name(1u << k) != NULL)
                    printf("%s%s", any++ ? ", " : "      mismatches: ",
                           dpzo_audit_flag_name(1u << k));
            if (any)
                putchar('\n');
            if (a->has_pipeline)
                printf("      as run (%s): %s, epsilon in [%s, %s]\n",
                       dpzo_sampling_name(cs->specs[i].claim.pipeline),
                       dpzo_verdict_name(a->pipeline_verdict),
                       down8(b1, sizeof b1, a->pipeline_bounds.lower),
                       up8(b2, sizeof b2, a->pipeline_bounds.upper));
            if (r[i].attack_kind != DPZO_CLAIM_ATTACK_NONE)
                printf("      attack: epsilon >= %s at %g%% confidence%s\n",
                       down8(b1, sizeof b1, r[i].attack_epsilon), 100.0 * r[i].attack.confidence,
                       r[i].attack_exceeds_upper ? ", above the proven upper bound" : "");
        }
        return;
    }
    for (size_t i = 0; i < cs->n; i++) {
        const dpzo_claim_spec *s = &cs->specs[i];
        const dpzo_audit_result *a = &r[i].audit;
        char line[400];
        printf("\n%zu. %s\n", i + 1, s->name);
        if (s->source[0])
            printf("   source      %s\n", s->source);
        printf("   accounted   %s\n", a->accounted);
        printf("   claimed     epsilon %.10g at delta %g\n", s->claim.epsilon, s->claim.delta);
        printf("   verdict     %s: epsilon in [%s, %s] (lower: %s, upper: %s)\n",
               dpzo_verdict_name(a->verdict), down8(b1, sizeof b1, a->bounds.lower),
               up8(b2, sizeof b2, a->bounds.upper), a->bounds.lower_from, a->bounds.upper_from);
        bounds_line(&a->bounds, line, sizeof line);
        printf("   bounds      %s\n", line);
        if (!isnan(a->stated_epsilon))
            printf("   authors     %s with their accountant (RDP, %s; order %g)\n",
                   up8(b1, sizeof b1, a->stated_epsilon),
                   accountant_desc(&s->claim, line, sizeof line), a->stated_order);
        if (!isnan(a->sigma_needed))
            printf(
                "   needed      Gaussian noise multiplier %s for epsilon %g (tight accountant %s, "
                "RDP %s)\n",
                fmt_dir(b1, sizeof b1, a->sigma_needed, 6, 1), s->claim.epsilon,
                isnan(a->sigma_needed_tight) ? "-"
                                             : fmt_dir(b2, sizeof b2, a->sigma_needed_tight, 6, 1),
                isnan(a->sigma_needed_rdp) ? "-"
                                           : fmt_dir(b3, sizeof b3, a->sigma_needed_rdp, 6, 1));
        for (size_t k = 0; k < a->n_notes; k++)
            printf("   %-11s %s\n", "note", a->notes[k]);
        if (a->has_pipeline)
            printf("   as run      %s: %s, epsilon in [%s, %s]\n", a->pipeline_accounted,
                   dpzo_verdict_name(a->pipeline_verdict),
                   down8(b1, sizeof b1, a->pipeline_bounds.lower),
                   up8(b2, sizeof b2, a->pipeline_bounds.upper));
        if (r[i].attack_kind != DPZO_CLAIM_ATTACK_NONE)
            printf("   attack      epsilon >= %s at %g%% confidence (%s)%s\n",
                   down8(b1, sizeof b1, r[i].attack_epsilon), 100.0 * r[i].attack.confidence,
                   r[i].attack_kind == DPZO_CLAIM_ATTACK_COUNTS ? "membership inference"
                                                                : "one-run audit",
                   r[i].attack_exceeds_upper
                       ? "; above the proven upper bound: the attacked run is not the "
                         "accounted mechanism"
                       : "; below the proven upper bound");
    }
}

static cJSON *bounds_json(const dpzo_audit_bounds *b)
{
    cJSON *o = cJSON_CreateObject();
    json_number(o, "lower", b->lower);
    json_number(o, "upper", b->upper);
    cJSON_AddStringToObject(o, "lower_from", b->lower_from);
    cJSON_AddStringToObject(o, "upper_from", b->upper_from);
    json_num_or_null(o, "rdp", b->rdp);
    json_num_or_null(o, "rdp_order", b->rdp_order);
    json_num_or_null(o, "pld_lower", b->pld_lower);
    json_num_or_null(o, "pld_upper", b->pld_upper);
    json_num_or_null(o, "pld_grid", b->pld_grid);
    json_num_or_null(o, "prv_lower", b->prv_lower);
    json_num_or_null(o, "prv_upper", b->prv_upper);
    cJSON_AddBoolToObject(o, "lower_on_realised_pair", b->lower_elsewhere);
    return o;
}

static void print_json(const claim_set *cs, const dpzo_claim_report *r)
{
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "claims");
    for (size_t i = 0; i < cs->n; i++) {
        const dpzo_claim_spec *s = &cs->specs[i];
        const dpzo_claim *c = &s->claim;
        const dpzo_audit_result *a = &r[i].audit;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->name);
        cJSON_AddStringToObject(o, "source", s->source);
        cJSON_AddStringToObject(o, "noise", s->noise == DPZO_CLAIM_NOISE_LMO     ? "lmo"
                                            : s->noise == DPZO_CLAIM_NOISE_EVENT ? "event"
                                                                                 : "gaussian");
        if (s->noise == DPZO_CLAIM_NOISE_GAUSSIAN)
            json_number(o, "noise_multiplier", c->noise_multiplier);
        if (s->noise == DPZO_CLAIM_NOISE_EVENT) { /* the event as the claim states it */
            cJSON *ev = cJSON_Parse(s->event_json);
            if (ev != NULL)
                cJSON_AddItemToObject(o, "event", ev);
        } else {
            cJSON_AddStringToObject(o, "sampling", dpzo_sampling_name(c->sampling));
            json_number(o, "steps", (double)c->steps);
        }
        json_number(o, "epsilon", c->epsilon);
        json_number(o, "delta", c->delta);
        cJSON_AddStringToObject(o, "accounted", a->accounted);
        cJSON_AddStringToObject(o, "verdict", dpzo_verdict_name(a->verdict));
        json_number(o, "lower", a->bounds.lower);
        json_number(o, "upper", a->bounds.upper);
        cJSON_AddItemToObject(o, "bounds", bounds_json(&a->bounds));
        json_num_or_null(o, "stated_epsilon", a->stated_epsilon);
        if (c->has_accountant) {
            char d[160];
            cJSON_AddStringToObject(o, "stated_accountant", accountant_desc(c, d, sizeof d));
        } else {
            cJSON_AddNullToObject(o, "stated_accountant");
        }
        json_num_or_null(o, "sigma_needed", a->sigma_needed);
        json_num_or_null(o, "sigma_needed_tight", a->sigma_needed_tight);
        json_num_or_null(o, "sigma_needed_rdp", a->sigma_needed_rdp);
        cJSON *fl = cJSON_AddArrayToObject(o, "mismatches");
        for (unsigned k = 0; k < 32; k++)
            if ((a->flags & (1u << k)) && dpzo_audit_flag_name(1u << k) != NULL)
                cJSON_AddItemToArray(fl, cJSON_CreateString(dpzo_audit_flag_name(1u << k)));
        cJSON *nt = cJSON_AddArrayToObject(o, "notes");
        for (size_t k = 0; k < a->n_notes; k++)
            cJSON_AddItemToArray(nt, cJSON_CreateString(a->notes[k]));
        if (a->has_pipeline) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "sampling", dpzo_sampling_name(c->pipeline));
            cJSON_AddStringToObject(p, "accounted", a->pipeline_accounted);
            cJSON_AddStringToObject(p, "verdict", dpzo_verdict_name(a->pipeline_verdict));
            cJSON_AddItemToObject(p, "bounds", bounds_json(&a->pipeline_bounds));
            cJSON_AddItemToObject(o, "pipeline", p);
        } else {
            cJSON_AddNullToObject(o, "pipeline");
        }
        if (r[i].attack_kind != DPZO_CLAIM_ATTACK_NONE) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "kind", r[i].attack_kind == DPZO_CLAIM_ATTACK_COUNTS
                                                   ? "membership-inference"
                                                   : "one-run");
            json_number(t, "epsilon_lower", r[i].attack_epsilon);
            json_number(t, "confidence", r[i].attack.confidence);
            json_number(t, "delta", r[i].attack.delta);
            cJSON_AddBoolToObject(t, "exceeds_upper", r[i].attack_exceeds_upper);
            cJSON_AddItemToObject(o, "attack", t);
        } else {
            cJSON_AddNullToObject(o, "attack");
        }
        cJSON_AddItemToArray(arr, o);
    }
    json_print(root);
}

/* The report's figure names: FILE.md -> FILE-N.png next to it. */
static void figure_path(const char *md, size_t i, char *path, size_t size, char *rel, size_t rsize)
{
    size_t len = strlen(md);
    if (len > 3 && strcmp(md + len - 3, ".md") == 0)
        len -= 3;
    snprintf(path, size, "%.*s-%zu.png", (int)len, md, i + 1);
    const char *slash = strrchr(path, '/');
    snprintf(rel, rsize, "%s", slash ? slash + 1 : path);
}

static void md_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
}

static int write_markdown(dpzo_ctx *ctx, const char *md, const claim_set *cs,
                          const dpzo_claim_report *r, int plots, int *figures, cli_progress *pg)
{
    /* written atomically when complete (a killed run leaves the old report); a device, FIFO
     * or "-" is written directly, never replaced (docs/files.md) */
    char ioerr[DPZO_IO_ERRMAX];
    dpzo_io_out *out = dpzo_io_out_open(md, "Markdown report", DPZO_IO_DIRECT, ioerr, sizeof ioerr);
    if (out == NULL)
        return cli_usage_error("cannot write the %s", ioerr);
    FILE *f = dpzo_io_out_stream(out);
    char b1[40], b2[40], b3[40], b4[40], line[400];
    char unwritten[400] = ""; /* the first figure that could not be written */
    *figures = 0;
    const char *gp = plots ? plot_gnuplot() : NULL;
    fprintf(f, "# Privacy audit\n\n");
    fprintf(f, "dpzo %s checked %zu claim%s. For each, the true epsilon of the stated mechanism "
               "lies in the proven interval: the upper end is the smallest proven upper bound of "
               "the RDP, PLD and PRV accountants, the lower end a tight accountant's proven lower "
               "bound on a pair of datasets the stated sampling can produce (docs/audit.md).\n\n",
            DPZO_VERSION, cs->n, cs->n == 1 ? "" : "s");
    fprintf(f, "| # | claim | claimed epsilon (delta) | verdict | proven interval | RDP only | "
               "sigma | sigma needed |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < cs->n; i++) {
        const dpzo_claim_spec *s = &cs->specs[i];
        const dpzo_audit_result *a = &r[i].audit;
        fprintf(f, "| %zu | ", i + 1);
        md_escape(f, s->name);
        char sig[24];
        if (s->noise == DPZO_CLAIM_NOISE_GAUSSIAN)
            snprintf(sig, sizeof sig, "%.6g", s->claim.noise_multiplier);
        else
            snprintf(sig, sizeof sig, "%s", s->noise == DPZO_CLAIM_NOISE_EVENT ? "event" : "LMO");
        fprintf(f, " | %.10g (%g) | **%s** | [%s, %s] | %s | %s | %s |\n", s->claim.epsilon,
                s->claim.delta, dpzo_verdict_name(a->verdict),
                down8(b1, sizeof b1, a->bounds.lower), up8(b2, sizeof b2, a->bounds.upper),
                up8(b3, sizeof b3, a->bounds.rdp), sig,
                isnan(a->sigma_needed) ? "-" : fmt_dir(b4, sizeof b4, a->sigma_needed, 6, 1));
    }
    for (size_t i = 0; i < cs->n; i++) {
        const dpzo_claim_spec *s = &cs->specs[i];
        const dpzo_audit_result *a = &r[i].audit;
        fprintf(f, "\n## %zu. ", i + 1);
        md_escape(f, s->name);
        fprintf(f, "\n\n");
        if (s->source[0])
            fprintf(f, "Source: %s\n\n", s->source);
        if (s->note[0])
            fprintf(f, "%s\n\n", s->note);
        fprintf(f, "- Accounted: %s.\n", a->accounted);
        fprintf(f, "- Verdict: **%s**: epsilon in [%s, %s] (lower from %s, upper from %s); "
                   "claimed %.10g at delta %g.\n",
                dpzo_verdict_name(a->verdict), down8(b1, sizeof b1, a->bounds.lower),
                up8(b2, sizeof b2, a->bounds.upper), a->bounds.lower_from, a->bounds.upper_from,
                s->claim.epsilon, s->claim.delta);
        bounds_line(&a->bounds, line, sizeof line);
        fprintf(f, "- Accountants: %s.\n", line);
        if (!isnan(a->stated_epsilon))
            fprintf(f, "- The authors' accountant (RDP, %s): %s at order %g.\n",
                    accountant_desc(&s->claim, line, sizeof line),
                    up8(b1, sizeof b1, a->stated_epsilon), a->stated_order);
        if (!isnan(a->sigma_needed))
            fprintf(
                f, "- Noise multiplier needed for the claim: %s (tight accountant %s, RDP %s).\n",
                fmt_dir(b1, sizeof b1, a->sigma_needed, 6, 1),
                isnan(a->sigma_needed_tight) ? "-"
                                             : fmt_dir(b2, sizeof b2, a->sigma_needed_tight, 6, 1),
                isnan(a->sigma_needed_rdp) ? "-"
                                           : fmt_dir(b3, sizeof b3, a->sigma_needed_rdp, 6, 1));
        for (size_t k = 0; k < a->n_notes; k++)
            fprintf(f, "- %s.\n", a->notes[k]);
        if (a->has_pipeline)
            fprintf(f, "- As run (%s): **%s**, epsilon in [%s, %s].\n", a->pipeline_accounted,
                    dpzo_verdict_name(a->pipeline_verdict),
                    down8(b1, sizeof b1, a->pipeline_bounds.lower),
                    up8(b2, sizeof b2, a->pipeline_bounds.upper));
        if (r[i].attack_kind != DPZO_CLAIM_ATTACK_NONE)
            fprintf(f, "- Empirical lower bound (%s): epsilon >= %s at %g%% confidence, next to "
                       "the proven upper bound %s%s.\n",
                    r[i].attack_kind == DPZO_CLAIM_ATTACK_COUNTS ? "membership inference"
                                                                 : "one-run audit",
                    down8(b1, sizeof b1, r[i].attack_epsilon), 100.0 * r[i].attack.confidence,
                    up8(b2, sizeof b2, a->bounds.upper),
                    r[i].attack_exceeds_upper ? " (above it: the attacked run is not the "
                                                "accounted mechanism)"
                                              : "");
        if (!plots || s->noise == DPZO_CLAIM_NOISE_EVENT) /* no mechanism curves to draw */
            continue;
        if (gp == NULL) {
            fprintf(f, "\n(Curves not drawn: gnuplot was not found.)\n");
            continue;
        }
        char path[4200], rel[4200], err[400] = "";
        plot_panel panels[2];
        size_t np = 0;
        plot_curve_options po = {0, 0, 0, 10, 0, NULL};
        figure_path(md, i, path, sizeof path, rel, sizeof rel);
        char what[160];
        snprintf(what, sizeof what, "figures of the Markdown report, %.100s", s->name);
        progress_step(pg, i, cs->n, what);
        int rc = plot_claim_panels(ctx, s, 1, PLOT_EPS_DELTA | PLOT_EPS_STEPS, &po, panels, &np,
                                   err, sizeof err);
        char title[220];
        snprintf(title, sizeof title, "%.200s", s->name);
        if (!rc)
            rc = plot_render(path, title, panels, np, err, sizeof err);
        plot_panels_free(panels, np);
        if (rc == 2 && unwritten[0] == '\0') /* a figure is an output too (docs/cli.md) */
            snprintf(unwritten, sizeof unwritten, "%s", err);
        if (rc) {
            fprintf(f, "\n(Curves not drawn: %s.)\n", err);
            continue;
        }
        fprintf(f, "\n![Privacy curves of claim %zu: epsilon against delta and against steps, "
                   "RDP and PLD bounds and the claim](%s)\n", i + 1, rel);
        (*figures)++;
    }
    if (dpzo_io_out_commit(out, ioerr, sizeof ioerr) != 0)
        return cli_usage_error("cannot write the %s", ioerr);
    /* gnuplot missing or failing leaves a note in the report; a figure that could not be
     * written is an output that could not be written: the report says so, and so does
     * the exit status */
    if (unwritten[0] != '\0')
        return cli_usage_error("figure of the Markdown report: %s", unwritten);
    return 0;
}

static int audit_claims(int argc, char **argv)
{
    static const opt_spec specs[] = {CLAIM_OPTS,
                                     {"json", 0},
                                     {"markdown", 1},
                                     {"no-plots", 0},
                                     {"grid", 1},
                                     {"no-prv", 0},
                                     {"no-calibrate", 0},
                                     {"brief", 0},
                                     {"only", 1},
                                     {"tp", 1},
                                     {"fp", 1},
                                     {"tn", 1},
                                     {"fn", 1},
                                     {"confidence", 1},
                                     {"help", 0},
                                     {NULL, 0}};
    const char **files;
    int nfiles, rc;
    parsed_args a;
    if ((rc = cli_parse_files(argc, argv, specs, &files, &nfiles, &a))) {
        free(files);
        return rc;
    }
    if (args_has(&a, "help")) {
        fputs(audit_help, stdout);
        free(files);
        return 0;
    }
    dpzo_audit_options opts;
    dpzo_audit_options_default(&opts);
    const char *v;
    if ((v = args_get(&a, "grid")) != NULL) {
        if (parse_real("grid", v, &opts.pld_grid)) {
            free(files);
            return 2;
        }
        if (!(opts.pld_grid > 0.0 && opts.pld_grid <= 1.0)) {
            free(files);
            return cli_usage_error("--grid must be in (0, 1], got %s", v);
        }
        if (opts.pld_grid_min > opts.pld_grid)
            opts.pld_grid_min = opts.pld_grid;
    }
    opts.prv = !args_has(&a, "no-prv");
    opts.calibrate = !args_has(&a, "no-calibrate");
    dpzo_ctx *ctx = dpzo_ctx_new();
    claim_set cs;
    if (ctx == NULL) {
        free(files);
        return cli_out_of_memory();
    }
    rc = claims_load(ctx, files, nfiles, &a, 1, &cs);
    if (!rc && (v = args_get(&a, "only")) != NULL) {
        uint64_t k;
        if (parse_count("only", v, &k))
            rc = 2;
        else if (k < 1 || k > cs.n)
            rc = cli_usage_error("--only must be in [1, %zu], got %s", cs.n, v);
        else {
            cs.specs[0] = cs.specs[k - 1];
            cs.n = 1;
        }
    }
    /* an attack given with flags joins the single claim */
    int n_attack =
        args_has(&a, "tp") + args_has(&a, "fp") + args_has(&a, "tn") + args_has(&a, "fn");
    if (!rc && (n_attack || args_has(&a, "confidence"))) {
        if (n_attack != 4)
            rc = cli_usage_error("an attack needs all of --tp, --fp, --tn and --fn");
        else if (cs.n != 1)
            rc = cli_usage_error("attack flags go with exactly one claim (got %zu)", cs.n);
        else if (cs.specs[0].noise == DPZO_CLAIM_NOISE_EVENT)
            rc = cli_usage_error("attack flags go with a mechanism claim, not an event claim");
        else {
            dpzo_claim_spec *s = &cs.specs[0];
            if (parse_count("tp", args_get(&a, "tp"), &s->counts.tp)
                || parse_count("fp", args_get(&a, "fp"), &s->counts.fp)
                || parse_count("tn", args_get(&a, "tn"), &s->counts.tn)
                || parse_count("fn", args_get(&a, "fn"), &s->counts.fn))
                rc = 2;
            else if ((v = args_get(&a, "confidence")) != NULL
                     && (parse_real("confidence", v, &s->attack_confidence)
                         || !(s->attack_confidence > 0.0 && s->attack_confidence < 1.0)))
                rc = cli_usage_error("--confidence must be in (0, 1), got %s", v);
            s->attack = DPZO_CLAIM_ATTACK_COUNTS;
        }
    }
    /* the report's path is checked before the audit (issue 28, item 6) */
    if (!rc && (v = args_get(&a, "markdown")) != NULL)
        rc = cli_check_output(v, "Markdown report", DPZO_IO_DIRECT);
    dpzo_claim_report *rep = NULL;
    if (!rc) {
        rep = calloc(cs.n, sizeof *rep);
        if (rep == NULL)
            rc = cli_out_of_memory();
    }
    cli_progress pg;
    progress_begin(&pg, "dpzo audit", args_has(&a, "json"));
    for (size_t i = 0; !rc && i < cs.n; i++) {
        char what[160];
        snprintf(what, sizeof what, "claims, %.120s", cs.specs[i].name);
        progress_step(&pg, i, cs.n, what);
        dpzo_status st = dpzo_claim_spec_audit(ctx, &cs.specs[i], &opts, &rep[i]);
        if (st) {
            progress_end(&pg);
            fprintf(stderr, "dpzo: error: %s: %s\n", cs.specs[i].name, dpzo_ctx_errmsg(ctx));
            rc = st == DPZO_EINVAL || st == DPZO_EPARSE || st == DPZO_EUNSUPPORTED ? 2 : 1;
        }
    }
    progress_end(&pg);
    if (!rc) {
        if (args_has(&a, "json"))
            print_json(&cs, rep);
        else
            print_text(&cs, rep, args_has(&a, "brief"));
        if ((v = args_get(&a, "markdown")) != NULL) {
            int figures = 0;
            progress_begin(&pg, "dpzo audit", args_has(&a, "json"));
            rc = write_markdown(ctx, v, &cs, rep, !args_has(&a, "no-plots"), &figures, &pg);
            progress_end(&pg);
            if (!rc && !args_has(&a, "json"))
                printf("\nMarkdown report written to %s (%d figure%s)\n", v, figures,
                       figures == 1 ? "" : "s");
        }
    }
    free(rep);
    claims_free(&cs);
    dpzo_ctx_free(ctx);
    free(files);
    return rc;
}

/* ---- Attacks ------------------------------------------------------------------------- */

static const char *attack_help =
    "usage: dpzo audit attack --tp N --fp N --tn N --fn N [--confidence C] [--delta D] [--json]\n"
    "       dpzo audit attack --scores FILE [--threshold T] [--confidence C] [--delta D] [--json]\n"
    "\n"
    "An epsilon lower bound from a membership-inference attack. Any (epsilon, delta)-DP\n"
    "mechanism forces FPR + e^eps FNR >= 1 - delta and FNR + e^eps FPR >= 1 - delta for every\n"
    "test (Kairouz, Oh, Viswanath 2015), so\n"
    "  eps >= max( log((1 - delta - FPR)/FNR), log((1 - delta - FNR)/FPR) ).\n"
    "The observed rates are replaced by one-sided Clopper-Pearson upper bounds (GSL's beta\n"
    "quantiles), each at level 1 - (1 - C)/2, so the bound holds with probability C.\n"
    "\n"
    "  --tp N --fn N       members guessed member / non-member\n"
    "  --fp N --tn N       non-members guessed member / non-member\n"
    "  --scores FILE       JSON {\"in\": [scores of members], \"out\": [scores of non-members]};\n"
    "                      a score >= threshold means \"member\"\n"
    "  --threshold T       the threshold, fixed before looking at the scores. Without it every\n"
    "                      distinct score is tried and the confidence is split among them\n"
    "                      (Bonferroni), so the best bound still holds with probability C\n"
    "  --confidence C      default 0.95\n"
    "  --delta D           default 0\n"
    "  --json              machine-readable output\n";

static const char *one_run_help =
    "usage: dpzo audit one-run --canaries M --guesses R --correct V [--confidence C] [--delta D]\n"
    "       dpzo audit one-run --scores FILE --positive K [--negative K] [...]\n"
    "\n"
    "The one-run auditing bound of Steinke, Nasr and Jagielski (2023): M canaries, each\n"
    "inserted into the training set independently with probability 1/2; the auditor guesses\n"
    "R of them (in or out, abstaining on the rest) and V guesses are right. For an\n"
    "(eps, delta)-DP algorithm the p-value of V right guesses is at most\n"
    "  P[B >= V] + 2 M delta max_{1<=i<=V} P[V - i <= B < V] / i,  B ~ Binomial(R, "
    "e^eps/(1+e^eps)),\n"
    "and the bound is the largest eps whose p-value is below 1 - C.\n"
    "\n"
    "  --scores FILE       JSON {\"in\": [...], \"out\": [...]}: the canaries' scores (higher =\n"
    "                      \"in\"); the K highest are guessed in, the --negative lowest out\n"
    "  --confidence C      default 0.95\n"
    "  --delta D           default 0\n"
    "  --json              machine-readable output\n";

static int read_scores(const char *path, double **in, size_t *n_in, double **out, size_t *n_out)
{
    /* a regular file only (a FIFO or device is refused before any read), at most 64 MiB */
    char *buf = NULL, ioerr[DPZO_IO_ERRMAX];
    size_t len = 0;
    if (dpzo_io_read_file(path, "scores file", DPZO_IO_LIMIT_JSON, &buf, &len, ioerr,
                          sizeof ioerr) != 0)
        return cli_usage_error("cannot read %s", ioerr);
    cJSON *root = NULL;
    int jst = dpzo_json_parse(buf, len, &root, NULL, ioerr, sizeof ioerr);
    free(buf);
    if (jst == DPZO_JSON_REFUSED)
        return cli_usage_error("scores file %s: %s", path, ioerr);
    int rc = 0;
    const char *keys[2] = {"in", "out"};
    double **dst[2] = {in, out};
    size_t *cnt[2] = {n_in, n_out};
    *in = *out = NULL;
    if (!cJSON_IsObject(root))
        rc = cli_usage_error("scores file %s: expected {\"in\": [...], \"out\": [...]}", path);
    for (const cJSON *k = root ? root->child : NULL; !rc && k != NULL; k = k->next)
        if (strcmp(k->string, "in") && strcmp(k->string, "out"))
            rc = cli_usage_error("scores file %s: unknown key \"%s\"", path, k->string);
    for (int j = 0; j < 2 && !rc; j++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, keys[j]);
        if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
            rc = cli_usage_error("scores file %s: \"%s\" must be a non-empty array of numbers",
                                 path, keys[j]);
            break;
        }
        size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
        *dst[j] = malloc(n * sizeof **dst[j]);
        if (*dst[j] == NULL) {
            rc = cli_out_of_memory();
            break;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, arr)
        {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
                rc = cli_usage_error("scores file %s: \"%s\"[%zu] is not a finite number", path,
                                     keys[j], i);
                break;
            }
            (*dst[j])[i++] = e->valuedouble;
        }
        *cnt[j] = n;
    }
    cJSON_Delete(root);
    if (rc) {
        free(*in);
        free(*out);
        *in = *out = NULL;
    }
    return rc;
}

static int get_level(const parsed_args *a, const char *name, double def, double *out, int closed)
{
    const char *v = args_get(a, name);
    *out = def;
    if (v == NULL)
        return 0;
    if (parse_real(name, v, out))
        return 2;
    if (closed ? !(*out >= 0.0 && *out < 1.0) : !(*out > 0.0 && *out < 1.0))
        return cli_usage_error("--%s must be in %s0, 1), got %s", name, closed ? "[" : "(", v);
    return 0;
}

/* The common start of `audit attack` and `audit one-run`: parse, --help (returns -1),
 * --confidence (default 0.95) and --delta (default 0). */
static int attack_begin(int argc, char **argv, const opt_spec *specs, const char *help,
                        parsed_args *a, double *conf, double *delta)
{
    int rc;
    if ((rc = args_parse(argc, argv, specs, a)))
        return rc;
    if (args_has(a, "help")) {
        fputs(help, stdout);
        return -1;
    }
    if ((rc = get_level(a, "confidence", 0.95, conf, 0)) ||
        (rc = get_level(a, "delta", 0.0, delta, 1)))
        return rc;
    return 0;
}

static int audit_attack(int argc, char **argv)
{
    static const opt_spec specs[] = {{"tp", 1},        {"fp", 1},         {"tn", 1},
                                     {"fn", 1},        {"scores", 1},     {"threshold", 1},
                                     {"confidence", 1}, {"delta", 1},     {"json", 0},
                                     {"help", 0},      {NULL, 0}};
    parsed_args a;
    double conf, delta;
    int rc = attack_begin(argc, argv, specs, attack_help, &a, &conf, &delta);
    if (rc)
        return rc < 0 ? 0 : rc;
    int n_counts =
        args_has(&a, "tp") + args_has(&a, "fp") + args_has(&a, "tn") + args_has(&a, "fn");
    if (args_has(&a, "scores") == (n_counts > 0))
        return cli_usage_error("give either --tp, --fp, --tn, --fn or --scores FILE");
    if (n_counts > 0 && n_counts < 4)
        return cli_usage_error("give all of --tp, --fp, --tn and --fn");
    if (args_has(&a, "threshold") && !args_has(&a, "scores"))
        return cli_usage_error("--threshold goes with --scores");
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return cli_out_of_memory();
    dpzo_attack_bound b;
    dpzo_status st;
    if (n_counts) {
        dpzo_attack_counts c;
        if (parse_count("tp", args_get(&a, "tp"), &c.tp) ||
            parse_count("fp", args_get(&a, "fp"), &c.fp) ||
            parse_count("tn", args_get(&a, "tn"), &c.tn) ||
            parse_count("fn", args_get(&a, "fn"), &c.fn)) {
            dpzo_ctx_free(ctx);
            return 2;
        }
        st = dpzo_attack_epsilon_counts(ctx, &c, delta, conf, &b);
    } else {
        double *in, *out, t = NAN;
        size_t n_in, n_out;
        const char *v = args_get(&a, "threshold");
        if ((v != NULL && parse_real("threshold", v, &t))
            || (rc = read_scores(args_get(&a, "scores"), &in, &n_in, &out, &n_out))) {
            dpzo_ctx_free(ctx);
            return 2;
        }
        st = dpzo_attack_epsilon_scores(ctx, in, n_in, out, n_out, t, delta, conf, &b);
        free(in);
        free(out);
    }
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_ctx_free(ctx);
        return rc;
    }
    dpzo_ctx_free(ctx);
    char b1[40], b2[40], b3[40];
    if (args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", "membership-inference");
        json_number(o, "epsilon_lower", b.epsilon);
        json_number(o, "confidence", conf);
        json_number(o, "delta", delta);
        json_number(o, "tp", (double)b.counts.tp);
        json_number(o, "fp", (double)b.counts.fp);
        json_number(o, "tn", (double)b.counts.tn);
        json_number(o, "fn", (double)b.counts.fn);
        json_number(o, "fpr", b.fpr);
        json_number(o, "fnr", b.fnr);
        json_number(o, "fpr_upper", b.fpr_upper);
        json_number(o, "fnr_upper", b.fnr_upper);
        json_num_or_null(o, "threshold", b.threshold);
        json_number(o, "thresholds", (double)b.thresholds);
        json_print(o);
        return 0;
    }
    printf("dpzo audit attack: membership inference, %g%% confidence, delta %g\n", 100.0 * conf,
           delta);
    if (!isnan(b.threshold))
        printf("  threshold        %.10g (best of %zu tried; Bonferroni over all of them)\n",
               b.threshold, b.thresholds);
    printf("  counts           TP %llu, FP %llu, TN %llu, FN %llu\n",
           (unsigned long long)b.counts.tp, (unsigned long long)b.counts.fp,
           (unsigned long long)b.counts.tn, (unsigned long long)b.counts.fn);
    printf("  observed         FPR %.6g, FNR %.6g\n", b.fpr, b.fnr);
    printf("  Clopper-Pearson  FPR <= %s, FNR <= %s (one-sided, each at %g%%)\n",
           fmt_dir(b1, sizeof b1, b.fpr_upper, 8, 1), fmt_dir(b2, sizeof b2, b.fnr_upper, 8, 1),
           100.0 * (1.0 - (1.0 - conf) / (2.0 * (double)b.thresholds)));
    printf("  epsilon          >= %s (lower bound at %g%% confidence)\n",
           fmt_dir(b3, sizeof b3, b.epsilon, 8, -1), 100.0 * conf);
    return 0;
}

static int audit_one_run(int argc, char **argv)
{
    static const opt_spec specs[] = {{"canaries", 1}, {"guesses", 1},    {"correct", 1},
                                     {"scores", 1},   {"positive", 1},   {"negative", 1},
                                     {"confidence", 1}, {"delta", 1},    {"json", 0},
                                     {"help", 0},     {NULL, 0}};
    parsed_args a;
    double conf, delta;
    int rc = attack_begin(argc, argv, specs, one_run_help, &a, &conf, &delta);
    if (rc)
        return rc < 0 ? 0 : rc;
    uint64_t m = 0, r = 0, v = 0;
    int n_counts = args_has(&a, "canaries") + args_has(&a, "guesses") + args_has(&a, "correct");
    if (args_has(&a, "scores") == (n_counts > 0))
        return cli_usage_error("give either --canaries, --guesses, --correct or --scores FILE");
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return cli_out_of_memory();
    dpzo_status st = DPZO_OK;
    if (n_counts) {
        if (n_counts < 3) {
            dpzo_ctx_free(ctx);
            return cli_usage_error("give all of --canaries, --guesses and --correct");
        }
        if (parse_count("canaries", args_get(&a, "canaries"), &m)
            || parse_count("guesses", args_get(&a, "guesses"), &r)
            || parse_count("correct", args_get(&a, "correct"), &v)) {
            dpzo_ctx_free(ctx);
            return 2;
        }
    } else {
        uint64_t kp = 0, kn = 0;
        if (!args_has(&a, "positive")) {
            dpzo_ctx_free(ctx);
            return cli_usage_error("--scores needs --positive K (and optionally --negative K)");
        }
        double *in, *out;
        size_t n_in, n_out;
        if (parse_count("positive", args_get(&a, "positive"), &kp)
            || (args_has(&a, "negative") && parse_count("negative", args_get(&a, "negative"), &kn))
            || read_scores(args_get(&a, "scores"), &in, &n_in, &out, &n_out)) {
            dpzo_ctx_free(ctx);
            return 2;
        }
        st = dpzo_one_run_from_scores(ctx, in, n_in, out, n_out, kp, kn, &m, &r, &v);
        free(in);
        free(out);
    }
    double eps = 0.0, p0 = 1.0;
    if (!st)
        st = dpzo_one_run_epsilon(ctx, m, r, v, delta, conf, &eps);
    if (!st)
        st = dpzo_one_run_p_value(ctx, m, r, v, 0.0, delta, &p0);
    if (st) {
        rc = report_failure(ctx, st);
        dpzo_ctx_free(ctx);
        return rc;
    }
    dpzo_ctx_free(ctx);
    char b1[40];
    if (args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", "one-run");
        json_number(o, "epsilon_lower", eps);
        json_number(o, "confidence", conf);
        json_number(o, "delta", delta);
        json_number(o, "canaries", (double)m);
        json_number(o, "guesses", (double)r);
        json_number(o, "correct", (double)v);
        json_number(o, "p_value_at_zero", p0);
        json_print(o);
        return 0;
    }
    printf("dpzo audit one-run: Steinke-Nasr-Jagielski (2023), %g%% confidence, delta %g\n",
           100.0 * conf, delta);
    printf("  canaries   %llu (each included with probability 1/2)\n", (unsigned long long)m);
    printf("  guesses    %llu, %llu right\n", (unsigned long long)r, (unsigned long long)v);
    printf("  p-value    %.6g at epsilon 0\n", p0);
    printf("  epsilon    >= %s (lower bound at %g%% confidence)\n",
           fmt_dir(b1, sizeof b1, eps, 8, -1), 100.0 * conf);
    return 0;
}

int cmd_audit(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "attack") == 0)
        return audit_attack(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "one-run") == 0)
        return audit_one_run(argc - 1, argv + 1);
    if (argc == 0) {
        fputs(audit_help, stderr);
        return 2;
    }
    return audit_claims(argc, argv);
}
