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
 * Speed and memory: F(n, s, .) is nondecreasing in e and F(n, ., e) nonincreasing in s (a
 * looser constraint, a tighter one), and its values are small integers, so each row
 * F(n, s, .) is kept as its steps: the offsets where it rises and the values from there on
 * (a few per row where a dense row holds xi + 1 entries). The maximum over t is attained at
 * a t where FL(n1, s, .) steps up (FR(n2, ., e) does not increase in t), and the maximum of
 * two rows is a merge of their steps, so a combination costs about (E + 1)^2 (xi + 1) times
 * the steps per row squared. A block of at most xi + 1 steps holds at most one
 * participation and is written in closed form. The tables are kept, and the maximum is
 * traced back to a pattern whose sum is recomputed from scratch: zeta* is then both the
 * program's value and a witnessed pattern's (the lower end of the accounting needs it
 * attained). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef int32_t val;
#define NEG (INT32_MIN / 4) /* infeasible; NEG + NEG and NEG + a value do not overflow */
#define MAX_VALUE ((uint64_t)1 << 29)

/* Steps kept in all (8 bytes each), rows (12 bytes each) and the work (step merges,
 * counted as rows x pairs of participations x 64) allowed: under 512 MiB and about a minute
 * on one core at the limits. */
#define MAX_STEPS ((uint64_t)1 << 25)
#define MAX_ROWS ((uint64_t)1 << 24)
#define MAX_PARTS ((uint64_t)1 << 20) /* participations */
#define MAX_WORK ((uint64_t)1 << 36)

/* a row from offset e on has value v (until the row's next step); before its first step a
 * row is infeasible */
typedef struct {
    uint32_t e;
    val v;
} step;

/* F of one block: rows (n, s) for n = 0 .. nmax, s = 0 .. W-1, row r = n W + s holding
 * steps[start[r] .. start[r] + len[r]) */
typedef struct {
    uint64_t nmax;
    size_t *start;
    uint32_t *len;
    step *steps;
    size_t n_steps, cap;
} table;

typedef struct {
    uint64_t E, W;      /* participations 0..E; offsets 0..W-1 (W = xi + 1) */
    table pow2[64];     /* a complete tree of 2^k leaves, k = 0..K */
    table forest[64];   /* the trees of T's j-th and later set bits (high first), j < nbits - 1 */
    int bits[64];       /* the set bits of T, high first */
    int nbits;
    uint64_t kept;      /* steps held in all the tables */
    int over;           /* they would exceed MAX_STEPS */
    step *acc, *tmp;    /* combine's rows for one s: (E + 1) rows of up to W steps, and one */
    uint32_t *acc_len;
} tables;

/* the most participations that fit in `len` steps, at most E */
static uint64_t fit(uint64_t len, uint64_t W, uint64_t E)
{
    uint64_t m = len == 0 ? 0 : 1 + (len - 1) / W;
    return m < E ? m : E;
}

static int table_init(tables *tb, table *t, uint64_t nmax)
{
    size_t rows = (size_t)((nmax + 1) * tb->W);
    t->nmax = nmax;
    t->start = malloc(rows * sizeof *t->start);
    t->len = calloc(rows, sizeof *t->len);
    t->steps = NULL;
    t->n_steps = t->cap = 0;
    return t->start != NULL && t->len != NULL ? 0 : -1;
}

static void table_free(table *t)
{
    free(t->start);
    free(t->len);
    free(t->steps);
    memset(t, 0, sizeof *t);
}

/* Appends row r (the steps given); -1 out of memory or beyond MAX_STEPS in all. */
static int table_put(tables *tb, table *t, size_t r, const step *st, uint32_t n)
{
    size_t need = t->n_steps + n;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < need)
            cap *= 2;
        if (tb->kept - t->cap + cap > MAX_STEPS)
            cap = need; /* exactly what it holds, near the limit */
        if (tb->kept - t->cap + cap > MAX_STEPS) {
            tb->over = 1;
            return -1;
        }
        step *ns = realloc(t->steps, cap * sizeof *ns);
        if (ns == NULL)
            return -1;
        tb->kept += cap - t->cap;
        t->steps = ns, t->cap = cap;
    }
    t->start[r] = t->n_steps;
    t->len[r] = n;
    if (n > 0) /* (an empty row may come before any storage) */
        memcpy(t->steps + t->n_steps, st, n * sizeof *st);
    t->n_steps += n;
    return 0;
}

/* F(n, s, e) of a table (NEG beyond nmax or before the row's first step) */
static val table_at(const tables *tb, const table *t, uint64_t n, uint64_t s, uint64_t e)
{
    if (n > t->nmax)
        return NEG;
    size_t r = (size_t)(n * tb->W + s);
    const step *st = t->steps + t->start[r];
    val v = NEG;
    for (uint32_t i = 0; i < t->len[r] && st[i].e <= e; i++)
        v = st[i].v;
    return v;
}

/* A block of 2^k <= W = xi + 1 leaves holds at most one participation (two need xi + 2
 * leaves), which adds 1 at each of its k + 1 levels wherever it is: F(0, s, e) = 0 where
 * e >= s - 2^k, F(1, s, e) = k + 1 where e >= s + xi + 1 - 2^k (the participation at s). */
static int small(const tables *tb, int k)
{
    return ((uint64_t)1 << k) <= tb->W;
}

static int small_table(tables *tb, int k, table *t)
{
    uint64_t M = (uint64_t)1 << k, W = tb->W;
    if (table_init(tb, t, fit(M, W, tb->E)))
        return -1;
    for (uint64_t n = 0; n <= t->nmax; n++)
        for (uint64_t s = 0; s < W; s++) {
            /* the first feasible e: s - M (n = 0) or s + W - M (n = 1), at least 0 */
            uint64_t need = n == 0 ? s : s + W;
            uint64_t e0 = need > M ? need - M : 0;
            step st = {(uint32_t)e0, n == 0 ? 0 : (val)(k + 1)};
            if (table_put(tb, t, (size_t)(n * W + s), &st, e0 < W ? 1 : 0))
                return -1;
        }
    return 0;
}

/* out = max(a, b + add) of two nondecreasing step rows; returns its length */
static uint32_t merge(const step *a, uint32_t na, const step *b, uint32_t nb, val add, step *out)
{
    uint32_t i = 0, j = 0, n = 0;
    val xa = NEG, xb = NEG, cur = NEG;
    while (i < na || j < nb) {
        uint32_t e = i < na && (j >= nb || a[i].e <= b[j].e) ? a[i].e : b[j].e;
        if (i < na && a[i].e == e)
            xa = a[i++].v;
        if (j < nb && b[j].e == e)
            xb = b[j++].v + add;
        val m = xa > xb ? xa : xb;
        if (m > cur)
            out[n++] = (step){e, cur = m};
    }
    return n;
}

/* C (at most C->nmax participations) from L and R; root: a complete tree (adds n^2) */
static int combine(tables *tb, const table *L, const table *R, table *C, int root)
{
    uint64_t W = tb->W, nc = C->nmax;
    for (uint64_t s = 0; s < W; s++) {
        for (uint64_t n = 0; n <= nc; n++)
            tb->acc_len[n] = 0;
        for (uint64_t n1 = 0; n1 <= L->nmax && n1 <= nc; n1++) {
            size_t lr = (size_t)(n1 * W + s);
            const step *lrow = L->steps + L->start[lr];
            /* the t where FL(n1, s, .) steps up: FR(n2, ., e) does not increase in t */
            for (uint32_t k = 0; k < L->len[lr]; k++) {
                uint64_t t = lrow[k].e;
                val v = lrow[k].v;
                for (uint64_t n2 = 0; n2 <= R->nmax && n1 + n2 <= nc; n2++) {
                    size_t rr = (size_t)(n2 * W + t);
                    if (R->len[rr] == 0)
                        continue;
                    step *a = tb->acc + (n1 + n2) * W;
                    uint32_t m = merge(a, tb->acc_len[n1 + n2], R->steps + R->start[rr],
                                       R->len[rr], v, tb->tmp);
                    memcpy(a, tb->tmp, m * sizeof *a);
                    tb->acc_len[n1 + n2] = m;
                }
            }
        }
        for (uint64_t n = 0; n <= nc; n++) {
            step *a = tb->acc + n * W;
            if (root)
                for (uint32_t i = 0; i < tb->acc_len[n]; i++)
                    a[i].v += (val)(n * n);
            if (table_put(tb, C, (size_t)(n * W + s), a, tb->acc_len[n]))
                return -1;
        }
    }
    return 0;
}

static const table *forest_table(const tables *tb, int j)
{
    return j == tb->nbits - 1 ? &tb->pow2[tb->bits[j]] : &tb->forest[j];
}

/* Trace F(n, s, e) of a block back to its participations (positions from `offset`). The
 * block is pow2[k] (j < 0) or forest j. Returns 0 when a split attaining it was found. */
static int trace(const tables *tb, int k, int j, uint64_t offset, uint64_t n, uint64_t s,
                 uint64_t e, uint64_t *pos, size_t *npos)
{
    if (n == 0)
        return 0; /* nothing to place (the caller read a feasible value): never descend, a
                   * block of 2^40 steps would be walked node by node */
    if (j == tb->nbits - 1)
        k = tb->bits[j], j = -1;
    if (j < 0 && small(tb, k)) {
        uint64_t M = (uint64_t)1 << k;
        if (n > 1 || s + tb->W > M + e)
            return -1;
        pos[(*npos)++] = offset + s;
        return 0;
    }
    const table *C, *L, *R;
    int root, kl, kr, jr;
    if (j < 0) {
        C = &tb->pow2[k];
        L = R = &tb->pow2[k - 1];
        root = 1, kl = kr = k - 1, jr = -1;
    } else {
        C = &tb->forest[j];
        L = &tb->pow2[tb->bits[j]];
        R = forest_table(tb, j + 1);
        root = 0, kl = tb->bits[j], kr = -1, jr = j + 1;
    }
    uint64_t left_size = (uint64_t)1 << kl, W = tb->W;
    val want = table_at(tb, C, n, s, e) - (root ? (val)(n * n) : 0);
    for (uint64_t n1 = n > R->nmax ? n - R->nmax : 0; n1 <= n && n1 <= L->nmax; n1++) {
        size_t lr = (size_t)(n1 * W + s);
        const step *lrow = L->steps + L->start[lr];
        for (uint32_t i = 0; i < L->len[lr]; i++) {
            val b = table_at(tb, R, n - n1, lrow[i].e, e);
            if (b >= 0 && lrow[i].v + b == want)
                return trace(tb, kl, -1, offset, n1, s, lrow[i].e, pos, npos)
                       || trace(tb, kr, jr, offset + left_size, n - n1, lrow[i].e, e, pos,
                                npos);
        }
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

static dpzo_status limits(dpzo_ctx *ctx, uint64_t T, uint64_t E, uint64_t xi)
{
    return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                      "tree aggregation without restarts: %llu steps, at most %llu "
                      "participations %llu apart need tables beyond dpzo's limits (2^24 rows, "
                      "2^25 steps, 2^36 updates)",
                      (unsigned long long)T, (unsigned long long)E, (unsigned long long)xi);
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
    /* (more than MAX_PARTS is refused below: a caller may size for that many) */
    if (steps != NULL && steps_cap < (E < MAX_PARTS ? E : MAX_PARTS))
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
    tables tb;
    memset(&tb, 0, sizeof tb);
    tb.E = E, tb.W = xi + 1;
    int K = bit_length(T) - 1;
    for (int k = K; k >= 0; k--)
        if ((T >> k) & 1)
            tb.bits[tb.nbits++] = k;
    /* the work: per combination, W rows s, (n + 1)^2 / 2 pairs of participations, a few
     * steps of L each merged with a row of R (a few steps): counted as (n + 1)^2 W */
    uint64_t work = 0, rows = 0;
    int too_big = tb.W > ((uint64_t)1 << 24) || E > MAX_PARTS
                  || E * E * (uint64_t)(K + 1) >= MAX_VALUE; /* sum of n^2 over levels */
    if (!too_big) {
        uint64_t len = 0;
        for (int k = 0; k <= K; k++) {
            uint64_t m = fit((uint64_t)1 << k, tb.W, E);
            rows += (m + 1) * tb.W;
            work += small(&tb, k) ? 0 : (m + 1) * (m + 1) * tb.W;
        }
        for (int j = tb.nbits - 1; j >= 0; j--) {
            len += (uint64_t)1 << tb.bits[j];
            uint64_t m = fit(len, tb.W, E);
            rows += (m + 1) * tb.W;
            work += (m + 1) * (m + 1) * tb.W;
        }
        too_big = rows > MAX_ROWS || work > (MAX_WORK >> 6);
    }
    if (too_big)
        return limits(ctx, T, max_participations, xi);
    dpzo_status st = DPZO_OK;
    uint64_t *pos = malloc((size_t)E * sizeof *pos);
    tb.acc = malloc((size_t)((E + 1) * tb.W) * sizeof *tb.acc);
    tb.tmp = malloc((size_t)(2 * tb.W + 2) * sizeof *tb.tmp);
    tb.acc_len = malloc((size_t)(E + 1) * sizeof *tb.acc_len);
    if (pos == NULL || tb.acc == NULL || tb.tmp == NULL || tb.acc_len == NULL) {
        st = dpzo__fail(ctx, DPZO_ENOMEM, "tree aggregation without restarts: out of memory");
        goto done;
    }
    int fail = 0;
    for (int k = 0; k <= K && !fail; k++)
        fail = small(&tb, k) ? small_table(&tb, k, &tb.pow2[k])
             : table_init(&tb, &tb.pow2[k], fit((uint64_t)1 << k, tb.W, E))
               || combine(&tb, &tb.pow2[k - 1], &tb.pow2[k - 1], &tb.pow2[k], 1);
    uint64_t len = (uint64_t)1 << tb.bits[tb.nbits - 1];
    for (int j = tb.nbits - 2; j >= 0 && !fail; j--) {
        len += (uint64_t)1 << tb.bits[j];
        fail = table_init(&tb, &tb.forest[j], fit(len, tb.W, E))
               || combine(&tb, &tb.pow2[tb.bits[j]], forest_table(&tb, j + 1), &tb.forest[j], 0);
    }
    if (fail) {
        st = tb.over ? limits(ctx, T, max_participations, xi)
           : dpzo__fail(ctx, DPZO_ENOMEM, "tree aggregation without restarts: out of memory");
        goto done;
    }
    const table *top = forest_table(&tb, 0);
    val best = NEG;
    uint64_t best_n = 0;
    for (uint64_t n = 0; n <= top->nmax; n++) {
        val v = table_at(&tb, top, n, 0, tb.W - 1);
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
    for (int k = 0; k < 64; k++) {
        table_free(&tb.pow2[k]);
        table_free(&tb.forest[k]);
    }
    free(tb.acc);
    free(tb.tmp);
    free(tb.acc_len);
    free(pos);
    return st;
}
