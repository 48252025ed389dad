# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch.optimizer: DP zeroth-order fine-tuning of any torch.nn.Module (docs/plugin.md).

:class:`ZOOptimizer` is a ``torch.optim.Optimizer`` whose ``step(closure)`` runs one step of
DPZero, MeZO or DP-ZOSO on the user's own model: the closure returns the per-example losses
of the current batch, the C library (``dpzo/zo_step.h``, the code ``dpzo train`` runs)
does the rest: directions keyed by (seed, step, query, global index), the perturbed
weights written out of place (theta is never written during the evaluations, so bf16 and
fp16 weights never drift), the clipping, the noise from the operating system's CSPRNG, the
ledger and the update on the tensors' own storage (CPU or CUDA kernels).
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import sys
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from .. import _lib
from ..errors import Error
from . import _c
from ._reads import ReadTracker

__all__ = ["ZOOptimizer", "BudgetExceeded", "ALGORITHMS"]

ALGORITHMS = ("dpzero", "mezo", "dpzoso", "dpzopo", "pazo-m", "pazo-p", "pazo-s")
_STATE_VERSION = 1

# perturb="layer": module types known to read the tensors of some of their children in their
# own forward, without calling those children. nn.MultiheadAttention passes out_proj.weight
# and out_proj.bias to F.multi_head_attention_forward (or its fused fast path) and never
# calls out_proj. Such tensors start with the reader as their home; reads no one listed here
# are found at run time (the read tracker, docs/plugin.md section 4).
_READS_CHILDREN: Dict[type, Tuple[str, ...]] = {torch.nn.MultiheadAttention: ("out_proj",)}
# the closures evaluated at perturbed weights: the per-example losses, dpzopo's score
_KINDS = ("loss", "score")


class BudgetExceeded(Error):
    """The next step would go past the plan, and so past the profile's budget: refused
    before anything of it ran (the ledger is unchanged)."""


def _json_config(algorithm: str, **kw: Any) -> str:
    cfg: Dict[str, Any] = {"algorithm": algorithm}
    for key, value in kw.items():
        if value is not None:
            cfg[key] = value
    return json.dumps(cfg, sort_keys=True)


class ZOOptimizer(torch.optim.Optimizer):
    """One zeroth-order step per ``step(closure)`` on ``model``'s tuned parameters.

    Arguments (keywords; they are ``dpzo train``'s configuration keys, docs/trainer.md):

    - ``model``: the ``torch.nn.Module`` whose forward the closure runs.
    - ``params``: the parameters to tune (default: every parameter of ``model`` that
      requires grad), in a fixed order that defines the global index of each element.
    - ``algorithm``: ``"dpzero"`` (default), ``"mezo"`` (non-private), ``"dpzoso"``,
      ``"pazo-m"``, ``"pazo-p"`` or ``"pazo-s"``. The PAZO methods need ``public_closure``:
      a callable returning the mean loss of a fresh public batch, differentiable (called
      once per step for pazo-m, ``public["k"]`` times for pazo-p and pazo-s); pazo-p and
      pazo-s keep k flat gradients in host memory (CPU tensors). ``"dpzopo"`` needs
      ``score_closure``: the linearised network's output sum at the model's current
      weights (the optimizer sets them to |theta| +- beta v for DP-ZOPO's data-free score),
      e.g. ``lambda: model(torch.ones(1, 784)).sum()``, and ``prune`` (a dict, docs/
      trainer.md); its mask is in host memory (CPU tensors).
    - ``profile``: the noise profile (a path; private algorithms), ``clip``: C.
    - ``lr``, ``lr_schedule`` (``constant``, ``linear``, ``cosine``), ``perturbation``
      (lambda, default 1e-3), ``queries`` (Q directions per step, default 1), ``direction`` (``gaussian``,
      ``sphere``, ``rademacher``), ``radius`` (sphere), ``stages`` (dpzoso, a dict),
      ``public`` (pazo-m: ``{"alpha": ...}``),
      ``seed`` (public: the directions).
    - ``steps`` (T), ``batch_size`` (B, expected for Poisson), ``dataset_size`` (n),
      ``batching`` (``poisson`` or ``shuffle``).
    - ``perturb``: ``"layer"`` (default: each tuned tensor is perturbed into a temporary
      just before the forward of the module that reads it and put back after it: memory of
      the model plus one module's tensors; the reads are checked, see docs/plugin.md) or
      ``"all"`` (every tuned tensor perturbed before the closure).
    - ``process_group``: data parallel over ``torch.distributed`` (default: the default
      group when it is initialised with more than one process, else none).
    """

    def __init__(self, model: torch.nn.Module, *, lr: float, steps: int,
                 batch_size: float, dataset_size: int, algorithm: str = "dpzero",
                 profile: Optional[str] = None, clip: Optional[float] = None,
                 perturbation: Optional[float] = None, queries: Optional[int] = None,
                 seed: int = 0,
                 batching: str = "poisson", lr_schedule: str = "constant",
                 direction: Optional[str] = None, radius: Any = None,
                 stages: Optional[Dict[str, Any]] = None,
                 public: Optional[Dict[str, Any]] = None,
                 public_closure: Optional[Callable[[], Any]] = None,
                 prune: Optional[Dict[str, Any]] = None,
                 score_closure: Optional[Callable[[], Any]] = None,
                 params: Optional[Iterable[torch.nn.Parameter]] = None,
                 perturb: str = "layer", process_group: Any = None) -> None:
        if not isinstance(model, torch.nn.Module):
            raise Error(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if perturb not in ("layer", "all"):
            raise Error(f"perturb must be \"layer\" or \"all\", got {perturb!r}")
        tuned = self._tuned(model, params)
        super().__init__(tuned, {"lr": lr})
        self._model = model
        self._params: List[torch.nn.Parameter] = tuned
        self._offset: Dict[int, int] = {}
        dim = 0
        for p in tuned:
            _c.dtype_code(p, "parameter")
            if not p.data.is_contiguous():
                p.data = p.data.contiguous()
            self._offset[id(p)] = dim
            dim += p.numel()
        self._dim = dim
        self._n = int(dataset_size)
        self._config = _json_config(
            algorithm, profile=os.path.abspath(profile) if profile is not None else None,
            clip=clip, lr=lr, steps=steps, batch_size=batch_size, batching=batching,
            lr_schedule=lr_schedule if lr_schedule != "constant" else None,
            **{"lambda": perturbation}, queries=queries, seed=seed,
            direction=direction, radius=radius, stages=stages, public=public, prune=prune)
        self._algorithm = algorithm
        self._steps = int(steps)
        self._queries = int(queries) if queries is not None else 1
        self._batching = batching
        if algorithm.startswith("pazo-") != (public_closure is not None):
            raise Error("public_closure (the mean loss of a fresh public batch, with autograd) "
                        "is needed by pazo-m, pazo-p and pazo-s and by no other algorithm")
        self._public_closure = public_closure
        self._G: Optional[torch.Tensor] = None
        if (algorithm == "dpzopo") != (score_closure is not None):
            raise Error("score_closure (the linearised network's output sum at the model's "
                        "current weights, e.g. lambda: model(torch.ones(1, 784)).sum()) is "
                        "needed by dpzopo and by no other algorithm")
        if algorithm == "dpzopo" and any(p.device.type != "cpu" for p in tuned):
            raise Error("dpzopo keeps its mask in host memory: tune CPU tensors")
        self._score_closure = score_closure
        if algorithm in ("pazo-p", "pazo-s"):
            if any(p.device.type != "cpu" for p in tuned):
                raise Error(f"{algorithm} keeps its k public gradients in host memory: tune "
                            "CPU tensors (pazo-m runs on CUDA)")
            k = int((public or {}).get("k", 3))
            self._G = torch.empty((k, dim), dtype=torch.float32)
        self._zo = None
        handle = ctypes.c_void_p()
        _lib.call(_c.zo_open, self._config.encode(), None, dim, self._n, ctypes.byref(handle))
        self._zo = handle.value
        self._perturb_mode = perturb
        self._active: Optional[tuple] = None  # (direction address, alpha) while evaluating
        self._swapped: Dict[int, torch.Tensor] = {}  # id(p) -> theta, while p is perturbed
        self._depth: Dict[int, int] = {}  # id(p) -> open perturbations (nested homes)
        self._pinned: Set[int] = set()  # perturbed until the evaluation ends
        self._hooks: Dict[torch.nn.Module, List[Any]] = {}
        # perturb="layer": each tuned tensor's homes, the modules around whose forward it is
        # perturbed (the module holding it, its reader where that is known or was found),
        # or the whole evaluation (_everywhere: read outside every forward)
        self._owned = self._owners(model, tuned)
        self._everywhere: List[torch.nn.Parameter] = []
        self._fired: Set[int] = set()  # the homes whose forward ran in this evaluation
        self._may_skip: Set[int] = set()  # homes seen not running, their tensors unread
        # the closures (kinds) whose next evaluation has its reads tracked
        self._check_next: Set[str] = set(_KINDS) if perturb == "layer" else set()
        self._tracker: Optional[ReadTracker] = None
        self._module_names = {id(m): name for name, m in model.named_modules()}
        self._param_names = {id(p): name for name, p in model.named_parameters()}
        if perturb == "layer":
            for module in self._owned:
                self._hook(module)
        self._group = self._process_group(process_group)
        self._noise_override: Optional[Callable[[int, int], Sequence[float]]] = None
        self._last_g: List[float] = [math.nan] * self._queries
        self._last_choice = -1
        if self._group is not None:
            self._share_sampling_seed()

    # ---- set-up -------------------------------------------------------------------------

    @staticmethod
    def _tuned(model: torch.nn.Module, params: Any) -> List[torch.nn.Parameter]:
        own = {id(p): p for p in model.parameters()}
        if params is None:
            tuned = [p for p in model.parameters() if p.requires_grad]
        else:
            tuned = []
            seen = set()
            for p in params:
                if isinstance(p, dict):
                    raise Error("params: a list of parameters is needed (parameter groups "
                                "are not used: one learning rate comes from the plan)")
                if id(p) not in own:
                    raise Error("params: every tuned parameter must belong to model")
                if id(p) not in seen:
                    seen.add(id(p))
                    tuned.append(p)
        if not tuned:
            raise Error("no parameters to tune: none requires grad")
        return tuned

    @staticmethod
    def _owners(model: torch.nn.Module,
                tuned: List[torch.nn.Parameter]) -> Dict[torch.nn.Module, List[torch.nn.Parameter]]:
        """The first homes: the module holding each tuned tensor, except where the reader is
        known to be another module (_READS_CHILDREN). Reads elsewhere are found at run time
        (_learn)."""
        ids = {id(p) for p in tuned}
        owned: Dict[torch.nn.Module, List[torch.nn.Parameter]] = {}
        found = set()
        for module in model.modules():
            mine = [p for p in module._parameters.values() if p is not None and id(p) in ids]
            if mine:
                owned[module] = mine
                found.update(id(p) for p in mine)
        missing = ids - found
        if missing:
            raise Error(f"{len(missing)} tuned parameter(s) belong to no module of model")
        for module in model.modules():
            for kind, children in _READS_CHILDREN.items():
                if not isinstance(module, kind):
                    continue
                for child in children:
                    inner = owned.pop(getattr(module, child, None), [])
                    have = owned.setdefault(module, []) if inner else []
                    have.extend(p for p in inner if all(q is not p for q in have))
        return owned

    @staticmethod
    def _process_group(group: Any) -> Any:
        import torch.distributed as dist
        if group is None:
            if not (dist.is_available() and dist.is_initialized()):
                return None
            if dist.get_world_size() == 1:
                return None
            return dist.group.WORLD
        return group

    def _collective_device(self) -> torch.device:
        import torch.distributed as dist
        backend = dist.get_backend(self._group)
        return self._params[0].device if backend == "nccl" else torch.device("cpu")

    def _share_sampling_seed(self) -> None:
        """Every rank samples the same batches: rank 0's sampling seed, broadcast."""
        import torch.distributed as dist
        own = int(_c.zo_sampling_seed(ctypes.c_void_p(self._zo)))
        halves = torch.tensor([own >> 32, own & 0xFFFFFFFF], dtype=torch.int64,
                              device=self._collective_device())
        dist.broadcast(halves, src=_root_rank(self._group), group=self._group)
        seed = (int(halves[0].item()) << 32) | int(halves[1].item())
        _lib.call(_c.zo_set_sampling_seed, ctypes.c_void_p(self._zo), seed)

    def __del__(self) -> None:
        zo, self._zo = getattr(self, "_zo", None), None
        if zo:
            _c.zo_free(ctypes.c_void_p(zo))
        for handles in getattr(self, "_hooks", {}).values():
            for h in handles:
                h.remove()

    # ---- perturbation ----------------------------------------------------------------------

    def _swap_in(self, p: torch.nn.Parameter) -> None:
        """Opens one perturbation of p: the first puts theta + alpha u in place (out of
        place: theta's tensor is kept aside); nested ones (a home inside another, a shared
        module re-entered) only count, so that the innermost forward's end does not put
        theta back while an outer forward still reads p."""
        k = id(p)
        n = self._depth.get(k, 0)
        if n == 0:
            direction, alpha, absolute = self._active  # type: ignore[misc]
            with self._quiet():  # the perturbation's own reads of theta
                tmp = torch.empty_like(p.data)
                base = p.data.abs() if absolute else p.data
                _c.perturb_into(direction, self._offset[k], base, alpha, tmp)
                self._swapped[k] = p.data
                p.data = tmp
        self._depth[k] = n + 1

    def _swap_out(self, p: torch.nn.Parameter) -> None:
        """Closes one perturbation of p; the last puts theta back."""
        k = id(p)
        n = self._depth.get(k, 0)
        if n > 1:
            self._depth[k] = n - 1
            return
        self._depth.pop(k, None)
        orig = self._swapped.pop(k, None)
        if orig is not None:
            with self._quiet():
                p.data = orig

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """The optimizer's own operators on theta (p.data included), unwatched."""
        tracker = self._tracker
        if tracker is None:
            yield
            return
        tracker.quiet += 1
        try:
            yield
        finally:
            tracker.quiet -= 1

    def _pin(self, p: torch.nn.Parameter) -> torch.Tensor:
        """p perturbed until the evaluation ends (a read the tracker found): the perturbed
        tensor."""
        if id(p) not in self._pinned:
            self._pinned.add(id(p))
            self._swap_in(p)
        return p.data

    def _restore(self) -> None:
        for p in self._params:
            orig = self._swapped.pop(id(p), None)
            if orig is not None:
                p.data = orig
        self._depth.clear()
        self._pinned.clear()

    def _hook(self, module: torch.nn.Module) -> None:
        if module not in self._hooks:
            # prepended: the module's other pre-hooks already see the perturbed tensors
            self._hooks[module] = [
                module.register_forward_pre_hook(self._pre_hook, prepend=True),
                module.register_forward_hook(self._post_hook)]

    def _unhook(self, module: torch.nn.Module) -> None:
        for h in self._hooks.pop(module, []):
            h.remove()

    def _pre_hook(self, module: torch.nn.Module, args: Any) -> None:
        if self._active is not None:
            self._fired.add(id(module))
            for p in self._owned.get(module, ()):
                self._swap_in(p)

    def _post_hook(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if self._active is not None:
            for p in self._owned.get(module, ()):
                self._swap_out(p)

    @contextmanager
    def perturbed(self, query: int, sign: int) -> Iterator[None]:
        """Within the block the model computes at theta + sign lambda u_query of the begun
        step (out of place: theta's storage is left alone and restored exactly). With
        perturb="layer" the block's reads of the tuned tensors are tracked (every read sees
        the perturbed value, whatever module makes it)."""
        d = _c.zo_direction(ctypes.c_void_p(self._zo), query)
        if not d:
            raise Error("perturbed: no step is begun (or query out of range)")
        with self._at(d, float(sign) * _c.zo_lambda(ctypes.c_void_p(self._zo)),
                      track=self._perturb_mode == "layer", kind="user"):
            yield

    @contextmanager
    def _at(self, d: int, alpha: float, absolute: bool = False,
            track: bool = False, kind: str = "loss") -> Iterator[None]:
        """The model computes at theta + alpha u (absolute: |theta| + alpha u), u the C
        direction at address d. track (perturb="layer"): the reads of the tuned tensors are
        watched (ReadTracker): a read of theta gets the perturbed value, and the block's end
        makes its reader a home of the tensor (_learn)."""
        self._active = (d, alpha, absolute)
        self._fired = set()
        tracker = None
        try:
            for p in (self._params if self._perturb_mode == "all" else self._everywhere):
                self._swap_in(p)
            if track:
                theta = {id(p): (p, self._swapped.get(id(p), p.data)) for p in self._params}
                tracker = ReadTracker(self._model, theta, self._pin)
                self._tracker = tracker
                with tracker:
                    yield
            else:
                yield
        finally:
            self._tracker = None
            self._restore()
            self._active = None
        if tracker is not None:
            self._learn(tracker.readers, kind)

    def _evaluate(self, d: int, alpha: float, fn: Callable[[], Any],
                  absolute: bool = False, kind: str = "loss") -> Any:
        """fn() at theta + alpha u (absolute: |theta| + alpha u). perturb="layer": the first
        evaluation of each kind of closure, and the next one of each after any change of
        homes, have their reads tracked; any other is checked afterwards: every home's
        forward ran, or was seen skipped by a tracked evaluation without its tensors being
        read. Where the check fails (on any rank, when data parallel), the evaluation is
        done again with its reads tracked (fn is called once more)."""
        if self._perturb_mode == "all":
            with self._at(d, alpha, absolute):
                return fn()
        track = kind in self._check_next
        with self._at(d, alpha, absolute, track=track, kind=kind):
            out = fn()
        redo = not track and not self._homes_ran()
        if self._group is not None:  # every rank redoes it or none (fn may hold collectives)
            redo = self._any_rank(redo)
        if redo:
            with self._at(d, alpha, absolute, track=True, kind=kind):
                out = fn()
        return out

    def _homes_ran(self) -> bool:
        return all(id(m) in self._fired or id(m) in self._may_skip for m in self._owned)

    def _any_rank(self, flag: bool) -> bool:
        import torch.distributed as dist
        t = torch.tensor([1 if flag else 0], dtype=torch.int32,
                         device=self._collective_device())
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self._group)
        return bool(t.item())

    def _learn(self, readers: Dict[int, Tuple[torch.nn.Parameter,
                                             Set[Optional[torch.nn.Module]]]],
               kind: str) -> None:
        """After a tracked evaluation of a kind of closure: the homes whose forward did not
        run had their tensors read at the perturbed value or not at all (the tracker saw to
        it), so they may be skipped later; each module that read a tuned tensor's theta
        becomes a home of it (None: a read outside every forward, the tensor is perturbed for
        the whole evaluation), with a warning, and the next evaluation of every kind is
        tracked too."""
        for m in self._owned:
            if id(m) not in self._fired:
                self._may_skip.add(id(m))
        everywhere = {id(p) for p in self._everywhere}
        found = []
        for p, where in readers.values():
            if id(p) in everywhere:
                continue
            if None in where:
                self._everywhere.append(p)
                everywhere.add(id(p))
                for m in list(self._owned):
                    rest = [q for q in self._owned[m] if q is not p]
                    if rest:
                        self._owned[m] = rest
                    else:
                        del self._owned[m]
                        self._may_skip.discard(id(m))
                        self._unhook(m)
            else:
                for m in where:
                    have = self._owned.setdefault(m, [])  # type: ignore[arg-type]
                    if all(q is not p for q in have):
                        have.append(p)
                    self._hook(m)  # type: ignore[arg-type]
            found.append((p, where))
        if not found:
            self._check_next.discard(kind)
        else:
            self._check_next = set(_KINDS)
            warnings.warn(self._found_message(found), stacklevel=_caller_level())

    def _found_message(self, found: List[Tuple[torch.nn.Parameter,
                                               Set[Optional[torch.nn.Module]]]]) -> str:
        def module(m: torch.nn.Module) -> str:
            name = self._module_names.get(id(m), "?")
            return f"{name} ({type(m).__name__})" if name else f"the model ({type(m).__name__})"

        parts = []
        for p, where in found:
            name = self._param_names.get(id(p), "?")
            if None in where:
                parts.append(f"{name} (read outside every module's forward: perturbed for the "
                             "whole evaluation from now on)")
            else:
                readers = ", ".join(sorted(module(m) for m in where))  # type: ignore[arg-type]
                parts.append(f"{name} (read in the forward of {readers})")
        return (f"dpzo.torch: perturb=\"layer\": {len(found)} tuned tensor(s) were read outside "
                "the forward of the module(s) that perturb them: " + "; ".join(parts) +
                ". This evaluation was computed at their perturbed values, and from now on "
                "they are perturbed around the forward of the modules that read them too "
                "(docs/plugin.md, section 4; perturb=\"all\" perturbs every tuned tensor "
                "before the closure)")

    def _homes(self) -> Dict[str, Optional[Tuple[str, ...]]]:
        """perturb="layer": each tuned tensor's name -> the names of its home modules, sorted
        (None: perturbed for the whole evaluation)."""
        everywhere = {id(p) for p in self._everywhere}
        out: Dict[str, Optional[Tuple[str, ...]]] = {}
        for p in self._params:
            name = self._param_names.get(id(p), "?")
            out[name] = None if id(p) in everywhere else tuple(sorted(
                self._module_names.get(id(m), "?") for m, ps in self._owned.items()
                if any(q is p for q in ps)))
        return out

    # ---- the step ----------------------------------------------------------------------------

    def _losses(self, closure: Callable[[], Any], b: Optional[int]) -> torch.Tensor:
        out = closure()
        if not isinstance(out, torch.Tensor):
            raise Error("the closure must return a tensor of per-example losses, got "
                        f"{type(out).__name__}")
        out = out.detach().reshape(-1).to(device="cpu", dtype=torch.float64)
        if b is not None and out.numel() != b:
            raise Error(f"the closure returned {out.numel()} losses, then {b}: every "
                        "evaluation of a step must see the same batch")
        return out

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> float:  # type: ignore[override]
        """One step: ``closure()`` returns the per-example losses (a 1-D tensor) of this
        step's batch (this rank's share when data parallel) at the model's current
        (perturbed) weights; it is called 2 Q times (with perturb="layer", once more for an
        evaluation that fails the check of docs/plugin.md, section 4). Returns the mean of
        the losses at theta +- lambda u_0 (the batch's loss for free). Raises
        :class:`BudgetExceeded` before a step past the plan, and ``dpzo.Error`` for anything
        else."""
        if closure is None:
            raise Error("ZOOptimizer.step needs a closure returning per-example losses")
        zo = ctypes.c_void_p(self._zo)
        try:
            _lib.call(_c.zo_begin, zo)
        except Error as e:
            if e.status == 6:
                raise BudgetExceeded(str(e), e.status) from None
            raise
        try:
            return self._run_step(zo, closure)
        except BaseException:
            # an error in the closure (out of memory, Ctrl-C): the step is abandoned; once
            # its noise was drawn the ledger counts it anyway (dpzo_zo_abort)
            _c.zo_abort(zo)
            raise

    def _run_step(self, zo: ctypes.c_void_p, closure: Callable[[], Any]) -> float:
        if _c.zo_score_queries(zo) > 0:
            self._set_score(zo)
        grads = None
        if self._algorithm == "pazo-m":
            grads = self._public_gradients()
        elif self._G is not None:
            G = self._G
            for j in range(G.shape[0]):
                for p, g in zip(self._params, self._public_gradients()):
                    o = self._offset[id(p)]
                    G[j, o:o + p.numel()] = g.reshape(-1)
            _lib.call(_c.zo_set_public, zo, G.data_ptr(), G.shape[0])
        if self._algorithm == "pazo-s":
            return self._candidates_step(zo, closure)
        Q = self._queries
        lam = _c.zo_lambda(zo)
        lp: Optional[torch.Tensor] = None
        lm: Optional[torch.Tensor] = None
        b: Optional[int] = None
        for k in range(Q):
            d = _c.zo_direction(zo, k)
            plus = self._evaluate(d, lam, lambda: self._losses(closure, b))
            b = plus.numel()
            minus = self._evaluate(d, -lam, lambda: self._losses(closure, b))
            if lp is None:
                lp = torch.empty((b, Q), dtype=torch.float64)
                lm = torch.empty((b, Q), dtype=torch.float64)
            lp[:, k] = plus
            lm[:, k] = minus  # type: ignore[index]
        assert lp is not None and lm is not None and b is not None
        qsum = torch.zeros(Q, dtype=torch.float64)
        dp = ctypes.POINTER(ctypes.c_double)
        _lib.call(_c.zo_clip_sum, zo, ctypes.cast(lp.data_ptr(), dp),
                  ctypes.cast(lm.data_ptr(), dp), b, ctypes.cast(qsum.data_ptr(), dp))
        self._release(zo, qsum)
        return self._finish(zo, grads)

    def _finish(self, zo: ctypes.c_void_p, grads: Optional[List[torch.Tensor]]) -> float:
        """The update pass over every tuned tensor (pazo-m: its public part first), then the
        step's end; returns the step's loss."""
        for i, p in enumerate(self._params):
            if grads is not None:
                _c.update_public(self._zo, self._offset[id(p)], p.data, grads[i])
            _c.update(self._zo, self._offset[id(p)], p.data)
        # kept here: dpzo_zo_gradient and dpzo_zo_choice describe the begun step only
        self._last_g = [float(_c.zo_gradient(zo, k)) for k in range(self._queries)]
        self._last_choice = int(_c.zo_choice(zo))
        _lib.call(_c.zo_end, zo)
        return float(_c.zo_take_loss(zo))

    def _set_score(self, zo: ctypes.c_void_p) -> None:
        """dpzopo, at a stage's first step: the linearised network's output sums at
        |theta| +- beta v_p (score_closure at those weights), then the C library's score and
        mask."""
        dp = ctypes.POINTER(ctypes.c_double)
        m = _c.zo_score_queries(zo)
        beta = _c.zo_score_lambda(zo)
        sums = torch.zeros((2, m), dtype=torch.float64)
        for p in range(m):
            d = _c.zo_score_direction(zo, p)
            for row, sign in ((0, 1.0), (1, -1.0)):
                out = self._evaluate(d, sign * beta, self._score_closure,  # type: ignore[arg-type]
                                     absolute=True, kind="score")
                sums[row, p] = float(out)
        theta = torch.cat([p.detach().reshape(-1).to(torch.float32) for p in self._params])
        _lib.call(_c.zo_set_score, zo, ctypes.cast(sums[0].data_ptr(), dp),
                  ctypes.cast(sums[1].data_ptr(), dp), theta.data_ptr())

    def mask(self) -> Optional[torch.Tensor]:
        """dpzopo: the current stage's mask (one multiplier per tuned element, global
        order; 0 freezes an element), a copy; None before the first step."""
        ptr = _c.zo_mask(ctypes.c_void_p(self._zo))
        if not ptr:
            return None
        return torch.frombuffer(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float * self._dim))
                                .contents, dtype=torch.float32).clone()

    def _candidates_step(self, zo: ctypes.c_void_p, closure: Callable[[], Any]) -> float:
        """pazo-s: the candidates' per-example losses, released in one or two parts (the C
        step picks the candidate), then the step taken."""
        dp = ctypes.POINTER(ctypes.c_double)
        lr = _c.zo_lr(zo)
        b: Optional[int] = None
        while True:
            m = _c.zo_candidates(zo)
            if m == 0:
                break
            cols = []
            for j in range(m):
                cols.append(self._evaluate(_c.zo_candidate(zo, j), -lr,
                                           lambda: self._losses(closure, b)))
                b = cols[-1].numel()
            vals = torch.stack(cols, 1).contiguous()
            qsum = torch.zeros(m, dtype=torch.float64)
            _lib.call(_c.zo_clip_sum_candidates, zo, ctypes.cast(vals.data_ptr(), dp), b,
                      ctypes.cast(qsum.data_ptr(), dp))
            self._release(zo, qsum)
        return self._finish(zo, None)

    def last_choice(self) -> int:
        """pazo-s: the candidate the latest step took (k: the noisy one)."""
        return self._last_choice

    def _public_gradients(self) -> List[torch.Tensor]:
        """pazo-m: the public batch's mean-loss gradient at theta, by autograd, as float32
        (first order on public rows: no clipping, no noise)."""
        saved = [p.grad for p in self._params]
        for p in self._params:
            p.grad = None
        with torch.enable_grad():
            loss = self._public_closure()  # type: ignore[misc]
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                raise Error("public_closure must return the mean loss (one-element tensor)")
            loss.backward()
        grads = []
        for p, g in zip(self._params, saved):
            grad = p.grad if p.grad is not None else torch.zeros_like(p)
            grads.append(grad.detach().to(torch.float32).contiguous())
            p.grad = g
        if self._group is not None:  # the public batch may differ per rank: average
            import torch.distributed as dist
            for grad in grads:
                dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=self._group)
                grad.div_(_world(self._group))
        return grads

    def _release(self, zo: ctypes.c_void_p, qsum: torch.Tensor) -> None:
        dp = ctypes.POINTER(ctypes.c_double)
        released = torch.empty_like(qsum)
        if self._group is not None:
            import torch.distributed as dist
            dev = self._collective_device()
            total = qsum.to(dev)
            dist.all_reduce(total, op=dist.ReduceOp.SUM, group=self._group)
            qsum = total.cpu()
        root = self._group is None or _rank(self._group) == 0
        if root:
            if self._noise_override is not None:  # tests only: a known noise sequence
                z = torch.tensor(list(self._noise_override(self.steps_done, qsum.numel())),
                                 dtype=torch.float64)
                released = qsum + z
            else:
                _lib.call(_c.zo_release, zo, ctypes.cast(qsum.data_ptr(), dp),
                          ctypes.cast(released.data_ptr(), dp))
        if self._group is not None:
            import torch.distributed as dist
            dev = self._collective_device()
            r = released.to(dev)
            dist.broadcast(r, src=_root_rank(self._group), group=self._group)
            released = r.cpu()
        if not root or self._noise_override is not None:
            _lib.call(_c.zo_adopt, zo, ctypes.cast(released.data_ptr(), dp))

    # ---- batches -------------------------------------------------------------------------

    def batch(self, t: int) -> List[int]:
        """The row indices of step t's batch (this rank's share when data parallel): a
        pure function of the secret sampling seed and t (Poisson by default)."""
        cap = _c.zo_batch_capacity(ctypes.c_void_p(self._zo))
        idx = (ctypes.c_size_t * max(cap, 1))()
        m = _c.zo_batch(ctypes.c_void_p(self._zo), int(t), idx)
        rows = list(idx[:m])
        if self._group is not None:
            world, rank = _world(self._group), _rank(self._group)
            lo, hi = (m * rank) // world, (m * (rank + 1)) // world
            rows = rows[lo:hi]
        return rows

    def batch_sampler(self) -> "StepBatchSampler":
        """A batch sampler for ``torch.utils.data.DataLoader(dataset, batch_sampler=...)``:
        the batches of the steps still to run, in order (each must go to one step)."""
        return StepBatchSampler(self)

    # ---- the ledger ------------------------------------------------------------------------

    @property
    def steps_done(self) -> int:
        return int(_c.zo_steps_done(ctypes.c_void_p(self._zo)))

    @property
    def steps(self) -> int:
        return self._steps

    def epsilon_spent(self) -> float:
        """A proven upper bound on the epsilon spent so far (at :meth:`delta`); +inf for
        mezo."""
        return float(_c.zo_epsilon(ctypes.c_void_p(self._zo)))

    def budget(self) -> float:
        return float(_c.zo_budget(ctypes.c_void_p(self._zo)))

    def delta(self) -> float:
        return float(_c.zo_delta(ctypes.c_void_p(self._zo)))

    def noise_draws(self) -> int:
        return int(_c.zo_noise_draws(ctypes.c_void_p(self._zo)))

    def lr_at(self, t: int) -> float:
        """The learning rate step t uses (the plan's schedule or DP-ZOSO's stage rate, as the
        C step computes it when the step begins); NaN for t >= steps (no such step)."""
        return float(_c.zo_lr_at(ctypes.c_void_p(self._zo), int(t)))

    def last_gradient(self) -> List[float]:
        """The released g_k of the latest step of this object (NaN before its first step)."""
        return list(self._last_g)

    # ---- checkpoints -------------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:  # type: ignore[override]
        """The run's state: steps done (the ledger), the sampling seed (secret: it fixes the
        batches; keep the checkpoint as private as the data), the configuration. The
        parameters themselves are the model's (``model.state_dict()``)."""
        s = {"version": _STATE_VERSION, "config": self._config, "dim": self._dim,
             "dataset_size": self._n, "steps_done": self.steps_done,
             "sampling_seed": int(_c.zo_sampling_seed(ctypes.c_void_p(self._zo))),
             "profile_sha256": self._profile_sha256()}
        mask = self.mask()
        if mask is not None:  # dpzopo: the stage's mask is part of the run's state
            s["mask"] = mask
        return {"dpzo": s, "param_groups": [{"lr": g["lr"]} for g in self.param_groups]}

    def _profile_sha256(self) -> Optional[str]:
        """The checksum of the profile the C step opened (None: non-private)."""
        prof = _c.zo_profile(ctypes.c_void_p(self._zo))
        return prof.contents.sha256.decode() if prof else None

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:  # type: ignore[override]
        """Resumes a run saved by :meth:`state_dict` (load the model's parameters too):
        the same configuration, parameters and data set size are required; the ledger
        continues from the saved step count."""
        s = state_dict.get("dpzo") if isinstance(state_dict, dict) else None
        if not isinstance(s, dict) or s.get("version") != _STATE_VERSION:
            raise Error("load_state_dict: not a dpzo.torch optimizer state (version "
                        f"{_STATE_VERSION})")
        if not _same_config(s.get("config"), self._config) or \
                s.get("profile_sha256") != self._profile_sha256():
            raise Error("load_state_dict: the saved run had another configuration: "
                        f"{s.get('config')} (this one: {self._config})")
        if s.get("dim") != self._dim or s.get("dataset_size") != self._n:
            raise Error(f"load_state_dict: the saved run tuned {s.get('dim')} parameters on "
                        f"{s.get('dataset_size')} rows; this one {self._dim} on {self._n}")
        zo = ctypes.c_void_p(self._zo)
        own_seed = int(_c.zo_sampling_seed(zo))
        _lib.call(_c.zo_set_sampling_seed, zo, int(s["sampling_seed"]))
        try:
            _lib.call(_c.zo_set_steps_done, zo, int(s["steps_done"]))
        except Error:  # refused (e.g. going back in the ledger): leave this run as it was
            _lib.call(_c.zo_set_sampling_seed, zo, own_seed)
            raise
        if s.get("mask") is not None:
            mask = torch.as_tensor(s["mask"], dtype=torch.float32).contiguous()
            if mask.numel() != self._dim:
                raise Error(f"load_state_dict: the mask has {mask.numel()} entries, not "
                            f"{self._dim}")
            _lib.call(_c.zo_set_mask, zo, mask.data_ptr())


def _caller_level() -> int:
    """The stacklevel of a warning given by the caller of this function that names the
    first frame outside dpzo.torch, contextlib and torch (its no_grad decorator and
    Optimizer.step wrapper): the user's step() call."""
    here = os.path.dirname(os.path.abspath(__file__))
    skip = (here + os.sep, os.path.abspath(contextlib.__file__),
            os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and \
            os.path.abspath(frame.f_code.co_filename).startswith(skip):
        frame, level = frame.f_back, level + 1
    return level


def _same_config(saved: Any, own: str) -> bool:
    """The same run's configuration: equal as JSON values (8 and 8.0 are one batch size),
    the profile compared by its checksum (the state's profile_sha256), not by its path."""
    try:
        a, b = json.loads(saved), json.loads(own)
    except (TypeError, ValueError):
        return False
    if not isinstance(a, dict):
        return False
    a.pop("profile", None)
    b.pop("profile", None)
    return a == b


class StepBatchSampler(torch.utils.data.Sampler):
    """The batches of an optimizer's remaining steps (see ZOOptimizer.batch_sampler)."""

    def __init__(self, opt: ZOOptimizer) -> None:
        self._opt = opt

    def __iter__(self) -> Iterator[List[int]]:
        for t in range(self._opt.steps_done, self._opt.steps):
            yield self._opt.batch(t)

    def __len__(self) -> int:
        return self._opt.steps - self._opt.steps_done


def _world(group: Any) -> int:
    import torch.distributed as dist
    return dist.get_world_size(group)


def _rank(group: Any) -> int:
    import torch.distributed as dist
    return dist.get_rank(group)


def _root_rank(group: Any) -> int:
    import torch.distributed as dist
    return dist.get_global_rank(group, 0) if hasattr(dist, "get_global_rank") else 0
