/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_idx.c: IDX loading (plain and gzip), its errors, Fashion-MNIST discovery and
 * loading (skipped when the data set is not installed), and seeded public/private splits.
 *
 * Oracles: synthetic IDX files written here byte by byte (so every value read back is
 * known), the published Fashion-MNIST test split (10000 images of 28x28, 1000 per class),
 * and the defining properties of a partition. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "testutil.h"
#include "dpzo/model.h"

static char tmpdir[512];

static int make_tmpdir(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/idx_test_XXXXXX", DPZO_TEST_TMP);
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return ctx_setup(state);
}

static int remove_tmpdir(void **state)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    int rc = system(cmd);
    (void)rc;
    return ctx_teardown(state);
}

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/* Writes bytes to a file, gzip-compressed when gz. */
static void write_file(const char *path, const unsigned char *bytes, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        if (n > 0)
            assert_int_equal(gzwrite(f, bytes, (unsigned)n), (int)n);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
    }
}

static size_t put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return 4;
}

/* An IDX image file's bytes: magic, n, rows, cols, then n * rows * cols pixels, or only
 * the first 60 when the header claims more (returns the length). */
static size_t idx_images(unsigned char *buf, uint32_t magic, uint32_t n, uint32_t rows,
                         uint32_t cols, const unsigned char *pix)
{
    size_t k = put_be32(buf, magic);
    k += put_be32(buf + k, n);
    k += put_be32(buf + k, rows);
    k += put_be32(buf + k, cols);
    size_t np = (size_t)n * rows * cols;
    if (np > 60)
        np = 60;
    memcpy(buf + k, pix, np);
    return k + np;
}

static size_t idx_labels(unsigned char *buf, uint32_t n, const unsigned char *lab)
{
    size_t k = put_be32(buf, 0x00000801u);
    k += put_be32(buf + k, n);
    memcpy(buf + k, lab, n);
    return k + n;
}

/* 5 images of 3 x 4, pixels covering 0 and 255; labels up to 6 (so n_classes = 7). */
#define NI 5
#define NR 3
#define NC 4
static unsigned char pix[NI * NR * NC];
static const unsigned char lab[NI] = {3, 0, 6, 6, 1};

static void fill_pixels(void)
{
    for (size_t i = 0; i < sizeof pix; i++)
        pix[i] = (unsigned char)((i * 37 + 11) % 256);
    pix[0] = 0;
    pix[7] = 255;
}

static void check_loaded(const dpzo_dataset *ds)
{
    assert_int_equal(ds->n, NI);
    assert_int_equal(ds->dim, NR * NC);
    assert_int_equal(ds->rows, NR);
    assert_int_equal(ds->cols, NC);
    assert_int_equal(ds->n_classes, 7);
    for (size_t i = 0; i < sizeof pix; i++)
        if (ds->x[i] != (float)pix[i] / 255.0f)
            fail_msg("pixel %zu: %.9g, expected %u/255", i, ds->x[i], pix[i]);
    assert_true(ds->x[0] == 0.0f && ds->x[7] == 1.0f);
    for (size_t i = 0; i < NI; i++)
        assert_int_equal(ds->y[i], lab[i]);
}

static void roundtrip(void **state, int gz)
{
    dpzo_ctx *ctx = *state;
    fill_pixels();
    unsigned char buf[1024];
    char ip[600], lp[600];
    path_of(ip, sizeof ip, gz ? "rt-images.gz" : "rt-images");
    path_of(lp, sizeof lp, gz ? "rt-labels.gz" : "rt-labels");
    write_file(ip, buf, idx_images(buf, 0x00000803u, NI, NR, NC, pix), gz);
    write_file(lp, buf, idx_labels(buf, NI, lab), gz);
    dpzo_dataset ds;
    assert_ok(ctx, dpzo_idx_load(ctx, ip, lp, &ds));
    check_loaded(&ds);
    dpzo_dataset_free(&ds);
    assert_null(ds.x);
    assert_int_equal(ds.n, 0);
}

static void test_roundtrip_plain(void **state) { roundtrip(state, 0); }

/* Every byte value: pixel p reads as the float nearest p / 255. */
static void test_pixel_values(void **state)
{
    dpzo_ctx *ctx = *state;
    unsigned char all[256], buf[512];
    const unsigned char one[1] = {9};
    for (int v = 0; v < 256; v++)
        all[v] = (unsigned char)(255 - v);
    size_t k = put_be32(buf, 0x00000803u);
    k += put_be32(buf + k, 1);
    k += put_be32(buf + k, 16);
    k += put_be32(buf + k, 16);
    memcpy(buf + k, all, 256);
    char ip[600], lp[600];
    path_of(ip, sizeof ip, "all-images");
    path_of(lp, sizeof lp, "all-labels");
    write_file(ip, buf, k + 256, 0);
    write_file(lp, buf, idx_labels(buf, 1, one), 0);
    dpzo_dataset ds;
    assert_ok(ctx, dpzo_idx_load(ctx, ip, lp, &ds));
    assert_int_equal(ds.dim, 256);
    assert_int_equal(ds.n_classes, 10);
    for (int v = 0; v < 256; v++) {
        double want = (255 - v) / 255.0;
        float got = ds.x[v], lo = nextafterf(got, -1.0f), hi = nextafterf(got, 2.0f);
        /* nearest: no neighbouring float is closer to p / 255 */
        assert_true(fabs(got - want) <= fabs(lo - want) && fabs(got - want) <= fabs(hi - want));
    }
    dpzo_dataset_free(&ds);
}
static void test_roundtrip_gzip(void **state) { roundtrip(state, 1); }

/* Loads and expects EPARSE with a message containing both the file's name and `want`. */
static void expect_error(dpzo_ctx *ctx, const char *ip, const char *lp, const char *bad,
                         const char *want)
{
    dpzo_dataset ds;
    memset(&ds, 0x5a, sizeof ds);
    dpzo_status st = dpzo_idx_load(ctx, ip, lp, &ds);
    const char *msg = dpzo_ctx_errmsg(ctx);
    if (st != DPZO_EPARSE)
        fail_msg("expected a parse error naming '%s' (%s), got %s: %s", bad, want,
                 dpzo_status_name(st), msg);
    if (strstr(msg, want) == NULL || strstr(msg, bad) == NULL)
        fail_msg("message \"%s\" should name '%s' and say \"%s\"", msg, bad, want);
    /* the output is left empty */
    assert_null(ds.x);
    assert_null(ds.y);
    assert_int_equal(ds.n, 0);
    dpzo_dataset_free(&ds);
}

static void test_errors(void **state)
{
    dpzo_ctx *ctx = *state;
    fill_pixels();
    unsigned char buf[1024], gzbuf[1024];
    char ip[600], lp[600], bad[600];
    path_of(ip, sizeof ip, "ok-images");
    path_of(lp, sizeof lp, "ok-labels");
    size_t ni = idx_images(buf, 0x00000803u, NI, NR, NC, pix);
    write_file(ip, buf, ni, 0);
    size_t nl = idx_labels(gzbuf, NI, lab);
    write_file(lp, gzbuf, nl, 0);

    /* truncated image data, plain and gzip */
    path_of(bad, sizeof bad, "trunc-images");
    write_file(bad, buf, ni - 3, 0);
    expect_error(ctx, bad, lp, bad, "truncated data (57 of 60 bytes");
    path_of(bad, sizeof bad, "trunc-images.gz");
    write_file(bad, buf, ni - 3, 1);
    expect_error(ctx, bad, lp, bad, "truncated data (57 of 60 bytes");
    /* a gzip stream cut in the middle */
    write_file(bad, buf, ni, 1);
    {
        FILE *f = fopen(bad, "rb");
        assert_non_null(f);
        size_t len = fread(gzbuf, 1, sizeof gzbuf, f);
        fclose(f);
        assert_true(len > 20);
        write_file(bad, gzbuf, len - 12, 0); /* drops the trailer and some data */
    }
    expect_error(ctx, bad, lp, bad, "truncated");
    /* truncated header */
    path_of(bad, sizeof bad, "short-header");
    write_file(bad, buf, 10, 0);
    expect_error(ctx, bad, lp, bad, "truncated header (10 of 16 bytes)");
    write_file(bad, buf, 2, 0);
    expect_error(ctx, bad, lp, bad, "truncated header (2 of 4 magic bytes)");
    /* truncated labels */
    nl = idx_labels(gzbuf, NI, lab);
    path_of(bad, sizeof bad, "trunc-labels");
    write_file(bad, gzbuf, nl - 1, 0);
    expect_error(ctx, ip, bad, bad, "truncated data (4 of 5 bytes");
    /* wrong magic: labels given as images, images as labels, and a 16-bit type */
    expect_error(ctx, lp, lp, lp, "wrong magic number 0x00000801 (expected 0x00000803");
    expect_error(ctx, ip, ip, ip, "wrong magic number 0x00000803 (expected 0x00000801");
    path_of(bad, sizeof bad, "int16-images");
    write_file(bad, buf, idx_images(buf, 0x00000b03u, NI, NR, NC, pix), 0);
    expect_error(ctx, bad, lp, bad, "wrong magic number 0x00000b03");
    /* count mismatch (4 labels for 5 images) */
    path_of(bad, sizeof bad, "four-labels");
    write_file(bad, gzbuf, idx_labels(gzbuf, NI - 1, lab), 0);
    expect_error(ctx, ip, bad, bad, "count mismatch (5 images, 4 labels)");
    /* empty file, plain and gzip */
    path_of(bad, sizeof bad, "empty");
    write_file(bad, buf, 0, 0);
    expect_error(ctx, bad, lp, bad, "file is empty");
    path_of(bad, sizeof bad, "empty.gz");
    write_file(bad, buf, 0, 1);
    expect_error(ctx, ip, bad, bad, "file is empty");
    /* nonexistent */
    path_of(bad, sizeof bad, "no-such-file");
    expect_error(ctx, bad, lp, bad, "cannot open (No such file or directory)");
    /* bad dims: zero rows, zero images, absurd width */
    path_of(bad, sizeof bad, "zero-rows");
    write_file(bad, buf, idx_images(buf, 0x00000803u, NI, 0, NC, pix), 0);
    expect_error(ctx, bad, lp, bad, "dimension 1 is 0");
    write_file(bad, buf, idx_images(buf, 0x00000803u, 0, NR, NC, pix), 0);
    expect_error(ctx, bad, lp, bad, "dimension 0 is 0");
    write_file(bad, buf, idx_images(buf, 0x00000803u, 1, 1, 0x7fffffffu, pix), 0);
    expect_error(ctx, bad, lp, bad, "dimension 2 is 2147483647");
    /* a header that claims far more images than the file holds */
    write_file(bad, buf, idx_images(buf, 0x00000803u, 0xffffffffu, 28, 28, pix), 0);
    expect_error(ctx, bad, lp, bad, "truncated data");
    /* data after the announced end */
    ni = idx_images(buf, 0x00000803u, NI, NR, NC, pix);
    buf[ni] = 7;
    path_of(bad, sizeof bad, "trailing");
    write_file(bad, buf, ni + 1, 0);
    expect_error(ctx, bad, lp, bad, "unexpected data after the 60 bytes");
    /* NULL arguments */
    dpzo_dataset ds;
    assert_int_equal(dpzo_idx_load(ctx, NULL, lp, &ds), DPZO_EINVAL);
    assert_int_equal(dpzo_idx_load(ctx, ip, lp, NULL), DPZO_EINVAL);
    /* and the good pair still loads */
    assert_ok(ctx, dpzo_idx_load(ctx, ip, lp, &ds));
    check_loaded(&ds);
    dpzo_dataset_free(&ds);
}

/* dpzo_fmnist_find / _load through $DPZO_FMNIST_DIR on synthetic, un-gzipped files. */
static void test_fmnist_env(void **state)
{
    dpzo_ctx *ctx = *state;
    fill_pixels();
    char dir[600], p[700];
    path_of(dir, sizeof dir, "fake-fmnist");
    assert_int_equal(mkdir(dir, 0700), 0);
    unsigned char buf[1024];
    const unsigned char tlab[2] = {1, 2};
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte", dir);
    write_file(p, buf, idx_images(buf, 0x00000803u, NI, NR, NC, pix), 0);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte", dir);
    write_file(p, buf, idx_labels(buf, NI, lab), 0);
    snprintf(p, sizeof p, "%s/t10k-images-idx3-ubyte.gz", dir);
    write_file(p, buf, idx_images(buf, 0x00000803u, 2, 2, 2, pix), 1);

    const char *old = getenv("DPZO_FMNIST_DIR");
    char *saved = old != NULL ? strdup(old) : NULL;
    setenv("DPZO_FMNIST_DIR", dir, 1);
    char found[1024];
    /* one of the four files is missing */
    assert_int_equal(dpzo_fmnist_find(ctx, NULL, found, sizeof found), DPZO_EPARSE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "$DPZO_FMNIST_DIR"));
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), dir));
    snprintf(p, sizeof p, "%s/t10k-labels-idx1-ubyte", dir);
    write_file(p, buf, idx_labels(buf, 2, tlab), 0);
    assert_ok(ctx, dpzo_fmnist_find(ctx, NULL, found, sizeof found));
    assert_string_equal(found, dir);
    assert_int_equal(dpzo_fmnist_find(ctx, NULL, found, 4), DPZO_EINVAL);

    dpzo_dataset ds;
    assert_ok(ctx, dpzo_fmnist_load(ctx, NULL, "train", &ds));
    check_loaded(&ds);
    dpzo_dataset_free(&ds);
    assert_ok(ctx, dpzo_fmnist_load(ctx, NULL, "test", &ds));
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.dim, 4);
    assert_int_equal(ds.n_classes, 3);
    assert_int_equal(ds.y[1], 2);
    assert_true(ds.x[1] == (float)pix[1] / 255.0f);
    dpzo_dataset_free(&ds);
    assert_int_equal(dpzo_fmnist_load(ctx, NULL, "valid", &ds), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "\"valid\""));

    /* an explicit directory wins over the environment */
    path_of(p, sizeof p, "nowhere");
    assert_int_equal(dpzo_fmnist_find(ctx, p, found, sizeof found), DPZO_EPARSE);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "nowhere"));
    assert_int_equal(dpzo_fmnist_load(ctx, p, "train", &ds), DPZO_EPARSE);

    if (saved != NULL) {
        setenv("DPZO_FMNIST_DIR", saved, 1);
        free(saved);
    } else {
        unsetenv("DPZO_FMNIST_DIR");
    }
}

/* The real Fashion-MNIST test split, when installed. */
static void test_fmnist_real(void **state)
{
    dpzo_ctx *ctx = *state;
    char dir[1024];
    if (dpzo_fmnist_find(ctx, NULL, dir, sizeof dir) != DPZO_OK) {
        print_message("Fashion-MNIST not installed (%s): skipped\n", dpzo_ctx_errmsg(ctx));
        skip();
    }
    dpzo_dataset ds;
    assert_ok(ctx, dpzo_fmnist_load(ctx, dir, "test", &ds));
    assert_int_equal(ds.n, 10000);
    assert_int_equal(ds.dim, 784);
    assert_int_equal(ds.rows, 28);
    assert_int_equal(ds.cols, 28);
    assert_int_equal(ds.n_classes, 10);
    size_t hist[10] = {0};
    for (size_t i = 0; i < ds.n; i++) {
        assert_true(ds.y[i] >= 0 && ds.y[i] < 10);
        hist[ds.y[i]]++;
    }
    for (int k = 0; k < 10; k++)
        assert_int_equal(hist[k], 1000);
    float lo = 1.0f, hi = 0.0f;
    for (size_t i = 0; i < ds.n * ds.dim; i++) {
        if (ds.x[i] < lo)
            lo = ds.x[i];
        if (ds.x[i] > hi)
            hi = ds.x[i];
    }
    assert_true(lo == 0.0f);
    assert_true(hi == 1.0f);
    dpzo_dataset_free(&ds);
}

/* ---- dpzo_dataset_split ---------------------------------------------------------------- */

/* n rows of dim 2: row i = (i, -i / 2), label i % 7. */
static dpzo_dataset make_rows(size_t n)
{
    dpzo_dataset ds = {n, 2, 1, 2, 7, malloc(2 * n * sizeof(float)), malloc(n * sizeof(int32_t))};
    for (size_t i = 0; i < n; i++) {
        ds.x[2 * i] = (float)i;
        ds.x[2 * i + 1] = -(float)i / 2;
        ds.y[i] = (int32_t)(i % 7);
    }
    return ds;
}

/* Checks that pub and priv partition ds, keep order, and returns pub's membership. */
static void check_partition(const dpzo_dataset *ds, const dpzo_dataset *pub,
                            const dpzo_dataset *priv, size_t n_public, unsigned char *in_pub)
{
    assert_int_equal(pub->n, n_public);
    assert_int_equal(priv->n, ds->n - n_public);
    const dpzo_dataset *parts[2] = {pub, priv};
    int *seen = calloc(ds->n, sizeof *seen);
    for (int p = 0; p < 2; p++) {
        const dpzo_dataset *d = parts[p];
        assert_int_equal(d->dim, 2);
        assert_int_equal(d->rows, 1);
        assert_int_equal(d->cols, 2);
        assert_int_equal(d->n_classes, 7);
        for (size_t r = 0; r < d->n; r++) {
            size_t i = (size_t)d->x[2 * r];
            assert_true(i < ds->n);
            assert_true(d->x[2 * r + 1] == -(float)i / 2);
            assert_int_equal(d->y[r], (int32_t)(i % 7));
            if (r > 0)
                assert_true(d->x[2 * r] > d->x[2 * (r - 1)]); /* original order */
            seen[i]++;
            if (in_pub != NULL)
                in_pub[i] = p == 0;
        }
    }
    for (size_t i = 0; i < ds->n; i++)
        assert_int_equal(seen[i], 1); /* disjoint, and the union is everything */
    free(seen);
}

static void test_split(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 103, np = 30;
    dpzo_dataset ds = make_rows(n), pub, priv, pub2, priv2;
    unsigned char a[103], b[103];
    assert_ok(ctx, dpzo_dataset_split(ctx, &ds, np, 42, &pub, &priv));
    check_partition(&ds, &pub, &priv, np, a);
    /* same seed: the same split */
    assert_ok(ctx, dpzo_dataset_split(ctx, &ds, np, 42, &pub2, &priv2));
    assert_memory_equal(pub.x, pub2.x, np * 2 * sizeof(float));
    assert_memory_equal(priv.y, priv2.y, (n - np) * sizeof(int32_t));
    dpzo_dataset_free(&pub2);
    dpzo_dataset_free(&priv2);
    /* another seed: another public set */
    assert_ok(ctx, dpzo_dataset_split(ctx, &ds, np, 43, &pub2, &priv2));
    check_partition(&ds, &pub2, &priv2, np, b);
    assert_true(memcmp(a, b, n) != 0);
    /* the documented algorithm (splitmix64 from the seed, Fisher-Yates from the end,
     * rejection for a uniform index), as computed by an independent Python transcription:
     * the public rows of 103 at seed 42 */
    const size_t want42[30] = {7,  10, 11, 14, 15, 16, 19, 20, 21, 23, 28, 29, 33, 34, 39,
                               40, 41, 51, 70, 71, 72, 73, 75, 76, 80, 84, 85, 88, 94, 95};
    for (size_t r = 0; r < np; r++)
        assert_int_equal((size_t)pub.x[2 * r], want42[r]);
    dpzo_dataset_free(&pub);
    dpzo_dataset_free(&priv);
    dpzo_dataset_free(&pub2);
    dpzo_dataset_free(&priv2);

    /* the public set is uniform: over 2000 seeds each row is public about 2000 * 30/103
     * times (binomial sd 20.3; a 5 sd band) */
    unsigned counts[103] = {0};
    for (uint64_t s = 0; s < 2000; s++) {
        assert_ok(ctx, dpzo_dataset_split(ctx, &ds, np, s * 7919 + 1, &pub, &priv));
        for (size_t r = 0; r < pub.n; r++)
            counts[(size_t)pub.x[2 * r]]++;
        dpzo_dataset_free(&pub);
        dpzo_dataset_free(&priv);
    }
    double mean = 2000.0 * np / n, sd = sqrt(2000.0 * np / n * (1.0 - (double)np / n));
    for (size_t i = 0; i < n; i++)
        if (fabs(counts[i] - mean) > 5 * sd)
            fail_msg("row %zu public %u times of 2000 (expected %.1f +- %.1f)", i, counts[i],
                     mean, sd);

    /* the ends: nothing public, everything public */
    assert_ok(ctx, dpzo_dataset_split(ctx, &ds, 0, 1, &pub, &priv));
    check_partition(&ds, &pub, &priv, 0, NULL);
    assert_null(pub.x);
    dpzo_dataset_free(&pub);
    dpzo_dataset_free(&priv);
    assert_ok(ctx, dpzo_dataset_split(ctx, &ds, n, 1, &pub, &priv));
    check_partition(&ds, &pub, &priv, n, NULL);
    assert_memory_equal(pub.x, ds.x, n * 2 * sizeof(float)); /* order kept */
    dpzo_dataset_free(&pub);
    dpzo_dataset_free(&priv);
    /* more public rows than rows */
    assert_int_equal(dpzo_dataset_split(ctx, &ds, n + 1, 1, &pub, &priv), DPZO_EINVAL);
    assert_non_null(strstr(dpzo_ctx_errmsg(ctx), "104 of a data set of 103 rows"));
    dpzo_dataset_free(&ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_plain),
        cmocka_unit_test(test_roundtrip_gzip),
        cmocka_unit_test(test_pixel_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fmnist_env),
        cmocka_unit_test(test_fmnist_real),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
