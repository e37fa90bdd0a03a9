r"""Elements of the orthogonal group O(2) as named 2×2 matrices.

A *group element* here is a :class:`GroupElement`: a name, a kind (``"rotation"`` or
``"reflection"``), an angle in degrees and its float64 matrix

.. math::
    R_\theta = \begin{pmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{pmatrix},
    \qquad
    S_\alpha = \begin{pmatrix}\cos 2\alpha & \sin 2\alpha\\ \sin 2\alpha & -\cos 2\alpha\end{pmatrix},

where :math:`R_\theta` rotates by :math:`\theta` counter-clockwise and :math:`S_\alpha` reflects about
the line through the origin at angle :math:`\alpha` (so :math:`S_\alpha = R_{2\alpha} S_0`).
Entries that are within a few ulps of :math:`0, \pm\tfrac12, \pm 1` are snapped to those values, so
that e.g. ``rotation(90)`` is the exact integer matrix and exact lifts of dyadic encodings stay exact.

Helpers: :func:`dihedral` (the 2n elements of :math:`D_n` whose reflection axes include the x-axis),
:func:`rotation_sweep` (evenly spaced rotations over 0–360°), :func:`candidate_elements` (the union
of :math:`D_4` and :math:`D_6` used as heatmap columns) and :func:`as_matrix`, which validates any
matrix-like input and raises ``ValueError`` for non-orthogonal "group elements".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

ORTHO_TOL: float = 1e-8
"""Tolerance on :math:`\\|g^\\top g - I\\|_\\infty` accepted by :func:`as_matrix`."""

_SNAP = (0.0, 0.5, -0.5, 1.0, -1.0)


def _snap(m: torch.Tensor) -> torch.Tensor:
    out = m.clone()
    for v in _SNAP:
        out = torch.where((out - v).abs() < 8e-16, torch.full_like(out, v), out)
    return out


def _fmt_angle(deg: float) -> str:
    r = round(deg, 6)
    return str(int(r)) if float(r).is_integer() else f"{r:g}"


@dataclass(frozen=True)
class GroupElement:
    """A named element of O(2).

    Attributes
    ----------
    name:
        Short label, ``"R90"`` (rotation by 90°) or ``"S45"`` (reflection about the 45° line).
    kind:
        ``"rotation"`` or ``"reflection"``.
    angle:
        Rotation angle in degrees (``[0, 360)``) or reflection-axis angle in degrees (``[0, 180)``).
    matrix:
        The float64 ``[2, 2]`` matrix acting on column vectors: ``x ↦ g x``.
    """

    name: str
    kind: str
    angle: float
    matrix: torch.Tensor = field(repr=False, compare=False)

    @property
    def order(self) -> int | None:
        """Smallest ``k ≥ 1`` with ``g^k = I`` if it is at most 360, else ``None``."""
        if self.kind == "reflection":
            return 2
        for k in range(1, 361):
            r = (self.angle * k) % 360.0
            if min(r, 360.0 - r) < 1e-9:
                return k
        return None


def rotation(degrees: float) -> GroupElement:
    r"""Rotation :math:`R_\theta` by ``degrees`` counter-clockwise (angle reduced to ``[0, 360)``)."""
    deg = float(degrees) % 360.0
    if abs(deg - 360.0) < 1e-9:
        deg = 0.0
    t = math.radians(deg)
    m = torch.tensor([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]], dtype=torch.float64)
    return GroupElement(f"R{_fmt_angle(deg)}", "rotation", deg, _snap(m))


def reflection(axis_degrees: float) -> GroupElement:
    r"""Reflection :math:`S_\alpha` about the line at ``axis_degrees`` (reduced to ``[0, 180)``)."""
    deg = float(axis_degrees) % 180.0
    if abs(deg - 180.0) < 1e-9:
        deg = 0.0
    t = math.radians(2.0 * deg)
    m = torch.tensor([[math.cos(t), math.sin(t)], [math.sin(t), -math.cos(t)]], dtype=torch.float64)
    return GroupElement(f"S{_fmt_angle(deg)}", "reflection", deg, _snap(m))


IDENTITY = rotation(0.0)


def as_matrix(g: GroupElement | torch.Tensor | np.ndarray, tol: float = ORTHO_TOL) -> torch.Tensor:
    """The float64 ``[2, 2]`` matrix of ``g``, validated to be orthogonal.

    Raises
    ------
    ValueError
        If ``g`` is not a 2×2 matrix, is not finite, or :math:`\\max|g^\\top g - I| > tol`.
    """
    m = g.matrix if isinstance(g, GroupElement) else torch.as_tensor(np.asarray(g), dtype=torch.float64)
    m = m.to(torch.float64)
    if m.shape != (2, 2):
        raise ValueError(f"a group element must be a 2x2 matrix; got shape {tuple(m.shape)}")
    if not torch.isfinite(m).all():
        raise ValueError(f"group element has non-finite entries: {m.tolist()}")
    err = (m.T @ m - torch.eye(2, dtype=torch.float64)).abs().max().item()
    if err > tol:
        raise ValueError(
            f"a group element must be orthogonal (g^T g = I); max |g^T g - I| = {err:.3g} > {tol:g} "
            f"for g = {m.tolist()}"
        )
    return m


def check_points(x: torch.Tensor, who: str) -> None:
    """Raise ``ValueError`` unless ``x`` is a floating-point tensor of planar points ``[..., 2]``."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{who} expects a torch.Tensor of shape [..., 2]; got {type(x).__name__}")
    if x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"{who} expects points of shape [..., 2]; got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"{who} expects a floating-point tensor; got dtype {x.dtype}")


def element_from_matrix(m: torch.Tensor | np.ndarray, tol: float = ORTHO_TOL) -> GroupElement:
    """Name an orthogonal matrix: the rotation or reflection it is (validated by :func:`as_matrix`)."""
    m = as_matrix(m, tol)
    det = torch.linalg.det(m).item()
    if det > 0:
        deg = math.degrees(math.atan2(m[1, 0].item(), m[0, 0].item())) % 360.0
        out = rotation(deg)
    else:
        deg = math.degrees(math.atan2(m[1, 0].item(), m[0, 0].item())) / 2.0 % 180.0
        out = reflection(deg)
    # keep the caller's exact matrix (rounding in atan2 must not change it)
    return GroupElement(out.name, out.kind, out.angle, m.clone())


def compose(g: GroupElement, h: GroupElement) -> GroupElement:
    """The product ``g h`` (first ``h``, then ``g``), named by :func:`element_from_matrix`."""
    return element_from_matrix(_snap(as_matrix(g) @ as_matrix(h)))


def inverse(g: GroupElement) -> GroupElement:
    """The inverse element (:math:`g^{-1} = g^\\top` for orthogonal ``g``)."""
    return element_from_matrix(as_matrix(g).T.contiguous())


def dihedral(n: int) -> list[GroupElement]:
    r"""The dihedral group :math:`D_n` (order ``2n``): rotations by :math:`360k/n` degrees, then the
    reflections about the axes at :math:`180k/n` degrees, ``k = 0..n-1``.

    ``dihedral(1)`` is ``{I, S0}``; ``dihedral(2)`` is the rectangle group ``{I, R180, S0, S90}``.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"dihedral(n) needs an integer n >= 1; got {n!r}")
    return [rotation(360.0 * k / n) for k in range(n)] + [reflection(180.0 * k / n) for k in range(n)]


def cyclic(n: int) -> list[GroupElement]:
    """The rotation subgroup :math:`C_n` of :func:`dihedral`."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"cyclic(n) needs an integer n >= 1; got {n!r}")
    return [rotation(360.0 * k / n) for k in range(n)]


def rotation_sweep(num: int) -> list[GroupElement]:
    """``num`` evenly spaced rotations ``0, 360/num, ..., 360 (num-1)/num`` degrees."""
    if not isinstance(num, int) or isinstance(num, bool) or num < 1:
        raise ValueError(f"rotation_sweep(num) needs an integer num >= 1; got {num!r}")
    return [rotation(360.0 * k / num) for k in range(num)]


def candidate_elements() -> list[GroupElement]:
    """The union :math:`D_4 \\cup D_6` (16 elements): the readout heatmaps' columns.

    Rotations by 0, 60, 90, 120, 180, 240, 270, 300 degrees, then reflections about the axes at
    0, 30, 45, 60, 90, 120, 135, 150 degrees. It contains :math:`D_2, D_3, D_4, D_6` as subsets.
    """
    rots = sorted({*(360.0 * k / 4 for k in range(4)), *(360.0 * k / 6 for k in range(6))})
    refs = sorted({*(180.0 * k / 4 for k in range(4)), *(180.0 * k / 6 for k in range(6))})
    return [rotation(a) for a in rots] + [reflection(a) for a in refs]


def same_element(g: GroupElement | torch.Tensor, h: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
    """True when the two matrices agree entrywise to ``tol``."""
    return bool((as_matrix(g) - as_matrix(h)).abs().max().item() <= tol)


def contains(group: list[GroupElement], g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
    """Whether ``g`` equals (to ``tol``) one of the elements of ``group``."""
    return any(same_element(g, h, tol) for h in group)
