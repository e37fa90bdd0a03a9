"""The zoo-size learning curve: where each cheap model starts to generalise, and how far the CPU
regime is from the paper's 45,000 training INRs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb01_inr_classification.preset import INR_PAPER_KEYS, PAPER, PAPER_TRAIN_INRS
from hgutils.plotting import use_style
from hgutils.weightspace import comparison


def curve_splits(splits: comparison.Splits, n_main: int, n_curve: int) -> comparison.Splits:
    """The main zoo's split with the curve zoo's extra INRs ``n_main .. n_curve - 1`` appended to its
    training INRs; the validation and test INRs stay the main table's (:func:`~.zoos.inr_zoos`)."""
    if n_curve < n_main:
        raise ValueError(f"the curve zoo ({n_curve} INRs) must hold the main zoo ({n_main} INRs)")
    used = torch.cat([splits.train, splits.val, splits.test])
    if len(used) and int(used.max()) >= n_main:
        raise ValueError(f"the split names INR {int(used.max())}, outside the main zoo's {n_main}")
    extra = torch.arange(n_main, n_curve, dtype=splits.train.dtype)
    return comparison.Splits(torch.cat([splits.train, extra]), splits.val, splits.test)


def learning_curve(
    zoo: Any,
    labels: torch.Tensor,
    splits: comparison.Splits,
    sizes: Sequence[int],
    variants: Sequence[str],
    seeds: Sequence[int],
    desc: str = "curve",
    **run_kwargs: Any,
) -> pd.DataFrame:
    """Test accuracy of ``variants`` trained on the first ``n`` training INRs of ``splits`` for each
    ``n`` in ``sizes`` (capped at the training split), same validation and test INRs, through
    :func:`hgutils.weightspace.comparison.run_comparison` (``run_kwargs``: its training settings).
    One row per (size, model, seed) with ``train_inrs``, ``test_accuracy``, ``train_accuracy``,
    ``epochs_run``, ``capped`` and ``trained``."""
    sizes = sorted({min(int(n), len(splits.train)) for n in sizes})
    if not sizes or sizes[0] < 2:
        raise ValueError(f"curve sizes must be >= 2 training INRs; got {list(sizes)}")
    frames = []
    for n in sizes:
        sub = comparison.Splits(splits.train[:n], splits.val, splits.test)
        run = comparison.run_comparison(
            zoo,
            "classification",
            labels,
            int(labels.max()) + 1,
            variants,
            sub,
            seeds,
            desc=f"{desc} n={n}",
            **run_kwargs,
        )
        t = run.table.assign(train_inrs=n)
        keep = ["train_inrs", "model", "seed", "test_accuracy", "train_accuracy", "epochs_run", "capped", "trained"]
        frames.append(t[[c for c in keep if c in t]])
    return pd.concat(frames, ignore_index=True)


def plot_learning_curve(curve: pd.DataFrame, dataset: str = "mnist", title: str = "") -> plt.Figure:
    """Test accuracy (%) against training INRs (log axis), one line per model (mean over seeds),
    chance as a dotted line and the paper's 45k-INR numbers as stars (from other INR sets for NFN_NP)."""
    use_style()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, g in curve.groupby("model", sort=False):
        m = g.groupby("train_inrs")["test_accuracy"].mean() * 100
        ax.plot(m.index, m.values, marker="o", label=name)
    ax.axhline(10.0, ls=":", color="grey", lw=1, label="chance (10 %)")
    key = INR_PAPER_KEYS.get(dataset)
    if key:
        for i, (name, (mu, _)) in enumerate(PAPER[key].items()):
            ax.scatter([PAPER_TRAIN_INRS], [mu], marker="*", s=120, zorder=3, color=f"C{6 + i}")
            ax.annotate(
                f"paper {name} {mu}",
                (PAPER_TRAIN_INRS, mu),
                textcoords="offset points",
                xytext=(-10, 6),
                ha="right",
                fontsize=7,
            )
    ax.set_xscale("log")
    ax.set_xlabel("training INRs")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title or f"{dataset}: zoo-size learning curve (one initialisation per INR)")
    ax.legend(fontsize=7)
    return fig


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Mean test accuracy (%) per model (rows) and training-set size (columns), with the run counts
    that hit their epoch cap in parentheses when any did."""
    g = curve.groupby(["model", "train_inrs"], sort=False)
    mean = (100 * g["test_accuracy"].mean()).round(1).unstack()
    capped = g["capped"].sum().unstack() if "capped" in curve else None
    out = mean.astype(object)
    if capped is not None:
        for r in out.index:
            for c in out.columns:
                k = int(capped.loc[r, c]) if not np.isnan(capped.loc[r, c]) else 0
                out.loc[r, c] = f"{mean.loc[r, c]:.1f}" + (f" ({k} capped)" if k else "")
    out.columns = [f"{c} INRs" for c in out.columns]
    return out.reset_index()
