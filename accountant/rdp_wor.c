/* accountant/rdp_wor.c: RDP of the Gaussian mechanism on a batch sampled without
 * replacement, replace-one adjacency (Wang, Balle, Kasiviswanathan 2019).
 *
 * Integer alpha >= 2, q = batch/n, cgf(x) = x(x+1)/(2 sigma^2) (the Gaussian's
 * (alpha-1) RDP(alpha) at x = alpha-1), D(m) = m-th forward difference at 0 of
 * g(a) = exp(cgf(a-1)). Theorem 27 of WBK19:
 *   A <= 1 + q^2 C(alpha,2) min(4 (e^{1/s^2} - 1), 2 e^{1/s^2})
 *          + sum_{i=3}^{alpha} q^i C(alpha,i) min(4 sqrt(|D(2 floor(i/2))| |D(2 ceil(i/2))|),
 *                                                2 e^{cgf(i-1)}),
 * RDP <= log(A)/(alpha-1). For alpha > 256 only the second branch of the min is used
 * (a looser but valid bound; the difference table costs O(alpha^2)), as dp_accounting
 * does. Fractional alpha: linear interpolation of log A between floor and ceil
 * (WBK19 Cor. 10: the CGF is convex), log A(1) = 0.
 *
 * Everything is computed in interval arithmetic; the forward differences cancel
 * heavily, so the precision is raised until the enclosure is tight. */
#include <math.h>
#include <stdlib.h>
#include "internal.h"
#include "ival.h"

#define WOR_EXACT_MAX_ALPHA 256
/* The difference table is formed only while every g(i) = e^{i(i-1)c} it holds stays below
 * e^{2^20} (far inside MPFR's exponent range) and the precision its cancellation needs
 * stays below WOR_TABLE_PREC_CAP bits; elsewhere the analytic bound on D(m) stands in. */
#define WOR_TABLE_MAX_EXP 1048576.0
#define WOR_TABLE_PREC_CAP 8192L
/* The sum over i runs at most this many terms; where it has not stopped by then (the terms
 * do not decay fast enough: small sigma at a large order, or a large q at a huge order) it
 * is abandoned and only the unamplified bound log A <= n(n-1)c stands, so one order costs
 * O(WOR_SUM_MAX_TERMS) operations whatever sigma, delta, B and n are. */
#define WOR_SUM_MAX_TERMS 512UL

/* Upper bound on D(m) = E[(e^L - 1)^m] for even m, L ~ N(mu, s) the Gaussian's privacy
 * loss (s = 2c = 1/sigma^2, mu = -s/2), from |e^L - 1| <= |L| e^{max(L,0)}:
 *   D(m) <= E[L^m] + E[L^m e^{mL}]
 *        <= 2^{m-1} (|mu|^m + s^{m/2} (m-1)!!)
 *           + e^{m(m-1)c} 2^{m-1} (|mu + m s|^m + s^{m/2} (m-1)!!)
 * (the second by exponential tilting: E[f(L) e^{mL}] = e^{m mu + m^2 s/2} E[f(L')],
 * L' ~ N(mu + m s, s); then |a + b|^m <= 2^{m-1} (|a|^m + |b|^m)). Exact to a factor
 * 2^m-ish, and increasing in s. Computed in logs: r = log of the bound; dfact holds
 * log (m-1)!!. */
static void wor_log_d_bound(mpfr_prec_t p, const ival *c, unsigned long m, const ival *dfact,
                            const ival *ln2, const ival *lns, ival *r)
{
    ival s, mu, t, u, sm, tail;
    ival *all[] = {&s, &mu, &t, &u, &sm, &tail};
    for (size_t i = 0; i < 6; i++)
        ival_init(all[i], p);
    ival_add(&s, c, c);
    ival_set_d(&t, -0.5);
    ival_mul(&mu, &s, &t); /* mu = -s/2 */
    ival_set_ui(&u, m);
    /* log(s^{m/2} (m-1)!!) */
    ival_mul(&sm, lns, &u);
    ival_set_d(&t, 0.5);
    ival_mul(&sm, &sm, &t);
    ival_add(&sm, &sm, dfact);
    /* first: log(|mu|^m + s^{m/2}(m-1)!!) = log(e^{m log(s/2)} + e^{sm}) */
    ival_neg(&t, &mu);
    ival_log(&t, &t);
    ival_mul(&t, &t, &u);
    ival_max(&tail, &t, &sm); /* log(a + b) <= max(log a, log b) + log 2 */
    /* second: m(m-1)c + log(|mu + m s|^m + s^{m/2}(m-1)!!), mu + m s = s (m - 1/2) > 0 */
    ival_set_d(&t, (double)m - 0.5); /* exact: m <= 2^26 */
    ival_mul(&t, &t, &s);
    ival_log(&t, &t);
    ival_mul(&t, &t, &u);
    ival_max(&t, &t, &sm);
    ival_set_d(r, (double)m * ((double)m - 1.0)); /* exact */
    ival_mul(r, r, c);
    ival_add(&t, &t, r);
    ival_max(r, &tail, &t); /* log(x + y) <= max + log 2 */
    /* + log 2 (each max) + log 2 (the sum of the two) + (m-1) log 2 */
    ival_set_ui(&u, m + 1);
    ival_mul(&t, ln2, &u);
    ival_add(r, r, &t);
    for (size_t i = 0; i < 6; i++)
        ival_clear(all[i]);
}

/* The forward differences |D(m)|, m = 0 .. WOR_EXACT_MAX_ALPHA + 1, of one sigma at one
 * precision: independent of the order and of q, so one table serves every order the
 * search visits (cached in the ctx). D(m) = sum_i (-1)^(m-i) C(m,i) g(i), g(i) =
 * exp((i-1) i c) <= e^{2^20} (the caller checks), C(m,i) held exactly in bx
 * (C(m,i) (m-i) < 2^(m+9) and p >= m_max + 64 bits). */
struct dpzo__wor_table {
    double sigma;
    mpfr_prec_t prec;
    ival d[WOR_EXACT_MAX_ALPHA + 2];
};

void dpzo__wor_table_free(struct dpzo__wor_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < WOR_EXACT_MAX_ALPHA + 2; i++)
        ival_clear(&t->d[i]);
    free(t);
}

static struct dpzo__wor_table *wor_table_new(mpfr_prec_t p, double sigma)
{
    const unsigned long m_max = WOR_EXACT_MAX_ALPHA + 1;
    struct dpzo__wor_table *tb = malloc(sizeof *tb);
    ival *g = malloc((m_max + 1) * sizeof *g);
    if (tb == NULL || g == NULL) {
        free(tb);
        free(g);
        return NULL;
    }
    tb->sigma = sigma;
    tb->prec = p;
    ival *d = tb->d;
    ival c, t, u, term;
    ival_init(&c, p);
    ival_init(&t, p);
    ival_init(&u, p);
    ival_init(&term, p);
    mpfr_t bx;
    mpfr_init2(bx, p);
    ival_set_d(&t, sigma);
    ival_mul(&t, &t, &t);
    ival_add(&t, &t, &t);
    ival_set_ui(&u, 1);
    ival_div(&c, &u, &t);
    for (unsigned long i = 0; i <= m_max; i++) {
        ival_init(&g[i], p);
        ival_init(&d[i], p);
        ival_set_d(&t, (double)i * ((double)i - 1.0)); /* exact: small integers */
        ival_mul(&t, &t, &c);
        ival_exp(&g[i], &t);
    }
    for (unsigned long m = 0; m <= m_max; m++) {
        ival_set_ui(&d[m], 0);
        mpfr_set_ui(bx, 1, MPFR_RNDN);
        for (unsigned long i = 0; i <= m; i++) {
            if ((m - i) % 2 == 1) { /* - C g: [-C g.hi, -C g.lo] */
                mpfr_mul(term.lo, bx, g[i].hi, MPFR_RNDU);
                mpfr_neg(term.lo, term.lo, MPFR_RNDD);
                mpfr_mul(term.hi, bx, g[i].lo, MPFR_RNDD);
                mpfr_neg(term.hi, term.hi, MPFR_RNDU);
            } else {
                mpfr_mul(term.lo, bx, g[i].lo, MPFR_RNDD);
                mpfr_mul(term.hi, bx, g[i].hi, MPFR_RNDU);
            }
            ival_add(&d[m], &d[m], &term);
            mpfr_mul_ui(bx, bx, m - i, MPFR_RNDN); /* exact */
            mpfr_div_ui(bx, bx, i + 1, MPFR_RNDN); /* exact: an integer */
        }
        /* |D(m)| */
        if (mpfr_sgn(d[m].hi) < 0)
            ival_neg(&d[m], &d[m]);
        else if (mpfr_sgn(d[m].lo) < 0)
            mpfr_set_zero(d[m].lo, 1);
    }
    for (unsigned long i = 0; i <= m_max; i++)
        ival_clear(&g[i]);
    free(g);
    mpfr_clear(bx);
    ival_clear(&c);
    ival_clear(&t);
    ival_clear(&u);
    ival_clear(&term);
    return tb;
}

/* The table for (sigma, p): the ctx's cached one, or a new one (kept in the ctx; with
 * no ctx, *own receives it and the caller frees it). NULL: out of memory. */
static const ival *wor_table_get(dpzo_ctx *ctx, mpfr_prec_t p, double sigma,
                                 struct dpzo__wor_table **own)
{
    *own = NULL;
    if (ctx != NULL && ctx->wor_table != NULL && ctx->wor_table->sigma == sigma
        && ctx->wor_table->prec >= p)
        return ctx->wor_table->d;
    struct dpzo__wor_table *tb = wor_table_new(p, sigma);
    if (tb == NULL)
        return NULL;
    if (ctx != NULL) {
        dpzo__wor_table_free(ctx->wor_table);
        ctx->wor_table = tb;
    } else {
        *own = tb;
    }
    return tb->d;
}

/* Encloses the WBK19 bound on log A at integer order n >= 2 (q < 1, sigma > 0). The sum
 * 1 + sum_i q^i C(n,i) v_i is accumulated from the logs of its terms as e^M (e^{-M} + T),
 * M the largest log term so far, so no term overflows however small sigma is (the terms
 * reach e^{n(n-1)/(2 sigma^2)}); when no term exceeds 1 (M = 0), log1p(T) keeps A close
 * to 1 exact. table: form the forward differences D(m), m <= n+1, exactly. */
/* log of an upper bound on R = max over even m <= n - 1 of Dub(m + 2) / Dub(m), Dub the
 * analytic bound of wor_log_d_bound: Dub(m) = 2^{m+1} max(P1..P4), and the ratio of two
 * maxima is at most the largest ratio of their parts:
 *   P1 = |mu|^m:                          ratio s^2/4
 *   P2 = s^{m/2} (m-1)!!:                 ratio s (m+1) <= s n
 *   P3 = e^{m(m-1)c} (s(m-1/2))^m:        ratio e^{(4m+2)c} s^2 (m+3/2)^2 (1 + 2/(m-1/2))^m
 *                                               <= e^{4nc} e^3 s^2 (n+1)^2   (m >= 2)
 *   P4 = e^{m(m-1)c} s^{m/2} (m-1)!!:      ratio e^{(4m+2)c} s (m+1) <= e^{4nc} s n
 * so R <= 4 e^{4nc} max(s^2/4, s n, e^3 s^2 (n+1)^2), s = 2c. In doubles, c inflated by
 * 1e-12 relative; the caller leaves a margin of 0.007 against the roundings. */
static double wor_log_d_ratio(double c, unsigned long n)
{
    c *= 1.0 + 1e-12;
    double s = 2.0 * c, dn = (double)n;
    double l = fmax(2.0 * log(s) - log(4.0), log(s) + log(dn));
    l = fmax(l, 3.0 + 2.0 * log(s) + 2.0 * log(dn + 1.0));
    return log(4.0) + 4.0 * dn * c + l;
}

static int wor_log_a_int(mpfr_prec_t p, uint64_t batch, uint64_t size, double sigma,
                         unsigned long n, const ival *d, ival *out)
{
    const int table = d != NULL;
    ival c, lq, t, u, lv, binom, term, one, tsum, logd_prev, logd_next, dfact, l2, fb, ln2, ln4,
        lns;
    ival *all[] = {&c, &lq, &t, &u, &lv, &binom, &term, &one, &tsum, &logd_prev, &logd_next,
                   &dfact, &l2, &fb, &ln2, &ln4, &lns};
    /* first-branch tail (no table: every |D| bound analytic): the analytic first-branch
     * terms F_j = q^j C(n,j) 4 sqrt(Dub Dub) have ratio F_{j+1}/F_j <= q (n-j)/(j+1) sqrt(R) */
    const double half_log_r = table ? INFINITY : 0.5 * wor_log_d_ratio(0.5 / sigma / sigma, n);
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], p);
    mpfr_t mx;
    mpfr_init2(mx, p);
    ival_set_d(&t, sigma);
    ival_mul(&t, &t, &t);
    ival_add(&t, &t, &t);
    ival_set_ui(&u, 1);
    ival_div(&c, &u, &t); /* 1/(2 sigma^2): in range for every double sigma > 0 */
    ival_set_ui(&ln2, 2);
    ival_log(&ln2, &ln2);
    ival_add(&ln4, &ln2, &ln2);
    ival_add(&lns, &c, &c);
    ival_log(&lns, &lns); /* log s, s = 1/sigma^2 */
    /* log q, q = batch/size enclosed exactly (no double rounding of the ratio) */
    mpfr_set_ui(t.lo, (unsigned long)batch, MPFR_RNDD);
    mpfr_div_ui(t.lo, t.lo, (unsigned long)size, MPFR_RNDD);
    mpfr_set_ui(t.hi, (unsigned long)batch, MPFR_RNDU);
    mpfr_div_ui(t.hi, t.hi, (unsigned long)size, MPFR_RNDU);
    ival_log(&lq, &t);

    /* A = 1 + sum_{i>=2} q^i C(n,i) v_i; binom = C(n, i) with directed roundings */
    mpfr_set_zero(mx, 1); /* M */
    ival_set_ui(&one, 1); /* e^{-M} */
    ival_set_ui(&tsum, 0); /* T */
    ival_set_ui(&binom, 1);
    unsigned long cur_m = 0;
    for (unsigned long i = 1; i <= n; i++) {
        mpfr_mul_ui(binom.lo, binom.lo, n - i + 1, MPFR_RNDD);
        mpfr_div_ui(binom.lo, binom.lo, i, MPFR_RNDD);
        mpfr_mul_ui(binom.hi, binom.hi, n - i + 1, MPFR_RNDU);
        mpfr_div_ui(binom.hi, binom.hi, i, MPFR_RNDU);
        if (i < 2)
            continue;
        /* second branch, in logs: log 2 + (i-1) i c */
        ival_set_d(&t, (double)i * ((double)i - 1.0));
        ival_mul(&lv, &t, &c);
        ival_add(&lv, &lv, &ln2);
        ival_set(&l2, &lv);
        if (i == 2) {
            /* first branch 4 (e^{1/s^2} - 1): smaller only while 1/s^2 < log 2 */
            ival_add(&t, &c, &c); /* 1/sigma^2 */
            if (mpfr_cmp_d(t.hi, 1.0) < 0) {
                ival_expm1(&u, &t);
                ival_set_ui(&t, 4);
                ival_mul(&u, &u, &t);
                ival_log(&u, &u);
                ival_min(&lv, &lv, &u);
            }
        } else {
            /* first branch 4 sqrt(|D(2 floor(i/2))| |D(2 ceil(i/2))|), in logs, each |D|
             * the smaller of the table's and the analytic bound */
            unsigned long m2 = 2 * ((i + 1) / 2);
            if (cur_m == 0) { /* start at m = 2: (2-1)!! = 1 */
                cur_m = 2;
                ival_set_ui(&dfact, 0);
                wor_log_d_bound(p, &c, cur_m, &dfact, &ln2, &lns, &logd_next);
                if (table) {
                    ival_log(&t, &d[cur_m]);
                    ival_min(&logd_next, &logd_next, &t);
                }
            }
            while (cur_m < m2) { /* logd_prev: bound at cur_m - 2, logd_next: at cur_m */
                ival_set(&logd_prev, &logd_next);
                cur_m += 2;
                ival_set_ui(&t, cur_m - 1);
                ival_log(&t, &t);
                ival_add(&dfact, &dfact, &t);
                wor_log_d_bound(p, &c, cur_m, &dfact, &ln2, &lns, &logd_next);
                if (table) {
                    ival_log(&t, &d[cur_m]);
                    ival_min(&logd_next, &logd_next, &t);
                }
            }
            /* 2 floor(i/2) is m2 (i even) or m2 - 2 (i odd) */
            const ival *lower_m = i % 2 == 0 ? &logd_next : &logd_prev;
            ival_add(&u, lower_m, &logd_next);
            ival_set_d(&t, 0.5);
            ival_mul(&u, &u, &t);
            ival_add(&u, &u, &ln4);
            ival_set(&fb, &u);
            ival_min(&lv, &lv, &u);
        }
        /* log term = i log q + log C(n,i) + log v */
        ival_set_ui(&t, i);
        ival_mul(&term, &t, &lq);
        ival_log(&t, &binom);
        ival_add(&term, &term, &t);
        ival_add(&term, &term, &lv);
        if (!mpfr_number_p(term.hi)) { /* +inf (or NaN): no finite bound */
            mpfr_set_inf(out->lo, -1);
            mpfr_set_inf(out->hi, 1);
            goto done;
        }
        if (mpfr_cmp(term.hi, mx) > 0) { /* rescale: T e^{M_old - M_new} */
            mpfr_sub(t.lo, mx, term.hi, MPFR_RNDD);
            mpfr_sub(t.hi, mx, term.hi, MPFR_RNDU);
            ival_exp(&t, &t);
            ival_mul(&tsum, &tsum, &t);
            mpfr_set(mx, term.hi, MPFR_RNDN); /* exact: same precision */
            mpfr_neg(t.lo, mx, MPFR_RNDD);
            mpfr_neg(t.hi, mx, MPFR_RNDU);
            ival_exp(&one, &t);
        }
        mpfr_sub(t.lo, term.lo, mx, MPFR_RNDD);
        mpfr_sub(t.hi, term.hi, mx, MPFR_RNDU);
        ival_exp(&t, &t);
        ival_add(&tsum, &tsum, &t);
        /* Tail: every v_j <= 2 e^{j(j-1)c} (the second branch), and those terms have
         * ratio q (n-j)/(j+1) e^{2jc} <= rho = q (n-i)/(i+1) e^{2nc} for j >= i. Once
         * rho <= 1/2 the terms after i sum to at most the second-branch term at i; when
         * that is below the sum's resolution it is added as [0, it] and the sum stops
         * (at large sigma and alpha = 1e5, after about a thousand terms). */
        if (i < n && i > 2) {
            double log_ratio = log((double)(n - i)) - log((double)i + 1.0) + log((double)batch)
                               - log((double)size);
            /* the analytic first branch decays much faster at large sigma: once its ratio
             * rho1 <= 1/2 the first-branch terms after i sum to at most F_i, the same way */
            if (log_ratio + half_log_r < -0.7) {
                ival_set_ui(&t, i);
                ival_mul(&u, &t, &lq);
                ival_log(&t, &binom);
                ival_add(&u, &u, &t);
                ival_add(&u, &u, &fb); /* log F_i */
                mpfr_sub(u.hi, u.hi, mx, MPFR_RNDU);
                mpfr_add(t.lo, one.lo, tsum.lo, MPFR_RNDD);
                mpfr_log(t.lo, t.lo, MPFR_RNDD);
                mpfr_sub_ui(t.lo, t.lo, (unsigned long)p + 8, MPFR_RNDD);
                if (mpfr_number_p(u.hi) && mpfr_cmp(u.hi, t.lo) < 0) {
                    mpfr_exp(u.hi, u.hi, MPFR_RNDU);
                    mpfr_add(tsum.hi, tsum.hi, u.hi, MPFR_RNDU);
                    break;
                }
            }
            double log_rho = log_ratio + (double)n / (sigma * sigma);
            if (log_rho < -0.7) { /* < log(1/2), with room for the double roundings */
                ival_set_ui(&t, i);
                ival_mul(&u, &t, &lq);
                ival_log(&t, &binom);
                ival_add(&u, &u, &t);
                ival_add(&u, &u, &l2); /* log of the second-branch term at i */
                mpfr_sub(u.hi, u.hi, mx, MPFR_RNDU);
                mpfr_add(t.lo, one.lo, tsum.lo, MPFR_RNDD);
                mpfr_log(t.lo, t.lo, MPFR_RNDD);
                mpfr_sub_ui(t.lo, t.lo, (unsigned long)p + 8, MPFR_RNDD); /* > bits * ln 2 */
                if (mpfr_number_p(u.hi) && mpfr_cmp(u.hi, t.lo) < 0) {
                    mpfr_exp(u.hi, u.hi, MPFR_RNDU);
                    mpfr_add(tsum.hi, tsum.hi, u.hi, MPFR_RNDU);
                    break;
                }
            }
        }
        if (i >= WOR_SUM_MAX_TERMS && i < n) { /* over budget: no bound from the sum */
            mpfr_set_inf(out->lo, -1);
            mpfr_set_inf(out->hi, 1);
            goto done;
        }
    }
    if (mpfr_zero_p(mx)) {
        ival_log1p(out, &tsum);
    } else {
        ival_add(&t, &one, &tsum);
        ival_log(out, &t);
        mpfr_add(out->lo, out->lo, mx, MPFR_RNDD);
        mpfr_add(out->hi, out->hi, mx, MPFR_RNDU);
    }
done:
    mpfr_clear(mx);
    for (size_t i = 0; i < n_all; i++)
        ival_clear(all[i]);
    return 0;
}

/* Encloses log A at integer n, raising the precision until the width is below 2^-50
 * relative (or the precision cap is reached: the enclosure stays valid). Every
 * precision is bounded whatever sigma is (sigma only enters through c = 1/(2 sigma^2),
 * never through a precision): the base precision plus at most WOR_TABLE_PREC_CAP. */
static int wor_log_a_tight(dpzo_ctx *ctx, uint64_t batch, uint64_t size, double sigma,
                           unsigned long n, double *lo, double *hi)
{
    if (n <= 1) {
        *lo = *hi = 0.0;
        return 0;
    }
    long base_prec = dpzo_ctx_precision(ctx);
    /* the table: entries below e^{2^20}, and the cancellation it needs affordable
     * (about log2(2 + 2c) + 2 bits per order, plus log2(sigma) when D(m) ~ sigma^-m is
     * small); otherwise the analytic bound on D(m) alone. One table, at the precision
     * the largest order needs, serves every order. */
    const double m_top = WOR_EXACT_MAX_ALPHA + 2.0;
    double c = 0.5 / sigma / sigma; /* +inf when sigma^2 underflows */
    double need = -1.0;
    if (n <= WOR_EXACT_MAX_ALPHA && c * m_top * (m_top - 1.0) <= WOR_TABLE_MAX_EXP)
        need = m_top * (log2(2.0 + 2.0 * c) + 2.0 + fmax(0.0, log2(sigma)));
    int table = need >= 0.0 && need <= (double)WOR_TABLE_PREC_CAP;
    long p = base_prec + 64 + (table ? (long)need : 0);
    struct dpzo__wor_table *own = NULL;
    const ival *d = NULL;
    if (table && (d = wor_table_get(ctx, (mpfr_prec_t)p, sigma, &own)) == NULL)
        return -1;
    /* the cancellation happens inside the table; the sum of positive terms needs only
     * the base precision */
    mpfr_prec_t ps = (mpfr_prec_t)(base_prec + 64);
    ival r;
    ival_init(&r, ps);
    int fail = wor_log_a_int(ps, batch, size, sigma, n, d, &r);
    if (!fail) {
        /* the unamplified bound log A <= n(n-1)c, c = 1/(2 sigma^2): a replace-one
         * neighbour changes at most one record of the batch (couple the two draws by
         * index), and e^{(n-1) D_n} is jointly convex, so the sampled mechanism's A is at
         * most the Gaussian's e^{n(n-1)c}. The smaller of the two bounds stands (the only
         * one where the sum was abandoned). */
        ival cb, one;
        ival_init(&cb, ps);
        ival_init(&one, ps);
        ival_set_d(&cb, sigma);
        ival_mul(&cb, &cb, &cb);
        ival_add(&cb, &cb, &cb);
        ival_set_ui(&one, 1);
        ival_div(&cb, &one, &cb);
        ival_set_d(&one, (double)n * ((double)n - 1.0)); /* exact: n <= 2^26 */
        ival_mul(&cb, &cb, &one);
        if (mpfr_inf_p(r.hi) || mpfr_nan_p(r.hi)) /* abandoned, or no finite sum */
            ival_set(&r, &cb);
        else
            ival_min(&r, &r, &cb);
        /* both bounds are logs of numbers >= 1: a lower end below 0 is 0 */
        if (!(mpfr_sgn(r.lo) >= 0))
            mpfr_set_zero(r.lo, 1);
        ival_clear(&cb);
        ival_clear(&one);
    }
    *lo = ival_lo_d(&r);
    *hi = ival_hi_d(&r);
    ival_clear(&r);
    dpzo__wor_table_free(own);
    if (fail)
        return -1;
    if (!(*hi >= *lo)) { /* never expected: no enclosure is no bound */
        *lo = 0.0;
        *hi = INFINITY;
    }
    return 0;
}

dpzo_status dpzo_rdp_wor_gaussian(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                                  double alpha, dpzo_bound *rdp)
{
    dpzo_status st;
    if ((st = dpzo__check_sigma(ctx, sigma)) || (st = dpzo__check_order(ctx, alpha)))
        return st;
    if (n == 0 || batch > n)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "sampling without replacement needs 0 <= batch <= n, got batch=%llu, "
                          "n=%llu", (unsigned long long)batch, (unsigned long long)n);
    if (batch == 0) {
        *rdp = (dpzo_bound){0.0, 0.0, 0.0};
        return DPZO_OK;
    }
    if (sigma == 0.0) {
        *rdp = (dpzo_bound){INFINITY, INFINITY, INFINITY};
        return DPZO_OK;
    }
    if (batch == n)
        return dpzo_rdp_sampled_gaussian_certified(ctx, 1.0, sigma, alpha, rdp);
    unsigned long af = (unsigned long)floor(alpha), ac = (unsigned long)ceil(alpha);
    double lo_f, hi_f, lo_c, hi_c;
    if (wor_log_a_tight(ctx, batch, n, sigma, af, &lo_f, &hi_f)
        || wor_log_a_tight(ctx, batch, n, sigma, ac, &lo_c, &hi_c))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory in sampling-without-replacement RDP");
    /* (1-t) logA(af) + t logA(ac), t = alpha - af; divided by alpha - 1, rounded outward.
     * A weight of 0 drops its end (0 * inf would be NaN); an infinite end is +inf. */
    double t = alpha - (double)af;
    double lo = (t < 1.0 ? (1.0 - t) * lo_f : 0.0) + (t > 0.0 ? t * lo_c : 0.0);
    double hi = (t < 1.0 ? (1.0 - t) * hi_f : 0.0) + (t > 0.0 ? t * hi_c : 0.0);
    lo /= alpha - 1.0;
    hi /= alpha - 1.0;
    /* the unamplified Gaussian RDP alpha/(2 sigma^2) bounds every order, fractional ones
     * too (the chord of the integer bounds lies above it); rounded up below (3 relative
     * roundings), used only far above the subnormal range (1/sigma^2 may underflow) */
    double cheap = alpha * (0.5 / sigma / sigma);
    if (!(cheap > 0x1p-960))
        cheap = INFINITY;
    if (cheap < hi)
        hi = cheap;
    if (cheap < lo)
        lo = cheap;
    /* a handful of double roundings happened above: widen by far more than they can cost */
    lo -= ldexp(fabs(lo), -45);
    hi += ldexp(fabs(hi), -45);
    if (!(lo >= 0.0)) /* negative, or NaN from an infinite lower end's widening */
        lo = isinf(lo_f) || isinf(lo_c) ? (t > 0.0 && t < 1.0 ? INFINITY : lo) : 0.0;
    if (!(lo >= 0.0))
        lo = 0.0;
    if (!(hi >= lo))
        hi = INFINITY;
    *rdp = (dpzo_bound){0.5 * (lo + hi), lo, hi};
    return DPZO_OK;
}
