# SPDX-License-Identifier: Apache-2.0
"""dpzo.epsilon and dpzo.calibrate: the contract calls, published values, and the
epochs / fixed-batch variants against their explicit equivalents."""
from __future__ import annotations

import math
import subprocess
from fractions import Fraction
import sys

import pytest

import dpzo

MNIST = dict(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063, delta=1e-5)


def test_contract_epsilon_prints_2_5966() -> None:
    r = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256/60000, steps=14063, delta=1e-5)
    assert str(r.epsilon).startswith("2.5966")
    # TF Privacy's MNIST tutorial: 2.5970795196566616 on its 72-order grid (order 8),
    # dp_accounting 2.596655529521983 at order 8.1; the continuous optimum is below both,
    # and within 1e-4 of them (test_convert.c).
    assert r.epsilon <= 2.596655529521983
    assert r.epsilon > 2.596655529521983 - 1e-4
    assert 8.0 < r.order < 8.3
    assert r.lower is None and r.accountant == "rdp" and r.fallback is False
    assert r.estimate <= r.epsilon <= r.estimate * (1 + 1e-10)
    assert float(r) == r.epsilon and r.delta == 1e-5


def test_contract_epsilon_in_a_fresh_interpreter() -> None:
    """The issue's exact command line (with the package as this test found it)."""
    import os
    import pathlib

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(dpzo.__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["DPZO_LIBRARY"] = dpzo._lib.library_path
    out = subprocess.run([sys.executable, "-c", "import dpzo; print(dpzo.epsilon("
                          "noise_multiplier=1.1, sampling_rate=256/60000, steps=14063, "
                          "delta=1e-5).epsilon)"], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert out.startswith("2.5966")


def test_contract_calibrate_certified() -> None:
    c = dpzo.calibrate(epsilon=3.0, delta=1e-5, sampling_rate=256/60000, steps=14063)
    assert c.epsilon <= 3.0 and c.accountant == "rdp" and c.steps == 14063
    # certified: the accountant's proven epsilon at the answer meets the target ...
    assert dpzo.epsilon(noise_multiplier=c.noise_multiplier, sampling_rate=256 / 60000,
                        steps=14063, delta=1e-5).epsilon <= 3.0
    # ... and tight: one tolerance (1e-6 relative) below misses it by the estimate
    assert c.tight_to is not None and c.tight_to < c.noise_multiplier
    assert c.noise_multiplier - c.tight_to <= 2e-6 * c.noise_multiplier
    assert dpzo.epsilon(noise_multiplier=c.tight_to, sampling_rate=256 / 60000, steps=14063,
                        delta=1e-5).estimate > 3.0


def test_published_opacus_and_dp_accounting_calibrations() -> None:
    # Opacus accountants_test: get_noise_multiplier(8, 1e-5, q 0.04, 2250 steps) = 1.416
    # (its bisection stops within 0.01 of the target on its grid): ours is below it.
    c = dpzo.calibrate(epsilon=8.0, delta=1e-5, sampling_rate=0.04, steps=2250, orders="opacus")
    assert 1.416 - 2e-3 < c.noise_multiplier <= 1.416 + 5e-5
    # dp_accounting calibrate_dp_mechanism, RDP on its grid: 1.4158731880 (its fractional
    # orders are loose upper bounds, so the exact answer is a little lower).
    c = dpzo.calibrate(epsilon=8.0, delta=1e-5, sampling_rate=0.04, steps=2250,
                       orders="dp_accounting")
    assert c.noise_multiplier <= 1.4158731880
    assert math.isclose(c.noise_multiplier, 1.4158731880, rel_tol=1e-4)
    # dp_accounting PLD (grid 1e-4): 1.3458999950
    c = dpzo.calibrate(epsilon=8.0, delta=1e-5, sampling_rate=0.04, steps=2250,
                       accountant="pld", tolerance=5e-5)
    assert c.epsilon <= 8.0 and c.lower is not None and c.lower <= c.epsilon
    assert math.isclose(c.noise_multiplier, 1.3458999950, rel_tol=1e-4)
    # dp_accounting accountant_test: 0.67379294682 for (1, 1e-5), q 0.01, one step
    c = dpzo.calibrate(epsilon=1.0, delta=1e-5, sampling_rate=0.01, steps=1,
                       accountant="pld", tolerance=2e-6)
    assert math.isclose(c.noise_multiplier, 0.67379294682, rel_tol=1e-5)


def test_wor_calibration_against_dp_accounting() -> None:
    # dp_accounting 0.6.0's RDP calibration of 2000 steps of batches of 256 of 60000
    # without replacement at (3, 1e-5) on its grid: 0.8089185188244594 (test_calibrate.c).
    c = dpzo.calibrate(epsilon=3.0, delta=1e-5, batch_size=256, dataset_size=60000, steps=2000,
                       orders="dp_accounting", tolerance=1e-4)
    assert abs(c.noise_multiplier / 0.8089185188244594 - 1) < 1e-3
    e = dpzo.epsilon(noise_multiplier=c.noise_multiplier, batch_size=256, dataset_size=60000,
                     steps=2000, delta=1e-5, orders="dp_accounting")
    assert e.epsilon <= 3.0


def test_epochs_poisson_equals_steps() -> None:
    # 60 epochs of q = 256/60000: ceil(60 * 60000 / 256) = 14063 steps (the tutorial's).
    a = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256 / 60000, epochs=60, delta=1e-5)
    b = dpzo.epsilon(**MNIST)
    assert a == b
    c = dpzo.calibrate(epsilon=3.0, delta=1e-5, sampling_rate=256 / 60000, epochs=60)
    assert c.steps == 14063
    assert c == dpzo.calibrate(epsilon=3.0, delta=1e-5, sampling_rate=256 / 60000, steps=14063)


@pytest.mark.parametrize("epochs, q, steps", [
    (1, 0.01, 100), (3, 0.3, 11), (1, 0.1, 10), (2.5, 0.01, 250), (0.5, 0.3, 2), (0, 0.1, 0),
    (7, 1 / 3, 22), (60, 256 / 60000, 14063), (1, 1.0, 1)])
def test_epochs_poisson_rule(epochs: float, q: float, steps: int) -> None:
    """ceil(E / q) for the double q given, never fewer steps than E epochs: 0.3 is
    0.29999999999999998890 as a double, so 3 epochs are 10.000000000000000370 -> 11 steps.
    The expected counts are exact rational arithmetic (fractions) on the doubles."""
    assert math.ceil(Fraction(epochs) / Fraction(q)) == steps
    c = dpzo.calibrate(epsilon=50.0, delta=1e-5, sampling_rate=q, epochs=epochs)
    assert c.steps == steps


@pytest.mark.parametrize("epochs, b, n, steps", [
    (1, 256, 60000, 235), (60, 256, 60000, 14063), (2, 100, 1000, 20), (0.9, 3, 10, 4),
    (1.5, 64, 1000, 24), (3, 7, 7, 3), (0.5, 3, 10, 2)])
def test_epochs_batches_rule(epochs: float, b: int, n: int, steps: int) -> None:
    """ceil(E N / B), exact in integers for whole epochs (0.9 is 0.90000000000000002220 as
    a double: 0.9 x 10 / 3 epochs are 4 steps)."""
    assert math.ceil(Fraction(epochs) * n / b) == steps
    assert dpzo.shortcuts._steps(None, epochs, None, b, n) == steps


def test_epochs_rule_random_against_fractions() -> None:
    import random

    rng = random.Random(1)
    for _ in range(300):
        e, q = rng.uniform(0, 50), rng.uniform(1e-4, 1)
        assert dpzo.shortcuts._steps(None, e, q, 0, 0) == math.ceil(Fraction(e) / Fraction(q))
        n = rng.randint(1, 10 ** 6)
        b = rng.randint(1, n)
        assert (dpzo.shortcuts._steps(None, e, None, b, n)
                == math.ceil(Fraction(e) * n / b))


def test_epochs_batches_equal_steps() -> None:
    c = dpzo.calibrate(epsilon=2.0, delta=1e-5, batch_size=64, dataset_size=1000, epochs=1.5)
    assert c.steps == 24
    e1 = dpzo.epsilon(noise_multiplier=1.0, batch_size=64, dataset_size=1000, epochs=1.5,
                      delta=1e-5)
    e2 = dpzo.epsilon(noise_multiplier=1.0, batch_size=64, dataset_size=1000, steps=24,
                      delta=1e-5)
    e3 = dpzo.epsilon(noise_multiplier=1.0, batch_size=64, dataset_size=1000, steps=23,
                      delta=1e-5)
    assert e1 == e2 and e3.epsilon < e2.epsilon


def test_batches_equal_the_explicit_event() -> None:
    for acc, mk in [("rdp", dpzo.RdpAccountant), ("pld", dpzo.PldAccountant)]:
        a = dpzo.epsilon(noise_multiplier=1.0, batch_size=64, dataset_size=10000, steps=500,
                         delta=1e-6, accountant=acc)
        ev = dpzo.SelfComposedEvent(dpzo.SampledWithoutReplacementEvent(
            10000, 64, dpzo.GaussianEvent(1.0)), 500)
        assert a == mk().compose(ev).epsilon(1e-6)


def test_poisson_equals_the_explicit_event() -> None:
    ev = dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(256 / 60000, dpzo.GaussianEvent(1.1)),
                                14063)
    assert dpzo.epsilon(**MNIST) == dpzo.RdpAccountant().compose(ev).epsilon(1e-5)
    assert (dpzo.epsilon(**MNIST, accountant="prv")
            == dpzo.PrvAccountant().compose(ev).epsilon(1e-5))
    # compose(step, T) is the same event as SelfComposed(step, T)
    step = dpzo.PoissonSampledEvent(256 / 60000, dpzo.GaussianEvent(1.1))
    assert dpzo.RdpAccountant().compose(step, 14063).epsilon(1e-5) == dpzo.epsilon(**MNIST)


def test_tight_accountants_bracket_the_rdp_bound() -> None:
    rdp = dpzo.epsilon(**MNIST)
    pld = dpzo.epsilon(**MNIST, accountant="pld")
    prv = dpzo.epsilon(**MNIST, accountant="prv")
    # dp_accounting's PLD (grid 1e-4) estimate for the tutorial: 2.3817788079120428
    for r in (pld, prv):
        assert r.lower is not None and r.lower <= 2.3817788079120428 + 1e-4
        assert r.lower <= r.estimate <= r.epsilon < rdp.epsilon
        assert r.epsilon > 2.38 and r.order is None
    assert math.isclose(pld.estimate, 2.3817788079120428, rel_tol=1e-5)
    assert prv.epsilon - prv.lower <= 0.012
    # a coarser PLD grid is looser but still brackets
    coarse = dpzo.epsilon(**MNIST, accountant="pld", grid=1e-3)
    assert coarse.lower <= pld.lower + 1e-12 and coarse.epsilon >= pld.epsilon - 1e-12


def test_orders_grids() -> None:
    tf = dpzo.epsilon(**MNIST, orders="tf")
    assert math.isclose(tf.epsilon, 2.5970795196566616, rel_tol=1e-10) and tf.order == 8
    dpa = dpzo.epsilon(**MNIST, orders="dp_accounting")
    assert dpa.order == 8.1 and dpa.epsilon <= 2.596655529521983
    lst = dpzo.epsilon(**MNIST, orders=[8, 8.1, 9])
    assert lst.order == 8.1 and lst.epsilon == dpa.epsilon
