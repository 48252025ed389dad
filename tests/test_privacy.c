/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_privacy.c: the trainer's privacy object (trainer/privacy.c): profile checks
 * against the run's plan, the ledger (against the accountant called directly), clipping and
 * the CSPRNG noise's scale.
 *
 * Oracles: dpzo_event_epsilon / dpzo_lmo_epsilon called independently for the same number
 * of steps, exact clipping arithmetic, sample moments within 5 standard errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/convert.h"
#include "dpzo/event.h"
#include "dpzo/lmo.h"
#include "dpzo/pld.h"
#include "dpzo/trainer.h"

static char path_g[512], path_w[512], path_l[512], path_bad[512];

static dpzo_privacy_plan plan_default(void)
{
    dpzo_privacy_plan pl = {DPZO_BATCH_POISSON, 100.0, 10000, 1000, 1, 1.0, 0, 0};
    return pl;
}

static int setup(void **state)
{
    dpzo_ctx *ctx = dpzo_ctx_new();
    *state = ctx;
    snprintf(path_g, sizeof path_g, "%s/privacy-gauss.json", DPZO_TEST_TMP);
    snprintf(path_w, sizeof path_w, "%s/privacy-wor.json", DPZO_TEST_TMP);
    snprintf(path_l, sizeof path_l, "%s/privacy-lmo.json", DPZO_TEST_TMP);
    snprintf(path_bad, sizeof path_bad, "%s/privacy-bad.json", DPZO_TEST_TMP);
    dpzo_profile p;
    dpzo_profile_gaussian_spec g = {0};
    g.epsilon = 3.0;
    g.delta = 1e-5;
    g.sampling_rate = 0.01;
    g.steps = 1000;
    g.created = "2026-11-21T00:00:00Z";
    if (dpzo_profile_gaussian(ctx, &g, &p) || dpzo_profile_write_file(ctx, &p, path_g))
        return 1;
    /* the same guarantee claimed lower than it is: must not verify */
    p.epsilon *= 0.9;
    if (dpzo_profile_write_file(ctx, &p, path_bad))
        return 1;
    dpzo_profile_free(&p);
    g.sampling = "wor";
    g.batch_size = 100;
    g.dataset_size = 10000;
    g.sensitivity = 2.0;
    if (dpzo_profile_gaussian(ctx, &g, &p) || dpzo_profile_write_file(ctx, &p, path_w))
        return 1;
    dpzo_profile_free(&p);
    /* an LMO profile accounted by the RDP accountant */
    dpzo_profile_init(&p);
    p.kind = DPZO_NOISE_LMO;
    p.lmo = (dpzo_lmo){0.3, 1, 0.5, 0.4, 5, 0.4, 1, 2};
    p.sensitivity = 1.0;
    strcpy(p.clip, "scalar");
    strcpy(p.accountant, "rdp");
    strcpy(p.bound, "best");
    strcpy(p.sampling, "poisson");
    p.sampling_rate = 0.01;
    p.steps = 200;
    p.delta = 1e-5;
    strcpy(p.adjacency, "add-remove");
    strcpy(p.epsilon_bound, "proven-upper");
    strcpy(p.command, "test_privacy");
    strcpy(p.created, "2026-11-21T00:00:00Z");
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    o.sampling = DPZO_LMO_SAMPLING_POISSON;
    o.q = 0.01;
    o.steps = 200;
    o.delta = 1e-5;
    dpzo_lmo_account_result r;
    if (dpzo_lmo_epsilon(ctx, &p.lmo, &o, &r))
        return 1;
    p.epsilon = r.epsilon;
    p.eps0 = r.eps0;
    int rc = dpzo_profile_write_file(ctx, &p, path_l) != DPZO_OK;
    dpzo_profile_free(&p);
    return rc;
}

static int teardown(void **state)
{
    dpzo_ctx_free(*state);
    remove(path_g);
    remove(path_w);
    remove(path_l);
    remove(path_bad);
    return 0;
}

/* The ledger agrees with the accountant at its table points, is an upper bound between
 * them, is monotone, and ends at most at the budget. */
static void test_ledger_gaussian(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_privacy_plan pl = plan_default();
    dpzo_privacy *pv;
    assert_ok(ctx, dpzo_privacy_open(ctx, path_g, &pl, &pv));
    const dpzo_profile *p = dpzo_privacy_profile(pv);
    assert_true(dpzo_privacy_budget(pv) == p->epsilon && p->epsilon <= 3.0);
    assert_true(dpzo_privacy_delta(pv) == 1e-5);
    assert_true(dpzo_privacy_epsilon_after(pv, 0) == 0.0);
    double prev = 0.0;
    for (uint64_t t = 1; t <= 1000; t++) {
        double e = dpzo_privacy_epsilon_after(pv, t);
        assert_true(e >= prev && e <= dpzo_privacy_budget(pv));
        prev = e;
    }
    assert_true(isinf(dpzo_privacy_epsilon_after(pv, 1001)));
    /* independently: the accountant at t = 500 (a table point: 1000 * 24 / 48) and t = 499 */
    const uint64_t ts[2] = {500, 499};
    for (int k = 0; k < 2; k++) {
        dpzo_event *e = dpzo_event_self_composed(
            ctx, dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_gaussian(ctx, p->noise_multiplier)),
            ts[k]);
        dpzo_dp_result r;
        dpzo_rdp_options ro = dpzo_rdp_options_default();
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, &ro, &r));
        dpzo_event_free(e);
        if (k == 0)
            assert_true(dpzo_privacy_epsilon_after(pv, 500) == r.epsilon);
        else
            assert_true(dpzo_privacy_epsilon_after(pv, 499) >= r.epsilon);
    }
    /* half the steps spend about 0.80 of the budget (2.405 of 3.000) */
    assert_true(dpzo_privacy_epsilon_after(pv, 500) < 0.85 * dpzo_privacy_budget(pv));
    dpzo_privacy_free(pv);
}

/* A PLD profile's noise is below what RDP needs for the budget: its ledger takes the
 * certified PLD upper end too, at every third table point (1000 steps in 48 points:
 * t_3 = 63, t_6 = 125, ...), and each point between takes the next such value. */
static void test_ledger_tight(void **state)
{
    dpzo_ctx *ctx = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/privacy-pld.json", DPZO_TEST_TMP);
    dpzo_profile_gaussian_spec g = {0};
    g.epsilon = 3.0;
    g.delta = 1e-5;
    g.accountant = "pld";
    g.sampling_rate = 0.01;
    g.steps = 1000;
    g.created = "2026-11-21T00:00:00Z";
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &g, &p));
    assert_ok(ctx, dpzo_profile_write_file(ctx, &p, path));
    dpzo_privacy_plan pl = plan_default();
    dpzo_privacy *pv;
    assert_ok(ctx, dpzo_privacy_open(ctx, path, &pl, &pv));
    double rdp[2], up[2], low[2];
    const uint64_t ts[2] = {63, 21};
    for (int k = 0; k < 2; k++) {
        dpzo_event *e = dpzo_event_self_composed(
            ctx, dpzo_event_poisson_sampled(ctx, 0.01, dpzo_event_gaussian(ctx, p.noise_multiplier)),
            ts[k]);
        dpzo_dp_result r;
        dpzo_rdp_options ro = dpzo_rdp_options_default();
        assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-5, &ro, &r));
        dpzo_pld_result pr;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-5, NULL, &pr));
        dpzo_event_free(e);
        rdp[k] = r.epsilon;
        up[k] = pr.epsilon_upper;
        low[k] = pr.epsilon_lower;
    }
    /* at a PLD point: the smaller proven bound, which here is PLD's */
    assert_true(up[0] < rdp[0]);
    assert_true(dpzo_privacy_epsilon_after(pv, 63) == fmin(rdp[0], up[0]));
    /* before it: an upper bound (at least PLD's own lower end), below RDP's own bound */
    double e21 = dpzo_privacy_epsilon_after(pv, 21);
    assert_true(e21 >= low[1] && e21 <= up[0] && e21 < rdp[1]);
    /* a first step spends well under the budget */
    assert_true(dpzo_privacy_epsilon_after(pv, 1) < 0.8 * dpzo_privacy_budget(pv));
    double prev = 0.0;
    for (uint64_t t = 1; t <= 1000; t++) {
        double e = dpzo_privacy_epsilon_after(pv, t);
        assert_true(e >= prev && e <= dpzo_privacy_budget(pv));
        prev = e;
    }
    dpzo_privacy_free(pv);
    dpzo_profile_free(&p);
    remove(path);
}

static void expect_open_fails(dpzo_ctx *ctx, const char *path, const dpzo_privacy_plan *pl,
                              dpzo_status want, const char *needle)
{
    dpzo_privacy *pv = (dpzo_privacy *)1;
    dpzo_status st = dpzo_privacy_open(ctx, path, pl, &pv);
    if (st != want || strstr(dpzo_ctx_errmsg(ctx), needle) == NULL)
        fail_msg("got %d \"%s\", expected %d with \"%s\"", (int)st, dpzo_ctx_errmsg(ctx),
                 (int)want, needle);
    assert_null(pv);
}

static void test_plan_checks(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_privacy_plan pl = plan_default();
    pl.steps = 2000;
    expect_open_fails(ctx, path_g, &pl, DPZO_EINFEASIBLE, "exceed its budget");
    pl = plan_default();
    pl.batch_size = 200; /* q = 0.02 > 0.01 */
    expect_open_fails(ctx, path_g, &pl, DPZO_EINVAL, "samples at rate");
    pl = plan_default();
    pl.batch_size = 50; /* a smaller rate is covered */
    dpzo_privacy *pv;
    assert_ok(ctx, dpzo_privacy_open(ctx, path_g, &pl, &pv));
    dpzo_privacy_free(pv);
    pl = plan_default();
    pl.clip = 0.5;
    expect_open_fails(ctx, path_g, &pl, DPZO_EINVAL, "sensitivity");
    pl = plan_default();
    pl.batching = DPZO_BATCH_SHUFFLE;
    expect_open_fails(ctx, path_g, &pl, DPZO_EINVAL, "without replacement");
    /* shuffled batches: the wor profile with sensitivity 2C */
    assert_ok(ctx, dpzo_privacy_open(ctx, path_w, &pl, &pv));
    assert_true(dpzo_privacy_epsilon_after(pv, 1000) <= dpzo_privacy_budget(pv));
    dpzo_privacy_free(pv);
    pl.batching = DPZO_BATCH_POISSON;
    expect_open_fails(ctx, path_w, &pl, DPZO_EINVAL, "Poisson");
    pl = plan_default();
    expect_open_fails(ctx, path_bad, &pl, DPZO_EINVAL, "does not verify");
    expect_open_fails(ctx, "/nonexistent/profile.json", &pl, DPZO_EPARSE, "cannot open");
    pl.vector = 1;
    pl.steps = 200;
    expect_open_fails(ctx, path_l, &pl, DPZO_EINVAL, "gaussian profile");
    pl.vector = 0;
    pl.adaptive = 1; /* PAZO-S: adaptive parts compose as Gaussians only */
    expect_open_fails(ctx, path_l, &pl, DPZO_EINVAL, "needs a gaussian profile");
    pl.adaptive = 0;
    pl.queries = 2;
    expect_open_fails(ctx, path_l, &pl, DPZO_EINVAL, "clip \"l1\"");
    pl.queries = 0;
    expect_open_fails(ctx, path_g, &pl, DPZO_EINVAL, "at least one query");
}

static void test_ledger_lmo(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_privacy_plan pl = plan_default();
    pl.steps = 200;
    dpzo_privacy *pv;
    assert_ok(ctx, dpzo_privacy_open(ctx, path_l, &pl, &pv));
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    o.sampling = DPZO_LMO_SAMPLING_POISSON;
    o.q = 0.01;
    o.steps = 100; /* a table point: 200 * 24 / 48 */
    o.delta = 1e-5;
    dpzo_lmo_account_result r;
    assert_ok(ctx, dpzo_lmo_epsilon(ctx, &dpzo_privacy_profile(pv)->lmo, &o, &r));
    assert_true(dpzo_privacy_epsilon_after(pv, 100) == r.epsilon);
    assert_true(dpzo_privacy_epsilon_after(pv, 200) == dpzo_privacy_budget(pv));
    /* LMO noise: sample mean |X| of C X against E|X| = E[1/Y] */
    const size_t n = 100000;
    double *x = malloc(n * sizeof *x), s = 0.0, s2 = 0.0;
    assert_ok(ctx, dpzo_privacy_noise(ctx, pv, x, n));
    for (size_t i = 0; i < n; i++) {
        s += fabs(x[i]);
        s2 += x[i] * x[i];
    }
    dpzo_lmo_stats st;
    assert_ok(ctx, dpzo_lmo_stats_compute(ctx, &dpzo_privacy_profile(pv)->lmo, 0.9, &st));
    double mean = s / n, sd = sqrt(s2 / n - mean * mean);
    assert_true(fabs(mean - st.mean_abs) < 5.0 * sd / sqrt((double)n));
    free(x);
    /* L1 clipping of an LMO scalar */
    double v[1] = {-3.0};
    assert_true(dpzo_privacy_clip(pv, v, 1) < 1.0);
    assert_true(v[0] <= -1.0 + 1e-9 && v[0] >= -1.0);
    dpzo_privacy_free(pv);
}

static void test_clip_and_noise_gaussian(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_privacy_plan pl = plan_default();
    dpzo_privacy *pv;
    assert_ok(ctx, dpzo_privacy_open(ctx, path_g, &pl, &pv));
    double v[2] = {3.0, 4.0};
    double f = dpzo_privacy_clip(pv, v, 2);
    assert_true(fabs(f - 0.2) < 1e-11);
    assert_true(sqrt(v[0] * v[0] + v[1] * v[1]) <= 1.0);
    assert_true(fabs(v[0] - 0.6) < 1e-11 && fabs(v[1] - 0.8) < 1e-11);
    double w[2] = {0.3, -0.4};
    assert_true(dpzo_privacy_clip(pv, w, 2) == 1.0 && w[0] == 0.3 && w[1] == -0.4);
    double bad[2] = {NAN, 1.0};
    assert_true(dpzo_privacy_clip(pv, bad, 2) == 0.0 && bad[0] == 0.0 && bad[1] == 0.0);
    float badf[2] = {INFINITY, 1.0f};
    assert_true(dpzo_privacy_clip_float(pv, badf, 2) == 0.0 && badf[0] == 0.0f);
    /* a part with share 1/4 of C = 1: its L2 norm at most 1/2 */
    double part[2] = {3.0, 4.0};
    f = dpzo_privacy_clip_part(pv, part, 2, 0.25);
    assert_true(fabs(f - 0.1) < 1e-11 && fabs(part[0] - 0.3) < 1e-11);
    assert_true(sqrt(part[0] * part[0] + part[1] * part[1]) <= 0.5);
    double small[1] = {-0.2};
    assert_true(dpzo_privacy_clip_part(pv, small, 1, 0.25) == 1.0 && small[0] == -0.2);
    double misuse[1] = {0.2};
    assert_true(dpzo_privacy_clip_part(pv, misuse, 1, 1.5) == 0.0 && misuse[0] == 0.0);
    float g[3] = {30.0f, 40.0f, 0.0f};
    dpzo_privacy_clip_float(pv, g, 3);
    assert_true(sqrt((double)g[0] * g[0] + (double)g[1] * g[1]) <= 1.0);
    /* the noise: N(0, (sigma C)^2) */
    const size_t n = 200000;
    double *x = malloc(n * sizeof *x), s = 0.0, s2 = 0.0;
    assert_ok(ctx, dpzo_privacy_noise(ctx, pv, x, n));
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    double sigma = dpzo_privacy_profile(pv)->noise_multiplier, var = s2 / n;
    assert_true(fabs(s / n) < 5.0 * sigma / sqrt((double)n));
    /* Var of the sample variance of a normal: 2 sigma^4 / n */
    assert_true(fabs(var - sigma * sigma) < 5.0 * sigma * sigma * sqrt(2.0 / n));
    /* two calls never repeat (CSPRNG, not a seed) */
    double a, b;
    assert_ok(ctx, dpzo_privacy_noise(ctx, pv, &a, 1));
    assert_ok(ctx, dpzo_privacy_noise(ctx, pv, &b, 1));
    assert_true(a != b);
    free(x);
    dpzo_privacy_free(pv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ledger_gaussian),
        cmocka_unit_test(test_ledger_tight),
        cmocka_unit_test(test_plan_checks),
        cmocka_unit_test(test_ledger_lmo),
        cmocka_unit_test(test_clip_and_noise_gaussian),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
