r"""The rich-vs-lazy experiment of notebook 05 (MSA paper, arXiv 2603.28764, §4, Figs. 1, 5, 6).

Task (documented choice; the paper's exact task is not public): **ring blobs** -- ``2K`` Gaussian
blobs (std ``blob_std``) centred at angles :math:`2\pi j / 2K` on the unit circle, blob ``j``
labelled ``j mod K``. Each class is two opposite blobs, so the task is non-linear for every K
(K = 2 is XOR on a ring).

Networks: one-hidden-layer ReLU MLPs ``2 -> hidden -> K``, init :math:`W \sim \mathcal N(0,
(g/\sqrt{\text{fan\_in}})^2)`, zero bias, trained by full-batch gradient descent (heavy-ball
momentum) on the Chizat-Bach (2019) **α-scaled** squared loss

.. math:: f_\alpha(x) = \alpha\,(h(w, x) - h(w_0, x)), \qquad
   L = \frac{1}{\alpha^2}\,\frac1n\sum_i \|f_\alpha(x_i) - y_i\|^2,

with one-hot targets. **Rich** = small init (``gain_rich = 0.01``, α = 1: the paper's "small
weight initialisation"); **lazy** = standard init with large α (``alpha_lazy = 30``, equivalent to a
large initial output scale: the network stays at its linearisation). Each regime uses a learning
rate that is stable for its tangent kernel. Regime checks: relative weight change
:math:`\|W-W_0\|_F/\|W_0\|_F` and the alignment of the hidden-layer kernel after training with the
one at initialisation (centred, :math:`\langle K_0, K_1\rangle/\|K_0\|\|K_1\|`; 1 = frozen
features); the alignment with the label kernel is reported alongside. Training uses
:func:`hgutils.weightspace.stacked.train_stacked`.

Hierarchy of the sweep (documented choice): the root splits trained from untrained networks
(tree distance 4); trained networks then split by number of classes (3), regime (2) and seed (1);
untrained networks (the initial weights of the same runs) depend only on their random seed, so they
are all siblings (distance 1). A measure recovers the hierarchy when its dissimilarity rank-correlates
with this tree distance (:func:`hierarchy_score`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import spearmanr

from hgutils.data.points import ring_blobs, swiss_roll, unrolled_plane
from hgutils.presets import Preset
from hgutils.similarity.baselines import cca_matrix, linear_cka_matrix, procrustes_matrix, rsa_matrix
from hgutils.similarity.msa import msa_matrix_from_metrics
from hgutils.similarity.pullback import mlp_pullback_metrics
from hgutils.similarity.regimes import kernel_alignment, label_alignment, relative_weight_change

REGIMES = ("rich", "lazy")
SWEEP_VERSION = 3  # bump when run_sweep's output changes (part of the notebook's cache key)
MEASURES = ("MSA", "CKA", "CCA", "RSA", "Procrustes")


@dataclass(frozen=True)
class RichLazyConfig(Preset):
    """Sizes of notebook 05 (smoke values are the defaults)."""

    class_counts: tuple[int, ...] = (2, 5)  # numbers of classes K in the hierarchical sweep
    n_seeds: int = 2  # seeds per (K, regime) cell
    hidden: int = 100  # hidden width of the 2 -> hidden (x depth) -> K ReLU MLP
    depth: int = 1  # number of hidden layers; MSA and the baselines compare the last one
    n_per_blob: int = 30  # training points per blob (2K blobs)
    blob_std: float = 0.15  # std of each Gaussian blob (centres on the unit circle)
    gain_rich: float = 0.01  # g in W ~ N(0, (g/sqrt(fan_in))^2): small init => rich
    gain_lazy: float = 1.0  # g for the lazy regime (standard scale)
    alpha_rich: float = 1.0  # Chizat output scale alpha, rich regime (1 = plain network)
    alpha_lazy: float = 30.0  # alpha, lazy regime (large => linearised dynamics)
    lr_rich: float = 0.1  # full-batch gradient-descent learning rate, rich regime
    lr_lazy: float = 0.005  # learning rate, lazy regime (stable for its larger NTK)
    momentum: float = 0.9  # heavy-ball momentum (both regimes)
    steps: int = 1000  # gradient steps
    grid: int = 16  # MSA reference measure: grid x grid uniform points on [-extent, extent]^2
    extent: float = 1.5  # half-width of the MSA grid (covers the ring of blobs)
    n_rep: int = 200  # samples (from the task distribution) for the extrinsic baselines
    swiss_points: int = 400  # points on the swiss roll / plane
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {
            "n_seeds": 5,
            "hidden": 256,
            "steps": 3000,
            "grid": 32,
            "n_rep": 400,
            "n_per_blob": 50,
            "swiss_points": 1000,
        },
        "paper": {
            "n_seeds": 10,
            "hidden": 256,
            "steps": 10000,
            "grid": 64,
            "n_rep": 1000,
            "n_per_blob": 100,
            "swiss_points": 2000,
        },
    }


CONFIG = RichLazyConfig


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# training and regime checks
# --------------------------------------------------------------------------------------------
def cell_seeds(k_index: int, regime: str, n_seeds: int, base_seed: int = 0) -> list[int]:
    """Distinct init seeds per (K, regime, seed) cell, so untrained networks differ across cells."""
    r = REGIMES.index(regime)
    return [base_seed * 10_000 + 1000 * (2 * k_index + r) + s for s in range(n_seeds)]


def train_cell(
    n_classes: int, regime: str, seeds: list[int], cfg: RichLazyConfig, X: torch.Tensor, y: torch.Tensor
) -> dict[str, Any]:
    """Train ``len(seeds)`` stacked MLPs of one (K, regime) cell; return init/final params and checks."""
    from hgutils.weightspace.stacked import init_mlp, mlp_forward, train_stacked

    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}; got {regime!r}")
    rich = regime == "rich"
    alpha = cfg.alpha_rich if rich else cfg.alpha_lazy
    gain = cfg.gain_rich if rich else cfg.gain_lazy
    p0 = init_mlp(len(seeds), (2, *([cfg.hidden] * cfg.depth), n_classes), scheme="normal", gain=gain, seeds=seeds)
    last = cfg.depth - 1
    Y = torch.nn.functional.one_hot(y, n_classes).to(X.dtype)
    with torch.no_grad():
        out0 = mlp_forward(p0, X)

    def loss_fn(p: dict[str, torch.Tensor]) -> torch.Tensor:
        f = alpha * (mlp_forward(p, X) - out0)
        return ((f - Y) ** 2).sum(-1).mean(-1) / alpha**2

    res = train_stacked(
        p0,
        loss_fn,
        steps=cfg.steps,
        optimizer="sgd",
        lr=cfg.lr_rich if rich else cfg.lr_lazy,
        momentum=cfg.momentum,
        desc=f"K={n_classes} {regime}",
    )
    p1 = res.params
    with torch.no_grad():
        acc = ((alpha * (mlp_forward(p1, X) - out0)).argmax(-1) == y).float().mean(-1)
    return {
        "p0": p0,
        "p1": p1,
        "acc": acc,
        "alpha": alpha,
        "rwc": relative_weight_change(p0, p1, "W0"),
        "kernel_align": kernel_alignment(p0, p1, X, last),
        "label_align0": label_alignment(p0, X, y, n_classes, last),
        "label_align1": label_alignment(p1, X, y, n_classes, last),
    }


# --------------------------------------------------------------------------------------------
# the sweep
# --------------------------------------------------------------------------------------------
def hidden_stack(params_list: list[dict[str, torch.Tensor]], depth: int = 1) -> dict[str, torch.Tensor]:
    """Concatenate the first ``depth`` (hidden) layers of several stacked MLPs of equal widths.

    Returns a stacked dict whose output layer is a zero placeholder of width 1, so that
    ``mlp_forward(..., layer=depth-1)`` / ``mlp_pullback_metrics(..., layer=depth-1)`` give the last
    hidden layer of every network (the output layers differ in width across K and are not compared).
    """
    out = {}
    for l in range(depth):
        out[f"W{l}"] = torch.cat([p[f"W{l}"] for p in params_list])
        out[f"b{l}"] = torch.cat([p[f"b{l}"] for p in params_list])
    M, H = out[f"b{depth - 1}"].shape
    dt = out["W0"].dtype
    out[f"W{depth}"] = torch.zeros(M, 1, H, dtype=dt)
    out[f"b{depth}"] = torch.zeros(M, 1, dtype=dt)
    return out


def run_sweep(cfg: RichLazyConfig, seed: int = 0) -> dict[str, Any]:
    """Train every (K, regime) cell; return models (hidden layers), metadata and regime checks.

    ``meta`` is a list of dicts ``{"classes", "regime", "seed", "trained"}`` aligned with the
    model axis of ``hidden`` (trained networks first, then their initial weights).
    """
    from hgutils.repro import progress

    g = torch.Generator().manual_seed(seed)
    cells, meta_t, meta_u, trained, untrained = [], [], [], [], []
    for ki, K in enumerate(progress(cfg.class_counts, desc="cells")):
        X, y = ring_blobs(K, cfg.n_per_blob, cfg.blob_std, generator=g)
        for regime in REGIMES:
            seeds = cell_seeds(ki, regime, cfg.n_seeds, seed)
            out = train_cell(K, regime, seeds, cfg, X, y)
            cells.append(
                {
                    "classes": K,
                    "regime": regime,
                    **{k: out[k] for k in ("acc", "rwc", "kernel_align", "label_align0", "label_align1", "alpha")},
                }
            )
            trained.append(out["p1"])
            untrained.append(out["p0"])
            for s in range(cfg.n_seeds):
                meta_t.append({"classes": K, "regime": regime, "seed": s, "trained": True})
                meta_u.append({"classes": K, "regime": regime, "seed": s, "trained": False})
    hidden = hidden_stack(trained + untrained, cfg.depth)
    return {"hidden": hidden, "meta": meta_t + meta_u, "cells": cells, "layer": cfg.depth - 1}


def task_samples(cfg: RichLazyConfig, seed: int = 0) -> torch.Tensor:
    """``n_rep`` input samples for the extrinsic baselines: a ring of ``2 max(K)`` blobs (labels unused).

    The same samples serve every network (the baselines compare responses to identical inputs).
    """
    g = torch.Generator().manual_seed(10_000 + seed)
    nb = 2 * max(cfg.class_counts)
    per = max(1, cfg.n_rep // nb)
    X, _ = ring_blobs(max(cfg.class_counts), per, cfg.blob_std, generator=g)
    return X


def similarity_matrices(
    hidden: dict[str, torch.Tensor], points: torch.Tensor, samples: torch.Tensor, layer: int = 0
) -> dict[str, np.ndarray]:
    """Similarity matrices (1 = same) of all models' hidden layers for the five measures.

    MSA: ``1 - d_MSA`` on the grid ``points`` (metrics of each model computed once); CKA, CCA,
    RSA (Euclidean RDM, Pearson), Procrustes: on the hidden activations at ``samples``.
    """
    from hgutils.weightspace.stacked import mlp_forward

    G = mlp_pullback_metrics(hidden, points, layer=layer)
    with torch.no_grad():
        reps = list(mlp_forward(hidden, samples, layer=layer).double().numpy())
    return {
        "MSA": 1.0 - msa_matrix_from_metrics(G),
        "CKA": linear_cka_matrix(reps),
        "CCA": cca_matrix(reps),
        "RSA": rsa_matrix(reps),
        "Procrustes": procrustes_matrix(reps),
    }


# --------------------------------------------------------------------------------------------
# hierarchy scores
# --------------------------------------------------------------------------------------------
def tree_distance(meta: list[dict[str, Any]]) -> np.ndarray:
    """Tree distance of the design hierarchy (module docstring): 4 trained/untrained, then 3/2/1."""
    M = len(meta)
    T = np.zeros((M, M))
    for i, a in enumerate(meta):
        for j, b in enumerate(meta):
            if i == j:
                continue
            if a["trained"] != b["trained"]:
                T[i, j] = 4
            elif not a["trained"]:
                T[i, j] = 1
            elif a["classes"] != b["classes"]:
                T[i, j] = 3
            elif a["regime"] != b["regime"]:
                T[i, j] = 2
            else:
                T[i, j] = 1
    return T


def hierarchy_score(S: np.ndarray, meta: list[dict[str, Any]]) -> float:
    """Spearman correlation between dissimilarity ``1 - S`` and :func:`tree_distance` over pairs i < j."""
    T = tree_distance(meta)
    iu = np.triu_indices(len(meta), k=1)
    return float(spearmanr(1.0 - S[iu], T[iu]).statistic)


def model_labels(meta: list[dict[str, Any]]) -> list[str]:
    """Short tick labels ``"K2 rich s0"`` / ``"K2 rich s0 (init)"``."""
    return [f"K{m['classes']} {m['regime']} s{m['seed']}" + ("" if m["trained"] else " init") for m in meta]


# --------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------
def _boundaries(meta: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """Grid lines between (trained) groups and between (trained, classes, regime) groups."""
    major, minor = [], []
    for i in range(1, len(meta)):
        a, b = meta[i - 1], meta[i]
        if a["trained"] != b["trained"]:
            major.append(i - 0.5)
        elif a["trained"] and (a["classes"], a["regime"]) != (b["classes"], b["regime"]):
            minor.append(i - 0.5)
    return major, minor


def plot_similarity_panels(
    mats: dict[str, np.ndarray], meta: list[dict[str, Any]], scores: dict[str, float] | None = None
) -> plt.Figure:
    """Side-by-side heatmaps of the similarity matrices with the design hierarchy marked.

    Thick white lines separate trained from untrained networks, thin lines the (K, regime) cells
    of the trained networks; tick labels name every model.
    """
    from hgutils.plotting import heatmap, use_style

    use_style()
    n = len(mats)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 4.4))
    axes = np.atleast_1d(axes)
    labels = model_labels(meta)
    major, minor = _boundaries(meta)
    for ax, (name, S) in zip(axes, mats.items()):
        title = name if scores is None else f"{name}  (hierarchy ρ={scores[name]:.2f})"
        heatmap(
            ax,
            S,
            labels_x=labels if len(meta) <= 24 else None,
            labels_y=labels if ax is axes[0] and len(meta) <= 24 else None,
            title=title,
            vmin=0.0,
            vmax=1.0,
        )
        for x in major:
            ax.axhline(x, color="w", lw=2.0)
            ax.axvline(x, color="w", lw=2.0)
        for x in minor:
            ax.axhline(x, color="w", lw=0.6, ls="--")
            ax.axvline(x, color="w", lw=0.6, ls="--")
    fig.tight_layout()
    return fig


def plot_hidden_pca(reps: dict[str, np.ndarray], color: np.ndarray, cmap: str = "twilight") -> plt.Figure:
    """First two principal components of each hidden representation, coloured by ``color``
    (e.g. the polar angle of each input, with a cyclic colour map)."""
    from hgutils.plotting import use_style

    use_style()
    fig, axes = plt.subplots(1, len(reps), figsize=(4 * len(reps), 3.6))
    for ax, (name, H) in zip(np.atleast_1d(axes), reps.items()):
        Hc = H - H.mean(0)
        U, s, _ = np.linalg.svd(Hc, full_matrices=False)
        Z = U[:, :2] * s[:2]
        ax.scatter(Z[:, 0], Z[:, 1], c=color, cmap=cmap, s=6, linewidths=0)
        ax.set_title(f"{name}: hidden-layer PCA")
        ax.set_xlabel("PC1")
        ax.set_ylabel("PC2")
    fig.tight_layout()
    return fig


def plot_swiss_roll(points: torch.Tensor, color: np.ndarray) -> plt.Figure:
    """The plane (unrolled) and the swiss roll, coloured by the chart coordinate t."""
    from hgutils.plotting import use_style

    use_style()
    A, B = unrolled_plane(points).numpy(), swiss_roll(points).numpy()
    fig = plt.figure(figsize=(9, 4))
    ax1 = fig.add_subplot(1, 2, 1)
    ax1.scatter(A[:, 0], A[:, 1], c=color, s=5, cmap="viridis")
    ax1.set_title("plane (arc-length coordinates)")
    ax1.set_xlabel("s(t)")
    ax1.set_ylabel("h")
    ax2 = fig.add_subplot(1, 2, 2, projection="3d")
    ax2.scatter(B[:, 0], B[:, 1], B[:, 2], c=color, s=5, cmap="viridis")
    ax2.set_title("swiss roll")
    fig.tight_layout()
    return fig


def plot_metric_field(ax: plt.Axes, G: torch.Tensor, points: torch.Tensor, title: str = "", every: int = 1) -> plt.Axes:
    """Ellipses of the pullback metric (unit balls of G^{-1}, normalised) on the input grid."""
    from matplotlib.patches import Ellipse

    from hgutils.plotting import use_style

    use_style()
    G = G.double()
    pts = points.double()
    step = float((pts[:, 0].max() - pts[:, 0].min()) / max(1, int(math.isqrt(len(pts))) - 1)) * every
    lam, V = torch.linalg.eigh(G)
    for k in range(0, len(pts), every):
        r = 1.0 / torch.sqrt(lam[k].clamp_min(1e-12))
        r = 0.45 * step * r / r.max()
        ang = math.degrees(math.atan2(float(V[k, 1, 0]), float(V[k, 0, 0])))
        ax.add_patch(Ellipse(pts[k].tolist(), 2 * float(r[0]), 2 * float(r[1]), angle=ang, fill=False, lw=0.6))
    lim = float(pts.abs().max()) + step
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_title(title)
    return ax
