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
 * The keystream comes from libsodium (issue 29; until then dpzo had its own block function
 * with AVX2 and AVX-512 versions): crypto_stream_chacha20_ietf_xor_ic is RFC 8439's layout,
 * state word 12 the 32-bit block counter and words 13 .. 15 the 96-bit nonce, all
 * little-endian. So stream (domain, index) of seed s is key = (s as 8 little-endian bytes,
 * 24 zero bytes), nonce = (domain as 4, index as 8 little-endian bytes), and word k of the
 * stream is word k mod 16 of block k / 16 (counter k / 16 modulo 2^32): the words of the
 * earlier hand-written code, bit for bit (tests/test_sampler.c holds batches and words
 * recorded from it, and RFC 8439's test vectors). docs/trainer.md section 2.3 and
 * bench/results/crypto.md give the cost. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sodium.h>
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

/* Poisson step t: row i joins iff word i of stream (Poisson, t) is below the threshold. The
 * words come POISSON_BLOCKS blocks (16 KiB) per libsodium call; the comparison writes every
 * row into idx (room for n) and advances past the ones that join. */
enum { POISSON_BLOCKS = 256 };

static size_t poisson_batch(const dpzo__sampler *s, uint64_t t, size_t *idx)
{
    size_t b = 0;
    if (s->all) { /* every row (the words need not be drawn) */
        for (size_t i = 0; i < s->n; i++)
            idx[i] = i;
        return s->n;
    }
    unsigned char key[32], nonce[12];
    stream_key(s->seed, DOMAIN_POISSON, t, key, nonce);
    uint32_t w[16 * POISSON_BLOCKS];
    for (size_t i0 = 0; i0 < s->n; i0 += 16 * POISSON_BLOCKS) {
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
