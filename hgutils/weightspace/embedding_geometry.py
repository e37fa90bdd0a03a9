r"""Geometry of meta-network node embeddings on the Poincaré ball, as numbers.

Statistics of node embeddings on the Poincaré ball (the paper's visual claim: "layers separate
radially and angularly over training and nodes drift toward the boundary"), measured as numbers so
the claim can be judged:

- :func:`radial_angular_stats` -- per snapshot ``t`` and MLP layer ``l``: mean / std hyperbolic
  radius :math:`r_u = d_c(0, z_u) = \tfrac{2}{\sqrt c}\operatorname{artanh}(\sqrt c\|z_u\|)`, mean
  resultant length of the directions :math:`\hat z_u = z_u/\|z_u\|`, plus the per-snapshot
  separation indices :func:`radial_separation` and :func:`angular_separation`.
- :func:`radial_separation` -- :math:`\eta^2_r = 1 - \sum_l\sum_{u\in l}(r_u-\bar r_l)^2 / \sum_u (r_u-\bar r)^2`,
  the share of radius variance explained by the layer label (0: layers at the same radii,
  1: each layer on its own sphere).
- :func:`angular_separation` -- the same decomposition for directions (a spherical analysis of
  variance): with mean resultant vectors :math:`m_l = \mathrm{mean}_{u\in l}\hat z_u`, :math:`m` overall,
  :math:`\eta^2_\theta = 1 - \sum_l n_l(1-\|m_l\|^2) / (n(1-\|m\|^2))`
  (0: every layer spread the same way, 1: each layer along a single direction, distinct layers).
- :func:`outward_drift` -- change of the mean radius between two snapshots and the least-squares
  slope of the mean radius over ``t``, plus the share of nodes whose radius grew.
- :func:`per_network_geometry` -- the three readouts (:math:`\eta^2_r`, :math:`\eta^2_\theta`, mean
  radius) of every network at every snapshot, so a trend can be judged over networks;
  :func:`trend_against_control` judges "the readout grows from snapshot ``early`` to ``late``" both
  against no change and against the same change read from a control embedding (the encoder reading a
  time-shuffled trajectory: an artefact of the encoder's recurrence survives the shuffle, a trend of
  the trajectory does not).
- :func:`disk_coordinates` -- a 2-D Poincaré-disk view of ``d``-dimensional ball points that keeps every
  point's hyperbolic radius (for figures).

"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.manifolds import numerics as nx
from hgutils.manifolds import poincare as pm
from hgutils.verdicts import all_of, compare_seeds
from hgutils.weightspace.metanets.base import to_device

__all__ = [
    "GEOMETRY_READOUTS",
    "angular_separation",
    "disk_coordinates",
    "hyperbolic_radius",
    "outward_drift",
    "per_network_geometry",
    "radial_angular_stats",
    "radial_separation",
    "trend_against_control",
]

#: the readouts of :func:`per_network_geometry`
GEOMETRY_READOUTS: tuple[str, ...] = ("radial_sep", "angular_sep", "mean_radius")


def _check_nodes(z: Tensor, node_layer: Tensor, name: str = "z") -> tuple[Tensor, Tensor]:
    z = torch.as_tensor(z)
    node_layer = torch.as_tensor(node_layer).long()
    if z.dim() < 2:
        raise ValueError(f"{name} must be [..., V, d] node coordinates; got shape {tuple(z.shape)}")
    if node_layer.dim() != 1 or node_layer.shape[0] != z.shape[-2]:
        raise ValueError(f"node_layer must be [V={z.shape[-2]}] layer labels; got shape {tuple(node_layer.shape)}")
    if not torch.isfinite(z).all():
        raise ValueError(f"{name} holds non-finite coordinates")
    return z.double(), node_layer


def hyperbolic_radius(z: Tensor, c: float = 1.0) -> Tensor:
    r"""Distance to the origin :math:`d_c(0, z) = \tfrac{2}{\sqrt c}\operatorname{artanh}(\sqrt c\|z\|)`.

    Shape ``z.shape[:-1]``.
    ``c = 0`` means Euclidean coordinates (the ``c -> 0`` limit :math:`2\|z\|`).
    """
    if c < 0:
        raise ValueError(f"c must be >= 0 (curvature magnitude; 0 = Euclidean); got {c}")
    n = torch.as_tensor(z).double().norm(dim=-1)
    if c == 0:
        return 2.0 * n
    sc = c**0.5
    if bool((sc * n >= 1.0).any()):
        raise ValueError(
            f"points must lie in the ball of radius 1/sqrt(c)={1 / sc:.4g}; max norm was {float(n.max()):.4g}"
        )
    return 2.0 / sc * nx.artanh(sc * n)


def disk_coordinates(z: Tensor, c: float = 1.0) -> Tensor:
    r"""A 2-D view of ball points ``z [..., d]`` that keeps each point's distance to the origin.

    With :math:`v = \log_0 z` (tangent vectors at the origin), mean :math:`\mu` and the two leading
    principal axes :math:`U \in \mathbb{R}^{d\times 2}` of all the :math:`v` together (one shared
    view for every snapshot), each point is shown at

    .. math::
        p = \|v\|\,\frac{(v - \mu)U}{\|(v - \mu)U\|}, \qquad \exp_0(p) = \tanh(\sqrt c\,\|p\|)\,
        \frac{p}{\sqrt c\,\|p\|},

    so :math:`d_c(0, \exp_0 p) = d_c(0, z)` (radii are exact, directions are the PCA's). Points with
    ``d = 2`` are returned unchanged. Returns float64 ``[..., 2]``.
    """

    if c <= 0:
        raise ValueError(f"c must be > 0 (curvature magnitude of the ball); got {c}")
    z = torch.as_tensor(z).double()
    if z.dim() < 2 or z.shape[-1] < 2:
        raise ValueError(f"z must be [..., n, d] ball points with d >= 2; got shape {tuple(z.shape)}")
    hyperbolic_radius(z, c)  # validates that the points lie in the ball
    if z.shape[-1] == 2:
        return z
    v = pm.logmap0(z, c)
    flat = v.reshape(-1, v.shape[-1])
    mu = flat.mean(0)
    _, _, vt = torch.linalg.svd(flat - mu, full_matrices=False)
    p = (v - mu) @ vt[:2].T
    p = p / p.norm(dim=-1, keepdim=True).clamp_min(1e-12) * v.norm(dim=-1, keepdim=True)
    return pm.expmap0(p, c)


def radial_separation(r: Tensor, node_layer: Tensor) -> float:
    r"""Share of the radius variance explained by the layer label, :math:`\eta^2_r \in [0, 1]`.

    ``r [V]``; returns 0 when all radii are equal (nothing to explain).
    """
    r = torch.as_tensor(r).double()
    node_layer = torch.as_tensor(node_layer).long()
    if r.dim() != 1 or node_layer.shape != r.shape:
        raise ValueError(f"r and node_layer must both be [V]; got {tuple(r.shape)} and {tuple(node_layer.shape)}")
    total = ((r - r.mean()) ** 2).sum()
    if float(total) <= 1e-24 * max(1.0, float((r**2).sum())):
        return 0.0
    within = sum(((r[node_layer == l] - r[node_layer == l].mean()) ** 2).sum() for l in node_layer.unique())
    return float((1.0 - within / total).clamp(0.0, 1.0))


def angular_separation(z: Tensor, node_layer: Tensor) -> float:
    r"""Spherical analysis of variance of the node directions, :math:`\eta^2_\theta \in [0, 1]`.

    ``z [V, d]``; nodes at the origin have no direction and are skipped. Returns 0 when all
    directions coincide (no angular spread to explain).
    """
    z, node_layer = _check_nodes(z, node_layer)
    if z.dim() != 2:
        raise ValueError(f"z must be [V, d]; got shape {tuple(z.shape)}")
    n = z.norm(dim=-1)
    keep = n > 1e-12
    u, lab = z[keep] / n[keep, None], node_layer[keep]
    if u.shape[0] == 0:
        return 0.0
    total = u.shape[0] * (1.0 - float((u.mean(0) ** 2).sum()))
    if total <= 1e-12:
        return 0.0
    within = sum(int((lab == l).sum()) * (1.0 - float((u[lab == l].mean(0) ** 2).sum())) for l in lab.unique())
    return float(min(max(1.0 - within / total, 0.0), 1.0))


def radial_angular_stats(
    z: Tensor, node_layer: Tensor, c: float = 1.0, steps: Sequence[int] | None = None
) -> pd.DataFrame:
    """Per-snapshot, per-layer statistics of node coordinates ``z [T, V, d]`` (or ``[B, T, V, d]``,
    averaged over the ``B`` networks after computing each network's statistics).

    Returns a long DataFrame with columns ``t, step, layer, radius_mean, radius_std, resultant,
    radial_sep, angular_sep`` (``radial_sep`` / ``angular_sep`` are per snapshot, repeated on each
    layer row). ``c = 0`` treats the coordinates as Euclidean.
    """
    z, node_layer = _check_nodes(z, node_layer)
    if z.dim() == 3:
        z = z.unsqueeze(0)
    if z.dim() != 4:
        raise ValueError(f"z must be [T, V, d] or [B, T, V, d]; got shape {tuple(z.shape)}")
    B, T = z.shape[:2]
    if steps is None:
        steps = list(range(T))
    if len(steps) != T:
        raise ValueError(f"steps must list one value per snapshot (T={T}); got {len(steps)}")
    r = hyperbolic_radius(z, c)  # [B, T, V]
    dirs = z / z.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    layers = node_layer.unique().tolist()
    rows = []
    for t in range(T):
        rad = float(np.mean([radial_separation(r[b, t], node_layer) for b in range(B)]))
        ang = float(np.mean([angular_separation(z[b, t], node_layer) for b in range(B)]))
        for l in layers:
            m = node_layer == l
            rows.append(
                {
                    "t": t,
                    "step": int(steps[t]),
                    "layer": int(l),
                    "radius_mean": float(r[:, t, m].mean()),
                    "radius_std": float(r[:, t, m].std(dim=-1, unbiased=False).mean()),
                    "resultant": float(dirs[:, t, m].mean(1).norm(dim=-1).mean()),
                    "radial_sep": rad,
                    "angular_sep": ang,
                }
            )
    return pd.DataFrame(rows)


def outward_drift(z: Tensor, c: float = 1.0, early: int = 0, late: int = -1) -> dict[str, float]:
    """Outward drift of node coordinates ``z [T, V, d]`` (or ``[B, T, V, d]``) between two snapshots.

    Returns ``{"radius_early", "radius_late", "delta", "slope", "frac_outward"}``: mean radius at
    ``early`` and ``late``, their difference, the least-squares slope of the mean radius against the
    snapshot index ``t`` (per snapshot), and the share of nodes with a larger radius at ``late``.
    """
    z = torch.as_tensor(z).double()
    if z.dim() == 3:
        z = z.unsqueeze(0)
    if z.dim() != 4 or z.shape[1] < 2:
        raise ValueError(f"z must be [T>=2, V, d] or [B, T>=2, V, d]; got shape {tuple(z.shape)}")
    r = hyperbolic_radius(z, c)  # [B, T, V]
    mean_t = r.mean(dim=(0, 2)).numpy()
    t = np.arange(len(mean_t), dtype=float)
    slope = float(np.polyfit(t, mean_t, 1)[0])
    re, rl = r[:, early], r[:, late]
    return {
        "radius_early": float(re.mean()),
        "radius_late": float(rl.mean()),
        "delta": float((rl - re).mean()),
        "slope": slope,
        "frac_outward": float((rl > re).double().mean()),
    }


def per_network_geometry(z: Tensor, node_layer: Tensor, c: float = 1.0) -> dict[str, np.ndarray]:
    """The readouts of every network at every snapshot of ``z [B, T, V, d]``: ``radial_sep``
    (:func:`radial_separation`), ``angular_sep`` (:func:`angular_separation`) and ``mean_radius`` (the
    mean hyperbolic radius of the nodes), each ``[B, T]``."""
    z, node_layer = _check_nodes(z, node_layer)
    if z.dim() != 4:
        raise ValueError(f"z must be [B, T, V, d]; got shape {tuple(z.shape)}")
    B, T = z.shape[:2]
    r = hyperbolic_radius(z, c)
    rad = np.array([[radial_separation(r[b, t], node_layer) for t in range(T)] for b in range(B)])
    ang = np.array([[angular_separation(z[b, t], node_layer) for t in range(T)] for b in range(B)])
    return {"radial_sep": rad, "angular_sep": ang, "mean_radius": r.mean(-1).numpy()}


def trend_against_control(
    readout: np.ndarray, control: np.ndarray, early: int, late: int, label: str, digits: int = 3
) -> object:
    r"""Judge "the readout grows from snapshot ``early`` to ``late``" over networks.

    ``readout``/``control`` ``[B, T]`` (:func:`per_network_geometry` of the embedding and of its
    control, the same ``B`` networks). Two paired comparisons over networks
    (:func:`hgutils.verdicts.compare_seeds`), both required (:func:`hgutils.verdicts.all_of`): the
    change :math:`\Delta_i = x_i(late) - x_i(early)` above 0, and above the control's change
    :math:`\Delta'_i`. Returns the combined comparison (``verdict``, ``detail``).
    """

    a, b = np.asarray(readout, float), np.asarray(control, float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"readout and control must both be [networks, T]; got {a.shape} and {b.shape}")
    d, dc = a[:, late] - a[:, early], b[:, late] - b[:, early]
    zero = np.zeros_like(d)
    return all_of(
        [
            compare_seeds(d, zero, paired=True, label=f"{label}: change", digits=digits, over="networks"),
            compare_seeds(d, dc, paired=True, label=f"{label}: change - control's", digits=digits, over="networks"),
        ]
    )


def node_embeddings(
    model: Any, data: Any, idx: Sequence[int] | Tensor, refine_steps: int = 0
) -> tuple[Tensor, Tensor, float]:
    """GTH-GMN node coordinates of networks ``idx`` at every snapshot: ``(z [B, T, V, d], node_layer [V], c)``.

    ``c`` is the curvature of the ball the coordinates live on (0 for the Euclidean ablation).
    ``refine_steps`` > 0 runs the paper's stage-2 Riemannian refinement of the coordinates.
    """
    if not hasattr(model, "embed_nodes"):
        raise ValueError(f"node embeddings need a GTH-GMN model; got {type(model).__name__}")

    idx = torch.as_tensor(idx, dtype=torch.long)
    dev = next(model.parameters()).device
    z = model.embed_nodes(to_device(data[idx], dev), refine_steps=refine_steps)
    c = 0.0 if model.euclidean else float(model.c)
    return z.detach().cpu(), data.node_layer, c


def class_separation(emb: Tensor | np.ndarray, labels: Tensor | np.ndarray) -> float:
    """Silhouette score of embeddings ``[n, D]`` grouped by ``labels`` (Euclidean; -1..1, higher =
    classes better separated). Needs at least 2 classes and fewer classes than points."""
    from sklearn.metrics import silhouette_score

    x = np.asarray(emb.detach().cpu() if isinstance(emb, Tensor) else emb, dtype=float)
    y = np.asarray(labels.cpu() if isinstance(labels, Tensor) else labels)
    k = len(np.unique(y))
    if x.ndim != 2 or len(y) != len(x) or not 2 <= k < len(x):
        raise ValueError(
            f"need emb [n, D] with n labels from 2..n-1 classes; got {x.shape}, {len(y)} labels, {k} classes"
        )
    return float(silhouette_score(x, y))
