/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_sampler.c: the batch sampler's ChaCha20 (trainer/sampler.c). The block
 * function against RFC 8439's test vectors; every vector version of the Poisson steps
 * (16 blocks at a time with AVX-512, 8 with AVX2) against the scalar block function, word for
 * word and row for row, for many seeds, steps, row counts and thresholds. The expected
 * batches are computed here from the specification (train_internal.h: row i joins step t iff
 * word i of stream (Poisson, t) is below the threshold; the stream's key is the seed, its
 * nonce ("Pois", t)) with the reference block function alone. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "train_internal.h"

/* the versions, DPZO_SAMPLER_SCALAR .. DPZO_SAMPLER_AVX512 (train_internal.h) */
enum { N_IMPL = DPZO_SAMPLER_AVX512 + 1 };

static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};

/* The versions this CPU and build run (the scalar one always). */
static int impl_available(int impl)
{
    int ok = dpzo__sampler_impl(impl) == 0;
    assert_int_equal(dpzo__sampler_impl(-1), 0);
    return ok;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* RFC 8439 section 2.3.2 (key 00 01 .. 1f, nonce 00:00:00:09 00:00:00:4a 00:00:00:00,
 * counter 1) and appendix A.1 test vector 1 (zero key, nonce and counter). */
static void test_rfc8439_block(void **state)
{
    (void)state;
    uint32_t in[16] = {sigma[0], sigma[1], sigma[2], sigma[3], 0x03020100u, 0x07060504u,
                       0x0b0a0908u, 0x0f0e0d0cu, 0x13121110u, 0x17161514u, 0x1b1a1918u,
                       0x1f1e1d1cu, 0x00000001u, 0x09000000u, 0x4a000000u, 0x00000000u};
    static const uint32_t want[16] = {
        0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u, 0xc7f4d1c7u, 0x0368c033u,
        0x9aaa2204u, 0x4e6cd4c3u, 0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u,
        0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
    uint32_t out[16];
    dpzo__chacha20_block(in, out);
    assert_memory_equal(out, want, sizeof want);
    uint32_t zero[16] = {sigma[0], sigma[1], sigma[2], sigma[3]};
    static const uint32_t want0[16] = {
        0xade0b876u, 0x903df1a0u, 0xe56a5d40u, 0x28bd8653u, 0xb819d2bdu, 0x1aed8da0u,
        0xccef36a8u, 0xc70d778bu, 0x7c5941dau, 0x8d485751u, 0x3fe02477u, 0x374ad8b8u,
        0xf4b8436au, 0x1ca11815u, 0x69b687c3u, 0x8665eeb2u};
    dpzo__chacha20_block(zero, out);
    assert_memory_equal(out, want0, sizeof want0);
    /* every version gives the same blocks: 40 blocks from counter 0 hold both groups of 16
     * (8) and a scalar tail; block 1 of the RFC key is the one above */
    uint32_t *words = malloc(40 * 16 * sizeof *words);
    assert_non_null(words);
    for (int impl = 0; impl < N_IMPL; impl++) {
        if (!impl_available(impl))
            continue;
        in[12] = 0;
        memset(words, 0, 40 * 16 * sizeof *words);
        assert_int_equal(dpzo__chacha20_blocks(impl, in, 40, words), 0);
        assert_memory_equal(words + 16, want, sizeof want);
        memset(words, 0, 40 * 16 * sizeof *words);
        assert_int_equal(dpzo__chacha20_blocks(impl, zero, 40, words), 0);
        assert_memory_equal(words, want0, sizeof want0);
    }
    free(words);
}

/* The vector versions' words are the reference block function's, block by block, for random
 * keys and nonces, counters that wrap modulo 2^32 inside a group, and block counts around
 * the group sizes. */
static void test_vector_words(void **state)
{
    (void)state;
    static const size_t counts[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 200};
    static const uint32_t counters[] = {0, 1, 5, 0xFFFFFFF0u, 0xFFFFFFF9u, 0xFFFFFFFFu};
    const size_t max = 200;
    uint32_t *want = malloc(max * 16 * sizeof *want), *got = malloc(max * 16 * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    uint64_t rng = 42;
    int compared = 0;
    for (int trial = 0; trial < 20; trial++) {
        uint32_t in[16];
        memcpy(in, sigma, sizeof sigma);
        for (int w = 4; w < 16; w++)
            in[w] = (uint32_t)splitmix(&rng);
        for (size_t c = 0; c < sizeof counters / sizeof *counters; c++) {
            in[12] = counters[c];
            uint32_t x[16];
            memcpy(x, in, sizeof x);
            for (size_t k = 0; k < max; k++, x[12]++)
                dpzo__chacha20_block(x, want + 16 * k);
            for (int impl = 0; impl < N_IMPL; impl++) {
                if (!impl_available(impl))
                    continue;
                for (size_t nc = 0; nc < sizeof counts / sizeof *counts; nc++) {
                    size_t nb = counts[nc];
                    memset(got, 0xA5, max * 16 * sizeof *got);
                    assert_int_equal(dpzo__chacha20_blocks(impl, in, nb, got), 0);
                    assert_memory_equal(got, want, nb * 16 * sizeof *got);
                    if (nb < max) /* nothing written past the blocks asked for */
                        assert_int_equal(got[16 * nb], 0xA5A5A5A5u);
                    compared++;
                }
            }
        }
    }
    assert_true(compared >= 20 * 6 * 17); /* the scalar version at least */
    uint32_t in0[16] = {sigma[0], sigma[1], sigma[2], sigma[3]};
    assert_int_equal(dpzo__chacha20_blocks(N_IMPL, in0, 1, got), -1);
    free(want);
    free(got);
}

/* The Poisson rows of step t, from the specification with the reference block function. */
static size_t spec_batch(uint64_t seed, uint64_t t, size_t n, uint32_t thr, size_t *idx,
                         uint32_t *words)
{
    uint32_t in[16] = {sigma[0], sigma[1], sigma[2], sigma[3], (uint32_t)seed,
                       (uint32_t)(seed >> 32)};
    in[13] = 0x506f6973u; /* "Pois" */
    in[14] = (uint32_t)t;
    in[15] = (uint32_t)(t >> 32);
    size_t b = 0;
    uint32_t block[16];
    for (size_t i = 0; i < n; i++) {
        if (i % 16 == 0) {
            dpzo__chacha20_block(in, block);
            in[12]++;
        }
        words[i] = block[i % 16];
        if (words[i] < thr)
            idx[b++] = i;
    }
    return b;
}

/* Every version's Poisson batches are the specification's, for row counts around the
 * group sizes (1 .. 60,000), seeds, steps (the nonce's high word included) and thresholds:
 * 0, 1, 2^31 - 1, 2^31, 2^31 + 1 (the AVX2 version compares with the sign bit flipped),
 * floor(q 2^32) for several q, 2^32 - 1, and a word of the stream itself and that plus one
 * (the comparison is strict). */
static void test_poisson_versions(void **state)
{
    dpzo_ctx *ctx = *state;
    static const size_t ns[] = {1, 2, 15, 16, 17, 127, 128, 129, 255, 256, 257, 300, 1000, 4099, 60000};
    static const uint64_t seeds[] = {0, 1, 0x1234567890abcdefull, UINT64_MAX};
    static const uint64_t steps[] = {0, 1, 17, 0x100000005ull};
    static const double qs[] = {0.001, 256.0 / 60000.0, 0.05, 0.5, 0.99};
    const size_t nmax = 60000;
    size_t *want = malloc(nmax * sizeof *want), *got = malloc(nmax * sizeof *got);
    uint32_t *words = malloc(nmax * sizeof *words);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(words);
    long batches = 0, rows = 0;
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
        size_t n = ns[ni];
        for (size_t si = 0; si < sizeof seeds / sizeof *seeds; si++) {
            dpzo__sampler s;
            assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, seeds[si], n,
                                              (double)n / 2.0 > 0.5 ? (double)n / 2.0 : 1.0, 0));
            for (size_t ti = 0; ti < sizeof steps / sizeof *steps; ti++) {
                uint64_t t = steps[ti];
                uint32_t thr[16];
                size_t nthr = 0;
                thr[nthr++] = 0;
                thr[nthr++] = 1;
                thr[nthr++] = 0x7FFFFFFFu;
                thr[nthr++] = 0x80000000u;
                thr[nthr++] = 0x80000001u;
                thr[nthr++] = UINT32_MAX;
                for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++)
                    thr[nthr++] = (uint32_t)ldexp(qs[qi], 32);
                spec_batch(seeds[si], t, n, 0, want, words); /* the words */
                uint32_t wk = words[n / 2];
                thr[nthr++] = wk;
                thr[nthr++] = wk == UINT32_MAX ? wk : wk + 1;
                for (size_t k = 0; k < nthr; k++) {
                    size_t nb = spec_batch(seeds[si], t, n, thr[k], want, words);
                    if (thr[k] == wk) /* strict: the word itself does not join */
                        for (size_t i = 0; i < nb; i++)
                            assert_true(want[i] != n / 2);
                    s.threshold = thr[k];
                    s.all = 0;
                    for (int impl = 0; impl < N_IMPL; impl++) {
                        if (dpzo__sampler_impl(impl) != 0)
                            continue;
                        memset(got, 0xA5, n * sizeof *got);
                        size_t b = dpzo__sampler_batch(&s, t, got);
                        assert_int_equal(b, nb);
                        assert_memory_equal(got, want, nb * sizeof *got);
                        batches++;
                        rows += (long)b;
                    }
                    assert_int_equal(dpzo__sampler_impl(-1), 0);
                }
            }
            dpzo__sampler_free(&s);
        }
    }
    assert_true(batches >= 15 * 4 * 4 * 13); /* the scalar version at least */
    assert_true(rows > 0);
    free(want);
    free(got);
    free(words);
}

/* q = 1 (batch_size n): every row, with every version; the threshold computed by
 * sampler_init is floor(q 2^32) (the demo's n = 60,000, B = 256: 18325193); n = 0 is
 * refused. */
static void test_poisson_init(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 1000;
    size_t *got = malloc(n * sizeof *got);
    assert_non_null(got);
    dpzo__sampler s;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, n, (double)n, 0));
    for (int impl = 0; impl < N_IMPL; impl++) {
        if (dpzo__sampler_impl(impl) != 0)
            continue;
        assert_int_equal(dpzo__sampler_batch(&s, 3, got), n);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(got[i], i);
    }
    assert_int_equal(dpzo__sampler_impl(-1), 0);
    dpzo__sampler_free(&s);
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, 60000, 256.0, 0));
    assert_int_equal(s.threshold, 18325193u); /* floor(256 / 60000 * 2^32) */
    dpzo__sampler_free(&s);
    assert_int_equal(dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, 0, 1.0, 0),
                     DPZO_EINVAL);
    dpzo__sampler_free(&s);
    assert_int_equal(dpzo__sampler_impl(N_IMPL), -1);
    assert_int_equal(dpzo__sampler_impl(-2), -1);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc8439_block),
        cmocka_unit_test(test_vector_words),
        cmocka_unit_test(test_poisson_versions),
        cmocka_unit_test(test_poisson_init),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
