"""Choosing GTH-GMN's configuration on validation (:func:`select_gth`, :func:`choose`), what the choice reads
back (:class:`Selection`) and the notebooks' calls (:func:`select_for`, :func:`select_and_compare`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.gth_selection import training
from hgutils.experiments.gth_selection.grid import END_TO_END, SelectionGrid, grid_of
from hgutils.experiments.weightspace_protocol.runner import _Runner
from hgutils.parallel import forked_map
from hgutils.repro import cached, source_fingerprint
from hgutils.weightspace.tasks import TrainConfig
from hgutils.weightspace.zoo.containers import Zoo

#: bump when the table's columns or the selection rule change (the code hash covers the training code)
_VERSION = 1


@dataclass
class Selection:
    """What :func:`select_gth` returns: one row per cell and head (``chosen`` marks the selected one)."""

    table: pd.DataFrame
    grid: SelectionGrid
    metric: str
    caption: str = ""
    reason: str = ""  # why the chosen cell was chosen (:func:`choose`)

    def chosen(self) -> dict[str, Any]:
        """The chosen row as a dict."""
        return self.table[self.table["chosen"]].iloc[0].to_dict()

    def overrides(self) -> dict[str, Any]:
        """GTH-GMN config overrides of the chosen cell (protocol, sizes and, for two_stage, its head)."""
        row = self.chosen()
        head = row.get("head")
        return self.grid.overrides(row["protocol"], row["size"], None if head in (None, END_TO_END) else head)

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
        head = f", head {r['head']}" if self.grid.has_head_choice else ""
        return (
            f"chosen: protocol {r['protocol']}{head}, size {r['size']}, lr {r['lr']:g} "
            f"(validation {self.metric} {r['val_score']:.4f}; {len(self.table)} cells): {self.reason}"
        )


def _code_fingerprint() -> str:
    """:func:`hgutils.repro.source_fingerprint` of the source that trains and scores GTH-GMN (its package,
    the layers, the manifolds, the loop, the tasks, the comparison protocol and this package): an edit to any of
    them reruns the grid."""
    here = Path(__file__).resolve().parent
    root = here.parents[1]
    return source_fingerprint(
        [
            root / "weightspace" / "metanets" / "gth_gmn",
            root / "nn",
            root / "manifolds",
            root / "weightspace" / "tasks",
            root / "weightspace" / "graphs.py",
            root / "experiments" / "weightspace_protocol",
            root / "loop.py",
            here,
        ]
    )


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

    The table has one row per cell and head (:meth:`SelectionGrid.choices`): ``protocol, size, lr``, ``head``
    (shown when the grid declares a head choice) and ``head_inputs`` (what the head read), ``val_score`` (and
    the metric's name in :attr:`Selection.metric`), ``best_epoch, epochs_run, steps`` (the task stage),
    ``pretrain_steps`` (stage 1 of ``two_stage`` / ``finetune``), ``capped``, ``stopped``, ``trained``
    (learnability check), ``cpu_seconds`` and ``chosen``. ``gth_overrides`` are the preset's GTH-GMN settings
    (the cell's own overrides win); ``train_cfg`` the final runs' loop settings (``grid.steps`` replaces their
    budget). ``cache=False`` always trains; ``cache_root`` as in :func:`hgutils.repro.cached`; ``workers > 1``
    trains the cells in that many forked one-thread processes (the same table; the heads of a cell stay in its
    process, in order).
    """
    cfg = train_cfg or TrainConfig()
    masked = training.masked_target(target, splits)
    base = {k: v for k, v in (gth_overrides or {}).items() if k != "protocol"}
    runner = _Runner(zoo, task, masked, out_dim, splits, cfg, base, gate)
    runner.prepare(inputs, drop_constant)
    kept = torch.cat([splits.train, splits.val])
    key = {
        "grid": grid.cache_key(),
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
        ctx = training.CellContext(runner, grid, base, cfg, masked, seed, gate)
        results = list(forked_map(lambda cell: training.train_cell(ctx, cell), grid.cells(), workers, "GTH-GMN grid"))
        return {"rows": [row for rows, _ in results for row in rows], "metric": results[-1][1]}

    out = cached("gth_selection", key, run, root=cache_root) if cache else run()
    best, reason = choose(out["rows"])
    rows = [{**r, "chosen": i == best} for i, r in enumerate(out["rows"])]
    table = pd.DataFrame(rows)
    if not grid.has_head_choice:  # today's grid (notebooks 02, 03): no head column
        table = table.drop(columns=[c for c in ("head", "head_inputs") if c in table])
    budget = f"{grid.steps} optimiser steps per cell" if grid.steps else "the final runs' budget, each to its plateau"
    heads = " x head (two_stage)" if grid.has_head_choice else ""
    caption = (
        f"GTH-GMN selection grid: {len(rows)} cells (protocol x size x lr{heads}) on the split of seed {seed} "
        f"(the first), each run for {budget} (the final runs: {cfg.steps or cfg.epochs} "
        f"{'steps' if cfg.steps else 'epochs'}); chosen by validation {out['metric']} alone (test labels masked, "
        "never scored); ties: the earliest cell in the declared order; a cell that did not pass the learnability "
        "gate is never chosen over one that did"
    )
    return Selection(table, grid, out["metric"], caption, reason)


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
        head = f", head {r['head']}" if "head" in r else ""
        return 0, (
            f"no cell passed the learnability gate within the grid's budget: the declared first cell "
            f"({r['protocol']}{head}, {r['size']}, lr {r['lr']:g}) is kept, not the best of {len(rows)} untrained "
            "scores"
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
    """:func:`select_gth` with a notebook preset's grid (:func:`~.grid.grid_of`), loop settings, GTH-GMN
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
