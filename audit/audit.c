/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit.c: checking a published (epsilon, delta) claim (dpzo/audit.h).
 *
 * The true epsilon of the claimed mechanism is bracketed:
 *  - upper: the smallest proven upper bound of the RDP (certified), PLD and PRV
 *    accountants on an event that dominates the mechanism;
 *  - lower: the tight accountants' proven lower ends on an event that the mechanism
 *    actually realises for some pair of adjacent datasets (so the true epsilon, a
 *    supremum over all pairs, is at least as large).
 * The two events coincide for Poisson sampling and full batches. They differ for
 *  - fixed batches (B of n without replacement, replace-one): the upper event is the
 *    Wang-Balle-Kasiviswanathan / Balle-Barthe-Gaboardi dominating pair; the pair realised
 *    by swapping an example that contributes nothing for one that contributes a full
 *    clipped C, all other contributions zero, is exactly the Poisson pair at q = B/n with
 *    shift C, in both directions (replace-one is symmetric);
 *  - shuffled batches (per-epoch permutation cut into batches of B): every example is in at
 *    most one step per epoch, so conditionally on the permutation an epoch is one Gaussian
 *    release and the others cost nothing; mixing over the hidden permutation can only help
 *    (joint convexity of every hockey-stick divergence), so the run is dominated by
 *    ceil(T/k) Gaussian releases, k = floor(n/B). No amplification is proven for shuffling
 *    beyond this. For the lower end the adversary adds up the k full batches of each
 *    complete epoch: a post-processing that sees C + N(0, k sigma^2 C^2) when the example
 *    is in a full batch (probability kB/n) and N(0, k sigma^2 C^2) otherwise, i.e. the
 *    Poisson pair at q = kB/n with noise multiplier sigma sqrt(k), over
 *    floor(T / ceil(n/B)) complete epochs.
 * While the verdict is UNDETERMINED the PLD grid is refined (10x, down to pld_grid_min,
 * within the memory limit). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpzo/audit.h"
#include "internal.h"
#include "audit_internal.h"
#include "pld_internal.h"

void dpzo_claim_init(dpzo_claim *c)
{
    memset(c, 0, sizeof *c);
    c->sampling = DPZO_SAMPLING_POISSON;
    c->adjacency = DPZO_ADJACENCY_DEFAULT;
    c->pipeline = DPZO_SAMPLING_UNSTATED;
    c->accountant = dpzo_rdp_options_default();
}

void dpzo_audit_options_default(dpzo_audit_options *o)
{
    o->pld_grid = 1e-4;
    o->pld_grid_min = 1e-6;
    o->memory_limit = (size_t)1 << 30;
    o->prv = 1;
    o->calibrate = 1;
}

const char *dpzo_sampling_name(dpzo_sampling_scheme s)
{
    switch (s) {
    case DPZO_SAMPLING_POISSON: return "poisson";
    case DPZO_SAMPLING_FIXED: return "fixed";
    case DPZO_SAMPLING_SHUFFLED: return "shuffled";
    case DPZO_SAMPLING_FULL: return "full";
    default: return "unstated";
    }
}

const char *dpzo_adjacency_name(dpzo_adjacency a)
{
    switch (a) {
    case DPZO_ADJACENCY_ADD_REMOVE: return "add-remove";
    case DPZO_ADJACENCY_REPLACE_ONE: return "replace-one";
    case DPZO_ADJACENCY_ZERO_OUT: return "zero-out";
    default: return "default";
    }
}

const char *dpzo_verdict_name(dpzo_verdict v)
{
    return v == DPZO_VERDICT_HOLDS ? "HOLDS" : v == DPZO_VERDICT_VIOLATED ? "VIOLATED"
                                                                          : "UNDETERMINED";
}

const char *dpzo_audit_flag_name(unsigned flag)
{
    switch (flag) {
    case DPZO_AUDIT_POISSON_FOR_FIXED: return "poisson-for-fixed";
    case DPZO_AUDIT_ORDERS_TOO_SHORT: return "orders-too-short";
    case DPZO_AUDIT_DELTA_LARGE: return "delta-large";
    case DPZO_AUDIT_EFFECTIVE_BATCH: return "effective-batch";
    case DPZO_AUDIT_ADJACENCY: return "adjacency";
    case DPZO_AUDIT_STATED_ACCOUNTANT: return "stated-accountant";
    case DPZO_AUDIT_NO_LOWER: return "no-lower";
    case DPZO_AUDIT_INCONSISTENT: return "inconsistent";
    }
    return NULL;
}

dpzo_verdict dpzo_verdict_of(double lower, double upper, double epsilon)
{
    if (!(lower <= upper)) /* contradictory (or NaN) bounds certify nothing */
        return DPZO_VERDICT_UNDETERMINED;
    if (upper <= epsilon)
        return DPZO_VERDICT_HOLDS;
    if (lower > epsilon)
        return DPZO_VERDICT_VIOLATED;
    return DPZO_VERDICT_UNDETERMINED;
}

static int fixed_size(dpzo_sampling_scheme s)
{
    return s == DPZO_SAMPLING_FIXED || s == DPZO_SAMPLING_SHUFFLED;
}

/* The adjacency accounted for `scheme`: fixed-size batches cannot be compared under
 * add-remove (the batch of B from n is not defined for n + 1), so add-remove becomes
 * zero-out there, which keeps the sensitivity C the noise was calibrated to. */
static dpzo_adjacency adjacency_for(const dpzo_claim *c, dpzo_sampling_scheme scheme)
{
    dpzo_adjacency a = c->adjacency;
    if (a == DPZO_ADJACENCY_DEFAULT)
        a = fixed_size(scheme) ? DPZO_ADJACENCY_REPLACE_ONE : DPZO_ADJACENCY_ADD_REMOVE;
    if (fixed_size(scheme) && a == DPZO_ADJACENCY_ADD_REMOVE)
        a = DPZO_ADJACENCY_ZERO_OUT;
    return a;
}

static double sensitivity_for(const dpzo_claim *c, dpzo_sampling_scheme scheme)
{
    if (c->sensitivity > 0.0)
        return c->sensitivity;
    return adjacency_for(c, scheme) == DPZO_ADJACENCY_REPLACE_ONE ? 2.0 : 1.0;
}

dpzo_adjacency dpzo_claim_adjacency(const dpzo_claim *c) { return adjacency_for(c, c->sampling); }
double dpzo_claim_sensitivity(const dpzo_claim *c) { return sensitivity_for(c, c->sampling); }

/* The shift one example can realise against an example that contributes nothing: a whole
 * clipped contribution, which is half the replace-one sensitivity. */
static double null_shift(const dpzo_claim *c, dpzo_sampling_scheme scheme)
{
    double s = sensitivity_for(c, scheme);
    return adjacency_for(c, scheme) == DPZO_ADJACENCY_REPLACE_ONE ? s / 2.0 : s;
}

#define MAX_COUNT 9007199254740992.0 /* 2^53 */

dpzo_status dpzo_claim_validate(dpzo_ctx *ctx, const dpzo_claim *c)
{
    if (c == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "claim is NULL");
    if (!(c->noise_multiplier >= 0.0) || !isfinite(c->noise_multiplier))
        return dpzo__fail(ctx, DPZO_EINVAL, "noise multiplier must be finite and >= 0, got %g",
                          c->noise_multiplier);
    if (!(c->sensitivity >= 0.0) || !isfinite(c->sensitivity))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and >= 0, got %g",
                          c->sensitivity);
    if (!(c->epsilon >= 0.0) || !isfinite(c->epsilon))
        return dpzo__fail(ctx, DPZO_EINVAL, "claimed epsilon must be finite and >= 0, got %g",
                          c->epsilon);
    if (!(c->delta > 0.0 && c->delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "claimed delta must be in (0, 1), got %g", c->delta);
    if (c->steps < 1 || (double)c->steps > MAX_COUNT)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be in [1, 2^53], got %llu",
                          (unsigned long long)c->steps);
    if ((double)c->dataset_size > MAX_COUNT || (double)c->batch_size > MAX_COUNT
        || (double)c->effective_batch_size > MAX_COUNT)
        return dpzo__fail(ctx, DPZO_EINVAL, "batch and dataset sizes must be at most 2^53");
    if (c->batch_size > 0 && c->dataset_size > 0 && c->batch_size > c->dataset_size)
        return dpzo__fail(ctx, DPZO_EINVAL, "batch size %llu exceeds the dataset size %llu",
                          (unsigned long long)c->batch_size,
                          (unsigned long long)c->dataset_size);
    if (c->adjacency < DPZO_ADJACENCY_DEFAULT || c->adjacency > DPZO_ADJACENCY_ZERO_OUT)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown adjacency %d", (int)c->adjacency);
    switch (c->sampling) {
    case DPZO_SAMPLING_POISSON:
        if (!(c->sampling_rate > 0.0 && c->sampling_rate <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "poisson sampling rate must be in (0, 1], got %g",
                              c->sampling_rate);
        if (c->adjacency == DPZO_ADJACENCY_REPLACE_ONE)
            return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                              "Poisson sampling is accounted with add-remove (or zero-out) "
                              "adjacency; for replace-one use fixed batches");
        break;
    case DPZO_SAMPLING_FIXED:
    case DPZO_SAMPLING_SHUFFLED:
        if (c->batch_size < 1 || c->dataset_size < 1)
            return dpzo__fail(ctx, DPZO_EINVAL, "%s batches need a batch size and a dataset size",
                              dpzo_sampling_name(c->sampling));
        break;
    case DPZO_SAMPLING_FULL:
        break;
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "the claim must state how batches are drawn");
    }
    if (c->has_accountant && c->accountant.grid == DPZO_ORDERS_CUSTOM) {
        double sum = 0.0, work = 0.0;
        if (c->accountant.orders == NULL || c->accountant.n_orders == 0)
            return dpzo__fail(ctx, DPZO_EINVAL, "the claim's accountant lists no orders");
        for (size_t i = 0; i < c->accountant.n_orders; i++) {
            /* each order in range first: a negative one would lower the work's sum */
            dpzo_status st = dpzo__check_order(ctx, c->accountant.orders[i]);
            if (st)
                return st;
            sum += c->accountant.orders[i];
            work += c->accountant.orders[i] + DPZO_CLAIM_ORDER_WORK;
        }
        if (!(work <= DPZO_CLAIM_MAX_ORDER_WORK))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "the claim's accountant orders ask the audit for %.10g units of "
                              "work (%zu order%s summing to %.10g), above the limit of %.10g: "
                              "each order alpha counts alpha + %.10g (docs/audit.md, section 2.1)",
                              work, c->accountant.n_orders, c->accountant.n_orders == 1 ? "" : "s",
                              sum, DPZO_CLAIM_MAX_ORDER_WORK, DPZO_CLAIM_ORDER_WORK);
    }
    if (c->pipeline < DPZO_SAMPLING_POISSON || c->pipeline > DPZO_SAMPLING_UNSTATED)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown pipeline scheme %d", (int)c->pipeline);
    return DPZO_OK;
}

/* ---- Gaussian bounds --------------------------------------------------------------- */

/* The upper and lower events of the Gaussian mechanism under `scheme` (see the header
 * comment). *lo is NULL when it equals *up (same = 1) or when it is empty (0 steps). */
static dpzo_status gaussian_events(dpzo_ctx *ctx, const dpzo_claim *c, dpzo_sampling_scheme scheme,
                                   uint64_t steps, dpzo_event **up, dpzo_event **lo, int *same)
{
    double sigma = c->noise_multiplier;
    double s_up = sigma / sensitivity_for(c, scheme), s_lo = sigma / null_shift(c, scheme);
    *up = *lo = NULL;
    *same = 0;
    switch (scheme) {
    case DPZO_SAMPLING_POISSON:
        *up = dpzo_event_self_composed(
            ctx, dpzo_event_poisson_sampled(ctx, c->sampling_rate, dpzo_event_gaussian(ctx, s_up)),
            steps);
        *same = 1;
        break;
    case DPZO_SAMPLING_FULL:
        *up = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, s_up), steps);
        *same = 1;
        break;
    case DPZO_SAMPLING_FIXED:
        *up = dpzo_event_self_composed(
            ctx, dpzo_event_wor_sampled(ctx, c->batch_size, c->dataset_size,
                                        dpzo_event_gaussian(ctx, s_up)),
            steps);
        *lo = dpzo_event_self_composed(
            ctx,
            dpzo_event_poisson_sampled(ctx, (double)c->batch_size / (double)c->dataset_size,
                                       dpzo_event_gaussian(ctx, s_lo)),
            steps);
        break;
    case DPZO_SAMPLING_SHUFFLED: {
        uint64_t k = c->dataset_size / c->batch_size;                          /* full batches */
        uint64_t per_epoch = (c->dataset_size + c->batch_size - 1) / c->batch_size; /* at most */
        uint64_t epochs_up = (steps + k - 1) / k, epochs_lo = steps / per_epoch;
        *up = dpzo_event_self_composed(ctx, dpzo_event_gaussian(ctx, s_up), epochs_up);
        if (epochs_lo > 0)
            *lo = dpzo_event_self_composed(
                ctx,
                dpzo_event_poisson_sampled(
                    ctx, (double)(k * c->batch_size) / (double)c->dataset_size,
                    dpzo_event_gaussian(ctx, s_lo * sqrt((double)k))),
                epochs_lo);
        if (epochs_lo > 0 && *lo == NULL) {
            dpzo_event_free(*up);
            *up = NULL;
        }
        break;
    }
    default:
        return dpzo__fail(ctx, DPZO_EINVAL, "cannot account sampling '%s'",
                          dpzo_sampling_name(scheme));
    }
    if (*up == NULL || (scheme == DPZO_SAMPLING_FIXED && *lo == NULL)) {
        dpzo_event_free(*up);
        dpzo_event_free(*lo);
        *up = *lo = NULL;
        return DPZO_EINVAL; /* the constructor left its message */
    }
    return DPZO_OK;
}

/* The realised pair of `scheme` (see the header comment) as audit_lower.c's test takes it;
 * 0 when the run holds no release of it (shuffled batches shorter than an epoch). */
static int test_pair(const dpzo_claim *c, dpzo_sampling_scheme scheme, uint64_t steps,
                     dpzo__test_pair *p)
{
    p->sigma = c->noise_multiplier;
    p->sum = 1.0;
    p->releases = steps;
    switch (scheme) {
    case DPZO_SAMPLING_POISSON:
        p->q_num = c->sampling_rate;
        p->q_den = 1.0;
        p->shift = sensitivity_for(c, scheme);
        return 1;
    case DPZO_SAMPLING_FULL:
        p->q_num = p->q_den = 1.0;
        p->shift = sensitivity_for(c, scheme);
        return 1;
    case DPZO_SAMPLING_FIXED:
        p->q_num = (double)c->batch_size;
        p->q_den = (double)c->dataset_size;
        p->shift = null_shift(c, scheme);
        return 1;
    case DPZO_SAMPLING_SHUFFLED: {
        uint64_t k = c->dataset_size / c->batch_size;
        uint64_t per_epoch = (c->dataset_size + c->batch_size - 1) / c->batch_size;
        p->q_num = (double)(k * c->batch_size);
        p->q_den = (double)c->dataset_size;
        p->sum = (double)k;
        p->shift = null_shift(c, scheme);
        p->releases = steps / per_epoch;
        return p->releases > 0;
    }
    default:
        return 0;
    }
}

static void bounds_clear(dpzo_audit_bounds *b)
{
    b->upper = INFINITY;
    b->lower = 0.0;
    b->upper_from = "none";
    b->lower_from = "none";
    b->rdp = b->rdp_order = NAN;
    b->pld_upper = b->pld_lower = b->pld_grid = NAN;
    b->prv_upper = b->prv_lower = NAN;
    b->upper_slack = b->lower_slack = NAN;
    b->lower_elsewhere = 0;
}

static void take_upper(dpzo_audit_bounds *b, double v, const char *from)
{
    if (v < b->upper) {
        b->upper = v;
        b->upper_from = from;
    }
}

static void take_lower(dpzo_audit_bounds *b, double v, const char *from)
{
    if (v > b->lower) {
        b->lower = v;
        b->lower_from = from;
    }
}

/* A tight accountant on `e`, skipped (ran = 0) when it would exceed the memory limit or
 * cannot analyse the event (audit_internal.h). */
dpzo_status dpzo__audit_tight(dpzo_ctx *ctx, const dpzo_event *e, double delta,
                              dpzo_pld_method m, double grid, const dpzo_audit_options *o, dpzo_pld_result *r, int *ran)
{
    dpzo_pld_options po;
    dpzo_pld_options_default(&po);
    po.method = m;
    if (m == DPZO_PLD_CONNECT_DOTS)
        po.grid = grid;
    po.memory_limit = o->memory_limit;
    size_t bytes = 0, fft = 0;
    *ran = 0;
    /* The claim was validated: a refusal here (over the memory limit, a loss range wider
     * than the grid can index, an event it cannot analyse) only means this accountant
     * has nothing to add; the RDP bound stands. */
    char saved[DPZO_ERRMSG_SIZE];
    snprintf(saved, sizeof saved, "%s", dpzo_ctx_errmsg(ctx));
    dpzo_status st = dpzo_pld_plan(ctx, e, delta, 0, &po, &bytes, &fft);
    if (st == DPZO_OK && bytes <= o->memory_limit)
        st = dpzo_pld_epsilon(ctx, e, delta, &po, r);
    else
        st = DPZO_ENOMEM;
    if (st == DPZO_OK)
        *ran = 1;
    else
        dpzo__fail(ctx, DPZO_OK, "%s", saved);
    return DPZO_OK;
}

static dpzo_status gaussian_bounds(dpzo_ctx *ctx, const dpzo_claim *c, dpzo_sampling_scheme scheme,
                                   uint64_t steps, double delta, double grid,
                                   const dpzo_audit_options *o, dpzo_audit_bounds *b)
{
    dpzo_event *up, *lo;
    int same, ran;
    dpzo_status st = gaussian_events(ctx, c, scheme, steps, &up, &lo, &same);
    if (st)
        return st;
    dpzo_dp_result r;
    dpzo_pld_result t;
    if ((st = dpzo_event_epsilon(ctx, up, delta, NULL, &r)))
        goto done;
    b->rdp = r.epsilon;
    b->rdp_order = r.order;
    take_upper(b, r.epsilon, "rdp");
    if ((st = dpzo__audit_tight(ctx, up, delta, DPZO_PLD_CONNECT_DOTS, grid, o, &t, &ran)))
        goto done;
    if (ran) {
        b->pld_upper = t.epsilon_upper;
        b->pld_grid = t.grid;
        take_upper(b, t.epsilon_upper, "pld");
        /* the interval's width is the grid's doing only when the PLD resolved the answer;
         * after a fallback a finer grid cannot help (NaN: not refinable) */
        b->upper_slack = t.fallback || t.reason[0] ? NAN : t.epsilon_upper - t.epsilon_lower;
        if (same) {
            b->pld_lower = t.epsilon_lower;
            take_lower(b, t.epsilon_lower, "pld");
            b->lower_slack = b->upper_slack;
        }
    }
    if (o->prv) {
        if ((st = dpzo__audit_tight(ctx, up, delta, DPZO_PLD_PRV, grid, o, &t, &ran)))
            goto done;
        if (ran) {
            b->prv_upper = t.epsilon_upper;
            take_upper(b, t.epsilon_upper, "prv");
            if (same) {
                b->prv_lower = t.epsilon_lower;
                take_lower(b, t.epsilon_lower, "prv");
            }
        }
    }
    if (lo != NULL) {
        if ((st = dpzo__audit_tight(ctx, lo, delta, DPZO_PLD_CONNECT_DOTS, grid, o, &t, &ran)))
            goto done;
        if (ran) {
            b->pld_lower = t.epsilon_lower;
            b->lower_elsewhere = 1;
            take_lower(b, t.epsilon_lower, "pld");
            b->lower_slack = t.fallback || t.reason[0] ? NAN : t.epsilon_upper - t.epsilon_lower;
        }
    }
    /* the threshold test: a lower end where the tight accountants could not run, and a
     * check on theirs where they did */
    dpzo__test_pair pair;
    if (test_pair(c, scheme, steps, &pair)) {
        double v = dpzo__sgm_test_lower(&pair, delta, NULL);
        if (v > b->lower) {
            take_lower(b, v, "test");
            b->lower_elsewhere = fixed_size(scheme);
        }
    }
done:
    dpzo_event_free(up);
    dpzo_event_free(lo);
    return st;
}

static dpzo_status bounds_raw(dpzo_ctx *ctx, const dpzo_claim *claim,
                              const dpzo_audit_mechanism *mech, dpzo_sampling_scheme scheme,
                              uint64_t steps, double delta, double grid,
                              const dpzo_audit_options *opts, dpzo_audit_bounds *out)
{
    dpzo_audit_options def;
    if (opts == NULL) {
        dpzo_audit_options_default(&def);
        opts = &def;
    }
    bounds_clear(out);
    dpzo_status st;
    dpzo_claim c = *claim; /* the claim as accounted under `scheme` */
    c.sampling = scheme;
    claim = &c;
    if ((st = dpzo_claim_validate(ctx, claim)) || (st = dpzo__check_delta(ctx, delta)))
        return st;
    if (steps < 1 || (double)steps > MAX_COUNT)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be in [1, 2^53], got %llu",
                          (unsigned long long)steps);
    if (!(grid > 0.0 && grid <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "PLD grid must be in (0, 1], got %g", grid);
    if (fixed_size(scheme) && (claim->batch_size < 1 || claim->dataset_size < 1))
        return dpzo__fail(ctx, DPZO_EINVAL, "%s batches need a batch size and a dataset size",
                          dpzo_sampling_name(scheme));
    if (scheme == DPZO_SAMPLING_POISSON && !(claim->sampling_rate > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "Poisson sampling needs a sampling rate");
    if (mech != NULL)
        return mech->bounds(ctx, mech->data, claim, scheme, steps, delta, grid, opts, out);
    if (!(claim->noise_multiplier > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "the Gaussian noise multiplier must be > 0, got %g",
                          claim->noise_multiplier);
    return gaussian_bounds(ctx, claim, scheme, steps, delta, grid, opts, out);
}

static void add_note(dpzo_audit_result *r, unsigned flag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Bounds whose lower end exceeds the upper end (or NaN) mean that some accountant's proof
 * does not apply to this input: neither end can be trusted. They are replaced by the
 * trivial [0, +inf] (the verdict becomes UNDETERMINED) and, given a result, it says why. */
static int contradictory(dpzo_audit_bounds *b, dpzo_audit_result *r, const char *what)
{
    if (b->lower <= b->upper)
        return 0;
    if (r != NULL)
        add_note(r, DPZO_AUDIT_INCONSISTENT,
                 "%s: internal error, the proven lower end %.8g (%s) exceeds the proven upper "
                 "end %.8g (%s); not certified, both ends are withdrawn",
                 what, b->lower, b->lower_from, b->upper, b->upper_from);
    b->lower = 0.0;
    b->upper = INFINITY;
    b->lower_from = b->upper_from = "none (withdrawn: lower > upper)";
    b->upper_slack = b->lower_slack = NAN;
    return 1;
}

dpzo_status dpzo_audit_bounds_at(dpzo_ctx *ctx, const dpzo_claim *claim,
                                 const dpzo_audit_mechanism *mech, dpzo_sampling_scheme scheme,
                                 uint64_t steps, double delta, double grid,
                                 const dpzo_audit_options *opts, dpzo_audit_bounds *out)
{
    dpzo_status st = bounds_raw(ctx, claim, mech, scheme, steps, delta, grid, opts, out);
    if (st == DPZO_OK)
        contradictory(out, NULL, NULL);
    return st;
}

/* Keeps the best of two bound sets (smallest upper, largest lower, finest PLD). */
static void merge(dpzo_audit_bounds *best, const dpzo_audit_bounds *b)
{
    take_upper(best, b->upper, b->upper_from);
    take_lower(best, b->lower, b->lower_from);
    if (!isnan(b->pld_grid)) {
        best->upper_slack = b->upper_slack;
        best->lower_slack = b->lower_slack;
        best->pld_grid = b->pld_grid;
        best->pld_upper = b->pld_upper;
        if (!isnan(b->pld_lower)) {
            best->pld_lower = b->pld_lower;
            best->lower_elsewhere = b->lower_elsewhere;
        }
    }
    if (!isnan(b->rdp) && isnan(best->rdp)) {
        best->rdp = b->rdp;
        best->rdp_order = b->rdp_order;
    }
    if (!isnan(b->prv_upper) && isnan(best->prv_upper)) {
        best->prv_upper = b->prv_upper;
        best->prv_lower = b->prv_lower;
    }
}

/* Whether a finer PLD grid could decide: the claim lies within the discretisation width of
 * the PLD interval that an end came from. */
static int refinable(const dpzo_audit_bounds *b, double eps)
{
    return (b->upper > eps && b->upper - b->upper_slack <= eps)
           || (b->lower <= eps && b->lower + b->lower_slack > eps);
}

/* The bounds for `scheme`, refining the PLD grid while the claim is undecided. */
static dpzo_status decide(dpzo_ctx *ctx, const dpzo_claim *c, const dpzo_audit_mechanism *mech,
                          dpzo_sampling_scheme scheme, const dpzo_audit_options *o,
                          dpzo_audit_bounds *best, dpzo_verdict *v, double *inconsistent,
                          dpzo_audit_result *r, const char *what)
{
    *inconsistent = 0.0;
    double g0 = mech != NULL && mech->pld_grid > 0.0 ? mech->pld_grid : o->pld_grid;
    dpzo_status st = bounds_raw(ctx, c, mech, scheme, c->steps, c->delta, g0, o, best);
    if (st)
        return st;
    if (contradictory(best, r, what)) {
        *v = DPZO_VERDICT_UNDETERMINED;
        return DPZO_OK;
    }
    *v = dpzo_verdict_of(best->lower, best->upper, c->epsilon);
    dpzo_audit_options fine = *o;
    fine.prv = 0;
    for (double g = g0 / 10.0; *v == DPZO_VERDICT_UNDETERMINED && g >= o->pld_grid_min * 0.999 &&
                               refinable(best, c->epsilon);
         g /= 10.0) {
        dpzo_audit_bounds b;
        if ((st = bounds_raw(ctx, c, mech, scheme, c->steps, c->delta, g, &fine, &b)))
            return st;
        if (isnan(b.pld_grid)) /* over the memory limit: finer grids will be too */
            break;
        if (!(b.lower <= b.upper) || b.lower > best->upper || best->lower > b.upper) {
            /* two proven intervals that do not meet: an accountant's error model was
             * exceeded somewhere; keep the coarser grid's answer and say so */
            *inconsistent = g;
            break;
        }
        merge(best, &b);
        *v = dpzo_verdict_of(best->lower, best->upper, c->epsilon);
    }
    if (contradictory(best, r, what))
        *v = DPZO_VERDICT_UNDETERMINED;
    return DPZO_OK;
}

/* ---- Description, mismatches, calibration ------------------------------------------ */

static void add_note(dpzo_audit_result *r, unsigned flag, const char *fmt, ...)
{
    r->flags |= flag;
    if (r->n_notes == DPZO_AUDIT_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], fmt, ap);
    va_end(ap);
}

static void describe(const dpzo_claim *c, const dpzo_audit_mechanism *mech,
                     dpzo_sampling_scheme scheme, char *buf, size_t size)
{
    char samp[120], noise[80];
    unsigned long long B = c->batch_size, n = c->dataset_size, T = c->steps;
    switch (scheme) {
    case DPZO_SAMPLING_POISSON:
        snprintf(samp, sizeof samp, "%llu steps, Poisson q=%.6g", T, c->sampling_rate);
        break;
    case DPZO_SAMPLING_FIXED:
        snprintf(samp, sizeof samp, "%llu steps, batches of %llu of %llu without replacement", T,
                 B, n);
        break;
    case DPZO_SAMPLING_SHUFFLED:
        snprintf(samp, sizeof samp, "%llu steps, shuffled batches of %llu of %llu", T, B, n);
        break;
    default:
        snprintf(samp, sizeof samp, "%llu full-batch steps", T);
        break;
    }
    if (mech != NULL)
        snprintf(noise, sizeof noise, "%s noise", mech->name);
    else
        snprintf(noise, sizeof noise, "Gaussian sigma %.6g", c->noise_multiplier);
    if (snprintf(buf, size, "%s, %s, %s (sensitivity %gC)", samp, noise,
                 dpzo_adjacency_name(adjacency_for(c, scheme)), sensitivity_for(c, scheme))
        >= (int)size && size > 4)
        memcpy(buf + size - 4, "...", 4);
}

/* The smallest proven epsilon any noise can reach on the authors' order grid: the
 * conversion term alone (RDP >= 0). +inf for continuous orders. */
static double grid_floor(dpzo_ctx *ctx, const dpzo_rdp_options *o, double delta, double *amax)
{
    const double *orders = o->orders;
    size_t n = o->n_orders;
    *amax = NAN;
    if (o->grid != DPZO_ORDERS_CUSTOM)
        n = dpzo_order_grid_values(o->grid, &orders);
    if (n == 0)
        return 0.0;
    (void)ctx;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double a = orders[i];
        /* the conversion's own term (convert.h), i.e. its value at RDP 0+ */
        double e = o->conversion == DPZO_CONVERSION_STANDARD
                       ? -log(delta) / (a - 1.0)
                       : log1p(-1.0 / a) - log(delta * a) / (a - 1.0);
        if (e < best)
            best = e;
        if (isnan(*amax) || orders[i] > *amax)
            *amax = orders[i];
    }
    return best;
}

static void stated_accountant(dpzo_ctx *ctx, const dpzo_claim *c, dpzo_audit_result *r)
{
    dpzo_event *up, *lo;
    int same;
    r->stated_epsilon = r->stated_order = NAN;
    if (gaussian_events(ctx, c, c->sampling, c->steps, &up, &lo, &same))
        return;
    dpzo_dp_result d;
    dpzo_status st = dpzo_event_epsilon(ctx, up, c->delta, &c->accountant, &d);
    dpzo_event_free(up);
    dpzo_event_free(lo);
    if (st)
        return;
    r->stated_epsilon = d.epsilon;
    r->stated_order = d.order;
    const char *conv = c->accountant.conversion == DPZO_CONVERSION_STANDARD ? "standard"
                                                                            : "improved";
    double amax, floor_eps = grid_floor(ctx, &c->accountant, c->delta, &amax);
    if (floor_eps > c->epsilon)
        add_note(r, DPZO_AUDIT_ORDERS_TOO_SHORT,
                 "order grid too short to certify: at each of the authors' orders (largest %g) "
                 "the %s RDP-to-DP conversion alone costs at least %.6g > claimed %g at delta %g, "
                 "so no practical noise multiplier can be certified on that grid",
                 amax, conv, floor_eps, c->epsilon, c->delta);
    else if (d.epsilon > c->epsilon && d.order_at_edge && !isnan(amax) && d.order >= amax)
        add_note(r, DPZO_AUDIT_ORDERS_TOO_SHORT,
                 "order grid too short to certify: the authors' accountant stops at its "
                 "largest order %g with epsilon %.10g > claimed %g",
                 amax, d.epsilon, c->epsilon);
    if (d.epsilon > c->epsilon)
        add_note(r, DPZO_AUDIT_STATED_ACCOUNTANT,
                 "the authors' accountant (RDP, %s orders, %s conversion) gives %.10g > "
                 "claimed %g at order %g",
                 c->accountant.grid == DPZO_ORDERS_CUSTOM ? "listed"
                     : c->accountant.grid == DPZO_ORDERS_TF ? "tf"
                     : c->accountant.grid == DPZO_ORDERS_OPACUS ? "opacus"
                     : c->accountant.grid == DPZO_ORDERS_DP_ACCOUNTING ? "dp_accounting"
                                                                    : "continuous",
                 conv, d.epsilon, c->epsilon, d.order);
}

/* The noise multiplier a claim needed. The RDP one by dpzo_calibrate_noise where the scheme
 * is a Poisson-sampled Gaussian (full batches and the shuffled upper bound are q = 1), by
 * bisection on the WOR event for fixed batches. The tight one by bisection from that
 * answer downwards, on the smaller of the RDP bound and a tight accountant's proven upper
 * end: PRV with an error target of 2% of the claim within [0.002, 0.05] (1e-4 of it above
 * epsilon 500: the bisection's 1e-3 in sigma moves epsilon by about 2e-3 of it, and at
 * epsilon 11000 each PRV at 0.05 took seconds), PLD on grid 1e-3 for fixed batches. Both are
 * to 1e-3 relative. */
#define CALIBRATION_RTOL 1e-3

/* Whether noise multiplier `sigma` (units of C) provably meets the claim: the certified
 * RDP bound (tight = 0), or the smaller of it and the tight accountant's upper end. */
static dpzo_status sigma_meets(dpzo_ctx *ctx, const dpzo_claim *c, double sigma, int tight_acc,
                               int *ok)
{
    dpzo_claim t = *c;
    t.noise_multiplier = sigma;
    dpzo_event *up, *lo;
    int same;
    dpzo_status st = gaussian_events(ctx, &t, c->sampling, c->steps, &up, &lo, &same);
    if (st)
        return st;
    dpzo_event_free(lo);
    dpzo_dp_result r;
    if ((st = dpzo_event_epsilon(ctx, up, c->delta, NULL, &r)))
        goto done;
    double upper = r.epsilon;
    if (tight_acc && upper > c->epsilon) {
        dpzo_audit_options o;
        dpzo_audit_options_default(&o);
        uint64_t releases = c->steps;
        if (c->sampling == DPZO_SAMPLING_SHUFFLED) {
            uint64_t k = c->dataset_size / c->batch_size;
            releases = (c->steps + k - 1) / k;
        }
        (void)releases;
        dpzo_pld_method m = DPZO_PLD_PRV;
        double grid = 1e-3;
        if (c->sampling == DPZO_SAMPLING_FIXED)
            m = DPZO_PLD_CONNECT_DOTS;
        dpzo_pld_options po;
        dpzo_pld_options_default(&po);
        po.method = m;
        po.memory_limit = o.memory_limit;
        if (m == DPZO_PLD_PRV)
            po.eps_error = fmin(fmax(0.05, 1e-4 * c->epsilon), fmax(0.002, 0.02 * c->epsilon));
        else
            po.grid = grid;
        size_t bytes = 0, fft = 0;
        dpzo_pld_result pr;
        if ((st = dpzo_pld_plan(ctx, up, c->delta, 0, &po, &bytes, &fft)) == DPZO_OK
            && bytes <= po.memory_limit) {
            /* the upper end only: a batch's concrete instance (its lower end) is not read */
            st = dpzo__pld_epsilon_upper(ctx, up, c->delta, &po, &pr);
            if (st == DPZO_OK)
                upper = fmin(upper, pr.epsilon_upper);
        }
        if (st == DPZO_ENOMEM || st == DPZO_EUNSUPPORTED)
            st = DPZO_OK;
    }
    *ok = upper <= c->epsilon;
done:
    dpzo_event_free(up);
    return st;
}

/* Bisection between a failing and a passing sigma to CALIBRATION_RTOL. */
static dpzo_status bisect_sigma(dpzo_ctx *ctx, const dpzo_claim *c, int tight_acc, double fail,
                                double pass, double *sigma)
{
    dpzo_status st;
    int ok;
    while (pass - fail > CALIBRATION_RTOL * pass) {
        double mid = 0.5 * (pass + fail);
        if ((st = sigma_meets(ctx, c, mid, tight_acc, &ok)))
            return st;
        if (ok)
            pass = mid;
        else
            fail = mid;
    }
    *sigma = pass;
    return DPZO_OK;
}

/* A bracket [fail, pass] around the smallest passing sigma, from a guess. */
static dpzo_status bracket_sigma(dpzo_ctx *ctx, const dpzo_claim *c, int tight_acc, double guess,
                                 double *fail, double *pass)
{
    dpzo_status st;
    int ok;
    double x = guess, shrink = tight_acc ? 0.8 : 0.5; /* tight accountants save 5-20% */
    if ((st = sigma_meets(ctx, c, x, tight_acc, &ok)))
        return st;
    if (ok) {
        for (;;) {
            if (x < 1e-6) {
                *fail = 0.0;
                *pass = x;
                return DPZO_OK;
            }
            if ((st = sigma_meets(ctx, c, x * shrink, tight_acc, &ok)))
                return st;
            if (!ok) {
                *fail = x * shrink;
                *pass = x;
                return DPZO_OK;
            }
            x *= shrink;
        }
    }
    for (;;) {
        if (x > 1e12)
            return dpzo__fail(ctx, DPZO_EINFEASIBLE,
                              "no noise multiplier up to 1e12 meets epsilon %g", c->epsilon);
        if ((st = sigma_meets(ctx, c, 2.0 * x, tight_acc, &ok)))
            return st;
        if (ok) {
            *fail = x;
            *pass = 2.0 * x;
            return DPZO_OK;
        }
        x *= 2.0;
    }
}

/* The RDP-calibrated sigma (units of C) and, from it, the tight one. */
static dpzo_status calibrate_sigma(dpzo_ctx *ctx, const dpzo_claim *c, double *rdp,
                                   double *tight_sigma)
{
    dpzo_sampling_scheme s = c->sampling;
    double sens = sensitivity_for(c, s), q = 1.0, fail, pass;
    uint64_t steps = c->steps;
    dpzo_status st;
    *rdp = *tight_sigma = NAN;
    if (s == DPZO_SAMPLING_POISSON)
        q = c->sampling_rate;
    if (s == DPZO_SAMPLING_SHUFFLED) {
        uint64_t k = c->dataset_size / c->batch_size;
        steps = (steps + k - 1) / k;
    }
    if (s != DPZO_SAMPLING_FIXED) {
        dpzo_calibration cal;
        if ((st = dpzo_calibrate_noise(ctx, c->epsilon, c->delta, q, steps, CALIBRATION_RTOL,
                                       NULL, &cal)))
            return st;
        *rdp = cal.value * sens;
    } else {
        if ((st = bracket_sigma(ctx, c, 0, sens, &fail, &pass))
            || (st = bisect_sigma(ctx, c, 0, fail, pass, rdp)))
            return st;
    }
    /* the tight accountant needs at most the RDP answer: search below it */
    if ((st = bracket_sigma(ctx, c, 1, *rdp, &fail, &pass))
        || (st = bisect_sigma(ctx, c, 1, fail, pass, tight_sigma)))
        return st;
    return DPZO_OK;
}

static void mismatches(dpzo_ctx *ctx, const dpzo_claim *c, dpzo_audit_result *r)
{
    (void)ctx;
    unsigned long long B = c->batch_size, n = c->dataset_size;
    if (c->sampling == DPZO_SAMPLING_POISSON
        && (c->pipeline == DPZO_SAMPLING_FIXED || c->pipeline == DPZO_SAMPLING_SHUFFLED))
        add_note(r, DPZO_AUDIT_POISSON_FOR_FIXED,
                 "fixed batches accounted as Poisson: the code draws %s batches, the claim "
                 "accounts Poisson sampling at q=%.6g",
                 c->pipeline == DPZO_SAMPLING_SHUFFLED ? "shuffled fixed-size"
                                                       : "fixed-size (without replacement)",
                 c->sampling_rate);
    if (fixed_size(c->sampling) && c->adjacency == DPZO_ADJACENCY_ADD_REMOVE)
        add_note(r, DPZO_AUDIT_ADJACENCY,
                 "add-remove adjacency with fixed-size batches: a batch of %llu of n is not "
                 "defined for n and n + 1 examples alike; accounted as zero-out (sensitivity C)",
                 B);
    if (n > 0 && c->delta >= 1.0 / (double)n)
        add_note(r, DPZO_AUDIT_DELTA_LARGE,
                 "delta %g >= 1/n = 1/%llu: publishing one random example in the clear is "
                 "(0, 1/n)-DP, so such a delta permits it; use delta well below 1/n",
                 c->delta, n);
    if (c->effective_batch_size > 0 && n > 0) {
        double q_eff = (double)c->effective_batch_size / (double)n;
        double q = c->sampling == DPZO_SAMPLING_POISSON ? c->sampling_rate
                   : fixed_size(c->sampling)            ? (double)B / (double)n
                                                        : 1.0;
        if (q_eff > q * (1.0 + 1e-9))
            add_note(r, DPZO_AUDIT_EFFECTIVE_BATCH,
                     "sampling rate from the per-device batch: q = %.6g, but each optimiser "
                     "step uses %llu examples (q = %.6g = %llu/%llu)",
                     q, (unsigned long long)c->effective_batch_size, q_eff,
                     (unsigned long long)c->effective_batch_size, n);
    }
}

dpzo_status dpzo_audit_claim(dpzo_ctx *ctx, const dpzo_claim *claim,
                             const dpzo_audit_mechanism *mech, const dpzo_audit_options *opts,
                             dpzo_audit_result *out)
{
    dpzo_audit_options def;
    if (opts == NULL) {
        dpzo_audit_options_default(&def);
        opts = &def;
    }
    memset(out, 0, sizeof *out);
    bounds_clear(&out->bounds);
    bounds_clear(&out->pipeline_bounds);
    out->stated_epsilon = out->stated_order = NAN;
    out->sigma_needed = out->sigma_needed_rdp = out->sigma_needed_tight = NAN;
    dpzo_status st;
    if ((st = dpzo_claim_validate(ctx, claim)))
        return st;
    if (mech == NULL && !(claim->noise_multiplier > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "the Gaussian noise multiplier must be > 0, got %g",
                          claim->noise_multiplier);
    if (!(opts->pld_grid > 0.0 && opts->pld_grid <= 1.0) || !(opts->pld_grid_min > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "PLD grid must be in (0, 1], got %g", opts->pld_grid);
    describe(claim, mech, claim->sampling, out->accounted, sizeof out->accounted);
    double bad;
    if ((st = decide(ctx, claim, mech, claim->sampling, opts, &out->bounds, &out->verdict, &bad,
                     out, "the claim's bounds")))
        return st;
    if (bad > 0.0)
        add_note(out, 0,
                 "the PLD interval on grid %g does not meet the one on grid %g: an error bound "
                 "was exceeded; the coarser grid's bounds are reported",
                 bad, bad * 10.0);

    mismatches(ctx, claim, out);
    if (claim->sampling == DPZO_SAMPLING_SHUFFLED) {
        uint64_t k = claim->dataset_size / claim->batch_size;
        add_note(out, 0,
                 "shuffled batches: upper bound without amplification (at most one step per "
                 "epoch: %llu releases of the noise), lower bound from the sum of each "
                 "complete epoch's %llu full batches",
                 (unsigned long long)((claim->steps + k - 1) / k), (unsigned long long)k);
    }
    if (out->bounds.lower == 0.0 && isnan(out->bounds.pld_lower) && isnan(out->bounds.prv_lower))
        add_note(out, DPZO_AUDIT_NO_LOWER, "no lower bound was computed for this mechanism and "
                                           "sampling: only HOLDS or UNDETERMINED can result");
    if (claim->has_accountant && mech == NULL)
        stated_accountant(ctx, claim, out);

    if (claim->pipeline != DPZO_SAMPLING_UNSTATED && claim->pipeline != claim->sampling
        && (!fixed_size(claim->pipeline) || (claim->batch_size > 0 && claim->dataset_size > 0))
        && (claim->pipeline != DPZO_SAMPLING_POISSON || claim->sampling_rate > 0.0)) {
        dpzo_claim p = *claim;
        /* the neighbouring relation the claim accounts, carried over to the pipeline:
         * add-remove becomes zero-out for fixed-size batches, replace-one stays */
        p.adjacency = adjacency_for(claim, claim->sampling);
        p.sampling = claim->pipeline;
        if (p.sampling == DPZO_SAMPLING_POISSON && p.adjacency == DPZO_ADJACENCY_REPLACE_ONE)
            p.adjacency = DPZO_ADJACENCY_ZERO_OUT;
        out->has_pipeline = 1;
        describe(&p, mech, p.sampling, out->pipeline_accounted, sizeof out->pipeline_accounted);
        if ((st = decide(ctx, &p, mech, p.sampling, opts, &out->pipeline_bounds,
                         &out->pipeline_verdict, &bad, out, "the pipeline's bounds")))
            return st;
    }

    if (opts->calibrate) {
        char saved[DPZO_ERRMSG_SIZE];
        snprintf(saved, sizeof saved, "%s", dpzo_ctx_errmsg(ctx));
        st = calibrate_sigma(ctx, claim, &out->sigma_needed_rdp, &out->sigma_needed_tight);
        if (st != DPZO_OK && st != DPZO_EINFEASIBLE && st != DPZO_ENOCONV && st != DPZO_ENOMEM)
            return st;
        out->sigma_needed = out->sigma_needed_rdp;
        if (out->sigma_needed_tight < out->sigma_needed) /* both are proven: keep the smaller */
            out->sigma_needed = out->sigma_needed_tight;
        if (st != DPZO_OK)
            add_note(out, 0, "noise calibration: %s", dpzo_ctx_errmsg(ctx));
        dpzo__fail(ctx, DPZO_OK, "%s", saved);
    }
    return DPZO_OK;
}

dpzo_status dpzo_audit_equal_gaussian(dpzo_ctx *ctx, const dpzo_claim *claim,
                                      const dpzo_audit_mechanism *mech,
                                      const dpzo_audit_options *opts, double *epsilon,
                                      double *sigma)
{
    dpzo_audit_options def;
    if (opts == NULL) {
        dpzo_audit_options_default(&def);
        opts = &def;
    }
    dpzo_audit_bounds b;
    dpzo_status st = dpzo_audit_bounds_at(ctx, claim, mech, claim->sampling, claim->steps,
                                          claim->delta, opts->pld_grid, opts, &b);
    if (st)
        return st;
    if (!isfinite(b.upper) || !(b.upper > 0.0))
        return dpzo__fail(ctx, DPZO_EINFEASIBLE, "the mechanism's proven epsilon is %g: no "
                          "Gaussian to compare with", b.upper);
    dpzo_claim c = *claim;
    c.epsilon = b.upper;
    *epsilon = b.upper;
    double rdp;
    return calibrate_sigma(ctx, &c, &rdp, sigma);
}
