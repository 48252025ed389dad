/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_direct.c: composition of few steps with componentwise relative error
 * (the "split" composition), for the PLD and PRV accountants.
 *
 * Why. The FFT composition (pld_compose.c) has an absolute error per entry of about
 * eta(N) times the total (tilted) mass. A Poisson-sampled step at a small rate q has
 * almost all of its mass within a few grid points of loss 0 and a tail of mass about q
 * that decides delta; no exponential tilt makes the masses near epsilon large against the
 * total (the tilt that would needs the window to reach losses of hundreds), so with
 * delta below about 1e-11 the FFT's error terms exceed delta itself, and they grow with
 * the FFT length, i.e. a finer grid gave a looser bound (issue 20: 0.163 at grid 1e-4,
 * 0.240 at 1e-5, where the truth is 0.0516).
 *
 * Method. Each step's tilted, normalised masses (the same tilt as pld_compose.c) are
 * split into a head h (the narrowest window of 16, 32, ... points, up to HEAD_MAX and the
 * heads' work bound, leaving at most HEAD_REST of the mass outside) and a tail t (the
 * rest). The steps are composed one at a time, keeping two nonnegative arrays:
 * A0 = the composition of the heads so far, A1 = everything else. A step does
 *     A0' = A0 * h                   (direct convolution),
 *     A1' = A1 * h + A0 * t + A1 * t (each part direct where that costs at most
 *                                     DIRECT_FACTOR transforms, A1 * t at most one;
 *                                     else by FFT, the FFT parts summed in one spectrum).
 * A direct part is a sum of products of nonnegative numbers, so it has a componentwise
 * RELATIVE error (Higham, Accuracy and Stability, eq. 3.4: a sum of m rounded
 * nonnegative products is within gamma_m = m u / (1 - m u) of its value): tiny tail
 * masses stay accurate. An FFT part's error is absolute but proportional to
 * ||x||_1 ||y||_1 with x or y a tail (mass about q) or A1 (about K q), not the whole
 * distribution (mass 1).
 *
 * Error bound. Let x be the exact composition of the exact tilted masses (exact here: the
 * tilt's normaliser c is the computed double, which the query uses as well) and y the
 * computed arrays. By induction every entry satisfies |y - x| <= r x + e:
 *   - a step's tilted masses a' = a (1 +- theta) (theta: the rounding of the exponent
 *     log a + lambda l - c and of exp, bounded below), and sum a' <= S (rounded up);
 *   - direct convolution of y with a': |y * a' - x * a| <= ((1 + r)(1 + theta) - 1) x*a
 *     + e S, as all terms are nonnegative; its rounding adds gamma_m relative (m: the
 *     number of products and parts summed into one entry, all nonnegative);
 *   - FFT convolution of nonnegative x (||x||_1 <= A) with y (||y||_1 <= B): the
 *     forward transforms are within eta A and eta B componentwise (fft.h), the spectra
 *     bounded by A and B, the complex product adds at most 3u relative (Higham Lemma 3.5:
 *     sqrt 2 gamma_2), the sum of at most two parts' spectra gamma_2, and the inverse adds
 *     eta (1/M) sum |C'_j| and (1/M) sum |C'_j - C_j| per entry, so each entry is within
 *     kappa sum(A B) of the exact convolutions of the computed inputs,
 *     kappa = eta (2 + eta) + 3u (1 + eta)^2 + (gamma_2 + eta (1 + gamma_2)) (1 + eta)^2
 *     (1 + 3u). Negative results are raised to 0 (the exact value is >= 0, so this only
 *     moves it closer);
 *   - underflow: each product that underflows, and each tilted mass whose exp underflows,
 *     errs by at most 2^-1074 (additions of subnormals are exact); the steps' masses sum
 *     to about 1, so (number of addends + H + 2) 2^-1074 a step covers them, and the FFT
 *     parts add 8 M (log2 M + 2) 2^-1074.
 * So r' = (1 + r)(1 + theta)(1 + gamma_m) - 1 and
 * e' = (e (S + S_t) + kappa sum(A B) + under)(1 + gamma_m): A1's error meets the whole step
 * (S), A0's the tail (S_t), both at most e. The result y = A0 + A1 is within r x + 2e (and
 * one more rounding), so x <= (y + 2e)(1 + r/(1 - r)) and x >= (y - 2e)(1 - r), which is
 * what pld_query.c applies with err = 2e and rel.
 * The whole support is composed (no window, no aliasing): above = outside = 0.
 *
 * When. The split composition is run next to the FFT composition (pld.c takes the tighter
 * of the two bounds, both proven) when every step's head holds all but a fraction
 * SPLIT_TAIL of its tilted mass (sampled steps at small rates), the composition has at
 * most SPLIT_MAX_STEPS steps, its work is at most SPLIT_MAX_WORK multiply-adds a side
 * and its memory fits; otherwise *used = 0. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fft.h"
#include "pld_internal.h"

#define U (0.5 * DBL_EPSILON)
#define HEAD_MAX 4096
#define HEAD_REST 1e-9
#define HEAD_WORK 3e8 /* bound on K^2 H^2 / 2, the heads' direct work */
#define SPLIT_TAIL 1e-2
#define SPLIT_MAX_STEPS 64
#define SPLIT_MAX_WORK 1e9 /* multiply-adds (FFT: 5 M log2 M per transform) */

void dpzo__pld_split_ws_free(dpzo__pld_split_ws *w)
{
    if (w == NULL)
        return;
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static double gamma_m(double m) { return m * U / (1.0 - m * U) * (1.0 + 4.0 * U); }

/* a step's tilted masses on one side, and its split */
typedef struct {
    double *a;     /* n tilted normalised masses */
    long lo;       /* grid index of a[0] */
    size_t n;
    size_t hs, he; /* head: a[hs .. he) */
    double c;      /* log normaliser */
    double theta;  /* relative error of each a[k] */
    double S;      /* >= sum of a (computed values) */
    double St;     /* >= sum of the tail's computed values */
} tstep;

static int make_step(const dpzo__pld_pmf *p, const double *m, double d, double lambda, size_t hcap,
                     tstep *ts)
{
    ts->lo = p->lo;
    ts->n = p->n;
    ts->a = malloc((p->n ? p->n : 1) * sizeof *ts->a);
    if (ts->a == NULL)
        return -1;
    double mx = -INFINITY, amax = 0.0;
    for (size_t k = 0; k < p->n; k++) {
        if (m[k] > 0.0) {
            double l = ((double)(p->lo + (long)k) + p->off) * d;
            ts->a[k] = log(m[k]) + lambda * l;
            mx = ts->a[k] > mx ? ts->a[k] : mx;
            double b = fabs(log(m[k])) + fabs(lambda * l);
            amax = b > amax ? b : amax;
        } else {
            ts->a[k] = -INFINITY;
        }
    }
    if (!isfinite(mx))
        return -2;
    double sum = 0.0;
    for (size_t k = 0; k < p->n; k++)
        sum += exp(ts->a[k] - mx);
    ts->c = mx + log(sum);
    if (!isfinite(ts->c))
        return -2;
    /* exponent log m + lambda l - c: log within 2u |log m| (1 ulp), l = (i + off) d within
     * 2.01u |l|, lambda l within 3.01u, two additions within u of partial sums below
     * |log m| + |lambda l| + |c|; exp adds 2u (1 ulp) and the exponent's error relatively */
    double ex = 8.0 * U * (amax + fabs(ts->c) + 1.0);
    ts->theta = expm1(ex * (1.0 + 1e-6)) * (1.0 + 1e-6) + 4.0 * U;
    double s = 0.0;
    for (size_t k = 0; k < p->n; k++) {
        ts->a[k] = exp(ts->a[k] - ts->c);
        s += ts->a[k];
    }
    ts->S = s * (1.0 + 2.0 * ((double)p->n + 2.0) * U);
    /* the head: the narrowest window (16, 32, ... points, at most hcap) leaving at most
     * HEAD_REST of the mass outside, else the window of hcap points with the most mass
     * (the choice only affects the work and the FFT parts' error, not soundness) */
    size_t H = 16, best = 0;
    for (;; H *= 2) {
        if (H >= hcap || H >= p->n)
            H = hcap < p->n ? hcap : p->n;
        double w = 0.0, bw = -1.0;
        for (size_t k = 0; k < p->n; k++) {
            w += ts->a[k];
            if (k >= H)
                w -= ts->a[k - H];
            if (k + 1 >= H && w > bw) {
                bw = w;
                best = k + 1 - H;
            }
        }
        if (s - bw <= HEAD_REST * s || H == hcap || H == p->n)
            break;
    }
    ts->hs = best;
    ts->he = best + H;
    double st = 0.0;
    for (size_t k = 0; k < p->n; k++)
        if (k < ts->hs || k >= ts->he)
            st += ts->a[k];
    ts->St = st * (1.0 + 2.0 * ((double)p->n + 2.0) * U);
    return 0;
}

/* z[i + j + zoff] += x[i] y[j] for j in [y0, y1): the direct part */
static void conv_add(double *restrict z, const double *restrict x, size_t nx, const double *restrict y,
                     size_t y0, size_t y1, size_t zoff)
{
    for (size_t i = 0; i < nx; i++) {
        double xi = x[i];
        if (xi == 0.0)
            continue;
        double *zz = z + zoff + i;
        for (size_t j = y0; j < y1; j++)
            zz[j] += xi * y[j];
    }
}

static size_t pow2_ge(size_t x)
{
    size_t n = 2;
    while (n < x)
        n <<= 1;
    return n;
}

/* multiply-adds of one transform of length M */
static double fft_work(size_t M) { return 5.0 * (double)M * log2((double)M); }

/* How one step's parts are computed (the same choice in the work estimate and in the
 * composition). A0: l0 points, A1: l1 points (0 before it exists), the step: n points,
 * head H. Direct where it costs at most DIRECT_FACTOR transforms (the parts A1 * h and
 * A0 * t, whose FFT error is linear in the tail mass) or one transform (A1 * t, whose FFT
 * error is the product of two tail masses). */
#define DIRECT_FACTOR 4.0
typedef struct {
    int d1, d2, d3; /* A1 * h, A0 * t, A1 * t direct */
    int any_fft;
    size_t M;
    double work;
} step_plan;

static step_plan plan_step(size_t l0, size_t l1, size_t n, size_t H)
{
    step_plan P = {1, 1, 1, 0, 0, (double)l0 * (double)H};
    /* A0 lies within A1's range (l0 <= l1): both parts' linear convolutions fit in l1 + n */
    P.M = pow2_ge((l0 > l1 ? l0 : l1) + n);
    double f = fft_work(P.M), tl = (double)(n - H);
    if (l1 && (double)l1 * (double)H > DIRECT_FACTOR * f)
        P.d1 = 0;
    if (tl > 0.0 && (double)l0 * tl > DIRECT_FACTOR * f)
        P.d2 = 0;
    if (l1 && tl > 0.0 && (double)l1 * tl > f)
        P.d3 = 0;
    P.any_fft = !P.d1 || !P.d2 || !P.d3;
    if (l1)
        P.work += P.d1 ? (double)l1 * (double)H : 0.0;
    P.work += P.d2 ? (double)l0 * tl : 0.0;
    if (l1)
        P.work += P.d3 ? (double)l1 * tl : 0.0;
    if (P.any_fft)
        P.work += 5.0 * f;
    return P;
}

/* The support's length and the work of composing steps st[0 .. n) (counts from terms). */
static double split_work(const dpzo__pld_term *terms, const tstep *st, size_t n)
{
    double w = 0.0;
    size_t l0 = 0, l1 = 0;
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (uint64_t k = 0; k < terms[t].count; k++) {
            size_t H = st[t].he - st[t].hs;
            if (first) {
                first = 0;
                l0 = H;
                l1 = st[t].n;
                continue;
            }
            step_plan P = plan_step(l0, l1, st[t].n, H);
            w += P.work;
            l0 += H - 1;
            l1 += st[t].n - 1;
        }
    return w;
}

/* acc += FFT(x shifted by xshift) FFT(y restricted to [y0, y1) less [hs, he)) (cx, cy:
 * scratch) */
static void fft_part(const dpzo__fft_plan *plan, size_t M, double complex *acc, double complex *cx,
                     double complex *cy, const double *x, size_t nx, size_t xshift, const double *y,
                     size_t y0, size_t y1, size_t hs, size_t he)
{
    memset(cx, 0, M * sizeof *cx);
    memset(cy, 0, M * sizeof *cy);
    for (size_t i = 0; i < nx; i++)
        cx[i + xshift] = x[i];
    for (size_t j = y0; j < y1; j++)
        if (j < hs || j >= he)
            cy[j] = y[j];
    dpzo__fft_forward(plan, cx);
    dpzo__fft_forward(plan, cy);
    for (size_t j = 0; j < M; j++)
        acc[j] += cx[j] * cy[j];
}

static double sum_up(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s * (1.0 + 2.0 * ((double)n + 2.0) * U);
}

/* The composition of all steps on one side into y (length N, grid indices from base), with
 * its error terms (see the file comment). */
static dpzo_status compose_side(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n,
                                const tstep *st, size_t N, long base, double *y, double *r_out,
                                double *e_out)
{
    double *buf = malloc(4 * N * sizeof *buf);
    if (buf == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (split, %zu points)", N);
    /* A0 and A1 (and their next versions) on absolute grid index ranges */
    double *A0 = buf, *A0n = buf + N, *A1 = buf + 2 * N, *A1n = buf + 3 * N;
    long s0 = 0, s1 = 0;
    size_t l0 = 0, l1 = 0;
    double r = 0.0, e = 0.0;
    double complex *cw = NULL;
    dpzo__fft_plan *plan = NULL;
    size_t plan_n = 0;
    dpzo_status status = DPZO_OK;
    int first = 1;
    for (size_t t = 0; t < n; t++) {
        const tstep *s = &st[t];
        size_t H = s->he - s->hs;
        for (uint64_t k = 0; k < terms[t].count; k++) {
            if (first) {
                first = 0;
                s0 = s->lo + (long)s->hs;
                l0 = H;
                memcpy(A0, s->a + s->hs, H * sizeof *A0);
                s1 = s->lo;
                l1 = s->n;
                memcpy(A1, s->a, s->n * sizeof *A1);
                memset(A1 + s->hs, 0, H * sizeof *A1);
                r = s->theta;
                e = DBL_TRUE_MIN; /* a tilted mass whose exp underflowed */
                continue;
            }
            step_plan P = plan_step(l0, l1, s->n, H);
            /* A0' = A0 * h */
            long ns0 = s0 + s->lo + (long)s->hs;
            size_t nl0 = l0 + H - 1;
            memset(A0n, 0, nl0 * sizeof *A0n);
            conv_add(A0n, A0, l0, s->a + s->hs, 0, H, 0);
            /* A1' on the union of the parts' ranges: from min(s0, s1) + lo */
            long lo1 = (s1 < s0 ? s1 : s0) + s->lo;
            long e0 = s0 + (long)l0, e1 = s1 + (long)l1;
            long hi1 = (e0 > e1 ? e0 : e1) - 1 + s->lo + (long)s->n - 1;
            size_t nl1 = (size_t)(hi1 - lo1 + 1);
            memset(A1n, 0, nl1 * sizeof *A1n);
            const size_t z1 = (size_t)(s1 - (lo1 - s->lo)), z0 = (size_t)(s0 - (lo1 - s->lo));
            double m = 0.0, efft = 0.0, under = 0.0; /* addends per entry */
            if (P.d1) {
                conv_add(A1n, A1, l1, s->a + s->hs, 0, H, z1 + s->hs);
                m += (double)(H < l1 ? H : l1);
            }
            if (P.d2) {
                conv_add(A1n, A0, l0, s->a, 0, s->hs, z0);
                conv_add(A1n, A0, l0, s->a, s->he, s->n, z0);
                m += (double)l0;
            }
            if (P.d3) {
                conv_add(A1n, A1, l1, s->a, 0, s->hs, z1);
                conv_add(A1n, A1, l1, s->a, s->he, s->n, z1);
                m += (double)(l1 < s->n ? l1 : s->n);
            }
            if (P.any_fft) {
                size_t M = P.M;
                if (plan_n != M) {
                    dpzo__fft_plan_free(plan);
                    free(cw);
                    plan = dpzo__fft_plan_create(M);
                    cw = malloc(3 * M * sizeof *cw);
                    plan_n = M;
                    if (plan == NULL || cw == NULL) {
                        status = dpzo__fail(ctx, DPZO_ENOMEM,
                                            "out of memory composing (split, FFT size %zu)", M);
                        goto done;
                    }
                }
                double complex *acc = cw, *cx = cw + M, *cy = cw + 2 * M;
                memset(acc, 0, M * sizeof *acc);
                /* sum over the FFT parts of ||x||_1 ||y||_1 */
                double ab = 0.0;
                const double Sh = sum_up(s->a + s->hs, H);
                if (!P.d1 || !P.d3) {
                    /* A1 against the head (d1 off), the tail (d3 off) or the whole step */
                    int head_only = !P.d1 && P.d3, tail_only = P.d1 && !P.d3;
                    size_t y0 = head_only ? s->hs : 0, y1 = head_only ? s->he : s->n;
                    size_t hs = tail_only ? s->hs : 0, he = tail_only ? s->he : 0;
                    fft_part(plan, M, acc, cx, cy, A1, l1, 0, s->a, y0, y1, hs, he);
                    double B = (!P.d1 ? Sh : 0.0) + (!P.d3 ? s->St : 0.0);
                    ab += sum_up(A1, l1) * B;
                }
                if (!P.d2) {
                    /* A0 against the tail; A0 lies within A1's range, so shifted by
                     * s0 - s1 it shares A1's output offset z1 */
                    fft_part(plan, M, acc, cx, cy, A0, l0, (size_t)(s0 - s1), s->a, 0, s->n,
                             s->hs, s->he);
                    ab += sum_up(A0, l0) * s->St;
                }
                dpzo__fft_inverse(plan, acc);
                /* per part: forward errors eta A, eta B, spectra within A and B, product 3u
                 * (Higham Lemma 3.5), the sum of at most two spectra gamma_2, the inverse
                 * eta (1/M) sum |C'_j|; with (1/M) sum |C'_j - C_j| this bounds each entry */
                double eta = dpzo__fft_error_bound(M);
                double q1 = (1.0 + eta) * (1.0 + eta) * (1.0 + 3.0 * U);
                double kappa = eta * (2.0 + eta) + 3.0 * U * (1.0 + eta) * (1.0 + eta)
                               + (gamma_m(2.0) + eta * (1.0 + gamma_m(2.0))) * q1;
                efft = kappa * ab * (1.0 + 16.0 * U);
                under = 8.0 * (double)M * (log2((double)M) + 2.0) * DBL_TRUE_MIN;
                const size_t zf = z1;
                for (size_t i = 0; i < M && i + zf < nl1; i++) {
                    double v = creal(acc[i]);
                    if (v > 0.0)
                        A1n[i + zf] += v;
                }
                m += 1.0;
            }
            double g = gamma_m(m + (double)H + 2.0);
            r = ((1.0 + r) * (1.0 + s->theta) * (1.0 + g) - 1.0) * (1.0 + 4.0 * U);
            e = (e * (s->S + s->St) + efft + under + (m + (double)H + 2.0) * DBL_TRUE_MIN)
                * (1.0 + g) * (1.0 + 4.0 * U);
            double *tmp = A0;
            A0 = A0n;
            A0n = tmp;
            tmp = A1;
            A1 = A1n;
            A1n = tmp;
            s0 = ns0;
            l0 = nl0;
            s1 = lo1;
            l1 = nl1;
        }
    }
    /* y = A0 + A1 on [base, base + N): each within r x + e, the sum within r x + 2e, and
     * its rounding */
    memset(y, 0, N * sizeof *y);
    for (size_t i = 0; i < l1; i++)
        y[(size_t)(s1 - base) + i] = A1[i];
    for (size_t i = 0; i < l0; i++)
        y[(size_t)(s0 - base) + i] += A0[i];
    r = ((1.0 + r) * (1.0 + U) - 1.0) * (1.0 + 4.0 * U);
    e = 2.0 * e * (1.0 + U) * (1.0 + 4.0 * U);
    *r_out = r;
    *e_out = e;
done:
    dpzo__fft_plan_free(plan);
    free(cw);
    free(buf);
    return status;
}

dpzo_status dpzo__pld_compose_split(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n, double d,
                                    const dpzo__pld_compose_opts *o, dpzo__pld_split_ws *ws,
                                    dpzo__pld_composed *out, int *used)
{
    memset(out, 0, sizeof *out);
    *used = 0;
    double K = 0.0, L = 1.0;
    for (size_t t = 0; t < n; t++) {
        K += (double)terms[t].count;
        L += (double)terms[t].count * ((double)terms[t].pmf->n - 1.0);
    }
    if (n == 0 || K > SPLIT_MAX_STEPS || K < 1.0 || L > 0x1p28)
        return DPZO_OK;
    const size_t N = (size_t)L;
    int nsides = o->want_opt ? 2 : 1;
    /* the result (2 N), the running arrays (4 N), three FFT buffers of at most
     * pow2(N + the widest step) points, the tilted steps */
    size_t maxn = 0;
    for (size_t t = 0; t < n; t++)
        maxn = terms[t].pmf->n > maxn ? terms[t].pmf->n : maxn;
    size_t bytes = 6 * N * sizeof(double) + 3 * pow2_ge(N + maxn) * sizeof(double complex);
    for (size_t t = 0; t < n; t++)
        bytes += terms[t].pmf->n * sizeof(double) * (size_t)nsides;
    if (bytes > o->memory_limit)
        return DPZO_OK;
    /* the heads' direct work is about K^2 H^2 / 2 */
    double hc = floor(sqrt(2.0 * HEAD_WORK) / K);
    size_t hcap = hc < (double)HEAD_MAX ? (size_t)hc : HEAD_MAX;
    if (hcap < 16)
        hcap = 16;
    tstep *st = calloc(n * (size_t)nsides, sizeof *st);
    if (st == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (split)");
    dpzo_status status = DPZO_OK;
    for (int s = 0; s < nsides; s++) {
        for (size_t t = 0; t < n; t++) {
            const dpzo__pld_pmf *p = terms[t].pmf;
            tstep *ts = &st[(size_t)s * n + t];
            int rc = make_step(p, s == 0 ? p->pess : p->opt, d, o->lambda, hcap, ts);
            if (rc == -1) {
                status = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (split)");
                goto done;
            }
            /* not a sampled step's shape (or no mass): the FFT composition alone */
            if (rc || ts->St > SPLIT_TAIL * ts->S)
                goto done;
        }
        double w = split_work(terms, &st[(size_t)s * n], n);
        if (w > SPLIT_MAX_WORK)
            goto done;
    }
    if (ws->cap < N) {
        free(ws->buf);
        ws->buf = malloc(2 * N * sizeof *ws->buf);
        ws->cap = ws->buf ? N : 0;
        if (ws->buf == NULL) {
            status = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (split)");
            goto done;
        }
    }
    long base = 0;
    double off = 0.0;
    for (size_t t = 0; t < n; t++) {
        base += (long)terms[t].count * terms[t].pmf->lo;
        off += (double)terms[t].count * terms[t].pmf->off;
    }
    double rel = 0.0;
    for (int s = 0; s < nsides; s++) {
        double r = 0.0, e = 0.0;
        status = compose_side(ctx, terms, n, &st[(size_t)s * n], N, base, ws->buf + (size_t)s * N,
                              &r, &e);
        if (status)
            goto done;
        out->y[s] = ws->buf + (size_t)s * N;
        out->err[s] = e;
        rel = r > rel ? r : rel;
        for (size_t t = 0; t < n; t++)
            out->logscale[s] += (double)terms[t].count * st[(size_t)s * n + t].c;
    }
    out->d = d;
    out->lambda = o->lambda;
    out->w0 = base;
    out->off = off;
    out->N = N;
    /* x <= (y + e)(1 + r/(1 - r)); 8u as in pld_compose.c for the query's own roundings */
    out->rel = rel / (1.0 - rel) * (1.0 + 1e-6) + 8.0 * U;
    out->inf_mass = dpzo__pld_inf_mass(terms, n);
    out->bytes = bytes;
    out->top_covered = 1;
    *used = 1;
done:
    for (size_t i = 0; i < n * (size_t)nsides; i++)
        free(st[i].a);
    free(st);
    return status;
}
