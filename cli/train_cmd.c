/* SPDX-License-Identifier: Apache-2.0 */
/* cli/train_cmd.c: `dpzo train` (docs/trainer.md): reads the configuration, runs the
 * trainer, shows progress on a terminal, prints one line per evaluation and a summary. */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dpzo/blas.h>
#include <dpzo/dpzo.h>
#include <dpzo/trainer.h>
#include "commands.h"
#include "dpzo_io.h"
#include "output.h"

static const char *help_train =
    "usage: dpzo train --config FILE.json [--steps N] [--until S] [--resume CKPT]\n"
    "                  [--metrics FILE] [--checkpoint FILE] [--threads N] [--json]\n"
    "                  [--verbose]\n"
    "\n"
    "Trains a model on Fashion-MNIST with DPZero (differentially private zeroth-order\n"
    "training), MeZO (the same without privacy), DP-SGD or SGD, or the papers' algorithms\n"
    "DP-ZOSO (dpzoso), DP-ZOPO (dpzopo) and PAZO-M/P/S (pazo-m, pazo-p, pazo-s; with a\n"
    "public hold-out), or DPMD (dpmd: DP-SGD mixed with public gradients, the PAZO paper's\n"
    "first-order public-data baseline), as the JSON configuration says; docs/trainer.md\n"
    "documents every key, the metrics and the checkpoints, docs/algorithms.md each\n"
    "algorithm and its privacy accounting. A private run (all but mezo and sgd) reads a noise profile (dpzo profile\n"
    "gaussian), refuses a plan the profile does not cover, draws its noise from the\n"
    "operating system's CSPRNG and reports the epsilon spent (a proven upper bound).\n"
    "  --config FILE      the run's configuration (required); relative paths in it are\n"
    "                     resolved against FILE's directory\n"
    "  --steps N          plan N steps instead of the configuration's \"steps\" (the\n"
    "                     learning-rate schedule and the privacy plan use it)\n"
    "  --until S          stop after step S of the plan and write the checkpoint; continue\n"
    "                     later with --resume\n"
    "  --resume CKPT      continue the run saved in CKPT; the configuration must be the same\n"
    "                     (checked by its fingerprint). The batches, directions and learning\n"
    "                     rates are those of an uninterrupted run, so a non-private run ends\n"
    "                     bit-identical to one; a private run draws fresh noise\n"
    "  --metrics FILE     write the metrics (one JSON line per evaluation) to FILE\n"
    "                     instead of the configuration's \"metrics\"\n"
    "  --checkpoint FILE  write checkpoints to FILE instead of the configuration's\n"
    "                     \"checkpoint\"\n"
    "  --threads N        the model's threads instead of the configuration's \"threads\"\n"
    "                     (0, the default: all the machine's cores); the results are the\n"
    "                     same bits whatever N\n"
    "  --json             print the summary as one JSON object (test_accuracy, test_loss,\n"
    "                     epsilon_spent (\"inf\" when not private), delta, steps, ...;\n"
    "                     validation_accuracy and validation_loss with data.validation_size)\n"
    "  --verbose          also say which BLAS and which of its kernels the model's matrix\n"
    "                     products run on, and why (a \"blas\" object in --json): dpzo\n"
    "                     switches OpenBLAS from generic SSE kernels to the CPU's AVX2 or\n"
    "                     AVX-512 ones where OpenBLAS does not know the CPU; OPENBLAS_CORETYPE\n"
    "                     set by you is kept, DPZO_BLAS_SELECT=0 keeps OpenBLAS's choice\n"
    "On a terminal a progress line shows the step, steps/s, loss, epsilon and ETA. Ctrl-C\n"
    "stops after the current step (writing the checkpoint if there is one).\n"
    "Exit status: 0 done, 2 bad input (configuration, profile, a plan beyond the profile's\n"
    "budget, a checkpoint that is refused), 1 other failure (also a stop by the privacy\n"
    "budget), 130 interrupted.\n";

static volatile sig_atomic_t train_interrupted = 0;
static void on_sigint(int sig)
{
    (void)sig;
    train_interrupted = 1;
}

typedef struct {
    int json;      /* no evaluation lines on stdout */
    int tty;       /* progress line on stderr */
    double last_draw;
    uint64_t first_step;  /* where this session started */
    double first_seconds;
} view;

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *fmt_or_dash(char *buf, size_t size, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, fmt, v);
    return buf;
}

static void print_table_head(void)
{
    printf("  %8s  %10s  %8s  %9s  %11s  %10s  %8s\n", "step", "train loss", "test acc",
           "test loss", "epsilon", "lr", "time");
}

static void print_eval_line(const dpzo_train_report *r)
{
    char l[32], a[32], t[32], e[32];
    if (isinf(r->epsilon_spent))
        snprintf(e, sizeof e, "inf");
    else
        FMT_UP(e, r->epsilon_spent, 7);
    printf("  %8llu  %10s  %8s  %9s  %11s  %10.4g  %7.1fs\n", (unsigned long long)r->step,
           fmt_or_dash(l, sizeof l, "%.4f", r->train_loss),
           fmt_or_dash(a, sizeof a, "%.4f", r->test_accuracy),
           fmt_or_dash(t, sizeof t, "%.4f", r->test_loss), e, r->lr, r->seconds);
    fflush(stdout);
}

static void draw_progress(view *v, const dpzo_train_report *r)
{
    double done = (double)(r->step - v->first_step), dt = r->seconds - v->first_seconds;
    double rate = dt > 0.0 ? done / dt : 0.0;
    double eta = rate > 0.0 ? (double)(r->steps - r->step) / rate : NAN;
    char loss[32], eps[32], etas[32];
    fmt_or_dash(loss, sizeof loss, "%.4f", r->train_loss);
    if (isinf(r->epsilon_spent))
        snprintf(eps, sizeof eps, "inf");
    else
        FMT_UP(eps, r->epsilon_spent, 5);
    if (isnan(eta))
        snprintf(etas, sizeof etas, "-");
    else
        snprintf(etas, sizeof etas, "%dm%02ds", (int)(eta / 60), (int)fmod(eta, 60.0));
    int w = 24, k = (int)((double)w * (double)r->step / (double)r->steps);
    char bar[32];
    for (int i = 0; i < w; i++)
        bar[i] = i < k ? '#' : '.';
    bar[w] = '\0';
    fprintf(stderr, "\r\033[Kstep %llu/%llu [%s] %.1f steps/s  loss %s  eps %s  ETA %s",
            (unsigned long long)r->step, (unsigned long long)r->steps, bar, rate, loss, eps,
            etas);
    fflush(stderr);
}

static int on_step(void *user, const dpzo_train_report *r)
{
    view *v = user;
    if (r->evaluated && !v->json) {
        if (v->tty)
            fputs("\r\033[K", stderr);
        print_eval_line(r);
    }
    double now = mono_now();
    if (v->tty && (now - v->last_draw >= 0.1 || r->step == r->steps)) {
        v->last_draw = now;
        draw_progress(v, r);
    }
    return train_interrupted != 0;
}

/* ---- header and summary -------------------------------------------------------------- */

static void print_privacy(const dpzo_trainer *tr)
{
    const dpzo_train_config *c = dpzo_trainer_config(tr);
    const dpzo_privacy *p = dpzo_trainer_privacy(tr);
    if (p == NULL) {
        printf("  privacy        none (non-private baseline)\n");
        return;
    }
    const dpzo_profile *pr = dpzo_privacy_profile(p);
    char eps[32], noise[48] = "lmo";
    if (pr->kind == DPZO_NOISE_GAUSSIAN)
        snprintf(noise, sizeof noise, "gaussian, s = %.6g", pr->noise_multiplier);
    printf("  privacy        profile %s: %s, C = %g\n", c->profile, noise, c->clip);
    printf("                 budget epsilon %s at delta %g over %llu steps (%s accountant)\n",
           FMT_UP(eps, dpzo_privacy_budget(p), 7), dpzo_privacy_delta(p),
           (unsigned long long)pr->steps, pr->accountant);
    if (c->batching == DPZO_BATCH_SHUFFLE)
        printf("  batches        each step a fresh uniformly random subset of %g rows (the "
               "without-\n                 replacement accounting's sampling; docs/trainer.md, "
               "2.3)\n", c->batch_size);
}

static void print_header(const dpzo_trainer *tr, const char *resumed, int verbose)
{
    const dpzo_train_config *c = dpzo_trainer_config(tr);
    printf("dpzo train: %s, model %s (%zu parameters), %zu training rows",
           dpzo_algorithm_name(c->algorithm), c->model, dpzo_trainer_n_params(tr),
           dpzo_trainer_n_train(tr));
    if (dpzo_trainer_n_public(tr) > 0)
        printf(" (+%zu public held out)", dpzo_trainer_n_public(tr));
    if (dpzo_trainer_n_validation(tr) > 0)
        printf(" (+%zu held out for validation)", dpzo_trainer_n_validation(tr));
    printf(", %zu test rows\n", dpzo_trainer_n_test(tr));
    if (verbose) { /* the model was created: the selection has been made */
        dpzo_blas_info info;
        char line[512];
        dpzo_blas_select(&info);
        dpzo_blas_describe(&info, line, sizeof line);
        printf("  BLAS           %s\n", line);
    }
    if (c->batching == DPZO_BATCH_POISSON)
        printf("  batches        Poisson, expected size %g (rate %.6g), %llu steps\n",
               c->batch_size, c->batch_size / (double)dpzo_trainer_n_train(tr),
               (unsigned long long)c->steps);
    else
        printf("  batches        shuffled, size %g, %llu steps\n", c->batch_size,
               (unsigned long long)c->steps);
    const dpzo_algorithm a = c->algorithm;
    if (!dpzo_algorithm_is_first_order(a) && a != DPZO_ALG_PAZO_S)
        printf("  directions     %s, lambda %g, %u per step, seed %llu\n",
               dpzo_dir_kind_name(c->direction), c->lambda, c->queries,
               (unsigned long long)c->seed);
    if (dpzo_algorithm_is_stagewise(a)) {
        const dpzo_stage_config *g = &c->stages;
        printf("  stages         %u, lengths doubling from %s, lambda %g to %g, prox %g\n",
               g->count, g->first_steps ? "first_steps" : "the fill of the run", c->lambda,
               isnan(g->lambda_last) ? c->lambda : g->lambda_last, g->prox);
    }
    if (a == DPZO_ALG_DPZOPO) {
        static const char *const strat[] = {"static", "dynamic", "increasing", "incremental"};
        const dpzo_prune_config *p = &c->prune;
        printf("  pruning        %s, rate %g (x %g per stage), %s |score|, %s\n",
               strat[p->strategy], p->rate,
               p->strategy == DPZO_PRUNE_STATIC || p->strategy == DPZO_PRUNE_DYNAMIC
                   ? 1.0
                   : (isnan(p->growth) ? 2.0 : p->growth),
               p->select_largest ? "largest" : "smallest", p->rank ? "rank multipliers" : "mask");
    }
    if (a == DPZO_ALG_PAZO_M)
        printf("  public data    one batch of %g per step, alpha %g\n", c->pub.batch_size,
               c->pub.alpha);
    else if (a == DPZO_ALG_PAZO_P)
        printf("  public data    %u batches of %g per step, %s\n", c->pub.k, c->pub.batch_size,
               c->pub.orthonormalize ? "orthonormalised" : "normalised");
    else if (a == DPZO_ALG_PAZO_S)
        printf("  public data    %u candidates from batches of %g per step, %s\n", c->pub.k,
               c->pub.batch_size,
               c->pub.noisy_candidate ? "plus one noisy candidate" : "no noisy candidate");
    else if (a == DPZO_ALG_DPMD)
        printf("  public data    one batch of %g per step, private weight cos(pi t / 2T)\n",
               c->pub.batch_size);
    if (c->pretrain.steps > 0)
        printf("  pretrain       %llu SGD steps on the public rows, lr %g, batch %g\n",
               (unsigned long long)c->pretrain.steps, c->pretrain.lr, c->pretrain.batch_size);
    if (dpzo_algorithm_is_stagewise(a))
        printf("  learning rate  %g in stage 1, x %g per stage\n", c->lr, c->stages.lr_decay);
    else
        printf("  learning rate  %g, %s schedule\n", c->lr, dpzo_lr_schedule_name(c->lr_schedule));
    print_privacy(tr);
    if (resumed != NULL)
        printf("  resumed from   %s\n", resumed);
    print_table_head();
}

typedef struct {
    double acc, loss, vacc, vloss, seconds, eps, budget, delta;
    uint64_t step;
    const char *stopped; /* NULL: finished */
} summary;

static void print_summary_text(const dpzo_trainer *tr, const summary *s)
{
    const dpzo_train_config *c = dpzo_trainer_config(tr);
    printf("dpzo train: %s after %llu of %llu steps, %.1f s of training\n",
           s->stopped ? "stopped" : "done", (unsigned long long)s->step,
           (unsigned long long)c->steps, s->seconds);
    printf("  test accuracy  %.4f\n  test loss      %.4f\n", s->acc, s->loss);
    if (dpzo_trainer_n_validation(tr) > 0)
        printf("  validation     accuracy %.4f, loss %.4f (%zu held-out rows)\n", s->vacc,
               s->vloss, dpzo_trainer_n_validation(tr));
    if (isinf(s->eps)) {
        printf("  epsilon spent  inf (not private)\n");
    } else {
        char e[32], b[32];
        printf("  epsilon spent  %s at delta %g (proven upper bound; budget %s)\n",
               FMT_UP(e, s->eps, 10), s->delta, FMT_UP(b, s->budget, 10));
    }
    if (c->checkpoint[0] && s->stopped)
        printf("  checkpoint     %s (continue with --resume %s)\n", c->checkpoint, c->checkpoint);
    else if (c->checkpoint[0])
        printf("  checkpoint     %s\n", c->checkpoint);
    if (c->metrics[0])
        printf("  metrics        %s\n", c->metrics);
}

/* {"library", "kernels", "chosen_by_openblas", "cpu", "switched", "reason"} */
static cJSON *blas_json(void)
{
    dpzo_blas_info info;
    dpzo_blas_select(&info);
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "library", info.library);
    cJSON_AddStringToObject(b, "kernels", info.core);
    cJSON_AddStringToObject(b, "chosen_by_openblas", info.chosen);
    cJSON_AddStringToObject(b, "cpu", info.cpu);
    cJSON_AddBoolToObject(b, "switched", info.switched);
    cJSON_AddStringToObject(b, "reason", info.reason);
    return b;
}

static void print_summary_json(const dpzo_trainer *tr, const summary *s, int verbose)
{
    const dpzo_train_config *c = dpzo_trainer_config(tr);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "algorithm", dpzo_algorithm_name(c->algorithm));
    cJSON_AddStringToObject(o, "model", c->model);
    cJSON_AddNumberToObject(o, "n_params", (double)dpzo_trainer_n_params(tr));
    cJSON_AddNumberToObject(o, "steps", (double)s->step);
    cJSON_AddNumberToObject(o, "planned_steps", (double)c->steps);
    cJSON_AddNumberToObject(o, "train_rows", (double)dpzo_trainer_n_train(tr));
    cJSON_AddNumberToObject(o, "test_rows", (double)dpzo_trainer_n_test(tr));
    json_number(o, "test_accuracy", s->acc);
    json_number(o, "test_loss", s->loss);
    if (dpzo_trainer_n_validation(tr) > 0) { /* only where there are such rows */
        cJSON_AddNumberToObject(o, "validation_rows", (double)dpzo_trainer_n_validation(tr));
        json_number(o, "validation_accuracy", s->vacc);
        json_number(o, "validation_loss", s->vloss);
    }
    json_number(o, "epsilon_spent", s->eps);
    json_number(o, "epsilon_budget", s->budget);
    if (isnan(s->delta))
        cJSON_AddNullToObject(o, "delta");
    else
        json_number(o, "delta", s->delta);
    json_number(o, "seconds", s->seconds);
    if (s->stopped)
        cJSON_AddStringToObject(o, "stopped", s->stopped);
    else
        cJSON_AddNullToObject(o, "stopped");
    cJSON_AddStringToObject(o, "fingerprint", dpzo_trainer_fingerprint(tr));
    if (verbose)
        cJSON_AddItemToObject(o, "blas", blas_json());
    json_print(o);
}

/* ---- the command --------------------------------------------------------------------- */

static int fail(dpzo_ctx *ctx, dpzo_status st)
{
    fprintf(stderr, "dpzo: error: %s\n", dpzo_ctx_errmsg(ctx));
    return st == DPZO_EINVAL || st == DPZO_EPARSE || st == DPZO_EINFEASIBLE ? 2 : 1;
}

static int set_path(char *dst, const char *src, const char *opt)
{
    if (strlen(src) >= DPZO_TRAIN_PATH_MAX || src[0] == '\0')
        return cli_usage_error("--%s: bad path", opt);
    strcpy(dst, src);
    return 0;
}

/* The configuration file with the command line's overrides. */
static int load_config(dpzo_ctx *ctx, const parsed_args *a, dpzo_train_config *c, uint64_t *until)
{
    dpzo_status st = dpzo_train_config_read_file(ctx, args_get(a, "config"), c);
    if (st != DPZO_OK)
        return fail(ctx, st);
    int rc = 0;
    *until = 0;
    if (args_has(a, "steps"))
        rc = parse_count("steps", args_get(a, "steps"), &c->steps);
    if (!rc && args_has(a, "until"))
        rc = parse_count("until", args_get(a, "until"), until);
    if (!rc && args_has(a, "metrics"))
        rc = set_path(c->metrics, args_get(a, "metrics"), "metrics");
    if (!rc && args_has(a, "checkpoint"))
        rc = set_path(c->checkpoint, args_get(a, "checkpoint"), "checkpoint");
    if (!rc && args_has(a, "threads")) { /* the range: dpzo_train_config_validate below */
        uint64_t n = 0;
        rc = parse_count("threads", args_get(a, "threads"), &n);
        c->threads = n > UINT_MAX ? UINT_MAX : (unsigned)n;
    }
    if (rc)
        return rc;
    if (args_has(a, "until") && (*until < 1 || *until > c->steps))
        return cli_usage_error("--until must be in [1, %llu] (the planned steps)",
                               (unsigned long long)c->steps);
    if ((st = dpzo_train_config_validate(ctx, c)) != DPZO_OK)
        return fail(ctx, st);
    return 0;
}

static int finish(dpzo_ctx *ctx, dpzo_trainer *tr, dpzo_status st, int json, int verbose)
{
    const char *stopped = st == DPZO_EINTERRUPTED ? "interrupted"
                          : st == DPZO_EINFEASIBLE ? "privacy budget"
                                                   : NULL;
    if (st != DPZO_OK && stopped == NULL)
        return fail(ctx, st);
    const char *ckpt = dpzo_trainer_config(tr)->checkpoint;
    if (st == DPZO_EINTERRUPTED)
        fprintf(stderr, "dpzo: interrupted; %s%s\n",
                ckpt[0] ? "checkpoint written to " : "no checkpoint configured (--checkpoint FILE)",
                ckpt);
    else if (st == DPZO_EINFEASIBLE)
        fprintf(stderr, "dpzo: %s\n", dpzo_ctx_errmsg(ctx));
    dpzo_train_report r;
    dpzo_trainer_report_now(tr, &r);
    summary s = {r.test_accuracy, r.test_loss, r.validation_accuracy, r.validation_loss,
                 r.seconds, r.epsilon_spent, INFINITY, NAN, r.step, stopped};
    if (stopped == NULL && r.step < r.steps)
        s.stopped = "until";
    dpzo_status est = DPZO_OK;
    if (s.stopped != NULL) /* the metrics' last evaluation may be older: evaluate now */
        est = dpzo_trainer_evaluate(ctx, tr, &s.acc, &s.loss);
    /* validation: also when this session made no evaluation (resumed at the end) */
    if (est == DPZO_OK && (s.stopped != NULL || isnan(s.vacc)))
        est = dpzo_trainer_validate(ctx, tr, &s.vacc, &s.vloss);
    if (est != DPZO_OK)
        return fail(ctx, est);
    const dpzo_privacy *p = dpzo_trainer_privacy(tr);
    if (p != NULL) {
        s.budget = dpzo_privacy_budget(p);
        s.delta = dpzo_privacy_delta(p);
    }
    if (json)
        print_summary_json(tr, &s, verbose);
    else
        print_summary_text(tr, &s);
    return st == DPZO_EINTERRUPTED ? 130 : st == DPZO_EINFEASIBLE ? 1 : 0;
}

int cmd_train(int argc, char **argv)
{
    static const opt_spec specs[] = {{"config", 1},     {"steps", 1},      {"until", 1},
                                     {"resume", 1},     {"metrics", 1},    {"checkpoint", 1},
                                     {"threads", 1},    {"json", 0},       {"verbose", 0},
                                     {"help", 0},
                                     {NULL, 0}};
    parsed_args a;
    if (args_parse(argc, argv, specs, &a))
        return 2;
    if (args_has(&a, "help")) {
        fputs(help_train, stdout);
        return 0;
    }
    if (!args_has(&a, "config"))
        return cli_usage_error("--config FILE is required (see dpzo train --help)");
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return cli_out_of_memory();
    dpzo_train_config cfg;
    uint64_t until = 0;
    int rc = load_config(ctx, &a, &cfg, &until);
    dpzo_trainer *tr = NULL;
    dpzo_status st = DPZO_OK;
    if (rc == 0 && (st = dpzo_trainer_create(ctx, &cfg, NULL, NULL, &tr)) == DPZO_OK &&
        args_has(&a, "resume"))
        st = dpzo_trainer_resume(ctx, tr, args_get(&a, "resume"));
    if (rc == 0 && st != DPZO_OK)
        rc = fail(ctx, st);
    /* the outputs are checked before the header is printed and the first step is run;
     * dpzo_trainer_run checks them again for the library's other callers (issue 28,
     * item 6) */
    if (rc == 0 && cfg.checkpoint[0])
        rc = cli_check_output(cfg.checkpoint, "checkpoint", 0);
    if (rc == 0 && cfg.metrics[0])
        rc = cli_check_output(cfg.metrics, "metrics", DPZO_IO_DIRECT);
    if (rc == 0) {
        view v = {args_has(&a, "json"), isatty(STDERR_FILENO), 0.0, 0, 0.0};
        dpzo_train_report r0;
        dpzo_trainer_report_now(tr, &r0);
        v.first_step = r0.step;
        v.first_seconds = r0.seconds;
        if (!v.json)
            print_header(tr, args_get(&a, "resume"), args_has(&a, "verbose"));
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint;
        sigaction(SIGINT, &sa, &old);
        st = dpzo_trainer_run(ctx, tr, until, on_step, &v);
        sigaction(SIGINT, &old, NULL);
        if (v.tty)
            fputc('\n', stderr);
        rc = finish(ctx, tr, st, v.json, args_has(&a, "verbose"));
    }
    dpzo_trainer_free(tr);
    dpzo_ctx_free(ctx);
    return rc;
}
