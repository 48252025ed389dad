#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""MiniLM linear-probing results for docs/results.md (issue 31): every method at every
epsilon, its learning rate chosen per epsilon on held-out public glosses, then three seeds.

    DPZO_LIBRARY=build/lib/libdpzo.so PYTHONPATH=python \\
    build/venv/bin/python scripts/minilm_results.py --out DIR [--jobs 2] [--eps 0.1,0.5,1,2,3]
        [--methods dpsgd,dpzero,...] [--seeds 0,1,2] [--grid 1/3,1,3] [--val-size 500]
        [--tune-seed 0] [--steps 2000] [--batch-size 64] [--stage tune|final|both]

Each run is `examples/minilm_wordnet.py --tune head` (one thread) appending its JSON line to
DIR/tune.jsonl or DIR/final.jsonl.

tune: for each method and epsilon (the non-private methods once), one run per learning
rate of --grid (multiples of the example's --tune head default, DEFAULT_LR_HEAD) with
--tune-seed and --val-size V: the last V public glosses held out of training, their accuracy
the val_accuracy the choice is made on (public data: choosing costs no privacy; the test set
is not read). The choice (highest val_accuracy; ties: nearer the default) goes to
DIR/tuning.json with every candidate; where it is the smallest or largest rate tried, the
next one past it (/ 3 or x 3) is tried too, up to --extend rounds. Runs already in
DIR/tune.jsonl are not run again, so an interrupted sweep continues where it stopped.

final: every method, epsilon and seed at the chosen learning rate, on all 2,000 public
glosses (public data; the private glosses and the test set as in every run).
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from results import choose, write_json  # noqa: E402  (scripts/results.py --tune's rule)
EXAMPLE = os.path.join(ROOT, "examples", "minilm_wordnet.py")
PRIVATE = ["dpsgd", "dpsgd-public", "dpzero", "dpzoso", "dpzopo", "pazo-m", "pazo-p", "pazo-s"]
NON_PRIVATE = ["public-only", "non-private", "mezo"]
ZO_DEFAULT_LR = 1e-2  # DEFAULT_LR_HEAD["zo"]


def default_lr(method):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import minilm_wordnet as mw  # noqa: E402  (only for its tuned defaults)
    return mw.DEFAULT_LR_HEAD.get(method, mw.DEFAULT_LR_HEAD["zo"])


def run(argv, log):
    cmd = [sys.executable, EXAMPLE, "--tune", "head", "--threads", "1"] + argv
    print("$ " + " ".join(cmd[1:]), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-3000:]))
    line = p.stdout.strip().splitlines()[-1]  # the result; the progress lines before it
    with open(log, "a") as f:
        f.write(line + "\n")
    return json.loads(line)


def tune(a, cells, grid, common, key, eps_args, tpath):
    """The grid per cell, then one more rate past a best at an end of what was tried (/ 3 or
    x 3, --extend rounds); runs already in DIR/tune.jsonl (same held-out size and seed) are
    not run again. Writes DIR/tuning.json and prints every candidate."""
    log = os.path.join(a.out, "tune.jsonl")
    cands = {key(m, e): [] for m, e in cells if m != "mezo"}
    if os.path.exists(log):
        for line in open(log):
            r = json.loads(line)
            e = r["epsilon_target"] if r["method"] in PRIVATE else None
            k = key(r["method"], e)
            if (k in cands and r["seed"] == a.tune_seed and r["steps"] == a.steps and
                    r.get("val_size", 2000 - r["public_size"]) == a.val_size):
                cands[k].append({"multiplier": r["lr"] / default_lr(r["method"]), "lr": r["lr"],
                                 "val_accuracy": r["val_accuracy"], "epsilon": r["epsilon"]})
    want = {k: list(grid) for k in cands}
    cell_of = {key(m, e): (m, e) for m, e in cells}
    tuning = json.load(open(tpath)) if os.path.exists(tpath) else {}
    for rnd in range(a.extend + 1):
        jobs = []
        for k, gs in want.items():
            have = {round(c["multiplier"], 6) for c in cands[k]}
            jobs += [(k, g) for g in gs if round(g, 6) not in have]
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            futs = {}
            for k, g in jobs:
                m, e = cell_of[k]
                futs[ex.submit(run, ["--method", m, "--lr", repr(default_lr(m) * g), "--seed",
                                     str(a.tune_seed), "--val-size", str(a.val_size)]
                               + eps_args(e) + common, log)] = (k, g)
            for fut in cf.as_completed(futs):
                k, g = futs[fut]
                r = fut.result()
                cands[k].append({"multiplier": g, "lr": r["lr"],
                                 "val_accuracy": r["val_accuracy"], "epsilon": r["epsilon"]})
        want = {}
        for k, cs in cands.items():
            if not cs:
                continue
            best, beyond = choose(cs, "val_accuracy")
            tuning[k] = {"lr": best["lr"], "multiplier": best["multiplier"],
                         "val_size": a.val_size, "tune_seed": a.tune_seed, "candidates": cs}
            if beyond is not None:
                want[k] = [beyond]
        write_json(tpath, tuning)
        if not want:
            break
    print("\n| method | ε | validation accuracy by lr | chosen lr |")
    print("|---|---:|---|---:|")
    for m, e in cells:
        t = tuning.get(key(m, e))
        if t:
            print("| %s | %s | %s | %.3g |" % (m, "%g" % e if e is not None else "-", ", ".join(
                "%.3g: %.1f%%" % (c["lr"], 100 * c["val_accuracy"]) for c in t["candidates"]),
                t["lr"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--eps", default="0.1,0.5,1,2,3")
    ap.add_argument("--methods", default=",".join(PRIVATE + NON_PRIVATE))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--grid", default="%r,1,3" % (1 / 3))
    ap.add_argument("--val-size", type=int, default=500)
    ap.add_argument("--extend", type=int, default=2,
                    help="tune: rounds of one more lr past a best at an end (default 2)")
    ap.add_argument("--tune-seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--stage", choices=("tune", "final", "both", "table"), default="both",
                    help="table: print the Markdown tables of DIR's runs only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    methods = a.methods.split(",")
    for m in methods:
        if m not in PRIVATE + NON_PRIVATE:
            sys.exit("unknown method %r (known: %s)" % (m, ", ".join(PRIVATE + NON_PRIVATE)))
    epsilons = [float(e) for e in a.eps.split(",")]
    grid = [float(g) for g in a.grid.split(",")]
    common = ["--steps", str(a.steps), "--batch-size", str(a.batch_size), "--out-dir", a.out]
    cells = [(m, e) for m in methods for e in (epsilons if m in PRIVATE else [None])]
    tpath = os.path.join(a.out, "tuning.json")

    def key(m, e):
        return "%s|%s" % (m, "%g" % e if e is not None else "none")

    def eps_args(e):
        return ["--epsilon", repr(e)] if e is not None else []

    if a.stage in ("tune", "both"):
        tune(a, cells, grid, common, key, eps_args, tpath)
    if a.stage == "table":
        print_tables(a.out, methods, epsilons)
        return
    if a.stage in ("final", "both"):
        tuning = json.load(open(tpath)) if os.path.exists(tpath) else {}
        jobs = []
        for m, e in cells:
            t = tuning.get(key(m, e))
            if t is None and m != "mezo":
                sys.exit("%s: no choice for %s (run --stage tune first)" % (tpath, key(m, e)))
            lr = t["lr"] if t else default_lr(m)
            for s in a.seeds.split(","):
                jobs.append(["--method", m, "--lr", repr(lr), "--seed", s] + eps_args(e) + common)
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for fut in [ex.submit(run, j, os.path.join(a.out, "final.jsonl")) for j in jobs]:
                fut.result()
    for f in os.listdir(a.out):  # the zeroth-order runs' profiles
        if f.startswith("profile-") and f.endswith(".json"):
            os.remove(os.path.join(a.out, f))
    print_tables(a.out, methods, epsilons)


def print_tables(out, methods, epsilons):
    """Test accuracy (mean ± sample sd over the seeds) by method and epsilon, the chosen
    learning rates, and the largest epsilon spent minus its target."""
    import statistics
    path = os.path.join(out, "final.jsonl")
    if not os.path.exists(path):
        return
    runs = {}
    worst = -math.inf
    for line in open(path):
        r = json.loads(line)
        e = r["epsilon_target"] if r["method"] in PRIVATE else None
        runs.setdefault((r["method"], e), []).append(r)
        if r["method"] in PRIVATE:
            worst = max(worst, r["epsilon"] - r["epsilon_target"])
    tuning = json.load(open(os.path.join(out, "tuning.json")))

    def cell(m, e):
        rs = runs.get((m, e))
        if not rs:
            return ""
        acc = [100 * r["test_accuracy"] for r in rs]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        t = tuning.get("%s|%s" % (m, "%g" % e if e is not None else "none"))
        return "%.2f%% ± %.2f%s" % (statistics.mean(acc), sd,
                                    " (lr %.3g)" % t["lr"] if t else "")
    print("\n| method | " + " | ".join("ε = %g" % e for e in epsilons) + " |")
    print("|---|" + "---:|" * len(epsilons))
    for m in methods:
        if m in PRIVATE:
            print("| %s | %s |" % (m, " | ".join(cell(m, e) for e in epsilons)))
    for m in methods:
        if m not in PRIVATE:
            print("| %s (no ε) | %s |" % (m, cell(m, None)))
    print("\nlargest epsilon spent minus target: %.3g; runs: %d" % (
        worst, sum(len(v) for v in runs.values())))


if __name__ == "__main__":
    main()
