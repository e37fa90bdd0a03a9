"""Numerical guards shared by every manifold function -- the one place where clamps live.

Every hyperbolic formula in :mod:`hgutils.manifolds` is exact on paper but has removable
singularities (``tanh(x)/x`` at 0) or domain edges (``artanh`` at 1, ``arcosh`` at 1) that float32
hits in practice. The guards below are the only clamps the package uses; each function states the
bound it applies and why, so a reader can check a number against the formula by hand.

Constants
---------
``MIN_NORM``
    Floor applied to vector norms before dividing by them (avoids 0/0 for zero vectors).
``BALL_EPS``
    Relative distance to the Poincaré ball's boundary kept by :func:`hgutils.manifolds.poincare.project`,
    per dtype: the projected radius is ``(1 - BALL_EPS[dtype]) / sqrt(c)``.
``ARTANH_EPS``
    ``artanh`` input is clamped to ``±(1 - ARTANH_EPS[dtype])``.
``TANH_MAX``
    ``tanh`` input is clamped to ``±15`` (tanh(15) == 1 in float32 and float64 to 1e-13).
``ACOSH_MIN``
    ``arcosh`` input is clamped to ``>= 1 + ACOSH_MIN[dtype]`` so its derivative stays finite.

Curvature
---------
:func:`curvature` is the one implementation of the curvature/broadcasting convention stated in
:mod:`hgutils.manifolds`, built from :func:`batch_curvature` (validation: values by
:func:`check_curvature`, shape by :func:`check_batch_scalar`) and :func:`as_keepdim`;
:func:`reduced_curvature` is its form for functions that reduce over an axis of points.
:mod:`~hgutils.manifolds.poincare` calls :func:`curvature`; :mod:`~hgutils.manifolds.lorentz`, whose
formulas need ``1/sqrt(c)``, calls :func:`batch_curvature` and :func:`as_keepdim` (the same
validation and shapes) and takes ``rsqrt`` itself.
"""

from __future__ import annotations

import math

import torch

MIN_NORM: float = 1e-15
TANH_MAX: float = 15.0
BALL_EPS: dict[torch.dtype, float] = {
    torch.float16: 4e-3,
    torch.bfloat16: 4e-3,
    torch.float32: 4e-3,
    torch.float64: 1e-5,
}
ARTANH_EPS: dict[torch.dtype, float] = {
    torch.float16: 1e-3,
    torch.bfloat16: 1e-2,
    torch.float32: 1e-7,
    torch.float64: 1e-15,
}
ACOSH_MIN: dict[torch.dtype, float] = {
    torch.float16: 1e-3,
    torch.bfloat16: 1e-2,
    torch.float32: 1e-7,
    torch.float64: 1e-15,
}


def eps_for(table: dict[torch.dtype, float], dtype: torch.dtype) -> float:
    """Look up a per-dtype tolerance, falling back to the float32 value for unknown dtypes."""
    return table.get(dtype, table[torch.float32])


def clamp_min_norm(x: torch.Tensor, dim: int = -1, keepdim: bool = True) -> torch.Tensor:
    r"""Euclidean norm along ``dim`` floored at ``MIN_NORM``: :math:`\max(\|x\|, 10^{-15})`."""
    return x.norm(dim=dim, keepdim=keepdim, p=2).clamp_min(MIN_NORM)


def tanh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\tanh(\mathrm{clamp}(x, -15, 15))` (saturates exactly, no overflow in the backward)."""
    return torch.tanh(x.clamp(-TANH_MAX, TANH_MAX))


def artanh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\operatorname{artanh}(x)` with ``|x| <= 1 - ARTANH_EPS[dtype]``.

    Computed as :math:`\tfrac12(\log(1+x) - \log(1-x))` via ``log1p`` for accuracy near 0.
    """
    e = eps_for(ARTANH_EPS, x.dtype)
    x = x.clamp(-1 + e, 1 - e)
    return 0.5 * (torch.log1p(x) - torch.log1p(-x))


def arcosh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\operatorname{arcosh}(x) = \log(x + \sqrt{x^2 - 1})` with ``x >= 1 + ACOSH_MIN[dtype]``.

    Written as :math:`\log(x + \sqrt{(x-1)(x+1)})` so large ``x`` (Lorentz times up to 1e4 in
    float32) does not overflow ``x**2``.
    """
    e = eps_for(ACOSH_MIN, x.dtype)
    x = x.clamp_min(1 + e)
    return torch.log(x + torch.sqrt((x - 1) * (x + 1)))


def arsinh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\operatorname{arsinh}(x) = \operatorname{sign}(x)\log(|x| + \sqrt{x^2+1})`, via ``torch.asinh``.

    ``torch.asinh`` is odd-symmetric and stays finite for every finite input (the textbook formula
    overflows ``x**2`` in float32 above ``|x| ~ 1.8e19``); its gradient ``1/sqrt(x^2+1)`` tends to 0
    there instead of producing ``inf``. Kept as a named guard so every module uses the same one.
    """
    return torch.asinh(x)


def check_curvature(c: float | torch.Tensor) -> torch.Tensor | float:
    """Validate a curvature magnitude ``c > 0`` (the sectional curvature is ``-c``).

    Raises
    ------
    ValueError
        If any entry of ``c`` is not strictly positive or not finite.
    """
    if isinstance(c, torch.Tensor):
        if not bool(torch.all(torch.isfinite(c))) or bool(torch.any(c <= 0)):
            raise ValueError(
                "curvature magnitude c must be finite and > 0 (sectional curvature is -c); "
                f"got min c = {float(c.min())}"
            )
        return c
    if not (c > 0) or c != c or c == float("inf"):
        raise ValueError(f"curvature magnitude c must be finite and > 0 (sectional curvature is -c); got c = {c}")
    return c


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two shapes broadcast against each other (aligned from the right).

    A plain-Python check: ``torch.broadcast_shapes`` costs tens of microseconds per call, which is
    measurable on the small ops this package is called with.
    """
    return all(i == j or i == 1 or j == 1 for i, j in zip(reversed(a), reversed(b)))


def check_batch_scalar(
    name: str, t: torch.Tensor, *batch_shapes: tuple[int, ...], what: str = "the points' shape without the last dim"
) -> None:
    """Raise ``ValueError`` unless the tensor ``t`` (a per-point scalar such as ``c``) fits the batch shapes.

    ``t`` must broadcast with every shape in ``batch_shapes`` and have no more dimensions than the
    longest of them. The second condition rejects geoopt-style keep-dim scalars ``[B, 1]`` next to
    points ``[B, n]`` (batch shape ``[B]``), which would otherwise broadcast silently to ``[B, B]``.
    With no ``batch_shapes`` nothing is checked.
    """
    if not batch_shapes:
        return
    nb = max(len(s) for s in batch_shapes)
    if t.dim() > nb or not all(broadcastable(t.shape, s) for s in batch_shapes):
        raise ValueError(
            f"{name} must be a number or a tensor broadcastable to the batch shape ({what}), "
            f"e.g. {tuple(batch_shapes[0])}; got shape {tuple(t.shape)}"
        )


def batch_curvature(c: float | torch.Tensor, *like: torch.Tensor) -> float | torch.Tensor:
    """Validate ``c`` against the points ``like`` and return it in *batch* form.

    Values are checked by :func:`check_curvature`; a tensor ``c`` with dimensions must fit the batch
    shape ``x.shape[:-1]`` of every ``x`` in ``like`` (:func:`check_batch_scalar`). Returns
    ``float(c)`` for a number and the tensor itself otherwise, so it broadcasts against batch-shaped
    quantities (distances, inner products). Use :func:`curvature` for ``[..., 1]``-shaped ones.
    """
    check_curvature(c)
    if isinstance(c, torch.Tensor):
        if c.dim() > 0 and like:
            check_batch_scalar("c", c, *(x.shape[:-1] for x in like))
        return c
    return float(c)


def as_keepdim(t: float | torch.Tensor) -> float | torch.Tensor:
    """A number or a batch-shaped tensor in keep-dim form: ``t.unsqueeze(-1)`` for a tensor with
    dimensions, unchanged otherwise (a 0-d tensor broadcasts against anything as it is)."""
    if isinstance(t, torch.Tensor) and t.dim() > 0:
        return t.unsqueeze(-1)
    return t


def curvature(c: float | torch.Tensor, *like: torch.Tensor) -> tuple[float | torch.Tensor, float | torch.Tensor]:
    r"""Validate a curvature magnitude and return :math:`(c, \sqrt c)` in *keep-dim* form.

    This is the single implementation of the convention documented in :mod:`hgutils.manifolds`:

    * ``c`` is a Python number or a tensor; every entry must be finite and ``> 0`` (sectional
      curvature :math:`-c`), else ``ValueError`` (:func:`check_curvature`).
    * ``like`` are the point / tangent-vector arguments ``[..., d]`` of the calling function. A
      tensor ``c`` with dimensions must be broadcastable to their *batch shape* ``x.shape[:-1]``
      and may not have more dimensions than it (:func:`check_batch_scalar`): ``[B]`` for points
      ``[B, d]``; ``[B1, B2]``, ``[B2]`` or ``[B1, 1]`` for ``[B1, B2, d]``; a keep-dim ``[B, 1]``
      next to ``[B, d]`` raises. Called without ``like`` no shape is checked (the caller then owns it).
    * Numbers are returned as ``(float(c), math.sqrt(c))``; a 0-d tensor as ``(c, c.sqrt())``; a
      batch-shaped tensor as ``(c[..., None], c[..., None].sqrt())``, which broadcasts on the
      ``[..., 1]`` norms and coefficients the formulas are written with. Batch-shaped results
      (distances) are reduced from the keep-dim form with ``.squeeze(-1)`` by the caller, or computed
      with :func:`batch_curvature` directly.

    Autograd flows through the tensor operations to a ``c`` that requires grad.
    """
    c = batch_curvature(c, *like)
    if isinstance(c, torch.Tensor):
        if c.dim() > 0:
            c = c.unsqueeze(-1)
        return c, c.sqrt()
    return c, math.sqrt(c)


def reduced_curvature(
    c: float | torch.Tensor, out_batch: tuple[int, ...], dim: int, what: str = "output"
) -> tuple[float | torch.Tensor, float | torch.Tensor]:
    """Validate ``c`` for a reduction over the points axis ``dim`` and return it twice, in batch form.

    For functions that reduce a set of points ``[..., N, ...,  d]`` along ``dim`` (midpoints,
    centroids, dispersions) ``c`` has one entry per *set*: it must be broadcastable to the output
    batch shape ``out_batch`` (the input batch shape without ``dim``), with the same rules as
    :func:`check_batch_scalar`. Returns ``(c_out, c_in)``: ``c_out`` broadcasts against the output
    batch shape, ``c_in`` against the input batch shape (``c_out`` with a singleton inserted at
    ``dim``, ``0 <= dim <= len(out_batch)``). Numbers (as ``float``) and 0-d tensors come back unchanged.
    """
    check_curvature(c)
    if not isinstance(c, torch.Tensor):
        c = float(c)
        return c, c
    if c.dim() == 0:
        return c, c
    check_batch_scalar(
        "c", c, tuple(out_batch), what=f"the {what} batch shape: the points' batch shape without the reduced axis"
    )
    c_out = c.reshape((1,) * (len(out_batch) - c.dim()) + tuple(c.shape))
    return c_out, c_out.unsqueeze(dim)


def clamp_pos(x: torch.Tensor, floor: float = MIN_NORM) -> torch.Tensor:
    r""":math:`\max(x, \text{floor})` for quantities that are positive in exact arithmetic.

    Used for Lorentz squared norms before a square root (``floor = MIN_NORM**2``: the root of a
    zero tangent vector or of the chord between coincident points is ``1e-15``, never a 0/0 or an
    infinite gradient) and for denominators such as ``1 - c||p||^2`` that float32 can round to 0.
    """
    return x.clamp_min(floor)
