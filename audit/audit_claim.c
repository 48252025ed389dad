/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit_claim.c: claim files (docs/audit.md, section 2) and the audit of a
 * claim spec (dpzo/audit_claim.h). Parsing is strict: unknown or duplicated keys,
 * mistyped values and values out of range are errors that name the file and the key. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo/audit_claim.h"
#include "internal.h"
#include "audit_internal.h"
#include "dpzo_io.h"
#include "dpzo_json.h"

void dpzo_claim_spec_init(dpzo_claim_spec *s)
{
    memset(s, 0, sizeof *s);
    dpzo_claim_init(&s->claim);
    s->attack_confidence = 0.95;
    s->attack_delta = NAN;
}

/* ---- Typed access with the key's path in every message ----------------------------- */

typedef struct {
    dpzo_ctx *ctx;
    const char *what; /* the file */
    char where[96];   /* "claims[2]" or "" */
} parser;

#define PFAIL(p, st, ...) parse_fail(p, st, __VA_ARGS__)
static dpzo_status parse_fail(const parser *p, dpzo_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dpzo_status parse_fail(const parser *p, dpzo_status st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dpzo__fail(p->ctx, st, "claim file %s: %s%s%s", p->what, p->where,
                      p->where[0] ? ": " : "", msg);
}

/* Every key of obj must be in `allowed` (NULL-terminated) and appear once. */
static dpzo_status check_keys(const parser *p, const cJSON *obj, const char *name,
                              const char *const *allowed)
{
    for (const cJSON *k = obj->child; k != NULL; k = k->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a != NULL; a++)
            ok |= strcmp(k->string, *a) == 0;
        if (!ok)
            return PFAIL(p, DPZO_EPARSE, "unknown key \"%s\" in %s", k->string, name);
        for (const cJSON *j = obj->child; j != k; j = j->next)
            if (strcmp(j->string, k->string) == 0)
                return PFAIL(p, DPZO_EPARSE, "key \"%s\" appears twice in %s", k->string, name);
    }
    return DPZO_OK;
}

static const cJSON *item(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A number (present: 1, absent: 0). */
static dpzo_status number(const parser *p, const cJSON *obj, const char *key, double *out,
                          int *present)
{
    const cJSON *v = item(obj, key);
    *present = v != NULL && !cJSON_IsNull(v);
    if (!*present)
        return DPZO_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return PFAIL(p, DPZO_EPARSE, "\"%s\" must be a finite number", key);
    *out = v->valuedouble;
    return DPZO_OK;
}

static dpzo_status count(const parser *p, const cJSON *obj, const char *key, uint64_t *out,
                         int *present)
{
    double d = 0;
    dpzo_status st = number(p, obj, key, &d, present);
    if (st || !*present)
        return st;
    char why[DPZO_ERRMSG_SIZE / 2]; /* only a literal that is exactly its value (issue 28, 9) */
    if (dpzo_json_check_integer(item(obj, key), why, sizeof why) != 0)
        return PFAIL(p, DPZO_EPARSE, "\"%s\" must be a whole number: %s", key, why);
    if (!(d >= 0.0 && d <= 9007199254740992.0 && d == floor(d)))
        return PFAIL(p, DPZO_EINVAL, "\"%s\" must be a whole number in [0, 2^53], got %.17g", key,
                     d);
    *out = (uint64_t)d;
    return DPZO_OK;
}

static dpzo_status string(const parser *p, const cJSON *obj, const char *key, char *buf,
                          size_t size, int *present)
{
    const cJSON *v = item(obj, key);
    *present = v != NULL && !cJSON_IsNull(v);
    if (!*present)
        return DPZO_OK;
    if (!cJSON_IsString(v))
        return PFAIL(p, DPZO_EPARSE, "\"%s\" must be a string", key);
    if (strlen(v->valuestring) >= size)
        return PFAIL(p, DPZO_EINVAL, "\"%s\" is longer than %zu characters", key, size - 1);
    snprintf(buf, size, "%s", v->valuestring);
    return DPZO_OK;
}

static dpzo_status object(const parser *p, const cJSON *obj, const char *key,
                          const cJSON **out, int required)
{
    *out = item(obj, key);
    if (*out == NULL || cJSON_IsNull(*out)) {
        *out = NULL;
        return required ? PFAIL(p, DPZO_EPARSE, "missing \"%s\"", key) : DPZO_OK;
    }
    if (!cJSON_IsObject(*out))
        return PFAIL(p, DPZO_EPARSE, "\"%s\" must be an object", key);
    return DPZO_OK;
}

static int scheme_parse(const char *s, dpzo_sampling_scheme *out)
{
    static const struct {
        const char *name;
        dpzo_sampling_scheme s;
    } t[] = {{"poisson", DPZO_SAMPLING_POISSON}, {"fixed", DPZO_SAMPLING_FIXED},
             {"shuffled", DPZO_SAMPLING_SHUFFLED}, {"full", DPZO_SAMPLING_FULL}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (strcmp(s, t[i].name) == 0) {
            *out = t[i].s;
            return 1;
        }
    return 0;
}

/* ---- Sections ---------------------------------------------------------------------- */

static dpzo_status parse_lmo(const parser *p, const cJSON *m, dpzo_lmo *lmo)
{
    static const char *keys[] = {"gamma_weight", "gamma_shape", "gamma_scale", "exp_weight",
                                 "exp_rate",     "uniform_weight", "uniform_low",
                                 "uniform_high"};
    double *dst[] = {&lmo->gamma_weight, &lmo->gamma_shape, &lmo->gamma_scale,
                     &lmo->exp_weight,   &lmo->exp_rate,    &lmo->uniform_weight,
                     &lmo->uniform_low,  &lmo->uniform_high};
    for (size_t i = 0; i < 8; i++) {
        int present;
        dpzo_status st = number(p, m, keys[i], dst[i], &present);
        if (st)
            return st;
        if (!present)
            return PFAIL(p, DPZO_EPARSE, "mechanism: an lmo noise needs \"%s\"", keys[i]);
    }
    if (dpzo_lmo_validate(p->ctx, lmo))
        return PFAIL(p, DPZO_EINVAL, "mechanism: %s", dpzo_ctx_errmsg(p->ctx));
    return DPZO_OK;
}

static dpzo_status parse_mechanism(const parser *p, const cJSON *m, const char *dir,
                                   dpzo_claim_spec *s)
{
    static const char *const allowed[] = {
        "noise",    "noise_multiplier", "sensitivity", "profile",     "gamma_weight",
        "gamma_shape", "gamma_scale",   "exp_weight",  "exp_rate",    "uniform_weight",
        "uniform_low", "uniform_high",  NULL};
    dpzo_status st;
    int present;
    char noise[16] = "", prof[512] = "";
    if ((st = check_keys(p, m, "mechanism", allowed))
        || (st = string(p, m, "profile", prof, sizeof prof, &present)))
        return st;
    if (present) {
        if (m->child->next != NULL)
            return PFAIL(p, DPZO_EPARSE, "mechanism: \"profile\" comes alone (the noise and "
                                         "its sensitivity are the profile's)");
        char path[1024];
        if (prof[0] == '/' || dir == NULL || dir[0] == '\0')
            snprintf(path, sizeof path, "%s", prof);
        else
            snprintf(path, sizeof path, "%s/%s", dir, prof);
        dpzo_profile pr;
        if ((st = dpzo_profile_read_file(p->ctx, path, &pr)))
            return PFAIL(p, st, "mechanism: profile %s: %s", prof, dpzo_ctx_errmsg(p->ctx));
        dpzo_claim_spec tmp;
        dpzo_claim_spec_init(&tmp);
        st = dpzo_claim_spec_from_profile(p->ctx, &pr, &tmp);
        dpzo_profile_free(&pr);
        if (st)
            return PFAIL(p, st, "mechanism: profile %s: %s", prof, dpzo_ctx_errmsg(p->ctx));
        s->noise = tmp.noise;
        s->lmo = tmp.lmo;
        s->claim.noise_multiplier = tmp.claim.noise_multiplier;
        s->claim.sensitivity = 1.0; /* a profile's noise is scaled by its sensitivity */
        snprintf(s->profile, sizeof s->profile, "%s", prof);
        return DPZO_OK;
    }
    if ((st = string(p, m, "noise", noise, sizeof noise, &present)))
        return st;
    if (!present)
        return PFAIL(p, DPZO_EPARSE, "mechanism needs \"noise\" (\"gaussian\" or \"lmo\") or "
                                     "\"profile\"");
    double sens = 0.0;
    if ((st = number(p, m, "sensitivity", &sens, &present)))
        return st;
    if (present && !(sens > 0.0))
        return PFAIL(p, DPZO_EINVAL, "mechanism: \"sensitivity\" must be > 0, got %g", sens);
    s->claim.sensitivity = present ? sens : 0.0;
    if (strcmp(noise, "gaussian") == 0) {
        for (const cJSON *k = m->child; k != NULL; k = k->next)
            if (strcmp(k->string, "noise") && strcmp(k->string, "noise_multiplier")
                && strcmp(k->string, "sensitivity"))
                return PFAIL(p, DPZO_EPARSE, "mechanism: \"%s\" is not a gaussian parameter",
                             k->string);
        if ((st = number(p, m, "noise_multiplier", &s->claim.noise_multiplier, &present)))
            return st;
        if (!present)
            return PFAIL(p, DPZO_EPARSE, "mechanism: a gaussian noise needs \"noise_multiplier\"");
        if (!(s->claim.noise_multiplier > 0.0))
            return PFAIL(p, DPZO_EINVAL, "mechanism: \"noise_multiplier\" must be > 0, got %g",
                         s->claim.noise_multiplier);
        s->noise = DPZO_CLAIM_NOISE_GAUSSIAN;
        return DPZO_OK;
    }
    if (strcmp(noise, "lmo") == 0) {
        if (item(m, "noise_multiplier") != NULL)
            return PFAIL(p, DPZO_EPARSE, "mechanism: an lmo noise has no \"noise_multiplier\"");
        s->noise = DPZO_CLAIM_NOISE_LMO;
        return parse_lmo(p, m, &s->lmo);
    }
    return PFAIL(p, DPZO_EINVAL, "mechanism: \"noise\" must be \"gaussian\" or \"lmo\", got \"%s\"",
                 noise);
}

static dpzo_status parse_sampling(const parser *p, const cJSON *o, dpzo_claim *c)
{
    static const char *const allowed[] = {"scheme", "rate", "batch_size", "dataset_size", NULL};
    dpzo_status st;
    char scheme[16];
    int has_scheme, has_rate, has_b, has_n;
    if ((st = check_keys(p, o, "sampling", allowed))
        || (st = string(p, o, "scheme", scheme, sizeof scheme, &has_scheme))
        || (st = number(p, o, "rate", &c->sampling_rate, &has_rate))
        || (st = count(p, o, "batch_size", &c->batch_size, &has_b))
        || (st = count(p, o, "dataset_size", &c->dataset_size, &has_n)))
        return st;
    if (!has_scheme)
        return PFAIL(p, DPZO_EPARSE,
                     "sampling needs \"scheme\" (poisson, fixed, shuffled or full)");
    if (!scheme_parse(scheme, &c->sampling))
        return PFAIL(p, DPZO_EINVAL, "sampling: unknown scheme \"%s\" (poisson, fixed, shuffled or "
                                     "full)", scheme);
    if (has_n && c->dataset_size < 1)
        return PFAIL(p, DPZO_EINVAL, "sampling: \"dataset_size\" must be >= 1");
    if (has_b && (c->batch_size < 1 || (has_n && c->batch_size > c->dataset_size)))
        return PFAIL(p, DPZO_EINVAL, "sampling: \"batch_size\" must be in [1, dataset_size], got "
                                     "%llu", (unsigned long long)c->batch_size);
    switch (c->sampling) {
    case DPZO_SAMPLING_POISSON:
        if (has_b != has_n)
            return PFAIL(p, DPZO_EPARSE, "sampling: \"batch_size\" and \"dataset_size\" come "
                                         "together");
        if (!has_rate && !has_b)
            return PFAIL(p, DPZO_EPARSE, "sampling: poisson needs \"rate\" or \"batch_size\" "
                                         "and \"dataset_size\"");
        if (has_b) {
            double q = (double)c->batch_size / (double)c->dataset_size;
            if (has_rate && fabs(c->sampling_rate - q) > 1e-12 * q)
                return PFAIL(p, DPZO_EINVAL, "sampling: \"rate\" %.17g is not batch_size / "
                                             "dataset_size = %.17g", c->sampling_rate, q);
            c->sampling_rate = q;
        }
        if (!(c->sampling_rate > 0.0 && c->sampling_rate <= 1.0))
            return PFAIL(p, DPZO_EINVAL, "sampling: \"rate\" must be in (0, 1], got %g",
                         c->sampling_rate);
        break;
    case DPZO_SAMPLING_FIXED:
    case DPZO_SAMPLING_SHUFFLED:
        if (has_rate)
            return PFAIL(p, DPZO_EPARSE, "sampling: %s batches take \"batch_size\" and "
                                         "\"dataset_size\", not \"rate\"", scheme);
        if (!has_b || !has_n)
            return PFAIL(p, DPZO_EPARSE, "sampling: %s batches need \"batch_size\" and "
                                         "\"dataset_size\"", scheme);
        break;
    default:
        if (has_rate || has_b)
            return PFAIL(p, DPZO_EPARSE, "sampling: full batches take only \"dataset_size\"");
        break;
    }
    return DPZO_OK;
}

static dpzo_status parse_orders(const parser *p, const cJSON *v, dpzo_claim *c, double **owned)
{
    dpzo_rdp_options *o = &c->accountant;
    if (cJSON_IsString(v)) {
        if (dpzo_order_grid_parse(NULL, v->valuestring, &o->grid) != DPZO_OK)
            return PFAIL(p, DPZO_EINVAL, "accountant: unknown order grid \"%s\" (tf, opacus, "
                                         "dp_accounting or continuous)", v->valuestring);
        return DPZO_OK;
    }
    size_t n = 0;
    double *orders = NULL;
    if (cJSON_IsArray(v)) {
        n = (size_t)cJSON_GetArraySize(v);
        orders = malloc((n ? n : 1) * sizeof *orders);
        if (orders == NULL)
            return dpzo__fail(p->ctx, DPZO_ENOMEM, "out of memory");
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsNumber(e) || !(e->valuedouble > 1.0) || !isfinite(e->valuedouble)) {
                free(orders);
                return PFAIL(p, DPZO_EINVAL, "accountant: \"orders\" must hold numbers > 1");
            }
            orders[i++] = e->valuedouble;
        }
    } else if (cJSON_IsObject(v)) { /* numpy.arange(from, to, step) */
        static const char *const allowed[] = {"from", "to", "step", NULL};
        double from = 0, to = 0, step = 0;
        int a, b, d;
        dpzo_status st;
        if ((st = check_keys(p, v, "accountant.orders", allowed))
            || (st = number(p, v, "from", &from, &a)) || (st = number(p, v, "to", &to, &b))
            || (st = number(p, v, "step", &step, &d)))
            return st;
        if (!a || !b || !d || !(from > 1.0 && to > from && step > 0.0 && (to - from) / step < 1e6))
            return PFAIL(p, DPZO_EINVAL, "accountant: \"orders\" {\"from\", \"to\", \"step\"} "
                                         "needs 1 < from < to and 0 < step (under 1e6 orders)");
        size_t m = (size_t)ceil((to - from) / step);
        orders = malloc(m * sizeof *orders);
        if (orders == NULL)
            return dpzo__fail(p->ctx, DPZO_ENOMEM, "out of memory");
        for (size_t i = 0; i < m; i++)
            if (from + (double)i * step < to)
                orders[n++] = from + (double)i * step;
    } else {
        return PFAIL(p, DPZO_EPARSE, "accountant: \"orders\" must be a grid name, a list or "
                                     "{\"from\", \"to\", \"step\"}");
    }
    if (n == 0) {
        free(orders);
        return PFAIL(p, DPZO_EINVAL, "accountant: \"orders\" is empty");
    }
    o->grid = DPZO_ORDERS_CUSTOM;
    o->orders = orders;
    o->n_orders = n;
    *owned = orders;
    return DPZO_OK;
}

static dpzo_status parse_attack(const parser *p, const cJSON *a, dpzo_claim_spec *s)
{
    static const char *const allowed[] = {"tp", "fp", "tn", "fn", "canaries", "guesses",
                                          "correct", "confidence", "delta", NULL};
    dpzo_status st;
    int h[7], hc, hd;
    uint64_t *dst[7] = {&s->counts.tp, &s->counts.fp, &s->counts.tn, &s->counts.fn,
                        &s->canaries,  &s->guesses,   &s->correct};
    const char *keys[7] = {"tp", "fp", "tn", "fn", "canaries", "guesses", "correct"};
    if ((st = check_keys(p, a, "attack", allowed)))
        return st;
    for (int i = 0; i < 7; i++)
        if ((st = count(p, a, keys[i], dst[i], &h[i])))
            return st;
    if ((st = number(p, a, "confidence", &s->attack_confidence, &hc))
        || (st = number(p, a, "delta", &s->attack_delta, &hd)))
        return st;
    int counts = h[0] + h[1] + h[2] + h[3], run = h[4] + h[5] + h[6];
    if (counts == 4 && run == 0)
        s->attack = DPZO_CLAIM_ATTACK_COUNTS;
    else if (counts == 0 && run == 3)
        s->attack = DPZO_CLAIM_ATTACK_ONE_RUN;
    else
        return PFAIL(p, DPZO_EPARSE, "attack needs either \"tp\", \"fp\", \"tn\", \"fn\" or "
                                     "\"canaries\", \"guesses\", \"correct\"");
    if (hc && !(s->attack_confidence > 0.0 && s->attack_confidence < 1.0))
        return PFAIL(p, DPZO_EINVAL, "attack: \"confidence\" must be in (0, 1)");
    if (hd && !(s->attack_delta >= 0.0 && s->attack_delta < 1.0))
        return PFAIL(p, DPZO_EINVAL, "attack: \"delta\" must be in [0, 1)");
    return DPZO_OK;
}

/* "epochs" as steps by the library's one rule (dpzo_steps_from_epochs): a full batch is
 * one step an epoch, fixed batches ceil(E N / B), Poisson ceil(E / q). */
static dpzo_status steps_from_epochs(const parser *p, dpzo_claim *c, double epochs)
{
    int fixed = c->sampling != DPZO_SAMPLING_FULL && c->batch_size > 0 && c->dataset_size > 0;
    double q = c->sampling == DPZO_SAMPLING_FULL ? 1.0 : c->sampling_rate;
    if (dpzo_steps_from_epochs(p->ctx, epochs, q, fixed ? c->batch_size : 0,
                               fixed ? c->dataset_size : 0, &c->steps) != DPZO_OK) {
        char why[200];
        snprintf(why, sizeof why, "%s", dpzo_ctx_errmsg(p->ctx));
        return PFAIL(p, DPZO_EINVAL, "\"epochs\": %s", why);
    }
    return DPZO_OK;
}

/* A claim about an event (docs/audit.md section 2, "Claims about any event"): "event" in
 * place of "mechanism", "sampling" and "steps"; the event is read (and refused with its JSON
 * path) here, and kept as compact JSON text in *text (cJSON_free it). */
static dpzo_status parse_event_claim(const parser *p, const cJSON *o, dpzo_claim_spec *s,
                                     char **text)
{
    static const char *const excluded[] = {"mechanism", "sampling", "pipeline",
                                           "effective_batch_size", "steps", "epochs",
                                           "adjacency", "accountant", "attack", NULL};
    dpzo_status st;
    int present;
    for (const char *const *k = excluded; *k != NULL; k++)
        if (item(o, *k) != NULL)
            return PFAIL(p, DPZO_EPARSE, "\"event\" describes the whole release: a claim with "
                                         "an event has no \"%s\"", *k);
    dpzo_event *e = NULL;
    if ((st = dpzo__event_from_cjson(p->ctx, item(o, "event"), "event", &e))) {
        char msg[DPZO_ERRMSG_SIZE];
        snprintf(msg, sizeof msg, "%s", dpzo_ctx_errmsg(p->ctx));
        return PFAIL(p, st, "%s", msg);
    }
    dpzo_event_free(e);
    *text = cJSON_PrintUnformatted(item(o, "event"));
    if (*text == NULL)
        return dpzo__fail(p->ctx, DPZO_ENOMEM, "out of memory");
    s->noise = DPZO_CLAIM_NOISE_EVENT;
    dpzo_claim *c = &s->claim;
    if ((st = number(p, o, "epsilon", &c->epsilon, &present)))
        return st;
    if (!present)
        return PFAIL(p, DPZO_EPARSE, "missing \"epsilon\" (the claimed epsilon)");
    if (!(c->epsilon >= 0.0))
        return PFAIL(p, DPZO_EINVAL, "\"epsilon\" must be >= 0, got %g", c->epsilon);
    if ((st = number(p, o, "delta", &c->delta, &present)))
        return st;
    if (!present)
        return PFAIL(p, DPZO_EPARSE, "missing \"delta\"");
    if (!(c->delta > 0.0 && c->delta < 1.0))
        return PFAIL(p, DPZO_EINVAL, "\"delta\" must be in (0, 1), got %g", c->delta);
    return DPZO_OK;
}

/* One claim object. *owned receives an allocation the claim's orders point into, *text an
 * event claim's JSON text (cJSON_free). */
static dpzo_status parse_claim(const parser *p, const cJSON *o, const char *dir, int single,
                               const char *default_source, dpzo_claim_spec *s, double **owned,
                               char **text)
{
    static const char *const allowed[] = {
        "format",  "name",  "source",  "note",  "mechanism", "sampling", "pipeline",
        "effective_batch_size", "steps", "epochs", "adjacency", "epsilon", "delta",
        "accountant", "attack", "event", NULL};
    dpzo_status st;
    int present;
    dpzo_claim *c = &s->claim;
    *owned = NULL;
    *text = NULL;
    if (!cJSON_IsObject(o))
        return PFAIL(p, DPZO_EPARSE, "a claim must be a JSON object");
    if ((st = check_keys(p, o, "the claim", allowed)))
        return st;
    if (!single && item(o, "format") != NULL)
        return PFAIL(p, DPZO_EPARSE, "\"format\" belongs to the file, not to a claim of a list");
    if ((st = string(p, o, "name", s->name, sizeof s->name, &present)))
        return st;
    if ((st = string(p, o, "source", s->source, sizeof s->source, &present)))
        return st;
    if (!present && default_source != NULL)
        snprintf(s->source, sizeof s->source, "%s", default_source);
    if ((st = string(p, o, "note", s->note, sizeof s->note, &present)))
        return st;
    if (item(o, "event") != NULL)
        return parse_event_claim(p, o, s, text);
    const cJSON *m, *samp, *acc, *att;
    if ((st = object(p, o, "mechanism", &m, 1)) || (st = parse_mechanism(p, m, dir, s))
        || (st = object(p, o, "sampling", &samp, 1)) || (st = parse_sampling(p, samp, c)))
        return st;
    char buf[24];
    if ((st = string(p, o, "pipeline", buf, sizeof buf, &present)))
        return st;
    if (present && !scheme_parse(buf, &c->pipeline))
        return PFAIL(p, DPZO_EINVAL, "unknown \"pipeline\" \"%s\" (poisson, fixed, shuffled or "
                                     "full)", buf);
    if ((st = count(p, o, "effective_batch_size", &c->effective_batch_size, &present)))
        return st;
    if (present && c->effective_batch_size < 1)
        return PFAIL(p, DPZO_EINVAL, "\"effective_batch_size\" must be >= 1");
    double epochs = 0;
    int has_steps, has_epochs;
    if ((st = count(p, o, "steps", &c->steps, &has_steps))
        || (st = number(p, o, "epochs", &epochs, &has_epochs)))
        return st;
    if (has_steps == has_epochs)
        return PFAIL(p, DPZO_EPARSE, "give exactly one of \"steps\" and \"epochs\"");
    if (has_epochs) {
        if (!(epochs > 0.0 && epochs < 1e12))
            return PFAIL(p, DPZO_EINVAL, "\"epochs\" must be in (0, 1e12), got %g", epochs);
        if ((st = steps_from_epochs(p, c, epochs)))
            return st;
    }
    if (c->steps < 1)
        return PFAIL(p, DPZO_EINVAL, "\"steps\" must be >= 1");
    if ((st = string(p, o, "adjacency", buf, sizeof buf, &present)))
        return st;
    if (present) {
        if (strcmp(buf, "add-remove") == 0)
            c->adjacency = DPZO_ADJACENCY_ADD_REMOVE;
        else if (strcmp(buf, "replace-one") == 0)
            c->adjacency = DPZO_ADJACENCY_REPLACE_ONE;
        else if (strcmp(buf, "zero-out") == 0)
            c->adjacency = DPZO_ADJACENCY_ZERO_OUT;
        else
            return PFAIL(p, DPZO_EINVAL, "unknown \"adjacency\" \"%s\" (add-remove, replace-one "
                                         "or zero-out)", buf);
    }
    if ((st = number(p, o, "epsilon", &c->epsilon, &present)))
        return st;
    if (!present)
        return PFAIL(p, DPZO_EPARSE, "missing \"epsilon\" (the claimed epsilon)");
    if ((st = number(p, o, "delta", &c->delta, &present)))
        return st;
    if (!present)
        return PFAIL(p, DPZO_EPARSE, "missing \"delta\"");
    if ((st = object(p, o, "accountant", &acc, 0)))
        return st;
    if (acc != NULL) {
        static const char *const akeys[] = {"orders", "conversion", NULL};
        if ((st = check_keys(p, acc, "accountant", akeys)))
            return st;
        c->has_accountant = 1;
        const cJSON *ord = item(acc, "orders");
        if (ord != NULL && (st = parse_orders(p, ord, c, owned)))
            return st;
        if ((st = string(p, acc, "conversion", buf, sizeof buf, &present)))
            return st;
        if (present) {
            if (strcmp(buf, "standard") == 0)
                c->accountant.conversion = DPZO_CONVERSION_STANDARD;
            else if (strcmp(buf, "improved") != 0)
                return PFAIL(p, DPZO_EINVAL, "accountant: \"conversion\" must be \"standard\" or "
                                             "\"improved\", got \"%s\"", buf);
        }
    }
    if ((st = object(p, o, "attack", &att, 0)) || (att != NULL && (st = parse_attack(p, att, s))))
        return st;
    if (dpzo_claim_validate(p->ctx, c))
        return PFAIL(p, DPZO_EINVAL, "%s", dpzo_ctx_errmsg(p->ctx));
    return DPZO_OK;
}

/* Orders of a custom grid live in one block per file; they are copied next to the specs
 * so that a single free() releases everything. */
static dpzo_status claims_from_text(dpzo_ctx *ctx, const char *json, size_t len,
                                    const char *dir, const char *what, dpzo_claim_spec **specs,
                                    size_t *n);

dpzo_status dpzo_claims_from_json(dpzo_ctx *ctx, const char *json, const char *dir,
                                  const char *what, dpzo_claim_spec **specs, size_t *n)
{
    return claims_from_text(ctx, json, strlen(json), dir, what, specs, n);
}

/* len: the text's length (a file's may hold a NUL byte: refused, docs/files.md) */
static dpzo_status claims_from_text(dpzo_ctx *ctx, const char *json, size_t len,
                                    const char *dir, const char *what, dpzo_claim_spec **specs,
                                    size_t *n)
{
    parser p = {ctx, what ? what : "(text)", ""};
    *specs = NULL;
    *n = 0;
    cJSON *root = NULL;
    char jerr[DPZO_ERRMSG_SIZE];
    if (dpzo_json_parse(json, len, &root, NULL, jerr, sizeof jerr) == DPZO_JSON_REFUSED)
        return PFAIL(&p, DPZO_EPARSE, "%s", jerr);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return PFAIL(&p, DPZO_EPARSE, "not a JSON object");
    }
    const cJSON *fmt = item(root, "format");
    dpzo_status st = DPZO_OK;
    if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, DPZO_PROFILE_FORMAT) == 0) {
        cJSON_Delete(root);
        dpzo_profile pr;
        if ((st = dpzo_profile_from_json(ctx, json, &pr)))
            return PFAIL(&p, st, "profile: %s", dpzo_ctx_errmsg(ctx));
        dpzo_claim_spec *s = malloc(sizeof *s);
        if (s == NULL) {
            dpzo_profile_free(&pr);
            return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        }
        dpzo_claim_spec_init(s);
        st = dpzo_claim_spec_from_profile(ctx, &pr, s);
        dpzo_profile_free(&pr);
        if (st) {
            free(s);
            return PFAIL(&p, st, "profile: %s", dpzo_ctx_errmsg(ctx));
        }
        snprintf(s->name, sizeof s->name, "profile %s", p.what);
        *specs = s;
        *n = 1;
        return DPZO_OK;
    }
    int single;
    if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "dpzo-claim") == 0)
        single = 1;
    else if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "dpzo-claims") == 0)
        single = 0;
    else {
        cJSON_Delete(root);
        return PFAIL(&p, DPZO_EPARSE, "\"format\" must be \"dpzo-claim\", \"dpzo-claims\" or "
                                      "\"%s\"", DPZO_PROFILE_FORMAT);
    }
    const cJSON *list = root;
    size_t count_claims = 1;
    char source[640] = "";
    if (!single) {
        static const char *const allowed[] = {"format", "source", "note", "claims", NULL};
        int present;
        if ((st = check_keys(&p, root, "the file", allowed))
            || (st = string(&p, root, "source", source, sizeof source, &present))) {
            cJSON_Delete(root);
            return st;
        }
        list = item(root, "claims");
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
            cJSON_Delete(root);
            return PFAIL(&p, DPZO_EPARSE, "\"claims\" must be a non-empty array of claims");
        }
        count_claims = (size_t)cJSON_GetArraySize(list);
    }
    dpzo_claim_spec *s = calloc(count_claims, sizeof *s);
    double **owned = calloc(count_claims, sizeof *owned);
    char **texts = calloc(count_claims, sizeof *texts);
    if (s == NULL || owned == NULL || texts == NULL) {
        free(s);
        free(owned);
        free(texts);
        cJSON_Delete(root);
        return dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
    }
    size_t total_orders = 0, total_text = 0;
    /* a list walked by its links: cJSON_GetArrayItem(i) would walk from the start each time */
    const cJSON *o = single ? root : list->child;
    for (size_t i = 0; i < count_claims && !st; i++, o = single ? o : o->next) {
        if (!single)
            snprintf(p.where, sizeof p.where, "claims[%zu]", i);
        dpzo_claim_spec_init(&s[i]);
        st = parse_claim(&p, o, dir, single, source[0] ? source : NULL, &s[i], &owned[i],
                         &texts[i]);
        if (!st && s[i].name[0] == '\0')
            snprintf(s[i].name, sizeof s[i].name, "%s%s%s", p.what, single ? "" : " ", p.where);
        if (owned[i] != NULL)
            total_orders += s[i].claim.accountant.n_orders;
        if (texts[i] != NULL)
            total_text += strlen(texts[i]) + 1;
    }
    cJSON_Delete(root);
    dpzo_claim_spec *all = NULL;
    if (!st) {
        all = realloc(s, count_claims * sizeof *s + total_orders * sizeof(double) + total_text);
        if (all == NULL)
            st = dpzo__fail(ctx, DPZO_ENOMEM, "out of memory");
        else
            s = all;
    }
    if (!st) {
        double *dst = (double *)(void *)(all + count_claims);
        for (size_t i = 0; i < count_claims; i++)
            if (owned[i] != NULL) {
                memcpy(dst, owned[i], all[i].claim.accountant.n_orders * sizeof *dst);
                all[i].claim.accountant.orders = dst;
                dst += all[i].claim.accountant.n_orders;
            }
        char *tdst = (char *)(void *)dst;
        for (size_t i = 0; i < count_claims; i++)
            if (texts[i] != NULL) {
                size_t n = strlen(texts[i]) + 1;
                memcpy(tdst, texts[i], n);
                all[i].event_json = tdst;
                tdst += n;
            }
    }
    for (size_t i = 0; i < count_claims; i++) {
        free(owned[i]);
        cJSON_free(texts[i]);
    }
    free(owned);
    free(texts);
    if (st) {
        free(s);
        return st;
    }
    *specs = all;
    *n = count_claims;
    return DPZO_OK;
}

dpzo_status dpzo_claims_read_file(dpzo_ctx *ctx, const char *path, dpzo_claim_spec **specs,
                                  size_t *n)
{
    *specs = NULL;
    *n = 0;
    /* a regular file only (a FIFO or device is refused before any read), at most 64 MiB */
    char *buf = NULL, ioerr[DPZO_IO_ERRMAX];
    size_t len = 0;
    if (dpzo_io_read_file(path, "claim file", DPZO_IO_LIMIT_CLAIM, &buf, &len, ioerr,
                          sizeof ioerr) != 0)
        return dpzo__fail(ctx, DPZO_EPARSE, "cannot read %s", ioerr);

    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        dir[0] = '\0';
    dpzo_status st = claims_from_text(ctx, buf, len, dir, path, specs, n);
    free(buf);
    return st;
}

dpzo_status dpzo_claim_spec_from_profile(dpzo_ctx *ctx, const dpzo_profile *p,
                                         dpzo_claim_spec *s)
{
    dpzo_status st = dpzo_profile_validate(ctx, p);
    if (st)
        return st;
    dpzo_claim *c = &s->claim;
    if (p->kind == DPZO_NOISE_GAUSSIAN) {
        s->noise = DPZO_CLAIM_NOISE_GAUSSIAN;
        c->noise_multiplier = p->noise_multiplier;
    } else {
        if (strcmp(p->clip, "l1") == 0)
            return dpzo__fail(ctx, DPZO_EUNSUPPORTED, "an L1-clipped vector profile is accounted "
                              "by RDP only; the audit covers scalar releases");
        s->noise = DPZO_CLAIM_NOISE_LMO;
        s->lmo = p->lmo;
    }
    c->sensitivity = 1.0; /* the noise is scaled by the profile's sensitivity */
    if (strcmp(p->sampling, "poisson") == 0) {
        c->sampling = DPZO_SAMPLING_POISSON;
        c->sampling_rate = p->sampling_rate;
    } else if (strcmp(p->sampling, "wor") == 0) {
        c->sampling = DPZO_SAMPLING_FIXED;
        c->batch_size = p->batch_size;
        c->dataset_size = p->dataset_size;
        c->adjacency = DPZO_ADJACENCY_REPLACE_ONE;
    } else {
        c->sampling = DPZO_SAMPLING_FULL;
    }
    c->steps = p->steps;
    c->delta = p->delta;
    c->epsilon = p->epsilon;
    snprintf(s->source, sizeof s->source, "dpzo noise profile (%s accountant, %s, sha256 %.16s...)",
             p->accountant, p->epsilon_bound, p->sha256);
    return dpzo_claim_validate(ctx, c);
}

const dpzo_audit_mechanism *dpzo_claim_spec_mechanism(dpzo_ctx *ctx, const dpzo_claim_spec *s,
                                                      dpzo_audit_mechanism *buf)
{
    if (s->noise == DPZO_CLAIM_NOISE_GAUSSIAN)
        return NULL;
    if (s->noise == DPZO_CLAIM_NOISE_EVENT) {
        dpzo__fail(ctx, DPZO_EUNSUPPORTED, "claim %s states an event: it has no mechanism to "
                   "vary (dpzo audit checks it)", s->name);
        return NULL;
    }
    if (dpzo_lmo_audit_mechanism(ctx, &s->lmo, buf))
        return NULL;
    return buf;
}

/* 1 when the PLD the accountants build for e is of a pair of neighbouring datasets that
 * occurs, so that its lower end bounds the true epsilon from below: Gaussian and Laplace
 * releases, tree aggregation (a record at step 0, or at the pattern attaining the squared
 * sensitivity, with aligned contributions; the lower end is the Gaussian's at the noise
 * multiplier rounded up, pld.c), Poisson sampling (both directions are realised by one
 * record added or removed), repetitions and compositions of them. Not sampling without
 * replacement (a dominating pair), zCDP (a bound on the RDP, no mechanism), or the rest. */
static int realised_pld(const dpzo_event *e)
{
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
    case DPZO_EVENT_LAPLACE:
    case DPZO_EVENT_TREE_AGGREGATION:
    case DPZO_EVENT_NON_PRIVATE: return 1;
    case DPZO_EVENT_POISSON_SAMPLED:
    case DPZO_EVENT_SELF_COMPOSED: return realised_pld(e->inner);
    case DPZO_EVENT_COMPOSED:
        for (size_t i = 0; i < e->n_children; i++)
            if (!realised_pld(e->children[i]))
                return 0;
        return 1;
    default: return 0;
    }
}

static dpzo_status audit_event(dpzo_ctx *ctx, const dpzo_claim_spec *s,
                               const dpzo_audit_options *opts, dpzo_claim_report *out)
{
    dpzo_audit_options dflt;
    if (opts == NULL) {
        dpzo_audit_options_default(&dflt);
        opts = &dflt;
    }
    dpzo_audit_result *a = &out->audit;
    dpzo_audit_bounds *b = &a->bounds;
    a->stated_epsilon = a->stated_order = NAN;
    a->sigma_needed = a->sigma_needed_tight = a->sigma_needed_rdp = NAN;
    b->rdp = b->rdp_order = NAN;
    b->pld_upper = b->pld_lower = b->pld_grid = b->prv_upper = b->prv_lower = NAN;
    b->upper_slack = b->lower_slack = NAN;
    b->upper = INFINITY;
    b->lower = 0.0;
    b->upper_from = b->lower_from = "none";
    dpzo_event *e = NULL;
    dpzo_status st = dpzo_event_parse_json(ctx, s->event_json, &e);
    if (st)
        return st;
    char d[160];
    dpzo_event_describe(e, d, sizeof d);
    snprintf(a->accounted, sizeof a->accounted, "event %s%s", d,
             strlen(d) + 1 >= sizeof d ? "..." : "");
    double delta = s->claim.delta, eps = s->claim.epsilon;
    dpzo_dp_result r;
    st = dpzo_event_epsilon(ctx, e, delta, NULL, &r);
    if (st == DPZO_OK) {
        b->rdp = r.epsilon;
        b->rdp_order = r.order;
        b->upper = r.epsilon;
        b->upper_from = "rdp";
    } else if (st != DPZO_EUNSUPPORTED) {
        dpzo_event_free(e);
        return st;
    }
    int lower_ok = realised_pld(e), ran;
    dpzo_pld_result t;
    for (double grid = opts->pld_grid > 0.0 ? opts->pld_grid : 1e-4;; grid /= 10.0) {
        dpzo__audit_tight(ctx, e, delta, DPZO_PLD_CONNECT_DOTS, grid, opts, &t, &ran);
        if (!ran)
            break;
        b->pld_upper = t.epsilon_upper;
        b->pld_lower = lower_ok && !t.fallback ? t.epsilon_lower : NAN;
        b->pld_grid = t.grid;
        double lo = isnan(b->pld_lower) ? 0.0 : b->pld_lower;
        double up = fmin(b->upper, b->pld_upper);
        /* a finer grid cannot take the upper end below the PLD's own lower end: once the
         * claim is below that, refining cannot decide it (no realised lower bound) or it is
         * decided already */
        if (dpzo_verdict_of(lo, up, eps) != DPZO_VERDICT_UNDETERMINED
            || eps < t.epsilon_lower || !(grid / 10.0 >= opts->pld_grid_min))
            break;
    }
    if (opts->prv) {
        dpzo__audit_tight(ctx, e, delta, DPZO_PLD_PRV, 0.0, opts, &t, &ran);
        if (ran) {
            b->prv_upper = t.epsilon_upper;
            b->prv_lower = lower_ok && !t.fallback ? t.epsilon_lower : NAN;
        }
    }
    dpzo_event_free(e);
    if (!isnan(b->pld_upper) && b->pld_upper < b->upper) {
        b->upper = b->pld_upper;
        b->upper_from = "pld";
    }
    if (!isnan(b->prv_upper) && b->prv_upper < b->upper) {
        b->upper = b->prv_upper;
        b->upper_from = "prv";
    }
    if (!isnan(b->pld_lower) && b->pld_lower > b->lower) {
        b->lower = b->pld_lower;
        b->lower_from = "pld";
    }
    if (!isnan(b->prv_lower) && b->prv_lower > b->lower) {
        b->lower = b->prv_lower;
        b->lower_from = "prv";
    }
    if (!(b->lower <= b->upper)) { /* the accountants contradict each other: certify nothing */
        a->flags |= DPZO_AUDIT_INCONSISTENT;
        snprintf(a->notes[a->n_notes++], sizeof a->notes[0],
                 "the accountants' bounds contradict each other (lower %.17g > upper %.17g): "
                 "both withdrawn", b->lower, b->upper);
        b->lower = 0.0;
        b->upper = INFINITY;
        b->lower_from = b->upper_from = "none";
    }
    if (!lower_ok) {
        a->flags |= DPZO_AUDIT_NO_LOWER;
        snprintf(a->notes[a->n_notes++], sizeof a->notes[0],
                 "no lower bound: the event holds a part whose PLD is not of a pair of "
                 "datasets that occurs (sampling without replacement, zCDP, ...), so the "
                 "verdict is HOLDS or UNDETERMINED");
    }
    a->verdict = dpzo_verdict_of(b->lower, b->upper, eps);
    return DPZO_OK;
}

dpzo_status dpzo_claim_spec_audit(dpzo_ctx *ctx, const dpzo_claim_spec *s,
                                  const dpzo_audit_options *opts, dpzo_claim_report *out)
{
    memset(out, 0, sizeof *out);
    out->attack_epsilon = NAN;
    if (s->noise == DPZO_CLAIM_NOISE_EVENT)
        return audit_event(ctx, s, opts, out);
    dpzo_audit_mechanism buf;
    const dpzo_audit_mechanism *mech = NULL;
    dpzo_status st;
    if (s->noise == DPZO_CLAIM_NOISE_LMO) {
        if ((st = dpzo_lmo_audit_mechanism(ctx, &s->lmo, &buf)))
            return st;
        mech = &buf;
    }
    if ((st = dpzo_audit_claim(ctx, &s->claim, mech, opts, &out->audit)))
        return st;
    out->attack_kind = s->attack;
    double delta = isnan(s->attack_delta) ? s->claim.delta : s->attack_delta;
    if (s->attack == DPZO_CLAIM_ATTACK_COUNTS) {
        if ((st = dpzo_attack_epsilon_counts(ctx, &s->counts, delta, s->attack_confidence,
                                             &out->attack)))
            return st;
        out->attack_epsilon = out->attack.epsilon;
    } else if (s->attack == DPZO_CLAIM_ATTACK_ONE_RUN) {
        if ((st = dpzo_one_run_epsilon(ctx, s->canaries, s->guesses, s->correct, delta,
                                       s->attack_confidence, &out->attack_epsilon)))
            return st;
        out->attack.confidence = s->attack_confidence;
        out->attack.delta = delta;
    }
    if (s->attack != DPZO_CLAIM_ATTACK_NONE)
        out->attack_exceeds_upper = out->attack_epsilon > out->audit.bounds.upper;
    return DPZO_OK;
}
