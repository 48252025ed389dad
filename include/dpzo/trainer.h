/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/trainer.h: differentially private zeroth-order training (DPZero and baselines),
 * the privacy object that ties a run to its noise profile, and checkpoints.
 *
 * The privacy object (dpzo_privacy) is the ONLY place where a run's noise is drawn and its
 * privacy is counted: it reads and verifies a noise profile (checksum and guarantee), checks
 * that the run's plan is covered by the profile's accounting context, clips per-example
 * query values the way the accounting assumes, draws the noise from the operating system's
 * CSPRNG (never from a seed), and reports the epsilon spent after t steps (a proven upper
 * bound, cheap to query).
 *
 * Several queries per step. A step with Q queries releases, for the batch, the sum over
 * examples of each example's Q-vector of clipped values plus one noise draw per query:
 *   gaussian profile: the per-example Q-vector is clipped in L2 norm to C and each query gets
 *                     N(0, (sigma C)^2): the step is exactly the Gaussian release the profile
 *                     accounts (an L2-sensitivity-C vector query), whatever Q is;
 *   lmo profile:      Q = 1 with clip "scalar" (the value clipped to [-C, C]); Q > 1 needs a
 *                     profile with clip "l1": the Q-vector is clipped in L1 norm to C and each
 *                     query gets its own LMO draw at sensitivity C (docs/lmo.md, 5).
 * So a profile accounted for T releases covers a run of T steps for any Q. */
#ifndef DPZO_TRAINER_H
#define DPZO_TRAINER_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/model.h"
#include "dpzo/profile.h"
#include "dpzo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the privacy object ---------------------------------------------------------- */

typedef enum {
    DPZO_BATCH_POISSON = 0, /* each example joins a step with probability q = B / n */
    DPZO_BATCH_SHUFFLE = 1  /* fixed batches of B from a shuffle (without replacement) */
} dpzo_batching;

typedef struct {
    dpzo_batching batching;
    double batch_size;   /* B: expected (Poisson) or exact (shuffle) batch size */
    uint64_t n;          /* the private dataset's size */
    uint64_t steps;      /* T: steps the run plans */
    unsigned queries;    /* Q >= 1 noised scalars per step (1 for DP-SGD: one vector) */
    double clip;         /* C the run clips to: must equal the profile's sensitivity (for
                            shuffled batches, the profile's replace-one sensitivity is 2C) */
    int vector;          /* 1: DP-SGD (one Gaussian vector release per step, any length) */
    int adaptive;        /* 1: a step's queries are asked in parts, a later part chosen from
                            the noisy answers to the earlier ones (PAZO-S); each part is
                            clipped to its share with dpzo_privacy_clip_part (gaussian only) */
} dpzo_privacy_plan;

typedef struct dpzo_privacy dpzo_privacy;

/* Reads and verifies `profile_path` (a profile that fails dpzo_profile_verify, or whose
 * accountant is "paper", is refused) and checks the plan against it: same noise use
 * (clip, queries), sampling scheme and rate (Poisson q = B/n must equal the profile's rate;
 * shuffled batches need a "wor" profile with batch B and dataset n), the same C, and
 * T <= the profile's steps. A plan that would spend more than the profile's budget is
 * refused with DPZO_EINFEASIBLE and a message saying by how much. */
dpzo_status dpzo_privacy_open(dpzo_ctx *ctx, const char *profile_path,
                              const dpzo_privacy_plan *plan, dpzo_privacy **out);
void dpzo_privacy_free(dpzo_privacy *p);
const dpzo_profile *dpzo_privacy_profile(const dpzo_privacy *p);
/* The budget: the profile's epsilon at its delta, for all of its steps. */
double dpzo_privacy_budget(const dpzo_privacy *p);
double dpzo_privacy_delta(const dpzo_privacy *p);
/* A proven upper bound on the epsilon (at the profile's delta) spent by the first t steps;
 * nondecreasing in t, 0 at t = 0, at most the budget for t <= the profile's steps, +inf
 * beyond. O(1) after dpzo_privacy_open (a table computed there). */
double dpzo_privacy_epsilon_after(const dpzo_privacy *p, uint64_t t);
/* Clips one example's n values in place to the run's C (n = Q for ZO queries, the gradient
 * length for DP-SGD; L2 for gaussian, L1 for lmo; a scalar to [-C, C]). Returns the factor
 * applied (1 when not clipped). A vector with a NaN or infinite entry is set to zero (factor
 * 0): it can then not break the sensitivity. float version for gradients. */
double dpzo_privacy_clip(const dpzo_privacy *p, double *values, size_t n);
double dpzo_privacy_clip_float(const dpzo_privacy *p, float *values, size_t n);
/* Clips one part of an example's query vector in L2 norm to C sqrt(share), 0 < share <= 1
 * (gaussian profiles only; anything else zeroes the values). A step asked in parts whose
 * shares sum to at most 1, each part's queries with N(0, (sigma C)^2) noise, is an adaptive
 * composition of Gaussian releases whose sensitivities' squares sum to at most C^2: it is
 * dominated by the single Gaussian release of sensitivity C the profile accounts
 * (docs/algorithms.md). */
double dpzo_privacy_clip_part(const dpzo_privacy *p, double *values, size_t n, double share);
/* n noise draws for n coordinates, already scaled (sigma C or C X), from the CSPRNG.
 * Fails only when the CSPRNG fails. */
dpzo_status dpzo_privacy_noise(dpzo_ctx *ctx, dpzo_privacy *p, double *out, size_t n);


/* ---- training runs (trainer/config.c, sampler.c, step.c, train.c, resume.c, checkpoint.c) *
 *
 * A run is described by a JSON configuration (docs/trainer.md lists every key). The
 * trainer owns theta (float32, the model's layout), draws its batches, computes one step
 * of the chosen algorithm, keeps the privacy ledger through the privacy object above,
 * writes metrics (JSON lines) and checkpoints, and resumes from a checkpoint exactly (the
 * same batches, directions and learning rates; a private run draws fresh CSPRNG noise).
 *
 *   dpzero  zeroth-order: per-example central differences along directions regenerated
 *           from (seed, step, query); each example's Q-vector clipped, summed, noised once
 *           per query (the privacy object), divided by the expected batch size B;
 *   mezo    the same without clipping and noise (non-private);
 *   dpsgd   first order: per-example gradients clipped in L2 to C, summed, Gaussian noise
 *           (sigma C per coordinate), divided by B;
 *   sgd     first order, the mean gradient of the batch (non-private);
 *   dpmd    first order with public data (DPMD as the PAZO paper runs it, Amid et al. 2022's
 *           first-order form): dpsgd's release divided by B, weighted alpha_t =
 *           cos(pi t / (2 T)), plus (1 - alpha_t) times one public batch's mean gradient;
 *           its privacy is dpsgd's (the public part is post-processing). */

typedef enum {
    DPZO_ALG_DPZERO = 0,
    DPZO_ALG_MEZO = 1,
    DPZO_ALG_DPSGD = 2,
    DPZO_ALG_SGD = 3,
    DPZO_ALG_DPZOSO = 4, /* DP-ZOSO: DPZero in stages (smoothing, lengths, lr, proximal) */
    DPZO_ALG_DPZOPO = 5, /* DP-ZOPO: DP-ZOSO with data-free pruning masks */
    DPZO_ALG_PAZO_M = 6, /* PAZO-M: public gradient mixed with the private ZO estimate */
    DPZO_ALG_PAZO_P = 7, /* PAZO-P: private ZO directions in the span of public gradients */
    DPZO_ALG_PAZO_S = 8, /* PAZO-S: public candidates selected by noisy private losses */
    DPZO_ALG_DPMD = 9    /* DPMD: dpsgd's release mixed with a public gradient (docs 7) */
} dpzo_algorithm;

/* DP-ZOSO / DP-ZOPO stages (docs/algorithms.md, 2): S stages, stage s (1-based) runs
 * T_s = first_steps 2^(s-1) steps (the last stage runs to the end of the run), with the
 * smoothing lambda_s = lambda (lambda_last / lambda)^((s-1)/(S-1)) and the learning rate
 * lr lr_decay^(s-1); prox > 0 adds the proximal pull prox (theta - theta^(s-1)) to the
 * update, theta^(s-1) the parameters at the stage's start. */
typedef struct {
    unsigned count;       /* S >= 1 (default 3) */
    uint64_t first_steps; /* T_1 (0: ceil(steps / (2^S - 1)), the stages fill the run) */
    double lambda_last;   /* lambda_S (NaN: lambda, a constant smoothing) */
    double lr_decay;      /* in (0, 1] (default 0.5) */
    double prox;          /* >= 0 (default 0: off; the paper's value is 5e-4) */
} dpzo_stage_config;

typedef enum {
    DPZO_PRUNE_STATIC = 0,      /* one mask at the start, rate r */
    DPZO_PRUNE_DYNAMIC = 1,     /* a new mask at each stage's start, rate r */
    DPZO_PRUNE_INCREASING = 2,  /* a new mask at each stage's start, rate r growth^(s-1) */
    DPZO_PRUNE_INCREMENTAL = 3  /* as increasing, the previous stage's coordinates kept */
} dpzo_prune_strategy;

/* DP-ZOPO's data-free pruning (docs/algorithms.md, 3). */
typedef struct {
    dpzo_prune_strategy strategy;
    double rate;          /* r in (0, 1]: the fraction of parameters tuned (stage 1) */
    double growth;        /* rate factor per stage (increasing, incremental; default 2) */
    int select_largest;   /* 0: the r d smallest |score| (default), 1: the largest */
    int rank;             /* 0: multipliers 1 (a mask), 1: rank-based in [rank_lower, rank_upper] */
    double rank_upper, rank_lower; /* default 1.2, 0.8 */
    unsigned queries;     /* ZO queries of the score (default 1) */
    double lambda;        /* the score's ZO perturbation (default 1e-3) */
} dpzo_prune_config;

/* The public-data methods (PAZO-M/P/S; docs/algorithms.md, 4-6; DPMD reads batch_size, 7). */
typedef struct {
    double batch_size;       /* b': rows per public batch (default 32) */
    unsigned k;              /* PAZO-P/S: public gradients per step (default 3) */
    double alpha;            /* PAZO-M: the public gradient's weight in [0, 1] (default 0.5) */
    int orthonormalize;      /* PAZO-P: 1 Gram-Schmidt (default), 0 normalise only */
    double candidate_scale;  /* PAZO-S: the noisy candidate's N(0, s^2 I) (default 1e-3) */
    int noisy_candidate;     /* PAZO-S: 1 (default): k + 1 candidates, 0: the k public ones */
} dpzo_public_config;

/* Non-private SGD on the public rows before the run (any algorithm; needs public rows). */
typedef struct {
    uint64_t steps;       /* 0: none */
    double lr;
    double batch_size;
} dpzo_pretrain_config;

typedef enum { DPZO_LR_CONSTANT = 0, DPZO_LR_LINEAR = 1, DPZO_LR_COSINE = 2 } dpzo_lr_schedule;

/* The sphere direction's radius: sqrt(d), d^(1/4), or a fixed number. */
typedef enum {
    DPZO_RADIUS_SQRT_D = 0,
    DPZO_RADIUS_D_QUARTER = 1,
    DPZO_RADIUS_FIXED = 2
} dpzo_radius_kind;

#define DPZO_TRAIN_PATH_MAX 1024

typedef struct {
    dpzo_algorithm algorithm;
    char model[64];                        /* dpzo_model_create spec: "mlp:128", "cnn:8-16" */
    char data_dir[DPZO_TRAIN_PATH_MAX];    /* Fashion-MNIST directory; "" = dpzo_fmnist_find */
    uint64_t train_subset;                 /* use the first N training rows (0: all) */
    uint64_t public_size;                  /* rows held out as public data (0: none) */
    uint64_t validation_size;              /* rows held out for validation only (0: none) */
    char profile[DPZO_TRAIN_PATH_MAX];     /* noise profile (private algorithms); "" otherwise */
    uint64_t steps;                        /* T: planned steps, 1 .. 2^32 - 1 */
    double batch_size;                     /* B: expected (poisson) or exact (shuffle) */
    dpzo_batching batching;
    double lr;                             /* base learning rate */
    dpzo_lr_schedule lr_schedule;
    double lambda;                         /* ZO perturbation size */
    dpzo_dir_kind direction;
    dpzo_radius_kind radius_kind;          /* sphere only */
    double radius;                         /* DPZO_RADIUS_FIXED: the radius */
    unsigned queries;                      /* Q directions per step (ZO) */
    double clip;                           /* C (private algorithms); NaN otherwise */
    uint64_t seed;                         /* directions, initial theta, public split */
    uint64_t eval_every;                   /* evaluate every k steps (0: start and end only) */
    char metrics[DPZO_TRAIN_PATH_MAX];     /* JSON-lines file; "" = none */
    char checkpoint[DPZO_TRAIN_PATH_MAX];  /* checkpoint file; "" = none */
    uint64_t checkpoint_every;             /* also every k steps (0: only when a run stops) */
    dpzo_stage_config stages;              /* dpzoso, dpzopo */
    dpzo_prune_config prune;               /* dpzopo */
    dpzo_public_config pub;                /* pazo-m, pazo-p, pazo-s, dpmd (batch_size) */
    dpzo_pretrain_config pretrain;         /* any algorithm with public rows */
    unsigned threads;                      /* the model's threads (0: the machine's cores);
                                              results do not depend on it */
} dpzo_train_config;

/* Defaults: batching poisson, lr_schedule constant, lambda 1e-3, direction gaussian,
 * radius sqrt_d, queries 1, seed 0, no metrics or checkpoint; the required fields
 * (algorithm -1, model "", steps 0, batch_size NaN, lr NaN, clip NaN) unset. */
void dpzo_train_config_init(dpzo_train_config *c);
/* Parses a configuration (JSON object text). Unknown, duplicated or mistyped keys, values
 * out of range and keys that do not apply to the algorithm are DPZO_EPARSE / DPZO_EINVAL
 * with a message naming the key. Relative paths are resolved against base_dir (the
 * configuration file's directory; NULL or "" = as given). */
dpzo_status dpzo_train_config_parse(dpzo_ctx *ctx, const char *json, const char *base_dir,
                                    dpzo_train_config *out);
/* Reads FILE and parses it with base_dir = FILE's directory. */
dpzo_status dpzo_train_config_read_file(dpzo_ctx *ctx, const char *path,
                                        dpzo_train_config *out);
/* The value checks of the parser, on a struct (after command-line overrides). */
dpzo_status dpzo_train_config_validate(dpzo_ctx *ctx, const dpzo_train_config *c);
const char *dpzo_algorithm_name(dpzo_algorithm a);
const char *dpzo_lr_schedule_name(dpzo_lr_schedule s);
/* 1 for every algorithm but mezo and sgd. */
int dpzo_algorithm_is_private(dpzo_algorithm a);
/* 1 for dpzoso and dpzopo. */
int dpzo_algorithm_is_stagewise(dpzo_algorithm a);
/* 1 for dpsgd, sgd and dpmd (gradients of dpzo's own models; `dpzo train` only). */
int dpzo_algorithm_is_first_order(dpzo_algorithm a);
/* Queries (noised scalars) per step: queries for the ZO algorithms, k + 1 (or k) for
 * pazo-s, 1 for the first-order ones. */
unsigned dpzo_train_queries_per_step(const dpzo_train_config *c);
/* The learning rate of step t (0-based) of T: constant lr; linear lr (1 - t/T); cosine
 * lr (1 + cos(pi t / T)) / 2. */
double dpzo_lr_at(dpzo_lr_schedule s, double lr, uint64_t t, uint64_t T);

typedef struct dpzo_trainer dpzo_trainer;

/* What the trainer reports after each step (and once before the first step of a fresh
 * run, step 0). */
typedef struct {
    uint64_t step, steps;    /* steps done, of T */
    int evaluated;           /* 1: a test evaluation was made at this step (a metrics line) */
    double train_loss;       /* mean over the examples of the steps since the previous
                                evaluation (ZO: (f(theta + lambda u_0) + f(theta - lambda u_0))/2,
                                first order: f(theta)); NaN when there were none */
    double test_accuracy;    /* of the latest evaluation (NaN before the first) */
    double test_loss;
    double validation_accuracy; /* on the data.validation_size rows, at the latest
                                   evaluation of this session (NaN: none or not yet) */
    double validation_loss;
    double epsilon_spent;    /* proven upper bound after `step` steps; +inf: non-private */
    double lr;               /* the learning rate of the latest step */
    double seconds;          /* training wall time so far, over all resumed sessions */
} dpzo_train_report;

/* Called after each step; a non-zero return stops the run cleanly (DPZO_EINTERRUPTED). */
typedef int (*dpzo_train_callback)(void *user, const dpzo_train_report *r);

/* Sets up a run: loads the data (train and test NULL: Fashion-MNIST as the configuration
 * says; otherwise the caller's data sets, which must outlive the trainer), takes the first
 * train_subset rows, holds out validation_size rows (dpzo_dataset_split with a fixed key, the
 * same rows for every seed), then public_size of the rest (dpzo_dataset_split with the seed), builds
 * the model, initialises theta from the seed, opens the privacy object (private algorithms: a
 * plan beyond the profile is refused with DPZO_EINFEASIBLE) and draws the sampling seed
 * from getrandom. */
dpzo_status dpzo_trainer_create(dpzo_ctx *ctx, const dpzo_train_config *cfg,
                                const dpzo_dataset *train, const dpzo_dataset *test,
                                dpzo_trainer **out);
void dpzo_trainer_free(dpzo_trainer *tr);
/* Restores a checkpoint written by a run of the same configuration (the fingerprint covers
 * everything that shapes the trajectory: algorithm, model, data, steps, batching, learning
 * rate and schedule, ZO settings, clip, seed and the profile's checksum). Must come before
 * the first step. The metrics file, if any, is cut back to what it held at the checkpoint. */
dpzo_status dpzo_trainer_resume(dpzo_ctx *ctx, dpzo_trainer *tr, const char *path);
/* Runs steps until `until` steps are done (0 or > T: T). Evaluates at step 0 of a fresh
 * run, every eval_every steps and at step T, writing one metrics line each time; writes
 * the checkpoint every checkpoint_every steps and when it stops. Returns DPZO_OK when done,
 * DPZO_EINTERRUPTED when the callback stopped it, DPZO_EINFEASIBLE when the next step would
 * spend more than the profile's budget (the run stops before it). */
dpzo_status dpzo_trainer_run(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t until,
                             dpzo_train_callback cb, void *user);
/* Writes a checkpoint of the current state atomically (docs/files.md: a temporary created
 * exclusively beside PATH, fsync, rename, fsync of the folder; a device or FIFO at PATH is
 * refused, never replaced). */
dpzo_status dpzo_trainer_save(dpzo_ctx *ctx, dpzo_trainer *tr, const char *path);
/* Test accuracy and mean loss at the current theta (no metrics line). */
dpzo_status dpzo_trainer_evaluate(dpzo_ctx *ctx, dpzo_trainer *tr, double *accuracy,
                                  double *loss);
/* The same on the validation rows (data.validation_size); NaN and NaN when there are none. */
dpzo_status dpzo_trainer_validate(dpzo_ctx *ctx, dpzo_trainer *tr, double *accuracy,
                                  double *loss);
void dpzo_trainer_report_now(const dpzo_trainer *tr, dpzo_train_report *r);
const float *dpzo_trainer_theta(const dpzo_trainer *tr);
size_t dpzo_trainer_n_params(const dpzo_trainer *tr);
const dpzo_train_config *dpzo_trainer_config(const dpzo_trainer *tr);
/* NULL for mezo and sgd. */
const dpzo_privacy *dpzo_trainer_privacy(const dpzo_trainer *tr);
/* Rows of the private training set, of the public hold-out, of the validation hold-out,
 * of the test set. */
size_t dpzo_trainer_n_train(const dpzo_trainer *tr);
size_t dpzo_trainer_n_public(const dpzo_trainer *tr);
size_t dpzo_trainer_n_validation(const dpzo_trainer *tr);
size_t dpzo_trainer_n_test(const dpzo_trainer *tr);
/* The configuration fingerprint (64 hex digits). */
const char *dpzo_trainer_fingerprint(const dpzo_trainer *tr);

#ifdef __cplusplus
}
#endif
#endif
