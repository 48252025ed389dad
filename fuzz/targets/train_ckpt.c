/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz target train_ckpt: the trainer checkpoint loader (trainer/checkpoint.c, resume.c,
 * through dpzo_trainer_resume) on a small private run (DPZero, logistic regression on 64
 * synthetic rows, a Gaussian profile). Input: one mode byte, then
 *   mode 0: the checkpoint file itself;
 *   mode 1: edits (2-byte offset, byte) applied to a valid checkpoint of this run, after
 *           which the trailing SHA-256 is recomputed: a forger's edit, which the field
 *           checks (not the hash) must catch.
 * Checks: status OK or an error with a message; when the resume succeeds, the restored
 * state is sane (step <= steps, finite parameters and learning rate, epsilon spent not NaN
 * and >= 0, equal to the profile's ledger after that many steps as a fresh run computes
 * it), and one more step runs or fails with a message. */
#include "../ckpt_input.h"
#include "dpzo/trainer.h"

#define ROWS 64
#define DIM 4
#define STEPS 20

static dpzo_dataset train_set, test_set;
static dpzo_train_config cfg;
static unsigned char *valid;
static size_t valid_n;
static double eps_after[STEPS + 1];

static dpzo_dataset synthetic(size_t n, uint64_t seed)
{
    dpzo_dataset ds = {n, DIM, 0, 0, 3, malloc(n * DIM * sizeof(float)),
                       malloc(n * sizeof(int32_t))};
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        ds.y[i] = (int32_t)(i % 3);
        for (size_t j = 0; j < DIM; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            ds.x[i * DIM + j] = (float)(0.3 * (double)ds.y[i] + 0.4 * (double)(s >> 40) * 0x1p-24);
        }
    }
    return ds;
}

static void init_once(dpzo_ctx *ctx)
{
    if (valid != NULL)
        return;
    train_set = synthetic(ROWS, 1);
    test_set = synthetic(16, 2);
    char prof[512], ckpt[512];
    snprintf(prof, sizeof prof, "%s/train_profile.json", fz_tmpdir());
    snprintf(ckpt, sizeof ckpt, "%s/valid_train.ckpt", fz_tmpdir());
    dpzo_profile_gaussian_spec spec = {.epsilon = 3.0, .delta = 1e-5, .sensitivity = 1.0,
                                       .sampling_rate = 0.25, .steps = STEPS};
    dpzo_profile p;
    if (!fz_ok(ctx, dpzo_profile_gaussian(ctx, &spec, &p), "dpzo_profile_gaussian") ||
        !fz_ok(ctx, dpzo_profile_write_file(ctx, &p, prof), "dpzo_profile_write_file"))
        fz_fail("train_ckpt: cannot make the profile: %s", dpzo_ctx_errmsg(ctx));
    dpzo_profile_free(&p);
    dpzo_train_config_init(&cfg);
    cfg.algorithm = DPZO_ALG_DPZERO;
    snprintf(cfg.model, sizeof cfg.model, "mlp:");
    cfg.steps = STEPS;
    cfg.batch_size = 16.0;
    cfg.lr = 0.05;
    cfg.seed = 7;
    cfg.clip = 1.0;
    snprintf(cfg.profile, sizeof cfg.profile, "%s", prof);
    dpzo_trainer *tr;
    if (!fz_ok(ctx, dpzo_trainer_create(ctx, &cfg, &train_set, &test_set, &tr),
               "dpzo_trainer_create"))
        fz_fail("train_ckpt: cannot create the trainer: %s", dpzo_ctx_errmsg(ctx));
    dpzo_train_report r;
    for (uint64_t t = 0; t <= STEPS; t++) {
        if (t > 0 && !fz_ok(ctx, dpzo_trainer_run(ctx, tr, t, NULL, NULL), "dpzo_trainer_run"))
            fz_fail("train_ckpt: the reference run fails: %s", dpzo_ctx_errmsg(ctx));
        dpzo_trainer_report_now(tr, &r);
        eps_after[t] = r.epsilon_spent;
        if (t == 5 && !fz_ok(ctx, dpzo_trainer_save(ctx, tr, ckpt), "dpzo_trainer_save"))
            fz_fail("train_ckpt: cannot save: %s", dpzo_ctx_errmsg(ctx));
    }
    dpzo_trainer_free(tr);
    FILE *f = fopen(ckpt, "rb");
    if (f == NULL)
        fz_fail("train_ckpt: no checkpoint at %s", ckpt);
    valid = malloc(1 << 20);
    valid_n = fread(valid, 1, 1 << 20, f);
    fclose(f);
    if (valid_n < 64)
        fz_fail("train_ckpt: the reference checkpoint has %zu bytes", valid_n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    if (ctx == NULL)
        return 0;
    init_once(ctx);
    fz_in in = fz_make(data, size);
    uint8_t mode = fz_u8(&in) % 2;
    size_t n;
    unsigned char *buf = fz_ckpt_input(&in, data, size, mode, valid, valid_n, 0, &n);
    const char *path = fz_write_file(0, "train.ckpt", buf, n);
    free(buf);
    dpzo_trainer *tr;
    if (!fz_ok(ctx, dpzo_trainer_create(ctx, &cfg, &train_set, &test_set, &tr),
               "dpzo_trainer_create"))
        fz_fail("train_ckpt: cannot create the trainer: %s", dpzo_ctx_errmsg(ctx));
    if (fz_ok(ctx, dpzo_trainer_resume(ctx, tr, path), "dpzo_trainer_resume")) {
        dpzo_train_report r;
        dpzo_trainer_report_now(tr, &r);
        if (r.step > STEPS || r.steps != STEPS)
            fz_fail("train_ckpt: resumed at step %llu of %llu", (unsigned long long)r.step,
                    (unsigned long long)r.steps);
        if (isnan(r.epsilon_spent) || r.epsilon_spent < 0.0 ||
            r.epsilon_spent != eps_after[r.step])
            fz_fail("train_ckpt: resumed at step %llu with epsilon spent %.17g, the ledger "
                    "says %.17g",
                    (unsigned long long)r.step, r.epsilon_spent, eps_after[r.step]);
        const float *theta = dpzo_trainer_theta(tr);
        for (size_t j = 0; j < dpzo_trainer_n_params(tr); j++)
            if (!isfinite(theta[j]))
                fz_fail("train_ckpt: resumed parameter %zu is %g", j, (double)theta[j]);
        if (r.step < STEPS) {
            fz_ok(ctx, dpzo_trainer_run(ctx, tr, r.step + 1, NULL, NULL), "dpzo_trainer_run");
            dpzo_trainer_report_now(tr, &r);
            if (!isfinite(r.lr))
                fz_fail("train_ckpt: learning rate %g after a resumed step", r.lr);
        }
    }
    dpzo_trainer_free(tr);
    dpzo_ctx_free(ctx);
    return 0;
}
