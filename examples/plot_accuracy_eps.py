#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test accuracy against epsilon, one line per method with its seed spread (docs/results.md,
issue 31), the way the PAZO paper's Figure 2 shows it.

    build/venv/bin/python examples/plot_accuracy_eps.py \\
        --summaries RUN/summaries.json [--summaries MORE.json ...] \\
        [--results-md docs/results.md] --out docs/fmnist-accuracy-eps
    build/venv/bin/python examples/plot_accuracy_eps.py --section minilm \\
        --jsonl bench/results/minilm_eps_sweep.jsonl --results-md docs/results.md \\
        --out docs/minilm-accuracy-eps --title "..."

Points come from two places, and the JSON written beside the figure says which for each:
  - summaries.json files of scripts/results.py (every run's test accuracy; the mean and the
    sample standard deviation over the seeds are computed here), or the JSON lines of
    examples/minilm_wordnet.py --json (--jsonl: method, epsilon_target, test_accuracy);
  - the tables of docs/results.md (--results-md; --section fmnist, the default, reads the
    Fashion-MNIST part, --section minilm the MiniLM part), rows "mean% ± sd" at a
    finite epsilon, for points no summaries file has (the epsilon 1 and 3 runs recorded
    there before this figure existed), and the non-private and public-only rows, drawn as
    horizontal reference lines.
Writes OUT.png, OUT.svg (reproducible: no date, a fixed hash salt) and OUT.json (the points).
Matplotlib is the only dependency beyond the standard library (build/venv has it).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

# (short name, label, zeroth order) in the legend's order; classify() maps row names to them
METHODS = [
    ("dpzero", "DPZero", True),
    ("dpzoso", "DP-ZOSO", True),
    ("dpzopo", "DP-ZOPO", True),
    ("pazo-m", "PAZO-M", True),
    ("pazo-p", "PAZO-P", True),
    ("pazo-s", "PAZO-S", True),
    ("dpsgd", "DP-SGD", False),
    ("dpsgd-public", "DP-SGD + public pre-training", False),
    ("dpmd", "DPMD + public pre-training", False),
]
REFERENCES = [("sgd", "SGD, non-private"), ("adam", "Adam, non-private"),
              ("mezo", "MeZO, non-private"), ("public", "public data only")]
# examples/minilm_wordnet.py's non-private methods: reference lines (their epsilon_target is
# the option's default, not a budget)
JSONL_REFERENCES = {"public-only": "public", "non-private": "adam", "mezo": "mezo"}
# the methods whose runs start from public pre-training: their step-0 accuracy (scripts/
# results.py's step0_accuracy) is the public data's alone
PRETRAINED = ("dpsgd-public", "dpmd", "pazo-m", "pazo-p", "pazo-s")


def classify(name):
    """The short name of a table row or a results.py method name; None for other rows."""
    n = name.strip().strip("*")
    rules = [(r"^DPZero\b", "dpzero"), (r"^MeZO\b", "mezo"),
             (r"^DP-SGD \+ public", "dpsgd-public"), (r"^DP-SGD\b", "dpsgd"),
             (r"^SGD\b", "sgd"), (r"^DP-ZOSO\b", "dpzoso"), (r"^DP-ZOPO \(zeroth-order, (increasing|pruned)", "dpzopo"),
             (r"^PAZO-M( \((α|public \+)|$)", "pazo-m"), (r"^PAZO-P\b", "pazo-p"),
             (r"^PAZO-S\b", "pazo-s"), (r"^DPMD\b", "dpmd"),
             (r"^public pre-training only", "public"), (r"^public-only \(Adam on", "public")]
    for pat, short in rules:
        if re.search(pat, n):
            return short
    return None


ACC = re.compile(r"^\**(\d+(?:\.\d+)?)% ± (\d+(?:\.\d+)?)\**$")


def from_markdown(path, section="fmnist"):
    """{(short, eps or None): (mean, sd)} from the Fashion-MNIST tables (before '# MiniLM')
    or the MiniLM ones (after it)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        parts = f.read().split("\n# MiniLM")
    text = parts[0] if section == "fmnist" else (parts[1] if len(parts) > 1 else "")
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| method") or "---" in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        short = classify(cells[0])
        if short is None or len(cells) < 4:
            continue
        acc = next((ACC.match(c) for c in cells if ACC.match(c)), None)
        if acc is None:
            continue
        eps = cells[2].replace("∞", "inf")
        try:
            e = float(eps)
        except ValueError:
            continue  # not an epsilon column (a table with one column per epsilon)
        finite = e is not None and math.isfinite(e) and short not in ("public", "sgd", "mezo")
        key = (short, e if finite else None)
        out.setdefault(key, (float(acc.group(1)), float(acc.group(2))))
    return out


def from_summaries(paths):
    """{(short, eps): [accuracy % per run]} from scripts/results.py's summaries.json files,
    and ("public", None): the step-0 accuracy (after public pre-training, before any private
    step) of each seed, where the runs have it."""
    out = {}
    step0 = {}  # seed -> the step-0 accuracies of the pre-trained runs
    for p in paths:
        with open(p, encoding="utf-8") as f:
            data = json.load(f)
        for key, runs in data.items():
            name, eps = key.rsplit("|", 1)
            short = classify(name)
            if short is None:
                continue
            e = None if eps in ("None", "inf") else float(eps)
            out.setdefault((short, e), []).extend(100.0 * r["test_accuracy"] for r in runs)
            if short in PRETRAINED:
                for r in runs:
                    if "step0_accuracy" in r and "seed" in r:
                        step0.setdefault(r["seed"], set()).add(r["step0_accuracy"])
    if step0:
        if any(len(v) != 1 for v in step0.values()):
            sys.exit("the pre-trained runs of one seed start from different accuracies: "
                     "not one public pre-training")
        out[("public", None)] = [100.0 * min(v) for _, v in sorted(step0.items())]
    return out


def from_jsonl(paths):
    """{(short, eps): [accuracy % per run]} from examples/minilm_wordnet.py's JSON lines."""
    out = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    e = r.get("epsilon_target")
                    m = r["method"]
                    if m in JSONL_REFERENCES:
                        m, e = JSONL_REFERENCES[m], None
                    out.setdefault((m, float(e) if e is not None else None),
                                   []).append(100.0 * r["test_accuracy"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--summaries", action="append", default=[])
    ap.add_argument("--results-md", default=None)
    ap.add_argument("--section", choices=("fmnist", "minilm"), default="fmnist")
    ap.add_argument("--jsonl", action="append", default=[])
    ap.add_argument("--out", required=True, help="output path without extension")
    ap.add_argument("--title", default="Fashion-MNIST (mlp:128): test accuracy against ε")
    ap.add_argument("--delta-label", default="δ = 1/n", help="the x label's delta")
    a = ap.parse_args()
    points = {}  # (short, eps) -> dict(mean, sd, n, source)
    if a.results_md:
        for k, (m, sd) in from_markdown(a.results_md, a.section).items():
            points[k] = {"mean": m, "sd": sd, "n": 3, "source": a.results_md}
    runs = from_summaries(a.summaries)
    for k, accs in from_jsonl(a.jsonl).items():
        runs.setdefault(k, []).extend(accs)
    for k, accs in runs.items():
        sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
        points[k] = {"mean": statistics.mean(accs), "sd": sd, "n": len(accs),
                     "source": "runs (--summaries / --jsonl)"}
    if not points:
        sys.exit("no points: give --summaries, --jsonl or --results-md")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.hashsalt"] = "dpzo"
    fig, ax = plt.subplots(figsize=(10, 5))
    tab = plt.get_cmap("tab10").colors
    colors = [tab[c] for c in (0, 1, 2, 3, 4, 5, 6, 8, 9)]  # gray is for the references
    for i, (short, label, zo) in enumerate(METHODS):
        pts = sorted((e, v) for (s, e), v in points.items() if s == short and e is not None)
        if not pts:
            continue
        xs = [e for e, _ in pts]
        ys = [v["mean"] for _, v in pts]
        sds = [v["sd"] for _, v in pts]
        ax.errorbar(xs, ys, yerr=sds, label=label, color=colors[i % len(colors)], marker="o",
                    markersize=4, capsize=3, linestyle="-" if zo else "--", linewidth=1.4)
    for j, (short, label) in enumerate(REFERENCES):
        v = points.get((short, None))
        if v is not None:
            ax.axhline(v["mean"], color="0.5", linestyle=[":", (0, (5, 2)), "-.", (0, (1, 3))][j],
                       linewidth=1.0, label="%s (%.1f%%)" % (label, v["mean"]))
    ax.set_xscale("log")
    ticks = sorted({e for (_, e) in points if e is not None})
    ax.set_xticks(ticks)
    ax.set_xticklabels(["%g" % t for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("ε (%s), log scale" % a.delta_label)
    ax.set_ylabel("test accuracy, % (mean ± sd over seeds)")
    ax.set_title(a.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    # each file written beside its name and renamed over it: a reader never sees half a file
    fig.savefig(a.out + ".tmp.png", dpi=150, metadata={"Software": None})
    fig.savefig(a.out + ".tmp.svg", metadata={"Date": None, "Creator": None})
    rows = [dict(method=s, epsilon=e, **v) for (s, e), v in
            sorted(points.items(), key=lambda kv: (kv[0][0], kv[0][1] or math.inf))]
    with open(a.out + ".tmp.json", "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    for ext in (".png", ".svg", ".json"):
        os.replace(a.out + ".tmp" + ext, a.out + ext)
    print("wrote %s.png, %s.svg, %s.json (%d points)" % (a.out, a.out, a.out, len(rows)))


if __name__ == "__main__":
    main()
