/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_pld_tree.c (issue 20, item 4): many distinct steps composed in a tree of
 * short transforms (accountant/pld/pld_tree.c) against the flat composition (one full-length
 * transform per distinct step, pld_compose.c), which is proven on its own:
 *  - the same discretised steps composed both ways, at two tilts: the estimates (the
 *    pessimistic composition, no error terms) agree to 1e-9 in epsilon and 1e-7
 *    relative in delta, and the tree's proven interval lies within the flat one widened
 *    by a quarter of its width and 2% of a grid step on each side, at the tilt of the
 *    pair (3, 5; 6, 12 for the add direction) that suits each delta best (both are
 *    sound; the tree's rounding term is larger at a few hundred steps, smaller at a
 *    thousand);
 *  - cases: 60 distinct Poisson-sampled Gaussians (sigma = linspace(1, 2, n), q = 0.01)
 *    at grid 1e-4, remove direction; 200 at grid 1e-3, add direction; 300 at 1e-3 with
 *    the pessimistic side alone (the PRV accountant's composition); 12 distinct steps
 *    of 25 steps each (powers per frequency inside the tree); 40 distinct
 *    without-replacement Gaussians (the symmetric pair);
 *  - the tree's misplaced mass is below 1e-8 (about 2 tau_tilt = 2e-12 where no window is
 *    capped by its parent's; 0 where every window covers its support);
 *  - the public accountant on n = 100 and n = 1000 distinct steps (grid 1e-3; the tree is
 *    chosen at 1000: its FFT points, both directions, below one full-length transform a
 *    step of one direction) (delta 1e-6) brackets dp_accounting 0.6.0's PLD epsilon at
 *    the same grid (its pessimistic connect-the-dots value, from
 *    tests/ref/make_pld_tree_anchors.py: ref/pld_tree_anchors.h), and its estimate is
 *    within 2 grid steps of it. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "pld_internal.h"
#include "ref/pld_tree_anchors.h"

static int setup(void **state)
{
    *state = dpzo_ctx_new();
    return *state == NULL;
}

static int teardown(void **state)
{
    dpzo_ctx_free(*state);
    return 0;
}

typedef struct {
    dpzo__pld_base base;
    dpzo__pld_pair pair;
    size_t n;
    uint64_t count;
    double q, d;
    int want_opt;
    double lambdas[2]; /* the tilts tried */
} tcase;

static double scale_at(const tcase *c, size_t i)
{
    double s = 1.0 + (double)i / (double)(c->n - 1); /* linspace(1, 2, n) */
    return c->base == DPZO__PLD_LAPLACE ? 2.0 * s : s;
}

static void compare(dpzo_ctx *ctx, const tcase *c)
{
    dpzo__pld_pmf *p = calloc(c->n, sizeof *p);
    dpzo__pld_term *t = calloc(c->n, sizeof *t);
    assert_non_null(p);
    assert_non_null(t);
    for (size_t i = 0; i < c->n; i++) {
        dpzo__pld_source s = {c->base, c->pair, scale_at(c, i), c->q, NULL, 0, NULL, 0.0, 0.0, 0.0};
        assert_ok(ctx, dpzo__pld_discretize(ctx, &s, c->d, 1e-16, c->want_opt, (size_t)1 << 24,
                                            &p[i]));
        t[i].pmf = &p[i];
        t[i].count = c->count;
    }
    /* compositions at a ladder of tilts, flat [0] and tree [1]; each delta is compared at
     * the tilt whose flat interval is narrowest (the accountant centres its tilt on the
     * answer; far from it both intervals are loose and their rounding terms dominate) */
    enum { NT = 2 };
    const double *lambdas = c->lambdas;
    dpzo__pld_ws ws[NT][2];
    dpzo__pld_composed r[NT][2];
    memset(ws, 0, sizeof ws);
    for (int li = 0; li < NT; li++) {
        unsigned long long work[2];
        for (int mode = 0; mode < 2; mode++) {
            dpzo__pld_compose_opts o = {lambdas[li], 1e-12, (size_t)1 << 31, c->want_opt,
                                        mode == 0 ? 1 : 2, 0};
            unsigned long long before = dpzo__pld_fft_points;
            assert_ok(ctx, dpzo__pld_compose(ctx, t, c->n, c->d, &o, &ws[li][mode], &r[li][mode]));
            work[mode] = dpzo__pld_fft_points - before;
        }
        const dpzo__pld_composed *F = &r[li][0], *T = &r[li][1];
        print_message("n %zu lambda %g: N %zu, FFT points flat %llu tree %llu; err %.3g / %.3g, "
                      "misplaced %.3g\n",
                      c->n, lambdas[li], F->N, work[0], work[1], F->err[0], T->err[0],
                      T->misplaced[0]);
        assert_true(F->N == T->N && F->w0 == T->w0);
        /* forced here; the accountant takes the tree only where it halves the work */
        assert_true(work[1] < work[0] * 5 / 4);
        assert_true(F->misplaced[0] == 0.0);
        assert_true(T->misplaced[0] >= 0.0 && T->misplaced[0] < 1e-8);
        if (c->want_opt)
            assert_true(T->misplaced[1] >= 0.0 && T->misplaced[1] < 1e-8);
    }
    const int lo_side = c->want_opt ? 1 : 3;
    const double deltas[3] = {1e-4, 1e-6, 1e-8};
    int compared = 0;
    for (int k = 0; k < 3; k++) {
        int best = -1;
        double bw = INFINITY;
        for (int li = 0; li < NT; li++) {
            int i0, i1;
            double h = dpzo__pld_epsilon_for(&r[li][0], 0, deltas[k], &i0);
            double l = dpzo__pld_epsilon_for(&r[li][0], lo_side, deltas[k], &i1);
            if (i0 && i1 && h - l < bw)
                bw = h - l, best = li;
        }
        if (best < 0) {
            int i0, i1;
            print_message("  delta %g: not resolved (flat at tilt 5: %g, %g)\n", deltas[k],
                          dpzo__pld_epsilon_for(&r[1][0], 0, deltas[k], &i0),
                          dpzo__pld_epsilon_for(&r[1][0], lo_side, deltas[k], &i1));
            continue;
        }
        const dpzo__pld_composed *F = &r[best][0], *T = &r[best][1];
        int in[6];
        double fh = dpzo__pld_epsilon_for(F, 0, deltas[k], &in[0]);
        double fe = dpzo__pld_epsilon_for(F, 2, deltas[k], &in[1]);
        double fl = dpzo__pld_epsilon_for(F, lo_side, deltas[k], &in[2]);
        double th = dpzo__pld_epsilon_for(T, 0, deltas[k], &in[3]);
        double te = dpzo__pld_epsilon_for(T, 2, deltas[k], &in[4]);
        double tl = dpzo__pld_epsilon_for(T, lo_side, deltas[k], &in[5]);
        double w = fh - fl;
        print_message("  delta %g (tilt %g): flat [%.10f, %.10f] est %.10f, tree [%.10f, %.10f] "
                      "est %.10f\n",
                      deltas[k], lambdas[best], fl, fh, fe, tl, th, te);
        assert_true(in[1] && in[3] && in[4] && in[5]);
        assert_true(fabs(te - fe) <= 1e-9);
        assert_true(tl <= te && te <= th);
        /* within the flat interval widened by a quarter of its width and 2% of the grid step a
         * side (the tree's rounding term is larger where the tree is not chosen: a few
         * hundred steps) */
        assert_true(th <= fh + 0.25 * w + 0.02 * c->d);
        assert_true(tl >= fl - 0.25 * w - 0.02 * c->d);
        /* delta at the answer: the same comparison */
        double dfh = dpzo__pld_delta_at(F, 0, fe), dfe = dpzo__pld_delta_at(F, 2, fe);
        double dfl = dpzo__pld_delta_at(F, lo_side, fe);
        double dth = dpzo__pld_delta_at(T, 0, fe), dte = dpzo__pld_delta_at(T, 2, fe);
        double dtl = dpzo__pld_delta_at(T, lo_side, fe);
        double dw = dfh - dfl;
        assert_true(fabs(dte - dfe) <= 1e-6 * dfe);
        assert_true(dtl <= dte && dte <= dth);
        assert_true(dth <= dfh + 0.25 * dw + 1e-3 * dfe && dtl >= dfl - 0.25 * dw - 1e-3 * dfe);
        compared++;
    }
    assert_true(compared >= 2);
    for (int li = 0; li < NT; li++)
        for (int mode = 0; mode < 2; mode++) {
            dpzo__pld_composed_free(&r[li][mode]);
            dpzo__pld_ws_free(&ws[li][mode]);
        }
    for (size_t i = 0; i < c->n; i++)
        dpzo__pld_pmf_free(&p[i]);
    free(p);
    free(t);
}

static void test_remove_fine(void **state)
{
    tcase c = {DPZO__PLD_GAUSSIAN, DPZO__PLD_REMOVE, 60, 1, 0.01, 1e-4, 1, {3.0, 5.0}};
    compare(*state, &c);
}

static void test_add(void **state)
{
    tcase c = {DPZO__PLD_GAUSSIAN, DPZO__PLD_ADD, 200, 1, 0.01, 1e-3, 1, {6.0, 12.0}};
    compare(*state, &c);
}

static void test_pessimistic_only(void **state)
{
    tcase c = {DPZO__PLD_GAUSSIAN, DPZO__PLD_REMOVE, 300, 1, 0.01, 1e-3, 0, {3.0, 5.0}};
    compare(*state, &c);
}

static void test_counts(void **state)
{
    tcase c = {DPZO__PLD_GAUSSIAN, DPZO__PLD_REMOVE, 12, 25, 0.02, 1e-3, 1, {3.0, 5.0}};
    compare(*state, &c);
}

static void test_wor(void **state)
{
    tcase c = {DPZO__PLD_GAUSSIAN, DPZO__PLD_WOR, 40, 1, 0.05, 1e-3, 1, {3.0, 5.0}};
    compare(*state, &c);
}

/* dp_accounting 0.6.0: PLDAccountant(value_discretization_interval=d) on the ComposedDpEvent
 * of PoissonSampledDpEvent(0.01, GaussianDpEvent(s)) for s in numpy.linspace(1, 2, n),
 * get_epsilon(1e-6) (tests/ref/make_pld_tree_anchors.py, run 2026-11-27) */
static void test_against_dp_accounting(void **state)
{
    dpzo_ctx *ctx = *state;
    const struct {
        size_t n;
        double d, want;
    } rows[2] = {{100, 1e-3, DP_ACC_100}, {1000, 1e-3, DP_ACC_1000}};
    for (int r = 0; r < 2; r++) {
        size_t n = rows[r].n;
        dpzo_phase *ph = calloc(n, sizeof *ph);
        assert_non_null(ph);
        for (size_t i = 0; i < n; i++) {
            ph[i].noise_multiplier = 1.0 + (double)i / (double)(n - 1);
            ph[i].sampling_rate = 0.01;
            ph[i].steps = 1;
        }
        dpzo_event *e = dpzo_event_from_schedule(ctx, ph, n);
        assert_non_null(e);
        dpzo_pld_options o;
        dpzo_pld_options_default(&o);
        o.grid = rows[r].d;
        dpzo_pld_result res;
        unsigned long long before = dpzo__pld_fft_points;
        assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-6, &o, &res));
        unsigned long long work = dpzo__pld_fft_points - before;
        print_message("n %zu grid %g: [%.10f, %.10f] est %.10f, dp_accounting %.10f; FFT "
                      "points %llu (one per step at the largest length: %llu)\n",
                      n, rows[r].d, res.epsilon_lower, res.epsilon_upper, res.epsilon_estimate,
                      rows[r].want, work, (unsigned long long)(res.fft_size * n));
        assert_false(res.fallback);
        if (n >= 1000)
            assert_true(work < (unsigned long long)(res.fft_size * n));
        assert_true(res.epsilon_lower <= rows[r].want && rows[r].want <= res.epsilon_upper);
        assert_true(fabs(res.epsilon_estimate - rows[r].want) <= 2.0 * rows[r].d);
        dpzo_event_free(e);
        free(ph);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remove_fine), cmocka_unit_test(test_add),
        cmocka_unit_test(test_pessimistic_only), cmocka_unit_test(test_counts),
        cmocka_unit_test(test_wor),
        cmocka_unit_test(test_against_dp_accounting),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
