/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/config.c: the training run's JSON configuration (docs/trainer.md, section 3):
 * strict parsing (unknown, duplicated or mistyped keys are errors that name the key),
 * value checks, and the fingerprint that ties a checkpoint to the run that wrote it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "dpzo_io.h"
#include "dpzo_json.h"
#include "internal.h"
#include "dpzo_sha256.h"
#include "train_internal.h"
#include "dpzo/zo_step.h"

static const char *const algorithm_names[] = {"dpzero", "mezo",   "dpsgd",  "sgd",   "dpzoso",
                                              "dpzopo", "pazo-m", "pazo-p", "pazo-s", "dpmd"};
static const char *const strategy_names[] = {"static", "dynamic", "increasing", "incremental"};
static const char *const select_names[] = {"smallest", "largest"};
static const char *const multiplier_names[] = {"mask", "rank"};
static const char *const schedule_names[] = {"constant", "linear", "cosine"};
static const char *const batching_names[] = {"poisson", "shuffle"};
static const char *const direction_names[] = {"gaussian", "sphere", "rademacher"};
static const char *const radius_names[] = {"sqrt_d", "d_quarter"};
#define COUNT(a) (int)(sizeof a / sizeof *a)

const char *dpzo_algorithm_name(dpzo_algorithm a)
{
    return (unsigned)a < (unsigned)COUNT(algorithm_names) ? algorithm_names[a] : "?";
}

const char *dpzo_lr_schedule_name(dpzo_lr_schedule s)
{
    return (unsigned)s < (unsigned)COUNT(schedule_names) ? schedule_names[s] : "?";
}

int dpzo_algorithm_is_private(dpzo_algorithm a)
{
    return a != DPZO_ALG_MEZO && a != DPZO_ALG_SGD;
}

int dpzo_algorithm_is_stagewise(dpzo_algorithm a)
{
    return a == DPZO_ALG_DPZOSO || a == DPZO_ALG_DPZOPO;
}

/* The algorithms with central differences along directions (lambda, direction, queries). */
static int is_zeroth_order(dpzo_algorithm a)
{
    return a == DPZO_ALG_DPZERO || a == DPZO_ALG_MEZO || dpzo_algorithm_is_stagewise(a) ||
           a == DPZO_ALG_PAZO_M || a == DPZO_ALG_PAZO_P;
}

static int is_pazo(dpzo_algorithm a)
{
    return a == DPZO_ALG_PAZO_M || a == DPZO_ALG_PAZO_P || a == DPZO_ALG_PAZO_S;
}

/* The algorithms that read public batches at every step (the 'public' keys). */
static int uses_public(dpzo_algorithm a) { return is_pazo(a) || a == DPZO_ALG_DPMD; }

int dpzo_algorithm_is_first_order(dpzo_algorithm a)
{
    return a == DPZO_ALG_DPSGD || a == DPZO_ALG_SGD || a == DPZO_ALG_DPMD;
}

unsigned dpzo_train_queries_per_step(const dpzo_train_config *c)
{
    if (c->algorithm == DPZO_ALG_PAZO_S)
        return c->pub.k + (c->pub.noisy_candidate ? 1u : 0u);
    if (dpzo_algorithm_is_first_order(c->algorithm))
        return 1;
    return c->queries;
}

double dpzo_lr_at(dpzo_lr_schedule s, double lr, uint64_t t, uint64_t T)
{
    double x = T > 0 ? (double)t / (double)T : 0.0;
    switch (s) {
    case DPZO_LR_LINEAR:
        return lr * (1.0 - x);
    case DPZO_LR_COSINE:
        return lr * 0.5 * (1.0 + cos(M_PI * x));
    default:
        return lr;
    }
}

void dpzo_train_config_init(dpzo_train_config *c)
{
    memset(c, 0, sizeof *c);
    c->algorithm = (dpzo_algorithm)-1;
    c->batch_size = NAN;
    c->batching = DPZO_BATCH_POISSON;
    c->lr = NAN;
    c->lr_schedule = DPZO_LR_CONSTANT;
    c->lambda = 1e-3;
    c->direction = DPZO_DIR_GAUSSIAN;
    c->radius_kind = DPZO_RADIUS_SQRT_D;
    c->radius = NAN;
    c->queries = 1;
    c->clip = NAN;
    c->stages = (dpzo_stage_config){.count = 3, .lambda_last = NAN, .lr_decay = 0.5};
    c->prune = (dpzo_prune_config){.strategy = DPZO_PRUNE_INCREMENTAL, .rate = 0.01,
                                   .growth = NAN, .rank_upper = 1.2, .rank_lower = 0.8,
                                   .queries = 1, .lambda = 1e-3};
    c->pub = (dpzo_public_config){.batch_size = 32, .k = 3, .alpha = 0.5, .orthonormalize = 1,
                                  .candidate_scale = 1e-3, .noisy_candidate = 1};
    c->pretrain = (dpzo_pretrain_config){.lr = NAN, .batch_size = 64};
}

double dpzo__prune_growth(const dpzo_prune_config *p)
{
    if (!isnan(p->growth))
        return p->growth;
    return p->strategy == DPZO_PRUNE_INCREASING || p->strategy == DPZO_PRUNE_INCREMENTAL ? 2.0
                                                                                        : 1.0;
}

/* ---- value checks ------------------------------------------------------------------ */

#define STEPS_MAX 4294967295ull /* the direction's counter holds 32 bits of the step */
#define QUERIES_MAX 4096u
#define THREADS_MAX 256u /* as trainer/model.c's MAX_THREADS */

static int positive(double x) { return x > 0.0 && isfinite(x); }

static int integral(double x) { return x == floor(x); }

/* The stage, pruning, public-data and pre-training settings. */
/* step_only: the step's configuration, whose public rows are the caller's (no
 * data.public_size to check public.batch_size against). */
static dpzo_status validate_methods(dpzo_ctx *ctx, const dpzo_train_config *c, int step_only)
{
    const char *alg = dpzo_algorithm_name(c->algorithm);
    if (dpzo_algorithm_is_stagewise(c->algorithm)) {
        const dpzo_stage_config *g = &c->stages;
        if (g->count < 1 || g->count > 32)
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'stages.count' must be in [1, 32], got %u",
                              g->count);
        if (!isnan(g->lambda_last) && !positive(g->lambda_last))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'stages.lambda_last' must be > 0 and finite, got %g",
                              g->lambda_last);
        if (!(g->lr_decay > 0.0 && g->lr_decay <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'stages.lr_decay' must be in (0, 1], got %g", g->lr_decay);
        if (!(g->prox >= 0.0 && isfinite(g->prox)))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'stages.prox' must be >= 0 and finite, got %g", g->prox);
        if (c->lr_schedule != DPZO_LR_CONSTANT)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: %s has its own learning-rate schedule (stages.lr_decay); "
                              "'lr_schedule' must be \"constant\"",
                              alg);
    }
    if (c->algorithm == DPZO_ALG_DPZOPO) {
        const dpzo_prune_config *p = &c->prune;
        if (!(p->rate > 0.0 && p->rate <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'prune.rate' must be in (0, 1], got %g",
                              p->rate);
        double growth = dpzo__prune_growth(p);
        int grows = p->strategy == DPZO_PRUNE_INCREASING || p->strategy == DPZO_PRUNE_INCREMENTAL;
        if (!(growth >= 1.0 && isfinite(growth)) || (!grows && growth != 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'prune.growth' must be >= 1 (and 1 for the static and "
                              "dynamic strategies), got %g",
                              growth);
        if (p->rank && !(p->rank_lower > 0.0 && p->rank_upper >= p->rank_lower &&
                         isfinite(p->rank_upper)))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: the rank multipliers need 0 < prune.rank_lower <= "
                              "prune.rank_upper, got %g and %g",
                              p->rank_lower, p->rank_upper);
        if (p->queries < 1 || p->queries > QUERIES_MAX || !positive(p->lambda))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'prune.queries' must be in [1, %u] and 'prune.lambda' > 0",
                              QUERIES_MAX);
    }
    if (uses_public(c->algorithm)) {
        const dpzo_public_config *u = &c->pub;
        if (c->public_size == 0 && !step_only)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: %s needs public rows: set 'data.public_size'", alg);
        if (!(u->batch_size >= 1.0) || !integral(u->batch_size) ||
            (!step_only && u->batch_size > (double)c->public_size))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'public.batch_size' must be an integer in [1, "
                              "data.public_size = %llu], got %g",
                              (unsigned long long)c->public_size, u->batch_size);
        if (u->k < 1 || u->k > 64)
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'public.k' must be in [1, 64], got %u",
                              u->k);
        if (!(u->alpha >= 0.0 && u->alpha <= 1.0))
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'public.alpha' must be in [0, 1], got %g",
                              u->alpha);
        if (!(u->candidate_scale >= 0.0 && isfinite(u->candidate_scale)))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'public.candidate_scale' must be >= 0 and finite, got %g",
                              u->candidate_scale);
    }
    const dpzo_pretrain_config *w = &c->pretrain;
    if (w->steps > 0) {
        if (c->public_size == 0)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'pretrain' trains on the public rows: set "
                              "'data.public_size'");
        if (!positive(w->lr))
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'pretrain.lr' is required, > 0, got %g",
                              w->lr);
        if (!(w->batch_size >= 1.0) || !integral(w->batch_size) ||
            w->batch_size > (double)c->public_size)
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: 'pretrain.batch_size' must be an integer in [1, "
                              "data.public_size], got %g",
                              w->batch_size);
    }
    return DPZO_OK;
}

dpzo_status dpzo_train_config_validate(dpzo_ctx *ctx, const dpzo_train_config *c)
{
    return dpzo__train_config_check(ctx, c, 0);
}

dpzo_status dpzo__train_config_check(dpzo_ctx *ctx, const dpzo_train_config *c, int step_only)
{
    if ((unsigned)c->algorithm >= (unsigned)COUNT(algorithm_names))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'algorithm' is required: dpzero, mezo, dpsgd, sgd, dpzoso, "
                          "dpzopo, pazo-m, pazo-p or pazo-s");
    if (!step_only && c->model[0] == '\0')
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'model' is required (e.g. \"mlp:128\" or \"cnn:8-16\")");
    if (c->steps < 1 || c->steps > STEPS_MAX)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'steps' is required, an integer in [1, 2^32 - 1], got %llu",
                          (unsigned long long)c->steps);
    if (!positive(c->batch_size))
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'batch_size' is required, > 0, got %g",
                          c->batch_size);
    if (c->batching == DPZO_BATCH_SHUFFLE && c->batch_size != floor(c->batch_size))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'batch_size' must be an integer with batching \"shuffle\", "
                          "got %g",
                          c->batch_size);
    if (!positive(c->lr))
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'lr' is required, > 0 and finite, got %g",
                          c->lr);
    if (!positive(c->lambda))
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'lambda' must be > 0 and finite, got %g",
                          c->lambda);
    if (c->queries < 1 || c->queries > QUERIES_MAX)
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'queries' must be in [1, %u], got %u",
                          QUERIES_MAX, c->queries);
    if (c->threads > THREADS_MAX)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'threads' must be 0 (the machine's cores) to %u, got %u",
                          THREADS_MAX, c->threads);
    if (c->radius_kind == DPZO_RADIUS_FIXED && !positive(c->radius))
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'radius' must be > 0 and finite, got %g",
                          c->radius);
    if (dpzo_algorithm_is_private(c->algorithm)) {
        if (c->profile[0] == '\0')
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: algorithm %s needs 'profile' (a noise profile file, "
                              "see `dpzo profile gaussian --help`)",
                              dpzo_algorithm_name(c->algorithm));
        if (isnan(c->clip))
            return dpzo__fail(ctx, DPZO_EINVAL,
                              "config: algorithm %s needs 'clip' (the clipping bound C, the "
                              "profile's sensitivity)",
                              dpzo_algorithm_name(c->algorithm));
        if (!positive(c->clip))
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'clip' must be > 0 and finite, got %g",
                              c->clip);
    }
    if (c->checkpoint_every > 0 && c->checkpoint[0] == '\0')
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'checkpoint_every' needs 'checkpoint'");
    return validate_methods(ctx, c, step_only);
}

/* ---- typed getters: each names the key in its message ------------------------------ */

static dpzo_status get_string(dpzo_ctx *ctx, const cJSON *v, const char *key, char *out,
                              size_t size)
{
    if (!cJSON_IsString(v))
        return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be a string", key);
    if (strlen(v->valuestring) >= size)
        return dpzo__fail(ctx, DPZO_EINVAL, "config: '%s' is too long (at most %zu bytes)", key,
                          size - 1);
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return DPZO_OK;
}

static dpzo_status get_real(dpzo_ctx *ctx, const cJSON *v, const char *key, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be a number", key);
    *out = v->valuedouble;
    return DPZO_OK;
}

/* An integer field takes only a literal that is exactly its value (issue 28, item 9):
 * 9.007199254740993e15 is not 2^53. */
static dpzo_status exact_integer(dpzo_ctx *ctx, const cJSON *v, const char *key)
{
    char why[DPZO_ERRMSG_SIZE / 2];
    if (dpzo_json_check_integer(v, why, sizeof why) == 0)
        return DPZO_OK;
    return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be an integer: %s", key, why);
}

/* A real that validation requires to be a whole number (public.batch_size,
 * pretrain.batch_size): its literal must be exact too. */
static dpzo_status get_whole(dpzo_ctx *ctx, const cJSON *v, const char *key, double *out)
{
    dpzo_status st = get_real(ctx, v, key, out);
    return st != DPZO_OK ? st : exact_integer(ctx, v, key);
}

/* A non-negative integer up to 2^53 (JSON numbers are doubles). */
static dpzo_status get_count(dpzo_ctx *ctx, const cJSON *v, const char *key, uint64_t *out)
{
    if (exact_integer(ctx, v, key) != DPZO_OK)
        return DPZO_EPARSE;
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
    if (x != floor(x) || x < 0.0 || x > 0x1p53)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "config: '%s' must be a non-negative integer (at most 2^53)", key);
    *out = (uint64_t)x;
    return DPZO_OK;
}

static dpzo_status get_choice(dpzo_ctx *ctx, const cJSON *v, const char *key,
                              const char *const *names, int n, int *out)
{
    if (cJSON_IsString(v))
        for (int k = 0; k < n; k++)
            if (strcmp(v->valuestring, names[k]) == 0) {
                *out = k;
                return DPZO_OK;
            }
    char list[128] = "";
    for (int k = 0; k < n; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"",
                 k == 0 ? "" : k == n - 1 ? " or " : ", ", names[k]);
    if (cJSON_IsString(v))
        return dpzo__fail(ctx, DPZO_EINVAL, "config: '%s' must be %s, got \"%s\"", key, list,
                          v->valuestring);
    return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be %s", key, list);
}

/* The seed: an integer up to 2^53, or a string of decimal digits for any uint64. */
static dpzo_status get_seed(dpzo_ctx *ctx, const cJSON *v, uint64_t *out)
{
    if (exact_integer(ctx, v, "seed") != DPZO_OK)
        return DPZO_EPARSE;
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1.0;
    if (cJSON_IsNumber(v) && d == floor(d) && d >= 0.0 && d <= 0x1p53) {
        *out = (uint64_t)d;
        return DPZO_OK;
    }
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    errno = 0;
    unsigned long long x = strtoull(s, NULL, 10);
    if (*s == '\0' || strspn(s, "0123456789") != strlen(s) || errno == ERANGE)
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "config: 'seed' must be an integer in [0, 2^53], or a string of "
                          "decimal digits up to 2^64 - 1");
    *out = (uint64_t)x;
    return DPZO_OK;
}

/* A path, resolved against base_dir when relative. */
static dpzo_status get_path(dpzo_ctx *ctx, const cJSON *v, const char *key,
                            const char *base_dir, char *out)
{
    char raw[DPZO_TRAIN_PATH_MAX];
    dpzo_status st = get_string(ctx, v, key, raw, sizeof raw);
    if (st != DPZO_OK)
        return st;
    if (raw[0] == '\0')
        return dpzo__fail(ctx, DPZO_EINVAL, "config: '%s' is an empty path", key);
    int n = raw[0] == '/' || base_dir == NULL || base_dir[0] == '\0'
                ? snprintf(out, DPZO_TRAIN_PATH_MAX, "%s", raw)
                : snprintf(out, DPZO_TRAIN_PATH_MAX, "%s/%s", base_dir, raw);
    if (n < 0 || n >= DPZO_TRAIN_PATH_MAX)
        return dpzo__fail(ctx, DPZO_EINVAL, "config: '%s' is too long once resolved", key);
    return DPZO_OK;
}

/* ---- the keys ---------------------------------------------------------------------- */

enum {
    K_ALGORITHM, K_MODEL, K_DATA, K_PROFILE, K_STEPS, K_BATCH_SIZE, K_BATCHING, K_LR,
    K_LR_SCHEDULE, K_LAMBDA, K_DIRECTION, K_RADIUS, K_QUERIES, K_CLIP, K_SEED, K_EVAL_EVERY,
    K_METRICS, K_CHECKPOINT, K_CHECKPOINT_EVERY, K_STAGES, K_PRUNE, K_PUBLIC, K_PRETRAIN,
    K_THREADS, K_COUNT
};
static const char *const keys[K_COUNT] = {
    "algorithm", "model",  "data",     "profile", "steps",     "batch_size", "batching",
    "lr",        "lr_schedule", "lambda", "direction", "radius", "queries", "clip",
    "seed",      "eval_every", "metrics", "checkpoint", "checkpoint_every", "stages",
    "prune",     "public",     "pretrain", "threads"};
static const char *const stage_keys[] = {"count", "first_steps", "lambda_last", "lr_decay",
                                         "prox"};
static const char *const prune_keys[] = {"strategy",   "rate",       "growth",
                                         "select",     "multipliers", "rank_upper",
                                         "rank_lower", "queries",    "lambda"};
static const char *const public_keys[] = {"batch_size",      "k",              "alpha",
                                          "orthonormalize",  "candidate_scale", "noisy_candidate"};
static const char *const pretrain_keys[] = {"steps", "lr", "batch_size"};
static const char *const data_keys[] = {"dir", "train_subset", "public_size",
                                        "validation_size"};

static int key_index(const char *const *names, int n, const char *key)
{
    for (int k = 0; k < n; k++)
        if (strcmp(names[k], key) == 0)
            return k;
    return -1;
}

static dpzo_status unknown_key(dpzo_ctx *ctx, const char *prefix, const char *key,
                               const char *const *names, int n)
{
    char list[512] = "";
    for (int k = 0; k < n; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                 names[k]);
    return dpzo__fail(ctx, DPZO_EPARSE, "config: unknown key '%s%s' (known: %s)", prefix, key,
                      list);
}

static dpzo_status parse_data(dpzo_ctx *ctx, const cJSON *v, const char *base_dir,
                              dpzo_train_config *c)
{
    if (!cJSON_IsObject(v))
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "config: 'data' must be an object {\"dir\", \"train_subset\", "
                          "\"public_size\", \"validation_size\"}");
    unsigned seen = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        int k = key_index(data_keys, COUNT(data_keys), it->string);
        if (k < 0)
            return unknown_key(ctx, "data.", it->string, data_keys, COUNT(data_keys));
        if (seen & (1u << k))
            return dpzo__fail(ctx, DPZO_EPARSE, "config: key 'data.%s' appears twice", it->string);
        seen |= 1u << k;
        dpzo_status st = k == 0   ? get_path(ctx, it, "data.dir", base_dir, c->data_dir)
                         : k == 1 ? get_count(ctx, it, "data.train_subset", &c->train_subset)
                         : k == 2 ? get_count(ctx, it, "data.public_size", &c->public_size)
                                  : get_count(ctx, it, "data.validation_size",
                                              &c->validation_size);
        if (st != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

static dpzo_status get_bool(dpzo_ctx *ctx, const cJSON *v, const char *key, int *out)
{
    if (!cJSON_IsBool(v))
        return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be true or false", key);
    *out = cJSON_IsTrue(v);
    return DPZO_OK;
}

static dpzo_status get_small(dpzo_ctx *ctx, const cJSON *v, const char *key, unsigned *out)
{
    uint64_t x = 0;
    dpzo_status st = get_count(ctx, v, key, &x);
    *out = x > 100000 ? 100001u : (unsigned)x;
    return st;
}

/* One key (index k of its object's list) of a nested object; key is its dotted name. */
typedef dpzo_status (*sub_parser)(dpzo_ctx *ctx, int k, const cJSON *v, const char *key,
                                  dpzo_train_config *c);

static dpzo_status sub_stages(dpzo_ctx *ctx, int k, const cJSON *v, const char *key,
                              dpzo_train_config *c)
{
    dpzo_stage_config *g = &c->stages;
    switch (k) {
    case 0: return get_small(ctx, v, key, &g->count);
    case 1: return get_count(ctx, v, key, &g->first_steps);
    case 2: return get_real(ctx, v, key, &g->lambda_last);
    case 3: return get_real(ctx, v, key, &g->lr_decay);
    default: return get_real(ctx, v, key, &g->prox);
    }
}

static dpzo_status sub_prune(dpzo_ctx *ctx, int k, const cJSON *v, const char *key,
                             dpzo_train_config *c)
{
    dpzo_prune_config *p = &c->prune;
    int choice = 0;
    dpzo_status st;
    switch (k) {
    case 0:
        st = get_choice(ctx, v, key, strategy_names, COUNT(strategy_names), &choice);
        p->strategy = (dpzo_prune_strategy)choice;
        return st;
    case 1: return get_real(ctx, v, key, &p->rate);
    case 2: return get_real(ctx, v, key, &p->growth);
    case 3:
        st = get_choice(ctx, v, key, select_names, COUNT(select_names), &p->select_largest);
        return st;
    case 4: return get_choice(ctx, v, key, multiplier_names, COUNT(multiplier_names), &p->rank);
    case 5: return get_real(ctx, v, key, &p->rank_upper);
    case 6: return get_real(ctx, v, key, &p->rank_lower);
    case 7: return get_small(ctx, v, key, &p->queries);
    default: return get_real(ctx, v, key, &p->lambda);
    }
}

static dpzo_status sub_public(dpzo_ctx *ctx, int k, const cJSON *v, const char *key,
                              dpzo_train_config *c)
{
    dpzo_public_config *u = &c->pub;
    switch (k) {
    case 0: return get_whole(ctx, v, key, &u->batch_size);
    case 1: return get_small(ctx, v, key, &u->k);
    case 2: return get_real(ctx, v, key, &u->alpha);
    case 3: return get_bool(ctx, v, key, &u->orthonormalize);
    case 4: return get_real(ctx, v, key, &u->candidate_scale);
    default: return get_bool(ctx, v, key, &u->noisy_candidate);
    }
}

static dpzo_status sub_pretrain(dpzo_ctx *ctx, int k, const cJSON *v, const char *key,
                                dpzo_train_config *c)
{
    dpzo_pretrain_config *w = &c->pretrain;
    switch (k) {
    case 0: return get_count(ctx, v, key, &w->steps);
    case 1: return get_real(ctx, v, key, &w->lr);
    default: return get_whole(ctx, v, key, &w->batch_size);
    }
}

/* A nested object: each key known, once, of the right type; *seen gets its key bits. */
static dpzo_status parse_object(dpzo_ctx *ctx, const cJSON *v, const char *name,
                                const char *const *names, int n, sub_parser fn,
                                dpzo_train_config *c, unsigned *seen)
{
    if (!cJSON_IsObject(v))
        return dpzo__fail(ctx, DPZO_EPARSE, "config: '%s' must be an object", name);
    char prefix[32], key[64];
    snprintf(prefix, sizeof prefix, "%s.", name);
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        int k = key_index(names, n, it->string);
        if (k < 0)
            return unknown_key(ctx, prefix, it->string, names, n);
        if (*seen & (1u << k))
            return dpzo__fail(ctx, DPZO_EPARSE, "config: key '%s%s' appears twice", prefix,
                              it->string);
        *seen |= 1u << k;
        snprintf(key, sizeof key, "%s%s", prefix, it->string);
        dpzo_status st = fn(ctx, k, it, key, c);
        if (st != DPZO_OK)
            return st;
    }
    return DPZO_OK;
}

static dpzo_status parse_radius(dpzo_ctx *ctx, const cJSON *v, dpzo_train_config *c)
{
    if (cJSON_IsNumber(v)) {
        c->radius_kind = DPZO_RADIUS_FIXED;
        return get_real(ctx, v, "radius", &c->radius);
    }
    int k;
    dpzo_status st = get_choice(ctx, v, "radius", radius_names, COUNT(radius_names), &k);
    if (st == DPZO_OK)
        c->radius_kind = (dpzo_radius_kind)k;
    else
        dpzo__fail(ctx, st, "config: 'radius' must be \"sqrt_d\", \"d_quarter\" or a number");
    return st;
}

static dpzo_status parse_key(dpzo_ctx *ctx, int k, const cJSON *v, const char *base_dir,
                             dpzo_train_config *c, unsigned *pub_seen)
{
    unsigned sub_seen = 0;
    const char *key = keys[k];
    int choice = 0;
    uint64_t count = 0;
    dpzo_status st = DPZO_OK;
    switch (k) {
    case K_ALGORITHM:
        st = get_choice(ctx, v, key, algorithm_names, COUNT(algorithm_names), &choice);
        c->algorithm = (dpzo_algorithm)choice;
        return st;
    case K_MODEL: return get_string(ctx, v, key, c->model, sizeof c->model);
    case K_DATA: return parse_data(ctx, v, base_dir, c);
    case K_PROFILE: return get_path(ctx, v, key, base_dir, c->profile);
    case K_STEPS: return get_count(ctx, v, key, &c->steps);
    case K_BATCH_SIZE: return get_real(ctx, v, key, &c->batch_size);
    case K_BATCHING:
        st = get_choice(ctx, v, key, batching_names, COUNT(batching_names), &choice);
        c->batching = (dpzo_batching)choice;
        return st;
    case K_LR: return get_real(ctx, v, key, &c->lr);
    case K_LR_SCHEDULE:
        st = get_choice(ctx, v, key, schedule_names, COUNT(schedule_names), &choice);
        c->lr_schedule = (dpzo_lr_schedule)choice;
        return st;
    case K_LAMBDA: return get_real(ctx, v, key, &c->lambda);
    case K_DIRECTION:
        st = get_choice(ctx, v, key, direction_names, COUNT(direction_names), &choice);
        c->direction = (dpzo_dir_kind)choice;
        return st;
    case K_RADIUS: return parse_radius(ctx, v, c);
    case K_QUERIES:
        st = get_count(ctx, v, key, &count);
        c->queries = count > QUERIES_MAX ? QUERIES_MAX + 1 : (unsigned)count;
        return st;
    case K_CLIP: return get_real(ctx, v, key, &c->clip);
    case K_SEED: return get_seed(ctx, v, &c->seed);
    case K_EVAL_EVERY: return get_count(ctx, v, key, &c->eval_every);
    case K_THREADS: /* the range is checked with the other values */
        st = get_count(ctx, v, key, &count);
        c->threads = count > THREADS_MAX ? THREADS_MAX + 1 : (unsigned)count;
        return st;
    case K_METRICS: return get_path(ctx, v, key, base_dir, c->metrics);
    case K_CHECKPOINT: return get_path(ctx, v, key, base_dir, c->checkpoint);
    case K_STAGES:
        return parse_object(ctx, v, key, stage_keys, COUNT(stage_keys), sub_stages, c, &sub_seen);
    case K_PRUNE:
        return parse_object(ctx, v, key, prune_keys, COUNT(prune_keys), sub_prune, c, &sub_seen);
    case K_PUBLIC:
        return parse_object(ctx, v, key, public_keys, COUNT(public_keys), sub_public, c,
                            pub_seen);
    case K_PRETRAIN:
        return parse_object(ctx, v, key, pretrain_keys, COUNT(pretrain_keys), sub_pretrain, c,
                            &sub_seen);
    default: return get_count(ctx, v, key, &c->checkpoint_every);
    }
}

/* The public-data keys each method reads. */
static dpzo_status check_public_keys(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned seen)
{
    /* bits of public_keys: batch_size 0, k 1, alpha 2, orthonormalize 3, candidate_scale 4,
     * noisy_candidate 5 */
    unsigned allowed = c->algorithm == DPZO_ALG_PAZO_M   ? 0x05u
                       : c->algorithm == DPZO_ALG_PAZO_P ? 0x0bu
                       : c->algorithm == DPZO_ALG_DPMD   ? 0x01u
                                                         : 0x33u;
    for (int k = 0; k < COUNT(public_keys); k++)
        if ((seen >> k & 1u) && !(allowed >> k & 1u))
            return dpzo__fail(ctx, DPZO_EINVAL, "config: 'public.%s' does not apply to %s",
                              public_keys[k], dpzo_algorithm_name(c->algorithm));
    return DPZO_OK;
}

/* Keys that do not apply to the algorithm (or direction) are errors, not silently ignored. */
static dpzo_status check_applicable(dpzo_ctx *ctx, const dpzo_train_config *c, unsigned seen,
                                    unsigned pub_seen)
{
    static const int zo_only[] = {K_LAMBDA, K_DIRECTION, K_RADIUS, K_QUERIES};
    static const int private_only[] = {K_PROFILE, K_CLIP};
    const char *alg = dpzo_algorithm_name(c->algorithm);
    if (!is_zeroth_order(c->algorithm))
        for (int i = 0; i < COUNT(zo_only); i++)
            if (seen & (1u << zo_only[i]))
                return dpzo__fail(ctx, DPZO_EINVAL,
                                  "config: '%s' applies to the zeroth-order algorithms (dpzero, "
                                  "mezo, dpzoso, dpzopo, pazo-m, pazo-p), not to %s",
                                  keys[zo_only[i]], alg);
    if (!dpzo_algorithm_is_private(c->algorithm))
        for (int i = 0; i < COUNT(private_only); i++)
            if (seen & (1u << private_only[i]))
                return dpzo__fail(ctx, DPZO_EINVAL,
                                  "config: '%s' applies to the private algorithms, not to %s",
                                  keys[private_only[i]], alg);
    if ((seen & (1u << K_RADIUS)) && c->direction != DPZO_DIR_SPHERE)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'radius' applies to direction \"sphere\" only");
    if ((seen & (1u << K_STAGES)) && !dpzo_algorithm_is_stagewise(c->algorithm))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'stages' applies to dpzoso and dpzopo, not to %s", alg);
    if ((seen & (1u << K_PRUNE)) && c->algorithm != DPZO_ALG_DPZOPO)
        return dpzo__fail(ctx, DPZO_EINVAL, "config: 'prune' applies to dpzopo, not to %s", alg);
    if ((seen & (1u << K_PUBLIC)) && !uses_public(c->algorithm))
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "config: 'public' applies to pazo-m, pazo-p, pazo-s and dpmd, not to %s",
                          alg);
    return uses_public(c->algorithm) ? check_public_keys(ctx, c, pub_seen) : DPZO_OK;
}

/* The papers' direction defaults where the configuration names none: PAZO-M samples the
 * sphere of radius d^(1/4), PAZO-P the sphere of radius sqrt(k) in the span's coordinates. */
static void method_defaults(dpzo_train_config *c, unsigned seen)
{
    if (c->algorithm != DPZO_ALG_PAZO_M && c->algorithm != DPZO_ALG_PAZO_P)
        return;
    if (!(seen & (1u << K_DIRECTION)))
        c->direction = DPZO_DIR_SPHERE;
    if (!(seen & (1u << K_RADIUS)) && c->algorithm == DPZO_ALG_PAZO_M)
        c->radius_kind = DPZO_RADIUS_D_QUARTER;
}

/* The keys of dpzo's own models and files, refused by the step's configuration. */
static int trainer_only(int k)
{
    return k == K_MODEL || k == K_DATA || k == K_EVAL_EVERY || k == K_METRICS ||
           k == K_CHECKPOINT || k == K_CHECKPOINT_EVERY || k == K_PRETRAIN || k == K_THREADS;
}

/* len: the text's length (a file's may hold a NUL byte: refused, docs/files.md); path: the
 * file's name for messages, or NULL. */
static dpzo_status parse_config(dpzo_ctx *ctx, const char *json, size_t len, const char *path,
                                const char *base_dir, dpzo_train_config *out, int step_only);

dpzo_status dpzo_train_config_parse(dpzo_ctx *ctx, const char *json, const char *base_dir,
                                    dpzo_train_config *out)
{
    return parse_config(ctx, json, json ? strlen(json) : 0, NULL, base_dir, out, 0);
}

dpzo_status dpzo_zo_config_parse(dpzo_ctx *ctx, const char *json, const char *base_dir,
                                 dpzo_train_config *out)
{
    return parse_config(ctx, json, json ? strlen(json) : 0, NULL, base_dir, out, 1);
}

static dpzo_status parse_config(dpzo_ctx *ctx, const char *json, size_t len, const char *path,
                                const char *base_dir, dpzo_train_config *out, int step_only)
{
    dpzo_train_config_init(out);
    if (json == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "config: no text");
    cJSON *root = NULL;
    size_t at = 0;
    char jerr[DPZO_ERRMSG_SIZE];
    int jst = dpzo_json_parse(json, len, &root, &at, jerr, sizeof jerr);
    if (jst == DPZO_JSON_REFUSED)
        return dpzo__fail(ctx, DPZO_EPARSE, "config%s%s: %s", path ? " " : "", path ? path : "",
                          jerr);
    if (root == NULL)
        return dpzo__fail(ctx, DPZO_EPARSE, "config: not valid JSON (near byte %ld)", (long)at);
    dpzo_status st = DPZO_OK;
    unsigned seen = 0, pub_seen = 0;
    if (!cJSON_IsObject(root))
        st = dpzo__fail(ctx, DPZO_EPARSE, "config: the top level must be a JSON object");
    const cJSON *it = cJSON_IsObject(root) ? root->child : NULL;
    for (; it != NULL && st == DPZO_OK; it = it->next) {
        int k = key_index(keys, K_COUNT, it->string);
        if (k < 0)
            st = unknown_key(ctx, "", it->string, keys, K_COUNT);
        else if (seen & (1u << k))
            st = dpzo__fail(ctx, DPZO_EPARSE, "config: key '%s' appears twice", it->string);
        else if (step_only && trainer_only(k))
            st = dpzo__fail(ctx, DPZO_EINVAL,
                            "config: '%s' belongs to `dpzo train` (dpzo's own models and "
                            "files); the step's configuration has no such key",
                            it->string);
        else
            st = parse_key(ctx, k, it, base_dir, out, &pub_seen);
        if (k >= 0)
            seen |= 1u << k;
    }
    cJSON_Delete(root);
    if (st == DPZO_OK)
        method_defaults(out, seen);
    if (st == DPZO_OK)
        st = dpzo__train_config_check(ctx, out, step_only);
    if (st == DPZO_OK)
        st = check_applicable(ctx, out, seen, pub_seen);
    return st;
}

dpzo_status dpzo_train_config_read_file(dpzo_ctx *ctx, const char *path, dpzo_train_config *out)
{
    dpzo_train_config_init(out);
    /* a regular file only (a FIFO or device is refused before any read), at most 16 MiB */
    char *text = NULL, err[DPZO_IO_ERRMAX];
    size_t len = 0;
    if (dpzo_io_read_file(path, "config", DPZO_IO_LIMIT_CONFIG, &text, &len, err, sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL, "%s", err);
    char base[DPZO_TRAIN_PATH_MAX] = "";
    const char *slash = strrchr(path, '/');
    if (slash != NULL)
        snprintf(base, sizeof base, "%.*s", (int)(slash - path) + (slash == path), path);
    dpzo_status st = parse_config(ctx, text, len, path, base, out, 0);
    free(text);
    return st;
}

/* ---- fingerprint ------------------------------------------------------------------- */

/* A fast 64-bit hash of the data set's bytes (not cryptographic: it only tells data sets
 * apart in the fingerprint). */
static uint64_t data_hash(const dpzo_dataset *ds)
{
    uint64_t h = 0x6a09e667f3bcc908ull ^ ds->n;
    const size_t nx = ds->n * ds->dim;
    for (size_t i = 0; i < nx; i++) {
        uint32_t w;
        memcpy(&w, &ds->x[i], sizeof w);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (size_t i = 0; i < ds->n; i++)
        h = ((h ^ (uint32_t)ds->y[i]) * 0x9e3779b97f4a7c15ull) ^ (h >> 31);
    return h;
}

void dpzo__train_fingerprint(const dpzo_train_config *c, const char *profile_sha256,
                             const dpzo_dataset *train, char hex[65])
{
    char text[2048];
    char radius[40];
    if (c->radius_kind == DPZO_RADIUS_FIXED)
        snprintf(radius, sizeof radius, "%.17g", c->radius);
    else
        snprintf(radius, sizeof radius, "%s", radius_names[c->radius_kind]);
    int n = snprintf(
        text, sizeof text,
        "dpzo-train-fingerprint 1\nalgorithm %s\nmodel %s\ntrain_subset %llu\npublic_size %llu\n"
        "steps %llu\nbatch_size %.17g\nbatching %s\nlr %.17g\nlr_schedule %s\nlambda %.17g\n"
        "direction %s\nradius %s\nqueries %u\nclip %.17g\nseed %llu\nprofile %s\n"
        "data %zu %zu %d %016llx\n",
        dpzo_algorithm_name(c->algorithm), c->model, (unsigned long long)c->train_subset,
        (unsigned long long)c->public_size, (unsigned long long)c->steps, c->batch_size,
        batching_names[c->batching], c->lr, schedule_names[c->lr_schedule], c->lambda,
        direction_names[c->direction], radius, c->queries, c->clip,
        (unsigned long long)c->seed, profile_sha256 ? profile_sha256 : "none", train->n,
        train->dim, train->n_classes, (unsigned long long)data_hash(train));
    /* the methods' settings (absent for the four original algorithms, whose fingerprints
     * stay as they were) */
    size_t len = n > 0 && (size_t)n < sizeof text ? (size_t)n : 0;
#define ADD(...) (len += (size_t)snprintf(text + len, sizeof text - len, __VA_ARGS__), \
                  len = len < sizeof text ? len : sizeof text - 1)
    if (dpzo_algorithm_is_stagewise(c->algorithm)) {
        const dpzo_stage_config *g = &c->stages;
        ADD("stages %u %llu %.17g %.17g %.17g\n", g->count, (unsigned long long)g->first_steps,
            g->lambda_last, g->lr_decay, g->prox);
    }
    if (c->algorithm == DPZO_ALG_DPZOPO) {
        const dpzo_prune_config *p = &c->prune;
        ADD("prune %s %.17g %.17g %d %d %.17g %.17g %u %.17g\n", strategy_names[p->strategy],
            p->rate, dpzo__prune_growth(p), p->select_largest, p->rank, p->rank_upper,
            p->rank_lower, p->queries, p->lambda);
    }
    if (uses_public(c->algorithm)) {
        const dpzo_public_config *u = &c->pub;
        ADD("public %.17g %u %.17g %d %.17g %d\n", u->batch_size, u->k, u->alpha,
            u->orthonormalize, u->candidate_scale, u->noisy_candidate);
    }
    if (c->pretrain.steps > 0)
        ADD("pretrain %llu %.17g %.17g\n", (unsigned long long)c->pretrain.steps, c->pretrain.lr,
            c->pretrain.batch_size);
    if (c->validation_size > 0) /* which rows are private depends on it */
        ADD("validation_size %llu\n", (unsigned long long)c->validation_size);
#undef ADD
    dpzo__sha256_hex(text, len, hex);
}

double dpzo__train_radius(const dpzo_train_config *c, size_t d)
{
    switch (c->radius_kind) {
    case DPZO_RADIUS_SQRT_D:
        return sqrt((double)d);
    case DPZO_RADIUS_D_QUARTER:
        return sqrt(sqrt((double)d));
    default:
        return c->radius;
    }
}
