r"""The Lorentz layers that act on the space part and recompute time: activations, dropout, residual
connections, and pooling by the Lorentzian centroid (ILNN, arXiv:2602.23981, §4; the reference code's
choices)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz.points import _sk, space_to_lorentz


class LorentzActivation(nn.Module):
    r"""Apply ``act`` to the space part and recompute time: :math:`(\sqrt{k + \|f(x_s)\|^2}, f(x_s))`."""

    def __init__(self, act: Callable[[torch.Tensor], torch.Tensor] = F.relu, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.act, self.c = act, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return space_to_lorentz(self.act(x[..., 1:]), self.c)


class LorentzDropout(nn.Module):
    r"""Dropout on the space part, time recomputed (identity in eval mode)."""

    def __init__(self, p: float = 0.5, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        if not 0 <= p < 1:
            raise ValueError(f"dropout p must be in [0, 1); got {p}")
        self.p, self.c = p, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        return space_to_lorentz(F.dropout(x[..., 1:], self.p, True), self.c)


def lorentz_residual(x: torch.Tensor, y: torch.Tensor, c: float = 1.0, mode: str = "space") -> torch.Tensor:
    r"""Residual connection on the hyperboloid.

    ``mode="space"`` (reference code): :math:`(\sqrt{k + \|x_s + y_s\|^2}, x_s + y_s)`;
    ``mode="gyro"``: :math:`x \oplus y`.
    """
    if x.shape != y.shape:
        raise ValueError(f"residual operands must have equal shapes; got {tuple(x.shape)} and {tuple(y.shape)}")
    if mode == "space":
        return space_to_lorentz(x[..., 1:] + y[..., 1:], c)
    if mode == "gyro":
        return L.gyroadd(x, y, c)
    raise ValueError(f"mode must be 'space' or 'gyro'; got {mode!r}")


class LorentzResidual(nn.Module):
    """Module form of :func:`lorentz_residual`: ``forward(x, y)``."""

    def __init__(self, c: float = 1.0, mode: str = "space") -> None:
        super().__init__()
        _sk(c)
        if mode not in ("space", "gyro"):
            raise ValueError(f"mode must be 'space' or 'gyro'; got {mode!r}")
        self.c, self.mode = c, mode

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return lorentz_residual(x, y, self.c, self.mode)


class LorentzGlobalAvgPool(nn.Module):
    r"""Centroid over all positions: ``[B, *spatial, n+1] → [B, n+1]``."""

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.c = c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() < 3:
            raise ValueError(f"LorentzGlobalAvgPool expects [B, *spatial, n+1]; got {tuple(x.shape)}")
        return L.centroid(x.reshape(x.shape[0], -1, x.shape[-1]), self.c)


class LorentzAvgPool1d(nn.Module):
    r"""Centroid over non-overlapping windows of ``kernel_size`` along the length of ``[B, L, n+1]``."""

    def __init__(self, kernel_size: int, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.k, self.c = kernel_size, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        m = n // self.k
        if m < 1:
            raise ValueError(f"sequence length {n} shorter than pooling window {self.k}")
        return L.centroid(x[:, : m * self.k].reshape(b, m, self.k, d), self.c)
