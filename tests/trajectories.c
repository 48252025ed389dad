/* SPDX-License-Identifier: Apache-2.0 */
/* tests/trajectories.c: `dpzo-trajectories`, the reference trajectories of every algorithm
 * of `dpzo train` (issue 29: the step sequence was rewritten; every algorithm's trajectory
 * must stay bit for bit what it was).
 *
 * Prints, for each reference configuration and each step t, a 64-bit FNV-1a hash of theta's
 * bytes after the step and the bits of the run's reported training loss, then the hash of a
 * run resumed from a checkpoint written mid-run. Private runs use the tests' fixed noise
 * (train_fixtures.h) and a fixed sampling seed, so the output is a pure function of the
 * code, the BLAS kernels and libm: compare two builds on the same machine (same
 * OPENBLAS_CORETYPE) with `diff`. Not a ctest: the matrix products' bits depend on the
 * CPU's BLAS kernels, so a stored expectation holds on one machine class only
 * (bench/results/trajectories.md says which). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "train_fixtures.h"
#include "train_internal.h"

#define TMP DPZO_TEST_TMP

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double noise_scale = 0.75;

/* The test hooks: a fixed sampling seed and the fixed noise. */
static void hooks(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, tr, 99));
    if (dpzo_algorithm_is_private(dpzo_trainer_config(tr)->algorithm))
        dpzo__trainer_set_noise_hook(tr, fixed_noise, &noise_scale);
}

typedef struct {
    const char *name;
    const dpzo_trainer *tr;
} run_user;

static int per_step(void *user, const dpzo_train_report *r)
{
    const run_user *u = user;
    const dpzo_trainer *tr = u->tr;
    printf("%s %" PRIu64 " theta %016" PRIx64 " loss %016" PRIx64 " eps %016" PRIx64 "\n",
           u->name, r->step,
           fnv(dpzo_trainer_theta(tr), dpzo_trainer_n_params(tr) * sizeof(float)),
           bits(r->train_loss), bits(r->epsilon_spent));
    return 0;
}

static void run(dpzo_ctx *ctx, const char *name, dpzo_train_config c, int image)
{
    cluster_sets d = cluster_pair(160, 40, image ? 36 : 6, 3, 0.25, 11, 12);
    if (image) {
        d.tr.rows = d.tr.cols = d.te.rows = d.te.cols = 6;
    }
    char ckpt[256];
    snprintf(ckpt, sizeof ckpt, TMP "/traj_%s.ckpt", name);
    /* the straight run, every step printed */
    dpzo_trainer *tr = NULL;
    c.eval_every = 1;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &d.tr, &d.te, &tr));
    hooks(ctx, tr);
    run_user u = {name, tr};
    uint64_t half = c.steps / 2;
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, half, per_step, &u));
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, ckpt));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, per_step, &u));
    uint64_t straight = fnv(dpzo_trainer_theta(tr), dpzo_trainer_n_params(tr) * sizeof(float));
    dpzo_trainer_free(tr);
    /* resumed from the middle */
    tr = NULL;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &d.tr, &d.te, &tr));
    hooks(ctx, tr);
    assert_ok(ctx, dpzo_trainer_resume(ctx, tr, ckpt));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
    uint64_t resumed = fnv(dpzo_trainer_theta(tr), dpzo_trainer_n_params(tr) * sizeof(float));
    printf("%s resumed theta %016" PRIx64 " %s\n", name, resumed,
           resumed == straight ? "same" : "DIFFERENT");
    dpzo_trainer_free(tr);
    unlink(ckpt);
    cluster_sets_free(&d);
}

int main(void)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 1;
    const char *prof = TMP "/traj_profile.json";
    /* q = 20 / 160 (the private rows: all 160, or 130 after a public split of 30) */
    write_profile(ctx, prof, 20.0 / 130.0, 14, 1.0);
    const char *prof160 = TMP "/traj_profile160.json";
    write_profile(ctx, prof160, 20.0 / 160.0, 14, 1.0);

    dpzo_train_config c;
    c = base_config(DPZO_ALG_DPZERO, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof160, 1.0);
    run(ctx, "dpzero-q1", c, 0);
    c.queries = 3;
    c.direction = DPZO_DIR_SPHERE;
    run(ctx, "dpzero-q3-sphere", c, 0);
    c = base_config(DPZO_ALG_DPZERO, "cnn:2-3", 14, 20, 0.05);
    set_private(&c, prof160, 1.0);
    run(ctx, "dpzero-cnn", c, 1);

    c = base_config(DPZO_ALG_MEZO, "mlp:", 14, 20, 0.1);
    c.queries = 2;
    c.lr_schedule = DPZO_LR_COSINE;
    run(ctx, "mezo-poisson-cosine", c, 0);
    c.batching = DPZO_BATCH_SHUFFLE;
    c.direction = DPZO_DIR_RADEMACHER;
    run(ctx, "mezo-shuffle", c, 0);

    c = base_config(DPZO_ALG_DPZOSO, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof160, 1.0);
    c.stages.lambda_last = 1e-4;
    run(ctx, "dpzoso", c, 0);
    c.stages.prox = 5e-2;
    run(ctx, "dpzoso-prox", c, 0);

    c = base_config(DPZO_ALG_DPZOPO, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof160, 1.0);
    c.prune.strategy = DPZO_PRUNE_INCREMENTAL;
    c.prune.rank = 1;
    c.prune.rate = 0.3;
    c.prune.queries = 2;
    run(ctx, "dpzopo-incremental-rank", c, 0);
    c.prune.strategy = DPZO_PRUNE_STATIC;
    c.prune.rank = 0;
    c.stages.prox = 5e-2;
    run(ctx, "dpzopo-static-prox", c, 0);

    c = base_config(DPZO_ALG_PAZO_M, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof, 1.0);
    c.public_size = 30;
    c.pub.batch_size = 10;
    run(ctx, "pazo-m", c, 0);
    c.algorithm = DPZO_ALG_PAZO_P;
    c.queries = 2;
    run(ctx, "pazo-p", c, 0);
    c.pub.orthonormalize = 0;
    run(ctx, "pazo-p-normalise", c, 0);
    c.queries = 1;
    c.algorithm = DPZO_ALG_PAZO_S;
    run(ctx, "pazo-s", c, 0);
    c.pub.noisy_candidate = 0;
    run(ctx, "pazo-s-no-noisy", c, 0);
    c = base_config(DPZO_ALG_DPZERO, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof, 1.0);
    c.public_size = 30;
    c.pretrain.steps = 5;
    c.pretrain.lr = 0.1;
    c.pretrain.batch_size = 10;
    run(ctx, "dpzero-pretrain", c, 0);

    c = base_config(DPZO_ALG_DPSGD, "mlp:8", 14, 20, 0.05);
    set_private(&c, prof160, 1.0);
    run(ctx, "dpsgd", c, 0);
    c = base_config(DPZO_ALG_SGD, "mlp:8", 14, 20, 0.05);
    run(ctx, "sgd", c, 0);
    c.batching = DPZO_BATCH_SHUFFLE;
    run(ctx, "sgd-shuffle", c, 0);

    unlink(prof);
    unlink(prof160);
    dpzo_ctx_free(ctx);
    return 0;
}
