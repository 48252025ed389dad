/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/grid.c: grids of LMO parameters (presets and JSON) and their
 * deduplication.
 *
 * The presets are the released search's grid (spec 3.2): weights np.linspace(0.1, 0.9, 9)
 * (reproduced bit for bit: i * 0.1 + 0.1 with numpy's step, the last one exactly 0.9),
 * (theta, k) in {(1,2), (2,2), (3,2), (5,1), (9,0.5), (7.5,1), (0.5,1)},
 * lam in {0.1, 0.5, 1, 5}, and U(ua, ub) for (ub, ua) in {(1,0), (2,1)} ("paper-script",
 * 40,824 points) or {(b, b-1): b = 1..9} ("paper", 183,708 points).
 *
 * Two grid points define the same distribution when (wG theta, k, wE / lam, wU ua,
 * wU ub) agree (a zero weight drops its component's parameters); the key compares
 * these products rounded to 12 significant digits, because 0.3 * 3 and 0.9 * 1 differ
 * in the last bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "dpzo_json.h"
#include "lmo_internal.h"
#include "lmo_search.h"

struct dpzo_lmo_grid {
    char name[32];
    double *wg, *we, *wu, *gscale, *gshape, *rate, *ulow, *uhigh;
    size_t nwg, nwe, nwu, ngam, nrate, nuni;
};

size_t dpzo_lmo_grid_size(const dpzo_lmo_grid *g)
{
    return g->nwg * g->nwe * g->nwu * g->ngam * g->nrate * g->nuni;
}

const char *dpzo_lmo_grid_name(const dpzo_lmo_grid *g) { return g->name; }

void dpzo_lmo_grid_point(const dpzo_lmo_grid *g, size_t index, dpzo_lmo *out)
{
    size_t i = index;
    size_t iwg = i % g->nwg;
    i /= g->nwg;
    size_t iwe = i % g->nwe;
    i /= g->nwe;
    size_t iwu = i % g->nwu;
    i /= g->nwu;
    size_t igam = i % g->ngam;
    i /= g->ngam;
    size_t irate = i % g->nrate;
    i /= g->nrate;
    size_t iuni = i;
    out->gamma_weight = g->wg[iwg];
    out->exp_weight = g->we[iwe];
    out->uniform_weight = g->wu[iwu];
    out->gamma_scale = g->gscale[igam];
    out->gamma_shape = g->gshape[igam];
    out->exp_rate = g->rate[irate];
    out->uniform_low = g->ulow[iuni];
    out->uniform_high = g->uhigh[iuni];
}

void dpzo_lmo_grid_free(dpzo_lmo_grid *g)
{
    if (g == NULL)
        return;
    free(g->wg);
    free(g->we);
    free(g->wu);
    free(g->gscale);
    free(g->gshape);
    free(g->rate);
    free(g->ulow);
    free(g->uhigh);
    free(g);
}

static int alloc_lists(dpzo_lmo_grid *g)
{
    g->wg = malloc(g->nwg * sizeof(double));
    g->we = malloc(g->nwe * sizeof(double));
    g->wu = malloc(g->nwu * sizeof(double));
    g->gscale = malloc(g->ngam * sizeof(double));
    g->gshape = malloc(g->ngam * sizeof(double));
    g->rate = malloc(g->nrate * sizeof(double));
    g->ulow = malloc(g->nuni * sizeof(double));
    g->uhigh = malloc(g->nuni * sizeof(double));
    return g->wg && g->we && g->wu && g->gscale && g->gshape && g->rate && g->ulow && g->uhigh;
}

dpzo_status dpzo_lmo_grid_preset(dpzo_ctx *ctx, const char *name, dpzo_lmo_grid **out)
{
    int extended;
    if (name != NULL && strcmp(name, "paper") == 0)
        extended = 1;
    else if (name != NULL && strcmp(name, "paper-script") == 0)
        extended = 0;
    else
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "unknown grid preset '%s' (expected paper or paper-script)",
                          name ? name : "(null)");
    dpzo_lmo_grid *g = calloc(1, sizeof *g);
    if (g == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    snprintf(g->name, sizeof g->name, "%s", name);
    g->nwg = g->nwe = g->nwu = 9;
    g->ngam = 7;
    g->nrate = 4;
    g->nuni = extended ? 9 : 2;
    if (!alloc_lists(g)) {
        dpzo_lmo_grid_free(g);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    /* np.linspace(0.1, 0.9, 9): step = (0.9 - 0.1) / 8, y = i * step + 0.1, y[-1] = 0.9 */
    double step = (0.9 - 0.1) / 8.0;
    for (int i = 0; i < 9; i++) {
        double w = i == 8 ? 0.9 : i * step + 0.1;
        g->wg[i] = g->we[i] = g->wu[i] = w;
    }
    static const double theta_k[7][2] = {{1, 2}, {2, 2}, {3, 2}, {5, 1}, {9, 0.5}, {7.5, 1}, {0.5, 1}};
    for (int i = 0; i < 7; i++) {
        g->gscale[i] = theta_k[i][0];
        g->gshape[i] = theta_k[i][1];
    }
    static const double lams[4] = {0.1, 0.5, 1, 5};
    memcpy(g->rate, lams, sizeof lams);
    for (size_t i = 0; i < g->nuni; i++) {
        double b = (double)(i + 1);
        g->uhigh[i] = b;
        g->ulow[i] = b - 1.0;
    }
    *out = g;
    return DPZO_OK;
}

/* Reads a JSON array of numbers (pairs = 0) or of [x, y] pairs into a / b. */
static dpzo_status read_list(dpzo_ctx *ctx, const cJSON *root, const char *key, int pairs,
                             double **a, double **b, size_t *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return dpzo__fail(ctx, DPZO_EPARSE, "grid: \"%s\" must be a non-empty array", key);
    *n = (size_t)cJSON_GetArraySize(arr);
    *a = malloc(*n * sizeof(double));
    if (pairs)
        *b = malloc(*n * sizeof(double));
    if (*a == NULL || (pairs && *b == NULL))
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (pairs) {
            if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
                !cJSON_IsNumber(cJSON_GetArrayItem(it, 0)) ||
                !cJSON_IsNumber(cJSON_GetArrayItem(it, 1)))
                return dpzo__fail(ctx, DPZO_EPARSE,
                                  "grid: entry %zu of \"%s\" must be a pair of numbers", i, key);
            (*a)[i] = cJSON_GetArrayItem(it, 0)->valuedouble;
            (*b)[i] = cJSON_GetArrayItem(it, 1)->valuedouble;
        } else {
            if (!cJSON_IsNumber(it))
                return dpzo__fail(ctx, DPZO_EPARSE, "grid: entry %zu of \"%s\" must be a number",
                                  i, key);
            (*a)[i] = it->valuedouble;
        }
        i++;
    }
    return DPZO_OK;
}

dpzo_status dpzo_lmo_grid_from_json(dpzo_ctx *ctx, const char *json, dpzo_lmo_grid **out)
{
    cJSON *root = NULL;
    char jerr[DPZO_ERRMSG_SIZE];
    if (json != NULL && dpzo_json_parse(json, strlen(json), &root, NULL, jerr, sizeof jerr) ==
                            DPZO_JSON_REFUSED)
        return dpzo__fail(ctx, DPZO_EPARSE, "grid: %s", jerr);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return dpzo__fail(ctx, DPZO_EPARSE, "grid: not a JSON object");
    }
    static const char *const known[] = {"gamma_weight", "exp_weight", "uniform_weight",
                                        "gamma", "exp_rate", "uniform"};
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        int ok = 0;
        for (int k = 0; k < 6; k++)
            ok |= strcmp(it->string, known[k]) == 0;
        if (!ok) {
            dpzo_status st = dpzo__fail(ctx, DPZO_EPARSE,
                                        "grid: unknown key \"%s\" (expected gamma_weight, "
                                        "exp_weight, uniform_weight, gamma, exp_rate, uniform)",
                                        it->string);
            cJSON_Delete(root);
            return st;
        }
    }
    dpzo_lmo_grid *g = calloc(1, sizeof *g);
    if (g == NULL) {
        cJSON_Delete(root);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    snprintf(g->name, sizeof g->name, "custom");
    dpzo_status st;
    if ((st = read_list(ctx, root, "gamma_weight", 0, &g->wg, NULL, &g->nwg)) ||
        (st = read_list(ctx, root, "exp_weight", 0, &g->we, NULL, &g->nwe)) ||
        (st = read_list(ctx, root, "uniform_weight", 0, &g->wu, NULL, &g->nwu)) ||
        (st = read_list(ctx, root, "gamma", 1, &g->gscale, &g->gshape, &g->ngam)) ||
        (st = read_list(ctx, root, "exp_rate", 0, &g->rate, NULL, &g->nrate)) ||
        (st = read_list(ctx, root, "uniform", 1, &g->ulow, &g->uhigh, &g->nuni))) {
        cJSON_Delete(root);
        dpzo_lmo_grid_free(g);
        return st;
    }
    cJSON_Delete(root);
    /* every point must be a valid distribution: check each list through one point */
    size_t total = dpzo_lmo_grid_size(g);
    if (total > (size_t)1 << 32) {
        dpzo_lmo_grid_free(g);
        return dpzo__fail(ctx, DPZO_EINVAL, "grid: %zu points is too many (max 2^32)", total);
    }
    dpzo_lmo p;
    for (size_t i = 0; i < total; i++) {
        dpzo_lmo_grid_point(g, i, &p);
        if ((st = dpzo_lmo_validate(ctx, &p))) {
            char msg[DPZO_ERRMSG_SIZE];
            snprintf(msg, sizeof msg, "%s", dpzo_ctx_errmsg(ctx));
            dpzo_lmo_grid_free(g);
            return dpzo__fail(ctx, st, "grid point %zu: %s", i, msg);
        }
    }
    *out = g;
    return DPZO_OK;
}

/* ---- deduplication ----------------------------------------------------------------- */

static double key_round(double x)
{
    if (x == 0.0 || !isfinite(x))
        return x;
    char buf[32];
    snprintf(buf, sizeof buf, "%.11e", x);
    return strtod(buf, NULL);
}

void dpzo__lmo_key(const dpzo_lmo *p, double key[5])
{
    int g = p->gamma_weight > 0.0, e = p->exp_weight > 0.0, u = p->uniform_weight > 0.0;
    key[0] = g ? key_round(p->gamma_weight * p->gamma_scale) : 0.0;
    key[1] = g ? p->gamma_shape : 0.0;
    key[2] = e ? key_round(p->exp_weight / p->exp_rate) : 0.0;
    key[3] = u ? key_round(p->uniform_weight * p->uniform_low) : 0.0;
    key[4] = u ? key_round(p->uniform_weight * p->uniform_high) : 0.0;
}

typedef struct {
    double key[5];
    size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    for (int i = 0; i < 5; i++) {
        if (x->key[i] < y->key[i])
            return -1;
        if (x->key[i] > y->key[i])
            return 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

dpzo_status dpzo__lmo_grid_unique(dpzo_ctx *ctx, const dpzo_lmo_grid *g, size_t **reps,
                                  size_t **class_size, size_t *n_unique)
{
    size_t n = dpzo_lmo_grid_size(g);
    keyed *k = malloc(n * sizeof *k);
    size_t *first = malloc(n * sizeof *first); /* first[i]: representative of point i */
    if (k == NULL || first == NULL) {
        free(k);
        free(first);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        dpzo_lmo p;
        dpzo_lmo_grid_point(g, i, &p);
        dpzo__lmo_key(&p, k[i].key);
        k[i].index = i;
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t i = 0; i < n; i++)
        first[i] = (size_t)-1;
    size_t head = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || memcmp(k[i].key, k[head].key, sizeof k[i].key) != 0)
            head = i;
        first[k[i].index] = k[head].index; /* sorted by index within a class */
    }
    free(k);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += first[i] == i;
    size_t *r = malloc((m ? m : 1) * sizeof *r), *cs = calloc(m ? m : 1, sizeof *cs);
    size_t *slot = malloc(n * sizeof *slot);
    if (r == NULL || cs == NULL || slot == NULL) {
        free(first);
        free(r);
        free(cs);
        free(slot);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (first[i] == i) {
            slot[i] = m;
            r[m++] = i;
        }
    for (size_t i = 0; i < n; i++)
        cs[slot[first[i]]]++;
    free(slot);
    free(first);
    *reps = r;
    *class_size = cs;
    *n_unique = m;
    return DPZO_OK;
}

void dpzo__lmo_grid_dims(const dpzo_lmo_grid *g, size_t dims[6])
{
    dims[0] = g->nwg;
    dims[1] = g->nwe;
    dims[2] = g->nwu;
    dims[3] = g->ngam;
    dims[4] = g->nrate;
    dims[5] = g->nuni;
}
