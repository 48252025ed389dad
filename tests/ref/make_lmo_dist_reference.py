#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent high-precision reference values for the LMO noise distribution
(noisesearch/lmo_mgf.c, lmo_stats.c) used by tests/test_lmo_dist.c.

Usage (from the repository root):
    /usr/bin/python3 tests/ref/make_lmo_dist_reference.py
        writes tests/ref/lmo_dist_values.h (next to this script);
    /usr/bin/python3 tests/ref/make_lmo_dist_reference.py OUT.h   ('-' for stdout)

Requires only mpmath (Debian python3-mpmath 1.2.1).  Deterministic, well under a
minute.  Diagnostics go to stderr; the script exits non-zero without writing if a
self-check fails.  No dpzo code is used.

The law (spec lmo-dp.md section 1):  X | Y ~ Laplace(0, 1/Y),
    Y = wG G + wE E + wU U,  G ~ Gamma(k, theta), E ~ Exp(rate lam), U ~ U(a, b).
Everything below is derived from the defining formulas, at mp.dps = 50 (M_U at 80):
    M_Y(t)  = (1 - wG theta t)^-k * lam/(lam - wE t) * M_U(wU t),
    M_U(s)  = (e^{s b} - e^{s a}) / (s (b - a))        (plain, not the log form of C)
    f_X(x)  = M_Y'(-|x|)/2, with M_Y' from the product rule on the plain factors,
    P(X <= x) = M_Y(x)/2 (x < 0),  1 - M_Y(-x)/2 (x >= 0),
    E|X| = E[1/Y] = int_0^inf M_Y(-s) ds,  Var X = 2 E[1/Y^2] = 2 int_0^inf s M_Y(-s) ds,
    eps0(C) = log(E[Y] / E[Y e^{-C Y}]) = log(M_Y'(0) / M_Y'(-C)),
    eps0_vector(C) = C E[Y^2] / E[Y], E[Y^2] expanded over the components' raw moments
        (E G^2 = k(k+1) theta^2, E E^2 = 2/lam^2, E U^2 = (a^2 + ab + b^2)/3).
Self-checks:
  * each quadrature is done twice (tanh-sinh and Gauss-Legendre, different break
    points) and must agree to 1e-25 relative;
  * int f_X = 1 and P(X <= x) = int_{-inf}^x f_X for each profile (to 1e-25);
  * M_Y'(t) by the product rule equals mp.diff of M_Y (to 1e-25);
  * Gamma-only profiles: E[1/Y] = 1/(wG theta (k-1)), E[1/Y^2] = 1/((wG theta)^2 (k-1)(k-2));
  * Exp + U(0, b) profile: E[1/Y] also as int_0^1 E_E[1/(wE E + wU (a + (b-a) v))] dv
    with the inner expectation in closed form, (lam/wE) e^z E1(z), z = lam c / wE.
Inputs are Python floats (exact doubles); references are computed at those doubles.
"""
import sys
from mpmath import mp, mpf, quad, log, exp, expm1, e1, inf, diff

mp.dps = 50

# (name, wG, wE, wU, theta, k, lam, a, b) -- the spec table's parameter order
PROFILES = [
    ("task1_eps03", 0.1, 0.1, 0.1, 0.5, 1.0, 5.0, 1.0, 2.0),
    ("eps5", 0.1, 0.9, 0.7, 7.5, 1.0, 1.0, 6.0, 7.0),
    ("all_ua0", 0.3, 0.2, 0.5, 2.0, 1.5, 3.0, 0.0, 2.0),      # ymin = 0, nu = 3.5
    ("gamma_only", 0.4, 0.0, 0.0, 0.7, 3.5, 1.0, 0.0, 1.0),   # nu = 3.5
    ("exp_unif0", 0.0, 0.5, 0.8, 1.0, 1.0, 2.0, 0.0, 1.0),    # nu = 2: Var X = inf
    ("unif_only", 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 5.0),    # ymin = 2
    ("heavy_var", 0.6, 0.3, 0.4, 1.5, 0.05, 2.0, 0.0, 3.0),   # nu = 2.05: Var X heavy tail
]

# the spec section 5.8 profiles, for eps0 at C = 1 (names as in the spec)
SPEC_EPS0 = [
    ("eps03", 0.1, 0.1, 0.1, 0.5, 1.0, 5.0, 1.0, 2.0),
    ("eps07", 0.1, 0.1, 0.1, 0.5, 1.0, 5.0, 5.0, 6.0),
    ("eps2", 0.1, 0.1, 0.2, 1.0, 2.0, 5.0, 7.0, 8.0),
    ("eps3", 0.1, 0.1, 0.9, 1.0, 2.0, 5.0, 2.0, 3.0),
    ("eps5", 0.1, 0.9, 0.7, 7.5, 1.0, 1.0, 6.0, 7.0),
    ("ou03", 0.1, 0.9, 0.1, 7.5, 1.0, 1.0, 1.0, 2.0),
    ("ou07", 0.1, 0.9, 0.1, 7.5, 1.0, 1.0, 5.0, 6.0),
    ("ou2", 0.1, 0.9, 0.2, 7.5, 1.0, 1.0, 8.0, 9.0),
    ("ou3", 0.3, 0.1, 0.3, 3.0, 2.0, 5.0, 8.0, 9.0),
]

XS = [0.0, 1e-9, 1.0, -3.7, 50.0, -1e4]
CS = [1.0, 2.5]
GAMMA_USEF = 0.9

failed = False


def check(ok, what):
    global failed
    if not ok:
        failed = True
        print("SELF-CHECK FAILED:", what, file=sys.stderr)


def xexp(x):
    """exp(x), but 0 below -1e5 (e^-1e5 < 1e-43000 is far below every quantity here;
    mpmath would spend minutes on e^(-1e100) in the far tails of the quadratures)."""
    return mpf(0) if x < -100000 else exp(x)


class P:
    def __init__(self, t):
        self.name = t[0]
        self.wG, self.wE, self.wU, self.theta, self.k, self.lam, self.a, self.b = map(mpf, t[1:])

    def factors(self, t):
        """[(value, derivative)] of each present factor of M_Y at t (plain forms)."""
        out = []
        if self.wG > 0:
            c = self.wG * self.theta
            v = (1 - c * t) ** (-self.k)
            out.append((v, self.k * c * (1 - c * t) ** (-self.k - 1)))
        if self.wE > 0:
            v = self.lam / (self.lam - self.wE * t)
            out.append((v, self.lam * self.wE / (self.lam - self.wE * t) ** 2))
        if self.wU > 0:
            out.append(self.unif(self.wU * t))
        return out

    def unif(self, s):
        """(M_U(s), wU M_U'(s)): the plain quotient at 30 extra digits (it cancels
        like 1/(s w)^2), or its Taylor series sum s^n E[U^n]/n! for |s| b < 1e-6."""
        a, b = self.a, self.b
        w = b - a
        if abs(s) * max(b, 1) < mpf(10) ** -6:
            m = [(b ** (n + 1) - a ** (n + 1)) / ((n + 1) * w) for n in range(16)]
            v = sum(s ** n * m[n] / mp.factorial(n) for n in range(16))
            dv = sum(s ** (n - 1) * m[n] / mp.factorial(n - 1) for n in range(1, 16))
            return (v, self.wU * dv)
        with mp.workdps(mp.dps + 30):
            eb, ea = xexp(s * b), xexp(s * a)
            num = eb - ea
            v = num / (s * w)
            dnum = b * eb - a * ea
            dv = (dnum * s - num) / (s * s * w)  # d/ds
            return (+v, +(self.wU * dv))

    def M(self, t):
        r = mpf(1)
        for v, _ in self.factors(t):
            r *= v
        return r

    def dM(self, t):
        f = self.factors(t)
        tot = mpf(0)
        for i in range(len(f)):
            term = f[i][1]
            for j in range(len(f)):
                if j != i:
                    term *= f[j][0]
            tot += term
        return tot

    def pdf(self, x):
        return self.dM(-abs(mpf(x))) / 2

    def cdf(self, x):
        x = mpf(x)
        return self.M(x) / 2 if x < 0 else 1 - self.M(-x) / 2

    def nu(self):
        n = mpf(0)
        if self.wG > 0:
            n += self.k
        if self.wE > 0:
            n += 1
        if self.wU > 0 and self.a == 0:
            n += 1
        return n

    def ymin(self):
        return self.wU * self.a if self.wU > 0 else mpf(0)

    def mean_y(self):
        r = mpf(0)
        if self.wG > 0:
            r += self.wG * self.k * self.theta
        if self.wE > 0:
            r += self.wE / self.lam
        if self.wU > 0:
            r += self.wU * (self.a + self.b) / 2
        return r

    def second_moment_y(self):
        m1, m2 = [], []
        if self.wG > 0:
            m1.append(self.wG * self.k * self.theta)
            m2.append(self.wG ** 2 * self.k * (self.k + 1) * self.theta ** 2)
        if self.wE > 0:
            m1.append(self.wE / self.lam)
            m2.append(self.wE ** 2 * 2 / self.lam ** 2)
        if self.wU > 0:
            m1.append(self.wU * (self.a + self.b) / 2)
            m2.append(self.wU ** 2 * (self.a ** 2 + self.a * self.b + self.b ** 2) / 3)
        r = sum(m2)
        for i in range(len(m1)):
            for j in range(i + 1, len(m1)):
                r += 2 * m1[i] * m1[j]
        return r


def moment(p, power):
    """int_0^inf s^(power-1) M_Y(-s) ds, two ways; None where infinite."""
    nu = p.nu()
    if p.ymin() == 0 and nu <= power:
        return None
    f = lambda s: s ** (power - 1) * p.M(-s)
    if p.ymin() > 0:
        pts1 = [0, 0.5, 2, 8, 32, 128, inf]
        pts2 = [0, 1, 4, 16, 64, inf]
        v1 = quad(f, pts1)
        v2 = quad(f, pts2, method="gauss-legendre")
    else:
        # polynomial tail: beyond s1, w = (s/s1)^-q maps [s1, inf) onto (0, 1] with a
        # bounded integrand (s^nu M(-s) s1^-q / q), q = nu - power
        q = nu - power
        s1 = mpf(64)

        def g(w):
            if w == 0:
                return lim(p) * s1 ** (-q) / q
            s = s1 * w ** (-1 / q)
            return s ** nu * p.M(-s) * s1 ** (-q) / q

        v1 = quad(f, [0, 0.5, 2, 8, 32, s1]) + quad(g, [0, mpf(10) ** -12, mpf(10) ** -6, 1])
        # second way: plain tanh-sinh on the infinite range, in log variable
        h = lambda u: exp(power * u) * p.M(-exp(u))
        v2 = quad(h, [-inf, -4, 0, 2, 4, 8, 16, 64, 256, 1024, 4096, inf])
    check(abs(v1 - v2) <= mpf(10) ** -25 * abs(v1),
          "%s moment %d: %s vs %s" % (p.name, power, mp.nstr(v1, 40), mp.nstr(v2, 40)))
    return v1


def lim(p):
    """lim_{s->inf} s^nu M_Y(-s) for ymin = 0."""
    r = mpf(1)
    if p.wG > 0:
        r *= (p.wG * p.theta) ** (-p.k)
    if p.wE > 0:
        r *= p.lam / p.wE
    if p.wU > 0:
        r *= 1 / (p.wU * p.b)
    return r


def eps0(p, C):
    C = mpf(C)
    return log(p.dM(0) / p.dM(-C))


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else __file__.rsplit("/", 1)[0] + "/lmo_dist_values.h"
    lines = []
    emit = lines.append
    emit("/* tests/ref/lmo_dist_values.h: GENERATED by tests/ref/make_lmo_dist_reference.py")
    emit(" * (mpmath, mp.dps = 50). Do not edit. See the script docstring for the formulas")
    emit(" * and self-checks. Infinite moments are written as INFINITY. */")
    emit("#ifndef DPZO_LMO_DIST_VALUES_H")
    emit("#define DPZO_LMO_DIST_VALUES_H")
    emit("#include <math.h>")
    emit("")
    emit("typedef struct {")
    emit("    const char *name;")
    emit("    double wG, wE, wU, theta, k, lam, a, b; /* the spec table's order */")
    emit("    double log_pdf[%d];  /* at DPZO_LMO_REF_XS */" % len(XS))
    emit("    double cdf[%d], sf[%d];" % (len(XS), len(XS)))
    emit("    double mean_y, mean_abs, variance, usefulness; /* usefulness at gamma 0.9 */")
    emit("    double eps0[%d];  /* at DPZO_LMO_REF_CS, nearest double */" % len(CS))
    emit("    const char *eps0_str[%d];  /* the same, 45 significant digits */" % len(CS))
    emit("    double eps0_vector[%d];" % len(CS))
    emit("} dpzo_lmo_ref_profile;")
    emit("")
    emit("static const double DPZO_LMO_REF_XS[%d] = {%s};" % (len(XS), ", ".join(repr(x) for x in XS)))
    emit("static const double DPZO_LMO_REF_CS[%d] = {%s};" % (len(CS), ", ".join(repr(c) for c in CS)))
    emit("")
    emit("static const dpzo_lmo_ref_profile DPZO_LMO_REF[] = {")
    for t in PROFILES:
        p = P(t)
        print("profile", p.name, file=sys.stderr)
        # density and cdf
        lp = [log(p.pdf(x)) for x in XS]
        cd = [p.cdf(x) for x in XS]
        sf = [p.cdf(-mpf(x)) for x in XS]  # P(X > x) = P(X < -x) by symmetry
        # self-checks: normalisation, cdf = int pdf, derivative
        tot = 2 * quad(lambda x: p.pdf(x), [0, 0.25, 1, 4, 16, 64, 256, inf])
        check(abs(tot - 1) < mpf(10) ** -25, "%s: int f = %s" % (p.name, tot))
        cx = quad(lambda x: p.pdf(x), [-inf, -64, -16, -4, -1, mpf(-3.7)])
        check(abs(cx - p.cdf(-3.7)) < mpf(10) ** -25 * p.cdf(-3.7), "%s: cdf(-3.7)" % p.name)
        for tt in [mpf(-2.5), mpf(-0.3)]:
            d = diff(p.M, tt)
            check(abs(d - p.dM(tt)) < mpf(10) ** -25 * abs(d), "%s: dM at %s" % (p.name, tt))
        ma = moment(p, 1)
        m2 = moment(p, 2)
        var = None if m2 is None else 2 * m2
        # closed forms
        if p.wE == 0 and p.wU == 0:
            c = p.wG * p.theta
            if ma is not None:
                check(abs(ma - 1 / (c * (p.k - 1))) < mpf(10) ** -30 * ma, "gamma E[1/Y]")
            if m2 is not None:
                check(abs(m2 - 1 / (c * c * (p.k - 1) * (p.k - 2))) < mpf(10) ** -30 * m2,
                      "gamma E[1/Y^2]")
        if p.wG == 0 and p.wE > 0 and p.wU > 0:
            def inner(v):
                cc = p.wU * (p.a + (p.b - p.a) * v)
                z = p.lam * cc / p.wE
                return p.lam / p.wE * exp(z) * e1(z)
            alt = quad(inner, [0, mpf(10) ** -10, mpf(10) ** -4, 0.1, 1])
            check(abs(alt - ma) < mpf(10) ** -28 * ma, "%s: E[1/Y] via E1: %s vs %s" % (p.name, alt, ma))
        usef = -expm1(log(p.M(-mpf(GAMMA_USEF))))
        e0 = [eps0(p, C) for C in CS]
        ev = [mpf(C) * p.second_moment_y() / p.mean_y() for C in CS]
        my = p.mean_y()
        check(abs(p.dM(0) - my) < mpf(10) ** -40 * my, "%s: M'(0) = E[Y]" % p.name)

        def d(x):
            return "INFINITY" if x is None else repr(float(x))

        emit("    {\"%s\", %s," % (p.name, ", ".join(repr(float(v)) for v in t[1:])))
        emit("     {%s}," % ", ".join(d(v) for v in lp))
        emit("     {%s}," % ", ".join(d(v) for v in cd))
        emit("     {%s}," % ", ".join(d(v) for v in sf))
        emit("     %s, %s, %s, %s," % (d(my), d(ma), d(var), d(usef)))
        emit("     {%s}," % ", ".join(d(v) for v in e0))
        emit("     {%s}," % ", ".join('"%s"' % mp.nstr(v, 45) for v in e0))
        emit("     {%s}}," % ", ".join(d(v) for v in ev))
    emit("};")
    emit("#define DPZO_LMO_REF_N (sizeof DPZO_LMO_REF / sizeof DPZO_LMO_REF[0])")
    emit("")
    emit("/* eps0 at C = 1 of the spec section 5.8 profiles (rate convention), 45 digits. */")
    emit("typedef struct {")
    emit("    const char *name;")
    emit("    double wG, wE, wU, theta, k, lam, a, b;")
    emit("    const char *eps0_str;")
    emit("} dpzo_lmo_ref_eps0;")
    emit("static const dpzo_lmo_ref_eps0 DPZO_LMO_REF_EPS0[] = {")
    for t in SPEC_EPS0:
        p = P(t)
        emit("    {\"%s\", %s, \"%s\"}," % (p.name, ", ".join(repr(float(v)) for v in t[1:]),
                                          mp.nstr(eps0(p, 1), 45)))
    emit("};")
    emit("#define DPZO_LMO_REF_EPS0_N (sizeof DPZO_LMO_REF_EPS0 / sizeof DPZO_LMO_REF_EPS0[0])")
    emit("")
    emit("#endif")
    if failed:
        print("not writing: self-checks failed", file=sys.stderr)
        sys.exit(1)
    text = "\n".join(lines) + "\n"
    if out_path == "-":
        sys.stdout.write(text)
    else:
        with open(out_path, "w") as f:
            f.write(text)
        print("wrote", out_path, file=sys.stderr)


if __name__ == "__main__":
    main()
