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
#include <stdint.h>
#include <string.h>
#include "dpzo/zo_dir.h"
#include "zo_math.h"

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

dpzo_philox_ctr dpzo_philox4x32_10(dpzo_philox_ctr ctr, uint32_t k0, uint32_t k1)
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

double dpzo__log(double x)
{
    if (!(x > 0.0)) /* 0, negative, NaN */
        return x == 0.0 ? -INFINITY : NAN;
    if (x == INFINITY)
        return x;
    int k = 0;
    if (x < 0x1p-1022) { /* subnormal: exact scaling into the normal range */
        x *= 0x1p54;
        k = -54;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* m = the significand in [1, 2); when m > SQRT2, m * 0.5 and k + 1 (written without
     * a branch: the exponent field 1022 instead of 1023 is exactly m * 0.5) */
    uint64_t mant = bits & 0x000fffffffffffffull;
    int big = mant > (SQRT2_BITS & 0x000fffffffffffffull);
    k += (int)(bits >> 52) - 1023 + big;
    bits = mant | ((uint64_t)(1023 - big) << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double hfsq = 0.5 * f * f;
    double R =
        z * (L1 +
             z * (L2 + z * (L3 + z * (L4 + z * (L5 + z * (L6 + z * (L7 + z * (L8 + z * (L9 + z * L10)))))))));
    double dk = (double)k;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
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

double dpzo__sin_kernel(double x)
{
    double z = x * x;
    double p = S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * (S6 + z * (S7 + z * S8))))));
    return x + (x * z) * p;
}

double dpzo__cos_kernel(double x)
{
    double z = x * x;
    double q = C2 + z * (C3 + z * (C4 + z * (C5 + z * (C6 + z * (C7 + z * C8)))));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + (z * z) * q);
}

/* ---- sin, cos of 2 pi b / 2^32 ---------------------------------------------------- */

static const double PH = 0x1.921fb4p-30;
static const double PL = 0x1.4442d18469899p-54;

void dpzo__sincos_turn32(uint32_t b, double *s, double *c)
{
    uint32_t q = (b + 0x20000000u) >> 30;
    uint32_t rr = b - (q << 30);
    int64_t r = (int64_t)rr - (int64_t)((uint64_t)(rr >> 31) << 32);
    double dr = (double)r;
    double t = dr * PH + dr * PL;
    double st = dpzo__sin_kernel(t), ct = dpzo__cos_kernel(t);
    /* (st, ct), (ct, -st), (-st, -ct), (-ct, st) for q = 0..3, without branches (q is
     * random, so a branch would mispredict): swap when q is odd, then negate (flip the
     * sign bit, which is exactly IEEE negation) sin when q >= 2 and cos when q is 1 or 2 */
    uint64_t sb, cb;
    memcpy(&sb, &st, sizeof sb);
    memcpy(&cb, &ct, sizeof cb);
    uint64_t swap = (uint64_t)0 - (uint64_t)(q & 1), diff = (sb ^ cb) & swap;
    sb ^= diff;
    cb ^= diff;
    sb ^= (uint64_t)(q >> 1) << 63;
    cb ^= (uint64_t)((q ^ (q >> 1)) & 1) << 63;
    memcpy(s, &sb, sizeof sb);
    memcpy(c, &cb, sizeof cb);
}

/* ---- the normal pair ------------------------------------------------------------- */

void dpzo_normal_pair(uint32_t a, uint32_t b, double *z0, double *z1)
{
    double u1 = ((double)a + 1.0) * 0x1p-32;
    double r = sqrt(-2.0 * dpzo__log(u1));
    double s, c;
    dpzo__sincos_turn32(b, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}
