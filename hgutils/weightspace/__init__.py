"""Network zoos with training trajectories, parameter graphs and meta-networks.

- :mod:`hgutils.weightspace.stacked` -- batched init / forward / training of N same-architecture MLPs
  stored as stacked tensors (``W_l [N, out, in]``, ``b_l [N, out]``).
- :mod:`hgutils.weightspace.zoo` -- :class:`Zoo` / :class:`MLPSpec` containers and the three zoo
  generators (:func:`inr_image_zoo`, :func:`sine_zoo`, :func:`classifier_zoo`), cached and resumable.
- :mod:`hgutils.weightspace.graphs` -- :class:`TemporalParamGraph` (GTH-GMN) and :class:`GMNGraph`.
"""

from hgutils.weightspace.graphs import GMNGraph, TemporalParamGraph
from hgutils.weightspace.stacked import TrainResult, init_mlp, mlp_forward, snapshot_schedule, train_stacked
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
