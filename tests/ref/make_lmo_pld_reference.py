#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference epsilons of ONE release of LMO noise, computed independently of dpzo with
mpmath (40 digits), for tests/test_lmo.c (the PLD accountant, dpzo_lmo_pld_epsilon).

For the pair P0 = X, P1 = X + c the hockey-stick divergence at eps > 0 is
    delta(eps) = P1(A) - e^eps P0(A),  A = {r > eps} = (y2, y3),
r(x) = log p(x - c) - log p(x), with y2 in (0, c) and y3 in (c, inf] the roots of r = eps
(found by bisection; r increases on [0, c] and decreases on [c, inf)). P(a < X < b) comes
from the closed form P(X > x) = M_Y(-x) / 2 (x >= 0), p(x) = M_Y'(-|x|) / 2.
Poisson sampling at rate q, remove:  delta_R(eps) = q delta(log(1 + (e^eps - 1)/q));
add: with k = e^eps q / (1 - e^eps (1 - q)) (0 when 1 - e^eps (1-q) <= 0),
    delta_A(eps) = (1 - e^eps (1 - q)) * (delta(log k) if k >= 1 else 1 - k + k delta(-log k)).
The accountant's epsilon is the larger over the two directions; each is solved for the
target delta by bisection.

A second table gives one release's hockey-stick divergence delta(eps) of each sampled pair
(remove: ((1-q) P0 + q P1, P0); add: (P0, (1-q) P0 + q P1)) at epsilons of both signs, for
the one-step domination test (the pessimistic discretisation must lie above it, the
optimistic one below, at every eps: composition needs it at negative ones too). For
eps < 0 the plain pair gives delta(eps) = 1 - e^eps + e^eps delta(-eps) (P0 reflected
about c/2 is P1).

Run: python3 tests/ref/make_lmo_pld_reference.py > tests/ref/lmo_pld_values.h
"""
from mpmath import mp, mpf, exp, log, expm1, diff, inf

mp.dps = 40

CASES = [
    # name, (wG, k, theta, wE, rate, wU, a, b), c, q, delta
    ("mixture", (1, 2, 0.5, 0.5, 2, 1, 1, 2), 1.0, 1.0, 1e-5),
    ("mixture_q", (1, 2, 0.5, 0.5, 2, 1, 1, 2), 1.0, 0.05, 1e-6),
    ("sst2_rdp_winner", (0.3, 1, 0.5, 0.4, 5, 0.4, 1, 2), 1.0, 1.0, 1e-10),
    ("heavy_tail", (1, 0.5, 1, 0, 1, 1, 0, 1), 1.0, 1.0, 1e-5),
    ("heavy_tail_q", (1, 0.5, 1, 0, 1, 1, 0, 1), 2.0, 0.1, 1e-5),
]


def mgf(p, t):
    wG, k, th, wE, lam, wU, a, b = [mpf(v) for v in p]
    m = mpf(1)
    if wG > 0:
        m *= (1 - th * wG * t) ** (-k)
    if wE > 0:
        m *= lam / (lam - wE * t)
    if wU > 0:
        if t == 0:
            pass
        else:
            m *= (exp(wU * b * t) - exp(wU * a * t)) / (wU * t * (b - a))
    return m


def pdf(p, x):
    u = -abs(mpf(x))
    return diff(lambda t: mgf(p, t), u) / 2


def sf(p, x):
    x = mpf(x)
    if x >= 0:
        return mgf(p, -x) / 2
    return 1 - mgf(p, x) / 2


def between(p, a, b):
    if b == inf:
        return sf(p, a)
    return sf(p, a) - sf(p, b)


def ymin(p):
    wU, a = mpf(p[5]), mpf(p[6])
    return wU * a if wU > 0 else mpf(0)


def r(p, c, x):
    return log(pdf(p, x - c)) - log(pdf(p, x))


def bisect(f, lo, hi, it=140):
    """f(lo) > 0 >= f(hi) or the reverse; returns the sign change."""
    flo = f(lo) > 0
    for _ in range(it):
        mid = (lo + hi) / 2
        if (f(mid) > 0) == flo:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def delta_plain(p, c, eps):
    c = mpf(c)
    E = log(pdf(p, 0)) - log(pdf(p, c))
    if eps >= E:
        return mpf(0)
    y2 = bisect(lambda x: r(p, c, x) - eps, mpf(0), c)
    if eps <= c * ymin(p):
        y3 = inf
    else:
        hi = c + 1
        while r(p, c, hi) > eps:
            hi = c + 2 * (hi - c)
        y3 = bisect(lambda x: r(p, c, x) - eps, c, hi)
    p1 = between(p, y2 - c, y3 - c if y3 != inf else inf)
    p0 = between(p, y2, y3)
    return p1 - exp(eps) * p0


def delta_dir(p, c, q, eps, add):
    q = mpf(q)
    if q == 1:
        return delta_plain(p, c, eps)
    if not add:
        return q * delta_plain(p, c, log(1 + expm1(eps) / q))
    f = 1 - exp(eps) * (1 - q)
    if f <= 0:
        return mpf(0)
    k = exp(eps) * q / f
    if k >= 1:
        return f * delta_plain(p, c, log(k))
    return f * (1 - k + k * delta_plain(p, c, -log(k)))


def delta_plain_any(p, c, eps):
    if eps >= 0:
        return delta_plain(p, c, eps)
    return 1 - exp(eps) + exp(eps) * delta_plain(p, c, -eps)


def delta_pair(p, c, q, eps, add):
    eps, q = mpf(eps), mpf(q)
    if add:
        f = 1 - exp(eps) * (1 - q)
        if f <= 0:
            return mpf(0)
        return f * delta_plain_any(p, c, log(exp(eps) * q / f))
    a = expm1(eps) + q
    if a <= 0:
        return 1 - exp(eps)
    return q * delta_plain_any(p, c, log(a / q))


# name, LMO, c, q, epsilons: the task1/lmo_eps0.7 noise at SST-2's rate (docs/lmo.md, PLD)
HS_CASES = [
    ("task1_lmo_eps0.7", (0.1, 1, 0.5, 0.1, 5, 0.1, 5, 6), 1.0, 0.030408314773570897,
     (-0.03, -0.02, -0.0142, -0.0141, -0.012, -0.008, -0.004, 0.0, 0.004, 0.008, 0.012,
      0.014, 0.0142, 0.02, 0.025)),
]


def eps_for(p, c, q, delta, add):
    lo, hi = mpf(0), mpf(1)
    while delta_dir(p, c, q, hi, add) > delta:
        hi *= 2
    if delta_dir(p, c, q, lo, add) <= delta:
        return mpf(0)
    for _ in range(60):
        mid = (lo + hi) / 2
        if delta_dir(p, c, q, mid, add) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def main():
    print("/* Generated by tests/ref/make_lmo_pld_reference.py (mpmath, 40 digits): one")
    print(" * release of LMO noise, epsilon at delta (the larger of the add and remove")
    print(" * directions when q < 1). Do not edit. */")
    print("#ifndef DPZO_LMO_PLD_VALUES_H")
    print("#define DPZO_LMO_PLD_VALUES_H")
    print("typedef struct {")
    print("    const char *name;")
    print("    double lmo[8]; /* wG k theta wE rate wU a b */")
    print("    double c, q, delta, epsilon;")
    print("} lmo_pld_ref;")
    print("static const lmo_pld_ref LMO_PLD_REF[] = {")
    for name, p, c, q, d in CASES:
        e = eps_for(p, c, q, mpf(d), False)
        if q < 1:
            e = max(e, eps_for(p, c, q, mpf(d), True))
        print('    {"%s", {%s}, %r, %r, %r, %s},' % (
            name, ", ".join(repr(float(v)) for v in p), c, q, d, mp.nstr(e, 17)))
    print("};")
    print("#define LMO_PLD_REF_N (sizeof LMO_PLD_REF / sizeof LMO_PLD_REF[0])")
    print("/* one release's hockey-stick divergence of the remove and add pairs */")
    print("typedef struct {")
    print("    const char *name;")
    print("    double lmo[8];")
    print("    double c, q, eps, remove, add;")
    print("} lmo_pld_hs_ref;")
    print("static const lmo_pld_hs_ref LMO_PLD_HS_REF[] = {")
    for name, p, c, q, epss in HS_CASES:
        for e in epss:
            print('    {"%s", {%s}, %r, %r, %r, %s, %s},' % (
                name, ", ".join(repr(float(v)) for v in p), c, q, e,
                mp.nstr(delta_pair(p, c, q, e, False), 17),
                mp.nstr(delta_pair(p, c, q, e, True), 17)))
    print("};")
    print("#define LMO_PLD_HS_REF_N (sizeof LMO_PLD_HS_REF / sizeof LMO_PLD_HS_REF[0])")
    print("#endif")


if __name__ == "__main__":
    main()
