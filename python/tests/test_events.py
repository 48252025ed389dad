# SPDX-License-Identifier: Apache-2.0
"""The event algebra: construction, immutability, the library's reading of each event
(its description), and identities of the algebra checked through the accountants."""
from __future__ import annotations

import dataclasses
import math

import pytest

import dpzo

G = dpzo.GaussianEvent


def test_values_are_normalised_and_frozen() -> None:
    g = G(2)
    assert g.noise_multiplier == 2.0 and isinstance(g.noise_multiplier, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.noise_multiplier = 3.0  # type: ignore[misc]
    assert G(1.0) == G(1) and hash(G(1.0)) == hash(G(1))
    c = dpzo.ComposedEvent([G(1), dpzo.LaplaceEvent(2)])
    assert isinstance(c.events, tuple) and c == dpzo.ComposedEvent((G(1), dpzo.LaplaceEvent(2)))
    w = dpzo.SampledWithoutReplacementEvent(100, 10, G(1))
    assert (w.source_dataset_size, w.sample_size) == (100, 10)


def test_numpy_scalars_are_numbers() -> None:
    np = pytest.importorskip("numpy")
    e = dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(np.float64(0.01), G(np.float32(1.5))),
                               np.int64(10))
    assert e.count == 10 and type(e.count) is int
    assert e == dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(0.01, G(1.5)), 10)


def test_the_library_reads_each_event() -> None:
    e = dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(0.01, G(1.5)), 10)
    assert e.describe() == "repeat(10, poisson(q=0.01, gaussian(sigma=1.5)))"
    w = dpzo.SampledWithoutReplacementEvent(60000, 256, G(1))
    assert w.describe() == "without_replacement(batch=256, n=60000, gaussian(sigma=1))"
    c = dpzo.ComposedEvent([dpzo.LaplaceEvent(0.5), w, dpzo.NoOpEvent()])
    assert c.describe() == ("compose[laplace(b=0.5), without_replacement(batch=256, n=60000, "
                            "gaussian(sigma=1)), compose[]]")
    big = dpzo.ComposedEvent([G(1.0 + i) for i in range(2000)])  # longer than 4096 chars
    text = big.describe()
    assert text.startswith("compose[gaussian(sigma=1), ") and text.endswith("gaussian(sigma=2000)]")
    assert text.count("gaussian") == 2000


def test_noop_spends_nothing() -> None:
    for acc in (dpzo.RdpAccountant(), dpzo.PldAccountant(), dpzo.PrvAccountant()):
        r = acc.compose(dpzo.NoOpEvent()).epsilon(1e-5)
        assert r.epsilon == 0.0
    assert dpzo.RdpAccountant().epsilon(1e-5).epsilon == 0.0  # empty ledger
    assert dpzo.RdpAccountant().compose(G(1.0), 0).epsilon(1e-5).epsilon == 0.0


def test_repetition_is_composition() -> None:
    step = dpzo.PoissonSampledEvent(0.02, G(1.2))
    a = dpzo.RdpAccountant().compose(dpzo.SelfComposedEvent(step, 3)).epsilon(1e-6)
    b = dpzo.RdpAccountant().compose(dpzo.ComposedEvent([step, step, step])).epsilon(1e-6)
    c = dpzo.RdpAccountant().compose(step).compose(step).compose(step).epsilon(1e-6)
    d = dpzo.RdpAccountant().compose(step, 3).epsilon(1e-6)
    assert a == d
    for r in (b, c):
        assert math.isclose(r.epsilon, a.epsilon, rel_tol=1e-12)


def test_gaussian_compositions_are_gdp() -> None:
    """q = 1: T Gaussian steps of noise sigma are exactly sqrt(T)/sigma-GDP; epsilon(delta)
    by mpmath at 50 digits (tests/test_pld.c). The PLD interval contains it, the RDP bound
    is above it."""
    gdp = [(1, 1, 1e-5, 4.3771780956812246), (2, 10, 1e-10, 10.90790195655248),
           (0.5, 3, 1e-15, 32.990699158458431), (10, 100, 1e-30, 11.743883025231736)]
    for sigma, steps, delta, eps in gdp:
        ev = dpzo.SelfComposedEvent(G(sigma), steps)
        p = dpzo.PldAccountant().compose(ev).epsilon(delta)
        assert p.lower <= eps <= p.epsilon
        assert p.epsilon - p.lower <= 1.5e-4 * eps + 1e-4
        assert dpzo.RdpAccountant().compose(ev).epsilon(delta).epsilon >= eps
    # heterogeneous: sigma 10 and 5, 50 steps each: mu = sqrt(50/100 + 50/25)
    mu = math.sqrt(2.5)
    het = dpzo.ComposedEvent([dpzo.SelfComposedEvent(G(10.0), 50),
                              dpzo.SelfComposedEvent(G(5.0), 50)])
    r = dpzo.PldAccountant().compose(het).delta(4.0)
    t = (0.5 * math.erfc((4.0 / mu - mu / 2) / math.sqrt(2))
         - math.exp(4.0) * 0.5 * math.erfc((4.0 / mu + mu / 2) / math.sqrt(2)))
    assert r.lower is not None and r.lower <= t * 1.02 and r.delta >= t * 0.98


def test_laplace_events() -> None:
    # dp_accounting pld_privacy_accountant_test: Poisson(0.2, Laplace(0.5)) x 3 at 1e-14
    # -> 2.46964 (published to 6 digits)
    ev = dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(0.2, dpzo.LaplaceEvent(0.5)), 3)
    r = dpzo.PldAccountant().compose(ev).epsilon(1e-14)
    assert abs(r.estimate - 2.46964) < 1e-5
    assert r.lower <= 2.469645 and r.epsilon >= 2.469635
    # dp_accounting accountant_test: Laplace 13.6 meets (1, 1e-4) over 20 queries, 13.5 not
    assert dpzo.PldAccountant().compose(dpzo.LaplaceEvent(13.6), 20).epsilon(1e-4).epsilon <= 1.0
    assert dpzo.PldAccountant().compose(dpzo.LaplaceEvent(13.5), 20).epsilon(1e-4).lower > 1.0
    # pure DP: one Laplace(b) release is (1/b, 0)-DP; the RDP bound is above the exact
    # epsilon and below 1/b plus the conversion's log(1/delta)/(alpha-1) term
    r = dpzo.RdpAccountant().compose(dpzo.LaplaceEvent(2.0)).epsilon(1e-5)
    p = dpzo.PldAccountant().compose(dpzo.LaplaceEvent(2.0)).epsilon(1e-5)
    assert p.lower <= 0.5 + 1e-9 and p.epsilon >= 0.5 - 1e-3 and r.epsilon >= p.lower


def test_lmo_event_needs_an_lmo() -> None:
    with pytest.raises(dpzo.Error, match="dpzo.Lmo"):
        dpzo.LmoEvent("not an lmo")  # type: ignore[arg-type]


def test_lmo_events_alone() -> None:
    from dpzo.lmo import Lmo, lmo_epsilon

    lmo = Lmo(gamma_weight=1.0, gamma_shape=2.0, gamma_scale=0.5)
    ev = dpzo.PoissonSampledEvent(0.01, dpzo.LmoEvent(lmo))
    want = lmo_epsilon(lmo, delta=1e-5, steps=100, sampling_rate=0.01)
    for acc in (dpzo.RdpAccountant().compose(dpzo.SelfComposedEvent(ev, 100)),
                dpzo.RdpAccountant().compose(ev, 100),
                dpzo.RdpAccountant().compose(ev, 40).compose(ev, 60)):
        r = acc.epsilon(1e-5)
        assert r.epsilon == want.epsilon and r.order == want.order and r.accountant == "rdp"
    p = dpzo.PldAccountant().compose(ev, 100).epsilon(1e-5)
    assert p.lower is not None and p.lower <= p.epsilon <= want.epsilon
    with pytest.raises(dpzo.Error, match="unsupported"):
        dpzo.RdpAccountant().compose(ev, 10).compose(G(1.0)).epsilon(1e-5)
    with pytest.raises(dpzo.Error, match="unsupported"):
        dpzo.PrvAccountant().compose(ev, 10).epsilon(1e-5)
    with pytest.raises(dpzo.Error, match="unsupported"):
        dpzo.RdpAccountant().compose(ev, 10).delta(1.0)
    with pytest.raises(dpzo.Error, match="unsupported"):
        dpzo.ComposedEvent([ev, G(1.0)]).describe()
