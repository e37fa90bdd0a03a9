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
"""

from __future__ import annotations

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


def clamp_pos(x: torch.Tensor, floor: float = MIN_NORM) -> torch.Tensor:
    r""":math:`\max(x, \text{floor})` for quantities that are positive in exact arithmetic.

    Used for Lorentz squared norms before a square root (``floor = MIN_NORM**2``: the root of a
    zero tangent vector or of the chord between coincident points is ``1e-15``, never a 0/0 or an
    infinite gradient) and for denominators such as ``1 - c||p||^2`` that float32 can round to 0.
    """
    return x.clamp_min(floor)
