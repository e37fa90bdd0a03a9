"""Tests for the rich-vs-lazy experiment helpers of notebook 05 (hgutils.experiments.nb05_msa_rich_vs_lazy and the library pieces it uses)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hgutils.data import ring_blobs, square_grid, swiss_roll, unrolled_plane
from hgutils.experiments.nb05_msa_rich_vs_lazy import (
    RichLazyConfig,
    hidden_stack,
    hierarchy_score,
    train_cell,
    tree_distance,
)
from hgutils.similarity import (
    kernel_alignment,
    msa,
    procrustes_similarity,
    pullback_metric,
    relative_weight_change,
    split_auc,
)

torch.set_num_threads(1)


def test_ring_blobs_labels_and_geometry():
    X, y = ring_blobs(5, 7, 0.01, generator=torch.Generator().manual_seed(0))
    assert X.shape == (70, 2) and y.shape == (70,)
    assert torch.equal(torch.bincount(y), torch.full((5,), 14))
    assert torch.allclose(X.norm(dim=1), torch.ones(70), atol=0.05)  # centres on the unit circle
    # opposite blobs share a label
    assert torch.equal(y[:7], y[5 * 7 : 6 * 7])
    with pytest.raises(ValueError, match="n_classes"):
        ring_blobs(1, 5)


def test_swiss_roll_and_plane_share_intrinsic_geometry():
    p = torch.rand(50, 2, dtype=torch.float64) * torch.tensor([3 * np.pi, 2.0], dtype=torch.float64) + 4.0
    G1, G2 = pullback_metric(unrolled_plane, p), pullback_metric(swiss_roll, p)
    expected = torch.diag_embed(torch.stack([1 + p[:, 0] ** 2, torch.ones(50, dtype=torch.float64)], -1))
    assert torch.allclose(G1, expected, atol=1e-10) and torch.allclose(G2, expected, atol=1e-10)
    assert msa(unrolled_plane, swiss_roll, p) < 1e-10
    assert procrustes_similarity(unrolled_plane(p), swiss_roll(p)) < 0.8


def _meta():
    meta = []
    for trained in (True, False):
        for K in (2, 5):
            for regime in ("rich", "lazy"):
                for s in range(2):
                    meta.append({"classes": K, "regime": regime, "seed": s, "trained": trained})
    return meta


def test_tree_distance_and_hierarchy_scores():
    meta = _meta()
    T = tree_distance(meta)
    assert np.allclose(T, T.T) and np.all(np.diag(T) == 0)
    assert T[0, 1] == 1 and T[0, 2] == 2 and T[0, 4] == 3 and T[0, 8] == 4 and T[8, 15] == 1
    S_ideal = 1.0 - T / 4.0
    assert hierarchy_score(S_ideal, meta) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    R = rng.uniform(size=T.shape)
    S_rand = (R + R.T) / 2
    assert abs(hierarchy_score(S_rand, meta)) < 0.3
    # AUCs: the ideal matrix separates every split, a constant matrix none
    assert split_auc(S_ideal, meta, "trained") == pytest.approx(1.0)
    assert split_auc(S_ideal, meta, "regime", where={"trained": True}, same=("classes",)) == pytest.approx(1.0)
    assert split_auc(np.ones_like(T), meta, "trained") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no within or no between"):
        split_auc(S_ideal, meta, "trained", where={"trained": True})


def test_regime_checks_on_tiny_training_runs():
    cfg = RichLazyConfig.from_scale("smoke", hidden=16, steps=60, n_per_blob=8)
    X, y = ring_blobs(2, 8, generator=torch.Generator().manual_seed(1))
    rich = train_cell(2, "rich", [0, 1], cfg, X, y)
    lazy = train_cell(2, "lazy", [2, 3], cfg, X, y)
    assert (rich["rwc"] > 10 * lazy["rwc"]).all()
    assert (lazy["kernel_align"] > 0.999).all()
    assert torch.allclose(relative_weight_change(rich["p0"], rich["p0"]), torch.zeros(2))
    assert torch.allclose(kernel_alignment(rich["p1"], rich["p1"], X), torch.ones(2))
    H = hidden_stack([rich["p1"], lazy["p1"]])
    assert H["W0"].shape == (4, 16, 2) and H["W1"].shape == (4, 1, 16)
    with pytest.raises(ValueError, match="regime"):
        train_cell(2, "medium", [0], cfg, X, y)


def test_square_grid():
    g = square_grid(4, 1.5)
    assert g.shape == (16, 2) and g.min() == -1.5 and g.max() == 1.5
