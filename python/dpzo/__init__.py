# SPDX-License-Identifier: Apache-2.0
"""dpzo: certified differential-privacy accounting (RDP, PLD, PRV), LMO-DP noise search and
audits, calling the dpzo C library through ctypes (nothing is re-implemented in Python).

Quick start (docs/python.md)::

    import dpzo
    r = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256/60000, steps=14063, delta=1e-5)
    r.epsilon            # 2.5966..., a proven upper bound
    c = dpzo.calibrate(epsilon=3.0, delta=1e-5, sampling_rate=256/60000, steps=14063)
    c.noise_multiplier   # certified: its epsilon is <= 3

Every failure raises :class:`dpzo.Error` (a ValueError) with the library's message.
"""
from __future__ import annotations

import ctypes as _ctypes

from . import _lib
from ._data import data_file, data_files
from .accountants import PldAccountant, PrvAccountant, RdpAccountant
from .errors import Error
from .events import (ComposedEvent, DiscreteLaplaceEvent, Event, GaussianEvent, LaplaceEvent,
                     LmoEvent, NonPrivateEvent, NoOpEvent, PoissonSampledEvent,
                     RandomizedResponseEvent, SampledWithoutReplacementEvent,
                     SelfComposedEvent, SingleEpochTreeAggregationEvent, ZcdpEvent)
from .events import RepeatAndSelectEvent, SampledWithReplacementEvent
from .events import MixtureOfGaussiansEvent, TruncatedSubsampledGaussianEvent
from .events import JsonEvent, event_from_json, to_json  # issue 30: events as JSON
from .events import MultiEpochTreeAggregationEvent, tree_sensitivity_squared
from .results import Calibration, Delta, Epsilon
from .shortcuts import calibrate, epsilon

# --- profiles, lmo, audit (extra helper)
from .audit import AuditBounds, Claim, Verdict, audit
from .lmo import Lmo, LmoEpsilon, LmoRdp, LmoSearchResult, LmoStats, lmo_epsilon, lmo_search
from .profiles import Profile, ProfileCheck, gaussian_profile

_extra_all = ["Lmo", "LmoStats", "LmoRdp", "LmoEpsilon", "LmoSearchResult", "lmo_epsilon",
              "lmo_search", "Profile", "ProfileCheck", "gaussian_profile", "Claim", "Verdict",
              "AuditBounds", "audit"]
# --- end of profiles, lmo, audit


def _version() -> str:
    """The loaded library's version (dpzo_version)."""
    f = _lib.fn("dpzo_version", _ctypes.c_char_p, [])
    return str(f().decode())


__version__ = _version()

__all__ = ["__version__", "Error", "Event", "GaussianEvent", "LaplaceEvent", "LmoEvent",
           "PoissonSampledEvent", "SampledWithoutReplacementEvent", "SelfComposedEvent",
           "ComposedEvent", "NoOpEvent", "NonPrivateEvent", "ZcdpEvent",
           "RandomizedResponseEvent", "DiscreteLaplaceEvent",
           "SingleEpochTreeAggregationEvent", "MultiEpochTreeAggregationEvent",
           "tree_sensitivity_squared", "RdpAccountant", "PldAccountant", "PrvAccountant",
           "Epsilon", "Delta", "Calibration", "epsilon", "calibrate", "data_file",
           "data_files", "RepeatAndSelectEvent", "SampledWithReplacementEvent",
           "JsonEvent", "event_from_json", "to_json"] + _extra_all
__all__ += ["MixtureOfGaussiansEvent", "TruncatedSubsampledGaussianEvent"]
