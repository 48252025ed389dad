/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_select.c: RDP of private selection (repeat-and-select) and of the
 * Gaussian on a sample drawn with replacement (docs/accountant.md 3.7 has the proofs).
 *
 * Repeat-and-select (Papernot-Steinke, ICLR 2022, arXiv 2110.03620). The inner event Q is
 * run K times and the best run released; eps(.) is Q's RDP curve (the RDP accountant's,
 * at any order: plan.c flattens the inner event into its own plan and hands it here with
 * the function evaluating it, dpzo__rdp_oracle).
 *   Truncated negative binomial (shape eta > -1, gamma in (0, 1) with E[K] = mean), their
 *   Theorem 2: for every lambda_hat >= 1,
 *     RDP(lambda) <= eps(lambda) + (1 + eta) [(1 - 1/lambda_hat) eps(lambda_hat)
 *                    + log(1/gamma) / lambda_hat] + log(mean) / (lambda - 1).
 *   lambda_hat = 1 needs no eps (the bracket is log(1/gamma)); otherwise it is picked on a
 *   grid (fast path) and the bracket evaluated there, certified. t = log gamma is solved
 *   from the mean in double (in logs: t may be -1e4 for shapes near -1) and then checked in
 *   MPFR: a t_lo whose mean is proven >= the mean is below the true log gamma (the mean
 *   decreases in gamma), so -t_lo bounds the true log(1/gamma) from above. mean = 1 is
 *   K = 1: eps itself.
 *   Poisson (shape +inf), their Theorem 6: if Q is (eps_hat, delta_hat)-DP with
 *   e^eps_hat <= 1 + 1/(lambda - 1),
 *     RDP(lambda) <= eps(lambda) + mean delta_hat + log(mean) / (lambda - 1);
 *   eps_hat = log1p(1/(lambda - 1)) rounded down, delta_hat Q's delta at eps_hat from its
 *   RDP at an order picked on a grid (convert.c's conversion, upper bound), or Q's
 *   sampling bound when smaller.
 *   Both: where Q's RDP is 0 (P = Q: nothing is released) the selection is 0 too.
 *
 * With replacement (sample of m of n, replace-one, a Gaussian of noise multiplier sigma
 * per copy). K ~ Binomial(m, 1/n) copies of the differing record are drawn. The minimum of
 *   (a) joint convexity over the draws: RDP <= log E[exp(alpha (alpha-1) K^2 / (2 sigma^2))]
 *       / (alpha - 1), summed exactly (all m + 1 terms, for m <= WR_MAX_TERMS), and
 *   (b) m batches of one drawn without replacement, each with noise sigma / sqrt(m), summed:
 *       m * RDP_WOR(1 of n, sigma / sqrt(m)) (rdp_wor.c; for m = 1 that is the event itself).
 */
#include <math.h>
#include <stdlib.h>
#include "rdp_internal.h"
#include "ival.h"

#define HAT_MAX 1e5          /* the largest lambda_hat / delta order tried */
#define WR_MAX_TERMS 20000   /* the largest sample size summed by (a) and (c) */

/* ---- the inner event's RDP at any order ------------------------------------------ */

/* the inner event: its RDP through plan.c's callback */
typedef struct {
    dpzo__rdp_oracle rdp_of;
    const void *inner;
} inner_t;

/* the certified enclosure of the inner RDP, into an interval */
static dpzo_status inner_ival(dpzo_ctx *ctx, const inner_t *plan, double a, ival *out)
{
    dpzo_bound b;
    dpzo_status st = plan->rdp_of(ctx, plan->inner, a, 1, &b);
    if (st)
        return st;
    mpfr_set_d(out->lo, b.lower > 0.0 ? b.lower : 0.0, MPFR_RNDD);
    mpfr_set_d(out->hi, b.upper, MPFR_RNDU);
    return DPZO_OK;
}

/* fast: the estimate; certified: the proven upper bound */
static dpzo_status inner_rdp(dpzo_ctx *ctx, const inner_t *plan, double a, int certified,
                             double *r)
{
    dpzo_bound b;
    dpzo_status st = plan->rdp_of(ctx, plan->inner, a, certified, &b);
    if (st)
        return st;
    *r = certified ? b.upper : b.value;
    if (isnan(*r))
        return dpzo__fail(ctx, DPZO_ENOCONV, "the RDP of a selection's inner event at order %g "
                          "is not a number", a);
    return DPZO_OK;
}

/* the order grid of the searches: 1.01 .. 1.75, then a -> max(a + 1, floor(1.2 a)) */
static size_t hat_grid(double *out, size_t cap)
{
    static const double head[] = {1.01, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75};
    size_t n = 0;
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        out[n++] = head[i];
    for (double a = 2.0; a < HAT_MAX && n + 1 < cap; a = fmax(a + 1.0, floor(a * 1.2)))
        out[n++] = a;
    out[n++] = HAT_MAX; /* (a pure DP inner event's best lambda_hat is the largest) */
    return n;
}

/* Minimises f over the grid, stopping once stop() says no larger order can win, then by
 * golden section between the best point's neighbours. Any order returned is valid: the
 * certified step evaluates the bound there. */
typedef struct {
    dpzo_ctx *ctx;
    const inner_t *plan;
    double L;   /* log(1/gamma) (TNB) */
    double eps; /* eps_hat (Poisson) */
    int poisson;
    dpzo_status st;
} hat_obj;

static double hat_eval(hat_obj *o, double a, double *floor_above)
{
    double r = 0.0;
    if (o->st == DPZO_OK)
        o->st = inner_rdp(o->ctx, o->plan, a, 0, &r);
    if (o->st)
        return INFINITY;
    if (!o->poisson) {
        /* (1 - 1/a) eps(a) never decreases in a: a floor for every larger order */
        double head = (1.0 - 1.0 / a) * r;
        *floor_above = head;
        return head + o->L / a;
    }
    double ld = dpzo__rdp_log_delta_estimate(a, r, o->eps, DPZO_CONVERSION_IMPROVED);
    /* for larger orders the conversion's log delta is at least (a - 1)(r - eps) - 1 - log a
     * once a (r - eps) >= 1 (convert.c's bound_above) */
    double d = r - o->eps;
    *floor_above = d > 0.0 && a * d >= 1.0 ? (a - 1.0) * d - 1.0 - log(a) : -INFINITY;
    return ld;
}

static double hat_search(hat_obj *o, double *best_a)
{
    double grid[128], val[128], fl;
    size_t n = hat_grid(grid, 128);
    double best = INFINITY;
    size_t bi = 0;
    for (size_t i = 0; i < n; i++) {
        val[i] = hat_eval(o, grid[i], &fl);
        if (o->st)
            return INFINITY;
        if (val[i] < best) {
            best = val[i];
            bi = i;
        }
        if (fl >= best) {
            n = i + 1;
            break;
        }
    }
    *best_a = grid[bi];
    if (!isfinite(best))
        return best;
    double a = grid[bi > 0 ? bi - 1 : 0], b = grid[bi + 1 < n ? bi + 1 : n - 1];
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = hat_eval(o, x1, &fl), f2 = hat_eval(o, x2, &fl);
    for (int it = 0; it < 60 && (b - a) > 1e-6 * b && !o->st; it++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = hat_eval(o, x1, &fl);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = hat_eval(o, x2, &fl);
        }
    }
    if (o->st)
        return INFINITY;
    if (f1 < best) {
        best = f1;
        *best_a = x1;
    }
    if (f2 < best) {
        best = f2;
        *best_a = x2;
    }
    return best;
}

/* ---- the truncated negative binomial's gamma --------------------------------------- */

/* log E[K] at gamma = e^t (t < 0), in double, free of underflow (t may be -1e4) */
static double tnb_log_mean(double t, double eta)
{
    double lnum = log(-expm1(t)) - t; /* log(1/gamma - 1) */
    if (eta == 0.0)
        return lnum - log(-t);       /* (1/gamma - 1) / log(1/gamma) */
    double x = eta * t;              /* eta (1-g) / (g (1 - g^eta)) = |eta| (1/g - 1)/|1 - g^eta| */
    double lden = eta > 0.0 ? log(-expm1(x)) : x > 30.0 ? x + log1p(-exp(-x)) : log(expm1(x));
    return log(fabs(eta)) + lnum - lden;
}

/* log E[K] at gamma = e^t (t a double < 0), enclosed */
static void tnb_log_mean_ival(mpfr_prec_t prec, double t, double eta, ival *out)
{
    ival T, x, y;
    ival_init(&T, prec);
    ival_init(&x, prec);
    ival_init(&y, prec);
    ival_set_d(&T, t);
    ival_expm1(&x, &T);
    ival_neg(&x, &x);
    ival_log(&x, &x);
    ival_sub(&x, &x, &T);            /* log(1/gamma - 1) */
    if (eta == 0.0) {
        ival_neg(&y, &T);
        ival_log(&y, &y);
        ival_sub(out, &x, &y);
    } else {
        ival_set_d(&y, eta);
        ival_mul(&y, &y, &T);        /* eta t */
        ival_expm1(&y, &y);
        if (eta > 0.0)
            ival_neg(&y, &y);        /* 1 - gamma^eta > 0 */
        ival_log(&y, &y);            /* log |1 - gamma^eta| */
        ival_sub(&x, &x, &y);
        ival_set_d(&y, fabs(eta));
        ival_log(&y, &y);
        ival_add(out, &x, &y);
    }
    ival_clear(&T);
    ival_clear(&x);
    ival_clear(&y);
}

/* log(1/gamma) for the TNB of `mean` > 1: the estimate, and (certified) a proven upper
 * bound, -t_lo for a t_lo <= the true log gamma (E[K] at t_lo proven >= the mean). */
static dpzo_status tnb_log_inv_gamma(dpzo_ctx *ctx, double mean, double eta, int certified,
                                     mpfr_prec_t prec, double *L)
{
    /* t = log gamma: the mean decreases from +inf (t -> -inf) to 1 (t -> 0) */
    double lm = log(mean), lo = -1.0, hi = 0.0;
    while (!(tnb_log_mean(lo, eta) >= lm)) {
        hi = lo;
        lo *= 2.0;
        if (lo < -1e300)
            return dpzo__fail(ctx, DPZO_ENOCONV,
                              "repeat-and-select: no gamma found for mean %g, shape %g", mean,
                              eta);
    }
    for (int i = 0; i < 2000; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi)
            break;
        if (tnb_log_mean(mid, eta) >= lm)
            lo = mid;
        else
            hi = mid;
    }
    if (!certified) {
        *L = -lo;
        return DPZO_OK;
    }
    ival m, target;
    ival_init(&m, prec);
    ival_init(&target, prec);
    ival_set_d(&target, mean);
    ival_log(&target, &target);
    for (int tries = 0;; tries++) {
        tnb_log_mean_ival(prec, lo, eta, &m);
        if (mpfr_cmp(m.lo, target.hi) >= 0)
            break;
        if (tries > 200 || !isfinite(lo)) {
            ival_clear(&m);
            ival_clear(&target);
            return dpzo__fail(ctx, DPZO_ENOCONV,
                              "repeat-and-select: gamma for mean %g, shape %g not certified",
                              mean, eta);
        }
        lo -= fabs(lo) * 0x1p-40 * (double)(1 << (tries < 30 ? tries : 30));
    }
    *L = -lo; /* exact */
    ival_clear(&m);
    ival_clear(&target);
    return DPZO_OK;
}

/* ---- repeat-and-select --------------------------------------------------------------- */

static dpzo_status select_rdp(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                              dpzo_bound *out, const inner_t *in)
{
    const inner_t plan = *in;
    dpzo_status st = DPZO_OK;
    double mean = e->param, eta = e->param2, r_fast, r_up = 0.0;
    mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
    if ((st = inner_rdp(ctx, &plan, alpha, 0, &r_fast))
        || (certified && (st = inner_rdp(ctx, &plan, alpha, 1, &r_up))))
        goto done;
    if (isinf(r_fast) || (certified && isinf(r_up))) {
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        goto done;
    }
    /* P = Q (RDP 0 at one order > 1 is 0 at all) or K = 1: the inner RDP itself */
    if ((certified ? r_up : r_fast) == 0.0 || (mean == 1.0 && !isinf(eta))) {
        dpzo_bound b;
        st = plan.rdp_of(ctx, plan.inner, alpha, certified, &b);
        *out = b;
        goto done;
    }
    hat_obj o = {ctx, &plan, 0.0, 0.0, isinf(eta), DPZO_OK};
    double extra_fast, hat = 1.0; /* the middle term: (1 + eta) bracket, or mean delta_hat */
    double L = 0.0, Lup = 0.0;
    if (!o.poisson) {
        if ((st = tnb_log_inv_gamma(ctx, mean, eta, 0, prec, &L)))
            goto done;
        o.L = L;
        double best = hat_search(&o, &hat);
        if ((st = o.st))
            goto done;
        if (!(best < L)) { /* lambda_hat = 1 */
            best = L;
            hat = 1.0;
        }
        extra_fast = (1.0 + eta) * best;
    } else {
        o.eps = log1p(1.0 / (alpha - 1.0));
        double ld = hat_search(&o, &hat);
        if ((st = o.st))
            goto done;
        double sb = dpzo__event_sampling_bound(e->inner);
        double dh = exp(ld) < sb ? exp(ld) : sb;
        extra_fast = mean * dh;
    }
    double fast = r_fast + extra_fast + log(mean) / (alpha - 1.0);
    if (!certified) {
        *out = (dpzo_bound){fast, fast, fast};
        goto done;
    }
    /* certified: the same choices, evaluated with outward rounding */
    ival v[8];
    for (int i = 0; i < 8; i++)
        ival_init(&v[i], prec);
    ival *R = &v[0], *X = &v[1], *A = &v[2], *T = &v[3], *one = &v[4], *M = &v[5],
         *H = &v[6], *U = &v[7];
    ival_set_ui(one, 1);
    ival_set_d(A, alpha);
    ival_set_d(M, mean);
    if ((st = inner_ival(ctx, &plan, alpha, R)))
        goto cert_done;
    if (!o.poisson) {
        if ((st = tnb_log_inv_gamma(ctx, mean, eta, 1, prec, &Lup)))
            goto cert_done;
        ival_set_d(X, Lup); /* log(1/gamma) <= Lup */
        mpfr_set_d(X->lo, L < Lup ? L : Lup, MPFR_RNDD);
        if (hat > 1.0) {
            if ((st = inner_ival(ctx, &plan, hat, T)))
                goto cert_done;
            ival_set_d(H, hat);
            ival_div(U, one, H);
            ival_sub(U, one, U);  /* 1 - 1/hat */
            ival_mul(T, T, U);
            ival_div(U, X, H);    /* log(1/gamma) / hat */
            ival_add(T, T, U);
            ival_min(X, X, T);    /* lambda_hat = 1 stays a candidate */
        }
        ival_set_d(T, eta);
        ival_add(T, T, one);
        ival_mul(X, X, T);
    } else {
        /* eps_hat = log1p(1/(alpha - 1)), rounded down */
        ival_sub(T, A, one);
        ival_div(T, one, T);
        ival_log1p(T, T);
        double eh = ival_lo_d(T), rh;
        if ((st = inner_rdp(ctx, &plan, hat, 1, &rh)))
            goto cert_done;
        double dh = dpzo__rdp_delta_upper((long)prec, hat, rh, eh, DPZO_CONVERSION_IMPROVED);
        double sb = dpzo__event_sampling_bound(e->inner);
        dh = dh < sb ? dh : sb;
        ival_set_d(X, dh);
        mpfr_set_ui(X->lo, 0, MPFR_RNDD);
        ival_mul(X, X, M);
    }
    ival_log(T, M);
    ival_sub(U, A, one);
    ival_div(T, T, U);       /* log(mean) / (alpha - 1) */
    ival_add(X, X, T);
    ival_add(X, X, R);
    double lo = ival_lo_d(X), hi = ival_hi_d(X);
    lo = lo < 0.0 ? 0.0 : lo;
    hi = hi < lo ? lo : hi;
    double val = fast < lo ? lo : fast > hi ? hi : fast;
    *out = (dpzo_bound){val, lo, hi};
cert_done:
    for (int i = 0; i < 8; i++)
        ival_clear(&v[i]);
done:
    return st;
}

/* ---- the Gaussian on a sample drawn with replacement -------------------------------- */

/* (a) in double: log sum_k Binom(k; m, 1/n) e^{c k^2} / (alpha - 1), c = alpha(alpha-1)/(2s^2) */
static double wr_joint_fast(uint64_t m, uint64_t n, double sigma, double alpha)
{
    double c = alpha * (alpha - 1.0) / (2.0 * sigma * sigma);
    double md = (double)m;
    if (n == 1)
        return c * md * md / (alpha - 1.0);
    double lp = -log((double)(n - 1));        /* log(p / (1 - p)) */
    double lw = md * log1p(-1.0 / (double)n); /* log P(K = 0) */
    double mx = -INFINITY;
    for (uint64_t k = 0; k <= m; k++) { /* max term */
        double kd = (double)k, t = lw + c * kd * kd;
        mx = t > mx ? t : mx;
        lw += log((md - kd) / (kd + 1.0)) + lp;
    }
    if (!isfinite(mx))
        return INFINITY;
    double s = 0.0;
    lw = md * log1p(-1.0 / (double)n);
    for (uint64_t k = 0; k <= m; k++) {
        double kd = (double)k;
        s += exp(lw + c * kd * kd - mx);
        lw += log((md - kd) / (kd + 1.0)) + lp;
    }
    return (mx + log(s)) / (alpha - 1.0);
}

/* (a) enclosed */
static void wr_joint_ival(mpfr_prec_t prec, uint64_t m, uint64_t n, double sigma, double alpha,
                          double mx, ival *out)
{
    ival v[9];
    for (int i = 0; i < 9; i++)
        ival_init(&v[i], prec);
    ival *A = &v[0], *C = &v[1], *LW = &v[2], *LP = &v[3], *S = &v[4], *T = &v[5],
         *K = &v[6], *one = &v[7], *MX = &v[8];
    ival_set_ui(one, 1);
    ival_set_d(A, alpha);
    ival_sub(T, A, one);
    ival_mul(C, A, T);
    ival_set_d(S, sigma);
    ival_mul(S, S, S);
    ival_add(S, S, S);
    ival_div(C, C, S); /* alpha (alpha - 1) / (2 sigma^2) */
    if (n == 1) {
        ival_set_d(K, (double)m); /* m <= 2^53: exact */
        ival_mul(K, K, K);
        ival_mul(S, C, K);
        ival_div(out, S, T);
    } else {
        mpfr_set_ui(LP->lo, (unsigned long)(n - 1), MPFR_RNDD); /* exact: prec >= 64 */
        mpfr_set_ui(LP->hi, (unsigned long)(n - 1), MPFR_RNDU);
        ival_set(S, LP);
        ival_add(S, S, one);            /* n */
        ival_div(LW, LP, S);            /* (n - 1)/n */
        ival_log(LW, LW);
        ival_set_d(K, (double)m);
        ival_mul(LW, LW, K);            /* log P(K = 0) */
        ival_log(LP, LP);
        ival_neg(LP, LP);               /* log(1/(n - 1)) */
        ival_set_d(MX, mx);
        ival_set_ui(S, 0);
        for (uint64_t k = 0;; k++) {
            ival_set_d(K, (double)k);   /* k <= m <= WR_MAX_TERMS: exact */
            ival_mul(T, K, K);
            ival_mul(T, T, C);
            ival_add(T, T, LW);
            ival_sub(T, T, MX);
            ival_exp(T, T);
            ival_add(S, S, T);
            if (k == m)
                break;
            ival_set_d(T, (double)(m - k));
            ival_set_d(K, (double)(k + 1));
            ival_div(T, T, K);
            ival_log(T, T);
            ival_add(LW, LW, T);
            ival_add(LW, LW, LP);
        }
        ival_log(S, S);
        ival_add(S, S, MX);
        ival_set_d(T, alpha);
        ival_sub(T, T, one);
        ival_div(out, S, T);
    }
    for (int i = 0; i < 9; i++)
        ival_clear(&v[i]);
}

/* (c) in double: alpha/(alpha-1) log sum_k w_k W_k^((1-alpha)/alpha) e^{(alpha-1) k^2/(2s^2)},
 * w_k = Binom(k; m, 1/n), W_k = max_{l <= k} w_l (n >= 2) */
static double wr_pair_fast(uint64_t m, uint64_t n, double sigma, double alpha)
{
    double h = (alpha - 1.0) / (2.0 * sigma * sigma), ex = (1.0 - alpha) / alpha;
    double md = (double)m, lp = -log((double)(n - 1)), lw0 = md * log1p(-1.0 / (double)n);
    double mx = -INFINITY, lw = lw0, best = -INFINITY;
    for (uint64_t k = 0; k <= m; k++) {
        double kd = (double)k;
        best = lw > best ? lw : best;
        double t = lw + ex * best + h * kd * kd;
        mx = t > mx ? t : mx;
        lw += log((md - kd) / (kd + 1.0)) + lp;
    }
    if (!isfinite(mx))
        return INFINITY;
    double s = 0.0;
    lw = lw0;
    best = -INFINITY;
    for (uint64_t k = 0; k <= m; k++) {
        double kd = (double)k;
        best = lw > best ? lw : best;
        s += exp(lw + ex * best + h * kd * kd - mx);
        lw += log((md - kd) / (kd + 1.0)) + lp;
    }
    return alpha / (alpha - 1.0) * (mx + log(s));
}

/* (c) enclosed: the same l (the one of largest estimated w_l so far) for each k */
static void wr_pair_ival(mpfr_prec_t prec, uint64_t m, uint64_t n, double sigma, double alpha,
                         double mx, ival *out)
{
    ival v[11];
    for (int i = 0; i < 11; i++)
        ival_init(&v[i], prec);
    ival *A = &v[0], *H = &v[1], *LW = &v[2], *LP = &v[3], *S = &v[4], *T = &v[5],
         *K = &v[6], *one = &v[7], *MX = &v[8], *EX = &v[9], *BEST = &v[10];
    ival_set_ui(one, 1);
    ival_set_d(A, alpha);
    ival_sub(T, A, one);       /* alpha - 1 */
    ival_set_d(S, sigma);
    ival_mul(S, S, S);
    ival_add(S, S, S);
    ival_div(H, T, S);         /* (alpha - 1)/(2 sigma^2) */
    ival_neg(EX, T);
    ival_div(EX, EX, A);       /* (1 - alpha)/alpha */
    mpfr_set_ui(LP->lo, (unsigned long)(n - 1), MPFR_RNDD); /* exact: prec >= 64 */
    mpfr_set_ui(LP->hi, (unsigned long)(n - 1), MPFR_RNDU);
    ival_set(S, LP);
    ival_add(S, S, one);
    ival_div(LW, LP, S);
    ival_log(LW, LW);
    ival_set_d(K, (double)m);
    ival_mul(LW, LW, K);       /* log w_0 */
    ival_log(LP, LP);
    ival_neg(LP, LP);          /* log(1/(n - 1)) */
    ival_set_d(MX, mx);
    ival_set_ui(S, 0);
    double best = -INFINITY;
    for (uint64_t k = 0;; k++) {
        double mid = ival_mid_d(LW);
        if (mid > best) { /* any l <= k is valid: take the largest w_l estimated so far */
            best = mid;
            ival_set(BEST, LW);
        }
        ival_set_d(K, (double)k); /* k <= m <= WR_MAX_TERMS: exact */
        ival_mul(T, K, K);
        ival_mul(T, T, H);
        ival_add(T, T, LW);
        ival_mul(K, BEST, EX);
        ival_add(T, T, K);
        ival_sub(T, T, MX);
        ival_exp(T, T);
        ival_add(S, S, T);
        if (k == m)
            break;
        ival_set_d(T, (double)(m - k));
        ival_set_d(K, (double)(k + 1));
        ival_div(T, T, K);
        ival_log(T, T);
        ival_add(LW, LW, T);
        ival_add(LW, LW, LP);
    }
    ival_log(S, S);
    ival_add(S, S, MX);
    ival_sub(T, A, one);
    ival_div(T, A, T);
    ival_mul(out, S, T);
    for (int i = 0; i < 11; i++)
        ival_clear(&v[i]);
}

/* sigma / sqrt(m), rounded down (a smaller noise multiplier only raises the RDP) */
static double split_sigma(double sigma, uint64_t m)
{
    if (m == 1)
        return sigma;
    double r = sqrt((double)m); /* m <= 2^53: exact, sqrt correctly rounded */
    double s = nextafter(sigma / nextafter(r, INFINITY), 0.0);
    return s < 0.0 ? 0.0 : s;
}

static dpzo_status wr_rdp(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                          dpzo_bound *out)
{
    double sigma;
    dpzo_status st = dpzo__effective_sigma(ctx, e->inner, &sigma);
    if (st)
        return st;
    uint64_t m = e->batch, n = e->n;
    if (m == 0 || isinf(sigma)) {
        *out = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (!(sigma > 0.0)) {
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    /* (b): m steps of a batch of one, noise sigma / sqrt(m) */
    double s1 = split_sigma(sigma, m), rb = INFINITY;
    dpzo_bound bb = {INFINITY, INFINITY, INFINITY};
    if (s1 > 0.0) {
        if (certified) {
            if ((st = dpzo_rdp_wor_gaussian(ctx, 1, n, s1, alpha, &bb)))
                return st;
            rb = bb.value * (double)m;
            if (m > 1) /* one rounding each (m <= 2^53 is exact) */
                bb = (dpzo_bound){rb, dpzo__down(bb.lower * (double)m),
                                  dpzo__up(bb.upper * (double)m)};
        } else {
            if ((st = dpzo__rdp_wor_fast(ctx, 1, n, s1, alpha, &rb)))
                return st;
            rb *= (double)m;
        }
    }
    /* (a): joint convexity, summed exactly */
    double ra = INFINITY;
    dpzo_bound ba = {INFINITY, INFINITY, INFINITY};
    if (m <= WR_MAX_TERMS) {
        ra = wr_joint_fast(m, n, sigma, alpha);
        if (certified && isfinite(ra)) {
            mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
            ival r;
            ival_init(&r, prec);
            wr_joint_ival(prec, m, n, sigma, alpha, ra * (alpha - 1.0), &r);
            double lo = ival_lo_d(&r), hi = ival_hi_d(&r);
            ival_clear(&r);
            lo = lo < 0.0 ? 0.0 : lo;
            hi = hi < lo ? lo : hi;
            ba = (dpzo_bound){ra < lo ? lo : ra > hi ? hi : ra, lo, hi};
        }
    }
    /* (c): each k's part paired with a share of the whole of D''s output */
    double rc = INFINITY;
    dpzo_bound bc = {INFINITY, INFINITY, INFINITY};
    if (m <= WR_MAX_TERMS && n > 1) {
        rc = wr_pair_fast(m, n, sigma, alpha);
        if (certified && isfinite(rc)) {
            mpfr_prec_t prec = (mpfr_prec_t)dpzo_ctx_precision(ctx) + 64;
            ival r;
            ival_init(&r, prec);
            wr_pair_ival(prec, m, n, sigma, alpha, rc * (alpha - 1.0) / alpha, &r);
            double lo = ival_lo_d(&r), hi = ival_hi_d(&r);
            ival_clear(&r);
            lo = lo < 0.0 ? 0.0 : lo;
            hi = hi < lo ? lo : hi;
            bc = (dpzo_bound){rc < lo ? lo : rc > hi ? hi : rc, lo, hi};
        }
    }
    if (!certified) {
        double r = ra < rb ? ra : rb;
        r = rc < r ? rc : r;
        *out = (dpzo_bound){r, r, r};
        return DPZO_OK;
    }
    *out = ba.upper <= bb.upper ? ba : bb;
    *out = bc.upper < out->upper ? bc : *out;
    if (isinf(out->upper) && isinf(ra) && isinf(rb) && isinf(rc)) /* all overflowed */
        *out = (dpzo_bound){INFINITY, INFINITY, INFINITY};
    return DPZO_OK;
}

dpzo_status dpzo__rdp_select(dpzo_ctx *ctx, const dpzo_event *e, double alpha, int certified,
                             dpzo_bound *out, dpzo__rdp_oracle rdp_of, const void *inner)
{
    dpzo_status st = dpzo__check_order(ctx, alpha);
    if (st)
        return st;
    if (e->kind == DPZO_EVENT_REPEAT_AND_SELECT) {
        inner_t in = {rdp_of, inner};
        if (rdp_of == NULL)
            return dpzo__fail(ctx, DPZO_EINVAL, "repeat-and-select needs its inner event's RDP");
        return select_rdp(ctx, e, alpha, certified, out, &in);
    }
    if (e->kind == DPZO_EVENT_WR_SAMPLED)
        return wr_rdp(ctx, e, alpha, certified, out);
    return dpzo__fail(ctx, DPZO_EINVAL, "corrupt event (kind %d)", (int)e->kind);
}
