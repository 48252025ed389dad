# SPDX-License-Identifier: Apache-2.0
"""dpzo.shortcuts: ``dpzo.epsilon`` and ``dpzo.calibrate``, the two calls of DP-SGD/DP-ZO
accounting, with the command line's arguments (``dpzo epsilon`` / ``dpzo calibrate``).

Sampling: ``sampling_rate`` (Poisson, add/remove-one) XOR ``batch_size`` with
``dataset_size`` (every step draws a batch of exactly B of the N records without
replacement, independently of the other steps; replace-one adjacency. That is what is
proven; it is not a proof for the batches of one shuffled pass, docs/audit.md 3).
Length: ``steps`` XOR ``epochs``; epochs become steps by the library's rule, as on the
command line (C dpzo_steps_from_epochs), rounded up so that never fewer steps are accounted
than the epochs run: ceil(E / q) with Poisson sampling, ceil(E N / B) with batches (exact in
integers for whole epochs).
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

from . import _lib, _structs as S
from ._check import count as _count, real as _real
from .accountants import (OrdersArg, PldAccountant, PrvAccountant, RdpAccountant,
                          _Accountant, _Tight)
from .errors import Error
from .events import (Event, GaussianEvent, PoissonSampledEvent,
                     SampledWithoutReplacementEvent, SelfComposedEvent)
from .results import Calibration, Epsilon

__all__ = ["epsilon", "calibrate"]

_vp = ctypes.c_void_p
_P = ctypes.POINTER
_d, _u64 = ctypes.c_double, ctypes.c_uint64
_cal_noise = _lib.fn("dpzo_calibrate_noise", ctypes.c_int,
                     [_vp, _d, _d, _d, _u64, _d, _P(S.RdpOptions), _P(S.Calibration)])
_cal_noise_wor = _lib.fn("dpzo_calibrate_noise_wor", ctypes.c_int,
                         [_vp, _d, _d, _u64, _u64, _u64, _d, _P(S.RdpOptions),
                          _P(S.Calibration)])
_cal_noise_pld = _lib.fn("dpzo_calibrate_noise_pld", ctypes.c_int,
                         [_vp, _d, _d, _d, _u64, _d, _P(S.PldOptions), _P(S.Calibration)])
_cal_noise_wor_pld = _lib.fn("dpzo_calibrate_noise_wor_pld", ctypes.c_int,
                             [_vp, _d, _d, _u64, _u64, _u64, _d, _P(S.PldOptions),
                              _P(S.Calibration)])

def _sampling(sampling_rate: Any, batch_size: Any,
              dataset_size: Any) -> Tuple[Optional[float], int, int]:
    """(q, 0, 0) for Poisson sampling, (None, B, N) for fixed batches."""
    if (batch_size is None) != (dataset_size is None):
        raise Error("batch_size and dataset_size go together")
    if batch_size is not None:
        if sampling_rate is not None:
            raise Error("give sampling_rate (Poisson) or batch_size and dataset_size (fixed "
                        "batches), not both")
        return None, _count("batch_size", batch_size), _count("dataset_size", dataset_size)
    if sampling_rate is None:
        raise Error("give sampling_rate (Poisson), or batch_size and dataset_size (fixed "
                    "batches)")
    return _real("sampling_rate", sampling_rate), 0, 0


def _steps(steps: Any, epochs: Any, q: Optional[float], batch: int, n: int) -> int:
    if steps is not None and epochs is not None:
        raise Error("give steps or epochs, not both (epochs E means ceil(E N / B) steps, or "
                    "ceil(E / q) with sampling_rate)")
    if steps is not None:
        return _count("steps", steps)
    if epochs is None:
        raise Error("give steps or epochs")
    # the library's one rule, as the CLI's --epochs (C dpzo_steps_from_epochs)
    if q is None:
        return _lib.steps_from_epochs(_real("epochs", epochs), 0.0, batch, n)
    return _lib.steps_from_epochs(_real("epochs", epochs), q, 0, 0)


def _accountant(accountant: Any, orders: OrdersArg, grid: Any, eps_error: Any) -> _Accountant:
    if accountant == "rdp":
        if grid is not None or eps_error is not None:
            raise Error(f"{'grid' if grid is not None else 'eps_error'} needs accountant "
                        "'pld' or 'prv'")
        return RdpAccountant(orders)
    if accountant == "pld":
        return PldAccountant(grid, eps_error=eps_error, orders=orders)
    if accountant == "prv":
        if grid is not None:
            raise Error("grid is for accountant 'pld' (prv derives its mesh from eps_error)")
        return PrvAccountant(0.01 if eps_error is None else eps_error, orders=orders)
    raise Error(f"accountant must be 'rdp', 'pld' or 'prv', got {accountant!r}")


def epsilon(*, noise_multiplier: float, sampling_rate: Optional[float] = None,
            steps: Optional[int] = None, delta: float, accountant: str = "rdp",
            batch_size: Optional[int] = None, dataset_size: Optional[int] = None,
            epochs: Optional[float] = None, orders: OrdersArg = None,
            grid: Optional[float] = None, eps_error: Optional[float] = None) -> Epsilon:
    """epsilon(delta) of DP-SGD / DP-ZO training: ``steps`` Gaussian steps with noise
    multiplier ``noise_multiplier`` on Poisson samples of rate ``sampling_rate`` (or batches
    of ``batch_size`` of ``dataset_size`` drawn without replacement).

    ``.epsilon`` is a proven upper bound; with ``accountant="pld"`` or ``"prv"`` also
    ``.lower`` a proven lower bound. The same number as ``dpzo epsilon ... --json``.
    ``orders``: RDP orders (None continuous, "opacus", "tf", "dp_accounting" or a list);
    ``grid``: PLD's discretisation; ``eps_error``: PRV's error target (PLD: fall back to
    RDP above it).

    >>> dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256/60000, steps=14063,
    ...              delta=1e-5).epsilon  # doctest: +SKIP
    2.5966419148568232
    """
    s = _real("noise_multiplier", noise_multiplier)
    d = _real("delta", delta)
    q, batch, n = _sampling(sampling_rate, batch_size, dataset_size)
    t = _steps(steps, epochs, q, batch, n)
    acc = _accountant(accountant, orders, grid, eps_error)
    step: Event = (PoissonSampledEvent(q, GaussianEvent(s)) if q is not None
                   else SampledWithoutReplacementEvent(n, batch, GaussianEvent(s)))
    acc._entries.append((SelfComposedEvent(step, t), 1))  # built and checked by the query
    return acc.epsilon(d)


def calibrate(*, epsilon: float, delta: float, sampling_rate: Optional[float] = None,
              steps: Optional[int] = None, accountant: str = "rdp",
              batch_size: Optional[int] = None, dataset_size: Optional[int] = None,
              epochs: Optional[float] = None, tolerance: Optional[float] = None,
              orders: OrdersArg = None, grid: Optional[float] = None,
              eps_error: Optional[float] = None) -> Calibration:
    """The smallest noise multiplier whose epsilon at ``delta`` is at most ``epsilon``.

    ``.noise_multiplier`` is certified: the accountant's proven epsilon there (``.epsilon``)
    is at most the target; ``.tight_to``, one relative ``tolerance`` below (default 1e-6,
    1e-4 with pld or prv), misses it. The same as ``dpzo calibrate ... --json`` (C
    dpzo_calibrate_noise, _wor, _pld, _wor_pld).
    """
    eps = _real("epsilon", epsilon)
    d = _real("delta", delta)
    q, batch, n = _sampling(sampling_rate, batch_size, dataset_size)
    t = _steps(steps, epochs, q, batch, n)
    tol = 0.0
    if tolerance is not None:
        tol = _real("tolerance", tolerance)
        if not (tol > 0.0):  # the library reads <= 0 as "default": refuse, don't substitute
            raise Error(f"tolerance must be > 0, got {tol!r}")
    acc = _accountant(accountant, orders, grid, eps_error)
    c = S.Calibration()
    out = ctypes.byref(c)
    opts = ctypes.byref(acc._opts)  # type: ignore[attr-defined]
    tight = isinstance(acc, _Tight)
    if q is None:
        _lib.call(_cal_noise_wor_pld if tight else _cal_noise_wor, eps, d, batch, n, t, tol,
                  opts, out)
    else:
        _lib.call(_cal_noise_pld if tight else _cal_noise, eps, d, q, t, tol, opts, out)
    return Calibration(noise_multiplier=c.value, epsilon=c.epsilon,
                       lower=c.epsilon_lower if tight else None,
                       order=None if tight else c.order,
                       tight_to=None if c.other_side != c.other_side else c.other_side,
                       evaluations=c.evaluations, accountant=acc.name, delta=d, steps=t)
