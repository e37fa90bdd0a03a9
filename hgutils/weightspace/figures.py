r"""Embedding statistics and plots for notebooks 01-03 (GTH-GMN on INR / sine / classifier zoos).

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

Plots (all call :func:`hgutils.plotting.use_style`): :func:`plot_disk_early_late`,
:func:`plot_radial_angular`, :func:`plot_embedding_pca`, :func:`plot_pred_vs_true`,
:func:`plot_sine_embedding`, :func:`plot_results_bars`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.manifolds import numerics as nx
from hgutils.plotting import poincare_disk, use_style

__all__ = [
    "angular_separation",
    "hyperbolic_radius",
    "outward_drift",
    "pca_2d",
    "plot_disk_early_late",
    "plot_embedding_pca",
    "plot_pred_vs_true",
    "plot_radial_angular",
    "plot_results_bars",
    "plot_sine_embedding",
    "radial_angular_stats",
    "radial_separation",
]


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------
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


def pca_2d(x: Tensor | np.ndarray) -> np.ndarray:
    """Project rows of ``x [n, D]`` on their first two principal components (centred SVD), ``[n, 2]``."""
    a = np.asarray(x.detach().cpu() if isinstance(x, Tensor) else x, dtype=float)
    if a.ndim != 2 or a.shape[0] < 2:
        raise ValueError(f"pca_2d needs [n>=2, D] rows; got shape {a.shape}")
    a = a - a.mean(0)
    _, _, vt = np.linalg.svd(a, full_matrices=False)
    out = a @ vt[:2].T
    if out.shape[1] < 2:
        out = np.concatenate([out, np.zeros((out.shape[0], 2 - out.shape[1]))], 1)
    return out


# --------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------
def _disk_coords(z: np.ndarray, c: float) -> np.ndarray:
    """2-D view of ball points: the coordinates themselves when d = 2, else PCA of the tangent
    vectors at 0 pushed back onto the 2-D disk (radii preserved: ``exp_0`` of the projected log)."""
    z = np.asarray(z, dtype=float)
    if z.shape[-1] == 2:
        return z
    sc = max(c, 1e-12) ** 0.5
    n = np.linalg.norm(z, axis=-1, keepdims=True).clip(1e-12)
    v = np.arctanh(np.clip(sc * n, 0, 1 - 1e-7)) * z / (sc * n)  # log_0
    flat = v.reshape(-1, v.shape[-1])
    mu = flat.mean(0)
    _, _, vt = np.linalg.svd(flat - mu, full_matrices=False)
    p = (v - mu) @ vt[:2].T
    # rescale so each point keeps its tangent norm (= its hyperbolic radius / 2), then exp_0
    pn = np.linalg.norm(p, axis=-1, keepdims=True).clip(1e-12)
    p = p / pn * np.linalg.norm(v, axis=-1, keepdims=True)
    pn = np.linalg.norm(p, axis=-1, keepdims=True).clip(1e-12)
    return np.tanh(sc * pn) * p / (sc * pn)


def plot_disk_early_late(
    z: Tensor,
    node_layer: Tensor,
    c: float = 1.0,
    early: int = 0,
    late: int = -1,
    steps: Sequence[int] | None = None,
    layer_names: Sequence[str] | None = None,
    title: str = "",
) -> plt.Figure:
    """Two Poincaré disks of one network's node embedding ``z [T, V, d]``: snapshot ``early`` and
    ``late``, nodes coloured by MLP layer (``d > 2`` is shown by a shared radius-preserving PCA)."""
    use_style()
    z = torch.as_tensor(z).detach().double()
    if z.dim() != 3:
        raise ValueError(f"z must be one network's [T, V, d]; got shape {tuple(z.shape)}")
    T = z.shape[0]
    both = _disk_coords(z[[early, late]].numpy(), c)
    lab = torch.as_tensor(node_layer).long().numpy()
    names = list(layer_names) if layer_names is not None else [f"layer {l}" for l in np.unique(lab)]
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    for ax, pts, t in zip(axes, both, (early % T, late % T)):
        lbl = f"t = {t}" if steps is None else f"t = {t} (step {int(steps[t])})"
        poincare_disk(ax, pts, c=c, colors=lab, labels=names, s=12, title=lbl)
        for sp in ax.spines.values():
            sp.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def plot_radial_angular(stats: pd.DataFrame, title: str = "", layer_names: Sequence[str] | None = None) -> plt.Figure:
    """Per-layer mean radius over ``t`` (band = mean within-network std) and the two separation
    indices over ``t`` (output of :func:`radial_angular_stats`); ``layer_names[l]`` labels layer ``l``."""
    use_style()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for l, g in stats.groupby("layer"):
        name = layer_names[int(l)] if layer_names is not None and int(l) < len(layer_names) else f"layer {l}"
        axes[0].plot(g["t"], g["radius_mean"], marker="o", ms=3, label=name)
        axes[0].fill_between(g["t"], g["radius_mean"] - g["radius_std"], g["radius_mean"] + g["radius_std"], alpha=0.15)
    axes[0].set_xlabel("snapshot t")
    axes[0].set_ylabel("hyperbolic radius $d_c(0, z)$")
    axes[0].legend(fontsize=7)
    per_t = stats.groupby("t")[["radial_sep", "angular_sep"]].first()
    axes[1].plot(per_t.index, per_t["radial_sep"], marker="o", ms=3, label=r"radial $\eta^2_r$")
    axes[1].plot(per_t.index, per_t["angular_sep"], marker="s", ms=3, label=r"angular $\eta^2_\theta$")
    axes[1].set_ylim(-0.02, 1.02)
    axes[1].set_xlabel("snapshot t")
    axes[1].set_ylabel("share of variance explained by layer")
    axes[1].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def plot_embedding_pca(
    emb: Tensor | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    title: str = "",
    class_names: Sequence[str] | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Trajectory embeddings ``[n, D]`` on their first two principal components, coloured by class."""
    use_style()
    p = pca_2d(emb)
    lab = np.asarray(labels)
    if ax is None:
        fig, ax = plt.subplots(figsize=(4.2, 4))
    else:
        fig = ax.figure
    sc = ax.scatter(p[:, 0], p[:, 1], c=lab, cmap="tab10", s=10, linewidths=0)
    if class_names is not None:
        handles, _ = sc.legend_elements()
        ax.legend(handles, [class_names[int(v)] for v in np.unique(lab)], fontsize=6, loc="best")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.set_title(title)
    return fig


def plot_pred_vs_true(preds: dict[str, tuple[np.ndarray, np.ndarray]], title: str = "", ncols: int = 4) -> plt.Figure:
    """One scatter per model of predicted vs true test accuracy, ``preds[name] = (true, pred)``,
    with Kendall's tau in each panel title."""
    from scipy.stats import kendalltau

    use_style()
    if not preds:
        raise ValueError("preds is empty: need at least one model's (true, pred)")
    n = len(preds)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.8 * ncols, 2.7 * nrows), squeeze=False)
    for ax, (name, (y, p)) in zip(axes.flat, preds.items()):
        y, p = np.asarray(y, float), np.asarray(p, float)
        tau = kendalltau(y, p).statistic
        ax.scatter(y, p, s=8, alpha=0.7, linewidths=0)
        lo, hi = float(min(y.min(), p.min())), float(max(y.max(), p.max()))
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
        ax.set_title(f"{name}\nτ = {tau:.3f}", fontsize=8)
        ax.set_xlabel("true accuracy", fontsize=8)
        ax.set_ylabel("predicted", fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_sine_embedding(emb: Tensor | np.ndarray, targets: Tensor | np.ndarray, title: str = "") -> plt.Figure:
    """PCA of sine-INR embeddings coloured by amplitude ``a`` (left) and frequency ``b`` (right);
    ``targets [n, 2]`` holds ``(a, b)``."""
    use_style()
    p = pca_2d(emb)
    tg = np.asarray(targets, float)
    if tg.ndim != 2 or tg.shape[1] != 2 or tg.shape[0] != p.shape[0]:
        raise ValueError(f"targets must be [n={p.shape[0]}, 2] = (a, b); got shape {tg.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, k, name in zip(axes, (0, 1), ("amplitude a", "frequency b")):
        sc = ax.scatter(p[:, 0], p[:, 1], c=tg[:, k], cmap="viridis", s=8, linewidths=0)
        fig.colorbar(sc, ax=ax, fraction=0.046, pad=0.04)
        ax.set_title(name)
        ax.set_xlabel("PC 1")
        ax.set_ylabel("PC 2")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_results_bars(summary: pd.DataFrame, metric: str, title: str = "", higher_is_better: bool = True) -> plt.Figure:
    """Horizontal bars of ``mean ± std`` per model from a summary table (columns ``model``,
    ``<metric>_mean``, ``<metric>_std``; optional ``group`` for colours), sorted best first."""
    use_style()
    mcol, scol = f"{metric}_mean", f"{metric}_std"
    if mcol not in summary or scol not in summary:
        raise ValueError(f"summary must have columns {mcol!r} and {scol!r}; got {list(summary.columns)}")
    s = summary.sort_values(mcol, ascending=not higher_is_better)
    fig, ax = plt.subplots(figsize=(6, 0.32 * len(s) + 1.0))
    y = np.arange(len(s))[::-1]
    ax.barh(y, s[mcol], xerr=s[scol].fillna(0.0), color="tab:blue", alpha=0.75, capsize=2)
    ax.set_yticks(y, s["model"] if "model" in s else s.index)
    ax.set_xlabel(metric)
    ax.set_title(title)
    return fig
