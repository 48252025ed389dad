/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld.c: the PLD and PRV accountants' public functions (dpzo/pld.h).
 *
 * An event is flattened into distinct steps (Gaussian, Laplace, Poisson-sampled
 * Gaussian or Laplace, Gaussian on a batch drawn without replacement, randomized response,
 * discrete Laplace, mixture of Gaussians) with counts.
 * Each step is discretised once per adjacency direction (symmetric steps once), the
 * steps of a direction are composed by one FFT per distinct step (pld_compose.c), or for
 * many distinct steps in a tree of shorter transforms (pld_tree.c), and the answer is
 * read off with its error terms (pld_query.c).
 *
 * Tilt. lambda = alpha* - 1 where alpha* is the RDP accountant's optimal order for the
 * same query with the standard conversion: at that order the tilted composition's mean
 * is the RDP epsilon, just above the true one. Events RDP cannot analyse (sampled
 * Laplace) take the order minimising the same conversion applied to the discretised
 * steps' cumulant generating function. If the answer falls outside the composed window
 * the tilt is moved and the composition repeated (at most three times).
 *
 * PRV error terms. The pessimistic split moves a loss l in (l_i, l_i + h] to l_i or
 * l_i + h keeping E e^{-L}: the displacement lies in an interval of length h and its
 * conditional mean in [0, B(h)], B(h) = max_s h (1 - e^{-s})/(1 - e^{-h}) - s <= h^2/8.
 * By Hoeffding's inequality the composed displacement exceeds t + K B(h),
 * t = h sqrt(K ln(1/delta_err) / 2), with probability at most delta_err; the truncated
 * tails add 2 K tau. The rounding guard of each split (pld_discretize.c) raises that
 * conditional mean by at most a step's `bias` more, except on buckets of P-mass
 * `bad_mass` <= tau where the coupling is given up: with E = sum of count x bias and
 * F = sum of count x bad_mass, delta_true(eps - t - K B - E) >= delta_disc(eps) - delta_err
 * - 2 K tau - F, which gives the lower ends; the upper ends are the pessimistic ones
 * (domination). The mesh h solves t + K h^2 / 8 = eps_error with t taken at a delta_error
 * that does not depend on delta (the caller's, else 1e-13: epsilon must not rise with delta,
 * query_run); E is about 1e-14 a step where
 * a step's loss fits in one bucket (sigma 5e200, T 5.5e11: E = 5e-3, which the lower end
 * 3.5e-5 of the exact 0 had missed), and the reported eps_error includes it. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/pld.h"
#include "pld_internal.h"
#include "rdp_internal.h"

/* the most composed steps a PLD/PRV query certifies (see query_run) */
#define PLD_MAX_STEPS 1e8
#define DEFAULT_GRID 1e-4
#define DEFAULT_EPS_ERROR 0.01
#define DEFAULT_MEMORY ((size_t)2 << 30)
#define TAU_TILT 1e-12
#define MAX_TILT 200.0
#define U_REL (0.5 * DBL_EPSILON)
/* PRV: the delta_error its mesh is solved at when the caller gives none (delta 1e-10's) */
#define PRV_MESH_DELTA_ERR 1e-13

void dpzo_pld_options_default(dpzo_pld_options *o)
{
    memset(o, 0, sizeof *o);
    o->method = DPZO_PLD_CONNECT_DOTS;
    o->grid = 0.0; /* the default grid, coarsened where the query would not fit (query_run) */
    o->eps_error = 0.0;
    o->memory_limit = DEFAULT_MEMORY;
}

typedef struct {
    dpzo__pld_source src; /* pair REMOVE for sampled steps (ADD derived), else its own */
    uint64_t count;
    int two_sided;        /* Poisson-sampled with q < 1, or a mixture of Gaussians */
} tterm;

typedef struct {
    tterm *t;
    size_t n, cap;
    int infinite;      /* a step without noise: epsilon is +inf at every delta < 1 ... */
    int infinite_lower; /* ... and provably so (an unsampled one; a sampled one at rate q
                           has delta(eps) >= q only, so the lower end stays 0) */
    const char *rdp_only; /* a leaf without a PLD source here (zCDP, repeat-and-select, ...):
                             why; the RDP accountant answers */
    int lower_trivial;    /* a step accounted through a dominating pair that the mechanism
                             need not attain (a cut sample): its lower end is not proven */
    int lower_rounded;    /* a tree's Gaussian whose noise multiplier was rounded down: its
                             lower end is not proven (the instance's, rounded up, is) */
    int instance;         /* flatten truncated steps, and batches drawn without replacement,
                             as their concrete instances instead; trees at their noise
                             multiplier rounded up */
    int gauss_all;        /* every step is a Gaussian without sampling (merge_gaussians) ... */
    double gauss_s;       /* ... the sum over them of count / sigma^2 ... */
    size_t gauss_n;       /* ... over this many terms (its rounding: merged_sigma) */
} tlist;

static dpzo_status push(dpzo_ctx *ctx, tlist *l, tterm t)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tterm *nt = realloc(l->t, cap * sizeof *nt);
        if (nt == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory flattening an event");
        l->t = nt;
        l->cap = cap;
    }
    l->t[l->n++] = t;
    return DPZO_OK;
}

static dpzo_status mul_count(dpzo_ctx *ctx, uint64_t a, uint64_t b, uint64_t *r)
{
    if (a != 0 && b > (UINT64_C(1) << 62) / a)
        return dpzo__fail(ctx, DPZO_EINVAL, "composition count above 2^62");
    *r = a * b;
    return DPZO_OK;
}

static dpzo_status flatten(dpzo_ctx *ctx, const dpzo_event *e, uint64_t m, tlist *l)
{
    dpzo_status st;
    tterm t = {.src = {.base = DPZO__PLD_GAUSSIAN, .pair = DPZO__PLD_REMOVE, .scale = 0.0, .q = 1.0},
               .count = m};
    double sigma;
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
        if (isinf(e->param))
            return DPZO_OK;
        if (!(e->param > 0.0)) { /* no noise (0 or -0): the output reveals the record */
            l->infinite = l->infinite_lower = 1;
            return DPZO_OK;
        }
        t.src.scale = e->param;
        break;
    case DPZO_EVENT_LAPLACE:
        if (!(e->param > 0.0)) {
            l->infinite = l->infinite_lower = 1;
            return DPZO_OK;
        }
        t.src.base = DPZO__PLD_LAPLACE;
        t.src.scale = e->param;
        break;
    case DPZO_EVENT_NON_PRIVATE:
        l->infinite = l->infinite_lower = 1;
        return DPZO_OK;
    case DPZO_EVENT_ZCDP:
        if (e->param > 0.0 || e->param2 > 0.0)
            l->rdp_only = "a zCDP event has no privacy loss distribution";
        return DPZO_OK;
    case DPZO_EVENT_RANDOMIZED_RESPONSE:
        if (e->n == 1 || e->param == 1.0)
            return DPZO_OK; /* nothing released */
        if (e->param == 0.0) {
            l->infinite = l->infinite_lower = 1;
            return DPZO_OK;
        }
        t.src.base = DPZO__PLD_RR; /* three loss values (pld_source.c) */
        t.src.scale = e->param;
        t.src.k = e->n;
        break;
    case DPZO_EVENT_DISCRETE_LAPLACE:
        if (e->n == 0)
            return DPZO_OK;
        if (e->param == 0.0) {
            l->infinite = l->infinite_lower = 1;
            return DPZO_OK;
        }
        t.src.base = DPZO__PLD_DLAP; /* s + 1 loss values (pld_source.c) */
        t.src.scale = e->param;
        t.src.k = e->n;
        break;
    case DPZO_EVENT_REPEAT_AND_SELECT:
        l->rdp_only = "repeat-and-select has an RDP bound only (Papernot-Steinke 2022), no "
                      "privacy loss distribution";
        return DPZO_OK;
    case DPZO_EVENT_WR_SAMPLED:
        if (e->batch == 0)
            return DPZO_OK;
        l->rdp_only = "sampling with replacement has an RDP bound only, no privacy loss "
                      "distribution yet";
        return DPZO_OK;
    case DPZO_EVENT_MIXTURE_OF_GAUSSIANS: {
        double cmax = 0.0;
        for (size_t i = 0; i < e->n_mix; i++)
            cmax = e->mix[i] > cmax ? e->mix[i] : cmax;
        if (cmax == 0.0)
            return DPZO_OK; /* nothing released */
        if (e->param == 0.0 || !(cmax / e->param < INFINITY)) {
            l->infinite = 1; /* no noise, or a sensitivity beyond the double range of sigmas */
            l->infinite_lower |= e->param == 0.0;
            return DPZO_OK;
        }
        if (cmax / e->param > 1e6) { /* losses of 5e11: no grid can hold them */
            l->rdp_only = "a mixture of Gaussians with a sensitivity above 1e6 standard "
                          "deviations has an RDP bound only";
            return DPZO_OK;
        }
        /* both directions: the mixture against N(0, sigma^2) and back (pld_source.c) */
        t.src.base = DPZO__PLD_MOG;
        t.src.scale = e->param;
        t.src.mog = dpzo__pld_mog_new(e->param, e->mix, e->mix + e->n_mix, e->n_mix);
        if (t.src.mog == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory flattening an event");
        t.two_sided = 1;
        if ((st = push(ctx, l, t)))
            dpzo__pld_mog_free((dpzo__pld_mog *)t.src.mog);
        return st;
    }
    case DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN: {
        if (e->param2 == 0.0 || e->batch == 0 || e->n == 0)
            return DPZO_OK; /* nothing released */
        if (e->param == 0.0) {
            l->infinite = 1, l->infinite_lower |= e->param2 >= 1.0;
            return DPZO_OK;
        }
        /* a dominating pair (pld_source.c): the sampled Gaussian (q, sigma) mixed with
         * (q_max, sigma / 2) and (q, sigma / 2) at the bounds on P(the sample is cut); never
         * cut: exactly the sampled Gaussian */
        double w_lo, w2 = dpzo__tsg_cut_prob(ctx, e, &w_lo);
        t.src.scale = e->param;
        t.src.q = e->param2;
        t.two_sided = e->param2 < 1.0;
        if (l->instance && w2 > 0.0) {
            /* the other records at 0, the record at 1: it is in the batch with probability
             * q E[min(1, B/(m + 1))], and E[B/(m + 1); m >= B] >= t^2 B / E[m + 1] (Jensen on
             * the conditional law), so with probability at least q (1 - t_up + t_lo^2 B /
             * (Nq + 1)), rounded down: a Poisson-sampled Gaussian that a pair of datasets
             * attains (docs 3.8) */
            double B = (double)e->batch, N = (double)e->n;
            double keep = dpzo__down(
                dpzo__down(1.0 - w2)
                + dpzo__down(dpzo__down(dpzo__down(w_lo * w_lo) * B)
                             / dpzo__up(dpzo__up(N * e->param2) + 1.0)));
            t.src.q = dpzo__down(e->param2 * (keep < 1.0 ? keep : 1.0));
            if (!(t.src.q > 0.0))
                return DPZO_OK; /* no instance claimed: nothing */
            t.two_sided = t.src.q < 1.0;
            break;
        }
        if (w2 > 0.0) {
            t.src.base = DPZO__PLD_TSG;
            t.src.w2 = w2 < 1.0 ? w2 : 1.0;
            t.src.w_lo = w_lo < t.src.w2 ? w_lo : t.src.w2;
            t.src.q2 = dpzo__tsg_qmax_up(e);
            l->lower_trivial = 1;
        }
        break;
    }
    case DPZO_EVENT_TREE_AGGREGATION: /* the Gaussian of noise sigma / sqrt(depth) */
        if (e->n == 0)
            return DPZO_OK; /* trees of 0 steps release nothing */
        t.src.scale = !(e->param > 0.0) ? 0.0
                    : l->instance ? dpzo__tree_gaussian_sigma_up(e) : dpzo__tree_gaussian_sigma(e);
        if (!l->instance && t.src.scale > 0.0 && t.src.scale != dpzo__tree_gaussian_sigma_up(e))
            l->lower_rounded = 1;
        if (!(t.src.scale > 0.0)) { /* no noise (provably +inf), or an underflowed one */
            l->infinite = 1;
            l->infinite_lower |= e->param == 0.0;
            return DPZO_OK;
        }
        break;
    case DPZO_EVENT_POISSON_SAMPLED:
    case DPZO_EVENT_WOR_SAMPLED: {
        double q = e->kind == DPZO_EVENT_POISSON_SAMPLED ? e->param
                                                         : (double)e->batch / (double)e->n;
        if (q == 0.0)
            return DPZO_OK;
        if (e->inner->kind == DPZO_EVENT_LAPLACE && e->kind == DPZO_EVENT_POISSON_SAMPLED) {
            if (!(e->inner->param > 0.0)) {
                l->infinite = 1;
                l->infinite_lower |= q >= 1.0;
                return DPZO_OK;
            }
            t.src.base = DPZO__PLD_LAPLACE;
            t.src.scale = e->inner->param;
        } else {
            if ((st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
                return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                                  "the PLD accountant samples Gaussian (or, with Poisson "
                                  "sampling, Laplace) mechanisms only");
            if (isinf(sigma))
                return DPZO_OK;
            if (!(sigma > 0.0)) {
                l->infinite = 1;
                l->infinite_lower |= q >= 1.0;
                return DPZO_OK;
            }
            t.src.scale = sigma;
        }
        t.src.q = q;
        if (e->kind == DPZO_EVENT_WOR_SAMPLED && !l->instance) {
            /* the symmetric pair of Balle et al.'s bound (pld_source.c): it dominates the
             * mechanism, which need not attain it, so its lower end proves nothing of the
             * mechanism (wor_lower replaces it) */
            t.src.pair = DPZO__PLD_WOR;
        } else {
            /* Poisson sampling; or a batch's concrete instance: the other records at 0, the
             * record at 1 against 0, in each step's batch with probability B/n independently
             * of the other steps, is the Poisson-sampled Gaussian at q = B/n, both orders of
             * the pair (docs/accountant.md 3.4) */
            t.two_sided = q < 1.0;
        }
        break;
    }
    case DPZO_EVENT_SELF_COMPOSED: {
        uint64_t mm = 0;
        if (e->count == 0)
            return DPZO_OK;
        if ((st = mul_count(ctx, m, e->count, &mm)))
            return st;
        return flatten(ctx, e->inner, mm, l);
    }
    case DPZO_EVENT_COMPOSED:
        for (size_t i = 0; i < e->n_children; i++)
            if ((st = flatten(ctx, e->children[i], m, l)))
                return st;
        return DPZO_OK;
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "corrupt event (kind %d)", (int)e->kind);
    }
    return push(ctx, l, t);
}

static int cmp_src(const void *a, const void *b)
{
    const tterm *x = a, *y = b;
    if (x->src.base != y->src.base)
        return (int)x->src.base - (int)y->src.base;
    if (x->src.pair != y->src.pair)
        return (int)x->src.pair - (int)y->src.pair;
    if (x->src.q != y->src.q)
        return x->src.q < y->src.q ? -1 : 1;
    if (x->src.k != y->src.k)
        return x->src.k < y->src.k ? -1 : 1;
    if ((x->src.mog != NULL) != (y->src.mog != NULL))
        return x->src.mog != NULL ? 1 : -1;
    if (x->src.mog != NULL) {
        int c = dpzo__pld_mog_cmp(x->src.mog, y->src.mog);
        if (c != 0)
            return c;
    }
    if (x->src.w2 != y->src.w2)
        return x->src.w2 < y->src.w2 ? -1 : 1;
    if (x->src.w_lo != y->src.w_lo)
        return x->src.w_lo < y->src.w_lo ? -1 : 1;
    if (x->src.q2 != y->src.q2)
        return x->src.q2 < y->src.q2 ? -1 : 1;
    return (x->src.scale > y->src.scale) - (x->src.scale < y->src.scale);
}

static dpzo_status merge(dpzo_ctx *ctx, tlist *l)
{
    if (l->n == 0)
        return DPZO_OK;
    qsort(l->t, l->n, sizeof *l->t, cmp_src);
    size_t w = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (cmp_src(&l->t[w], &l->t[i]) == 0) {
            dpzo__pld_mog_free((dpzo__pld_mog *)l->t[i].src.mog); /* the same mixture */
            l->t[i].src.mog = NULL;
            l->t[w].count += l->t[i].count;
            if (l->t[w].count > (UINT64_C(1) << 62))
                return dpzo__fail(ctx, DPZO_EINVAL, "composition count above 2^62");
        } else {
            l->t[++w] = l->t[i];
        }
    }
    l->n = w + 1;
    return DPZO_OK;
}

/* Unsampled Gaussian steps compose to one Gaussian (issue 30): the pair of K steps with
 * noise sigma_i, (N(1, sigma_i^2))_i against (N(0, sigma_i^2))_i, has the sufficient
 * statistic sum_i x_i / sigma_i^2, under which it is N(mu^2, mu^2) against N(0, mu^2) with
 * mu^2 = sum_i 1 / sigma_i^2: the Gaussian step of noise 1 / mu, exactly. Fewer steps leave
 * less of the K d^2 of discretisation to accumulate (q 1, sigma 80.6, 941 steps, delta
 * 0.151: 1.9 times the accuracy max(1e-3 eps, 1e-6) above the truth at grid 1e-4 before).
 * A merged step's losses span about 15 mu / d grid points (N(mu^2/2, mu^2), cut where the
 * tails are 1e-12 or so), discretised one by one where K equal steps share one narrow
 * discretisation and an FFT power: so all the unsampled Gaussians merge into one step where
 * that spans at most MERGE_POINTS; otherwise a single kind of them (K steps of noise
 * sigma) is merged m at a time, m the most whose step spans MERGE_POINTS, K / m steps of
 * noise sigma / sqrt(m) and one of sigma / sqrt(K mod m). Merged noises are rounded down
 * (more loss: the merged pair dominates the true one): the sum and the root carry at most
 * (n + 2) units of rounding, and 1 - (n + 4) eps covers them. A sum that overflows (sigma
 * near 1e-154), or a noise above 1e150 (whose 1 / sigma^2 loses bits), is left as it was. */
#define MERGE_POINTS 65536.0

static int unsampled_gaussian(const tterm *t)
{
    return t->src.base == DPZO__PLD_GAUSSIAN && t->src.pair == DPZO__PLD_REMOVE
           && t->src.q == 1.0 && !t->two_sided;
}

static double merged_sigma(double sum_inv_var, size_t n)
{
    return 1.0 / sqrt(sum_inv_var) * (1.0 - (double)(n + 4) * DBL_EPSILON);
}

static dpzo_status merge_gaussians(dpzo_ctx *ctx, tlist *l, double d)
{
    double s = 0.0;
    size_t n = 0, first = 0;
    for (size_t i = 0; i < l->n; i++)
        if (unsampled_gaussian(&l->t[i])) {
            if (!(l->t[i].src.scale < 1e150)) /* 1 / sigma^2 would lose bits or underflow */
                return DPZO_OK;
            if (n++ == 0)
                first = i;
            s += (double)l->t[i].count / (l->t[i].src.scale * l->t[i].src.scale);
        }
    if (n == 0 || !isfinite(s) || !(s > 0.0))
        return DPZO_OK;
    l->gauss_all = n == l->n;
    l->gauss_s = s;
    l->gauss_n = n;
    if (n == 1 && l->t[first].count == 1)
        return DPZO_OK;
    double sigma = merged_sigma(s, n);
    if (!(sigma >= DBL_MIN && isfinite(sigma)))
        return DPZO_OK;
    if (15.0 / sigma <= MERGE_POINTS * d) { /* all into one step */
        size_t w = 0;
        for (size_t i = 0; i < l->n; i++) {
            if (i == first) {
                l->t[w] = l->t[i];
                l->t[w].src.scale = sigma;
                l->t[w++].count = 1;
            } else if (!unsampled_gaussian(&l->t[i]))
                l->t[w++] = l->t[i];
        }
        l->n = w;
        return DPZO_OK;
    }
    if (n != 1)
        return DPZO_OK;
    /* K steps of noise sigma0, m at a time: 15 sqrt(m) / sigma0 <= MERGE_POINTS d */
    tterm *t = &l->t[first];
    double sigma0 = t->src.scale, r = MERGE_POINTS * d * sigma0 / 15.0;
    double mm = floor(r * r);
    uint64_t K = t->count;
    if (!(mm >= 2.0))
        return DPZO_OK;
    uint64_t m = mm >= (double)K ? K : (uint64_t)mm, rem = K % m;
    t->src.scale = merged_sigma((double)m / (sigma0 * sigma0), 1);
    t->count = K / m;
    if (rem > 1 || (rem == 1 && t->count == 0)) {
        tterm u = *t;
        u.src.scale = merged_sigma((double)rem / (sigma0 * sigma0), 1);
        u.count = 1;
        return push(ctx, l, u);
    }
    if (rem == 1) {
        tterm u = *t;
        u.src.scale = sigma0;
        u.count = 1;
        return push(ctx, l, u);
    }
    return DPZO_OK;
}

/* Everything one query needs, and what it allocated. */
typedef struct {
    dpzo_ctx *ctx;
    const dpzo_event *event;
    dpzo_pld_options o;
    dpzo_rdp_options rdp;
    int want_delta;
    double target;
    tlist terms;
    int n_dirs;
    dpzo__pld_pmf *pmf[2]; /* per direction, per term (direction 1 shares symmetric ones) */
    dpzo__pld_term *cterms[2];
    double K, d, tau, lambda;
    double delta_err, t_shift; /* PRV */
    double t_extra[2], d_extra[2]; /* per direction: the steps' rounding-guard bias and the
                                      P-mass where it is unbounded (pld_internal.h) */
    dpzo__pld_ws ws[2];
    dpzo__pld_split_ws sws[2];
    int have_rdp;
    double rdp_fast;           /* fast RDP epsilon (or delta) */
    int custom;                /* a custom noise: no coupling bound (its buckets are
                                  widened by the slack, so displacements exceed d) */
    double lam[2];             /* per direction: the tilt of its composition ... */
    int cover[2];              /* ... whether its window is to reach its support's top ... */
    int done[2];               /* ... whether its answer is resolved (not composed again) */
    struct bounds_ *bdir;      /* ... and then its bounds (bounds[2]) */
    int split_missed[2];       /* per direction: the split composition did not run, or its
                                  upper end shows its error terms */
    int too_wide[2];           /* per direction: a step's loss lies beyond 2^52 grid steps */
    double wide_scale[2], wide_q[2]; /* ... that step's noise scale and sampling rate */
    size_t dpeak[2];           /* per direction: the most its discretisation held (this run) */
    size_t disc_peak;          /* the most the discretisations held at once, over all runs */
} query;

static void free_pmfs(query *q);

static void query_free(query *q)
{
    free_pmfs(q);
    for (int dir = 0; dir < 2; dir++) {
        dpzo__pld_ws_free(&q->ws[dir]);
        dpzo__pld_split_ws_free(&q->sws[dir]);
    }
    for (size_t i = 0; i < q->terms.n; i++)
        dpzo__pld_mog_free((dpzo__pld_mog *)q->terms.t[i].src.mog);
    free(q->terms.t);
}

static dpzo__pld_source dir_source(const tterm *t, int dir)
{
    dpzo__pld_source s = t->src;
    if (t->two_sided && dir == 1)
        s.pair = DPZO__PLD_ADD;
    return s;
}

/* max_s h (1 - e^-s)/(1 - e^-h) - s, at s* = log(h / (1 - e^-h)) */
static double prv_bias(double h)
{
    double den = -expm1(-h), s = log(h / den);
    return h * -expm1(-s) / den - s;
}

/* Bytes one direction's discretised steps hold (their mass arrays and the tables of
 * them), kept from discretisation until the query ends. */
static size_t dir_held_bytes(const query *q, int dir)
{
    if (q->pmf[dir] == NULL)
        return 0;
    size_t b = q->terms.n * (sizeof(dpzo__pld_pmf) + sizeof(dpzo__pld_term));
    for (size_t i = 0; i < q->terms.n; i++)
        b += q->pmf[dir][i].n * ((q->pmf[dir][i].pess != NULL) + (q->pmf[dir][i].opt != NULL))
             * sizeof(double);
    return b;
}

static size_t held_bytes(const query *q)
{
    return dir_held_bytes(q, 0) + dir_held_bytes(q, 1);
}

/* The most one step of n points holds while dpzo__pld_discretize runs, beyond its kept mass
 * arrays: its tail records, (optimistic side) boundaries and the fast path's chunk buffers. */
static size_t discretise_scratch(const dpzo__pld_source *s, size_t n)
{
    return (n + 1) * (sizeof(dpzo__pld_tails) + sizeof(double))
           + dpzo__pld_discretize_fixed_bytes(s, n);
}

static void free_pmfs(query *q)
{
    size_t freed = held_bytes(q);
    for (int dir = 0; dir < 2; dir++) {
        if (q->pmf[dir] != NULL)
            for (size_t i = 0; i < q->terms.n; i++)
                dpzo__pld_pmf_free(&q->pmf[dir][i]);
        free(q->pmf[dir]);
        free(q->cterms[dir]);
        q->pmf[dir] = NULL;
        q->cterms[dir] = NULL;
    }
    dpzo__pld_release(freed);
}

/* One direction's steps (symmetric steps are discretised in each direction: the two
 * directions run in parallel and share nothing). `limit`: what this direction may hold,
 * its tables, kept arrays and one step's scratch together. */
static dpzo_status discretise_dir(query *q, int dir, dpzo_ctx *ctx, size_t limit)
{
    size_t n = q->terms.n, used = n * (sizeof(dpzo__pld_pmf) + sizeof(dpzo__pld_term));
    q->pmf[dir] = calloc(n, sizeof *q->pmf[dir]);
    q->cterms[dir] = calloc(n, sizeof *q->cterms[dir]);
    if (q->pmf[dir] == NULL || q->cterms[dir] == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const tterm *t = &q->terms.t[i];
        dpzo__pld_source s = dir_source(t, dir);
        /* a step's peak while it is discretised: its two mass arrays, kept, plus the
         * tail records and boundaries of dpzo__pld_discretize, freed at its end (with one
         * point to spare for the tables' n + 1 entries) */
        size_t fixed = used + dpzo__pld_discretize_fixed_bytes(&s, (size_t)-1);
        size_t room = (limit > fixed ? limit - fixed : 0)
                      / (2 * sizeof(double) + sizeof(dpzo__pld_tails) + 2 * sizeof(double));
        room = room > 1 ? room - 1 : 0;
        dpzo_status st = dpzo__pld_discretize(ctx, &s, q->d, q->tau,
                                              q->o.method == DPZO_PLD_CONNECT_DOTS, room,
                                              &q->pmf[dir][i]);
        if (st == DPZO_EINVAL && strstr(dpzo_ctx_errmsg(ctx), "grid points"))
            return dpzo__fail(ctx, DPZO_ENOMEM,
                              "discretising the steps needs more than the memory limit of "
                              "%.6g MiB at grid %g (a step with noise scale %g, sampling rate "
                              "%g); use a coarser grid or raise the limit",
                              (double)q->o.memory_limit / 1048576.0, q->d, s.scale, s.q);
        if (st == DPZO_EINVAL && strstr(dpzo_ctx_errmsg(ctx), "too wide for grid")) {
            q->too_wide[dir] = 1;
            q->wide_scale[dir] = s.scale;
            q->wide_q[dir] = s.q;
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "the privacy loss of a step with noise scale %g, sampling rate %g "
                              "spans more than 2^52 grid steps of %g; use a coarser grid",
                              s.scale, s.q, q->d);
        }
        if (st)
            return st;
        size_t kept = q->pmf[dir][i].n * (q->o.method == DPZO_PLD_CONNECT_DOTS ? 2 : 1)
                      * sizeof(double);
        size_t pk = used + kept + discretise_scratch(&s, q->pmf[dir][i].n);
        q->dpeak[dir] = pk > q->dpeak[dir] ? pk : q->dpeak[dir];
        dpzo__pld_release(discretise_scratch(&s, q->pmf[dir][i].n)); /* freed by the call */
        used += kept;
        q->cterms[dir][i].pmf = &q->pmf[dir][i];
        q->cterms[dir][i].count = t->count;
    }
    /* the coupling's extra shift and failure mass (rounded up: a sum of n products) */
    double te = 0.0, de = 0.0;
    for (size_t i = 0; i < n; i++) {
        te += (double)q->terms.t[i].count * q->pmf[dir][i].bias;
        de += (double)q->terms.t[i].count * q->pmf[dir][i].bad_mass;
    }
    q->t_extra[dir] = te * (1.0 + 4.0 * (double)(n + 2) * DBL_EPSILON);
    q->d_extra[dir] = de * (1.0 + 4.0 * (double)(n + 2) * DBL_EPSILON);
    return DPZO_OK;
}

/* log sum p e^{lambda l} of a pessimistic PMF */
static double pmf_cgf(const dpzo__pld_pmf *p, double d, double lambda)
{
    double mx = -INFINITY, s = 0.0;
    for (size_t k = 0; k < p->n; k++)
        if (p->pess[k] > 0.0) {
            double w = log(p->pess[k]) + lambda * (double)(p->lo + (long)k) * d;
            mx = w > mx ? w : mx;
        }
    for (size_t k = 0; k < p->n; k++)
        if (p->pess[k] > 0.0)
            s += exp(log(p->pess[k]) + lambda * (double)(p->lo + (long)k) * d - mx);
    return mx + log(s);
}

/* The conversion objective at tilt lambda (RDP-free fallback for the tilt). */
static double tilt_objective(const query *q, double lambda)
{
    double K = 0.0;
    for (int dir = 0; dir < q->n_dirs; dir++) {
        double k = 0.0;
        for (size_t i = 0; i < q->terms.n; i++)
            k += (double)q->terms.t[i].count * pmf_cgf(&q->pmf[dir][i], q->d, lambda);
        K = k > K || dir == 0 ? k : K;
    }
    if (q->want_delta)
        return K - lambda * q->target; /* log of the Chernoff bound on delta */
    return (K + log(1.0 / q->target)) / lambda;
}

static double choose_tilt_from_pmfs(const query *q)
{
    double a = 1e-3, b = 200.0; /* golden section on log lambda */
    const double g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = tilt_objective(q, x1), f2 = tilt_objective(q, x2);
    for (int i = 0; i < 60; i++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = tilt_objective(q, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = tilt_objective(q, x2);
        }
    }
    return 0.5 * (a + b);
}

typedef struct bounds_ {
    double lo, est, hi;
    int resolved;
    int below;   /* the answer lies below the window */
    int covered; /* the window reached the support's top */
    int at_top;  /* the upper end is the window's top cell: the scan met delta nowhere below */
    double tail; /* epsilon queries: how much of the upper end the tails at +inf make */
} bounds;

/* One step read off its own tails (issue 30). A query whose event is a single step (one
 * term of count 1: one sampled step, or Gaussians without sampling, which merge into one) has
 * the hockey-stick divergence delta(eps) = P(L > eps) - e^eps Q(L > eps) in closed form from
 * the source's tails, with no grid: the discretisation's pessimism (up to a grid step in the
 * losses) is what kept the default grid from 1e-3 relative at small epsilon (sigma 0.508,
 * q 2.365e-4, delta 1.59e-4: upper end 6.66e-6 for a truth of 4.09e-6, and the 10 times
 * finer grid did not fit the refinement's memory cap). Both ends are proven:
 *  - lower: for any event A, delta(eps) >= P(A) - e^eps Q(A) (the divergence is a supremum
 *    over events); A = the outcomes counted in {L > eps};
 *  - upper: with slack s (an outcome counted in {L <= l} has true loss at most l + s, one
 *    counted in {L > l} at least l - s), A' = the outcomes counted in {L > l2}, l2 <= eps - s,
 *    holds every outcome of true loss above eps, and those of A' below it have loss at least
 *    l2 - s, so delta(eps) <= P(A') - e^eps Q(A') + expm1(eps - l2 + s) P(A');
 *  - each log tail x errs by at most 8u(|x| + 1) + err (pld_discretize.c's model), the
 *    exponentials by 4u relative, their products and differences by the roundings added.
 * epsilon's ends are found by bisection on these bounds (each end proven whatever the
 * computed functions' monotonicity: an upper end is a point whose delta bound is at most the
 * target, a lower end one whose lower bound exceeds it); over the directions, the larger. The
 * result is intersected with the composition's ends, both proven, so a finer grid stays never
 * looser. Cancellation: the bound's width is about 1e-15 P(L > eps), so it serves where delta
 * is not far below the tail mass, which is where the grid is coarse against epsilon. */
static double tail_exp(double x, double err, int up)
{
    if (x == -INFINITY)
        return 0.0;
    double m = 8.0 * DBL_EPSILON * (fabs(x) + 1.0) + err;
    if (up) {
        double v = exp(x + m) * (1.0 + 4.0 * DBL_EPSILON);
        return v < DBL_MIN ? nextafter(v, INFINITY) : (v < 1.0 ? v : 1.0);
    }
    double v = exp(x - m) * (1.0 - 4.0 * DBL_EPSILON);
    return v < DBL_MIN ? 0.0 : v;
}

/* [lo, hi] around delta(eps) of one direction's step; 0 where the tails are not finite */
static int one_step_delta(const dpzo__pld_source *s, double eps, double *lo, double *hi)
{
    dpzo__pld_tails t, t2;
    dpzo__pld_tails_part(s, eps, 1, &t);
    if (isnan(t.pg) || isnan(t.qg) || !(t.err >= 0.0) || !(t.slack >= 0.0))
        return 0;
    double ee_lo = exp(eps) * (1.0 - 4.0 * DBL_EPSILON), ee_hi = exp(eps) * (1.0 + 4.0 * DBL_EPSILON);
    double d = tail_exp(t.pg, t.err, 0) - ee_hi * tail_exp(t.qg, t.err, 1) * (1.0 + 2.0 * DBL_EPSILON);
    *lo = d - 2.0 * DBL_EPSILON * fabs(d) - DBL_TRUE_MIN;
    double s0 = t.slack, w = 0.0;
    if (s0 > 0.0) {
        double l2 = nextafter(eps - s0 * (1.0 + 4.0 * DBL_EPSILON), -INFINITY);
        dpzo__pld_tails_part(s, l2, 1, &t2);
        if (isnan(t2.pg) || isnan(t2.qg) || !(t2.err >= 0.0) || !(t2.slack <= s0))
            return 0;
        t = t2;
        /* an outcome of A' lies at or above l2 - s0, i.e. at most w below eps: w is
         * (eps - l2) + s0, not 2 s0 (l2 is eps less s0 rounded down, at least a whole ulp
         * of eps below it however small s0 is: the MoG's DBL_MIN) */
        w = ((eps - l2) + s0) * (1.0 + 4.0 * DBL_EPSILON);
    }
    double pu = tail_exp(t.pg, t.err, 1);
    double u = pu - ee_lo * tail_exp(t.qg, t.err, 0) * (1.0 - 2.0 * DBL_EPSILON);
    u += 2.0 * DBL_EPSILON * fabs(u) + DBL_TRUE_MIN;
    if (w > 0.0)
        u += expm1(w) * (1.0 + 4.0 * DBL_EPSILON) * pu * (1.0 + 2.0 * DBL_EPSILON);
    *hi = dpzo__up(u < 1.0 ? u : 1.0);
    return isfinite(*lo) && isfinite(*hi);
}

/* The single step's ends for the query's target (see above), intersected into b; 1 when
 * they moved an end. Gaussians without sampling compose to one Gaussian, of
 * 1/sigma^2 = sum count/sigma_i^2: its computed sigma errs by at most (n + 4)u relative
 * (merged_sigma), so the upper end is read at sigma rounded down by that, the lower end at
 * sigma rounded up. */
static int one_step_bounds(const query *q, bounds *b)
{
    dpzo__pld_source su[2], sl[2];
    int n_dirs = q->n_dirs;
    if (!b->resolved)
        return 0;
    if (q->terms.gauss_all) {
        memset(su, 0, sizeof su);
        su[0].base = DPZO__PLD_GAUSSIAN;
        su[0].pair = DPZO__PLD_REMOVE;
        su[0].q = 1.0;
        sl[0] = su[0];
        su[0].scale = merged_sigma(q->terms.gauss_s, q->terms.gauss_n);
        sl[0].scale = 1.0 / sqrt(q->terms.gauss_s)
                      * (1.0 + (double)(q->terms.gauss_n + 4) * DBL_EPSILON);
        n_dirs = 1;
        if (!(su[0].scale >= DBL_MIN && isfinite(sl[0].scale)))
            return 0;
    } else if (q->terms.n == 1 && q->terms.t[0].count == 1) {
        for (int dir = 0; dir < 2; dir++)
            su[dir] = sl[dir] = dir_source(&q->terms.t[0], dir);
    } else {
        return 0;
    }
    double lo = 0.0, hi = 0.0;
    if (q->want_delta) {
        for (int dir = 0; dir < n_dirs; dir++) {
            double l, h, l2, h2;
            if (!one_step_delta(&su[dir], q->target, &l, &h)
                || !one_step_delta(&sl[dir], q->target, &l2, &h2))
                return 0;
            lo = l2 > lo ? l2 : lo;
            hi = h > hi ? h : hi;
        }
    } else {
        for (int dir = 0; dir < n_dirs; dir++) {
            const dpzo__pld_source *s = &su[dir];
            double l, h;
            /* upper end: a point whose delta bound meets the target, from a bracket that
             * depends on the step and the target alone (not on b, which the grid sets), so
             * that the grid's order of ends survives the intersection */
            double a = 0.0, z = 1.0;
            while (!(one_step_delta(s, z, &l, &h) && h <= q->target)) {
                a = z;
                z *= 2.0;
                if (z > 0x1p20)
                    return 0;
            }
            if (a == 0.0 && one_step_delta(s, 0.0, &l, &h) && h <= q->target)
                z = 0.0;
            while (z > 0.0 && z - a > 4.0 * DBL_EPSILON * z) {
                double m = 0.5 * (a + z);
                if (one_step_delta(s, m, &l, &h) && h <= q->target)
                    z = m;
                else
                    a = m;
            }
            hi = z > hi ? z : hi;
            /* lower end: a point whose lower bound on delta exceeds the target */
            s = &sl[dir];
            double c = 0.0, e = z;
            if (!(one_step_delta(s, 0.0, &l, &h) && l > q->target))
                continue; /* this direction proves nothing above 0 */
            while (e - c > 4.0 * DBL_EPSILON * e) {
                double m = 0.5 * (c + e);
                if (one_step_delta(s, m, &l, &h) && l > q->target)
                    c = m;
                else
                    e = m;
            }
            lo = c > lo ? c : lo;
        }
    }
    int moved = 0;
    if (hi < b->hi) {
        b->hi = hi;
        moved = 1;
    }
    if (lo > b->lo) {
        b->lo = lo < b->hi ? lo : b->hi;
        moved = 1;
    }
    if (b->est > b->hi)
        b->est = b->hi;
    if (b->est < b->lo)
        b->est = b->lo;
    return moved;
}

/* The interval read off one composition. */
static void read_off(const query *q, int dir, const dpzo__pld_composed *c, bounds *bo)
{
    bounds b = {0.0, 0.0, 0.0, 1, 0, 0, 0, 0.0};
    int cdt = q->o.method == DPZO_PLD_CONNECT_DOTS;
    double lo, est, hi;
    /* the coupling bound: the rounding guards of the steps' splits shift the composed
     * loss up by t_extra more, except with probability d_extra (pld_internal.h) */
    double dslack = q->delta_err + 2.0 * q->K * q->tau + q->d_extra[dir];
    double shift = q->t_shift + q->t_extra[dir];
    if (q->want_delta) {
        hi = dpzo__pld_delta_at(c, 0, q->target);
        est = dpzo__pld_delta_at(c, 2, q->target);
        /* coupling bound from the pessimistic composition (PRV; PLD takes the
         * larger of it and the optimistic composition) */
        lo = q->custom ? 0.0 : dpzo__pld_delta_at(c, 3, q->target + shift) - dslack;
        if (cdt) {
            double lo2 = dpzo__pld_delta_at(c, 1, q->target);
            lo = lo2 > lo ? lo2 : lo;
        }
        lo = lo > 0.0 ? lo : 0.0;
        double lbot = ((double)c->w0 + c->off) * c->d;
        if (q->target < lbot || isnan(hi) || isnan(est)) /* loose, or not representable */
            b.resolved = 0, b.below = 1;
        if (isnan(hi) || isnan(est))
            hi = est = 1.0, lo = 0.0;
    } else {
        int in_hi, in_est, in_lo = 1, in_lo2 = 0;
        hi = dpzo__pld_epsilon_for(c, 0, q->target, &in_hi);
        est = dpzo__pld_epsilon_for(c, 2, q->target, &in_est);
        double dl = q->target + dslack;
        lo = -INFINITY;
        if (dl < 1.0 && !q->custom) {
            lo = dpzo__pld_epsilon_for(c, 3, dl, &in_lo) - shift;
            if (!in_lo)
                lo = -INFINITY;
        }
        if (cdt) {
            double lo2 = dpzo__pld_epsilon_for(c, 1, q->target, &in_lo2);
            if (in_lo2 && lo2 > lo)
                lo = lo2;
        }
        if (!in_hi || !in_est) {
            b.resolved = 0;
            b.below = isfinite(hi) ? 1 : 0;
        }
        b.at_top = isfinite(hi) && hi >= ((double)c->w0 + (double)c->N - 2.0 + c->off) * c->d;
        /* each step's upper tail, P(L > top) <= tau, sits at +inf (c->inf_mass in all). The
         * upper end with that much more delta allowed is what it would be without them, or
         * less; the difference is their share of the upper end */
        double dt = q->target + c->inf_mass;
        int in_t = 0;
        if (in_hi && dt < 1.0) {
            double ht = dpzo__pld_epsilon_for(c, 0, dt, &in_t);
            if (in_t && ht < hi)
                b.tail = hi - ht;
        }
        if (!(lo > -INFINITY)) {
            /* the lower end lies below the window: only the trivial bound (a custom noise
             * has no coupling bound, so its upper end, resolved, stands on its own) */
            lo = 0.0;
            if (b.resolved && !q->custom && hi > ((double)c->w0 + c->off) * c->d + 10.0 * c->d)
                b.below = 1, b.resolved = 0;
        }
    }
    b.lo = lo;
    b.est = est;
    b.hi = hi;
    b.covered = c->top_covered;
    *bo = b;
}

/* One direction: compose at the current tilt and read the interval off. Few sampled steps
 * are also composed by the split composition (pld_direct.c), whose error is relative
 * where the FFT's is absolute: both intervals are proven, so the tighter ends are taken
 * (issue 20: at q 4.3e-5, 3 steps, delta 8.7e-13 the FFT's error terms alone made the
 * upper end 0.163 where the split composition gives 0.05158). */
static dpzo_status direction_bounds(query *q, int dir, dpzo_ctx *ctx, size_t limit, bounds *bo,
                                    size_t *fft, size_t *bytes)
{
    dpzo__pld_compose_opts co = {q->lam[dir], TAU_TILT, limit,
                                 q->o.method == DPZO_PLD_CONNECT_DOTS, 0,
                                 q->o.memory_limit > limit ? q->o.memory_limit - limit : 0};
    dpzo__pld_composed c;
    dpzo_status st = dpzo__pld_compose_cover(ctx, q->cterms[dir], q->terms.n, q->d, &co,
                                             q->cover[dir], &q->ws[dir], &c);
    if (st)
        return st;
    *fft = c.N;
    *bytes = c.bytes;
    read_off(q, dir, &c, bo);
    const int folded = c.folded;
    dpzo__pld_composed_free(&c);
    int used = 0;
    /* where the FFT's error terms do not show in its upper end (1e-9 relative above the
     * estimate), the split composition has nothing to add; unless the upper end is the
     * window's top cell: there the FFT's rounding, absolute, swamped every entry below
     * the answer in the estimate as well (one step, sigma 9.22, q 0.00968, delta 1e-45 at
     * grid 1e-4 answered 0.0966, the window's top, for a truth of 0.0317426: the tilt,
     * capped at MAX_TILT, cannot lift masses of 1e-45 above rounding of 1e-16), or a step
     * was folded into the window: one step is composed without a transform (no error
     * terms), and its folded lower end then shows as mass near the window's top (one step,
     * sigma 7.04, q 0.00093, delta 2.6e-29: the add direction read 0.1000 where its losses
     * end at 0.00093) */
    if (bo->resolved && !bo->at_top && !folded && !(bo->hi - bo->est > 1e-9 * fabs(bo->hi))) {
        q->split_missed[dir] = 1;
        return DPZO_OK;
    }
    /* the FFT's buffers stay held: the split composition gets what is left of the limit */
    co.memory_limit = limit > *bytes ? limit - *bytes : 0;
    st = dpzo__pld_compose_split(ctx, q->cterms[dir], q->terms.n, q->d, &co, &q->sws[dir], &c,
                                 &used);
    if (st)
        return st;
    q->split_missed[dir] = !used;
    if (used) {
        bounds s;
        read_off(q, dir, &c, &s);
        *bytes += c.bytes;
        dpzo__pld_composed_free(&c);
        /* each end holds whatever either composition resolved (an unresolved upper end
         * still bounds from above, pld_query.c); the estimate: the split one, whose
         * composition is the more accurate */
        /* the split's FFT parts (a tail against a tail, where direct products cost too much)
         * have absolute errors too, about 1e-16 of a tail's mass: at delta 2.25e-61 (two
         * steps, sigma 2.48, q 1.5e-4) its upper end was 0.2578 at grid 1e-4 for a truth of
         * 0.0891267, as was the FFT's; where its error terms show, the coarser grid is asked
         * as where it did not run (query_run) */
        q->split_missed[dir] = !s.resolved || s.hi - s.est > 1e-8 * fabs(s.hi);
        if (s.resolved) {
            bo->hi = s.hi < bo->hi ? s.hi : bo->hi;
            bo->lo = s.lo > bo->lo ? s.lo : bo->lo;
            bo->est = s.est < bo->hi ? s.est : bo->hi;
            bo->resolved = 1;
            bo->below = 0;
            bo->covered = 1;
        }
    }
    return DPZO_OK;
}

/* The directions run in parallel threads, each with its own context and buffers. */
typedef struct {
    query *q;
    int dir, phase; /* phase 0: discretise, 1: compose */
    dpzo_ctx *ctx;
    size_t limit;
    bounds b;
    size_t fft, bytes;
    dpzo_status st;
} job;

static void *job_run(void *arg)
{
    job *j = arg;
    if (j->phase == 1 && j->q->done[j->dir]) { /* resolved at an earlier tilt */
        j->b = j->q->bdir[j->dir];
        j->st = DPZO_OK;
    } else if (j->phase == 0)
        j->st = discretise_dir(j->q, j->dir, j->ctx, j->limit);
    else
        j->st = direction_bounds(j->q, j->dir, j->ctx, j->limit, &j->b, &j->fft, &j->bytes);
    return NULL;
}

/* Runs `phase` for every direction: in parallel when there are two and each fits half
 * the memory limit, otherwise (or after a refusal in parallel) one after the other. */
static dpzo_status run_phase(query *q, int phase, job jobs[2])
{
    for (int d = 0; d < 2; d++) {
        memset(&jobs[d], 0, sizeof jobs[d]);
        jobs[d].q = q;
        jobs[d].dir = d;
        jobs[d].phase = phase;
        jobs[d].ctx = d == 0 ? q->ctx : NULL;
    }
    int parallel = q->n_dirs == 2;
    q->dpeak[0] = q->dpeak[1] = 0;
    if (parallel) {
        jobs[1].ctx = dpzo_ctx_new();
        if (jobs[1].ctx == NULL)
            parallel = 0;
    }
    /* what the phase may add to the steps' arrays already held (phase 1: both directions'
     * discretised steps stay held while either is composed) */
    size_t held = phase == 1 ? held_bytes(q) : 0;
    size_t avail = q->o.memory_limit > held ? q->o.memory_limit - held : 0;
    if (parallel) {
        pthread_t th;
        jobs[0].limit = jobs[1].limit = avail / 2;
        if (pthread_create(&th, NULL, job_run, &jobs[1]) != 0) {
            job_run(&jobs[1]);
            job_run(&jobs[0]);
        } else {
            job_run(&jobs[0]);
            pthread_join(th, NULL);
        }
        dpzo_status st = jobs[0].st ? jobs[0].st : jobs[1].st;
        if (jobs[0].st == DPZO_OK && jobs[1].st)
            dpzo__fail(q->ctx, jobs[1].st, "%s", dpzo_ctx_errmsg(jobs[1].ctx));
        dpzo_ctx_free(jobs[1].ctx);
        if (phase == 0 && q->dpeak[0] + q->dpeak[1] > q->disc_peak)
            q->disc_peak = q->dpeak[0] + q->dpeak[1]; /* held at the same time */
        if (st != DPZO_ENOMEM) {
            if (st == DPZO_OK && phase == 1)
                jobs[0].bytes += jobs[1].bytes; /* both were held at once */
            return st;
        }
        /* refused at half the limit: drop what was built, then one direction at a time
         * with what the limit leaves */
        for (int d = 0; d < 2; d++) {
            dpzo__pld_ws_free(&q->ws[d]);
            dpzo__pld_split_ws_free(&q->sws[d]);
        }
        if (phase == 0)
            free_pmfs(q);
    }
    for (int d = 0; d < q->n_dirs; d++) {
        /* phase 0: the directions discretised before this one stay held; phase 1: the
         * steps of both (the previous direction's composition buffers are freed) */
        held = held_bytes(q);
        jobs[d].ctx = q->ctx;
        jobs[d].limit = q->o.memory_limit > held ? q->o.memory_limit - held : 0;
        q->dpeak[d] = 0;
        job_run(&jobs[d]);
        if (phase == 0 && held + q->dpeak[d] > q->disc_peak)
            q->disc_peak = held + q->dpeak[d]; /* beside the directions discretised before */
        if (jobs[d].st)
            return jobs[d].st;
        if (phase == 1) { /* one direction's buffers at a time */
            dpzo__pld_ws_free(&q->ws[d]);
            dpzo__pld_split_ws_free(&q->sws[d]);
        }
    }
    return DPZO_OK;
}

/* Both directions at the current tilt; the interval is the max over directions. */
static dpzo_status run_once(query *q, bounds *out, size_t *fft, size_t *bytes)
{
    job jobs[2];
    dpzo_status st = run_phase(q, 1, jobs);
    if (st)
        return st;
    bounds b = {-INFINITY, -INFINITY, -INFINITY, 1, 0, 0, 0, 0.0};
    if (q->want_delta)
        b.lo = b.est = b.hi = 0.0;
    for (int d = 0; d < q->n_dirs; d++) {
        const bounds *x = &jobs[d].b;
        q->bdir[d] = *x;
        q->done[d] = x->resolved;
        b.lo = x->lo > b.lo ? x->lo : b.lo;
        b.est = x->est > b.est ? x->est : b.est;
        b.hi = x->hi > b.hi ? x->hi : b.hi;
        b.tail = x->tail > b.tail ? x->tail : b.tail;
        if (!x->resolved) {
            b.resolved = 0;
            b.below |= x->below;
        }
        *fft = jobs[d].fft > *fft ? jobs[d].fft : *fft;
        /* the steps' arrays were held throughout */
        size_t peak = held_bytes(q) + jobs[d].bytes;
        *bytes = peak > *bytes ? peak : *bytes;
        /* the composed arrays have been read: a retry allocates afresh, within its limit */
        dpzo__pld_ws_free(&q->ws[d]);
    }
    if (!q->want_delta) {
        b.lo = b.lo > 0.0 ? b.lo : 0.0;
        b.est = b.est > 0.0 ? b.est : 0.0;
        b.hi = b.hi > 0.0 ? b.hi : 0.0;
    }
    if (b.lo > b.est)
        b.lo = b.est;
    *out = b;
    return DPZO_OK;
}

static void set_reason(dpzo_pld_result *r, const char *fmt, double a, double b)
{
    snprintf(r->reason, sizeof r->reason, fmt, a, b);
}

/* Where the PLD cannot certify anything at this target (known before composing): the
 * RDP accountant's certified bound, the trivial lower end, and why (the caller sets the
 * reason). Without an RDP analysis (sampled Laplace): the trivial bounds, epsilon +inf. */
static dpzo_status early_fallback(query *q, dpzo_pld_result *out)
{
    dpzo_dp_result cr;
    dpzo_status st = dpzo__event_query(q->ctx, q->event, q->target, q->want_delta, &q->rdp, 1, &cr);
    int have = st == DPZO_OK;
    if (st == DPZO_EUNSUPPORTED) {
        memset(&cr, 0, sizeof cr);
        cr.epsilon = INFINITY;
        cr.delta = 1.0;
        st = DPZO_OK;
    }
    if (st)
        return st;
    out->fallback = have;
    out->grid = q->d;
    if (q->want_delta) {
        out->rdp_epsilon = have ? cr.delta : NAN;
        out->epsilon = out->epsilon_lower = out->epsilon_estimate = out->epsilon_upper = q->target;
        out->delta = out->delta_upper = out->delta_estimate = cr.delta;
        out->delta_lower = 0.0;
    } else {
        out->rdp_epsilon = have ? cr.epsilon : NAN;
        out->delta = out->delta_lower = out->delta_estimate = out->delta_upper = q->target;
        out->epsilon = out->epsilon_upper = out->epsilon_estimate = cr.epsilon;
        out->epsilon_lower = 0.0;
    }
    return DPZO_OK;
}

/* The compositions of both directions until each is resolved (or no tilt is left). */
static dpzo_status compose_attempts(query *q, bounds *b, size_t *fft, size_t *bytes)
{
    dpzo_status st;
    q->lam[0] = q->lam[1] = q->lambda;
    q->cover[0] = q->cover[1] = q->done[0] = q->done[1] = 0;
    /* Each direction keeps its own tilt: one whose answer the window missed is composed
     * again, a resolved one is not (moving a shared tilt for the other direction's sake sent
     * a resolved remove direction's window thousands of loss units up, at 2^23-2^24 points
     * a composition, at delta 1e-100 and below). An answer above the window is first sought
     * with the window extended to the support's top (bounded for the add direction, and
     * cheap: pld_compose.c), then with the tilt raised. At most four compositions a
     * direction. */
    for (int attempt = 0; attempt < 4; attempt++) {
        bounds prev = *b;
        if ((st = run_once(q, b, fft, bytes))) {
            if (st == DPZO_ENOMEM && attempt > 0) {
                /* a retry's window would exceed the memory limit (refused before allocating):
                 * the last composition's unresolved bounds stand, and RDP is consulted */
                *b = prev;
                break;
            }
            return st;
        }
        if (b->resolved)
            break;
        int moved = 0;
        for (int d = 0; d < q->n_dirs; d++) {
            if (q->done[d])
                continue;
            if (q->bdir[d].below)
                q->lam[d] *= 0.5, moved = 1; /* the tilt overshot: centre lower */
            else if (!q->cover[d] && !q->bdir[d].covered)
                q->cover[d] = 1, moved = 1; /* above the window: reach the support's top */
            else if (q->lam[d] < MAX_TILT) /* ... then raise the tilt */
                q->lam[d] = fmin(MAX_TILT, 2.0 * q->lam[d] + 0.5), moved = 1;
        }
        if (!moved)
            break;
    }
    return DPZO_OK;
}

/* PRV: the mesh at which the composition fits the memory limit. The steps are discretised
 * at q->d; if the composition (one direction at a time, with both directions' steps held)
 * would exceed the limit, *h_fit is a coarser mesh at which it should fit, else q->d. The
 * composed window's extent in loss units (span x d: the tilted composition's mean plus
 * and minus its Chernoff widths, clipped to its support) hardly depends on the mesh, and the
 * steps' points scale as 1/mesh, so the mesh is chosen for the largest power-of-two FFT
 * length whose buffers fit beside the steps' arrays; the next pass measures again (the
 * caller allows 40 passes). */
static dpzo_status prv_fit(query *q, int tilt_given, double *h_fit)
{
    double lam = q->have_rdp || tilt_given ? q->lambda : choose_tilt_from_pmfs(q);
    if (lam > MAX_TILT)
        lam = MAX_TILT;
    size_t held = held_bytes(q), tables = 0, need = 0, max_n = 0;
    double span = 0.0;
    for (int dir = 0; dir < q->n_dirs; dir++) {
        size_t f, b;
        double sp;
        dpzo__pld_compose_opts co = {lam, TAU_TILT, q->o.memory_limit, 0, 0, 0};
        dpzo_status st = dpzo__pld_compose_plan(q->ctx, q->cterms[dir], q->terms.n, q->d, &co, &f,
                                                &b, &sp);
        if (st == DPZO_EINVAL && strstr(dpzo_ctx_errmsg(q->ctx), "too spread out")) {
            *h_fit = 16.0 * q->d; /* a window beyond 2^40 points: far coarser */
            return DPZO_OK;
        }
        if (st)
            return st;
        need = b > need ? b : need;
        span = sp > span ? sp : span;
        tables += q->terms.n * (sizeof(dpzo__pld_pmf) + sizeof(dpzo__pld_term));
        for (size_t i = 0; i < q->terms.n; i++)
            max_n = q->pmf[dir][i].n > max_n ? q->pmf[dir][i].n : max_n;
    }
    if (held + need <= q->o.memory_limit)
        return DPZO_OK;
    for (size_t N = (size_t)1 << 40; N >= 1024; N >>= 1) {
        double r = span / (double)(N - 16); /* the coarsening that fits the window in N */
        if (!(r > 1.0))
            continue;
        double arrays = (double)(held - tables) / r, mp = (double)max_n / r + 2.0;
        double b = (double)dpzo__pld_compose_bytes(N, q->terms.n, (size_t)mp, 0) + arrays
                   + (double)tables;
        if (b <= 0.98 * (double)q->o.memory_limit) {
            *h_fit = q->d * r * 1.01;
            return DPZO_OK;
        }
    }
    return DPZO_OK; /* nothing fits: the composition refuses, with the size it needs */
}

/* PLD: the composed window's extent in loss units, per direction, measured on the steps
 * discretised at a coarse grid (each step within 2^15 points) before they are discretised at
 * the query's grid d (issue 28, item 4: sigma 0.0243, q 1, 9 steps, delta 4.5e-206 spent
 * 35 s and 1.8 GB discretising 2.5e7 points a step before the composition, 2^25 points and
 * 2122 MiB, was refused). The extent (the tilted composition's mean plus and minus its
 * Chernoff widths, clipped to its support, pld_compose.c) hardly depends on the grid, as
 * prv_fit uses too. *ok = 0 where nothing is predicted: steps of at most 2^15 points at d
 * (discretising them is cheap, and the query's own plan is exact), a step the grid cannot
 * index, or no RDP tilt yet. */
#define PREDICT_POINTS 32768.0
#define PREDICT_SLACK 0.98
static dpzo_status window_extent(query *q, double d, double extent[2], int *ok)
{
    *ok = 0;
    if (!q->have_rdp || q->custom)
        return DPZO_OK;
    double max_n = 0.0;
    for (int dir = 0; dir < q->n_dirs; dir++)
        for (size_t i = 0; i < q->terms.n; i++) {
            dpzo__pld_source s = dir_source(&q->terms.t[i], dir);
            size_t n = dpzo__pld_points(&s, d, q->tau);
            if (n == SIZE_MAX)
                return DPZO_OK;
            max_n = (double)n > max_n ? (double)n : max_n;
        }
    if (!(max_n > PREDICT_POINTS))
        return DPZO_OK;
    double dc = d * ldexp(1.0, (int)ceil(log2(max_n / PREDICT_POINTS)));
    size_t n = q->terms.n;
    dpzo__pld_pmf *pm = calloc(n, sizeof *pm);
    dpzo__pld_term *tm = calloc(n, sizeof *tm);
    dpzo_status st = pm && tm ? DPZO_OK : dpzo__fail(q->ctx, DPZO_ENOMEM, "out of memory");
    int good = st == DPZO_OK;
    for (int dir = 0; dir < q->n_dirs && good; dir++) {
        for (size_t i = 0; i < n && good; i++) {
            dpzo__pld_source s = dir_source(&q->terms.t[i], dir);
            good = dpzo__pld_discretize(q->ctx, &s, dc, q->tau, 0, (size_t)(4.0 * PREDICT_POINTS),
                                        &pm[i]) == DPZO_OK;
            tm[i].pmf = &pm[i];
            tm[i].count = q->terms.t[i].count;
        }
        double sp = 0.0, margin = 0.0;
        dpzo__pld_compose_opts co = {q->lambda, TAU_TILT, q->o.memory_limit, 0, 1, 0};
        good = good && dpzo__pld_compose_extent(q->ctx, tm, n, dc, &co, &sp, &margin) == DPZO_OK;
        /* lowered so that the fine window's extent is not over-estimated: its Chernoff widths
         * by PREDICT_SLACK (the coarse steps' variance is larger by about dc^2 / 4 a step),
         * two coarse grid points for the rounding of its ends, and, where the window ends
         * within 2 K dc of the support (clipped by it, or could be at the fine grid), 2 K dc:
         * the coarse composition's mean and each end of its support lie within K dc of the
         * fine one's (each step's pessimistic losses move by less than a grid step) */
        extent[dir] = (sp - 2.0) * dc * PREDICT_SLACK
                      - (margin < 2.0 * q->K ? 2.0 * q->K * dc : 0.0);
        for (size_t i = 0; i < n; i++)
            dpzo__pld_pmf_free(&pm[i]);
        memset(pm, 0, n * sizeof *pm);
    }
    free(pm);
    free(tm);
    if (st == DPZO_OK && !good)
        q->ctx->errmsg[0] = '\0'; /* no prediction: the query finds out for itself */
    *ok = good;
    return st;
}

static size_t pow2_from(double x)
{
    size_t N = 1024;
    while ((double)N < x && N < ((size_t)1 << 40))
        N <<= 1;
    return N;
}

/* PLD: a lower estimate of what the query holds at grid d, from the window extents above:
 * the larger of its discretisation (what discretise_dir reserves for each step, the
 * directions one after the other, their points counted exactly by dpzo__pld_points) and
 * its first composition (the steps' mass arrays and one direction's buffers, the window's
 * points from the lowered extents), so that a grid the query would fit is not refused on
 * the prediction. It is an estimate (the widths' slack is measured, not proven): a query it
 * lets through is still planned exactly before anything is composed. */
static size_t predicted_bytes(const query *q, double d, const double extent[2], size_t *fft)
{
    int cdt = q->o.method == DPZO_PLD_CONNECT_DOTS;
    double held = 0.0, disc = 0.0, comp = 0.0;
    *fft = 0;
    for (int dir = 0; dir < q->n_dirs; dir++) {
        double max_n = 0.0;
        held += (double)q->terms.n * (double)(sizeof(dpzo__pld_pmf) + sizeof(dpzo__pld_term));
        for (size_t i = 0; i < q->terms.n; i++) {
            dpzo__pld_source s = dir_source(&q->terms.t[i], dir);
            size_t n = dpzo__pld_points(&s, d, q->tau);
            if (n == SIZE_MAX)
                return SIZE_MAX;
            /* what discretise_dir reserves for the step while it is discretised (one
             * direction after the other: the directions before it held) */
            double dp = held + (double)dpzo__pld_discretize_fixed_bytes(&s, (size_t)-1)
                        + ((double)n + 1.0)
                              * (double)(2 * sizeof(double) + sizeof(dpzo__pld_tails)
                                         + 2 * sizeof(double));
            disc = dp > disc ? dp : disc;
            held += (double)n * (cdt ? 2.0 : 1.0) * (double)sizeof(double);
            max_n = (double)n > max_n ? (double)n : max_n;
        }
        double pts = extent[dir] / d;
        size_t N = pow2_from(pts);
        *fft = N > *fft ? N : *fft;
        double c = (double)dpzo__pld_compose_bytes(N, q->terms.n, (size_t)max_n, cdt);
        comp = c > comp ? c : comp;
    }
    double need = held + comp > disc ? held + comp : disc;
    return need < 0x1p62 ? (size_t)need : SIZE_MAX;
}

static void coarsened_note(char *note, size_t size, double asked, double used, size_t limit)
{
    snprintf(note, size, "the default grid %g does not fit the memory limit of %.6g MiB: grid %g used",
             asked, (double)limit / 1048576.0, used);
}

/* Set while a query runs for an event's concrete instance (its lower end): truncated
 * sampled Gaussians and batches drawn without replacement. */
static _Thread_local int tsg_instance;

static dpzo_status query_run(dpzo_ctx *ctx, const dpzo_event *event, const tterm *custom,
                             double target, int want_delta, const dpzo_pld_options *opts,
                             int plan_only, size_t *plan_bytes, size_t *plan_fft,
                             dpzo_pld_result *out);

/* The lower end of an event holding truncated sampled Gaussians or batches drawn without
 * replacement: the same query with each of them replaced by its concrete instance (the
 * other records at 0, the record at 1: a Poisson-sampled Gaussian, flatten()), a mechanism a
 * pair of datasets attains, so its proven lower end bounds the mechanism's worst case from
 * below. */
static int instance_lower(const dpzo_event *event, double target, int want_delta,
                          const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    dpzo_pld_result r;
    dpzo_ctx *c2 = dpzo_ctx_new(); /* a refusal here is no error of the query's */
    if (c2 == NULL)
        return 0;
    tsg_instance = 1;
    dpzo_status st = query_run(c2, event, NULL, target, want_delta, opts, 0, NULL, NULL, &r);
    tsg_instance = 0;
    dpzo_ctx_free(c2);
    if (st != DPZO_OK)
        return 0;
    double *lo = want_delta ? &out->delta_lower : &out->epsilon_lower;
    const double up = want_delta ? out->delta_upper : out->epsilon_upper;
    const double il = want_delta ? r.delta_lower : r.epsilon_lower;
    if (!(il > *lo))
        return 1;
    *lo = il < up ? il : up;
    if (strncmp(out->reason, "the truncated", 13) == 0)
        snprintf(out->reason, sizeof out->reason,
                 "the truncated sampled Gaussian is accounted through a dominating pair (the "
                 "upper end) and a concrete instance (the lower end)");
    return 1;
}

/* One query, of an event or (event NULL) of the single custom term `custom`. */
static dpzo_status query_run(dpzo_ctx *ctx, const dpzo_event *event, const tterm *custom,
                             double target, int want_delta, const dpzo_pld_options *opts,
                             int plan_only, size_t *plan_bytes, size_t *plan_fft,
                             dpzo_pld_result *out)
{
    dpzo_status st;
    if (event == NULL && custom == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "event is NULL");
    if (want_delta ? (st = dpzo__check_epsilon(ctx, target)) : (st = dpzo__check_delta(ctx, target)))
        return st;
    query q;
    memset(&q, 0, sizeof q);
    q.ctx = ctx;
    q.event = event;
    q.want_delta = want_delta;
    q.target = target;
    if (opts)
        q.o = *opts;
    else
        dpzo_pld_options_default(&q.o);
    if (q.o.method != DPZO_PLD_CONNECT_DOTS && q.o.method != DPZO_PLD_PRV)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown PLD method %d", (int)q.o.method);
    /* grid 0: the default, 1e-4, coarsened by powers of two where the query would not fit
     * the memory limit at it (issue 28, item 4); a grid the caller gives is used as given */
    const int auto_grid = q.o.grid == 0.0 && q.o.method == DPZO_PLD_CONNECT_DOTS && event != NULL;
    if (q.o.grid == 0.0)
        q.o.grid = DEFAULT_GRID;
    if (q.o.memory_limit == 0)
        q.o.memory_limit = DEFAULT_MEMORY;
    if (!(q.o.grid > 0.0 && q.o.grid <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "grid interval must be in (0, 1], got %g", q.o.grid);
    if (!(q.o.eps_error >= 0.0) || !isfinite(q.o.eps_error))
        return dpzo__fail(ctx, DPZO_EINVAL, "eps_error must be finite and >= 0, got %g",
                          q.o.eps_error);
    if (q.o.method == DPZO_PLD_PRV && q.o.eps_error == 0.0)
        q.o.eps_error = DEFAULT_EPS_ERROR;
    if (!(q.o.delta_error >= 0.0 && q.o.delta_error < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta_error must be in [0, 1), got %g",
                          q.o.delta_error);
    if (!want_delta && q.o.delta_error >= target)
        return dpzo__fail(ctx, DPZO_EINVAL, "delta_error %g must be below delta %g",
                          q.o.delta_error, target);
    if (q.o.rdp)
        q.rdp = *q.o.rdp;
    else
        q.rdp = dpzo_rdp_options_default();

    memset(out, 0, sizeof *out);
    out->rdp_epsilon = NAN;
    if (custom != NULL) {
        q.custom = 1;
        if (q.o.method != DPZO_PLD_CONNECT_DOTS)
            return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                              "a custom noise is accounted by the connect-the-dots PLD only");
        if (custom->count > 0 && (st = push(ctx, &q.terms, *custom))) {
            query_free(&q);
            return st;
        }
    } else if ((q.terms.instance = tsg_instance, st = flatten(ctx, event, 1, &q.terms))
               || (st = merge(ctx, &q.terms))) {
        query_free(&q);
        return st;
    } else if ((st = merge_gaussians(ctx, &q.terms, q.o.grid > 0.0 ? q.o.grid : DEFAULT_GRID))) {
        query_free(&q);
        return st;
    }
    /* The sampling bound (sampling_bound.c): delta(eps) <= 1 - P(no step uses the record the
     * neighbours differ in) at every eps >= 0, so epsilon is 0 wherever delta is at least
     * that, whatever the noise; nothing is discretised (issue 28, item 4: at sigma 0.0049367,
     * q 2.076e-5, one step, delta 0.018754 the PLD refused for memory and PRV answered 35.41,
     * where the exact epsilon is 0). A delta query's upper end is capped by it below. */
    double sb = event != NULL ? dpzo__event_sampling_bound(event)
                              : dpzo__sampling_bound(custom->src.q, custom->count);
    if (!want_delta && target >= sb) {
        out->delta = out->delta_lower = out->delta_estimate = out->delta_upper = target;
        out->grid = q.o.method == DPZO_PLD_CONNECT_DOTS ? q.o.grid : 0.0;
        snprintf(out->reason, sizeof out->reason,
                 "delta %g is at least %.10g, the sampling bound 1 - P(no step uses the record) "
                 "on delta at every epsilon >= 0: epsilon 0, nothing composed", target, sb);
        query_free(&q);
        if (plan_only)
            *plan_bytes = *plan_fft = 0;
        return DPZO_OK;
    }
    q.K = 0.0;
    q.n_dirs = 1;
    for (size_t i = 0; i < q.terms.n; i++) {
        q.K += (double)q.terms.t[i].count;
        if (q.terms.t[i].two_sided)
            q.n_dirs = 2;
    }
    /* a leaf the PLD does not model: the RDP accountant's certified answer, with the reason */
    if (q.terms.rdp_only != NULL && !q.terms.infinite) {
        st = early_fallback(&q, out);
        if (st == DPZO_OK) {
            snprintf(out->reason, sizeof out->reason,
                     "%s: the RDP accountant's certified bound", q.terms.rdp_only);
            if (plan_only)
                *plan_bytes = *plan_fft = 0;
        }
        query_free(&q);
        return st;
    }

    if (q.terms.infinite || q.terms.n == 0) {
        /* a Laplace of scale 0 spends infinity; an empty event spends nothing */
        double e = q.terms.infinite ? INFINITY : 0.0, dl = q.terms.infinite ? 1.0 : 0.0;
        /* a sampled step without noise: only the trivial lower ends are proven here */
        double elo = q.terms.infinite && !q.terms.infinite_lower ? 0.0 : e;
        double dlo = q.terms.infinite && !q.terms.infinite_lower ? 0.0 : dl;
        if (want_delta) {
            if (sb < dl) { /* no noise: each step that uses the record reveals it */
                dl = sb;
                snprintf(out->reason, sizeof out->reason,
                         "a step without noise: delta is at most the sampling bound 1 - P(no "
                         "step uses the record), %.10g", sb);
            }
            dlo = dlo < dl ? dlo : dl;
            out->delta = out->delta_estimate = out->delta_upper = dl;
            out->delta_lower = dlo;
            out->epsilon = out->epsilon_lower = out->epsilon_estimate = out->epsilon_upper = target;
        } else {
            out->epsilon = out->epsilon_estimate = out->epsilon_upper = e;
            out->epsilon_lower = elo;
            out->delta = out->delta_lower = out->delta_estimate = out->delta_upper = target;
        }
        query_free(&q);
        if (plan_only)
            *plan_bytes = *plan_fft = 0;
        return DPZO_OK;
    }

    /* the tilt from the RDP accountant (standard conversion) */
    dpzo_rdp_options ro = q.rdp;
    ro.conversion = DPZO_CONVERSION_STANDARD;
    dpzo_dp_result rr;
    st = event == NULL ? DPZO_EUNSUPPORTED
                       : dpzo__event_query(ctx, event, target, want_delta, &ro, 0, &rr);
    if (st == DPZO_OK) {
        q.have_rdp = 1;
        q.lambda = isfinite(rr.order) ? rr.order - 1.0 : MAX_TILT;
        q.rdp_fast = want_delta ? rr.delta_estimate : rr.epsilon_estimate;
    } else if (st != DPZO_EUNSUPPORTED) {
        query_free(&q);
        return st;
    }
    int tilt_given = custom != NULL && custom->src.noise->tilt > 0.0;
    if (tilt_given)
        q.lambda = custom->src.noise->tilt; /* plays the RDP accountant's part */
    if (q.lambda < 0.0)
        q.lambda = 0.0;
    if (q.lambda > MAX_TILT)
        q.lambda = MAX_TILT;

    /* Beyond 1e8 steps the rounding of each discretised bucket's mass, which the
     * composition's error term does not yet bound (only the tilt's rounding is in it),
     * could reach the size of the slack: the PLD claims nothing there and the RDP bound
     * stands (docs/accountant.md 6.6). */
    if (q.K > PLD_MAX_STEPS) {
        st = early_fallback(&q, out);
        if (st == DPZO_OK) {
            set_reason(out, "%.3g steps: beyond %.0e the PLD/PRV discretisation's rounding is "
                            "not bounded, the PLD claims nothing", q.K, PLD_MAX_STEPS);
            if (plan_only)
                *plan_bytes = *plan_fft = 0;
        }
        query_free(&q);
        return st;
    }

    /* truncation of each step's tails */
    double dguess = want_delta ? (q.have_rdp ? q.rdp_fast * 1e-4 : 1e-40) : target;
    if (!(dguess > 1e-300))
        dguess = 1e-300;
    q.tau = 1e-4 * dguess / (q.K * (double)q.n_dirs);
    if (q.tau < DBL_MIN) /* the smallest normal double: its log stays exact enough */
        q.tau = DBL_MIN;
    if (q.tau > 1e-6)
        q.tau = 1e-6;

    /* the grid, and the coupling error terms (see the file comment) */
    double dref = want_delta ? (q.have_rdp ? q.rdp_fast * 1e-3 : 1e-30) : target;
    q.delta_err = q.o.delta_error > 0.0 ? q.o.delta_error : 1e-3 * dref;
    if (!(q.delta_err > 1e-300))
        q.delta_err = 1e-300;
    const double bq = sqrt(0.5 * q.K * log(1.0 / q.delta_err));
    /* PRV: the mesh does not depend on delta (issue 28, item 4). Solved from delta_err (t =
     * h bq), a larger delta got a coarser mesh and the upper end, which moves with the mesh,
     * could rise with delta (sigma 14.907054457228305, batches of 111 of 1095118, one step:
     * 0.0027289 at delta 2.28e-9, 0.0028491 at 4.53e-8). Nested in no way that orders the
     * upper ends (a finer mesh's pessimistic pair is dominated by a coarser one's, which at a
     * larger delta can still lie above the finer one's answer at a smaller delta), the only
     * order-preserving choice is one mesh for every delta: it is solved at the caller's
     * delta_error when given, else at PRV_MESH_DELTA_ERR. The coupling's own t (and the
     * reported eps_error) still use the query's delta_err: below delta 1e-10 the interval is
     * wider than eps_error, by sqrt(log(1/delta_err) / log(1e13)) (1.6 at delta 1e-30),
     * above it narrower. */
    const double bq_mesh = sqrt(0.5 * q.K * log(1.0 / (q.o.delta_error > 0.0 ? q.o.delta_error
                                                                              : PRV_MESH_DELTA_ERR)));
    double t_mesh = 0.0; /* t + K B(h) at the mesh's delta_error: what the mesh choices compare */
    /* PLD: predict the memory before discretising the steps (issue 28, item 4), from their
     * points (exact) and the composed window's extent measured at a coarse grid. A grid the
     * caller chose is refused at once where the prediction, a lower estimate, exceeds the
     * limit (it was refused after the work: 35 s and 1.8 GB at sigma 0.0243, q 1, 9 steps,
     * delta 4.5e-206); the default grid is coarsened by powers of two until the prediction
     * fits (sigma 0.01, q 0.004, one step: refused at 1e-4 for its 5e7 points,
     * answered at 0.0004 now), and again should the query itself still not fit. */
    char grid_note[200] = "";
    double ext[2] = {0.0, 0.0};
    int have_ext = 0;
    if (q.o.method == DPZO_PLD_CONNECT_DOTS && event != NULL) {
        if ((st = window_extent(&q, q.o.grid, ext, &have_ext))) {
            query_free(&q);
            return st;
        }
        size_t pf = 0, pb = have_ext ? predicted_bytes(&q, q.o.grid, ext, &pf) : 0;
        if (have_ext && auto_grid && pb > q.o.memory_limit) {
            double g = q.o.grid;
            size_t pb0 = pb;
            while (pb > q.o.memory_limit && 2.0 * g <= 1.0)
                pb = predicted_bytes(&q, g *= 2.0, ext, &pf);
            snprintf(grid_note, sizeof grid_note,
                     "the default grid %g would need about %.0f MiB, more than the memory limit "
                     "of %.6g MiB: grid %g used", q.o.grid, (double)pb0 / 1048576.0,
                     (double)q.o.memory_limit / 1048576.0, g);
            q.o.grid = g;
        }
        if (have_ext && pb > q.o.memory_limit) {
            if (plan_only) { /* the prediction, a lower estimate, is the plan's answer */
                *plan_bytes = pb;
                *plan_fft = pf;
                query_free(&q);
                return DPZO_OK;
            }
            query_free(&q);
            return dpzo__fail(ctx, DPZO_ENOMEM,
                              "the query would need at least about %.0f MiB (FFT size %zu, "
                              "predicted before discretising the steps at grid %g%s), more than "
                              "the memory limit of %.6g MiB; %s", (double)pb / 1048576.0, pf,
                              q.o.grid, grid_note[0] ? ", the default grid coarsened to its end" : "",
                              (double)q.o.memory_limit / 1048576.0,
                              grid_note[0] ? "raise the limit, or use PRV or RDP"
                                           : "use a coarser grid or raise the limit");
        }
    }
    double budget = q.o.eps_error; /* PRV: what t + K B(h) may use */
    double h_mem = 0.0; /* PRV: the finest mesh the memory limit leaves room for, or the one
                           that balances the rounding guards' shift (0: any) */
    int balanced = 0; /* PRV: 1 after trying the mesh that balances them, 2 after undoing it */
    double bal_d = 0.0, bal_err = 0.0;
    double grid_asked = q.o.grid; /* PLD: the grid before any coarsening to fit */
    if (grid_note[0] != '\0')
        grid_asked = DEFAULT_GRID;
rediscretise:
    for (int pass = 0, mem_pass = 0;; pass++) {
        if (q.o.method == DPZO_PLD_CONNECT_DOTS) {
            q.d = q.o.grid;
        } else {
            double a = q.K / 8.0;
            q.d = 2.0 * budget / (bq_mesh + sqrt(bq_mesh * bq_mesh + 4.0 * a * budget));
            if (q.d < h_mem)
                q.d = h_mem;
        }
        q.t_shift = q.d * bq + q.K * prv_bias(q.d);
        t_mesh = q.d * bq_mesh + q.K * prv_bias(q.d);
        job jobs[2];
        if ((st = run_phase(&q, 0, jobs))) {
            if (st == DPZO_ENOMEM && q.o.method == DPZO_PLD_PRV && mem_pass < 40) {
                /* PRV: a step's points do not fit at this mesh; they halve at twice it */
                free_pmfs(&q);
                h_mem = 2.0 * q.d;
                mem_pass++;
                continue;
            }
            if (st == DPZO_ENOMEM && auto_grid && 2.0 * q.o.grid <= 1.0 && !plan_only) {
                /* the default grid: coarser until the steps fit */
                free_pmfs(&q);
                q.o.grid *= 2.0;
                coarsened_note(grid_note, sizeof grid_note, grid_asked, q.o.grid,
                               q.o.memory_limit);
                goto rediscretise;
            }
            int w = q.too_wide[0] ? 0 : q.too_wide[1] ? 1 : -1;
            if (st == DPZO_EINVAL && w >= 0 && event != NULL) {
                /* a step's loss is beyond the grid's index range: the PLD claims nothing
                 * (its mass would sit at +infinity), the RDP bound stands */
                double sc = q.wide_scale[w], sq = q.wide_q[w];
                if ((st = early_fallback(&q, out)) == DPZO_OK) {
                    snprintf(out->reason, sizeof out->reason,
                             "the privacy loss of a step with noise scale %g, sampling rate %g "
                             "spans more than 2^52 grid steps of %g: the PLD claims nothing",
                             sc, sq, q.d);
                    if (plan_only)
                        *plan_bytes = *plan_fft = 0;
                }
                query_free(&q);
                return st;
            }
            query_free(&q);
            return st;
        }
        if (q.o.method == DPZO_PLD_PRV && mem_pass < 40) {
            /* PRV: the composition at this mesh must fit the memory limit with the steps'
             * arrays; if not, the mesh that does (a larger epsilon error, reported) */
            double h_fit = q.d;
            if ((st = prv_fit(&q, tilt_given, &h_fit))) {
                query_free(&q);
                return st;
            }
            if (h_fit > q.d) {
                free_pmfs(&q);
                h_mem = h_fit;
                mem_pass++;
                continue;
            }
        }
        double te = 0.0;
        for (int dir = 0; dir < q.n_dirs; dir++)
            te = q.t_extra[dir] > te ? q.t_extra[dir] : te;
        /* PRV: the rounding guards' shift E (about 1e-7 for 1000 steps) comes out of the
         * error target when it fits in a tenth of it: the mesh is solved again for
         * eps_error - 1.25 E (E grows a little as the mesh shrinks); otherwise, or after
         * three passes, or when the memory limit sets the mesh, the reported eps_error
         * includes it */
        if (q.o.method == DPZO_PLD_PRV && te > t_mesh && balanced == 0 && q.d != h_mem) {
            /* PRV: the guards' shift E exceeds the coupling's t. E is a rounding error per
             * bucket over the mesh, roughly as 1/h (E h 1.4e-7 to 1.9e-7 for a million steps
             * of q = 0.01, sigma = 1, at meshes 3e-6 to 7e-6), and t grows as h, so t + E
             * should be least near h sqrt(E / t): a coarser mesh, tighter and cheaper (that
             * case at the mesh eps_error 0.01 asks for: t 0.010 + E 0.049 on 2^26 points;
             * at h sqrt(E / t), 0.049 on 2^25). E is not monotone in h, so the mesh is
             * tried, and the first one taken again if it was better. */
            balanced = 1;
            bal_d = q.d;
            bal_err = t_mesh + te;
            h_mem = q.d * sqrt(te / t_mesh);
            free_pmfs(&q);
            continue;
        }
        if (balanced == 1 && t_mesh + te > bal_err) {
            balanced = 2; /* the balanced mesh was worse: back to the first */
            h_mem = bal_d;
            free_pmfs(&q);
            continue;
        }
        if (q.o.method != DPZO_PLD_PRV || t_mesh + te <= q.o.eps_error || pass >= 3
            || te > 0.1 * q.o.eps_error || q.d == h_mem)
            break;
        budget = q.o.eps_error - (pass + 1.25) * te;
        free_pmfs(&q);
    }
    out->grid = q.d;
    out->eps_error = q.o.method == DPZO_PLD_PRV ? q.t_shift : 0.0;
    out->delta_error = q.o.method == DPZO_PLD_PRV ? q.delta_err + 2.0 * q.K * q.tau : 0.0;
    if (!want_delta && event != NULL) {
        /* the steps' tails above their grids are put at +infinity: when that mass alone
         * reaches delta no epsilon can be certified, whatever is composed (at delta near
         * 1e-300, where tau meets its floor DBL_MIN, this was four compositions of up to
         * 2^23 points before the same fallback) */
        double inf_mass = 0.0;
        for (int dir = 0; dir < q.n_dirs; dir++) {
            double lk = 0.0;
            for (size_t i = 0; i < q.terms.n; i++)
                lk += (double)q.terms.t[i].count * log1p(-q.pmf[dir][i].pess_inf);
            double m = -expm1(lk) * (1.0 - 4.0 * U_REL * (q.K + 2.0));
            inf_mass = m > inf_mass ? m : inf_mass;
        }
        if (inf_mass >= target) {
            st = early_fallback(&q, out);
            if (st == DPZO_OK) {
                set_reason(out, "the steps' tails above the grid (mass %.3g put at +infinity) "
                                "reach delta %g: the PLD cannot certify an epsilon there",
                           inf_mass, target);
                if (plan_only)
                    *plan_bytes = *plan_fft = 0;
            }
            query_free(&q);
            return st;
        }
    }
    if (!q.have_rdp && !tilt_given)
        q.lambda = choose_tilt_from_pmfs(&q);
    for (int dir = 0; dir < q.n_dirs; dir++)
        if (q.o.method == DPZO_PLD_PRV) { /* what the lower ends were widened by */
            double te = q.t_shift + q.t_extra[dir];
            double de = q.delta_err + 2.0 * q.K * q.tau + q.d_extra[dir];
            out->eps_error = te > out->eps_error ? te : out->eps_error;
            out->delta_error = de > out->delta_error ? de : out->delta_error;
        }

    if (plan_only) {
        /* the peak of discretisation (per direction the most it held, its kept arrays and
         * one step's scratch, at every mesh tried: the directions may run at the same
         * time) and of the first composition (the steps' arrays and the directions'
         * buffers, together where they run in parallel); a retry at another tilt or window
         * is checked against the limit before it allocates */
        size_t comp = 0, cmax = 0, fft = 0, held = held_bytes(&q);
        int par = 1;
        for (int dir = 0; dir < q.n_dirs; dir++) {
            size_t f, b;
            dpzo__pld_compose_opts co = {q.lambda, TAU_TILT, q.o.memory_limit,
                                         q.o.method == DPZO_PLD_CONNECT_DOTS, 0, 0};
            if ((st = dpzo__pld_compose_plan(ctx, q.cterms[dir], q.terms.n, q.d, &co, &f, &b,
                                             NULL))) {
                query_free(&q);
                return st;
            }
            comp += b;
            cmax = b > cmax ? b : cmax;
            /* run_phase composes the directions in parallel when each fits half of what
             * the steps' arrays leave, else one at a time */
            par &= held <= q.o.memory_limit && b <= (q.o.memory_limit - held) / 2;
            fft = f > fft ? f : fft;
        }
        comp = par ? comp : cmax;
        *plan_bytes = held + comp > q.disc_peak ? held + comp : q.disc_peak;
        *plan_fft = fft;
        query_free(&q);
        return DPZO_OK;
    }

    bounds b = {0}, bdir[2];
    size_t fft = 0, bytes = 0;
    q.bdir = bdir;
    if ((st = compose_attempts(&q, &b, &fft, &bytes))) {
        if (st == DPZO_ENOMEM && auto_grid && 2.0 * q.o.grid <= 1.0) {
            /* the default grid: the composition did not fit where the prediction did */
            free_pmfs(&q);
            for (int d = 0; d < 2; d++) {
                dpzo__pld_ws_free(&q.ws[d]);
                dpzo__pld_split_ws_free(&q.sws[d]);
            }
            q.o.grid *= 2.0;
            coarsened_note(grid_note, sizeof grid_note, grid_asked, q.o.grid, q.o.memory_limit);
            goto rediscretise;
        }
        query_free(&q);
        return st;
    }
    /* Delta queries: tau came from the RDP accountant's delta (1.5e-13 a step where that was
     * 1e-5 and the truth 1.4e-12: q 4.3e-5, 3 steps, eps 0.05), and the tails put at
     * +infinity (K tau a direction) then made a third of the upper end. Once the composition
     * has estimated delta, a tau above 1e-5 of that estimate (over K steps and the
     * directions) is lowered to 1e-6 of it and the steps are discretised and composed
     * again, once; should that fail (memory), the first bounds, proven, stand. */
    double tau_new = 1e-6 * b.est / (q.K * (double)q.n_dirs);
    if (want_delta && b.resolved && !q.custom && q.o.method == DPZO_PLD_CONNECT_DOTS
        && b.est > 0.0 && q.K * q.tau * (double)q.n_dirs > 1e-5 * b.est && tau_new > DBL_MIN
        && tau_new < q.tau) {
        bounds b0 = b;
        size_t fft0 = fft, bytes0 = bytes;
        free_pmfs(&q);
        q.tau = tau_new;
        job jobs[2];
        if (run_phase(&q, 0, jobs) || compose_attempts(&q, &b, &fft, &bytes)
            || !(b.resolved && b.hi <= b0.hi)) {
            b = b0;
            fft = fft0;
            bytes = bytes0;
        }
    }
    /* Epsilon queries: tau is 1e-4 of delta (over K steps and the directions), which moves
     * the upper end by about 1e-4 delta over the slope of delta(eps). Near eps 0 with a
     * large delta that slope is small and the tails made most of the error: q 1, sigma
     * 28.62, 262 steps, delta 0.2226 read 4.4e-5 for a truth of 8.72e-6 at every grid.
     * Where their share of the upper end exceeds a tenth of the accuracy the default grid
     * aims at (max(1e-3 eps, 1e-6), docs/accountant.md 6.5), tau is lowered in proportion
     * (to a fiftieth of that accuracy) and the steps are discretised and composed again,
     * once; the tighter proven ends are kept. */
    double acc = fmax(1e-3 * b.hi, 1e-6);
    if (!want_delta && b.resolved && !q.custom && b.tail > 0.1 * acc && q.tau > DBL_MIN) {
        bounds b0 = b;
        size_t fft0 = fft, bytes0 = bytes;
        double tau0 = q.tau;
        free_pmfs(&q);
        q.tau = fmax(DBL_MIN, q.tau * 0.02 * acc / b.tail);
        job jobs[2];
        if (run_phase(&q, 0, jobs) || compose_attempts(&q, &b, &fft, &bytes) || !b.resolved) {
            b = b0;
            fft = fft0;
            bytes = bytes0;
            q.tau = tau0;
        } else {
            b.hi = fmin(b.hi, b0.hi);
            b.lo = fmax(b.lo, b0.lo);
            b.est = fmin(b.est, b.hi);
            fft = fft0 > fft ? fft0 : fft;
            bytes = bytes0 > bytes ? bytes0 : bytes;
        }
    }
    /* Refining the grid must not loosen the bounds, and the FFT composition's error terms,
     * absolute, grow with its length: where the split composition did not run (too much
     * work at this grid, or steps not of its shape) and the error terms show in the upper
     * end (above its estimate by more than 1e-8 relative), the same query at a 10 times
     * coarser grid (up to 1e-3) is answered too, and each end takes the tighter of the two
     * (both proven: any grid's pessimistic and optimistic PMFs bound the same pair). It
     * costs about a tenth more (a hundredth more at the level below). Issue 20: q 1.6e-5,
     * 9 steps, sigma 0.524, delta 1.3e-9 gave [0.1898, 0.2046] at grid 1e-5 where grid 1e-4
     * gives [0.197032, 0.197048]. */
    if (b.resolved && !plan_only && event != NULL && !q.custom
        && q.o.method == DPZO_PLD_CONNECT_DOTS && 10.0 * q.d <= 1e-3 && b.hi - b.est > 1e-8 * b.hi
        && (q.split_missed[0] || (q.n_dirs == 2 && q.split_missed[1]))) {
        /* the coarser query gets what this one does not hold: its compositions' buffers are
         * released first (nothing below reads them), its steps' arrays stay counted */
        for (int d = 0; d < 2; d++) {
            dpzo__pld_ws_free(&q.ws[d]);
            dpzo__pld_split_ws_free(&q.sws[d]);
        }
        size_t held = held_bytes(&q);
        dpzo_pld_options o2 = q.o;
        o2.grid = 10.0 * q.d;
        o2.memory_limit = q.o.memory_limit > held ? q.o.memory_limit - held : 0;
        dpzo_pld_result r2;
        if (o2.memory_limit > 0 /* 0 would mean the default limit */
            && query_run(ctx, event, NULL, target, want_delta, &o2, 0, NULL, NULL, &r2) == DPZO_OK
            && !r2.fallback) {
            double hi2 = want_delta ? r2.delta_upper : r2.epsilon_upper;
            double lo2 = want_delta ? r2.delta_lower : r2.epsilon_lower;
            b.hi = hi2 < b.hi ? hi2 : b.hi;
            b.lo = lo2 > b.lo ? lo2 : b.lo;
            b.est = b.est < b.hi ? b.est : b.hi;
            b.lo = b.lo < b.est ? b.lo : b.est;
        }
    }
    if (!plan_only)
        one_step_bounds(&q, &b);
    q.lambda = q.lam[0]; /* reported: an unresolved direction's tilt, else the first's */
    for (int d = 0; d < q.n_dirs; d++)
        if (!q.done[d]) {
            q.lambda = q.lam[d];
            break;
        }
    if (!want_delta) {
        /* no loss exceeds the sum of the steps' largest losses (when all are finite and no
         * step has mass at +infinity): a second proven upper end */
        double lmax_all = 0.0;
        for (int dir = 0; dir < q.n_dirs; dir++) {
            double s = 0.0;
            for (size_t i = 0; i < q.terms.n; i++) {
                dpzo__pld_source src = dir_source(&q.terms.t[i], dir);
                double lmin, lmax;
                dpzo__pld_support(&src, &lmin, &lmax);
                s += (double)q.terms.t[i].count * lmax;
            }
            lmax_all = s > lmax_all ? s : lmax_all;
        }
        lmax_all = dpzo__up(lmax_all * (1.0 + 1e-12));
        if (isfinite(lmax_all) && b.hi > lmax_all) {
            b.hi = lmax_all;
            if (b.est > b.hi)
                b.est = b.hi;
        }
    }
    out->fft_size = fft;
    /* the query's peak: its discretisations' or its compositions' */
    out->memory_bytes = bytes > q.disc_peak ? bytes : q.disc_peak;
    out->tilt = q.lambda;
    if (want_delta) {
        out->epsilon = out->epsilon_lower = out->epsilon_estimate = out->epsilon_upper = target;
        out->delta_lower = b.lo;
        out->delta_estimate = b.est;
        out->delta_upper = out->delta = b.hi;
    } else {
        out->delta = out->delta_lower = out->delta_estimate = out->delta_upper = target;
        out->epsilon_lower = b.lo;
        out->epsilon_estimate = b.est;
        out->epsilon_upper = out->epsilon = b.hi;
    }
    int fall = 0;
    if (!b.resolved && q.custom) {
        /* no RDP to fall back on here: claim nothing rather than an unresolved bound */
        out->epsilon_lower = 0.0;
        out->epsilon_estimate = out->epsilon_upper = out->epsilon = INFINITY;
        set_reason(out, "the composed distribution's window does not resolve the answer (tilt %g)",
                   q.lambda, 0.0);
        query_free(&q);
        return DPZO_OK;
    }
    if (!b.resolved) {
        fall = 1;
        set_reason(out, "the composed distribution's window does not resolve the answer (tilt %g)",
                   q.lambda, 0.0);
    } else if (q.o.method == DPZO_PLD_CONNECT_DOTS && q.o.eps_error > 0.0 && !want_delta
               && b.hi - b.lo > q.o.eps_error) {
        fall = 1;
        set_reason(out, "interval width %.3g exceeds the requested accuracy %.3g; refine the grid",
                   b.hi - b.lo, q.o.eps_error);
    } else if (!want_delta && q.have_rdp && event != NULL && b.hi > 0.0) {
        /* resolved but possibly looser than RDP (an add direction at tilt 200 whose top the
         * FFT's error floor decides): both are proven, report the smaller. The comparison is
         * with the bound the fallback reports, the RDP accountant's own answer (its
         * conversion, q.rdp), not with the standard conversion's estimate that chose the tilt:
         * issue 28 (item 4) found a reason quoting 0.0001542 for that estimate beside an RDP
         * bound of 0 (sigma 100, q 1e-4, 1000 steps, delta 3e-5). The estimate decides whether
         * to certify; the certified bound decides the fallback and is what the reason quotes. */
        dpzo_dp_result fr;
        if ((st = dpzo__event_query(ctx, event, target, 0, &q.rdp, 0, &fr))) {
            query_free(&q);
            return st;
        }
        if (b.hi > fr.epsilon_estimate)
            fall = 2;
    }
    if (fall) {
        dpzo_dp_result cr;
        st = event == NULL ? DPZO_EUNSUPPORTED
                           : dpzo__event_query(ctx, event, target, want_delta, &q.rdp, 1, &cr);
        if (st == DPZO_OK && fall == 2 && !(cr.epsilon < b.hi))
            fall = 0; /* the estimate was below, the certified bound is not: no fallback */
        else if (st == DPZO_OK && fall == 2)
            /* the quoted bound rounded up (%.10g errs by at most 5e-11 relative) */
            snprintf(out->reason, sizeof out->reason,
                     "the %s's upper end %.10g is above the RDP accountant's certified %.10g",
                     q.o.method == DPZO_PLD_PRV ? "PRV" : "PLD", b.hi,
                     cr.epsilon * (1.0 + 1e-10));
        if (st == DPZO_OK && fall) {
            out->fallback = 1;
            double v = want_delta ? cr.delta : cr.epsilon;
            out->rdp_epsilon = v;
            /* both upper ends are proven (an unresolved scan still bounds from above):
             * report the smaller; the lower end stays the tight accountant's */
            double *up = want_delta ? &out->delta_upper : &out->epsilon_upper;
            double *est = want_delta ? &out->delta_estimate : &out->epsilon_estimate;
            if (!(*up <= v))
                *up = v;
            if (!b.resolved || *est > *up)
                *est = *up;
            if (want_delta)
                out->delta = out->delta_upper;
            else
                out->epsilon = out->epsilon_upper;
        } else if (st == DPZO_EUNSUPPORTED) {
            /* no RDP analysis either: keep the (valid but loose) tight bounds */
            out->fallback = 0;
            out->reason[0] = '\0';
        } else if (st != DPZO_OK) {
            query_free(&q);
            return st;
        }
    }
    if (grid_note[0] != '\0' && !out->fallback && out->reason[0] == '\0')
        snprintf(out->reason, sizeof out->reason, "%s", grid_note);
    const int trivial = q.terms.lower_trivial;
    if (trivial) {
        /* the upper end is proven through a pair that dominates the truncated steps; that
         * pair's lower end says nothing of the mechanism's own epsilon (below: the instance's) */
        if (want_delta)
            out->delta_lower = 0.0;
        else
            out->epsilon_lower = 0.0;
        if (out->reason[0] == '\0')
            snprintf(out->reason, sizeof out->reason,
                     "the truncated sampled Gaussian is accounted through a dominating pair: "
                     "its upper end is proven, its lower end only the trivial 0");
    }
    if (want_delta && out->delta_upper > sb) {
        /* the sampling bound is the tighter proven upper end (a tiny noise, few steps) */
        out->delta_upper = out->delta = sb;
        if (out->delta_estimate > sb)
            out->delta_estimate = sb;
        if (!out->fallback)
            snprintf(out->reason, sizeof out->reason,
                     "the sampling bound 1 - P(no step uses the record), %.10g, is below the "
                     "composition's upper end", sb);
    }
    const int rounded = q.terms.lower_rounded;
    query_free(&q);
    if ((trivial || rounded) && !tsg_instance && !plan_only && event != NULL) {
        /* a tree's Gaussian at sigma / sqrt(d) rounded down: the lower end is the same query's
         * with it rounded up (at most a few ulps apart) */
        *(want_delta ? &out->delta_lower : &out->epsilon_lower) = 0.0;
        instance_lower(event, target, want_delta, opts, out);
    }
    return DPZO_OK;
}

/* The default grid's accuracy (issue 30). At the default grid an epsilon query whose
 * proven interval is wider than max(1e-3 eps, 1e-6) is asked again at a ten times finer
 * grid, twice at most, as long as the finer query fits REFINE_BYTES; the tighter proven
 * ends are kept. Where the interval then is that narrow, the upper end is within it of the
 * truth. The wide intervals at the default grid are those of steps whose losses span few
 * grid points (one step at q 4e-4, sigma 2.6: 3.3 times the accuracy above the truth at
 * 1e-4, 0.008 at 1e-6); such queries are small, so the cap leaves them be and keeps long
 * compositions (10^4 steps: 11 MiB at 1e-4, 113 MiB at 1e-5) at the grid they had. */
#define REFINE_BYTES ((size_t)16 << 20)
#define REFINE_MIN_GRID 1e-7
/* A few sampled steps (issue 30) are not read off their tails as one step is, and their
 * finer grid needs the memory of its points, not of a long composition's window: two steps
 * at sigma 0.514, q 3.25e-4, delta 3.8e-4 read 6.62e-6 at 1e-4 for a truth of 4.98e-6
 * (python/tests/test_pld_two_steps.py seed 85), [4.61e-6, 5.02e-6] at 1e-5 in 155 MB and
 * 1.8 s. Compositions of at most REFINE_FEW_STEPS steps refine within REFINE_FEW_BYTES. */
#define REFINE_FEW_STEPS 16.0
#define REFINE_FEW_BYTES ((size_t)256 << 20)

/* The number of steps an event composes (saturating: only compared with a small count). */
static double event_steps(const dpzo_event *e)
{
    if (e == NULL)
        return 0.0;
    switch (e->kind) {
    case DPZO_EVENT_SELF_COMPOSED:
        return (double)e->count * event_steps(e->inner);
    case DPZO_EVENT_COMPOSED: {
        double n = 0.0;
        for (size_t i = 0; i < e->n_children; i++)
            n += event_steps(e->children[i]);
        return n;
    }
    default:
        return 1.0;
    }
}

/* One epsilon query at options o capped at REFINE_BYTES (REFINE_FEW_BYTES for a few
 * steps), in a scratch context (a refusal there is no error of the caller's query). */
static dpzo_status scratch_query(const dpzo_event *event, double delta, dpzo_pld_options o,
                                 dpzo_pld_result *r)
{
    size_t cap = event_steps(event) <= REFINE_FEW_STEPS ? REFINE_FEW_BYTES : REFINE_BYTES;
    if (o.memory_limit == 0 || o.memory_limit > cap)
        o.memory_limit = cap;
    dpzo_ctx *c2 = dpzo_ctx_new();
    if (c2 == NULL)
        return DPZO_ENOMEM;
    dpzo_status st = query_run(c2, event, NULL, delta, 0, &o, 0, NULL, NULL, r);
    dpzo_ctx_free(c2);
    return st;
}

static void refine_default_grid(const dpzo_event *event, double delta,
                                const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    double first = out->grid;
    for (int round = 0; round < 2; round++) {
        double acc = fmax(1e-3 * out->epsilon_upper, 1e-6);
        if (out->fallback || !isfinite(out->epsilon_upper)
            || !(out->epsilon_upper - out->epsilon_lower > acc)
            || !(out->grid / 10.0 >= REFINE_MIN_GRID))
            return;
        dpzo_pld_options o = *opts;
        o.grid = out->grid / 10.0;
        dpzo_pld_result r;
        dpzo_status st = scratch_query(event, delta, o, &r);
        if (st || r.fallback || !(r.epsilon_upper <= out->epsilon_upper))
            return;
        if (r.epsilon_lower < out->epsilon_lower)
            r.epsilon_lower = out->epsilon_lower;
        if (r.memory_bytes < out->memory_bytes)
            r.memory_bytes = out->memory_bytes;
        *out = r;
        snprintf(out->reason, sizeof out->reason,
                 "the default grid %g refined to %g: the interval there was wider than "
                 "max(1e-3 epsilon, 1e-6)", first, out->grid);
    }
}

/* The PRV at small epsilon (issue 30). The PRV's mesh is solved from eps_error (0.01 by
 * default), so at a true epsilon of 1e-4 its upper end can lie 20 times the accuracy
 * max(1e-3 eps, 1e-6) above the truth (24 of 60 random queries with true epsilon in
 * [1e-6, 10] were beyond it, the worst 2500 times). Where its interval is wider than that
 * accuracy (a fallback to the RDP bound included), the PLD at its default grid (refined as
 * above) is asked too, within REFINE_BYTES, and the tighter proven ends of the two are kept. */
static void prv_tighten(const dpzo_event *event, double delta, const dpzo_pld_options *opts,
                        dpzo_pld_result *out)
{
    double acc = fmax(1e-3 * out->epsilon_upper, 1e-6);
    /* the interval's width is the coupling's (about eps_error) wherever the upper end is
     * tight, so it cannot tell; the upper end is off by about a mesh step where epsilon
     * spans few of them */
    if (!isfinite(out->epsilon_upper) || !(out->epsilon_upper - out->epsilon_lower > acc)
        || !(out->grid > acc) || (out->reason[0] != '\0' && !out->fallback))
        return;
    dpzo_pld_options o = *opts;
    o.method = DPZO_PLD_CONNECT_DOTS;
    o.grid = 0.0;
    o.ladder = 0;
    o.eps_error = 0.0;
    dpzo_pld_result r;
    dpzo_status st = scratch_query(event, delta, o, &r);
    if (st == DPZO_OK && r.reason[0] == '\0')
        refine_default_grid(event, delta, &o, &r);
    if (st || r.fallback || !(r.epsilon_upper < out->epsilon_upper))
        return;
    out->epsilon_upper = out->epsilon = r.epsilon_upper;
    if (out->epsilon_estimate > out->epsilon_upper)
        out->epsilon_estimate = out->epsilon_upper;
    if (r.epsilon_lower > out->epsilon_lower)
        out->epsilon_lower = r.epsilon_lower;
    if (r.memory_bytes > out->memory_bytes)
        out->memory_bytes = r.memory_bytes;
    out->fallback = 0; /* the upper end is no longer the RDP bound (rdp_epsilon keeps it) */
    snprintf(out->reason, sizeof out->reason,
             "tightened by the PLD at grid %g: the PRV's interval was wider than "
             "max(1e-3 epsilon, 1e-6)", r.grid);
}

/* A grid the caller gives, with opts->ladder (issue 30): no finer grid may give a looser
 * end. A finer grid's pessimistic pair is dominated by a coarser one's only where the grids
 * nest, and even then the error terms (the FFT's rounding grows with its length, the tails
 * are cut at grid points) can reverse the order by up to about 1e-7 relative: 9 of 25
 * random queries had a pair of grids in 1e-6 .. 1e-2 in the wrong order. So the grid is
 * first rounded down to the ladder {1, 2, 5} x 10^k (1e-4, 5e-5, 2e-5, 1e-5, ... stay as
 * they are; 3e-6 becomes 2e-6), and the answer is the tightest over that rung and every
 * coarser one up to 1: each is proven, and a finer grid's set of rungs contains a coarser
 * one's, so its upper end is at most, and its lower end at least, the coarser one's. The
 * coarser rungs cost about as much again as the finest (0.5 + 0.2 + 0.1 + ... of it). */
static void ladder_floor(double d, int *m, int *e)
{
    static const int ms[3] = {1, 2, 5};
    int e0 = (int)floor(log10(d));
    *m = 1;
    *e = e0 - 1;
    for (int k = e0 - 1; k <= e0 + 1; k++)
        for (int i = 0; i < 3; i++)
            if (ms[i] * pow(10.0, k) <= d * (1.0 + 1e-12)
                && ms[i] * pow(10.0, k) > *m * pow(10.0, *e))
                *m = ms[i], *e = k;
}

static dpzo_status query_ladder(dpzo_ctx *ctx, const dpzo_event *event, double target,
                                int want_delta, const dpzo_pld_options *opts,
                                dpzo_pld_result *out)
{
    int m, e;
    ladder_floor(opts->grid, &m, &e);
    dpzo_pld_options o = *opts;
    o.grid = m * pow(10.0, e);
    dpzo_status st = query_run(ctx, event, NULL, target, want_delta, &o, 0, NULL, NULL, out);
    if (st)
        return st;
    dpzo_ctx *c2 = dpzo_ctx_new(); /* a coarser rung's refusal is no error of the query's */
    if (c2 == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    while (e < 0) {
        m = m == 1 ? 2 : m == 2 ? 5 : (e++, 1);
        o.grid = m * pow(10.0, e);
        dpzo_pld_result r;
        if (query_run(c2, event, NULL, target, want_delta, &o, 0, NULL, NULL, &r))
            continue;
        double *up = want_delta ? &out->delta_upper : &out->epsilon_upper;
        double *lo = want_delta ? &out->delta_lower : &out->epsilon_lower;
        double rup = want_delta ? r.delta_upper : r.epsilon_upper;
        double rlo = want_delta ? r.delta_lower : r.epsilon_lower;
        if (rlo > *lo)
            *lo = rlo;
        if (rup < *up) { /* this rung's upper end, with what the result says of it */
            *up = rup;
            if (want_delta) {
                out->delta = rup;
                out->delta_estimate = fmin(out->delta_estimate, rup);
            } else {
                out->epsilon = rup;
                out->epsilon_estimate = fmin(out->epsilon_estimate, rup);
            }
            out->fallback = r.fallback;
            out->rdp_epsilon = r.rdp_epsilon;
            memcpy(out->reason, r.reason, sizeof out->reason);
        }
        if (r.memory_bytes > out->memory_bytes)
            out->memory_bytes = r.memory_bytes;
    }
    dpzo_ctx_free(c2);
    return DPZO_OK;
}

static int event_has_wor(const dpzo_event *e)
{
    if (e == NULL)
        return 0;
    if (e->kind == DPZO_EVENT_WOR_SAMPLED)
        return 1;
    if (e->inner != NULL && event_has_wor(e->inner))
        return 1;
    for (size_t i = 0; i < e->n_children; i++)
        if (event_has_wor(e->children[i]))
            return 1;
    return 0;
}

/* Batches drawn without replacement (issue 30): the upper end is proven through the
 * symmetric pair that dominates them (pld_source.c); that pair's lower end is a lower end of
 * the pair's epsilon, not of the mechanism's, which need not attain it (at sigma 1.1, 256 of
 * 60000, 1000 steps, delta 1e-5 it read 0.72162, where the concrete instance below gives
 * 0.59800). The lower end is replaced by the instance's: the other records at 0, the record
 * at 1 against 0, each step's batch holding it with probability B/n independently, is the
 * Poisson-sampled Gaussian at q = B/n in both orders of the pair (flatten(), as for a
 * truncated event's instance), a mechanism a pair of datasets attains. Run after the
 * default grid's refinement, which reads the dominating pair's own interval. Where the
 * instance's query fails the lower end is the trivial 0. */
static void wor_lower(const dpzo_event *event, double target, int want_delta,
                      const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    *(want_delta ? &out->delta_lower : &out->epsilon_lower) = 0.0;
    if (instance_lower(event, target, want_delta, opts, out) && out->reason[0] == '\0')
        snprintf(out->reason, sizeof out->reason,
                 "batches without replacement: upper end through the pair dominating them "
                 "(Balle et al. 2018), lower end through an instance that datasets attain, "
                 "Poisson at q = B/n");
}

static dpzo_status query_public(dpzo_ctx *ctx, const dpzo_event *event, double target,
                                int want_delta, const dpzo_pld_options *opts,
                                dpzo_pld_result *out)
{
    if (opts != NULL && opts->ladder && opts->method == DPZO_PLD_CONNECT_DOTS && event != NULL
        && opts->grid > 0.0 && opts->grid <= 1.0)
        return query_ladder(ctx, event, target, want_delta, opts, out);
    return query_run(ctx, event, NULL, target, want_delta, opts, 0, NULL, NULL, out);
}

static dpzo_status pld_epsilon(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                               const dpzo_pld_options *opts, int want_lower,
                               dpzo_pld_result *out)
{
    if (!(delta > 0.0 && delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", delta);
    dpzo_pld_options o;
    if (opts == NULL)
        dpzo_pld_options_default(&o);
    else
        o = *opts;
    dpzo_status st = query_public(ctx, event, delta, 0, &o, out);
    if (st == DPZO_OK && event != NULL && o.grid == 0.0 && o.method == DPZO_PLD_CONNECT_DOTS
        && out->reason[0] == '\0')
        refine_default_grid(event, delta, &o, out);
    if (st == DPZO_OK && event != NULL && o.method == DPZO_PLD_PRV)
        prv_tighten(event, delta, &o, out);
    if (st == DPZO_OK && event_has_wor(event)) {
        if (want_lower)
            wor_lower(event, delta, 0, &o, out);
        else
            out->epsilon_lower = 0.0; /* the dominating pair's is no lower end (wor_lower) */
    }
    return st;
}

dpzo_status dpzo_pld_epsilon(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                             const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    return pld_epsilon(ctx, event, delta, opts, 1, out);
}

dpzo_status dpzo__pld_epsilon_upper(dpzo_ctx *ctx, const dpzo_event *event, double delta,
                                    const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    return pld_epsilon(ctx, event, delta, opts, 0, out);
}

dpzo_status dpzo_pld_delta(dpzo_ctx *ctx, const dpzo_event *event, double epsilon,
                           const dpzo_pld_options *opts, dpzo_pld_result *out)
{
    dpzo_status st = query_public(ctx, event, epsilon, 1, opts, out);
    if (st == DPZO_OK && event_has_wor(event)) {
        dpzo_pld_options o;
        if (opts == NULL)
            dpzo_pld_options_default(&o);
        else
            o = *opts;
        wor_lower(event, epsilon, 1, &o, out);
    }
    return st;
}

dpzo_status dpzo_pld_plan(dpzo_ctx *ctx, const dpzo_event *event, double target, int want_delta,
                          const dpzo_pld_options *opts, size_t *bytes, size_t *fft_size)
{
    dpzo_pld_result r;
    if (!want_delta && !(target > 0.0 && target < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", target);
    return query_run(ctx, event, NULL, target, want_delta, opts, 1, bytes, fft_size, &r);
}

dpzo_status dpzo_pld_noise_epsilon(dpzo_ctx *ctx, const dpzo_pld_noise *noise, double q, int wor,
                                   uint64_t steps, double delta, const dpzo_pld_options *opts,
                                   dpzo_pld_result *out)
{
    if (noise == NULL || noise->tails == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "custom noise is NULL or has no tails callback");
    if (!(noise->r_min < 0.0 && noise->r_max > 0.0) || !(noise->loss_slack >= 0.0)
        || !isfinite(noise->loss_slack))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "custom noise: need r_min < 0 < r_max and a finite loss_slack >= 0");
    if (!(q > 0.0 && q <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in (0, 1], got %g", q);
    if (steps > (UINT64_C(1) << 62))
        return dpzo__fail(ctx, DPZO_EINVAL, "composition count above 2^62");
    if (!(delta > 0.0 && delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", delta);
    tterm t;
    memset(&t, 0, sizeof t);
    t.src.base = DPZO__PLD_CUSTOM;
    t.src.pair = wor ? DPZO__PLD_WOR : DPZO__PLD_REMOVE;
    t.src.scale = 1.0;
    t.src.q = q;
    t.src.noise = noise;
    t.count = steps;
    t.two_sided = !wor && q < 1.0;
    dpzo_status st = query_run(ctx, NULL, &t, delta, 0, opts, 0, NULL, NULL, out);
    if (st != DPZO_OK || !wor)
        return st;
    /* the lower end of the batches' concrete instance, the Poisson-sampled noise at q = B/n
     * (wor_lower); the dominating pair's lower end proves nothing of the mechanism */
    out->epsilon_lower = 0.0;
    t.src.pair = DPZO__PLD_REMOVE;
    t.two_sided = q < 1.0;
    dpzo_pld_result r;
    dpzo_ctx *c2 = dpzo_ctx_new();
    if (c2 != NULL && query_run(c2, NULL, &t, delta, 0, opts, 0, NULL, NULL, &r) == DPZO_OK)
        out->epsilon_lower = r.epsilon_lower < out->epsilon_upper ? r.epsilon_lower
                                                                  : out->epsilon_upper;
    dpzo_ctx_free(c2);
    return DPZO_OK;
}

