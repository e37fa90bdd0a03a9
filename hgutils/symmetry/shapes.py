r"""Exact 2D signed distance functions (negative inside) with their true symmetry groups.

A :class:`Shape` has ``sdf(x [..., 2]) -> [...]`` (exact Euclidean signed distance, computed in
``x``'s dtype), ``is_symmetry(g)`` (membership of an O(2) element in :math:`G_{true}`, decided
exactly from the geometry, not from samples), and samplers for training points.

The shapes are centred at the origin and oriented so that their groups are subgroups of the
candidate elements (:func:`hgutils.symmetry.groups.candidate_elements`):

=================  ===============================================  ==========================
name               geometry                                         :math:`G_{true}`
=================  ===============================================  ==========================
``square``         half side 0.5, axis aligned                      D4 (axes 0/45/90/135°)
``triangle``       equilateral, circumradius 0.6, a vertex at 90°   D3 (R120, axes 30/90/150°)
``hexagon``        regular, circumradius 0.6, a vertex at 0°        D6 (R60, axes k·30°)
``circle``         radius 0.5                                       O(2)
``rectangle``      half extents 0.6 × 0.35                          D2 (R180, axes 0/90°)
``asymmetric``     irregular pentagon                               {I}
=================  ===============================================  ==========================

Polygon distances: :math:`|d(x)| = \min_i \|x - \Pi_{e_i}(x)\|` over the edges (projection onto
each segment, clamped to its ends), sign from the even–odd crossing rule; this is exact for any
simple polygon. The circle's is :math:`\|x\| - r`.

Training points (:meth:`Shape.sample`) are a mixture: a fraction uniform in a *domain*
(:mod:`hgutils.symmetry.domains`; the disk of radius ``radius`` by default, or the square
:math:`[-\text{radius}, \text{radius}]^2`) and the rest boundary points with isotropic Gaussian
jitter. The jittered boundary is :math:`G_{true}`-invariant (an isotropic kernel commutes with every
orthogonal map), the bulk is :math:`G_{domain}`-invariant, so the density's group is
:math:`G_{true} \cap G_{domain}` (:meth:`Shape.sampling_symmetry`): all of :math:`G_{true}` on the
disk, only :math:`G_{true} \cap D_4` on the square (for the triangle: the identity and the reflection
about the vertical axis).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch

from hgutils.symmetry.domains import Domain, get_domain
from hgutils.symmetry.groups import GroupElement, as_matrix, check_points

__all__ = ["Shape", "PolygonShape", "CircleShape", "regular_polygon", "default_shapes", "get_shape"]


class Shape(ABC):
    """Base class: a planar shape with an exact SDF and an exact symmetry-membership test."""

    name: str = "shape"
    group_name: str = "?"

    @abstractmethod
    def sdf(self, x: torch.Tensor) -> torch.Tensor:
        """Exact signed distance at ``x [..., 2]`` (negative inside), in ``x``'s dtype."""

    @abstractmethod
    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        """Whether the O(2) element ``g`` maps the shape onto itself (``g`` in :math:`G_{true}`)."""

    @abstractmethod
    def boundary_points(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32
    ) -> torch.Tensor:
        """``n`` points uniform (by arc length) on the boundary."""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.sdf(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, G_true={self.group_name})"

    def symmetry_subset(self, elements: list[GroupElement], tol: float = 1e-9) -> list[GroupElement]:
        """The elements of ``elements`` that lie in :math:`G_{true}`."""
        return [g for g in elements if self.is_symmetry(g, tol)]

    def sample(
        self,
        n: int,
        generator: torch.Generator | None = None,
        *,
        near_fraction: float = 0.5,
        noise: float = 0.05,
        radius: float = 1.0,
        domain: str | Domain = "disk",
        dtype: torch.dtype = torch.float32,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Training points and targets ``(x [n, 2], sdf(x) [n])``.

        ``round(near_fraction * n)`` points are boundary points plus :math:`N(0, \\text{noise}^2 I)`
        jitter; the rest are uniform in ``domain``: ``"disk"`` (radius ``radius``) or ``"square"``
        (:math:`[-\\text{radius}, \\text{radius}]^2`), or any :class:`~hgutils.symmetry.domains.Domain`.
        The density is invariant exactly under :meth:`sampling_symmetry`.
        """
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int; got {n!r}")
        if not 0.0 <= near_fraction <= 1.0:
            raise ValueError(f"near_fraction must be in [0, 1]; got {near_fraction}")
        dom = get_domain(domain, radius)
        n_near = int(round(near_fraction * n))
        unif = dom.sample(n - n_near, generator, torch.float64)
        near = self.boundary_points(n_near, generator, torch.float64)
        near = near + noise * torch.randn(n_near, 2, generator=generator, dtype=torch.float64)
        x = torch.cat((unif, near), dim=0)
        return x.to(dtype), self.sdf(x).to(dtype)

    def sampling_symmetry(
        self, g: GroupElement | torch.Tensor, domain: str | Domain = "disk", near_fraction: float = 0.5
    ) -> bool:
        """Whether the density of :meth:`sample` is ``g``-invariant: ``g`` in :math:`G_{true}` (needed by the
        jittered boundary part, if any) and in the domain's group (needed by the uniform part, if any)."""
        if not 0.0 <= near_fraction <= 1.0:
            raise ValueError(f"near_fraction must be in [0, 1]; got {near_fraction}")
        dom = get_domain(domain)
        bulk = near_fraction == 1.0 or dom.is_symmetry(g)
        near = near_fraction == 0.0 or self.is_symmetry(g)
        return bool(bulk and near)


class PolygonShape(Shape):
    """A simple polygon given by its vertices (counter-clockwise or clockwise).

    ``is_symmetry(g)``: ``g`` maps the set of edges (unordered vertex pairs) onto itself -- exactly
    the linear isometries that preserve the polygon.
    """

    def __init__(self, vertices: torch.Tensor, name: str, group_name: str = "?") -> None:
        v = torch.as_tensor(vertices, dtype=torch.float64)
        if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3:
            raise ValueError(f"vertices must have shape [n >= 3, 2]; got {tuple(v.shape)}")
        self.vertices = v
        self.name = name
        self.group_name = group_name

    def sdf(self, x: torch.Tensor) -> torch.Tensor:
        """Exact signed distance to the polygon (negative inside), in ``x``'s dtype."""
        check_points(x, f"{self.name}.sdf")
        v = self.vertices.to(dtype=x.dtype, device=x.device)
        a, b = v, torch.roll(v, -1, dims=0)  # edges a_i -> b_i
        e = b - a  # [n, 2]
        w = x[..., None, :] - a  # [..., n, 2]
        t = ((w * e).sum(-1) / (e * e).sum(-1)).clamp(0.0, 1.0)
        dist = (w - t[..., None] * e).norm(dim=-1).amin(dim=-1)
        px, py = x[..., 0:1], x[..., 1:2]
        ay, by = a[:, 1], b[:, 1]
        straddle = (ay > py) != (by > py)
        denom = torch.where(straddle, by - ay, torch.ones_like(by - ay))
        x_cross = a[:, 0] + (py - ay) * (b[:, 0] - a[:, 0]) / denom
        crossings = (straddle & (px < x_cross)).sum(-1)
        inside = crossings % 2 == 1
        return torch.where(inside, -dist, dist)

    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        m = as_matrix(g)
        v = self.vertices
        gv = v @ m.T
        dmat = (gv[:, None, :] - v[None, :, :]).norm(dim=-1)
        idx = dmat.argmin(dim=1)
        if (dmat.gather(1, idx[:, None]) > tol).any() or len(set(idx.tolist())) != len(v):
            return False
        n = len(v)
        edges = {frozenset((i, (i + 1) % n)) for i in range(n)}
        moved = {frozenset((int(idx[i]), int(idx[(i + 1) % n]))) for i in range(n)}
        return edges == moved

    def boundary_points(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32
    ) -> torch.Tensor:
        """``n`` points uniform (by arc length) on the boundary."""
        v = self.vertices
        e = torch.roll(v, -1, dims=0) - v
        lengths = e.norm(dim=1)
        if n == 0:
            return torch.zeros(0, 2, dtype=dtype)
        k = torch.multinomial(lengths / lengths.sum(), n, replacement=True, generator=generator)
        t = torch.rand(n, 1, generator=generator, dtype=torch.float64)
        return (v[k] + t * e[k]).to(dtype)


class CircleShape(Shape):
    """Disk of radius ``r`` centred at the origin; :math:`G_{true} = O(2)`."""

    def __init__(self, r: float = 0.5, name: str = "circle") -> None:
        if not r > 0:
            raise ValueError(f"radius must be positive; got {r}")
        self.r = float(r)
        self.name = name
        self.group_name = "O(2)"

    def sdf(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`\|x\| - r`."""
        check_points(x, f"{self.name}.sdf")
        return x.norm(dim=-1) - self.r

    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        as_matrix(g)  # validates orthogonality; every orthogonal map fixes the centred disk
        return True

    def boundary_points(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32
    ) -> torch.Tensor:
        a = 2 * math.pi * torch.rand(n, generator=generator, dtype=torch.float64)
        return (self.r * torch.stack((torch.cos(a), torch.sin(a)), dim=-1)).to(dtype)


def regular_polygon(
    n: int, circumradius: float, first_vertex_deg: float, name: str, group_name: str | None = None
) -> PolygonShape:
    """Regular ``n``-gon centred at 0 with a vertex at angle ``first_vertex_deg`` (G_true = D_n)."""
    if n < 3:
        raise ValueError(f"a regular polygon needs n >= 3 sides; got {n}")
    ang = [math.radians(first_vertex_deg + 360.0 * k / n) for k in range(n)]
    v = torch.tensor([[circumradius * math.cos(a), circumradius * math.sin(a)] for a in ang], dtype=torch.float64)
    return PolygonShape(v, name, group_name or f"D{n}")


def default_shapes() -> list[Shape]:
    """The six shapes of notebook 06, in order: square, triangle, hexagon, circle, rectangle, asymmetric."""
    return [
        PolygonShape(torch.tensor([[0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5], [0.5, -0.5]]), "square", "D4"),
        regular_polygon(3, 0.6, 90.0, "triangle", "D3"),
        regular_polygon(6, 0.6, 0.0, "hexagon", "D6"),
        CircleShape(0.5, "circle"),
        PolygonShape(torch.tensor([[0.6, 0.35], [-0.6, 0.35], [-0.6, -0.35], [0.6, -0.35]]), "rectangle", "D2"),
        PolygonShape(
            torch.tensor([[-0.5, -0.4], [0.55, -0.3], [0.35, 0.2], [-0.05, 0.55], [-0.45, 0.15]]), "asymmetric", "{I}"
        ),
    ]


def get_shape(name: str) -> Shape:
    """One of :func:`default_shapes` by name."""
    shapes = {s.name: s for s in default_shapes()}
    if name not in shapes:
        raise ValueError(f"unknown shape {name!r}; choose from {sorted(shapes)}")
    return shapes[name]
