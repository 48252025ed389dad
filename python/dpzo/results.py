# SPDX-License-Identifier: Apache-2.0
"""dpzo.results: what the accountants and the shortcuts return.

Frozen dataclasses. Every number in them comes from a C call of the library; ``float(r)``
is the proven upper bound (the value a guarantee may quote). ``lower`` is a proven lower
bound where the accountant gives one (PLD, PRV), else ``None``; ``estimate`` is the
accountant's point value and is not a guarantee. No field is ever NaN: a quantity the
accountant does not have is ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Epsilon", "Delta", "Calibration"]


@dataclass(frozen=True)
class Epsilon:
    """epsilon(delta) of a privacy event.

    ``epsilon`` is a proven upper bound on the event's epsilon at ``delta``;
    ``lower`` a proven lower bound (PLD/PRV; ``None`` for RDP, which gives none);
    ``estimate`` the point value. ``order`` is the Renyi order that achieved the RDP
    bound (RDP only). ``fallback`` is true when a tight accountant consulted the RDP
    accountant (its upper end is then min(tight, RDP)) and ``reason`` says why; for RDP
    ``reason`` notes an optimum at the edge of the allowed orders or a rounded
    composition, and is ``""`` otherwise.
    """

    epsilon: float
    lower: Optional[float]
    estimate: float
    delta: float
    accountant: str
    order: Optional[float]
    fallback: bool
    reason: str

    def __float__(self) -> float:
        return self.epsilon


@dataclass(frozen=True)
class Delta:
    """delta(epsilon) of a privacy event: ``delta`` is a proven upper bound, ``lower`` a
    proven lower bound (PLD/PRV) or ``None``, ``estimate`` the point value."""

    delta: float
    lower: Optional[float]
    estimate: float
    epsilon: float
    accountant: str
    order: Optional[float]
    fallback: bool
    reason: str

    def __float__(self) -> float:
        return self.delta


@dataclass(frozen=True)
class Calibration:
    """The smallest noise multiplier meeting a target (epsilon, delta).

    ``noise_multiplier`` is certified: the accountant's proven epsilon there,
    ``epsilon``, is at most the target. ``tight_to`` is the noise multiplier one tolerance
    step below, which misses the target (``None`` when no value misses it: every noise
    multiplier down to the search's end meets the target, or no privacy is spent).
    ``lower`` is the proven lower bound on epsilon at the answer (PLD/PRV), ``order`` the
    Renyi order of the certified bound (RDP). ``steps`` is the number of steps accounted
    (``epochs`` converted), ``evaluations`` the accountant calls spent.
    """

    noise_multiplier: float
    epsilon: float
    lower: Optional[float]
    order: Optional[float]
    tight_to: Optional[float]
    evaluations: int
    accountant: str
    delta: float
    steps: int

    def __float__(self) -> float:
        return self.noise_multiplier
