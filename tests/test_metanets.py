"""Baselines (StatNN, FlatMLP, NFN_NP/HNP, DWSNet, GMN): invariance, learnability, containers, errors.

The reference-specific checks of GMN, DWSNet and StatNN are in ``test_baselines_reference.py``."""

from __future__ import annotations

import pytest
import torch

from hgutils.weightspace.metanets import (
    GMN,
    MODELS,
    NFN,
    DWSNet,
    FlatMLP,
    StatNN,
    WeightData,
    build_metanet,
    info_nce,
    random_hidden_perms,
    snapshot_index,
    task_loss,
)
from hgutils.weightspace.metanets.flat import permute_hidden_per_network
from hgutils.weightspace.metanets.statnn import tensor_stats
from hgutils.weightspace.tasks import TrainConfig, fit

SIZES = (2, 5, 5, 1)


def make_data(n=6, T=3, dtype=torch.float64, seed=0, sizes=SIZES) -> WeightData:
    g = torch.Generator().manual_seed(seed)
    L = len(sizes) - 1
    return WeightData(
        tuple(torch.randn(n, T, sizes[i + 1], sizes[i], generator=g, dtype=dtype) for i in range(L)),
        tuple(torch.randn(n, T, sizes[i + 1], generator=g, dtype=dtype) for i in range(L)),
    )


def baselines(T: int, task: str = "classification", k: int = 3, sizes=SIZES):
    return {
        "StatNN": StatNN(task, k, sizes, T),
        "NFN_NP": NFN(task, k, sizes, T, mode="np"),
        "NFN_HNP": NFN(task, k, sizes, T, mode="hnp"),
        "DWSNet": DWSNet(task, k, sizes, T, hidden=8, n_hidden=1),
        "FlatMLP": FlatMLP(task, k, sizes, T),
        "GMN": GMN(task, k, sizes, T, hidden=16, depth=2),
    }


@pytest.mark.parametrize("name", ["StatNN", "NFN_NP", "NFN_HNP", "DWSNet", "GMN"])
def test_invariant_baselines_ignore_hidden_permutations_across_snapshots(name):
    torch.manual_seed(0)
    data = make_data(4, 3)
    perm = data.permute_hidden(random_hidden_perms(SIZES, torch.Generator().manual_seed(1)))
    m = baselines(3)[name].double().eval()
    assert torch.allclose(m.embed(data), m.embed(perm), atol=1e-5)
    assert torch.allclose(m(data), m(perm), atol=1e-5)
    assert not torch.allclose(m(data), m(make_data(4, 3, seed=7)), atol=1e-4)  # not a constant map


def test_flat_mlp_is_not_invariant():
    torch.manual_seed(0)
    data = make_data(4, 3)
    perm = data.permute_hidden(random_hidden_perms(SIZES, torch.Generator().manual_seed(1)))
    m = baselines(3)["FlatMLP"].double().eval()
    assert (m(data) - m(perm)).abs().max() > 1e-3


def test_permutations_keep_the_function_and_aug_is_per_network():
    data = make_data(3, 2)
    x = torch.randn(7, 2, dtype=torch.float64)

    def f(d: WeightData, n: int, t: int):
        h = x
        for i, (W, b) in enumerate(zip(d.weights, d.biases)):
            h = h @ W[n, t].T + b[n, t]
            if i < len(d.weights) - 1:
                h = torch.tanh(h)
        return h

    p = permute_hidden_per_network(data, torch.Generator().manual_seed(0))
    for n in range(3):
        for t in range(2):
            assert torch.allclose(f(data, n, t), f(p, n, t))
    assert not torch.allclose(p.weights[0], data.weights[0])


def test_stats_are_the_seven_statistics():
    x = torch.arange(10.0).view(1, 1, 2, 5)
    s = tensor_stats(x)[0, 0]
    assert torch.allclose(s, torch.tensor([4.5, 8.25, 0.0, 2.25, 4.5, 6.75, 9.0]))


@pytest.mark.parametrize("name", ["StatNN", "FlatMLP", "NFN_NP", "NFN_HNP", "DWSNet", "GMN"])
def test_each_baseline_overfits_32_networks(name):
    torch.manual_seed(4)
    data = make_data(32, 2, torch.float32, seed=11)
    y = torch.randint(0, 2, (32,), generator=torch.Generator().manual_seed(0))
    d, m = data, baselines(2, k=2)[name]
    # validation = the training set: this checks the capacity to fit, early stopping ends it at 100 %
    res = fit(
        m, d, y, torch.arange(32), torch.arange(32), cfg=TrainConfig(epochs=150, batch_size=32, lr=3e-3, patience=25)
    )
    assert res.metrics["train"]["accuracy"] == 1.0, res.history[-1]


def test_snapshot_index_and_weightdata_errors():
    assert snapshot_index(5, "last").tolist() == [4]
    assert snapshot_index(5, "all").tolist() == [0, 1, 2, 3, 4]
    assert snapshot_index(5, 3).tolist() == [0, 2, 4]
    assert snapshot_index(5, 1).tolist() == [4]
    assert snapshot_index(5, [-1, 0]).tolist() == [4, 0]
    with pytest.raises(ValueError, match="empty"):
        snapshot_index(0, "last")
    with pytest.raises(ValueError):
        snapshot_index(3, 4)
    with pytest.raises(ValueError, match="empty"):
        WeightData((torch.zeros(2, 0, 3, 2),), (torch.zeros(2, 0, 3),))
    with pytest.raises(ValueError, match="inputs"):
        WeightData((torch.zeros(2, 1, 3, 2), torch.zeros(2, 1, 1, 4)), (torch.zeros(2, 1, 3), torch.zeros(2, 1, 1)))


def test_architecture_mismatch_errors():
    data = make_data(2, 3)
    other = make_data(2, 3, sizes=(2, 5, 1))
    for name, m in baselines(3).items():
        with pytest.raises(ValueError, match="mismatch"):
            m.double().embed(other)
        with pytest.raises(ValueError, match="mismatch"):
            m.double().embed(data.select(torch.tensor([0, 1])))  # wrong number of snapshots
        assert name
    with pytest.raises(ValueError, match="unknown"):
        build_metanet("Transformer", None, "classification", 2)
    assert "GTH-GMN" in MODELS


def test_heads_and_infonce():
    z = torch.nn.functional.normalize(torch.randn(8, 4), dim=-1)
    aligned = info_nce(z, z, 0.1)
    shuffled = info_nce(z, z[torch.randperm(8)], 0.1)
    assert aligned < shuffled
    with pytest.raises(ValueError, match="integer"):
        task_loss("classification", torch.zeros(2, 3), torch.zeros(2))
    with pytest.raises(ValueError, match="task"):
        StatNN("ranking", 2, SIZES, 1)


def test_statnn_standardises_each_statistic_across_networks_and_takes_a_single_network():
    torch.manual_seed(0)
    data = make_data(6, 2)
    m = StatNN("classification", 3, SIZES, 2, hidden=128, act="silu", feature_norm="batch", head="mlp").double()
    f = m.features(data)
    h = m.norm(f)  # training mode: batch statistics, feature by feature
    assert torch.allclose(h.mean(0), torch.zeros_like(h[0]), atol=1e-8)
    varying = f.var(0) > 1e-8  # e.g. the variance of a one-entry bias is 0 for every network
    assert varying.sum() > 10
    assert torch.allclose(h.var(0, unbiased=False)[varying], torch.ones(int(varying.sum()), dtype=h.dtype), atol=1e-3)
    out = m(data[torch.tensor([0])])  # a last training batch of one network still runs (running statistics)
    assert out.shape == (1, 3) and torch.isfinite(out).all()


def test_statnn_standardises_its_statistics_on_the_training_networks_only():
    data = make_data(n=10, T=2)
    m = StatNN("classification", 3, SIZES, 2, feature_norm="train").double()
    with pytest.raises(ValueError, match="fit_inputs"):
        m(data[torch.arange(3)])
    # a network's statistics offset so that a raw-statistics MLP sees them all alike: 0.1 + 1e-4 * noise
    near = WeightData(tuple(0.1 + 1e-4 * w for w in data.weights), tuple(0.1 + 1e-4 * b for b in data.biases))
    train = torch.arange(6)
    m.fit_inputs(near, train)
    z = m._normalise(m.features(near[train]))
    assert torch.allclose(z.mean(0), torch.zeros(z.shape[1], dtype=z.dtype), atol=1e-8)
    varies = m.features(near[train]).std(0) > 1e-12  # the one-entry output bias has variance 0 in every network
    assert not varies.all() and torch.allclose(z.std(0, unbiased=False)[varies], torch.ones_like(z[0, varies]))
    assert (z[:, ~varies] == 0).all()  # a constant statistic stays constant (std 1 kept, no division by 0)
    held_out = m.features(near[torch.arange(6, 10)])
    assert torch.equal(m.feat_mean, m.features(near[train]).mean(0))  # the test networks never enter
    assert not torch.allclose(m._normalise(held_out).mean(0), torch.zeros_like(held_out[0]), atol=1e-3)
    # the statistics are permutation invariant, so the standardised model is too
    perm = torch.randperm(5)
    w = list(near.weights)
    b = list(near.biases)
    w[0], b[0], w[1] = w[0][:, :, perm], b[0][:, :, perm], w[1][:, :, :, perm]
    m.eval()
    assert torch.allclose(m(near[torch.arange(3)]), m(WeightData(tuple(w), tuple(b))[torch.arange(3)]), atol=1e-10)
    state = m.state_dict()
    assert {"feat_mean", "feat_std", "feat_fitted"} <= set(state)  # saved with the model
