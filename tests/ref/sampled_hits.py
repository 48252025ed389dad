# SPDX-License-Identifier: Apache-2.0
"""The exact epsilon(delta) of T Poisson-sampled Gaussian steps at tiny noise (issue 30), by
mpmath; used by python/tests/test_tiny_noise.py and scripts/campaign.py (tinynoise).

At sigma <= 0.03 one step's privacy loss (remove pair) is, to within exp(-1/(8 sigma^2))
(below e^-138), log(1 - q) when the record is not sampled and log q + (x - 1/2)/sigma^2,
x ~ N(1, sigma^2), when it is. With K ~ Binomial(T, q) records sampled the total loss is
Gaussian given K: mean K (log q + 1/(2 sigma^2)) + (T - K) log(1 - q), variance K/sigma^2, so
delta(eps) = sum_k P(K = k) [Phi(a) - e^(eps - m + v/2) Phi(a - sqrt v)], a = (m - eps)/sqrt v.
The add pair's loss is at most -T log(1 - q), below every epsilon these are used at."""
import mpmath as mp


def hits_delta(s, q, t, eps):
    """delta(eps) at 40 digits."""
    with mp.workdps(40):
        s, q, eps = mp.mpf(s), mp.mpf(q), mp.mpf(eps)
        l0, l1 = mp.log(1 - q), mp.log(q) + 1 / (2 * s * s)
        total = mp.mpf(0)
        for k in range(0, t + 1):
            pk = mp.binomial(t, k) * q ** k * (1 - q) ** (t - k)
            if k > 10 and pk < mp.mpf(10) ** -40:
                break
            m = k * l1 + (t - k) * l0
            if k == 0:
                total += pk * max(mp.mpf(0), 1 - mp.e ** (eps - m))
                continue
            sd = mp.sqrt(k) / s
            a = (m - eps) / sd
            total += pk * (mp.ncdf(a) - mp.e ** (eps - m + sd * sd / 2) * mp.ncdf(a - sd))
        return total


def hits_epsilon(s, q, t, delta):
    """epsilon(delta) by bisection (90 halvings of a bracket doubled from 1), as a float
    at or just above the truth."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    while hits_delta(s, q, t, hi) > delta:
        hi *= 2
    for _ in range(90):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hits_delta(s, q, t, mid) > delta else (lo, mid)
    return float(hi)
