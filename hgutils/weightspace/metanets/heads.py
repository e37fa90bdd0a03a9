"""Task heads and task losses shared by every meta-network.

A meta-network maps a batch of weight trajectories to an embedding ``[B, D]``; a :class:`TaskHead`
turns it into the task output and :func:`task_loss` scores it:

========================  =======================  ==============================================
task                      head output              loss
========================  =======================  ==============================================
``"classification"``      logits ``[B, K]``        cross-entropy on integer labels ``[B]``
``"regression"``          values ``[B, K]``        mean squared error on targets ``[B, K]``
``"accuracy"``            logits ``[B]``           BCE-with-logits on accuracies in [0, 1] (NFN
                                                   protocol: sigmoid + BCE)
``"infonce"``             unit vectors ``[B, K]``  InfoNCE / SimCLR (NT-Xent) between two views
========================  =======================  ==============================================
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

TASKS: tuple[str, ...] = ("classification", "regression", "accuracy", "infonce")


def check_task(task: str) -> str:
    """Validate a task name (``ValueError`` listing the valid ones)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {task!r}")
    return task


class TaskHead(nn.Module):
    """Two-layer MLP head ``D -> hidden -> out_dim`` (``out_dim`` ignored for ``"accuracy"``: 1 logit).

    For ``"infonce"`` (DWSNets' self-supervised protocol, ``experiments/ssl/trainer.py``) the two layers
    give the encoder output (``out_dim``, 16 in DWSNets), which :meth:`features` returns for the linear
    probe; the contrastive loss reads it through a projection head ``out_dim -> out_dim -> ReLU -> out_dim``,
    normalised.
    """

    def __init__(self, task: str, emb_dim: int, out_dim: int, hidden: int = 64, dropout: float = 0.0) -> None:
        super().__init__()
        self.task = check_task(task)
        k = 1 if task == "accuracy" else out_dim
        if k < 1:
            raise ValueError(f"out_dim must be >= 1; got {out_dim}")
        self.net = nn.Sequential(nn.Linear(emb_dim, hidden), nn.SiLU(), nn.Dropout(dropout), nn.Linear(hidden, k))
        self.projection = nn.Sequential(nn.Linear(k, k), nn.ReLU(), nn.Linear(k, k)) if task == "infonce" else None

    def features(self, emb: Tensor) -> Tensor:
        """The head's output before the task's transform: the encoder output for ``"infonce"``."""
        return self.net(emb)

    def forward(self, emb: Tensor) -> Tensor:
        out = self.net(emb)
        if self.task == "accuracy":
            return out.squeeze(-1)
        if self.task == "infonce":
            return F.normalize(self.projection(out), dim=-1)
        return out


def info_nce(z1: Tensor, z2: Tensor, temperature: float = 0.1) -> Tensor:
    r"""Symmetric NT-Xent loss between two views ``z1, z2 [B, K]`` (unit vectors).

    :math:`\mathcal L = -\frac{1}{2B}\sum_i \log\frac{e^{s_{ii'}/\tau}}{\sum_{j\neq i} e^{s_{ij}/\tau}}`
    over the ``2B`` views, positives are the two views of the same network.
    """
    if z1.shape != z2.shape or z1.dim() != 2:
        raise ValueError(f"views must both be [B, K]; got {tuple(z1.shape)} and {tuple(z2.shape)}")
    B = z1.shape[0]
    z = torch.cat([z1, z2], 0)
    sim = z @ z.T / temperature
    sim = sim.masked_fill(torch.eye(2 * B, dtype=torch.bool, device=z.device), float("-inf"))
    target = torch.cat([torch.arange(B, 2 * B), torch.arange(0, B)]).to(z.device)
    return F.cross_entropy(sim, target)


def task_loss(task: str, out: Tensor, target: Tensor) -> Tensor:
    """Loss of a head output against the target (see the module table)."""
    check_task(task)
    if task == "classification":
        if target.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"classification targets must be integer labels; got dtype {target.dtype}")
        return F.cross_entropy(out, target.long())
    if task == "regression":
        return F.mse_loss(out, target.to(out.dtype).view_as(out))
    if task == "accuracy":
        return F.binary_cross_entropy_with_logits(out, target.to(out.dtype).view_as(out))
    raise ValueError("infonce needs two views; use info_nce(z1, z2)")


def predict(task: str, out: Tensor) -> Tensor:
    """Head output -> prediction (class index, value, or accuracy in [0, 1])."""
    check_task(task)
    if task == "classification":
        return out.argmax(-1)
    if task == "accuracy":
        return torch.sigmoid(out)
    return out
