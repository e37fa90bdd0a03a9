r"""Representation similarity: metric similarity analysis (MSA) and the classic baselines.

Intrinsic (MSA, arXiv 2603.28764): :func:`pullback_metric`, :func:`spectral_ratio`, :func:`msa`,
:func:`msa_matrix` (distances in [0, 1], 0 = same intrinsic geometry); :func:`metric_isotropy`
(:math:`\sqrt{\lambda_{min}/\lambda_{max}}` of a metric, which bounds what MSA can resolve).
Extrinsic baselines, ``(X, Y) -> similarity in [0, 1]``: :func:`linear_cka`, :func:`cca_similarity`,
:func:`svcca`, :func:`rsa`, :func:`procrustes_similarity` (+ ``*_matrix`` all-pairs helpers).
Regime diagnostics (:mod:`~hgutils.similarity.regimes`): :func:`relative_weight_change`,
:func:`hidden_kernel`, :func:`tangent_kernel`, :func:`kernel_alignment`, :func:`label_alignment`.
Scoring a similarity matrix against known groups (:mod:`~hgutils.similarity.scoring`):
:func:`split_auc`, :func:`dissimilarity_ratio` (scale-free), :func:`split_scores`,
:func:`split_pairs`, :func:`mean_between`.
Dynamics (:mod:`~hgutils.similarity.input_time`, :mod:`~hgutils.similarity.dynamical`): pullback metrics on
the input-time manifold of a recurrent network (:func:`trajectory_jacobians`, :func:`input_time_metrics`,
:func:`input_time_msa`, the coded geometry over time :func:`coded_metrics`, :func:`temporal_msa`) and DSA
through its authors' package (:func:`dsa_matrix`).
"""

from hgutils.similarity.baselines import (
    canonical_correlations,
    cca_matrix,
    cca_similarity,
    linear_cka,
    linear_cka_matrix,
    procrustes_distance,
    procrustes_matrix,
    procrustes_similarity,
    rdm,
    rsa,
    rsa_matrix,
    similarity_matrix,
    svcca,
    svcca_matrix,
)
from hgutils.similarity.dynamical import dsa_matrix
from hgutils.similarity.input_time import (
    coded_metrics,
    input_time_jacobians,
    input_time_metrics,
    input_time_msa,
    temporal_msa,
    trajectory_jacobians,
)
from hgutils.similarity.msa import (
    DEFAULT_EPS,
    VOLUMES,
    metric_isotropy,
    msa,
    msa_from_metrics,
    msa_matrix,
    msa_matrix_from_metrics,
    spectral_ratio,
)
from hgutils.similarity.pullback import (
    mlp_layer_fn,
    mlp_pullback_metrics,
    module_layer_fn,
    pullback_jacobian,
    pullback_metric,
)
from hgutils.similarity.regimes import (
    hidden_kernel,
    kernel_alignment,
    label_alignment,
    relative_weight_change,
    tangent_kernel,
)
from hgutils.similarity.scoring import dissimilarity_ratio, mean_between, split_auc, split_pairs, split_scores

__all__ = [
    "DEFAULT_EPS",
    "VOLUMES",
    "canonical_correlations",
    "cca_matrix",
    "cca_similarity",
    "coded_metrics",
    "dsa_matrix",
    "input_time_jacobians",
    "input_time_metrics",
    "input_time_msa",
    "temporal_msa",
    "trajectory_jacobians",
    "linear_cka",
    "linear_cka_matrix",
    "mlp_layer_fn",
    "mlp_pullback_metrics",
    "module_layer_fn",
    "msa",
    "msa_from_metrics",
    "msa_matrix",
    "msa_matrix_from_metrics",
    "procrustes_distance",
    "procrustes_matrix",
    "procrustes_similarity",
    "pullback_jacobian",
    "pullback_metric",
    "rdm",
    "rsa",
    "rsa_matrix",
    "similarity_matrix",
    "spectral_ratio",
    "svcca",
    "svcca_matrix",
    "dissimilarity_ratio",
    "hidden_kernel",
    "kernel_alignment",
    "label_alignment",
    "mean_between",
    "metric_isotropy",
    "relative_weight_change",
    "split_auc",
    "split_pairs",
    "split_scores",
    "tangent_kernel",
]
