"""Notebook 08's driver on tiny zoos built from checkpoints, and the disk view of ball points it draws."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from hgutils.experiments import nb08_your_own_networks as ex
from hgutils.ledger import Claims
from hgutils.manifolds import poincare as pm
from hgutils.weightspace.embedding_geometry import disk_coordinates, hyperbolic_radius
from hgutils.weightspace.graphs import mlp_topology
from hgutils.weightspace.zoo import Zoo


def _zoo(n: int = 3, T: int = 2) -> Zoo:
    trajs = []
    for k in range(n):
        torch.manual_seed(k)
        net = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))
        snaps = []
        for _ in range(T):
            snaps.append({name: w.detach().clone() for name, w in net.state_dict().items()})
            with torch.no_grad():
                for p in net.parameters():
                    p.add_(0.3 * torch.randn_like(p))
        trajs.append(snaps)
    return Zoo.from_checkpoints(trajs, activation="tanh")


@pytest.mark.parametrize("c", [1.0, 0.5])
def test_disk_coordinates_keep_every_radius_and_leave_2d_points_alone(c):
    g = torch.Generator().manual_seed(0)
    z = pm.expmap0(torch.randn(4, 30, 6, generator=g, dtype=torch.float64), c)
    p = disk_coordinates(z, c)
    assert p.shape == (4, 30, 2)
    torch.testing.assert_close(hyperbolic_radius(p, c), hyperbolic_radius(z, c), rtol=1e-10, atol=1e-10)
    flat = pm.expmap0(torch.randn(10, 2, dtype=torch.float64), c)
    assert torch.equal(disk_coordinates(flat, c), flat)
    with pytest.raises(ValueError, match="must lie in the ball"):
        disk_coordinates(torch.full((3, 4), 2.0), c)
    with pytest.raises(ValueError, match="c must be > 0"):
        disk_coordinates(z, 0.0)


def test_network_split_is_disjoint_and_refuses_too_few_networks():
    cfg = ex.CONFIG.from_scale("smoke")
    s = ex.network_split(cfg)
    assert [len(s[k]) for k in ("train", "val", "read")] == [cfg.n_networks - cfg.n_val - cfg.n_read, 2, 6]
    assert torch.equal(torch.cat([s["train"], s["val"], s["read"]]), torch.arange(cfg.n_networks))
    with pytest.raises(ValueError, match="leaves 1 networks to train"):
        ex.network_split(ex.CONFIG.from_scale("smoke", n_networks=9))


def test_similarity_table_is_one_for_a_network_against_itself_and_below_for_two_networks():
    zoo = _zoo()
    x = torch.randn(40, 5, generator=torch.Generator().manual_seed(1))
    t = ex.similarity_table(zoo, x, {"same": ((0, -1), (0, -1)), "two": ((0, -1), (1, -1))}, msa_dims=2)
    assert list(t["layer"]) == ["hidden 1", "output"] * 2
    cols = ["MSA (1 - d)", "linear CKA", "Procrustes"]
    same, two = t[t["pair"] == "same"][cols].to_numpy(), t[t["pair"] == "two"][cols].to_numpy()
    np.testing.assert_allclose(same, 1.0, atol=1e-6)
    assert (two < 1 - 1e-3).all() and (two >= 0).all()


def test_pca_chart_maps_coordinates_back_onto_the_plane():
    x = torch.randn(50, 6, generator=torch.Generator().manual_seed(2))
    p, chart = ex.pca_chart(x, 6)
    torch.testing.assert_close(chart(p), x, rtol=1e-4, atol=1e-4)  # all components: the chart is exact
    p2, chart2 = ex.pca_chart(x, 2)
    assert p2.shape == (50, 2) and chart2(p2[0]).shape == (6,)
    with pytest.raises(ValueError, match="1 <= m <= min"):
        ex.pca_chart(x, 7)


def test_reconstruction_claims_judge_against_the_baselines():
    rng = np.random.default_rng(0)
    n = 6
    table = pd.DataFrame(
        {
            "network": range(n),
            "chance": 0.5,
            "link_auc": 0.8 + 0.01 * rng.standard_normal(n),
            "sign_acc": 0.55 + 0.01 * rng.standard_normal(n),
            "sign_majority": 0.56 + 0.001 * rng.standard_normal(n),
            "mag_r2": 0.2 + 0.01 * rng.standard_normal(n),
            "mag_r2_block_mean": 0.1 + 0.01 * rng.standard_normal(n),
        }
    )
    claims = Claims("08_your_own_networks", "smoke")
    ex.reconstruction_claims(claims, table, {"trained": True, "reason": "ok", "capped": False})
    assert [r.verdict.split(":")[0] for r in claims.rows] == ["holds", "contradicted"]
    claims = Claims("08_your_own_networks", "smoke")
    ex.reconstruction_claims(claims, table.assign(mag_r2=0.05), {"trained": True, "reason": "ok", "capped": False})
    assert claims.rows[0].verdict.startswith("contradicted")


def test_plot_layers_in_ball_draws_one_disk_per_snapshot_with_a_layer_colorbar():
    top = mlp_topology((5, 4, 3))
    V = top["node_layer"].shape[0]
    z = pm.expmap0(0.5 * torch.randn(3, V, 4, generator=torch.Generator().manual_seed(3)), 1.0)
    fig = ex.plot_layers_in_ball(z, top["node_layer"], top["node_type"], [0, 10, 20], [0, 2])
    disks = [ax for ax in fig.axes if ax.get_title().startswith("step")]
    assert [ax.get_title() for ax in disks] == ["step 0", "step 20"]
    bar = [ax for ax in fig.axes if ax not in disks]
    assert len(bar) == 1 and [t.get_text() for t in bar[0].get_yticklabels()] == ["input", "hidden 1", "output"]
    with pytest.raises(ValueError, match=r"one network's \[T, V, d\]"):
        ex.plot_layers_in_ball(z[None], top["node_layer"], top["node_type"], [0, 10, 20], [0])
