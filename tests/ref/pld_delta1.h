/* SPDX-License-Identifier: Apache-2.0 */
/* tests/ref/pld_delta1.h: one Poisson-subsampled Gaussian step's delta(eps), remove
 * adjacency, by its closed form in long double (independent of the PLD code), for the
 * PLD soundness tests: delta(eps) = q Phibar((x-1)/s) + (1-q) Phibar(x/s) - e^eps Phibar(x/s),
 * x = s^2 log((e^eps - 1 + q)/q) + 1/2. Any composition of such steps, in either
 * adjacency, has at least this delta (post-processing), so a proven epsilon `eps` of
 * T >= 1 steps must have delta1(eps) <= delta. For sampling without replacement the
 * accountant's pair is this one at rate gamma on eps >= 0. */
#ifndef PLD_DELTA1_H
#define PLD_DELTA1_H

#include <math.h>

static long double delta1(long double eps, long double s, long double q)
{
    long double r = q == 1.0L ? eps : eps + log1pl(-(1.0L - q) * expl(-eps)) - logl(q);
    long double x = s * s * r + 0.5L;
    long double a = 0.5L * erfcl((x - 1.0L) / s * (long double)M_SQRT1_2);
    long double b = 0.5L * erfcl(x / s * (long double)M_SQRT1_2);
    return q * a + (1.0L - q - expl(eps)) * b;
}

#endif
