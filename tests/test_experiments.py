"""Tests for hgutils.weightspace.figures (embedding statistics) and hgutils.weightspace.experiments
(presets, identical splits, comparison drivers, results tables)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.manifolds import poincare as pm
from hgutils.weightspace.figures import (
    angular_separation,
    hyperbolic_radius,
    outward_drift,
    pca_2d,
    radial_angular_stats,
    radial_separation,
)


# --------------------------------------------------------------------------------------------
# embedding statistics on constructed embeddings with known answers
# --------------------------------------------------------------------------------------------
def _unit(v):
    v = torch.as_tensor(v, dtype=torch.float64)
    return v / v.norm(dim=-1, keepdim=True)


def test_hyperbolic_radius_is_distance_to_origin():
    g = torch.Generator().manual_seed(0)
    for c in (0.5, 1.0, 3.0):
        z = pm.project(torch.randn(50, 4, generator=g, dtype=torch.float64) * 0.3, c)
        r = hyperbolic_radius(z, c)
        ref = pm.dist(torch.zeros_like(z), z, c)
        assert torch.allclose(r, ref, rtol=1e-9, atol=1e-12)
    z = torch.randn(5, 3, dtype=torch.float64)
    assert torch.allclose(hyperbolic_radius(z, 0.0), 2 * z.norm(dim=-1))


def test_radial_separation_known_answers():
    lab = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2])
    r_layers = torch.tensor([0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    assert radial_separation(r_layers, lab) == pytest.approx(1.0)  # each layer on its own sphere
    assert radial_separation(torch.ones(9), lab) == 0.0  # no radial spread at all
    same = torch.tensor([0.5, 1.0, 2.0] * 3)  # identical radius distribution in every layer
    assert radial_separation(same, lab) == pytest.approx(0.0, abs=1e-12)
    # a hand-computed mixture: layer means 1 and 3, within SS = 2 * (1 + 1) = 4, total SS = 4 + 4 * 1 = 8
    r = torch.tensor([0.0, 2.0, 2.0, 4.0])
    assert radial_separation(r, torch.tensor([0, 0, 1, 1])) == pytest.approx(0.5)


def test_angular_separation_known_answers():
    lab = torch.tensor([0, 0, 1, 1, 2, 2])
    dirs = torch.eye(3, dtype=torch.float64)
    z = 0.3 * dirs[lab]  # each layer along one axis, layers orthogonal
    assert angular_separation(z, lab) == pytest.approx(1.0)
    # every layer holds the same two opposite directions: no direction is explained by the layer
    z2 = 0.3 * torch.tensor([[1.0, 0, 0], [-1.0, 0, 0]] * 3, dtype=torch.float64)
    assert angular_separation(z2, lab) == pytest.approx(0.0, abs=1e-12)
    # all nodes pointing the same way: nothing to explain -> 0
    assert angular_separation(0.2 * torch.ones(6, 3, dtype=torch.float64), lab) == 0.0
    # radius does not matter for the angular statistic
    z3 = z * torch.tensor([0.1, 0.9, 0.2, 0.5, 0.7, 0.3], dtype=torch.float64)[:, None]
    assert angular_separation(z3, lab) == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_separations_invariant_to_rotation_and_relabelling(seed, d):
    g = torch.Generator().manual_seed(seed)
    V = 12
    lab = torch.randint(0, 3, (V,), generator=g)
    z = pm.project(torch.randn(V, d, generator=g, dtype=torch.float64) * 0.4, 1.0)
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    zr = z @ Q.T
    relab = torch.tensor([2, 0, 1])[lab]
    rs, as_ = radial_separation(hyperbolic_radius(z), lab), angular_separation(z, lab)
    assert 0.0 <= rs <= 1.0 and 0.0 <= as_ <= 1.0
    assert radial_separation(hyperbolic_radius(zr), relab) == pytest.approx(rs, abs=1e-9)
    assert angular_separation(zr, relab) == pytest.approx(as_, abs=1e-9)


def test_outward_drift_known_answer():
    g = torch.Generator().manual_seed(1)
    z0 = _unit(torch.randn(10, 2, generator=g)) * 0.1
    scales = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    z = scales[:, None, None] * z0  # [T, V, d], every node moves straight out
    out = outward_drift(z, c=1.0)
    radii = 2 * torch.atanh(0.1 * scales)
    assert out["frac_outward"] == 1.0
    assert out["delta"] == pytest.approx(float(radii[-1] - radii[0]))
    assert out["slope"] == pytest.approx(float(np.polyfit(np.arange(4.0), radii.numpy(), 1)[0]))
    inward = outward_drift(z.flip(0), c=1.0)
    assert inward["frac_outward"] == 0.0 and inward["delta"] < 0 and inward["slope"] < 0


def test_radial_angular_stats_table():
    lab = torch.tensor([0, 0, 1, 1])
    # t = 0: all nodes on one point; t = 1: layers on orthogonal axes at different radii
    z = torch.zeros(2, 4, 2, dtype=torch.float64)
    z[0] = 0.1
    z[1, :2] = torch.tensor([0.2, 0.0])
    z[1, 2:] = torch.tensor([0.0, 0.6])
    df = radial_angular_stats(z, lab, c=1.0, steps=[0, 50])
    assert list(df.columns) == ["t", "step", "layer", "radius_mean", "radius_std", "resultant", "radial_sep",
                                "angular_sep"]
    assert len(df) == 4
    per_t = df.groupby("t")[["radial_sep", "angular_sep"]].first()
    assert per_t.loc[0].tolist() == [0.0, 0.0]
    assert per_t.loc[1].tolist() == pytest.approx([1.0, 1.0])
    assert df[(df.t == 1) & (df.layer == 1)]["radius_mean"].item() == pytest.approx(2 * math.atanh(0.6))
    assert df["step"].tolist() == [0, 0, 50, 50]
    # a batch of networks averages per-network statistics
    dfb = radial_angular_stats(torch.stack([z, z]), lab)
    assert np.allclose(dfb["radial_sep"], df["radial_sep"])


def test_pca_2d_recovers_dominant_plane():
    g = torch.Generator().manual_seed(0)
    x = torch.zeros(100, 5, dtype=torch.float64)
    x[:, 1] = torch.randn(100, generator=g, dtype=torch.float64) * 10
    x[:, 3] = torch.randn(100, generator=g, dtype=torch.float64) * 3
    p = pca_2d(x)
    assert p.shape == (100, 2)
    xc = (x - x.mean(0)).numpy()
    assert np.allclose(p @ p.T, xc @ xc.T)  # rank-2 data: the 2-D projection keeps every inner product
    assert p[:, 0].var() >= p[:, 1].var()


def test_statistics_error_paths():
    with pytest.raises(ValueError, match="ball of radius"):
        hyperbolic_radius(torch.tensor([[2.0, 0.0]]), c=1.0)
    with pytest.raises(ValueError, match="c must be >= 0"):
        hyperbolic_radius(torch.zeros(1, 2), c=-1.0)
    with pytest.raises(ValueError, match="node_layer must be"):
        angular_separation(torch.zeros(4, 2), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="non-finite"):
        radial_angular_stats(torch.full((2, 3, 2), float("nan")), torch.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="steps must list"):
        radial_angular_stats(torch.zeros(2, 3, 2), torch.tensor([0, 1, 1]), steps=[0])
    with pytest.raises(ValueError, match="T>=2"):
        outward_drift(torch.zeros(1, 3, 2))
    with pytest.raises(ValueError, match="r and node_layer"):
        radial_separation(torch.zeros(3), torch.zeros(4))
