/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/checkpoint.c: the checkpoint file (docs/trainer.md, section 6).
 *
 * Layout, all little-endian: a 208-byte header (magic "DPZOCKPT", u32 version, the run's
 * state: train_internal.h, dpzo__ckpt_state, in its field order, 192 bytes in all, then
 * zeros), the state as n_params float32 (IEEE-754 bits: theta, then for the stagewise
 * algorithms the stage's anchor, then for dpzopo the mask; the caller says how many), then
 * the SHA-256 of everything before it. A reader checks the size, magic, version, the
 * length implied by n_params and the checksum before it trusts any field, so a truncated or
 * corrupted file is refused with a message saying which check failed.
 *
 * Writing is atomic (common/dpzo_io.c, docs/files.md): the bytes go to a temporary created
 * exclusively in PATH's folder, which is fsync'ed and renamed over PATH, and the folder is
 * fsync'ed. A crash at any point leaves PATH either the old checkpoint or the new one, never
 * a mixture; nothing planted at a temporary's name is followed, and a PATH that is a
 * device or FIFO is refused, never replaced. Only regular files are read. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dpzo_io.h"
#include "internal.h"
#include "dpzo_sha256.h"
#include "train_internal.h"

#define CKPT_DIGEST 32u

/* ---- little-endian field codec ----------------------------------------------------- */

typedef struct {
    unsigned char *p;
    size_t pos;
} cursor;

static void put_u32(cursor *c, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        c->p[c->pos++] = (unsigned char)(v >> (8 * i));
}

static void put_u64(cursor *c, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        c->p[c->pos++] = (unsigned char)(v >> (8 * i));
}

static void put_f64(cursor *c, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(c, u);
}

static void put_bytes(cursor *c, const void *b, size_t n)
{
    memcpy(c->p + c->pos, b, n);
    c->pos += n;
}

static uint32_t get_u32(cursor *c)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)c->p[c->pos++] << (8 * i);
    return v;
}

static uint64_t get_u64(cursor *c)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)c->p[c->pos++] << (8 * i);
    return v;
}

static double get_f64(cursor *c)
{
    uint64_t u = get_u64(c);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The header in the order of dpzo__ckpt_state; reading and writing share the order by
 * sharing this one function (put when writing, get when reading). */
static void header_codec(cursor *c, dpzo__ckpt_state *s, int write)
{
#define U32(f) (write ? put_u32(c, s->f) : (void)(s->f = get_u32(c)))
#define U64(f) (write ? put_u64(c, s->f) : (void)(s->f = get_u64(c)))
#define F64(f) (write ? put_f64(c, s->f) : (void)(s->f = get_f64(c)))
    U32(algorithm);
    if (write)
        put_bytes(c, s->fingerprint, 32);
    else {
        memcpy(s->fingerprint, c->p + c->pos, 32);
        c->pos += 32;
    }
    U64(n_params);
    U64(step);
    U64(steps);
    U64(dir_seed);
    U64(sampling_seed);
    U32(batching);
    U64(epoch);
    U64(epoch_pos);
    F64(lr);
    F64(lr_last);
    U32(lr_schedule);
    U64(ledger_steps);
    F64(epsilon_spent);
    U64(metrics_offset);
    F64(loss_sum);
    U64(loss_count);
    F64(test_acc);
    F64(test_loss);
    F64(seconds);
#undef U32
#undef U64
#undef F64
}

/* ---- writing ----------------------------------------------------------------------- */

/* Atomic (common/dpzo_io.c): a temporary created exclusively beside the target, fsync,
 * rename, fsync of the folder; a link at path is written through to its regular target; a
 * device, FIFO or directory at path is refused, never replaced. */
static dpzo_status write_atomic(dpzo_ctx *ctx, const char *path, const unsigned char *buf,
                                size_t n)
{
    char err[DPZO_IO_ERRMAX];
    if (dpzo_io_write_file(path, "checkpoint", buf, n, 0, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
    return DPZO_OK;
}

dpzo_status dpzo__ckpt_write(dpzo_ctx *ctx, const char *path, const dpzo__ckpt_state *st,
                             const float *theta)
{
    size_t n = DPZO_CKPT_HEADER + 4 * (size_t)st->n_params + CKPT_DIGEST;
    unsigned char *buf = malloc(n);
    if (buf == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "checkpoint: out of memory (%zu bytes)", n);
    cursor c = {buf, 0};
    put_bytes(&c, DPZO_CKPT_MAGIC, 8);
    put_u32(&c, DPZO_CKPT_VERSION);
    dpzo__ckpt_state copy = *st;
    header_codec(&c, &copy, 1);
    memset(buf + c.pos, 0, DPZO_CKPT_HEADER - c.pos); /* reserved */
    c.pos = DPZO_CKPT_HEADER;
    for (uint64_t j = 0; j < st->n_params; j++) {
        uint32_t u;
        memcpy(&u, &theta[j], sizeof u);
        put_u32(&c, u);
    }
    dpzo__sha256 h;
    dpzo__sha256_init(&h);
    dpzo__sha256_update(&h, buf, c.pos);
    dpzo__sha256_final(&h, buf + c.pos);
    dpzo_status status = write_atomic(ctx, path, buf, n);
    free(buf);
    return status;
}

/* ---- reading ----------------------------------------------------------------------- */

/* A regular file only (a FIFO or device is refused before any read), at most limit bytes
 * (the size a checkpoint of this model has: a longer file is refused unread). */
static dpzo_status read_whole(dpzo_ctx *ctx, const char *path, size_t limit, unsigned char **out,
                              size_t *n)
{
    char err[DPZO_IO_ERRMAX], *buf = NULL;
    long long size = 0;
    int fd = dpzo_io_open_read(path, "checkpoint", DPZO_IO_LIMIT_CHECKPOINT, &size, err,
                               sizeof err);
    if (fd < 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
    close(fd);
    if ((unsigned long long)size > limit)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "checkpoint %s: %lld bytes, a checkpoint of this model (%zu "
                          "parameters) has %zu: truncated or not from this model",
                          path, size, (limit - DPZO_CKPT_HEADER - CKPT_DIGEST) / 4, limit);
    if (dpzo_io_read_file(path, "checkpoint", limit, &buf, n, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
    *out = (unsigned char *)buf;
    return DPZO_OK;
}

static dpzo_status check_frame(dpzo_ctx *ctx, const char *path, const unsigned char *buf,
                               size_t n, size_t n_params)
{
    const size_t want = DPZO_CKPT_HEADER + 4 * n_params + CKPT_DIGEST;
    if ((n < 8 && memcmp(buf, DPZO_CKPT_MAGIC, n) != 0) ||
        (n >= 8 && memcmp(buf, DPZO_CKPT_MAGIC, 8) != 0))
        return dpzo__fail(ctx, DPZO_EPARSE, "checkpoint %s: not a dpzo checkpoint (bad magic)",
                          path);
    if (n < 12)
        return dpzo__fail(ctx, DPZO_EPARSE, "checkpoint %s: truncated (%zu bytes)", path, n);
    cursor c = {(unsigned char *)buf, 8};
    uint32_t version = get_u32(&c);
    if (version != DPZO_CKPT_VERSION)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "checkpoint %s: format version %u, this dpzo reads version %u", path,
                          version, DPZO_CKPT_VERSION);
    if (n != want)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "checkpoint %s: %zu bytes, a checkpoint of this model (%zu "
                          "parameters) has %zu: truncated or not from this model",
                          path, n, n_params, want);
    unsigned char digest[32];
    dpzo__sha256 h;
    dpzo__sha256_init(&h);
    dpzo__sha256_update(&h, buf, n - CKPT_DIGEST);
    dpzo__sha256_final(&h, digest);
    if (memcmp(digest, buf + n - CKPT_DIGEST, CKPT_DIGEST) != 0)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "checkpoint %s: SHA-256 checksum mismatch: the file is corrupted", path);
    return DPZO_OK;
}

/* Each field against its domain (the checksum only says the file is as written, not that
 * what was written is sane: a re-hashed edit must still be refused). The caller compares
 * the fields against its run's configuration. */
static dpzo_status check_fields(dpzo_ctx *ctx, const char *path, const dpzo__ckpt_state *s,
                                const unsigned char *state, size_t n_params)
{
#define BAD(...) return dpzo__fail(ctx, DPZO_EPARSE, __VA_ARGS__)
    if (s->algorithm > DPZO_ALG_DPMD)
        BAD("checkpoint %s: field algorithm is %u (0 to %d accepted)", path,
            (unsigned)s->algorithm, (int)DPZO_ALG_DPMD);
    if (s->batching > DPZO_BATCH_SHUFFLE)
        BAD("checkpoint %s: field batching is %u (0 poisson or 1 shuffle accepted)", path,
            (unsigned)s->batching);
    if (s->lr_schedule > DPZO_LR_COSINE)
        BAD("checkpoint %s: field lr_schedule is %u (0 to %d accepted)", path,
            (unsigned)s->lr_schedule, (int)DPZO_LR_COSINE);
    if (s->steps == 0 || s->step > s->steps)
        BAD("checkpoint %s: field step is %llu of steps %llu (0 <= step <= steps, steps >= 1)",
            path, (unsigned long long)s->step, (unsigned long long)s->steps);
    if (s->ledger_steps != s->step)
        BAD("checkpoint %s: field ledger_steps is %llu, step is %llu (they must agree)", path,
            (unsigned long long)s->ledger_steps, (unsigned long long)s->step);
    if (!(isfinite(s->lr) && s->lr > 0))
        BAD("checkpoint %s: field lr is %g (a finite value > 0 accepted)", path, s->lr);
    if (!(isfinite(s->lr_last) && s->lr_last >= 0))
        BAD("checkpoint %s: field lr_last is %g (a finite value >= 0 accepted)", path,
            s->lr_last);
    if (!(s->epsilon_spent >= 0)) /* +inf: non-private; NaN refused */
        BAD("checkpoint %s: field epsilon_spent is %g (>= 0 or inf accepted)", path,
            s->epsilon_spent);
    if (!(isfinite(s->loss_sum) && s->loss_sum >= 0) || (s->loss_count == 0 && s->loss_sum != 0))
        BAD("checkpoint %s: field loss_sum is %g over %llu losses (a finite sum >= 0, 0 when "
            "there are none)",
            path, s->loss_sum, (unsigned long long)s->loss_count);
    if (!(isnan(s->test_acc) || (s->test_acc >= 0 && s->test_acc <= 1)))
        BAD("checkpoint %s: field test_acc is %g (in [0, 1], or NaN before an evaluation)", path,
            s->test_acc);
    if (s->test_loss < 0)
        BAD("checkpoint %s: field test_loss is %g (>= 0, or NaN before an evaluation)", path,
            s->test_loss);
    if (!(isfinite(s->seconds) && s->seconds >= 0))
        BAD("checkpoint %s: field seconds is %g (a finite value >= 0 accepted)", path,
            s->seconds);
    if (s->metrics_offset > ((uint64_t)1 << 62))
        BAD("checkpoint %s: field metrics_offset is %llu (at most 2^62 accepted)", path,
            (unsigned long long)s->metrics_offset);
    cursor c = {(unsigned char *)state, 0};
    for (size_t j = 0; j < n_params; j++) {
        uint32_t u = get_u32(&c);
        float v;
        memcpy(&v, &u, sizeof v);
        if (!isfinite(v))
            BAD("checkpoint %s: state value %zu (theta, anchor or mask) is %g (finite values "
                "accepted)",
                path, j, (double)v);
    }
#undef BAD
    return DPZO_OK;
}

dpzo_status dpzo__ckpt_read(dpzo_ctx *ctx, const char *path, size_t n_params,
                            dpzo__ckpt_state *st, float *theta)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    size_t want = DPZO_CKPT_HEADER + 4 * n_params + CKPT_DIGEST;
    dpzo_status status = read_whole(ctx, path, want, &buf, &n);
    if (status != DPZO_OK)
        return status;
    status = check_frame(ctx, path, buf, n, n_params);
    if (status == DPZO_OK) {
        cursor c = {buf, 12};
        header_codec(&c, st, 0);
        if (st->n_params != n_params)
            status = dpzo__fail(ctx, DPZO_EPARSE,
                                "checkpoint %s: holds %llu parameters, the model has %zu", path,
                                (unsigned long long)st->n_params, n_params);
    }
    if (status == DPZO_OK)
        status = check_fields(ctx, path, st, buf + DPZO_CKPT_HEADER, n_params);
    if (status == DPZO_OK) {
        cursor c = {buf, DPZO_CKPT_HEADER};
        for (size_t j = 0; j < n_params; j++) {
            uint32_t u = get_u32(&c);
            memcpy(&theta[j], &u, sizeof u);
        }
    }
    free(buf);
    return status;
}
