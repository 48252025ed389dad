/* kernels/cpu/philox.c: the counter-based generator and the exactly specified normal
 * transform behind dpzo/zo_dir.h. This file is the SPECIFICATION the CUDA kernels must
 * reproduce bit for bit; everything below is binary64 round-to-nearest-even with one
 * rounding per operation (no FMA contraction: the pragma below for compilers that honour
 * it (GCC ignores it and warns, hence the #if), -ffp-contract=off for GCC in
 * kernels/CMakeLists.txt; nvcc needs --fmad=false or the __dadd_rn/__dmul_rn intrinsics).
 *
 * 1. Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11, "Parallel random numbers: as easy
 *    as 1, 2, 3"). Counter (x0, x1, x2, x3), key (k0, k1), all uint32. One round:
 *        (hi0, lo0) = 0xD2511F53 * x0   (the 64-bit product split in halves)
 *        (hi1, lo1) = 0xCD9E8D57 * x2
 *        (x0, x1, x2, x3) <- (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
 *    Ten rounds; between consecutive rounds the key is bumped by the Weyl increments
 *    k0 += 0x9E3779B9, k1 += 0xBB67AE85 (mod 2^32), so round r (0-based) uses
 *    k0 + r * 0x9E3779B9, k1 + r * 0xBB67AE85. Checked against Random123's KAT vectors.
 *
 * 2. The direction's stream (kernels/cpu/zo_dir.c). Element j of the direction with
 *    (seed, step, query) comes from the Philox block with
 *        key     = (k0, k1) = ((uint32)seed, (uint32)(seed >> 32))
 *        counter = ((uint32)(j >> 2), (uint32)(j >> 34), (uint32)step, query)
 *    (step < 2^32 is enforced by dpzo_dir_init, so the packing is injective in
 *    (j >> 2, step, query)): one block feeds the four elements 4m .. 4m + 3, m = j >> 2.
 *    With output words (w0, w1, w2, w3):
 *        GAUSSIAN / SPHERE: (z0, z1) = dpzo_normal_pair(w0, w1),
 *                           (z2, z3) = dpzo_normal_pair(w2, w3); element j is z_(j & 3).
 *        RADEMACHER:        element j is -1 if bit 31 of w_(j & 3) is set, else +1.
 *    SPHERE multiplies by scale = radius / sqrt(S), where S = sum over j < dim of z_j * z_j
 *    (each square rounded to double, then added) in this order: blocks of 4096 consecutive
 *    elements [4096 b, min(4096 (b + 1), dim)); each block summed left to right starting
 *    from +0.0; the block sums summed left to right starting from +0.0. The element
 *    written by dpzo_dir_fill is (float)(scale * z_j) (one double product, then one
 *    rounding to float; GAUSSIAN and RADEMACHER have scale = 1).
 *
 * 3. dpzo_normal_pair(a, b): Box-Muller.
 *        u1 = (a + 1) * 2^-32  in (0, 1]     (exact: a + 1 <= 2^32)
 *        L  = dpzo__log(u1)                  (section 4)
 *        r  = sqrt(-2 * L)                   (-2 * L exact; r = -0.0 when a = 2^32 - 1)
 *        (s, c) = dpzo__sincos_turn32(b)     (sin and cos of 2 pi b / 2^32, section 5)
 *        z0 = r * c,  z1 = r * s
 *    |z| <= sqrt(64 ln 2) = 6.66: the 32-bit u1 truncates the tails at probability
 *    2.7e-11, which no statistic of a zeroth-order direction can see.
 *
 * 4. dpzo__log(x), x a positive normal double (subnormals are first scaled by 2^54):
 *        from the bits, x = 2^k * m with m in [1, 2); if m > SQRT2 (the double
 *        0x1.6a09e667f3bcdp+0) then m = m * 0.5, k = k + 1.
 *        f = m - 1 (exact)   s = f / (2 + f)   z = s * s   hfsq = 0.5 * f * f
 *        R = z * (L1 + z * (L2 + ... + z * L10)), Ln = double nearest 2 / (2n + 1)
 *            (Taylor series of 2 atanh(s) / s - 2 in z, truncated after z^10)
 *        log = k * LN2_HI - ((hfsq - (s * (hfsq + R) + k * LN2_LO)) - f)
 *    with LN2_HI = 0x1.62e42fef00000p-1 (ln 2 truncated to 33 bits, so k * LN2_HI is
 *    exact) and LN2_LO = 0x1.473de6af278edp-34 (ln 2 - LN2_HI, rounded). Operations in
 *    exactly this order and grouping (the identity behind it: log(1 + f) = 2 atanh(s)
 *    = f - hfsq + s (hfsq + R)).
 *
 * 5. dpzo__sincos_turn32(b): with all integer arithmetic mod 2^32,
 *        q  = ((b + 2^29) >> 30)               quadrant of the nearest quarter turn
 *        rr = b - q * 2^30,  r = rr as a signed 32-bit integer (|r| <= 2^29)
 *        t  = r * PH + r * PL    PH = 0x1.921fb4p-30: 2 pi / 2^32 truncated to 23 significant
 *                                bits, so r * PH is exact; PL = 0x1.4442d18469899p-54: the
 *                                rest (2 pi / 2^32 - PH) rounded
 *        z  = t * t
 *        sin t = t + (t * z) * (S1 + z * (S2 + ... + z * S8)), Sk = nearest (-1)^k/(2k+1)!
 *        cos t: hz = 0.5 * z, w = 1 - hz,
 *               cos t = w + (((1 - w) - hz) + (z * z) * (C2 + z * (C3 + ... + z * C8))),
 *               Ck = nearest (-1)^k / (2k)!
 *        (sin, cos) of the angle = (sin t, cos t), (cos t, -sin t), (-sin t, -cos t),
 *        (-cos t, sin t) for q = 0, 1, 2, 3.
 *    The reduction is exact, so sin and cos keep a small relative error even next to
 *    their zeros. All coefficients are listed below as hexadecimal literals.
 *
 * Accuracy (tests/test_zo_dir.c): log, and sin/cos on [-pi/4, pi/4], within 1 ulp of glibc;
 * the normal pair within 2 ulps of 40-digit values. Bit-exactness: the generator
 * tests/ref/gen_zo_dir_values.py re-implements sections 2-5 in Python floats (constants
 * derived from their definitions) and the test requires identical bits (exact values and a
 * hash of 200000 pairs); a CUDA port should pass the same checks. */
#if defined(__clang__) || !defined(__GNUC__)
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "dpzo/zo_dir.h"
#include "zo_math.h"

/* ---- implementation notes ---------------------------------------------------------
 * Every step below is written once, as an always-inlined "core" that is branch-free on
 * its normal path, and used both by the scalar entry points (dpzo__log, dpzo_normal_pair,
 * ...) and by the batched generator dpzo__dir_raw_blocks at the end of this file, whose
 * loops GCC vectorises (AVX-512, AVX2 and SSE2 versions, picked at run time). A vector
 * lane performs exactly the IEEE operations of the scalar code in the same order (no FMA:
 * -ffp-contract=off; no reassociation: no -ffast-math), so the lanes and the scalar code
 * agree bit for bit. Integer-to-double conversions of values that are exact either way
 * are done by bit tricks (AVX2 has no 64-bit integer conversion), which give the same
 * doubles as the C conversions. The one stage not shared is the vector Philox (x86
 * intrinsics, integer arithmetic, so exact by construction). */

#if defined(__GNUC__)
#define DPZO_CORE static inline __attribute__((always_inline))
#else
#define DPZO_CORE static inline
#endif

DPZO_CORE uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

DPZO_CORE double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* (double)a, exactly: 2^52 + a has a in the low significand bits; subtracting 2^52 is
 * exact. */
DPZO_CORE double u32_to_double(uint32_t a)
{
    return double_of(0x4330000000000000ull | (uint64_t)a) - 0x1p52;
}

/* (double)k for |k| < 2^31, exactly (the same trick on k + 2^31; k = 0 gives +0.0, as
 * (double)0 does). */
DPZO_CORE double small_int_to_double(int64_t k)
{
    return double_of(0x4330000000000000ull + (uint64_t)(k + 0x80000000ll)) -
           (0x1p52 + 0x1p31);
}

/* ---- Philox4x32-10 --------------------------------------------------------------- */

/* One round with the round's key (k0, k1). */
#define DPZO_PHILOX_ROUND(k0, k1)                                                        \
    do {                                                                                  \
        uint64_t p0_ = (uint64_t)0xD2511F53u * x0;                                        \
        uint64_t p1_ = (uint64_t)0xCD9E8D57u * x2;                                        \
        x0 = (uint32_t)(p1_ >> 32) ^ x1 ^ (k0);                                           \
        x1 = (uint32_t)p1_;                                                               \
        x2 = (uint32_t)(p0_ >> 32) ^ x3 ^ (k1);                                           \
        x3 = (uint32_t)p0_;                                                               \
    } while (0)

DPZO_CORE dpzo_philox_ctr philox_core(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1)
{
    uint32_t x0 = ctr.v[0], x1 = ctr.v[1], x2 = ctr.v[2], x3 = ctr.v[3];
    /* round r uses (k0 + r 0x9E3779B9, k1 + r 0xBB67AE85), unrolled */
    DPZO_PHILOX_ROUND(k0, k1);
    DPZO_PHILOX_ROUND(k0 + 0x9E3779B9u, k1 + 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 2u * 0x9E3779B9u, k1 + 2u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 3u * 0x9E3779B9u, k1 + 3u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 4u * 0x9E3779B9u, k1 + 4u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 5u * 0x9E3779B9u, k1 + 5u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 6u * 0x9E3779B9u, k1 + 6u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 7u * 0x9E3779B9u, k1 + 7u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 8u * 0x9E3779B9u, k1 + 8u * 0xBB67AE85u);
    DPZO_PHILOX_ROUND(k0 + 9u * 0x9E3779B9u, k1 + 9u * 0xBB67AE85u);
    dpzo_philox_ctr out = {{x0, x1, x2, x3}};
    return out;
}
#undef DPZO_PHILOX_ROUND

dpzo_philox_ctr dpzo_philox4x32_10(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1)
{
    return philox_core(ctr, k0, k1);
}

/* ---- log ------------------------------------------------------------------------- */

static const double LN2_HI = 0x1.62e42fef00000p-1;
static const double LN2_LO = 0x1.473de6af278edp-34;
#define SQRT2_BITS 0x3ff6a09e667f3bcdull /* 0x1.6a09e667f3bcdp+0, sqrt(2) rounded */
/* 2 / (2n + 1), n = 1..10 */
static const double L1 = 0x1.5555555555555p-1, L2 = 0x1.999999999999ap-2,
                    L3 = 0x1.2492492492492p-2, L4 = 0x1.c71c71c71c71cp-3,
                    L5 = 0x1.745d1745d1746p-3, L6 = 0x1.3b13b13b13b14p-3,
                    L7 = 0x1.1111111111111p-3, L8 = 0x1.e1e1e1e1e1e1ep-4,
                    L9 = 0x1.af286bca1af28p-4, L10 = 0x1.8618618618618p-4;

/* log(2^k0 x) for x the positive normal double with bits xbits (section 4; |k0| small). */
DPZO_CORE double log_core(uint64_t xbits, int64_t k0)
{
    /* m = the significand in [1, 2); when m > SQRT2, m * 0.5 and k + 1 (written without
     * a branch: the exponent field 1022 instead of 1023 is exactly m * 0.5). Both
     * significands are below 2^52, so the signed comparison is the unsigned one. */
    uint64_t mant = xbits & 0x000fffffffffffffull;
    int64_t big = (int64_t)mant > (int64_t)(SQRT2_BITS & 0x000fffffffffffffull);
    int64_t k = k0 + (int64_t)(xbits >> 52) - 1023 + big;
    double m = double_of(mant | ((uint64_t)(1023 - big) << 52));
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double hfsq = 0.5 * f * f;
    double R =
        z * (L1 +
             z * (L2 + z * (L3 + z * (L4 + z * (L5 + z * (L6 + z * (L7 + z * (L8 + z * (L9 + z * L10)))))))));
    double dk = small_int_to_double(k);
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
}

double dpzo__log(double x)
{
    if (!(x > 0.0)) /* 0, negative, NaN */
        return x == 0.0 ? -INFINITY : NAN;
    if (x == INFINITY)
        return x;
    int64_t k = 0;
    if (x < 0x1p-1022) { /* subnormal: exact scaling into the normal range */
        x *= 0x1p54;
        k = -54;
    }
    return log_core(bits_of(x), k);
}

/* ---- sin, cos on [-pi/4, pi/4] ---------------------------------------------------- */

/* (-1)^k / (2k + 1)!, k = 1..8 */
static const double S1 = -0x1.5555555555555p-3, S2 = 0x1.1111111111111p-7,
                    S3 = -0x1.a01a01a01a01ap-13, S4 = 0x1.71de3a556c734p-19,
                    S5 = -0x1.ae64567f544e4p-26, S6 = 0x1.6124613a86d09p-33,
                    S7 = -0x1.ae7f3e733b81fp-41, S8 = 0x1.952c77030ad4ap-49;
/* (-1)^k / (2k)!, k = 2..8 */
static const double C2 = 0x1.5555555555555p-5, C3 = -0x1.6c16c16c16c17p-10,
                    C4 = 0x1.a01a01a01a01ap-16, C5 = -0x1.27e4fb7789f5cp-22,
                    C6 = 0x1.1eed8eff8d898p-29, C7 = -0x1.93974a8c07c9dp-37,
                    C8 = 0x1.ae7f3e733b81fp-45;

DPZO_CORE double sin_core(double x)
{
    double z = x * x;
    double p = S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * (S6 + z * (S7 + z * S8))))));
    return x + (x * z) * p;
}

DPZO_CORE double cos_core(double x)
{
    double z = x * x;
    double q = C2 + z * (C3 + z * (C4 + z * (C5 + z * (C6 + z * (C7 + z * C8)))));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + (z * z) * q);
}

double dpzo__sin_kernel(double x) { return sin_core(x); }

double dpzo__cos_kernel(double x) { return cos_core(x); }

/* ---- sin, cos of 2 pi b / 2^32 ---------------------------------------------------- */

static const double PH = 0x1.921fb4p-30;
static const double PL = 0x1.4442d18469899p-54;

/* Section 5, in 64-bit integer lanes (the mod 2^32 arithmetic made explicit by masks, so
 * that a vector lane keeps the width of the doubles it feeds). */
DPZO_CORE void sincos_core(uint32_t b32, double *s, double *c)
{
    const uint64_t b = b32, m32 = 0xffffffffull;
    uint64_t q = ((b + 0x20000000u) & m32) >> 30;
    uint64_t rr = (b - (q << 30)) & m32;
    int64_t r = (int64_t)rr - (int64_t)((rr >> 31) << 32);
    double dr = small_int_to_double(r); /* (double)r: |r| <= 2^29 */
    double t = dr * PH + dr * PL;
    double st = sin_core(t), ct = cos_core(t);
    /* (st, ct), (ct, -st), (-st, -ct), (-ct, st) for q = 0..3, without branches (q is
     * random, so a branch would mispredict): swap when q is odd, then negate (flip the
     * sign bit, which is exactly IEEE negation) sin when q >= 2 and cos when q is 1 or 2 */
    uint64_t sb = bits_of(st), cb = bits_of(ct);
    uint64_t swap = (uint64_t)0 - (q & 1), diff = (sb ^ cb) & swap;
    sb ^= diff;
    cb ^= diff;
    sb ^= (q >> 1) << 63;
    cb ^= ((q ^ (q >> 1)) & 1) << 63;
    *s = double_of(sb);
    *c = double_of(cb);
}

void dpzo__sincos_turn32(uint32_t b, double *s, double *c) { sincos_core(b, s, c); }

/* ---- the normal pair ------------------------------------------------------------- */

DPZO_CORE void normal_core(uint32_t a, uint32_t b, double *z0, double *z1)
{
    double u1 = (u32_to_double(a) + 1.0) * 0x1p-32; /* in [2^-32, 1]: a normal double */
    double r = sqrt(-2.0 * log_core(bits_of(u1), 0));
    double s, c;
    sincos_core(b, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

void dpzo_normal_pair(uint32_t a, uint32_t b, double *z0, double *z1)
{
    normal_core(a, b, z0, z1);
}

/* ---- the batched stream (section 2) ---------------------------------------------- */

/* dpzo__dir_raw_blocks works on a chunk of up to DPZO_RAW_CHUNK Philox blocks in stages,
 * each a straight-line loop over arrays: the blocks' words (vector Philox, below), then
 * u1's log and r = sqrt(-2 L) for every pair, then sin / cos and the products, then the
 * interleaving into element order. Splitting the stages keeps each loop body short, so
 * consecutive iterations' long dependency chains (Horner polynomials, a division, a
 * square root) overlap in the out-of-order window. GCC vectorises the stage loops; each
 * lane performs exactly the scalar core's operations. */

typedef struct {
    uint32_t k0, k1, step, query;
} philox_key;

/* The words of blocks m0 + i, i in [i0, nb), one at a time. */
DPZO_CORE void philox_words_scalar(philox_key key, uint64_t m0, size_t i0, size_t nb,
                                   uint32_t *restrict w0, uint32_t *restrict w1,
                                   uint32_t *restrict w2, uint32_t *restrict w3)
{
    for (size_t i = i0; i < nb; i++) {
        uint64_t m = m0 + i;
        dpzo_philox_ctr ctr = {{(uint32_t)m, (uint32_t)(m >> 32), key.step, key.query}};
        dpzo_philox_ctr w = philox_core(ctr, key.k0, key.k1);
        w0[i] = w.v[0];
        w1[i] = w.v[1];
        w2[i] = w.v[2];
        w3[i] = w.v[3];
    }
}

/* The normal pairs of words (a[i], b[i]), i < n, into (c[i], s[i]) = (z0, z1), in two
 * stages (r, then the angle); r is scratch. */
DPZO_CORE void normal_pairs(size_t n, const uint32_t *restrict a,
                            const uint32_t *restrict b, double *restrict r,
                            double *restrict c, double *restrict s)
{
    for (size_t i = 0; i < n; i++) {
        double u1 = (u32_to_double(a[i]) + 1.0) * 0x1p-32;
        r[i] = sqrt(-2.0 * log_core(bits_of(u1), 0));
    }
    for (size_t i = 0; i < n; i++) {
        double sn, cs;
        sincos_core(b[i], &sn, &cs);
        c[i] = r[i] * cs;
        s[i] = r[i] * sn;
    }
}

/* The raw values of the chunk's elements from its words. */
DPZO_CORE void raw_from_words(dpzo_dir_kind kind, size_t nb, const uint32_t *restrict w0,
                              const uint32_t *restrict w1, const uint32_t *restrict w2,
                              const uint32_t *restrict w3, double *restrict v)
{
    if (kind == DPZO_DIR_RADEMACHER) {
        for (size_t i = 0; i < nb; i++) {
            v[4 * i] = dpzo__sign_of(w0[i]);
            v[4 * i + 1] = dpzo__sign_of(w1[i]);
            v[4 * i + 2] = dpzo__sign_of(w2[i]);
            v[4 * i + 3] = dpzo__sign_of(w3[i]);
        }
        return;
    }
    double r[DPZO_RAW_CHUNK], c0[DPZO_RAW_CHUNK], s0[DPZO_RAW_CHUNK], c1[DPZO_RAW_CHUNK],
        s1[DPZO_RAW_CHUNK];
    normal_pairs(nb, w0, w1, r, c0, s0);
    normal_pairs(nb, w2, w3, r, c1, s1);
    for (size_t i = 0; i < nb; i++) {
        v[4 * i] = c0[i];
        v[4 * i + 1] = s0[i];
        v[4 * i + 2] = c1[i];
        v[4 * i + 3] = s1[i];
    }
}

DPZO_CORE philox_key key_of(const dpzo_dir *dir)
{
    philox_key key = {(uint32_t)dir->seed, (uint32_t)(dir->seed >> 32), (uint32_t)dir->step,
                      dir->query};
    return key;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DPZO_X86_SIMD 1

/* Vector Philox on 64-bit lanes, one block per lane: PMULUDQ multiplies the low 32-bit
 * halves of the lanes into full 64-bit products, so (hi, lo) = (p >> 32, low half of p).
 * The high halves of x1, x3 (and hence x0, x2) carry junk from the products; no result
 * depends on it (PMULUDQ ignores it, XOR is lane-local and the words are the low halves).
 * Written once as macros over the vector width: V the vector type, P the intrinsic prefix,
 * SPLAT64 / IOTA the counter's lanes, XOR3 a three-way XOR, STORE32 stores the lanes' low
 * halves as uint32. (GCC does not turn C's 32x32->64 products into PMULUDQ by itself.) */
#define PHILOX_VEC_ROUND(V, P, XOR3, r)                                                   \
    do {                                                                                  \
        V p0_ = P##_mul_epu32(x0, mul0), p1_ = P##_mul_epu32(x2, mul1);                   \
        x0 = XOR3(P##_srli_epi64(p1_, 32), x1,                                            \
                  P##_set1_epi32((int)(key.k0 + (uint32_t)(r) * 0x9E3779B9u)));          \
        x1 = p1_;                                                                         \
        x2 = XOR3(P##_srli_epi64(p0_, 32), x3,                                            \
                  P##_set1_epi32((int)(key.k1 + (uint32_t)(r) * 0xBB67AE85u)));          \
        x3 = p0_;                                                                         \
    } while (0)

#define RAW_BLOCKS_FN(NAME, TARGET, V, P, LANES, SPLAT64, IOTA, XOR3, STORE32)            \
    TARGET static void NAME(const dpzo_dir *dir, uint64_t m0, size_t nb,                  \
                            double *restrict v)                                           \
    {                                                                                     \
        uint32_t w0[DPZO_RAW_CHUNK], w1[DPZO_RAW_CHUNK], w2[DPZO_RAW_CHUNK],              \
            w3[DPZO_RAW_CHUNK];                                                           \
        const philox_key key = key_of(dir);                                               \
        const V mul0 = P##_set1_epi32((int)0xD2511F53u);                                  \
        const V mul1 = P##_set1_epi32((int)0xCD9E8D57u);                                  \
        size_t i = 0;                                                                     \
        for (; i + (LANES) <= nb; i += (LANES)) {                                         \
            V x0 = P##_add_epi64(SPLAT64((long long)(m0 + i)), IOTA);                     \
            V x1 = P##_srli_epi64(x0, 32);                                                \
            V x2 = P##_set1_epi32((int)key.step), x3 = P##_set1_epi32((int)key.query);    \
            PHILOX_VEC_ROUND(V, P, XOR3, 0);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 1);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 2);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 3);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 4);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 5);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 6);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 7);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 8);                                              \
            PHILOX_VEC_ROUND(V, P, XOR3, 9);                                              \
            STORE32(w0 + i, x0);                                                          \
            STORE32(w1 + i, x1);                                                          \
            STORE32(w2 + i, x2);                                                          \
            STORE32(w3 + i, x3);                                                          \
        }                                                                                 \
        philox_words_scalar(key, m0, i, nb, w0, w1, w2, w3);                              \
        raw_from_words(dir->kind, nb, w0, w1, w2, w3, v);                                 \
    }

#define XOR3_512(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)
#define STORE32_512(p, x)                                                                 \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtepi64_epi32(x))
#define XOR3_256(a, b, c) _mm256_xor_si256(_mm256_xor_si256((a), (b)), (c))
#define STORE32_256(p, x)                                                                 \
    _mm_storeu_si128((__m128i *)(void *)(p),                                              \
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(                  \
                         (x), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))))
#define XOR3_128(a, b, c) _mm_xor_si128(_mm_xor_si128((a), (b)), (c))
#define STORE32_128(p, x)                                                                 \
    _mm_storel_epi64((__m128i *)(void *)(p),                                              \
                     _mm_shuffle_epi32((x), _MM_SHUFFLE(3, 1, 2, 0)))

RAW_BLOCKS_FN(raw_blocks_avx512, __attribute__((target("avx512f"))), __m512i, _mm512, 8,
              _mm512_set1_epi64, _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), XOR3_512,
              STORE32_512)
RAW_BLOCKS_FN(raw_blocks_avx2, __attribute__((target("avx2"))), __m256i, _mm256, 4,
              _mm256_set1_epi64x, _mm256_setr_epi64x(0, 1, 2, 3), XOR3_256, STORE32_256)
RAW_BLOCKS_FN(raw_blocks_sse2, , __m128i, _mm, 2, _mm_set1_epi64x, _mm_set_epi64x(1, 0),
              XOR3_128, STORE32_128)
#endif

static void raw_blocks_portable(const dpzo_dir *dir, uint64_t m0, size_t nb,
                                double *restrict v)
{
    uint32_t w0[DPZO_RAW_CHUNK], w1[DPZO_RAW_CHUNK], w2[DPZO_RAW_CHUNK], w3[DPZO_RAW_CHUNK];
    philox_words_scalar(key_of(dir), m0, 0, nb, w0, w1, w2, w3);
    raw_from_words(dir->kind, nb, w0, w1, w2, w3, v);
}

/* Which implementation dpzo__dir_raw_blocks runs: -1 the best the CPU supports, else a
 * DPZO_RAW_* value (set by dpzo__dir_raw_impl, for tests and benchmarks). */
static _Atomic int raw_impl_forced = -1;

int dpzo__dir_raw_impl(int impl)
{
    if (impl < -1 || impl > DPZO_RAW_AVX512)
        return -1;
#ifdef DPZO_X86_SIMD
    if ((impl == DPZO_RAW_AVX512 && !__builtin_cpu_supports("avx512f")) ||
        (impl == DPZO_RAW_AVX2 && !__builtin_cpu_supports("avx2")))
        return -1;
#else
    if (impl > DPZO_RAW_PORTABLE)
        return -1;
#endif
    atomic_store_explicit(&raw_impl_forced, impl, memory_order_relaxed);
    return 0;
}

void dpzo__dir_raw_blocks(const dpzo_dir *dir, uint64_t m0, size_t nb, double *v)
{
    if (nb > DPZO_RAW_CHUNK)
        nb = DPZO_RAW_CHUNK;
    int impl = atomic_load_explicit(&raw_impl_forced, memory_order_relaxed);
#ifdef DPZO_X86_SIMD
    if (impl < 0)
        impl = __builtin_cpu_supports("avx512f") ? DPZO_RAW_AVX512
               : __builtin_cpu_supports("avx2")  ? DPZO_RAW_AVX2
                                                 : DPZO_RAW_SSE2;
    switch (impl) {
    case DPZO_RAW_AVX512:
        raw_blocks_avx512(dir, m0, nb, v);
        return;
    case DPZO_RAW_AVX2:
        raw_blocks_avx2(dir, m0, nb, v);
        return;
    case DPZO_RAW_SSE2:
        raw_blocks_sse2(dir, m0, nb, v);
        return;
    default:
        break;
    }
#endif
    raw_blocks_portable(dir, m0, nb, v);
}
