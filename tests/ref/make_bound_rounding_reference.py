#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reference values for tests/test_bound_rounding.c and python/tests/test_bound_rounding.py
(issue 28, item 1): one Poisson-subsampled Gaussian step at huge noise, tiny sampling rates
and large epsilon, where the exact delta(eps) is positive but far below the smallest
positive double (about 1e-32104799 at sigma 1000, q 1e-4, eps 3). A proven upper bound
must then read at least 2^-1074 = 4.94e-324 (the smallest double above the truth), never
0, and a proven lower bound 0 (the largest double below it).

The exact delta of one step under add/remove adjacency (docs/accountant.md, section 6.1;
the same closed forms as make_pld_soundness_reference.py), with mu the mixture
(1 - q) N(0, s^2) + q N(1, s^2) and r = (2x - 1) / (2 s^2):
  remove (P = mu, Q = N(0, s^2)), L = log(1 - q + q e^r) > eps iff x > x*,
      x* = s^2 log((e^eps - 1 + q)/q) + 1/2:
      delta_R(eps) = q Phibar((x* - 1)/s) + (1 - q) Phibar(x*/s) - e^eps Phibar(x*/s);
  add (P = N(0, s^2), Q = mu), L > eps iff x < x*, x* = s^2 log((e^-eps - 1 + q)/q) + 1/2
      (no such x, delta_A = 0, for eps >= -log(1 - q)):
      delta_A(eps) = Phi(x*/s) - e^eps ((1 - q) Phi(x*/s) + q Phi((x* - 1)/s));
  delta(eps) = max(delta_R, delta_A): E[(1 - e^{eps - L})_+], the hockey-stick divergence.
Both terms of delta_R agree to about 1/x* relative, so the working precision is raised to
50 + 2 log10(x*) digits (mpmath represents 1e-32104799 and far smaller exponents as they
are). Phibar at arguments above 1e6 is the Mills-ratio series phi(z)/z (1 - 1/z^2 + 3/z^4
...) summed to the working precision (mpmath's erfc overflows a float there); below, erfc.
Every value is computed at two precisions (that one and 30 digits more) which must agree to
30 significant digits. epsilon(delta) is solved by bisection on delta(eps) to 1e-25
relative and checked on both sides.

Each row carries the truth as a string, and the doubles just below and above it (a
double upper bound U is >= the truth iff U >= `up`; a lower bound L <= the truth iff
L <= `down`). Composition cannot lower delta (one step is a post-processing of T), so
for T > 1 steps the one-step value is a lower bound on the truth: only `up` is checked.

Usage: /usr/bin/python3 tests/ref/make_bound_rounding_reference.py > tests/ref/bound_rounding_values.h
(a few seconds; Debian python3-mpmath 1.2.1)."""
import math
import sys

from mpmath import mp, mpf, erfc, sqrt, log, exp, nstr, log10, pi, workdps


def mills(z):
    """Phibar(z) / phi(z) for z > 0."""
    if z < 10 ** 6:
        return erfc(z / sqrt(2)) / 2 * sqrt(2 * pi) * exp(z * z / 2)
    s, t, k, z2 = mpf(1), mpf(1), 1, z * z
    tol = mpf(10) ** (-mp.dps - 5)
    while abs(t) > tol:
        t = -t * (2 * k - 1) / z2
        s += t
        k += 1
    return s / z


def phibar(z):
    if z > 10:
        return mills(z) * exp(-z * z / 2) / sqrt(2 * pi)
    return erfc(z / sqrt(2)) / 2


def digits(s, eps, q):
    with workdps(30):
        s, eps, q = mpf(s), mpf(eps), mpf(q)
        x = s * s * abs(log((exp(abs(eps)) - 1 + q) / q)) + 1 + s
        return 50 + int(2 * log10(x))


def delta_remove(eps, s, q):
    eps, s, q = mpf(eps), mpf(s), mpf(q)
    if eps <= log(1 - q):
        return 1 - exp(eps)
    x = s * s * log((exp(eps) - 1 + q) / q) + mpf(1) / 2
    return q * phibar((x - 1) / s) + (1 - q) * phibar(x / s) - exp(eps) * phibar(x / s)


def delta_add(eps, s, q):
    eps, s, q = mpf(eps), mpf(s), mpf(q)
    if q == 1 or eps >= -log(1 - q):
        return mpf(0)
    v = (exp(-eps) - 1 + q) / q
    if v <= 0:
        return 1 - exp(eps)
    x = s * s * log(v) + mpf(1) / 2
    return phibar(-x / s) - exp(eps) * ((1 - q) * phibar(-x / s) + q * phibar(-(x - 1) / s))


def delta1(eps, s, q, extra=0):
    """delta(eps) of one step, at the precision its cancellation needs (+ extra digits)."""
    with workdps(digits(s, eps, q) + extra):
        r = max(delta_remove(eps, s, q), delta_add(eps, s, q))
    return +r


def delta1_checked(eps, s, q):
    a, b = delta1(eps, s, q), delta1(eps, s, q, 30)
    assert a > 0 and abs(a - b) <= abs(b) * mpf(10) ** -30, (eps, s, q, a, b)
    return b


def eps1(delta, s, q):
    """epsilon(delta) of one step: delta1(eps) = delta, by bisection."""
    delta = mpf(delta)
    if delta1(0, s, q) <= delta:
        return mpf(0)
    lo, hi = mpf(0), mpf(1)
    while delta1(hi, s, q) > delta:
        lo, hi = hi, 2 * hi
    while hi - lo > mpf(10) ** -25 * hi:
        m = (lo + hi) / 2
        if delta1(m, s, q) > delta:
            lo = m
        else:
            hi = m
    assert delta1(lo, s, q, 30) > delta >= delta1(hi, s, q, 30)
    return (lo + hi) / 2


def below_above(x):
    """The largest double <= x and the smallest double >= x (x >= 0)."""
    f = float(x) if x >= mpf(2) ** -1075 else 0.0
    if mpf(f) > x:
        f = math.nextafter(f, -math.inf)
    down = f
    up = down if mpf(down) == x else math.nextafter(down, math.inf)
    return down, up


# (sigma, q, steps, eps): the query, more huge-noise / tiny-rate / large-eps ones,
# an unsampled one (q = 1), two whose truth is a double (one subnormal), and compositions
DELTA_ROWS = [
    (1000.0, 1e-4, 1, 3.0),
    (1000.0, 1e-4, 1, 0.5),
    (1000.0, 1e-4, 1, 20.0),
    (30.0, 1e-4, 1, 0.5),
    (1000.0, 0.01, 1, 3.0),
    (1e5, 1e-4, 1, 3.0),
    (1e5, 1.0, 1, 3.0),
    (2.0, 1e-3, 1, 100.0),
    (1.0, 0.01, 1, 33.0),
    (1.0, 0.01, 1, 34.0),
    (1000.0, 1e-4, 10, 3.0),
    (30.0, 1e-4, 100, 0.5),
]

# (sigma, q, steps, delta): epsilon is tiny but positive
EPS_ROWS = [
    (1e5, 1.0, 1, 1e-10),
    (1000.0, 1e-4, 1, 1e-10),
    (1e8, 1.0, 1, 1e-300),
]


def cfloat(x):
    return repr(float(x)) if x != 0 else "0.0"


def main():
    mp.dps = 50
    out = ["/* SPDX-License-Identifier: Apache-2.0 */",
           "/* tests/ref/bound_rounding_values.h: generated by tests/ref/make_bound_rounding_reference.py",
           " * (mpmath; see its docstring). One Poisson-subsampled Gaussian step's exact delta(eps),",
           " * add/remove adjacency, and the doubles just below (down) and above (up) it; for steps",
           " * > 1 the one-step value, a lower bound on the truth. Then epsilon(delta) of one step. */",
           "#ifndef BOUND_ROUNDING_VALUES_H", "#define BOUND_ROUNDING_VALUES_H", "",
           "typedef struct {", "    double sigma, q;", "    unsigned long steps;",
           "    double eps, down, up;", "    const char *truth;", "} bound_delta_row;", "",
           "static const bound_delta_row BOUND_DELTA_ROWS[] = {"]
    for s, q, T, e in DELTA_ROWS:
        t = delta1_checked(e, s, q)
        down, up = below_above(t)
        print("delta s=%g q=%g T=%d eps=%g: %s" % (s, q, T, e, nstr(t, 20)), file=sys.stderr)
        out.append('    {%s, %s, %d, %s, %s, %s, "%s"},' % (cfloat(s), cfloat(q), T, cfloat(e),
                                                           cfloat(down), cfloat(up), nstr(t, 20)))
    out += ["};", "", "typedef struct {", "    double sigma, q;", "    unsigned long steps;",
            "    double delta, down, up;", "    const char *truth;", "} bound_eps_row;", "",
            "static const bound_eps_row BOUND_EPS_ROWS[] = {"]
    for s, q, T, d in EPS_ROWS:
        t = eps1(d, s, q)
        down, up = below_above(t)
        print("epsilon s=%g q=%g T=%d delta=%g: %s" % (s, q, T, d, nstr(t, 20)), file=sys.stderr)
        out.append('    {%s, %s, %d, %s, %s, %s, "%s"},' % (cfloat(s), cfloat(q), T, cfloat(d),
                                                           cfloat(down), cfloat(up), nstr(t, 20)))
    out += ["};", "", "#endif"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
