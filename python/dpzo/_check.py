# SPDX-License-Identifier: Apache-2.0
"""dpzo._check: Python-side type checks before a value reaches C.

Internal. The C library checks domains (ranges, NaN) and names the bad value; these
checks catch what C cannot see: a bool or a string passed as a number, a float or a
negative number passed as a count (a count is converted to an unsigned C integer), a
number too large for a double, a NUL character that C would read as the end of a path.
"""
from __future__ import annotations

import numbers
import os
import tempfile
from typing import Any

from .errors import Error

__all__ = ["real", "count", "path", "c_text", "output_folder", "UINT64_MAX"]

UINT64_MAX = (1 << 64) - 1


def output_folder(name: str, folder: Any) -> str:
    """Checks, before the work, that folder can take the files a run will write there
    (issue 28, item 6): it is made when missing (as the writer would make it), then a
    one-byte probe file is written in it and removed. Nothing else in it is touched. Raises
    Error naming the folder; returns it as a string."""
    f = os.fspath(folder)
    if isinstance(f, bytes):
        f = os.fsdecode(f)
    try:
        os.makedirs(f, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dpzo-probe-", dir=f)
        try:
            os.write(fd, b"\0")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise Error(f"{name} {f!r} cannot be written: {e.strerror or e} (checked before the "
                    "first step; nothing was trained)") from None
    return f


def real(name: str, value: Any) -> float:
    """value as a float: an int or float (numpy's too), never a bool or a string."""
    if type(value) is float:  # the common case, first
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Error(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except OverflowError:  # 10**400, Fraction(10**400): beyond the largest double
        raise Error(f"{name} is too large for a double (|x| < 1.8e308), got "
                    f"{_short(value)}") from None


def _short(value: Any) -> str:
    try:
        r = repr(value)
    except ValueError:  # an int beyond sys.get_int_max_str_digits()
        return f"an integer of {int(value).bit_length()} bits"
    return r if len(r) <= 60 else f"{r[:28]}...{r[-28:]} ({len(r)} characters)"


def path(name: str, value: Any) -> bytes:
    """A file path (str, bytes or os.PathLike) as the bytes C reads, NUL refused: C would
    read the path only up to it (``Profile.load("a.json\\0x")`` loaded a.json)."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise Error(f"{name} must be a string or path, got {value!r}")
    b = os.fsencode(value)
    if b"\0" in b:
        raise Error(f"{name} {value!r} contains a NUL character (C would read only the "
                    f"part before it)")
    return b


def c_text(name: str, value: bytes) -> bytes:
    """Text for C (UTF-8 bytes), NUL refused: C would read only the part before it."""
    at = value.find(b"\0")
    if at >= 0:
        raise Error(f"{name} contains a NUL character at position {at} (C would read only "
                    f"the part before it)")
    return value


def count(name: str, value: Any) -> int:
    """value as a non-negative int below 2^64: an int (numpy's too), never a bool or a float."""
    if type(value) is int and 0 <= value <= UINT64_MAX:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Error(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < 0 or v > UINT64_MAX:
        raise Error(f"{name} must be an integer in [0, 2^64), got {v}")
    return v
