#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent high-precision reference values for dpzo's exact LMO integrator
(noisesearch/lmo_exact.c, tested by tests/test_lmo_exact.c).

Usage (from the repository root):
    /usr/bin/python3 tests/ref/make_lmo_exact_reference.py
        writes tests/ref/lmo_exact_values.h (next to this script);
    /usr/bin/python3 tests/ref/make_lmo_exact_reference.py OUT.h   (or '-' for stdout)

Requires only mpmath (Debian python3-mpmath 1.2.1 was used).  Deterministic; a few
minutes with 2 worker processes.  Diagnostics go to stderr; the script exits
non-zero without writing if a self-check fails.  No dpzo code is used: everything
comes from the defining formulas (spec section 1.2-1.3, 2.2):

  Y = wG G + wE E + wU U,  G ~ Gamma(k, theta), E ~ Exp(rate lam), U ~ U(a, b)
  log M_Y(t) = -k log1p(-wG theta t) - log1p(-wE t/lam) + wU t a
               + log(expm1(wU t w)/(wU t w)),   w = b - a
  p(x) = f_X(x) = M_Y'(-|x|)/2,   q(x) = p(x - C)
  D_alpha = 1/(alpha-1) log Int p^alpha q^(1-alpha) dx

Method.  The integral is split at 0 and C (the kinks of p and q) and at
geometric break points around them (scale min(C, 1/E[Y])/(4 alpha), doubling out
to 1e6/E[Y]), then to -inf / +inf.  The integrand is exp(log g - S), S = the
larger of log g(0) and log g(C), so nothing overflows at alpha = 256.  Every value
is computed twice, with tanh-sinh and with Gauss-Legendre quadrature (mp.quad), at
mp.dps = 40; the two must agree to 1e-30 relative (checked), and the tanh-sinh
value is emitted.

Tables
  DPZO_LMO_EXACT_REF      D_alpha for 5 profiles x C in {1, 2} x 7 orders.
  DPZO_LMO_EXACT_POINTS   log f_X(s) and d(s) = -(d/dx) log f_X(x) at x = s >= 0
                          (d by a central difference of log f_X at 60 digits, step
                          1e-15: independent of the closed form the C code uses),
                          for the point enclosures.
  DPZO_LMO_EXACT_ANCHORS  the spec's section 5.8 "exact -> eps rate" anchors: the
                          per-step epsilon at delta = 1e-10 from the exact RDP at
                          orders 2, 4, ..., 128 with the CKS conversion
                          eps(alpha) = D + log1p(-1/alpha) - log(delta alpha)/(alpha-1),
                          min over the orders; computed here at mp.dps = 25 (both
                          quadratures, agreement 1e-18 checked), with the argmin.
Self-checks: the reverse direction D_alpha(Q||P) (integrand q^alpha p^(1-alpha),
other break points) equals D_alpha(P||Q) to 1e-30 on several cases (symmetry,
spec 2.2); D_alpha is
nondecreasing in alpha and below eps0 = log(E[Y]/E[Y e^{-CY}]); the spec anchors
are reproduced to their 6 printed digits.
"""
import sys
from multiprocessing import Pool

import mpmath as mp

DPS = 40

# (name, (wG, k, theta, wE, lam, wU, a, b)) in dpzo_lmo field order
PROFILES = [
    ("task1_eps0.3", (0.1, 1.0, 0.5, 0.1, 5.0, 0.1, 1.0, 2.0)),
    ("table3_eps5", (0.1, 1.0, 7.5, 0.9, 1.0, 0.7, 6.0, 7.0)),
    ("poly_tails_a0", (0.3, 2.0, 1.5, 0.2, 2.0, 0.5, 0.0, 3.0)),
    ("no_exp_shape_half", (0.5, 0.5, 2.0, 0.0, 1.0, 0.2, 3.0, 5.0)),
    ("gamma_only_heavy", (1.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
]
CS = [1.0, 2.0]
ORDERS = [2.0, 2.5, 3.0, 10.0, 32.0, 128.0, 256.0]
POINT_S = [0.0, 1e-3, 0.3, 1.0, 7.5, 100.0, 1e4]

SPEC_ANCHORS = [
    ("eps0.3", (0.1, 1.0, 0.5, 0.1, 5.0, 0.1, 1.0, 2.0), "0.355002"),
    ("eps0.7", (0.1, 1.0, 0.5, 0.1, 5.0, 0.1, 5.0, 6.0), "0.749379"),
    ("eps2", (0.1, 2.0, 1.0, 0.1, 5.0, 0.2, 7.0, 8.0), "1.843636"),
    ("eps3", (0.1, 2.0, 1.0, 0.1, 5.0, 0.9, 2.0, 3.0), "2.578621"),
    ("eps5", (0.1, 1.0, 7.5, 0.9, 1.0, 0.7, 6.0, 7.0), "5.973958"),
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Lmo:
    def __init__(self, prof):
        wG, k, th, wE, lam, wU, a, b = [mp.mpf(v) for v in prof]
        self.wG, self.k, self.th, self.wE, self.lam, self.wU, self.a = wG, k, th, wE, lam, wU, a
        self.w = b - a

    def logM(self, t):
        r = mp.mpf(0)
        if self.wG > 0:
            r -= self.k * mp.log1p(-self.wG * self.th * t)
        if self.wE > 0:
            r -= mp.log1p(-self.wE * t / self.lam)
        if self.wU > 0:
            z = self.wU * t * self.w
            r += self.wU * t * self.a
            if z != 0:
                r += mp.log(mp.expm1(z) / z)
        return r

    @staticmethod
    def h(u):
        # mean of the tilted Uniform(0,1); the series avoids cancellation at tiny u
        if abs(u) < mp.mpf(10) ** (-(mp.mp.dps // 2)):
            return mp.mpf(1) / 2 + u / 12 - u ** 3 / 720
        return 1 / (-mp.expm1(-u)) - 1 / u

    def dlogM(self, t):
        r = mp.mpf(0)
        if self.wG > 0:
            r += self.wG * self.k * self.th / (1 - self.wG * self.th * t)
        if self.wE > 0:
            r += self.wE / (self.lam - self.wE * t)
        if self.wU > 0:
            r += self.wU * (self.a + self.w * self.h(self.wU * t * self.w))
        return r

    def logp(self, x):
        s = -abs(x)
        return self.logM(s) + mp.log(self.dlogM(s)) - mp.log(2)

    def eps0(self, C):
        return mp.log(self.dlogM(0)) - self.logM(-C) - mp.log(self.dlogM(-C))


def rdp(prof, C, alpha, method="tanh-sinh", reverse=False):
    L = Lmo(prof)
    C = mp.mpf(C)
    a = mp.mpf(alpha)
    if reverse:
        f0 = lambda x: a * L.logp(x - C) - (a - 1) * L.logp(x)
    else:
        f0 = lambda x: a * L.logp(x) - (a - 1) * L.logp(x - C)
    S = max(f0(mp.mpf(0)), f0(C))
    f = lambda x: mp.exp(f0(x) - S)
    EY = L.dlogM(0)
    ell = min(C, 1 / EY) / (4 * a)
    R = 1000 / EY
    if reverse:
        # other break points, so that the reverse integral is not the mirror image of
        # the forward one node by node
        ell *= mp.mpf("0.7")
        R *= mp.mpf("1.3")
    left, right, mid = [mp.mpf(0)], [C], []
    v = ell
    while v < R:
        left.append(-v)
        right.append(C + v)
        if v < C / 2:
            mid += [v, C - v]
        v *= 2
    tot = mp.mpf(0)
    for pts in (left[::-1], [mp.mpf(0)] + sorted(mid) + [C], right):
        tot += mp.quad(f, pts, method=method)
    # the tails beyond |x| ~ R by x = x_end e^u (polynomial tails become exponential in
    # u); the integrand decreases there, like e^{-nu u} with nu >= 1/2 at worst, so
    # stopping where it is below 1e-60 of the total leaves less than 1e-59 of it
    for xe in (left[-1], right[-1]):
        fu = lambda u: f(xe * mp.exp(u)) * abs(xe) * mp.exp(u)
        ub = [mp.mpf(0)]
        u = mp.mpf(1) / 2
        while True:
            ub.append(u)
            if fu(u) < mp.mpf(10) ** -60 * tot or u > 4096:
                break
            u *= 2
        tot += mp.quad(fu, ub, method=method)
    return (S + mp.log(tot)) / (a - 1)


def job_ref(args):
    pi, ci, oi = args
    mp.mp.dps = DPS
    prof = PROFILES[pi][1]
    d1 = rdp(prof, CS[ci], ORDERS[oi])
    d2 = rdp(prof, CS[ci], ORDERS[oi], method="gauss-legendre")
    return args, d1, d2


def job_rev(args):
    pi, ci, alpha = args
    mp.mp.dps = DPS
    prof = PROFILES[pi][1]
    return args, rdp(prof, CS[ci], alpha), rdp(prof, CS[ci], alpha, reverse=True)


def job_anchor(args):
    ai, alpha = args
    mp.mp.dps = 25
    prof = SPEC_ANCHORS[ai][1]
    d1 = rdp(prof, 1.0, alpha)
    d2 = rdp(prof, 1.0, alpha, method="gauss-legendre")
    return args, d1, d2


def point_values(prof, s):
    mp.mp.dps = 60
    L = Lmo(prof)
    s = mp.mpf(s)
    lp = L.logp(s)
    # log f_X(x) = log M_Y'(-x) - log 2 for x >= 0 continues analytically to x < 0, so a
    # central difference also gives the one-sided derivative at s = 0; step 1e-15 at
    # 60 digits: truncation ~ 1e-30 relative, rounding ~ 1e-45 (mp.diff's automatic
    # step was found wrong at x = 0 in mpmath 1.2.1)
    smooth = lambda x: L.logM(-x) + mp.log(L.dlogM(-x)) - mp.log(2)
    h = mp.mpf("1e-15")
    d = -(smooth(s + h) - smooth(s - h)) / (2 * h)
    out = lp, d, L.logM(-s)
    mp.mp.dps = DPS
    return out


def fmt(x):
    return mp.nstr(x, 30)


def dbl(x):
    # the double nearest to x, printed so that it round-trips
    return repr(float(x))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else __file__.rsplit("/", 1)[0] + "/lmo_exact_values.h"
    failures = []
    with Pool(2) as pool:
        log("reference table ...")
        jobs = [(p, c, o) for p in range(len(PROFILES)) for c in range(len(CS))
                for o in range(len(ORDERS))]
        ref = {}
        maxrel = mp.mpf(0)
        for (args, d1, d2) in pool.imap(job_ref, jobs):
            rel = abs(d1 - d2) / abs(d1)
            maxrel = max(maxrel, rel)
            if rel > mp.mpf("1e-30"):
                failures.append("quadratures disagree at %s: %s vs %s" % (args, d1, d2))
            ref[args] = d1
            log("  %s C=%g alpha=%g: %s (tanh-sinh vs GL rel %s)" % (
                PROFILES[args[0]][0], CS[args[1]], ORDERS[args[2]], mp.nstr(d1, 25),
                mp.nstr(rel, 3)))
        log("symmetry ...")
        revjobs = [(0, 0, 2.0), (1, 1, 32.0), (2, 0, 2.5), (4, 0, 10.0)]
        maxsym = mp.mpf(0)
        for (args, d, r) in pool.imap(job_rev, revjobs):
            rel = abs(d - r) / abs(d)
            maxsym = max(maxsym, rel)
            if rel > mp.mpf("1e-30"):
                failures.append("symmetry fails at %s: %s vs %s" % (args, d, r))
        log("  max rel |D(P||Q) - D(Q||P)| = %s" % mp.nstr(maxsym, 3))
        log("spec anchors ...")
        ajobs = [(ai, float(al)) for ai in range(len(SPEC_ANCHORS)) for al in range(2, 129, 2)]
        acurves = {}
        maxa = mp.mpf(0)
        for (args, d1, d2) in pool.imap(job_anchor, ajobs):
            rel = abs(d1 - d2) / abs(d1)
            maxa = max(maxa, rel)
            if rel > mp.mpf("1e-18"):
                failures.append("anchor quadratures disagree at %s" % (args,))
            acurves.setdefault(args[0], {})[args[1]] = d1
    mp.mp.dps = DPS
    # monotonicity and eps0 checks on the reference table
    for p in range(len(PROFILES)):
        for c in range(len(CS)):
            L = Lmo(PROFILES[p][1])
            e0 = L.eps0(mp.mpf(CS[c]))
            vals = [ref[(p, c, o)] for o in range(len(ORDERS))]
            for i in range(1, len(vals)):
                if not vals[i] >= vals[i - 1]:
                    failures.append("not monotone: %s C=%g" % (PROFILES[p][0], CS[c]))
            if not vals[-1] < e0:
                failures.append("above eps0: %s C=%g" % (PROFILES[p][0], CS[c]))
    anchors = []
    mp.mp.dps = 25
    delta = mp.mpf("1e-10")
    for ai, (name, prof, spec) in enumerate(SPEC_ANCHORS):
        best, barg = None, None
        for al, d in sorted(acurves[ai].items()):
            a = mp.mpf(al)
            e = d + mp.log1p(-1 / a) - mp.log(delta * a) / (a - 1)
            if best is None or e < best:
                best, barg = e, al
        ok = mp.nstr(best, 6) == spec or abs(best - mp.mpf(spec)) <= mp.mpf("5e-7")
        log("  %s: eps = %s at alpha %g (spec %s)%s" % (name, mp.nstr(best, 15), barg, spec,
                                                        "" if ok else "  MISMATCH"))
        if not ok:
            failures.append("spec anchor %s: %s vs %s" % (name, best, spec))
        anchors.append((name, prof, spec, best, barg, acurves[ai][128.0]))
    mp.mp.dps = DPS
    log("point values ...")
    points = []
    for p in range(len(PROFILES)):
        for s in POINT_S:
            lp, d, lm = point_values(PROFILES[p][1], s)
            points.append((p, s, lp, d, lm))
    if failures:
        for f in failures:
            log("FAIL: " + f)
        sys.exit(1)

    lines = []
    w = lines.append
    w("/* Generated file - do not edit.")
    w(" *")
    w(" * Regenerate (from the repository root):")
    w(" *     /usr/bin/python3 tests/ref/make_lmo_exact_reference.py")
    w(" * (see its docstring for the formulas and methods). mpmath %s, dps %d." % (
        mp.__version__, DPS))
    w(" * Self-checks passed: tanh-sinh vs Gauss-Legendre max rel diff %s;" % mp.nstr(maxrel, 3))
    w(" * D(P||Q) vs D(Q||P) max rel diff %s; anchors (dps 25) quadratures %s;" % (
        mp.nstr(maxsym, 3), mp.nstr(maxa, 3)))
    w(" * D nondecreasing in alpha and below eps0 on every row.")
    w(" * Inputs are the doubles written here; values are the doubles nearest to")
    w(" * the 40-digit results (the comments carry 30 digits). */")
    w("#ifndef DPZO_LMO_EXACT_VALUES_H")
    w("#define DPZO_LMO_EXACT_VALUES_H")
    w("")
    w("/* dpzo_lmo field order: wG, k, theta, wE, lam, wU, a, b */")
    w("static const double DPZO_LMO_EXACT_PROFILES[%d][8] = {" % len(PROFILES))
    for name, prof in PROFILES:
        w("    {%s}, /* %s */" % (", ".join(repr(v) for v in prof), name))
    w("};")
    w("")
    w("typedef struct {")
    w("    int profile;")
    w("    double c, alpha, rdp;")
    w("} dpzo_lmo_exact_ref;")
    w("")
    w("static const dpzo_lmo_exact_ref DPZO_LMO_EXACT_REF[] = {")
    for p in range(len(PROFILES)):
        for c in range(len(CS)):
            for o in range(len(ORDERS)):
                v = ref[(p, c, o)]
                w("    {%d, %s, %s, %s}, /* %s */" % (p, repr(CS[c]), repr(ORDERS[o]), dbl(v),
                                                   fmt(v)))
    w("};")
    w("")
    w("typedef struct {")
    w("    int profile;")
    w("    double s, log_pdf, dlog, log_mgf; /* log f_X(s), d(s), log M_Y(-s) */")
    w("} dpzo_lmo_exact_point_ref;")
    w("")
    w("static const dpzo_lmo_exact_point_ref DPZO_LMO_EXACT_POINTS[] = {")
    for (p, s, lp, d, lm) in points:
        w("    {%d, %s, %s, %s, %s}," % (p, repr(s), dbl(lp), dbl(d), dbl(lm)))
    w("};")
    w("")
    w("typedef struct {")
    w("    const char *name;")
    w("    double prof[8];")
    w("    double spec_eps;   /* the spec's 6-digit value */")
    w("    double eps;        /* this script's value (mpmath, dps 25) */")
    w("    double argmin;     /* its order */")
    w("    double rdp128;     /* D_128 at C = 1 */")
    w("} dpzo_lmo_exact_anchor;")
    w("")
    w("static const dpzo_lmo_exact_anchor DPZO_LMO_EXACT_ANCHORS[] = {")
    for (name, prof, spec, best, barg, d128) in anchors:
        w("    {\"%s\", {%s}, %s, %s, %s, %s}, /* eps %s */" % (
            name, ", ".join(repr(v) for v in prof), spec, dbl(best), repr(barg), dbl(d128),
            mp.nstr(best, 20)))
    w("};")
    w("")
    w("#endif")
    text = "\n".join(lines) + "\n"
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w") as fh:
            fh.write(text)
        log("wrote " + out)


if __name__ == "__main__":
    main()
