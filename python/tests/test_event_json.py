# SPDX-License-Identifier: Apache-2.0
"""Events written as JSON (issue 30; docs/accountant.md section 7) from Python:
dpzo.event_from_json (read by the C library's parser) and dpzo.to_json (round trip).

Truths: the description and the accountants' results of the same event built from Python
objects (the round trip), and dp_accounting 0.6.0's own RDP accountant on its events written
with their class names and fields (what a dp_accounting user writes: the JSON below is made
from dp_accounting's to_named_tuple, not by dpzo).
"""
from __future__ import annotations

import json

import pytest

import dpzo
from dpzo import events as ev

EVENTS = [
    ev.GaussianEvent(1.1),
    ev.LaplaceEvent(0.5),
    ev.NoOpEvent(),
    ev.NonPrivateEvent(),
    ev.ZcdpEvent(0.25, 0.125),
    ev.RandomizedResponseEvent(0.5, 4),
    ev.DiscreteLaplaceEvent(0.7, 3),
    ev.SingleEpochTreeAggregationEvent(3.0, [100, 1000, 7]),
    ev.SelfComposedEvent(ev.PoissonSampledEvent(256 / 60000, ev.GaussianEvent(1.1)), 14063),
    ev.SelfComposedEvent(ev.SampledWithoutReplacementEvent(60000, 256, ev.GaussianEvent(2.0)),
                         10),
    ev.ComposedEvent([ev.SelfComposedEvent(ev.GaussianEvent(0.1 + 0.2), 3),
                      ev.LaplaceEvent(4.0), ev.NoOpEvent()]),
    # issue 30's later kinds: Poisson selection (shape left out), geometric, the rest
    ev.RepeatAndSelectEvent(ev.GaussianEvent(2.0), 10.0, float("inf")),
    ev.RepeatAndSelectEvent(ev.SelfComposedEvent(ev.GaussianEvent(3.0), 5), 4.0, 1.0),
    ev.SampledWithReplacementEvent(1000, 16, ev.GaussianEvent(1.5)),
    ev.MixtureOfGaussiansEvent(1.0, [0.0, 0.5, 1.0], [0.5, 0.3, 0.2]),
    ev.TruncatedSubsampledGaussianEvent(60000, 256 / 60000, 320, 1.1),
    ev.MultiEpochTreeAggregationEvent(7.0, 2000, 6, 313),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_round_trip(event: dpzo.Event) -> None:
    text = dpzo.to_json(event)
    back = dpzo.event_from_json(text)
    assert isinstance(back, dpzo.JsonEvent)
    assert back.describe() == event.describe()
    assert dpzo.to_json(back) == text
    assert dpzo.event_from_json(json.loads(text)).describe() == event.describe()


def test_same_epsilon() -> None:
    e = EVENTS[8]
    j = dpzo.event_from_json(dpzo.to_json(e))
    for make in (dpzo.RdpAccountant, lambda: dpzo.PldAccountant(grid=1e-3)):
        assert (make().compose(j).epsilon(1e-5).epsilon
                == make().compose(e).epsilon(1e-5).epsilon)
    # a JsonEvent composes with the other events
    both = ev.ComposedEvent([j, ev.LaplaceEvent(10.0)])
    want = ev.ComposedEvent([e, ev.LaplaceEvent(10.0)])
    assert both.describe() == want.describe()


def test_refusals_name_the_path() -> None:
    with pytest.raises(dpzo.Error, match=r"event\.event\.noise_multiplier must be >= 0"):
        dpzo.event_from_json('{"type": "SelfComposed", "count": 3, "event": '
                             '{"type": "Gaussian", "noise_multiplier": -1}}')
    with pytest.raises(dpzo.Error, match='unknown key "inner"'):
        dpzo.event_from_json({"type": "SelfComposed", "count": 3, "inner": {"type": "NoOp"}})
    with pytest.raises(dpzo.Error, match="Unsupported"):
        dpzo.event_from_json({"type": "Unsupported"})
    with pytest.raises(dpzo.Error, match="cannot be written as JSON"):
        dpzo.to_json(ev.GaussianEvent(float("nan")))
    with pytest.raises(dpzo.Error, match="no JSON form"):
        dpzo.to_json(ev.SelfComposedEvent(ev.LmoEvent.__new__(ev.LmoEvent), 2))


dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402


def _named_tuple_json(t) -> object:
    """dp_accounting's own serialisable form (to_named_tuple) as dpzo's JSON: the class name
    for "type" (accepted as written), the fields as they are."""
    if hasattr(t, "_fields") and "class_name" in t._fields:
        out = {"type": t.class_name}
        for f in t._fields:
            if f not in ("module_name", "class_name"):
                out[f] = _named_tuple_json(getattr(t, f))
        return out
    if isinstance(t, (list, tuple)):
        return [_named_tuple_json(x) for x in t]
    return t


DP_EVENTS = [
    E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 1000),
    E.ComposedDpEvent([E.GaussianDpEvent(3.0), E.SelfComposedDpEvent(E.ZCDpEvent(0.01), 5)]),
    E.SingleEpochTreeAggregationDpEvent(5.0, [2000, 10]),
    E.LaplaceDpEvent(2.0),
]


@pytest.mark.parametrize("dp_ev", DP_EVENTS, ids=lambda e: type(e).__name__)
def test_dp_accounting_events(dp_ev) -> None:
    """The JSON a dp_accounting user gets from to_named_tuple is read by dpzo, and dpzo's RDP
    accountant answers at most dp_accounting's epsilon on the same orders (both are RDP
    bounds; dpzo's certified one optimises the order continuously)."""
    text = json.dumps(_named_tuple_json(dp_ev.to_named_tuple()))
    e = dpzo.event_from_json(text)
    tree = isinstance(dp_ev, E.SingleEpochTreeAggregationDpEvent)  # dp_accounting's relation
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_SPECIAL if tree
                        else NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dp_ev)
    theirs = acc.get_epsilon(1e-5)
    ours = dpzo.RdpAccountant().compose(e).epsilon(1e-5).epsilon
    assert ours <= theirs * (1 + 1e-9)
    assert ours >= theirs * 0.9
