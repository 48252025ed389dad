/* SPDX-License-Identifier: Apache-2.0 */
/* tests/train_fixtures.h: what the trainer's tests share: synthetic data, configurations,
 * profiles written for a test, and a deterministic stand-in for the CSPRNG noise. */
#ifndef DPZO_TRAIN_FIXTURES_H
#define DPZO_TRAIN_FIXTURES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "dpzo/trainer.h"

#define FIXTURE static inline __attribute__((unused))

/* ---- synthetic data ------------------------------------------------------------------- */

static uint64_t rng_state;
FIXTURE double urand(void) /* uniform [0, 1): a 64-bit LCG's top 53 bits */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

/* n rows around K cluster centres in [0, 1]^dim (the centres depend on centre_seed only, so
 * training and test sets share them), uniform noise of half-width `spread`. */
FIXTURE dpzo_dataset clusters(size_t n, size_t dim, int K, double spread, uint64_t centre_seed,
                             uint64_t row_seed)
{
    double centre[16][32];
    rng_state = centre_seed;
    for (int k = 0; k < K; k++)
        for (size_t j = 0; j < dim; j++)
            centre[k][j] = urand();
    rng_state = row_seed;
    dpzo_dataset ds = {n, dim, 0, 0, K, malloc(n * dim * sizeof(float)),
                       malloc(n * sizeof(int32_t))};
    for (size_t i = 0; i < n; i++) {
        int y = (int)(urand() * K);
        ds.y[i] = y;
        for (size_t j = 0; j < dim; j++)
            ds.x[i * dim + j] = (float)(centre[y][j] + spread * (2.0 * urand() - 1.0));
    }
    return ds;
}

/* A training set and a test set around the same centres (the test rows from row_seed + 1). */
typedef struct {
    dpzo_dataset tr, te;
} cluster_sets;

FIXTURE cluster_sets cluster_pair(size_t n_train, size_t n_test, size_t dim, int K,
                                  double spread, uint64_t centre_seed, uint64_t row_seed)
{
    cluster_sets s = {clusters(n_train, dim, K, spread, centre_seed, row_seed),
                      clusters(n_test, dim, K, spread, centre_seed, row_seed + 1)};
    return s;
}

FIXTURE void cluster_sets_free(cluster_sets *s)
{
    dpzo_dataset_free(&s->tr);
    dpzo_dataset_free(&s->te);
}

/* A ZO configuration on synthetic data (no files). */
FIXTURE dpzo_train_config base_config(dpzo_algorithm alg, const char *model, uint64_t steps,
                                     double batch, double lr)
{
    dpzo_train_config c;
    dpzo_train_config_init(&c);
    c.algorithm = alg;
    snprintf(c.model, sizeof c.model, "%s", model);
    c.steps = steps;
    c.batch_size = batch;
    c.lr = lr;
    c.seed = 7;
    return c;
}

/* A Gaussian profile (Poisson rate q, T steps, C, epsilon 3 at delta 1e-5) at path. */
FIXTURE double write_profile(dpzo_ctx *ctx, const char *path, double q, uint64_t T, double C)
{
    dpzo_profile_gaussian_spec spec = {.epsilon = 3.0, .delta = 1e-5, .sensitivity = C,
                                       .sampling_rate = q, .steps = T};
    dpzo_profile p;
    assert_ok(ctx, dpzo_profile_gaussian(ctx, &spec, &p));
    assert_ok(ctx, dpzo_profile_write_file(ctx, &p, path));
    double sigma = p.noise_multiplier;
    dpzo_profile_free(&p);
    return sigma;
}

FIXTURE void set_private(dpzo_train_config *c, const char *profile, double clip)
{
    snprintf(c->profile, sizeof c->profile, "%s", profile);
    c->clip = clip;
}

/* A deterministic stand-in for the CSPRNG (tests only): uniform with variance 1, keyed
 * by (step, index), so that private runs can be compared bit for bit. */
FIXTURE void fixed_noise(void *user, uint64_t step, double *out, size_t n)
{
    double scale = *(const double *)user;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (step * 1000003u + i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 29;
        out[i] = scale * 3.4641016151377544 * ((double)(z >> 11) * 0x1p-53 - 0.5);
    }
}

/* Logistic regression ("mlp:") in double at explicit float weights W (K x dim) then b. */
FIXTURE double logistic_loss(const float *w, const dpzo_dataset *ds, size_t row)
{
    size_t dim = ds->dim, K = (size_t)ds->n_classes;
    double z[16] = {0}, mx = -INFINITY, s = 0.0;
    for (size_t k = 0; k < K; k++) {
        z[k] = w[K * dim + k];
        for (size_t j = 0; j < dim; j++)
            z[k] += (double)ds->x[row * dim + j] * (double)w[k * dim + j];
        mx = z[k] > mx ? z[k] : mx;
    }
    for (size_t k = 0; k < K; k++)
        s += exp(z[k] - mx);
    return mx + log(s) - z[ds->y[row]];
}

#endif
