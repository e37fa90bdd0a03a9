"""Notebook 07's driver: the preset, the snapshot pair, the encoder run on a tiny zoo, the readouts
against the shuffled control, the three geometry claims on constructed readouts, and the figures."""

from __future__ import annotations

import dataclasses

import matplotlib
import numpy as np
import pytest
import torch
from test_training_loop import SMALL_GTH, make_zoo

from hgutils.experiments import nb07_training_geometry as ex
from hgutils.ledger import Claims
from hgutils.loop import TrainLog
from hgutils.manifolds import poincare as pm
from hgutils.verdicts import CAPPED
from hgutils.weightspace.metanets import build_metanet

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


# --------------------------------------------------------------------------------------------
# preset
# --------------------------------------------------------------------------------------------
def test_snapshot_pair_maps_the_papers_t11_and_t97():
    assert ex.snapshot_pair(100) == (11, 96)  # round(0.97 * 99) = 96: the 97th snapshot of 100
    assert ex.snapshot_pair(20) == (2, 18)
    assert ex.snapshot_pair(2) == (0, 1)
    with pytest.raises(ValueError, match="at least 2 snapshots"):
        ex.snapshot_pair(1)


def test_presets_hold_the_papers_figure_and_a_compile_setting_per_scale():
    smoke, medium, paper = (ex.CONFIG.from_scale(s) for s in ("smoke", "medium", "paper"))
    for cfg in (smoke, medium, paper):
        assert cfg.layers == 13 and cfg.n_read >= 4 and cfg.gth_overrides == ()
    assert medium.T >= 90 and paper.T >= 90 and medium.dataset == paper.dataset == "mnist"
    assert not smoke.compile and not medium.compile and paper.compile
    assert medium.epochs >= 10 * medium.patience  # a cap early stopping should end before
    assert medium.COST_MINUTES["medium"] <= 30 and smoke.COST_MINUTES["smoke"] <= 3


def test_gth_overrides_win_and_unknown_fields_are_refused():
    cfg = ex.CONFIG.from_scale("smoke", gth_overrides=(("dim", 32), ("n_attn_layers", 2)))
    kw = cfg.gth_kwargs()
    assert kw["dim"] == 32 and kw["n_attn_layers"] == 2 and kw["compile"] is False
    assert ex.CONFIG.from_scale("smoke").gth_kwargs()["dim"] == ex.CONFIG.gth_dim
    with pytest.raises(ValueError, match="not GTHGMNConfig fields"):
        ex.CONFIG.from_scale("smoke", gth_overrides=(("dims", 32),))
    large = ex.CONFIG.from_scale("smoke", gth_size="large", gth_overrides=(("heads", 2),)).gth_kwargs()
    assert large["dim"] == 32 and large["n_attn_layers"] == 2 and large["heads"] == 2  # the overrides win
    with pytest.raises(ValueError, match="gth_size"):
        ex.CONFIG.from_scale("smoke", gth_size="huge")
    with pytest.raises(ValueError, match="leave INRs to read"):
        ex.CONFIG.from_scale("smoke", n_inrs=6, n_train=4, n_val=2)


def test_the_split_is_disjoint_and_in_zoo_order():
    cfg = ex.CONFIG.from_scale("smoke", n_inrs=9, n_train=3, n_val=2)
    sp = ex.split_networks(cfg)
    assert sp["train"].tolist() == [0, 1, 2] and sp["val"].tolist() == [3, 4] and sp["read"].tolist() == [5, 6, 7, 8]
    assert cfg.n_read == 4


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------
def _tiny_cfg(**kw):
    base = {"n_inrs": 6, "n_train": 2, "n_val": 2, "gth_dim": 8, "epochs": 2, "batch": 2, "refine_steps": 1}
    small = tuple((k, v) for k, v in SMALL_GTH.items() if k != "dim")
    return ex.CONFIG.from_scale("smoke", gth_overrides=small, **(base | kw))


def test_training_geometry_trains_the_encoder_and_reads_only_held_out_inrs():
    zoo = make_zoo(6, 5)
    cfg = _tiny_cfg()
    run = ex.training_geometry(zoo, cfg, seed=0)
    V = run.readout.node_layer.shape[0]
    assert run.readout.z.shape == (2, 5, V, 8) and run.split["read"].tolist() == [4, 5]
    assert set(run.gate) == {"trained", "reason", "capped"} and 1 <= len(run.log.history) <= 2
    row = ex.encoder_table(run).iloc[0]
    assert row["INRs (train / val / read)"] == "2/2/2" and {"link_auc", "mag_r2"} <= set(row.index)
    with pytest.raises(ValueError, match="splits n_inrs"):
        ex.training_geometry(make_zoo(5, 5), cfg)


def test_read_geometry_shuffles_the_snapshots_for_the_control():
    zoo = make_zoo(3, 4)
    m = build_metanet("GTH-GMN", zoo, "classification", 2, refine_steps=2, **SMALL_GTH)
    g = m.prepare(zoo)
    r = ex.read_geometry(m, g, torch.arange(3), [0, 1, 2, 3], seed=0)
    assert r.z.shape == r.z_shuffled.shape == (3, 4, g.node_layer.shape[0], 8)
    assert sorted(r.perm.tolist()) == [0, 1, 2, 3] and r.perm.tolist() != [0, 1, 2, 3]
    assert set(r.readouts) == set(ex.READOUTS) and r.readouts["radial_sep"].shape == (3, 4)
    assert torch.equal(r.node_type, g.node_type)
    table = ex.readout_table(r, 0, 3)
    assert list(table["readout"]) == list(ex.READOUTS)
    np.testing.assert_allclose(
        table["change"], [(r.readouts[k][:, 3] - r.readouts[k][:, 0]).mean() for k in ex.READOUTS], rtol=1e-12
    )
    with pytest.raises(ValueError, match="GTH-GMN"):
        ex.read_geometry(torch.nn.Linear(2, 2), g, torch.arange(1), [0])
    with pytest.raises(ValueError, match="one training step per snapshot"):
        ex.read_geometry(m, g, torch.arange(1), [0, 1])


def test_zoo_table_reports_the_trajectory_and_its_movement():
    zoo = make_zoo(4, 3)
    zoo.meta["psnr"] = torch.full((4,), 30.0)
    row = ex.zoo_table(zoo).iloc[0]
    assert row["INRs"] == 4 and row["T"] == 3 and row["sizes"] == "2-4-4-1" and row["PSNR median (dB)"] == 30.0
    assert row["moved t0 -> last"] == pytest.approx(zoo.movement(0, -1)["all"], abs=1e-3)


# --------------------------------------------------------------------------------------------
# claims on constructed readouts
# --------------------------------------------------------------------------------------------
def _readout(delta: float, control_delta: float, n: int = 12, T: int = 20, seed: int = 0) -> ex.EmbeddingReadout:
    """Readouts flat over training but for a jump of ``delta`` (control: ``control_delta``) at the
    paper's late snapshot (index 18 of 20), each network with its own level and a little noise."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0.3, 0.05, (n, 1)) + np.zeros((n, T))
    a, b = base.copy(), base.copy()
    late = ex.snapshot_pair(T)[1]
    a[:, late:] += delta + rng.normal(0, 0.01, (n, 1))
    b[:, late:] += control_delta + rng.normal(0, 0.01, (n, 1))
    z = torch.zeros(n, T, 3, 2)
    lay, typ = torch.tensor([0, 1, 2]), torch.tensor([0, 1, 2])
    r = {k: a for k in ex.READOUTS}
    c = {k: b for k in ex.READOUTS}
    return ex.EmbeddingReadout(z, z, torch.arange(T), lay, typ, 1.0, list(range(T)), r, c)


def _verdicts(readout, judge=True, gate=None, scale="medium"):
    claims = Claims("07_training_geometry", scale)
    ex.geometry_claims(claims, readout, gate or {"trained": True, "reason": "ok", "capped": False}, judge)
    return {r.id: r.verdict for r in claims.rows}


def test_geometry_claims_keep_the_ids_notebook_01_recorded():
    ids = set(_verdicts(_readout(0.2, 0.0)))
    assert ids == {
        "layers-separate-radially@13-layer",
        "layers-separate-angularly@13-layer",
        "nodes-drift-outward@13-layer",
    }


def test_one_function_per_claim_id_records_what_geometry_claims_records():
    readout, gate = _readout(0.2, 0.0), {"trained": True, "reason": "ok", "capped": False}
    group, single = Claims("07_training_geometry", "medium"), Claims("07_training_geometry", "medium")
    ex.geometry_claims(group, readout, gate, True)
    ex.claim_layers_separate_radially(single, readout, gate, True)
    ex.claim_layers_separate_angularly(single, readout, gate, True)
    ex.claim_nodes_drift_outward(single, readout, gate, True)
    assert single.to_dict() == group.to_dict()
    assert [r.id.split("@")[0] for r in single.rows] == [cid for cid, _, _ in ex.GEOMETRY_CLAIMS]


def test_a_trend_beyond_the_shuffled_control_holds():
    assert set(_verdicts(_readout(0.2, 0.0)).values()) == {"holds"}


def test_a_trend_the_control_shows_as_well_is_not_the_papers():
    # the encoder drifts just as much on shuffled snapshots: an artefact of its recurrence
    assert set(_verdicts(_readout(0.2, 0.2)).values()) == {"inconclusive"}


def test_a_resolved_decrease_contradicts_and_a_capped_encoder_says_so():
    assert set(_verdicts(_readout(-0.2, 0.0)).values()) == {"contradicted"}
    capped = {"trained": True, "reason": "ok", "capped": True}
    assert all(v.startswith(CAPPED) for v in _verdicts(_readout(-0.2, 0.0), gate=capped).values())


def test_smoke_judges_nothing_and_a_readout_missing_a_key_is_refused():
    assert set(_verdicts(_readout(0.2, 0.0), judge=False, scale="smoke").values()) == {"not tested at this scale"}
    bad = _readout(0.2, 0.0)
    bad = dataclasses.replace(bad, control={k: v for k, v in bad.control.items() if k != "mean_radius"})
    with pytest.raises(ValueError, match="mean_radius"):
        _verdicts(bad)
    with pytest.raises(ValueError, match="mean_radius"):  # the one claim that reads it refuses it too
        ex.claim_nodes_drift_outward(Claims("07_training_geometry", "medium"), bad, None, True)


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------
def _ball_readout(B=2, T=5, L=14, d=4, seed=0) -> ex.EmbeddingReadout:
    g = torch.Generator().manual_seed(seed)
    layer = torch.cat([torch.arange(L).repeat_interleave(2), torch.arange(1, L)])  # 2 neurons per layer + biases
    typ = torch.cat([torch.ones(2 * L, dtype=torch.long), torch.full((L - 1,), 3)])
    z = pm.project(torch.randn(B, T, layer.numel(), d, generator=g, dtype=torch.float64) * 0.4, 1.0)
    zs = z[:, torch.randperm(T, generator=g)]
    r = {k: np.random.default_rng(seed).random((B, T)) for k in ex.READOUTS}
    return ex.EmbeddingReadout(z, zs, torch.arange(T), layer, typ, 1.0, list(range(T)), r, r)


def test_layer_radius_is_the_mean_node_radius_of_each_layer():
    r = _ball_readout()
    got = ex.layer_radius(r)
    dist = 2 * torch.atanh(r.z.norm(dim=-1))  # d_1(0, z) = 2 artanh |z| at c = 1
    want = np.stack([dist[..., r.node_layer == k].mean(-1).mean(0).numpy() for k in range(14)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert got.shape == (14, 5)


def test_figures_draw_every_layer_in_its_own_colour_with_a_colour_bar():
    r = _ball_readout()
    assert ex.layer_names(14)[0] == "input" and ex.layer_names(14)[-1] == "output" and len(ex.layer_names(14)) == 14
    with pytest.raises(ValueError, match="input and an output"):
        ex.layer_names(1)
    fig = ex.plot_layer_radius(r, 1, 4)
    colours = {tuple(line.get_color()) for line in fig.axes[0].get_lines() if line.get_linestyle() == "-"}
    assert len(colours) == 14  # one colour per layer, none repeated
    assert any(ax.get_ylabel() == "layer" for ax in fig.axes)  # the colour bar
    ball = ex.plot_ball(r.z[0], r.node_layer, r.node_type, (1, 4), r.steps, r.c)
    assert any(ax.get_ylabel() == "layer" for ax in ball.axes) and ball.legends  # legend below, not on a disk
    assert not any(ax.get_legend() for ax in ball.axes)
    log = TrainLog(history=[{"train_loss": 3.0 - e, "val_loss": 2.0 - e / 2} for e in range(3)], best_epoch=2)
    curves = ex.plot_encoder_curves(log, cap=3)
    assert len(curves.axes) == 2 and "reached" in curves.legends[0].get_texts()[-1].get_text()
    with pytest.raises(ValueError, match="no epochs"):
        ex.plot_encoder_curves(TrainLog(), cap=3)
    rd = ex.plot_readouts(r, 1, 4)
    assert len(rd.axes) == 3 and rd.legends and not any(ax.get_legend() for ax in rd.axes)
    plt.close("all")
    with pytest.raises(ValueError, match="one network"):
        ex.plot_ball(r.z, r.node_layer, r.node_type, (0,))
