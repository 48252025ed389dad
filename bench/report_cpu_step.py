#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 18's CPU step goals as a table, from bench/cpu_step.sh's JSON lines.

    python3 bench/report_cpu_step.py machine [--build DIR]  a JSON line naming this machine
    python3 bench/report_cpu_step.py tag K=V... < IN     IN's JSON lines with fields added
    python3 bench/report_cpu_step.py report FILE.jsonl   the Markdown report (stdout)

The JSON lines are dpzo-bench-zo's ("side": "dpzo", one per model and process), those of
bench/torch_step.py ("side": "torch", one per configuration, pooling its alternations) and
one "machine" line; cpu_step.sh tags each with its "variant" (native: the kernels dpzo's
selection runs, dpzo/blas.h; haswell: OpenBLAS's AVX2 kernels; prescott: its generic SSE3
kernels, what OpenBLAS 0.3.21 picks on a CPU it does not know). Several dpzo lines of one configuration (the alternations with the
PyTorch side) are pooled: the minimum of their minima and the median of their medians.
Standard library only.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time

FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512_bf16")


def machine() -> dict:
    info = {"side": "machine", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "nproc": os.cpu_count(), "kernel": platform.release(),
            "loadavg": open("/proc/loadavg").read().split()[:3]}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL="C")).stdout
        fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        info["cpu"] = fields.get("Model name", "?")
        info["cpu_family"] = fields.get("CPU family")
        info["cpu_model"] = fields.get("Model")
        have = set(fields.get("Flags", "").split())
        info["flags"] = {f: f in have for f in FLAGS}
    except OSError:
        info["cpu"] = "? (no lscpu)"
    try:
        info["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        info["git_dirty"] = bool(dirty)
    except OSError:
        pass
    return info


def tag(pairs: list[str]) -> None:
    extra = dict(p.split("=", 1) for p in pairs)
    for line in sys.stdin:
        if line.strip():
            row = json.loads(line)
            row.update(extra)
            print(json.dumps(row), flush=True)


def msp(lo, med) -> str:
    return "-" if lo is None or med is None else "%.2f / %.2f ms" % (lo, med)


def ms(lo_med) -> str:
    """msp of a (min, median) pair in seconds."""
    return msp(*[None if v is None else 1e3 * v for v in lo_med])


def pair(lo, med, fmt="%.2f") -> str:
    if lo is None or med is None:
        return "-"
    return (fmt % lo) + " / " + (fmt % med)


def pooled(rows, key_min, key_med):
    mins = [r[key_min] for r in rows if r.get(key_min) is not None]
    meds = [r[key_med] for r in rows if r.get(key_med) is not None]
    return (min(mins) if mins else None, statistics.median(meds) if meds else None)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def verdict(lo, med, goal, strict=False) -> str:
    if lo is None or med is None:
        return "not run"
    ok = [(v < goal) if strict else (v <= goal) for v in (lo, med)]
    return "yes" if all(ok) else ("min only" if ok[0] else "no")


def report(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    mach = dict(next((r for r in rows if r.get("side") == "machine"), {}))
    mach.update(next((r for r in rows if r.get("side") == "machine_end"), {}))
    dpzo = [r for r in rows if r.get("side") == "dpzo"]
    torch = [r for r in rows if r.get("side") == "torch"]
    configs = []
    for r in dpzo + torch:
        c = (r.get("variant", "native"), int(r["threads"]))
        if c not in configs:
            configs.append(c)

    flags = mach.get("flags", {})
    print("# dpzo's DPZero step on the CPU against OpenBLAS and PyTorch (issue 18)")
    print()
    fam = (" (family %s, model %s)" % (mach["cpu_family"], mach["cpu_model"])
           if mach.get("cpu_family") else "")
    print("Machine: **%s**%s, %s logical CPUs, flags: %s; kernel %s. Run %s with %s, the "
          "working tree at git %s%s; load average %s at the start and %s at the end (other "
          "jobs may share the machine)."
          % (mach.get("cpu", "?"), fam, mach.get("nproc", "?"),
             " ".join(f if v else "no-" + f for f, v in flags.items()) or "?",
             mach.get("kernel", "?"), mach.get("date", "?"),
             "%s/bin/dpzo-bench-zo" % mach.get("build", "build"), mach.get("git", "?"),
             " (with uncommitted changes)" if mach.get("git_dirty") else "",
             " ".join(mach.get("loadavg", [])) or "?",
             " ".join(mach.get("loadavg_end", [])) or "?"))
    if mach.get("note"):
        print()
        print("Note: %s" % mach["note"])
    blas = sorted({r.get("openblas", "?") for r in dpzo})
    cores = sorted({r.get("openblas_core", "?") for r in dpzo})
    print()
    print("OpenBLAS: %s (cores used: %s). PyTorch: %s." % (
        "; ".join(blas) or "?", ", ".join(cores) or "?",
        ", ".join(sorted({"%s (%s, MKL %s)" % (r.get("torch"), r.get("cpu_capability"),
                                                "yes" if r.get("mkl") else "no")
                          for r in torch})) or "not run (no torch in the benchmark's Python)"))
    selections = []
    for r in dpzo:
        line = (r.get("variant", "native"), r.get("blas"))
        if line[1] and line not in selections:
            selections.append(line)
    if selections:
        print()
        print("BLAS kernels by variant (dpzo's selection, `dpzo train --verbose` prints the same "
              "line):")
        print()
        for variant, line in selections:
            print("- %s: %s" % (variant, line))
        print()
    data = sorted({r.get("data", "") for r in torch})
    if data:
        print("PyTorch's data: %s. dpzo's: Fashion-MNIST (dpzo_fmnist_find)." % ", ".join(data))
    print()
    print("Every cell is **min / median** of wall-clock times (dpzo lines pooled over the "
          "alternations: min of minima, median of medians). Ratios are of the same statistic: "
          "min / min and median / median. On a machine shared with other jobs the minimum is "
          "the steadier figure: a median can be several times it, for PyTorch's two OpenMP "
          "threads most of all. mlp:128 = 784-128-10, batch 256, Q = 1, Gaussian directions, "
          "DPZero through dpzo_trainer_run (batches of exactly 256, clipping, CSPRNG noise, "
          "ledger); sgemm = the step's four products (X[256x784] W1^T and H[256x128] W2^T, "
          "for each sign: 104 MFLOP) with cblas_sgemm in the same process and threads.")
    print()
    print("| variant | threads | step / sgemm (goal <= 1.5) | dpzo / PyTorch (goal < 1) "
          "| step / 2 fwd mlp:128 (goal <= 1.2) | step / 2 fwd cnn:8-16 (goal <= 1.2) |")
    print("|---|---:|---:|---:|---:|---:|")
    times, cpu_rows, floors = [], [], []
    for variant, th in configs:
        sel = lambda side, model: [r for r in (dpzo if side == "dpzo" else torch)
                                   if r.get("variant", "native") == variant
                                   and int(r["threads"]) == th and r.get("model") == model]
        mlp, cnn, tmlp = sel("dpzo", "mlp:128"), sel("dpzo", "cnn:8-16"), sel("torch", "mlp:128")
        step = pooled(mlp, "step_min_s", "step_s")
        fwd2 = pooled(mlp, "fwd2_min_s", "fwd2_s")
        gemm = pooled(mlp, "sgemm_s", "sgemm_median_s")
        tstep = pooled(tmlp, "step_min_s", "step_s")
        tfwd2 = pooled(tmlp, "fwd2_min_s", "fwd2_s")
        cstep = pooled(cnn, "step_min_s", "step_s")
        cfwd2 = pooled(cnn, "fwd2_min_s", "fwd2_s")
        r_gemm = [ratio(step[i], gemm[i]) for i in (0, 1)]
        r_torch = [ratio(step[i], tstep[i]) for i in (0, 1)]
        r_fwd = [ratio(step[i], fwd2[i]) for i in (0, 1)]
        r_cnn = [ratio(cstep[i], cfwd2[i]) for i in (0, 1)]
        print("| %s | %d | %s (%s) | %s (%s) | %s (%s) | %s (%s) |" % (
            variant, th, pair(*r_gemm), verdict(*r_gemm, 1.5),
            pair(*r_torch), verdict(*r_torch, 1.0, strict=True),
            pair(*r_fwd), verdict(*r_fwd, 1.2), pair(*r_cnn), verdict(*r_cnn, 1.2)))
        if th == 1:
            c = {k: pooled(rows_, "cpu_%s_min_s" % k2, "cpu_%s_s" % k2)
                 for k, rows_, k2 in (("step", mlp, "step"), ("fwd2", mlp, "fwd2"),
                                      ("tstep", tmlp, "step"), ("cstep", cnn, "step"),
                                      ("cfwd2", cnn, "fwd2"))}
            c["gemm"] = pooled(mlp, "cpu_sgemm_min_s", "cpu_sgemm_s")
            rg = [ratio(c["step"][i], c["gemm"][i]) for i in (0, 1)]
            rt = [ratio(c["step"][i], c["tstep"][i]) for i in (0, 1)]
            rf = [ratio(c["step"][i], c["fwd2"][i]) for i in (0, 1)]
            rc = [ratio(c["cstep"][i], c["cfwd2"][i]) for i in (0, 1)]
            cpu_rows.append("| %s | %d | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s | %s |" % (
                variant, th, pair(*rg), verdict(*rg, 1.5), pair(*rt),
                verdict(*rt, 1.0, strict=True), pair(*rf), verdict(*rf, 1.2), pair(*rc),
                verdict(*rc, 1.2),
                ms(c["step"]),
                ms(c["tstep"])))
        dfill = pooled(mlp, "dir_fill_min_s", "dir_fill_s")
        gath = pooled(mlp, "gather_min_s", "gather_s")
        if all(x[0] is not None for x in (gemm, dfill, gath, step)):
            fl = [gemm[i] + dfill[i] + gath[i] if None not in (gemm[i], dfill[i], gath[i])
                  else None for i in (0, 1)]
            floors.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                variant, th, ms(gemm), ms(dfill), ms(gath), ms(fl),
                pair(*[ratio(fl[i], gemm[i]) for i in (0, 1)]), ms(step),
                pair(*[ratio(step[i], fl[i]) for i in (0, 1)])))
        gf = [r.get("sgemm_gflops") for r in mlp if r.get("sgemm_gflops")]
        times.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s | %s |" % (
                         variant, th, ", ".join(sorted({r.get("openblas_core", "?")
                                                        for r in mlp + cnn})) or "-",
                         ", ".join(sorted({r.get("cpu_capability", "?") for r in tmlp}))
                         or "-",
                         ms(step),
                         ms(gemm),
                         "%.0f" % max(gf) if gf else "-",
                         ms(tstep),
                         ms(fwd2),
                         ms(tfwd2),
                         ms(cstep),
                         ms(cfwd2),
                         "%d / %d / %d" % (sum(r.get("timed_steps", 0) for r in mlp),
                                           sum(r.get("timed_steps", 0) for r in tmlp),
                                           sum(r.get("timed_steps", 0) for r in cnn))))
    print()
    print("(yes: the goal holds for min and median; min only: for the minimum alone.)")
    print()
    if cpu_rows:
        print("The same samples in per-process CPU time, one thread only (time the process "
              "ran, so time that other jobs took the core away is not counted; with more "
              "threads CPU time adds the threads up, spin-waits included, and is not "
              "shown):")
        print()
        print("| variant | threads | step / sgemm | dpzo / PyTorch | step / 2 fwd mlp:128 "
              "| step / 2 fwd cnn:8-16 | dpzo step mlp:128 | PyTorch step |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for line in cpu_rows:
            print(line)
        print()
    print("| variant | threads | OpenBLAS core | PyTorch ISA | dpzo step mlp:128 "
          "| sgemm, 4 products | sgemm GFLOP/s (best) | PyTorch step | dpzo 2 fwd mlp:128 "
          "| PyTorch 2 fwd | dpzo step cnn:8-16 | dpzo 2 fwd cnn:8-16 "
          "| steps timed (dpzo mlp / PyTorch / cnn) |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in times:
        print(line)
    print()
    if floors:
        print("What no step can skip (mlp:128, dpzo-bench-zo's dir and gather samples): the "
              "four products (sgemm), one Gaussian direction of the model's 101,770 floats "
              "(dpzo_dir_fill: Philox and the exactly specified double-precision Box-Muller "
              "that the CUDA kernels reproduce bit for bit) and the copy of the batch's 256 "
              "random rows from the data set (gather). Their sum is the floor; "
              "floor / sgemm is the best step / sgemm any step built on these parts can "
              "reach, and step / floor what the rest of the step (materialising both signs' "
              "weights, packing each block again, the bias, ReLU and loss, clipping, noise, "
              "the update) adds.")
        print()
        print("| variant | threads | sgemm | direction | gather | floor "
              "| floor / sgemm | dpzo step | step / floor |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for line in floors:
            print(line)
        print()
    if any(c[0] == "prescott" for c in configs):
        print("Variant prescott: `OPENBLAS_CORETYPE=Prescott` makes OpenBLAS use its generic "
              "SSE3 kernels (dpzo's BLAS products and the sgemm anchor), the kernels OpenBLAS "
              "0.3.21 picks by itself on a CPU it does not know; dpzo respects a user's "
              "OPENBLAS_CORETYPE, so it does not switch them. PyTorch is not held back (its "
              "own dispatch goes by CPU features): the dpzo / PyTorch column says what an "
              "unknown CPU would cost without dpzo's selection.")
        print()
    if any(c[0] == "haswell" for c in configs):
        print("Variant haswell: `OPENBLAS_CORETYPE=Haswell` makes OpenBLAS use its AVX2 "
              "kernels (dpzo's BLAS products and the sgemm anchor), and PyTorch is held to "
              "AVX2 by `ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 "
              "ONEDNN_MAX_CPU_ISA=AVX2`. " + (
                  "dpzo's own code is the build " + os.environ["AVX2_BUILD"] + ", configured "
                  "with -DDPZO_EMULATE_AVX2=ON: its loops compiled for Haswell without "
                  "multiversioning and the direction generator's AVX2 version, so dpzo and "
                  "OpenBLAS both run AVX2 code (libc and libm still pick their own versions): "
                  "a stand-in for an AVX2-only CPU, with this machine's caches and clock."
                  if os.environ.get("AVX2_BUILD") else
                  "dpzo's own code (its target_clones: the direction "
                  "generator, the perturbation, the update and any hand loops) still picks its "
                  "AVX-512 clones on this machine: the variant approximates an AVX2-only CPU for "
                  "the BLAS part only (AVX2_BUILD=a -DDPZO_EMULATE_AVX2=ON build covers dpzo's "
                  "code too)."))
        print()


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "machine":
        m = machine()
        if "--end" in argv:
            m = {"side": "machine_end", "loadavg_end": m["loadavg"], "date_end": m["date"]}
        if "--build" in argv[:-1]:
            m["build"] = argv[argv.index("--build") + 1]
        if os.environ.get("NOTE") and "--end" not in argv:
            m["note"] = os.environ["NOTE"]
        print(json.dumps(m))
        return 0
    if len(argv) >= 1 and argv[0] == "tag":
        tag(argv[1:])
        return 0
    if len(argv) == 2 and argv[0] == "report":
        report(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
