r"""Notebook 06 -- which symmetries can be read from the weights of a neural field (arXiv:2607.03108):
positional encodings, Gram observations, the training domain and weight decay.

The notebook's driver, by job: :mod:`.preset` (the preset, the paper's statements, the encodings),
:mod:`.grid` (the training grid, its one stacked run, the fit table and the two-criterion learnability
check of a cell), :mod:`.readout` (the readout tables, rotation sweeps, the hierarchy check and the numbers
behind the claims), :mod:`.factors` (the training domain × weight decay study and the same-initialisation
controls), :mod:`.claims` (the rows of the paper-vs-ours table and one function per claim id),
:mod:`.figures` (the readout's figures) and :mod:`.factor_figures` (the factor study's figures). The pools'
random streams are seeded by :func:`hgutils.symmetry.domains.stream_seed`.

Each network is :math:`f(x) = F(\varphi(x))` with :math:`\varphi` one of the 48-dim encodings of
arXiv:2607.03108 (§3.2) and :math:`F` a ReLU MLP ``48 → hidden → … → 1`` (``depth`` hidden layers),
fitted to one shape's exact SDF (mean squared error) by AdamW with decoupled weight decay on
minibatches drawn afresh each step from a large pool of points. The available text of the paper stops
before its training details, so the optimiser, weight decay, sizes and the training domain are our
documented choices, each a preset field.

Two factors that decide what the weights show are named fields:

- ``domain`` -- where the bulk of the training points lie: ``"disk"`` (uniform in the unit disk,
  :math:`O(2)`-invariant, so the regression problem has the shape's full :math:`G_{true}`) or
  ``"square"`` (uniform in :math:`[-1, 1]^2`, the common neural-field box, :math:`D_4`-invariant).
  Half of every pool are jittered boundary points of the shape in both domains, so the sampling
  density's group is :math:`G_{true} \cap G_{domain}` (:meth:`hgutils.symmetry.shapes.Shape.sampling_symmetry`).
- ``weight_decay`` -- AdamW's decoupled decay, which shrinks the weight directions the fit does not
  use (the random part of :math:`W_0^\top W_0`).

The *main grid* (all six shapes) is trained at ``(domain, weight_decay)``; the *factor grid* trains
``factor_shapes`` at every ``(factor_domains ∪ {domain}) × (factor_weight_decays ∪ {weight_decay})``
cell. Both are one :func:`hgutils.weightspace.batched_training.train_stacked` run with a per-network weight
decay. Every network with the same seed index starts from the same initialisation, whatever its
shape, encoding, domain or decay, and every (seed, domain, shape) pool draws its minibatches from its
own generator: two networks that differ only in decay see the same points in the same order, so
within a seed any two cells differ only through the factor that names them (same-initialisation
controls).
"""

from __future__ import annotations

from hgutils.experiments.nb06_pe_symmetry_readout.claims import (
    FACTOR_SHAPES,
    claim_dyadic_d4,
    claim_dyadic_d4_control,
    claim_dyadic_suppresses_d3,
    claim_hierarchy,
    claim_hierarchy_domain,
    claim_rff_pi,
    claim_triaxis_below_threshold,
    claim_triaxis_d3_visible,
    claim_triaxis_follows_density,
    claim_triaxis_low_d3_d6,
    paper_rows,
)
from hgutils.experiments.nb06_pe_symmetry_readout.factor_figures import plot_factor_scores, plot_same_init_control
from hgutils.experiments.nb06_pe_symmetry_readout.factors import (
    data_symmetry_summary,
    data_symmetry_table,
    density_readout,
    density_readout_by_seed,
    factor_table,
    same_init_control,
)
from hgutils.experiments.nb06_pe_symmetry_readout.figures import (
    observation_title,
    plot_domains,
    plot_lift_residuals,
    plot_readout_heatmaps,
    plot_rotation_sweeps,
    plot_shapes,
    plot_training_curves,
)
from hgutils.experiments.nb06_pe_symmetry_readout.grid import (
    GridResult,
    fit_table,
    grid_spec,
    sdf_cell_gates,
    train_grid,
)
from hgutils.experiments.nb06_pe_symmetry_readout.preset import (
    CONFIG,
    PAPER,
    SHORT,
    SymmetryReadoutConfig,
    make_encodings,
)
from hgutils.experiments.nb06_pe_symmetry_readout.readout import (
    cell_frame,
    claim_metrics,
    claim_metrics_by_seed,
    hierarchy_by_cell,
    hierarchy_check,
    hierarchy_outliers,
    readout_frame,
    score_table,
    sweep_frame,
    sweep_peaks,
)

__all__ = [
    "CONFIG",
    "FACTOR_SHAPES",
    "GridResult",
    "PAPER",
    "SHORT",
    "SymmetryReadoutConfig",
    "cell_frame",
    "claim_metrics",
    "claim_metrics_by_seed",
    "data_symmetry_summary",
    "data_symmetry_table",
    "density_readout",
    "density_readout_by_seed",
    "claim_dyadic_d4",
    "claim_dyadic_d4_control",
    "claim_dyadic_suppresses_d3",
    "factor_table",
    "fit_table",
    "grid_spec",
    "hierarchy_by_cell",
    "hierarchy_check",
    "claim_hierarchy",
    "claim_hierarchy_domain",
    "hierarchy_outliers",
    "make_encodings",
    "paper_rows",
    "observation_title",
    "plot_domains",
    "plot_factor_scores",
    "plot_lift_residuals",
    "plot_readout_heatmaps",
    "plot_rotation_sweeps",
    "plot_same_init_control",
    "plot_shapes",
    "plot_training_curves",
    "readout_frame",
    "claim_rff_pi",
    "same_init_control",
    "score_table",
    "sdf_cell_gates",
    "sweep_frame",
    "sweep_peaks",
    "train_grid",
    "claim_triaxis_below_threshold",
    "claim_triaxis_d3_visible",
    "claim_triaxis_follows_density",
    "claim_triaxis_low_d3_d6",
]
