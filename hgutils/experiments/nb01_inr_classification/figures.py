"""Notebook 01's figures: the judging zoo's test accuracy per model (:func:`plot_accuracy`) and the data curve
(:func:`plot_data_curve`), chance marked on both. (The 13-layer training-geometry figures are notebook 07's.)"""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hgutils.experiments.nb01_inr_classification.curve import IMAGE_CEILING, above_chance
from hgutils.experiments.nb01_inr_classification.preset import INR_PAPER_KEYS, PAPER, PAPER_TRAIN_INRS
from hgutils.plotting import use_style


def binomial_se(p: float, n: int) -> float:
    r"""The standard error of an accuracy ``p`` measured on ``n`` test INRs: :math:`\sqrt{p (1 - p) / (n - 1)}`."""
    if n < 2:
        raise ValueError(f"need at least 2 test INRs; got {n}")
    return math.sqrt(max(p * (1.0 - p), 0.0) / (n - 1))


def paper_points(dataset: str) -> dict[str, float] | None:
    """The paper's test accuracies (%) on ``dataset`` for :func:`plot_data_curve`'s stars, each labelled with where
    it was measured (NFN_NP's on NFN's own INR sets); ``None`` for a dataset the paper does not report."""
    key = INR_PAPER_KEYS.get(dataset)
    if key is None:
        return None
    return {m + (" (NFN's own INR sets)" if m == "NFN_NP" else ""): mu for m, (mu, _) in PAPER[key].items()}


def plot_accuracy(
    table: pd.DataFrame, n_test: int, chance: float, title: str = "", trained: Mapping[str, bool] | None = None
) -> plt.Figure:
    """Test accuracy (%) per model on one zoo, best first: the mean over seeds with an error bar of one standard
    deviation over seeds, or, for a model run on one seed, of one binomial standard error over the ``n_test`` test
    INRs (hatched bars; the legend says which); chance as a dotted line; a model that did not pass the
    learnability gate (``trained[model]`` false) in grey, its label marked. ``table``: one row per (model, seed)
    with ``test_accuracy`` in [0, 1]."""
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must be in (0, 1); got {chance}")
    g = table.groupby("model", sort=False)["test_accuracy"]
    s = pd.DataFrame({"mean": g.mean(), "std": g.std(), "seeds": g.size()}).sort_values("mean")
    one = s["seeds"] < 2
    err = np.where(one, [binomial_se(p, n_test) for p in s["mean"]], s["std"].fillna(0.0))
    ok = [bool((trained or {}).get(m, True)) for m in s.index]
    use_style()
    fig, ax = plt.subplots(figsize=(7, 0.34 * len(s) + 1.4))
    y = np.arange(len(s))
    colors = ["tab:blue" if t else "0.65" for t in ok]
    bars = ax.barh(y, 100 * s["mean"], xerr=100 * err, color=colors, alpha=0.8, capsize=3, ecolor="0.2")
    for b, single in zip(bars, one):
        if single:
            b.set_hatch("//")
    names = [
        f"{m} ({n} seed{'s' if n > 1 else ''})" + ("" if t else " - did not train")
        for m, n, t in zip(s.index, s["seeds"], ok)
    ]
    ax.set_yticks(y, names)
    ax.axvline(100 * chance, ls=":", color="k", lw=1.2)
    handles = [
        plt.Rectangle((0, 0), 1, 1, color="tab:blue", alpha=0.8, label="mean ± sd over seeds"),
        plt.Rectangle((0, 0), 1, 1, facecolor="tab:blue", alpha=0.8, hatch="//", label="one seed: ± binomial se"),
        plt.Line2D([], [], ls=":", color="k", label=f"chance ({100 * chance:.0f} %)"),
    ]
    if not all(ok):
        handles.append(plt.Rectangle((0, 0), 1, 1, color="0.65", label="did not train (learnability gate)"))
    ax.legend(handles=handles, fontsize=7, loc="lower right")
    ax.set_xlabel("test accuracy (%)")
    ax.set_xlim(0, 100)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_data_curve(
    curve: pd.DataFrame,
    n_test: int,
    chance: float,
    title: str = "",
    ceiling: pd.DataFrame | None = None,
    paper: Mapping[str, float] | None = None,
) -> plt.Figure:
    """Test accuracy (%) against training INRs (log axis), one line per model with an error bar of one binomial
    standard error over the ``n_test`` test INRs (pooled over seeds); a filled marker where the model left chance
    (:func:`~.curve.above_chance`: it trained and beat chance by more than 2 standard errors), an open one where
    it did not; chance as a dotted line, the rendered-pixel read-out (``ceiling``, :func:`~.curve.image_ceiling`)
    as a dashed black line and the paper's numbers at its training-set size (``paper``: ``{model: accuracy %}``)
    as stars."""
    judged = above_chance(curve, n_test, chance).set_index(["model", "train_inrs"])
    use_style()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, (name, g) in enumerate(curve.groupby("model", sort=False)):
        m = g.groupby("train_inrs")["test_accuracy"].mean().sort_index()
        se = [binomial_se(p, n_test * int((g["train_inrs"] == n).sum())) for n, p in m.items()]
        color = f"C{i}"
        ax.errorbar(m.index, 100 * m.values, yerr=100 * np.array(se), color=color, capsize=3, lw=1.5, label=name)
        for n, p in m.items():
            left = bool(judged.loc[(name, n), "above"])
            ax.plot([n], [100 * p], "o", color=color, markerfacecolor=color if left else "white", ms=6, zorder=3)
    if ceiling is not None and len(ceiling):
        ax.plot(ceiling["train_inrs"], 100 * ceiling["test_accuracy"], "k--", marker="s", ms=4, label=IMAGE_CEILING)
    ax.axhline(100 * chance, ls=":", color="k", lw=1.2, label=f"chance ({100 * chance:.0f} %)")
    sizes = sorted(set(curve["train_inrs"].tolist()))
    if paper:
        for j, (name, mu) in enumerate(paper.items()):
            ax.scatter([PAPER_TRAIN_INRS], [mu], marker="*", s=120, zorder=3, color=f"C{6 + j}", label=f"paper: {name}")
        sizes.append(PAPER_TRAIN_INRS)
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.minorticks_off()
    ax.set_ylim(0, 100)
    unjudged = "open marker: not left chance\n(within 2 se, or failed the gate)"
    ax.plot([], [], "o", color="0.4", markerfacecolor="white", label=unjudged)
    ax.set_xlabel("training INRs (log scale)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title or "data curve: test accuracy against zoo size")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
