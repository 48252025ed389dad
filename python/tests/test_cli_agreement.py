# SPDX-License-Identifier: Apache-2.0
"""The Python calls give the command line's answers (`dpzo epsilon|delta|calibrate --json`)
to the last bit: the same C calls on the same doubles. A few hundred seeded random inputs,
mostly RDP, a few PLD/PRV and batches without replacement."""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Dict, List, Tuple

import pytest

import dpzo

Run = Callable[..., Dict[str, Any]]
N_RDP = 240


def _f(x: float) -> str:
    return repr(float(x))  # the shortest string that reads back as the same double


def _random_training(rng: random.Random) -> Dict[str, Any]:
    return dict(noise_multiplier=math.exp(rng.uniform(math.log(0.4), math.log(8.0))),
                sampling_rate=math.exp(rng.uniform(math.log(1e-4), math.log(0.5))),
                steps=int(math.exp(rng.uniform(0, math.log(2e5)))),
                delta=10 ** rng.uniform(-12, -3))


def _cases(seed: int, n: int) -> List[Dict[str, Any]]:
    rng = random.Random(seed)
    return [_random_training(rng) for _ in range(n)]


def _same(a: float, b: Any) -> bool:
    """b from the CLI's JSON: a number with 17 digits (the same double) or "inf"."""
    if isinstance(b, str):
        return b == "inf" and a == math.inf
    return a == b and (a != 0.0 or math.copysign(1, a) == math.copysign(1, b))


def test_epsilon_rdp_random(run_cli: Run) -> None:
    bad: List[Tuple[Dict[str, Any], str]] = []
    for i, k in enumerate(_cases(2026, N_RDP)):
        orders = [None, "opacus", "tf", "dp_accounting"][i % 4]
        r = dpzo.epsilon(**k, orders=orders)
        args = ["epsilon", "--noise-multiplier", _f(k["noise_multiplier"]), "--sampling-rate",
                _f(k["sampling_rate"]), "--steps", str(k["steps"]), "--delta", _f(k["delta"])]
        if orders:
            args += ["--orders", orders]
        j = run_cli(*args)
        for ours, key in [(r.epsilon, "epsilon"), (r.estimate, "epsilon_estimate"),
                          (r.delta, "delta"), (r.order, "order")]:
            if not _same(ours, j[key]):
                bad.append((k, f"{key}: python {ours!r} vs cli {j[key]!r}"))
        assert r.epsilon >= 0 and not math.isnan(r.epsilon)
    assert not bad, bad[:5]


def test_delta_rdp_random(run_cli: Run) -> None:
    for k in _cases(7, 40):
        eps = 10 ** random.Random(k["steps"]).uniform(-1, 1.3)
        acc = dpzo.RdpAccountant().compose(dpzo.SelfComposedEvent(
            dpzo.PoissonSampledEvent(k["sampling_rate"], dpzo.GaussianEvent(k["noise_multiplier"])),
            k["steps"]))
        r = acc.delta(eps)
        j = run_cli("delta", "--noise-multiplier", _f(k["noise_multiplier"]), "--sampling-rate",
                    _f(k["sampling_rate"]), "--steps", str(k["steps"]), "--epsilon", _f(eps))
        assert _same(r.delta, j["delta"]) and _same(r.estimate, j["delta_estimate"]), (k, eps)
        assert _same(r.order, j["order"]) and 0.0 <= r.delta <= 1.0


def test_calibrate_rdp_random(run_cli: Run) -> None:
    rng = random.Random(99)
    for i in range(60):
        k = _random_training(rng)
        eps = 10 ** rng.uniform(-0.7, 1.2)
        tol = [None, 1e-4, 1e-8][i % 3]
        c = dpzo.calibrate(epsilon=eps, delta=k["delta"], sampling_rate=k["sampling_rate"],
                           steps=k["steps"], tolerance=tol)
        args = ["calibrate", "--epsilon", _f(eps), "--delta", _f(k["delta"]), "--sampling-rate",
                _f(k["sampling_rate"]), "--steps", str(k["steps"])]
        if tol is not None:
            args += ["--tolerance", _f(tol)]
        j = run_cli(*args)
        assert _same(c.noise_multiplier, j["noise_multiplier"]), (k, eps, c, j)
        assert _same(c.epsilon, j["epsilon"]) and _same(c.order, j["order"])
        assert c.tight_to is not None and _same(c.tight_to, j["tight_to"])
        assert c.evaluations == j["evaluations"] and c.epsilon <= eps


def test_epochs_random(run_cli: Run) -> None:
    rng = random.Random(5)
    for _ in range(20):
        k = _random_training(rng)
        del k["steps"]
        epochs = round(rng.uniform(0.5, 30), 3)
        r = dpzo.epsilon(**k, epochs=epochs)
        j = run_cli("epsilon", "--noise-multiplier", _f(k["noise_multiplier"]),
                    "--sampling-rate", _f(k["sampling_rate"]), "--epochs", _f(epochs),
                    "--delta", _f(k["delta"]))
        assert _same(r.epsilon, j["epsilon"]), (k, epochs)
    # one rule (C dpzo_steps_from_epochs): 3 epochs at the double 0.3 are 11 steps in both
    for q, e, b, n in [(0.3, 3, None, None), (None, 0.9, 3, 10), (1 / 3, 7, None, None)]:
        kw = dict(sampling_rate=q) if q else dict(batch_size=b, dataset_size=n)
        c = dpzo.calibrate(epsilon=20.0, delta=1e-5, epochs=e, **kw)  # type: ignore[arg-type]
        args = (["--sampling-rate", _f(q)] if q else
                ["--batch-size", str(b), "--dataset-size", str(n)])
        j = run_cli("calibrate", "--epsilon", "20", "--delta", "1e-5", "--epochs", _f(e), *args)
        assert c.steps == j["steps"] and _same(c.noise_multiplier, j["noise_multiplier"])


def test_batches_rdp(run_cli: Run) -> None:
    rng = random.Random(11)
    for _ in range(6):
        n = rng.randint(1000, 100000)
        b = rng.randint(1, n // 10)
        s, t, d = rng.uniform(0.6, 3), rng.randint(1, 3000), 10 ** rng.uniform(-9, -4)
        r = dpzo.epsilon(noise_multiplier=s, batch_size=b, dataset_size=n, steps=t, delta=d)
        j = run_cli("epsilon", "--noise-multiplier", _f(s), "--batch-size", str(b),
                    "--dataset-size", str(n), "--steps", str(t), "--delta", _f(d))
        assert _same(r.epsilon, j["epsilon"]) and _same(r.order, j["order"]), (n, b, s, t, d)
    c = dpzo.calibrate(epsilon=2.0, delta=1e-5, batch_size=64, dataset_size=5000, epochs=2)
    j = run_cli("calibrate", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "64",
                "--dataset-size", "5000", "--epochs", "2")
    assert _same(c.noise_multiplier, j["noise_multiplier"]) and c.steps == j["steps"] == 157


@pytest.mark.parametrize("accountant", ["pld", "prv"])
def test_tight_random(run_cli: Run, accountant: str) -> None:
    rng = random.Random(3 if accountant == "pld" else 4)
    for _ in range(3):
        k = dict(noise_multiplier=rng.uniform(0.8, 3), sampling_rate=rng.uniform(1e-3, 0.05),
                 steps=rng.randint(10, 2000), delta=10 ** rng.uniform(-8, -4))
        r = dpzo.epsilon(**k, accountant=accountant)
        j = run_cli("epsilon", "--noise-multiplier", _f(k["noise_multiplier"]),
                    "--sampling-rate", _f(k["sampling_rate"]), "--steps", str(k["steps"]),
                    "--delta", _f(k["delta"]), "--accountant", accountant)
        assert j["accountant"] == accountant
        assert _same(r.epsilon, j["epsilon_upper"]) and _same(r.lower, j["epsilon_lower"])
        assert _same(r.estimate, j["epsilon_estimate"]) and r.fallback == j["fallback"]
        assert 0.0 <= r.lower <= r.estimate <= r.epsilon
    c = dpzo.calibrate(epsilon=2.0, delta=1e-5, sampling_rate=0.01, steps=300,
                       accountant=accountant)
    j = run_cli("calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.01",
                "--steps", "300", "--accountant", accountant)
    assert _same(c.noise_multiplier, j["noise_multiplier"]) and _same(c.lower, j["epsilon_lower"])
    assert _same(c.epsilon, j["epsilon"]) and c.epsilon <= 2.0


def test_tight_options_and_delta(run_cli: Run) -> None:
    """grid, eps_error (PLD's fallback to RDP) and RDP orders reach the library as the CLI's
    --grid, --eps-error and --orders do; delta(epsilon) by PLD as `dpzo delta`."""
    k = dict(noise_multiplier=0.8, sampling_rate=0.05, steps=200, delta=1e-6)
    r = dpzo.epsilon(**k, accountant="pld", grid=0.02, eps_error=0.001,  # type: ignore[arg-type]
                     orders="opacus")
    j = run_cli("epsilon", "--noise-multiplier", "0.8", "--sampling-rate", "0.05", "--steps",
                "200", "--delta", "1e-6", "--accountant", "pld", "--grid", "0.02",
                "--eps-error", "0.001", "--orders", "opacus")
    assert r.fallback and j["fallback"] and r.reason == j["fallback_reason"]
    assert _same(r.epsilon, j["epsilon"]) and _same(r.lower, j["epsilon_lower"])
    ev = dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(0.05, dpzo.GaussianEvent(0.8)), 200)
    for acc, mk in (("pld", dpzo.PldAccountant), ("prv", dpzo.PrvAccountant)):
        d = mk().compose(ev).delta(3.0)
        j = run_cli("delta", "--noise-multiplier", "0.8", "--sampling-rate", "0.05", "--steps",
                    "200", "--epsilon", "3", "--accountant", acc)
        assert _same(d.delta, j["delta_upper"]) and _same(d.lower, j["delta_lower"])
        assert _same(d.estimate, j["delta_estimate"]) and 0.0 <= d.lower <= d.delta <= 1.0
