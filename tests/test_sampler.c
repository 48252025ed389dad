/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_sampler.c: the batch sampler's ChaCha20 (trainer/sampler.c, libsodium's since
 * issue 29). The keystream against RFC 8439's test vectors (section 2.3.2's block, section
 * 2.4.2's keystream, appendix A.1's zero block) through dpzo__chacha20_words, the path the
 * sampler uses, the counter's wrap modulo 2^32 within the nonce; the Poisson batches against
 * the specification (train_internal.h: row i joins step t iff word i of stream (Poisson, t)
 * is below the threshold; the stream's key is the seed, its nonce ("Pois", t)) for many
 * seeds, steps, row counts and thresholds, with every version of the Poisson step this CPU
 * has (libsodium's words; dpzo's AVX2 and AVX-512 blocks, which also give libsodium's words
 * across the counter's wrap); and batches and keystream words recorded from the earlier
 * hand-written ChaCha20, which every existing run's batches came from. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "train_internal.h"

static void put_words(const uint32_t *w, size_t n, unsigned char *out)
{
    for (size_t i = 0; i < 4 * n; i++)
        out[i] = (unsigned char)(w[i / 4] >> (8 * (i % 4)));
}

/* RFC 8439 section 2.3.2: key 00 01 .. 1f, nonce 00:00:00:09 00:00:00:4a 00:00:00:00,
 * counter 1; appendix A.1 test vector 1: zero key, nonce and counter. */
static void test_rfc8439_block(void **state)
{
    (void)state;
    unsigned char key[32], nonce[12] = {0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0};
    for (int i = 0; i < 32; i++)
        key[i] = (unsigned char)i;
    static const uint32_t want[16] = {
        0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u, 0xc7f4d1c7u, 0x0368c033u,
        0x9aaa2204u, 0x4e6cd4c3u, 0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u,
        0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
    uint32_t out[3 * 16];
    dpzo__chacha20_words(key, nonce, 1, 1, out);
    assert_memory_equal(out, want, sizeof want);
    dpzo__chacha20_words(key, nonce, 0, 3, out); /* block 1 of a run from block 0 */
    assert_memory_equal(out + 16, want, sizeof want);
    unsigned char zero[32] = {0};
    static const uint32_t want0[16] = {
        0xade0b876u, 0x903df1a0u, 0xe56a5d40u, 0x28bd8653u, 0xb819d2bdu, 0x1aed8da0u,
        0xccef36a8u, 0xc70d778bu, 0x7c5941dau, 0x8d485751u, 0x3fe02477u, 0x374ad8b8u,
        0xf4b8436au, 0x1ca11815u, 0x69b687c3u, 0x8665eeb2u};
    dpzo__chacha20_words(zero, zero, 0, 1, out);
    assert_memory_equal(out, want0, sizeof want0);
}

/* RFC 8439 section 2.4.2: the 114-byte "sunscreen" plaintext XOR the keystream from block 1
 * (key 00 .. 1f, nonce 00:00:00:00 00:00:00:4a 00:00:00:00) is the given ciphertext. */
static void test_rfc8439_keystream(void **state)
{
    (void)state;
    static const char plain[] =
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
        "future, sunscreen would be it.";
    static const unsigned char cipher[114] = {
        0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d,
        0x69, 0x81, 0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc,
        0xfd, 0x9f, 0xae, 0x0b, 0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59,
        0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57, 0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab,
        0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8, 0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d,
        0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e, 0x52, 0xbc, 0x51, 0x4d,
        0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36, 0x5a, 0xf9,
        0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
        0x87, 0x4d};
    assert_int_equal(sizeof plain - 1, sizeof cipher);
    unsigned char key[32], nonce[12] = {0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0};
    for (int i = 0; i < 32; i++)
        key[i] = (unsigned char)i;
    uint32_t w[2 * 16];
    unsigned char ks[128];
    dpzo__chacha20_words(key, nonce, 1, 2, w);
    put_words(w, 32, ks);
    for (size_t i = 0; i < sizeof cipher; i++)
        assert_int_equal((unsigned char)plain[i] ^ ks[i], cipher[i]);
}

/* The counter wraps modulo 2^32 within the nonce: blocks 2^32 - 2, 2^32 - 1, 0, 1 of one run
 * are those blocks computed alone, for runs that end just before, at and after the wrap. */
static void test_counter_wrap(void **state)
{
    (void)state;
    unsigned char key[32], nonce[12];
    for (int i = 0; i < 32; i++)
        key[i] = (unsigned char)(7 * i + 1);
    for (int i = 0; i < 12; i++)
        nonce[i] = (unsigned char)(200 - i);
    uint32_t run[4 * 16], one[16];
    for (size_t nb = 1; nb <= 4; nb++) {
        memset(run, 0, sizeof run);
        dpzo__chacha20_words(key, nonce, UINT32_MAX - 1, nb, run);
        for (size_t k = 0; k < nb; k++) {
            dpzo__chacha20_words(key, nonce, (uint32_t)(UINT32_MAX - 1 + k), 1, one);
            assert_memory_equal(run + 16 * k, one, sizeof one);
        }
    }
    /* and block 0 after the wrap is block 0 of a run from 0 */
    dpzo__chacha20_words(key, nonce, 0, 1, one);
    assert_memory_equal(run + 32, one, sizeof one);
}

/* The Poisson rows of step t, from the specification: word i of stream ("Pois", t). */
static size_t spec_batch(uint64_t seed, uint64_t t, size_t n, uint32_t thr, size_t *idx,
                         uint32_t *words)
{
    unsigned char key[32] = {0}, nonce[12];
    for (int i = 0; i < 8; i++)
        key[i] = (unsigned char)(seed >> (8 * i));
    const uint32_t pois = 0x506f6973u; /* "Pois" */
    for (int i = 0; i < 4; i++)
        nonce[i] = (unsigned char)(pois >> (8 * i));
    for (int i = 0; i < 8; i++)
        nonce[4 + i] = (unsigned char)(t >> (8 * i));
    size_t nb = (n + 15) / 16, b = 0;
    uint32_t *all = malloc(nb * 16 * sizeof *all);
    assert_non_null(all);
    dpzo__chacha20_words(key, nonce, 0, nb, all);
    for (size_t i = 0; i < n; i++) {
        words[i] = all[i];
        if (words[i] < thr)
            idx[b++] = i;
    }
    free(all);
    return b;
}

/* The sampler's Poisson batches are the specification's, for row counts around its chunk
 * (4,096 words) and block sizes (1 .. 60,000), seeds, steps (the nonce's high word included)
 * and thresholds: 0, 1, 2^31 - 1, 2^31, 2^31 + 1, floor(q 2^32) for several q, 2^32 - 1,
 * and a word of the stream itself and that plus one (the comparison is strict). */
static void poisson_spec(dpzo_ctx *ctx)
{
    static const size_t ns[] = {1, 2, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 8193, 60000};
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
                    memset(got, 0xA5, n * sizeof *got);
                    size_t b = dpzo__sampler_batch(&s, t, got);
                    assert_int_equal(b, nb);
                    assert_memory_equal(got, want, nb * sizeof *got);
                    batches++;
                    rows += (long)b;
                }
            }
            dpzo__sampler_free(&s);
        }
    }
    assert_true(batches == 13 * 4 * 4 * 13);
    assert_true(rows > 0);
    free(want);
    free(got);
    free(words);
}

/* Every version of the Poisson steps this CPU has (libsodium's words, dpzo's AVX2 and
 * AVX-512 blocks) against the specification. */
static void test_poisson_spec(void **state)
{
    int ran = 0;
    for (int impl = DPZO_SAMPLER_SODIUM; impl <= DPZO_SAMPLER_AVX512; impl++) {
        if (dpzo__sampler_impl(impl) != 0)
            continue;
        poisson_spec(*state);
        ran++;
    }
    dpzo__sampler_impl(-1);
    assert_true(ran >= 1);
}

/* dpzo's vector block function (the Poisson steps' on x86-64) gives libsodium's words, for
 * keys with every byte set, counters from 0 to across the 2^32 wrap, 8 to 512 blocks. */
static void test_simd_words(void **state)
{
    (void)state;
    static const uint32_t ctrs[] = {0, 1, 7, 0x80000000u, UINT32_MAX - 15, UINT32_MAX - 7,
                                    UINT32_MAX};
    static const size_t nbs[] = {16, 32, 48, 256, 512};
    uint32_t *want = malloc(512 * 16 * sizeof *want), *got = malloc(512 * 16 * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    int compared = 0;
    for (int impl = DPZO_SAMPLER_AVX2; impl <= DPZO_SAMPLER_AVX512; impl++)
        for (int k = 0; k < 3; k++) {
            unsigned char key[32], nonce[12];
            for (int i = 0; i < 32; i++)
                key[i] = (unsigned char)(k == 0 ? 0 : 37 * i + 11 * k);
            for (int i = 0; i < 12; i++)
                nonce[i] = (unsigned char)(k == 2 ? 0xff : 91 * i + k);
            for (size_t c = 0; c < sizeof ctrs / sizeof *ctrs; c++)
                for (size_t m = 0; m < sizeof nbs / sizeof *nbs; m++) {
                    dpzo__chacha20_words(key, nonce, ctrs[c], nbs[m], want);
                    memset(got, 0, nbs[m] * 16 * sizeof *got);
                    if (dpzo__chacha20_simd_words(impl, key, nonce, ctrs[c], nbs[m], got) != 0)
                        continue; /* not on this CPU */
                    assert_memory_equal(got, want, nbs[m] * 16 * sizeof *got);
                    compared++;
                }
        }
    print_message("simd words: %d runs compared with libsodium\n", compared);
    free(want);
    free(got);
}

/* q = 1 (batch_size n): every row; the threshold computed by sampler_init is floor(q 2^32)
 * (the demo's n = 60,000, B = 256: 18325193); n = 0 is refused. */
static void test_poisson_init(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 1000;
    size_t *got = malloc(n * sizeof *got);
    assert_non_null(got);
    dpzo__sampler s;
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, n, (double)n, 0));
    assert_int_equal(dpzo__sampler_batch(&s, 3, got), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], i);
    dpzo__sampler_free(&s);
    assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, 60000, 256.0, 0));
    assert_int_equal(s.threshold, 18325193u); /* floor(256 / 60000 * 2^32) */
    dpzo__sampler_free(&s);
    assert_int_equal(dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON, 7, 0, 1.0, 0),
                     DPZO_EINVAL);
    dpzo__sampler_free(&s);
    free(got);
}

/* ---- batches and words recorded from the hand-written ChaCha20 ---------------------- *
 * Recorded at commit 00211cd (before issue 29 took ChaCha20 from libsodium) with the scalar
 * block function, which every vector version matched: each batch as its row count and the
 * 64-bit FNV-1a hash of its row numbers (as 8-byte little-endian integers), so that every
 * batch of a run before the change is drawn again after it. */

/* FNV-1a of the first `width` little-endian bytes of each of n values */
static uint64_t fnv_le(uint64_t (*at)(const void *, size_t), const void *x, size_t n,
                       int width)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < width; b++) {
            h ^= (at(x, i) >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    return h;
}

static uint64_t row_at(const void *x, size_t i) { return ((const size_t *)x)[i]; }
static uint64_t word_at(const void *x, size_t i) { return ((const uint32_t *)x)[i]; }
static uint64_t fnv_rows(const size_t *x, size_t n) { return fnv_le(row_at, x, n, 8); }
static uint64_t fnv_words(const uint32_t *x, size_t n) { return fnv_le(word_at, x, n, 4); }

/* Poisson: (seed, n, batch_size, step) -> rows */
static const struct {
    uint64_t seed;
    size_t n;
    double batch_size;
    uint64_t t;
    size_t rows;
    uint64_t fnv;
} RECORDED_POISSON[] = {
    {0x0000000000000000ull, 1, 0.0042666666666666669, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 1, 0.0042666666666666669, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 1, 0.01, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 1, 0.5, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 1, 0.5, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 17, 0.072533333333333339, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 17, 0.17000000000000001, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 17, 0.17000000000000001, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0x0000000000000000ull, 17, 8.5, 0x1ull, 11, 0x404db155d797919cull},
    {0x0000000000000000ull, 1000, 4.2666666666666666, 0x0ull, 2, 0x329aaf3337fe4a37ull},
    {0x0000000000000000ull, 1000, 4.2666666666666666, 0x100000005ull, 3, 0xc74962584c2e03d1ull},
    {0x0000000000000000ull, 1000, 10, 0x1ull, 12, 0xe8f08e3fcf2551eaull},
    {0x0000000000000000ull, 1000, 500, 0x0ull, 512, 0x0b51dbc69d91bafcull},
    {0x0000000000000000ull, 1000, 500, 0x100000005ull, 520, 0x24155a68eee8566bull},
    {0x0000000000000000ull, 60000, 256, 0x1ull, 278, 0x71a98a49a6bc4580ull},
    {0x0000000000000000ull, 60000, 600, 0x0ull, 623, 0xac20b94e9761a425ull},
    {0x0000000000000000ull, 60000, 600, 0x100000005ull, 595, 0x937c3389ee250738ull},
    {0x0000000000000000ull, 60000, 30000, 0x1ull, 30072, 0x4e118c2cd82fa3c9ull},
    {0x0000000000000000ull, 1000000, 4266.666666666667, 0x0ull, 4257, 0xafc68596e8b21ff3ull},
    {0x0000000000000000ull, 1000000, 4266.666666666667, 0x100000005ull, 4247, 0x70dc423745ce0f05ull},
    {0x0000000000000000ull, 1000000, 10000, 0x1ull, 10001, 0xf8ac318dadfea2cbull},
    {0x0000000000000000ull, 1000000, 500000, 0x0ull, 500158, 0xbe3fcca8bd8209f5ull},
    {0x0000000000000000ull, 1000000, 500000, 0x100000005ull, 500126, 0xbe3a682c512c0887ull},
    {0x0123456789abcdefull, 1, 0.0042666666666666669, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 1, 0.01, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 1, 0.01, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 1, 0.5, 0x1ull, 1, 0xa8c7f832281a39c5ull},
    {0x0123456789abcdefull, 17, 0.072533333333333339, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 17, 0.072533333333333339, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 17, 0.17000000000000001, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0x0123456789abcdefull, 17, 8.5, 0x0ull, 10, 0x91f0cb661d83e551ull},
    {0x0123456789abcdefull, 17, 8.5, 0x100000005ull, 9, 0xba3745bf704d9337ull},
    {0x0123456789abcdefull, 1000, 4.2666666666666666, 0x1ull, 2, 0x22a4ae0bcb25f4ecull},
    {0x0123456789abcdefull, 1000, 10, 0x0ull, 14, 0x300c035bcf6d40ddull},
    {0x0123456789abcdefull, 1000, 10, 0x100000005ull, 8, 0x2d07c36984461a33ull},
    {0x0123456789abcdefull, 1000, 500, 0x1ull, 482, 0x93a213f23688584full},
    {0x0123456789abcdefull, 60000, 256, 0x0ull, 276, 0xd69dd6b767e2e2cbull},
    {0x0123456789abcdefull, 60000, 256, 0x100000005ull, 235, 0x8f7dc3a3992b3929ull},
    {0x0123456789abcdefull, 60000, 600, 0x1ull, 601, 0x15a95afd3614f1d2ull},
    {0x0123456789abcdefull, 60000, 30000, 0x0ull, 30003, 0xad6becd82c96a12aull},
    {0x0123456789abcdefull, 60000, 30000, 0x100000005ull, 30039, 0x7e6e3bbe0b74603cull},
    {0x0123456789abcdefull, 1000000, 4266.666666666667, 0x1ull, 4282, 0x780b867fd003fb2cull},
    {0x0123456789abcdefull, 1000000, 10000, 0x0ull, 9916, 0x323ace3448c19acdull},
    {0x0123456789abcdefull, 1000000, 10000, 0x100000005ull, 9948, 0xf4a7bec657363fb1ull},
    {0x0123456789abcdefull, 1000000, 500000, 0x1ull, 500481, 0x8eb0d47923804dc3ull},
    {0xffffffffffffffffull, 1, 0.0042666666666666669, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 1, 0.0042666666666666669, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 1, 0.01, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 1, 0.5, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 1, 0.5, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 17, 0.072533333333333339, 0x1ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 17, 0.17000000000000001, 0x0ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 17, 0.17000000000000001, 0x100000005ull, 0, 0xcbf29ce484222325ull},
    {0xffffffffffffffffull, 17, 8.5, 0x1ull, 10, 0x6d1f9ee8203f9b14ull},
    {0xffffffffffffffffull, 1000, 4.2666666666666666, 0x0ull, 3, 0xbee401b0976e08bcull},
    {0xffffffffffffffffull, 1000, 4.2666666666666666, 0x100000005ull, 3, 0xc14f65b9fd2eefebull},
    {0xffffffffffffffffull, 1000, 10, 0x1ull, 13, 0xcc461eb836ae69c5ull},
    {0xffffffffffffffffull, 1000, 500, 0x0ull, 515, 0x03e53ee35f9887cdull},
    {0xffffffffffffffffull, 1000, 500, 0x100000005ull, 520, 0x09e81987f4847f26ull},
    {0xffffffffffffffffull, 60000, 256, 0x1ull, 246, 0x2df1c91772eec1faull},
    {0xffffffffffffffffull, 60000, 600, 0x0ull, 596, 0xbcebb10c4fe2fc91ull},
    {0xffffffffffffffffull, 60000, 600, 0x100000005ull, 582, 0x4301031bdccaeb65ull},
    {0xffffffffffffffffull, 60000, 30000, 0x1ull, 30105, 0xa4c701f5cdf39f87ull},
    {0xffffffffffffffffull, 1000000, 4266.666666666667, 0x0ull, 4347, 0x9db167670422f690ull},
    {0xffffffffffffffffull, 1000000, 4266.666666666667, 0x100000005ull, 4219, 0xc57286a7b67652aaull},
    {0xffffffffffffffffull, 1000000, 10000, 0x1ull, 10297, 0xbee7010ff50d4512ull},
    {0xffffffffffffffffull, 1000000, 500000, 0x0ull, 498786, 0x4408af7aee876926ull},
    {0xffffffffffffffffull, 1000000, 500000, 0x100000005ull, 498960, 0x3540f57a9c281bc6ull},
};

static void test_recorded_poisson(void **state)
{
    dpzo_ctx *ctx = *state;
    size_t *idx = malloc(1000000 * sizeof *idx);
    assert_non_null(idx);
    for (int impl = DPZO_SAMPLER_SODIUM; impl <= DPZO_SAMPLER_AVX512; impl++) {
        if (dpzo__sampler_impl(impl) != 0)
            continue; /* each version this CPU has */
        for (size_t k = 0; k < sizeof RECORDED_POISSON / sizeof *RECORDED_POISSON; k++) {
            dpzo__sampler s;
            assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_POISSON,
                                              RECORDED_POISSON[k].seed, RECORDED_POISSON[k].n,
                                              RECORDED_POISSON[k].batch_size, 0));
            size_t b = dpzo__sampler_batch(&s, RECORDED_POISSON[k].t, idx);
            assert_int_equal(b, RECORDED_POISSON[k].rows);
            assert_int_equal(fnv_rows(idx, b), RECORDED_POISSON[k].fnv);
            dpzo__sampler_free(&s);
        }
    }
    dpzo__sampler_impl(-1);
    free(idx);
}

/* Shuffle, seed 0x0123456789abcdef, n = 10, B = 3: steps 0 .. 6 (epochs of 3 steps) of the
 * non-private shuffle and the private without-replacement batches; seed 77, n = 60,000,
 * B = 256: (independent, step) -> rows (steps 233 and 234 straddle the first epoch's end). */
static const size_t RECORDED_SHUFFLE_SMALL[2][7][3] = {
    {{5, 9, 6}, {8, 0, 4}, {7, 2, 3}, {0, 4, 9}, {5, 3, 1}, {7, 2, 6}, {2, 9, 5}},
    {{3, 1, 8}, {8, 9, 6}, {9, 1, 7}, {5, 1, 3}, {0, 9, 4}, {1, 9, 0}, {4, 0, 1}},
};
static const struct {
    int independent;
    uint64_t t;
    size_t rows;
    uint64_t fnv;
} RECORDED_SHUFFLE[] = {
    {0, 0x0ull, 256, 0x6cef4db14d2564c6ull},
    {0, 0x1ull, 256, 0x0585bd2ecf2f3982ull},
    {0, 0xe9ull, 256, 0x5be65cec18074985ull},
    {0, 0xeaull, 256, 0x809aae92f706441bull},
    {0, 0x3e8ull, 256, 0xad6154f7f23203e1ull},
    {0, 0x200000000ull, 256, 0x2468d79b743df558ull},
    {1, 0x0ull, 256, 0xf74bfef5d0a323f0ull},
    {1, 0x1ull, 256, 0x8ff2de7cf628f3a6ull},
    {1, 0xe9ull, 256, 0xd09113e779bdc8a8ull},
    {1, 0xeaull, 256, 0x3ecf11f74b401e09ull},
    {1, 0x3e8ull, 256, 0x53643727aa67be45ull},
    {1, 0x200000000ull, 256, 0x0585d0930ae41c66ull},
};

static void test_recorded_shuffle(void **state)
{
    dpzo_ctx *ctx = *state;
    size_t *idx = malloc(60000 * sizeof *idx);
    assert_non_null(idx);
    for (int ind = 0; ind < 2; ind++) {
        dpzo__sampler s;
        assert_ok(ctx, dpzo__sampler_init(ctx, &s, DPZO_BATCH_SHUFFLE, 0x0123456789abcdefull,
                                          10, 3.0, ind));
        for (uint64_t t = 0; t < 7; t++) {
            assert_int_equal(dpzo__sampler_batch(&s, t, idx), 3);
            for (int i = 0; i < 3; i++)
                assert_int_equal(idx[i], RECORDED_SHUFFLE_SMALL[ind][t][i]);
        }
        dpzo__sampler_free(&s);
    }
    dpzo__sampler s[2];
    for (int ind = 0; ind < 2; ind++)
        assert_ok(ctx,
                  dpzo__sampler_init(ctx, &s[ind], DPZO_BATCH_SHUFFLE, 77, 60000, 256.0, ind));
    for (size_t k = 0; k < sizeof RECORDED_SHUFFLE / sizeof *RECORDED_SHUFFLE; k++) {
        size_t b =
            dpzo__sampler_batch(&s[RECORDED_SHUFFLE[k].independent], RECORDED_SHUFFLE[k].t, idx);
        assert_int_equal(b, RECORDED_SHUFFLE[k].rows);
        assert_int_equal(fnv_rows(idx, b), RECORDED_SHUFFLE[k].fnv);
    }
    dpzo__sampler_free(&s[0]);
    dpzo__sampler_free(&s[1]);
    free(idx);
}

/* Raw keystream words: key and nonce words 4 .. 11 and 13 .. 15 of the block input from
 * splitmix64(seed 2024) (the draw for word 12 replaced by the counter); (first counter,
 * blocks) -> the hash of all their words, the first four and the last four. The counter is
 * word 12 alone and wraps modulo 2^32 within the nonce: 0xfffffff0 + 40 blocks and
 * 0xfffffffe + 3 blocks cross the wrap. */
static const uint32_t RECORDED_KEY_NONCE[11] = {
    0xf88eecd5u, 0x1511f2d2u, 0x58dba57fu, 0xae9bb859u, 0x6476437au, 0x69455aebu,
    0xe3603297u, 0x99c4a792u, 0xdc360331u, 0x5d21a339u, 0x96a5cd1bu};
static const struct {
    uint32_t counter;
    size_t blocks;
    uint64_t fnv;
    uint32_t first[4], last[4];
} RECORDED_WORDS[] = {
    {0x00000000u, 300, 0x2421d88525edf09eull,
     {0x48eb8a88u, 0x069f6801u, 0x4a8dabbeu, 0x1881a9f8u},
     {0x34c1b347u, 0x55bb4fdfu, 0xa05d7b72u, 0x4147a833u}},
    {0x00000001u, 3, 0x4b8916bf22575623ull,
     {0x4eb81131u, 0x526a2e41u, 0x1c182522u, 0xd4a18cd1u},
     {0x8c9e0626u, 0xaa400a7cu, 0x12cd3672u, 0xc1f22ec3u}},
    {0xfffffff0u, 40, 0x4e93a17f21e4e063ull,
     {0x5e8ace49u, 0x35551db5u, 0x3ec8a188u, 0xee6461e6u},
     {0x3cf4f1cfu, 0x73ab7c25u, 0xcb7d3973u, 0x809410efu}},
    {0xfffffffeu, 3, 0xe75feb5fe3dfb97full,
     {0xc68a8903u, 0xc3b40e4eu, 0xead1458eu, 0xa885d4d1u},
     {0xae68eafeu, 0xcba276e3u, 0x8245389fu, 0xd6d9532bu}},
};

/* The words of blocks counter, counter + 1, ... of the stream with these key and nonce
 * words (kn[0 .. 7]: the key, kn[8 .. 10]: the nonce; little-endian bytes). */
static void keystream_words(const uint32_t kn[11], uint32_t counter, size_t blocks,
                            uint32_t *out)
{
    unsigned char key[32], nonce[12];
    for (int i = 0; i < 32; i++)
        key[i] = (unsigned char)(kn[i / 4] >> (8 * (i % 4)));
    for (int i = 0; i < 12; i++)
        nonce[i] = (unsigned char)(kn[8 + i / 4] >> (8 * (i % 4)));
    dpzo__chacha20_words(key, nonce, counter, blocks, out);
}

static void test_recorded_words(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof RECORDED_WORDS / sizeof *RECORDED_WORDS; k++) {
        size_t nw = 16 * RECORDED_WORDS[k].blocks;
        uint32_t *w = malloc(nw * sizeof *w);
        assert_non_null(w);
        keystream_words(RECORDED_KEY_NONCE, RECORDED_WORDS[k].counter, RECORDED_WORDS[k].blocks,
                        w);
        assert_int_equal(fnv_words(w, nw), RECORDED_WORDS[k].fnv);
        assert_memory_equal(w, RECORDED_WORDS[k].first, sizeof RECORDED_WORDS[k].first);
        assert_memory_equal(w + nw - 4, RECORDED_WORDS[k].last, sizeof RECORDED_WORDS[k].last);
        free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc8439_block),
        cmocka_unit_test(test_rfc8439_keystream),
        cmocka_unit_test(test_counter_wrap),
        cmocka_unit_test(test_poisson_spec),
        cmocka_unit_test(test_simd_words),
        cmocka_unit_test(test_poisson_init),
        cmocka_unit_test(test_recorded_poisson),
        cmocka_unit_test(test_recorded_shuffle),
        cmocka_unit_test(test_recorded_words),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
