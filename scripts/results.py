#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fashion-MNIST results for docs/results.md: DPZero, MeZO, DP-SGD and SGD with the same
model; the papers' algorithms DP-ZOSO, DP-ZOPO, PAZO-M/P/S, and DP-SGD and DPMD with public
pre-training; private runs at the epsilons given (delta = 1/n, n the private rows), three
seeds each.

    python3 scripts/results.py [--jobs 2] [--out results-run] [--seeds 1,2,3] [--eps 1,3]
                               [--methods dpzoso,pazo-m,...] [--dpzo build/bin/dpzo]
                               [--nice N] [--threads 1]
                               [--validation-size V] [--tune | --tuned OUT/tuning.json]
                               [--table SUMMARIES.json ...]

Each method is an example configuration (examples/fmnist-<method>.json). A method whose
example holds out public rows (data.public_size) trains on n = 60000 - public_size
private rows, so its q = B/n and delta = 1/n are those of n. For each private method and
epsilon it writes a Gaussian profile with `dpzo profile gaussian` (the example's q, T and
C), then runs `dpzo train --config ... --json` for every seed (each run's configuration
is the example's with the seed, the profile and the metrics file replaced), and prints the
Markdown table (mean and sample standard deviation of the test accuracy, epsilon spent,
wall time per run, CPU time per run (the process's user + system time, from wait4: less
dependent on other load on the machine than the wall time) and wall time per step). Every
command it runs is printed first.

--threads N is passed to every `dpzo train` (the model's threads; the results are the same
bits for any N, only the time changes). The default 1 lets --jobs runs share the cores
without oversubscribing them (--jobs 2 on a 2-core machine); 0 means all cores per run.

--methods picks methods by their short name (the example's name without fmnist- and
.json; the DP-ZOPO strategy rows dpzopo-static, dpzopo-dynamic, dpzopo-increasing and
dpzopo-incremental are the dpzopo example with its pruning strategy replaced, and the
control pazo-m-alpha1 is the pazo-m example with alpha = 1; these run only when named).
The summaries of all runs so far are kept in OUT/summaries.json (new runs replace the
entries of their method and epsilon). With public pre-training, the
metrics line at step 0 is the accuracy after pre-training, before any private step: the
"public pre-training only" row is its mean over the seeds (it depends on the seed only).

Hyperparameters per epsilon on held-out data (docs/results.md, "Hyperparameters per ε"):
--validation-size V adds data.validation_size = V to every configuration: V rows that no run
trains on (the same rows for every seed and method), so n = 60000 - public_size - V.
--tune (with --validation-size) runs, for each method and epsilon, one run per learning rate
of --grid (multiples of the example's lr; default 1/3, 1, 3) with --tune-seed (default 0),
each for the first --tune-fraction (default 1/2) of the example's steps (dpzo train --until:
the same profile, plan, schedule and noise per step as a whole run), and picks the learning
rate with the highest validation accuracy (ties: the one nearer the example's). Where that is
the smallest or largest rate tried, it tries the next one beyond (/ 3 or x 3), up to --extend
rounds (default 2). The choice and every candidate's validation accuracy go to
OUT/tuning.json (test accuracy is not read); candidates already there are not run again.
--tuned OUT/tuning.json then runs each method and epsilon at its chosen learning rate.
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import stat
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_ALL = 60000  # Fashion-MNIST training rows
# (short name, table name, example configuration, private, overrides of the example)
METHODS = [
    ("dpzero", "DPZero (zeroth-order, C = 20)", "fmnist-dpzero.json", True, None),
    ("mezo", "MeZO (zeroth-order, non-private)", "fmnist-mezo.json", False, None),
    ("dpsgd", "DP-SGD (first-order, C = 1)", "fmnist-dpsgd.json", True, None),
    ("sgd", "SGD (first-order, non-private)", "fmnist-sgd.json", False, None),
    ("dpzoso", "DP-ZOSO (zeroth-order, stages, C = 20)", "fmnist-dpzoso.json", True, None),
    ("dpzopo", "DP-ZOPO (zeroth-order, pruned, C = 20)", "fmnist-dpzopo.json", True, None),
    ("dpsgd-public", "DP-SGD + public pre-training (C = 1)", "fmnist-dpsgd-public.json", True,
     None),
    ("pazo-m", "PAZO-M (public + private ZO)", "fmnist-pazo-m.json", True, None),
    ("pazo-p", "PAZO-P (public + private ZO)", "fmnist-pazo-p.json", True, None),
    ("pazo-s", "PAZO-S (public + private ZO)", "fmnist-pazo-s.json", True, None),
    ("dpmd", "DPMD + public pre-training (first-order, C = 1)", "fmnist-dpmd.json", True, None),
]
DEFAULT = [m[0] for m in METHODS]
for _s in ("static", "dynamic", "increasing", "incremental"):
    _p = {"strategy": _s}
    if _s in ("static", "dynamic"):
        _p["growth"] = 1
    METHODS.append(("dpzopo-" + _s, "DP-ZOPO, %s masks" % _s, "fmnist-dpzopo.json", True,
                    {"prune": _p}))
# A control: PAZO-M with alpha = 1 steps along the public gradient alone (its private
# release is made and accounted, but has weight 0): what the public rows give by themselves
# after pre-training.
METHODS.append(("pazo-m-alpha1", "PAZO-M with α = 1 (public gradient only, control)",
                "fmnist-pazo-m.json", True, {"public": {"alpha": 1.0}}))
DPZO = os.path.join(ROOT, "build", "bin", "dpzo")
NICE = []  # ["nice", "-n", N] with --nice N
THREADS = 1  # --threads N of every dpzo train


def run(cmd):
    """Runs cmd; returns its standard output and its CPU time (user + system, seconds)."""
    print("$ " + " ".join(cmd), flush=True)
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe)
        _, status, ru = os.wait4(p.pid, 0)  # this child's own resource usage
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read().decode(), fe.read().decode()
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), err))
    return out, ru.ru_utime + ru.ru_stime


def n_train(cfg):
    d = cfg.get("data", {})
    return N_ALL - d.get("public_size", 0) - d.get("validation_size", 0)


def profile_for(cfg, short, eps, out):
    path = os.path.join(out, "profile-%s-eps%g.json" % (short, eps))
    n = n_train(cfg)
    q = cfg["batch_size"] / n
    run([DPZO, "profile", "gaussian", "--epsilon", repr(eps), "--delta", repr(1.0 / n),
         "--sampling-rate", repr(q), "--steps", str(cfg["steps"]),
         "--sensitivity", repr(cfg["clip"]), "--created", "2026-11-21T12:00:00Z", "-o", path])
    return path


def train(cfg, name, out, until=0):
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    out, cpu = run(NICE + [DPZO, "train", "--config", path, "--threads", str(THREADS),
                           "--json"] + (["--until", str(until)] if until else []))
    s = json.loads(out)
    s["cpu_seconds"] = cpu
    s["seed"] = cfg["seed"]
    s["lr"] = cfg["lr"]
    with open(cfg["metrics"]) as f:  # the step-0 line: after pre-training, before step 1
        first = json.loads(f.readline())
    s["step0_accuracy"] = first["test_accuracy"]
    s["step0_seconds"] = first["seconds"]
    return s


def write_json(path, obj):
    """obj as JSON at path: written to a temporary file in its folder, synced and renamed
    over it, so that a reader never sees half a file; anything at path but a regular file
    (a FIFO, a device, a folder, a link) is refused rather than replaced."""
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        sys.exit("%s exists and is not a regular file" % path)
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def choose(cands, score):
    """The candidate (dicts with "multiplier" and the score) with the highest score, ties to
    the multiplier nearer 1; and the multiplier to try next when it is the smallest or the
    largest tried (/ 3 or x 3), else None. Sorts cands by multiplier. Shared with
    scripts/minilm_results.py."""
    cands.sort(key=lambda c: c["multiplier"])
    best = max(cands, key=lambda c: (c[score], -abs(math.log(c["multiplier"]))))
    if len(cands) > 1 and best is cands[0]:
        return best, best["multiplier"] / 3
    if len(cands) > 1 and best is cands[-1]:
        return best, best["multiplier"] * 3
    return best, None


def tune(methods, epsilons, a):
    """--tune: the grid at each (method, epsilon), then, where the best learning rate is at
    an end of what was tried, the next multiple beyond it (x 3 or / 3; up to --extend
    rounds); writes OUT/tuning.json after each round. Candidates already in OUT/tuning.json
    (same validation rows and seed) are not run again."""
    grid = [float(g) for g in a.grid.split(",")]
    tpath = os.path.join(a.out, "tuning.json")
    tuning = json.load(open(tpath)) if os.path.exists(tpath) else {}
    cells = {}  # key -> (base configuration, profile, until)
    for short, method, example, private, over in methods:
        if not private:
            continue
        base = merge(json.load(open(os.path.join(ROOT, "examples", example))), over)
        base.pop("checkpoint", None)
        base = merge(base, {"data": {"validation_size": a.validation_size}})
        until = max(1, int(round(base["steps"] * a.tune_fraction)))
        for eps in epsilons:
            cells["%s|%g" % (short, eps)] = (short, eps, base,
                                             profile_for(base, short, eps, a.out), until)
    cands = {}
    for key in cells:
        t = tuning.get(key)
        same = t and t["validation_size"] == a.validation_size and t["tune_seed"] == a.tune_seed
        cands[key] = list(t["candidates"]) if same else []
    want = {key: list(grid) for key in cells}
    for rnd in range(a.extend + 1):
        jobs = []
        for key, gs in want.items():
            short, eps, base, prof, until = cells[key]
            have = {round(c["multiplier"], 9) for c in cands[key]}
            for g in gs:
                if round(g, 9) in have:
                    continue
                cfg = dict(base, seed=a.tune_seed, lr=base["lr"] * g,
                           profile=os.path.abspath(prof))
                name = "tune-%s-eps%g-lrx%.6g" % (short, eps, g)
                cfg["metrics"] = os.path.abspath(os.path.join(a.out, name + ".jsonl"))
                jobs.append((key, g, cfg, name, until))
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            futs = {ex.submit(train, cfg, name, a.out, until): (key, g, cfg["lr"])
                    for key, g, cfg, name, until in jobs}
            for fut in cf.as_completed(futs):
                key, g, lr = futs[fut]
                r = fut.result()
                cands[key].append({
                    "multiplier": g, "lr": lr, "steps": r["steps"],
                    "validation_accuracy": r["validation_accuracy"],
                    "validation_loss": r["validation_loss"], "epsilon_spent": r["epsilon_spent"],
                    "cpu_seconds": r["cpu_seconds"]})
        want = {}
        for key, cs in cands.items():
            if not cs:
                continue
            best, beyond = choose(cs, "validation_accuracy")
            tuning[key] = {"lr": best["lr"], "multiplier": best["multiplier"],
                           "validation_size": a.validation_size, "tune_seed": a.tune_seed,
                           "candidates": cs}
            if beyond is not None:
                want[key] = [beyond]
        write_json(tpath, tuning)
        if not want:
            break
    print()
    print("| method | ε | validation accuracy by lr (× the example's) | chosen lr |")
    print("|---|---:|---|---:|")
    for key in cells:
        t = tuning.get(key)
        if t:
            print("| %s | %s | %s | %g%s |" % (
                cells[key][0], key.split("|")[1], ", ".join(
                    "×%.3g: %.2f%%" % (c["multiplier"], 100 * c["validation_accuracy"])
                    for c in t["candidates"]), t["lr"],
                " (an end of the range tried)" if t["multiplier"] in (
                    t["candidates"][0]["multiplier"], t["candidates"][-1]["multiplier"]) else ""))


def table(methods, epsilons, paths):
    """--table: test accuracy by method and epsilon from summaries.json files."""
    runs = {}
    for p in paths:
        with open(p) as f:
            runs.update(json.load(f))
    print("| method | " + " | ".join("ε = %g" % e for e in epsilons) + " | no ε |")
    print("|---|" + "---:|" * (len(epsilons) + 1))
    worst, count, pre = -math.inf, 0, {}
    for short, method, example, private, over in methods:
        cells = []
        for eps in (epsilons if private else []) + ([] if private else [None]):
            rs = runs.get("%s|%s" % (method, eps))
            if not rs:
                cells.append("")
                continue
            count += len(rs)
            acc = [100.0 * r["test_accuracy"] for r in rs]
            sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
            lrs = sorted({r["lr"] for r in rs if "lr" in r})
            cells.append("%.2f%% ± %.2f%s" % (statistics.mean(acc), sd, " (lr %s)" % "/".join(
                "%g" % x for x in lrs) if lrs else ""))
            if private:
                worst = max(worst, max(r["epsilon_spent"] for r in rs) - eps)
            if short in ("dpsgd-public", "dpmd") or short.startswith("pazo-"):
                for r in rs:
                    pre.setdefault(r["seed"], set()).add(r["step0_accuracy"])
        if private:
            print("| %s | %s | |" % (method, " | ".join(cells)))
        else:
            print("| %s |%s %s |" % (method, " |" * len(epsilons), cells[0]))
    if pre:
        acc = [100.0 * min(v) for v in pre.values()]
        print("| public pre-training only (step 0) |%s %.2f%% ± %.2f%s |" % (
            " |" * len(epsilons), statistics.mean(acc),
            statistics.stdev(acc) if len(acc) > 1 else 0.0,
            "" if all(len(v) == 1 for v in pre.values()) else " (differs between runs!)"))
    print("\n%d runs; largest epsilon spent minus target: %.3g" % (count, worst))


def merge(base, over):
    out = dict(base)
    for k, v in (over or {}).items():
        out[k] = merge(base.get(k, {}), v) if isinstance(v, dict) else v
    return out


def main():
    global DPZO, NICE, THREADS
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "results-run"))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--eps", default="1,3")
    ap.add_argument("--methods", default=",".join(DEFAULT),
                    help="comma-separated short names (default: all but the dpzopo-* rows)")
    ap.add_argument("--dpzo", default=DPZO, help="the dpzo binary (default build/bin/dpzo)")
    ap.add_argument("--nice", type=int, default=0, help="run dpzo train under nice -n N")
    ap.add_argument("--threads", type=int, default=1,
                    help="dpzo train --threads N: the model's threads per run (default 1; "
                    "0: all cores)")
    ap.add_argument("--validation-size", type=int, default=0,
                    help="data.validation_size of every run: rows held out of all training")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--tune", action="store_true",
                      help="choose each method's lr per epsilon on the validation rows")
    mode.add_argument("--tuned", help="OUT/tuning.json of a --tune run: use its choices")
    mode.add_argument("--table", nargs="+", metavar="SUMMARIES",
                      help="print one table, method by epsilon (mean ± sd, the lr each ran "
                      "at), of these summaries.json files; nothing is run")
    ap.add_argument("--grid", default="%r,1,3" % (1 / 3), help="--tune: lr multipliers")
    ap.add_argument("--tune-seed", type=int, default=0)
    ap.add_argument("--method-major", action="store_true",
                    help="run each method's seeds before the next method's (default: seed 1 "
                    "of every method first), in --methods order")
    ap.add_argument("--extend", type=int, default=2,
                    help="--tune: rounds of one more lr beyond a best at an end (default 2)")
    ap.add_argument("--tune-fraction", type=float, default=0.5,
                    help="--tune: the part of the example's steps each candidate runs")
    a = ap.parse_args()
    if (a.tune or a.tuned) and a.validation_size <= 0:
        sys.exit("--tune and --tuned need --validation-size V > 0 (the rows choices are made on)")
    if not 0.0 < a.tune_fraction <= 1.0:
        sys.exit("--tune-fraction must be in (0, 1]")
    THREADS = a.threads
    DPZO = os.path.abspath(a.dpzo)
    NICE = ["nice", "-n", str(a.nice)] if a.nice else []
    os.makedirs(a.out, exist_ok=True)
    seeds = [int(s) for s in a.seeds.split(",")]
    epsilons = [float(e) for e in a.eps.split(",")]
    wanted = a.methods.split(",")
    known = {m[0] for m in METHODS}
    for w in wanted:
        if w not in known:
            sys.exit("unknown method %r (known: %s)" % (w, ", ".join(sorted(known))))
    methods = [m for m in METHODS if m[0] in wanted]
    if a.method_major:
        methods.sort(key=lambda m: wanted.index(m[0]))
    if a.table:
        table(methods, epsilons, a.table)
        return
    if a.tune:
        tune(methods, epsilons, a)
        return
    tuning = json.load(open(a.tuned)) if a.tuned else None
    jobs = []  # (method, eps or None, seed, cfg, name)
    for short, method, example, private, over in methods:
        base = json.load(open(os.path.join(ROOT, "examples", example)))
        base = merge(base, over)
        base.pop("checkpoint", None)
        if a.validation_size:
            base = merge(base, {"data": {"validation_size": a.validation_size}})
        for eps in (epsilons if private else [None]):
            prof = profile_for(base, short, eps, a.out) if private else None
            lr = base["lr"]
            if tuning is not None and private:
                t = tuning.get("%s|%g" % (short, eps))
                if t is None or t["validation_size"] != a.validation_size:
                    sys.exit("%s: no choice for %s at epsilon %g with --validation-size %d" % (
                        a.tuned, short, eps, a.validation_size))
                lr = t["lr"]
            for seed in seeds:
                cfg = dict(base, seed=seed, lr=lr)
                if prof:
                    cfg["profile"] = os.path.abspath(prof)
                name = "%s-eps%s-seed%d" % (short, eps if eps else "inf", seed)
                cfg["metrics"] = os.path.abspath(os.path.join(a.out, name + ".jsonl"))
                jobs.append((method, eps, seed, cfg, name))
    if not a.method_major:  # seed-major: an interrupted run still has whole seeds
        jobs.sort(key=lambda j: j[2])
    results = {}
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(train, cfg, name, a.out): (m, e, s) for m, e, s, cfg, name in jobs}
        for fut in cf.as_completed(futs):
            m, e, s = futs[fut]
            results.setdefault((m, e), []).append(fut.result())
    spath = os.path.join(a.out, "summaries.json")
    summaries = json.load(open(spath)) if os.path.exists(spath) else {}
    summaries.update({"%s|%s" % k: v for k, v in results.items()})
    write_json(spath, summaries)
    print()
    print("| method | steps | ε | δ | test accuracy, mean ± sd (%d seeds) | ε spent | "
          "wall time per run | CPU time per run | per step |" % len(seeds))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    pre = {}  # public pre-training only: the step-0 accuracy of each seed
    for short, method, example, private, over in methods:
        cfg = json.load(open(os.path.join(ROOT, "examples", example)))
        if a.validation_size:
            cfg = merge(cfg, {"data": {"validation_size": a.validation_size}})
        n = n_train(cfg)
        for eps in (epsilons if private else [None]):
            rs = results[(method, eps)]
            acc = [100.0 * r["test_accuracy"] for r in rs]
            spent = [r["epsilon_spent"] for r in rs]
            secs = [r["seconds"] for r in rs]
            # per step: the training after step 0 (pre-training and the first evaluation
            # excluded; the later evaluations included)
            per = [(r["seconds"] - r["step0_seconds"]) / r["steps"] for r in rs]
            sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
            cpu = [r["cpu_seconds"] for r in rs]
            print("| %s | %s | %s | 1/%d | %.2f%% ± %.2f | %s | %.0f s | %.0f s | %.1f ms |" % (
                method, format(cfg["steps"], ","),
                "%g" % eps if eps else "∞ (non-private)", n, statistics.mean(acc), sd,
                "%.4f" % max(spent) if private else "∞", statistics.mean(secs),
                statistics.mean(cpu), 1000.0 * statistics.mean(per)))
            if cfg.get("pretrain", {}).get("steps", 0) > 0:
                for r in rs:
                    pre.setdefault(r["seed"], set()).add(r["step0_accuracy"])
    if pre:
        per_seed = [min(v) for v in pre.values()]
        same = all(len(v) == 1 for v in pre.values())
        sd = statistics.stdev(per_seed) * 100 if len(per_seed) > 1 else 0.0
        print("| public pre-training only (step 0 of the runs above) | - | 0 | - | "
              "%.2f%% ± %.2f | 0 | - | - | - |%s" % (100 * statistics.mean(per_seed), sd,
                                                 "" if same else " (differs between runs!)"))


if __name__ == "__main__":
    main()
