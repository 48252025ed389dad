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
 * words come from dpzo's vector block function (16 or 8 blocks at a time, one per lane); it
 * is checked word for word against libsodium before its first use in a process (32 blocks
 * across the counter's wrap; a mismatch leaves libsodium in charge) and by
 * tests/test_sampler.c. Everything else, and the Poisson words on other CPUs, is
 * libsodium's. */
#include <errno.h>
#include <stdatomic.h>
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

/* ---- Poisson steps on x86-64: dpzo's vector block function -------------------------- *
 * Blocks ctr, ctr + 1, ... of a stream, one per vector lane: the state is 16 vectors (word
 * w of every lane's block), 20 rounds of RFC 8439's quarter rounds on lanes, and a transpose
 * turns them into one block per vector (AVX-512: 16 words in one vector; AVX2: 8 + 8) to
 * compare with the threshold in block order. The counter is word 12 only, lane j's counter
 * ctr + j modulo 2^32, as in dpzo__chacha20_words. */

enum { SAMPLER_SODIUM = DPZO_SAMPLER_SODIUM, SAMPLER_AVX2 = DPZO_SAMPLER_AVX2,
       SAMPLER_AVX512 = DPZO_SAMPLER_AVX512 };

static _Atomic int sampler_impl_forced = -1;

/* M(w) for the state words but the counter */
#define BUT12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(13) M(14) M(15)

/* The 20 rounds on state vectors x0 .. x15 with the vector operations ADD, XOR, ROT, unrolled:
 * GCC 12 then keeps AVX2's 16 state vectors in the 16 registers but for about 5 stores and
 * 5 loads per double round (27 stack accesses per double round as a loop: 89 against 77 us
 * per 60,000 words; AVX-512's 32 registers never spill: 50 against 47 us; 2-core AMD EPYC,
 * avx512f). bench/clone_spills.sh BUILD BUILD/trainer/CMakeFiles/dpzo_trainer.dir/sampler.c.o
 * counts each version's stack accesses. */
#define VQR(ADD, XOR, ROT, a, b, c, d)                                                    \
    do {                                                                                  \
        a = ADD(a, b), d = ROT(XOR(d, a), 16), c = ADD(c, d), b = ROT(XOR(b, c), 12);     \
        a = ADD(a, b), d = ROT(XOR(d, a), 8), c = ADD(c, d), b = ROT(XOR(b, c), 7);       \
    } while (0)
#define VROUNDS(ADD, XOR, ROT)                                                            \
    _Pragma("GCC unroll 10") for (int r_ = 0; r_ < 10; r_++) {                            \
        VQR(ADD, XOR, ROT, x0, x4, x8, x12);                                              \
        VQR(ADD, XOR, ROT, x1, x5, x9, x13);                                              \
        VQR(ADD, XOR, ROT, x2, x6, x10, x14);                                             \
        VQR(ADD, XOR, ROT, x3, x7, x11, x15);                                             \
        VQR(ADD, XOR, ROT, x0, x5, x10, x15);                                             \
        VQR(ADD, XOR, ROT, x1, x6, x11, x12);                                             \
        VQR(ADD, XOR, ROT, x2, x7, x8, x13);                                              \
        VQR(ADD, XOR, ROT, x3, x4, x9, x14);                                              \
    }

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SAMPLER_X86 1
#define AVX512_FN static inline __attribute__((always_inline, target("avx512f")))
#define AVX2_FN static inline __attribute__((always_inline, target("avx2")))

#define ROT512(x, r) _mm512_rol_epi32((x), (r))
/* out[j] = the words of block ctr + j, j < 16 (in[12] is not read) */
AVX512_FN void blocks16(const uint32_t in[16], uint32_t ctr, __m512i out[16])
{
#define INIT512(w) __m512i x##w = _mm512_set1_epi32((int)in[w]);
    BUT12(INIT512)
    const __m512i c12 = _mm512_add_epi32(
        _mm512_set1_epi32((int)ctr),
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    __m512i x12 = c12;
    VROUNDS(_mm512_add_epi32, _mm512_xor_si512, ROT512)
#define FIN512(w) x##w = _mm512_add_epi32(x##w, _mm512_set1_epi32((int)in[w]));
    BUT12(FIN512)
    x12 = _mm512_add_epi32(x12, c12);
    /* transpose: 32-bit then 64-bit interleaves within 128-bit lanes give, for each group
     * of 4 words g and e < 4, u[g][e] = words 4g..4g+3 of block 4L+e in lane L; two
     * 128-bit shuffles gather block 4L+e's four lanes */
    __m512i u[4][4];
#define T512(g, a, b, c, d)                                                               \
    {                                                                                     \
        __m512i t0 = _mm512_unpacklo_epi32(a, b), t1 = _mm512_unpackhi_epi32(a, b);       \
        __m512i t2 = _mm512_unpacklo_epi32(c, d), t3 = _mm512_unpackhi_epi32(c, d);       \
        u[g][0] = _mm512_unpacklo_epi64(t0, t2), u[g][1] = _mm512_unpackhi_epi64(t0, t2); \
        u[g][2] = _mm512_unpacklo_epi64(t1, t3), u[g][3] = _mm512_unpackhi_epi64(t1, t3); \
    }
    T512(0, x0, x1, x2, x3)
    T512(1, x4, x5, x6, x7)
    T512(2, x8, x9, x10, x11)
    T512(3, x12, x13, x14, x15)
    for (int e = 0; e < 4; e++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[0][e], u[1][e], 0x88); /* u0.L0 u0.L2 u1.L0 u1.L2 */
        __m512i v1 = _mm512_shuffle_i32x4(u[0][e], u[1][e], 0xDD); /* u0.L1 u0.L3 u1.L1 u1.L3 */
        __m512i v2 = _mm512_shuffle_i32x4(u[2][e], u[3][e], 0x88);
        __m512i v3 = _mm512_shuffle_i32x4(u[2][e], u[3][e], 0xDD);
        out[e] = _mm512_shuffle_i32x4(v0, v2, 0x88);      /* lane 0: block e */
        out[4 + e] = _mm512_shuffle_i32x4(v1, v3, 0x88);  /* lane 1 */
        out[8 + e] = _mm512_shuffle_i32x4(v0, v2, 0xDD);  /* lane 2 */
        out[12 + e] = _mm512_shuffle_i32x4(v1, v3, 0xDD); /* lane 3 */
    }
}

/* Words [0, 256 ng) of the stream whose first block input is in: the rows below thr into
 * idx[*b ...] (b advanced) */
__attribute__((target("avx512f"))) static void poisson_avx512(const uint32_t in[16],
                                                               size_t ng, uint32_t thr,
                                                               size_t *idx, size_t *b)
{
    const __m512i t = _mm512_set1_epi32((int)thr);
    size_t k = *b;
    for (size_t g = 0; g < ng; g++) {
        __m512i blk[16];
        blocks16(in, (uint32_t)(16 * g), blk);
        for (size_t j = 0; j < 16; j++)
            for (unsigned m = _mm512_cmplt_epu32_mask(blk[j], t); m != 0; m &= m - 1)
                idx[k++] = 256 * g + 16 * j + (size_t)__builtin_ctz(m);
    }
    *b = k;
}

__attribute__((target("avx512f"))) static void words_avx512(const uint32_t in[16],
                                                             size_t ng, uint32_t *out)
{
    for (size_t g = 0; g < ng; g++) {
        __m512i blk[16];
        blocks16(in, in[12] + (uint32_t)(16 * g), blk);
        for (size_t j = 0; j < 16; j++)
            _mm512_storeu_si512((void *)(out + 256 * g + 16 * j), blk[j]);
    }
}

/* AVX2 has no rotation: 16 and 8 are byte shuffles, 12 and 7 two shifts and an OR */
#define ROT256(x, r)                                                                      \
    ((r) == 16  ? _mm256_shuffle_epi8((x), rot16)                                         \
     : (r) == 8 ? _mm256_shuffle_epi8((x), rot8)                                          \
                : _mm256_or_si256(_mm256_slli_epi32((x), (r)), _mm256_srli_epi32((x), 32 - (r))))
/* out[2j], out[2j + 1] = words 0-7, 8-15 of block ctr + j, j < 8 (in[12] is not read) */
AVX2_FN void blocks8(const uint32_t in[16], uint32_t ctr, __m256i out[16])
{
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12,
                                           13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15,
                                           12, 13);
    const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13,
                                          14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12,
                                          13, 14);
#define INIT256(w) __m256i x##w = _mm256_set1_epi32((int)in[w]);
    BUT12(INIT256)
    const __m256i c12 =
        _mm256_add_epi32(_mm256_set1_epi32((int)ctr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256i x12 = c12;
    VROUNDS(_mm256_add_epi32, _mm256_xor_si256, ROT256)
#define FIN256(w) x##w = _mm256_add_epi32(x##w, _mm256_set1_epi32((int)in[w]));
    BUT12(FIN256)
    x12 = _mm256_add_epi32(x12, c12);
    /* transpose each 8 x 8 half: interleaves within 128-bit lanes give u[e] = words
     * 4g..4g+3 of block 4L+e in lane L; the 128-bit permutes pair words 0-3 with 4-7 */
#define T256(h, a0, a1, a2, a3, a4, a5, a6, a7)                                           \
    {                                                                                     \
        __m256i u[2][4];                                                                  \
        T256Q(u[0], a0, a1, a2, a3) T256Q(u[1], a4, a5, a6, a7)                          \
        for (int e = 0; e < 4; e++) {                                                     \
            out[2 * e + (h)] = _mm256_permute2x128_si256(u[0][e], u[1][e], 0x20);         \
            out[2 * (4 + e) + (h)] = _mm256_permute2x128_si256(u[0][e], u[1][e], 0x31);   \
        }                                                                                 \
    }
#define T256Q(v, a, b, c, d)                                                              \
    {                                                                                     \
        __m256i t0 = _mm256_unpacklo_epi32(a, b), t1 = _mm256_unpackhi_epi32(a, b);       \
        __m256i t2 = _mm256_unpacklo_epi32(c, d), t3 = _mm256_unpackhi_epi32(c, d);       \
        v[0] = _mm256_unpacklo_epi64(t0, t2), v[1] = _mm256_unpackhi_epi64(t0, t2);       \
        v[2] = _mm256_unpacklo_epi64(t1, t3), v[3] = _mm256_unpackhi_epi64(t1, t3);       \
    }
    T256(0, x0, x1, x2, x3, x4, x5, x6, x7)
    T256(1, x8, x9, x10, x11, x12, x13, x14, x15)
}

__attribute__((target("avx2"))) static void poisson_avx2(const uint32_t in[16], size_t ng,
                                                          uint32_t thr, size_t *idx, size_t *b)
{
    /* unsigned w < thr as signed (w ^ 2^31) < (thr ^ 2^31) */
    const __m256i sign = _mm256_set1_epi32(INT32_MIN);
    const __m256i t = _mm256_set1_epi32((int)(thr ^ 0x80000000u));
    size_t k = *b;
    for (size_t g = 0; g < ng; g++) {
        __m256i blk[16];
        blocks8(in, (uint32_t)(8 * g), blk);
        for (size_t j = 0; j < 8; j++) {
            __m256i lo = _mm256_cmpgt_epi32(t, _mm256_xor_si256(blk[2 * j], sign));
            __m256i hi = _mm256_cmpgt_epi32(t, _mm256_xor_si256(blk[2 * j + 1], sign));
            unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(lo)) |
                         (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(hi)) << 8;
            for (; m != 0; m &= m - 1)
                idx[k++] = 128 * g + 16 * j + (size_t)__builtin_ctz(m);
        }
    }
    *b = k;
}

__attribute__((target("avx2"))) static void words_avx2(const uint32_t in[16], size_t ng,
                                                        uint32_t *out)
{
    for (size_t g = 0; g < ng; g++) {
        __m256i blk[16];
        blocks8(in, in[12] + (uint32_t)(8 * g), blk);
        for (size_t j = 0; j < 16; j++)
            _mm256_storeu_si256((__m256i *)(void *)(out + 128 * g + 8 * j), blk[j]);
    }
}
#endif

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
#ifdef SAMPLER_X86
    if (impl == SAMPLER_AVX512 && nblocks % 16 == 0 && __builtin_cpu_supports("avx512f")) {
        words_avx512(in, nblocks / 16, out);
        return 0;
    }
    if (impl == SAMPLER_AVX2 && nblocks % 8 == 0 && __builtin_cpu_supports("avx2")) {
        words_avx2(in, nblocks / 8, out);
        return 0;
    }
#else
    (void)in;
    (void)out;
#endif
    return -1;
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
    if (impl < -1 || impl > SAMPLER_AVX512)
        return -1;
#ifdef SAMPLER_X86
    if ((impl == SAMPLER_AVX512 && !__builtin_cpu_supports("avx512f")) ||
        (impl == SAMPLER_AVX2 && !__builtin_cpu_supports("avx2")))
        return -1;
#else
    if (impl == SAMPLER_AVX2 || impl == SAMPLER_AVX512)
        return -1;
#endif
    atomic_store_explicit(&sampler_impl_forced, impl, memory_order_relaxed);
    return 0;
}

static int sampler_impl(void)
{
    int impl = atomic_load_explicit(&sampler_impl_forced, memory_order_relaxed);
#ifdef SAMPLER_X86
    if (impl < 0)
#ifdef DPZO_EMULATE_AVX2 /* a build standing in for an AVX2-only CPU (as philox.c) */
        impl = __builtin_cpu_supports("avx2") ? SAMPLER_AVX2 : SAMPLER_SODIUM;
#else
        impl = __builtin_cpu_supports("avx512f") ? SAMPLER_AVX512
               : __builtin_cpu_supports("avx2")  ? SAMPLER_AVX2
                                                 : SAMPLER_SODIUM;
#endif
#endif
    if (impl < 0 || (impl != SAMPLER_SODIUM && !simd_agrees(impl)))
        impl = SAMPLER_SODIUM;
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
#ifdef SAMPLER_X86
    const int impl = sampler_impl();
    if (impl != SAMPLER_SODIUM) {
        uint32_t in[16];
        state_of(key, nonce, 0, in);
        if (impl == SAMPLER_AVX512) {
            poisson_avx512(in, s->n / 256, s->threshold, idx, &b);
            start = s->n / 256 * 256;
        } else {
            poisson_avx2(in, s->n / 128, s->threshold, idx, &b);
            start = s->n / 128 * 128;
        }
    }
#endif
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
