"""Notebook 07 -- the paper's training-geometry figure (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak).

A zoo of 13-layer INR MLPs with ~100 snapshots each, GTH-GMN trained on it by reconstruction, and
the node embedding of held-out INRs read in the Poincaré ball: the ball at the paper's t = 11 and
t = 97, the per-layer radius and the layer-separation indices over training, and the figure's three
statements judged against a time-shuffled control. The driver, by job: :mod:`.preset` (the preset,
the paper's snapshot pair), :mod:`.runs` (the zoo, the encoder, the readouts), :mod:`.claims` (one
function per claim id) and :mod:`.figures`. The figure moved here from notebook 01, with its claim ids.
"""

from __future__ import annotations

from hgutils.experiments.nb07_training_geometry.claims import (
    GEOMETRY_CLAIMS,
    claim_layers_separate_angularly,
    claim_layers_separate_radially,
    claim_nodes_drift_outward,
    geometry_claims,
)
from hgutils.experiments.nb07_training_geometry.figures import (
    layer_names,
    layer_radius,
    plot_ball,
    plot_encoder_curves,
    plot_layer_radius,
    plot_readouts,
)
from hgutils.experiments.nb07_training_geometry.preset import (
    CONFIG,
    PAPER_SNAPSHOTS,
    PAPER_SOURCE,
    TrainingGeometryConfig,
    snapshot_pair,
)
from hgutils.experiments.nb07_training_geometry.runs import (
    READOUTS,
    EmbeddingReadout,
    TrainingGeometry,
    deep_inr_zoo,
    encoder_table,
    read_geometry,
    readout_table,
    split_networks,
    training_geometry,
    zoo_table,
)
from hgutils.weightspace.metanets.gth_gmn import CITATION

__all__ = [
    "CITATION",
    "CONFIG",
    "GEOMETRY_CLAIMS",
    "PAPER_SNAPSHOTS",
    "PAPER_SOURCE",
    "READOUTS",
    "EmbeddingReadout",
    "TrainingGeometry",
    "TrainingGeometryConfig",
    "claim_layers_separate_angularly",
    "claim_layers_separate_radially",
    "claim_nodes_drift_outward",
    "deep_inr_zoo",
    "encoder_table",
    "geometry_claims",
    "layer_names",
    "layer_radius",
    "plot_ball",
    "plot_encoder_curves",
    "plot_layer_radius",
    "plot_readouts",
    "read_geometry",
    "readout_table",
    "snapshot_pair",
    "split_networks",
    "training_geometry",
    "zoo_table",
]
