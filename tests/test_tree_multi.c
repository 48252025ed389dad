/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_tree_multi.c: DP-FTRL's tree aggregation without restarts over several
 * participations (issue 30; Kairouz et al. 2021 arXiv v3, appendix D.2, Theorem D.3):
 * dpzo_tree_sensitivity_squared against an exhaustive search over participation patterns
 * (its own forest and node sums, written here from the definition), the published values
 * (TF Privacy's tree_aggregation_accountant_test and the Gboard notebook's 79), the witness
 * pattern, and the event through RDP (fast and certified) and PLD/PRV. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "internal.h"

/* ---- the exhaustive reference: nodes as [lo, hi) intervals of the forest ---- */
typedef struct {
    uint64_t lo, hi;
} node;

static size_t forest_nodes(uint64_t T, node *out)
{
    size_t n = 0;
    uint64_t offset = 0;
    for (int k = 63; k >= 0; k--) {
        if (!((T >> k) & 1))
            continue;
        /* a complete tree of 2^k leaves: its nodes are the aligned blocks of 2^l leaves */
        for (uint64_t size = (uint64_t)1 << k; size >= 1; size /= 2)
            for (uint64_t lo = 0; lo < ((uint64_t)1 << k); lo += size)
                out[n++] = (node){offset + lo, offset + lo + size};
        offset += (uint64_t)1 << k;
    }
    return n;
}

static uint64_t node_sum(const node *nodes, size_t nn, const uint64_t *pos, size_t np)
{
    uint64_t total = 0;
    for (size_t i = 0; i < nn; i++) {
        uint64_t c = 0;
        for (size_t j = 0; j < np; j++)
            c += pos[j] >= nodes[i].lo && pos[j] < nodes[i].hi;
        total += c * c;
    }
    return total;
}

static uint64_t brute(const node *nodes, size_t nn, uint64_t T, uint64_t E, uint64_t xi,
                      uint64_t *pos, size_t np, uint64_t next)
{
    uint64_t best = node_sum(nodes, nn, pos, np);
    if (np == E)
        return best;
    for (uint64_t p = next; p < T; p++) {
        pos[np] = p;
        uint64_t v = brute(nodes, nn, T, E, xi, pos, np + 1, p + xi + 1);
        best = v > best ? v : best;
    }
    return best;
}

static uint64_t zeta(dpzo_ctx *ctx, uint64_t T, uint64_t E, uint64_t xi, uint64_t *pos,
                     size_t *np)
{
    uint64_t z = 0;
    assert_ok(ctx, dpzo_tree_sensitivity_squared(ctx, T, E, xi, &z, pos, 64, np));
    return z;
}

/* every (T, E, xi) with T <= 24: the program equals the exhaustive maximum, and its
 * pattern is valid and attains it (its sum recomputed from the intervals) */
static void test_exhaustive(void **state)
{
    dpzo_ctx *ctx = *state;
    node *nodes = malloc(128 * sizeof *nodes);
    uint64_t pos[64], scratch[64];
    int checked = 0;
    for (uint64_t T = 0; T <= 24; T++)
        for (uint64_t E = 0; E <= 6; E++)
            for (uint64_t xi = 0; xi <= 9; xi++) {
                if (T > 16 && E > 4 && xi < 2)
                    continue; /* C(24, 6) patterns per case: enough below */
                size_t nn = forest_nodes(T, nodes), np = 99;
                uint64_t want = brute(nodes, nn, T, E, xi, scratch, 0, 0);
                uint64_t got = zeta(ctx, T, E, xi, pos, &np);
                if (got != want)
                    fail_msg("T %llu E %llu xi %llu: %llu, exhaustive %llu",
                             (unsigned long long)T, (unsigned long long)E,
                             (unsigned long long)xi, (unsigned long long)got,
                             (unsigned long long)want);
                assert_true(np <= E);
                for (size_t i = 0; i < np; i++)
                    assert_true(pos[i] < T && (i == 0 || pos[i] >= pos[i - 1] + xi + 1));
                assert_int_equal(node_sum(nodes, nn, pos, np), want);
                checked++;
            }
    assert_true(checked > 1500);
    free(nodes);
}

/* TF Privacy's tree_aggregation_accountant_test (facts: their expected values), and the
 * Gboard es-ES notebook's squared sensitivity (79: its printed zCDP 0.81 = 79 / 98) */
static void test_published(void **state)
{
    dpzo_ctx *ctx = *state;
    static const uint64_t toy[][4] = {/* E, xi, T, zeta */
                                      {1, 7, 8, 4}, {3, 3, 9, 11}, {3, 2, 7, 9}, {8, 2, 24, 88},
                                      {11, 0, 8, 120}, {19, 0, 8, 120}, {200, 0, 8, 120},
                                      {6, 313, 2000, 79}};
    uint64_t pos[64];
    size_t np;
    for (size_t i = 0; i < sizeof toy / sizeof toy[0]; i++)
        assert_int_equal(zeta(ctx, toy[i][2], toy[i][0], toy[i][1], pos, &np), toy[i][3]);
    /* a record in every step: every node full, sum over the trees of 2^d (2^(d+1) - 1);
     * twice with no gap: 2 + 4 (bit length - 1) */
    static const uint64_t every[] = {3, 8, 11, 19};
    for (size_t i = 0; i < 4; i++) {
        uint64_t T = every[i], want = 0;
        for (int d = 0; d < 64; d++)
            if ((T >> d) & 1)
                want += ((uint64_t)1 << d) * (((uint64_t)2 << d) - 1);
        assert_int_equal(zeta(ctx, T, T, 0, pos, &np), want);
        int bits = 0;
        for (uint64_t t = T; t; t >>= 1)
            bits++;
        assert_int_equal(zeta(ctx, T, 2, 0, pos, &np), 2 + 4 * (uint64_t)(bits - 1));
    }
    /* the same at 2^53 steps and one fewer (53 and 52 levels below the root): the trace
     * once walked every empty block node by node (the fuzzer's 10^13-step input timed out) */
    assert_int_equal(zeta(ctx, (uint64_t)1 << 53, 2, 0, pos, &np), 2 + 4 * 53);
    assert_int_equal(zeta(ctx, ((uint64_t)1 << 53) - 1, 2, 0, pos, &np), 2 + 4 * 52);
    assert_int_equal(pos[1], ((uint64_t)1 << 52) - 1); /* the last two of the largest tree */
}

/* T = 2^k, xi + 1 = 2^j, E = 2^(k - j): an aligned block of 2^l leaves holds at most
 * max(1, 2^(l - j)) participations, and steps 0, 2^j, 2 2^j, ... fill every block at every
 * level at once, so zeta* = E (j + 1) + sum_{l > j} 2^(k - l) 4^(l - j) (an independent
 * closed form, at sizes the exhaustive search cannot reach) */
static void test_spaced_closed_form(void **state)
{
    dpzo_ctx *ctx = *state;
    static const int kj[][2] = {{12, 3}, {16, 8}, {17, 11}, {10, 9}};
    for (size_t i = 0; i < sizeof kj / sizeof kj[0]; i++) {
        int k = kj[i][0], j = kj[i][1];
        uint64_t E = (uint64_t)1 << (k - j), want = E * (uint64_t)(j + 1);
        for (int l = j + 1; l <= k; l++)
            want += ((uint64_t)1 << (k - l)) << (2 * (l - j));
        uint64_t z = 0, *big = malloc(E * sizeof *big);
        size_t np = 0;
        assert_ok(ctx, dpzo_tree_sensitivity_squared(ctx, (uint64_t)1 << k, E,
                                                     ((uint64_t)1 << j) - 1, &z, big, E, &np));
        if (z != want)
            fail_msg("k %d j %d: %llu, closed form %llu", k, j, (unsigned long long)z,
                     (unsigned long long)want);
        assert_int_equal(np, E);
        free(big);
    }
}

/* more participations allowed, or a smaller separation, never lowers zeta*; a longer run
 * never lowers it either when the extra steps come as a new tree to the right */
static void test_monotone(void **state)
{
    dpzo_ctx *ctx = *state;
    uint64_t pos[64];
    size_t np;
    for (uint64_t T = 1; T <= 200; T += 13)
        for (uint64_t xi = 0; xi <= 40; xi += 7) {
            uint64_t prev = 0;
            for (uint64_t E = 1; E <= 8; E++) {
                uint64_t z = zeta(ctx, T, E, xi, pos, &np);
                assert_true(z >= prev);
                prev = z;
                if (xi > 0)
                    assert_true(zeta(ctx, T, E, xi - 1, pos, &np) >= z);
            }
        }
}

static void test_edges(void **state)
{
    dpzo_ctx *ctx = *state;
    uint64_t pos[64], z = 7;
    size_t np = 7;
    assert_int_equal(zeta(ctx, 0, 5, 3, pos, &np), 0);
    assert_int_equal(np, 0);
    assert_int_equal(zeta(ctx, 100, 0, 3, pos, &np), 0);
    /* xi >= T: one participation, the longest root path (bit length of T) */
    assert_int_equal(zeta(ctx, 1000, 5, 5000, pos, &np), 10);
    assert_int_equal(zeta(ctx, UINT64_MAX, 5, UINT64_MAX, pos, &np), 64);
    assert_int_equal(np, 1);
    /* without room for the pattern, or NULL out */
    assert_int_equal(dpzo_tree_sensitivity_squared(ctx, 100, 5, 3, &z, pos, 2, &np), DPZO_EINVAL);
    assert_int_equal(dpzo_tree_sensitivity_squared(ctx, 100, 5, 3, NULL, NULL, 0, NULL),
                     DPZO_EINVAL);
    assert_ok(ctx, dpzo_tree_sensitivity_squared(ctx, 100, 5, 3, &z, NULL, 0, NULL));
    assert_int_equal(z, zeta(ctx, 100, 5, 3, pos, &np));
    /* beyond the tables' limits: refused, saying so */
    assert_int_equal(dpzo_tree_sensitivity_squared(ctx, 1u << 30, 10, 1u << 20, &z, NULL, 0,
                                                   NULL), DPZO_EUNSUPPORTED);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "beyond dpzo's limits"));
    assert_null(dpzo_event_tree_aggregation_multi_epoch(ctx, -1.0, 10, 2, 1));
    assert_null(dpzo_event_tree_aggregation_multi_epoch(ctx, NAN, 10, 2, 1));
    assert_null(dpzo_event_tree_aggregation_multi_epoch(ctx, 1.0, 1u << 30, 10, 1u << 20));
}

/* the event: RDP alpha zeta / (2 sigma^2), certified; PLD/PRV those of the Gaussian of
 * noise sigma / sqrt(zeta); nothing released for E = 0 */
static void test_event(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_event *e = dpzo_event_tree_aggregation_multi_epoch(ctx, 7.0, 2000, 6, 313);
    assert_non_null(e);
    char d[200];
    dpzo_event_describe(e, d, sizeof d);
    assert_string_equal(d, "tree_aggregation(sigma=7, steps=2000, max_participations=6, "
                           "min_separation=313, sensitivity_squared=79)");
    assert_int_equal(dpzo_event_get_kind(e), DPZO_EVENT_TREE_AGGREGATION);
    double orders[3] = {1.5, 12.0, 1000.0}, f[3];
    dpzo_bound b[3];
    assert_ok(ctx, dpzo_event_rdp(ctx, e, orders, 3, f));
    assert_ok(ctx, dpzo_event_rdp_certified(ctx, e, orders, 3, b));
    for (int i = 0; i < 3; i++) {
        double want = orders[i] * 79.0 / 98.0;
        assert_rel(f[i], want, 1e-15);
        assert_true(b[i].lower <= want && b[i].upper >= want);
        assert_true(b[i].upper - b[i].lower <= 1e-14 * want);
    }
    /* (8.90, 1e-10) printed by the notebook (RDP at TF Privacy's orders): dpzo's RDP answer
     * at most that, and the exact Gaussian (the PLD's interval) below it */
    dpzo_dp_result rr;
    assert_ok(ctx, dpzo_event_epsilon(ctx, e, 1e-10, NULL, &rr));
    assert_true(rr.epsilon <= 8.905);
    dpzo_pld_options o;
    dpzo_pld_options_default(&o);
    dpzo_pld_result p, g;
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-10, &o, &p));
    dpzo_event *gauss = dpzo_event_gaussian(ctx, dpzo__tree_gaussian_sigma(e));
    assert_ok(ctx, dpzo_pld_epsilon(ctx, gauss, 1e-10, &o, &g));
    assert_true(p.epsilon_lower <= p.epsilon && p.epsilon <= rr.epsilon);
    assert_rel(p.epsilon, g.epsilon, 1e-12);
    /* mu-GDP, mu = sqrt(79) / 7: epsilon 8.52606... (exact Gaussian hockey stick, mpmath) */
    assert_true(p.epsilon_lower <= 8.5261 && p.epsilon >= 8.5260);
    dpzo_event_free(gauss);
    dpzo_event_free(e);
    /* nothing released */
    e = dpzo_event_tree_aggregation_multi_epoch(ctx, 1.0, 2000, 0, 3);
    assert_non_null(e);
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-10, &o, &p));
    assert_true(p.epsilon == 0.0);
    dpzo_event_free(e);
    /* no noise */
    e = dpzo_event_tree_aggregation_multi_epoch(ctx, 0.0, 20, 2, 3);
    assert_ok(ctx, dpzo_pld_epsilon(ctx, e, 1e-10, &o, &p));
    assert_true(isinf(p.epsilon));
    dpzo_event_free(e);
    /* not under a sampler */
    e = dpzo_event_poisson_sampled(ctx, 0.5, dpzo_event_tree_aggregation_multi_epoch(ctx, 1.0,
                                                                                    20, 2, 3));
    assert_non_null(e); /* built; refused when accounted, by every accountant */
    assert_int_equal(dpzo_event_epsilon(ctx, e, 1e-5, NULL, &rr), DPZO_EUNSUPPORTED);
    assert_int_equal(dpzo_pld_epsilon(ctx, e, 1e-5, &o, &p), DPZO_EUNSUPPORTED);
    dpzo_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exhaustive, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_published, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_spaced_closed_form, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_monotone, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_edges, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_event, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
