# SPDX-License-Identifier: Apache-2.0
"""dpzo.dp_accounting against dp_accounting 0.6 (the anchor) and prv_accountant 0.2.

Where the anchor is right, dpzo agrees with it: on integer RDP orders (dp_accounting's
binomial expansion is exact there) to 1e-9; on dp_accounting's default grid dpzo is never
above it (dp_accounting's fractional orders can be high: one case is checked against an
mpmath integral). PLD: dp_accounting's pessimistic epsilon is never below dpzo's proven
lower end, and dpzo's upper end is within 1e-4 of it. prv_accountant's interval overlaps
dpzo PRV's.
"""
from __future__ import annotations

import logging
import math
import random

import pytest

dp_accounting = pytest.importorskip("dp_accounting")

import dpzo  # noqa: E402
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting import mechanism_calibration  # noqa: E402
from dp_accounting.pld import PLDAccountant  # noqa: E402
from dp_accounting.privacy_accountant import (  # noqa: E402
    NeighboringRelation,
    PrivacyAccountant,
    UnsupportedEventError,
)
from dp_accounting.rdp import RdpAccountant  # noqa: E402
from dpzo.dp_accounting import DpzoAccountant, UnsupportedDpEventError, to_dpzo_event  # noqa: E402

REPLACE_ONE = NeighboringRelation.REPLACE_ONE
MNIST = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(256 / 60000, E.GaussianDpEvent(1.1)),
                              14063)
INTEGER_ORDERS = list(range(2, 64)) + [128, 256, 512, 1024]


def _random_events(seed: int, n: int, max_count: int) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.6:
                q = 10 ** rng.uniform(-3, -0.7)
                inner = E.GaussianDpEvent(rng.uniform(0.6, 4))
                parts.append(E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, inner),
                                                   rng.randint(1, max_count)))
            elif r < 0.8:
                parts.append(E.SelfComposedDpEvent(E.GaussianDpEvent(rng.uniform(5, 60)),
                                                   rng.randint(1, 20)))
            else:
                parts.append(E.LaplaceDpEvent(rng.uniform(5, 50)))
        out.append(parts[0] if len(parts) == 1 else E.ComposedDpEvent(parts))
    return out


@pytest.fixture(autouse=True)
def _quiet_absl() -> None:
    # dp_accounting logs when its fractional-order series does not converge
    logging.getLogger("absl").setLevel(logging.ERROR)


def test_is_a_dp_accounting_accountant_mnist() -> None:
    acc = DpzoAccountant()
    assert isinstance(acc, PrivacyAccountant)
    assert acc.neighboring_relation is NeighboringRelation.ADD_OR_REMOVE_ONE
    assert acc.ledger == E.NoOpDpEvent()
    assert acc.get_epsilon(1e-5) == 0.0
    assert acc.compose(MNIST) is acc
    short = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063,
                         delta=1e-5)
    assert acc.get_epsilon(1e-5) == short.epsilon
    assert acc.epsilon(1e-5) == short
    assert short.epsilon <= RdpAccountant().compose(MNIST).get_epsilon(1e-5)
    assert acc.ledger == MNIST


def test_rdp_random_events() -> None:
    for ev in _random_events(16, 36, 3000):
        a = RdpAccountant().compose(ev).get_epsilon(1e-5)
        d = DpzoAccountant().compose(ev).get_epsilon(1e-5)
        g = DpzoAccountant(orders="dp_accounting").compose(ev).get_epsilon(1e-5)
        assert d <= a * (1 + 1e-9), ev
        assert g <= a * (1 + 1e-9), ev
        assert d <= g * (1 + 1e-12), ev  # continuous orders include the grid's
        ai = RdpAccountant(orders=INTEGER_ORDERS).compose(ev).get_epsilon(1e-5)
        gi = DpzoAccountant(orders=INTEGER_ORDERS).compose(ev).get_epsilon(1e-5)
        assert gi == pytest.approx(ai, rel=1e-9), ev


def test_dp_accounting_fractional_order_is_high_dpzo_is_right() -> None:
    """One of the random events: at order 2.9 dp_accounting's RDP is 0.6% above the
    integral, computed here with mpmath; dpzo's matches the integral."""
    mp = pytest.importorskip("mpmath")
    q, s, a, delta = 0.1386559388956222, 3.083472011797033, 2.9, 1e-5
    ev = E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s))
    with mp.workdps(30):
        Q, S, A = mp.mpf(q), mp.mpf(s), mp.mpf(a)

        def f(z):
            return mp.npdf(z, 0, S) * ((1 - Q) + Q * mp.exp((2 * z - 1) / (2 * S * S))) ** A

        rdp = mp.log(mp.quad(f, [-mp.inf, -20, 0, 1, 20, mp.inf])) / (A - 1)
        exact = float(rdp + mp.log1p(-1 / A) - mp.log(delta * A) / (A - 1))
    ours = DpzoAccountant(orders=[a]).compose(ev).get_epsilon(delta)
    theirs = RdpAccountant(orders=[a]).compose(ev).get_epsilon(delta)
    assert ours == pytest.approx(exact, rel=1e-12) and ours >= exact
    assert theirs > exact + 1e-5


def test_pld_random_events() -> None:
    for ev in _random_events(7, 6, 100):
        a = PLDAccountant().compose(ev).get_epsilon(1e-5)
        e = DpzoAccountant("pld").compose(ev).epsilon(1e-5)
        assert e.lower is not None and e.lower <= e.epsilon
        assert e.lower <= a * (1 + 1e-12), ev
        assert e.epsilon <= a * (1 + 1e-4), ev


def test_mnist_pld_and_delta() -> None:
    a = PLDAccountant().compose(MNIST).get_epsilon(1e-5)
    e = DpzoAccountant("pld").compose(MNIST).epsilon(1e-5)
    assert e.lower <= a <= e.epsilon  # 2.37181 <= 2.38178 <= 2.38179
    coarse = DpzoAccountant("pld", value_discretization_interval=1e-3).compose(MNIST)
    c = coarse.epsilon(1e-5)  # PLDAccountant's keyword: a coarser grid, a wider interval
    assert c.lower <= e.lower and c.epsilon >= e.epsilon and c.epsilon - c.lower > 1e-3
    with pytest.raises(dpzo.Error, match="value_discretization_interval"):
        DpzoAccountant("rdp", value_discretization_interval=1e-3)
    rdp = DpzoAccountant().compose(MNIST)
    d = rdp.get_delta(2.0)
    assert d <= RdpAccountant().compose(MNIST).get_delta(2.0) * (1 + 1e-9)
    assert rdp.delta(2.0).delta == d
    # delta at the proven epsilon is at most the delta asked for
    assert rdp.get_delta(rdp.get_epsilon(1e-5)) <= 1e-5 * (1 + 1e-9)
    pld = DpzoAccountant("pld").compose(MNIST).delta(2.0)
    assert pld.lower <= pld.delta <= d


def test_without_replacement_replace_one() -> None:
    for n, b, s, T in [(60000, 256, 1.1, 1000), (1000, 10, 1.0, 100)]:
        ev = E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(n, b, E.GaussianDpEvent(s)),
                                   T)
        a = RdpAccountant(neighboring_relation=REPLACE_ONE).compose(ev).get_epsilon(1e-5)
        g = DpzoAccountant(neighboring_relation=REPLACE_ONE, orders="dp_accounting")
        assert g.compose(ev).get_epsilon(1e-5) == pytest.approx(a, rel=1e-9)
        d = DpzoAccountant(neighboring_relation=REPLACE_ONE).compose(ev).get_epsilon(1e-5)
        assert d <= a * (1 + 1e-12)
        p = DpzoAccountant("pld", neighboring_relation=REPLACE_ONE).compose(ev).epsilon(1e-5)
        assert p.lower <= p.epsilon <= d


def test_refused_events_and_relations() -> None:
    acc = DpzoAccountant()
    wor = E.SampledWithoutReplacementDpEvent(1000, 10, E.GaussianDpEvent(1.0))
    poisson = E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0))
    assert acc.supports(poisson) and not acc.supports(wor)
    with pytest.raises(UnsupportedDpEventError, match="SampledWithoutReplacement.*REPLACE_ONE"):
        acc.compose(E.ComposedDpEvent([poisson, wor]))
    assert acc.ledger == E.NoOpDpEvent() and acc.get_epsilon(1e-5) == 0.0  # nothing composed
    replace = DpzoAccountant(neighboring_relation=REPLACE_ONE)
    assert replace.supports(wor) and not replace.supports(poisson)
    with pytest.raises(UnsupportedDpEventError, match="ADD_OR_REMOVE_ONE"):
        replace.compose(poisson)
    unsupported = [
        E.UnsupportedDpEvent(),
        E.RandomizedResponseDpEvent(0.5, 2),  # ADD_OR_REMOVE_ONE: replace relations only
        E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)),
        E.PoissonSampledDpEvent(0.1, E.PoissonSampledDpEvent(0.5, E.GaussianDpEvent(1.0))),
    ]
    for ev in unsupported:
        assert not acc.supports(ev)
        nested = E.SelfComposedDpEvent(E.ComposedDpEvent([poisson, ev]), 3)
        assert not acc.supports(nested)
        with pytest.raises(UnsupportedDpEventError) as info:
            acc.compose(nested)
        err = info.value
        assert isinstance(err, dpzo.Error) and isinstance(err, UnsupportedEventError)
        assert type(ev).__name__ in str(err) and err.status_name == "unsupported"
    # Poisson-sampled Laplace: PLD/PRV analyse it, RDP does not
    lap = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.05, E.LaplaceDpEvent(2.0)), 50)
    assert not acc.supports(lap) and DpzoAccountant("pld").supports(lap)
    e = DpzoAccountant("pld").compose(lap).epsilon(1e-5)
    a = PLDAccountant().compose(lap).get_epsilon(1e-5)
    assert e.lower <= a * (1 + 1e-12) and e.epsilon <= a * (1 + 1e-3)
    special = DpzoAccountant(neighboring_relation=NeighboringRelation.REPLACE_SPECIAL)
    assert special.supports(E.GaussianDpEvent(1.0))  # unsampled mechanisms: any relation
    assert not special.supports(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)))
    assert not special.supports(E.SampledWithoutReplacementDpEvent(10, 2, E.GaussianDpEvent(1.0)))
    with pytest.raises(dpzo.Error, match="gdp"):
        DpzoAccountant("gdp")


def test_bad_parameters_raise_the_library_message() -> None:
    acc = DpzoAccountant()
    bad = E.PoissonSampledDpEvent(1.5, E.GaussianDpEvent(1.0))
    assert not acc.supports(bad)
    with pytest.raises(dpzo.Error, match="1.5"):
        acc.compose(bad)
    with pytest.raises(dpzo.Error, match="noise_multiplier"):
        acc.compose(E.GaussianDpEvent("1.0"))
    with pytest.raises(dpzo.Error, match="count"):
        acc.compose(E.GaussianDpEvent(1.0), -1)
    with pytest.raises(dpzo.Error, match="count"):
        acc.compose(E.GaussianDpEvent(1.0), 2.0)
    with pytest.raises(dpzo.Error, match="count"):
        acc.compose(E.GaussianDpEvent(1.0), True)
    with pytest.raises(dpzo.Error, match="DpEvent"):
        acc.compose(dpzo.GaussianEvent(1.0))
    assert acc.ledger == E.NoOpDpEvent() and acc.get_epsilon(1e-5) == 0.0
    with pytest.raises(dpzo.Error, match="delta"):
        acc.compose(E.GaussianDpEvent(1.0)).get_epsilon(-1.0)
    # NoOp and count 0 spend nothing; sigma 0 spends everything (epsilon inf, as
    # dp_accounting answers)
    assert DpzoAccountant().compose(E.NoOpDpEvent(), 5).get_epsilon(1e-5) == 0.0
    zero = E.ComposedDpEvent([E.SelfComposedDpEvent(MNIST, 0)])
    assert DpzoAccountant().compose(zero).get_epsilon(1e-5) == 0.0
    with pytest.raises(dpzo.Error, match="count"):
        acc.compose(E.SelfComposedDpEvent(MNIST, 0))  # as dp_accounting's ledger
    with pytest.raises(dpzo.Error, match="count"):
        acc.compose(MNIST, 0)  # dp_accounting's compose takes counts >= 1 too
    assert math.isinf(DpzoAccountant().compose(E.GaussianDpEvent(0.0)).get_epsilon(1e-5))


def test_conversion_keeps_the_structure() -> None:
    ev = E.ComposedDpEvent([MNIST, E.LaplaceDpEvent(3.0), E.NoOpDpEvent()])
    d = to_dpzo_event(ev)
    assert d == dpzo.ComposedEvent([
        dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(256 / 60000, dpzo.GaussianEvent(1.1)),
                               14063),
        dpzo.LaplaceEvent(3.0), dpzo.NoOpEvent()])
    w = to_dpzo_event(E.SampledWithoutReplacementDpEvent(100, 7, E.GaussianDpEvent(2.0)),
                      REPLACE_ONE)
    assert w == dpzo.SampledWithoutReplacementEvent(100, 7, dpzo.GaussianEvent(2.0))


def test_ledger_and_counts_like_dp_accounting() -> None:
    ours, theirs = DpzoAccountant(), RdpAccountant()
    steps = [(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)), 100),
             (E.GaussianDpEvent(20.0), 1),
             (E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.02, E.GaussianDpEvent(1.5)), 10), 4)]
    for ev, n in steps:
        ours.compose(ev, n)
        theirs.compose(ev, n)
    assert ours.ledger == theirs.ledger
    assert ours.get_epsilon(1e-6) <= theirs.get_epsilon(1e-6) * (1 + 1e-9)
    flat = DpzoAccountant().compose(theirs.ledger)
    assert flat.get_epsilon(1e-6) == ours.get_epsilon(1e-6)


def test_calibrate_dp_mechanism_with_dpzo() -> None:
    """dp_accounting's own calibration runs on DpzoAccountant, and lands where dpzo.calibrate
    does (within the two tolerances)."""
    q, T, eps, delta = 0.01, 1000, 2.0, 1e-5

    def make(sigma: float):
        return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, E.GaussianDpEvent(sigma)), T)

    s_dpa = mechanism_calibration.calibrate_dp_mechanism(DpzoAccountant, make, eps, delta)
    s_rdp = mechanism_calibration.calibrate_dp_mechanism(RdpAccountant, make, eps, delta)
    c = dpzo.calibrate(epsilon=eps, delta=delta, sampling_rate=q, steps=T)
    assert c.epsilon <= eps
    assert s_dpa == pytest.approx(c.noise_multiplier, rel=1e-5)
    assert c.noise_multiplier <= s_rdp * (1 + 1e-6)


def test_prv_accountant_overlaps_dpzo_prv() -> None:
    prv = pytest.importorskip("prv_accountant")
    q, s, T, delta = 256 / 60000, 1.1, 3000, 1e-5
    theirs = prv.PRVAccountant(prv.PoissonSubsampledGaussianMechanism(q, s), eps_error=0.01,
                               delta_error=delta / 1000, max_self_compositions=T)
    lo, est, up = theirs.compute_epsilon(delta, [T])
    ev = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s)), T)
    ours = DpzoAccountant("prv").compose(ev).epsilon(delta)
    assert max(lo, ours.lower) <= min(up, ours.epsilon)
    assert ours.lower <= est <= ours.epsilon + 0.01
