"""Notebook 01's figures: the Poincaré disk of one network at two snapshots, per-layer radius and
separation indices over training, and the readouts beside their time-shuffled control."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments.nb01_inr_classification.geometry import EmbeddingReadout
from hgutils.plotting import poincare_disk, use_style


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


def plot_readouts(readout: EmbeddingReadout, early: int, late: int, title: str = "") -> plt.Figure:
    """Each readout (radial and angular separation, mean radius) over the snapshots: mean over the read
    networks with a ± sd band, in the true order and in the time-shuffled control (by read position);
    the paper's two snapshots marked."""
    use_style()
    names = {
        "radial_sep": r"radial $\eta^2_r$",
        "angular_sep": r"angular $\eta^2_\theta$",
        "mean_radius": "mean radius",
    }
    fig, axes = plt.subplots(1, len(readout.readouts), figsize=(4 * len(readout.readouts), 3.3))
    for ax, (key, a) in zip(np.atleast_1d(axes), readout.readouts.items()):
        for arr, lab, ls in ((a, "true order", "-"), (readout.control[key], "shuffled (control)", "--")):
            m, s = arr.mean(0), arr.std(0)
            t = np.arange(len(m))
            ax.plot(t, m, ls=ls, label=lab)
            ax.fill_between(t, m - s, m + s, alpha=0.15)
        for t0 in (early, late):
            ax.axvline(t0, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("snapshot (read position)")
        ax.set_title(names.get(key, key))
    np.atleast_1d(axes)[0].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_augmentation_curve(curve: pd.DataFrame, chance: float = 0.1, title: str = "") -> plt.Figure:
    """Test accuracy (%) against training INRs (log axis) of a learning curve run both ways
    (:func:`~.curve.learning_curve` ``both_ways=True``): one colour per model, solid with weight-space
    augmentation, dashed without (mean over seeds), chance as a dotted grey line, the legend outside
    the axes."""
    if "augmented" not in curve:
        raise ValueError("the curve has no 'augmented' column (learning_curve(..., both_ways=True))")
    use_style()
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for i, (name, g) in enumerate(curve.groupby("model", sort=False)):
        for on, style in ((True, "-"), (False, "--")):
            m = g[g["augmented"].astype(bool) == on].groupby("train_inrs")["test_accuracy"].mean() * 100
            if len(m):
                label = f"{name} ({'augmented' if on else 'not augmented'})"
                face = f"C{i}" if on else "white"  # open markers for the runs without augmentation
                ax.plot(m.index, m.values, style, marker="o", color=f"C{i}", markerfacecolor=face, label=label)
    ax.axhline(100 * chance, ls=":", color="grey", lw=1, label=f"chance ({100 * chance:.0f} %)")
    ax.set_xscale("log")
    sizes = sorted(curve["train_inrs"].unique())
    ax.set_xticks(sizes, [f"{int(n):,}" for n in sizes])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("training INRs")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title or "zoo-size learning curve with and without weight-space augmentation")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig
