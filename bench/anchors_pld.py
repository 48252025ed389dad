#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tight-accountant anchors: dp_accounting PLD and prv_accountant on fixed cases.

Measures the two reference "tight" accountants (privacy loss distributions) on
Poisson-subsampled Gaussian workloads (sensitivity 1, add/remove adjacency) and
writes a JSON list of records, one per (case, library, setting), plus a table
on stdout (progress goes to stderr):

  A  self-composition   q=0.01, sigma=1, delta=1e-6, k = 1e3, 1e4, 1e5, 1e6
                        PLD at d=1e-4 and d=1e-3; PRV eps_error=0.01,
                        delta_error=delta/1000 (PRV at k=1e6 is skipped unless
                        ANCHORS_SLOW=1: > 10 min and > 18 GB).
  B  heterogeneous      n distinct single steps, q=0.01, sigma_i =
                        linspace(1, 2, n), n = 10, 100, 1000, delta=1e-6;
                        PLD d=1e-3 (and 1e-4 for n <= 100) via ComposedDpEvent;
                        PRV with one PRV per sigma, max_self_compositions 1.
  C  small delta        q=0.01, sigma=1, k=1000, delta = 1e-10 ... 1e-30;
                        PLD d=1e-4, PRV delta_error=delta/1000.
  D  large epsilon      (q=0.2, sigma=0.8, k=1000), (q=0.05, sigma=0.8,
                        k=20000), delta=1e-5; PLD d=1e-4, PRV as in A.
  E  published vectors  PLD values checked against published numbers.

Record fields: case, label, the case parameters (q, sigma, k, n, delta, eps),
library, version, setting (+ d / eps_error / delta_error), status ("ok",
"error", "timeout", "crashed", "skipped"), the value(s) (epsilon; for PRV
eps_low / eps_est / eps_up, with epsilon = eps_up; delta for delta(eps)
queries), error (message) when not ok, seconds (minimum over `runs` runs of
accountant construction + composition + query; events are built untimed),
seconds_build / seconds_query for that run, peak_rss_mb (peak resident memory
of the worker process), and for E the expected value and relative error. The
first element is a record with case "meta" (versions, machine, options).

Every measurement runs in its own worker process (multiprocessing, spawn) with
a wall-clock timeout (default 300 s, ANCHORS_TIMEOUT or --timeout) and an
address-space limit (default 80% of RAM, ANCHORS_MEM_GB); a timeout, a crash
or an exception is recorded, never fatal. A run that takes < 2 s is repeated
for a best of 3.

Libraries (benchmark only; never a build or test dependency):
  pip install dp-accounting prv-accountant

Usage: python3 bench/anchors_pld.py [--quick] [--out PATH] [--timeout S]
                                    [--only A,B,...] [--print JSON]
  --quick   skip measurements expected to take more than ~20 s (the estimate
            is per record, from a full run on a 2-core x86-64 machine; about
            2 minutes in all); writes bench/results/anchors_pld.quick.json
            unless --out is given, so the full results are kept.
  --only    run only the listed cases.
  --print   print the table of an existing JSON file and exit.
Default output: bench/results/anchors_pld.json. Environment: ANCHORS_SLOW=1
(run PRV at k=1e6), ANCHORS_TIMEOUT (seconds), ANCHORS_MEM_GB.

Nothing from the libraries is copied here: only their public APIs are called.
"""

import argparse
import importlib.metadata
import json
import math
import multiprocessing as mp
import os
import platform
import sys
import time
import traceback
import warnings
from benchjson import jnum, jsonable

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "results", "anchors_pld.json")
QUICK_OUT = os.path.join(HERE, "results", "anchors_pld.quick.json")
QUICK_LIMIT_S = 20.0
REPEAT_BELOW_S = 2.0   # runs shorter than this are repeated (best of 3)


def log(msg):
    print(f"[anchors_pld] {msg}", file=sys.stderr, flush=True)


def version_of(dist_name):
    try:
        return importlib.metadata.version(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------
# Measurements (run inside the worker process)
# --------------------------------------------------------------------------

def _pge(q, sigma):
    import dp_accounting
    return dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))


def _pld_event(job):
    """The dp_accounting event for a job (built untimed)."""
    import dp_accounting
    import numpy as np
    kind = job["event"]
    if kind == "self":           # Poisson-subsampled Gaussian, k-fold
        return dp_accounting.SelfComposedDpEvent(_pge(job["q"], job["sigma"]), job["k"])
    if kind == "hetero":         # n distinct single steps
        sigmas = np.linspace(1.0, 2.0, job["n"])
        return dp_accounting.ComposedDpEvent([_pge(job["q"], float(s)) for s in sigmas])
    if kind == "gauss":          # plain Gaussian, k-fold
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(job["sigma"]), job["k"])
    raise ValueError(kind)


def _run_pld(job):
    from dp_accounting.pld import PLDAccountant
    event = _pld_event(job)
    t0 = time.perf_counter()
    acc = PLDAccountant(value_discretization_interval=job["d"])
    acc.compose(event)
    t1 = time.perf_counter()
    if "eps" in job:
        out = {"delta": acc.get_delta(job["eps"])}
    else:
        out = {"epsilon": acc.get_epsilon(job["delta"])}
    t2 = time.perf_counter()
    return t2 - t0, t1 - t0, t2 - t1, out


def _run_prv(job):
    import numpy as np
    from prv_accountant import PRVAccountant, PoissonSubsampledGaussianMechanism
    if job["event"] == "self":
        prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=job["sigma"],
                                                   sampling_probability=job["q"])]
        counts = [job["k"]]
    elif job["event"] == "hetero":
        prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=float(s),
                                                   sampling_probability=job["q"])
                for s in np.linspace(1.0, 2.0, job["n"])]
        counts = [1] * job["n"]
    else:
        raise ValueError(job["event"])
    t0 = time.perf_counter()
    acc = PRVAccountant(prvs=prvs, max_self_compositions=counts,
                        eps_error=job["eps_error"], delta_error=job["delta_error"])
    t1 = time.perf_counter()
    lo, est, up = acc.compute_epsilon(delta=job["delta"], num_self_compositions=counts)
    t2 = time.perf_counter()
    out = {"eps_low": float(lo), "eps_est": float(est), "eps_up": float(up),
           "epsilon": float(up)}
    return t2 - t0, t1 - t0, t2 - t1, out


RUNNERS = {"dp_accounting": _run_pld, "prv_accountant": _run_prv}


def worker(job, mem_bytes, conn):
    """Runs one job (best of 3 when cheap) and sends a result dict back."""
    import resource
    res = {}
    t_start = None
    try:
        if mem_bytes:
            try:
                resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
            except (ValueError, OSError):
                pass
        import numpy as np
        np.seterr(all="ignore")
        runner = RUNNERS[job["library"]]
        times = []
        best = None
        t_start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            while True:
                total, build, query, out = runner(job)
                times.append(total)
                if best is None or total < best[0]:
                    best = (total, build, query, out)
                if len(times) >= 3 or times[0] >= REPEAT_BELOW_S:
                    break
        msgs = []
        for w in caught:
            m = f"{w.category.__name__}: {w.message}"
            if m not in msgs:
                msgs.append(m[:300])
        res = {"status": "ok", **best[3], "seconds": best[0],
               "seconds_build": best[1], "seconds_query": best[2],
               "runs": len(times), "seconds_all": times}
        if msgs:
            res["warnings"] = msgs[:5]
    except BaseException as e:  # MemoryError included
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
        res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:500],
               "error_at": where}
        if t_start is not None:
            res["seconds_to_error"] = time.perf_counter() - t_start
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    conn.send(res)
    conn.close()


def run_job(job, timeout_s, mem_bytes):
    """Runs job in a fresh spawned process; returns the result dict."""
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=worker, args=(job, mem_bytes, send), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    res = None
    if recv.poll(timeout_s):
        try:
            res = recv.recv()
        except EOFError:
            res = None
    wall = time.perf_counter() - t0
    if res is None:
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            if proc.is_alive():
                proc.kill()
            proc.join()
            res = {"status": "timeout", "error": f"timeout after {timeout_s:g} s",
                   "timeout_s": timeout_s}
        else:
            proc.join()
            code = proc.exitcode
            why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            res = {"status": "crashed",
                   "error": f"worker died without a result ({why}; out of memory?)"}
    else:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
            proc.join()
    res["wall_seconds"] = wall
    recv.close()
    return res


# --------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------

def fmt_e(x):
    """1e-06 -> '1e-6', 0.001 -> '1e-3'."""
    m, e = f"{x:.0e}".split("e")
    return f"{m}e{int(e)}"


def pld(case, label, d, est_s, **params):
    return {"case": case, "label": label, "library": "dp_accounting",
            "setting": f"d={fmt_e(d)}", "d": d, "est_s": est_s, **params}


def prv(case, label, delta_error, est_s, eps_error=0.01, **params):
    return {"case": case, "label": label, "library": "prv_accountant",
            "setting": f"eps_error={eps_error:g}, delta_error={fmt_e(delta_error)}",
            "eps_error": eps_error, "delta_error": delta_error, "est_s": est_s,
            **params}


def jobs(slow):
    """All measurements, in order. est_s: expected seconds (for --quick)."""
    out = []

    # A. self-composition
    q, sigma, delta = 0.01, 1.0, 1e-6
    prv_est = {1000: 1, 10000: 4, 100000: 34, 1000000: 900}
    for k in (1000, 10000, 100000, 1000000):
        p = dict(event="self", q=q, sigma=sigma, k=k, delta=delta)
        lab = f"k=1e{int(round(math.log10(k)))}"
        out.append(pld("A", lab, 1e-4, 2, **p))
        out.append(pld("A", lab, 1e-3, 1, **p))
        j = prv("A", lab, delta / 1000, prv_est[k], **p)
        if k >= 1000000 and not slow:
            j["skip"] = ("PRV at k=1e6 needs > 10 min and > 18 GB of memory; "
                         "set ANCHORS_SLOW=1 to run it")
        out.append(j)

    # B. heterogeneous: n distinct single steps
    for n, pld_est, pld4_est, prv_est in ((10, 1, 5, 2), (100, 3, 16, 12),
                                          (1000, 23, None, 400)):
        p = dict(event="hetero", q=0.01, n=n, sigma_min=1.0, sigma_max=2.0, delta=1e-6)
        out.append(pld("B", f"n={n}", 1e-3, pld_est, **p))
        if n <= 100:
            out.append(pld("B", f"n={n}", 1e-4, pld4_est, **p))
        out.append(prv("B", f"n={n}", 1e-9, prv_est, **p))

    # C. small delta
    for delta in (1e-10, 1e-15, 1e-20, 1e-30):
        p = dict(event="self", q=0.01, sigma=1.0, k=1000, delta=delta)
        out.append(pld("C", f"delta={fmt_e(delta)}", 1e-4, 2, **p))
        out.append(prv("C", f"delta={fmt_e(delta)}", delta / 1000, 5, **p))

    # D. large epsilon
    for q, sigma, k, pe, re in ((0.2, 0.8, 1000, 5, 4), (0.05, 0.8, 20000, 5, 70)):
        p = dict(event="self", q=q, sigma=sigma, k=k, delta=1e-5)
        lab = f"q={q:g},sigma={sigma:g},k={k}"
        out.append(pld("D", lab, 1e-4, pe, **p))
        out.append(prv("D", lab, 1e-5 / 1000, re, **p))

    # E. published vectors (dp_accounting PLD, default d=1e-4)
    out.append(pld("E", "gaussian sqrt(3) x3: delta(eps=1)", 1e-4, 1,
                   event="gauss", sigma=math.sqrt(3.0), k=3, eps=1.0,
                   expected=0.126936, expected_key="delta"))
    out.append(pld("E", "SGM q=0.2,sigma=0.5 x3: delta(eps=1)", 1e-4, 1,
                   event="self", q=0.2, sigma=0.5, k=3, eps=1.0,
                   expected=0.15594, expected_key="delta"))
    out.append(pld("E", "TF MNIST: eps(delta=1e-5)", 1e-4, 2,
                   event="self", q=256 / 60000, sigma=1.1, k=14063, delta=1e-5,
                   expected=2.3817788079120428, expected_key="epsilon"))
    return out


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

def value_text(r):
    st = r.get("status")
    if st != "ok":
        msg = r.get("error") or r.get("skip_reason") or ""
        return f"{st}: {msg}"
    if "eps_up" in r:
        return f"eps {r['eps_low']:.6f} / {r['eps_est']:.6f} / {r['eps_up']:.6f}"
    if "delta" in r and "eps" in r:
        return f"delta(eps={r['eps']:g}) = {r['delta']:.6g}"
    return f"eps {r['epsilon']:.6f}" if isinstance(r["epsilon"], float) else f"eps {r['epsilon']}"


def seconds_text(r):
    s = r.get("seconds")
    if s is None:
        e = r.get("seconds_to_error")
        return f"{e:.3g} (to error)" if e is not None else "-"
    t = f"{s:.3g}" if s < 100 else f"{s:.0f}"
    if r.get("runs", 1) > 1:
        t += f" (best of {r['runs']})"
    return t


def print_table(records):
    rows = [("case", "params", "library", "setting", "value", "seconds", "peak MB")]
    for r in records:
        if r.get("case") == "meta":
            continue
        v = value_text(r)
        if len(v) > 120:
            v = v[:117] + "..."
        if "expected" in r and r.get("status") == "ok":
            v += f"  (expected {r['expected']:.8g}, rel.err {r['rel_error']:.1e})"
        mb = r.get("peak_rss_mb")
        rows.append((r["case"], r["label"], r["library"], r["setting"], v,
                     seconds_text(r), f"{mb:.0f}" if mb else "-"))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"skip measurements expected to take > {QUICK_LIMIT_S:g} s")
    ap.add_argument("--out", default=None, help="output JSON path")
    ap.add_argument("--timeout", type=float,
                    default=float(os.environ.get("ANCHORS_TIMEOUT", "300")),
                    help="per-measurement timeout in seconds (default 300)")
    ap.add_argument("--only", default=None,
                    help="comma-separated case letters to run (e.g. A,E)")
    ap.add_argument("--print", dest="print_path", default=None, metavar="JSON",
                    help="only print the table of an existing output file")
    args = ap.parse_args()

    if args.print_path:
        with open(args.print_path) as f:
            records = json.load(f)
        v = records[0].get("versions", {}) if records else {}
        print(f"dp_accounting {v.get('dp_accounting')}, prv_accountant "
              f"{v.get('prv_accountant')}, numpy {v.get('numpy')}, scipy "
              f"{v.get('scipy')}, Python {v.get('python')}")
        print_table(records)
        return

    slow = os.environ.get("ANCHORS_SLOW", "") == "1"
    out_path = args.out or (QUICK_OUT if args.quick else DEFAULT_OUT)
    mem_gb = os.environ.get("ANCHORS_MEM_GB")
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        ram = None
    mem_bytes = int(float(mem_gb) * 2**30) if mem_gb else (int(0.8 * ram) if ram else 0)

    import numpy as np
    import scipy
    versions = {"dp_accounting": version_of("dp-accounting"),
                "prv_accountant": version_of("prv-accountant"),
                "numpy": np.__version__, "scipy": scipy.__version__,
                "python": platform.python_version()}
    meta = {"case": "meta", "versions": versions,
            "machine": {"platform": platform.platform(),
                        "processor": platform.processor() or platform.machine(),
                        "cpus": os.cpu_count(),
                        "ram_gb": ram / 2**30 if ram else None},
            "options": {"quick": args.quick, "slow": slow, "timeout_s": args.timeout,
                        "mem_limit_gb": mem_bytes / 2**30 if mem_bytes else None,
                        "only": args.only}}
    log(f"versions: {versions}")

    todo = jobs(slow)
    if args.only:
        keep = {c.strip().upper() for c in args.only.split(",")}
        todo = [j for j in todo if j["case"] in keep]

    records = [meta]
    t_start = time.perf_counter()
    for job in todo:
        rec = {k: v for k, v in job.items() if k not in ("est_s", "skip", "expected_key")}
        rec["version"] = versions[job["library"]]
        if job.get("skip"):
            rec.update(status="skipped", skip_reason=job["skip"])
        elif args.quick and job["est_s"] > QUICK_LIMIT_S:
            rec.update(status="skipped",
                       skip_reason=f"--quick (expected ~{job['est_s']} s)")
        else:
            log(f"{job['case']} {job['label']} {job['library']} {rec['setting']} ...")
            rec.update(run_job(job, args.timeout, mem_bytes))
            if "expected" in job and rec.get("status") == "ok":
                got = rec[job["expected_key"]]
                rec["rel_error"] = abs(got - job["expected"]) / abs(job["expected"])
        log(f"  -> {value_text(rec)}  [{seconds_text(rec)} s]")
        records.append(rec)
    meta["total_seconds"] = time.perf_counter() - t_start

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(jsonable(records), f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, out_path)
    log(f"wrote {out_path} ({len(records) - 1} records, "
        f"{meta['total_seconds']:.0f} s)")

    print(f"dp_accounting {versions['dp_accounting']}, prv_accountant "
          f"{versions['prv_accountant']}, numpy {versions['numpy']}, scipy "
          f"{versions['scipy']}, Python {versions['python']}")
    print_table(records)


if __name__ == "__main__":
    main()
