/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/first_order.c: `dpzo train`'s first-order baselines (docs/trainer.md, section 2),
 * on the step object's sampler, privacy object and ledger (zo_step.c, zo_internal.h).
 *
 * dpsgd: per-example gradients (in chunks of at most 64 MiB) clipped in L2 to C, summed,
 * released with N(0, (sigma C)^2) per coordinate (dpzo__zo_release_vector), divided by B;
 * sgd: the batch's mean gradient. B is the expected batch size (Poisson) or the batch size
 * (shuffle): dividing by the realised size would make the update depend on it without
 * accounting for that.
 * dpmd (docs/algorithms.md 7): dpsgd's release g_priv = (sum of clipped gradients + noise)/B
 * and g_pub, the mean gradient of one public batch (place t of shuffled epochs of the public
 * rows, as PAZO-M's), give theta - lr (alpha_t g_priv + (1 - alpha_t) g_pub) with
 * alpha_t = cos(pi t / (2 T)): the first-order form of public-data-assisted mirror descent
 * (Amid et al. 2022) as the PAZO paper's code runs it. Its privacy is dpsgd's: the public
 * gradient and the weights use no private data. */
#include <math.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"
#include "zo_internal.h"

size_t dpzo__pe_chunk(size_t P, double batch)
{
    size_t cap = ((size_t)64 << 20) / (P * sizeof(float));
    size_t want = (size_t)ceil(batch);
    size_t c = want < cap ? want : cap;
    return c > 0 ? c : 1;
}

double dpzo__dpmd_weight(uint64_t t, uint64_t T)
{
    return T > 0 ? cos(M_PI * (double)t / (2.0 * (double)T)) : 1.0;
}

/* dpsgd's release into tr->gnoise (the sum of clipped gradients plus the noise, not yet
 * divided by B). */
static dpzo_status private_release(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b,
                                   dpzo__loss_acc *loss)
{
    const size_t P = tr->P;
    const dpzo_privacy *privacy = dpzo__zo_privacy(tr->zo);
    memset(tr->gsum, 0, P * sizeof *tr->gsum);
    for (size_t c0 = 0; c0 < b; c0 += tr->pe_chunk) {
        size_t cb = b - c0 < tr->pe_chunk ? b - c0 : tr->pe_chunk;
        double mean = 0.0;
        dpzo_status st = dpzo_model_grad(tr->model, tr->theta, &tr->priv, tr->idx + c0, cb,
                                         tr->grad, tr->per_ex, &mean);
        if (st != DPZO_OK)
            return dpzo__model_failed(ctx, st, "per-example gradients");
        loss->sum += mean * (double)cb;
        for (size_t e = 0; e < cb; e++) {
            float *g = tr->per_ex + e * P;
            dpzo_privacy_clip_float(privacy, g, P);
            for (size_t j = 0; j < P; j++)
                tr->gsum[j] += (double)g[j];
        }
    }
    loss->count += b;
    return dpzo__zo_release_vector(ctx, tr->zo, tr->gsum, tr->gnoise, P);
}

static dpzo_status dpsgd(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b, double lr,
                         dpzo__loss_acc *loss)
{
    dpzo_status st = private_release(ctx, tr, b, loss);
    if (st != DPZO_OK)
        return st;
    const double B = tr->cfg.batch_size;
    for (size_t j = 0; j < tr->P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] - lr * (tr->gnoise[j] / B));
    return DPZO_OK;
}

static dpzo_status dpmd(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b, double lr,
                        dpzo__loss_acc *loss)
{
    /* both gradients at the step's theta: the public one is in tr->gpub (train_step.c
     * computed it before this step moved theta) */
    dpzo_status st = private_release(ctx, tr, b, loss);
    if (st != DPZO_OK)
        return st;
    const double B = tr->cfg.batch_size, alpha = dpzo__dpmd_weight(t, tr->cfg.steps);
    for (size_t j = 0; j < tr->P; j++)
        tr->theta[j] = (float)((double)tr->theta[j] -
                               lr * (alpha * (tr->gnoise[j] / B) +
                                     (1.0 - alpha) * (double)tr->gpub[j]));
    return DPZO_OK;
}

static dpzo_status sgd(dpzo_ctx *ctx, dpzo_trainer *tr, size_t b, double lr,
                       dpzo__loss_acc *loss)
{
    if (b > 0) {
        double mean = 0.0;
        dpzo_status st = dpzo_model_grad(tr->model, tr->theta, &tr->priv, tr->idx, b, tr->grad,
                                         NULL, &mean);
        if (st != DPZO_OK)
            return dpzo__model_failed(ctx, st, "gradient");
        loss->sum += mean * (double)b;
        loss->count += b;
        for (size_t j = 0; j < tr->P; j++)
            tr->theta[j] = (float)((double)tr->theta[j] - lr * (double)tr->grad[j]);
    }
    return dpzo__zo_release_vector(ctx, tr->zo, NULL, NULL, 0); /* nothing to release */
}

dpzo_status dpzo__first_order_step(dpzo_ctx *ctx, dpzo_trainer *tr, uint64_t t, size_t b)
{
    const double lr = dpzo_zo_lr(tr->zo);
    dpzo__loss_acc *loss = dpzo__zo_loss(tr->zo);
    switch (tr->cfg.algorithm) {
    case DPZO_ALG_DPSGD:
        return dpsgd(ctx, tr, b, lr, loss);
    case DPZO_ALG_DPMD:
        return dpmd(ctx, tr, t, b, lr, loss);
    default:
        return sgd(ctx, tr, b, lr, loss);
    }
}
