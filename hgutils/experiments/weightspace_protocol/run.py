"""The comparison itself: :func:`run_comparison` trains every variant once per seed on the one split,
with the same budget and learning-rate search, in forked one-thread workers; finished runs are cached.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments.weightspace_protocol.results import ComparisonResult
from hgutils.experiments.weightspace_protocol.runner import _Runner
from hgutils.experiments.weightspace_protocol.settings import RunSettings
from hgutils.experiments.weightspace_protocol.variants import VARIANTS
from hgutils.weightspace.inputs import Splits
from hgutils.weightspace.zoo.containers import Zoo

log = logging.getLogger("hgutils")


def run_comparison(
    zoo: Zoo,
    task: str,
    target: Tensor | None,
    out_dim: int,
    variants: Sequence[str],
    splits: Splits,
    seeds: Sequence[int],
    settings: RunSettings | None = None,
    desc: str = "",
) -> ComparisonResult:
    """Train every variant on ``zoo`` once per seed with the shared loop; the split never changes.

    Parameters
    ----------
    zoo
        A :class:`~hgutils.weightspace.zoo.Zoo`.
    task
        ``"classification"`` | ``"regression"`` | ``"accuracy"`` | ``"infonce"`` (the head's task).
    target
        ``[N]`` labels / ``[N, k]`` targets / ``[N]`` accuracies; for ``"infonce"`` the regression
        targets of the linear probe (``[N, k]``) or ``None``.
    out_dim
        Classes, regression outputs, or the InfoNCE embedding width.
    variants
        Names from :data:`VARIANTS`.
    seeds
        Model seeds; each seeds the model initialisation (:func:`hgutils.repro.seed_everything`)
        and the loop's batch order (``TrainConfig.seed``).
    settings
        How every model is trained, a :class:`~.settings.RunSettings` (default: its defaults); its fields:
    train_cfg
        A :class:`hgutils.weightspace.tasks.TrainConfig` (its ``seed`` and ``lr`` are replaced per run).
    inputs, drop_constant
        How every model's inputs are prepared (:func:`prepare_inputs`): the same for every model, except
        that a model which reads the trained weights themselves (``model.reads_raw_weights``: GTH-GMN,
        whose decoder reconstructs them) gets the zoo with only the constant snapshots dropped.
    lr_grid, lr_search_steps
        Per model family (a base model of :data:`VARIANTS`: GTH-GMN and its ablations are one
        family, every baseline its own), each learning rate of ``lr_grid`` is tried with the family's
        first listed variant on the first seed for ``lr_search_steps`` optimiser steps (default: the
        full budget); the one with the best validation score is used for every variant of the family
        and every seed -- the same tuning effort for every model. Results are cached
        (:func:`hgutils.repro.cached`) by zoo content, split, model and settings.

    gate
        The :class:`hgutils.loop.LearnabilityGate` thresholds (default ones if ``None``).
    variant_seeds
        Seeds for particular variants (e.g. ablations on the first two seeds only); the others use
        ``seeds``. The learning-rate search always runs on ``seeds[0]``.
    recipes
        How a baseline with a reference training recipe
        (:func:`hgutils.weightspace.metanets.recipe_for`) is trained (:data:`RECIPE_MODES`):
        ``"none"``: like every model, with ``train_cfg`` and the searched learning rate;
        ``"optimizer"``: with its authors' optimiser, learning rate (no search), weight decay,
        AMSGrad, warmup, gradient clip and batch size (the whole training split when it holds fewer
        networks, :func:`~hgutils.weightspace.metanets.recipes.recipe_batch_and_lr`), input normalisation
        (``ReferenceRecipe.inputs``: the model gets raw weights for ``"per_layer"`` -- GMN standardises them
        itself -- and ``"none"``) and training augmentation (``augment``), on the shared epoch cap and
        early stopping; ``"full"``: also the authors' epoch cap. The row's ``recipe`` column names what
        was applied; :func:`~hgutils.weightspace.metanets.recipes.as_trained` tabulates batch, lr, inputs
        and augmentation per model.
    recipe_lr_scaling
        How a recipe's learning rate follows a batch size below the recipe's, when the training split
        is smaller than the recipe's batch (:func:`hgutils.weightspace.metanets.recipes.scaled_lr`:
        ``"none"`` keeps it, ``"sqrt"`` and ``"linear"`` scale it by :math:`(B / B_{ref})^{1/2}` or
        :math:`B / B_{ref}`); the row's ``lr`` is the rate used and its ``recipe`` column names the rule.
    recipe_step_share, warmup_share
        Budgets count optimiser steps (:func:`~hgutils.weightspace.metanets.recipes.fit_recipe_to_run`): a
        recipe whose batch leaves its run's ceiling fewer optimiser steps than ``recipe_step_share`` times the
        shared models' has its batch halved until it does (never below the shared batch; its learning rate by
        ``recipe_lr_scaling``), and a warm-up longer than ``warmup_share`` of the run's planned steps is cut to
        that share. The row's ``recipe`` column names each rule that applied; ``warmup_steps`` and
        ``planned_steps`` are recorded.
    augment
        Which models train with weight-space augmentation (:mod:`hgutils.weightspace.augment`, applied
        to the raw weights of every training batch, never to validation or test): ``"recipe"`` --
        every model whose recipe augments (DWSNet, GMN; not with ``recipes="none"``) with the
        recipe's magnitudes -- and/or variant names, which opt in with their recipe's magnitudes or,
        without a recipe, the references' (:data:`~hgutils.weightspace.augment.REFERENCE_DEFAULTS` on
        INR zoos, noise and dropout only -- :data:`~hgutils.weightspace.augment.WEIGHT_NOISE_DEFAULTS`
        -- on others). Empty: no model. On a zoo that is not of INRs (``zoo.info["kind"]``) the coordinate
        transforms are switched off (:func:`~hgutils.weightspace.augment.for_zoo`; the row's ``augment``
        column lists what ran). Refused for GTH-GMN (graph inputs) and for ``inputs`` ``"delta"`` and ``"rms"``.
    workers
        ``1``: every (variant, seed) run in this process. ``k > 1``: the runs are fitted in ``k``
        forked processes with one thread each (after the learning-rate searches, which stay here);
        runs that share GTH-GMN's stage 1 (variants differing only in their stage-2 settings) stay in
        one process, in order. Each run seeds itself, so the results are those of ``workers=1`` up to
        floating-point summation order.
    family_lr
        ``{base model: lr}``: a learning rate already chosen for a family (GTH-GMN's, by the selection
        grid of :mod:`hgutils.experiments.gth_selection`); that family is not searched again.
    epoch_caps
        ``{model: epochs}``: a lower epoch cap for these models (an expensive baseline the budget cannot
        train to convergence); it replaces ``train_cfg.epochs`` (and a step cap) for that model only,
        and a run that reaches it is marked ``capped`` like any other.

    Notes
    -----
    Finished runs are cached (:meth:`_Runner.fit_run`): a rerun after a stop or a failure trains only
    what had not finished, and two variants of one configuration (:func:`variant_config`, e.g. "GTH-GMN"
    when the selection grid chose the frozen two-stage reading, and "GTH-GMN (two-stage, frozen)") train
    once, the second reading the first's run.
    """

    rs = settings if settings is not None else RunSettings()
    if not isinstance(rs, RunSettings):
        raise TypeError(f"settings must be a RunSettings (ComparisonSettings.run_settings()); got {type(rs).__name__}")
    seeds = _check_run(zoo, target, variants, splits, seeds)
    gth = dict(rs.gth_overrides) if rs.gth_overrides is not None else None
    runner = _Runner(zoo, task, target, out_dim, splits, rs.train_cfg, gth, rs.gate, rs.recipes)
    runner.lr_scaling = rs.recipe_lr_scaling
    runner.epoch_caps = {k: int(v) for k, v in (rs.epoch_caps or {}).items()}
    runner.step_share, runner.warmup_share = rs.recipe_step_share, rs.warmup_share
    runner.augment = _check_augment(rs.augment)
    runner.prepare(rs.inputs, rs.drop_constant)
    lr_grid, family_lr, workers = rs.lr_grid, rs.family_lr, rs.workers
    for name in variants:  # refuse an augmentation that does not apply before any training starts
        runner.augment_of(name)
    searched: dict[str, str] = {}  # model family -> the variant its learning rate was searched on
    runs: list[tuple[str, int, float, bool]] = []
    for name in list(variants):
        lr = runner.train_cfg.lr
        if runner.recipe(name) is not None:
            lr = runner.recipe_lr(name)
        elif VARIANTS[name].base in (family_lr or {}):
            lr = float(family_lr[VARIANTS[name].base])
        elif lr_grid:
            base = VARIANTS[name].base
            if base not in searched:  # one search per model family: its first variant in the list
                searched[base] = name
                runner.res.lr_search[name] = runner.search_lr(name, seeds[0], lr_grid, rs.lr_search_steps, workers)
            scores = runner.res.lr_search[searched[base]]
            lr = max(scores, key=scores.get)
        runs += [(name, int(seed), lr, si == 0) for si, seed in enumerate((rs.variant_seeds or {}).get(name, seeds))]
    runner.res.table = pd.DataFrame(runner.fit_all(runs, workers, desc or "models"))
    return runner.res


def _check_augment(augment: Sequence[str]) -> tuple[str, ...]:
    if isinstance(augment, str):
        augment = (augment,)
    bad = [a for a in augment if a != "recipe" and a not in VARIANTS]
    if bad:
        raise ValueError(f"augment: unknown entries {bad}; use 'recipe' and/or model variants {sorted(VARIANTS)}")
    return tuple(augment)


#: bump when a cached final run's payload (:meth:`_Runner.fit_run`) changes its layout


def _check_run(
    zoo: Zoo,
    target: Tensor | None,
    variants: Sequence[str],
    splits: Splits,
    seeds: Sequence[int],
) -> list[int]:
    """Validate :func:`run_comparison`'s arguments (one ``ValueError`` naming what was expected); the seeds as ints."""
    if not variants:
        raise ValueError("variants is empty: name at least one model variant")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown model variant(s) {unknown}; choose from {sorted(VARIANTS)}")
    if len(set(variants)) != len(variants):
        raise ValueError(f"variants must be distinct; got {list(variants)}")
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list of distinct ints; got {seeds}")
    n = len(zoo)
    allidx = torch.cat([splits.train, splits.val, splits.test])
    if int(allidx.max()) >= n or int(allidx.min()) < 0 or len(allidx.unique()) != len(allidx):
        raise ValueError(f"splits must be disjoint indices into the zoo's {n} networks")
    if target is not None and len(target) != n:
        raise ValueError(f"target must have one entry per network ({n}); got {len(target)}")
    return seeds
