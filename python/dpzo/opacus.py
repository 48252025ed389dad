# SPDX-License-Identifier: Apache-2.0
"""dpzo.opacus: dpzo's certified accountant behind Opacus's accountant interface.

Two drop-ins for Opacus users (``pip install opacus``; this module imports it):

* :class:`DpzoAccountant`, an ``opacus.accountants.IAccountant``: a ``PrivacyEngine`` that
  uses it reports dpzo's proven upper bound on epsilon for the steps its optimizer took
  (Poisson-sampled Gaussian steps, add/remove-one adjacency, as Opacus accounts them).
  Plug it in either way::

      engine = PrivacyEngine()
      engine.accountant = DpzoAccountant()          # before make_private(...)

  or register it under a name, Opacus's own extension point, which also makes
  ``make_private_with_epsilon`` calibrate with dpzo's accountant::

      dpzo.opacus.register()                          # names "dpzo_rdp", "dpzo_pld", "dpzo_prv"
      engine = PrivacyEngine(accountant="dpzo_rdp")

* :func:`get_noise_multiplier`, with the signature of
  ``opacus.accountants.utils.get_noise_multiplier``, returning dpzo's certified noise
  multiplier (:func:`dpzo.calibrate`).

What is proven: every epsilon returned here is the upper end the C library proves for the
recorded history (RDP: certified RDP curve and conversion, rounded up; PLD/PRV: the proven
upper end of the interval). Nothing is computed in Python.

Which sampling it proves: ``make_private`` hands the accountant its optimizer hook, and the
accountant reads there which data loader Opacus will run (``pipeline``). With Opacus's
Poisson loader (``poisson_sampling=True``, the default) the history is accounted as
Poisson-sampled Gaussian steps. With ``poisson_sampling=False`` and a loader drawing each
example at most once per pass (a ``BatchSampler`` over a ``SequentialSampler`` or a
``RandomSampler`` without replacement: shuffled or fixed-order batches), no amplification
by sampling is proven: the accountant counts the passes over the loader's sampler and accounts one
Gaussian release per pass that held a step (the smallest noise
multiplier of the pass's steps), the argument of docs/audit.md section 3 for shuffled
batches under zero-out adjacency (sensitivity C); the optimizer must
step on every batch (gradient accumulation over several batches is not covered). Any other
loader (a sampler with replacement, weights, a custom sampler) or gradient accumulation
there leaves nothing proven: ``proven`` is False, ``get_epsilon`` warns
(:class:`UnprovenWarning`) and returns the Poisson figure Opacus would print. An accountant
whose hook was not made by ``make_private`` (``pipeline`` None) accounts Poisson sampling,
as Opacus's own accountants do, and proves that only.
"""
from __future__ import annotations

import math
import sys
import warnings
from collections import OrderedDict
from copy import deepcopy
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from opacus.accountants.accountant import IAccountant
    from opacus.accountants.registry import _ACCOUNTANTS, register_accountant
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("dpzo.opacus needs Opacus: pip install opacus") from _e

from . import (
    Calibration,
    Delta,
    Epsilon,
    Error,
    GaussianEvent,
    PldAccountant,
    PoissonSampledEvent,
    PrvAccountant,
    RdpAccountant,
    calibrate,
)
from ._check import count as _count, real

__all__ = ["DpzoAccountant", "get_noise_multiplier", "calibrate_noise_multiplier", "register",
           "MECHANISMS", "UnprovenWarning"]


class UnprovenWarning(UserWarning):
    """The epsilon returned is not a proven bound for the sampling that ran (see the
    module's "Which sampling it proves")."""

#: The accountant names :func:`register` gives Opacus's registry, and what each one is.
MECHANISMS = {"dpzo_rdp": "rdp", "dpzo_pld": "pld", "dpzo_prv": "prv"}
_KINDS = ("rdp", "pld", "prv")
# Opacus's history entries are (noise_multiplier, sample_rate, steps) whatever the
# accountant; these are the mechanisms whose state_dict can be loaded (same history).
_LOADABLE = ("rdp", "prv") + tuple(MECHANISMS)

HistoryEntry = Tuple[float, float, int]


def _real(name: str, value: Any) -> float:
    """dpzo._check.real, NaN refused (a NaN history entry would be stored before the
    library saw it)."""
    x = real(name, value)
    if math.isnan(x):
        raise Error(f"{name} is NaN")
    return x


def _check_event(sigma: float, q: float) -> None:
    """The library's domain checks of one step (builds and frees its C event)."""
    PoissonSampledEvent(q, GaussianEvent(sigma)).describe()


def _kind(accountant: Any) -> str:
    if not isinstance(accountant, str):
        raise Error(f"accountant must be 'rdp', 'pld' or 'prv', got {accountant!r}")
    name = accountant.lower()
    name = MECHANISMS.get(name, name)
    if name not in _KINDS:
        hint = (" (Opacus's GDP accountant is an approximation that can underestimate "
                "epsilon; dpzo proves no GDP bound)") if name == "gdp" else ""
        raise Error(f"accountant must be 'rdp', 'pld' or 'prv', got {accountant!r}{hint}")
    return name


def _make_private_loader(frame: Any) -> Tuple[bool, Any]:
    """(seen, loader): the data loader Opacus's ``PrivacyEngine.make_private`` returns to
    its caller, read from that call's frame when it is the one asking for the hook."""
    try:
        from opacus import PrivacyEngine
    except ImportError:  # pragma: no cover - opacus is imported above
        return False, None
    if (frame is None or frame.f_code.co_name != "make_private"
            or not isinstance(frame.f_locals.get("self"), PrivacyEngine)
            or "data_loader" not in frame.f_locals):
        return False, None
    return True, frame.f_locals["data_loader"]


def _loader_pipeline(loader: Any) -> Tuple[str, str]:
    """("poisson" | "shuffled" | "unknown", why) for the loader Opacus runs."""
    from opacus.data_loader import DPDataLoader
    from torch.utils.data import BatchSampler, RandomSampler, SequentialSampler

    if isinstance(loader, DPDataLoader):
        return "poisson", "Opacus's Poisson loader"
    bs = getattr(loader, "batch_sampler", None)
    sampler = getattr(bs, "sampler", None)
    if type(bs) is BatchSampler and (
            type(sampler) is SequentialSampler
            or (type(sampler) is RandomSampler and not sampler.replacement
                and sampler._num_samples is None)):
        return "shuffled", f"batches of {bs.batch_size} cut from a {type(sampler).__name__}"
    return "unknown", (f"a loader that is not Poisson-sampled and whose sampler "
                       f"({type(sampler).__name__ if sampler is not None else type(bs).__name__})"
                       " may draw an example more than once per pass")


def _count_passes(sampler: Any, listener: Callable[[int], None]) -> None:
    """Calls ``listener(+1)`` whenever a pass over ``sampler`` starts (its ``__iter__``)
    and ``listener(-1)`` when that pass's iterator ends (exhausted, closed or collected).
    The sampler, not the loader, is watched: whatever wraps it (Opacus's
    ``BatchMemoryManager``, a rebuilt ``DataLoader``) draws its permutations through it.
    Its class is replaced by a subclass that announces each pass and then does what the
    class did."""
    cls = type(sampler)
    if not getattr(cls, "_dpzo_counts_passes", False):
        base = cls

        def __iter__(self: Any) -> Any:
            listeners = list(self.__dict__.get("_dpzo_pass_listeners", ()))
            inner = base.__iter__(self)

            def watched() -> Any:
                for f in listeners:
                    f(+1)
                try:
                    yield from inner
                finally:
                    for f in listeners:
                        f(-1)

            return watched()

        sampler.__class__ = type(cls.__name__, (cls,), {
            "__iter__": __iter__, "_dpzo_counts_passes": True, "__module__": cls.__module__,
            "__qualname__": cls.__qualname__})
    sampler.__dict__.setdefault("_dpzo_pass_listeners", []).append(listener)


class _Mechanism:
    """``mechanism()`` works on the class (``"dpzo_rdp"``, as Opacus's classmethod does)
    and on an instance (``"dpzo_" + its accountant``), so a state_dict names what made it."""

    def __get__(self, obj: Optional["DpzoAccountant"], owner: type) -> Callable[[], str]:
        kind = getattr(obj, "kind", None) or getattr(owner, "_default_kind", "rdp")

        def mechanism() -> str:
            return "dpzo_" + kind

        return mechanism


class DpzoAccountant(IAccountant):
    """An Opacus accountant whose epsilon is dpzo's proven upper bound.

    ``accountant`` picks dpzo's accountant: ``"rdp"`` (default; continuous orders, the
    improved conversion), ``"pld"`` or ``"prv"``. ``options`` go to that accountant's
    constructor: ``orders`` and ``conversion`` for :class:`dpzo.RdpAccountant` (``orders=
    "opacus"`` uses Opacus's order grid), ``grid`` and ``memory_limit`` for
    :class:`dpzo.PldAccountant`, ``eps_error``, ``delta_error`` and ``memory_limit`` for
    :class:`dpzo.PrvAccountant`.

    ``history`` is Opacus's: ``[(noise_multiplier, sample_rate, num_steps), ...]`` with
    consecutive equal steps collapsed, so Opacus's code that reads or sets it (its own
    ``get_noise_multiplier`` sets ``history`` directly) works unchanged. Each entry is
    accounted as ``num_steps`` Poisson-sampled Gaussian steps (add/remove-one adjacency).
    """

    mechanism = _Mechanism()  # type: ignore[assignment]
    _default_kind = "rdp"

    def __init__(self, accountant: Optional[str] = None, **options: Any) -> None:
        super().__init__()
        self.history: List[HistoryEntry] = []
        self.kind: str = _kind(self._default_kind if accountant is None else accountant)
        self.options: dict = dict(options)
        #: the sampling of the loader make_private runs: "poisson", "shuffled", "unknown",
        #: or None (the hook was not made by make_private: Poisson sampling is assumed)
        self.pipeline: Optional[str] = None
        #: why ``pipeline`` is what it is, or why nothing is proven (one line)
        self.pipeline_reason: str = ""
        #: shuffled batches: the noise multiplier of each pass that held a step (the
        #: smallest of its steps); the Gaussian releases accounted
        self.releases: List[float] = []
        self._passes = 0
        self._open = 0          # passes over the watched sampler not yet ended
        self._pass_steps = 0    # steps in the current release's pass
        self._per_pass = 0      # batches per pass of the loader make_private runs
        self._release_pass = -1
        self._unproven = ""
        self._entry_shuffled: List[bool] = []
        self._flags_of: Any = self.history
        self._new_accountant()  # refuses bad options now, not at the first get_epsilon

    # --- Opacus's interface -----------------------------------------------------------
    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """Opacus's hook (``IAccountant.get_optimizer_hook_fn``), and the moment the
        accountant sees which data loader ``make_private`` runs (``pipeline``)."""
        seen, loader = _make_private_loader(sys._getframe(1))
        if seen:
            self.pipeline, self.pipeline_reason = _loader_pipeline(loader)
            self._unproven = "" if self.pipeline != "unknown" else self.pipeline_reason
            if self.pipeline == "shuffled":
                self._per_pass = len(loader)
                _count_passes(loader.batch_sampler.sampler, self._pass_event)

        def hook_fn(optim: Any) -> None:
            acc = int(getattr(optim, "accumulated_iterations", 1))
            self._record(optim.noise_multiplier, sample_rate * acc, self.pipeline == "shuffled")
            if self.pipeline == "shuffled":
                if acc != 1 and not self._unproven:
                    self._unproven = ("the optimizer stepped once per %d batches of a "
                                      "shuffled loader: a step may hold an example twice"
                                      % acc)
                self._release(float(optim.noise_multiplier))

        return hook_fn

    def _pass_event(self, change: int) -> None:
        self._open += change
        if change > 0:
            self._passes += 1

    def _release(self, sigma: float) -> None:
        """One shuffled step: a new release at the first step of a pass; a step while no
        pass or several passes are open, or more steps in a pass than it has batches,
        means the steps cannot be attributed to passes: nothing is proven."""
        if self._release_pass == self._passes and self.releases:
            self.releases[-1] = min(self.releases[-1], sigma)
            self._pass_steps += 1
        else:
            self.releases.append(sigma)
            self._release_pass = self._passes
            self._pass_steps = 1
        if not self._unproven and (self._open != 1 or self._pass_steps > self._per_pass):
            self._unproven = (
                "a step of the shuffled loader could not be attributed to one pass over its "
                "sampler (%d passes open, %d steps in the pass of %d batches)"
                % (self._open, self._pass_steps, self._per_pass))

    @property
    def proven(self) -> bool:
        """Whether :meth:`get_epsilon` is a proven bound for the sampling that ran."""
        return not self._unproven

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Records one optimizer step (Poisson sampling at ``sample_rate``)."""
        self._record(noise_multiplier, sample_rate, False)

    def _record(self, noise_multiplier: float, sample_rate: float, shuffled: bool) -> None:
        sigma = _real("noise_multiplier", noise_multiplier)
        q = _real("sample_rate", sample_rate)
        flags = self._flags()
        if (self.history and self.history[-1][0] == sigma and self.history[-1][1] == q
                and flags[-1] == shuffled):
            last = self.history.pop()  # checked when it was recorded
            self.history.append((last[0], last[1], last[2] + 1))
        else:
            _check_event(sigma, q)
            self.history.append((sigma, q, 1))
            flags.append(shuffled)

    def _flags(self) -> List[bool]:
        """Which history entries are shuffled steps (accounted by ``releases``), kept for
        this very history list: code that replaces or edits ``history`` (Opacus's own
        get_noise_multiplier sets it) takes the accounting over, all of it Poisson."""
        if self._flags_of is not self.history or len(self._entry_shuffled) != len(self.history):
            self._flags_of = self.history
            self._entry_shuffled = [False] * len(self.history)
            self.releases = []
        return self._entry_shuffled

    def get_epsilon(self, delta: float, alphas: Optional[Sequence[float]] = None, *,
                    eps_error: Optional[float] = None, delta_error: Optional[float] = None,
                    **kwargs: Any) -> float:
        """The proven upper bound on epsilon at ``delta`` for the steps so far (0.0 before
        the first step, as Opacus's accountants answer).

        ``alphas`` (RDP only: the orders to optimise over, as Opacus's RDPAccountant takes
        them), ``eps_error`` and ``delta_error`` (PRV only) override the constructor's
        options for this call. Other keyword arguments are ignored, as Opacus's accountants
        ignore them (``make_private_with_epsilon`` forwards its own)."""
        return float(self.epsilon(delta, alphas=alphas, eps_error=eps_error,
                                  delta_error=delta_error))

    def __len__(self) -> int:
        """Number of optimization steps taken so far (IAccountant's meaning; Opacus's own
        accountants return the number of history entries instead)."""
        return sum(int(entry[2]) for entry in self.history)

    def state_dict(self, destination: Any = None) -> Any:
        """Opacus's state dict (``history`` and ``mechanism``) plus ``dpzo_options``."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["dpzo_options"] = deepcopy(self.options)
        destination["dpzo_pipeline"] = {
            "pipeline": self.pipeline, "reason": self.pipeline_reason,
            "unproven": self._unproven, "entry_shuffled": list(self._flags()),
            "releases": list(self.releases)}
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Loads a state dict of this class or of Opacus's RDP/PRV accountants (the same
        history); the accountant kind and options stay this object's. Entries are checked
        (numbers, integer step counts) and a bad one raises :class:`dpzo.Error`."""
        if not state_dict:
            raise Error("state dict is empty or None: nothing to load into DpzoAccountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise Error(f"state dict has no key {key!r}: cannot load it into "
                            "DpzoAccountant")
        mech = state_dict["mechanism"]
        if mech not in _LOADABLE:
            raise Error(f"a state dict of mechanism {mech!r} cannot be loaded into "
                        f"DpzoAccountant (loadable: {', '.join(_LOADABLE)})")
        history: List[HistoryEntry] = []
        for i, entry in enumerate(state_dict["history"]):
            if not isinstance(entry, (tuple, list)) or len(entry) != 3:
                raise Error(f"history[{i}] must be (noise_multiplier, sample_rate, "
                            f"num_steps), got {entry!r}")
            sigma = _real(f"history[{i}] noise_multiplier", entry[0])
            q = _real(f"history[{i}] sample_rate", entry[1])
            steps = _count(f"history[{i}] num_steps", entry[2])
            _check_event(sigma, q)
            history.append((sigma, q, steps))
        self.history = history
        self._flags()  # all Poisson, no releases, unless the state says otherwise
        pipe = state_dict.get("dpzo_pipeline")
        if pipe is not None:
            self._load_pipeline(pipe)

    def _load_pipeline(self, pipe: Any) -> None:
        """The ``dpzo_pipeline`` entry of a state dict written by :meth:`state_dict`."""
        try:
            flags = [bool(f) for f in pipe["entry_shuffled"]]
            releases = [_real("dpzo_pipeline releases", r) for r in pipe["releases"]]
            kind, reason, unproven = pipe["pipeline"], str(pipe["reason"]), str(pipe["unproven"])
        except (KeyError, TypeError) as e:
            raise Error(f"state dict's dpzo_pipeline is malformed: {e}") from None
        shuffled_steps = sum(int(h[2]) for h, f in zip(self.history, flags) if f)
        if (len(flags) != len(self.history) or kind not in (None, "poisson", "shuffled", "unknown")
                or len(releases) > shuffled_steps or (shuffled_steps > 0) != bool(releases)):
            raise Error("state dict's dpzo_pipeline does not match its history (entry flags "
                        f"{len(flags)} for {len(self.history)} entries, {len(releases)} "
                        f"releases for {shuffled_steps} shuffled steps)")
        for r in releases:
            _check_event(r, 1.0)
        self._entry_shuffled, self._flags_of = flags, self.history
        self.releases, self._release_pass = releases, -1
        # the pipeline is what this accountant sees now (make_private ran first): a stored
        # "shuffled" cannot be adopted, as nothing here counts that loader's passes
        del kind, reason
        self._unproven = self._unproven or unproven

    # --- dpzo's full answers ----------------------------------------------------------
    def epsilon(self, delta: float, *, alphas: Optional[Sequence[float]] = None,
                eps_error: Optional[float] = None,
                delta_error: Optional[float] = None) -> Epsilon:
        """dpzo's full answer for the steps so far: :class:`dpzo.Epsilon` (``.epsilon`` the
        proven upper bound; ``.lower`` the proven lower bound with PLD/PRV). For shuffled
        batches, the Gaussian releases of ``releases``; where nothing is proven
        (``proven`` False) it warns (:class:`UnprovenWarning`) and answers for Poisson
        sampling."""
        return self._composed(alphas, eps_error, delta_error).epsilon(delta)

    def delta(self, epsilon: float) -> Delta:
        """dpzo's proven delta at ``epsilon`` for the steps so far (:class:`dpzo.Delta`)."""
        return self._composed(None, None, None).delta(epsilon)

    def get_privacy_spent(self, *, delta: float,
                          alphas: Optional[Sequence[float]] = None
                          ) -> Tuple[float, Optional[float]]:
        """``(epsilon, order)`` as Opacus's RDPAccountant returns them; the order is
        ``None`` for PLD/PRV."""
        e = self.epsilon(delta, alphas=alphas)
        return e.epsilon, e.order

    # --- internals ----------------------------------------------------------------------
    def _new_accountant(self, **overrides: Any) -> Any:
        opts = dict(self.options)
        opts.update({k: v for k, v in overrides.items() if v is not None})
        cls = {"rdp": RdpAccountant, "pld": PldAccountant, "prv": PrvAccountant}[self.kind]
        try:
            return cls(**opts)
        except TypeError as e:  # an option this accountant does not take
            raise Error(f"DpzoAccountant(accountant={self.kind!r}): {e}") from None

    def _composed(self, alphas: Optional[Sequence[float]], eps_error: Optional[float],
                  delta_error: Optional[float]) -> Any:
        overrides: dict = {}
        if alphas is not None:
            if self.kind != "rdp":
                raise Error(f"alphas (RDP orders) given to a DpzoAccountant with accountant="
                            f"{self.kind!r}; only 'rdp' takes orders")
            overrides["orders"] = list(alphas)
        for name, value in (("eps_error", eps_error), ("delta_error", delta_error)):
            if value is not None:
                if self.kind != "prv":
                    raise Error(f"{name} given to a DpzoAccountant with accountant="
                                f"{self.kind!r}; only 'prv' takes it")
                overrides[name] = value
        acc = self._new_accountant(**overrides)
        if self._unproven:
            warnings.warn(f"dpzo.opacus: this epsilon is not a proven bound: "
                          f"{self._unproven}; it is the figure for Poisson sampling "
                          "(make_private(..., poisson_sampling=True) runs what it proves)",
                          UnprovenWarning, stacklevel=4)
            for sigma, q, steps in self.history:
                acc.compose(PoissonSampledEvent(q, GaussianEvent(sigma)), int(steps))
            return acc
        flags = self._flags()
        for (sigma, q, steps), shuffled in zip(self.history, flags):
            if not shuffled:
                acc.compose(PoissonSampledEvent(q, GaussianEvent(sigma)), int(steps))
        if self.releases:
            i = 0
            while i < len(self.releases):
                j = i
                while j < len(self.releases) and self.releases[j] == self.releases[i]:
                    j += 1
                acc.compose(GaussianEvent(self.releases[i]), j - i)
                i = j
        return acc


class DpzoRdpAccountant(DpzoAccountant):
    """:class:`DpzoAccountant` with ``accountant="rdp"``: what ``"dpzo_rdp"`` builds."""

    _default_kind = "rdp"


class DpzoPldAccountant(DpzoAccountant):
    """:class:`DpzoAccountant` with ``accountant="pld"``: what ``"dpzo_pld"`` builds."""

    _default_kind = "pld"


class DpzoPrvAccountant(DpzoAccountant):
    """:class:`DpzoAccountant` with ``accountant="prv"``: what ``"dpzo_prv"`` builds."""

    _default_kind = "prv"


_PRESETS = {"dpzo_rdp": DpzoRdpAccountant, "dpzo_pld": DpzoPldAccountant,
            "dpzo_prv": DpzoPrvAccountant}
__all__ += ["DpzoRdpAccountant", "DpzoPldAccountant", "DpzoPrvAccountant"]


def register() -> None:
    """Registers ``"dpzo_rdp"``, ``"dpzo_pld"`` and ``"dpzo_prv"`` in Opacus's accountant
    registry (``opacus.accountants.register_accountant``), so that
    ``PrivacyEngine(accountant="dpzo_rdp")`` builds a :class:`DpzoAccountant` and
    ``make_private_with_epsilon`` calibrates with it. Calling it again does nothing; a
    name already registered to something else is refused (dpzo.Error)."""
    for name, cls in _PRESETS.items():
        have = _ACCOUNTANTS.get(name)
        if have is cls:
            continue
        if have is not None:
            raise Error(f"Opacus accountant name {name!r} is already registered to {have!r}")
        register_accountant(name, cls)


def calibrate_noise_multiplier(*, target_epsilon: float, target_delta: float,
                               sample_rate: float, epochs: Optional[float] = None,
                               steps: Optional[int] = None, accountant: str = "rdp",
                               epsilon_tolerance: float = 0.01, **kwargs: Any) -> Calibration:
    """:func:`get_noise_multiplier`'s full answer: the :class:`dpzo.Calibration`."""
    target_epsilon = _real("target_epsilon", target_epsilon)
    tol = _real("epsilon_tolerance", epsilon_tolerance)
    if not (tol > 0.0 and math.isfinite(tol)):
        raise Error(f"epsilon_tolerance must be a positive finite number, got {tol!r}")
    if (steps is None) == (epochs is None):
        raise Error("get_noise_multiplier takes either steps or epochs (exactly one), got "
                    f"steps={steps!r}, epochs={epochs!r}")
    kind = _kind(accountant)
    extra: dict = {}
    for key, value in kwargs.items():
        if key == "alphas":
            if kind != "rdp":
                raise Error(f"alphas (RDP orders) given with accountant={accountant!r}")
            extra["orders"] = list(value)
        elif key in ("orders", "grid", "eps_error", "tolerance"):
            extra[key] = value
        else:
            raise Error(f"get_noise_multiplier: unknown keyword argument {key!r} (dpzo takes "
                        "alphas, orders, grid, eps_error, tolerance)")
    return calibrate(epsilon=target_epsilon, delta=target_delta, sampling_rate=sample_rate,
                     steps=steps, epochs=epochs, accountant=kind, **extra)


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: Optional[float] = None, steps: Optional[int] = None,
                         accountant: str = "rdp", epsilon_tolerance: float = 0.01,
                         **kwargs: Any) -> float:
    """Opacus's ``get_noise_multiplier``, answered by dpzo: the smallest noise multiplier
    (to a relative 1e-6 with RDP, 1e-4 with PLD/PRV) whose proven epsilon after the steps is
    at most ``target_epsilon``, for Poisson sampling at ``sample_rate``.

    ``accountant`` is ``"rdp"``, ``"pld"`` or ``"prv"`` (dpzo's; Opacus's ``"gdp"`` is
    refused). ``epochs`` become ``ceil(epochs / sample_rate)`` steps (dpzo's rule; Opacus
    uses ``int(epochs / sample_rate)``, never more), so the guarantee covers Opacus's count.
    ``epsilon_tolerance`` is checked and met: dpzo's answer is tighter than any tolerance
    Opacus's bisection stops at. ``alphas`` become RDP orders; ``orders``, ``grid``,
    ``eps_error`` and ``tolerance`` go to :func:`dpzo.calibrate`; other keywords are
    refused. Raises :class:`dpzo.Error` on bad input or an unreachable target."""
    return calibrate_noise_multiplier(
        target_epsilon=target_epsilon, target_delta=target_delta, sample_rate=sample_rate,
        epochs=epochs, steps=steps, accountant=accountant,
        epsilon_tolerance=epsilon_tolerance, **kwargs).noise_multiplier
