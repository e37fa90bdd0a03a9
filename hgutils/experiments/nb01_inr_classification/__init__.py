"""Notebook 01 -- INR classification from weight trajectories (GTH-GMN paper, MNIST / Fashion-MNIST INRs).

The notebook's driver, by job: :mod:`.preset` (the preset, the paper's numbers, the model lists),
:mod:`.zoos` (the main zoo with one initialisation per INR, the shared-initialisation variant),
:mod:`.curve` (the zoo-size learning curve) and :mod:`.claims`. The comparison protocol itself (split,
variants, training) is the library's :mod:`hgutils.experiments.weightspace_protocol`. The paper's embedding
figure (13-layer INRs, ~100 snapshots) is notebook 07's (:mod:`hgutils.experiments.nb07_training_geometry`).
"""

from __future__ import annotations

import numpy as np
import torch

from hgutils.experiments.nb01_inr_classification.claims import (
    ABLATION_CLAIMS,
    PAPER_GAP,
    claim_absolute,
    claim_gru,
    claim_hyperbolic,
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
    augmentation_effects,
    curve_splits,
    curve_table,
    first_above_chance,
    image_ceiling,
    learning_curve,
    plot_learning_curve,
)
from hgutils.experiments.nb01_inr_classification.figures import plot_augmentation_curve
from hgutils.experiments.nb01_inr_classification.preset import (
    ABLATION_VARIANTS,
    AUG_CURVE_VARIANTS,
    CONFIG,
    CURVE_VARIANTS,
    INR_PAPER_KEYS,
    INR_VARIANTS,
    PAPER,
    PAPER_ROW_SOURCES,
    PAPER_SOURCE,
    PAPER_TRAIN_INRS,
    SHARED_VARIANTS,
    SIDE_VARIANTS,
    SLOW_VARIANTS,
    INRClassificationConfig,
)
from hgutils.experiments.nb01_inr_classification.zoos import inr_zoo, inr_zoos, shared_zoo, zoo_summary
from hgutils.weightspace.metanets.gth_gmn import CITATION, PairSets, link_ceiling

__all__ = [
    "ABLATION_CLAIMS",
    "ABLATION_VARIANTS",
    "AUG_CURVE_VARIANTS",
    "CEILING_C_GRID",
    "CITATION",
    "CONFIG",
    "CURVE_VARIANTS",
    "INRClassificationConfig",
    "INR_PAPER_KEYS",
    "IMAGE_CEILING",
    "INR_VARIANTS",
    "PAPER",
    "PAPER_GAP",
    "PAPER_ROW_SOURCES",
    "PAPER_SOURCE",
    "PAPER_TRAIN_INRS",
    "SHARED_VARIANTS",
    "SIDE_VARIANTS",
    "SLOW_VARIANTS",
    "above_chance",
    "augmentation_effects",
    "claim_absolute",
    "claim_gru",
    "claim_hyperbolic",
    "claim_reconstruction_learned",
    "claim_reconstruction_literal",
    "claim_temporal",
    "claim_vs_best_baseline",
    "curve_splits",
    "curve_table",
    "first_above_chance",
    "image_ceiling",
    "inr_claims",
    "inr_zoo",
    "inr_zoos",
    "learning_curve",
    "link_ceilings",
    "literal_link_aucs",
    "plot_augmentation_curve",
    "plot_learning_curve",
    "recon_by_seed",
    "reconstruction_claims",
    "shared_zoo",
    "zoo_summary",
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
