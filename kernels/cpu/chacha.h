/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cpu/chacha.h: ChaCha20 blocks on vectors for the sampler's Poisson steps
 * (kernels/cpu/chacha.c; the reference is libsodium's keystream). in[16] is RFC 8439's
 * initial state of a stream (constants, key, counter, nonce). */
#ifndef DPZO_KERNELS_CHACHA_H
#define DPZO_KERNELS_CHACHA_H
#include <stddef.h>
#include <stdint.h>

enum { DPZO_CHACHA_AVX2 = 1, DPZO_CHACHA_AVX512 = 2 };

/* 1 when this CPU (and build) runs version impl. */
int dpzo__chacha_have(int impl);
/* A Poisson step's words 0 .. m-1 of the stream (in[12] is not read: block 0 first), m the
 * whole groups of 256 (AVX-512) or 128 (AVX2) words in n: row i < m joins iff word i is
 * below thr, appended to idx[*b ...] in ascending order (b advanced). Returns m (0 when
 * the CPU lacks impl). */
size_t dpzo__chacha_poisson(int impl, const uint32_t in[16], size_t n, uint32_t thr,
                            size_t *idx, size_t *b);
/* The words of blocks in[12], in[12] + 1, ... (nblocks of them, a multiple of 16 for
 * AVX-512, of 8 for AVX2; the counter modulo 2^32); -1 when not possible. */
int dpzo__chacha_words(int impl, const uint32_t in[16], size_t nblocks, uint32_t *out);

#endif
