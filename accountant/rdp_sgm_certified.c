/* accountant/rdp_sgm_certified.c: RDP of the Poisson-sampled Gaussian, certified path.
 *
 * The same sums as rdp_sgm.c (Mironov-Talwar-Zhang 2019), evaluated in MPFR interval
 * arithmetic (ival.h): every operation is rounded outward, so the computed interval
 * contains the exact partial sum. For fractional orders the alternating tail is
 * summed by Euler's transform, whose terms provably lie in [0, b_k0] and whose
 * remainder provably lies in [0, b_k0 2^-(J+1)] (proof in rdp_sgm.c); both facts are
 * used as interval bounds. The result encloses the exact RDP: `upper` is a proven
 * upper bound.
 *
 * Terms are accumulated as exp(log_term - M) with M the fast path's log A, so the
 * scaled sum is near 1 and MPFR's exponent range is never approached. The working
 * precision grows with -log2(log A) so that A close to 1 loses nothing. */
#include <math.h>
#include "internal.h"
#include "ival.h"
#include "rdp_sgm.h"

#define CERT_EULER_TERMS 200

typedef struct {
    ival q, lq, l1q, c, z0, s2, alpha, log2v, shift;
    double scale; /* log of min(A, A log A), from the fast estimate of log A */
    ival log_binom, t, u, v, sum;
} sgm_work;

static void work_init(sgm_work *w, mpfr_prec_t p, double q, double sigma, double alpha,
                      double shift)
{
    ival *all[] = {&w->q, &w->lq, &w->l1q, &w->c, &w->z0, &w->s2, &w->alpha, &w->log2v,
                   &w->shift, &w->log_binom, &w->t, &w->u, &w->v, &w->sum};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ival_init(all[i], p);
    ival_set_d(&w->q, q);
    ival_log(&w->lq, &w->q);
    ival_neg(&w->t, &w->q);
    ival_log1p(&w->l1q, &w->t);
    ival_set_d(&w->t, sigma);
    ival_mul(&w->u, &w->t, &w->t);     /* sigma^2 */
    ival_sub(&w->v, &w->l1q, &w->lq);  /* log((1-q)/q) */
    ival_mul(&w->z0, &w->u, &w->v);
    ival_set_d(&w->v, 0.5);
    ival_add(&w->z0, &w->z0, &w->v);   /* z0 = sigma^2 log(1/q - 1) + 1/2 */
    ival_add(&w->u, &w->u, &w->u);     /* 2 sigma^2 */
    ival_set_ui(&w->v, 1);
    ival_div(&w->c, &w->v, &w->u);     /* 1/(2 sigma^2) */
    ival_set_ui(&w->v, 2);
    ival_sqrt(&w->s2, &w->v);
    ival_log(&w->log2v, &w->v);
    ival_mul(&w->s2, &w->s2, &w->t);   /* sqrt(2) sigma */
    ival_set_d(&w->alpha, alpha);
    ival_set_d(&w->shift, shift);
    w->scale = shift + (shift > 0.0 && shift < 1.0 ? log(shift) : 0.0);
    ival_set_ui(&w->log_binom, 0);
    ival_set_ui(&w->sum, 0);
}

static void work_clear(sgm_work *w)
{
    ival *all[] = {&w->q, &w->lq, &w->l1q, &w->c, &w->z0, &w->s2, &w->alpha, &w->log2v,
                   &w->shift, &w->log_binom, &w->t, &w->u, &w->v, &w->sum};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ival_clear(all[i]);
}

/* out = exp(log_binom + a*lq + b*l1q + (b'^2 - b') c - shift) where the Gaussian
 * exponent's variable is e (k for T0/int, j for T1), a, b are q's and 1-q's powers.
 * Uses w->t, w->u, w->v as scratch. */
static void log_core(sgm_work *w, ival *out, const ival *a, const ival *b, const ival *e)
{
    ival_mul(&w->t, a, &w->lq);
    ival_add(out, &w->log_binom, &w->t);
    ival_mul(&w->t, b, &w->l1q);
    ival_add(out, out, &w->t);
    ival_mul(&w->t, e, e);
    ival_sub(&w->t, &w->t, e);
    ival_mul(&w->t, &w->t, &w->c);
    ival_add(out, out, &w->t);
}

/* sum += sign * exp(lt - shift); if `hull`, adds the hull of that with 0 instead. */
static void accumulate(sgm_work *w, const ival *lt, int sign, int hull)
{
    ival_sub(&w->v, lt, &w->shift);
    ival_exp(&w->v, &w->v);
    if (sign < 0)
        ival_neg(&w->v, &w->v);
    if (hull)
        ival_hull_zero(&w->v, &w->v);
    ival_add(&w->sum, &w->sum, &w->v);
}

/* log_binom += log|alpha - k| - log(k + 1); returns the sign change (-1 or 1). */
static int advance_binom(sgm_work *w, uint64_t k, ival *kk)
{
    ival_set_ui(kk, (unsigned long)k);
    ival_sub(&w->t, &w->alpha, kk);
    int flip = mpfr_sgn(w->t.hi) < 0 ? -1 : 1;
    if (flip < 0)
        ival_neg(&w->t, &w->t);
    ival_log(&w->t, &w->t);
    ival_add(&w->log_binom, &w->log_binom, &w->t);
    ival_set_ui(kk, (unsigned long)(k + 1));
    ival_log(&w->t, kk);
    ival_sub(&w->log_binom, &w->log_binom, &w->t);
    return flip;
}

/* Encloses log A_alpha at integer alpha (0 < q < 1, sigma > 0). */
static void certified_log_a(mpfr_prec_t prec, double q, double sigma, double alpha,
                            double shift, ival *log_a)
{
    sgm_work w;
    work_init(&w, prec, q, sigma, alpha, shift);
    ival lt0, lt1, kk, jj, x;
    ival_init(&lt0, prec);
    ival_init(&lt1, prec);
    ival_init(&kk, prec);
    ival_init(&jj, prec);
    ival_init(&x, prec);
    {
        uint64_t n = (uint64_t)alpha;
        for (uint64_t k = 0; k <= n; k++) {
            ival_set_ui(&kk, (unsigned long)k);
            ival_sub(&jj, &w.alpha, &kk);
            log_core(&w, &lt0, &kk, &jj, &kk);
            accumulate(&w, &lt0, 1, 0);
            if (k < n)
                advance_binom(&w, k, &kk);
        }
    }
    ival_log(log_a, &w.sum);
    ival_add(log_a, log_a, &w.shift);
    ival_clear(&lt0);
    ival_clear(&lt1);
    ival_clear(&kk);
    ival_clear(&jj);
    ival_clear(&x);
    work_clear(&w);
}

dpzo_status dpzo_rdp_sampled_gaussian_certified(dpzo_ctx *ctx, double q, double sigma,
                                                double alpha, dpzo_bound *rdp)
{
    double fast;
    dpzo_status st = dpzo_rdp_sampled_gaussian(ctx, q, sigma, alpha, &fast);
    if (st)
        return st;
    if (q == 0.0 || sigma == 0.0) { /* exact: 0 and +inf */
        *rdp = (dpzo_bound){fast, fast, fast};
        return DPZO_OK;
    }
    long prec = dpzo_ctx_precision(ctx);
    /* log A, to size the precision and the Euler tail; when the fast path lost it to
     * rounding (log A below 1e-16), the leading small-q term C(alpha,2) q^2 (e^{1/s^2} - 1)
     * gives its magnitude */
    double log_a_est = fast * (alpha - 1.0);
    /* log of log A: from the fast value, or, when that is lost to rounding (log A below
     * 1e-12), from the leading small-q term C(alpha,2) q^2 (e^{1/s^2} - 1) formed in logs
     * (q^2 underflows for q < 1e-154) */
    double inv_s2 = 1.0 / (sigma * sigma);
    double log_lead = log(0.5 * alpha * (alpha - 1.0)) + 2.0 * log(q)
                      + (inv_s2 > 700.0 ? inv_s2 : log(expm1(inv_s2)));
    double log_log_a = log_a_est > 1e-12 ? log(log_a_est) : log_lead - 2.0 * M_LN2;
    if (log_a_est <= 1e-12 && isfinite(log_log_a))
        log_a_est = exp(log_log_a);
    if (log_log_a < 0.0 && isfinite(log_log_a))
        prec += (long)ceil(-log_log_a / M_LN2);
    if (prec > 32768)
        prec = 32768; /* beyond this the enclosure stays valid, only looser */
    prec += 32;
    ival r, a1;
    ival_init(&r, prec);
    ival_init(&a1, prec);
    if (q == 1.0) {
        ival_set_d(&r, sigma);
        ival_mul(&r, &r, &r);
        ival_add(&r, &r, &r);
        ival_set_d(&a1, alpha);
        ival_div(&r, &a1, &r);
    } else {
        if (dpzo__is_integer(alpha))
            certified_log_a((mpfr_prec_t)prec, q, sigma, alpha, log_a_est, &r);
        else
            dpzo__sgm_certified_log_a_frac((mpfr_prec_t)prec, q, sigma, alpha, log_a_est,
                                           log_log_a, &r);
        ival_set_d(&a1, alpha - 1.0); /* exact: alpha > 1 and both are doubles near */
        mpfr_set_d(a1.lo, alpha, MPFR_RNDD);
        mpfr_sub_ui(a1.lo, a1.lo, 1, MPFR_RNDD);
        mpfr_set_d(a1.hi, alpha, MPFR_RNDU);
        mpfr_sub_ui(a1.hi, a1.hi, 1, MPFR_RNDU);
        ival_div(&r, &r, &a1);
    }
    double lo = ival_lo_d(&r), hi = ival_hi_d(&r);
    ival_clear(&r);
    ival_clear(&a1);
    if (lo < 0.0)
        lo = 0.0; /* Renyi divergences are >= 0 */
    if (!(hi >= lo))
        return dpzo__fail(ctx, DPZO_ENOCONV,
                          "certified RDP failed for q=%g, sigma=%g, alpha=%g", q, sigma, alpha);
    double v = fast < lo ? lo : fast > hi ? hi : fast;
    *rdp = (dpzo_bound){v, lo, hi};
    return DPZO_OK;
}
