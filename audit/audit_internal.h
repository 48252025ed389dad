/* SPDX-License-Identifier: Apache-2.0 */
/* audit/audit_internal.h: the audits' private declarations (audit_lower.c, used by audit.c
 * and its tests; audit.c's tight accountant, used by audit_claim.c). */
#ifndef DPZO_AUDIT_INTERNAL_H
#define DPZO_AUDIT_INTERNAL_H

#include <stdint.h>
#include "dpzo/audit.h"
#include "dpzo/pld.h"

/* audit_lower.c: a proven lower bound (>= 0) on epsilon(delta) of `releases` releases of
 * the pair (1 - q) N(0, s^2) + q N(1, s^2) against N(0, s^2), q = q_num / q_den and
 * s = sigma sqrt(sum) / shift (sum: releases added up into one, as the shuffled audit's
 * epoch; 1 otherwise), all formed in interval arithmetic; from the best threshold test on
 * the largest release. *threshold (may be NULL) gets that threshold, in units of the shift
 * (NaN when no test proves anything, and 0 is returned). */
typedef struct {
    double q_num, q_den, sigma, shift, sum;
    uint64_t releases;
} dpzo__test_pair;
double dpzo__sgm_test_lower(const dpzo__test_pair *pair, double delta, double *threshold);

/* A tight accountant (PLD or PRV at `grid`) on `e` at delta; *ran = 0 where it would exceed
 * o->memory_limit or cannot analyse the event (the RDP bound then stands; ctx's message is
 * restored). Always DPZO_OK. */
dpzo_status dpzo__audit_tight(dpzo_ctx *ctx, const dpzo_event *e, double delta,
                              dpzo_pld_method m, double grid, const dpzo_audit_options *o,
                              dpzo_pld_result *r, int *ran);

#endif
