"""Notebook 03's in-zoo references (:func:`cifar_references`: trees on the weight statistics, trees on
the hyperparameters alone, the label-noise ceiling; :mod:`hgutils.weightspace.in_zoo_baselines`,
:mod:`hgutils.weightspace.kendall_ceiling`), their tables
and their rows of the paper table (:func:`reference_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.ledger import PaperRow
from hgutils.weightspace.in_zoo_baselines import (
    TREES_HPARAMS,
    TREES_STATS,
    TREES_STATS_TRAJ,
    ReferenceRun,
    TreeSettings,
    in_zoo_references,
)
from hgutils.weightspace.kendall_ceiling import NoiseCeiling, label_noise_ceiling


# --------------------------------------------------------------------------------------------
# in-zoo references
# --------------------------------------------------------------------------------------------
@dataclass
class CifarReferences:
    """The in-zoo yardsticks of notebook 03 on the comparison's split: the trees (``trees``: on the
    final-checkpoint statistics, on the trajectory's, on the hyperparameters alone) and the
    label-noise ceiling of the test networks (``ceiling``)."""

    trees: ReferenceRun
    ceiling: NoiseCeiling


def cifar_references(
    zoo: Any, splits: cmp.Splits, seeds: Sequence[int], settings: TreeSettings | None = None
) -> CifarReferences:
    """:func:`hgutils.weightspace.in_zoo_baselines.in_zoo_references` on ``zoo`` (statistics of the raw
    weights) and :func:`~hgutils.weightspace.kendall_ceiling.label_noise_ceiling` of its test networks."""
    trees = in_zoo_references(zoo, "accuracy", zoo.meta["test_acc"], splits, seeds, settings)
    te = splits.test
    return CifarReferences(trees, label_noise_ceiling(zoo.meta["test_acc_a"][te], zoo.meta["test_acc_b"][te]))


def reference_table(refs: CifarReferences, n_images: int | None = None) -> pd.DataFrame:
    """One row per yardstick: test Kendall τ (mean ± std over seeds; the ceiling ± its jackknife se),
    what it reads, and its budget (boosting iterations used; capped runs)."""
    rows = []
    what = {
        TREES_STATS: "7 statistics per tensor, final checkpoint (StatNN's inputs)",
        TREES_STATS_TRAJ: "7 statistics per tensor, every snapshot",
        TREES_HPARAMS: "the sampled hyperparameters only (no weights)",
    }
    t = refs.trees.table
    for name in dict.fromkeys(t["model"]):
        r = t[t["model"] == name]
        tau = r["test_kendall_tau"]
        rows.append(
            {
                "yardstick": name,
                "test Kendall τ": f"{tau.mean():.3f} ± {tau.std(ddof=0):.3f}",
                "reads": what.get(name, ""),
                "budget": f"{int(r['steps'].min())}–{int(r['steps'].max())} boosting iterations (early stop), "
                f"{int(r['capped'].sum())} capped; lr {r['lr'].iloc[0]:g}, {int(r['max_leaf_nodes'].iloc[0])} leaves",
            }
        )
    c = refs.ceiling
    img = f" ({n_images // 2} images each)" if n_images else ""
    rows.append(
        {
            "yardstick": "label-noise ceiling",
            "test Kendall τ": f"{c.tau:.3f} ± {c.se:.3f}",
            "reads": f"Spearman–Brown ceiling from τ = {c.tau_halves:.3f} ± {c.se_halves:.3f} between the accuracies "
            f"on two disjoint test halves{img}",
            "budget": f"no model; {c.n_networks} test networks, jackknife se",
        }
    )
    return pd.DataFrame(rows)


def position_table(summary: pd.DataFrame, refs: CifarReferences, models: Sequence[str]) -> pd.DataFrame:
    """Each model's τ against the yardsticks: differences to the trees (same checkpoint) and to the
    hyperparameters-only trees, the room left to the ceiling, and the fraction of the way from the
    hyperparameters-only τ to the ceiling (0: no better than knowing the recipe; 1: at the ceiling)."""
    s = summary.set_index("model")
    t = refs.trees.table
    ref_mean = {n: float(t[t["model"] == n]["test_kendall_tau"].mean()) for n in dict.fromkeys(t["model"])}
    hp, ceil = ref_mean.get(TREES_HPARAMS), refs.ceiling.tau
    rows = []
    for m in models:
        if m not in s.index:
            continue
        tau = float(s.loc[m, "test_kendall_tau_mean"])
        reads_trajectory = m.endswith("(traj)") or m in ("GTH-GMN", "GTH-GMN (two-stage, frozen)")
        trees = ref_mean[TREES_STATS_TRAJ if reads_trajectory else TREES_STATS]
        row = {"model": m, "τ": round(tau, 3), "τ − trees (same snapshots)": round(tau - trees, 3)}
        if hp is not None:
            row["τ − hyperparameters-only"] = round(tau - hp, 3)
            row["way from hyperparameters-only to ceiling"] = round((tau - hp) / (ceil - hp), 2) if ceil > hp else None
        row["ceiling − τ"] = round(ceil - tau, 3)
        rows.append(row)
    return pd.DataFrame(rows)


def reference_rows(refs: CifarReferences | None) -> list[PaperRow]:
    """The in-zoo yardsticks as rows of the paper table, after :func:`~hgutils.experiments.weightspace_protocol.
    paper_rows` of :data:`PAPER` (no paper number: they exist only on this zoo): each tree reference's test τ
    (mean ± std over seeds), then the label-noise ceiling (± its jackknife se); none without ``refs``."""
    if refs is None:
        return []
    source = "in-zoo yardstick (this zoo)"
    t = refs.trees.table
    rows = []
    for name in dict.fromkeys(t["model"]):
        v = t[t["model"] == name]["test_kendall_tau"]
        rows.append(PaperRow(name, "—", source, f"{v.mean():.3f} ± {v.std(ddof=0):.3f}"))
    c = refs.ceiling
    rows.append(PaperRow("label-noise ceiling", "—", source, f"{c.tau:.3f} ± {c.se:.3f} (jackknife se)"))
    return rows
