/* SPDX-License-Identifier: Apache-2.0 */
/* accountant/core/sampling_bound.c: the sampling bound delta(eps) <= 1 - P(the record is never
 * used), for every eps >= 0 (issue 28, item 4).
 *
 * Let D, D' be neighbours differing in one record x (add/remove for Poisson sampling,
 * replace-one for batches drawn without replacement). Step t uses x with probability q_t
 * (Poisson: x is included with probability q; without replacement: x's slot lies in a batch
 * of B of n with probability B/n; with replacement, m draws: 1 - (1 - 1/n)^m), independently of the steps before it; an unsampled
 * mechanism uses x always (q_t = 1) unless it adds no information (sigma = +inf). On the
 * event U that no step uses x, which has probability p = prod_t (1 - q_t)^(count_t) under
 * both D and D' (the draws do not depend on the data), the outputs have one and the same
 * conditional distribution C: M(D) = p C + (1 - p) R and M(D') = p C + (1 - p) R' (with
 * adaptively chosen steps, C is the same kernel composed under both). Then for every
 * eps >= 0 and every event S
 *   M(D)(S) - e^eps M(D')(S) = p (1 - e^eps) C(S) + (1 - p) (R(S) - e^eps R'(S)) <= 1 - p,
 * in both directions, so delta(eps) <= 1 - p, and epsilon(delta) = 0 whenever delta >= 1 - p.
 * (For one Poisson step of the Gaussian at sigma 0.0049367, q 2.076e-5, delta 0.018754 this
 * is the exact answer 0, where the PLD had refused for memory, PRV answered 35.41 and RDP
 * 20024.3.)
 *
 * p is formed in MPFR, rounded down at every operation: 1 - q exactly (1200 bits hold 1 - q
 * for every double q), (n - B)/n rounded down, powers (x -> x^k is increasing) and products
 * rounded down; 1 - p is then rounded up, and so is the double returned. One step gives q
 * itself, exactly. */
#include <math.h>
#include <mpfr.h>
#include "internal.h"

#define BOUND_PREC 1200

_Static_assert(sizeof(unsigned long) >= sizeof(uint64_t), "counts fit mpfr_pow_ui");

/* p = a lower bound on P(e does not use the record), in [0, 1]. */
static void unused_prob(const dpzo_event *e, mpfr_t p)
{
    mpfr_t t;
    switch (e->kind) {
    case DPZO_EVENT_GAUSSIAN:
        /* sigma = +inf releases nothing of the record; any other noise uses it */
        mpfr_set_ui(p, isinf(e->param) ? 1 : 0, MPFR_RNDN);
        return;
    case DPZO_EVENT_POISSON_SAMPLED:
        if (!(e->param < 1.0)) {
            mpfr_set_ui(p, 0, MPFR_RNDN);
            return;
        }
        mpfr_set_d(p, e->param, MPFR_RNDN);    /* exact */
        mpfr_ui_sub(p, 1, p, MPFR_RNDD);       /* 1 - q: exact at BOUND_PREC bits */
        return;
    case DPZO_EVENT_WOR_SAMPLED:
        if (e->batch >= e->n) {
            mpfr_set_ui(p, 0, MPFR_RNDN);
            return;
        }
        mpfr_init2(t, BOUND_PREC);
        mpfr_set_ui(p, (unsigned long)(e->n - e->batch), MPFR_RNDN); /* exact */
        mpfr_set_ui(t, (unsigned long)e->n, MPFR_RNDN);
        mpfr_div(p, p, t, MPFR_RNDD); /* 1 - B/n, down */
        mpfr_clear(t);
        return;
    case DPZO_EVENT_WR_SAMPLED: /* m independent draws, each misses the record w.p. 1 - 1/n */
        if (e->n == 1 && e->batch > 0) {
            mpfr_set_ui(p, 0, MPFR_RNDN);
            return;
        }
        mpfr_init2(t, BOUND_PREC);
        mpfr_set_ui(p, (unsigned long)(e->n - 1), MPFR_RNDN); /* exact */
        mpfr_set_ui(t, (unsigned long)e->n, MPFR_RNDN);
        mpfr_div(p, p, t, MPFR_RNDD);                          /* 1 - 1/n, down */
        mpfr_pow_ui(p, p, (unsigned long)e->batch, MPFR_RNDD);
        mpfr_clear(t);
        return;
    case DPZO_EVENT_SELF_COMPOSED:
        unused_prob(e->inner, p);
        mpfr_pow_ui(p, p, (unsigned long)e->count, MPFR_RNDD); /* x^0 = 1: nothing used */
        return;
    case DPZO_EVENT_COMPOSED:
        mpfr_set_ui(p, 1, MPFR_RNDN);
        mpfr_init2(t, BOUND_PREC);
        for (size_t i = 0; i < e->n_children && !mpfr_zero_p(p); i++) {
            unused_prob(e->children[i], t);
            mpfr_mul(p, p, t, MPFR_RNDD);
        }
        mpfr_clear(t);
        return;
    default: /* Laplace (unsampled), or a kind not analysed here: no bound below 1 */
        mpfr_set_ui(p, 0, MPFR_RNDN);
        return;
    }
}

double dpzo__event_sampling_bound(const dpzo_event *e)
{
    if (e == NULL)
        return 1.0;
    mpfr_t p;
    mpfr_init2(p, BOUND_PREC);
    unused_prob(e, p);
    mpfr_ui_sub(p, 1, p, MPFR_RNDU); /* 1 - p, up */
    double b = mpfr_get_d(p, MPFR_RNDU);
    mpfr_clear(p);
    return b < 1.0 ? b : 1.0;
}

double dpzo__sampling_bound(double q, uint64_t count)
{
    if (count == 0 || q == 0.0)
        return 0.0;
    if (!(q < 1.0))
        return 1.0;
    dpzo_event g = {.kind = DPZO_EVENT_GAUSSIAN, .param = 1.0};
    dpzo_event s = {.kind = DPZO_EVENT_POISSON_SAMPLED, .param = q, .inner = &g};
    dpzo_event c = {.kind = DPZO_EVENT_SELF_COMPOSED, .count = count, .inner = &s};
    return dpzo__event_sampling_bound(&c);
}
