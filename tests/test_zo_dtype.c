/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_zo_dtype.c: the typed kernels of dpzo/zo_dir.h (dpzo_dir_perturb,
 * dpzo_dir_update, dpzo_dtype_size / _name) and the conversions behind them
 * (kernels/zo_dtype.h):
 *   - every bf16 and every f16 bit pattern converts to the float its fields define
 *     (decoded here from sign, exponent and fraction in double) and back to itself (a NaN
 *     to a NaN: the same pattern with the quiet bit set);
 *   - float -> bf16 / f16 against a reference written differently (frexp / ldexp / floor
 *     in double: round the significand to p bits, ties to even, overflow past the largest
 *     finite value to infinity), on every halfway point between neighbouring values and
 *     its float neighbours, the overflow threshold, and millions of random floats; for f16
 *     also against the compiler's _Float16 conversion where it has one;
 *   - DPZO_F32: dpzo_dir_perturb gives the bits of dpzo_dir_axpy applied to a copy, and
 *     dpzo_dir_update those of dpzo_dir_axpy called k times, for plain, masked and explicit
 *     directions (all kinds), unaligned ranges and ranges past dim;
 *   - bf16 / f16: perturbing by +lambda and by -lambda leaves x's memory unchanged and
 *     writes round_T((float)((double)x + alpha (double)u)) with u from dpzo_dir_fill and
 *     round_T the reference above; the update with k = 1..3 directions the documented
 *     formula; splitting a range into calls gives the same bytes; n = 0 and an unknown
 *     type write nothing. */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/zo_dir.h"
#include "zo_dtype.h"

static uint64_t rng_state = 0x7e57d7e9u;

static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rnd_unit(void) { return (double)(rnd64() >> 11) * 0x1p-53; }

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* ---- the two 16-bit formats, described by their parameters ------------------------------ */

typedef struct {
    dpzo_dtype dt;
    int ebits, fbits; /* exponent and fraction bits */
} fmt16;

static const fmt16 BF16 = {DPZO_BF16, 8, 7}, F16 = {DPZO_F16, 5, 10};

static int bias(const fmt16 *f) { return (1 << (f->ebits - 1)) - 1; }

/* The value of a 16-bit pattern from its fields (NaN for a NaN pattern). */
static double decode(const fmt16 *f, uint16_t h)
{
    int s = h >> 15, e = (h >> f->fbits) & ((1 << f->ebits) - 1);
    int m = h & ((1 << f->fbits) - 1);
    double v;
    if (e == (1 << f->ebits) - 1)
        v = m != 0 ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias(f) - f->fbits);
    else
        v = ldexp((double)((1 << f->fbits) + m), e - bias(f) - f->fbits);
    return s ? -v : v;
}

static double max_finite(const fmt16 *f)
{
    return ldexp(2.0 - ldexp(1.0, -f->fbits), bias(f));
}

/* The reference rounding of a finite or infinite x (not NaN) to the format: the
 * significand rounded to fbits + 1 bits (or to the subnormal quantum), ties to even, in
 * double; a magnitude past the largest finite value after rounding is infinite. */
static double round_ref(const fmt16 *f, double x)
{
    if (x == 0.0 || isinf(x))
        return x;
    double ax = fabs(x);
    int e;
    (void)frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
    int emin = 1 - bias(f);
    int q = (e - 1 > emin ? e - 1 : emin) - f->fbits; /* the quantum's exponent */
    double scaled = ldexp(ax, -q), lo = floor(scaled), frac = scaled - lo;
    double r = (frac > 0.5 || (frac == 0.5 && fmod(lo, 2.0) == 1.0)) ? lo + 1.0 : lo;
    double v = ldexp(r, q);
    if (v > max_finite(f))
        v = INFINITY;
    return copysign(v, x);
}

static uint16_t to16(const fmt16 *f, float x)
{
    return f->dt == DPZO_BF16 ? dpzo_hd_f32_to_bf16(x) : dpzo_hd_f32_to_f16(x);
}

static float from16(const fmt16 *f, uint16_t h)
{
    return f->dt == DPZO_BF16 ? dpzo_hd_bf16_to_f32(h) : dpzo_hd_f16_to_f32(h);
}

/* The same double, NaN equal to NaN, the sign of zero compared. */
static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

static void check_round(const fmt16 *f, float x)
{
    uint16_t h = to16(f, x);
    double got = decode(f, h);
    double want = isnan(x) ? NAN : round_ref(f, (double)x);
    if (!same_value(got, want))
        fail_msg("%s: round(%a = 0x%08x) gave 0x%04x = %a, want %a", dpzo_dtype_name(f->dt),
                 (double)x, (unsigned)bits_of(x), (unsigned)h, got, want);
}

/* ---- conversions ---------------------------------------------------------------------------- */

static void round_trip(const fmt16 *f)
{
    const uint16_t quiet = (uint16_t)(1u << (f->fbits - 1));
    for (uint32_t p = 0; p < 65536; p++) {
        uint16_t h = (uint16_t)p;
        float x = from16(f, h);
        double want = decode(f, h);
        if (!same_value((double)x, want))
            fail_msg("%s 0x%04x: float %a, its fields give %a", dpzo_dtype_name(f->dt),
                     (unsigned)h, (double)x, want);
        uint16_t back = to16(f, x);
        if (isnan(want)) {
            if (back != (h | quiet))
                fail_msg("%s NaN 0x%04x came back as 0x%04x", dpzo_dtype_name(f->dt),
                         (unsigned)h, (unsigned)back);
        } else if (back != h) {
            fail_msg("%s 0x%04x -> %a -> 0x%04x", dpzo_dtype_name(f->dt), (unsigned)h,
                     (double)x, (unsigned)back);
        }
    }
}

static void test_round_trip_bf16(void **state)
{
    (void)state;
    round_trip(&BF16);
}

static void test_round_trip_f16(void **state)
{
    (void)state;
    round_trip(&F16);
}

/* Every halfway point between neighbouring values (both signs; exact in float: at most
 * fbits + 2 significant bits), its float neighbours, the values themselves, the overflow
 * threshold and everything around it; then random float bit patterns and random floats
 * in the format's range. */
static void rounding(const fmt16 *f)
{
    const int emax_pat = (1 << f->ebits) - 1;
    for (uint32_t p = 0; p < ((uint32_t)emax_pat << f->fbits); p++) {
        double a = decode(f, (uint16_t)p), b = decode(f, (uint16_t)(p + 1));
        double mid = 0.5 * (a + b); /* b may be +inf for the last p: then the threshold */
        if (isinf(b))
            mid = max_finite(f) + 0.5 * (max_finite(f) - decode(f, (uint16_t)(p - 1)));
        float m = (float)mid;
        assert_true((double)m == mid);
        const float cases[] = {(float)a, m, nextafterf(m, 0.0f), nextafterf(m, INFINITY)};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            check_round(f, cases[c]);
            check_round(f, -cases[c]);
        }
    }
    const float special[] = {0.0f,     -0.0f,   INFINITY, -INFINITY, NAN,
                             -NAN,     FLT_MAX, -FLT_MAX, FLT_MIN,   FLT_TRUE_MIN,
                             -FLT_MIN, 65504.f, 65519.99f, 65520.f,  1e-8f};
    for (size_t c = 0; c < sizeof special / sizeof special[0]; c++)
        check_round(f, special[c]);
    for (int i = 0; i < 3000000; i++) {
        check_round(f, float_of((uint32_t)rnd64()));
        /* magnitudes spread over the format's range, below its subnormals to past its max */
        double x = ldexp(1.0 + rnd_unit(), (int)(rnd64() % 64) - 30);
        check_round(f, (float)((rnd64() & 1) ? -x : x));
    }
}

static void test_round_bf16(void **state)
{
    (void)state;
    rounding(&BF16);
    /* bf16 over its whole exponent range, float subnormals and overflow included */
    for (int i = 0; i < 1000000; i++) {
        float x = (float)ldexp(1.0 + rnd_unit(), (int)(rnd64() % 280) - 150);
        check_round(&BF16, (rnd64() & 1) ? -x : x);
    }
    /* the carry into the exponent, and to infinity */
    assert_int_equal(dpzo_hd_f32_to_bf16(float_of(0x3f80ffffu)), 0x3f81);
    assert_int_equal(dpzo_hd_f32_to_bf16(float_of(0x3f808000u)), 0x3f80); /* tie, even */
    assert_int_equal(dpzo_hd_f32_to_bf16(float_of(0x3f818000u)), 0x3f82); /* tie, up */
    assert_int_equal(dpzo_hd_f32_to_bf16(FLT_MAX), 0x7f80);
    assert_int_equal(dpzo_hd_f32_to_bf16(-FLT_MAX), 0xff80);
    assert_int_equal(dpzo_hd_f32_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f);
    assert_int_equal(dpzo_hd_f32_to_bf16(float_of(0x7f800001u)) & 0x7fc0, 0x7fc0);
}

static void test_round_f16(void **state)
{
    (void)state;
    rounding(&F16);
    assert_int_equal(dpzo_hd_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(dpzo_hd_f32_to_f16(nextafterf(65520.0f, 0.0f)), 0x7bff);
    assert_int_equal(dpzo_hd_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(dpzo_hd_f32_to_f16(-65520.0f), 0xfc00);
    assert_int_equal(dpzo_hd_f32_to_f16(0x1p-24f), 0x0001);
    assert_int_equal(dpzo_hd_f32_to_f16(0x1p-25f), 0x0000); /* tie, even */
    assert_int_equal(dpzo_hd_f32_to_f16(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    assert_int_equal(dpzo_hd_f32_to_f16(0x1.8p-24f), 0x0002); /* tie, up */
    assert_int_equal(dpzo_hd_f32_to_f16(0x1.ff8p-15f), 0x03ff); /* largest subnormal */
    assert_int_equal(dpzo_hd_f32_to_f16(0x1.ffcp-15f), 0x0400); /* tie into the normals */
    assert_int_equal(dpzo_hd_f32_to_f16(0x1.ffbfp-15f), 0x03ff);
    assert_int_equal(dpzo_hd_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(dpzo_hd_f32_to_f16(FLT_TRUE_MIN), 0x0000);
    assert_int_equal(dpzo_hd_f32_to_f16(float_of(0x7f800001u)) & 0x7e00, 0x7e00);
    assert_int_equal(dpzo_hd_f32_to_f16(float_of(0xffc00000u)), 0xfe00);
#if defined(__FLT16_MAX__) && defined(__x86_64__)
    /* the compiler's conversion (libgcc / F16C) as a second, independent reference */
    for (long i = 0; i < 4000000; i++) {
        float x = float_of((uint32_t)rnd64());
        if (i & 1)
            x = (float)ldexp(1.0 + rnd_unit(), (int)(rnd64() % 48) - 32);
        _Float16 r = (_Float16)x;
        uint16_t want;
        memcpy(&want, &r, sizeof want);
        uint16_t got = dpzo_hd_f32_to_f16(x);
        if (isnan(x) ? (got & 0x7e00) != 0x7e00 || (got & 0x3ff) == 0 : got != want)
            fail_msg("f16 round(%a): 0x%04x, _Float16 gives 0x%04x", (double)x, got, want);
    }
    print_message("test_zo_dtype: f16 rounding also checked against _Float16\n");
#endif
}

static void test_dtype_names(void **state)
{
    (void)state;
    assert_int_equal(dpzo_dtype_size(DPZO_F32), 4);
    assert_int_equal(dpzo_dtype_size(DPZO_BF16), 2);
    assert_int_equal(dpzo_dtype_size(DPZO_F16), 2);
    assert_int_equal(dpzo_dtype_size((dpzo_dtype)3), 0);
    assert_string_equal(dpzo_dtype_name(DPZO_F32), "float32");
    assert_string_equal(dpzo_dtype_name(DPZO_BF16), "bfloat16");
    assert_string_equal(dpzo_dtype_name(DPZO_F16), "float16");
    assert_null(dpzo_dtype_name((dpzo_dtype)-1));
    assert_null(dpzo_dtype_name((dpzo_dtype)7));
}

/* alpha = 0 writes x itself for every 16-bit pattern (but -0 + 0 = +0; a NaN stays NaN):
 * the public functions round-trip through the conversions above. */
static void test_identity_patterns(void **state)
{
    dpzo_ctx *ctx = *state;
    dpzo_dir d;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 11, 2, 3, 65536 + 3, 1.0));
    uint16_t *x = malloc(65536 * sizeof *x), *out = malloc(65536 * sizeof *out);
    assert_true(x != NULL && out != NULL);
    for (uint32_t p = 0; p < 65536; p++)
        x[p] = (uint16_t)p;
    float *u = malloc(65536 * sizeof *u);
    assert_non_null(u);
    dpzo_dir_fill(&d, 3, 65536, u);
    const fmt16 *fs[] = {&BF16, &F16};
    for (int t = 0; t < 2; t++) {
        for (int upd = 0; upd < 2; upd++) {
            double zero = 0.0;
            if (upd) {
                memcpy(out, x, 65536 * sizeof *x);
                dpzo_dir_update(&d, &zero, 1, 3, 65536, fs[t]->dt, out);
            } else {
                dpzo_dir_perturb(&d, 3, 65536, zero, fs[t]->dt, x, out);
            }
            for (uint32_t p = 0; p < 65536; p++) {
                /* x + 0 u: x itself, but a zero takes the sign of -0 + (+-0) */
                double a = decode(fs[t], x[p]), b = decode(fs[t], out[p]);
                double want = a + zero * (double)u[p];
                if (!same_value(b, want))
                    fail_msg("%s alpha 0 (%s): 0x%04x became 0x%04x",
                             dpzo_dtype_name(fs[t]->dt), upd ? "update" : "perturb",
                             (unsigned)p, (unsigned)out[p]);
                if (!isnan(a) && a != 0.0 && out[p] != x[p])
                    fail_msg("%s alpha 0: 0x%04x became 0x%04x", dpzo_dtype_name(fs[t]->dt),
                             (unsigned)p, (unsigned)out[p]);
            }
        }
    }
    free(u);
    free(x);
    free(out);
}

/* ---- directions ----------------------------------------------------------------------------- */

/* Five directions of dimension dim: gaussian, sphere, rademacher, a masked sphere and an
 * explicit vector (mult and vec allocated into hold[0], hold[1]). */
#define NDIRS 5
static void make_dirs(dpzo_ctx *ctx, uint64_t dim, dpzo_dir d[NDIRS], float *hold[2])
{
    for (int k = 0; k < 3; k++)
        assert_ok(ctx, dpzo_dir_init(ctx, &d[k], (dpzo_dir_kind)k, rnd64(), rnd64() >> 33,
                                     (uint32_t)rnd64(), dim, 0.5 + rnd_unit() * 10.0));
    hold[0] = malloc(dim * sizeof(float));
    hold[1] = malloc(dim * sizeof(float));
    assert_true(hold[0] != NULL && hold[1] != NULL);
    for (uint64_t j = 0; j < dim; j++) {
        uint64_t r = rnd64() % 3;
        hold[0][j] = r == 0 ? 0.0f : r == 1 ? 1.0f : (float)(3.0 * rnd_unit());
        hold[1][j] = (float)(rnd_unit() - 0.5);
    }
    hold[0][0] = 1.0f;
    assert_ok(ctx, dpzo_dir_init(ctx, &d[3], DPZO_DIR_SPHERE, rnd64(), 7, 1, dim, 1.0));
    assert_ok(ctx, dpzo_dir_set_mult(ctx, &d[3], hold[0], 3.0));
    assert_ok(ctx, dpzo_dir_init_vector(ctx, &d[4], hold[1], dim));
}

/* n random floats: mostly O(1) values, some large, tiny, subnormal in the 16-bit types,
 * zeros of both signs, infinities and NaNs. */
static void random_floats(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd64() % 1000;
        double v = (rnd_unit() - 0.5) * 4.0;
        if (r < 20)
            v *= 1e4;
        else if (r < 40)
            v *= 1e-6;
        else if (r < 45)
            v = ldexp(rnd_unit(), -20);
        else if (r == 45)
            v = 0.0;
        else if (r == 46)
            v = -0.0;
        else if (r == 47)
            v = (rnd64() & 1) ? INFINITY : -INFINITY;
        else if (r == 48)
            v = NAN;
        x[i] = (float)v;
    }
}

/* x as an array of type dt (bytes, n elements) from floats: F32 copies, else the reference
 * rounding (so the inputs are exactly representable). */
static void *typed_from(dpzo_dtype dt, const float *v, size_t n)
{
    size_t es = dpzo_dtype_size(dt);
    void *p = malloc(n * es + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        if (dt == DPZO_F32) {
            memcpy((char *)p + i * 4, &v[i], 4);
        } else {
            uint16_t h = to16(dt == DPZO_BF16 ? &BF16 : &F16, v[i]);
            memcpy((char *)p + i * 2, &h, 2);
        }
    }
    return p;
}

/* Element i of a typed array, as double (exact). */
static double typed_at(dpzo_dtype dt, const void *p, size_t i)
{
    if (dt == DPZO_F32) {
        float f;
        memcpy(&f, (const char *)p + i * 4, 4);
        return (double)f;
    }
    uint16_t h;
    memcpy(&h, (const char *)p + i * 2, 2);
    return decode(dt == DPZO_BF16 ? &BF16 : &F16, h);
}

/* round_T(v) for the type dt, by the reference (F32: v itself). */
static double round_T(dpzo_dtype dt, float v)
{
    if (dt == DPZO_F32 || isnan(v))
        return (double)v;
    return round_ref(dt == DPZO_BF16 ? &BF16 : &F16, (double)v);
}

static const dpzo_dtype DTS[] = {DPZO_F32, DPZO_BF16, DPZO_F16};

/* The ranges tried on dimension dim: aligned, unaligned start and length, past dim, one
 * element, a random one. */
static void ranges(uint64_t dim, uint64_t j0[6], size_t n[6])
{
    j0[0] = 0, n[0] = (size_t)dim;
    j0[1] = 1 % dim, n[1] = (size_t)(dim - j0[1]);
    j0[2] = 3 % dim, n[2] = (size_t)((dim - j0[2]) / 2 + 1);
    j0[3] = dim / 3, n[3] = (size_t)(dim - dim / 3 + 9); /* 9 past dim: NaN */
    j0[4] = dim - 1, n[4] = 1;
    j0[5] = rnd64() % dim, n[5] = (size_t)(rnd64() % (dim - j0[5]) + 1);
}

/* The perturbation of x (type dt) at +alpha and -alpha: x untouched, out the formula. */
static void check_perturb(const dpzo_dir *d, uint64_t j0, size_t n, double alpha, dpzo_dtype dt,
                          const char *what)
{
    float *xf = malloc((n + 1) * sizeof *xf), *u = malloc((n + 1) * sizeof *u);
    assert_true(xf != NULL && u != NULL);
    random_floats(xf, n);
    size_t es = dpzo_dtype_size(dt);
    void *x = typed_from(dt, xf, n), *x0 = typed_from(dt, xf, n);
    void *out = malloc(n * es + 1);
    assert_non_null(out);
    dpzo_dir_fill(d, j0, n, u);
    for (int sgn = 0; sgn < 2; sgn++) {
        double a = sgn ? -alpha : alpha;
        memset(out, 0x5a, n * es + 1);
        dpzo_dir_perturb(d, j0, n, a, dt, x, out);
        if (memcmp(x, x0, n * es) != 0)
            fail_msg("%s %s: x was written", what, dpzo_dtype_name(dt));
        assert_int_equal(((unsigned char *)out)[n * es], 0x5a); /* nothing past n */
        for (size_t i = 0; i < n; i++) {
            float v = (float)(typed_at(dt, x, i) + a * (double)u[i]);
            double want = round_T(dt, v), got = typed_at(dt, out, i);
            if (!same_value(got, want))
                fail_msg("%s %s j0 %llu n %zu alpha %g: element %zu: %a, want %a (x %a, u %a)",
                         what, dpzo_dtype_name(dt), (unsigned long long)j0, n, a, i, got, want,
                         typed_at(dt, x, i), (double)u[i]);
        }
        if (dt == DPZO_F32) { /* the bits of dpzo_dir_axpy on a copy */
            float *c = malloc(n * sizeof *c);
            memcpy(c, x, n * sizeof *c);
            dpzo_dir_axpy(d, j0, n, a, c);
            if (memcmp(c, out, n * sizeof *c) != 0)
                fail_msg("%s float32: perturb is not axpy on a copy", what);
            free(c);
        }
    }
    free(xf);
    free(u);
    free(x);
    free(x0);
    free(out);
}

static void test_perturb(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {1, 3, 4, 5, 255, 256, 257, 1023, 4099, 70001};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        dpzo_dir d[NDIRS];
        float *hold[2];
        make_dirs(ctx, dims[di], d, hold);
        uint64_t j0[6];
        size_t n[6];
        ranges(dims[di], j0, n);
        for (int k = 0; k < NDIRS; k++)
            for (int r = 0; r < 6; r++)
                for (size_t t = 0; t < 3; t++) {
                    double lambda = ldexp(1.0 + rnd_unit(), -(int)(rnd64() % 12));
                    check_perturb(&d[k], j0[r], n[r], lambda, DTS[t],
                                  k == 3 ? "masked" : k == 4 ? "explicit"
                                                  : dpzo_dir_kind_name((dpzo_dir_kind)k));
                }
        free(hold[0]);
        free(hold[1]);
    }
}

/* The update with k directions (dirs[0..k)) of theta (type dt) against the formula, and for
 * F32 against k dpzo_dir_axpy calls. */
static void check_update(const dpzo_dir *dirs, const double *alpha, unsigned k, uint64_t j0,
                         size_t n, dpzo_dtype dt)
{
    float *tf = malloc((n + 1) * sizeof *tf), *u = malloc((n + 1) * sizeof *u);
    float *v = malloc((n + 1) * sizeof *v);
    assert_true(tf != NULL && u != NULL && v != NULL);
    random_floats(tf, n);
    size_t es = dpzo_dtype_size(dt);
    void *theta = typed_from(dt, tf, n), *theta0 = typed_from(dt, tf, n);
    ((unsigned char *)theta)[n * es] = 0x33;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)typed_at(dt, theta0, i);
    for (unsigned m = 0; m < k; m++) {
        dpzo_dir_fill(&dirs[m], j0, n, u);
        for (size_t i = 0; i < n; i++)
            v[i] = (float)((double)v[i] + alpha[m] * (double)u[i]);
    }
    dpzo_dir_update(dirs, alpha, k, j0, n, dt, theta);
    assert_int_equal(((unsigned char *)theta)[n * es], 0x33);
    for (size_t i = 0; i < n; i++) {
        double want = round_T(dt, v[i]), got = typed_at(dt, theta, i);
        if (!same_value(got, want))
            fail_msg("update %s k %u j0 %llu n %zu: element %zu: %a, want %a",
                     dpzo_dtype_name(dt), k, (unsigned long long)j0, n, i, got, want);
    }
    if (dt == DPZO_F32) {
        float *c = malloc(n * sizeof *c);
        memcpy(c, theta0, n * sizeof *c);
        for (unsigned m = 0; m < k; m++)
            dpzo_dir_axpy(&dirs[m], j0, n, alpha[m], c);
        if (memcmp(c, theta, n * sizeof *c) != 0)
            fail_msg("update float32 k %u: not the bits of %u dpzo_dir_axpy calls", k, k);
        free(c);
    }
    free(tf);
    free(u);
    free(v);
    free(theta);
    free(theta0);
}

static void test_update(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dims[] = {1, 5, 256, 1027, 9001};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        dpzo_dir d[NDIRS];
        float *hold[2];
        make_dirs(ctx, dims[di], d, hold);
        uint64_t j0[6];
        size_t n[6];
        ranges(dims[di], j0, n);
        for (unsigned k = 1; k <= 3; k++)
            for (int r = 0; r < 6; r++)
                for (size_t t = 0; t < 3; t++) {
                    dpzo_dir pick[3];
                    double alpha[3];
                    for (unsigned m = 0; m < k; m++) {
                        pick[m] = d[rnd64() % NDIRS];
                        alpha[m] = (rnd_unit() - 0.5) * (m % 2 ? 1e-3 : 2.0);
                    }
                    check_update(pick, alpha, k, j0[r], n[r], DTS[t]);
                }
        /* directions of different dims: NaN past the smallest (and past the range of
         * the larger one) */
        dpzo_dir big, mixed[2];
        assert_ok(ctx, dpzo_dir_init(ctx, &big, DPZO_DIR_GAUSSIAN, rnd64(), 3, 4,
                                     dims[di] + 6, 1.0));
        double alpha2[2] = {0.5, -0.25};
        for (int order = 0; order < 2; order++) {
            mixed[order] = d[0];
            mixed[1 - order] = big;
            for (size_t t = 0; t < 3; t++)
                check_update(mixed, alpha2, 2, j0[3], n[3], DTS[t]);
        }
        free(hold[0]);
        free(hold[1]);
    }
}

/* A range split into several calls at unaligned points gives the same bytes as one call;
 * n = 0 and an unknown type write nothing. */
static void test_splits(void **state)
{
    dpzo_ctx *ctx = *state;
    const uint64_t dim = 5000;
    dpzo_dir d[NDIRS];
    float *hold[2];
    make_dirs(ctx, dim, d, hold);
    float *xf = malloc(dim * sizeof *xf);
    random_floats(xf, dim);
    for (int k = 0; k < NDIRS; k++)
        for (size_t t = 0; t < 3; t++) {
            dpzo_dtype dt = DTS[t];
            size_t es = dpzo_dtype_size(dt);
            void *x = typed_from(dt, xf, dim);
            unsigned char *one = malloc(dim * es), *split = malloc(dim * es);
            unsigned char *t1 = malloc(dim * es), *t2 = malloc(dim * es);
            const uint64_t j0 = 7;
            const size_t n = (size_t)(dim - j0 - 2);
            double alpha[3] = {0.25, -1e-3, 3.0};
            dpzo_dir three[3] = {d[k], d[(k + 1) % NDIRS], d[(k + 3) % NDIRS]};
            dpzo_dir_perturb(&d[k], j0, n, alpha[0], dt, x, one);
            memcpy(t1, x, dim * es);
            memcpy(t2, x, dim * es);
            dpzo_dir_update(three, alpha, 3, j0, n, dt, t1);
            for (size_t i = 0; i < n;) {
                size_t len = (size_t)(rnd64() % 700);
                len = len < n - i ? len : n - i;
                dpzo_dir_perturb(&d[k], j0 + i, len, alpha[0], dt, (char *)x + i * es,
                                 split + i * es);
                dpzo_dir_update(three, alpha, 3, j0 + i, len, dt, t2 + i * es);
                i += len;
            }
            assert_memory_equal(one, split, n * es);
            assert_memory_equal(t1, t2, dim * es);
            /* n = 0, unknown type, k = 0: nothing written */
            memset(split, 0x77, dim * es);
            memcpy(t2, t1, dim * es);
            dpzo_dir_perturb(&d[k], j0, 0, 1.0, dt, x, split);
            dpzo_dir_perturb(&d[k], j0, n, 1.0, (dpzo_dtype)5, x, split);
            dpzo_dir_update(three, alpha, 3, j0, 0, dt, t2);
            dpzo_dir_update(three, alpha, 0, j0, n, dt, t2);
            dpzo_dir_update(three, alpha, 3, j0, n, (dpzo_dtype)9, t2);
            for (size_t i = 0; i < dim * es; i++)
                assert_int_equal(split[i], 0x77);
            assert_memory_equal(t1, t2, dim * es);
            free(x);
            free(one);
            free(split);
            free(t1);
            free(t2);
        }
    free(xf);
    free(hold[0]);
    free(hold[1]);
}

/* The cancellation property the out-of-place form exists for: x + lambda u and x - lambda u
 * from the same x, whatever the type, and the in-place perturbation of MeZO (+lambda,
 * -2 lambda, +lambda) that does not restore bf16 weights. */
static void test_no_drift(void **state)
{
    dpzo_ctx *ctx = *state;
    const size_t n = 1 << 16;
    dpzo_dir d;
    assert_ok(ctx, dpzo_dir_init(ctx, &d, DPZO_DIR_GAUSSIAN, 42, 1, 0, n, 1.0));
    float *xf = malloc(n * sizeof *xf);
    for (size_t i = 0; i < n; i++)
        xf[i] = (float)((rnd_unit() - 0.5) * 0.1);
    void *x = typed_from(DPZO_BF16, xf, n), *x0 = typed_from(DPZO_BF16, xf, n);
    void *plus = malloc(2 * n), *minus = malloc(2 * n);
    const double lambda = 1e-3;
    dpzo_dir_perturb(&d, 0, n, lambda, DPZO_BF16, x, plus);
    dpzo_dir_perturb(&d, 0, n, -lambda, DPZO_BF16, x, minus);
    assert_memory_equal(x, x0, 2 * n);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += memcmp((char *)plus + 2 * i, (char *)minus + 2 * i, 2) != 0;
    assert_true(differ > n / 2); /* the perturbation is visible in bf16 */
    /* in place, as MeZO does: not restored */
    double a1 = lambda, a2 = -2.0 * lambda;
    dpzo_dir_update(&d, &a1, 1, 0, n, DPZO_BF16, x);
    dpzo_dir_update(&d, &a2, 1, 0, n, DPZO_BF16, x);
    dpzo_dir_update(&d, &a1, 1, 0, n, DPZO_BF16, x);
    size_t drift = 0;
    for (size_t i = 0; i < n; i++)
        drift += memcmp((char *)x + 2 * i, (char *)x0 + 2 * i, 2) != 0;
    print_message("test_zo_dtype: bf16 in-place +l, -2l, +l changed %zu of %zu weights; "
                  "out of place: 0\n",
                  drift, n);
    assert_true(drift > 0);
    free(xf);
    free(x);
    free(x0);
    free(plus);
    free(minus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_bf16),
        cmocka_unit_test(test_round_trip_f16),
        cmocka_unit_test(test_round_bf16),
        cmocka_unit_test(test_round_f16),
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test_setup_teardown(test_identity_patterns, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_perturb, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_update, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_splits, ctx_setup, ctx_teardown),
        cmocka_unit_test_setup_teardown(test_no_drift, ctx_setup, ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
