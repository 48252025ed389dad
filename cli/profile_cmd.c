/* SPDX-License-Identifier: Apache-2.0 */
/* cli/profile_cmd.c: `dpzo profile gaussian | show | verify` (noise profiles,
 * docs/profile.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "account.h"
#include "commands.h"
#include "dpzo_io.h"
#include "output.h"

static const char *help_profile =
    "usage: dpzo profile gaussian --epsilon E --delta D --steps T (--sampling-rate Q |\n"
    "                             --batch-size B --dataset-size N | --full-batch) ...\n"
    "       dpzo profile show FILE [--json]\n"
    "       dpzo profile verify FILE [--json]\n"
    "\n"
    "A noise profile is the JSON file that tells a training run which noise to add and\n"
    "what it costs: the noise (gaussian or lmo), the clipping bound it is scaled by, the\n"
    "accounting (sampling, steps, delta, epsilon and the kind of bound that epsilon is),\n"
    "provenance and a SHA-256 checksum (docs/profile.md).\n"
    "  gaussian   calibrate the noise multiplier for a target epsilon and write a profile\n"
    "  show       validate a profile (every field and the checksum) and summarise it\n"
    "  verify     recompute its epsilon from its parameters and compare with the stored one\n"
    "Run `dpzo profile SUBCOMMAND --help` for the options of each.\n"
    "Exit status: 0 success (verify: the profile holds), 1 verify found the stored epsilon\n"
    "(or curve) below what the parameters give, or another failure; 2 bad input, including\n"
    "a profile file that does not validate.\n";

static const char *help_gaussian =
    "usage: dpzo profile gaussian --epsilon E --delta D (--steps T | --epochs E)\n"
    "                             (--sampling-rate Q | --batch-size B --dataset-size N |\n"
    "                              --full-batch)\n"
    "                             [--accountant rdp|pld|prv] [--sensitivity C]\n"
    "                             [--tolerance R] [--created TIME] [-o FILE] [--json]\n"
    "\n"
    "Calibrates the smallest Gaussian noise multiplier s whose proven epsilon at delta D\n"
    "over T steps is at most E, recomputes that epsilon for the record and writes the\n"
    "noise profile: to standard output, or with -o to FILE (then a short summary is\n"
    "printed). The training run adds N(0, (s C)^2) to each coordinate of the sum of\n"
    "per-example gradients clipped to L2 norm C.\n"
    "  --epsilon E        target epsilon (> 0)\n"
    "  --delta D          target delta, in (0, 1)\n"
    "  --steps T          number of training steps (>= 1)\n"
    "  --epochs E         instead of --steps: T = ceil(E N / B) with --batch-size, or\n"
    "                     ceil(E / Q) with --sampling-rate (rounded up)\n"
    "  --sampling-rate Q  Poisson sampling: each example joins a step's batch with\n"
    "                     probability Q in (0, 1]; add-remove adjacency\n"
    "  --batch-size B --dataset-size N\n"
    "                     instead: every step draws B of the N examples without\n"
    "                     replacement, independently of the other steps; replace-one\n"
    "                     adjacency, so C is the sensitivity for replacing one example.\n"
    "                     Not a proof for shuffled batches (one permutation per epoch):\n"
    "                     docs/audit.md section 3\n"
    "  --full-batch       instead: every step uses the whole dataset (no sampling)\n"
    "  --accountant A     rdp (default: RDP, improved conversion, continuous orders; the\n"
    "                     profile also records the per-step RDP curve at 28 orders),\n"
    "                     pld or prv (tight accountants, default discretisation)\n"
    "  --sensitivity C    clipping bound the noise is scaled by (default 1)\n"
    "  --tolerance R      relative tolerance of the calibrated multiplier (default 1e-6\n"
    "                     with rdp, 1e-4 with pld and prv)\n"
    "  --created TIME     record TIME (UTC, YYYY-MM-DDTHH:MM:SSZ) as the creation time\n"
    "                     instead of now, for reproducible files\n"
    "  -o, --output FILE  write the profile to FILE and print a summary\n"
    "  --json             with -o: the summary as JSON (file, noise_multiplier, epsilon,\n"
    "                     delta, accountant, sha256); without -o the profile is JSON anyway\n";

static const char *help_show =
    "usage: dpzo profile show FILE [--json]\n"
    "\n"
    "Validates the noise profile FILE: format and schema version, every field's\n"
    "presence, type and range, the consistency of its choices, and its SHA-256 checksum.\n"
    "Prints a summary: the noise and its parameters, the sensitivity and clipping, the\n"
    "accounting, epsilon with the kind of bound it is, the objective and provenance.\n"
    "Exit status 2 with one line naming the field when it does not validate.\n"
    "  --json   {\"file\", \"valid\": true, \"checksum\": \"ok\", \"profile\": the profile}\n";

static const char *help_verify =
    "usage: dpzo profile verify FILE [--json]\n"
    "\n"
    "Validates FILE, then recomputes its guarantee from its parameters with the\n"
    "accountant it names (gaussian: RDP, PLD or PRV on the sampled Gaussian composed over\n"
    "the steps; lmo: the LMO accountant with the profile's bound; also the per-step RDP\n"
    "curve and eps0 where recorded) and compares: the profile holds when every recomputed\n"
    "proven bound is at most the stored value (up to a relative 1e-9). A profile may\n"
    "claim more epsilon than needed, never less. Profiles of accountant \"paper\" never\n"
    "verify: their epsilon is the paper's claim, not a proven bound.\n"
    "Exit status: 0 the profile holds, 1 it does not (the reason is printed), 2 the file\n"
    "does not validate.\n"
    "  --json   file, ok, epsilon (stored), epsilon_recomputed, epsilon_lower (pld, prv),\n"
    "           order, eps0, eps0_recomputed, rdp_checked, rdp_worst_ratio, detail\n";

/* x as the profile file writes it: the shortest %.{p}g that reads back as x. */
static const char *exact(char *buf, size_t size, double x)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}
#define EXACT(buf, x) exact(buf, sizeof buf, x)

/* The one positional argument (FILE) of show/verify; the options go to args_parse. */
static int split_file(int argc, char **argv, const char **file, char **rest, int *nrest)
{
    *file = NULL;
    *nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rest[(*nrest)++] = argv[i];
        } else if (*file == NULL) {
            *file = argv[i];
        } else {
            return cli_usage_error("one profile file at a time (got '%s' and '%s')", *file,
                                   argv[i]);
        }
    }
    return 0;
}

/* The command line as recorded in the profile: "dpzo profile gaussian ...". */
static void command_line(int argc, char **argv, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "dpzo profile gaussian");
    for (int i = 0; i < argc && len < size; i++) {
        int quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t\"'\\$`*?;&|<>()") != NULL;
        int w = snprintf(buf + len, size - len, quote ? " '%s'" : " %s", argv[i]);
        if (w < 0 || (size_t)w >= size - len) { /* too long: end it visibly */
            if (size > 4)
                memcpy(buf + size - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

static int cmd_gaussian(int argc, char **argv)
{
    static const opt_spec specs[] = {
        {"epsilon", 1},     {"delta", 1},     {"steps", 1},       {"sampling-rate", 1},
        {"epochs", 1},
        {"batch-size", 1},  {"dataset-size", 1}, {"full-batch", 0}, {"accountant", 1},
        {"sensitivity", 1}, {"tolerance", 1}, {"created", 1},     {"o", 1},
        {"output", 1},      {"json", 0},      {"help", 0},        {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_gaussian, stdout);
        return 0;
    }
    static const char *required[] = {"epsilon", "delta"};
    for (size_t i = 0; i < 2; i++)
        if (!args_has(&a, required[i]))
            return cli_usage_error("--%s is required (see dpzo profile gaussian --help)",
                                   required[i]);
    int poisson = args_has(&a, "sampling-rate"), full = args_has(&a, "full-batch");
    int wor = args_has(&a, "batch-size") || args_has(&a, "dataset-size");
    if (poisson + wor + full != 1)
        return cli_usage_error("give exactly one of --sampling-rate Q (Poisson), --batch-size B "
                               "--dataset-size N (fixed batches) or --full-batch");
    if (wor && !(args_has(&a, "batch-size") && args_has(&a, "dataset-size")))
        return cli_usage_error("--batch-size and --dataset-size go together");
    if (full && args_has(&a, "epochs"))
        return cli_usage_error("--epochs with --full-batch: every step is an epoch; give --steps");
    if (args_has(&a, "o") && args_has(&a, "output"))
        return cli_usage_error("give -o or --output, not both");
    dpzo_profile_gaussian_spec s = {0};
    const char *v;
    if (parse_real("epsilon", args_get(&a, "epsilon"), &s.epsilon)
        || parse_real("delta", args_get(&a, "delta"), &s.delta)
        || (poisson && parse_real("sampling-rate", args_get(&a, "sampling-rate"), &s.sampling_rate))
        || (wor && (parse_count("batch-size", args_get(&a, "batch-size"), &s.batch_size)
                    || parse_count("dataset-size", args_get(&a, "dataset-size"),
                                   &s.dataset_size)))
        || ((v = args_get(&a, "sensitivity")) != NULL && parse_real("sensitivity", v, &s.sensitivity))
        || ((v = args_get(&a, "tolerance")) != NULL && parse_real("tolerance", v, &s.tolerance)))
        return 2;
    char note[160];
    if (!args_has(&a, "steps") && !args_has(&a, "epochs")) /* --epochs with --full-batch: above */
        return cli_usage_error("--steps (or --epochs) is required (see dpzo profile gaussian "
                               "--help)");
    /* the sampling's range is checked below; training_steps needs only q > 0 or B >= 1 */
    if (training_steps(&a, s.sampling_rate, s.batch_size, s.dataset_size, &s.steps, note,
                       sizeof note))
        return 2;
    if (!(s.epsilon > 0.0))
        return cli_usage_error("--epsilon must be > 0, got %s", args_get(&a, "epsilon"));
    if (!(s.delta > 0.0 && s.delta < 1.0))
        return cli_usage_error("--delta must be in (0, 1), got %s", args_get(&a, "delta"));
    if (s.steps < 1)
        return cli_usage_error("--steps must be >= 1");
    if (poisson && !(s.sampling_rate > 0.0 && s.sampling_rate <= 1.0))
        return cli_usage_error("--sampling-rate must be in (0, 1], got %s",
                               args_get(&a, "sampling-rate"));
    if (wor && !(s.batch_size >= 1 && s.batch_size <= s.dataset_size))
        return cli_usage_error("--batch-size must be in [1, --dataset-size], got %s and %s",
                               args_get(&a, "batch-size"), args_get(&a, "dataset-size"));
    if (args_has(&a, "sensitivity") && !(s.sensitivity > 0.0))
        return cli_usage_error("--sensitivity must be > 0, got %s", args_get(&a, "sensitivity"));
    if (args_has(&a, "tolerance") && !(s.tolerance >= 1e-12 && s.tolerance < 0.5))
        return cli_usage_error("--tolerance must be in [1e-12, 0.5), got %s",
                               args_get(&a, "tolerance"));
    s.accountant = args_get(&a, "accountant");
    if (s.accountant != NULL && strcmp(s.accountant, "rdp") && strcmp(s.accountant, "pld")
        && strcmp(s.accountant, "prv"))
        return cli_usage_error("--accountant must be rdp, pld or prv, got '%s'", s.accountant);
    s.sampling = poisson ? "poisson" : wor ? "wor" : "none";
    s.created = args_get(&a, "created");
    char command[512];
    command_line(argc, argv, command, sizeof command);
    s.command = command;
    const char *out = args_get(&a, "o") ? args_get(&a, "o") : args_get(&a, "output");
    int crc = out != NULL ? cli_check_output(out, "profile", DPZO_IO_DIRECT) : 0;
    if (crc)
        return crc;

    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 1;
    dpzo_profile p;
    dpzo_status st = dpzo_profile_gaussian(ctx, &s, &p);
    int rc = 0;
    if (st != DPZO_OK) {
        rc = report_failure(ctx, st);
    } else if (out == NULL) {
        char *json;
        st = dpzo_profile_to_json(ctx, &p, &json);
        if (st != DPZO_OK)
            rc = report_failure(ctx, st);
        else
            puts(json);
        free(json);
    } else if ((st = dpzo_profile_write_file(ctx, &p, out)) != DPZO_OK) {
        /* the file could not be written after all (a disk that filled since the check):
         * an unwritable output, exit 2 as when the check refuses it (lmo search -o too) */
        rc = report_failure(ctx, st);
    } else if (args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", out);
        json_number(o, "noise_multiplier", p.noise_multiplier);
        json_number(o, "epsilon", p.epsilon);
        json_number(o, "delta", p.delta);
        cJSON_AddStringToObject(o, "accountant", p.accountant);
        cJSON_AddStringToObject(o, "sha256", p.sha256);
        json_print(o);
    } else {
        char b1[64], b2[64];
        printf("dpzo profile gaussian: wrote %s\n", out);
        printf("  %-18s %s   (noise N(0, (s C)^2), C = %.10g)\n", "noise multiplier s",
               FMT_UP(b1, p.noise_multiplier, 10), p.sensitivity);
        printf("  %-18s %s   at delta %g (proven upper bound, %s accountant)\n", "epsilon",
               FMT_UP(b2, p.epsilon, 10), p.delta, p.accountant);
        printf("  %-18s %s\n", "sha256", p.sha256);
    }
    dpzo_profile_free(&p);
    dpzo_ctx_free(ctx);
    return rc;
}

/* Reads FILE for show/verify: 0, or the exit status after printing the error. */
static int open_profile(int argc, char **argv, const char *help, const char **file,
                        parsed_args *a, dpzo_ctx **ctx, dpzo_profile *p)
{
    static const opt_spec specs[] = {{"json", 0}, {"help", 0}, {NULL, 0}};
    char *rest[ARGS_MAX + 1];
    int nrest;
    if (argc > ARGS_MAX)
        return cli_usage_error("too many arguments");
    if (split_file(argc, argv, file, rest, &nrest) || args_parse(nrest, rest, specs, a))
        return 2;
    if (args_has(a, "help")) {
        fputs(help, stdout);
        return -1;
    }
    if (*file == NULL)
        return cli_usage_error("give the profile file (see --help)");
    *ctx = dpzo_ctx_new();
    if (*ctx == NULL)
        return 1;
    dpzo_status st = dpzo_profile_read_file(*ctx, *file, p);
    if (st != DPZO_OK) {
        int rc = report_failure(*ctx, st);
        dpzo_ctx_free(*ctx);
        return rc;
    }
    return 0;
}

static const char *sampling_text(const dpzo_profile *p, char *buf, size_t size)
{
    if (strcmp(p->sampling, "poisson") == 0)
        snprintf(buf, size, "Poisson, rate %.10g, %s adjacency", p->sampling_rate, p->adjacency);
    else if (strcmp(p->sampling, "wor") == 0)
        snprintf(buf, size, "fixed batches of %llu of %llu without replacement, %s adjacency",
                 (unsigned long long)p->batch_size, (unsigned long long)p->dataset_size,
                 p->adjacency);
    else
        snprintf(buf, size, "none (every step uses the whole dataset), %s adjacency",
                 p->adjacency);
    return buf;
}

static void print_noise(const dpzo_profile *p)
{
    if (p->kind == DPZO_NOISE_GAUSSIAN) {
        char b[40];
        printf("  %-16s gaussian, noise multiplier s = %s: N(0, (s C)^2) per coordinate\n",
               "noise", EXACT(b, p->noise_multiplier));
        return;
    }
    const dpzo_lmo *l = &p->lmo;
    char y[400];
    size_t len = 0;
    y[0] = '\0';
    if (l->gamma_weight > 0.0)
        len += (size_t)snprintf(y + len, sizeof y - len, "%.10g Gamma(shape %.10g, scale %.10g)",
                                l->gamma_weight, l->gamma_shape, l->gamma_scale);
    if (l->exp_weight > 0.0 && len < sizeof y)
        len += (size_t)snprintf(y + len, sizeof y - len, "%s%.10g Exp(rate %.10g)",
                                len ? " + " : "", l->exp_weight, l->exp_rate);
    if (l->uniform_weight > 0.0 && len < sizeof y)
        snprintf(y + len, sizeof y - len, "%s%.10g Uniform(%.10g, %.10g)", len ? " + " : "",
                 l->uniform_weight, l->uniform_low, l->uniform_high);
    printf("  %-16s lmo: X | Y ~ Laplace(0, C/Y), Y = %s\n", "noise", y);
}

static void print_summary(const char *file, const dpzo_profile *p)
{
    char b[256], e[40];
    printf("profile %s: valid, checksum OK (`dpzo profile verify` rechecks epsilon)\n", file);
    printf("  %-16s %s, schema version %d\n", "format", DPZO_PROFILE_FORMAT,
           DPZO_PROFILE_SCHEMA_VERSION);
    print_noise(p);
    printf("  %-16s C = %s, %s clipping, %u quer%s per step\n", "sensitivity", EXACT(e, p->sensitivity),
           p->clip, p->queries_per_step, p->queries_per_step == 1 ? "y" : "ies");
    printf("  %-16s %s\n", "sampling", sampling_text(p, b, sizeof b));
    printf("  %-16s %llu\n", "steps", (unsigned long long)p->steps);
    printf("  %-16s %s\n", "delta", EXACT(e, p->delta));
    char acc[128] = "";
    if (p->kind == DPZO_NOISE_LMO && p->bound[0])
        snprintf(acc, sizeof acc, ", bound %s", p->bound);
    if (!isnan(p->order))
        snprintf(acc + strlen(acc), sizeof acc - strlen(acc), ", order %.10g", p->order);
    printf("  %-16s %s   (%s; %s accountant%s)\n", "epsilon", EXACT(e, p->epsilon),
           p->epsilon_bound, p->accountant, acc);
    if (!isnan(p->eps0))
        printf("  %-16s %s   (per-step pure DP of the unsampled mechanism)\n", "eps0",
               EXACT(e, p->eps0));
    if (p->n_orders > 0)
        printf("  %-16s %zu orders from %.10g to %.10g\n", "per-step RDP", p->n_orders,
               p->orders[0], p->orders[p->n_orders - 1]);
    else
        printf("  %-16s not recorded\n", "per-step RDP");
    if (p->has_objective) {
        printf("  %-16s %s = %.10g\n", "objective", p->objective, p->objective_value);
        if (!isnan(p->usefulness))
            printf("  %-16s P(|X| <= %.10g) = %.10g\n", "usefulness", p->usefulness_gamma,
                   p->usefulness);
        if (!isnan(p->mean_abs))
            printf("  %-16s E|X| = %.10g\n", "mean abs", p->mean_abs);
        if (!isnan(p->variance))
            printf("  %-16s Var X = %.10g\n", "variance", p->variance);
        if (p->grid[0] || p->grid_index >= 0)
            printf("  %-16s %s, index %ld\n", "grid", p->grid[0] ? p->grid : "(unnamed)",
                   p->grid_index);
    } else {
        printf("  %-16s none\n", "objective");
    }
    printf("  %-16s dpzo %s, %s\n", "created", p->version, p->created);
    printf("  %-16s %s\n", "command", p->command);
    printf("  %-16s %s\n", "sha256", p->sha256);
}

static int cmd_show(int argc, char **argv)
{
    const char *file;
    parsed_args a;
    dpzo_ctx *ctx = NULL;
    dpzo_profile p;
    int rc = open_profile(argc, argv, help_show, &file, &a, &ctx, &p);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (args_has(&a, "json")) {
        char *json = NULL;
        dpzo_status st = dpzo_profile_to_json(ctx, &p, &json);
        cJSON *prof = st == DPZO_OK ? cJSON_Parse(json) : NULL;
        free(json);
        if (prof == NULL) {
            rc = st ? report_failure(ctx, st) : 1;
        } else {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "file", file);
            cJSON_AddBoolToObject(o, "valid", 1);
            cJSON_AddStringToObject(o, "checksum", "ok");
            cJSON_AddItemToObject(o, "profile", prof);
            json_print(o);
        }
    } else {
        print_summary(file, &p);
    }
    dpzo_profile_free(&p);
    dpzo_ctx_free(ctx);
    return rc;
}

/* The result line of verify. The library's detail repeats the guarantees with %.10g,
 * rounded to nearest (2.9955629733783957 read "2.995562973", below the proven value);
 * the lines above already print each one once, rounded up, so the verdict names them
 * instead of printing them again. Failures that are not about a printed guarantee (the
 * per-step curve, a paper profile) keep the library's words. */
static const char *verdict_text(const dpzo_profile *p, const dpzo_profile_check *c, char *buf,
                                size_t size)
{
    const char *rest = strstr(c->detail, "; ");
    char x[64];
    if (c->ok)
        snprintf(buf, size, "OK: recomputed epsilon (the proven upper bound above) <= stored epsilon%s",
                 rest != NULL ? rest : "");
    else if (strncmp(c->detail, "stored epsilon ", 15) == 0)
        snprintf(buf, size, "FAILED: stored epsilon %s is below the proven bound recomputed "
                            "above: the profile claims less privacy loss than its noise gives",
                 EXACT(x, p->epsilon));
    else if (strncmp(c->detail, "stored eps0 ", 12) == 0)
        snprintf(buf, size, "FAILED: stored eps0 %s is below the proven per-step pure-DP "
                            "bound recomputed above", EXACT(x, p->eps0));
    else
        snprintf(buf, size, "FAILED: %s", c->detail);
    return buf;
}

static int cmd_verify(int argc, char **argv)
{
    const char *file;
    parsed_args a;
    dpzo_ctx *ctx = NULL;
    dpzo_profile p;
    int rc = open_profile(argc, argv, help_verify, &file, &a, &ctx, &p);
    if (rc)
        return rc < 0 ? 0 : rc;
    dpzo_profile_check c;
    dpzo_status st = dpzo_profile_verify(ctx, &p, &c);
    if (st != DPZO_OK) {
        fprintf(stderr, "dpzo: error: cannot recompute the guarantee: %s\n",
                dpzo_ctx_errmsg(ctx));
        rc = 1;
    } else if (args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", file);
        cJSON_AddBoolToObject(o, "ok", c.ok);
        cJSON_AddStringToObject(o, "accountant", p.accountant);
        json_number(o, "epsilon", p.epsilon);
        if (isnan(c.epsilon_recomputed))
            cJSON_AddNullToObject(o, "epsilon_recomputed");
        else
            json_number(o, "epsilon_recomputed", c.epsilon_recomputed);
        if (!isnan(c.epsilon_lower))
            json_number(o, "epsilon_lower", c.epsilon_lower);
        if (!isnan(c.order))
            json_number(o, "order", c.order);
        if (!isnan(p.eps0)) {
            json_number(o, "eps0", p.eps0);
            json_number(o, "eps0_recomputed", c.eps0_recomputed);
        }
        json_number(o, "rdp_checked", (double)c.rdp_checked);
        if (c.rdp_checked > 0)
            json_number(o, "rdp_worst_ratio", c.rdp_worst_ratio);
        cJSON_AddStringToObject(o, "detail", c.detail);
        json_print(o);
    } else {
        char b1[256], b2[64];
        printf("dpzo profile verify: %s\n", file);
        print_noise(&p);
        printf("  %-16s %s\n", "sampling", sampling_text(&p, b1, sizeof b1));
        printf("  %-16s %llu steps, delta %.10g, %s accountant\n", "accounting",
               (unsigned long long)p.steps, p.delta, p.accountant);
        printf("  %-16s %s\n", "stored epsilon", EXACT(b2, p.epsilon));
        if (!isnan(c.epsilon_recomputed))
            printf("  %-16s %s   (proven upper bound)\n", "recomputed",
                   FMT_UP(b2, c.epsilon_recomputed, 10));
        if (!isnan(c.epsilon_lower))
            printf("  %-16s %s   (proven lower bound)\n", "recomputed lower",
                   FMT_DOWN(b2, c.epsilon_lower, 10));
        if (!isnan(c.eps0_recomputed))
            printf("  %-16s %s stored, %s recomputed (proven upper bound)\n", "eps0",
                   EXACT(b1, p.eps0), FMT_UP(b2, c.eps0_recomputed, 10));
        if (c.rdp_checked > 0)
            printf("  %-16s %zu orders recomputed, largest recomputed/stored %.10g\n",
                   "per-step RDP", c.rdp_checked, c.rdp_worst_ratio);
        char vb[400];
        printf("  %-16s %s\n", "result", verdict_text(&p, &c, vb, sizeof vb));
    }
    if (rc == 0 && !c.ok) {
        /* the answer is "no": exit 1, and a line on stderr as for every exit but 0, after
         * the result (stdout flushed first, so that a pipe with both reads in order) */
        fflush(stdout);
        fprintf(stderr, "dpzo: profile %s does not hold (%s says why)\n", file,
                args_has(&a, "json") ? "\"detail\"" : "the result line");
        rc = 1;
    }
    dpzo_profile_free(&p);
    dpzo_ctx_free(ctx);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage_error("dpzo profile needs a subcommand: gaussian, show or verify "
                               "(see dpzo profile --help)");
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0
        || strcmp(argv[0], "help") == 0) {
        fputs(help_profile, stdout);
        return 0;
    }
    if (strcmp(argv[0], "gaussian") == 0)
        return cmd_gaussian(argc - 1, argv + 1);
    if (strcmp(argv[0], "show") == 0)
        return cmd_show(argc - 1, argv + 1);
    if (strcmp(argv[0], "verify") == 0)
        return cmd_verify(argc - 1, argv + 1);
    static const char *const names[] = {"gaussian", "show", "verify", NULL};
    return cli_unknown_word("profile subcommand", argv[0], names,
                            "expected gaussian, show or verify");
}
