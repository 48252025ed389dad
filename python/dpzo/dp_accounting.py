# SPDX-License-Identifier: Apache-2.0
"""dpzo.dp_accounting: dpzo's certified accountants fed with dp_accounting's own DpEvents.

A drop-in for Google's ``dp_accounting`` (``pip install dp-accounting``; this module
imports it)::

    from dp_accounting import dp_event
    from dpzo.dp_accounting import DpzoAccountant

    event = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(256 / 60000, dp_event.GaussianDpEvent(1.1)), 14063)
    acc = DpzoAccountant()                 # was: rdp.RdpAccountant()
    acc.compose(event)
    acc.get_epsilon(1e-5)                  # dpzo's proven upper bound (float)
    acc.epsilon(1e-5)                      # the full dpzo.Epsilon (estimate, lower, order...)

:class:`DpzoAccountant` is a ``dp_accounting.PrivacyAccountant``: ``supports``, ``compose``,
``ledger``, ``get_epsilon``, ``get_delta`` and ``neighboring_relation`` behave as
dp_accounting's accountants do. The events dpzo can analyse are converted to dpzo's events
(:mod:`dpzo.events`) and accounted by the C library:

* ``GaussianDpEvent``, ``LaplaceDpEvent`` (under either relation: their noise is stated
  relative to the sensitivity for the accountant's relation);
* ``PoissonSampledDpEvent`` wrapping Gaussians (``Composed``/``SelfComposed`` trees of
  them; with PLD/PRV also a ``LaplaceDpEvent``): only with ``ADD_OR_REMOVE_ONE``, the
  relation dpzo's Poisson analysis proves;
* ``SampledWithoutReplacementDpEvent`` wrapping Gaussians: only with ``REPLACE_ONE``, the
  relation dpzo's without-replacement analysis proves;
* ``SelfComposedDpEvent``, ``ComposedDpEvent`` and ``NoOpDpEvent``;
* ``NonPrivateDpEvent`` (epsilon +inf), ``ZCDpEvent`` (RDP xi + rho alpha; PLD/PRV answer
  with the RDP bound) and ``DiscreteLaplaceDpEvent`` under either relation (its sensitivity
  is stated for the accountant's relation);
* ``RandomizedResponseDpEvent``: only with ``REPLACE_ONE`` (the true bucket changes), as in
  dp_accounting;
* ``SingleEpochTreeAggregationDpEvent`` (DP-FTRL): only with ``REPLACE_SPECIAL`` (a record
  replaced by the special record in its own position), as in dp_accounting: the Gaussian
  mechanism of squared sensitivity ceil(log2(max(step_counts) + 1)).
* ``RepeatAndSelectDpEvent`` (private selection, Papernot-Steinke 2022) around any event
  dpzo accepts under the accountant's relation (the theorem holds for any relation): RDP
  bound; PLD/PRV answer with it and say so;
* ``SampledWithReplacementDpEvent`` wrapping Gaussians: only with ``REPLACE_ONE`` (no
  dp_accounting accountant supports it; dpzo's RDP bound is derived in docs/accountant.md
  3.7); PLD/PRV answer with the RDP bound.

Under ``REPLACE_SPECIAL`` the unsampled mechanisms (Gaussian, Laplace, non-private, zCDP,
discrete Laplace, their compositions) are accepted too (their noise is stated relative to
the sensitivity for that relation); the samplers and randomized response are refused, as
dp_accounting's RDP accountant refuses them.

* ``MixtureOfGaussiansDpEvent`` under ``ADD_OR_REMOVE_ONE`` or ``REPLACE_SPECIAL`` (the
  relations dp_accounting's PLD accountant takes it under): both Renyi divergences by a
  certified quadrature; PLD/PRV answer with the RDP bound;
* ``TruncatedSubsampledGaussianDpEvent``: only with ``ADD_OR_REMOVE_ONE``, the relation
  dpzo's bound is proven for (docs/accountant.md 3.8); PLD/PRV answer with the RDP bound.

``UnsupportedDpEvent`` is refused by name, as dp_accounting's accountants refuse it.
Anything else and
any event under a relation dpzo cannot prove it for is refused: ``supports`` answers
``False`` and ``compose`` raises :class:`UnsupportedDpEventError` (a :class:`dpzo.Error`
and a dp_accounting ``UnsupportedEventError``) naming the event and why.
"""
from __future__ import annotations

import numbers
from typing import Any, Optional, Union

try:
    from dp_accounting import dp_event as _dpe
    from dp_accounting import dp_event_builder
    from dp_accounting.privacy_accountant import (
        NeighboringRelation,
        PrivacyAccountant,
        UnsupportedEventError,
    )
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("dpzo.dp_accounting needs dp_accounting: pip install dp-accounting") \
        from _e

from . import (
    ComposedEvent,
    Delta,
    Epsilon,
    Error,
    GaussianEvent,
    LaplaceEvent,
    DiscreteLaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PldAccountant,
    PoissonSampledEvent,
    PrvAccountant,
    RdpAccountant,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
    SingleEpochTreeAggregationEvent,
    RandomizedResponseEvent,
    ZcdpEvent,
)
from . import MixtureOfGaussiansEvent, TruncatedSubsampledGaussianEvent

__all__ = ["DpzoAccountant", "UnsupportedDpEventError", "to_dpzo_event", "NeighboringRelation"]

_KINDS = {"rdp": RdpAccountant, "pld": PldAccountant, "prv": PrvAccountant}
_ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE
_REPLACE = NeighboringRelation.REPLACE_ONE
_SPECIAL = NeighboringRelation.REPLACE_SPECIAL


class UnsupportedDpEventError(Error, UnsupportedEventError):
    """An event dpzo has no proven analysis for (under the accountant's relation).
    ``event`` is the offending (sub)event."""

    def __init__(self, message: str, event: Any = None) -> None:
        Error.__init__(self, message, 3)  # DPZO_EUNSUPPORTED
        self.event = event


class _Refused(Exception):
    def __init__(self, event: Any, why: str) -> None:
        super().__init__(why)
        self.event, self.why = event, why


def _relation_name(rel: NeighboringRelation) -> str:
    return rel.name


def _gaussian_tree(event: Any, outer: Any, kind: str) -> Any:
    """The inside of a sampled event: Gaussians, or Composed/SelfComposed trees of them
    (the C library's effective-sigma rule), or NoOp."""
    if isinstance(event, _dpe.GaussianDpEvent):
        return GaussianEvent(event.noise_multiplier)
    if isinstance(event, _dpe.NoOpDpEvent):
        return NoOpEvent()
    if isinstance(event, _dpe.SelfComposedDpEvent):
        return SelfComposedEvent(_gaussian_tree(event.event, outer, kind), event.count)
    if isinstance(event, _dpe.ComposedDpEvent):
        return ComposedEvent([_gaussian_tree(e, outer, kind) for e in event.events])
    raise _Refused(outer, f"{type(outer).__name__} must wrap GaussianDpEvents (or Composed/"
                          f"SelfComposed trees of them) for dpzo, found {event!r}")


def _convert(event: Any, relation: NeighboringRelation, kind: str) -> Any:
    if isinstance(event, _dpe.NoOpDpEvent):
        return NoOpEvent()
    if isinstance(event, _dpe.GaussianDpEvent):
        return GaussianEvent(event.noise_multiplier)
    if isinstance(event, _dpe.LaplaceDpEvent):
        return LaplaceEvent(event.noise_multiplier)
    if isinstance(event, _dpe.NonPrivateDpEvent):
        return NonPrivateEvent()
    if isinstance(event, _dpe.ZCDpEvent):
        return ZcdpEvent(event.rho, event.xi)
    if isinstance(event, _dpe.DiscreteLaplaceDpEvent):
        return DiscreteLaplaceEvent(event.noise_parameter, event.sensitivity)
    if isinstance(event, _dpe.RandomizedResponseDpEvent):
        if relation is not _REPLACE:
            raise _Refused(event, "randomized response changes the true bucket: dpzo proves "
                                  "it for the REPLACE_ONE relation only; this accountant's "
                                  f"is {_relation_name(relation)}")
        return RandomizedResponseEvent(event.noise_parameter, event.num_buckets)
    if isinstance(event, _dpe.SingleEpochTreeAggregationDpEvent):
        if relation is not _SPECIAL:
            raise _Refused(event, "tree aggregation keeps each record in its position of the "
                                  "stream: dpzo (as dp_accounting) proves it for the "
                                  "REPLACE_SPECIAL relation only; this accountant's is "
                                  f"{_relation_name(relation)}")
        counts = event.step_counts
        return SingleEpochTreeAggregationEvent(
            event.noise_multiplier, counts if hasattr(counts, "__iter__") else [counts])
    if isinstance(event, _dpe.MixtureOfGaussiansDpEvent):
        if relation is _REPLACE:
            raise _Refused(event, "a mixture of Gaussians is stated for the ADD_OR_REMOVE_ONE "
                                  "or REPLACE_SPECIAL relation (as in dp_accounting); this "
                                  f"accountant's is {_relation_name(relation)}")
        return MixtureOfGaussiansEvent(event.standard_deviation, list(event.sensitivities),
                                       list(event.sampling_probs))
    if isinstance(event, _dpe.TruncatedSubsampledGaussianDpEvent):
        if relation is not _ADD_REMOVE:
            raise _Refused(event, "dpzo proves truncated Poisson sampling for the "
                                  "ADD_OR_REMOVE_ONE relation only; this accountant's is "
                                  f"{_relation_name(relation)}")
        return TruncatedSubsampledGaussianEvent(event.dataset_size, event.sampling_probability,
                                                event.truncated_batch_size,
                                                event.noise_multiplier)
    if isinstance(event, _dpe.UnsupportedDpEvent):
        raise _Refused(event, "UnsupportedDpEvent has no privacy analysis by definition")
    if isinstance(event, _dpe.SelfComposedDpEvent):
        return SelfComposedEvent(_convert(event.event, relation, kind), event.count)
    if isinstance(event, _dpe.ComposedDpEvent):
        return ComposedEvent([_convert(e, relation, kind) for e in event.events])
    if isinstance(event, _dpe.PoissonSampledDpEvent):
        if relation is not _ADD_REMOVE:
            raise _Refused(event, "dpzo proves Poisson sampling for the ADD_OR_REMOVE_ONE "
                                  f"relation only; this accountant's is "
                                  f"{_relation_name(relation)}")
        if isinstance(event.event, _dpe.LaplaceDpEvent):
            if kind == "rdp":
                raise _Refused(event, "dpzo's RDP accountant has no analysis of a Poisson-"
                                      "sampled Laplace mechanism (its PLD and PRV do)")
            inner: Any = LaplaceEvent(event.event.noise_multiplier)
        else:
            inner = _gaussian_tree(event.event, event, kind)
        return PoissonSampledEvent(event.sampling_probability, inner)
    if isinstance(event, _dpe.SampledWithoutReplacementDpEvent):
        if relation is not _REPLACE:
            raise _Refused(event, "dpzo proves sampling without replacement for the "
                                  "REPLACE_ONE relation only; this accountant's is "
                                  f"{_relation_name(relation)}")
        return SampledWithoutReplacementEvent(event.source_dataset_size, event.sample_size,
                                              _gaussian_tree(event.event, event, kind))
    if isinstance(event, _dpe.RepeatAndSelectDpEvent):
        return RepeatAndSelectEvent(_convert(event.event, relation, kind), event.mean,
                                    event.shape)
    if isinstance(event, _dpe.SampledWithReplacementDpEvent):
        if relation is not _REPLACE:
            raise _Refused(event, "dpzo proves sampling with replacement for the REPLACE_ONE "
                                  "relation only; this accountant's is "
                                  f"{_relation_name(relation)}")
        return SampledWithReplacementEvent(event.source_dataset_size, event.sample_size,
                                           _gaussian_tree(event.event, event, kind))
    if isinstance(event, _dpe.DpEvent):
        raise _Refused(event, f"dpzo has no analysis for {type(event).__name__}")
    raise _Refused(event, f"not a dp_accounting DpEvent: {type(event).__name__}")


def to_dpzo_event(event: Any, neighboring_relation: NeighboringRelation = _ADD_REMOVE,
                  accountant: str = "rdp") -> Any:
    """The dpzo event for a dp_accounting ``DpEvent`` (what :class:`DpzoAccountant`
    composes). Raises :class:`UnsupportedDpEventError` naming the (sub)event dpzo cannot
    analyse under ``neighboring_relation`` with ``accountant``; bad parameters raise
    :class:`dpzo.Error` from the event's own checks."""
    try:
        return _convert(event, neighboring_relation, accountant)
    except _Refused as r:
        raise UnsupportedDpEventError(f"unsupported event {r.event!r}: {r.why}", r.event) \
            from None


class DpzoAccountant(PrivacyAccountant):
    """A dp_accounting ``PrivacyAccountant`` answered by dpzo's certified accountants.

    ``accountant``: ``"rdp"`` (default), ``"pld"`` or ``"prv"``. ``neighboring_relation``:
    ``ADD_OR_REMOVE_ONE`` (default; Poisson sampling), ``REPLACE_ONE`` (sampling without
    replacement) or ``REPLACE_SPECIAL`` (tree aggregation; unsampled mechanisms). ``options``
    go to the dpzo accountant: ``orders``/``conversion`` (RDP; ``orders="dp_accounting"``
    is dp_accounting's RdpAccountant grid), ``grid`` (alias
    ``value_discretization_interval``, PLDAccountant's name) and ``memory_limit`` (PLD),
    ``eps_error``/``delta_error``/``memory_limit`` (PRV).

    ``get_epsilon`` and ``get_delta`` return the proven upper bounds as floats;
    :meth:`epsilon` and :meth:`delta` the full :class:`dpzo.Epsilon` / :class:`dpzo.Delta`.
    """

    def __init__(self, accountant: str = "rdp",
                 neighboring_relation: NeighboringRelation = _ADD_REMOVE,
                 **options: Any) -> None:
        if not isinstance(accountant, str) or accountant.lower() not in _KINDS:
            raise Error(f"accountant must be 'rdp', 'pld' or 'prv', got {accountant!r}")
        if neighboring_relation not in (_ADD_REMOVE, _REPLACE, _SPECIAL):
            raise Error(f"neighboring_relation {neighboring_relation!r}: dpzo proves "
                        "ADD_OR_REMOVE_ONE (Poisson sampling), REPLACE_ONE (sampling "
                        "without replacement) and REPLACE_SPECIAL (tree aggregation) only")
        super().__init__(neighboring_relation)
        self.kind: str = accountant.lower()
        if "value_discretization_interval" in options:  # dp_accounting PLDAccountant's name
            if self.kind != "pld" or "grid" in options:
                raise Error("value_discretization_interval is the PLD grid: give it once, "
                            "with accountant='pld'")
            options["grid"] = options.pop("value_discretization_interval")
        try:
            self._acc = _KINDS[self.kind](**options)
        except TypeError as e:  # an option this accountant does not take
            raise Error(f"DpzoAccountant(accountant={self.kind!r}): {e}") from None

    # dp_accounting's traversal hook: supports() calls it with do_compose False.
    def _maybe_compose(self, event: Any, count: int,
                       do_compose: bool) -> Optional[PrivacyAccountant.CompositionErrorDetails]:
        try:
            converted = _convert(event, self.neighboring_relation, self.kind)
            if not do_compose:
                converted.describe()  # the library's domain checks (builds the C event)
        except _Refused as r:
            return PrivacyAccountant.CompositionErrorDetails(invalid_event=r.event,
                                                             error_message=r.why)
        except Error as e:  # bad parameters: the library's message
            return PrivacyAccountant.CompositionErrorDetails(invalid_event=event,
                                                             error_message=str(e))
        if do_compose:
            self._acc.compose(converted, count)
        return None

    def compose(self, event: Any, count: int = 1) -> "DpzoAccountant":
        """Accounts for ``count`` runs of ``event`` (a dp_accounting DpEvent); returns self.
        An event dpzo cannot analyse raises :class:`UnsupportedDpEventError` naming it; bad
        parameters raise :class:`dpzo.Error` with the library's message; either way
        nothing is composed."""
        if not isinstance(event, _dpe.DpEvent):
            raise Error(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            # dp_accounting's ledger takes counts >= 1 (a count 0 is SelfComposedDpEvent(e, 0))
            raise Error(f"count must be an integer >= 1, got {count!r}")
        try:
            converted = _convert(event, self.neighboring_relation, self.kind)
        except _Refused as r:
            raise UnsupportedDpEventError(
                f"unsupported event {r.event!r}: {r.why}", r.event) from None
        try:  # what dp_accounting's ledger refuses (a top-level repetition count 0)
            dp_event_builder.DpEventBuilder().compose(event, int(count))
        except (TypeError, ValueError) as e:
            raise Error(f"dp_accounting's ledger refuses {event!r} x {count}: {e}") from None
        self._acc.compose(converted, int(count))  # the library's checks: may raise
        self._ledger.compose(event, int(count))
        return self

    def get_epsilon(self, target_delta: float) -> float:
        """The proven upper bound on epsilon at ``target_delta`` for what was composed."""
        return float(self._acc.epsilon(target_delta))

    def get_delta(self, target_epsilon: float) -> float:
        """The proven upper bound on delta at ``target_epsilon`` for what was composed."""
        return float(self._acc.delta(target_epsilon))

    def epsilon(self, delta: float) -> Epsilon:
        """dpzo's full answer (:class:`dpzo.Epsilon`: upper bound, estimate, lower bound
        with PLD/PRV, order with RDP)."""
        return self._acc.epsilon(delta)

    def delta(self, epsilon: float) -> Delta:
        """dpzo's full answer (:class:`dpzo.Delta`)."""
        return self._acc.delta(epsilon)

    @property
    def dpzo_accountant(self) -> Union[RdpAccountant, PldAccountant, PrvAccountant]:
        """The dpzo accountant holding the converted events (its ``ledger`` is dpzo's)."""
        return self._acc
