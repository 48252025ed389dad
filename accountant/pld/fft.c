/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/fft.c: power-of-two complex FFT (see fft.h for the method and the error
 * analysis).
 *
 * Layout. Data are n interleaved (re, im) doubles. A radix-4 decimation-in-frequency
 * step on a block of N points reads x[j], x[j + N/4], x[j + N/2], x[j + 3N/4] and
 * writes back, for residues r = 0, 2, 1, 3 of the output frequency mod 4 (in that
 * order of quarter), the sums times w_N^(rj). Applied recursively this leaves the
 * spectrum in bit-reversed order, which the final pass undoes. Blocks larger than
 * 2^DIF_BLOCK_LOG points are split depth first (each quarter is finished before the next is
 * started, so sub-blocks stay in cache); smaller blocks are done stage by stage.
 *
 * Arithmetic. Every complex value lives in one 16-byte GCC vector (re, im); on x86 CPUs
 * with AVX (checked at run time, no special compiler flags) the radix-4 steps use
 * 32-byte vectors holding two consecutive butterflies, with the same operations in the
 * same order, so both paths give bit-identical results. The only operations are complex
 * additions and subtractions, exact multiplications by +-i (swap and sign change) and
 * the standard complex product (a c - b d, a d + b c) with each product rounded
 * separately (ISO C mode compiles with -ffp-contract=off and no FMA is enabled), which
 * is what the error analysis in fft.h assumes. (Were a compiler to contract it into an
 * FMA anyway, the complex product's error would be at most 2u [Jeannerod, Kornerup,
 * Louvet and Muller, Math. Comp. 2017], below the sqrt(2) gamma2 used, so the bound
 * would still hold.)
 *
 * Memory. The plan holds n complex twiddles at most (16 n bytes: 3N/4 per radix-4
 * stage of size N); creating it also needs about 2 n bytes for a while. */
#include "fft.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef double v2d __attribute__((vector_size(16)));
typedef long long v2i __attribute__((vector_size(16)));

#if defined(__clang__)
#define SWAP(a) __builtin_shufflevector((a), (a), 1, 0)
#define DUPLO(a) __builtin_shufflevector((a), (a), 0, 0)
#define DUPHI(a) __builtin_shufflevector((a), (a), 1, 1)
#else
#define SWAP(a) __builtin_shuffle((a), (v2i){1, 0})
#define DUPLO(a) __builtin_shuffle((a), (v2i){0, 0})
#define DUPHI(a) __builtin_shuffle((a), (v2i){1, 1})
#endif

#define INLINE static inline __attribute__((always_inline))

/* Blocks of at most 2^DIF_BLOCK_LOG points (16 KiB) are transformed stage by stage. */
#define DIF_BLOCK_LOG 10
/* Bit reversal works on tiles of 2^BR_LOG x 2^BR_LOG points, 2^BR_GROUP tiles at a
 * time at each end of the middle bits (see bitrev). */
#define BR_LOG 4
#define BR_GROUP 3
#define BR_TILE (1u << BR_LOG)

/* Twiddle error bound mu in units of u = 2^-53 (see fft.h). */
#if LDBL_MANT_DIG >= 64
#define TWIDDLE_MU_ULPS 2.0
#else
#define TWIDDLE_MU_ULPS 4.0
#endif

struct dpzo__fft_plan {
    size_t n;
    unsigned log2n;
    int avx; /* use the 256-bit kernels (CPU support checked at plan creation) */
    /* stage[s]: twiddles of the radix-4 step on blocks of 2^s points (s >= 3), laid
     * out by TW_AT; w = exp(-2 pi i / 2^s), j < 2^s / 4. NULL where unused. */
    const double *stage[64];
    double *tw; /* the storage all stage[] point into */
};

/* Offset (in doubles) of w^(r j), r = 1, 2, 3, in a stage table: pairs j = 2t, 2t + 1
 * share a 12-double group (w^j, w^(j+1), w^2j, w^(2j+2), w^3j, w^(3j+3)), so a 256-bit
 * kernel loads the twiddles of two consecutive j with one load. */
#define TW_AT(j, r) (12 * ((j) >> 1) + 4 * ((r) - 1) + 2 * ((j) & 1))

/* ---------------------------------------------------------------------------------- */
/* Size bookkeeping                                                                    */

/* n a power of two >= 2, small enough that the byte counts below cannot overflow. */
static int log2_exact(size_t n, unsigned *log2n)
{
    if (n < 2 || (n & (n - 1)) != 0)
        return 0;
    unsigned l = 0;
    while (((size_t)1 << l) != n)
        l++;
    if (l + 6 > sizeof(size_t) * CHAR_BIT)
        return 0;
    *log2n = l;
    return 1;
}

/* Doubles in all twiddle tables: radix-4 steps on blocks of 2^s points, s = L, L-2,
 * ... while s >= 3, each with 2^s / 4 triples of complex numbers. */
static size_t twiddle_doubles(unsigned l)
{
    size_t total = 0;
    for (int s = (int)l; s >= 3; s -= 2)
        total += 6 * ((size_t)1 << (s - 2));
    return total;
}

#if LDBL_MANT_DIG >= 64
/* The octant k = 0 .. n/8 is evaluated as A[k / nb] * B[k % nb]. */
static void octant_split(unsigned l, size_t *na, size_t *nb)
{
    unsigned lm = l - 3; /* n/8 = 2^lm */
    size_t b = (size_t)1 << ((lm + 1) / 2);
    *nb = b;
    *na = ((size_t)1 << lm) / b + 1;
}
#endif

/* Temporary memory of plan creation: the octant w_n^k, k = 0 .. n/8, as doubles, plus
 * (with long double) the two factor tables A and B. */
static size_t temp_bytes(unsigned l)
{
    if (l < 3)
        return 0;
    size_t bytes = (((size_t)1 << (l - 3)) + 1) * 2 * sizeof(double);
#if LDBL_MANT_DIG >= 64
    size_t na, nb;
    octant_split(l, &na, &nb);
    bytes += (na + nb) * 2 * sizeof(long double);
#endif
    return bytes;
}

size_t dpzo__fft_plan_bytes(size_t n)
{
    unsigned l;
    if (!log2_exact(n, &l))
        return 0;
    return sizeof(struct dpzo__fft_plan) + twiddle_doubles(l) * sizeof(double) + temp_bytes(l);
}

/* ---------------------------------------------------------------------------------- */
/* Twiddle factors                                                                     */

/* oct[2k], oct[2k + 1] = cos t, -sin t (that is, w_n^k), t = (pi/4) k / m, for
 * k = 0 .. m = n/8 = 2^(l-3). */
static int octant(unsigned l, double *oct)
{
    size_t m = (size_t)1 << (l - 3);
#if LDBL_MANT_DIG >= 64
    /* pi/4 to 36 digits; as a long double its relative error is <= 2^-64. */
    static const long double pi4 = 0.785398163397448309615660845819875721L;
    size_t na, nb;
    octant_split(l, &na, &nb);
    long double *a = malloc((na + nb) * 2 * sizeof *a);
    if (a == NULL)
        return 0;
    long double *b = a + 2 * na;
    /* k / m is exact (m is a power of two), so each angle is rounded once. */
    for (size_t i = 0; i < na; i++) {
        long double t = pi4 * ((long double)(i * nb) / (long double)m);
        a[2 * i] = cosl(t);
        a[2 * i + 1] = sinl(t);
    }
    for (size_t i = 0; i < nb; i++) {
        long double t = pi4 * ((long double)i / (long double)m);
        b[2 * i] = cosl(t);
        b[2 * i + 1] = sinl(t);
    }
    /* k = i nb + j: cos(x + y) = cx cy - sx sy, sin(x + y) = sx cy + cx sy, in long
     * double, then rounded once to double. */
    for (size_t i = 0, k = 0; i < na; i++) {
        long double ca = a[2 * i], sa = a[2 * i + 1];
        for (size_t j = 0; j < nb && k <= m; j++, k++) {
            long double c = ca * b[2 * j] - sa * b[2 * j + 1];
            long double s = sa * b[2 * j] + ca * b[2 * j + 1];
            oct[2 * k] = (double)c;
            oct[2 * k + 1] = -(double)s;
        }
    }
    free(a);
#else
    for (size_t k = 0; k <= m; k++) {
        double t = (M_PI / 4) * ((double)k / (double)m);
        oct[2 * k] = cos(t);
        oct[2 * k + 1] = -sin(t);
    }
#endif
    return 1;
}

/* out = w_n^k, 0 <= k < n (n = 2^l), from the octant by exact symmetries: with
 * k = q n/4 + r, w_n^k = (-i)^q w_n^r, and for n/8 < r < n/4, w_n^r = -i conj(w_n^(n/4 - r))
 * (cos and sin swap). Only swaps and sign changes. */
INLINE void twiddle_at(const double *oct, unsigned l, size_t k, double *out)
{
    size_t eighth = (size_t)1 << (l - 3), r = k & (2 * eighth - 1);
    double c, s;
    if (r <= eighth) {
        c = oct[2 * r];
        s = oct[2 * r + 1];
    } else {
        c = -oct[2 * (2 * eighth - r) + 1];
        s = -oct[2 * (2 * eighth - r)];
    }
    switch (k >> (l - 2)) {
    case 0: out[0] = c;  out[1] = s;  break;
    case 1: out[0] = s;  out[1] = -c; break; /* (c + i s)(-i) = s - i c */
    case 2: out[0] = -c; out[1] = -s; break;
    default: out[0] = -s; out[1] = c; break;
    }
}

static int fill_twiddles(dpzo__fft_plan *p)
{
    unsigned l = p->log2n;
    size_t n = p->n;
    double *t = p->tw;
    for (int s = (int)l; s >= 3; s -= 2) {
        p->stage[s] = t;
        t += 6 * ((size_t)1 << (s - 2));
    }
    if (l < 3)
        return 1;
    double *oct = malloc(((n / 8) + 1) * 2 * sizeof *oct);
    if (oct == NULL)
        return 0;
    if (!octant(l, oct)) {
        free(oct);
        return 0;
    }
    t = p->tw;
    for (int s = (int)l; s >= 3; s -= 2) {
        /* w_N^(r j) = w_n^(r j n/N), N = 2^s */
        size_t q = (size_t)1 << (s - 2), mult = n >> s;
        for (size_t j = 0; j < q; j++) {
            twiddle_at(oct, l, j * mult, t + TW_AT(j, 1));
            twiddle_at(oct, l, 2 * j * mult, t + TW_AT(j, 2));
            twiddle_at(oct, l, 3 * j * mult, t + TW_AT(j, 3));
        }
        t += 6 * q;
    }
    free(oct);
    return 1;
}

static int cpu_has_avx(void);

dpzo__fft_plan *dpzo__fft_plan_create(size_t n)
{
    unsigned l;
    if (!log2_exact(n, &l))
        return NULL;
    dpzo__fft_plan *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->n = n;
    p->log2n = l;
    p->avx = cpu_has_avx();
    size_t nd = twiddle_doubles(l);
    if (nd > 0) {
        p->tw = malloc(nd * sizeof(double));
        if (p->tw == NULL || !fill_twiddles(p)) {
            dpzo__fft_plan_free(p);
            return NULL;
        }
    }
    return p;
}

void dpzo__fft_plan_free(dpzo__fft_plan *plan)
{
    if (plan == NULL)
        return;
    free(plan->tw);
    free(plan);
}

/* ---------------------------------------------------------------------------------- */
/* Butterflies, 128-bit (one complex number per vector; any target)                    */

INLINE v2d ld(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

INLINE void st(double *p, v2d v) { memcpy(p, &v, sizeof v); }

/* bs = (1, -1): SWAP(z) * bs = -i z; bs = (-1, 1) gives +i z. The forward transform
 * uses bs = (1, -1) in its butterflies and the twiddles w; the inverse uses (-1, 1) and
 * conj(w). z w = z re(w) + (i z) im(w) and z conj(w) = z re(w) + (-i z) im(w), so the
 * twiddle product takes ts = -bs. Its real part is fl(fl(x c) + fl(-y s)): the
 * standard complex product. */
INLINE v2d cmul(v2d z, v2d w, v2d ts) { return z * DUPLO(w) + SWAP(z) * (DUPHI(w) * ts); }

/* One radix-4 butterfly at offset k (complex) of a block with quarter q. */
INLINE void bfly(double *x, size_t q, size_t k, const double *w1, const double *w2,
                 const double *w3, v2d bs, v2d ts)
{
    double *x0 = x + 2 * k, *x1 = x0 + 2 * q, *x2 = x0 + 4 * q, *x3 = x0 + 6 * q;
    v2d a0 = ld(x0), a1 = ld(x1), a2 = ld(x2), a3 = ld(x3);
    v2d t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = SWAP(a1 - a3) * bs;
    st(x0, t0 + t2);
    st(x1, cmul(t0 - t2, ld(w2), ts));
    st(x2, cmul(t1 + t3, ld(w1), ts));
    st(x3, cmul(t1 - t3, ld(w3), ts));
}

/* Radix-4 DIF steps on each block of m points (m >= 8) in x[0 .. count). */
INLINE void radix4_sse(double *x, size_t count, size_t m, const double *tw, v2d bs)
{
    const v2d ts = -bs;
    size_t q = m / 4;
    for (size_t b = 0; b < count; b += m) {
        double *xb = x + 2 * b;
        const double *w = tw;
        for (size_t k = 0; k < q; k += 2, w += 12) {
            bfly(xb, q, k, w, w + 4, w + 8, bs, ts);
            bfly(xb, q, k + 1, w + 2, w + 6, w + 10, bs, ts);
        }
    }
}

static void radix4_sse_fwd(double *x, size_t count, size_t m, const double *tw)
{
    radix4_sse(x, count, m, tw, (v2d){1.0, -1.0});
}

static void radix4_sse_inv(double *x, size_t count, size_t m, const double *tw)
{
    radix4_sse(x, count, m, tw, (v2d){-1.0, 1.0});
}

/* Twiddle-free radix-4 on each group of 4 in x[0 .. count). */
INLINE void radix4_last(double *x, size_t count, v2d bs)
{
    for (size_t i = 0; i < 2 * count; i += 8) {
        v2d a0 = ld(x + i), a1 = ld(x + i + 2), a2 = ld(x + i + 4), a3 = ld(x + i + 6);
        v2d t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = SWAP(a1 - a3) * bs;
        st(x + i, t0 + t2);
        st(x + i + 2, t0 - t2);
        st(x + i + 4, t1 + t3);
        st(x + i + 6, t1 - t3);
    }
}

/* Radix-2 on each pair in x[0 .. count). */
static void radix2_last(double *x, size_t count)
{
    for (size_t i = 0; i < 2 * count; i += 4) {
        v2d a0 = ld(x + i), a1 = ld(x + i + 2);
        st(x + i, a0 + a1);
        st(x + i + 2, a0 - a1);
    }
}

/* ---------------------------------------------------------------------------------- */
/* Butterflies, 256-bit (two complex numbers per vector; x86 with AVX, checked at run  */
/* time). The same operations in the same order as above, so the results are          */
/* bit-for-bit those of the 128-bit kernels.                                          */

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(DPZO_FFT_NO_AVX)
#define HAVE_AVX_KERNELS 1
#define AVX __attribute__((target("avx")))
#define AVX_INLINE static inline __attribute__((always_inline, target("avx")))

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));

#if defined(__clang__)
#define SWAP4(a) __builtin_shufflevector((a), (a), 1, 0, 3, 2)
#define DUPLO4(a) __builtin_shufflevector((a), (a), 0, 0, 2, 2)
#define DUPHI4(a) __builtin_shufflevector((a), (a), 1, 1, 3, 3)
#else
#define SWAP4(a) __builtin_shuffle((a), (v4i){1, 0, 3, 2})
#define DUPLO4(a) __builtin_shuffle((a), (v4i){0, 0, 2, 2})
#define DUPHI4(a) __builtin_shuffle((a), (v4i){1, 1, 3, 3})
#endif

AVX_INLINE v4d ld4(const double *p)
{
    v4d v;
    memcpy(&v, p, sizeof v);
    return v;
}

AVX_INLINE void st4(double *p, v4d v) { memcpy(p, &v, sizeof v); }

AVX_INLINE v4d cmul4(v4d z, v4d w, v4d ts)
{
    return z * DUPLO4(w) + SWAP4(z) * (DUPHI4(w) * ts);
}

AVX_INLINE void radix4_avx(double *x, size_t count, size_t m, const double *tw, v4d bs)
{
    const v4d ts = -bs;
    size_t q = m / 4;
    for (size_t b = 0; b < count; b += m) {
        double *x0 = x + 2 * b, *x1 = x0 + 2 * q, *x2 = x0 + 4 * q, *x3 = x0 + 6 * q;
        const double *w = tw;
        for (size_t i = 0; i < 2 * q; i += 4, w += 12) {
            v4d a0 = ld4(x0 + i), a1 = ld4(x1 + i), a2 = ld4(x2 + i), a3 = ld4(x3 + i);
            v4d t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = SWAP4(a1 - a3) * bs;
            st4(x0 + i, t0 + t2);
            st4(x1 + i, cmul4(t0 - t2, ld4(w + 4), ts));
            st4(x2 + i, cmul4(t1 + t3, ld4(w), ts));
            st4(x3 + i, cmul4(t1 - t3, ld4(w + 8), ts));
        }
    }
}

AVX static void radix4_avx_fwd(double *x, size_t count, size_t m, const double *tw)
{
    radix4_avx(x, count, m, tw, (v4d){1.0, -1.0, 1.0, -1.0});
}

AVX static void radix4_avx_inv(double *x, size_t count, size_t m, const double *tw)
{
    radix4_avx(x, count, m, tw, (v4d){-1.0, 1.0, -1.0, 1.0});
}

static int cpu_has_avx(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") ? 1 : 0;
}
#else
static int cpu_has_avx(void) { return 0; }
#endif

/* ---------------------------------------------------------------------------------- */
/* Decimation in frequency                                                             */

typedef void (*radix4_fn)(double *x, size_t count, size_t m, const double *tw);

static void dif(const dpzo__fft_plan *p, radix4_fn radix4, double *x, unsigned s, int inv)
{
    size_t count = (size_t)1 << s;
    if (s > DIF_BLOCK_LOG) {
        radix4(x, count, count, p->stage[s]);
        for (size_t k = 0; k < 4; k++)
            dif(p, radix4, x + 2 * (count / 4) * k, s - 2, inv);
        return;
    }
    for (; s >= 3; s -= 2)
        radix4(x, count, (size_t)1 << s, p->stage[s]);
    if (s == 1)
        radix2_last(x, count);
    else if (inv)
        radix4_last(x, count, (v2d){-1.0, 1.0});
    else
        radix4_last(x, count, (v2d){1.0, -1.0});
}

static void dif_top(const dpzo__fft_plan *p, double *x, int inv)
{
    radix4_fn f = inv ? radix4_sse_inv : radix4_sse_fwd;
#ifdef HAVE_AVX_KERNELS
    if (p->avx)
        f = inv ? radix4_avx_inv : radix4_avx_fwd;
#endif
    dif(p, f, x, p->log2n, inv);
}

/* ---------------------------------------------------------------------------------- */
/* Bit reversal (in place), times scale (1 or 1/n, exact)                              */

static size_t rev_bits(size_t v, unsigned bits)
{
    size_t r = 0;
    for (unsigned i = 0; i < bits; i++, v >>= 1)
        r = (r << 1) | (v & 1);
    return r;
}

static void bitrev_naive(double *x, unsigned l, double scale)
{
    size_t n = (size_t)1 << l;
    for (size_t i = 0; i < n; i++) {
        size_t j = rev_bits(i, l);
        if (i < j) {
            v2d a = ld(x + 2 * i), b = ld(x + 2 * j);
            st(x + 2 * i, b);
            st(x + 2 * j, a);
        }
    }
    if (scale != 1.0)
        for (size_t i = 0; i < 2 * n; i++)
            x[i] *= scale;
}

/* Index (a, b, c) = a 2^(l - B) + b 2^B + c with a, c < 2^B goes to (rev c, rev b, rev a).
 * Tile b (all a, c) is copied out transposed and reversed, then written as tile rev b. */
INLINE void tile_load(const double *x, unsigned l, size_t b, double *buf,
                      const unsigned char *rv)
{
    for (size_t a = 0; a < BR_TILE; a++) {
        const double *row = x + 2 * ((a << (l - BR_LOG)) | (b << BR_LOG));
        for (size_t c = 0; c < BR_TILE; c++)
            st(buf + 2 * (rv[c] * BR_TILE + rv[a]), ld(row + 2 * c));
    }
}

INLINE void tile_store(double *x, unsigned l, size_t b, const double *buf, v2d scale)
{
    for (size_t a = 0; a < BR_TILE; a++) {
        double *row = x + 2 * ((a << (l - BR_LOG)) | (b << BR_LOG));
        for (size_t c = 0; c < BR_TILE; c++)
            st(row + 2 * c, ld(buf + 2 * (a * BR_TILE + c)) * scale);
    }
}

/* Tiles are visited in groups: with the middle bits split as b = (hi, mid, lo), hi and
 * lo of g bits each, one group is all (hi, lo) for one mid, whose images rev b lie in
 * the group of rev mid. Both groups' rows then share few pages (a row of a tile is
 * 2^BR_LOG points; 2^g tiles with consecutive b or rev b are adjacent), which keeps the
 * TLB and the prefetchers effective on large arrays. */
static void bitrev(double *x, unsigned l, double scale)
{
    if (l < 2 * BR_LOG) {
        bitrev_naive(x, l, scale);
        return;
    }
    unsigned char rv[BR_TILE];
    for (unsigned i = 0; i < BR_TILE; i++)
        rv[i] = (unsigned char)rev_bits(i, BR_LOG);
    double buf1[2 * BR_TILE * BR_TILE], buf2[2 * BR_TILE * BR_TILE];
    const v2d sc = {scale, scale};
    unsigned mid = l - 2 * BR_LOG;
    unsigned g = mid / 2 < BR_GROUP ? mid / 2 : BR_GROUP, inner = mid - 2 * g;
    for (size_t m = 0; m < ((size_t)1 << inner); m++) {
        size_t mr = rev_bits(m, inner);
        if (mr < m)
            continue;
        for (size_t hi = 0; hi < ((size_t)1 << g); hi++) {
            for (size_t lo = 0; lo < ((size_t)1 << g); lo++) {
                size_t b = (hi << (inner + g)) | (m << g) | lo;
                size_t br = rev_bits(b, mid);
                if (mr == m && br < b)
                    continue; /* swapped when b was br */
                tile_load(x, l, b, buf1, rv);
                if (br != b) {
                    tile_load(x, l, br, buf2, rv);
                    tile_store(x, l, b, buf2, sc);
                }
                tile_store(x, l, br, buf1, sc);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------- */
/* Public transforms                                                                   */

void dpzo__fft_forward(const dpzo__fft_plan *plan, double complex *data)
{
    double *x = (double *)data;
    dif_top(plan, x, 0);
    bitrev(x, plan->log2n, 1.0);
}

void dpzo__fft_inverse(const dpzo__fft_plan *plan, double complex *data)
{
    double *x = (double *)data;
    dif_top(plan, x, 1);
    bitrev(x, plan->log2n, 1.0 / (double)plan->n);
}

double dpzo__fft_error_bound(size_t n)
{
    unsigned l;
    if (!log2_exact(n, &l))
        return INFINITY;
    const double u = 0x1p-53;
    double mu = TWIDDLE_MU_ULPS * u;
    double gamma4 = 4 * u / (1 - 4 * u);
    double eta0 = mu + gamma4 * (M_SQRT2 + mu);
    double le = (double)l * eta0;
    /* Safety factor 2; the final factor covers the rounding of this evaluation (a few
     * operations, each relative error <= u). */
    return 2.0 * le / (1.0 - le) * (1.0 + 0x1p-40);
}
