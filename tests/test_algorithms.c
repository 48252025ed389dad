/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_algorithms.c: the papers' algorithms (trainer/stagewise.c, trainer/pazo.c,
 * masked and explicit directions in kernels/cpu/zo_dir.c).
 *
 * Oracles, none of them the code under test:
 *   - the stage schedule's closed form (lengths T_1 2^(s-1), geometric smoothing, halved
 *     learning rates);
 *   - the ZO estimator's expectation on logistic regression: the mean of d u over many
 *     directions against the model's gradient (Gaussian: grad; sphere of radius d^(1/4):
 *     grad / sqrt(d); masked: m^2 (.) grad);
 *   - DP-ZOPO's score on logistic regression, where the linearised output sum is the sum
 *     of the parameters, so the ZO score orders coordinates by |v_j theta_j| exactly;
 *     frozen coordinates bit for bit unchanged after training;
 *   - PAZO-P: the basis against a Gram-Schmidt written here; the update in the span of
 *     the public gradients, its mean the projection of the private gradient;
 *   - PAZO-S: the candidates' losses recomputed here in double at the explicitly rounded
 *     weights, the chosen step and the new theta bit for bit; the shares' clipping bounds;
 *   - the ledger: the accountant (dpzo_event_epsilon) for the equivalent subsampled
 *     Gaussian, and the count of noise draws per step. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/trainer.h"
#include "train_internal.h"
#include "train_fixtures.h"
#include "zo_internal.h"

/* The run's step object (the sampler, the release, the stage's anchor and mask). */
static dpzo_zo *zo_of(const dpzo_trainer *tr) { return dpzo__trainer_zo(tr); }

/* A setting changed mid-run, in the step object's copy of the configuration too. */
#define SET_CFG(tr, field, v) ((tr)->cfg.field = (v), dpzo__zo_config_mut(zo_of(tr))->field = (v))

/* DP-ZOPO's mask for stage s at the trainer's theta, composed of the pieces the step
 * uses: the score's directions, the linearised network's sums, the score, the selection. */
static dpzo_status prune_mask(dpzo_ctx *ctx, dpzo_trainer *tr, unsigned s, double rate,
                              const float *prev, float *mask, size_t *n)
{
    const dpzo_train_config *c = &tr->cfg;
    const unsigned nq = c->prune.queries;
    dpzo_dir v[8];
    const dpzo_dir *vp[8];
    double lp[8], lm[8];
    assert_true(nq <= 8);
    for (unsigned p = 0; p < nq; p++) {
        assert_ok(ctx, dpzo__prune_dir(ctx, c, s, p, tr->P, &v[p]));
        vp[p] = &v[p];
    }
    double *score = malloc(tr->P * sizeof *score);
    assert_ok(ctx, dpzo__prune_sums(ctx, tr->model, &tr->priv, tr->theta, tr->P, vp, nq,
                                    c->prune.lambda, lp, lm));
    assert_ok(ctx, dpzo__prune_score(ctx, c, s, lp, lm, tr->theta, tr->P, score));
    dpzo_status st = dpzo__prune_select(ctx, &c->prune, score, tr->P, rate, prev, mask, n);
    free(score);
    return st;
}

#define TMP DPZO_TEST_TMP

static double norm2(const double *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* ---- the stage schedule ---------------------------------------------------------------- */

static void test_stage_schedule(void **state)
{
    (void)state;
    dpzo_train_config c = base_config(DPZO_ALG_DPZOSO, "mlp:", 7000, 8.0, 0.08);
    c.lambda = 1e-6;
    c.stages.lambda_last = 1e-4;
    dpzo__stage g;
    dpzo__stage_of(&c, 0, &g); /* T_1 = 7000 / (2^3 - 1) = 1000 */
    assert_int_equal(g.s, 1);
    assert_int_equal(g.start, 0);
    assert_int_equal(g.len, 1000);
    assert_rel(g.lambda, 1e-6, 1e-15);
    assert_rel(g.lr, 0.08, 1e-15);
    dpzo__stage_of(&c, 999, &g);
    assert_int_equal(g.s, 1);
    dpzo__stage_of(&c, 1000, &g);
    assert_int_equal(g.s, 2);
    assert_int_equal(g.start, 1000);
    assert_int_equal(g.len, 2000);
    assert_rel(g.lambda, 1e-5, 1e-12); /* geometric: 1e-6, 1e-5, 1e-4 */
    assert_rel(g.lr, 0.04, 1e-15);
    dpzo__stage_of(&c, 6999, &g);
    assert_int_equal(g.s, 3);
    assert_int_equal(g.start, 3000);
    assert_int_equal(g.len, 4000);
    assert_rel(g.lambda, 1e-4, 1e-15);
    assert_rel(g.lr, 0.02, 1e-15);
    /* 10000 steps: T_1 = ceil(10000 / 7) = 1429, the last stage truncated to 5713 */
    c.steps = 10000;
    dpzo__stage_of(&c, 9999, &g);
    assert_int_equal(g.s, 3);
    assert_int_equal(g.start, 1429 + 2858);
    assert_int_equal(g.len, 10000 - 4287);
    /* a short T_1: the last stage runs to the end */
    c.stages.first_steps = 100;
    c.steps = 1000;
    dpzo__stage_of(&c, 999, &g);
    assert_int_equal(g.s, 3);
    assert_int_equal(g.start, 300);
    assert_int_equal(g.len, 700);
    /* pruning rates: increasing doubles per stage, static keeps r */
    c.prune.strategy = DPZO_PRUNE_INCREASING;
    c.prune.rate = 0.01;
    dpzo__stage_of(&c, 999, &g);
    assert_rel(g.rate, 0.04, 1e-15);
    c.prune.strategy = DPZO_PRUNE_STATIC;
    dpzo__stage_of(&c, 999, &g);
    assert_rel(g.rate, 0.01, 1e-15);
}

/* DP-ZOSO is DPZero with each stage's smoothing and learning rate: four steps in two stages
 * against a DPZero trainer whose lambda and lr are set to the stage's values by hand (same
 * batches, directions and noise: bit for bit). With prox on, a step is the proximal pull
 * towards the stage's start followed by the released ZO update. */
static void test_dpzoso_is_staged_dpzero(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    const char *prof = TMP "/alg_zoso_profile.json";
    write_profile(ctx, prof, 0.1, 6, 2.0);
    double ns = 1.8;
    dpzo_train_config c = base_config(DPZO_ALG_DPZOSO, "mlp:6", 6, 24.0, 0.1);
    set_private(&c, prof, 2.0);
    c.stages = (dpzo_stage_config){.count = 2, .first_steps = 2, .lambda_last = 1e-2,
                                   .lr_decay = 0.5, .prox = 0.0};
    dpzo_train_config z = c;
    z.algorithm = DPZO_ALG_DPZERO;
    dpzo_trainer *a, *b;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &a));
    assert_ok(ctx, dpzo_trainer_create(ctx, &z, &sets.tr, &sets.te, &b));
    dpzo_trainer *both[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        assert_ok(ctx, dpzo__trainer_set_sampling_seed(ctx, both[i], 99));
        dpzo__trainer_set_noise_hook(both[i], fixed_noise, &ns);
    }
    for (uint64_t t = 0; t < 4; t++) {
        SET_CFG(b, lambda, t < 2 ? 1e-3 : 1e-2); /* stage 1: lambda, stage 2: lambda_last */
        SET_CFG(b, lr, t < 2 ? 0.1 : 0.05);      /* halved */
        assert_ok(ctx, dpzo_trainer_run(ctx, a, t + 1, NULL, NULL));
        assert_ok(ctx, dpzo_trainer_run(ctx, b, t + 1, NULL, NULL));
        assert_memory_equal(a->theta, b->theta, a->P * sizeof *a->theta);
    }
    dpzo_trainer_free(a);
    dpzo_trainer_free(b);

    /* prox: step 3 (the second of stage 2) from theta, anchor = theta at step 2 */
    c.stages.prox = 3.0;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &a));
    dpzo__trainer_set_noise_hook(a, fixed_noise, &ns);
    assert_ok(ctx, dpzo_trainer_run(ctx, a, 3, NULL, NULL));
    const size_t P = a->P;
    float *before = malloc(P * sizeof *before), *u = malloc(P * sizeof *u);
    memcpy(before, a->theta, P * sizeof *before);
    assert_ok(ctx, dpzo_trainer_run(ctx, a, 4, NULL, NULL));
    dpzo_dir d;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 7, 3, 0, P, 1.0));
    dpzo_dir_fill(&d, 0, P, u);
    double g = dpzo__zo_last_noisy(zo_of(a))[0] / 24.0;
    const float *anchor, *mask;
    dpzo__zo_state(zo_of(a), &anchor, &mask);
    assert_non_null(anchor);
    size_t pulled = 0;
    for (size_t j = 0; j < P; j++) {
        float pre = (float)((double)before[j] -
                            0.05 * 3.0 * ((double)before[j] - (double)anchor[j]));
        float want = (float)((double)pre + (-0.05 * g) * (double)u[j]);
        assert_memory_equal(&a->theta[j], &want, sizeof want);
        pulled += before[j] != anchor[j];
    }
    assert_true(pulled > P / 2); /* the pull acted */
    free(before);
    free(u);
    dpzo_trainer_free(a);
    cluster_sets_free(&sets);
}

/* ---- masked and explicit directions -------------------------------------------------- */

static void test_masked_and_explicit_directions(void **state)
{
    dpzo_ctx *ctx = *state;
    enum { P = 1003 };
    static float mask[P], plain[P], masked[P], theta[P], before[P];
    for (size_t j = 0; j < P; j++)
        mask[j] = j % 7 == 3 ? 1.0f : j % 7 == 5 ? 0.75f : 0.0f;
    dpzo_dir d, m;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 42, 9, 1, P, 1.0));
    m = d;
    assert_ok(ctx, dpzo_dir_set_mult(ctx, &m, mask, 1.0));
    dpzo_dir_fill(&d, 0, P, plain);
    dpzo_dir_fill(&m, 0, P, masked);
    for (size_t j = 0; j < P; j++) {
        float want = plain[j] * mask[j]; /* keyed by the global index, as without the mask */
        assert_memory_equal(&masked[j], &want, sizeof want);
        assert_true((double)masked[j] == dpzo_dir_at(&m, j));
    }
    /* a split fill gives the same floats */
    float part[P];
    dpzo_dir_fill(&m, 0, 500, part);
    dpzo_dir_fill(&m, 500, P - 500, part + 500);
    assert_memory_equal(part, masked, sizeof part);
    /* the update leaves frozen coordinates bit for bit */
    for (size_t j = 0; j < P; j++)
        theta[j] = before[j] = (float)(0.01 * (double)j - 3.0);
    dpzo_dir_axpy(&m, 0, P, -0.37, theta);
    for (size_t j = 0; j < P; j++) {
        if (mask[j] == 0.0f)
            assert_memory_equal(&theta[j], &before[j], sizeof *theta);
        else
            assert_true(theta[j] ==
                        (float)((double)before[j] - 0.37 * (double)masked[j]));
    }
    /* a masked sphere has its radius over the selected coordinates */
    dpzo_dir s;
    assert_ok(ctx, dpzo_dir_init(ctx, &s, DPZO_DIR_SPHERE, 42, 9, 1, P, 5.0));
    assert_ok(ctx, dpzo_dir_set_mult(ctx, &s, mask, 5.0));
    double ss = 0.0;
    for (size_t j = 0; j < P; j++)
        ss += dpzo_dir_at(&s, j) * dpzo_dir_at(&s, j);
    assert_rel(sqrt(ss), 5.0, 1e-6);
    static float zero[P];
    dpzo_dir z;
    assert_ok(ctx, dpzo_dir_init(ctx, &z, DPZO_DIR_SPHERE, 42, 9, 1, P, 5.0));
    assert_int_equal(dpzo_dir_set_mult(ctx, &z, zero, 5.0), DPZO_EINVAL);
    /* an explicit direction is its vector */
    dpzo_dir e;
    assert_ok(ctx, dpzo_dir_init_vector(ctx, &e, plain, P));
    float out[P];
    dpzo_dir_fill(&e, 0, P, out);
    assert_memory_equal(out, plain, sizeof out);
    assert_int_equal(dpzo_dir_init_vector(ctx, &e, NULL, P), DPZO_EINVAL);
}

/* ---- the estimator's expectation ---------------------------------------------------- */

/* mean over N directions of (mean_i d_i) u, directions from `make` (seed 1, step n). */
static void zo_mean(dpzo_ctx *ctx, dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                    dpzo_dir_kind kind, double radius, const float *mult, size_t N, double *out)
{
    size_t P = dpzo_model_n_params(m), b = ds->n;
    size_t *idx = malloc(b * sizeof *idx);
    double *lp = malloc(b * sizeof *lp), *lm = malloc(b * sizeof *lm), *d = malloc(b * sizeof *d);
    for (size_t i = 0; i < b; i++)
        idx[i] = i;
    memset(out, 0, P * sizeof *out);
    for (size_t n = 0; n < N; n++) {
        dpzo_dir u;
        assert_ok(ctx, dpzo_dir_init(ctx, &u, kind, 1, n, 0, P, radius));
        if (mult != NULL)
            assert_ok(ctx, dpzo_dir_set_mult(ctx, &u, mult, radius));
        assert_int_equal(dpzo__zo_differences(m, theta, &u, 1e-4, ds, idx, b, lp, lm, d, 1),
                         DPZO_OK);
        double mean = 0.0;
        for (size_t i = 0; i < b; i++)
            mean += d[i] / (double)b;
        for (size_t j = 0; j < P; j++)
            out[j] += mean * dpzo_dir_at(&u, j) / (double)N;
    }
    free(idx);
    free(lp);
    free(lm);
    free(d);
}

static void test_estimator_expectation(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_dataset ds = clusters(20, 3, 2, 0.4, 11, 12);
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:", 3, 0, 0, 2, &m));
    const size_t P = dpzo_model_n_params(m), N = 20000;
    assert_int_equal(P, 8);
    float theta[8], grad[8];
    dpzo_model_init(m, 5, theta);
    size_t idx[20];
    for (size_t i = 0; i < 20; i++)
        idx[i] = i;
    assert_int_equal(dpzo_model_grad(m, theta, &ds, idx, 20, grad, NULL, NULL), DPZO_OK);
    double g[8], est[8], diff[8];
    for (size_t j = 0; j < P; j++)
        g[j] = grad[j];
    double gn = norm2(g, P);
    /* Gaussian (DPZero, DP-ZOSO): E[(grad . u) u] = grad; sd of the mean ~ |grad| sqrt(P / N) */
    zo_mean(ctx, m, theta, &ds, DPZO_DIR_GAUSSIAN, 1.0, NULL, N, est);
    for (size_t j = 0; j < P; j++)
        diff[j] = est[j] - g[j];
    assert_true(norm2(diff, P) <= 0.06 * gn);
    /* sphere of radius d^(1/4) (PAZO-M): E = grad / sqrt(d), the norm matched instead */
    zo_mean(ctx, m, theta, &ds, DPZO_DIR_SPHERE, sqrt(sqrt((double)P)), NULL, N, est);
    for (size_t j = 0; j < P; j++)
        diff[j] = est[j] * sqrt((double)P) - g[j];
    assert_true(norm2(diff, P) <= 0.06 * gn);
    /* masked Gaussian (DP-ZOPO): E = m^2 (.) grad, frozen coordinates exactly 0 */
    const float mult[8] = {1.0f, 0.0f, 1.2f, 0.0f, 0.8f, 1.0f, 0.0f, 1.0f};
    zo_mean(ctx, m, theta, &ds, DPZO_DIR_GAUSSIAN, 1.0, mult, N, est);
    for (size_t j = 0; j < P; j++) {
        diff[j] = est[j] - (double)mult[j] * (double)mult[j] * g[j];
        if (mult[j] == 0.0f)
            assert_true(est[j] == 0.0);
    }
    assert_true(norm2(diff, P) <= 0.06 * gn);
    dpzo_model_free(m);
    dpzo_dataset_free(&ds);
}

/* ---- DP-ZOPO ------------------------------------------------------------------------- */

static dpzo_trainer *zopo_trainer(dpzo_ctx *ctx, const char *model, const dpzo_dataset *tr_ds,
                                  const dpzo_dataset *te_ds, dpzo_prune_strategy strategy,
                                  double rate, double *noise_scale)
{
    const char *prof = TMP "/alg_zopo_profile.json";
    write_profile(ctx, prof, 0.1, 70, 2.0);
    dpzo_train_config c = base_config(DPZO_ALG_DPZOPO, model, 70, 24.0, 0.05);
    set_private(&c, prof, 2.0);
    c.prune.strategy = strategy;
    c.prune.rate = rate;
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, tr_ds, te_ds, &tr));
    dpzo__trainer_set_noise_hook(tr, fixed_noise, noise_scale);
    return tr;
}

/* Logistic regression: L(|theta| + b v) = sum of the parameters, so score_j is a common
 * factor times v_j theta_j, and the mask keeps the coordinates of smallest |v_j theta_j|. */
static void test_prune_score_and_selection(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    double ns = 0.0;
    dpzo_trainer *tr = zopo_trainer(ctx, "mlp:", &sets.tr, &sets.te, DPZO_PRUNE_STATIC, 0.3, &ns);
    const size_t P = tr->P;
    assert_int_equal(P, 27);
    dpzo_dir v;
    assert_ok(ctx, dpzo_dir_init(ctx, &v, DPZO_DIR_GAUSSIAN, 7 ^ DPZO__PRUNE_SEED_TWEAK, 0, 0, P,
                                 1.0));
    double key[27];
    for (size_t j = 0; j < P; j++)
        key[j] = fabs(dpzo_dir_at(&v, j) * (double)tr->theta[j]);
    float mask[27], prev[27];
    size_t n = 0;
    for (int largest = 0; largest < 2; largest++) {
        tr->cfg.prune.select_largest = largest;
        assert_ok(ctx, prune_mask(ctx, tr, 1, 0.3, NULL, mask, &n));
        assert_int_equal(n, 8); /* round(0.3 * 27) */
        for (size_t j = 0; j < P; j++) { /* selected iff fewer than 8 keys beat it */
            size_t better = 0;
            for (size_t i = 0; i < P; i++)
                better += largest ? key[i] > key[j] : key[i] < key[j];
            assert_true((mask[j] == 1.0f) == (better < 8));
            assert_true(mask[j] == 0.0f || mask[j] == 1.0f);
        }
    }
    /* rank multipliers: the best key gets rank_upper, then linearly down */
    tr->cfg.prune.select_largest = 0;
    tr->cfg.prune.rank = 1;
    assert_ok(ctx, prune_mask(ctx, tr, 1, 0.3, NULL, mask, &n));
    size_t best = 0;
    for (size_t j = 1; j < P; j++)
        best = key[j] < key[best] ? j : best;
    assert_true(mask[best] == 1.2f);
    for (size_t j = 0; j < P; j++)
        assert_true(mask[j] == 0.0f || (mask[j] > 0.8f && mask[j] <= 1.2f));
    /* incremental: the previous coordinates are kept first */
    tr->cfg.prune.rank = 0;
    memset(prev, 0, sizeof prev);
    prev[0] = prev[5] = prev[26] = 1.0f;
    assert_ok(ctx, prune_mask(ctx, tr, 2, 0.3, prev, mask, &n));
    assert_true(mask[0] == 1.0f && mask[5] == 1.0f && mask[26] == 1.0f);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* Frozen coordinates are neither perturbed nor updated; masks per strategy. */
static void test_zopo_strategies(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    double ns = 1.8;
    for (int s = 0; s < 4; s++) {
        dpzo_trainer *tr =
            zopo_trainer(ctx, "mlp:6", &sets.tr, &sets.te, (dpzo_prune_strategy)s, 0.2, &ns);
        const size_t P = tr->P; /* 8*6 + 6 + 6*3 + 3 = 75; stages [0,10) [10,30) [30,70) */
        assert_int_equal(P, 75);
        float *theta0 = malloc(P * sizeof *theta0), *mask1 = malloc(P * sizeof *mask1);
        memcpy(theta0, tr->theta, P * sizeof *theta0);
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, 10, NULL, NULL));
        assert_int_equal(dpzo__zo_mask_count(zo_of(tr)), 15); /* round(0.2 * 75) */
        size_t moved = 0, sel = 0;
        for (size_t j = 0; j < P; j++) {
            sel += dpzo_zo_mask(zo_of(tr))[j] != 0.0f;
            if (dpzo_zo_mask(zo_of(tr))[j] == 0.0f)
                assert_memory_equal(&tr->theta[j], &theta0[j], sizeof *theta0);
            else
                moved += tr->theta[j] != theta0[j];
        }
        assert_int_equal(sel, 15);
        assert_true(moved >= 10);
        memcpy(mask1, dpzo_zo_mask(zo_of(tr)), P * sizeof *mask1);
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, 11, NULL, NULL)); /* stage 2 begins */
        size_t want = s == DPZO_PRUNE_STATIC || s == DPZO_PRUNE_DYNAMIC ? 15 : 30;
        assert_int_equal(dpzo__zo_mask_count(zo_of(tr)), want);
        if (s == DPZO_PRUNE_STATIC)
            assert_memory_equal(dpzo_zo_mask(zo_of(tr)), mask1, P * sizeof *mask1);
        if (s == DPZO_PRUNE_INCREMENTAL)
            for (size_t j = 0; j < P; j++)
                assert_true(mask1[j] == 0.0f || dpzo_zo_mask(zo_of(tr))[j] != 0.0f);
        free(theta0);
        free(mask1);
        dpzo_trainer_free(tr);
    }
    cluster_sets_free(&sets);
}

/* ---- PAZO-P ------------------------------------------------------------------------- */

static void test_span_basis(void **state)
{
    (void)state;
    enum { P = 50 };
    float G[6 * P];
    for (size_t x = 0; x < P; x++) {
        G[x] = (float)sin(1.0 + (double)x);                /* a */
        G[P + x] = G[x];                                    /* a again: dependent */
        G[2 * P + x] = 0.0f;                                /* zero */
        G[3 * P + x] = (float)cos(0.3 * (double)x);        /* b */
        G[4 * P + x] = G[x] + 1e-9f * G[3 * P + x];        /* a, to float precision */
        G[5 * P + x] = x == 7 ? NAN : 1.0f;                 /* not finite */
    }
    float H[6 * P];
    memcpy(H, G, sizeof G);
    unsigned kept = dpzo__span_basis(G, 6, P, 1);
    assert_int_equal(kept, 2); /* a and b */
    for (unsigned i = 0; i < kept; i++)
        for (unsigned j = 0; j < kept; j++) {
            double d = 0.0;
            for (size_t x = 0; x < P; x++)
                d += (double)G[i * P + x] * (double)G[j * P + x];
            assert_true(fabs(d - (i == j)) <= 1e-6);
        }
    for (size_t x = 0; x < kept * P; x++)
        assert_true(isfinite(G[x]));
    /* normalise only: every non-zero finite column, unit norm, directions kept */
    kept = dpzo__span_basis(H, 6, P, 0);
    assert_int_equal(kept, 4);
    for (unsigned i = 0; i < kept; i++) {
        double d = 0.0;
        for (size_t x = 0; x < P; x++)
            d += (double)H[i * P + x] * (double)H[i * P + x];
        assert_rel(d, 1.0, 1e-6);
    }
}

static dpzo_trainer *pazo_trainer(dpzo_ctx *ctx, dpzo_algorithm alg, const dpzo_dataset *tr_ds,
                                  const dpzo_dataset *te_ds, double clip, unsigned queries,
                                  double *noise_scale)
{
    /* 200 rows, 40 public: the private batch is all 160 rows (q = 1) */
    const char *prof = TMP "/alg_pazo_profile.json";
    write_profile(ctx, prof, 1.0, 10, clip);
    dpzo_train_config c = base_config(alg, "mlp:", 10, 160.0, 0.5);
    set_private(&c, prof, clip);
    c.public_size = 40;
    c.pub.batch_size = 8;
    c.queries = queries;
    c.lambda = 1e-4;
    c.pub.candidate_scale = 0.05;
    if (alg == DPZO_ALG_PAZO_P)
        c.direction = DPZO_DIR_SPHERE;
    dpzo_trainer *tr;
    assert_ok(ctx, dpzo_trainer_create(ctx, &c, tr_ds, te_ds, &tr));
    dpzo__trainer_set_noise_hook(tr, fixed_noise, noise_scale);
    return tr;
}

/* grad (P doubles) of the mean loss of rows idx[0..b) of ds. */
static void mean_grad(dpzo_trainer *tr, const dpzo_dataset *ds, const float *theta,
                      const size_t *idx, size_t b, double *out)
{
    float *g = malloc(tr->P * sizeof *g);
    assert_int_equal(dpzo_model_grad(tr->model, theta, ds, idx, b, g, NULL, NULL), DPZO_OK);
    for (size_t j = 0; j < tr->P; j++)
        out[j] = g[j];
    free(g);
}

/* One PAZO-P step with many queries, no noise and no clipping: the update lies in the span
 * of the public gradients and averages to the projection of the private gradient. */
static void test_pazo_p_projection(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(200, 40, 5, 3, 0.4, 8, 9);
    double ns = 0.0;
    dpzo_trainer *tr = pazo_trainer(ctx, DPZO_ALG_PAZO_P, &sets.tr, &sets.te, 1e6, 4000, &ns);
    const size_t P = tr->P; /* 5*3 + 3 = 18 */
    const unsigned k = 3;
    float theta0[18];
    memcpy(theta0, tr->theta, sizeof theta0);
    /* the basis, independently: classical Gram-Schmidt in double of the public gradients */
    double Q[3][18], gp[18];
    size_t idx[200];
    for (unsigned j = 0; j < k; j++) {
        size_t nb = dpzo__public_batch(tr, 0, j, idx);
        assert_int_equal(nb, 8);
        mean_grad(tr, &tr->pub, theta0, idx, nb, Q[j]);
        for (unsigned i = 0; i < j; i++) {
            double c = 0.0;
            for (size_t x = 0; x < P; x++)
                c += Q[j][x] * Q[i][x];
            for (size_t x = 0; x < P; x++)
                Q[j][x] -= c * Q[i][x];
        }
        double n = norm2(Q[j], P);
        for (size_t x = 0; x < P; x++)
            Q[j][x] /= n;
    }
    for (size_t i = 0; i < 160; i++)
        idx[i] = i;
    mean_grad(tr, &tr->priv, theta0, idx, 160, gp);
    double proj[18] = {0}, step[18], res[18];
    for (unsigned j = 0; j < k; j++) {
        double c = 0.0;
        for (size_t x = 0; x < P; x++)
            c += gp[x] * Q[j][x];
        for (size_t x = 0; x < P; x++)
            proj[x] += c * Q[j][x];
    }
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 1, NULL, NULL));
    assert_int_equal(dpzo_zo_basis(zo_of(tr)), 3);
    for (size_t x = 0; x < P; x++)
        step[x] = ((double)theta0[x] - (double)tr->theta[x]) / 0.5; /* lr 0.5 */
    /* in the span: the residual after projecting onto Q is at float rounding */
    memcpy(res, step, sizeof res);
    for (unsigned j = 0; j < k; j++) {
        double c = 0.0;
        for (size_t x = 0; x < P; x++)
            c += step[x] * Q[j][x];
        for (size_t x = 0; x < P; x++)
            res[x] -= c * Q[j][x];
    }
    assert_true(norm2(res, P) <= 1e-4 * norm2(step, P) + 1e-7);
    /* the mean: E[(g . G c) G c] = G G^T g for c on the sphere of radius sqrt(k); one
     * query's error has E|.|^2 = (k - 1) |G^T g|^2, so the mean of 4000 is off by about
     * sqrt(2 / 4000) = 0.022 of |proj|: 0.1 is 4.5 of that */
    double diff[18];
    for (size_t x = 0; x < P; x++)
        diff[x] = step[x] - proj[x];
    assert_true(norm2(diff, P) <= 0.1 * norm2(proj, P));
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- PAZO-S ------------------------------------------------------------------------- */

/* Sum over the private rows of the losses at (float)(theta - lr g), in double. */
static double candidate_sum(dpzo_trainer *tr, const float *theta, const float *g, double lr)
{
    float w[64];
    for (size_t j = 0; j < tr->P; j++)
        w[j] = (float)((double)theta[j] + (-1.0) * lr * (double)g[j]);
    double s = 0.0;
    for (size_t i = 0; i < tr->priv.n; i++)
        s += logistic_loss(w, &tr->priv, i);
    return s;
}

/* With no noise and no clipping, each step takes the candidate of smallest loss (the sums
 * within the float model's tolerance of the test's double ones), and theta moves to
 * theta - lr g bit for bit. */
static void test_pazo_s_selection(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(200, 40, 5, 3, 0.4, 8, 9);
    double ns = 0.0;
    for (int noisy = 1; noisy >= 0; noisy--) {
        dpzo_trainer *tr = pazo_trainer(ctx, DPZO_ALG_PAZO_S, &sets.tr, &sets.te, 1e6, 1, &ns);
        SET_CFG(tr, pub.noisy_candidate, noisy);
        const size_t P = tr->P;
        const unsigned k = 3;
        int wins[4] = {0};
        for (uint64_t t = 0; t < 6; t++) {
            float theta0[18], G[4][18];
            memcpy(theta0, tr->theta, sizeof theta0);
            size_t idx[40];
            double f[4], gd[18];
            for (unsigned j = 0; j < k; j++) {
                size_t nb = dpzo__public_batch(tr, t, j, idx);
                mean_grad(tr, &tr->pub, theta0, idx, nb, gd);
                for (size_t x = 0; x < P; x++)
                    G[j][x] = (float)gd[x];
                f[j] = candidate_sum(tr, theta0, G[j], 0.5);
            }
            unsigned best = 0;
            for (unsigned j = 1; j < k; j++)
                best = f[j] < f[best] ? j : best;
            unsigned want = best;
            if (noisy) {
                dpzo_dir z;
                float u[18];
                assert_ok(ctx, dpzo_dir_init(ctx, &z, DPZO_DIR_GAUSSIAN, 7, t, k, P, 1.0));
                dpzo_dir_fill(&z, 0, P, u);
                for (size_t x = 0; x < P; x++)
                    G[k][x] = (float)((double)G[best][x] + 0.05 * (double)u[x]);
                f[k] = candidate_sum(tr, theta0, G[k], 0.5);
                want = f[k] < f[best] ? k : best;
            }
            assert_ok(ctx, dpzo_trainer_run(ctx, tr, t + 1, NULL, NULL));
            assert_int_equal(dpzo_zo_choice(zo_of(tr)), (int)want);
            /* the model's float logits against the test's double loss: within the model's
             * stated 1e-5 (1 + |z|) per logit; about 1e-8 of these sums is seen */
            for (unsigned j = 0; j < k + (unsigned)noisy; j++)
                assert_rel(dpzo__zo_last_clean(zo_of(tr))[j], f[j], 1e-6);
            wins[want]++;
            for (size_t x = 0; x < P; x++) {
                float w = (float)((double)theta0[x] - 0.5 * (double)G[want][x]);
                assert_memory_equal(&tr->theta[x], &w, sizeof w);
            }
        }
        assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), 6 * (k + (unsigned)noisy));
        dpzo_trainer_free(tr);
    }
    cluster_sets_free(&sets);
}

/* Losses clipped in shares: the k public candidates' vector to C sqrt(k / (k+1)), the noisy
 * candidate to C / sqrt(k+1), so the whole (k+1)-vector has norm at most C. */
static void test_pazo_s_clip_shares(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(200, 40, 5, 3, 0.4, 8, 9);
    double ns = 0.0;
    const double C = 0.2; /* the losses are about 1: every example is clipped */
    dpzo_trainer *tr = pazo_trainer(ctx, DPZO_ALG_PAZO_S, &sets.tr, &sets.te, C, 1, &ns);
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 1, NULL, NULL));
    double b = 160.0, pub = 0.0;
    for (unsigned j = 0; j < 3; j++)
        pub += dpzo__zo_last_clean(zo_of(tr))[j] * dpzo__zo_last_clean(zo_of(tr))[j];
    assert_true(sqrt(pub) <= b * C * sqrt(3.0 / 4.0) * (1 + 1e-12));
    assert_true(sqrt(pub) >= 0.95 * b * C * sqrt(3.0 / 4.0));
    assert_true(dpzo__zo_last_clean(zo_of(tr))[3] <= b * C / 2.0 * (1 + 1e-12));
    assert_true(dpzo__zo_last_clean(zo_of(tr))[3] >= 0.999 * b * C / 2.0);
    dpzo_trainer_free(tr);
    /* candidates so far away (lr 1e39) that many losses overflow to inf or NaN (the float
     * logits overflow past 3.4e38): such a loss counts as a huge one, clipped to the share,
     * so the candidate with the fewest overflowing rows (here the second) gets the smallest
     * clipped sum and is chosen */
    tr = pazo_trainer(ctx, DPZO_ALG_PAZO_S, &sets.tr, &sets.te, C, 1, &ns);
    SET_CFG(tr, lr, 1e39);
    assert_ok(ctx, dpzo_trainer_run(ctx, tr, 1, NULL, NULL));
    assert_int_equal(dpzo_zo_choice(zo_of(tr)), 1);
    const double *clean = dpzo__zo_last_clean(zo_of(tr));
    assert_true(clean[1] < clean[0] && clean[1] < clean[2]);
    assert_true(clean[0] > 10.0 && clean[2] > 1.0);
    pub = 0.0;
    for (unsigned j = 0; j < 3; j++)
        pub += dpzo__zo_last_clean(zo_of(tr))[j] * dpzo__zo_last_clean(zo_of(tr))[j];
    assert_true(sqrt(pub) <= b * C * sqrt(3.0 / 4.0) * (1 + 1e-12));
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- DPMD ---------------------------------------------------------------------------- */

/* Ten DPMD steps without clipping (C = 1e6) and with the tests' fixed noise: each update is
 * theta - lr (alpha_t (sum of the batch's gradients + noise_t)/B + (1 - alpha_t) g_pub) with
 * alpha_t = cos(pi t / 20), recomputed here from the model's mean gradients of the private
 * batch (q = 1: all 160 rows) and of the step's public batch at the step's theta. */
static void test_dpmd_step(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(200, 40, 5, 3, 0.4, 8, 9);
    double ns = 0.3;
    dpzo_trainer *tr = pazo_trainer(ctx, DPZO_ALG_DPMD, &sets.tr, &sets.te, 1e6, 1, &ns);
    const size_t P = tr->P; /* 18 */
    const double lr = 0.5, B = 160.0;
    assert_true(dpzo__dpmd_weight(0, 10) == 1.0);
    assert_rel(dpzo__dpmd_weight(5, 10), 0.70710678118654752, 1e-15);
    assert_true(fabs(dpzo__dpmd_weight(10, 10)) < 1e-16);
    float theta0[18];
    double gp[18], gq[18], noise[18];
    size_t idx[200];
    for (uint64_t t = 0; t < 10; t++) {
        memcpy(theta0, tr->theta, sizeof theta0);
        for (size_t i = 0; i < 160; i++)
            idx[i] = i;
        mean_grad(tr, &tr->priv, theta0, idx, 160, gp);
        size_t nb = dpzo__public_batch(tr, t, 0, idx);
        assert_int_equal(nb, 8);
        mean_grad(tr, &tr->pub, theta0, idx, nb, gq);
        fixed_noise(&ns, t, noise, P);
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, t + 1, NULL, NULL));
        const double a = cos(M_PI * (double)t / 20.0);
        for (size_t x = 0; x < P; x++) {
            double g = a * (gp[x] * 160.0 + noise[x]) / B + (1.0 - a) * gq[x];
            double want = (double)theta0[x] - lr * g;
            /* float theta, and the model's float gradients summed two ways */
            assert_true(fabs((double)tr->theta[x] - want) <=
                        2e-7 * (fabs(want) + 1.0) + 1e-5 * lr * (fabs(gp[x]) + fabs(gq[x])));
        }
    }
    assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), 10 * P);
    dpzo_trainer_free(tr);
    cluster_sets_free(&sets);
}

/* ---- the ledger of every private algorithm ---------------------------------------- */

static void test_ledger_equals_accountant(void **state)
{
    dpzo_ctx *ctx = *state;
    cluster_sets sets = cluster_pair(240, 60, 8, 3, 0.3, 3, 4);
    const dpzo_algorithm algs[] = {DPZO_ALG_DPZERO, DPZO_ALG_DPZOSO, DPZO_ALG_DPZOPO,
                                   DPZO_ALG_PAZO_M, DPZO_ALG_PAZO_P, DPZO_ALG_PAZO_S,
                                   DPZO_ALG_DPMD};
    const char *prof = TMP "/alg_ledger_profile.json";
    for (size_t a = 0; a < sizeof algs / sizeof *algs; a++) {
        int pazo = algs[a] >= DPZO_ALG_PAZO_M;
        double n = pazo ? 200.0 : 240.0, q = 20.0 / n;
        double sigma = write_profile(ctx, prof, q, 96, 2.0);
        dpzo_train_config c = base_config(algs[a], "mlp:4", 96, 20.0, 0.01);
        set_private(&c, prof, 2.0);
        if (pazo) {
            c.public_size = 40;
            c.pub.batch_size = 8;
        } else {
            c.queries = 2;
        }
        dpzo_trainer *tr;
        assert_ok(ctx, dpzo_trainer_create(ctx, &c, &sets.tr, &sets.te, &tr));
        assert_ok(ctx, dpzo_trainer_run(ctx, tr, 48, NULL, NULL)); /* CSPRNG noise */
        dpzo_train_report r;
        dpzo_trainer_report_now(tr, &r);
        /* the equivalent event: 48 Poisson-subsampled Gaussian releases of multiplier sigma */
        dpzo_event *e = dpzo_event_self_composed(
            ctx, dpzo_event_poisson_sampled(ctx, q, dpzo_event_gaussian(ctx, sigma)), 48);
        dpzo_dp_result res;
        dpzo_rdp_options ro = dpzo_rdp_options_default();
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, &ro, &res));
        dpzo_event_free(e);
        assert_true(r.epsilon_spent == res.epsilon);
        unsigned per = algs[a] == DPZO_ALG_PAZO_S ? 4 : pazo ? 1 : 2;
        assert_int_equal(dpzo_train_queries_per_step(&c), per);
        /* dpmd releases one vector of P coordinates a step (dpsgd's release) */
        size_t draws = algs[a] == DPZO_ALG_DPMD ? tr->P : per;
        assert_int_equal(dpzo_zo_noise_draws(zo_of(tr)), 48 * draws);
        dpzo_trainer_free(tr);
    }
    cluster_sets_free(&sets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_schedule),
        cmocka_unit_test(test_dpzoso_is_staged_dpzero),
        cmocka_unit_test(test_masked_and_explicit_directions),
        cmocka_unit_test(test_estimator_expectation),
        cmocka_unit_test(test_prune_score_and_selection),
        cmocka_unit_test(test_zopo_strategies),
        cmocka_unit_test(test_span_basis),
        cmocka_unit_test(test_pazo_p_projection),
        cmocka_unit_test(test_pazo_s_selection),
        cmocka_unit_test(test_pazo_s_clip_shares),
        cmocka_unit_test(test_dpmd_step),
        cmocka_unit_test(test_ledger_equals_accountant),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
