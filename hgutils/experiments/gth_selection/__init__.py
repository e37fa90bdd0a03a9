r"""GTH-GMN judged at its best: protocol x size x learning rate (x head) chosen on validation only.

A declared grid (:class:`SelectionGrid`, :mod:`.grid`) -- training protocol (``two_stage``, ``finetune``,
``joint``: :data:`~hgutils.weightspace.metanets.gth_gmn.PROTOCOLS`) x model size
(:data:`~hgutils.weightspace.metanets.gth_gmn.config.SIZES`: ``"default"`` = today's
:class:`~hgutils.weightspace.metanets.gth_gmn.GTHGMNConfig`, ``"large"`` = dim 32, 2 attention layers,
4 heads x 8, GRU 32) x the learning-rate grid the baselines search, and for ``two_stage`` cells the head read
from the frozen embedding (``heads``, :data:`HEADS`: ``"sized"``, ``"mlp"``) -- is trained on the first seed's
split (:mod:`.training`), and the cell with the best **validation** score is chosen (:func:`select_gth`,
:mod:`.select`):

.. math:: (p^*, s^*, \eta^*, h^*) = \arg\max_{(p, s, \eta, h) \in G} \mathrm{score}_{\mathrm{val}}(p, s, \eta, h)

over the grid :math:`G`, with ties going to the earliest cell in the declared order (protocols as listed, then
sizes -- the smaller first --, then learning rates, then heads), over the cells that passed the learnability gate (an
untrained cell's score is noise around chance); when none did, the declared first cell is kept (:func:`choose`).
The score is the task's validation metric: accuracy (classification), Kendall :math:`\tau` (accuracy
prediction), :math:`-\mathrm{MSE}` (regression), and for the InfoNCE encoders :math:`-\mathrm{MSE}` of the
linear probe fitted on the training networks and scored on the validation ones. The test labels never enter:
before anything runs they are replaced by one training label, and no cell is evaluated on the test networks.

``two_stage`` cells train the paper's reading -- reconstruction, Riemannian refinement, then a head on the frozen
embedding -- with each declared head: ``"sized"``, a linear head on the leading principal components, as many as
keep ``networks_per_param`` training networks per head parameter and never fewer than
:data:`~hgutils.weightspace.metanets.gth_gmn.config.MIN_HEAD_COMPONENTS`
(:func:`~hgutils.weightspace.metanets.gth_gmn.config.frozen_head_components`), and ``"mlp"``, the unsized MLP head
of every meta-network; the heads of one cell share its stage 1. A grid that declares no heads reads the sized
head only (notebooks 02 and 03: their tables have no head column). ``finetune`` and ``joint`` cells train the
task objective through the encoder, the reconstruction terms as auxiliary losses. Each cell may run on a shorter
budget than the final runs (``SelectionGrid.steps``), or (``None``) on theirs, each to its own plateau.

The table is cached like a zoo (:func:`hgutils.repro.cached`), keyed by the grid, the data (zoo content,
split, training and validation targets), the settings and the source of the code that trains GTH-GMN, so
a rerun reads it instead of training again.
"""

from __future__ import annotations

from hgutils.experiments.gth_selection import training
from hgutils.experiments.gth_selection.grid import DEFAULT_HEADS, END_TO_END, HEADS, SelectionGrid, grid_of
from hgutils.experiments.gth_selection.select import (
    Selection,
    choose,
    select_and_compare,
    select_for,
    select_gth,
)
from hgutils.experiments.gth_selection.training import METRICS, metric_name, validation_score

__all__ = [
    "DEFAULT_HEADS",
    "END_TO_END",
    "HEADS",
    "METRICS",
    "Selection",
    "SelectionGrid",
    "choose",
    "grid_of",
    "metric_name",
    "select_and_compare",
    "select_for",
    "select_gth",
    "training",
    "validation_score",
]
