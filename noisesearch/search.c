/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/search.c: the offline search for the LMO noise that best meets an
 * objective under a privacy target.
 *
 * Candidates are the distinct distributions of the grid (grid.c), each represented by
 * its first grid index. Every per-candidate quantity is a deterministic function of
 * the candidate, computed in parallel in chunks and stored in arrays (NaN = not yet
 * computed); the arrays are what a checkpoint saves, so an interrupted search resumes
 * where it stopped and gives the same answer, whatever the thread count.
 *
 * Paper mode (bug-compatible): the constraint is the released code's single-step
 * epsilon (lmo_paper.c) with its pre-filter (wG < 1/theta and wE < lam) and strict
 * "<"; evaluated for every candidate from per-component MGF tables.
 *
 * Sound mode: the constraint is the proven total epsilon of the run
 * (dpzo_lmo_epsilon with the best per-step curve). Per candidate, two cheap numbers
 * bracket it in double precision: eps_cheap from min(MGF bound, pure DP) (an upper
 * bound: the best curve is below it), eps_low from min(MGF, binned lower bound, pure)
 * (below the best curve: data processing). Objectives other than max-epsilon walk the
 * candidates from the best objective value down (ties: grid order), bracketing them
 * lazily in parallel blocks: one with eps_low > target is skipped; an undecided one
 * (eps_low <= target < eps_cheap) gets a coarse exact screen (screen(), proven bounds
 * at a few orders) and is skipped if that rules it out; the first candidate left is
 * certified (dpzo_lmo_epsilon, the full exact curve) and wins if its proven epsilon
 * meets the target. For max-epsilon every candidate is bracketed, the walk goes by
 * decreasing eps_cheap and stops when no remaining candidate can beat the best
 * certified value found.
 *
 * PLD mode (sound mode with opts->pld): a candidate is also feasible when the PLD
 * accountant built from the noise's density (dpzo_lmo_pld_epsilon) proves it, and the
 * winner's epsilon is the smaller of the two proven bounds. A PLD run costs 0.1-3 s, so it
 * is screened: a candidate that RDP rules out is tried only when 0.95 rho eps_low <=
 * target, where eps_low is its RDP lower bracket and rho the smallest ratio PLD lower end /
 * eps_low seen so far (1/PLD_SCREEN before the first), within pld_max runs; each try runs
 * grid 1e-3 and, only when that neither proves the target nor rules it out (its lower end
 * above the target), grid 1e-4. The screen decides only what is tried, never what is
 * claimed: whatever wins is proven. PLD results are cached per candidate (and
 * checkpointed), and the screen is replayed from the cache in the same order, so a resumed
 * search gives the same answer. */
#include <errno.h>
#include <math.h>
#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dpzo_io.h"
#include "lmo_account.h"
#include "lmo_rdp.h"
#include "lmo_search.h"
#include "lmo_exact.h"
#include "dpzo_sha256.h"

static const char *const obj_names[] = {"usefulness", "mean-abs", "variance", "max-epsilon"};

dpzo_status dpzo_lmo_objective_parse(dpzo_ctx *ctx, const char *name, dpzo_lmo_objective *out)
{
    for (int i = 0; i < 4; i++)
        if (name != NULL && strcmp(name, obj_names[i]) == 0) {
            *out = (dpzo_lmo_objective)i;
            return DPZO_OK;
        }
    return dpzo__fail(ctx, DPZO_EINVAL,
                      "unknown objective '%s' (expected usefulness, mean-abs, variance or "
                      "max-epsilon)",
                      name ? name : "(null)");
}

const char *dpzo_lmo_objective_name(dpzo_lmo_objective o)
{
    return (unsigned)o < 4 ? obj_names[o] : "?";
}

dpzo_lmo_search_options dpzo_lmo_search_options_default(void)
{
    dpzo_lmo_search_options o;
    memset(&o, 0, sizeof o);
    o.objective = DPZO_LMO_OBJ_USEFULNESS;
    o.usefulness_gamma = 0.9;
    o.account = dpzo_lmo_account_options_default();
    o.pld_max = 1000;
    return o;
}

/* pld mode: the screen's prior ratio PLD / RDP lower bracket is 1 / PLD_SCREEN */
#define PLD_SCREEN 2.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- search state --------------------------------------------------------------- */

/* ARR_PLD_UP/LO/N (pld mode): the smallest PLD upper end over the grids tried, the largest
 * lower end, and the number of PLD runs made for the candidate */
enum { ARR_OBJ, ARR_EPS, ARR_LOW, ARR_BEST, ARR_ORDER, ARR_LOW2, ARR_UP2,
       ARR_PLD_UP, ARR_PLD_LO, ARR_PLD_N, N_ARR };

typedef struct {
    const dpzo_lmo_grid *grid;
    const dpzo_lmo_search_options *o;
    size_t *reps, *class_size, n;
    double *arr[N_ARR]; /* per candidate; NaN = not computed */
    /* paper-mode MGF tables: [component combo][254 t values] */
    double *tg, *te, *tu;
    size_t n_exact;
    size_t n_pld;      /* PLD runs (pld mode; replayed from the cache included) */
    double pld_ratio;  /* the screen: smallest PLD lower end / RDP lower bracket seen */
    int resumed;
    double t_start, t_last_save;
    char save_err[DPZO_IO_ERRMAX]; /* why the last checkpoint write failed */
    int save_failed;               /* the last checkpoint write failed */
    uint64_t fingerprint;
} search;

/* ---- paper mode: code epsilon from tables ---------------------------------------- */

#define NT 254 /* t = alpha - 1 (1..127) at [0..126], t = -alpha (-2..-128) at [127..253] */

static double table_t(int j) { return j < 127 ? (double)(j + 1) : -(double)(j - 127 + 2); }

/* Component indices of grid point `index` (see dpzo_lmo_grid_point). */
typedef struct {
    size_t wg, we, wu, gam, rate, uni;
} gidx;

static gidx split_index(const size_t s[6], size_t i)
{
    gidx r;
    r.wg = i % s[0];
    i /= s[0];
    r.we = i % s[1];
    i /= s[1];
    r.wu = i % s[2];
    i /= s[2];
    r.gam = i % s[3];
    i /= s[3];
    r.rate = i % s[4];
    i /= s[4];
    r.uni = i;
    return r;
}

static int build_tables(search *S)
{
    size_t s[6];
    dpzo__lmo_grid_dims(S->grid, s);
    S->tg = malloc(s[0] * s[3] * NT * sizeof(double));
    S->te = malloc(s[1] * s[4] * NT * sizeof(double));
    S->tu = malloc(s[2] * s[5] * NT * sizeof(double));
    if (!S->tg || !S->te || !S->tu)
        return -1;
    size_t stride[6] = {1, s[0], s[0] * s[1], s[0] * s[1] * s[2], s[0] * s[1] * s[2] * s[3],
                        s[0] * s[1] * s[2] * s[3] * s[4]};
    /* each factor depends on its own two lists only: evaluate it once per pair */
    struct {
        double *tab;
        int list_a, list_b, factor;
    } parts[3] = {{S->tg, 0, 3, 0}, {S->te, 1, 4, 1}, {S->tu, 2, 5, 2}};
    dpzo_lmo p;
    for (int k = 0; k < 3; k++)
        for (size_t a = 0; a < s[parts[k].list_a]; a++)
            for (size_t b = 0; b < s[parts[k].list_b]; b++) {
                dpzo_lmo_grid_point(S->grid,
                                    a * stride[parts[k].list_a] + b * stride[parts[k].list_b], &p);
                double *row = parts[k].tab + (a * s[parts[k].list_b] + b) * NT;
                for (int j = 0; j < NT; j++) {
                    double f[3];
                    dpzo__lmo_paper_factors(&p, table_t(j), f);
                    row[j] = f[parts[k].factor];
                }
            }
    return 0;
}

/* The released code's single-step epsilon of grid point `index` (equal, operation for
 * operation, to dpzo_lmo_paper_step_epsilon), or +inf when its pre-filter rejects it. */
static double paper_eps_tabled(const search *S, size_t index, double *order)
{
    size_t s[6];
    dpzo__lmo_grid_dims(S->grid, s);
    gidx g = split_index(s, index);
    dpzo_lmo p;
    dpzo_lmo_grid_point(S->grid, index, &p);
    *order = 0.0;
    if (!(p.gamma_weight * 1.0 < 1.0 / p.gamma_scale) || !(p.exp_weight * 1.0 < p.exp_rate))
        return INFINITY;
    const double *G = S->tg + (g.wg * s[3] + g.gam) * NT;
    const double *E = S->te + (g.we * s[4] + g.rate) * NT;
    const double *U = S->tu + (g.wu * s[5] + g.uni) * NT;
    double mp[127], mm[127];
    for (int a = 2; a <= 128; a++) { /* the released code's product order: G * E * U */
        int jp = a - 2, jm = 127 + a - 2;
        mp[a - 2] = 1.0 * G[jp] * E[jp] * U[jp];
        mm[a - 2] = 1.0 * G[jm] * E[jm] * U[jm];
    }
    return dpzo__lmo_paper_eps_from_mgf(mp, mm, S->o->account.delta, order);
}

/* ---- per-candidate work ----------------------------------------------------------- */

#define N_BIN_ORDERS 24
static const double bin_orders[N_BIN_ORDERS] = {2,  3,  4,  5,  6,  8,  10, 12,  16,  20,  24,  32,
                                                40, 48, 64, 80, 96, 128, 160, 192, 256, 512, 1024, 4096};

/* eps_cheap and eps_low of a candidate (sound mode, double precision). */
static void sound_bracket(const search *S, const dpzo_lmo *p, dpzo_ctx *ctx, double *eps_cheap,
                          double *eps_low, double *order, double *scratch)
{
    const dpzo_lmo_account_options *o = &S->o->account;
    unsigned L = o->max_order;
    double c = o->sensitivity;
    double *cheap = scratch, *low = scratch + L + 1;
    double eps0 = dpzo__lmo_eps0_estimate(p, c);
    dpzo_bound ev; /* vectors: C E[Y^2] / E[Y] (its estimate: ranking only) */
    if (o->vector_l1)
        eps0 = dpzo_lmo_eps0_vector(ctx, p, c, &ev) == DPZO_OK ? ev.value : INFINITY;
    double bl[N_BIN_ORDERS];
    size_t nb = 0;
    while (nb < N_BIN_ORDERS && bin_orders[nb] <= L)
        nb++;
    dpzo__lmo_binned_rdp_lower(p, c, bin_orders, nb, bl);
    /* RDP is nondecreasing in the order: a lower bound at a smaller order holds at every
     * larger one (the binned bound can collapse to 0 at high orders, e.g. C = 1e18) */
    for (size_t j = 1; j < nb; j++)
        if (!(bl[j] >= bl[j - 1]) && bl[j - 1] == bl[j - 1])
            bl[j] = bl[j - 1];
    size_t k = 0;
    dpzo_lmo_bound_kind kind = o->bound;
    for (unsigned l = 2; l <= L; l++) {
        double m = dpzo__lmo_mgf_rdp(p, c, l), pr = dpzo__lmo_pure_rdp(eps0, l);
        while (k + 1 < nb && bin_orders[k + 1] <= l)
            k++;
        /* cheap: the curve itself (mgf, pure) or one above it (best); exact has none.
         * low: below the curve: RDP is nondecreasing, so D_l >= D_{bin order <= l} */
        if (o->vector_l1 && kind != DPZO_LMO_BOUND_MGF) {
            cheap[l] = low[l] = kind == DPZO_LMO_BOUND_PURE ? pr : fmin(m, pr);
            continue;
        }
        switch (kind) {
        case DPZO_LMO_BOUND_MGF:
            cheap[l] = low[l] = m;
            break;
        case DPZO_LMO_BOUND_PURE:
            cheap[l] = low[l] = pr;
            break;
        case DPZO_LMO_BOUND_EXACT:
            cheap[l] = INFINITY;
            low[l] = bl[k];
            break;
        default:
            cheap[l] = fmin(m, pr);
            low[l] = fmin(cheap[l], bl[k]);
        }
    }
    /* eps_low first: a candidate it rules out needs nothing else (eps_cheap = +inf then,
     * meaning "not computed"; every use of it first checks eps_low) */
    *eps_low = dpzo__lmo_total_eps_fast(low, eps0, o, NULL);
    *order = 0.0;
    if (*eps_low > S->o->epsilon * (1.0 + 1e-9))
        *eps_cheap = INFINITY;
    else
        *eps_cheap = dpzo__lmo_total_eps_fast(cheap, eps0, o, order);
}

static double objective_value(const search *S, const dpzo_lmo *p, dpzo_ctx *ctx)
{
    dpzo_lmo_objective ob = S->o->objective;
    if (ob == DPZO_LMO_OBJ_USEFULNESS)
        return -expm1(dpzo_lmo_log_mgf(p, -S->o->usefulness_gamma)); /* maximise */
    if (ob == DPZO_LMO_OBJ_MAX_EPSILON)
        return 0.0; /* ranked by epsilon itself */
    dpzo_lmo_stats st;
    if (dpzo_lmo_stats_compute(ctx, p, S->o->usefulness_gamma, &st) != DPZO_OK)
        return -INFINITY;
    return ob == DPZO_LMO_OBJ_MEAN_ABS ? -st.mean_abs : -st.variance; /* minimise */
}

/* Second stage for a candidate the cheap bracket cannot decide: the exact integral at
 * the bin orders only, coarsely (tolerance 1e-4), gives proven [lower, upper] there;
 * RDP is nondecreasing in the order, so D_l >= lower at the largest bin order <= l and
 * D_l <= upper at the smallest bin order >= l. Both step curves, min'ed with the MGF and
 * pure curves, give a double-precision bracket [low2, up2] of the best-curve epsilon. */
static void screen(const search *S, const dpzo_lmo *p, dpzo_ctx *ctx, double *low2, double *up2,
                   double *scratch)
{
    const dpzo_lmo_account_options *o = &S->o->account;
    unsigned L = o->max_order;
    double c = o->sensitivity;
    double *lo = scratch, *up = scratch + L + 1;
    double ords[N_BIN_ORDERS + 1];
    size_t nb = 0;
    while (nb < N_BIN_ORDERS && bin_orders[nb] < L)
        ords[nb] = bin_orders[nb], nb++;
    ords[nb++] = L;
    dpzo_bound ex[N_BIN_ORDERS + 1];
    double gap;
    if (o->vector_l1 || o->bound == DPZO_LMO_BOUND_MGF || o->bound == DPZO_LMO_BOUND_PURE ||
        dpzo__lmo_exact_rdp(ctx, p, c, ords, nb, 1e-4, ex, &gap) != DPZO_OK) {
        *low2 = -INFINITY; /* undecided: the walk certifies */
        *up2 = INFINITY;
        return;
    }
    double eps0 = dpzo__lmo_eps0_estimate(p, c);
    int mgf_ok = o->bound == DPZO_LMO_BOUND_BEST;
    /* proven lower ends carry over to larger orders (RDP is nondecreasing in the order) */
    for (size_t j = 1; j < nb; j++)
        if (ex[j].lower < ex[j - 1].lower)
            ex[j].lower = ex[j - 1].lower;
    size_t kl = 0, ku = 0;
    for (unsigned l = 2; l <= L; l++) {
        while (kl + 1 < nb && ords[kl + 1] <= l)
            kl++;
        while (ku < nb && ords[ku] < l)
            ku++;
        double m = mgf_ok ? dpzo__lmo_mgf_rdp(p, c, l) : INFINITY;
        double pr = mgf_ok ? dpzo__lmo_pure_rdp(eps0, l) : INFINITY;
        lo[l] = fmin(fmin(m, pr), ex[kl].lower);
        up[l] = fmin(fmin(m, pr), ex[ku < nb ? ku : nb - 1].upper);
    }
    *low2 = dpzo__lmo_total_eps_fast(lo, eps0, o, NULL);
    *up2 = dpzo__lmo_total_eps_fast(up, eps0, o, NULL);
}

typedef struct {
    search *S;
    size_t lo, hi;       /* candidate slots, or positions in `slots` */
    int what;            /* 0: objective, 1: paper eps, 2: sound bracket, 3: screen */
    const size_t *slots; /* NULL: slots lo..hi-1 themselves */
} job;

static void *worker(void *arg)
{
    job *j = arg;
    search *S = j->S;
    dpzo_ctx *ctx = dpzo_ctx_new();
    double *scratch = malloc(2 * (S->o->account.max_order + 1) * sizeof(double));
    for (size_t k = j->lo; k < j->hi && ctx && scratch; k++) {
        size_t i = j->slots ? j->slots[k] : k;
        dpzo_lmo p;
        dpzo_lmo_grid_point(S->grid, S->reps[i], &p);
        if (j->what == 3) {
            if (isnan(S->arr[ARR_LOW2][i]))
                screen(S, &p, ctx, &S->arr[ARR_LOW2][i], &S->arr[ARR_UP2][i], scratch);
        } else if (j->what == 0) {
            if (isnan(S->arr[ARR_OBJ][i]))
                S->arr[ARR_OBJ][i] = objective_value(S, &p, ctx);
        } else if (isnan(S->arr[ARR_EPS][i])) {
            double order = 0.0;
            if (j->what == 1) {
                S->arr[ARR_EPS][i] = paper_eps_tabled(S, S->reps[i], &order);
            } else {
                double lo;
                sound_bracket(S, &p, ctx, &S->arr[ARR_EPS][i], &lo, &order, scratch);
                S->arr[ARR_LOW][i] = lo;
            }
            S->arr[ARR_ORDER][i] = order;
        }
    }
    free(scratch);
    dpzo_ctx_free(ctx);
    return NULL;
}

/* ---- checkpoints ---------------------------------------------------------------- */

#define CKPT_MAGIC "DPZOSRC3" /* 2: the PLD arrays; 3: the SHA-256 */

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fingerprint(const search *S)
{
    const dpzo_lmo_search_options *o = S->o;
    uint64_t h = 1469598103934665603ULL;
    int paper = o->paper != 0, obj = (int)o->objective, pld = o->pld != 0;
    h = fnv(h, &paper, sizeof paper);
    h = fnv(h, &pld, sizeof pld);
    if (pld)
        h = fnv(h, &o->pld_max, sizeof o->pld_max);
    h = fnv(h, &obj, sizeof obj);
    h = fnv(h, &o->usefulness_gamma, sizeof(double));
    h = fnv(h, &o->epsilon, sizeof(double)); /* brackets mark pruned entries per target */
    const dpzo_lmo_account_options *a = &o->account;
    int s = (int)a->sampling, b = (int)a->bound;
    h = fnv(h, &a->sensitivity, sizeof(double));
    h = fnv(h, &s, sizeof s);
    h = fnv(h, &b, sizeof b);
    h = fnv(h, &a->q, sizeof(double));
    h = fnv(h, &a->batch, sizeof a->batch);
    h = fnv(h, &a->n, sizeof a->n);
    h = fnv(h, &a->steps, sizeof a->steps);
    h = fnv(h, &a->delta, sizeof(double));
    h = fnv(h, &a->max_order, sizeof a->max_order);
    h = fnv(h, &a->vector_l1, sizeof a->vector_l1);
    size_t n = dpzo_lmo_grid_size(S->grid);
    for (size_t i = 0; i < S->n; i++) {
        dpzo_lmo p;
        dpzo_lmo_grid_point(S->grid, S->reps[i], &p);
        h = fnv(h, &p, sizeof p);
    }
    h = fnv(h, &n, sizeof n);
    return h;
}

/* The file (docs/lmo.md, docs/files.md): magic "DPZOSRC3", the search's fingerprint (u64),
 * the candidate count n (u64), the N_ARR arrays of n doubles, all in host byte order, then
 * the SHA-256 of everything before it. Written atomically (common/dpzo_io.c: a temporary
 * created exclusively beside it, fsync, rename, fsync of the folder); read back only when
 * it is a regular file of the exact size, its checksum holds, it belongs to this search and
 * every cached value lies in its domain. */
#define CKPT_HEAD 24u
#define CKPT_DIGEST 32u

static size_t ckpt_size(size_t n) { return CKPT_HEAD + (size_t)N_ARR * 8 * n + CKPT_DIGEST; }

static int save_checkpoint(search *S)
{
    const char *path = S->o->checkpoint;
    if (path == NULL)
        return 0;
    size_t size = ckpt_size(S->n);
    unsigned char *buf = malloc(size);
    if (buf == NULL) {
        S->save_failed = 1;
        snprintf(S->save_err, sizeof S->save_err, "search checkpoint '%s': out of memory (%zu "
                 "bytes)", path, size);
        return -1;
    }
    uint64_t n = S->n;
    memcpy(buf, CKPT_MAGIC, 8);
    memcpy(buf + 8, &S->fingerprint, 8);
    memcpy(buf + 16, &n, 8);
    for (int k = 0; k < N_ARR; k++)
        memcpy(buf + CKPT_HEAD + (size_t)k * 8 * S->n, S->arr[k], 8 * S->n);
    dpzo__sha256 h;
    dpzo__sha256_init(&h);
    dpzo__sha256_update(&h, buf, size - CKPT_DIGEST);
    dpzo__sha256_final(&h, buf + size - CKPT_DIGEST);
    int rc = dpzo_io_write_file(path, "search checkpoint", buf, size, 0, S->save_err,
                                sizeof S->save_err);
    free(buf);
    S->save_failed = rc != 0;
    if (rc != 0)
        return -1;
    S->t_last_save = now_s();
    return 0;
}

/* A cached value: NaN (not computed) or in [lo, +inf]. */
static int in_domain(double v, double lo) { return isnan(v) || v >= lo; }

/* Every cached value of slot i in its domain, and the pairs that bracket a quantity in
 * order; 0 when they hold. */
static int slot_valid(const search *S, size_t i)
{
    double *const *a = S->arr;
    /* ARR_OBJ: any value (-inf marks a point the objective rules out); the winner's
     * statistics are recomputed anyway. Paper mode's ARR_EPS is the released code's number
     * (bug-compatible, no sign guaranteed); the winner's is recomputed too. */
    if ((!S->o->paper && !in_domain(a[ARR_EPS][i], 0)) || !in_domain(a[ARR_LOW][i], 0) ||
        !in_domain(a[ARR_BEST][i], 0) || !in_domain(a[ARR_ORDER][i], 0) ||
        !in_domain(a[ARR_LOW2][i], 0) || !in_domain(a[ARR_UP2][i], 0) ||
        !in_domain(a[ARR_PLD_UP][i], 0) || !in_domain(a[ARR_PLD_LO][i], 0))
        return -1;
    /* same arithmetic on smaller inputs: these brackets are ordered by construction */
    if ((!S->o->paper && a[ARR_LOW][i] > a[ARR_EPS][i]) || a[ARR_LOW2][i] > a[ARR_UP2][i])
        return -1;
    double pn = a[ARR_PLD_N][i];
    int pld_set = !isnan(pn);
    if (pld_set != !isnan(a[ARR_PLD_UP][i]) || pld_set != !isnan(a[ARR_PLD_LO][i]))
        return -1;
    if (pld_set && !(pn == 1.0 || pn == 2.0))
        return -1;
    return 0;
}

/* 1: loaded; 0: no checkpoint file; -1: refused, with the reason in ctx. */
static int load_checkpoint(search *S, dpzo_ctx *ctx)
{
    const char *path = S->o->checkpoint;
    if (path == NULL || (access(path, F_OK) != 0 && errno == ENOENT))
        return 0;
    const size_t want = ckpt_size(S->n);
    char err[DPZO_IO_ERRMAX];
    long long size = 0;
    int fd = dpzo_io_open_read(path, "search checkpoint", DPZO_IO_LIMIT_CHECKPOINT, &size, err,
                               sizeof err);
    if (fd < 0) {
        dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
        return -1;
    }
    unsigned char head[CKPT_HEAD];
    size_t got = 0;
    while (got < sizeof head) {
        ssize_t r = read(fd, head + got, sizeof head - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got < 8 ? memcmp(head, CKPT_MAGIC, got) != 0 : memcmp(head, CKPT_MAGIC, 8) != 0) {
        dpzo__fail(ctx, DPZO_EINVAL,
                   "checkpoint %s: not a dpzo search checkpoint of this version (magic is not "
                   "%s); remove it or choose another file",
                   path, CKPT_MAGIC);
        return -1;
    }
    if ((size_t)size != want) {
        uint64_t n_file = 0;
        if (got == sizeof head)
            memcpy(&n_file, head + 16, 8);
        if (got == sizeof head && n_file != S->n && n_file <= (uint64_t)SIZE_MAX / 128 &&
            (uint64_t)size == ckpt_size((size_t)n_file))
            dpzo__fail(ctx, DPZO_EINVAL,
                       "checkpoint %s belongs to a different search (%llu distinct "
                       "distributions, this search has %zu); remove it or choose another file",
                       path, (unsigned long long)n_file, S->n);
        else
            dpzo__fail(ctx, DPZO_EINVAL,
                       "checkpoint %s: %lld bytes, a checkpoint of this search has %zu: "
                       "truncated or corrupted; remove it to start afresh",
                       path, size, want);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    if (dpzo_io_read_file(path, "search checkpoint", want, &text, &len, err, sizeof err) != 0) {
        dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
        return -1;
    }
    unsigned char *buf = (unsigned char *)text, digest[CKPT_DIGEST];
    int rc = 1;
    if (len != want) {
        dpzo__fail(ctx, DPZO_EINVAL, "checkpoint %s: changed while being read", path);
        rc = -1;
    }
    if (rc == 1) {
        dpzo__sha256 h;
        dpzo__sha256_init(&h);
        dpzo__sha256_update(&h, buf, want - CKPT_DIGEST);
        dpzo__sha256_final(&h, digest);
        if (memcmp(digest, buf + want - CKPT_DIGEST, CKPT_DIGEST) != 0) {
            dpzo__fail(ctx, DPZO_EINVAL,
                       "checkpoint %s: SHA-256 checksum mismatch: the file is corrupted; "
                       "remove it to start afresh",
                       path);
            rc = -1;
        }
    }
    uint64_t fp = 0, n = 0;
    if (rc == 1) {
        memcpy(&fp, buf + 8, 8);
        memcpy(&n, buf + 16, 8);
        if (fp != S->fingerprint || n != S->n) {
            dpzo__fail(ctx, DPZO_EINVAL,
                       "checkpoint %s belongs to a different search (other grid or options); "
                       "remove it or choose another file",
                       path);
            rc = -1;
        }
    }
    if (rc == 1) {
        for (int k = 0; k < N_ARR; k++)
            memcpy(S->arr[k], buf + CKPT_HEAD + (size_t)k * 8 * S->n, 8 * S->n);
        for (size_t i = 0; i < S->n && rc == 1; i++)
            if (slot_valid(S, i) != 0) {
                dpzo__fail(ctx, DPZO_EINVAL,
                           "checkpoint %s: the cached values of candidate %zu are out of their "
                           "domain (eps %g, low %g, best %g, order %g, pld %g..%g over %g "
                           "runs): refusing it; remove it to start afresh",
                           path, i, S->arr[ARR_EPS][i], S->arr[ARR_LOW][i],
                           S->arr[ARR_BEST][i], S->arr[ARR_ORDER][i], S->arr[ARR_PLD_LO][i],
                           S->arr[ARR_PLD_UP][i], S->arr[ARR_PLD_N][i]);
                rc = -1;
            }
        if (rc != 1)
            for (int k = 0; k < N_ARR; k++)
                for (size_t i = 0; i < S->n; i++)
                    S->arr[k][i] = NAN;
    }
    free(text);
    return rc;
}

/* A resumed search took cached numbers from a file: before the winner is reported, its
 * epsilon is computed again from scratch (the exact RDP accountant, and the PLD one when
 * the PLD proved it; paper mode: the code epsilon from its tables). A cache that claimed
 * less than the fresh value is refused, so a reported bound never rests on the file. */
static dpzo_status reprove_winner(dpzo_ctx *ctx, search *S, size_t win, double *eps,
                                  double *order, int by_pld)
{
    dpzo_lmo p;
    dpzo_lmo_grid_point(S->grid, S->reps[win], &p);
    double fresh, ford = 0.0;
    if (S->o->paper) {
        fresh = paper_eps_tabled(S, S->reps[win], &ford);
    } else {
        dpzo_lmo_account_result r;
        dpzo_status st = dpzo_lmo_epsilon(ctx, &p, &S->o->account, &r);
        if (st)
            return st;
        fresh = r.epsilon;
        ford = r.order;
        for (int g = 0; by_pld && g < 2; g++) {
            const double grids[2] = {1e-3, 1e-4};
            dpzo_pld_result pr;
            st = dpzo_lmo_pld_epsilon(ctx, &p, &S->o->account, grids[g], &pr);
            if (st == DPZO_ENOCONV)
                break;
            if (st)
                return st;
            fresh = fmin(fresh, pr.epsilon_upper);
            if (fresh <= S->o->epsilon)
                break;
        }
    }
    if (!(fresh <= *eps))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "checkpoint %s: its cached epsilon %.17g for the chosen noise is below "
                          "the recomputed %.17g: the checkpoint is corrupt; remove it to start "
                          "afresh",
                          S->o->checkpoint, *eps, fresh);
    if (!S->o->paper && *eps == fresh)
        *order = ford;
    return DPZO_OK;
}

/* ---- driver ---------------------------------------------------------------------- */

static unsigned thread_count(const dpzo_lmo_search_options *o)
{
    if (o->threads > 0)
        return o->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

static void report(search *S, const char *phase, double frac, double t0)
{
    if (S->o->progress == NULL)
        return;
    double el = now_s() - t0;
    double eta = frac > 0.0 && frac < 1.0 ? el * (1.0 - frac) / frac : frac >= 1.0 ? 0.0 : -1.0;
    S->o->progress(S->o->progress_user, phase, frac, eta);
}

/* Fills arrays for slots [lo, hi) in parallel. */
static void run_parallel_on(search *S, size_t lo, size_t hi, int what, const size_t *slots)
{
    unsigned nt = thread_count(S->o);
    if (hi <= lo)
        return;
    if (nt > hi - lo)
        nt = (unsigned)(hi - lo);
    if (nt <= 1) {
        job j = {S, lo, hi, what, slots};
        worker(&j);
        return;
    }
    pthread_t th[64];
    job jobs[64];
    int started[64] = {0};
    size_t per = (hi - lo + nt - 1) / nt;
    for (unsigned t = 0; t < nt; t++) {
        size_t a = lo + t * per, b = a + per < hi ? a + per : hi;
        jobs[t] = (job){S, a, a < b ? b : a, what, slots};
        if (a >= b)
            continue;
        started[t] = pthread_create(&th[t], NULL, worker, &jobs[t]) == 0;
        if (!started[t])
            worker(&jobs[t]);
    }
    for (unsigned t = 0; t < nt; t++)
        if (started[t])
            pthread_join(th[t], NULL);
}

static void run_parallel(search *S, size_t lo, size_t hi, int what)
{
    run_parallel_on(S, lo, hi, what, NULL);
}

/* Computes array `what` for all candidates in chunks; 1 if interrupted. */
static int phase_all(search *S, int what, const char *name)
{
    const size_t chunk = 2048;
    double t0 = now_s();
    for (size_t lo = 0; lo < S->n; lo += chunk) {
        size_t hi = lo + chunk < S->n ? lo + chunk : S->n;
        run_parallel(S, lo, hi, what);
        report(S, name, (double)hi / S->n, t0);
        if (S->o->interrupt && *S->o->interrupt) {
            save_checkpoint(S);
            return 1;
        }
        if (now_s() - S->t_last_save > 5.0)
            save_checkpoint(S);
    }
    return 0;
}

static const search *sort_ctx; /* qsort has no user pointer; the search is single-call */
static const double *sort_key;

static int cmp_desc(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = sort_key[i], y = sort_key[j];
    if (x > y || (isnan(y) && !isnan(x)))
        return -1;
    if (x < y || (isnan(x) && !isnan(y)))
        return 1;
    return sort_ctx->reps[i] < sort_ctx->reps[j] ? -1 : sort_ctx->reps[i] > sort_ctx->reps[j];
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t *sorted_slots(const search *S, const double *key)
{
    size_t *ix = malloc(S->n * sizeof *ix);
    if (ix == NULL)
        return NULL;
    for (size_t i = 0; i < S->n; i++)
        ix[i] = i;
    pthread_mutex_lock(&sort_lock);
    sort_ctx = S;
    sort_key = key;
    qsort(ix, S->n, sizeof *ix, cmp_desc);
    pthread_mutex_unlock(&sort_lock);
    return ix;
}

/* The certified total epsilon of slot i with the best curve (cached in ARR_BEST). */
static dpzo_status certify(dpzo_ctx *ctx, search *S, size_t i, double *eps, double *order)
{
    if (!isnan(S->arr[ARR_BEST][i])) {
        *eps = S->arr[ARR_BEST][i];
        *order = S->arr[ARR_ORDER][i];
        return DPZO_OK;
    }
    dpzo_lmo p;
    dpzo_lmo_grid_point(S->grid, S->reps[i], &p);
    dpzo_lmo_account_result r;
    dpzo_status st = dpzo_lmo_epsilon(ctx, &p, &S->o->account, &r);
    if (st)
        return st;
    S->n_exact++;
    S->arr[ARR_BEST][i] = r.epsilon;
    S->arr[ARR_ORDER][i] = r.order;
    *eps = r.epsilon;
    *order = r.order;
    return DPZO_OK;
}

/* PLD feasibility of slot i (pld mode): a coarse grid first (cheap; decides most
 * candidates), the default grid when the coarse interval straddles the target. *eps: the
 * proven upper bound (+inf when unknown). Cached in ARR_PLD_*: a cached candidate is
 * replayed (its runs counted, the screen updated) exactly as it was computed. */
static dpzo_status pld_try(dpzo_ctx *ctx, search *S, size_t i, double *eps)
{
    if (isnan(S->arr[ARR_PLD_N][i])) {
        dpzo_lmo p;
        dpzo_lmo_grid_point(S->grid, S->reps[i], &p);
        const double grids[2] = {1e-3, 1e-4};
        double up = INFINITY, lo = 0.0, n = 0.0;
        for (int g = 0; g < 2; g++) {
            dpzo_pld_result r;
            n += 1.0;
            dpzo_status st = dpzo_lmo_pld_epsilon(ctx, &p, &S->o->account, grids[g], &r);
            if (st == DPZO_ENOCONV)
                break; /* boundaries not located: not provable by the PLD */
            if (st)
                return st;
            up = fmin(up, r.epsilon_upper);
            if (r.epsilon_lower > lo)
                lo = r.epsilon_lower;
            if (up <= S->o->epsilon || lo > S->o->epsilon)
                break;
        }
        S->arr[ARR_PLD_UP][i] = up;
        S->arr[ARR_PLD_LO][i] = lo;
        S->arr[ARR_PLD_N][i] = n;
    }
    S->n_pld += (size_t)S->arr[ARR_PLD_N][i];
    double ratio = S->arr[ARR_PLD_LO][i] / S->arr[ARR_LOW][i];
    if (ratio > 0.0 && ratio < S->pld_ratio)
        S->pld_ratio = ratio;
    *eps = S->arr[ARR_PLD_UP][i];
    return DPZO_OK;
}

static double pld_rho(const search *S)
{
    return isinf(S->pld_ratio) ? 1.0 / PLD_SCREEN : S->pld_ratio;
}

static dpzo_status check_search_options(dpzo_ctx *ctx, const dpzo_lmo_search_options *o)
{
    if ((unsigned)o->objective > DPZO_LMO_OBJ_MAX_EPSILON)
        return dpzo__fail(ctx, DPZO_EINVAL, "unknown objective %d", (int)o->objective);
    if (!(isfinite(o->epsilon) && o->epsilon > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "target epsilon must be finite and > 0, got %g",
                          o->epsilon);
    if (!(isfinite(o->usefulness_gamma) && o->usefulness_gamma > 0.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "usefulness gamma must be finite and > 0, got %g",
                          o->usefulness_gamma);
    if (o->pld && o->paper)
        return dpzo__fail(ctx, DPZO_EINVAL, "the PLD accountant and paper mode exclude each other");
    if (o->pld && o->account.vector_l1)
        return dpzo__fail(ctx, DPZO_EUNSUPPORTED,
                          "the PLD of LMO noise covers scalar queries only (clip l1 is not "
                          "supported; use the RDP accountant)");
    if (o->paper) {
        if (!(o->account.delta > 0.0 && o->account.delta < 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g",
                              o->account.delta);
        return DPZO_OK;
    }
    return dpzo__lmo_check_options(ctx, &o->account);
}

/* max-epsilon with the PLD: after the RDP walk (best so far `best`), candidates whose
 * predicted PLD epsilon rho * eps_low lies in [best, target / 0.95] and whose RDP upper
 * bracket exceeds best are tried, largest prediction first, within pld_max runs; the
 * largest PLD-proven epsilon <= target wins. key: scratch (n doubles). */
static dpzo_status max_epsilon_pld(dpzo_ctx *ctx, search *S, double *key, double best,
                                   long *win, double *win_eps, double *win_order, int *by_pld)
{
    const double target = S->o->epsilon;
    for (size_t i = 0; i < S->n; i++) {
        double low = S->arr[ARR_LOW][i], up = S->arr[ARR_EPS][i];
        key[i] = -INFINITY;
        if (isnan(low) || !(up > best) || (low <= target && up <= target && up <= best))
            continue;
        key[i] = low / PLD_SCREEN; /* the prediction before any ratio is known */
    }
    size_t *ix = sorted_slots(S, key);
    if (ix == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    dpzo_status st = DPZO_OK;
    for (size_t k = 0; k < S->n && S->n_pld + 2 <= S->o->pld_max; k++) {
        size_t i = ix[k];
        if (key[i] == -INFINITY)
            break;
        double pred = pld_rho(S) * S->arr[ARR_LOW][i];
        if (0.95 * pred > target || pred < best)
            continue;
        double e;
        if ((st = pld_try(ctx, S, i, &e)))
            break;
        if (e <= target && e > best) {
            best = e;
            *win = (long)i;
            *win_eps = e;
            *win_order = 0.0;
            *by_pld = 1;
        }
        if (S->o->interrupt && *S->o->interrupt) {
            save_checkpoint(S);
            st = DPZO_EINTERRUPTED;
            break;
        }
    }
    free(ix);
    return st;
}

static dpzo_status walk(dpzo_ctx *ctx, search *S, long *win, double *win_eps, double *win_order,
                        int *by_pld)
{
    const dpzo_lmo_search_options *o = S->o;
    double target = o->epsilon;
    *win = -1;
    if (o->paper) {
        /* every epsilon is known: best objective among eps < target, ties by grid order */
        double *key = malloc(S->n * sizeof *key);
        if (key == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        for (size_t i = 0; i < S->n; i++) {
            double e = S->arr[ARR_EPS][i];
            int feas = e < target;
            key[i] = !feas ? -INFINITY
                           : o->objective == DPZO_LMO_OBJ_MAX_EPSILON ? e : S->arr[ARR_OBJ][i];
        }
        size_t *ix = sorted_slots(S, key);
        if (ix == NULL) {
            free(key);
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        }
        if (S->n > 0 && key[ix[0]] > -INFINITY) {
            *win = (long)ix[0];
            *win_eps = S->arr[ARR_EPS][ix[0]];
            *win_order = S->arr[ARR_ORDER][ix[0]];
        }
        free(ix);
        free(key);
        return DPZO_OK;
    }
    const double margin = 1e-9 * target;
    if (o->objective != DPZO_LMO_OBJ_MAX_EPSILON) {
        /* lazily, in objective order: brackets for a block, screens for the undecided,
         * then the scan; stops at the first certified feasible candidate */
        size_t *ix = sorted_slots(S, S->arr[ARR_OBJ]);
        size_t *und = malloc(S->n * sizeof *und);
        if (ix == NULL || und == NULL) {
            free(ix);
            free(und);
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        }
        dpzo_status st = DPZO_OK;
        const size_t block = 1024;
        double t0 = now_s();
        int undefined = 0; /* reached candidates whose objective is undefined */
        for (size_t b0 = 0; b0 < S->n && *win < 0 && st == DPZO_OK && !undefined; b0 += block) {
            size_t b1 = b0 + block < S->n ? b0 + block : S->n;
            run_parallel_on(S, b0, b1, 2, ix);
            size_t nu = 0;
            for (size_t k = b0; k < b1; k++) {
                size_t i = ix[k];
                if (S->arr[ARR_LOW][i] <= target + margin && S->arr[ARR_EPS][i] > target)
                    und[nu++] = i;
            }
            run_parallel_on(S, 0, nu, 3, und);
            for (size_t k = b0; k < b1 && *win < 0; k++) {
                size_t i = ix[k];
                if (S->arr[ARR_OBJ][i] == -INFINITY || isnan(S->arr[ARR_OBJ][i])) {
                    undefined = 1; /* e.g. infinite variance: never preferred; sorted last */
                    break;
                }
                /* RDP rules it out (pld mode: unless the screen says the tighter PLD may
                 * still prove it) */
                double rdp_low = S->arr[ARR_LOW][i];
                if (!isnan(S->arr[ARR_LOW2][i]) && S->arr[ARR_LOW2][i] > rdp_low)
                    rdp_low = S->arr[ARR_LOW2][i];
                int rdp_out = rdp_low > target + margin;
                if (rdp_out && !(o->pld && 0.95 * pld_rho(S) * rdp_low <= target
                                 && S->n_pld + 2 <= o->pld_max))
                    continue;
                double e = INFINITY, ord = 0.0;
                int from_pld = 0;
                if (!rdp_out && (st = certify(ctx, S, i, &e, &ord)))
                    break;
                /* the PLD: for a winner (its bound is usually smaller) and, within the
                 * budget, for a candidate RDP cannot prove */
                if (o->pld && (e <= target || S->n_pld + 2 <= o->pld_max)) {
                    double ep;
                    if ((st = pld_try(ctx, S, i, &ep)))
                        break;
                    if (ep < e) {
                        e = ep;
                        ord = 0.0;
                        from_pld = 1;
                    }
                }
                if (e <= target) {
                    *win = (long)i;
                    *win_eps = e;
                    *win_order = ord;
                    *by_pld = from_pld;
                }
                if (o->interrupt && *o->interrupt)
                    break; /* saved and reported below */
            }
            report(S, "search", (double)b1 / S->n, t0);
            if (o->interrupt && *o->interrupt) {
                save_checkpoint(S);
                st = DPZO_EINTERRUPTED;
            } else if (now_s() - S->t_last_save > 5.0) {
                save_checkpoint(S);
            }
        }
        free(ix);
        free(und);
        return st;
    }
    /* max-epsilon: by decreasing min(eps_cheap, target) */
    double *key = malloc(S->n * sizeof *key);
    if (key == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    for (size_t i = 0; i < S->n; i++)
        key[i] = S->arr[ARR_LOW][i] > target + margin ? -INFINITY : fmin(S->arr[ARR_EPS][i], target);
    size_t *ix = sorted_slots(S, key);
    dpzo_status st = ix ? DPZO_OK : dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    double best = -INFINITY;
    for (size_t k = 0; ix && k < S->n; k++) {
        size_t i = ix[k];
        if (key[i] == -INFINITY || key[i] + margin < best)
            break;
        if (S->arr[ARR_EPS][i] > target) { /* undecided: screen first */
            if (isnan(S->arr[ARR_LOW2][i]))
                run_parallel_on(S, k, k + 1, 3, ix);
            /* the certified value may exceed the coarse screen's upper end by the fine
             * enclosure's width, T * DPZO_LMO_EXACT_TOL in RDP (x 2 for safety) */
            double slack = margin + 2.0 * (double)o->account.steps * DPZO_LMO_EXACT_TOL;
            if (S->arr[ARR_LOW2][i] > target + margin || S->arr[ARR_UP2][i] + slack < best)
                continue;
        }
        double e, ord;
        if ((st = certify(ctx, S, i, &e, &ord)))
            break;
        if (e <= target && e > best) {
            best = e;
            *win = (long)i;
            *win_eps = e;
            *win_order = ord;
        }
        if (o->interrupt && *o->interrupt) {
            save_checkpoint(S);
            st = DPZO_EINTERRUPTED;
            break;
        }
    }
    free(ix);
    if (st == DPZO_OK && o->pld)
        st = max_epsilon_pld(ctx, S, key, best, win, win_eps, win_order, by_pld);
    free(key);
    return st;
}

dpzo_status dpzo_lmo_search(dpzo_ctx *ctx, const dpzo_lmo_grid *grid,
                            const dpzo_lmo_search_options *opts, dpzo_lmo_search_result *out)
{
    if (grid == NULL || opts == NULL || out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "search: grid, options and result are required");
    dpzo_status st = check_search_options(ctx, opts);
    if (st)
        return st;
    search S;
    memset(&S, 0, sizeof S);
    S.grid = grid;
    S.o = opts;
    S.t_start = S.t_last_save = now_s();
    memset(out, 0, sizeof *out);
    if ((st = dpzo__lmo_grid_unique(ctx, grid, &S.reps, &S.class_size, &S.n)))
        return st;
    for (int k = 0; k < N_ARR; k++) {
        S.arr[k] = malloc((S.n ? S.n : 1) * sizeof(double));
        if (S.arr[k] == NULL) {
            st = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < S.n; i++)
            S.arr[k][i] = NAN;
    }
    S.fingerprint = fingerprint(&S);
    S.pld_ratio = INFINITY; /* none seen yet: 1 / PLD_SCREEN */
    dpzo__gsl_quiet(); /* once, before any worker thread runs GSL quadrature */
    int loaded = load_checkpoint(&S, ctx);
    if (loaded < 0) {
        st = DPZO_EINVAL;
        goto done;
    }
    S.resumed = loaded == 1;
    /* a checkpoint that cannot be written is refused before any work (a folder that does
     * not exist, a directory, a device: docs/files.md), not discovered after a kill */
    if (opts->checkpoint != NULL && save_checkpoint(&S) != 0) {
        st = dpzo__fail(ctx, DPZO_EINVAL, "cannot write the %s", S.save_err);
        goto done;
    }
    if (opts->paper && build_tables(&S) != 0) {
        st = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        goto done;
    }
    if (opts->objective != DPZO_LMO_OBJ_MAX_EPSILON && phase_all(&S, 0, "objective")) {
        st = DPZO_EINTERRUPTED;
        goto done;
    }
    int lazy = !opts->paper && opts->objective != DPZO_LMO_OBJ_MAX_EPSILON;
    if (!lazy && phase_all(&S, opts->paper ? 1 : 2, "epsilon")) {
        st = DPZO_EINTERRUPTED;
        goto done;
    }
    long win;
    double weps = NAN, word = 0.0;
    int by_pld = 0;
    out->pld_lower = NAN;
    if ((st = walk(ctx, &S, &win, &weps, &word, &by_pld)))
        goto done;
    if (S.resumed && win >= 0 && (st = reprove_winner(ctx, &S, (size_t)win, &weps, &word, by_pld)))
        goto done;
    save_checkpoint(&S);
    out->n_points = dpzo_lmo_grid_size(grid);
    out->n_unique = S.n;
    out->n_exact = S.n_exact;
    out->n_pld = S.n_pld;
    out->resumed = S.resumed;
    if (win < 0) {
        st = dpzo__fail(ctx, DPZO_EINFEASIBLE,
                        "no grid point meets epsilon %s %g (%zu distinct distributions tried)",
                        opts->paper ? "<" : "<=", opts->epsilon, S.n);
        goto done;
    }
    out->index = S.reps[win];
    out->class_size = S.class_size[win];
    dpzo_lmo_grid_point(grid, out->index, &out->lmo);
    out->epsilon = weps;
    out->order = word;
    out->by_pld = by_pld;
    if (by_pld)
        out->pld_lower = S.arr[ARR_PLD_LO][win];
    dpzo_lmo_stats stats;
    if ((st = dpzo_lmo_stats_compute(ctx, &out->lmo, opts->usefulness_gamma, &stats)))
        goto done;
    out->usefulness = stats.usefulness;
    out->mean_abs = stats.mean_abs;
    out->variance = stats.variance;
    switch (opts->objective) {
    case DPZO_LMO_OBJ_USEFULNESS:
        out->objective_value = stats.usefulness;
        break;
    case DPZO_LMO_OBJ_MEAN_ABS:
        out->objective_value = stats.mean_abs;
        break;
    case DPZO_LMO_OBJ_VARIANCE:
        out->objective_value = stats.variance;
        break;
    default:
        out->objective_value = weps;
    }
    report(&S, "done", 1.0, S.t_start);
done:
    /* an interrupted search says whether its progress was saved (the last write of the
     * checkpoint, at the interruption, succeeded) */
    if (st == DPZO_EINTERRUPTED) {
        if (opts->checkpoint == NULL)
            dpzo__fail(ctx, st, "interrupted; nothing was saved");
        else if (S.save_failed)
            dpzo__fail(ctx, st, "interrupted; the progress was NOT saved: cannot write the %s",
                       S.save_err);
        else
            dpzo__fail(ctx, st, "interrupted; progress saved in '%s'", opts->checkpoint);
    }
    out->seconds = now_s() - S.t_start;
    for (int k = 0; k < N_ARR; k++)
        free(S.arr[k]);
    free(S.tg);
    free(S.te);
    free(S.tu);
    free(S.reps);
    free(S.class_size);
    return st;
}
