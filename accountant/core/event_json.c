/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/event_json.c: privacy events written as JSON (docs/accountant.md,
 * section 7). One object per event: {"type": NAME, FIELD: VALUE, ...}, NAME a dp_accounting
 * class name without "DpEvent" ("Gaussian", "PoissonSampled", "ZCDp", ...) or the whole
 * class name ("GaussianDpEvent"), FIELD that class's field names ("noise_multiplier",
 * "sampling_probability", "event", "events", "count", ...). The parser is one table, KINDS
 * below: a kind is a name, its fields (key, type, range, required or default) and a builder
 * that calls the C constructor; adding a kind is adding an entry. Strict: an unknown or
 * repeated key, a value of the wrong type, a missing field, a number that is not finite, out
 * of its range or (for a count) not exactly an integer, nesting deeper than
 * DPZO_EVENT_JSON_MAX_DEPTH, or more than DPZO_EVENT_JSON_MAX_NODES events or array entries
 * in all, is refused with a message naming the JSON path ("event.events[2].count"). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpzo_io.h"
#include "dpzo_json.h"
#include "internal.h"

#define TWO53 9007199254740992.0

typedef enum {
    F_REAL,   /* a finite number in [lo, hi] */
    F_COUNT,  /* a whole number in [lo, min(hi, 2^53)], its literal exactly that integer */
    F_COUNTS, /* a count or a non-empty array of counts (SingleEpochTreeAggregation) */
    F_REALS,  /* a non-empty array of numbers in [lo, hi] */
    F_EVENT,  /* an event object */
    F_EVENTS  /* an array of event objects (may be empty) */
} field_type;

typedef struct {
    const char *key;
    field_type type;
    int required;
    double dflt; /* F_REAL, F_COUNT when not required */
    double lo, hi;
} field_spec;

/* A parsed field: what the builder reads (and takes: set e / list to NULL, n to 0). */
typedef struct {
    double r;
    uint64_t c;
    dpzo_event *e;
    dpzo_event **list;
    uint64_t *counts;
    double *reals;
    size_t n;
    int present;
} field_value;

#define MAX_FIELDS 4
typedef dpzo_event *(*event_builder)(dpzo_ctx *ctx, field_value *v);

typedef struct {
    const char *name;       /* "Gaussian" */
    const char *class_name; /* "GaussianDpEvent": dp_accounting's, also accepted */
    field_spec fields[MAX_FIELDS];
    event_builder build;    /* NULL: refused, with `refusal` */
    dpzo_status refusal_status;
    const char *refusal;
} kind_spec;

static dpzo_event *take(dpzo_event **e)
{
    dpzo_event *x = *e;
    *e = NULL;
    return x;
}

static dpzo_event *b_no_op(dpzo_ctx *ctx, field_value *v)
{
    (void)v;
    return dpzo_event_composed(ctx, NULL, 0);
}
static dpzo_event *b_non_private(dpzo_ctx *ctx, field_value *v)
{
    (void)v;
    return dpzo_event_non_private(ctx);
}
static dpzo_event *b_gaussian(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_gaussian(ctx, v[0].r);
}
static dpzo_event *b_laplace(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_laplace(ctx, v[0].r);
}
static dpzo_event *b_zcdp(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_zcdp(ctx, v[0].r, v[1].r);
}
static dpzo_event *b_rr(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_randomized_response(ctx, v[0].r, v[1].c);
}
static dpzo_event *b_dlap(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_discrete_laplace(ctx, v[0].r, v[1].c);
}
static dpzo_event *b_tree(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_tree_aggregation(ctx, v[0].r, v[1].counts, v[1].n);
}
static dpzo_event *b_tree_multi(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_tree_aggregation_multi_epoch(ctx, v[0].r, v[1].c, v[2].c, v[3].c);
}
static dpzo_event *b_poisson(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_poisson_sampled(ctx, v[0].r, take(&v[1].e));
}
static dpzo_event *b_wor(dpzo_ctx *ctx, field_value *v)
{
    /* dp_accounting's order: source_dataset_size, sample_size, event */
    return dpzo_event_wor_sampled(ctx, v[1].c, v[0].c, take(&v[2].e));
}
static dpzo_event *b_self(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_self_composed(ctx, take(&v[0].e), v[1].c);
}
static dpzo_event *b_composed(dpzo_ctx *ctx, field_value *v)
{
    size_t n = v[0].n;
    v[0].n = 0; /* dpzo_event_composed owns the entries now, also when it fails */
    return dpzo_event_composed(ctx, v[0].list, n);
}

static dpzo_event *b_wr(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_wr_sampled(ctx, v[0].c, v[1].c, take(&v[2].e));
}
static dpzo_event *b_select(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_repeat_and_select(ctx, take(&v[0].e), v[1].r, v[2].r);
}
static dpzo_event *b_mog(dpzo_ctx *ctx, field_value *v)
{
    if (v[1].n != v[2].n) {
        dpzo__fail(ctx, DPZO_EINVAL, "\"sensitivities\" has %zu entries, \"sampling_probs\" %zu: "
                                     "one probability per sensitivity", v[1].n, v[2].n);
        return NULL;
    }
    return dpzo_event_mixture_of_gaussians(ctx, v[0].r, v[1].reals, v[2].reals, v[1].n);
}
static dpzo_event *b_tsg(dpzo_ctx *ctx, field_value *v)
{
    return dpzo_event_truncated_subsampled_gaussian(ctx, v[0].c, v[1].r, v[2].c, v[3].r);
}

#define R(k, lo, hi) {k, F_REAL, 1, 0.0, lo, hi}
#define R_OPT(k, d, lo, hi) {k, F_REAL, 0, d, lo, hi}
#define C(k, lo) {k, F_COUNT, 1, 0.0, lo, TWO53}
#define EV(k) {k, F_EVENT, 1, 0.0, 0.0, 0.0}

/* Every kind of event a file may hold. The fields are dp_accounting's, in its order. Ranges
 * here are the JSON reader's; the constructors check the rest (and the same again). */
static const kind_spec KINDS[] = {
    {"NoOp", "NoOpDpEvent", {{0}}, b_no_op, 0, NULL},
    {"NonPrivate", "NonPrivateDpEvent", {{0}}, b_non_private, 0, NULL},
    {"Unsupported", "UnsupportedDpEvent", {{0}}, NULL, DPZO_EINVAL,
     "has no privacy analysis (dp_accounting's UnsupportedDpEvent): dpzo refuses to account it"},
    {"Gaussian", "GaussianDpEvent", {R("noise_multiplier", 0.0, INFINITY)}, b_gaussian, 0, NULL},
    {"Laplace", "LaplaceDpEvent", {R("noise_multiplier", 0.0, INFINITY)}, b_laplace, 0, NULL},
    {"ZCDp", "ZCDpEvent", {R("rho", 0.0, INFINITY), R_OPT("xi", 0.0, 0.0, INFINITY)}, b_zcdp, 0,
     NULL},
    {"RandomizedResponse", "RandomizedResponseDpEvent",
     {R("noise_parameter", 0.0, 1.0), C("num_buckets", 1)}, b_rr, 0, NULL},
    {"DiscreteLaplace", "DiscreteLaplaceDpEvent",
     {R("noise_parameter", 0.0, INFINITY), C("sensitivity", 0)}, b_dlap, 0, NULL},
    {"SingleEpochTreeAggregation", "SingleEpochTreeAggregationDpEvent",
     {R("noise_multiplier", 0.0, INFINITY), {"step_counts", F_COUNTS, 1, 0.0, 0.0, TWO53}},
     b_tree, 0, NULL},
    /* dpzo's (dp_accounting 0.6.0 has no class for it): one tree without restarts over
     * several participations, TF Privacy's compute_rdp_single_tree's arguments */
    {"MultiEpochTreeAggregation", "MultiEpochTreeAggregation",
     {R("noise_multiplier", 0.0, INFINITY), C("total_steps", 0), C("max_participation", 0),
      C("min_separation", 0)},
     b_tree_multi, 0, NULL},
    {"PoissonSampled", "PoissonSampledDpEvent", {R("sampling_probability", 0.0, 1.0), EV("event")},
     b_poisson, 0, NULL},
    {"SampledWithoutReplacement", "SampledWithoutReplacementDpEvent",
     {C("source_dataset_size", 1), C("sample_size", 0), EV("event")}, b_wor, 0, NULL},
    {"SelfComposed", "SelfComposedDpEvent", {EV("event"), C("count", 0)}, b_self, 0, NULL},
    {"Composed", "ComposedDpEvent", {{"events", F_EVENTS, 1, 0.0, 0.0, 0.0}}, b_composed, 0,
     NULL},
    {"SampledWithReplacement", "SampledWithReplacementDpEvent",
     {C("source_dataset_size", 1), C("sample_size", 0), EV("event")}, b_wr, 0, NULL},
    /* shape: a number > -1 (1 geometric, 0 logarithmic); left out, +inf: Poisson (JSON has
     * no infinity) */
    {"RepeatAndSelect", "RepeatAndSelectDpEvent",
     {EV("event"), R("mean", 0.0, INFINITY), R_OPT("shape", INFINITY, -1.0, INFINITY)},
     b_select, 0, NULL},
    {"MixtureOfGaussians", "MixtureOfGaussiansDpEvent",
     {R("standard_deviation", 0.0, INFINITY),
      {"sensitivities", F_REALS, 1, 0.0, -INFINITY, INFINITY},
      {"sampling_probs", F_REALS, 1, 0.0, 0.0, 1.0}},
     b_mog, 0, NULL},
    {"TruncatedSubsampledGaussian", "TruncatedSubsampledGaussianDpEvent",
     {C("dataset_size", 1), R("sampling_probability", 0.0, 1.0), C("truncated_batch_size", 0),
      R("noise_multiplier", 0.0, INFINITY)},
     b_tsg, 0, NULL},
};
#undef R
#undef R_OPT
#undef C
#undef EV

#define N_KINDS (sizeof KINDS / sizeof *KINDS)

typedef struct {
    dpzo_ctx *ctx;
    size_t nodes;       /* events and array entries so far */
    dpzo_status status; /* of the first failure */
} reader;

static dpzo_status rfail(reader *rd, dpzo_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dpzo_status rfail(reader *rd, dpzo_status st, const char *fmt, ...)
{
    char msg[DPZO_ERRMSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rd->status = st;
    return dpzo__fail(rd->ctx, st, "%s", msg);
}

#define PATH_MAX_LEN 256

/* "event.events[2]" + ".count": a path longer than the buffer ends in "..." */
static void path_join(char *out, const char *base, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void path_join(char *out, const char *base, const char *fmt, ...)
{
    char tail[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof tail, fmt, ap);
    va_end(ap);
    int w = snprintf(out, PATH_MAX_LEN, "%s%s", base, tail);
    if (w >= PATH_MAX_LEN)
        memcpy(out + PATH_MAX_LEN - 4, "...", 4);
}

static dpzo_event *event_at(reader *rd, const cJSON *o, const char *path, int depth);

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsObject(v))
        return "an object";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    return "a number";
}

static dpzo_status count_node(reader *rd, const char *path)
{
    if (++rd->nodes > DPZO_EVENT_JSON_MAX_NODES)
        return rfail(rd, DPZO_EINVAL,
                          "%s: more than %d events and array entries in one event", path,
                          DPZO_EVENT_JSON_MAX_NODES);
    return DPZO_OK;
}

static dpzo_status real_at(reader *rd, const cJSON *v, const field_spec *f, const char *path,
                           double *out)
{
    if (!cJSON_IsNumber(v))
        return rfail(rd, DPZO_EPARSE, "%s must be a number, got %s", path,
                          type_name(v));
    double x = v->valuedouble;
    if (!isfinite(x))
        return rfail(rd, DPZO_EINVAL, "%s must be finite, got %g", path, x);
    if (!(x >= f->lo && x <= f->hi)) {
        if (isinf(f->hi))
            return rfail(rd, DPZO_EINVAL, "%s must be >= %g, got %.17g", path, f->lo,
                              x);
        return rfail(rd, DPZO_EINVAL, "%s must be in [%g, %g], got %.17g", path, f->lo,
                          f->hi, x);
    }
    *out = x;
    return DPZO_OK;
}

static dpzo_status count_at(reader *rd, const cJSON *v, const field_spec *f, const char *path,
                            uint64_t *out)
{
    if (!cJSON_IsNumber(v))
        return rfail(rd, DPZO_EPARSE, "%s must be a whole number, got %s", path,
                          type_name(v));
    char why[DPZO_ERRMSG_SIZE / 2];
    if (dpzo_json_check_integer(v, why, sizeof why) != 0)
        return rfail(rd, DPZO_EPARSE, "%s must be a whole number: %s", path, why);
    double x = v->valuedouble;
    if (!(x == floor(x)) || !isfinite(x))
        return rfail(rd, DPZO_EINVAL, "%s must be a whole number, got %.17g", path, x);
    if (!(x >= f->lo && x <= f->hi))
        return rfail(rd, DPZO_EINVAL, "%s must be a whole number in [%.0f, 2^53], "
                          "got %.17g", path, f->lo, x);
    *out = (uint64_t)x;
    return DPZO_OK;
}

static dpzo_status field_at(reader *rd, const cJSON *v, const field_spec *f, const char *path,
                            int depth, field_value *out)
{
    dpzo_status st;
    char sub[PATH_MAX_LEN];
    out->present = 1;
    switch (f->type) {
    case F_REAL: return real_at(rd, v, f, path, &out->r);
    case F_COUNT: return count_at(rd, v, f, path, &out->c);
    case F_EVENT:
        out->e = event_at(rd, v, path, depth + 1);
        return out->e == NULL ? rd->status : DPZO_OK;
    case F_COUNTS:
        if (cJSON_IsNumber(v)) { /* one tree: dp_accounting takes a scalar */
            out->counts = malloc(sizeof *out->counts);
            if (out->counts == NULL)
                return rfail(rd, DPZO_ENOMEM, "out of memory reading %s", path);
            out->n = 1;
            return count_at(rd, v, f, path, &out->counts[0]);
        }
        /* fall through */
    case F_REALS:
    case F_EVENTS: {
        if (!cJSON_IsArray(v))
            return rfail(rd, DPZO_EPARSE, "%s must be an array%s, got %s", path,
                              f->type == F_COUNTS ? " of whole numbers or one" : "",
                              type_name(v));
        size_t n = 0;
        for (const cJSON *x = v->child; x != NULL; x = x->next) {
            if (n >= DPZO_EVENT_JSON_MAX_NODES)
                return rfail(rd, DPZO_EINVAL, "%s: more than %d entries", path,
                                  DPZO_EVENT_JSON_MAX_NODES);
            n++;
        }
        if (n == 0 && f->type != F_EVENTS)
            return rfail(rd, DPZO_EINVAL, "%s must not be empty", path);
        size_t elt = f->type == F_EVENTS ? sizeof(dpzo_event *)
                     : f->type == F_REALS ? sizeof(double) : sizeof(uint64_t);
        void *arr = calloc(n ? n : 1, elt);
        if (arr == NULL)
            return rfail(rd, DPZO_ENOMEM, "out of memory reading %s (%zu entries)",
                              path, n);
        if (f->type == F_EVENTS)
            out->list = arr;
        else if (f->type == F_REALS)
            out->reals = arr;
        else
            out->counts = arr;
        size_t i = 0;
        for (const cJSON *x = v->child; x != NULL; x = x->next, i++) {
            path_join(sub, path, "[%zu]", i);
            if ((st = count_node(rd, sub)))
                return st;
            if (f->type == F_EVENTS) {
                out->list[i] = event_at(rd, x, sub, depth + 1);
                out->n = i + 1; /* freed on failure, the failed entry (NULL) included */
                if (out->list[i] == NULL)
                    return rd->status;
            } else {
                out->n = i + 1;
                st = f->type == F_REALS ? real_at(rd, x, f, sub, &out->reals[i])
                                        : count_at(rd, x, f, sub, &out->counts[i]);
                if (st)
                    return st;
            }
        }
        return DPZO_OK;
    }
    }
    return DPZO_OK;
}

static void field_free(field_value *v)
{
    dpzo_event_free(v->e);
    for (size_t i = 0; v->list != NULL && i < v->n; i++)
        dpzo_event_free(v->list[i]);
    free(v->list);
    free(v->counts);
    free(v->reals);
    memset(v, 0, sizeof *v);
}

static const kind_spec *kind_named(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(name, KINDS[i].name) == 0 || strcmp(name, KINDS[i].class_name) == 0)
            return &KINDS[i];
    return NULL;
}

static dpzo_event *event_at(reader *rd, const cJSON *o, const char *path, int depth)
{
    dpzo_ctx *ctx = rd->ctx;
    if (depth > DPZO_EVENT_JSON_MAX_DEPTH) {
        rfail(rd, DPZO_EINVAL, "%s: events nested deeper than %d", path,
                   DPZO_EVENT_JSON_MAX_DEPTH);
        return NULL;
    }
    if (count_node(rd, path))
        return NULL;
    if (!cJSON_IsObject(o)) {
        rfail(rd, DPZO_EPARSE, "%s must be an event object {\"type\": ..., ...}, got %s",
                   path, type_name(o));
        return NULL;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    if (t == NULL) {
        rfail(rd, DPZO_EPARSE, "%s: missing \"type\" (the event's kind: Gaussian, "
                   "PoissonSampled, SelfComposed, ...; docs/accountant.md section 7)", path);
        return NULL;
    }
    if (!cJSON_IsString(t)) {
        rfail(rd, DPZO_EPARSE, "%s.type must be a string, got %s", path, type_name(t));
        return NULL;
    }
    const kind_spec *k = kind_named(t->valuestring);
    if (k == NULL) {
        char names[600];
        size_t used = 0;
        for (size_t i = 0; i < N_KINDS && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     KINDS[i].name);
        rfail(rd, DPZO_EPARSE, "%s.type: unknown event type \"%.60s\" (expected one of %s)",
                   path, t->valuestring, names);
        return NULL;
    }
    char sub[PATH_MAX_LEN];
    /* keys: "type" and the kind's fields, each once */
    for (const cJSON *x = o->child; x != NULL; x = x->next) {
        int known = strcmp(x->string, "type") == 0;
        for (size_t f = 0; f < MAX_FIELDS && k->fields[f].key != NULL && !known; f++)
            known = strcmp(x->string, k->fields[f].key) == 0;
        if (!known) {
            char keys[200] = "";
            size_t used = 0;
            for (size_t f = 0; f < MAX_FIELDS && k->fields[f].key != NULL; f++)
                used += (size_t)snprintf(keys + used, sizeof keys - used, "%s\"%s\"",
                                         f ? ", " : "", k->fields[f].key);
            rfail(rd, DPZO_EPARSE, "%s: unknown key \"%.60s\" for a %s event (%s%s)", path,
                       x->string, k->name, used ? "its fields: " : "it has no fields", keys);
            return NULL;
        }
        for (const cJSON *y = o->child; y != x; y = y->next)
            if (strcmp(x->string, y->string) == 0) {
                rfail(rd, DPZO_EPARSE, "%s: key \"%.60s\" appears twice", path, x->string);
                return NULL;
            }
    }
    if (k->build == NULL) {
        rfail(rd, k->refusal_status, "%s: a %s event %s", path, k->name, k->refusal);
        return NULL;
    }
    field_value v[MAX_FIELDS];
    memset(v, 0, sizeof v);
    dpzo_status st = DPZO_OK;
    for (size_t f = 0; f < MAX_FIELDS && k->fields[f].key != NULL && !st; f++) {
        const field_spec *fs = &k->fields[f];
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, fs->key);
        path_join(sub, path, ".%s", fs->key);
        if (x == NULL) {
            if (fs->required)
                st = rfail(rd, DPZO_EPARSE, "%s: a %s event needs \"%s\"", path, k->name,
                                fs->key);
            v[f].r = fs->dflt;
            v[f].c = (uint64_t)fs->dflt;
            continue;
        }
        st = field_at(rd, x, fs, sub, depth, &v[f]);
    }
    dpzo_event *e = NULL;
    if (!st) {
        e = k->build(ctx, v);
        if (e == NULL) { /* the constructor's message, under this event's path */
            char msg[DPZO_ERRMSG_SIZE];
            snprintf(msg, sizeof msg, "%s", dpzo_ctx_errmsg(ctx));
            if (strncmp(msg, "out of memory", 13) == 0)
                rfail(rd, DPZO_ENOMEM, "%s", msg);
            else
                rfail(rd, DPZO_EINVAL, "%s: %s", path, msg);
        }
    }
    for (size_t f = 0; f < MAX_FIELDS; f++)
        field_free(&v[f]);
    return e;
}

dpzo_status dpzo__event_from_cjson(dpzo_ctx *ctx, const struct cJSON *item, const char *path,
                                   dpzo_event **out)
{
    reader rd = {ctx, 0, DPZO_OK};
    *out = event_at(&rd, item, path, 1);
    return *out != NULL ? DPZO_OK : rd.status != DPZO_OK ? rd.status : DPZO_EINVAL;
}

static dpzo_status from_text(dpzo_ctx *ctx, const char *text, size_t len, const char *what,
                             dpzo_event **out)
{
    cJSON *root = NULL;
    char err[DPZO_ERRMSG_SIZE / 2] = "";
    size_t at = 0;
    *out = NULL;
    int jst = dpzo_json_parse(text, len, &root, &at, err, sizeof err);
    if (jst == DPZO_JSON_SYNTAX)
        return dpzo__fail(ctx, DPZO_EPARSE, "%s%snot valid JSON (at byte %zu)%s%s",
                          what ? what : "", what ? ": " : "", at, err[0] ? ": " : "", err);
    if (jst != DPZO_JSON_OK)
        return dpzo__fail(ctx, DPZO_EPARSE, "%s%s%s", what ? what : "", what ? ": " : "", err);
    dpzo_status st = dpzo__event_from_cjson(ctx, root, "event", out);
    cJSON_Delete(root);
    if (st && what != NULL) {
        char msg[DPZO_ERRMSG_SIZE];
        snprintf(msg, sizeof msg, "%s", dpzo_ctx_errmsg(ctx));
        dpzo__fail(ctx, st, "%s: %s", what, msg);
    }
    return st;
}

dpzo_status dpzo_event_parse_json(dpzo_ctx *ctx, const char *text, dpzo_event **out)
{
    *out = NULL;
    if (text == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "event JSON text is NULL");
    return from_text(ctx, text, strlen(text), NULL, out);
}

dpzo_event *dpzo_event_from_json(dpzo_ctx *ctx, const char *text)
{
    dpzo_event *e = NULL;
    dpzo_event_parse_json(ctx, text, &e);
    return e;
}

dpzo_status dpzo_event_read_json_file(dpzo_ctx *ctx, const char *path, dpzo_event **out)
{
    char *text = NULL, err[DPZO_IO_ERRMAX];
    size_t len = 0;
    *out = NULL;
    if (path == NULL)
        return dpzo__fail(ctx, DPZO_EINVAL, "event file path is NULL");
    if (dpzo_io_read_file(path, "event file", DPZO_IO_LIMIT_JSON, &text, &len, err,
                          sizeof err) != 0)
        return dpzo__fail(ctx, DPZO_EPARSE, "cannot read %s", err);
    char what[PATH_MAX_LEN + 16];
    snprintf(what, sizeof what, "event file %.*s", PATH_MAX_LEN, path);
    dpzo_status st = from_text(ctx, text, len, what, out);
    free(text);
    return st;
}
