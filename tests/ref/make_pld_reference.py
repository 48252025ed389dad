#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent high-precision reference values for dpzo's PLD accountant.

Usage (from the repository root):
    /usr/bin/python3 tests/ref/make_pld_reference.py
        writes tests/ref/pld_reference_values.h (next to this script);
    /usr/bin/python3 tests/ref/make_pld_reference.py OUT.h   (or '-' for stdout)

Requires only mpmath (Debian python3-mpmath 1.2.1 was used).  Deterministic;
about 5-10 minutes with 2 worker processes.  Diagnostics go to stderr, and the
script aborts (non-zero exit, nothing written) if any self-check fails.
No accountant code is used: everything below is derived from the defining
formulas.

Conventions
  Gaussian mechanism with sensitivity 1 and noise N(0, s^2).
  Hockey-stick divergence  delta_{P||Q}(eps) = sup_E P(E) - e^eps Q(E)
                                             = E_P[(1 - e^{eps - L})_+],
  L = log(dP/dQ) the privacy loss.
  Poisson subsampling with rate q:
    remove:  P = (1-q) N(0,s^2) + q N(1,s^2),   Q = N(0,s^2)
    add:     P = N(0,s^2),   Q = (1-q) N(0,s^2) + q N(1,s^2)
  Laplace (scale b, L1 sensitivity 1) likewise with Lap(0,b), Lap(1,b).
  All inputs are Python floats (IEEE doubles) and every reference value is
  computed at exactly that double (mpf(float) is exact), so a C test that
  passes the same literal sees the same input.

Tables (see the header comments for the fields)
  1a DPZO_PLD_REF_GDP_EPS    T-fold Gaussian (q = 1) == mu-GDP, mu = sqrt(T)/s:
                             eps(delta) by bracketed root finding.
  1b DPZO_PLD_REF_GDP_DELTA  same, delta(eps) and log(delta(eps)).
  2  DPZO_PLD_REF_SGM1       one Poisson-subsampled Gaussian step, exact.
  3  DPZO_PLD_REF_LAPLACE    one (optionally Poisson-subsampled) Laplace step.
  4  DPZO_PLD_REF_SGM_COMP   T = 2, 3 compositions of the subsampled Gaussian.
  5a DPZO_PLD_REF_WOR_SYM1   sampling w/o replacement (replace-one), symmetric
                             PLD construction below, one step.
  5b DPZO_PLD_REF_WOR_SYM2   same, two steps.

Method notes
  (1) mu-GDP: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
      evaluated at mp.dps = 60 and again at dps 100 (cancellation check).
      d delta/d eps = -e^eps Phi(-eps/mu - mu/2) < 0, so delta is strictly
      decreasing; this is also checked on a 64-point grid.  eps(delta): root of
      log delta(eps) - log(delta_target): bracket by doubling from eps = 0,
      60 bisection steps, then mpmath findroot(solver='anderson') inside the
      bracket; the root is accepted only if it lies in the bracket and the
      function changes sign across root*(1 -+ 1e-30).
  (2) Remove: L(x) = log(1 - q + q exp((2x-1)/(2 s^2))) is increasing with
      range (log(1-q), inf).  For eps <= log(1-q): delta = 1 - e^eps.  Else
      x* = 1/2 + s^2 log((e^eps - 1 + q)/q) and
          delta = P(X > x*) - e^eps Q(X > x*)
                = q Phi((1-x*)/s) - (e^eps - 1 + q) Phi(-x*/s).
      Add: L(x) = -log(1 - q + q exp((2x-1)/(2 s^2))) is decreasing with range
      (-inf, -log(1-q)).  For eps >= -log(1-q): delta = 0.  Else
      x* = 1/2 + s^2 log((e^-eps - 1 + q)/q) and
          delta = P(X < x*) - e^eps Q(X < x*)
                = e^eps [ (e^-eps - 1 + q) Phi(x*/s) - q Phi((x*-1)/s) ].
      Checks: (a) direct tanh-sinh quadrature of (p - e^eps q)_+ split at x*;
      (b) the duality delta_add(eps) = 1 - e^eps + e^eps delta_remove(-eps);
      (c) dps 50 vs dps 90; (d) published dp_accounting values.
  (3) Laplace: l0(x) = (|x| - |x-1|)/b in [-1/b, 1/b] (atoms of the loss at
      x <= 0 and x >= 1).  Remove: L = log(1-q+q e^{l0}); region {L > eps} is
      (x*, inf) with x* = (b t + 1)/2, t = log((e^eps - 1 + q)/q) (or all of R
      for eps < L_min, or empty for eps >= L_max).  Add: L = -log(1-q+q e^{l0});
      region (-inf, x*), t = log((e^-eps - 1 + q)/q).  delta = P(region) -
      e^eps Q(region) with Laplace CDFs in closed form.  Checked by direct
      quadrature of (p - e^eps q)_+ with breakpoints 0, x*, 1.
  (4) Composition (each direction composed with itself), T = 2, 3.
      delta_T(e) = int over {L(x1)+...+L(xT) > e} of (prod p - e^e prod q).
      Method A (emitted): order the coordinates by their minimum x1:
        delta_T(e) = T int p(x1) I_{T-1}(x1, e - L(x1)) dx1, where
        I_k(a, w) = restricted hockey-stick over [a, inf)^k, recursively the
        same way, and I_1(a, w) is closed form (threshold x*(w) clipped at a).
        With L(m) = w/k: remove (L increasing) - for x >= m the whole quadrant
        is inside the region and that part integrates in closed form to
        P(X>m)^k - e^w Q(X>m)^k; add (L decreasing) - it is empty.  The rest,
        over [a, m], has an analytic integrand (this ordering keeps every
        one-step threshold finite; ordering the other way produces end points
        where the integrand is C-infinity but not analytic, e.g.
        exp(-c log^2 dist), which ruins Gauss-Legendre convergence), done with
        composite n-point Gauss-Legendre on panels of width h*min(s, s^2) over
        [A, m], A = min(-K s, m - K s); the part below A is bounded by
        k P(a<X<A) sup delta_{k-1} (monotonicity) and required < 1e-22 of the
        result.  T = 2: n=20, h=1, dps 50; T = 3: n=18, h=1.5, dps 50.
      Method A2: same formula, other rule/panels/offset/precision
        (T=2: n=26, h=0.7, dps 40; T=3: n=14, h=1.7, dps 30).
      Method B (different decomposition): condition on the first coordinate,
        delta_T(e) = E_{x~P}[delta_{T-1}(e - L(x))], delta_{T-1} from method A
        with its own GL configuration, outer integral by mpmath tanh-sinh
        (normalised), which copes with the smooth non-analytic end point x_e
        (remove: L(x_e) = e - (T-1) log(1-q), beyond which
        delta_{T-1}(e - L) = 1 - e^{e-L} exactly -> closed form
        P(X>=x_e) - e^e Q(X>=x_e); add: zero beyond x_e).  T=2 at dps 50,
        T=3 at dps 30.
      Method C (T = 2, remove, eps = 1): the literal 2-D integral of
        (p(x)p(y) - e^eps q(x)q(y)) over the region, inner integrals numeric
        (no hockey-stick closed form), dps 30.
      Also: method A run with q = 1 reproduces the mu-GDP closed form
      (mu = sqrt(T)/s), delta_1 <= delta_2 <= delta_3 (post-processing), and
      dp_accounting's PLDAccountant value for Poisson(0.2) x Gaussian(0.5),
      3 steps, eps = 1 (0.15594 +- 1e-3).
  (5) Sampling without replacement, replace-one adjacency (our construction).
      Per step, g = batch/n, pair A = ((1-g) N(0,s^2) + g N(1,s^2), N(0,s^2))
      (the Poisson remove pair with q = g), omega_A its PLD (law of L_A under
      P_A).  The symmetric PLD omega_sym is:
        omega_sym = omega_A on losses l > 0;
        omega_sym(-l) = e^{-l} omega_A(l) for l > 0 (mirror);
        an atom at 0 of mass a = 1 - P_A(L_A > 0) - Q_A(L_A > 0).
      (L_A > 0 <=> x > 1/2.)  It is a valid PLD (total mass 1 and
      E[e^{-L}] = 1), and is realised by the pair (Ps, Qs) on
      {+} x (1/2,inf)  u  {-} x (1/2,inf)  u  {0}:
        Ps = p_A on +, q_A on -, a at 0;   Qs = q_A on +, p_A on -, a at 0.
      Then delta_sym(eps) = delta_A(eps) for eps >= 0 and
           delta_sym(eps) = 1 - e^eps (1 - delta_A(-eps)) for eps < 0.
      Two steps: delta_2(eps) = E_{L1~omega_sym}[ delta_sym(eps - L1) ]
        = int_{x>1/2} p_A(x) delta_sym(eps - L_A(x)) dx + a delta_sym(eps)
          + int_{x>1/2} q_A(x) delta_sym(eps + L_A(x)) dx
      (the mirrored half written as an expectation under Q_A since
      e^{-L_A} p_A = q_A).  Verified against the brute-force 2-D quadrature of
      (Ps(w1)Ps(w2) - e^eps Qs(w1)Qs(w2))_+ over the realising space (all 9
      component pairs, inner integral numeric), and the one-step formula for
      eps < 0 against direct quadrature over the realising pair.
"""

import math
import multiprocessing
import os
import sys
import time

import mpmath
from mpmath import mp, mpf

DPS = 50
mp.dps = DPS

REMOVE, ADD = 0, 1
DIRNAME = {REMOVE: 'remove', ADD: 'add'}

GDP_PAIRS = [(1.0, 1.0), (2.0, 10.0), (4.530877117, 1.0), (10.0, 100.0),
             (0.5, 3.0), (1.1, 1000.0), (100.0, 10000.0), (3.0, 1e6)]
GDP_DELTAS = [1e-5, 1e-10, 1e-15, 1e-20, 1e-30]
GDP_EPSS = [0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]

SGM1_PAIRS = [(1.0, 0.2), (1.0, 0.8), (0.5, 0.01), (2.0, 0.3), (1.0, 0.01),
              (0.8, 0.05)]
SGM1_EPSS = [-0.3, 0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0]

LAP_BS = [0.5, 1.0, 2.0]
LAP_QS = [1.0, 0.2]
LAP_EPSS = [0.0, 0.5, 1.0, 1.5]

COMP_PAIRS = [(1.0, 0.2), (0.5, 0.2), (2.0, 0.01)]
COMP_EPSS = [0.5, 1.0, 2.0]
COMP_TS = [2, 3]

WOR1_PAIRS = [(1.0, 0.01), (0.8, 0.1)]
WOR1_EPSS = [-0.5, 0.0, 0.5, 1.0, 2.0]
WOR2 = [(1.0, 0.1, 2, 1.0)]

# Composition quadrature configurations: (n GL nodes per panel, panel width
# factor h (panel = h*min(s, s^2)), panel offset fraction, K, dps)
CFG = {
    ('A', 2): (20, 1.0, 0.0, 12, 50),    # emitted values, T = 2
    ('A', 3): (18, 1.5, 0.0, 12, 50),    # emitted values, T = 3
    ('A2', 2): (26, 0.7, 0.37, 13, 40),  # same formula, other rule/panels/dps
    ('A2', 3): (14, 1.7, 0.37, 11, 30),
    ('B', 2): (20, 0.8, 0.23, 12, 50),   # inner config of method B
    ('B', 3): (14, 1.5, 0.29, 11, 30),
}
COMP_C_EPSS = [1.0]                  # brute-force T=2 check (slow)
COMP_B3 = 'all'
B_OUTER_PTS = (mpf('0.5'), 3)    # outer breakpoints x_e - j*s (method B)                      # T=3 rows also done by method B
TOL_A2 = {2: mpf('1e-30'), 3: mpf('1e-15')}
TOL_B = {2: mpf('1e-30'), 3: mpf('1e-15')}

TOL_CLOSED = mpf('1e-40')    # closed forms: dps 50 vs 90, duality
TOL_QUAD1 = mpf('1e-30')     # one-step closed form vs direct quadrature
TOL_T2C = mpf('1e-18')       # T=2 method A vs C (2-D tanh-sinh, dps 30)
TOL_TAIL = mpf('1e-22')      # neglected left remainder, relative

CHECKS = []          # (description, value) collected for the header comment
FAILURES = []


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def fail(msg):
    if msg not in FAILURES:
        FAILURES.append(msg)
        log("CHECK FAILED: " + msg)


def rel(a, b):
    with mp.workdps(120):
        a, b = mpf(a), mpf(b)
        if a == b:
            return mpf(0)
        return abs(a - b) / max(abs(a), abs(b))


def Phi(x):
    return mpmath.ncdf(x)


def nstr(x, n=25):
    return mpmath.nstr(x, n, strip_zeros=False, min_fixed=0, max_fixed=0,
                       show_zero_exponent=True)


def rquad(f, pts, method='tanh-sinh', scale=None):
    """mpmath quad with a relative (not absolute) accuracy target: mpmath
    stops on an absolute error estimate, so the integrand is divided by a
    scale S (given, or a first raw estimate) and the quadrature repeated
    until S is within a factor 1e3 of the result."""
    if scale is None or scale == 0:
        S = abs(mp.quad(f, pts, method=method))
    else:
        S = abs(scale)
    v = mpf(0)
    for _ in range(4):
        if S == 0:
            return mpf(0)
        v = mp.quad(lambda x: f(x) / S, pts, method=method) * S
        if v != 0 and S / abs(v) < 1000:
            return v
        S = abs(v)
    return v


# ---------------------------------------------------------------------------
# 1. mu-GDP
# ---------------------------------------------------------------------------

def gdp_delta(eps, mu):
    eps = mpf(eps)
    return Phi(-eps / mu + mu / 2) - mp.exp(eps) * Phi(-eps / mu - mu / 2)


def gdp_mu(sigma, T):
    return mp.sqrt(mpf(T)) / mpf(sigma)


def gdp_eps(mu, delta):
    ld = mp.log(mpf(delta))

    def f(e):
        return mp.log(gdp_delta(e, mu)) - ld

    lo = mpf(0)
    if not f(lo) > 0:
        raise RuntimeError("delta(0) <= target")
    hi = mpf(1)
    while f(hi) > 0:
        lo, hi = hi, 2 * hi
    # monotonicity on the bracket [0, hi] (non-increasing at working
    # precision: for large mu, delta rounds to 1 near eps = 0; strict
    # decrease is the analytic statement d delta/d eps = -e^eps Phi(.) < 0)
    grid = [hi * i / 64 for i in range(65)]
    vals = [gdp_delta(e, mu) for e in grid]
    for a, b in zip(vals, vals[1:]):
        if b > a or (b == a and a < 1 - mpf(10) ** (5 - mp.dps)):
            fail("GDP delta not decreasing (mu=%s)" % nstr(mu, 8))
    for _ in range(60):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    r = mp.findroot(f, (lo, hi), solver='anderson')
    if not (lo <= r <= hi):
        fail("GDP root outside bracket")
    d = r * mpf('1e-30')
    if not (f(r - d) > 0 > f(r + d)):
        fail("GDP root sign check (mu=%s, delta=%g)" % (nstr(mu, 8), delta))
    return r


def part1():
    t0 = time.time()
    eps_rows, delta_rows = [], []
    maxrel_eps, maxrel_delta = mpf(0), mpf(0)
    for sigma, T in GDP_PAIRS:
        for delta in GDP_DELTAS:
            with mp.workdps(60):
                e1 = gdp_eps(gdp_mu(sigma, T), delta)
            with mp.workdps(100):
                e2 = gdp_eps(gdp_mu(sigma, T), delta)
            maxrel_eps = max(maxrel_eps, rel(e1, e2))
            eps_rows.append((sigma, T, gdp_mu(sigma, T), delta, e2))
        for eps in GDP_EPSS:
            with mp.workdps(60):
                d1 = gdp_delta(eps, gdp_mu(sigma, T))
            with mp.workdps(100):
                d2 = gdp_delta(eps, gdp_mu(sigma, T))
                if not d2 > 0:
                    fail("GDP delta not positive")
                ld = mp.log(d2)
            maxrel_delta = max(maxrel_delta, rel(d1, d2))
            delta_rows.append((sigma, T, gdp_mu(sigma, T), eps, d2, ld))
    if maxrel_eps > mpf('1e-45'):
        fail("GDP eps dps60 vs dps100: %s" % nstr(maxrel_eps, 3))
    if maxrel_delta > mpf('1e-45'):
        fail("GDP delta dps60 vs dps100: %s" % nstr(maxrel_delta, 3))
    CHECKS.append(("mu-GDP eps(delta), root at dps 60 vs dps 100, max rel diff",
                   maxrel_eps))
    CHECKS.append(("mu-GDP delta(eps), dps 60 vs dps 100, max rel diff",
                   maxrel_delta))
    log("part 1: %d + %d rows, %.1fs" % (len(eps_rows), len(delta_rows),
                                          time.time() - t0))
    return eps_rows, delta_rows


# ---------------------------------------------------------------------------
# 2. Poisson-subsampled Gaussian, one step
# ---------------------------------------------------------------------------

class SGM:
    """Gaussian (sensitivity 1, noise s) with Poisson subsampling q."""

    def __init__(self, s, q):
        self.s = mpf(s)
        self.q = mpf(q)
        self.s2 = self.s * self.s
        self.full = (self.q == 1)
        self.lmq = mp.log1p(-self.q) if not self.full else mpf('-inf')

    # remove-pair loss and its inverse
    def Lr(self, x):
        z = (2 * x - 1) / (2 * self.s2)
        if self.full:
            return z
        return mp.log1p(self.q * mp.expm1(z))

    def Lr_inv(self, l):
        """x with Lr(x) = l; requires l > log(1-q)."""
        if self.full:
            return mpf(1) / 2 + self.s2 * l
        u = mp.expm1(l) / self.q
        if u <= -1:
            # l <= log(1-q) up to rounding (callers guard the exact case):
            # the threshold has moved to -inf
            return mpf('-inf')
        return mpf(1) / 2 + self.s2 * mp.log1p(u)

    def L(self, d, x):
        return self.Lr(x) if d == REMOVE else -self.Lr(x)

    def L_inv(self, d, l):
        return self.Lr_inv(l) if d == REMOVE else self.Lr_inv(-l)

    # densities
    def n0(self, x):
        return mp.npdf(x, 0, self.s)

    def n1(self, x):
        return mp.npdf(x, 1, self.s)

    def mix(self, x):
        return (1 - self.q) * self.n0(x) + self.q * self.n1(x)

    def pdfP(self, d, x):
        return self.mix(x) if d == REMOVE else self.n0(x)

    def pdfQ(self, d, x):
        return self.n0(x) if d == REMOVE else self.mix(x)

    # tails
    def sf0(self, x):
        return Phi(-x / self.s)

    def sf1(self, x):
        return Phi((1 - x) / self.s)

    def sfmix(self, x):
        return (1 - self.q) * self.sf0(x) + self.q * self.sf1(x)

    def cdf0(self, x):
        return Phi(x / self.s)

    def mass0(self, a, b):
        """N(0,s^2) mass of (a, b), computed on the tail side."""
        if a >= 0:
            return self.sf0(a) - self.sf0(b)
        return Phi(b / self.s) - Phi(a / self.s)

    def mass1(self, a, b):
        if a >= 1:
            return self.sf1(a) - self.sf1(b)
        return Phi((b - 1) / self.s) - Phi((a - 1) / self.s)

    def massmix(self, a, b):
        return (1 - self.q) * self.mass0(a, b) + self.q * self.mass1(a, b)

    def cdfmix(self, x):
        return (1 - self.q) * Phi(x / self.s) + self.q * Phi((x - 1) / self.s)

    def delta1(self, d, e):
        e = mpf(e)
        s, q = self.s, self.q
        with mp.extradps(15):
            if d == REMOVE:
                if not self.full and e <= self.lmq:
                    return -mp.expm1(e)
                t = mp.expm1(e) + q
                xs = mpf(1) / 2 + self.s2 * mp.log(t / q)
                r = q * Phi((1 - xs) / s) - t * Phi(-xs / s)
            else:
                if not self.full and e >= -self.lmq:
                    return mpf(0)
                t = mp.expm1(-e) + q
                xs = mpf(1) / 2 + self.s2 * mp.log(t / q)
                r = mp.exp(e) * (t * Phi(xs / s) - q * Phi((xs - 1) / s))
        return +r

    def delta1_quad(self, d, e):
        """Direct quadrature of (p - e^eps q)_+ (check of delta1)."""
        e = mpf(e)
        ee = mp.exp(e)
        s = self.s

        def f(x):
            return self.pdfP(d, x) - ee * self.pdfQ(d, x)

        if d == REMOVE:
            if not self.full and e <= self.lmq:
                return rquad(f, [mpf('-inf'), 0, 1, mpf('inf')])
            xs = self.L_inv(d, e)
            return rquad(f, [xs, xs + s / 2, xs + 2 * s, xs + 6 * s, mpf('inf')])
        if not self.full and e >= -self.lmq:
            return mpf(0)
        xs = self.L_inv(d, e)
        return rquad(f, [mpf('-inf'), xs - 6 * s, xs - 2 * s, xs - s / 2, xs])


def part2():
    t0 = time.time()
    rows = []
    worst_dps = worst_quad = worst_dual = mpf(0)
    for s, q in SGM1_PAIRS:
        for d in (REMOVE, ADD):
            for eps in SGM1_EPSS:
                m = SGM(s, q)
                v = m.delta1(d, eps)
                vq = m.delta1_quad(d, eps)
                with mp.workdps(90):
                    v90 = SGM(s, q).delta1(d, eps)
                    if d == ADD:
                        mm = SGM(s, q)
                        e = mpf(eps)
                        dual = 1 - mp.exp(e) + mp.exp(e) * mm.delta1(REMOVE, -e)
                        dual = max(dual, mpf(0))
                        # exact zero region is exact in both
                        if v90 == 0:
                            dd = abs(dual)
                            ok = dd < mpf('1e-85')
                        else:
                            dd = rel(dual, v90)
                            ok = True
                        worst_dual = max(worst_dual, dd if v90 != 0 else 0)
                        if not ok:
                            fail("SGM1 duality zero")
                if v90 < 0:
                    fail("SGM1 negative delta")
                worst_dps = max(worst_dps, rel(v, v90))
                worst_quad = max(worst_quad, rel(v, vq))
                ld = mp.log(v90) if v90 > 0 else None
                rows.append((s, q, d, eps, v90, ld))
    for name, w, tol in (("dps 50 vs 90", worst_dps, TOL_CLOSED),
                         ("closed form vs direct tanh-sinh quadrature",
                          worst_quad, TOL_QUAD1),
                         ("add vs duality 1-e^eps+e^eps*remove(-eps)",
                          worst_dual, TOL_CLOSED)):
        if w > tol:
            fail("SGM1 %s: %s" % (name, nstr(w, 3)))
        CHECKS.append(("one-step SGM, " + name + ", max rel diff", w))
    log("part 2: %d rows, %.1fs" % (len(rows), time.time() - t0))
    return rows


# Published dp_accounting values (privacy_loss_mechanism_test.py,
# privacy_loss_distribution_test.py, pld_privacy_accountant_test.py).
# Entries: (label, sigma, sensitivity, q, dir, eps, published, abs tol)
PUB_SGM = [
    ("GaussianPrivacyLoss s=1 q=0.8 ADD", 1.0, 1.0, 0.8, ADD, 1.0, 0.0231362104090899, 1e-7),
    ("GaussianPrivacyLoss s=1 q=0.8 REMOVE", 1.0, 1.0, 0.8, REMOVE, 1.0, 0.0816951786585355, 1e-7),
    ("GaussianPrivacyLoss s=1 q=0.3 REMOVE", 1.0, 1.0, 0.3, REMOVE, 2.0, 0.0003341102928869332, 1e-7),
    ("GaussianPrivacyLoss s=1 sens=3 q=0.7 ADD", 1.0, 3.0, 0.7, ADD, 1.0, 0.1195051215523554, 1e-7),
    ("GaussianPrivacyLoss s=1 sens=3 q=0.7 REMOVE", 1.0, 3.0, 0.7, REMOVE, 1.0, 0.5356298793262404, 1e-7),
    ("GaussianPrivacyLoss s=2 sens=6 q=0.4 REMOVE", 2.0, 6.0, 0.4, REMOVE, 1.0, 0.2888308005139968, 1e-7),
    ("GaussianPrivacyLoss s=2 sens=6 q=0.4 ADD", 2.0, 6.0, 0.4, ADD, 1.0, 0.0, 1e-7),
    ("GaussianPrivacyLoss s=1 q=0.3 ADD", 1.0, 1.0, 0.3, ADD, 2.0, 0.0, 1e-7),
    ("GaussianPrivacyLoss s=5 sens=5 q=0.2 REMOVE", 5.0, 5.0, 0.2, REMOVE, -0.25, 0.2211992169285951, 1e-7),
    ("Gaussian s=1 q=1", 1.0, 1.0, 1.0, REMOVE, 1.0, 0.12693674, 1e-7),
    ("Gaussian s=1 q=1", 1.0, 1.0, 1.0, REMOVE, 2.0, 0.02092364, 1e-7),
    ("Gaussian s=1 q=1", 1.0, 1.0, 1.0, REMOVE, -2.0, 0.86749642, 1e-7),
    ("Gaussian s=1 q=1", 1.0, 1.0, 1.0, REMOVE, -1.0, 0.67881797, 1e-7),
    ("Gaussian s=1 q=1", 1.0, 1.0, 1.0, REMOVE, 0.0, 0.38292492, 1e-7),
    ("Gaussian s=1 sens=3 q=1 (sigma=3 entry of the brief)", 1.0, 3.0, 1.0, REMOVE, 1.0, 0.78760074, 1e-7),
    ("Gaussian s=3 sens=1 q=1 (literal reading, expected mismatch)", 3.0, 1.0, 1.0, REMOVE, 1.0, 0.78760074, None),
] + [("GaussianPrivacyLoss s=1 q=0.2 REMOVE", 1.0, 1.0, 0.2, REMOVE, e, v, 1e-7)
     for e, v in zip([-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.5, 1.0],
                     [0.25918178, 0.1814346, 0.11631708, 0.076584985,
                      0.051816131, 0.035738492, 0.012494629, 0.00229682])] \
  + [("GaussianPrivacyLoss s=1 q=0.2 ADD", 1.0, 1.0, 0.2, ADD, e, v, 1e-7)
     for e, v in zip([-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3],
                     [0.27768558, 0.21052945, 0.14204776, 0.076584985,
                      0.02337934, 0.00020196, 0.0])]

# (label, b, sensitivity, q, dir, eps, published, tol)
PUB_LAP = [
    ("LaplacePrivacyLoss b=1 q=1", 1.0, 1.0, 1.0, ADD, 0.0, 0.39346934, 1e-7),
    ("LaplacePrivacyLoss b=1 q=1", 1.0, 1.0, 1.0, REMOVE, -2.0, 0.86466472, 1e-7),
    ("LaplacePrivacyLoss b=2 sens=4 q=1", 2.0, 4.0, 1.0, ADD, 0.5, 0.52763345, 1e-7),
    ("LaplacePrivacyLoss b=1 q=1", 1.0, 1.0, 1.0, REMOVE, 1.0, 0.0, 1e-7),
    ("LaplacePrivacyLoss b=2 sens=4 q=0.8 ADD", 2.0, 4.0, 0.8, ADD, 0.5, 0.3243606497234246, 1e-7),
    ("LaplacePrivacyLoss b=1 q=0.6 ADD", 1.0, 1.0, 0.6, ADD, 0.2, 0.1401134521354217, 1e-7),
    ("LaplacePrivacyLoss b=2 sens=2 q=0.3 ADD", 2.0, 2.0, 0.3, ADD, 0.0, 0.1180408020862099, 1e-7),
    ("LaplacePrivacyLoss b=1 q=0.8 ADD", 1.0, 1.0, 0.8, ADD, 1.0, 0.0, 1e-7),
    ("LaplacePrivacyLoss b=2 sens=4 q=0.8 REMOVE", 2.0, 4.0, 0.8, REMOVE, 0.5, 0.4039564635032081, 1e-7),
    ("LaplacePrivacyLoss b=1 q=0.6 REMOVE", 1.0, 1.0, 0.6, REMOVE, 0.2, 0.1741992102060086, 1e-7),
    ("LaplacePrivacyLoss b=2 sens=2 q=0.3 REMOVE", 2.0, 2.0, 0.3, REMOVE, 0.0, 0.1180408020862099, 1e-7),
    ("LaplacePrivacyLoss b=5 sens=5 q=0.2 REMOVE", 5.0, 5.0, 0.2, REMOVE, -0.25, 0.2211992169285951, 1e-7),
]

PUB_LINES = []


def pub_line(label, args, published, ours, tol):
    ours_f = float(ours)
    diff = abs(ours_f - published)
    if published != 0:
        digits = -math.log10(max(diff / abs(published), 1e-17))
        dstr = "%.1f digits" % digits
    else:
        dstr = "exact 0" if ours == 0 else "ours %.3g" % ours_f
    status = "ok" if (tol is not None and diff <= tol) else \
        ("MISMATCH" if tol is not None else "differs (expected)")
    if tol is not None and diff > tol:
        fail("published %s %s: %r vs %r" % (label, args, published, ours_f))
    PUB_LINES.append("%s %s: published %.17g, ours %s -> |diff| %.2g (%s) %s"
                     % (label, args, published, nstr(ours, 17), diff, dstr,
                        status))


def check_published_sgm():
    for label, s, sens, q, d, eps, pub, tol in PUB_SGM:
        m = SGM(mpf(s) / mpf(sens), q)
        v = m.delta1(d, eps)
        pub_line(label, "%s eps=%g" % (DIRNAME[d], eps), pub, v, tol)


# ---------------------------------------------------------------------------
# 3. Laplace
# ---------------------------------------------------------------------------

class Lap:
    def __init__(self, b, q):
        self.b = mpf(b)
        self.q = mpf(q)

    def cdf(self, x, m):
        x = mpf(x)
        if x < m:
            return mp.exp((x - m) / self.b) / 2
        return 1 - mp.exp(-(x - m) / self.b) / 2

    def sf(self, x, m):
        return 1 - self.cdf(x, m) if x < m else mp.exp(-(x - m) / self.b) / 2

    def pdf(self, x, m):
        return mp.exp(-abs(x - m) / self.b) / (2 * self.b)

    def mixpdf(self, x):
        return (1 - self.q) * self.pdf(x, 0) + self.q * self.pdf(x, 1)

    def Lr(self, x):
        l0 = (abs(x) - abs(x - 1)) / self.b
        return mp.log(1 - self.q + self.q * mp.exp(l0))

    def delta(self, d, eps):
        e = mpf(eps)
        b, q = self.b, self.q
        lo = mp.log(1 - q + q * mp.exp(-1 / b))
        hi = mp.log(1 - q + q * mp.exp(1 / b))
        # eps exactly at the loss maximum (e.g. q = 1, eps = 1/b): delta = 0;
        # snap rounding noise of hi (resp. of -lo for add)
        tiny = mpf(10) ** (10 - mp.dps)
        if d == REMOVE and abs(e - hi) < tiny:
            return mpf(0)
        if d == ADD and abs(e + lo) < tiny:
            return mpf(0)
        if d == REMOVE:
            if e < lo:
                return -mp.expm1(e)
            if e >= hi:
                return mpf(0)
            t = mp.log((mp.expm1(e) + q) / q)
            xs = (b * t + 1) / 2          # in [0, 1)
            Pt = (1 - q) * self.sf(xs, 0) + q * self.sf(xs, 1)
            Qt = self.sf(xs, 0)
            return Pt - mp.exp(e) * Qt
        if e < -hi:
            return -mp.expm1(e)
        if e >= -lo:
            return mpf(0)
        t = mp.log((mp.expm1(-e) + q) / q)
        xs = (b * t + 1) / 2              # in (0, 1]
        Pc = self.cdf(xs, 0)
        Qc = (1 - q) * self.cdf(xs, 0) + q * self.cdf(xs, 1)
        return Pc - mp.exp(e) * Qc

    def delta_quad(self, d, eps):
        e = mpf(eps)
        ee = mp.exp(e)

        def f(x):
            if d == REMOVE:
                v = self.mixpdf(x) - ee * self.pdf(x, 0)
            else:
                v = self.pdf(x, 0) - ee * self.mixpdf(x)
            return v if v > 0 else mpf(0)

        pts = [mpf(0), mpf(1)]
        # interior crossing of the ratio with e^eps
        if d == REMOVE:
            t = mp.expm1(e) + self.q
        else:
            t = mp.expm1(-e) + self.q
        if t > 0:
            xs = (self.b * mp.log(t / self.q) + 1) / 2
            if 0 < xs < 1:
                pts.append(xs)
        pts = sorted(pts)
        total = mpf(0)
        segs = [(mpf('-inf'), pts[0])] + list(zip(pts, pts[1:])) + \
            [(pts[-1], mpf('inf'))]
        for a, c in segs:
            # sign is constant on each segment; test the midpoint
            mid = (a + c) / 2 if (a != mpf('-inf') and c != mpf('inf')) else \
                (c - 1 if a == mpf('-inf') else a + 1)
            if f(mid) > 0:
                total += rquad(f, [a, c])
        return total


def part3():
    t0 = time.time()
    rows = []
    worst = worst_dps = mpf(0)
    for b in LAP_BS:
        for q in LAP_QS:
            for d in (REMOVE, ADD):
                for eps in LAP_EPSS:
                    v = Lap(b, q).delta(d, eps)
                    vq = Lap(b, q).delta_quad(d, eps)
                    with mp.workdps(90):
                        v90 = Lap(b, q).delta(d, eps)
                    if v == 0:
                        # quadrature of a positive part that vanishes
                        # identically up to rounding
                        if abs(vq) > mpf('1e-45'):
                            fail("Laplace zero vs quad %s" % nstr(vq, 5))
                    else:
                        worst = max(worst, rel(v, vq))
                    worst_dps = max(worst_dps, rel(v, v90))
                    rows.append((b, q, d, eps, v90))
    if worst > TOL_QUAD1:
        fail("Laplace closed form vs quadrature %s" % nstr(worst, 3))
    if worst_dps > TOL_CLOSED:
        fail("Laplace dps 50 vs 90 %s" % nstr(worst_dps, 3))
    CHECKS.append(("Laplace closed form vs direct tanh-sinh quadrature of "
                   "(p - e^eps q)_+, max rel diff", worst))
    CHECKS.append(("Laplace closed form dps 50 vs 90, max rel diff", worst_dps))
    for label, b, sens, q, d, eps, pub, tol in PUB_LAP:
        v = Lap(mpf(b) / mpf(sens), q).delta(d, eps)
        pub_line(label, "%s eps=%g" % (DIRNAME[d], eps), pub, v, tol)
    log("part 3: %d rows, %.1fs" % (len(rows), time.time() - t0))
    return rows


# ---------------------------------------------------------------------------
# 4. Composition
# ---------------------------------------------------------------------------

_GL = {}


def gl_rule(n):
    """n-point Gauss-Legendre nodes/weights on [-1, 1] at the current prec."""
    key = (n, mp.prec)
    if key in _GL:
        return _GL[key]
    xs, ws = [], []
    with mp.workprec(mp.prec + 40):
        for i in range(1, n + 1):
            x = mp.cos(mp.pi * (i - mpf(1) / 4) / (n + mpf(1) / 2))
            for _ in range(200):
                p0, p1 = mpf(1), x
                for k in range(2, n + 1):
                    p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
                dp = n * (x * p1 - p0) / (x * x - 1)
                dx = p1 / dp
                x -= dx
                if abs(dx) < mpf(2) ** (-mp.prec):
                    break
            p0, p1 = mpf(1), x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            xs.append(x)
            ws.append(2 / ((1 - x * x) * dp * dp))
    xs = [+x for x in xs]
    ws = [+w for w in ws]
    _GL[key] = (xs, ws)
    return xs, ws


class MinOrder:
    """Method A for the T-fold composition ("smallest coordinate first").

    I_k(a, w) = int_{[a,inf)^k} (prod p - e^w prod q)_+  (restricted
    hockey-stick), delta_T(e) = I_T(-inf, e).  Ordering the coordinates by
    their minimum: I_k(a, w) = k int_a^inf p(x) I_{k-1}(x, w - L(x)) dx.
    I_1 is closed form.  Let m_k(w) solve L(m_k) = w/k.
      remove (L increasing): for x >= m_k the whole quadrant [x,inf)^{k-1}
        lies in {sum L > w - L(x)}, so that part integrates in closed form to
        P(X>m_k)^k - e^w Q(X>m_k)^k;
      add (L decreasing): for x >= m_k the restricted region is empty.
    The remaining integral over [a, m_k] has an analytic integrand (every
    one-step threshold stays finite: this ordering keeps all coordinates away
    from the -inf asymptotes of the boundary {sum L = w}, where the integrand
    would be smooth but non-analytic), done with composite Gauss-Legendre.
    The part below A = min(-K s, m_k - K s) is bounded by
    k P(a < X < A) * sup, sup = delta_{k-1}(w - L(A)) (remove) or
    delta_{k-1}(w - L_max) (add), and recorded relative to the result."""

    def __init__(self, s, q, d, n, hfac, shift, K):
        self.m = SGM(s, q)
        self.d = d
        self.n = n
        self.shift = mpf(shift)
        self.K = K
        self.h = hfac * min(self.m.s, self.m.s2)
        self.xs, self.ws = gl_rule(n)
        self.maxtail = mpf(0)

    def L(self, x):
        return self.m.L(self.d, x)

    def pdfP(self, x):
        return self.m.pdfP(self.d, x)

    def Pgt(self, x):
        return self.m.sfmix(x) if self.d == REMOVE else self.m.sf0(x)

    def Qgt(self, x):
        return self.m.sf0(x) if self.d == REMOVE else self.m.sfmix(x)

    def Pmass(self, a, b):
        return self.m.massmix(a, b) if self.d == REMOVE else self.m.mass0(a, b)

    def Qmass(self, a, b):
        return self.m.mass0(a, b) if self.d == REMOVE else self.m.massmix(a, b)

    def xstar(self, w):
        """One-step threshold: region {L > w} is (x*, inf) for remove,
        (-inf, x*) for add (None: empty)."""
        m = self.m
        if self.d == REMOVE:
            if not m.full and w <= m.lmq:
                return mpf('-inf')
            return m.Lr_inv(w)
        if not m.full and w >= -m.lmq:
            return None
        return m.Lr_inv(-w)

    def gl(self, f, lo, hi):
        h = self.h
        pts = [lo]
        x = lo + (self.shift * h if self.shift > 0 else h)
        while x < hi - h / 10:
            pts.append(x)
            x += h
        pts.append(hi)
        total = mpf(0)
        for a, c in zip(pts, pts[1:]):
            mid = (a + c) / 2
            half = (c - a) / 2
            acc = mpf(0)
            for x, w in zip(self.xs, self.ws):
                acc += w * f(mid + half * x)
            total += acc * half
        return total

    def I(self, k, a, w):
        m, d = self.m, self.d
        with mp.extradps(10):
            ew = mp.exp(w)
            if k == 1:
                xs = self.xstar(w)
                if d == REMOVE:
                    # P(X>t) - e^w Q(X>t) = q P1(X>t) - (e^w - 1 + q) P0(X>t)
                    t = a if xs < a else xs
                    return m.q * m.sf1(t) - (mp.expm1(w) + m.q) * m.sf0(t)
                if xs is None or xs <= a:
                    return mpf(0)
                return self.Pmass(a, xs) - ew * self.Qmass(a, xs)
            if d == REMOVE:
                if not m.full and w <= k * m.lmq:
                    return self.Pgt(a) ** k - ew * self.Qgt(a) ** k
                mk = m.Lr_inv(w / k)
                if a >= mk:
                    return self.Pgt(a) ** k - ew * self.Qgt(a) ** k
                closed = self.Pgt(mk) ** k - ew * self.Qgt(mk) ** k
            else:
                if not m.full and w / k >= -m.lmq:
                    return mpf(0)
                mk = m.Lr_inv(-w / k)
                if a >= mk:
                    return mpf(0)
                closed = mpf(0)
        A = min(-self.K * m.s, mk - self.K * m.s)
        lo = a if a > A else A

        def f(x):
            return self.pdfP(x) * self.I(k - 1, x, w - self.L(x))

        res = k * self.gl(f, lo, mk) + closed
        if a < A:
            if d == REMOVE:
                sup = self.I(k - 1, mpf('-inf'), w - self.L(A))
            elif m.full:
                sup = mpf(1)
            else:
                sup = self.I(k - 1, mpf('-inf'), w + m.lmq)
            bound = k * self.Pmass(a, A) * sup
            if res > 0:
                self.maxtail = max(self.maxtail, bound / res)
            elif bound > 0:
                self.maxtail = mpf('inf')
        return res


def asym_delta(s, q, d, T, eps, inner_cfg, scale=None):
    """Method B: delta_T(e) = E_{x~P}[delta_{T-1}(e - L(x))] (condition on the
    first coordinate), delta_{T-1} from MinOrder with its own GL config, outer
    integral by normalised tanh-sinh.  The outer integrand is smooth but not
    analytic at the end point x_e (where e - L(x_e) = (T-1) inf L, resp.
    (T-1) sup L): double-exponential clustering handles that.  Remove: for
    x >= x_e, delta_{T-1}(e - L(x)) = 1 - e^{e - L(x)} exactly and that part
    is the closed form P(X >= x_e) - e^e Q(X >= x_e); add: zero beyond x_e."""
    n, hfac, shift, K = inner_cfg
    mo = MinOrder(s, q, d, n, hfac, shift, K)
    m = mo.m
    e = mpf(eps)
    inf = mpf('inf')
    sg = m.s
    tail = mpf(0)
    if d == REMOVE:
        if not m.full and e <= T * m.lmq:
            return -mp.expm1(e), mpf(0)
        xe = inf if m.full else m.Lr_inv(e - (T - 1) * m.lmq)
        if xe != inf:
            tail = mo.Pgt(xe) - mp.exp(e) * mo.Qgt(xe)
    else:
        if not m.full and e >= -T * m.lmq:
            return mpf(0), mpf(0)
        xe = inf if m.full else m.Lr_inv(-(e + (T - 1) * m.lmq))

    def f(x):
        return mo.pdfP(x) * mo.I(T - 1, -inf, e - mo.L(x))

    if xe == inf:
        pts = [-inf, -12 * sg, -4 * sg, 0, 1, 1 + 4 * sg, 1 + 12 * sg, inf]
    else:
        pts = [xe - j * sg for j in B_OUTER_PTS]
        lo = min(-12 * sg, xe - 12 * sg)
        pts = [-inf, lo] + sorted(p for p in set(pts) if p > lo) + [xe]
    body = rquad(f, pts, scale=scale)
    return body + tail, mo.maxtail


def comp_task(args):
    """Worker for part 4: returns (args, value, maxtail, seconds)."""
    kind, T, s, q, d, eps, scale = args
    t0 = time.time()
    if kind in ('A', 'A2'):
        n, hfac, shift, K, dps = CFG[(kind, T)]
        mp.dps = dps
        mo = MinOrder(s, q, d, n, hfac, shift, K)
        v = mo.I(T, mpf('-inf'), mpf(eps))
        return (args, v, mo.maxtail, time.time() - t0)
    if kind == 'B':
        # crude estimate, only used to normalise the tanh-sinh integrand
        mp.dps = 15
        crude = MinOrder(s, q, d, 8, 2.5, 0.0, 10).I(T, mpf('-inf'), mpf(eps))
        n, hfac, shift, K, dps = CFG[('B', T)]
        mp.dps = dps
        v, tb = asym_delta(s, q, d, T, eps, (n, hfac, shift, K),
                           scale=crude if crude > 0 else None)
        return (args, v, tb, time.time() - t0)
    if kind == 'C':
        mp.dps = 30
        v, tb = brute2(s, q, d, eps)
        return (args, v, tb, time.time() - t0)
    raise ValueError(kind)


def gl_panels(f, lo, hi, h, n=20):
    """Composite n-point Gauss-Legendre on [lo, hi], panels of width ~h."""
    xs, ws = gl_rule(n)
    npan = max(1, int(mp.ceil((hi - lo) / h)))
    step = (hi - lo) / npan
    total = mpf(0)
    for i in range(npan):
        a = lo + i * step
        mid = a + step / 2
        half = step / 2
        total += half * sum(w * f(mid + half * x) for x, w in zip(xs, ws))
    return total


BRUTE_W = 14     # truncation of half-lines in the brute-force checks, in s


def brute2(s, q, d, eps):
    """Method C (T = 2, remove) without any hockey-stick closed form: the
    literal 2-D integral of (p(x)p(y) - e^eps q(x)q(y))_+ over the region
    {L(x) + L(y) > eps}, ordered by the smaller coordinate:
      2 int_{x<m} int_{y>xi(x)} (p(x)p(y) - e^eps q(x)q(y)) dy dx
        + (int_m^inf p)^2 - e^eps (int_m^inf q)^2,
    L(m) = eps/2, L(xi(x)) = eps - L(x); every 1-D integral (inner ones
    included) by composite Gauss-Legendre on truncated ranges (truncation
    beyond BRUTE_W*s is bounded by Gaussian tail masses and recorded)."""
    assert d == REMOVE
    m = SGM(s, q)
    e = mpf(eps)
    ee = mp.exp(e)
    sg = m.s
    h = min(sg, m.s2)
    W = BRUTE_W * sg
    mm = m.Lr_inv(e / 2)
    # sign check of the threshold at a few points
    for x in (mm - sg, mm - 3 * sg):
        xi = m.Lr_inv(e - m.Lr(x))
        gp = m.mix(x) * m.mix(xi + sg / 100) - ee * m.n0(x) * m.n0(xi + sg / 100)
        gm = m.mix(x) * m.mix(xi - sg / 100) - ee * m.n0(x) * m.n0(xi - sg / 100)
        if not (gp > 0 > gm):
            fail("brute2 threshold sign")
    worst = [mpf(0)]

    def inner(x):
        px, qx = m.mix(x), m.n0(x)
        xi = m.Lr_inv(e - m.Lr(x))
        v = gl_panels(lambda y: px * m.mix(y) - ee * qx * m.n0(y),
                      xi, xi + W, h)
        worst[0] = max(worst[0], px * m.sfmix(xi + W) / v)
        return v

    A = min(-12 * sg, mm - 12 * sg)
    cross = 2 * gl_panels(inner, A, mm, h)
    Pm = gl_panels(m.mix, mm, mm + W, h)
    Qm = gl_panels(m.n0, mm, mm + W, h)
    res = cross + Pm ** 2 - ee * Qm ** 2
    trunc = (2 * m.sfmix(mm + W) + 2 * (1 - m.sfmix(A))) / res
    return res, max(worst[0], trunc)


def gdp_check_rows():
    rows = [(2, s, d, eps) for s in (1.0, 0.5) for d in (REMOVE, ADD)
            for eps in (0.5, 2.0)]
    return rows + [(3, 1.0, REMOVE, 0.5), (3, 1.0, ADD, 2.0),
                   (3, 0.5, REMOVE, 2.0), (3, 0.5, ADD, 0.5)]


def comp_rows_keys():
    return [(T, s, q, d, eps) for T in COMP_TS for s, q in COMP_PAIRS
            for eps in COMP_EPSS for d in (REMOVE, ADD)]


def part4_tasks():
    tasks = []
    for T, s, q, d, eps in comp_rows_keys():
        tasks.append(('A', T, s, q, d, eps, None))
        tasks.append(('A2', T, s, q, d, eps, None))
        if T == 2 or COMP_B3 == 'all' or (s, q, d, eps) in COMP_B3:
            tasks.append(('B', T, s, q, d, eps, None))
    for T, s, d, eps in gdp_check_rows():
        tasks.append(('A', T, s, 1.0, d, eps, None))
    for s, q in COMP_PAIRS:
        for eps in COMP_C_EPSS:
            tasks.append(('C', 2, s, q, REMOVE, eps, None))
    return tasks


def part4(res):
    """Checks and rows from the finished part-4 tasks (res: key -> (v, tb))."""
    t0 = time.time()
    rows_keys = comp_rows_keys()
    rows = []
    worstA2 = {2: mpf(0), 3: mpf(0)}
    worstB = {2: mpf(0), 3: mpf(0)}
    worstC = mpf(0)
    worsttail = mpf(0)
    for T, s, q, d, eps in rows_keys:
        vA, tA = res[('A', T, s, q, d, eps)]
        vA2, tA2 = res[('A2', T, s, q, d, eps)]
        worsttail = max(worsttail, tA, tA2)
        est = rel(vA, vA2)
        worstA2[T] = max(worstA2[T], est)
        if est > TOL_A2[T]:
            fail("comp T=%d %s (%s,%s,eps=%s) A vs A2 %s" %
                 (T, DIRNAME[d], s, q, eps, nstr(est, 3)))
        kB = ('B', T, s, q, d, eps)
        if kB in res:
            vB, tB = res[kB]
            worsttail = max(worsttail, tB)
            r = rel(vA, vB)
            est = max(est, r)
            worstB[T] = max(worstB[T], r)
            if r > TOL_B[T]:
                fail("comp T=%d %s (%s,%s,eps=%s) A vs B %s" %
                     (T, DIRNAME[d], s, q, eps, nstr(r, 3)))
        kC = ('C', T, s, q, d, eps)
        if kC in res:
            rc = rel(vA, res[kC][0])
            est = max(est, rc)
            worstC = max(worstC, rc)
            if rc > TOL_T2C:
                fail("T=2 brute force (%s,%s,%s): %s" % (s, q, eps,
                                                          nstr(rc, 3)))
        # monotone in T (post-processing)
        if T == 2:
            v1 = SGM(s, q).delta1(d, eps)
        else:
            v1 = res[('A', 2, s, q, d, eps)][0]
        if not vA >= v1:
            fail("delta_T not increasing in T")
        rows.append((s, q, T, d, eps, vA, est))
    if worsttail > TOL_TAIL:
        fail("composition neglected remainder %s" % nstr(worsttail, 3))
    worstG = mpf(0)
    for T, s, d, eps in gdp_check_rows():
        v, _ = res[('A', T, s, 1.0, d, eps)]
        with mp.workdps(60):
            g = gdp_delta(eps, gdp_mu(s, T))
        r = rel(v, g)
        worstG = max(worstG, r)
        if r > TOL_A2[T]:
            fail("composition code with q=1 vs mu-GDP (T=%d): %s"
                 % (T, nstr(r, 3)))
    nB3 = sum(1 for k in res if k[0] == 'B' and k[1] == 3)
    for T in COMP_TS:
        CHECKS.append(("composition T=%d, method A (GL n=%d, h=%g, dps %d) vs "
                       "A2 (GL n=%d, h=%g, offset panels, dps %d), max rel diff"
                       % ((T,) + CFG[('A', T)][:2] + CFG[('A', T)][4:] +
                          CFG[('A2', T)][:2] + CFG[('A2', T)][4:]),
                       worstA2[T]))
    CHECKS.append(("composition T=2, method A vs B (conditioning on x1, "
                   "tanh-sinh, dps %d), max rel diff" % CFG[('B', 2)][4],
                   worstB[2]))
    CHECKS.append(("composition T=3, method A vs B (conditioning on x1, "
                   "tanh-sinh, dps %d; %d rows), max rel diff"
                   % (CFG[('B', 3)][4], nB3), worstB[3]))
    CHECKS.append(("composition T=2 remove, method A vs C (literal 2-D "
                   "integral of the positive part, inner integrals numeric, "
                   "dps 30; eps in %s), max rel diff"
                   % (COMP_C_EPSS,), worstC))
    CHECKS.append(("composition code (method A) with q=1 (both directions, "
                   "%d cases with T=2,3) vs mu-GDP closed form, max rel diff"
                   % len(gdp_check_rows()),
                   worstG))
    CHECKS.append(("composition, bound on neglected integration remainder, "
                   "max relative", worsttail))
    # dp_accounting composition values
    v_rem = res[('A', 3, 0.5, 0.2, REMOVE, 1.0)][0]
    v_add = res[('A', 3, 0.5, 0.2, ADD, 1.0)][0]
    vmax = max(v_rem, v_add)
    pub_line("PLDAccountant Poisson(0.2) Gaussian(0.5) x3 (max of add/remove),"
             " tol 1e-3", "eps=1", 0.15594, vmax, 1e-3)
    PUB_LINES.append("   (remove %s, add %s)" % (nstr(v_rem, 12),
                                                 nstr(v_add, 12)))
    with mp.workdps(50):
        g3 = gdp_delta(1.0, gdp_mu(math.sqrt(3.0), 3.0))
    pub_line("PLDAccountant Gaussian(sqrt 3) x3 (= mu-GDP mu=1), tol 1e-6",
             "eps=1", 0.126936, g3, 1e-6)
    log("part 4 checks: %d rows, %.1fs" % (len(rows), time.time() - t0))
    return rows


# ---------------------------------------------------------------------------
# 5. Sampling without replacement, symmetric PLD
# ---------------------------------------------------------------------------

class Wor:
    def __init__(self, s, g):
        self.m = SGM(s, g)
        m = self.m
        half = mpf(1) / 2
        self.a = 1 - m.sfmix(half) - m.sf0(half)   # atom at 0

    def dA(self, e):
        return self.m.delta1(REMOVE, e)

    def dsym(self, e):
        e = mpf(e)
        if e >= 0:
            return self.dA(e)
        return 1 - mp.exp(e) * (1 - self.dA(-e))

    def dsym_realised(self, e):
        """One step via direct quadrature over the realising pair."""
        m = self.m
        e = mpf(e)
        ee = mp.exp(e)
        inf = mpf('inf')
        half = mpf(1) / 2
        s = m.s
        tot = mpf(0)
        # '+' component: loss L_A(x) >= 0 on x > 1/2
        if e < 0:
            x0 = half
        else:
            x0 = m.Lr_inv(e)
        tot += rquad(lambda x: m.mix(x) - ee * m.n0(x),
                     [x0, x0 + s / 2, x0 + 2 * s, x0 + 6 * s, inf])
        # '-' component: loss -L_A(x); positive part where L_A(x) < -e
        if e < 0:
            x1 = m.Lr_inv(-e)
            tot += rquad(lambda x: m.n0(x) - ee * m.mix(x), [half, x1])
        # atom
        if e < 0:
            tot += self.a * (1 - ee)
        return tot

    def d2(self, eps, n=24, hfac=0.5, K=14):
        """Two steps, 1-D formula, composite GL; returns (value, bound)."""
        m = self.m
        e = mpf(eps)
        s = m.s
        half = mpf(1) / 2
        xs, ws = gl_rule(n)

        def gl(f, pts):
            tot = mpf(0)
            for a, c in zip(pts, pts[1:]):
                mid, hw = (a + c) / 2, (c - a) / 2
                tot += hw * sum(w * f(mid + hw * x) for x, w in zip(xs, ws))
            return tot

        def grid(a, c):
            h = hfac * min(s, m.s2)
            pts = [a]
            x = a + h
            while x < c - h / 10:
                pts.append(x)
                x += h
            return pts + [c]

        B = 1 + K * s
        xe = m.Lr_inv(e) if e > 0 else half
        pts1 = sorted(set(grid(half, xe) + grid(xe, max(B, xe + K * s))))
        t1 = gl(lambda x: m.mix(x) * self.dsym(e - m.Lr(x)), pts1)
        t2 = self.a * self.dsym(e)
        t3 = gl(lambda x: m.n0(x) * self.dA(e + m.Lr(x)), grid(half, B))
        # remainders beyond the last node: integrands <= p_A(x), q_A(x)*dA(e)
        bound = m.sfmix(pts1[-1]) + m.sf0(B) * self.dA(e)
        v = t1 + t2 + t3
        return v, bound / v

    def d2_ts(self, eps):
        """Same 1-D formula with normalised tanh-sinh (other breakpoints)."""
        m = self.m
        e = mpf(eps)
        s = m.s
        half = mpf(1) / 2
        inf = mpf('inf')
        xe = m.Lr_inv(e) if e > 0 else half
        t1 = rquad(lambda x: m.mix(x) * self.dsym(e - m.Lr(x)),
                   sorted(set([half, xe, xe + s, xe + 4 * s, inf])))
        t3 = rquad(lambda x: m.n0(x) * self.dA(e + m.Lr(x)),
                   [half, half + s, half + 4 * s, inf])
        return t1 + self.a * self.dsym(e) + t3

    def d2_brute(self, eps):
        """Two steps by the literal 2-D integral of
        (Ps(w1)Ps(w2) - e^eps Qs(w1)Qs(w2))_+ over the realising space
        (components '+', '-' on (1/2, inf) and the atom '0'); no hockey-stick
        closed form is used; composite Gauss-Legendre for every 1-D integral
        (half-lines truncated at BRUTE_W*s, truncation bounded by tail
        masses).  Requires eps > 0.  Returns (value, parts, trunc)."""
        m = self.m
        e = mpf(eps)
        assert e > 0
        ee = mp.exp(e)
        sg = m.s
        h = min(sg, m.s2) / 2
        W = BRUTE_W * sg
        half = mpf(1) / 2
        pA, qA, LA, Li = m.mix, m.n0, m.Lr, m.Lr_inv
        tr = [mpf(0)]

        def seg(f, a, b):
            return gl_panels(f, a, b, h) if b > a else mpf(0)

        parts = {}
        # (+,+): L_A(x) + L_A(y) > e on (1/2,inf)^2, ordered by min coordinate
        m2 = Li(e / 2)

        def in_pp(x):
            xi = Li(e - LA(x))
            px, qx = pA(x), qA(x)
            v = seg(lambda y: px * pA(y) - ee * qx * qA(y), xi, xi + W)
            tr[0] = max(tr[0], px * m.sfmix(xi + W) / v)
            return v
        Pm, Qm = seg(pA, m2, m2 + W), seg(qA, m2, m2 + W)
        parts['++'] = 2 * seg(in_pp, half, m2) + Pm ** 2 - ee * Qm ** 2
        # (+,-): L_A(x) - L_A(y) > e: x > x_e, y in (1/2, eta(x))
        xe = Li(e)

        def in_pm(x):
            eta = Li(LA(x) - e)
            top = min(eta, half + W)
            px, qx = pA(x), qA(x)
            v = seg(lambda y: px * qA(y) - ee * qx * pA(y), half, top)
            if top < eta:
                tr[0] = max(tr[0], px * m.sf0(top) / v)
            return v
        parts['+-'] = seg(in_pm, xe, xe + W)
        # (-,+): -L_A(x) + L_A(y) > e: y > zeta(x) for every x > 1/2

        def in_mp(x):
            zeta = Li(e + LA(x))
            px, qx = qA(x), pA(x)
            v = seg(lambda y: px * pA(y) - ee * qx * qA(y), zeta, zeta + W)
            tr[0] = max(tr[0], px * m.sfmix(zeta + W) / v)
            return v
        parts['-+'] = seg(in_mp, half, half + W)
        parts['--'] = mpf(0)                 # loss <= 0 < eps
        at = self.a * seg(lambda x: pA(x) - ee * qA(x), xe, xe + W)
        parts['0+'] = parts['+0'] = at
        parts['0-'] = parts['-0'] = mpf(0)  # loss <= 0 < eps
        parts['00'] = mpf(0)                 # loss 0 < eps
        total = sum(parts.values())
        tr[0] = max(tr[0], (3 * m.sfmix(xe + W) + 2 * m.sfmix(m2 + W)
                            + m.sf0(half + W)) / total)
        return total, parts, tr[0]


def wor2_task(args):
    _, s, g, T, eps, which = args
    t0 = time.time()
    if which == 'gl':
        mp.dps = 50
        v, b = Wor(s, g).d2(eps)
        return args, (v, b), time.time() - t0
    if which == 'ts':
        mp.dps = 50
        return args, (Wor(s, g).d2_ts(eps), 0), time.time() - t0
    mp.dps = 30
    v, parts, tr = Wor(s, g).d2_brute(eps)
    return args, (v, parts, tr), time.time() - t0


def part5_tasks():
    return [('W', s, g, T, eps, which) for s, g, T, eps in WOR2
            for which in ('gl', 'ts', 'brute')]


def part5(res):
    t0 = time.time()
    rows1 = []
    worst_real = worst_dps = mpf(0)
    for s, g in WOR1_PAIRS:
        for eps in WOR1_EPSS:
            w = Wor(s, g)
            v = w.dsym(eps)
            vr = w.dsym_realised(eps)
            with mp.workdps(90):
                v90 = Wor(s, g).dsym(eps)
            worst_real = max(worst_real, rel(v, vr))
            worst_dps = max(worst_dps, rel(v, v90))
            rows1.append((s, g, eps, v90))
    if worst_real > TOL_QUAD1:
        fail("WOR one-step formula vs realised-pair quadrature %s"
             % nstr(worst_real, 3))
    CHECKS.append(("WOR symmetric one step, formula vs quadrature over the "
                   "realising pair, max rel diff", worst_real))
    CHECKS.append(("WOR symmetric one step, dps 50 vs 90, max rel diff",
                   worst_dps))
    # sanity of the construction
    w = Wor(1.0, 0.1)
    m = w.m
    half = mpf(1) / 2
    mass = m.sfmix(half) + m.sf0(half) + w.a
    if abs(mass - 1) > mpf('1e-45') or not w.a > 0:
        fail("WOR construction mass")
    rows2 = []
    for s, g, T, eps in WOR2:
        v, bnd = res[('W', s, g, T, eps, 'gl')]
        vt = res[('W', s, g, T, eps, 'ts')][0]
        vb, parts, trb = res[('W', s, g, T, eps, 'brute')]
        if trb > TOL_TAIL:
            fail("WOR2 brute-force truncation %s" % nstr(trb, 3))
        r1, r2 = rel(v, vt), rel(v, vb)
        if bnd > TOL_TAIL:
            fail("WOR2 remainder bound %s" % nstr(bnd, 3))
        if r1 > mpf('1e-25'):
            fail("WOR2 GL vs tanh-sinh %s" % nstr(r1, 3))
        if r2 > TOL_T2C:
            fail("WOR2 formula vs brute force %s" % nstr(r2, 3))
        if rel(parts['+-'], parts['-+']) > mpf('1e-20'):
            fail("WOR2 brute-force mirror components disagree")
        CHECKS.append(("WOR two steps (s=%g,g=%g,eps=%g): GL vs tanh-sinh "
                       "(dps 50) rel diff" % (s, g, eps), r1))
        CHECKS.append(("WOR two steps (s=%g,g=%g,eps=%g): formula vs 2-D "
                       "brute force over the realising pair (dps 30) rel diff"
                       % (s, g, eps), r2))
        rows2.append((s, g, T, eps, v, max(r1, r2)))
    log("part 5: %.1fs" % (time.time() - t0))
    return rows1, rows2


# ---------------------------------------------------------------------------
# Header
# ---------------------------------------------------------------------------

def d17(x):
    """C double literal, %.17g of the correctly rounded double."""
    if isinstance(x, float):
        v = x
    else:
        v = float(x)
    if v == 0:
        return "0.0"
    s = "%.17g" % v
    if all(ch not in s for ch in '.en'):
        s += ".0"
    return s


def dlog(x):
    """log(delta) as a C double expression (-INFINITY for delta == 0)."""
    if x is None:
        return "-INFINITY"
    return d17(x)


def dval(x):
    """delta as a double if >= 1e-300, else 0.0 (use log_delta)."""
    if x is None or x == 0:
        return "0.0", 1
    if x < mpf('1e-300'):
        return "0.0", 0
    return d17(x), 1


def emit(eps_rows, gdelta_rows, sgm_rows, lap_rows, comp_rows, wor1, wor2,
         elapsed):
    o = []
    w = o.append
    w("/* Generated file - do not edit.")
    w(" *")
    w(" * Regenerate (from the repository root):")
    w(" *     /usr/bin/python3 tests/ref/make_pld_reference.py")
    w(" * which rewrites tests/ref/pld_reference_values.h (see the script")
    w(" * docstring for every formula and verification method).")
    w(" * mpmath %s, Python %s; emitted values at mp.dps 50-100 (some"
      " cross-checks at dps 30-40)."
      % (mpmath.__version__, sys.version.split()[0]))
    w(" *")
    w(" * Conventions: Gaussian sensitivity 1, noise N(0,s^2); Laplace scale b,")
    w(" * sensitivity 1.  delta(eps) = E_P[(1 - e^{eps-L})_+], L = log dP/dQ.")
    w(" * remove: P = (1-q)N(0,s^2) + qN(1,s^2), Q = N(0,s^2);")
    w(" * add:    P = N(0,s^2), Q = (1-q)N(0,s^2) + qN(1,s^2).")
    w(" * Inputs are doubles; references are computed at exactly those doubles.")
    w(" * All doubles printed with %.17g (correctly rounded from >= 25 digits).")
    w(" *")
    w(" * Self-checks performed by the generator (all passed):")
    for desc, val in CHECKS:
        w(" *   %s: %s" % (desc, nstr(val, 3)))
    w(" *")
    w(" * Published dp_accounting values (assertAlmostEqual, 7 decimals unless")
    w(" * noted) vs these references:")
    for line in PUB_LINES:
        w(" *   " + line)
    w(" */")
    w("#ifndef DPZO_TESTS_REF_PLD_REFERENCE_VALUES_H")
    w("#define DPZO_TESTS_REF_PLD_REFERENCE_VALUES_H")
    w("")
    w("#include <math.h>   /* INFINITY */")
    w("#include <stddef.h>")
    w("")
    w("#ifndef DPZO_REF_UNUSED")
    w("#if defined(__GNUC__) || defined(__clang__)")
    w("#define DPZO_REF_UNUSED __attribute__((unused))")
    w("#else")
    w("#define DPZO_REF_UNUSED")
    w("#endif")
    w("#endif")
    w("")
    w("#define DPZO_PLD_REF_REMOVE 0  /* P = (1-q)N(0,s^2)+qN(1,s^2), Q = N(0,s^2) */")
    w("#define DPZO_PLD_REF_ADD 1     /* P = N(0,s^2), Q = (1-q)N(0,s^2)+qN(1,s^2) */")
    w("#define DPZO_PLD_REF_COUNT(a) (sizeof(a) / sizeof((a)[0]))")
    w("")

    # 1a
    w("/* 1a. T-fold Gaussian (q = 1) == mu-GDP with mu = sqrt(T)/sigma:")
    w(" * eps such that Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta.")
    w(" * Bracketed root of log delta(eps) - log delta (bisection + Anderson),")
    w(" * dps 100 (agrees with dps 60); 25 significant digits in the comment. */")
    w("typedef struct { double sigma, steps, mu, delta, eps; } dpzo_pld_ref_gdp_eps;")
    w("static const dpzo_pld_ref_gdp_eps DPZO_PLD_REF_GDP_EPS[] DPZO_REF_UNUSED = {")
    for sigma, T, mu, delta, e in eps_rows:
        w("    {%s, %s, %s, %s, %s}, /* eps = %s */" %
          (d17(sigma), d17(T), d17(mu), d17(delta), d17(e), nstr(e, 25)))
    w("};")
    w("#define DPZO_PLD_REF_GDP_EPS_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_GDP_EPS)")
    w("")
    # 1b
    w("/* 1b. Same mechanism, delta(eps) by the closed form at dps 100.")
    w(" * delta is stored when >= 1e-300 (delta_ok = 1); otherwise delta = 0.0 and")
    w(" * delta_ok = 0, and only log_delta (natural log, always stored) is usable. */")
    w("typedef struct { double sigma, steps, mu, eps, delta; int delta_ok; double log_delta; } dpzo_pld_ref_gdp_delta;")
    w("static const dpzo_pld_ref_gdp_delta DPZO_PLD_REF_GDP_DELTA[] DPZO_REF_UNUSED = {")
    for sigma, T, mu, eps, dlt, ld in gdelta_rows:
        dv, ok = dval(dlt)
        w("    {%s, %s, %s, %s, %s, %d, %s}, /* delta = %s */" %
          (d17(sigma), d17(T), d17(mu), d17(eps), dv, ok, d17(ld),
           nstr(dlt, 20)))
    w("};")
    w("#define DPZO_PLD_REF_GDP_DELTA_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_GDP_DELTA)")
    w("")
    # 2
    w("/* 2. One Poisson-subsampled Gaussian step, exact hockey-stick (closed form")
    w(" * via the threshold x* with L(x*) = eps; see the script).  dir is")
    w(" * DPZO_PLD_REF_REMOVE / DPZO_PLD_REF_ADD.  delta == 0 exactly for add when")
    w(" * eps >= -log(1-q) (log_delta = -INFINITY there); delta == 1 - e^eps exactly")
    w(" * for remove when eps <= log(1-q). */")
    w("typedef struct { double sigma, q; int dir; double eps, delta, log_delta; } dpzo_pld_ref_sgm1;")
    w("static const dpzo_pld_ref_sgm1 DPZO_PLD_REF_SGM1[] DPZO_REF_UNUSED = {")
    for s, q, d, eps, v, ld in sgm_rows:
        w("    {%s, %s, %s, %s, %s, %s}," %
          (d17(s), d17(q), "DPZO_PLD_REF_REMOVE" if d == REMOVE else
           "DPZO_PLD_REF_ADD", d17(eps), d17(v), dlog(ld)))
    w("};")
    w("#define DPZO_PLD_REF_SGM1_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_SGM1)")
    w("")
    # 3
    w("/* 3. Laplace mechanism (scale b, sensitivity 1), one step, Poisson rate q")
    w(" * (q = 1: no subsampling; then remove == add by symmetry).  remove:")
    w(" * P = (1-q)Lap(0,b) + qLap(1,b), Q = Lap(0,b); add: swapped roles.  The loss")
    w(" * has atoms at its extremes (x <= 0 and x >= 1).  Closed form, checked by")
    w(" * quadrature.  For q = 1: delta = 1 - exp((eps - 1/b)/2) on |eps| <= 1/b. */")
    w("typedef struct { double b, q; int dir; double eps, delta; } dpzo_pld_ref_laplace;")
    w("static const dpzo_pld_ref_laplace DPZO_PLD_REF_LAPLACE[] DPZO_REF_UNUSED = {")
    for b, q, d, eps, v in lap_rows:
        w("    {%s, %s, %s, %s, %s}," %
          (d17(b), d17(q), "DPZO_PLD_REF_REMOVE" if d == REMOVE else
           "DPZO_PLD_REF_ADD", d17(eps), d17(v)))
    w("};")
    w("#define DPZO_PLD_REF_LAPLACE_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_LAPLACE)")
    w("")
    # 4
    w("/* 4. T-fold composition (T = 2, 3) of the Poisson-subsampled Gaussian step,")
    w(" * each direction composed with itself.  Value: method A of the script")
    w(" * (coordinates ordered by their minimum; nested composite Gauss-Legendre with")
    w(" * closed-form innermost integral and closed-form corner; dps 50).  rel_err_est")
    w(" * = largest relative difference to the independent checks available for the")
    w(" * row: A2 (other quadrature, dps 40/30), B (conditioning on the first")
    w(" * coordinate, tanh-sinh, dps 50/30) and for T = 2 remove eps = 1 C (literal 2-D")
    w(" * integral).  add rows are exactly 0 when eps >= -T log(1-q). */")
    w("typedef struct { double sigma, q; int steps; int dir; double eps, delta, log_delta, rel_err_est; } dpzo_pld_ref_sgm_comp;")
    w("static const dpzo_pld_ref_sgm_comp DPZO_PLD_REF_SGM_COMP[] DPZO_REF_UNUSED = {")
    for s, q, T, d, eps, v, est in comp_rows:
        w("    {%s, %s, %d, %s, %s, %s, %s, %s}, /* %s */" %
          (d17(s), d17(q), T, "DPZO_PLD_REF_REMOVE" if d == REMOVE else
           "DPZO_PLD_REF_ADD", d17(eps), d17(v),
           dlog(mp.log(v) if v > 0 else None),
           ("%.2g" % float(est)) if est > 0 else "0.0", nstr(v, 20)))
    w("};")
    w("#define DPZO_PLD_REF_SGM_COMP_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_SGM_COMP)")
    w("")
    # 5
    w("/* 5a. Sampling without replacement, replace-one adjacency, g = batch/n:")
    w(" * symmetric PLD omega_sym = omega_A on losses > 0, mirrored on losses < 0 by")
    w(" * omega(-l) = e^{-l} omega_A(l), atom at 0 of mass 1 - P_A(L>0) - Q_A(L>0),")
    w(" * A = ((1-g)N(0,s^2) + gN(1,s^2), N(0,s^2)).  One step:")
    w(" * delta = delta_A(eps) for eps >= 0, 1 - e^eps (1 - delta_A(-eps)) for eps < 0. */")
    w("typedef struct { double sigma, g, eps, delta; } dpzo_pld_ref_wor_sym1;")
    w("static const dpzo_pld_ref_wor_sym1 DPZO_PLD_REF_WOR_SYM1[] DPZO_REF_UNUSED = {")
    for s, g, eps, v in wor1:
        w("    {%s, %s, %s, %s}," % (d17(s), d17(g), d17(eps), d17(v)))
    w("};")
    w("#define DPZO_PLD_REF_WOR_SYM1_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_WOR_SYM1)")
    w("")
    w("/* 5b. Same symmetric PLD composed with itself (steps = 2):")
    w(" * delta_2(eps) = E_{L1 ~ omega_sym}[delta_sym(eps - L1)], dps 50; checked against")
    w(" * a 2-D brute-force integration over a pair realising omega_sym.")
    w(" * rel_err_est = largest relative difference between the methods. */")
    w("typedef struct { double sigma, g; int steps; double eps, delta, rel_err_est; } dpzo_pld_ref_wor_sym2;")
    w("static const dpzo_pld_ref_wor_sym2 DPZO_PLD_REF_WOR_SYM2[] DPZO_REF_UNUSED = {")
    for s, g, T, eps, v, est in wor2:
        w("    {%s, %s, %d, %s, %s, %s}, /* %s */" %
          (d17(s), d17(g), T, d17(eps), d17(v),
           ("%.2g" % float(est)) if est > 0 else "0.0", nstr(v, 20)))
    w("};")
    w("#define DPZO_PLD_REF_WOR_SYM2_N DPZO_PLD_REF_COUNT(DPZO_PLD_REF_WOR_SYM2)")
    w("")
    w("#endif /* DPZO_TESTS_REF_PLD_REFERENCE_VALUES_H */")
    return "\n".join(o) + "\n"


def task(args):
    """Pool worker: returns (key, payload, seconds)."""
    if args[0] == 'W':
        key, val, sec = wor2_task(args)
        return key, val, sec
    a, v, tb, sec = comp_task(args)
    return a[:6], (v, tb), sec


def task_cost(args):
    """Rough cost order (largest first) for load balancing."""
    if args[0] == 'W':
        return 3 if args[-1] == 'brute' else 0
    return {('B', 3): 9, ('A', 3): 8, ('A2', 3): 7, ('C', 2): 5}.get(
        (args[0], args[1]), 1)


def main():
    t0 = time.time()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "pld_reference_values.h")
    if len(sys.argv) > 1:
        out = sys.argv[1]
    tasks = part4_tasks() + part5_tasks()
    tasks.sort(key=lambda a: -task_cost(a))
    pool = multiprocessing.Pool(2)
    # the pool starts working on the quadratures at once; the cheap closed
    # forms run in this process meanwhile
    it = pool.imap_unordered(task, tasks)
    mp.dps = DPS
    eps_rows, gdelta_rows = part1()
    sgm_rows = part2()
    check_published_sgm()
    lap_rows = part3()
    res = {}
    for key, val, sec in it:
        res[key] = val
        log("  %s -> %s (%.1fs)" % (key, nstr(val[0], 20), sec))
    pool.close()
    pool.join()
    mp.dps = DPS
    comp_rows = part4(res)
    wor1, wor2 = part5(res)
    elapsed = time.time() - t0
    for line in PUB_LINES:
        log(line)
    for desc, val in CHECKS:
        log("%s: %s" % (desc, nstr(val, 3)))
    if FAILURES:
        log("%d check(s) failed; header not written" % len(FAILURES))
        sys.exit(1)
    text = emit(eps_rows, gdelta_rows, sgm_rows, lap_rows, comp_rows, wor1,
                wor2, elapsed)
    if out == '-':
        sys.stdout.write(text)
    else:
        with open(out + ".tmp", "w") as fh:
            fh.write(text)
        os.replace(out + ".tmp", out)
        log("wrote %s" % out)
    log("total %.1fs" % elapsed)


if __name__ == "__main__":
    main()
