r"""GTH-GMN judged at its best: protocol x size x learning rate chosen on validation only (issue 36).

A declared grid (:class:`SelectionGrid`) -- training protocol (``two_stage``, ``finetune``, ``joint``:
:data:`~hgutils.weightspace.metanets.gth_gmn.PROTOCOLS`) x model size
(:data:`~hgutils.weightspace.metanets.gth_gmn.config.SIZES`: ``"default"`` = today's
:class:`~hgutils.weightspace.metanets.gth_gmn.GTHGMNConfig`, ``"large"`` = dim 32, 2 attention layers,
4 heads x 8, GRU 32) x the learning-rate grid the baselines search -- is trained on the first seed's
split, and the cell with the best **validation** score is chosen (:func:`select_gth`):

.. math:: (p^*, s^*, \eta^*) = \arg\max_{(p, s, \eta)\ \in\ \text{grid}} \mathrm{score}_{\mathrm{val}}(p, s, \eta)

with ties going to the earliest cell in the declared order (protocols as listed, then sizes -- the
smaller first --, then learning rates), over the cells that passed the learnability gate (an untrained
cell's score is noise around chance); when none did, the declared first cell is kept (:func:`choose`).
The score is the task's validation metric: accuracy
(classification), Kendall :math:`\tau` (accuracy prediction), :math:`-\mathrm{MSE}` (regression), and for
the InfoNCE encoders :math:`-\mathrm{MSE}` of the linear probe fitted on the training networks and
scored on the validation ones. The test labels never enter: before anything runs they are replaced by
one training label, and no cell is evaluated on the test networks.

``two_stage`` cells train the paper's literal reading with its head sized for the training set
(``head_networks_per_param``, :func:`~hgutils.weightspace.metanets.gth_gmn.config.frozen_head_components`);
``finetune`` and ``joint`` cells train the task objective through the encoder, the reconstruction terms
as auxiliary losses. Each cell may run on a shorter budget than the final runs (``SelectionGrid.steps``).

The table is cached like a zoo (:func:`hgutils.repro.cached`), keyed by the grid, the data (zoo content,
split, training and validation targets), the settings and the source of the code that trains GTH-GMN, so
a rerun reads it instead of training again.
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.weightspace_protocol.runner import _Runner
from hgutils.parallel import forked_map
from hgutils.repro import cached, seed_everything, source_fingerprint
from hgutils.weightspace.metanets.gth_gmn.config import PROTOCOLS, SIZES
from hgutils.weightspace.tasks import TrainConfig, fit, probe_features, probe_metrics
from hgutils.weightspace.zoo.containers import Zoo

__all__ = [
    "Selection",
    "SelectionGrid",
    "choose",
    "grid_of",
    "select_and_compare",
    "select_for",
    "select_gth",
    "validation_score",
]

#: bump when the table's columns or the selection rule change (the code hash covers the training code)
_VERSION = 1


@dataclass(frozen=True)
class SelectionGrid:
    """The declared grid: every ``protocols x sizes x lrs`` cell, each run for ``steps`` optimiser steps
    (``None``: the final runs' budget); ``two_stage`` cells size their head with ``networks_per_param``."""

    protocols: tuple[str, ...] = PROTOCOLS
    sizes: tuple[str, ...] = tuple(SIZES)
    lrs: tuple[float, ...] = (1e-3,)
    steps: int | None = None
    networks_per_param: float = 10.0

    def __post_init__(self) -> None:
        bad_p = [p for p in self.protocols if p not in PROTOCOLS]
        bad_s = [s for s in self.sizes if s not in SIZES]
        if not self.protocols or not self.sizes or not self.lrs or bad_p or bad_s:
            raise ValueError(
                f"a grid needs protocols from {PROTOCOLS}, sizes from {tuple(SIZES)} and learning rates, none "
                f"empty; got {self.protocols}, {self.sizes}, {self.lrs}"
            )
        if any(not lr > 0 for lr in self.lrs) or (self.steps is not None and self.steps < 1):
            raise ValueError(f"learning rates must be > 0 and steps >= 1; got {self.lrs}, {self.steps}")
        if len(set(self.cells())) != len(self.cells()):
            raise ValueError(f"the grid lists a cell twice: {self}")

    def cells(self) -> list[tuple[str, str, float]]:
        """``(protocol, size, lr)`` of every cell, in the declared order (the tie-break order)."""
        return list(itertools.product(self.protocols, self.sizes, [float(lr) for lr in self.lrs]))

    def overrides(self, protocol: str, size: str) -> dict[str, Any]:
        """The :class:`~hgutils.weightspace.metanets.gth_gmn.GTHGMNConfig` overrides of a cell."""
        out: dict[str, Any] = {"protocol": protocol, **SIZES[size]}
        if protocol == "two_stage":
            out["head_networks_per_param"] = self.networks_per_param
        return out


@dataclass
class Selection:
    """What :func:`select_gth` returns: one row per cell (``chosen`` marks the selected one)."""

    table: pd.DataFrame
    grid: SelectionGrid
    metric: str
    caption: str = ""
    reason: str = ""  # why the chosen cell was chosen (:func:`choose`)

    def chosen(self) -> dict[str, Any]:
        """The chosen row as a dict."""
        return self.table[self.table["chosen"]].iloc[0].to_dict()

    def overrides(self) -> dict[str, Any]:
        """GTH-GMN config overrides of the chosen cell (protocol, sizes, the sized head of two_stage)."""
        row = self.chosen()
        return self.grid.overrides(row["protocol"], row["size"])

    def apply(self, settings: cmp.RunSettings) -> cmp.RunSettings:
        """``settings`` (:class:`~hgutils.experiments.weightspace_protocol.RunSettings`) with the chosen
        configuration as the base of every GTH-GMN variant and its learning rate for the family."""
        return replace(
            settings,
            gth_overrides={**(settings.gth_overrides or {}), **self.overrides()},
            family_lr={**(settings.family_lr or {}), "GTH-GMN": float(self.chosen()["lr"])},
        )

    def summary(self) -> str:
        """One line: the chosen configuration and its validation score."""
        r = self.chosen()
        return (
            f"chosen: protocol {r['protocol']}, size {r['size']}, lr {r['lr']:g} "
            f"(validation {self.metric} {r['val_score']:.4f}; {len(self.table)} cells): {self.reason}"
        )


def grid_of(settings: Any) -> SelectionGrid:
    """The grid a :class:`~hgutils.experiments.weightspace_protocol.ComparisonSettings` preset declares:
    ``gth_protocols x gth_sizes x select_lr_grid`` (empty: the baselines' ``lr_grid``, else ``lr``) for
    ``select_steps`` steps per cell."""
    lrs = tuple(settings.select_lr_grid) or tuple(settings.lr_grid) or (settings.lr,)
    return SelectionGrid(tuple(settings.gth_protocols), tuple(settings.gth_sizes), lrs, settings.select_steps)


#: the validation metric of each task (higher is better; :func:`validation_score`)
METRICS: dict[str, str] = {
    "infonce": "probe MSE (negated)",
    "classification": "accuracy",
    "accuracy": "Kendall tau",
    "regression": "MSE (negated)",
}


def metric_name(task: str) -> str:
    """The name of ``task``'s validation metric in :data:`METRICS` (regression's for any other task)."""
    return METRICS.get(task, METRICS["regression"])


def validation_score(model: Any, data: Any, target: Tensor | None, splits: Any, fr: Any) -> tuple[str, float]:
    """``(metric name, score)``, higher is better, of one fitted cell on the validation networks (module
    docstring); for InfoNCE the linear probe fitted on the training networks' probe features."""
    task = model.task
    name = metric_name(task)
    if task == "infonce":
        if target is None:
            raise ValueError("selecting an InfoNCE encoder needs the probe targets of the training/val networks")
        tr, va = splits.train, splits.val
        xt, xv = probe_features(model, data, tr), probe_features(model, data, va)
        return name, -probe_metrics(model, xt, target[tr], xv, target[va])["mse"]
    val = fr.metrics.get("val", {})
    if task == "classification":
        return name, float(val.get("accuracy", float("nan")))
    if task == "accuracy":
        return name, float(val.get("kendall_tau", float("nan")))
    return name, -float(val.get("mse", float("nan")))


def _masked_target(target: Tensor | None, splits: Any) -> Tensor | None:
    """``target`` with every test network's entry replaced by the first training network's."""
    if target is None:
        return None
    out = target.clone()
    out[splits.test] = target[splits.train[0]]
    return out


def _code_fingerprint() -> str:
    """:func:`hgutils.repro.source_fingerprint` of the source that trains and scores GTH-GMN (its package,
    the layers, the manifolds, the loop, the comparison protocol and this module): an edit to any of them
    reruns the grid."""
    root = Path(__file__).resolve().parents[1]
    return source_fingerprint(
        [
            root / "weightspace" / "metanets" / "gth_gmn",
            root / "nn",
            root / "manifolds",
            root / "weightspace" / "tasks.py",
            root / "weightspace" / "graphs.py",
            root / "weightspace" / "cmp.py",
            root / "loop.py",
            Path(__file__).resolve(),
        ]
    )


@dataclass(frozen=True)
class _CellContext:
    """What every grid cell reads (:func:`select_gth` hands it to each cell, here or in forked workers)."""

    runner: Any
    grid: SelectionGrid
    base: dict[str, Any]
    cfg: TrainConfig
    target: Tensor | None
    seed: int
    gate: Any


def _train_cell(ctx: _CellContext, cell: tuple[str, str, float]) -> tuple[dict[str, Any], str]:
    """Train one ``(protocol, size, lr)`` cell from the seed up; returns its table row and the metric's name.
    Every cell seeds itself, so the table does not depend on how many workers ran it."""
    protocol, size, lr = cell
    runner, splits = ctx.runner, ctx.runner.splits
    seed_everything(ctx.seed)
    model = cmp.build_variant(
        "GTH-GMN", runner.zoo, runner.task, runner.out_dim, {**ctx.base, **ctx.grid.overrides(protocol, size)}
    )
    data = runner.data_of(model, "GTH-GMN")
    ccfg = replace(ctx.cfg, seed=ctx.seed, lr=lr, checkpoint_path=None)
    if ctx.grid.steps is not None:
        ccfg = replace(ccfg, steps=ctx.grid.steps)
    c0 = time.process_time()
    desc = f"GTH-GMN {protocol}/{size} lr={lr:g}"
    try:
        fr = fit(model, data, ctx.target, splits.train, splits.val, None, ccfg, desc, ctx.gate)
    except FloatingPointError as exc:  # a learning rate the cell cannot take: a grid outcome, not a failure
        return _diverged_row(cell, str(exc), time.process_time() - c0), metric_name(runner.task)
    if fr.diverged:  # it kept an earlier epoch, but a rate the cell cannot hold is never chosen
        return _diverged_row(cell, fr.diverged, time.process_time() - c0), metric_name(runner.task)
    metric, score = validation_score(model, data, ctx.target, splits, fr)
    row = {
        "protocol": protocol,
        "size": size,
        "lr": lr,
        "val_score": float(score) if np.isfinite(score) else float("-inf"),
        "best_epoch": int(fr.best_epoch),
        "epochs_run": len(fr.history),
        "steps": int(fr.steps),
        "pretrain_steps": int(fr.pretrain_log.steps) if fr.pretrain_log is not None else 0,
        "capped": bool(fr.capped),
        "stopped": "; ".join(f"{k}: {v}" for k, v in fr.stopped.items()),
        **fr.stage_columns(),
        "trained": bool(fr.trained),
        "cpu_seconds": time.process_time() - c0,
    }
    return row, metric


def _divergence(why: str) -> str:
    """A divergence message cut to what and where: ``"non-finite loss at epoch 2, step 57"``."""
    what = "non-finite gradients" if "non-finite gradients" in why else "non-finite loss"
    where = re.search(r"epoch \d+, step \d+", why)
    return f"{what} at {where.group(0)}" if where else what


def _diverged_row(cell: tuple[str, str, float], why: str, cpu_seconds: float) -> dict[str, Any]:
    """The table row of a cell whose training loss went non-finite: never chosen (score ``-inf``, not trained)."""
    protocol, size, lr = cell
    return {
        "protocol": protocol,
        "size": size,
        "lr": lr,
        "val_score": float("-inf"),
        "best_epoch": -1,
        "epochs_run": 0,
        "steps": 0,
        "pretrain_steps": 0,
        "capped": False,
        "stopped": f"diverged ({_divergence(why)})",
        "trained": False,
        "cpu_seconds": cpu_seconds,
    }


def select_gth(
    zoo: Zoo,
    task: str,
    target: Tensor | None,
    out_dim: int,
    splits: Any,
    grid: SelectionGrid,
    seed: int = 0,
    train_cfg: TrainConfig | None = None,
    gth_overrides: dict[str, Any] | None = None,
    inputs: str = "standardize",
    drop_constant: bool = True,
    gate: Any = None,
    cache: bool = True,
    cache_root: str | Path | None = None,
    workers: int = 1,
) -> Selection:
    """Train every cell of ``grid`` on ``splits`` with model seed ``seed`` and choose on validation.

    The table has one row per cell: ``protocol, size, lr``, ``val_score`` (and the metric's name in
    :attr:`Selection.metric`), ``best_epoch, epochs_run, steps`` (the task stage), ``pretrain_steps``
    (stage 1 of ``two_stage`` / ``finetune``), ``capped``, ``stopped``, ``trained`` (learnability
    check), ``cpu_seconds`` and ``chosen``. ``gth_overrides`` are the preset's GTH-GMN settings (the
    cell's own overrides win); ``train_cfg`` the final runs' loop settings (``grid.steps`` replaces
    their budget). ``cache=False`` always trains; ``cache_root`` as in :func:`hgutils.repro.cached`;
    ``workers > 1`` trains the cells in that many forked one-thread processes (the same table).
    """
    cfg = train_cfg or TrainConfig()
    masked = _masked_target(target, splits)
    base = {k: v for k, v in (gth_overrides or {}).items() if k != "protocol"}
    runner = _Runner(zoo, task, masked, out_dim, splits, cfg, base, gate)
    runner.prepare(inputs, drop_constant)
    kept = torch.cat([splits.train, splits.val])
    key = {
        "grid": asdict(grid),
        "zoo": runner.fingerprint,
        "target": None if masked is None else masked[kept],
        "splits": [splits.train, splits.val],
        "task": task,
        "out_dim": out_dim,
        "cfg": replace(cfg, seed=0),
        "overrides": base,
        "inputs": inputs,
        "drop_constant": drop_constant,
        "gate": None if gate is None else asdict(gate),
        "seed": int(seed),
        "code": _code_fingerprint(),
        "version": _VERSION,
    }

    def run() -> dict[str, Any]:
        ctx = _CellContext(runner, grid, base, cfg, masked, seed, gate)
        results = list(forked_map(lambda cell: _train_cell(ctx, cell), grid.cells(), workers, "GTH-GMN grid"))
        return {"rows": [row for row, _ in results], "metric": results[-1][1]}

    out = cached("gth_selection", key, run, root=cache_root) if cache else run()
    best, reason = choose(out["rows"])
    rows = [{**r, "chosen": i == best} for i, r in enumerate(out["rows"])]
    budget = f"{grid.steps} optimiser steps per cell" if grid.steps else "the final runs' budget"
    caption = (
        f"GTH-GMN selection grid: {len(out['rows'])} cells (protocol x size x lr) on the split of seed {seed} "
        f"(the first), each run for {budget} (the final runs: {cfg.steps or cfg.epochs} "
        f"{'steps' if cfg.steps else 'epochs'}); chosen by validation {out['metric']} alone (test labels masked, "
        "never scored); ties: the earliest cell in the declared order; a cell that did not pass the learnability "
        "gate is never chosen over one that did"
    )
    return Selection(pd.DataFrame(rows), grid, out["metric"], caption, reason)


def choose(rows: list[dict[str, Any]]) -> tuple[int, str]:
    """The chosen cell of a grid's ``rows`` (in the declared order) and why: the best validation score
    among the cells that passed the learnability gate (``trained``), the earliest on ties. When no cell
    trained, no validation score says more than its noise, and the declared first cell (the paper's
    literal reading at today's size, in the presets' order) is kept."""
    if not rows:
        raise ValueError("a grid without cells has nothing to choose from")
    trained = [i for i, r in enumerate(rows) if r["trained"] and np.isfinite(r["val_score"])]
    if not trained:
        r = rows[0]
        return 0, (
            f"no cell passed the learnability gate within the grid's budget: the declared first cell "
            f"({r['protocol']}, {r['size']}, lr {r['lr']:g}) is kept, not the best of {len(rows)} untrained scores"
        )
    best = max(trained, key=lambda i: (rows[i]["val_score"], -i))  # ties: the earliest cell
    return best, f"the best validation score of the {len(trained)} of {len(rows)} cells that trained"


def select_for(
    settings: Any,
    zoo: Zoo,
    task: str,
    target: Tensor | None,
    out_dim: int,
    splits: Any,
    seeds: Any,
    device: str = "cpu",
) -> Selection:
    """:func:`select_gth` with a notebook preset's grid (:func:`grid_of`), loop settings, GTH-GMN
    settings, inputs and learnability gate, on the first of ``seeds``."""
    rs = settings.run_settings(device)
    return select_gth(
        zoo,
        task,
        target,
        out_dim,
        splits,
        grid_of(settings),
        int(list(seeds)[0]),
        rs.train_cfg,
        dict(rs.gth_overrides or {}),
        rs.inputs,
        gate=rs.gate,
        workers=rs.workers,
    )


def select_and_compare(
    settings: Any,
    zoo: Zoo,
    task: str,
    target: Tensor | None,
    out_dim: int,
    splits: Any,
    seeds: Any,
    device: str = "cpu",
    desc: str = "",
    out_dir: str | Path | None = None,
) -> tuple[Selection, cmp.ComparisonResult]:
    """What notebooks 02 and 03 run the same way: GTH-GMN's grid on the first seed's validation split
    (:func:`select_for`; its table written to ``out_dir/gth_selection.csv`` when given), then every variant of
    the preset (``settings.variants``) on the split and seeds with the chosen configuration as GTH-GMN's base
    (:func:`~hgutils.experiments.weightspace_protocol.run_comparison`). Returns ``(selection, run)``."""
    selection = select_for(settings, zoo, task, target, out_dim, splits, seeds, device)
    if out_dir is not None:
        selection.table.to_csv(Path(out_dir) / "gth_selection.csv", index=False)
    run = cmp.run_comparison(
        zoo,
        task,
        target,
        out_dim,
        settings.variants,
        splits,
        seeds,
        selection.apply(settings.run_settings(device)),
        desc=desc,
    )
    return selection, run
