r"""Poincaré ball and Klein model of hyperbolic space with curvature :math:`-c` (``c > 0``).

The ball is :math:`\mathbb{D}^n_c = \{x \in \mathbb{R}^n : c\|x\|^2 < 1\}` (radius :math:`1/\sqrt{c}`)
with conformal factor :math:`\lambda_x = 2/(1 - c\|x\|^2)`; geoopt's ``PoincareBall(c)`` uses the
same ``c`` (its stereographic math uses :math:`\kappa = -c`). Formulas: Ganea, Bécigneul & Hofmann
(2018), "Hyperbolic Neural Networks" (arXiv:1805.09112); Ungar (2005/2010) for the Einstein/Möbius
midpoints.


Conventions
-----------
* Points and tangent vectors are ``[..., n]`` tensors; ``c`` (and the scalar ``r`` of
  :func:`mobius_scalar`) follows the package's one curvature/broadcasting convention, stated in
  :mod:`hgutils.manifolds` and implemented by :func:`hgutils.manifolds.numerics.curvature`.
* ``validate=True`` checks that the point arguments lie in the open ball and raises a
  ``ValueError`` naming the largest :math:`\sqrt{c}\|x\|` otherwise (it costs a reduction and a
  host sync, so it is off by default). Shape errors are always checked.
* Numerical guards come only from :mod:`hgutils.manifolds.numerics`: ``clamp_min_norm`` before
  dividing by a Euclidean norm, ``clamp_pos`` for quantities positive in exact arithmetic that
  float32 can round to 0 at the boundary (:math:`1 - c\|x\|^2`, Möbius denominators), and the
  clamped ``tanh`` / ``artanh``.

Implementation choice (geoopt or our own)
-----------------------------------------
Every operation geoopt also has is measured against it by ``benchmarks/manifolds.py`` (forward +
backward, float32, one thread) and is written here only because ours measured faster there (the
benchmark prints the ratios; docs/performance.md quotes them). Most fold every per-point scalar into
*one* coefficient on the ``[..., 1]`` norms before touching the ``[..., n]`` tensor, which saves
full-width multiplications and divisions in the forward and the backward pass. ``lambda_x`` and
``transp0`` are the same expressions as geoopt's, but geoopt's TorchScript entry point measured
slower than the plain eager expression.
geoopt remains the independent reference in ``tests/test_poincare.py`` (agreement to 1e-10 in
float64).

Stability: Möbius addition and subtraction (and so ``expmap``, ``logmap``, ``dist2plane``,
``affine``) use the cancellation-free form :math:`((1-c\|x\|^2)s + c\|s\|^2 x) /
((1-c\|x\|^2)(1-c\|y\|^2) + c\|s\|^2)`, :math:`s = x + y`, and :func:`dist` the arsinh form;
for nearby (or, for addition, near-antipodal) points at :math:`\sqrt c\|x\| = 0.99` float32 keeps
~1e-6 relative accuracy where the textbook forms (and geoopt) lose ~5e-2 (tested). geoopt has no
Klein maps, ``affine``, scatter midpoint or Fermi-Dirac; those are ours.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from hgutils.manifolds import numerics as nx

__all__ = [
    "lambda_x",
    "mobius_add",
    "mobius_scalar",
    "mobius_matvec",
    "expmap0",
    "logmap0",
    "expmap",
    "logmap",
    "dist",
    "transp0",
    "project",
    "to_klein",
    "from_klein",
    "einstein_midpoint",
    "einstein_midpoint_scatter",
    "dist2plane",
    "affine",
    "fermi_dirac",
    "check_point",
]

Curv = float | torch.Tensor


# ----------------------------------------------------------------------------------------------
# input handling
# ----------------------------------------------------------------------------------------------
def _keepdim_scalar(r: float | torch.Tensor, like: torch.Tensor) -> float | torch.Tensor:
    """A number or a batch-shaped tensor, reshaped to broadcast against ``[..., 1]``."""
    if isinstance(r, torch.Tensor) and r.dim() > 0:
        nx.check_batch_scalar("r", r, like.shape[:-1])
        return r.unsqueeze(-1)
    return r


def _check_vec(name: str, x: object) -> None:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of shape [..., n]; got {type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] < 1:
        raise ValueError(f"{name} must have shape [..., n] with n >= 1; got shape {tuple(x.shape)}")


def _check_pair(xn: str, x: torch.Tensor, yn: str, y: torch.Tensor) -> None:
    _check_vec(xn, x)
    _check_vec(yn, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(
            f"{xn} and {yn} must have the same last (manifold) dimension; "
            f"got {xn}: {tuple(x.shape)} and {yn}: {tuple(y.shape)}"
        )
    if not nx.broadcastable(x.shape, y.shape):
        raise ValueError(f"{xn} and {yn} batch dimensions must broadcast; got {tuple(x.shape)} and {tuple(y.shape)}")


def check_point(x: torch.Tensor, c: Curv = 1.0, name: str = "x") -> None:
    r"""Raise ``ValueError`` unless every row of ``x`` lies in the open ball :math:`c\|x\|^2 < 1`."""
    _check_vec(name, x)
    _check_in_ball(x, nx.curvature(c, x)[0], name)


def _check_in_ball(x: torch.Tensor, ck: Curv, name: str) -> None:
    """:func:`check_point` with a validated keep-dim ``ck`` (which may broadcast ``x`` to a larger batch)."""
    with torch.no_grad():
        s = (x * x).sum(-1, keepdim=True) * ck  # c ||x||^2
        if s.numel() == 0:
            return
        if not bool(torch.isfinite(s).all()):
            raise ValueError(f"{name} has non-finite entries")
        worst = float(s.max())
    if worst >= 1.0:
        raise ValueError(
            f"{name} must lie in the open Poincaré ball of radius 1/sqrt(c) (sqrt(c)*||{name}|| < 1); "
            f"max sqrt(c)*||{name}|| was {math.sqrt(worst):.6g}"
        )


def _sqnorm(x: torch.Tensor) -> torch.Tensor:
    """:math:`\\|x\\|^2` over the last dim, keepdim (a product and a sum; cheaper than ``norm**2``)."""
    return (x * x).sum(-1, keepdim=True)


def _dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x * y).sum(-1, keepdim=True)


# ----------------------------------------------------------------------------------------------
# conformal factor, projection, transport
# ----------------------------------------------------------------------------------------------
def lambda_x(x: torch.Tensor, c: Curv = 1.0, keepdim: bool = False, validate: bool = False) -> torch.Tensor:
    r"""Conformal factor :math:`\lambda_x = 2 / (1 - c\|x\|^2)` (denominator floored by ``clamp_pos``).

    Own two-kernel expression rather than a wrapper of geoopt's identical ``lambda_x``: geoopt's
    TorchScript call measured slower (``benchmarks/manifolds.py``).
    """
    _check_vec("x", x)
    ck, _ = nx.curvature(c, x)
    if validate:
        check_point(x, c)
    lam = 2 / nx.clamp_pos(1 - ck * _sqnorm(x))
    return lam if keepdim else lam.squeeze(-1)


def transp0(y: torch.Tensor, v: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Parallel transport of :math:`v \in T_0` from the origin to ``y``:
    :math:`PT_{0\to y}(v) = \frac{\lambda_0}{\lambda_y} v = (1 - c\|y\|^2)\, v`.

    Own expression rather than a wrapper of geoopt's identical ``parallel_transport0``: geoopt's
    TorchScript call measured slower (``benchmarks/manifolds.py``).
    """
    _check_pair("y", y, "v", v)
    ck, _ = nx.curvature(c, y, v)
    if validate:
        check_point(y, c, "y")
    return v * nx.clamp_pos(1 - ck * _sqnorm(y))


def project(x: torch.Tensor, c: Curv = 1.0, eps: float | None = None) -> torch.Tensor:
    r"""Pull points back inside the ball: :math:`x \cdot \min(1, r_{\max}/\|x\|)` with
    :math:`r_{\max} = (1 - \varepsilon)/\sqrt{c}`, :math:`\varepsilon` = ``numerics.BALL_EPS[dtype]``
    (4e-3 float32, 1e-5 float64) unless given.

    Same result as geoopt's ``project``; written here as one multiplication by a clamped factor
    instead of geoopt's divide, multiply and ``where`` (fewer full-width kernels); faster than geoopt in
    ``benchmarks/manifolds.py``.
    """
    _check_vec("x", x)
    _, sc = nx.curvature(c, x)
    if eps is None:
        eps = nx.eps_for(nx.BALL_EPS, x.dtype)
    if not 0.0 <= eps < 1.0:
        raise ValueError(f"eps must be in [0, 1); got {eps}")
    maxnorm = (1.0 - eps) / sc
    # min(1, r_max/||x||) is the projection itself (not a numerical guard): points inside keep scale 1.
    return x * (maxnorm / nx.clamp_min_norm(x)).clamp_max(1.0)


# ----------------------------------------------------------------------------------------------
# Möbius gyrovector operations
# ----------------------------------------------------------------------------------------------
def mobius_add(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Möbius addition

    .. math::
        x \oplus_c y = \frac{(1 + 2c\langle x,y\rangle + c\|y\|^2)\,x + (1 - c\|x\|^2)\,y}
                            {1 + 2c\langle x,y\rangle + c^2\|x\|^2\|y\|^2}.

    Evaluated in the algebraically equal form, with :math:`s = x + y`,

    .. math::
        x \oplus_c y = \frac{(1 - c\|x\|^2)\,s + c\|s\|^2\,x}
                            {(1 - c\|x\|^2)(1 - c\|y\|^2) + c\|s\|^2},

    whose denominator is a sum of non-negative terms in the ball (floored with
    ``numerics.clamp_pos``) and whose numerator does not cancel when :math:`y \approx -x` (e.g.
    centring points near their mean, :math:`(-\mu) \oplus x`): float32 keeps ~1e-6 relative
    accuracy there where the textbook form (and geoopt) loses all digits near the boundary.
    Own implementation; the division is folded into two ``[..., 1]`` coefficients. Faster than geoopt in
    ``benchmarks/manifolds.py``.
    """
    _check_pair("x", x, "y", y)
    ck, _ = nx.curvature(c, x, y)
    if validate:
        check_point(x, c, "x")
        check_point(y, c, "y")
    return _mobius_add(x, y, ck)


def _mobius_add(x: torch.Tensor, y: torch.Tensor, ck: Curv) -> torch.Tensor:
    s = x + y
    s2 = ck * _sqnorm(s)
    gx = 1 - ck * _sqnorm(x)
    inv_den = 1 / nx.clamp_pos(gx * (1 - ck * _sqnorm(y)) + s2)
    return torch.addcmul(s * (gx * inv_den), x, s2 * inv_den)


def _mobius_sub_parts(x: torch.Tensor, y: torch.Tensor, ck: Curv) -> tuple[torch.Tensor, torch.Tensor]:
    r""":math:`w = (-x) \oplus y` (stable form of :func:`mobius_add` with :math:`s = y - x`) and
    :math:`\|x\|^2` (shared by ``logmap`` and ``dist2plane``)."""
    x2 = _sqnorm(x)
    dlt = y - x
    d2 = ck * _sqnorm(dlt)
    gx = 1 - ck * x2
    inv_den = 1 / nx.clamp_pos(gx * (1 - ck * _sqnorm(y)) + d2)
    return torch.addcmul(dlt * (gx * inv_den), x, -d2 * inv_den), x2


def mobius_scalar(r: float | torch.Tensor, x: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Möbius scalar multiplication

    .. math:: r \otimes_c x = \frac{1}{\sqrt c}\tanh\!\big(r \operatorname{artanh}(\sqrt c\|x\|)\big)
              \frac{x}{\|x\|}.

    ``r`` is a number or a tensor broadcastable to the batch shape. ``0 (x) x = 0`` and
    ``r (x) 0 = 0`` (norms floored with ``clamp_min_norm``). Own implementation: one full-width
    multiplication by a ``[..., 1]`` coefficient (geoopt: divide by the norm, then multiply); faster than
    geoopt in ``benchmarks/manifolds.py``.
    """
    _check_vec("x", x)
    ck, sc = nx.curvature(c, x)
    if validate:
        check_point(x, c)
    s = sc * nx.clamp_min_norm(x)
    return x * (nx.tanh(_keepdim_scalar(r, x) * nx.artanh(s)) / s)


def mobius_matvec(W: torch.Tensor, x: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Möbius matrix-vector product :math:`W \otimes_c x = \exp_0(W \log_0 x)`:

    .. math:: W \otimes_c x = \frac{1}{\sqrt c}\tanh\!\Big(\frac{\|Wx\|}{\|x\|}
              \operatorname{artanh}(\sqrt c\|x\|)\Big)\frac{Wx}{\|Wx\|},
              \qquad W \otimes_c x = 0 \text{ if } Wx = 0.

    ``W`` is ``[m, n]`` (or batched ``[..., m, n]``, broadcast against ``x``'s batch); ``x`` is
    ``[..., n]``; the result is ``[..., m]``. The batch shape (for ``c``) is that of ``x`` broadcast with
    ``W.shape[:-2]``. Own implementation (one coefficient multiplication instead of geoopt's divide +
    multiply + ``where``); faster than geoopt in ``benchmarks/manifolds.py``.
    """
    _check_matvec(W, x)
    ck, sc = nx.curvature(c, x) if W.dim() == 2 else nx.curvature(c, x, W[..., 0, :])
    if validate:
        _check_in_ball(x, ck, "x")
    return _mobius_matvec(W, x, sc)


def _check_matvec(W: object, x: torch.Tensor) -> None:
    _check_vec("x", x)
    if not isinstance(W, torch.Tensor) or W.dim() < 2 or W.shape[-1] != x.shape[-1]:
        raise ValueError(
            f"W must be a [..., m, n] matrix with n = x.shape[-1] = {x.shape[-1]}; "
            f"got {tuple(W.shape) if isinstance(W, torch.Tensor) else type(W).__name__}"
        )


def _mobius_matvec(W: torch.Tensor, x: torch.Tensor, sc: Curv) -> torch.Tensor:
    mx = F.linear(x, W) if W.dim() == 2 else torch.matmul(W, x.unsqueeze(-1)).squeeze(-1)
    xn = nx.clamp_min_norm(x)
    mxn = nx.clamp_min_norm(mx)
    # Wx = 0 gives tanh(~0)/(~0) * 0 = 0 exactly: no `where` needed.
    return mx * (nx.tanh(mxn / xn * nx.artanh(sc * xn)) / (sc * mxn))


# ----------------------------------------------------------------------------------------------
# exponential / logarithmic maps, distance
# ----------------------------------------------------------------------------------------------
def expmap0(u: torch.Tensor, c: Curv = 1.0) -> torch.Tensor:
    r"""Exponential map at the origin :math:`\exp_0(u) = \tanh(\sqrt c\|u\|)\,\frac{u}{\sqrt c\|u\|}`.

    Own implementation: one full-width multiplication (geoopt: divide, then multiply); faster than geoopt in
    ``benchmarks/manifolds.py``.
    """
    _check_vec("u", u)
    return _expmap0(u, nx.curvature(c, u)[1])


def _expmap0(u: torch.Tensor, sc: Curv) -> torch.Tensor:
    s = sc * nx.clamp_min_norm(u)
    return u * (nx.tanh(s) / s)


def logmap0(y: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Logarithmic map at the origin :math:`\log_0(y) = \operatorname{artanh}(\sqrt c\|y\|)\,
    \frac{y}{\sqrt c\|y\|}` (artanh input clamped below 1 by ``numerics.artanh``).

    Own implementation (one coefficient multiplication); faster than geoopt in ``benchmarks/manifolds.py``.
    """
    _check_vec("y", y)
    _, sc = nx.curvature(c, y)
    if validate:
        check_point(y, c, "y")
    s = sc * nx.clamp_min_norm(y)
    return y * (nx.artanh(s) / s)


def expmap(x: torch.Tensor, u: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Exponential map at ``x``:

    .. math:: \exp_x(u) = x \oplus_c \Big(\tanh\!\big(\tfrac{\sqrt c\,\lambda_x\|u\|}{2}\big)
              \frac{u}{\sqrt c\|u\|}\Big).

    Own implementation: with :math:`v = f u` the step, the Möbius addition is evaluated in the
    cancellation-free form of :func:`mobius_add` (:math:`s = x + v`), using
    :math:`\|v\|^2 = \tanh^2(\cdot)/c` from ``[..., 1]`` scalars; accurate in float32 also when the
    step lands near the origin. Faster than geoopt in ``benchmarks/manifolds.py``.
    """
    _check_pair("x", x, "u", u)
    ck, sc = nx.curvature(c, x, u)
    if validate:
        check_point(x, c)
    gx = 1 - ck * _sqnorm(x)  # = 2 / lambda_x
    un = nx.clamp_min_norm(u)
    th = nx.tanh(sc * un / nx.clamp_pos(gx))  # tanh(sqrt(c) lambda_x ||u|| / 2)
    s = torch.addcmul(x, u, th / (sc * un))  # x + v
    s2 = ck * _sqnorm(s)
    inv_den = 1 / nx.clamp_pos(gx * (1 - th * th) + s2)  # 1 - c||v||^2 = 1 - th^2
    return torch.addcmul(s * (gx * inv_den), x, s2 * inv_den)


def logmap(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Logarithmic map at ``x``:

    .. math:: \log_x(y) = \frac{2}{\sqrt c\,\lambda_x}\operatorname{artanh}(\sqrt c\|w\|)\frac{w}{\|w\|},
              \qquad w = (-x) \oplus_c y.

    Own implementation: ``w`` from the cancellation-free Möbius subtraction
    :math:`w = ((1-c\|x\|^2)\delta - c\|\delta\|^2 x) / ((1-c\|x\|^2)(1-c\|y\|^2) + c\|\delta\|^2)`,
    :math:`\delta = y - x` (float32 stays accurate for nearby points near the boundary), then one
    scaling; faster than geoopt in ``benchmarks/manifolds.py``.
    """
    _check_pair("x", x, "y", y)
    ck, sc = nx.curvature(c, x, y)
    if validate:
        check_point(x, c)
        check_point(y, c, "y")
    w, x2 = _mobius_sub_parts(x, y, ck)
    s = sc * nx.clamp_min_norm(w)
    # 2 / (sqrt(c) lambda_x) * artanh(s) / ||w|| = (1 - c||x||^2) artanh(s) / s
    return w * (nx.clamp_pos(1 - ck * x2) * nx.artanh(s) / s)


def dist(x: torch.Tensor, y: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Geodesic distance, returned with the batch shape:

    .. math:: d_c(x,y) = \frac{2}{\sqrt c}\operatorname{artanh}\big(\sqrt c\|(-x)\oplus_c y\|\big)
              = \frac{2}{\sqrt c}\operatorname{arsinh}\!\Big(\frac{\sqrt c\,\|x-y\|}
                {\sqrt{(1-c\|x\|^2)(1-c\|y\|^2)}}\Big).

    The second (equal) form is evaluated: it needs no Möbius addition (fewer full-width kernels)
    and has no cancellation for nearby points, where the artanh form loses digits. Faster than geoopt in
    ``benchmarks/manifolds.py``.
    """
    _check_pair("x", x, "y", y)
    ck, sc = nx.curvature(c, x, y)
    if validate:
        check_point(x, c)
        check_point(y, c, "y")
    gx = nx.clamp_pos(1 - ck * _sqnorm(x))
    gy = nx.clamp_pos(1 - ck * _sqnorm(y))
    z = sc * nx.clamp_min_norm(x - y) * torch.rsqrt(gx * gy)
    return (2 / sc * torch.asinh(z)).squeeze(-1)


# ----------------------------------------------------------------------------------------------
# Klein model and Einstein midpoint
# ----------------------------------------------------------------------------------------------
def to_klein(p: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Poincaré → Klein: :math:`k = \frac{2p}{1 + c\|p\|^2}` (Klein ball has the same radius)."""
    _check_vec("p", p)
    ck, _ = nx.curvature(c, p)
    if validate:
        check_point(p, c, "p")
    return p * (2 / (1 + ck * _sqnorm(p)))


def from_klein(k: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Klein → Poincaré: :math:`p = \frac{k}{1 + \sqrt{1 - c\|k\|^2}}`
    (:math:`1 - c\|k\|^2` floored with ``numerics.clamp_pos``)."""
    _check_vec("k", k)
    ck, _ = nx.curvature(c, k)
    if validate:
        check_point(k, c, "k")
    return _from_klein(k, ck)


def _from_klein(k: torch.Tensor, ck: Curv) -> torch.Tensor:
    return k * (1 / (1 + torch.sqrt(nx.clamp_pos(1 - ck * _sqnorm(k)))))


def einstein_midpoint(
    p: torch.Tensor, weights: torch.Tensor | None = None, c: Curv = 1.0, dim: int = -2, validate: bool = False
) -> torch.Tensor:
    r"""Weighted Einstein midpoint of Poincaré points, computed in the Klein model.

    With Klein points :math:`k_i` = ``to_klein(p_i)`` and Lorentz factors
    :math:`\gamma_i = 1/\sqrt{1 - c\|k_i\|^2}`:

    .. math:: m_K = \frac{\sum_i \nu_i \gamma_i k_i}{\sum_i \nu_i \gamma_i}, \qquad
              m = \texttt{from\_klein}(m_K).

    Evaluated through the exact identities :math:`\gamma_i = \lambda_{p_i} - 1` and
    :math:`\gamma_i k_i = \lambda_{p_i} p_i`, i.e. :math:`m_K = \sum\nu_i\lambda_i p_i /
    \sum\nu_i(\lambda_i - 1)`, which never forms :math:`1 - c\|k_i\|^2` (that cancels to 0 in
    float32 near the boundary). This equals the Möbius gyromidpoint
    :math:`\tfrac12 \otimes (\sum \nu_i\lambda_i p_i / \sum \nu_i(\lambda_i-1))` and geoopt's
    ``weighted_midpoint`` (which this is faster than in ``benchmarks/manifolds.py``; geoopt also
    adds 1e-10 to the denominator and checks antipodes).

    Parameters
    ----------
    p : ``[..., N, n]`` points (``N`` along ``dim``, ``n`` last).
    weights : ``[..., N]`` non-negative weights :math:`\nu_i` (shape of ``p`` without its last dim,
        broadcastable); ``None`` means equal weights. Only their ratios matter.
    dim : the axis of ``p`` holding the ``N`` points (not the last one).
    c : a number or a tensor broadcastable to the *output* batch shape (``p.shape`` without ``dim``
        and the last axis): one curvature per set of points (the reduction rule of
        :mod:`hgutils.manifolds`).

    Returns
    -------
    Tensor
        ``p``'s shape without ``dim`` (``[..., n]``).
    """
    _check_vec("p", p)
    if p.dim() < 2:
        raise ValueError(f"p must have shape [..., N, n] (N points along dim); got {tuple(p.shape)}")
    d = dim if dim >= 0 else p.dim() + dim
    if not 0 <= d < p.dim() - 1:
        raise ValueError(
            f"dim must index a batch axis of p (not the last, manifold axis); got dim={dim} for p of "
            f"shape {tuple(p.shape)}"
        )
    c_out, c_in = nx.reduced_curvature(c, p.shape[:d] + p.shape[d + 1 : -1], d, "midpoint")
    ck_out, ck = nx.as_keepdim(c_out), nx.as_keepdim(c_in)  # ck: per point, broadcasts on p.shape[:-1] + (1,)
    if validate:
        check_point(p, c_in, "p")
    lam = 2 / nx.clamp_pos(1 - ck * _sqnorm(p))  # [..., N, 1]
    if weights is None:
        num = (lam * p).sum(d)
        den = (lam - 1).sum(d)
    else:
        if not isinstance(weights, torch.Tensor):
            raise ValueError(f"weights must be a tensor of shape {tuple(p.shape[:-1])}; got {type(weights)}")
        if not nx.broadcastable(weights.shape, p.shape[:-1]):
            raise ValueError(
                f"weights must broadcast to p.shape[:-1] = {tuple(p.shape[:-1])}; got {tuple(weights.shape)}"
            )
        if validate and bool((weights < 0).any()):
            raise ValueError(f"weights must be non-negative; min weight was {float(weights.min()):.4g}")
        wl = weights.unsqueeze(-1) * lam
        num = (wl * p).sum(d)
        den = (wl - weights.unsqueeze(-1)).sum(d)
    return _from_klein(num / nx.clamp_pos(den), ck_out)


def einstein_midpoint_scatter(
    p_src: torch.Tensor,
    weights: torch.Tensor | None,
    index: torch.Tensor,
    num_nodes: int,
    c: Curv = 1.0,
    validate: bool = False,
) -> torch.Tensor:
    r"""Einstein midpoint per node of a graph, scattered over its edges.

    For every node :math:`j`, over the edges :math:`e` with ``index[e] == j`` (source point
    :math:`p_e`, weight :math:`\nu_e`):

    .. math:: m_{K,j} = \frac{\sum_{e\to j} \nu_e\lambda_{p_e} p_e}{\sum_{e\to j}\nu_e(\lambda_{p_e}-1)},
              \qquad m_j = \texttt{from\_klein}(m_{K,j}),

    the same formula as :func:`einstein_midpoint`, summed with ``index_add`` (memory ``O(E n)``;
    no dense ``N x N`` matrix, no Python loop). Nodes with no incoming edge get the origin.

    Parameters
    ----------
    p_src : ``[E, n]`` Poincaré points (one per edge, usually ``x[src]``).
    weights : ``[E]`` non-negative edge weights, or ``None`` for equal weights.
    index : ``[E]`` integer target node of each edge, in ``[0, num_nodes)``.
    num_nodes : number of output rows.
    c : a number, a one-element tensor, or a ``[num_nodes]`` tensor (one curvature per node: the
        output batch shape, as for :func:`einstein_midpoint`; an edge uses its target node's ``c``).

    Returns
    -------
    Tensor
        ``[num_nodes, n]``.
    """
    _check_vec("p_src", p_src)
    if p_src.dim() != 2:
        raise ValueError(f"p_src must have shape [E, n]; got {tuple(p_src.shape)}")
    E = p_src.shape[0]
    if not isinstance(index, torch.Tensor) or index.shape != (E,) or index.dtype not in (torch.int64, torch.int32):
        raise ValueError(
            f"index must be an integer tensor of shape [E] = [{E}]; got "
            f"{(tuple(index.shape), index.dtype) if isinstance(index, torch.Tensor) else type(index).__name__}"
        )
    if weights is not None and (not isinstance(weights, torch.Tensor) or weights.shape != (E,)):
        raise ValueError(
            f"weights must be None or a tensor of shape [E] = [{E}]; got "
            f"{tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__}"
        )
    if int(num_nodes) != num_nodes or num_nodes < 0:
        raise ValueError(f"num_nodes must be a non-negative integer; got {num_nodes}")
    if isinstance(c, torch.Tensor) and c.numel() != 1 and c.shape != (num_nodes,):
        raise ValueError(
            f"c must be a number, a one-element tensor or a [num_nodes] = [{num_nodes}] tensor here; "
            f"got shape {tuple(c.shape)}"
        )
    if isinstance(c, torch.Tensor) and c.numel() == 1:
        c = c.reshape(())
    ck, _ = nx.curvature(c)  # [num_nodes, 1] for a per-node c
    if validate:
        if E and (int(index.min()) < 0 or int(index.max()) >= num_nodes):
            raise ValueError(
                f"index entries must lie in [0, num_nodes={num_nodes}); got range "
                f"[{int(index.min())}, {int(index.max())}]"
            )
        if weights is not None and bool((weights < 0).any()):
            raise ValueError(f"weights must be non-negative; min weight was {float(weights.min()):.4g}")
    ck_e = ck[index] if isinstance(ck, torch.Tensor) and ck.dim() else ck  # per edge: its target's c
    if validate:
        check_point(p_src, ck_e.squeeze(-1) if isinstance(ck_e, torch.Tensor) and ck_e.dim() else c, "p_src")
    lam = 2 / nx.clamp_pos(1 - ck_e * _sqnorm(p_src))  # [E, 1]
    if weights is None:
        wl, wg = lam, lam - 1
    else:
        w = weights.unsqueeze(-1)
        wl = w * lam
        wg = wl - w
    n = p_src.shape[-1]
    num = p_src.new_zeros(num_nodes, n).index_add(0, index, wl * p_src)
    den = p_src.new_zeros(num_nodes, 1).index_add(0, index, wg)
    return _from_klein(num / nx.clamp_pos(den), ck)


# ----------------------------------------------------------------------------------------------
# hyperplanes, layers, link model
# ----------------------------------------------------------------------------------------------
def dist2plane(
    x: torch.Tensor, p: torch.Tensor, a: torch.Tensor, c: Curv = 1.0, signed: bool = True, validate: bool = False
) -> torch.Tensor:
    r"""Distance from ``x`` to the gyroplane through ``p`` with normal ``a`` (:math:`a \in T_p`):

    .. math:: d_c(x, H_{p,a}) = \frac{1}{\sqrt c}\operatorname{arsinh}\!\Big(
              \frac{2\sqrt c\,\langle w, a\rangle}{(1 - c\|w\|^2)\,\|a\|}\Big),
              \qquad w = (-p)\oplus_c x,

    signed (positive on the side ``a`` points to) or, with ``signed=False``, its absolute value.
    Returned with the broadcast batch shape. Own implementation (``w`` as in :func:`logmap`);
    faster than geoopt's ``dist2plane`` in ``benchmarks/manifolds.py``.
    """
    _check_pair("x", x, "p", p)
    _check_pair("x", x, "a", a)
    ck, sc = nx.curvature(c, x, p, a)
    if validate:
        check_point(x, c)
        check_point(p, c, "p")
    w, _ = _mobius_sub_parts(p, x, ck)
    wa = _dot(w, a)
    if not signed:
        wa = wa.abs()
    z = 2 * sc * wa / (nx.clamp_pos(1 - ck * _sqnorm(w)) * nx.clamp_min_norm(a))
    return (torch.asinh(z) / sc).squeeze(-1)


def affine(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor, c: Curv = 1.0, validate: bool = False) -> torch.Tensor:
    r"""Hyperbolic affine layer (Ganea et al. 2018):

    .. math:: \mathrm{affine}(x) = \exp_{W\otimes_c x}\big(PT_{0\to W\otimes_c x}(b)\big)
              = (W \otimes_c x) \oplus_c \exp_0(b),

    with ``W`` ``[m, n]`` (or batched ``[..., m, n]``), ``x`` ``[..., n]``, bias ``b`` ``[..., m]`` a
    tangent vector at the origin; the batch shape (for ``c``) is that of ``x``, ``W.shape[:-2]`` and
    ``b`` broadcast together (an unbatched bias ``[m]`` is the common case). The second (equal) form is
    evaluated (faster than the same composition of geoopt ops in ``benchmarks/manifolds.py``).
    """
    _check_vec("b", b)
    _check_matvec(W, x)
    if b.shape[-1] != W.shape[-2]:
        raise ValueError(f"b must have last dim m = W.shape[-2] = {W.shape[-2]}; got shape {tuple(b.shape)}")
    ck, sc = nx.curvature(c, x, b) if W.dim() == 2 else nx.curvature(c, x, b, W[..., 0, :])
    if validate:
        _check_in_ball(x, ck, "x")
    # a tensor c gets its own sqrt node for the bias term, as when this called expmap0(b, c): the
    # gradient w.r.t. c then accumulates in the same order, bit for bit
    sc_b = ck.sqrt() if isinstance(ck, torch.Tensor) else sc
    return _mobius_add(_mobius_matvec(W, x, sc), _expmap0(b, sc_b), ck)


def fermi_dirac(d: torch.Tensor, r: float | torch.Tensor = 2.0, t: float | torch.Tensor = 1.0) -> torch.Tensor:
    r"""Fermi-Dirac link probability :math:`P(d) = \frac{1}{e^{(d - r)/t} + 1} = \sigma\!\big((r-d)/t\big)`.

    Evaluated as a sigmoid (no overflow for large ``d``). ``t > 0`` is the temperature, ``r`` the
    radius at which the probability is 1/2.
    """
    if not isinstance(d, torch.Tensor):
        raise ValueError(f"d must be a tensor of distances; got {type(d).__name__}")
    if isinstance(t, torch.Tensor):
        if bool((t <= 0).any()):
            raise ValueError(f"temperature t must be > 0; got min t = {float(t.min())}")
    elif not t > 0:
        raise ValueError(f"temperature t must be > 0; got t = {t}")
    return torch.sigmoid((r - d) / t)
