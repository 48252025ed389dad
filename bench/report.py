#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown report comparing dpzo-bench timings with the reference anchors.

Usage: python3 bench/report.py anchors.json ours.json > report.md

anchors.json is the output of bench/anchors.py (dp_accounting and opacus);
ours.json is the output of build/bin/dpzo-bench. Ratios are
anchor_time / our_time (so > 1 means dpzo is faster). Missing values are
written "n/a"; non-finite values arrive as the strings "nan"/"inf" and are
shown as such. Missing keys or files never make the report fail.
"""

import json
import math
import sys

NA = "n/a"


# --------------------------------------------------------------------------
# Tolerant access and formatting
# --------------------------------------------------------------------------

def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"report.py: cannot read {path}: {e}", file=sys.stderr)
        return {}
    if not isinstance(data, dict):
        print(f"report.py: {path}: top level is not a JSON object", file=sys.stderr)
        return {}
    return data


def get(obj, *keys):
    """obj[k1][k2]... or None if any level is missing / of the wrong type."""
    for k in keys:
        if isinstance(obj, dict):
            obj = obj.get(k)
        elif isinstance(obj, list) and isinstance(k, int) and -len(obj) <= k < len(obj):
            obj = obj[k]
        else:
            return None
        if obj is None:
            return None
    return obj


def num(v):
    """A float from a JSON value (numbers, "nan", "inf", "-inf"), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("nan", "+nan", "-nan"):
            return math.nan
        if s in ("inf", "+inf", "infinity", "+infinity"):
            return math.inf
        if s in ("-inf", "-infinity"):
            return -math.inf
        try:
            return float(s)
        except ValueError:
            return None
    return None


def finite(v):
    x = num(v)
    return x if x is not None and math.isfinite(x) else None


def fmt(v, digits=4):
    """Number with `digits` significant digits; strings as given; None -> n/a."""
    if v is None:
        return NA
    if isinstance(v, str) and num(v) is None:
        return v
    x = num(v)
    if x is None:
        return NA
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10**15:
        return str(v)
    if x == 0:
        return "0"
    ax = abs(x)
    if ax < 1e-4 or ax >= 1e9:
        return f"{x:.{digits - 1}e}"
    # `digits` significant digits, but never round away integer digits.
    sig = max(digits, int(math.floor(math.log10(ax))) + 1)
    return f"{x:.{sig}g}"


def fmt_int(v):
    x = finite(v)
    if x is None:
        return NA
    if x == int(x):
        n = int(x)
        if n >= 10**6 and n % 10**6 == 0 and n == 10 ** int(round(math.log10(n))):
            return f"10^{int(round(math.log10(n)))}"
        return str(n)
    return fmt(x)


def ratio(anchor, ours):
    a, o = finite(anchor), finite(ours)
    if a is None or o is None or o <= 0 or a < 0:
        return None
    return a / o


def fmt_ratio(r, prefix=""):
    if r is None:
        return NA
    if r >= 100:
        return f"{prefix}{r:,.0f}×"
    if r >= 10:
        return f"{prefix}{r:.1f}×"
    return f"{prefix}{r:.2f}×"


def fmt_time_s(s):
    """Seconds, in a readable unit."""
    x = finite(s)
    if x is None:
        return fmt(s)
    if x == 0:
        return "0 s"
    if x < 1e-6:
        return f"{x * 1e9:.3g} ns"
    if x < 1e-3:
        return f"{x * 1e6:.3g} µs"
    if x < 1:
        return f"{x * 1e3:.3g} ms"
    return f"{x:.3g} s"


def rel_diff(a, b):
    x, y = finite(a), finite(b)
    if x is None or y is None:
        return None
    denom = max(abs(x), abs(y))
    return 0.0 if denom == 0 else abs(x - y) / denom


def table(headers, rows, align=None):
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    sep = [":--" if a == "l" else "--:" for a in align]
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        cells = [str(c) if c is not None else NA for c in r]
        cells += [NA] * (len(headers) - len(cells))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def as_list(v):
    return v if isinstance(v, list) else []


# --------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------

def section_per_order(anc, ours):
    lines = ["## 1. One subsampled Gaussian step: cost per (event, order)", "",
             "Poisson-subsampled Gaussian, q=0.01, σ=1, one step; ε at δ=1e-6. "
             "Ratio = anchor µs/order ÷ our µs/order on the same order grid "
             "(> 1: dpzo faster).", ""]
    a_dp = get(anc, "per_order", "dp_accounting") or {}
    a_op = get(anc, "per_order", "opacus") or {}
    o_dp = get(ours, "per_order", "dp_accounting_grid") or {}
    o_op = get(ours, "per_order", "opacus_grid") or {}
    o_ct = get(ours, "per_order", "continuous") or {}

    rows = []
    for label, o, a, aname in (("dp_accounting default", o_dp, a_dp, "dp_accounting"),
                               ("opacus DEFAULT_ALPHAS", o_op, a_op, "opacus")):
        orders = get(o, "orders") if get(o, "orders") is not None else get(a, "orders")
        rows.append([
            label, fmt_int(orders),
            fmt(get(o, "us_per_order")),
            f"{fmt(get(a, 'us_per_order'))} ({aname})",
            fmt_ratio(ratio(get(a, "us_per_order"), get(o, "us_per_order"))),
            fmt(get(o, "epsilon"), 8), fmt(get(a, "epsilon"), 8),
            fmt(rel_diff(get(o, "epsilon"), get(a, "epsilon")), 2),
        ])
    lines.append(table(["Order grid", "Orders", "Ours µs/order", "Anchor µs/order",
                        "Anchor / ours", "ε ours", "ε anchor", "rel. Δε"], rows))
    lines.append("")

    # Whole event: all orders of a grid (anchors) vs our per-event totals.
    def total_us(d):
        t = finite(get(d, "us_total"))
        if t is not None:
            return t
        u, n = finite(get(d, "us_per_order")), finite(get(d, "orders"))
        return u * n if u is not None and n is not None else None

    a_dp_tot, a_op_tot = total_us(a_dp), total_us(a_op)
    rows = []
    for label, o in (("ours, dp_accounting grid", o_dp), ("ours, opacus grid", o_op),
                     ("ours, continuous order", o_ct)):
        t = total_us(o)
        order = get(o, "order")
        rows.append([
            label, fmt(t),
            fmt_ratio(ratio(a_dp_tot, t)), fmt_ratio(ratio(a_op_tot, t)),
            fmt(get(o, "epsilon"), 8), fmt(order) if order is not None else NA,
        ])
    rows.append(["dp_accounting (156 orders)", fmt(a_dp_tot), "1×" if a_dp_tot else NA,
                 fmt_ratio(ratio(a_op_tot, a_dp_tot)), fmt(get(a_dp, "epsilon"), 8),
                 fmt(get(a_dp, "order"))])
    rows.append(["opacus (151 orders)", fmt(a_op_tot),
                 fmt_ratio(ratio(a_dp_tot, a_op_tot)), "1×" if a_op_tot else NA,
                 fmt(get(a_op, "epsilon"), 8), fmt(get(a_op, "order"))])
    lines.append("Whole event (all orders, plus ε conversion for the continuous optimum):")
    lines.append("")
    lines.append(table(["Method", "µs / event", "dp_accounting / this",
                        "opacus / this", "ε (δ=1e-6)", "order"], rows))
    return lines


def section_hetero(anc, ours):
    lines = ["## 2. Heterogeneous composition: n distinct single steps", "",
             "Event i: Poisson-subsampled Gaussian, q=0.01, σ_i = linspace(1, 2, n); "
             "ε at δ=1e-6. Ratio per event = anchor s/event ÷ our s/event at the "
             "same n; `~` marks an extrapolation from the anchor's largest measured "
             "n (its cost is linear in n). The continuous rows are compared with "
             "dp_accounting (its ε is on a grid, ours is not). \"Ours time\" is the whole "
             "certified query (search, then MPFR certification of every distinct event); "
             "\"same work\" is what the anchors do: the fast RDP curve on the grid and "
             "the conversion, no certification.", ""]
    anchor_lists = {
        "dp_accounting": [r for r in as_list(get(anc, "hetero", "dp_accounting")) if isinstance(r, dict)],
        "opacus": [r for r in as_list(get(anc, "hetero", "opacus")) if isinstance(r, dict)],
    }
    ours_rows = [r for r in as_list(get(ours, "hetero")) if isinstance(r, dict)]
    grids = ["dp_accounting", "opacus", "continuous"]
    for r in ours_rows:
        g = r.get("grid")
        if isinstance(g, str) and g not in grids:
            grids.append(g)

    def key_n(r):
        return finite(r.get("n"))

    def per_event(r):
        s, n = finite(r.get("seconds_per_event")), key_n(r)
        if s is not None:
            return s
        t = finite(r.get("seconds"))
        return t / n if t is not None and n else None

    rows = []
    for g in grids:
        anchor_name = g if g in anchor_lists else "dp_accounting"
        alist = anchor_lists.get(anchor_name, [])
        olist = [r for r in ours_rows if r.get("grid") == g]
        if g not in anchor_lists and not olist:
            continue
        a_by_n = {key_n(r): r for r in alist if key_n(r) is not None}
        o_by_n = {key_n(r): r for r in olist if key_n(r) is not None}
        ns = sorted(set(o_by_n) | (set(a_by_n) if g in anchor_lists else set()))
        a_big = a_by_n[max(a_by_n)] if a_by_n else None
        for n in ns:
            o, a = o_by_n.get(n), a_by_n.get(n)
            o_pe = per_event(o) if o else None
            if a is not None:
                r_txt = fmt_ratio(ratio(per_event(a), o_pe))
            elif o is not None and a_big is not None:
                r_txt = fmt_ratio(ratio(per_event(a_big), o_pe), prefix="~")
            else:
                r_txt = NA
            sw = finite(get(o, "seconds_same_work")) if o else None
            if sw is not None and a is not None and n:
                sw_ratio = fmt_ratio(ratio(per_event(a), sw / n))
            elif sw is not None and a_big is not None and n:
                sw_ratio = fmt_ratio(ratio(per_event(a_big), sw / n), prefix="~")
            else:
                sw_ratio = NA
            rows.append([
                g, fmt_int(n),
                fmt_time_s(get(o, "seconds")) if o else NA,
                fmt_time_s(sw) if sw is not None else NA,
                fmt_time_s(o_pe) if o else NA,
                fmt(get(o, "epsilon"), 8) if o else NA,
                fmt(get(o, "order")) if o else NA,
                anchor_name if (a or a_big) else NA,
                fmt_time_s(get(a, "seconds")) if a else NA,
                fmt_time_s(per_event(a)) if a else NA,
                fmt(get(a, "epsilon"), 8) if a else NA,
                fmt(get(a, "order")) if a else NA,
                r_txt,
                sw_ratio,
            ])
    if not rows:
        rows.append([NA] * 14)
    lines.append(table(["Grid (ours)", "n", "Ours time", "Ours same work", "Ours / event",
                        "ε ours", "order ours", "Anchor", "Anchor time", "Anchor / event",
                        "ε anchor", "order anchor", "Ratio / event", "Ratio same work"], rows))
    lines.append("")

    # Headline: our large-n times.
    head = []
    for n in (1000, 10**6):
        for g in grids:
            r = next((x for x in ours_rows if x.get("grid") == g and key_n(x) == n), None)
            if r is not None:
                what = "continuous order" if g == "continuous" else f"{g} grid"
                head.append(f"- ours, n={fmt_int(n)}, {what}: "
                            f"{fmt_time_s(r.get('seconds'))} "
                            f"(ε={fmt(r.get('epsilon'), 8)}, order {fmt(r.get('order'))})")
    if head:
        lines.append("Our large-n times:")
        lines.append("")
        lines.extend(head)
    else:
        lines.append("Our large-n times: n/a (no n=1000 / n=10^6 rows in ours.json)")
    return lines


def section_calibrate(anc, ours):
    lines = ["## 3. Noise calibration", "",
             "Smallest σ with ε ≤ 8 at δ=1e-5, q=0.04, 2250 steps. "
             "Ratio = anchor seconds ÷ our seconds.", ""]
    o = get(ours, "calibrate") or {}
    rows = [["dpzo (ours)", fmt_time_s(get(o, "seconds")), fmt(get(o, "sigma"), 10),
             fmt(get(o, "epsilon_at_sigma"), 10), fmt(get(o, "evaluations")),
             "1×" if finite(get(o, "seconds")) else NA,
             "0" if finite(get(o, "sigma")) is not None else NA]]
    for name, label in (("dp_accounting", "dp_accounting calibrate_dp_mechanism"),
                        ("opacus", "opacus-style get_noise_multiplier (tol 0.01)")):
        a = get(anc, "calibrate", name) or {}
        rows.append([label, fmt_time_s(get(a, "seconds")), fmt(get(a, "sigma"), 10),
                     fmt(get(a, "epsilon_at_sigma"), 10), fmt(get(a, "evaluations")),
                     fmt_ratio(ratio(get(a, "seconds"), get(o, "seconds"))),
                     fmt(_sub(get(a, "sigma"), get(o, "sigma")), 3)])
    lines.append(table(["Method", "Time", "σ", "ε at σ", "ε evaluations",
                        "Anchor / ours", "σ − σ_ours"], rows))
    return lines


def _sub(a, b):
    x, y = finite(a), finite(b)
    return None if x is None or y is None else x - y


def section_certified(anc, ours):
    lines = ["## 4. Certified vs fast evaluation", ""]
    c = get(ours, "certified") or {}
    fast, cert = get(c, "us_per_order_fast"), get(c, "us_per_order_certified")
    r = finite(get(c, "ratio"))
    if r is None:
        r = ratio(cert, fast)
    a_dp = get(anc, "per_order", "dp_accounting", "us_per_order")
    a_op = get(anc, "per_order", "opacus", "us_per_order")
    rows = [
        ["fast", fmt(fast), "1×" if finite(fast) else NA, fmt_ratio(ratio(a_dp, fast)), fmt_ratio(ratio(a_op, fast))],
        ["certified", fmt(cert), fmt_ratio(r) if r is not None else NA,
         fmt_ratio(ratio(a_dp, cert)), fmt_ratio(ratio(a_op, cert))],
    ]
    lines.append(table(["Mode", "µs / (event, order)", "Cost vs fast",
                        "dp_accounting / this", "opacus / this"], rows))
    return lines


def section_large_order(anc, ours):
    lines = ["## 5. Large orders", "",
             "RDP of one Poisson-subsampled Gaussian step (q=0.01, σ=1). "
             "Non-finite values are what the library returned.", ""]
    a_orders = as_list(get(anc, "large_order", "orders"))
    o_orders = as_list(get(ours, "large_order", "orders"))
    a_dp = as_list(get(anc, "large_order", "dp_accounting"))
    a_op = as_list(get(anc, "large_order", "opacus"))
    o_rdp = as_list(get(ours, "large_order", "rdp"))

    def mapping(orders, values):
        m = {}
        for i, order in enumerate(orders):
            k = num(order)
            if k is not None:
                m[k] = values[i] if i < len(values) else None
        return m

    m_dp, m_op, m_o = mapping(a_orders, a_dp), mapping(a_orders, a_op), mapping(o_orders, o_rdp)
    orders = sorted(set(m_dp) | set(m_op) | set(m_o))
    rows = []
    for k in orders:
        rows.append([fmt_int(k), fmt(m_o.get(k), 10), fmt(m_dp.get(k), 10),
                     fmt(m_op.get(k), 10), fmt(rel_diff(m_o.get(k), m_dp.get(k)), 2),
                     fmt(rel_diff(m_o.get(k), m_op.get(k)), 2)])
    if not rows:
        rows.append([NA] * 6)
    lines.append(table(["Order α", "Ours", "dp_accounting", "opacus",
                        "rel. Δ vs dp_accounting", "rel. Δ vs opacus"], rows))
    return lines


def header(anc, ours, paths):
    lines = ["# dpzo speed benchmark", ""]
    v = get(anc, "versions") or {}
    parts = [f"{k} {v[k]}" for k in ("dp_accounting", "opacus", "numpy", "scipy", "python")
             if isinstance(v, dict) and v.get(k) is not None]
    lines.append(f"- anchors: `{paths[0]}`" + (f" ({', '.join(parts)})" if parts else ""))
    m = get(anc, "machine")
    if isinstance(m, dict) and m:
        lines.append(f"- anchor machine: {m.get('platform', NA)}")
    if get(anc, "full") is not None:
        lines.append(f"- anchors run with --full: {'yes' if get(anc, 'full') else 'no'}")
    lines.append(f"- ours: `{paths[1]}`")
    ov = get(ours, "version") or get(ours, "versions")
    if ov is not None:
        lines.append(f"- dpzo version: {json.dumps(ov) if not isinstance(ov, str) else ov}")
    lines.append("- ratios are anchor time ÷ dpzo time (> 1 means dpzo is faster)")
    return lines


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    anc, ours = load(argv[1]), load(argv[2])
    out = header(anc, ours, argv[1:3])
    for sec in (section_per_order, section_hetero, section_calibrate,
                section_certified, section_large_order):
        out.append("")
        try:
            out.extend(sec(anc, ours))
        except Exception as e:  # never fail the whole report on one section
            out.append(f"_section failed: {type(e).__name__}: {e}_")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
