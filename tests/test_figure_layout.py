"""The figures that compare panels read on one scale: notebook 03's predicted-vs-true panels share their axes
and mark chance, notebook 06's readout heatmaps and notebook 05's similarity matrices have one colour bar per
figure, axis titles in words and tick labels large enough to read at a page's width."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hgutils.experiments import nb05_msa_rich_vs_lazy as nb05
from hgutils.experiments import nb06_pe_symmetry_readout as nb06
from hgutils.plotting import plot_pred_vs_true


def _colourbars(fig: plt.Figure) -> int:
    return sum(1 for ax in fig.axes if ax.get_label() == "<colorbar>")


def test_predicted_vs_true_panels_share_one_square_range_and_mark_chance():
    rng = np.random.default_rng(0)
    preds = {f"m{i}": (rng.uniform(0.1, 0.3 + 0.2 * i, 20), rng.uniform(0.0, 0.5, 20)) for i in range(5)}
    fig = plot_pred_vs_true(preds, ncols=3, chance=0.1)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert len(panels) == 5
    assert len({ax.get_xlim() for ax in panels}) == 1 and panels[0].get_xlim() == panels[0].get_ylim()
    for ax in panels:  # the chance line: a vertical line at 0.1
        assert any(np.allclose(line.get_xdata(), [0.1, 0.1]) for line in ax.get_lines())
    assert {ax.get_xlabel() for ax in panels} == {"", "true test accuracy of the network"}
    assert panels[0].get_ylabel() == "predicted test accuracy"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["prediction = truth", "chance level (0.1)", "one test network"]
    plt.close(fig)


def _readout_frame() -> pd.DataFrame:
    rows = []
    for enc in ("DyadicAxisPE", "TriAxisPE"):
        for obs in ("prefix1@init", "prefix1", "functional"):
            for shape in ("square", "triangle"):
                for el in ("R0", "R90", "S0"):
                    rows.append(
                        {
                            "encoding": enc,
                            "observation": obs,
                            "variant": "data" if obs == "functional" else "frobenius",
                            "shape": shape,
                            "element": el,
                            "seed": 0,
                            "score": 0.5,
                            "liftable": el != "R90" or enc == "DyadicAxisPE",
                            "in_G_true": shape == "square" or el == "R0",
                        }
                    )
    return pd.DataFrame(rows)


def test_readout_heatmaps_have_one_colour_bar_and_say_what_prefix1_at_init_is():
    fig = nb06.plot_readout_heatmaps(_readout_frame(), ["prefix1@init", "prefix1", "functional"])
    assert _colourbars(fig) == 1
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles[0].startswith("first-layer Gram of the initial weights\n(random baseline)")
    assert "prefix1@init" in titles[0]
    assert [ax.get_xlabel() for ax in fig.axes[3:6]] == ["group element g"] * 3
    assert fig.axes[0].get_ylabel() == "DyadicAxisPE\nshape"
    assert "rotation" in fig.legends[0].get_title().get_text()
    assert nb06.observation_title("prefix3").startswith("Gram of the first 3 linear maps of the trained weights")
    plt.close(fig)


def test_similarity_panels_share_one_colour_bar_and_readable_block_labels():
    meta = [{"trained": True, "classes": 2, "group": g, "gain": 1.0} for g in ("rich", "rich", "lazy", "lazy")]
    meta += [{"trained": False, "classes": 0, "group": "untrained", "gain": 1.0}] * 2
    mats = {name: np.eye(6) * 0.5 + 0.5 for name in ("MSA", "CKA", "RSA", "Procrustes")}
    fig = nb05.plot_similarity_panels(mats, meta)
    assert _colourbars(fig) == 1
    ticks = fig.axes[0].get_xticklabels()
    assert [t.get_text() for t in ticks] == ["K2 rich", "K2 lazy", "untrained g=1"]
    assert min(t.get_fontsize() for t in ticks) >= 10
    plt.close(fig)
    own = nb05.plot_similarity_panels(mats, meta, own_scale=True)
    assert _colourbars(own) == len(mats)  # each measure its own range, so its own bar
    plt.close(own)
