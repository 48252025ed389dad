/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/resume.c: the run's state object, to and from a checkpoint (the file format is
 * trainer/checkpoint.c's): saving, and resuming with the checks that the checkpoint
 * belongs to this run (fingerprint, ledger, sampler position) and the metrics file cut
 * back to what it held at the checkpoint.
 *
 * The state: the header's fields (dpzo__ckpt_state) and the vectors theta, then the
 * stage's anchor (stagewise) and the stage's mask (dpzopo), P floats each; the step count,
 * the sampling seed, the anchor and the mask are the step object's (zo_step.c), the rest
 * the trainer's. Nothing here calls the run loop (train.c calls this file, not back). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "train_internal.h"
#include "zo_internal.h"

static void hex_to_bytes(const char *hex, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

/* The vectors of the state: theta, the anchor, the mask (those the run keeps). */
typedef struct {
    const float *v[3];
    unsigned n;
} state_vectors;

static state_vectors vectors_of(const dpzo_trainer *tr)
{
    state_vectors sv = {{tr->theta}, 1};
    const float *anchor, *mask;
    dpzo__zo_state(tr->zo, &anchor, &mask);
    if (anchor != NULL)
        sv.v[sv.n++] = anchor;
    if (mask != NULL)
        sv.v[sv.n++] = mask;
    return sv;
}

/* epsilon_after(t) of the run's privacy object (+inf when non-private). */
static double epsilon_after(const dpzo_trainer *tr, uint64_t t)
{
    const dpzo_privacy *p = dpzo__zo_privacy(tr->zo);
    return p != NULL ? dpzo_privacy_epsilon_after(p, t) : INFINITY;
}

static void state_of(const dpzo_trainer *tr, dpzo__ckpt_state *s)
{
    const uint64_t step = dpzo_zo_steps_done(tr->zo);
    const dpzo__loss_acc *loss = dpzo__zo_loss(tr->zo);
    memset(s, 0, sizeof *s);
    s->algorithm = (uint32_t)tr->cfg.algorithm;
    hex_to_bytes(tr->fingerprint, s->fingerprint, 32);
    s->n_params = vectors_of(tr).n * tr->P;
    s->step = step;
    s->steps = tr->cfg.steps;
    s->dir_seed = tr->cfg.seed;
    s->sampling_seed = dpzo_zo_sampling_seed(tr->zo);
    s->batching = (uint32_t)tr->cfg.batching;
    dpzo__sampler_position(dpzo__zo_sampler(tr->zo), step, &s->epoch, &s->epoch_pos);
    s->lr = tr->cfg.lr;
    s->lr_last = tr->lr_last;
    s->lr_schedule = (uint32_t)tr->cfg.lr_schedule;
    s->ledger_steps = step;
    s->epsilon_spent = epsilon_after(tr, step);
    s->metrics_offset = tr->metrics_offset;
    s->loss_sum = loss->sum;
    s->loss_count = loss->count;
    s->test_acc = tr->test_acc;
    s->test_loss = tr->test_loss;
    s->seconds = dpzo__trainer_seconds(tr);
}

dpzo_status dpzo_trainer_save(dpzo_ctx *ctx, dpzo_trainer *tr, const char *path)
{
    dpzo__ckpt_state s;
    state_of(tr, &s);
    const state_vectors sv = vectors_of(tr);
    const size_t P = tr->P;
    float *all = sv.n == 1 ? NULL : malloc(sv.n * P * sizeof *all);
    if (sv.n > 1 && all == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "checkpoint: out of memory");
    for (unsigned i = 0; i < sv.n && all != NULL; i++)
        memcpy(all + i * P, sv.v[i], P * sizeof *all);
    dpzo_status st = dpzo__ckpt_write(ctx, path, &s, all != NULL ? all : tr->theta);
    free(all);
    return st;
}

/* The checkpoint's state against this run: same fingerprint, and a consistent ledger and
 * sampler position. */
static dpzo_status check_state(dpzo_ctx *ctx, const dpzo_trainer *tr, const char *path,
                               const dpzo__ckpt_state *s)
{
    unsigned char fp[32];
    hex_to_bytes(tr->fingerprint, fp, 32);
    if (memcmp(fp, s->fingerprint, 32) != 0)
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "checkpoint %s was written by a run with another configuration "
                          "(algorithm, model, data, steps, batching, lr, ZO settings, clip, "
                          "seed or profile differ): refusing to resume",
                          path);
    /* the fingerprint covers the configuration; the fields are compared one by one too, so
     * that a checkpoint whose fields were edited (and re-hashed) is refused by name */
    const dpzo_train_config *c = &tr->cfg;
#define FIELD(cond, name, fmt, got, want)                                                      \
    if (!(cond))                                                                               \
        return dpzo__fail(ctx, DPZO_EPARSE,                                                    \
                          "checkpoint %s: field " name " is " fmt ", this run's configuration " \
                          "has " fmt,                                                          \
                          path, got, want)
    FIELD(s->algorithm == (uint32_t)c->algorithm, "algorithm", "%u", (unsigned)s->algorithm,
          (unsigned)c->algorithm);
    FIELD(s->batching == (uint32_t)c->batching, "batching", "%u", (unsigned)s->batching,
          (unsigned)c->batching);
    FIELD(s->lr_schedule == (uint32_t)c->lr_schedule, "lr_schedule", "%u",
          (unsigned)s->lr_schedule, (unsigned)c->lr_schedule);
    FIELD(s->lr == c->lr, "lr", "%.17g", s->lr, c->lr);
    FIELD(s->steps == c->steps, "steps", "%llu", (unsigned long long)s->steps,
          (unsigned long long)c->steps);
    FIELD(s->dir_seed == c->seed, "seed", "%llu", (unsigned long long)s->dir_seed,
          (unsigned long long)c->seed);
#undef FIELD
    if (s->step > tr->cfg.steps || s->ledger_steps != s->step || s->steps != tr->cfg.steps)
        return dpzo__fail(ctx, DPZO_EPARSE, "checkpoint %s: inconsistent step counts", path);
    /* the epsilon spent is the ledger's for the step count (recomputed from the profile),
     * never the stored number: a checkpoint that disagrees is refused */
    double eps = epsilon_after(tr, s->step);
    if (!(eps == s->epsilon_spent || (isinf(eps) && isinf(s->epsilon_spent))))
        return dpzo__fail(ctx, DPZO_EPARSE,
                          "checkpoint %s: its ledger says epsilon %.17g after %llu steps, the "
                          "profile gives %.17g",
                          path, s->epsilon_spent, (unsigned long long)s->step, eps);
    uint64_t epoch, pos;
    dpzo__sampler_position(dpzo__zo_sampler(tr->zo), s->step, &epoch, &pos);
    if (epoch != s->epoch || pos != s->epoch_pos)
        return dpzo__fail(ctx, DPZO_EPARSE, "checkpoint %s: inconsistent sampler position", path);
    return DPZO_OK;
}

/* Cuts the metrics file back to the length it had at the checkpoint (lines written after
 * it belong to steps that will be redone). A missing file restarts empty; a shorter one, or
 * one whose recorded length does not end a line, or a non-empty one where the checkpoint
 * recorded none, is not this run's and is left alone. A metrics stream that is not a regular
 * file (a device or FIFO, written directly) is not rewound. The file is opened once (a link
 * followed to its regular target, as the writer does, docs/files.md) and cut through that
 * descriptor. */
static dpzo_status metrics_rewind(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t offset)
{
    tr->metrics_offset = 0;
    if (tr->cfg.metrics[0] == '\0')
        return DPZO_OK;
    const char *path = tr->cfg.metrics;
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == ENOENT)
        return DPZO_OK;
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        close(fd);
        tr->metrics_offset = offset;
        return DPZO_OK;
    }
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return dpzo__fail(ctx, DPZO_EINVAL, "metrics: cannot open %s: %s", path, strerror(e));
    }
    const char *why = NULL;
    char last = '\n';
    if ((uint64_t)sb.st_size < offset)
        why = "is shorter";
    else if (offset == 0 && sb.st_size > 0)
        why = "is not empty";
    else if (offset > 0 && pread(fd, &last, 1, (off_t)offset - 1) != 1)
        why = "cannot be read";
    else if (last != '\n')
        why = "has no line end there";
    if (why != NULL) {
        close(fd);
        return dpzo__fail(ctx, DPZO_EINVAL,
                          "metrics file %s has %lld bytes and %s, the checkpoint recorded %llu: "
                          "it is not this run's (move it away to start a new one)",
                          path, (long long)sb.st_size, why, (unsigned long long)offset);
    }
    int bad = ftruncate(fd, (off_t)offset) != 0;
    int e = errno;
    close(fd);
    if (bad)
        return dpzo__fail(ctx, DPZO_EINVAL, "metrics: cannot truncate %s: %s", path,
                          strerror(e));
    tr->metrics_offset = offset;
    return DPZO_OK;
}

dpzo_status dpzo_trainer_resume(dpzo_ctx *ctx, dpzo_trainer *tr, const char *path)
{
    dpzo_zo *zo = tr->zo;
    if (dpzo_zo_steps_done(zo) != 0 || tr->resumed || !isnan(tr->test_acc))
        return dpzo__fail(ctx, DPZO_EINVAL, "resume: only before the first step of a trainer");
    const state_vectors sv = vectors_of(tr);
    const size_t P = tr->P, n_state = sv.n * P;
    float *state = malloc(n_state * sizeof *state);
    if (state == NULL)
        return dpzo__fail(ctx, DPZO_ENOMEM, "resume: out of memory");
    dpzo__ckpt_state s;
    const uint64_t own_seed = dpzo_zo_sampling_seed(zo);
    dpzo_status st = dpzo__ckpt_read(ctx, path, n_state, &s, state);
    if (st == DPZO_OK)
        st = dpzo_zo_set_sampling_seed(ctx, zo, s.sampling_seed);
    /* the vectors in vectors_of's order: theta, anchor, mask */
    const float *anchor, *mask;
    dpzo__zo_state(zo, &anchor, &mask);
    const float *a = anchor != NULL ? state + P : NULL;
    const float *m = mask != NULL ? state + (sv.n - 1) * P : NULL;
    if (st == DPZO_OK)
        st = check_state(ctx, tr, path, &s);
    if (st == DPZO_OK) /* every check before the metrics file is cut */
        st = dpzo__zo_restore(ctx, zo, s.step, a, m, 1);
    if (st == DPZO_OK)
        st = metrics_rewind(ctx, tr, s.metrics_offset);
    if (st == DPZO_OK)
        st = dpzo__zo_restore(ctx, zo, s.step, a, m, 0);
    if (st != DPZO_OK && dpzo_zo_sampling_seed(zo) != own_seed) /* leave the trainer as it was */
        dpzo_zo_set_sampling_seed(NULL, zo, own_seed); /* NULL: keep ctx's message */
    if (st == DPZO_OK) {
        memcpy(tr->theta, state, P * sizeof *state);
        tr->lr_last = s.lr_last;
        *dpzo__zo_loss(zo) = (dpzo__loss_acc){s.loss_sum, s.loss_count};
        tr->test_acc = s.test_acc;
        tr->test_loss = s.test_loss;
        tr->seconds = s.seconds;
        tr->resumed = 1;
    }
    free(state);
    return st;
}
