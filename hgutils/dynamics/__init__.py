r"""Recurrent dynamics: a sequential angle-memory task, vanilla RNNs and structured state-space models
stacked N at a time, and their batched training through the one training loop.

- :mod:`~hgutils.dynamics.task` -- :class:`AngleMemoryTask` (angles presented in sequence, held over a
  delay, reported), angle grids and circular errors;
- :mod:`~hgutils.dynamics.models` -- the vanilla RNN and the LRU / S4D-style diagonal linear recurrence
  with a nonlinear readout (its parallel scan and the direct loop it is tested against);
- :mod:`~hgutils.dynamics.training` -- :class:`SequenceTask` for :func:`hgutils.loop.train`,
  :func:`train_stack` and the per-network learnability check on held-out angles.

The geometry of their hidden states is compared with :mod:`hgutils.similarity` (MSA on the input-time
manifold: :mod:`hgutils.similarity.input_time`; DSA: :mod:`hgutils.similarity.dynamical`).
"""

from hgutils.dynamics.models import (
    ARCHITECTURES,
    architecture,
    init_params,
    init_rnn,
    init_ssm,
    outputs,
    representation,
    rnn_states,
    ssm_eigenvalues,
    ssm_scan,
    ssm_scan_loop,
    ssm_state,
    subset,
)
from hgutils.dynamics.task import AngleMemoryTask, angle_grid, circular_error, sample_angles, wrap_angle
from hgutils.dynamics.training import SequenceTask, TrainedStack, learnability, report_loss, train_stack

__all__ = [
    "ARCHITECTURES",
    "AngleMemoryTask",
    "SequenceTask",
    "TrainedStack",
    "angle_grid",
    "architecture",
    "circular_error",
    "init_params",
    "init_rnn",
    "init_ssm",
    "learnability",
    "outputs",
    "report_loss",
    "representation",
    "rnn_states",
    "sample_angles",
    "ssm_eigenvalues",
    "ssm_scan",
    "ssm_scan_loop",
    "ssm_state",
    "subset",
    "train_stack",
    "wrap_angle",
]
