# SPDX-License-Identifier: Apache-2.0
"""DP-FTRL's tree aggregation without restarts over several participations (issue 30):
dpzo.tree_sensitivity_squared and MultiEpochTreeAggregationEvent.

Truths: the squared sensitivity by exhaustive search over participation patterns (the
forest built here from its definition, itertools over the steps), the Gboard es-ES
notebook's printed zCDP 0.81 (= 79 / 98) and (8.90, 1e-10) (google-research/federated
dp_ftrl/blogpost_supplemental_privacy_accounting.ipynb), and the exact Gaussian hockey
stick (mpmath) for the PLD/PRV accountants.
"""
from __future__ import annotations

import bisect
import itertools
import random

import pytest

import dpzo

mp = pytest.importorskip("mpmath")


def forest(total: int) -> list[tuple[int, int]]:
    """The released nodes as [lo, hi): a complete tree per binary digit of T, largest first."""
    nodes, offset = [], 0
    for k in reversed(range(total.bit_length())):
        if total >> k & 1:
            size = 1 << k
            for level in range(k + 1):
                width = 1 << level
                nodes += [(offset + lo, offset + lo + width) for lo in range(0, size, width)]
            offset += size
    return nodes


def node_sum(nodes: list[tuple[int, int]], steps: tuple[int, ...]) -> int:
    return sum((bisect.bisect_left(steps, hi) - bisect.bisect_left(steps, lo)) ** 2
               for lo, hi in nodes)


def exhaustive(total: int, parts: int, sep: int) -> int:
    nodes, best = forest(total), 0
    for n in range(1, parts + 1):
        for steps in itertools.combinations(range(total), n):
            if all(b - a >= sep + 1 for a, b in zip(steps, steps[1:])):
                best = max(best, node_sum(nodes, steps))
    return best


def test_against_exhaustive_search() -> None:
    rng = random.Random(30)
    for _ in range(60):
        total, parts, sep = rng.randint(1, 34), rng.randint(1, 5), rng.randint(0, 12)
        zeta, steps = dpzo.tree_sensitivity_squared(total, parts, sep)
        assert zeta == exhaustive(total, parts, sep), (total, parts, sep)
        # the pattern attains it and is allowed
        assert len(steps) <= parts and all(0 <= s < total for s in steps)
        assert all(b - a >= sep + 1 for a, b in zip(steps, steps[1:]))
        assert node_sum(forest(total), steps) == zeta


def test_gboard_notebook() -> None:
    """noise multiplier 7.0, 2000 rounds, at most 6 participations 313 apart: the notebook
    prints zCDP = 0.81 (rho = zeta / (2 x 49)) and (8.90, 1e-10) from RDP at its orders."""
    zeta, steps = dpzo.tree_sensitivity_squared(2000, 6, 313)
    assert zeta == 79 and f"{zeta / 98:.2f}" == "0.81"
    assert steps == (0, 314, 628, 942, 1256, 1570)
    e = dpzo.MultiEpochTreeAggregationEvent(7.0, 2000, 6, 313)
    assert e.sensitivity_squared == 79
    assert e.describe() == ("tree_aggregation(sigma=7, steps=2000, max_participations=6, "
                            "min_separation=313, sensitivity_squared=79)")
    rdp = dpzo.RdpAccountant().compose(e).epsilon(1e-10)
    assert f"{float(rdp):.2f}" == "8.90"
    # the exact Gaussian of mu = sqrt(79) / 7 (attained: a record at the six steps above)
    mp.mp.dps = 40
    mu = mp.sqrt(79) / 7

    def dlt(eps):
        return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)

    truth = mp.findroot(lambda x: dlt(x) - mp.mpf("1e-10"), 8.5)
    for acc in (dpzo.PldAccountant(), dpzo.PrvAccountant()):
        r = acc.compose(e).epsilon(1e-10)
        assert r.lower <= truth <= float(r)
        assert float(r) - truth <= 1e-3 * truth
        assert float(r) <= float(rdp)


def test_json_round_trip_and_errors() -> None:
    e = dpzo.MultiEpochTreeAggregationEvent(3.5, 1000, 4, 99)
    text = dpzo.to_json(e)
    assert '"type": "MultiEpochTreeAggregation"' in text
    back = dpzo.event_from_json(text)
    assert back.describe() == e.describe()
    assert float(dpzo.RdpAccountant().compose(back).epsilon(1e-6)) == \
        float(dpzo.RdpAccountant().compose(e).epsilon(1e-6))
    with pytest.raises(dpzo.Error):
        dpzo.MultiEpochTreeAggregationEvent(1.0, 100, 2.5, 3)  # type: ignore[arg-type]
    with pytest.raises(dpzo.Error):
        dpzo.MultiEpochTreeAggregationEvent(1.0, True, 2, 3)  # type: ignore[arg-type]
    with pytest.raises(dpzo.Error, match="noise multiplier"):
        dpzo.RdpAccountant().compose(
            dpzo.MultiEpochTreeAggregationEvent(-1.0, 100, 2, 3)).epsilon(1e-5)
    with pytest.raises(dpzo.Error, match="beyond dpzo's limits"):
        dpzo.tree_sensitivity_squared(10**9, 10, 10**6)
    with pytest.raises(dpzo.Error):
        dpzo.RdpAccountant().compose(dpzo.PoissonSampledEvent(
            0.5, dpzo.MultiEpochTreeAggregationEvent(1.0, 100, 2, 3))).epsilon(1e-5)


def test_edges_and_monotone() -> None:
    assert dpzo.tree_sensitivity_squared(0, 3, 1) == (0, ())
    assert dpzo.tree_sensitivity_squared(100, 0, 1) == (0, ())
    assert dpzo.tree_sensitivity_squared(1000, 9, 5000) == (10, (0,))  # one: bit length
    # one participation is the single-epoch tree of the same steps
    single = dpzo.SingleEpochTreeAggregationEvent(2.0, 1000)
    multi = dpzo.MultiEpochTreeAggregationEvent(2.0, 1000, 1, 0)
    assert float(dpzo.RdpAccountant().compose(multi).epsilon(1e-5)) == \
        float(dpzo.RdpAccountant().compose(single).epsilon(1e-5))
    # more participations or less separation never spend less; nothing released at E = 0
    prev = 0.0
    for parts in range(0, 7):
        eps = float(dpzo.RdpAccountant().compose(
            dpzo.MultiEpochTreeAggregationEvent(5.0, 500, parts, 40)).epsilon(1e-5))
        assert eps >= prev
        prev = eps
    assert float(dpzo.PldAccountant().compose(
        dpzo.MultiEpochTreeAggregationEvent(5.0, 500, 0, 40)).epsilon(1e-5)) == 0.0
