r"""Small synthetic point sets and surfaces for the representation-similarity experiments.

- :func:`ring_blobs` -- ``2K`` Gaussian blobs on the unit circle, opposite blobs share a label;
- :func:`square_grid` -- a uniform grid on ``[-extent, extent]^2`` (a fixed reference measure);
- :func:`swiss_roll`, :func:`unrolled_plane` -- one surface embedded rolled and flat (same
  intrinsic geometry, pullback metric :math:`\mathrm{diag}(1 + t^2, 1)`).
"""

from __future__ import annotations

import math

import torch


def ring_blobs(
    n_classes: int, n_per_blob: int, std: float = 0.15, *, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``2K`` Gaussian blobs on the unit circle, blob ``j`` labelled ``j mod K``: ``(X [n, 2], y [n])``."""
    if n_classes < 2 or n_per_blob < 1 or std <= 0:
        raise ValueError(f"need n_classes >= 2, n_per_blob >= 1, std > 0; got {n_classes}, {n_per_blob}, {std}")
    nb = 2 * n_classes
    ang = 2 * math.pi * torch.arange(nb) / nb
    centres = torch.stack([ang.cos(), ang.sin()], 1)
    X = centres[:, None, :] + std * torch.randn(nb, n_per_blob, 2, generator=generator)
    y = (torch.arange(nb) % n_classes).repeat_interleave(n_per_blob)
    return X.reshape(-1, 2), y


def square_grid(side: int, extent: float) -> torch.Tensor:
    """``side**2`` points of a uniform grid on ``[-extent, extent]^2`` (the MSA reference measure)."""
    g = torch.linspace(-extent, extent, side)
    return torch.cartesian_prod(g, g)


def swiss_roll(p: torch.Tensor) -> torch.Tensor:
    r"""Swiss-roll embedding :math:`(t, h) \mapsto (t\cos t,\ h,\ t\sin t)` of chart points ``[..., 2]``."""
    t, h = p[..., 0], p[..., 1]
    return torch.stack([t * torch.cos(t), h, t * torch.sin(t)], -1)


def unrolled_plane(p: torch.Tensor) -> torch.Tensor:
    r"""The same surface unrolled flat: :math:`(t, h) \mapsto (s(t), h, 0)` with arc length
    :math:`s(t) = \tfrac12\,(t\sqrt{1+t^2} + \operatorname{arsinh} t)` of the roll's spiral.

    Both maps have pullback metric :math:`\mathrm{diag}(1 + t^2, 1)`: identical intrinsic geometry.
    """
    t, h = p[..., 0], p[..., 1]
    s = 0.5 * (t * torch.sqrt(1 + t * t) + torch.asinh(t))
    return torch.stack([s, h, torch.zeros_like(h)], -1)
