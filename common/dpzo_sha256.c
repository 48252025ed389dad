/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_sha256.c: SHA-256 through libsodium's crypto_hash_sha256 (issue 29; until
 * then dpzo had its own, whose digests tests/test_sha256.c keeps). libsodium's SHA-256 needs
 * no sodium_init (it has one implementation and no state outside the caller's). */
#include "dpzo_sha256.h"

void dpzo__sha256_init(dpzo__sha256 *s) { crypto_hash_sha256_init(&s->st); }

void dpzo__sha256_update(dpzo__sha256 *s, const void *data, size_t n)
{
    if (n > 0) /* an empty update may come with data == NULL */
        crypto_hash_sha256_update(&s->st, data, n);
}

void dpzo__sha256_final(dpzo__sha256 *s, unsigned char digest[32])
{
    crypto_hash_sha256_final(&s->st, digest);
}

void dpzo__sha256_hex(const void *data, size_t n, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char d[32];
    dpzo__sha256 s;
    dpzo__sha256_init(&s);
    dpzo__sha256_update(&s, data, n);
    dpzo__sha256_final(&s, d);
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}
