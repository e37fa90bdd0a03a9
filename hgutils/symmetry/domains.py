r"""Training domains of a neural field and the symmetry of a sampling density.

A neural field :math:`f(x) = F(\varphi(x))` is fitted on points drawn from a density :math:`p` on the
plane. The regression problem :math:`\min_f \mathbb{E}_{x\sim p}(f(x) - f^*(x))^2` is invariant under an
orthogonal :math:`g` only when both the target (:math:`f^*(g^{-1}x) = f^*(x)`, :math:`g \in G_{true}`)
*and* the density (:math:`p(gx) = p(x)`) are; the group of the problem is :math:`G_{true} \cap G_p`.
Neural fields are commonly fitted on the box :math:`[-1, 1]^2`, whose uniform density keeps only
:math:`D_4`; a disk keeps all of :math:`O(2)` (arXiv:2607.03108, §3.1, takes :math:`X = \mathbb{R}^2`
and does not state its training distribution there).

- :class:`DiskDomain` -- uniform in the disk of radius ``r`` (:math:`G_p = O(2)`).
- :class:`SquareDomain` -- uniform in :math:`[-h, h]^2` (:math:`G_p = D_4`: the signed permutation
  matrices, i.e. rotations by multiples of 90° and reflections about the axes at 0/45/90/135°).
- :func:`get_domain` -- a domain by name (``"disk"`` or ``"square"``).
- :func:`stream_seed` -- the seed of one random stream (points or minibatches) of a training pool
  drawn on a named domain, distinct per (seed index, domain, shape, stream).
- :func:`density_symmetry_z` / :func:`density_symmetry_profile` -- a two-sided test of
  :math:`p(gx) = p(x)` from one sample, through the empirical characteristic function.

The test: :math:`p` is ``g``-invariant iff its characteristic function satisfies
:math:`\psi(k) = \mathbb{E}\,e^{ik^\top x} = \mathbb{E}\,e^{ik^\top gx}` for every wave vector
:math:`k`. For a sample :math:`x_1..x_n`, the paired differences
:math:`d_i = e^{ik^\top x_i} - e^{ik^\top g x_i}` are i.i.d. with mean 0 under invariance, so
:math:`z = \bar d / (s_d/\sqrt n)` (real and imaginary parts separately) is approximately standard
normal; :func:`density_symmetry_z` returns :math:`\max |z|` over a fixed set of wave vectors
(Fourier moments of the sample). A value of a few units is sampling noise; an element that breaks the
density gives :math:`|z|` growing like :math:`\sqrt n`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch

from hgutils.symmetry.groups import GroupElement, as_matrix, check_points

__all__ = [
    "DOMAINS",
    "Domain",
    "DiskDomain",
    "SquareDomain",
    "get_domain",
    "stream_seed",
    "default_wavevectors",
    "density_symmetry_z",
    "density_symmetry_profile",
]

DOMAINS: tuple[str, ...] = ("disk", "square")
"""Names accepted by :func:`get_domain`."""


class Domain(ABC):
    """A bounded region of the plane with its uniform sampler and its exact symmetry test."""

    name: str = "domain"
    group_name: str = "?"

    @abstractmethod
    def sample(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        """``n`` points ``[n, 2]`` uniform in the domain."""

    @abstractmethod
    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        """Whether the orthogonal ``g`` maps the domain onto itself (its uniform density is then ``g``-invariant)."""

    @abstractmethod
    def contains(self, x: torch.Tensor, tol: float = 1e-12) -> torch.Tensor:
        """Boolean mask ``[...]``: which points ``x [..., 2]`` lie in the (closed) domain."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, G={self.group_name})"


def _check_n(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n must be a non-negative int; got {n!r}")


class DiskDomain(Domain):
    r"""Uniform in the disk :math:`\|x\| \le r`: :math:`x = r\sqrt{u}\,(\cos a, \sin a)`,
    :math:`u \sim U[0, 1]`, :math:`a \sim U[0, 2\pi)`. Every orthogonal map preserves it."""

    def __init__(self, radius: float = 1.0) -> None:
        if not radius > 0:
            raise ValueError(f"disk radius must be positive; got {radius}")
        self.radius = float(radius)
        self.name = "disk"
        self.group_name = "O(2)"

    def sample(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        _check_n(n)
        r = self.radius * torch.rand(n, generator=generator, dtype=torch.float64).sqrt()
        a = 2 * math.pi * torch.rand(n, generator=generator, dtype=torch.float64)
        return torch.stack((r * torch.cos(a), r * torch.sin(a)), dim=-1).to(dtype)

    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        as_matrix(g)  # validates orthogonality; every orthogonal map fixes the centred disk
        return True

    def contains(self, x: torch.Tensor, tol: float = 1e-12) -> torch.Tensor:
        check_points(x, "DiskDomain.contains")
        return x.norm(dim=-1) <= self.radius + tol


class SquareDomain(Domain):
    r"""Uniform in the square :math:`[-h, h]^2` (``half_side`` :math:`h`; the common neural-field box
    is :math:`h = 1`). An orthogonal :math:`g` maps it onto itself iff :math:`g` is a signed permutation
    matrix (it must send the vertices :math:`(\pm h, \pm h)` to vertices), i.e. :math:`g \in D_4`."""

    def __init__(self, half_side: float = 1.0) -> None:
        if not half_side > 0:
            raise ValueError(f"square half side must be positive; got {half_side}")
        self.half_side = float(half_side)
        self.name = "square"
        self.group_name = "D4"

    def sample(
        self, n: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        _check_n(n)
        u = torch.rand(n, 2, generator=generator, dtype=torch.float64)
        return ((2.0 * u - 1.0) * self.half_side).to(dtype)

    def is_symmetry(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> bool:
        m = as_matrix(g).abs()
        near_one = (m - 1.0).abs() <= tol
        near_zero = m <= tol
        return bool((near_one | near_zero).all() and (near_one.sum(0) == 1).all() and (near_one.sum(1) == 1).all())

    def contains(self, x: torch.Tensor, tol: float = 1e-12) -> torch.Tensor:
        check_points(x, "SquareDomain.contains")
        return x.abs().amax(dim=-1) <= self.half_side + tol


def get_domain(domain: str | Domain, size: float = 1.0) -> Domain:
    """``"disk"`` (radius ``size``) or ``"square"`` (half side ``size``); a :class:`Domain` passes through."""
    if isinstance(domain, Domain):
        return domain
    if domain == "disk":
        return DiskDomain(size)
    if domain == "square":
        return SquareDomain(size)
    raise ValueError(f"domain must be one of {DOMAINS} or a Domain; got {domain!r}")


def stream_seed(seed: int, s: int, domain: str, shape_index: int, stream: int) -> int:
    """The seed of one random stream of the training pool of (seed index ``s``, ``domain``, shape
    ``shape_index``) under base seed ``seed``: ``stream`` 0 draws the pool's points, 1 its minibatches.

    ``seed·100003 + s·1009 + shape_index + 50000017·DOMAINS.index(domain) + 1000003·stream``: every
    (seed index, domain, shape, stream) of a grid gets its own generator, and the disk's point streams
    (domain index 0, stream 0) keep the seeds notebook 06 used before the domain became a factor.
    """
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {DOMAINS}; got {domain!r}")
    return seed * 100_003 + s * 1009 + shape_index + 50_000_017 * DOMAINS.index(domain) + 1_000_003 * stream


def default_wavevectors(radii: tuple[float, ...] = (1.5, 3.0, 6.0, 12.0, 24.0), n_angles: int = 24) -> torch.Tensor:
    r"""Wave vectors :math:`k = \kappa(\cos\alpha, \sin\alpha)` for each radius :math:`\kappa` and
    ``n_angles`` angles :math:`\alpha = \pi j/\text{n\_angles}` (a half circle suffices: :math:`\psi(-k)
    = \overline{\psi(k)}`). 7.5° steps resolve the angular structure of up to 12-fold symmetries; the
    radii probe scales from the unit domain (:math:`|k| = 1.5`) to the fine angular harmonics of a
    polygon's boundary (:math:`|k| = 24`, still above the damping of a 0.05 jitter). Returns ``[m, 2]``
    float64."""
    if not radii or any(not r > 0 for r in radii):
        raise ValueError(f"radii must be a non-empty tuple of positive numbers; got {radii!r}")
    if not isinstance(n_angles, int) or n_angles < 1:
        raise ValueError(f"n_angles must be a positive int; got {n_angles!r}")
    a = torch.arange(n_angles, dtype=torch.float64) * (math.pi / n_angles)
    unit = torch.stack((torch.cos(a), torch.sin(a)), dim=-1)
    return torch.cat([r * unit for r in radii])


def density_symmetry_profile(
    x: torch.Tensor, elements: Sequence[GroupElement | torch.Tensor], wavevectors: torch.Tensor | None = None
) -> torch.Tensor:
    r""":func:`density_symmetry_z` for several elements at once: ``[len(elements)]`` float64.

    Uses :math:`e^{ik^\top gx} = e^{i(g^\top k)^\top x}`: the phases are computed once for the union of
    the wave vectors :math:`k` and :math:`g^\top k` (duplicates merged), then every element only pairs
    columns, so a whole candidate set costs little more than one element.
    """
    check_points(x, "density_symmetry_profile")
    if x.dim() != 2:
        raise ValueError(f"density_symmetry_profile expects a sample [n, 2]; got shape {tuple(x.shape)}")
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"density_symmetry_profile needs at least 2 points; got {n}")
    mats = [as_matrix(g) for g in elements]
    k = default_wavevectors() if wavevectors is None else torch.as_tensor(wavevectors, dtype=torch.float64)
    if k.dim() != 2 or k.shape[1] != 2 or k.shape[0] < 1:
        raise ValueError(f"wavevectors must be [m, 2] with m >= 1; got shape {tuple(k.shape)}")
    m = k.shape[0]
    allk = torch.cat([k] + [k @ g for g in mats])  # row k ↦ (g^T k)^T = k^T g
    uniq, inv = torch.unique(torch.round(allk * 1e9) / 1e9, dim=0, return_inverse=True)
    ph = uniq @ x.to(torch.float64).T  # [u, n]: one row per distinct wave vector
    base = inv[:m]
    out = torch.zeros(len(mats), dtype=torch.float64)
    # sufficient statistics of the paired differences: row sums, row sums of squares, and the Gram
    # of the rows give mean(a - b) and mean((a - b)^2) for every (k, g^T k) pair without a gather
    stats = []
    for f in (torch.cos(ph), torch.sin(ph)):
        stats.append((f.sum(1), (f * f).sum(1), f @ f.T))
    for e in range(len(mats)):
        moved = inv[m * (e + 1) : m * (e + 2)]
        zs = []
        for s1, s2, gram in stats:
            mean = (s1[base] - s1[moved]) / n
            sq = (s2[base] + s2[moved] - 2.0 * gram[base, moved]) / n
            sd = (sq - mean * mean).clamp_min(0.0).mul(n / (n - 1)).sqrt()
            zs.append(torch.where(sd > 1e-12, mean.abs() * math.sqrt(n) / sd.clamp_min(1e-300), torch.zeros_like(sd)))
        out[e] = torch.cat(zs).max()
    return out


def density_symmetry_z(
    x: torch.Tensor, g: GroupElement | torch.Tensor, wavevectors: torch.Tensor | None = None
) -> float:
    r""":math:`\max_{k,\,\Re/\Im} |z|` for :math:`H_0: p(gx) = p(x)` from the sample ``x [n, 2]`` (module
    docstring): :math:`z = \sqrt n\,\bar d / s_d` with :math:`d_i = e^{ik^\top x_i} - e^{ik^\top g x_i}`.

    About standard-normal maxima (below ~5 for the default 240 tests) when the density is
    ``g``-invariant; grows like :math:`\sqrt n` when it is not. ``g = I`` gives 0.
    """
    return float(density_symmetry_profile(x, [g], wavevectors)[0])
