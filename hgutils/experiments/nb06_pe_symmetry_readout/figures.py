"""Notebook 06's figures of the readout: the encodings' lift residuals (:func:`plot_lift_residuals`), the
shapes (:func:`plot_shapes`), the training pools on each domain (:func:`plot_domains`), the training
curves (:func:`plot_training_curves`), the readout heatmaps (:func:`plot_readout_heatmaps`) and the
rotation sweeps (:func:`plot_rotation_sweeps`). The factor study's figures are in :mod:`.factor_figures`."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb06_pe_symmetry_readout.grid import GridResult
from hgutils.experiments.nb06_pe_symmetry_readout.preset import SHORT
from hgutils.experiments.nb06_pe_symmetry_readout.readout import _one_cell
from hgutils.plotting import heatmap, use_style
from hgutils.symmetry.shapes import Shape


def plot_lift_residuals(lift_df: pd.DataFrame):
    """Heatmap encoding × element of log10 lift residuals (exact lifts at the floor)."""
    use_style()
    piv = lift_df.pivot(index="encoding", columns="element", values="residual")
    piv = piv[list(dict.fromkeys(lift_df["element"]))].loc[list(dict.fromkeys(lift_df["encoding"]))]
    fig, ax = plt.subplots(figsize=(9, 2.4))
    heatmap(
        ax,
        np.log10(np.maximum(piv.to_numpy(), 1e-16)),
        list(piv.columns),
        list(piv.index),
        title="log10 lift residual (≤ -10: exact lift)",
        cmap="magma",
        vmin=-16,
        vmax=0,
        annotate=True,
        fmt=".1f",
    )
    return fig


#: the element names of the readout (:mod:`hgutils.symmetry.groups`) in words, for the heatmaps' x axis
ELEMENT_AXIS = "group element g (R θ: rotation by θ°; S θ: reflection across the line at θ°)"


def observation_title(observation: str) -> str:
    """An observation of :func:`~hgutils.experiments.nb06_pe_symmetry_readout.readout.readout_frame` in words,
    its code name kept in brackets: ``prefix1@init`` is the first-layer Gram of the same networks' initial
    weights, the random baseline every trained score is read against."""
    if observation == "prefix1@init":
        return "first-layer Gram of the initial weights\n(random baseline) [prefix1@init]"
    if observation == "functional":
        return "the learned function: f(g·x) vs f(x)\n(ground truth) [functional]"
    if observation.startswith("prefix") and observation[6:].isdigit():
        k = int(observation[6:])
        what = "first-layer Gram" if k == 1 else f"Gram of the first {k} linear maps"
        return f"{what} of the trained weights\n[{observation}]"
    return observation


def plot_readout_heatmaps(
    frame: pd.DataFrame,
    observations: Sequence[str],
    variant: str = "frobenius",
    element_order: Sequence[str] | None = None,
    shape_order: Sequence[str] | None = None,
):
    """Grid of heatmaps: rows = encodings, columns = observations; each shape × element (seed mean).

    Every panel reads the same colour scale, so the figure has one colour bar. Columns are titled in words
    (:func:`observation_title`: ``prefix1@init`` is the first-layer Gram of the initial weights, the
    random baseline), rows by their encoding. Cells whose element is outside :math:`G_{lift}` carry a white
    dot; outside :math:`G_{true}` a small white cross, so the hierarchy can be read off the picture (the
    legend under the panels says so).
    """
    from matplotlib.lines import Line2D

    use_style()
    _one_cell(frame, "plot_readout_heatmaps")
    encs = list(dict.fromkeys(frame["encoding"]))
    els = list(element_order or dict.fromkeys(frame["element"]))
    shps = list(shape_order or dict.fromkeys(frame["shape"]))
    fig, axes = plt.subplots(
        len(encs),
        len(observations),
        figsize=(3.3 * len(observations) + 1.6, 2.0 * len(encs) + 1.8),
        squeeze=False,
        layout="constrained",
    )
    for i, enc in enumerate(encs):
        for j, obs in enumerate(observations):
            var = "data" if obs == "functional" else variant
            f = frame[(frame["encoding"] == enc) & (frame["observation"] == obs) & (frame["variant"] == var)]
            piv = f.groupby(["shape", "element"])["score"].mean().unstack()[els].loc[shps]
            lift = f.groupby("element")["liftable"].first()[els].to_numpy()
            true = f.groupby(["shape", "element"])["in_G_true"].first().unstack()[els].loc[shps].to_numpy()
            ax = axes[i, j]
            title = observation_title(obs) if i == 0 else ""
            bottom = i == len(encs) - 1
            heatmap(
                ax,
                piv.to_numpy(),
                els if bottom else [],  # the rows share the elements: named under the bottom row
                shps if j == 0 else [],
                title,
                vmin=-0.2,
                vmax=1.0,
                colorbar=False,
                tick_fontsize=9,
            )
            ax.title.set_fontsize(9)
            rr, cc = np.meshgrid(np.arange(len(shps)), np.arange(len(els)), indexing="ij")
            dots = ~lift[None, :].repeat(len(shps), 0)
            crosses = ~dots & ~true.astype(bool)
            ax.scatter(cc[dots], rr[dots], marker=".", color="w", s=6)
            ax.scatter(cc[crosses], rr[crosses], marker="x", color="w", s=8, linewidths=0.8)
            if j == 0:
                ax.set_ylabel(f"{enc}\nshape", fontsize=9)
            if bottom:
                ax.set_xlabel("group element g", fontsize=9)
    fig.colorbar(
        axes[0, 0].images[0],
        ax=axes,
        shrink=0.9,
        label="readout score of g (1: read as an exact symmetry; below -0.2 drawn at -0.2)",
    )
    handles = [
        Line2D([], [], marker=".", color="0.2", ls="", ms=7, label="dot: the encoding cannot lift g"),
        Line2D(
            [], [], marker="x", color="0.2", ls="", ms=5, label="cross: g liftable, but not a symmetry of the shape"
        ),
    ]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=2,
        fontsize=9,
        title=ELEMENT_AXIS,
        title_fontsize=9,
    )
    score = {"frobenius": "Frobenius", "cosine": "cosine"}.get(variant, variant)
    fig.suptitle(f"readout scores ({score} score, seed mean) of each group element g, per shape", fontsize=11)
    return fig


def plot_rotation_sweeps(sweep: pd.DataFrame, shape_order: Sequence[str] | None = None):
    """Top row: seed-mean readout score vs rotation angle per encoding (one line per shape);
    bottom row: the encoding's lift residual vs angle (log scale)."""
    use_style()
    encs = list(dict.fromkeys(sweep["encoding"]))
    shps = list(shape_order or dict.fromkeys(sweep["shape"]))
    fig, axes = plt.subplots(
        2,
        len(encs),
        figsize=(4.6 * len(encs), 5.2),
        sharex=True,
        gridspec_kw={"height_ratios": [2.2, 1]},
        squeeze=False,
    )
    for j, enc in enumerate(encs):
        f = sweep[sweep["encoding"] == enc]
        ax = axes[0, j]
        for shape in shps:
            g = f[f["shape"] == shape].sort_values("angle")
            ax.plot(g["angle"], g["score"], lw=1.1, label=shape)
        for a in (60, 90, 120, 180, 240, 270, 300):
            ax.axvline(a, color="0.8", lw=0.6, zorder=0)
        ax.set_title(enc)
        ax.set_ylabel("readout score")
        g = f[f["shape"] == shps[0]].sort_values("angle")
        axes[1, j].semilogy(g["angle"], np.maximum(g["residual"].to_numpy(), 1e-16), color="k", lw=1)
        axes[1, j].set_ylabel("lift residual")
        axes[1, j].set_xlabel("rotation angle (degrees)")
        axes[1, j].set_xticks(range(0, 361, 60))
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_shapes(shapes: Sequence[Shape], res: int = 161):
    """The SDFs on [-1.2, 1.2]² (colour) with their zero level set, one panel per shape."""
    use_style()
    t = torch.linspace(-1.2, 1.2, res, dtype=torch.float64)
    xx, yy = torch.meshgrid(t, t, indexing="xy")
    pts = torch.stack((xx, yy), dim=-1)
    fig, axes = plt.subplots(1, len(shapes), figsize=(2.2 * len(shapes), 2.4), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        z = shape.sdf(pts).numpy()
        ax.imshow(z, extent=(-1.2, 1.2, -1.2, 1.2), origin="lower", cmap="RdBu", vmin=-1, vmax=1)
        ax.contour(t.numpy(), t.numpy(), z, levels=[0.0], colors="k", linewidths=1)
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, ls="--", lw=0.6, color="0.4"))
        ax.set_title(f"{shape.name} ({shape.group_name})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    fig.tight_layout()
    return fig


def _cell_label(domain: str, wd: float) -> str:
    return f"{domain} · wd {wd:g}"


def plot_training_curves(grid: GridResult, smooth: int = 25):
    """Training loss (moving average over ``smooth`` steps; median over shapes and seeds, log scale) per
    encoding, one line per (domain, weight decay) cell."""
    use_style()
    encs = [e.name for e in grid.encodings]
    cells = list(dict.fromkeys(zip(grid.meta["domain"], grid.meta["weight_decay"])))
    wds = sorted({w for _, w in cells})
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, max(len(wds), 1)))
    styles = {"disk": "-", "square": "--"}
    fig, axes = plt.subplots(1, len(encs), figsize=(4.2 * len(encs), 3.2), sharey=True, squeeze=False)
    h = grid.history.double().numpy()
    k = max(1, min(smooth, h.shape[0]))
    for ax, enc in zip(axes[0], encs):
        for dom, wd in cells:
            idx = grid.select(encoding=enc, domain=dom, weight_decay=wd)
            curve = np.median(h[:, idx], axis=1)
            curve = np.convolve(curve, np.ones(k) / k, mode="valid")
            ax.semilogy(
                np.arange(len(curve)) + k,
                curve,
                styles.get(dom, "-"),
                color=colours[wds.index(wd)],
                lw=1.2,
                label=_cell_label(dom, wd),
            )
        ax.set_title(SHORT.get(enc, enc))
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("training MSE (minibatch)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_domains(grid: GridResult, shape: str = "triangle", n_show: int = 3000, seed_index: int = 0):
    """Training points of one shape on each domain (a random subset of the pool), with the shape's
    outline: the bulk fills the disk or the square, half the points hug the boundary."""
    use_style()
    pm = grid.pool_meta[(grid.pool_meta["shape"] == shape) & (grid.pool_meta["seed"] == seed_index)]
    if pm.empty:
        raise ValueError(f"no pools for shape {shape!r}, seed index {seed_index}")
    sh = {s.name: s for s in grid.shapes}[shape]
    t = torch.linspace(-1.2, 1.2, 241, dtype=torch.float64)
    xx, yy = torch.meshgrid(t, t, indexing="xy")
    z = sh.sdf(torch.stack((xx, yy), dim=-1)).numpy()
    fig, axes = plt.subplots(1, len(pm), figsize=(3.0 * len(pm), 3.0), squeeze=False)
    gen = torch.Generator().manual_seed(0)
    for ax, (_, r) in zip(axes[0], pm.iterrows()):
        x = grid.pools[int(r["pool"])]
        sel = torch.randperm(x.shape[0], generator=gen)[: min(n_show, x.shape[0])]
        ax.scatter(x[sel, 0], x[sel, 1], s=1, alpha=0.35, color="C0")
        ax.contour(t.numpy(), t.numpy(), z, levels=[0.0], colors="k", linewidths=1)
        ax.set_xlim(-1.2, 1.2)
        ax.set_ylim(-1.2, 1.2)
        ax.set_aspect("equal")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.set_title(f"{shape} on the {r['domain']} domain", fontsize=9)
    fig.tight_layout()
    return fig
