# SPDX-License-Identifier: Apache-2.0
"""dpzo._check: Python-side type checks before a value reaches C.

Internal. The C library checks domains (ranges, NaN) and names the bad value; these
checks catch what C cannot see: a bool or a string passed as a number, a float or a
negative number passed as a count (a count is converted to an unsigned C integer).
"""
from __future__ import annotations

import numbers
from typing import Any

from .errors import Error

__all__ = ["real", "count", "UINT64_MAX"]

UINT64_MAX = (1 << 64) - 1


def real(name: str, value: Any) -> float:
    """value as a float: an int or float (numpy's too), never a bool or a string."""
    if type(value) is float:  # the common case, first
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Error(f"{name} must be a real number, got {value!r}")
    return float(value)


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
