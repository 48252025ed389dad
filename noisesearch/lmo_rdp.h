/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_rdp.h: per-step RDP pieces shared by the accounting and the search. */
#ifndef DPZO_LMO_RDP_H
#define DPZO_LMO_RDP_H

#include "lmo_internal.h"

/* Tolerance requested from the exact integral (absolute, in RDP units). */
#define DPZO_LMO_EXACT_TOL 1e-7

/* Double-precision estimates (search). */
double dpzo__lmo_mgf_rdp(const dpzo_lmo *lmo, double c, double alpha);
double dpzo__lmo_eps0_estimate(const dpzo_lmo *lmo, double c);
double dpzo__lmo_pure_rdp(double eps0, double alpha);
/* D_alpha of P and Q pushed through a partition of the line: a lower bound on the
 * mixture's RDP (double precision: for pruning only). */
void dpzo__lmo_binned_rdp_lower(const dpzo_lmo *lmo, double c, const double *orders, size_t n,
                                double *out);

/* Proven bounds. */
double dpzo__lmo_mgf_rdp_upper(const dpzo_lmo *lmo, double c, double alpha);
double dpzo__lmo_pure_rdp_upper(double eps0_upper, double alpha);

#endif
