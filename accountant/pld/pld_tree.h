/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_tree.h: the composition of many distinct steps in a balanced tree of
 * short transforms (pld_tree.c), which pld_compose.c chooses where it is cheaper. The pieces
 * both share are pld_spectra.h's. Internal. */
#ifndef DPZO_PLD_TREE_H
#define DPZO_PLD_TREE_H

#include "pld_spectra.h"

/* pld_tree.c. The tree's plan: whether it beats one full-length transform per distinct
 * step (*use), and the bytes it needs beyond the workspace of an FFT of length L->N. */
typedef struct dpzo__pld_tree dpzo__pld_tree;
dpzo_status dpzo__pld_tree_plan(dpzo_ctx *ctx, const dpzo__pld_term *terms, size_t n,
                                const dpzo__pld_compose_opts *o, const dpzo__pld_layout *L,
                                dpzo__pld_tree **tree, int *use, size_t *extra_bytes);
/* Composes by the planned tree into ws (reserved for L->N; the result as dpzo__pld_unpack
 * leaves it). *err: bound on
 * |computed - exact| of every entry (both sides), misplaced[s]: bound on the tilted mass
 * that intermediate windows put in the wrong place, *theta_fold: relative error added to
 * the steps' tilted masses by folding them into a window (see pld_tree.c). */
dpzo_status dpzo__pld_tree_compose(dpzo_ctx *ctx, dpzo__pld_tree *tree, const dpzo__pld_term *terms,
                                   double d, const dpzo__pld_compose_opts *o,
                                   const dpzo__pld_layout *L, dpzo__pld_ws *ws, double *err,
                                   double misplaced[2], double *theta_fold);
void dpzo__pld_tree_free(dpzo__pld_tree *tree);

#endif
