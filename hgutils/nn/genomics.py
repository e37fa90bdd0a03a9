r"""Genomic sequence CNNs in Euclidean, HCNN and ILNN flavours (ILNN, arXiv:2602.23981 §5, genomics).

The architecture of the ILNN reference code's genomic CNN (one definition, the flavour swaps the
blocks through :class:`hgutils.nn.ops.Ops`):

* input one-hot ACGTN ``[B, 5, L]`` (:func:`hgutils.data.one_hot_dna`), lifted to the hyperboloid
  in the Lorentz flavours;
* ``n_blocks`` residual blocks (3): conv(k 9, same padding) → bn → ReLU → dropout → conv → bn, plus the
  block's input for every block but the first, then ReLU; ``channels`` (32) throughout, no pooling;
* flatten all ``L`` positions (Lorentz: direct concatenation of the space parts, time recomputed) →
  FC of ``fc_dim`` (528) units → ReLU → dropout → head (``nn.Linear`` / Lorentz MLR).

The FC layer sees every position, so the model is built for one sequence length ``length``.
Dropout ``dropout`` (0.05, the ILNN TEB config) sits at the same two places in every flavour.
"""

from __future__ import annotations

import torch
from torch import nn

from hgutils.nn.ops import FLAVOURS, LorentzOptions, Ops

__all__ = ["GenomicCNN", "GENOMIC_FLAVOURS", "GenomicBlock"]

GENOMIC_FLAVOURS: tuple[str, ...] = FLAVOURS


class GenomicBlock(nn.Module):
    """conv-bn-act-dropout-conv-bn (+ input when ``residual``), then act; sequences channel-first
    ``[B, C, L]`` (Euclidean) or channel-last Lorentz ``[B, L, C+1]``."""

    def __init__(self, ops: Ops, cin: int, cout: int, kernel_size: int, dropout: float, residual: bool) -> None:
        super().__init__()
        pad = kernel_size // 2
        self.ops, self.residual = ops, residual
        self.body = nn.Sequential(
            ops.conv(cin, cout, kernel_size, 1, pad, dims=1),
            ops.bn(cout, dims=1),
            ops.act(),
            ops.dropout(dropout),
            ops.conv(cout, cout, kernel_size, 1, pad, dims=1),
            ops.bn(cout, dims=1),
        )
        self.act = ops.act()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return self.act(self.ops.add(y, x) if self.residual else y)


class GenomicCNN(nn.Module):
    """One-hot DNA classifier for sequences of ``length``; ``flavour`` in ``GENOMIC_FLAVOURS``;
    input ``[B, in_channels, length]``. ``options`` / ``bn``: the Lorentz choices
    (:class:`hgutils.nn.ops.LorentzOptions`; ``bn`` picks the batch norm, e.g. ``"gyrobn"``)."""

    def __init__(
        self,
        flavour: str,
        num_classes: int,
        length: int,
        in_channels: int = 5,
        channels: int = 32,
        kernel_size: int = 9,
        n_blocks: int = 3,
        fc_dim: int = 528,
        dropout: float = 0.05,
        c: float = 1.0,
        options: LorentzOptions | None = None,
        bn: str | None = None,
    ) -> None:
        super().__init__()
        if flavour not in GENOMIC_FLAVOURS:
            raise ValueError(f"flavour must be one of {GENOMIC_FLAVOURS}; got {flavour!r}")
        if length < 1 or n_blocks < 1 or kernel_size % 2 != 1:
            raise ValueError(
                f"need length >= 1, n_blocks >= 1 and an odd kernel_size; got {length}, {n_blocks}, {kernel_size}"
            )
        ops = Ops(flavour, c, options, bn)
        self.flavour, self.c, self.in_channels, self.length = flavour, c, in_channels, length
        self.options = ops.options
        self.lift = ops.lift(dims=3)
        self.blocks = nn.Sequential(
            *(
                GenomicBlock(ops, in_channels if i == 0 else channels, channels, kernel_size, dropout, i > 0)
                for i in range(n_blocks)
            )
        )
        self.fc = nn.Sequential(ops.flatten(), ops.fc(length * channels, fc_dim), ops.act(), ops.dropout(dropout))
        self.head = ops.head(fc_dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[1] != self.in_channels or x.shape[2] != self.length:
            raise ValueError(
                f"GenomicCNN expects one-hot sequences [B, {self.in_channels}, {self.length}] (channel-first, "
                f"length {self.length}); got {tuple(x.shape)}"
            )
        return self.head(self.fc(self.blocks(self.lift(x))))
