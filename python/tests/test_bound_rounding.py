# SPDX-License-Identifier: Apache-2.0
"""Issue 28, item 1: a proven upper bound is never below the truth, in the Python package,
the CLI's text and its --json, for the RDP, PLD and PRV accountants.

One Poisson-subsampled Gaussian step at huge noise, tiny rate or large epsilon has a
positive delta(eps) far below the smallest positive double: the upper bound must read at
least 2^-1074 (4.94e-324), never 0, and the lower bound 0. The truths are those of
tests/ref/make_bound_rounding_reference.py (mpmath, add/remove adjacency, the hockey-stick
divergence E[(1 - e^{eps - L})_+]; printed to stderr by
`/usr/bin/python3 tests/ref/make_bound_rounding_reference.py > tests/ref/bound_rounding_values.h`).
"""
from __future__ import annotations

import math
import subprocess
from typing import List

import pytest

import dpzo

TINY = math.ulp(0.0)  # 2^-1074 = 4.94e-324

# (sigma, q, steps, eps, the exact delta of one step (a lower bound on T steps' delta))
POSITIVE_BELOW_DOUBLES = [
    (1000.0, 1e-4, 1, 3.0, "1.1783736628781490123e-32104799"),
    (30.0, 1e-4, 1, 0.5, "2.266860429246424905e-15067"),
    (1e5, 1.0, 1, 3.0, "4.4851506493843170802e-19543251702"),
    (1000.0, 1e-4, 10, 3.0, "1.1783736628781490123e-32104799"),
]
# (sigma, q, eps, exact delta as a double's neighbours: largest below, smallest above)
REPRESENTABLE = [
    (1.0, 0.01, 33.0, 3.038287476443742e-305, 3.0382874764437423e-305),  # 3.0382874764437422198e-305
    (1.0, 0.01, 34.0, 1.34e-321, 1.344e-321),  # 1.3432539683790357289e-321 (subnormal)
]
# (sigma, q, delta, exact epsilon's neighbours)
EPS_TINY = [
    (1e5, 1.0, 1e-10, 3.923565897214771e-05, 3.9235658972147716e-05),  # 3.9235658972147709608e-5
    (1000.0, 1e-4, 1e-10, 2.721916425513556e-07, 2.7219164255135564e-07),  # 2.7219164255135559243e-7
]

ACCOUNTANTS = ["rdp", "pld", "prv"]
CLASSES = {"rdp": dpzo.RdpAccountant, "pld": dpzo.PldAccountant, "prv": dpzo.PrvAccountant}


def _delta(acc: str, sigma: float, q: float, steps: int, eps: float) -> dpzo.Delta:
    a = CLASSES[acc]()
    g = dpzo.GaussianEvent(sigma)
    a.compose(dpzo.PoissonSampledEvent(q, g) if q < 1.0 else g, steps)
    return a.delta(eps)


@pytest.mark.parametrize("acc", ACCOUNTANTS)
@pytest.mark.parametrize("sigma,q,steps,eps,truth", POSITIVE_BELOW_DOUBLES)
def test_python_delta_never_zero(acc: str, sigma: float, q: float, steps: int, eps: float,
                                 truth: str) -> None:
    r = _delta(acc, sigma, q, steps, eps)
    assert r.delta >= TINY, f"{acc}: upper bound {r.delta!r} below the truth {truth}"
    if r.lower is not None:
        assert r.lower == 0.0
    assert r.delta <= 1.0


@pytest.mark.parametrize("acc", ACCOUNTANTS)
@pytest.mark.parametrize("sigma,q,eps,down,up", REPRESENTABLE)
def test_python_delta_representable(acc: str, sigma: float, q: float, eps: float, down: float,
                                    up: float) -> None:
    r = _delta(acc, sigma, q, 1, eps)
    assert r.delta >= up
    if r.lower is not None:
        assert r.lower <= down


@pytest.mark.parametrize("acc", ACCOUNTANTS)
@pytest.mark.parametrize("sigma,q,delta,down,up", EPS_TINY)
def test_python_epsilon_tiny(acc: str, sigma: float, q: float, delta: float, down: float,
                             up: float) -> None:
    r = dpzo.epsilon(noise_multiplier=sigma, sampling_rate=q, steps=1, delta=delta,
                     accountant=acc)
    assert r.epsilon >= up
    if r.lower is not None:
        assert r.lower <= down


def _issue_argv(acc: str) -> List[str]:
    return ["delta", "--noise-multiplier", "1000", "--sampling-rate", "1e-4", "--steps", "1",
            "--epsilon", "3", "--accountant", acc]


@pytest.mark.parametrize("acc", ACCOUNTANTS)
def test_cli_json(run_cli, acc: str) -> None:
    j = run_cli(*_issue_argv(acc))
    assert j["delta"] == TINY
    if acc != "rdp":
        assert j["delta_upper"] == TINY
        assert j["delta_lower"] == 0.0


@pytest.mark.parametrize("acc", ACCOUNTANTS)
def test_cli_text(cli_path: str, acc: str) -> None:
    res = subprocess.run([cli_path, *_issue_argv(acc)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    line = next(l for l in res.stdout.splitlines() if l.strip().startswith("delta "))
    label = "certified upper bound" if acc == "rdp" else "proven upper bound"
    assert line.split() == ["delta", "4.940656459e-324", f"({label.split()[0]}",
                            *label.split()[1:-1], label.split()[-1] + ")"], line
    if acc != "rdp":
        lower = next(l for l in res.stdout.splitlines() if l.strip().startswith("delta lower"))
        assert lower.split()[:3] == ["delta", "lower", "0"], lower
