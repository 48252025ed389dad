/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/profile.c: noise profiles (dpzo/profile.h, docs/profile.md): the JSON
 * format, its validation and checksum, verification of the stated guarantee, and
 * Gaussian profiles calibrated to a target.
 *
 * The checksum is SHA-256 of a canonical text that anyone can recompute: keys sorted by
 * byte value, no whitespace, and each number written as the shortest "%.{p}g" (p <= 17)
 * that reads back as the same double (integers below 2^53 as integers). cJSON's own
 * number printer is not used for that: it accepts 15 digits that read back within a
 * relative DBL_EPSILON, so it does not always round-trip. The same rule writes the
 * file, so reading a profile and writing it again reproduces it byte for byte. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "dpzo_io.h"
#include "dpzo_json.h"
#include "internal.h"
#include "dpzo_sha256.h"

#define MAX_COUNT 9007199254740992.0 /* 2^53: counts are exact doubles in JSON */
#define PAPER_CLAIM "paper-claim (guarantee not established)"
#define PROVEN "proven-upper"

static const char *const ACCOUNTANTS_GAUSSIAN[] = {"rdp", "pld", "prv", NULL};
static const char *const ACCOUNTANTS_LMO[] = {"rdp", "pld", "paper", NULL};
static const char *const CLIPS_LMO[] = {"scalar", "l1", "l2-paper", NULL};
static const char *const BOUNDS[] = {"best", "mgf", "exact", "pure", NULL};
static const char *const LMO_KEYS[] = {"gamma_weight", "gamma_shape", "gamma_scale",
                                       "exp_weight",   "exp_rate",    "uniform_weight",
                                       "uniform_low",  "uniform_high", NULL};
static const char *const SAMPLINGS[] = {"poisson", "wor", "none", NULL};
static const char *const OBJECTIVES[] = {"usefulness", "mean-abs", "variance", "max-epsilon",
                                         NULL};

static int in_set(const char *s, const char *const *set)
{
    for (; *set != NULL; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

/* "a, b or c" for messages. */
static const char *set_text(const char *const *set, char *buf, size_t size)
{
    size_t n = 0, len = 0;
    while (set[n] != NULL)
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + len, size - len, "%s\"%s\"", sep, set[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* ---- the struct ------------------------------------------------------------------ */

void dpzo_profile_init(dpzo_profile *p)
{
    memset(p, 0, sizeof *p);
    p->noise_multiplier = NAN;
    p->sensitivity = NAN;
    p->queries_per_step = 1;
    p->sampling_rate = NAN;
    p->delta = NAN;
    p->epsilon = NAN;
    p->order = NAN;
    p->eps0 = NAN;
    p->objective_value = NAN;
    p->usefulness_gamma = NAN;
    p->usefulness = NAN;
    p->mean_abs = NAN;
    p->variance = NAN;
    p->grid_index = -1;
    snprintf(p->version, sizeof p->version, "%s", DPZO_VERSION);
}

void dpzo_profile_free(dpzo_profile *p)
{
    if (p == NULL)
        return;
    free(p->orders);
    free(p->rdp);
    p->orders = p->rdp = NULL;
    p->n_orders = 0;
}

dpzo_status dpzo_profile_set_rdp(dpzo_ctx *ctx, dpzo_profile *p, const double *orders,
                                 const double *rdp, size_t n)
{
    if (p == NULL || (n > 0 && (orders == NULL || rdp == NULL)))
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no RDP curve given");
    double *o = NULL, *r = NULL;
    if (n > 0) {
        o = malloc(n * sizeof *o);
        r = malloc(n * sizeof *r);
        if (o == NULL || r == NULL) {
            free(o);
            free(r);
            return dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
        }
        memcpy(o, orders, n * sizeof *o);
        memcpy(r, rdp, n * sizeof *r);
    }
    dpzo_profile_free(p);
    p->orders = o;
    p->rdp = r;
    p->n_orders = n;
    return DPZO_OK;
}

/* ---- validation of the struct ---------------------------------------------------- */

/* Whether dpzo_profile_verify recomputes the per-step curve (verify_gaussian, verify_lmo):
 * the curve of a sampled LMO step is not exposed by its accountant, and for l1 vectors only
 * the MGF bound of the scalar curve carries over. */
static int curve_recomputed(const dpzo_profile *p)
{
    if (p->kind == DPZO_NOISE_GAUSSIAN)
        return 1;
    return strcmp(p->accountant, "paper") != 0 && strcmp(p->sampling, "none") == 0
           && (strcmp(p->clip, "l1") != 0 || strcmp(p->bound, "mgf") == 0);
}

static void format_number(double x, char buf[40]);

/* A number in messages: as the file spells it (shortest round trip), inf, -inf or nan. */
static const char *num_text(double x, char buf[40])
{
    if (isnan(x))
        snprintf(buf, 40, "nan");
    else if (isinf(x))
        snprintf(buf, 40, "%s", x > 0 ? "inf" : "-inf");
    else
        format_number(x, buf);
    return buf;
}
#define NUM(x) num_text((x), (char[40]){0})

#define BAD(...) dpzo__fail(ctx, DPZO_EINVAL, "profile: " __VA_ARGS__)

static int fin_pos(double x) { return isfinite(x) && x > 0.0; }
static int fin_nonneg(double x) { return isfinite(x) && x >= 0.0; }

static int valid_timestamp(const char *s)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof pat - 1)
        return 0;
    for (size_t i = 0; pat[i]; i++)
        if (pat[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pat[i])
            return 0;
    int mo = (s[5] - '0') * 10 + s[6] - '0', d = (s[8] - '0') * 10 + s[9] - '0';
    int h = (s[11] - '0') * 10 + s[12] - '0', mi = (s[14] - '0') * 10 + s[15] - '0';
    int se = (s[17] - '0') * 10 + s[18] - '0';
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && se <= 60;
}

static dpzo_status validate_lmo(dpzo_ctx *ctx, const dpzo_lmo *l)
{
    const char *const *names = LMO_KEYS;
    const double v[8] = {l->gamma_weight, l->gamma_shape,    l->gamma_scale, l->exp_weight,
                         l->exp_rate,     l->uniform_weight, l->uniform_low, l->uniform_high};
    for (int i = 0; i < 8; i++)
        if (!isfinite(v[i]))
            return BAD("noise.lmo.%s must be a finite number, got %g", names[i], v[i]);
    static const int weights[3] = {0, 3, 5};
    for (int j = 0; j < 3; j++)
        if (!(v[weights[j]] >= 0.0))
            return BAD("noise.lmo.%s must be >= 0, got %s", names[weights[j]],
                       NUM(v[weights[j]]));
    dpzo_status st = dpzo_lmo_validate(ctx, l);
    if (st != DPZO_OK) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", dpzo_ctx_errmsg(ctx));
        return dpzo__fail(ctx, st, "profile: noise.lmo: %s", msg);
    }
    return DPZO_OK;
}

dpzo_status dpzo_profile_validate(dpzo_ctx *ctx, const dpzo_profile *p)
{
    char set[128];
    if (p == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no profile given");
    int lmo = p->kind == DPZO_NOISE_LMO;
    if (p->kind != DPZO_NOISE_GAUSSIAN && !lmo)
        return BAD("noise.kind must be \"gaussian\" or \"lmo\"");
    int paper = strcmp(p->accountant, "paper") == 0;
    /* noise */
    if (!lmo && !fin_pos(p->noise_multiplier))
        return BAD("noise.gaussian.noise_multiplier must be finite and > 0, got %s",
                   NUM(p->noise_multiplier));
    if (lmo) {
        dpzo_status st = validate_lmo(ctx, &p->lmo);
        if (st != DPZO_OK)
            return st;
    }
    if (!fin_pos(p->sensitivity))
        return BAD("noise.sensitivity must be finite and > 0, got %s", NUM(p->sensitivity));
    if (!lmo && strcmp(p->clip, "l2") != 0)
        return BAD("noise.clip must be \"l2\" for gaussian noise, got \"%s\"", p->clip);
    if (lmo && !in_set(p->clip, CLIPS_LMO))
        return BAD("noise.clip must be %s for lmo noise, got \"%s\"",
                   set_text(CLIPS_LMO, set, sizeof set), p->clip);
    if (strcmp(p->clip, "l2-paper") == 0 && !paper)
        return BAD("noise.clip \"l2-paper\" (L2 clipping with per-coordinate LMO noise) has no "
                   "proven guarantee: it is allowed only with accounting.accountant \"paper\"");
    if (p->queries_per_step != 1)
        return BAD("noise.queries_per_step must be 1 in schema version %d, got %u",
                   DPZO_PROFILE_SCHEMA_VERSION, p->queries_per_step);
    /* accounting */
    const char *const *acc = lmo ? ACCOUNTANTS_LMO : ACCOUNTANTS_GAUSSIAN;
    if (!in_set(p->accountant, acc))
        return BAD("accounting.accountant must be %s for %s noise, got \"%s\"",
                   set_text(acc, set, sizeof set), lmo ? "lmo" : "gaussian", p->accountant);
    if (!lmo && p->bound[0] != '\0')
        return BAD("accounting.bound is for lmo noise; it must be null for gaussian noise, "
                   "got \"%s\"", p->bound);
    if (lmo && (p->bound[0] != '\0' || !paper) && !in_set(p->bound, BOUNDS))
        return BAD("accounting.bound must be %s, got %s%s%s", set_text(BOUNDS, set, sizeof set),
                   p->bound[0] ? "\"" : "", p->bound[0] ? p->bound : "null",
                   p->bound[0] ? "\"" : "");
    if (lmo && !paper && strcmp(p->clip, "l1") == 0 && strcmp(p->bound, "exact") == 0)
        return BAD("accounting.bound \"exact\" is not known to hold for l1-clipped vectors "
                   "(noise.clip \"l1\"): use \"mgf\", \"pure\" or \"best\"");
    if (lmo && strcmp(p->accountant, "pld") == 0 && strcmp(p->clip, "scalar") != 0)
        return BAD("accounting.accountant \"pld\" (the PLD of the LMO noise) covers scalar "
                   "queries only: noise.clip must be \"scalar\", got \"%s\"", p->clip);
    if (!in_set(p->sampling, SAMPLINGS))
        return BAD("accounting.sampling must be %s, got \"%s\"",
                   set_text(SAMPLINGS, set, sizeof set), p->sampling);
    int wor = strcmp(p->sampling, "wor") == 0, poisson = strcmp(p->sampling, "poisson") == 0;
    const char *adj = wor ? "replace-one" : "add-remove";
    if (strcmp(p->adjacency, "add-remove") != 0 && strcmp(p->adjacency, "replace-one") != 0)
        return BAD("accounting.adjacency must be \"add-remove\" or \"replace-one\", got \"%s\"",
                   p->adjacency);
    if (strcmp(p->adjacency, adj) != 0)
        return BAD("accounting.adjacency must be \"%s\" with sampling \"%s\", got \"%s\"", adj,
                   p->sampling, p->adjacency);
    if (wor) {
        if (!(p->batch_size >= 1 && p->dataset_size >= p->batch_size
              && (double)p->dataset_size <= MAX_COUNT))
            return BAD("accounting.batch_size and dataset_size must satisfy 1 <= batch_size <= "
                       "dataset_size <= 2^53 with sampling \"wor\", got %llu and %llu",
                       (unsigned long long)p->batch_size, (unsigned long long)p->dataset_size);
        double q = (double)p->batch_size / (double)p->dataset_size;
        if (!(p->sampling_rate == q))
            return BAD("accounting.sampling_rate must be batch_size / dataset_size = %s with "
                       "sampling \"wor\", got %s", NUM(q), NUM(p->sampling_rate));
    } else {
        if (p->batch_size != 0 || p->dataset_size != 0)
            return BAD("accounting.batch_size and dataset_size must be null with sampling "
                       "\"%s\" (they describe fixed batches, sampling \"wor\")", p->sampling);
        if (poisson && !(p->sampling_rate >= 0.0 && p->sampling_rate <= 1.0))
            return BAD("accounting.sampling_rate must be in [0, 1], got %s", NUM(p->sampling_rate));
        if (!poisson && !(p->sampling_rate == 1.0))
            return BAD("accounting.sampling_rate must be 1 with sampling \"none\", got %s",
                       NUM(p->sampling_rate));
    }
    if (!(p->steps >= 1 && (double)p->steps <= MAX_COUNT))
        return BAD("accounting.steps must be an integer in [1, 2^53], got %llu",
                   (unsigned long long)p->steps);
    if (!(p->delta > 0.0 && p->delta < 1.0))
        return BAD("accounting.delta must be in (0, 1), got %s", NUM(p->delta));
    if (!fin_nonneg(p->epsilon))
        return BAD("accounting.epsilon must be finite and >= 0, got %s", NUM(p->epsilon));
    const char *eb = paper ? PAPER_CLAIM : PROVEN;
    if (strcmp(p->epsilon_bound, eb) != 0)
        return BAD("accounting.epsilon_bound must be \"%s\" with accountant \"%s\", got \"%s\"",
                   eb, p->accountant, p->epsilon_bound);
    if (!isnan(p->order) && !(p->order > 1.0 && p->order <= DPZO_MAX_ORDER))
        return BAD("accounting.order must be null or in (1, 1e6], got %s", NUM(p->order));
    if (!lmo && !isnan(p->eps0))
        return BAD("accounting.eps0 is for lmo noise; it must be null for gaussian noise");
    if (lmo && !isnan(p->eps0) && !fin_nonneg(p->eps0))
        return BAD("accounting.eps0 must be null or finite and >= 0, got %s", NUM(p->eps0));
    if (p->n_orders > 0) {
        if (p->orders == NULL || p->rdp == NULL)
            return BAD("accounting.rdp: %zu orders but no values", p->n_orders);
        for (size_t i = 0; i < p->n_orders; i++) {
            double a = p->orders[i];
            if (!(a > 1.0 && a <= DPZO_MAX_ORDER))
                return BAD("accounting.rdp.orders[%zu] must be in (1, 1e6], got %s", i, NUM(a));
            if (i > 0 && !(a > p->orders[i - 1]))
                return BAD("accounting.rdp.orders must increase strictly: orders[%zu] = %s "
                           "follows %s", i, NUM(a), NUM(p->orders[i - 1]));
            if (!(p->rdp[i] >= 0.0))
                return BAD("accounting.rdp.per_step[%zu] must be >= 0 or \"inf\", got %s", i,
                           NUM(p->rdp[i]));
        }
        /* the work verification would do (issue 28, item 7): bounded before any of it */
        double sum = 0.0;
        for (size_t i = 0; i < p->n_orders; i++)
            sum += p->orders[i];
        double work = sum + (double)p->n_orders * DPZO_PROFILE_ORDER_WORK;
        if (curve_recomputed(p) && !(work <= DPZO_PROFILE_MAX_WORK))
            return BAD("accounting.rdp.orders asks verification for %s units of work (%zu "
                       "order%s summing to %s), above the limit of %s: each order alpha counts "
                       "alpha + %s (docs/profile.md, 2.2)",
                       NUM(work), p->n_orders, p->n_orders == 1 ? "" : "s", NUM(sum),
                       NUM(DPZO_PROFILE_MAX_WORK), NUM(DPZO_PROFILE_ORDER_WORK));
    }
    /* objective: what the noise search optimised; a calibrated Gaussian has none
     * (docs/profile.md, 2.3) */
    if (p->has_objective && p->kind == DPZO_NOISE_GAUSSIAN)
        return BAD("objective must be null for noise kind \"gaussian\" (only a searched LMO "
                   "noise has an objective), got an objective \"%s\"", p->objective);
    if (p->has_objective) {
        if (!in_set(p->objective, OBJECTIVES))
            return BAD("objective.name must be %s, got \"%s\"",
                       set_text(OBJECTIVES, set, sizeof set), p->objective);
        if (isnan(p->objective_value))
            return BAD("objective.value must be a number or \"inf\"");
        if (!isnan(p->usefulness_gamma) && !fin_pos(p->usefulness_gamma))
            return BAD("objective.usefulness_gamma must be null or finite and > 0, got %s",
                       NUM(p->usefulness_gamma));
        if (!isnan(p->usefulness) && !(p->usefulness >= 0.0 && p->usefulness <= 1.0))
            return BAD("objective.usefulness must be null or in [0, 1], got %s",
                       NUM(p->usefulness));
        if (!isnan(p->mean_abs) && !(p->mean_abs >= 0.0))
            return BAD("objective.mean_abs must be null, >= 0 or \"inf\", got %s", NUM(p->mean_abs));
        if (!isnan(p->variance) && !(p->variance >= 0.0))
            return BAD("objective.variance must be null, >= 0 or \"inf\", got %s",
                       NUM(p->variance));
        if (p->grid_index < -1)
            return BAD("objective.grid_index must be null or >= 0, got %ld", p->grid_index);
    }
    /* provenance */
    if (p->version[0] == '\0')
        return BAD("provenance.dpzo_version must not be empty");
    if (p->command[0] == '\0')
        return BAD("provenance.command must not be empty");
    if (!valid_timestamp(p->created))
        return BAD("provenance.created must be a UTC time \"YYYY-MM-DDTHH:MM:SSZ\", got \"%s\"",
                   p->created);
    return DPZO_OK;
}

/* ---- canonical text and checksum ------------------------------------------------- */

/* Integers below 2^53 as integers; otherwise the shortest %.{p}g that reads back as x. */
static void format_number(double x, char buf[40])
{
    if (x == floor(x) && fabs(x) < MAX_COUNT) {
        snprintf(buf, 40, "%.0f", x + 0.0); /* + 0.0: -0 prints as 0 */
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* A program may have set a locale with a decimal comma; JSON needs a point. */
    const char *dp = localeconv()->decimal_point;
    if (dp != NULL && dp[0] != '.' && dp[0] != '\0') {
        char *c = strchr(buf, dp[0]);
        if (c != NULL)
            *c = '.';
    }
}

/* Turns every number into a raw item holding its canonical text and, if `sort`, sorts
 * every object's members by key (byte order; stable, so repeated keys keep their order).
 * 0, or -1 when out of memory. */
static int canonicalize_tree(cJSON *item, int sort)
{
    if (cJSON_IsNumber(item)) {
        char buf[40];
        format_number(item->valuedouble, buf);
        char *raw = cJSON_malloc(strlen(buf) + 1);
        if (raw == NULL)
            return -1;
        strcpy(raw, buf);
        cJSON_free(item->valuestring); /* the literal dpzo_json_parse may have kept */
        item->type = cJSON_Raw;
        item->valuestring = raw;
        return 0;
    }
    if (!cJSON_IsObject(item) && !cJSON_IsArray(item))
        return 0;
    size_t n = 0;
    for (cJSON *c = item->child; c != NULL; c = c->next) {
        if (canonicalize_tree(c, sort))
            return -1;
        n++;
    }
    if (!sort || !cJSON_IsObject(item) || n < 2)
        return 0;
    cJSON **v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1;
    size_t i = 0;
    for (cJSON *c = item->child; c != NULL; c = c->next)
        v[i++] = c;
    for (i = 1; i < n; i++) { /* insertion sort: objects have a handful of members */
        cJSON *x = v[i];
        size_t j = i;
        for (; j > 0 && strcmp(v[j - 1]->string, x->string) > 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    /* relink, keeping cJSON's list invariants: child->prev is the last member */
    for (i = 0; i < n; i++) {
        v[i]->prev = i == 0 ? v[n - 1] : v[i - 1];
        v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    }
    item->child = v[0];
    free(v);
    return 0;
}

/* The canonical text of object `root` without its top-level "sha256" member. */
static dpzo_status canonical_text(dpzo_ctx *ctx, const cJSON *root, char **text)
{
    cJSON *copy = cJSON_Duplicate(root, 1);
    if (copy == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "sha256");
    *text = canonicalize_tree(copy, 1) ? NULL : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return *text == NULL ? dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory") : DPZO_OK;
}

static dpzo_status tree_checksum(dpzo_ctx *ctx, const cJSON *root, char sha[65], char **canon)
{
    char *text;
    dpzo_status st = canonical_text(ctx, root, &text);
    if (st != DPZO_OK)
        return st;
    dpzo__sha256_hex(text, strlen(text), sha);
    if (canon != NULL)
        *canon = text;
    else
        cJSON_free(text);
    return DPZO_OK;
}

dpzo_status dpzo_profile_checksum(dpzo_ctx *ctx, const char *json, char sha256[65],
                                  char **canonical)
{
    if (json == NULL || sha256 == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no JSON text given");
    cJSON *root = NULL;
    char jerr[DPZO_ERRMSG_SIZE];
    int jst = dpzo_json_parse(json, strlen(json), &root, NULL, jerr, sizeof jerr);
    if (jst == DPZO_JSON_REFUSED)
        return dpzo__fail(ctx, DPZO_EPARSE, "profile: %s", jerr);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return dpzo__fail(ctx, DPZO_EPARSE, "profile: not a JSON object");
    }
    char *canon = NULL;
    dpzo_status st = tree_checksum(ctx, root, sha256, canonical ? &canon : NULL);
    cJSON_Delete(root);
    if (st == DPZO_OK && canonical != NULL) {
        /* hand back memory from malloc, whatever allocator cJSON was built with */
        *canonical = strdup(canon);
        cJSON_free(canon);
        if (*canonical == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
    }
    return st;
}

/* ---- writing --------------------------------------------------------------------- */

/* Builds the tree; any failed allocation sets oom (and the tree is discarded). */
typedef struct {
    int oom;
} builder;

/* A number, null (NaN) or "inf" (+inf). Items are numbers here; canonicalize_tree() turns
 * them into their text. */
static cJSON *num_item(double v)
{
    if (isnan(v))
        return cJSON_CreateNull();
    if (isinf(v))
        return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

static cJSON *add_item(builder *b, cJSON *o, const char *key, cJSON *item)
{
    int ok = o != NULL && item != NULL
             && (key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item));
    if (!ok) {
        cJSON_Delete(item);
        b->oom = 1;
        return NULL;
    }
    return item;
}
static void add_num(builder *b, cJSON *o, const char *key, double v)
{
    add_item(b, o, key, num_item(v));
}
static void add_str(builder *b, cJSON *o, const char *key, const char *s)
{
    add_item(b, o, key, s[0] == '\0' && key != NULL ? cJSON_CreateNull() : cJSON_CreateString(s));
}
static cJSON *add_obj(builder *b, cJSON *o, const char *key)
{
    return add_item(b, o, key, cJSON_CreateObject());
}

static void add_lmo(builder *b, cJSON *l, const dpzo_lmo *m)
{
    const double v[8] = {m->gamma_weight,   m->gamma_shape, m->gamma_scale,
                         m->exp_weight,     m->exp_rate,    m->uniform_weight,
                         m->uniform_low,    m->uniform_high};
    for (int i = 0; i < 8; i++)
        add_num(b, l, LMO_KEYS[i], v[i]);
}

/* The profile as a cJSON tree, without "sha256"; NULL when out of memory. Keys are in
 * reading order here; only the checksum sorts them. Empty strings are written as null
 * (validation has made sure that only nullable strings can be empty). */
static cJSON *build_tree(const dpzo_profile *p)
{
    builder b = {0};
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return NULL;
    add_str(&b, root, "format", DPZO_PROFILE_FORMAT);
    add_num(&b, root, "schema_version", DPZO_PROFILE_SCHEMA_VERSION);
    cJSON *noise = add_obj(&b, root, "noise");
    int lmo = p->kind == DPZO_NOISE_LMO;
    add_str(&b, noise, "kind", lmo ? "lmo" : "gaussian");
    if (lmo) {
        add_lmo(&b, add_obj(&b, noise, "lmo"), &p->lmo);
    } else {
        add_num(&b, add_obj(&b, noise, "gaussian"), "noise_multiplier", p->noise_multiplier);
    }
    add_num(&b, noise, "sensitivity", p->sensitivity);
    add_str(&b, noise, "clip", p->clip);
    add_num(&b, noise, "queries_per_step", p->queries_per_step);
    if (lmo) /* the parameters again at the top level, where `dpzo lmo search` users look */
        add_lmo(&b, add_obj(&b, root, "lmo"), &p->lmo);
    cJSON *a = add_obj(&b, root, "accounting");
    add_str(&b, a, "accountant", p->accountant);
    add_str(&b, a, "bound", p->bound);
    add_str(&b, a, "sampling", p->sampling);
    add_num(&b, a, "sampling_rate", p->sampling_rate);
    add_num(&b, a, "batch_size", p->batch_size == 0 ? NAN : (double)p->batch_size);
    add_num(&b, a, "dataset_size", p->dataset_size == 0 ? NAN : (double)p->dataset_size);
    add_num(&b, a, "steps", (double)p->steps);
    add_num(&b, a, "delta", p->delta);
    add_str(&b, a, "adjacency", p->adjacency);
    add_num(&b, a, "epsilon", p->epsilon);
    add_str(&b, a, "epsilon_bound", p->epsilon_bound);
    add_num(&b, a, "order", p->order);
    add_num(&b, a, "eps0", p->eps0);
    if (p->n_orders == 0) {
        add_item(&b, a, "rdp", cJSON_CreateNull());
    } else {
        cJSON *r = add_obj(&b, a, "rdp");
        cJSON *o = add_item(&b, r, "orders", cJSON_CreateArray());
        cJSON *v = add_item(&b, r, "per_step", cJSON_CreateArray());
        for (size_t i = 0; i < p->n_orders; i++) {
            add_item(&b, o, NULL, num_item(p->orders[i]));
            add_item(&b, v, NULL, num_item(p->rdp[i]));
        }
    }
    if (!p->has_objective) {
        add_item(&b, root, "objective", cJSON_CreateNull());
    } else {
        cJSON *o = add_obj(&b, root, "objective");
        add_str(&b, o, "name", p->objective);
        add_num(&b, o, "value", p->objective_value);
        add_num(&b, o, "usefulness_gamma", p->usefulness_gamma);
        add_num(&b, o, "usefulness", p->usefulness);
        add_num(&b, o, "mean_abs", p->mean_abs);
        add_num(&b, o, "variance", p->variance);
        add_str(&b, o, "grid", p->grid);
        add_num(&b, o, "grid_index", p->grid_index < 0 ? NAN : (double)p->grid_index);
    }
    cJSON *pr = add_obj(&b, root, "provenance");
    add_str(&b, pr, "dpzo_version", p->version);
    add_str(&b, pr, "command", p->command);
    add_str(&b, pr, "created", p->created);
    if (b.oom) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static void utc_now(char buf[32])
{
    time_t t = time(NULL);
    struct tm tm;
    if (t == (time_t)-1 || gmtime_r(&t, &tm) == NULL
        || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, 32, "1970-01-01T00:00:00Z");
}

dpzo_status dpzo_profile_to_json(dpzo_ctx *ctx, dpzo_profile *p, char **json)
{
    if (json == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no output pointer given");
    *json = NULL;
    if (p != NULL && p->created[0] == '\0')
        utc_now(p->created);
    dpzo_status st = dpzo_profile_validate(ctx, p);
    if (st != DPZO_OK)
        return st;
    cJSON *root = build_tree(p);
    if (root == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
    char sha[65];
    st = tree_checksum(ctx, root, sha, NULL);
    char *text = NULL;
    if (st == DPZO_OK) {
        cJSON_AddStringToObject(root, "sha256", sha);
        text = canonicalize_tree(root, 0) ? NULL : cJSON_Print(root); /* keys in writing order */
        if (text == NULL || cJSON_GetObjectItemCaseSensitive(root, "sha256") == NULL)
            st = dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
    }
    cJSON_Delete(root);
    if (st == DPZO_OK) {
        *json = strdup(text);
        if (*json == NULL)
            st = dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
        else
            memcpy(p->sha256, sha, sizeof sha);
    }
    cJSON_free(text);
    return st;
}

dpzo_status dpzo_profile_write_file(dpzo_ctx *ctx, dpzo_profile *p, const char *path)
{
    if (path == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no file name given");
    char *json;
    dpzo_status st = dpzo_profile_to_json(ctx, p, &json);
    if (st != DPZO_OK)
        return st;
    /* atomic (common/dpzo_io.c, docs/files.md): a temporary created exclusively next to the
     * target (or its link's target), fsync'ed and renamed over it, so a reader never sees
     * half a profile and a failed or killed write leaves the old file intact; a device, FIFO
     * or "-" (stdout) is written directly, never replaced */
    size_t n = strlen(json);
    json[n] = '\n'; /* the text's terminator becomes the final newline */
    char err[DPZO_IO_ERRMAX];
    int bad = dpzo_io_write_file(path, "profile", json, n + 1, DPZO_IO_DIRECT, err, sizeof err);
    free(json);
    return bad ? dpzo__fail(ctx, DPZO_EINVAL, "%s", err) : DPZO_OK;
}

/* ---- reading --------------------------------------------------------------------- */

typedef struct {
    dpzo_ctx *ctx;
    dpzo_status st; /* first failure */
} reader;

#define OPTIONAL 1 /* absent or null allowed */
#define INF_OK 2   /* the string "inf" allowed (+inf) */

static int rfail(reader *r, dpzo_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rfail(reader *r, dpzo_status st, const char *fmt, ...)
{
    if (r->st == DPZO_OK) {
        char msg[DPZO_ERRMSG_SIZE];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        r->st = dpzo__fail(r->ctx, st, "profile: %s", msg);
    }
    return -1;
}

static const char *type_name(const cJSON *v)
{
    return cJSON_IsNull(v)     ? "null"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsArray(v)  ? "an array"
                               : "an object";
}

/* Checks that `obj` (at `path`) is an object with no unknown or repeated keys. */
static int check_keys(reader *r, const cJSON *obj, const char *path, const char *const *allowed)
{
    if (!cJSON_IsObject(obj))
        return rfail(r, DPZO_EPARSE, "%s must be an object, got %s", path, type_name(obj));
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        if (!in_set(c->string, allowed))
            return rfail(r, DPZO_EPARSE, "unknown field %s%s%s", path, *path ? "." : "",
                         c->string);
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (strcmp(d->string, c->string) == 0)
                return rfail(r, DPZO_EPARSE, "field %s%s%s appears twice", path, *path ? "." : "",
                             c->string);
    }
    return 0;
}

/* The member `key` of `obj`, or NULL when absent or null (an error unless OPTIONAL). */
static const cJSON *member(reader *r, const cJSON *obj, const char *path, const char *key,
                           int flags)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL || cJSON_IsNull(v)) {
        if (!(flags & OPTIONAL))
            rfail(r, DPZO_EPARSE, "%s field %s%s%s", v == NULL ? "missing" : "null", path,
                  *path ? "." : "", key);
        return NULL;
    }
    return v;
}

static double num_value(reader *r, const cJSON *v, const char *path, const char *key, int flags)
{
    if (cJSON_IsString(v) && (flags & INF_OK) && strcmp(v->valuestring, "inf") == 0)
        return INFINITY;
    if (!cJSON_IsNumber(v)) {
        rfail(r, DPZO_EPARSE, "%s%s%s must be a number%s, got %s", path, *path ? "." : "", key,
              flags & INF_OK ? " or \"inf\"" : "", type_name(v));
        return NAN;
    }
    if (!isfinite(v->valuedouble)) {
        rfail(r, DPZO_EPARSE, "%s%s%s: number out of the double range", path, *path ? "." : "",
              key);
        return NAN;
    }
    return v->valuedouble;
}

static double get_num(reader *r, const cJSON *obj, const char *path, const char *key, int flags)
{
    const cJSON *v = member(r, obj, path, key, flags);
    return v == NULL ? NAN : num_value(r, v, path, key, flags);
}

/* An integer field takes only a literal that is exactly its value (issue 28, item 9):
 * 9.007199254740993e15 is not 2^53. 0, or -1 after the failure. */
static int exact_integer(reader *r, const cJSON *v, const char *path, const char *key)
{
    char why[DPZO_ERRMSG_SIZE / 2];
    if (dpzo_json_check_integer(v, why, sizeof why) == 0)
        return 0;
    return rfail(r, DPZO_EPARSE, "%s%s%s must be an integer: %s", path, *path ? "." : "", key,
                 why);
}

/* A non-negative integer below 2^53; absent/null (OPTIONAL) gives `null_value`. */
static double get_int(reader *r, const cJSON *obj, const char *path, const char *key, int flags,
                      double null_value)
{
    const cJSON *v = member(r, obj, path, key, flags);
    if (v == NULL)
        return null_value;
    double x = num_value(r, v, path, key, 0);
    if (!isnan(x) && exact_integer(r, v, path, key) != 0)
        return NAN;
    if (!isnan(x) && !(x >= 0.0 && x <= MAX_COUNT && x == floor(x))) {
        rfail(r, DPZO_EPARSE, "%s.%s must be an integer in [0, 2^53], got %s", path, key, NUM(x));
        return NAN;
    }
    return x;
}

static void get_str(reader *r, const cJSON *obj, const char *path, const char *key, int flags,
                    char *buf, size_t size)
{
    buf[0] = '\0';
    const cJSON *v = member(r, obj, path, key, flags);
    if (v == NULL)
        return;
    if (!cJSON_IsString(v)) {
        rfail(r, DPZO_EPARSE, "%s%s%s must be a string, got %s", path, *path ? "." : "", key,
              type_name(v));
        return;
    }
    if (strlen(v->valuestring) >= size) {
        rfail(r, DPZO_EPARSE, "%s%s%s is longer than %zu bytes", path, *path ? "." : "", key,
              size - 1);
        return;
    }
    if (v->valuestring[0] == '\0' && (flags & OPTIONAL)) {
        rfail(r, DPZO_EPARSE, "%s%s%s must be null or a non-empty string", path,
              *path ? "." : "", key);
        return;
    }
    memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
}

static void read_noise(reader *r, const cJSON *root, dpzo_profile *p)
{
    static const char *const keys[] = {"kind",     "gaussian", "lmo", "sensitivity",
                                       "clip",     "queries_per_step", NULL};
    const cJSON *n = member(r, root, "", "noise", 0);
    if (n == NULL || check_keys(r, n, "noise", keys))
        return;
    char kind[16];
    get_str(r, n, "noise", "kind", 0, kind, sizeof kind);
    if (r->st != DPZO_OK)
        return;
    if (strcmp(kind, "gaussian") != 0 && strcmp(kind, "lmo") != 0) {
        rfail(r, DPZO_EINVAL, "noise.kind must be \"gaussian\" or \"lmo\", got \"%s\"", kind);
        return;
    }
    p->kind = kind[0] == 'l' ? DPZO_NOISE_LMO : DPZO_NOISE_GAUSSIAN;
    const char *own = kind[0] == 'l' ? "lmo" : "gaussian", *other = kind[0] == 'l' ? "gaussian" : "lmo";
    if (member(r, n, "noise", other, OPTIONAL) != NULL) {
        rfail(r, DPZO_EPARSE, "noise.%s must be absent or null with noise.kind \"%s\"", other,
              kind);
        return;
    }
    const cJSON *o = member(r, n, "noise", own, 0);
    if (o == NULL)
        return;
    if (p->kind == DPZO_NOISE_GAUSSIAN) {
        static const char *const gk[] = {"noise_multiplier", NULL};
        if (check_keys(r, o, "noise.gaussian", gk))
            return;
        p->noise_multiplier = get_num(r, o, "noise.gaussian", "noise_multiplier", 0);
        if (cJSON_GetObjectItemCaseSensitive(root, "lmo") != NULL)
            rfail(r, DPZO_EPARSE, "a top-level lmo object belongs to lmo profiles only");
    } else {
        if (check_keys(r, o, "noise.lmo", LMO_KEYS))
            return;
        double v[8];
        for (int i = 0; i < 8; i++)
            v[i] = get_num(r, o, "noise.lmo", LMO_KEYS[i], 0);
        p->lmo = (dpzo_lmo){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    }
    p->sensitivity = get_num(r, n, "noise", "sensitivity", 0);
    get_str(r, n, "noise", "clip", 0, p->clip, sizeof p->clip);
    double qps = get_int(r, n, "noise", "queries_per_step", 0, NAN);
    p->queries_per_step = isnan(qps) || qps > 1e9 ? 0u : (unsigned)qps;
}

static void read_rdp(reader *r, const cJSON *a, dpzo_profile *p)
{
    static const char *const keys[] = {"orders", "per_step", NULL};
    const cJSON *c = member(r, a, "accounting", "rdp", OPTIONAL);
    if (c == NULL || check_keys(r, c, "accounting.rdp", keys))
        return;
    const cJSON *o = member(r, c, "accounting.rdp", "orders", 0);
    const cJSON *v = member(r, c, "accounting.rdp", "per_step", 0);
    if (o == NULL || v == NULL)
        return;
    if (!cJSON_IsArray(o) || !cJSON_IsArray(v)) {
        rfail(r, DPZO_EPARSE, "accounting.rdp.orders and per_step must be arrays");
        return;
    }
    int n = cJSON_GetArraySize(o);
    if (n < 1 || n != cJSON_GetArraySize(v)) {
        rfail(r, DPZO_EPARSE, "accounting.rdp.orders and per_step must be non-empty arrays of "
                              "the same length (got %d and %d)", n, cJSON_GetArraySize(v));
        return;
    }
    p->orders = malloc((size_t)n * sizeof *p->orders);
    p->rdp = malloc((size_t)n * sizeof *p->rdp);
    if (p->orders == NULL || p->rdp == NULL) {
        r->st = dpzo__fail(r->ctx, DPZO_ENOMEM, "profile: out of memory");
        return;
    }
    p->n_orders = (size_t)n;
    const cJSON *x = o->child, *y = v->child;
    for (int i = 0; i < n; i++, x = x->next, y = y->next) {
        char name[48];
        snprintf(name, sizeof name, "orders[%d]", i);
        p->orders[i] = num_value(r, x, "accounting.rdp", name, 0);
        snprintf(name, sizeof name, "per_step[%d]", i);
        p->rdp[i] = num_value(r, y, "accounting.rdp", name, INF_OK);
    }
}

static void read_accounting(reader *r, const cJSON *root, dpzo_profile *p)
{
    static const char *const keys[] = {
        "accountant", "bound",   "sampling",      "sampling_rate", "batch_size", "dataset_size",
        "steps",      "delta",   "adjacency",     "epsilon",       "epsilon_bound",
        "order",      "eps0",    "rdp",           NULL};
    const char *P = "accounting";
    const cJSON *a = member(r, root, "", P, 0);
    if (a == NULL || check_keys(r, a, P, keys))
        return;
    get_str(r, a, P, "accountant", 0, p->accountant, sizeof p->accountant);
    get_str(r, a, P, "bound", OPTIONAL, p->bound, sizeof p->bound);
    get_str(r, a, P, "sampling", 0, p->sampling, sizeof p->sampling);
    p->sampling_rate = get_num(r, a, P, "sampling_rate", 0);
    double b = get_int(r, a, P, "batch_size", OPTIONAL, 0.0);
    double n = get_int(r, a, P, "dataset_size", OPTIONAL, 0.0);
    double t = get_int(r, a, P, "steps", 0, 0.0);
    p->batch_size = isnan(b) ? 0 : (uint64_t)b;
    p->dataset_size = isnan(n) ? 0 : (uint64_t)n;
    p->steps = isnan(t) ? 0 : (uint64_t)t;
    if (r->st == DPZO_OK && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "batch_size"))
        && p->batch_size == 0)
        rfail(r, DPZO_EINVAL, "accounting.batch_size must be null or >= 1, got 0");
    if (r->st == DPZO_OK && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "dataset_size"))
        && p->dataset_size == 0)
        rfail(r, DPZO_EINVAL, "accounting.dataset_size must be null or >= 1, got 0");
    p->delta = get_num(r, a, P, "delta", 0);
    get_str(r, a, P, "adjacency", 0, p->adjacency, sizeof p->adjacency);
    p->epsilon = get_num(r, a, P, "epsilon", 0);
    get_str(r, a, P, "epsilon_bound", 0, p->epsilon_bound, sizeof p->epsilon_bound);
    p->order = get_num(r, a, P, "order", OPTIONAL);
    p->eps0 = get_num(r, a, P, "eps0", OPTIONAL);
    if (r->st == DPZO_OK)
        read_rdp(r, a, p);
}

static void read_objective(reader *r, const cJSON *root, dpzo_profile *p)
{
    static const char *const keys[] = {"name",     "value",    "usefulness_gamma",
                                       "usefulness", "mean_abs", "variance",
                                       "grid",     "grid_index", NULL};
    const char *P = "objective";
    const cJSON *o = member(r, root, "", P, OPTIONAL);
    if (r->st != DPZO_OK || o == NULL) /* "objective": null */
        return;
    if (check_keys(r, o, P, keys))
        return;
    p->has_objective = 1;
    get_str(r, o, P, "name", 0, p->objective, sizeof p->objective);
    p->objective_value = get_num(r, o, P, "value", INF_OK);
    p->usefulness_gamma = get_num(r, o, P, "usefulness_gamma", OPTIONAL);
    p->usefulness = get_num(r, o, P, "usefulness", OPTIONAL);
    p->mean_abs = get_num(r, o, P, "mean_abs", OPTIONAL | INF_OK);
    p->variance = get_num(r, o, P, "variance", OPTIONAL | INF_OK);
    get_str(r, o, P, "grid", OPTIONAL, p->grid, sizeof p->grid);
    double gi = get_int(r, o, P, "grid_index", OPTIONAL, -1.0);
    p->grid_index = isnan(gi) || gi > 2147483647.0 ? -2 : (long)gi;
    if (r->st == DPZO_OK && p->grid_index == -2)
        rfail(r, DPZO_EINVAL, "objective.grid_index must be below 2^31");
}

static void read_provenance(reader *r, const cJSON *root, dpzo_profile *p)
{
    static const char *const keys[] = {"dpzo_version", "command", "created", NULL};
    const char *P = "provenance";
    const cJSON *o = member(r, root, "", P, 0);
    if (o == NULL || check_keys(r, o, P, keys))
        return;
    get_str(r, o, P, "dpzo_version", 0, p->version, sizeof p->version);
    get_str(r, o, P, "command", 0, p->command, sizeof p->command);
    get_str(r, o, P, "created", 0, p->created, sizeof p->created);
}

static int is_lower_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* The text of len bytes (a file's may hold a NUL byte: refused, docs/files.md). */
static dpzo_status profile_from_text(dpzo_ctx *ctx, const char *json, size_t len,
                                     dpzo_profile *out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no output profile given");
    dpzo_profile_init(out);
    if (json == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no JSON text given");
    cJSON *root = NULL;
    size_t at = 0;
    char jerr[DPZO_ERRMSG_SIZE];
    int jst = dpzo_json_parse(json, len, &root, &at, jerr, sizeof jerr);
    if (jst == DPZO_JSON_REFUSED)
        return dpzo__fail(ctx, DPZO_EPARSE, "profile: %s", jerr);
    if (jst == DPZO_JSON_SYNTAX) {
        long line = 1;
        for (size_t c = 0; c < at && json[c]; c++)
            line += json[c] == '\n';
        return dpzo__fail(ctx, DPZO_EPARSE, "profile: not valid JSON (error at line %ld)", line);
    }
    reader r = {ctx, DPZO_OK};
    static const char *const keys[] = {"format",     "schema_version", "noise", "lmo",
                                       "accounting", "objective",      "provenance",
                                       "sha256",     NULL};
    if (!cJSON_IsObject(root)) {
        rfail(&r, DPZO_EPARSE, "a noise profile is a JSON object, got %s", type_name(root));
    } else {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
        if (f == NULL)
            rfail(&r, DPZO_EPARSE, "missing field format (not a dpzo noise profile)");
        else if (!cJSON_IsString(f) || strcmp(f->valuestring, DPZO_PROFILE_FORMAT) != 0)
            rfail(&r, DPZO_EPARSE, "format must be \"%s\"%s%s%s (not a dpzo noise profile)",
                  DPZO_PROFILE_FORMAT, cJSON_IsString(f) ? ", got \"" : "",
                  cJSON_IsString(f) ? f->valuestring : "", cJSON_IsString(f) ? "\"" : "");
        double v = get_num(&r, root, "", "schema_version", 0);
        if (r.st == DPZO_OK)
            exact_integer(&r, cJSON_GetObjectItemCaseSensitive(root, "schema_version"), "",
                          "schema_version");
        if (r.st == DPZO_OK && v != DPZO_PROFILE_SCHEMA_VERSION)
            rfail(&r, DPZO_EPARSE, "unknown schema_version %s (this dpzo %s reads version %d)",
                  NUM(v), DPZO_VERSION, DPZO_PROFILE_SCHEMA_VERSION);
        if (r.st == DPZO_OK)
            check_keys(&r, root, "", keys);
    }
    if (r.st == DPZO_OK)
        read_noise(&r, root, out);
    if (r.st == DPZO_OK)
        read_accounting(&r, root, out);
    if (r.st == DPZO_OK)
        read_objective(&r, root, out);
    if (r.st == DPZO_OK)
        read_provenance(&r, root, out);
    char stored[65];
    if (r.st == DPZO_OK)
        get_str(&r, root, "", "sha256", 0, stored, sizeof stored);
    if (r.st == DPZO_OK && !is_lower_hex(stored, 64))
        rfail(&r, DPZO_EPARSE, "sha256 must be 64 lowercase hexadecimal digits, got \"%s\"",
              stored);
    if (r.st == DPZO_OK)
        r.st = dpzo_profile_validate(ctx, out);
    /* the optional top-level mirror of an lmo profile must say what noise.lmo says */
    const cJSON *top = r.st == DPZO_OK ? cJSON_GetObjectItemCaseSensitive(root, "lmo") : NULL;
    if (top != NULL && !check_keys(&r, top, "lmo", LMO_KEYS)) {
        const double v[8] = {out->lmo.gamma_weight, out->lmo.gamma_shape, out->lmo.gamma_scale,
                             out->lmo.exp_weight,   out->lmo.exp_rate,    out->lmo.uniform_weight,
                             out->lmo.uniform_low,  out->lmo.uniform_high};
        for (int i = 0; i < 8 && r.st == DPZO_OK; i++)
            if (get_num(&r, top, "lmo", LMO_KEYS[i], 0) != v[i] && r.st == DPZO_OK)
                rfail(&r, DPZO_EPARSE, "lmo.%s differs from noise.lmo.%s", LMO_KEYS[i],
                      LMO_KEYS[i]);
    }
    if (r.st == DPZO_OK) {
        char computed[65];
        r.st = tree_checksum(ctx, root, computed, NULL);
        if (r.st == DPZO_OK && strcmp(computed, stored) != 0)
            rfail(&r, DPZO_EPARSE, "checksum mismatch: the file was modified after it was "
                                   "written (expected %s, computed %s)", stored, computed);
        if (r.st == DPZO_OK)
            memcpy(out->sha256, stored, sizeof stored);
    }
    cJSON_Delete(root);
    if (r.st != DPZO_OK)
        dpzo_profile_free(out);
    return r.st;
}

dpzo_status dpzo_profile_from_json(dpzo_ctx *ctx, const char *json, dpzo_profile *out)
{
    return profile_from_text(ctx, json, json != NULL ? strlen(json) : 0, out);
}

dpzo_status dpzo_profile_read_file(dpzo_ctx *ctx, const char *path, dpzo_profile *out)
{
    if (out != NULL)
        dpzo_profile_init(out);
    if (path == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no file name given");
    /* a regular file only (a FIFO or device is refused before any read), at most 64 MiB
     * (a profile is a few kB) */
    char *buf = NULL, err[DPZO_IO_ERRMAX];
    size_t len = 0;
    if (dpzo_io_read_file(path, "profile", DPZO_IO_LIMIT_PROFILE, &buf, &len, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EPARSE, "%s", err);
    dpzo_status st = profile_from_text(ctx, buf, len, out);
    free(buf);
    if (st != DPZO_OK) {
        char msg[DPZO_ERRMSG_SIZE];
        const char *m = dpzo_ctx_errmsg(ctx);
        snprintf(msg, sizeof msg, "%s", strncmp(m, "profile: ", 9) == 0 ? m + 9 : m);
        dpzo__fail(ctx, st, "profile %s: %s", path, msg);
    }
    return st;
}

/* ---- verification ------------------------------------------------------------------ */

/* a profile may claim more than its parameters need, never less */
static int within(double recomputed, double stored)
{
    return recomputed <= stored * (1.0 + 1e-9) + 1e-12;
}

/* One step of a Gaussian profile's run (sampled as it says). */
static dpzo_event *gaussian_step(dpzo_ctx *ctx, const dpzo_profile *p, double sigma)
{
    dpzo_event *g = dpzo_event_gaussian(ctx, sigma);
    if (strcmp(p->sampling, "poisson") == 0)
        return dpzo_event_poisson_sampled(ctx, p->sampling_rate, g);
    if (strcmp(p->sampling, "wor") == 0)
        return dpzo_event_wor_sampled(ctx, p->batch_size, p->dataset_size, g);
    return g;
}

static void pld_options_for(const dpzo_profile *p, dpzo_pld_options *o)
{
    dpzo_pld_options_default(o);
    o->method = strcmp(p->accountant, "prv") == 0 ? DPZO_PLD_PRV : DPZO_PLD_CONNECT_DOTS;
}

/* The proven epsilon of a Gaussian profile's run at noise multiplier sigma. */
static dpzo_status gaussian_epsilon(dpzo_ctx *ctx, const dpzo_profile *p, double sigma,
                                    double *eps, double *lower, double *order)
{
    dpzo_event *e = dpzo_event_self_composed(ctx, gaussian_step(ctx, p, sigma), p->steps);
    if (e == NULL)
        return DPZO_EINVAL; /* the message is in ctx */
    dpzo_status st;
    *lower = *order = NAN;
    if (strcmp(p->accountant, "rdp") == 0) {
        dpzo_dp_result r;
        st = dpzo_event_epsilon(ctx, e, p->delta, NULL, &r);
        if (st == DPZO_OK)
            *eps = r.epsilon, *order = r.order;
    } else {
        dpzo_pld_options o;
        pld_options_for(p, &o);
        dpzo_pld_result r;
        st = dpzo_pld_epsilon(ctx, e, p->delta, &o, &r);
        if (st == DPZO_OK)
            *eps = r.epsilon, *lower = r.epsilon_lower;
    }
    dpzo_event_free(e);
    return st;
}

/* Compares a recomputed per-step curve with the stored one; returns the first order
 * where the stored value is below the proven bound (n_orders if none) and that bound. */
static size_t compare_curve(const dpzo_profile *p, const dpzo_bound *b, dpzo_profile_check *out,
                            double *bad_bound)
{
    size_t bad = p->n_orders;
    out->rdp_checked = p->n_orders;
    out->rdp_worst_ratio = 0.0;
    for (size_t i = 0; i < p->n_orders; i++) {
        double ratio = isinf(p->rdp[i])  ? 0.0
                       : p->rdp[i] > 0.0 ? b[i].upper / p->rdp[i]
                       : b[i].upper > 0.0 ? INFINITY
                                          : 1.0;
        if (ratio > out->rdp_worst_ratio)
            out->rdp_worst_ratio = ratio;
        if (!within(b[i].upper, p->rdp[i]) && bad == p->n_orders) {
            bad = i;
            *bad_bound = b[i].upper;
        }
    }
    return bad;
}

static dpzo_status verify_gaussian(dpzo_ctx *ctx, const dpzo_profile *p, dpzo_profile_check *out)
{
    dpzo_status st = gaussian_epsilon(ctx, p, p->noise_multiplier, &out->epsilon_recomputed,
                                      &out->epsilon_lower, &out->order);
    if (st != DPZO_OK)
        return st;
    int eps_ok = within(out->epsilon_recomputed, p->epsilon);
    size_t bad = p->n_orders;
    double bad_bound = NAN;
    if (p->n_orders > 0) {
        dpzo_bound *b = malloc(p->n_orders * sizeof *b);
        dpzo_event *step = gaussian_step(ctx, p, p->noise_multiplier);
        if (b == NULL || step == NULL) {
            free(b);
            dpzo_event_free(step);
            return step == NULL ? DPZO_EINVAL : dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
        }
        st = dpzo_event_rdp_certified(ctx, step, p->orders, p->n_orders, b);
        if (st == DPZO_OK)
            bad = compare_curve(p, b, out, &bad_bound);
        free(b);
        dpzo_event_free(step);
        if (st != DPZO_OK)
            return st;
    }
    out->ok = eps_ok && bad == p->n_orders;
    if (!eps_ok)
        snprintf(out->detail, sizeof out->detail,
                 "stored epsilon %s is below the proven bound %s recomputed by the %s "
                 "accountant: the profile claims less privacy loss than its noise gives",
                 NUM(p->epsilon), NUM(out->epsilon_recomputed), p->accountant);
    else if (bad < p->n_orders)
        snprintf(out->detail, sizeof out->detail,
                 "per-step RDP at order %s is stored as %s, below the proven bound %s",
                 NUM(p->orders[bad]), NUM(p->rdp[bad]), NUM(bad_bound));
    else
        snprintf(out->detail, sizeof out->detail,
                 "recomputed epsilon %s (%s) <= stored %s%s", NUM(out->epsilon_recomputed),
                 p->accountant, NUM(p->epsilon),
                 p->n_orders ? "; per-step RDP curve verified" : "");
    return DPZO_OK;
}

static dpzo_lmo_bound_kind bound_kind(const char *name)
{
    return strcmp(name, "mgf") == 0     ? DPZO_LMO_BOUND_MGF
           : strcmp(name, "exact") == 0 ? DPZO_LMO_BOUND_EXACT
           : strcmp(name, "pure") == 0  ? DPZO_LMO_BOUND_PURE
                                        : DPZO_LMO_BOUND_BEST;
}

dpzo_lmo_account_options dpzo_profile_lmo_options(const dpzo_profile *p)
{
    dpzo_lmo_account_options o = dpzo_lmo_account_options_default();
    o.vector_l1 = strcmp(p->clip, "l1") == 0; /* MGF and vector pure-DP bounds only */
    o.sensitivity = p->sensitivity;
    o.bound = bound_kind(p->bound);
    o.sampling = strcmp(p->sampling, "poisson") == 0 ? DPZO_LMO_SAMPLING_POISSON
                 : strcmp(p->sampling, "wor") == 0   ? DPZO_LMO_SAMPLING_WOR
                                                     : DPZO_LMO_SAMPLING_NONE;
    o.q = p->sampling_rate;
    o.batch = p->batch_size;
    o.n = p->dataset_size;
    o.steps = p->steps;
    o.delta = p->delta;
    return o;
}

static dpzo_status verify_lmo(dpzo_ctx *ctx, const dpzo_profile *p, dpzo_profile_check *out)
{
    if (strcmp(p->accountant, "paper") == 0) {
        out->ok = 0;
        snprintf(out->detail, sizeof out->detail,
                 "paper mode: guarantee not established (the stored epsilon %s is the "
                 "paper's claim, not a proven bound)", NUM(p->epsilon));
        return DPZO_OK;
    }
    int vector = strcmp(p->clip, "l1") == 0;
    dpzo_lmo_account_options o = dpzo_profile_lmo_options(p);
    dpzo_lmo_account_result res;
    dpzo_status st = dpzo_lmo_epsilon(ctx, &p->lmo, &o, &res);
    if (st != DPZO_OK)
        return st;
    int by_pld = 0;
    if (strcmp(p->accountant, "pld") == 0) {
        /* the smaller of the RDP bound and the PLD's (the search accepts a PLD bound from
         * the coarse grid 1e-3 or the default 1e-4; dpzo lmo epsilon any grid, so finer
         * grids are tried last) */
        const double grids[3] = {1e-3, 1e-4, 1e-5};
        for (int g = 0; g < 3 && (g == 0 || !within(res.epsilon, p->epsilon)); g++) {
            dpzo_pld_result pr;
            st = dpzo_lmo_pld_epsilon(ctx, &p->lmo, &o, grids[g], &pr);
            if (st == DPZO_ENOCONV)
                break; /* not provable by the PLD: the RDP bound stands */
            if (st != DPZO_OK)
                return st;
            if (isnan(out->epsilon_lower) || pr.epsilon_lower > out->epsilon_lower)
                out->epsilon_lower = pr.epsilon_lower;
            if (pr.epsilon_upper < res.epsilon) {
                res.epsilon = pr.epsilon_upper;
                res.order = 0.0;
                by_pld = 1;
            }
        }
        st = DPZO_OK;
    }
    out->epsilon_recomputed = res.epsilon;
    out->order = res.order > 1.0 ? res.order : NAN;
    int eps_ok = within(res.epsilon, p->epsilon);
    int eps0_ok = 1;
    if (!isnan(p->eps0)) {
        out->eps0_recomputed = res.eps0; /* proven, at sensitivity C (vector bound for l1) */
        eps0_ok = within(res.eps0, p->eps0);
    }
    size_t bad = p->n_orders;
    double bad_bound = NAN;
    /* dpzo_lmo_rdp is the scalar curve; for vectors only its MGF bound carries over */
    if (p->n_orders > 0 && curve_recomputed(p)) {
        dpzo_bound *b = malloc(p->n_orders * sizeof *b);
        if (b == NULL)
            return dpzo__fail(ctx, DPZO_ENOMEM, "profile: out of memory");
        st = dpzo_lmo_rdp(ctx, &p->lmo, p->sensitivity, o.bound, p->orders, p->n_orders, b);
        if (st == DPZO_OK)
            bad = compare_curve(p, b, out, &bad_bound);
        free(b);
        if (st != DPZO_OK)
            return st;
    }
    out->ok = eps_ok && eps0_ok && bad == p->n_orders;
    if (!eps_ok)
        snprintf(out->detail, sizeof out->detail,
                 "stored epsilon %s is below the proven bound %s recomputed by the LMO "
                 "accountant (bound %s): the profile claims less privacy loss than its noise "
                 "gives", NUM(p->epsilon), NUM(res.epsilon), p->bound);
    else if (!eps0_ok)
        snprintf(out->detail, sizeof out->detail,
                 "stored eps0 %s is below the proven per-step pure-DP bound %s",
                 NUM(p->eps0), NUM(out->eps0_recomputed));
    else if (bad < p->n_orders)
        snprintf(out->detail, sizeof out->detail,
                 "per-step RDP at order %s is stored as %s, below the proven bound %s",
                 NUM(p->orders[bad]), NUM(p->rdp[bad]), NUM(bad_bound));
    else
        snprintf(out->detail, sizeof out->detail,
                 "recomputed epsilon %s (LMO %s accountant%s, bound %s) <= stored %s%s",
                 NUM(res.epsilon), p->accountant, by_pld ? ", PLD bound" : "", p->bound,
                 NUM(p->epsilon),
                 p->n_orders == 0     ? ""
                 : out->rdp_checked ? "; per-step RDP curve verified"
                 : vector           ? "; per-step RDP curve of l1 vectors not checked"
                                    : "; per-step RDP curve of a sampled step not checked");
    return DPZO_OK;
}

dpzo_status dpzo_profile_verify(dpzo_ctx *ctx, const dpzo_profile *p, dpzo_profile_check *out)
{
    if (out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no result pointer given");
    *out = (dpzo_profile_check){0, NAN, NAN, NAN, NAN, 0, NAN, ""};
    dpzo_status st = dpzo_profile_validate(ctx, p);
    if (st != DPZO_OK)
        return st;
    return p->kind == DPZO_NOISE_GAUSSIAN ? verify_gaussian(ctx, p, out) : verify_lmo(ctx, p, out);
}

/* ---- Gaussian profiles --------------------------------------------------------------- */

/* Orders of the recorded per-step RDP curve. */
static const double CURVE_ORDERS[] = {1.25, 1.5, 1.75, 2,  2.5, 3,  3.5, 4,   5,   6,
                                      7,    8,   10,   12, 14,  16, 20,  24,  32,  40,
                                      48,   64,  80,   96, 128, 192, 256, 512};

dpzo_status dpzo_profile_gaussian(dpzo_ctx *ctx, const dpzo_profile_gaussian_spec *s,
                                  dpzo_profile *p)
{
    if (p == NULL || s == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "profile: no specification or output given");
    dpzo_profile_init(p);
    const char *acc = s->accountant ? s->accountant : "rdp";
    const char *smp = s->sampling ? s->sampling : "poisson";
    if (!in_set(acc, ACCOUNTANTS_GAUSSIAN))
        return dpzo__fail(ctx, DPZO_EINVAL, "accountant must be rdp, pld or prv, got '%s'", acc);
    if (!in_set(smp, SAMPLINGS))
        return dpzo__fail(ctx, DPZO_EINVAL, "sampling must be poisson, wor or none, got '%s'",
                          smp);
    if (!fin_pos(s->epsilon))
        return dpzo__fail(ctx, DPZO_EINVAL, "target epsilon must be finite and > 0, got %g",
                          s->epsilon);
    if (!(s->delta > 0.0 && s->delta < 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "delta must be in (0, 1), got %g", s->delta);
    if (!(s->sensitivity == 0.0 || fin_pos(s->sensitivity)))
        return dpzo__fail(ctx, DPZO_EINVAL, "sensitivity must be finite and > 0, got %g",
                          s->sensitivity);
    if (s->steps < 1 || (double)s->steps > MAX_COUNT)
        return dpzo__fail(ctx, DPZO_EINVAL, "steps must be in [1, 2^53], got %llu",
                          (unsigned long long)s->steps);
    int poisson = strcmp(smp, "poisson") == 0, wor = strcmp(smp, "wor") == 0;
    if (poisson && !(s->sampling_rate > 0.0 && s->sampling_rate <= 1.0))
        return dpzo__fail(ctx, DPZO_EINVAL, "sampling rate must be in (0, 1], got %g",
                          s->sampling_rate);
    if (wor && !(s->batch_size >= 1 && s->batch_size <= s->dataset_size
                 && (double)s->dataset_size <= MAX_COUNT))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "batch size must be in [1, dataset size], got %llu and %llu",
                          (unsigned long long)s->batch_size,
                          (unsigned long long)s->dataset_size);
    int tight = strcmp(acc, "rdp") != 0;
    if (!(s->tolerance <= 0.0 || (s->tolerance >= 1e-12 && s->tolerance < 0.5)))
        return dpzo__fail(ctx, DPZO_EINVAL, "tolerance must be in [1e-12, 0.5), got %g",
                          s->tolerance);
    double tol = s->tolerance > 0.0 ? s->tolerance : tight ? 1e-4 : 1e-6;

    p->kind = DPZO_NOISE_GAUSSIAN;
    p->sensitivity = s->sensitivity > 0.0 ? s->sensitivity : 1.0;
    snprintf(p->clip, sizeof p->clip, "l2");
    snprintf(p->accountant, sizeof p->accountant, "%s", acc);
    snprintf(p->sampling, sizeof p->sampling, "%s", smp);
    p->sampling_rate = poisson ? s->sampling_rate
                       : wor   ? (double)s->batch_size / (double)s->dataset_size
                               : 1.0;
    if (wor) {
        p->batch_size = s->batch_size;
        p->dataset_size = s->dataset_size;
    }
    p->steps = s->steps;
    p->delta = s->delta;
    snprintf(p->adjacency, sizeof p->adjacency, "%s", wor ? "replace-one" : "add-remove");
    snprintf(p->epsilon_bound, sizeof p->epsilon_bound, "%s", PROVEN);
    snprintf(p->command, sizeof p->command, "%s", s->command ? s->command : "dpzo_profile_gaussian");
    if (s->created != NULL)
        snprintf(p->created, sizeof p->created, "%s", s->created);
    else
        utc_now(p->created);

    /* the calibration API for every sampling: "none" is Poisson at q = 1 (the same pair of
     * distributions), "wor" the without-replacement calibration */
    dpzo_status st;
    dpzo_calibration c;
    double q = poisson ? s->sampling_rate : 1.0;
    if (tight) {
        dpzo_pld_options o;
        pld_options_for(p, &o);
        st = wor ? dpzo_calibrate_noise_wor_pld(ctx, s->epsilon, s->delta, s->batch_size,
                                                s->dataset_size, s->steps, tol, &o, &c)
                 : dpzo_calibrate_noise_pld(ctx, s->epsilon, s->delta, q, s->steps, tol, &o, &c);
    } else {
        st = wor ? dpzo_calibrate_noise_wor(ctx, s->epsilon, s->delta, s->batch_size,
                                            s->dataset_size, s->steps, tol, NULL, &c)
                 : dpzo_calibrate_noise(ctx, s->epsilon, s->delta, q, s->steps, tol, NULL, &c);
    }
    if (st == DPZO_OK)
        p->noise_multiplier = c.value;
    double lower;
    if (st == DPZO_OK)
        st = gaussian_epsilon(ctx, p, p->noise_multiplier, &p->epsilon, &lower, &p->order);
    if (st == DPZO_OK && !(p->epsilon <= s->epsilon))
        st = dpzo__fail(ctx, DPZO_ENOCONV,
                        "profile: recomputed epsilon %s exceeds the target %s at the "
                        "calibrated noise multiplier %s", NUM(p->epsilon), NUM(s->epsilon),
                        NUM(p->noise_multiplier));
    if (st == DPZO_OK && !tight) {
        size_t n = sizeof CURVE_ORDERS / sizeof *CURVE_ORDERS;
        dpzo_bound b[sizeof CURVE_ORDERS / sizeof *CURVE_ORDERS];
        double v[sizeof CURVE_ORDERS / sizeof *CURVE_ORDERS];
        dpzo_event *step = gaussian_step(ctx, p, p->noise_multiplier);
        st = step == NULL ? DPZO_EINVAL
                          : dpzo_event_rdp_certified(ctx, step, CURVE_ORDERS, n, b);
        dpzo_event_free(step);
        for (size_t i = 0; st == DPZO_OK && i < n; i++)
            v[i] = b[i].upper;
        if (st == DPZO_OK)
            st = dpzo_profile_set_rdp(ctx, p, CURVE_ORDERS, v, n);
    }
    if (st == DPZO_OK)
        st = dpzo_profile_validate(ctx, p);
    if (st != DPZO_OK)
        dpzo_profile_free(p);
    return st;
}

static const char *lmo_sampling_name(dpzo_lmo_sampling s)
{
    return s == DPZO_LMO_SAMPLING_POISSON ? "poisson" : s == DPZO_LMO_SAMPLING_WOR ? "wor" : "none";
}

dpzo_status dpzo_profile_from_lmo_search(dpzo_ctx *ctx, const dpzo_lmo_search_options *o,
                                         const dpzo_lmo_search_result *r, const char *grid_name,
                                         const char *clip, const char *command,
                                         dpzo_profile *out)
{
    if (o == NULL || r == NULL || out == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "search options, result and profile are required");
    const dpzo_lmo_account_options *a = &o->account;
    if (clip == NULL)
        clip = a->vector_l1 ? "l1" : "scalar";
    dpzo_profile *p = out;
    dpzo_profile_init(p);
    p->kind = DPZO_NOISE_LMO;
    p->lmo = r->lmo;
    p->sensitivity = a->sensitivity;
    snprintf(p->clip, sizeof p->clip, "%s", clip);
    p->queries_per_step = 1;
    snprintf(p->accountant, sizeof p->accountant, "%s", o->paper ? "paper" : o->pld ? "pld" : "rdp");
    snprintf(p->bound, sizeof p->bound, "%s", dpzo_lmo_bound_name(a->bound));
    int wor = !o->paper && a->sampling == DPZO_LMO_SAMPLING_WOR;
    snprintf(p->sampling, sizeof p->sampling, "%s",
             o->paper ? "none" : lmo_sampling_name(a->sampling));
    p->sampling_rate = o->paper || a->sampling == DPZO_LMO_SAMPLING_NONE ? 1.0
                       : a->sampling == DPZO_LMO_SAMPLING_POISSON ? a->q
                                                                  : (double)a->batch / (double)a->n;
    if (wor) {
        p->batch_size = a->batch;
        p->dataset_size = a->n;
    }
    p->steps = o->paper ? 1 : a->steps;
    p->delta = a->delta;
    snprintf(p->adjacency, sizeof p->adjacency, "%s", wor ? "replace-one" : "add-remove");
    p->epsilon = r->epsilon;
    snprintf(p->epsilon_bound, sizeof p->epsilon_bound, "%s",
             o->paper ? "paper-claim (guarantee not established)" : "proven-upper");
    p->order = r->order > 0 ? r->order : NAN;
    dpzo_bound e0;
    if ((a->vector_l1 ? dpzo_lmo_eps0_vector(ctx, &r->lmo, a->sensitivity, &e0)
                      : dpzo_lmo_eps0(ctx, &r->lmo, a->sensitivity, &e0)) == DPZO_OK)
        p->eps0 = e0.upper;
    p->has_objective = 1;
    snprintf(p->objective, sizeof p->objective, "%s", dpzo_lmo_objective_name(o->objective));
    p->objective_value = r->objective_value;
    p->usefulness_gamma = o->usefulness_gamma;
    p->usefulness = r->usefulness;
    p->mean_abs = r->mean_abs;
    p->variance = r->variance;
    snprintf(p->grid, sizeof p->grid, "%s", grid_name != NULL ? grid_name : "custom");
    p->grid_index = (long)r->index;
    if (command != NULL) {
        /* cut at a character boundary, marked "..." */
        size_t n = strlen(command);
        if (n < sizeof p->command) {
            memcpy(p->command, command, n + 1);
        } else {
            size_t k = sizeof p->command - 4;
            while (k > 0 && ((unsigned char)command[k] & 0xC0) == 0x80)
                k--;
            memcpy(p->command, command, k);
            memcpy(p->command + k, "...", 4);
        }
    }
    return DPZO_OK;
}
