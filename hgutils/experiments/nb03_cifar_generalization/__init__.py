"""Notebook 03 -- predicting classifiers' generalisation from weights (Kendall tau), GTH-GMN paper, CIFAR-10.

The notebook's driver, by job: :mod:`.preset` (the preset :data:`CONFIG`, the paper's numbers with
their source :data:`PAPER`, dataset resolution, the classifier-zoo builder), :mod:`.references` (the
in-zoo references -- trees on the weight statistics, trees on the hyperparameters alone, the
label-noise ceiling; :mod:`hgutils.weightspace.references` -- and the tables, the paper's beside ours
included) and :mod:`.claims`; the protocol is :mod:`hgutils.experiments.weightspace_protocol`.
"""

from hgutils.experiments.nb03_cifar_generalization.claims import cifar_claims
from hgutils.experiments.nb03_cifar_generalization.preset import (
    CIFAR_VARIANTS,
    CONFIG,
    PAPER,
    PAPER_SOURCE,
    REFERENCE_SOURCE,
    GeneralizationConfig,
    classifier_zoo_for,
    hyperparameter_summary,
    resolve_generalization_dataset,
)
from hgutils.experiments.nb03_cifar_generalization.references import (
    CifarReferences,
    cifar_references,
    paper_table,
    position_table,
    reference_table,
)

__all__ = [
    "CIFAR_VARIANTS",
    "CONFIG",
    "CifarReferences",
    "GeneralizationConfig",
    "PAPER",
    "PAPER_SOURCE",
    "REFERENCE_SOURCE",
    "cifar_claims",
    "cifar_references",
    "classifier_zoo_for",
    "hyperparameter_summary",
    "paper_table",
    "position_table",
    "reference_table",
    "resolve_generalization_dataset",
]
