r"""ILNN layers: intrinsic Lorentz neural-network components (ILNN, ICLR 2026, arXiv:2602.23981, §4).

Every module takes and returns ambient Lorentz vectors ``[..., n+1]`` (time first) on the
hyperboloid :math:`\langle x,x\rangle_L = -1/c`; feature counts name *space* dimensions. Image
features are channel-last ``[B, H, W, C+1]``, sequence features ``[B, L, C+1]``.

Design rule checked by the tests: as :math:`c \to 0` each component reduces to its Euclidean
counterpart (PLFC → ``z x_s + (b - a‖z‖)``, GyroLBN → isotropic batch norm, see the classes).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.manifolds.numerics import check_curvature, clamp_min_norm

__all__ = [
    "to_lorentz",
    "space_to_lorentz",
    "log_radius_scale",
    "log_radius_concat",
    "plfc_from_logits",
    "PLFC",
    "GyroBias",
    "GyroLBN",
    "LorentzConv2d",
    "LorentzConv1d",
    "LorentzActivation",
    "LorentzDropout",
    "lorentz_residual",
    "LorentzResidual",
    "LorentzGlobalAvgPool",
    "LorentzAvgPool1d",
    "LorentzMLR",
]


def _sk(c: float) -> float:
    check_curvature(c)
    return 1.0 / math.sqrt(c)


def _check_features(x: torch.Tensor, n: int, what: str, layout: str = "[..., n+1]") -> None:
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != n + 1:
        raise ValueError(
            f"{what} expects Lorentz features {layout} with n = {n} space dims, time first in the "
            f"LAST axis (channel-last); got shape {tuple(getattr(x, 'shape', ()))}"
        )


def space_to_lorentz(xs: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    r"""Attach the time coordinate to space parts: :math:`(\sqrt{1/c + \|x_s\|^2}, x_s)`."""
    sk = _sk(c)
    return torch.cat((torch.sqrt(sk * sk + (xs * xs).sum(-1, keepdim=True)), xs), dim=-1)


def to_lorentz(x: torch.Tensor, c: float = 1.0, channel_dim: int | None = 1, method: str = "expmap0") -> torch.Tensor:
    r"""Lift Euclidean features onto the hyperboloid, moving channels to the last axis.

    ``method="expmap0"``: :math:`\exp_o((0, x))`; ``"project"``: :math:`(\sqrt{1/c + \|x\|^2}, x)`.
    ``channel_dim`` names the channel axis of ``x`` (``1`` for ``[B, C, H, W]`` / ``[B, C, L]``);
    ``None`` means channels are already last.
    """
    if channel_dim is not None and channel_dim % x.dim() != x.dim() - 1:
        x = x.movedim(channel_dim, -1)
    if method == "project":
        return space_to_lorentz(x, c)
    if method == "expmap0":
        return L.expmap0(torch.cat((torch.zeros_like(x[..., :1]), x), dim=-1), c)
    raise ValueError(f"method must be 'expmap0' or 'project'; got {method!r}")


def log_radius_scale(n_blocks: int, d: int) -> float:
    r"""Log-radius concatenation scale :math:`s = \exp(\tfrac12[\psi(Nd/2) - \psi(d/2)])` (≈ √N).

    For isotropic Gaussian blocks :math:`E\log\|x\| = \tfrac12(\psi(d/2) + \log 2\sigma^2)`, so the
    concatenation of N blocks has expected log radius larger by :math:`\log s`; dividing the
    concatenated space part by ``s`` restores a single block's expected log radius.
    """
    if n_blocks < 1 or d < 1:
        raise ValueError(f"need n_blocks >= 1 and d >= 1; got {n_blocks}, {d}")
    return math.exp(
        0.5
        * (
            torch.special.digamma(torch.tensor(n_blocks * d / 2, dtype=torch.float64))
            - torch.special.digamma(torch.tensor(d / 2, dtype=torch.float64))
        ).item()
    )


def log_radius_concat(blocks: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    r"""Concatenate N Lorentz blocks ``[..., N, d+1]`` into one point ``[..., N d + 1]``.

    Space: :math:`(x_{1,s}, \dots, x_{N,s}) / s` with :func:`log_radius_scale`; time
    :math:`t = \sqrt{k + s^{-2}\sum_i (t_i^2 - k)}` (recomputed from space, so padded origin
    blocks contribute nothing). The ILNN reference code is reported to *multiply* by ``s``
    (unconfirmed from the paper's text); dividing is the direction that keeps the expected log radius.
    """
    if blocks.dim() < 2 or blocks.shape[-1] < 2:
        raise ValueError(f"blocks must be [..., N, d+1]; got {tuple(blocks.shape)}")
    n, d = blocks.shape[-2], blocks.shape[-1] - 1
    s = log_radius_scale(n, d)
    xs = blocks[..., 1:].reshape(*blocks.shape[:-2], n * d) / s
    return space_to_lorentz(xs, c)


def plfc_from_logits(
    v: torch.Tensor, c: float, bias_point: torch.Tensor | None = None, v_clamp: float | None = 10.0
) -> torch.Tensor:
    r"""PLFC output from hyperplane logits ``v [..., out]``.

    :math:`y_s = \sqrt{k}\sinh(v/\sqrt{k})`, :math:`y_t = \sqrt{k + \|y_s\|^2}`, then the gyro-bias
    :math:`y \oplus b` (fused :func:`hgutils.manifolds.lorentz.gyroadd` with a fixed point ``b``).
    ``v`` is clamped to ``±v_clamp`` (10 in the reference code) so ``sinh`` cannot overflow.
    """
    sk = _sk(c)
    if v_clamp is not None:
        v = v.clamp(-v_clamp, v_clamp)
    ys = sk * torch.sinh(v / sk)
    y2 = (ys * ys).sum(-1, keepdim=True)
    if bias_point is None:
        return torch.cat((torch.sqrt(sk * sk + y2), ys), dim=-1)
    yt = torch.sqrt(sk * sk + y2)
    bt, bs = bias_point[..., :1], bias_point[..., 1:]
    s = (ys * bs).sum(-1, keepdim=True)
    zs = (bt / sk + s / (sk * (sk + yt))) * ys + bs
    return space_to_lorentz(zs, c)


class GyroBias(nn.Module):
    r"""Gyro-additive bias :math:`y = x \oplus \exp_o((0, b))`, ``b`` a Euclidean parameter (init 0)."""

    def __init__(self, num_features: int, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.num_features, self.c = num_features, c
        self.b = nn.Parameter(torch.zeros(num_features))

    def point(self) -> torch.Tensor:
        return L.expmap0(F.pad(self.b, (1, 0)), self.c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.num_features, "GyroBias")
        return L.gyroadd(x, self.point().to(x.dtype), self.c)


class PLFC(nn.Module):
    r"""Point-to-hyperplane Lorentz fully connected layer ``[..., in+1] → [..., out+1]``.

    Per output unit :math:`j` the logit :math:`v_j` is the signed hyperplane distance of
    :func:`hgutils.manifolds.lorentz.hyperplane_logits` (normal :math:`z_j`, offset :math:`a_j`);
    then :func:`plfc_from_logits` (sinh map, time, gyro-bias :math:`\oplus \exp_o(0, b)`).
    Init (reference code): :math:`z \sim N(0, \text{init\_std}^2)` (0.02), :math:`a = 0`, :math:`b = 0`;
    ``init_std=None`` uses the fan-in scale :math:`1/\sqrt{\text{in}}` (what the CPU-budget models use:
    with 0.02 the logits start much smaller than a Linear layer's).

    Logits are clamped to ``|v| <= v_clamp`` (10, reference code): beyond it PLFC saturates.
    ``validate=True`` checks that inputs lie on the hyperboloid (``ValueError`` otherwise).

    Flat limit (:math:`c \to 0`, fixed :math:`x_s`): :math:`y_s \to z x_s - a\|z\| + b`.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        v_clamp: float | None = 10.0,
        validate: bool = False,
    ) -> None:
        super().__init__()
        _sk(c)
        self.in_features, self.out_features, self.c, self.v_clamp = in_features, out_features, c, v_clamp
        self.validate = validate
        std = init_std if init_std is not None else 1.0 / math.sqrt(in_features)
        self.z = nn.Parameter(torch.randn(out_features, in_features) * std)
        self.a = nn.Parameter(torch.zeros(out_features))
        self.b = nn.Parameter(torch.zeros(out_features)) if bias else None

    def bias_point(self) -> torch.Tensor | None:
        return None if self.b is None else L.expmap0(F.pad(self.b, (1, 0)), self.c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.in_features, "PLFC")
        if self.validate:
            L.check_point(x, self.c, name="PLFC input")
        v = L.hyperplane_logits(x, self.z, self.a, self.c)
        return plfc_from_logits(v, self.c, self.bias_point(), self.v_clamp)

    def extra_repr(self) -> str:
        return f"{self.in_features}+1 -> {self.out_features}+1, c={self.c}, bias={self.b is not None}"


class LorentzMLR(nn.Module):
    r"""Lorentz multinomial logistic regression head: logits = hyperplane distances
    :func:`hgutils.manifolds.lorentz.hyperplane_logits` ``[..., in+1] → [..., classes]``."""

    def __init__(self, in_features: int, num_classes: int, c: float = 1.0, init_std: float | None = None):
        super().__init__()
        _sk(c)
        self.in_features, self.num_classes, self.c = in_features, num_classes, c
        std = init_std if init_std is not None else 1.0 / math.sqrt(in_features)
        self.z = nn.Parameter(torch.randn(num_classes, in_features) * std)
        self.a = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.in_features, "LorentzMLR")
        return L.hyperplane_logits(x, self.z, self.a, self.c)


class GyroLBN(nn.Module):
    r"""Gyro Lorentz batch normalisation (closed-form centroid + gyro-scaling).

    Over all batch positions (every axis but the last):

    1. :math:`\mu` = closed-form Lorentzian centroid; dispersion ``v`` about :math:`\mu`:
       ``dispersion="mean"`` :math:`v = \overline{d(x_i,\mu)}`, ``"squared"`` (Fréchet variance)
       :math:`v = \overline{d(x_i,\mu)^2}`; centroid and mean accumulated in ``stats_dtype`` (float64).
    2. :math:`\hat x = r \otimes ((\ominus\mu) \oplus x)` with :math:`r = \mathrm{clamp}(s, -2.5, 2)
       / (v + \epsilon)` (mean) or :math:`/\sqrt{v + \epsilon}` (squared), so the normalised mean
       (resp. RMS) distance to the centre equals ``s``; ``dispersion="reference"`` uses
       :math:`/\sqrt{v+\epsilon}` with the mean distance, as the ILNN reference code does.
    3. :math:`y = \exp_o((0, w)) \oplus \hat x` (bias point; ``w`` init 0, ``s`` init ``init_scale``).

    Training mode updates ``running_mean`` along the geodesic
    (:math:`\exp_{m}(\text{momentum}\cdot\log_{m}\mu)`) and ``running_var`` by EMA; eval mode uses them.
    Flat limit (``"squared"``), batch norm with one isotropic variance:
    :math:`y_s \to w + s\,(x_s - \bar x_s)/\sqrt{\overline{\|x_s - \bar x_s\|^2} + \epsilon}`.
    """

    def __init__(
        self,
        num_features: int,
        c: float = 1.0,
        momentum: float = 0.1,
        eps: float = 1e-6,
        dispersion: str = "mean",
        init_scale: float = 0.5,
        stats_dtype: torch.dtype | None = torch.float64,
        validate: bool = False,
    ) -> None:
        super().__init__()
        _sk(c)
        self.validate = validate
        if dispersion not in ("mean", "squared", "reference"):
            raise ValueError(f"dispersion must be 'mean', 'squared' or 'reference'; got {dispersion!r}")
        self.num_features, self.c, self.momentum, self.eps = num_features, c, momentum, eps
        self.dispersion, self.stats_dtype = dispersion, stats_dtype
        self.s = nn.Parameter(torch.tensor(float(init_scale)))
        self.w = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", L.origin(num_features, c))
        self.register_buffer("running_var", torch.tensor(1.0))

    def batch_mean(self, flat: torch.Tensor) -> torch.Tensor:
        """Closed-form centroid of ``flat [M, n+1]``, accumulated in ``stats_dtype``."""
        m = flat.mean(0, dtype=self.stats_dtype or flat.dtype)
        return L.centroid(m[None], self.c)

    def factor(self, v: torch.Tensor) -> torch.Tensor:
        s = self.s.clamp(-2.5, 2.0)
        if self.dispersion == "mean":
            return s / (v + self.eps)
        return s / torch.sqrt(v + self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.num_features, "GyroLBN")
        if self.validate:
            L.check_point(x, self.c, name="GyroLBN input")
        sk = _sk(self.c)
        flat = x.reshape(-1, x.shape[-1])
        if self.training:
            if flat.shape[0] < 2:
                raise ValueError("GyroLBN in training mode needs at least 2 points per batch")
            mu = self.batch_mean(flat)
        else:
            mu = self.running_mean
        # gyro-translation is an isometry: d(x_i, mu) = d((-mu) + x_i, o) = sqrt(k) asinh(|c_s| / sqrt(k)),
        # so the dispersion and the gyro-scaling share one asinh (fused r (x) c, same formula as gyroscalar)
        centred = L.gyroadd(L.gyroinv(mu.to(x.dtype)).expand_as(flat), flat, self.c)
        cs = centred[:, 1:]
        n = clamp_min_norm(cs)
        th = torch.asinh(n / sk)
        if self.training:
            d = sk * th
            v = (d * d if self.dispersion == "squared" else d).mean(dtype=self.stats_dtype or d.dtype)
            with torch.no_grad():
                rm = self.running_mean.to(mu.dtype)
                new = L.expmap(rm, self.momentum * L.logmap(rm, mu.detach(), self.c), self.c)
                self.running_mean.copy_(L.project(new, self.c).to(self.running_mean.dtype))
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * v.detach().to(self.running_var))
        else:
            v = self.running_var
        xh = space_to_lorentz(sk * torch.sinh(self.factor(v.to(x.dtype)) * th) * (cs / n), self.c)
        bias = L.expmap0(F.pad(self.w, (1, 0)), self.c).to(x.dtype)
        return L.gyroadd(bias.expand_as(xh), xh, self.c).reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.num_features}, c={self.c}, dispersion={self.dispersion}, momentum={self.momentum}"


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

    Each ``kh x kw`` patch (padding = origin points) is joined by :func:`log_radius_concat`
    (N = kh kw blocks of d = in space dims) and fed to a :class:`PLFC` of
    ``in*kh*kw → out``. Computed with ``conv2d`` on the space part: :math:`\langle z, \hat x_s\rangle`
    is a convolution with kernel ``z/s`` and the patch time :math:`\sqrt{k + \|P\|^2/s^2}` a box sum
    of :math:`\|x_s\|^2` -- the same numbers as the explicit patch route (tested).
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
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c
        self.kernel_size, self.stride, self.padding = _pair(kernel_size), _pair(stride), _pair(padding)
        kh, kw = self.kernel_size
        self.scale = log_radius_scale(kh * kw, in_channels)
        self.fc = PLFC(in_channels * kh * kw, out_channels, c, bias, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"LorentzConv2d expects [B, H, W, C+1] (channel-last); got {tuple(x.shape)}")
        _check_features(x, self.in_channels, "LorentzConv2d", "[B, H, W, C+1]")
        sk, kh, kw = _sk(self.c), *self.kernel_size
        xs = x[..., 1:].permute(0, 3, 1, 2).contiguous()  # [B, C, H, W]
        fc = self.fc
        zw = (fc.z / self.scale).view(self.out_channels, kh, kw, self.in_channels).permute(0, 3, 1, 2).contiguous()
        zx = _conv2d(xs, zw, self.stride, self.padding)  # [B, out, H', W']
        sq = (
            _conv2d((xs * xs).sum(1, keepdim=True), xs.new_ones(1, 1, kh, kw), self.stride, self.padding)
            / self.scale**2
        )
        t = torch.sqrt(sk * sk + sq)
        zn = clamp_min_norm(fc.z, dim=-1, keepdim=False)[:, None, None]
        ta = (fc.a / sk)[:, None, None]
        alpha = torch.cosh(ta) * zx - torch.sinh(ta) * zn * t
        skz = sk * zn
        v = (skz * torch.asinh(alpha / skz)).permute(0, 2, 3, 1)
        return plfc_from_logits(v, self.c, fc.bias_point(), fc.v_clamp)


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
    ) -> None:
        super().__init__()
        self.conv = LorentzConv2d(
            in_channels, out_channels, (1, kernel_size), (1, stride), (0, padding), c, bias, init_std
        )
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"LorentzConv1d expects [B, L, C+1] (channel-last); got {tuple(x.shape)}")
        return self.conv(x.unsqueeze(1)).squeeze(1)
