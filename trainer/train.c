/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/train.c: the trainer object: data, model, the step object, and the run loop with
 * its evaluations, metrics lines and checkpoints (docs/trainer.md).
 *
 * The run is a loop over the step object (zo_step.c; one step: train_step.c): it owns the
 * sampler, the privacy object and the ledger. A private run opens the privacy object first
 * (a plan beyond the profile is refused before any step), reports epsilon_after(t) after
 * step t, and before each step checks that the step stays within the budget (it stops
 * cleanly, before the step, if not). Checkpoints are the state object of resume.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dpzo_io.h"
#include "internal.h"
#include "train_internal.h"
#include "zo_internal.h"

/* ---- set-up -------------------------------------------------------------------------- */

/* The private training rows: the caller's or Fashion-MNIST's, the first train_subset of
 * them, minus the validation hold-out (validation_size rows, the same for every seed), minus
 * the public hold-out (public_size rows of the rest, keyed by the seed). */
static dpzo_status setup_data(dpzo_ctx *ctx, dpzo_trainer *tr, const dpzo_dataset *train,
                              const dpzo_dataset *test)
{
    const dpzo_train_config *c = &tr->cfg;
    if ((train == NULL) != (test == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "trainer: give both data sets or neither");
    if (train == NULL) {
        char dir[DPZO_TRAIN_PATH_MAX];
        dpzo_status st = dpzo_fmnist_find(ctx, c->data_dir[0] ? c->data_dir : NULL, dir,
                                          sizeof dir);
        if (st == DPZO_OK)
            st = dpzo_fmnist_load(ctx, dir, "train", &tr->loaded);
        if (st == DPZO_OK)
            st = dpzo_fmnist_load(ctx, dir, "test", &tr->test_loaded);
        if (st != DPZO_OK)
            return st;
        train = &tr->loaded;
        test = &tr->test_loaded;
    }
    if (test->dim != train->dim || test->n_classes != train->n_classes)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "trainer: test rows have %zu features and %d classes, training rows "
                          "%zu and %d",
                          test->dim, test->n_classes, train->dim, train->n_classes);
    dpzo_dataset rows = *train; /* a view: the first train_subset rows share the arrays */
    if (c->train_subset > 0) {
        if (c->train_subset > train->n)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: data.train_subset %llu exceeds the %zu training rows",
                              (unsigned long long)c->train_subset, train->n);
        rows.n = (size_t)c->train_subset;
    }
    tr->test = test;
    const uint64_t nv = c->validation_size, np = c->public_size;
    if (nv >= rows.n || np >= rows.n - nv) { /* no sum: counts near 2^64 would wrap */
        if (nv == 0)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: data.public_size %llu leaves no private rows (of %zu)",
                              (unsigned long long)np, rows.n);
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: data.validation_size %llu and data.public_size %llu leave no "
                          "private rows (of %zu)",
                          (unsigned long long)nv, (unsigned long long)np, rows.n);
    }
    dpzo_dataset rest = {0};
    if (nv > 0) {
        /* the same rows for every seed and algorithm: a shuffle with a fixed key */
        dpzo_status st =
            dpzo_dataset_split(ctx, &rows, (size_t)nv, DPZO__VALIDATION_KEY, &tr->val, &rest);
        if (st != DPZO_OK)
            return st;
        dpzo_dataset_free(&tr->loaded); /* the split holds copies */
        rows = rest;
    }
    if (np == 0) {
        tr->priv = rows;
        tr->priv_owned = nv > 0; /* rest */
        return DPZO_OK;
    }
    dpzo_status st = dpzo_dataset_split(ctx, &rows, (size_t)np, c->seed, &tr->pub, &tr->priv);
    dpzo_dataset_free(&rest);
    if (st != DPZO_OK)
        return st;
    tr->priv_owned = 1;
    dpzo_dataset_free(&tr->loaded); /* the split holds copies */
    return DPZO_OK;
}

static dpzo_status setup_model(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    const dpzo_dataset *d = &tr->priv;
    dpzo_status st = dpzo_model_create(ctx, tr->cfg.model, d->dim, d->rows, d->cols,
                                       d->n_classes, &tr->model);
    if (st != DPZO_OK)
        return st;
    dpzo_model_set_threads(tr->model, tr->cfg.threads);
    tr->P = dpzo_model_n_params(tr->model);
    tr->theta = calloc(tr->P, sizeof *tr->theta);
    if (tr->theta == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "trainer: out of memory (%zu parameters)", tr->P);
    dpzo_model_init(tr->model, tr->cfg.seed, tr->theta);
    return DPZO_OK;
}

/* ptr = an array of count elements (at least one); 1 when out of memory. */
/* an int, so that `|` (every allocation attempted, one check) is no bool-as-bitwise warning */
#define ALLOC(ptr, count) ((int)(((ptr) = malloc(((count) > 0 ? (count) : 1) * sizeof *(ptr))) == NULL))

static dpzo_status setup_buffers(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    const size_t n = tr->priv.n, P = tr->P, Q = dpzo_train_queries_per_step(&tr->cfg);
    const dpzo_algorithm a = tr->cfg.algorithm;
    const int first_order = dpzo_algorithm_is_first_order(a);
    int bad = ALLOC(tr->idx, n);
    if (!first_order)
        bad |= ALLOC(tr->lp, n) | ALLOC(tr->lm, n) | ALLOC(tr->LP, n * Q) |
               ALLOC(tr->LM, n * Q) | ALLOC(tr->qsum, Q);
    if (first_order || tr->pub.n > 0)
        bad |= ALLOC(tr->grad, P);
    if (tr->pub.n > 0)
        bad |= ALLOC(tr->pub_idx, tr->pub.n) |
               ALLOC(tr->gpub, (a == DPZO_ALG_DPMD ? 1 : tr->cfg.pub.k) * P); /* dpmd: one */
    if (a == DPZO_ALG_DPSGD || a == DPZO_ALG_DPMD) {
        tr->pe_chunk = dpzo__pe_chunk(P, tr->cfg.batch_size);
        bad |= ALLOC(tr->gsum, P) | ALLOC(tr->gnoise, P) | ALLOC(tr->per_ex, tr->pe_chunk * P);
    }
    if (bad)
        return dpzo__fail(ctx, DPZO_ENOMEM, "trainer: out of memory for the work buffers");
    return DPZO_OK;
}

/* The algorithms that read public batches at every step. */
static int uses_public_alg(dpzo_algorithm a)
{
    return a == DPZO_ALG_PAZO_M || a == DPZO_ALG_PAZO_P || a == DPZO_ALG_PAZO_S ||
           a == DPZO_ALG_DPMD;
}

dpzo_status dpzo__trainer_set_sampling_seed(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t seed)
{
    return dpzo_zo_set_sampling_seed(ctx, tr->zo, seed);
}

void dpzo__trainer_set_noise_hook(dpzo_trainer *tr,
                                  void (*hook)(void *user, uint64_t step, double *out, size_t n),
                                  void *user)
{
    dpzo__zo_set_noise_hook(tr->zo, hook, user);
}

dpzo_zo *dpzo__trainer_zo(const dpzo_trainer *tr) { return tr->zo; }

dpzo_status dpzo_trainer_create(dpzo_ctx *ctx, const dpzo_train_config *cfg,
                                const dpzo_dataset *train, const dpzo_dataset *test,
                                dpzo_trainer **out)
{
    if (cfg == NULL || out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "trainer: NULL configuration or output");
    *out = NULL;
    dpzo_status st = dpzo_train_config_validate(ctx, cfg);
    if (st != DPZO_OK)
        return st;
    dpzo_trainer *tr = calloc(1, sizeof *tr);
    if (tr == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "trainer: out of memory");
    tr->cfg = *cfg;
    tr->test_acc = tr->test_loss = tr->val_acc = tr->val_loss = NAN;
    tr->session_start = -1.0;
    tr->lr_last = dpzo_lr_at(cfg->lr_schedule, cfg->lr, 0, cfg->steps);
    /* the step object opens the privacy object (the plan checked against the profile) and
     * draws the sampling seed */
    if ((st = setup_data(ctx, tr, train, test)) == DPZO_OK &&
        (st = setup_model(ctx, tr)) == DPZO_OK &&
        (st = dpzo__zo_create(ctx, cfg, tr->P, tr->priv.n, DPZO__ZO_TRAINER, &tr->zo)) ==
            DPZO_OK &&
        (st = setup_buffers(ctx, tr)) == DPZO_OK && uses_public_alg(cfg->algorithm))
        /* public batches: shuffled epochs keyed by the (public) seed; nothing secret */
        st = dpzo__sampler_init(ctx, &tr->pub_sampler, DPZO_BATCH_SHUFFLE,
                                cfg->seed ^ 0x7075626c69632121ull, tr->pub.n,
                                cfg->pub.batch_size, 0);
    if (st != DPZO_OK) {
        dpzo_trainer_free(tr);
        return st;
    }
    const dpzo_profile *prof = dpzo_zo_profile(tr->zo);
    dpzo__train_fingerprint(&tr->cfg, prof ? prof->sha256 : NULL, &tr->priv, tr->fingerprint);
    *out = tr;
    return DPZO_OK;
}

void dpzo_trainer_free(dpzo_trainer *tr)
{
    if (tr == NULL)
        return;
    dpzo_dataset_free(&tr->loaded);
    dpzo_dataset_free(&tr->test_loaded);
    dpzo_dataset_free(&tr->pub);
    dpzo_dataset_free(&tr->val);
    if (tr->priv_owned)
        dpzo_dataset_free(&tr->priv);
    dpzo_model_free(tr->model);
    dpzo_zo_free(tr->zo);
    dpzo__sampler_free(&tr->pub_sampler);
    void *bufs[] = {tr->theta, tr->idx,   tr->lp,     tr->lm,      tr->LP,      tr->LM,
                    tr->qsum,  tr->gsum,  tr->gnoise, tr->grad,    tr->per_ex,  tr->pub_idx,
                    tr->gpub};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    free(tr);
}

/* ---- accessors ----------------------------------------------------------------------- */

const float *dpzo_trainer_theta(const dpzo_trainer *tr) { return tr->theta; }
size_t dpzo_trainer_n_params(const dpzo_trainer *tr) { return tr->P; }
const dpzo_train_config *dpzo_trainer_config(const dpzo_trainer *tr) { return &tr->cfg; }
const dpzo_privacy *dpzo_trainer_privacy(const dpzo_trainer *tr)
{
    return dpzo__zo_privacy(tr->zo);
}
size_t dpzo_trainer_n_train(const dpzo_trainer *tr) { return tr->priv.n; }
size_t dpzo_trainer_n_public(const dpzo_trainer *tr) { return tr->pub.n; }
size_t dpzo_trainer_n_validation(const dpzo_trainer *tr) { return tr->val.n; }
size_t dpzo_trainer_n_test(const dpzo_trainer *tr) { return tr->test->n; }
const char *dpzo_trainer_fingerprint(const dpzo_trainer *tr) { return tr->fingerprint; }

void dpzo_trainer_report_now(const dpzo_trainer *tr, dpzo_train_report *r)
{
    const dpzo__loss_acc *loss = dpzo__zo_loss(tr->zo);
    r->step = dpzo_zo_steps_done(tr->zo);
    r->steps = tr->cfg.steps;
    r->evaluated = 0;
    r->train_loss = loss->count > 0 ? loss->sum / (double)loss->count : NAN;
    r->test_accuracy = tr->test_acc;
    r->test_loss = tr->test_loss;
    r->validation_accuracy = tr->val_acc;
    r->validation_loss = tr->val_loss;
    r->epsilon_spent = dpzo_zo_epsilon(tr->zo);
    r->lr = tr->lr_last;
    r->seconds = dpzo__trainer_seconds(tr);
}

dpzo_status dpzo_trainer_evaluate(dpzo_ctx *ctx, dpzo_trainer *tr, double *accuracy,
                                  double *loss)
{
    dpzo_status st = dpzo_model_accuracy(tr->model, tr->theta, tr->test, accuracy, loss);
    if (st != DPZO_OK)
        return dpzo__fail(ctx, st, "test evaluation failed: %s", dpzo_status_name(st));
    return DPZO_OK;
}

dpzo_status dpzo_trainer_validate(dpzo_ctx *ctx, dpzo_trainer *tr, double *accuracy,
                                  double *loss)
{
    *accuracy = *loss = NAN;
    if (tr->val.n == 0)
        return DPZO_OK;
    dpzo_status st = dpzo_model_accuracy(tr->model, tr->theta, &tr->val, accuracy, loss);
    if (st != DPZO_OK)
        return dpzo__fail(ctx, st, "validation failed: %s", dpzo_status_name(st));
    return DPZO_OK;
}

/* ---- metrics ------------------------------------------------------------------------- */

/* x as JSON: the shortest text that reads back as x; NaN null, infinities "inf". */
static const char *json_num(char *buf, size_t size, double x)
{
    if (isnan(x))
        return "null";
    if (isinf(x))
        return x > 0 ? "\"inf\"" : "\"-inf\"";
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

static dpzo_status metrics_open(dpzo_ctx *ctx, dpzo_trainer *tr, FILE **out)
{
    *out = NULL;
    if (tr->cfg.metrics[0] == '\0')
        return DPZO_OK;
    /* a link is followed to its regular target; a device or FIFO is written directly,
     * never replaced; a directory is refused (common/dpzo_io.c, docs/files.md) */
    char err[DPZO_IO_ERRMAX];
    FILE *f = dpzo_io_open_append(tr->cfg.metrics, "metrics", tr->metrics_offset == 0, NULL,
                                  err, sizeof err);
    if (f == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
    *out = f;
    return DPZO_OK;
}

/* Before the first step (and before the metrics file is opened, which empties it on a fresh
 * run): the checkpoint and the metrics paths must be writable as they will be written, so
 * that a run does not spend its privacy budget and then lose its state (issue 28, item 6).
 * Nothing at either path is created or changed (dpzo_io_check_output). */
static dpzo_status outputs_check(dpzo_ctx *ctx, const dpzo_trainer *tr)
{
    char err[DPZO_IO_ERRMAX];
    if (tr->cfg.checkpoint[0] &&
        dpzo_io_check_output(tr->cfg.checkpoint, "checkpoint", 0, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s (checked before the first step; nothing was "
                          "trained)", err);
    if (tr->cfg.metrics[0] &&
        dpzo_io_check_output(tr->cfg.metrics, "metrics", DPZO_IO_DIRECT, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s (checked before the first step; nothing was "
                          "trained)", err);
    return DPZO_OK;
}

/* One JSON line per evaluation. The line's train_loss covers the steps since the previous
 * line; the accumulators restart. */
static dpzo_status metrics_line(dpzo_ctx *ctx, dpzo_trainer *tr, FILE *f, const char *stopped)
{
    dpzo_train_report r;
    dpzo_trainer_report_now(tr, &r);
    *dpzo__zo_loss(tr->zo) = (dpzo__loss_acc){0.0, 0};
    if (f == NULL)
        return DPZO_OK;
    char b[7][40], val[128] = ""; /* the validation fields only where there are such rows */
    if (tr->val.n > 0)
        snprintf(val, sizeof val, ", \"validation_accuracy\": %s, \"validation_loss\": %s",
                 json_num(b[5], 40, r.validation_accuracy),
                 json_num(b[6], 40, r.validation_loss));
    int n = fprintf(f,
                    "{\"step\": %llu, \"train_loss\": %s, \"test_accuracy\": %s, "
                    "\"test_loss\": %s%s, \"epsilon_spent\": %s, \"lr\": %s, "
                    "\"seconds\": %.3f%s%s%s}\n",
                    (unsigned long long)r.step, json_num(b[0], 40, r.train_loss),
                    json_num(b[1], 40, r.test_accuracy), json_num(b[2], 40, r.test_loss), val,
                    json_num(b[3], 40, r.epsilon_spent), json_num(b[4], 40, r.lr), r.seconds,
                    stopped ? ", \"stopped\": \"" : "", stopped ? stopped : "",
                    stopped ? "\"" : "");
    if (n < 0 || fflush(f) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "metrics: cannot write %s: %s", tr->cfg.metrics,
                          strerror(errno));
    tr->metrics_offset += (uint64_t)n;
    return DPZO_OK;
}

/* Evaluates on the test set (and the validation rows) and logs it. */
static dpzo_status eval_and_log(dpzo_ctx *ctx, dpzo_trainer *tr, FILE *f, const char *stopped,
                                dpzo_train_report *r)
{
    dpzo_status st = dpzo_trainer_evaluate(ctx, tr, &tr->test_acc, &tr->test_loss);
    if (st == DPZO_OK)
        st = dpzo_trainer_validate(ctx, tr, &tr->val_acc, &tr->val_loss);
    if (st != DPZO_OK)
        return st;
    dpzo_trainer_report_now(tr, r); /* train_loss before the accumulators restart */
    r->evaluated = 1;
    return metrics_line(ctx, tr, f, stopped);
}

/* ---- the run ------------------------------------------------------------------------- */

/* DPZO_OK when step t + 1 stays within the budget, else a clean stop's message. */
static dpzo_status budget_check(dpzo_ctx *ctx, const dpzo_trainer *tr)
{
    const dpzo_privacy *p = dpzo__zo_privacy(tr->zo);
    if (p == NULL)
        return DPZO_OK;
    const uint64_t step = dpzo_zo_steps_done(tr->zo);
    double next = dpzo_privacy_epsilon_after(p, step + 1);
    double budget = dpzo_privacy_budget(p);
    if (next <= budget)
        return DPZO_OK;
    return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                      "privacy budget: step %llu would spend epsilon %g, beyond the profile's "
                      "%g at delta %g; stopped after %llu steps (epsilon spent %.10g)",
                      (unsigned long long)(step + 1), next, budget, dpzo_privacy_delta(p),
                      (unsigned long long)step, dpzo_zo_epsilon(tr->zo));
}

static int due(uint64_t step, uint64_t every) { return every > 0 && step % every == 0; }

typedef struct {
    FILE *metrics;
    uint64_t saved_step; /* UINT64_MAX: not saved in this run call */
    dpzo_train_callback cb;
    void *user;
} run_state;

/* After step tr->step: the evaluation, metrics line and checkpoint that are due, then the
 * callback. Sets *stop when the callback asks to stop. */
static dpzo_status after_step(dpzo_ctx *ctx, dpzo_trainer *tr, run_state *rs, int *stop)
{
    const dpzo_train_config *c = &tr->cfg;
    const uint64_t step = dpzo_zo_steps_done(tr->zo);
    dpzo_train_report r;
    dpzo_status st = DPZO_OK;
    if (due(step, c->eval_every) || step == c->steps)
        st = eval_and_log(ctx, tr, rs->metrics, NULL, &r);
    else
        dpzo_trainer_report_now(tr, &r);
    if (st == DPZO_OK && c->checkpoint[0] && due(step, c->checkpoint_every)) {
        st = dpzo_trainer_save(ctx, tr, c->checkpoint);
        rs->saved_step = step;
    }
    if (st == DPZO_OK && rs->cb != NULL && rs->cb(rs->user, &r) != 0)
        *stop = 1;
    return st;
}

/* The whole loop; the caller closes the metrics file. */
static dpzo_status run_loop(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t until, run_state *rs)
{
    dpzo_status st = DPZO_OK;
    int stop = 0;
    if (dpzo_zo_steps_done(tr->zo) == 0 && isnan(tr->test_acc)) { /* a fresh run */
        dpzo_train_report r;
        if (tr->cfg.pretrain.steps > 0)
            st = dpzo__pretrain(ctx, tr);
        if (st == DPZO_OK)
            st = eval_and_log(ctx, tr, rs->metrics, NULL, &r);
        if (st == DPZO_OK && rs->cb != NULL && rs->cb(rs->user, &r) != 0)
            stop = 1;
    }
    while (st == DPZO_OK && !stop && dpzo_zo_steps_done(tr->zo) < until) {
        if ((st = budget_check(ctx, tr)) != DPZO_OK) {
            /* log where it stopped; a success leaves the budget's message in ctx */
            dpzo_train_report r;
            dpzo_status est = eval_and_log(ctx, tr, rs->metrics, "privacy budget", &r);
            st = est != DPZO_OK ? est : st;
            break;
        }
        if ((st = dpzo__trainer_step(ctx, tr)) != DPZO_OK)
            break;
        st = after_step(ctx, tr, rs, &stop);
    }
    const uint64_t step = dpzo_zo_steps_done(tr->zo);
    if (st == DPZO_OK && stop && step < until)
        st = dpzo__fail(ctx, DPZO_EINTERRUPTED, "stopped after %llu of %llu steps",
                        (unsigned long long)step, (unsigned long long)tr->cfg.steps);
    return st;
}

/* The metrics file reaches the disk before a checkpoint that records its length. */
static dpzo_status finish_run(dpzo_ctx *ctx, dpzo_trainer *tr, run_state *rs, dpzo_status st)
{
    if (rs->metrics != NULL) {
        /* EINVAL: a device or FIFO, which has nothing to sync */
        int bad = fflush(rs->metrics) != 0 ||
                  (fsync(fileno(rs->metrics)) != 0 && errno != EINVAL);
        bad |= fclose(rs->metrics) != 0;
        if (bad && st == DPZO_OK)
            st = dpzo__fail(ctx, DPZO_EINVAL, "metrics: cannot write %s", tr->cfg.metrics);
    }
    int saveable = st == DPZO_OK || st == DPZO_EINTERRUPTED || st == DPZO_EINFEASIBLE;
    if (saveable && tr->cfg.checkpoint[0] && rs->saved_step != dpzo_zo_steps_done(tr->zo)) {
        /* a successful save leaves ctx's message (why the run stopped) as it is */
        dpzo_status sst = dpzo_trainer_save(ctx, tr, tr->cfg.checkpoint);
        st = sst != DPZO_OK ? sst : st;
    }
    tr->seconds = dpzo__trainer_seconds(tr);
    tr->session_start = -1.0;
    return st;
}

dpzo_status dpzo_trainer_run(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t until,
                             dpzo_train_callback cb, void *user)
{
    if (until == 0 || until > tr->cfg.steps)
        until = tr->cfg.steps;
    run_state rs = {NULL, UINT64_MAX, cb, user};
    dpzo_status st = outputs_check(ctx, tr);
    if (st == DPZO_OK)
        st = metrics_open(ctx, tr, &rs.metrics);
    if (st != DPZO_OK)
        return st;
    tr->session_start = dpzo__now_seconds();
    st = run_loop(ctx, tr, until, &rs);
    return finish_run(ctx, tr, &rs, st);
}
