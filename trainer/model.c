/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/model.c: the built-in models (MLP and small CNN) with softmax cross-entropy.
 *
 * Specs (dpzo_model_create):
 *   "mlp:H1-H2-..."  linear layers input_dim -> H1 -> H2 -> ... -> n_classes, ReLU after
 *                    every layer but the last; "mlp:" (or "mlp") is logistic regression.
 *   "cnn:C1-C2"      conv3x3(1 -> C1, pad 1) + ReLU + maxpool 2x2, conv3x3(C1 -> C2, pad 1)
 *                    + ReLU + maxpool 2x2, linear to n_classes. "cnn" and "cnn:fmnist" are
 *                    cnn:8-16 (28x28 -> 14x14x8 -> 7x7x16 -> 10). Pools floor odd sides.
 *
 * theta layout: layer by layer, each layer's weights then its bias, row-major (linear
 * W[out][in]; conv W[out][in][ky][kx]; the CNN's linear layer reads the pooled map
 * flattened as (channel, row, col)). dpzo_model_describe prints names, shapes and offsets.
 *
 * Arithmetic: float32 throughout, the matrix products by OpenBLAS (cblas_sgemm):
 *   - a linear layer on a block of rows is one product X W^T; a 3x3 convolution is one
 *     product W col, col the block's im2col matrix (cin 9 x rows h w), as in the backward
 *     pass (dW = D^T X, dX = D W; dW = dOut col^T, dcol = W^T dOut then col2im). The bias is
 *     added to the product's float result, then ReLU (NaN and -0 become +0). Logits are
 *     float, widened to double for the loss.
 *   - loss = logsumexp(z) - z_y in double, logsumexp(z) = max z + log(sum exp(z_k - max z)).
 *   - max-pool takes the first maximum in the order (0,0), (0,1), (1,0), (1,1).
 *   - summed gradients: each block's float product, added into a double sum block after
 *     block in row order, then divided by the batch size and rounded to float.
 *   Tolerance (docs/trainer.md, section 4.1; tests/test_model.c checks it): each
 *   pre-activation of n products (the bias one more) is within gamma_{n+1} sum |w_i x_i|
 *   (+ |b|) of the exact sum of the float operands, gamma_k = k u / (1 - k u), u = 2^-24,
 *   whatever order or FMA use the BLAS picks; errors in a layer's inputs add
 *   sum |w_i| |dx_i|, and ReLU, max-pool and the float rounding of each output (u |z|) carry
 *   them forward. The bits may differ between BLAS builds and CPUs, never between runs on
 *   one machine:
 *   - rows are processed in blocks of a fixed size (ROW_BLK), and each row's results depend
 *     only on its block, so they do not depend on the number of threads, and OpenBLAS is
 *     used single-threaded (openblas_set_num_threads(1) at model creation: the model's
 *     threads run blocks side by side).
 *
 * Perturbed evaluation (dpzo_perturb) materialises one layer at a time into model-owned
 * scratch: w_j = (float)((double)theta[j] + sign * lambda * (double)u_j), u_j the float
 * element from dpzo_dir_fill. theta is never written. The fused evaluation of both signs
 * (dpzo_model_losses_pm) fills each layer's u once and materialises theta + lambda u and
 * theta - lambda u from it by the same formula; a layer reading the input reads it once for
 * both signs (the rows gathered once, one im2col). Each sign's products are the very calls
 * of a one-sign pass (same shapes; the minus sign's rows have their own stride), so its
 * losses are those of the two dpzo_model_losses calls bit for bit (test_model's
 * test_losses_pm; stacking both signs' weights into one product of twice the outputs broke
 * that with OpenBLAS's Haswell kernels).
 * Only one layer's perturbed weights exist at a time.
 *
 * Work is done layer-major on chunks of rows (at most DPZO_ACT_BUDGET activation floats),
 * so memory is bounded whatever the batch size. A model holds scratch buffers: use it from
 * one caller thread at a time (create one model per caller thread; they are cheap). */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cblas.h>
#include "internal.h"
#include "train_internal.h"
#include "zo_math.h" /* kernels/cpu: DPZO_KERNEL_CLONES */
#include "dpzo/blas.h"
#include "dpzo/model.h"

/* Floats of activations kept for one chunk of rows (16 MiB). */
#define DPZO_ACT_BUDGET ((size_t)1 << 22)
/* Floats of one im2col matrix (a block of rows of one conv layer): 4 MiB. */
#define COL_BUDGET ((size_t)1 << 20)
/* Rows per block: the unit of work of a thread (the results depend on it, not on threads).
 * 128 rather than 64: each block's product packs the layer's weights again (at 64, mlp:128's
 * fused evaluation of 256 rows took 1.61 ms against 1.55 ms, one thread, 2-core AMD EPYC
 * with avx512f), and a batch of 256 still makes two blocks. */
#define ROW_BLK 128
/* Largest accepted hidden width / channel count, and number of hidden layers. */
#define MAX_WIDTH ((size_t)1 << 20)
#define MAX_HIDDEN 64
/* Most threads a model runs. */
#define MAX_THREADS 256

typedef enum { OP_LINEAR, OP_CONV, OP_POOL } op_kind;

typedef struct {
    op_kind kind;
    int relu;              /* ReLU on the output */
    int last;              /* the final linear layer: its output is the logits */
    size_t nin, nout;      /* linear: in / out features */
    size_t cin, cout;      /* conv: channels; pool: cin == cout == channels */
    size_t h, w;           /* conv / pool: input spatial size (conv output is the same) */
    size_t in_size, out_size; /* floats per example */
    size_t act_in, act_out;   /* offsets of the input / output segments of an example */
    size_t w_off, n_w, n_b;   /* parameters: weights at w_off, bias right after */
    char name[16];
} op_t;

/* One thread's scratch for a block of rows. */
typedef struct {
    float *z;     /* blk x max_nout: the last linear layer's product */
    float *col;   /* max_col: im2col of a block (backward: also the dcol) */
    float *cout;  /* max_chw blk: a conv product (backward: dOut) */
    float *d1, *d2; /* backward: blk x max_seg deltas */
    float *g;     /* backward: max_layer, a block's layer gradient */
} work_t;

struct dpzo_model;
typedef void (*task_fn)(struct dpzo_model *m, void *arg, size_t task, work_t *w);

struct dpzo_model {
    int is_cnn;
    unsigned threads;   /* dpzo_model_set_threads (>= 1) */
    size_t input_dim, rows, cols;
    size_t n_classes;
    size_t n_params;
    op_t *ops;
    size_t n_ops;
    char *desc;
    size_t act_per_ex;  /* floats of activations per example (all segments) */
    size_t chunk_max;   /* rows per chunk (a multiple of blk unless one chunk) */
    size_t blk;         /* rows per block */
    size_t max_layer;   /* largest n_w + n_b */
    size_t max_nout;    /* largest linear output */
    size_t max_col;     /* largest im2col of a block (floats) */
    size_t max_chw;     /* largest conv cout h w */
    size_t max_seg;     /* largest activation segment (and n_classes) */
    /* scratch */
    float *u;           /* a layer's direction elements */
    float *wst;         /* 2 max_layer: a layer's materialised weights, plus then minus
                         * (stacked: weights of both, then the biases of both) */
    double *gacc;       /* n_params: summed gradient */
    double *probs;      /* n_classes */
    size_t *idx_buf;    /* chunk_max row indices (accuracy) */
    float *act;         /* act_cap floats: chunk x act_per_ex (fused +/-: then the minus
                         * sign's chunk x (act_per_ex - input_dim)) */
    double *logits;     /* logits_cap doubles: chunk x n_classes (fused +/-: two of them) */
    size_t act_cap, logits_cap;
    /* threads: work[0] is the caller's; workers 1 .. n_work - 1 run tasks */
    work_t *work;
    size_t n_work;      /* work areas allocated */
    pthread_t *tid;
    size_t n_tid;       /* workers started */
    pthread_mutex_t mu;
    pthread_cond_t cv_go, cv_done;
    int pool_ready;
    unsigned long gen;  /* task generation */
    int quit;
    task_fn fn;
    void *fn_arg;
    size_t n_tasks, next_task, busy;
};

/* ---- threads ----------------------------------------------------------------------- */

static void pool_stop(dpzo_model *m);

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

static void work_free(work_t *w)
{
    free(w->z);
    free(w->col);
    free(w->cout);
    free(w->d1);
    free(w->d2);
    free(w->g);
    memset(w, 0, sizeof *w);
}

/* Makes n work areas exist; 0 on success. */
static int ensure_work(dpzo_model *m, size_t n)
{
    if (n <= m->n_work)
        return 0;
    work_t *nw = realloc(m->work, n * sizeof *nw);
    if (nw == NULL)
        return -1;
    m->work = nw;
    size_t blk = m->blk, seg = max_sz(m->max_seg, m->n_classes);
    for (; m->n_work < n; m->n_work++) {
        work_t *w = &m->work[m->n_work];
        memset(w, 0, sizeof *w);
        w->z = malloc(max_sz(blk * m->max_nout, 1) * sizeof *w->z);
        w->col = malloc(max_sz(m->max_col, 1) * sizeof *w->col);
        w->cout = malloc(max_sz(m->max_chw * blk, 1) * sizeof *w->cout);
        w->d1 = malloc(blk * seg * sizeof *w->d1);
        w->d2 = malloc(blk * seg * sizeof *w->d2);
        w->g = malloc(max_sz(m->max_layer, 1) * sizeof *w->g);
        if (w->z == NULL || w->col == NULL || w->cout == NULL || w->d1 == NULL ||
            w->d2 == NULL || w->g == NULL) {
            work_free(w);
            return -1;
        }
    }
    return 0;
}

typedef struct {
    dpzo_model *m;
    size_t index;
    unsigned long gen0;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg a = *(worker_arg *)p;
    free(p);
    dpzo_model *m = a.m;
    unsigned long seen = a.gen0;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->quit && m->gen == seen)
            pthread_cond_wait(&m->cv_go, &m->mu);
        if (m->quit)
            break;
        seen = m->gen;
        while (m->next_task < m->n_tasks) {
            size_t t = m->next_task++;
            pthread_mutex_unlock(&m->mu);
            m->fn(m, m->fn_arg, t, &m->work[a.index]);
            pthread_mutex_lock(&m->mu);
        }
        if (--m->busy == 0)
            pthread_cond_signal(&m->cv_done);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* Starts the workers for m->threads (none for one thread); on failure the model runs on
 * the threads it has (the results are the same). */
static void pool_start(dpzo_model *m)
{
    size_t want = m->threads > 1 ? m->threads - 1 : 0;
    if (m->n_tid == want || ensure_work(m, want + 1) != 0)
        return;
    if (!m->pool_ready) {
        if (pthread_mutex_init(&m->mu, NULL) != 0)
            return;
        if (pthread_cond_init(&m->cv_go, NULL) != 0) {
            pthread_mutex_destroy(&m->mu);
            return;
        }
        if (pthread_cond_init(&m->cv_done, NULL) != 0) {
            pthread_cond_destroy(&m->cv_go);
            pthread_mutex_destroy(&m->mu);
            return;
        }
        m->pool_ready = 1;
    }
    pool_stop(m);
    pthread_t *tid = realloc(m->tid, max_sz(want, 1) * sizeof *tid);
    if (tid == NULL)
        return;
    m->tid = tid;
    for (size_t i = 0; i < want; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (a == NULL)
            break;
        *a = (worker_arg){m, i + 1, m->gen};
        if (pthread_create(&m->tid[i], NULL, worker_main, a) != 0) {
            free(a);
            break;
        }
        m->n_tid++;
    }
}

/* Runs fn(m, arg, t, work) for t < n, spread over the model's threads (the caller's
 * among them); returns when all are done. Each task must depend only on t. */
static void run_tasks(dpzo_model *m, task_fn fn, void *arg, size_t n)
{
    if (m->threads > 1 && n > 1)
        pool_start(m);
    if (m->n_tid == 0 || n <= 1) {
        for (size_t t = 0; t < n; t++)
            fn(m, arg, t, &m->work[0]);
        return;
    }
    pthread_mutex_lock(&m->mu);
    m->fn = fn;
    m->fn_arg = arg;
    m->n_tasks = n;
    m->next_task = 0;
    m->busy = m->n_tid;
    m->gen++;
    pthread_cond_broadcast(&m->cv_go);
    while (m->next_task < m->n_tasks) {
        size_t t = m->next_task++;
        pthread_mutex_unlock(&m->mu);
        fn(m, arg, t, &m->work[0]);
        pthread_mutex_lock(&m->mu);
    }
    while (m->busy > 0)
        pthread_cond_wait(&m->cv_done, &m->mu);
    pthread_mutex_unlock(&m->mu);
}

/* ---- generator for init ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- construction ------------------------------------------------------------------ */


/* Parses "N1-N2-..." (positive integers <= MAX_WIDTH) from s; returns the count, or -1. */
static int parse_list(const char *s, size_t *vals, int max_vals)
{
    int n = 0;
    if (*s == '\0')
        return 0;
    for (;;) {
        if (*s < '0' || *s > '9')
            return -1;
        size_t v = 0;
        while (*s >= '0' && *s <= '9') {
            v = v * 10 + (size_t)(*s - '0');
            if (v > MAX_WIDTH)
                return -1;
            s++;
        }
        if (v == 0 || n == max_vals)
            return -1;
        vals[n++] = v;
        if (*s == '\0')
            return n;
        if (*s != '-')
            return -1;
        s++;
    }
}

static void add_linear(dpzo_model *m, size_t nin, size_t nout, int last, size_t *act, size_t *par,
                       int k)
{
    op_t *op = &m->ops[m->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = OP_LINEAR;
    op->relu = !last;
    op->last = last;
    op->nin = nin;
    op->nout = nout;
    op->in_size = nin;
    op->out_size = last ? 0 : nout;
    op->act_in = *act - nin;
    op->act_out = *act;
    *act += op->out_size;
    op->w_off = *par;
    op->n_w = nin * nout;
    op->n_b = nout;
    *par += op->n_w + op->n_b;
    snprintf(op->name, sizeof op->name, "fc%d", k);
}

static void add_conv(dpzo_model *m, size_t cin, size_t cout, size_t h, size_t w, size_t *act,
                     size_t *par, int k)
{
    op_t *op = &m->ops[m->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = OP_CONV;
    op->relu = 1;
    op->cin = cin;
    op->cout = cout;
    op->h = h;
    op->w = w;
    op->in_size = cin * h * w;
    op->out_size = cout * h * w;
    op->act_in = *act - op->in_size;
    op->act_out = *act;
    *act += op->out_size;
    op->w_off = *par;
    op->n_w = cout * cin * 9;
    op->n_b = cout;
    *par += op->n_w + op->n_b;
    snprintf(op->name, sizeof op->name, "conv%d", k);
}

static void add_pool(dpzo_model *m, size_t c, size_t h, size_t w, size_t *act)
{
    op_t *op = &m->ops[m->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = OP_POOL;
    op->cin = op->cout = c;
    op->h = h;
    op->w = w;
    op->in_size = c * h * w;
    op->out_size = c * (h / 2) * (w / 2);
    op->act_in = *act - op->in_size;
    op->act_out = *act;
    *act += op->out_size;
    snprintf(op->name, sizeof op->name, "pool");
}

/* Appends formatted text to m->desc (grown as needed). */
static int desc_add(dpzo_model *m, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int desc_add(dpzo_model *m, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(m->desc + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -1;
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return 0;
        }
        size_t ncap = 2 * *cap + (size_t)n;
        char *nd = realloc(m->desc, ncap);
        if (nd == NULL)
            return -1;
        m->desc = nd;
        *cap = ncap;
    }
}

static int build_desc(dpzo_model *m, const char *spec_canon)
{
    size_t len = 0, cap = 1024;
    m->desc = malloc(cap);
    if (m->desc == NULL)
        return -1;
    m->desc[0] = '\0';
    int r = desc_add(m, &len, &cap, "%s: %zu parameters (float32); theta = each layer's "
                                    "weights then bias, row-major:\n",
                     spec_canon, m->n_params);
    for (size_t l = 0; l < m->n_ops && r == 0; l++) {
        const op_t *op = &m->ops[l];
        if (op->kind == OP_LINEAR) {
            r = desc_add(m, &len, &cap, "  %s.weight [%zu x %zu] (out, in) at %zu\n", op->name,
                         op->nout, op->nin, op->w_off);
            if (r == 0)
                r = desc_add(m, &len, &cap, "  %s.bias [%zu] at %zu\n", op->name, op->nout,
                             op->w_off + op->n_w);
        } else if (op->kind == OP_CONV) {
            r = desc_add(m, &len, &cap,
                         "  %s.weight [%zu x %zu x 3 x 3] (out, in, ky, kx) at %zu; input %zu x "
                         "%zu x %zu, pad 1, ReLU, maxpool 2x2 -> %zu x %zu x %zu\n",
                         op->name, op->cout, op->cin, op->w_off, op->cin, op->h, op->w,
                         op->cout, op->h / 2, op->w / 2);
            if (r == 0)
                r = desc_add(m, &len, &cap, "  %s.bias [%zu] at %zu\n", op->name, op->cout,
                             op->w_off + op->n_w);
        }
    }
    if (r == 0)
        r = desc_add(m, &len, &cap,
                     "%s; softmax cross-entropy over %zu classes\n",
                     m->is_cnn ? "the linear layer reads the pooled map flattened as (channel, "
                                 "row, col)"
                               : "ReLU after every linear layer but the last",
                     m->n_classes);
    return r;
}

dpzo_status dpzo_model_create(dpzo_ctx *ctx, const char *spec, size_t input_dim, size_t rows,
                              size_t cols, int n_classes, dpzo_model **out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "dpzo_model_create: no output pointer");
    *out = NULL;
    if (spec == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "model spec: none given");
    if (input_dim == 0 || input_dim > ((size_t)1 << 24))
        return dpzo__fail(ctx, DPZO_EINVAL, "model '%s': input dimension %zu out of range", spec,
                          input_dim);
    if (n_classes < 2 || (size_t)n_classes > MAX_WIDTH)
        return dpzo__fail(ctx, DPZO_EINVAL, "model '%s': need at least 2 classes, got %d", spec,
                          n_classes);
    size_t width[MAX_HIDDEN];
    int n_hidden, is_cnn;
    if (strncmp(spec, "mlp", 3) == 0 && (spec[3] == '\0' || spec[3] == ':')) {
        is_cnn = 0;
        n_hidden = parse_list(spec[3] == ':' ? spec + 4 : spec + 3, width, MAX_HIDDEN);
        if (n_hidden < 0)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "model '%s': expected mlp:H1-H2-... (hidden widths, positive "
                              "integers <= %zu, at most %d of them)",
                              spec, MAX_WIDTH, MAX_HIDDEN);
    } else if (strncmp(spec, "cnn", 3) == 0 && (spec[3] == '\0' || spec[3] == ':')) {
        is_cnn = 1;
        if (spec[3] == '\0' || strcmp(spec + 4, "fmnist") == 0) {
            width[0] = 8;
            width[1] = 16;
            n_hidden = 2;
        } else {
            n_hidden = parse_list(spec + 4, width, 2);
            if (n_hidden != 2 || width[0] > 4096 || width[1] > 4096)
                return dpzo__fail(ctx, DPZO_EINVAL,
                                  "model '%s': expected cnn, cnn:fmnist or cnn:C1-C2 (channel "
                                  "counts, positive integers <= 4096)",
                                  spec);
        }
        if (rows < 4 || cols < 4 || rows * cols != input_dim)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "model '%s': needs images of at least 4x4 pixels with rows * cols "
                              "== input dimension (got %zu x %zu, dimension %zu)",
                              spec, rows, cols, input_dim);
    } else {
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "model '%s': unknown (expected mlp:H1-H2-... or cnn[:C1-C2])", spec);
    }

    dpzo_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "model '%s': out of memory", spec);
    m->is_cnn = is_cnn;
    m->input_dim = input_dim;
    m->rows = rows;
    m->cols = cols;
    m->n_classes = (size_t)n_classes;
    m->ops = calloc((size_t)n_hidden + 6, sizeof *m->ops);
    if (m->ops == NULL) {
        free(m);
        return dpzo__fail(ctx, DPZO_ENOMEM, "model '%s': out of memory", spec);
    }
    size_t act = input_dim, par = 0;
    char canon[2048]; /* 2 x MAX_HIDDEN widths of <= 8 characters, and a little */
    size_t cl = 0;
    if (!is_cnn) {
        size_t prev = input_dim;
        cl += (size_t)snprintf(canon + cl, sizeof canon - cl, "mlp:");
        for (int k = 0; k < n_hidden; k++) {
            add_linear(m, prev, width[k], 0, &act, &par, k + 1);
            cl += (size_t)snprintf(canon + cl, sizeof canon - cl, "%s%zu", k ? "-" : "",
                                   width[k]);
            prev = width[k];
        }
        add_linear(m, prev, m->n_classes, 1, &act, &par, n_hidden + 1);
        cl += (size_t)snprintf(canon + cl, sizeof canon - cl, " (%zu", input_dim);
        for (int k = 0; k < n_hidden; k++)
            cl += (size_t)snprintf(canon + cl, sizeof canon - cl, "-%zu", width[k]);
        snprintf(canon + cl, sizeof canon - cl, "-%zu)", m->n_classes);
    } else {
        size_t h = rows, w = cols;
        add_conv(m, 1, width[0], h, w, &act, &par, 1);
        add_pool(m, width[0], h, w, &act);
        h /= 2;
        w /= 2;
        add_conv(m, width[0], width[1], h, w, &act, &par, 2);
        add_pool(m, width[1], h, w, &act);
        h /= 2;
        w /= 2;
        add_linear(m, width[1] * h * w, m->n_classes, 1, &act, &par, 3);
        snprintf(m->ops[m->n_ops - 1].name, sizeof m->ops[0].name, "fc");
        snprintf(canon, sizeof canon, "cnn:%zu-%zu (1x%zux%zu -> %zux%zux%zu -> %zux%zux%zu -> "
                                      "%zu)",
                 width[0], width[1], rows, cols, width[0], rows / 2, cols / 2, width[1], h, w,
                 m->n_classes);
    }
    m->n_params = par;
    m->act_per_ex = act;
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        m->max_seg = max_sz(m->max_seg, max_sz(op->in_size, op->out_size));
        if (op->kind == OP_LINEAR) {
            m->max_layer = max_sz(m->max_layer, op->n_w + op->n_b);
            m->max_nout = max_sz(m->max_nout, op->nout);
            m->max_seg = max_sz(m->max_seg, op->nout);
        } else if (op->kind == OP_CONV) {
            m->max_layer = max_sz(m->max_layer, op->n_w + op->n_b);
            m->max_chw = max_sz(m->max_chw, op->cout * op->h * op->w);
            m->max_col = max_sz(m->max_col, op->cin * 9 * op->h * op->w);
        }
    }
    /* rows per block: ROW_BLK, fewer when one example's im2col is large */
    m->blk = ROW_BLK;
    if (m->max_col > 0)
        m->blk = max_sz(1, COL_BUDGET / m->max_col < ROW_BLK ? COL_BUDGET / m->max_col : ROW_BLK);
    m->max_col *= m->blk;
    m->chunk_max = max_sz(1, DPZO_ACT_BUDGET / act);
    if (m->chunk_max > m->blk)
        m->chunk_max -= m->chunk_max % m->blk;
    /* cblas_sgemm takes int sizes and strides: the largest are a row of activations, a
     * block's im2col and a block's conv output */
    if (act > INT_MAX || m->max_col > INT_MAX || m->max_chw * m->blk > INT_MAX ||
        m->max_layer > INT_MAX) {
        dpzo_model_free(m);
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "model '%s': too large for the BLAS's 32-bit sizes (%zu activations "
                          "per example)",
                          spec, act);
    }
    m->u = malloc(max_sz(m->max_layer, 1) * sizeof *m->u);
    m->wst = malloc(2 * max_sz(m->max_layer, 1) * sizeof *m->wst);
    m->gacc = malloc(m->n_params * sizeof *m->gacc);
    m->probs = malloc(m->n_classes * sizeof *m->probs);
    m->idx_buf = malloc(m->chunk_max * sizeof *m->idx_buf);
    m->threads = 1;
    if (m->u == NULL || m->wst == NULL || m->gacc == NULL || m->probs == NULL ||
        m->idx_buf == NULL || build_desc(m, canon) != 0 || ensure_work(m, 1) != 0) {
        dpzo_model_free(m);
        return dpzo__fail(ctx, DPZO_ENOMEM, "model '%s': out of memory", spec);
    }
    /* OpenBLAS's kernels for this CPU's class (dpzo/blas.h; once per process), before the
     * first product. The model's threads run the blocks; OpenBLAS itself runs on the
     * calling thread. */
    dpzo_blas_select(NULL);
    openblas_set_num_threads(1);
    *out = m;
    return DPZO_OK;
}

static void pool_stop(dpzo_model *m)
{
    if (m->n_tid > 0) {
        pthread_mutex_lock(&m->mu);
        m->quit = 1;
        pthread_cond_broadcast(&m->cv_go);
        pthread_mutex_unlock(&m->mu);
        for (size_t i = 0; i < m->n_tid; i++)
            pthread_join(m->tid[i], NULL);
        m->n_tid = 0;
        m->quit = 0;
    }
}

void dpzo_model_free(dpzo_model *m)
{
    if (m == NULL)
        return;
    pool_stop(m);
    if (m->pool_ready) {
        pthread_mutex_destroy(&m->mu);
        pthread_cond_destroy(&m->cv_go);
        pthread_cond_destroy(&m->cv_done);
    }
    free(m->tid);
    for (size_t i = 0; i < m->n_work; i++)
        work_free(&m->work[i]);
    free(m->work);
    free(m->ops);
    free(m->desc);
    free(m->u);
    free(m->wst);
    free(m->gacc);
    free(m->probs);
    free(m->idx_buf);
    free(m->act);
    free(m->logits);
    free(m);
}

void dpzo_model_set_threads(dpzo_model *m, unsigned threads)
{
    if (m == NULL)
        return;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads != m->threads)
        pool_stop(m); /* restarted with the new count on the next evaluation */
    m->threads = threads;
}

unsigned dpzo_model_threads(const dpzo_model *m) { return m != NULL ? m->threads : 1; }

size_t dpzo_model_n_params(const dpzo_model *m) { return m != NULL ? m->n_params : 0; }

const char *dpzo_model_describe(const dpzo_model *m) { return m != NULL ? m->desc : ""; }

/* He-uniform: w ~ U(-sqrt(6 / fan_in), sqrt(6 / fan_in)) with fan_in = in (linear) or
 * in * 9 (conv); biases 0. splitmix64 with state = seed; one draw per weight in theta order,
 * u = (draw >> 11) * 2^-53, w = (float)((2u - 1) * bound). */
void dpzo_model_init(const dpzo_model *m, uint64_t seed, float *theta)
{
    if (m == NULL || theta == NULL)
        return;
    uint64_t state = seed;
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        if (op->kind == OP_POOL)
            continue;
        size_t fan_in = op->kind == OP_LINEAR ? op->nin : op->cin * 9;
        double bound = sqrt(6.0 / (double)fan_in);
        for (size_t k = 0; k < op->n_w; k++) {
            double u = (double)(splitmix64(&state) >> 11) * 0x1p-53;
            theta[op->w_off + k] = (float)((2.0 * u - 1.0) * bound);
        }
        for (size_t k = 0; k < op->n_b; k++)
            theta[op->w_off + op->n_w + k] = 0.0f;
    }
}

/* ---- forward ----------------------------------------------------------------------- */

/* C[M x N] = A[M x K] B^T (B: N x K), row-major, float. */
static void gemm_nt(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B,
                    size_t ldb, float *C, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, A,
                (int)lda, B, (int)ldb, 0.0f, C, (int)ldc);
}

/* C[M x N] = A^T B (A: K x M, B: K x N). */
static void gemm_tn(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B,
                    size_t ldb, float *C, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
                (int)lda, B, (int)ldb, 0.0f, C, (int)ldc);
}

/* C[M x N] = A[M x K] B[K x N]. */
static void gemm_nn(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B,
                    size_t ldb, float *C, size_t ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
                (int)lda, B, (int)ldb, 0.0f, C, (int)ldc);
}

/* ReLU of z + b into o, n elements: NaN and -0 give +0. */
static void bias_relu(const float *z, float b, float *o, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        float v = z[k] + b;
        o[k] = v > 0.0f ? v : 0.0f;
    }
}

/* The same with one bias per element. */
static void bias_relu_vec(const float *z, const float *b, float *o, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        float v = z[k] + b[k];
        o[k] = v > 0.0f ? v : 0.0f;
    }
}

/* im2col of R examples (example r's c x h x w input at in + r * stride) for a 3x3
 * convolution with padding 1: col[(ci 9 + ky 3 + kx)][r h w + y w + x] =
 * in_r[ci][y + ky - 1][x + kx - 1], zero outside. */
static void im2col(const float *in, size_t stride, size_t R, size_t c, size_t h, size_t w,
                   float *col)
{
    size_t hw = h * w, N = R * hw;
    for (size_t ci = 0; ci < c; ci++)
        for (size_t ky = 0; ky < 3; ky++)
            for (size_t kx = 0; kx < 3; kx++) {
                float *row = col + (ci * 9 + ky * 3 + kx) * N;
                for (size_t r = 0; r < R; r++) {
                    const float *src = in + r * stride + ci * hw;
                    float *dst = row + r * hw;
                    for (size_t y = 0; y < h; y++) {
                        float *d = dst + y * w;
                        long yy = (long)y + (long)ky - 1;
                        if (yy < 0 || yy >= (long)h) {
                            memset(d, 0, w * sizeof *d);
                            continue;
                        }
                        const float *s = src + (size_t)yy * w;
                        /* x + kx - 1 in [0, w): x from (kx == 0) to w - (kx == 2) */
                        size_t x0 = kx == 0, x1 = kx == 2 ? w - 1 : w;
                        if (x0)
                            d[0] = 0.0f;
                        if (x1 < w)
                            d[w - 1] = 0.0f;
                        for (size_t x = x0; x < x1; x++)
                            d[x] = s[x + kx - 1];
                    }
                }
            }
}

/* The inverse scatter of im2col, summing: din_r[ci][yy][xx] = sum over the taps (ci, ky,
 * kx) in increasing order of col[tap][r h w + (yy - ky + 1) w + xx - kx + 1]. */
static void col2im(const float *col, size_t R, size_t c, size_t h, size_t w, float *din,
                   size_t stride)
{
    size_t hw = h * w, N = R * hw;
    for (size_t r = 0; r < R; r++)
        memset(din + r * stride, 0, c * hw * sizeof *din);
    for (size_t ci = 0; ci < c; ci++)
        for (size_t ky = 0; ky < 3; ky++)
            for (size_t kx = 0; kx < 3; kx++) {
                const float *row = col + (ci * 9 + ky * 3 + kx) * N;
                for (size_t r = 0; r < R; r++) {
                    const float *src = row + r * hw;
                    float *dst = din + r * stride + ci * hw;
                    for (size_t y = 0; y < h; y++) {
                        long yy = (long)y + (long)ky - 1;
                        if (yy < 0 || yy >= (long)h)
                            continue;
                        size_t x0 = kx == 0, x1 = kx == 2 ? w - 1 : w;
                        float *d = dst + (size_t)yy * w;
                        const float *s = src + y * w;
                        for (size_t x = x0; x < x1; x++)
                            d[x + kx - 1] += s[x];
                    }
                }
            }
}

static void pool_example(const op_t *op, const float *in, float *out)
{
    size_t h = op->h, w = op->w, oh = h / 2, ow = w / 2;
    for (size_t c = 0; c < op->cin; c++)
        for (size_t y = 0; y < oh; y++)
            for (size_t x = 0; x < ow; x++) {
                const float *p = in + (c * h + 2 * y) * w + 2 * x;
                float v = p[0];
                if (p[1] > v)
                    v = p[1];
                if (p[w] > v)
                    v = p[w];
                if (p[w + 1] > v)
                    v = p[w + 1];
                out[(c * oh + y) * ow + x] = v;
            }
}

/* Index (in the op's input) of the maximum that pool_example picked for output cell q. */
static size_t pool_argmax(const op_t *op, const float *in, size_t q)
{
    size_t h = op->h, w = op->w, oh = h / 2, ow = w / 2;
    size_t c = q / (oh * ow), y = q / ow % oh, x = q % ow;
    size_t base = (c * h + 2 * y) * w + 2 * x;
    size_t best = base;
    const size_t cand[3] = {base + 1, base + w, base + w + 1};
    for (int k = 0; k < 3; k++)
        if (in[cand[k]] > in[best])
            best = cand[k];
    return best;
}

/* Makes the activation buffer hold act_floats floats and the logits buffer logit_doubles
 * doubles (their contents are not kept). */
static dpzo_status ensure_buffers(dpzo_model *m, size_t act_floats, size_t logit_doubles)
{
    if (act_floats > m->act_cap) {
        float *a = realloc(m->act, act_floats * sizeof *a);
        if (a == NULL)
            return DPZO_ENOMEM;
        m->act = a;
        m->act_cap = act_floats;
    }
    if (logit_doubles > m->logits_cap) {
        double *l = realloc(m->logits, logit_doubles * sizeof *l);
        if (l == NULL)
            return DPZO_ENOMEM;
        m->logits = l;
        m->logits_cap = logit_doubles;
    }
    return DPZO_OK;
}

/* ---- materialising a layer -------------------------------------------------------- */

#define MAT_PART ((size_t)1 << 15) /* elements per materialising task */
/* A linear layer whose rows x weights are below this runs its blocks on the calling
 * thread (the same tasks, so the same bits): mlp:128's last layer, 256 x 1,280. */
#define SMALL_LAYER ((size_t)1 << 20)

/* A layer's parameters for one forward pass: plus (or the only sign) and, fused, minus. */
typedef struct {
    const float *wp, *bp, *wm, *bm;
} layer_w;

typedef struct {
    const op_t *op;
    const float *th;     /* the layer's theta */
    const dpzo_dir *dir;
    double sp, sm;       /* sign * lambda of the plus (or only) and minus passes */
    int both;
    float *u;            /* where the layer's direction elements go */
} mat_arg;

/* Vector-width dispatch for the materialising loop: kernels/cpu/zo_math.h's
 * DPZO_KERNEL_CLONES (plain loops, no GCC vector types, so no clone keeps a vector on the
 * stack; every clone gives the same bits). */
#define MAT_CLONES DPZO_KERNEL_CLONES

/* w[k] = (float)((double)th[k] + s (double)u[k]), k < n. */
MAT_CLONES static void perturb_loop(const float *restrict th, const float *restrict u, double s,
                                    float *restrict w, size_t n)
{
    for (size_t k = 0; k < n; k++)
        w[k] = (float)((double)th[k] + s * (double)u[k]);
}

/* Both signs in one pass over theta and u: wp[k] with sp, wm[k] with sm. */
MAT_CLONES static void perturb_pm_loop(const float *restrict th, const float *restrict u,
                                       double sp, double sm, float *restrict wp,
                                       float *restrict wm, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        double t = (double)th[k], v = (double)u[k];
        wp[k] = (float)(t + sp * v);
        wm[k] = (float)(t + sm * v);
    }
}

/* Task t: elements [t MAT_PART, ...) of the layer: u filled (the same floats however the
 * range is split), then w = (float)((double)theta + s (double)u) for each sign, into the
 * stacked scratch: plus weights, minus weights, plus biases, minus biases. */
static void mat_task(dpzo_model *m, void *arg, size_t t, work_t *w)
{
    (void)w;
    const mat_arg *a = arg;
    size_t nw = a->op->n_w, nb = a->op->n_b, n = nw + nb;
    size_t k0 = t * MAT_PART, k1 = k0 + MAT_PART < n ? k0 + MAT_PART : n;
    float *u = a->u;
    dpzo_dir_fill(a->dir, a->op->w_off + k0, k1 - k0, u + k0);
    float *wp = m->wst, *wm = m->wst + nw, *bp = m->wst + 2 * nw, *bm = bp + nb;
    const double sp = a->sp, sm = a->sm;
    size_t kw = k1 < nw ? k1 : nw;
    if (k0 < kw) {
        if (a->both)
            perturb_pm_loop(a->th + k0, u + k0, sp, sm, wp + k0, wm + k0, kw - k0);
        else
            perturb_loop(a->th + k0, u + k0, sp, wp + k0, kw - k0);
    }
    for (size_t k = k0 > nw ? k0 : nw; k < k1; k++) {
        bp[k - nw] = (float)((double)a->th[k] + sp * (double)u[k]);
        if (a->both)
            bm[k - nw] = (float)((double)a->th[k] + sm * (double)u[k]);
    }
}

/* The layer's weights: theta's own (dir NULL), theta + s u, or both signs +-lambda. */
static layer_w materialise(dpzo_model *m, const float *theta, const op_t *op,
                           const dpzo_dir *dir, double sp, double sm, int both, float *u_all)
{
    const float *th = theta + op->w_off;
    if (dir == NULL)
        return (layer_w){th, th + op->n_w, NULL, NULL};
    mat_arg a = {op, th, dir, sp, sm, both, u_all != NULL ? u_all + op->w_off : m->u};
    size_t n = op->n_w + op->n_b;
    run_tasks(m, mat_task, &a, (n + MAT_PART - 1) / MAT_PART);
    size_t nw = op->n_w;
    return (layer_w){m->wst, m->wst + 2 * nw, both ? m->wst + nw : NULL,
                     both ? m->wst + 2 * nw + op->n_b : NULL};
}

/* ---- one layer over the blocks of a chunk ------------------------------------------- */

typedef struct {
    const op_t *op;
    layer_w w;
    size_t B;            /* rows of the chunk */
    int both;            /* the minus sign too (fused evaluation) */
    float *act2;         /* the minus sign's activations past the input (stride A - D) */
    double *logits2;     /* the minus sign's logits */
} layer_arg;

/* Input / output of example r (of the chunk) of the plus (s = 0) or minus (s = 1) sign.
 * The minus sign's activations leave out the input segment (shared): row stride
 * act_per_ex - input_dim. */
static float *act_at(dpzo_model *m, const layer_arg *a, int s, size_t r, size_t off)
{
    size_t A = m->act_per_ex, D = m->input_dim;
    if (s == 0 || off < D)
        return m->act + r * A + off;
    return a->act2 + r * (A - D) + (off - D);
}

static size_t act_stride(const dpzo_model *m, int s, size_t off)
{
    return s == 0 || off < m->input_dim ? m->act_per_ex : m->act_per_ex - m->input_dim;
}

/* The linear layer's epilogue for R rows of sign s: z (R x nout, row stride ldz) + bias,
 * into logits (last) or ReLU'd into the output segment. */
static void linear_out(dpzo_model *m, const layer_arg *a, int s, size_t r0, size_t R,
                       const float *z, size_t ldz, const float *bias)
{
    const op_t *op = a->op;
    size_t K = m->n_classes;
    for (size_t r = 0; r < R; r++) {
        const float *zr = z + r * ldz;
        if (op->last) {
            double *lg = (s == 0 ? m->logits : a->logits2) + (r0 + r) * K;
            for (size_t k = 0; k < K; k++)
                lg[k] = (double)(zr[k] + bias[k]);
        } else {
            bias_relu_vec(zr, bias, act_at(m, a, s, r0 + r, op->act_out), op->nout);
        }
    }
}

/* The conv epilogue for R rows of sign s: c (cout x R h w) + bias, ReLU, into the output. */
static void conv_out(dpzo_model *m, const layer_arg *a, int s, size_t r0, size_t R,
                     const float *c, const float *bias)
{
    const op_t *op = a->op;
    size_t hw = op->h * op->w;
    for (size_t r = 0; r < R; r++) {
        float *o = act_at(m, a, s, r0 + r, op->act_out);
        for (size_t co = 0; co < op->cout; co++)
            bias_relu(c + co * R * hw + r * hw, bias[co], o + co * hw, hw);
    }
}

static void layer_task(dpzo_model *m, void *arg, size_t t, work_t *wk)
{
    const layer_arg *a = arg;
    const op_t *op = a->op;
    size_t r0 = t * m->blk, R = a->B - r0 < m->blk ? a->B - r0 : m->blk;
    const int shared = op->act_in < m->input_dim; /* reads the input: one for both signs */
    const int ns = a->both ? 2 : 1;
    if (op->kind == OP_POOL) {
        for (int s = 0; s < ns; s++)
            for (size_t r = r0; r < r0 + R; r++)
                pool_example(op, act_at(m, a, s, r, op->act_in), act_at(m, a, s, r, op->act_out));
        return;
    }
    /* Each sign's products are the calls of a one-sign pass with that sign's weights (the
     * same shapes; the minus sign's row strides differ, which changes no element's
     * arithmetic): stacking both signs' weights into one product of twice the outputs
     * changed the bits with OpenBLAS's Haswell kernels (measured) and saved nothing
     * measurable. The input is read once for both (shared rows, one im2col). */
    if (op->kind == OP_LINEAR) {
        size_t nin = op->nin, nout = op->nout;
        for (int s = 0; s < ns; s++) {
            const float *W = s == 0 ? a->w.wp : a->w.wm, *b = s == 0 ? a->w.bp : a->w.bm;
            const float *X = act_at(m, a, s, r0, op->act_in);
            size_t ldx = act_stride(m, s, op->act_in);
            if (op->last) {
                gemm_nt(R, nout, nin, X, ldx, W, nin, wk->z, nout);
                linear_out(m, a, s, r0, R, wk->z, nout, b);
            } else { /* the product straight into the output segment, then bias and ReLU */
                float *Z = act_at(m, a, s, r0, op->act_out);
                size_t ldz = act_stride(m, s, op->act_out);
                gemm_nt(R, nout, nin, X, ldx, W, nin, Z, ldz);
                linear_out(m, a, s, r0, R, Z, ldz, b);
            }
        }
        return;
    }
    /* OP_CONV: W (cout x cin 9) times the block's im2col (cin 9 x R h w) */
    size_t kc = op->cin * 9, hw = op->h * op->w, N = R * hw;
    for (int s = 0; s < ns; s++) {
        if (s == 0 || !shared)
            im2col(act_at(m, a, s, r0, op->act_in), act_stride(m, s, op->act_in), R, op->cin,
                   op->h, op->w, wk->col);
        gemm_nn(op->cout, N, kc, s == 0 ? a->w.wp : a->w.wm, kc, wk->col, N, wk->cout, N);
        conv_out(m, a, s, r0, R, wk->cout, s == 0 ? a->w.bp : a->w.bm);
    }
}

typedef struct {
    const dpzo_dataset *ds;
    const size_t *idx;
    size_t B;
} gather_arg;

/* Block t's input rows into the activations (a gather from the data set, memory-bound). */
static void gather_task(dpzo_model *m, void *arg, size_t t, work_t *w)
{
    (void)w;
    const gather_arg *g = arg;
    size_t r0 = t * m->blk, r1 = r0 + m->blk < g->B ? r0 + m->blk : g->B;
    for (size_t b = r0; b < r1; b++)
        memcpy(m->act + b * m->act_per_ex, g->ds->x + g->idx[b] * g->ds->dim,
               m->input_dim * sizeof *m->act);
}

/* Forward of rows idx[0..B-1]: activations into m->act, logits into m->logits; with
 * both, the minus sign's into act2 / logits2. The perturbation: none (dir NULL), theta +
 * sp u, or both theta + sp u and theta + sm u. Layer-major: each layer is materialised
 * once for the chunk, then its blocks run on the model's threads. */
static void forward_chunk(dpzo_model *m, const float *theta, const dpzo_dir *dir, double sp,
                          double sm, int both, const dpzo_dataset *ds, const size_t *idx,
                          size_t B, float *act2, double *logits2, float *u_all)
{
    size_t nblk = (B + m->blk - 1) / m->blk;
    gather_arg g = {ds, idx, B};
    run_tasks(m, gather_task, &g, nblk);
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        layer_arg a = {op, {NULL, NULL, NULL, NULL}, B, both, act2, logits2};
        if (op->kind != OP_POOL)
            a.w = materialise(m, theta, op, dir, sp, sm, both, u_all);
        if (op->kind == OP_LINEAR && B * op->n_w < SMALL_LAYER)
            for (size_t t = 0; t < nblk; t++) /* too little work to wake the threads for */
                layer_task(m, &a, t, &m->work[0]);
        else
            run_tasks(m, layer_task, &a, nblk);
    }
}

/* Cross-entropy of logits z (K of them) at label y; with probs != NULL also the softmax. */
static double xent(const double *z, size_t K, int32_t y, double *probs)
{
    double mx = z[0];
    for (size_t k = 1; k < K; k++)
        if (z[k] > mx)
            mx = z[k];
    double s = 0.0;
    for (size_t k = 0; k < K; k++) {
        double e = exp(z[k] - mx);
        if (probs != NULL)
            probs[k] = e;
        s += e;
    }
    if (probs != NULL)
        for (size_t k = 0; k < K; k++)
            probs[k] /= s;
    return mx + log(s) - z[y];
}

static dpzo_status check_rows(const dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                              const size_t *idx, size_t batch)
{
    if (theta == NULL || ds == NULL || (batch > 0 && idx == NULL))
        return DPZO_EINVAL;
    if (ds->dim != m->input_dim)
        return DPZO_EINVAL;
    for (size_t b = 0; b < batch; b++) {
        if (idx[b] >= ds->n)
            return DPZO_EINVAL;
        int32_t y = ds->y[idx[b]];
        if (y < 0 || (size_t)y >= m->n_classes)
            return DPZO_EINVAL;
    }
    return DPZO_OK;
}

static int bad_pert(const dpzo_model *m, const dpzo_perturb *pert)
{
    return pert != NULL && (pert->dir == NULL || (pert->sign != 1 && pert->sign != -1) ||
                            !isfinite(pert->lambda) || pert->dir->dim != m->n_params);
}

/* The chunk of a plain (one-sign) pass over batch rows, with its buffers. */
static dpzo_status plain_chunk(dpzo_model *m, size_t batch, size_t *chunk)
{
    *chunk = batch < m->chunk_max ? batch : m->chunk_max;
    return ensure_buffers(m, *chunk * m->act_per_ex, *chunk * m->n_classes);
}

/* A one-sign forward of rows idx[b0 .. b0 + B - 1]. */
static void forward_plain(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                          const dpzo_dataset *ds, const size_t *idx, size_t B)
{
    if (pert == NULL)
        forward_chunk(m, theta, NULL, 0.0, 0.0, 0, ds, idx, B, NULL, NULL, NULL);
    else
        forward_chunk(m, theta, pert->dir, (double)pert->sign * pert->lambda, 0.0, 0, ds, idx,
                      B, NULL, NULL, NULL);
}

dpzo_status dpzo_model_losses(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch,
                              double *loss)
{
    if (m == NULL || (batch > 0 && loss == NULL))
        return DPZO_EINVAL;
    dpzo_status st = check_rows(m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    if (bad_pert(m, pert))
        return DPZO_EINVAL;
    size_t chunk;
    if ((st = plain_chunk(m, batch, &chunk)) != DPZO_OK)
        return st;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_plain(m, theta, pert, ds, idx + b0, B);
        for (size_t b = 0; b < B; b++)
            loss[b0 + b] = xent(m->logits + b * m->n_classes, m->n_classes, ds->y[idx[b0 + b]],
                                NULL);
    }
    return DPZO_OK;
}

dpzo_status dpzo_model_losses_pm(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                 double lambda, const dpzo_dataset *ds, const size_t *idx,
                                 size_t batch, double *loss_plus, double *loss_minus)
{
    return dpzo__model_losses_pm_u(m, theta, dir, lambda, ds, idx, batch, loss_plus,
                                   loss_minus, NULL);
}

dpzo_status dpzo__model_losses_pm_u(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                    double lambda, const dpzo_dataset *ds, const size_t *idx,
                                    size_t batch, double *loss_plus, double *loss_minus,
                                    float *u_all)
{
    if (m == NULL || (batch > 0 && (loss_plus == NULL || loss_minus == NULL)))
        return DPZO_EINVAL;
    dpzo_status st = check_rows(m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    if (dir == NULL || !isfinite(lambda) || dir->dim != m->n_params)
        return DPZO_EINVAL;
    /* one buffer: the plus sign's activations (chunk x A), then the minus sign's past the
     * input (chunk x (A - D)), both within the plain pass's bound */
    size_t A = m->act_per_ex, D = m->input_dim, K = m->n_classes;
    size_t cm = max_sz(1, DPZO_ACT_BUDGET / (2 * A - D));
    if (cm > m->blk)
        cm -= cm % m->blk;
    size_t chunk = batch < cm ? batch : cm;
    if ((st = ensure_buffers(m, chunk * (2 * A - D), 2 * chunk * K)) != DPZO_OK)
        return st;
    /* materialise's sign * lambda, for sign +1 and -1 */
    const double sp = (double)1 * lambda, sm = (double)-1 * lambda;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        float *act2 = m->act + B * A;
        double *logits2 = m->logits + B * K;
        forward_chunk(m, theta, dir, sp, sm, 1, ds, idx + b0, B, act2, logits2, u_all);
        for (size_t b = 0; b < B; b++) {
            int32_t y = ds->y[idx[b0 + b]];
            loss_plus[b0 + b] = xent(m->logits + b * K, K, y, NULL);
            loss_minus[b0 + b] = xent(logits2 + b * K, K, y, NULL);
        }
    }
    return DPZO_OK;
}

dpzo_status dpzo_model_logits(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch,
                              double *logits)
{
    if (m == NULL || (batch > 0 && logits == NULL))
        return DPZO_EINVAL;
    if (theta == NULL || ds == NULL || (batch > 0 && idx == NULL) || ds->dim != m->input_dim)
        return DPZO_EINVAL;
    for (size_t b = 0; b < batch; b++)
        if (idx[b] >= ds->n)
            return DPZO_EINVAL;
    if (bad_pert(m, pert))
        return DPZO_EINVAL;
    size_t chunk;
    dpzo_status st = plain_chunk(m, batch, &chunk);
    if (st != DPZO_OK)
        return st;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_plain(m, theta, pert, ds, idx + b0, B);
        memcpy(logits + b0 * m->n_classes, m->logits, B * m->n_classes * sizeof *logits);
    }
    return DPZO_OK;
}

dpzo_status dpzo_model_accuracy(dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                                double *accuracy, double *mean_loss)
{
    if (m == NULL || ds == NULL || theta == NULL)
        return DPZO_EINVAL;
    if (ds->dim != m->input_dim)
        return DPZO_EINVAL;
    size_t n = ds->n, K = m->n_classes;
    for (size_t i = 0; i < n; i++)
        if (ds->y[i] < 0 || (size_t)ds->y[i] >= K)
            return DPZO_EINVAL;
    size_t chunk;
    dpzo_status st = plain_chunk(m, n, &chunk);
    if (st != DPZO_OK)
        return st;
    size_t correct = 0;
    double sum = 0.0;
    for (size_t b0 = 0; b0 < n; b0 += chunk) {
        size_t B = n - b0 < chunk ? n - b0 : chunk;
        for (size_t b = 0; b < B; b++)
            m->idx_buf[b] = b0 + b;
        forward_plain(m, theta, NULL, ds, m->idx_buf, B);
        for (size_t b = 0; b < B; b++) {
            const double *z = m->logits + b * K;
            size_t arg = 0;
            for (size_t k = 1; k < K; k++)
                if (z[k] > z[arg])
                    arg = k;
            int32_t y = ds->y[b0 + b];
            correct += arg == (size_t)y;
            sum += xent(z, K, y, NULL);
        }
    }
    if (accuracy != NULL)
        *accuracy = n > 0 ? (double)correct / (double)n : 0.0;
    if (mean_loss != NULL)
        *mean_loss = n > 0 ? sum / (double)n : 0.0;
    return DPZO_OK;
}

/* ---- backward ---------------------------------------------------------------------- */

/* Backward of a block of R rows (chunk rows r0 ..) through op. d: dLoss/d(output), R rows
 * of the op's output size (for the last linear layer: the logits), ReLU not yet applied.
 * Adds the block's parameter gradient to m->gacc (pe != NULL: also each row's gradient into
 * pe + r P) and, when din != NULL, writes dLoss/d(input) (R rows of the input size). */
static void backward_op(dpzo_model *m, const op_t *op, const float *theta, size_t r0, size_t R,
                        float *d, float *din, float *pe, work_t *wk)
{
    size_t A = m->act_per_ex, P = m->n_params;
    const float *in = m->act + r0 * A + op->act_in;
    float *g = wk->g;
    if (op->kind == OP_POOL) {
        for (size_t r = 0; r < R; r++) {
            float *di = din + r * op->in_size;
            memset(di, 0, op->in_size * sizeof *di);
            for (size_t q = 0; q < op->out_size; q++)
                di[pool_argmax(op, in + r * A, q)] = d[r * op->out_size + q];
        }
        return;
    }
    const float *W = theta + op->w_off;
    size_t nw = op->n_w;
    if (op->kind == OP_LINEAR) {
        size_t nin = op->nin, nout = op->nout;
        if (op->relu)
            for (size_t r = 0; r < R; r++) {
                const float *out = m->act + (r0 + r) * A + op->act_out;
                for (size_t o = 0; o < nout; o++)
                    if (!(out[o] > 0.0f))
                        d[r * nout + o] = 0.0f;
            }
        /* dW = D^T X (nout x nin), db = column sums of D */
        gemm_tn(nout, nin, R, d, nout, in, A, g, nin);
        for (size_t o = 0; o < nout; o++) {
            float s = 0.0f;
            for (size_t r = 0; r < R; r++)
                s += d[r * nout + o];
            g[nw + o] = s;
        }
        if (pe != NULL)
            for (size_t r = 0; r < R; r++) {
                float *pr = pe + r * P + op->w_off;
                const float *x = in + r * A, *dr = d + r * nout;
                for (size_t o = 0; o < nout; o++) {
                    for (size_t i = 0; i < nin; i++)
                        pr[o * nin + i] = dr[o] * x[i];
                    pr[nw + o] = dr[o];
                }
            }
        if (din != NULL) /* dX = D W (R x nin) */
            gemm_nn(R, nin, nout, d, nout, W, nin, din, nin);
    } else { /* OP_CONV: d per row as cout x h x w */
        size_t cout = op->cout, kc = op->cin * 9, hw = op->h * op->w, N = R * hw;
        float *dm = wk->cout, *col = wk->col;
        /* ReLU, and D as the matrix dOut (cout x R h w) */
        for (size_t r = 0; r < R; r++) {
            const float *out = m->act + (r0 + r) * A + op->act_out;
            const float *dr = d + r * op->out_size;
            for (size_t co = 0; co < cout; co++) {
                float *dst = dm + co * N + r * hw;
                for (size_t p = 0; p < hw; p++)
                    dst[p] = out[co * hw + p] > 0.0f ? dr[co * hw + p] : 0.0f;
            }
        }
        im2col(in, A, R, op->cin, op->h, op->w, col);
        /* dW = dOut col^T (cout x cin 9), db = row sums of dOut */
        gemm_nt(cout, kc, N, dm, N, col, N, g, kc);
        for (size_t co = 0; co < cout; co++) {
            float s = 0.0f;
            for (size_t p = 0; p < N; p++)
                s += dm[co * N + p];
            g[nw + co] = s;
        }
        if (pe != NULL)
            for (size_t r = 0; r < R; r++) {
                float *pr = pe + r * P + op->w_off;
                gemm_nt(cout, kc, hw, dm + r * hw, N, col + r * hw, N, pr, kc);
                for (size_t co = 0; co < cout; co++) {
                    float s = 0.0f;
                    for (size_t p = 0; p < hw; p++)
                        s += dm[co * N + r * hw + p];
                    pr[nw + co] = s;
                }
            }
        if (din != NULL) { /* dcol = W^T dOut (cin 9 x R h w), then col2im */
            gemm_tn(kc, N, cout, W, kc, dm, N, col, N);
            col2im(col, R, op->cin, op->h, op->w, din, op->in_size);
        }
    }
    double *ga = m->gacc + op->w_off;
    for (size_t k = 0; k < nw + op->n_b; k++)
        ga[k] += (double)g[k];
}

dpzo_status dpzo_model_grad(dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                            const size_t *idx, size_t batch, float *grad, float *per_example,
                            double *mean_loss)
{
    if (m == NULL || grad == NULL)
        return DPZO_EINVAL;
    dpzo_status st = check_rows(m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    size_t P = m->n_params, K = m->n_classes;
    memset(m->gacc, 0, P * sizeof *m->gacc);
    size_t chunk;
    if ((st = plain_chunk(m, batch, &chunk)) != DPZO_OK)
        return st;
    double sum = 0.0;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_plain(m, theta, NULL, ds, idx + b0, B);
        work_t *wk = &m->work[0]; /* after the forward: starting the threads may move it */
        /* backward block by block, in row order */
        for (size_t r0 = 0; r0 < B; r0 += m->blk) {
            size_t R = B - r0 < m->blk ? B - r0 : m->blk;
            float *d = wk->d1, *dn = wk->d2;
            for (size_t r = 0; r < R; r++) {
                int32_t y = ds->y[idx[b0 + r0 + r]];
                sum += xent(m->logits + (r0 + r) * K, K, y, m->probs);
                for (size_t k = 0; k < K; k++)
                    d[r * K + k] = (float)(m->probs[k] - (k == (size_t)y ? 1.0 : 0.0));
            }
            float *pe = per_example != NULL ? per_example + (b0 + r0) * P : NULL;
            for (size_t l = m->n_ops; l-- > 0;) {
                backward_op(m, &m->ops[l], theta, r0, R, d, l > 0 ? dn : NULL, pe, wk);
                float *t = d;
                d = dn;
                dn = t;
            }
        }
    }
    for (size_t j = 0; j < P; j++)
        grad[j] = batch > 0 ? (float)(m->gacc[j] / (double)batch) : 0.0f;
    if (mean_loss != NULL)
        *mean_loss = batch > 0 ? sum / (double)batch : 0.0;
    return DPZO_OK;
}

dpzo_status dpzo__model_failed(dpzo_ctx *ctx, dpzo_status st, const char *what)
{
    return dpzo__fail(ctx, st, "%s failed: %s", what, dpzo_status_name(st));
}
