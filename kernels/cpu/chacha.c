/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cpu/chacha.c: the batch sampler's hot loop, ChaCha20 blocks (RFC 8439, 20 rounds)
 * 16 (AVX-512) or 8 (AVX2) at a time, one block per vector lane, for the Poisson steps of
 * trainer/sampler.c (docs/trainer.md section 2.3).
 *
 * The sampler's keystream is libsodium's; this kernel exists because a Poisson step reads n
 * words and libsodium 1.0.18 computes them at 2.4 times the cost (bench/results/crypto.md).
 * Like the CUDA kernels against the CPU reference, it must agree with its reference,
 * libsodium, word for word: trainer/sampler.c compares them before the kernel's first use
 * in a process, and tests/test_sampler.c compares them across the counter's wrap.
 *
 * Blocks ctr, ctr + 1, ... of a stream, one per vector lane: the state is 16 vectors (word w
 * of every lane's block), 20 rounds of RFC 8439's quarter rounds on lanes, and a transpose
 * turns them into one block per vector (AVX-512: 16 words in one vector; AVX2: 8 + 8) to
 * compare with the threshold in block order. The counter is word 12 only, lane j's counter
 * ctr + j modulo 2^32 (RFC 8439's 32-bit counter). */
#include <stddef.h>
#include <stdint.h>
#include "chacha.h"

/* M(w) for the state words but the counter */
#define BUT12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(13) M(14) M(15)

/* The 20 rounds on state vectors x0 .. x15 with the vector operations ADD, XOR, ROT, unrolled:
 * GCC 12 then keeps AVX2's 16 state vectors in the 16 registers but for about 5 stores and
 * 5 loads per double round (27 stack accesses per double round as a loop: 89 against 77 us
 * per 60,000 words; AVX-512's 32 registers never spill: 50 against 47 us; 2-core AMD EPYC,
 * avx512f). bench/clone_spills.sh BUILD BUILD/kernels/CMakeFiles/dpzo_kernels.dir/cpu/chacha.c.o
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
#define CHACHA_X86 1
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

int dpzo__chacha_have(int impl)
{
#ifdef CHACHA_X86
    return (impl == DPZO_CHACHA_AVX512 && __builtin_cpu_supports("avx512f")) ||
           (impl == DPZO_CHACHA_AVX2 && __builtin_cpu_supports("avx2"));
#else
    (void)impl;
    return 0;
#endif
}

size_t dpzo__chacha_poisson(int impl, const uint32_t in[16], size_t n, uint32_t thr,
                            size_t *idx, size_t *b)
{
#ifdef CHACHA_X86
    if (impl == DPZO_CHACHA_AVX512 && __builtin_cpu_supports("avx512f")) {
        poisson_avx512(in, n / 256, thr, idx, b);
        return n / 256 * 256;
    }
    if (impl == DPZO_CHACHA_AVX2 && __builtin_cpu_supports("avx2")) {
        poisson_avx2(in, n / 128, thr, idx, b);
        return n / 128 * 128;
    }
#else
    (void)impl, (void)in, (void)n, (void)thr, (void)idx, (void)b;
#endif
    return 0;
}

int dpzo__chacha_words(int impl, const uint32_t in[16], size_t nblocks, uint32_t *out)
{
#ifdef CHACHA_X86
    if (impl == DPZO_CHACHA_AVX512 && nblocks % 16 == 0 && __builtin_cpu_supports("avx512f")) {
        words_avx512(in, nblocks / 16, out);
        return 0;
    }
    if (impl == DPZO_CHACHA_AVX2 && nblocks % 8 == 0 && __builtin_cpu_supports("avx2")) {
        words_avx2(in, nblocks / 8, out);
        return 0;
    }
#else
    (void)impl, (void)in, (void)nblocks, (void)out;
#endif
    return -1;
}
