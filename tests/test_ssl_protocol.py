"""Notebook 02's self-supervised protocol as DWSNets runs it: the network and one augmented view,
the augmentation (shift by 0.2 std, dropout 0.5 with x2 rescaling) applied before normalisation."""

from __future__ import annotations

import pytest
import torch
from test_training_loop import make_zoo

from hgutils.weightspace.graphs import TemporalParamGraph, node_strength_features
from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.metanets.base import WeightData, dwsnets_augment


def test_dwsnets_augment_shifts_by_its_std_and_drops_with_rescaling():
    x = torch.randn(3, 2, 5, 4, dtype=torch.float64)
    shifted = dwsnets_augment(x, 2, None, shift=0.2, drop=0.0)
    assert torch.allclose(shifted - x, 0.2 * x.std(dim=(2, 3), keepdim=True).expand_as(x))
    one = torch.randn(3, 2, 1)
    assert torch.equal(dwsnets_augment(one, 1, None, shift=0.2, drop=0.0), one)  # a single bias: no shift
    g = torch.Generator().manual_seed(0)
    big = torch.ones(200, 1, 50, 50, dtype=torch.float64)
    out = dwsnets_augment(big, 2, g, shift=0.0, drop=0.5)
    kept = out != 0
    assert 0.45 < float(kept.double().mean()) < 0.55 and torch.all(out[kept] == 2.0)
    with pytest.raises(ValueError, match="drop"):
        dwsnets_augment(x, 2, None, drop=1.0)


def test_the_view_is_taken_before_normalisation():
    zoo = make_zoo(10, 2, dtype=torch.float64)
    std = zoo.standardized(zoo.entry_stats(torch.arange(8)))
    data = WeightData.from_zoo(std, "all")
    assert data.norm is not None and len(data.norm) == 2 * len(data.weights)
    view = data.dwsnets_view(torch.Generator().manual_seed(3))
    # undo the normalisation of the view; it equals the raw weights augmented with the same draws
    g = torch.Generator().manual_seed(3)
    raw = WeightData.from_zoo(zoo, "all")
    for k, (t, r) in enumerate(
        zip(
            [w for p in zip(view.weights, view.biases) for w in p], [w for p in zip(raw.weights, raw.biases) for w in p]
        )
    ):
        mu, div = view.norm[k]
        expect = dwsnets_augment(r, 2 if k % 2 == 0 else 1, g)
        assert torch.allclose(t * div + mu, expect, atol=1e-9)
    # snapshot selection and batching keep the statistics aligned
    last = WeightData.from_zoo(std, "last")
    assert last.norm[0][0].shape[0] == 1 and data[[0, 1]].norm is data.norm


def test_infonce_pairs_each_network_with_one_augmented_view():
    zoo = make_zoo(8, 1)
    m = build_metanet("StatNN", zoo, "infonce", 16)
    data = m.prepare(zoo)
    calls = []

    def spy(batch, generator, shift, drop):
        calls.append((shift, drop))
        return batch.dwsnets_view(generator, shift, drop)

    m.augment = spy
    torch.manual_seed(0)
    m.eval()
    terms = m.loss_terms(data[torch.arange(8)], None, 0.5, torch.Generator().manual_seed(1))
    assert calls == [(0.2, 0.5)]  # one augmented view, the other is the network itself
    assert torch.isfinite(terms["task"])


def test_both_views_pass_through_batchnorm_as_one_batch_as_dwsnets_trainer_does():
    from hgutils.weightspace.metanets.heads import info_nce

    zoo = make_zoo(8, 1)
    m = build_metanet("DWSNet", zoo, "infonce", 8)
    data = m.prepare(zoo)
    batch = data[torch.arange(8)]
    m.train()
    torch.manual_seed(0)
    terms = m.loss_terms(batch, None, 0.5, torch.Generator().manual_seed(1))
    view = batch.dwsnets_view(torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    joint = info_nce(*m(WeightData.cat([batch, view])).chunk(2), 0.1)
    torch.manual_seed(0)
    separate = info_nce(m(batch), m(view), 0.1)  # BatchNorm statistics per view: what the loss must not be
    assert torch.allclose(terms["task"], joint, atol=1e-6)
    assert not torch.allclose(terms["task"], separate, atol=1e-3)
    # without BatchNorm the joint pass changes nothing
    nfn = build_metanet("StatNN", zoo, "infonce", 8).train()
    d2 = nfn.prepare(zoo)[torch.arange(8)]
    v2 = d2.dwsnets_view(torch.Generator().manual_seed(1))
    got = nfn.loss_terms(d2, None, 0.5, torch.Generator().manual_seed(1))["task"]
    assert torch.allclose(got, info_nce(nfn(d2), nfn(v2), 0.1), atol=1e-6)


def test_weight_data_concatenation_keeps_order_and_refuses_mismatches():
    zoo = make_zoo(6, 2, dtype=torch.float64)
    data = WeightData.from_zoo(zoo.standardized(zoo.entry_stats(torch.arange(6))), "all")
    both = WeightData.cat([data[[0, 1]], data[[4]]])
    assert len(both) == 3 and torch.equal(both.weights[0], data.weights[0][[0, 1, 4]]) and both.norm is data.norm
    other = WeightData.from_zoo(zoo, "all")  # raw: no statistics
    with pytest.raises(ValueError, match="different statistics"):
        WeightData.cat([data[[0]], other[[1]]])
    with pytest.raises(ValueError, match="cannot concatenate sizes"):
        WeightData.cat([data[[0]], data.select(torch.tensor([0]))[[1]]])
    with pytest.raises(ValueError, match="at least one"):
        WeightData.cat([])


def test_gth_gmn_view_recomputes_node_features_from_the_augmented_weights():
    zoo = make_zoo(4, 2)
    g = TemporalParamGraph.from_zoo(zoo)
    v = g.dwsnets_view(torch.Generator().manual_seed(0))
    P = g.edge_weight.shape[-1] // 2
    assert torch.equal(v.edge_weight[..., :P], v.edge_weight[..., P:])  # still symmetrised
    assert torch.allclose(v.node_feat, node_strength_features(v.edge_weight, g.edge_index[1], g.node_layer.shape[0]))
    assert not torch.allclose(v.edge_weight, g.edge_weight)
    zero = g.dwsnets_view(None, shift=0.0, drop=0.0)
    assert torch.allclose(zero.edge_weight, g.edge_weight) and torch.allclose(zero.node_feat, g.node_feat)


def test_every_encoders_probe_reads_the_same_width(tmp_path, monkeypatch):
    """Notebook 02's rows, frozen two-stage GTH-GMN included, probe (a, b) at PROBE_COMPONENTS dimensions."""
    from test_training_loop import SMALL_GTH

    from hgutils.experiments import nb02_sine_regression as nb02
    from hgutils.experiments import weightspace_protocol as cmp
    from hgutils.weightspace.tasks import PROBE_COMPONENTS, TrainConfig, frozen_probe_components, linear_probe

    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = make_zoo(40, 2)
    y = zoo.meta["target"]
    splits = cmp.make_splits(len(zoo), 0.2, 0.2)
    settings = cmp.RunSettings(
        train_cfg=TrainConfig(epochs=1, batch_size=8), gth_overrides={**SMALL_GTH, "dim": 24}, recipes="optimizer"
    )
    names = ["GTH-GMN (two-stage, frozen)", "StatNN", "DWSNet"]
    run = cmp.run_comparison(zoo, "infonce", y, 16, names, splits, [0], settings)
    assert set(run.table["probe_dim"]) == {PROBE_COMPONENTS}  # one width for every row
    table = nb02.probe_table(run, cmp.summarize(run.table, ["test_mse", "test_mean_mse"]))
    assert set(table["probe_dim"]) == {str(PROBE_COMPONENTS)}
    # the sizing rule's probe (the frozen reading's own width) is shown beside, labelled, when it differs
    frozen_model = run.models["GTH-GMN (two-stage, frozen)"]
    k = frozen_probe_components(frozen_model, len(splits.train), y)
    wide = min(k, int(frozen_model.emb_mu.shape[0]))
    assert ("test_wide_probe_dim" in run.table) == (wide != PROBE_COMPONENTS)
    if wide != PROBE_COMPONENTS:
        assert run.table.set_index("model").loc["GTH-GMN (two-stage, frozen)", "test_wide_probe_dim"] == wide
        assert "wider probe (not judged)" in table
    # the probe reads at most PROBE_COMPONENTS principal components of a wider embedding
    x = torch.randn(30, 40, dtype=torch.float64)
    assert linear_probe(x[:20], y[:20], x[20:], y[20:30], components=PROBE_COMPONENTS)["probe_dim"] == 16
    assert linear_probe(x[:20, :5], y[:20], x[20:, :5], y[20:30], components=PROBE_COMPONENTS)["probe_dim"] == 5
