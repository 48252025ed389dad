/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_compose.c: composition of discretised privacy loss distributions by
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
 * tilt_err, both in pld_tilt.h), so with nonnegative masses the composition is within
 * (1 +- theta)^K of the exact one; this is `rel`.
 *
 * The pieces the tree shares (tilted weights, Chernoff bounds, products of spectra, the
 * inverse transform's error bound) live in pld_spectra.c, below both compositions.
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
#include "pld_tilt.h"
#include "pld_tree.h"

#define U (0.5 * DBL_EPSILON)
#define N_THETA DPZO__PLD_N_THETA

typedef dpzo__pld_term_stats term_stats; /* pld_spectra.h */

/* The ladder of orders at which the Chernoff bounds are evaluated: 2^-20 .. 2^3, or, for a
 * composition whose spread in grid points (the square root of the sum of the steps' tilted
 * variances, times the count) is so large that its best order lies below 2^-16, the ladder
 * moved down to keep that order within it (make_layout). */
#define M0_DEFAULT 20

static const double *side_mass(const dpzo__pld_pmf *p, int s) { return s == 0 ? p->pess : p->opt; }

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
                double th = dpzo__pld_theta_at(st, m) * (sg ? -1.0 : 1.0);
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

typedef dpzo__pld_layout layout; /* pld_spectra.h */

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
        double a = dpzo__pld_chernoff_width(terms, L->st, n, s, 0, lt);
        double b = dpzo__pld_chernoff_width(terms, L->st, n, s, 1, lt);
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
        && dpzo__pld_compose_bytes(dpzo__pld_pow2_at_least(ceil(imax) - floor(bot) + 3.0), n,
                                   L->max_n, o->want_opt)
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
    L->N = dpzo__pld_pow2_at_least(L->span);
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
    /* one step once: its composition is itself, and the window holds its tilted masses as
     * they are, with no transform and so no rounding of one (err 0). The FFT's absolute
     * error, about 1e-13 an entry summed over the entries above epsilon, had made most of
     * the upper end where delta(eps) is flat: one Gaussian step of noise 0.1534 (q 1, sigma
     * 1.638, 114 steps merged), delta 0.99889, grid 1e-4 read 1.8e-4 for a truth of
     * 1.614e-6 (issue 30) */
    const int identity = n == 1 && terms[0].count == 1;
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
            out->folded = 1;
            double e = st->theta_err + 2.0 * U * (double)((p->n + N - 1) / N) * (1.0 + 4.0 * U);
            theta = e > theta ? e : theta;
        }
        if (identity) { /* what lies outside the window was folded into it */
            if (p->lo < L.w0 || p->lo + (long)p->n > L.w0 + (long)N)
                out->folded = 1;
            continue;
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
                zk[s] = dpzo__pld_power_bound(z[s], e, k, small_r2, &eb, &rb);
                sum_e += (j == 0 || j == jm ? 1.0 : 2.0) * eb;
            }
            work[j] = zk[0] + I * zk[1];
            work[jm] = conj(zk[0]) + I * conj(zk[1]);
        }
    }
    if (multi && !fused)
        dpzo__pld_spectra_assemble(work, N, o->want_opt, ws->prod, ws->ea, &sum_e);
    if (!identity) {
        err = dpzo__pld_inverse_err(work, N, eta, sum_e, fused ? sum_c : -1.0);
        dpzo__fft_inverse(ws->plan, work);
    }
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
        out->above[s] = all_below ? 0.0 : dpzo__pld_chernoff_tail(terms, L.st, n, s, 0, top);
        out->outside[s] = out->above[s] + (all_above ? 0.0 : dpzo__pld_chernoff_tail(terms, L.st, n, s, 1, bot));
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
