"""Representation similarity: metric similarity analysis (MSA) and the classic baselines.

Intrinsic (MSA, arXiv 2603.28764): :func:`pullback_metric`, :func:`spectral_ratio`, :func:`msa`,
:func:`msa_matrix` (distances in [0, 1], 0 = same intrinsic geometry).
Extrinsic baselines, ``(X, Y) -> similarity in [0, 1]``: :func:`linear_cka`, :func:`cca_similarity`,
:func:`svcca`, :func:`rsa`, :func:`procrustes_similarity` (+ ``*_matrix`` all-pairs helpers).
The rich-vs-lazy experiment of notebook 05 lives in :mod:`hgutils.similarity.richlazy`; its public
names are importable from here too (loaded lazily, so that importing the metrics does not import
matplotlib).
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
from hgutils.similarity.msa import (
    DEFAULT_EPS,
    VOLUMES,
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

__all__ = [
    "DEFAULT_EPS",
    "VOLUMES",
    "canonical_correlations",
    "cca_matrix",
    "cca_similarity",
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
]

_RICHLAZY = (
    "REGIMES",
    "MEASURES",
    "SWEEP_VERSION",
    "RichLazyConfig",
    "ring_blobs",
    "grid_points",
    "swiss_roll",
    "unrolled_plane",
    "cell_seeds",
    "train_cell",
    "relative_weight_change",
    "hidden_kernel",
    "kernel_alignment",
    "label_alignment",
    "hidden_stack",
    "run_sweep",
    "task_samples",
    "similarity_matrices",
    "tree_distance",
    "hierarchy_score",
    "split_auc",
    "mean_between",
    "model_labels",
    "plot_similarity_panels",
    "plot_hidden_pca",
    "plot_swiss_roll",
    "plot_metric_field",
)
__all__ += list(_RICHLAZY)


def __getattr__(name: str):
    if name in _RICHLAZY:
        from hgutils.similarity import richlazy

        return getattr(richlazy, name)
    raise AttributeError(f"module 'hgutils.similarity' has no attribute {name!r}")
