r"""The building blocks of notebook 04's models in three flavours, and the options of the Lorentz ones.

A model (:class:`hgutils.nn.resnets.ResNet`, :class:`hgutils.nn.genomics.GenomicCNN`) is written once
against :class:`Ops`; a flavour only swaps the blocks:

============  =============================  ====================  ==========================  ==============
flavour       convolution                    batch norm            residual / pool / flatten   head
============  =============================  ====================  ==========================  ==============
euclidean     ``nn.Conv2d`` / ``nn.Conv1d``  ``BatchNorm2d/1d``    ``x + y`` / mean / reshape  ``nn.Linear``
hcnn          ``LorentzConv2dHCNN`` (1d)     ``LorentzBN``         space add / centroid /      ``LorentzMLR``
                                                                   direct concatenation
ilnn          ``LorentzConv2d`` (1d)         ``GyroLBN``           as hcnn                     ``LorentzMLR``
============  =============================  ====================  ==========================  ==============

HCNN = Bdeir, Schwethelm & Landwehr 2024 (arXiv:2303.15919); ILNN = Shi et al. 2026 (arXiv:2602.23981).
Every choice the ILNN paper leaves open is a field of :class:`LorentzOptions`, defaulting to the
authors' released code (github.com/Longchentong/ILNN) where it is explicit there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.nn.lorentz import (
    DISPERSIONS,
    PLFC,
    SCALE_DIRECTIONS,
    GyroLBN,
    LorentzActivation,
    LorentzConv1d,
    LorentzConv2d,
    LorentzDropout,
    LorentzGlobalAvgPool,
    LorentzMLR,
    lorentz_residual,
    space_to_lorentz,
    to_lorentz,
)
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN, LorentzConv1dHCNN, LorentzConv2dHCNN, LorentzFC

__all__ = ["FLAVOURS", "BATCH_NORMS", "LorentzOptions", "Ops"]

FLAVOURS: tuple[str, ...] = ("euclidean", "hcnn", "ilnn")
#: Batch norms a Lorentz flavour can use: "default" = the flavour's own (hcnn: LBN, ilnn: GyroLBN).
BATCH_NORMS: tuple[str, ...] = ("default", "gyrolbn", "lbn", "gyrobn")


@dataclass(frozen=True)
class LorentzOptions:
    """Choices of the Lorentz flavours (the Euclidean flavour ignores them).

    * ``scale_direction``: log-radius scale in the ILNN convolution (:func:`hgutils.nn.lorentz.concat_factor`):
      ``"multiply"`` (reference code), ``"divide"``, ``"none"``.
    * ``plfc_init_std``: std of the PLFC normals of ILNN convolutions, which a batch norm always
      follows (0.02, reference code; ``None`` = fan-in). PLFC layers without a batch norm after them
      (the genomic CNN's FC) use ``plfc_init_std_no_bn`` (``None`` = fan-in).
    * ``bn``: batch norm of the Lorentz flavours (:data:`BATCH_NORMS`); ``bn_dispersion`` and
      ``bn_scale`` configure GyroLBN / GyroBN (:class:`hgutils.nn.lorentz.GyroLBN`: ``"frechet"`` is the
      paper's normalisation, ``"reference"`` with scale 0.5 the reference code's);
      ``gyrobn_iters``: Karcher-mean iterations of GyroBN.
    * ``residual``: ``"space"`` (add space parts, recompute time: reference code) or ``"gyro"``
      (gyro-addition, the paper's text).
    * ``lift``: how inputs enter the hyperboloid (:func:`hgutils.nn.lorentz.to_lorentz`): ``"project"``
      (space part = the input, as the reference code does) or ``"expmap0"``.
    * ``conv_bias``: gyro-bias (ILNN) / bias (HCNN) in the convolutions (reference code: on).
    """

    scale_direction: str = "multiply"
    plfc_init_std: float | None = 0.02
    plfc_init_std_no_bn: float | None = None
    bn: str = "default"
    bn_dispersion: str = "frechet"
    bn_scale: float = 0.5
    gyrobn_iters: int = 10
    residual: str = "space"
    lift: str = "project"
    conv_bias: bool = True

    def __post_init__(self) -> None:
        choices = {
            "scale_direction": SCALE_DIRECTIONS,
            "bn": BATCH_NORMS,
            "bn_dispersion": DISPERSIONS,
            "residual": ("space", "gyro"),
            "lift": ("project", "expmap0"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"LorentzOptions.{name} must be one of {allowed}; got {getattr(self, name)!r}")

    def replace(self, **changes: object) -> LorentzOptions:
        """A copy with ``changes`` applied (validated)."""
        return dataclasses.replace(self, **changes)


class _Lift(nn.Module):
    """Channel-first input ``[B, C, *spatial]`` → channel-last Lorentz points ``[B, *spatial, C+1]``."""

    def __init__(self, c: float, method: str, dims: int) -> None:
        super().__init__()
        self.c, self.method, self.dims = c, method, dims

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != self.dims:
            layout = "[B, C, H, W]" if self.dims == 4 else "[B, C, L]"
            raise ValueError(f"inputs must be {layout} (channel-first); got {tuple(x.shape)}")
        return to_lorentz(x, self.c, channel_dim=1, method=self.method)


class _GlobalMean(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(2).mean(-1)


class _Flatten(nn.Module):
    """Euclidean ``[B, C, L] → [B, C L]``; Lorentz ``[B, L, C+1] → [B, L C + 1]`` by direct
    concatenation of the space parts, time recomputed (HCNN / ILNN reference code)."""

    def __init__(self, lorentz: bool, c: float) -> None:
        super().__init__()
        self.lorentz, self.c = lorentz, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.lorentz:
            return x.flatten(1)
        return space_to_lorentz(x[..., 1:].flatten(1), self.c)


class Ops:
    """The per-flavour building blocks the models are written against.

    ``bn`` overrides ``options.bn`` (the batch norm of the Lorentz flavours); ``options`` holds every
    other Lorentz choice (:class:`LorentzOptions`).
    """

    def __init__(
        self, flavour: str, c: float = 1.0, options: LorentzOptions | None = None, bn: str | None = None
    ) -> None:
        if flavour not in FLAVOURS:
            raise ValueError(f"flavour must be one of {FLAVOURS}; got {flavour!r}")
        options = options or LorentzOptions()
        if bn is not None:
            options = options.replace(bn=bn)
        self.flavour, self.c, self.options = flavour, c, options

    @property
    def lorentz(self) -> bool:
        return self.flavour != "euclidean"

    def lift(self, dims: int = 4) -> nn.Module:
        """Input → the flavour's feature layout (identity for Euclidean)."""
        return _Lift(self.c, self.options.lift, dims) if self.lorentz else nn.Identity()

    def conv(self, cin: int, cout: int, k: int, stride: int = 1, padding: int = 0, dims: int = 2) -> nn.Module:
        """``dims``-d convolution (2: images, 1: sequences); ``cin``/``cout`` count space channels."""
        o, bias = self.options, self.options.conv_bias
        if self.flavour == "euclidean":
            cls = nn.Conv2d if dims == 2 else nn.Conv1d
            return cls(cin, cout, k, stride, padding, bias=False)
        if self.flavour == "hcnn":
            cls = LorentzConv2dHCNN if dims == 2 else LorentzConv1dHCNN
            return cls(cin, cout, k, stride, padding, c=self.c, bias=bias)
        cls = LorentzConv2d if dims == 2 else LorentzConv1d
        return cls(cin, cout, k, stride, padding, self.c, bias, o.plfc_init_std, o.scale_direction)

    def bn(self, ch: int, dims: int = 2) -> nn.Module:
        """Batch norm after a convolution."""
        if self.flavour == "euclidean":
            return nn.BatchNorm2d(ch) if dims == 2 else nn.BatchNorm1d(ch)
        o = self.options
        kind = o.bn if o.bn != "default" else ("lbn" if self.flavour == "hcnn" else "gyrolbn")
        if kind == "lbn":
            return LorentzBN(ch, c=self.c)
        if kind == "gyrobn":
            return GyroBN(ch, c=self.c, init_scale=o.bn_scale, iters=o.gyrobn_iters)
        return GyroLBN(ch, c=self.c, dispersion=o.bn_dispersion, init_scale=o.bn_scale)

    def act(self) -> nn.Module:
        return LorentzActivation(F.relu, self.c) if self.lorentz else nn.ReLU()

    def dropout(self, p: float) -> nn.Module:
        if p == 0:
            return nn.Identity()
        return LorentzDropout(p, self.c) if self.lorentz else nn.Dropout(p)

    def add(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return lorentz_residual(x, y, self.c, self.options.residual) if self.lorentz else x + y

    def pool(self) -> nn.Module:
        """Global average pool: mean (Euclidean) or centroid (Lorentz) over all positions."""
        return LorentzGlobalAvgPool(self.c) if self.lorentz else _GlobalMean()

    def flatten(self) -> nn.Module:
        return _Flatten(self.lorentz, self.c)

    def fc(self, cin: int, cout: int) -> nn.Module:
        """Fully connected layer not followed by a batch norm."""
        if self.flavour == "euclidean":
            return nn.Linear(cin, cout)
        if self.flavour == "hcnn":
            return LorentzFC(cin, cout, self.c)
        return PLFC(cin, cout, self.c, init_std=self.options.plfc_init_std_no_bn)

    def head(self, ch: int, classes: int) -> nn.Module:
        return LorentzMLR(ch, classes, self.c) if self.lorentz else nn.Linear(ch, classes)
