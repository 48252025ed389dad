/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit_attack.c: epsilon lower bounds from attack results (dpzo/audit.h).
 *
 * Membership inference. For any test that says "member" or "non-member", an
 * (eps, delta)-DP mechanism satisfies FPR + e^eps FNR >= 1 - delta and
 * FNR + e^eps FPR >= 1 - delta (Kairouz, Oh, Viswanath 2015, the hypothesis-testing view
 * of DP). Observed rates are replaced by one-sided Clopper-Pearson upper bounds (exact
 * binomial intervals from beta quantiles), each at level 1 - (1 - c)/2, so that both hold
 * together with probability at least c; a sweep over K thresholds divides 1 - c by K
 * (Bonferroni).
 *
 * One run (Steinke, Nasr, Jagielski 2023). m canaries each included with probability 1/2;
 * r guesses, v right. Under (eps, delta)-DP the number of right guesses is stochastically
 * dominated as in their main theorem, which gives the p-value
 *   P[B >= v] + 2 m delta max_{1<=i<=v} P[v - i <= B < v] / i,  B ~ Bin(r, e^eps/(1+e^eps)).
 * It increases with eps; the bound is the largest eps whose p-value stays below 1 - c.
 *
 * Every returned bound errs low: beta quantiles are widened outward by a relative 1e-9,
 * the p-value is inflated by a relative 1e-9 before the comparison, and the bisection
 * returns its lower end. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/audit.h"
#include "internal.h"

#define QUANTILE_SLACK 1e-9

static dpzo_status check_level(dpzo_ctx *ctx, const char *what, double level)
{
    if (!(level > 0.0 && level < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "%s must be in (0, 1), got %g", what, level);
    return DPZO_OK;
}

/* The beta quantile x with I_x(a, b) = level. GSL's inverse is polished by bisection on
 * GSL's own CDF when its answer misses (it does so for some extreme arguments). */
static double beta_quantile(double level, double a, double b)
{
    dpzo__gsl_quiet();
    double x = gsl_cdf_beta_Pinv(level, a, b);
    if (isfinite(x) && x >= 0.0 && x <= 1.0) {
        double p = gsl_cdf_beta_P(x, a, b);
        if (fabs(p - level) <= 1e-12 * fmax(level, 1e-300) + 1e-300)
            return x;
    }
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 200 && hi - lo > 1e-17 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (gsl_cdf_beta_P(mid, a, b) < level)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The arguments of both Clopper-Pearson ends. */
static dpzo_status check_cp(dpzo_ctx *ctx, uint64_t k, uint64_t n, double level)
{
    dpzo_status st;
    if ((st = check_level(ctx, "level", level)))
        return st;
    if (n < 1 || k > n)
        return dpzo__fail(ctx, DPZO_EINVAL, "Clopper-Pearson needs 0 <= k <= n, n >= 1 (k %llu, "
                          "n %llu)", (unsigned long long)k, (unsigned long long)n);
    return DPZO_OK;
}

dpzo_status dpzo_clopper_pearson_upper(dpzo_ctx *ctx, uint64_t k, uint64_t n, double level,
                                       double *upper)
{
    dpzo_status st;
    if ((st = check_cp(ctx, k, n, level)))
        return st;
    if (k == n) {
        *upper = 1.0;
        return DPZO_OK;
    }
    double u = beta_quantile(level, (double)k + 1.0, (double)(n - k));
    *upper = fmin(1.0, u * (1.0 + QUANTILE_SLACK));
    return DPZO_OK;
}

dpzo_status dpzo_clopper_pearson_lower(dpzo_ctx *ctx, uint64_t k, uint64_t n, double level,
                                       double *lower)
{
    dpzo_status st;
    if ((st = check_cp(ctx, k, n, level)))
        return st;
    if (k == 0) {
        *lower = 0.0;
        return DPZO_OK;
    }
    double l = beta_quantile(1.0 - level, (double)k, (double)(n - k) + 1.0);
    *lower = fmax(0.0, l * (1.0 - QUANTILE_SLACK));
    return DPZO_OK;
}

/* ---- Membership inference -------------------------------------------------------- */

static dpzo_status check_common(dpzo_ctx *ctx, double delta, double confidence)
{
    if (!(delta >= 0.0 && delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in [0, 1), got %g", delta);
    return check_level(ctx, "confidence", confidence);
}

/* The bound at one set of counts, each rate bounded at one-sided `level`. */
static dpzo_status counts_bound(dpzo_ctx *ctx, const dpzo_attack_counts *c, double delta,
                                double level, dpzo_attack_bound *out)
{
    dpzo_status st;
    uint64_t neg = c->fp + c->tn, pos = c->tp + c->fn;
    double fpr_hi, fnr_hi;
    if ((st = dpzo_clopper_pearson_upper(ctx, c->fp, neg, level, &fpr_hi))
        || (st = dpzo_clopper_pearson_upper(ctx, c->fn, pos, level, &fnr_hi)))
        return st;
    double eps = 0.0;
    if (1.0 - delta - fpr_hi > 0.0 && fnr_hi > 0.0)
        eps = fmax(eps, log((1.0 - delta - fpr_hi) / fnr_hi));
    if (1.0 - delta - fnr_hi > 0.0 && fpr_hi > 0.0)
        eps = fmax(eps, log((1.0 - delta - fnr_hi) / fpr_hi));
    out->epsilon = dpzo__down(eps);
    out->fpr = (double)c->fp / (double)neg;
    out->fnr = (double)c->fn / (double)pos;
    out->fpr_upper = fpr_hi;
    out->fnr_upper = fnr_hi;
    out->counts = *c;
    return DPZO_OK;
}

dpzo_status dpzo_attack_epsilon_counts(dpzo_ctx *ctx, const dpzo_attack_counts *c,
                                       double delta, double confidence, dpzo_attack_bound *out)
{
    dpzo_status st;
    if ((st = check_common(ctx, delta, confidence)))
        return st;
    if (c->tp + c->fn == 0 || c->fp + c->tn == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "the attack needs at least one member (tp + fn) and "
                          "one non-member (fp + tn)");
    memset(out, 0, sizeof *out);
    out->confidence = confidence;
    out->delta = delta;
    out->threshold = NAN;
    out->thresholds = 1;
    return counts_bound(ctx, c, delta, 1.0 - (1.0 - confidence) / 2.0, out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static dpzo_status sorted_copy(dpzo_ctx *ctx, const double *v, size_t n, double **out)
{
    *out = malloc((n ? n : 1) * sizeof **out);
    if (*out == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory sorting %zu scores", n);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            free(*out);
            *out = NULL;
            return dpzo__fail(ctx, DPZO_EINVAL, "score %zu is not a finite number", i);
        }
        (*out)[i] = v[i];
    }
    qsort(*out, n, sizeof **out, cmp_double);
    return DPZO_OK;
}

dpzo_status dpzo_attack_epsilon_scores(dpzo_ctx *ctx, const double *in, size_t n_in,
                                       const double *out_scores, size_t n_out, double threshold,
                                       double delta, double confidence, dpzo_attack_bound *out)
{
    dpzo_status st;
    if ((st = check_common(ctx, delta, confidence)))
        return st;
    if (n_in == 0 || n_out == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "the attack needs scores of members and of "
                          "non-members (got %zu and %zu)", n_in, n_out);
    if (isinf(threshold))
        return dpzo__fail(ctx, DPZO_EINVAL, "the threshold must be finite (or NaN: sweep)");
    double *a = NULL, *b = NULL;
    if ((st = sorted_copy(ctx, in, n_in, &a)) || (st = sorted_copy(ctx, out_scores, n_out, &b))) {
        free(a);
        return st;
    }
    memset(out, 0, sizeof *out);
    out->confidence = confidence;
    out->delta = delta;
    /* candidate thresholds: the distinct scores, ascending (merge of a and b) */
    size_t cap = n_in + n_out, k = 0;
    double *t = malloc(cap * sizeof *t);
    if (t == NULL) {
        free(a);
        free(b);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    if (!isnan(threshold)) {
        t[k++] = threshold;
    } else {
        size_t i = 0, j = 0;
        while (i < n_in || j < n_out) {
            double x = j == n_out || (i < n_in && a[i] <= b[j]) ? a[i++] : b[j++];
            if (k == 0 || x != t[k - 1])
                t[k++] = x;
        }
    }
    double level = 1.0 - (1.0 - confidence) / (2.0 * (double)k);
    out->thresholds = k;
    out->epsilon = -1.0;
    size_t ia = 0, ib = 0; /* counts of scores below the current threshold */
    for (size_t i = 0; i < k && !st; i++) {
        while (ia < n_in && a[ia] < t[i])
            ia++;
        while (ib < n_out && b[ib] < t[i])
            ib++;
        dpzo_attack_counts c = {n_in - ia, n_out - ib, ib, ia};
        dpzo_attack_bound r = *out;
        if ((st = counts_bound(ctx, &c, delta, level, &r)))
            break;
        if (r.epsilon > out->epsilon) {
            *out = r;
            out->threshold = t[i];
        }
    }
    free(a);
    free(b);
    free(t);
    return st;
}

/* ---- One run ------------------------------------------------------------------------ */

static dpzo_status check_one_run(dpzo_ctx *ctx, uint64_t m, uint64_t r, uint64_t v, double delta)
{
    if (!(v <= r && r <= m))
        return dpzo__fail(ctx, DPZO_EINVAL, "one-run audit needs correct <= guesses <= canaries "
                          "(got %llu, %llu, %llu)", (unsigned long long)v,
                          (unsigned long long)r, (unsigned long long)m);
    if ((double)m > 9007199254740992.0)
        return dpzo__fail(ctx, DPZO_EINVAL, "at most 2^53 canaries");
    if (!(delta >= 0.0 && delta <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in [0, 1], got %g", delta);
    return DPZO_OK;
}

/* The p-value, uncapped. */
static double one_run_p(uint64_t m, uint64_t r, uint64_t v, double eps, double delta)
{
    double p = 1.0 / (1.0 + exp(-eps)); /* accuracy of eps-DP randomized response */
    double tail = v == 0 ? 1.0 : gsl_cdf_binomial_Q((unsigned)(v - 1), p, (unsigned)r);
    if (delta == 0.0 || v == 0)
        return tail;
    /* max_i S_i / i with S_i = P[v - i <= B < v]; the pmf runs downward from v - 1 by the
     * ratio pmf(j - 1) / pmf(j) = j (1 - p) / ((r - j + 1) p). Once j is below the mode
     * the terms only shrink, and no later term smaller than the current maximum can
     * raise it (S_{i+1}/(i+1) > a needs a term above a). */
    double logp = log(p), log1mp = log1p(-p);
    double j = (double)v - 1.0, R = (double)r;
    double lpmf = gsl_sf_lnchoose((unsigned)r, (unsigned)(v - 1)) + j * logp + (R - j) * log1mp;
    double mode = floor((R + 1.0) * p), sum = 0.0, best = 0.0;
    for (uint64_t i = 1; i <= v; i++) {
        double pmf = exp(lpmf);
        sum += pmf;
        if (sum / (double)i > best)
            best = sum / (double)i;
        else if (j <= mode && pmf < best)
            break;
        if (j > 0.0)
            lpmf += log(j) + log1mp - log(R - j + 1.0) - logp;
        j -= 1.0;
    }
    return tail + best * delta * 2.0 * (double)m;
}

dpzo_status dpzo_one_run_p_value(dpzo_ctx *ctx, uint64_t m, uint64_t r, uint64_t v,
                                 double epsilon, double delta, double *p)
{
    dpzo_status st;
    if ((st = check_one_run(ctx, m, r, v, delta)))
        return st;
    if (!(epsilon >= 0.0) || !isfinite(epsilon))
        return dpzo__fail(ctx, DPZO_EINVAL, "epsilon must be finite and >= 0, got %g", epsilon);
    if (r > 4294967295u)
        return dpzo__fail(ctx, DPZO_EINVAL, "at most 2^32 - 1 guesses");
    dpzo__gsl_quiet();
    *p = fmin(1.0, one_run_p(m, r, v, epsilon, delta));
    return DPZO_OK;
}

dpzo_status dpzo_one_run_epsilon(dpzo_ctx *ctx, uint64_t m, uint64_t r, uint64_t v, double delta,
                                 double confidence, double *epsilon)
{
    dpzo_status st;
    if ((st = check_one_run(ctx, m, r, v, delta)) ||
        (st = check_level(ctx, "confidence", confidence)))
        return st;
    if (r > 4294967295u)
        return dpzo__fail(ctx, DPZO_EINVAL, "at most 2^32 - 1 guesses");
    dpzo__gsl_quiet();
    double beta = 1.0 - confidence;
#define BELOW(e) (one_run_p(m, r, v, (e), delta) * (1.0 + 1e-9) < beta)
    if (!BELOW(0.0)) {
        *epsilon = 0.0;
        return DPZO_OK;
    }
    double lo = 0.0, hi = 1.0;
    while (BELOW(hi)) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e4) { /* only when every guess is right and the p-value never reaches beta */
            *epsilon = lo;
            return DPZO_OK;
        }
    }
    while (hi - lo > 1e-10 * fmax(1.0, hi)) {
        double mid = 0.5 * (lo + hi);
        if (BELOW(mid))
            lo = mid;
        else
            hi = mid;
    }
#undef BELOW
    *epsilon = lo;
    return DPZO_OK;
}

typedef struct {
    double score;
    int member;
} scored;

/* Descending score; among equal scores non-members first, so ties at either cut count
 * against the auditor. */
static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->member - y->member;
}

dpzo_status dpzo_one_run_from_scores(dpzo_ctx *ctx, const double *in, size_t n_in,
                                     const double *out_scores, size_t n_out, uint64_t k_pos,
                                     uint64_t k_neg, uint64_t *m, uint64_t *r, uint64_t *v)
{
    size_t n = n_in + n_out;
    if (n == 0 || k_pos + k_neg > n || k_pos + k_neg == 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "need 0 < positive + negative guesses <= canaries "
                          "(%llu + %llu, %zu canaries)", (unsigned long long)k_pos,
                          (unsigned long long)k_neg, n);
    scored *s = malloc(n * sizeof *s);
    if (s == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        s[i].score = i < n_in ? in[i] : out_scores[i - n_in];
        s[i].member = i < n_in;
        if (!isfinite(s[i].score)) {
            free(s);
            return dpzo__fail(ctx, DPZO_EINVAL, "score %zu is not a finite number", i);
        }
    }
    qsort(s, n, sizeof *s, cmp_scored);
    uint64_t right = 0;
    for (size_t i = 0; i < k_pos; i++)
        right += s[i].member;
    for (size_t i = n - k_neg; i < n; i++)
        right += !s[i].member;
    free(s);
    *m = n;
    *r = k_pos + k_neg;
    *v = right;
    return DPZO_OK;
}
