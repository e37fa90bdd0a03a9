r"""Log-radius concatenation: N Lorentz blocks joined into one point, the space part scaled so that its
expected log radius is controlled (ILNN, arXiv:2602.23981, Lorentz patch concatenation; the scale
:math:`s = \exp(\tfrac12[\psi(Nd/2) - \psi(d/2)])`, :func:`log_radius_scale`)."""

from __future__ import annotations

import math

import torch

from hgutils.nn.lorentz.points import space_to_lorentz

#: How :func:`log_radius_concat` applies the log-radius scale ``s`` to the concatenated space part.
SCALE_DIRECTIONS: tuple[str, ...] = ("multiply", "divide", "none")


def log_radius_scale(n_blocks: int, d: int) -> float:
    r"""Log-radius concatenation scale :math:`s = \exp(\tfrac12[\psi(Nd/2) - \psi(d/2)])` (≈ √N).

    ILNN (arXiv:2602.23981), Lorentz patch concatenation. For an isotropic Gaussian block
    :math:`x \in \mathbb{R}^d` with variance :math:`\sigma^2` per coordinate,
    :math:`\|x\|^2/\sigma^2 \sim \chi^2_d` and :math:`E\log\|x\| = \tfrac12(\psi(d/2) + \log 2\sigma^2)`;
    the plain concatenation of N such blocks is a Gaussian in :math:`\mathbb{R}^{Nd}`, whose expected
    log radius is larger by exactly :math:`\log s`.
    """
    if n_blocks < 1 or d < 1:
        raise ValueError(f"need n_blocks >= 1 and d >= 1; got {n_blocks}, {d}")
    return math.exp(
        0.5
        * (
            torch.special.digamma(torch.tensor(n_blocks * d / 2, dtype=torch.float64))
            - torch.special.digamma(torch.tensor(d / 2, dtype=torch.float64))
        ).item()
    )


def concat_factor(n_blocks: int, d: int, direction: str = "multiply") -> float:
    r"""Factor applied to the concatenated space part of N blocks of d space dims.

    ``"multiply"``: :math:`s` (the ILNN reference code); ``"divide"``: :math:`1/s`; ``"none"``: 1
    (HCNN-style direct concatenation), with :math:`s` = :func:`log_radius_scale`. For Gaussian blocks
    the expected log radius of the result is, relative to one block's
    :math:`E\log\|x_i\|`: :math:`+2\log s` (multiply), :math:`0` (divide), :math:`+\log s` (none).
    """
    if direction not in SCALE_DIRECTIONS:
        raise ValueError(f"direction must be one of {SCALE_DIRECTIONS}; got {direction!r}")
    s = log_radius_scale(n_blocks, d)
    return {"multiply": s, "divide": 1.0 / s, "none": 1.0}[direction]


def log_radius_concat(blocks: torch.Tensor, c: float = 1.0, direction: str = "multiply") -> torch.Tensor:
    r"""Concatenate N Lorentz blocks ``[..., N, d+1]`` into one point ``[..., N d + 1]``.

    Space :math:`f\cdot(x_{1,s}, \dots, x_{N,s})` with :math:`f` = :func:`concat_factor`
    (``direction``; the ILNN reference code multiplies by :math:`s`); time
    :math:`t = \sqrt{k + f^2\sum_i (t_i^2 - k)}` (recomputed from space, so padded origin blocks
    contribute nothing).
    """
    if blocks.dim() < 2 or blocks.shape[-1] < 2:
        raise ValueError(f"blocks must be [..., N, d+1]; got {tuple(blocks.shape)}")
    n, d = blocks.shape[-2], blocks.shape[-1] - 1
    f = concat_factor(n, d, direction)
    xs = blocks[..., 1:].reshape(*blocks.shape[:-2], n * d) * f
    return space_to_lorentz(xs, c)
