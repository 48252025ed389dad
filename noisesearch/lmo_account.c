/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_account.c: the privacy of a training run that releases one LMO-noised
 * scalar per step, for T steps, with Poisson sampling, fixed batches without
 * replacement, or no sampling.
 *
 * Per-step curve eps(l), integer l = 2..L (lmo_rdp.c: MGF bound, exact mixture, pure DP,
 * or their minimum). Amplification, for each integer order alpha:
 *  - Poisson, add/remove (Zhu & Wang 2019, ICML, Thm 6, the general upper bound; the
 *    factor 3 on the l >= 3 terms is the theorem's, as in autodp's general_upperbound):
 *      A = (1-q)^(alpha-1) (1 + (alpha-1) q) + C(alpha,2) q^2 (1-q)^(alpha-2) e^{eps(2)}
 *          + 3 sum_{l=3}^{alpha} C(alpha,l) q^l (1-q)^(alpha-l) e^{(l-1) eps(l)}
 *  - without replacement, replace-one, batch B of n, g = B/n (Wang, Balle &
 *    Kasiviswanathan 2019, Thm 9), with eps(inf) = eps0:
 *      A = 1 + g^2 C(alpha,2) min{4 (e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps0} - 1)^2}}
 *          + sum_{j=3}^{alpha} g^j C(alpha,j) e^{(j-1) eps(j)} min{2, (e^{eps0} - 1)^j}
 *  eps'(alpha) = min(log(A)/(alpha-1), eps(alpha), RR(eps_amp)(alpha)): subsampling
 *  never hurts (joint convexity), and the sampled step is eps_amp-DP with
 *  eps_amp = log(1 + g (e^{eps0} - 1)) (Balle, Barthe & Gaboardi 2018: Poisson with
 *  add/remove, and without replacement with replace-one), so randomized response's RDP
 *  at eps_amp bounds it too (lmo_rdp.c). Composition: T eps'(alpha). Conversion: CKS 2020 / Balle et al. 2020
 *  (convert.h "improved"), minimised over the orders.
 * A pure-DP route is also taken and the smaller answer wins: T eps0 without sampling,
 * T log(1 + g (e^{eps0} - 1)) with sampling rate g (amplification of pure DP by
 * subsampling, both schemes).
 *
 * The reported epsilon is proven: every per-step value is an upper bound, the sums
 * above run in MPFR interval arithmetic, and the conversion rounds upward. The search
 * uses the double-precision twin (dpzo__lmo_total_eps_fast) to rank candidates and
 * re-runs the winner here. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "lmo_rdp.h"
#include "lmo_account.h"
#include "rdp_internal.h"

dpzo_lmo_account_options dpzo_lmo_account_options_default(void)
{
    dpzo_lmo_account_options o;
    memset(&o, 0, sizeof o);
    o.sensitivity = 1.0;
    o.bound = DPZO_LMO_BOUND_BEST;
    o.sampling = DPZO_LMO_SAMPLING_NONE;
    o.steps = 1;
    o.delta = 0.0; /* must be set */
    o.max_order = DPZO_LMO_DEFAULT_MAX_ORDER;
    return o;
}

size_t dpzo__lmo_eval_orders(unsigned max_order, unsigned *out)
{
    size_t n = 0;
    for (unsigned a = 2; a <= max_order; a += a < 64 ? 1 : a < 128 ? 2 : a < 256 ? 4 : 8)
        out[n++] = a;
    if (n == 0 || out[n - 1] != max_order)
        out[n++] = max_order;
    return n;
}

double dpzo__lmo_sampling_rate(const dpzo_lmo_account_options *o)
{
    switch (o->sampling) {
    case DPZO_LMO_SAMPLING_POISSON:
        return o->q;
    case DPZO_LMO_SAMPLING_WOR:
        return (double)o->batch / (double)o->n;
    default:
        return 1.0;
    }
}

dpzo_status dpzo__lmo_check_options(dpzo_ctx *ctx, const dpzo_lmo_account_options *o)
{
    if (!(isfinite(o->sensitivity) && o->sensitivity > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g",
                          o->sensitivity);
    if ((unsigned)o->bound > DPZO_LMO_BOUND_BEST)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown bound kind %d", (int)o->bound);
    if (!(o->delta > 0.0 && o->delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", o->delta);
    if (o->steps < 1)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be >= 1, got %llu",
                          (unsigned long long)o->steps);
    if (o->max_order < 2 || o->max_order > DPZO_LMO_MAX_ORDER)
        return dpzo__fail(ctx, DPZO_EINVAL, "max order must be in [2, %d], got %u",
                          DPZO_LMO_MAX_ORDER, o->max_order);
    switch (o->sampling) {
    case DPZO_LMO_SAMPLING_NONE:
        break;
    case DPZO_LMO_SAMPLING_POISSON:
        if (!(o->q >= 0.0 && o->q <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in [0, 1], got %g",
                              o->q);
        break;
    case DPZO_LMO_SAMPLING_WOR:
        if (o->batch < 1 || o->n < o->batch)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "batch size must be in [1, dataset size], got %llu of %llu",
                              (unsigned long long)o->batch, (unsigned long long)o->n);
        break;
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown sampling scheme %d", (int)o->sampling);
    }
    return DPZO_OK;
}

/* ---- double precision (search) ------------------------------------------------- */

/* log of the amplified A at integer order a (double), base[l] for l = 2..a. coef[l]
 * holds the part of each term's log that does not depend on a (see total_eps_fast).
 * One pass finds the largest term, a second sums exp(t - max) over the terms within
 * e^-40 of it (the rest change the sum by less than a * e^-40 relative: ranking only;
 * the certified sum below keeps every term). */
static double log_a_fast(const double *coef, unsigned a, dpzo_lmo_sampling s, double g,
                         const double *lfact, double *t)
{
    double l1g = log1p(-g), mx = -INFINITY;
    unsigned n = 0;
    if (s == DPZO_LMO_SAMPLING_POISSON)
        t[n++] = (a - 1.0) * l1g + log1p((a - 1.0) * g);
    else
        t[n++] = 0.0;
    for (unsigned l = 2; l <= a; l++) {
        double v = coef[l] + lfact[a] - lfact[l] - lfact[a - l];
        if (s == DPZO_LMO_SAMPLING_POISSON)
            v += (a - l) * l1g;
        t[n++] = v;
    }
    for (unsigned i = 0; i < n; i++)
        if (t[i] > mx)
            mx = t[i];
    if (mx == INFINITY)
        return INFINITY;
    double sum = 0.0;
    for (unsigned i = 0; i < n; i++)
        if (t[i] > mx - 40.0)
            sum += exp(t[i] - mx);
    return mx + log(sum);
}

/* log k! for k <= DPZO_LMO_MAX_ORDER, filled once. */
static double lfact_table[DPZO_LMO_MAX_ORDER + 1];
static pthread_once_t lfact_once = PTHREAD_ONCE_INIT;
static void lfact_fill(void)
{
    for (unsigned k = 0; k <= DPZO_LMO_MAX_ORDER; k++)
        lfact_table[k] = lgamma(k + 1.0);
}

static double amp_eps_fast(double eps0, const dpzo_lmo_account_options *o)
{
    double g = dpzo__lmo_sampling_rate(o);
    return o->sampling == DPZO_LMO_SAMPLING_NONE || g >= 1.0 ? eps0 : log1p(g * expm1(eps0));
}

double dpzo__lmo_total_eps_fast(const double *base, double eps0,
                                const dpzo_lmo_account_options *o, double *order)
{
    unsigned L = o->max_order;
    double g = dpzo__lmo_sampling_rate(o);
    pthread_once(&lfact_once, lfact_fill);
    const double *lfact = lfact_table;
    double *coef = malloc((L + 1) * sizeof *coef), *t = malloc((L + 2) * sizeof *t);
    unsigned *ev = malloc((L + 2) * sizeof *ev);
    if (coef == NULL || ev == NULL || t == NULL) {
        free(coef);
        free(ev);
        free(t);
        return INFINITY;
    }
    int sampled = g > 0.0 && g < 1.0 && o->sampling != DPZO_LMO_SAMPLING_NONE;
    if (sampled) {
        /* the order-independent part of each term's log */
        double lg = log(g);
        if (o->sampling == DPZO_LMO_SAMPLING_POISSON) {
            coef[2] = 2.0 * lg + base[2];
            for (unsigned l = 3; l <= L; l++)
                coef[l] = log(3.0) + l * lg + (l - 1.0) * base[l];
        } else {
            double le = log(expm1(eps0)); /* log(e^{eps0} - 1) */
            coef[2] = 2.0 * lg +
                      fmin(log(4.0) + log(expm1(base[2])), base[2] + fmin(M_LN2, 2.0 * le));
            for (unsigned j = 3; j <= L; j++)
                coef[j] = j * lg + (j - 1.0) * base[j] + fmin(M_LN2, j * le);
        }
    }
    size_t ne = dpzo__lmo_eval_orders(L, ev);
    double best = INFINITY, best_order = 0.0;
    double amp = amp_eps_fast(eps0, o);
    for (size_t i = 0; i < ne; i++) {
        unsigned a = ev[i];
        double r = fmin(base[a], dpzo__lmo_pure_rdp(amp, a));
        if (g == 0.0 && o->sampling != DPZO_LMO_SAMPLING_NONE)
            r = 0.0;
        else if (sampled)
            r = fmin(r, log_a_fast(coef, a, o->sampling, g, lfact, t) / (a - 1.0));
        double e = dpzo__rdp_eps_estimate(a, (double)o->steps * r, o->delta,
                                          DPZO_CONVERSION_IMPROVED);
        if (e < best) {
            best = e;
            best_order = a;
        }
    }
    free(coef);
    free(ev);
    free(t);
    double p = (double)o->steps * amp;
    if (p < best) {
        best = p;
        best_order = 0.0;
    }
    if (order)
        *order = best_order;
    return best;
}

/* ---- certified ------------------------------------------------------------------- */

#define PREC DPZO_LMO_PREC

/* Shared interval constants of one certified total: log k! for k <= L, log g,
 * log(1 - g), g, log(e^{eps0} - 1), log 2, log 3. */
#define ZPREC 80
typedef struct {
    ival *lf;
    unsigned L;
    ival g, lg, l1g, le, ln2, ln3;
} zconst;

static int zconst_init(zconst *z, unsigned L, const dpzo_lmo_account_options *o, double eps0_up)
{
    z->L = L;
    z->lf = malloc((L + 1) * sizeof *z->lf);
    if (z->lf == NULL)
        return -1;
    ival t;
    ival_init(&t, ZPREC);
    for (unsigned k = 0; k <= L; k++) {
        ival_init(&z->lf[k], ZPREC);
        if (k < 2) {
            ival_set_ui(&z->lf[k], 0);
        } else {
            ival_set_ui(&t, k);
            ival_log(&t, &t);
            ival_add(&z->lf[k], &z->lf[k - 1], &t);
        }
    }
    ival *all[] = {&z->g, &z->lg, &z->l1g, &z->le, &z->ln2, &z->ln3};
    for (int i = 0; i < 6; i++)
        ival_init(all[i], ZPREC);
    if (o->sampling == DPZO_LMO_SAMPLING_POISSON) {
        ival_set_d(&z->g, o->q);
    } else { /* batch / n enclosed */
        mpfr_set_ui(z->g.lo, (unsigned long)o->batch, MPFR_RNDD);
        mpfr_div_ui(z->g.lo, z->g.lo, (unsigned long)o->n, MPFR_RNDD);
        mpfr_set_ui(z->g.hi, (unsigned long)o->batch, MPFR_RNDU);
        mpfr_div_ui(z->g.hi, z->g.hi, (unsigned long)o->n, MPFR_RNDU);
    }
    ival_log(&z->lg, &z->g);
    ival_neg(&t, &z->g);
    ival_log1p(&z->l1g, &t);
    ival_set_d(&t, eps0_up);
    ival_expm1(&t, &t);
    ival_log(&z->le, &t);
    ival_set_ui(&t, 2);
    ival_log(&z->ln2, &t);
    ival_set_ui(&t, 3);
    ival_log(&z->ln3, &t);
    ival_clear(&t);
    return 0;
}

static void zconst_clear(zconst *z)
{
    for (unsigned k = 0; k <= z->L; k++)
        ival_clear(&z->lf[k]);
    free(z->lf);
    ival *all[] = {&z->g, &z->lg, &z->l1g, &z->le, &z->ln2, &z->ln3};
    for (int i = 0; i < 6; i++)
        ival_clear(all[i]);
}

/* r = log C(a, l) */
static void log_binom(const zconst *z, unsigned a, unsigned l, ival *r)
{
    ival_sub(r, &z->lf[a], &z->lf[l]);
    ival_sub(r, r, &z->lf[a - l]);
}

/* r = x * c for a double c (exact in ival) */
static void mul_d(ival *r, const ival *x, double c, ival *tmp)
{
    ival_set_d(tmp, c);
    ival_mul(r, x, tmp);
}

/* Upper bound on log A at integer order a from per-step upper bounds base[l]: every
 * term enclosed, then log sum exp(t - s) + s with s the largest upper end. */
static double log_a_upper(const double *base, unsigned a, const dpzo_lmo_account_options *o,
                          const zconst *z)
{
    for (unsigned l = 2; l <= a; l++)
        if (base[l] == INFINITY)
            return INFINITY;
    ival *t = malloc((a + 1) * sizeof *t);
    if (t == NULL)
        return INFINITY;
    for (unsigned l = 0; l <= a; l++)
        ival_init(&t[l], ZPREC);
    ival u, v;
    ival_init(&u, ZPREC);
    ival_init(&v, ZPREC);
    int pois = o->sampling == DPZO_LMO_SAMPLING_POISSON;
    /* t[0]: Poisson (a-1) log(1-g) + log(1 + (a-1) g); WOR 0. t[1] unused (-inf). */
    if (pois) {
        mul_d(&u, &z->l1g, a - 1.0, &v);
        mul_d(&t[0], &z->g, a - 1.0, &v);
        ival_log1p(&t[0], &t[0]);
        ival_add(&t[0], &t[0], &u);
    } else {
        ival_set_ui(&t[0], 0);
    }
    for (unsigned l = 2; l <= a; l++) {
        log_binom(z, a, l, &t[l]);
        mul_d(&u, &z->lg, (double)l, &v);
        ival_add(&t[l], &t[l], &u);
        if (pois) {
            mul_d(&u, &z->l1g, (double)(a - l), &v);
            ival_add(&t[l], &t[l], &u);
            if (l >= 3)
                ival_add(&t[l], &t[l], &z->ln3);
            ival_set_d(&u, base[l]);
            mul_d(&u, &u, l - 1.0, &v);
            ival_add(&t[l], &t[l], &u);
        } else if (l == 2) {
            /* min{log 4 + log(e^{b2} - 1), b2 + min(log 2, 2 le)} */
            ival_set_d(&u, base[2]);
            ival_expm1(&v, &u);
            ival_log(&v, &v);
            ival_add(&v, &v, &z->ln2);
            ival_add(&v, &v, &z->ln2);
            ival w;
            ival_init(&w, ZPREC);
            ival_add(&w, &z->le, &z->le);
            ival_min(&w, &w, &z->ln2);
            ival_add(&w, &w, &u);
            ival_min(&v, &v, &w);
            ival_clear(&w);
            ival_add(&t[l], &t[l], &v);
        } else {
            /* (l-1) b_l + min(log 2, l le) */
            mul_d(&u, &z->le, (double)l, &v);
            ival_min(&u, &u, &z->ln2);
            ival_add(&t[l], &t[l], &u);
            ival_set_d(&u, base[l]);
            mul_d(&u, &u, l - 1.0, &v);
            ival_add(&t[l], &t[l], &u);
        }
    }
    /* shift by the largest upper end */
    double sh = -INFINITY;
    for (unsigned l = 0; l <= a; l++)
        if (l != 1 && ival_hi_d(&t[l]) > sh)
            sh = ival_hi_d(&t[l]);
    ival sum, shv;
    ival_init(&sum, ZPREC);
    ival_init(&shv, ZPREC);
    ival_set_ui(&sum, 0);
    ival_set_d(&shv, sh);
    for (unsigned l = 0; l <= a; l++) {
        if (l == 1)
            continue;
        ival_sub(&u, &t[l], &shv);
        if (ival_hi_d(&u) < -800.0) { /* below e^-800 < 2^-1100 of the largest */
            ival_set_ui(&v, 0);
            mpfr_set_ui_2exp(v.hi, 1, -1100, MPFR_RNDU);
            ival_add(&sum, &sum, &v);
            continue;
        }
        ival_exp(&u, &u);
        ival_add(&sum, &sum, &u);
    }
    ival_log(&sum, &sum);
    ival_add(&sum, &sum, &shv);
    double r = ival_hi_d(&sum);
    for (unsigned l = 0; l <= a; l++)
        ival_clear(&t[l]);
    free(t);
    ival_clear(&u);
    ival_clear(&v);
    ival_clear(&sum);
    ival_clear(&shv);
    return r;
}

/* Per-step pure-DP epsilon after amplification by sampling (proven upper bound). */
static double amp_eps_upper(double eps0_up, const dpzo_lmo_account_options *o)
{
    ival e, g, t;
    ival_init(&e, PREC);
    ival_init(&g, PREC);
    ival_init(&t, PREC);
    ival_set_d(&e, eps0_up);
    if (o->sampling != DPZO_LMO_SAMPLING_NONE) {
        if (o->sampling == DPZO_LMO_SAMPLING_POISSON) {
            ival_set_d(&g, o->q);
        } else {
            mpfr_set_ui(g.lo, (unsigned long)o->batch, MPFR_RNDD);
            mpfr_div_ui(g.lo, g.lo, (unsigned long)o->n, MPFR_RNDD);
            mpfr_set_ui(g.hi, (unsigned long)o->batch, MPFR_RNDU);
            mpfr_div_ui(g.hi, g.hi, (unsigned long)o->n, MPFR_RNDU);
        }
        ival_expm1(&t, &e);
        ival_mul(&t, &t, &g);
        ival_log1p(&e, &t);
    }
    double v = ival_hi_d(&e);
    ival_clear(&e);
    ival_clear(&g);
    ival_clear(&t);
    return v;
}

/* T * r rounded up */
static double times_up(uint64_t steps, double r)
{
    if (r == INFINITY || steps == 1)
        return r;
    double v = (double)steps * r;
    return dpzo__up(v);
}

dpzo_status dpzo__lmo_total_eps_certified(dpzo_ctx *ctx, const double *base_up, double eps0_up,
                                          const dpzo_lmo_account_options *o,
                                          const double *fast_base, double fast_eps0,
                                          dpzo_lmo_account_result *out)
{
    unsigned L = o->max_order;
    unsigned *ev = malloc((L + 2) * sizeof *ev);
    if (ev == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    size_t ne = dpzo__lmo_eval_orders(L, ev);
    double g = dpzo__lmo_sampling_rate(o);
    int sampled = o->sampling != DPZO_LMO_SAMPLING_NONE && g < 1.0;
    double best = INFINITY, best_order = 0.0;
    double amp = amp_eps_upper(eps0_up, o);
    zconst z;
    if (sampled && zconst_init(&z, L, o, eps0_up) != 0) {
        free(ev);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ne; i++) {
        unsigned a = ev[i];
        double r = fmin(base_up[a], dpzo__lmo_pure_rdp_upper(amp, a));
        if (o->sampling != DPZO_LMO_SAMPLING_NONE && g == 0.0)
            r = 0.0;
        else if (sampled) {
            double la = log_a_upper(base_up, a, o, &z);
            if (la != INFINITY) {
                /* la / (a - 1) rounded up */
                double v = dpzo__up(dpzo__up(la) / (a - 1.0));
                r = fmin(r, v);
            }
        }
        double e = dpzo__rdp_eps_upper(PREC, a, times_up(o->steps, r), o->delta,
                                       DPZO_CONVERSION_IMPROVED);
        if (e < best) {
            best = e;
            best_order = a;
        }
    }
    if (sampled)
        zconst_clear(&z);
    free(ev);
    out->route = "rdp";
    out->order = best_order;
    out->order_at_edge = best_order == (double)L;
    double p = times_up(o->steps, amp);
    if (p < best) {
        best = p;
        out->route = "pure-dp";
        out->order = 0.0;
        out->order_at_edge = 0;
    }
    out->epsilon = best;
    out->eps0 = eps0_up;
    out->epsilon_estimate = fast_base ? dpzo__lmo_total_eps_fast(fast_base, fast_eps0, o, NULL)
                                      : best;
    if (out->epsilon_estimate > out->epsilon)
        out->epsilon_estimate = out->epsilon;
    return DPZO_OK;
}

/* The vector (L1) curve: min(MGF bound, randomized response at the vector eps0). */
static dpzo_status vector_curve(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c,
                                dpzo_lmo_bound_kind kind, unsigned L, double *up, double *est)
{
    if (kind == DPZO_LMO_BOUND_EXACT)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "the exact mixture bound is not known to hold for vectors "
                          "(use mgf, pure or best with L1 clipping)");
    dpzo_bound ev;
    dpzo_status st = dpzo_lmo_eps0_vector(ctx, lmo, c, &ev);
    if (st)
        return st;
    up[0] = up[1] = est[0] = est[1] = 0.0;
    for (unsigned l = 2; l <= L; l++) {
        double m = kind == DPZO_LMO_BOUND_PURE ? INFINITY : dpzo__lmo_mgf_rdp_upper(lmo, c, l);
        double me = kind == DPZO_LMO_BOUND_PURE ? INFINITY : dpzo__lmo_mgf_rdp(lmo, c, l);
        double p = kind == DPZO_LMO_BOUND_MGF ? INFINITY : dpzo__lmo_pure_rdp_upper(ev.upper, l);
        double pe = kind == DPZO_LMO_BOUND_MGF ? INFINITY : dpzo__lmo_pure_rdp(ev.value, l);
        up[l] = fmin(m, p);
        est[l] = fmin(fmin(me, pe), up[l]);
    }
    return DPZO_OK;
}

dpzo_status dpzo__lmo_step_curve(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c,
                                 dpzo_lmo_bound_kind kind, unsigned L, double *up, double *est)
{
    double *orders = calloc(L, sizeof *orders);
    dpzo_bound *b = malloc(L * sizeof *b);
    if (orders == NULL || b == NULL) {
        free(orders);
        free(b);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    for (unsigned l = 2; l <= L; l++)
        orders[l - 2] = l;
    dpzo_status st = dpzo_lmo_rdp(ctx, lmo, c, kind, orders, L - 1, b);
    if (st == DPZO_OK) {
        up[0] = up[1] = est[0] = est[1] = 0.0;
        for (unsigned l = 2; l <= L; l++) {
            up[l] = b[l - 2].upper;
            est[l] = b[l - 2].value;
        }
    }
    free(orders);
    free(b);
    return st;
}

dpzo_status dpzo_lmo_epsilon(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                             const dpzo_lmo_account_options *opts,
                             dpzo_lmo_account_result *out)
{
    dpzo_lmo_account_options o = opts ? *opts : dpzo_lmo_account_options_default();
    dpzo_status st = dpzo_lmo_validate(ctx, lmo);
    if (st)
        return st;
    if ((st = dpzo__lmo_check_options(ctx, &o)))
        return st;
    unsigned L = o.max_order;
    double *up = malloc((L + 1) * sizeof *up), *est = malloc((L + 1) * sizeof *est);
    if (up == NULL || est == NULL) {
        free(up);
        free(est);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    st = o.vector_l1 ? vector_curve(ctx, lmo, o.sensitivity, o.bound, L, up, est)
                     : dpzo__lmo_step_curve(ctx, lmo, o.sensitivity, o.bound, L, up, est);
    if (st == DPZO_OK) {
        dpzo_bound e0;
        st = o.vector_l1 ? dpzo_lmo_eps0_vector(ctx, lmo, o.sensitivity, &e0)
                         : dpzo_lmo_eps0(ctx, lmo, o.sensitivity, &e0);
        double eps0_up = e0.upper, eps0_mid = e0.value;
        memset(out, 0, sizeof *out);
        if (st == DPZO_OK)
            st = dpzo__lmo_total_eps_certified(ctx, up, eps0_up, &o, est, eps0_mid, out);
    }
    free(up);
    free(est);
    return st;
}
