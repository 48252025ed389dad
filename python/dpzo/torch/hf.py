# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch.hf: DP zeroth-order fine-tuning with Hugging Face's ``transformers.Trainer``
(docs/plugin.md, section "Hugging Face").

:class:`ZOTrainer` is a ``transformers.Trainer`` whose training step is one step of
:class:`dpzo.torch.ZOOptimizer` (DPZero, MeZO or DP-ZOSO) instead of a backward pass and an
optimizer step. Everything else is the Trainer's: the model, ``TrainingArguments``, the
collator, logging, evaluation, checkpoints and ``resume_from_checkpoint``.

- The optimizer is made from the trainer's own keywords (``dpzo_algorithm``, ``profile``,
  ``clip``, ``perturbation``, ``queries``, ``seed``, ...) and the arguments' ``learning_rate``,
  ``max_steps`` (the plan's T), ``per_device_train_batch_size`` (the expected batch size B of
  Poisson sampling) and ``lr_scheduler_type`` (``constant``, ``linear`` or ``cosine``, without
  warm-up: dpzo's schedule of that name; the Trainer's scheduler reads ``lr_at(t)``, so the
  logged learning rate is the one the step used), with n = ``len(train_dataset)``.
- The training batches are the optimizer's own (``ZOOptimizer.batch_sampler()``: Poisson by
  default, a pure function of the secret sampling seed and the step), so the Trainer's
  sampler, shuffling and data skipping are not used. A Poisson batch may be empty: the step
  then releases noise only, as the analysis assumes.
- The losses are per example: cross-entropy (reduction none) of the logits and labels for
  sequence classification, mean token cross-entropy per row for causal language models
  (labels shifted) and token classification, squared error for regression; or the user's
  ``per_example_loss(model, inputs) -> 1-D tensor``. The model runs in eval mode during a
  step (no dropout: both evaluations of a direction must see the same function).
- ``epsilon`` and ``delta`` (the ledger's proven bound so far) go into every log record of a
  private run; the optimizer's state (the ledger: steps done, and the secret sampling seed)
  goes into each checkpoint's ``optimizer.pt`` and comes back with
  ``train(resume_from_checkpoint=...)``. A checkpoint is as private as the data.
- Refused, each with a clear error: ``gradient_accumulation_steps`` other than 1, no
  ``max_steps``, warm-up or another scheduler, several processes or GPUs (use
  ``ZOOptimizer`` with ``torch.distributed`` directly), DeepSpeed, FSDP, ``torch_compile``,
  ``auto_find_batch_size``, ``model_init``, ``compute_loss_func``,
  ``save_only_model`` (its checkpoints lack the ledger), an iterable training set, and a
  resume whose checkpoint has no optimizer state. A run whose plan is done stops: a further
  ``train()`` raises :class:`dpzo.torch.BudgetExceeded` before any step.
"""
from __future__ import annotations

import collections
import math
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional

import torch
import transformers
from torch.utils.data import DataLoader, IterableDataset

from .. import _check
from ..errors import Error
from .optimizer import BudgetExceeded, ZOOptimizer

__all__ = ["ZOTrainer", "per_example_loss", "SCHEDULES"]

#: Hugging Face ``lr_scheduler_type`` values that are dpzo ``lr_schedule`` values (without
#: warm-up both give lr (1 - t/T) and lr (1 + cos(pi t/T)) / 2 at step t).
SCHEDULES = ("constant", "linear", "cosine")

def _logits(outputs: Any) -> torch.Tensor:
    logits = getattr(outputs, "logits", None)
    if logits is None:
        if isinstance(outputs, (tuple, list)) and outputs and isinstance(outputs[0], torch.Tensor):
            return outputs[0]
        if isinstance(outputs, torch.Tensor):
            return outputs
        raise Error("the model's output has no logits: pass per_example_loss=")
    return logits


def _unwrapped(model: torch.nn.Module) -> torch.nn.Module:
    while hasattr(model, "module") and isinstance(model.module, torch.nn.Module):
        model = model.module
    return model


def _is_head(name: str, task: str, suffix: str) -> bool:
    """Whether a model class name is one of transformers' heads for the task."""
    if name.endswith(suffix):
        return True
    try:
        from transformers.models.auto import modeling_auto
        names = getattr(modeling_auto, f"MODEL_FOR_{task}_MAPPING_NAMES", {})
    except ImportError:  # pragma: no cover
        return False
    return any(name == v or (isinstance(v, (tuple, list)) and name in v) for v in names.values())


def _token_mean(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per row over the tokens whose label is not -100 (a row without one
    has loss 0)."""
    tok = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), reduction="none",
        ignore_index=-100).reshape(labels.shape)
    valid = (labels != -100).to(tok.dtype)
    return (tok * valid).sum(dim=1) / valid.sum(dim=1).clamp(min=1)


def per_example_loss(model: torch.nn.Module, inputs: Dict[str, Any]) -> torch.Tensor:
    """The default per-example loss of :class:`ZOTrainer` (a 1-D tensor, one loss a row).

    The labels are taken out of ``inputs`` (so the model does not compute its own mean loss)
    and the loss is computed from the logits:

    - 2-D logits (sequence classification): cross-entropy, reduction none; squared error
      when the model has one label or ``config.problem_type == "regression"``; binary
      cross-entropy summed over labels for ``"multi_label_classification"``.
    - 3-D logits of a causal language model (a class of transformers' causal-LM mapping,
      e.g. ``GPT2LMHeadModel``, ``OPTForCausalLM``): the next-token cross-entropy (labels
      shifted by one), averaged over each row's tokens whose label is not -100.
    - 3-D logits of a token-classification model: the same without the shift.

    Any other head needs ``per_example_loss=`` of its own."""
    if "labels" not in inputs:
        raise Error("the batch has no \"labels\": pass per_example_loss= to ZOTrainer")
    labels = inputs["labels"]
    rest = {k: v for k, v in inputs.items() if k != "labels"}
    logits = _logits(model(**rest))
    core = _unwrapped(model)
    config = getattr(core, "config", None)
    name = type(core).__name__
    if logits.dim() == 2:
        problem = getattr(config, "problem_type", None)
        if problem == "regression" or (problem is None and logits.shape[-1] == 1):
            b = logits.shape[0]
            return (logits.float().reshape(b, -1) - labels.float().reshape(b, -1)).pow(2).sum(1)
        if problem == "multi_label_classification":
            return torch.nn.functional.binary_cross_entropy_with_logits(
                logits.float(), labels.float(), reduction="none").sum(dim=1)
        return torch.nn.functional.cross_entropy(logits.float(), labels.reshape(-1),
                                                 reduction="none")
    if logits.dim() == 3 and labels.dim() == 2:
        if _is_head(name, "CAUSAL_LM", "ForCausalLM"):
            return _token_mean(logits[:, :-1, :], labels[:, 1:])
        if _is_head(name, "TOKEN_CLASSIFICATION", "ForTokenClassification"):
            return _token_mean(logits, labels)
    raise Error(f"no default per-example loss for {name} (logits of shape "
                f"{tuple(logits.shape)}): pass per_example_loss=")


_default_loss = per_example_loss


class _TrainerOptimizer(ZOOptimizer):
    """The trainer's ZOOptimizer: the Trainer's loop calls ``optimizer.step()`` without a
    closure after each training step, when the zeroth-order step has already run (in
    ``ZOTrainer.training_step``): that call does nothing."""

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[float]:  # type: ignore[override]
        if closure is None:
            return None
        return super().step(closure)


class _StepBatches(torch.utils.data.Sampler):
    """The DataLoader's batch sampler: ``opt.batch_sampler()`` (the batches of the steps
    still to run, from the ledger's step count whenever an iteration starts), each batch's
    step recorded so that ``training_step`` can check that the batch it is given is the one
    of the step it runs. Its length is the expected number of batches in a pass over the
    data, round(n / B), so that the Trainer's epochs are passes over the data."""

    def __init__(self, opt: ZOOptimizer, per_epoch: int, trainer_done: Callable[[], bool]) -> None:
        self._opt = opt
        self._per_epoch = per_epoch
        self._trainer_done = trainer_done
        self.issued: Deque[int] = collections.deque()

    def __iter__(self) -> Iterator[List[int]]:
        self.issued.clear()
        start = self._opt.steps_done
        if start >= self._opt.steps:
            if self._trainer_done():  # a resume from the run's last checkpoint: nothing to do
                return
            raise BudgetExceeded(
                f"the plan's {self._opt.steps} steps are all done (epsilon "
                f"{self._opt.epsilon_spent():.6g} spent): no further step can run on this "
                "optimizer", 6)
        for i, rows in enumerate(self._opt.batch_sampler()):
            self.issued.append(start + i)
            yield rows

    def __len__(self) -> int:
        return self._per_epoch


class _DataPasses(transformers.TrainerCallback):
    """The Trainer's ``epoch`` is the expected number of passes over the data, t B / n: set
    from the step count (a resume does not skip batches, so the Trainer's own count would
    restart at the checkpoint's epoch boundary)."""

    def __init__(self, per_epoch: int) -> None:
        self._per_epoch = per_epoch

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        state.epoch = state.global_step / self._per_epoch


class _Collate:
    """The Trainer's collator, with an empty batch (Poisson sampling) collated to {}."""

    def __init__(self, collate: Callable[[List[Any]], Any]) -> None:
        self._collate = collate

    def __call__(self, features: List[Any]) -> Any:
        if len(features) == 0:
            return {}
        return self._collate(features)


def _arg(args: Any, name: str, default: Any = None) -> Any:
    return getattr(args, name, default)


class ZOTrainer(transformers.Trainer):
    """A ``transformers.Trainer`` whose step is a DP zeroth-order step (module docstring).

    Keywords of its own (the rest are the Trainer's):

    - ``dpzo_algorithm``: ``"dpzero"`` (default), ``"mezo"`` (non-private) or ``"dpzoso"``.
    - ``profile`` (a path), ``clip``: the noise profile and the clipping bound C (private
      algorithms).
    - ``perturbation`` (lambda), ``queries`` (Q), ``params`` (the tuned parameters; default
      those that require grad): as ``ZOOptimizer``'s keywords (left out: its defaults).
    - ``seed``: the directions' (public) seed; default ``args.seed``.
    - ``dpzo_options``: any other ``ZOOptimizer`` keyword, as a dict (``direction``,
      ``radius``, ``stages``, ``batching``, ``perturb``, ``public``, ``public_closure``, ...).
    - ``per_example_loss``: ``f(model, inputs) -> 1-D tensor``, one loss a row of the batch
      (default :func:`per_example_loss`).

    ``zo_optimizer`` is the :class:`dpzo.torch.ZOOptimizer` (``epsilon_spent()``,
    ``state_dict()``, ...), made when the trainer is.
    """

    def __init__(self, model: Optional[torch.nn.Module] = None, args: Any = None, *,
                 dpzo_algorithm: str = "dpzero", profile: Optional[str] = None,
                 clip: Optional[float] = None, perturbation: Optional[float] = None,
                 queries: Optional[int] = None, seed: Optional[int] = None,
                 params: Optional[Iterable[torch.nn.Parameter]] = None,
                 per_example_loss: Optional[Callable[[torch.nn.Module, Dict[str, Any]],
                                                     torch.Tensor]] = None,
                 dpzo_options: Optional[Dict[str, Any]] = None,
                 **kwargs: Any) -> None:
        if kwargs.get("model_init") is not None:
            raise Error("ZOTrainer: model_init is not supported (the privacy plan is made "
                        "for one model when the trainer is): pass model=")
        if kwargs.get("compute_loss_func") is not None:
            raise Error("ZOTrainer: compute_loss_func gives a batch's mean loss; the "
                        "zeroth-order step needs one loss per example: pass "
                        "per_example_loss=f(model, inputs) -> 1-D tensor")
        opts = kwargs.get("optimizers")
        if opts is not None and any(o is not None for o in opts) or \
                kwargs.get("optimizer_cls_and_kwargs") is not None:
            raise Error("ZOTrainer: the optimizer is dpzo's (made from the trainer's "
                        "keywords): optimizers= and optimizer_cls_and_kwargs= are not used")
        if model is None:
            raise Error("ZOTrainer: model= is required")
        ZOTrainer._check_output_dir(args)  # before the Trainer makes it its own way
        super().__init__(model=model, args=args, **kwargs)
        a = self.args
        self._check_args(a)
        if getattr(self, "is_deepspeed_enabled", False) or getattr(self, "is_fsdp_enabled", False):
            raise Error("ZOTrainer: DeepSpeed and FSDP shard the parameters the zeroth-order "
                        "step perturbs in place of their owners: not supported")
        if self.train_dataset is None:
            raise Error("ZOTrainer: train_dataset= is required (its size n is part of the "
                        "privacy plan)")
        if isinstance(self.train_dataset, IterableDataset) or \
                not hasattr(self.train_dataset, "__len__"):
            raise Error("ZOTrainer: the training set must have a length and be indexable "
                        "(the batches are sampled by index), not an iterable data set")
        # The batches are the optimizer's, from its own step count: never skipped by the
        # Trainer on resume (the ledger knows where the run stands).
        a.ignore_data_skip = True
        self.dpzo_algorithm = dpzo_algorithm
        self._per_example_loss = per_example_loss or _default_loss
        schedule = str(getattr(a.lr_scheduler_type, "value", a.lr_scheduler_type))
        zo: Dict[str, Any] = dict(dpzo_options or {})
        for key in ("model", "lr", "steps", "batch_size", "dataset_size", "algorithm",
                    "lr_schedule", "process_group"):
            if key in zo:
                raise Error(f"ZOTrainer: dpzo_options cannot set {key!r} (it comes from the "
                            "trainer: model=, TrainingArguments, train_dataset, dpzo_algorithm=)")
        for key, value in (("profile", profile), ("clip", clip), ("perturbation", perturbation),
                           ("queries", queries), ("params", params)):
            if value is not None:
                zo[key] = value
        zo["seed"] = int(a.seed if seed is None else seed)
        if schedule != "constant":
            zo["lr_schedule"] = schedule
        self.zo_optimizer: ZOOptimizer = _TrainerOptimizer(
            self.model, algorithm=dpzo_algorithm, lr=a.learning_rate, steps=int(a.max_steps),
            batch_size=a.per_device_train_batch_size,
            dataset_size=len(self.train_dataset),  # type: ignore[arg-type]
            **zo)
        self.optimizer = self.zo_optimizer
        self._batches: Optional[_StepBatches] = None
        self._per_epoch = max(1, round(len(self.train_dataset)  # type: ignore[arg-type]
                                       / float(a.per_device_train_batch_size)))
        self.add_callback(_DataPasses(self._per_epoch))

    @staticmethod
    def _check_output_dir(a: Any) -> None:
        """The checkpoints (with the ledger a resume needs) go to args.output_dir: when they
        are saved, the folder must take files before the first step spends any privacy
        budget (issue 28, item 6): made when missing, probed with a file that is removed."""
        if a is None or getattr(a, "output_dir", None) is None:
            return
        strategy = str(getattr(a.save_strategy, "value", a.save_strategy))
        if strategy != "no":
            _check.output_folder("ZOTrainer: output_dir", a.output_dir)

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """transformers.Trainer.train, after checking again that args.output_dir takes files
        (it may have changed since the trainer was made)."""
        self._check_output_dir(self.args)
        return super().train(*args, **kwargs)

    @staticmethod
    def _check_args(a: Any) -> None:
        if int(a.gradient_accumulation_steps) != 1:
            raise Error("ZOTrainer: gradient_accumulation_steps must be 1, got "
                        f"{a.gradient_accumulation_steps}: a zeroth-order step evaluates its "
                        "whole (Poisson) batch at once; set per_device_train_batch_size to the "
                        "expected batch size B (evaluation memory is that of a forward pass)")
        if int(a.max_steps) <= 0:
            raise Error("ZOTrainer: set max_steps (the privacy plan's number of steps T) to a "
                        f"positive value, got {a.max_steps} (epochs are not used)")
        schedule = str(getattr(a.lr_scheduler_type, "value", a.lr_scheduler_type))
        if schedule not in SCHEDULES:
            raise Error(f"ZOTrainer: lr_scheduler_type {schedule!r} is not a dpzo schedule: "
                        f"use one of {', '.join(SCHEDULES)}")
        warm = float(_arg(a, "warmup_steps", 0) or 0) + float(_arg(a, "warmup_ratio", 0) or 0)
        if warm != 0:
            raise Error("ZOTrainer: warm-up is not part of dpzo's schedules: set warmup_steps "
                        "(and warmup_ratio) to 0")
        if int(_arg(a, "world_size", 1)) > 1 or int(_arg(a, "n_gpu", 1)) > 1:
            raise Error("ZOTrainer: one process on at most one device (got world_size "
                        f"{_arg(a, 'world_size', 1)}, n_gpu {_arg(a, 'n_gpu', 1)}); for data "
                        "parallel runs use dpzo.torch.ZOOptimizer with torch.distributed")
        if _arg(a, "auto_find_batch_size", False):
            raise Error("ZOTrainer: auto_find_batch_size would change B, which is part of the "
                        "privacy plan: set it to False")
        if _arg(a, "torch_compile", False):
            raise Error("ZOTrainer: torch_compile is not supported (the step swaps each "
                        "module's tuned tensors for perturbed ones around its forward)")
        if _arg(a, "save_only_model", False):
            raise Error("ZOTrainer: save_only_model would write checkpoints without the "
                        "optimizer's ledger, which a resume needs: set it to False")

    # ---- data --------------------------------------------------------------------------------

    def get_train_dataloader(self) -> DataLoader:
        dataset = self.train_dataset
        collate = self.data_collator
        try:
            import datasets  # type: ignore[import-not-found]
            is_hf_dataset = isinstance(dataset, datasets.Dataset)
        except ImportError:
            is_hf_dataset = False
        if is_hf_dataset:
            dataset = self._remove_unused_columns(dataset, description="training")
        else:
            collate = self._get_collator_with_removed_columns(collate, description="training")
        opt = self.zo_optimizer
        self._batches = _StepBatches(opt, self._per_epoch,
                                     lambda: self.state.global_step >= opt.steps)
        params: Dict[str, Any] = {
            "batch_sampler": self._batches, "collate_fn": _Collate(collate),
            "num_workers": self.args.dataloader_num_workers,
            "pin_memory": self.args.dataloader_pin_memory}
        if self.args.dataloader_num_workers > 0 and self.args.dataloader_prefetch_factor:
            params["prefetch_factor"] = self.args.dataloader_prefetch_factor
        return self.accelerator.prepare(DataLoader(dataset, **params))

    def create_scheduler(self, num_training_steps: int,
                         optimizer: Optional[torch.optim.Optimizer] = None) -> Any:
        """The Trainer's scheduler follows the library's: at step t the logged learning rate
        is ``zo_optimizer.lr_at(t)``, the one the C step uses (0 after the plan's last step)."""
        if self.lr_scheduler is None:
            opt = self.zo_optimizer
            base = float(self.args.learning_rate)

            def factor(t: int) -> float:
                return opt.lr_at(t) / base if t < opt.steps and base != 0 else 0.0
            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(opt, factor)
            self._created_lr_scheduler = True
        return self.lr_scheduler

    # ---- the step ------------------------------------------------------------------------------

    def training_step(self, model: torch.nn.Module, inputs: Dict[str, Any],
                      num_items_in_batch: Any = None) -> torch.Tensor:
        opt = self.zo_optimizer
        done = opt.steps_done
        issued = self._batches.issued if self._batches is not None else None
        t = issued.popleft() if issued else None
        if t != done:
            raise Error(f"ZOTrainer: the batch given is step {t}'s, the optimizer is at step "
                        f"{done}: the training batches must come from get_train_dataloader")
        if self.state.global_step != done:
            raise Error(f"ZOTrainer: the trainer is at step {self.state.global_step} and the "
                        f"optimizer's ledger at step {done}: resume with "
                        "train(resume_from_checkpoint=...) from a checkpoint that has "
                        "optimizer.pt, and run each ZOTrainer's train() once")
        model.eval()
        if len(inputs) == 0:  # an empty Poisson batch: noise only
            def closure() -> torch.Tensor:
                return torch.empty(0, dtype=torch.float64)
        else:
            batch = self._prepare_inputs(inputs)

            def closure() -> torch.Tensor:
                with self.compute_loss_context_manager():
                    losses = self._per_example_loss(model, batch)
                if not isinstance(losses, torch.Tensor) or losses.dim() != 1:
                    raise Error("per_example_loss must return a 1-D tensor (one loss a row)")
                return losses
        loss = opt.step(closure)
        return torch.tensor(loss if loss is not None else math.nan, dtype=torch.float32,
                            device=self.args.device)

    def floating_point_ops(self, inputs: Dict[str, Any]) -> int:
        # The Trainer counts 6 flops a parameter a token (forward and backward); a
        # zeroth-order step runs 2 Q forward passes (2 flops each).
        return super().floating_point_ops(inputs) * 4 * self.zo_optimizer._queries // 6

    # ---- logs ------------------------------------------------------------------------------------

    def log(self, logs: Dict[str, float], *args: Any, **kwargs: Any) -> None:
        logs.pop("grad_norm", None)  # no gradient is computed
        opt = getattr(self, "zo_optimizer", None)
        if opt is not None and math.isfinite(opt.epsilon_spent()):  # private runs
            logs["epsilon"] = opt.epsilon_spent()
            logs["delta"] = opt.delta()
        super().log(logs, *args, **kwargs)
