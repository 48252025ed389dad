/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/model.h: the models the trainer fine-tunes, and the data they read.
 *
 * A model owns no parameters: the trainer holds theta (float32, length n_params, one flat
 * array in a documented layout) and passes it in. Zeroth-order evaluation perturbs ON THE
 * FLY: with a perturbation (dir, sign, lambda) the model reads weight j as
 *     w_j = (float)((double)theta[j] + sign * lambda * (double)u_j)
 * where u_j = dpzo_dir_at(dir, j) rounded to float, j the GLOBAL index in theta. theta is
 * never written, so there is nothing to restore and no drift.
 *
 * Built-in models: an MLP (linear layers with ReLU) and a small CNN (conv 3x3, ReLU,
 * 2x2 max-pool, linear), both ending in softmax cross-entropy. */
#ifndef DPZO_MODEL_H
#define DPZO_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/status.h"
#include "dpzo/zo_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Examples: n rows of `dim` floats (features scaled to [0, 1]) and integer labels. */
typedef struct {
    size_t n, dim;
    size_t rows, cols; /* image shape (rows * cols == dim), 0 when not an image */
    int n_classes;
    float *x;          /* n * dim */
    int32_t *y;        /* n */
} dpzo_dataset;

void dpzo_dataset_free(dpzo_dataset *ds);

/* Reads an IDX image file and its IDX label file (big-endian IDX format of LeCun et al.),
 * plain or gzip-compressed (zlib; Debian ships Fashion-MNIST as .gz). Truncated or malformed files, mismatched counts and labels
 * outside [0, 255] are clear errors. Pixels are scaled by 1/255. */
dpzo_status dpzo_idx_load(dpzo_ctx *ctx, const char *images_path, const char *labels_path,
                          dpzo_dataset *out);
/* Finds Fashion-MNIST's four IDX files: in `dir` when not NULL, else in $DPZO_FMNIST_DIR,
 * else where Debian's dataset-fashion-mnist package installs them. Writes the directory
 * found into found (size found_size). */
dpzo_status dpzo_fmnist_find(dpzo_ctx *ctx, const char *dir, char *found, size_t found_size);
/* Loads "train" or "test" from the directory dpzo_fmnist_find returned. */
dpzo_status dpzo_fmnist_load(dpzo_ctx *ctx, const char *dir, const char *split,
                             dpzo_dataset *out);
/* Moves the rows whose index i satisfies a seeded shuffle's first n_public places into
 * `pub`, the rest into `priv` (for public-data methods). */
dpzo_status dpzo_dataset_split(dpzo_ctx *ctx, const dpzo_dataset *ds, size_t n_public,
                               uint64_t seed, dpzo_dataset *pub, dpzo_dataset *priv);

/* A perturbation theta + sign * lambda * u (NULL: evaluate at theta). */
typedef struct {
    const dpzo_dir *dir;
    double lambda;
    int sign; /* +1 or -1 */
} dpzo_perturb;

typedef struct dpzo_model dpzo_model;

/* Model description: "mlp:H1-H2-..." (hidden widths; input and output sizes come from the
 * data: "mlp:128" is 784-128-10 on Fashion-MNIST, "mlp:" logistic regression) or
 * "cnn:C1-C2" ("cnn" = "cnn:fmnist" = "cnn:8-16") (see docs/trainer.md). A model holds
 * scratch buffers: use it from one thread at a time. The evaluation functions below take no
 * context: their failures (bad rows or labels, a perturbation of the wrong dimension, out of
 * memory) are reported by the status alone. */
dpzo_status dpzo_model_create(dpzo_ctx *ctx, const char *spec, size_t input_dim, size_t rows,
                              size_t cols, int n_classes, dpzo_model **out);
void dpzo_model_free(dpzo_model *m);
size_t dpzo_model_n_params(const dpzo_model *m);
/* A human-readable layout: tensor names, shapes and offsets in theta. */
const char *dpzo_model_describe(const dpzo_model *m);
/* Initial parameters (He-uniform weights, zero biases) from a seeded generator. */
void dpzo_model_init(const dpzo_model *m, uint64_t seed, float *theta);
/* Per-example losses of rows idx[0..batch-1] of ds at the (perturbed) parameters. */
dpzo_status dpzo_model_losses(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch,
                              double *loss);
/* Both signs at once: loss_plus[i] and loss_minus[i] are, bit for bit, what
 * dpzo_model_losses gives with the perturbations {dir, lambda, +1} and {dir, lambda, -1}
 * (each sign's matrix products are the calls of that pass), but each layer's direction
 * elements are generated once for the two, the input rows are gathered once, and both
 * passes run together layer by layer. Needs the activations of both signs of a chunk of rows:
 * never more than the plain pass's chunk bound in all; plus one layer's perturbed weights
 * for each sign. */
dpzo_status dpzo_model_losses_pm(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                 double lambda, const dpzo_dataset *ds, const size_t *idx,
                                 size_t batch, double *loss_plus, double *loss_minus);
/* The logits (n_classes per row, batch x n_classes, row-major) of rows idx[0..batch-1] of
 * ds at the (perturbed) parameters; labels are not read. */
dpzo_status dpzo_model_logits(dpzo_model *m, const float *theta, const dpzo_perturb *pert,
                              const dpzo_dataset *ds, const size_t *idx, size_t batch,
                              double *logits);
/* Gradient of the MEAN loss over the rows (grad: n_params, overwritten); returns the mean
 * loss in *mean_loss when not NULL. With per_example != NULL, also writes each example's
 * gradient (batch x n_params) there (for DP-SGD's per-example clipping). */
dpzo_status dpzo_model_grad(dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                            const size_t *idx, size_t batch, float *grad, float *per_example,
                            double *mean_loss);
/* Threads the model's evaluations use (0: the machine's online cores; default 1; at most
 * 256). The rows of a batch are cut into blocks of 128 (fewer for large convolutions) that
 * the threads share, so every result is the same bits whatever the count. OpenBLAS runs
 * single-threaded inside them (dpzo_model_create calls openblas_set_num_threads(1), a
 * process-wide setting). */
void dpzo_model_set_threads(dpzo_model *m, unsigned threads);
unsigned dpzo_model_threads(const dpzo_model *m);
/* Accuracy (argmax of the logits) and mean loss over all rows of ds. */
dpzo_status dpzo_model_accuracy(dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                                double *accuracy, double *mean_loss);

#ifdef __cplusplus
}
#endif
#endif
