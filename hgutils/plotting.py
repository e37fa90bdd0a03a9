"""One plotting style for every notebook figure, plus the shared figure helpers.

- :func:`use_style` -- the companion's matplotlib style (called by every plotting helper).
- :func:`save_figure` -- write PNG (and optionally SVG) atomically into a figures folder.
- :func:`heatmap` -- an annotated matrix plot (similarity matrices, readout scores).
- :func:`poincare_disk` -- draw 2D Poincaré-ball points inside the unit-radius boundary circle.
- :func:`plot_training_curves` -- every model's training curves (one panel per model, all seeds);
- :func:`plot_results_bars` -- mean ± std per model (the weight-space comparisons);

  :func:`plot_pred_vs_true` -- predictions against targets per model, on shared axes; :func:`plot_embedding_pca`
  and :func:`pca_2d` -- embeddings projected on their top two principal components.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator
from torch import Tensor

from hgutils.atomic import atomic_write_bytes

STYLE: dict[str, object] = {
    "figure.dpi": 100,
    "savefig.dpi": 130,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.frameon": False,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the companion's matplotlib rcParams."""
    plt.rcParams.update(STYLE)


def save_figure(fig: plt.Figure, figures_dir: str | os.PathLike, name: str, svg: bool = False) -> Path:
    """Save ``fig`` as ``<figures_dir>/<name>.png`` (and ``.svg``) atomically; return the PNG path.

    The PNG metadata carries no timestamp, so re-running a notebook rewrites identical bytes when
    the numbers are identical.
    """

    if not name or "/" in name:
        raise ValueError(f"figure name must be a plain file stem; got {name!r}")
    out = Path(figures_dir)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    atomic_write_bytes(out / f"{name}.png", buf.getvalue())
    if svg:
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        atomic_write_bytes(out / f"{name}.svg", buf.getvalue())
    return out / f"{name}.png"


def heatmap(
    ax: plt.Axes,
    matrix: np.ndarray,
    labels_x: Sequence[str] | None = None,
    labels_y: Sequence[str] | None = None,
    title: str = "",
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    annotate: bool = False,
    fmt: str = ".2f",
    colorbar: bool = True,
    tick_fontsize: float = 8,
) -> plt.Axes:
    """Draw ``matrix`` as an image with optional tick labels, colour bar and cell annotations.

    Panels that share one colour scale pass ``colorbar=False`` and draw one colour bar for the figure
    (``fig.colorbar(ax.images[0], ax=axes)``)."""
    use_style()
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"heatmap expects a 2-D matrix; got shape {m.shape}")
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.grid(False)
    if labels_x is not None:
        ax.set_xticks(range(m.shape[1]), labels_x, rotation=90, fontsize=tick_fontsize)
    if labels_y is not None:
        ax.set_yticks(range(m.shape[0]), labels_y, fontsize=tick_fontsize)
    if annotate:
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                ax.text(
                    j,
                    i,
                    format(m[i, j], fmt),
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="w" if np.isfinite(m[i, j]) and m[i, j] < np.nanmean(m) else "k",
                )
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(title)
    return ax


def poincare_disk(
    ax: plt.Axes,
    points: np.ndarray,
    c: float = 1.0,
    colors: Sequence | None = None,
    labels: Sequence | None = None,
    s: float = 8.0,
    title: str = "",
    cmap: str = "tab10",
) -> plt.Axes:
    """Scatter 2-D Poincaré-ball points (radius ``1/sqrt(c)``) rescaled to the unit disk.

    ``points`` is ``[n, 2]``; ``colors`` per point (numbers or colour names); ``labels`` optional
    legend entries aligned with the distinct values of ``colors``.
    """
    use_style()
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"poincare_disk expects points of shape [n, 2]; got {p.shape}")
    p = p * np.sqrt(c)
    ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, lw=1.0, color="0.3"))
    sc = ax.scatter(p[:, 0], p[:, 1], c=colors, s=s, cmap=cmap, linewidths=0)
    if labels is not None and colors is not None:
        handles, _ = sc.legend_elements()
        ax.legend(handles, labels, fontsize=7, loc="upper right")
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.grid(False)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title)
    return ax


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


def plot_pred_vs_true(
    preds: dict[str, tuple[np.ndarray, np.ndarray]],
    title: str = "",
    ncols: int = 4,
    chance: float | None = None,
    xlabel: str = "true test accuracy of the network",
    ylabel: str = "predicted test accuracy",
) -> plt.Figure:
    """One scatter per model of predicted vs true values, ``preds[name] = (true, pred)``, with Kendall's
    tau in each panel title.

    The panels compare models, so they share their axes: one square range, the same for x and y and for
    every panel (the diagonal, prediction = truth, is the same line in each); the x axis is titled under each
    column, the y axis beside each row.
    ``chance`` (e.g. ``1 / n_classes`` for a classifier zoo's test accuracy) marks the chance level as a
    dotted vertical line: networks there learned nothing. The legend sits under the figure, off the data.
    """
    from matplotlib.lines import Line2D
    from scipy.stats import kendalltau

    use_style()
    if not preds:
        raise ValueError("preds is empty: need at least one model's (true, pred)")
    n = len(preds)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    data = {name: (np.asarray(y, float), np.asarray(p, float)) for name, (y, p) in preds.items()}
    lo = min(min(float(y.min()), float(p.min())) for y, p in data.values())
    hi = max(max(float(y.max()), float(p.max())) for y, p in data.values())
    if chance is not None:
        lo, hi = min(lo, chance), max(hi, chance)
    pad = 0.04 * (hi - lo) if hi > lo else 0.5
    lim = (lo - pad, hi + pad)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(2.9 * ncols, 2.9 * nrows + 0.8), squeeze=False, layout="constrained"
    )
    for ax, (name, (y, p)) in zip(axes.flat, data.items()):
        tau = kendalltau(y, p).statistic
        ax.plot(lim, lim, color="0.45", lw=0.9, ls="--", zorder=1)
        if chance is not None:
            ax.axvline(chance, color="tab:red", lw=0.9, ls=":", zorder=1)
        ax.scatter(y, p, s=8, alpha=0.7, linewidths=0, color="tab:blue", zorder=2)
        ax.set_xlim(lim)
        ax.set_ylim(lim)
        ax.set_aspect("equal", adjustable="box")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]))
        ax.tick_params(labelsize=9)
        ax.set_title(f"{name}\nτ = {tau:.3f}", fontsize=10)
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        if i + ncols >= n:  # the lowest panel of its column
            ax.set_xlabel(xlabel, fontsize=10)
        if i % ncols == 0:
            ax.set_ylabel(ylabel, fontsize=10)
    handles = [Line2D([], [], color="0.45", lw=0.9, ls="--", label="prediction = truth")]
    if chance is not None:
        handles.append(Line2D([], [], color="tab:red", lw=0.9, ls=":", label=f"chance level ({chance:g})"))
    handles.append(Line2D([], [], color="tab:blue", marker="o", ls="", ms=4, alpha=0.7, label="one test network"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=10)
    if title:
        fig.suptitle(title)
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


def plot_training_curves(
    curves: dict[str, dict[int, list[dict[str, float]]]],
    train_key: str = "train_loss",
    val_key: str | None = None,
    trained: dict[str, bool] | None = None,
    ncols: int = 4,
    title: str = "",
) -> plt.Figure:
    """One panel per model: ``train_key`` per epoch (solid, left axis) and ``val_key`` (dashed, right
    axis) for every seed; ``trained[model] = False`` marks the panel "did not train" in red.

    ``curves[model][seed]`` is the loop's history (a list of per-epoch dicts, as
    :class:`hgutils.loop.TrainLog` records it). Epochs are integer ticks.
    """

    use_style()
    names = [n for n, c in curves.items() if c]
    if not names:
        raise ValueError("no curves to plot")
    ncols = min(ncols, len(names))
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols, 2.5 * nrows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, name in zip(axes.ravel(), names):
        ax2 = ax.twinx() if val_key else None
        for i, (seed, hist) in enumerate(sorted(curves[name].items())):
            ep = [r["epoch"] + 1 for r in hist]
            key = train_key if any(train_key in r for r in hist) else "train_loss"
            ax.plot(ep, [r.get(key, np.nan) for r in hist], color=colors[i % len(colors)], label=f"seed {seed}")
            if ax2 is not None:
                ax2.plot(ep, [r.get(val_key, np.nan) for r in hist], "--", color=colors[i % len(colors)], alpha=0.7)
        bad = trained is not None and not trained.get(name, True)
        ax.set_title(name + ("  (did not train)" if bad else ""), color="#c44e52" if bad else "black", fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_ylabel(train_key.replace("_", " "))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if ax2 is not None:
            ax2.set_ylabel(val_key.replace("_", " ") + " (dashed)", fontsize=8)
            ax2.grid(False)
    for ax in axes.ravel()[len(names) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
