/* SPDX-License-Identifier: Apache-2.0 */
/* noisesearch/lmo_internal.h: private declarations shared by the LMO files.
 *
 * The interval versions enclose the exact real value (MPFR, outward rounding; see
 * accountant/core/ival.h). They return 0 on success and 1 when the value is +inf (the
 * argument lies outside the MGF domain); `out` is then left unchanged. */
#ifndef DPZO_LMO_INTERNAL_H
#define DPZO_LMO_INTERNAL_H

#include <sys/types.h>
#include "dpzo/lmo.h"
#include "ival.h"
#include "internal.h"

/* Default MPFR precision of the LMO interval code. */
#define DPZO_LMO_PREC 128

/* log M_Y(t) and d/dt log M_Y(t) enclosed, for t given as an interval. */
int dpzo__lmo_log_mgf_ival(const dpzo_lmo *lmo, const ival *t, ival *out);
int dpzo__lmo_dlog_mgf_ival(const dpzo_lmo *lmo, const ival *t, ival *out);
/* log f_X(x) enclosed (x a double, taken exactly). Always finite. */
void dpzo__lmo_log_pdf_ival(const dpzo_lmo *lmo, double x, ival *out);

/* E[Y] and E[Y^2] enclosed. */
void dpzo__lmo_mean_y_ival(const dpzo_lmo *lmo, ival *out);
void dpzo__lmo_second_moment_y_ival(const dpzo_lmo *lmo, ival *out);

/* The paper's single-step "code epsilon" from the released code's MGF values
 * m_plus[a-2] = M_Y(a-1), m_minus[a-2] = M_Y(-a), a = 2..128 (lmo_paper.c; the search
 * feeds it values from per-component tables). */
/* The released code's three MGF factors M_G(wG t), M_E(wE t), M_U(wU t), evaluated by the
 * plain formulas also outside their domain (IEEE semantics); 1 for a dropped component. */
void dpzo__lmo_paper_factors(const dpzo_lmo *l, double t, double f[3]);
double dpzo__lmo_paper_eps_from_mgf(const double *m_plus, const double *m_minus, double delta,
                                    double *order);

/* eps0 enclosed (lmo_stats.c); nonzero only if an MGF is infinite (never for C > 0). */
int dpzo__lmo_eps0_ival(const dpzo_lmo *lmo, double sensitivity, ival *out);

/* The secure sampler's entropy source, replaceable by tests (lmo_sample.c): returns 1
 * for a seeded sampler, which has none. */
typedef ssize_t (*dpzo__entropy_fn)(void *buf, size_t len, unsigned flags);
int dpzo__lmo_sampler_set_entropy(dpzo_lmo_sampler *s, dpzo__entropy_fn fn);

/* The essential infimum of Y (wU * a): the tails of X decay like e^{-ymin |x|}. */
static inline double dpzo__lmo_ymin(const dpzo_lmo *lmo)
{
    return lmo->uniform_weight > 0.0 ? lmo->uniform_weight * lmo->uniform_low : 0.0;
}

/* The LMO PLD's interval (lmo_pld.c); dpzo_lmo_pld_epsilon returns it unchanged. */
dpzo_status dpzo__lmo_pld_interval(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                   const dpzo_lmo_account_options *o, double grid,
                                   dpzo_pld_result *out);
/* The LMO noise with shift c as a custom noise of the PLD accountant (tilt 0), for that
 * interval and for tests that discretise one step; *_bad: a cell boundary was not located
 * to within the noise's loss_slack (no result that used it may be claimed). */
dpzo_status dpzo__lmo_pld_noise_new(dpzo_ctx *ctx, const dpzo_lmo *lmo, double c,
                                    dpzo_pld_noise *out);
int dpzo__lmo_pld_noise_bad(const dpzo_pld_noise *n);
void dpzo__lmo_pld_noise_free(dpzo_pld_noise *n);

#endif
