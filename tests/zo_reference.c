/* SPDX-License-Identifier: Apache-2.0 */
/* tests/zo_reference.c: `dpzo train`'s trajectory for the Python plugin's tests
 * (python/tests/test_torch_plugin.py). Not installed.
 *
 *   dpzo-zo-reference CONFIG DATA SAMPLING_SEED NOISE_SCALE OUT [PREFIX]
 *
 * Trains the configuration (any dpzo train configuration; its data come from DATA) with the
 * sampling seed given (the test hook: a known seed voids the amplification, tests only) and,
 * for private algorithms, the tests' deterministic noise fixed_noise(NOISE_SCALE) instead of
 * the CSPRNG (tests/train_fixtures.h), so that the plugin can be fed the same batches and noise. DATA: three
 * little-endian u64 (n, dim, classes), n*dim float32 features, n int32 labels. OUT: the
 * float32 parameters (P of them) before the first step and after each step, (T + 1) P
 * floats. Prints the model's layout (dpzo_model_describe) and P. With PREFIX (runs with
 * public rows, pazo-m): PREFIX.priv and PREFIX.pub get the private and public rows after
 * the split (DATA's format), PREFIX.pubidx each step's public batches (pazo-m one, pazo-p
 * and pazo-s public.k; each a u64 count, then the u64 row indices into PREFIX.pub). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/trainer.h"
#include "train_internal.h"
#include "train_fixtures.h"

static int ref_fail(dpzo_ctx *ctx, const char *what)
{
    fprintf(stderr, "dpzo-zo-reference: %s: %s\n", what, ctx ? dpzo_ctx_errmsg(ctx) : "");
    return 1;
}

static int write_data(const char *path, const dpzo_dataset *ds)
{
    FILE *f = fopen(path, "wb");
    uint64_t h[3] = {ds->n, ds->dim, (uint64_t)ds->n_classes};
    if (f == NULL)
        return 1;
    int bad = fwrite(h, sizeof h, 1, f) != 1 ||
              fwrite(ds->x, sizeof *ds->x, ds->n * ds->dim, f) != ds->n * ds->dim ||
              fwrite(ds->y, sizeof *ds->y, ds->n, f) != ds->n;
    return fclose(f) != 0 || bad;
}

/* PREFIX.priv, PREFIX.pub and PREFIX.pubidx (see the top). */
static int write_public(const char *prefix, dpzo_trainer *tr)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.priv", prefix);
    if (write_data(path, &tr->priv))
        return 1;
    snprintf(path, sizeof path, "%s.pub", prefix);
    if (write_data(path, &tr->pub))
        return 1;
    snprintf(path, sizeof path, "%s.pubidx", prefix);
    FILE *f = fopen(path, "wb");
    size_t *idx = malloc((tr->pub.n + 1) * sizeof *idx);
    int bad = f == NULL || idx == NULL;
    const unsigned per = tr->cfg.algorithm == DPZO_ALG_PAZO_M ? 1 : tr->cfg.pub.k;
    for (uint64_t t = 0; t < tr->cfg.steps && !bad; t++)
        for (unsigned j = 0; j < per && !bad; j++) {
            uint64_t nb = dpzo__public_batch(tr, t, j, idx);
            bad = fwrite(&nb, sizeof nb, 1, f) != 1;
            for (uint64_t i = 0; i < nb && !bad; i++) {
                uint64_t v = idx[i];
                bad = fwrite(&v, sizeof v, 1, f) != 1;
            }
        }
    free(idx);
    return (f != NULL && fclose(f) != 0) || bad;
}

static int read_data(const char *path, dpzo_dataset *ds)
{
    FILE *f = fopen(path, "rb");
    uint64_t h[3];
    if (f == NULL || fread(h, sizeof h, 1, f) != 1) {
        if (f)
            fclose(f);
        return 1;
    }
    memset(ds, 0, sizeof *ds);
    ds->n = (size_t)h[0];
    ds->dim = (size_t)h[1];
    ds->n_classes = (int)h[2];
    ds->x = malloc(ds->n * ds->dim * sizeof *ds->x);
    ds->y = malloc(ds->n * sizeof *ds->y);
    int bad = ds->x == NULL || ds->y == NULL ||
              fread(ds->x, sizeof *ds->x, ds->n * ds->dim, f) != ds->n * ds->dim ||
              fread(ds->y, sizeof *ds->y, ds->n, f) != ds->n;
    fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr,
                "usage: dpzo-zo-reference CONFIG DATA SAMPLING_SEED NOISE_SCALE OUT [PREFIX]\n");
        return 2;
    }
    dpzo_ctx *ctx = dpzo_ctx_new();
    dpzo_train_config cfg;
    if (dpzo_train_config_read_file(ctx, argv[1], &cfg) != DPZO_OK)
        return ref_fail(ctx, "config");
    dpzo_dataset ds;
    if (read_data(argv[2], &ds))
        return ref_fail(NULL, "data");
    uint64_t seed = strtoull(argv[3], NULL, 10);
    double scale = strtod(argv[4], NULL);
    dpzo_trainer *tr = NULL;
    if (dpzo_trainer_create(ctx, &cfg, &ds, &ds, &tr) != DPZO_OK)
        return ref_fail(ctx, "trainer");
    if (dpzo__trainer_set_sampling_seed(ctx, tr, seed) != DPZO_OK)
        return ref_fail(ctx, "sampling seed");
    dpzo__trainer_set_noise_hook(tr, fixed_noise, &scale);
    if (argc == 7 && write_public(argv[6], tr))
        return ref_fail(NULL, "public rows");
    const size_t P = dpzo_trainer_n_params(tr);
    FILE *out = fopen(argv[5], "wb");
    if (out == NULL)
        return ref_fail(NULL, "output");
    int bad = fwrite(dpzo_trainer_theta(tr), sizeof(float), P, out) != P;
    for (uint64_t t = 0; t < cfg.steps && !bad; t++) {
        if (dpzo_trainer_run(ctx, tr, t + 1, NULL, NULL) != DPZO_OK)
            return ref_fail(ctx, "step");
        bad = fwrite(dpzo_trainer_theta(tr), sizeof(float), P, out) != P;
    }
    if (fclose(out) != 0 || bad)
        return ref_fail(NULL, "write");
    printf("%s\nP %zu\n", dpzo_model_describe(tr->model), P);
    dpzo_trainer_free(tr);
    dpzo_dataset_free(&ds);
    dpzo_ctx_free(ctx);
    return 0;
}
