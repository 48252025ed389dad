/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/pld/pld_spectra.h: what both the flat composition (pld_compose.c) and the tree
 * of short transforms (pld_tree.c) use: the tilted weights' interface, each step's tilted
 * statistics and the window, Chernoff bounds, and products of spectra with their error bounds
 * (pld_spectra.c). Neither composition is called from here: pld_compose.c uses pld_tree.c,
 * and both use this. Internal. */
#ifndef DPZO_PLD_SPECTRA_H
#define DPZO_PLD_SPECTRA_H

#include <complex.h>
#include <math.h>
#include "pld_internal.h"

#define DPZO__PLD_N_THETA 24

/* Tilted masses a_k e^{lambda l_k - c} of a step, a block of up to DPZO__PLD_TILT_BLOCK
 * entries at a time: an exponential at the block's first entry, powers of e^{lambda d}
 * after it, a log-space fallback where the exponential overflows (pld_tilt.h's comment
 * states the bound, dpzo__pld_tilt_err: relative to c, with fb the largest |log a_k| a
 * fallback took, 0 if none). w[j] = 0 where a[k0 + j] is not positive. */
#define DPZO__PLD_TILT_BLOCK 16
typedef struct {
    double lambda, d;
    double rp[DPZO__PLD_TILT_BLOCK]; /* r^j, r = e^{lambda d} */
    int powers; /* the powers may be used (|lambda d| (DPZO__PLD_TILT_BLOCK - 1) <= 600) */
} dpzo__pld_tilt;
void dpzo__pld_tilt_init(dpzo__pld_tilt *T, double lambda, double d);
void dpzo__pld_tilt_masses(const dpzo__pld_tilt *T, const dpzo__pld_pmf *p, const double *a,
                           size_t k0, size_t m, double c, double *w, double *fb);
double dpzo__pld_tilt_err(const dpzo__pld_pmf *p, double lambda, double d, double c, double fb);

/* One step's tilted statistics (pld_compose.c, stats()). */
typedef struct {
    double c[2];       /* log normaliser per side */
    double mean, var;  /* tilted mean and variance in index units (max over sides) */
    long shift;        /* placement offset: round(mean) */
    double theta_err;  /* relative error of the tilted masses */
    int m0;            /* the ladder of orders: theta_m = 2^(m - m0), m < N_THETA */
    double cgf[2][2][DPZO__PLD_N_THETA]; /* [side][sign][m]: log E e^{+-theta_m (i - shift)} */
} dpzo__pld_term_stats;

/* The ladder's order theta_m (pld_compose.c's stats() and the Chernoff bounds). */
static inline double dpzo__pld_theta_at(const dpzo__pld_term_stats *st, int m)
{
    return ldexp(1.0, m - st->m0);
}

/* The composition's window (pld_compose.c, make_layout(); pld_tree.c plans in it). */
typedef struct {
    size_t N;
    long w0;
    double M;
    double imin, imax; /* the composition's support (index units) */
    dpzo__pld_term_stats *st;
    size_t max_n;
    int covered;       /* the window reaches imax */
    double span;       /* the window's length before rounding it up to a power of two */
    double margin;     /* how far inside the support its Chernoff window's nearer end lies
                          before clipping (index units; negative: clipped) */
} dpzo__pld_layout;

/* pld_spectra.c */
double dpzo__pld_chernoff_width(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                                size_t n, int side, int sg, double log_tau);
double dpzo__pld_chernoff_tail(const dpzo__pld_term *terms, const dpzo__pld_term_stats *st,
                               size_t n, int side, int sg, double w);
double complex dpzo__pld_power_bound(double complex z, double e, uint64_t k, double small_r2,
                                     double *eb, double *rb);
size_t dpzo__pld_pow2_at_least(double x);
/* (a * b) mod N for a, b < N <= 2^62, without overflow */
uint64_t dpzo__pld_mulmod(uint64_t a, uint64_t b, uint64_t N);
/* A step of count 1 into a product of spectra of length N (see pld_compose.c): `in` holds
 * its forward transform (whose error is ec, plus the separation's rounding) or, with es_in,
 * a spectrum that a last pass left with es_out; first, the product starts with it; last,
 * the composed spectrum goes into work (which may be `in`), the sums the inverse
 * transform's error needs into *sum_e, *sum_c, and (es_out not NULL) each side's error at
 * each frequency pair into es_out. */
/* A step of count k > 1 into the product of spectra, the product assembled into the composed
 * spectrum, and the inverse transform's error bound (pld_compose.c) */
void dpzo__pld_spectra_stepk(const double complex *work, size_t N, int nsides, double ec,
                             uint64_t k, double complex *prod, double *ra, double *ea);
void dpzo__pld_spectra_assemble(double complex *work, size_t N, int want_opt,
                                const double complex *prod, const double *ea, double *sum_e);
double dpzo__pld_inverse_err(const double complex *work, size_t N, double eta, double sum_e,
                             double sum_c);
void dpzo__pld_spectra_step1(const double complex *in, double complex *work, size_t N,
                             int nsides, double ec, const double *es_in, int first, int last,
                             double complex *prod, double *ra, double *ea, double *es_out,
                             double *sum_e, double *sum_c);
/* The window out of an inverse transform of length N (a power of two) whose window starts
 * at entry rot: the pessimistic side left in work's first N doubles, the optimistic side
 * (want_opt) in yopt[0 .. N). */
void dpzo__pld_unpack(double complex *work, size_t N, size_t rot, int want_opt, double *yopt);

#endif
