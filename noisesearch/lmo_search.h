/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_search.h: grid internals shared by grid.c, search.c and the tests. */
#ifndef DPZO_LMO_SEARCH_H
#define DPZO_LMO_SEARCH_H

#include "lmo_internal.h"

/* The distribution's key: (wG theta, k, wE / lam, wU a, wU b), zero for dropped
 * components, products rounded to 12 significant digits. */
void dpzo__lmo_key(const dpzo_lmo *p, double key[5]);
/* The first grid index of every distinct distribution, in enumeration order, and the
 * size of each class. */
dpzo_status dpzo__lmo_grid_unique(dpzo_ctx *ctx, const dpzo_lmo_grid *g, size_t **reps,
                                  size_t **class_size, size_t *n_unique);

/* The six list lengths, in odometer order (gamma_weight fastest). */
void dpzo__lmo_grid_dims(const dpzo_lmo_grid *g, size_t dims[6]);

#endif
