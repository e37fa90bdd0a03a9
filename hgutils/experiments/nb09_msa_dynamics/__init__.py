r"""Notebook 09 -- MSA on recurrent dynamics (MSA paper, arXiv 2603.28764, §5, Fig. 7): vanilla RNNs and
structured state-space models on a sequential angle-memory task, compared by MSA on the input-time
manifold, RSA, CKA and DSA.

The notebook's driver, by job: :mod:`.preset` (the preset, the paper's statements, the names),
:mod:`.runs` (the angle splits, training each architecture, the untrained controls, the geometry of
every network and the similarity matrices), :mod:`.scores` (separation scores, their jackknife, the drift
of the coded geometry over the delay), :mod:`.claims` (one function per claim id, the paper-vs-ours rows)
and :mod:`.figures`. The math is the library's: the task, the models and their training in
:mod:`hgutils.dynamics`, the input-time pullback metrics in :mod:`hgutils.similarity.input_time`, DSA
through its authors' package in :mod:`hgutils.similarity.dynamical`, RSA and CKA in
:mod:`hgutils.similarity.baselines`.

Protocol (the paper's summary is silent on the task's timing, the sizes and the SSM variant; these are
our declared choices). **Task**: ``n_items`` = 2 angles shown one after the other (``stim_steps`` each,
``gap_steps`` apart) as (cos, sin) on their own input channels, a ``delay_steps`` input-free delay, then
a ``report_steps`` report (a go cue on) where the outputs must give every angle's (cos, sin); MSE on the
report (:class:`hgutils.dynamics.AngleMemoryTask`). **Networks**: a vanilla tanh RNN (``hidden`` units,
g = ``rnn_gain``) and one LRU layer (the S4D-style diagonal complex recurrence with ``hidden`` modes,
ring initialisation, GELU readout of width ``hidden``); ``n_seeds`` of each trained at once with Adam
through :func:`hgutils.loop.train` (input noise, per-network gradient clipping, early stopping on the
validation trials); their initialisations are the untrained controls. **Learnability**: every network's
report loss fell and its held-out mean circular error on the angle grid is below ``max_error_deg``.

**Comparison** on the delay (input off, memory held): MSA on the input-time manifold (angles x delay
steps, ``grid`` angles per item, the piecewise-linear time coordinate of
:mod:`hgutils.similarity.input_time`); RSA and linear CKA on the hidden states at the grid points every
``time_stride`` delay steps; DSA (angular Procrustes over vector fields, ``dsa_delays`` delays, rank
``dsa_rank``, ``dsa_iters`` steps) on ``dsa_trials`` held-out trials. **Per time step**: each network's
coded geometry (the angle block of the metric) compared between delay steps, summarised by its drift.
"""

from __future__ import annotations

from hgutils.experiments.nb09_msa_dynamics.claims import (
    CRITERIA,
    claim_both_architectures_learn,
    claim_dsa_rates_alike,
    claim_msa_separates_architectures,
    claim_msa_separates_best,
    claim_msa_separates_training,
    claim_rnn_stable_ssm_changes,
    claim_robust_separation,
    claim_rsa_blind_to_training,
    paper_rows,
)
from hgutils.experiments.nb09_msa_dynamics.figures import (
    plot_drift,
    plot_separation,
    plot_similarity_panels,
    plot_task,
    plot_training_curves,
)
from hgutils.experiments.nb09_msa_dynamics.preset import (
    ARCH_NAMES,
    ARCHS,
    BASELINES,
    CONFIG,
    EXPERIMENT_VERSION,
    MEASURES,
    PAPER,
    ROBUSTNESS,
    SRC,
    DynamicsConfig,
    robustness_config,
)
from hgutils.experiments.nb09_msa_dynamics.runs import (
    angle_splits,
    arch_gate,
    arch_seeds,
    ceilings,
    example_outputs,
    init_stack,
    network_geometry,
    run_experiment,
    similarity_matrices,
    temporal_matrices,
    train_architecture,
    window,
)
from hgutils.experiments.nb09_msa_dynamics.scores import (
    MIN_JACKKNIFE_SEEDS,
    SPLITS,
    drift,
    drift_table,
    group_values,
    jackknife_scores,
    msa_beats_baselines,
    score_measures,
    separation_row,
    weight_change,
)

__all__ = [
    "ARCHS",
    "ARCH_NAMES",
    "BASELINES",
    "CONFIG",
    "CRITERIA",
    "EXPERIMENT_VERSION",
    "MEASURES",
    "MIN_JACKKNIFE_SEEDS",
    "PAPER",
    "ROBUSTNESS",
    "SPLITS",
    "SRC",
    "DynamicsConfig",
    "angle_splits",
    "arch_gate",
    "arch_seeds",
    "ceilings",
    "claim_both_architectures_learn",
    "claim_dsa_rates_alike",
    "claim_msa_separates_architectures",
    "claim_msa_separates_best",
    "claim_msa_separates_training",
    "claim_rnn_stable_ssm_changes",
    "claim_robust_separation",
    "claim_rsa_blind_to_training",
    "drift",
    "drift_table",
    "example_outputs",
    "group_values",
    "init_stack",
    "jackknife_scores",
    "msa_beats_baselines",
    "network_geometry",
    "paper_rows",
    "plot_drift",
    "plot_separation",
    "plot_similarity_panels",
    "plot_task",
    "plot_training_curves",
    "robustness_config",
    "run_experiment",
    "score_measures",
    "separation_row",
    "similarity_matrices",
    "temporal_matrices",
    "train_architecture",
    "weight_change",
    "window",
]
