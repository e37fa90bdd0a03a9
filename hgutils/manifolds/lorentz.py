r"""Lorentz (hyperboloid) model of hyperbolic space with curvature :math:`-c`, time coordinate first.

Points are ambient vectors :math:`x = (x_t, x_s) \in \mathbb{R}^{n+1}` with
:math:`\langle x, x\rangle_L = -x_t^2 + \|x_s\|^2 = -1/c` and :math:`x_t > 0`; tangent vectors are
ambient too. Throughout, :math:`k = 1/c` and :math:`\sqrt{k} = 1/\sqrt{c}`; the origin is
:math:`o = (\sqrt{k}, 0)`. geoopt's ``Lorentz(k)`` stores the same points with ``k = 1/c``.

Formulas follow Nickel & Kiela (2018), "Learning Continuous Hierarchies in the Lorentz Model of
Hyperbolic Geometry" (arXiv:1806.03417; curvature -1) and, with a general curvature, Chen et al.
(2022), "Fully Hyperbolic Neural Networks" (arXiv:2105.14686); Law et al. (2019) for the centroid;
Bdeir, Schwethelm & Landwehr (2024, arXiv:2303.15919) for the hyperplane logits.

Every function is a pure tensor function with broadcasting batch dimensions (everything but the
last, ambient axis); distances return the batch shape (no trailing singleton). ``c`` (and the
scalar ``r`` of :func:`gyroscalar`) follows the package's one curvature/broadcasting convention,
stated in :mod:`hgutils.manifolds` and implemented by :mod:`hgutils.manifolds.numerics`. Numerical
guards come from :mod:`hgutils.manifolds.numerics` (``clamp_min_norm`` for Euclidean norms,
``clamp_pos`` for Lorentz squared norms / denominators); ``asinh`` forms are used instead of
``arcosh`` wherever a quantity near the origin is needed, so float32 stays accurate for small
distances and finite for times up to 1e4.

Gyro-structure (ILNN, arXiv:2602.23981, §3): Möbius addition carried through the isometry

:func:`to_poincare`. Its closed form on the hyperboloid is the pure Lorentz boost taking the
origin to ``x`` applied to ``y`` (because :math:`p \oplus q = \exp_p(PT_{0\to p}(\log_0 q))`):

.. math::
    x \oplus y = \Big(\cdot,\; \tfrac{y_t}{\sqrt{k}} x_s + y_s
    + \tfrac{\langle x_s, y_s\rangle}{\sqrt{k}(\sqrt{k} + x_t)} x_s\Big),

time recomputed from space. It is exact (no detour through the ball) and linear in ``y``.
"""

from __future__ import annotations

import math

import torch

from hgutils.manifolds import numerics as nx
from hgutils.manifolds.numerics import MIN_NORM, clamp_min_norm, clamp_pos

__all__ = [
    "inner",
    "dist",
    "expmap0",
    "logmap0",
    "expmap",
    "logmap",
    "transp",
    "project",
    "to_poincare",
    "from_poincare",
    "gyroadd",
    "gyroinv",
    "gyroscalar",
    "centroid",
    "hyperplane_logits",
    "frechet_dispersion",
    "check_point",
    "origin",
]

Curv = float | torch.Tensor
_SQ_MIN = MIN_NORM**2  # floor for Lorentz squared norms before a square root


def _rsqrt(c: Curv) -> Curv:
    r""":math:`1/\sqrt{c}` of a validated ``c`` (``rsqrt`` for a tensor, as before the shared convention)."""
    return c.rsqrt() if isinstance(c, torch.Tensor) else 1.0 / math.sqrt(c)


def _sqrt_k(c: Curv, *like: torch.Tensor) -> Curv:
    r"""Validate ``c`` against the points ``like`` (:func:`hgutils.manifolds.numerics.batch_curvature`)
    and return :math:`\sqrt{k} = 1/\sqrt{c}` in keep-dim form (broadcasting on ``[..., 1]``)."""
    return _rsqrt(nx.as_keepdim(nx.batch_curvature(c, *like)))


def _sqrt_k_batch(c: Curv, *like: torch.Tensor) -> Curv:
    """As :func:`_sqrt_k`, in batch form (broadcasting on batch-shaped quantities such as ``inner(x, y)``)."""
    return _rsqrt(nx.batch_curvature(c, *like))


def _check_ambient(name: str, x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] < 2:
        raise ValueError(
            f"{name} must be ambient Lorentz vectors [..., n+1] with n >= 1 (time first); got shape {tuple(x.shape)}"
        )


def _check_same_dim(x: torch.Tensor, y: torch.Tensor, xn: str = "x", yn: str = "y") -> None:
    _check_ambient(xn, x)
    _check_ambient(yn, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"{xn} and {yn} must have the same ambient dimension; got {x.shape[-1]} and {y.shape[-1]}")


def origin(
    n: int, c: Curv = 1.0, dtype: torch.dtype | None = None, device: torch.device | str | None = None
) -> torch.Tensor:
    r"""The origin :math:`o = (1/\sqrt{c}, 0, \dots, 0) \in \mathbb{R}^{n+1}`.

    There is no point argument, so ``c`` defines the batch shape: a number gives ``[n+1]``, a
    tensor ``c`` of shape ``S`` (0-d included) gives one origin per curvature, ``S + (n+1,)``.
    ``dtype`` / ``device`` default to torch's defaults (a tensor ``c`` is cast to them); gradients flow
    to a tensor ``c``.
    """
    sk = _sqrt_k_batch(c)
    o = torch.zeros(*(sk.shape if isinstance(sk, torch.Tensor) else ()), n + 1, dtype=dtype, device=device)
    o[..., 0] = float(sk) if not isinstance(sk, torch.Tensor) else sk.to(o)
    return o


def inner(x: torch.Tensor, y: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    r"""Lorentzian inner product :math:`\langle x, y\rangle_L = -x_t y_t + \langle x_s, y_s\rangle`."""
    _check_same_dim(x, y)
    return (x[..., 1:] * y[..., 1:]).sum(-1, keepdim=keepdim) - (x[..., :1] * y[..., :1]).sum(-1, keepdim=keepdim)


def check_point(x: torch.Tensor, c: Curv = 1.0, rtol: float | None = None, name: str = "x") -> None:
    r"""Raise ``ValueError`` unless ``x`` lies on the hyperboloid (upper sheet).

    Tests :math:`|\langle x,x\rangle_L + 1/c| \le \text{rtol}\,(1/c + x_t^2)` and :math:`x_t > 0`;
    ``rtol`` defaults to 1e-4 (float32) / 1e-8 (float64).
    """
    _check_ambient(name, x)
    sk = _sqrt_k_batch(c, x)
    if rtol is None:
        rtol = 1e-8 if x.dtype == torch.float64 else 1e-4
    k = sk * sk
    q = inner(x, x)
    scale = k + x[..., 0] ** 2
    err = ((q + k).abs() / scale).detach()
    if not bool(torch.all(torch.isfinite(x))):
        raise ValueError(f"{name} has non-finite entries")
    if err.numel() and (float(err.max()) > rtol or bool(torch.any(x[..., 0] <= 0))):
        raise ValueError(
            f"{name} must lie on the hyperboloid <x,x>_L = -1/c = {_fmt_neg(k)} with x_t > 0 "
            f"(time coordinate first); max relative violation was {float(err.max()):.3g} "
            f"(tolerance {rtol:g}), min x_t was {float(x[..., 0].min()):.4g}"
        )


def _fmt_neg(k: Curv) -> str:
    if isinstance(k, torch.Tensor) and k.numel() != 1:
        return f"-{float(k.min()):.6g} .. -{float(k.max()):.6g} (per batch element)"
    return f"{-float(k):.6g}"


def project(x: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Put ``x`` on the hyperboloid by recomputing time from space: :math:`(\sqrt{k + \|x_s\|^2}, x_s)`."""
    _check_ambient("x", x)
    sk = _sqrt_k(c, x)
    xs = x[..., 1:]
    xt = torch.sqrt(sk * sk + (xs * xs).sum(-1, keepdim=True))
    return torch.cat((xt, xs), dim=-1)


def dist(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Geodesic distance :math:`d(x,y) = \sqrt{k}\,\operatorname{arcosh}(-c\langle x, y\rangle_L)`.

    Evaluated through the Lorentzian chord :math:`q = \|x - y\|_L^2 = 2k(\cosh(d/\sqrt k) - 1)`
    as :math:`d = 2\sqrt{k}\,\operatorname{arsinh}(\sqrt{q}/(2\sqrt{k}))`, which is exact for
    nearby points where ``arcosh`` near 1 loses half the digits. ``q`` is floored at 1e-30.
    ``q`` is computed as :math:`\sum_i \delta_i^2 - 2\delta_t^2` (:math:`\delta = x - y`), one
    full-width square instead of two sliced products (about geoopt's speed in
    ``benchmarks/manifolds.py``).

    """
    _check_same_dim(x, y)
    sk = _sqrt_k_batch(c, x, y)
    d2 = (x - y).square()
    q = d2.sum(-1) - 2 * d2[..., 0]
    return 2 * sk * torch.asinh(torch.sqrt(clamp_pos(q, _SQ_MIN)) / (2 * sk))


def expmap0(u: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Exponential map at the origin; ``u`` ambient ``[..., n+1]`` (its time entry is ignored, = 0).

    .. math:: \exp_o(u) = \big(\sqrt{k}\cosh(\|u_s\|/\sqrt{k}),\;
              \sqrt{k}\sinh(\|u_s\|/\sqrt{k})\, u_s/\|u_s\|\big)
    """
    _check_ambient("u", u)
    sk = _sqrt_k(c, u)
    us = u[..., 1:]
    n = clamp_min_norm(us)
    th = n / sk
    return torch.cat((sk * torch.cosh(th), sk * torch.sinh(th) * us / n), dim=-1)


def logmap0(x: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Logarithmic map at the origin, an ambient tangent vector with zero time entry.

    .. math:: \log_o(x) = \big(0,\; \sqrt{k}\,\theta\, x_s/\|x_s\|\big),\quad
              \theta = \operatorname{arsinh}(\|x_s\|/\sqrt{k}) = \operatorname{arcosh}(x_t/\sqrt{k})
    """
    _check_ambient("x", x)
    sk = _sqrt_k(c, x)
    xs = x[..., 1:]
    n = clamp_min_norm(xs)
    th = torch.asinh(n / sk)
    return torch.cat((torch.zeros_like(x[..., :1]), sk * th * xs / n), dim=-1)


def expmap(x: torch.Tensor, u: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Exponential map at ``x`` of a tangent vector ``u`` (:math:`\langle x,u\rangle_L = 0`).

    .. math:: \exp_x(u) = \cosh(\|u\|_L/\sqrt{k})\, x + \sqrt{k}\sinh(\|u\|_L/\sqrt{k})\, u/\|u\|_L
    """
    _check_same_dim(x, u, "x", "u")
    sk = _sqrt_k(c, x, u)
    n = torch.sqrt(clamp_pos(inner(u, u, keepdim=True), _SQ_MIN))
    th = n / sk
    return torch.cosh(th) * x + sk * torch.sinh(th) * u / n


def logmap(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Logarithmic map at ``x`` of ``y``.

    .. math:: \log_x(y) = \frac{d}{\sqrt{k}\sinh(d/\sqrt{k})}\,\big(y + c\langle x, y\rangle_L\, x\big),
              \quad d = d(x, y)

    (:math:`\|y + c\langle x,y\rangle_L x\|_L = \sqrt{k}\sinh(d/\sqrt{k})`, used in closed form.)
    """
    _check_same_dim(x, y)
    sk = _sqrt_k(c, x, y)
    th = clamp_pos(dist(x, y, c).unsqueeze(-1) / sk)
    w = y + inner(x, y, keepdim=True) / (sk * sk) * x
    return (th / torch.sinh(th)) * w


def transp(x: torch.Tensor, y: torch.Tensor, v: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Parallel transport of ``v`` from :math:`T_x` to :math:`T_y` along the geodesic.

    .. math:: PT_{x\to y}(v) = v + \frac{\langle y, v\rangle_L}{k - \langle x, y\rangle_L}\,(x + y)

    (the denominator is :math:`\ge 2k`, so no guard is needed).
    """
    _check_same_dim(x, y)
    _check_same_dim(x, v, "x", "v")
    sk = _sqrt_k(c, x, y, v)
    return v + inner(y, v, keepdim=True) / (sk * sk - inner(x, y, keepdim=True)) * (x + y)


def to_poincare(x: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Isometry onto the Poincaré ball of radius :math:`1/\sqrt{c}`: :math:`p = x_s / (1 + \sqrt{c}\,x_t)`.

    (geoopt's ``lorentz_to_poincare`` divides by :math:`x_t + \sqrt{k}` instead, which lands in the
    *unit* ball; the two agree only at ``c = 1``.)
    """
    _check_ambient("x", x)
    sk = _sqrt_k(c, x)
    return x[..., 1:] / (1 + x[..., :1] / sk)


def from_poincare(p: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Inverse of :func:`to_poincare`: :math:`x_s = 2p/(1 - c\|p\|^2)`, :math:`x_t = \sqrt{k + \|x_s\|^2}`.

    ``1 - c||p||^2`` is floored at 1e-15 (points on or outside the boundary map to huge but finite
    points only in float64; keep ``p`` inside the ball).
    """
    if not isinstance(p, torch.Tensor) or p.dim() < 1 or p.shape[-1] < 1:
        raise ValueError(f"p must be Poincaré points [..., n]; got {getattr(p, 'shape', type(p))}")
    sk = _sqrt_k(c, p)
    den = clamp_pos(1 - (p * p).sum(-1, keepdim=True) / (sk * sk))
    xs = 2 * p / den
    return project(torch.cat((torch.zeros_like(p[..., :1]), xs), dim=-1), c)


def gyroinv(x: torch.Tensor) -> torch.Tensor:
    r"""Gyro-inverse :math:`\ominus x = (x_t, -x_s)` (the Möbius negation through the map)."""
    _check_ambient("x", x)
    return torch.cat((x[..., :1], -x[..., 1:]), dim=-1)


def gyroadd(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Lorentz gyro-addition :math:`x \oplus y` (= Möbius addition through :func:`to_poincare`).

    Closed form (pure boost :math:`o \mapsto x` applied to ``y``), time recomputed from space:

    .. math:: (x \oplus y)_s = \frac{y_t}{\sqrt{k}} x_s + y_s
              + \frac{\langle x_s, y_s\rangle}{\sqrt{k}\,(\sqrt{k} + x_t)}\, x_s
    """
    _check_same_dim(x, y)
    sk = _sqrt_k(c, x, y)
    xt, xs = x[..., :1], x[..., 1:]
    yt, ys = y[..., :1], y[..., 1:]
    s = (xs * ys).sum(-1, keepdim=True)
    zs = (yt / sk + s / (sk * (sk + xt))) * xs + ys
    zt = torch.sqrt(sk * sk + (zs * zs).sum(-1, keepdim=True))
    return torch.cat((zt, zs), dim=-1)


def gyroscalar(r: float | torch.Tensor, x: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Gyro-scalar multiplication :math:`r \otimes x` (geodesic scaling from the origin).

    .. math:: r \otimes x = \big(\sqrt{k}\cosh(r\theta),\; \sqrt{k}\sinh(r\theta)\, x_s/\|x_s\|\big),
              \quad \theta = \operatorname{arsinh}(\|x_s\|/\sqrt{k})

    ``r`` is a number or a tensor broadcastable to the batch shape ``x.shape[:-1]``, like ``c`` (and
    like ``r`` of :func:`hgutils.manifolds.poincare.mobius_scalar`); a keep-dim ``[..., 1]`` ``r``
    raises ``ValueError``.
    """
    _check_ambient("x", x)
    sk = _sqrt_k(c, x)
    if isinstance(r, torch.Tensor) and r.dim() > 0:
        nx.check_batch_scalar("r", r, x.shape[:-1])
        r = r.unsqueeze(-1)
    xs = x[..., 1:]
    n = clamp_min_norm(xs)
    rth = r * torch.asinh(n / sk)
    return torch.cat((sk * torch.cosh(rth), sk * torch.sinh(rth) * xs / n), dim=-1)


def centroid(x: torch.Tensor, c: Curv = 1.0, weights: torch.Tensor | None = None, dim: int = -2) -> torch.Tensor:
    r"""Lorentzian centroid (Law et al., 2019), closed form.

    .. math:: \mu = \sqrt{k}\,\frac{m}{\sqrt{|\langle m, m\rangle_L|}},\qquad m = \sum_i \nu_i x_i

    It minimises :math:`\sum_i \nu_i \|x_i - \mu\|_L^2` (squared Lorentzian distance
    :math:`-2k - 2\langle x_i, \mu\rangle_L`) over the hyperboloid. ``x`` is ``[..., N, n+1]`` with
    the points along ``dim`` (not the last axis); ``weights`` (non-negative, not all zero) has
    ``x``'s shape without the last axis; ``None`` means uniform. ``c`` is a number or a tensor
    broadcastable to the *output* batch shape (``x.shape`` without ``dim`` and the last axis): one
    curvature per set of points (the reduction rule of :mod:`hgutils.manifolds`).
    """
    _check_ambient("x", x)
    nd = x.dim()
    d = dim % nd
    if d == nd - 1:
        raise ValueError("centroid: dim must index the points axis, not the last (coordinate) axis")
    c_out, _ = nx.reduced_curvature(c, x.shape[:d] + x.shape[d + 1 : -1], d, "centroid")
    sk = _rsqrt(nx.as_keepdim(c_out))
    if weights is None:
        m = x.mean(dim=d)
    else:
        if weights.shape != x.shape[:-1]:
            try:
                w = weights.expand(x.shape[:-1])
            except RuntimeError as err:
                raise ValueError(
                    f"weights must have shape {tuple(x.shape[:-1])} (x without its last axis); "
                    f"got {tuple(weights.shape)}"
                ) from err
        else:
            w = weights
        m = (w.unsqueeze(-1) * x).sum(dim=d)
    nrm = torch.sqrt(clamp_pos(-inner(m, m, keepdim=True), _SQ_MIN))
    return sk * m / nrm


def hyperplane_logits(x: torch.Tensor, z: torch.Tensor, a: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Signed distances to Lorentz hyperplanes (the PLFC / Lorentz-MLR logit of Bdeir et al.).

    For each output unit with normal :math:`z \in \mathbb{R}^n` and offset :math:`a`:

    .. math:: \alpha = \cosh(a/\sqrt{k})\langle z, x_s\rangle - \sinh(a/\sqrt{k})\|z\|x_t,\qquad
              v = \sqrt{k}\,\|z\|\,\operatorname{arsinh}\!\big(\alpha / (\sqrt{k}\|z\|)\big)

    Flat limit (:math:`c \to 0`, fixed :math:`x_s`): :math:`v \to \langle z, x_s\rangle - a\|z\|`,
    i.e. the Euclidean affine map with weight ``z`` and bias :math:`-a\|z\|`.
    Shapes: ``x [..., n+1]``, ``z [out, n]``, ``a [out]`` → ``[..., out]``; ``c`` broadcasts to
    ``x``'s batch shape ``x.shape[:-1]`` (the ``out`` axis is appended to it).
    """
    _check_ambient("x", x)
    if z.dim() != 2 or z.shape[1] != x.shape[-1] - 1:
        raise ValueError(f"z must be [out, n] with n = x.shape[-1] - 1 = {x.shape[-1] - 1}; got {tuple(z.shape)}")
    if a.shape != (z.shape[0],):
        raise ValueError(f"a must be [out] = [{z.shape[0]}]; got {tuple(a.shape)}")
    sk = _sqrt_k(c, x)
    zn = clamp_min_norm(z, dim=-1, keepdim=False)
    ta = a / sk
    alpha = torch.cosh(ta) * (x[..., 1:] @ z.transpose(0, 1)) - (torch.sinh(ta) * zn) * x[..., :1]
    skz = sk * zn
    return skz * torch.asinh(alpha / skz)


def frechet_dispersion(
    x: torch.Tensor, mu: torch.Tensor, c: Curv = 1.0, squared: bool = True, dim: int = -2
) -> torch.Tensor:
    r"""Dispersion of points about ``mu``: :math:`\frac1N\sum_i d(x_i,\mu)^2` (``squared``, the Fréchet
    variance) or :math:`\frac1N\sum_i d(x_i,\mu)` (mean distance, as in the ILNN reference code).

    ``x [..., N, n+1]`` with points along ``dim``; ``mu`` is ``x`` without that axis; ``c`` is a
    number or a tensor broadcastable to the output (``mu``'s batch) shape, one curvature per set of
    points (the reduction rule of :mod:`hgutils.manifolds`). Returns ``mu.shape[:-1]``.
    """
    _check_ambient("x", x)
    nd = x.dim()
    d = dim % nd
    if d == nd - 1:
        raise ValueError("frechet_dispersion: dim must index the points axis, not the last axis")
    if mu.shape != x.shape[:d] + x.shape[d + 1 :]:
        raise ValueError(
            f"mu must have shape {tuple(x.shape[:d] + x.shape[d + 1 :])} (x without axis {dim}); got {tuple(mu.shape)}"
        )
    _, c_in = nx.reduced_curvature(c, mu.shape[:-1], d, "dispersion")
    dd = dist(x, mu.unsqueeze(d), c_in)
    return (dd * dd if squared else dd).mean(dim=d)
