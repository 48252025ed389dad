/* SPDX-License-Identifier: Apache-2.0 */
/* bench/bench_zo.c: the cost of a zeroth-order step against the two forward passes it
 * contains and against the BLAS time of its own matrix products, steps per second, and
 * memory against inference.
 *
 *   dpzo-bench-zo [--model SPEC]... [--algorithm mezo|dpzero] [--batch B] [--steps N]
 *                 [--queries Q] [--threads T] [--rounds R] [--min-time S] [--profile FILE]
 *
 * On Fashion-MNIST (Debian's dataset-fashion-mnist). For each model, after a warm-up, R
 * rounds; each round times, one after the other (so that load from other jobs hits all of
 * them alike):
 *   step   real steps of the trainer (dpzo_trainer_run: batches of exactly B, Q queries,
 *          Gaussian directions regenerated on the fly, the fused update; dpzero also
 *          clips, draws the noise and keeps the ledger), each step timed between
 *          consecutive step reports (evaluation steps excluded), N / R steps a round;
 *   fwd2   two plain forward passes (dpzo_model_losses at theta, no perturbation) over a
 *          fresh random batch of B rows (as a training step sees): what a ZO step cannot
 *          avoid;
 *   pm     the step's fused evaluation of both perturbed passes (dpzo_model_losses_pm, a
 *          Gaussian direction) on such batches: the step's forward work;
 *   sgemm  (MLPs only) the step's matrix products alone with OpenBLAS's cblas_sgemm, in
 *          this process and on the same threads: for each sign, X[B x in] W^T[in x out] for
 *          every layer (mlp:128: X[256x784] W1^T and H[256x128] W2^T, twice: 104 MFLOP);
 *          the bound a BLAS-based step can approach.
 *   dir    one Gaussian direction of the model's size (dpzo_dir_fill), and
 *   gather B random rows of the data set copied into one matrix (memcpy), the step's two
 *          parts that are neither products nor avoidable: with sgemm they make the floor
 *          (floor_over_sgemm_min = (sgemm + dir + gather) / sgemm, minima).
 * fwd2, pm, sgemm, dir and gather repeat until --min-time seconds (default 0.2) have passed in the
 * round. Every repetition and every step is one sample; the JSON gives the minimum and the
 * median over all rounds' samples (the plain names fwd2_s, pm_s, step_s are medians), in
 * wall-clock time and (cpu_*) in this process's CPU time, all threads: with one thread the
 * CPU time does not count the time other jobs take the core away.
 *   ratio          step / (Q fwd2), medians (the goal is at most 1.2); ratio_min: minima;
 *   step_over_sgemm  step / sgemm, medians and minima (issue 18's goal: at most 1.5);
 *   memory         peak resident size (VmHWM) after inference (the batch forward passes
 *                  and a test-set evaluation, then the model freed) and after the trainer's
 *                  first steps, before the timing rounds: the difference is what ZO
 *                  training adds over inference.
 * --threads T sets the trainer's `threads`, dpzo_model_set_threads of the timed models and
 * OpenBLAS's threads for sgemm (0: the machine's cores; default 1). --algorithm dpzero
 * (default mezo) needs a noise profile accounted without replacement for this B, the data
 * set's size and the run's steps: without --profile one is made in a temporary file
 * (dpzo_profile_gaussian: epsilon 3, delta 1e-5, C = 20, sensitivity 2C).
 * Prints one JSON object per model on stdout (bench/report_zo.py and
 * bench/report_cpu_step.py make the tables). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>
#include <dpzo/blas.h>
#include "dpzo/model.h"
#include "dpzo/profile.h"
#include "dpzo/trainer.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* this process's CPU time, all threads */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The machine the times are of: Linux's CPU model name (/proc/cpuinfo), else "?"; quotes
 * and backslashes dropped (it goes into JSON). */
static void cpu_name(char *out, size_t size)
{
    snprintf(out, size, "?");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *v = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !v)
            continue;
        v += strspn(v + 1, " \t") + 1;
        size_t k = 0;
        for (; *v && *v != '\n' && k + 1 < size; v++)
            if (*v != '"' && *v != '\\')
                out[k++] = *v;
        out[k] = '\0';
        break;
    }
    fclose(f);
}

/* The peak resident size: Linux's VmHWM (of this program's memory: getrusage's ru_maxrss
 * would carry a larger parent's peak over fork and exec, as under bench/torch_step.py),
 * else getrusage. */
static double maxrss_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        double kib = -1.0;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) {
                kib = strtod(line + 6, NULL);
                break;
            }
        fclose(f);
        if (kib >= 0.0)
            return kib / 1024.0;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* ---- samples: min and median ------------------------------------------------------- */

/* wall-clock times in v, the same samples' process CPU times in c (sorted apart) */
typedef struct {
    double *v, *c;
    size_t n, cap;
} samples;

static int add_sample(samples *s, double wall, double cpu)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return 1;
        s->v = v;
        double *c = realloc(s->c, cap * sizeof *c);
        if (!c)
            return 1;
        s->c = c;
        s->cap = cap;
    }
    s->c[s->n] = cpu;
    s->v[s->n++] = wall;
    return 0;
}

static void free_samples(samples *s)
{
    free(s->v);
    free(s->c);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* min and median of n values (sorted in place); NaN when there are none */
static void min_median(double *v, size_t n, double *min, double *median)
{
    if (n == 0) {
        *min = *median = NAN;
        return;
    }
    qsort(v, n, sizeof *v, cmp_double);
    *min = v[0];
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    double min, med, cpu_min, cpu_med;
} stats;

static stats summarize(samples *s)
{
    stats r;
    min_median(s->v, s->n, &r.min, &r.med);
    min_median(s->c, s->n, &r.cpu_min, &r.cpu_med);
    return r;
}

/* ---- options -------------------------------------------------------------------------- */

typedef struct {
    dpzo_algorithm algorithm;
    size_t batch;
    uint64_t steps;
    unsigned queries, threads, rounds;
    double min_time;
    const char *profile; /* dpzero: NULL = make one */
} options;

#define DPZERO_CLIP 20.0
#define WARM_STEPS 2

/* ---- the trainer's steps -------------------------------------------------------------- */

typedef struct {
    double last, last_cpu;
    samples *out;
    int fail;
} timing;

static int on_step(void *user, const dpzo_train_report *r)
{
    timing *t = user;
    double now = now_s(), cpu = cpu_s();
    /* a step is timed from the previous report (or from the start of the round's
     * dpzo_trainer_run call); evaluation steps are skipped */
    if (t->out && r->step > 0 && !r->evaluated && t->last > 0.0)
        t->fail |= add_sample(t->out, now - t->last, cpu - t->last_cpu);
    t->last = now;
    t->last_cpu = cpu;
    return 0;
}

/* ---- sgemm: the MLP step's matrix products with OpenBLAS ------------------------------ */

typedef struct {
    size_t n_layers, batch;
    size_t dims[17];   /* dims[0] input, dims[n_layers] classes */
    float *x;          /* batch x dims[0] */
    float *w[2][16];   /* per sign and layer: dims[l+1] x dims[l] (the Linear layout) */
    float *h[2][16];   /* per sign and layer: batch x dims[l+1] */
    double flop;
} gemm_anchor;

/* "mlp:H1-H2-..." -> the layer widths; 0 when the spec is not an MLP */
static int gemm_setup(gemm_anchor *g, const char *spec, const dpzo_dataset *ds, size_t batch)
{
    memset(g, 0, sizeof *g);
    if (strncmp(spec, "mlp:", 4) != 0)
        return 0;
    size_t n = 0;
    g->dims[n++] = ds->dim;
    const char *p = spec + 4;
    while (*p) {
        char *end;
        unsigned long h = strtoul(p, &end, 10);
        if (end == p || h == 0 || n >= 16)
            return 0;
        g->dims[n++] = h;
        p = *end == '-' ? end + 1 : end;
    }
    g->dims[n] = (size_t)ds->n_classes;
    g->n_layers = n;
    g->batch = batch;
    g->x = malloc(batch * ds->dim * sizeof *g->x);
    if (!g->x)
        return -1;
    uint64_t lcg = 99;
    for (size_t i = 0; i < batch; i++) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(g->x + i * ds->dim, ds->x + ((lcg >> 33) % ds->n) * ds->dim,
               ds->dim * sizeof *g->x);
    }
    for (int s = 0; s < 2; s++)
        for (size_t l = 0; l < n; l++) {
            size_t in = g->dims[l], out = g->dims[l + 1];
            g->w[s][l] = malloc(in * out * sizeof(float));
            g->h[s][l] = malloc(batch * out * sizeof(float));
            if (!g->w[s][l] || !g->h[s][l])
                return -1;
            for (size_t j = 0; j < in * out; j++) {
                lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
                g->w[s][l][j] = ((float)(lcg >> 40) / 16777216.0f - 0.5f) * 0.1f;
            }
            if (s == 0)
                g->flop += 2.0 * 2.0 * (double)batch * (double)in * (double)out;
        }
    return 1;
}

static void gemm_run(const gemm_anchor *g)
{
    for (int s = 0; s < 2; s++) {
        const float *in = g->x;
        for (size_t l = 0; l < g->n_layers; l++) {
            int k = (int)g->dims[l], nout = (int)g->dims[l + 1];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->batch, nout, k, 1.0f,
                        in, k, g->w[s][l], k, 0.0f, g->h[s][l], nout);
            in = g->h[s][l];
        }
    }
}

static void gemm_free(gemm_anchor *g)
{
    free(g->x);
    for (int s = 0; s < 2; s++)
        for (size_t l = 0; l < g->n_layers; l++) {
            free(g->w[s][l]);
            free(g->h[s][l]);
        }
}

/* ---- a noise profile for dpzero ------------------------------------------------------- */

static int make_profile(dpzo_ctx *ctx, const options *o, uint64_t n, uint64_t steps,
                        char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, size, "%s/dpzo-bench-zo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("dpzo-bench-zo: mkstemp");
        return 1;
    }
    close(fd);
    dpzo_profile_gaussian_spec spec = {
        .epsilon = 3.0, .delta = 1e-5, .accountant = "rdp",
        .sensitivity = 2.0 * DPZERO_CLIP, /* replace-one adjacency: 2C */
        .sampling = "wor", .batch_size = o->batch, .dataset_size = n, .steps = steps,
        .command = "dpzo-bench-zo"};
    dpzo_profile p;
    if (dpzo_profile_gaussian(ctx, &spec, &p)) {
        unlink(path);
        return 1;
    }
    int bad = dpzo_profile_write_file(ctx, &p, path) != DPZO_OK;
    dpzo_profile_free(&p);
    if (bad)
        unlink(path);
    return bad;
}

/* ---- one model ------------------------------------------------------------------------ */

static void random_batch(uint64_t *lcg, size_t *idx, size_t batch, size_t n)
{
    for (size_t i = 0; i < batch; i++) {
        *lcg = *lcg * 6364136223846793005ull + 1442695040888963407ull;
        idx[i] = (size_t)((*lcg >> 33) % n);
    }
}

static unsigned blas_threads(unsigned threads)
{
    if (threads > 0)
        return threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Repeats PREP (untimed) then WORK (timed, one sample into S) until o->min_time seconds
 * have passed (run_model's rounds). */
#define TIMED(S, PREP, WORK)                                                              \
    do {                                                                                  \
        double t0_ = now_s(), t1_;                                                        \
        do {                                                                              \
            PREP;                                                                         \
            double a_ = now_s(), ac_ = cpu_s();                                           \
            WORK;                                                                         \
            t1_ = now_s();                                                                \
            if (add_sample(&(S), t1_ - a_, cpu_s() - ac_))                                \
                goto fail_mem;                                                            \
        } while (t1_ - t0_ < o->min_time);                                                \
    } while (0)

static int run_model(dpzo_ctx *ctx, const char *spec, const dpzo_dataset *train,
                     const dpzo_dataset *test, const options *o)
{
    const size_t batch = o->batch;
    const unsigned rounds = o->rounds ? o->rounds : 1;
    const uint64_t per_round = (o->steps + rounds - 1) / rounds;
    int rc = 1;
    dpzo_model *m = NULL;
    dpzo_trainer *tr = NULL;
    gemm_anchor g;
    memset(&g, 0, sizeof g);
    samples s_step = {0}, s_fwd2 = {0}, s_pm = {0}, s_gemm = {0}, s_dir = {0}, s_gather = {0};
    float *ubuf = NULL, *xbuf = NULL;
    char prof[1024] = "";
    float *theta = NULL;
    size_t *idx = NULL;
    double *loss = NULL, *loss2 = NULL;
    if (dpzo_model_create(ctx, spec, train->dim, train->rows, train->cols, train->n_classes, &m))
        goto fail;
    dpzo_model_set_threads(m, o->threads);
    unsigned model_threads = dpzo_model_threads(m);
    size_t d = dpzo_model_n_params(m);
    theta = malloc(d * sizeof *theta);
    idx = malloc(batch * sizeof *idx);
    loss = malloc(batch * sizeof *loss);
    loss2 = malloc(batch * sizeof *loss2);
    ubuf = malloc(d * sizeof *ubuf);
    xbuf = malloc(batch * train->dim * sizeof *xbuf);
    if (!theta || !idx || !loss || !loss2 || !ubuf || !xbuf)
        goto fail_mem;
    dpzo_model_init(m, 1, theta);

    /* inference as a deployment does it (warm-up forward passes and the test-set evaluation
     * the trainer runs); then the model is freed so that the trainer's own model reuses its
     * memory and the peak difference is what training adds */
    uint64_t lcg = 12345;
    for (int k = 0; k < 3; k++) {
        random_batch(&lcg, idx, batch, train->n);
        if (dpzo_model_losses(m, theta, NULL, train, idx, batch, loss))
            goto fail;
    }
    double acc, tl;
    if (dpzo_model_accuracy(m, theta, test, &acc, &tl))
        goto fail;
    dpzo_model_free(m);
    m = NULL;
    double rss_inference = maxrss_mib();

    /* the trainer: T leaves one step beyond what is timed, so that the final evaluation
     * (at step T) never runs */
    uint64_t T = WARM_STEPS + (uint64_t)rounds * per_round + 1;
    dpzo_train_config c;
    dpzo_train_config_init(&c);
    c.algorithm = o->algorithm;
    snprintf(c.model, sizeof c.model, "%s", spec);
    c.steps = T;
    c.batch_size = (double)batch;
    c.batching = DPZO_BATCH_SHUFFLE;
    c.lr = 1e-4;
    c.queries = o->queries;
    c.seed = 1;
    c.threads = o->threads;
    if (o->algorithm == DPZO_ALG_DPZERO) {
        c.clip = DPZERO_CLIP;
        if (o->profile)
            snprintf(c.profile, sizeof c.profile, "%s", o->profile);
        else {
            if (make_profile(ctx, o, train->n, T, prof, sizeof prof))
                goto fail;
            snprintf(c.profile, sizeof c.profile, "%s", prof);
        }
    }
    if (dpzo_trainer_create(ctx, &c, train, test, &tr))
        goto fail;
    timing t = {0};
    uint64_t done = WARM_STEPS;
    if (dpzo_trainer_run(ctx, tr, done, on_step, &t)) /* step 0's evaluation, warm-up */
        goto fail;
    double rss_train = maxrss_mib();

    /* the timed models and the BLAS anchor */
    if (dpzo_model_create(ctx, spec, train->dim, train->rows, train->cols, train->n_classes, &m))
        goto fail;
    dpzo_model_set_threads(m, o->threads);
    int have_gemm = gemm_setup(&g, spec, train, batch);
    if (have_gemm < 0)
        goto fail_mem;
    const int nt = (int)blas_threads(o->threads);
    openblas_set_num_threads(nt);
    if (have_gemm)
        gemm_run(&g); /* warm-up */
    uint64_t pm_rep = 0;
    for (unsigned r = 0; r < rounds; r++) {
        /* steps */
        t.out = &s_step;
        t.last = now_s();
        t.last_cpu = cpu_s();
        done += per_round;
        if (dpzo_trainer_run(ctx, tr, done, on_step, &t))
            goto fail;
        t.out = NULL;
        if (t.fail)
            goto fail_mem;
        /* two plain forward passes */
        TIMED(s_fwd2, random_batch(&lcg, idx, batch, train->n), {
            if (dpzo_model_losses(m, theta, NULL, train, idx, batch, loss) ||
                dpzo_model_losses(m, theta, NULL, train, idx, batch, loss))
                goto fail;
        });
        /* the fused +/- evaluation */
        TIMED(s_pm, random_batch(&lcg, idx, batch, train->n), {
            dpzo_dir dir;
            if (dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 1, pm_rep++, 0, d, 1.0) ||
                dpzo_model_losses_pm(m, theta, &dir, 1e-3, train, idx, batch, loss, loss2))
                goto fail;
        });
        /* the products alone (the model may have set OpenBLAS's threads itself) */
        if (have_gemm) {
            openblas_set_num_threads(nt);
            TIMED(s_gemm, (void)0, gemm_run(&g));
        }
        /* the step's parts that are not products: one Gaussian direction of d floats
         * (dpzo_dir_fill, what the step generates once) and the gather of a fresh random
         * batch's rows from the data set (what the model copies into its activations) */
        dpzo_dir dir;
        TIMED(s_dir, {
            if (dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 2, pm_rep++, 0, d, 1.0))
                goto fail;
        }, dpzo_dir_fill(&dir, 0, d, ubuf));
        TIMED(s_gather, random_batch(&lcg, idx, batch, train->n), {
            for (size_t b = 0; b < batch; b++)
                memcpy(xbuf + b * train->dim, train->x + idx[b] * train->dim,
                       train->dim * sizeof *xbuf);
        });
    }

    stats st = summarize(&s_step), fw = summarize(&s_fwd2), pm = summarize(&s_pm),
          gm = summarize(&s_gemm), dr = summarize(&s_dir), ga = summarize(&s_gather);
    const double q = (double)o->queries;
    printf("{\"model\": \"%s\", \"algorithm\": \"%s\", \"n_params\": %zu, \"batch\": %zu, "
           "\"queries\": %u, \"threads\": %u, \"model_threads\": %u, \"blas_threads\": %d, "
           "\"rounds\": %u, ",
           spec, dpzo_algorithm_name(o->algorithm), d, batch, o->queries, o->threads,
           model_threads, openblas_get_num_threads(), rounds);
    printf("\"fwd2_s\": %.6g, \"fwd2_min_s\": %.6g, \"fwd2_n\": %zu, "
           "\"pm_s\": %.6g, \"pm_min_s\": %.6g, \"pm_n\": %zu, "
           "\"step_s\": %.6g, \"step_min_s\": %.6g, \"timed_steps\": %zu, "
           "\"ratio\": %.4f, \"ratio_min\": %.4f, \"steps_per_s\": %.4g, ",
           fw.med, fw.min, s_fwd2.n, pm.med, pm.min, s_pm.n, st.med, st.min, s_step.n,
           st.med / (q * fw.med), st.min / (q * fw.min), 1.0 / st.med);
    /* the same samples in this process's CPU time (all its threads) */
    printf("\"cpu_fwd2_s\": %.6g, \"cpu_fwd2_min_s\": %.6g, \"cpu_pm_s\": %.6g, "
           "\"cpu_pm_min_s\": %.6g, \"cpu_step_s\": %.6g, \"cpu_step_min_s\": %.6g, ",
           fw.cpu_med, fw.cpu_min, pm.cpu_med, pm.cpu_min, st.cpu_med, st.cpu_min);
    if (have_gemm)
        printf("\"sgemm_s\": %.6g, \"sgemm_median_s\": %.6g, \"sgemm_n\": %zu, "
               "\"cpu_sgemm_min_s\": %.6g, \"cpu_sgemm_s\": %.6g, "
               "\"sgemm_mflop\": %.2f, \"sgemm_gflops\": %.2f, \"step_over_sgemm\": %.4f, "
               "\"step_over_sgemm_min\": %.4f, ",
               gm.min, gm.med, s_gemm.n, gm.cpu_min, gm.cpu_med, g.flop * 1e-6,
               g.flop * 1e-9 / gm.min, st.med / gm.med, st.min / gm.min);
    else
        printf("\"sgemm_s\": null, ");
    printf("\"dir_fill_s\": %.6g, \"dir_fill_min_s\": %.6g, \"gather_s\": %.6g, "
           "\"gather_min_s\": %.6g, ",
           dr.med, dr.min, ga.med, ga.min);
    if (have_gemm) /* the products, the direction and the gather: what no step can skip */
        printf("\"floor_over_sgemm_min\": %.4f, ", (gm.min + dr.min + ga.min) / gm.min);
    char cpu[256];
    cpu_name(cpu, sizeof cpu);
    /* dpzo's kernel selection (dpzo/blas.h), made when the trainer created its model */
    dpzo_blas_info bi;
    char blas_line[512];
    dpzo_blas_select(&bi);
    dpzo_blas_describe(&bi, blas_line, sizeof blas_line);
    printf("\"blas\": \"%s\", \"openblas_chosen\": \"%s\", \"blas_switched\": %s, ",
           blas_line, bi.chosen, bi.switched ? "true" : "false");
    printf("\"cpu\": \"%s\", \"nproc\": %ld, \"openblas\": \"%s\", \"openblas_core\": \"%s\", "
           "\"rss_inference_mib\": %.1f, \"rss_train_mib\": %.1f, "
           "\"batch_activations_mib\": %.2f}\n",
           cpu, sysconf(_SC_NPROCESSORS_ONLN), openblas_get_config(), openblas_get_corename(),
           rss_inference, rss_train,
           /* the widest layer's activations for one batch: a yardstick for the goal */
           (double)batch * (double)(spec[0] == 'c' ? 28 * 28 * 16 : 784) * 4.0 / 1048576.0);
    fflush(stdout);
    rc = 0;
    goto done;
fail_mem:
    fprintf(stderr, "dpzo-bench-zo: out of memory\n");
    goto done;
fail:
    fprintf(stderr, "dpzo-bench-zo: %s: %s\n", spec, dpzo_ctx_errmsg(ctx));
done:
    if (prof[0])
        unlink(prof);
    dpzo_trainer_free(tr);
    dpzo_model_free(m);
    gemm_free(&g);
    free_samples(&s_step);
    free_samples(&s_fwd2);
    free_samples(&s_pm);
    free_samples(&s_gemm);
    free_samples(&s_dir);
    free_samples(&s_gather);
    free(ubuf);
    free(xbuf);
    free(theta);
    free(idx);
    free(loss);
    free(loss2);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: dpzo-bench-zo [--model SPEC]... [--algorithm mezo|dpzero] "
                    "[--batch B] [--steps N] [--queries Q] [--threads T] [--rounds R] "
                    "[--min-time S] [--profile FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *models[8];
    size_t n_models = 0;
    options o = {.algorithm = DPZO_ALG_MEZO, .batch = 256, .steps = 40, .queries = 1,
                 .threads = 1, .rounds = 5, .min_time = 0.2, .profile = NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        i++;
        if (!strcmp(a, "--model") && n_models < 8)
            models[n_models++] = v;
        else if (!strcmp(a, "--algorithm") && !strcmp(v, "mezo"))
            o.algorithm = DPZO_ALG_MEZO;
        else if (!strcmp(a, "--algorithm") && !strcmp(v, "dpzero"))
            o.algorithm = DPZO_ALG_DPZERO;
        else if (!strcmp(a, "--batch"))
            o.batch = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--steps"))
            o.steps = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--queries"))
            o.queries = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--threads"))
            o.threads = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--rounds"))
            o.rounds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--min-time"))
            o.min_time = strtod(v, NULL);
        else if (!strcmp(a, "--profile"))
            o.profile = v;
        else
            return usage();
    }
    if (o.batch == 0 || o.steps == 0 || o.queries == 0 || o.rounds == 0 || !(o.min_time >= 0))
        return usage();
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
        rc = run_model(ctx, models[k], &train, &test, &o);
    dpzo_dataset_free(&train);
    dpzo_dataset_free(&test);
    dpzo_ctx_free(ctx);
    return rc;
}
