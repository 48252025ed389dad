# SPDX-License-Identifier: Apache-2.0
"""dpzo.errors: the one exception type of the package.

Every failure of a dpzo call raises :class:`Error` (a :class:`ValueError`) carrying the C
library's message, which names the bad value. No call returns NaN, a negative epsilon or a
silently clamped value instead.
"""
from __future__ import annotations

__all__ = ["Error"]

# dpzo_status codes (include/dpzo/status.h).
STATUS_NAMES = {
    1: "invalid argument",
    2: "out of memory",
    3: "unsupported",
    4: "no convergence",
    5: "parse error",
    6: "infeasible",
    7: "interrupted",
}


class Error(ValueError):
    """A dpzo call failed.

    ``status`` is the C library's status code (``dpzo_status``, 0 never appears here) and
    ``status_name`` its short name, e.g. ``"invalid argument"``; ``str(error)`` is the
    library's message.
    """

    status: int
    status_name: str

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = int(status)
        self.status_name = STATUS_NAMES.get(self.status, "error")
