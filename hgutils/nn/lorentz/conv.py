r"""Intrinsic Lorentz convolutions: log-radius patch concatenation followed by PLFC, computed with ``conv2d``
on the space part (ILNN, arXiv:2602.23981, Lorentz convolution)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds.numerics import clamp_min_norm
from hgutils.nn.lorentz.concat import concat_factor
from hgutils.nn.lorentz.plfc import PLFC, plfc_from_logits
from hgutils.nn.lorentz.points import _check_features, _sk, asinh


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _conv2d(x: torch.Tensor, w: torch.Tensor, stride: tuple[int, int], padding: tuple[int, int]) -> torch.Tensor:
    """``F.conv2d`` that runs a strided 1x1 convolution as subsampling + stride-1 convolution.

    torch 2.13's CPU backend corrupts the heap in the weight gradient of a 1x1, stride-2 conv2d
    (reproduced in isolation: "double free or corruption" / segfault); the subsampled form is the
    same arithmetic and avoids that kernel.
    """
    if w.shape[-2:] == (1, 1) and padding == (0, 0) and stride != (1, 1):
        return F.conv2d(x[:, :, :: stride[0], :: stride[1]].contiguous(), w)
    return F.conv2d(x, w, stride=stride, padding=padding)


class LorentzConv2d(nn.Module):
    r"""Intrinsic Lorentz convolution ``[B, H, W, in+1] → [B, H', W', out+1]``.

    ILNN (arXiv:2602.23981), Lorentz convolution = log-radius patch concatenation + PLFC. Each
    ``kh x kw`` patch (padding = origin points) is joined by :func:`log_radius_concat` (N = kh kw
    blocks of d = in space dims, ``scale_direction`` as in :func:`concat_factor`; the reference code
    multiplies) and fed to a :class:`PLFC` of ``in*kh*kw → out`` (``init_std`` 0.02 as in the reference
    code, ``None`` = fan-in). Computed with ``conv2d`` on the space part:
    :math:`\langle z, \hat x_s\rangle` is a convolution with kernel :math:`f z` and the patch time
    :math:`\sqrt{k + f^2\|P\|^2}` a box sum of :math:`\|x_s\|^2` -- the same numbers as the explicit
    patch route (tested). The hyperplane logits pass through ``fc.logits`` (a hook point).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        scale_direction: str = "multiply",
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c
        self.kernel_size, self.stride, self.padding = _pair(kernel_size), _pair(stride), _pair(padding)
        kh, kw = self.kernel_size
        self.scale_direction = scale_direction
        self.factor = concat_factor(kh * kw, in_channels, scale_direction)
        self.fc = PLFC(in_channels * kh * kw, out_channels, c, bias, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"LorentzConv2d expects [B, H, W, C+1] (channel-last); got {tuple(x.shape)}")
        _check_features(x, self.in_channels, "LorentzConv2d", "[B, H, W, C+1]")
        sk, kh, kw = _sk(self.c), *self.kernel_size
        xs = x[..., 1:].permute(0, 3, 1, 2).contiguous()  # [B, C, H, W]
        fc, f = self.fc, self.factor
        zw = (fc.z * f).view(self.out_channels, kh, kw, self.in_channels).permute(0, 3, 1, 2).contiguous()
        zx = _conv2d(xs, zw, self.stride, self.padding)  # [B, out, H', W']
        sq = _conv2d((xs * xs).sum(1, keepdim=True), xs.new_ones(1, 1, kh, kw), self.stride, self.padding) * f**2
        t = torch.sqrt(sk * sk + sq)
        zn = clamp_min_norm(fc.z, dim=-1, keepdim=False)[:, None, None]
        ta = (fc.a / sk)[:, None, None]
        alpha = torch.cosh(ta) * zx - torch.sinh(ta) * zn * t
        skz = sk * zn
        v = fc.logits((skz * asinh(alpha / skz)).permute(0, 2, 3, 1))
        return plfc_from_logits(v, self.c, fc.bias_point(), fc.v_clamp)

    def extra_repr(self) -> str:
        return f"{self.in_channels}+1 -> {self.out_channels}+1, kernel={self.kernel_size}, scale={self.scale_direction}"


class LorentzConv1d(nn.Module):
    r"""Intrinsic Lorentz 1-d convolution ``[B, L, in+1] → [B, L', out+1]`` (see :class:`LorentzConv2d`)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        scale_direction: str = "multiply",
    ) -> None:
        super().__init__()
        self.conv = LorentzConv2d(
            in_channels, out_channels, (1, kernel_size), (1, stride), (0, padding), c, bias, init_std, scale_direction
        )
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"LorentzConv1d expects [B, L, C+1] (channel-last); got {tuple(x.shape)}")
        return self.conv(x.unsqueeze(1)).squeeze(1)
