"""Notebook 03 -- predicting classifiers' generalisation from weights (Kendall tau), GTH-GMN paper, CIFAR-10.

The notebook's driver, by job: :mod:`.preset` (the preset :data:`CONFIG`, the paper's numbers
:data:`PAPER` with each row's source :data:`PAPER_ROW_SOURCES`, dataset resolution, the classifier-zoo
builder), :mod:`.references` (the in-zoo references -- trees on the weight statistics, trees on the
hyperparameters alone, the label-noise ceiling; :mod:`hgutils.weightspace.in_zoo_baselines` and
:mod:`hgutils.weightspace.kendall_ceiling` -- their tables and their rows of the paper table) and
:mod:`.claims` (one function per claim id); the protocol is :mod:`hgutils.experiments.weightspace_protocol`.
"""

from hgutils.experiments.nb03_cifar_generalization.claims import (
    TAU_ORDER,
    TRAJECTORY_BASELINES,
    cifar_claims,
    claim_below_ceiling,
    claim_gap_sizes,
    claim_gth_below_nfn,
    claim_gth_temporal,
    claim_nfn_above_trees,
    claim_position_between_references,
    claim_statnn_vs_trees,
    claim_tau_order,
    claim_trajectory_helps_baselines,
    claim_weights_beyond_hyperparameters,
    tau_by_seed,
)
from hgutils.experiments.nb03_cifar_generalization.preset import (
    CIFAR_VARIANTS,
    CONFIG,
    PAPER,
    PAPER_ROW_SOURCES,
    PAPER_SOURCE,
    REFERENCE_SOURCE,
    GeneralizationConfig,
    chance_accuracy,
    classifier_zoo_for,
    hyperparameter_summary,
    resolve_generalization_dataset,
)
from hgutils.experiments.nb03_cifar_generalization.references import (
    CifarReferences,
    cifar_references,
    position_table,
    reference_rows,
    reference_table,
)

__all__ = [
    "CIFAR_VARIANTS",
    "CONFIG",
    "PAPER",
    "PAPER_ROW_SOURCES",
    "PAPER_SOURCE",
    "REFERENCE_SOURCE",
    "TAU_ORDER",
    "TRAJECTORY_BASELINES",
    "CifarReferences",
    "GeneralizationConfig",
    "cifar_claims",
    "chance_accuracy",
    "cifar_references",
    "claim_below_ceiling",
    "claim_gap_sizes",
    "claim_gth_below_nfn",
    "claim_gth_temporal",
    "claim_nfn_above_trees",
    "claim_position_between_references",
    "claim_statnn_vs_trees",
    "claim_tau_order",
    "claim_trajectory_helps_baselines",
    "claim_weights_beyond_hyperparameters",
    "classifier_zoo_for",
    "hyperparameter_summary",
    "position_table",
    "reference_rows",
    "reference_table",
    "resolve_generalization_dataset",
    "tau_by_seed",
]
