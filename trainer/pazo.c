/* SPDX-License-Identifier: Apache-2.0 */
/* trainer/pazo.c: the public-data methods' pieces (docs/algorithms.md, sections 4-6), a
 * module below the step object (zo_step.c), which sequences the step; it calls nothing
 * above it. The caller of the step computes the public gradients (ordinary first-order
 * gradients of public batches at the current theta: no clipping, no noise; train_step.c
 * for dpzo's own models).
 *
 *   PAZO-M: theta <- theta - lr (alpha g_pub + (1 - alpha) / Q sum_k g_k u_k), u_k on the
 *           sphere of radius d^(1/4) (the norms of both parts match), g_k DPZero's noisy
 *           mean of clipped central differences.
 *   PAZO-P: G = the k public gradients orthonormalised (or normalised); u_k = G c_k with
 *           c_k on the sphere of radius sqrt(k') (k' the kept columns) in R^k'; the same
 *           private release along u_k; theta <- theta - lr / Q sum_k g_k u_k.
 *   PAZO-S: candidates theta - lr g_j (j < k, the public gradients); each example's k
 *           losses there (a k-vector clipped in L2 to C sqrt(k / (k+1))) summed and noised
 *           (sigma C each): f_j = noisy sum / B; the best j^; then the noisy candidate
 *           g' = g_j^ + s z (z ~ N(0, I) keyed by (seed, t, k)), its losses clipped to
 *           C / sqrt(k+1), noised: f' ; the step takes g' if f' < f_j^ else g_j^. Without
 *           the noisy candidate the k-vector gets all of C. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "train_internal.h"

/* ---- PAZO-P ------------------------------------------------------------------------ */

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * (double)b[i];
    return s;
}

unsigned dpzo__span_basis(float *G, unsigned k, size_t P, int orthonormalize)
{
    unsigned kept = 0;
    for (unsigned j = 0; j < k; j++) {
        float *g = G + (size_t)j * P;
        double n0 = sqrt(dot(g, g, P));
        if (!(n0 > 0.0 && isfinite(n0)))
            continue; /* zero or not finite: no direction */
        float *dst = G + (size_t)kept * P;
        if (dst != g)
            memcpy(dst, g, P * sizeof *dst);
        double n1 = n0;
        if (orthonormalize) {
            /* modified Gram-Schmidt against the kept columns, twice ("twice is enough") */
            for (int pass = 0; pass < 2; pass++)
                for (unsigned i = 0; i < kept; i++) {
                    const float *q = G + (size_t)i * P;
                    double c = dot(dst, q, P);
                    for (size_t x = 0; x < P; x++)
                        dst[x] = (float)((double)dst[x] - c * (double)q[x]);
                }
            n1 = sqrt(dot(dst, dst, P));
            if (!(n1 > 1e-6 * n0) || !isfinite(n1))
                continue; /* (nearly) in the span already: dropped */
        }
        for (size_t x = 0; x < P; x++)
            dst[x] = (float)((double)dst[x] / n1);
        kept++;
    }
    return kept;
}

dpzo_status dpzo__span_vector(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t, unsigned k,
                              const float *G, unsigned m, size_t P, double *coef, float *out)
{
    if (m == 0) {
        memset(out, 0, P * sizeof *out); /* no public direction: a zero step */
        return DPZO_OK;
    }
    dpzo_dir cd;
    dpzo_status st = dpzo_dir_init(ctx, &cd, c->direction, c->seed, t, k, m, sqrt((double)m));
    if (st != DPZO_OK)
        return st;
    for (unsigned i = 0; i < m; i++)
        coef[i] = dpzo_dir_at(&cd, i);
    for (size_t x = 0; x < P; x++) {
        double v = 0.0;
        for (unsigned i = 0; i < m; i++)
            v += coef[i] * (double)G[(size_t)i * P + x];
        out[x] = (float)v;
    }
    return DPZO_OK;
}

/* ---- PAZO-S ------------------------------------------------------------------------ */

/* A loss that overflowed (or is NaN) at a candidate counts as a very large one, so that
 * candidate is not preferred: 1e150 before clipping (its square, summed over at most 65
 * values, stays finite, and the clip then scales the example's vector to its share). A
 * fixed substitute: the example's contribution still has norm at most its share of C. */
void dpzo__pazo_s_clip_row(const dpzo_privacy *p, const dpzo_public_config *u, double *v,
                           unsigned m, int part)
{
    const unsigned k = u->k;
    const double share = part == 2            ? 1.0 / (double)(k + 1)
                         : u->noisy_candidate ? (double)k / (double)(k + 1)
                                              : 1.0;
    for (unsigned j = 0; j < m; j++)
        if (!isfinite(v[j]))
            v[j] = 1e150;
    dpzo_privacy_clip_part(p, v, m, share);
}

unsigned dpzo__pazo_s_best(const double *released, unsigned k)
{
    unsigned best = 0;
    for (unsigned j = 1; j < k; j++)
        if (released[j] < released[best])
            best = j;
    return best;
}

dpzo_status dpzo__pazo_s_noisy(dpzo_ctx *ctx, const dpzo_train_config *c, uint64_t t,
                               const float *best, size_t P, float *out)
{
    /* g' = g_best + s z, z keyed by (seed, t, k): a public, reproducible exploration */
    dpzo_dir z;
    memcpy(out, best, P * sizeof *out);
    dpzo_status st = dpzo_dir_init(ctx, &z, DPZO_DIR_GAUSSIAN, c->seed, t, c->pub.k, P, 1.0);
    if (st == DPZO_OK)
        dpzo_dir_axpy(&z, 0, P, c->pub.candidate_scale, out);
    return st;
}
