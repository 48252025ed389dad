# SPDX-License-Identifier: Apache-2.0
"""dpzo.directions: the library's keyed directions on caller-owned float32 memory."""
from __future__ import annotations

import ctypes
import struct

import pytest

import dpzo
from dpzo import _lib
from dpzo.directions import Direction


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


class _Ctr(ctypes.Structure):
    _fields_ = [("v", ctypes.c_uint32 * 4)]


def test_philox_known_answers() -> None:
    """Random123's known-answer vectors for Philox4x32-10 (kat_vectors), through the
    library the directions come from."""
    f = _lib.fn("dpzo_philox4x32_10", _Ctr, [_Ctr, ctypes.c_uint32, ctypes.c_uint32])
    kat = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
           ((0xffffffff,) * 4, (0xffffffff,) * 2,
            (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
           ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
            (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in kat:
        c = _Ctr()
        c.v[:] = ctr
        assert tuple(f(c, *key).v) == want


def test_rademacher_is_the_documented_philox_stream() -> None:
    """Element j of a Rademacher direction, through Direction's ctypes struct, is -1 iff bit
    31 of word j & 3 of Philox4x32-10 (KAT-checked above) is set, with key (seed low, seed
    high) and counter (j >> 2 low, j >> 34, step, query) (kernels/cpu/philox.c section 2):
    a wrong field offset in the struct, or a seed/step/query mixed up, changes elements."""
    f = _lib.fn("dpzo_philox4x32_10", _Ctr, [_Ctr, ctypes.c_uint32, ctypes.c_uint32])
    seed, step, query = 0x0123_4567_89AB_CDEF, 0xDEAD_BEEF, 0x1357_9BDF
    u = Direction(seed=seed, step=step, query=query, dim=1 << 40, kind="rademacher")
    m32 = 0xFFFF_FFFF
    for j in (0, 1, 2, 3, 4, 7, 1001, (1 << 34) + 5, (1 << 40) - 1):
        c = _Ctr()
        c.v[:] = ((j >> 2) & m32, j >> 34, step, query)
        w = f(c, seed & m32, seed >> 32).v[j & 3]
        assert u[j] == (-1.0 if w >> 31 else 1.0), j


@pytest.mark.parametrize("kind", ["gaussian", "sphere", "rademacher"])
def test_split_invariance(kind: str) -> None:
    """The same floats however [0, d) is cut (unaligned cuts included) and equal to the
    library's element-wise value rounded to float."""
    d = 1003
    u = Direction(seed=0x1234_5678_9ABC_DEF0, step=7, query=2, dim=d, kind=kind)
    whole = (ctypes.c_float * d)()
    u.fill(0, whole)
    assert all(whole[j] == f32(u[j]) for j in range(d))
    for cuts in ([1, 2, 3, 500, 1003], [5, 6, 997, 1003], [1003]):
        got, j = [], 0
        for c in cuts:
            part = (ctypes.c_float * (c - j))()
            u.fill(j, part)
            got += list(part)
            j = c
        assert got == list(whole)
    if kind == "rademacher":
        assert set(whole) == {-1.0, 1.0}
    if kind == "sphere":
        assert abs(sum(x * x for x in whole) / d - 1.0) < 1e-5


def test_keys_matter() -> None:
    d = 64
    a = (ctypes.c_float * d)()
    Direction(seed=1, step=0, dim=d).fill(0, a)
    for kw in ({"seed": 2, "step": 0}, {"seed": 1, "step": 1}, {"seed": 1, "step": 0, "query": 1}):
        b = (ctypes.c_float * d)()
        Direction(dim=d, **kw).fill(0, b)
        assert list(a) != list(b)


def test_axpy_matches_its_definition() -> None:
    """theta[i] = float(theta[i] + alpha * u_i) in double, u_i the float element."""
    d = 257
    u = Direction(seed=99, step=3, dim=d)
    theta = (ctypes.c_float * d)(*[f32(0.001 * i - 0.1) for i in range(d)])
    before = list(theta)
    uf = (ctypes.c_float * d)()
    u.fill(0, uf)
    u.axpy(0, 1e-3, theta)
    assert list(theta) == [f32(t + 1e-3 * x) for t, x in zip(before, uf)]


def test_torch_tensors_split_anyhow() -> None:
    """The same update on one flat tensor and on the same parameters cut into tensors."""
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    flat = torch.randn(1000, generator=g, dtype=torch.float32)
    parts = [flat[:10].clone(), flat[10:11].clone(), flat[11:600].clone().reshape(19, 31),
             flat[600:].clone()]
    u = Direction(seed=5, step=11, query=1, dim=1000)
    u.axpy_tensors(-2.5e-3, [flat])
    u.axpy_tensors(-2.5e-3, parts)
    assert torch.equal(torch.cat([p.reshape(-1) for p in parts]), flat)


def test_refusals() -> None:
    torch = pytest.importorskip("torch")
    u = Direction(seed=1, step=0, dim=8)
    for bad in (torch.zeros(8, dtype=torch.float64), torch.zeros(16)[::2], [0.0] * 8):
        with pytest.raises(dpzo.Error):
            u.axpy(0, 1.0, bad)
    with pytest.raises(dpzo.Error):
        u.fill(4, (ctypes.c_float * 8)())          # past the end
    with pytest.raises(dpzo.Error):
        u.axpy_tensors(1.0, [torch.zeros(7)])      # 7 of 8 elements
    with pytest.raises(dpzo.Error):
        u.axpy(0, float("nan"), torch.zeros(8))
    with pytest.raises(dpzo.Error):
        Direction(seed=1, step=1 << 32, dim=8)     # the counter holds 32 bits of step
    with pytest.raises(dpzo.Error):
        Direction(seed=1, step=0, dim=0)
    with pytest.raises(dpzo.Error):
        Direction(seed=1, step=0, dim=8, kind="uniform")
    with pytest.raises(dpzo.Error):
        u.fill(0, 12345)                           # an address without n
    with pytest.raises(IndexError):
        u[8]


def test_n_past_the_buffer_is_refused() -> None:
    """An explicit n larger than the buffer given would write past its end: refused, and
    nothing written."""
    torch = pytest.importorskip("torch")
    u = Direction(seed=1, step=0, dim=8)
    small = (ctypes.c_float * 4)()
    with pytest.raises(dpzo.Error):
        u.fill(0, small, 8)
    t = torch.zeros(4)
    with pytest.raises(dpzo.Error):
        u.axpy(0, 1.0, t, 8)
    assert list(small) == [0.0] * 4 and torch.equal(t, torch.zeros(4))
    for bad_n in (2.5, -1, True):
        with pytest.raises(dpzo.Error):
            u.fill(0, small, bad_n)


def test_axpy_tensors_checks_every_tensor_before_updating() -> None:
    """A bad tensor anywhere in the list leaves the good ones before it untouched (no
    half-applied update)."""
    torch = pytest.importorskip("torch")
    u = Direction(seed=1, step=0, dim=8)
    good = torch.zeros(4)
    with pytest.raises(dpzo.Error):
        u.axpy_tensors(1.0, [good, torch.zeros(4, dtype=torch.float64)])
    assert torch.equal(good, torch.zeros(4))
