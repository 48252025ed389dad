/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_sha256.h: SHA-256 (FIPS 180-4) from libsodium, the checksum of noise
 * profiles, claims, the trainer's and the noise search's checkpoints, and the run's
 * fingerprint. It shows that a file is as written (it is not a signature). */
#ifndef DPZO_SHA256_H
#define DPZO_SHA256_H

#include <stddef.h>
#include <sodium.h>

typedef struct {
    crypto_hash_sha256_state st;
} dpzo__sha256;

void dpzo__sha256_init(dpzo__sha256 *s);
void dpzo__sha256_update(dpzo__sha256 *s, const void *data, size_t n);
void dpzo__sha256_final(dpzo__sha256 *s, unsigned char digest[32]);
/* The digest of data[0..n) as 64 lowercase hex digits and a terminating NUL. */
void dpzo__sha256_hex(const void *data, size_t n, char hex[65]);

#endif
