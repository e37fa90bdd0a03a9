r"""Points on the hyperboloid and the closed forms the ILNN layers share (ILNN, arXiv:2602.23981, §4).

Euclidean features lifted onto the hyperboloid (:func:`to_lorentz`, :func:`space_to_lorentz`: the time
coordinate :math:`\sqrt{1/c + \|x_s\|^2}` recomputed from the space part), the Lorentz boost
:math:`B_a x = a \oplus x` as one matrix (:func:`boost`), a vectorised :math:`\operatorname{arsinh}`
(:func:`asinh`), the hyperplane logits of PLFC and the MLR head, and the gyro-centring and gyro-scaling that
GyroLBN and the GyroBN baseline apply. Conventions as in :mod:`hgutils.nn.lorentz`.
"""

from __future__ import annotations

import math

import torch

from hgutils.manifolds import lorentz as L
from hgutils.manifolds.numerics import check_curvature, clamp_min_norm


def _sk(c: float) -> float:
    check_curvature(c)
    return 1.0 / math.sqrt(c)


def _check_features(x: torch.Tensor, n: int, what: str, layout: str = "[..., n+1]") -> None:
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != n + 1:
        raise ValueError(
            f"{what} expects Lorentz features {layout} with n = {n} space dims, time first in the "
            f"LAST axis (channel-last); got shape {tuple(getattr(x, 'shape', ()))}"
        )


class _Asinh(torch.autograd.Function):
    r""":math:`\operatorname{arsinh}` as a composition of vectorised kernels, derivative
    :math:`1/\sqrt{1+x^2}` (see :func:`asinh`)."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        ax = x.abs()
        q = ax / (1 + torch.hypot(ax, torch.ones_like(ax)))  # x^2 / (1 + sqrt(1 + x^2)) = |x| q, q < 1
        # log(1 + |x| + |x| q) = log1p(|x|) + log1p(|x| q / (1 + |x|)): no overflow up to float max
        return torch.copysign(torch.log1p(ax) + torch.log1p(q * (ax / (1 + ax))), x)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return g * torch.rsqrt(1 + x * x)


def asinh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\operatorname{arsinh}(x) = \operatorname{sign}(x)\,\log(1 + |x| + x^2/(1 + \sqrt{1 + x^2}))`,
    evaluated as :math:`\log(1+|x|) + \log(1 + |x| q/(1+|x|))` with :math:`q = |x|/(1+\sqrt{1+x^2})`.

    The ``log1p`` form keeps full relative precision near 0 (within 2 ulp of ``torch.asinh``, tested)
    and cannot overflow. It exists for speed: ``torch.asinh`` has no vectorised CPU kernel in
    torch 2.13 and dominated the ILNN layers' cost (``benchmarks/lorentz_layers.py`` measures the ratio).
    """
    return _Asinh.apply(x)


def boost(a: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    r"""The Lorentz boost :math:`B_a` ``[n+1, n+1]`` with :math:`B_a x = a \oplus x` for every point ``x``.

    Left gyro-translation by ``a`` (Möbius addition carried to the hyperboloid) is the pure boost
    taking the origin to ``a``, a linear map of the ambient coordinates (Ungar 2008, *Analytic
    Hyperbolic Geometry and Albert Einstein's Special Theory of Relativity*, §3):

    .. math:: B_a = \begin{pmatrix} a_t/\sqrt k & a_s^\top/\sqrt k \\
              a_s/\sqrt k & I + a_s a_s^\top / (\sqrt k(\sqrt k + a_t)) \end{pmatrix}

    (the closed form of :func:`hgutils.manifolds.lorentz.gyroadd`, tested against it). Applying it
    to a batch is one small matrix product. ``a`` is one point ``[n+1]``.
    """
    if a.dim() != 1 or a.shape[0] < 2:
        raise ValueError(f"boost expects one Lorentz point [n+1]; got shape {tuple(a.shape)}")
    sk = _sk(c)
    at, asp = a[:1], a[1:]
    top = torch.cat((at, asp)) / sk
    eye = torch.eye(len(asp), dtype=a.dtype, device=a.device)
    lower = torch.cat((asp[:, None] / sk, eye + asp[:, None] * asp / (sk * (sk + at))), dim=1)
    return torch.cat((top[None], lower), dim=0)


def _hyperplane_logits(x: torch.Tensor, z: torch.Tensor, a: torch.Tensor, c: float) -> torch.Tensor:
    r""":func:`hgutils.manifolds.lorentz.hyperplane_logits` (same formula, tested equal) with the
    vectorised :func:`asinh`: :math:`v = \sqrt{k}\|z\|\operatorname{arsinh}(\alpha/(\sqrt{k}\|z\|))`,
    :math:`\alpha = \cosh(a/\sqrt{k})\langle z, x_s\rangle - \sinh(a/\sqrt{k})\|z\|x_t`."""
    sk = _sk(c)
    zn = clamp_min_norm(z, dim=-1, keepdim=False)
    ta = a / sk
    alpha = torch.cosh(ta) * (x[..., 1:] @ z.transpose(0, 1)) - (torch.sinh(ta) * zn) * x[..., :1]
    skz = sk * zn
    return skz * asinh(alpha / skz)


def _centred_polar(flat: torch.Tensor, mu: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Space parts ``cs`` of :math:`(\ominus\mu) \oplus x_i`, their norms and
    :math:`\theta_i = \operatorname{arsinh}(\|cs_i\|/\sqrt k)` (so :math:`d(x_i, \mu) = \sqrt k\,\theta_i`)."""
    cs = flat @ boost(L.gyroinv(mu), c)[1:].to(flat.dtype).T
    n = clamp_min_norm(cs)
    return cs, n, asinh(n / _sk(c))


def _rescale_and_bias(
    cs: torch.Tensor, n: torch.Tensor, th: torch.Tensor, r: torch.Tensor, b: torch.Tensor, c: float
) -> torch.Tensor:
    r""":math:`b \oplus (r \otimes x)` for the centred points of :func:`_centred_polar` (``b`` a point)."""
    sk = _sk(c)
    rth = r * th
    xh = torch.cat((sk * torch.cosh(rth), sk * torch.sinh(rth) * (cs / n)), dim=-1)
    return space_to_lorentz(xh @ boost(b, c)[1:].to(xh.dtype).T, c)


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
