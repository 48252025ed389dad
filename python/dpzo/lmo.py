# SPDX-License-Identifier: Apache-2.0
"""dpzo.lmo: the LMO-DP noise (docs/lmo.md), its accounting and the offline noise search.

The noise is X | Y ~ Laplace(0, 1/Y) with Y = wG*Gamma(k, theta) + wE*Exp(rate lam) +
wU*Uniform(a, b), independent components; a weight of 0 drops its component. The
exponential takes its RATE (mean 1/lam) everywhere. Privacy is for one scalar query of L1
sensitivity C per step, noise C*X (``clip="l1"``: i.i.d. noise on every coordinate of an
L1-clipped vector, where only the MGF bound and the vector pure-DP bound hold).

Every number comes from the C library (``include/dpzo/lmo.h``): :class:`Lmo` mirrors
``dpzo_lmo``; :func:`lmo_epsilon` is ``dpzo_lmo_epsilon`` (and ``dpzo_lmo_pld_epsilon``
with ``accountant="pld"``); :func:`lmo_search` is ``dpzo_lmo_search``. An epsilon returned
here is a proven upper bound (never rounded down), except where a field says otherwise.
"""
from __future__ import annotations

import ctypes
import os
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Union

from . import _lib
from ._check import c_text, path
from ._lib import call, fn
from ._lmo_noise import (  # the noise and its accounting, re-exported as before
    _dpzo_free, _c_free, _real, _count, _uint, _choice, _text, _sampling, _CLmo, _CBound,
    _CStats, _LMO_FIELDS, _validate, _stats, _eps0, _eps0_vector, _pdf, _cdf, _sf,
    _sampler_seeded, _sampler_secure, _sample, _sampler_free, _bound_parse, _rdp, _paper_step,
    BOUNDS, _bound_code, LmoStats, LmoRdp, Lmo, _as_lmo, _CAccountOptions, _CAccountResult,
    _CPldResult, _options_default, _lmo_eps, _lmo_eps_pld, SAMPLINGS, _SAMPLING_CODE, CLIPS,
    LmoEpsilon, _account_options, _account, lmo_epsilon, _lmo_epsilon,
)
from .errors import Error
from .profiles import _profile_from_search

__all__ = ["Lmo", "LmoStats", "LmoRdp", "LmoEpsilon", "LmoSearchResult", "lmo_epsilon",
           "lmo_search", "lmo_grid"]

# The noise's public names keep this module as their home (help(), pickle), as before they
# moved to dpzo._lmo_noise.
for _o in (Lmo, LmoStats, LmoRdp, LmoEpsilon, lmo_epsilon):
    _o.__module__ = __name__
del _o

# ---- the offline search ----------------------------------------------------------------

_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double,
                             ctypes.c_double)


class _CSearchOptions(ctypes.Structure):
    _fields_ = [("objective", ctypes.c_int), ("usefulness_gamma", ctypes.c_double),
                ("epsilon", ctypes.c_double), ("paper", ctypes.c_int),
                ("account", _CAccountOptions), ("pld", ctypes.c_int),
                ("pld_max", ctypes.c_uint), ("threads", ctypes.c_uint),
                ("checkpoint", ctypes.c_char_p), ("progress", _PROGRESS),
                ("progress_user", ctypes.c_void_p),
                ("interrupt", ctypes.POINTER(ctypes.c_int))]


class _CSearchResult(ctypes.Structure):
    _fields_ = [("index", ctypes.c_size_t), ("class_size", ctypes.c_size_t),
                ("lmo", _CLmo), ("epsilon", ctypes.c_double), ("order", ctypes.c_double),
                ("objective_value", ctypes.c_double), ("usefulness", ctypes.c_double),
                ("mean_abs", ctypes.c_double), ("variance", ctypes.c_double),
                ("n_points", ctypes.c_size_t), ("n_unique", ctypes.c_size_t),
                ("n_exact", ctypes.c_size_t), ("seconds", ctypes.c_double),
                ("resumed", ctypes.c_int), ("by_pld", ctypes.c_int),
                ("pld_lower", ctypes.c_double), ("n_pld", ctypes.c_size_t)]


_grid_preset = fn("dpzo_lmo_grid_preset", ctypes.c_int,
                  [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)])
_grid_from_json = fn("dpzo_lmo_grid_from_json", ctypes.c_int,
                     [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)])
_grid_size = fn("dpzo_lmo_grid_size", ctypes.c_size_t, [ctypes.c_void_p])
_grid_point = fn("dpzo_lmo_grid_point", None,
                 [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(_CLmo)])
_grid_name = fn("dpzo_lmo_grid_name", ctypes.c_char_p, [ctypes.c_void_p])
_grid_free = fn("dpzo_lmo_grid_free", None, [ctypes.c_void_p])
_search_default = fn("dpzo_lmo_search_options_default", _CSearchOptions, [])
_search = fn("dpzo_lmo_search", ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_CSearchOptions),
              ctypes.POINTER(_CSearchResult)])
_objective_parse = fn("dpzo_lmo_objective_parse", ctypes.c_int,
                      [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)])
_eps0_fns = {False: _eps0, True: _eps0_vector}

OBJECTIVES = ("usefulness", "mean-abs", "variance", "max-epsilon")
GRID_PRESETS = ("paper", "paper-script")
GridSpec = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class _Grid:
    """An owned dpzo_lmo_grid: a preset name, a JSON file's path, or a dict of the six lists
    {"gamma_weight", "exp_weight", "uniform_weight", "gamma": [[scale, shape], ..],
    "exp_rate", "uniform": [[low, high], ..]}."""

    def __init__(self, grid: GridSpec) -> None:
        import json

        self.ptr = ctypes.c_void_p()
        if isinstance(grid, str) and grid in GRID_PRESETS:
            call(_grid_preset, grid.encode(), ctypes.byref(self.ptr))
            return
        if isinstance(grid, Mapping):
            try:
                text = json.dumps(dict(grid), allow_nan=False)
            except (TypeError, ValueError) as e:
                raise Error(f"grid: not a JSON grid ({e})") from None
            what = "grid"
        elif isinstance(grid, (str, os.PathLike)):
            gpath = os.fsdecode(path("grid", grid))  # NUL refused
            if not os.path.isfile(gpath):
                raise Error(f"grid must be 'paper', 'paper-script', a grid dict or a JSON "
                            f"file, got {grid!r} (no such file)")
            if os.path.getsize(gpath) > 64 << 20:
                raise Error(f"grid file {gpath} is larger than 64 MiB")
            with open(gpath, "r", encoding="utf-8") as f:
                text = f.read()
            if not text:
                raise Error(f"grid file {gpath} is empty")
            what = f"grid file {gpath}"
        else:
            raise Error(f"grid must be 'paper', 'paper-script', a grid dict or a JSON file, "
                        f"got {grid!r}")
        st = _grid_from_json(_lib.ctx(), c_text(what, text.encode()), ctypes.byref(self.ptr))
        _lib.check(st, what)

    def __len__(self) -> int:
        return int(_grid_size(self.ptr))

    def point(self, i: int) -> Lmo:
        c = _CLmo()
        _grid_point(self.ptr, i, ctypes.byref(c))
        return Lmo._from_c(c)

    @property
    def name(self) -> str:
        return (_grid_name(self.ptr) or b"").decode()

    def close(self) -> None:
        ptr, self.ptr = self.ptr, ctypes.c_void_p()
        if ptr:
            _grid_free(ptr)

    def __del__(self) -> None:
        self.close()


def lmo_grid(grid: GridSpec) -> list[Lmo]:
    """The points of a search grid in the search's (odometer) order: a preset ("paper":
    183,708 points, "paper-script": 40,824), a grid dict or a JSON grid file."""
    g = _Grid(grid)
    try:
        return [g.point(i) for i in range(len(g))]
    finally:
        g.close()


@dataclass(frozen=True)
class LmoSearchResult:
    """The winner of :func:`lmo_search` (``dpzo_lmo_search``) and the run it was accounted
    for. ``epsilon`` is a proven upper bound on the run's total epsilon (sound mode; with
    ``by_pld`` the PLD accountant's, ``pld_lower`` its lower end) or, accountant "paper",
    the released code's single-step epsilon (NOT a guarantee). ``order`` None: the pure-DP
    route (or the PLD) gave it. ``index`` is the winner's grid index (the first of the
    ``class_size`` points defining the same distribution). :meth:`profile` makes the noise
    profile ``dpzo lmo search -o`` writes."""

    lmo: Lmo
    index: int
    class_size: int
    epsilon: float
    order: Optional[float]
    objective: str
    objective_value: float
    usefulness: float
    usefulness_gamma: float
    mean_abs: float
    variance: float
    eps0: Optional[float]
    by_pld: bool
    pld_lower: Optional[float]
    n_points: int
    n_unique: int
    n_exact: int
    n_pld: int
    seconds: float
    resumed: bool
    grid: str
    target: float
    accountant: str
    delta: float
    steps: int
    sampling: str
    sampling_rate: float
    batch_size: Optional[int]
    dataset_size: Optional[int]
    sensitivity: float
    bound: str
    clip: str
    # the search's C options and result (dpzo_profile_from_lmo_search makes the profile)
    _c_search: Any = field(default=None, repr=False, compare=False)

    def __float__(self) -> float:
        return self.epsilon

    def profile(self, *, command: Optional[str] = None,
                created: Optional[str] = None) -> Any:
        """The winner as a noise profile (the profile ``dpzo lmo search -o`` writes; docs/
        profile.md), validated and checksummed by the C library. ``command`` is recorded as
        its provenance (default "dpzo.lmo_search(...)"), ``created`` its UTC timestamp
        "YYYY-MM-DDTHH:MM:SSZ" (default now). Write it with ``.save(path)``."""
        return _profile_from_search(self, command=command, created=created)


def _plain_options(o: Any) -> Any:
    """A copy of search options without the call's pointers (progress callback, interrupt
    flag, checkpoint name), which do not outlive the call."""
    c = type(o).from_buffer_copy(o)
    c.progress = _PROGRESS()  # NULL
    c.interrupt = None
    c.checkpoint = None
    return c


def lmo_search(*, epsilon: float, delta: float, grid: GridSpec = "paper-script",
               objective: str = "usefulness", usefulness_gamma: float = 0.9,
               sampling_rate: Optional[float] = None, batch_size: Optional[int] = None,
               dataset_size: Optional[int] = None, steps: Optional[int] = None,
               epochs: Optional[float] = None, sensitivity: float = 1.0,
               bound: str = "best", clip: str = "scalar", max_order: Optional[int] = None,
               accountant: str = "rdp", threads: Optional[int] = None,
               pld_max: Optional[int] = None, checkpoint: Optional[str] = None,
               progress: Optional[Callable[[str, float, float], Any]] = None
               ) -> LmoSearchResult:
    """The offline LMO noise search (``dpzo lmo search``, docs/lmo.md section 7): over
    ``grid``, the noise with the best ``objective`` (usefulness P(|X| <= usefulness_gamma),
    mean-abs, variance, or max-epsilon) whose privacy meets ``epsilon`` at ``delta``.

    ``accountant="rdp"``: the proven total epsilon of the run (``steps`` or ``epochs``,
    default 1 step; sampling as in :func:`lmo_epsilon`) is at most ``epsilon``. "pld": a
    candidate is also feasible when the PLD accountant proves it (scalar queries; at most
    ``pld_max`` PLD runs, default 1000). "paper": the released code's single-step epsilon
    strictly below the target (bug-compatible replica, NOT a guarantee; steps and sampling
    are not accounted). ``clip``: "scalar" (default), "l1", or "l2-paper" (paper only).

    ``threads``: worker threads (None: all cores). ``checkpoint``: a file to save progress
    to and resume from. ``progress(phase, fraction, eta_seconds)`` is called now and then
    (eta < 0: unknown). Ctrl-C (KeyboardInterrupt) or an exception raised by ``progress``
    stops the search (the checkpoint keeps the progress) and is re-raised.
    Raises dpzo.Error (status "infeasible") when no grid point meets the target."""
    target = _real("epsilon", epsilon)
    d = _real("delta", delta)
    acc = _choice("accountant", accountant, ("rdp", "pld", "paper"))
    obj = _choice("objective", objective, OBJECTIVES)
    cl = _choice("clip", clip, ("scalar", "l1", "l2-paper"))
    bd = _choice("bound", bound, BOUNDS)
    if acc == "pld" and cl == "l1":
        raise Error("accountant 'pld' covers scalar queries only (clip 'scalar'); for clip "
                    "'l1' use the rdp accountant")
    if acc != "paper" and cl == "l2-paper":
        raise Error("clip 'l2-paper' has no established guarantee: it is only available "
                    "with accountant 'paper'")
    kind, q, b, n, t = _sampling(sampling_rate, batch_size, dataset_size, steps, epochs)
    sens = _real("sensitivity", sensitivity)
    o = _search_default()
    o.epsilon = target
    o.usefulness_gamma = _real("usefulness_gamma", usefulness_gamma)
    code = ctypes.c_int()
    call(_objective_parse, obj.encode(), ctypes.byref(code))
    o.objective = code.value
    o.paper = 1 if acc == "paper" else 0
    o.pld = 1 if acc == "pld" else 0
    o.account = _account_options(sens, bd, kind, q, b, n, t, d, max_order, cl)
    if pld_max is not None:
        o.pld_max = _uint("pld_max", pld_max, minimum=1)
    if threads is not None:
        th = _count("threads", threads, minimum=1)
        if th > 64:
            raise Error(f"threads must be in [1, 64], got {th}")
        o.threads = th
    ck = None
    if checkpoint is not None:
        ck = path("checkpoint", checkpoint)
        o.checkpoint = ck
    if progress is not None and not callable(progress):
        raise Error(f"progress must be callable, got {progress!r}")
    stop = ctypes.c_int(0)
    raised: list[BaseException] = []

    def on_progress(_user: Any, phase: bytes, frac: float, eta: float) -> None:
        if raised:
            return
        try:
            if progress is not None:
                progress((phase or b"").decode(), frac, eta)
        except BaseException as e:  # noqa: B902 - KeyboardInterrupt included: stop the search
            raised.append(e)
            stop.value = 1

    def on_sigint(_signum: int, _frame: Any) -> None:
        # Ctrl-C while the library runs: Python runs this handler when the library next
        # calls on_progress (a KeyboardInterrupt raised there would be lost in ctypes)
        if not raised:
            raised.append(KeyboardInterrupt())
        stop.value = 1

    cb = _PROGRESS(on_progress)
    o.progress = cb
    o.interrupt = ctypes.pointer(stop)
    g = _Grid(grid)
    old_handler: Any = None
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        old_handler = signal.signal(signal.SIGINT, on_sigint)
    try:
        r = _CSearchResult()
        st = _search(_lib.ctx(), g.ptr, ctypes.byref(o), ctypes.byref(r))
        if raised:
            raise raised[0]
        _lib.check(st)
        grid_name = g.name
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGINT, old_handler)
        g.close()
    winner = Lmo._from_c(r.lmo)
    eps0: Optional[float] = None
    e0 = _CBound()
    if _eps0_fns[cl == "l1"](_lib.ctx(), ctypes.byref(r.lmo), sens, ctypes.byref(e0)) == 0:
        eps0 = e0.upper
    paper = acc == "paper"
    if paper:
        kind, q, b, n, t = "none", 1.0, 0, 0, 1
    return LmoSearchResult(
        lmo=winner, index=int(r.index), class_size=int(r.class_size), epsilon=r.epsilon,
        order=r.order if r.order > 0 else None, objective=obj,
        objective_value=r.objective_value, usefulness=r.usefulness,
        usefulness_gamma=o.usefulness_gamma, mean_abs=r.mean_abs, variance=r.variance,
        eps0=eps0, by_pld=bool(r.by_pld),
        pld_lower=r.pld_lower if r.by_pld else None, n_points=int(r.n_points),
        n_unique=int(r.n_unique), n_exact=int(r.n_exact), n_pld=int(r.n_pld),
        seconds=r.seconds, resumed=bool(r.resumed), grid=grid_name, target=target,
        accountant=acc, delta=d, steps=t, sampling=kind, sampling_rate=q,
        batch_size=b if kind == "wor" else None, dataset_size=n if kind == "wor" else None,
        sensitivity=sens, bound=bd, clip=cl, _c_search=(_plain_options(o), r))
