#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Joins bench/anchors_pld.py's and dpzo-bench-pld's JSON into Markdown tables.

Usage: python3 bench/report_pld.py anchors_pld.json ours_pld.json > report_pld.md
Ratios are anchor seconds / dpzo seconds measured in the same run of bench/run.sh.
"""
import json
import math
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    return [r for r in data if r.get("case") != "meta"], next(
        (r for r in data if r.get("case") == "meta"), {})


def key(r):
    return (r["case"], r["label"], r["library"], r["setting"])


def fnum(v, d=6):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if v != v:
        return "nan"
    if v == float("inf"):
        return "inf"
    return f"{v:.{d}g}"


def fdir(v, digits, up):
    """v with `digits` significant digits rounded up (upper bounds) or down (lower bounds),
    so a printed interval still contains what the proven one contains."""
    if v is None or isinstance(v, str) or v != v or v in (float("inf"), float("-inf")):
        return fnum(v)
    if v == 0:
        return "0"
    e = math.floor(math.log10(abs(v))) - digits + 1
    scaled = v / 10 ** e
    r = math.ceil(scaled) if up else math.floor(scaled)
    if e >= 0:
        return f"{r * 10 ** e:.0f}"
    return f"{r * 10 ** e:.{-e}f}"


def fsec(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def anchor_cell(r):
    if r is None:
        return "not run"
    st = r.get("status")
    if st == "ok":
        if r.get("eps_low") is not None:
            return f"[{fnum(r['eps_low'])}, {fnum(r['eps_up'])}] est {fnum(r['eps_est'])} ({fsec(r.get('seconds'))})"
        v = r.get("epsilon", r.get("delta"))
        return f"{fnum(v)} ({fsec(r.get('seconds'))})"
    msg = r.get("error") or r.get("reason") or st
    return f"{st}: {str(msg)[:60]}"


def ours_cell(r):
    if r is None:
        return "not run"
    if r.get("status") != "ok":
        return "error: " + r.get("error", "")[:60]
    if "epsilon_lower" in r:
        lo, est, hi = r["epsilon_lower"], r["epsilon_estimate"], r["epsilon_upper"]
    else:
        lo, est, hi = r["delta_lower"], r["delta_estimate"], r["delta_upper"]
    fb = " fallback" if r.get("fallback") else ""
    return (f"[{fdir(lo, 7, False)}, {fdir(hi, 7, True)}] est {fnum(est, 7)} "
            f"({fsec(r['seconds'])}, {r['memory_mb']:.0f} MiB){fb}")


def ratio(a, o):
    if a is None or o is None or a.get("status") != "ok" or o.get("status") != "ok":
        return "-"
    if not a.get("seconds") or not o.get("seconds"):
        return "-"
    return f"{a['seconds'] / o['seconds']:.1f}x"


def main():
    anchors, meta = load(sys.argv[1])
    ours, _ = load(sys.argv[2])
    A = {key(r): r for r in anchors}
    O = {key(r): r for r in ours}
    labels = []
    for r in ours:
        if (r["case"], r["label"]) not in labels:
            labels.append((r["case"], r["label"]))
    dpa = [k for k in A if k[2] == "dp_accounting"]
    prv = [k for k in A if k[2] == "prv_accountant"]
    print("# Tight accountants: dpzo vs dp_accounting PLD and microsoft prv_accountant\n")
    v = meta.get("versions", {})
    print(f"Anchors: dp_accounting {v.get('dp_accounting', '?')}, prv_accountant "
          f"{v.get('prv_accountant', '?')}, numpy {v.get('numpy', '?')}, python "
          f"{v.get('python', '?')}; machine: {meta.get('machine', {}).get('cpus', '?')} cores. "
          "dpzo runs the two adjacency directions on two threads. Intervals are dpzo's "
          "proven [lower, upper] bounds, printed rounded outward; `est` is the pessimistic discretisation's value "
          "(dp_accounting's number is of that kind). Cases: A self-composition of the "
          "Poisson-sampled Gaussian (q = 0.01, sigma = 1, delta = 1e-6); B n distinct steps "
          "(sigma in linspace(1, 2, n)); C small delta (k = 1000); D large epsilon "
          "(delta = 1e-5); E published vectors.\n")
    sections = {"A": "Self-composition", "B": "Distinct steps", "C": "Small delta",
                "D": "Large epsilon", "E": "Published vectors"}
    for c, title in sections.items():
        print(f"## {c}. {title}\n")
        print("| case | dp_accounting PLD | prv_accountant | dpzo PLD d=1e-4 | dpzo PLD d=1e-3 | dpzo PRV | speed-up (PLD, same d) |")
        print("|---|---|---|---|---|---|---|")
        for cc, lab in labels:
            if cc != c:
                continue
            a4 = A.get((c, lab, "dp_accounting", "d=1e-4"))
            a3 = A.get((c, lab, "dp_accounting", "d=1e-3"))
            ap = next((A[k] for k in prv if k[0] == c and k[1] == lab), None)
            o4 = O.get((c, lab, "dpzo", "pld d=0.0001"))
            o3 = O.get((c, lab, "dpzo", "pld d=0.001"))
            op = O.get((c, lab, "dpzo", "prv eps_error=0.01"))
            dcell = " / ".join(x for x in [
                ("d=1e-4: " + anchor_cell(a4)) if a4 else None,
                ("d=1e-3: " + anchor_cell(a3)) if a3 else None] if x) or "not run"
            sp = []
            if a4 and o4:
                sp.append("d=1e-4: " + ratio(a4, o4))
            if a3 and o3:
                sp.append("d=1e-3: " + ratio(a3, o3))
            if ap and op:
                sp.append("PRV: " + ratio(ap, op))
            print(f"| {lab} | {dcell} | {anchor_cell(ap)} | {ours_cell(o4)} | {ours_cell(o3)} | "
                  f"{ours_cell(op)} | {', '.join(sp) or '-'} |")
        print()


if __name__ == "__main__":
    main()
