/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/tree_sens.c: the squared L2 sensitivity of DP-FTRL's tree aggregation
 * without restarts over several participations (Kairouz, McMahan, Song, Thakkar, Thakurta,
 * Xu 2021, "Practical and Private (Deep) Learning without Sampling or Shuffling", arXiv
 * 2103.00039 v3, appendix D.2, Theorem D.3).
 *
 * The release: T leaves (steps), the forest of complete binary trees of T's binary digits
 * (largest first, left to right), every node the sum of the leaves under it, released with
 * Gaussian noise. A record takes part in at most E steps, any two of them with at least xi
 * steps between. Its contributions (each of norm at most 1, aligned in the worst case) move
 * a node by at most the number c_z of its participations under the node, so the release is
 * a Gaussian mechanism of squared sensitivity zeta* = max over patterns of sum_z c_z^2, and
 * the maximum is attained (the record's update points the same way at each of its steps).
 *
 * The dynamic program (the paper's, over segments of the forest): a block of M leaves
 * holding n participations, with the boundary offsets s (no participation among its first
 * s leaves) and e (the first xi - e leaves after it hold none either: the last
 * participation p satisfies p + xi + 1 <= M + e), has best value F(n, s, e), s and e in
 * [0, xi]. Two adjacent blocks combine over the offset t between them:
 *   F(n, s, e) = max over n1 + n2 = n, t of FL(n1, s, t) + FR(n2, t, e) (+ n^2 for a root),
 * which is exact: the left block's last participation and the right block's first are then
 * at least xi + 1 apart, and every valid pattern has such a t. Leaves: F(0, s, e) = 0 where
 * s <= 1 + e, F(1, 0, xi) = 1, else infeasible. The whole forest answers max_n F(n, 0, xi).
 *
 * Speed: FL is nondecreasing in t and FR nonincreasing (a looser constraint on one side, a
 * tighter on the other), so the maximum over t is attained at the t where FL(n1, s, .) steps
 * up; the values are small integers, so there are few such t. The tables are kept, and the
 * maximum is traced back to a pattern whose sum is recomputed from scratch: zeta* is then
 * both the program's value and a witnessed pattern's (the lower end of the accounting needs
 * it attained). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef int32_t val;
#define NEG (INT32_MIN / 4) /* infeasible; NEG + NEG and NEG + a value do not overflow */
#define MAX_VALUE ((uint64_t)1 << 29)

/* Table entries kept in all (int32) and the work (entry updates) allowed: 256 MiB and about
 * a minute on one core at the limits. */
#define MAX_ENTRIES ((uint64_t)1 << 26)
#define MAX_WORK ((uint64_t)1 << 36)

typedef struct {
    uint64_t E, W;    /* participations 0..E; offsets 0..W-1 (W = xi + 1) */
    val *pow2[64];    /* a complete tree of 2^k leaves; NULL where 2^k <= W (see small) */
    val *forest[64];  /* the trees of T's j-th and later set bits (high first), j < nbits - 1 */
    val *scratch[2];  /* small blocks written out for combine */
    uint64_t pow2_n[64], forest_n[64]; /* the most participations each block holds */
    int bits[64];     /* the set bits of T, high first */
    int nbits;
} tables;

/* n-major: a table of a block holding at most m participations is the first m + 1 slices */
static size_t at(const tables *tb, uint64_t n, uint64_t s, uint64_t e)
{
    return (size_t)((n * tb->W + s) * tb->W + e);
}

/* the most participations that fit in `len` steps, at most E */
static uint64_t fit(uint64_t len, uint64_t W, uint64_t E)
{
    uint64_t m = len == 0 ? 0 : 1 + (len - 1) / W;
    return m < E ? m : E;
}

/* A block of 2^k <= W = xi + 1 leaves holds at most one participation (two need xi + 2
 * leaves), which adds 1 at each of its k + 1 levels wherever it is: F(0, s, e) = 0 where
 * s <= 2^k + e, F(1, s, e) = k + 1 where s + xi + 1 <= 2^k + e (the participation at s). */
static int small(const tables *tb, int k)
{
    return ((uint64_t)1 << k) <= tb->W;
}

static void small_table(const tables *tb, int k, val *P)
{
    uint64_t M = (uint64_t)1 << k;
    for (uint64_t n = 0; n <= 1; n++)
        for (uint64_t s = 0; s < tb->W; s++)
            for (uint64_t e = 0; e < tb->W; e++)
                P[at(tb, n, s, e)] = n == 0 && s <= M + e ? 0
                                   : n == 1 && s + tb->W <= M + e ? (val)(k + 1) : NEG;
}

static const val *pow2_table(const tables *tb, int k, int which)
{
    if (!small(tb, k))
        return tb->pow2[k];
    small_table(tb, k, tb->scratch[which]);
    return tb->scratch[which];
}

static const val *forest_table(const tables *tb, int j, int which)
{
    return j == tb->nbits - 1 ? pow2_table(tb, tb->bits[j], which) : tb->forest[j];
}

/* C (at most nc participations) from L and R (at most nl, nr) */
static void combine(const tables *tb, const val *L, uint64_t nl, const val *R, uint64_t nr,
                    val *C, uint64_t nc, int root)
{
    uint64_t W = tb->W;
    size_t size = (size_t)((nc + 1) * W * W);
    for (size_t i = 0; i < size; i++)
        C[i] = NEG;
    for (uint64_t n1 = 0; n1 <= nl && n1 <= nc; n1++)
        for (uint64_t s = 0; s < W; s++) {
            const val *lrow = L + at(tb, n1, s, 0);
            val prev = NEG;
            for (uint64_t t = 0; t < W; t++) {
                val v = lrow[t];
                if (v <= prev)
                    continue; /* FR is nonincreasing in t: an earlier t was as good */
                prev = v;
                for (uint64_t n2 = 0; n2 <= nr && n1 + n2 <= nc; n2++) {
                    const val *rrow = R + at(tb, n2, t, 0);
                    if (rrow[W - 1] < 0)
                        continue; /* infeasible at the loosest end: at every end */
                    val *crow = C + at(tb, n1 + n2, s, 0);
                    for (uint64_t e = 0; e < W; e++) {
                        val x = v + rrow[e];
                        crow[e] = x > crow[e] ? x : crow[e];
                    }
                }
            }
        }
    for (uint64_t n = 0; n <= nc; n++)
        for (size_t i = at(tb, n, 0, 0); i < at(tb, n + 1, 0, 0); i++)
            C[i] = C[i] < 0 ? NEG : C[i] + (root ? (val)(n * n) : 0);
}

/* Trace F(n, s, e) of a block back to its participations (positions from `offset`). The
 * block is pow2[k] (j < 0) or forest j. Returns 0 when a split attaining it was found. */
static int trace(const tables *tb, int k, int j, uint64_t offset, uint64_t n, uint64_t s,
                 uint64_t e, uint64_t *pos, size_t *npos)
{
    if (j == tb->nbits - 1)
        k = tb->bits[j], j = -1;
    if (j < 0 && small(tb, k)) {
        uint64_t M = (uint64_t)1 << k;
        if (n == 0)
            return s <= M + e ? 0 : -1;
        if (n > 1 || s + tb->W > M + e)
            return -1;
        pos[(*npos)++] = offset + s;
        return 0;
    }
    const val *C, *L, *R;
    int root, kl, kr, jr;
    uint64_t nl, nr;
    if (j < 0) {
        C = tb->pow2[k];
        L = R = pow2_table(tb, k - 1, 0);
        nl = nr = tb->pow2_n[k - 1];
        root = 1, kl = kr = k - 1, jr = -1;
    } else {
        C = tb->forest[j];
        L = pow2_table(tb, tb->bits[j], 0);
        R = forest_table(tb, j + 1, 1);
        nl = tb->pow2_n[tb->bits[j]], nr = tb->forest_n[j + 1];
        root = 0, kl = tb->bits[j], kr = -1, jr = j + 1;
    }
    uint64_t left_size = (uint64_t)1 << kl;
    val want = C[at(tb, n, s, e)] - (root ? (val)(n * n) : 0);
    for (uint64_t n1 = n > nr ? n - nr : 0; n1 <= n && n1 <= nl; n1++)
        for (uint64_t t = 0; t < tb->W; t++) {
            val a = L[at(tb, n1, s, t)], b = R[at(tb, n - n1, t, e)];
            if (a >= 0 && b >= 0 && a + b == want) /* (the scratch is rewritten below) */
                return trace(tb, kl, -1, offset, n1, s, t, pos, npos)
                       || trace(tb, kr, jr, offset + left_size, n - n1, t, e, pos, npos);
        }
    return -1;
}

/* sum over the forest's nodes of (participations under the node)^2, from the positions */
static uint64_t pattern_sum(uint64_t T, const uint64_t *pos, size_t n)
{
    uint64_t total = 0, offset = 0;
    for (int k = 63; k >= 0; k--) {
        if (!((T >> k) & 1))
            continue;
        uint64_t size = (uint64_t)1 << k;
        for (int level = 0; level <= k; level++) {
            /* the positions are increasing: count runs of the same block */
            uint64_t run = 0, block = UINT64_MAX;
            for (size_t i = 0; i < n; i++) {
                if (pos[i] < offset || pos[i] >= offset + size)
                    continue;
                uint64_t b = (pos[i] - offset) >> level;
                if (b != block) {
                    total += run * run;
                    run = 0, block = b;
                }
                run++;
            }
            total += run * run;
        }
        offset += size;
    }
    return total;
}

static int bit_length(uint64_t x)
{
    int b = 0;
    for (; x != 0; x >>= 1)
        b++;
    return b;
}

dpzo_status dpzo_tree_sensitivity_squared(dpzo_ctx *ctx, uint64_t total_steps,
                                          uint64_t max_participations,
                                          uint64_t min_separation, uint64_t *zeta,
                                          uint64_t *steps, size_t steps_cap, size_t *n_steps)
{
    uint64_t T = total_steps, xi = min_separation;
    if (zeta == NULL || (steps == NULL && steps_cap > 0))
        return dpzo__fail(ctx, DPZO_EINVAL, "tree sensitivity: NULL output");
    *zeta = 0;
    if (n_steps != NULL)
        *n_steps = 0;
    /* the most participations that fit: 1 + floor((T - 1) / (xi + 1)) */
    uint64_t room = T == 0 ? 0 : xi >= T ? 1 : 1 + (T - 1) / (xi + 1);
    uint64_t E = max_participations < room ? max_participations : room;
    if (E == 0)
        return DPZO_OK;
    if (steps_cap < E && steps != NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "tree sensitivity: room for %zu steps, the "
                          "pattern may hold %llu", steps_cap, (unsigned long long)E);
    if (E == 1) { /* one participation: the longest root path, in the first (largest) tree */
        *zeta = (uint64_t)bit_length(T);
        if (steps != NULL) {
            steps[0] = 0;
            *n_steps = 1;
        }
        return DPZO_OK;
    }
    /* E >= 2, so xi + 2 <= T: W = xi + 1 < T */
    tables tb = {.E = E, .W = xi + 1};
    int K = bit_length(T) - 1;
    for (int k = K; k >= 0; k--)
        if ((T >> k) & 1)
            tb.bits[tb.nbits++] = k;
    /* tables kept: the complete trees above W leaves and nbits - 1 forests, (n + 1) W^2
     * entries for a block holding at most n participations; two scratch of 2 W^2 */
    uint64_t len = 0;
    for (int k = 0; k <= K; k++)
        tb.pow2_n[k] = fit((uint64_t)1 << k, tb.W, E);
    for (int j = tb.nbits - 1; j >= 0; j--)
        len += (uint64_t)1 << tb.bits[j], tb.forest_n[j] = fit(len, tb.W, E);
    uint64_t slices = 4, work = 0; /* slices: W x W each */
    int too_big = tb.W > (1u << 20) || E > (1u << 20)
                  || E * E * (uint64_t)(K + 1) >= MAX_VALUE; /* sum of n^2 over levels */
    if (!too_big) {
        uint64_t W2 = tb.W * tb.W;
        for (int k = 0; k <= K; k++)
            if (!small(&tb, k)) {
                slices += tb.pow2_n[k] + 1;
                work += (tb.pow2_n[k] + 1) * (tb.pow2_n[k] + 1);
            }
        for (int j = 0; j + 1 < tb.nbits; j++) {
            slices += tb.forest_n[j] + 1;
            work += (tb.forest_n[j] + 1) * (tb.forest_n[j] + 1);
        }
        /* each combination: pairs of (n1, n2) rows of W entries, at most W^2 of them once
         * per value step; counted as (n + 1)^2 W^2, times a few value steps */
        too_big = W2 > MAX_ENTRIES || slices * W2 > MAX_ENTRIES || work * W2 > MAX_WORK;
    }
    if (too_big)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "tree aggregation without restarts: %llu steps, at most %llu "
                          "participations %llu apart need tables of (participations + 1) x "
                          "(min separation + 1)^2 entries per tree level, beyond dpzo's limits "
                          "(2^26 entries, 2^36 updates)",
                          (unsigned long long)T, (unsigned long long)max_participations,
                          (unsigned long long)xi);
    dpzo_status st = DPZO_OK;
    size_t W2 = (size_t)(tb.W * tb.W);
    val *block = malloc((size_t)slices * W2 * sizeof *block);
    uint64_t *pos = malloc((size_t)E * sizeof *pos);
    if (block == NULL || pos == NULL) {
        st = dpzo__fail(ctx, DPZO_ENOMEM, "tree aggregation without restarts: out of memory "
                        "for %llu table entries", (unsigned long long)(slices * W2));
        goto done;
    }
    val *next = block;
    for (int k = 0; k <= K; k++)
        if (!small(&tb, k))
            tb.pow2[k] = next, next += (tb.pow2_n[k] + 1) * W2;
    for (int j = 0; j + 1 < tb.nbits; j++)
        tb.forest[j] = next, next += (tb.forest_n[j] + 1) * W2;
    tb.scratch[0] = next, tb.scratch[1] = next + 2 * W2;
    for (int k = 1; k <= K; k++)
        if (!small(&tb, k)) {
            const val *half = pow2_table(&tb, k - 1, 0);
            combine(&tb, half, tb.pow2_n[k - 1], half, tb.pow2_n[k - 1], tb.pow2[k],
                    tb.pow2_n[k], 1);
        }
    for (int j = tb.nbits - 2; j >= 0; j--)
        combine(&tb, pow2_table(&tb, tb.bits[j], 0), tb.pow2_n[tb.bits[j]],
                forest_table(&tb, j + 1, 1), tb.forest_n[j + 1], tb.forest[j], tb.forest_n[j],
                0);
    const val *top = forest_table(&tb, 0, 0);
    val best = NEG;
    uint64_t best_n = 0;
    for (uint64_t n = 0; n <= tb.forest_n[0]; n++) {
        val v = top[at(&tb, n, 0, tb.W - 1)];
        if (v > best)
            best = v, best_n = n;
    }
    size_t npos = 0;
    if (best < 0 || trace(&tb, 0, 0, 0, best_n, 0, tb.W - 1, pos, &npos) != 0
        || npos != best_n) {
        st = dpzo__fail(ctx, DPZO_ENOCONV, "tree aggregation without restarts: the dynamic "
                        "program's maximum was not traced to a pattern (a dpzo defect)");
        goto done;
    }
    /* the witness: a valid pattern whose own sum is the maximum */
    int valid = 1;
    for (size_t i = 0; i < npos; i++)
        valid &= pos[i] < T && (i == 0 || pos[i] - pos[i - 1] >= xi + 1);
    if (!valid || pattern_sum(T, pos, npos) != (uint64_t)best) {
        st = dpzo__fail(ctx, DPZO_ENOCONV, "tree aggregation without restarts: the traced "
                        "pattern does not attain the maximum (a dpzo defect)");
        goto done;
    }
    *zeta = (uint64_t)best;
    if (steps != NULL) {
        memcpy(steps, pos, npos * sizeof *pos);
        *n_steps = npos;
    }
done:
    free(block);
    free(pos);
    return st;
}
