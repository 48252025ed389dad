/* trainer/sampler.c: which rows each step uses (train_internal.h describes the streams).
 *
 * Every batch is a pure function of (sampling seed, step): a resumed run draws the same
 * batches as an uninterrupted one without saving any generator state beyond the seed. The
 * generator is the ChaCha20 block function (RFC 8439, 20 rounds) keyed by the sampling
 * seed, with the stream (Poisson step, shuffle epoch, or without-replacement step) in the
 * nonce: a keyed pseudorandom function, so batches cannot be predicted without the seed.
 * The sampling seed comes from getrandom at the start of a run and is kept secret from the
 * directions (whose seed is public by design). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "internal.h"
#include "train_internal.h"

#define DOMAIN_POISSON 0x506f6973u /* "Pois" */
#define DOMAIN_SHUFFLE 0x53687566u /* "Shuf" */
#define DOMAIN_WOR 0x576f5231u     /* "WoR1" */

/* A ChaCha20 stream: key = (seed, 0...), nonce = (domain, index); 16 words per block. */
typedef struct {
    uint32_t in[16], out[16];
    unsigned pos;
} stream;

static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

#define QR(a, b, c, d)                                                                     \
    (a += b, d = rotl(d ^ a, 16), c += d, b = rotl(b ^ c, 12), a += b, d = rotl(d ^ a, 8), \
     c += d, b = rotl(b ^ c, 7))

static void chacha_block(stream *s)
{
    uint32_t x[16];
    memcpy(x, s->in, sizeof x);
    for (int i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++)
        s->out[i] = x[i] + s->in[i];
    s->in[12]++; /* the block counter */
    s->pos = 0;
}

static void stream_start(stream *s, uint64_t seed, uint32_t domain, uint64_t index)
{
    static const uint32_t sigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
    memset(s, 0, sizeof *s);
    memcpy(s->in, sigma, sizeof sigma);
    s->in[4] = (uint32_t)seed;
    s->in[5] = (uint32_t)(seed >> 32);
    s->in[13] = domain;
    s->in[14] = (uint32_t)index;
    s->in[15] = (uint32_t)(index >> 32);
    s->pos = 16;
}

static uint32_t next32(stream *s)
{
    if (s->pos == 16)
        chacha_block(s);
    return s->out[s->pos++];
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
    size_t b = 0;
    stream st;
    stream_start(&st, s->seed, DOMAIN_POISSON, t);
    for (size_t i = 0; i < s->n; i++)
        if (next32(&st) < s->threshold || s->all)
            idx[b++] = i;
    return b;
}
