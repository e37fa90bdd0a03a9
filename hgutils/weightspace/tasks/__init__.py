"""Training meta-networks (GTH-GMN and every baseline) on a zoo, through the one loop :func:`hgutils.loop.train`.

:func:`fit` trains a :class:`hgutils.weightspace.metanets.base.MetaNet` on the networks ``train_idx``
of a prepared zoo (``data = model.prepare(zoo)``), as up to two tasks of the loop:

* :class:`MetaNetTask` -- the model's task objective: shuffled mini-batches (a seeded generator:
  same seed, same run on the same machine), the named loss terms weighted by ``model.loss_weights``,
  Adam on the Euclidean parameters and -- from epoch ``round(model.stage1_frac * epochs)`` on --
  geoopt ``RiemannianAdam(amsgrad=True)`` on the model's ``ManifoldParameter`` s; the loop's plateau
  rule on the validation score (accuracy for classification, MSE for regression, Kendall tau for
  accuracy prediction, the InfoNCE loss for the encoder mode), best weights restored;
* :class:`ReconstructionTask` -- GTH-GMN's self-supervised stage 1 (``protocol`` ``"two_stage"``
  or ``"finetune"``), trained to its own plateau on the validation networks' reconstruction loss;
  then for ``"two_stage"`` the stage-2 refined embeddings are frozen and :class:`EmbeddingHeadTask`
  trains only the head on them.

Every stage records its learnability check (``FitResult.gates``) and its loop record
(``FitResult.stages``: why it stopped, its best epoch, its last window's improvement), a budget in
optimiser steps (``TrainConfig.steps``) or epochs, a progress bar and, for :class:`MetaNetTask`, a
checkpoint after every epoch from which an interrupted run resumes exactly.

The modules, by job: :mod:`.config` (:class:`TrainConfig`), :mod:`.trainers` (the three tasks),
:mod:`.metrics` (metrics, outputs and embeddings, the linear probe) and :mod:`.fit_stages` (:func:`fit`,
:class:`FitResult`).
"""

from hgutils.weightspace.tasks.config import OPTIMIZERS, TrainConfig
from hgutils.weightspace.tasks.fit_stages import FitResult, fit, train_on_zoo
from hgutils.weightspace.tasks.metrics import (
    PROBE_COMPONENTS,
    compute_metrics,
    embeddings,
    frozen_probe_components,
    kendall_tau,
    linear_probe,
    predict_outputs,
    probe_features,
    probe_metrics,
)
from hgutils.weightspace.tasks.trainers import (
    MAX_SKIPPED_IN_A_ROW,
    EmbeddingHeadTask,
    MetaNetTask,
    ReconstructionTask,
)

__all__ = [
    "MAX_SKIPPED_IN_A_ROW",
    "OPTIMIZERS",
    "PROBE_COMPONENTS",
    "EmbeddingHeadTask",
    "FitResult",
    "MetaNetTask",
    "ReconstructionTask",
    "TrainConfig",
    "compute_metrics",
    "embeddings",
    "fit",
    "frozen_probe_components",
    "kendall_tau",
    "linear_probe",
    "predict_outputs",
    "probe_features",
    "probe_metrics",
    "train_on_zoo",
]
