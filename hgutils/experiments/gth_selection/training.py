"""Training and scoring one cell of GTH-GMN's selection grid (:func:`train_cell`): its validation score
(:func:`validation_score`), its table rows (one per head of a ``two_stage`` cell), a diverged cell's row."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from torch import Tensor

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.gth_selection.grid import SelectionGrid
from hgutils.repro import seed_everything
from hgutils.weightspace.tasks import TrainConfig, fit, probe_features, probe_metrics

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
    """``(metric name, score)``, higher is better, of one fitted cell on the validation networks (the package
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


def masked_target(target: Tensor | None, splits: Any) -> Tensor | None:
    """``target`` with every test network's entry replaced by the first training network's."""
    if target is None:
        return None
    out = target.clone()
    out[splits.test] = target[splits.train[0]]
    return out


@dataclass(frozen=True)
class CellContext:
    """What every grid cell reads (:func:`~.select.select_gth` hands it to each cell, here or in forked workers)."""

    runner: Any
    grid: SelectionGrid
    base: dict[str, Any]
    cfg: TrainConfig
    target: Tensor | None
    seed: int
    gate: Any


def train_cell(ctx: CellContext, cell: tuple[str, str, float]) -> tuple[list[dict[str, Any]], str]:
    """Train one ``(protocol, size, lr)`` cell from the seed up, once per head it reads
    (:meth:`~.grid.SelectionGrid.heads_of`); returns its table rows and the metric's name. The heads of a
    ``two_stage`` cell share its stage 1 (trained once, for the first head; the later heads start their own
    stage 2 and head from those weights). Every cell seeds itself, so the table does not depend on how many
    workers ran it."""
    protocol, size, lr = cell
    shared: dict[str, Any] = {}  # stage 1, shared by the heads of this cell
    rows = [_train_head(ctx, cell, head, shared) for head in ctx.grid.heads_of(protocol)]
    return rows, metric_name(ctx.runner.task)


def _train_head(ctx: CellContext, cell: tuple[str, str, float], head: str, shared: dict[str, Any]) -> dict[str, Any]:
    """One row of the table: ``cell`` with ``head`` (``shared``: the cell's stage-1 cache)."""
    protocol, size, lr = cell
    runner, splits = ctx.runner, ctx.runner.splits
    seed_everything(ctx.seed)
    over = ctx.grid.overrides(protocol, size, None if protocol != "two_stage" else head)
    model = cmp.build_variant("GTH-GMN", runner.zoo, runner.task, runner.out_dim, {**ctx.base, **over})
    data = runner.data_of(model, "GTH-GMN")
    ccfg = replace(ctx.cfg, seed=ctx.seed, lr=lr, checkpoint_path=None)
    if ctx.grid.steps is not None:
        ccfg = replace(ccfg, steps=ctx.grid.steps)
    c0 = time.process_time()
    desc = f"GTH-GMN {protocol}/{size} lr={lr:g}" + (f" head={head}" if protocol == "two_stage" else "")
    try:
        fr = fit(model, data, ctx.target, splits.train, splits.val, None, ccfg, desc, ctx.gate, pretrain_cache=shared)
    except FloatingPointError as exc:  # a learning rate the cell cannot take: a grid outcome, not a failure
        return diverged_row(cell, head, str(exc), time.process_time() - c0)
    if fr.diverged:  # it kept an earlier epoch, but a rate the cell cannot hold is never chosen
        return diverged_row(cell, head, fr.diverged, time.process_time() - c0)
    _, score = validation_score(model, data, ctx.target, splits, fr)
    return {
        "protocol": protocol,
        "size": size,
        "lr": lr,
        "head": head,
        "head_inputs": head_inputs(model),
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


def head_inputs(model: Any) -> str:
    """What the head of a fitted GTH-GMN reads: ``"<p> principal components"`` (the sized linear head, its
    projection ``head.proj [D, p]``) or ``"<D>-d embedding"`` (an MLP head on the whole embedding)."""
    proj = getattr(model.head, "proj", None)
    if proj is not None:
        return f"{int(proj.shape[1])} principal components"
    return f"{int(model.head.net[0].in_features)}-d embedding"


def _divergence(why: str) -> str:
    """A divergence message cut to what and where: ``"non-finite loss at epoch 2, step 57"``."""
    what = "non-finite gradients" if "non-finite gradients" in why else "non-finite loss"
    where = re.search(r"epoch \d+, step \d+", why)
    return f"{what} at {where.group(0)}" if where else what


def diverged_row(cell: tuple[str, str, float], head: str, why: str, cpu_seconds: float) -> dict[str, Any]:
    """The table row of a cell whose training loss went non-finite: never chosen (score ``-inf``, not trained)."""
    protocol, size, lr = cell
    return {
        "protocol": protocol,
        "size": size,
        "lr": lr,
        "head": head,
        "head_inputs": "",
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
