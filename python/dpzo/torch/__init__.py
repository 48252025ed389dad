# SPDX-License-Identifier: Apache-2.0
"""dpzo.torch: the trainer plugin for PyTorch (docs/plugin.md).

DP zeroth-order fine-tuning of the user's own ``torch.nn.Module``: :class:`ZOOptimizer`
(``step(closure)`` with per-example losses, ``state_dict``/``load_state_dict``, a batch
sampler for ``DataLoader``, data parallel over ``torch.distributed``), with the steps,
directions, privacy object and ledger of the C library (the code ``dpzo train`` runs).
``dpzo.torch.hf`` connects it to Hugging Face's ``Trainer``.
"""
from .optimizer import ALGORITHMS, BudgetExceeded, StepBatchSampler, ZOOptimizer

__all__ = ["ZOOptimizer", "StepBatchSampler", "BudgetExceeded", "ALGORITHMS"]
