# SPDX-License-Identifier: Apache-2.0
"""dpzo._lmo_noise: the LMO-DP noise and its accounting, the part of :mod:`dpzo.lmo` that
:mod:`dpzo.profiles` and :mod:`dpzo.audit` build on (a profile holds an :class:`Lmo`).

:mod:`dpzo.lmo` adds the offline noise search, whose winner becomes a profile, and re-exports
every name defined here: import them from ``dpzo.lmo`` (or ``dpzo``), not from this module.
The search sits above the profiles and the profiles above the noise, so no module imports
one that imports it (scripts/check_layers.py). The docstring of :mod:`dpzo.lmo` describes
the noise.
"""
from __future__ import annotations

import ctypes
import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from . import _lib, _structs as _S
from ._check import count, real
from ._lib import call, fn
from .errors import Error

_dpzo_free = _lib.fn("dpzo_free", None, [ctypes.c_void_p])


def _c_free(ptr: Any) -> None:
    """Frees memory the C library allocated for us (dpzo_free: the library's allocator)."""
    if ptr:
        _dpzo_free(ptr)


# ---- argument checks shared by profiles.py and audit.py --------------------------------

def _real(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """A real number (dpzo._check.real), NaN refused (infinity only if allowed)."""
    v = real(name, value)
    if math.isnan(v):
        raise Error(f"{name} must be a number, got nan")
    if math.isinf(v) and not allow_inf:
        raise Error(f"{name} must be finite, got {v!r}")
    return v


def _count(name: str, value: Any, *, minimum: int = 0) -> int:
    """A count (dpzo._check.count: an int in [0, 2^64)) of at least minimum."""
    v = count(name, value)
    if v < minimum:
        raise Error(f"{name} must be >= {minimum}, got {v}")
    return v


def _uint(name: str, value: Any, *, minimum: int = 0) -> int:
    """A count passed as a C unsigned int (32 bits): larger values are refused here, not
    wrapped."""
    v = _count(name, value, minimum=minimum)
    if v >= 2 ** 32:
        raise Error(f"{name} must be below 2^32, got {v}")
    return v


def _choice(name: str, value: Any, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise Error(f"{name} must be one of {', '.join(repr(o) for o in options)}, "
                    f"got {value!r}")
    return value


def _text(name: str, value: Any) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise Error(f"{name} must be a string or path, got {value!r}")
    return os.fspath(value)


def _sampling(sampling_rate: Any, batch_size: Any, dataset_size: Any, steps: Any,
              epochs: Any, *, default_steps: Optional[int] = 1
              ) -> tuple[str, float, int, int, int]:
    """(sampling, q, batch, n, steps) from the keyword arguments, with the CLI's rules:
    Poisson rate XOR batch_size with dataset_size (neither: no sampling); steps XOR
    epochs, epochs -> steps by the library's rule (dpzo_steps_from_epochs): ceil(epochs/q)
    (Poisson), ceil(epochs*N/B) (batches), ceil(epochs) without sampling."""
    if sampling_rate is not None and (batch_size is not None or dataset_size is not None):
        raise Error("give sampling_rate (Poisson) or batch_size with dataset_size (batches "
                    "drawn without replacement), not both")
    if (batch_size is None) != (dataset_size is None):
        raise Error("batch_size and dataset_size go together")
    if steps is not None and epochs is not None:
        raise Error("give steps or epochs, not both")
    if sampling_rate is not None:
        kind, q, b, n = "poisson", _real("sampling_rate", sampling_rate), 0, 0
    elif batch_size is not None:
        b = _count("batch_size", batch_size, minimum=1)
        n = _count("dataset_size", dataset_size, minimum=1)
        if b > n:
            raise Error(f"batch_size must be at most dataset_size, got {b} > {n}")
        kind, q = "wor", b / n
    else:
        kind, q, b, n = "none", 1.0, 0, 0
    if epochs is not None:
        e = _real("epochs", epochs)
        if not (e > 0):  # the library accepts 0 epochs (0 steps); an LMO run needs one
            raise Error(f"epochs must be > 0, got {e!r}")
        # the library's rule (dpzo_steps_from_epochs), as the CLI's --epochs; it refuses a
        # rate outside (0, 1] and more than 2^53 steps, naming the value
        s = _lib.steps_from_epochs(e, q if kind != "wor" else 0.0, b, n)
    elif steps is not None:
        s = _count("steps", steps, minimum=1)
    elif default_steps is None:
        raise Error("give steps or epochs")
    else:
        s = default_steps
    return kind, q, b, n, s


# ---- the noise -----------------------------------------------------------------------

class _CLmo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in (
        "gamma_weight", "gamma_shape", "gamma_scale", "exp_weight", "exp_rate",
        "uniform_weight", "uniform_low", "uniform_high")]


class _CBound(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double), ("lower", ctypes.c_double),
                ("upper", ctypes.c_double)]


class _CStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in (
        "mean_y", "mean_abs", "variance", "usefulness", "gamma")]


_LMO_FIELDS = ("gamma_weight", "gamma_shape", "gamma_scale", "exp_weight", "exp_rate",
               "uniform_weight", "uniform_low", "uniform_high")

_validate = fn("dpzo_lmo_validate", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_CLmo)])
_stats = fn("dpzo_lmo_stats_compute", ctypes.c_int,
            [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.c_double, ctypes.POINTER(_CStats)])
_eps0 = fn("dpzo_lmo_eps0", ctypes.c_int,
           [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.c_double, ctypes.POINTER(_CBound)])
_eps0_vector = fn("dpzo_lmo_eps0_vector", ctypes.c_int,
                  [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.c_double,
                   ctypes.POINTER(_CBound)])
_pdf = fn("dpzo_lmo_pdf", ctypes.c_double, [ctypes.POINTER(_CLmo), ctypes.c_double])
_cdf = fn("dpzo_lmo_cdf", ctypes.c_double, [ctypes.POINTER(_CLmo), ctypes.c_double])
_sf = fn("dpzo_lmo_sf", ctypes.c_double, [ctypes.POINTER(_CLmo), ctypes.c_double])
_sampler_seeded = fn("dpzo_lmo_sampler_seeded", ctypes.c_void_p,
                     [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.c_uint64])
_sampler_secure = fn("dpzo_lmo_sampler_secure", ctypes.c_void_p,
                     [ctypes.c_void_p, ctypes.POINTER(_CLmo)])
_sample = fn("dpzo_lmo_sample", ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_void_p, _lib.c_double_p, ctypes.c_size_t])
_sampler_free = fn("dpzo_lmo_sampler_free", None, [ctypes.c_void_p])
_bound_parse = fn("dpzo_lmo_bound_parse", ctypes.c_int,
                  [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)])
_rdp = fn("dpzo_lmo_rdp", ctypes.c_int,
          [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.c_double, ctypes.c_int,
           _lib.c_double_p, ctypes.c_size_t, ctypes.POINTER(_CBound)])
_paper_step = fn("dpzo_lmo_paper_step_epsilon", ctypes.c_double,
                 [ctypes.POINTER(_CLmo), ctypes.c_double, _lib.c_double_p])

BOUNDS = ("mgf", "exact", "pure", "best")


def _bound_code(name: str) -> int:
    """The library's dpzo_lmo_bound_kind for a name of BOUNDS (dpzo_lmo_bound_parse)."""
    code = ctypes.c_int(0)
    call(_bound_parse, name.encode(), ctypes.byref(code))
    return code.value


@dataclass(frozen=True)
class LmoStats:
    """Moments of the noise X (``dpzo_lmo_stats_compute``, adaptive quadrature to a
    relative 1e-10): E[Y], E|X| = E[1/Y], Var X = 2 E[1/Y^2] (may be inf) and the
    usefulness P(|X| <= gamma). Estimates, not bounds."""

    mean_y: float
    mean_abs: float
    variance: float
    usefulness: float
    gamma: float


@dataclass(frozen=True)
class LmoRdp:
    """Per-step Renyi DP of one scalar release (``dpzo_lmo_rdp``) at each order.
    ``upper[i]`` is a proven upper bound; ``lower[i]`` a proven lower bound on the
    mechanism's true RDP for bounds "exact" and "best" (for "mgf" and "pure" it only
    encloses the bound); ``estimate[i]`` the best estimate. Values may be inf."""

    orders: tuple[float, ...]
    upper: tuple[float, ...]
    lower: tuple[float, ...]
    estimate: tuple[float, ...]
    bound: str
    sensitivity: float


@dataclass(frozen=True)
class Lmo:
    """The LMO noise parameters (C ``dpzo_lmo``): weights wG, wE, wU >= 0 (at least one
    > 0), Gamma shape k and scale theta, Exponential RATE lam, Uniform(a, b) with
    0 <= a < b. The defaults drop every component; set at least one weight.

    Construction checks types (numbers, not bool or NaN); :meth:`validate` asks the C
    library to check the ranges (every method that computes does so too)."""

    gamma_weight: float = 0.0
    gamma_shape: float = 1.0
    gamma_scale: float = 1.0
    exp_weight: float = 0.0
    exp_rate: float = 1.0
    uniform_weight: float = 0.0
    uniform_low: float = 0.0
    uniform_high: float = 1.0

    def __post_init__(self) -> None:
        for name in _LMO_FIELDS:
            object.__setattr__(self, name, _real(name, getattr(self, name), allow_inf=True))

    # -- conversions
    def _c(self) -> _CLmo:
        return _CLmo(*(getattr(self, n) for n in _LMO_FIELDS))

    @classmethod
    def _from_c(cls, c: _CLmo) -> "Lmo":
        return cls(*(getattr(c, n) for n in _LMO_FIELDS))

    def to_dict(self) -> dict[str, float]:
        """The eight parameters by name (the keys of a claim's or profile's "lmo")."""
        return {n: getattr(self, n) for n in _LMO_FIELDS}

    # -- checks and statistics
    def validate(self) -> "Lmo":
        """Raises dpzo.Error naming the first bad parameter; returns self."""
        c = self._c()
        call(_validate, ctypes.byref(c))
        return self

    def stats(self, gamma: float = 0.9) -> LmoStats:
        """E[Y], E|X|, Var X and the usefulness P(|X| <= gamma) (gamma 0.9 by default)."""
        g = _real("gamma", gamma)
        c, out = self._c(), _CStats()
        call(_stats, ctypes.byref(c), g, ctypes.byref(out))
        return LmoStats(out.mean_y, out.mean_abs, out.variance, out.usefulness, out.gamma)

    def eps0(self, sensitivity: float = 1.0, *, vector: bool = False) -> float:
        """Proven upper bound on the pure-DP epsilon of one release at sensitivity C:
        log(E[Y] / E[Y e^{-CY}]) (``dpzo_lmo_eps0``); ``vector=True``: i.i.d. noise on an
        L1-clipped vector, C E[Y^2]/E[Y] (``dpzo_lmo_eps0_vector``). MPFR-enclosed."""
        s = _real("sensitivity", sensitivity)
        c, out = self._c(), _CBound()
        call(_eps0_vector if vector else _eps0, ctypes.byref(c), s, ctypes.byref(out))
        return out.upper

    def rdp(self, orders: Sequence[float], sensitivity: float = 1.0,
            bound: str = "best") -> LmoRdp:
        """Per-step RDP of one scalar release at each order (> 1): ``dpzo_lmo_rdp``."""
        if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
            raise Error(f"orders must be a sequence of numbers, got {orders!r}")
        al = [_real(f"orders[{i}]", a) for i, a in enumerate(orders)]
        if not al:
            raise Error("orders is empty")
        s = _real("sensitivity", sensitivity)
        b = _choice("bound", bound, BOUNDS)
        c = self._c()
        arr = (ctypes.c_double * len(al))(*al)
        out = (_CBound * len(al))()
        call(_rdp, ctypes.byref(c), s, _bound_code(b), arr, len(al), out)
        return LmoRdp(tuple(al), tuple(o.upper for o in out), tuple(o.lower for o in out),
                      tuple(o.value for o in out), b, s)

    def pdf(self, x: float) -> float:
        """Density of X at x (``dpzo_lmo_pdf``; the parameters are validated first)."""
        self.validate()
        c = self._c()
        return float(_pdf(ctypes.byref(c), _real("x", x, allow_inf=True)))

    def cdf(self, x: float) -> float:
        """P(X <= x) (``dpzo_lmo_cdf``)."""
        self.validate()
        c = self._c()
        return float(_cdf(ctypes.byref(c), _real("x", x, allow_inf=True)))

    def sf(self, x: float) -> float:
        """P(X > x) (``dpzo_lmo_sf``), accurate in the upper tail."""
        self.validate()
        c = self._c()
        return float(_sf(ctypes.byref(c), _real("x", x, allow_inf=True)))

    def sample(self, n: int, *, seed: Optional[int] = None,
               sensitivity: float = 1.0) -> list[float]:
        """n draws of C*X. Without ``seed`` they come from the operating system's CSPRNG
        (getrandom): use these for noise that protects data. With ``seed`` they come from
        a seeded generator (GSL mt19937): reproducible, for research and Monte Carlo only."""
        k = _count("n", n)
        s = _real("sensitivity", sensitivity)
        if not s > 0:
            raise Error(f"sensitivity must be > 0, got {s!r}")
        c = self._c()
        if seed is None:
            sampler = _sampler_secure(_lib.ctx(), ctypes.byref(c))
        else:
            sampler = _sampler_seeded(_lib.ctx(), ctypes.byref(c), _count("seed", seed))
        if not sampler:
            _lib.check(1)  # the context holds the message
        try:
            buf = (ctypes.c_double * max(k, 1))()
            call(_sample, sampler, buf, k)
        finally:
            _sampler_free(sampler)
        out = [s * buf[i] for i in range(k)]
        for i, v in enumerate(out):
            if not math.isfinite(v):
                raise Error(f"sensitivity {s!r}: draw {i + 1}, C * {buf[i]!r}, is not finite "
                            "in double; use a smaller sensitivity")
        return out

    def paper_step_epsilon(self, delta: float = 1e-10) -> tuple[float, float]:
        """The released LMO-DP code's single-step epsilon at delta and its order
        (``dpzo_lmo_paper_step_epsilon``): a bug-compatible replica, NOT a guarantee."""
        self.validate()
        d = _real("delta", delta)
        c, order = self._c(), ctypes.c_double()
        return float(_paper_step(ctypes.byref(c), d, ctypes.byref(order))), order.value

    def epsilon(self, **kwargs: Any) -> "LmoEpsilon":
        """:func:`lmo_epsilon` of this noise (same keyword arguments)."""
        return lmo_epsilon(self, **kwargs)


def _as_lmo(name: str, value: Any) -> Lmo:
    if isinstance(value, Lmo):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - set(_LMO_FIELDS)
        if unknown:
            raise Error(f"{name}: unknown LMO parameter(s) {sorted(unknown)}")
        return Lmo(**value)
    raise Error(f"{name} must be a dpzo.Lmo, got {value!r}")


# ---- accounting a run ------------------------------------------------------------------

class _CAccountOptions(ctypes.Structure):
    _fields_ = [("sensitivity", ctypes.c_double), ("bound", ctypes.c_int),
                ("sampling", ctypes.c_int), ("q", ctypes.c_double),
                ("batch", ctypes.c_uint64), ("n", ctypes.c_uint64),
                ("steps", ctypes.c_uint64), ("delta", ctypes.c_double),
                ("max_order", ctypes.c_uint), ("vector_l1", ctypes.c_int)]


class _CAccountResult(ctypes.Structure):
    _fields_ = [("epsilon", ctypes.c_double), ("epsilon_estimate", ctypes.c_double),
                ("order", ctypes.c_double), ("route", ctypes.c_char_p),
                ("eps0", ctypes.c_double), ("order_at_edge", ctypes.c_int)]


_CPldResult = _S.PldResult  # dpzo_pld_result


_options_default = fn("dpzo_lmo_account_options_default", _CAccountOptions, [])
_lmo_eps = fn("dpzo_lmo_epsilon", ctypes.c_int,
              [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.POINTER(_CAccountOptions),
               ctypes.POINTER(_CAccountResult)])
_lmo_eps_pld = fn("dpzo_lmo_epsilon_pld", ctypes.c_int,
                  [ctypes.c_void_p, ctypes.POINTER(_CLmo), ctypes.POINTER(_CAccountOptions),
                   ctypes.c_double, ctypes.POINTER(_CAccountResult), ctypes.POINTER(_CPldResult)])

SAMPLINGS = ("none", "poisson", "wor")
_SAMPLING_CODE = {"none": 0, "poisson": 1, "wor": 2}
CLIPS = ("scalar", "l1")


@dataclass(frozen=True)
class LmoEpsilon:
    """The epsilon of a run with LMO noise (the fields of ``dpzo lmo epsilon --json``).

    ``epsilon`` is a proven upper bound (``float(result)`` gives it): the RDP accountant's
    (``dpzo_lmo_epsilon``) or, with ``accountant="pld"``, the smaller of that and the PLD
    accountant's upper end. ``lower`` is the PLD's proven lower end (pld only, else None).
    ``route`` says which bound won: "rdp", "pure-dp" or "pld". ``order`` is None when it
    was not an RDP order. ``eps0`` is the proven per-step pure-DP epsilon."""

    epsilon: float
    estimate: float
    lower: Optional[float]
    order: Optional[float]
    route: str
    eps0: float
    order_at_edge: bool
    delta: float
    steps: int
    sampling: str
    sampling_rate: float
    sensitivity: float
    bound: str
    clip: str
    accountant: str
    rdp_epsilon: float
    pld_epsilon: Optional[float] = None
    pld_estimate: Optional[float] = None
    pld_grid: Optional[float] = None
    pld_reason: str = ""
    lmo: Optional[Lmo] = field(default=None, repr=False)

    def __float__(self) -> float:
        return self.epsilon


def _account_options(sensitivity: float, bound: str, sampling: str, q: float, batch: int,
                     n: int, steps: int, delta: float, max_order: Optional[int],
                     clip: str) -> _CAccountOptions:
    o = _options_default()
    o.sensitivity = sensitivity
    o.bound = _bound_code(bound)
    o.sampling = _SAMPLING_CODE[sampling]
    o.q = q
    o.batch, o.n = batch, n
    o.steps = steps
    o.delta = delta
    if max_order is not None:
        o.max_order = _uint("max_order", max_order, minimum=2)
    o.vector_l1 = 1 if clip == "l1" else 0
    return o


def _account(lmo: Lmo, sensitivity: float, sampling: str, q: float, batch: int, n: int,
             steps: int, delta: float, *, accountant: str, bound: str, clip: str,
             max_order: Optional[int], pld_grid: Optional[float]) -> LmoEpsilon:
    o = _account_options(sensitivity, bound, sampling, q, batch, n, steps, delta, max_order,
                         clip)
    c = lmo._c()
    r = _CAccountResult()
    lower = pld_eps = pld_est = None
    reason = ""
    grid = None
    if accountant == "pld":
        # both accountants, the smaller proven bound (dpzo_lmo_epsilon_pld, the CLI's call)
        grid = 1e-4 if pld_grid is None else _real("pld_grid", pld_grid)
        pr = _CPldResult()
        call(_lmo_eps_pld, ctypes.byref(c), ctypes.byref(o), grid, ctypes.byref(r),
             ctypes.byref(pr))
        rdp_eps = pr.rdp_epsilon
        lower, pld_eps, pld_est = pr.epsilon_lower, pr.epsilon_upper, pr.epsilon_estimate
        if math.isinf(pld_eps):
            reason = pr.reason.decode("utf-8", "replace") or "not resolved"
    else:
        call(_lmo_eps, ctypes.byref(c), ctypes.byref(o), ctypes.byref(r))
        rdp_eps = r.epsilon
    eps, est, order, route = r.epsilon, r.epsilon_estimate, r.order, r.route.decode()
    at_edge = bool(r.order_at_edge)
    return LmoEpsilon(epsilon=eps, estimate=est, lower=lower,
                      order=order if order > 0 else None, route=route, eps0=r.eps0,
                      order_at_edge=at_edge, delta=delta, steps=steps, sampling=sampling,
                      sampling_rate=q, sensitivity=sensitivity, bound=bound, clip=clip,
                      accountant=accountant, rdp_epsilon=rdp_eps, pld_epsilon=pld_eps,
                      pld_estimate=pld_est, pld_grid=grid, pld_reason=reason, lmo=lmo)


def lmo_epsilon(lmo: Lmo, *, delta: float, steps: Optional[int] = None,
                sampling_rate: Optional[float] = None, batch_size: Optional[int] = None,
                dataset_size: Optional[int] = None, epochs: Optional[float] = None,
                sensitivity: float = 1.0, bound: str = "best", clip: str = "scalar",
                max_order: Optional[int] = None, accountant: str = "rdp",
                pld_grid: Optional[float] = None) -> LmoEpsilon:
    """Proven total epsilon at ``delta`` of a run releasing one scalar with LMO noise per
    step (``dpzo lmo epsilon``): T steps (default 1, or ``epochs``), without sampling, with
    Poisson sampling at ``sampling_rate`` (add/remove adjacency) or with batches of
    ``batch_size`` of ``dataset_size`` drawn without replacement (replace-one adjacency:
    ``sensitivity`` is then the replace-one sensitivity, 2C for a sum clipped to C).

    ``bound`` picks the per-step curve (mgf, exact, pure, best); integer orders 2..
    ``max_order`` (default 256). ``clip="l1"``: i.i.d. noise on an L1-clipped vector.
    ``accountant="pld"`` also runs the PLD accountant on the noise's density (scalar
    queries; loss grid ``pld_grid``, default 1e-4); epsilon is then the smaller proven
    bound and ``lower`` the PLD's proven lower end."""
    lm = _as_lmo("lmo", lmo)
    d = _real("delta", delta)
    kind, q, b, n, t = _sampling(sampling_rate, batch_size, dataset_size, steps, epochs)
    acc = _choice("accountant", accountant, ("rdp", "pld"))
    cl = _choice("clip", clip, CLIPS)
    if acc == "pld" and cl == "l1":
        raise Error("accountant 'pld' covers scalar queries only (clip 'scalar'); for clip "
                    "'l1' use the rdp accountant")
    if pld_grid is not None and acc != "pld":
        raise Error("pld_grid goes with accountant='pld'")
    return _account(lm, _real("sensitivity", sensitivity), kind, q, b, n, t, d,
                    accountant=acc, bound=_choice("bound", bound, BOUNDS), clip=cl,
                    max_order=max_order, pld_grid=pld_grid)


def _lmo_epsilon(lmo: Lmo, sensitivity: float = 1.0, sampling: str = "none",
                 q: Optional[float] = None, batch: Optional[int] = None,
                 n: Optional[int] = None, steps: int = 1, delta: float = 0.0,
                 accountant: str = "rdp", *, orders: Any = None,
                 conversion: str = "improved", grid: Optional[float] = None,
                 max_order: Optional[int] = None, bound: str = "best") -> Any:
    """For dpzo.accountants: SelfComposed(Poisson|WOR|bare(LmoEvent), steps) at ``delta``
    as a :class:`dpzo.Epsilon`. ``sampling`` "none" (q ignored), "poisson" (q) or "wor"
    (batch of n, replace-one: ``sensitivity`` is the event's). RDP: integer orders
    2..max_order with the improved conversion (an explicit order grid or the standard
    conversion raise dpzo.Error "unsupported"). PLD: ``grid`` is the loss grid (None:
    1e-4). PRV is unsupported for LMO noise."""
    from .results import Epsilon  # results.py belongs to the core helper

    lm = _as_lmo("lmo", lmo)
    acc = _choice("accountant", accountant, ("rdp", "pld", "prv"))
    if acc == "prv":
        raise Error("unsupported: the PRV accountant does not take LMO noise; use "
                    "RdpAccountant or PldAccountant", 3)
    if orders is not None:
        raise Error("unsupported: LMO noise is accounted at the integer orders 2..max_order "
                    "(default 256), not an explicit order grid; use RdpAccountant() with "
                    "orders=None", 3)
    if conversion != "improved":
        raise Error(f"unsupported: LMO noise is accounted with the improved RDP conversion "
                    f"only, got conversion {conversion!r}", 3)
    smp = _choice("sampling", sampling, SAMPLINGS)
    if smp == "poisson":
        qq, b, nn = _real("q", q), 0, 0
    elif smp == "wor":
        b, nn = _count("batch", batch, minimum=1), _count("n", n, minimum=1)
        qq = b / nn
    else:
        qq, b, nn = 1.0, 0, 0
    r = _account(lm, _real("sensitivity", sensitivity), smp, qq, b, nn,
                 _count("steps", steps, minimum=1), _real("delta", delta), accountant=acc,
                 bound=_choice("bound", bound, BOUNDS), clip="scalar", max_order=max_order,
                 pld_grid=grid)
    if acc == "rdp":
        return Epsilon(epsilon=r.epsilon, lower=None, estimate=r.estimate, delta=r.delta,
                       accountant="rdp", order=r.order, fallback=False,
                       reason="" if r.route == "rdp" else f"route {r.route}")
    fallback = r.route != "pld"
    reason = r.pld_reason if r.pld_reason else (
        "the RDP bound was smaller than the PLD's upper end" if fallback else "")
    return Epsilon(epsilon=r.epsilon, lower=r.lower, estimate=r.estimate, delta=r.delta,
                   accountant="pld", order=r.order if fallback else None, fallback=fallback,
                   reason=reason)
