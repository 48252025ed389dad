# SPDX-License-Identifier: Apache-2.0
"""The accountants against the published vectors the C tests use (tests/test_rdp.c,
test_convert.c, test_pld.c, test_calibrate.c), asserted through Python; the ctypes
structs against the C compiler's layout; the ledger."""
from __future__ import annotations

import ctypes
import math
import pathlib
import shutil
import subprocess

import pytest

import dpzo
from dpzo import _structs as S

ROOT = pathlib.Path(__file__).resolve().parents[2]
G = dpzo.GaussianEvent


def sgm(q: float, sigma: float, steps: int) -> dpzo.Event:
    return dpzo.SelfComposedEvent(dpzo.PoissonSampledEvent(q, G(sigma)), steps)


def test_struct_layouts_match_the_headers(tmp_path: pathlib.Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to read the headers' struct layouts")
    structs = {"dpzo_rdp_options": S.RdpOptions, "dpzo_dp_result": S.DpResult,
               "dpzo_pld_options": S.PldOptions, "dpzo_pld_result": S.PldResult,
               "dpzo_calibration": S.Calibration}
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "dpzo/dpzo.h"',
             'int main(void) {']
    for c, py in structs.items():
        lines.append(f'printf("{c} %zu\\n", sizeof({c}));')
        for name, *_ in py._fields_:
            lines.append(f'printf("{c}.{name} %zu\\n", offsetof({c}, {name}));')
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c17", "-I", str(ROOT / "include"), str(src), "-o", str(exe)],
                   check=True)
    got = dict(l.split() for l in subprocess.run([str(exe)], capture_output=True, text=True,
                                                 check=True).stdout.splitlines())
    for c, py in structs.items():
        assert int(got[c]) == ctypes.sizeof(py), c
        for name, *_ in py._fields_:
            assert int(got[f"{c}.{name}"]) == getattr(py, name).offset, f"{c}.{name}"


def test_opacus_vector() -> None:
    # Opacus accountants_test: sigma 1.5, q 0.04, 2250 steps, delta 1e-5 -> 7.32911117143
    r = dpzo.RdpAccountant(orders="opacus").compose(sgm(0.04, 1.5, 2250)).epsilon(1e-5)
    assert math.isclose(r.epsilon, 7.32911117143, rel_tol=1e-10)


def test_tf_privacy_vectors() -> None:
    # compute_dp_sgd_privacy_test (72-order grid, improved conversion)
    for q, s, t, d, eps, order in [(150 / 60000, 1.3, 6000, 1e-5, 0.7242234026109595, 19),
                                   (100 / 100000, 1.0, 30000, 1e-7, 1.4154988495444842, 13),
                                   (1024 / 1e8, 0.1, 976563, 1e-7, 5907982.3113984, 1.25)]:
        r = dpzo.RdpAccountant(orders="tf").compose(sgm(q, s, t)).epsilon(d)
        assert math.isclose(r.epsilon, eps, rel_tol=1e-10) and r.order == order
    # the MNIST tutorial with the standard conversion: 3.0092111729975137 at order 9
    r = dpzo.RdpAccountant(orders="tf", conversion="standard").compose(
        sgm(256 / 60000, 1.1, 14063)).epsilon(1e-5)
    assert math.isclose(r.epsilon, 3.0092111729975137, rel_tol=1e-10) and r.order == 9


def test_tf_privacy_statements_dp_accounting_grid() -> None:
    acc = lambda: dpzo.RdpAccountant(orders="dp_accounting")  # noqa: E731
    assert math.isclose(acc().compose(G(0.7), 2).epsilon(1e-5).epsilon, 10.8602036, rel_tol=1e-8)
    assert math.isclose(acc().compose(G(0.35), 2).epsilon(1e-5).epsilon, 26.2880374,
                        rel_tol=1e-8)
    a = acc().compose(sgm(0.01, 0.7, 120)).epsilon(1e-5).epsilon
    assert 3.2392676 * (1 - 1e-4) < a <= 3.2392676
    assert math.isclose(acc().compose(sgm(256 / 60000, 1.1, 234)).epsilon(1e-5).epsilon,
                        0.7402343196212284, rel_tol=1e-10)


def test_dp_accounting_gaussian_fine_grid() -> None:
    # q = 1, sigma 4.530877117, orders 1.001..99.999: epsilon(1e-6) = 1 to 7 places,
    # delta(1) = 1e-6
    acc = dpzo.RdpAccountant(orders=[i / 1000 for i in range(1001, 100000)]).compose(
        G(4.530877117))
    assert abs(acc.epsilon(1e-6).epsilon - 1.0) < 5e-8
    assert math.isclose(acc.delta(1.0).delta, 1e-6, rel_tol=1e-6)


def test_pld_published_single_steps() -> None:
    # dp_accounting privacy_loss_mechanism_test: exact hockey-stick deltas of one step
    for q, s, eps, delta in [(1.0, 1.0, 1.0, 0.12693674), (0.8, 1.0, 1.0, 0.0816951786585355),
                             (0.3, 1.0, 2.0, 0.0003341102928869332),
                             (0.2, 1.0, 0.5, 0.012494629)]:
        ev = G(s) if q == 1.0 else dpzo.PoissonSampledEvent(q, G(s))
        r = dpzo.PldAccountant().compose(ev).delta(eps)
        tol = 5e-9 + 1e-7 * delta
        assert r.lower is not None and r.lower <= delta + tol and r.delta >= delta - tol
        assert math.isclose(r.estimate, delta, rel_tol=1e-6)
        assert r.epsilon == eps and r.accountant == "pld"


def test_tf_privacy_pld_vectors() -> None:
    for s, q, t, d, eps, rnd in [(0.7, 1.0, 2, 1e-5, 10.1224946, 5e-8),
                                 (0.7, 0.01, 120, 1e-5, 2.4612381, 5e-8),
                                 (1.0, 0.0064, 782, 1e-6, 1.199, 5e-4)]:
        ev = dpzo.SelfComposedEvent(G(s), t) if q == 1.0 else sgm(q, s, t)
        r = dpzo.PldAccountant().compose(ev).epsilon(d)
        assert abs(r.estimate - eps) <= rnd + 1e-5 * eps and r.lower <= eps + rnd


def test_prv_brackets_the_mnist_pld_value() -> None:
    # dp_accounting PLD (grid 1e-4) for the tutorial: 2.3817788079120428, its pessimistic
    # estimate (above the truth); the README's PRV cell is [2.37155, 2.38171]
    r = dpzo.PrvAccountant(eps_error=0.01).compose(sgm(256 / 60000, 1.1, 14063)).epsilon(1e-5)
    assert r.lower <= 2.3817788079120428 and r.epsilon > 2.38 and r.epsilon - r.lower <= 0.012
    assert r.accountant == "prv" and r.order is None


def test_ledger_and_chaining() -> None:
    acc = dpzo.RdpAccountant()
    step = dpzo.PoissonSampledEvent(0.01, G(1.0))
    assert acc.compose(step, 100) is acc
    acc.compose(G(5.0))
    assert acc.ledger == dpzo.ComposedEvent([dpzo.SelfComposedEvent(step, 100), G(5.0)])
    e1 = acc.epsilon(1e-5).epsilon
    e0 = dpzo.RdpAccountant().compose(step, 100).epsilon(1e-5).epsilon
    assert e1 > e0  # composing more never lowers epsilon
    assert "ledger of 2" in repr(acc)


def test_round_trip_and_monotone_in_delta() -> None:
    ev = sgm(0.01, 1.0, 1000)
    prev = 0.0
    for d in (1e-3, 1e-5, 1e-8, 1e-12, 1e-20):
        a = dpzo.RdpAccountant().compose(ev).epsilon(d)
        assert a.epsilon > prev and a.epsilon >= a.estimate
        prev = a.epsilon
        b = dpzo.RdpAccountant().compose(ev).delta(a.estimate)
        assert math.isclose(b.estimate, d, rel_tol=1e-5) and b.delta >= b.estimate * (1 - 1e-12)
    p = dpzo.PldAccountant().compose(ev)
    e = p.epsilon(1e-6)
    back = p.delta(e.epsilon)
    assert back.lower <= 1e-6 * (1 + 1e-9)


def test_conversion_and_alpha_max() -> None:
    ev = sgm(0.02, 0.9, 5000)
    imp = dpzo.RdpAccountant().compose(ev).epsilon(1e-6)
    std = dpzo.RdpAccountant(conversion="standard").compose(ev).epsilon(1e-6)
    assert imp.epsilon < std.epsilon
    edge = dpzo.RdpAccountant(alpha_max=1.5).compose(ev).epsilon(1e-6)
    assert edge.order == 1.5 and "edge" in edge.reason and edge.epsilon > imp.epsilon


def test_tight_options() -> None:
    ev = sgm(0.01, 1.0, 500)
    fine = dpzo.PldAccountant(grid=1e-4).compose(ev).epsilon(1e-6)
    coarse = dpzo.PldAccountant(grid=1e-2).compose(ev).epsilon(1e-6)
    assert coarse.epsilon - coarse.lower > fine.epsilon - fine.lower
    assert coarse.lower <= fine.epsilon and fine.lower <= coarse.epsilon
    with pytest.raises(dpzo.Error, match="MiB"):
        dpzo.PldAccountant(grid=1e-6, memory_limit=1 << 20).compose(ev).epsilon(1e-6)
    loose = dpzo.PrvAccountant(eps_error=0.1).compose(ev).epsilon(1e-6)
    tight = dpzo.PrvAccountant(eps_error=0.005).compose(ev).epsilon(1e-6)
    assert tight.epsilon - tight.lower <= loose.epsilon - loose.lower
    # PLD falls back to RDP when its interval is wider than eps_error, and says so
    fb = dpzo.PldAccountant(grid=0.05, eps_error=1e-6).compose(ev).epsilon(1e-6)
    assert fb.fallback and fb.reason


def test_version_is_the_librarys() -> None:
    import re

    header = (ROOT / "include" / "dpzo" / "version.h").read_text()
    want = re.search(r'#define DPZO_VERSION_STRING "([^"]+)"', header)
    assert want is not None and dpzo.__version__ == want.group(1)
    # the library's number (dpzo_version_number) is the same version: x.y.z -> x*10000+y*100+z
    major, minor, patch = (int(p) for p in want.group(1).split("."))
    number = dpzo._lib.fn("dpzo_version_number", ctypes.c_int, [])()
    assert number == major * 10000 + minor * 100 + patch
    missing = [n for n in dpzo.__all__ if not hasattr(dpzo, n)]
    assert not missing
