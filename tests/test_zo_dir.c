/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_zo_dir.c: the zeroth-order direction generator (kernels/cpu/philox.c,
 * zo_dir.c): Philox4x32-10 against Random123's published KAT vectors; dpzo's own log, sin,
 * cos against libm; the normal transform and whole direction elements against 40-digit
 * mpmath values (tests/ref/zo_dir_values.h, written by tests/ref/gen_zo_dir_values.py
 * with its own Python Philox); the statistics of the draws; the SPHERE norm and its
 * documented summation order; the counter layout (one Philox block per four elements)
 * against the raw generator; fill/axpy against elementwise dpzo_dir_at over several
 * splits; argument checks. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo/zo_dir.h"
#include "zo_math.h"
#include "ref/zo_dir_values.h"

/* ---- helpers ---------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A monotone integer image of a double: ulp distance = difference (+0 and -0 coincide). */
static long double ord(double x)
{
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return (long double)(i < 0 ? INT64_MIN - i : i);
}

static double ulp_dist(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0.0 : INFINITY;
    return (double)fabsl(ord(a) - ord(b));
}

#define assert_ulps(got, want, maxu)                                                        \
    do {                                                                                  \
        double gu_ = (got), wu_ = (want);                                                 \
        if (!(ulp_dist(gu_, wu_) <= (maxu)))                                              \
            fail_msg("%s = %.17g (%a), expected %.17g (%a): %.0f ulps > %d", #got, gu_,    \
                     gu_, wu_, wu_, ulp_dist(gu_, wu_), (int)(maxu));                     \
    } while (0)

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static dpzo_dir make_dir(dpzo_dir_kind kind, uint64_t seed, uint64_t step, uint32_t query,
                         uint64_t dim, double radius)
{
    dpzo_dir dir;
    dpzo_status st = dpzo_dir_init(NULL, &dir, kind, seed, step, query, dim, radius);
    if (st != DPZO_OK)
        fail_msg("dpzo_dir_init(kind %d, dim %llu) failed: %s", (int)kind,
                 (unsigned long long)dim, dpzo_status_name(st));
    return dir;
}

static float *fill_new(const dpzo_dir *dir, uint64_t j0, size_t n)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    dpzo_dir_fill(dir, j0, n, x);
    return x;
}

/* ---- Philox ----------------------------------------------------------------------- */

static void test_philox_kat(void **state)
{
    (void)state;
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        dpzo_philox_ctr c = {{kat[i].ctr[0], kat[i].ctr[1], kat[i].ctr[2], kat[i].ctr[3]}};
        dpzo_philox_ctr o = dpzo_philox4x32_10(c, kat[i].key[0], kat[i].key[1]);
        for (int w = 0; w < 4; w++)
            if (o.v[w] != kat[i].out[w])
                fail_msg("KAT %zu word %d: got 0x%08x, expected 0x%08x", i, w, o.v[w],
                         kat[i].out[w]);
    }
}

/* ---- log, sin, cos against libm --------------------------------------------------- */

static void test_log_vs_libm(void **state)
{
    (void)state;
    assert_true(dpzo__log(1.0) == 0.0 && !signbit(dpzo__log(1.0)));
    assert_true(dpzo__log(0.0) == -INFINITY && dpzo__log(-0.0) == -INFINITY);
    assert_true(isnan(dpzo__log(-1.0)) && isnan(dpzo__log(NAN)) && isnan(dpzo__log(-INFINITY)));
    assert_true(dpzo__log(INFINITY) == INFINITY);
    assert_ulps(dpzo__log(2.0), M_LN2, 0);
    double worst = 0.0;
    rng_state = 1;
    for (int i = 0; i < 1000000; i++) {
        /* the transform's inputs: (a + 1) 2^-32 */
        double x = ((double)(uint32_t)rnd64() + 1.0) * 0x1p-32;
        double d = ulp_dist(dpzo__log(x), log(x));
        worst = d > worst ? d : worst;
        if (d > 1)
            fail_msg("log(%a): %.17g vs libm %.17g (%.0f ulps)", x, dpzo__log(x), log(x), d);
        /* any positive finite double, subnormals included */
        uint64_t bits = rnd64() & 0x7fffffffffffffffull;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x) || x == 0.0)
            continue;
        d = ulp_dist(dpzo__log(x), log(x));
        worst = d > worst ? d : worst;
        if (d > 1)
            fail_msg("log(%a): %.17g vs libm %.17g (%.0f ulps)", x, dpzo__log(x), log(x), d);
        /* next to 1, where log is small */
        x = 1.0 + ((double)(int32_t)(uint32_t)rnd64()) * 0x1p-40;
        d = ulp_dist(dpzo__log(x), log(x));
        worst = d > worst ? d : worst;
        if (d > 1)
            fail_msg("log(%a): %.17g vs libm %.17g (%.0f ulps)", x, dpzo__log(x), log(x), d);
    }
    print_message("log: max %.0f ulp from libm over 3e6 points\n", worst);
}

static void test_sin_cos_kernels_vs_libm(void **state)
{
    (void)state;
    double worst_s = 0.0, worst_c = 0.0;
    rng_state = 2;
    for (int i = 0; i < 1000000; i++) {
        double u = (double)(rnd64() >> 11) * 0x1p-53; /* [0, 1) */
        double x = (2.0 * u - 1.0) * (M_PI / 4);
        if (i % 4 == 0) /* small arguments too */
            x = ldexp(x, -(int)(rnd64() % 60));
        double ds = ulp_dist(dpzo__sin_kernel(x), sin(x));
        double dc = ulp_dist(dpzo__cos_kernel(x), cos(x));
        worst_s = ds > worst_s ? ds : worst_s;
        worst_c = dc > worst_c ? dc : worst_c;
        if (ds > 1 || dc > 1)
            fail_msg("x = %a: sin %.0f ulps, cos %.0f ulps from libm", x, ds, dc);
    }
    assert_true(dpzo__sin_kernel(0.0) == 0.0 && dpzo__cos_kernel(0.0) == 1.0);
    assert_ulps(dpzo__sin_kernel(M_PI / 4), sin(M_PI / 4), 1);
    assert_ulps(dpzo__cos_kernel(-M_PI / 4), cos(-M_PI / 4), 1);
    print_message("sin/cos on [-pi/4, pi/4]: max %.0f / %.0f ulp from libm\n", worst_s,
                  worst_c);
}

static void test_sincos_turn(void **state)
{
    (void)state;
    /* 40-digit values at the eighth-turn boundaries and random words */
    double worst = 0.0;
    for (size_t i = 0; i < sizeof DPZO_TURN_REF / sizeof DPZO_TURN_REF[0]; i++) {
        double s, c;
        dpzo__sincos_turn32(DPZO_TURN_REF[i].b, &s, &c);
        assert_ulps(s, DPZO_TURN_REF[i].sin, 2);
        assert_ulps(c, DPZO_TURN_REF[i].cos, 2);
        worst = fmax(worst, fmax(ulp_dist(s, DPZO_TURN_REF[i].sin),
                                 ulp_dist(c, DPZO_TURN_REF[i].cos)));
    }
    print_message("sincos_turn32: max %.0f ulp from the mpmath values\n", worst);
    /* many words against long double sinl/cosl (the argument's error there is about
     * 2^-61 absolute, hence the absolute slack) */
    rng_state = 3;
    const long double two_pi = 6.283185307179586476925286766559005768L;
    for (int i = 0; i < 300000; i++) {
        uint32_t b = (uint32_t)rnd64();
        double s, c;
        dpzo__sincos_turn32(b, &s, &c);
        long double t = two_pi * (long double)b * 0x1p-32L;
        double rs = (double)sinl(t), rc = (double)cosl(t);
        if (!(fabs(s - rs) <= 0x1p-58 + 2 * 0x1p-52 * fabs(rs) &&
              fabs(c - rc) <= 0x1p-58 + 2 * 0x1p-52 * fabs(rc)))
            fail_msg("b = 0x%08x: sin %.17g vs %.17g, cos %.17g vs %.17g", b, s, rs, c, rc);
    }
}

/* ---- the normal transform and the stream against mpmath ---------------------------- */

static void test_normal_pair_ref(void **state)
{
    (void)state;
    double worst = 0.0;
    for (size_t i = 0; i < sizeof DPZO_PAIR_REF / sizeof DPZO_PAIR_REF[0]; i++) {
        const dpzo_pair_ref *r = &DPZO_PAIR_REF[i];
        double z0, z1;
        dpzo_normal_pair(r->a, r->b, &z0, &z1);
        assert_ulps(z0, r->z0, 3);
        assert_ulps(z1, r->z1, 3);
        worst = fmax(worst, fmax(ulp_dist(z0, r->z0), ulp_dist(z1, r->z1)));
        /* bit for bit what the specification gives (signed zeros included) */
        if (!same_bits(z0, r->z0_exact) || !same_bits(z1, r->z1_exact))
            fail_msg("(0x%08x, 0x%08x): (%a, %a), the specification gives (%a, %a)", r->a, r->b,
                     z0, z1, r->z0_exact, r->z1_exact);
    }
    print_message("normal pair: max %.0f ulp from the mpmath values\n", worst);
    /* the specification over many words, through the generator's own float implementation */
    uint64_t h = 0xcbf29ce484222325ull, s = 1;
    for (int i = 0; i < DPZO_PAIR_HASH_N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double z[2];
        dpzo_normal_pair((uint32_t)(s >> 32), (uint32_t)s, &z[0], &z[1]);
        uint64_t bits[2];
        memcpy(bits, z, sizeof bits);
        for (int k = 0; k < 16; k++) {
            h ^= (bits[k / 8] >> (8 * (k % 8))) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    if (h != DPZO_PAIR_HASH)
        fail_msg("hash of %d pairs: 0x%016llx, the specification gives 0x%016llx",
                 DPZO_PAIR_HASH_N, (unsigned long long)h, (unsigned long long)DPZO_PAIR_HASH);
    /* the extremes: u1 = 1 gives r = 0; u1 = 2^-32 gives r = sqrt(64 ln 2) */
    double z0, z1;
    dpzo_normal_pair(0xffffffffu, 0x12345678u, &z0, &z1);
    assert_true(z0 == 0.0 && z1 == 0.0);
    dpzo_normal_pair(0, 0, &z0, &z1);
    assert_ulps(z0, sqrt(64 * M_LN2), 1);
    assert_true(z1 == 0.0);
}

static void test_elements_ref(void **state)
{
    (void)state;
    double worst = 0.0;
    for (size_t i = 0; i < sizeof DPZO_ELEM_REF / sizeof DPZO_ELEM_REF[0]; i++) {
        const dpzo_elem_ref *r = &DPZO_ELEM_REF[i];
        dpzo_dir dir = make_dir((dpzo_dir_kind)r->kind, r->seed, r->step, r->query,
                                UINT64_MAX, 0.0);
        double v = dpzo_dir_at(&dir, r->j);
        if (r->kind == DPZO_DIR_RADEMACHER)
            assert_true(v == r->value);
        else
            assert_ulps(v, r->value, 3);
        if (!same_bits(v, r->value_exact))
            fail_msg("element %zu: %a, the specification gives %a", i, v, r->value_exact);
        worst = fmax(worst, ulp_dist(v, r->value));
        float f;
        dpzo_dir_fill(&dir, r->j, 1, &f);
        assert_true(f == (float)v);
    }
    print_message("direction elements: max %.0f ulp from the mpmath values\n", worst);
}

/* The counter layout of kernels/cpu/philox.c section 2, from the raw generator: element j
 * comes from the block with counter ((uint32)(j >> 2), (uint32)(j >> 34), step, query);
 * words (w0, w1) give the pair of 4m, 4m + 1 and (w2, w3) that of 4m + 2, 4m + 3; the
 * Rademacher sign is bit 31 of word j & 3. */
static void test_counter_layout(void **state)
{
    (void)state;
    const uint64_t seed = 0x9e3779b97f4a7c15ull, step = 0x89abcdefu;
    const uint32_t query = 0xdeadbeefu;
    dpzo_dir g = make_dir(DPZO_DIR_GAUSSIAN, seed, step, query, UINT64_MAX, 0.0);
    dpzo_dir r = make_dir(DPZO_DIR_RADEMACHER, seed, step, query, UINT64_MAX, 0.0);
    const uint64_t base[] = {0,
                             4096,
                             ((uint64_t)1 << 32) - 4,
                             ((uint64_t)1 << 34) - 4,
                             (uint64_t)1 << 34,
                             ((uint64_t)1 << 34) + 4,
                             0x0123456789abcdefull & ~3ull,
                             UINT64_MAX - 7,
                             UINT64_MAX - 3};
    for (size_t k = 0; k < sizeof base / sizeof base[0]; k++) {
        uint64_t m = base[k] >> 2;
        dpzo_philox_ctr c = {{(uint32_t)m, (uint32_t)(m >> 32), (uint32_t)step, query}};
        dpzo_philox_ctr w = dpzo_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
        double z[4];
        dpzo_normal_pair(w.v[0], w.v[1], &z[0], &z[1]);
        dpzo_normal_pair(w.v[2], w.v[3], &z[2], &z[3]);
        for (int e = 0; e < 4; e++) {
            uint64_t j = 4 * m + (uint64_t)e;
            if (j >= UINT64_MAX) { /* past dim */
                assert_true(isnan(dpzo_dir_at(&g, j)) && isnan(dpzo_dir_at(&r, j)));
                continue;
            }
            double sign = (w.v[e] >> 31) ? -1.0 : 1.0;
            if (!same_bits(dpzo_dir_at(&g, j), z[e]) || dpzo_dir_at(&r, j) != sign)
                fail_msg("j = 0x%016llx: gaussian %a rademacher %g, the block gives %a %g",
                         (unsigned long long)j, dpzo_dir_at(&g, j), dpzo_dir_at(&r, j), z[e],
                         sign);
        }
    }
    /* the counter's j words change at multiples of 4 and 2^34 only */
    dpzo_philox_ctr c0 = {{0, 1, (uint32_t)step, query}};
    dpzo_philox_ctr w = dpzo_philox4x32_10(c0, (uint32_t)seed, (uint32_t)(seed >> 32));
    double z0, z1;
    dpzo_normal_pair(w.v[0], w.v[1], &z0, &z1);
    assert_true(same_bits(dpzo_dir_at(&g, (uint64_t)1 << 34), z0));
}

/* ---- statistics ------------------------------------------------------------------- */

#define NSTAT 1000000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov distance of x[0..n) (sorted in place) from N(0, 1). */
static double ks_normal(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = 0.5 * erfc(-x[i] / M_SQRT2);
        d = fmax(d, fmax((double)(i + 1) / (double)n - f, f - (double)i / (double)n));
    }
    return d;
}

static void test_gaussian_moments(void **state)
{
    (void)state;
    dpzo_dir dir = make_dir(DPZO_DIR_GAUSSIAN, 12345, 3, 1, 5000000, 0.0);
    float *x = fill_new(&dir, 1000001, NSTAT); /* an odd start */
    double n = NSTAT, m1 = 0, m2 = 0, m3 = 0, m4 = 0, lag = 0;
    for (size_t i = 0; i < NSTAT; i++)
        m1 += x[i];
    m1 /= n;
    for (size_t i = 0; i < NSTAT; i++) {
        double d = x[i] - m1;
        m2 += d * d;
        m3 += d * d * d;
        m4 += d * d * d * d;
        if (i + 1 < NSTAT)
            lag += (double)x[i] * x[i + 1];
    }
    m2 /= n;
    m3 /= n;
    m4 /= n;
    double skew = m3 / pow(m2, 1.5), kurt = m4 / (m2 * m2);
    print_message("mean %.3g var %.6f skew %.3g kurt %.5f lag-1 corr %.3g\n", m1, m2, skew,
                  kurt, lag / n);
    /* 5 standard errors under N(0, 1) */
    assert_true(fabs(m1) < 5 * sqrt(1 / n));
    assert_true(fabs(m2 - 1) < 5 * sqrt(2 / n));
    assert_true(fabs(skew) < 5 * sqrt(6 / n));
    assert_true(fabs(kurt - 3) < 5 * sqrt(24 / n));
    /* the Box-Muller partners (and every neighbour) uncorrelated */
    assert_true(fabs(lag / n) < 5 * sqrt(1 / n));
    free(x);
}

static void test_gaussian_ks(void **state)
{
    (void)state;
    dpzo_dir dir = make_dir(DPZO_DIR_GAUSSIAN, 0xfeedface12345678ull, 77, 0, NSTAT, 0.0);
    float *x = fill_new(&dir, 0, NSTAT);
    /* all, and by position in the Philox block: j mod 4 = 0, 1, 2, 3 are the cos and sin
     * of the pair from words (w0, w1), then of the pair from (w2, w3) */
    double *all = malloc(NSTAT * sizeof *all), *pos[4];
    assert_non_null(all);
    for (int r = 0; r < 4; r++) {
        pos[r] = malloc(NSTAT / 4 * sizeof *pos[r]);
        assert_non_null(pos[r]);
    }
    for (size_t i = 0; i < NSTAT; i++) {
        all[i] = x[i];
        pos[i & 3][i / 4] = x[i];
    }
    /* critical values at the 0.1% level: 1.9495 / sqrt(n) */
    double d = ks_normal(all, NSTAT), dp[4];
    for (int r = 0; r < 4; r++)
        dp[r] = ks_normal(pos[r], NSTAT / 4);
    print_message("KS: all %.3g; j mod 4 = 0 (cos w0 w1) %.3g, 1 (sin) %.3g, 2 (cos w2 w3) %.3g, "
                  "3 (sin) %.3g; critical %.3g / %.3g\n",
                  d, dp[0], dp[1], dp[2], dp[3], 1.9495 / sqrt(NSTAT), 1.9495 / sqrt(NSTAT / 4));
    assert_true(d < 1.9495 / sqrt(NSTAT));
    for (int r = 0; r < 4; r++)
        assert_true(dp[r] < 1.9495 / sqrt(NSTAT / 4));
    /* the range of a 32-bit Box-Muller: |z| <= sqrt(64 ln 2), and the extreme values of a
     * million draws reach past 4 (about 32 expected in each tail) */
    assert_true(all[0] >= -sqrt(64 * M_LN2) - 1e-6 && all[NSTAT - 1] <= sqrt(64 * M_LN2) + 1e-6);
    assert_true(all[0] < -4.0 && all[NSTAT - 1] > 4.0);
    free(all);
    for (int r = 0; r < 4; r++)
        free(pos[r]);
    free(x);
}

static double corr(const float *a, const float *b, size_t n)
{
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        sab += (double)a[i] * b[i];
        saa += (double)a[i] * a[i];
        sbb += (double)b[i] * b[i];
    }
    return sab / sqrt(saa * sbb);
}

static void test_streams_differ(void **state)
{
    (void)state;
    const size_t n = 100000;
    const uint64_t big = UINT64_MAX;
    dpzo_dir base = make_dir(DPZO_DIR_GAUSSIAN, 0x0123456789abcdefull, 5, 2, big, 0.0);
    dpzo_dir other[] = {
        make_dir(DPZO_DIR_GAUSSIAN, 0x0123456789abcdefull, 5, 3, big, 0.0), /* query */
        make_dir(DPZO_DIR_GAUSSIAN, 0x0123456789abcdefull, 6, 2, big, 0.0), /* step */
        make_dir(DPZO_DIR_GAUSSIAN, 0x0123456789abcdeeull, 5, 2, big, 0.0), /* seed low */
        make_dir(DPZO_DIR_GAUSSIAN, 0x0123456689abcdefull, 5, 2, big, 0.0), /* seed high */
    };
    const char *what[] = {"query", "step", "seed (low word)", "seed (high word)", "j + 2^34"};
    float *x = fill_new(&base, 0, n);
    for (size_t k = 0; k < 5; k++) {
        /* the last case: the same stream shifted by 2^34 (the counter's high j word) */
        float *y = k < 4 ? fill_new(&other[k], 0, n) : fill_new(&base, (uint64_t)1 << 34, n);
        size_t equal = 0;
        for (size_t i = 0; i < n; i++)
            equal += x[i] == y[i];
        double c = corr(x, y, n);
        if (equal > 0 || !(fabs(c) < 5 / sqrt((double)n)))
            fail_msg("changing the %s: %zu equal elements, correlation %.3g", what[k], equal,
                     c);
        free(y);
    }
    free(x);
}

static void test_rademacher(void **state)
{
    (void)state;
    dpzo_dir dir = make_dir(DPZO_DIR_RADEMACHER, 99, 1, 0, NSTAT + 1, 1.0);
    assert_true(dir.scale == 1.0);
    float *x = fill_new(&dir, 1, NSTAT); /* x[i] is element i + 1 */
    size_t plus = 0, quads[16] = {0}, nq = 0;
    for (size_t i = 0; i < NSTAT; i++) {
        if (x[i] != 1.0f && x[i] != -1.0f)
            fail_msg("element %zu is %g", i + 1, x[i]);
        plus += x[i] > 0;
    }
    /* the sign patterns of whole Philox blocks (elements 4m .. 4m + 3, one bit from each
     * word): all 16 equally likely */
    for (size_t i = 3; i + 4 <= NSTAT; i += 4, nq++)
        quads[8 * (x[i] > 0) + 4 * (x[i + 1] > 0) + 2 * (x[i + 2] > 0) + (x[i + 3] > 0)]++;
    double n = NSTAT, p16 = (double)nq / 16;
    size_t qmin = quads[0], qmax = quads[0];
    for (int k = 1; k < 16; k++) {
        qmin = quads[k] < qmin ? quads[k] : qmin;
        qmax = quads[k] > qmax ? quads[k] : qmax;
    }
    print_message("rademacher: %zu of %d positive; the 16 block sign patterns %zu to %zu "
                  "times in %zu blocks (%.0f expected)\n", plus, NSTAT, qmin, qmax, nq, p16);
    assert_true(fabs((double)plus - n / 2) < 5 * sqrt(n) / 2);
    for (int k = 0; k < 16; k++)
        if (!(fabs((double)quads[k] - p16) < 5 * sqrt((double)nq * (1.0 / 16) * (15.0 / 16))))
            fail_msg("block sign pattern %d: %zu of %zu", k, quads[k], nq);
    free(x);
}

/* ---- SPHERE ----------------------------------------------------------------------- */

/* The documented order: blocks of 4096, each left to right, block sums left to right. */
static double blocked_norm2(const dpzo_dir *gauss, uint64_t dim)
{
    double total = 0.0;
    for (uint64_t j0 = 0; j0 < dim; j0 += 4096) {
        double block = 0.0;
        for (uint64_t j = j0; j < dim && j < j0 + 4096; j++) {
            double z = dpzo_dir_at(gauss, j);
            block += z * z;
        }
        total += block;
    }
    return total;
}

static void test_sphere(void **state)
{
    (void)state;
    const uint64_t d = 100003;
    const double radii[] = {sqrt((double)d), pow((double)d, 0.25)};
    for (int k = 0; k < 2; k++) {
        dpzo_dir dir = make_dir(DPZO_DIR_SPHERE, 2024, 17, 4, d, radii[k]);
        long double s = 0;
        for (uint64_t j = 0; j < d; j++) {
            long double u = dpzo_dir_at(&dir, j);
            s += u * u;
        }
        assert_rel((double)sqrtl(s), radii[k], 1e-12);
        float *x = fill_new(&dir, 0, d);
        double sf = 0;
        for (uint64_t j = 0; j < d; j++)
            sf += (double)x[j] * x[j];
        assert_rel(sqrt(sf), radii[k], 1e-6);
        free(x);
    }
    /* the scale is radius / sqrt(S) with S in the documented order, bit for bit, and the
     * elements are scale times the Gaussian ones */
    const uint64_t dims[] = {1,    2,    3,    4,    5,    6,     7,     4095,
                             4096, 4097, 4098, 4099, 8192, 12289, 100003};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        dpzo_dir sph = make_dir(DPZO_DIR_SPHERE, 7, 8, 9, dims[k], 3.5);
        dpzo_dir gau = make_dir(DPZO_DIR_GAUSSIAN, 7, 8, 9, dims[k], 0.0);
        double want = 3.5 / sqrt(blocked_norm2(&gau, dims[k]));
        if (sph.scale != want)
            fail_msg("dim %llu: scale %a, documented order gives %a",
                     (unsigned long long)dims[k], sph.scale, want);
        for (uint64_t j = 0; j < dims[k]; j += 1 + dims[k] / 50)
            assert_true(dpzo_dir_at(&sph, j) == sph.scale * dpzo_dir_at(&gau, j));
    }
    /* against the generator's own implementation of the specification */
    for (size_t k = 0; k < sizeof DPZO_SPHERE_REF / sizeof DPZO_SPHERE_REF[0]; k++) {
        const dpzo_sphere_ref *r = &DPZO_SPHERE_REF[k];
        dpzo_dir sph = make_dir(DPZO_DIR_SPHERE, r->seed, r->step, r->query, r->dim, r->radius);
        if (!same_bits(sph.scale, r->scale_exact))
            fail_msg("dim %llu: scale %a, the specification gives %a",
                     (unsigned long long)r->dim, sph.scale, r->scale_exact);
    }
    dpzo_dir one = make_dir(DPZO_DIR_SPHERE, 1, 0, 0, 1, 2.0);
    assert_ulps(fabs(dpzo_dir_at(&one, 0)), 2.0, 1);
}

/* ---- fill / axpy layout ----------------------------------------------------------- */

static void check_splits(const dpzo_dir *dir, uint64_t j0, size_t n)
{
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    assert_true(want && got);
    for (size_t i = 0; i < n; i++)
        want[i] = (float)dpzo_dir_at(dir, j0 + i);
    static const size_t chunks[] = {1, 2, 3, 4, 5, 7, 8, 4096, 4097, 1 << 20};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        memset(got, 0xff, n * sizeof *got);
        /* alternate the chunk with 1, 2, 3, 1, 2, 3, ... elements, so calls start and end
         * at every position in a Philox block whatever the chunk */
        size_t i = 0;
        for (unsigned step = 0; i < n; step++) {
            size_t len = (step & 1) ? 1 + (step / 2) % 3 : chunks[c];
            if (len > n - i)
                len = n - i;
            dpzo_dir_fill(dir, j0 + i, len, got + i);
            i += len;
        }
        if (memcmp(want, got, n * sizeof *got) != 0) {
            for (i = 0; i < n && memcmp(&want[i], &got[i], sizeof *got) == 0; i++)
                ;
            fail_msg("kind %s, j0 %llu, chunk %zu: element %zu is %a, dpzo_dir_at gives %a",
                     dpzo_dir_kind_name(dir->kind), (unsigned long long)j0, chunks[c], i,
                     got[i], want[i]);
        }
    }
    free(want);
    free(got);
}

static void test_fill_layout(void **state)
{
    (void)state;
    dpzo_dir g = make_dir(DPZO_DIR_GAUSSIAN, 31337, 2, 1, UINT64_MAX, 0.0);
    dpzo_dir s = make_dir(DPZO_DIR_SPHERE, 31337, 2, 1, 50001, 1.0);
    dpzo_dir r = make_dir(DPZO_DIR_RADEMACHER, 31337, 2, 1, UINT64_MAX, 0.0);
    const uint64_t starts[] = {0, 1, 2, 3, 4095, 12345};
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        check_splits(&g, starts[k], 20011);
        check_splits(&s, starts[k], 50001 - starts[k]);
        check_splits(&r, starts[k], 20011);
    }
    check_splits(&g, ((uint64_t)1 << 34) - 1001, 2003); /* across the high counter word */
    check_splits(&r, ((uint64_t)1 << 34) - 1002, 2005);
    check_splits(&g, UINT64_MAX - 1001, 1001);          /* the last elements */
    check_splits(&r, UINT64_MAX - 1002, 1002);
    /* every start position in a block with every short length, fill and axpy (a partial
     * block at the start, the end or both, and n = 0) */
    const dpzo_dir *dirs[] = {&g, &s, &r};
    for (int d = 0; d < 3; d++)
        for (uint64_t j0 = 4 * 1000; j0 < 4 * 1000 + 8; j0++)
            for (size_t n = 0; n <= 13; n++) {
                float got[16], th[16], want[16];
                for (size_t i = 0; i < 16; i++)
                    got[i] = th[i] = want[i] = (float)i - 7.5f;
                dpzo_dir_fill(dirs[d], j0, n, got);
                dpzo_dir_axpy(dirs[d], j0, n, 0.25, th);
                for (size_t i = 0; i < n; i++) {
                    float u = (float)dpzo_dir_at(dirs[d], j0 + i);
                    float t = (float)((double)want[i] + 0.25 * (double)u);
                    if (memcmp(&got[i], &u, sizeof u) != 0 || memcmp(&th[i], &t, sizeof t) != 0)
                        fail_msg("%s j0 %llu n %zu element %zu: fill %a axpy %a, expected %a %a",
                                 dpzo_dir_kind_name(dirs[d]->kind), (unsigned long long)j0, n, i,
                                 got[i], th[i], u, t);
                }
                for (size_t i = n; i < 16; i++) /* nothing written past n */
                    assert_true(got[i] == want[i] && th[i] == want[i]);
            }
    /* Gaussian and sphere of the same (seed, step, query) share the raw draw; Rademacher
     * is a different transform of the same words */
    assert_true((float)dpzo_dir_at(&s, 10) == (float)(s.scale * dpzo_dir_at(&g, 10)));
}

static void test_out_of_range(void **state)
{
    (void)state;
    dpzo_dir g = make_dir(DPZO_DIR_GAUSSIAN, 5, 0, 0, 10, 0.0);
    assert_true(isnan(dpzo_dir_at(&g, 10)) && isfinite(dpzo_dir_at(&g, 9)));
    float x[6], t[6] = {1, 2, 3, 4, 5, 6};
    dpzo_dir_fill(&g, 7, 6, x);
    for (int i = 0; i < 6; i++)
        assert_true(i < 3 ? x[i] == (float)dpzo_dir_at(&g, 7 + (uint64_t)i) : isnan(x[i]));
    dpzo_dir_axpy(&g, 8, 6, 0.5, t);
    assert_true(!isnan(t[0]) && !isnan(t[1]) && isnan(t[2]) && isnan(t[5]));
    dpzo_dir_fill(&g, UINT64_MAX, 2, x); /* j0 far past dim */
    assert_true(isnan(x[0]) && isnan(x[1]));
}

static void test_axpy(void **state)
{
    (void)state;
    const size_t n = 200001;
    const uint64_t j0 = 77777;
    dpzo_dir dirs[2] = {make_dir(DPZO_DIR_SPHERE, 8, 9, 10, 300000, 2.0),
                        make_dir(DPZO_DIR_GAUSSIAN, 8, 9, 10, 300000, 0.0)};
    float *theta = malloc(n * sizeof *theta), *t = malloc(n * sizeof *t);
    assert_true(theta && t);
    rng_state = 4;
    for (size_t i = 0; i < n; i++) /* parameters of assorted magnitudes */
        theta[i] = (float)((double)(int64_t)rnd64() * 0x1p-63 * ldexp(1.0, (int)(i % 9) - 6));
    for (int k = 0; k < 2; k++) {
        const dpzo_dir *dir = &dirs[k];
        float *u = fill_new(dir, j0, n);
        const double alpha = -3.0e-3;
        memcpy(t, theta, n * sizeof *t);
        /* in uneven pieces */
        for (size_t i = 0; i < n;) {
            size_t len = (i % 3 == 0) ? 1 : 4099;
            len = len > n - i ? n - i : len;
            dpzo_dir_axpy(dir, j0 + i, len, alpha, t + i);
            i += len;
        }
        for (size_t i = 0; i < n; i++) {
            float want = (float)((double)theta[i] + alpha * (double)u[i]);
            if (memcmp(&t[i], &want, sizeof want) != 0)
                fail_msg("element %zu: %a, expected %a", i, t[i], want);
        }
        /* +alpha then -alpha does NOT restore theta bit for bit in general (theta + alpha
         * u is rounded to float in between); the error is below one float ulp of the
         * larger of the intermediate and the result */
        float *t2 = malloc(n * sizeof *t2);
        assert_non_null(t2);
        memcpy(t2, t, n * sizeof *t2);
        dpzo_dir_axpy(dir, j0, n, -alpha, t2);
        size_t restored = 0;
        for (size_t i = 0; i < n; i++) {
            float big = fmaxf(fabsf(t[i]), fabsf(t2[i]));
            float ulp = nextafterf(big, INFINITY) - big;
            if (!(fabsf(t2[i] - theta[i]) <= ulp))
                fail_msg("element %zu: %a -> %a -> %a (ulp %a)", i, theta[i], t[i], t2[i], ulp);
            restored += t2[i] == theta[i];
        }
        print_message("%s: +alpha -alpha restored %zu of %zu elements exactly\n",
                      dpzo_dir_kind_name(dir->kind), restored, n);
        assert_true(restored < n);
        free(t2);
        free(u);
    }
    free(theta);
    free(t);
}

/* ---- arguments and names ---------------------------------------------------------- */

static void expect_einval(dpzo_ctx *ctx, dpzo_dir_kind kind, uint64_t step, uint64_t dim,
                          double radius, const char *word)
{
    dpzo_dir dir = {.kind = DPZO_DIR_GAUSSIAN, .dim = 123};
    dpzo_status st = dpzo_dir_init(ctx, &dir, kind, 1, step, 0, dim, radius);
    if (st != DPZO_EINVAL)
        fail_msg("kind %d step %llu dim %llu radius %g: status %s", (int)kind,
                 (unsigned long long)step, (unsigned long long)dim, radius,
                 dpzo_status_name(st));
    if (strstr(dpzo_ctx_errmsg(ctx), word) == NULL)
        fail_msg("message '%s' does not mention '%s'", dpzo_ctx_errmsg(ctx), word);
    assert_true(dir.dim == 123); /* untouched on failure */
}

static void test_init_errors(void **state)
{
    dpzo_ctx *ctx = *state;
    expect_einval(ctx, (dpzo_dir_kind)3, 0, 10, 1.0, "kind");
    expect_einval(ctx, (dpzo_dir_kind)-1, 0, 10, 1.0, "kind");
    expect_einval(ctx, DPZO_DIR_GAUSSIAN, 0, 0, 1.0, "dim");
    expect_einval(ctx, DPZO_DIR_RADEMACHER, (uint64_t)1 << 32, 10, 1.0, "step");
    expect_einval(ctx, DPZO_DIR_SPHERE, 0, 10, 0.0, "radius");
    expect_einval(ctx, DPZO_DIR_SPHERE, 0, 10, -1.0, "radius");
    expect_einval(ctx, DPZO_DIR_SPHERE, 0, 10, INFINITY, "radius");
    expect_einval(ctx, DPZO_DIR_SPHERE, 0, 10, NAN, "radius");
    assert_int_equal(dpzo_dir_init(NULL, NULL, DPZO_DIR_GAUSSIAN, 1, 0, 0, 1, 0), DPZO_EINVAL);
    /* the largest step; radius ignored outside SPHERE */
    dpzo_dir dir;
    assert_ok(ctx, dpzo_dir_init(ctx, &dir, DPZO_DIR_GAUSSIAN, 1, UINT32_MAX, UINT32_MAX, 5, NAN));
    assert_true(dir.scale == 1.0 && dir.step == UINT32_MAX && dir.dim == 5);
}

static void test_kind_names(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++)
        assert_int_equal(dpzo_dir_kind_parse(dpzo_dir_kind_name((dpzo_dir_kind)k)), k);
    assert_string_equal(dpzo_dir_kind_name(DPZO_DIR_SPHERE), "sphere");
    assert_int_equal(dpzo_dir_kind_parse("rademacher"), DPZO_DIR_RADEMACHER);
    assert_int_equal(dpzo_dir_kind_parse("Gaussian"), -1);
    assert_int_equal(dpzo_dir_kind_parse(""), -1);
    assert_int_equal(dpzo_dir_kind_parse(NULL), -1);
    assert_string_equal(dpzo_dir_kind_name((dpzo_dir_kind)7), "?");
}

/* Every implementation this CPU offers (portable, SSE2, AVX2, AVX-512) gives the same bits
 * as the default dispatch, for fill and axpy from unaligned starts, and the sphere norm. */
static void test_impls_agree(void **state)
{
    (void)state;
    const size_t n = 100003;
    const uint64_t j0 = 12345;
    const dpzo_dir_kind kinds[3] = {DPZO_DIR_GAUSSIAN, DPZO_DIR_SPHERE, DPZO_DIR_RADEMACHER};
    float *ref = malloc(n * sizeof *ref), *got = malloc(n * sizeof *got);
    float *tr = malloc(n * sizeof *tr), *tg = malloc(n * sizeof *tg);
    int tried = 0;
    for (int k = 0; k < 3; k++) {
        dpzo_ctx *ctx = dpzo_ctx_new();
        dpzo_dir d;
        assert_int_equal(dpzo__dir_raw_impl(-1), 0); /* the default dispatch */
        assert_ok(ctx, dpzo_dir_init(ctx, &d, kinds[k], 77, 5, 1, j0 + n, 3.0));
        dpzo_dir_fill(&d, j0, n, ref);
        for (size_t i = 0; i < n; i++)
            tr[i] = (float)i * 1e-3f;
        dpzo_dir_axpy(&d, j0, n, 0.37, tr);
        for (int impl = DPZO_RAW_PORTABLE; impl <= DPZO_RAW_AVX512; impl++) {
            if (dpzo__dir_raw_impl(impl) != 0)
                continue; /* not on this CPU or build */
            tried++;
            dpzo_dir e;
            assert_ok(ctx, dpzo_dir_init(ctx, &e, kinds[k], 77, 5, 1, j0 + n, 3.0));
            assert_memory_equal(&e.scale, &d.scale, sizeof d.scale); /* the sphere norm */
            dpzo_dir_fill(&e, j0, n, got);
            assert_memory_equal(ref, got, n * sizeof *got);
            for (size_t i = 0; i < n; i++)
                tg[i] = (float)i * 1e-3f;
            dpzo_dir_axpy(&e, j0, n, 0.37, tg);
            assert_memory_equal(tr, tg, n * sizeof *tg);
        }
        dpzo__dir_raw_impl(-1);
        dpzo_ctx_free(ctx);
    }
    assert_true(tried >= 3); /* at least the portable one, for each kind */
    free(ref);
    free(got);
    free(tr);
    free(tg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_kat),
        cmocka_unit_test(test_log_vs_libm),
        cmocka_unit_test(test_sin_cos_kernels_vs_libm),
        cmocka_unit_test(test_sincos_turn),
        cmocka_unit_test(test_normal_pair_ref),
        cmocka_unit_test(test_elements_ref),
        cmocka_unit_test(test_counter_layout),
        cmocka_unit_test(test_gaussian_moments),
        cmocka_unit_test(test_gaussian_ks),
        cmocka_unit_test(test_streams_differ),
        cmocka_unit_test(test_rademacher),
        cmocka_unit_test(test_sphere),
        cmocka_unit_test(test_fill_layout),
        cmocka_unit_test(test_impls_agree),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_axpy),
        cmocka_unit_test_setup_teardown(test_init_errors, ctx_setup, ctx_teardown),
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
