# SPDX-License-Identifier: Apache-2.0
"""dpzo's squared sensitivity of tree aggregation without restarts against TF Privacy's, in
one run.

    PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so build/venv/bin/python \
        bench/tree_multi.py [--gboard]

The anchor is TF Privacy 0.9.0's tree_aggregation_accountant._max_tree_sensitivity_square_sum
(the dynamic program the Gboard notebook runs; it needs only numpy and dp_accounting). It is
not in the test environment: the script installs the wheel without dependencies into
build/bench-tfp (pip's cache makes the second run fast) and loads that one module by path
(the package's __init__ imports TensorFlow). For each (T, E, xi): both values (they must
agree), both times (median of --repeat for dpzo, one run of the anchor from a cleared memo)
and the ratio.
--gboard adds the notebook's case (T 2000, E 6, xi 313; the notebook printed 348 s for it on
Colab's machine; on this project's 2-core machines expect minutes). --large times dpzo
alone on the sizes docs/accountant.md 3.6 quotes (each in a fresh process: the time of one
call and the process's peak resident memory), no anchor. Prints Markdown.
"""
import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time

import dpzo

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "build", "bench-tfp")
MODULE = os.path.join(TARGET, "tensorflow_privacy", "privacy", "analysis",
                      "tree_aggregation_accountant.py")
CASES = [(64, 8, 3), (256, 4, 40), (500, 5, 60), (1000, 4, 99), (1000, 3, 150),
         (2000, 3, 313)]
GBOARD = (2000, 6, 313)
LARGE = [(2000, 6, 313), (10000, 10, 999), (20000, 20, 999), (10**6, 100, 9999),
         (300000, 300, 999), (10**13 + 998, 6, 3), (10**6, 1000, 999)]
ONE = """
import resource, sys, time
import dpzo
t, e, x = (int(a) for a in sys.argv[1:4])
t0 = time.perf_counter()
try:
    z = dpzo.tree_sensitivity_squared(t, e, x)[0]
except dpzo.Error:
    z = "refused"
dt = time.perf_counter() - t0
print(z, dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def large():
    print("| T | E | xi | zeta* | dpzo s | peak RSS MB (whole process) |")
    print("|---|---|---|---|---|---|")
    for total, parts, sep in LARGE:
        out = subprocess.run([sys.executable, "-c", ONE, str(total), str(parts), str(sep)],
                             check=True, capture_output=True, text=True).stdout.split()
        print(f"| {total} | {parts} | {sep} | {out[0]} | {float(out[1]):.4f} | "
              f"{int(out[2]) / 1024:.0f} |", flush=True)


def anchor():
    if not os.path.exists(MODULE):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        TARGET, "tensorflow-privacy==0.9.0"], check=True)
    spec = importlib.util.spec_from_file_location("tfp_tree_accountant", MODULE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--gboard", action="store_true", help="add T 2000, E 6, xi 313 (slow)")
    ap.add_argument("--large", action="store_true", help="dpzo alone on large sizes")
    args = ap.parse_args()
    if args.large:
        print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; Python {platform.python_version()}")
        print()
        large()
        return
    tfp = anchor()
    cases = CASES + ([GBOARD] if args.gboard else [])
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; Python {platform.python_version()}")
    print()
    print("| T | E | xi | zeta* dpzo | zeta* TF Privacy | dpzo s | TF Privacy s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for total, parts, sep in cases:
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ours, _steps = dpzo.tree_sensitivity_squared(total, parts, sep)
            times.append(time.perf_counter() - t0)
        t_ours = statistics.median(times)
        # its recursion is memoised across calls (functools.lru_cache): start each case cold
        getattr(tfp._tree_sensitivity_square_sum, "cache_clear", lambda: None)()
        t0 = time.perf_counter()
        theirs = tfp._max_tree_sensitivity_square_sum(parts, sep, total)
        t_theirs = time.perf_counter() - t0
        flag = "" if ours == theirs else " DIFFERENT"
        print(f"| {total} | {parts} | {sep} | {ours} | {theirs:g}{flag} | {t_ours:.4f} | "
              f"{t_theirs:.2f} | {t_theirs / t_ours:.0f} |", flush=True)


if __name__ == "__main__":
    main()
