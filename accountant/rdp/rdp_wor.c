/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/rdp/rdp_wor.c: RDP of the Gaussian mechanism on a batch sampled without
 * replacement, replace-one adjacency (Wang, Balle, Kasiviswanathan 2019).
 *
 * Integer alpha >= 2, q = batch/n, cgf(x) = x(x+1)/(2 sigma^2) (the Gaussian's
 * (alpha-1) RDP(alpha) at x = alpha-1), D(m) = m-th forward difference at 0 of
 * g(a) = exp(cgf(a-1)). Theorem 27 of WBK19:
 *   A <= 1 + q^2 C(alpha,2) min(4 (e^{1/s^2} - 1), 2 e^{1/s^2})
 *          + sum_{i=3}^{alpha} q^i C(alpha,i) min(4 sqrt(|D(2 floor(i/2))| |D(2 ceil(i/2))|),
 *                                                2 e^{cgf(i-1)}),
 * RDP <= log(A)/(alpha-1). Each |D(m)| is the smaller of an exact enclosure (m <= 257,
 * a table formed once per sigma) and an analytic bound (every m). dp_accounting forms
 * D only for alpha <= 256 and uses the second branch alone above; the theorem holds at
 * every alpha with any upper bound on |D|, so the table serves every order here and the
 * bound has no jump at 256 (it is at most dp_accounting's there, and equal below).
 * Fractional alpha: linear interpolation of log A between floor and ceil (WBK19
 * Cor. 10: the CGF is convex), log A(1) = 0.
 *
 * Cost. log v_i = log min(first branch, second branch) depends on sigma and i only, not
 * on the order or q: it is enclosed once per sigma (struct wor_entry, cached in the ctx,
 * i <= 512, the sum's budget), so an order costs one exp and one log per term of the
 * sum. Two evaluations share those enclosures: the certified one (MPFR intervals,
 * outward rounding, dpzo_rdp_wor_gaussian) and the fast one in doubles
 * (dpzo__rdp_wor_fast: the estimate the order searches rank orders by; the answer is
 * always certified at the order chosen). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rdp_internal.h"
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
/* per-sigma enclosures for i = 0 .. WOR_SUM_MAX_TERMS; |D(m)| for even m up to i + 1 */
#define WOR_NI (WOR_SUM_MAX_TERMS + 1)
#define WOR_NM (WOR_SUM_MAX_TERMS + 3)

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

/* The per-sigma enclosures: logs of the second branch l2_i = log 2 + i(i-1)c, of the
 * analytic first branch fa_i = log 4 + (log Dub(2 floor(i/2)) + log Dub(2 ceil(i/2)))/2
 * (Dub: wor_log_d_bound; the tail bound below needs it alone), and of v_i itself (the
 * smaller branch, each |D| the smaller of the table's and Dub), at base_prec + 64 bits
 * (struct wor_ivals, about 190 kB: the certified path's), and their upper ends as
 * doubles (struct wor_entry, 12 kB: the fast path's).
 *
 * The ctx keeps the doubles of every sigma met (a hash table; cleared when it reaches
 * WOR_CACHE_MAX sigmas), since the order search evaluates every phase of a schedule at
 * every order it visits, and the enclosures of the last WOR_IVAL_SLOTS sigmas whose
 * enclosures were formed (an evicted entry forms them again when it is certified). */
#define WOR_CACHE_MAX 4096
#define WOR_IVAL_SLOTS 8
struct wor_ivals {
    ival lv[WOR_NI], fa[WOR_NI], l2[WOR_NI];
};

struct wor_entry {
    double sigma;
    long base_prec;
    struct wor_ivals *iv; /* NULL once evicted */
    double lv_d[WOR_NI], fa_d[WOR_NI], l2_d[WOR_NI];
};

struct dpzo__wor_table {
    struct wor_entry **tab; /* open addressing on (sigma, base_prec), cap a power of 2 */
    size_t cap, n;
    struct wor_entry *held[WOR_IVAL_SLOTS]; /* the entries holding enclosures */
    unsigned next;                          /* the slot evicted next (round robin) */
};

static void wor_ivals_free(struct wor_ivals *iv)
{
    if (iv == NULL)
        return;
    for (size_t i = 0; i < WOR_NI; i++) {
        ival_clear(&iv->lv[i]);
        ival_clear(&iv->fa[i]);
        ival_clear(&iv->l2[i]);
    }
    free(iv);
}

static void wor_entry_free(struct wor_entry *w)
{
    if (w == NULL)
        return;
    wor_ivals_free(w->iv);
    free(w);
}

static void wor_table_clear(struct dpzo__wor_table *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        wor_entry_free(t->tab[i]);
        t->tab[i] = NULL;
    }
    t->n = 0;
    for (size_t i = 0; i < WOR_IVAL_SLOTS; i++)
        t->held[i] = NULL;
    t->next = 0;
}

/* the context's cache_free (internal.h): the context frees the table without knowing it */
static void wor_table_free(void *cache)
{
    struct dpzo__wor_table *t = cache;
    if (t == NULL)
        return;
    wor_table_clear(t);
    free(t->tab);
    free(t);
}

static size_t wor_hash(double sigma, long base_prec, size_t cap)
{
    uint64_t z;
    memcpy(&z, &sigma, sizeof z);
    z ^= (uint64_t)base_prec * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (size_t)(z ^ (z >> 31)) & (cap - 1);
}

static struct wor_entry *wor_table_find(const struct dpzo__wor_table *t, double sigma,
                                        long base_prec)
{
    if (t->cap == 0)
        return NULL;
    for (size_t i = wor_hash(sigma, base_prec, t->cap);; i = (i + 1) & (t->cap - 1)) {
        struct wor_entry *w = t->tab[i];
        if (w == NULL)
            return NULL;
        if (w->sigma == sigma && w->base_prec == base_prec)
            return w;
    }
}

/* Inserts w (not present); the table stays at most half full. -1: out of memory. */
static int wor_table_insert(struct dpzo__wor_table *t, struct wor_entry *w)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct wor_entry **tab = calloc(cap, sizeof *tab);
        if (tab == NULL)
            return -1;
        for (size_t i = 0; i < t->cap; i++) {
            struct wor_entry *e = t->tab[i];
            if (e == NULL)
                continue;
            size_t j = wor_hash(e->sigma, e->base_prec, cap);
            while (tab[j] != NULL)
                j = (j + 1) & (cap - 1);
            tab[j] = e;
        }
        free(t->tab);
        t->tab = tab;
        t->cap = cap;
    }
    size_t j = wor_hash(w->sigma, w->base_prec, t->cap);
    while (t->tab[j] != NULL)
        j = (j + 1) & (t->cap - 1);
    t->tab[j] = w;
    t->n++;
    return 0;
}

/* w's enclosures are kept: the oldest holder's are freed if every slot is taken */
static void wor_table_hold(struct dpzo__wor_table *t, struct wor_entry *w)
{
    unsigned k = t->next;
    t->next = (k + 1) % WOR_IVAL_SLOTS;
    if (t->held[k] != NULL && t->held[k] != w) {
        wor_ivals_free(t->held[k]->iv);
        t->held[k]->iv = NULL;
    }
    t->held[k] = w;
}

/* 1/(2 sigma^2) enclosed: in range for every double sigma > 0 (MPFR's exponent range) */
static void wor_c(ival *c, double sigma)
{
    ival t, u;
    ival_init(&t, mpfr_get_prec(c->lo));
    ival_init(&u, mpfr_get_prec(c->lo));
    ival_set_d(&t, sigma);
    ival_mul(&t, &t, &t);
    ival_add(&t, &t, &t);
    ival_set_ui(&u, 1);
    ival_div(c, &u, &t);
    ival_clear(&t);
    ival_clear(&u);
}

/* log |D(m)|, m = 0 .. WOR_EXACT_MAX_ALPHA + 1, enclosed at ps bits (out[m]), from the
 * forward differences of g(i) = e^{(i-1) i c} formed at p bits: g(i+1) = g(i) h^i with
 * h = e^{2c}, then D(m) = (Delta^m g)(0) by repeated differencing, every step outward
 * rounded. Each level doubles the enclosures' widths at most, which is what the
 * precision p pays for (wor_log_a_tight). Returns -1: out of memory. */
static int wor_table_logs(mpfr_prec_t p, mpfr_prec_t ps, double sigma, ival *out)
{
    const size_t m_max = WOR_EXACT_MAX_ALPHA + 1;
    ival *f = malloc((m_max + 1) * sizeof *f);
    if (f == NULL)
        return -1;
    ival c, h, hp, t;
    ival_init(&c, p);
    ival_init(&h, p);
    ival_init(&hp, p);
    ival_init(&t, ps);
    wor_c(&c, sigma);
    ival_add(&h, &c, &c);
    ival_exp(&h, &h);
    ival_set_ui(&hp, 1);
    for (size_t i = 0; i <= m_max; i++) {
        ival_init(&f[i], p);
        if (i == 0) {
            ival_set_ui(&f[i], 1);
        } else {
            ival_mul(&f[i], &f[i - 1], &hp); /* g(i) = g(i-1) h^{i-1} */
            ival_mul(&hp, &hp, &h);
        }
    }
    mpfr_t tmp;
    mpfr_init2(tmp, p);
    for (size_t m = 0; m <= m_max; m++) {
        if (m > 0)
            for (size_t i = 0; i + m <= m_max; i++) { /* f[i] = f[i+1] - f[i], outward */
                mpfr_sub(tmp, f[i + 1].lo, f[i].hi, MPFR_RNDD);
                mpfr_sub(f[i].hi, f[i + 1].hi, f[i].lo, MPFR_RNDU);
                mpfr_swap(f[i].lo, tmp);
            }
        /* |D(m)| = |f[0]|, rounded outward to ps bits, then its log */
        ival *d = &f[0];
        if (mpfr_sgn(d->hi) < 0) {
            mpfr_neg(t.lo, d->hi, MPFR_RNDD);
            mpfr_neg(t.hi, d->lo, MPFR_RNDU);
        } else {
            if (mpfr_sgn(d->lo) < 0)
                mpfr_set_zero(t.lo, 1);
            else
                mpfr_set(t.lo, d->lo, MPFR_RNDD);
            mpfr_set(t.hi, d->hi, MPFR_RNDU);
        }
        ival_log(&out[m], &t);
    }
    mpfr_clear(tmp);
    for (size_t i = 0; i <= m_max; i++)
        ival_clear(&f[i]);
    free(f);
    ival_clear(&c);
    ival_clear(&h);
    ival_clear(&hp);
    ival_clear(&t);
    return 0;
}

/* Forms w's enclosures (w->iv, which must be NULL) and their doubles, for w->sigma at
 * w->base_prec. -1: out of memory (w->iv stays NULL). */
static int wor_compute(struct wor_entry *w)
{
    const double sigma = w->sigma;
    const mpfr_prec_t ps = (mpfr_prec_t)(w->base_prec + 64);
    struct wor_ivals *iv = malloc(sizeof *iv);
    ival *ld = malloc(WOR_NM * sizeof *ld);      /* log min(table, Dub), even m */
    ival *lu = malloc(WOR_NM * sizeof *lu);      /* log Dub, even m */
    ival *lt = malloc((WOR_EXACT_MAX_ALPHA + 2) * sizeof *lt); /* log |D| from the table */
    if (iv == NULL || ld == NULL || lu == NULL || lt == NULL) {
        free(iv);
        free(ld);
        free(lu);
        free(lt);
        return -1;
    }
    ival c, t, u, dfact, ln2, ln4, lns;
    ival *all[] = {&c, &t, &u, &dfact, &ln2, &ln4, &lns};
    for (size_t i = 0; i < 7; i++)
        ival_init(all[i], ps);
    for (size_t m = 0; m < WOR_NM; m++) {
        ival_init(&ld[m], ps);
        ival_init(&lu[m], ps);
    }
    for (size_t m = 0; m < WOR_EXACT_MAX_ALPHA + 2; m++)
        ival_init(&lt[m], ps);
    for (size_t i = 0; i < WOR_NI; i++) {
        ival_init(&iv->lv[i], ps);
        ival_init(&iv->fa[i], ps);
        ival_init(&iv->l2[i], ps);
    }
    wor_c(&c, sigma);
    ival_set_ui(&ln2, 2);
    ival_log(&ln2, &ln2);
    ival_add(&ln4, &ln2, &ln2);
    ival_add(&lns, &c, &c);
    ival_log(&lns, &lns); /* log s, s = 1/sigma^2 */
    /* the table: entries below e^{2^20}, and the cancellation it needs affordable (about
     * log2(2 + 2c) + 2 bits per order, plus log2(sigma) when D(m) ~ sigma^-m is small;
     * 24 more for the roundings of the products g(i) and the differencing) */
    const double m_top = WOR_EXACT_MAX_ALPHA + 2.0;
    double cd = 0.5 / sigma / sigma; /* +inf when sigma^2 underflows */
    double need = -1.0;
    if (cd * m_top * (m_top - 1.0) <= WOR_TABLE_MAX_EXP)
        need = m_top * (log2(2.0 + 2.0 * cd) + 2.0 + fmax(0.0, log2(sigma))) + 24.0;
    int table = need >= 0.0 && need <= (double)WOR_TABLE_PREC_CAP + 24.0;
    if (table && wor_table_logs((mpfr_prec_t)(ps + (long)need), ps, sigma, lt)) {
        table = -1; /* out of memory: cleaned up below */
    }
    /* log Dub(m) for even m >= 2, (m-1)!! accumulated in dfact; log 0 at m = 0 */
    ival_set_ui(&dfact, 0);
    for (size_t m = 2; m < WOR_NM && table >= 0; m += 2) {
        if (m > 2) {
            ival_set_ui(&t, m - 1);
            ival_log(&t, &t);
            ival_add(&dfact, &dfact, &t);
        }
        wor_log_d_bound(ps, &c, m, &dfact, &ln2, &lns, &lu[m]);
        ival_set(&ld[m], &lu[m]);
        if (table && m <= WOR_EXACT_MAX_ALPHA + 1)
            ival_min(&ld[m], &ld[m], &lt[m]);
    }
    for (size_t i = 2; i < WOR_NI && table >= 0; i++) {
        ival_set_d(&t, (double)i * ((double)i - 1.0)); /* exact: small integers */
        ival_mul(&iv->l2[i], &t, &c);
        ival_add(&iv->l2[i], &iv->l2[i], &ln2);
        ival_set(&iv->lv[i], &iv->l2[i]);
        if (i == 2) {
            /* first branch 4 (e^{1/s^2} - 1): smaller only while 1/s^2 < log 2 */
            mpfr_set_inf(iv->fa[i].lo, 1);
            mpfr_set_inf(iv->fa[i].hi, 1);
            ival_add(&t, &c, &c); /* 1/sigma^2 */
            if (mpfr_cmp_d(t.hi, 1.0) < 0) {
                ival_expm1(&u, &t);
                ival_set_ui(&t, 4);
                ival_mul(&u, &u, &t);
                ival_log(&u, &u);
                ival_min(&iv->lv[i], &iv->lv[i], &u);
            }
        } else {
            size_t lo_m = 2 * (i / 2), hi_m = 2 * ((i + 1) / 2);
            ival_set_d(&t, 0.5);
            ival_add(&u, &lu[lo_m], &lu[hi_m]);
            ival_mul(&u, &u, &t);
            ival_add(&iv->fa[i], &u, &ln4);
            ival_add(&u, &ld[lo_m], &ld[hi_m]);
            ival_mul(&u, &u, &t);
            ival_add(&u, &u, &ln4);
            ival_min(&iv->lv[i], &iv->lv[i], &u);
        }
    }
    /* the doubles the cache keeps, only from a complete table (after an allocation failure
     * the enclosures were never set: the entry keeps what it had) */
    for (size_t i = 0; table >= 0 && i < WOR_NI; i++) {
        w->lv_d[i] = ival_hi_d(&iv->lv[i]);
        w->fa_d[i] = ival_hi_d(&iv->fa[i]);
        w->l2_d[i] = ival_hi_d(&iv->l2[i]);
    }
    for (size_t i = 0; i < 7; i++)
        ival_clear(all[i]);
    for (size_t m = 0; m < WOR_NM; m++) {
        ival_clear(&ld[m]);
        ival_clear(&lu[m]);
    }
    for (size_t m = 0; m < WOR_EXACT_MAX_ALPHA + 2; m++)
        ival_clear(&lt[m]);
    free(ld);
    free(lu);
    free(lt);
    if (table < 0) {
        wor_ivals_free(iv);
        return -1;
    }
    w->iv = iv;
    return 0;
}

/* The entry for (sigma, the ctx's precision), with its enclosures when want_iv: the
 * ctx's, or a new one kept in the ctx (with no ctx, *own receives it and the caller
 * frees it). NULL: out of memory. */
static const struct wor_entry *wor_entry_get(dpzo_ctx *ctx, double sigma, int want_iv,
                                             struct wor_entry **own)
{
    *own = NULL;
    long base_prec = dpzo_ctx_precision(ctx);
    struct dpzo__wor_table *tb = ctx != NULL ? ctx->cache : NULL;
    if (ctx != NULL && tb == NULL) {
        tb = calloc(1, sizeof *tb);
        if (tb == NULL)
            return NULL;
        ctx->cache = tb;
        ctx->cache_free = wor_table_free;
    }
    struct wor_entry *w = tb != NULL ? wor_table_find(tb, sigma, base_prec) : NULL;
    if (w != NULL) {
        if (w->iv != NULL || !want_iv)
            return w;
        if (wor_compute(w)) /* evicted: formed again (the same values) */
            return NULL;
        wor_table_hold(tb, w);
        return w;
    }
    w = malloc(sizeof *w);
    if (w == NULL)
        return NULL;
    w->sigma = sigma;
    w->base_prec = base_prec;
    w->iv = NULL;
    if (wor_compute(w)) {
        free(w);
        return NULL;
    }
    if (tb == NULL) {
        *own = w;
        return w;
    }
    if (tb->n >= WOR_CACHE_MAX)
        wor_table_clear(tb);
    if (wor_table_insert(tb, w)) {
        wor_entry_free(w);
        return NULL;
    }
    wor_table_hold(tb, w);
    return w;
}

/* Encloses the WBK19 bound on log A at integer order n >= 2 (q < 1, sigma > 0), from the
 * per-sigma enclosures w. The sum 1 + sum_i q^i C(n,i) v_i is accumulated from the logs
 * of its terms as e^M (e^{-M} + T), M the largest log term so far, so no term overflows
 * however small sigma is (the terms reach e^{n(n-1)/(2 sigma^2)}); when no term exceeds
 * 1 (M = 0), log1p(T) keeps A close to 1 exact. An abandoned sum (over budget, or a term
 * without a finite bound) gives [-inf, +inf]. */
/* The tails' term ratios at term i of an order-n sum (sampling rate batch / size): log of
 * q (n - i)/(i + 1) (*log_ratio, the first branch's before its sqrt(R)) and of that times
 * e^{2 n c}, c = 1/(2 sigma^2) (returned, the second branch's rho). */
static double tail_log_ratios(unsigned long n, unsigned long i, uint64_t batch, uint64_t size,
                              double sigma, double *log_ratio)
{
    *log_ratio = log((double)(n - i)) - log((double)i + 1.0) + log((double)batch)
                 - log((double)size);
    return *log_ratio + (double)n / (sigma * sigma);
}

static void wor_log_a_int(const struct wor_ivals *w, mpfr_prec_t p, uint64_t batch,
                          uint64_t size, double sigma, unsigned long n, ival *out)
{
    ival lq, t, u, binom, term, one, tsum;
    ival *all[] = {&lq, &t, &u, &binom, &term, &one, &tsum};
    /* first-branch tail: the analytic first-branch terms F_j = q^j C(n,j) e^{fa_j}, which
     * bound every term j >= 3, have ratio F_{j+1}/F_j <= q (n-j)/(j+1) sqrt(R) */
    const double half_log_r = 0.5 * wor_log_d_ratio(0.5 / sigma / sigma, n);
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t i = 0; i < n_all; i++)
        ival_init(all[i], p);
    mpfr_t mx;
    mpfr_init2(mx, p);
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
    for (unsigned long i = 1; i <= n; i++) {
        mpfr_mul_ui(binom.lo, binom.lo, n - i + 1, MPFR_RNDD);
        mpfr_div_ui(binom.lo, binom.lo, i, MPFR_RNDD);
        mpfr_mul_ui(binom.hi, binom.hi, n - i + 1, MPFR_RNDU);
        mpfr_div_ui(binom.hi, binom.hi, i, MPFR_RNDU);
        if (i < 2)
            continue;
        /* log q^i C(n,i): the common part of the term and of both tail bounds */
        ival_set_ui(&t, i);
        ival_mul(&u, &t, &lq);
        ival_log(&t, &binom);
        ival_add(&u, &u, &t);
        ival_add(&term, &u, &w->lv[i]);
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
        /* Tails. Second branch: every v_j <= 2 e^{j(j-1)c}, and those terms have ratio
         * q (n-j)/(j+1) e^{2jc} <= rho = q (n-i)/(i+1) e^{2nc} for j >= i. First branch:
         * every v_j <= e^{fa_j} (j >= 3), ratio at most q (n-j)/(j+1) sqrt(R) (R from
         * wor_log_d_ratio). Once a ratio is <= 1/2 the terms after i sum to at most that
         * bound's term at i; when it is below the sum's resolution it is added as [0, it]
         * and the sum stops (at large sigma and alpha = 1e5, after about a thousand
         * terms for the second branch, a few dozen for the first). */
        if (i < n && i > 2) {
            double log_ratio, log_rho = tail_log_ratios(n, i, batch, size, sigma, &log_ratio);
            for (int b = 0; b < 2; b++) {
                if (!(b == 0 ? log_ratio + half_log_r < -0.7 : log_rho < -0.7))
                    continue; /* -0.7 < log(1/2), with room for the double roundings */
                mpfr_add(t.hi, u.hi, b == 0 ? w->fa[i].hi : w->l2[i].hi, MPFR_RNDU);
                mpfr_sub(t.hi, t.hi, mx, MPFR_RNDU);
                mpfr_add(t.lo, one.lo, tsum.lo, MPFR_RNDD);
                mpfr_log(t.lo, t.lo, MPFR_RNDD);
                mpfr_sub_ui(t.lo, t.lo, (unsigned long)p + 8, MPFR_RNDD); /* > bits ln 2 */
                if (mpfr_number_p(t.hi) && mpfr_cmp(t.hi, t.lo) < 0) {
                    mpfr_exp(t.hi, t.hi, MPFR_RNDU);
                    mpfr_add(tsum.hi, tsum.hi, t.hi, MPFR_RNDU);
                    goto sum;
                }
            }
        }
        if (i >= WOR_SUM_MAX_TERMS && i < n) { /* over budget: no bound from the sum */
            mpfr_set_inf(out->lo, -1);
            mpfr_set_inf(out->hi, 1);
            goto done;
        }
    }
sum:
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
}

/* The same sum in doubles, for ranking orders: the same terms, the same stopping rules
 * (tested against the enclosure), +inf where the certified sum is abandoned. p: the
 * certified sum's precision, for the same resolution test. */
static double wor_log_a_fast(const struct wor_entry *w, long p, uint64_t batch, uint64_t size,
                             double sigma, unsigned long n)
{
    const double half_log_r = 0.5 * wor_log_d_ratio(0.5 / sigma / sigma, n);
    const double lq = log((double)batch) - log((double)size);
    double mx = 0.0, one = 1.0, tsum = 0.0, lc = 0.0; /* lc = log C(n, i) */
    for (unsigned long i = 1; i <= n; i++) {
        lc += log((double)(n - i + 1) / (double)i);
        if (i < 2)
            continue;
        double u = (double)i * lq + lc, term = u + w->lv_d[i];
        if (!(term < INFINITY))
            return INFINITY;
        if (term > mx) {
            tsum *= exp(mx - term);
            mx = term;
            one = exp(-mx);
        }
        tsum += exp(term - mx);
        if (i < n && i > 2) {
            double log_ratio, log_rho = tail_log_ratios(n, i, batch, size, sigma, &log_ratio);
            for (int b = 0; b < 2; b++) {
                if (!(b == 0 ? log_ratio + half_log_r < -0.7 : log_rho < -0.7))
                    continue;
                double tail = u + (b == 0 ? w->fa_d[i] : w->l2_d[i]) - mx;
                if (tail < INFINITY && tail < log(one + tsum) - (double)(p + 8)) {
                    tsum += exp(tail);
                    goto sum;
                }
            }
        }
        if (i >= WOR_SUM_MAX_TERMS && i < n)
            return INFINITY;
    }
sum:
    return mx == 0.0 ? log1p(tsum) : mx + log(one + tsum);
}

/* Encloses log A at integer n: the smaller of the WBK19 sum and the unamplified bound
 * log A <= n(n-1)c, c = 1/(2 sigma^2): a replace-one neighbour changes at most one record
 * of the batch (couple the two draws by index), and e^{(n-1) D_n} is jointly convex, so
 * the sampled mechanism's A is at most the Gaussian's e^{n(n-1)c}. That bound alone
 * stands where the sum was abandoned. fast: the double estimate in *lo = *hi instead.
 * Returns -1: out of memory. */
static int wor_log_a_tight(dpzo_ctx *ctx, uint64_t batch, uint64_t size, double sigma,
                           unsigned long n, int fast, double *lo, double *hi)
{
    if (n <= 1) {
        *lo = *hi = 0.0;
        return 0;
    }
    struct wor_entry *own = NULL;
    const struct wor_entry *w = wor_entry_get(ctx, sigma, !fast, &own);
    if (w == NULL)
        return -1;
    const long ps = dpzo_ctx_precision(ctx) + 64;
    if (fast) {
        double s = wor_log_a_fast(w, ps, batch, size, sigma, n);
        double cb = (double)n * ((double)n - 1.0) * (0.5 / sigma / sigma);
        *lo = *hi = s < cb ? s : cb;
        wor_entry_free(own);
        return 0;
    }
    ival r, cb, one;
    ival_init(&r, (mpfr_prec_t)ps);
    ival_init(&cb, (mpfr_prec_t)ps);
    ival_init(&one, (mpfr_prec_t)ps);
    wor_log_a_int(w->iv, (mpfr_prec_t)ps, batch, size, sigma, n, &r);
    wor_c(&cb, sigma);
    ival_set_d(&one, (double)n * ((double)n - 1.0)); /* exact: n <= 2^26 */
    ival_mul(&cb, &cb, &one);
    if (mpfr_inf_p(r.hi) || mpfr_nan_p(r.hi)) /* abandoned, or no finite sum */
        ival_set(&r, &cb);
    else
        ival_min(&r, &r, &cb);
    /* both bounds are logs of numbers >= 1: a lower end below 0 is 0 */
    if (!(mpfr_sgn(r.lo) >= 0))
        mpfr_set_zero(r.lo, 1);
    *lo = ival_lo_d(&r);
    *hi = ival_hi_d(&r);
    ival_clear(&r);
    ival_clear(&cb);
    ival_clear(&one);
    wor_entry_free(own);
    if (!(*hi >= *lo)) { /* never expected: no enclosure is no bound */
        *lo = 0.0;
        *hi = INFINITY;
    }
    return 0;
}

/* The RDP bound at alpha from the log A bounds at floor and ceil (fast: the double
 * estimate in value = lower = upper). */
static dpzo_status wor_rdp(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                           double alpha, int fast, dpzo_bound *rdp)
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
    if (batch == n) {
        if (!fast)
            return dpzo_rdp_sampled_gaussian_certified(ctx, 1.0, sigma, alpha, rdp);
        double r;
        if ((st = dpzo_rdp_sampled_gaussian(ctx, 1.0, sigma, alpha, &r)))
            return st;
        *rdp = (dpzo_bound){r, r, r};
        return DPZO_OK;
    }
    unsigned long af = (unsigned long)floor(alpha), ac = (unsigned long)ceil(alpha);
    double lo_f, hi_f, lo_c = 0.0, hi_c = 0.0;
    if (wor_log_a_tight(ctx, batch, n, sigma, af, fast, &lo_f, &hi_f)
        || (ac != af && wor_log_a_tight(ctx, batch, n, sigma, ac, fast, &lo_c, &hi_c)))
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
    if (fast) {
        *rdp = (dpzo_bound){hi, hi, hi};
        return DPZO_OK;
    }
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

dpzo_status dpzo_rdp_wor_gaussian(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                                  double alpha, dpzo_bound *rdp)
{
    return wor_rdp(ctx, batch, n, sigma, alpha, 0, rdp);
}

dpzo_status dpzo__rdp_wor_fast(dpzo_ctx *ctx, uint64_t batch, uint64_t n, double sigma,
                               double alpha, double *rdp)
{
    dpzo_bound b = {0.0, 0.0, 0.0};
    dpzo_status st = wor_rdp(ctx, batch, n, sigma, alpha, 1, &b);
    if (st == DPZO_OK)
        *rdp = b.value;
    return st;
}
