r"""Pullback metrics on the input-time manifold of a dynamical system (MSA on dynamics).

A recurrent network driven by inputs that depend on coordinates :math:`\theta \in \mathcal{M}`
(:math:`m` of them, e.g. the angles of a memory task) has hidden states :math:`h_k(\theta) \in
\mathbb{R}^D` at the time steps :math:`t_k = k\,\Delta t`. MSA on dynamics (Cayco-Gajic & Pellegrino,
arXiv 2603.28764, §5, Fig. 7) extends the input manifold by time: the representation is the map
:math:`(\theta, t) \mapsto h(\theta, t)` on :math:`\mathcal{M} \times [t_a, t_b]`, and its pullback
metric, an :math:`(m+1)\times(m+1)` matrix, carries both the geometric deformation of
:math:`\mathcal{M}` (the :math:`\theta\theta` block) and the temporal evolution (the :math:`tt` entry:
the squared speed of the state; the :math:`\theta t` entries: how the motion is aligned with the
coded directions).

Time is discrete, so ``h`` is made a function of continuous ``t`` by its piecewise-linear interpolant
(documented choice): on :math:`[t_k, t_{k+1}]`, :math:`h(\theta, t) = (1-s)\,h_k(\theta) + s\,h_{k+1}(\theta)`,
:math:`s = (t - t_k)/\Delta t`. Its Jacobian at the segment midpoint :math:`t_{k+1/2}` is

.. math::

    J_{k+1/2}(\theta) = \Big[\ \tfrac12\big(\partial_\theta h_k + \partial_\theta h_{k+1}\big)\ \Big|\
        \tfrac{1}{\Delta t}\big(h_{k+1} - h_k\big)\ \Big] \in \mathbb{R}^{D \times (m+1)},
    \qquad G_{k+1/2} = J^\top J,

exact for the interpolant and second-order accurate (central) for a smooth trajectory. For a
discrete-time RNN :math:`h_{k+1} - h_k` is exactly the vector field of the map, the quantity DSA fits
(Ostrow et al. 2023, arXiv:2306.10168). :math:`\partial_\theta h_k` comes from forward-mode automatic
differentiation (``m`` JVPs of the whole batch of trajectories, as ``mode="rows"`` of
:func:`~hgutils.similarity.pullback.pullback_jacobian`).

The time unit :math:`\Delta t` is a chart choice: rescaling it is the congruence
:math:`G \to T^\top G T` with :math:`T = \mathrm{diag}(1, \dots, 1, c)`, to which the spectral ratio is
invariant, so MSA between two networks does not depend on it (tested). MSA is the average of
:func:`~hgutils.similarity.msa.spectral_ratio` over the sampled :math:`(\theta, t_{k+1/2})` with the
uniform reference measure (:func:`~hgutils.similarity.msa.msa_from_metrics` on the flattened points).

**Geometry over time** (the per-time-step reading of Fig. 7f): at each step :math:`t_k` the
:math:`\theta\theta` block :math:`G^{\theta}_k(\theta) = \partial_\theta h_k^\top \partial_\theta h_k`
is the intrinsic geometry of the coded manifold at that time; :func:`temporal_msa` compares it across
time steps, :math:`D_{kl} = \frac{1}{|\Theta|}\sum_\theta d_{SR}(G^\theta_k(\theta), G^\theta_l(\theta))`
(0: the geometry at :math:`t_k` and :math:`t_l` is the same up to a scale, point by point). With
:math:`m = 1` every :math:`1\times1` metric is a scale of every other, so :math:`D = 0`: the reading
needs :math:`m \ge 2` coded coordinates.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor
from torch.func import jvp

from hgutils.similarity.msa import DEFAULT_EPS, msa_from_metrics, msa_matrix_from_metrics

__all__ = [
    "coded_metrics",
    "input_time_jacobians",
    "input_time_metrics",
    "input_time_msa",
    "pair_msa",
    "temporal_msa",
    "trajectory_jacobians",
]


def trajectory_jacobians(f: Callable[[Tensor], Tensor], points: Tensor) -> tuple[Tensor, Tensor]:
    r"""States and their derivatives in the manifold coordinates: ``f(points)`` and
    :math:`\partial h / \partial \theta_j` stacked on a new last axis (``[..., m]``).

    ``f`` maps ``points`` ``[P, m]`` to trajectories of any shape (e.g. ``[N, P, T, D]``) and must act
    on each point independently (no coupling across the batch); it is differentiated with ``m``
    forward-mode JVPs of the whole batch.
    """
    if not isinstance(points, Tensor) or points.ndim != 2 or points.shape[0] < 1:
        shape = tuple(points.shape) if isinstance(points, Tensor) else type(points).__name__
        raise ValueError(f"points must be [P >= 1, m] manifold coordinates; got {shape}")
    if not points.is_floating_point():
        raise ValueError(f"points must be floating point; got {points.dtype}")
    eye = torch.eye(points.shape[1], dtype=points.dtype, device=points.device)
    cols, h = [], None
    for j in range(points.shape[1]):
        h, dh = jvp(f, (points,), (eye[j].expand_as(points),))
        cols.append(dh)
    return h, torch.stack(cols, -1)


def _check_pair(states: Tensor, dstates: Tensor) -> None:
    if states.ndim < 2:
        raise ValueError(f"states must be [..., T, D]; got shape {tuple(states.shape)}")
    if dstates.shape[:-1] != states.shape:
        raise ValueError(
            f"dstates must be states' shape plus the coordinate axis, {tuple(states.shape)} + (m,); "
            f"got {tuple(dstates.shape)}"
        )
    if states.shape[-2] < 2:
        raise ValueError(f"need at least 2 time steps for a time derivative; got T = {states.shape[-2]}")


def input_time_jacobians(states: Tensor, dstates: Tensor, dt: float = 1.0) -> Tensor:
    r"""Jacobians of the interpolated trajectory at the midpoints :math:`t_{k+1/2}` (module docstring).

    ``states`` ``[..., T, D]``, ``dstates`` ``[..., T, D, m]`` (:func:`trajectory_jacobians`) ->
    ``[..., T-1, D, m+1]``, the last column the time derivative. Computed in float64.
    """
    _check_pair(states, dstates)
    if not dt > 0:
        raise ValueError(f"dt must be > 0; got {dt}")
    h, dh = states.to(torch.float64), dstates.to(torch.float64)
    d_theta = 0.5 * (dh[..., 1:, :, :] + dh[..., :-1, :, :])
    d_t = (h[..., 1:, :] - h[..., :-1, :]) / dt
    return torch.cat([d_theta, d_t[..., None]], -1)


def input_time_metrics(states: Tensor, dstates: Tensor, dt: float = 1.0) -> Tensor:
    r"""Pullback metrics :math:`G = J^\top J` on the input-time manifold, ``[..., T-1, m+1, m+1]`` (float64)."""
    J = input_time_jacobians(states, dstates, dt)
    return J.transpose(-1, -2) @ J


def coded_metrics(dstates: Tensor) -> Tensor:
    r"""The coded metrics :math:`G^\theta_k = \partial_\theta h_k^\top \partial_\theta h_k` at every step,
    ``[..., T, m, m]`` (float64)."""
    if dstates.ndim < 3:
        raise ValueError(f"dstates must be [..., T, D, m]; got shape {tuple(dstates.shape)}")
    J = dstates.to(torch.float64)
    return J.transpose(-1, -2) @ J


def _flat_points(G: Tensor, point_dims: int) -> Tensor:
    """``[M, *points, k, k]`` -> ``[M, prod(points), k, k]``."""
    return G.reshape(G.shape[0], -1, *G.shape[-2:]) if point_dims else G


def input_time_msa(metrics: Tensor, *, eps: float = DEFAULT_EPS) -> np.ndarray:
    r"""All-pairs :math:`d_{MSA}` ``[M, M]`` of M systems from their input-time metrics
    ``[M, P, T', k, k]`` (or ``[M, P, k, k]``): the uniform reference measure on the P points x T'
    midpoints (:func:`~hgutils.similarity.msa.msa_matrix_from_metrics`)."""
    if metrics.ndim not in (4, 5):
        raise ValueError(f"metrics must be [M, P, T', k, k] or [M, P, k, k]; got shape {tuple(metrics.shape)}")
    return msa_matrix_from_metrics(_flat_points(metrics, metrics.ndim - 3), eps=eps)


def temporal_msa(coded: Tensor, *, eps: float = DEFAULT_EPS) -> np.ndarray:
    r"""The time x time matrix :math:`D_{kl}` of one system (module docstring) from its coded metrics
    ``[P, T, m, m]`` (:func:`coded_metrics`): ``[T, T]``, 0 on the diagonal, uniform measure on the P points."""
    if coded.ndim != 4:
        raise ValueError(f"coded metrics must be [P, T, m, m]; got shape {tuple(coded.shape)}")
    return msa_matrix_from_metrics(coded.transpose(0, 1), eps=eps)


def pair_msa(metrics_a: Tensor, metrics_b: Tensor, *, eps: float = DEFAULT_EPS) -> float:
    """:math:`d_{MSA}` of two systems' metrics of the same shape ``[P, ..., k, k]`` (points flattened)."""
    if metrics_a.shape != metrics_b.shape:
        raise ValueError(f"metrics must have the same shape; got {tuple(metrics_a.shape)} and {tuple(metrics_b.shape)}")
    k = metrics_a.shape[-1]
    return msa_from_metrics(metrics_a.reshape(-1, k, k), metrics_b.reshape(-1, k, k), eps=eps)
