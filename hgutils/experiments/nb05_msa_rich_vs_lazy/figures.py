"""Notebook 05's figures: the similarity matrices by block, the training curves, the metric-isotropy
violins, the hidden layers' principal components, the plane and its swiss roll, and the pullback metric
drawn as ellipses."""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.patches import Ellipse

from hgutils.data.points import swiss_roll, unrolled_plane
from hgutils.experiments.nb05_msa_rich_vs_lazy.preset import GROUPS
from hgutils.plotting import use_style


def block_label(m: dict[str, Any]) -> str:
    """The block a model belongs to in the similarity matrices: ``"K2 rich"``, ``"untrained g=1"``, ..."""
    if m["trained"]:
        return f"K{m['classes']} {m['group']}"
    return f"{m['group']} g={m['gain']:g}"


def _blocks(meta: list[dict[str, Any]]) -> list[tuple[str, int, int, bool]]:
    """Contiguous blocks ``(label, start, stop, trained)`` in model order."""
    out: list[tuple[str, int, int, bool]] = []
    for i, m in enumerate(meta):
        lab = block_label(m)
        if out and out[-1][0] == lab:
            out[-1] = (lab, out[-1][1], i + 1, m["trained"])
        else:
            out.append((lab, i, i + 1, m["trained"]))
    return out


#: what the blocks of the similarity matrices are, in words (the figure's axis title)
BLOCK_AXIS = (
    "networks by block: trained on K classes in the rich or lazy regime, untrained at gain g, "
    "lazy initialisations (gain g) before training"
)


def plot_similarity_panels(
    mats: dict[str, np.ndarray],
    meta: list[dict[str, Any]],
    scores: pd.DataFrame | None = None,
    ncols: int = 3,
    own_scale: bool = False,
) -> plt.Figure:
    """Heatmaps of the similarity matrices, labelled by block (K × regime for trained networks,
    untrained group, lazy initialisations), block boundaries drawn (thick between trained and
    untrained groups); the panel titles carry the regime AUC and ratio when ``scores`` is given.

    Colours span [0, 1] for every measure, with one colour bar for the figure; or with ``own_scale`` each
    measure's own range [min S, 1] (the structure of measures whose similarities are all near 1), one colour
    bar per panel. Block labels are set at 10 pt on panels of about 3.7 inches, so that they stay readable
    when the figure is shown at a page's width."""
    use_style()
    n = len(mats)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    width = (3.9 if own_scale else 3.6) * ncols + 1.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, 3.9 * nrows + 0.5), squeeze=False, layout="constrained")
    blocks = _blocks(meta)
    centres = [(a + b - 1) / 2 for _, a, b, _ in blocks]
    labels = [lab for lab, *_ in blocks]
    im = None
    for k, (ax, (name, S)) in enumerate(zip(axes.flat, mats.items())):
        vmin = float(np.min(S)) if own_scale else 0.0
        im = ax.imshow(S, vmin=vmin, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.grid(False)
        for (_, a, _, tr), (_, _, _, tr_prev) in zip(blocks[1:], blocks[:-1]):
            major = tr != tr_prev or not tr
            for f in (ax.axhline, ax.axvline):
                f(a - 0.5, color="w", lw=2.0 if major else 0.7, ls="-" if major else "--")
        ax.set_xticks(centres, labels, rotation=50, ha="right", rotation_mode="anchor", fontsize=10)
        ax.set_yticks(centres, labels if k % ncols == 0 else [""] * len(labels), fontsize=10)
        title = name
        if scores is not None:
            title += f"\nregime AUC {scores.loc[name, 'regime AUC']:.2f}, ratio {scores.loc[name, 'regime ratio']:.2f}"
        ax.set_title(title, fontsize=11)
        if own_scale:
            cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
            cb.ax.tick_params(labelsize=9)
            if k % ncols == ncols - 1:
                cb.set_label("similarity (1 = same)", fontsize=10)
    if not own_scale and im is not None:
        cb = fig.colorbar(im, ax=axes, shrink=0.8, label="similarity (1 = same)")
        cb.ax.tick_params(labelsize=10)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.supxlabel(BLOCK_AXIS, fontsize=10)
    return fig


def plot_training_curves(cells: list[dict[str, Any]], title: str = "") -> plt.Figure:
    """Training loss per step of every network, one panel per K, rich and lazy in two colours; a dot
    marks the step at which each network met the stopping rule (or the cap)."""
    use_style()
    ks = sorted({c["classes"] for c in cells})
    fig, axes = plt.subplots(1, len(ks), figsize=(5 * len(ks), 3.6), squeeze=False)
    colours = {"rich": "tab:blue", "lazy": "tab:orange"}
    for ax, K in zip(axes.flat, ks):
        for c in (c for c in cells if c["classes"] == K):
            for i in range(c["history"].shape[1]):
                n = int(c["steps"][i])
                h = c["history"][: max(n, 1), i].numpy()
                ax.plot(np.arange(1, len(h) + 1), h, color=colours[c["regime"]], lw=0.8, alpha=0.7)
                ax.plot([len(h)], [h[-1]], "o", color=colours[c["regime"]], ms=3)
        for r, col in colours.items():
            ax.plot([], [], color=col, label=r)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_title(f"K = {K}" + (f" · {title}" if title else ""))
        ax.legend()
    fig.tight_layout()
    return fig


def plot_isotropy(isos: dict[str, tuple[torch.Tensor, list[dict[str, Any]]]], ncols: int = 2) -> plt.Figure:
    r"""Distribution of the metric isotropy :math:`\sqrt{\lambda_{min}/\lambda_{max}}` per group
    (all networks, all held-out points), one panel per recipe (violins, medians marked)."""
    use_style()
    ncols = min(ncols, len(isos))
    nrows = math.ceil(len(isos) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.6 * nrows), squeeze=False, sharey=True)
    colours = {"rich": "tab:blue", "lazy": "tab:orange", "untrained": "tab:gray", "lazy init": "tab:brown"}
    for ax, (name, (iso, meta)) in zip(axes.flat, isos.items()):
        data = [iso[[i for i, m in enumerate(meta) if m["group"] == g]].flatten().numpy() for g in GROUPS]
        parts = ax.violinplot(data, showmedians=True, showextrema=False)
        for body, g in zip(parts["bodies"], GROUPS):
            body.set_facecolor(colours[g])
            body.set_alpha(0.6)
        ax.set_xticks(range(1, len(GROUPS) + 1), GROUPS)
        ax.set_ylim(0, 1)
        ax.set_title(name)
        ax.set_xlabel("group")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"isotropy $\sqrt{\lambda_{min}/\lambda_{max}}$ of $G(p)$")
    for ax in list(axes.flat)[len(isos) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_hidden_pca(reps: dict[str, np.ndarray], color: np.ndarray, cmap: str = "twilight") -> plt.Figure:
    """First two principal components of each hidden representation, coloured by ``color``
    (e.g. the polar angle of each input, with a cyclic colour map)."""
    use_style()
    fig, axes = plt.subplots(1, len(reps), figsize=(4.3 * len(reps), 3.8), layout="constrained")
    for ax, (name, H) in zip(np.atleast_1d(axes), reps.items()):
        Hc = H - H.mean(0)
        U, s, _ = np.linalg.svd(Hc, full_matrices=False)
        Z = U[:, :2] * s[:2]
        sc = ax.scatter(Z[:, 0], Z[:, 1], c=color, cmap=cmap, s=6, linewidths=0)
        ax.set_title(f"{name}: hidden-layer PCA")
        ax.set_xlabel("PC1")
        ax.set_ylabel("PC2")
    fig.colorbar(sc, ax=np.atleast_1d(axes).tolist(), label="polar angle of the input (rad)")
    return fig


def plot_swiss_roll(points: torch.Tensor, color: np.ndarray) -> plt.Figure:
    """The plane (unrolled) and the swiss roll, coloured by the chart coordinate t."""
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
    ax2.set_xlabel("x")
    ax2.set_ylabel("y")
    ax2.set_zlabel("z")
    fig.tight_layout()
    return fig


def plot_metric_field(ax: plt.Axes, G: torch.Tensor, points: torch.Tensor, title: str = "", every: int = 1) -> plt.Axes:
    """Ellipses of the pullback metric (unit balls of G^{-1}, normalised) on the input grid."""
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
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title)
    return ax
