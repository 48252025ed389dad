#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent high-precision reference generator for dpzo's cmocka tests.

Usage:
    /usr/bin/python3 tests/ref/make_reference.py > tests/ref/reference_values.h

Everything is computed with mpmath at mp.dps = 50 (plus guard digits where
noted) directly from the defining formulas; no existing accountant code is
used.  Diagnostics and timings go to stderr; the C header goes to stdout.

Tables
  1. DPZO_REF_SGM        RDP of the Poisson-subsampled Gaussian mechanism.
  2. DPZO_REF_WOR        RDP bound for sampling without replacement (replace-one,
                         Gaussian inner mechanism, Wang-Balle-Kasiviswanathan 2019
                         Thm 27 as described in the generator brief).
  3. DPZO_REF_GAUSS_CONV Improved RDP->(eps,delta) conversion (Balle et al. 2020,
                         Thm 21), continuous optimum, for T-fold Gaussian.
  4. DPZO_REF_SGM_CONV   Same conversion for the T-fold subsampled Gaussian,
                         continuous optimum over real alpha in [1.01, 256].

Subsampled-Gaussian quadrature (table 1 and 4)
  With u(z) = q*expm1((2z-1)/(2 sigma^2)) we have mu(z)/mu0(z) = 1 + u(z) and
      A(alpha) = int mu0(z) (1+u)^alpha dz.
  Because int mu0 u dz = 0 and int mu0 dz = 1,
      A - 1 = I = int mu0(z) [ (1+u)^alpha - 1 - alpha*u ] dz,
  whose integrand is >= 0 (Bernoulli) so there is no cancellation, and
  log A = log1p(I) is accurate even when A - 1 ~ 1e-18.  The integrand is
  evaluated with 140 extra guard bits (the bracket loses ~2*log10(1/|u|)
  digits for small u).  Breakpoints: the log-integrand is sampled in double
  precision on a sigma/4 grid over [-40 sigma, max(2, alpha, z0) + 40 sigma];
  its maximum M is found and the quadrature is run on exp(logf - M) with
  breakpoints every `step` across the region where logf >= M - 230 (plus the
  structural points 0, 1/2, z0 = sigma^2 log(1/q - 1) + 1/2 in variant 1),
  and [-inf, first], [last, +inf] tails.
  Variant 1: mp.dps = 50, tanh-sinh, step 2 sigma, structural breakpoints.
  Variant 2: mp.dps = 60, Gauss-Legendre, step 1.5 sigma shifted by 0.37 sigma,
             no structural breakpoints.
  Variant 3 (formulation check): the raw integral int mu0 (1+u)^alpha at
             mp.dps = 50 (tanh-sinh, own breakpoints), compared on log A.
  Integer alpha: also the exact finite sum
      A - 1 = sum_{k=2}^{alpha} C(alpha,k) (1-q)^(alpha-k) q^k expm1((k^2-k)/(2 sigma^2))
  (the k = 0, 1 terms cancel exactly against the binomial identity), which is
  the value emitted.
"""

import math
import multiprocessing
import sys
import time

import mpmath
from mpmath import mp, mpf

DPS = 50
mp.dps = DPS

SGM_SIGMAS = [0.3, 0.5, 0.8, 1.0, 1.1, 2.0, 5.0, 10.0, 50.0]
SGM_QS = [1e-6, 1e-4, 256 / 60000, 0.01, 0.1, 0.5, 0.9]
SGM_ALPHAS = [1.01, 1.1, 1.5, 2.0, 2.5, 3.7, 8.0, 10.5, 32.0, 100.0, 256.5, 1000.0]
BIG_ALPHAS = [4096, 10000]
BIG_SIGMAS = [0.5, 1.0, 5.0]
BIG_QS = [1e-4, 0.01, 0.5]

WOR_SIGMAS = [0.8, 1.0, 2.0, 5.0]
WOR_QS = [0.001, 0.01, 0.1]
WOR_ALPHAS = [2, 3, 4, 5, 8, 16, 32, 64]

GAUSS_CONV = [(1.0, 1.0, 1e-5), (4.530877117, 1.0, 1e-6), (2.0, 100.0, 1e-5),
              (10.0, 1000.0, 1e-8), (0.5, 10.0, 1e-3)]
SGM_CONV = [(256 / 60000, 1.1, 14063.0, 1e-5), (0.01, 1.0, 1000.0, 1e-6)]
SGM_CONV_RANGE = (1.01, 256.0)

RDP_MAX = 1e6
TOL_INT = mpf('1e-25')      # quadrature vs exact sum (integer alpha), relative on RDP
TOL_FRAC = mpf('1e-20')     # variant 1 vs variant 2 (all alpha), relative on RDP
TOL_QUAD_EST = mpf('1e-30')  # mpmath's own error estimate, relative
CUT_NATS = 230.0            # breakpoints cover logf >= max - CUT_NATS
EXTRA_BITS = 140            # guard bits inside the integrand


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def fmt(x, n=30):
    return mpmath.nstr(x, n, strip_zeros=False, min_fixed=0, max_fixed=0,
                       show_zero_exponent=True)


# ---------------------------------------------------------------------------
# Double-precision log-integrand, only used to place breakpoints and to skip
# points whose contribution is below 10^-(dps+26) of the peak.
# ---------------------------------------------------------------------------

def _logu_log1pu(t, q):
    """Return (u or None, log1p(u), log(u) or None) for u = q*expm1(t)."""
    if t > 40.0:
        logu = math.log(q) + t + math.log1p(-math.exp(-t))
        if logu > 40.0:
            return None, logu + math.log1p(math.exp(-logu)), logu
        u = math.exp(logu)
    else:
        u = q * math.expm1(t)
    return u, math.log1p(u), None


def log_bracket_float(alpha, t, q):
    """log of (1+u)^alpha - 1 - alpha*u (the I-form integrand factor)."""
    u, l1p, logu = _logu_log1pu(t, q)
    if u is None:
        a = alpha * l1p
        b = math.log(alpha) + logu + math.log1p(math.exp(-(math.log(alpha) + logu)))
        d = b - a
        return float('-inf') if d >= 0 else a + math.log(-math.expm1(d))
    if u == 0.0:
        return float('-inf')
    if abs(u) < 1e-3 and alpha * abs(u) < 0.1:
        term = alpha * u
        s = 0.0
        for k in range(2, 20):
            term *= (alpha - k + 1) / k * u
            s += term
        return math.log(s) if s > 0 else float('-inf')
    a = alpha * l1p
    one_au = 1.0 + alpha * u
    if one_au <= 0.0:
        return math.log(math.exp(a) - one_au)
    d = math.log1p(alpha * u) - a
    return float('-inf') if d >= 0 else a + math.log(-math.expm1(d))


def log_ratio_pow_float(alpha, t, q):
    """log of (1+u)^alpha (the raw A-form integrand factor)."""
    return alpha * _logu_log1pu(t, q)[1]


def profile(q, sigma, alpha, raw=False):
    s2 = sigma * sigma
    z0 = s2 * math.log(1.0 / q - 1.0) + 0.5
    lo = -40.0 * sigma
    hi = max(2.0, alpha, z0) + 40.0 * sigma
    h = 0.25 * sigma
    n = int(math.ceil((hi - lo) / h))
    fn = log_ratio_pow_float if raw else log_bracket_float
    zs, Ls = [], []
    for i in range(n + 1):
        z = lo + i * h
        zs.append(z)
        Ls.append(-z * z / (2 * s2) + fn(alpha, (2 * z - 1) / (2 * s2), q))
    return zs, Ls, z0


def breakpoints(zs, Ls, sigma, z0, step_sig, shift_sig, structural):
    Lmax = max(Ls)
    sup = [z for z, L in zip(zs, Ls) if L >= Lmax - CUT_NATS]
    step = step_sig * sigma
    start = sup[0] - 2 * step + shift_sig * sigma
    marks = set()
    for z in sup:
        j = int(math.floor((z - start) / step))
        marks.update((j - 1, j, j + 1, j + 2))
    pts = sorted(start + j * step for j in marks)
    if structural:
        for s in (0.0, 0.5, z0):
            if pts[0] < s < pts[-1]:
                pts.append(s)
    pts = sorted(set(pts))
    return Lmax, pts


# ---------------------------------------------------------------------------
# Quadrature for the Poisson-subsampled Gaussian
# ---------------------------------------------------------------------------

def sgm_quad(q, sigma, alpha, dps=DPS, step_sig=2.0, shift_sig=0.0,
             structural=True, method='tanh-sinh', kind='I'):
    """kind='I': returns I = A - 1; kind='J': returns dA/dalpha;
    kind='A': returns A via the raw integrand.  Returns (value, relerr_est,
    n_intervals).  alpha may be a float or an mpf."""
    alpha_f = float(alpha)
    zs, Ls, z0 = profile(q, sigma, alpha_f, raw=(kind == 'A'))
    Lmax, pts = breakpoints(zs, Ls, sigma, z0, step_sig, shift_sig, structural)
    s2f = sigma * sigma
    with mp.workdps(dps):
        qm = mpf(q)
        sm = mpf(sigma)
        am = mpf(alpha)
        s2 = sm * sm
        M = mpf(Lmax)
        cutoff = Lmax - (dps * 2.303 + 60.0)
        fl = log_ratio_pow_float if kind == 'A' else log_bracket_float

        def f(z):
            zf = float(z)
            if abs(zf) > 1e100:
                return mp.zero
            Lf = -zf * zf / (2 * s2f) + fl(alpha_f, (2 * zf - 1) / (2 * s2f), q)
            if Lf < cutoff:
                return mp.zero
            with mp.workprec(mp.prec + EXTRA_BITS):
                t = (2 * z - 1) / (2 * s2)
                u = qm * mpmath.expm1(t)
                lp = mpmath.log1p(u)
                if kind == 'I':
                    val = mpmath.expm1(am * lp) - am * u
                elif kind == 'J':
                    val = mpmath.exp(am * lp) * lp - u
                else:
                    val = mpmath.exp(am * lp)
                r = mpmath.exp(-z * z / (2 * s2) - M) * val
            return +r

        P = [mpmath.ninf] + [mpf(p) for p in pts] + [mpmath.inf]
        v, err = mpmath.quad(f, P, error=True, method=method)
        with mp.workprec(mp.prec + 64):
            val = mpmath.exp(M) * v / (sm * mpmath.sqrt(2 * mpmath.pi))
        relerr = err / abs(v) if v != 0 else mpmath.inf
    return val, relerr, len(P) - 1


def sgm_exact_I(q, sigma, n, extra=30):
    """Exact A - 1 for integer alpha = n (all terms nonnegative)."""
    with mp.workdps(DPS + extra):
        qm = mpf(q)
        s2 = mpf(sigma) ** 2
        p = 1 - qm
        tot = mpf(0)
        c = mpf(n)  # C(n, 1)
        for k in range(2, n + 1):
            c = c * (n - k + 1) / k
            tot += c * p ** (n - k) * qm ** k * mpmath.expm1(mpf(k * k - k) / (2 * s2))
    return tot


def rdp_from_I(I, alpha):
    with mp.workdps(DPS + 30):
        return mpmath.log1p(I) / (mpf(alpha) - 1)


def reldiff(a, b):
    with mp.workdps(DPS + 40):
        if a == b:
            return mpf(0)
        return abs(a - b) / max(abs(a), abs(b))


def task_sgm(q, sigma, alpha):
    t0 = time.time()
    res = {'kind': 'sgm', 'q': q, 'sigma': sigma, 'alpha': alpha, 'skip': None}
    I1, e1, n1 = sgm_quad(q, sigma, alpha)
    I2, e2, n2 = sgm_quad(q, sigma, alpha, dps=DPS + 10, step_sig=1.5,
                          shift_sig=0.37, structural=False, method='gauss-legendre')
    A3, e3, n3 = sgm_quad(q, sigma, alpha, kind='A')
    r1 = rdp_from_I(I1, alpha)
    r2 = rdp_from_I(I2, alpha)
    res['quad_est'] = max(e1, e2, e3)
    res['d12'] = reldiff(r1, r2)
    with mp.workdps(DPS + 30):
        logA1 = mpmath.log1p(I1)
        logA3 = mpmath.log(A3)
        res['d13_abs_logA'] = abs(logA1 - logA3)
        ok3 = res['d13_abs_logA'] <= mpf('1e-40') + mpf('1e-25') * abs(logA1)
    res['intervals'] = (n1, n2, n3)
    ref = r1
    if float(alpha).is_integer():
        IE = sgm_exact_I(q, sigma, int(alpha))
        rE = rdp_from_I(IE, alpha)
        res['dex'] = reldiff(r1, rE)
        res['dex2'] = reldiff(r2, rE)
        assert res['dex'] <= TOL_INT and res['dex2'] <= TOL_INT, \
            ("quadrature vs exact sum", q, sigma, alpha, res['dex'], res['dex2'])
        ref = rE
    if not (res['d12'] <= TOL_FRAC and ok3 and res['quad_est'] <= TOL_QUAD_EST):
        res['skip'] = 'not certified (d12=%s, d13=%s, est=%s)' % (
            mpmath.nstr(res['d12'], 3), mpmath.nstr(res['d13_abs_logA'], 3),
            mpmath.nstr(res['quad_est'], 3))
    elif ref > RDP_MAX:
        res['skip'] = 'RDP > 1e6'
    res['rdp'] = ref
    res['time'] = time.time() - t0
    return res


def task_big(q, sigma, n):
    t0 = time.time()
    I1 = sgm_exact_I(q, sigma, n, extra=30)
    I2 = sgm_exact_I(q, sigma, n, extra=60)
    r1 = rdp_from_I(I1, n)
    r2 = rdp_from_I(I2, n)
    res = {'kind': 'big', 'q': q, 'sigma': sigma, 'alpha': float(n), 'rdp': r1,
           'dprec': reldiff(r1, r2), 'skip': None}
    assert res['dprec'] <= TOL_INT
    if r1 > RDP_MAX:
        res['skip'] = 'RDP > 1e6'
    res['time'] = time.time() - t0
    return res


# ---------------------------------------------------------------------------
# Sampling without replacement (replace-one), Gaussian inner mechanism
# ---------------------------------------------------------------------------

def task_wor(q, sigma, alpha):
    t0 = time.time()
    dps = int(50 + alpha * alpha / (2 * sigma * sigma) / 2.3 + alpha) + 20
    with mp.workdps(dps):
        qm = mpf(q)
        s2 = mpf(sigma) ** 2

        def cgf(x):
            return mpf(x) * (x + 1) / (2 * s2)

        g = [mpmath.exp(cgf(a - 1)) for a in range(alpha + 2)]

        def D(m):
            return mpmath.fsum((-1) ** (m - i) * math.comb(m, i) * g[i]
                               for i in range(m + 1))

        Dc = {m: D(m) for m in range(0, alpha + 2, 2)}
        e1 = mpmath.exp(1 / s2)
        tot = qm ** 2 * math.comb(alpha, 2) * min(4 * (e1 - 1), 2 * e1)
        for i in range(3, alpha + 1):
            lo, hi = 2 * (i // 2), 2 * ((i + 1) // 2)
            b = min(4 * mpmath.sqrt(abs(Dc[lo]) * abs(Dc[hi])),
                    2 * mpmath.exp(cgf(i - 1)))
            tot += qm ** i * math.comb(alpha, i) * b
        rdp = mpmath.log1p(tot) / (alpha - 1)
        rdp = +rdp
    with mp.workdps(DPS):
        rdp = +rdp
    return {'kind': 'wor', 'q': q, 'sigma': sigma, 'alpha': alpha, 'rdp': rdp,
            'dps': dps, 'time': time.time() - t0}


# ---------------------------------------------------------------------------
# Improved conversion (Balle et al. 2020, Thm 21)
#   eps(alpha) = T*rdp(alpha) + log1p(-1/alpha) - log(delta*alpha)/(alpha-1)
#   d eps/d alpha * (alpha-1)^2 = T*[(alpha-1)^2 rdp'(alpha)] + log(delta*alpha)
# ---------------------------------------------------------------------------

def conv_eps(rdp_total, alpha, delta):
    alpha = mpf(alpha)
    return rdp_total + mpmath.log1p(-1 / alpha) - mpmath.log(mpf(delta) * alpha) / (alpha - 1)


def golden_min(fn, a, b, iters):
    gr = (mpmath.sqrt(5) - 1) / 2
    c = b - gr * (b - a)
    d = a + gr * (b - a)
    fc, fd = fn(c), fn(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - gr * (b - a)
            fc = fn(c)
        else:
            a, c, fc = c, d, fd
            d = a + gr * (b - a)
            fd = fn(d)
    return (c, fc) if fc < fd else (d, fd)


def task_gauss_conv(sigma, T, delta):
    t0 = time.time()
    with mp.workdps(DPS):
        s2 = mpf(sigma) ** 2
        Tm = mpf(T)
        dm = mpf(delta)

        def eps(a):
            return conv_eps(Tm * a / (2 * s2), a, dm)

        def F(a):  # (alpha-1)^2 * d eps / d alpha
            return Tm * (a - 1) ** 2 / (2 * s2) + mpmath.log(dm * a)

        lo, hi = mpf(1), mpf(2)
        while F(hi) <= 0:
            hi *= 2
        a_star = mpmath.findroot(F, (lo, hi), solver='anderson')
        a_star = mpmath.findroot(F, a_star, solver='newton')  # polish
        e_star = eps(a_star)
        # cross-check by golden section on eps itself
        a_g, e_g = golden_min(eps, lo + mpf('1e-12'), hi, 200)
        chk_e = abs(e_star - e_g)
        assert e_star <= e_g + mpf('1e-45') and chk_e < mpf('1e-40'), (sigma, T, delta)
        assert abs(a_star - a_g) < mpf('1e-15') * a_star
    return {'kind': 'gconv', 'sigma': sigma, 'T': T, 'delta': delta,
            'alpha': a_star, 'eps': e_star, 'golden_alpha_diff': abs(a_star - a_g),
            'time': time.time() - t0}


def task_sgm_conv(q, sigma, T, delta):
    t0 = time.time()
    with mp.workdps(DPS):
        Tm = mpf(T)
        dm = mpf(delta)
        cache = {}

        def I_of(a):
            key = ('I', a)
            if key not in cache:
                cache[key] = sgm_quad(q, sigma, a)[0]
            return cache[key]

        def eps(a):
            return conv_eps(Tm * mpmath.log1p(I_of(a)) / (a - 1), a, dm)

        def N(a):  # (alpha-1)^2 * d eps / d alpha
            A = 1 + I_of(a)
            J = sgm_quad(q, sigma, a, kind='J')[0]
            return Tm * ((a - 1) * J / A - mpmath.log(A)) + mpmath.log(dm * a)

        a0, a1 = SGM_CONV_RANGE
        ngrid = 41
        grid = [mpf(a0) * (mpf(a1) / a0) ** (mpf(i) / (ngrid - 1)) for i in range(ngrid)]
        grid[-1] = mpf(a1)
        vals = [eps(a) for a in grid]
        i = min(range(ngrid), key=lambda k: vals[k])
        assert 0 < i < ngrid - 1, "optimum at the edge of the alpha range"
        lo, hi = grid[i - 1], grid[i + 1]
        a_g, e_g = golden_min(eps, lo, hi, 60)
        Nlo, Nhi = N(lo), N(hi)
        assert Nlo < 0 < Nhi
        a_star = mpmath.findroot(N, (lo, hi), solver='anderson')
        e_star = eps(a_star)
        assert e_star <= e_g + mpf('1e-40')
        assert abs(a_star - a_g) < mpf('1e-8') * a_star
        # independent quadrature (variant 2) at the optimum
        I2 = sgm_quad(q, sigma, a_star, dps=DPS + 10, step_sig=1.5, shift_sig=0.37,
                      structural=False, method='gauss-legendre')[0]
        e2 = conv_eps(Tm * mpmath.log1p(I2) / (a_star - 1), a_star, dm)
        d12 = reldiff(e_star, e2)
        assert d12 <= TOL_FRAC
    return {'kind': 'sconv', 'q': q, 'sigma': sigma, 'T': T, 'delta': delta,
            'alpha': a_star, 'eps': e_star, 'alpha_golden': a_g, 'eps_golden': e_g,
            'd12': d12, 'time': time.time() - t0}


def run_task(args):
    idx, kind, params = args
    fn = {'sgm': task_sgm, 'big': task_big, 'wor': task_wor,
          'gconv': task_gauss_conv, 'sconv': task_sgm_conv}[kind]
    mp.dps = DPS
    return idx, fn(*params)


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def r(x):
    return repr(float(x))


def main():
    t_start = time.time()
    tasks = []
    for p in SGM_CONV:
        tasks.append(('sconv', p))
    for p in GAUSS_CONV:
        tasks.append(('gconv', p))
    for s in SGM_SIGMAS:
        for q in SGM_QS:
            for a in SGM_ALPHAS:
                tasks.append(('sgm', (q, s, a)))
    for n in BIG_ALPHAS:
        for s in BIG_SIGMAS:
            for q in BIG_QS:
                tasks.append(('big', (q, s, n)))
    for s in WOR_SIGMAS:
        for q in WOR_QS:
            for a in WOR_ALPHAS:
                tasks.append(('wor', (q, s, a)))
    jobs = [(i, k, p) for i, (k, p) in enumerate(tasks)]
    results = [None] * len(jobs)
    with multiprocessing.Pool(2) as pool:
        done = 0
        for idx, res in pool.imap_unordered(run_task, jobs, chunksize=1):
            results[idx] = res
            done += 1
            if res['time'] > 20 or done % 50 == 0 or res['kind'] in ('sconv', 'gconv'):
                log('[%4d/%d] %s %.1fs (elapsed %.0fs)' % (
                    done, len(jobs), res['kind'], res['time'], time.time() - t_start))
    elapsed = time.time() - t_start

    sgm = [x for x in results if x['kind'] in ('sgm', 'big')]
    sgm_rows = [x for x in sgm if x['skip'] is None]
    skipped = [x for x in sgm if x['skip'] is not None]
    wor = [x for x in results if x['kind'] == 'wor']
    gconv = [x for x in results if x['kind'] == 'gconv']
    sconv = [x for x in results if x['kind'] == 'sconv']
    quad = [x for x in sgm if x['kind'] == 'sgm']
    frac = [x for x in quad if not float(x['alpha']).is_integer()]
    intg = [x for x in quad if float(x['alpha']).is_integer()]
    max_d12_frac = max(x['d12'] for x in frac)
    max_d12_all = max(x['d12'] for x in quad)
    max_dex = max(max(x['dex'], x['dex2']) for x in intg)
    max_d13 = max(x['d13_abs_logA'] for x in quad)
    max_est = max(x['quad_est'] for x in quad)
    max_big = max(x['dprec'] for x in results if x['kind'] == 'big')
    max_sconv = max(x['d12'] for x in sconv)
    slowest = max(quad, key=lambda x: x['time'])

    def n3(x):
        return mpmath.nstr(x, 3)

    stats = [
        'SGM fractional alpha, variant1 (ts, dps50) vs variant2 (GL, dps60, other split),',
        '  max relative disagreement on RDP: %s' % n3(max_d12_frac),
        'SGM all quadrature points, variant1 vs variant2: %s' % n3(max_d12_all),
        'SGM integer alpha, quadrature (both variants) vs exact sum, max rel: %s' % n3(max_dex),
        'SGM raw-integrand form vs I-form, max |diff log A|: %s' % n3(max_d13),
        'SGM mpmath quad relative error estimate, max: %s' % n3(max_est),
        'SGM alpha in {4096,10000} exact sum, dps 80 vs 110, max rel: %s' % n3(max_big),
        'SGM conversion eps*, variant1 vs variant2 quadrature, max rel: %s' % n3(max_sconv),
    ]
    for s in stats:
        log(s)
    log('slowest SGM point: q=%r sigma=%r alpha=%r %.2fs' % (
        slowest['q'], slowest['sigma'], slowest['alpha'], slowest['time']))
    log('rows: SGM %d (skipped %d), WOR %d, GAUSS_CONV %d, SGM_CONV %d' % (
        len(sgm_rows), len(skipped), len(wor), len(gconv), len(sconv)))
    for x in sconv:
        log('sconv q=%r sigma=%r T=%r delta=%r: alpha*=%s eps*=%s (golden: %s %s)' % (
            x['q'], x['sigma'], x['T'], x['delta'], mpmath.nstr(x['alpha'], 20),
            mpmath.nstr(x['eps'], 20), mpmath.nstr(x['alpha_golden'], 20),
            mpmath.nstr(x['eps_golden'], 20)))
    log('total runtime %.1fs' % elapsed)

    out = []
    w = out.append
    w('/* Generated file - do not edit.')
    w(' *')
    w(' * Command:  /usr/bin/python3 tests/ref/make_reference.py > tests/ref/reference_values.h')
    w(' * mpmath %s, Python %s, mp.dps = %d (guard digits as documented in the script).'
      % (mpmath.__version__, sys.version.split()[0], DPS))
    w(' * Independent reference values computed from the defining formulas (see')
    w(' * make_reference.py docstring). Input doubles are written with repr() and the')
    w(' * references are computed at exactly those doubles.')
    w(' *')
    w(' * Accuracy checks performed by the generator:')
    for s in stats:
        w(' *   ' + s)
    w(' *')
    w(' * Integer-alpha SGM rows use the exact finite binomial sum; fractional-alpha rows')
    w(' * use the dps-50 tanh-sinh quadrature of A-1 (certified against the second')
    w(' * variant to 1e-20 relative).')
    if skipped:
        w(' * Skipped SGM points (RDP > 1e6 or quadrature not certified):')
        for x in skipped:
            w(' *   q=%r sigma=%r alpha=%r: %s' % (x['q'], x['sigma'], x['alpha'], x['skip']))
    else:
        w(' * Skipped SGM points: none (no point had RDP > 1e6 or failed certification;')
        w(' * max RDP on the grid is %s).' % fmt(max(x['rdp'] for x in sgm), 6))
    w(' */')
    w('#ifndef DPZO_TESTS_REF_REFERENCE_VALUES_H')
    w('#define DPZO_TESTS_REF_REFERENCE_VALUES_H')
    w('')
    w('#include <stddef.h>')
    w('')
    w('#if defined(__GNUC__) || defined(__clang__)')
    w('#define DPZO_REF_UNUSED __attribute__((unused))')
    w('#else')
    w('#define DPZO_REF_UNUSED')
    w('#endif')
    w('')
    w('/* RDP (per step) of the Poisson-subsampled Gaussian, sensitivity 1. */')
    w('typedef struct { double q, sigma, alpha; const char *rdp; } dpzo_ref_sgm;')
    w('')
    w('static const dpzo_ref_sgm DPZO_REF_SGM[] DPZO_REF_UNUSED = {')
    for x in sgm_rows:
        w('    {%s, %s, %s, "%s"},' % (r(x['q']), r(x['sigma']), r(x['alpha']), fmt(x['rdp'])))
    w('};')
    w('static const size_t DPZO_REF_SGM_N DPZO_REF_UNUSED = %d;' % len(sgm_rows))
    w('')
    w('/* RDP bound, sampling without replacement (replace-one), Gaussian inner')
    w(' * mechanism, WBK19 Thm 27 with the min(4*(e^(1/s^2)-1), 2e^(1/s^2)) i=2 term. */')
    w('typedef struct { double q, sigma; int alpha; const char *rdp; } dpzo_ref_wor;')
    w('')
    w('static const dpzo_ref_wor DPZO_REF_WOR[] DPZO_REF_UNUSED = {')
    for x in wor:
        w('    {%s, %s, %d, "%s"},' % (r(x['q']), r(x['sigma']), x['alpha'], fmt(x['rdp'])))
    w('};')
    w('static const size_t DPZO_REF_WOR_N DPZO_REF_UNUSED = %d;' % len(wor))
    w('')
    w('/* Improved RDP->DP conversion (Balle et al. 2020 Thm 21), T-fold Gaussian')
    w(' * (RDP = T*alpha/(2 sigma^2)), continuous optimum over real alpha > 1. */')
    w('typedef struct { double sigma; double steps; double delta; const char *alpha_opt; const char *eps_opt; } dpzo_ref_gauss_conv;')
    w('')
    w('static const dpzo_ref_gauss_conv DPZO_REF_GAUSS_CONV[] DPZO_REF_UNUSED = {')
    for x in gconv:
        w('    {%s, %s, %s, "%s", "%s"},' % (r(x['sigma']), r(x['T']), r(x['delta']),
                                            fmt(x['alpha']), fmt(x['eps'])))
    w('};')
    w('static const size_t DPZO_REF_GAUSS_CONV_N DPZO_REF_UNUSED = %d;' % len(gconv))
    w('')
    w('/* Same conversion for the T-fold Poisson-subsampled Gaussian; continuous')
    w(' * optimum over real alpha in [%s, %s]. */' % (r(SGM_CONV_RANGE[0]), r(SGM_CONV_RANGE[1])))
    w('typedef struct { double q, sigma, steps, delta; const char *alpha_opt; const char *eps_opt; } dpzo_ref_sgm_conv;')
    w('')
    w('static const dpzo_ref_sgm_conv DPZO_REF_SGM_CONV[] DPZO_REF_UNUSED = {')
    for x in sconv:
        w('    {%s, %s, %s, %s, "%s", "%s"},' % (r(x['q']), r(x['sigma']), r(x['T']), r(x['delta']),
                                                fmt(x['alpha']), fmt(x['eps'])))
    w('};')
    w('static const size_t DPZO_REF_SGM_CONV_N DPZO_REF_UNUSED = %d;' % len(sconv))
    w('')
    w('#endif /* DPZO_TESTS_REF_REFERENCE_VALUES_H */')
    sys.stdout.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
