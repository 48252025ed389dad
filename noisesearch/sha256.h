/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/sha256.h: SHA-256 (FIPS 180-4), private to noisesearch/ (profile checksums). */
#ifndef DPZO_SHA256_H
#define DPZO_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];         /* chaining state */
    uint64_t bytes;        /* message length so far */
    unsigned char buf[64]; /* partial block */
    size_t fill;           /* bytes in buf */
} dpzo__sha256;

void dpzo__sha256_init(dpzo__sha256 *s);
void dpzo__sha256_update(dpzo__sha256 *s, const void *data, size_t n);
void dpzo__sha256_final(dpzo__sha256 *s, unsigned char digest[32]);
/* The digest of data[0..n) as 64 lowercase hex digits and a terminating NUL. */
void dpzo__sha256_hex(const void *data, size_t n, char hex[65]);

#endif
