#!/usr/bin/env python3
"""Fashion-MNIST results for docs/results.md: DPZero, MeZO, DP-SGD and SGD with the same
model, private runs at epsilon 1 and 3 (delta = 1/n), three seeds each.

    python3 scripts/results.py [--jobs 2] [--out results-run] [--seeds 1,2,3]

For each private method and epsilon it writes a Gaussian profile with `dpzo profile
gaussian` (the example configuration's q, T and C), then runs `dpzo train --config ...
--json` for every seed (each run's configuration is the example's with the seed and the
profile replaced), and prints the Markdown table (mean and sample standard deviation of
the test accuracy, epsilon spent, wall time). Every command it runs is printed first.
"""
import argparse
import concurrent.futures as cf
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPZO = os.path.join(ROOT, "build", "bin", "dpzo")
N_TRAIN = 60000
DELTA = 1.0 / N_TRAIN
METHODS = [  # (name, example config, private)
    ("DPZero", "fmnist-dpzero.json", True),
    ("MeZO (non-private ZO)", "fmnist-mezo.json", False),
    ("DP-SGD", "fmnist-dpsgd.json", True),
    ("SGD (non-private)", "fmnist-sgd.json", False),
]


def run(cmd):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def profile_for(cfg, eps, out):
    path = os.path.join(out, "profile-%s-eps%g.json" % (cfg["algorithm"], eps))
    q = cfg["batch_size"] / N_TRAIN
    run([DPZO, "profile", "gaussian", "--epsilon", repr(eps), "--delta", repr(DELTA),
         "--sampling-rate", repr(q), "--steps", str(cfg["steps"]),
         "--sensitivity", repr(cfg["clip"]), "--created", "2026-11-21T12:00:00Z", "-o", path])
    return path


def train(cfg, name, out):
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    return json.loads(run([DPZO, "train", "--config", path, "--json"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "results-run"))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--eps", default="1,3")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    seeds = [int(s) for s in a.seeds.split(",")]
    epsilons = [float(e) for e in a.eps.split(",")]
    jobs = []  # (method, eps or None, seed, cfg, name)
    for method, example, private in METHODS:
        base = json.load(open(os.path.join(ROOT, "examples", example)))
        base.pop("metrics", None)
        base.pop("checkpoint", None)
        for eps in (epsilons if private else [None]):
            prof = profile_for(base, eps, a.out) if private else None
            for seed in seeds:
                cfg = dict(base, seed=seed)
                if prof:
                    cfg["profile"] = os.path.abspath(prof)
                name = "%s-eps%s-seed%d" % (base["algorithm"], eps if eps else "inf", seed)
                jobs.append((method, eps, seed, cfg, name))
    results = {}
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(train, cfg, name, a.out): (m, e, s) for m, e, s, cfg, name in jobs}
        for fut in cf.as_completed(futs):
            m, e, s = futs[fut]
            results.setdefault((m, e), []).append(fut.result())
    json.dump({"%s|%s" % k: v for k, v in results.items()},
              open(os.path.join(a.out, "summaries.json"), "w"), indent=1)
    print()
    print("| method | epsilon (delta = 1/60000) | test accuracy, mean ± sd (%d seeds) | "
          "epsilon spent | wall time per run |" % len(seeds))
    print("|---|---:|---:|---:|---:|")
    for method, _, private in METHODS:
        for eps in (epsilons if private else [None]):
            rs = results[(method, eps)]
            acc = [100.0 * r["test_accuracy"] for r in rs]
            spent = [r["epsilon_spent"] for r in rs]
            secs = [r["seconds"] for r in rs]
            sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
            print("| %s | %s | %.2f%% ± %.2f | %s | %.0f s |" % (
                method, "%g" % eps if eps else "∞ (non-private)", statistics.mean(acc), sd,
                "%.4f" % max(spent) if private else "∞", statistics.mean(secs)))


if __name__ == "__main__":
    main()
