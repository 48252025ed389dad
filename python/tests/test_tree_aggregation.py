# SPDX-License-Identifier: Apache-2.0
"""DP-FTRL's single-epoch tree aggregation (issue 30): SingleEpochTreeAggregationEvent and
dp_accounting's SingleEpochTreeAggregationDpEvent through the drop-in.

Truths: dp_accounting 0.6.0's own RDP (alpha ceil(log2(max T + 1)) / (2 sigma^2), exact in
its formula, so equal to ~1e-12 relative), the exact Gaussian hockey stick of sensitivity
sqrt(depth) for the PLD/PRV accountants, and the online tree's released nodes counted per
step for the depth.
"""
from __future__ import annotations

import ctypes
import math

import pytest

import dpzo
from dpzo import _lib
from dpzo import events as ev

dp_accounting = pytest.importorskip("dp_accounting")
mp = pytest.importorskip("mpmath")

from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp  # noqa: E402

from dpzo.dp_accounting import DpzoAccountant, UnsupportedDpEventError  # noqa: E402

SPECIAL = NeighboringRelation.REPLACE_SPECIAL
ORDERS = [1.01, 1.5, 2.0, 3.25, 8.0, 64.0, 256.0]

_vp = ctypes.c_void_p
_rdp = _lib.fn("dpzo_event_rdp", ctypes.c_int,
               [_vp, _vp, ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_double)])


def dpzo_rdp(event: dpzo.Event, orders: list[float]) -> list[float]:
    n = len(orders)
    out = (ctypes.c_double * n)()
    with ev.c_event(event) as ptr:
        assert _rdp(_lib.ctx(), ptr, (ctypes.c_double * n)(*orders), n, out) == 0
    return list(out)


def released_nodes(t: int, steps: int) -> int:
    """Complete nodes [k 2^h, (k+1) 2^h), (k+1) 2^h <= steps, of the online tree holding t."""
    return sum(1 for h in range(steps.bit_length() + 1)
               if ((t >> h) + 1) << h <= steps)


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 4, 5, 7, 8, 100, 1023, 1024, 1600])
def test_depth_is_the_most_nodes_a_record_is_in(steps: int) -> None:
    depth = max((released_nodes(t, steps) for t in range(steps)), default=0)
    assert dpzo.SingleEpochTreeAggregationEvent(1.0, steps).depth == depth
    assert depth == (math.ceil(math.log2(steps + 1)) if steps else 0)


def test_event_builds_and_describes() -> None:
    e = dpzo.SingleEpochTreeAggregationEvent(1.5, [5, 10])
    assert e.step_counts == (5, 10) and e.depth == 4
    assert e.describe() == "tree_aggregation(sigma=1.5, trees=2, max_steps=10, depth=4)"
    assert dpzo.SingleEpochTreeAggregationEvent(2, 7).step_counts == (7,)
    with pytest.raises(dpzo.Error, match="non-empty"):
        dpzo.SingleEpochTreeAggregationEvent(1.0, [])
    with pytest.raises(dpzo.Error, match="integer"):
        dpzo.SingleEpochTreeAggregationEvent(1.0, [3.0])  # type: ignore[list-item]
    with pytest.raises(dpzo.Error, match="integer"):
        dpzo.SingleEpochTreeAggregationEvent(1.0, -1)
    with pytest.raises(dpzo.Error, match="noise multiplier"):
        dpzo.SingleEpochTreeAggregationEvent(-1.0, 3).describe()
    with pytest.raises(dpzo.Error):  # refused under a sampler, as the other leaves
        dpzo.RdpAccountant().compose(dpzo.PoissonSampledEvent(
            0.1, dpzo.SingleEpochTreeAggregationEvent(1.0, 3))).epsilon(1e-5)


@pytest.mark.parametrize("sigma,steps", [
    (1.0, 1), (1.0, 3), (1.13, 1600), (8.83, 1600), (0.7, [5, 10]), (2.5, [0, 6]),
    (0.1, [10, 400, 400, 400, 390]), (3.0, [1 << 20, 5]), (1.0, [0])])
def test_rdp_equals_dp_accounting(sigma: float, steps) -> None:
    theirs = dp_rdp._compute_rdp_single_epoch_tree_aggregation(sigma, steps, ORDERS)
    acc = RdpAccountant(ORDERS, SPECIAL).compose(E.SingleEpochTreeAggregationDpEvent(sigma, steps))
    counts = steps if isinstance(steps, list) else [steps]
    ours = dpzo_rdp(dpzo.SingleEpochTreeAggregationEvent(sigma, counts), ORDERS)
    for a, b, c in zip(ours, theirs, acc._rdp):
        assert a == pytest.approx(b, rel=1e-12, abs=0) and b == c


def test_epsilon_against_dp_accounting_and_the_exact_gaussian() -> None:
    delta = 1e-6
    for sigma, eps_paper in [(1.13, 19.74), (8.83, 2.04)]:  # dp_accounting's StackOverflow test
        ev_ = E.SingleEpochTreeAggregationDpEvent(sigma, 1600)
        theirs = RdpAccountant(neighboring_relation=SPECIAL).compose(ev_).get_epsilon(delta)
        ours = DpzoAccountant(neighboring_relation=SPECIAL).compose(ev_).get_epsilon(delta)
        ours_grid = DpzoAccountant(neighboring_relation=SPECIAL, orders="dp_accounting") \
            .compose(ev_).get_epsilon(delta)
        assert ours <= theirs * (1 + 1e-9) and ours_grid <= theirs * (1 + 1e-9)
        assert ours < eps_paper
        # the exact epsilon of the Gaussian of sensitivity sqrt(11) (the depth for 1600)
        mu = mp.sqrt(11) / sigma

        def dlt(e):
            return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)
        lo, hi = mp.mpf(0), mp.mpf(2 * ours)
        with mp.workdps(40):
            for _ in range(120):  # bisection: delta(eps) decreases
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
        exact = float(hi)
        for kind in ("pld", "prv"):
            r = DpzoAccountant(kind, neighboring_relation=SPECIAL).compose(ev_).epsilon(delta)
            assert r.lower <= exact * (1 + 1e-12) <= r.epsilon * (1 + 1e-12)
            assert r.epsilon <= exact * 1.01 + 1e-3 and not r.fallback
        assert exact <= ours


def test_monotone_and_edges() -> None:
    prev = math.inf
    for sigma in [0.2 * k for k in range(1, 40, 3)]:
        e = dpzo.RdpAccountant().compose(dpzo.SingleEpochTreeAggregationEvent(sigma, 100))
        eps = float(e.epsilon(1e-5))
        assert eps < prev
        prev = eps
    prev = 0.0
    for steps in [1, 2, 3, 4, 7, 8, 100, 1000, 1 << 20]:
        eps = float(dpzo.RdpAccountant().compose(
            dpzo.SingleEpochTreeAggregationEvent(1.0, [steps, 1])).epsilon(1e-5))
        assert eps >= prev
        prev = eps
    # T = 1 is the Gaussian itself
    one = dpzo.RdpAccountant().compose(dpzo.SingleEpochTreeAggregationEvent(1.3, 1))
    g = dpzo.RdpAccountant().compose(dpzo.GaussianEvent(1.3))
    assert float(one.epsilon(1e-5)) == float(g.epsilon(1e-5))
    # sigma 0: infinite in every accountant; trees of 0 steps: nothing released
    for acc in (dpzo.RdpAccountant(), dpzo.PldAccountant(), dpzo.PrvAccountant()):
        assert math.isinf(float(acc.compose(
            dpzo.SingleEpochTreeAggregationEvent(0.0, 4)).epsilon(1e-5)))
    assert float(dpzo.RdpAccountant().compose(
        dpzo.SingleEpochTreeAggregationEvent(1.0, [0, 0])).epsilon(1e-5)) == 0.0


def test_drop_in_relations() -> None:
    tree = E.SingleEpochTreeAggregationDpEvent(1.0, [5, 10])
    for rel in (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE):
        acc = DpzoAccountant(neighboring_relation=rel)
        assert not acc.supports(tree)  # as dp_accounting's RdpAccountant
        assert not RdpAccountant(neighboring_relation=rel).supports(tree)
        with pytest.raises(UnsupportedDpEventError, match="REPLACE_SPECIAL"):
            acc.compose(tree)
    acc = DpzoAccountant(neighboring_relation=SPECIAL)
    assert acc.supports(tree)
    # composed with itself (the same record in several epochs) and a Gaussian: RDP adds
    acc.compose(E.ComposedDpEvent([E.SelfComposedDpEvent(tree, 3), E.GaussianDpEvent(2.0)]))
    theirs = RdpAccountant(neighboring_relation=SPECIAL).compose(
        E.ComposedDpEvent([E.SelfComposedDpEvent(tree, 3), E.GaussianDpEvent(2.0)]))
    assert acc.get_epsilon(1e-5) <= theirs.get_epsilon(1e-5) * (1 + 1e-9)
    assert not acc.supports(E.SingleEpochTreeAggregationDpEvent(-1.0, 3))
