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
 * Arithmetic (the same on every build: no FMA contraction, see trainer/CMakeLists.txt, and
 * every output element is its own scalar chain, so the vector width does not matter):
 *   - activations are float; each pre-activation is accumulated in double, starting from
 *     the bias, adding (double)x_i * (double)w_i in increasing i (conv: input channel, ky,
 *     kx); a linear layer skips zero inputs (they would add +-0: only the sign of a zero
 *     sum or an infinite weight could tell). ReLU outputs are rounded to float; the logits
 *     stay double.
 *   - loss = logsumexp(z) - z_y in double, logsumexp(z) = max z + log(sum exp(z_k - max z)).
 *   - max-pool takes the first maximum in the order (0,0), (0,1), (1,0), (1,1).
 *   - gradients are accumulated in double and rounded to float at the end; a conv weight's
 *     gradient sums over positions in 8 interleaved partial sums (dot_lanes).
 *
 * Perturbed evaluation (dpzo_perturb) materialises one layer at a time into model-owned
 * scratch: w_j = (float)((double)theta[j] + sign * lambda * (double)u_j), u_j the float
 * element from dpzo_dir_fill. theta is never written. The fused evaluation of both signs
 * (dpzo_model_losses_pm) fills each layer's u once and materialises theta + lambda u and
 * theta - lambda u from it by the same formula; it runs both signs layer by layer on the
 * same chunk (a layer that reads the input reads it once for both), so its losses are those
 * of the two dpzo_model_losses calls, bit for bit.
 *
 * Work is done layer-major on chunks of rows (at most DPZO_ACT_BUDGET activation floats),
 * so memory is bounded whatever the batch size; per-example results do not depend on the
 * chunking. A model holds scratch buffers: use it from one thread at a time (create one
 * model per thread; they are cheap). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "dpzo/model.h"

/* Floats of activations kept for one chunk of rows (16 MiB). */
#define DPZO_ACT_BUDGET ((size_t)1 << 22)
/* Largest accepted hidden width / channel count, and number of hidden layers. */
#define MAX_WIDTH ((size_t)1 << 20)
#define MAX_HIDDEN 64

/* Vector width dispatch for the hot loops (the results do not depend on it). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define HOT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef HOT_CLONES
#define HOT_CLONES
#endif

typedef enum { OP_LINEAR, OP_CONV, OP_POOL } op_kind;

typedef struct {
    op_kind kind;
    int relu;              /* ReLU on the output */
    int last;              /* the final linear layer: its output is the logits (double) */
    size_t nin, nout;      /* linear: in / out features */
    size_t nout_pad;       /* linear: nout rounded up to LIN_BLK */
    size_t cin, cout;      /* conv: channels; pool: cin == cout == channels */
    size_t h, w;           /* conv / pool: input spatial size (conv output is the same) */
    size_t in_size, out_size; /* floats per example */
    size_t act_in, act_out;   /* offsets of the input / output segments of an example */
    size_t w_off, n_w, n_b;   /* parameters: weights at w_off, bias right after */
    char name[16];
} op_t;

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
    size_t chunk_max;   /* rows per chunk */
    size_t max_layer;   /* largest n_w + n_b */
    size_t max_wd;      /* largest wd (doubles) */
    size_t max_wb;      /* largest wb (floats) */
    size_t max_lin_in;  /* largest linear input */
    size_t max_lin_pad; /* largest linear padded output */
    size_t max_grid;    /* largest conv padded grid (channels x (h+2) x (w+2) + 2) */
    size_t max_seg;     /* largest activation segment */
    /* scratch (allocated at create, except the chunk buffers) */
    float *wf;          /* a materialised layer (float) */
    double *wd;         /* conv: the same in double; linear: the bias in double */
    float *wb;          /* linear: the weights in the blocked layout of linear_kernel */
    uint32_t *nz;       /* LIN_T x max_lin_in: offsets of the inputs' nonzero entries */
    double *nzv;        /* LIN_T x max_lin_in: their values */
    double *lin_out;    /* LIN_T x max_lin_pad: the rows' linear outputs */
    double *grid_a, *grid_b; /* conv padded grids / backward deltas */
    double *glayer;     /* one layer's per-example gradient */
    double *gacc;       /* n_params: summed gradient */
    double *probs;      /* n_classes */
    size_t *idx_buf;    /* chunk_max row indices (accuracy) */
    float *act;         /* act_cap floats: chunk x act_per_ex (fused +/-: then the minus
                         * sign's chunk x (act_per_ex - input_dim) and its blocked weights) */
    double *logits;     /* logits_cap doubles: chunk x n_classes (fused +/-: two of them) */
    size_t act_cap, logits_cap;
    /* fused +/- evaluation (dpzo_model_losses_pm), allocated on first use; the minus
     * sign's blocked linear weights live in the activation buffer (see there) */
    double *wd2;        /* the minus sign's wd (max_wd) */
    double *lin_out2;   /* LIN_T x max_lin_pad: the minus sign's linear outputs */
};

#define LIN_BLK 32 /* outputs per block of the linear kernel (four v8d) */
#define LIN_T 16   /* rows that share a block of weights in the linear kernel */

/* ---- generator for init ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- construction ------------------------------------------------------------------ */

static size_t round_up(size_t a, size_t b) { return (a + b - 1) / b * b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

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
    op->nout_pad = round_up(nout, LIN_BLK);
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
    m->threads = 1;
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
    m->chunk_max = max_sz(1, DPZO_ACT_BUDGET / act);
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        m->max_seg = max_sz(m->max_seg, max_sz(op->in_size, op->out_size));
        if (op->kind == OP_LINEAR) {
            m->max_layer = max_sz(m->max_layer, op->n_w + op->n_b);
            m->max_wd = max_sz(m->max_wd, op->nout_pad);
            m->max_wb = max_sz(m->max_wb, op->nin * op->nout_pad);
            m->max_lin_in = max_sz(m->max_lin_in, op->nin);
            m->max_lin_pad = max_sz(m->max_lin_pad, op->nout_pad);
            m->max_seg = max_sz(m->max_seg, op->nout);
        } else if (op->kind == OP_CONV) {
            m->max_layer = max_sz(m->max_layer, op->n_w + op->n_b);
            m->max_wd = max_sz(m->max_wd, op->n_w + op->n_b);
            size_t g = max_sz(op->cin, op->cout) * (op->h + 2) * (op->w + 2) + 2;
            m->max_grid = max_sz(m->max_grid, g);
        }
    }
    m->wf = malloc(m->max_layer * sizeof *m->wf);
    m->wd = malloc(m->max_wd * sizeof *m->wd);
    m->wb = malloc(max_sz(m->max_wb, 1) * sizeof *m->wb);
    m->nz = malloc(LIN_T * m->max_lin_in * sizeof *m->nz);
    m->nzv = malloc(LIN_T * m->max_lin_in * sizeof *m->nzv);
    m->lin_out = malloc(LIN_T * m->max_lin_pad * sizeof *m->lin_out);
    size_t grid = max_sz(m->max_grid, m->max_seg);
    m->grid_a = malloc(grid * sizeof *m->grid_a);
    m->grid_b = malloc(grid * sizeof *m->grid_b);
    m->glayer = malloc(m->max_layer * sizeof *m->glayer);
    m->gacc = malloc(m->n_params * sizeof *m->gacc);
    m->probs = malloc(m->n_classes * sizeof *m->probs);
    m->idx_buf = malloc(m->chunk_max * sizeof *m->idx_buf);
    if (m->wf == NULL || m->wd == NULL || m->wb == NULL || m->nz == NULL || m->nzv == NULL ||
        m->lin_out == NULL || m->grid_a == NULL || m->grid_b == NULL || m->glayer == NULL ||
        m->gacc == NULL || m->probs == NULL || m->idx_buf == NULL || build_desc(m, canon) != 0) {
        dpzo_model_free(m);
        return dpzo__fail(ctx, DPZO_ENOMEM, "model '%s': out of memory", spec);
    }
    *out = m;
    return DPZO_OK;
}

void dpzo_model_free(dpzo_model *m)
{
    if (m == NULL)
        return;
    free(m->ops);
    free(m->desc);
    free(m->wf);
    free(m->wd);
    free(m->wb);
    free(m->nz);
    free(m->nzv);
    free(m->lin_out);
    free(m->grid_a);
    free(m->grid_b);
    free(m->glayer);
    free(m->gacc);
    free(m->probs);
    free(m->idx_buf);
    free(m->act);
    free(m->logits);
    free(m->wd2);
    free(m->lin_out2);
    free(m);
}

void dpzo_model_set_threads(dpzo_model *m, unsigned threads)
{
    if (m != NULL)
        m->threads = threads > 0 ? threads : 1;
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

typedef double v8d __attribute__((vector_size(64)));

/* Unaligned loads and stores (macros: a function passing v8d by value changes the ABI). */
#define LD8(v, p) memcpy(&(v), (p), sizeof(v8d))
/* 8 floats widened to doubles (written element-wise: GCC compiles it to one vcvtps2pd). */
#define CVT8(v, p)                                                                          \
    do {                                                                                    \
        v8d cvt_ = {(p)[0], (p)[1], (p)[2], (p)[3], (p)[4], (p)[5], (p)[6], (p)[7]};          \
        (v) = cvt_;                                                                         \
    } while (0)
#define ST8(p, v) memcpy((p), &(v), sizeof(v8d))

/* The nonzero inputs of rows t < T: their offsets in a weight block (i * LIN_BLK) in
 * nz + t nin, their values in nzv + t nin, their count in nnz[t]. */
static inline void nonzeros(const float *const *x, size_t T, size_t nin, uint32_t *nz,
                            double *nzv, size_t *nnz)
{
    for (size_t t = 0; t < T; t++) {
        uint32_t *zi = nz + t * nin;
        double *zv = nzv + t * nin;
        const float *xt = x[t];
        size_t c = 0;
        for (size_t i = 0; i < nin; i++) { /* branch-free: the zero pattern is unpredictable */
            zi[c] = (uint32_t)(i * LIN_BLK);
            zv[c] = xt[i];
            c += xt[i] != 0.0f;
        }
        nnz[t] = c;
    }
}

/* For rows t < T (T <= LIN_T): out[t][o] = bias[o] + sum over the nonzero x_t[i], i
 * increasing, of x_t[i] * w[o][i], o < nout_pad (a multiple of LIN_BLK). The weights are
 * float (half the memory traffic of double; converted exactly), in blocks of LIN_BLK
 * outputs: wb[(o / LIN_BLK) * nin * LIN_BLK + i * LIN_BLK + o % LIN_BLK], and the loop runs
 * block by block over all T rows, so a block (nin * LIN_BLK floats) stays in cache while
 * the rows use it. nz / nzv: scratch, LIN_T * nin each. Each
 * output is its own chain of double products and sums. */
HOT_CLONES static void linear_kernel(const float *const *x, size_t T, size_t nin,
                                     const float *wb, const double *bias, size_t nout_pad,
                                     double *out, uint32_t *nz, double *nzv)
{
    size_t nnz[LIN_T];
    nonzeros(x, T, nin, nz, nzv, nnz);
    for (size_t o = 0; o < nout_pad; o += LIN_BLK) {
        const float *wblk = wb + o * nin;
        for (size_t t = 0; t < T; t++) {
            const uint32_t *zi = nz + t * nin;
            const double *zv = nzv + t * nin;
            v8d a0, a1, a2, a3;
            LD8(a0, bias + o);
            LD8(a1, bias + o + 8);
            LD8(a2, bias + o + 16);
            LD8(a3, bias + o + 24);
            for (size_t k = 0; k < nnz[t]; k++) {
                const float *w = wblk + zi[k];
                double xv = zv[k];
                v8d w0, w1, w2, w3;
                CVT8(w0, w);
                CVT8(w1, w + 8);
                CVT8(w2, w + 16);
                CVT8(w3, w + 24);
                a0 += xv * w0;
                a1 += xv * w1;
                a2 += xv * w2;
                a3 += xv * w3;
            }
            double *ot = out + t * nout_pad + o;
            ST8(ot, a0);
            ST8(ot + 8, a1);
            ST8(ot + 16, a2);
            ST8(ot + 24, a3);
        }
    }
}

/* linear_kernel for two weight sets on the same rows (the two signs of a fused +/-
 * evaluation of a layer that reads the input): outp from (wbp, biasp), outm from
 * (wbm, biasm); every output is the chain linear_kernel computes. */
HOT_CLONES static void linear_kernel_pm(const float *const *x, size_t T, size_t nin,
                                        const float *wbp, const double *biasp,
                                        const float *wbm, const double *biasm,
                                        size_t nout_pad, double *outp, double *outm,
                                        uint32_t *nz, double *nzv)
{
    size_t nnz[LIN_T];
    nonzeros(x, T, nin, nz, nzv, nnz);
    for (size_t o = 0; o < nout_pad; o += LIN_BLK) {
        const float *wp = wbp + o * nin, *wm = wbm + o * nin;
        for (size_t t = 0; t < T; t++) {
            const uint32_t *zi = nz + t * nin;
            const double *zv = nzv + t * nin;
            v8d a0, a1, a2, a3, b0, b1, b2, b3;
            LD8(a0, biasp + o);
            LD8(a1, biasp + o + 8);
            LD8(a2, biasp + o + 16);
            LD8(a3, biasp + o + 24);
            LD8(b0, biasm + o);
            LD8(b1, biasm + o + 8);
            LD8(b2, biasm + o + 16);
            LD8(b3, biasm + o + 24);
            for (size_t k = 0; k < nnz[t]; k++) {
                const float *w = wp + zi[k], *v = wm + zi[k];
                double xv = zv[k];
                v8d w0, w1, w2, w3;
                CVT8(w0, w);
                CVT8(w1, w + 8);
                CVT8(w2, w + 16);
                CVT8(w3, w + 24);
                a0 += xv * w0;
                a1 += xv * w1;
                a2 += xv * w2;
                a3 += xv * w3;
                CVT8(w0, v);
                CVT8(w1, v + 8);
                CVT8(w2, v + 16);
                CVT8(w3, v + 24);
                b0 += xv * w0;
                b1 += xv * w1;
                b2 += xv * w2;
                b3 += xv * w3;
            }
            double *op = outp + t * nout_pad + o, *om = outm + t * nout_pad + o;
            ST8(op, a0);
            ST8(op + 8, a1);
            ST8(op + 16, a2);
            ST8(op + 24, a3);
            ST8(om, b0);
            ST8(om + 8, b1);
            ST8(om + 16, b2);
            ST8(om + 24, b3);
        }
    }
}

/* The 9 taps of one input channel of a 3x3 convolution on the padded grid g (row pitch
 * pw), added to acc[p], p < n, in the order ky, kx: acc[p] += wk[3 ky + kx] * g[p + ky pw + kx]. */
HOT_CLONES static void conv_taps(double *restrict acc, const double *restrict g, size_t pw,
                                 const double *restrict wk, size_t n)
{
    const double w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3], w4 = wk[4], w5 = wk[5],
                 w6 = wk[6], w7 = wk[7], w8 = wk[8];
    const double *g0 = g, *g1 = g + pw, *g2 = g + 2 * pw;
    for (size_t p = 0; p < n; p++) {
        double a = acc[p];
        a += w0 * g0[p];
        a += w1 * g0[p + 1];
        a += w2 * g0[p + 2];
        a += w3 * g1[p];
        a += w4 * g1[p + 1];
        a += w5 * g1[p + 2];
        a += w6 * g2[p];
        a += w7 * g2[p + 1];
        a += w8 * g2[p + 2];
        acc[p] = a;
    }
}

/* sum_p a[p] * b[p], p < n, in 8 interleaved partial sums (lane p mod 8) added at the end
 * (a fixed order, so the result is reproducible; vectorises). */
HOT_CLONES static double dot_lanes(const double *restrict a, const double *restrict b, size_t n)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t p = 0;
    for (; p + 8 <= n; p += 8)
        for (int l = 0; l < 8; l++)
            s[l] += a[p + l] * b[p + l];
    for (int l = 0; p < n; p++, l++)
        s[l] += a[p] * b[p];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* ReLU, rounded to float: o[k] = z[k] > 0 ? (float)z[k] : 0 (+0 for NaN and -0). Written
 * with vector masks: GCC compiles the plain conditional to a branch per element, which
 * hidden layers mispredict about half the time. */
typedef long long v8l __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
HOT_CLONES static void relu_to_float(const double *restrict z, float *restrict o, size_t n)
{
    const v8d zero = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        v8d v;
        LD8(v, z + k);
        v8l keep = v > zero; /* all ones where v > 0, else 0: v's bits or +0 */
        v8d r = (v8d)((v8l)v & keep);
        v8f f = __builtin_convertvector(r, v8f);
        memcpy(o + k, &f, sizeof f);
    }
    for (; k < n; k++) {
        double v = z[k] > 0.0 ? z[k] : 0.0;
        o[k] = (float)v;
    }
}

/* acc[p] += wv * src[p], p < n (one tap of a 3x3 convolution over a padded grid). */
HOT_CLONES static void axpy_grid(double *restrict acc, const double *restrict src, double wv,
                                 size_t n)
{
    for (size_t p = 0; p < n; p++)
        acc[p] += wv * src[p];
}

/* Writes layer op's parameters (perturbed when pert != NULL) to m->wf and returns them. */
static const float *materialise(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                                const op_t *op)
{
    size_t n = op->n_w + op->n_b;
    if (pert == NULL)
        return theta + op->w_off;
    dpzo_dir_fill(pert->dir, op->w_off, n, m->wf);
    double s = (double)pert->sign * pert->lambda;
    for (size_t k = 0; k < n; k++)
        m->wf[k] = (float)((double)theta[op->w_off + k] + s * (double)m->wf[k]);
    return m->wf;
}

/* Pads one example's channels (c x h x w floats) into grid (c x (h+2) x (w+2) doubles,
 * zero border, plus 2 trailing zeros read by the junk columns). */
static void pad_input(const float *in, size_t c, size_t h, size_t w, double *grid)
{
    size_t pw = w + 2, ph = h + 2;
    memset(grid, 0, (c * ph * pw + 2) * sizeof *grid);
    for (size_t ci = 0; ci < c; ci++)
        for (size_t y = 0; y < h; y++) {
            double *dst = grid + ci * ph * pw + (y + 1) * pw + 1;
            const float *src = in + (ci * h + y) * w;
            for (size_t x = 0; x < w; x++)
                dst[x] = src[x];
        }
}

/* Convolution of one example; the output grid is h x (w + 2) per channel (the last two
 * columns are junk), so each tap is one long axpy. acc: cout x h x (w+2). */
static void conv_example(const op_t *op, const double *wd, const double *grid, double *acc)
{
    size_t h = op->h, pw = op->w + 2, plane = (op->h + 2) * pw, n = h * pw;
    const double *bias = wd + op->n_w;
    for (size_t co = 0; co < op->cout; co++) {
        double *a = acc + co * n;
        for (size_t p = 0; p < n; p++)
            a[p] = bias[co];
        for (size_t ci = 0; ci < op->cin; ci++)
            conv_taps(a, grid + ci * plane, pw, wd + (co * op->cin + ci) * 9, n);
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
static dpzo_status ensure_buffers(dpzo_ctx *ctx, dpzo_model *m, size_t act_floats,
                                  size_t logit_doubles)
{
    if (act_floats > m->act_cap) {
        float *a = realloc(m->act, act_floats * sizeof *a);
        if (a == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "model: out of memory for activations");
        m->act = a;
        m->act_cap = act_floats;
    }
    if (logit_doubles > m->logits_cap) {
        double *l = realloc(m->logits, logit_doubles * sizeof *l);
        if (l == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "model: out of memory for logits");
        m->logits = l;
        m->logits_cap = logit_doubles;
    }
    return DPZO_OK;
}

/* Buffers for a chunk of `rows` rows of one forward pass. */
static dpzo_status ensure_chunk(dpzo_ctx *ctx, dpzo_model *m, size_t rows)
{
    return ensure_buffers(ctx, m, rows * m->act_per_ex, rows * m->n_classes);
}

/* A linear layer's parameters src (weights row-major, then bias) in linear_kernel's
 * layout: blocked weights into wb, the bias (double, zero-padded to nout_pad) into bias. */
static void pack_linear(const op_t *op, const float *src, float *wb, double *bias)
{
    size_t nin = op->nin, nout = op->nout, np = op->nout_pad;
    for (size_t o = 0; o < np; o++) {
        float *dst = wb + (o / LIN_BLK) * nin * LIN_BLK + o % LIN_BLK;
        if (o < nout) {
            const float *row = src + o * nin;
            for (size_t i = 0; i < nin; i++)
                dst[i * LIN_BLK] = row[i];
        } else {
            for (size_t i = 0; i < nin; i++)
                dst[i * LIN_BLK] = 0.0f;
        }
        bias[o] = o < nout ? (double)src[op->n_w + o] : 0.0;
    }
}

/* pack_linear of both perturbed layers theta +- lambda u at once, materialised as
 * materialise does (th: the layer's theta, u: its direction elements): plus into
 * (wbp, bp), minus into (wbm, bm). */
static void pack_linear_pm(const op_t *op, const float *th, const float *u, double lambda,
                           float *wbp, double *bp, float *wbm, double *bm)
{
    size_t nin = op->nin, nout = op->nout, np = op->nout_pad;
    /* materialise's s = (double)sign * lambda, for sign +1 and -1 */
    const double sp = (double)1 * lambda, sm = (double)-1 * lambda;
    for (size_t o = 0; o < np; o++) {
        size_t off = (o / LIN_BLK) * nin * LIN_BLK + o % LIN_BLK;
        float *dp = wbp + off, *dm = wbm + off;
        if (o < nout) {
            const float *tr = th + o * nin, *ur = u + o * nin;
            for (size_t i = 0; i < nin; i++) {
                double t = (double)tr[i], v = (double)ur[i];
                dp[i * LIN_BLK] = (float)(t + sp * v);
                dm[i * LIN_BLK] = (float)(t + sm * v);
            }
            size_t k = op->n_w + o;
            bp[o] = (double)(float)((double)th[k] + sp * (double)u[k]);
            bm[o] = (double)(float)((double)th[k] + sm * (double)u[k]);
        } else {
            for (size_t i = 0; i < nin; i++)
                dp[i * LIN_BLK] = dm[i * LIN_BLK] = 0.0f;
            bp[o] = bm[o] = 0.0;
        }
    }
}

/* Forward of rows idx[0..B-1] (B rows of buffers): activations into m->act, logits into
 * m->logits. Layer-major: each layer is materialised once for the chunk. */
static void forward_chunk(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                          const dpzo_dataset *ds, const size_t *idx, size_t B)
{
    size_t A = m->act_per_ex, K = m->n_classes;
    for (size_t b = 0; b < B; b++)
        memcpy(m->act + b * A, ds->x + idx[b] * ds->dim, m->input_dim * sizeof *m->act);
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        if (op->kind == OP_POOL) {
            for (size_t b = 0; b < B; b++)
                pool_example(op, m->act + b * A + op->act_in, m->act + b * A + op->act_out);
            continue;
        }
        const float *src = materialise(m, theta, pert, op);
        if (op->kind == OP_LINEAR) {
            size_t nin = op->nin, nout = op->nout, np = op->nout_pad;
            pack_linear(op, src, m->wb, m->wd);
            for (size_t b0 = 0; b0 < B; b0 += LIN_T) {
                size_t T = B - b0 < LIN_T ? B - b0 : LIN_T;
                const float *x[LIN_T];
                for (size_t t = 0; t < T; t++)
                    x[t] = m->act + (b0 + t) * A + op->act_in;
                linear_kernel(x, T, nin, m->wb, m->wd, np, m->lin_out, m->nz, m->nzv);
                for (size_t t = 0; t < T; t++) {
                    const double *z = m->lin_out + t * np;
                    if (op->last) {
                        memcpy(m->logits + (b0 + t) * K, z, K * sizeof *z);
                    } else {
                        relu_to_float(z, m->act + (b0 + t) * A + op->act_out, nout);
                    }
                }
            }
        } else { /* OP_CONV */
            size_t n = op->n_w + op->n_b;
            for (size_t k = 0; k < n; k++)
                m->wd[k] = src[k];
            size_t h = op->h, w = op->w, pw = w + 2;
            for (size_t b = 0; b < B; b++) {
                pad_input(m->act + b * A + op->act_in, op->cin, h, w, m->grid_a);
                conv_example(op, m->wd, m->grid_a, m->grid_b);
                float *o = m->act + b * A + op->act_out;
                for (size_t r = 0; r < op->cout * h; r++)
                    relu_to_float(m->grid_b + r * pw, o + r * w, w);
            }
        }
    }
}

/* Rows per chunk of the fused +/- evaluation: both signs' activations (the minus sign's
 * without the shared input) and the minus sign's blocked weights within DPZO_ACT_BUDGET
 * floats, the plain pass's bound (unless one layer's weights alone exceed it). */
static size_t pm_chunk_max(const dpzo_model *m)
{
    size_t room = DPZO_ACT_BUDGET > m->max_wb ? DPZO_ACT_BUDGET - m->max_wb : 0;
    return max_sz(1, room / (2 * m->act_per_ex - m->input_dim));
}

/* Both perturbed forward passes theta + lambda u and theta - lambda u of rows
 * idx[0..B-1], layer by layer: each layer's u is generated once, and both signs'
 * weights are materialised from it. Plus: activations at m->act (stride act_per_ex),
 * logits at m->logits; minus: activations past the input at act2 (stride
 * act_per_ex - input_dim; the input segment is the plus sign's, shared), logits at
 * logits2, blocked weights at wb2. Each output is computed by the same operations as
 * forward_chunk's. */
static void forward_chunk_pm(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                             double lambda, const dpzo_dataset *ds, const size_t *idx, size_t B,
                             float *act2, double *logits2, float *wb2)
{
    const size_t A = m->act_per_ex, D = m->input_dim, A2 = A - D, K = m->n_classes;
    const double sp = (double)1 * lambda, sm = (double)-1 * lambda;
    for (size_t b = 0; b < B; b++)
        memcpy(m->act + b * A, ds->x + idx[b] * ds->dim, D * sizeof *m->act);
#define IN_P(b) (m->act + (b) * A + op->act_in)
#define IN_M(b) (shared ? IN_P(b) : act2 + (b) * A2 + (op->act_in - D))
#define OUT_P(b) (m->act + (b) * A + op->act_out)
#define OUT_M(b) (act2 + (b) * A2 + (op->act_out - D))
    for (size_t l = 0; l < m->n_ops; l++) {
        const op_t *op = &m->ops[l];
        const int shared = op->act_in < D; /* reads the input: the same for both signs */
        if (op->kind == OP_POOL) {
            for (size_t b = 0; b < B; b++) {
                pool_example(op, IN_P(b), OUT_P(b));
                pool_example(op, IN_M(b), OUT_M(b));
            }
            continue;
        }
        size_t n = op->n_w + op->n_b;
        const float *th = theta + op->w_off;
        dpzo_dir_fill(dir, op->w_off, n, m->wf); /* u, once for both signs */
        if (op->kind == OP_LINEAR) {
            size_t nin = op->nin, nout = op->nout, np = op->nout_pad;
            pack_linear_pm(op, th, m->wf, lambda, m->wb, m->wd, wb2, m->wd2);
            for (size_t b0 = 0; b0 < B; b0 += LIN_T) {
                size_t T = B - b0 < LIN_T ? B - b0 : LIN_T;
                const float *xp[LIN_T], *xm[LIN_T];
                for (size_t t = 0; t < T; t++) {
                    xp[t] = IN_P(b0 + t);
                    xm[t] = IN_M(b0 + t);
                }
                if (shared) {
                    linear_kernel_pm(xp, T, nin, m->wb, m->wd, wb2, m->wd2, np, m->lin_out,
                                     m->lin_out2, m->nz, m->nzv);
                } else {
                    linear_kernel(xp, T, nin, m->wb, m->wd, np, m->lin_out, m->nz, m->nzv);
                    linear_kernel(xm, T, nin, wb2, m->wd2, np, m->lin_out2, m->nz, m->nzv);
                }
                for (size_t t = 0; t < T; t++) {
                    const double *zp = m->lin_out + t * np, *zm = m->lin_out2 + t * np;
                    if (op->last) {
                        memcpy(m->logits + (b0 + t) * K, zp, K * sizeof *zp);
                        memcpy(logits2 + (b0 + t) * K, zm, K * sizeof *zm);
                    } else {
                        relu_to_float(zp, OUT_P(b0 + t), nout);
                        relu_to_float(zm, OUT_M(b0 + t), nout);
                    }
                }
            }
        } else { /* OP_CONV */
            for (size_t k = 0; k < n; k++) {
                double t = (double)th[k], v = (double)m->wf[k];
                m->wd[k] = (double)(float)(t + sp * v);
                m->wd2[k] = (double)(float)(t + sm * v);
            }
            size_t h = op->h, w = op->w, pw = w + 2;
            for (size_t b = 0; b < B; b++) {
                pad_input(IN_P(b), op->cin, h, w, m->grid_a);
                conv_example(op, m->wd, m->grid_a, m->grid_b);
                float *o = OUT_P(b);
                for (size_t r = 0; r < op->cout * h; r++)
                    relu_to_float(m->grid_b + r * pw, o + r * w, w);
                if (!shared) /* else grid_a already holds the padded input */
                    pad_input(IN_M(b), op->cin, h, w, m->grid_a);
                conv_example(op, m->wd2, m->grid_a, m->grid_b);
                o = OUT_M(b);
                for (size_t r = 0; r < op->cout * h; r++)
                    relu_to_float(m->grid_b + r * pw, o + r * w, w);
            }
        }
    }
#undef IN_P
#undef IN_M
#undef OUT_P
#undef OUT_M
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

static dpzo_status check_rows(dpzo_ctx *ctx, const dpzo_model *m, const float *theta,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch)
{
    if (theta == NULL || ds == NULL || (batch > 0 && idx == NULL))
        return dpzo__fail(ctx, DPZO_EINVAL, "model: NULL parameters, data set or row list");
    if (ds->dim != m->input_dim)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "model: data set has %zu features per row, the model takes %zu",
                          ds->dim, m->input_dim);
    for (size_t b = 0; b < batch; b++) {
        if (idx[b] >= ds->n)
            return dpzo__fail(ctx, DPZO_EINVAL, "model: row %zu out of range (data set has %zu)",
                              idx[b], ds->n);
        int32_t y = ds->y[idx[b]];
        if (y < 0 || (size_t)y >= m->n_classes)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "model: row %zu has label %d, the model has %zu classes", idx[b],
                              (int)y, m->n_classes);
    }
    return DPZO_OK;
}

dpzo_status dpzo_model_losses(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch,
                              double *loss)
{
    dpzo_ctx *ctx = NULL; /* the signature carries no context: errors are status only */
    if (m == NULL || (batch > 0 && loss == NULL))
        return DPZO_EINVAL;
    dpzo_status st = check_rows(ctx, m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    if (pert != NULL && (pert->dir == NULL || (pert->sign != 1 && pert->sign != -1) ||
                         !isfinite(pert->lambda) || pert->dir->dim != m->n_params))
        return DPZO_EINVAL;
    size_t chunk = batch < m->chunk_max ? batch : m->chunk_max;
    if ((st = ensure_chunk(ctx, m, chunk)) != DPZO_OK)
        return st;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_chunk(m, theta, pert, ds, idx + b0, B);
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
    dpzo_ctx *ctx = NULL; /* as dpzo_model_losses: errors are status only */
    if (m == NULL || (batch > 0 && (loss_plus == NULL || loss_minus == NULL)))
        return DPZO_EINVAL;
    dpzo_status st = check_rows(ctx, m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    if (dir == NULL || !isfinite(lambda) || dir->dim != m->n_params)
        return DPZO_EINVAL;
    if (m->wd2 == NULL) {
        m->wd2 = malloc(max_sz(m->max_wd, 1) * sizeof *m->wd2);
        m->lin_out2 = malloc(max_sz(LIN_T * m->max_lin_pad, 1) * sizeof *m->lin_out2);
        if (m->wd2 == NULL || m->lin_out2 == NULL) {
            free(m->wd2);
            free(m->lin_out2);
            m->wd2 = NULL;
            m->lin_out2 = NULL;
            return DPZO_ENOMEM;
        }
    }
    /* one buffer: the plus sign's activations (chunk x A), the minus sign's past the input
     * (chunk x (A - D)), then the minus sign's blocked weights (max_wb) */
    size_t cm = pm_chunk_max(m), chunk = batch < cm ? batch : cm;
    size_t A = m->act_per_ex, K = m->n_classes, wb2_at = chunk * (2 * A - m->input_dim);
    if ((st = ensure_buffers(ctx, m, wb2_at + m->max_wb, 2 * chunk * K)) != DPZO_OK)
        return st;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        float *act2 = m->act + B * A;
        double *logits2 = m->logits + B * K;
        forward_chunk_pm(m, theta, dir, lambda, ds, idx + b0, B, act2, logits2,
                         m->act + wb2_at);
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
    if (pert != NULL && (pert->dir == NULL || (pert->sign != 1 && pert->sign != -1) ||
                         !isfinite(pert->lambda) || pert->dir->dim != m->n_params))
        return DPZO_EINVAL;
    size_t chunk = batch < m->chunk_max ? batch : m->chunk_max;
    dpzo_status st = ensure_chunk(NULL, m, chunk);
    if (st != DPZO_OK)
        return st;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_chunk(m, theta, pert, ds, idx + b0, B);
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
    size_t chunk = n < m->chunk_max ? n : m->chunk_max;
    dpzo_status st = ensure_chunk(NULL, m, chunk);
    if (st != DPZO_OK)
        return st;
    size_t correct = 0;
    double sum = 0.0;
    for (size_t b0 = 0; b0 < n; b0 += chunk) {
        size_t B = n - b0 < chunk ? n - b0 : chunk;
        for (size_t b = 0; b < B; b++)
            m->idx_buf[b] = b0 + b;
        forward_chunk(m, theta, NULL, ds, m->idx_buf, B);
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

/* Backward of one example through op: d holds dLoss/d(output) (for the last linear, the
 * logits; for a conv, on the output grid cout x h x (w+2) with zero junk columns; else the
 * output segment), ReLU not yet applied. Writes the layer's parameter gradient to
 * m->glayer and, when din != NULL, dLoss/d(input) to din (input segment layout). */
static void backward_op(dpzo_model *m, const op_t *op, const float *theta, const float *act,
                        double *d, double *din)
{
    const float *in = act + op->act_in;
    if (op->kind == OP_LINEAR) {
        size_t nin = op->nin, nout = op->nout;
        if (op->relu) {
            const float *out = act + op->act_out;
            for (size_t o = 0; o < nout; o++)
                if (!(out[o] > 0.0f))
                    d[o] = 0.0;
        }
        const float *W = theta + op->w_off;
        for (size_t o = 0; o < nout; o++) {
            double *g = m->glayer + o * nin, dv = d[o];
            for (size_t i = 0; i < nin; i++)
                g[i] = dv * (double)in[i];
            m->glayer[op->n_w + o] = dv;
        }
        if (din != NULL) {
            for (size_t i = 0; i < nin; i++)
                din[i] = 0.0;
            for (size_t o = 0; o < nout; o++) {
                double dv = d[o];
                if (dv == 0.0)
                    continue;
                const float *w = W + o * nin;
                for (size_t i = 0; i < nin; i++)
                    din[i] += dv * (double)w[i];
            }
        }
    } else if (op->kind == OP_POOL) {
        for (size_t i = 0; i < op->in_size; i++)
            din[i] = 0.0;
        for (size_t q = 0; q < op->out_size; q++)
            din[pool_argmax(op, in, q)] = d[q];
    } else { /* OP_CONV: d on the output grid */
        size_t h = op->h, w = op->w, pw = w + 2, plane = (h + 2) * pw, n = h * pw;
        const float *out = act + op->act_out;
        for (size_t co = 0; co < op->cout; co++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < pw; x++) {
                    double *dv = d + co * n + y * pw + x;
                    if (x >= w || !(out[(co * h + y) * w + x] > 0.0f))
                        *dv = 0.0;
                }
        double *grid = m->grid_a; /* padded input; grid_b is d's buffer or din's */
        pad_input(in, op->cin, h, w, grid);
        const float *W = theta + op->w_off;
        for (size_t co = 0; co < op->cout; co++) {
            const double *dc = d + co * n;
            double bsum = 0.0;
            for (size_t p = 0; p < n; p++)
                bsum += dc[p];
            m->glayer[op->n_w + co] = bsum;
            for (size_t ci = 0; ci < op->cin; ci++) {
                const double *g = grid + ci * plane;
                for (size_t k = 0; k < 9; k++)
                    m->glayer[(co * op->cin + ci) * 9 + k] =
                        dot_lanes(dc, g + (k / 3) * pw + k % 3, n);
            }
        }
        if (din != NULL) {
            /* dgrid[ci][p + tap] += d[co][p] * W[co][ci][tap], then the interior. The
             * padded-input grid is no longer needed: reuse it. */
            double *dgrid = grid;
            memset(dgrid, 0, (op->cin * plane + 2) * sizeof *dgrid);
            for (size_t co = 0; co < op->cout; co++) {
                const double *dc = d + co * n;
                for (size_t ci = 0; ci < op->cin; ci++) {
                    const float *wk = W + (co * op->cin + ci) * 9;
                    double *g = dgrid + ci * plane;
                    for (size_t k = 0; k < 9; k++)
                        axpy_grid(g + (k / 3) * pw + k % 3, dc, (double)wk[k], n);
                }
            }
            for (size_t ci = 0; ci < op->cin; ci++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        din[(ci * h + y) * w + x] = dgrid[ci * plane + (y + 1) * pw + x + 1];
        }
    }
}

dpzo_status dpzo_model_grad(dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                            const size_t *idx, size_t batch, float *grad, float *per_example,
                            double *mean_loss)
{
    if (m == NULL || grad == NULL)
        return DPZO_EINVAL;
    dpzo_status st = check_rows(NULL, m, theta, ds, idx, batch);
    if (st != DPZO_OK)
        return st;
    size_t P = m->n_params, K = m->n_classes, A = m->act_per_ex;
    memset(m->gacc, 0, P * sizeof *m->gacc);
    size_t chunk = batch < m->chunk_max ? batch : m->chunk_max;
    if ((st = ensure_chunk(NULL, m, chunk)) != DPZO_OK)
        return st;
    /* Two delta buffers: one op's output delta, the next (earlier) op's. A conv's delta
     * lives on its output grid, so a delta handed to a conv is spread onto it first. */
    size_t dbuf = max_sz(m->max_grid, max_sz(m->max_seg, K));
    double *da = malloc(dbuf * sizeof *da), *db = malloc(dbuf * sizeof *db);
    if (da == NULL || db == NULL) {
        free(da);
        free(db);
        return DPZO_ENOMEM;
    }
    double sum = 0.0;
    for (size_t b0 = 0; b0 < batch; b0 += chunk) {
        size_t B = batch - b0 < chunk ? batch - b0 : chunk;
        forward_chunk(m, theta, NULL, ds, idx + b0, B);
        for (size_t b = 0; b < B; b++) {
            const float *act = m->act + b * A;
            int32_t y = ds->y[idx[b0 + b]];
            sum += xent(m->logits + b * K, K, y, m->probs);
            double *d = da, *dn = db;
            for (size_t k = 0; k < K; k++)
                d[k] = m->probs[k] - (k == (size_t)y ? 1.0 : 0.0);
            float *pe = per_example != NULL ? per_example + (b0 + b) * P : NULL;
            for (size_t l = m->n_ops; l-- > 0;) {
                const op_t *op = &m->ops[l];
                if (op->kind == OP_CONV) {
                    /* spread d (cout x h x w) onto the grid cout x h x (w+2), from the end */
                    size_t h = op->h, w = op->w, pw = w + 2;
                    for (size_t r = op->cout * h; r-- > 0;) {
                        d[r * pw + w] = d[r * pw + w + 1] = 0.0;
                        for (size_t x = w; x-- > 0;)
                            d[r * pw + x] = d[r * w + x];
                    }
                }
                backward_op(m, op, theta, act, d, l > 0 ? dn : NULL);
                if (op->kind != OP_POOL) {
                    size_t n = op->n_w + op->n_b;
                    double *ga = m->gacc + op->w_off;
                    for (size_t k = 0; k < n; k++)
                        ga[k] += m->glayer[k];
                    if (pe != NULL)
                        for (size_t k = 0; k < n; k++)
                            pe[op->w_off + k] = (float)m->glayer[k];
                }
                double *t = d;
                d = dn;
                dn = t;
            }
        }
    }
    free(da);
    free(db);
    for (size_t j = 0; j < P; j++)
        grad[j] = batch > 0 ? (float)(m->gacc[j] / (double)batch) : 0.0f;
    if (mean_loss != NULL)
        *mean_loss = batch > 0 ? sum / (double)batch : 0.0;
    return DPZO_OK;
}
