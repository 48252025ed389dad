/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_train.c: the training loop (trainer/config.c, sampler.c, train_step.c, train.c,
 * checkpoint.c) and `dpzo train`.
 *
 * Oracles, none of them the code under test:
 *   - the ZO estimate against a logistic-regression forward pass written here in double
 *     (central difference at the explicitly rounded theta +- lambda u), and against the
 *     model's per-example gradients dotted with u (a directional derivative);
 *   - the schedules' closed forms at chosen steps; binomial mean and variance of Poisson
 *     batch sizes; exact coverage of shuffled epochs;
 *   - noise: the count of draws per step, and the variance of (noisy - clean) against
 *     (sigma C)^2 from the profile written by the test;
 *   - resume: an uninterrupted run of the same configuration (memcmp of theta, metrics
 *     lines equal up to their wall-clock seconds);
 *   - learning: accuracy of a separable synthetic problem before and after. */
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <unistd.h>
#include "testutil.h"
#include "cliutil.h"
#include "dpzo/trainer.h"
#include "train_internal.h"
#include "train_fixtures.h"
#include "zo_internal.h"

/* The run's step object (sampler, release, ledger). */
static dpzo_zo *zo_of(const dpzo_trainer *tr) { return dpzo__trainer_zo(tr); }

/* The floats of a checkpoint's state: theta, the stage's anchor (stagewise), the mask
 * (dpzopo). */
static size_t state_floats(const dpzo_trainer *tr)
{
    const dpzo_algorithm a = dpzo_trainer_config(tr)->algorithm;
    return dpzo_trainer_n_params(tr) *
           (1 + (size_t)dpzo_algorithm_is_stagewise(a) + (a == DPZO_ALG_DPZOPO));
}

#define TMP DPZO_TEST_TMP

static char *slurp_alloc(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* ---- the ZO estimate ------------------------------------------------------------------ */

static void test_zo_estimate_central_difference(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_dataset ds = clusters(12, 5, 3, 0.3, 1, 2);
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:", 5, 0, 0, 3, &m));
    size_t P = dpzo_model_n_params(m);
    assert_int_equal(P, 18);
    float theta[18], copy[18], wp[18], wm[18], u[18];
    dpzo_model_init(m, 3, theta);
    memcpy(copy, theta, sizeof theta);
    dpzo_dir dir;
    assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 11, 4, 0, P, 1.0));
    dpzo_dir_fill(&dir, 0, P, u);
    const double lambda = 1e-3;
    for (size_t j = 0; j < P; j++) { /* the documented rounding of the perturbed weights */
        wp[j] = (float)((double)theta[j] + lambda * (double)u[j]);
        wm[j] = (float)((double)theta[j] - lambda * (double)u[j]);
    }
    size_t idx[12];
    double lp[12], lm[12], d[24];
    for (size_t i = 0; i < 12; i++)
        idx[i] = 11 - i;
    assert_int_equal(dpzo__zo_differences(m, theta, &dir, lambda, &ds, idx, 12, lp, lm, d, 2),
                     DPZO_OK);
    assert_memory_equal(theta, copy, sizeof theta); /* evaluation never writes theta */
    for (size_t i = 0; i < 12; i++) {
        /* the model's float losses at the rounded theta +- lambda u against the test's
         * double ones: within the model's tolerance (docs/trainer.md, "Arithmetic"; 5
         * inputs: a few 1e-7 at most), and d_i their central difference */
        double fp = logistic_loss(wp, &ds, idx[i]), fm = logistic_loss(wm, &ds, idx[i]);
        assert_rel(lp[i], fp, 1e-6);
        assert_rel(lm[i], fm, 1e-6);
        assert_rel(d[2 * i], (lp[i] - lm[i]) / (2.0 * lambda), 1e-12);
        assert_true(fabs(d[2 * i] - (fp - fm) / (2.0 * lambda)) <=
                    1e-6 * (fabs(fp) + fabs(fm)) / (2.0 * lambda));
    }
    dpzo_model_free(m);
    dpzo_dataset_free(&ds);
}

/* With a hidden layer: d_i is the directional derivative grad_i . u up to O(lambda^2). */
static void test_zo_estimate_directional_derivative(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_dataset ds = clusters(8, 6, 3, 0.3, 4, 5);
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:7", 6, 0, 0, 3, &m));
    size_t P = dpzo_model_n_params(m);
    float *theta = malloc(P * sizeof *theta), *copy = malloc(P * sizeof *copy);
    float *u = malloc(P * sizeof *u), *grad = malloc(P * sizeof *grad);
    float *pe = malloc(8 * P * sizeof *pe);
    dpzo_model_init(m, 9, theta);
    memcpy(copy, theta, P * sizeof *theta);
    dpzo_dir dir;
    assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_RADEMACHER, 5, 0, 1, P, 1.0));
    dpzo_dir_fill(&dir, 0, P, u);
    size_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double lp[8], lm[8], d[8];
    assert_int_equal(dpzo__zo_differences(m, theta, &dir, 1e-4, &ds, idx, 8, lp, lm, d, 1),
                     DPZO_OK);
    assert_memory_equal(theta, copy, P * sizeof *theta);
    assert_int_equal(dpzo_model_grad(m, theta, &ds, idx, 8, grad, pe, NULL), DPZO_OK);
    for (size_t i = 0; i < 8; i++) {
        double dot = 0.0;
        for (size_t j = 0; j < P; j++)
            dot += (double)pe[i * P + j] * (double)u[j];
        /* O(lambda^2) ~ 1e-8 is negligible; theta +- lambda u rounded to float moves each
         * lambda u_j by up to 2^-24 |theta_j|, a few 1e-4 of it at lambda 1e-4 */
        assert_true(fabs(d[i] - dot) <= 1e-3 * fabs(dot) + 1e-6);
    }
    free(theta);
    free(copy);
    free(u);
    free(grad);
    free(pe);
    dpzo_model_free(m);
    dpzo_dataset_free(&ds);
}

/* ---- schedules and batches ------------------------------------------------------------ */

static void test_lr_schedules(void **state)
{
    (void)state;
    assert_true(dpzo_lr_at(DPZO_LR_CONSTANT, 0.1, 0, 100) == 0.1);
    assert_true(dpzo_lr_at(DPZO_LR_CONSTANT, 0.1, 99, 100) == 0.1);
    assert_true(dpzo_lr_at(DPZO_LR_LINEAR, 0.1, 0, 100) == 0.1);
    assert_rel(dpzo_lr_at(DPZO_LR_LINEAR, 0.1, 25, 100), 0.075, 1e-15);
    assert_rel(dpzo_lr_at(DPZO_LR_LINEAR, 0.1, 99, 100), 0.001, 1e-12);
    assert_true(dpzo_lr_at(DPZO_LR_COSINE, 0.1, 0, 100) == 0.1);
    assert_rel(dpzo_lr_at(DPZO_LR_COSINE, 0.1, 25, 100), 0.085355339059327376, 1e-15);
    assert_rel(dpzo_lr_at(DPZO_LR_COSINE, 0.1, 50, 100), 0.05, 1e-15);
    assert_rel(dpzo_lr_at(DPZO_LR_COSINE, 0.1, 75, 100), 0.014644660940672624, 1e-13);
}

static void test_poisson_batch_sizes(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 1000, steps = 3000;
    const double q = 0.05;
    dpzo__sampler s;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 12345, n, q * n, 0));
    size_t *idx = malloc(n * sizeof *idx), *again = malloc(n * sizeof *again);
    unsigned *hits = calloc(n, sizeof *hits);
    double sum = 0.0, sum2 = 0.0;
    for (uint64_t t = 0; t < steps; t++) {
        size_t b = dpzo__sampler_batch(&s, t, idx);
        for (size_t i = 0; i < b; i++) {
            assert_true(idx[i] < n && (i == 0 || idx[i] > idx[i - 1]));
            hits[idx[i]]++;
        }
        sum += (double)b;
        sum2 += (double)b * (double)b;
        if (t == 17) { /* a batch is a function of (seed, step) */
            assert_int_equal(dpzo__sampler_batch(&s, 17, again), b);
            assert_memory_equal(idx, again, b * sizeof *idx);
        }
    }
    double mean = sum / steps, var = (sum2 - steps * mean * mean) / (steps - 1);
    double want_var = n * q * (1 - q);
    assert_true(fabs(mean - n * q) <= 5.0 * sqrt(want_var / steps));
    assert_true(fabs(var - want_var) <= 5.0 * want_var * sqrt(2.0 / (steps - 1)));
    /* each example joins about q of the steps: binomial(3000, 0.05), sd 11.9 */
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(hits[i] - steps * q) <= 6.0 * sqrt(steps * q * (1 - q)));
    /* another seed, other batches */
    dpzo__sampler s2;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s2, DPZO_BATCH_POISSON, 12346, n, q * n, 0));
    size_t b1 = dpzo__sampler_batch(&s, 5, idx), b2 = dpzo__sampler_batch(&s2, 5, again);
    assert_true(b1 != b2 || memcmp(idx, again, b1 * sizeof *idx) != 0);
    dpzo__sampler_free(&s);
    dpzo__sampler_free(&s2);
    free(idx);
    free(again);
    free(hits);
}

static void check_epochs(dpzo_ctx *ctx, size_t n, size_t B)
{
    dpzo__sampler s;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_SHUFFLE, 99, n, (double)B, 0));
    size_t E = n / B, idx[64];
    unsigned char *seen = malloc(n);
    size_t first[3] = {0, 0, 0};
    for (uint64_t e = 0; e < 3; e++) {
        memset(seen, 0, n);
        for (uint64_t p = 0; p < E; p++) {
            assert_int_equal(dpzo__sampler_batch(&s, e * E + p, idx), B);
            if (p == 0)
                first[e] = idx[0] + n * idx[1];
            for (size_t i = 0; i < B; i++) {
                assert_true(idx[i] < n);
                assert_int_equal(seen[idx[i]], 0); /* never twice in an epoch */
                seen[idx[i]] = 1;
            }
        }
        size_t covered = 0;
        for (size_t i = 0; i < n; i++)
            covered += seen[i];
        assert_int_equal(covered, E * B); /* n when B divides n */
    }
    assert_true(first[0] != first[1] || first[1] != first[2]); /* epochs are reshuffled */
    /* a later step needs no earlier one: step 2E + 3 again, out of order */
    size_t again[64];
    dpzo__sampler_batch(&s, 2 * E + 3, idx);
    dpzo__sampler_batch(&s, 1, again);
    dpzo__sampler_batch(&s, 2 * E + 3, again);
    assert_memory_equal(idx, again, B * sizeof *idx);
    free(seen);
    dpzo__sampler_free(&s);
}

static void test_shuffle_epochs(void **state)
{
    check_epochs(*state, 120, 10); /* each example exactly once per epoch */
    check_epochs(*state, 125, 10); /* 5 left out of each epoch, none repeated */
}

/* Private shuffled runs: every step is a uniformly random B-subset of its own (what the
 * without-replacement accounting assumes): B distinct rows, each row in a fraction B/n of
 * the steps (within 5 SE), batches of different steps overlapping as often as independent
 * subsets do, and the same step giving the same batch again. */
static void test_wor_independent(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 50, B = 10;
    const uint64_t T = 4000;
    dpzo__sampler s;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_SHUFFLE, 7, n, (double)B, 1));
    size_t idx[10], prev[10] = {0}, again[10];
    double hits[50] = {0}, overlap = 0.0;
    for (uint64_t t = 0; t < T; t++) {
        assert_int_equal(dpzo__sampler_batch(&s, t, idx), B);
        unsigned char seen[50] = {0};
        for (size_t i = 0; i < B; i++) {
            assert_true(idx[i] < n && !seen[idx[i]]);
            seen[idx[i]] = 1;
            hits[idx[i]] += 1.0;
        }
        if (t > 0)
            for (size_t i = 0; i < B; i++)
                for (size_t j = 0; j < B; j++)
                    overlap += idx[i] == prev[j];
        memcpy(prev, idx, sizeof idx);
    }
    double p = (double)B / n, se = sqrt(p * (1 - p) / T);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(hits[i] / T - p) < 5.0 * se);
    /* consecutive batches share B^2/n rows on average (disjoint epochs would share 0) */
    double mean_overlap = overlap / (T - 1), want = (double)B * B / n;
    assert_true(fabs(mean_overlap - want) < 0.1 * want);
    dpzo__sampler_batch(&s, 17, idx);
    dpzo__sampler_batch(&s, 3, again);
    dpzo__sampler_batch(&s, 17, again);
    assert_memory_equal(idx, again, sizeof idx);
    dpzo__sampler_free(&s);
}

/* ---- noise and clipping ---------------------------------------------------------------- */

/* Every step, empty batches included, adds exactly one noise draw per query, of variance
 * (sigma C)^2: the variance of noisy - clean says it is added once, not twice. */
static void test_noise_once_per_query(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 64;
    const uint64_t T = 150;
    const unsigned Q = 3;
    cluster_sets sets = cluster_pair(n, 20, 4, 2, 0.3, 1, 1);
    const char *prof = TMP "/train_noise_profile.json";
    double sigma = write_profile(ctx, prof, 1.0 / 64.0, T, 0.5);
    dpzo_train_config c = base_config(DPZO_ALG_DPZERO, "mlp:", T, 1.0, 1e-3);
    set_private(&c, prof, 0.5);
    c.queries = Q;
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    double sum = 0.0, sum2 = 0.0;
    unsigned empty = 0;
    for (uint64_t t = 0; t < T; t++) {
        size_t b = dpzo_zo_batch(zo_of(tr), t, tr->idx);
        assert_ok(ctx, dpzo__trainer_step(ctx, tr));
        assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), (t + 1) * Q);
        for (unsigned k = 0; k < Q; k++) {
            double z = dpzo__zo_last_noisy(zo_of(tr))[k] - dpzo__zo_last_clean(zo_of(tr))[k];
            assert_true(z != 0.0);
            sum += z;
            sum2 += z * z;
            if (b == 0)
                assert_true(dpzo__zo_last_clean(zo_of(tr))[k] == 0.0);
        }
        empty += b == 0;
    }
    assert_true(empty > 20); /* P(empty) = (63/64)^64 = 0.37 */
    double m = (double)(T * Q), sd = sigma * 0.5, var = sum2 / m - (sum / m) * (sum / m);
    assert_true(fabs(sum / m) <= 5.0 * sd / sqrt(m));
    assert_true(fabs(var - sd * sd) <= 5.0 * sd * sd * sqrt(2.0 / (m - 1)));
    dpzo_trainer_free(tr);
    /* mezo: nothing drawn, nothing added */
    c = base_config(DPZO_ALG_MEZO, "mlp:", T, 1.0, 1e-3);
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    for (uint64_t t = 0; t < 5; t++) {
        assert_ok(ctx, dpzo__trainer_step(ctx, tr));
        assert_true(dpzo__zo_last_noisy(zo_of(tr))[0] == dpzo__zo_last_clean(zo_of(tr))[0]);
    }
    assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), 0);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* An example whose loss overflows contributes nothing (not a NaN) to the private sum. */
static void test_nonfinite_differences_contribute_zero(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(64, 20, 4, 2, 0.3, 1, 1);
    const char *prof = TMP "/train_nonfinite_profile.json";
    write_profile(ctx, prof, 0.5, 10, 1.0);
    dpzo_train_config c = base_config(DPZO_ALG_DPZERO, "mlp:", 10, 32.0, 1e-3);
    set_private(&c, prof, 1.0);
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    double zero = 0.0;
    dpzo__trainer_set_noise_hook(tr, fixed_noise, &zero);
    for (size_t j = 0; j < tr->P; j++)
        tr->theta[j] = j % 2 ? INFINITY : -INFINITY; /* non-finite logits */
    size_t b = dpzo_zo_batch(zo_of(tr), 0, tr->idx);
    assert_true(b > 0);
    assert_ok(ctx, dpzo__trainer_step(ctx, tr));
    assert_false(isfinite(tr->lp[0] - tr->lm[0])); /* the path under test was taken */
    const dpzo_zo *zo = zo_of(tr);
    assert_true(dpzo__zo_last_clean(zo)[0] == 0.0 && dpzo__zo_last_noisy(zo)[0] == 0.0);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* DP-SGD: with the noise replaced by zeros, one step moves theta by at most lr b C / B
 * (each per-example gradient clipped to C), and it draws one noise value per parameter. */
static void test_dpsgd_clips(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 6, 3, 0.3, 2, 3);
    const char *prof = TMP "/train_dpsgd_profile.json";
    const double C = 1e-3, B = 20.0, lr = 0.5;
    write_profile(ctx, prof, B / 100.0, 10, C);
    dpzo_train_config c = base_config(DPZO_ALG_DPSGD, "mlp:5", 10, B, lr);
    set_private(&c, prof, C);
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    double zero = 0.0;
    dpzo__trainer_set_noise_hook(tr, fixed_noise, &zero);
    size_t P = tr->P;
    float *before = malloc(P * sizeof *before);
    memcpy(before, tr->theta, P * sizeof *before);
    size_t b = dpzo_zo_batch(zo_of(tr), 0, tr->idx);
    assert_true(b > 0);
    assert_ok(ctx, dpzo__trainer_step(ctx, tr));
    assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), P);
    double moved = 0.0;
    for (size_t j = 0; j < P; j++)
        moved += ((double)tr->theta[j] - before[j]) * ((double)tr->theta[j] - before[j]);
    moved = sqrt(moved);
    assert_true(moved > 0.0);
    assert_true(moved <= lr * (double)b * C / B * (1.0 + 1e-3) + 1e-6);
    free(before);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- the privacy plan -------------------------------------------------------------------- */

static void test_budget_refusal(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 4, 2, 0.3, 1, 1);
    const char *prof = TMP "/train_budget_profile.json";
    write_profile(ctx, prof, 0.1, 100, 1.0);
    dpzo_train_config c = base_config(DPZO_ALG_DPZERO, "mlp:", 200, 10.0, 1e-3);
    set_private(&c, prof, 1.0);
    dpzo_trainer *tr = NULL;
    assert_int_equal(dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr), DPZO_EINFEASIBLE);
    assert_null(tr);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "200 steps"));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "100"));
    c.steps = 100; /* within the profile: accepted, and the ledger ends within the budget */
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
    dpzo_train_report r;
    dpzo_trainer_report_now(tr, &r);
    assert_int_equal(r.step, 100);
    assert_true(r.epsilon_spent > 0.0 && r.epsilon_spent <= 3.0);
    dpzo_trainer_free(tr);
    /* the ledger's second line of defence: a run whose next step would pass the budget
     * (forced here by planning past the opened plan) stops before it, logs and saves */
    snprintf(c.metrics, sizeof c.metrics, TMP "/train_budget.jsonl");
    snprintf(c.checkpoint, sizeof c.checkpoint, TMP "/train_budget.ckpt");
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    tr->cfg.steps = 101;
    assert_int_equal(dpzo_trainer_run(ctx, tr, 0, NULL, NULL), DPZO_EINFEASIBLE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "privacy budget: step 101"));
    dpzo_trainer_report_now(tr, &r);
    assert_int_equal(r.step, 100);
    char *m = slurp_alloc(TMP "/train_budget.jsonl");
    assert_non_null(strstr(m, "\"step\": 100, "));
    assert_non_null(strstr(m, "\"stopped\": \"privacy budget\"}"));
    free(m);
    assert_int_equal(access(TMP "/train_budget.ckpt", R_OK), 0);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- resume ------------------------------------------------------------------------------ */

/* The metrics text without its wall-clock "seconds" values. */
static char *metrics_without_seconds(const char *path)
{
    char *s = slurp_alloc(path);
    char *out = malloc(strlen(s) + 1), *o = out;
    for (const char *p = s; *p;) {
        if (strncmp(p, "\"seconds\": ", 11) == 0) {
            p += 11;
            while (*p && *p != ',' && *p != '}')
                p++;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    free(s);
    return out;
}

typedef struct {
    dpzo_train_config cfg;
    const dpzo_dataset *train, *test;
    double noise_scale; /* the fixed noise's scale (private runs) */
} run_spec;

static dpzo_trainer *new_trainer(dpzo_ctx *ctx, run_spec *rs, const char *metrics,
                                 const char *ckpt)
{
    dpzo_train_config c = rs->cfg;
    snprintf(c.metrics, sizeof c.metrics, "%s", metrics);
    snprintf(c.checkpoint, sizeof c.checkpoint, "%s", ckpt);
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, rs->train, rs->test, &tr));
    if (dpzo_algorithm_is_private(c.algorithm)) {
        dpzo__trainer_set_noise_hook(tr, fixed_noise, &rs->noise_scale);
    }
    return tr;
}

/* 2N steps straight against: N steps (with a checkpoint in between), then a new trainer
 * that resumes and runs to 2N; and a crash simulated after a later checkpoint began. */
static void check_resume(dpzo_ctx *ctx, run_spec *rs, const char *tag)
{
    char m_a[512], m_b[512], c_a[512], c_b[512], tmp[520];
    snprintf(m_a, sizeof m_a, TMP "/train_%s_a.jsonl", tag);
    snprintf(m_b, sizeof m_b, TMP "/train_%s_b.jsonl", tag);
    snprintf(c_a, sizeof c_a, TMP "/train_%s_a.ckpt", tag);
    snprintf(c_b, sizeof c_b, TMP "/train_%s_b.ckpt", tag);
    snprintf(tmp, sizeof tmp, "%s.tmp", c_b);
    const uint64_t T = rs->cfg.steps, N = T / 2;
    const uint64_t sampling_seed = 0x5eed5eed12345678ull;

    dpzo_trainer *a = new_trainer(ctx, rs, m_a, c_a);
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, a, sampling_seed));
    assert_ok(ctx, dpzo_trainer_run(ctx, a, 0, NULL, NULL));

    dpzo_trainer *b = new_trainer(ctx, rs, m_b, c_b);
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, b, sampling_seed));
    assert_ok(ctx, dpzo_trainer_run(ctx, b, N - 3, NULL, NULL)); /* checkpoint at N - 3 */
    size_t old_size;
    char *old = NULL;
    {
        FILE *f = fopen(c_b, "rb");
        assert_non_null(f);
        old = malloc(1 << 20);
        old_size = fread(old, 1, 1 << 20, f);
        fclose(f);
        assert_int_equal(old_size, DPZO_CKPT_HEADER + 4 * state_floats(b) + 32);
    }
    assert_ok(ctx, dpzo_trainer_run(ctx, b, N, NULL, NULL)); /* checkpoint at N */
    dpzo_trainer_free(b);

    /* resume at N in a new trainer (whose own sampling seed differs: the checkpoint's wins) */
    b = new_trainer(ctx, rs, m_b, c_b);
    assert_ok(ctx, dpzo_trainer_resume(ctx, b, c_b));
    assert_ok(ctx, dpzo_trainer_run(ctx, b, 0, NULL, NULL));
    assert_memory_equal(a->theta, b->theta, a->P * sizeof *a->theta);
    char *ma = metrics_without_seconds(m_a), *mb = metrics_without_seconds(m_b);
    assert_string_equal(ma, mb);
    free(mb);
    dpzo_trainer_free(b);

    /* a crash between writing the checkpoint at N and renaming it: PATH still holds the
     * one of step N - 3 and PATH.tmp half of the new one. Resuming reads PATH only. */
    char *fresh = slurp_alloc(c_b);
    write_bytes(c_b, old, old_size);
    write_bytes(tmp, fresh, old_size / 2);
    b = new_trainer(ctx, rs, m_b, c_b);
    assert_ok(ctx, dpzo_trainer_resume(ctx, b, c_b));
    dpzo_train_report r;
    dpzo_trainer_report_now(b, &r);
    assert_int_equal(r.step, N - 3);
    assert_ok(ctx, dpzo_trainer_run(ctx, b, 0, NULL, NULL));
    assert_memory_equal(a->theta, b->theta, a->P * sizeof *a->theta);
    mb = metrics_without_seconds(m_b);
    assert_string_equal(ma, mb);
    unlink(tmp);
    free(ma);
    free(mb);
    free(old);
    free(fresh);
    dpzo_trainer_free(b);
    dpzo_trainer_free(a);
}

static void test_resume_dpzero(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    const char *prof = TMP "/train_resume_profile.json";
    write_profile(ctx, prof, 0.1, 40, 2.0);
    run_spec rs = {base_config(DPZO_ALG_DPZERO, "mlp:6", 40, 24.0, 0.05), &sets.tr, &sets.te, 0.0};
    set_private(&rs.cfg, prof, 2.0);
    rs.noise_scale = 2.0 * 0.9; /* about sigma C */
    rs.cfg.queries = 2;
    rs.cfg.lr_schedule = DPZO_LR_LINEAR;
    rs.cfg.eval_every = 6;
    rs.cfg.checkpoint_every = 7;
    check_resume(ctx, &rs, "dpzero");
    cluster_sets_free(&sets);
}

static void test_resume_mezo(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    run_spec rs = {base_config(DPZO_ALG_MEZO, "mlp:6", 40, 24.0, 0.05), &sets.tr, &sets.te, 0.0};
    rs.cfg.batching = DPZO_BATCH_SHUFFLE; /* 10 steps per epoch: the resume is mid-epoch */
    rs.cfg.direction = DPZO_DIR_SPHERE;
    rs.cfg.lr_schedule = DPZO_LR_COSINE;
    rs.cfg.eval_every = 6;
    rs.cfg.checkpoint_every = 7;
    check_resume(ctx, &rs, "mezo");
    cluster_sets_free(&sets);
}

/* DP-ZOPO: the resume falls inside stage 2 and the run crosses into stage 3 (a new
 * incremental mask from the restored one; the proximal anchor restored). */
static void test_resume_dpzopo(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    const char *prof = TMP "/train_resume_zopo_profile.json";
    write_profile(ctx, prof, 0.1, 40, 2.0);
    run_spec rs = {base_config(DPZO_ALG_DPZOPO, "mlp:6", 40, 24.0, 0.05), &sets.tr, &sets.te, 1.8};
    set_private(&rs.cfg, prof, 2.0);
    rs.cfg.prune.strategy = DPZO_PRUNE_INCREMENTAL;
    rs.cfg.prune.rate = 0.1;
    rs.cfg.stages.prox = 0.5;
    rs.cfg.stages.lambda_last = 1e-2;
    rs.cfg.eval_every = 6;
    rs.cfg.checkpoint_every = 7; /* stages [0, 6) [6, 18) [18, 40); resume at 20 and 17 */
    check_resume(ctx, &rs, "dpzopo");
    cluster_sets_free(&sets);
}

/* PAZO-S (k + 1 noise draws in two parts, public batches) after public pre-training, and
 * PAZO-P with two queries. */
static void test_resume_pazo(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    const char *prof = TMP "/train_resume_pazo_profile.json";
    write_profile(ctx, prof, 0.1, 40, 2.0);
    const dpzo_algorithm algs[2] = {DPZO_ALG_PAZO_S, DPZO_ALG_PAZO_P};
    for (int a = 0; a < 2; a++) {
        run_spec rs = {base_config(algs[a], "mlp:6", 40, 20.0, 0.05), &sets.tr, &sets.te, 1.8};
        set_private(&rs.cfg, prof, 2.0);
        rs.cfg.public_size = 40;
        rs.cfg.pub.batch_size = 8;
        rs.cfg.queries = a == 1 ? 2 : 1;
        rs.cfg.pretrain = (dpzo_pretrain_config){.steps = 5, .lr = 0.1, .batch_size = 10};
        rs.cfg.eval_every = 6;
        rs.cfg.checkpoint_every = 7;
        check_resume(ctx, &rs, a == 0 ? "pazo_s" : "pazo_p");
    }
    cluster_sets_free(&sets);
}

/* Truncated, corrupted, foreign and mismatched checkpoints are refused, saying why. */
static void test_checkpoint_refusals(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(100, 20, 4, 2, 0.3, 1, 1);
    dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:", 10, 10.0, 0.01);
    const char *path = TMP "/train_refuse.ckpt", *bad = TMP "/train_refuse_bad.ckpt";
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 4, NULL, NULL));
    assert_ok(ctx, dpzo_trainer_save(ctx, tr, path));
    dpzo_trainer_free(tr);
    char *good = slurp_alloc(path);
    size_t size = DPZO_CKPT_HEADER + 4 * 10 + 32;
    static const struct {
        const char *what;
        size_t len;   /* bytes kept */
        size_t flip;  /* byte to flip, or SIZE_MAX */
        const char *msg;
    } cases[] = {{"truncated", 0, SIZE_MAX, "truncated"},
                 {"short header", 10, SIZE_MAX, "truncated"},
                 {"flipped theta", 0, 220, "checksum mismatch"},
                 {"flipped step", 0, 60, "checksum mismatch"},
                 {"bad magic", 0, 0, "not a dpzo checkpoint"},
                 {"bad version", 0, 8, "format version"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = cases[i].len ? cases[i].len : i == 0 ? size - 7 : size;
        char *copy = malloc(size);
        memcpy(copy, good, size);
        if (cases[i].flip != SIZE_MAX)
            copy[cases[i].flip] ^= 0x10;
        write_bytes(bad, copy, len);
        free(copy);
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        assert_int_equal(dpzo_trainer_resume(ctx, tr, bad), DPZO_EPARSE);
        if (strstr(dpzo_ctx_errmsg(ctx), cases[i].msg) == NULL)
            fail_msg("%s: message '%s' lacks '%s'", cases[i].what, dpzo_ctx_errmsg(ctx),
                     cases[i].msg);
        dpzo_trainer_free(tr);
    }
    /* another configuration (learning rate) */
    dpzo_train_config other = c;
    other.lr = 0.02;
    assert_ok(ctx, dpzo_trainer_create(ctx, &other, &sets.tr, &sets.te, &tr));
    assert_int_equal(dpzo_trainer_resume(ctx, tr, path), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "another configuration"));
    dpzo_trainer_free(tr);
    /* a missing file */
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_int_equal(dpzo_trainer_resume(ctx, tr, TMP "/train_no_such.ckpt"), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "cannot open"));
    dpzo_trainer_free(tr);
    free(good);
    cluster_sets_free(&sets);
}

/* ---- configuration ----------------------------------------------------------------------- */

static void expect_config_error(dpzo_ctx *ctx, const char *json, const char *needle)
{
    dpzo_train_config c;
    dpzo_status st = dpzo_train_config_parse(ctx, json, "/cfg", &c);
    if (st == DPZO_OK)
        fail_msg("accepted: %s", json);
    if (strstr(dpzo_ctx_errmsg(ctx), needle) == NULL)
        fail_msg("message '%s' lacks '%s' (config %s)", dpzo_ctx_errmsg(ctx), needle, json);
}

#define MEZO_BASE                                                                            \
    "\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 10, \"batch_size\": 8, \"lr\": 0.1"

static void test_config_errors(void **state)
{
    dpzo_ctx *ctx = *state;
    expect_config_error(ctx, "{" MEZO_BASE ", \"foo\": 1}", "unknown key 'foo'");
    expect_config_error(ctx, "{" MEZO_BASE ", \"threads\": 257}",
                        "'threads' must be 0 (the machine's cores) to 256, got 257");
    expect_config_error(ctx, "{" MEZO_BASE ", \"threads\": 1e12}",
                        "'threads' must be 0 (the machine's cores) to 256");
    expect_config_error(ctx, "{" MEZO_BASE ", \"data\": {\"dirr\": \"x\"}}",
                        "unknown key 'data.dirr' (known: dir, train_subset, public_size, "
                        "validation_size)");
    expect_config_error(ctx, "{" MEZO_BASE ", \"data\": {\"validation_size\": -5}}",
                        "data.validation_size");
    expect_config_error(
        ctx, "{\"algorithm\": \"zo\", \"model\": \"mlp:\"}",
        "'algorithm' must be \"dpzero\", \"mezo\", \"dpsgd\", \"sgd\", \"dpzoso\", \"dpzopo\", \"pazo-m\", \"pazo-p\", \"pazo-s\" or \"dpmd\", got \"zo\"");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpzero\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1}",
                        "needs 'profile'");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpsgd\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"profile\": \"p.json\"}",
                        "needs 'clip'");
    expect_config_error(ctx, "{" MEZO_BASE ", \"clip\": 1}", "'clip' applies to the private");
    expect_config_error(ctx, "{\"algorithm\": \"sgd\", \"model\": \"mlp:\", \"steps\": 10, "
                             "\"batch_size\": 8, \"lr\": 0.1, \"lambda\": 0.01}",
                        "'lambda' applies to the zeroth-order");
    expect_config_error(ctx, "{" MEZO_BASE ", \"radius\": 2}", "direction \"sphere\" only");
    expect_config_error(ctx, "{" MEZO_BASE ", \"steps\": 10}", "'steps' appears twice");
    expect_config_error(ctx, "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": \"ten\"}",
                        "'steps' must be a non-negative integer");
    expect_config_error(ctx, "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"batch_size\": 8, "
                             "\"lr\": 0.1}",
                        "'steps' is required");
    expect_config_error(ctx, "{" MEZO_BASE ", \"batching\": \"shuffle\", \"batch_size\": 8.5}",
                        "appears twice");
    expect_config_error(ctx, "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 10, "
                             "\"batch_size\": 8.5, \"lr\": 0.1, \"batching\": \"shuffle\"}",
                        "must be an integer with batching \"shuffle\"");
    expect_config_error(ctx, "{" MEZO_BASE ", \"lr_schedule\": \"step\"}", "'lr_schedule' must be");
    expect_config_error(ctx, "{" MEZO_BASE ", \"queries\": 0}", "'queries' must be in [1,");
    expect_config_error(ctx, "{" MEZO_BASE ", \"seed\": -1}", "'seed' must be an integer");
    expect_config_error(ctx, "{" MEZO_BASE ", \"checkpoint_every\": 5}", "needs 'checkpoint'");
    expect_config_error(ctx, "{" MEZO_BASE ", \"stages\": {\"count\": 2}}",
                        "'stages' applies to dpzoso and dpzopo");
    expect_config_error(ctx, "{" MEZO_BASE ", \"prune\": {\"rate\": 0.1}}",
                        "'prune' applies to dpzopo");
    expect_config_error(ctx, "{" MEZO_BASE ", \"pretrain\": {\"steps\": 5, \"lr\": 0.1}}",
                        "'pretrain' trains on the public rows");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpzopo\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"prune\": {\"strategy\": \"static\", \"growth\": 2}}",
                        "'prune.growth' must be >= 1 (and 1 for the static");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpzoso\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"stages\": {\"countt\": 2}}",
                        "unknown key 'stages.countt'");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpzoso\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"lr_schedule\": \"cosine\"}",
                        "has its own learning-rate schedule");
    expect_config_error(ctx,
                        "{\"algorithm\": \"pazo-m\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\"}",
                        "pazo-m needs public rows");
    expect_config_error(ctx,
                        "{\"algorithm\": \"pazo-m\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"data\": {\"public_size\": 100}, \"public\": {\"k\": 4}}",
                        "'public.k' does not apply to pazo-m");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpmd\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\"}",
                        "dpmd needs public rows");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpmd\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"data\": {\"public_size\": 100}, \"public\": {\"alpha\": 0.5}}",
                        "'public.alpha' does not apply to dpmd");
    expect_config_error(ctx,
                        "{\"algorithm\": \"dpmd\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"data\": {\"public_size\": 100}, \"lambda\": 0.01}",
                        "'lambda' applies to the zeroth-order algorithms");
    expect_config_error(ctx,
                        "{\"algorithm\": \"pazo-s\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"data\": {\"public_size\": 100}, \"lambda\": 0.01}",
                        "'lambda' applies to the zeroth-order");
    expect_config_error(ctx,
                        "{\"algorithm\": \"pazo-p\", \"model\": \"mlp:\", \"steps\": 10, "
                        "\"batch_size\": 8, \"lr\": 0.1, \"clip\": 1, \"profile\": \"p.json\", "
                        "\"data\": {\"public_size\": 100}, \"public\": {\"batch_size\": 200}}",
                        "'public.batch_size' must be an integer in [1, data.public_size = 100]");
    expect_config_error(ctx, "[1, 2]", "top level must be a JSON object");
    expect_config_error(ctx, "{" MEZO_BASE ",}", "not valid JSON");
    /* what is accepted: defaults, a full uint64 seed, paths resolved against the base */
    dpzo_train_config c;
    assert_ok(ctx, dpzo_train_config_parse(
                       ctx,
                       "{\"algorithm\": \"dpzero\", \"model\": \"mlp:128\", \"steps\": 10, "
                       "\"batch_size\": 8, \"lr\": 0.1, \"profile\": \"p.json\", \"clip\": 2, "
                       "\"seed\": \"18446744073709551615\", \"direction\": \"sphere\", "
                       "\"radius\": \"d_quarter\", \"metrics\": \"/abs/m.jsonl\", "
                       "\"data\": {\"dir\": \"fm\", \"train_subset\": 500, \"public_size\": 50, "
                       "\"validation_size\": 25}}",
                       "/cfg", &c));
    assert_int_equal(c.algorithm, DPZO_ALG_DPZERO);
    assert_true(c.seed == UINT64_MAX);
    assert_string_equal(c.profile, "/cfg/p.json");
    assert_string_equal(c.data_dir, "/cfg/fm");
    assert_string_equal(c.metrics, "/abs/m.jsonl");
    assert_int_equal(c.train_subset, 500);
    assert_int_equal(c.public_size, 50);
    assert_int_equal(c.validation_size, 25);
    assert_int_equal(c.radius_kind, DPZO_RADIUS_D_QUARTER);
    assert_true(c.lambda == 1e-3 && c.queries == 1 && c.batching == DPZO_BATCH_POISSON);
    assert_rel(dpzo__train_radius(&c, 10000), 10.0, 1e-15);
}

/* ---- the validation hold-out ------------------------------------------------------------ */

/* The row ids (the last feature, id / 1000) of a data set, marked in seen[]; fails on a row
 * seen twice. */
static void mark_rows(const dpzo_dataset *d, unsigned char *seen, size_t n_all)
{
    for (size_t i = 0; i < d->n; i++) {
        size_t id = (size_t)lround(1000.0 * d->x[i * d->dim + d->dim - 1]);
        assert_true(id < n_all);
        if (seen[id])
            fail_msg("row %zu is in two parts", id);
        seen[id] = 1;
    }
}

/* data.validation_size: the same rows for every seed and algorithm (the fixed-key shuffle's
 * first places), disjoint from the public and private rows, which come from the rest as
 * before; evaluated at every metrics line; too many is refused. */
static void test_validation_holdout(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(300, 30, 5, 3, 0.3, 5, 6);
    for (size_t i = 0; i < sets.tr.n; i++) /* a row id, small beside the clusters' features */
        sets.tr.x[i * sets.tr.dim + 4] = (float)((double)i / 1000.0);
    dpzo_dataset want_val, want_rest;
    assert_ok(ctx, dpzo_dataset_split(ctx, &sets.tr, 50, DPZO__VALIDATION_KEY, &want_val,
                                      &want_rest));
    unsigned char pub_seen[2][300];
    for (int run = 0; run < 2; run++) {
        dpzo_train_config c = base_config(run ? DPZO_ALG_MEZO : DPZO_ALG_SGD, "mlp:", 20,
                                          16.0, 0.05);
        c.seed = 7 + (uint64_t)run;
        c.public_size = 40;
        c.validation_size = 50;
        c.eval_every = 10;
        snprintf(c.metrics, sizeof c.metrics, TMP "/train_validation_%d.jsonl", run);
        dpzo_trainer *tr;
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        assert_int_equal(dpzo_trainer_n_validation(tr), 50);
        assert_int_equal(dpzo_trainer_n_public(tr), 40);
        assert_int_equal(dpzo_trainer_n_train(tr), 210);
        /* the validation rows: exactly the documented split's, in the file's order */
        assert_int_equal(tr->val.n, want_val.n);
        assert_memory_equal(tr->val.x, want_val.x, want_val.n * want_val.dim * sizeof(float));
        assert_memory_equal(tr->val.y, want_val.y, want_val.n * sizeof(int32_t));
        /* the public rows: the seed's split of the rest */
        dpzo_dataset want_pub, want_priv;
        assert_ok(ctx, dpzo_dataset_split(ctx, &want_rest, 40, c.seed, &want_pub, &want_priv));
        assert_memory_equal(tr->pub.x, want_pub.x, 40 * want_pub.dim * sizeof(float));
        assert_memory_equal(tr->priv.x, want_priv.x, 210 * want_priv.dim * sizeof(float));
        dpzo_dataset_free(&want_pub);
        dpzo_dataset_free(&want_priv);
        /* the three parts cover the 300 rows once */
        unsigned char seen[300] = {0};
        mark_rows(&tr->val, seen, 300);
        mark_rows(&tr->pub, seen, 300);
        mark_rows(&tr->priv, seen, 300);
        for (size_t i = 0; i < 300; i++)
            assert_true(seen[i]);
        memset(pub_seen[run], 0, 300);
        mark_rows(&tr->pub, pub_seen[run], 300);
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
        dpzo_train_report r;
        dpzo_trainer_report_now(tr, &r);
        double acc, loss;
        assert_ok(ctx, dpzo_trainer_validate(ctx, tr, &acc, &loss));
        assert_true(acc == r.validation_accuracy && loss == r.validation_loss);
        assert_true(acc > 0.4 && acc <= 1.0); /* 3 separable clusters, chance 1/3 */
        /* every metrics line has the fields; the last one has the final values */
        char *m = slurp_alloc(c.metrics);
        int lines = 0;
        for (char *p = m; (p = strstr(p, "\"validation_accuracy\": ")) != NULL; p++)
            lines++;
        assert_int_equal(lines, 3); /* steps 0, 10, 20 */
        char want[96];
        snprintf(want, sizeof want, "\"validation_accuracy\": %.17g", acc);
        char *last = strrchr(m, '{');
        assert_non_null(last);
        if (strtod(strstr(last, "\"validation_accuracy\": ") + 23, NULL) != acc)
            fail_msg("last metrics line %s, want %s", last, want);
        free(m);
        dpzo_trainer_free(tr);
    }
    assert_memory_not_equal(pub_seen[0], pub_seen[1], 300); /* the seed keys the public rows */
    /* none, as before: no validation fields; the public rows are the seed's split of all */
    dpzo_train_config c = base_config(DPZO_ALG_SGD, "mlp:", 5, 16.0, 0.05);
    c.public_size = 40;
    snprintf(c.metrics, sizeof c.metrics, TMP "/train_validation_none.jsonl");
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    dpzo_dataset want_pub, want_priv;
    assert_ok(ctx, dpzo_dataset_split(ctx, &sets.tr, 40, c.seed, &want_pub, &want_priv));
    assert_memory_equal(tr->pub.x, want_pub.x, 40 * want_pub.dim * sizeof(float));
    dpzo_dataset_free(&want_pub);
    dpzo_dataset_free(&want_priv);
    assert_int_equal(dpzo_trainer_n_validation(tr), 0);
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
    double acc, loss;
    assert_ok(ctx, dpzo_trainer_validate(ctx, tr, &acc, &loss));
    assert_true(isnan(acc) && isnan(loss));
    char *m = slurp_alloc(c.metrics);
    assert_null(strstr(m, "validation"));
    free(m);
    dpzo_trainer_free(tr);
    /* too many rows held out */
    c.validation_size = 260;
    dpzo_status st = dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr);
    assert_int_equal(st, DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "data.validation_size 260 and data.public_size "
                                                  "40 leave no private rows (of 300)"));
    /* counts whose sum wraps around 2^64 are refused the same way, not split */
    c.validation_size = UINT64_MAX;
    c.public_size = 1;
    assert_int_equal(dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "leave no private rows (of 300)"));
    dpzo_dataset_free(&want_val);
    dpzo_dataset_free(&want_rest);
    cluster_sets_free(&sets);
}

/* ---- learning ---------------------------------------------------------------------------- */

static double accuracy_of(dpzo_ctx *ctx, dpzo_trainer *tr)
{
    double acc, loss;
    assert_ok(ctx, dpzo_trainer_evaluate(ctx, tr, &acc, &loss));
    return acc;
}

/* MeZO (and, quickly, SGD) on a separable 4-class problem: from about chance to > 85%. */
static void test_mezo_learns(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(400, 400, 10, 4, 0.25, 8, 9);
    dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:", 300, 32.0, 0.5);
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, tr, 2024)); /* reproducible batches */
    double before = accuracy_of(ctx, tr);
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
    double after = accuracy_of(ctx, tr);
    print_message("mezo: test accuracy %.3f -> %.3f\n", before, after);
    if (!(before < 0.5 && after > 0.85))
        fail_msg("mezo: accuracy %.3f -> %.3f", before, after);
    dpzo_trainer_free(tr);
    c = base_config(DPZO_ALG_SGD, "mlp:", 100, 32.0, 0.5);
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, tr, 2024));
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
    after = accuracy_of(ctx, tr);
    print_message("sgd: test accuracy %.3f -> %.3f\n", before, after);
    if (!(after > 0.85))
        fail_msg("sgd: accuracy %.3f -> %.3f", before, after);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* The update reads the directions the evaluation kept (the step object's cache) instead of
 * generating them again: the same theta, bit for bit, as a trainer without the cache, for
 * mezo with 3 queries on an MLP (several layers, several directions) and threads 1 and 2. */
static void test_direction_cache(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(300, 50, 10, 4, 0.25, 8, 9);
    float *want = NULL;
    for (int v = 0; v < 3; v++) {
        dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:12-6", 25, 40.0, 0.3);
        c.queries = 3;
        c.threads = v == 2 ? 2 : 1;
        dpzo_trainer *tr;
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, tr, 77));
        assert_true(dpzo__zo_has_cache(zo_of(tr)));
        if (v == 1) /* no cache: the update generates the directions itself */
            dpzo__zo_drop_cache(zo_of(tr));
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, 0, NULL, NULL));
        if (v == 0) {
            want = malloc(tr->P * sizeof *want);
            memcpy(want, tr->theta, tr->P * sizeof *want);
        } else {
            assert_memory_equal(want, tr->theta, tr->P * sizeof *want);
        }
        dpzo_trainer_free(tr);
    }
    free(want);
    cluster_sets_free(&sets);
}

/* ---- the command line -------------------------------------------------------------------- */

static int have_fmnist(void)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    char dir[1024];
    int ok = dpzo_fmnist_find(ctx, NULL, dir, sizeof dir) == DPZO_OK;
    dpzo_ctx_free(ctx);
    return ok;
}

static void test_cli(void **state)
{
    dpzo_ctx *ctx = *state;
    run_result *r = cli_run("train --help", "train");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "docs/trainer.md"));
    assert_non_null(strstr(r->out, "--resume CKPT"));
    r = cli_run("train", "train");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--config FILE is required"));
    if (!have_fmnist())
        skip();
    /* a tiny MeZO run on the first 300 Fashion-MNIST rows, through a checkpoint */
    const char *mezo = "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 6, "
                       "\"batch_size\": 30, \"lr\": 0.01, \"data\": {\"train_subset\": 300}}";
    write_bytes(TMP "/train_cli.json", mezo, strlen(mezo));
    r = cli_run("train --config " TMP "/train_cli.json --until 3 --checkpoint " TMP
                "/train_cli.ckpt --json",
                "train");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"stopped\":\t\"until\""));
    r = cli_run("train --config " TMP "/train_cli.json --resume " TMP "/train_cli.ckpt --json",
                "train");
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\"steps\":\t6"));
    assert_non_null(strstr(r->out, "\"epsilon_spent\":\t\"inf\""));
    assert_non_null(strstr(r->out, "\"test_accuracy\":\t0."));
    assert_non_null(strstr(r->out, "\"n_params\":\t7850"));
    /* a plan beyond the profile: refused with exit status 2 */
    const char *prof = TMP "/train_cli_profile.json";
    write_profile(ctx, prof, 30.0 / 300.0, 100, 1.0);
    const char *cfg = "{\"algorithm\": \"dpzero\", \"model\": \"mlp:\", \"steps\": 200, "
                      "\"batch_size\": 30, \"lr\": 0.01, \"clip\": 1, \"profile\": "
                      "\"train_cli_profile.json\", \"data\": {\"train_subset\": 300}}";
    write_bytes(TMP "/train_cli_dp.json", cfg, strlen(cfg));
    r = cli_run("train --config " TMP "/train_cli_dp.json", "train");
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "plans 200 steps but the profile accounts for 100"));
}

/* Every example configuration (examples/fmnist-*.json but the profiles, the ones
 * docs/algorithms.md and docs/results.md run) parses and validates: a key that does not apply
 * to its algorithm, or a value out of range, fails here rather than in a user's first run. */
static void test_examples_parse(void **state)
{
    dpzo_ctx *ctx = *state;
    glob_t g;
    assert_int_equal(glob(DPZO_SOURCE_DIR "/examples/fmnist-*.json", 0, NULL, &g), 0);
    size_t configs = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        if (strstr(path, "-profile.json") != NULL)
            continue;
        dpzo_train_config c;
        if (dpzo_train_config_read_file(ctx, path, &c) != DPZO_OK)
            fail_msg("%s: %s", path, dpzo_ctx_errmsg(ctx));
        configs++;
    }
    globfree(&g);
    assert_true(configs >= 11); /* dpzero ... pazo-s, dpsgd-public, dpmd */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_parse),
        cmocka_unit_test(test_zo_estimate_central_difference),
        cmocka_unit_test(test_zo_estimate_directional_derivative),
        cmocka_unit_test(test_lr_schedules),
        cmocka_unit_test(test_poisson_batch_sizes),
        cmocka_unit_test(test_shuffle_epochs),
        cmocka_unit_test(test_wor_independent),
        cmocka_unit_test(test_noise_once_per_query),
        cmocka_unit_test(test_nonfinite_differences_contribute_zero),
        cmocka_unit_test(test_dpsgd_clips),
        cmocka_unit_test(test_budget_refusal),
        cmocka_unit_test(test_resume_dpzero),
        cmocka_unit_test(test_resume_mezo),
        cmocka_unit_test(test_resume_dpzopo),
        cmocka_unit_test(test_resume_pazo),
        cmocka_unit_test(test_checkpoint_refusals),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_validation_holdout),
        cmocka_unit_test(test_mezo_learns),
        cmocka_unit_test(test_direction_cache),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
