/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_zo_step.c: the step with the model outside it (trainer/zo_step.c).
 *
 * `dpzo train` is a loop over the same step object (trainer/train_step.c), so this is no
 * longer a comparison of two implementations: it checks that a caller of the public API
 * alone, as dpzo.torch calls it (each sign evaluated separately, releases adopted from the
 * drawing rank, updates in pieces, no direction cache), gets `dpzo train`'s trajectory.
 * The step object, fed the losses of the same model (dpzo_model_losses at its directions and lambda), on the same batches (the
 * same sampling seed) with the same noise (tests' fixed_noise, adopted as the release),
 * must give theta bit for bit after every step: dpzero with Q = 1 and 3, mezo, dpzoso
 * across its stage boundaries, pazo-m (the public gradient of the trainer's public batch),
 * pazo-p (the basis of 3 public gradients) and pazo-s with and without its noisy candidate
 * (the two-part adaptive release), dpzopo (its masks from the linearised network's sums,
 * incremental with rank multipliers, and static). And the ledger (dpzo_privacy_epsilon_after of the same
 * plan), the CSPRNG draws (Q per step), refusal past the plan, resume of the step count,
 * and the configuration's refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/trainer.h"
#include "dpzo/zo_step.h"
#include "train_internal.h"
#include "train_fixtures.h"

#define TMP DPZO_TEST_TMP

/* Runs `steps` steps of cfg both ways and compares theta after each. */
static void same_as_trainer(dpzo_ctx *ctx, dpzo_train_config *c, uint64_t steps)
{
    cluster_sets d = cluster_pair(120, 40, 6, 3, 0.25, 11, 12);
    dpzo_trainer *tr = NULL;
    assert_ok(ctx, dpzo_trainer_create(ctx, c, &d.tr, &d.te, &tr));
    const size_t P = dpzo_trainer_n_params(tr);
    const dpzo_dataset *priv = &tr->priv; /* the rows left after the public split */
    dpzo_zo *zo = NULL;
    assert_ok(ctx, dpzo_zo_create(ctx, c, P, priv->n, &zo));
    assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, tr, 99));
    assert_ok(ctx, dpzo_zo_set_sampling_seed(ctx, zo, 99));
    double scale = 0.75;
    if (dpzo_algorithm_is_private(c->algorithm)) {
        dpzo__trainer_set_noise_hook(tr, fixed_noise, &scale);
    }
    float *theta = malloc(P * sizeof *theta);
    memcpy(theta, dpzo_trainer_theta(tr), P * sizeof *theta);
    const unsigned Q = c->queries;
    size_t *idx = malloc(d.tr.n * sizeof *idx), *idx2 = malloc(d.tr.n * sizeof *idx2);
    double *lp = malloc(d.tr.n * Q * sizeof *lp), *lm = malloc(d.tr.n * Q * sizeof *lm);
    double *col = malloc(d.tr.n * sizeof *col);
    float *grad = malloc(P * sizeof *grad);
    const unsigned K = c->pub.k;
    float *G = malloc((size_t)K * P * sizeof *G);
    double *cl = malloc(d.tr.n * (K + 1) * sizeof *cl);
    double qsum[8], noise[8];
    dpzo_model *m = NULL;
    assert_ok(ctx, dpzo_model_create(ctx, c->model, d.tr.dim, 0, 0, 3, &m));
    for (uint64_t t = 0; t < steps; t++) {
        assert_ok(ctx, dpzo_zo_begin(ctx, zo));
        size_t b = dpzo_zo_batch(zo, t, idx);
        assert_int_equal(dpzo_zo_batch(dpzo__trainer_zo(tr), t, idx2), b);
        assert_memory_equal(idx, idx2, b * sizeof *idx);
        if (c->algorithm == DPZO_ALG_PAZO_M) { /* the public gradient at theta, before */
            size_t nb = dpzo__public_batch(tr, t, 0, idx2);
            assert_int_equal(dpzo_model_grad(m, theta, &tr->pub, idx2, nb, grad, NULL, NULL),
                             DPZO_OK);
        }
        if (c->algorithm == DPZO_ALG_PAZO_P || c->algorithm == DPZO_ALG_PAZO_S) {
            for (unsigned j = 0; j < K; j++) {
                size_t nb = dpzo__public_batch(tr, t, j, idx2);
                assert_int_equal(dpzo_model_grad(m, theta, &tr->pub, idx2, nb, G + j * P, NULL,
                                                 NULL),
                                 DPZO_OK);
            }
            assert_ok(ctx, dpzo_zo_set_public(ctx, zo, G, K));
        }
        if (dpzo_zo_score_queries(zo) > 0) { /* dpzopo: the stage's linearised sums */
            const unsigned Pq = dpzo_zo_score_queries(zo);
            double sp[8], sm[8], logits[3];
            float *abs_theta = malloc(P * sizeof *abs_theta), ones[6] = {1, 1, 1, 1, 1, 1};
            for (size_t j = 0; j < P; j++)
                abs_theta[j] = fabsf(theta[j]);
            int32_t label = 0;
            dpzo_dataset one = {1, 6, 0, 0, 3, ones, &label};
            size_t row = 0;
            for (unsigned p = 0; p < Pq; p++)
                for (int sign = 1; sign >= -1; sign -= 2) {
                    dpzo_perturb pert = {dpzo_zo_score_direction(zo, p),
                                         dpzo_zo_score_lambda(zo), sign};
                    assert_int_equal(dpzo_model_logits(m, abs_theta, &pert, &one, &row, 1,
                                                       logits),
                                     DPZO_OK);
                    double sum = 0.0;
                    for (int k = 0; k < 3; k++)
                        sum += logits[k];
                    (sign > 0 ? sp : sm)[p] = sum;
                }
            assert_null(dpzo_zo_direction(zo, 0)); /* not before the mask */
            assert_ok(ctx, dpzo_zo_set_score(ctx, zo, sp, sm, theta));
            free(abs_theta);
        }
        if (c->algorithm == DPZO_ALG_PAZO_S) {
            /* part 1: the k candidates, then (noisy_candidate) part 2 */
            for (int part = 1; dpzo_zo_candidates(zo) > 0; part++) {
                const unsigned mc = dpzo_zo_candidates(zo);
                for (unsigned j = 0; j < mc; j++) {
                    dpzo_perturb pert = {dpzo_zo_candidate(zo, j), dpzo_zo_lr(zo), -1};
                    assert_int_equal(dpzo_model_losses(m, theta, &pert, priv, idx, b, col),
                                     DPZO_OK);
                    for (size_t i = 0; i < b; i++)
                        cl[i * mc + j] = col[i];
                }
                assert_ok(ctx, dpzo_zo_clip_sum_candidates(ctx, zo, cl, b, qsum));
                fixed_noise(&scale, t, noise, mc); /* the trainer's draw of this part */
                for (unsigned j = 0; j < mc; j++)
                    qsum[j] += noise[j];
                assert_ok(ctx, dpzo_zo_adopt(ctx, zo, qsum));
                assert_true(part <= 2);
            }
            assert_true(dpzo_zo_choice(zo) >= 0);
            goto update;
        }
        for (unsigned k = 0; k < Q; k++)
            for (int sign = 1; sign >= -1; sign -= 2) {
                dpzo_perturb pert = {dpzo_zo_direction(zo, k), dpzo_zo_lambda(zo), sign};
                assert_int_equal(dpzo_model_losses(m, theta, &pert, priv, idx, b, col), DPZO_OK);
                for (size_t i = 0; i < b; i++)
                    (sign > 0 ? lp : lm)[i * Q + k] = col[i];
            }
        assert_ok(ctx, dpzo_zo_clip_sum(ctx, zo, lp, lm, b, qsum));
        if (dpzo_algorithm_is_private(c->algorithm)) {
            fixed_noise(&scale, t, noise, Q);
            for (unsigned k = 0; k < Q; k++)
                qsum[k] += noise[k];
            assert_ok(ctx, dpzo_zo_adopt(ctx, zo, qsum));
        } else {
            assert_ok(ctx, dpzo_zo_release(ctx, zo, qsum, NULL));
        }
    update:
        if (c->algorithm == DPZO_ALG_PAZO_M) {
            assert_ok(ctx, dpzo_zo_update_public(ctx, zo, 0, P / 2, DPZO_F32, theta, grad));
            assert_ok(ctx, dpzo_zo_update_public(ctx, zo, P / 2, P - P / 2, DPZO_F32,
                                                 theta + P / 2, grad + P / 2));
        } else {
            assert_int_equal(dpzo_zo_update_public(ctx, zo, 0, P, DPZO_F32, theta, grad),
                             DPZO_EINVAL);
        }
        /* the update in two pieces: the split does not matter */
        assert_ok(ctx, dpzo_zo_update(ctx, zo, 0, P / 3, DPZO_F32, theta));
        assert_ok(ctx, dpzo_zo_update(ctx, zo, P / 3, P - P / 3, DPZO_F32, theta + P / 3));
        assert_ok(ctx, dpzo_zo_end(ctx, zo));
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, t + 1, NULL, NULL));
        assert_memory_equal(theta, dpzo_trainer_theta(tr), P * sizeof *theta);
        assert_true(dpzo_zo_lr_at(zo, t) == tr->lr_last); /* the trainer's rate of step t */
        if (c->algorithm == DPZO_ALG_DPZOPO) /* the same mask, the same multipliers */
            assert_memory_equal(dpzo_zo_mask(zo), dpzo_zo_mask(dpzo__trainer_zo(tr)),
                                P * sizeof(float));
        if (dpzo_algorithm_is_private(c->algorithm))
            assert_true(dpzo_zo_epsilon(zo) ==
                        dpzo_privacy_epsilon_after(dpzo_trainer_privacy(tr), t + 1));
    }
    assert_int_equal(dpzo_zo_steps_done(zo), steps);
    assert_true(isnan(dpzo_zo_lr_at(zo, c->steps)));
    dpzo_model_free(m);
    free(theta);
    free(idx);
    free(idx2);
    free(lp);
    free(lm);
    free(col);
    free(grad);
    free(G);
    free(cl);
    dpzo_zo_free(zo);
    dpzo_trainer_free(tr);
    cluster_sets_free(&d);
}

static void test_dpzero_same_as_trainer(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    const char *prof = TMP "/zo_step_profile.json";
    write_profile(ctx, prof, 0.25, 12, 2.0);
    for (unsigned Q = 1; Q <= 3; Q += 2) {
        dpzo_train_config c = base_config(DPZO_ALG_DPZERO, "mlp:5", 12, 30.0, 0.05);
        c.queries = Q;
        set_private(&c, prof, 2.0);
        same_as_trainer(ctx, &c, 12);
    }
    dpzo_ctx_free(ctx);
}

/* A PAZO run of 7 steps on mlp:4: 40 public rows (batches of 8), 80 private ones at an
 * expected 20 a step (the profile's q = 0.25), clip 1. */
static dpzo_train_config public_config(dpzo_algorithm alg, double lr, const char *profile)
{
    dpzo_train_config c = base_config(alg, "mlp:4", 7, 20.0, lr);
    c.public_size = 40;
    c.pub.batch_size = 8;
    set_private(&c, profile, 1.0);
    return c;
}

static void test_other_algorithms_same_as_trainer(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_train_config c = base_config(DPZO_ALG_MEZO, "mlp:4", 6, 20.0, 0.05);
    c.lr_schedule = DPZO_LR_COSINE;
    c.direction = DPZO_DIR_SPHERE;
    same_as_trainer(ctx, &c, 6);
    const char *prof = TMP "/zo_step_profile7.json";
    write_profile(ctx, prof, 0.25, 7, 1.0);
    c = base_config(DPZO_ALG_DPZOSO, "mlp:", 7, 30.0, 0.08);
    c.stages.count = 3; /* stages of 1, 2 and 4 steps */
    c.stages.lambda_last = 1e-2;
    set_private(&c, prof, 1.0);
    same_as_trainer(ctx, &c, 7);
    /* pazo-m: 40 public rows held out, 80 private ones (q = 20 / 80 as the profile's) */
    c = public_config(DPZO_ALG_PAZO_M, 0.1, prof);
    c.pub.alpha = 0.3;
    c.queries = 2;
    c.direction = DPZO_DIR_SPHERE;
    c.radius_kind = DPZO_RADIUS_D_QUARTER;
    same_as_trainer(ctx, &c, 7);
    /* dpzopo: incremental masks (rates 0.2, 0.4, 0.8 of the parameters over three stages)
     * with rank multipliers and a sphere direction, then a static mask */
    c = base_config(DPZO_ALG_DPZOPO, "mlp:4", 7, 30.0, 0.08);
    c.stages.count = 3;
    c.prune.strategy = DPZO_PRUNE_INCREMENTAL;
    c.prune.rate = 0.2;
    c.prune.rank = 1;
    c.prune.queries = 2;
    c.direction = DPZO_DIR_SPHERE;
    set_private(&c, prof, 1.0);
    same_as_trainer(ctx, &c, 7);
    c.prune.strategy = DPZO_PRUNE_STATIC;
    c.prune.growth = NAN;
    c.prune.rank = 0;
    c.direction = DPZO_DIR_GAUSSIAN;
    same_as_trainer(ctx, &c, 7);
    /* pazo-p: the basis of 3 public gradients */
    c = public_config(DPZO_ALG_PAZO_P, 0.1, prof);
    c.pub.k = 3;
    c.queries = 2;
    c.direction = DPZO_DIR_SPHERE;
    same_as_trainer(ctx, &c, 7);
    /* pazo-s: 3 candidates and the noisy one (an adaptive two-part release), and without */
    for (int noisy = 1; noisy >= 0; noisy--) {
        c = public_config(DPZO_ALG_PAZO_S, 0.5, prof);
        c.pub.k = 3;
        c.pub.noisy_candidate = noisy;
        c.pub.candidate_scale = 0.05;
        same_as_trainer(ctx, &c, 7);
    }
    dpzo_ctx_free(ctx);
}

static dpzo_zo *open_json(dpzo_ctx *ctx, const char *json, uint64_t dim, uint64_t n,
                          dpzo_status want)
{
    dpzo_zo *zo = NULL;
    assert_int_equal(dpzo_zo_open(ctx, json, NULL, dim, n, &zo), want);
    return zo;
}

static void test_ledger_refusal_resume(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    const char *prof = TMP "/zo_step_ledger.json";
    write_profile(ctx, prof, 0.01, 5, 1.0);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"algorithm\": \"dpzero\", \"profile\": \"%s\", \"clip\": 1, \"steps\": 5, "
             "\"batch_size\": 10, \"lr\": 0.1, \"queries\": 2}",
             prof);
    dpzo_zo *zo = open_json(ctx, json, 100, 1000, DPZO_OK);
    /* the plan's own accounting, independently: the accountant's epsilon of T-fold
     * Poisson-subsampled Gaussian composition, through the profile's privacy object */
    dpzo_privacy_plan plan = {.batching = DPZO_BATCH_POISSON, .batch_size = 10, .n = 1000,
                              .steps = 5, .queries = 2, .clip = 1.0};
    dpzo_privacy *p = NULL;
    assert_ok(ctx, dpzo_privacy_open(ctx, prof, &plan, &p));
    assert_true(dpzo_zo_epsilon(zo) == 0.0);
    double zero[2] = {0.0, 0.0}, rel[2];
    float theta[100] = {0};
    for (uint64_t t = 0; t < 5; t++) {
        assert_ok(ctx, dpzo_zo_begin(ctx, zo));
        assert_int_equal(dpzo_zo_begin(ctx, zo), DPZO_EINVAL); /* begun twice */
        assert_int_equal(dpzo_zo_update(ctx, zo, 0, 100, DPZO_F32, theta), DPZO_EINVAL);
        assert_ok(ctx, dpzo_zo_clip_sum(ctx, zo, NULL, NULL, 0, rel));
        assert_ok(ctx, dpzo_zo_release(ctx, zo, zero, rel));
        /* the release is noise alone here: sigma C per query, not zero */
        assert_true(rel[0] != 0.0 && rel[1] != 0.0);
        assert_true(dpzo_zo_gradient(zo, 1) == rel[1] / 10.0);
        assert_int_equal(dpzo_zo_update(ctx, zo, 90, 11, DPZO_F32, theta), DPZO_EINVAL);
        assert_ok(ctx, dpzo_zo_update(ctx, zo, 0, 100, DPZO_F32, theta));
        assert_ok(ctx, dpzo_zo_end(ctx, zo));
        assert_true(dpzo_zo_epsilon(zo) == dpzo_privacy_epsilon_after(p, t + 1));
        assert_int_equal(dpzo_zo_noise_draws(zo), 2 * (t + 1));
    }
    assert_true(dpzo_zo_epsilon(zo) <= dpzo_zo_budget(zo));
    assert_true(dpzo_zo_epsilon(zo) > 0.0);
    /* a sixth step is refused before anything of it happens */
    assert_int_equal(dpzo_zo_begin(ctx, zo), DPZO_EINFEASIBLE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "refused"));
    assert_int_equal(dpzo_zo_steps_done(zo), 5);
    assert_int_equal(dpzo_zo_noise_draws(zo), 10);
    /* abandoned steps: before the release nothing counts, after it the step does */
    dpzo_zo_abort(zo); /* no step begun: nothing */
    assert_int_equal(dpzo_zo_steps_done(zo), 5);
    dpzo_zo_free(zo);
    zo = open_json(ctx, json, 100, 1000, DPZO_OK);
    assert_ok(ctx, dpzo_zo_begin(ctx, zo));
    dpzo_zo_abort(zo);
    assert_int_equal(dpzo_zo_steps_done(zo), 0);
    assert_int_equal(dpzo_zo_noise_draws(zo), 0);
    assert_ok(ctx, dpzo_zo_begin(ctx, zo)); /* begun again */
    assert_ok(ctx, dpzo_zo_release(ctx, zo, zero, rel));
    dpzo_zo_abort(zo);
    assert_int_equal(dpzo_zo_steps_done(zo), 1);
    assert_true(dpzo_zo_epsilon(zo) == dpzo_privacy_epsilon_after(p, 1));
    assert_ok(ctx, dpzo_zo_set_steps_done(ctx, zo, 5));
    /* going back is refused: the epsilon spent is not returned */
    assert_int_equal(dpzo_zo_set_steps_done(ctx, zo, 3), DPZO_EINVAL);
    dpzo_zo_free(zo);
    /* resume: a fresh object continues the ledger from the saved count */
    zo = open_json(ctx, json, 100, 1000, DPZO_OK);
    assert_ok(ctx, dpzo_zo_set_steps_done(ctx, zo, 3));
    assert_true(dpzo_zo_epsilon(zo) == dpzo_privacy_epsilon_after(p, 3));
    assert_int_equal(dpzo_zo_set_steps_done(ctx, zo, 6), DPZO_EINVAL);
    dpzo_zo_free(zo);
    dpzo_privacy_free(p);
    /* a plan the profile does not cover: another sampling rate, more steps */
    open_json(ctx, json, 100, 999, DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "rate"));
    snprintf(json, sizeof json,
             "{\"algorithm\": \"dpzero\", \"profile\": \"%s\", \"clip\": 1, \"steps\": 6, "
             "\"batch_size\": 10, \"lr\": 0.1}",
             prof);
    assert_int_not_equal(dpzo_zo_open(ctx, json, NULL, 100, 1000, &zo), DPZO_OK);
    assert_null(zo);
    dpzo_ctx_free(ctx);
}

static void test_config_refusals(void **state)
{
    (void)state;
    dpzo_ctx *ctx = dpzo_ctx_new();
    open_json(ctx, "{\"algorithm\": \"mezo\", \"model\": \"mlp:\", \"steps\": 5, "
                   "\"batch_size\": 10, \"lr\": 0.1}",
              10, 100, DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "'model' belongs to `dpzo train`"));
    open_json(ctx, "{\"algorithm\": \"mezo\", \"steps\": 5, \"batch_size\": 10}", 10, 100,
              DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "'lr' is required"));
    open_json(ctx, "{\"algorithm\": \"dpsgd\", \"steps\": 5, \"batch_size\": 10, \"lr\": 0.1, "
                   "\"profile\": \"x.json\", \"clip\": 1}",
              10, 100, DPZO_EUNSUPPORTED);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "dpsgd is not available"));
    open_json(ctx, "{\"algorithm\": \"mezo\", \"steps\": 5, \"batch_size\": 10, \"lr\": 0.1}",
              0, 100, DPZO_EINVAL);
    open_json(ctx, "{\"algorithm\": \"mezo\", \"steps\": 5, \"batch_size\": 10, "
                   "\"batching\": \"shuffle\", \"lr\": 0.1}",
              10, 5, DPZO_EINVAL);
    /* mezo: refusal past the plan too, and no noise */
    dpzo_zo *zo = open_json(ctx, "{\"algorithm\": \"mezo\", \"steps\": 1, \"batch_size\": 10, "
                                 "\"lr\": 0.1}",
                            10, 100, DPZO_OK);
    double s[1] = {0.5}, r[1];
    assert_ok(ctx, dpzo_zo_begin(ctx, zo));
    assert_ok(ctx, dpzo_zo_release(ctx, zo, s, r));
    assert_true(r[0] == 0.5);
    assert_ok(ctx, dpzo_zo_end(ctx, zo));
    assert_int_equal(dpzo_zo_begin(ctx, zo), DPZO_EINFEASIBLE);
    assert_true(isinf(dpzo_zo_epsilon(zo)));
    dpzo_zo_free(zo);
    dpzo_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dpzero_same_as_trainer),
        cmocka_unit_test(test_other_algorithms_same_as_trainer),
        cmocka_unit_test(test_ledger_refusal_resume),
        cmocka_unit_test(test_config_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
