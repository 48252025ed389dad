/* SPDX-License-Identifier: Apache-2.0 */
/* cli/calibrate_cmd.c: `dpzo calibrate` and `dpzo demo`. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "account.h"
#include "commands.h"
#include "output.h"
#include "progress.h"

static const char *help_calibrate =
    "usage: dpzo calibrate --epsilon E --delta D --sampling-rate Q --steps T\n"
    "       dpzo calibrate --epsilon E --delta D --batch-size B --dataset-size N --steps T\n"
    "       dpzo calibrate --solve-for steps --epsilon E --delta D --sampling-rate Q\n"
    "                      --noise-multiplier S\n"
    "       dpzo calibrate --solve-for sampling-rate --epsilon E --delta D --steps T\n"
    "                      --noise-multiplier S\n"
    "       [--epochs E instead of --steps T] [--tolerance R] [--orders ...]\n"
    "       [--conversion improved|standard] [--json]\n"
    "       [--accountant rdp|pld|prv] [--grid D] [--eps-error E] [--memory-limit MIB]\n"
    "\n"
    "Smallest noise multiplier (default), largest number of steps, or largest Poisson\n"
    "sampling rate whose epsilon at delta is at most E. The answer provably meets the\n"
    "target (certified epsilon <= E) and is tight: the value one relative tolerance R\n"
    "(default 1e-6, 1e-4 with pld or prv; steps: one step) beyond it misses the target.\n"
    "With --accountant pld or prv the search runs on the tight accountant's proven upper\n"
    "bound, so the answer also provably meets the target, with less noise than RDP needs.\n"
    "With --batch-size and --dataset-size only the noise multiplier is solved for, and\n"
    "--epochs only with it.\n"
    "JSON keys: noise_multiplier | steps | sampling_rate, epsilon (certified at the\n"
    "answer), target_epsilon, delta, order, tight_to (the failing neighbour) and\n"
    "epsilon_at_tight_to; with pld or prv also epsilon_lower (the proven lower bound at\n"
    "the answer); with --epochs steps, with --batch-size batch_size and dataset_size.\n"
    FIXED_BATCH_HELP TIGHT_HELP;

int cmd_calibrate(int argc, char **argv)
{
    static const opt_spec specs[] = {
        {"epsilon", 1}, {"delta", 1},    {"sampling-rate", 1}, {"steps", 1},
        {"noise-multiplier", 1}, {"solve-for", 1}, {"tolerance", 1}, {"batch-size", 1},
        {"dataset-size", 1}, {"epochs", 1}, ORDER_OPTS, TIGHT_OPTS,
        {"json", 0},    {"help", 0},     {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_calibrate, stdout);
        return 0;
    }
    const char *solve = args_get(&a, "solve-for");
    if (solve == NULL)
        solve = "noise-multiplier";
    const char *key = "noise_multiplier";
    if (strcmp(solve, "steps") == 0)
        key = "steps";
    else if (strcmp(solve, "sampling-rate") == 0)
        key = "sampling_rate";
    else if (strcmp(solve, "noise-multiplier") != 0)
        return cli_usage_error("--solve-for must be noise-multiplier, steps or sampling-rate, "
                               "got '%s'", solve);
    if (args_has(&a, solve))
        return cli_usage_error("--%s is what --solve-for computes; do not give it", solve);
    int fixed = args_has(&a, "batch-size") || args_has(&a, "dataset-size");
    if (fixed && strcmp(key, "noise_multiplier") != 0)
        return cli_usage_error("with --batch-size/--dataset-size (fixed batches) calibrate "
                               "solves for the noise multiplier only, not %s", solve);
    if (strcmp(key, "steps") == 0 && args_has(&a, "epochs"))
        return cli_usage_error("--epochs is what --solve-for steps computes (as steps); do "
                               "not give it");
    if (strcmp(key, "sampling_rate") == 0 && args_has(&a, "epochs"))
        return cli_usage_error("--epochs with --solve-for sampling-rate is ambiguous (an epoch "
                               "is 1 / Q steps and Q is unknown); give --steps");
    const char *need[4] = {"epsilon", "delta", NULL, NULL};
    if (strcmp(key, "noise_multiplier") == 0) {
        if (!fixed && !args_has(&a, "sampling-rate"))
            return cli_usage_error("--sampling-rate (or --batch-size and --dataset-size) is "
                                   "required when solving for noise-multiplier");
        if (!args_has(&a, "steps") && !args_has(&a, "epochs"))
            return cli_usage_error("--steps (or --epochs) is required when solving for "
                                   "noise-multiplier");
    } else {
        need[2] = "noise-multiplier";
        need[3] = strcmp(key, "steps") == 0 ? "sampling-rate" : "steps";
    }
    for (size_t i = 0; i < 4; i++)
        if (need[i] != NULL && !args_has(&a, need[i]))
            return cli_usage_error("--%s is required when solving for %s", need[i], solve);
    double eps, delta, q = 0, sigma = 0, tol = 0;
    uint64_t steps = 0, batch = 0, size = 0;
    char note[160] = "";
    if (parse_real("epsilon", args_get(&a, "epsilon"), &eps)
        || parse_real("delta", args_get(&a, "delta"), &delta)
        || training_sampling(&a, &q, &batch, &size)
        || (args_has(&a, "noise-multiplier")
            && parse_real("noise-multiplier", args_get(&a, "noise-multiplier"), &sigma))
        || (strcmp(key, "steps") != 0
            && training_steps(&a, q, batch, size, &steps, note, sizeof note))
        || (args_has(&a, "tolerance") && parse_real("tolerance", args_get(&a, "tolerance"), &tol)))
        return 2;
    /* the accepted range is epsilon > 0 (docs/accountant.md), as for profile gaussian and
     * lmo search: 0 is a value out of range (exit 2), not a target found infeasible (the
     * library's DPZO_EINFEASIBLE, exit 1), which it was before issue 28, item 11 */
    if (!(eps > 0.0))
        return cli_usage_error("--epsilon must be > 0, got %s", args_get(&a, "epsilon"));
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
    if (ctx == NULL)
        return 1;
    dpzo_calibration c;
    dpzo_status st;
    const dpzo_pld_options *t = ac.tight ? &ac.opts : NULL;
    /* a tight calibration composes distributions at every step of the bisection: seconds
     * to minutes; a terminal sees the elapsed time */
    cli_progress pg;
    progress_begin(&pg, "dpzo calibrate", t == NULL || args_has(&a, "json"));
    char what[96];
    snprintf(what, sizeof what, "bisection on the %s accountant's proven upper bound", ac.name);
    progress_step(&pg, 0, 0, what);
    if (size > 0)
        st = t ? dpzo_calibrate_noise_wor_pld(ctx, eps, delta, batch, size, steps, tol, t, &c)
               : dpzo_calibrate_noise_wor(ctx, eps, delta, batch, size, steps, tol, &oc.opts, &c);
    else if (strcmp(key, "steps") == 0)
        st = t ? dpzo_calibrate_steps_pld(ctx, eps, delta, q, sigma, t, &c)
               : dpzo_calibrate_steps(ctx, eps, delta, q, sigma, &oc.opts, &c);
    else if (strcmp(key, "sampling_rate") == 0)
        st = t ? dpzo_calibrate_sampling_rate_pld(ctx, eps, delta, sigma, steps, tol, t, &c)
               : dpzo_calibrate_sampling_rate(ctx, eps, delta, sigma, steps, tol, &oc.opts, &c);
    else
        st = t ? dpzo_calibrate_noise_pld(ctx, eps, delta, q, steps, tol, t, &c)
               : dpzo_calibrate_noise(ctx, eps, delta, q, steps, tol, &oc.opts, &c);
    progress_end(&pg);
    int rc = st ? report_failure(ctx, st) : 0;
    if (rc == 0 && args_has(&a, "json")) {
        cJSON *o = cJSON_CreateObject();
        json_number(o, key, c.value);
        if (args_has(&a, "epochs"))
            json_number(o, "steps", (double)steps);
        if (size > 0) {
            json_number(o, "batch_size", (double)batch);
            json_number(o, "dataset_size", (double)size);
        }
        json_number(o, "epsilon", c.epsilon);
        json_number(o, "target_epsilon", eps);
        json_number(o, "delta", delta);
        cJSON_AddStringToObject(o, "accountant", ac.name);
        if (ac.tight)
            json_number(o, "epsilon_lower", c.epsilon_lower);
        else
            json_number(o, "order", c.order);
        json_number(o, "tight_to", c.other_side);
        json_number(o, "epsilon_at_tight_to", c.epsilon_other_side);
        cJSON_AddNumberToObject(o, "evaluations", c.evaluations);
        json_print(o);
    } else if (rc == 0) {
        printf("dpzo calibrate: solve for %s (target epsilon %g at delta %g), %s accountant\n",
               solve, eps, delta, ac.name);
        if (size > 0)
            printf("  %-22s %llu steps%s, batches of %llu of %llu without replacement\n",
                   "training", (unsigned long long)steps, note, (unsigned long long)batch,
                   (unsigned long long)size);
        else if (note[0])
            printf("  %-22s %llu steps%s, Poisson q=%.6g\n", "training",
                   (unsigned long long)steps, note, q);
        /* sigma printed rounded up, q down, steps exactly: the printed value still meets
         * the target (epsilon is monotone in each) */
        char vb[64], eb[64];
        if (strcmp(key, "steps") == 0)
            snprintf(vb, sizeof vb, "%.0f", c.value);
        else
            fmt_dir(vb, sizeof vb, c.value, 10, strcmp(key, "sampling_rate") == 0 ? -1 : 1);
        printf("  %-22s %s\n", key, vb);
        printf("  %-22s %s   (certified upper bound, <= target)\n", "epsilon",
               FMT_UP(eb, c.epsilon, 10));
        if (ac.tight)
            printf("  %-22s %s   (proven lower bound)\n", "epsilon lower",
                   FMT_DOWN(eb, c.epsilon_lower, 10));
        else
            printf("  %-22s %.8g\n", "optimal order", c.order);
        if (isnan(c.other_side))
            printf("  %-22s none   (every %s %s %.10g meets the target)\n", "tight to",
                   solve, strcmp(key, "noise_multiplier") == 0 ? "down to" : "up to", c.value);
        else
            printf("  %-22s %.10g   (epsilon there %.10g > target)\n", "tight to",
                   c.other_side, c.epsilon_other_side);
        printf("  %-22s %d\n", "accountant calls", c.evaluations);
    }
    dpzo_ctx_free(ctx);
    order_choice_free(&oc);
    return rc;
}

/* The embedded default of `make demo`: DP zeroth-order fine-tuning on SST-2-sized
 * data (66,675 examples), Poisson batches of expected size 64, 10 epochs. */
#define DEMO_N 66675.0
#define DEMO_BATCH 64.0
#define DEMO_EPOCHS 10
#define DEMO_DELTA 1e-5

int cmd_demo(int argc, char **argv)
{
    static const opt_spec specs[] = {{"help", 0}, {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        puts("usage: dpzo demo\n\nCalibrates the noise multiplier for epsilon in {1, 3, 8} and "
             "reports epsilon\nper epoch for a DP fine-tuning run on 66,675 examples, batch 64, "
             "10 epochs,\ndelta 1e-5 (Poisson sampling, RDP accountant, certified bounds).");
        return 0;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 1;
    const double q = DEMO_BATCH / DEMO_N;
    const uint64_t steps_per_epoch = (uint64_t)ceil(DEMO_N / DEMO_BATCH);
    const uint64_t steps = steps_per_epoch * DEMO_EPOCHS;
    printf("dpzo demo: DP fine-tuning, %.0f examples, expected batch %.0f (q = %.6g),\n"
           "           %d epochs = %llu steps, delta = %g\n\n",
           DEMO_N, DEMO_BATCH, q, DEMO_EPOCHS, (unsigned long long)steps, DEMO_DELTA);
    printf("Calibration: smallest noise multiplier for a target epsilon\n");
    printf("  %-14s %-18s %-22s %-10s\n", "target eps", "noise multiplier", "certified epsilon",
           "order");
    static const double targets[] = {1.0, 3.0, 8.0};
    double sigma_mid = 0.0;
    for (size_t i = 0; i < 3; i++) {
        dpzo_calibration c;
        dpzo_status st = dpzo_calibrate_noise(ctx, targets[i], DEMO_DELTA, q, steps, 0, NULL, &c);
        if (st) {
            int rc = report_failure(ctx, st);
            dpzo_ctx_free(ctx);
            return rc;
        }
        if (i == 1)
            sigma_mid = c.value;
        char sb[64], eb[64];
        printf("  %-14g %-18s %-22s %-10.4f\n", targets[i], FMT_UP(sb, c.value, 9),
               FMT_UP(eb, c.epsilon, 10), c.order);
    }
    printf("\nEpsilon report at noise multiplier %.4f (the epsilon = 3 calibration)\n",
           sigma_mid);
    printf("  %-7s %-8s %-22s %-22s %-10s\n", "epoch", "steps", "epsilon (certified)",
           "epsilon (opacus grid)", "order");
    for (int ep = 1; ep <= DEMO_EPOCHS; ep++) {
        uint64_t t = steps_per_epoch * (uint64_t)ep;
        dpzo_event *e = dpzo_event_self_composed(
            ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma_mid)), t);
        dpzo_rdp_options grid = dpzo_rdp_options_default();
        grid.grid = DPZO_ORDERS_OPACUS;
        dpzo_dp_result r, rg;
        dpzo_status st = e == NULL ? DPZO_EINVAL : dpzo_event_epsilon(ctx, e, DEMO_DELTA, NULL, &r);
        if (st == DPZO_OK)
            st = dpzo_event_epsilon(ctx, e, DEMO_DELTA, &grid, &rg);
        dpzo_event_free(e);
        if (st) {
            int rc = report_failure(ctx, st);
            dpzo_ctx_free(ctx);
            return rc;
        }
        char e1[64], e2[64];
        printf("  %-7d %-8llu %-22s %-22s %-10.4f\n", ep, (unsigned long long)t,
               FMT_UP(e1, r.epsilon, 11), FMT_UP(e2, rg.epsilon, 11), r.order);
    }
    dpzo_ctx_free(ctx);
    return 0;
}
