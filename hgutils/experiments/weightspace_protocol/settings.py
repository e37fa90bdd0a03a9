"""What every weight-space notebook (01-03) sets the same way: :class:`ComparisonSettings` (the preset
fields) and :class:`RunSettings` (how :func:`~.run.run_comparison` trains every model), with their checks."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hgutils.experiments.weightspace_protocol.variants import RECIPE_MODES, VARIANTS
from hgutils.loop import LearnabilityGate
from hgutils.presets import Preset
from hgutils.weightspace.inputs import INPUTS
from hgutils.weightspace.metanets.gth_gmn.config import PROTOCOLS, SIZES
from hgutils.weightspace.metanets.recipes import LR_SCALING_RULES
from hgutils.weightspace.tasks import TrainConfig

log = logging.getLogger("hgutils")


@dataclass(frozen=True)
class RunSettings:
    """How :func:`~.run.run_comparison` trains every model: one object instead of a keyword argument per
    setting (each field is documented under :func:`~.run.run_comparison`'s parameters).

    A notebook gets it from its preset (:meth:`ComparisonSettings.run_settings`) and changes a field
    with :func:`dataclasses.replace` (as the GTH-GMN selection's
    :meth:`~hgutils.experiments.gth_selection.Selection.apply` does).
    """

    train_cfg: TrainConfig = field(default_factory=TrainConfig)
    gth_overrides: Mapping[str, Any] | None = None
    inputs: str = "standardize"
    drop_constant: bool = True
    lr_grid: tuple[float, ...] | None = None
    lr_search_steps: int | None = None
    gate: LearnabilityGate | None = None
    variant_seeds: Mapping[str, tuple[int, ...]] | None = None
    recipes: str = "none"
    workers: int = 1
    epoch_caps: Mapping[str, int] | None = None
    recipe_lr_scaling: str = "sqrt"
    augment: tuple[str, ...] = ("recipe",)
    family_lr: Mapping[str, float] | None = None
    recipe_step_share: float = 1.0
    warmup_share: float = 0.05

    def __post_init__(self) -> None:
        _check_run_fields(self.recipes, self.recipe_lr_scaling, self.workers, self.epoch_caps or {})
        _check_shares(self.recipe_step_share, self.warmup_share)
        if self.lr_grid is not None and (len(self.lr_grid) == 0 or any(not lr > 0 for lr in self.lr_grid)):
            raise ValueError(f"lr_grid must hold positive learning rates; got {self.lr_grid}")
        if self.inputs not in INPUTS:
            raise ValueError(f"inputs must be one of {INPUTS}; got {self.inputs!r}")


@dataclass(frozen=True)
class ComparisonSettings(Preset):
    """What every weight-space notebook (01-03) sets the same way: the inputs every model reads, the
    budget in optimiser steps, the learning-rate search, the learnability gate and GTH-GMN's sizes.

    Notebook presets subclass it (and keep these fields' names, so any of them can be overridden
    from the notebook's parameters cell).
    """

    inputs: str = "standardize"  # how every model's inputs are prepared (prepare_inputs): standardize |
    # delta (W_t - W_0, then standardised) | rms | none
    n_seeds: int = 2  # model seeds
    epochs: int = 3  # epoch cap per model and seed (early stopping on validation decides; a run that reaches
    # the cap is marked capped)
    steps: int | None = None  # optimiser-step cap instead of epochs (None: the epoch cap)
    patience: int = 1000  # plateau rule: epochs in a row without an improvement above min_delta (hgutils.loop)
    min_epochs: int = 0  # the plateau rule never stops a task stage before this many epochs (a flat start)
    batch_size: int = 8  # networks per step
    lr: float = 1e-3  # Adam lr when no grid is searched
    lr_grid: tuple[float, ...] = (1e-3, 3e-3)  # per-model learning rates tried on the first seed (validation)
    lr_search_steps: int = 6  # optimiser steps of each lr-search run
    gth_dim: int = 16  # GTH-GMN node-state dim
    pretrain_steps: int | None = None  # GTH-GMN stage-1 (reconstruction) steps (None: the run's budget)
    pretrain_networks: int | None = None  # GTH-GMN stage 1 on this many training networks (None: all)
    refine_steps: int = 5  # GTH-GMN stage-2 Riemannian refinement steps per snapshot
    refine_lr: float = 1e-2  # GTH-GMN stage-2 Riemannian step size
    compile: bool = False  # torch.compile GTH-GMN's attention layers (pays off only for long runs)
    min_loss_drop: float = 0.05  # learnability gate: training loss must fall by this fraction
    min_accuracy_gain: float = 0.10  # learnability gate: training accuracy must beat chance by this much
    val_fraction: float = 0.15  # share of networks for validation
    test_fraction: float = 0.25  # share of networks for test
    split_seed: int = 0  # seed of the one shared split
    recipes: str = "optimizer"  # baselines' reference training recipes (RECIPE_MODES): "none" | "optimizer" |
    # "full"
    recipe_lr_scaling: str = "sqrt"  # a recipe's lr at a batch the split forces below its own (scaled_lr): "none" |
    # "sqrt" | "linear"
    augment: tuple[str, ...] = ("recipe",)  # models trained with weight-space augmentation: "recipe" (each recipe's
    # own: DWSNet, GMN) and/or model names (opt in); () for none
    workers: int = 1  # processes that fit (model, seed) runs side by side, one thread each (1: in this process)
    epoch_caps: tuple[tuple[str, int], ...] = ()  # (model, epoch cap) pairs that lower the shared cap for a
    # model the budget cannot afford to train to convergence (its capped runs are marked as such)
    recipe_step_share: float = 1.0  # a recipe keeps its batch only while its run's ceiling holds at least this share
    # of the shared models' optimiser steps; else its batch is halved until it does (lr by recipe_lr_scaling)
    warmup_share: float = 0.05  # a recipe's warm-up longer than this share of its run's planned steps is cut to it
    # GTH-GMN's selection grid (hgutils.experiments.gth_selection), run on the first seed before the comparison;
    # the chosen (protocol, size, lr) is the base of every GTH-GMN variant. Smoke: 2 protocols x 1 size x 1 lr
    gth_protocols: tuple[str, ...] = ("two_stage", "joint")  # protocols of the grid
    gth_sizes: tuple[str, ...] = ("default",)  # sizes of the grid (SIZES: "default", "large")
    select_lr_grid: tuple[float, ...] = (1e-3,)  # learning rates of the grid (empty: the baselines' lr_grid)
    select_steps: int | None = 6  # optimiser steps per grid cell (None: the final runs' budget)

    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (checked by
    #: ``from_scale``, so ``reproduce -p`` rejects a bad or absurd value before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_seeds": (1, 100),
        "epochs": (1, 10_000),
        "steps": (1, 10_000_000),
        "patience": (1, 10_000),
        "min_epochs": (0, 10_000),
        "recipe_step_share": (0.0, 1.0),
        "warmup_share": (0.0, 1.0),
        "batch_size": (1, 10_000),
        "lr": (0.0, None),
        "lr_grid": (0.0, None),
        "lr_search_steps": (0, 100_000),
        "gth_dim": (2, 1024),
        "pretrain_steps": (0, 1_000_000),
        "pretrain_networks": (1, 1_000_000),
        "refine_steps": (0, 100_000),
        "refine_lr": (0.0, None),
        "min_loss_drop": (0.0, 1.0),
        "min_accuracy_gain": (0.0, 1.0),
        "val_fraction": (0.0, 1.0),
        "test_fraction": (0.0, 1.0),
        "workers": (1, 1024),
        "split_seed": (0, 2**31 - 1),
        "epoch_caps": (1, 10_000),
        "select_lr_grid": (0.0, None),
        "select_steps": (1, 10_000_000),
    }
    #: the values of the name-like fields (each model name of ``variants`` must be one of VARIANTS)
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "inputs": INPUTS,
        "variants": tuple(VARIANTS),
        "augment": ("recipe", *VARIANTS),
        "gth_protocols": PROTOCOLS,
        "gth_sizes": tuple(SIZES),
    }

    def __post_init__(self) -> None:
        if self.val_fraction + self.test_fraction >= 1.0:
            raise ValueError(
                f"val_fraction + test_fraction must be < 1 (the rest trains); got {self.val_fraction} + "
                f"{self.test_fraction}"
            )
        _check_run_fields(self.recipes, self.recipe_lr_scaling, self.workers, dict(self.epoch_caps))
        _check_shares(self.recipe_step_share, self.warmup_share)

    def gate(self) -> Any:
        """The :class:`hgutils.loop.LearnabilityGate` of these settings."""
        return LearnabilityGate(self.min_loss_drop, self.min_accuracy_gain)

    def run_settings(self, device: str = "cpu") -> RunSettings:
        """The :class:`RunSettings` of this preset (training settings, inputs, lr search, gate) on ``device``."""
        cfg = TrainConfig(
            epochs=self.epochs,
            steps=self.steps,
            patience=self.patience,
            min_epochs=self.min_epochs,
            batch_size=self.batch_size,
            lr=self.lr,
            device=device,
        )
        gth = {
            "dim": self.gth_dim,
            "pretrain_steps": self.pretrain_steps,
            "pretrain_networks": self.pretrain_networks,
            "refine_steps": self.refine_steps,
            "refine_lr": self.refine_lr,
            "compile": self.compile,
        }
        return RunSettings(
            train_cfg=cfg,
            gth_overrides=gth,
            inputs=self.inputs,
            lr_grid=tuple(self.lr_grid) or None,
            lr_search_steps=self.lr_search_steps,
            gate=self.gate(),
            recipes=self.recipes,
            recipe_lr_scaling=self.recipe_lr_scaling,
            augment=tuple(self.augment),
            workers=self.workers,
            epoch_caps=dict(self.epoch_caps),
            recipe_step_share=self.recipe_step_share,
            warmup_share=self.warmup_share,
        )


def _check_run_fields(recipes: str, lr_scaling: str, workers: int, epoch_caps: Mapping[str, int]) -> None:
    """The checks :class:`RunSettings` and :class:`ComparisonSettings` share (each raises ``ValueError``)."""
    if recipes not in RECIPE_MODES:
        raise ValueError(f"recipes must be one of {RECIPE_MODES}; got {recipes!r}")
    _check_lr_scaling(lr_scaling)
    if workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    _check_epoch_caps(epoch_caps)


def _check_shares(step_share: float, warmup_share: float) -> None:
    if not 0.0 <= step_share <= 1.0:
        raise ValueError(f"recipe_step_share must lie in [0, 1]; got {step_share}")
    if not 0.0 < warmup_share <= 1.0:
        raise ValueError(f"warmup_share must lie in (0, 1]; got {warmup_share}")


def _check_lr_scaling(rule: str) -> None:
    if rule not in LR_SCALING_RULES:
        raise ValueError(f"recipe_lr_scaling must be one of {LR_SCALING_RULES}; got {rule!r}")


def _check_epoch_caps(caps: Mapping[str, int]) -> None:
    for name, cap in caps.items():
        if name not in VARIANTS:
            raise ValueError(f"epoch_caps: unknown model {name!r}; known: {sorted(VARIANTS)}")
        if int(cap) < 1:
            raise ValueError(f"epoch_caps: the cap of {name!r} must be >= 1; got {cap}")
