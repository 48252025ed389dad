/* bench/bench_zo.c: the cost of a zeroth-order step against the two forward passes it
 * contains, steps per second, and memory against inference.
 *
 *   dpzo-bench-zo [--model SPEC] [--batch B] [--steps N] [--queries Q]
 *
 * On Fashion-MNIST (Debian's dataset-fashion-mnist). For each model:
 *   fwd2   the time of two plain forward passes (dpzo_model_losses at theta, no
 *          perturbation) over a random batch of B rows (a fresh one each time, as a
 *          training step sees): what a ZO step cannot avoid;
 *   pm     the time of the step's fused evaluation of both perturbed passes
 *          (dpzo_model_losses_pm, a Gaussian direction) on the same batches, timed after
 *          the training so that it is in neither memory figure: the step's forward work;
 *   step   the mean time of a real MeZO step of the trainer (dpzo_trainer_run, shuffled
 *          batches of exactly B, Q queries, Gaussian directions regenerated on the fly and
 *          the fused update), timed between consecutive step reports (the evaluation steps
 *          are excluded);
 *   ratio  step / (Q fwd2): the goal is at most 1.2;
 *   memory peak resident size (getrusage) after inference (the batch forward passes and a
 *          test-set evaluation, then the model freed) and after the training steps, in the
 *          same process: the difference is what ZO training adds over inference.
 * Prints one JSON object per model on stdout (bench/report_zo.py makes the table). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "dpzo/model.h"
#include "dpzo/trainer.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double maxrss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

typedef struct {
    double last, sum;
    uint64_t n, steps;
} timing;

static int on_step(void *user, const dpzo_train_report *r)
{
    timing *t = user;
    double now = now_s();
    /* a step is timed from the previous report; evaluation steps (0, T) are skipped */
    if (r->step > 1 && !r->evaluated && t->last > 0.0) {
        t->sum += now - t->last;
        t->n++;
    }
    t->last = now;
    return 0;
}

static int run_model(dpzo_ctx *ctx, const char *spec, const dpzo_dataset *train,
                     const dpzo_dataset *test, size_t batch, uint64_t steps, unsigned queries)
{
    dpzo_model *m;
    if (dpzo_model_create(ctx, spec, train->dim, train->rows, train->cols, train->n_classes, &m))
        return 1;
    size_t d = dpzo_model_n_params(m);
    float *theta = malloc(d * sizeof *theta);
    size_t *idx = malloc(batch * sizeof *idx);
    double *loss = malloc(batch * sizeof *loss);
    if (!theta || !idx || !loss)
        return 1;
    dpzo_model_init(m, 1, theta);
    /* two forward passes over a fresh random batch (as a training step sees one: rows
     * gathered from all over the data set), repeated until 1 s has passed */
    const uint64_t lcg0 = 12345;
    uint64_t lcg = lcg0;
    double t0 = now_s(), t1;
    size_t reps = 0;
    do {
        for (size_t i = 0; i < batch; i++) {
            lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
            idx[i] = (size_t)((lcg >> 33) % train->n);
        }
        dpzo_model_losses(m, theta, NULL, train, idx, batch, loss);
        dpzo_model_losses(m, theta, NULL, train, idx, batch, loss);
        reps++;
        t1 = now_s();
    } while (t1 - t0 < 1.0 || reps < 3);
    double fwd2 = (t1 - t0) / (double)reps;
    /* inference as a deployment does it: also the test-set evaluation the trainer runs;
     * then the model is freed so that the trainer's own model reuses its memory and the
     * peak difference is what training adds */
    double acc, tl;
    dpzo_model_accuracy(m, theta, test, &acc, &tl);
    dpzo_model_free(m);
    m = NULL;
    double rss_inference = maxrss_mib();
    /* real MeZO steps */
    dpzo_train_config c;
    dpzo_train_config_init(&c);
    c.algorithm = DPZO_ALG_MEZO;
    snprintf(c.model, sizeof c.model, "%s", spec);
    c.steps = steps;
    c.batch_size = (double)batch;
    c.batching = DPZO_BATCH_SHUFFLE;
    c.lr = 1e-4;
    c.queries = queries;
    c.seed = 1;
    dpzo_trainer *tr;
    if (dpzo_trainer_create(ctx, &c, train, test, &tr)) {
        fprintf(stderr, "dpzo-bench-zo: %s\n", dpzo_ctx_errmsg(ctx));
        return 1;
    }
    timing t = {0};
    if (dpzo_trainer_run(ctx, tr, 0, on_step, &t)) {
        fprintf(stderr, "dpzo-bench-zo: %s\n", dpzo_ctx_errmsg(ctx));
        return 1;
    }
    double step = t.n ? t.sum / (double)t.n : NAN;
    double rss_train = maxrss_mib();
    dpzo_trainer_free(tr);
    /* the fused +/- evaluation on the same batches as fwd2 */
    if (dpzo_model_create(ctx, spec, train->dim, train->rows, train->cols, train->n_classes, &m))
        return 1;
    double *loss2 = malloc(batch * sizeof *loss2);
    if (!loss2)
        return 1;
    lcg = lcg0;
    size_t pm_reps = 0;
    t0 = now_s();
    do {
        for (size_t i = 0; i < batch; i++) {
            lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
            idx[i] = (size_t)((lcg >> 33) % train->n);
        }
        dpzo_dir dir;
        if (dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 1, pm_reps, 0, d, 1.0) ||
            dpzo_model_losses_pm(m, theta, &dir, 1e-3, train, idx, batch, loss, loss2))
            return 1;
        pm_reps++;
        t1 = now_s();
    } while (t1 - t0 < 1.0 || pm_reps < 3);
    double pm = (t1 - t0) / (double)pm_reps;
    dpzo_model_free(m);
    free(loss2);
    printf("{\"model\": \"%s\", \"n_params\": %zu, \"batch\": %zu, \"queries\": %u, "
           "\"fwd2_s\": %.6g, \"pm_s\": %.6g, \"step_s\": %.6g, \"ratio\": %.4f, "
           "\"steps_per_s\": %.4g, "
           "\"timed_steps\": %llu, \"rss_inference_mib\": %.1f, \"rss_train_mib\": %.1f, "
           "\"batch_activations_mib\": %.2f}\n",
           spec, d, batch, queries, fwd2, pm, step, step / (queries * fwd2), 1.0 / step,
           (unsigned long long)t.n, rss_inference, rss_train,
           /* the widest layer's activations for one batch: a yardstick for the goal */
           (double)batch * (double)(spec[0] == 'c' ? 28 * 28 * 16 : 784) * 4.0 / 1048576.0);
    fflush(stdout);
    free(theta);
    free(idx);
    free(loss);
    return 0;
}

int main(int argc, char **argv)
{
    const char *models[8];
    size_t n_models = 0, batch = 256;
    uint64_t steps = 40;
    unsigned queries = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc && n_models < 8)
            models[n_models++] = argv[++i];
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            queries = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: dpzo-bench-zo [--model SPEC]... [--batch B] [--steps N] "
                            "[--queries Q]\n");
            return 2;
        }
    }
    if (n_models == 0) {
        models[n_models++] = "mlp:128";
        models[n_models++] = "cnn:8-16";
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    char dir[1024];
    dpzo_dataset train, test;
    if (dpzo_fmnist_find(ctx, NULL, dir, sizeof dir) ||
        dpzo_fmnist_load(ctx, dir, "train", &train) || dpzo_fmnist_load(ctx, dir, "test", &test)) {
        fprintf(stderr, "dpzo-bench-zo: %s (install dataset-fashion-mnist)\n",
                dpzo_ctx_errmsg(ctx));
        return 1;
    }
    int rc = 0;
    for (size_t k = 0; k < n_models && rc == 0; k++)
        rc = run_model(ctx, models[k], &train, &test, batch, steps, queries);
    dpzo_dataset_free(&train);
    dpzo_dataset_free(&test);
    dpzo_ctx_free(ctx);
    return rc;
}
