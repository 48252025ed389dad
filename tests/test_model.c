/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_model.c: the built-in models (MLP, CNN): specs and layout, init, losses,
 * perturbed (zeroth-order) evaluation, gradients, accuracy, and a short SGD run.
 *
 * Oracles:
 *   - a double-precision shadow written here (straight loops from the documented layout,
 *     no code shared with trainer/model.c): the model's losses must match it, and the
 *     model's gradients must match central differences of the shadow's mean loss (step
 *     1e-6 in double), parameter by parameter;
 *   - exact identities: lambda = 0 perturbation, the perturbed loss against an explicitly
 *     materialised theta + lambda u (same rounding formula), a row's per-example gradient
 *     with the batch's other rows replaced, all-zero parameters (loss log K), hand-computed
 *     logits;
 *   - where rows change places in the BLAS's products (another order, another batch), the
 *     derived float error bound of each row against the shadow, not bits: a BLAS may
 *     round a row by its place in a product (OpenBLAS's generic SSE3 kernels do; issue 27);
 *   - the fused +/- evaluation against two separate perturbed evaluations, bit for bit. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/model.h"
#include "dpzo/zo_dir.h"

static uint64_t rng_state;
static double urand(void) /* uniform [0, 1), a 64-bit LCG's top 53 bits */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

/* n random images rows x cols (about a third of the pixels 0, the others uniform in
 * [-0.5, 1.5): negative inputs must count too), labels uniform in [0, K). */
static dpzo_dataset random_data(size_t n, size_t rows, size_t cols, int K, uint64_t seed)
{
    rng_state = seed;
    size_t dim = rows * cols;
    dpzo_dataset ds = {n, dim, rows, cols, K, malloc(n * dim * sizeof(float)),
                       malloc(n * sizeof(int32_t))};
    for (size_t i = 0; i < n * dim; i++) {
        double u = urand();
        ds.x[i] = u < 0.33 ? 0.0f : (float)(2 * urand() - 0.5);
    }
    for (size_t i = 0; i < n; i++)
        ds.y[i] = (int32_t)(urand() * K);
    return ds;
}

/* ---- the double shadow ------------------------------------------------------------------ */

typedef struct {
    int cnn;
    size_t sizes[8], n_layers; /* MLP: sizes[0] = input ... sizes[n_layers] = classes */
    size_t c1, c2, rows, cols, K;
} shadow;

static double lse_loss(const double *z, size_t K, int y)
{
    double mx = z[0], s = 0;
    for (size_t k = 1; k < K; k++)
        mx = z[k] > mx ? z[k] : mx;
    for (size_t k = 0; k < K; k++)
        s += exp(z[k] - mx);
    return mx + log(s) - z[y];
}

/* 3x3 conv, pad 1, ReLU, then 2x2 max-pool (floor) of in (c x h x w); theta at *off. */
static void shadow_conv_pool(const double *th, size_t *off, const double *in, size_t cin,
                             size_t cout, size_t h, size_t w, double *out)
{
    const double *W = th + *off, *b = W + cout * cin * 9;
    *off += cout * cin * 9 + cout;
    double *conv = malloc(cout * h * w * sizeof *conv);
    for (size_t co = 0; co < cout; co++)
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                double s = b[co];
                for (size_t ci = 0; ci < cin; ci++)
                    for (int ky = -1; ky <= 1; ky++)
                        for (int kx = -1; kx <= 1; kx++) {
                            long yy = (long)y + ky, xx = (long)x + kx;
                            if (yy < 0 || xx < 0 || yy >= (long)h || xx >= (long)w)
                                continue;
                            size_t tap = (size_t)(ky + 1) * 3 + (size_t)(kx + 1);
                            s += W[(co * cin + ci) * 9 + tap] *
                                 in[(ci * h + (size_t)yy) * w + (size_t)xx];
                        }
                conv[(co * h + y) * w + x] = s > 0 ? s : 0;
            }
    size_t oh = h / 2, ow = w / 2;
    for (size_t c = 0; c < cout; c++)
        for (size_t y = 0; y < oh; y++)
            for (size_t x = 0; x < ow; x++) {
                double v = -INFINITY;
                for (size_t dy = 0; dy < 2; dy++)
                    for (size_t dx = 0; dx < 2; dx++) {
                        double t = conv[(c * h + 2 * y + dy) * w + 2 * x + dx];
                        v = t > v ? t : v;
                    }
                out[(c * oh + y) * ow + x] = v;
            }
    free(conv);
}

/* linear layer out = W h + b (W[out][in]) with optional ReLU; theta at *off. */
static void shadow_linear(const double *th, size_t *off, const double *h, size_t nin,
                          size_t nout, int relu, double *out)
{
    const double *W = th + *off, *b = W + nout * nin;
    *off += nout * nin + nout;
    for (size_t o = 0; o < nout; o++) {
        double s = b[o];
        for (size_t i = 0; i < nin; i++)
            s += W[o * nin + i] * h[i];
        out[o] = relu && s < 0 ? 0 : s;
    }
}

static double shadow_loss(const shadow *sh, const double *th, const float *xf, int y)
{
    double a[4096], bb[4096];
    size_t off = 0, dim = sh->cnn ? sh->rows * sh->cols : sh->sizes[0];
    for (size_t i = 0; i < dim; i++)
        a[i] = xf[i];
    if (sh->cnn) {
        size_t h = sh->rows, w = sh->cols;
        shadow_conv_pool(th, &off, a, 1, sh->c1, h, w, bb);
        h /= 2;
        w /= 2;
        shadow_conv_pool(th, &off, bb, sh->c1, sh->c2, h, w, a);
        h /= 2;
        w /= 2;
        shadow_linear(th, &off, a, sh->c2 * h * w, sh->K, 0, bb);
        return lse_loss(bb, sh->K, y);
    }
    double *cur = a, *nxt = bb;
    for (size_t l = 0; l < sh->n_layers; l++) {
        int last = l + 1 == sh->n_layers;
        shadow_linear(th, &off, cur, sh->sizes[l], sh->sizes[l + 1], !last, nxt);
        double *t = cur;
        cur = nxt;
        nxt = t;
    }
    return lse_loss(cur, sh->K, y);
}

static double shadow_mean(const shadow *sh, const double *th, const dpzo_dataset *ds,
                          const size_t *idx, size_t batch)
{
    double s = 0;
    for (size_t b = 0; b < batch; b++)
        s += shadow_loss(sh, th, ds->x + idx[b] * ds->dim, ds->y[idx[b]]);
    return s / (double)batch;
}

/* ---- specs, layout, init ---------------------------------------------------------------- */

static void test_create_and_layout(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:128", 784, 28, 28, 10, &m));
    assert_int_equal(dpzo_model_n_params(m), 784 * 128 + 128 + 128 * 10 + 10);
    const char *d = dpzo_model_describe(m);
    assert_non_null(strstr(d, "mlp:128 (784-128-10)"));
    assert_non_null(strstr(d, "fc1.weight [128 x 784] (out, in) at 0\n"));
    assert_non_null(strstr(d, "fc1.bias [128] at 100352\n"));
    assert_non_null(strstr(d, "fc2.weight [10 x 128] (out, in) at 100480\n"));
    assert_non_null(strstr(d, "fc2.bias [10] at 101760\n"));
    dpzo_model_free(m);

    assert_ok(ctx, dpzo_model_create(ctx, "mlp:", 784, 28, 28, 10, &m)); /* logistic */
    assert_int_equal(dpzo_model_n_params(m), 7850);
    dpzo_model_free(m);
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:7-5", 16, 0, 0, 3, &m));
    assert_int_equal(dpzo_model_n_params(m), 16 * 7 + 7 + 7 * 5 + 5 + 5 * 3 + 3);
    dpzo_model_free(m);

    const char *cnns[] = {"cnn", "cnn:fmnist", "cnn:8-16"};
    for (int k = 0; k < 3; k++) {
        assert_ok(ctx, dpzo_model_create(ctx, cnns[k], 784, 28, 28, 10, &m));
        assert_int_equal(dpzo_model_n_params(m), (8 * 9 + 8) + (16 * 8 * 9 + 16) + (10 * 784 + 10));
        d = dpzo_model_describe(m);
        assert_non_null(strstr(d, "cnn:8-16"));
        assert_non_null(strstr(d, "conv1.weight [8 x 1 x 3 x 3] (out, in, ky, kx) at 0;"));
        assert_non_null(strstr(d, "conv2.weight [16 x 8 x 3 x 3] (out, in, ky, kx) at 80;"));
        assert_non_null(strstr(d, "conv2.bias [16] at 1232\n"));
        assert_non_null(strstr(d, "fc.weight [10 x 784] (out, in) at 1248\n"));
        dpzo_model_free(m);
    }
    /* odd sides are floored by the pools: 9x7 -> 4x3 -> 2x1 */
    assert_ok(ctx, dpzo_model_create(ctx, "cnn:2-3", 63, 9, 7, 4, &m));
    assert_int_equal(dpzo_model_n_params(m), (2 * 9 + 2) + (3 * 2 * 9 + 3) + (4 * 6 + 4));
    dpzo_model_free(m);

    struct {
        const char *spec;
        size_t dim, rows, cols;
        int K;
        const char *msg;
    } bad[] = {
        {"mlp:0", 16, 4, 4, 3, "hidden widths"},   {"mlp:12-", 16, 4, 4, 3, "hidden widths"},
        {"mlp:-3", 16, 4, 4, 3, "hidden widths"},  {"mlp:3x", 16, 4, 4, 3, "hidden widths"},
        {"mlp12", 16, 4, 4, 3, "unknown"},          {"resnet", 16, 4, 4, 3, "unknown"},
        {"cnn:8", 16, 4, 4, 3, "cnn:C1-C2"},        {"cnn:8-16-32", 16, 4, 4, 3, "cnn:C1-C2"},
        {"cnn", 16, 4, 3, 3, "rows * cols"},        {"cnn", 9, 3, 3, 3, "at least 4x4"},
        {"mlp:4", 16, 4, 4, 1, "at least 2 classes"}, {"mlp:4", 0, 0, 0, 3, "input dimension"},
        /* past cblas_sgemm's int sizes: refused before anything large is allocated */
        {"cnn:4096-4096", (size_t)1 << 24, 4096, 4096, 3, "32-bit sizes"},
        {"mlp:1048576-1048576", 16, 4, 4, 3, "32-bit sizes"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        m = (dpzo_model *)1;
        dpzo_status st = dpzo_model_create(ctx, bad[k].spec, bad[k].dim, bad[k].rows,
                                           bad[k].cols, bad[k].K, &m);
        if (st != DPZO_EINVAL || m != NULL || strstr(dpzo_ctx_errmsg(ctx), bad[k].msg) == NULL)
            fail_msg("spec '%s': status %d, message \"%s\" (want \"%s\")", bad[k].spec, st,
                     dpzo_ctx_errmsg(ctx), bad[k].msg);
    }
}

static void test_init(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "cnn", 784, 28, 28, 10, &m));
    size_t P = dpzo_model_n_params(m);
    float *a = malloc(P * sizeof *a), *b = malloc(P * sizeof *b);
    dpzo_model_init(m, 5, a);
    dpzo_model_init(m, 5, b);
    assert_memory_equal(a, b, P * sizeof *a);
    dpzo_model_init(m, 6, b);
    size_t same = 0;
    for (size_t j = 0; j < P; j++)
        same += a[j] == b[j];
    assert_true(same < P / 10 + 20); /* the biases (40) coincide, little else */
    /* per tensor: |w| <= sqrt(6 / fan_in), variance 2 / fan_in, biases 0 */
    struct {
        size_t off, n, fan_in;
        int bias;
    } t[] = {{0, 72, 9, 0},       {72, 8, 0, 1},    {80, 1152, 72, 0},
             {1232, 16, 0, 1},    {1248, 7840, 784, 0}, {9088, 10, 0, 1}};
    for (int k = 0; k < 6; k++) {
        double s2 = 0;
        for (size_t j = t[k].off; j < t[k].off + t[k].n; j++) {
            if (t[k].bias) {
                assert_true(a[j] == 0.0f);
                continue;
            }
            double bound = sqrt(6.0 / (double)t[k].fan_in);
            assert_true(fabs(a[j]) <= bound && a[j] != 0.0f);
            s2 += (double)a[j] * a[j];
        }
        if (!t[k].bias) {
            double var = s2 / (double)t[k].n, want = 2.0 / (double)t[k].fan_in;
            double se = want * sqrt(0.8 / (double)t[k].n); /* sd of the sample variance */
            if (fabs(var - want) > 5 * se)
                fail_msg("tensor %d: variance %g, He-uniform gives %g", k, var, want);
        }
    }
    free(a);
    free(b);
    dpzo_model_free(m);
}

/* ---- losses ----------------------------------------------------------------------------- */

typedef struct {
    const char *spec;
    size_t rows, cols;
    int K;
    shadow sh;
} tiny_case;

static tiny_case tiny_cases[] = {
    {"mlp:5", 4, 4, 3, {0, {16, 5, 3}, 2, 0, 0, 0, 0, 3}},
    {"mlp:6-4", 4, 4, 3, {0, {16, 6, 4, 3}, 3, 0, 0, 0, 0, 3}},
    {"mlp:", 4, 4, 3, {0, {16, 3}, 1, 0, 0, 0, 0, 3}},
    {"cnn:2-3", 8, 8, 3, {1, {0}, 0, 2, 3, 8, 8, 3}},
    {"cnn:2-3", 9, 7, 4, {1, {0}, 0, 2, 3, 9, 7, 4}},
};
#define N_TINY (sizeof tiny_cases / sizeof tiny_cases[0])

static dpzo_model *tiny_model(dpzo_ctx *ctx, const tiny_case *c, float **theta, uint64_t seed)
{
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, c->spec, c->rows * c->cols, c->rows, c->cols, c->K, &m));
    size_t P = dpzo_model_n_params(m);
    *theta = malloc(P * sizeof **theta);
    dpzo_model_init(m, seed, *theta);
    /* non-zero biases, so their use is checked too */
    rng_state = seed ^ 0xabcdef;
    for (size_t j = 0; j < P; j++)
        if ((*theta)[j] == 0.0f)
            (*theta)[j] = (float)(0.2 * urand() - 0.05);
    return m;
}

static void bounded_logits(const shadow *sh, const double *th, const float *xf, double *z,
                           double *ez);

static void test_losses_match_shadow(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t c = 0; c < N_TINY; c++) {
        const tiny_case *tc = &tiny_cases[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 100 + c);
        size_t P = dpzo_model_n_params(m);
        double *th = malloc(P * sizeof *th);
        for (size_t j = 0; j < P; j++)
            th[j] = theta[j];
        dpzo_dataset ds = random_data(37, tc->rows, tc->cols, tc->K, 7 + c);
        size_t idx[37];
        for (size_t i = 0; i < 37; i++)
            idx[i] = (i * 11) % 37;
        double loss[37];
        assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx, 37, loss));
        for (size_t b = 0; b < 37; b++) {
            double want = shadow_loss(&tc->sh, th, ds.x + idx[b] * ds.dim, ds.y[idx[b]]);
            /* float activations against double ones */
            if (!(fabs(loss[b] - want) <= 1e-6 * (1 + fabs(want))))
                fail_msg("%s: row %zu loss %.17g, shadow %.17g", tc->spec, idx[b], loss[b],
                         want);
        }
        /* rows in another order (other places in the BLAS's blocks and tiles): each row's
         * loss is its own, within the derived float error bound of its exact value (the
         * bits may differ: a BLAS may round a row differently at another place in a
         * product, as OpenBLAS's generic SSE3 kernels do; issue 27) */
        size_t idx2[37];
        double loss2[37];
        for (size_t i = 0; i < 37; i++)
            idx2[i] = idx[36 - i];
        assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx2, 37, loss2));
        double tol_sum = 0; /* the rows' bounds, for the mean below */
        for (size_t i = 0; i < 37; i++) {
            double z[16], ez[16], emax = 0;
            bounded_logits(&tc->sh, th, ds.x + idx2[i] * ds.dim, z, ez);
            for (size_t k = 0; k < (size_t)tc->K; k++)
                emax = fmax(emax, ez[k]);
            double want = lse_loss(z, (size_t)tc->K, ds.y[idx2[i]]);
            double tol = 2 * emax + 1e-12 * (1 + fabs(want));
            tol_sum += tol;
            if (!(fabs(loss2[i] - want) <= tol && fabs(loss[36 - i] - want) <= tol))
                fail_msg("%s: row %zu: loss %.17g in one order, %.17g in the other, exact "
                         "%.17g, bound %.3g",
                         tc->spec, idx2[i], loss2[i], loss[36 - i], want, tol);
        }
        /* accuracy's mean loss over all rows (in the dataset's order: other places again)
         * is the mean of the losses, within twice the mean of the rows' bounds (and the
         * double sums' rounding) */
        double acc, ml, s = 0;
        assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc, &ml));
        for (size_t i = 0; i < 37; i++)
            s += loss[i];
        if (!(fabs(ml - s / 37) <= 2 * tol_sum / 37 + 1e-14 * fabs(ml)))
            fail_msg("%s: accuracy's mean loss %.17g, mean of the losses %.17g, bound %.3g",
                     tc->spec, ml, s / 37, 2 * tol_sum / 37);
        free(th);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

static void test_zero_params(void **state)
{
    dpzo_ctx *ctx = *state;
    const char *specs[] = {"mlp:5", "mlp:", "cnn:2-3"};
    for (int k = 0; k < 3; k++) {
        dpzo_model *m;
        assert_ok(ctx, dpzo_model_create(ctx, specs[k], 64, 8, 8, 7, &m));
        size_t P = dpzo_model_n_params(m);
        float *theta = calloc(P, sizeof *theta);
        dpzo_dataset ds = random_data(20, 8, 8, 7, 3);
        size_t idx[20];
        double loss[20];
        for (size_t i = 0; i < 20; i++)
            idx[i] = i;
        assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx, 20, loss));
        for (size_t i = 0; i < 20; i++)
            assert_true(fabs(loss[i] - log(7.0)) <= 1e-12);
        /* all logits tie: argmax is class 0 */
        double acc;
        size_t zeros = 0;
        for (size_t i = 0; i < 20; i++)
            zeros += ds.y[i] == 0;
        assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc, NULL));
        assert_true(acc == (double)zeros / 20);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

/* Logistic regression by hand: 2 features, 3 classes, W = [[2,0],[0,2],[-1,-1]],
 * b = [0, 0.5, 1]; logits z = W x + b. */
static void test_accuracy_by_hand(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:", 2, 0, 0, 3, &m));
    assert_int_equal(dpzo_model_n_params(m), 9);
    const float theta[9] = {2, 0, 0, 2, -1, -1, 0, 0.5f, 1};
    float x[8][2] = {{1, 0}, {0, 1}, {0, 0}, {1, 0.25f}, {0.25f, 1}, {0.5f, 0.5f},
                     {0.75f, 0}, {0, 0.125f}};
    /* predictions: 0, 1, 2, 0, 1, 1, 0, 2; two labels disagree -> 6/8 */
    int32_t y[8] = {0, 1, 2, 0, 1, 0, 0, 1};
    dpzo_dataset ds = {8, 2, 0, 0, 3, &x[0][0], y};
    double acc, ml, want = 0;
    assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc, &ml));
    assert_true(acc == 0.75);
    for (int i = 0; i < 8; i++) {
        double z[3] = {2.0 * x[i][0], 2.0 * x[i][1] + 0.5, 1.0 - x[i][0] - x[i][1]};
        double mx = fmax(z[0], fmax(z[1], z[2]));
        want += mx + log(exp(z[0] - mx) + exp(z[1] - mx) + exp(z[2] - mx)) - z[y[i]];
    }
    assert_rel(ml, want / 8, 1e-14);
    /* errors: a label outside the model's classes, a row outside the data, dims */
    y[3] = 3;
    assert_int_equal(dpzo_model_accuracy(m, theta, &ds, &acc, &ml), DPZO_EINVAL);
    size_t idx[2] = {0, 3};
    double loss[2];
    assert_int_equal(dpzo_model_losses(m, theta, NULL, &ds, idx, 2, loss), DPZO_EINVAL);
    y[3] = 0;
    idx[1] = 8;
    assert_int_equal(dpzo_model_losses(m, theta, NULL, &ds, idx, 2, loss), DPZO_EINVAL);
    idx[1] = 7;
    assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx, 2, loss));
    ds.dim = 3;
    assert_int_equal(dpzo_model_losses(m, theta, NULL, &ds, idx, 2, loss), DPZO_EINVAL);
    dpzo_model_free(m);
}

/* ---- perturbed evaluation --------------------------------------------------------------- */

static void test_perturbed(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t c = 0; c < N_TINY; c++) {
        const tiny_case *tc = &tiny_cases[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 200 + c);
        size_t P = dpzo_model_n_params(m);
        float *copy = malloc(P * sizeof *copy), *mat = malloc(P * sizeof *mat);
        memcpy(copy, theta, P * sizeof *copy);
        dpzo_dataset ds = random_data(23, tc->rows, tc->cols, tc->K, 9 + c);
        size_t idx[23];
        for (size_t i = 0; i < 23; i++)
            idx[i] = (i * 5 + 3) % 23;
        double l0[23], lp[23], lm[23], lref[23];
        assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx, 23, l0));
        for (int kind = 0; kind < 3; kind++) {
            dpzo_dir dir;
            assert_ok(ctx, dpzo_dir_init(ctx, &dir, (dpzo_dir_kind)kind, 77 + c, 3, 1, P, 2.0));
            /* lambda = 0: exactly the unperturbed losses, both signs */
            dpzo_perturb p0 = {&dir, 0.0, 1};
            assert_ok(ctx, dpzo_model_losses(m, theta, &p0, &ds, idx, 23, lp));
            assert_memory_equal(lp, l0, sizeof lp);
            p0.sign = -1;
            assert_ok(ctx, dpzo_model_losses(m, theta, &p0, &ds, idx, 23, lp));
            assert_memory_equal(lp, l0, sizeof lp);
            for (int sign = -1; sign <= 1; sign += 2) {
                const double lambda = 1e-2;
                dpzo_perturb pert = {&dir, lambda, sign};
                assert_ok(ctx, dpzo_model_losses(m, theta, &pert, &ds, idx, 23,
                                                 sign > 0 ? lp : lm));
                /* theta + sign lambda u materialised by hand from dpzo_dir_at */
                for (size_t j = 0; j < P; j++) {
                    float u = (float)dpzo_dir_at(&dir, j);
                    mat[j] = (float)((double)theta[j] + sign * lambda * (double)u);
                }
                assert_ok(ctx, dpzo_model_losses(m, mat, NULL, &ds, idx, 23, lref));
                assert_memory_equal(sign > 0 ? lp : lm, lref, sizeof lref);
                /* and by dpzo_dir_axpy (the trainer's update) */
                memcpy(mat, theta, P * sizeof *mat);
                dpzo_dir_axpy(&dir, 0, P, sign * lambda, mat);
                assert_ok(ctx, dpzo_model_losses(m, mat, NULL, &ds, idx, 23, lref));
                assert_memory_equal(sign > 0 ? lp : lm, lref, sizeof lref);
            }
            /* the perturbation does something: (L+ - L-) / 2 lambda is the directional
             * derivative, nonzero for a generic direction */
            double diff = 0;
            for (size_t i = 0; i < 23; i++)
                diff += fabs(lp[i] - lm[i]);
            assert_true(diff > 1e-6);
        }
        /* theta was never written */
        assert_memory_equal(theta, copy, P * sizeof *copy);
        /* a perturbation of the wrong dimension, a bad sign */
        dpzo_dir dir;
        assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 1, 0, 0, P + 1, 1.0));
        dpzo_perturb bad = {&dir, 1e-3, 1};
        assert_int_equal(dpzo_model_losses(m, theta, &bad, &ds, idx, 23, lp), DPZO_EINVAL);
        dir.dim = P;
        bad.sign = 0;
        assert_int_equal(dpzo_model_losses(m, theta, &bad, &ds, idx, 23, lp), DPZO_EINVAL);
        free(copy);
        free(mat);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

/* dpzo_model_losses_pm on rows idx[0..batch-1] against two dpzo_model_losses calls
 * (signs +1 and -1): bit for bit, for every direction kind and two lambdas. */
static void check_pm(dpzo_ctx *ctx, dpzo_model *m, const float *theta, const dpzo_dataset *ds,
                     size_t batch, uint64_t seed, const char *what)
{
    size_t P = dpzo_model_n_params(m);
    size_t *idx = malloc((batch + 1) * sizeof *idx);
    double *lp = malloc((batch + 1) * sizeof *lp), *lm = malloc((batch + 1) * sizeof *lm);
    double *rp = malloc((batch + 1) * sizeof *rp), *rm = malloc((batch + 1) * sizeof *rm);
    for (size_t i = 0; i < batch; i++)
        idx[i] = (i * 7 + 3) % ds->n;
    for (int kind = 0; kind < 3; kind++)
        for (int q = 0; q < 2; q++) {
            const double lambda = q == 0 ? 1e-2 : 0.3;
            dpzo_dir dir;
            assert_ok(ctx, dpzo_dir_init(ctx, &dir, (dpzo_dir_kind)kind, seed + kind, 5, 0, P,
                                         3.0));
            const dpzo_perturb plus = {&dir, lambda, +1}, minus = {&dir, lambda, -1};
            assert_ok(ctx, dpzo_model_losses_pm(m, theta, &dir, lambda, ds, idx, batch, lp, lm));
            assert_ok(ctx, dpzo_model_losses(m, theta, &plus, ds, idx, batch, rp));
            assert_ok(ctx, dpzo_model_losses(m, theta, &minus, ds, idx, batch, rm));
            for (size_t i = 0; i < batch; i++)
                if (memcmp(&lp[i], &rp[i], sizeof *lp) != 0 ||
                    memcmp(&lm[i], &rm[i], sizeof *lm) != 0)
                    fail_msg("%s, batch %zu, kind %d, lambda %g, row %zu: fused %.17g %.17g, "
                             "separate %.17g %.17g", what, batch, kind, lambda, i, lp[i],
                             lm[i], rp[i], rm[i]);
            if (batch > 0 && kind == 0 && q == 0) { /* the signs differ: u was applied */
                double diff = 0;
                for (size_t i = 0; i < batch; i++)
                    diff += fabs(lp[i] - lm[i]);
                assert_true(diff > 0);
            }
        }
    free(idx);
    free(lp);
    free(lm);
    free(rp);
    free(rm);
}

static void test_losses_pm(void **state)
{
    dpzo_ctx *ctx = *state;
    /* tiny models (two hidden layers: layers past the input; CNN with odd sides); batches
     * around the linear kernel's 16-row tile */
    static const size_t tiny_batches[] = {0, 1, 15, 16, 17, 33, 50};
    for (size_t c = 0; c < N_TINY; c++) {
        const tiny_case *tc = &tiny_cases[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 300 + c);
        size_t P = dpzo_model_n_params(m);
        float *copy = malloc(P * sizeof *copy);
        memcpy(copy, theta, P * sizeof *copy);
        dpzo_dataset ds = random_data(29, tc->rows, tc->cols, tc->K, 31 + c);
        for (size_t k = 0; k < sizeof tiny_batches / sizeof tiny_batches[0]; k++)
            check_pm(ctx, m, theta, &ds, tiny_batches[k], 40 + c, tc->spec);
        assert_memory_equal(theta, copy, P * sizeof *copy); /* theta never written */
        /* refusals: a direction of the wrong dimension, a non-finite lambda, no output */
        dpzo_dir dir;
        size_t idx[3] = {0, 1, 2};
        double lp[3], lm[3];
        assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 1, 0, 0, P + 1, 1.0));
        assert_int_equal(dpzo_model_losses_pm(m, theta, &dir, 1e-3, &ds, idx, 3, lp, lm),
                         DPZO_EINVAL);
        dir.dim = P;
        assert_int_equal(dpzo_model_losses_pm(m, theta, &dir, INFINITY, &ds, idx, 3, lp, lm),
                         DPZO_EINVAL);
        assert_int_equal(dpzo_model_losses_pm(m, theta, NULL, 1e-3, &ds, idx, 3, lp, lm),
                         DPZO_EINVAL);
        assert_int_equal(dpzo_model_losses_pm(m, theta, &dir, 1e-3, &ds, idx, 3, lp, NULL),
                         DPZO_EINVAL);
        idx[2] = ds.n;
        assert_int_equal(dpzo_model_losses_pm(m, theta, &dir, 1e-3, &ds, idx, 3, lp, lm),
                         DPZO_EINVAL);
        free(copy);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
    /* batches beyond a chunk (16 MiB of activations; the fused pass's chunk holds both
     * signs, so it is about half the plain pass's): a wide MLP on 4x4 inputs (plain chunk
     * 1044 rows, fused 522) and the Fashion-MNIST CNN (334 and 172 rows) */
    static const struct {
        const char *spec;
        size_t rows, cols, batches[4];
    } big[] = {
        {"mlp:4000", 4, 4, {100, 530, 1100, 2100}},
        {"cnn:8-16", 28, 28, {31, 200, 345, 700}},
    };
    for (size_t c = 0; c < sizeof big / sizeof big[0]; c++) {
        dpzo_model *m;
        assert_ok(ctx, dpzo_model_create(ctx, big[c].spec, big[c].rows * big[c].cols,
                                         big[c].rows, big[c].cols, 10, &m));
        size_t P = dpzo_model_n_params(m);
        float *theta = malloc(P * sizeof *theta);
        dpzo_model_init(m, 9 + c, theta);
        rng_state = 77 + c;
        for (size_t j = 0; j < P; j++)
            if (theta[j] == 0.0f)
                theta[j] = (float)(0.2 * urand() - 0.05);
        dpzo_dataset ds = random_data(500, big[c].rows, big[c].cols, 10, 55 + c);
        for (size_t k = 0; k < 4; k++)
            check_pm(ctx, m, theta, &ds, big[c].batches[k], 60 + c, big[c].spec);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

/* ---- gradients -------------------------------------------------------------------------- */

/* dpzo_model_grad against central differences of the double shadow's mean loss. The model
 * computes with float activations, so it is compared at relative error 1e-3 (entries where
 * both are below 1e-5 in magnitude: absolute 1e-7). */
static void test_grad_finite_differences(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t c = 0; c < N_TINY; c++) {
        const tiny_case *tc = &tiny_cases[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 300 + c);
        size_t P = dpzo_model_n_params(m);
        dpzo_dataset ds = random_data(6, tc->rows, tc->cols, tc->K, 11 + c);
        const size_t idx[5] = {4, 0, 2, 5, 1};
        float *grad = malloc(P * sizeof *grad);
        double ml;
        assert_ok(ctx, dpzo_model_grad(m, theta, &ds, idx, 5, grad, NULL, &ml));
        double *th = malloc(P * sizeof *th);
        for (size_t j = 0; j < P; j++)
            th[j] = theta[j];
        assert_true(fabs(ml - shadow_mean(&tc->sh, th, &ds, idx, 5)) < 1e-6);
        const double h = 1e-6;
        size_t significant = 0;
        double worst = 0;
        for (size_t j = 0; j < P; j++) {
            double t = th[j];
            th[j] = t + h;
            double lp = shadow_mean(&tc->sh, th, &ds, idx, 5);
            th[j] = t - h;
            double lm = shadow_mean(&tc->sh, th, &ds, idx, 5);
            th[j] = t;
            double fd = (lp - lm) / (2 * h), g = grad[j];
            double scale = fmax(fabs(fd), fabs(g));
            if (scale > 1e-5) {
                significant++;
                double rel = fabs(g - fd) / scale;
                worst = fmax(worst, rel);
                if (!(rel < 1e-3))
                    fail_msg("%s (%zux%zu): d loss / d theta[%zu] = %.9g, finite difference %.9g",
                             tc->spec, tc->rows, tc->cols, j, g, fd);
            } else if (!(fabs(g - fd) < 1e-7)) {
                fail_msg("%s: theta[%zu]: %.3g vs %.3g", tc->spec, j, g, fd);
            }
        }
        print_message("%s on %zux%zu: %zu parameters, %zu with gradient > 1e-5, worst relative "
                      "error %.2g\n",
                      tc->spec, tc->rows, tc->cols, P, significant, worst);
        assert_true(significant >= P * 6 / 10); /* the check is not vacuous */
        free(th);
        free(grad);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

static void test_per_example(void **state)
{
    dpzo_ctx *ctx = *state;
    for (size_t c = 0; c < N_TINY; c++) {
        const tiny_case *tc = &tiny_cases[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 400 + c);
        size_t P = dpzo_model_n_params(m);
        dpzo_dataset ds = random_data(9, tc->rows, tc->cols, tc->K, 13 + c);
        const size_t idx[7] = {8, 3, 3, 0, 6, 1, 2};
        float *grad = malloc(P * sizeof *grad), *pe = malloc(7 * P * sizeof *pe);
        float *one = malloc(P * sizeof *one), *g2 = malloc(P * sizeof *g2);
        double ml, ml2, losses[7];
        assert_ok(ctx, dpzo_model_grad(m, theta, &ds, idx, 7, grad, pe, &ml));
        /* the per-example rows average to the batch gradient */
        double gmax = 0;
        for (size_t j = 0; j < P; j++)
            gmax = fmax(gmax, fabs(grad[j]));
        assert_true(gmax > 1e-3);
        for (size_t j = 0; j < P; j++) {
            double s = 0;
            for (size_t b = 0; b < 7; b++)
                s += pe[b * P + j];
            if (!(fabs(s / 7 - grad[j]) <= 1e-6 * gmax))
                fail_msg("%s: theta[%zu]: mean of per-example %.9g, batch %.9g", tc->spec, j,
                         s / 7, (double)grad[j]);
        }
        /* each row is that example's own gradient: with every other row of the batch
         * replaced by another example, a row's gradient keeps its bits (an element of a
         * product is computed from its own row and column: the other rows' values never
         * enter it, while the batch's shape and the row's place, which a BLAS may round
         * by, stay the same). Not compared with a one-row batch: that is another shape,
         * and OpenBLAS's generic SSE3 kernels round it differently (issue 27). */
        for (size_t b = 0; b < 7; b++) {
            size_t other[7];
            for (size_t i = 0; i < 7; i++)
                other[i] = i == b ? idx[b] : (idx[i] + 1 + b) % 9;
            other[b] = idx[b];
            float *pe2 = malloc(7 * P * sizeof *pe2);
            assert_ok(ctx, dpzo_model_grad(m, theta, &ds, other, 7, one, pe2, NULL));
            for (size_t j = 0; j < P; j++)
                if (memcmp(&pe2[b * P + j], &pe[b * P + j], sizeof *pe) != 0)
                    fail_msg("%s: row %zu, theta[%zu]: %.9g among other rows, %.9g in the "
                             "batch", tc->spec, b, j, (double)pe2[b * P + j],
                             (double)pe[b * P + j]);
            free(pe2);
        }
        /* without per-example output: the same gradient; mean loss = mean of losses */
        assert_ok(ctx, dpzo_model_grad(m, theta, &ds, idx, 7, g2, NULL, &ml2));
        assert_memory_equal(grad, g2, P * sizeof *g2);
        assert_true(ml == ml2);
        assert_ok(ctx, dpzo_model_losses(m, theta, NULL, &ds, idx, 7, losses));
        double s = 0;
        for (int b = 0; b < 7; b++)
            s += losses[b];
        assert_true(fabs(ml - s / 7) <= 1e-15 * s);
        free(grad);
        free(pe);
        free(one);
        free(g2);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

/* ---- a short SGD run -------------------------------------------------------------------- */

/* 4 classes in 16 dimensions, linearly separable with a margin:
 * label = argmax_k (V (x - 1/2))_k. */
static void test_sgd_learns(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 2000, dim = 16, K = 4;
    dpzo_dataset ds = random_data(n, 4, 4, (int)K, 21);
    double V[4][16];
    for (size_t k = 0; k < K; k++)
        for (size_t i = 0; i < dim; i++)
            V[k][i] = 2 * urand() - 1;
    size_t hist[4] = {0};
    for (size_t r = 0; r < n; r++) {
        float *x = ds.x + r * dim;
        int best;
        double bz, second;
        do { /* with a margin: the best class leads the others by 0.25 */
            for (size_t i = 0; i < dim; i++)
                x[i] = (float)urand();
            best = 0;
            bz = second = -INFINITY;
            for (size_t k = 0; k < K; k++) {
                double z = 0;
                for (size_t i = 0; i < dim; i++)
                    z += V[k][i] * (x[i] - 0.5);
                if (z > bz) {
                    second = bz;
                    bz = z;
                    best = (int)k;
                } else if (z > second) {
                    second = z;
                }
            }
        } while (bz - second < 0.25);
        ds.y[r] = best;
        hist[best]++;
    }
    for (size_t k = 0; k < K; k++)
        assert_true(hist[k] > n / 10); /* every class is present */
    dpzo_model *m;
    assert_ok(ctx, dpzo_model_create(ctx, "mlp:32", dim, 4, 4, (int)K, &m));
    size_t P = dpzo_model_n_params(m);
    float *theta = malloc(P * sizeof *theta), *grad = malloc(P * sizeof *grad);
    dpzo_model_init(m, 1, theta);
    double acc0, loss0, acc, loss;
    assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc0, &loss0));
    size_t idx[64];
    const float LR = 0.5f;
    rng_state = 99;
    for (int step = 0; step < 200; step++) {
        for (size_t b = 0; b < 64; b++)
            idx[b] = (size_t)(urand() * n);
        assert_ok(ctx, dpzo_model_grad(m, theta, &ds, idx, 64, grad, NULL, NULL));
        for (size_t j = 0; j < P; j++)
            theta[j] -= LR * grad[j];
    }
    assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc, &loss));
    print_message("mlp:32 SGD: accuracy %.3f -> %.3f, loss %.3f -> %.3f\n", acc0, acc, loss0,
                  loss);
    assert_true(acc > 0.9);
    assert_true(loss < loss0);
    free(theta);
    free(grad);
    dpzo_dataset_free(&ds);
    dpzo_model_free(m);
}

/* ---- the forward's tolerance ------------------------------------------------------------ */

/* The rounding error bound of a float sum of k terms in any order, FMA or not (Higham,
 * Accuracy and Stability of Numerical Algorithms, 3.1): gamma_k = k u / (1 - k u). */
static double gamma_f(double k)
{
    const double u = 0x1p-24;
    return k * u / (1 - k * u);
}

/* A layer of the bounded shadow: given the exact inputs x (double) and a bound ex[i] on
 * |model's float input - x[i]|, writes the exact output z (double; before ReLU) and a
 * bound ez on |model's float output - z| for a pre-activation W x + b of n products:
 * gamma_{n+1} (sum |w| (|x| + ex) + |b|) (the model's float sum of its float inputs) plus
 * sum |w| ex (its inputs' errors). The double shadow's own rounding (2^-53 scale) is
 * covered by a relative 1e-12 of the same sum. */
static void bound_dot(const double *w, size_t stride, const double *x, const double *ex,
                      size_t n, double b, double *z, double *ez)
{
    double s = b, mag = fabs(b), prop = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w[i * stride];
        s += wi * x[i];
        mag += fabs(wi) * (fabs(x[i]) + ex[i]);
        prop += fabs(wi) * ex[i];
    }
    *z = s;
    *ez = gamma_f((double)n + 1) * mag + prop + 1e-12 * mag;
}

/* The shadow's logits of one row with a bound on each logit's error (sizes as shadow). */
static void bounded_logits(const shadow *sh, const double *th, const float *xf, double *z,
                           double *ez)
{
    size_t dim = sh->cnn ? sh->rows * sh->cols : sh->sizes[0], cap = 8 * dim + 4096;
    double *a = calloc(cap, sizeof *a), *ea = calloc(cap, sizeof *ea);
    double *b = calloc(cap, sizeof *b), *eb = calloc(cap, sizeof *eb);
    for (size_t i = 0; i < dim; i++)
        a[i] = xf[i];
    size_t off = 0, n = dim;
    if (sh->cnn) {
        size_t h = sh->rows, w = sh->cols, cin = 1;
        const size_t ch[2] = {sh->c1, sh->c2};
        double tap[9 * 4096], etap[9 * 4096], wk[9 * 4096];
        for (int l = 0; l < 2; l++) {
            size_t cout = ch[l];
            const double *W = th + off, *bias = W + cout * cin * 9;
            off += cout * cin * 9 + cout;
            for (size_t co = 0; co < cout; co++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++) {
                        size_t k = 0;
                        for (size_t ci = 0; ci < cin; ci++)
                            for (int ky = -1; ky <= 1; ky++)
                                for (int kx = -1; kx <= 1; kx++, k++) {
                                    long yy = (long)y + ky, xx = (long)x + kx;
                                    int in = yy >= 0 && xx >= 0 && yy < (long)h && xx < (long)w;
                                    size_t at = in ? (ci * h + (size_t)yy) * w + (size_t)xx : 0;
                                    tap[k] = in ? a[at] : 0;
                                    etap[k] = in ? ea[at] : 0;
                                    size_t t = (size_t)((ky + 1) * 3 + kx + 1);
                                    wk[k] = W[(co * cin + ci) * 9 + t];
                                }
                        double zz, e;
                        bound_dot(wk, 1, tap, etap, k, bias[co], &zz, &e);
                        b[(co * h + y) * w + x] = zz > 0 ? zz : 0; /* ReLU: 1-Lipschitz */
                        eb[(co * h + y) * w + x] = e;
                    }
            /* 2x2 max-pool: the max of the errors bounds the max's */
            size_t oh = h / 2, ow = w / 2;
            for (size_t c = 0; c < cout; c++)
                for (size_t y = 0; y < oh; y++)
                    for (size_t x = 0; x < ow; x++) {
                        double v = -INFINITY, e = 0;
                        for (size_t dy = 0; dy < 2; dy++)
                            for (size_t dx = 0; dx < 2; dx++) {
                                size_t at = (c * h + 2 * y + dy) * w + 2 * x + dx;
                                v = fmax(v, b[at]);
                                e = fmax(e, eb[at]);
                            }
                        a[(c * oh + y) * ow + x] = v;
                        ea[(c * oh + y) * ow + x] = e;
                    }
            h = oh;
            w = ow;
            cin = cout;
        }
        n = cin * h * w;
        const double *W = th + off;
        for (size_t k = 0; k < sh->K; k++)
            bound_dot(W + k * n, 1, a, ea, n, W[sh->K * n + k], &z[k], &ez[k]);
    } else {
        for (size_t l = 0; l < sh->n_layers; l++) {
            size_t nin = sh->sizes[l], nout = sh->sizes[l + 1];
            const double *W = th + off;
            off += nin * nout + nout;
            int last = l + 1 == sh->n_layers;
            for (size_t o = 0; o < nout; o++) {
                double zz, e;
                bound_dot(W + o * nin, 1, a, ea, nin, W[nout * nin + o], &zz, &e);
                if (last) {
                    z[o] = zz;
                    ez[o] = e;
                } else {
                    b[o] = zz > 0 ? zz : 0;
                    eb[o] = e;
                }
            }
            if (!last) {
                memcpy(a, b, nout * sizeof *a);
                memcpy(ea, eb, nout * sizeof *ea);
            }
        }
    }
    free(a);
    free(ea);
    free(b);
    free(eb);
}

/* The forward's stated tolerance (trainer/model.c, docs/trainer.md): at Fashion-MNIST's
 * sizes (784 inputs, mlp:128, mlp:256-64, cnn:8-16 on 28x28), plain and perturbed, every
 * logit is within the propagated float error bound of the double shadow's, and the loss
 * within twice the largest logit bound (a worst case: up to a few percent of 1 + |z| for
 * 784 inputs, tens of percent through three layers). The observed error is also held to
 * the working tolerance docs/trainer.md states, 1e-5 (1 + |z|). */
static void test_forward_tolerance(void **state)
{
    dpzo_ctx *ctx = *state;
    static const tiny_case big[] = {
        {"mlp:128", 28, 28, 10, {0, {784, 128, 10}, 2, 0, 0, 0, 0, 10}},
        {"mlp:256-64", 28, 28, 10, {0, {784, 256, 64, 10}, 3, 0, 0, 0, 0, 10}},
        {"cnn:8-16", 28, 28, 10, {1, {0}, 0, 8, 16, 28, 28, 10}},
    };
    for (size_t c = 0; c < 3; c++) {
        const tiny_case *tc = &big[c];
        float *theta;
        dpzo_model *m = tiny_model(ctx, tc, &theta, 900 + c);
        size_t P = dpzo_model_n_params(m), K = (size_t)tc->K, n = 70;
        dpzo_dataset ds = random_data(n, tc->rows, tc->cols, tc->K, 31 + c);
        size_t *idx = malloc(n * sizeof *idx);
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        dpzo_dir dir;
        assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 5, 2, 0, P, 1.0));
        const double lambda = 1e-2;
        double *logits = malloc(n * K * sizeof *logits), *loss = malloc(n * sizeof *loss);
        double *th = malloc(P * sizeof *th), z[16], ez[16];
        double worst = 0, widest = 0, seen = 0;
        for (int pass = 0; pass < 2; pass++) { /* theta, then theta + lambda u */
            dpzo_perturb pert = {&dir, lambda, 1};
            const dpzo_perturb *pp = pass ? &pert : NULL;
            for (size_t j = 0; j < P; j++) /* the floats the model materialises */
                th[j] = pass ? (float)((double)theta[j] +
                                       lambda * (double)(float)dpzo_dir_at(&dir, j))
                             : theta[j];
            assert_ok(ctx, dpzo_model_logits(m, theta, pp, &ds, idx, n, logits));
            assert_ok(ctx, dpzo_model_losses(m, theta, pp, &ds, idx, n, loss));
            for (size_t b = 0; b < n; b++) {
                bounded_logits(&tc->sh, th, ds.x + b * ds.dim, z, ez);
                double emax = 0;
                for (size_t k = 0; k < K; k++) {
                    double err = fabs(logits[b * K + k] - z[k]);
                    if (!(err <= ez[k]))
                        fail_msg("%s pass %d row %zu logit %zu: %.9g, shadow %.9g, error %.3g "
                                 "over the bound %.3g",
                                 tc->spec, pass, b, k, logits[b * K + k], z[k], err, ez[k]);
                    worst = fmax(worst, err / ez[k]);
                    seen = fmax(seen, err / (1 + fabs(z[k])));
                    widest = fmax(widest, ez[k] / (1 + fabs(z[k])));
                    emax = fmax(emax, ez[k]);
                }
                double want = lse_loss(z, K, ds.y[b]);
                if (!(fabs(loss[b] - want) <= 2 * emax + 1e-12 * (1 + fabs(want))))
                    fail_msg("%s row %zu: loss %.12g, shadow %.12g, bound %.3g", tc->spec, b,
                             loss[b], want, 2 * emax);
            }
        }
        print_message("%s: largest logit error %.2g (1 + |z|), %.2g of its bound; widest bound "
                      "%.2g (1 + |z|)\n",
                      tc->spec, seen, worst, widest);
        assert_true(widest < 0.5); /* the worst case still bounds something */
        /* the documented working tolerance: 1e-5 (1 + |z|), far inside the worst case (float
         * rounding errors mostly cancel; about 1e-6 seen here) */
        assert_true(seen <= 1e-5);
        assert_true(seen > 1e-9); /* and float arithmetic is really being measured */
        free(logits);
        free(loss);
        free(th);
        free(idx);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

/* ---- the BLAS ------------------------------------------------------------------------- */

/* The models' cblas_sgemm is OpenBLAS's, not GSL's reference libgslcblas, which exports the
 * same name and, first in the link, made training ten times slower (CMakeLists.txt). */
static void test_blas_is_openblas(void **state)
{
    (void)state;
    Dl_info info;
    assert_true(dladdr((void *)cblas_sgemm, &info) != 0 && info.dli_fname != NULL);
    print_message("cblas_sgemm from %s\n", info.dli_fname);
    if (strstr(info.dli_fname, "openblas") == NULL)
        fail_msg("cblas_sgemm comes from %s, not OpenBLAS", info.dli_fname);
}

/* ---- threads ---------------------------------------------------------------------------- */

/* Every evaluation gives the same bits with 1, 2, 3 and 5 threads, at batch sizes around
 * the block size (128) and spanning several blocks, perturbed or not, fused or
 * not, gradients with per-example rows. */
static void test_threads(void **state)
{
    dpzo_ctx *ctx = *state;
    static const tiny_case cases[] = {
        {"mlp:40-20", 8, 8, 5, {0, {64, 40, 20, 5}, 3, 0, 0, 0, 0, 5}},
        {"cnn:3-4", 8, 8, 5, {1, {0}, 0, 3, 4, 8, 8, 5}},
    };
    const size_t batches[] = {1, 127, 128, 129, 300};
    const unsigned counts[] = {1, 2, 3, 5};
    for (size_t c = 0; c < 2; c++) {
        float *theta;
        dpzo_model *m = tiny_model(ctx, &cases[c], &theta, 700 + c);
        assert_int_equal(dpzo_model_threads(m), 1);
        size_t P = dpzo_model_n_params(m), K = 5, nmax = 300;
        dpzo_dataset ds = random_data(nmax, 8, 8, 5, 41 + c);
        size_t *idx = malloc(nmax * sizeof *idx);
        for (size_t i = 0; i < nmax; i++)
            idx[i] = (i * 7) % nmax;
        dpzo_dir dir;
        assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 9, 3, 1, P, 1.0));
        dpzo_perturb pert = {&dir, 1e-2, -1};
        size_t per = nmax * (3 + K) + 3 * P; /* lp, lm, loss, logits, grad x 3 */
        double *ref = malloc(per * sizeof *ref), *got = malloc(per * sizeof *got);
        float *pe = malloc(nmax * P * sizeof *pe), *pe_ref = malloc(nmax * P * sizeof *pe);
        float *grad = malloc(P * sizeof *grad);
        for (size_t bi = 0; bi < 5; bi++) {
            size_t B = batches[bi];
            for (size_t t = 0; t < 4; t++) {
                dpzo_model_set_threads(m, counts[t]);
                assert_int_equal(dpzo_model_threads(m), counts[t]);
                double *o = t == 0 ? ref : got;
                memset(o, 0, per * sizeof *o);
                float *pex = t == 0 ? pe_ref : pe;
                double ml;
                assert_ok(ctx, dpzo_model_grad(m, theta, &ds, idx, B, grad, pex, &ml));
                assert_ok(ctx, dpzo_model_losses_pm(m, theta, &dir, 1e-3, &ds, idx, B, o,
                                                    o + nmax));
                assert_ok(ctx, dpzo_model_losses(m, theta, &pert, &ds, idx, B, o + 2 * nmax));
                assert_ok(ctx, dpzo_model_logits(m, theta, NULL, &ds, idx, B, o + 3 * nmax));
                for (size_t j = 0; j < P; j++)
                    o[(3 + K) * nmax + j] = grad[j];
                o[(3 + K) * nmax + P] = ml;
                double acc;
                assert_ok(ctx, dpzo_model_accuracy(m, theta, &ds, &acc, &ml));
                o[(3 + K) * nmax + P + 1] = acc;
                o[(3 + K) * nmax + P + 2] = ml;
                if (t > 0) {
                    if (memcmp(ref, got, per * sizeof *ref) != 0)
                        fail_msg("%s batch %zu: %u threads differ from 1", cases[c].spec, B,
                                 counts[t]);
                    assert_memory_equal(pe_ref, pe, B * P * sizeof *pe);
                }
            }
        }
        /* a fresh model whose first evaluation on several threads is a gradient: starting
         * the threads grows the work areas (a regression: the gradient kept a pointer into
         * them from before its forward pass; ASan caught it) */
        float *theta2;
        dpzo_model *m2 = tiny_model(ctx, &cases[c], &theta2, 700 + c);
        dpzo_model_set_threads(m2, 3);
        double ml2;
        assert_ok(ctx, dpzo_model_grad(m2, theta2, &ds, idx, nmax, grad, pe, &ml2));
        assert_memory_equal(pe, pe_ref, nmax * P * sizeof *pe); /* batch 300 above, last */
        dpzo_model_free(m2);
        free(theta2);
        dpzo_model_set_threads(m, 0); /* 0: the machine's cores */
        assert_true(dpzo_model_threads(m) >= 1);
        free(ref);
        free(got);
        free(pe);
        free(pe_ref);
        free(grad);
        free(idx);
        free(theta);
        dpzo_dataset_free(&ds);
        dpzo_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_layout),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_losses_match_shadow),
        cmocka_unit_test(test_zero_params),
        cmocka_unit_test(test_accuracy_by_hand),
        cmocka_unit_test(test_perturbed),
        cmocka_unit_test(test_losses_pm),
        cmocka_unit_test(test_grad_finite_differences),
        cmocka_unit_test(test_per_example),
        cmocka_unit_test(test_sgd_learns),
        cmocka_unit_test(test_forward_tolerance),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_blas_is_openblas),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
