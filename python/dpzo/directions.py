# SPDX-License-Identifier: Apache-2.0
"""dpzo.directions: zeroth-order directions regenerated from (seed, step, query, index).

The C library's generator (``dpzo/zo_dir.h``, ``kernels/cpu``): element j of a direction
is a pure function of (seed, step, query, j), j the GLOBAL index over the tuned
parameters, so the same seed gives the same direction however the parameters are split
into tensors or shards, and the CUDA kernels reproduce it bit for bit. Nothing private is
ever drawn from it: directions are public randomness.

This module applies directions to any float32 memory the caller owns, given as an address
(``tensor.data_ptr()`` of a contiguous CPU float32 torch tensor, a NumPy array's
``ctypes.data``, a ctypes array): the first piece of the PyTorch plugin (issue 17). It
computes nothing itself; every float comes from ``dpzo_dir_fill`` / ``dpzo_dir_axpy``.
"""
from __future__ import annotations

import ctypes
import math
from typing import Any, List, Sequence

from . import _lib
from ._check import count, real
from .errors import Error

__all__ = ["Direction", "KINDS"]

KINDS = ("gaussian", "sphere", "rademacher")


class _CDir(ctypes.Structure):
    """dpzo_dir."""

    _fields_ = [("kind", ctypes.c_int), ("seed", ctypes.c_uint64), ("step", ctypes.c_uint64),
                ("query", ctypes.c_uint32), ("dim", ctypes.c_uint64),
                ("scale", ctypes.c_double), ("mult", ctypes.POINTER(ctypes.c_float)),
                ("vec", ctypes.POINTER(ctypes.c_float))]


_vp = ctypes.c_void_p
_init = _lib.fn("dpzo_dir_init", ctypes.c_int,
                [_vp, ctypes.POINTER(_CDir), ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64,
                 ctypes.c_uint32, ctypes.c_uint64, ctypes.c_double])
_at = _lib.fn("dpzo_dir_at", ctypes.c_double, [ctypes.POINTER(_CDir), ctypes.c_uint64])
_fill = _lib.fn("dpzo_dir_fill", None,
                [ctypes.POINTER(_CDir), ctypes.c_uint64, ctypes.c_size_t, _vp])
_axpy = _lib.fn("dpzo_dir_axpy", None,
                [ctypes.POINTER(_CDir), ctypes.c_uint64, ctypes.c_size_t, ctypes.c_double, _vp])
_kind_parse = _lib.fn("dpzo_dir_kind_parse", ctypes.c_int, [ctypes.c_char_p])


def _uint(name: str, value: Any, bits: int) -> int:
    v = count(name, value)  # an int in [0, 2^64)
    if v >> bits:
        raise Error(f"{name} must be in [0, 2^{bits}), got {v}")
    return v


def _alpha(alpha: Any) -> float:
    a = real("alpha", alpha)
    if not math.isfinite(a):
        raise Error(f"alpha must be finite, got {alpha!r}")
    return a


def _address(buf: Any) -> int:
    if isinstance(buf, int) and not isinstance(buf, bool):
        if buf <= 0:
            raise Error(f"an address must be positive, got {buf}")
        return buf
    ptr = getattr(buf, "data_ptr", None)  # torch.Tensor
    if callable(ptr):
        if str(getattr(buf, "dtype", "")) != "torch.float32":
            raise Error(f"a float32 tensor is needed, got {getattr(buf, 'dtype', None)}")
        if getattr(buf, "device", None) is not None and buf.device.type != "cpu":
            raise Error(f"a CPU tensor is needed here, got device {buf.device}")
        if not buf.is_contiguous():
            raise Error("a contiguous tensor is needed")
        return int(ptr())
    if isinstance(buf, ctypes.Array) and buf._type_ is ctypes.c_float:
        return ctypes.addressof(buf)
    raise Error(f"float32 memory is needed (an address, a torch tensor or a ctypes float "
                f"array), got {type(buf).__name__}")


def _length(buf: Any) -> int:
    numel = getattr(buf, "numel", None)
    if callable(numel):
        return int(numel())
    return len(buf)


def _buffer(buf: Any, n: Any) -> tuple[int, int]:
    """(address, n) of float32 memory, checked before anything is written: n defaults to
    the buffer's length and may not exceed it (a bare address has no length: n is needed)."""
    address = _address(buf)
    if n is not None:
        n = _uint("n", n, 64)
    if isinstance(buf, int):
        if n is None:
            raise Error("with a bare address, give the number of elements n")
        return address, n
    size = _length(buf)
    if n is None:
        return address, size
    if n > size:
        raise Error(f"n = {n} is more than the buffer's {size} elements")
    return address, n


class Direction:
    """One direction u in R^dim (``dpzo_dir_init``): kind "gaussian" (i.i.d. N(0, 1)),
    "sphere" (radius * z / ||z||, ``radius`` default sqrt(dim)) or "rademacher"; keyed by
    ``seed`` (64 bits), ``step`` (< 2^32) and ``query`` (< 2^32)."""

    def __init__(self, *, seed: int, step: int, query: int = 0, dim: int,
                 kind: str = "gaussian", radius: float | None = None) -> None:
        if kind not in KINDS:
            raise Error(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        self.kind = kind
        self.seed = _uint("seed", seed, 64)
        self.step = _uint("step", step, 64)  # the library refuses step >= 2^32
        self.query = _uint("query", query, 32)
        self.dim = _uint("dim", dim, 64)
        r = math.sqrt(self.dim) if radius is None else real("radius", radius)
        self._c = _CDir()
        _lib.call(_init, ctypes.byref(self._c), _kind_parse(kind.encode()), self.seed,
                  self.step, self.query, self.dim, r)

    def __getitem__(self, j: int) -> float:
        """Element j as the library gives it (a double; ``fill`` writes it as float)."""
        j = _uint("index", j, 64)
        if j >= self.dim:
            raise IndexError(f"index {j} is past the direction's {self.dim} elements")
        return float(_at(ctypes.byref(self._c), j))

    def _range(self, j0: int, n: int) -> None:
        _uint("offset", j0, 64)
        if j0 + n > self.dim:
            raise Error(f"elements [{j0}, {j0 + n}) are outside the direction's {self.dim}")

    def fill(self, j0: int, out: Any, n: int | None = None) -> None:
        """out[i] = u_{j0+i} as float32, i < n (default: all of out)."""
        address, n = _buffer(out, n)
        self._range(j0, n)
        _fill(ctypes.byref(self._c), j0, n, address)

    def axpy(self, j0: int, alpha: float, theta: Any, n: int | None = None) -> None:
        """theta[i] = float(theta[i] + alpha * u_{j0+i}), in place (``dpzo_dir_axpy``)."""
        address, n = _buffer(theta, n)
        self._range(j0, n)
        a = _alpha(alpha)
        _axpy(ctypes.byref(self._c), j0, n, a, address)

    def axpy_tensors(self, alpha: float, tensors: Sequence[Any]) -> None:
        """theta += alpha * u over several tensors, numbered in the order given (the global
        index of a tensor's first element is the number of elements before it). Every
        tensor is checked before any is updated."""
        a = _alpha(alpha)
        bufs: List[tuple[int, int]] = [_buffer(t, None) for t in tensors]
        total = sum(n for _, n in bufs)
        if total != self.dim:
            raise Error(f"the tensors hold {total} elements, the direction {self.dim}")
        j = 0
        for address, n in bufs:
            _axpy(ctypes.byref(self._c), j, n, a, address)
            j += n
