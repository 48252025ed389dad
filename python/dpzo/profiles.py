# SPDX-License-Identifier: Apache-2.0
"""dpzo.profiles: noise profiles (docs/profile.md), the JSON file that tells a training run
which noise to add and what it costs.

:class:`Profile` mirrors the C ``dpzo_profile``. Every reading goes through the C reader
(``dpzo_profile_from_json``), which checks the format, the schema, every field and the
SHA-256 checksum and names the bad field; every writing through ``dpzo_profile_to_json``,
which validates again and checksums. :meth:`Profile.verify` recomputes the guarantee
(``dpzo_profile_verify``): a profile may claim more epsilon than its noise costs, never
less. :func:`gaussian_profile` calibrates a Gaussian noise for a target
(``dpzo_profile_gaussian``); :meth:`dpzo.LmoSearchResult.profile` turns an LMO search's
winner into a profile.
"""
from __future__ import annotations

import ctypes
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _lib
from ._lib import call, fn
from ._check import c_text as _c_text, path as _cpath
from .errors import Error
from ._lmo_noise import _CLmo, _c_free, _choice, _count, _real, _sampling, _text, _uint, Lmo

if TYPE_CHECKING:
    from .lmo import LmoSearchResult

__all__ = ["Profile", "ProfileCheck", "gaussian_profile"]

PathLike = Union[str, "os.PathLike[str]"]


class _CProfile(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("noise_multiplier", ctypes.c_double),
        ("lmo", _CLmo),
        ("sensitivity", ctypes.c_double),
        ("clip", ctypes.c_char * 16),
        ("queries_per_step", ctypes.c_uint),
        ("accountant", ctypes.c_char * 16),
        ("bound", ctypes.c_char * 16),
        ("sampling", ctypes.c_char * 16),
        ("sampling_rate", ctypes.c_double),
        ("batch_size", ctypes.c_uint64),
        ("dataset_size", ctypes.c_uint64),
        ("steps", ctypes.c_uint64),
        ("delta", ctypes.c_double),
        ("adjacency", ctypes.c_char * 16),
        ("epsilon", ctypes.c_double),
        ("epsilon_bound", ctypes.c_char * 64),
        ("order", ctypes.c_double),
        ("eps0", ctypes.c_double),
        ("n_orders", ctypes.c_size_t),
        ("orders", _lib.c_double_p),
        ("rdp", _lib.c_double_p),
        ("has_objective", ctypes.c_int),
        ("objective", ctypes.c_char * 16),
        ("objective_value", ctypes.c_double),
        ("usefulness_gamma", ctypes.c_double),
        ("usefulness", ctypes.c_double),
        ("mean_abs", ctypes.c_double),
        ("variance", ctypes.c_double),
        ("grid", ctypes.c_char * 64),
        ("grid_index", ctypes.c_long),
        ("version", ctypes.c_char * 16),
        ("command", ctypes.c_char * 512),
        ("created", ctypes.c_char * 32),
        ("sha256", ctypes.c_char * 65),
    ]


class _CCheck(ctypes.Structure):
    _fields_ = [("ok", ctypes.c_int), ("epsilon_recomputed", ctypes.c_double),
                ("epsilon_lower", ctypes.c_double), ("order", ctypes.c_double),
                ("eps0_recomputed", ctypes.c_double), ("rdp_checked", ctypes.c_size_t),
                ("rdp_worst_ratio", ctypes.c_double), ("detail", ctypes.c_char * 256)]


class _CGaussianSpec(ctypes.Structure):
    _fields_ = [("epsilon", ctypes.c_double), ("delta", ctypes.c_double),
                ("accountant", ctypes.c_char_p), ("sensitivity", ctypes.c_double),
                ("sampling", ctypes.c_char_p), ("sampling_rate", ctypes.c_double),
                ("batch_size", ctypes.c_uint64), ("dataset_size", ctypes.c_uint64),
                ("steps", ctypes.c_uint64), ("tolerance", ctypes.c_double),
                ("command", ctypes.c_char_p), ("created", ctypes.c_char_p)]


_P = ctypes.POINTER(_CProfile)
_init = fn("dpzo_profile_init", None, [_P])
_free = fn("dpzo_profile_free", None, [_P])
_set_rdp = fn("dpzo_profile_set_rdp", ctypes.c_int,
              [ctypes.c_void_p, _P, _lib.c_double_p, _lib.c_double_p, ctypes.c_size_t])
_to_json = fn("dpzo_profile_to_json", ctypes.c_int,
              [ctypes.c_void_p, _P, ctypes.POINTER(ctypes.c_void_p)])
_from_json = fn("dpzo_profile_from_json", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, _P])
_read_file = fn("dpzo_profile_read_file", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, _P])
_write_file = fn("dpzo_profile_write_file", ctypes.c_int,
                 [ctypes.c_void_p, _P, ctypes.c_char_p])
_checksum = fn("dpzo_profile_checksum", ctypes.c_int,
               [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char),
                ctypes.POINTER(ctypes.c_void_p)])
_verify = fn("dpzo_profile_verify", ctypes.c_int,
             [ctypes.c_void_p, _P, ctypes.POINTER(_CCheck)])
_gaussian = fn("dpzo_profile_gaussian", ctypes.c_int,
               [ctypes.c_void_p, ctypes.POINTER(_CGaussianSpec), _P])
_from_search = fn("dpzo_profile_from_lmo_search", ctypes.c_int,
                  [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                   ctypes.c_char_p, ctypes.c_char_p, _P])
_objective_parse = fn("dpzo_lmo_objective_parse", ctypes.c_int,
                      [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)])


class _Owned:
    """A dpzo_profile whose owned arrays are freed with dpzo_profile_free."""

    def __init__(self) -> None:
        self.c = _CProfile()
        _init(ctypes.byref(self.c))

    def __enter__(self) -> _CProfile:
        return self.c

    def __exit__(self, *exc: Any) -> None:
        _free(ctypes.byref(self.c))


def _none_if_nan(x: float) -> Optional[float]:
    return None if math.isnan(x) else x


def _nan_if_none(name: str, x: Optional[float]) -> float:
    return math.nan if x is None else _real(name, x, allow_inf=True)


def _s(b: bytes) -> str:
    return b.decode("utf-8", "replace")


@dataclass(frozen=True)
class ProfileCheck:
    """What :meth:`Profile.verify` recomputed (``dpzo_profile_check``).

    ``ok``: every recomputed proven bound is within what the profile states
    (recomputed <= stored * (1 + 1e-9) + 1e-12); accountant "paper" never verifies.
    ``epsilon_recomputed``: the proven upper bound from the parameters (None: paper);
    ``epsilon_lower``: the proven lower end (pld, prv); ``order``: the RDP order that gave
    it; ``eps0_recomputed``: lmo profiles recording eps0; ``rdp_checked``: per-step RDP
    values recomputed, ``rdp_worst_ratio`` the largest recomputed / stored among them."""

    ok: bool
    epsilon: float
    epsilon_recomputed: Optional[float]
    epsilon_lower: Optional[float]
    order: Optional[float]
    eps0_recomputed: Optional[float]
    rdp_checked: int
    rdp_worst_ratio: Optional[float]
    detail: str

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class Profile:
    """A noise profile (docs/profile.md): the fields of the C ``dpzo_profile``, with None
    for a JSON null. Get one with :meth:`load`, :meth:`from_json`,
    :func:`gaussian_profile` or ``LmoSearchResult.profile()``; a Profile read or made by
    dpzo has passed the C validation and its checksum. Constructing one by hand is
    allowed: :meth:`to_json` and :meth:`save` validate it (and fill ``sha256``)."""

    # noise
    kind: str                             # "gaussian" or "lmo"
    noise_multiplier: Optional[float]     # gaussian: s, noise N(0, (s C)^2)
    lmo: Optional[Lmo]                    # lmo: the mixture parameters
    sensitivity: float                    # C
    clip: str                             # "l2" | "scalar" | "l1" | "l2-paper"
    queries_per_step: int
    # accounting
    accountant: str
    bound: Optional[str]
    sampling: str                         # "poisson" | "wor" | "none"
    sampling_rate: float
    batch_size: Optional[int]
    dataset_size: Optional[int]
    steps: int
    delta: float
    adjacency: str
    epsilon: float
    epsilon_bound: str                    # "proven-upper" or the paper's claim
    order: Optional[float]
    eps0: Optional[float]
    rdp_orders: Optional[tuple[float, ...]]   # per-step RDP curve (after sampling)
    rdp_per_step: Optional[tuple[float, ...]]
    # objective of the noise search (objective None: no objective)
    objective: Optional[str]
    objective_value: Optional[float]
    usefulness_gamma: Optional[float]
    usefulness: Optional[float]
    mean_abs: Optional[float]
    variance: Optional[float]
    grid: Optional[str]
    grid_index: Optional[int]
    # provenance and checksum
    version: str
    command: str
    created: Optional[str]
    sha256: Optional[str] = None

    # ---- reading
    @classmethod
    def load(cls, path: PathLike, *, verify: bool = False) -> "Profile":
        """Reads and validates the profile file at ``path`` (format, schema, every field,
        the checksum); raises dpzo.Error naming the file and the field. ``verify=True``
        also recomputes the guarantee and raises dpzo.Error when it does not hold."""
        p = _text("path", path)
        with _Owned() as c:
            call(_read_file, _cpath("path", p), ctypes.byref(c))
            prof = cls._from_c(c)
        if verify:
            prof._require_verified(p)
        return prof

    @classmethod
    def from_json(cls, text: Union[str, bytes], *, verify: bool = False) -> "Profile":
        """Parses and validates a profile's JSON text (as :meth:`load`)."""
        if isinstance(text, str):
            text = text.encode("utf-8")
        if not isinstance(text, bytes):
            raise Error(f"text must be str or bytes, got {text!r}")
        with _Owned() as c:
            call(_from_json, _c_text("profile text", text), ctypes.byref(c))
            prof = cls._from_c(c)
        if verify:
            prof._require_verified("profile")
        return prof

    def _require_verified(self, what: str) -> None:
        check = self.verify()
        if not check.ok:
            raise Error(f"{what}: the profile does not verify: {check.detail}", 1)

    @classmethod
    def _from_c(cls, c: _CProfile) -> "Profile":
        lmo = c.kind == 1
        n = int(c.n_orders)
        has_obj = bool(c.has_objective)
        return cls(
            kind="lmo" if lmo else "gaussian",
            noise_multiplier=None if lmo else _none_if_nan(c.noise_multiplier),
            lmo=Lmo._from_c(c.lmo) if lmo else None,
            sensitivity=c.sensitivity, clip=_s(c.clip),
            queries_per_step=int(c.queries_per_step), accountant=_s(c.accountant),
            bound=_s(c.bound) or None, sampling=_s(c.sampling),
            sampling_rate=c.sampling_rate, batch_size=int(c.batch_size) or None,
            dataset_size=int(c.dataset_size) or None, steps=int(c.steps), delta=c.delta,
            adjacency=_s(c.adjacency), epsilon=c.epsilon,
            epsilon_bound=_s(c.epsilon_bound), order=_none_if_nan(c.order),
            eps0=_none_if_nan(c.eps0),
            rdp_orders=tuple(c.orders[i] for i in range(n)) if n else None,
            rdp_per_step=tuple(c.rdp[i] for i in range(n)) if n else None,
            objective=_s(c.objective) if has_obj else None,
            objective_value=_none_if_nan(c.objective_value) if has_obj else None,
            usefulness_gamma=_none_if_nan(c.usefulness_gamma) if has_obj else None,
            usefulness=_none_if_nan(c.usefulness) if has_obj else None,
            mean_abs=_none_if_nan(c.mean_abs) if has_obj else None,
            variance=_none_if_nan(c.variance) if has_obj else None,
            grid=(_s(c.grid) or None) if has_obj else None,
            grid_index=(int(c.grid_index) if c.grid_index >= 0 else None) if has_obj else None,
            version=_s(c.version), command=_s(c.command),
            created=_s(c.created) or None, sha256=_s(c.sha256) or None)

    # ---- writing
    def _fill(self, c: _CProfile) -> None:
        """Copies the fields into an initialised dpzo_profile (types checked here, values
        by the C validation that every writer runs)."""
        def text(name: str, value: Optional[str], size: int) -> bytes:
            if value is None:
                return b""
            if not isinstance(value, str):
                raise Error(f"{name} must be a string, got {value!r}")
            b = value.encode("utf-8")
            if len(b) >= size:
                raise Error(f"{name} must be shorter than {size} bytes, got {len(b)}")
            return b

        kind = _choice("kind", self.kind, ("gaussian", "lmo"))
        c.kind = 1 if kind == "lmo" else 0
        if kind == "gaussian":
            c.noise_multiplier = _nan_if_none("noise_multiplier", self.noise_multiplier)
        else:
            if not isinstance(self.lmo, Lmo):
                raise Error(f"lmo must be a dpzo.Lmo for an lmo profile, got {self.lmo!r}")
            c.lmo = self.lmo._c()
        c.sensitivity = _real("sensitivity", self.sensitivity)
        c.clip = text("clip", self.clip, 16)
        c.queries_per_step = _uint("queries_per_step", self.queries_per_step)
        c.accountant = text("accountant", self.accountant, 16)
        c.bound = text("bound", self.bound, 16)
        c.sampling = text("sampling", self.sampling, 16)
        c.sampling_rate = _real("sampling_rate", self.sampling_rate)
        c.batch_size = 0 if self.batch_size is None else _count("batch_size", self.batch_size)
        c.dataset_size = (0 if self.dataset_size is None
                          else _count("dataset_size", self.dataset_size))
        c.steps = _count("steps", self.steps)
        c.delta = _real("delta", self.delta)
        c.adjacency = text("adjacency", self.adjacency, 16)
        c.epsilon = _real("epsilon", self.epsilon, allow_inf=True)
        c.epsilon_bound = text("epsilon_bound", self.epsilon_bound, 64)
        c.order = _nan_if_none("order", self.order)
        c.eps0 = _nan_if_none("eps0", self.eps0)
        if (self.rdp_orders is None) != (self.rdp_per_step is None):
            raise Error("rdp_orders and rdp_per_step go together")
        if self.rdp_orders is not None:
            o = [_real(f"rdp_orders[{i}]", x) for i, x in enumerate(self.rdp_orders)]
            r = [_real(f"rdp_per_step[{i}]", x, allow_inf=True)
                 for i, x in enumerate(self.rdp_per_step or ())]
            if len(o) != len(r):
                raise Error(f"rdp_orders and rdp_per_step must have the same length, got "
                            f"{len(o)} and {len(r)}")
            call(_set_rdp, ctypes.byref(c), (ctypes.c_double * max(len(o), 1))(*o),
                 (ctypes.c_double * max(len(r), 1))(*r), len(o))
        c.has_objective = 0 if self.objective is None else 1
        if self.objective is not None:
            c.objective = text("objective", self.objective, 16)
            c.objective_value = _nan_if_none("objective_value", self.objective_value)
            c.usefulness_gamma = _nan_if_none("usefulness_gamma", self.usefulness_gamma)
            c.usefulness = _nan_if_none("usefulness", self.usefulness)
            c.mean_abs = _nan_if_none("mean_abs", self.mean_abs)
            c.variance = _nan_if_none("variance", self.variance)
            c.grid = text("grid", self.grid, 64)
            c.grid_index = -1 if self.grid_index is None else _count("grid_index",
                                                                     self.grid_index)
            if c.grid_index != (-1 if self.grid_index is None else self.grid_index):
                raise Error(f"grid_index must be below 2^63, got {self.grid_index}")
        c.version = text("version", self.version, 16)
        c.command = text("command", self.command, 512)
        c.created = text("created", self.created, 32)

    def to_json(self) -> str:
        """The profile's JSON text as dpzo writes it (validated, checksummed; no trailing
        newline). Reading it back gives the same profile, number for number."""
        with _Owned() as c:
            self._fill(c)
            out = ctypes.c_void_p()
            call(_to_json, ctypes.byref(c), ctypes.byref(out))
            try:
                return _s(ctypes.string_at(out.value))
            finally:
                _c_free(out.value)

    def save(self, path: PathLike) -> "Profile":
        """Writes the profile to ``path`` atomically (``dpzo_profile_write_file``; docs/
        files.md) and returns it as written (``sha256`` and ``created`` filled)."""
        p = _text("path", path)
        with _Owned() as c:
            self._fill(c)
            call(_write_file, ctypes.byref(c), _cpath("path", p))
            return type(self)._from_c(c)

    def to_dict(self) -> dict[str, Any]:
        """The profile's JSON object (as :meth:`to_json` writes it), parsed."""
        import json

        return json.loads(self.to_json())

    # ---- checking
    def verify(self) -> ProfileCheck:
        """Recomputes the guarantee from the parameters with the accountant the profile
        names (``dpzo_profile_verify``; docs/profile.md section 5). A profile that does not
        hold is not an error: the check's ``ok`` is False and ``detail`` says why."""
        with _Owned() as c:
            self._fill(c)
            out = _CCheck()
            call(_verify, ctypes.byref(c), ctypes.byref(out))
        return ProfileCheck(
            ok=bool(out.ok), epsilon=self.epsilon,
            epsilon_recomputed=_none_if_nan(out.epsilon_recomputed),
            epsilon_lower=_none_if_nan(out.epsilon_lower), order=_none_if_nan(out.order),
            eps0_recomputed=_none_if_nan(out.eps0_recomputed),
            rdp_checked=int(out.rdp_checked),
            rdp_worst_ratio=_none_if_nan(out.rdp_worst_ratio) if out.rdp_checked else None,
            detail=_s(out.detail))

    @staticmethod
    def checksum(text: Union[str, bytes]) -> str:
        """The checksum rule (docs/profile.md section 3) on any JSON object's text: the
        SHA-256 of its canonical form without the top-level "sha256" member
        (``dpzo_profile_checksum``; does not validate fields)."""
        if isinstance(text, str):
            text = text.encode("utf-8")
        buf = (ctypes.c_char * 65)()
        call(_checksum, _c_text("profile text", text), buf, None)
        return _s(buf.value)


# ---- Gaussian profiles ---------------------------------------------------------------

def gaussian_profile(*, epsilon: float, delta: float, sampling_rate: Optional[float] = None,
                     batch_size: Optional[int] = None, dataset_size: Optional[int] = None,
                     full_batch: bool = False, steps: Optional[int] = None,
                     epochs: Optional[float] = None, sensitivity: Optional[float] = None,
                     clip: Optional[float] = None, accountant: str = "rdp",
                     tolerance: Optional[float] = None, command: Optional[str] = None,
                     created: Optional[str] = None) -> Profile:
    """The Gaussian noise profile for a target (``dpzo profile gaussian``,
    ``dpzo_profile_gaussian``): the smallest noise multiplier s whose proven epsilon at
    ``delta`` is at most ``epsilon``, with that epsilon recomputed for the record and, for
    accountant "rdp", the per-step RDP curve at 28 orders.

    Sampling: exactly one of ``sampling_rate`` (Poisson, add-remove), ``batch_size`` with
    ``dataset_size`` (every step draws B of N without replacement, replace-one; not a proof
    for shuffled batches, docs/audit.md section 3) or ``full_batch=True``. ``steps`` or
    ``epochs``. ``clip`` (or its synonym ``sensitivity``): the clipping bound C the noise
    is scaled by (default 1). ``accountant``: "rdp", "pld" or "prv". ``tolerance``: the
    relative tolerance on s (default 1e-6 rdp, 1e-4 pld/prv). ``command`` and ``created``
    are provenance (default "dpzo.gaussian_profile(...)" and now).
    Write the result with ``.save(path)``."""
    if full_batch is not False and full_batch is not True:
        raise Error(f"full_batch must be True or False, got {full_batch!r}")
    given = (sampling_rate is not None) + (batch_size is not None or dataset_size is not None) \
        + bool(full_batch)
    if given != 1:
        raise Error("give exactly one of sampling_rate (Poisson), batch_size with "
                    "dataset_size (batches drawn without replacement) or full_batch=True")
    kind, q, b, n, t = _sampling(sampling_rate, batch_size, dataset_size, steps, epochs,
                                 default_steps=None)
    if sensitivity is not None and clip is not None:
        raise Error("give clip or sensitivity (the same clipping bound), not both")
    c_ = 1.0 if sensitivity is None and clip is None else _real(
        "sensitivity" if clip is None else "clip", clip if sensitivity is None else sensitivity)
    if not c_ > 0:
        raise Error(f"{'clip' if clip is not None else 'sensitivity'} must be > 0, got {c_!r}")
    acc = _choice("accountant", accountant, ("rdp", "pld", "prv"))
    e, d = _real("epsilon", epsilon), _real("delta", delta)
    tol = 0.0 if tolerance is None else _real("tolerance", tolerance)
    if tolerance is not None and not (1e-12 <= tol < 0.5):
        raise Error(f"tolerance must be in [1e-12, 0.5), got {tol!r}")
    if command is None:
        parts = [f"epsilon={e!r}", f"delta={d!r}"]
        if kind == "poisson":
            parts.append(f"sampling_rate={q!r}")
        elif kind == "wor":
            parts += [f"batch_size={b}", f"dataset_size={n}"]
        else:
            parts.append("full_batch=True")
        parts += [f"steps={t}", f"accountant={acc!r}"]
        if c_ != 1.0:
            parts.append(f"clip={c_!r}")
        command = "dpzo.gaussian_profile(" + ", ".join(parts) + ")"
    cmd = _c_text("command", _text("command", command).encode("utf-8"))
    if len(cmd) >= 512:
        cmd = cmd[:508] + b"..."
    cr = None if created is None else _text("created", created).encode()
    spec = _CGaussianSpec(epsilon=e, delta=d, accountant=acc.encode(), sensitivity=c_,
                          sampling=kind.encode(), sampling_rate=q if kind == "poisson" else 0.0,
                          batch_size=b, dataset_size=n, steps=t, tolerance=tol, command=cmd,
                          created=cr)
    c = _CProfile()
    call(_gaussian, ctypes.byref(spec), ctypes.byref(c))
    try:
        out = ctypes.c_void_p()
        call(_to_json, ctypes.byref(c), ctypes.byref(out))  # fills sha256 (and created)
        _c_free(out.value)
        return Profile._from_c(c)
    finally:
        _free(ctypes.byref(c))


# ---- LMO search winners --------------------------------------------------------------

def _profile_from_search(r: "LmoSearchResult", *, command: Optional[str],
                         created: Optional[str]) -> Profile:
    """The profile ``dpzo lmo search -o`` writes for the same search: the library's
    dpzo_profile_from_lmo_search on the search's own options and result, validated and
    checksummed by the C library."""
    paper = r.accountant == "paper"
    if command is None:
        parts = [f"epsilon={r.target!r}", f"delta={r.delta!r}", f"grid={r.grid!r}",
                 f"objective={r.objective!r}", f"accountant={r.accountant!r}"]
        if not paper:
            parts.append(f"steps={r.steps}")
            if r.sampling == "poisson":
                parts.append(f"sampling_rate={r.sampling_rate!r}")
            elif r.sampling == "wor":
                parts += [f"batch_size={r.batch_size}", f"dataset_size={r.dataset_size}"]
        if r.sensitivity != 1.0:
            parts.append(f"sensitivity={r.sensitivity!r}")
        if r.clip != "scalar":
            parts.append(f"clip={r.clip!r}")
        command = "dpzo.lmo_search(" + ", ".join(parts) + ")"
    cmd = _text("command", command)
    cr = b""
    if created is not None:
        cr = _text("created", created).encode()
        if len(cr) >= 32:
            raise Error(f"created must be a UTC time \"YYYY-MM-DDTHH:MM:SSZ\", got {created!r}")
    opts, res = r._c_search
    c = _CProfile()
    call(_from_search, ctypes.byref(opts), ctypes.byref(res), r.grid.encode(), r.clip.encode(),
         cmd.encode("utf-8"), ctypes.byref(c))
    try:
        c.created = cr
        out = ctypes.c_void_p()
        call(_to_json, ctypes.byref(c), ctypes.byref(out))  # validates, fills sha256 (created)
        _c_free(out.value)
        return Profile._from_c(c)
    finally:
        _free(ctypes.byref(c))


def _version() -> str:
    with _Owned() as c:
        return _s(c.version)
