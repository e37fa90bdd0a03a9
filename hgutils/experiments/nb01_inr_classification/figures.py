"""Notebook 01's figures beyond the learning curve: the zoo-size curve with and without weight-space
augmentation. (The 13-layer training-geometry figures live in notebook 07's driver.)"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from hgutils.plotting import use_style


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
