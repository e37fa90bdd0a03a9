"""Network zoos with training trajectories, parameter graphs and meta-networks.

- :mod:`hgutils.weightspace.stacked` -- batched init / forward / training of N same-architecture MLPs
  stored as stacked tensors (``W_l [N, out, in]``, ``b_l [N, out]``).
"""

from hgutils.weightspace.stacked import TrainResult, init_mlp, mlp_forward, snapshot_schedule, train_stacked

__all__ = ["TrainResult", "init_mlp", "mlp_forward", "snapshot_schedule", "train_stacked"]
