"""Output layers of the reference baselines, as task heads of a :class:`~.base.MetaNet`.

The reference models (Neural Graphs' GMN, DWSNets, NFN's StatNet) end in one linear layer to the
task output. A :class:`~.base.MetaNet` splits a model into ``embed`` (everything before that layer)
and ``head`` (that layer), so the embedding the figures and probes read is the model's last hidden
representation:

=============================  ===========================================  ===========================
task                           ``embed(batch)``                             ``head``
=============================  ===========================================  ===========================
classification / regression /  the last hidden representation ``h``         :class:`LinearHead`
accuracy                                                                    ``Linear(h -> K)``
``"infonce"``                  the encoder output ``Linear(h -> K)(h)``     :class:`ProjectionHead`
=============================  ===========================================  ===========================

In the self-supervised mode the encoder's output is what the linear probe reads and the InfoNCE
loss sees a projection of it: the DWSNets self-supervised trainer (``experiments/ssl/trainer.py``,
Navon et al. 2023, arXiv:2301.12780) puts ``Linear(K, K) -> ReLU -> Linear(K, K)`` on the 16-d
encoder output for every encoder it trains (DWSNet and the MLP baselines alike).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.heads import check_task


class LinearHead(nn.Module):
    """``Linear(in_dim, K)`` with the task's output convention (``K = 1`` squeezed for ``"accuracy"``)."""

    def __init__(self, task: str, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.task = check_task(task)
        if task == "infonce":
            raise ValueError("the InfoNCE mode uses ProjectionHead, not LinearHead")
        k = 1 if task == "accuracy" else out_dim
        if k < 1 or in_dim < 1:
            raise ValueError(f"LinearHead needs in_dim >= 1 and out_dim >= 1; got {in_dim}, {out_dim}")
        self.net = nn.Linear(in_dim, k)

    def features(self, h: Tensor) -> Tensor:
        """The output before the task's transform (``[B, K]``)."""
        return self.net(h)

    def forward(self, h: Tensor) -> Tensor:
        out = self.net(h)
        return out.squeeze(-1) if self.task == "accuracy" else out


class ProjectionHead(nn.Module):
    """The SimCLR projection of the DWSNets SSL trainer: ``Linear(K, K) -> ReLU -> Linear(K, K)``, unit-normalised."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        if dim < 1:
            raise ValueError(f"projection dim must be >= 1; got {dim}")
        self.task = "infonce"
        self.projection = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def features(self, z: Tensor) -> Tensor:
        """What the linear probe reads: the encoder output itself (the projection serves the loss only)."""
        return z

    def forward(self, z: Tensor) -> Tensor:
        return F.normalize(self.projection(z), dim=-1)


def reference_output(task: str, in_dim: int, out_dim: int) -> tuple[nn.Module, nn.Module]:
    """``(encoder_out, head)`` for a reference model whose last hidden representation is ``in_dim`` wide.

    Supervised tasks: ``(Identity, LinearHead(in_dim -> out_dim))``; ``"infonce"``:
    ``(Linear(in_dim, out_dim), ProjectionHead(out_dim))`` (module docstring).
    """
    check_task(task)
    if task == "infonce":
        if out_dim < 1:
            raise ValueError(f"out_dim (the embedding width) must be >= 1; got {out_dim}")
        return nn.Linear(in_dim, out_dim), ProjectionHead(out_dim)
    return nn.Identity(), LinearHead(task, in_dim, out_dim)
