"""Notebook 01's image read-out of the rendered INRs (:func:`image_ceiling`): the class is read from what
the INRs encode, its strength is chosen on validation only, and bad input is refused."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from hgutils.experiments import nb01_inr_classification as ex
from hgutils.experiments import weightspace_protocol as cmp
from hgutils.weightspace.zoo.inr import inr_image_zoo


@pytest.fixture(scope="module")
def digits():
    """120 INRs of the 8x8 digits (PSNR ~60 dB at 150 steps), with a stratified 70 / 20 / 30 split."""
    zoo = inr_image_zoo("digits", cache=False, n_images=120, steps=150, T=2)
    y = zoo.meta["label"]
    return zoo, y, cmp.make_splits(len(zoo), 0.2, 0.25, labels=y)


def test_the_rendered_inrs_carry_the_class_and_shuffled_training_labels_do_not(digits):
    zoo, y, sp = digits
    out = ex.image_ceiling(zoo, y, sp, (10, 70, 10_000))
    assert out["train_inrs"].tolist() == [10, 70]  # sizes capped at the training split, repeats merged
    assert (out["model"] == ex.IMAGE_CEILING).all() and set(out["C"]) <= set(ex.CEILING_C_GRID)
    assert out["test_accuracy"].iloc[-1] > 0.5  # 10 classes: chance 0.1
    shuffled = y.clone()
    shuffled[sp.train] = y[sp.train][torch.randperm(len(sp.train), generator=torch.Generator().manual_seed(0))]
    assert ex.image_ceiling(zoo, shuffled, sp, (70,))["test_accuracy"].item() < 0.3


def test_the_strength_is_chosen_without_the_test_labels(digits):
    zoo, y, sp = digits
    first = ex.image_ceiling(zoo, y, sp, (30, 70))
    permuted = y.clone()
    permuted[sp.test] = y[sp.test].roll(1)
    again = ex.image_ceiling(zoo, permuted, sp, (30, 70))
    assert again["C"].tolist() == first["C"].tolist()
    assert again["train_accuracy"].tolist() == first["train_accuracy"].tolist()


def test_the_curve_figure_draws_the_read_out_as_its_own_line(digits):
    zoo, y, sp = digits
    ceiling = ex.image_ceiling(zoo, y, sp, (30, 70))
    curve = ceiling.assign(model="StatNN", test_accuracy=0.2)
    fig = ex.plot_data_curve(curve, len(sp.test), 0.1, ceiling=ceiling)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "StatNN" in labels and ex.IMAGE_CEILING in labels
    plt.close(fig)


def test_bad_sizes_and_strengths_are_refused(digits):
    zoo, y, sp = digits
    with pytest.raises(ValueError, match="sizes"):
        ex.image_ceiling(zoo, y, sp, (1,))
    with pytest.raises(ValueError, match="c_grid"):
        ex.image_ceiling(zoo, y, sp, (30,), c_grid=(0.0, 1.0))
