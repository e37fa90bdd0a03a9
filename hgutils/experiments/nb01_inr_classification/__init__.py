"""Notebook 01 -- INR classification from weight trajectories (GTH-GMN paper, MNIST / Fashion-MNIST INRs).

The notebook's driver, by job: :mod:`.preset` (the preset, the paper's numbers, the model lists),
:mod:`.zoos` (the judging zoo -- one shared initialisation below the paper preset -- and the data curve's
independent-init zoo, their labels, the shared-initialisation check, the curve's fitting time), :mod:`.curve`
(the paper's protocol as a data curve: nested zoos, where each model leaves chance, the rendered-pixel read-out),
:mod:`.figures` (accuracy per model and the data curve, chance marked) and :mod:`.claims`. The comparison
protocol itself (split, variants, training) is the library's :mod:`hgutils.experiments.weightspace_protocol`;
GTH-GMN's selection grid is :mod:`hgutils.experiments.gth_selection`. The paper's embedding figure (13-layer
INRs, ~100 snapshots) is notebook 07's (:mod:`hgutils.experiments.nb07_training_geometry`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.nb01_inr_classification.claims import (
    ABLATION_CLAIMS,
    NOT_RUN,
    PAPER_GAP,
    claim_absolute,
    claim_gru,
    claim_hyperbolic,
    claim_links,
    claim_reconstruction_learned,
    claim_reconstruction_literal,
    claim_temporal,
    claim_vs_best_baseline,
    inr_claims,
    literal_link_aucs,
    recon_by_seed,
    reconstruction_claims,
)
from hgutils.experiments.nb01_inr_classification.curve import (
    CEILING_C_GRID,
    IMAGE_CEILING,
    above_chance,
    curve_cells,
    curve_splits,
    curve_table,
    first_above_chance,
    image_ceiling,
    learning_curve,
)
from hgutils.experiments.nb01_inr_classification.figures import (
    binomial_se,
    paper_points,
    plot_accuracy,
    plot_data_curve,
)
from hgutils.experiments.nb01_inr_classification.preset import (
    ABLATION_VARIANTS,
    CONFIG,
    CURVE_VARIANTS,
    GTH_HEADS,
    INDEPENDENT,
    INR_PAPER_KEYS,
    INR_VARIANTS,
    PAPER,
    PAPER_ROW_SOURCES,
    PAPER_SOURCE,
    PAPER_TRAIN_INRS,
    SHARED,
    SIDE_VARIANTS,
    SLOW_VARIANTS,
    INRClassificationConfig,
)
from hgutils.experiments.nb01_inr_classification.zoos import (
    DATASET_NAMES,
    curve_zoo,
    fitting_seconds_per_inr,
    inr_zoo,
    shared_init_check,
    zoo_label,
    zoo_summary,
)
from hgutils.weightspace.metanets.gth_gmn import CITATION, PairSets, link_ceiling

__all__ = [
    "ABLATION_CLAIMS",
    "ABLATION_VARIANTS",
    "CEILING_C_GRID",
    "CITATION",
    "CONFIG",
    "CURVE_VARIANTS",
    "DATASET_NAMES",
    "GTH_HEADS",
    "IMAGE_CEILING",
    "INDEPENDENT",
    "INRClassificationConfig",
    "INR_PAPER_KEYS",
    "INR_VARIANTS",
    "NOT_RUN",
    "PAPER",
    "PAPER_GAP",
    "PAPER_ROW_SOURCES",
    "PAPER_SOURCE",
    "PAPER_TRAIN_INRS",
    "SHARED",
    "SIDE_VARIANTS",
    "SLOW_VARIANTS",
    "above_chance",
    "binomial_se",
    "chosen_lrs",
    "claim_absolute",
    "claim_gru",
    "claim_hyperbolic",
    "claim_links",
    "claim_reconstruction_learned",
    "claim_reconstruction_literal",
    "claim_temporal",
    "claim_vs_best_baseline",
    "curve_cells",
    "curve_splits",
    "curve_table",
    "curve_zoo",
    "first_above_chance",
    "fitting_seconds_per_inr",
    "image_ceiling",
    "inr_claims",
    "inr_zoo",
    "learning_curve",
    "link_ceilings",
    "literal_link_aucs",
    "paper_points",
    "plot_accuracy",
    "plot_data_curve",
    "recon_by_seed",
    "reconstruction_claims",
    "shared_init_check",
    "with_zoo",
    "zoo_label",
    "zoo_summary",
]


def chosen_lrs(table: pd.DataFrame) -> dict[str, float]:
    """``{base model: learning rate}`` each model family trained with in a comparison's results ``table`` (its
    first listed variant's first row; a reference recipe's rate for a baseline with one), for runs elsewhere
    that should reuse what the judging zoo's validation split chose (the data curve)."""
    out: dict[str, float] = {}
    for name, lr in zip(table["model"], table["lr"]):
        out.setdefault(cmp.VARIANTS[name].base, float(lr))
    return out


def with_zoo(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """``table`` with a first column ``zoo`` naming the zoo every row was measured on (:func:`~.zoos.zoo_label`)."""
    return table.drop(columns=["zoo"], errors="ignore").assign(zoo=label)[
        ["zoo", *table.columns.drop("zoo", errors="ignore")]
    ]


def link_ceilings(graphs: object, idx: object, dim: int, steps: int = 600) -> dict[str, dict[str, float]]:
    """The link decoder's ceiling under each reading (``"strong"``, ``"literal"``): the AUC reached with
    node positions free on the ball (:func:`hgutils.weightspace.metanets.gth_gmn.link_ceiling`) for the
    last snapshot of networks ``idx`` of prepared graphs ``graphs``, averaged over them."""

    pairs = PairSets.from_graph(graphs)
    out: dict[str, dict[str, float]] = {}
    for reading in ("strong", "literal"):
        rows = []
        for i in torch.as_tensor(idx).tolist():
            w = 2 * graphs.edge_weight[i, -1, : pairs.P]
            rows.append(link_ceiling(w, pairs, reading, dim=dim, steps=steps, seed=i))
        out[reading] = {}
        for k in rows[0]:
            vals = np.array([r[k] for r in rows], dtype=float)
            vals = vals[np.isfinite(vals)]
            out[reading][k] = float(vals.mean()) if vals.size else float("nan")
    return out
