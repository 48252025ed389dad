# SPDX-License-Identifier: Apache-2.0
"""dpzo.accountants: the RDP, PLD and PRV accountants over the event algebra.

``acc.compose(event, count)`` records what is released (chainable); ``acc.epsilon(delta)``
and ``acc.delta(epsilon)`` build the C event of everything composed so far and ask the
library. What each answer proves:

* :class:`RdpAccountant`: ``epsilon`` is computed from the certified (MPFR, outward
  rounding) RDP upper bound at the optimal order, converted with upward rounding: a proven
  upper bound (dpzo_event_epsilon). There is no lower bound (``lower`` is ``None``).
* :class:`PldAccountant`: privacy loss distributions, pessimistic and optimistic
  discretisations composed by FFT with bounded errors: ``[lower, epsilon]`` contains the
  true epsilon (dpzo_pld_epsilon).
* :class:`PrvAccountant`: the PRV accountant (Gopi-Lee-Wutschitz 2021) with the mesh chosen
  from ``eps_error``: ``[lower, epsilon]`` contains the true epsilon.

An event containing dpzo.LmoEvent is accounted by dpzo.lmo (C dpzo_lmo_epsilon or
dpzo_lmo_pld_epsilon) when the ledger is one LMO release repeated, bare or sampled.
"""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from . import _lib, _structs as S
from ._check import count as _count, real as _real
from .errors import Error
from .events import (ComposedEvent, Event, LmoEvent, NoOpEvent, PoissonSampledEvent,
                     SampledWithoutReplacementEvent, SelfComposedEvent, build, c_event,
                     contains_lmo, free)
from .results import Delta, Epsilon

__all__ = ["RdpAccountant", "PldAccountant", "PrvAccountant"]

_vp = ctypes.c_void_p
_P = ctypes.POINTER
_rdp_default = _lib.fn("dpzo_rdp_options_default", S.RdpOptions, [])
_grid_parse = _lib.fn("dpzo_order_grid_parse", ctypes.c_int,
                      [_vp, ctypes.c_char_p, _P(ctypes.c_int)])
_event_epsilon = _lib.fn("dpzo_event_epsilon", ctypes.c_int,
                         [_vp, _vp, ctypes.c_double, _P(S.RdpOptions), _P(S.DpResult)])
_event_delta = _lib.fn("dpzo_event_delta", ctypes.c_int,
                       [_vp, _vp, ctypes.c_double, _P(S.RdpOptions), _P(S.DpResult)])
_pld_default = _lib.fn("dpzo_pld_options_default", None, [_P(S.PldOptions)])
_pld_epsilon = _lib.fn("dpzo_pld_epsilon", ctypes.c_int,
                       [_vp, _vp, ctypes.c_double, _P(S.PldOptions), _P(S.PldResult)])
_pld_delta = _lib.fn("dpzo_pld_delta", ctypes.c_int,
                     [_vp, _vp, ctypes.c_double, _P(S.PldOptions), _P(S.PldResult)])

OrdersArg = Union[None, str, Sequence[float]]
_A = TypeVar("_A", bound="_Accountant")
_R = TypeVar("_R")


def rdp_options(orders: OrdersArg = None, conversion: str = "improved",
                alpha_max: Optional[float] = None) -> Tuple[S.RdpOptions, Any]:
    """A dpzo_rdp_options for the arguments, and the orders array it points to (keep it
    alive as long as the options)."""
    opts = _rdp_default()
    keep = None
    if not isinstance(conversion, str) or conversion not in S.CONVERSIONS:
        raise Error(f"conversion must be 'improved' or 'standard', got {conversion!r}")
    opts.conversion = S.CONVERSIONS[conversion]
    if alpha_max is not None:
        opts.alpha_max = _real("alpha_max", alpha_max)
    if orders is None:
        pass
    elif isinstance(orders, str):
        g = ctypes.c_int()
        _lib.call(_grid_parse, orders.encode(), ctypes.byref(g))
        opts.grid = g.value
    else:
        if isinstance(orders, (bytes, bytearray)) or not hasattr(orders, "__iter__"):
            raise Error(f"orders must be None, a grid name or a sequence of orders, "
                        f"got {orders!r}")
        vals = [_real(f"orders[{i}]", a) for i, a in enumerate(orders)]
        keep = (ctypes.c_double * max(len(vals), 1))(*vals)
        opts.grid = S.ORDERS_CUSTOM
        opts.orders = ctypes.cast(keep, _P(ctypes.c_double))
        opts.n_orders = len(vals)
    return opts, keep


class _Accountant:
    """What the three accountants share: the ledger and the LMO route."""

    name = ""
    _opts: Any  # the C options struct of the subclass's queries

    def __init__(self) -> None:
        self._entries: List[Tuple[Event, int]] = []

    def compose(self: _A, event: Event, count: int = 1) -> _A:
        """Adds ``count`` repetitions of ``event`` to the ledger; returns the accountant.
        The event is built once here so that a value the library refuses raises now."""
        if not isinstance(event, Event):
            raise Error(f"event must be a dpzo event, got {event!r}")
        n = _count("count", count)
        if n > 1 << 53:
            raise Error(f"composition count {n} exceeds 2^53")
        if not contains_lmo(event):
            free(build(event))
        self._entries.append((event, n))
        return self

    def epsilon(self, delta: float) -> Epsilon:
        raise NotImplementedError

    def delta(self, epsilon: float) -> Delta:
        raise NotImplementedError

    @property
    def ledger(self) -> ComposedEvent:
        """Everything composed so far, as one ComposedEvent."""
        return ComposedEvent([e if n == 1 else SelfComposedEvent(e, n) for e, n in self._entries])

    def _ask(self, fn: Any, x: float, r: _R) -> _R:
        """fn(the composed C event, x, this accountant's options, &r): one query."""
        with c_event(self._event()) as ptr:
            _lib.call(fn, ptr, x, ctypes.byref(self._opts), ctypes.byref(r))
        return r

    def _event(self) -> Event:
        """The event a query accounts: the single entry itself when there is one."""
        entries = list(self._entries)
        if not entries:
            return NoOpEvent()
        if len(entries) == 1:
            e, n = entries[0]
            return e if n == 1 else SelfComposedEvent(e, n)
        return ComposedEvent([e if n == 1 else SelfComposedEvent(e, n) for e, n in entries])

    def _lmo_shape(self) -> Optional[Tuple[LmoEvent, str, float, int, int, int]]:
        """(lmo event, sampling, q, batch, n, steps) when the ledger holds LMO releases,
        None when it holds none; dpzo.Error when it mixes them with anything else."""
        entries = list(self._entries)
        if not any(contains_lmo(e) for e, _ in entries):
            return None
        inner: Optional[Event] = None
        steps = 0
        for e, n in entries:
            while isinstance(e, SelfComposedEvent):
                n *= e.count
                e = e.event
            ok = isinstance(e, LmoEvent) or (
                isinstance(e, (PoissonSampledEvent, SampledWithoutReplacementEvent))
                and isinstance(e.event, LmoEvent))
            if not ok or (inner is not None and e != inner):
                raise Error("unsupported: an LMO event is accounted only alone, as "
                            "SelfComposedEvent(LmoEvent | PoissonSampledEvent(q, LmoEvent) | "
                            "SampledWithoutReplacementEvent(n, b, LmoEvent), T); the ledger "
                            f"holds {self.ledger!r}", 3)
            inner, steps = e, steps + n
        assert inner is not None
        if isinstance(inner, LmoEvent):
            return inner, "none", 1.0, 0, 0, steps
        if isinstance(inner, PoissonSampledEvent):
            return inner.event, "poisson", inner.sampling_probability, 0, 0, steps  # type: ignore[return-value]
        assert isinstance(inner, SampledWithoutReplacementEvent)
        return (inner.event, "wor", inner.sample_size / inner.source_dataset_size  # type: ignore[return-value]
                if inner.source_dataset_size else 0.0, inner.sample_size,
                inner.source_dataset_size, steps)

    def _lmo_epsilon(self, delta: float, **options: Any) -> Optional[Epsilon]:
        shape = self._lmo_shape()
        if shape is None:
            return None
        from .lmo import _lmo_epsilon

        ev, sampling, q, batch, n, steps = shape
        r = _lmo_epsilon(ev.lmo, ev.sensitivity, sampling, q, batch, n, steps, delta,
                         self.name, **options)
        if not isinstance(r, Epsilon):
            raise AssertionError(f"dpzo.lmo._lmo_epsilon returned {r!r}")
        return r

    def _no_lmo_delta(self) -> None:
        if self._lmo_shape() is not None:
            raise Error("unsupported: delta(epsilon) of an LMO event (the library accounts "
                        "LMO noise as epsilon(delta) only)", 3)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._options_repr()}, ledger of {len(self._entries)})"

    def _options_repr(self) -> str:
        return ""


class RdpAccountant(_Accountant):
    """The RDP accountant with certified bounds.

    ``orders``: ``None`` optimises the order continuously in (1, alpha_max] (dpzo's
    default); ``"opacus"``, ``"tf"`` or ``"dp_accounting"`` reproduce those libraries' order
    grids exactly; or an explicit sequence of orders. ``conversion``: ``"improved"``
    (Balle et al. 2020, default) or ``"standard"`` (Mironov 2017). ``alpha_max``: the end of
    the continuous search (default 1e5).
    """

    name = "rdp"

    def __init__(self, orders: OrdersArg = None, conversion: str = "improved",
                 alpha_max: Optional[float] = None) -> None:
        super().__init__()
        self._opts, self._keep = rdp_options(orders, conversion, alpha_max)
        self._orders = orders if orders is None or isinstance(orders, str) else tuple(orders)
        self._conversion = conversion

    def _options_repr(self) -> str:
        return f"orders={self._orders!r}, conversion={self._conversion!r}"

    def epsilon(self, delta: float) -> Epsilon:
        """The proven epsilon upper bound at ``delta`` (0 < delta < 1)."""
        d = _real("delta", delta)
        lmo = self._lmo_epsilon(d, orders=self._orders, conversion=self._conversion)
        if lmo is not None:
            return lmo
        r = self._ask(_event_epsilon, d, S.DpResult())
        return Epsilon(epsilon=r.epsilon, lower=None, estimate=r.epsilon_estimate,
                       delta=r.delta, accountant="rdp", order=r.order, fallback=False,
                       reason=_rdp_reason(r))

    def delta(self, epsilon: float) -> Delta:
        """The proven delta upper bound at ``epsilon`` (>= 0)."""
        e = _real("epsilon", epsilon)
        self._no_lmo_delta()
        r = self._ask(_event_delta, e, S.DpResult())
        return Delta(delta=r.delta, lower=None, estimate=r.delta_estimate, epsilon=r.epsilon,
                     accountant="rdp", order=r.order, fallback=False, reason=_rdp_reason(r))


def _rdp_reason(r: S.DpResult) -> str:
    notes = []
    if r.order_at_edge:
        notes.append("the optimal order is at the edge of the allowed orders")
    if r.rounding > 0.0:
        notes.append(f"sigma rounded down / q up by <= {r.rounding:.2g} relative (over 4096 "
                     "distinct sampled Gaussians): a dominating composition, still proven")
    return "; ".join(notes)


class _Tight(_Accountant):
    _method = S.PLD_CONNECT_DOTS

    def _setup(self, memory_limit: Optional[int], orders: OrdersArg) -> None:
        self._opts = S.PldOptions()
        _pld_default(ctypes.byref(self._opts))
        self._opts.method = self._method
        if memory_limit is not None:
            m = _count("memory_limit", memory_limit)
            if m == 0:
                raise Error("memory_limit must be at least 1 byte, got 0")
            self._opts.memory_limit = min(m, (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1)
        self._rdp = None
        if orders is not None:
            self._rdp, self._keep = rdp_options(orders)
            self._opts.rdp = ctypes.pointer(self._rdp)

    def _reason(self, r: S.PldResult) -> str:
        return bytes(r.reason).split(b"\0", 1)[0].decode("utf-8", "replace")

    def epsilon(self, delta: float) -> Epsilon:
        """``[lower, epsilon]`` contains the true epsilon at ``delta`` (0 < delta < 1)."""
        d = _real("delta", delta)
        lmo = self._lmo_epsilon(d, **self._lmo_options())
        if lmo is not None:
            return lmo
        r = self._ask(_pld_epsilon, d, S.PldResult())
        return Epsilon(epsilon=r.epsilon_upper, lower=r.epsilon_lower,
                       estimate=r.epsilon_estimate, delta=d, accountant=self.name,
                       order=None, fallback=bool(r.fallback), reason=self._reason(r))

    def delta(self, epsilon: float) -> Delta:
        """``[lower, delta]`` contains the true delta at ``epsilon`` (>= 0)."""
        e = _real("epsilon", epsilon)
        self._no_lmo_delta()
        r = self._ask(_pld_delta, e, S.PldResult())
        return Delta(delta=r.delta_upper, lower=r.delta_lower, estimate=r.delta_estimate,
                     epsilon=e, accountant=self.name, order=None, fallback=bool(r.fallback),
                     reason=self._reason(r))

    def _lmo_options(self) -> Dict[str, Any]:
        return {}


class PldAccountant(_Tight):
    """The PLD accountant: ``grid`` is the loss discretisation (None: 1e-4, coarsened by
    powers of two where a query would not fit ``memory_limit``, the result's ``reason`` says
    so; smaller is tighter and slower), ``memory_limit`` the bytes a query may hold at once
    (default 2 GiB; a query over it at a grid given is refused with the size it needs). ``eps_error`` > 0: consult the RDP
    accountant when the interval is wider (``fallback``); ``orders``: the RDP orders for
    the tilt and that fallback (as RdpAccountant's)."""

    name = "pld"
    _method = S.PLD_CONNECT_DOTS

    def __init__(self, grid: Optional[float] = None, memory_limit: Optional[int] = None, *,
                 eps_error: Optional[float] = None, orders: OrdersArg = None) -> None:
        super().__init__()
        self._setup(memory_limit, orders)
        if grid is not None:
            g = _real("grid", grid)
            if g == 0.0:  # the library reads 0 as "default": refuse it rather than substitute
                raise Error("grid must be in (0, 1], got 0")
            self._opts.grid = g
            self._opts.ladder = 1  # no finer grid gives a looser end (docs/accountant.md 6.5)
        if eps_error is not None:
            self._opts.eps_error = _real("eps_error", eps_error)

    def _options_repr(self) -> str:
        return f"grid={self._opts.grid or None!r}"

    def _lmo_options(self) -> Dict[str, Any]:
        return {"grid": self._opts.grid} if self._opts.grid > 0.0 else {}


class PrvAccountant(_Tight):
    """The PRV accountant (Gopi-Lee-Wutschitz 2021): ``eps_error`` the epsilon error target
    (default 0.01), ``delta_error`` the delta error (default 1e-3 of delta; the mesh is
    solved for ``eps_error`` at it when given, else at 1e-13, the same at every delta, so
    that epsilon never rises with delta: below delta 1e-10 the interval is then wider),
    ``memory_limit`` as for PldAccountant, except that a query whose mesh does not fit it
    uses the finest mesh that does (the interval is then wider than ``eps_error``)."""

    name = "prv"
    _method = S.PLD_PRV

    def __init__(self, eps_error: float = 0.01, delta_error: Optional[float] = None,
                 memory_limit: Optional[int] = None, *, orders: OrdersArg = None) -> None:
        super().__init__()
        self._setup(memory_limit, orders)
        e = _real("eps_error", eps_error)
        if e == 0.0:  # the library reads 0 as "default": refuse it rather than substitute
            raise Error("eps_error must be > 0, got 0")
        self._opts.eps_error = e
        if delta_error is not None:
            de = _real("delta_error", delta_error)
            if de == 0.0:
                raise Error("delta_error must be in (0, 1), got 0")
            self._opts.delta_error = de

    def _options_repr(self) -> str:
        return f"eps_error={self._opts.eps_error!r}"

    def _lmo_epsilon(self, delta: float, **options: Any) -> Optional[Epsilon]:
        if self._lmo_shape() is not None:
            raise Error("unsupported: the PRV accountant has no LMO analysis; use "
                        "RdpAccountant or PldAccountant", 3)
        return None
