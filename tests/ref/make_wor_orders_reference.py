#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""References for tests/test_wor_orders.c: the WBK19 Theorem 27 bound on the RDP of the
Gaussian on a batch sampled without replacement, at orders above 256, where dpzo uses
the exact forward differences D(m) for m <= 257 and the second branch (or its analytic
bound on D, which is looser) beyond. Evaluated here with mpmath at 700 digits from the
definitions: D(m) = sum_k (-1)^(m-k) C(m,k) e^{k(k-1)c}, c = 1/(2 sigma^2); for i with
2 ceil(i/2) > 257 only the second branch 2 e^{i(i-1)c} is used, which is at least what
dpzo uses there, so dpzo's value must be at most this one and (its analytic bound being
far looser than the second branch at these sigmas) equal to it to 1e-12.

Also the issue-20 known answer: epsilon at order 508 (improved conversion) for sigma
9.22913310919996, B = 10516 of 219784, one step, delta 1.013383779700047e-11.

Run: /work/main/build/venv/bin/python tests/ref/make_wor_orders_reference.py
(about two minutes on the project's 2-core AMD EPYC); prints the C rows."""
import mpmath as mp

DPS = 700


def log_a(batch, size, sigma, n, dmax=257):
    with mp.workdps(DPS):
        c = 1 / (2 * mp.mpf(sigma) ** 2)
        q = mp.mpf(batch) / size
        g = [mp.e ** (k * (k - 1) * c) for k in range(dmax + 1)]
        memo = {}

        def d(m):
            if m not in memo:
                memo[m] = abs(mp.fsum((-1) ** (m - k) * mp.binomial(m, k) * g[k]
                                      for k in range(m + 1)))
            return memo[m]
        a = 1 + q ** 2 * mp.binomial(n, 2) * min(4 * mp.expm1(2 * c), 2 * mp.e ** (2 * c))
        for i in range(3, n + 1):
            v = 2 * mp.e ** (i * (i - 1) * c)
            if 2 * ((i + 1) // 2) <= dmax:
                v = min(v, 4 * mp.sqrt(d(2 * (i // 2)) * d(2 * ((i + 1) // 2))))
            a += q ** i * mp.binomial(n, i) * v
        return mp.log(a)


CASES = [  # batch, size, sigma, order
    (10516, 219784, 9.22913310919996, 300),
    (10516, 219784, 9.22913310919996, 508),
    (10516, 219784, 9.22913310919996, 512),
    (27340, 931148, 16.234, 852),
    (256, 60000, 3.0, 400),
    (256, 60000, 10.0, 626),  # 1000 steps at delta 5e-324: the default's order
]


def main():
    for b, n, s, a in CASES:
        with mp.workdps(DPS):
            r = log_a(b, n, s, a) / (a - 1)
            print('    {%d, %d, %r, %d, "%s"},' % (b, n, s, a, mp.nstr(r, 30)))
    with mp.workdps(DPS):
        a = 508
        r = log_a(10516, 219784, 9.22913310919996, a) / (a - 1)
        delta = mp.mpf(1.013383779700047e-11)
        eps = r + mp.log1p(-mp.mpf(1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
        print('issue 20 epsilon at order 508: %s' % mp.nstr(eps, 30))


if __name__ == '__main__':
    main()
