#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""References for tests/test_repeat_select.c, evaluated with mpmath at 40 digits from the
papers' statements (not from dpzo's code):

* repeat-and-select, truncated negative binomial (Papernot-Steinke 2022, Thm. 2):
    eps' = eps(l) + (1 + eta) min_{lh in {1} u [1.01, 1e5]} [(1 - 1/lh) eps(lh) + log(1/gamma)/lh]
           + log(mean) / (l - 1),
  gamma solved from E[K] = mean (their Def. 1) by bisection at 40 digits. For an inner
  event with eps(a) = rho a (Gaussian, zCDP) the minimum is in closed form:
  2 sqrt(L rho) - rho at lh = sqrt(L / rho) when that is >= 1, else L (at lh = 1).
  For the Laplace inner (Mironov 2017, Prop. 6) and the Poisson-subsampled Gaussian (its
  RDP: log E_{z ~ N(0, s^2)}[(1 - q + q e^{(2z - 1)/(2 s^2)})^a] / (a - 1), by quadrature)
  the minimum is found by a scan and golden section.
* repeat-and-select, Poisson (Thm. 6): eps' = eps(l) + mean dhat + log(mean)/(l - 1),
  dhat = min over orders a in [1.01, 1e5] of min(exp((a-1)(eps(a) - ehat + log(1 - 1/a)))/a,
  sqrt(1 - e^{-eps(a)})) at ehat = log(1 + 1/(l - 1)) (the conversion of Canonne-Kamath-
  Steinke 2020, Prop. 12, and the total variation bound dpzo uses).
* sampling with replacement (m of n, Gaussian sigma), w_k = Binom(k; m, 1/n): the
  joint-convexity sum (a) log sum_k w_k exp(a (a-1) k^2 / (2 sigma^2)) / (a - 1), and the
  paired sum (c) a/(a-1) log sum_k w_k W_k^((1-a)/a) exp((a-1) k^2 / (2 sigma^2)),
  W_k = max_{l <= k} w_l (n >= 2), exact.

Run: /work/main/build/venv/bin/python tests/ref/make_repeat_select_reference.py
  > tests/ref/repeat_select_values.h"""
import mpmath as mp

mp.mp.dps = 40
INF = mp.inf


def tnb_mean(g, eta):
    g = mp.mpf(g)
    if eta == 0:
        return (1 / g - 1) / mp.log(1 / g)
    return eta * (1 - g) / (g * (1 - g ** eta))


def tnb_gamma(mean, eta):
    lo, hi = mp.mpf(0), mp.mpf(1)  # mean decreases in gamma
    for _ in range(200):
        mid = (lo + hi) / 2
        if tnb_mean(mid, eta) >= mean:
            lo = mid
        else:
            hi = mid
    return lo


def gauss_rdp(rho):
    return lambda a: rho * a


def laplace_rdp(b):
    b = mp.mpf(b)

    def f(a):
        a = mp.mpf(a)
        return mp.log(a / (2 * a - 1) * mp.e ** ((a - 1) / b)
                      + (a - 1) / (2 * a - 1) * mp.e ** (-a / b)) / (a - 1)
    return f


def sgm_rdp(q, s, T):
    q, s = mp.mpf(q), mp.mpf(s)
    cache = {}

    def f(a):
        a = mp.mpf(a)
        if a in cache:
            return cache[a]
        if a == int(a):
            k = int(a)
            A = mp.fsum(mp.binomial(k, j) * (1 - q) ** (k - j) * q ** j
                        * mp.e ** ((j * j - j) / (2 * s * s)) for j in range(k + 1))
        else:
            g = lambda z: (mp.npdf(z, 0, s)
                           * (1 - q + q * mp.e ** ((2 * z - 1) / (2 * s * s))) ** a)
            A = mp.quad(g, [-mp.inf, -10 * s, 0, 0.5, 30 * s, mp.inf])
        cache[a] = T * mp.log(A) / (a - 1)
        return cache[a]
    return f


def minimise(h, lo=mp.mpf("1.01"), hi=mp.mpf(100000)):
    """min of h on [lo, hi]: a log-spaced scan, then golden section around the best point."""
    n = 120
    pts = [lo * (hi / lo) ** (mp.mpf(i) / n) for i in range(n + 1)]
    vals = [h(p) for p in pts]
    i = min(range(len(vals)), key=lambda j: vals[j])
    a, b = pts[max(i - 1, 0)], pts[min(i + 1, n)]
    gr = (mp.sqrt(5) - 1) / 2
    x1, x2 = b - gr * (b - a), a + gr * (b - a)
    f1, f2 = h(x1), h(x2)
    for _ in range(90):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - gr * (b - a)
            f1 = h(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + gr * (b - a)
            f2 = h(x2)
    return min(vals[i], f1, f2)


def tnb_extra(eps, mean, eta, rho=None):
    L = mp.log(1 / tnb_gamma(mean, eta))
    if rho is not None:  # closed form for eps(a) = rho a
        a = mp.sqrt(L / rho)
        c = 2 * mp.sqrt(L * rho) - rho if a >= 1 else L
        # dpzo's lambda_hat lies in {1} u [1.01, 1e5]
        if 1 < a < mp.mpf("1.01"):
            c = min(L, (1 - 1 / mp.mpf("1.01")) * eps(mp.mpf("1.01")) + L / mp.mpf("1.01"))
        return (1 + eta) * c
    c = minimise(lambda a: (1 - 1 / a) * eps(a) + L / a)
    return (1 + eta) * min(c, L)


def poisson_extra(eps, mean, lam, sampling=1):
    ehat = mp.log(1 + 1 / (mp.mpf(lam) - 1))

    def logd(a):
        r = eps(a)
        cks = (a - 1) * (r - ehat + mp.log(1 - 1 / a)) - mp.log(a)
        tv = mp.log(mp.sqrt(1 - mp.e ** (-r))) if r > 0 else -mp.inf
        return min(cks, tv, mp.mpf(0))
    d = min(mp.e ** minimise(logd), mp.mpf(sampling))
    return mean * d


def rs(eps, mean, eta, lam, rho=None, sampling=1):
    lam = mp.mpf(lam)
    extra = poisson_extra(eps, mean, lam, sampling) if eta == INF else \
        tnb_extra(eps, mean, eta, rho)
    return eps(lam) + extra + mp.log(mean) / (lam - 1)


def wr_joint(n, m, s, a):
    p, a, s = mp.mpf(1) / n, mp.mpf(a), mp.mpf(s)
    tot = mp.fsum(mp.binomial(m, k) * p ** k * (1 - p) ** (m - k)
                  * mp.e ** (a * (a - 1) * k * k / (2 * s * s)) for k in range(m + 1))
    return mp.log(tot) / (a - 1)


def wr_pair(n, m, s, a):
    if n == 1:
        return mp.inf
    p, a, s = mp.mpf(1) / n, mp.mpf(a), mp.mpf(s)
    w = [mp.binomial(m, k) * p ** k * (1 - p) ** (m - k) for k in range(m + 1)]
    tot = mp.fsum(w[k] * max(w[:k + 1]) ** ((1 - a) / a) * mp.e ** ((a - 1) * k * k / (2 * s * s))
                  for k in range(m + 1))
    return a / (a - 1) * mp.log(tot)


def num(x):
    return mp.nstr(x, 20, min_fixed=-mp.inf, max_fixed=mp.inf) if x != INF else "INFINITY"


def shape_c(eta):
    return "INFINITY" if eta == INF else repr(float(eta))


# (kind, parameter(s), mean, shape, order). kind 0: Gaussian sigma (eps = a/(2 s^2));
# 1: Laplace b; 2: T steps of the Poisson-subsampled Gaussian (q, sigma)
RS = [
    (0, (2.0,), 10.0, 1.0, 2.0), (0, (2.0,), 10.0, 0.0, 8.0), (0, (2.0,), 10.0, 0.5, 3.5),
    (0, (2.0,), 10.0, -0.5, 20.0), (0, (0.5,), 100.0, 2.0, 1.5), (0, (5.0,), 1.5, 1.0, 64.0),
    (0, (2.0,), 10.0, INF, 4.0), (0, (1.0,), 3.0, INF, 16.0), (0, (3.0,), 50.0, INF, 2.5),
    (1, (2.0,), 5.0, 1.0, 10.0), (1, (2.0,), 5.0, 0.0, 100.0), (1, (1.0,), 20.0, INF, 8.0),
    (2, (0.01, 1.0, 100), 10.0, 1.0, 8.0), (2, (0.01, 1.0, 100), 10.0, INF, 8.0),
]
WR = [(1000, 4, 2.0, 2.0), (100, 10, 5.0, 8.0), (3, 2, 1.0, 3.0), (60000, 2, 1.0, 2.0),
      (10, 1, 1.0, 5.5), (50, 30, 10.0, 1.5), (1, 7, 3.0, 2.0), (60000, 16, 1.0, 3.0),
      (60000, 256, 1.1, 2.0), (20, 40, 3.0, 4.0)]


def main():
    print("/* SPDX-License-Identifier: Apache-2.0 */")
    print("/* Generated by tests/ref/make_repeat_select_reference.py (mpmath, 40 digits). */")
    print("/* inner: 0 Gaussian(p0); 1 Laplace(p0); 2 repeat(p2, poisson(p0, gaussian(p1))) */")
    print("static const struct { int inner; double p0, p1; unsigned long long p2; "
          "double mean, shape, alpha, rdp; } RS_RDP[] = {")
    for kind, par, mean, eta, lam in RS:
        if kind == 0:
            rho = 1 / (2 * mp.mpf(par[0]) ** 2)
            v = rs(gauss_rdp(rho), mean, eta, lam, rho=rho)
            row = (par[0], 0.0, 0)
        elif kind == 1:
            v = rs(laplace_rdp(par[0]), mean, eta, lam)
            row = (par[0], 0.0, 0)
        else:
            q, s, T = par
            v = rs(sgm_rdp(q, s, T), mean, eta, lam,
                   sampling=1 - (1 - mp.mpf(q)) ** T)
            row = (q, s, T)
        print(f"    {{{kind}, {row[0]!r}, {row[1]!r}, {row[2]}, {mean!r}, {shape_c(eta)}, "
              f"{lam!r}, {num(v)}}},")
    print("};")
    print("/* with replacement: the joint-convexity sum (a) and the paired sum (c)")
    print(" * (docs/accountant.md 3.7) */")
    print("static const struct { unsigned long long n, m; double sigma, alpha, joint, pair; } "
          "WR_JOINT[] = {")
    for n, m, s, a in WR:
        print(f"    {{{n}, {m}, {s!r}, {a!r}, {num(wr_joint(n, m, s, a))}, "
              f"{num(wr_pair(n, m, s, a))}}},")
    print("};")


if __name__ == "__main__":
    main()
