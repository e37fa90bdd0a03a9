r"""Baseline hyperbolic layers for the ILNN comparison (ILNN, arXiv:2602.23981, §5).

* HCNN-style (Bdeir, Schwethelm & Landwehr 2024, "Fully Hyperbolic Convolutional Neural Networks
  for Computer Vision", arXiv:2303.15919): :class:`LorentzFC` (a linear map over the

  full ambient vector, time recomputed), :class:`LorentzConv2dHCNN` / :class:`LorentzConv1dHCNN`
  (direct patch concatenation :math:`t = \sqrt{\sum t_i^2 - (N-1)k}` + LorentzFC) and
  :class:`LorentzBN` (centroid, tangent space at the centroid, transport to the origin, divide by
  the mean norm, rescale, transport to the bias point).
* :class:`GyroBN`: the GyroLBN recipe with the *iterative* Fréchet (Karcher) mean and variance,
  the slow baseline of the paper's BN comparison.
* :class:`PoincareLinear`: HNN-style Möbius linear layer :math:`(W \otimes x) \oplus b` (geoopt math),
  used in the layer-cost benchmark.
"""

from __future__ import annotations

import math

import geoopt
import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.manifolds.numerics import clamp_pos
from hgutils.nn.lorentz import (
    GyroLBN,
    _centred_polar,
    _check_features,
    _conv2d,
    _pair,
    _rescale_and_bias,
    _sk,
    space_to_lorentz,
)

__all__ = [
    "LorentzFC",
    "LorentzConv2dHCNN",
    "LorentzConv1dHCNN",
    "LorentzBN",
    "karcher_mean",
    "GyroBN",
    "PoincareLinear",
]


class LorentzFC(nn.Module):
    r"""HCNN Lorentz fully connected: :math:`y_s = W x + b` over the full vector ``x = (x_t, x_s)``,
    :math:`y_t = \sqrt{\|y_s\|^2 + k}`. ``[..., in+1] → [..., out+1]``. Init as in the HCNN
    reference code: :math:`W` uniform in :math:`\pm` ``init_bound`` (0.02), :math:`b = 0`."""

    def __init__(
        self, in_features: int, out_features: int, c: float = 1.0, bias: bool = True, init_bound: float = 0.02
    ) -> None:
        super().__init__()
        _sk(c)
        self.in_features, self.out_features, self.c = in_features, out_features, c
        self.linear = nn.Linear(in_features + 1, out_features, bias=bias)
        with torch.no_grad():
            self.linear.weight.uniform_(-init_bound, init_bound)
            if bias:
                self.linear.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.in_features, "LorentzFC")
        return space_to_lorentz(self.linear(x), self.c)


class LorentzConv2dHCNN(nn.Module):
    r"""HCNN Lorentz convolution: patches joined by direct concatenation (space parts stacked,
    :math:`t = \sqrt{k + \sum_i \|x_{i,s}\|^2}`), then :class:`LorentzFC` on ``[t, patch_s]``.
    Computed with ``conv2d`` (kernel on the space part + a time weight on the patch time). Init as in
    the HCNN reference code: weights and bias uniform in :math:`\pm\sqrt{2/\text{fan-in}}`
    (fan-in = in space channels x kernel size)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        c: float = 1.0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _sk(c)
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c
        self.kernel_size, self.stride, self.padding = _pair(kernel_size), _pair(stride), _pair(padding)
        kh, kw = self.kernel_size
        bound = math.sqrt(2.0 / (in_channels * kh * kw))
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kh, kw).uniform_(-bound, bound))
        self.w_time = nn.Parameter(torch.empty(out_channels).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(out_channels).uniform_(-bound, bound)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"LorentzConv2dHCNN expects [B, H, W, C+1] (channel-last); got {tuple(x.shape)}")
        _check_features(x, self.in_channels, "LorentzConv2dHCNN", "[B, H, W, C+1]")
        sk, (kh, kw) = _sk(self.c), self.kernel_size
        xs = x[..., 1:].permute(0, 3, 1, 2).contiguous()
        ys = _conv2d(xs, self.weight, self.stride, self.padding)
        if self.bias is not None:
            ys = ys + self.bias[:, None, None]
        sq = _conv2d((xs * xs).sum(1, keepdim=True), xs.new_ones(1, 1, kh, kw), self.stride, self.padding)
        t = torch.sqrt(sk * sk + sq)
        ys = ys + self.w_time[:, None, None] * t
        return space_to_lorentz(ys.permute(0, 2, 3, 1), self.c)


class LorentzConv1dHCNN(nn.Module):
    """1-d version of :class:`LorentzConv2dHCNN`: ``[B, L, in+1] → [B, L', out+1]``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        c: float = 1.0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.conv = LorentzConv2dHCNN(in_channels, out_channels, (1, kernel_size), (1, stride), (0, padding), c, bias)
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"LorentzConv1dHCNN expects [B, L, C+1] (channel-last); got {tuple(x.shape)}")
        return self.conv(x.unsqueeze(1)).squeeze(1)


class LorentzBN(nn.Module):
    r"""HCNN Lorentz batch norm (tangent-space normalisation; Bdeir et al. 2024, arXiv:2303.15919, §4.3).

    :math:`\mu` = centroid, :math:`u_i = PT_{\mu\to o}(\log_\mu x_i)`, :math:`\sigma = \overline{\|u_i\|}`,
    :math:`y_i = \exp_\beta(PT_{o\to\beta}(\gamma u_i / (\sigma + \epsilon)))` with
    :math:`\beta = \exp_o((0, w))`. Running mean along the geodesic, running :math:`\sigma` by EMA.

    Computed with the identities :math:`\exp_o(PT_{\mu\to o}\log_\mu x) = (\ominus\mu)\oplus x` and
    :math:`\exp_\beta(PT_{o\to\beta}u) = \beta\oplus\exp_o(u)`, gyro-translations being Lorentz boosts
    (:func:`hgutils.nn.lorentz.boost`; the tests check the result against the tangent-space route).
    """

    def __init__(self, num_features: int, c: float = 1.0, momentum: float = 0.1, eps: float = 1e-5) -> None:
        super().__init__()
        _sk(c)
        self.num_features, self.c, self.momentum, self.eps = num_features, c, momentum, eps
        self.gamma = nn.Parameter(torch.tensor(1.0))
        self.w = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", L.origin(num_features, c))
        self.register_buffer("running_var", torch.tensor(1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.num_features, "LorentzBN")
        sk = _sk(self.c)
        flat = x.reshape(-1, x.shape[-1])
        if self.training:
            mu = L.centroid(flat, self.c)
            cs, n, th = _centred_polar(flat, mu, self.c)
            sigma = (sk * th).mean()
            with torch.no_grad():
                rm = self.running_mean.to(x.dtype)
                new = L.expmap(rm, self.momentum * L.logmap(rm, mu.detach(), self.c), self.c)
                self.running_mean.copy_(L.project(new, self.c))
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * sigma.detach())
        else:
            cs, n, th = _centred_polar(flat, self.running_mean.to(x.dtype), self.c)
            sigma = self.running_var.to(x.dtype)
        beta = L.expmap0(F.pad(self.w, (1, 0)), self.c).to(x.dtype)
        return _rescale_and_bias(cs, n, th, self.gamma / (sigma + self.eps), beta, self.c).reshape(x.shape)


def karcher_mean(x: torch.Tensor, c: float = 1.0, iters: int = 50, tol: float = 1e-6) -> torch.Tensor:
    r"""Fréchet (Karcher) mean of ``x [M, n+1]`` by Riemannian gradient descent
    :math:`\mu \leftarrow \exp_\mu(\overline{\log_\mu x_i})`, started at the centroid, until the step
    norm is below ``tol`` or ``iters`` steps (the iterative mean GyroBN uses). The unit step converges
    linearly; for widely spread points (distances of several units) it converges slowly because
    the step overshoots along directions of large curvature."""
    mu = L.centroid(x, c)
    for _ in range(iters):
        step = L.logmap(mu.expand_as(x), x, c).mean(0)
        mu = L.project(L.expmap(mu, step, c), c)
        if float(torch.sqrt(clamp_pos(L.inner(step, step).detach()))) < tol:
            break
    return mu


class GyroBN(GyroLBN):
    r""":class:`hgutils.nn.lorentz.GyroLBN` with the iterative Karcher mean (and squared Fréchet
    variance) instead of the closed-form centroid -- the GyroBN-style baseline."""

    def __init__(
        self,
        num_features: int,
        c: float = 1.0,
        momentum: float = 0.1,
        eps: float = 1e-6,
        init_scale: float = 0.5,
        iters: int = 50,
        tol: float = 1e-6,
        stats_dtype: torch.dtype | None = torch.float64,
    ) -> None:
        super().__init__(num_features, c, momentum, eps, "frechet", init_scale, stats_dtype)  # noqa: B026
        self.iters, self.tol = iters, tol

    def batch_mean(self, flat: torch.Tensor) -> torch.Tensor:
        xf = flat if self.stats_dtype is None else flat.to(self.stats_dtype)
        return karcher_mean(xf, self.c, self.iters, self.tol)


class PoincareLinear(nn.Module):
    r"""HNN Möbius linear layer on the Poincaré ball (geoopt math): :math:`y = (W \otimes x) \oplus b`,
    :math:`W \otimes x = \exp_0(W \log_0 x)`, ``b = exp_0(b_e)``. ``[..., in] → [..., out]``."""

    def __init__(self, in_features: int, out_features: int, c: float = 1.0, bias: bool = True) -> None:
        super().__init__()
        _sk(c)
        self.ball = geoopt.PoincareBall(c=c)
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.ball.mobius_matvec(self.weight, x)
        if self.bias is not None:
            y = self.ball.mobius_add(y, self.ball.expmap0(self.bias))
        return self.ball.projx(y)
