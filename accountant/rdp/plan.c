/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/plan.c: an event tree flattened into a weighted list of distinct terms.
 *
 * Composition adds RDP and repetition multiplies it, so the RDP of any event is
 * sum_i count_i RDP(term_i) over its leaves. Sampled Gaussians (q, sigma_eff) with
 * equal parameters are merged, so a schedule costs one evaluation per distinct phase.
 *
 * Domination (optional, for huge heterogeneous compositions). When more than
 * DPZO_PLAN_MAX_DISTINCT distinct sampled Gaussians remain, each sigma is rounded down
 * and each q up to the grid 2^(k/2^B), with the finest B (at most 20) that leaves at
 * most that many distinct terms. RDP of the Poisson-sampled Gaussian is nondecreasing
 * in q (A(q) <= (1 - q/q') + (q/q') A(q') <= A(q') by convexity of exp((alpha-1) D_alpha)
 * in the mixture) and nonincreasing in sigma (more noise is post-processing), so the
 * rounded composition's RDP is an upper bound at every order: still a proven epsilon,
 * looser by at most the grid step (reported as `rounding`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rdp_internal.h"
#include "rdp_sgm.h"

static int add_term(dpzo__plan *p, dpzo__plan_term t)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        dpzo__plan_term *nt = realloc(p->terms, cap * sizeof *nt);
        if (nt == NULL)
            return -1;
        p->terms = nt;
        p->cap = cap;
    }
    p->terms[p->n++] = t;
    return 0;
}

/* count * m rounded up (counts are exact integers below 2^53; beyond, round up). */
static double times(double count, double m)
{
    double r = count * m;
    return r >= 0x1p53 ? nextafter(r, INFINITY) : r;
}

static dpzo_status flatten(dpzo_ctx *ctx, const dpzo_event *e, double m, dpzo__plan *p)
{
    dpzo_status st;
    double sigma;
    dpzo__plan_term t = {0};
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
    case DPZO_EVENT_POISSON_SAMPLED:
        t.q = e->kind == DPZO_EVENT_GAUSSIAN ? 1.0 : e->param;
        if (e->kind == DPZO_EVENT_GAUSSIAN)
            sigma = e->param;
        else if ((st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
            return st;
        if (isinf(sigma) || t.q == 0.0)
            return DPZO_OK; /* spends nothing */
        t.sigma = sigma;
        t.count = m;
        break;
    case DPZO_EVENT_LAPLACE:
    case DPZO_EVENT_NON_PRIVATE:
    case DPZO_EVENT_ZCDP:
    case DPZO_EVENT_RANDOMIZED_RESPONSE:
    case DPZO_EVENT_DISCRETE_LAPLACE:
    case DPZO_EVENT_TREE_AGGREGATION:
    case DPZO_EVENT_REPEAT_AND_SELECT:
    case DPZO_EVENT_WR_SAMPLED:
    case DPZO_EVENT_MIXTURE_OF_GAUSSIANS:
    case DPZO_EVENT_TRUNCATED_SUBSAMPLED_GAUSSIAN:
    case DPZO_EVENT_WOR_SAMPLED:
        if ((e->kind == DPZO_EVENT_WOR_SAMPLED || e->kind == DPZO_EVENT_WR_SAMPLED)
            && (st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
            return st;
        t.leaf = e;
        t.count = m;
        break;
    case DPZO_EVENT_SELF_COMPOSED:
        return e->count == 0 ? DPZO_OK : flatten(ctx, e->inner, times((double)e->count, m), p);
    case DPZO_EVENT_COMPOSED:
        for (size_t i = 0; i < e->n_children; i++)
            if ((st = flatten(ctx, e->children[i], m, p)))
                return st;
        return DPZO_OK;
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "corrupt event (kind %d)", (int)e->kind);
    }
    if (add_term(p, t))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory flattening an event");
    return DPZO_OK;
}

static int cmp_terms(const void *a, const void *b)
{
    const dpzo__plan_term *x = a, *y = b;
    if ((x->leaf != NULL) != (y->leaf != NULL))
        return x->leaf != NULL ? 1 : -1;
    if (x->leaf != NULL)
        return (x->leaf > y->leaf) - (x->leaf < y->leaf);
    if (x->q != y->q)
        return x->q < y->q ? -1 : 1;
    return (x->sigma > y->sigma) - (x->sigma < y->sigma);
}

/* Sorts and merges equal terms (adding counts, rounded up past 2^53). */
static void merge(dpzo__plan *p)
{
    if (p->n == 0)
        return;
    qsort(p->terms, p->n, sizeof *p->terms, cmp_terms);
    size_t w = 0;
    for (size_t i = 1; i < p->n; i++) {
        dpzo__plan_term *a = &p->terms[w], *b = &p->terms[i];
        if (cmp_terms(a, b) == 0) {
            double s = a->count + b->count;
            a->count = s >= 0x1p53 ? nextafter(s, INFINITY) : s;
        } else {
            p->terms[++w] = *b;
        }
    }
    p->n = w + 1;
}

/* The grid point 2^(k/2^bits) at or below (dir < 0) / above (dir > 0) x > 0. */
static double grid(double x, int bits, int dir)
{
    double scale = ldexp(1.0, bits);
    double k = dir < 0 ? floor(log2(x) * scale) : ceil(log2(x) * scale);
    double g = exp2(k / scale);
    while (dir < 0 ? g > x : g < x) {
        k += dir < 0 ? -1.0 : 1.0;
        g = exp2(k / scale);
    }
    return g;
}

static size_t count_sgm(const dpzo__plan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->terms[i].leaf == NULL;
    return n;
}

dpzo_status dpzo__plan_build(dpzo_ctx *ctx, const dpzo_event *event, int allow_rounding,
                             dpzo__plan *p)
{
    memset(p, 0, sizeof *p);
    if (event == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "event is NULL");
    dpzo_status st = flatten(ctx, event, 1.0, p);
    if (st) {
        dpzo__plan_free(p);
        return st;
    }
    merge(p);
    if (!allow_rounding || count_sgm(p) <= DPZO_PLAN_MAX_DISTINCT)
        return DPZO_OK;
    dpzo__plan_term *orig = malloc(p->n * sizeof *orig);
    if (orig == NULL) {
        dpzo__plan_free(p);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory rounding a composition");
    }
    memcpy(orig, p->terms, p->n * sizeof *orig);
    size_t n_orig = p->n;
    for (int bits = 20; bits >= 1; bits--) {
        memcpy(p->terms, orig, n_orig * sizeof *orig);
        p->n = n_orig;
        for (size_t i = 0; i < p->n; i++) {
            dpzo__plan_term *t = &p->terms[i];
            if (t->leaf != NULL)
                continue;
            if (t->sigma > 0.0)
                t->sigma = grid(t->sigma, bits, -1);
            double q = grid(t->q, bits, 1);
            t->q = q < 1.0 ? q : 1.0;
        }
        merge(p);
        p->rounding = exp2(ldexp(1.0, -bits)) - 1.0;
        if (count_sgm(p) <= DPZO_PLAN_MAX_DISTINCT)
            break;
    }
    free(orig);
    return DPZO_OK;
}

void dpzo__plan_free(dpzo__plan *p)
{
    free(p->terms);
    memset(p, 0, sizeof *p);
}

/* rdp_select.c's view of an inner event (rdp_internal.h, dpzo__rdp_oracle) */
static dpzo_status plan_oracle(dpzo_ctx *ctx, const void *inner, double alpha, int certified,
                               dpzo_bound *out)
{
    return dpzo__plan_rdp(ctx, (const dpzo__plan *)inner, alpha, certified, out);
}

/* RDP of one term at one order. L caches a sampled Gaussian's alpha-independent work
 * (fast path only; NULL: build one here). Leaves: Laplace (closed form) and sampling
 * without replacement (rdp_wor.c: an interval, or its double estimate on the fast path). */
static dpzo_status term_rdp(dpzo_ctx *ctx, const dpzo__plan_term *t, dpzo__sgm_linear *L,
                            double alpha, int certified, dpzo_bound *b)
{
    dpzo_status st = DPZO_OK;
    const dpzo_event *e = t->leaf;
    if (e == NULL && certified)
        return dpzo_rdp_sampled_gaussian_certified(ctx, t->q, t->sigma, alpha, b);
    if (e == NULL) {
        dpzo__sgm_linear local;
        if (L == NULL && t->q > 0.0 && t->q < 1.0 && t->sigma > 0.0) {
            dpzo__sgm_linear_init(&local, t->q, t->sigma);
            L = &local;
        }
        double r = dpzo__sgm_rdp_fast(L, t->q, t->sigma, alpha);
        if (isnan(r))
            return dpzo__fail(ctx, DPZO_ENOCONV,
                              "RDP of sampled Gaussian (q=%g, sigma=%g, alpha=%g) is not finite",
                              t->q, t->sigma, alpha);
        *b = (dpzo_bound){r, r, r};
        return DPZO_OK;
    }
    if (e->kind == DPZO_EVENT_LAPLACE) {
        if (certified)
            return dpzo_rdp_laplace_certified(ctx, e->param, alpha, b);
        st = dpzo_rdp_laplace(ctx, e->param, alpha, &b->value);
        b->lower = b->upper = b->value;
        return st;
    }
    if (e->kind == DPZO_EVENT_WR_SAMPLED)
        return dpzo__rdp_select(ctx, e, alpha, certified, b, NULL, NULL); /* rdp_select.c */
    if (e->kind == DPZO_EVENT_REPEAT_AND_SELECT) { /* the inner event's RDP: its own plan */
        dpzo__plan inner;
        if ((st = dpzo__plan_build(ctx, e->inner, 0, &inner)))
            return st;
        st = dpzo__rdp_select(ctx, e, alpha, certified, b, plan_oracle, &inner);
        dpzo__plan_free(&inner);
        return st;
    }
    if (e->kind != DPZO_EVENT_WOR_SAMPLED) /* the closed-form leaves (rdp_leaves.c) */
        return dpzo__rdp_leaf(ctx, e, alpha, certified, b);
    double sigma; /* DPZO_EVENT_WOR_SAMPLED: flatten() checked the inner subtree */
    if ((st = dpzo__effective_sigma(ctx, e->inner, &sigma)))
        return st;
    if (isinf(sigma)) {
        *b = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (certified)
        return dpzo_rdp_wor_gaussian(ctx, e->batch, e->n, sigma, alpha, b);
    double r;
    if ((st = dpzo__rdp_wor_fast(ctx, e->batch, e->n, sigma, alpha, &r)))
        return st;
    *b = (dpzo_bound){r, r, r};
    return DPZO_OK;
}

dpzo_status dpzo__plan_rdp(dpzo_ctx *ctx, const dpzo__plan *p, double alpha, int certified,
                           dpzo_bound *out)
{
    dpzo_status st = dpzo__check_order(ctx, alpha);
    if (st)
        return st;
    dpzo_bound sum = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < p->n; i++) {
        const dpzo__plan_term *t = &p->terms[i];
        dpzo_bound b;
        if ((st = term_rdp(ctx, t, NULL, alpha, certified, &b)))
            return st;
        sum.value += t->count * b.value;
        sum.lower = dpzo__down(sum.lower + dpzo__down(t->count * b.lower));
        sum.upper = dpzo__up(sum.upper + dpzo__up(t->count * b.upper));
    }
    *out = sum;
    return DPZO_OK;
}

dpzo_status dpzo__plan_rdp_curve(dpzo_ctx *ctx, const dpzo__plan *p, const double *orders,
                                 size_t n, double *out)
{
    dpzo_status st;
    for (size_t j = 0; j < n; j++) {
        if ((st = dpzo__check_order(ctx, orders[j])))
            return st;
        out[j] = 0.0;
    }
    /* terms outside, orders inside: a sampled Gaussian's alpha-independent half-terms
     * are computed once for the whole curve (rdp_sgm.h) */
    for (size_t i = 0; i < p->n; i++) {
        const dpzo__plan_term *t = &p->terms[i];
        dpzo__sgm_linear L, *lp = NULL;
        if (t->leaf == NULL && t->q > 0.0 && t->q < 1.0 && t->sigma > 0.0) {
            dpzo__sgm_linear_init(&L, t->q, t->sigma);
            lp = &L;
        }
        for (size_t j = 0; j < n; j++) {
            dpzo_bound b;
            if ((st = term_rdp(ctx, t, lp, orders[j], 0, &b)))
                return st;
            out[j] += t->count * b.value;
        }
    }
    return DPZO_OK;
}

dpzo_status dpzo__plan_rdp_curve_certified(dpzo_ctx *ctx, const dpzo__plan *p,
                                           const double *orders, size_t n, dpzo_bound *out)
{
    dpzo_status st;
    for (size_t j = 0; j < n; j++) {
        if ((st = dpzo__check_order(ctx, orders[j])))
            return st;
        out[j] = (dpzo_bound){0.0, 0.0, 0.0};
    }
    /* terms outside, orders inside (each order's sum in the same term order as
     * dpzo__plan_rdp's, so the same result): a WOR term's enclosures are formed once for
     * the whole curve even where the ctx keeps fewer sigmas' than the plan has (rdp_wor.c) */
    for (size_t i = 0; i < p->n; i++) {
        const dpzo__plan_term *t = &p->terms[i];
        for (size_t j = 0; j < n; j++) {
            dpzo_bound b;
            if ((st = term_rdp(ctx, t, NULL, orders[j], 1, &b)))
                return st;
            out[j].value += t->count * b.value;
            out[j].lower = dpzo__down(out[j].lower + dpzo__down(t->count * b.lower));
            out[j].upper = dpzo__up(out[j].upper + dpzo__up(t->count * b.upper));
        }
    }
    return DPZO_OK;
}
