/* accountant/pld_fast.h: the cells of a Poisson-sampled Gaussian step's privacy loss in bulk
 * (pld_fast.c). */
#ifndef DPZO_PLD_FAST_H
#define DPZO_PLD_FAST_H

#include <stddef.h>
#include "pld_internal.h"

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

#endif
