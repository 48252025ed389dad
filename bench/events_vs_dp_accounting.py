# SPDX-License-Identifier: Apache-2.0
"""dpzo against dp_accounting 0.6.0 on each event type issue 30 added, in one run.

    PYTHONPATH=python DPZO_LIBRARY=build/lib/libdpzo.so build/venv/bin/python \
        bench/events_vs_dp_accounting.py

For every event: epsilon at delta 1e-5 and the median wall time of `--repeat` calls (each a
fresh accountant, compose, epsilon) of dpzo's drop-in (dpzo.dp_accounting.DpzoAccountant,
RDP, certified; and its PLD where dpzo has a privacy loss distribution for the event) and of
the dp_accounting accountant that supports the event (RDP where it does, else PLD), with the
ratios theirs / ours. Events no dp_accounting accountant supports
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
    ("ZCDp(rho 0.5)", E.ZCDpEvent(0.5), R.ADD_OR_REMOVE_ONE, "rdp", False),
    ("RandomizedResponse(0.5, 4) x 10", E.SelfComposedDpEvent(
        E.RandomizedResponseDpEvent(0.5, 4), 10), R.REPLACE_ONE, "pld", True),
    ("DiscreteLaplace(0.7, 3) x 10", E.SelfComposedDpEvent(
        E.DiscreteLaplaceDpEvent(0.7, 3), 10), R.ADD_OR_REMOVE_ONE, "pld", True),
    ("SingleEpochTreeAggregation(3, [1000])", E.SingleEpochTreeAggregationDpEvent(3.0, [1000]),
     R.REPLACE_SPECIAL, "rdp", True),
    ("RepeatAndSelect(SGM x 1000, mean 10, shape 1)", E.RepeatAndSelectDpEvent(SGM, 10, 1),
     R.ADD_OR_REMOVE_ONE, "rdp", False),
    ("MixtureOfGaussians(1, [0,0.5,1], [0.5,0.3,0.2]) x 10", E.SelfComposedDpEvent(
        E.MixtureOfGaussiansDpEvent(1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2]), 10),
     R.ADD_OR_REMOVE_ONE, "pld", True),
    ("TruncatedSubsampledGaussian(60000, 256/60000, 320, 1.1) x 100", E.SelfComposedDpEvent(
        E.TruncatedSubsampledGaussianDpEvent(60000, 256 / 60000, 320, 1.1), 100),
     R.ADD_OR_REMOVE_ONE, "pld", True),
    ("SampledWithReplacement(60000, 16, Gaussian(1)) x 100", E.SelfComposedDpEvent(
        E.SampledWithReplacementDpEvent(60000, 16, E.GaussianDpEvent(1.0)), 100),
     R.REPLACE_ONE, None, False),
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
    print("| event | dpzo RDP epsilon | dpzo RDP s | dpzo PLD epsilon | dpzo PLD s | "
          "dp_accounting | its epsilon | its s | theirs / dpzo RDP | theirs / dpzo PLD |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, ev, rel, theirs, own_pld in CASES:
        e1, t1 = timed(lambda: DpzoAccountant(neighboring_relation=rel), ev, a.delta, a.repeat)
        ep, tp = "-", "-"
        if own_pld:  # dpzo's PLD has a source for the event (else it answers the RDP bound)
            e3, t3 = timed(lambda: DpzoAccountant("pld", neighboring_relation=rel), ev, a.delta,
                           a.repeat)
            ep, tp = f"{e3:.6g}", f"{t3:.4f}"
        if theirs is None:
            print(f"| {name} | {e1:.6g} | {t1:.4f} | {ep} | {tp} | none supports it | - | - | - "
                  "| - |")
            continue
        mk = ((lambda: rdp.RdpAccountant(neighboring_relation=rel)) if theirs == "rdp"
              else (lambda: pld.PLDAccountant(neighboring_relation=rel)))
        e2, t2 = timed(mk, ev, a.delta, a.repeat)
        rp = f"{t2 / t3:.2f}" if own_pld else "-"
        print(f"| {name} | {e1:.6g} | {t1:.4f} | {ep} | {tp} | {theirs.upper()} | {e2:.6g} | "
              f"{t2:.4f} | {t2 / t1:.2f} | {rp} |")

if __name__ == "__main__":
    main()
