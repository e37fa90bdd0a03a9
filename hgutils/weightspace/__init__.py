"""Network zoos with training trajectories, parameter graphs and meta-networks.

- :mod:`hgutils.weightspace.stacked_mlp` -- N same-architecture MLPs stored as stacked tensors
  (``W_l [N, out, in]``, ``b_l [N, out]``): initialisation and forward pass;
- :mod:`hgutils.weightspace.batched_training` -- training them all at once, each network with its own
  optimiser state (the arithmetic: :mod:`hgutils.weightspace.stacked_optimizers`).
- :mod:`hgutils.weightspace.zoo` -- :class:`Zoo` / :class:`MLPSpec` containers and the three zoo
  generators (:func:`inr_image_zoo`, :func:`sine_zoo`, :func:`classifier_zoo`), cached and resumable.
- :mod:`hgutils.weightspace.graphs` -- :class:`TemporalParamGraph` (GTH-GMN) and :class:`GMNGraph`.
"""

from hgutils.weightspace.batched_training import TrainResult, snapshot_schedule, train_stacked
from hgutils.weightspace.graphs import GMNGraph, TemporalParamGraph
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward
from hgutils.weightspace.zoo import (
    ClassifierZooConfig,
    CNNSpec,
    INRZooConfig,
    MLPSpec,
    SineZooConfig,
    Zoo,
    classifier_zoo,
    inr_image_zoo,
    sine_zoo,
)

__all__ = [
    "CNNSpec",
    "ClassifierZooConfig",
    "GMNGraph",
    "INRZooConfig",
    "MLPSpec",
    "SineZooConfig",
    "TemporalParamGraph",
    "TrainResult",
    "Zoo",
    "classifier_zoo",
    "init_mlp",
    "inr_image_zoo",
    "mlp_forward",
    "sine_zoo",
    "snapshot_schedule",
    "train_stacked",
]
