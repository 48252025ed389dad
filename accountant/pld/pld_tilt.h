/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_tilt.h: the tilted weights of a step's grid, inline for the loops of
 * pld_compose.c (a step's statistics, its masses into the transform) and pld_spectra.c (the
 * same weights for pld_tree.c, dpzo__pld_tilt_masses). Moved here from pld_compose.c as they
 * were; a header of inline functions so those loops compile as before. Internal. */
#ifndef DPZO_PLD_TILT_H
#define DPZO_PLD_TILT_H

#include <float.h>
#include <math.h>
#include "pld_spectra.h"

#define U (0.5 * DBL_EPSILON)

/* the tilt's exponent at entry k */
static inline double tilt_at(const dpzo__pld_pmf *p, size_t k, double d, double lambda)
{
    return lambda * ((double)(p->lo + (long)k) + p->off) * d;
}

/* Tilted weights without a log and an exp per entry. Entry k of a step's grid has the loss
 * l_k = (lo + k + off) d and, relative to a constant c, the tilted weight
 * a_k e^{lambda l_k - c}. The exponential is evaluated directly at the first entry of each
 * block of TILT_BLOCK entries and, at the block's entry j, as that value times r^j,
 * r = e^{lambda d}, the powers r^j formed once by repeated multiplication.
 * Relative error of a computed weight, to first order (tilt_err doubles the sum, which
 * covers the higher-order terms, all below 1e-10 of it): the argument lambda l - c has at
 * most three roundings of u |lambda l| each (+ off, x lambda, x d; a fourth, the index to
 * a double, only where an index exceeds 2^53) and one of the difference,
 * u (|lambda l| + |c|): 4 u |lambda l| + u |c|; exp is within an ulp, 2u relative; r: its
 * argument lambda d one rounding and exp an ulp, eps_r <= u (|lambda d| + 2); r^j,
 * j < TILT_BLOCK, j products: j (eps_r + u); the product e r^j: u; times a_k: u. In all
 * at most
 *   u (4 |lambda| lmax + |c| + (TILT_BLOCK - 1) (|lambda d| + 3) + 4)
 * with lmax the largest |l| of the grid (an entry whose exponential is taken directly has
 * the same bound without the recurrence's terms).
 * Ranges: a block uses the powers only where every exponent in it lies within [-700, 700]
 * (|lambda d| (TILT_BLOCK - 1) <= 600 and both ends of the block within +-700: no
 * intermediate overflows or is subnormal); otherwise each entry's exponential is taken
 * directly. An exponential beyond the double range (argument above 709; c is at least
 * log a_k + lambda l_k up to rounding, so only a mass below e^-709 has one) falls back to
 * exp(log a_k + lambda l_k - c), whose log and sum add at most 3 u |log a_k| (`fb`, the
 * largest such |log a_k|, enters tilt_err). An exponential below e^-700 makes a weight
 * below 1e-304 (the masses are at most 1): underflow is ignored as in fft.h (at most 2^-1074
 * absolute error an operation, beside weights that sum to about 1). */
#define TILT_BLOCK DPZO__PLD_TILT_BLOCK
typedef dpzo__pld_tilt tilt_ctx; /* pld_spectra.h */

static inline void tilt_init(tilt_ctx *T, double lambda, double d)
{
    T->lambda = lambda;
    T->d = d;
    double r = exp(lambda * d);
    T->powers = fabs(lambda * d) * (TILT_BLOCK - 1) <= 600.0;
    T->rp[0] = 1.0;
    for (int j = 1; j < TILT_BLOCK; j++)
        T->rp[j] = T->rp[j - 1] * r;
}

/* E[j] = e^{lambda l_{k0 + j} - c}, j < m <= TILT_BLOCK (may be +inf: tilt_weight) */
static inline void tilt_block(const tilt_ctx *T, const dpzo__pld_pmf *p, size_t k0, size_t m,
                              double c, double *E)
{
    double x0 = tilt_at(p, k0, T->d, T->lambda) - c;
    double x1 = x0 + (double)(m - 1) * (T->lambda * T->d);
    if (T->powers && fabs(x0) <= 700.0 && fabs(x1) <= 700.0) {
        double e0 = exp(x0);
        for (size_t j = 0; j < m; j++)
            E[j] = e0 * T->rp[j];
    } else {
        for (size_t j = 0; j < m; j++)
            E[j] = exp(tilt_at(p, k0 + j, T->d, T->lambda) - c);
    }
}

/* the weight a_k E (E from tilt_block), 0 where a_k is not positive */
static inline double tilt_weight(const tilt_ctx *T, const dpzo__pld_pmf *p, const double *a,
                                 size_t k, double E, double c, double *fb)
{
    const double ak = a[k];
    if (!(ak > 0.0))
        return 0.0;
    if (E <= DBL_MAX)
        return ak * E;
    double la = log(ak); /* the fallback: e^{lambda l_k - c} overflows */
    if (fabs(la) > *fb)
        *fb = fabs(la);
    return exp(la + tilt_at(p, k, T->d, T->lambda) - c);
}

/* The bound above on the weights' relative error, for a grid whose losses are at most lmax
 * in magnitude (wide: its indices beyond 2^53), relative to c, with the fallback's largest
 * |log a_k| fb (0: none). */
static inline double tilt_err(double lambda, double d, double lmax, int wide, double c,
                              double fb)
{
    return 2.0 * U
           * ((wide ? 5.0 : 4.0) * fabs(lambda) * lmax + fabs(c)
              + (TILT_BLOCK - 1) * (fabs(lambda * d) + 3.0) + 4.0 + 3.0 * fb);
}

static inline double grid_lmax(const dpzo__pld_pmf *p, double d)
{
    return fmax(fabs(((double)p->lo + p->off) * d),
                fabs(((double)(p->lo + (long)p->n) + p->off) * d));
}

/* some index of the grid is beyond 2^53 (its conversion to a double may round) */
static inline int grid_wide(const dpzo__pld_pmf *p)
{
    return !(fabs((double)p->lo) + (double)p->n < 0x1p53);
}

#endif
