"""Tests for hgutils.weightspace.in_zoo_baselines and kendall_ceiling: the trees references, Kendall tau's jackknife, the
label-noise ceiling and verdicts against a reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from hgutils.verdicts import CONTRADICTED, HOLDS
from hgutils.weightspace import in_zoo_baselines as R
from hgutils.weightspace import kendall_ceiling as K
from hgutils.weightspace.inputs import Splits, make_splits
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (4, 8, 3)
FAST = R.TreeSettings(learning_rates=(0.1,), max_leaf_nodes=(7,), patience=20, max_iter=500)


def _zoo(n: int = 300, T: int = 3, seed: int = 0) -> tuple[Zoo, torch.Tensor]:
    """A zoo whose weight scale carries the label: network i's weights are s_i * N(0, 1) at every
    snapshot (growing with t), s_i ~ U(0.2, 2); returns the zoo and s."""
    g = torch.Generator().manual_seed(seed)
    s = 0.2 + 1.8 * torch.rand(n, generator=g)
    growth = torch.linspace(0.5, 1.0, T)
    params = {}
    for l in range(len(SIZES) - 1):
        shape_w, shape_b = (SIZES[l + 1], SIZES[l]), (SIZES[l + 1],)
        params[f"W{l}"] = s.view(n, 1, 1, 1) * growth.view(1, T, 1, 1) * torch.randn(n, T, *shape_w, generator=g)
        params[f"b{l}"] = 0.1 * torch.randn(n, T, *shape_b, generator=g)
    return Zoo(MLPSpec(SIZES, "relu"), params, torch.arange(T) * 10), s


# --------------------------------------------------------------------------------------------
# Kendall tau with its jackknife
# --------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=4, max_size=30).filter(
        lambda v: len({a for a, _ in v}) > 2 and len({b for _, b in v}) > 2
    )
)
def test_kendall_jackknife_is_scipy_tau_b_and_its_leave_one_out(pairs):
    """tau_b equals scipy's (ties included); the jackknife equals brute-force leave-one-out."""
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    tau, se = K.kendall_jackknife(a, b)
    assert tau == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
    n = len(a)
    loo = np.array([kendalltau(np.delete(a, i), np.delete(b, i)).statistic for i in range(n)])
    if np.all(np.isfinite(loo)):
        ref = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
        assert se == pytest.approx(ref, abs=1e-12)
    else:
        assert math.isnan(se)


# --------------------------------------------------------------------------------------------
# the label-noise ceiling
# --------------------------------------------------------------------------------------------
def test_ceiling_is_one_without_label_noise():
    acc = np.random.default_rng(0).uniform(0.1, 0.9, 200)
    c = K.label_noise_ceiling(acc, acc)
    assert c.tau_halves == pytest.approx(1.0) and c.tau == pytest.approx(1.0)
    assert c.se_halves == pytest.approx(0.0, abs=1e-12) and c.n_networks == 200


def test_ceiling_matches_the_analytic_value_of_a_gaussian_zoo():
    """True accuracies p ~ N(0.5, 0.1^2), each half measures p + N(0, 0.05^2): the halves'
    correlation is 0.8, so tau_ab = 2/pi asin(0.8) = 0.590, and the full set (noise var halved)
    correlates with p at sqrt(0.01 / 0.01125): tau* = 2/pi asin(0.943) = 0.784, which is also what
    the true accuracies reach against the full-set labels."""
    rng = np.random.default_rng(1)
    n, s, sigma = 3000, 0.1, 0.05
    p = 0.5 + s * rng.standard_normal(n)
    a, b = p + sigma * rng.standard_normal(n), p + sigma * rng.standard_normal(n)
    c = K.label_noise_ceiling(a, b)
    tau_ab = 2 / math.pi * math.asin(s**2 / (s**2 + sigma**2))
    tau_star = 2 / math.pi * math.asin(math.sqrt(s**2 / (s**2 + sigma**2 / 2)))
    assert abs(c.tau_halves - tau_ab) < 3 * c.se_halves and c.se_halves < 0.02
    assert abs(c.tau - tau_star) < 3 * c.se and c.se < 0.02
    oracle = kendalltau(p, (a + b) / 2).statistic
    assert abs(oracle - c.tau) < 3 * c.se
    assert c.tau_halves < c.tau < 1


def test_ceiling_errors():
    with pytest.raises(ValueError, match="one value per network"):
        K.label_noise_ceiling(np.full(5, 0.5), np.full(4, 0.5))
    with pytest.raises(ValueError, match="at least 3"):
        K.label_noise_ceiling([0.1, 0.2], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        K.label_noise_ceiling([0.1, 0.2, 1.5], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="same size"):
        K.kendall_jackknife([1, 2, 3], [1, 2])


# --------------------------------------------------------------------------------------------
# trees
# --------------------------------------------------------------------------------------------
def test_stat_features_layout_is_statnn_statistics_per_snapshot_and_tensor():
    zoo, _ = _zoo(n=5, T=3)
    f = R.stat_features(zoo, "all")
    assert f.shape == (5, 3 * 4 * 7)
    w = zoo.params["W1"][2, 1].double().numpy().ravel()  # network 2, snapshot 1, tensor W1 (3rd)
    direct = [w.mean(), w.var(), *np.quantile(w, [0, 0.25, 0.5, 0.75, 1])]
    np.testing.assert_allclose(f[2].reshape(3, 4, 7)[1, 2], direct, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(R.stat_features(zoo, "final"), f.reshape(5, 3, 28)[:, -1])
    np.testing.assert_allclose(R.stat_features(zoo, [0, -1]), f.reshape(5, 3, 28)[:, [0, 2]].reshape(5, -1))
    with pytest.raises(ValueError, match="snapshots must be"):
        R.stat_features(zoo, "first")
    with pytest.raises(ValueError, match="snapshot indices"):
        R.stat_features(zoo, [5])


def test_trees_beat_a_constant_predictor_when_the_statistics_carry_the_label():
    """Accuracy task: tau well above 0 and test MSE below the training mean's; seeds differ (the
    per-split feature draw), the gate passes, early stopping ends before the cap."""
    zoo, s = _zoo()
    acc = 0.1 + 0.3 * (s - 0.2) / 1.8 + 0.01 * torch.randn(len(s), generator=torch.Generator().manual_seed(3))
    splits = make_splits(len(zoo), 0.15, 0.25, seed=0)
    run = R.in_zoo_references(zoo, "accuracy", acc, splits, [0, 1, 2], settings=FAST)
    assert set(run.table["model"]) == {R.TREES_STATS, R.TREES_STATS_TRAJ}  # no hyperparameters in meta
    te = acc[splits.test].numpy()
    const_mse = float(np.mean((te - acc[splits.train].numpy().mean()) ** 2))
    for name in (R.TREES_STATS, R.TREES_STATS_TRAJ):
        rows = run.table[run.table["model"] == name]
        assert (rows["test_kendall_tau"] > 0.6).all()
        assert (rows["test_mse"] < 0.3 * const_mse).all()
        assert rows["trained"].all() and not rows["capped"].any() and (rows["steps"] < FAST.max_iter).all()
    assert len(set(run.per_seed(R.TREES_STATS, "test_kendall_tau"))) > 1  # the random state matters
    true, pred = run.outputs[R.TREES_STATS]
    assert true.shape == pred.shape == (len(splits.test),)
    # the same features with a label they do not carry: no better than chance
    noise = torch.rand(len(s), generator=torch.Generator().manual_seed(4))
    null = R.tree_reference("null", R.stat_features(zoo), noise, "accuracy", splits, [0], FAST)
    assert abs(null.table["test_kendall_tau"].iloc[0]) < 0.25


def test_trees_classification_and_multi_output_regression():
    zoo, s = _zoo()
    labels = torch.bucketize(s, torch.tensor([0.8, 1.4]))  # 3 classes by weight scale
    splits = make_splits(len(zoo), 0.15, 0.25, seed=1, labels=labels)
    cls = R.in_zoo_references(zoo, "classification", labels, splits, [0], settings=FAST)
    assert (cls.table["test_accuracy"] > 0.7).all()  # chance: 1/3
    target = torch.stack([s, 2 * s + 1], 1)
    reg = R.in_zoo_references(zoo, "regression", target, splits, [0, 1], settings=FAST)
    const = float(((target[splits.test] - target[splits.train].mean(0)) ** 2).mean())
    assert (reg.table["test_mse"] < 0.3 * const).all()
    assert reg.outputs[R.TREES_STATS][1].shape == (len(splits.test), 2)


def test_hyperparameters_only_reference_reads_the_sampled_hyperparameters():
    """A label that depends on the learning rate and the (categorical) optimiser only: the
    hyperparameters reference ranks it, the statistics (pure noise here) do not."""
    n = 300
    zoo, _ = _zoo(n=n)
    g = torch.Generator().manual_seed(5)
    meta = {
        "lr": torch.exp(torch.rand(n, generator=g) * 4 - 7),
        "l2": torch.rand(n, generator=g),
        "dropout": torch.rand(n, generator=g),
        "init_std": torch.rand(n, generator=g),
        "train_fraction": torch.rand(n, generator=g),
        "activation": torch.randint(2, (n,), generator=g),
        "optimizer": torch.randint(3, (n,), generator=g),
        "w_init": torch.randint(5, (n,), generator=g),
    }
    acc = 0.1 + 0.05 * torch.log(meta["lr"]) / 7 + 0.2 * (meta["optimizer"] == 1)
    zoo.meta.update(meta)
    X, names, cat = R.hyperparameter_features(zoo)
    assert X.shape == (n, 8) and names[-3:] == ["activation", "optimizer", "w_init"] and cat.sum() == 3
    splits = make_splits(n, 0.15, 0.25, seed=2)
    run = R.in_zoo_references(zoo, "accuracy", acc, splits, [0], settings=FAST)
    hp = run.table[run.table["model"] == R.TREES_HPARAMS]["test_kendall_tau"].iloc[0]
    stats = run.table[run.table["model"] == R.TREES_STATS]["test_kendall_tau"].iloc[0]
    assert hp > 0.8 and abs(stats) < 0.3


def test_grid_search_records_every_pair_and_uses_the_best_on_validation():
    zoo, s = _zoo()
    splits = make_splits(len(zoo), 0.15, 0.25, seed=0)
    grid = R.TreeSettings(learning_rates=(0.03, 0.1), max_leaf_nodes=(3, 7), patience=20, max_iter=400)
    run = R.tree_reference("t", R.stat_features(zoo), s, "accuracy", splits, [0], grid)
    search = run.search["t"]
    assert set(search) == {(0.03, 3), (0.03, 7), (0.1, 3), (0.1, 7)}
    best = max(search, key=search.get)
    row = run.table.iloc[0]
    assert (row["lr"], row["max_leaf_nodes"]) == best and row["val_kendall_tau"] == pytest.approx(search[best])


def test_tree_reference_errors():
    zoo, s = _zoo(n=40)
    X = R.stat_features(zoo)
    good = make_splits(40, 0.2, 0.2)
    empty = Splits(good.train, good.val, torch.tensor([], dtype=torch.long))
    with pytest.raises(ValueError, match="test split is empty"):
        R.tree_reference("t", X, s, "accuracy", empty, [0], FAST)
    with pytest.raises(ValueError, match="one entry per network"):
        R.tree_reference("t", X, s[:-1], "accuracy", good, [0], FAST)
    with pytest.raises(ValueError, match="needs a \\[N\\] target"):
        R.tree_reference("t", X, torch.stack([s, s], 1), "accuracy", good, [0], FAST)
    with pytest.raises(ValueError, match="task must be"):
        R.tree_reference("t", X, s, "ranking", good, [0], FAST)
    with pytest.raises(ValueError, match="features must be \\[N, F\\]"):
        R.tree_reference("t", X[:, :, None], s, "accuracy", good, [0], FAST)
    overlap = Splits(good.train, good.train[:3], good.test)
    with pytest.raises(ValueError, match="disjoint"):
        R.tree_reference("t", X, s, "accuracy", overlap, [0], FAST)
    with pytest.raises(ValueError, match="distinct ints"):
        R.tree_reference("t", X, s, "accuracy", good, [], FAST)
    with pytest.raises(ValueError, match="bool mask"):
        R.tree_reference("t", X, s, "accuracy", good, [0], FAST, categorical=np.array([True]))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        R.tree_reference("t", bad, s, "accuracy", good, [0], FAST)
    with pytest.raises(ValueError, match="sampled hyperparameters"):
        R.hyperparameter_features(zoo)
    with pytest.raises(ValueError, match="max_features"):
        R.TreeSettings(max_features=0.0)
    run = R.tree_reference("t", X, s, "accuracy", good, [0], FAST)
    with pytest.raises(ValueError, match="not in this run"):
        run.per_seed("u", "test_kendall_tau")


# --------------------------------------------------------------------------------------------
# verdicts against a reference
# --------------------------------------------------------------------------------------------
def test_versus_reference_rule():
    below = K.versus_reference([0.70, 0.72, 0.74], 0.90, 0.01, higher_is_better=False, label="below")
    assert below.diff == pytest.approx(0.18)
    assert below.se == pytest.approx(math.sqrt(0.0004 / 3 + 0.0001))
    assert below.verdict == HOLDS
    above = K.versus_reference([0.70, 0.72, 0.74], 0.90, 0.01, label="above")
    assert above.verdict == CONTRADICTED and above.diff == pytest.approx(-0.18)
    assert math.isnan(K.versus_reference([0.7], 0.9, 0.01).se)  # one seed: no standard error
    with pytest.raises(ValueError, match="per-seed values"):
        K.versus_reference([], 0.9, 0.01)
    with pytest.raises(ValueError, match="se must be finite"):
        K.versus_reference([0.7, 0.8], 0.9, -1.0)
