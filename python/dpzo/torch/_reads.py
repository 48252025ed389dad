# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch._reads: which modules read the tuned tensors, for perturb="layer".

Under perturb="layer" a tuned tensor holds its perturbed value only during the forward of
its home modules (at first the module holding it). A module may read another module's
tensor itself (nn.MultiheadAttention reads out_proj.weight and out_proj.bias and never
calls out_proj), and a closure may read a weight outside every forward: such a read would
see theta, not theta + alpha u (issue 28, item 2).

:class:`ReadTracker` watches one evaluation at the level of the operators: a
``TorchDispatchMode`` sees every kernel call below autograd, whatever path a module's
forward takes (fused fast paths included), and calls the same kernels, so the numbers are
those of an evaluation without it. An operator given the unperturbed storage of a tuned
tensor (the tensor itself or any view of it) gets the same view of the perturbed value
instead, which stays in place until the evaluation ends, so the evaluation is right; the
innermost of the model's modules whose forward was running (None: none was) is recorded
as a reader of that tensor.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_unflatten

from ..errors import Error

__all__ = ["ReadTracker"]


def _storage_key(t: torch.Tensor) -> Optional[int]:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError, TypeError):  # no plain storage (nested, ...)
        return None


class ReadTracker(TorchDispatchMode):
    """One evaluation's reads of the tuned tensors' unperturbed storage.

    ``theta``: id(p) -> (p, the tensor holding theta, which p.data is while p is not
    perturbed); ``pin(p)``: perturbs p for the rest of the evaluation and returns the
    perturbed tensor (its layout is theta's). ``quiet`` > 0 lets the optimizer's own
    operators (the perturbation itself) through unwatched. After the evaluation,
    ``readers`` maps id(p) to (p, the set of modules that read its unperturbed storage, None
    standing for "outside every module's forward")."""

    def __init__(self, model: torch.nn.Module,
                 theta: Dict[int, Tuple[torch.nn.Parameter, torch.Tensor]],
                 pin: Callable[[torch.nn.Parameter], torch.Tensor]) -> None:
        super().__init__()
        self.quiet = 0
        self.readers: Dict[int, Tuple[torch.nn.Parameter, Set[Optional[torch.nn.Module]]]] = {}
        self._pin = pin
        self._members = {id(m) for m in model.modules()}
        self._by_storage: Dict[int, List[Tuple[torch.nn.Parameter, torch.Tensor]]] = {}
        for p, orig in theta.values():
            key = _storage_key(orig)
            if orig.numel() > 0 and key:
                self._by_storage.setdefault(key, []).append((p, orig))
        self._stack: List[torch.nn.Module] = []
        self._thread = threading.get_ident()
        self._handles: List[Any] = []

    # ---- the modules whose forward is running (global module hooks, this thread only) ----

    def _enter_module(self, module: torch.nn.Module, args: Any) -> None:
        if id(module) in self._members and threading.get_ident() == self._thread:
            self._stack.append(module)

    def _leave_module(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if self._stack and self._stack[-1] is module and \
                threading.get_ident() == self._thread:
            self._stack.pop()

    def __enter__(self) -> "ReadTracker":
        hooks = torch.nn.modules.module
        self._handles = [hooks.register_module_forward_pre_hook(self._enter_module),
                         hooks.register_module_forward_hook(self._leave_module)]
        try:
            super().__enter__()
        except BaseException:
            self._remove_hooks()
            raise
        return self

    def __exit__(self, *exc: Any) -> Any:
        try:
            return super().__exit__(*exc)
        finally:
            self._remove_hooks()

    def _remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    # ---- the operators ---------------------------------------------------------------------

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if self.quiet or not self._by_storage:
            return func(*args, **kwargs)
        flat, spec = tree_flatten((args, kwargs))
        changed = False
        for i, a in enumerate(flat):
            if isinstance(a, torch.Tensor):
                swap = self._perturbed_view(a)
                if swap is not None:
                    flat[i] = swap
                    changed = True
        if changed:
            args, kwargs = tree_unflatten(flat, spec)
        return func(*args, **kwargs)

    def _perturbed_view(self, a: torch.Tensor) -> Optional[torch.Tensor]:
        """None when a does not read a tuned tensor's theta; else the same view of the
        perturbed value (the read recorded, the tensor pinned perturbed)."""
        key = _storage_key(a)
        found = self._by_storage.get(key) if key else None
        if not found or a.numel() == 0:
            return None
        size = a.element_size()
        lo = a.storage_offset() * size
        for p, orig in found:
            olo = orig.storage_offset() * orig.element_size()
            ohi = olo + orig.numel() * orig.element_size()
            if olo <= lo < ohi:
                break
        else:
            return None
        hi = lo + size * (1 + sum((n - 1) * s for n, s in zip(a.shape, a.stride())))
        if a.dtype != orig.dtype or hi > ohi:
            raise Error("perturb=\"layer\": a view of a tuned tensor that "
                        "reaches outside it or reinterprets its type was read: not supported")
        where = self._stack[-1] if self._stack else None
        self.readers.setdefault(id(p), (p, set()))[1].add(where)
        tmp = self._pin(p)
        return tmp.as_strided(a.shape, a.stride(), tmp.storage_offset() + (lo - olo) // size)
