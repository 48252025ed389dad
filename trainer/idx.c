/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/idx.c: IDX data files (Fashion-MNIST), and seeded public/private splits.
 *
 * IDX (LeCun et al.): a 4-byte magic 0x00 0x00 <type> <ndims>, then ndims big-endian uint32
 * sizes, then the data in row-major order. dpzo reads unsigned-byte files only: images
 * have magic 0x00000803 (n x rows x cols), labels 0x00000801 (n). Files are read through
 * zlib's gzopen/gzread, which reads gzip-compressed and plain files alike.
 *
 * Every failure to open or parse a file is DPZO_EPARSE with a message that names the file
 * and what is wrong with it. On failure *out is left empty (safe to dpzo_dataset_free). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "dpzo_io.h"
#include "internal.h"
#include "dpzo/model.h"

#define IDX_MAGIC_IMAGES 0x00000803u
#define IDX_MAGIC_LABELS 0x00000801u
/* Largest accepted image side: far beyond any data set the trainer is meant for, small
 * enough that rows * cols cannot overflow. */
#define IDX_MAX_SIDE 65536u
/* Bytes requested from gzread at a time (it takes an unsigned int). */
#define IDX_READ_CHUNK ((size_t)1 << 20)

void dpzo_dataset_free(dpzo_dataset *ds)
{
    if (ds == NULL)
        return;
    free(ds->x);
    free(ds->y);
    memset(ds, 0, sizeof *ds);
}

static uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
           (uint32_t)p[3];
}

/* Reads up to n bytes; returns how many were read, or -1 on a read/decompression error
 * (message in *err). A short count means the file ended (or, compressed, was cut short). */
static long long read_bytes(gzFile f, unsigned char *buf, size_t n, const char **err)
{
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < IDX_READ_CHUNK ? n - got : IDX_READ_CHUNK;
        int r = gzread(f, buf + got, (unsigned)want);
        if (r < 0) {
            int code = 0;
            *err = gzerror(f, &code);
            if (code == Z_BUF_ERROR)
                break; /* a compressed stream cut short: a truncated file */
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long long)got;
}

/* Reads an IDX unsigned-byte file with the given magic: its sizes (ndims of them) into
 * dims and its data (prod dims bytes) into a new array in *data. A compressed stream
 * that ends early reads as a truncated file. */
static dpzo_status read_idx(dpzo_ctx *ctx, const char *path, uint32_t magic, uint32_t *dims,
                            unsigned char **data, size_t *count)
{
    const char *what = magic == IDX_MAGIC_IMAGES ? "image" : "label";
    unsigned ndims = magic & 0xffu;
    *data = NULL;
    *count = 0;
    /* a regular file only: a FIFO or device is refused before any read (docs/files.md) */
    char ioerr[DPZO_IO_ERRMAX], label[32];
    snprintf(label, sizeof label, "IDX %s file", what); /* "IDX image file 'PATH': ..." */
    int fd = dpzo_io_open_read(path, label, DPZO_IO_LIMIT_IDX, NULL, ioerr, sizeof ioerr);
    if (fd < 0)
        return dpzo__fail(ctx, DPZO_EPARSE, "%s", ioerr);
    gzFile f = gzdopen(fd, "rb");
    if (f == NULL) {
        close(fd);
        return dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': cannot open (out of memory)",
                          what, path);
    }
    gzbuffer(f, 1u << 17);

    dpzo_status st = DPZO_OK;
    const char *zerr = NULL;
    unsigned char head[16];
    size_t head_len = 4 + 4 * (size_t)ndims;
    long long got = read_bytes(f, head, head_len, &zerr);
    if (got < 0) {
        st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': read error in the header (%s)",
                        what, path, zerr);
        goto done;
    }
    if (got == 0) {
        st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': file is empty", what, path);
        goto done;
    }
    if (got < 4) {
        st = dpzo__fail(ctx, DPZO_EPARSE,
                        "IDX %s file '%s': truncated header (%lld of 4 magic bytes)", what,
                        path, got);
        goto done;
    }
    uint32_t m = be32(head);
    if (m != magic) {
        st = dpzo__fail(ctx, DPZO_EPARSE,
                        "IDX %s file '%s': wrong magic number 0x%08x (expected 0x%08x: "
                        "unsigned bytes, %u dimension%s)",
                        what, path, (unsigned)m, (unsigned)magic, ndims, ndims == 1 ? "" : "s");
        goto done;
    }
    if ((size_t)got < head_len) {
        st = dpzo__fail(ctx, DPZO_EPARSE,
                        "IDX %s file '%s': truncated header (%lld of %zu bytes)", what, path,
                        got, head_len);
        goto done;
    }
    size_t total = 1;
    for (unsigned d = 0; d < ndims; d++) {
        dims[d] = be32(head + 4 + 4 * d);
        if (dims[d] == 0) {
            st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': dimension %u is 0", what,
                            path, d);
            goto done;
        }
        if (d > 0 && dims[d] > IDX_MAX_SIDE) {
            st = dpzo__fail(ctx, DPZO_EPARSE,
                            "IDX %s file '%s': dimension %u is %u (at most %u accepted)", what,
                            path, d, (unsigned)dims[d], IDX_MAX_SIDE);
            goto done;
        }
        if (total > SIZE_MAX / dims[d]) {
            st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': data size overflows", what,
                            path);
            goto done;
        }
        total *= dims[d];
    }

    /* The data, in growing blocks: a header that claims more than the file holds ends in
     * a "truncated" error, not in one huge allocation. */
    unsigned char *buf = NULL;
    size_t have = 0, cap = 0;
    while (have < total) {
        if (have == cap) {
            size_t ncap = cap == 0 ? ((size_t)1 << 16) : 2 * cap;
            if (ncap > total)
                ncap = total;
            /* the decompressed data is bounded by the header's size (one byte more is an
             * error below), and what is held at once by the limit */
            if (ncap > DPZO_IO_LIMIT_IDX) {
                free(buf);
                st = dpzo__fail(ctx, DPZO_EPARSE,
                                "IDX %s file '%s': the header announces %zu bytes of data, "
                                "more than the limit of %zu",
                                what, path, total, (size_t)DPZO_IO_LIMIT_IDX);
                goto done;
            }
            unsigned char *nb = realloc(buf, ncap);
            if (nb == NULL) {
                free(buf);
                st = dpzo__fail(ctx, DPZO_ENOMEM, "IDX %s file '%s': out of memory (%zu bytes)",
                                what, path, ncap);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        long long r = read_bytes(f, buf + have, cap - have, &zerr);
        if (r < 0) {
            free(buf);
            st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': read error (%s)", what, path,
                            zerr);
            goto done;
        }
        have += (size_t)r;
        if (have < cap)
            break; /* end of file */
    }
    if (have < total) {
        free(buf);
        st = dpzo__fail(ctx, DPZO_EPARSE,
                        "IDX %s file '%s': truncated data (%zu of %zu bytes after the header)",
                        what, path, have, total);
        goto done;
    }
    unsigned char extra;
    got = read_bytes(f, &extra, 1, &zerr);
    if (got != 0) {
        free(buf);
        if (got < 0)
            st = dpzo__fail(ctx, DPZO_EPARSE, "IDX %s file '%s': read error (%s)", what, path,
                            zerr);
        else
            st = dpzo__fail(ctx, DPZO_EPARSE,
                            "IDX %s file '%s': unexpected data after the %zu bytes the header "
                            "announces",
                            what, path, total);
        goto done;
    }
    *data = buf;
    *count = total;
done:
    gzclose(f);
    return st;
}

dpzo_status dpzo_idx_load(dpzo_ctx *ctx, const char *images_path, const char *labels_path,
                          dpzo_dataset *out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "dpzo_idx_load: no output dataset given");
    memset(out, 0, sizeof *out);
    if (images_path == NULL || labels_path == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "dpzo_idx_load: no %s file name given",
                          images_path == NULL ? "image" : "label");
    uint32_t idims[3], ldims[1];
    unsigned char *pix = NULL, *lab = NULL;
    size_t npix, nlab;
    dpzo_status st = read_idx(ctx, images_path, IDX_MAGIC_IMAGES, idims, &pix, &npix);
    if (st != DPZO_OK)
        return st;
    st = read_idx(ctx, labels_path, IDX_MAGIC_LABELS, ldims, &lab, &nlab);
    if (st != DPZO_OK) {
        free(pix);
        return st;
    }
    if (idims[0] != ldims[0]) {
        free(pix);
        free(lab);
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "IDX files '%s' and '%s': count mismatch (%u images, %u labels)",
                          images_path, labels_path, (unsigned)idims[0], (unsigned)ldims[0]);
    }
    size_t n = idims[0], dim = (size_t)idims[1] * idims[2];
    float *x = malloc(npix * sizeof *x);
    int32_t *y = malloc(n * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        free(pix);
        free(lab);
        return dpzo__fail(ctx, DPZO_ENOMEM, "IDX '%s': out of memory for %zu images",
                          images_path, n);
    }
    for (size_t i = 0; i < npix; i++)
        x[i] = (float)pix[i] / 255.0f;
    int maxlab = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = lab[i];
        if (lab[i] > maxlab)
            maxlab = lab[i];
    }
    free(pix);
    free(lab);
    out->n = n;
    out->dim = dim;
    out->rows = idims[1];
    out->cols = idims[2];
    out->n_classes = maxlab + 1;
    out->x = x;
    out->y = y;
    return DPZO_OK;
}

/* ---- Fashion-MNIST ----------------------------------------------------------------- */

#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
static const char *const fmnist_base[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

/* The readable path of dir/base.gz or else dir/base into path; 0 when neither exists. */
static int fmnist_file(const char *dir, const char *base, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/%s.gz", dir, base);
    if (n > 0 && (size_t)n < size && access(path, R_OK) == 0)
        return 1;
    n = snprintf(path, size, "%s/%s", dir, base);
    return n > 0 && (size_t)n < size && access(path, R_OK) == 0;
}

static int fmnist_complete(const char *dir)
{
    char path[4096];
    for (int k = 0; k < 4; k++)
        if (!fmnist_file(dir, fmnist_base[k], path, sizeof path))
            return 0;
    return 1;
}

dpzo_status dpzo_fmnist_find(dpzo_ctx *ctx, const char *dir, char *found, size_t found_size)
{
    const char *where = "the directory given";
    if (dir == NULL) {
        const char *env = getenv("DPZO_FMNIST_DIR");
        if (env != NULL && env[0] != '\0') {
            dir = env;
            where = "$DPZO_FMNIST_DIR";
        } else {
            dir = FMNIST_DEFAULT_DIR;
            where = "the default location (Debian package dataset-fashion-mnist)";
        }
    }
    if (!fmnist_complete(dir))
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "Fashion-MNIST not found in '%s' (%s): expected "
                          "{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]; install "
                          "dataset-fashion-mnist or set DPZO_FMNIST_DIR",
                          dir, where);
    if (found != NULL) {
        size_t len = strlen(dir);
        if (len >= found_size)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "Fashion-MNIST directory '%s' does not fit in %zu bytes", dir,
                              found_size);
        memcpy(found, dir, len + 1);
    }
    return DPZO_OK;
}

dpzo_status dpzo_fmnist_load(dpzo_ctx *ctx, const char *dir, const char *split,
                             dpzo_dataset *out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "dpzo_fmnist_load: no output dataset given");
    memset(out, 0, sizeof *out);
    int k;
    if (split != NULL && strcmp(split, "train") == 0)
        k = 0;
    else if (split != NULL && strcmp(split, "test") == 0)
        k = 2;
    else
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "Fashion-MNIST split must be \"train\" or \"test\", got \"%s\"",
                          split != NULL ? split : "(null)");
    char found[4096];
    dpzo_status st = dpzo_fmnist_find(ctx, dir, found, sizeof found);
    if (st != DPZO_OK)
        return st;
    char ipath[4200], lpath[4200];
    if (!fmnist_file(found, fmnist_base[k], ipath, sizeof ipath) ||
        !fmnist_file(found, fmnist_base[k + 1], lpath, sizeof lpath))
        return dpzo__fail(ctx, DPZO_EPARSE, "Fashion-MNIST %s files vanished from '%s'", split,
                          found);
    return dpzo_idx_load(ctx, ipath, lpath, out);
}

/* ---- public/private split ------------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood 2014): state += 0x9E3779B97F4A7C15, then a mixing of the
 * state; the state starts at the seed. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) (bound >= 1) without modulo bias: draws below 2^64 mod bound are
 * rejected. */
static uint64_t uniform_below(uint64_t *state, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = splitmix64(state);
        if (r >= threshold)
            return r % bound;
    }
}

static dpzo_status alloc_part(const dpzo_dataset *ds, size_t n, dpzo_dataset *part)
{
    memset(part, 0, sizeof *part);
    part->n = n;
    part->dim = ds->dim;
    part->rows = ds->rows;
    part->cols = ds->cols;
    part->n_classes = ds->n_classes;
    if (n == 0)
        return DPZO_OK;
    part->x = malloc(n * ds->dim * sizeof *part->x);
    part->y = malloc(n * sizeof *part->y);
    return part->x != NULL && part->y != NULL ? DPZO_OK : DPZO_ENOMEM;
}

/* The permutation is a Fisher-Yates shuffle of 0..n-1 driven by splitmix64(seed): for
 * i = n-1 down to 1, swap places i and uniform_below(i + 1). The rows at its first n_public
 * places go to pub, the others to priv; both keep the rows' original relative order. */
dpzo_status dpzo_dataset_split(dpzo_ctx *ctx, const dpzo_dataset *ds, size_t n_public,
                               uint64_t seed, dpzo_dataset *pub, dpzo_dataset *priv)
{
    if (pub == NULL || priv == NULL || ds == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "dpzo_dataset_split: NULL dataset");
    memset(pub, 0, sizeof *pub);
    memset(priv, 0, sizeof *priv);
    if (n_public > ds->n)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "public rows: asked for %zu of a data set of %zu rows", n_public,
                          ds->n);
    size_t n = ds->n;
    size_t *perm = malloc((n > 0 ? n : 1) * sizeof *perm);
    unsigned char *is_pub = calloc(n > 0 ? n : 1, 1);
    if (perm == NULL || is_pub == NULL) {
        free(perm);
        free(is_pub);
        return dpzo__fail(ctx, DPZO_ENOMEM, "dpzo_dataset_split: out of memory (%zu rows)", n);
    }
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t state = seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)uniform_below(&state, (uint64_t)i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t k = 0; k < n_public; k++)
        is_pub[perm[k]] = 1;
    free(perm);
    if (alloc_part(ds, n_public, pub) != DPZO_OK || alloc_part(ds, n - n_public, priv) != DPZO_OK) {
        free(is_pub);
        dpzo_dataset_free(pub);
        dpzo_dataset_free(priv);
        return dpzo__fail(ctx, DPZO_ENOMEM, "dpzo_dataset_split: out of memory (%zu rows)", n);
    }
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        dpzo_dataset *part = is_pub[i] ? pub : priv;
        size_t r = is_pub[i] ? a++ : b++;
        memcpy(part->x + r * ds->dim, ds->x + i * ds->dim, ds->dim * sizeof *ds->x);
        part->y[r] = ds->y[i];
    }
    free(is_pub);
    return DPZO_OK;
}
