/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz/ckpt_input.h: the input of the checkpoint targets (train_ckpt, lmo_search_ckpt).
 * Both checkpoints end in a SHA-256 of everything before it, so an edit that is not
 * re-hashed only ever reaches the checksum test; a forger re-hashes, and so do modes 1
 * and 2, to reach the field and domain checks behind it.
 *   mode 0: the fuzzer's bytes as they are;
 *   mode 1: the valid checkpoint with (offset lo, offset hi, byte) edits, re-hashed;
 *   mode 2 (head > 0): the valid checkpoint's first `head` bytes, then the fuzzer's bytes,
 *           then their SHA-256 (forged arrays behind a valid header). */
#ifndef DPZO_FUZZ_CKPT_INPUT_H
#define DPZO_FUZZ_CKPT_INPUT_H

#include "fuzz_util.h"
#include "dpzo_sha256.h"

static unsigned char *fz_ckpt_input(fz_in *in, const uint8_t *data, size_t size, int mode,
                                    const unsigned char *valid, size_t valid_n, size_t head,
                                    size_t *n)
{
    size_t rest = size - in->pos;
    *n = mode == 0 ? rest : mode == 1 ? valid_n : head + rest + 32;
    unsigned char *buf = malloc(*n + 1);
    if (buf == NULL)
        abort();
    if (mode == 0) {
        memcpy(buf, data + in->pos, rest);
        return buf;
    }
    if (mode == 1) {
        memcpy(buf, valid, valid_n);
        while (in->pos + 3 <= size) {
            size_t off = fz_u8(in);
            off |= (size_t)fz_u8(in) << 8;
            buf[off % (valid_n - 32)] = fz_u8(in);
        }
    } else {
        memcpy(buf, valid, head);
        memcpy(buf + head, data + in->pos, rest);
    }
    dpzo__sha256 h;
    dpzo__sha256_init(&h);
    dpzo__sha256_update(&h, buf, *n - 32);
    dpzo__sha256_final(&h, buf + *n - 32);
    return buf;
}

#endif
