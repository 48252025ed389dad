# SPDX-License-Identifier: Apache-2.0
"""dpzo.events: privacy events, the algebra of dp_accounting's ``DpEvent`` without "Dp".

An event describes what a training run releases: a mechanism (Gaussian, Laplace, LMO), a
sampling step around it (Poisson, or a fixed batch drawn without replacement), repetition
and composition. Events are immutable values; an accountant turns them into guarantees by
building the library's C event tree (``dpzo_event``, include/dpzo/event.h) for each query
and freeing it afterwards. Nothing is computed here.

Conventions (those of the C library and of dp_accounting):

* ``GaussianEvent(s)``: a sum query of L2 sensitivity 1 with noise N(0, s^2).
* ``LaplaceEvent(b)``: L1 sensitivity 1, Laplace noise of scale b (pure DP, epsilon 1/b).
* ``LmoEvent(lmo, C)``: LMO noise (dpzo.Lmo) added once to a scalar query of L1
  sensitivity C. Accounted only alone, as ``SelfComposedEvent(X, T)`` with X the bare
  event, or it inside ``PoissonSampledEvent`` or ``SampledWithoutReplacementEvent``
  (dpzo.lmo); any other composition with an LMO event raises ``dpzo.Error``.
* ``NonPrivateEvent()``: a release without a guarantee (epsilon +inf everywhere).
* ``ZcdpEvent(rho, xi=0)``: (xi, rho)-zCDP, RDP(alpha) = xi + rho alpha (dp_accounting's
  ``ZCDpEvent``; the PLD/PRV accountants answer with the RDP bound and say so).
* ``RandomizedResponseEvent(noise_parameter, num_buckets)``: with probability p a uniform
  bucket of k, else the true one; replace-one adjacency (the true bucket changes).
* ``DiscreteLaplaceEvent(noise_parameter, sensitivity)``: integer noise with
  P(x) proportional to exp(-t|x|) on an integer query of L1 sensitivity s (pure DP, t s).
* ``SingleEpochTreeAggregationEvent(noise_multiplier, step_counts)``: one epoch of DP-FTRL's
  tree aggregation (Kairouz et al. 2021, appendix D; dp_accounting's
  ``SingleEpochTreeAggregationDpEvent``), trees of ``step_counts`` steps (an int or a list),
  every record in at most one step of all of them: the Gaussian mechanism of squared
  sensitivity ceil(log2(max(step_counts) + 1)). Not allowed under a sampler.
* ``MultiEpochTreeAggregationEvent(noise_multiplier, total_steps, max_participation,
  min_separation)``: DP-FTRL's tree aggregation without restarts (Kairouz et al. 2021 arXiv
  v3, appendix D.2, Theorem D.3; TF Privacy's ``compute_rdp_single_tree``): one forest over
  ``total_steps`` steps, every record in at most ``max_participation`` steps with at least
  ``min_separation`` steps between any two: the Gaussian mechanism of squared sensitivity
  zeta* (:func:`tree_sensitivity_squared`, exact, with a pattern attaining it). dpzo's own
  event (dp_accounting 0.6.0 has none); JSON type ``MultiEpochTreeAggregation``.
* ``RepeatAndSelectEvent(event, mean, shape)``: private selection (Papernot-Steinke 2022;
  dp_accounting's ``RepeatAndSelectDpEvent``): ``event`` run K times, E[K] = mean, the best
  run released; shape inf: K Poisson, shape > -1: truncated negative binomial (1: geometric,
  0: logarithmic). RDP bound only (the PLD/PRV accountants answer with it and say so).
* ``SampledWithReplacementEvent(n, m, e)``: ``e`` (a Gaussian subtree, noise relative to the
  replace-one sensitivity of one copy of a record) on m records drawn with replacement from
  n (dp_accounting's ``SampledWithReplacementDpEvent``); RDP bound of docs/accountant.md 3.7.
* ``MixtureOfGaussiansEvent(standard_deviation, sensitivities, sampling_probs)``: N(0, s^2)
  on one neighbour, sum_i p_i N(c_i, s^2) on the other (Choquette-Choo et al. 2023;
  dp_accounting's ``MixtureOfGaussiansDpEvent``), both directions; add/remove-one. RDP by a
  certified quadrature; PLD/PRV answer with the RDP bound. Not allowed under a sampler.
* ``TruncatedSubsampledGaussianEvent(dataset_size, sampling_probability,
  truncated_batch_size, noise_multiplier)``: the Gaussian mechanism on a Poisson sample cut
  to at most ``truncated_batch_size`` records (dp_accounting's
  ``TruncatedSubsampledGaussianDpEvent``), add/remove-one; RDP by a proven mixture bound
  (docs/accountant.md 3.8); PLD/PRV answer with the RDP bound.
* ``PoissonSampledEvent(q, e)``: each record included independently with probability q,
  add/remove-one adjacency.
* ``SampledWithoutReplacementEvent(n, b, e)``: a batch of exactly b of the n records,
  replace-one adjacency (Wang-Balle-Kasiviswanathan 2019): a proof for batches drawn
  afresh at every step, not for the batches of a shuffled epoch.
* ``SelfComposedEvent(e, k)``: k repetitions; ``ComposedEvent([e1, e2, ...])``: all of them;
  ``NoOpEvent()``: nothing released.
* ``JsonEvent(text)``: an event written as JSON (docs/accountant.md section 7), read by the
  library's parser (``dpzo_event_parse_json``) whenever it is accounted; made by
  :func:`event_from_json`, which checks it at once. :func:`to_json` writes any event above
  (but an LMO event) in that format, so ``event_from_json(to_json(e))`` is e.

Python checks types when an event is made (a bool or a string is not a number, counts are
ints); the library checks domains (ranges, NaN) when an accountant builds the event, and
its message names the bad value.
"""
from __future__ import annotations

import ctypes
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence, Tuple, Union

from . import _lib
from ._check import count as _count, real as _real
from .errors import Error

if TYPE_CHECKING:
    from .lmo import Lmo

__all__ = ["Event", "GaussianEvent", "LaplaceEvent", "LmoEvent", "PoissonSampledEvent",
           "SampledWithoutReplacementEvent", "SelfComposedEvent", "ComposedEvent",
           "NoOpEvent", "NonPrivateEvent", "ZcdpEvent", "RandomizedResponseEvent",
           "DiscreteLaplaceEvent", "SingleEpochTreeAggregationEvent",
           "MultiEpochTreeAggregationEvent", "tree_sensitivity_squared",
           "RepeatAndSelectEvent", "SampledWithReplacementEvent",
           "MixtureOfGaussiansEvent", "TruncatedSubsampledGaussianEvent", "JsonEvent",
           "event_from_json", "to_json"]

_vp = ctypes.c_void_p
_gaussian = _lib.fn("dpzo_event_gaussian", _vp, [_vp, ctypes.c_double])
_laplace = _lib.fn("dpzo_event_laplace", _vp, [_vp, ctypes.c_double])
_non_private = _lib.fn("dpzo_event_non_private", _vp, [_vp])
_zcdp = _lib.fn("dpzo_event_zcdp", _vp, [_vp, ctypes.c_double, ctypes.c_double])
_rr = _lib.fn("dpzo_event_randomized_response", _vp, [_vp, ctypes.c_double, ctypes.c_uint64])
_dlap = _lib.fn("dpzo_event_discrete_laplace", _vp, [_vp, ctypes.c_double, ctypes.c_uint64])
_tree = _lib.fn("dpzo_event_tree_aggregation", _vp,
                [_vp, ctypes.c_double, ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t])
_tree_multi = _lib.fn("dpzo_event_tree_aggregation_multi_epoch", _vp,
                      [_vp, ctypes.c_double, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64])
_tree_sens = _lib.fn("dpzo_tree_sensitivity_squared", ctypes.c_int,
                     [_vp, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                      ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)])
_mog = _lib.fn("dpzo_event_mixture_of_gaussians", _vp,
               [_vp, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                ctypes.POINTER(ctypes.c_double), ctypes.c_size_t])
_tsg = _lib.fn("dpzo_event_truncated_subsampled_gaussian", _vp,
               [_vp, ctypes.c_uint64, ctypes.c_double, ctypes.c_uint64, ctypes.c_double])
_poisson = _lib.fn("dpzo_event_poisson_sampled", _vp, [_vp, ctypes.c_double, _vp])
_wor = _lib.fn("dpzo_event_wor_sampled", _vp, [_vp, ctypes.c_uint64, ctypes.c_uint64, _vp])
_repeat_select = _lib.fn("dpzo_event_repeat_and_select", _vp,
                         [_vp, _vp, ctypes.c_double, ctypes.c_double])
_wr = _lib.fn("dpzo_event_wr_sampled", _vp, [_vp, ctypes.c_uint64, ctypes.c_uint64, _vp])
_self_composed = _lib.fn("dpzo_event_self_composed", _vp, [_vp, _vp, ctypes.c_uint64])
_composed = _lib.fn("dpzo_event_composed", _vp, [_vp, ctypes.POINTER(_vp), ctypes.c_size_t])
_parse_json = _lib.fn("dpzo_event_parse_json", ctypes.c_int,
                      [_vp, ctypes.c_char_p, ctypes.POINTER(_vp)])
_free = _lib.fn("dpzo_event_free", None, [_vp])
_describe = _lib.fn("dpzo_event_describe", None, [_vp, ctypes.c_char_p, ctypes.c_size_t])


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


def _event(name: str, value: Any) -> "Event":
    if not isinstance(value, Event):
        raise Error(f"{name} must be a dpzo event, got {value!r}")
    return value


class Event:
    """Base class of the events (not instantiated itself)."""

    __slots__ = ()

    def describe(self) -> str:
        """The library's one-line description, e.g. ``repeat(10, poisson(q=0.01, ...))``
        (builds and frees the C event; raises dpzo.Error where the library refuses it)."""
        with c_event(self) as ptr:
            size = 4096
            while True:  # the library truncates to the buffer: grow it until the text fits
                buf = ctypes.create_string_buffer(size)
                _describe(ptr, buf, size)
                if len(buf.value) < size - 1 or size >= 1 << 26:
                    return buf.value.decode()
                size *= 4


@dataclass(frozen=True)
class GaussianEvent(Event):
    """The Gaussian mechanism with noise multiplier ``noise_multiplier`` (L2 sensitivity 1)."""

    noise_multiplier: float

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))


@dataclass(frozen=True)
class LaplaceEvent(Event):
    """The Laplace mechanism: scale ``noise_multiplier`` per unit of L1 sensitivity."""

    noise_multiplier: float

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))


@dataclass(frozen=True)
class LmoEvent(Event):
    """LMO noise (``dpzo.Lmo``) added once to a scalar query of L1 sensitivity
    ``sensitivity`` (for batches without replacement: the replace-one sensitivity)."""

    lmo: "Lmo"
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        from .lmo import Lmo  # the extra helper's module; imported when first needed

        if not isinstance(self.lmo, Lmo):
            raise Error(f"lmo must be a dpzo.Lmo, got {self.lmo!r}")
        _set(self, "sensitivity", _real("sensitivity", self.sensitivity))


@dataclass(frozen=True)
class PoissonSampledEvent(Event):
    """``event`` on a Poisson sample: each record in with probability ``sampling_probability``."""

    sampling_probability: float
    event: Event

    def __post_init__(self) -> None:
        _set(self, "sampling_probability",
             _real("sampling_probability", self.sampling_probability))
        _event("event", self.event)


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(Event):
    """``event`` on a batch of exactly ``sample_size`` of ``source_dataset_size`` records
    drawn without replacement (replace-one adjacency)."""

    source_dataset_size: int
    sample_size: int
    event: Event

    def __post_init__(self) -> None:
        _set(self, "source_dataset_size", _count("source_dataset_size", self.source_dataset_size))
        _set(self, "sample_size", _count("sample_size", self.sample_size))
        _event("event", self.event)


@dataclass(frozen=True)
class SelfComposedEvent(Event):
    """``count`` repetitions of ``event``."""

    event: Event
    count: int

    def __post_init__(self) -> None:
        _event("event", self.event)
        _set(self, "count", _count("count", self.count))


@dataclass(frozen=True)
class ComposedEvent(Event):
    """All of ``events`` (stored as a tuple)."""

    events: Tuple[Event, ...]

    def __init__(self, events: Sequence[Event]) -> None:
        if isinstance(events, (Event, str, bytes)) or not hasattr(events, "__iter__"):
            raise Error(f"events must be a sequence of dpzo events, got {events!r}")
        items = tuple(events)
        for i, e in enumerate(items):
            _event(f"events[{i}]", e)
        _set(self, "events", items)


@dataclass(frozen=True)
class NoOpEvent(Event):
    """Nothing released (epsilon 0 at every delta)."""


@dataclass(frozen=True)
class NonPrivateEvent(Event):
    """A release without any privacy guarantee: epsilon is +inf in every accountant."""


@dataclass(frozen=True)
class ZcdpEvent(Event):
    """A mechanism satisfying (xi, rho)-zCDP: RDP(alpha) <= xi + rho alpha for every
    alpha > 1 (Bun-Steinke 2016; dp_accounting's ``ZCDpEvent``)."""

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "rho", _real("rho", self.rho))
        _set(self, "xi", _real("xi", self.xi))


@dataclass(frozen=True)
class RandomizedResponseEvent(Event):
    """Randomized response over ``num_buckets`` buckets: with probability
    ``noise_parameter`` a uniformly random bucket, else the true one (replace-one)."""

    noise_parameter: float
    num_buckets: int

    def __post_init__(self) -> None:
        _set(self, "noise_parameter", _real("noise_parameter", self.noise_parameter))
        _set(self, "num_buckets", _count("num_buckets", self.num_buckets))


@dataclass(frozen=True)
class DiscreteLaplaceEvent(Event):
    """The discrete Laplace mechanism: P(x) proportional to exp(-noise_parameter |x|) on
    the integers, added to an integer query of L1 sensitivity ``sensitivity``."""

    noise_parameter: float
    sensitivity: int = 1

    def __post_init__(self) -> None:
        _set(self, "noise_parameter", _real("noise_parameter", self.noise_parameter))
        _set(self, "sensitivity", _count("sensitivity", self.sensitivity))


@dataclass(frozen=True)
class SingleEpochTreeAggregationEvent(Event):
    """One epoch of DP-FTRL's tree aggregation: trees (restarted between) of ``step_counts``
    steps each (an int for one tree; stored as a tuple), every node released with Gaussian
    noise ``noise_multiplier`` times the per-node sensitivity, every record in at most one
    step of all the trees. The release is the Gaussian mechanism of squared L2 sensitivity
    depth = ceil(log2(max(step_counts) + 1)) (docs/accountant.md 3.6); trees of 0 steps
    release nothing. An empty list is refused."""

    noise_multiplier: float
    step_counts: Tuple[int, ...]

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))
        counts = self.step_counts
        if isinstance(counts, (str, bytes)) or not hasattr(counts, "__iter__"):
            counts = (_count("step_counts", counts),)
        else:
            counts = tuple(_count(f"step_counts[{i}]", c) for i, c in enumerate(counts))
        if not counts:
            raise Error("step_counts must be a non-empty list of step counts (or one count)")
        _set(self, "step_counts", counts)

    @property
    def depth(self) -> int:
        """The tree depth: max over the trees of ceil(log2(T + 1)) = T.bit_length()."""
        return max(c.bit_length() for c in self.step_counts)


def tree_sensitivity_squared(total_steps: int, max_participation: int,
                             min_separation: int) -> Tuple[int, Tuple[int, ...]]:
    """The squared L2 sensitivity zeta* of DP-FTRL's tree aggregation without restarts and
    a participation pattern attaining it: ``(zeta, steps)``, steps 0-based and increasing.
    zeta* is the largest sum over the forest's nodes of (participations under the node)^2
    over patterns of at most ``max_participation`` steps, any two at least
    ``min_separation`` steps apart, in ``total_steps`` steps (the C library's
    ``dpzo_tree_sensitivity_squared``: the paper's dynamic program, exact, its maximum
    checked against the pattern's own sum). Raises :class:`dpzo.Error` beyond its limits."""
    t = _count("total_steps", total_steps)
    e = _count("max_participation", max_participation)
    sep = _count("min_separation", min_separation)
    # room for any pattern the library answers with: at most min(E, T) steps, and it
    # refuses more than 2^20 participations
    cap = max(1, min(e, t, 1 << 20))
    zeta = ctypes.c_uint64(0)
    steps = (ctypes.c_uint64 * cap)()
    n = ctypes.c_size_t(0)
    _lib.call(_tree_sens, t, e, sep, ctypes.byref(zeta), steps, cap, ctypes.byref(n))
    return int(zeta.value), tuple(int(steps[i]) for i in range(n.value))


@dataclass(frozen=True)
class MultiEpochTreeAggregationEvent(Event):
    """DP-FTRL's tree aggregation without restarts over several participations: one forest
    over ``total_steps`` steps, every node released with Gaussian noise ``noise_multiplier``
    times a step's sensitivity, every record in at most ``max_participation`` steps with at
    least ``min_separation`` steps between any two (Kairouz et al. 2021 arXiv v3, appendix
    D.2). The release is the Gaussian mechanism of squared sensitivity
    :attr:`sensitivity_squared` (docs/accountant.md 3.6). Not allowed under a sampler."""

    noise_multiplier: float
    total_steps: int
    max_participation: int
    min_separation: int

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))
        for name in ("total_steps", "max_participation", "min_separation"):
            _set(self, name, _count(name, getattr(self, name)))

    @property
    def sensitivity_squared(self) -> int:
        """zeta*: see :func:`tree_sensitivity_squared` (which also gives the pattern)."""
        return tree_sensitivity_squared(self.total_steps, self.max_participation,
                                        self.min_separation)[0]


@dataclass(frozen=True)
class RepeatAndSelectEvent(Event):
    """Private selection (Papernot-Steinke 2022): ``event`` run K times, K random with
    E[K] = ``mean``, only the best run released. ``shape``: ``math.inf`` for K Poisson,
    > -1 for K truncated negative binomial with eta = shape (1: geometric, 0: logarithmic)."""

    event: Event
    mean: float
    shape: float

    def __post_init__(self) -> None:
        _event("event", self.event)
        _set(self, "mean", _real("mean", self.mean))
        _set(self, "shape", _real("shape", self.shape))


@dataclass(frozen=True)
class SampledWithReplacementEvent(Event):
    """``event`` (a Gaussian subtree) on ``sample_size`` records drawn uniformly with
    replacement from ``source_dataset_size`` (replace-one adjacency; a record drawn k times
    moves the query by k times its sensitivity)."""

    source_dataset_size: int
    sample_size: int
    event: Event

    def __post_init__(self) -> None:
        _set(self, "source_dataset_size", _count("source_dataset_size", self.source_dataset_size))
        _set(self, "sample_size", _count("sample_size", self.sample_size))
        _event("event", self.event)


@dataclass(frozen=True)
class MixtureOfGaussiansEvent(Event):
    """The mixture-of-Gaussians mechanism (dp_accounting's ``MixtureOfGaussiansDpEvent``):
    N(0, standard_deviation^2) on one neighbour, sum_i sampling_probs[i]
    N(sensitivities[i], standard_deviation^2) on the other. Both lists are stored as
    tuples of floats and must have the same length (1 to 1024); the probabilities must sum
    to 1 (within 1e-9)."""

    standard_deviation: float
    sensitivities: Tuple[float, ...]
    sampling_probs: Tuple[float, ...]

    def __post_init__(self) -> None:
        _set(self, "standard_deviation", _real("standard_deviation", self.standard_deviation))
        for name in ("sensitivities", "sampling_probs"):
            v = getattr(self, name)
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise Error(f"{name} must be a sequence of real numbers, got {v!r}")
            _set(self, name, tuple(_real(f"{name}[{i}]", x) for i, x in enumerate(v)))
        if len(self.sensitivities) != len(self.sampling_probs):
            raise Error("sensitivities and sampling_probs must have the same length, got "
                        f"{len(self.sensitivities)} and {len(self.sampling_probs)}")


@dataclass(frozen=True)
class TruncatedSubsampledGaussianEvent(Event):
    """The Gaussian mechanism (``noise_multiplier``, L2 sensitivity 1) on a Poisson sample
    (rate ``sampling_probability``) of ``dataset_size`` records cut to a uniformly random
    subset of ``truncated_batch_size`` where larger (dp_accounting's
    ``TruncatedSubsampledGaussianDpEvent``); add/remove-one adjacency, either neighbour
    holding ``dataset_size`` records besides the one they differ in."""

    dataset_size: int
    sampling_probability: float
    truncated_batch_size: int
    noise_multiplier: float

    def __post_init__(self) -> None:
        _set(self, "dataset_size", _count("dataset_size", self.dataset_size))
        _set(self, "sampling_probability",
             _real("sampling_probability", self.sampling_probability))
        _set(self, "truncated_batch_size",
             _count("truncated_batch_size", self.truncated_batch_size))
        _set(self, "noise_multiplier", _real("noise_multiplier", self.noise_multiplier))


@dataclass(frozen=True)
class JsonEvent(Event):
    """An event written as JSON (docs/accountant.md section 7): ``text`` is read by the C
    library's parser each time the event is accounted (nothing is parsed in Python). Make
    one with :func:`event_from_json`, which checks it at once."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise Error(f"text must be a str holding an event written as JSON, got "
                        f"{type(self.text).__name__}")


def event_from_json(text: Union[str, bytes, Mapping[str, Any]]) -> JsonEvent:
    """The event that ``text`` writes as JSON (docs/accountant.md section 7; dp_accounting's
    class names without "DpEvent" and its field names), e.g. ``{"type": "SelfComposed",
    "count": 1000, "event": {"type": "Gaussian", "noise_multiplier": 1.1}}``. A dict is
    written out with ``json.dumps`` first. The library reads it now (raising dpzo.Error with
    its message, which names the JSON path, where it refuses it) and again whenever the
    event is accounted. It composes with the other events."""
    if isinstance(text, Mapping):
        try:
            text = json.dumps(text, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error(f"the event cannot be written as JSON: {e}") from None
    elif isinstance(text, bytes):
        text = text.decode("utf-8")
    ev = JsonEvent(text)
    free(build(ev))
    return ev


def _to_obj(e: Event) -> Any:
    if isinstance(e, GaussianEvent):
        return {"type": "Gaussian", "noise_multiplier": e.noise_multiplier}
    if isinstance(e, LaplaceEvent):
        return {"type": "Laplace", "noise_multiplier": e.noise_multiplier}
    if isinstance(e, PoissonSampledEvent):
        return {"type": "PoissonSampled", "sampling_probability": e.sampling_probability,
                "event": _to_obj(e.event)}
    if isinstance(e, SampledWithoutReplacementEvent):
        return {"type": "SampledWithoutReplacement",
                "source_dataset_size": e.source_dataset_size, "sample_size": e.sample_size,
                "event": _to_obj(e.event)}
    if isinstance(e, SelfComposedEvent):
        return {"type": "SelfComposed", "event": _to_obj(e.event), "count": e.count}
    if isinstance(e, ComposedEvent):
        return {"type": "Composed", "events": [_to_obj(c) for c in e.events]}
    if isinstance(e, NoOpEvent):
        return {"type": "NoOp"}
    if isinstance(e, NonPrivateEvent):
        return {"type": "NonPrivate"}
    if isinstance(e, ZcdpEvent):
        return {"type": "ZCDp", "rho": e.rho, "xi": e.xi}
    if isinstance(e, RandomizedResponseEvent):
        return {"type": "RandomizedResponse", "noise_parameter": e.noise_parameter,
                "num_buckets": e.num_buckets}
    if isinstance(e, DiscreteLaplaceEvent):
        return {"type": "DiscreteLaplace", "noise_parameter": e.noise_parameter,
                "sensitivity": e.sensitivity}
    if isinstance(e, SingleEpochTreeAggregationEvent):
        return {"type": "SingleEpochTreeAggregation", "noise_multiplier": e.noise_multiplier,
                "step_counts": list(e.step_counts)}
    if isinstance(e, MultiEpochTreeAggregationEvent):
        return {"type": "MultiEpochTreeAggregation", "noise_multiplier": e.noise_multiplier,
                "total_steps": e.total_steps, "max_participation": e.max_participation,
                "min_separation": e.min_separation}
    if isinstance(e, RepeatAndSelectEvent):
        o = {"type": "RepeatAndSelect", "event": _to_obj(e.event), "mean": e.mean}
        if e.shape != math.inf:  # left out: Poisson (JSON has no infinity)
            o["shape"] = e.shape
        return o
    if isinstance(e, SampledWithReplacementEvent):
        return {"type": "SampledWithReplacement",
                "source_dataset_size": e.source_dataset_size, "sample_size": e.sample_size,
                "event": _to_obj(e.event)}
    if isinstance(e, MixtureOfGaussiansEvent):
        return {"type": "MixtureOfGaussians", "standard_deviation": e.standard_deviation,
                "sensitivities": list(e.sensitivities),
                "sampling_probs": list(e.sampling_probs)}
    if isinstance(e, TruncatedSubsampledGaussianEvent):
        return {"type": "TruncatedSubsampledGaussian", "dataset_size": e.dataset_size,
                "sampling_probability": e.sampling_probability,
                "truncated_batch_size": e.truncated_batch_size,
                "noise_multiplier": e.noise_multiplier}
    if isinstance(e, JsonEvent):
        return json.loads(e.text)
    if isinstance(e, LmoEvent):
        raise Error("an LMO event has no JSON form (docs/accountant.md section 7 lists the "
                    "events that have one)")
    raise Error(f"not a dpzo event: {e!r}")


def to_json(event: Event, indent: Any = None) -> str:
    """``event`` written as JSON (docs/accountant.md section 7), for ``dpzo epsilon --event
    FILE``, a claim's "event" or :func:`event_from_json`. Floats are written so that they
    read back as the same doubles. An LMO event has no JSON form (dpzo.Error)."""
    _event("event", event)
    try:
        return json.dumps(_to_obj(event), indent=indent, allow_nan=False)
    except ValueError as e:  # NaN or an infinity: no JSON number holds it
        raise Error(f"the event cannot be written as JSON: {e}") from None


# ---- building the C tree ---------------------------------------------------------

def contains_lmo(event: Event) -> bool:
    """Whether an LmoEvent occurs anywhere in ``event``."""
    return any(isinstance(e, LmoEvent) for e in _walk(event))


def _walk(event: Event) -> Iterator[Event]:
    stack = [event]
    while stack:
        e = stack.pop()
        yield e
        if isinstance(e, (PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent,
                          RepeatAndSelectEvent, SampledWithReplacementEvent)):
            stack.append(e.event)
        elif isinstance(e, ComposedEvent):
            stack.extend(e.events)


def _build(ctx: int, e: Event) -> Any:
    """The C event of e, or NULL (None) with the message in ctx. Each C constructor takes
    ownership of its children, also when it fails, so nothing leaks on either path."""
    if isinstance(e, SelfComposedEvent):
        return _self_composed(ctx, _build(ctx, e.event), e.count)
    if isinstance(e, PoissonSampledEvent):
        return _poisson(ctx, e.sampling_probability, _build(ctx, e.event))
    if isinstance(e, GaussianEvent):
        return _gaussian(ctx, e.noise_multiplier)
    if isinstance(e, SampledWithoutReplacementEvent):
        return _wor(ctx, e.sample_size, e.source_dataset_size, _build(ctx, e.event))
    if isinstance(e, LaplaceEvent):
        return _laplace(ctx, e.noise_multiplier)
    if isinstance(e, ComposedEvent):
        n = len(e.events)
        arr = (_vp * max(n, 1))(*[_build(ctx, c) for c in e.events])
        return _composed(ctx, arr, n)
    if isinstance(e, NoOpEvent):
        return _composed(ctx, None, 0)
    if isinstance(e, NonPrivateEvent):
        return _non_private(ctx)
    if isinstance(e, ZcdpEvent):
        return _zcdp(ctx, e.rho, e.xi)
    if isinstance(e, RandomizedResponseEvent):
        return _rr(ctx, e.noise_parameter, e.num_buckets)
    if isinstance(e, DiscreteLaplaceEvent):
        return _dlap(ctx, e.noise_parameter, e.sensitivity)
    if isinstance(e, SingleEpochTreeAggregationEvent):
        n = len(e.step_counts)
        return _tree(ctx, e.noise_multiplier, (ctypes.c_uint64 * n)(*e.step_counts), n)
    if isinstance(e, MultiEpochTreeAggregationEvent):
        return _tree_multi(ctx, e.noise_multiplier, e.total_steps, e.max_participation,
                           e.min_separation)
    if isinstance(e, RepeatAndSelectEvent):
        return _repeat_select(ctx, _build(ctx, e.event), e.mean, e.shape)
    if isinstance(e, SampledWithReplacementEvent):
        return _wr(ctx, e.source_dataset_size, e.sample_size, _build(ctx, e.event))
    if isinstance(e, MixtureOfGaussiansEvent):
        n = len(e.sensitivities)
        arr = ctypes.c_double * max(n, 1)
        return _mog(ctx, e.standard_deviation, arr(*e.sensitivities), arr(*e.sampling_probs), n)
    if isinstance(e, TruncatedSubsampledGaussianEvent):
        return _tsg(ctx, e.dataset_size, e.sampling_probability, e.truncated_batch_size,
                    e.noise_multiplier)
    if isinstance(e, JsonEvent):
        out = _vp()
        _parse_json(ctx, e.text.encode("utf-8"), ctypes.byref(out))
        return out.value
    raise AssertionError(f"unexpected event type {type(e).__name__}")  # LMO is checked before


def build(event: Event) -> int:
    """A new C event for ``event`` (the caller frees it with :func:`free`); raises
    dpzo.Error with the library's message where a constructor refuses a value."""
    _event("event", event)
    if contains_lmo(event):
        raise Error("unsupported: an LMO event is accounted only alone, as "
                    "SelfComposedEvent(LmoEvent | PoissonSampledEvent(q, LmoEvent) | "
                    "SampledWithoutReplacementEvent(n, b, LmoEvent), T) (dpzo.lmo); "
                    f"got {event!r}", 3)
    ctx = _lib.ctx()
    ptr = _build(ctx, event)
    if not ptr:
        msg = (_lib.lib.dpzo_ctx_errmsg(ctx) or b"").decode("utf-8", "replace")
        raise Error(msg or "invalid event", 2 if msg.startswith("out of memory") else 1)
    return int(ptr)


def free(ptr: int) -> None:
    _free(ptr)


class c_event:
    """``with c_event(event) as ptr:`` builds the C event and frees it on leaving."""

    __slots__ = ("event", "ptr")

    def __init__(self, event: Event) -> None:
        self.event = event
        self.ptr = 0

    def __enter__(self) -> int:
        self.ptr = build(self.event)
        return self.ptr

    def __exit__(self, *exc: object) -> None:
        _free(self.ptr)
        self.ptr = 0
