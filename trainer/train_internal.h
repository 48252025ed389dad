/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/train_internal.h: the training loop's private pieces, shared by its files and
 * its tests (tests/test_train.c): batch sampling, one step of each algorithm, the trainer
 * struct, and the checkpoint format. */
#ifndef DPZO_TRAIN_INTERNAL_H
#define DPZO_TRAIN_INTERNAL_H

#include <stdint.h>
#include <time.h>
#include "dpzo/trainer.h"

/* ---- batch sampling (sampler.c) ----------------------------------------------------- *
 * The streams are ChaCha20 (RFC 8439, from libsodium) keyed by the sampling seed, the
 * stream named in the nonce. Poisson: example i joins step t iff the i-th 32-bit word of
 * stream (Poisson, t) is below floor(q 2^32). Shuffle, non-private runs: epoch e is a
 * Fisher-Yates permutation from stream (shuffle, e); step t takes places [p B, p B + B) of
 * epoch t / E, p = t mod E, E = floor(n / B) steps per epoch (the last n mod B places are
 * not used). Shuffle, private runs (independent = 1): each step's batch is a uniformly
 * random B-subset drawn from stream (without replacement, t) alone, independent of the
 * other steps: exactly what the without-replacement accounting (Wang-Balle-Kasiviswanathan)
 * analyses. Batches depend only on (seed, t): nothing else needs saving. */
typedef struct {
    dpzo_batching kind;
    uint64_t seed;
    size_t n;
    uint32_t threshold; /* poisson: floor(q 2^32) */
    int all;            /* poisson with q >= 1 */
    size_t batch;       /* shuffle: B */
    int independent;    /* shuffle: a fresh B-subset per step (private runs) */
    uint64_t per_epoch; /* shuffle: E */
    size_t *perm;       /* shuffle: the permutation of epoch perm_epoch */
    uint64_t perm_epoch;
} dpzo__sampler;

dpzo_status dpzo__sampler_init(dpzo_ctx *ctx, dpzo__sampler *s, dpzo_batching kind,
                               uint64_t seed, size_t n, double batch_size, int independent);
void dpzo__sampler_free(dpzo__sampler *s);
/* The rows of step t into idx (capacity n for poisson, B for shuffle); returns the count. */
size_t dpzo__sampler_batch(dpzo__sampler *s, uint64_t t, size_t *idx);
/* Shuffle: the epoch and the place in it of step t (poisson: 0, t). */
void dpzo__sampler_position(const dpzo__sampler *s, uint64_t t, uint64_t *epoch,
                            uint64_t *pos);
/* The seed of the sampling stream: 64 bits from getrandom. */
dpzo_status dpzo__random_seed(dpzo_ctx *ctx, uint64_t *out);

/* ---- the trainer -------------------------------------------------------------------- */

typedef struct dpzo_zo dpzo_zo;

struct dpzo_trainer {
    dpzo_train_config cfg;
    char fingerprint[65];
    /* data: `loaded` / `test_loaded` own what was read from disk; `priv` and `pub` own the
     * split when public_size > 0, else priv is a view of the (subset of the) training set */
    dpzo_dataset loaded, test_loaded, priv, pub, val;
    int priv_owned;
    const dpzo_dataset *test;
    dpzo_model *model;
    size_t P;
    float *theta;
    /* the step (zo_step.c): sampler, privacy object, directions, release, ledger, the
     * stage's anchor and mask, the training loss's accumulators */
    dpzo_zo *zo;
    /* the model's side of a step (train_step.c, first_order.c), allocated once */
    size_t *idx;
    double *lp, *lm;          /* b: the losses along one direction or at one candidate */
    double *LP, *LM;          /* b x Q: the step's losses as dpzo_zo_clip_sum takes them */
    double *qsum;             /* the batch's clipped sums of one release */
    dpzo__sampler pub_sampler; /* public data (pazo-*) */
    size_t *pub_idx;
    float *gpub;              /* k x P public gradients (pazo-p: the basis) */
    float *grad;              /* P: a (public) gradient */
    double *gsum, *gnoise;    /* P: dpsgd's clipped gradient sum and its release */
    float *per_ex;            /* chunk x P per-example gradients (dpsgd) */
    size_t pe_chunk;
    /* progress (the step count is the step object's) */
    double lr_last;
    double test_acc, test_loss;
    double val_acc, val_loss; /* NaN until this session's first evaluation */
    double seconds;           /* of finished sessions (and the current one at a save) */
    double session_start;     /* monotonic clock at the current run's start, < 0: none */
    uint64_t metrics_offset;  /* bytes of the metrics file that belong to this run */
    int resumed;
};

/* The monotonic clock in seconds. */
static inline double dpzo__now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Training seconds so far: finished sessions plus the running one. */
static inline double dpzo__trainer_seconds(const dpzo_trainer *tr)
{
    return tr->seconds + (tr->session_start >= 0.0 ? dpzo__now_seconds() - tr->session_start : 0.0);
}

/* dpzo_train_config_validate; step_only: the step's configuration (dpzo/zo_step.h), which
 * has no model. */
dpzo_status dpzo__train_config_check(dpzo_ctx *ctx, const dpzo_train_config *c, int step_only);


/* The test hooks: the sampling seed in place of the one drawn from getrandom (so two runs
 * can share their batches; never used by the CLI: a known sampling seed voids the
 * amplification by subsampling), and a deterministic stand-in for the CSPRNG's noise. */
dpzo_status dpzo__trainer_set_sampling_seed(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t seed);
void dpzo__trainer_set_noise_hook(dpzo_trainer *tr,
                                  void (*hook)(void *user, uint64_t step, double *out, size_t n),
                                  void *user);
/* The run's step object (tests). */
dpzo_zo *dpzo__trainer_zo(const dpzo_trainer *tr);

/* The sampler's keystream (sampler.c; its test hooks): the 32-bit words of ChaCha20 blocks
 * ctr, ctr + 1, ... (nblocks of them, the counter modulo 2^32) with this key and 96-bit
 * nonce (RFC 8439), from libsodium; the same words from dpzo's vector block function of a
 * Poisson step (impl DPZO_SAMPLER_AVX2: nblocks a multiple of 8, AVX512: of 16; -1 when the
 * CPU or build lacks it); dpzo__sampler_impl forces the version of the Poisson steps (-1:
 * the best the CPU has that agrees with libsodium; returns -1, changing nothing, for a
 * version this CPU or build lacks). */
enum { DPZO_SAMPLER_SODIUM = 0, DPZO_SAMPLER_AVX2 = 1, DPZO_SAMPLER_AVX512 = 2 };
void dpzo__chacha20_words(const unsigned char key[32], const unsigned char nonce[12],
                          uint32_t ctr, size_t nblocks, uint32_t *out);
int dpzo__chacha20_simd_words(int impl, const unsigned char key[32],
                              const unsigned char nonce[12], uint32_t ctr, size_t nblocks,
                              uint32_t *out);
int dpzo__sampler_impl(int impl);

/* ---- one step of `dpzo train` (train_step.c, first_order.c) --------------------------- */

/* Per-example central differences along dir: d[i] = (lp[i] - lm[i]) / (2 lambda), with
 * lp, lm the losses at theta + lambda u and theta - lambda u (theta is not written).
 * d may be strided (d[i * stride]); lp, lm are b doubles of scratch that keep the losses. */
dpzo_status dpzo__zo_differences(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                 double lambda, const dpzo_dataset *ds, const size_t *idx,
                                 size_t b, double *lp, double *lm, double *d, size_t stride);
/* dpzo_model_losses_pm that also writes the direction's elements, as floats, to u_all
 * (n_params of them; NULL: not kept): what dpzo_dir_fill gives, generated once for the
 * evaluation and reused by the update (trainer/model.c). */
dpzo_status dpzo__model_losses_pm_u(dpzo_model *m, const float *theta, const dpzo_dir *dir,
                                    double lambda, const dpzo_dataset *ds, const size_t *idx,
                                    size_t batch, double *loss_plus, double *loss_minus,
                                    float *u_all);
/* The context's message for a model's failure: "WHAT failed: STATUS" (model.c). */
dpzo_status dpzo__model_failed(dpzo_ctx *ctx, dpzo_status st, const char *what);
/* Step t = the steps done: its batch from the step object's sampler, then the step object's
 * sequence with the trainer's model evaluating. */
dpzo_status dpzo__trainer_step(dpzo_ctx *ctx, dpzo_trainer *tr);
/* dpsgd / sgd / dpmd on the begun step t's b rows (tr->idx): gradient, release, update
 * (dpmd: its public gradient already in tr->gpub, train_step.c). */
dpzo_status dpzo__first_order_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b);
/* DPMD's weight on the private gradient at step t of T: cos(pi t / (2 T)). */
double dpzo__dpmd_weight(uint64_t t, uint64_t T);
/* The first-order per-example chunk size: at most 64 MiB of per-example gradients. */
size_t dpzo__pe_chunk(size_t P, double batch);
/* DP-ZOPO's score sums of a model: its linearised network (every weight |theta_j|, an
 * all-ones input of shape's dimensions, the outputs summed) at |theta| +- beta v[p]. */
dpzo_status dpzo__prune_sums(dpzo_ctx *ctx, dpzo_model *model, const dpzo_dataset *shape,
                             const float *theta, size_t P, const dpzo_dir *const *v,
                             unsigned n, double beta, double *lp, double *lm);

/* ---- stages and pruning (stagewise.c) ------------------------------------------------ */

typedef struct {
    unsigned s;          /* 1-based stage */
    uint64_t start, len; /* its first step and its length (the last stage runs to T) */
    double lambda, lr;   /* its smoothing and learning rate */
    double rate;         /* dpzopo: its pruning rate */
} dpzo__stage;

/* The pruning score's directions: Gaussian, keyed by (seed ^ this, stage - 1, query). */
#define DPZO__PRUNE_SEED_TWEAK 0x5052554e45534545ull
/* The key of the validation hold-out's shuffle ("VALIDATE"): fixed, so that every seed and
 * algorithm holds out the same data.validation_size rows. */
#define DPZO__VALIDATION_KEY 0x56414c4944415445ull

/* The stage of step t (0-based) of a stagewise configuration. */
void dpzo__stage_of(const dpzo_train_config *c, uint64_t t, dpzo__stage *out);
/* DP-ZOPO's mask for stage s at the trainer's theta (docs/algorithms.md, 3): the data-free
 * ZO score, the selection of round(rate d) coordinates (at least 1) and their multipliers,
 * written into mask (P floats; 0 for frozen coordinates). prev: the previous stage's mask
 * (incremental) or NULL. Returns the number of selected coordinates in *n_sel. */
/* The score's query direction v_p of stage s (Gaussian, keyed by (seed ^ tweak, s - 1, p)). */
dpzo_status dpzo__prune_dir(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned s, unsigned p,
                            uint64_t P, dpzo_dir *v);
/* score_j = theta_j sum_p c_p v_pj, c_p = (lp[p] - lm[p]) / (2 beta) / P_q (0 when not
 * finite), lp and lm the linearised network's output sums at |theta| +- beta v_p. */
dpzo_status dpzo__prune_score(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned s,
                              const double *lp, const double *lm, const float *theta, size_t P,
                              double *score);
/* The mask of round(rate P) coordinates (at least one) by |score| (prev: an incremental
 * stage's previous mask, whose coordinates come first), with its multipliers. */
dpzo_status dpzo__prune_select(dpzo_ctx *ctx, const dpzo_prune_config *pc, const double *score,
                               size_t P, double rate, const float *prev, float *mask,
                               size_t *n_sel);

/* ---- public data (train_step.c; pazo.c) ----------------------------------------------- */

/* Non-private SGD on the public rows (the configuration's pretrain), from the current theta. */
dpzo_status dpzo__pretrain(dpzo_ctx *ctx, dpzo_trainer *tr);
/* Public batch j of step t: rows of tr->pub into idx (b' of them). */
size_t dpzo__public_batch(dpzo_trainer *tr, uint64_t t, unsigned j, size_t *idx);
/* PAZO-P's basis: the k columns of G (k x P floats, column j at G + j P) orthonormalised
 * (modified Gram-Schmidt with a second pass, in double) or only normalised; columns that are
 * zero, not finite, or (orthonormalising) within 1e-6 of the span of the earlier ones are
 * dropped. The kept columns are packed first; returns their count. */
unsigned dpzo__span_basis(float *G, unsigned k, size_t P, int orthonormalize);
/* PAZO-S (docs/algorithms.md 6): one example's m candidate losses of part 1 (the k public
 * candidates) or part 2 (the noisy one): a non-finite loss counts as 1e150 (not preferred;
 * a fixed value, so the sensitivity holds), then the L2 clip to the part's share of C
 * (k / (k + 1) and 1 / (k + 1), all of C without the noisy candidate). */
void dpzo__pazo_s_clip_row(const dpzo_privacy *p, const dpzo_public_config *u, double *v,
                           unsigned m, int part);
/* The candidate with the smallest released sum (the first of equals). */
unsigned dpzo__pazo_s_best(const double *released, unsigned k);
/* The noisy candidate g' = best + s z (P floats into out), z keyed by (seed, t, k). */
dpzo_status dpzo__pazo_s_noisy(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t,
                               const float *best, size_t P, float *out);
/* PAZO-P's direction k of step t: out = G c (P floats), c in R^m the configured kind keyed by
 * (seed, t, k) (a sphere of radius sqrt(m)), G the m basis columns; zero when m = 0. coef:
 * m doubles of scratch. */
dpzo_status dpzo__span_vector(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t, unsigned k,
                              const float *G, unsigned m, size_t P, double *coef, float *out);


/* ---- configuration (config.c) ------------------------------------------------------- */

/* SHA-256 (hex) of the canonical text of everything that shapes the trajectory: the
 * configuration without its output settings, the profile's checksum (or "none") and the
 * data (rows, features, classes and a 64-bit hash of the private rows). */
void dpzo__train_fingerprint(const dpzo_train_config *c, const char *profile_sha256,
                             const dpzo_dataset *train, char hex[65]);
/* The pruning rate's growth per stage: prune.growth, or its strategy's default. */
double dpzo__prune_growth(const dpzo_prune_config *p);
/* The sphere radius for d parameters. */
double dpzo__train_radius(const dpzo_train_config *c, size_t d);

/* ---- checkpoints (checkpoint.c) ----------------------------------------------------- */

#define DPZO_CKPT_MAGIC "DPZOCKPT"
#define DPZO_CKPT_VERSION 1u
#define DPZO_CKPT_HEADER 208u /* bytes before theta */

/* The state a checkpoint holds besides theta (all little-endian on disk). */
typedef struct {
    uint32_t algorithm;
    unsigned char fingerprint[32];
    uint64_t n_params;
    uint64_t step, steps;
    uint64_t dir_seed, sampling_seed;
    uint32_t batching;
    uint64_t epoch, epoch_pos;  /* sampler position of the next step */
    double lr, lr_last;
    uint32_t lr_schedule;
    uint64_t ledger_steps;
    double epsilon_spent;       /* +inf: non-private */
    uint64_t metrics_offset;
    double loss_sum;
    uint64_t loss_count;
    double test_acc, test_loss;
    double seconds;
} dpzo__ckpt_state;

/* Writes header, theta and a SHA-256 of both to path, atomically (common/dpzo_io.c: a
 * temporary created exclusively beside path, fsync, rename, fsync of the folder; a device
 * or FIFO at path is refused). */
dpzo_status dpzo__ckpt_write(dpzo_ctx *ctx, const char *path, const dpzo__ckpt_state *st,
                             const float *theta);
/* Reads and validates a checkpoint (a regular file; size, magic, version, length for
 * n_params, checksum, then every field against its domain and every state value finite);
 * theta (n_params floats) is filled only when everything holds. The caller checks the
 * fingerprint and the fields against its run's configuration. */
dpzo_status dpzo__ckpt_read(dpzo_ctx *ctx, const char *path, size_t n_params,
                            dpzo__ckpt_state *st, float *theta);

#endif
