# SPDX-License-Identifier: Apache-2.0
"""dpzo._lib: loading libdpzo.so and calling it through ctypes.

Internal. Each module of the package declares the C functions it calls with :func:`fn`
and calls them with :func:`call`, which passes this thread's ``dpzo_ctx`` first and turns a
failed status into :class:`dpzo.Error` with the library's message.

Where the library is found, first match wins:

1. ``$DPZO_LIBRARY``: the path of a ``libdpzo.so``;
2. the copy installed with the package (``dpzo/lib/libdpzo.so*``, what ``pip install .`` puts
   there);
3. a build folder of the source tree the package sits in (``build*/lib/libdpzo.so``, not
   a sanitizer or fuzz build; ``build`` first, then the most recently built);
4. the system's (``ctypes.util.find_library("dpzo")``, e.g. after ``cmake --install``).

Threads: the C library is safe to call from several threads with separate contexts; each
Python thread gets its own context here, and ctypes releases the GIL during the call.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import threading
from typing import Any, Callable, Optional, Sequence

from .errors import Error

__all__ = ["lib", "fn", "call", "ctx", "library_path", "c_double_p", "c_size_t_p"]

c_double_p = ctypes.POINTER(ctypes.c_double)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)
_here = os.path.dirname(os.path.abspath(__file__))


def _plain_build(folder: str) -> bool:
    """False for sanitizer and fuzz builds: their library cannot be loaded into a Python
    that was not started with the sanitizer's runtime (the process would abort)."""
    try:
        with open(os.path.join(folder, "CMakeCache.txt"), encoding="utf-8") as f:
            cache = f.read()
    except OSError:
        return False
    return "DPZO_SANITIZE:BOOL=ON" not in cache and "DPZO_FUZZ:BOOL=ON" not in cache


def _candidates() -> list[str]:
    env = os.environ.get("DPZO_LIBRARY")
    if env:
        return [env]
    out = sorted(glob.glob(os.path.join(_here, "lib", "libdpzo.so*")))
    root = os.path.dirname(os.path.dirname(_here))  # python/dpzo -> repository root
    if os.path.isfile(os.path.join(root, "include", "dpzo", "dpzo.h")):
        builds = [p for p in glob.glob(os.path.join(root, "build*", "lib", "libdpzo.so"))
                  if _plain_build(os.path.dirname(os.path.dirname(p)))]
        # The main build first, then the most recently built.
        builds.sort(key=lambda p: (os.path.basename(os.path.dirname(os.path.dirname(p)))
                                   != "build", -os.path.getmtime(p)))
        out += builds
    found = ctypes.util.find_library("dpzo")
    if found:
        out.append(found)
    return out


def _load() -> tuple[ctypes.CDLL, str]:
    tried = _candidates()
    errors = []
    for path in tried:
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    if not tried:
        raise ImportError("dpzo: libdpzo.so not found: set DPZO_LIBRARY to its path, or "
                          "install the package with `pip install .` (README: Python)")
    raise ImportError("dpzo: libdpzo.so could not be loaded: " + "; ".join(errors))


lib, library_path = _load()

lib.dpzo_ctx_new.restype = ctypes.c_void_p
lib.dpzo_ctx_new.argtypes = []
lib.dpzo_ctx_free.restype = None
lib.dpzo_ctx_free.argtypes = [ctypes.c_void_p]
lib.dpzo_ctx_errmsg.restype = ctypes.c_char_p
lib.dpzo_ctx_errmsg.argtypes = [ctypes.c_void_p]
lib.dpzo_status_name.restype = ctypes.c_char_p
lib.dpzo_status_name.argtypes = [ctypes.c_int]


class _Ctx:
    """One dpzo_ctx, freed with its owner (the thread's local storage)."""

    def __init__(self) -> None:
        self.ptr = lib.dpzo_ctx_new()
        if not self.ptr:
            raise MemoryError("dpzo: out of memory creating a context")
        self._free = lib.dpzo_ctx_free

    def __del__(self) -> None:
        ptr, self.ptr = getattr(self, "ptr", None), None
        if ptr:
            self._free(ptr)


_local = threading.local()


def ctx() -> int:
    """This thread's dpzo_ctx (created on first use)."""
    c = getattr(_local, "ctx", None)
    if c is None:
        c = _local.ctx = _Ctx()
    return c.ptr


def fn(name: str, restype: Any, argtypes: Sequence[Any]) -> Callable[..., Any]:
    """Declares the C function `name` (its full argument list, the context included)."""
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


def check(status: int, what: Optional[str] = None) -> None:
    """Raises dpzo.Error with this thread's context message when status != DPZO_OK."""
    if status != 0:
        msg = (lib.dpzo_ctx_errmsg(ctx()) or b"").decode("utf-8", "replace")
        if not msg:
            msg = (lib.dpzo_status_name(status) or b"error").decode()
        raise Error(f"{what}: {msg}" if what else msg, status)


def call(f: Callable[..., int], *args: Any) -> None:
    """f(ctx, *args) for a function returning dpzo_status; raises dpzo.Error on failure."""
    check(f(ctx(), *args))


_steps_from_epochs = fn("dpzo_steps_from_epochs", ctypes.c_int,
                        [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_uint64,
                         ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)])


def steps_from_epochs(epochs: float, q: float = 0.0, batch: int = 0, n: int = 0) -> int:
    """Training length in epochs as steps, by the library's one rule (the CLI's --epochs):
    ceil(epochs / q) with Poisson sampling at q (n = 0); ceil(epochs n / batch) with batches
    of `batch` of `n` (exact for whole epochs). Raises dpzo.Error beyond 2^53 steps."""
    out = ctypes.c_uint64(0)
    call(_steps_from_epochs, float(epochs), float(q), int(batch), int(n), ctypes.byref(out))
    return int(out.value)
