/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_exact.h: the exact Renyi divergence of the LMO mixture (lmo_exact.c).
 *
 *   D_alpha(P || Q) = 1/(alpha-1) log Int p(x)^alpha q(x)^(1-alpha) dx,
 *   p = f_X, q(x) = p(x - C), C = sensitivity > 0,
 *
 * enclosed in [lower, upper] for many orders at once (method and proof at the top of
 * lmo_exact.c). */
#ifndef DPZO_LMO_EXACT_H
#define DPZO_LMO_EXACT_H

#include "lmo_internal.h"

/* Default absolute tolerance on upper - lower (RDP units), used when tol <= 0. */
#define DPZO_LMO_EXACT_DEFAULT_TOL 1e-7
/* Cap on the number of grid points (memory at most about 400 bytes a point). */
#define DPZO_LMO_EXACT_MAX_POINTS 200000

/* out[i] = {value, lower, upper} for orders[i] (any reals > 1, up to DPZO_MAX_ORDER):
 * lower and upper are proven bounds on D_alpha; value is the quadrature estimate
 * (dpzo__lmo_exact_quad, clamped into [lower, upper]).
 * The grid is refined until upper - lower <= tol at every order (tol <= 0: the
 * default); if that cannot be reached within DPZO_LMO_EXACT_MAX_POINTS points, the
 * bounds are still proven, only wider. *achieved_gap (if not NULL) receives
 * max_i (upper - lower). */
dpzo_status dpzo__lmo_exact_rdp(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                                const double *orders, size_t n, double tol, dpzo_bound *out,
                                double *achieved_gap);

/* Flags of dpzo__lmo_exact_rdp_ex. Without DPZO_LMO_EXACT_QUAD_VALUE, value is the
 * midpoint of [lower, upper]. */
enum {
    /* value = the GSL quadrature estimate (dpzo__lmo_exact_quad) clamped into
     * [lower, upper] (counted in info->quad_outside when it had to be); about 0.1 ms an
     * order */
    DPZO_LMO_EXACT_QUAD_VALUE = 1u
};

typedef struct {
    size_t points;       /* grid points used */
    int rounds;          /* refinement rounds */
    double achieved_gap; /* max_i (upper - lower) */
    double x_left, x_right; /* the grid's ends; beyond them the tails are bounded */
    int capped;          /* 1 when the point cap, or a refinement that stopped shrinking
                            the gap (halving it in no three rounds), ended it */
    int quad_outside;    /* orders whose quadrature estimate fell outside [lower, upper] */
} dpzo__lmo_exact_info;

dpzo_status dpzo__lmo_exact_rdp_ex(dpzo_ctx *ctx, const dpzo_lmo *lmo, double sensitivity,
                                   const double *orders, size_t n, double tol, unsigned flags,
                                   dpzo_bound *out, dpzo__lmo_exact_info *info);

/* The spec's estimate (section 2.2): S = log of the integrand's maximum (at x = 0), then
 * Int exp(log integrand - S) by GSL adaptive quadrature on (-inf, 0], [0, C], [C, inf)
 * (qagil, qags, qagiu), in double precision; returns (S + log Int)/(alpha - 1), or NaN
 * if a quadrature failed. *relerr (if not NULL) receives GSL's relative error estimate
 * of the integral. Not a bound. */
double dpzo__lmo_exact_quad(const dpzo_lmo *lmo, double sensitivity, double alpha,
                            double *relerr);

/* Enclosures used by the integrator, exposed for the tests: for s in [s_lo, s_hi]
 * (0 <= s_lo <= s_hi), log M_Y(-s), log f_X(s) = log(M_Y'(-s)/2) and
 * d(s) = M_Y''(-s)/M_Y'(-s) (minus the derivative of log f_X at x = s > 0), each as
 * {lo, hi}. Double interval arithmetic (see lmo_exact.c for the rounding model). */
void dpzo__lmo_exact_point(const dpzo_lmo *lmo, double s_lo, double s_hi, double log_mgf[2],
                           double log_pdf[2], double dlog_pdf[2]);

#endif
