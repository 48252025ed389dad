#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""References for tests/test_mog.c (and python/tests/test_mog.py): the mixture-of-Gaussians
and truncated Poisson-sampled Gaussian events, with mpmath at 40 digits from the
definitions (not from dpzo's quadrature):

* MOG: both Renyi divergences of M = sum_i p_i N(c_i, sigma^2) and N = N(0, sigma^2),
  D_alpha(P || Q) = log int P^alpha Q^(1 - alpha) dx / (alpha - 1), by mp.quad split at the
  component means; at integer orders also the multinomial closed form
  E_N[(M/N)^a] = sum_{|k| = a} multinomial(a; k) prod p_i^k_i
                 exp(((sum k_i c_i)^2 - sum k_i c_i^2) / (2 sigma^2)),
  which the script checks against the quadrature (it does not trust either alone).
* SGM: the Poisson-sampled Gaussian's RDP by the binomial sum (integer orders), to which
  MOG with c = {0, 1} reduces.
* TSG_TRUE: the Renyi divergences (both directions, by quadrature) of one concrete
  truncated-sampling instance in one dimension: N others equal to -1, the differing record
  +1, each sampled with probability q, batches above B cut to a uniform B-subset, noise
  N(0, sigma^2). A lower bound on the event's RDP (one dataset pair), so dpzo's upper
  bound must be at least it.
* TSG_BOUND: the bound of docs/accountant.md 3.8 evaluated here (SGM by the binomial sum,
  the truncation probabilities by exact binomial tail sums): dpzo's certified interval
  must contain it.

Run: /work/main/build/venv/bin/python tests/ref/make_mog_reference.py
  > tests/ref/mog_values.h"""
import itertools

import mpmath as mp

mp.mp.dps = 40

MOG = [  # sigma, sensitivities, probabilities
    (1.0, [0.0, 1.0], [0.9, 0.1]),
    (2.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01]),
    (0.8, [0.5, 1.5], [0.3, 0.7]),
    (1.5, [0.0, 0.3, 1.0, 2.0], [0.4, 0.3, 0.2, 0.1]),
    (1.0, [1.0], [1.0]),
]
MOG_ORDERS = [1.5, 2.0, 3.7, 8.0, 20.0]

SGM_CASES = [(0.1, 1.0), (0.01, 0.8)]
SGM_ORDERS = [2, 8, 32]

# n (others), q, B, sigma, order
TSG_TRUE = [(6, 0.3, 2, 1.5, 2.0), (6, 0.3, 2, 1.5, 8.0), (10, 0.5, 3, 2.0, 4.0),
            (4, 0.2, 1, 1.0, 3.0)]
TSG_BOUND = [(60000, 256 / 60000, 300, 1.1, 8), (60000, 256 / 60000, 300, 1.1, 32),
             (1000, 0.05, 40, 1.0, 16), (1000, 0.05, 60, 1.0, 16), (100, 0.2, 10, 2.0, 4)]


def npdf(x, mu, s):
    return mp.npdf(x, mu, s)


def renyi(P, Q, alpha, pts):
    alpha = mp.mpf(alpha)
    f = lambda x: P(x) ** alpha * Q(x) ** (1 - alpha)
    return mp.log(mp.quad(f, pts)) / (alpha - 1)


def mog_both(sigma, cs, ps, alpha):
    sigma = mp.mpf(sigma)
    cs = [mp.mpf(c) for c in cs]
    S = mp.fsum(mp.mpf(p) for p in ps)
    ws = [mp.mpf(p) / S for p in ps]
    M = lambda x: mp.fsum(w * npdf(x, c, sigma) for w, c in zip(ws, cs))
    N = lambda x: npdf(x, 0, sigma)
    a = mp.mpf(alpha)
    hi = a * max(cs) + 15 * sigma
    lo = -(a - 1) * max(cs) - 15 * sigma
    pts = sorted(set([-mp.inf, lo] + [mp.mpf(k) * sigma / 2 for k in range(int(lo / sigma * 2), int(hi / sigma * 2) + 1)] + [hi, mp.inf]))
    fwd = renyi(M, N, alpha, pts)
    rev = renyi(N, M, alpha, pts)
    return fwd, rev


def mog_multinomial(sigma, cs, ps, a):
    sigma = mp.mpf(sigma)
    S = mp.fsum(mp.mpf(p) for p in ps)
    ws = [mp.mpf(p) / S for p in ps]
    tot = mp.mpf(0)
    n = len(cs)
    for k in itertools.product(range(a + 1), repeat=n):
        if sum(k) != a:
            continue
        coef = mp.factorial(a)
        for ki in k:
            coef /= mp.factorial(ki)
        s = mp.fsum(ki * mp.mpf(c) for ki, c in zip(k, cs))
        t = mp.fsum(ki * mp.mpf(c) ** 2 for ki, c in zip(k, cs))
        pr = mp.mpf(1)
        for ki, w in zip(k, ws):
            pr *= w ** ki
        tot += coef * pr * mp.e ** ((s * s - t) / (2 * sigma ** 2))
    return mp.log(tot) / (a - 1)


def sgm(q, sigma, a):
    q, sigma = mp.mpf(q), mp.mpf(sigma)
    tot = mp.fsum(mp.binomial(a, k) * q ** k * (1 - q) ** (a - k)
                  * mp.e ** ((k * k - k) / (2 * sigma ** 2)) for k in range(a + 1))
    return mp.log(tot) / (a - 1)


def tsg_true(n, q, B, sigma, alpha):
    """The concrete 1-D instance: locations of the sum under D (n others at -1) and D'."""
    q, sigma = mp.mpf(q), mp.mpf(sigma)
    Qw, Pw = {}, {}
    for m in range(n + 1):
        pm = mp.binomial(n, m) * q ** m * (1 - q) ** (n - m)
        base = -min(m, B)
        Qw[base] = Qw.get(base, 0) + pm
        Pw[base] = Pw.get(base, 0) + pm * (1 - q)
        if m < B:
            Pw[base + 1] = Pw.get(base + 1, 0) + pm * q
        else:
            inc = mp.mpf(B) / (m + 1)
            Pw[-B + 2] = Pw.get(-B + 2, 0) + pm * q * inc
            Pw[-B] = Pw.get(-B, 0) + pm * q * (1 - inc)
    P = lambda x: mp.fsum(w * npdf(x, mu, sigma) for mu, w in Pw.items())
    Q = lambda x: mp.fsum(w * npdf(x, mu, sigma) for mu, w in Qw.items())
    pts = [-mp.inf] + [mp.mpf(k) / 2 for k in range(-2 * B - 40, 50)] + [mp.inf]
    return max(renyi(P, Q, alpha, pts), renyi(Q, P, alpha, pts))


def chernoff(N, k, q):  # kept for reading: dpzo caps its tail sums with this
    N, k, q = mp.mpf(N), mp.mpf(k), mp.mpf(q)
    if k > N:
        return mp.mpf(0)
    if k <= N * q:
        return mp.mpf(1)
    x = k / N
    kl = x * mp.log(x / q) + ((1 - x) * mp.log((1 - x) / (1 - q)) if x < 1 else 0)
    return min(mp.mpf(1), mp.e ** (-N * kl))


def binom_tail(N, k, q):
    """P(Bin(N, q) >= k), summed exactly"""
    q = mp.mpf(q)
    if k > N:
        return mp.mpf(0)
    return mp.fsum(mp.binomial(N, m) * q ** m * (1 - q) ** (N - m) for m in range(k, N + 1))


def tsg_bound(n, q, B, sigma, a):
    t = binom_tail(n, B, q)
    if t == 0:
        return sgm(q, sigma, a)
    qmax = mp.mpf(q) * B / (B + 1)
    s = min(qmax * t, mp.mpf(B) / (n + 1) * binom_tail(n + 1, B + 1, q))
    A1 = mp.e ** ((a - 1) * sgm(q, sigma, a))
    A2 = mp.e ** ((a - 1) * sgm(qmax, mp.mpf(sigma) / 2, a))
    b = min(A1 + s / qmax * (A2 - 1), A1 + t * max(0, A2 - A1))
    return mp.log(b) / (a - 1)


def main():
    print("/* SPDX-License-Identifier: Apache-2.0 */")
    print("/* Generated by tests/ref/make_mog_reference.py (mpmath, 40 digits). */")
    print("#define MOG_MAXK 4")
    print("static const struct { double sigma; int k; double c[MOG_MAXK], p[MOG_MAXK]; "
          "double alpha, fwd, rev; } MOG_RDP[] = {")
    for sigma, cs, ps in MOG:
        for al in MOG_ORDERS:
            fwd, rev = mog_both(sigma, cs, ps, al)
            if al == int(al):
                mn = mog_multinomial(sigma, cs, ps, int(al))
                assert abs(mn - fwd) < mp.mpf(10) ** -25 * max(1, abs(fwd)), (sigma, cs, al)
            c = ", ".join(repr(x) for x in cs)
            p = ", ".join(repr(x) for x in ps)
            print(f"    {{{sigma!r}, {len(cs)}, {{{c}}}, {{{p}}}, {al!r}, "
                  f"{mp.nstr(fwd, 20)}, {mp.nstr(rev, 20)}}},")
    print("};")
    print("static const struct { double q, sigma, alpha, rdp; } SGM_RDP[] = {")
    for q, s in SGM_CASES:
        for a in SGM_ORDERS:
            print(f"    {{{q!r}, {s!r}, {a}.0, {mp.nstr(sgm(q, s, a), 20)}}},")
    print("};")
    print("/* n = others besides the differing record */")
    print("static const struct { unsigned long long n; double q; unsigned long long B; "
          "double sigma, alpha, rdp; } TSG_TRUE[] = {")
    for n, q, B, s, al in TSG_TRUE:
        print(f"    {{{n}, {q!r}, {B}, {s!r}, {al!r}, {mp.nstr(tsg_true(n, q, B, s, al), 20)}}},")
    print("};")
    print("static const struct { unsigned long long n; double q; unsigned long long B; "
          "double sigma, alpha, rdp; } TSG_BOUND[] = {")
    for n, q, B, s, a in TSG_BOUND:
        print(f"    {{{n}, {q!r}, {B}, {s!r}, {a}.0, {mp.nstr(tsg_bound(n, q, B, s, a), 20)}}},")
    print("};")


if __name__ == "__main__":
    main()
