/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld_compose.c: composition of discretised privacy loss distributions by
 * FFT, with every error term bounded, and delta / epsilon queries.
 *
 * Exponential tilting. Double-precision FFT convolution has an absolute error of about
 * 1e-16 of the total mass, so an untilted composition cannot resolve delta = 1e-20.
 * Multiplying a step's masses by e^{lambda l} (and renormalising: a~(l) =
 * a(l) e^{lambda l - c}, c = log sum a e^{lambda l}) commutes with convolution: the
 * composed masses are exp(sum_t k_t c_t - lambda l) * (composition of the a~). With
 * lambda = alpha* - 1 from the RDP accountant's optimal order the tilted composition is
 * centred on the epsilon being sought, so the masses that decide delta are the large
 * ones, and the FFT's error is small relative to them at any delta.
 *
 * Window and aliasing. The FFT computes the composition folded modulo N onto a window
 * [w0, w0 + N). The tilted masses outside the window are bounded by Chernoff's bound
 * with the exact cumulant generating function of the discretised steps (evaluated at a
 * ladder of orders); N is the smallest power of two whose window leaves at most tau_tilt
 * outside on each side. Folding only adds mass, so the pessimistic side needs no alias
 * term; the optimistic side subtracts its worst case.
 *
 * Rounding. Forward transforms: componentwise, |fl(X_j) - X_j| <= eta(N) sum_m |x_m|
 * (every input reaches an output through log2 N butterflies, each a rounded twiddle
 * product and addition; eta is fft.h's bound, Higham Thm 24.2, which has the same form).
 * Pessimistic and optimistic masses share one transform (x = pess + i opt), separated by
 * X_P = (X_j + conj X_{N-j})/2, X_O = (X_j - conj X_{N-j})/(2i). Powers z^k are taken
 * in polar form; the relative error is at most u (4 + k (2 + 2 |log|z|| + 3 |arg z|))
 * (glibc's hypot, log, atan2, exp and sincos are within 1 ulp). Products of spectra
 * propagate |A'B' - AB| <= |A| eB + |B| eA + eA eB + 2u |A'B'|. The inverse transform
 * adds eta(N) (1/N) sum_j |C_j| per entry, and the spectrum's error adds
 * (1/N) sum_j |C'_j - C_j| (the inverse DFT's entries are bounded by the l1 norm / N);
 * both sums, of at most 2N nonnegative terms, are computed within (2N + 2) u, and the
 * l1 norm of a step's input within (2n + 2) u: the bounds are raised by that much.
 * Inputs: each tilted mass is computed with relative error theta (an exponential every
 * TILT_BLOCK entries, powers of e^{lambda d} in between: tilt_block, whose bound is
 * tilt_err), so with nonnegative masses the composition is within (1 +- theta)^K of the
 * exact one; this is `rel`.
 *
 * Many distinct steps: where a tree of shorter transforms plans under half the work of
 * one full-length transform per step, pld_tree.c composes instead (its file comment
 * extends these bounds to the tree: `misplaced`, and the propagation of each node's
 * rounding). */
#include <complex.h>
#include <stdio.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include "fft.h"
#include "pld_tree.h"

#define U (0.5 * DBL_EPSILON)
#define N_THETA DPZO__PLD_N_THETA

_Atomic unsigned long long dpzo__pld_fft_points;

typedef dpzo__pld_term_stats term_stats; /* pld_tree.h */

/* The ladder of orders at which the Chernoff bounds are evaluated: 2^-20 .. 2^3, or, for a
 * composition whose spread in grid points (the square root of the sum of the steps' tilted
 * variances, times the count) is so large that its best order lies below 2^-16, the ladder
 * moved down to keep that order within it (make_layout). */
#define M0_DEFAULT 20
static double theta_at(const term_stats *st, int m) { return ldexp(1.0, m - st->m0); }

static const double *side_mass(const dpzo__pld_pmf *p, int s) { return s == 0 ? p->pess : p->opt; }

/* the tilt's exponent at entry k */
static double tilt_at(const dpzo__pld_pmf *p, size_t k, double d, double lambda)
{
    return lambda * ((double)(p->lo + (long)k) + p->off) * d;
}

/* Tilted weights without a log and an exp per entry. Entry k of a step's grid has the loss
 * l_k = (lo + k + off) d and, relative to a constant c, the tilted weight
 * a_k e^{lambda l_k - c}. The exponential is evaluated directly at the first entry of each
 * block of TILT_BLOCK entries and, at the block's entry j, as that value times r^j,
 * r = e^{lambda d}, the powers r^j formed once by repeated multiplication.
 * Relative error of a computed weight, to first order (tilt_err doubles the sum, which
 * covers the higher-order terms, all below 1e-10 of it): the argument lambda l - c has at
 * most three roundings of u |lambda l| each (+ off, x lambda, x d; a fourth, the index to
 * a double, only where an index exceeds 2^53) and one of the difference,
 * u (|lambda l| + |c|): 4 u |lambda l| + u |c|; exp is within an ulp, 2u relative; r: its
 * argument lambda d one rounding and exp an ulp, eps_r <= u (|lambda d| + 2); r^j,
 * j < TILT_BLOCK, j products: j (eps_r + u); the product e r^j: u; times a_k: u. In all
 * at most
 *   u (4 |lambda| lmax + |c| + (TILT_BLOCK - 1) (|lambda d| + 3) + 4)
 * with lmax the largest |l| of the grid (an entry whose exponential is taken directly has
 * the same bound without the recurrence's terms).
 * Ranges: a block uses the powers only where every exponent in it lies within [-700, 700]
 * (|lambda d| (TILT_BLOCK - 1) <= 600 and both ends of the block within +-700: no
 * intermediate overflows or is subnormal); otherwise each entry's exponential is taken
 * directly. An exponential beyond the double range (argument above 709; c is at least
 * log a_k + lambda l_k up to rounding, so only a mass below e^-709 has one) falls back to
 * exp(log a_k + lambda l_k - c), whose log and sum add at most 3 u |log a_k| (`fb`, the
 * largest such |log a_k|, enters tilt_err). An exponential below e^-700 makes a weight
 * below 1e-304 (the masses are at most 1): underflow is ignored as in fft.h (at most 2^-1074
 * absolute error an operation, beside weights that sum to about 1). */
#define TILT_BLOCK DPZO__PLD_TILT_BLOCK
typedef dpzo__pld_tilt tilt_ctx; /* pld_tree.h */

static void tilt_init(tilt_ctx *T, double lambda, double d)
{
    T->lambda = lambda;
    T->d = d;
    double r = exp(lambda * d);
    T->powers = fabs(lambda * d) * (TILT_BLOCK - 1) <= 600.0;
    T->rp[0] = 1.0;
    for (int j = 1; j < TILT_BLOCK; j++)
        T->rp[j] = T->rp[j - 1] * r;
}

/* E[j] = e^{lambda l_{k0 + j} - c}, j < m <= TILT_BLOCK (may be +inf: tilt_weight) */
static void tilt_block(const tilt_ctx *T, const dpzo__pld_pmf *p, size_t k0, size_t m, double c,
                       double *E)
{
    double x0 = tilt_at(p, k0, T->d, T->lambda) - c;
    double x1 = x0 + (double)(m - 1) * (T->lambda * T->d);
    if (T->powers && fabs(x0) <= 700.0 && fabs(x1) <= 700.0) {
        double e0 = exp(x0);
        for (size_t j = 0; j < m; j++)
            E[j] = e0 * T->rp[j];
    } else {
        for (size_t j = 0; j < m; j++)
            E[j] = exp(tilt_at(p, k0 + j, T->d, T->lambda) - c);
    }
}

/* the weight a_k E (E from tilt_block), 0 where a_k is not positive */
static inline double tilt_weight(const tilt_ctx *T, const dpzo__pld_pmf *p, const double *a,
                                 size_t k, double E, double c, double *fb)
{
    const double ak = a[k];
    if (!(ak > 0.0))
        return 0.0;
    if (E <= DBL_MAX)
        return ak * E;
    double la = log(ak); /* the fallback: e^{lambda l_k - c} overflows */
    if (fabs(la) > *fb)
        *fb = fabs(la);
    return exp(la + tilt_at(p, k, T->d, T->lambda) - c);
}

/* The bound above on the weights' relative error, for a grid whose losses are at most lmax
 * in magnitude (wide: its indices beyond 2^53), relative to c, with the fallback's largest
 * |log a_k| fb (0: none). */
static double tilt_err(double lambda, double d, double lmax, int wide, double c, double fb)
{
    return 2.0 * U
           * ((wide ? 5.0 : 4.0) * fabs(lambda) * lmax + fabs(c)
              + (TILT_BLOCK - 1) * (fabs(lambda * d) + 3.0) + 4.0 + 3.0 * fb);
}

static double grid_lmax(const dpzo__pld_pmf *p, double d)
{
    return fmax(fabs(((double)p->lo + p->off) * d),
                fabs(((double)(p->lo + (long)p->n) + p->off) * d));
}

/* some index of the grid is beyond 2^53 (its conversion to a double may round) */
static int grid_wide(const dpzo__pld_pmf *p)
{
    return !(fabs((double)p->lo) + (double)p->n < 0x1p53);
}

void dpzo__pld_tilt_init(dpzo__pld_tilt *T, double lambda, double d) { tilt_init(T, lambda, d); }

void dpzo__pld_tilt_masses(const dpzo__pld_tilt *T, const dpzo__pld_pmf *p, const double *a,
                           size_t k0, size_t m, double c, double *w, double *fb)
{
    double E[TILT_BLOCK];
    tilt_block(T, p, k0, m, c, E);
    for (size_t j = 0; j < m; j++)
        w[j] = tilt_weight(T, p, a, k0 + j, E[j], c, fb);
}

double dpzo__pld_tilt_err(const dpzo__pld_pmf *p, double lambda, double d, double c, double fb)
{
    return tilt_err(lambda, d, grid_lmax(p, d), grid_wide(p), c, fb);
}

/* Function multiversioning for the loops that the compiler vectorises (common/dpzo_clones.h:
 * every clone gives the same bits). */
#include "dpzo_clones.h"

/* The ladder's recurrences side by side (nr a multiple of LADDER_W): for each,
 * acc += w_k g, g *= step over k < n, each one's operations in the order of a loop of its
 * own (the same results as one recurrence at a time, without waiting on one multiplication
 * at a time). GCC vectors of 8 doubles (lanes are independent IEEE operations; locals
 * only, no vector crosses a call), four of them at a time where 32 recurrences remain. */
typedef double v8d __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
#define LADDER_W 8

#define LADDER_RUN(V)                                                                          \
    do {                                                                                       \
        v8d gg[V], aa[V], ss[V];                                                               \
        memcpy(gg, g + c, sizeof gg);                                                          \
        memcpy(aa, acc + c, sizeof aa);                                                        \
        memcpy(ss, step + c, sizeof ss);                                                       \
        for (size_t k = 0; k < n; k++) {                                                       \
            const double wk = w[k];                                                            \
            for (int j = 0; j < (V); j++) {                                                    \
                aa[j] += wk * gg[j];                                                           \
                gg[j] *= ss[j];                                                                \
            }                                                                                  \
        }                                                                                      \
        memcpy(g + c, gg, sizeof gg);                                                          \
        memcpy(acc + c, aa, sizeof aa);                                                        \
        c += (V) * 8;                                                                          \
    } while (0)

DPZO_KERNEL_CLONES static void ladder(const double *restrict w, size_t n, int nr,
                                      const double *restrict step, double *restrict g,
                                      double *restrict acc)
{
    int c = 0;
    while (nr - c >= 32)
        LADDER_RUN(4);
    while (nr - c >= 16)
        LADDER_RUN(2);
    while (nr - c >= 8)
        LADDER_RUN(1);
}

/* w: scratch of p->n doubles */
static int stats(const dpzo__pld_pmf *p, double d, double lambda, int nsides, int m0,
                 term_stats *st, double *w)
{
    memset(st, 0, sizeof *st);
    st->m0 = m0;
    double mean = 0.0, var = 0.0, terr = 0.0;
    double span = 0.0;
    tilt_ctx T;
    tilt_init(&T, lambda, d);
    const double lmax = grid_lmax(p, d);
    for (int s = 0; s < nsides; s++) {
        const double *a = side_mass(p, s);
        /* mx: within ln 2 above the largest log weight log a_k + lambda l_k (a_k < 2^(e - 1022)
         * for the biased exponent e of a positive double, subnormals included); it only
         * normalises, so that the weights below are at most about 2 */
        double mx = -INFINITY;
        for (size_t k = 0; k < p->n; k++) {
            if (!(a[k] > 0.0))
                continue;
            uint64_t bits;
            memcpy(&bits, &a[k], sizeof bits);
            double x = (double)((int)((bits >> 52) & 0x7ff) - 1022) * M_LN2
                       + tilt_at(p, k, d, lambda);
            if (x > mx)
                mx = x;
        }
        double sum = 0.0, m1 = 0.0, m2 = 0.0, fb = 0.0;
        if (isfinite(mx)) {
            double E[TILT_BLOCK];
            for (size_t k0 = 0; k0 < p->n; k0 += TILT_BLOCK) {
                size_t m = p->n - k0 < TILT_BLOCK ? p->n - k0 : TILT_BLOCK;
                tilt_block(&T, p, k0, m, mx, E);
                for (size_t j = 0; j < m; j++)
                    w[k0 + j] = tilt_weight(&T, p, a, k0 + j, E[j], mx, &fb);
            }
            /* four partial sums each (any order: the cgf's bound below allows n u for the
             * sum's rounding; the mean and variance only place and size windows) */
            v4d vs = {0.0, 0.0, 0.0, 0.0}, v1 = vs, v2 = vs, vi = {0.0, 1.0, 2.0, 3.0};
            size_t k = 0;
            for (; k + 4 <= p->n; k += 4) {
                v4d wv;
                memcpy(&wv, w + k, sizeof wv);
                vs += wv;
                v1 += wv * vi;
                v2 += wv * vi * vi;
                vi += 4.0;
            }
            sum = (vs[0] + vs[1]) + (vs[2] + vs[3]);
            m1 = (v1[0] + v1[1]) + (v1[2] + v1[3]);
            m2 = (v2[0] + v2[1]) + (v2[2] + v2[3]);
            for (; k < p->n; k++) {
                double i = (double)k;
                sum += w[k];
                m1 += w[k] * i;
                m2 += w[k] * i * i;
            }
        }
        if (s == 0 && !(sum > 0.0 && isfinite(sum) && isfinite(mx)))
            return -2; /* no (finite) mass on the grid: nothing to compose */
        /* an optimistic side without positive mass: its normaliser is NaN, as its mass
         * (NaN, not a bound) and no error term (its weights are exactly 0) */
        st->c[s] = mx > -INFINITY ? mx + log(sum) : NAN;
        double mu = m1 / sum, v = m2 / sum - mu * mu;
        if (s == 0) {
            mean = mu + (double)p->lo;
            if (!(fabs(mean) < 0x1p52))
                return -2; /* the grid index of the mean must be a long */
            st->shift = lround(mean);
            span = (double)p->n + fabs((double)(p->lo - st->shift));
        }
        if (v > var)
            var = v;
        /* the weights here (relative to mx) and the composition's (relative to c[s],
         * pld_compose_cover) are formed alike: one bound covers both */
        double e = mx > -INFINITY ? tilt_err(lambda, d, lmax, grid_wide(p),
                                             fmax(fabs(mx), fabs(st->c[s])), fb)
                                  : 0.0;
        if (e > terr)
            terr = e;
        /* cumulant generating function of the tilted step about `shift` at +-theta_m: the
         * ladder's orders of both signs, padded with idle recurrences to a multiple of
         * LADDER_W */
        double step[2 * N_THETA + LADDER_W], g[2 * N_THETA + LADDER_W],
            acc[2 * N_THETA + LADDER_W];
        int idx[2 * N_THETA], nl = 0;
        for (int sg = 0; sg < 2; sg++)
            for (int m = 0; m < N_THETA; m++) {
                double th = theta_at(st, m) * (sg ? -1.0 : 1.0);
                if (fabs(th) * span > 600.0) {
                    st->cgf[s][sg][m] = INFINITY;
                    continue;
                }
                idx[nl] = sg * N_THETA + m;
                step[nl] = exp(th);
                g[nl] = exp(th * (double)(p->lo - st->shift));
                acc[nl] = 0.0;
                nl++;
            }
        int nr = nl;
        for (; nr % LADDER_W; nr++) {
            step[nr] = 1.0;
            g[nr] = acc[nr] = 0.0;
        }
        ladder(w, p->n, nr, step, g, acc);
        double inv = 1.0 / sum;
        for (int j = 0; j < nl; j++) {
            /* the recurrence for g drifts by at most 2 n u relative */
            double x = acc[j] * (inv * (1.0 + 4.0 * U * ((double)p->n + 8.0) + 4.0 * terr));
            st->cgf[s][idx[j] / N_THETA][idx[j] % N_THETA] =
                log(x) + 4.0 * U * (fabs(log(x)) + 1.0);
        }
    }
    st->mean = mean;
    st->var = var > 0.0 ? var : 0.0;
    st->theta_err = terr;
    return 0;
}

/* Chernoff: the smallest w with P(S - M >= w) <= tau (sign 0) or P(S - M <= -w) <= tau. */
static double chernoff_width(const dpzo__pld_term *terms, const term_stats *st, size_t n, int side,
                             int sg, double log_tau)
{
    double best = INFINITY;
    for (int m = 0; m < N_THETA; m++) {
        double th = theta_at(st, m), K = 0.0;
        for (size_t t = 0; t < n && isfinite(K); t++)
            K += (double)terms[t].count
                 * (st[t].cgf[side][sg][m] - (sg ? -1.0 : 1.0) * th * (st[t].mean - (double)st[t].shift));
        /* K is the log MGF of S - M at +-th */
        double w = (K - log_tau) / th;
        if (w < best)
            best = w;
    }
    return best;
}

/* Chernoff bound on P(S - M >= w) (sign 0) or P(S - M <= -w). */
static double chernoff_tail(const dpzo__pld_term *terms, const term_stats *st, size_t n, int side,
                            int sg, double w)
{
    double best = 0.0; /* log bound, 0 = trivial */
    for (int m = 0; m < N_THETA; m++) {
        double th = theta_at(st, m), K = 0.0;
        for (size_t t = 0; t < n && isfinite(K); t++)
            K += (double)terms[t].count
                 * (st[t].cgf[side][sg][m] - (sg ? -1.0 : 1.0) * th * (st[t].mean - (double)st[t].shift));
        double b = K - th * w;
        if (b < best)
            best = b;
    }
    /* an upper end's mass, so rounded up: below DBL_MIN exp() is only accurate to an
     * absolute 2^-1075 and a finite log bound below -745 underflows to 0, so the result
     * moves one double up there (the query may multiply it by a large scale) */
    double v = exp(best) * (1.0 + 1e-12);
    if (best > -INFINITY && v < DBL_MIN)
        v = nextafter(v, INFINITY);
    return v;
}

/* The composed mass at +infinity: an outcome is finite only if every step's is, so it is
 * 1 - prod_t (1 - p_t)^k_t for the steps' masses p_t = pess_inf at +infinity, each already an
 * upper bound (pld_discretize.c). It is an upper end's whole value above the window, so it
 * is rounded up, not to nearest:
 *  - where it is at least DBL_MIN, -expm1(sum_t k_t log1p(-p_t)) carries a relative error
 *    of a few u per operation (each product or sum that underflows adds at most 2^-1075,
 *    at most u of such a result), covered by the factor 1 + 4u (K + 2), K >= the number of
 *    operations;
 *  - below DBL_MIN the relative model fails (glibc's expm1 and the products round to an
 *    absolute 2^-1075, and 2^-1074 is half of a mass of 2^-1073): there the union bound
 *    1 - prod (1 - p_t)^k_t <= sum_t k_t p_t is evaluated exactly or rounded up, in units of
 *    2^-1074 scaled by 2^1022 (exact: the masses are at most a few times DBL_MIN), each product
 *    and sum corrected upward by its exact error (fma, two-sum), and scaled back up to the
 *    next double. So a single step with p = 2^-1074 gives exactly 2^-1074, the smallest
 *    positive double, and any positive p_t gives at least that (issue 28: before, a step's
 *    p_t underflowed to 0, and nothing here could bring it back). */
double dpzo__pld_inf_mass(const dpzo__pld_term *terms, size_t n)
{
    double lk = 0.0, K = 0.0;
    int any = 0;
    for (size_t t = 0; t < n; t++) {
        double p = terms[t].pmf->pess_inf;
        if (p > 0.0 && terms[t].count > 0) {
            lk += (double)terms[t].count * log1p(-p);
            K += (double)terms[t].count;
            any = 1;
        }
    }
    if (!any)
        return 0.0;
    double m = -expm1(lk) * (1.0 + 4.0 * U * (K + 2.0));
    if (m >= DBL_MIN)
        return m < 1.0 ? m : 1.0;
    double S = 0.0; /* sum of count x p x 2^1022, rounded up */
    for (size_t t = 0; t < n; t++) {
        double p = terms[t].pmf->pess_inf, k = (double)terms[t].count;
        if (!(p > 0.0) || k == 0.0)
            continue;
        double ps = ldexp(p, 1022), pr = k * ps;
        if (fma(k, ps, -pr) > 0.0)
            pr = nextafter(pr, INFINITY);
        double s = S + pr, bv = s - S;
        if ((S - (s - bv)) + (pr - bv) > 0.0)
            s = nextafter(s, INFINITY);
        S = s;
    }
    double r = ldexp(S, -1022);
    if (ldexp(r, 1022) < S) /* scaling back rounded down */
        r = nextafter(r, INFINITY);
    return r < 1.0 ? r : 1.0;
}

static size_t pow2_at_least(double x)
{
    size_t n = 1024;
    while ((double)n < x && n < ((size_t)1 << 40))
        n <<= 1;
    return n;
}

typedef dpzo__pld_layout layout; /* pld_tree.h */

static dpzo_status make_layout(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                               const dpzo__pld_compose_opts *o, int cover_top, layout *L)
{
    int nsides = o->want_opt ? 2 : 1;
    L->st = malloc(n * sizeof *L->st);
    if (L->st == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory planning a composition");
    double M = 0.0;
    L->max_n = 0;
    for (size_t t = 0; t < n; t++)
        if (terms[t].pmf->n > L->max_n)
            L->max_n = terms[t].pmf->n;
    /* one step's weights at a time (dpzo__pld_compose_bytes counts them) */
    double *w = malloc((L->max_n ? L->max_n : 1) * sizeof *w);
    if (w == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory planning a composition");
    double lt = log(o->tau_tilt), V = 0.0;
    for (int pass = 0, m0 = M0_DEFAULT; pass < 2; pass++) {
        M = V = 0.0;
        for (size_t t = 0; t < n; t++) {
            int r = stats(terms[t].pmf, d, o->lambda, nsides, m0, &L->st[t], w);
            if (r) {
                free(w);
                return dpzo__fail(ctx, DPZO_EINVAL,
                                  "a step's discretised privacy loss has no finite mass within "
                                  "the grid's index range (grid %g, tilt %g)", d, o->lambda);
            }
            M += (double)terms[t].count * L->st[t].mean;
            V += (double)terms[t].count * L->st[t].var;
        }
        /* a Gaussian of variance V leaves tau_tilt beyond sqrt(2 V log(1/tau_tilt)), at the
         * order sqrt(2 log(1/tau_tilt) / V); a ladder whose lowest order is far above it
         * gives a width of about theta V / 2 instead (1e11 grid points for a million PRV
         * steps at the mesh 1.6e-6 where 5e10 were needed, and 1e4 times too coarse a mesh
         * chosen to fit the memory limit). Any ladder gives valid bounds; this one puts the
         * best order at least four rungs above the bottom. */
        double th = V > 0.0 ? sqrt(-2.0 * lt / V) : 1.0;
        int want = th < 0x1p-16 ? (int)ceil(4.0 - log2(th)) : M0_DEFAULT;
        if (want > 1000)
            want = 1000;
        if (want == m0)
            break;
        m0 = want;
    }
    free(w);
    double whi = 0.0, wlo = 0.0;
    for (int s = 0; s < nsides; s++) {
        double a = chernoff_width(terms, L->st, n, s, 0, lt);
        double b = chernoff_width(terms, L->st, n, s, 1, lt);
        whi = a > whi ? a : whi;
        wlo = b > wlo ? b : wlo;
    }
    /* the support of the composition bounds the window */
    double imin = 0.0, imax = 0.0;
    for (size_t t = 0; t < n; t++) {
        imin += (double)terms[t].count * (double)terms[t].pmf->lo;
        imax += (double)terms[t].count * (double)(terms[t].pmf->lo + (long)terms[t].pmf->n - 1);
    }
    L->imin = imin;
    L->imax = imax;
    double top = M + whi < imax ? M + whi : imax, bot = M - wlo > imin ? M - wlo : imin;
    L->margin = fmin(imax - (M + whi), (M - wlo) - imin);
    /* cover_top (a retry whose answer lay above the window): a support bounded above within
     * reach (the window at most doubled, or 2^20 points, within the memory limit) is covered
     * whole, and nothing lies above the window then. A tilt that suits the other direction
     * can leave the mass near such a top (an add pair's losses end at -K log(1 - q)) below
     * tau_tilt while the answer at a tiny delta lies there; cut at the Chernoff width, the
     * window missed it, and the retries moved the tilt for both directions (compositions of
     * up to 2^23 points far above the other direction's answer) before giving up. */
    if (cover_top && imax > top && imax - bot <= fmax(2.0 * (top - bot), 0x1p20) && imax - bot < 0x1p39
        && dpzo__pld_compose_bytes(pow2_at_least(ceil(imax) - floor(bot) + 3.0), n, L->max_n,
                                   o->want_opt)
               <= o->memory_limit)
        top = imax;
    L->covered = top >= imax;
    if (!(top - bot < 0x1p40))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "the composed privacy loss is too spread out for the grid");
    /* grid indices are longs, and loss = index * d must stay a finite double */
    if (!(fabs(top) < 0x1p60 && fabs(bot) < 0x1p60))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "the composed privacy loss (grid indices %g to %g) is beyond the range "
                          "the grid can index (2^60); use a coarser grid or fewer steps", bot,
                          top);
    L->span = ceil(top) - floor(bot) + 3.0;
    L->N = pow2_at_least(L->span);
    L->w0 = (long)floor(bot) - 1;
    L->M = M;
    return DPZO_OK;
}


dpzo_status dpzo__pld_compose_plan(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                   const dpzo__pld_compose_opts *o, size_t *fft_size, size_t *bytes,
                                   double *span)
{
    layout L = {0};
    dpzo_status st = make_layout(ctx, terms, n, d, o, 0, &L);
    if (st == DPZO_OK) {
        *fft_size = L.N;
        *bytes = dpzo__pld_compose_bytes(L.N, n, L.max_n, o->want_opt);
        if (n >= 3 && o->tree != 1) { /* the tree's extra buffers, where it is used */
            dpzo__pld_tree *tree = NULL;
            int use = 0;
            size_t extra = 0;
            st = dpzo__pld_tree_plan(ctx, terms, n, o, &L, &tree, &use, &extra);
            if (st == DPZO_OK && (use || o->tree == 2)
                && (*bytes + extra <= o->memory_limit || o->tree == 2))
                *bytes += extra;
            dpzo__pld_tree_free(tree);
        }
        if (span != NULL) /* the window's extent before rounding up to a power of two */
            *span = L.span;
    }
    free(L.st);
    return st;
}

dpzo_status dpzo__pld_compose_extent(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n,
                                     double d, const dpzo__pld_compose_opts *o, double *span,
                                     double *margin)
{
    layout L = {0};
    dpzo_status st = make_layout(ctx, terms, n, d, o, 0, &L);
    if (st == DPZO_OK) {
        *span = L.span;
        *margin = L.margin;
    }
    free(L.st);
    return st;
}

void dpzo__pld_composed_free(dpzo__pld_composed *c)
{
    if (c == NULL)
        return;
    memset(c, 0, sizeof *c);
}

void dpzo__pld_release(size_t freed)
{
#if defined(__GLIBC__)
    /* glibc keeps freed blocks below its (adaptive, up to 32 MiB) mmap threshold in its
     * heaps, those of the second direction's thread in an arena of their own: measured
     * (tests/test_pld_memory.c), a PRV query whose meshes were tried at 64 MiB stayed 30 MiB
     * above its accounted peak. malloc_trim returns the free pages of every arena. Blocks
     * under 4 MiB are left alone: a step's scratch is reused by the next step's (1000
     * distinct steps at grid 1e-4 would trim 2000 times). */
    if (freed >= ((size_t)4 << 20))
        malloc_trim(0);
#else
    (void)freed;
#endif
}

void dpzo__pld_ws_free(dpzo__pld_ws *w)
{
    if (w == NULL)
        return;
    size_t freed = w->cap * (sizeof(double complex) + (w->y ? sizeof(double) : 0))
                   + w->hcap * 2 * (sizeof(double complex) + 2 * sizeof(double))
                   + (w->plan ? dpzo__fft_plan_bytes(w->plan_n) : 0);
    dpzo__fft_plan_free(w->plan);
    free(w->work);
    free(w->prod);
    free(w->ra);
    free(w->ea);
    free(w->y);
    memset(w, 0, sizeof *w);
    dpzo__pld_release(freed);
}

/* The buffers of one composition of length N, allocated in the order that keeps the peak
 * within dpzo__pld_compose_bytes: anything held from a composition of another length (or
 * without the buffers this one needs) is freed first, then the plan is created (its
 * temporary octant table is freed before it returns, while nothing else is held), then the
 * transform buffer, the optimistic side's output and the spectra products. */
static int ws_reserve(dpzo__pld_ws *w, size_t N, int multi, int want_opt)
{
    size_t h = N / 2 + 1;
    if (w->plan_n != N || w->cap != N || (want_opt && w->y == NULL) || (multi && w->hcap != h))
        dpzo__pld_ws_free(w);
    if (w->plan == NULL) {
        w->plan = dpzo__fft_plan_create(N);
        w->plan_n = w->plan ? N : 0;
        if (w->plan == NULL)
            return -1;
    }
    if (w->work == NULL) {
        w->work = malloc(N * sizeof *w->work);
        if (w->work == NULL)
            return -1;
        w->cap = N;
    }
    if (want_opt && w->y == NULL && (w->y = malloc(N * sizeof *w->y)) == NULL)
        return -1;
    if (multi && w->hcap != h) {
        w->prod = malloc(2 * h * sizeof *w->prod);
        w->ra = malloc(2 * h * sizeof *w->ra);
        w->ea = malloc(2 * h * sizeof *w->ea);
        w->hcap = w->prod && w->ra && w->ea ? h : 0;
        if (w->hcap == 0)
            return -1;
    }
    return 0;
}

/* Everything dpzo__pld_compose_cover holds at once for a composition of length N: the
 * plan (with the temporary table of its creation, counted although it is freed before the
 * buffers are allocated), the transform buffer (whose real parts become the pessimistic
 * output in place), the optimistic output, the spectra products of several distinct steps,
 * the steps' statistics, and the scratch array of one step's weights while they are
 * computed (counted twice: it is also held while the layout is made). */
size_t dpzo__pld_compose_bytes(size_t N, size_t n_terms, size_t max_points, int want_opt)
{
    size_t h = N / 2 + 1;
    size_t b = N * sizeof(double complex) + dpzo__fft_plan_bytes(N)
               + n_terms * sizeof(term_stats) + 2 * max_points * sizeof(double);
    if (want_opt)
        b += N * sizeof(double);
    if (n_terms > 1)
        b += 2 * h * (sizeof(double complex) + 2 * sizeof(double));
    return b;
}

/* Rotates a[0 .. n) left by r in place (three reversals): a[i] <- a[(i + r) mod n]. */
static void reverse(double *a, size_t i, size_t j)
{
    while (i + 1 < j) {
        double t = a[i];
        a[i++] = a[--j];
        a[j] = t;
    }
}

static void rotate_left(double *a, size_t n, size_t r)
{
    if (r == 0 || r >= n)
        return;
    reverse(a, 0, r);
    reverse(a, r, n);
    reverse(a, 0, n);
}

/* The composed window out of the inverse transform: entry i of the window is entry
 * (i + rot) mod N of work. The optimistic side (imaginary parts) is copied out rotated into
 * yopt; the pessimistic side (real parts) is compacted into work's first N doubles (entry
 * j's real part moves from double 2j to double j, after every entry up to j has been read)
 * and rotated there. */
void dpzo__pld_unpack(double complex *work, size_t N, size_t rot, int want_opt, double *yopt)
{
    if (want_opt)
        for (size_t i = 0; i < N; i++)
            yopt[i] = cimag(work[(i + rot) & (N - 1)]);
    double *yp = (double *)work; /* a complex is an array of two doubles (C17 6.2.5) */
    for (size_t j = 1; j < N; j++)
        yp[j] = yp[2 * j];
    rotate_left(yp, N, rot);
}

static double complex cpow_polar(double complex z, uint64_t k, double *rho)
{
    double r = cabs(z);
    if (r == 0.0) {
        *rho = 0.0;
        return 0.0;
    }
    double ph = carg(z), lr = log(r), kk = (double)k;
    *rho = U * (4.0 + kk * (2.0 + 2.0 * fabs(lr) + 3.0 * fabs(ph)));
    double mag = exp(kk * lr);
    if (mag == 0.0)
        return 0.0;
    double s, c;
    sincos(kk * ph, &s, &c);
    return mag * c + I * (mag * s);
}

/* z^k and a bound on |computed - exact| given |z' - z| <= e (see the file comment);
 * rb bounds both |z^k| and |z'^k|. */
static double complex power_bound(double complex z, double e, uint64_t k, double small_r2,
                                  double *eb, double *rb)
{
    if (k == 1) {
        *eb = e;
        *rb = fabs(creal(z)) + fabs(cimag(z)) + e; /* >= |z| + e, without a hypot */
        return z;
    }
    double r2 = creal(z) * creal(z) + cimag(z) * cimag(z);
    double re = sqrt(small_r2) - e;
    if (re > 0.0 && r2 < re * re) {
        /* |z| + e < small_r: both powers are below 1e-300 */
        *eb = 0.0;
        *rb = 0.0;
        return 0.0;
    }
    double rho;
    double complex zk = cpow_polar(z, k, &rho);
    double r = sqrt(r2), R = r + e, azk = cabs(zk);
    double rk = pow(R, (double)k) * (1.0 + 4.0 * U * (double)k + 4.0 * U);
    *rb = rk > azk ? rk : azk;
    *eb = rho * azk + (double)k * e * rk / R;
    if (!(*eb <= *rb + azk))
        *eb = *rb + azk; /* the trivial bound */
    return zk;
}

/* One distinct step (count 1) into the product of spectra, per frequency pair (j, N - j):
 * `in` (work itself, or another array of N) holds the step's transform (pessimistic
 * + i optimistic); z_P, z_O are separated as in the file comment, e bounds their error (ec
 * the forward transform's, plus u of the separation), and with |z| <= rb = |Re z|
 * + |Im z| + e (power_bound's k = 1 case) the product, its error and its bound advance as
 *   prod' = prod z,  ea' = ra e + rb ea + ea e + 4u |prod'|,  ra' = ra rb (1 + 4u).
 * The complex product is written out (a c - b d, a d + b c, each product rounded): C's
 * complex multiplication computes the same for finite operands, without its check for
 * infinities and NaN, which kept the loop from being compiled as straight-line code.
 * first: prod, ra, ea start at 1, 1, 0 (the formulas above with those values: prod' = z
 * exactly, ea' = e + 4u |z|, ra' = rb (1 + 4u)). last: nothing is stored in prod, ra, ea;
 * the composed spectrum C_j = P + i O, C_{N-j} = conj(P) + i conj(O) goes into work, and
 * sum_e, sum_c get what the inverse transform's error needs: sum over all N frequencies of
 * the product's error (ea_P + ea_O) and of |Re C_j| + |Im C_j| (in the order of the pairs;
 * the caller bounds the rounding of these sums), and es_out (if not NULL) the error of
 * each side at each pair, es_out[s H + j], j < H = N/2 + 1 (see es_in). */
/* one frequency pair (j, N - j) of dpzo__pld_spectra_step1 */
static inline __attribute__((always_inline)) void
step1_at(size_t j, const double *xi, double *x, size_t N, int nsides, double ec,
         const double *es_in, double sep,
         int first, int last, double *pr, double *ra, double *ea, double *es_out, double *se,
         double *sc)
{
    const size_t H = N / 2 + 1;
    const double gu = 1.0 + 4.0 * U;
    const size_t jm = (N - j) & (N - 1);
    const double ar = xi[2 * j], ai = xi[2 * j + 1], br = xi[2 * jm], bi = -xi[2 * jm + 1];
    const double rnd = sep * (fabs(ar) + fabs(ai) + fabs(br) + fabs(bi));
    const double es[2] = {(es_in ? es_in[j] : ec) + rnd, (es_in ? es_in[H + j] : ec) + rnd};
    /* z_P = (a + b) / 2, z_O = -i (a - b) / 2 */
    const double zr[2] = {0.5 * (ar + br), 0.5 * (ai - bi)};
    const double zi[2] = {0.5 * (ai + bi), -0.5 * (ar - br)};
    double P[2][2] = {{0.0, 0.0}, {0.0, 0.0}}, eas[2] = {0.0, 0.0};
    for (int s = 0; s < nsides; s++) {
        const size_t ix = (size_t)s * H + j;
        const double e = es[s];
        const double rb = fabs(zr[s]) + fabs(zi[s]) + e;
        double qr, qi, ne, nr;
        if (first) {
            qr = zr[s];
            qi = zi[s];
            ne = e;
            nr = rb * gu;
        } else {
            const double pr0 = pr[2 * ix], pi0 = pr[2 * ix + 1];
            ne = ra[ix] * e + rb * ea[ix] + ea[ix] * e;
            qr = pr0 * zr[s] - pi0 * zi[s];
            qi = pr0 * zi[s] + pi0 * zr[s];
            nr = ra[ix] * (rb * gu);
        }
        const double nea = ne + 4.0 * U * (fabs(qr) + fabs(qi));
        if (last) {
            P[s][0] = qr;
            P[s][1] = qi;
            eas[s] = nea;
        } else {
            pr[2 * ix] = qr;
            pr[2 * ix + 1] = qi;
            ea[ix] = nea;
            ra[ix] = nr;
        }
    }
    if (last) {
        const double Pr = P[0][0], Pi = P[0][1], Or = P[1][0], Oi = P[1][1];
        *se += (j == 0 || j == jm ? 1.0 : 2.0) * (eas[0] + eas[1]);
        if (es_out) {
            es_out[j] = j == jm ? eas[0] + eas[1] : eas[0];
            es_out[H + j] = j == jm ? eas[0] + eas[1] : eas[1];
        }
        /* C_{N-j} = conj(P) + i conj(O) */
        const double cr = Pr + Oi, ci = Or - Pi;
        if (j != jm) {
            const double dr = Pr - Oi, di = Pi + Or; /* C_j = P + i O */
            x[2 * j] = dr;
            x[2 * j + 1] = di;
            *sc += fabs(dr) + fabs(di);
        }
        x[2 * jm] = cr;
        x[2 * jm + 1] = ci;
        *sc += fabs(cr) + fabs(ci);
    }
}

/* A step of count k > 1 into the product of spectra (prod, with each entry's bound ra on its
 * magnitude and ea on its error): its transform `work` (forward rounding ec per entry) split
 * into the sides' Hermitian parts, raised to the k-th power with power_bound's bound. */
void dpzo__pld_spectra_stepk(const double complex *work, size_t N, int nsides, double ec,
                             uint64_t k, double complex *prod, double *ra, double *ea)
{
    const size_t H = N / 2 + 1;
    const double small_r2 = exp(-1380.0 / (double)k);
    /* frequencies j and N - j together: the sides' spectra are Hermitian */
    for (size_t j = 0; j < H; j++) {
        size_t jm = (N - j) & (N - 1);
        double complex a = work[j], b = conj(work[jm]);
        double e = ec + U * (fabs(creal(a)) + fabs(cimag(a)) + fabs(creal(b)) + fabs(cimag(b)));
        double complex z[2] = {0.5 * (a + b), -0.5 * I * (a - b)};
        for (int s = 0; s < nsides; s++) {
            double eb, rb;
            double complex zk = power_bound(z[s], e, k, small_r2, &eb, &rb);
            size_t ix = (size_t)s * H + j;
            double newe = ra[ix] * eb + rb * ea[ix] + ea[ix] * eb;
            prod[ix] *= zk;
            ea[ix] = newe + 4.0 * U * (fabs(creal(prod[ix])) + fabs(cimag(prod[ix])));
            ra[ix] *= rb * (1.0 + 4.0 * U);
        }
    }
}

/* The composed spectrum from the product of spectra: work = P + i O (O = 0 without the
 * optimistic side), the products' error bounds summed into *sum_e. */
void dpzo__pld_spectra_assemble(double complex *work, size_t N, int want_opt,
                                const double complex *prod, const double *ea, double *sum_e)
{
    const size_t H = N / 2 + 1;
    for (size_t j = 0; j < H; j++) {
        size_t jm = (N - j) & (N - 1);
        double complex P = prod[j], O = want_opt ? prod[H + j] : 0.0;
        work[j] = P + I * O;
        work[jm] = conj(P) + I * conj(O);
        double e = ea[j] + (want_opt ? ea[H + j] : 0.0);
        *sum_e += (j == 0 || j == jm ? 1.0 : 2.0) * e;
    }
}

/* The error bound on every entry of the inverse transform of `work` (length N, forward bound
 * eta), given the spectrum's summed error sum_e; sum_c: its l1 norm, or a negative value to
 * have it summed here. sum_e and sum_c add at most 2N nonnegative terms each: within
 * (2N + 2) u. */
double dpzo__pld_inverse_err(const double complex *work, size_t N, double eta, double sum_e,
                             double sum_c)
{
    if (sum_c < 0.0) {
        sum_c = 0.0;
        for (size_t j = 0; j < N; j++)
            sum_c += fabs(creal(work[j])) + fabs(cimag(work[j]));
    }
    return (sum_e + eta * sum_c) / (double)N * (1.0 + 2.0 * U * (2.0 * (double)N + 8.0));
}

/* The pairs j = j0 .. j0 + 4 m - 1 (1 <= j0, j0 + 4 m <= N/2: j != N - j, and the two
 * blocks of four pairs that an iteration reads and writes do not meet) four at a time,
 * in GCC vectors of four doubles: lane by lane the operations of step1_at, in its
 * order (ISO C mode: no FMA is formed), so the same values; only se and sc are summed
 * in another order (four partial sums), which their bound allows. Locals only: no
 * vector crosses a call. */
#define V4ABS(v) ((v4d)((v4l)(v) & (v4l){0x7fffffffffffffffLL, 0x7fffffffffffffffLL,              \
                                              0x7fffffffffffffffLL, 0x7fffffffffffffffLL}))
#define V4EVEN(a, b) __builtin_shufflevector((a), (b), 0, 2, 4, 6)
#define V4ODD(a, b) __builtin_shufflevector((a), (b), 1, 3, 5, 7)

DPZO_KERNEL_CLONES static void step1_block4(size_t j0, size_t m, const double *xi, double *x,
                                            size_t N,
                                            int nsides, double ec, const double *es_in,
                                            double sep, int first, int last,
                                            double *restrict pr, double *restrict ra,
                                            double *restrict ea, double *restrict es_out,
                                            double *se, double *sc)
{
    const size_t H = N / 2 + 1;
    const double gu = 1.0 + 4.0 * U, u4 = 4.0 * U;
    v4d vse = {0.0, 0.0, 0.0, 0.0}, vsc = vse;
    for (size_t it = 0; it < m; it++) {
        const size_t j = j0 + 4 * it, jb = N - j - 3; /* pairs j .. j+3 and N-j .. N-j-3 */
        v4d A0, A1, B0, B1;
        memcpy(&A0, xi + 2 * j, sizeof A0);
        memcpy(&A1, xi + 2 * j + 4, sizeof A1);
        memcpy(&B0, xi + 2 * jb, sizeof B0);
        memcpy(&B1, xi + 2 * jb + 4, sizeof B1);
        const v4d ar = V4EVEN(A0, A1), ai = V4ODD(A0, A1);
        /* lane l: pair N - j - l, stored in reverse order */
        const v4d br = __builtin_shufflevector(B0, B1, 6, 4, 2, 0);
        const v4d bi = -__builtin_shufflevector(B0, B1, 7, 5, 3, 1);
        const v4d rnd = sep * (V4ABS(ar) + V4ABS(ai) + V4ABS(br) + V4ABS(bi));
        const v4d zr[2] = {0.5 * (ar + br), 0.5 * (ai - bi)};
        const v4d zi[2] = {0.5 * (ai + bi), -0.5 * (ar - br)};
        const v4d zero = {0.0, 0.0, 0.0, 0.0};
        v4d Qr[2] = {zero, zero}, Qi[2] = {zero, zero}, Ea[2] = {zero, zero};
        for (int s = 0; s < nsides; s++) {
            const size_t ix = (size_t)s * H + j;
            v4d e;
            if (es_in)
                memcpy(&e, es_in + ix, sizeof e);
            else
                e = (v4d){ec, ec, ec, ec};
            e = e + rnd;
            const v4d rb = V4ABS(zr[s]) + V4ABS(zi[s]) + e;
            v4d qr, qi, ne, nr;
            if (first) {
                qr = zr[s];
                qi = zi[s];
                ne = e;
                nr = rb * gu;
            } else {
                v4d P0, P1, r, a;
                memcpy(&P0, pr + 2 * ix, sizeof P0);
                memcpy(&P1, pr + 2 * ix + 4, sizeof P1);
                memcpy(&r, ra + ix, sizeof r);
                memcpy(&a, ea + ix, sizeof a);
                const v4d p_r = V4EVEN(P0, P1), p_i = V4ODD(P0, P1);
                ne = r * e + rb * a + a * e;
                qr = p_r * zr[s] - p_i * zi[s];
                qi = p_r * zi[s] + p_i * zr[s];
                nr = r * (rb * gu);
            }
            const v4d nea = ne + u4 * (V4ABS(qr) + V4ABS(qi));
            if (last) {
                Qr[s] = qr;
                Qi[s] = qi;
                Ea[s] = nea;
            } else {
                const v4d P0 = __builtin_shufflevector(qr, qi, 0, 4, 1, 5);
                const v4d P1 = __builtin_shufflevector(qr, qi, 2, 6, 3, 7);
                memcpy(pr + 2 * ix, &P0, sizeof P0);
                memcpy(pr + 2 * ix + 4, &P1, sizeof P1);
                memcpy(ea + ix, &nea, sizeof nea);
                memcpy(ra + ix, &nr, sizeof nr);
            }
        }
        if (last) {
            const v4d Pr = Qr[0], Pi = Qi[0], Or = Qr[1], Oi = Qi[1], e1 = Ea[1];
            vse += 2.0 * (Ea[0] + e1);
            if (es_out) {
                memcpy(es_out + j, &Ea[0], sizeof Ea[0]);
                memcpy(es_out + H + j, &e1, sizeof e1);
            }
            const v4d cr = Pr + Oi, ci = Or - Pi; /* C_{N-j} */
            const v4d dr = Pr - Oi, di = Pi + Or; /* C_j */
            const v4d D0 = __builtin_shufflevector(dr, di, 0, 4, 1, 5);
            const v4d D1 = __builtin_shufflevector(dr, di, 2, 6, 3, 7);
            const v4d C0 = __builtin_shufflevector(cr, ci, 3, 7, 2, 6);
            const v4d C1 = __builtin_shufflevector(cr, ci, 1, 5, 0, 4);
            memcpy(x + 2 * j, &D0, sizeof D0);
            memcpy(x + 2 * j + 4, &D1, sizeof D1);
            memcpy(x + 2 * jb, &C0, sizeof C0);
            memcpy(x + 2 * jb + 4, &C1, sizeof C1);
            vsc += V4ABS(dr) + V4ABS(di) + V4ABS(cr) + V4ABS(ci);
        }
    }
    *se += (vse[0] + vse[1]) + (vse[2] + vse[3]);
    *sc += (vsc[0] + vsc[1]) + (vsc[2] + vsc[3]);
}

void dpzo__pld_spectra_step1(const double complex *in, double complex *work, size_t N,
                             int nsides, double ec, const double *es_in, int first, int last,
                             double complex *prod, double *ra, double *ea, double *es_out,
                             double *sum_e, double *sum_c)
{
    /* es_in: work holds a spectrum composed by dpzo__pld_spectra_step1 (last, es_out) at
     * this length instead of a forward transform: its separated z_P, z_O are within
     * es_in[j], es_in[H + j] (that pass's ea of each side; ea_P + ea_O for both at j = 0
     * and N/2, where C_j = C_{N-j} = conj(P) + i conj(O) mixes the sides' imaginary
     * parts, which are errors there: the exact P and O are real) plus the rounding of
     * forming C = P + i O there (u |C| a component) and of separating it here:
     * 3u (|a| + |b|) covers both */
    const double sep = es_in ? 3.0 * U : U;
    /* arrays of two doubles (C17 6.2.5) */
    const double *xi = (const double *)in;
    double *x = (double *)work, *pr = (double *)prod;
    const size_t H = N / 2 + 1, m = N >= 8 ? (N / 2 - 1) / 4 : 0;
    double se = 0.0, sc = 0.0;
    step1_at(0, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se, &sc);
    step1_block4(1, m, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se,
                 &sc);
    for (size_t j = 1 + 4 * m; j < H; j++)
        step1_at(j, xi, x, N, nsides, ec, es_in, sep, first, last, pr, ra, ea, es_out, &se, &sc);
    if (last) {
        *sum_e = se;
        *sum_c = sc;
    }
}

dpzo_status dpzo__pld_compose(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                              const dpzo__pld_compose_opts *o, dpzo__pld_ws *ws,
                              dpzo__pld_composed *out)
{
    return dpzo__pld_compose_cover(ctx, terms, n, d, o, 0, ws, out);
}

dpzo_status dpzo__pld_compose_cover(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                    const dpzo__pld_compose_opts *o, int cover_top,
                                    dpzo__pld_ws *ws, dpzo__pld_composed *out)
{
    memset(out, 0, sizeof *out);
    int nsides = o->want_opt ? 2 : 1;
    layout L = {0};
    dpzo__pld_tree *tree = NULL;
    dpzo_status status = make_layout(ctx, terms, n, d, o, cover_top, &L);
    if (status)
        goto done;
    size_t N = L.N, bytes = dpzo__pld_compose_bytes(N, n, L.max_n, o->want_opt);
    if (bytes > o->memory_limit) {
        /* six significant digits, the need rounded up: a limit of 1.5 MiB reads 1.5, not 2,
         * and a need never reads as small as the limit it exceeds (issue 28, item 11) */
        double need = (double)(bytes + o->held) / 1048576.0;
        double scale = pow(10.0, 5.0 - floor(log10(need)));
        status = dpzo__fail(ctx, DPZO_ENOMEM,
                            "the composition needs %.6g MiB (FFT size %zu), more than the memory "
                            "limit of %.6g MiB; use a coarser grid (PRV: a larger eps_error) or "
                            "raise the limit",
                            ceil(need * scale) / scale, N,
                            (double)(o->memory_limit + o->held) / 1048576.0);
        goto done;
    }
    int multi = n > 1;
    /* many distinct steps: a tree of short transforms (pld_tree.c) where it is cheaper */
    int use_tree = 0;
    if (n >= 3 && o->tree != 1) {
        size_t extra = 0;
        if ((status = dpzo__pld_tree_plan(ctx, terms, n, o, &L, &tree, &use_tree, &extra)))
            goto done;
        use_tree |= o->tree == 2;
        if (use_tree && bytes + extra > o->memory_limit && o->tree != 2)
            use_tree = 0; /* the flat composition fits the limit: it is used */
        if (use_tree)
            bytes += extra;
    }
    if (!use_tree)
        dpzo__pld_fft_points += (unsigned long long)N * n; /* one transform per distinct step */
    if (ws_reserve(ws, N, multi || use_tree, o->want_opt)) {
        status = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (FFT size %zu)", N);
        goto done;
    }
    double K = 0.0, theta = 0.0, off = 0.0, err = 0.0;
    if (use_tree) {
        for (size_t t = 0; t < n; t++) {
            K += (double)terms[t].count;
            off += (double)terms[t].count * terms[t].pmf->off;
            theta = L.st[t].theta_err > theta ? L.st[t].theta_err : theta;
            for (int s = 0; s < nsides; s++)
                out->logscale[s] += (double)terms[t].count * L.st[t].c[s];
        }
        double theta_fold = 0.0;
        if ((status = dpzo__pld_tree_compose(ctx, tree, terms, d, o, &L, ws, &err, out->misplaced,
                                             &theta_fold)))
            goto done;
        theta += theta_fold;
        goto finish;
    }
    double complex *work = ws->work;
    const size_t H = N / 2 + 1;
    /* a first step of count 1 starts the product itself (dpzo__pld_spectra_step1) */
    if (multi && terms[0].count != 1)
        for (size_t j = 0; j < 2 * H; j++) {
            ws->prod[j] = 1.0;
            ws->ra[j] = 1.0;
            ws->ea[j] = 0.0;
        }
    const double eta = dpzo__fft_error_bound(N);
    double sum_e = 0.0, sum_c = 0.0;
    int fused = 0; /* the last step's pass left the composed spectrum, sum_e and sum_c */
    long S = 0;
    tilt_ctx T;
    tilt_init(&T, o->lambda, d);
    for (size_t t = 0; t < n; t++) {
        const dpzo__pld_pmf *p = terms[t].pmf;
        const term_stats *st = &L.st[t];
        uint64_t k = terms[t].count;
        K += (double)k;
        off += (double)k * p->off;
        if (st->theta_err > theta)
            theta = st->theta_err;
        {
            uint64_t km = k % N, sm = (uint64_t)(((st->shift % (long)N) + (long)N) % (long)N);
            S = (long)(((uint64_t)S + dpzo__pld_mulmod(km, sm, N)) % N); /* N up to 2^40 */
        }
        for (int s = 0; s < nsides; s++)
            out->logscale[s] += (double)k * st->c[s];
        memset(work, 0, N * sizeof *work);
        /* the tilted masses, as stats() formed its weights (tilt_block; its bound,
         * theta_err, covers them), at (index - shift) mod N */
        double l1 = 0.0, fb = 0.0, *x = (double *)work;
        long pos0 = (p->lo - st->shift) % (long)N;
        size_t pos = (size_t)(pos0 < 0 ? pos0 + (long)N : pos0);
        for (size_t k0 = 0; k0 < p->n; k0 += TILT_BLOCK) {
            const size_t m = p->n - k0 < TILT_BLOCK ? p->n - k0 : TILT_BLOCK;
            double E[2][TILT_BLOCK];
            for (int s = 0; s < nsides; s++)
                tilt_block(&T, p, k0, m, st->c[s], E[s]);
            for (size_t j = 0; j < m; j++, pos = (pos + 1) & (N - 1)) {
                double re = tilt_weight(&T, p, p->pess, k0 + j, E[0][j], st->c[0], &fb);
                double im = o->want_opt ? tilt_weight(&T, p, p->opt, k0 + j, E[1][j], st->c[1], &fb)
                                        : 0.0;
                x[2 * pos] += re;
                x[2 * pos + 1] += im;
                l1 += re + im;
            }
        }
        if (fb > 0.0) { /* the fallback of tilt_weight was taken here */
            double c = fmax(fabs(st->c[0]), nsides > 1 ? fabs(st->c[1]) : 0.0);
            double e = tilt_err(o->lambda, d, grid_lmax(p, d), grid_wide(p), c, fb);
            theta = e > theta ? e : theta;
        }
        if (p->n > N) { /* folded: m - 1 additions of nonnegative masses an entry at most */
            double e = st->theta_err + 2.0 * U * (double)((p->n + N - 1) / N) * (1.0 + 4.0 * U);
            theta = e > theta ? e : theta;
        }
        dpzo__fft_forward(ws->plan, work);
        /* the computed l1 norm, a sum of 2 n nonnegative terms, is within (2 n + 2) u of the
         * exact one */
        const double ec = eta * l1 * (1.0 + 2.0 * U * (2.0 * (double)p->n + 4.0));
        if (multi && k == 1) {
            fused = t == n - 1;
            dpzo__pld_spectra_step1(work, work, N, nsides, ec, NULL, t == 0, fused, ws->prod,
                                    ws->ra, ws->ea, NULL, &sum_e, &sum_c);
            continue;
        }
        if (multi) {
            dpzo__pld_spectra_stepk(work, N, nsides, ec, k, ws->prod, ws->ra, ws->ea);
            continue;
        }
        /* a single term: its k-th power in place, C_j = P^k + i O^k,
         * C_{N-j} = conj(P^k) + i conj(O^k) */
        const double small_r2 = k > 1 ? exp(-1380.0 / (double)k) : 0.0;
        for (size_t j = 0; j < H; j++) {
            size_t jm = (N - j) & (N - 1);
            double complex a = work[j], b = conj(work[jm]);
            double e = ec + U * (fabs(creal(a)) + fabs(cimag(a)) + fabs(creal(b)) + fabs(cimag(b)));
            double complex z[2] = {0.5 * (a + b), -0.5 * I * (a - b)}, zk[2] = {0.0, 0.0};
            for (int s = 0; s < nsides; s++) {
                double eb, rb;
                zk[s] = power_bound(z[s], e, k, small_r2, &eb, &rb);
                sum_e += (j == 0 || j == jm ? 1.0 : 2.0) * eb;
            }
            work[j] = zk[0] + I * zk[1];
            work[jm] = conj(zk[0]) + I * conj(zk[1]);
        }
    }
    if (multi && !fused)
        dpzo__pld_spectra_assemble(work, N, o->want_opt, ws->prod, ws->ea, &sum_e);
    err = dpzo__pld_inverse_err(work, N, eta, sum_e, fused ? sum_c : -1.0);
    dpzo__fft_inverse(ws->plan, work);
    /* the window's entry i is the transform's entry (w0 + i - S) mod N */
    dpzo__pld_unpack(work, N, (size_t)((((L.w0 - S) % (long)N) + (long)N) % (long)N),
                     o->want_opt, ws->y);
finish:
    out->y[0] = (double *)ws->work; /* dpzo__pld_unpack's layout */
    out->y[1] = o->want_opt ? ws->y : NULL;
    out->d = d;
    out->lambda = o->lambda;
    out->w0 = L.w0;
    out->off = off;
    out->N = N;
    out->err[0] = out->err[1] = err;
    out->rel = expm1(K * log1p(theta)) * (1.0 + 1e-6) + 8.0 * U;
    for (int s = 0; s < nsides; s++) {
        double top = (double)(L.w0 + (long)N - 1) - L.M, bot = L.M - (double)L.w0;
        int all_below = (double)(L.w0 + (long)N - 1) >= L.imax, all_above = (double)L.w0 <= L.imin;
        out->above[s] = all_below ? 0.0 : chernoff_tail(terms, L.st, n, s, 0, top);
        out->outside[s] = out->above[s] + (all_above ? 0.0 : chernoff_tail(terms, L.st, n, s, 1, bot));
    }
    out->top_covered = L.covered;
    out->inf_mass = dpzo__pld_inf_mass(terms, n);
    /* what intermediate windows misplaced is a mass of the composition of the computed
     * inputs, which is within (1 + rel) of the exact tilted one */
    for (int s = 0; s < 2; s++) /* 0 without a tree (and 0 x inf, at rel = inf, is NaN) */
        if (out->misplaced[s] > 0.0)
            out->misplaced[s] *= 1.0 + out->rel;
    out->bytes = bytes;
done:
    dpzo__pld_tree_free(tree);
    free(L.st);
    return status;
}

/* For pld_tree.c (pld_tree.h). */
double dpzo__pld_chernoff_width(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                                size_t n, int side, int sg, double log_tau)
{
    return chernoff_width(terms, st, n, side, sg, log_tau);
}

double dpzo__pld_chernoff_tail(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                               size_t n, int side, int sg, double w)
{
    return chernoff_tail(terms, st, n, side, sg, w);
}

double complex dpzo__pld_power_bound(double complex z, double e, uint64_t k, double small_r2,
                                     double *eb, double *rb)
{
    return power_bound(z, e, k, small_r2, eb, rb);
}

size_t dpzo__pld_pow2_at_least(double x) { return pow2_at_least(x); }

uint64_t dpzo__pld_mulmod(uint64_t a, uint64_t b, uint64_t N)
{
    uint64_t r = 0;
    a %= N;
    while (b) {
        if (b & 1)
            r = (r + a) % N;
        a = (a + a) % N;
        b >>= 1;
    }
    return r;
}
