"""Notebook 07's figures: the encoder's training curves, one network's parameter graph in the Poincaré
ball at the paper's two snapshots, the per-layer radius over training, and the readouts beside their
time-shuffled control.

Layers and time are ordered categories: layers are drawn on one sequential colour map (viridis, input
to output) with a colour bar, never a cycled categorical palette; legends sit outside the axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import BoundaryNorm, Colormap
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from torch import Tensor

from hgutils.experiments.nb07_training_geometry.runs import READOUTS, EmbeddingReadout
from hgutils.loop import TrainLog
from hgutils.plotting import use_style
from hgutils.weightspace.embedding_geometry import disk_coordinates, hyperbolic_radius

#: how the readouts are named on the axes
READOUT_LABELS: dict[str, str] = {
    "radial_sep": r"radial separation $\eta^2_r$",
    "angular_sep": r"angular separation $\eta^2_\theta$",
    "mean_radius": "mean hyperbolic radius",
}


def layer_names(n_layers: int) -> list[str]:
    """Tick labels of node layers ``0..n_layers - 1``: ``input``, ``1``, ..., ``output``."""
    if n_layers < 2:
        raise ValueError(f"a network has at least an input and an output layer; got {n_layers}")
    return ["input"] + [str(k) for k in range(1, n_layers - 1)] + ["output"]


def _layer_colours(n_layers: int) -> tuple[Colormap, BoundaryNorm]:
    """viridis cut into one bin per layer, and the norm mapping layer ``k`` to bin ``k``."""
    return plt.get_cmap("viridis", n_layers), BoundaryNorm(np.arange(-0.5, n_layers), n_layers)


def _layer_bar(fig: plt.Figure, cmap: Colormap, norm: BoundaryNorm, n_layers: int, rect: Sequence[float]) -> None:
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    ticks = range(n_layers) if n_layers <= 16 else np.linspace(0, n_layers - 1, 8).round().astype(int)
    bar = fig.colorbar(sm, cax=fig.add_axes(tuple(rect)), ticks=list(ticks))
    names = layer_names(n_layers)
    bar.ax.set_yticklabels([names[int(t)] for t in ticks])
    bar.set_label("layer")


def plot_ball(
    z: Tensor,
    node_layer: Tensor,
    node_type: Tensor,
    show: Sequence[int],
    steps: Sequence[int] | None = None,
    c: float = 1.0,
    title: str = "",
) -> plt.Figure:
    """One network's nodes (``z [T, V, d]``) in the Poincaré disk at snapshots ``show``, coloured by
    layer on a sequential colour map with a colour bar; bias nodes (``node_type`` 3) as triangles.
    ``d > 2`` is drawn with :func:`disk_coordinates` (radii exact, one shared PCA of the shown snapshots)."""
    use_style()
    z = torch.as_tensor(z).detach().double()
    if z.dim() != 3:
        raise ValueError(f"z must be one network's [T, V, d]; got shape {tuple(z.shape)}")
    T = z.shape[0]
    show = [int(t) % T for t in show]
    if not show:
        raise ValueError("show must name at least one snapshot")
    xy = (disk_coordinates(z[show], c) if c > 0 else z[show][..., :2]).numpy() * np.sqrt(max(c, 1e-12))
    layer = torch.as_tensor(node_layer).long().numpy()
    bias = torch.as_tensor(node_type).long().numpy() == 3
    n_layers = int(layer.max()) + 1
    cmap, norm = _layer_colours(n_layers)
    fig, axes = plt.subplots(1, len(show), figsize=(3.4 * len(show) + 1.0, 3.8), squeeze=False)
    for ax, pts, t in zip(axes[0], xy, show):
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, lw=1.0, color="0.3"))
        ax.scatter(*pts[~bias].T, c=layer[~bias], cmap=cmap, norm=norm, s=12, linewidths=0)
        ax.scatter(*pts[bias].T, c=layer[bias], cmap=cmap, norm=norm, s=36, marker="^", edgecolors="k", lw=0.5)
        ax.set(xlim=(-1.05, 1.05), ylim=(-1.05, 1.05), xticks=[], yticks=[], aspect="equal")
        ax.grid(False)
        ax.set_title(f"t = {t}" + ("" if steps is None else f" (step {int(steps[t])})"))
        for sp in ax.spines.values():
            sp.set_visible(False)
    fig.subplots_adjust(left=0.01, right=0.88, bottom=0.12, top=0.84, wspace=0.05)
    _layer_bar(fig, cmap, norm, n_layers, (0.9, 0.16, 0.015, 0.64))
    marks = [
        Line2D([], [], ls="", marker="o", color="0.4", label="neuron"),
        Line2D([], [], ls="", marker="^", color="0.4", markeredgecolor="k", label="bias node"),
    ]
    fig.legend(handles=marks, loc="lower center", ncol=2, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def layer_radius(readout: EmbeddingReadout) -> np.ndarray:
    r"""Mean hyperbolic radius of each layer's nodes at each snapshot, averaged over the read networks:
    ``[L + 1, T]`` with entry :math:`\frac1B\sum_b \frac1{|V_l|}\sum_{v\in V_l} d_c(0, z_{b,t,v})`."""
    layer = torch.as_tensor(readout.node_layer).long()
    r = hyperbolic_radius(readout.z, readout.c)  # c = 0: the Euclidean limit 2 |z|
    return np.stack([r[..., layer == k].mean(-1).mean(0).numpy() for k in range(int(layer.max()) + 1)])


def _paper_marks(ax: plt.Axes, early: int, late: int) -> None:
    for t0 in (early, late):
        ax.axvline(t0, color="0.5", lw=0.8, ls=":")


def plot_layer_radius(readout: EmbeddingReadout, early: int, late: int, title: str = "") -> plt.Figure:
    """Per-layer mean hyperbolic radius over the snapshots (:func:`layer_radius`), one line per layer
    on a sequential colour map with a colour bar, in the true order and, beside it, in the
    time-shuffled control (by read position); the paper's two snapshots marked (dotted)."""
    use_style()
    true = layer_radius(readout)
    shuffled = layer_radius(EmbeddingReadout(**{**readout.__dict__, "z": readout.z_shuffled}))
    n_layers = true.shape[0]
    cmap, norm = _layer_colours(n_layers)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, rad, name in zip(axes, (true, shuffled), ("true order", "shuffled snapshots (control)")):
        for k in range(n_layers):
            ax.plot(np.arange(rad.shape[1]), rad[k], color=cmap(norm(k)), lw=1.2)
        _paper_marks(ax, early, late)
        ax.set_xlabel("snapshot t (read position)")
        ax.set_title(name)
    axes[0].set_ylabel(r"mean radius $d_c(0, z)$ of the layer's nodes")
    fig.subplots_adjust(left=0.08, right=0.88, bottom=0.15, top=0.84, wspace=0.08)
    _layer_bar(fig, cmap, norm, n_layers, (0.9, 0.15, 0.015, 0.69))
    if title:
        fig.suptitle(title)
    return fig


def plot_readouts(readout: EmbeddingReadout, early: int, late: int, title: str = "") -> plt.Figure:
    """Each readout (:data:`READOUTS`) over the snapshots: mean over the read networks with a ± sd
    band, in the true order (solid) and in the time-shuffled control (dashed, by read position); the
    paper's two snapshots marked (dotted). The legend sits below the axes."""
    use_style()
    keys = [k for k in READOUTS if k in readout.readouts]
    if not keys:
        raise ValueError(f"the readout has none of {READOUTS}")
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.4), squeeze=False)
    for ax, key in zip(axes[0], keys):
        for arr, ls, colour in ((readout.readouts[key], "-", "C0"), (readout.control[key], "--", "C1")):
            m, s = arr.mean(0), arr.std(0)
            t = np.arange(len(m))
            ax.plot(t, m, ls=ls, color=colour)
            ax.fill_between(t, m - s, m + s, color=colour, alpha=0.15, lw=0)
        _paper_marks(ax, early, late)
        ax.set_xlabel("snapshot t (read position)")
        ax.set_title(READOUT_LABELS.get(key, key))
    handles = [
        Line2D([], [], color="C0", ls="-", label="true order (mean ± sd over read INRs)"),
        Line2D([], [], color="C1", ls="--", label="shuffled snapshots (control)"),
        Line2D([], [], color="0.5", ls=":", label=f"the paper's t = 11 and 97 (here {early}, {late})"),
    ]
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.27, top=0.84, wspace=0.25)
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def plot_encoder_curves(log: TrainLog, cap: int, title: str = "") -> plt.Figure:
    """The encoder's training loss (all stage-1 terms) and validation reconstruction loss (link,
    magnitude, sign on full graphs) per epoch, the best validation epoch marked (dashed) and, when
    the run reached it, the epoch cap (dotted)."""
    use_style()
    train, val = log.curve("train_loss"), log.curve("val_loss")
    if not train:
        raise ValueError("the training log has no epochs")
    ep = np.arange(1, len(train) + 1)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    for ax, y, name in zip(
        axes, (train, val), ("training loss (every stage-1 term)", "validation loss (reconstruction)")
    ):
        ax.plot(ep, y, color="C0", marker="o" if len(ep) <= 20 else None, ms=3)
        if log.best_epoch >= 0:
            ax.axvline(log.best_epoch + 1, color="0.4", ls="--", lw=0.8)
        if len(ep) >= cap:
            ax.axvline(cap, color="C3", ls=":", lw=1.0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("epoch")
        ax.set_title(name)
    handles = [Line2D([], [], color="0.4", ls="--", label="best validation epoch")]
    if len(ep) >= cap:
        handles.append(Line2D([], [], color="C3", ls=":", label=f"epoch cap ({cap}): reached"))
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.28, top=0.82, wspace=0.25)
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    return fig
