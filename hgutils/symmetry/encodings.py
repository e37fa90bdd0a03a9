r"""Fourier positional encodings of the plane and their exact lifts of O(2) elements.

Every encoding here is a *Fourier PE* with frequencies :math:`\omega_i \in \mathbb{R}^2` and phases
:math:`b_i`, ``i = 0..m-1``, and output dimension :math:`d = 2m`:

.. math::
    \varphi(x) = [\sin(\omega_0^\top x + b_0), \cos(\omega_0^\top x + b_0), \dots,
                  \sin(\omega_{m-1}^\top x + b_{m-1}), \cos(\omega_{m-1}^\top x + b_{m-1})].

- :class:`DyadicAxisPE` (``K = 12``, ``d = 4K = 48``): :math:`\omega = 2^k\pi e_a`, ``a ∈ {1, 2}``,
  :math:`b = 0`, ordered ``k`` outer, axis inner: :math:`[\sin(2^k\pi x_1), \cos(2^k\pi x_1),
  \sin(2^k\pi x_2), \cos(2^k\pi x_2)]_{k<K}`.
- :class:`TriAxisPE` (``K = 8``, ``d = 6K = 48``): :math:`\omega = 2^k\pi v_j` with
  :math:`v_j = R_{2\pi j/3}(1, 0)^\top`, ``k`` outer, ``j`` inner, :math:`b = 0`.
- :class:`RandomFourierPE` (``n = 24``, ``d = 2n = 48``): :math:`\omega_i \sim N(0, \sigma^2 I)`,
  :math:`b_i \sim U[0, 2\pi)`, drawn from ``seed``.

Lifts
-----
``g`` is *liftable* when there is a linear :math:`\rho(g)` with :math:`\varphi(gx) = \rho(g)\varphi(x)`
for all :math:`x`. Since :math:`\omega_i^\top g x = (g^\top\omega_i)^\top x` and plane waves with
distinct frequencies are linearly independent functions on any open set, ``g`` is liftable exactly when
:math:`g^\top` maps the frequency set into itself up to sign: :math:`g^\top\omega_i = s_i\,\omega_{\pi(i)}`
with :math:`s_i = \pm 1`. Writing :math:`\theta_j = \omega_j^\top x + b_j`, the row pair ``i`` of
:math:`\rho` is then a 2×2 block in columns :math:`\pi(i)`:

- :math:`s_i = +1`: :math:`\sin(\theta_j + \delta) = \cos\delta\sin\theta_j + \sin\delta\cos\theta_j`,
  :math:`\cos(\theta_j + \delta) = -\sin\delta\sin\theta_j + \cos\delta\cos\theta_j`, with
  :math:`\delta = b_i - b_j` (a rotation block; the identity when phases are 0);
- :math:`s_i = -1`: :math:`\sin(\beta - \theta_j) = -\cos\beta\sin\theta_j + \sin\beta\cos\theta_j`,
  :math:`\cos(\beta - \theta_j) = \sin\beta\sin\theta_j + \cos\beta\cos\theta_j`, with
  :math:`\beta = b_i + b_j` (a reflection block; ``diag(-1, 1)`` when phases are 0: sine is odd,
  cosine even).

So :math:`\rho(g)` is orthogonal: a signed permutation for the dyadic encodings, rotation/reflection
blocks for RFF. :meth:`FourierPE.lift` builds this exact :math:`\rho` when the frequency match exists
and otherwise fits :math:`\rho` by least squares over ``n_samples`` points drawn uniformly from
:math:`[-1, 1]^2`; either way it reports the relative residual
:math:`\|\Phi_g - \Phi\rho^\top\|_F / \|\Phi_g\|_F` on those points (rows :math:`\varphi(x_p)` and
:math:`\varphi(gx_p)`), which is about 1e-14 for exact lifts and far above 0.1 for non-liftable ones.

Why :math:`\sigma = 10` for RFF
-------------------------------
With a small :math:`\sigma` every feature is a slowly varying function on :math:`[-1, 1]^2` (for
:math:`\sigma\lesssim 1` it is nearly affine/quadratic there), so the 48 features span almost the same
space as their rotated copies and the *least-squares* residual of a non-liftable rotation becomes
tiny even though no exact lift exists (measured for a 90° rotation: below 1e-9 at
:math:`\sigma = 0.3`, 1e-5 at :math:`\sigma = 1`, 0.04 at :math:`\sigma = 3`, 0.8 at
:math:`\sigma = 10`; the tests and notebook 06 recompute this).
With :math:`\sigma = 10` the waves oscillate a few times across the domain and non-liftable elements
have residuals near 1, so the numerical test separates exact from approximate lifts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

from hgutils.symmetry.groups import GroupElement, as_matrix, check_points

__all__ = [
    "FourierPE",
    "DyadicAxisPE",
    "TriAxisPE",
    "RandomFourierPE",
    "liftable_set",
    "lift_table",
    "default_encodings",
]


class FourierPE:
    r"""A Fourier positional encoding :math:`\varphi(x) = [\sin(\Omega x + b), \cos(\Omega x + b)]`
    (interleaved per frequency), with exact and least-squares lifts of O(2) elements.

    Parameters
    ----------
    frequencies:
        ``[m, 2]`` frequency vectors :math:`\omega_i` (stored as float64).
    phases:
        ``[m]`` phases :math:`b_i`; ``None`` means zeros.
    name:
        Label used in tables and figures.

    Subclass it, or instantiate it directly with your own frequencies, to try another encoding.
    """

    def __init__(self, frequencies: torch.Tensor, phases: torch.Tensor | None = None, name: str = "FourierPE") -> None:
        om = torch.as_tensor(frequencies, dtype=torch.float64)
        if om.ndim != 2 or om.shape[1] != 2 or om.shape[0] < 1:
            raise ValueError(f"frequencies must have shape [m, 2] with m >= 1; got {tuple(om.shape)}")
        b = (
            torch.zeros(om.shape[0], dtype=torch.float64)
            if phases is None
            else torch.as_tensor(phases, dtype=torch.float64)
        )
        if b.shape != (om.shape[0],):
            raise ValueError(f"phases must have shape [{om.shape[0]}]; got {tuple(b.shape)}")
        if not (torch.isfinite(om).all() and torch.isfinite(b).all()):
            raise ValueError("frequencies and phases must be finite")
        self._omega = om
        self._phase = b
        self.name = name
        self._lift_cache: dict[tuple, tuple[torch.Tensor, float]] = {}
        self._domain_cache: dict[tuple, tuple[torch.Tensor, ...]] = {}

    # ------------------------------------------------------------------ basic interface
    @property
    def frequencies(self) -> torch.Tensor:
        """``[m, 2]`` float64 frequency vectors :math:`\\omega_i` (feature pair ``i``)."""
        return self._omega.clone()

    @property
    def phases(self) -> torch.Tensor:
        """``[m]`` float64 phases :math:`b_i`."""
        return self._phase.clone()

    @property
    def dim(self) -> int:
        """Output dimension ``d = 2m``."""
        return 2 * self._omega.shape[0]

    def __repr__(self) -> str:
        return f"{self.name}(d={self.dim})"

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Encode ``x [..., 2]`` to ``[..., d]`` in ``x``'s floating dtype and device."""
        check_points(x, self.name)
        om = self._omega.to(dtype=x.dtype, device=x.device)
        b = self._phase.to(dtype=x.dtype, device=x.device)
        theta = x @ om.T + b  # [..., m]
        return torch.stack((torch.sin(theta), torch.cos(theta)), dim=-1).flatten(-2)

    # ------------------------------------------------------------------ lifts
    def exact_lift(self, g: GroupElement | torch.Tensor, tol: float = 1e-9) -> torch.Tensor | None:
        r"""The exact :math:`\rho(g)` (float64 ``[d, d]``) from the frequency structure, or ``None``
        when some :math:`g^\top\omega_i` is not :math:`\pm` a frequency of the encoding (``tol`` is
        relative to :math:`\max(1, \|\omega_i\|)`)."""
        m = as_matrix(g)
        om, b = self._omega, self._phase
        moved = om @ m  # row i = (g^T ω_i)^T
        scale = om.norm(dim=1).clamp_min(1.0)
        d_plus = (moved[:, None, :] - om[None, :, :]).norm(dim=-1)  # [m, m]
        d_minus = (moved[:, None, :] + om[None, :, :]).norm(dim=-1)
        rho = torch.zeros(self.dim, self.dim, dtype=torch.float64)
        for i in range(om.shape[0]):
            tol_i = tol * scale[i].item()
            jp = int(torch.argmin(d_plus[i]))
            jm = int(torch.argmin(d_minus[i]))
            if d_plus[i, jp] <= tol_i:
                delta = (b[i] - b[jp]).item()
                c, s = math.cos(delta), math.sin(delta)
                block, j = [[c, s], [-s, c]], jp
            elif d_minus[i, jm] <= tol_i:
                beta = (b[i] + b[jm]).item()
                c, s = math.cos(beta), math.sin(beta)
                block, j = [[-c, s], [s, c]], jm
            else:
                return None
            rho[2 * i : 2 * i + 2, 2 * j : 2 * j + 2] = torch.tensor(block, dtype=torch.float64)
        return rho

    def sample_domain(self, n: int, seed: int = 0) -> torch.Tensor:
        """``n`` float64 points uniform in :math:`[-1, 1]^2` (the lift-fitting domain), from ``seed``."""
        gen = torch.Generator().manual_seed(seed)
        return torch.rand(n, 2, generator=gen, dtype=torch.float64) * 2.0 - 1.0

    def lift(
        self, g: GroupElement | torch.Tensor, *, n_samples: int = 4096, seed: int = 0, tol: float = 1e-9
    ) -> tuple[torch.Tensor, float]:
        r"""``(rho, residual)``: the linear map with :math:`\varphi(gx) \approx \rho\,\varphi(x)`.

        ``rho`` is float64 ``[d, d]``: exact (see :meth:`exact_lift`) when ``g`` permutes the
        frequencies up to sign, else the least-squares fit over ``n_samples`` points uniform in
        :math:`[-1, 1]^2`. ``residual`` is :math:`\|\Phi_g - \Phi\rho^\top\|_F / \|\Phi_g\|_F` on those
        points: ≈1e-14 for exact lifts, > 0.1 for non-liftable elements. Results are memoised per
        (matrix, n_samples, seed, tol).

        Raises
        ------
        ValueError
            If ``g`` is not an orthogonal 2×2 matrix.
        """
        m = as_matrix(g)
        key = (tuple(m.flatten().tolist()), n_samples, seed, tol)
        if key in self._lift_cache:
            rho, res = self._lift_cache[key]
            return rho.clone(), res
        dkey = (n_samples, seed)
        if dkey not in self._domain_cache:  # the sample points, Φ and its QR are shared by every g
            x = self.sample_domain(n_samples, seed)
            phi = self(x)
            q, r = torch.linalg.qr(phi)
            self._domain_cache[dkey] = (x, phi, q, r)
        x, phi, q, r = self._domain_cache[dkey]
        phi_g = self(x @ m.T)
        rho = self.exact_lift(m, tol)
        if rho is None:  # least squares Φ ρᵀ ≈ Φ_g via the cached QR of Φ
            rho = torch.linalg.solve_triangular(r, q.T @ phi_g, upper=True).T.contiguous()
        res = ((phi_g - phi @ rho.T).norm() / phi_g.norm()).item()
        self._lift_cache[key] = (rho, res)
        return rho.clone(), res

    def is_liftable(self, g: GroupElement | torch.Tensor, tol: float = 1e-6) -> bool:
        """Whether the lift residual of ``g`` is below ``tol``."""
        return self.lift(g)[1] < tol

    def liftable_set(self, elements: Iterable[GroupElement], tol: float = 1e-6) -> list[GroupElement]:
        """Method form of :func:`liftable_set`."""
        return liftable_set(self, elements, tol)


class DyadicAxisPE(FourierPE):
    r"""Axis-separated dyadic PE: :math:`[\sin(2^k\pi x_1), \cos(2^k\pi x_1), \sin(2^k\pi x_2),
    \cos(2^k\pi x_2)]_{k=0}^{K-1}` (``d = 4K``; default ``K = 12``, ``d = 48``). Lifts exactly
    the D4 generated by 90° rotations and axis/diagonal reflections."""

    def __init__(self, K: int = 12) -> None:
        if not isinstance(K, int) or K < 1:
            raise ValueError(f"K must be a positive int; got {K!r}")
        rows = []
        for k in range(K):
            f = (2.0**k) * math.pi
            rows += [[f, 0.0], [0.0, f]]
        super().__init__(torch.tensor(rows, dtype=torch.float64), None, name="DyadicAxisPE")
        self.K = K


class TriAxisPE(FourierPE):
    r"""Three-axis dyadic PE: :math:`[\sin(2^k\pi v_j^\top x), \cos(2^k\pi v_j^\top x)]` with
    :math:`v_j = R_{2\pi j/3}(1,0)^\top`, ``j = 0, 1, 2`` inner, ``k < K`` outer (``d = 6K``; default
    ``K = 8``, ``d = 48``). Lifts exactly the D6 of 60° rotations and reflections about 30°-multiple
    axes (which contains the equilateral triangle's D3)."""

    def __init__(self, K: int = 8) -> None:
        if not isinstance(K, int) or K < 1:
            raise ValueError(f"K must be a positive int; got {K!r}")
        axes = [(math.cos(2 * math.pi * j / 3), math.sin(2 * math.pi * j / 3)) for j in range(3)]
        rows = []
        for k in range(K):
            f = (2.0**k) * math.pi
            rows += [[f * a, f * c] for a, c in axes]
        super().__init__(torch.tensor(rows, dtype=torch.float64), None, name="TriAxisPE")
        self.K = K


class RandomFourierPE(FourierPE):
    r"""Random Fourier features: :math:`\omega_i \sim N(0, \sigma^2 I_2)`, :math:`b_i \sim U[0, 2\pi)`,
    features :math:`\sin/\cos(\omega_i^\top x + b_i)` (``d = 2n``; default ``n = 24``, ``σ = 10``,
    ``seed = 0``). In general position only ``I`` and the π rotation (:math:`-I`) lift exactly.
    See the module docstring for why σ = 10."""

    def __init__(self, n: int = 24, sigma: float = 10.0, seed: int = 0) -> None:
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int; got {n!r}")
        if not (sigma > 0 and math.isfinite(sigma)):
            raise ValueError(f"sigma must be a positive finite float; got {sigma!r}")
        gen = torch.Generator().manual_seed(seed)
        om = torch.randn(n, 2, generator=gen, dtype=torch.float64) * sigma
        b = torch.rand(n, generator=gen, dtype=torch.float64) * (2 * math.pi)
        super().__init__(om, b, name="RandomFourierPE")
        self.n, self.sigma, self.seed = n, sigma, seed


def default_encodings() -> list[FourierPE]:
    """The paper's three 48-dim encodings: Dyadic (K=12), TriAxis (K=8), RFF (n=24, σ=10, seed 0)."""
    return [DyadicAxisPE(), TriAxisPE(), RandomFourierPE()]


def liftable_set(encoding: FourierPE, elements: Iterable[GroupElement], tol: float = 1e-6) -> list[GroupElement]:
    """:math:`G_{lift}` restricted to ``elements``: those whose lift residual is below ``tol``."""
    return [g for g in elements if encoding.lift(g)[1] < tol]


def lift_table(encodings: Iterable[FourierPE], elements: Iterable[GroupElement], tol: float = 1e-6):
    """Long-format ``pandas.DataFrame`` (encoding, element, kind, angle, residual, exact, liftable)."""
    import pandas as pd

    rows = []
    elements = list(elements)
    for enc in encodings:
        for g in elements:
            _, res = enc.lift(g)
            rows.append(
                {
                    "encoding": enc.name,
                    "element": g.name,
                    "kind": g.kind,
                    "angle": g.angle,
                    "residual": res,
                    "exact": enc.exact_lift(g) is not None,
                    "liftable": res < tol,
                }
            )
    return pd.DataFrame(rows)
