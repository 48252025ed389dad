#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference ("anchor") timings for the dpzo speed benchmark.

Times the same workloads as build/bin/dpzo-bench using the reference
libraries, and prints ONE JSON object on stdout (progress goes to stderr):

  W1 per_order    one Poisson-subsampled Gaussian step (q=0.01, sigma=1):
                  microseconds per RDP order.
  W2 hetero       n distinct single steps, sigma_i = linspace(1, 2, n),
                  q=0.01, delta=1e-6: composition + conversion time.
  W3 calibrate    smallest sigma for (eps=8, delta=1e-5, q=0.04, 2250 steps).
  W4 large_order  RDP values at orders 1024, 2048, 4096, 10000.

Libraries (installed by bench/run.sh):
  pip install dp-accounting
  pip install --no-deps opacus   # torch is not needed: only the file
                                 # opacus/accountants/analysis/rdp.py is loaded,
                                 # by path, without importing the package.

Usage: python3 bench/anchors.py [--full] > anchors.json
  --full   also run W2 with n=1000 (about 10^3 times the n=1 cost).

Nothing from the libraries is copied here: their public functions are called.
The only re-implementation is Opacus's get_noise_multiplier search loop
(sigma bracket doubling + bisection), which in Opacus needs a torch-importing
accountant object; it is re-run here around opacus compute_rdp /
get_privacy_spent and labelled "opacus-style".
"""

import argparse
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import sys
import sysconfig
import time
import warnings

import numpy as np
import scipy

import dp_accounting
from dp_accounting import rdp as dp_rdp
from benchjson import jnum, jsonable


# --------------------------------------------------------------------------
# Setup helpers
# --------------------------------------------------------------------------

def log(msg):
    print(f"[anchors] {msg}", file=sys.stderr, flush=True)


def find_opacus_rdp_file():
    """Locate opacus/accountants/analysis/rdp.py without importing opacus."""
    try:
        dist = importlib.metadata.distribution("opacus")
        path = dist.locate_file("opacus/accountants/analysis/rdp.py")
        if os.path.isfile(path):
            return str(path)
    except importlib.metadata.PackageNotFoundError:
        pass
    candidates = [sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")]
    candidates += sys.path
    for base in candidates:
        if not base:
            continue
        path = os.path.join(base, "opacus", "accountants", "analysis", "rdp.py")
        if os.path.isfile(path):
            return path
    raise SystemExit("anchors.py: opacus is not installed "
                     "(pip install --no-deps opacus)")


def load_opacus_rdp():
    path = find_opacus_rdp_file()
    spec = importlib.util.spec_from_file_location("opacus_analysis_rdp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    log(f"opacus rdp analysis loaded from {path}")
    return module


opacus_rdp = load_opacus_rdp()

# opacus.accountants.rdp.RDPAccountant.DEFAULT_ALPHAS (that module imports
# torch through the package __init__, so the list is restated here).
OPACUS_ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
DP_ORDERS = list(dp_rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS)


def version_of(dist_name, module=None):
    try:
        return importlib.metadata.version(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return getattr(module, "__version__", "unknown")


def best_of(fn, setup=None, min_runs=3, max_runs=50, budget_s=1.0):
    """Minimum wall time of fn() over several runs.

    setup() (untimed) may return an argument passed to fn. Runs at least
    min_runs times, then continues while the total stays under budget_s,
    up to max_runs. Returns (min_seconds, runs, last_result).
    """
    times = []
    result = None
    start = time.perf_counter()
    while True:
        arg = setup() if setup is not None else None
        t0 = time.perf_counter()
        result = fn(arg) if setup is not None else fn()
        times.append(time.perf_counter() - t0)
        n = len(times)
        if n >= max_runs:
            break
        if n >= min_runs and time.perf_counter() - start >= budget_s:
            break
    return min(times), len(times), result


def poisson_gaussian(q, sigma):
    return dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))


def opacus_eps(rdp, delta, orders=OPACUS_ALPHAS):
    with warnings.catch_warnings():
        # "Optimal order is the largest alpha ..." is expected in some cases.
        warnings.simplefilter("ignore")
        eps, order = opacus_rdp.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
    return float(eps), float(order)


# --------------------------------------------------------------------------
# W1: per-order cost of one subsampled Gaussian step
# --------------------------------------------------------------------------

def w1_per_order():
    q, sigma, delta = 0.01, 1.0, 1e-6
    event = poisson_gaussian(q, sigma)

    def compose(acc):
        acc.compose(event)
        return acc

    t, runs, acc = best_of(compose, setup=dp_rdp.RdpAccountant,
                           min_runs=5, max_runs=200, budget_s=2.0)
    n_orders = len(acc.orders) if hasattr(acc, "orders") else len(DP_ORDERS)
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    dp = {"us_per_order": t / n_orders * 1e6, "orders": n_orders,
          "epsilon": float(eps), "order": float(order),
          "us_total": t * 1e6, "runs": runs}
    log(f"W1 dp_accounting: {dp['us_per_order']:.2f} us/order over {n_orders} orders "
        f"(eps={eps:.6f}, runs={runs})")

    def op():
        return opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=1,
                                      orders=OPACUS_ALPHAS)

    t, runs, rdp = best_of(op, min_runs=5, max_runs=200, budget_s=2.0)
    eps, order = opacus_eps(rdp, delta)
    n_orders = len(OPACUS_ALPHAS)
    oc = {"us_per_order": t / n_orders * 1e6, "orders": n_orders,
          "epsilon": eps, "order": order, "us_total": t * 1e6, "runs": runs}
    log(f"W1 opacus: {oc['us_per_order']:.2f} us/order over {n_orders} orders "
        f"(eps={eps:.6f}, runs={runs})")
    return {"dp_accounting": dp, "opacus": oc, "q": q, "sigma": sigma, "delta": delta}


# --------------------------------------------------------------------------
# W2: heterogeneous composition of n distinct single steps
# --------------------------------------------------------------------------

def w2_hetero(ns):
    q, delta = 0.01, 1e-6
    dp_rows, op_rows = [], []
    for n in ns:
        sigmas = np.linspace(1.0, 2.0, n)
        events = [poisson_gaussian(q, float(s)) for s in sigmas]

        def run_dp():
            acc = dp_rdp.RdpAccountant()
            for ev in events:
                acc.compose(ev, 1)
            return acc.get_epsilon_and_optimal_order(delta)

        def run_op():
            rdp = sum(opacus_rdp.compute_rdp(q=q, noise_multiplier=float(s), steps=1,
                                             orders=OPACUS_ALPHAS)
                      for s in sigmas)
            return opacus_eps(rdp, delta)

        # Fast cases: min of several runs; n=100 (~1-2 s): min of 2; n=1000: once.
        min_runs = 3 if n <= 10 else (2 if n <= 100 else 1)
        budget = 1.0 if n <= 10 else 0.0
        for name, fn, rows in (("dp_accounting", run_dp, dp_rows),
                               ("opacus", run_op, op_rows)):
            t, runs, (eps, order) = best_of(fn, min_runs=min_runs, max_runs=20,
                                            budget_s=budget)
            rows.append({"n": n, "seconds": t, "epsilon": float(eps),
                         "order": float(order), "seconds_per_event": t / n,
                         "runs": runs})
            log(f"W2 {name} n={n}: {t:.4f} s ({t / n * 1e3:.3f} ms/event), "
                f"eps={float(eps):.6f} at order {float(order)}, runs={runs}")
    return {"dp_accounting": dp_rows, "opacus": op_rows, "q": q, "delta": delta,
            "sigma_range": [1.0, 2.0]}


# --------------------------------------------------------------------------
# W3: noise calibration
# --------------------------------------------------------------------------

def w3_calibrate():
    target_eps, delta, q, steps = 8.0, 1e-5, 0.04, 2250

    counter = {"n": 0}

    def make_event(s):
        counter["n"] += 1
        return dp_accounting.SelfComposedDpEvent(poisson_gaussian(q, s), steps)

    def run_dp():
        counter["n"] = 0
        return dp_accounting.calibrate_dp_mechanism(
            make_fresh_accountant=dp_rdp.RdpAccountant,
            make_event_from_param=make_event,
            target_epsilon=target_eps,
            target_delta=delta,
            bracket_interval=dp_accounting.LowerEndpointAndGuess(0, 1))

    t, runs, sigma = best_of(run_dp, min_runs=2, max_runs=5, budget_s=3.0)
    evals = counter["n"]
    acc = dp_rdp.RdpAccountant()
    acc.compose(make_event(sigma))
    eps_at = acc.get_epsilon(delta)
    dp = {"seconds": t, "sigma": float(sigma), "epsilon_at_sigma": float(eps_at),
          "evaluations": evals, "runs": runs}
    log(f"W3 dp_accounting: {t:.4f} s, sigma={sigma:.8f} (eps={eps_at:.6f}, "
        f"{evals} evaluations, runs={runs})")

    # Opacus-style: the search loop of opacus.accountants.utils.get_noise_multiplier
    # (RDP accountant, epsilon_tolerance=0.01), around opacus compute_rdp.
    ocount = {"n": 0}

    def eps_opacus(s):
        ocount["n"] += 1
        rdp = opacus_rdp.compute_rdp(q=q, noise_multiplier=s, steps=steps,
                                     orders=OPACUS_ALPHAS)
        return opacus_eps(rdp, delta)[0]

    def run_op(tolerance=0.01, max_sigma=1e6):
        ocount["n"] = 0
        eps_high = float("inf")
        sigma_low, sigma_high = 0, 10
        while eps_high > target_eps:
            sigma_high = 2 * sigma_high
            eps_high = eps_opacus(sigma_high)
            if sigma_high > max_sigma:
                raise ValueError("The privacy budget is too low.")
        while target_eps - eps_high > tolerance:
            sigma = (sigma_low + sigma_high) / 2
            eps = eps_opacus(sigma)
            if eps < target_eps:
                sigma_high, eps_high = sigma, eps
            else:
                sigma_low = sigma
        return sigma_high, eps_high

    t, runs, (sigma, eps_at) = best_of(run_op, min_runs=3, max_runs=20, budget_s=2.0)
    oc = {"seconds": t, "sigma": float(sigma), "epsilon_at_sigma": float(eps_at),
          "evaluations": ocount["n"], "runs": runs, "method": "opacus-style",
          "epsilon_tolerance": 0.01}
    log(f"W3 opacus-style: {t:.4f} s, sigma={sigma:.8f} (eps={eps_at:.6f}, "
        f"{ocount['n']} evaluations, runs={runs})")
    return {"dp_accounting": dp, "opacus": oc, "target_epsilon": target_eps,
            "delta": delta, "q": q, "steps": steps}


# --------------------------------------------------------------------------
# W4: large orders
# --------------------------------------------------------------------------

def w4_large_order():
    q, sigma = 0.01, 1.0
    orders = [1024, 2048, 4096, 10000]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=orders)
    acc = dp_rdp.RdpAccountant(orders=orders)
    acc.compose(poisson_gaussian(q, sigma))
    dp = acc.rdp if hasattr(acc, "rdp") else acc._rdp
    out = {"orders": orders, "q": q, "sigma": sigma,
           "dp_accounting": [jnum(v) for v in dp],
           "opacus": [jnum(v) for v in op]}
    log(f"W4 orders={orders} dp_accounting={out['dp_accounting']} "
        f"opacus={out['opacus']}")
    return out


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="also run the heterogeneous workload with n=1000")
    args = ap.parse_args()

    t_start = time.perf_counter()
    result = {}
    result["per_order"] = w1_per_order()
    result["hetero"] = w2_hetero([1, 10, 100] + ([1000] if args.full else []))
    result["calibrate"] = w3_calibrate()
    result["large_order"] = w4_large_order()
    result["versions"] = {
        "dp_accounting": version_of("dp-accounting", dp_accounting),
        "opacus": version_of("opacus"),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "python": platform.python_version(),
    }
    result["machine"] = {"platform": platform.platform(),
                         "processor": platform.processor() or platform.machine()}
    result["full"] = bool(args.full)
    result["total_seconds"] = time.perf_counter() - t_start
    log(f"done in {result['total_seconds']:.1f} s")
    json.dump(jsonable(result), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
