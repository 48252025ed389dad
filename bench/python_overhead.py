#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Python call overhead of the `dpzo` package, measured in one process run.

  (a) the binding: dpzo.epsilon(...) against the same C calls made through ctypes with no
      package code around them, against a C program timing the same calls in its own loop,
      and against `dpzo epsilon --json` run as a subprocess (what a script calling the CLI
      pays);
  (b) the RDP epsilon of the MNIST setting (sigma 1.1, q 256/60000, 14063 steps, delta 1e-5)
      against dp_accounting's RdpAccountant and Opacus's RDPAccountant on the same orders,
      and through the drop-ins (dpzo.dp_accounting / dpzo.opacus); dpzo's PLD against
      dp_accounting's PLD on the same event;
  (c) calibration (target epsilon 3 for the same setting) against Opacus's
      get_noise_multiplier and dp_accounting's calibrate_dp_mechanism.

Each row is the median of `--repeats` samples; a sample times a loop long enough to
last `--min-time` seconds, so fast calls are not lost in the timer's resolution. All rows
and ratios come from the same run on the same machine (named in the output).

  PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so python3 bench/python_overhead.py \
      --cli build/bin/dpzo --out bench/results/python_overhead.md

Needs dp_accounting and opacus (with torch) for (b) and (c); rows whose package is missing
are reported as such, not dropped silently.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

import dpzo
from benchutil import machine
from dpzo import _lib, _structs

SIGMA, Q, STEPS, DELTA, TARGET = 1.1, 256 / 60000, 14063, 1e-5, 3.0

C_HARNESS = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "dpzo/dpzo.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + 1e-9 * t.tv_nsec; }
/* argv: min_time what(0 epsilon, 1 calibrate) q sigma steps delta target */
int main(int argc, char **argv) {
    if (argc != 8) return 2;
    double min_time = atof(argv[1]), q = atof(argv[3]), sigma = atof(argv[4]);
    int what = atoi(argv[2]);
    unsigned long long steps = strtoull(argv[5], NULL, 10);
    double delta = atof(argv[6]), target = atof(argv[7]), value = 0, t, t0;
    dpzo_ctx *ctx = dpzo_ctx_new();
    long n = 0;
    for (int pass = 0; pass < 2; pass++) {  /* pass 0 warms up (page faults, caches) */
        n = 0;
        t0 = now();
        do {
            if (what == 0) {
                dpzo_event *e = dpzo_event_self_composed(ctx, dpzo_event_poisson_sampled(ctx,
                    q, dpzo_event_gaussian(ctx, sigma)), steps);
                dpzo_dp_result out;
                if (!e || dpzo_event_epsilon(ctx, e, delta, NULL, &out)) return 1;
                value = out.epsilon;
                dpzo_event_free(e);
            } else {
                dpzo_calibration c;
                if (dpzo_calibrate_noise(ctx, target, delta, q, steps, 0, NULL, &c)) return 1;
                value = c.value;
            }
            n++;
        } while ((t = now() - t0) < (pass ? min_time : min_time / 4));
    }
    printf("%.9g %.17g\n", t / n, value);
    dpzo_ctx_free(ctx);
    return 0;
}
"""


class Row:
    """One timed call: ``sample()`` returns seconds per call from one loop of about
    min_time; ``value`` is what the call returned (checked to be the same work)."""

    def __init__(self, name: str, sample: Optional[Callable[[], float]] = None,
                 value: Any = None, missing: str = "") -> None:
        self.name, self.sample, self.value, self.missing = name, sample, value, missing
        self.samples: List[float] = []

    @property
    def s(self) -> float:
        return statistics.median(self.samples)


def py_row(name: str, make: Callable[[], Callable[[], Any]], min_time: float) -> Row:
    """A Python call, looped long enough for one sample to last about min_time."""
    try:
        fn = make()
    except ImportError as e:
        return Row(name, missing=f"{e.name or e} not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = fn()  # warm-up (imports, caches, first touch)
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t = time.perf_counter() - t0
            if t >= min_time or n >= 1 << 20:
                break
            n = max(n * 2, int(n * min_time / max(t, 1e-9) * 1.1))

    def sample() -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            return (time.perf_counter() - t0) / n

    return Row(name, sample, float(value))


def interleaved(rows: List[Row], repeats: int) -> List[Row]:
    """Samples the rows in turn, `repeats` rounds, so that a change in the machine's load
    during the run falls on every row alike; each row's time is its median sample."""
    live = [r for r in rows if not r.missing]
    for _ in range(repeats):
        for r in live:
            r.samples.append(r.sample())
    for r in live:
        sys.stderr.write(f"  {r.name}: {fmt_t(r.s)}\n")
    return rows


def c_row(name: str, what: int, min_time: float, workdir: str, q: float = Q,
          sigma: float = SIGMA, steps: int = STEPS) -> Row:
    """The same C calls timed by a C program linked to the same libdpzo.so (each sample
    runs the program once; after a warm-up it times its own loop of about min_time)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    inc = os.path.join(root, "include")
    if cc is None or not os.path.isdir(inc):
        return Row(name, missing="no C compiler or no include/ folder")
    lib = os.path.realpath(_lib.library_path)  # the exact file the package loaded
    src, exe = os.path.join(workdir, "h.c"), os.path.join(workdir, "h")
    if not os.path.exists(exe):
        with open(src, "w") as f:
            f.write(C_HARNESS)
        r = subprocess.run([cc, "-O2", "-std=c17", "-I", inc, src, lib, "-lm",
                            f"-Wl,-rpath,{os.path.dirname(lib)}", "-o", exe],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return Row(name, missing=f"the C harness did not build: {r.stderr.strip()[:200]}")
    argv = [exe, str(min_time), str(what), repr(q), repr(sigma), str(steps), repr(DELTA),
            repr(TARGET)]

    def run() -> Tuple[float, float]:
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
        return float(out[0]), float(out[1])

    value = run()[1]
    return Row(name, lambda: run()[0], value)


def raw_ctypes_epsilon(q: float = Q, sigma: float = SIGMA,
                       steps: int = STEPS) -> Callable[[], float]:
    """The same C calls through ctypes, with none of the package's code around them."""
    L = ctypes.CDLL(_lib.library_path)
    vp = ctypes.c_void_p
    g = L.dpzo_event_gaussian
    g.restype, g.argtypes = vp, [vp, ctypes.c_double]
    p = L.dpzo_event_poisson_sampled
    p.restype, p.argtypes = vp, [vp, ctypes.c_double, vp]
    sc = L.dpzo_event_self_composed
    sc.restype, sc.argtypes = vp, [vp, vp, ctypes.c_uint64]
    ee = L.dpzo_event_epsilon
    ee.restype = ctypes.c_int
    ee.argtypes = [vp, vp, ctypes.c_double, vp, ctypes.POINTER(_structs.DpResult)]
    fr = L.dpzo_event_free
    fr.restype, fr.argtypes = None, [vp]
    L.dpzo_ctx_new.restype = vp
    ctx = L.dpzo_ctx_new()
    out = _structs.DpResult()

    def run() -> float:
        e = sc(ctx, p(ctx, q, g(ctx, sigma)), steps)
        if not e or ee(ctx, e, DELTA, None, ctypes.byref(out)):
            raise RuntimeError("C call failed")
        fr(e)
        return out.epsilon

    return run


def cli_epsilon(cli: str) -> Callable[[], float]:
    argv = [cli, "epsilon", "--noise-multiplier", repr(SIGMA), "--sampling-rate", repr(Q),
            "--steps", str(STEPS), "--delta", repr(DELTA), "--json"]

    def run() -> float:
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        return float(json.loads(out)["epsilon"])

    return run


def fmt_t(s: float) -> str:
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def table(rows: List[Row], base: Row, value_name: str) -> List[str]:
    out = [f"| Call | Median time | Samples (min – max) | ÷ {base.name.replace('`', '')} "
           f"| {value_name} |", "| :-- | --: | --: | --: | --: |"]
    for r in rows:
        if r.missing:
            out.append(f"| {r.name} | not run: {r.missing} | | | |")
            continue
        ratio = f"{r.s / base.s:.3g}×" if not base.missing else ""
        out.append(f"| {r.name} | {fmt_t(r.s)} | {fmt_t(min(r.samples))} – "
                   f"{fmt_t(max(r.samples))} | {ratio} | {r.value:.10g} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/bin/dpzo", help="the dpzo command line")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--min-time", type=float, default=0.5,
                    help="seconds per sample (the loop is lengthened to reach it)")
    ap.add_argument("--out", help="write the markdown report here (default: stdout)")
    args = ap.parse_args()
    import logging
    logging.getLogger("absl").setLevel(logging.ERROR)
    mt, reps = args.min_time, args.repeats
    work = tempfile.mkdtemp(prefix="dpzo-overhead-")

    t_start = time.time()
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = ["# Python call overhead: dpzo's package against its CLI, its C library, "
             "dp_accounting and Opacus", "",
             f"- machine: {machine()}",
             f"- dpzo {dpzo.__version__} (library {os.path.basename(_lib.library_path)}); "
             + ", ".join(f"{m} {v}" for m, v in _versions().items()),
             f"- each time is the median of {reps} samples, a sample being a loop of at least "
             f"{mt} s; the rows of a table are sampled in turn (round robin), all in one "
             "process run of `bench/python_overhead.py`",
             "- setting: noise multiplier 1.1, Poisson q = 256/60000, 14063 steps, "
             "delta 1e-5 (MNIST, Abadi et al.); calibration target epsilon 3", ""]

    def eps(**kw: Any) -> Callable[[], Callable[[], float]]:
        return lambda: lambda: dpzo.epsilon(noise_multiplier=SIGMA, sampling_rate=Q,
                                            steps=STEPS, delta=DELTA, **kw).epsilon

    # (a) the binding
    sys.stderr.write("(a) binding\n")
    a_rows = [py_row("`dpzo.epsilon(...)` (the package)", eps(), mt),
              py_row("the same C calls through bare ctypes", raw_ctypes_epsilon, mt),
              c_row("the same C calls timed in a C program", 0, mt, work)]
    if os.access(args.cli, os.X_OK):
        a_rows.append(py_row("`dpzo epsilon ... --json` as a subprocess (+ JSON parse)",
                             lambda: cli_epsilon(args.cli), mt))
    else:
        a_rows.append(Row("`dpzo epsilon --json` subprocess", missing=f"no CLI at {args.cli}"))
    # the same with a cheap query (one Gaussian release, sigma 5): the fixed cost per call
    cheap = dict(q=1.0, sigma=5.0, steps=1)
    a_rows += [py_row("`dpzo.epsilon(...)`, one Gaussian release (sigma 5)",
                      lambda: lambda: dpzo.epsilon(noise_multiplier=5.0, sampling_rate=1.0,
                                                   steps=1, delta=DELTA).epsilon, mt),
               py_row("the same C calls through bare ctypes, one release",
                      lambda: raw_ctypes_epsilon(**cheap), mt),
               c_row("the same C calls timed in a C program, one release", 0, mt, work,
                     **cheap)]
    interleaved(a_rows, reps)
    base = a_rows[2] if not a_rows[2].missing else a_rows[1]
    lines += ["## (a) The binding: one certified RDP epsilon", "",
              "The same work four ways: the package's call (argument checks, the event "
              "dataclasses, building and freeing the C event tree, the result dataclass), "
              "the bare C calls through ctypes, the C calls in a C loop, and the CLI run "
              "as a process.", ""]
    lines += table(a_rows[:4], base, "epsilon")
    lines += ["", "The fixed cost of a call, on a query that costs the library little:", ""]
    cbase = a_rows[6] if not a_rows[6].missing else a_rows[5]
    lines += table(a_rows[4:], cbase, "epsilon")
    lines.append("")
    pkg, raw = a_rows[4], a_rows[5]
    if not pkg.missing and not cbase.missing and not raw.missing:
        lines.append(f"- The package's fixed cost per call: {fmt_t(pkg.s - cbase.s)} over the "
                     f"C program ({fmt_t(raw.s - cbase.s)} of it is ctypes itself). On the "
                     "MNIST query it is within the run-to-run spread of the library's own "
                     "time.")
    if not a_rows[3].missing and not a_rows[0].missing:
        lines.append(f"- The CLI as a subprocess takes {a_rows[3].s / a_rows[0].s:.3g}× "
                     "the package's call for the same answer (process start, argument "
                     "parsing, JSON).")
    lines.append("")

    # (b) RDP epsilon against the anchors
    sys.stderr.write("(b) RDP epsilon\n")
    b_rows = interleaved([
        py_row("dpzo, continuous orders (default)", eps(), mt),
        py_row("dpzo, dp_accounting's 156 orders", eps(orders="dp_accounting"), mt),
        py_row("dp_accounting RdpAccountant (156 orders)", _dpa_rdp, mt),
        py_row("dpzo.dp_accounting.DpzoAccountant (drop-in, continuous)", _dpzo_dpa, mt),
        py_row("dpzo, Opacus's 151 orders", eps(orders="opacus"), mt),
        py_row("Opacus RDPAccountant (151 orders)", _opacus_rdp, mt),
        py_row("dpzo.opacus.DpzoAccountant (drop-in, continuous)", _dpzo_opacus, mt),
    ], reps)
    lines += ["## (b) RDP epsilon of the MNIST setting against the anchors", "",
              "dpzo's epsilon is certified (upward-rounded RDP and conversion); the anchors' "
              "are floating-point estimates on their grids. Same orders, same conversion "
              "(Balle et al. 2020): compare each anchor with the dpzo row on its grid.", ""]
    lines += table(b_rows, b_rows[0], "epsilon")
    lines += [""] + _ratio_lines([("dp_accounting", b_rows[2], b_rows[1]),
                                  ("Opacus", b_rows[5], b_rows[4])])
    sys.stderr.write("(b') PLD\n")
    p_rows = interleaved([
        py_row("dpzo PLD (grid 1e-4), proven upper end", eps(accountant="pld"), max(mt, 0.5)),
        py_row("dp_accounting PLDAccountant (1e-4, pessimistic)", _dpa_pld, max(mt, 0.5)),
    ], max(3, reps // 2))
    lines += ["", "Tight accountants on the same event:", ""]
    lines += table(p_rows, p_rows[0], "epsilon")
    lines += [""] + _ratio_lines([("dp_accounting PLD", p_rows[1], p_rows[0])]) + [""]

    # (c) calibration
    sys.stderr.write("(c) calibration\n")
    c_rows = interleaved([
        py_row("`dpzo.calibrate(...)` (certified, sigma to 1e-6 relative)",
               lambda: lambda: dpzo.calibrate(epsilon=TARGET, delta=DELTA, sampling_rate=Q,
                                              steps=STEPS).noise_multiplier, mt),
        py_row("dpzo.opacus.get_noise_multiplier (the same, Opacus's signature)", _dpzo_gnm,
               mt),
        c_row("`dpzo_calibrate_noise` timed in a C program", 1, mt, work),
        py_row("Opacus get_noise_multiplier (epsilon_tolerance 0.01)", _opacus_gnm, mt),
        py_row("dp_accounting calibrate_dp_mechanism (RdpAccountant, tol 1e-6)", _dpa_cal, mt),
    ], max(3, reps // 2))
    lines += ["## (c) Calibration: the noise multiplier for epsilon 3", "",
              "The value column is the noise multiplier found. dpzo's is certified (its "
              "proven epsilon <= 3) and tight to 1e-6 relative; Opacus stops when its "
              "epsilon is within 0.01 of the target, dp_accounting at 1e-6 in sigma.", ""]
    lines += table(c_rows, c_rows[0], "noise multiplier")
    lines += [""] + _ratio_lines([("Opacus", c_rows[3], c_rows[0]),
                                  ("dp_accounting", c_rows[4], c_rows[0])])
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += ["", f"Total run time: {time.time() - t_start:.0f} s; load average (1 min) "
              f"{load0:.1f} at the start and {load1:.1f} at the end on {os.cpu_count()} "
              "cores (a shared machine: compare rows of one table, sampled in turn, rather "
              "than absolute times).", ""]
    shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


def _ratio_lines(pairs: List[Any]) -> List[str]:
    out = []
    for name, anchor, ours in pairs:
        if anchor.missing or ours.missing:
            continue
        out.append(f"- {name}: {anchor.s / ours.s:.3g}× the time of "
                   f"{ours.name.replace('`', '')}.")
    return out


def _versions() -> Dict[str, str]:
    from importlib import metadata
    out = {}
    for m in ("dp-accounting", "opacus", "torch", "numpy", "scipy"):
        try:
            out[m] = metadata.version(m)
        except metadata.PackageNotFoundError:
            out[m] = "not installed"
    return out


def _mnist_dp_event() -> Any:
    from dp_accounting import dp_event as E
    return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(Q, E.GaussianDpEvent(SIGMA)), STEPS)


def _dpa_rdp() -> Callable[[], float]:
    from dp_accounting.rdp import RdpAccountant
    ev = _mnist_dp_event()
    return lambda: RdpAccountant().compose(ev).get_epsilon(DELTA)


def _dpa_pld() -> Callable[[], float]:
    from dp_accounting.pld import PLDAccountant
    ev = _mnist_dp_event()
    return lambda: PLDAccountant().compose(ev).get_epsilon(DELTA)


def _dpzo_dpa() -> Callable[[], float]:
    from dpzo.dp_accounting import DpzoAccountant
    ev = _mnist_dp_event()
    return lambda: DpzoAccountant().compose(ev).get_epsilon(DELTA)


def _opacus_rdp() -> Callable[[], float]:
    from opacus.accountants import RDPAccountant

    def run() -> float:
        acc = RDPAccountant()
        acc.history = [(SIGMA, Q, STEPS)]
        return acc.get_epsilon(DELTA)

    return run


def _dpzo_opacus() -> Callable[[], float]:
    from dpzo.opacus import DpzoAccountant

    def run() -> float:
        acc = DpzoAccountant()
        acc.history = [(SIGMA, Q, STEPS)]
        return acc.get_epsilon(DELTA)

    return run


def _dpzo_gnm() -> Callable[[], float]:
    from dpzo.opacus import get_noise_multiplier
    return lambda: get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA,
                                        sample_rate=Q, steps=STEPS)


def _opacus_gnm() -> Callable[[], float]:
    from opacus.accountants.utils import get_noise_multiplier
    return lambda: get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA,
                                        sample_rate=Q, steps=STEPS, accountant="rdp",
                                        epsilon_tolerance=0.01)


def _dpa_cal() -> Callable[[], float]:
    from dp_accounting import dp_event as E
    from dp_accounting.mechanism_calibration import calibrate_dp_mechanism
    from dp_accounting.rdp import RdpAccountant

    def make(s: float) -> Any:
        return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(Q, E.GaussianDpEvent(s)), STEPS)

    return lambda: calibrate_dp_mechanism(RdpAccountant, make, TARGET, DELTA)


if __name__ == "__main__":
    sys.exit(main())
