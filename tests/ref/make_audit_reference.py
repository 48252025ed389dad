#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference values for tests/test_audit.c (the attack bounds of dpzo/audit.h), computed
independently of dpzo with mpmath at 50 digits, from the defining formulas only.

1. One-sided Clopper-Pearson bounds. For k successes in n trials and level L:
     upper: the p with P[Bin(n, p) <= k] = 1 - L, i.e. I_p(k + 1, n - k) = L  (k < n; 1 if k = n)
     lower: the p with P[Bin(n, p) >= k] = 1 - L, i.e. I_p(k, n - k + 1) = 1 - L (k > 0; 0 if k = 0)
   solved by bisection and Newton on the binomial tail summed term by term (not a quantile
   routine), and cross-checked against mpmath's regularized incomplete beta where n <= 400.
2. Membership inference: eps >= max(log((1 - delta - FPR+)/FNR+), log((1 - delta - FNR+)/FPR+), 0)
   with FPR+ = upper(FP, FP + TN, L), FNR+ = upper(FN, FN + TP, L), L = 1 - (1 - c)/2.
   For scores, every distinct score is a threshold (score >= t: "member"), each evaluated at
   L = 1 - (1 - c)/(2K) for K thresholds, and the largest bound is reported.
3. One run (Steinke, Nasr, Jagielski 2023): with B ~ Bin(r, e^eps/(1 + e^eps)),
     p(eps) = P[B >= v] + 2 m delta max_{1<=i<=v} P[v - i <= B < v] / i
   from exact binomial terms (the maximum over every i, no shortcut), and the largest eps with
   p(eps) < 1 - c by bisection to 1e-15.

Run: python3 tests/ref/make_audit_reference.py > tests/ref/audit_values.h  (about 20 s)
"""
import sys
from mpmath import mp, mpf, betainc, binomial, exp, log, log1p, nstr

mp.dps = 50


def reg_beta(x, a, b):
    return betainc(a, b, 0, x, regularized=True)


def binom_cdf(k, n, p):
    """P[Bin(n, p) <= k], terms by the ratio recurrence from the mode side (no cancellation:
    every term is positive)."""
    p = mpf(p)
    t = exp(n * log1p(-p))  # j = 0
    total = t
    for j in range(1, k + 1):
        t *= (n - j + 1) * p / (j * (1 - p))
        total += t
    return total


def beta_density(x, a, b):  # density of Beta(a, b) for integers a, b >= 1
    return (a + b - 1) * binomial(a + b - 2, a - 1) * x ** (a - 1) * (1 - x) ** (b - 1)


def solve_cdf(F, dens, target):
    """x in (0, 1) with F(x) = target, F increasing with derivative dens: bisection to 2^-64,
    then Newton to 50 digits."""
    lo, hi = mpf(0), mpf(1)
    for _ in range(64):
        mid = (lo + hi) / 2
        if F(mid) < target:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    for _ in range(60):
        dx = (F(x) - target) / dens(x)
        x -= dx
        if abs(dx) < abs(x) * mpf(10) ** -40:
            break
    else:
        raise RuntimeError("Newton did not converge")
    return x


def cp_upper(k, n, level):
    """I_u(k+1, n-k) = P[Bin(n, u) >= k+1] = level."""
    if k == n:
        return mpf(1)
    u = solve_cdf(lambda x: 1 - binom_cdf(k, n, x), lambda x: beta_density(x, k + 1, n - k),
                  mpf(level))
    if n <= 400:  # mpmath's incomplete beta as an independent check of the binomial route
        assert abs(reg_beta(u, k + 1, n - k) - mpf(level)) < mpf(10) ** -35, (k, n, level)
    return u


def cp_lower(k, n, level):
    """I_l(k, n-k+1) = P[Bin(n, l) >= k] = 1 - level."""
    if k == 0:
        return mpf(0)
    l = solve_cdf(lambda x: 1 - binom_cdf(k - 1, n, x), lambda x: beta_density(x, k, n - k + 1),
                  1 - mpf(level))
    if n <= 400:
        assert abs(reg_beta(l, k, n - k + 1) - (1 - mpf(level))) < mpf(10) ** -35, (k, n, level)
    return l


def counts_eps(tp, fp, tn, fn, delta, level):
    fpr = cp_upper(fp, fp + tn, level)
    fnr = cp_upper(fn, fn + tp, level)
    best = mpf(0)
    d = mpf(delta)
    if 1 - d - fpr > 0 and fnr > 0:
        best = max(best, log((1 - d - fpr) / fnr))
    if 1 - d - fnr > 0 and fpr > 0:
        best = max(best, log((1 - d - fnr) / fpr))
    return best, fpr, fnr


def scores_eps(ins, outs, delta, conf):
    ts = sorted(set(ins) | set(outs))
    level = 1 - (1 - mpf(conf)) / (2 * len(ts))
    best = (mpf(-1), None)
    for t in ts:
        tp = sum(1 for s in ins if s >= t)
        fp = sum(1 for s in outs if s >= t)
        e, _, _ = counts_eps(tp, fp, len(outs) - fp, len(ins) - tp, delta, level)
        if e > best[0]:
            best = (e, t)
    return best


def one_run_p(m, r, v, eps, delta):
    p = 1 / (1 + exp(-mpf(eps)))
    pmf = [binomial(r, j) * p**j * (1 - p)**(r - j) for j in range(r + 1)]
    tail = sum(pmf[v:])
    best, s = mpf(0), mpf(0)
    for i in range(1, v + 1):
        s += pmf[v - i]
        best = max(best, s / i)
    return tail + best * mpf(delta) * 2 * m


def one_run_eps(m, r, v, delta, conf):
    beta = 1 - mpf(conf)
    if one_run_p(m, r, v, 0, delta) >= beta:
        return mpf(0)
    lo, hi = mpf(0), mpf(1)
    while one_run_p(m, r, v, hi, delta) < beta:
        lo, hi = hi, hi * 2
    while hi - lo > mpf(10) ** -15:
        mid = (lo + hi) / 2
        if one_run_p(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo


CP_CASES = [  # k, n, level
    (0, 1, 0.95), (1, 1, 0.95), (0, 10, 0.975), (3, 10, 0.975), (10, 10, 0.9),
    (5, 100, 0.95), (50, 100, 0.995), (0, 1000, 0.975), (17, 1000, 0.975), (999, 1000, 0.975),
    (123, 5000, 0.999), (1, 100000, 0.975), (40000, 100000, 0.95), (3, 7, 0.5),
]
COUNT_CASES = [  # tp, fp, tn, fn, delta, confidence
    (950, 50, 950, 50, 0.0, 0.95),
    (950, 50, 950, 50, 1e-5, 0.95),
    (1000, 0, 1000, 0, 0.0, 0.95),
    (600, 400, 600, 400, 0.0, 0.95),   # nothing proven
    (99, 1, 60, 40, 1e-5, 0.99),
    (5000, 10, 9990, 5000, 1e-6, 0.9),
    (30, 2, 28, 0, 0.0, 0.95),
]
SCORES = (  # members and non-members: deterministic, overlapping, with ties; delta, confidence
    [round(0.55 + ((i * 37) % 101) / 101, 6) for i in range(80)] + [0.8, 0.8, 0.3],
    [round(((i * 53) % 97) / 97, 6) for i in range(80)] + [0.8, 0.6],
    1e-6, 0.95)
ONE_RUN_CASES = [  # m, r, v, delta, confidence, eps for the p-value
    (1000, 100, 100, 0.0, 0.95, 1.0),
    (1000, 100, 95, 1e-5, 0.95, 2.0),
    (1000, 600, 600, 1e-5, 0.95, 3.0),
    (100, 100, 100, 1e-5, 0.95, 4.0),
    (5000, 200, 150, 1e-6, 0.99, 0.5),
    (1000, 100, 50, 1e-5, 0.95, 0.1),  # nothing proven
    (10000, 1000, 700, 0.0, 0.9, 0.7),
    (2000, 50, 48, 1e-3, 0.95, 2.5),
]


def s(x):
    return nstr(x, 30, min_fixed=-1, max_fixed=-1) if x != 0 else "0"


def main():
    out = []
    w = out.append
    w("/* Generated by tests/ref/make_audit_reference.py (mpmath, 50 digits): Clopper-Pearson")
    w(" * bounds, membership-inference epsilon lower bounds and the one-run bound of Steinke,")
    w(" * Nasr and Jagielski (2023), from the defining formulas. Do not edit. */")
    w("#ifndef DPZO_AUDIT_VALUES_H")
    w("#define DPZO_AUDIT_VALUES_H")
    w("#include <stdint.h>")
    w("typedef struct { uint64_t k, n; double level, upper, lower; } cp_ref;")
    w("static const cp_ref CP_REF[] = {")
    for k, n, lv in CP_CASES:
        w(f"    {{{k}, {n}, {lv!r}, {s(cp_upper(k, n, lv))}, {s(cp_lower(k, n, lv))}}},")
        print(f"cp {k}/{n}", file=sys.stderr)
    w("};")
    w("#define CP_REF_N (sizeof CP_REF / sizeof CP_REF[0])")
    w("typedef struct { uint64_t tp, fp, tn, fn; double delta, confidence, epsilon, fpr_upper, fnr_upper; } counts_ref;")
    w("static const counts_ref COUNTS_REF[] = {")
    for tp, fp, tn, fn, d, c in COUNT_CASES:
        e, fu, nu = counts_eps(tp, fp, tn, fn, d, 1 - (1 - mpf(c)) / 2)
        w(f"    {{{tp}, {fp}, {tn}, {fn}, {d!r}, {c!r}, {s(e)}, {s(fu)}, {s(nu)}}},")
    w("};")
    w("#define COUNTS_REF_N (sizeof COUNTS_REF / sizeof COUNTS_REF[0])")
    ins, outs, d, c = SCORES
    e, t = scores_eps(ins, outs, d, c)
    w("static const double SCORES_IN[] = {" + ", ".join(repr(x) for x in ins) + "};")
    w("static const double SCORES_OUT[] = {" + ", ".join(repr(x) for x in outs) + "};")
    w(f"static const double SCORES_DELTA = {d!r}, SCORES_CONFIDENCE = {c!r};")
    w(f"static const double SCORES_EPSILON = {s(e)}, SCORES_THRESHOLD = {t!r};")
    w(f"static const size_t SCORES_THRESHOLDS = {len(set(ins) | set(outs))};")
    # the same scores at a fixed threshold 0.9: no Bonferroni factor
    tp = sum(1 for x in ins if x >= 0.9)
    fp = sum(1 for x in outs if x >= 0.9)
    e6, _, _ = counts_eps(tp, fp, len(outs) - fp, len(ins) - tp, d, 1 - (1 - mpf(c)) / 2)
    w(f"static const double SCORES_EPSILON_AT_0_9 = {s(e6)};")
    w("typedef struct { uint64_t m, r, v; double delta, confidence, eps_p, p_value, epsilon; } one_run_ref;")
    w("static const one_run_ref ONE_RUN_REF[] = {")
    for m, r, v, dl, cf, ep in ONE_RUN_CASES:
        p = min(one_run_p(m, r, v, ep, dl), mpf(1))
        e = one_run_eps(m, r, v, dl, cf)
        w(f"    {{{m}, {r}, {v}, {dl!r}, {cf!r}, {ep!r}, {s(p)}, {s(e)}}},")
        print(f"one run {m} {r} {v}: eps {nstr(e, 12)}", file=sys.stderr)
    w("};")
    w("#define ONE_RUN_REF_N (sizeof ONE_RUN_REF / sizeof ONE_RUN_REF[0])")
    w("#endif")
    print("\n".join(out))


if __name__ == "__main__":
    main()
