#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/pld_distinct.py: dpzo's PLD accountant on n distinct Poisson-sampled Gaussian
steps (issue 20, item 4) against dp_accounting's PLD accountant, back to back in one run.

Case: sigma_i = numpy.linspace(1, 2, n), q = 0.01, one step each, delta = 1e-6, grid d
(default n = 1000, d = 1e-4). dpzo runs as the CLI (`dpzo epsilon --schedule FILE
--accountant pld --grid d --json`, wall time of the process, two threads: one per
adjacency direction); dp_accounting (PLDAccountant(value_discretization_interval=d),
compose + get_epsilon) in this process. --before BIN also times another dpzo binary (an
earlier build) on the same schedule, so a speed-up is a ratio of one run.

    /work/main/build/venv/bin/python bench/pld_distinct.py [--n 1000] [--grid 1e-4]
        [--bin build/bin/dpzo] [--before OLD_DPZO] [--no-anchor] [--out FILE.md]

Prints a markdown report (and writes it to --out): machine (lscpu model, CPUs, SIMD
flags, load average), each side's epsilon / interval and seconds, and the ratios."""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

from benchutil import emit


def machine():
    info = {"model": "?", "cpus": os.cpu_count(), "flags": ""}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                info["model"] = v.strip()
            if k.strip() == "Flags":
                have = v.split()
                info["flags"] = " ".join(f for f in ("avx", "avx2", "fma", "avx512f", "avx512dq",
                                                    "avx512vl") if f in have)
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_dpzo(binary, sched, grid, delta):
    """(wall seconds, CPU seconds of the process, its JSON)"""
    cmd = [binary, "epsilon", "--schedule", sched, "--delta", repr(delta), "--accountant", "pld",
           "--grid", repr(grid), "--json"]
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, child_cpu() - c0, json.loads(out)


def run_dp_accounting(sigmas, q, grid, delta):
    import dp_accounting
    from dp_accounting.pld import PLDAccountant
    event = dp_accounting.ComposedDpEvent(
        [dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(float(s)))
         for s in sigmas])
    c0, t0 = time.process_time(), time.perf_counter()
    acc = PLDAccountant(value_discretization_interval=grid)
    acc.compose(event)
    eps = acc.get_epsilon(delta)
    return time.perf_counter() - t0, time.process_time() - c0, eps


def fmt_iv(r):
    """The proven interval rounded outward to 6 decimals, the estimate to nearest."""
    lo = math.floor(r["epsilon_lower"] * 1e6) / 1e6
    hi = math.ceil(r["epsilon_upper"] * 1e6) / 1e6
    return (f"[{lo:.6f}, {hi:.6f}] est {r['epsilon_estimate']:.6f} (FFT {r['fft_size']}, "
            f"{r['memory_bytes'] / 1048576:.0f} MiB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--grid", type=float, default=1e-4)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--q", type=float, default=0.01)
    ap.add_argument("--bin", default="build/bin/dpzo")
    ap.add_argument("--before", default=None, help="an earlier dpzo binary to time as well")
    ap.add_argument("--no-anchor", action="store_true", help="skip dp_accounting")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()

    import numpy as np
    sigmas = np.linspace(1.0, 2.0, a.n)
    m = machine()
    load0 = os.getloadavg()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"noise_multiplier": float(s), "sampling_rate": a.q, "steps": 1}
                   for s in sigmas], f)
        sched = f.name
    try:
        t_new, c_new, r_new = run_dpzo(a.bin, sched, a.grid, a.delta)
        t_old = c_old = r_old = None
        if a.before:
            t_old, c_old, r_old = run_dpzo(a.before, sched, a.grid, a.delta)
        t_dp = c_dp = e_dp = None
        if not a.no_anchor:
            t_dp, c_dp, e_dp = run_dp_accounting(sigmas, a.q, a.grid, a.delta)
    finally:
        os.unlink(sched)
    load1 = os.getloadavg()

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    lines = [
        f"# PLD on {a.n} distinct steps: dpzo vs dp_accounting",
        "",
        f"Case: {a.n} distinct Poisson-sampled Gaussian steps, sigma = linspace(1, 2, {a.n}), "
        f"q = {a.q:g}, delta = {a.delta:g}, grid {a.grid:g} (bench/pld_distinct.py, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}).",
        f"Machine: {m['model']}, {m['cpus']} CPUs, flags {m['flags'] or '-'}; load average "
        f"{load0[0]:.2f} at the start, {load1[0]:.2f} at the end (the machine was shared: "
        "absolute seconds are inflated, the ratios are of one run, back to back).",
        "",
        "| side | epsilon | wall seconds | CPU seconds |",
        "|---|---|---|---|",
        f"| dpzo PLD ({a.bin}) | {fmt_iv(r_new)} | {t_new:.2f} | {c_new:.2f} |",
    ]
    if r_old is not None:
        lines.append(f"| dpzo PLD before ({a.before}) | {fmt_iv(r_old)} | {t_old:.2f} | "
                     f"{c_old:.2f} |")
    if e_dp is not None:
        lines.append(f"| dp_accounting 0.6.0 PLD | {e_dp:.6f} | {t_dp:.2f} | {c_dp:.2f} |")
    lines += ["", "dpzo runs the two adjacency directions on two threads (CPU seconds are both "
              "together); dp_accounting uses one core (numpy)."]
    if e_dp is not None:
        lines.append(f"Ratio dp_accounting / dpzo: {t_dp / t_new:.1f}x wall, "
                     f"{c_dp / c_new:.1f}x CPU.")
    if r_old is not None:
        lines.append(f"Ratio dpzo before / dpzo: {t_old / t_new:.2f}x wall, "
                     f"{c_old / c_new:.2f}x CPU.")
    emit("\n".join(lines) + "\n", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
