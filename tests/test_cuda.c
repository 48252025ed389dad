/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_cuda.c: the CUDA kernels (kernels/cuda, dpzo/cuda.h) against the CPU
 * reference, on random inputs, under several launch geometries (results must not depend on
 * them):
 *   fill, axpy, multi-direction axpy, masked and explicit directions: bit-exact against
 *     dpzo_dir_fill / dpzo_dir_axpy (NaN compared as NaN);
 *   the SPHERE scale (dpzo_cuda_dir_init, dpzo_cuda_dir_set_mult): bit-exact against
 *     dpzo_dir_init / dpzo_dir_set_mult, across block boundaries;
 *   clip-and-sum: bit-exact (tolerance 0) against the CPU release of the step object
 *     (trainer/zo_step.c: zero_if_not_finite, dpzo_privacy_clip, the sum over rows in
 *     order), re-stated below;
 *   the typed kernels (dpzo_cuda_dir_perturb / _update, f32, bf16, f16, k = 1, 3 and 11
 *     directions, on a stream made with cudaStreamCreate): bit-exact against
 *     dpzo_dir_perturb / dpzo_dir_update (a NaN compared as a NaN: the device's NaN
 *     payloads differ from x86's), x left unchanged.
 * ctest label gpu. Without a usable device (no GPU, no driver, a build without CUDA) it
 * checks that the API fails cleanly, prints why and exits 77, which ctest reports as
 * skipped. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/cuda.h"
#include "dpzo/zo_dir.h"
#include "zo_dtype.h"
#ifdef DPZO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define SKIP_CODE 77

static uint64_t rng_state = 0x5eed0c0dau;

static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rnd_unit(void) { return (double)(rnd64() >> 11) * 0x1p-53; }

/* The launch geometries every kernel is run under: (blocks, threads), 0 = default. */
static const unsigned GEOM[][2] = {{0, 0}, {1, 32}, {3, 96}, {61, 128}, {1000, 1024}};
#define NGEOM (sizeof GEOM / sizeof GEOM[0])

static void set_geom(dpzo_ctx *ctx, size_t g)
{
    assert_ok(ctx, dpzo_cuda_set_launch(ctx, GEOM[g][0], GEOM[g][1]));
}

static float *dev_floats(dpzo_ctx *ctx, size_t n)
{
    void *p = NULL;
    assert_ok(ctx, dpzo_cuda_malloc(ctx, &p, n * sizeof(float)));
    return p;
}

static double *dev_doubles(dpzo_ctx *ctx, size_t n)
{
    void *p = NULL;
    assert_ok(ctx, dpzo_cuda_malloc(ctx, &p, n * sizeof(double)));
    return p;
}

/* Poisons n floats of device memory (a NaN pattern nothing computes): an element the
 * kernel fails to write shows up. */
static void poison(dpzo_ctx *ctx, float *dev, size_t n)
{
    float *h = malloc(n * sizeof *h);
    assert_non_null(h);
    memset(h, 0xa5, n * sizeof *h);
    assert_ok(ctx, dpzo_cuda_to_device(ctx, dev, h, n * sizeof *h));
    free(h);
}

static int same_float(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void assert_same_floats(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!same_float(got[i], want[i]))
            fail_msg("%s: element %zu: GPU %a, CPU %a", what, i, (double)got[i],
                     (double)want[i]);
}

static dpzo_dir random_dir(dpzo_ctx *ctx, dpzo_dir_kind kind, uint64_t dim)
{
    dpzo_dir d;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, kind, rnd64(), rnd64() >> 32, (uint32_t)rnd64(), dim,
                                 kind == DPZO_DIR_SPHERE ? 0.5 + 10.0 * rnd_unit() : 1.0));
    return d;
}

/* The ranges [j0, j0 + n) tried on a direction of dimension dim (aligned, unaligned, past
 * the end, a single element). */
static void ranges(uint64_t dim, uint64_t j0[5], size_t n[5])
{
    j0[0] = 0, n[0] = (size_t)dim;
    j0[1] = (1 + rnd64() % 7) % dim, n[1] = (size_t)(dim - j0[1]);
    j0[2] = dim / 3, n[2] = (size_t)(dim - dim / 3 + 9); /* 9 elements past dim: NaN */
    j0[3] = dim - 1, n[3] = 1;
    j0[4] = rnd64() % dim, n[4] = (size_t)(rnd64() % (dim - j0[4]) + 1);
}

/* ---- fill ------------------------------------------------------------------------------ */

static void check_fill(dpzo_ctx *ctx, const dpzo_dir *cpu, const dpzo_dir *gpu,
                       const char *what)
{
    uint64_t j0[5];
    size_t n[5];
    ranges(cpu->dim, j0, n);
    for (int r = 0; r < 5; r++) {
        float *want = malloc(n[r] * sizeof *want), *got = malloc(n[r] * sizeof *got);
        float *dev = dev_floats(ctx, n[r]);
        assert_true(want != NULL && got != NULL);
        dpzo_dir_fill(cpu, j0[r], n[r], want);
        for (size_t g = 0; g < NGEOM; g++) {
            set_geom(ctx, g);
            poison(ctx, dev, n[r]);
            assert_ok(ctx, dpzo_cuda_dir_fill(ctx, gpu, j0[r], n[r], dev));
            assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dev, n[r] * sizeof *got));
            assert_same_floats(got, want, n[r], what);
        }
        dpzo_cuda_free(dev);
        free(want);
        free(got);
    }
    set_geom(ctx, 0);
}

static void test_fill_plain(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {1, 3, 4, 5, 4095, 4096, 4097, 70001};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            dpzo_dir d = random_dir(ctx, (dpzo_dir_kind)kind, dims[i]);
            check_fill(ctx, &d, &d, dpzo_dir_kind_name((dpzo_dir_kind)kind));
        }
}

/* Counter words beyond 32 bits: j >> 34 != 0 (element indices past 2^34). */
static void test_fill_high_index(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dim = (1ull << 36) + 12345;
    dpzo_dir d;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, rnd64(), 7, 3, dim, 1.0));
    const uint64_t j0 = (1ull << 35) + 3;
    const size_t n = 10001;
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    float *dev = dev_floats(ctx, n);
    dpzo_dir_fill(&d, j0, n, want);
    poison(ctx, dev, n);
    assert_ok(ctx, dpzo_cuda_dir_fill(ctx, &d, j0, n, dev));
    assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dev, n * sizeof *got));
    assert_same_floats(got, want, n, "fill at 2^35");
    dpzo_cuda_free(dev);
    free(want);
    free(got);
}

/* ---- SPHERE scale ---------------------------------------------------------------------- */

static void test_sphere_scale(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {1, 2, 4095, 4096, 4097, 4 * 4096, 4 * 4096 + 1, 5 * 4096 + 3,
                             123457, 1000003};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        uint64_t seed = rnd64(), step = rnd64() >> 33;
        uint32_t query = (uint32_t)rnd64();
        double radius = sqrt((double)dims[i]);
        dpzo_dir cpu, gpu;
        assert_ok(ctx, dpzo_dir_init(ctx, &cpu, DPZO_DIR_SPHERE, seed, step, query, dims[i],
                                     radius));
        for (size_t g = 0; g < NGEOM; g++) {
            set_geom(ctx, g);
            assert_ok(ctx, dpzo_cuda_dir_init(ctx, &gpu, DPZO_DIR_SPHERE, seed, step, query,
                                              dims[i], radius));
            if (!same_double(gpu.scale, cpu.scale))
                fail_msg("sphere dim %llu geometry %zu: GPU scale %a, CPU %a",
                         (unsigned long long)dims[i], g, gpu.scale, cpu.scale);
        }
        set_geom(ctx, 0);
        if (dims[i] < 200000)
            check_fill(ctx, &cpu, &gpu, "sphere fill");
    }
    /* the CPU's argument checks */
    dpzo_dir d;
    assert_int_equal(dpzo_cuda_dir_init(ctx, &d, DPZO_DIR_SPHERE, 1, 0, 0, 10, -1.0),
                     DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_dir_init(ctx, &d, DPZO_DIR_SPHERE, 1, 0, 0, 0, 1.0),
                     DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_dir_init(ctx, &d, DPZO_DIR_SPHERE, 1, 1ull << 32, 0, 10, 1.0),
                     DPZO_EINVAL);
}

/* ---- masks, explicit vectors --------------------------------------------------------------- */

static float *random_mask(uint64_t dim)
{
    float *m = malloc(dim * sizeof *m);
    assert_non_null(m);
    for (uint64_t j = 0; j < dim; j++) {
        uint64_t r = rnd64();
        m[j] = (r & 3) == 0 ? 0.0f : (r & 3) == 1 ? 1.0f : (float)(4.0 * rnd_unit());
    }
    return m;
}

static void test_masked(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {5, 4096, 9001, 3 * 4096 + 17};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            uint64_t dim = dims[i];
            float *mult = random_mask(dim);
            mult[0] = 1.0f; /* never an all-zero mask */
            float *dmult = dev_floats(ctx, dim);
            assert_ok(ctx, dpzo_cuda_to_device(ctx, dmult, mult, dim * sizeof *mult));
            dpzo_dir cpu = random_dir(ctx, (dpzo_dir_kind)kind, dim), gpu = cpu;
            double radius = 1.0 + rnd_unit();
            assert_ok(ctx, dpzo_dir_set_mult(ctx, &cpu, mult, radius));
            for (size_t g = 0; g < NGEOM; g++) {
                set_geom(ctx, g);
                dpzo_dir t = gpu;
                assert_ok(ctx, dpzo_cuda_dir_set_mult(ctx, &t, dmult, radius));
                if (!same_double(t.scale, cpu.scale))
                    fail_msg("masked %s dim %llu: GPU scale %a, CPU %a",
                             dpzo_dir_kind_name((dpzo_dir_kind)kind),
                             (unsigned long long)dim, t.scale, cpu.scale);
            }
            set_geom(ctx, 0);
            assert_ok(ctx, dpzo_cuda_dir_set_mult(ctx, &gpu, dmult, radius));
            check_fill(ctx, &cpu, &gpu, "masked fill");
            dpzo_cuda_free(dmult);
            free(mult);
        }
}

static void test_vector(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dim = 10007;
    float *v = malloc(dim * sizeof *v);
    for (uint64_t j = 0; j < dim; j++)
        v[j] = (float)(rnd_unit() * 2.0 - 1.0);
    float *dv = dev_floats(ctx, dim);
    assert_ok(ctx, dpzo_cuda_to_device(ctx, dv, v, dim * sizeof *v));
    dpzo_dir cpu, gpu;
    assert_ok(ctx, dpzo_dir_init_vector(ctx, &cpu, v, dim));
    assert_ok(ctx, dpzo_dir_init_vector(ctx, &gpu, dv, dim));
    check_fill(ctx, &cpu, &gpu, "explicit fill");
    dpzo_cuda_free(dv);
    free(v);
}

/* ---- axpy ---------------------------------------------------------------------------------- */

/* k directions of dimension dim in both memories: kinds mixed, a masked one and an explicit
 * one among them (cpu[] with host pointers, gpu[] with device pointers; the arrays to free
 * in hold[0..1] and dhold[0..1]). */
static void mixed_dirs(dpzo_ctx *ctx, unsigned k, uint64_t dim, dpzo_dir *cpu, dpzo_dir *gpu,
                       float **hold, float **dhold)
{
    hold[0] = random_mask(dim);
    hold[0][0] = 1.0f;
    hold[1] = malloc(dim * sizeof(float));
    for (uint64_t j = 0; j < dim; j++)
        hold[1][j] = (float)(rnd_unit() - 0.5);
    for (int h = 0; h < 2; h++) {
        dhold[h] = dev_floats(ctx, dim);
        assert_ok(ctx, dpzo_cuda_to_device(ctx, dhold[h], hold[h], dim * sizeof(float)));
    }
    for (unsigned d = 0; d < k; d++) {
        cpu[d] = random_dir(ctx, (dpzo_dir_kind)(d % 3), dim);
        gpu[d] = cpu[d];
        if (d % 5 == 3) {
            assert_ok(ctx, dpzo_dir_set_mult(ctx, &cpu[d], hold[0], 2.0));
            assert_ok(ctx, dpzo_cuda_dir_set_mult(ctx, &gpu[d], dhold[0], 2.0));
        } else if (d % 5 == 4) {
            assert_ok(ctx, dpzo_dir_init_vector(ctx, &cpu[d], hold[1], dim));
            assert_ok(ctx, dpzo_dir_init_vector(ctx, &gpu[d], dhold[1], dim));
        }
    }
}

static void check_axpy(dpzo_ctx *ctx, unsigned k, uint64_t dim)
{
    dpzo_dir cpu[16], gpu[16];
    float *hold[2], *dhold[2];
    assert_true(k <= 16);
    mixed_dirs(ctx, k, dim, cpu, gpu, hold, dhold);
    double alpha[16];
    for (unsigned d = 0; d < k; d++)
        alpha[d] = (rnd_unit() - 0.5) * (d % 2 ? 1e-3 : 3.0);
    uint64_t j0[5];
    size_t n[5];
    ranges(dim, j0, n);
    for (int r = 0; r < 5; r++) {
        float *theta = malloc(n[r] * sizeof *theta), *want = malloc(n[r] * sizeof *want),
              *got = malloc(n[r] * sizeof *got);
        for (size_t i = 0; i < n[r]; i++)
            theta[i] = (float)((rnd_unit() - 0.5) * 8.0);
        memcpy(want, theta, n[r] * sizeof *want);
        for (unsigned d = 0; d < k; d++)
            dpzo_dir_axpy(&cpu[d], j0[r], n[r], alpha[d], want);
        float *dev = dev_floats(ctx, n[r]);
        for (size_t g = 0; g < NGEOM; g++) {
            set_geom(ctx, g);
            assert_ok(ctx, dpzo_cuda_to_device(ctx, dev, theta, n[r] * sizeof *theta));
            if (k == 1)
                assert_ok(ctx, dpzo_cuda_dir_axpy(ctx, gpu, j0[r], n[r], alpha[0], dev));
            else
                assert_ok(ctx, dpzo_cuda_dir_axpy_multi(ctx, gpu, alpha, k, j0[r], n[r], dev));
            assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dev, n[r] * sizeof *got));
            assert_same_floats(got, want, n[r], k == 1 ? "axpy" : "axpy_multi");
        }
        set_geom(ctx, 0);
        dpzo_cuda_free(dev);
        free(theta);
        free(want);
        free(got);
    }
    for (int h = 0; h < 2; h++) {
        dpzo_cuda_free(dhold[h]);
        free(hold[h]);
    }
}

static void test_axpy(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {1, 7, 4096, 33333};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (unsigned k = 1; k <= 5; k++)
            check_axpy(ctx, k, dims[i]);
}

/* More directions than one pass takes (DPZO_CU_MAX_DIRS = 8): several passes, same bits. */
static void test_axpy_many(void **state)
{
    dpzo_ctx *ctx = *state;
    check_axpy(ctx, 16, 20011);
    check_axpy(ctx, 11, 4099);
}

/* ---- typed perturb / update ------------------------------------------------------------- */

/* A stream of the caller's (cudaStreamCreate) when the test can use the runtime API, else
 * NULL (the legacy default stream); waited on by stream_sync. */
static void *stream_new(void)
{
#ifdef DPZO_HAVE_CUDA
    cudaStream_t s = NULL;
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    return (void *)s;
#else
    return NULL;
#endif
}

static void stream_sync(dpzo_ctx *ctx, void *stream)
{
#ifdef DPZO_HAVE_CUDA
    assert_int_equal(cudaStreamSynchronize((cudaStream_t)stream), cudaSuccess);
#else
    (void)stream;
#endif
    assert_ok(ctx, dpzo_cuda_synchronize(ctx));
}

static void stream_free(void *stream)
{
#ifdef DPZO_HAVE_CUDA
    cudaStreamDestroy((cudaStream_t)stream);
#else
    (void)stream;
#endif
}

/* Element i of a typed array as float (exact). */
static float typed_at(dpzo_dtype dt, const void *p, size_t i)
{
    if (dt == DPZO_F32)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return dt == DPZO_BF16 ? dpzo_hd_bf16_to_f32(h) : dpzo_hd_f16_to_f32(h);
}

/* The same bits, or NaN both. */
static void assert_same_typed(dpzo_dtype dt, const void *got, const void *want, size_t n,
                              const char *what)
{
    size_t es = dpzo_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        float g = typed_at(dt, got, i), w = typed_at(dt, want, i);
        if (isnan(g) && isnan(w))
            continue;
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0)
            fail_msg("%s %s: element %zu: GPU %a, CPU %a", what, dpzo_dtype_name(dt), i,
                     (double)g, (double)w);
    }
}

/* n random values of type dt (mostly O(1), some large, tiny, zeros, infinities, NaN). */
static void *random_typed(dpzo_dtype dt, size_t n)
{
    size_t es = dpzo_dtype_size(dt);
    unsigned char *p = malloc(n * es + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd64() % 1000;
        float v = (float)((rnd_unit() - 0.5) * (r < 20 ? 3e4 : r < 40 ? 1e-6 : 4.0));
        if (r == 40)
            v = -0.0f;
        else if (r == 41)
            v = -INFINITY;
        else if (r == 42)
            v = NAN;
        if (dt == DPZO_F32) {
            memcpy(p + 4 * i, &v, 4);
        } else {
            uint16_t h = dt == DPZO_BF16 ? dpzo_hd_f32_to_bf16(v) : dpzo_hd_f32_to_f16(v);
            memcpy(p + 2 * i, &h, 2);
        }
    }
    return p;
}

static void check_typed(dpzo_ctx *ctx, void *stream, unsigned k, uint64_t dim, dpzo_dtype dt)
{
    dpzo_dir cpu[16], gpu[16];
    float *hold[2], *dhold[2];
    assert_true(k <= 16);
    mixed_dirs(ctx, k, dim, cpu, gpu, hold, dhold);
    if (k > 1) { /* a shorter direction: the update's NaN starts at the smallest dim */
        cpu[1] = random_dir(ctx, DPZO_DIR_RADEMACHER, dim - dim / 4);
        gpu[1] = cpu[1];
    }
    double alpha[16];
    for (unsigned d = 0; d < k; d++)
        alpha[d] = (rnd_unit() - 0.5) * (d % 2 ? 1e-3 : 3.0);
    const size_t es = dpzo_dtype_size(dt);
    uint64_t j0[5];
    size_t n[5];
    ranges(dim, j0, n);
    for (int r = 0; r < 5; r++) {
        const size_t bytes = n[r] * es;
        unsigned char *x = random_typed(dt, n[r]);
        unsigned char *want_p = malloc(bytes), *want_u = malloc(bytes), *got = malloc(bytes);
        assert_true(want_p != NULL && want_u != NULL && got != NULL);
        dpzo_dir_perturb(&cpu[0], j0[r], n[r], alpha[0], dt, x, want_p);
        memcpy(want_u, x, bytes);
        dpzo_dir_update(cpu, alpha, k, j0[r], n[r], dt, want_u);
        void *dx = NULL, *dout = NULL, *dth = NULL;
        assert_ok(ctx, dpzo_cuda_malloc(ctx, &dx, bytes));
        assert_ok(ctx, dpzo_cuda_malloc(ctx, &dout, bytes + 4));
        assert_ok(ctx, dpzo_cuda_malloc(ctx, &dth, bytes));
        assert_ok(ctx, dpzo_cuda_to_device(ctx, dx, x, bytes));
        for (size_t g = 0; g < NGEOM; g++) {
            set_geom(ctx, g);
            poison(ctx, dout, (bytes + 3) / sizeof(float)); /* every byte of out */
            assert_ok(ctx, dpzo_cuda_to_device(ctx, dth, x, bytes));
            assert_ok(ctx, dpzo_cuda_dir_perturb(ctx, &gpu[0], j0[r], n[r], alpha[0], dt, dx,
                                                 dout, stream));
            assert_ok(ctx, dpzo_cuda_dir_update(ctx, gpu, alpha, k, j0[r], n[r], dt, dth,
                                                stream));
            stream_sync(ctx, stream);
            assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dout, bytes));
            assert_same_typed(dt, got, want_p, n[r], "perturb");
            assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dth, bytes));
            assert_same_typed(dt, got, want_u, n[r], k == 1 ? "update k 1" : "update");
            assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dx, bytes));
            assert_memory_equal(got, x, bytes); /* x is never written */
        }
        set_geom(ctx, 0);
        dpzo_cuda_free(dx);
        dpzo_cuda_free(dout);
        dpzo_cuda_free(dth);
        free(x);
        free(want_p);
        free(want_u);
        free(got);
    }
    for (int h = 0; h < 2; h++) {
        dpzo_cuda_free(dhold[h]);
        free(hold[h]);
    }
}

static void test_typed(void **state)
{
    dpzo_ctx *ctx = *state;
    void *stream = stream_new();
    const uint64_t dims[] = {1, 7, 4096, 33333};
    const dpzo_dtype dts[] = {DPZO_F32, DPZO_BF16, DPZO_F16};
    const unsigned ks[] = {1, 3, 11}; /* 11: more than one launch's by-value directions */
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (size_t t = 0; t < 3; t++)
            for (size_t kk = 0; kk < sizeof ks / sizeof ks[0]; kk++)
                check_typed(ctx, stream, ks[kk], dims[i], dts[t]);
    /* the legacy default stream too */
    check_typed(ctx, NULL, 3, 5001, DPZO_BF16);
    stream_free(stream);
    /* argument checks */
    dpzo_dir d = random_dir(ctx, DPZO_DIR_GAUSSIAN, 8);
    float *dev = dev_floats(ctx, 8);
    double one = 1.0;
    assert_int_equal(dpzo_cuda_dir_perturb(ctx, &d, 0, 8, 1.0, (dpzo_dtype)3, dev, dev, NULL),
                     DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_dir_update(ctx, &d, &one, 0, 0, 8, DPZO_F16, dev, NULL),
                     DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_dir_perturb(ctx, &d, 0, 8, 1.0, DPZO_F32, NULL, dev, NULL),
                     DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_dir_update(ctx, &d, NULL, 1, 0, 8, DPZO_F32, dev, NULL),
                     DPZO_EINVAL);
    assert_int_equal(
        dpzo_cuda_dir_perturb(ctx, &d, UINT64_MAX - 3, 8, 1.0, DPZO_BF16, dev, dev, NULL),
        DPZO_EINVAL); /* j0 + n overflows */
    assert_ok(ctx, dpzo_cuda_dir_update(ctx, &d, &one, 1, 0, 0, DPZO_BF16, NULL, NULL));
    dpzo_cuda_free(dev);
}

/* ---- clip and sum -------------------------------------------------------------------------- */

/* The step object's release (trainer/zo_step.c), restated: per row, a non-finite entry
 * zeroes the row; then dpzo_privacy_clip (L2 or L1 to C; a non-finite sum zeroes the row; f = C / norm when
 * norm > C, then f (1 - 1e-12)); qsum[k] = sum over rows in order. */
static void cpu_clip_sum(double *v, size_t b, unsigned Q, dpzo_cuda_clip_mode mode, double C,
                         double *qsum)
{
    for (unsigned k = 0; k < Q; k++)
        qsum[k] = 0.0;
    for (size_t i = 0; i < b; i++) {
        double *r = v + i * Q;
        if (mode != DPZO_CUDA_CLIP_NONE) {
            for (unsigned k = 0; k < Q; k++)
                if (!isfinite(r[k])) {
                    memset(r, 0, Q * sizeof *r);
                    break;
                }
            double s = 0.0;
            for (unsigned k = 0; k < Q; k++)
                s += mode == DPZO_CUDA_CLIP_L1 ? fabs(r[k]) : r[k] * r[k];
            if (!isfinite(s)) {
                memset(r, 0, Q * sizeof *r);
            } else {
                double norm = mode == DPZO_CUDA_CLIP_L1 ? s : sqrt(s);
                double f = norm > C ? C / norm : 1.0;
                if (f < 1.0) {
                    f *= 1.0 - 1e-12;
                    for (unsigned k = 0; k < Q; k++)
                        r[k] *= f;
                }
            }
        }
        for (unsigned k = 0; k < Q; k++)
            qsum[k] += r[k];
    }
}

static void test_clip_sum(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t bs[] = {0, 1, 17, 1000};
    const unsigned Qs[] = {1, 4, 33};
    for (size_t bi = 0; bi < sizeof bs / sizeof bs[0]; bi++)
        for (size_t qi = 0; qi < sizeof Qs / sizeof Qs[0]; qi++)
            for (int mode = 0; mode < 3; mode++) {
                size_t b = bs[bi];
                unsigned Q = Qs[qi];
                size_t nv = b * Q > 0 ? b * Q : 1;
                double *v = malloc(nv * sizeof *v), *want = malloc(nv * sizeof *v),
                       *got = malloc(nv * sizeof *v);
                double qwant[33], qgot[33];
                double C = 0.1 + 5.0 * rnd_unit();
                for (size_t i = 0; i < b * Q; i++) {
                    uint64_t r = rnd64() % 1000;
                    v[i] = (rnd_unit() - 0.5) * (r < 500 ? 1.0 : r < 900 ? 30.0 : 1e3);
                    if (r == 0)
                        v[i] = NAN;
                    else if (r == 1)
                        v[i] = -INFINITY;
                    else if (r == 2)
                        v[i] = 1e200; /* its square overflows */
                }
                memcpy(want, v, b * Q * sizeof *v);
                cpu_clip_sum(want, b, Q, (dpzo_cuda_clip_mode)mode, C, qwant);
                double *dv = dev_doubles(ctx, nv), *dq = dev_doubles(ctx, Q),
                       *df = dev_doubles(ctx, b > 0 ? b : 1);
                for (size_t g = 0; g < NGEOM; g++) {
                    set_geom(ctx, g);
                    assert_ok(ctx, dpzo_cuda_to_device(ctx, dv, v, b * Q * sizeof *v));
                    assert_ok(ctx, dpzo_cuda_clip_sum(ctx, dv, b, Q, (dpzo_cuda_clip_mode)mode,
                                                      C, dq, df));
                    assert_ok(ctx, dpzo_cuda_to_host(ctx, qgot, dq, Q * sizeof *qgot));
                    assert_ok(ctx, dpzo_cuda_to_host(ctx, got, dv, b * Q * sizeof *got));
                    for (unsigned k = 0; k < Q; k++)
                        if (!same_double(qgot[k], qwant[k]) &&
                            !(mode == 0 && isnan(qgot[k]) && isnan(qwant[k])))
                            fail_msg("clip-sum b %zu Q %u mode %d: qsum[%u] GPU %a, CPU %a", b,
                                     Q, mode, k, qgot[k], qwant[k]);
                    for (size_t i = 0; i < b * Q; i++)
                        if (!same_double(got[i], want[i]) &&
                            !(mode == 0 && isnan(got[i]) && isnan(want[i])))
                            fail_msg("clip-sum b %zu Q %u mode %d: entry %zu GPU %a, CPU %a",
                                     b, Q, mode, i, got[i], want[i]);
                }
                set_geom(ctx, 0);
                dpzo_cuda_free(dv);
                dpzo_cuda_free(dq);
                dpzo_cuda_free(df);
                free(v);
                free(want);
                free(got);
            }
    assert_int_equal(dpzo_cuda_clip_sum(ctx, NULL, 0, 1, DPZO_CUDA_CLIP_L2, -1.0, NULL, NULL),
                     DPZO_EINVAL);
}

static void test_launch_args(void **state)
{
    dpzo_ctx *ctx = *state;
    assert_int_equal(dpzo_cuda_set_launch(ctx, 1, 33), DPZO_EINVAL);
    assert_int_equal(dpzo_cuda_set_launch(ctx, 1, 2048), DPZO_EINVAL);
    assert_ok(ctx, dpzo_cuda_set_launch(ctx, 0, 0));
    char name[128];
    int major = 0, minor = 0, sms = 0;
    assert_ok(ctx, dpzo_cuda_device_info(ctx, name, sizeof name, &major, &minor, &sms));
    print_message("test_cuda: device %s, compute capability %d.%d, %d multiprocessors\n", name,
                  major, minor, sms);
    assert_true(major >= 7 && sms > 0);
}

/* Without a device every call fails cleanly (no abort), then the test is skipped. */
static int no_device(void)
{
    const char *why = dpzo_cuda_unavailable_reason();
    dpzo_ctx *ctx = dpzo_ctx_new();
    void *p = (void *)1;
    float x = 0.0f;
    double alpha = 1.0;
    dpzo_dir d;
    if (ctx == NULL || dpzo_cuda_malloc(ctx, &p, 16) != DPZO_EUNSUPPORTED || p != NULL ||
        dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 1, 0, 0, 4, 1.0) != DPZO_OK ||
        dpzo_cuda_dir_fill(ctx, &d, 0, 1, &x) != DPZO_EUNSUPPORTED ||
        dpzo_cuda_dir_init(ctx, &d, DPZO_DIR_SPHERE, 1, 0, 0, 4, 1.0) != DPZO_EUNSUPPORTED ||
        dpzo_cuda_dir_perturb(ctx, &d, 0, 1, 1.0, DPZO_BF16, &x, &x, NULL) !=
            DPZO_EUNSUPPORTED ||
        dpzo_cuda_dir_update(ctx, &d, &alpha, 1, 0, 1, DPZO_F16, &x, NULL) !=
            DPZO_EUNSUPPORTED ||
        dpzo_cuda_dir_perturb(ctx, &d, 0, 1, 1.0, (dpzo_dtype)3, &x, &x, NULL) != DPZO_EINVAL ||
        dpzo_cuda_synchronize(ctx) != DPZO_EUNSUPPORTED) {
        fprintf(stderr, "test_cuda: without a device, the API did not fail cleanly\n");
        dpzo_ctx_free(ctx);
        return 1;
    }
    printf("test_cuda: SKIPPED: no usable CUDA device: %s\n", why);
    dpzo_ctx_free(ctx);
    return SKIP_CODE;
}

int main(void)
{
    if (!dpzo_cuda_available())
        return no_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_launch_args, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_fill_plain, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_fill_high_index, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_sphere_scale, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_masked, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_vector, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_axpy, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_axpy_many, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_clip_sum, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_typed, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
