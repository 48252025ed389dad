/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_fast.h: the cells of a Poisson-sampled Gaussian step's privacy loss in bulk
 * (pld_fast.c). */
#ifndef DPZO_PLD_FAST_H
#define DPZO_PLD_FAST_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include "pld_internal.h"
#include "vmath.h"

/* Whether dpzo__pld_fast_cells handles this step (Gaussian, remove or add pair, q < 1). */
int dpzo__pld_fast_applies(const dpzo__pld_source *s);

/* The cells between the thresholds of the increasing losses x[0..m-1] (pld_fast.c): cell k
 * (losses near (x[k], x[k+1]]) has P- and Q-masses pb[k], qb[k] > 0 (or both 0: empty) with bounds ep[k], eq[k]
 * <= 1/4 on their relative errors. pess != 0: the thresholds are moved so that cell k's
 * losses lie in [x[k] - sl[k], x[k+1]] (sl may be NULL otherwise), and *below, *above
 * (where not NULL) bound the P-masses below the first and above the last threshold.
 * Returns the number of cells (and end points) it could not bound: where nonzero the arrays
 * are not to be used. pb, qb, ep, eq, sl: m - 1 entries; w: DPZO__PLD_FAST_SCRATCH * m
 * doubles of scratch. */
#define DPZO__PLD_FAST_SCRATCH 9
size_t dpzo__pld_fast_cells(const dpzo__pld_source *s, const double *x, size_t m, int pess,
                            double *pb, double *qb, double *ep, double *eq, double *sl,
                            double *below, double *above, double *w);

/* The pessimistic split of cells 0 .. mc-1 of a chunk (x: their lower grid points; see
 * pld_discretize.c's pess_fast): adds the cells' masses to p[0 .. mc] and their P-masses to
 * exc_mass by excess displacement (bins relative to d_eff). Returns -1 (nothing added) where
 * a slack exceeds 1e-6 d. v, ex, hi: mc doubles of scratch each. */
int dpzo__pld_fast_split(const double *x, const double *pb, const double *qb, const double *ep,
                         const double *eq, const double *sl, size_t mc, double d, double d_eff,
                         double *p, double exc_mass[64], double *v, double *ex, double *hi);

/* The guard on a cell's merged loss lr = log(pb / qb) taken as one logarithm of a normal
 * ratio: the masses' relative errors ep, eq (at most 1/4 each) move it by at most
 * 1.34 (ep + eq), the division by u, the logarithm by REL |lr| (vmath.h); this covers them. */
static inline double dpzo__pld_ratio_guard(double lr, double ep, double eq)
{
    return 2.0 * (ep + eq) + (4.0 * DBL_EPSILON + DPZO__VM_REL) * (fabs(lr) + 1.0);
}

/* The coupling terms' bin (pld_internal.h) of a cell's excess mean displacement over the
 * exact split, as a double: j with r = (excess + 8 DBL_EPSILON d) inv in [2^-(j+1), 2^-j),
 * 0 from 1/2 up, 63 below 2^-63, where inv = (1 + 4u) / d (raised by 4u so that rounding
 * never puts an excess in a bin below its own; the fast path's inv is (1 + 4u) / d_eff). */
static inline double dpzo__pld_excess_bin(double excess, double d, double inv)
{
    double r = (excess + 8.0 * DBL_EPSILON * d) * inv;
    uint64_t bits;
    memcpy(&bits, &r, sizeof bits);
    /* r in [2^-63, 1) is normal, r = 1.m 2^(E - 1023): j = 1022 - E */
    double j = (double)(1022 - (int64_t)((bits >> 52) & 0x7ff));
    return !(r < 1.0) ? 0.0 : r < 0x1p-63 ? 63.0 : j;
}

/* x[i] = ((double)(i0 + i) + off) d, i < m: the grid points (pld_discretize.c's grid_loss) */
void dpzo__pld_grid(long i0, double off, double d, size_t m, double *x);

/* Optimistic side: each cell i < mc (P-, Q-masses pb, qb > 0 or both 0, relative error bounds
 * ep, eq) whose merged loss, rounded down by its error bound, is at least lk[i] is added to
 * opt[i]; below[i] = 1 for the nonempty others (pld_discretize.c splits them), else 0. v, fix:
 * mc doubles of scratch each. */
void dpzo__pld_fast_merge(const double *lk, const double *pb, const double *qb, const double *ep,
                          const double *eq, size_t mc, double *opt, double *below, double *v,
                          double *fix);

/* The optimistic boundaries bnd[k] for k = k0 .. k0 + mc - 1, all interior (1 <= k, k + 1 <
 * n), from the pessimistic masses p (pld_discretize.c's opt_boundaries, the same doubles).
 * v, kind: mc doubles of scratch each. */
void dpzo__pld_opt_bnd_interior(const double *p, size_t k0, size_t mc, long bot, double d,
                                double off, double *bnd, double *v, double *kind);

#endif
