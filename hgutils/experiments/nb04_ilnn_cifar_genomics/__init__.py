r"""Notebook 04 -- ILNN (Shi, Chen, Jiang & Sebe, "Intrinsic Lorentz Neural Network", ICLR 2026,
arXiv:2602.23981): Lorentz ResNets on CIFAR and Lorentz CNNs on genomic sequences.

The notebook's driver, by job:

* :mod:`.preset` -- :data:`CONFIG` (:class:`ILNNConfig`, the smoke / medium / paper sizes), the paper's
  numbers (:data:`PAPER_CIFAR`, :data:`PAPER_GENOMICS_MCC`, :data:`PAPER_SOURCE`), the ILNN ablations,
  the GUE layout, and the thresholds the claims use.
* :mod:`.data` -- :func:`load_cifar` (a CIFAR-10/100 subset standardised per channel, or a clearly
  labelled stand-in: scikit-learn 8x8 digits upsampled to 32x32 RGB, when no CIFAR copy is found) and
  :func:`genomics_task` (train / validation / test one-hot sequences of a synthetic hierarchy or a
  TEB / GUE task; TEB pseudogene tasks ship no train file here: a *reduced* protocol, see there).
* :mod:`.runs` -- :func:`run_cifar`, :func:`run_genomics`, :func:`bn_comparison`: every flavour trained
  on the same data, data order, seed, budget and schedule; :func:`init_table`: init diagnostics; the
  batch-norm timing and the design-rule numbers.
* :mod:`.claims` -- one function per claim id (``claim_<id>``, in ledger order; :func:`design_claims`,
  :func:`cifar_claims`, :func:`genomics_claims`, :func:`bn_claims` record a group of them), and the inputs
  they share: the scores per seed (:func:`seed_scores`) and the learnability checks (:func:`gates`).
* :mod:`.figures` -- :func:`seed_summary` and :func:`results_table` (mean ± sd over seeds),
  :func:`paper_rows` (the rows of :func:`hgutils.ledger.paper_table`), and the figures :func:`plot_curves`,
  :func:`plot_init_diagnostics`, :func:`plot_epoch_times`.

The verdict rule and the power of each comparison are :mod:`hgutils.verdicts`'s
(:func:`hgutils.verdicts.target_power`); the section stopwatch is :class:`hgutils.progress.Stopwatch`.
"""

from __future__ import annotations

from hgutils.experiments.nb04_ilnn_cifar_genomics.claims import (
    GENOMICS_CLAIM_TASKS,
    at_ceiling,
    bn_claims,
    cifar_claims,
    claim_cifar_order,
    claim_cifar_speed,
    claim_genomics_gain,
    claim_gyrolbn_accuracy,
    claim_gyrolbn_speed,
    claim_gyrolbn_statistics,
    claim_ilnn_stable_at_init,
    claim_plfc_flat_limit,
    design_claims,
    gates,
    genomics_claim_id,
    genomics_claims,
    hierarchy_difficulty,
    seed_scores,
)
from hgutils.experiments.nb04_ilnn_cifar_genomics.data import Split, genomics_task, load_cifar, reduced_split
from hgutils.experiments.nb04_ilnn_cifar_genomics.figures import (
    cap_hits,
    paper_rows,
    plot_curves,
    plot_epoch_times,
    plot_init_diagnostics,
    results_table,
    seed_summary,
)
from hgutils.experiments.nb04_ilnn_cifar_genomics.preset import (
    ABLATIONS,
    CEILING,
    CONFIG,
    DIFFICULTY_BAND,
    GENOMICS_TASK,
    GUE_LAYOUT,
    GUE_TASKS,
    PAPER_CIFAR,
    PAPER_GENOMICS_MCC,
    PAPER_SOURCE,
    TARGET_GAP,
    ILNNConfig,
    gue_instructions,
    lorentz_options,
)
from hgutils.experiments.nb04_ilnn_cifar_genomics.runs import (
    bn_comparison,
    bn_timing,
    design_rule_checks,
    genomic_model,
    init_summary,
    init_table,
    run_cifar,
    run_genomics,
    timing_table,
)
from hgutils.nn.ops import FLAVOURS
from hgutils.progress import Stopwatch

__all__ = [
    "ABLATIONS",
    "CEILING",
    "CONFIG",
    "DIFFICULTY_BAND",
    "FLAVOURS",
    "GENOMICS_CLAIM_TASKS",
    "GENOMICS_TASK",
    "GUE_LAYOUT",
    "GUE_TASKS",
    "ILNNConfig",
    "PAPER_CIFAR",
    "PAPER_GENOMICS_MCC",
    "PAPER_SOURCE",
    "Split",
    "Stopwatch",
    "TARGET_GAP",
    "at_ceiling",
    "bn_claims",
    "bn_comparison",
    "bn_timing",
    "cap_hits",
    "cifar_claims",
    "claim_cifar_order",
    "claim_cifar_speed",
    "claim_genomics_gain",
    "claim_gyrolbn_accuracy",
    "claim_gyrolbn_speed",
    "claim_gyrolbn_statistics",
    "claim_ilnn_stable_at_init",
    "claim_plfc_flat_limit",
    "design_claims",
    "design_rule_checks",
    "gates",
    "genomic_model",
    "genomics_claim_id",
    "genomics_claims",
    "genomics_task",
    "gue_instructions",
    "hierarchy_difficulty",
    "init_summary",
    "init_table",
    "load_cifar",
    "lorentz_options",
    "paper_rows",
    "plot_curves",
    "plot_epoch_times",
    "plot_init_diagnostics",
    "reduced_split",
    "results_table",
    "run_cifar",
    "run_genomics",
    "seed_scores",
    "seed_summary",
    "timing_table",
]
