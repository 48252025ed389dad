/* SPDX-License-Identifier: Apache-2.0 */
/* cli/account.c: the epsilon, delta and rdp commands and what they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "account.h"
#include "commands.h"
#include "output.h"
#include "progress.h"

int report_failure(dpzo_ctx *ctx, dpzo_status st)
{
    fprintf(stderr, "dpzo: error: %s\n", dpzo_ctx_errmsg(ctx));
    return st == DPZO_EINVAL || st == DPZO_EPARSE ? 2 : 1;
}

int order_choice_parse(const parsed_args *a, order_choice *oc)
{
    memset(oc, 0, sizeof *oc);
    oc->opts = dpzo_rdp_options_default();
    oc->orders_name = "continuous";
    const char *o = args_get(a, "orders"), *c = args_get(a, "conversion");
    const char *m = args_get(a, "alpha-max");
    if (c != NULL) {
        if (strcmp(c, "improved") == 0)
            oc->opts.conversion = DPZO_CONVERSION_IMPROVED;
        else if (strcmp(c, "standard") == 0)
            oc->opts.conversion = DPZO_CONVERSION_STANDARD;
        else
            return cli_usage_error("--conversion must be 'improved' or 'standard', got '%s'", c);
    }
    if (m != NULL) {
        if (parse_real("alpha-max", m, &oc->opts.alpha_max))
            return 2;
        if (!(oc->opts.alpha_max > 1.01 && oc->opts.alpha_max <= DPZO_MAX_ORDER))
            return cli_usage_error("--alpha-max must be in (1.01, 1e6], got %s", m);
    }
    if (o == NULL)
        return 0;
    if (dpzo_order_grid_parse(NULL, o, &oc->opts.grid) == DPZO_OK) {
        oc->orders_name = oc->opts.grid == DPZO_ORDERS_CONTINUOUS ? "continuous" : o;
        return 0;
    }
    if (strpbrk(o, "0123456789") == NULL)
        return cli_usage_error("unknown order grid '%s' (expected default, opacus, tf, "
                               "dp_accounting or a comma-separated list of orders)", o);
    int rc = parse_order_list("orders", o, &oc->custom_orders, &oc->opts.n_orders);
    if (rc) /* 2, or 1 when out of memory */
        return rc;
    oc->opts.grid = DPZO_ORDERS_CUSTOM;
    oc->opts.orders = oc->custom_orders;
    oc->orders_name = "list";
    return 0;
}

void order_choice_free(order_choice *oc) { free(oc->custom_orders); }

int accountant_choice_parse(const parsed_args *a, const order_choice *oc, accountant_choice *ac)
{
    memset(ac, 0, sizeof *ac);
    dpzo_pld_options_default(&ac->opts);
    ac->opts.rdp = &oc->opts;
    ac->name = "rdp";
    const char *n = args_get(a, "accountant");
    if (n != NULL) {
        if (strcmp(n, "pld") == 0) {
            ac->tight = 1;
            ac->opts.method = DPZO_PLD_CONNECT_DOTS;
        } else if (strcmp(n, "prv") == 0) {
            ac->tight = 1;
            ac->opts.method = DPZO_PLD_PRV;
        } else if (strcmp(n, "rdp") != 0) {
            return cli_usage_error("--accountant must be rdp, pld or prv, got '%s'", n);
        }
        ac->name = ac->tight ? (ac->opts.method == DPZO_PLD_PRV ? "prv" : "pld") : "rdp";
    }
    static const char *tight_only[] = {"grid", "eps-error", "delta-error", "memory-limit"};
    for (size_t i = 0; i < sizeof tight_only / sizeof *tight_only; i++)
        if (!ac->tight && args_has(a, tight_only[i]))
            return cli_usage_error("--%s needs --accountant pld or prv", tight_only[i]);
    const char *v;
    if ((v = args_get(a, "grid")) != NULL) {
        if (ac->opts.method == DPZO_PLD_PRV)
            return cli_usage_error("--grid is for --accountant pld (prv derives its mesh "
                                   "from --eps-error)");
        if (parse_real("grid", v, &ac->opts.grid))
            return 2;
        if (!(ac->opts.grid > 0.0 && ac->opts.grid <= 1.0))
            return cli_usage_error("--grid must be in (0, 1], got %s", v);
        ac->opts.ladder = 1; /* no finer grid gives a looser end (docs/accountant.md 6.5) */
    }
    if ((v = args_get(a, "eps-error")) != NULL) {
        if (parse_real("eps-error", v, &ac->opts.eps_error))
            return 2;
        if (!(ac->opts.eps_error > 0.0))
            return cli_usage_error("--eps-error must be > 0, got %s", v);
    }
    if ((v = args_get(a, "delta-error")) != NULL) {
        if (ac->opts.method != DPZO_PLD_PRV)
            return cli_usage_error("--delta-error is for --accountant prv");
        if (parse_real("delta-error", v, &ac->opts.delta_error))
            return 2;
        if (!(ac->opts.delta_error > 0.0 && ac->opts.delta_error < 1.0))
            return cli_usage_error("--delta-error must be in (0, 1), got %s", v);
    }
    if ((v = args_get(a, "memory-limit")) != NULL) {
        double mib;
        if (parse_real("memory-limit", v, &mib))
            return 2;
        if (!(mib >= 1.0 && mib <= 1048576.0))
            return cli_usage_error("--memory-limit must be in [1, 1048576] MiB, got %s", v);
        /* a fraction of a MiB is kept (1.5 is 1572864 bytes), down to the byte: the limit
         * is never above what was asked, and messages print it as given (issue 28, item 11:
         * 1.5 was reported as "2 MiB") */
        ac->opts.memory_limit = (size_t)floor(mib * 1048576.0);
    }
    return 0;
}

void tight_print_text(const accountant_choice *ac, const dpzo_pld_result *r, int want_delta)
{
    char b1[64], b2[64], b3[64];
    const char *what = want_delta ? "delta" : "epsilon";
    double lo = want_delta ? r->delta_lower : r->epsilon_lower;
    double est = want_delta ? r->delta_estimate : r->epsilon_estimate;
    double hi = want_delta ? r->delta_upper : r->epsilon_upper;
    if (r->fallback) {
        printf("  %-16s %s   (proven upper bound%s)\n", what, FMT_UP(b1, hi, 10),
               hi == r->rdp_epsilon ? ", from the RDP accountant" : "");
        printf("  %-16s %s   (proven lower bound)\n", want_delta ? "delta lower" : "epsilon lower",
               FMT_DOWN(b2, lo, 10));
        /* the RDP accountant's certified upper bound: rounded up like every printed bound */
        printf("  %-16s %s; RDP gives %s\n", "fallback", r->reason,
               isnan(r->rdp_epsilon) ? "nan" : FMT_UP(b3, r->rdp_epsilon, 10));
        return;
    }
    printf("  %-16s %s   (proven upper bound)\n", what, FMT_UP(b1, hi, 10));
    printf("  %-16s %s   (proven lower bound)\n", want_delta ? "delta lower" : "epsilon lower",
           FMT_DOWN(b2, lo, 10));
    printf("  %-16s %.10g\n", want_delta ? "delta estimate" : "epsilon estimate", est);
    if (r->reason[0] != '\0') /* answered, with a note (the sampling bound) */
        printf("  %-16s %s\n", "note", r->reason);
    if (r->fft_size == 0 && r->reason[0] != '\0')
        return; /* nothing was discretised or composed */
    if (ac->opts.method == DPZO_PLD_PRV) {
        double want = ac->opts.eps_error > 0.0 ? ac->opts.eps_error : 0.01; /* the default */
        printf("  %-16s mesh %.4g, epsilon error %.3g, delta error %.3g\n", "discretisation",
               r->grid, r->eps_error, r->delta_error);
        if (r->eps_error > 1.01 * want)
            printf("  %-16s epsilon error above the requested %g: the mesh is the finest that "
                   "fits the memory limit, the steps' rounding guards add to it, or delta is "
                   "below 1e-10 (the mesh, the same at every delta, is solved there; "
                   "docs/accountant.md 6.1)\n", "note", want);
    }
    else
        printf("  %-16s grid %.4g\n", "discretisation", r->grid);
    printf("  %-16s %.1f MiB (FFT length %zu)\n", "memory", (double)r->memory_bytes / 1048576.0,
           r->fft_size);
}

void tight_add_json(cJSON *o, const accountant_choice *ac, const dpzo_pld_result *r)
{
    json_number(o, "epsilon_lower", r->epsilon_lower);
    json_number(o, "epsilon_estimate", r->epsilon_estimate);
    json_number(o, "epsilon_upper", r->epsilon_upper);
    json_number(o, "delta_lower", r->delta_lower);
    json_number(o, "delta_estimate", r->delta_estimate);
    json_number(o, "delta_upper", r->delta_upper);
    cJSON_AddBoolToObject(o, "fallback", r->fallback);
    if (r->fallback) {
        cJSON_AddStringToObject(o, "fallback_reason", r->reason);
        json_number(o, "rdp_bound", r->rdp_epsilon);
    } else if (r->reason[0] != '\0') {
        cJSON_AddStringToObject(o, "note", r->reason);
    }
    json_number(o, ac->opts.method == DPZO_PLD_PRV ? "mesh" : "grid", r->grid);
    if (ac->opts.method == DPZO_PLD_PRV) {
        json_number(o, "eps_error", r->eps_error);
        json_number(o, "delta_error", r->delta_error);
    }
    json_number(o, "fft_size", (double)r->fft_size);
    json_number(o, "memory_bytes", (double)r->memory_bytes);
}

int training_sampling(const parsed_args *a, double *q, uint64_t *batch, uint64_t *size)
{
    const char *qs = args_get(a, "sampling-rate"), *b = args_get(a, "batch-size"),
               *ds = args_get(a, "dataset-size");
    *q = 0.0;
    *batch = *size = 0;
    if ((b != NULL) != (ds != NULL))
        return cli_usage_error("--batch-size and --dataset-size go together");
    if (b != NULL && qs != NULL)
        return cli_usage_error("give --sampling-rate (Poisson) or --batch-size/--dataset-size "
                               "(fixed batches), not both");
    if (b != NULL) {
        if (parse_count("batch-size", b, batch) || parse_count("dataset-size", ds, size))
            return 2;
        if (*size == 0 || *batch > *size)
            return cli_usage_error("--batch-size must be at most --dataset-size (> 0), got %s "
                                   "and %s", b, ds);
        *q = (double)*batch / (double)*size;
        return 0;
    }
    if (qs != NULL) {
        if (parse_real("sampling-rate", qs, q))
            return 2;
        if (!(*q >= 0.0 && *q <= 1.0))
            return cli_usage_error("--sampling-rate must be in [0, 1], got %s", qs);
    }
    return 0;
}

int training_steps(const parsed_args *a, double q, uint64_t batch, uint64_t size,
                   uint64_t *steps, char *note, size_t note_size)
{
    const char *t = args_get(a, "steps"), *e = args_get(a, "epochs");
    if (note_size > 0)
        note[0] = '\0';
    if (t != NULL && e != NULL)
        return cli_usage_error("give --steps or --epochs, not both (--epochs E means "
                               "ceil(E N / B) steps, or ceil(E / Q) with --sampling-rate)");
    if (t != NULL)
        return parse_count("steps", t, steps);
    if (e == NULL)
        return cli_usage_error("give --steps T or --epochs E");
    double ep;
    if (parse_real("epochs", e, &ep))
        return 2;
    if (!(ep >= 0.0))
        return cli_usage_error("--epochs must be >= 0, got %s", e);
    if (size > 0 && batch == 0)
        return cli_usage_error("--epochs needs --batch-size >= 1 (an epoch is N / B steps)");
    if (size == 0 && !(q > 0.0))
        return cli_usage_error("--epochs needs a sampling rate > 0 (an epoch is 1 / Q steps)");
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return cli_out_of_memory();
    dpzo_status st = dpzo_steps_from_epochs(ctx, ep, q, batch, size, steps);
    if (st != DPZO_OK) {
        int rc = cli_usage_error("--epochs %s: %s", e, dpzo_ctx_errmsg(ctx));
        dpzo_ctx_free(ctx);
        return rc;
    }
    dpzo_ctx_free(ctx);
    if (size > 0) {
        snprintf(note, note_size, " (%s epochs of %llu / %llu, rounded up)", e,
                 (unsigned long long)size, (unsigned long long)batch);
        return 0;
    }
    snprintf(note, note_size, " (%s epochs of 1 / %.10g, rounded up)", e, q);
    return 0;
}

int training_event(dpzo_ctx *ctx, const parsed_args *a, dpzo_event **event, char *desc,
                   size_t desc_size)
{
    const char *sched = args_get(a, "schedule"), *evf = args_get(a, "event");
    int has_single = args_has(a, "noise-multiplier") || args_has(a, "sampling-rate")
                     || args_has(a, "steps") || args_has(a, "epochs")
                     || args_has(a, "batch-size") || args_has(a, "dataset-size");
    dpzo_phase *phases = NULL, one;
    size_t n = 1;
    if (evf != NULL) {
        if (has_single || sched != NULL)
            return cli_usage_error("--event FILE describes the whole release: it replaces "
                                   "--noise-multiplier, --sampling-rate (or --batch-size/"
                                   "--dataset-size), --steps (or --epochs) and --schedule");
        dpzo_status st = dpzo_event_read_json_file(ctx, evf, event);
        if (st)
            return report_failure(ctx, st);
        char d[200];
        dpzo_event_describe(*event, d, sizeof d);
        size_t dl = strlen(d);
        snprintf(desc, desc_size, "event %s: %s%s", evf, d, dl + 1 >= sizeof d ? "..." : "");
        return 0;
    }
    if (sched != NULL) {
        if (has_single)
            return cli_usage_error("--schedule replaces --noise-multiplier, --sampling-rate "
                                   "(or --batch-size/--dataset-size) and --steps (or "
                                   "--epochs); give one or the other");
        int rc = schedule_read(sched, &phases, &n);
        if (rc) /* 2, or 1 when out of memory */
            return rc;
        snprintf(desc, desc_size, "schedule %s (%zu phases)", sched, n);
        *event = dpzo_event_from_schedule(ctx, phases, n);
        free(phases);
        return *event == NULL ? report_failure(ctx, DPZO_EINVAL) : 0;
    }
    const char *s = args_get(a, "noise-multiplier");
    uint64_t batch, size;
    char note[160];
    if (training_sampling(a, &one.sampling_rate, &batch, &size))
        return 2;
    if (s == NULL || !(args_has(a, "steps") || args_has(a, "epochs"))
        || !(args_has(a, "sampling-rate") || size > 0))
        return cli_usage_error("give --noise-multiplier, --sampling-rate and --steps (or "
                               "--epochs; or --batch-size and --dataset-size for fixed "
                               "batches; or --schedule FILE)");
    if (parse_real("noise-multiplier", s, &one.noise_multiplier))
        return 2;
    if (!(one.noise_multiplier >= 0.0))
        return cli_usage_error("--noise-multiplier must be >= 0, got %s", s);
    if (training_steps(a, one.sampling_rate, batch, size, &one.steps, note, sizeof note))
        return 2;
    if (size > 0) {
        snprintf(desc, desc_size,
                 "%llu steps%s, batches of %llu of %llu without replacement, sigma=%.6g",
                 (unsigned long long)one.steps, note, (unsigned long long)batch,
                 (unsigned long long)size, one.noise_multiplier);
        *event = dpzo_event_self_composed(
            ctx, dpzo_event_wor_sampled(ctx, batch, size,
                                        dpzo_event_gaussian(ctx, one.noise_multiplier)),
            one.steps);
        return *event == NULL ? report_failure(ctx, DPZO_EINVAL) : 0;
    }
    snprintf(desc, desc_size, "%llu steps%s, Poisson q=%.6g, sigma=%.6g",
             (unsigned long long)one.steps, note, one.sampling_rate, one.noise_multiplier);
    *event = dpzo_event_from_schedule(ctx, &one, 1);
    return *event == NULL ? report_failure(ctx, DPZO_EINVAL) : 0;
}

static const char *conversion_name(dpzo_conversion c)
{
    return c == DPZO_CONVERSION_STANDARD ? "standard" : "improved";
}

static const char *help_epsilon =
    "usage: dpzo epsilon --noise-multiplier S --sampling-rate Q --steps T --delta D\n"
    "       dpzo epsilon --noise-multiplier S --batch-size B --dataset-size N --steps T ...\n"
    "                    [--epochs E instead of --steps T]\n"
    "                    [--orders default|opacus|tf|dp_accounting|A1,A2,...]\n"
    "                    [--conversion improved|standard] [--alpha-max X]\n"
    "                    [--accountant rdp|pld|prv] [--grid D] [--eps-error E]\n"
    "                    [--delta-error D] [--memory-limit MIB]\n"
    "                    [--schedule FILE] [--json]\n"
    "       dpzo epsilon --event FILE --delta D [--accountant rdp|pld|prv] ...\n"
    "\n"
    "epsilon(delta) of T steps of the Poisson-sampled Gaussian mechanism (DP-SGD, DP-ZO)\n"
    "with noise multiplier S and sampling rate Q, or of any event (--event), by the RDP\n"
    "accountant (default) or a tight one (PLD, PRV) that brackets the true epsilon.\n"
    FIXED_BATCH_HELP
    "  --schedule FILE   heterogeneous training: a JSON array of\n"
    "                    {\"noise_multiplier\": S, \"sampling_rate\": Q, \"steps\": T}\n"
    EVENT_HELP
    "  --orders          default: alpha optimised continuously in (1, alpha-max];\n"
    "                    a named grid reproduces that library's orders exactly\n"
    "  --conversion      improved (Balle et al. 2020, default) or standard (Mironov 2017)\n"
    "  --alpha-max       upper end of the continuous search (default 1e5)\n"
    TIGHT_HELP
    "  --json            machine-readable output: epsilon (certified upper bound),\n"
    "                    epsilon_estimate, delta, order, rdp, conversion, orders; with pld\n"
    "                    or prv: epsilon_lower, epsilon_upper, epsilon_estimate, grid,\n"
    "                    fft_size, memory_bytes, fallback\n";

static const char *help_delta =
    "usage: dpzo delta --noise-multiplier S --sampling-rate Q --steps T --epsilon E\n"
    "       dpzo delta --noise-multiplier S --batch-size B --dataset-size N --steps T ...\n"
    "                  [--epochs E instead of --steps T]\n"
    "                  [--orders ...] [--conversion improved|standard] [--alpha-max X]\n"
    "                  [--accountant rdp|pld|prv] [--grid D] [--eps-error E] ...\n"
    "                  [--schedule FILE] [--json]\n"
    "       dpzo delta --event FILE --epsilon E [--accountant rdp|pld|prv] ...\n"
    "\n"
    "delta(epsilon) of the same training; options as for `dpzo epsilon`. JSON keys:\n"
    "delta (certified upper bound), delta_estimate, epsilon, order, rdp; with pld or prv:\n"
    "delta_lower, delta_upper, delta_estimate, grid, fft_size, memory_bytes, fallback.\n"
    FIXED_BATCH_HELP EVENT_HELP;

static int account(int argc, char **argv, int want_delta)
{
    static const opt_spec specs[] = {TRAINING_OPTS, ORDER_OPTS, TIGHT_OPTS, {"delta", 1},
                                     {"epsilon", 1}, {"json", 0}, {"help", 0},  {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(want_delta ? help_delta : help_epsilon, stdout);
        return 0;
    }
    const char *tname = want_delta ? "epsilon" : "delta";
    const char *other = want_delta ? "delta" : "epsilon";
    const char *tv = args_get(&a, tname);
    double target;
    if (tv == NULL)
        return cli_usage_error("--%s is required", tname);
    if (args_has(&a, other))
        return cli_usage_error("--%s is not an input of `dpzo %s`", other, other);
    if (parse_real(tname, tv, &target))
        return 2;
    if (want_delta && !(target >= 0.0))
        return cli_usage_error("--epsilon must be >= 0, got %s", tv);
    if (!want_delta && !(target > 0.0 && target < 1.0))
        return cli_usage_error("--delta must be in (0, 1), got %s", tv);
    order_choice oc;
    int prc = order_choice_parse(&a, &oc);
    if (prc)
        return prc;
    accountant_choice ac;
    if ((prc = accountant_choice_parse(&a, &oc, &ac))) {
        order_choice_free(&oc);
        return prc;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_event *e = NULL;
    char desc[256];
    int rc = ctx == NULL ? 1 : training_event(ctx, &a, &e, desc, sizeof desc);
    dpzo_dp_result r;
    if (rc == 0 && ac.tight) {
        dpzo_pld_result t;
        cli_progress pg; /* a terminal sees the elapsed time of a long composition */
        progress_begin(&pg, want_delta ? "dpzo delta" : "dpzo epsilon", args_has(&a, "json"));
        progress_step(&pg, 0, 0, ac.opts.method == DPZO_PLD_PRV ? "PRV accountant"
                                                                : "PLD accountant");
        dpzo_status st = want_delta ? dpzo_pld_delta(ctx, e, target, &ac.opts, &t)
                                    : dpzo_pld_epsilon(ctx, e, target, &ac.opts, &t);
        progress_end(&pg);
        if (st) {
            rc = report_failure(ctx, st);
        } else if (args_has(&a, "json")) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "accountant", ac.name);
            json_number(o, "epsilon", t.epsilon);
            json_number(o, "delta", t.delta);
            tight_add_json(o, &ac, &t);
            json_print(o);
        } else {
            printf("dpzo %s: %s accountant%s\n", want_delta ? "delta" : "epsilon",
                   ac.opts.method == DPZO_PLD_PRV ? "PRV (Gopi-Lee-Wutschitz)"
                                                  : "PLD (connect-the-dots and merged bounds)",
                   ", add and remove adjacency");
            printf("  %-16s %s\n", "training", desc);
            if (want_delta)
                printf("  %-16s %.10g\n", "epsilon", target);
            else
                printf("  %-16s %.10g\n", "delta", target);
            tight_print_text(&ac, &t, want_delta);
        }
        dpzo_event_free(e);
        dpzo_ctx_free(ctx);
        order_choice_free(&oc);
        return rc;
    }
    if (rc == 0) {
        dpzo_status st = want_delta ? dpzo_event_delta(ctx, e, target, &oc.opts, &r)
                                    : dpzo_event_epsilon(ctx, e, target, &oc.opts, &r);
        if (st)
            rc = report_failure(ctx, st);
    }
    if (rc == 0 && args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "accountant", "rdp");
        json_number(o, "epsilon", r.epsilon);
        json_number(o, want_delta ? "delta" : "epsilon_estimate",
                    want_delta ? r.delta : r.epsilon_estimate);
        json_number(o, want_delta ? "delta_estimate" : "delta",
                    want_delta ? r.delta_estimate : r.delta);
        json_number(o, "order", r.order);
        json_number(o, "rdp", r.rdp);
        cJSON_AddBoolToObject(o, "order_at_edge", r.order_at_edge);
        json_number(o, "parameter_rounding", r.rounding);
        cJSON_AddStringToObject(o, "conversion", conversion_name(oc.opts.conversion));
        cJSON_AddStringToObject(o, "orders", oc.orders_name);
        json_print(o);
    } else if (rc == 0) {
        printf("dpzo %s: RDP accountant, %s conversion, %s orders\n", want_delta ? "delta" : "epsilon",
               conversion_name(oc.opts.conversion), oc.orders_name);
        char b1[64], b2[64];
        printf("  %-16s %s\n", "training", desc);
        if (want_delta) {
            printf("  %-16s %.10g\n", "epsilon", r.epsilon);
            printf("  %-16s %s   (certified upper bound)\n", "delta", FMT_UP(b1, r.delta, 10));
            printf("  %-16s %.10g   (fast path)\n", "delta estimate", r.delta_estimate);
        } else {
            printf("  %-16s %.10g\n", "delta", r.delta);
            printf("  %-16s %s   (certified upper bound)\n", "epsilon",
                   FMT_UP(b1, r.epsilon, 10));
            printf("  %-16s %.10g   (fast path)\n", "epsilon estimate", r.epsilon_estimate);
        }
        printf("  %-16s %.8g%s\n", "optimal order", r.order,
               r.order_at_edge ? "   (at the edge of the allowed orders)" : "");
        printf("  %-16s %s\n", "RDP at order", FMT_UP(b2, r.rdp, 10));
        if (r.rounding > 0.0)
            printf("  %-16s sigma down / q up by <= %.2g relative (over 4096 distinct steps):\n"
                   "  %-16s a dominating composition, still a proven bound\n", "rounding",
                   r.rounding, "");
    }
    dpzo_event_free(e);
    dpzo_ctx_free(ctx);
    order_choice_free(&oc);
    return rc;
}

int cmd_epsilon(int argc, char **argv) { return account(argc, argv, 0); }
int cmd_delta(int argc, char **argv) { return account(argc, argv, 1); }

static const char *help_rdp =
    "usage: dpzo rdp --noise-multiplier S --sampling-rate Q --orders A1,A2,...|GRID\n"
    "                [--steps T | --epochs E] [--schedule FILE] [--json]\n"
    "       dpzo rdp --noise-multiplier S --batch-size B --dataset-size N --orders ...\n"
    "       dpzo rdp --event FILE --orders ...\n"
    "\n"
    "RDP of the (composed) Poisson-sampled Gaussian, or of any event (--event), at each\n"
    "order: the fast value and certified lower and upper bounds (MPFR, outward rounding,\n"
    "bounded series tails). --steps defaults to 1. JSON keys: orders, rdp, rdp_lower,\n"
    "rdp_upper.\n"
    FIXED_BATCH_HELP EVENT_HELP;

int cmd_rdp(int argc, char **argv)
{
    static const opt_spec specs[] = {TRAINING_OPTS, {"orders", 1}, {"json", 0}, {"help", 0},
                                     {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_rdp, stdout);
        return 0;
    }
    const char *o = args_get(&a, "orders");
    if (o == NULL)
        return cli_usage_error("--orders is required (a list like 2,4.5,32 or a grid name)");
    if (!args_has(&a, "schedule") && !args_has(&a, "event") && !args_has(&a, "steps")
        && !args_has(&a, "epochs"))
        a.names[a.n] = "steps", a.values[a.n++] = "1";
    order_choice oc;
    int prc = order_choice_parse(&a, &oc);
    if (prc)
        return prc;
    const double *orders = oc.opts.orders;
    size_t n = oc.opts.n_orders;
    if (oc.opts.grid == DPZO_ORDERS_CONTINUOUS) {
        order_choice_free(&oc);
        return cli_usage_error("--orders must list orders or name a grid for `dpzo rdp`");
    }
    if (oc.opts.grid != DPZO_ORDERS_CUSTOM)
        n = dpzo_order_grid_values(oc.opts.grid, &orders);
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_event *e = NULL;
    char desc[256];
    int rc = ctx == NULL ? 1 : training_event(ctx, &a, &e, desc, sizeof desc);
    dpzo_bound *b = calloc(n, sizeof *b);
    double *v = calloc(3 * n, sizeof *v);
    if (rc == 0 && (b == NULL || v == NULL))
        rc = cli_out_of_memory();
    if (rc == 0) {
        dpzo_status st = dpzo_event_rdp_certified(ctx, e, orders, n, b);
        if (st)
            rc = report_failure(ctx, st);
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            v[i] = b[i].value;
            v[n + i] = b[i].lower;
            v[2 * n + i] = b[i].upper;
        }
        if (args_has(&a, "json")) {
            cJSON *out = cJSON_CreateObject();
            json_number_array(out, "orders", orders, n);
            json_number_array(out, "rdp", v, n);
            json_number_array(out, "rdp_lower", v + n, n);
            json_number_array(out, "rdp_upper", v + 2 * n, n);
            json_print(out);
        } else {
            printf("dpzo rdp: %s\n", desc);
            printf("  %12s  %24s  %24s  %24s\n", "order", "rdp", "certified lower",
                   "certified upper");
            for (size_t i = 0; i < n; i++) {
                char lo[64], up[64];
                printf("  %12.8g  %24.17g  %24s  %24s\n", orders[i], v[i],
                       FMT_DOWN(lo, v[n + i], 17), FMT_UP(up, v[2 * n + i], 17));
            }
        }
    }
    free(b);
    free(v);
    dpzo_event_free(e);
    dpzo_ctx_free(ctx);
    order_choice_free(&oc);
    return rc;
}
