r"""Genomic sequence CNNs (ILNN genomics setting, arXiv:2602.23981 §5) in Euclidean, HCNN and ILNN flavours.


Input: one-hot ACGTN ``[B, 5, L]`` (:func:`hgutils.data.one_hot_dna`). Trunk: ``n_blocks`` conv
blocks (``channels`` = 32, kernel 9, same padding) each conv → bn → ReLU → 2x average pooling
(centroid of windows in Lorentz flavours), then a global average (centroid), an FC layer of
``hidden`` units with ReLU and dropout (0.05), and the classification head (``nn.Linear`` or
``LorentzMLR``). The paper flattens into an FC of 528 units; the global average used here makes
the model length-agnostic (TEB/GUE sequences are padded to different maxima per task). ILNN layers
use the model defaults of :mod:`hgutils.nn.resnets` (fan-in PLFC init, GyroLBN scale ``MODEL_BN_SCALE``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.nn.lorentz import (
    PLFC,
    GyroLBN,
    LorentzActivation,
    LorentzAvgPool1d,
    LorentzConv1d,
    LorentzDropout,
    LorentzGlobalAvgPool,
    LorentzMLR,
    to_lorentz,
)
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN, LorentzConv1dHCNN, LorentzFC
from hgutils.nn.resnets import MODEL_BN_SCALE

__all__ = ["GenomicCNN", "GENOMIC_FLAVOURS"]

GENOMIC_FLAVOURS: tuple[str, ...] = ("euclidean", "hcnn", "ilnn")


class GenomicCNN(nn.Module):
    """One-hot DNA classifier; ``flavour`` in ``GENOMIC_FLAVOURS``; input ``[B, in_channels, L]``.

    ``bn`` picks the ILNN flavour's batch norm: ``"gyrolbn"`` (closed form, default), ``"gyrobn"``
    (iterative Karcher mean) or ``"lbn"`` (HCNN tangent-space) -- the paper's BN comparison.
    """

    def __init__(
        self,
        flavour: str,
        num_classes: int,
        in_channels: int = 5,
        channels: int = 32,
        kernel_size: int = 9,
        n_blocks: int = 3,
        hidden: int = 64,
        dropout: float = 0.05,
        c: float = 1.0,
        bn: str = "gyrolbn",
    ) -> None:
        super().__init__()
        if flavour not in GENOMIC_FLAVOURS:
            raise ValueError(f"flavour must be one of {GENOMIC_FLAVOURS}; got {flavour!r}")
        if bn not in ("gyrolbn", "gyrobn", "lbn"):
            raise ValueError(f"bn must be 'gyrolbn', 'gyrobn' or 'lbn'; got {bn!r}")
        self.flavour, self.c, self.in_channels = flavour, c, in_channels
        pad = kernel_size // 2
        blocks: list[nn.Module] = []
        cin = in_channels
        for _ in range(n_blocks):
            if flavour == "euclidean":
                blocks += [
                    nn.Conv1d(cin, channels, kernel_size, padding=pad),
                    nn.BatchNorm1d(channels),
                    nn.ReLU(),
                    nn.AvgPool1d(2),
                ]
            elif flavour == "hcnn":
                blocks += [
                    LorentzConv1dHCNN(cin, channels, kernel_size, padding=pad, c=c),
                    LorentzBN(channels, c=c),
                    LorentzActivation(F.relu, c),
                    LorentzAvgPool1d(2, c),
                ]
            else:
                bn_mod = (
                    GyroLBN(channels, c=c, init_scale=MODEL_BN_SCALE)
                    if bn == "gyrolbn"
                    else (
                        GyroBN(channels, c=c, init_scale=MODEL_BN_SCALE) if bn == "gyrobn" else LorentzBN(channels, c=c)
                    )
                )
                blocks += [
                    LorentzConv1d(cin, channels, kernel_size, padding=pad, c=c, init_std=None),
                    bn_mod,
                    LorentzActivation(F.relu, c),
                    LorentzAvgPool1d(2, c),
                ]
            cin = channels
        self.blocks = nn.Sequential(*blocks)
        if flavour == "euclidean":
            self.fc = nn.Sequential(nn.Linear(channels, hidden), nn.ReLU(), nn.Dropout(dropout))
            self.head = nn.Linear(hidden, num_classes)
        else:
            fc = PLFC(channels, hidden, c, init_std=None) if flavour == "ilnn" else LorentzFC(channels, hidden, c)
            self.fc = nn.Sequential(
                LorentzGlobalAvgPool(c), fc, LorentzActivation(F.relu, c), LorentzDropout(dropout, c)
            )
            self.head = LorentzMLR(hidden, num_classes, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[1] != self.in_channels:
            raise ValueError(
                f"GenomicCNN expects one-hot sequences [B, {self.in_channels}, L] (channel-first); got {tuple(x.shape)}"
            )
        if self.flavour == "euclidean":
            h = self.blocks(x).mean(-1)
        else:
            h = self.blocks(to_lorentz(x, self.c, channel_dim=1))
        return self.head(self.fc(h))
