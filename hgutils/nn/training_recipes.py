r"""Training recipes of the ILNN comparison: optimiser and learning-rate schedule.

* :class:`ScheduleRecipe` -- optimiser and learning-rate schedule: the paper's recipes :data:`VISION_RECIPE`
  (RSGD lr 0.1, momentum 0.9, nesterov, wd 5e-4, milestones [60, 120, 160], gamma 0.2, batch 128,
  200 epochs; HCNN arXiv:2303.15919 and ILNN arXiv:2602.23981 share it) and :data:`GENOMICS_RECIPE`
  (RAdam lr 8e-4, wd 5e-3, milestones [100, 130], gamma 0.1, batch 256, 150 epochs). Shorter runs
  rescale the milestones proportionally (:meth:`ScheduleRecipe.scaled`) or use another ``schedule``
  (:data:`SCHEDULES`: one late decay, cosine); :func:`make_scheduler` builds it.
* :func:`make_optimizer` -- geoopt ``RiemannianSGD`` / ``RiemannianAdam`` (every parameter of the
  hgutils layers is Euclidean -- Lorentz biases are tangent vectors at the origin -- so these act as
  their Euclidean counterparts; they stay the paper's optimizers should a ``ManifoldParameter`` be used).

Training a classifier under a recipe is :mod:`hgutils.nn.classifier_training`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import geoopt
import torch
from torch import nn

__all__ = [
    "SCHEDULES",
    "ScheduleRecipe",
    "make_scheduler",
    "VISION_RECIPE",
    "GENOMICS_RECIPE",
    "make_optimizer",
]


#: Learning-rate schedules of a :class:`ScheduleRecipe`:
#: ``"milestones"`` -- multiply by ``gamma`` at each epoch in ``milestones`` (the papers');
#: ``"late_decay"`` -- constant, then one multiplication by ``gamma`` after ``decay_at`` of the epochs;
#: ``"cosine"`` -- cosine annealing from ``lr`` to 0 over the run.
SCHEDULES: tuple[str, ...] = ("milestones", "late_decay", "cosine")


@dataclass(frozen=True)
class ScheduleRecipe:
    """Optimiser and schedule of one training protocol (``schedule`` in :data:`SCHEDULES`)."""

    optimizer: str = "rsgd"  # "rsgd" (RiemannianSGD) | "radam" (RiemannianAdam)
    lr: float = 0.1
    momentum: float = 0.9  # rsgd only
    nesterov: bool = True  # rsgd only
    weight_decay: float = 5e-4
    milestones: tuple[int, ...] = (60, 120, 160)
    gamma: float = 0.2
    epochs: int = 200
    batch_size: int = 128
    schedule: str = "milestones"
    decay_at: float = 0.8  # "late_decay": fraction of the epochs at constant lr

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}; got {self.schedule!r}")
        if not 0.0 < self.decay_at <= 1.0:
            raise ValueError(f"decay_at must be in (0, 1]; got {self.decay_at}")

    def scaled(
        self,
        epochs: int,
        batch_size: int | None = None,
        lr: float | None = None,
        schedule: str | None = None,
        weight_decay: float | None = None,
    ) -> ScheduleRecipe:
        """Same recipe for ``epochs`` epochs, milestones at the same fractions of training; optionally
        another batch size, learning rate, schedule or weight decay."""
        ms = tuple(
            sorted(
                {
                    max(1, round(m * epochs / self.epochs))
                    for m in self.milestones
                    if round(m * epochs / self.epochs) < epochs
                }
            )
        )
        return dataclasses.replace(
            self,
            epochs=epochs,
            milestones=ms,
            batch_size=batch_size or self.batch_size,
            lr=lr or self.lr,
            schedule=schedule or self.schedule,
            weight_decay=self.weight_decay if weight_decay is None else weight_decay,
        )

    def lr_at(self, epoch: int) -> float:
        """The learning rate used during epoch ``epoch`` (0-based)."""
        if self.schedule == "milestones":
            return self.lr * self.gamma ** sum(epoch >= m for m in self.milestones)
        if self.schedule == "late_decay":
            return self.lr * (self.gamma if epoch >= self.decay_epoch() else 1.0)
        return self.lr * 0.5 * (1 + math.cos(math.pi * epoch / self.epochs))

    def decay_epoch(self) -> int:
        """``"late_decay"``: the first epoch at the decayed rate (at least 1, at most ``epochs``)."""
        return min(self.epochs, max(1, round(self.decay_at * self.epochs)))


def make_scheduler(opt: torch.optim.Optimizer, recipe: ScheduleRecipe) -> torch.optim.lr_scheduler.LRScheduler:
    """The per-epoch scheduler of ``recipe`` (stepped once after every epoch): the learning rate of
    epoch ``e`` is :meth:`ScheduleRecipe.lr_at` ``(e)``."""
    return torch.optim.lr_scheduler.LambdaLR(opt, lambda e: recipe.lr_at(e) / recipe.lr)


VISION_RECIPE = ScheduleRecipe()
GENOMICS_RECIPE = ScheduleRecipe(
    optimizer="radam",
    lr=8e-4,
    momentum=0.0,
    nesterov=False,
    weight_decay=5e-3,
    milestones=(100, 130),
    gamma=0.1,
    epochs=150,
    batch_size=256,
)


def make_optimizer(model: nn.Module, recipe: ScheduleRecipe) -> torch.optim.Optimizer:
    """geoopt Riemannian optimiser for ``recipe`` (RiemannianSGD or RiemannianAdam)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if recipe.optimizer == "rsgd":
        return geoopt.optim.RiemannianSGD(
            params,
            lr=recipe.lr,
            momentum=recipe.momentum,
            nesterov=recipe.nesterov and recipe.momentum > 0,
            weight_decay=recipe.weight_decay,
        )
    if recipe.optimizer == "radam":
        return geoopt.optim.RiemannianAdam(params, lr=recipe.lr, weight_decay=recipe.weight_decay)
    raise ValueError(f"optimizer must be 'rsgd' or 'radam'; got {recipe.optimizer!r}")
