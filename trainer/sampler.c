/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/sampler.c: which rows each step uses (train_internal.h describes the streams).
 *
 * Every batch is a pure function of (sampling seed, step): a resumed run draws the same
 * batches as an uninterrupted one without saving any generator state beyond the seed. The
 * generator is ChaCha20 (RFC 8439, 20 rounds) keyed by the sampling seed, with the stream
 * (Poisson step, shuffle epoch, or without-replacement step) in the nonce: a keyed
 * pseudorandom function, so batches cannot be predicted without the seed. The sampling seed
 * comes from getrandom at the start of a run and is kept secret from the directions (whose
 * seed is public by design).
 *
 * The keystream is libsodium's (issue 29): crypto_stream_chacha20_ietf_xor_ic is RFC 8439's
 * layout, state word 12 the 32-bit block counter and words 13 .. 15 the 96-bit nonce, all
 * little-endian. So stream (domain, index) of seed s is key = (s as 8 little-endian bytes,
 * 24 zero bytes), nonce = (domain as 4, index as 8 little-endian bytes), and word k of the
 * stream is word k mod 16 of block k / 16 (counter k / 16 modulo 2^32): the words of the
 * earlier hand-written code, bit for bit (tests/test_sampler.c holds batches and words
 * recorded from it, and RFC 8439's test vectors).
 *
 * One exception, measured (bench/results/crypto.md): a Poisson step reads n words, and
 * libsodium 1.0.18 computes them at 2.4 times the cost of dpzo's AVX-512 blocks (126 against
 * 53 us at n = 60,000 on an Intel Xeon, family 6 model 207: 5 % of a DPZero step of mlp:128),
 * which issue 29's "no slower step" rules out. So on x86-64 with AVX-512 or AVX2 the Poisson
 * words come from dpzo's vector block function (kernels/cpu/chacha.c: 16 or 8 blocks at a
 * time, one per lane); it is checked word for word against libsodium before its first use
 * in a process (32 blocks across the counter's wrap; a mismatch leaves libsodium in charge)
 * and by tests/test_sampler.c. Everything else, and the Poisson words on other CPUs, is
 * libsodium's. */
#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sodium.h>
#include "chacha.h" /* kernels/cpu */
#include "internal.h"
#include "train_internal.h"

#define DOMAIN_POISSON 0x506f6973u /* "Pois" */
#define DOMAIN_SHUFFLE 0x53687566u /* "Shuf" */
#define DOMAIN_WOR 0x576f5231u     /* "WoR1" */

/* Blocks ctr, ctr + 1, ... (nblocks of them) of the stream (key, nonce) as 32-bit words.
 * The counter wraps modulo 2^32 within the nonce, as word 12 of RFC 8439's state (and the
 * earlier code's) does; libsodium instead carries a counter overflow into the nonce and
 * refuses a call whose blocks pass 2^32, so a run of blocks that crosses the wrap is split
 * there into two calls. (A stream reaches the wrap only after 2^36 words: a Poisson step
 * over 2^36 rows, a shuffle of about 2^35, each of its draws two words.) */
void dpzo__chacha20_words(const unsigned char key[32], const unsigned char nonce[12],
                          uint32_t ctr, size_t nblocks, uint32_t *out)
{
    unsigned char *p = (unsigned char *)out;
    const size_t nwords = 16 * nblocks;
    memset(p, 0, nblocks * 64); /* the keystream XOR zeros */
    while (nblocks > 0) {
        uint64_t room = ((uint64_t)1 << 32) - ctr; /* blocks before the counter wraps */
        size_t nb = (uint64_t)nblocks < room ? nblocks : (size_t)room;
        crypto_stream_chacha20_ietf_xor_ic(p, p, (unsigned long long)nb * 64, nonce, ctr, key);
        p += nb * 64;
        nblocks -= nb;
        ctr += (uint32_t)nb;
    }
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < nwords; i++)
        out[i] = __builtin_bswap32(out[i]);
#else
    (void)nwords;
#endif
}

static void stream_key(uint64_t seed, uint32_t domain, uint64_t index, unsigned char key[32],
                       unsigned char nonce[12])
{
    memset(key, 0, 32);
    for (int b = 0; b < 8; b++)
        key[b] = (unsigned char)(seed >> (8 * b));
    for (int b = 0; b < 4; b++)
        nonce[b] = (unsigned char)(domain >> (8 * b));
    for (int b = 0; b < 8; b++)
        nonce[4 + b] = (unsigned char)(index >> (8 * b));
}

/* A stream read word by word (shuffles): STREAM_BLOCKS blocks per libsodium call. */
enum { STREAM_BLOCKS = 16 };
typedef struct {
    unsigned char key[32], nonce[12];
    uint32_t ctr; /* the next block to compute */
    uint32_t w[16 * STREAM_BLOCKS];
    unsigned pos;
} stream;

static void stream_start(stream *s, uint64_t seed, uint32_t domain, uint64_t index)
{
    stream_key(seed, domain, index, s->key, s->nonce);
    s->ctr = 0;
    s->pos = 16 * STREAM_BLOCKS;
}

static uint32_t next32(stream *s)
{
    if (s->pos == 16 * STREAM_BLOCKS) {
        dpzo__chacha20_words(s->key, s->nonce, s->ctr, STREAM_BLOCKS, s->w);
        s->ctr += STREAM_BLOCKS;
        s->pos = 0;
    }
    return s->w[s->pos++];
}

static uint64_t next64(stream *s)
{
    uint64_t lo = next32(s);
    return lo | (uint64_t)next32(s) << 32;
}

/* Uniform in [0, bound), bound >= 1, without modulo bias (draws below 2^64 mod bound are
 * rejected). */
static uint64_t uniform_below(stream *st, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = next64(st);
        if (r >= threshold)
            return r % bound;
    }
}

/* ---- Poisson steps on x86-64: dpzo's vector block function (kernels/cpu/chacha.c) ---- */

_Static_assert((int)DPZO_SAMPLER_AVX2 == (int)DPZO_CHACHA_AVX2 &&
                   (int)DPZO_SAMPLER_AVX512 == (int)DPZO_CHACHA_AVX512,
               "the sampler's versions are the kernel's");

static _Atomic int sampler_impl_forced = -1;

/* RFC 8439's initial state of stream (key, nonce) at block ctr. */
static void state_of(const unsigned char key[32], const unsigned char nonce[12], uint32_t ctr,
                     uint32_t in[16])
{
    static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
    memcpy(in, sigma, sizeof sigma);
    for (int w = 0; w < 8; w++)
        in[4 + w] = (uint32_t)key[4 * w] | (uint32_t)key[4 * w + 1] << 8 |
                    (uint32_t)key[4 * w + 2] << 16 | (uint32_t)key[4 * w + 3] << 24;
    in[12] = ctr;
    for (int w = 0; w < 3; w++)
        in[13 + w] = (uint32_t)nonce[4 * w] | (uint32_t)nonce[4 * w + 1] << 8 |
                     (uint32_t)nonce[4 * w + 2] << 16 | (uint32_t)nonce[4 * w + 3] << 24;
}

int dpzo__chacha20_simd_words(int impl, const unsigned char key[32],
                              const unsigned char nonce[12], uint32_t ctr, size_t nblocks,
                              uint32_t *out)
{
    uint32_t in[16];
    state_of(key, nonce, ctr, in);
    return dpzo__chacha_words(impl, in, nblocks, out);
}

/* The vector version's check against libsodium, once per process and version: 32 blocks
 * across the counter's wrap of a fixed stream. 1: the same words. */
static int simd_agrees(int impl)
{
    static _Atomic int verdict[3] = {-1, -1, -1};
    int v = atomic_load_explicit(&verdict[impl], memory_order_relaxed);
    if (v >= 0)
        return v;
    unsigned char key[32], nonce[12];
    stream_key(0x0123456789abcdefull, DOMAIN_POISSON, 0xfedcba9876543210ull, key, nonce);
    key[31] = 0xa5; /* every key byte that the sampler leaves zero is read too */
    uint32_t want[16 * 32], got[16 * 32];
    const uint32_t ctr = UINT32_MAX - 15;
    dpzo__chacha20_words(key, nonce, ctr, 32, want);
    v = dpzo__chacha20_simd_words(impl, key, nonce, ctr, 32, got) == 0 &&
        memcmp(want, got, sizeof want) == 0;
    atomic_store_explicit(&verdict[impl], v, memory_order_relaxed);
    return v;
}

int dpzo__sampler_impl(int impl)
{
    if (impl < -1 || impl > DPZO_SAMPLER_AVX512 ||
        (impl > DPZO_SAMPLER_SODIUM && !dpzo__chacha_have(impl)))
        return -1;
    atomic_store_explicit(&sampler_impl_forced, impl, memory_order_relaxed);
    return 0;
}

static int sampler_impl(void)
{
    int impl = atomic_load_explicit(&sampler_impl_forced, memory_order_relaxed);
    if (impl < 0) {
        impl = dpzo__chacha_have(DPZO_SAMPLER_AVX2) ? DPZO_SAMPLER_AVX2 : DPZO_SAMPLER_SODIUM;
#ifndef DPZO_EMULATE_AVX2 /* a build standing in for an AVX2-only CPU (as philox.c) */
        if (dpzo__chacha_have(DPZO_SAMPLER_AVX512))
            impl = DPZO_SAMPLER_AVX512;
#endif
    }
    if (impl != DPZO_SAMPLER_SODIUM && !simd_agrees(impl))
        impl = DPZO_SAMPLER_SODIUM;
    return impl;
}

/* Poisson step t: row i joins iff word i of stream (Poisson, t) is below the threshold.
 * The vector version takes the whole groups of 256 (AVX-512) or 128 (AVX2) words; the rest
 * come POISSON_BLOCKS blocks (16 KiB) per libsodium call, where the comparison writes every
 * row into idx (room for n) and advances past the ones that join. */
enum { POISSON_BLOCKS = 256 };

static size_t poisson_batch(const dpzo__sampler *s, uint64_t t, size_t *idx)
{
    size_t b = 0, start = 0;
    if (s->all) { /* every row (the words need not be drawn) */
        for (size_t i = 0; i < s->n; i++)
            idx[i] = i;
        return s->n;
    }
    unsigned char key[32], nonce[12];
    stream_key(s->seed, DOMAIN_POISSON, t, key, nonce);
    const int impl = sampler_impl();
    if (impl != DPZO_SAMPLER_SODIUM) { /* the whole groups of 256 or 128 words */
        uint32_t in[16];
        state_of(key, nonce, 0, in);
        start = dpzo__chacha_poisson(impl, in, s->n, s->threshold, idx, &b);
    }
    uint32_t w[16 * POISSON_BLOCKS];
    for (size_t i0 = start; i0 < s->n; i0 += 16 * POISSON_BLOCKS) {
        size_t m = s->n - i0 < 16 * POISSON_BLOCKS ? s->n - i0 : 16 * POISSON_BLOCKS;
        dpzo__chacha20_words(key, nonce, (uint32_t)(i0 / 16), (m + 15) / 16, w);
        for (size_t i = 0; i < m; i++) {
            idx[b] = i0 + i;
            b += w[i] < s->threshold;
        }
    }
    return b;
}

dpzo_status dpzo__random_seed(dpzo_ctx *ctx, uint64_t *out)
{
    unsigned char buf[8];
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t r = getrandom(buf + got, sizeof buf - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return dpzo__fail(ctx, DPZO_EINVAL, "sampling seed: getrandom failed: %s",
                              strerror(errno));
        got += (size_t)r;
    }
    memcpy(out, buf, sizeof *out);
    return DPZO_OK;
}

dpzo_status dpzo__sampler_init(dpzo_ctx *ctx, dpzo__sampler *s, dpzo_batching kind,
                               uint64_t seed, size_t n, double batch_size, int independent)
{
    memset(s, 0, sizeof *s);
    if (sodium_init() < 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "batches: libsodium failed to initialise");
    if (n == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "batches: the training set is empty");
    if (!(batch_size > 0.0 && batch_size <= (double)n))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "batches: batch_size %g must be in (0, %zu], the training rows",
                          batch_size, n);
    s->kind = kind;
    s->seed = seed;
    s->n = n;
    if (kind == DPZO_BATCH_POISSON) {
        double q = batch_size / (double)n;
        s->all = q >= 1.0;
        /* floor(q 2^32): each row joins with probability at most q (never more than the
         * accounted rate) */
        s->threshold = s->all ? UINT32_MAX : (uint32_t)ldexp(q, 32);
        return DPZO_OK;
    }
    if (batch_size != floor(batch_size))
        return dpzo__fail(ctx, DPZO_EINVAL, "batches: shuffled batch_size %g is not an integer",
                          batch_size);
    s->batch = (size_t)batch_size;
    s->independent = independent;
    s->per_epoch = independent ? 1 : n / s->batch;
    s->perm = malloc(n * sizeof *s->perm);
    s->perm_epoch = UINT64_MAX;
    if (s->perm == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "batches: out of memory (%zu rows)", n);
    return DPZO_OK;
}

void dpzo__sampler_free(dpzo__sampler *s)
{
    free(s->perm);
    s->perm = NULL;
}

void dpzo__sampler_position(const dpzo__sampler *s, uint64_t t, uint64_t *epoch,
                            uint64_t *pos)
{
    if (s->kind == DPZO_BATCH_SHUFFLE && !s->independent) {
        *epoch = t / s->per_epoch;
        *pos = t % s->per_epoch;
    } else {
        *epoch = 0;
        *pos = t;
    }
}

/* Fisher-Yates: for i = n-1 down to 1, swap places i and uniform_below(i + 1). */
static void shuffle_epoch(dpzo__sampler *s, uint64_t epoch)
{
    for (size_t i = 0; i < s->n; i++)
        s->perm[i] = i;
    stream st;
    stream_start(&st, s->seed, DOMAIN_SHUFFLE, epoch);
    for (size_t i = s->n; i > 1; i--) {
        size_t j = (size_t)uniform_below(&st, (uint64_t)i);
        size_t tmp = s->perm[i - 1];
        s->perm[i - 1] = s->perm[j];
        s->perm[j] = tmp;
    }
    s->perm_epoch = epoch;
}

/* A uniformly random B-subset for step t alone (private runs): the first B places of a
 * partial Fisher-Yates shuffle, i = 0 .. B-1 swapping place i with a uniform place in
 * [i, n). perm is restored to the identity afterwards by undoing the swaps. */
static void wor_batch(dpzo__sampler *s, uint64_t t, size_t *idx)
{
    if (s->perm_epoch != UINT64_MAX - 1) {
        for (size_t i = 0; i < s->n; i++)
            s->perm[i] = i;
        s->perm_epoch = UINT64_MAX - 1; /* identity */
    }
    stream st;
    stream_start(&st, s->seed, DOMAIN_WOR, t);
    size_t *swap = idx; /* the swap partners, kept in idx until the batch is copied out */
    for (size_t i = 0; i < s->batch; i++) {
        size_t j = i + (size_t)uniform_below(&st, (uint64_t)(s->n - i));
        size_t tmp = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = tmp;
        swap[i] = j;
    }
    for (size_t i = s->batch; i-- > 0;) {
        size_t j = swap[i], row = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = row;
        idx[i] = row;
    }
}

size_t dpzo__sampler_batch(dpzo__sampler *s, uint64_t t, size_t *idx)
{
    if (s->kind == DPZO_BATCH_SHUFFLE && s->independent) {
        wor_batch(s, t, idx);
        return s->batch;
    }
    if (s->kind == DPZO_BATCH_SHUFFLE) {
        uint64_t epoch, pos;
        dpzo__sampler_position(s, t, &epoch, &pos);
        if (s->perm_epoch != epoch)
            shuffle_epoch(s, epoch);
        memcpy(idx, s->perm + pos * s->batch, s->batch * sizeof *idx);
        return s->batch;
    }
    return poisson_batch(s, t, idx);
}
