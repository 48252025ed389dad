#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""RDP accounting of batches sampled without replacement (issue 20): dpzo against
dp_accounting's RdpAccountant (REPLACE_ONE, SampledWithoutReplacementDpEvent), in one run.

For each case (sigma, batch B of N records, T steps, delta) and each order choice
(dp_accounting's 156-order grid, and dpzo's default continuous search), it times:

  - dpzo, library: dpzo.epsilon(...) through the Python package (ctypes), each sample in
    a fresh thread, so in a fresh dpzo_ctx: nothing cached from an earlier sample (the
    per-sigma enclosures are built again every time);
  - dpzo, CLI: `dpzo epsilon ... --json` as a subprocess (process start included);
  - optionally the same CLI of another build (--baseline-cli, e.g. the commit before);
  - dp_accounting 0.6.0: a new RdpAccountant, compose, get_epsilon_and_optimal_order, on
    its default orders (dp_accounting has no continuous search: its grid is its default).

Each time is the median of --repeats samples. Ratios are dp_accounting's time over
dpzo's, from the same run on the same machine (named in the output). Run from the
repository root with the venv that has dp_accounting:

  PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so /work/main/build/venv/bin/python \\
      bench/wor_speed.py --cli build/bin/dpzo --out bench/results/wor_speed.md
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from typing import Callable, List, Optional, Tuple

import dpzo
from benchutil import emit, machine

CASES = [  # label, sigma, B, N, T, delta
    ("MNIST: B=256 of 60,000, sigma 1.1, T=14,063", 1.1, 256, 60000, 14063, 1e-5),
    ("sigma 16.234, B=27,340 of 931,148, T=5", 16.234, 27340, 931148, 5, 1e-5),
    ("issue 20: sigma 9.2291, B=10,516 of 219,784, T=1, delta 1.01e-11",
     9.22913310919996, 10516, 219784, 1, 1.013383779700047e-11),
]


def median_time(fn: Callable[[], object], repeats: int) -> Tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def in_fresh_thread(fn: Callable[[], object]) -> Callable[[], object]:
    """fn run in a new thread: dpzo's context is per thread, so nothing is cached."""
    def run() -> object:
        box: List[object] = []
        th = threading.Thread(target=lambda: box.append(fn()))
        th.start()
        th.join()
        return box[0]
    return run


def dpzo_lib(sigma: float, b: int, n: int, t: int, delta: float, orders: Optional[str]):
    return in_fresh_thread(lambda: dpzo.epsilon(noise_multiplier=sigma, batch_size=b,
                                                dataset_size=n, steps=t, delta=delta,
                                                orders=orders))


def dpzo_cli(cli: str, sigma: float, b: int, n: int, t: int, delta: float, orders: str):
    args = [cli, "epsilon", "--noise-multiplier", repr(sigma), "--batch-size", str(b),
            "--dataset-size", str(n), "--steps", str(t), "--delta", repr(delta),
            "--orders", orders, "--json"]

    def run() -> object:
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    return run


def dp_accounting_run(sigma: float, b: int, n: int, t: int, delta: float):
    import dp_accounting
    from dp_accounting import dp_event as E
    from dp_accounting.rdp import rdp_privacy_accountant as R

    def run() -> object:
        acc = R.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        acc.compose(E.SelfComposedDpEvent(
            E.SampledWithoutReplacementDpEvent(n, b, E.GaussianDpEvent(sigma)), t))
        return acc.get_epsilon_and_optimal_order(delta)
    return run


def fmt_t(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/bin/dpzo")
    ap.add_argument("--baseline-cli", default=None,
                    help="another build's dpzo (e.g. the commit before), timed the same way")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None, help="write the Markdown report here too")
    a = ap.parse_args()

    lines = ["# Sampling without replacement: dpzo against dp_accounting (issue 20)", "",
             f"Machine: {machine()}. Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
             f" with bench/wor_speed.py, median of {a.repeats} samples each, all rows in one"
             " run. The machine is shared with other jobs, so absolute times move between runs;"
             " the ratios come from rows measured back to back.", "",
             "dpzo library: `dpzo.epsilon` through ctypes in a fresh thread (a fresh `dpzo_ctx`:"
             " nothing cached). CLI: `dpzo epsilon --json` as a subprocess. dp_accounting 0.6.0:"
             " `RdpAccountant(REPLACE_ONE)` on its default orders (its only choice; shown on both"
             " rows). Ratio: dp_accounting's time over dpzo's.", ""]
    head = ("| case | orders | dpzo library | dpzo CLI |"
            + (" baseline CLI |" if a.baseline_cli else "")
            + " dp_accounting | ratio (library) | ratio (CLI) | epsilon dpzo (order) |"
            " epsilon dp_accounting (order) |")
    lines += [head, "|" + " --- |" * (head.count("|") - 1)]
    for label, sigma, b, n, t, delta in CASES:
        t_dpa, (e_dpa, o_dpa) = median_time(dp_accounting_run(sigma, b, n, t, delta), a.repeats)
        for orders in ("dp_accounting", "default"):
            t_lib, r = median_time(dpzo_lib(sigma, b, n, t, delta,
                                            None if orders == "default" else orders), a.repeats)
            t_cli, j = median_time(dpzo_cli(a.cli, sigma, b, n, t, delta, orders), a.repeats)
            assert isinstance(j, dict) and abs(j["epsilon"] - r.epsilon) <= 1e-12 * r.epsilon
            row = f"| {label} | {orders} | {fmt_t(t_lib)} | {fmt_t(t_cli)} |"
            if a.baseline_cli:
                t_base, jb = median_time(dpzo_cli(a.baseline_cli, sigma, b, n, t, delta, orders),
                                         a.repeats)
                row += f" {fmt_t(t_base)} ({jb['epsilon']:.10g}) |"
            row += (f" {fmt_t(t_dpa)} | {t_dpa / t_lib:.1f}x | {t_dpa / t_cli:.1f}x |"
                    f" {r.epsilon:.10g} ({r.order:g}) | {float(e_dpa):.10g} ({float(o_dpa):g}) |")
            lines.append(row)
            sys.stderr.write(row + "\n")
    emit("\n".join(lines) + "\n", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
