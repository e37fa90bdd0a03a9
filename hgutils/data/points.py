r"""Small synthetic point sets and surfaces for the representation-similarity experiments.

- :func:`ring_blobs` -- ``bK`` Gaussian blobs on the unit circle, labels interleaved (``b = 2``:
  opposite blobs share a label; ``b`` odd: no blob is opposite a blob of its own class);
- :func:`ring_samples` -- points scattered about the whole unit circle (a reference measure near the
  data of every ring task);
- :func:`square_grid` -- a uniform grid on ``[-extent, extent]^2`` (a fixed reference measure);
- :func:`swiss_roll`, :func:`unrolled_plane` -- one surface embedded rolled and flat (same
  intrinsic geometry, pullback metric :math:`\mathrm{diag}(1 + t^2, 1)`).
"""

from __future__ import annotations

import math

import torch


def ring_blobs(
    n_classes: int,
    n_per_blob: int,
    std: float = 0.15,
    *,
    blobs_per_class: int = 2,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``B = blobs_per_class * K`` Gaussian blobs on the unit circle, interleaved labels: ``(X [n, 2], y [n])``.

    Blob ``j`` is centred at angle :math:`2\pi j / B` with isotropic std ``std`` and labelled
    ``j mod K``, so every class has ``blobs_per_class`` blobs spread around the circle and the task is
    not linearly separable when ``blobs_per_class >= 2``. With ``blobs_per_class = 2`` opposite blobs
    share a label (``K = 2`` is XOR on a ring), which an odd function -- a tanh network with zero
    biases -- cannot fit; with ``blobs_per_class`` odd no blob lies opposite a blob of its own class.
    """
    if n_classes < 2 or n_per_blob < 1 or not std > 0 or blobs_per_class < 1:
        raise ValueError(
            "need n_classes >= 2, n_per_blob >= 1, std > 0, blobs_per_class >= 1; got "
            f"{n_classes}, {n_per_blob}, {std}, {blobs_per_class}"
        )
    nb = blobs_per_class * n_classes
    ang = 2 * math.pi * torch.arange(nb) / nb
    centres = torch.stack([ang.cos(), ang.sin()], 1)
    X = centres[:, None, :] + std * torch.randn(nb, n_per_blob, 2, generator=generator)
    y = (torch.arange(nb) % n_classes).repeat_interleave(n_per_blob)
    return X.reshape(-1, 2), y


def ring_samples(n: int, std: float, *, generator: torch.Generator | None = None) -> torch.Tensor:
    r"""``n`` points :math:`r(\cos\theta, \sin\theta)` about the unit circle: ``[n, 2]``.

    :math:`\theta \sim U[0, 2\pi)`, :math:`r \sim \mathcal N(1, \mathrm{std}^2)`.

    The radial spread matches a blob's, so these cover the data of every :func:`ring_blobs` task
    (any K) with one shared set of inputs.
    """
    if n < 1 or not std >= 0:
        raise ValueError(f"need n >= 1 and std >= 0; got n={n}, std={std}")
    theta = 2 * math.pi * torch.rand(n, generator=generator)
    r = 1.0 + std * torch.randn(n, generator=generator)
    return torch.stack([r * theta.cos(), r * theta.sin()], 1)


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
