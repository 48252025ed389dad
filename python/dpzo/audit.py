# SPDX-License-Identifier: Apache-2.0
"""dpzo.audit: published (epsilon, delta) claims against proven bounds (docs/audit.md).

For each claim the true epsilon of the stated mechanism is bracketed between a proven
lower bound (a tight accountant's lower end on a pair of datasets the stated sampling can
produce) and a proven upper bound (the smallest of the certified RDP, PLD and PRV
accountants' upper bounds), and the verdict follows:

- ``"HOLDS"``: upper <= claimed epsilon, the mechanism is (epsilon, delta)-DP as claimed;
- ``"VIOLATED"``: lower > claimed epsilon, it is NOT (epsilon, delta)-DP;
- ``"UNDETERMINED"``: the claim lies inside the proven interval.

Claims are read by the C library (``dpzo_claims_read_file`` / ``dpzo_claims_from_json``,
every key checked) and audited by ``dpzo_claim_spec_audit``, exactly as ``dpzo audit``.
"""
from __future__ import annotations

import ctypes
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

from . import _lib, _structs as _S
from ._lib import call, fn
from ._check import c_text as _c_text, path as _cpath
from .errors import Error
from ._lmo_noise import _CLmo, _c_free, _choice, _count, _real, _text, Lmo
from .profiles import Profile

__all__ = ["Claim", "Verdict", "AuditBounds", "PipelineVerdict", "AttackResult", "audit"]


# ---- C structures (include/dpzo/audit.h, audit_claim.h, convert.h) ---------------------

_CRdpOptions = _S.RdpOptions  # dpzo_rdp_options


class _CClaim(ctypes.Structure):
    _fields_ = [("noise_multiplier", ctypes.c_double), ("sensitivity", ctypes.c_double),
                ("sampling", ctypes.c_int), ("sampling_rate", ctypes.c_double),
                ("batch_size", ctypes.c_uint64), ("dataset_size", ctypes.c_uint64),
                ("steps", ctypes.c_uint64), ("adjacency", ctypes.c_int),
                ("epsilon", ctypes.c_double), ("delta", ctypes.c_double),
                ("pipeline", ctypes.c_int), ("effective_batch_size", ctypes.c_uint64),
                ("has_accountant", ctypes.c_int), ("accountant", _CRdpOptions)]


class _CCounts(ctypes.Structure):
    _fields_ = [("tp", ctypes.c_uint64), ("fp", ctypes.c_uint64), ("tn", ctypes.c_uint64),
                ("fn", ctypes.c_uint64)]


class _CSpec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 160), ("source", ctypes.c_char * 640),
                ("note", ctypes.c_char * 800), ("claim", _CClaim), ("noise", ctypes.c_int),
                ("lmo", _CLmo), ("profile", ctypes.c_char * 512), ("attack", ctypes.c_int),
                ("counts", _CCounts), ("canaries", ctypes.c_uint64),
                ("guesses", ctypes.c_uint64), ("correct", ctypes.c_uint64),
                ("attack_confidence", ctypes.c_double), ("attack_delta", ctypes.c_double),
                ("event_json", ctypes.c_char_p)]


class _CBounds(ctypes.Structure):
    _fields_ = [("upper", ctypes.c_double), ("lower", ctypes.c_double),
                ("upper_from", ctypes.c_char_p), ("lower_from", ctypes.c_char_p),
                ("rdp", ctypes.c_double), ("rdp_order", ctypes.c_double),
                ("pld_upper", ctypes.c_double), ("pld_lower", ctypes.c_double),
                ("pld_grid", ctypes.c_double), ("prv_upper", ctypes.c_double),
                ("prv_lower", ctypes.c_double), ("lower_elsewhere", ctypes.c_int),
                ("upper_slack", ctypes.c_double), ("lower_slack", ctypes.c_double)]


class _COptions(ctypes.Structure):
    _fields_ = [("pld_grid", ctypes.c_double), ("pld_grid_min", ctypes.c_double),
                ("memory_limit", ctypes.c_size_t), ("prv", ctypes.c_int),
                ("calibrate", ctypes.c_int)]


_MAX_NOTES = 8


class _CResult(ctypes.Structure):
    _fields_ = [("verdict", ctypes.c_int), ("bounds", _CBounds),
                ("accounted", ctypes.c_char * 200), ("stated_epsilon", ctypes.c_double),
                ("stated_order", ctypes.c_double), ("sigma_needed", ctypes.c_double),
                ("sigma_needed_tight", ctypes.c_double), ("sigma_needed_rdp", ctypes.c_double),
                ("flags", ctypes.c_uint), ("n_notes", ctypes.c_size_t),
                ("notes", (ctypes.c_char * 360) * _MAX_NOTES), ("has_pipeline", ctypes.c_int),
                ("pipeline_verdict", ctypes.c_int), ("pipeline_bounds", _CBounds),
                ("pipeline_accounted", ctypes.c_char * 200)]


class _CAttackBound(ctypes.Structure):
    _fields_ = [("epsilon", ctypes.c_double), ("confidence", ctypes.c_double),
                ("delta", ctypes.c_double), ("fpr", ctypes.c_double), ("fnr", ctypes.c_double),
                ("fpr_upper", ctypes.c_double), ("fnr_upper", ctypes.c_double),
                ("threshold", ctypes.c_double), ("thresholds", ctypes.c_size_t),
                ("counts", _CCounts)]


class _CReport(ctypes.Structure):
    _fields_ = [("audit", _CResult), ("attack_kind", ctypes.c_int), ("attack", _CAttackBound),
                ("attack_epsilon", ctypes.c_double), ("attack_exceeds_upper", ctypes.c_int)]


_SpecP = ctypes.POINTER(_CSpec)
_read_file = fn("dpzo_claims_read_file", ctypes.c_int,
                [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_SpecP),
                 ctypes.POINTER(ctypes.c_size_t)])
_from_json = fn("dpzo_claims_from_json", ctypes.c_int,
                [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                 ctypes.POINTER(_SpecP), ctypes.POINTER(ctypes.c_size_t)])
_options_default = fn("dpzo_audit_options_default", None, [ctypes.POINTER(_COptions)])
_spec_audit = fn("dpzo_claim_spec_audit", ctypes.c_int,
                 [ctypes.c_void_p, _SpecP, ctypes.POINTER(_COptions), ctypes.POINTER(_CReport)])
_verdict_name = fn("dpzo_verdict_name", ctypes.c_char_p, [ctypes.c_int])
_sampling_name = fn("dpzo_sampling_name", ctypes.c_char_p, [ctypes.c_int])
_adjacency_name = fn("dpzo_adjacency_name", ctypes.c_char_p, [ctypes.c_int])
_claim_adjacency = fn("dpzo_claim_adjacency", ctypes.c_int, [ctypes.POINTER(_CClaim)])
_claim_sensitivity = fn("dpzo_claim_sensitivity", ctypes.c_double, [ctypes.POINTER(_CClaim)])

# The DPZO_AUDIT_* bits' names, from the library (dpzo_audit_flag_name; docs/audit.md
# section 4), in bit order.
_flag_name = fn("dpzo_audit_flag_name", ctypes.c_char_p, [ctypes.c_uint])
MISMATCHES = tuple(_flag_name(1 << k).decode() for k in range(32)
                   if _flag_name(1 << k) is not None)


def _opt(x: float) -> Optional[float]:
    return None if math.isnan(x) else x


def _s(b: Optional[bytes]) -> str:
    return (b or b"").decode("utf-8", "replace")


# ---- results ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditBounds:
    """Proven bounds on the true epsilon of a claim's mechanism (``dpzo_audit_bounds``).
    ``upper``: the smallest proven upper bound (inf if none is finite), from
    ``upper_from`` ("rdp", "pld", "prv" or "none"); ``lower``: the largest proven lower
    bound (>= 0), from ``lower_from`` ("pld", "prv", "test": the threshold test of
    docs/audit.md section 3, or "none"). The accountants' own numbers are None when not
    computed. ``lower_on_realised_pair``: the PLD's lower end was computed on a realised
    pair other than the dominating pair of the upper end (fixed and shuffled batches).
    ``upper_slack`` / ``lower_slack``: how far a finer PLD grid could move each end."""

    lower: float
    upper: float
    lower_from: str
    upper_from: str
    rdp: Optional[float]
    rdp_order: Optional[float]
    pld_lower: Optional[float]
    pld_upper: Optional[float]
    pld_grid: Optional[float]
    prv_lower: Optional[float]
    prv_upper: Optional[float]
    lower_on_realised_pair: bool
    upper_slack: Optional[float]
    lower_slack: Optional[float]

    @classmethod
    def _from_c(cls, b: _CBounds) -> "AuditBounds":
        return cls(lower=b.lower, upper=b.upper, lower_from=_s(b.lower_from),
                   upper_from=_s(b.upper_from), rdp=_opt(b.rdp), rdp_order=_opt(b.rdp_order),
                   pld_lower=_opt(b.pld_lower), pld_upper=_opt(b.pld_upper),
                   pld_grid=_opt(b.pld_grid), prv_lower=_opt(b.prv_lower),
                   prv_upper=_opt(b.prv_upper), lower_on_realised_pair=bool(b.lower_elsewhere),
                   upper_slack=_opt(b.upper_slack), lower_slack=_opt(b.lower_slack))


@dataclass(frozen=True)
class PipelineVerdict:
    """The same claim judged for the pipeline that ran (a claim naming a pipeline that
    differs from its accounted sampling)."""

    sampling: str
    accounted: str
    verdict: str
    bounds: AuditBounds

    @property
    def lower(self) -> float:
        return self.bounds.lower

    @property
    def upper(self) -> float:
        return self.bounds.upper


@dataclass(frozen=True)
class AttackResult:
    """An attack on the claim's run: ``epsilon_lower`` is its lower bound on epsilon at
    ``confidence`` (a statistical statement about the attacked implementation);
    ``exceeds_upper``: it exceeds the proven upper bound, so the attacked run is not the
    accounted mechanism (or the attack's own assumptions failed)."""

    kind: str               # "membership-inference" or "one-run"
    epsilon_lower: float
    confidence: float
    delta: float
    exceeds_upper: bool


@dataclass(frozen=True)
class Verdict:
    """The audit of one claim (``dpzo_claim_report``; the fields of ``dpzo audit --json``).

    ``verdict`` is "HOLDS", "VIOLATED" or "UNDETERMINED"; ``lower`` and ``upper`` the proven
    interval for the true epsilon at the claimed delta; ``claimed_epsilon`` and ``delta``
    the claim. ``stated_epsilon``: the claim under the authors' own accountant (None: not
    stated). ``sigma_needed``: the smallest Gaussian noise multiplier (units of C, to 1e-3
    relative) whose proven epsilon meets the claim (``sigma_needed_tight``: with the tight
    accountant, ``sigma_needed_rdp``: RDP alone; None when not computed). ``mismatches``:
    the assumption mismatches detected (docs/audit.md section 4); ``notes`` one line each."""

    name: str
    source: str
    noise: str                        # "gaussian", "lmo" or "event" (a claim about an event)
    noise_multiplier: Optional[float]
    lmo: Optional[Lmo]
    sampling: str
    steps: int
    adjacency: str                    # the adjacency accounted
    sensitivity: float                # in units of C
    claimed_epsilon: float
    delta: float
    accounted: str
    verdict: str
    lower: float
    upper: float
    bounds: AuditBounds
    stated_epsilon: Optional[float]
    stated_order: Optional[float]
    sigma_needed: Optional[float]
    sigma_needed_tight: Optional[float]
    sigma_needed_rdp: Optional[float]
    mismatches: tuple[str, ...]
    notes: tuple[str, ...]
    pipeline: Optional[PipelineVerdict]
    attack: Optional[AttackResult]
    event: Optional[str] = None       # an event claim's event, as JSON text

    @property
    def holds(self) -> bool:
        return self.verdict == "HOLDS"

    @property
    def violated(self) -> bool:
        return self.verdict == "VIOLATED"


# ---- claims ----------------------------------------------------------------------------

SCHEMES = ("poisson", "fixed", "shuffled", "full")
ADJACENCIES = ("add-remove", "replace-one", "zero-out")


@dataclass(frozen=True)
class Claim:
    """One claim (the keys of a claim file entry, docs/audit.md section 2.1).

    Mechanism: exactly one of ``noise_multiplier`` (Gaussian sigma), ``lmo`` (the LMO
    noise, one scalar release of C*X per step) and ``profile`` (a noise profile file, or a
    :class:`dpzo.Profile` whose noise is used). ``sensitivity``: of the noised sum in units
    of C (default: 1 add-remove / zero-out, 2 replace-one).

    Sampling ``sampling``: "poisson" (``sampling_rate`` q, or ``batch_size`` and
    ``dataset_size``), "fixed" (B of n without replacement each step), "shuffled" (each
    epoch shuffles and cuts batches of B) or "full" (optional ``dataset_size``). Exactly
    one of ``steps`` and ``epochs`` (T = ceil(E n / B), or ceil(E / q)).

    Optional: ``adjacency`` ("add-remove", "replace-one", "zero-out"), ``pipeline`` (how
    the code drew batches when it differs), ``effective_batch_size``, ``accountant`` (the
    authors' accountant: ``{"orders": "tf" | "opacus" | "dp_accounting" | "continuous" |
    [alpha, ...] | {"from", "to", "step"}, "conversion": "standard" | "improved"}``),
    ``attack`` (``{"tp", "fp", "tn", "fn"}`` or ``{"canaries", "guesses", "correct"}``, with
    optional ``"confidence"`` and ``"delta"``), ``name``, ``source``, ``note``.
    The C reader checks every value; a bad one raises dpzo.Error naming the key."""

    epsilon: float
    delta: float
    noise_multiplier: Optional[float] = None
    lmo: Optional[Lmo] = None
    profile: Union[None, str, "os.PathLike[str]", Profile] = None
    sampling: str = "poisson"
    sampling_rate: Optional[float] = None
    batch_size: Optional[int] = None
    dataset_size: Optional[int] = None
    steps: Optional[int] = None
    epochs: Optional[float] = None
    sensitivity: Optional[float] = None
    adjacency: Optional[str] = None
    pipeline: Optional[str] = None
    effective_batch_size: Optional[int] = None
    accountant: Optional[Mapping[str, Any]] = None
    attack: Optional[Mapping[str, Any]] = None
    name: Optional[str] = None
    source: Optional[str] = None
    note: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """The claim as a claim file's object ({"format": "dpzo-claim", ...})."""
        mech: dict[str, Any]
        given = [k for k in ("noise_multiplier", "lmo", "profile")
                 if getattr(self, k) is not None]
        if len(given) != 1:
            raise Error("a claim needs exactly one mechanism: noise_multiplier, lmo or "
                        f"profile (got {', '.join(given) or 'none'})")
        if self.noise_multiplier is not None:
            mech = {"noise": "gaussian",
                    "noise_multiplier": _real("noise_multiplier", self.noise_multiplier)}
        elif self.lmo is not None:
            if not isinstance(self.lmo, Lmo):
                raise Error(f"lmo must be a dpzo.Lmo, got {self.lmo!r}")
            mech = {"noise": "lmo", **self.lmo.to_dict()}
        else:
            if isinstance(self.profile, Profile):
                raise Error("a Claim's profile must be a file path here; pass the Profile "
                            "itself to dpzo.audit() to audit it as a claim")
            mech = {"profile": os.path.abspath(_text("profile", self.profile))}
        if self.sensitivity is not None:
            mech["sensitivity"] = _real("sensitivity", self.sensitivity)
        smp: dict[str, Any] = {"scheme": _choice("sampling", self.sampling, SCHEMES)}
        if self.sampling_rate is not None:
            smp["rate"] = _real("sampling_rate", self.sampling_rate)
        if self.batch_size is not None:
            smp["batch_size"] = _count("batch_size", self.batch_size)
        if self.dataset_size is not None:
            smp["dataset_size"] = _count("dataset_size", self.dataset_size)
        d: dict[str, Any] = {"format": "dpzo-claim"}
        for k in ("name", "source", "note"):
            v = getattr(self, k)
            if v is not None:
                if not isinstance(v, str):
                    raise Error(f"{k} must be a string, got {v!r}")
                d[k] = v
        d["mechanism"] = mech
        d["sampling"] = smp
        if (self.steps is None) == (self.epochs is None):
            raise Error("give exactly one of steps and epochs")
        if self.steps is not None:
            d["steps"] = _count("steps", self.steps)
        else:
            d["epochs"] = _real("epochs", self.epochs)
        d["epsilon"] = _real("epsilon", self.epsilon)
        d["delta"] = _real("delta", self.delta)
        if self.adjacency is not None:
            d["adjacency"] = _choice("adjacency", self.adjacency, ADJACENCIES)
        if self.pipeline is not None:
            d["pipeline"] = _choice("pipeline", self.pipeline, SCHEMES)
        if self.effective_batch_size is not None:
            d["effective_batch_size"] = _count("effective_batch_size",
                                               self.effective_batch_size)
        for k in ("accountant", "attack"):
            v = getattr(self, k)
            if v is not None:
                if not isinstance(v, Mapping):
                    raise Error(f"{k} must be a mapping, got {v!r}")
                d[k] = dict(v)
        return d

    def to_json(self) -> str:
        try:
            return json.dumps(self.to_dict(), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error(f"claim: not representable as JSON ({e})") from None


# ---- the audit -------------------------------------------------------------------------

ClaimsArg = Union[str, "os.PathLike[str]", Claim, Profile,
                  Sequence[Union[Claim, Profile, Mapping[str, Any], str, "os.PathLike[str]"]]]


class _Specs:
    """A malloc'ed array of dpzo_claim_spec (one allocation; freed with free())."""

    def __init__(self) -> None:
        self.ptr = _SpecP()
        self.n = ctypes.c_size_t(0)

    def close(self) -> None:
        if self.ptr:
            _c_free(ctypes.cast(self.ptr, ctypes.c_void_p).value)
        self.ptr = _SpecP()

    def __del__(self) -> None:
        self.close()


def _load(item: Any, index: int) -> _Specs:
    sp = _Specs()
    if isinstance(item, (str, os.PathLike)):
        call(_read_file, _cpath(f"claim {index + 1}", item), ctypes.byref(sp.ptr),
             ctypes.byref(sp.n))
        return sp
    if isinstance(item, Claim):
        text = item.to_json()
    elif isinstance(item, Profile):
        text = item.to_json()
    elif isinstance(item, Mapping):
        try:
            text = json.dumps(dict(item), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error(f"claim {index + 1}: not representable as JSON ({e})") from None
    else:
        raise Error(f"claim {index + 1} must be a dpzo.Claim, a dpzo.Profile, a claim dict or "
                    f"a claim file's path, got {item!r}")
    what = f"claim {index + 1}" if not (isinstance(item, Claim) and item.name) else \
        f"claim {index + 1} ({item.name})"
    call(_from_json, _c_text(what, text.encode("utf-8")), None, what.encode("utf-8"),
         ctypes.byref(sp.ptr),
         ctypes.byref(sp.n))
    return sp


def _verdict(spec: _CSpec, r: _CReport) -> Verdict:
    c, a = spec.claim, r.audit
    lmo, ev = spec.noise == 1, spec.noise == 2
    notes = tuple(_s(bytes(a.notes[k]).split(b"\0", 1)[0])
                  for k in range(min(int(a.n_notes), _MAX_NOTES)))
    pipeline = None
    if a.has_pipeline:
        pipeline = PipelineVerdict(sampling=_s(_sampling_name(c.pipeline)),
                                   accounted=_s(a.pipeline_accounted),
                                   verdict=_s(_verdict_name(a.pipeline_verdict)),
                                   bounds=AuditBounds._from_c(a.pipeline_bounds))
    attack = None
    if r.attack_kind != 0:
        attack = AttackResult(
            kind="membership-inference" if r.attack_kind == 1 else "one-run",
            epsilon_lower=r.attack_epsilon, confidence=r.attack.confidence,
            delta=r.attack.delta, exceeds_upper=bool(r.attack_exceeds_upper))
    return Verdict(
        name=_s(spec.name), source=_s(spec.source),
        noise="lmo" if lmo else "event" if ev else "gaussian",
        noise_multiplier=None if lmo or ev else c.noise_multiplier,
        lmo=Lmo._from_c(spec.lmo) if lmo else None, sampling=_s(_sampling_name(c.sampling)),
        steps=int(c.steps), adjacency=_s(_adjacency_name(_claim_adjacency(ctypes.byref(c)))),
        sensitivity=float(_claim_sensitivity(ctypes.byref(c))), claimed_epsilon=c.epsilon,
        delta=c.delta, accounted=_s(a.accounted), verdict=_s(_verdict_name(a.verdict)),
        lower=a.bounds.lower, upper=a.bounds.upper, bounds=AuditBounds._from_c(a.bounds),
        stated_epsilon=_opt(a.stated_epsilon),
        stated_order=_opt(a.stated_order) if not math.isnan(a.stated_epsilon) else None,
        sigma_needed=_opt(a.sigma_needed), sigma_needed_tight=_opt(a.sigma_needed_tight),
        sigma_needed_rdp=_opt(a.sigma_needed_rdp),
        mismatches=tuple(m for k, m in enumerate(MISMATCHES) if a.flags & (1 << k)),
        notes=notes, pipeline=pipeline, attack=attack,
        event=_s(spec.event_json) if ev and spec.event_json else None)


def audit(claims: ClaimsArg, *, grid: Optional[float] = None, grid_min: Optional[float] = None,
          prv: bool = True, calibrate: bool = True,
          memory_limit: Optional[int] = None) -> list[Verdict]:
    """Audits claims (``dpzo audit``): a claim file's path (docs/audit.md section 2.1; a
    noise profile file is a claim too: its stored epsilon), a :class:`Claim`, a
    :class:`dpzo.Profile`, a claim dict, or a sequence of these. Returns one
    :class:`Verdict` per claim, in order (a file holding several claims gives several).

    ``grid``: the first PLD grid (default 1e-4), refined 10x down to ``grid_min``
    (default 1e-6, never above ``grid``) while a claim is UNDETERMINED; ``prv=False``
    skips the PRV accountant; ``calibrate=False`` skips the noise multiplier the claim
    needed; ``memory_limit``: bytes one tight computation may hold (default 1 GiB).
    A claim that is checked is not an error whatever its verdict; a claim that cannot be
    read or accounted raises dpzo.Error."""
    if isinstance(claims, (str, os.PathLike, Claim, Profile, Mapping)):
        items: list[Any] = [claims]
    elif isinstance(claims, Sequence):
        items = list(claims)
    else:
        raise Error(f"claims must be a claim file's path, a dpzo.Claim, a dpzo.Profile or a "
                    f"sequence of them, got {claims!r}")
    if not items:
        raise Error("no claim to audit")
    for flag, v in (("prv", prv), ("calibrate", calibrate)):
        if v is not True and v is not False:
            raise Error(f"{flag} must be True or False, got {v!r}")
    opts = _COptions()
    _options_default(ctypes.byref(opts))
    if grid is not None:
        g = _real("grid", grid)
        if not (0 < g <= 1):
            raise Error(f"grid must be in (0, 1], got {g!r}")
        opts.pld_grid = g
        if opts.pld_grid_min > g:
            opts.pld_grid_min = g
    if grid_min is not None:
        gm = _real("grid_min", grid_min)
        if not (0 < gm <= opts.pld_grid):
            raise Error(f"grid_min must be in (0, grid = {opts.pld_grid!r}], got {gm!r}")
        opts.pld_grid_min = gm
    if memory_limit is not None:
        opts.memory_limit = _count("memory_limit", memory_limit, minimum=1)
    opts.prv = 1 if prv else 0
    opts.calibrate = 1 if calibrate else 0
    loaded = [_load(item, i) for i, item in enumerate(items)]
    out: list[Verdict] = []
    try:
        for sp in loaded:
            for k in range(sp.n.value):
                spec = sp.ptr[k]
                rep = _CReport()
                st = _spec_audit(_lib.ctx(), ctypes.byref(spec), ctypes.byref(opts),
                                 ctypes.byref(rep))
                if st:
                    _lib.check(st, _s(spec.name) or None)
                out.append(_verdict(spec, rep))
    finally:
        for sp in loaded:
            sp.close()
    return out
