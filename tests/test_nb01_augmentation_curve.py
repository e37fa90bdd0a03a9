"""Notebook 01's learning curve with and without weight-space augmentation: both ways on one split,
where each model leaves chance (learnability gate + the verdict rule over test INRs), the measured
effect of augmentation and its figure."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch
from test_training_loop import make_zoo

from hgutils.experiments import nb01_inr_classification as ex
from hgutils.experiments.weightspace_protocol import RunSettings
from hgutils.verdicts import HOLDS, INCONCLUSIVE
from hgutils.weightspace.inputs import Splits
from hgutils.weightspace.tasks import TrainConfig


def _curve(cells: list[tuple[str, bool, int, int, float, bool]]) -> pd.DataFrame:
    """A curve table from (model, augmented, train_inrs, seed, test_accuracy, trained) cells."""
    cols = ["model", "augmented", "train_inrs", "seed", "test_accuracy", "trained"]
    return pd.DataFrame(cells, columns=cols).assign(capped=False)


def test_both_ways_runs_every_model_with_and_without_augmentation_on_the_same_split_and_seeds():
    zoo = make_zoo(24, 1)
    y = zoo.meta["label"]
    sp = Splits(torch.arange(16), torch.arange(16, 20), torch.arange(20, 24))
    cfg = TrainConfig(epochs=1, batch_size=4)
    curve = ex.learning_curve(
        zoo,
        y,
        sp,
        (8, 16),
        ("StatNN", "NFN_NP"),
        [0, 1],
        RunSettings(train_cfg=cfg, augment=("recipe",)),
        both_ways=True,
    )
    assert len(curve) == 2 * 2 * 2 * 2  # sizes x models x seeds x ways
    for (n, model, seed), g in curve.groupby(["train_inrs", "model", "seed"]):
        assert sorted(g["augmented"].tolist()) == [False, True], (n, model, seed)
        assert g.loc[~g["augmented"], "augment"].item() == "off"
        assert "noise" in g.loc[g["augmented"], "augment"].item()  # not an INR zoo: noise and dropout only
    table = ex.curve_table(curve).set_index("model")
    assert {"StatNN", "StatNN (augmented)"} <= set(table.index) and "8 INRs" in table.columns
    plain = ex.learning_curve(zoo, y, sp, (8,), ("StatNN",), [0], RunSettings(train_cfg=cfg, augment=()))
    assert not plain["augmented"].any()  # without both_ways the run's own augment setting stands


def test_forked_curve_cells_give_the_curve_one_process_gives():
    zoo = make_zoo(24, 1)
    y = zoo.meta["label"]
    sp = Splits(torch.arange(16), torch.arange(16, 20), torch.arange(20, 24))
    cfg = TrainConfig(epochs=1, batch_size=4)
    torch.set_num_threads(1)  # the workers' thread count, so both sides run the same kernels
    args = (zoo, y, sp, (8, 16), ("StatNN",), [0])
    one = ex.learning_curve(*args, RunSettings(train_cfg=cfg), both_ways=True)
    two = ex.learning_curve(*args, RunSettings(train_cfg=cfg, workers=2), both_ways=True)
    pd.testing.assert_frame_equal(one, two)


def test_above_chance_is_the_two_se_rule_over_test_inrs_and_needs_the_gate():
    n, chance = 100, 0.1
    curve = _curve(
        [
            ("A", False, 50, 0, 0.30, True),  # +20 points, se = sqrt(.3 * .7 / 99) = 4.6 points: holds
            ("A", False, 100, 0, 0.12, True),  # +2 points, se 3.3: inconclusive
            ("A", True, 50, 0, 0.30, False),  # resolved above chance, but the run did not train
        ]
    )
    t = ex.above_chance(curve, n, chance).set_index(["augmented", "train_inrs"])
    assert t.loc[(False, 50), "verdict"] == HOLDS and t.loc[(False, 50), "above"]
    assert t.loc[(False, 100), "verdict"] == INCONCLUSIVE and not t.loc[(False, 100), "above"]
    assert t.loc[(True, 50), "verdict"] == HOLDS and not t.loc[(True, 50), "above"]
    se = 100 * math.sqrt(0.3 * 0.7 / (n - 1))  # the binomial standard error, direct
    assert f"± {se:.1f}" in t.loc[(False, 50), "detail"]
    # two seeds pool their test INRs: 0.14 and 0.16 over 2 x 100 INRs -> +5 points, se 2.5
    two = ex.above_chance(_curve([("B", False, 10, 0, 0.14, True), ("B", False, 10, 1, 0.16, True)]), n, chance)
    hits = np.r_[np.ones(14), np.zeros(86), np.ones(16), np.zeros(84)]
    assert f"± {100 * hits.std(ddof=1) / math.sqrt(200):.1f}" in two.loc[0, "detail"]
    with pytest.raises(ValueError, match="test INRs"):
        ex.above_chance(curve, 1, chance)
    with pytest.raises(ValueError, match="chance"):
        ex.above_chance(curve, n, 1.5)


def test_first_above_chance_says_whether_augmentation_moves_the_size():
    hi, lo = 0.40, 0.10  # far above / at chance on 100 test INRs
    cells = []
    for size in (100, 200, 400):
        cells += [
            ("earlier", False, size, 0, hi if size >= 200 else lo, True),
            ("earlier", True, size, 0, hi if size >= 100 else lo, True),
            ("later", False, size, 0, hi if size >= 100 else lo, True),
            ("later", True, size, 0, hi if size >= 400 else lo, True),
            ("never", False, size, 0, lo, True),
            ("never", True, size, 0, lo, True),
            ("with only", False, size, 0, lo, True),
            ("with only", True, size, 0, hi if size >= 200 else lo, True),
            ("same", False, size, 0, hi if size >= 200 else lo, True),
            ("same", True, size, 0, hi if size >= 200 else lo, True),
        ]
    t = ex.first_above_chance(_curve(cells), 100, 0.1).set_index("model")
    assert t.loc["earlier", "without augmentation"] == 200 and t.loc["earlier", "with augmentation"] == 100
    assert t.loc["earlier", "moved"] == "earlier" and t.loc["later", "moved"] == "later"
    assert t.loc["never", "moved"] == "neither leaves chance by 400 INRs"
    assert pd.isna(t.loc["never", "with augmentation"])
    assert t.loc["with only", "moved"] == "only with augmentation" and t.loc["same", "moved"] == "no"
    with pytest.raises(ValueError, match="with and without"):
        ex.first_above_chance(_curve([c for c in cells if not c[1]]), 100, 0.1)


def test_augmentation_effects_are_the_curves_paired_differences():
    cells = [
        ("M", True, 10, 0, 0.30, True),
        ("M", False, 10, 0, 0.20, True),
        ("M", True, 10, 1, 0.36, True),
        ("M", False, 10, 1, 0.22, True),
        ("M", True, 5, 0, 0.10, True),
        ("M", False, 5, 0, 0.15, True),
    ]
    eff = ex.augmentation_effects(_curve(cells))
    text = eff[("M", "augmentation")]
    assert "-5.0 / +12.0 points at 5 / 10 training INRs" in text  # 10 - 15; mean(10, 14)
    se = 100 * np.std([0.10, 0.14], ddof=1) / math.sqrt(2)
    assert f"+12.0 ± {se:.1f} points" in text
    with pytest.raises(ValueError, match="with and without"):
        ex.augmentation_effects(_curve(cells[:1]))


def test_augmentation_figure_draws_solid_augmented_and_dashed_plain_lines_with_the_legend_outside():
    cells = [(m, on, n, 0, 0.1 + 0.01 * n / 10, True) for m in ("A", "B") for on in (False, True) for n in (10, 20)]
    fig = ex.plot_augmentation_curve(_curve(cells), chance=0.1)
    ax = fig.axes[0]
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
    assert styles["A (augmented)"] == "-" and styles["A (not augmented)"] == "--"
    assert ax.get_lines()[0].get_color() == ax.get_lines()[1].get_color()  # one colour per model
    assert styles["chance (10 %)"] == ":"
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # off the data
    plt.close(fig)
    with pytest.raises(ValueError, match="augmented"):
        ex.plot_augmentation_curve(_curve(cells).drop(columns="augmented"))


def test_the_presets_run_the_augmentation_curve_on_the_four_models():
    for scale in ("smoke", "medium"):
        cfg = ex.CONFIG.from_scale(scale)
        assert cfg.aug_curve_variants == ("DWSNet", "GMN", "NFN_NP", "StatNN")
        assert len(cfg.aug_curve_sizes) >= 2
    with pytest.raises(ValueError, match="aug_curve_sizes"):
        ex.CONFIG.from_scale("smoke", aug_curve_sizes=(1,))
