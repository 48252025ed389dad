# SPDX-License-Identifier: Apache-2.0
"""Bad inputs: each raises dpzo.Error (a ValueError) whose message is the library's (or,
for what C cannot see, a Python type check naming the value); no call returns NaN, a
negative epsilon or a silently substituted value."""
from __future__ import annotations

import math
from typing import Any, Dict

import pytest

import dpzo

NAN, INF = float("nan"), float("inf")
BASE: Dict[str, Any] = dict(noise_multiplier=1.0, sampling_rate=0.01, steps=100, delta=1e-5)


def call(**over: Any) -> dpzo.Epsilon:
    k = dict(BASE)
    k.update(over)
    for name in [n for n, v in over.items() if v is ...]:
        del k[name]
    return dpzo.epsilon(**k)


@pytest.mark.parametrize("over, message", [
    # the library's messages (include/dpzo: every refusal names the value)
    (dict(noise_multiplier=NAN), "noise multiplier must be finite and >= 0, got nan"),
    (dict(noise_multiplier=-1.0), "noise multiplier must be finite and >= 0, got -1"),
    (dict(noise_multiplier=INF), "noise multiplier must be finite and >= 0, got inf"),
    (dict(sampling_rate=1.5), "sampling rate must be in [0, 1], got 1.5"),
    (dict(sampling_rate=NAN), "sampling rate must be in [0, 1], got nan"),
    (dict(sampling_rate=-0.1), "sampling rate must be in [0, 1], got -0.1"),
    (dict(delta=NAN), "delta must be in (0, 1), got nan"),
    (dict(delta=0.0), "delta must be in (0, 1), got 0"),
    (dict(delta=1.0), "delta must be in (0, 1), got 1"),
    (dict(steps=2 ** 54), "composition count 18014398509481984 exceeds 2^53"),
    (dict(sampling_rate=..., batch_size=10, dataset_size=5),
     "sampling without replacement needs 0 <= batch <= n and n > 0, got batch=10, n=5"),
    (dict(orders=[0.5, 2.0]), "order alpha must be in (1, 1e+06], got 0.5"),
    (dict(orders=[NAN]), "order alpha must be in (1, 1e+06], got nan"),
    (dict(orders="foo"), "unknown order grid 'foo'"),
    (dict(accountant="pld", grid=-1.0), "grid interval must be in (0, 1], got -1"),
    (dict(accountant="pld", grid=NAN), "grid interval must be in (0, 1], got nan"),
    (dict(accountant="prv", eps_error=NAN), "eps_error must be finite and >= 0, got nan"),
    # Python's checks: types, counts, argument combinations
    (dict(noise_multiplier=True), "noise_multiplier must be a real number, got True"),
    (dict(noise_multiplier="1"), "noise_multiplier must be a real number, got '1'"),
    (dict(noise_multiplier=None), "noise_multiplier must be a real number, got None"),
    (dict(delta=[1e-5]), "delta must be a real number, got [1e-05]"),
    (dict(steps=10.0), "steps must be an integer, got 10.0"),
    (dict(steps=True), "steps must be an integer, got True"),
    (dict(steps=-1), "steps must be an integer in [0, 2^64), got -1"),
    (dict(epochs=1.0), "give steps or epochs, not both"),
    (dict(steps=...), "give steps or epochs"),
    (dict(steps=..., epochs=NAN), "epochs must be finite and >= 0, got nan"),
    (dict(steps=..., epochs=-1), "epochs must be finite and >= 0, got -1"),
    (dict(steps=..., epochs=INF), "epochs must be finite and >= 0, got inf"),
    (dict(steps=..., epochs="2"), "epochs must be a real number, got '2'"),
    (dict(steps=..., epochs=1, sampling_rate=0.0),
     "epochs need a sampling rate in (0, 1] (an epoch is 1 / q steps), got 0"),
    (dict(steps=..., epochs=1, sampling_rate=..., batch_size=0, dataset_size=10),
     "batch size must be in [1, dataset size] for epochs, got 0 of 10"),
    (dict(steps=..., epochs=1e300), "more than 2^53"),
    (dict(batch_size=10), "batch_size and dataset_size go together"),
    (dict(batch_size=10, dataset_size=100), "not both"),
    (dict(sampling_rate=...), "give sampling_rate"),
    (dict(batch_size=1.5, dataset_size=100, sampling_rate=...),
     "batch_size must be an integer, got 1.5"),
    (dict(accountant="foo"), "accountant must be 'rdp', 'pld' or 'prv', got 'foo'"),
    (dict(accountant="RDP"), "accountant must be 'rdp', 'pld' or 'prv', got 'RDP'"),
    (dict(grid=1e-3), "grid needs accountant 'pld' or 'prv'"),
    (dict(accountant="prv", grid=1e-3), "grid is for accountant 'pld'"),
    (dict(accountant="pld", grid=0.0), "grid must be in (0, 1], got 0"),
    (dict(accountant="prv", eps_error=0.0), "eps_error must be > 0, got 0"),
])
def test_epsilon_refusals(over: Dict[str, Any], message: str) -> None:
    with pytest.raises(dpzo.Error) as info:
        call(**over)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.status in (1, 3, 6)


@pytest.mark.parametrize("over, message", [
    (dict(epsilon=NAN), "epsilon must be finite and >= 0, got nan"),
    (dict(epsilon=-1.0), "epsilon must be finite and >= 0, got -1"),
    (dict(delta=2.0), "delta must be in (0, 1), got 2"),
    (dict(sampling_rate=..., batch_size=10, dataset_size=5),
     "batch size must be in [1, dataset size], got 10 of 5"),
    (dict(tolerance=NAN), "tolerance must be > 0, got nan"),
    (dict(tolerance=0.0), "tolerance must be > 0, got 0.0"),
    (dict(tolerance=0.5), "tolerance must be 0 (the default) or in [1e-12, 0.5), got 0.5"),
    (dict(epsilon=True), "epsilon must be a real number, got True"),
])
def test_calibrate_refusals(over: Dict[str, Any], message: str) -> None:
    k: Dict[str, Any] = dict(epsilon=1.0, delta=1e-5, sampling_rate=0.01, steps=100)
    k.update(over)
    for name in [n for n, v in over.items() if v is ...]:
        del k[name]
    with pytest.raises(dpzo.Error) as info:
        dpzo.calibrate(**k)
    assert message in str(info.value)


def test_infeasible_target_has_its_status() -> None:
    with pytest.raises(dpzo.Error) as info:
        dpzo.calibrate(epsilon=0.0, delta=1e-5, sampling_rate=0.1, steps=100)
    assert info.value.status == 6 and info.value.status_name == "infeasible"
    assert "target epsilon 0 cannot be met" in str(info.value)


def test_event_and_accountant_refusals() -> None:
    with pytest.raises(dpzo.Error, match="event must be a dpzo event"):
        dpzo.PoissonSampledEvent(0.1, 1.0)  # type: ignore[arg-type]
    with pytest.raises(dpzo.Error, match=r"events\[1\] must be a dpzo event"):
        dpzo.ComposedEvent([dpzo.GaussianEvent(1.0), "x"])  # type: ignore[list-item]
    with pytest.raises(dpzo.Error, match="events must be a sequence"):
        dpzo.ComposedEvent(dpzo.GaussianEvent(1.0))  # type: ignore[arg-type]
    with pytest.raises(dpzo.Error, match="count must be an integer, got 2.0"):
        dpzo.SelfComposedEvent(dpzo.GaussianEvent(1.0), 2.0)  # type: ignore[arg-type]
    # compose() builds the event, so the library refuses a bad value there, not later
    acc = dpzo.RdpAccountant()
    with pytest.raises(dpzo.Error, match="sampling rate must be in \\[0, 1\\], got 2"):
        acc.compose(dpzo.PoissonSampledEvent(2.0, dpzo.GaussianEvent(1.0)))
    with pytest.raises(dpzo.Error, match="Laplace scale must be finite and >= 0, got -1"):
        acc.compose(dpzo.LaplaceEvent(-1.0))
    assert acc.ledger == dpzo.ComposedEvent([])  # refused events are not recorded
    with pytest.raises(dpzo.Error, match="count must be an integer in"):
        acc.compose(dpzo.GaussianEvent(1.0), -3)
    with pytest.raises(dpzo.Error, match="epsilon must be finite and >= 0, got -1"):
        dpzo.RdpAccountant().compose(dpzo.GaussianEvent(1.0)).delta(-1.0)
    with pytest.raises(dpzo.Error, match="conversion must be 'improved' or 'standard'"):
        dpzo.RdpAccountant(conversion="best")
    with pytest.raises(dpzo.Error, match="memory_limit must be at least 1 byte"):
        dpzo.PldAccountant(memory_limit=0)
    with pytest.raises(dpzo.Error, match="delta_error 0.5 must be below delta 1e-05"):
        dpzo.PrvAccountant(delta_error=0.5).compose(dpzo.GaussianEvent(1.0)).epsilon(1e-5)
    with pytest.raises(dpzo.Error, match="delta must be a real number"):
        dpzo.PldAccountant().compose(dpzo.GaussianEvent(1.0)).epsilon("1e-5")  # type: ignore


def test_no_nan_or_negative_results() -> None:
    """Edge values that are accepted give 0, finite or +inf, never NaN or negative."""
    seen = []
    for k in [dict(noise_multiplier=0.0), dict(sampling_rate=0.0), dict(steps=0),
              dict(noise_multiplier=1e6), dict(noise_multiplier=1e-300),
              dict(sampling_rate=1.0, noise_multiplier=0.3, steps=2), dict(delta=1e-300, steps=5),
              dict(delta=1 - 1e-16), dict(sampling_rate=5e-324)]:
        for acc in ("rdp", "pld", "prv"):
            try:
                r = call(**k, accountant=acc)
            except dpzo.Error as e:  # a refusal is fine; it must carry a message
                assert str(e)
                continue
            for v in (r.epsilon, r.estimate, r.lower if r.lower is not None else 0.0):
                assert not math.isnan(v) and v >= 0.0, (k, acc, r)
            assert r.lower is None or r.lower <= r.epsilon
            seen.append((k, acc, r.epsilon))
    assert len(seen) >= 15
    assert call(noise_multiplier=0.0).epsilon == INF
    assert call(sampling_rate=0.0).epsilon == 0.0 and call(steps=0).epsilon == 0.0
