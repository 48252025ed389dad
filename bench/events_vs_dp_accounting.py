# SPDX-License-Identifier: Apache-2.0
"""dpzo against dp_accounting 0.6.0 on each event type issue 30 added, in one run.

    PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so build/venv/bin/python \
        bench/events_vs_dp_accounting.py

For every event: epsilon at delta 1e-5 and the median wall time of `--repeat` calls (each a
fresh accountant, compose, epsilon) of dpzo's drop-in (dpzo.dp_accounting.DpzoAccountant,
RDP, certified) and of the dp_accounting accountant that supports the event (RDP where it
does, else PLD), with the ratio theirs / ours. Events no dp_accounting accountant supports
(sampling with replacement) print dpzo alone. Prints a Markdown table.
"""
import argparse
import statistics
import time

from dp_accounting import dp_event as E
from dp_accounting.pld import pld_privacy_accountant as pld
from dp_accounting.privacy_accountant import NeighboringRelation as R
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from dpzo.dp_accounting import DpzoAccountant

SGM = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(256 / 60000, E.GaussianDpEvent(1.1)), 1000)
CASES = [
    ("ZCDp(rho 0.5)", E.ZCDpEvent(0.5), R.ADD_OR_REMOVE_ONE, "rdp"),
    ("RandomizedResponse(0.5, 4) x 10", E.SelfComposedDpEvent(
        E.RandomizedResponseDpEvent(0.5, 4), 10), R.REPLACE_ONE, "pld"),
    ("DiscreteLaplace(0.7, 3) x 10", E.SelfComposedDpEvent(
        E.DiscreteLaplaceDpEvent(0.7, 3), 10), R.ADD_OR_REMOVE_ONE, "pld"),
    ("SingleEpochTreeAggregation(3, [1000])", E.SingleEpochTreeAggregationDpEvent(3.0, [1000]),
     R.REPLACE_SPECIAL, "rdp"),
    ("RepeatAndSelect(SGM x 1000, mean 10, shape 1)", E.RepeatAndSelectDpEvent(SGM, 10, 1),
     R.ADD_OR_REMOVE_ONE, "rdp"),
    ("MixtureOfGaussians(1, [0,0.5,1], [0.5,0.3,0.2]) x 10", E.SelfComposedDpEvent(
        E.MixtureOfGaussiansDpEvent(1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2]), 10),
     R.ADD_OR_REMOVE_ONE, "pld"),
    ("TruncatedSubsampledGaussian(60000, 256/60000, 320, 1.1) x 100", E.SelfComposedDpEvent(
        E.TruncatedSubsampledGaussianDpEvent(60000, 256 / 60000, 320, 1.1), 100),
     R.ADD_OR_REMOVE_ONE, "pld"),
    ("SampledWithReplacement(60000, 16, Gaussian(1)) x 100", E.SelfComposedDpEvent(
        E.SampledWithReplacementDpEvent(60000, 16, E.GaussianDpEvent(1.0)), 100),
     R.REPLACE_ONE, None),
]


def timed(make, event, delta, repeat):
    times, eps = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        a = make()
        a.compose(event)
        eps = a.get_epsilon(delta)
        times.append(time.perf_counter() - t0)
    return eps, statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--delta", type=float, default=1e-5)
    a = ap.parse_args()
    print("| event | dpzo epsilon (RDP, certified) | dpzo s | dp_accounting | its epsilon | "
          "its s | theirs / ours |")
    print("|---|---|---|---|---|---|---|")
    for name, ev, rel, theirs in CASES:
        e1, t1 = timed(lambda: DpzoAccountant(neighboring_relation=rel), ev, a.delta, a.repeat)
        if theirs is None:
            print(f"| {name} | {e1:.6g} | {t1:.4f} | none supports it | - | - | - |")
            continue
        mk = ((lambda: rdp.RdpAccountant(neighboring_relation=rel)) if theirs == "rdp"
              else (lambda: pld.PLDAccountant(neighboring_relation=rel)))
        e2, t2 = timed(mk, ev, a.delta, a.repeat)
        print(f"| {name} | {e1:.6g} | {t1:.4f} | {theirs.upper()} | {e2:.6g} | {t2:.4f} | "
              f"{t2 / t1:.2f} |")


if __name__ == "__main__":
    main()
