"""The settings every meta-network run trains with (:class:`TrainConfig`): budget, plateau rule, optimiser,
warm-up, InfoNCE views, augmentation, device."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hgutils.loop import Budget
from hgutils.weightspace.augment import INRAugmentation

#: Euclidean optimisers a :class:`TrainConfig` can ask for
OPTIMIZERS: tuple[str, ...] = ("adam", "adamw")


@dataclass(frozen=True)
class TrainConfig:
    """Training-loop settings (the same for every model: same budget, same tuning effort)."""

    epochs: int = 30  # maximum epochs (ignored when ``steps`` is set)
    steps: int | None = None  # budget in optimiser steps (epochs follow from it; evaluation once per epoch)
    batch_size: int = 32  # networks per step
    lr: float = 1e-3  # learning rate (Euclidean parameters)
    weight_decay: float = 0.0  # weight decay (Adam: L2 in the gradient; AdamW: decoupled)
    optimizer: str = "adam"  # "adam" | "adamw" (Euclidean parameters)
    amsgrad: bool = False  # the AMSGrad variant of Adam / AdamW
    warmup_steps: int = 0  # linear learning-rate warmup from 0 over this many optimiser steps
    patience: int = 10  # plateau rule: epochs in a row without an improvement above min_delta (hgutils.loop)
    min_delta: float | None = None  # plateau rule's minimum improvement (None: hgutils.loop.DEFAULT_MIN_DELTA)
    min_epochs: int = 0  # the plateau rule never stops a run before this many epochs (a flat start)
    seed: int = 0  # shuffling / augmentation / sampling seed
    grad_clip: float | None = 5.0  # global gradient-norm clip (None = off)
    max_steps: int | None = None  # hard cap on optimiser steps (kept for old callers; ``steps`` is the budget)
    eval_batch_size: int = 128  # networks per evaluation batch
    temperature: float = 0.1  # InfoNCE temperature
    aug_shift: float = 0.2  # InfoNCE view: each tensor shifted by this times its std (DWSNets' noise_scale)
    aug_drop: float = 0.5  # InfoNCE view: dropout probability, survivors scaled by 1/(1 - p) (DWSNets' drop_rate)
    checkpoint_path: str | None = None  # save after each epoch / resume from here (None = off)
    restore_best: bool = True  # end with the weights of the best validation epoch (else: the last)
    device: str = "cpu"  # "cpu" or "cuda": model and each batch are moved there (data stays where it is)
    probe_size: int = 256  # training networks on which the loss is measured before/after (learnability check)
    augment: INRAugmentation | None = None  # weight-space augmentation of every training batch (None: off)

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {self.optimizer!r}")
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0; got {self.warmup_steps}")
        if self.augment is not None and not isinstance(self.augment, INRAugmentation):
            raise ValueError(f"augment must be an INRAugmentation or None; got {self.augment!r}")

    def make_optimizer(self, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
        """The Euclidean optimiser of these settings (Adam or AdamW, ``amsgrad``, weight decay)."""
        cls = torch.optim.AdamW if self.optimizer == "adamw" else torch.optim.Adam
        return cls(params, lr=self.lr, weight_decay=self.weight_decay, amsgrad=self.amsgrad)

    def make_warmup(self, opt: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LambdaLR | None:
        r"""Linear warmup :math:`\mathrm{lr}\cdot\min(1, (s + 1)/w)` over ``warmup_steps`` steps (None: off)."""
        if self.warmup_steps <= 0:
            return None
        w = self.warmup_steps
        return torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / w))

    def budget(self) -> Budget:
        """The loop's :class:`hgutils.loop.Budget` for these settings."""
        rule = {"patience": self.patience, "min_delta": self.min_delta, "min_epochs": self.min_epochs}
        if self.steps is not None:
            return Budget(max_steps=self.steps, restore_best=self.restore_best, **rule)
        return Budget(epochs=self.epochs, max_steps=self.max_steps, restore_best=self.restore_best, **rule)
