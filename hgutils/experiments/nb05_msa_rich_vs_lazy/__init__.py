r"""Notebook 05 -- the rich-vs-lazy experiment (MSA paper, arXiv 2603.28764, §4, Figs. 1, 5, 6).

The notebook's driver, by job: :mod:`.preset` (the preset, the paper's statements, the named ablations,
the regimes, groups and measures), :mod:`.runs` (training the cells, their learnability checks, the
sweep and the similarity matrices), :mod:`.scores` (regime checks, the scores of every split, the
jackknife, isotropy statistics, one recipe's summary row), :mod:`.claims` (one function per claim id,
the rows of the paper-vs-ours table) and :mod:`.figures`. The math is the library's: the similarity
measures and their scores against a grouping or a hierarchy in :mod:`hgutils.similarity` (``tree_distance`` and
``hierarchy_score`` in :mod:`hgutils.similarity.scoring`), the training loss in
:func:`hgutils.nn.classifier_training.classification_loss`.

Protocol (the paper's description; its code and exact task are not public). Networks: MLPs
``2 -> H -> H -> K`` (``depth`` hidden layers of width ``hidden``, ``activation`` tanh) with
:math:`W \sim \mathcal N(0, (g/\sqrt{\text{fan\_in}})^2)` and zero (trainable) biases. **Rich** =
small initialisation (``gain_rich`` = 0.1), **lazy** = large initialisation (``gain_lazy`` = 3),
both trained with Adam on the cross-entropy until every training point is classified correctly and
the loss is below ``loss_tol`` (a step cap ``max_steps``; steps used are recorded per network).
**Untrained** networks at ``gain_untrained`` = 1 form their own group; the initial weights of the
lazy networks (same g) are kept as a control, so that the saturation of a large-init tanh network
is not mistaken for learning.

Task: **ring blobs** with ``blobs_per_class`` = 3 interleaved blobs per class on the unit circle
(:func:`hgutils.data.points.ring_blobs`): not linearly separable for any K, and -- unlike two
opposite blobs per class -- learnable by an odd function (a tanh network with zero biases).

Comparison: the last hidden layer of every network, at ``n_heldout`` held-out points scattered
about the ring (:func:`hgutils.data.points.ring_samples`, shared by all networks and all measures)
and, for MSA, also on a ``grid`` x ``grid`` square. Measures: MSA (``1 - d_MSA``), linear CKA,
SVCCA (top directions keeping 99 % of the variance, at most ``svcca_components``: plain CCA of
256 features on a few hundred samples sits at its chance level), RSA (Euclidean RDMs, Pearson) and
Procrustes. Every split is scored three ways (:mod:`hgutils.similarity.scoring`): AUC,
between/within dissimilarity ratio (scale-free) and raw mean similarities.

Regime checks (thresholds are config fields, set before the results): relative change of the
hidden weights, alignment of the neural tangent kernel before and after training (Fort et al.
2020, arXiv:2010.15110), and the rise of the hidden kernel's alignment with the labels.

Ablations (:data:`ABLATIONS`): the recipe this notebook used before -- one hidden ReLU layer, lazy
by Chizat-Bach α-scaling (arXiv:1812.07956; :math:`f_\alpha = \alpha(h(w) - h(w_0))`, loss
:math:`/\alpha^2`), SGD with momentum on the squared loss for a fixed number of steps, two opposite
blobs per class -- and one-factor changes of either recipe.

Hierarchy (documented choice, :func:`hgutils.similarity.scoring.tree_distance`): trained vs untrained
at the root (tree distance 4); trained networks then split by number of classes (3), regime (2) and
seed (1); untrained networks depend only on their seed (siblings, 1). The lazy-init controls are left
out of the hierarchy (a lazy network and its own initialisation are the same function up to a small
change, not tree distance 4 apart).
"""

from __future__ import annotations

from hgutils.experiments.nb05_msa_rich_vs_lazy.claims import (
    claim_ablation_previous_recipe,
    claim_cca_rsa_blind_to_training,
    claim_msa_recovers_hierarchy,
    claim_msa_separates_better_than_baselines,
    claim_regimes_verified,
    claim_rich_lazy_procrustes_high_msa_separates,
    claim_swiss_roll_msa_zero,
    paper_rows,
)
from hgutils.experiments.nb05_msa_rich_vs_lazy.figures import (
    block_label,
    plot_hidden_pca,
    plot_isotropy,
    plot_metric_field,
    plot_similarity_panels,
    plot_swiss_roll,
    plot_training_curves,
)
from hgutils.experiments.nb05_msa_rich_vs_lazy.preset import (
    ABLATIONS,
    ACTIVATIONS,
    BASELINES,
    CONFIG,
    GROUPS,
    LAZY_MODES,
    MEASURES,
    OPTIMIZERS,
    PAPER,
    PREVIOUS_RECIPE,
    REGIMES,
    SRC,
    STOPS,
    SWEEP_VERSION,
    RichLazyConfig,
    ablation_config,
)
from hgutils.experiments.nb05_msa_rich_vs_lazy.runs import (
    cell_gate,
    cell_seeds,
    group_gates,
    hidden_stack,
    reference_points,
    regime_setting,
    run_experiment,
    run_sweep,
    similarity_matrices,
    train_cell,
    train_cells,
)
from hgutils.experiments.nb05_msa_rich_vs_lazy.scores import (
    MIN_JACKKNIFE_SEEDS,
    ablation_row,
    activation_stats,
    isotropy_bound,
    isotropy_table,
    jackknife_scores,
    msa_beats_baselines,
    regime_checks,
    regime_criterion,
    regime_table,
    score_measures,
)

__all__ = [
    "ABLATIONS",
    "ACTIVATIONS",
    "BASELINES",
    "CONFIG",
    "GROUPS",
    "LAZY_MODES",
    "MEASURES",
    "MIN_JACKKNIFE_SEEDS",
    "OPTIMIZERS",
    "PAPER",
    "PREVIOUS_RECIPE",
    "REGIMES",
    "SRC",
    "STOPS",
    "SWEEP_VERSION",
    "RichLazyConfig",
    "ablation_config",
    "ablation_row",
    "activation_stats",
    "block_label",
    "cell_gate",
    "cell_seeds",
    "claim_ablation_previous_recipe",
    "claim_cca_rsa_blind_to_training",
    "claim_msa_recovers_hierarchy",
    "claim_msa_separates_better_than_baselines",
    "claim_regimes_verified",
    "claim_rich_lazy_procrustes_high_msa_separates",
    "claim_swiss_roll_msa_zero",
    "group_gates",
    "hidden_stack",
    "isotropy_bound",
    "isotropy_table",
    "jackknife_scores",
    "msa_beats_baselines",
    "paper_rows",
    "plot_hidden_pca",
    "plot_isotropy",
    "plot_metric_field",
    "plot_similarity_panels",
    "plot_swiss_roll",
    "plot_training_curves",
    "reference_points",
    "regime_checks",
    "regime_criterion",
    "regime_setting",
    "regime_table",
    "run_experiment",
    "run_sweep",
    "score_measures",
    "similarity_matrices",
    "train_cell",
    "train_cells",
]
