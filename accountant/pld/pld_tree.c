/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_tree.c: the composition of many distinct steps in a balanced tree of
 * short transforms.
 *
 * Cost. The flat composition (pld_compose.c) transforms every distinct step at the full
 * length N of the composed window: n N log N for n distinct steps. A step's tilted
 * distribution is narrow (its standard deviation is tens of grid points where the
 * composition's window is 2^18), so here the steps are composed pairwise in a balanced
 * binary tree: a node composes its two children at a length N_v that fits the window of
 * its own partial sum, and only the root works at length N. The bottom levels, where
 * most of the work was, use transforms of a few thousand points.
 *
 * Windows. Node v (the steps a..b-1, with their counts) has the tilted partial sum
 * S_v = sum of its steps' grid indices. Its window [w0_v, w0_v + N_v) is cut where
 * Chernoff's bound (the same exact cumulant generating functions as the root's,
 * pld_compose.c) leaves at most tau_v = tau_tilt / (number of intermediate nodes) of
 * tilted mass outside on each side; N_v is a power of two, at most its parent's (a
 * child's vector then lands in its parent's buffer without two entries meeting). The
 * node's result is the composition of its children folded modulo N_v onto the window.
 *
 * What folding at intermediate nodes costs. Take the product probability space of the
 * tilted steps (each normalised). If S_v lies in W_v for every intermediate node v, the
 * exact tree computation puts the outcome's mass at its true index (each node's entries
 * are indexed by residues mod N_v, and a window of N_v consecutive indices represents
 * each residue once; a child's value is re-placed in its parent by residue). Otherwise
 * the mass is "misplaced": it lands somewhere in the root window. By the union bound the
 * misplaced mass is at most m = sum_v P(S_v outside W_v) (tilted), each term bounded by
 * Chernoff at the window actually used; the root's own folding is the flat
 * composition's, treated as before (above, outside). In the delta of the composition a
 * misplaced outcome at true loss l > eps contributes at most exp(logscale - lambda eps)
 * times its tilted mass (lambda >= 0), and in the computed one at most
 * exp(logscale - lambda max(eps, l_bottom)) times it. So the upper ends add
 * m exp(logscale - lambda eps) and the lower ends subtract
 * m exp(logscale - lambda max(eps, l_bottom)) (pld_query.c, `misplaced`), whatever the
 * outcomes' positions. m is about 2 tau_tilt, below 1e-11 relative to delta.
 *
 * Rounding. The reference is the exact tree computation on the computed tilted masses
 * (their own relative error is `rel`, as in the flat composition). At each node the
 * existing machinery (pld_compose.c's file comment: componentwise forward error
 * eta(N_v) sum |x|, powers in polar form, products of spectra, inverse transform)
 * bounds |computed - exact| for every entry by e_fft(v), taking the children's computed
 * vectors as exact inputs. The children's own errors propagate as input perturbations:
 * with x_c the exact and x'_c = x_c + delta_c the computed children,
 *   x'_1 * x'_2 - x_1 * x_2 = delta_1 * x'_2 + x_1 * delta_2 (cyclic convolutions),
 * so each entry is off by at most |delta_1|_inf |x'_2|_1 + |delta_2|_inf |x_1|_1 (a child
 * is placed without overlap, so |delta_c|_inf is unchanged by the placement), and
 *   E_v = e_fft(v) + E_1 B_2 + E_2 B_1,  B_c = l1(x_c) + N_c E_c,
 * where l1(x_c), the l1 norm of the exact child, is the product of its steps' input
 * sums raised to their counts (folding keeps mass). Leaves are the steps' tilted masses,
 * exact inputs (E = 0); a step with count k is raised to its power per frequency as in the
 * flat composition. Where a step's grid is longer than its parent's window its masses
 * are folded with floating additions of nonnegative numbers: at most m - 1 additions an
 * entry (m = ceil(points / N_v)), a relative error of 2 (m - 1) u at most, added to the
 * relative error of the step's masses (theta_fold). The root's E is the reported `err`.
 * The pessimistic and optimistic masses share one complex transform, as before.
 *
 * Spectral nodes. Where a node's parent composes at the same length N and both of the
 * node's children have count 1, the node hands its parent its composed spectrum instead
 * of its vector: the inverse transform here and the forward one in the parent would only
 * reproduce it (the parent places a child by residue mod N, which the spectrum already
 * is; R_v, the index of its position 0 mod N, replaces its window's start). Its rounding
 * then stays in the spectrum, per side and frequency: the product's error bound ea of its
 * last pass (pld_spectra.c, dpzo__pld_spectra_step1), which the parent takes where a
 * child's forward transform error would be, plus the rounding of combining the sides
 * into one complex spectrum and separating them again. The reference for that spectrum
 * is the exact composition of the node's computed children, so their own errors still
 * propagate as input perturbations: E_v = E_1 B_2 + E_2 B_1, without e_fft (the node's
 * rounding reaches the parent's inverse transform through the product's errors, as the
 * flat composition's steps do). Its window no longer places anything (the parent folds
 * modulo the same N), yet its tail stays in m, which remains an upper bound. At the
 * bottom levels most nodes share their parent's length: two of a node's three
 * transforms are saved there (build() counts only the transforms done). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fft.h"
#include "pld_tree.h"

#define U (0.5 * DBL_EPSILON)

typedef struct tnode {
    size_t a, b;          /* the steps a .. b-1 */
    struct tnode *kid[2]; /* NULL for a step (b == a + 1) */
    size_t N;             /* window length (power of two) */
    long w0;              /* window [w0, w0 + N) */
    double tail[2];       /* tilted mass outside the window, per side (0 at the root) */
    double complex *y;    /* the result: y[i] at index w0 + i (pessimistic + i optimistic) */
    double E;             /* bound on |computed - exact| of every entry, both sides */
    double l1[2];         /* bound on the l1 norm of the exact result, per side */
    int spec;             /* y is the spectrum (file comment: spectral nodes) */
    double *es;           /* spec: its error per side and frequency pair, 2 (N/2 + 1) */
    uint64_t R;           /* spec: the index of position 0, mod N */
} tnode;

struct dpzo__pld_tree {
    tnode *nodes;
    size_t used, cap;
    tnode *root;
    dpzo__fft_plan *plan[64];
    double log_tau;
    unsigned long long cost;
    size_t peak; /* bytes of the children's vectors alive at once (planned) */
};

static unsigned log2u(size_t n)
{
    unsigned l = 0;
    while (((size_t)1 << l) < n)
        l++;
    return l;
}

/* The window of node v (not the root): Chernoff on the steps a .. b-1, clipped to their
 * support, at most max_N points. */
static void node_window(const dpzo__pld_term *terms, const dpzo__pld_layout *L, double log_tau,
                        int nsides, size_t max_N, tnode *v)
{
    const dpzo__pld_term *t = terms + v->a;
    const dpzo__pld_term_stats *st = L->st + v->a;
    size_t n = v->b - v->a;
    double M = 0.0, imin = 0.0, imax = 0.0, whi = 0.0, wlo = 0.0;
    for (size_t i = 0; i < n; i++) {
        M += (double)t[i].count * st[i].mean;
        imin += (double)t[i].count * (double)t[i].pmf->lo;
        imax += (double)t[i].count * (double)(t[i].pmf->lo + (long)t[i].pmf->n - 1);
    }
    for (int s = 0; s < nsides; s++) {
        double a = dpzo__pld_chernoff_width(t, st, n, s, 0, log_tau);
        double b = dpzo__pld_chernoff_width(t, st, n, s, 1, log_tau);
        whi = a > whi ? a : whi;
        wlo = b > wlo ? b : wlo;
    }
    double top = M + whi < imax ? M + whi : imax, bot = M - wlo > imin ? M - wlo : imin;
    double need = ceil(top) - floor(bot) + 3.0;
    size_t N = dpzo__pld_pow2_at_least(need);
    if (N > max_N || !(need < 0x1p40)) {
        /* capped by the parent: the window keeps the Chernoff widths' proportions (the
         * tail below is bounded at the window actually used) */
        N = max_N;
        double f = whi + wlo > 0.0 && isfinite(whi + wlo) ? wlo / (whi + wlo) : 0.5;
        bot = M - f * (double)(N - 3);
    }
    v->N = N;
    v->w0 = (long)floor(bot) - 1;
    double dt = (double)(v->w0 + (long)N - 1) - M, db = M - (double)v->w0;
    int all_below = (double)(v->w0 + (long)N - 1) >= imax, all_above = (double)v->w0 <= imin;
    for (int s = 0; s < 2; s++) {
        v->tail[s] = 0.0;
        if (s >= nsides)
            continue;
        double x = (all_below ? 0.0 : dpzo__pld_chernoff_tail(t, st, n, s, 0, dt))
                   + (all_above ? 0.0 : dpzo__pld_chernoff_tail(t, st, n, s, 1, db));
        v->tail[s] = x < 1.0 ? x : 1.0;
    }
}

static tnode *build(dpzo__pld_tree *T, const dpzo__pld_term *terms, const dpzo__pld_layout *L,
                    int nsides, size_t a, size_t b, size_t max_N, int root)
{
    tnode *v = &T->nodes[T->used++];
    memset(v, 0, sizeof *v);
    v->a = a;
    v->b = b;
    if (b - a == 1)
        return v; /* a step: placed in its parent's buffer */
    if (root) {
        v->N = L->N;
        v->w0 = L->w0;
    } else {
        node_window(terms, L, T->log_tau, nsides, max_N, v);
    }
    size_t m = a + (b - a) / 2;
    v->kid[0] = build(T, terms, L, nsides, a, m, v->N, 0);
    v->kid[1] = build(T, terms, L, nsides, m, b, v->N, 0);
    /* spectral where its parent has the same length and both children are of count 1 (the
     * product's last pass leaves the spectrum with its error per frequency) */
    v->spec = !root && v->N == max_N;
    for (int c = 0; c < 2; c++)
        if (v->kid[c]->kid[0] == NULL && terms[v->kid[c]->a].count != 1)
            v->spec = 0;
    /* cost: a forward transform per child that is not spectral, an inverse unless spectral */
    unsigned long long tr = v->spec ? 0 : 1;
    for (int c = 0; c < 2; c++)
        tr += v->kid[c]->spec ? 0 : 1;
    T->cost += tr * v->N * log2u(v->N);
    return v;
}

/* Bytes of a node's result (0 for a step, whose masses are placed directly). */
static size_t result_bytes(const tnode *k)
{
    if (k->kid[0] == NULL)
        return 0;
    return k->N * sizeof(double complex) + (k->spec ? 2 * (k->N / 2 + 1) * sizeof(double) : 0);
}

/* Bytes of children's vectors alive at once while v is composed (depth first). */
static size_t peak_bytes(const tnode *v)
{
    if (v->kid[0] == NULL)
        return 0;
    size_t b0 = result_bytes(v->kid[0]);
    size_t b1 = result_bytes(v->kid[1]);
    size_t p0 = peak_bytes(v->kid[0]), p1 = b0 + peak_bytes(v->kid[1]);
    size_t p = p0 > p1 ? p0 : p1;
    p = p > b0 + b1 ? p : b0 + b1;
    /* a spectral node's result is allocated while its second child's spectrum, read in
     * place, is still held (the first child's is freed by then) */
    if (v->spec && v->kid[1]->spec && b1 + result_bytes(v) > p)
        p = b1 + result_bytes(v);
    return p;
}

void dpzo__pld_tree_free(dpzo__pld_tree *T)
{
    if (T == NULL)
        return;
    for (size_t i = 0; i < T->used; i++) {
        free(T->nodes[i].y);
        free(T->nodes[i].es);
    }
    for (int i = 0; i < 64; i++)
        dpzo__fft_plan_free(T->plan[i]);
    free(T->nodes);
    free(T);
}

dpzo_status dpzo__pld_tree_plan(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n,
                                const dpzo__pld_compose_opts *o, const dpzo__pld_layout *L,
                                dpzo__pld_tree **tree, int *use, size_t *extra_bytes)
{
    *tree = NULL;
    *use = 0;
    *extra_bytes = 0;
    dpzo__pld_tree *T = calloc(1, sizeof *T);
    if (T == NULL || (T->nodes = calloc(2 * n, sizeof *T->nodes)) == NULL) {
        free(T);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory planning a composition");
    }
    T->cap = 2 * n;
    /* the intermediate nodes share tau_tilt (n - 2 of them) */
    T->log_tau = log(o->tau_tilt) - log((double)(n > 2 ? n - 2 : 1));
    T->root = build(T, terms, L, o->want_opt ? 2 : 1, 0, n, L->N, 1);
    /* plans for the shorter lengths (the root's is the workspace's) */
    size_t plans = 0;
    for (size_t N = 1024; N < L->N; N <<= 1)
        plans += dpzo__fft_plan_bytes(N);
    T->peak = peak_bytes(T->root);
    *extra_bytes = plans + T->peak + T->cap * sizeof *T->nodes;
    /* the flat composition: one transform per distinct step and an inverse at length N */
    unsigned long long flat = (unsigned long long)(n + 1) * L->N * log2u(L->N);
    *use = T->cost < flat / 2;
    *tree = T;
    return DPZO_OK;
}

static const dpzo__fft_plan *get_plan(dpzo__pld_tree *T, const dpzo__pld_ws *ws, size_t N)
{
    if (N == ws->plan_n)
        return ws->plan;
    unsigned l = log2u(N);
    if (T->plan[l] == NULL)
        T->plan[l] = dpzo__fft_plan_create(N);
    return T->plan[l];
}

typedef struct {
    dpzo__pld_tree *T;
    const dpzo__pld_term *terms;
    double d;
    const dpzo__pld_compose_opts *o;
    const dpzo__pld_layout *L;
    dpzo__pld_ws *ws;
    double theta_fold;
} evalctx;

/* Composes node v's children into ws->work (see the file comment); returns -1 when out of
 * memory. At the root the result is left in ws as dpzo__pld_unpack leaves it. */
static int eval(evalctx *X, tnode *v, int root)
{
    for (int c = 0; c < 2; c++)
        if (v->kid[c]->kid[0] != NULL && eval(X, v->kid[c], 0))
            return -1;
    const dpzo__pld_compose_opts *o = X->o;
    const int nsides = o->want_opt ? 2 : 1;
    const size_t N = v->N, H = N / 2 + 1;
    const dpzo__fft_plan *plan = get_plan(X->T, X->ws, N);
    if (plan == NULL)
        return -1;
    double complex *work = X->ws->work;
    double complex *prod = X->ws->prod;
    double *ra = X->ws->ra, *ea = X->ws->ea;
    /* a first child of count 1 (an intermediate node, or a step of count 1) starts the
     * product itself (dpzo__pld_spectra_step1) */
    const tnode *k0 = v->kid[0];
    if (k0->kid[0] == NULL && X->terms[k0->a].count != 1)
        for (size_t j = 0; j < 2 * H; j++) {
            prod[j] = 1.0;
            ra[j] = 1.0;
            ea[j] = 0.0;
        }
    double sum_e = 0.0, sum_c = 0.0;
    int fused = 0; /* the last child's pass left the composed spectrum, sum_e and sum_c */
    const double eta = dpzo__fft_error_bound(N);
    uint64_t R = 0; /* the index of the composed entry at position 0 is R mod N */
    double B[2] = {0.0, 0.0}, Ek[2] = {0.0, 0.0};
    v->l1[0] = v->l1[1] = 1.0;
    unsigned forward = 0; /* transforms counted as the flat composition counts its steps' */
    for (int c = 0; c < 2; c++) {
        tnode *k = v->kid[c];
        if (!k->spec)
            memset(work, 0, N * sizeof *work);
        double l1 = 0.0, sums[2] = {0.0, 0.0};
        double nsum; /* the number of terms summed into l1 */
        uint64_t count = 1;
        if (k->kid[0] == NULL) {
            /* a step: its tilted masses at (index - shift) mod N */
            const dpzo__pld_term *t = &X->terms[k->a];
            const dpzo__pld_pmf *p = t->pmf;
            const dpzo__pld_term_stats *st = &X->L->st[k->a];
            count = t->count;
            long pos0 = (p->lo - st->shift) % (long)N;
            size_t pos = (size_t)(pos0 < 0 ? pos0 + (long)N : pos0);
            /* tilted masses a_i e^{lambda l_i - c}, formed as the flat composition forms
             * them (dpzo__pld_tilt_masses; its bound dpzo__pld_tilt_err) */
            dpzo__pld_tilt T;
            dpzo__pld_tilt_init(&T, o->lambda, X->d);
            double fb = 0.0;
            for (size_t k0 = 0; k0 < p->n; k0 += DPZO__PLD_TILT_BLOCK) {
                const size_t mb = p->n - k0 < DPZO__PLD_TILT_BLOCK ? p->n - k0 : DPZO__PLD_TILT_BLOCK;
                double w[2][DPZO__PLD_TILT_BLOCK] = {{0.0}};
                for (int s = 0; s < nsides; s++)
                    dpzo__pld_tilt_masses(&T, p, s == 0 ? p->pess : p->opt, k0, mb, st->c[s],
                                          w[s], &fb);
                for (size_t j = 0; j < mb; j++, pos = (pos + 1) & (N - 1)) {
                    work[pos] += w[0][j] + I * w[1][j];
                    sums[0] += w[0][j];
                    sums[1] += w[1][j];
                }
            }
            l1 = sums[0] + sums[1];
            nsum = 2.0 * (double)p->n;
            size_t m = (p->n + N - 1) / N;
            /* relative errors: the weights' (dpzo__pld_tilt_err, relative to the larger
             * |c|), and folding, m - 1 additions of nonnegative numbers an entry */
            double cm = fmax(fabs(st->c[0]), nsides > 1 ? fabs(st->c[1]) : 0.0);
            double tf = (dpzo__pld_tilt_err(p, o->lambda, X->d, cm, fb) + 2.0 * (double)(m - 1) * U)
                        * (1.0 + 4.0 * U * ((double)m + 100.0));
            X->theta_fold = tf > X->theta_fold ? tf : X->theta_fold;
            uint64_t sh = (uint64_t)((st->shift % (long)N + (long)N) % (long)N);
            R = (R + dpzo__pld_mulmod(count % N, sh, N)) % N;
            k->E = 0.0;
            for (int s = 0; s < 2; s++) {
                /* the exact sum of the placed masses (recursive summation of n
                 * nonnegative numbers: relative error below (n + 1) u), to the power k */
                double sb = sums[s] * (1.0 + 2.0 * U * ((double)p->n + 2.0));
                k->l1[s] = s < nsides ? pow(sb, (double)count) * (1.0 + 1e-12) : 0.0;
            }
        } else if (k->spec) {
            /* a spectral node of this length: its spectrum (read where it is), position 0
             * at index R_c */
            nsum = 0.0;
            R = (R + k->R) % N;
        } else {
            /* an intermediate node: entry i (index w0_c + i) at position i */
            nsum = 2.0 * (double)k->N;
            for (size_t i = 0; i < k->N; i++) {
                work[i] = k->y[i];
                l1 += fabs(creal(k->y[i])) + fabs(cimag(k->y[i]));
            }
            uint64_t w = (uint64_t)((k->w0 % (long)N + (long)N) % (long)N);
            R = (R + w) % N;
            free(k->y);
            k->y = NULL;
        }
        for (int s = 0; s < 2; s++)
            v->l1[s] *= k->l1[s] * (1.0 + 4.0 * U);
        B[c] = fmax(k->l1[0], k->l1[1]) + (double)k->N * k->E;
        Ek[c] = k->E;
        if (!k->spec) {
            dpzo__fft_forward(plan, work);
            forward++;
        }
        /* forward rounding, componentwise; the computed l1 norm, a sum of nsum
         * nonnegative terms, is within (nsum + 2) u of the exact one */
        const double ec = eta * l1 * (1.0 + 2.0 * U * (nsum + 4.0));
        if (count == 1) {
            fused = c == 1;
            /* a spectral node's own spectrum goes straight into its result */
            if (fused && v->spec
                && ((v->es = malloc(2 * H * sizeof *v->es)) == NULL
                    || (v->y = malloc(N * sizeof *v->y)) == NULL))
                return -1;
            dpzo__pld_spectra_step1(k->spec ? k->y : work, fused && v->spec ? v->y : work, N,
                                    nsides, ec, k->spec ? k->es : NULL, c == 0, fused, prod, ra,
                                    ea, fused ? v->es : NULL, &sum_e, &sum_c);
            if (k->spec) {
                free(k->y);
                free(k->es);
                k->y = NULL;
                k->es = NULL;
            }
            continue;
        }
        /* count > 1 here (a step of count 1 went through dpzo__pld_spectra_step1) */
        dpzo__pld_spectra_stepk(work, N, nsides, ec, count, prod, ra, ea);
    }
    dpzo__pld_fft_points += (unsigned long long)N * forward;
    if (v->spec) {
        /* the spectrum stays (fused: both children of count 1, build()); the children's own
         * errors, as input perturbations, are its E */
        v->E = (Ek[0] * B[1] + Ek[1] * B[0]) * (1.0 + 8.0 * U);
        v->R = R;
        return 0;
    }
    if (!fused)
        dpzo__pld_spectra_assemble(work, N, o->want_opt, prod, ea, &sum_e);
    double efft = dpzo__pld_inverse_err(work, N, eta, sum_e, fused ? sum_c : -1.0);
    dpzo__fft_inverse(plan, work);
    /* the children's errors as input perturbations (file comment) */
    v->E = (efft + Ek[0] * B[1] + Ek[1] * B[0]) * (1.0 + 8.0 * U);
    uint64_t base = (uint64_t)((v->w0 % (long)N + (long)N) % (long)N);
    uint64_t start = (base + N - R) % N; /* position of index w0 */
    if (root) {
        dpzo__pld_unpack(work, N, (size_t)start, o->want_opt, X->ws->y);
        return 0;
    }
    v->y = malloc(N * sizeof *v->y);
    if (v->y == NULL)
        return -1;
    for (size_t i = 0; i < N; i++)
        v->y[i] = work[(start + i) & (N - 1)];
    return 0;
}

static void sum_tails(const tnode *v, int root, double m[2])
{
    if (v->kid[0] == NULL)
        return;
    if (!root)
        for (int s = 0; s < 2; s++)
            m[s] += v->tail[s];
    sum_tails(v->kid[0], 0, m);
    sum_tails(v->kid[1], 0, m);
}

dpzo_status dpzo__pld_tree_compose(dpzo_ctx *ctx, dpzo__pld_tree *T, const dpzo__pld_term *terms,
                                   double d, const dpzo__pld_compose_opts *o,
                                   const dpzo__pld_layout *L, dpzo__pld_ws *ws, double *err,
                                   double misplaced[2], double *theta_fold)
{
    evalctx X = {T, terms, d, o, L, ws, 0.0};
    if (eval(&X, T->root, 1))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory composing (FFT size %zu)", L->N);
    *err = T->root->E;
    misplaced[0] = misplaced[1] = 0.0;
    sum_tails(T->root, 1, misplaced);
    for (int s = 0; s < 2; s++)
        misplaced[s] *= 1.0 + 4.0 * U * (double)T->used;
    *theta_fold = X.theta_fold;
    return DPZO_OK;
}
