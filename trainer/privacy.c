/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/privacy.c: the privacy object of a training run (dpzo/trainer.h).
 *
 * Open: read the profile (checksum, schema), re-prove its guarantee (dpzo_profile_verify),
 * check the run's plan against its accounting context, and tabulate the epsilon spent.
 *
 * The ledger table. eps(t), the epsilon of the first t steps, is computed at LEDGER_POINTS
 * step counts t_k = ceil(k T / K) (T the planned steps) with the RDP accountant of the
 * profile's noise (certified: dpzo_event_epsilon for the Gaussian, dpzo_lmo_epsilon for
 * LMO) and, for a Gaussian profile accounted by PLD or PRV, the smaller of that and the
 * certified PLD upper end (dpzo_pld_epsilon: otherwise a tight profile's ledger would show
 * the whole budget from its first steps), each capped by the profile's epsilon for all its
 * steps (the guarantee dpzo has just re-proven; spending is monotone in the number of
 * steps). dpzo_privacy_epsilon_after(t)
 * returns the entry of the smallest t_k >= t: an upper bound on what t steps spent, in O(1).
 * The entries are made nondecreasing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/convert.h"
#include "dpzo/event.h"
#include "dpzo/lmo.h"
#include "dpzo/pld.h"
#include "dpzo/trainer.h"
#include "internal.h"

#define LEDGER_POINTS 48
#define PLD_EVERY 3 /* the tight accountant at every third ledger point */

struct dpzo_privacy {
    dpzo_profile prof;
    dpzo_privacy_plan plan;
    double budget;
    double noise_scale;      /* what a unit draw is multiplied by: sigma C or C */
    dpzo_lmo_sampler *sampler;
    uint64_t t_k[LEDGER_POINTS];
    double eps_k[LEDGER_POINTS];
    size_t n_k;
};

static int close_rel(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* The plan against the profile's context; a message naming the mismatch. */
static dpzo_status check_plan(dpzo_ctx *ctx, const dpzo_profile *p, const dpzo_privacy_plan *pl)
{
    int lmo = p->kind == DPZO_NOISE_LMO;
    if (pl->queries < 1)
        return dpzo__fail(ctx, DPZO_EINVAL, "the run needs at least one query per step");
    if (!(pl->clip > 0.0 && isfinite(pl->clip)))
        return dpzo__fail(ctx, DPZO_EINVAL, "clip must be finite and > 0, got %g", pl->clip);
    if (!(pl->batch_size >= 1.0) || pl->n < 1 || pl->batch_size > (double)pl->n)
        return dpzo__fail(ctx, DPZO_EINVAL, "batch size %g must be in [1, n = %llu]",
                          pl->batch_size, (unsigned long long)pl->n);
    if (pl->vector && (lmo || pl->queries != 1))
        return dpzo__fail(ctx, DPZO_EINVAL, "a vector release (DP-SGD) needs a gaussian profile "
                                            "and one query per step");
    if (pl->adaptive && lmo)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "a step whose queries depend on each other's noisy answers (PAZO-S) "
                          "needs a gaussian profile (its accounting composes Gaussian "
                          "releases); this one is LMO");
    if (lmo && pl->queries > 1 && strcmp(p->clip, "l1") != 0)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "%u queries per step with LMO noise need a profile with clip \"l1\" "
                          "(the query vector is clipped in L1 norm); this one has clip \"%s\"",
                          pl->queries, p->clip);
    double q = pl->batch_size / (double)pl->n;
    if (pl->batching == DPZO_BATCH_POISSON) {
        if (strcmp(p->sampling, "wor") == 0)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "Poisson batches, but the profile accounts fixed batches without "
                              "replacement; write a profile with a Poisson sampling rate");
        /* a profile accounted at a larger rate (or without sampling) covers this one */
        if (q > p->sampling_rate * (1.0 + 1e-12))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "the run samples at rate %.10g (batch %g of %llu) but the profile "
                              "accounts rate %.10g", q, pl->batch_size,
                              (unsigned long long)pl->n, p->sampling_rate);
        if (!close_rel(p->sensitivity, pl->clip))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "the run clips to C = %g but the profile's sensitivity is %g",
                              pl->clip, p->sensitivity);
    } else {
        if (strcmp(p->sampling, "wor") != 0 || p->batch_size != (uint64_t)pl->batch_size ||
            p->dataset_size != pl->n || (double)(uint64_t)pl->batch_size != pl->batch_size)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "shuffled batches of %g out of %llu need a profile accounted "
                              "without replacement for exactly that batch and dataset size",
                              pl->batch_size, (unsigned long long)pl->n);
        if (!close_rel(p->sensitivity, 2.0 * pl->clip))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "with shuffled batches (replace-one adjacency) the profile's "
                              "sensitivity must be 2C = %g, got %g", 2.0 * pl->clip,
                              p->sensitivity);
    }
    if (pl->steps > p->steps)
        return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                          "the run plans %llu steps but the profile accounts for %llu "
                          "(epsilon %.6g at delta %g); %llu steps would exceed its budget",
                          (unsigned long long)pl->steps, (unsigned long long)p->steps,
                          p->epsilon, p->delta, (unsigned long long)pl->steps);
    return DPZO_OK;
}

/* The RDP accountant's proven epsilon of t steps of this run; with tight != NULL, for a
 * Gaussian profile accounted by PLD or PRV, also the certified PLD upper end (+inf when
 * not computed). */
static dpzo_status eps_of_steps(dpzo_ctx *ctx, const dpzo_privacy *pv, uint64_t t, double *eps,
                                double *tight)
{
    if (tight != NULL)
        *tight = INFINITY;
    const dpzo_profile *p = &pv->prof;
    if (p->kind == DPZO_NOISE_LMO) {
        dpzo_lmo_account_options o = dpzo_profile_lmo_options(p);
        o.steps = t;
        dpzo_lmo_account_result r;
        dpzo_status st;
        if ((st = dpzo_lmo_epsilon(ctx, &p->lmo, &o, &r)))
            return st;
        *eps = r.epsilon;
        return DPZO_OK;
    }
    dpzo_event *e = dpzo_event_gaussian(ctx, p->noise_multiplier);
    if (e && strcmp(p->sampling, "poisson") == 0)
        e = dpzo_event_poisson_sampled(ctx, p->sampling_rate, e);
    else if (e && strcmp(p->sampling, "wor") == 0)
        e = dpzo_event_wor_sampled(ctx, p->batch_size, p->dataset_size, e);
    if (e)
        e = dpzo_event_self_composed(ctx, e, t);
    if (e == NULL)
        return DPZO_ENOMEM;
    dpzo_dp_result r;
    dpzo_rdp_options ro = dpzo_rdp_options_default();
    dpzo_status st = dpzo_event_epsilon(ctx, e, p->delta, &ro, &r);
    if (st == DPZO_OK)
        *eps = r.epsilon;
    if (st == DPZO_OK && tight != NULL && strcmp(p->accountant, "rdp") != 0) {
        /* a tight profile's noise is below what RDP needs for its budget: RDP alone would
         * meet the cap at the first steps. The certified PLD upper end is also proven. */
        dpzo_pld_result pr;
        if (dpzo_pld_epsilon(ctx, e, p->delta, NULL, &pr) == DPZO_OK)
            *tight = pr.epsilon_upper;
    }
    dpzo_event_free(e);
    return st;
}

static dpzo_status build_ledger(dpzo_ctx *ctx, dpzo_privacy *pv)
{
    uint64_t T = pv->plan.steps;
    size_t K = T < LEDGER_POINTS ? (size_t)T : LEDGER_POINTS;
    double tight[LEDGER_POINTS];
    pv->n_k = 0;
    for (size_t k = 1; k <= K; k++) {
        uint64_t t = (uint64_t)ceil((double)k * (double)T / (double)K);
        if (t > T)
            t = T;
        if (pv->n_k > 0 && t == pv->t_k[pv->n_k - 1])
            continue;
        double e;
        /* the tight accountant at every PLD_EVERY-th point and the last (it costs ~0.2 s a
         * point); the points between take the next one's value below */
        int tight_here = k % PLD_EVERY == 0 || k == K;
        dpzo_status st = eps_of_steps(ctx, pv, t, &e, tight_here ? &tight[pv->n_k] : NULL);
        if (st)
            return st;
        if (!tight_here)
            tight[pv->n_k] = INFINITY;
        pv->t_k[pv->n_k] = t;
        pv->eps_k[pv->n_k] = fmin(e, pv->budget); /* the re-proven guarantee for all steps */
        pv->n_k++;
    }
    /* spending is monotone in t: eps(t_k) <= eps(t_j) for j >= k, so the smallest proven
     * bound at or after k bounds k; then the entries are made nondecreasing */
    double later = INFINITY, prev = 0.0;
    for (size_t k = pv->n_k; k-- > 0;) {
        later = fmin(later, tight[k]);
        pv->eps_k[k] = fmin(pv->eps_k[k], later);
    }
    for (size_t k = 0; k < pv->n_k; k++)
        prev = pv->eps_k[k] = fmax(pv->eps_k[k], prev);
    return DPZO_OK;
}

dpzo_status dpzo_privacy_open(dpzo_ctx *ctx, const char *profile_path,
                              const dpzo_privacy_plan *plan, dpzo_privacy **out)
{
    *out = NULL;
    if (plan == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "no run plan given");
    dpzo_privacy *pv = calloc(1, sizeof *pv);
    if (pv == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    pv->plan = *plan;
    dpzo_status st = dpzo_profile_read_file(ctx, profile_path, &pv->prof);
    if (st) {
        free(pv);
        return st;
    }
    dpzo_profile_check chk;
    if (strcmp(pv->prof.accountant, "paper") == 0)
        st = dpzo__fail(ctx, DPZO_EINVAL,
                        "profile %s is a paper-mode profile: its epsilon is the paper's claim, "
                        "not a guarantee; training with it is refused", profile_path);
    else if ((st = dpzo_profile_verify(ctx, &pv->prof, &chk)) == DPZO_OK && !chk.ok)
        st = dpzo__fail(ctx, DPZO_EINVAL, "profile %s does not verify: %s", profile_path,
                        chk.detail);
    if (st == DPZO_OK)
        st = check_plan(ctx, &pv->prof, plan);
    if (st == DPZO_OK) {
        pv->budget = pv->prof.epsilon;
        pv->noise_scale = pv->prof.kind == DPZO_NOISE_GAUSSIAN
                              ? pv->prof.noise_multiplier * pv->prof.sensitivity
                              : pv->prof.sensitivity;
        pv->sampler = pv->prof.kind == DPZO_NOISE_GAUSSIAN
                          ? dpzo_gaussian_sampler_secure(ctx)
                          : dpzo_lmo_sampler_secure(ctx, &pv->prof.lmo);
        if (pv->sampler == NULL)
            st = DPZO_EUNSUPPORTED;
    }
    if (st == DPZO_OK)
        st = build_ledger(ctx, pv);
    if (st) {
        dpzo_privacy_free(pv);
        return st;
    }
    *out = pv;
    return DPZO_OK;
}

void dpzo_privacy_free(dpzo_privacy *p)
{
    if (p == NULL)
        return;
    dpzo_lmo_sampler_free(p->sampler);
    dpzo_profile_free(&p->prof);
    free(p);
}

const dpzo_profile *dpzo_privacy_profile(const dpzo_privacy *p) { return &p->prof; }
double dpzo_privacy_budget(const dpzo_privacy *p) { return p->budget; }
double dpzo_privacy_delta(const dpzo_privacy *p) { return p->prof.delta; }

double dpzo_privacy_epsilon_after(const dpzo_privacy *p, uint64_t t)
{
    if (t == 0)
        return 0.0;
    if (p->n_k == 0 || t > p->t_k[p->n_k - 1])
        return INFINITY;
    size_t lo = 0, hi = p->n_k - 1; /* smallest k with t_k >= t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->t_k[mid] >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return p->eps_k[lo];
}

/* the factor that brings the norm to at most c */
static double clip_to(double c, double norm) { return norm > c ? c / norm : 1.0; }

/* the factor that brings the norm to at most C (L1 for LMO, L2 for Gaussian) */
static double clip_factor(const dpzo_privacy *p, double norm)
{
    return clip_to(p->plan.clip, norm);
}

double dpzo_privacy_clip_part(const dpzo_privacy *p, double *v, size_t n, double share)
{
    if (!(share > 0.0 && share <= 1.0) || p->prof.kind == DPZO_NOISE_LMO) {
        memset(v, 0, n * sizeof *v); /* a misuse contributes nothing rather than too much */
        return 0.0;
    }
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i] * v[i];
    if (!isfinite(s)) {
        memset(v, 0, n * sizeof *v);
        return 0.0;
    }
    double f = clip_to(p->plan.clip * sqrt(share), sqrt(s));
    if (f < 1.0) {
        f *= 1.0 - 1e-12;
        for (size_t i = 0; i < n; i++)
            v[i] *= f;
    }
    return f;
}

double dpzo_privacy_clip(const dpzo_privacy *p, double *v, size_t n)
{
    int l1 = p->prof.kind == DPZO_NOISE_LMO;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += l1 ? fabs(v[i]) : v[i] * v[i];
    if (!isfinite(s)) { /* NaN or overflow: the example contributes nothing */
        memset(v, 0, n * sizeof *v);
        return 0.0;
    }
    double f = clip_factor(p, l1 ? s : sqrt(s));
    if (f < 1.0) {
        f *= 1.0 - 1e-12; /* the rounded products' norm stays at most C */
        for (size_t i = 0; i < n; i++)
            v[i] *= f;
    }
    return f;
}

double dpzo_privacy_clip_float(const dpzo_privacy *p, float *v, size_t n)
{
    int l1 = p->prof.kind == DPZO_NOISE_LMO;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += l1 ? fabs((double)v[i]) : (double)v[i] * (double)v[i];
    if (!isfinite(s)) { /* NaN or overflow: the example contributes nothing */
        memset(v, 0, n * sizeof *v);
        return 0.0;
    }
    /* float rounding of the scaled values may leave the norm a hair above C: scale to
     * C (1 - 1e-6) so that the clipped vector's norm is at most C */
    double f = clip_factor(p, l1 ? s : sqrt(s));
    if (f < 1.0) {
        f *= 1.0 - 1e-6;
        for (size_t i = 0; i < n; i++)
            v[i] = (float)((double)v[i] * f);
    }
    return f;
}

dpzo_status dpzo_privacy_noise(dpzo_ctx *ctx, dpzo_privacy *p, double *out, size_t n)
{
    dpzo_status st = dpzo_lmo_sample(ctx, p->sampler, out, n);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++)
        out[i] *= p->noise_scale;
    return DPZO_OK;
}
