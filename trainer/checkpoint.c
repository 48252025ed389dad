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
 * Writing is atomic: the bytes go to PATH.tmp, which is flushed and fsync'ed, renamed over
 * PATH, and the directory is fsync'ed. A crash at any point leaves PATH either the old
 * checkpoint or the new one, never a mixture; a stale PATH.tmp is never read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "sha256.h"
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

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync of the directory holding path, so the rename itself is durable. */
static int sync_dir(const char *path)
{
    char dir[DPZO_TRAIN_PATH_MAX + 8];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static dpzo_status write_atomic(dpzo_ctx *ctx, const char *path, const unsigned char *buf,
                                size_t n)
{
    char tmp[DPZO_TRAIN_PATH_MAX + 8];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return dpzo__fail(ctx, DPZO_EINVAL, "checkpoint: path too long: %s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "checkpoint: cannot create %s: %s", tmp,
                          strerror(errno));
    int bad = write_all(fd, buf, n) != 0 || fsync(fd) != 0;
    int err = errno;
    bad |= close(fd) != 0;
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        unlink(tmp);
        return dpzo__fail(ctx, DPZO_EINVAL, "checkpoint: cannot write %s: %s", path,
                          strerror(err));
    }
    if (sync_dir(path) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "checkpoint: wrote %s but cannot sync its directory: %s", path,
                          strerror(errno));
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

static dpzo_status read_whole(dpzo_ctx *ctx, const char *path, unsigned char **out, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "checkpoint: cannot open %s: %s", path,
                          strerror(errno));
    struct stat sb;
    unsigned char *buf = NULL;
    int bad = fstat(fileno(f), &sb) != 0 || sb.st_size < 0 ||
              (buf = malloc((size_t)sb.st_size + 1)) == NULL ||
              fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size;
    fclose(f);
    if (bad) {
        free(buf);
        return dpzo__fail(ctx, DPZO_EINVAL, "checkpoint: cannot read %s", path);
    }
    *out = buf;
    *n = (size_t)sb.st_size;
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

dpzo_status dpzo__ckpt_read(dpzo_ctx *ctx, const char *path, size_t n_params,
                            dpzo__ckpt_state *st, float *theta)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    dpzo_status status = read_whole(ctx, path, &buf, &n);
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
