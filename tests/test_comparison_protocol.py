"""The weight-space comparison protocol: input preparation, the learnability gate on real models,
permutation augmentation, learning-rate search, per-model gates in the results."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
import torch
from _fakes import diverging_above
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.weightspace_protocol import RunSettings
from hgutils.experiments.weightspace_protocol.runner import _Runner, _stage1_groups
from hgutils.weightspace.metanets import WeightData, build_metanet, random_hidden_perms
from hgutils.weightspace.metanets.flat import permute_hidden_per_network
from hgutils.weightspace.stacked_mlp import mlp_forward
from hgutils.weightspace.tasks import TrainConfig, fit
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (2, 5, 4, 1)


def _zoo(n=30, T=3, seed=0, shared_first=False, signal=False):
    g = torch.Generator().manual_seed(seed)
    params = {}
    label = torch.arange(n) % 2
    for l in range(3):
        w = torch.randn(n, T, SIZES[l + 1], SIZES[l], generator=g)
        b = torch.randn(n, T, SIZES[l + 1], generator=g)
        if shared_first:
            w[:, 0], b[:, 0] = w[:1, 0], b[:1, 0]
        if signal:  # the label moves the output bias: learnable by any model
            b[:, :, 0] += 3.0 * (2 * label[:, None].float() - 1) * (l == 2)
        params[f"W{l}"], params[f"b{l}"] = w, b
    return Zoo(MLPSpec(SIZES, "sine", 1.0), params, torch.arange(T), {"label": label})


def _permute_all(zoo: Zoo, perms) -> Zoo:
    """The same hidden-neuron permutation applied to every network and snapshot (relabelling)."""
    p = {k: v.clone() for k, v in zoo.params.items()}
    for i, perm in enumerate(perms):
        p[f"W{i}"], p[f"b{i}"] = p[f"W{i}"][:, :, perm], p[f"b{i}"][:, :, perm]
        p[f"W{i + 1}"] = p[f"W{i + 1}"][:, :, :, perm]
    return dataclasses.replace(zoo, params=p)


def test_standardisation_uses_training_statistics_only_and_zeroes_constant_entries():
    zoo = _zoo(shared_first=True)
    train = torch.arange(20)
    z = zoo.standardized(zoo.entry_stats(train))
    for k, v in z.params.items():
        x = v[train, 1:].double()
        assert torch.allclose(x.mean(0), torch.zeros_like(x[0]), atol=1e-5), k
        assert torch.allclose(x.std(0, unbiased=False), torch.ones_like(x[0]), atol=1e-4), k
        assert torch.equal(v[:, 0], torch.zeros_like(v[:, 0]))  # the shared first snapshot carries nothing
    other = dataclasses.replace(zoo, params={k: v.clone() for k, v in zoo.params.items()})
    other.params["W0"][25:] += 100.0  # test networks change: the statistics do not
    assert torch.equal(other.standardized(other.entry_stats(train)).params["W1"], z.params["W1"])
    with pytest.raises(ValueError, match="stats must name"):
        zoo.standardized({"W0": zoo.entry_stats()["W0"]})
    with pytest.raises(ValueError, match="at least 2"):
        zoo.entry_stats([0])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_per_entry_standardisation_commutes_with_a_hidden_neuron_permutation(seed):
    zoo = _zoo(seed=seed % 97)
    perms = random_hidden_perms(SIZES, torch.Generator().manual_seed(seed))
    train = torch.arange(20)
    a = _permute_all(zoo, perms)
    a = a.standardized(a.entry_stats(train))
    b = _permute_all(zoo.standardized(zoo.entry_stats(train)), perms)
    for k in zoo.params:
        assert torch.allclose(a.params[k], b.params[k], atol=1e-5), k


def test_updates_are_equivariant_and_prepare_inputs_drops_constant_snapshots():
    zoo = _zoo(shared_first=True)
    perms = random_hidden_perms(SIZES, torch.Generator().manual_seed(1))
    for k in zoo.params:
        assert torch.allclose(
            _permute_all(zoo.updates(), perms).params[k], _permute_all(zoo, perms).updates().params[k]
        )
    splits = cmp.make_splits(len(zoo), 0.2, 0.2)
    assert cmp.constant_snapshots(zoo, splits.train) == [0]
    z, rec = cmp.prepare_inputs(zoo, splits, "standardize")
    assert z.T == 2 and rec == {"inputs": "standardize", "dropped_snapshots": [0], "T": 2}
    z2, _ = cmp.prepare_inputs(zoo, splits, "none", drop_constant=False)
    assert z2.T == 3 and torch.equal(z2.params["W0"], zoo.params["W0"])
    with pytest.raises(ValueError, match="inputs must be"):
        cmp.prepare_inputs(zoo, splits, "whiten")


def test_augmentation_permutes_every_snapshot_consistently_and_keeps_each_function():
    zoo = _zoo(n=6, T=4)
    data = WeightData.from_zoo(zoo, "all")
    aug = permute_hidden_per_network(data, torch.Generator().manual_seed(0))
    x = torch.rand(50, 2)
    for t in range(zoo.T):
        p = {f"W{l}": data.weights[l][:, t] for l in range(3)} | {f"b{l}": data.biases[l][:, t] for l in range(3)}
        q = {f"W{l}": aug.weights[l][:, t] for l in range(3)} | {f"b{l}": aug.biases[l][:, t] for l in range(3)}
        assert torch.allclose(mlp_forward(p, x, "sine", omega0=1.0), mlp_forward(q, x, "sine", omega0=1.0), atol=1e-5)
    # one permutation per network for all its snapshots: where row r of W0 went at t=0, it went at every t
    for i in range(6):
        src = data.biases[0][i]  # [T, 5]
        dst = aug.biases[0][i]
        idx = [int((src[0] == dst[0, j]).nonzero()[0]) for j in range(5)]
        assert torch.equal(dst, src[:, idx])
    assert not torch.equal(aug.biases[0], data.biases[0])


def test_the_gate_flags_a_model_that_cannot_learn_and_passes_one_that_does():
    zoo = _zoo(n=40, T=2, signal=True)
    y = zoo.meta["label"]
    res = {}
    for lr in (0.0, 3e-3):
        torch.manual_seed(0)
        m = build_metanet("FlatMLP", zoo, "classification", 2)
        res[lr] = fit(
            m,
            m.prepare(zoo),
            y,
            torch.arange(30),
            torch.arange(30, 35),
            torch.arange(35, 40),
            TrainConfig(steps=60, batch_size=10, lr=lr, patience=1000),
        )
    assert not res[0.0].trained and "plateau" in res[0.0].gates["task"].reason
    assert res[3e-3].trained and res[3e-3].metrics["train"]["accuracy"] > 0.9


def test_run_comparison_searches_one_learning_rate_per_family_and_reports_gates(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=40, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.2, 0.2, labels=y)
    kw = dict(train_cfg=TrainConfig(steps=30, batch_size=10, patience=1000), lr_grid=(1e-4, 3e-3), lr_search_steps=20)
    run = cmp.run_comparison(
        zoo, "classification", y, 2, ["FlatMLP", "FlatMLP (traj)", "StatNN"], splits, [0, 1], RunSettings(**kw)
    )
    assert set(run.lr_search) == {"FlatMLP", "StatNN"}  # FlatMLP (traj) reuses its family's search
    assert set(run.table.loc[run.table.model == "FlatMLP (traj)", "lr"]) == {
        max(run.lr_search["FlatMLP"], key=run.lr_search["FlatMLP"].get)
    }
    assert run.gate("FlatMLP")["trained"] and set(run.gates(["FlatMLP", "StatNN"])) == {"FlatMLP", "StatNN"}
    table = cmp.protocol_table(run)
    assert list(table["model"]) == ["FlatMLP", "FlatMLP (traj)", "StatNN"] and "lr search (val score)" in table
    assert set(run.curves) == {"FlatMLP", "FlatMLP (traj)", "StatNN"} and len(run.curves["StatNN"][1]) >= 1
    again = cmp.run_comparison(zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(**kw))
    assert again.lr_search["StatNN"] == run.lr_search["StatNN"]  # the search is cached
    with pytest.raises(ValueError, match="not in the results"):
        run.gate("DWSNet")
    with pytest.raises(ValueError, match="lr_grid"):
        cmp.run_comparison(zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(lr_grid=(0.0,)))


def test_a_diverging_learning_rate_loses_the_search_instead_of_ending_it(tmp_path, monkeypatch):
    from hgutils.experiments.weightspace_protocol import runner  # the protocol's worker looks fit up here

    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=40, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.2, 0.2, labels=y)
    monkeypatch.setattr(runner, "fit", diverging_above(runner.fit, 1e-3))
    kw = dict(train_cfg=TrainConfig(steps=20, batch_size=10, patience=1000), lr_grid=(1e-4, 3e-3), lr_search_steps=10)
    run = cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP"], splits, [0], RunSettings(**kw))
    assert run.lr_search["FlatMLP"][3e-3] == float("-inf") and set(run.table["lr"]) == {1e-4}


def test_reference_recipes_set_the_baselines_optimiser_and_only_full_mode_their_budget(tmp_path, monkeypatch):
    from hgutils.weightspace.metanets import recipe_for

    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=24, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    shared = TrainConfig(epochs=2, batch_size=6, patience=1000, lr=3e-3)
    runner = _Runner(zoo, "classification", y, 2, splits, shared, None, None, "optimizer")
    runner.step_share = 0.0  # the steps rule off: the batch the split allows
    gmn = recipe_for("GMN", "classification")
    cfg = runner.train_cfg_of("GMN (global mean)", 1, gmn.lr)
    assert (cfg.optimizer, cfg.weight_decay, cfg.amsgrad, cfg.grad_clip) == (
        "adamw",
        gmn.weight_decay,
        True,
        gmn.grad_clip,
    )
    n_train = len(splits.train)  # 12, below GMN's batch of 128: one batch of the whole split
    assert (cfg.batch_size, cfg.epochs, cfg.seed) == (n_train, 2, 1)  # the shared epoch cap
    assert cfg.warmup_steps == 1  # 1,000 warm-up steps in a 2-step run: cut to 5 % of it (at least 1)
    runner.step_share = 1.0  # 2 planned steps at batch 12 < the shared 4 at batch 6: halved to the shared batch
    assert runner.train_cfg_of("GMN (global mean)", 1, gmn.lr).batch_size == 6
    assert runner.train_cfg_of("FlatMLP", 0, 3e-3) == dataclasses.replace(shared, seed=0)  # no recipe: shared
    full = _Runner(zoo, "classification", y, 2, splits, shared, None, None, "full").train_cfg_of("StatNN", 0, 1e-3)
    stat = recipe_for("StatNN", "classification")
    assert (full.batch_size, full.epochs, full.optimizer) == (stat.batch_size, stat.epochs, "adam")  # 8 <= 12
    run = cmp.run_comparison(
        zoo,
        "classification",
        y,
        2,
        ["StatNN", "FlatMLP"],
        splits,
        [0],
        RunSettings(train_cfg=shared, lr_grid=(1e-4, 1e-2), lr_search_steps=2, recipes="optimizer"),
    )
    rows = run.table.set_index("model")
    assert rows.loc["StatNN", "lr"] == stat.lr and "nfn" in rows.loc["StatNN", "recipe"]  # the authors' lr, no search
    assert set(run.lr_search) == {"FlatMLP"} and rows.loc["FlatMLP", "recipe"] == ""
    assert "recipe" in cmp.protocol_table(run)
    with pytest.raises(ValueError, match="recipes must be one of"):
        cmp.run_comparison(
            zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(train_cfg=shared, recipes="all")
        )
    with pytest.raises(ValueError, match="recipes must be one of"):
        cmp.ComparisonSettings(recipes="authors")


def test_recipe_learning_rates_follow_the_batch_size_by_the_named_rule(tmp_path, monkeypatch):
    from hgutils.weightspace.metanets.recipes import recipe_for, scaled_lr

    assert scaled_lr(5e-3, 32, 512, "sqrt") == pytest.approx(1.25e-3)  # 5e-3 * (32 / 512) ** 0.5
    assert scaled_lr(5e-3, 32, 512, "linear") == pytest.approx(3.125e-4)
    assert scaled_lr(1e-3, 32, 8, "sqrt") == pytest.approx(2e-3)  # a larger batch than the recipe's: a larger step
    assert all(scaled_lr(5e-3, 512, 512, r) == 5e-3 for r in ("none", "sqrt", "linear"))
    assert scaled_lr(5e-3, 32, 512) == 5e-3
    with pytest.raises(ValueError, match="rule must be one of"):
        scaled_lr(1e-3, 32, 512, "cubic")
    with pytest.raises(ValueError, match="batch sizes"):
        scaled_lr(1e-3, 0, 512, "sqrt")
    with pytest.raises(ValueError, match="recipe_lr_scaling must be one of"):
        cmp.ComparisonSettings(recipe_lr_scaling="quadratic")
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=24, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    shared = TrainConfig(epochs=1, batch_size=2, patience=1000)
    stat = recipe_for("StatNN", "classification")  # batch 8
    kw = dict(train_cfg=shared, recipes="optimizer")
    small = cmp.Splits(splits.train[:2], splits.val, splits.test)  # 2 training networks: the batch the split allows
    run = cmp.run_comparison(
        zoo, "classification", y, 2, ["StatNN"], small, [0], RunSettings(recipe_lr_scaling="sqrt", **kw)
    )
    row = run.table.iloc[0]
    assert row["lr"] == pytest.approx(stat.lr * 0.5) and "(sqrt rule, batch 8 -> 2)" in row["recipe"]
    assert row["batch_size"] == 2 and row["reference_batch"] == 8
    assert cmp.run_comparison(zoo, "classification", y, 2, ["StatNN"], small, [0], RunSettings(**kw)).table.iloc[0][
        "lr"
    ] == (
        pytest.approx(stat.lr * 0.5)  # sqrt is the default rule
    )
    ok = cmp.run_comparison(
        zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(recipe_step_share=0.0, **kw)
    )
    assert ok.table.iloc[0]["batch_size"] == 8 and ok.table.iloc[0]["lr"] == stat.lr  # the split holds 8: unscaled
    # with every model's ceiling holding the shared steps (12 networks: 2 steps at batch 8, 6 at the shared 2)
    halved = cmp.run_comparison(zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(**kw))
    assert halved.table.iloc[0]["batch_size"] == 2 and halved.table.iloc[0]["lr"] == pytest.approx(stat.lr * 0.5)
    assert "batch 8 -> 2: its ceiling held 2 steps, under 1 x 6" in halved.table.iloc[0]["recipe"]
    full = cmp.run_comparison(
        zoo,
        "classification",
        y,
        2,
        ["StatNN"],
        splits,
        [0],
        RunSettings(recipe_lr_scaling="linear", train_cfg=shared, recipes="full"),
    )
    assert full.table.iloc[0]["lr"] == stat.lr and "scaled" not in full.table.iloc[0]["recipe"]  # its own batch
    with pytest.raises(ValueError, match="recipe_lr_scaling must be one of"):
        cmp.run_comparison(
            zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(recipe_lr_scaling="x", **kw)
        )


def test_forked_workers_reproduce_the_sequential_runs_and_keep_shared_stage_one_together(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=24, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    kw = dict(train_cfg=TrainConfig(epochs=3, batch_size=6, patience=1000), recipes="optimizer")
    names = ["FlatMLP", "StatNN", "NFN_NP"]
    seq = cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0, 1], RunSettings(**kw))
    par = cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0, 1], RunSettings(workers=2, **kw))
    grid = dict(lr_grid=(1e-4, 1e-2), lr_search_steps=4)
    s1 = cmp.run_comparison(zoo, "classification", y, 2, ["NFN_NP"], splits, [0], RunSettings(**kw, **grid))
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path / "other"))  # not the cached search
    s2 = cmp.run_comparison(zoo, "classification", y, 2, ["NFN_NP"], splits, [0], RunSettings(workers=2, **kw, **grid))
    assert s2.lr_search["NFN_NP"] == pytest.approx(s1.lr_search["NFN_NP"], rel=1e-5)
    cols = ["model", "seed", "lr", "trained", "steps", "epochs_run"]
    assert par.table[cols].equals(seq.table[cols])  # same runs, same order
    assert par.table["test_accuracy"].tolist() == pytest.approx(seq.table["test_accuracy"].tolist(), abs=1e-6)
    assert par.table["val_accuracy"].tolist() == pytest.approx(seq.table["val_accuracy"].tolist(), abs=1e-6)
    assert [h[-1]["train_loss"] for h in par.curves["StatNN"].values()] == pytest.approx(
        [h[-1]["train_loss"] for h in seq.curves["StatNN"].values()], rel=1e-4
    )
    assert set(par.curves) == set(seq.curves) and all(list(par.curves[k]) == [0, 1] for k in par.curves)
    assert set(par.models) == set(names) and set(par.outputs) == set(names)
    groups = _stage1_groups(
        [
            ("GTH-GMN (two-stage, frozen)", 0, 1e-3, True),
            ("GTH-GMN (small R-step)", 0, 1e-3, True),
            ("GTH-GMN (two-stage, frozen)", 1, 1e-3, False),
            ("GTH-GMN (Euclidean)", 0, 1e-3, True),
        ]
    )
    assert [[(r[0], r[1]) for r in g] for g in groups] == [
        [("GTH-GMN (two-stage, frozen)", 0), ("GTH-GMN (small R-step)", 0)],
        [("GTH-GMN (two-stage, frozen)", 1)],
        [("GTH-GMN (Euclidean)", 0)],
    ]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0], RunSettings(workers=0, **kw))


def test_epoch_caps_lower_one_models_cap_and_mark_its_runs_capped(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=24, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    cfg = TrainConfig(epochs=4, batch_size=6, patience=1000)
    run = cmp.run_comparison(
        zoo,
        "classification",
        y,
        2,
        ["FlatMLP", "StatNN"],
        splits,
        [0],
        RunSettings(train_cfg=cfg, epoch_caps={"StatNN": 2}),
    )
    rows = run.table.set_index("model")
    stat = rows.loc["StatNN"]  # capped only when its last window still gained more than min_delta (0.005 accuracy)
    assert stat["epochs_run"] == 2 and stat["task_stop"] == "budget"
    assert bool(stat["capped"]) == bool(stat["task_capped"]) == (stat["task_window_gain"] > 0.005)
    assert rows.loc["FlatMLP", "epochs_run"] == 4  # the shared cap (no early stop: patience 1000)
    with pytest.raises(ValueError, match="epoch_caps: unknown model 'GMM'"):
        cmp.run_comparison(
            zoo, "classification", y, 2, ["StatNN"], splits, [0], RunSettings(train_cfg=cfg, epoch_caps={"GMM": 2})
        )
    with pytest.raises(ValueError, match="must be >= 1"):
        cmp.ComparisonSettings(epoch_caps=(("GMN", 0),))
    assert cmp.ComparisonSettings(epoch_caps=(("GMN", 3),)).run_settings().epoch_caps == {"GMN": 3}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"n_seeds": 0}, "n_seeds must be >= 1; got 0"),
        ({"batch_size": 0}, "batch_size must be >= 1; got 0"),
        ({"test_fraction": 1.5}, "test_fraction must be <= 1.0; got 1.5"),
        ({"val_fraction": 0.5, "test_fraction": 0.5}, "val_fraction + test_fraction must be < 1"),
        ({"lr_grid": [1e-3, -1.0]}, "lr_grid must be >= 0.0"),
    ],
)
def test_comparison_settings_reject_out_of_range_values_before_launch(override, message):
    from hgutils.experiments.nb01_inr_classification.preset import INRClassificationConfig
    from hgutils.experiments.nb02_sine_regression import SineRegressionConfig
    from hgutils.experiments.nb03_cifar_generalization import GeneralizationConfig
    from hgutils.runner.params import validate_against_preset

    for preset in (INRClassificationConfig, SineRegressionConfig, GeneralizationConfig):
        for scale in ("smoke", "medium", "paper"):
            preset.from_scale(scale)  # every shipped preset lies inside the bounds
        with pytest.raises(ValueError, match=re.escape(message)) as err:
            validate_against_preset(preset, "smoke", override, "02_sine_regression.ipynb")
        assert str(err.value).startswith("02_sine_regression.ipynb: ") and "\n" not in str(err.value)


def _diverging_in_epoch(epoch: int, model_name: str):
    """``MetaNetTask.step`` that raises the non-finite-loss error from ``epoch`` on, for ``model_name`` only."""
    from hgutils.weightspace.tasks import MetaNetTask

    step = MetaNetTask.step

    def fake(self, b, progress):
        if type(self.model).__name__ == model_name and self.epoch >= epoch:
            raise FloatingPointError("non-finite loss: {'task': nan}")
        return step(self, b, progress)

    return fake


def _cached_setup(tmp_path, monkeypatch, epochs):
    """A 40-network zoo with a learnable label, its split and run settings; the cache under ``tmp_path``."""
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=40, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.2, 0.2, labels=y)
    return zoo, y, splits, dict(train_cfg=TrainConfig(epochs=epochs, batch_size=8, patience=1000, lr=3e-3))


def test_a_final_run_that_diverges_keeps_its_best_epoch_and_the_comparison_goes_on(tmp_path, monkeypatch):
    from hgutils.weightspace.tasks import MetaNetTask

    zoo, y, splits, kw = _cached_setup(tmp_path, monkeypatch, epochs=6)
    monkeypatch.setattr(MetaNetTask, "step", _diverging_in_epoch(2, "FlatMLP"))
    run = cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP", "StatNN"], splits, [0, 1], RunSettings(**kw))
    rows = run.table.set_index("model")
    flat, stat = rows.loc["FlatMLP"], rows.loc["StatNN"]
    assert flat["diverged"].str.startswith("task: epoch 2, step 7: non-finite loss").all()
    assert flat["stopped"].str.contains("task: diverged at epoch 2, step 7; kept the best validated epoch").all()
    assert (flat["task_stop"] == "diverged").all() and not flat["capped"].any()
    assert (flat["epochs_run"] == 2).all() and flat["test_accuracy"].notna().all() and not flat["capped"].any()
    assert (stat["diverged"] == "").all() and (stat["epochs_run"] == 6).all()  # the other model never noticed
    lengths = cmp.run_lengths(run.table)
    assert lengths["diverged"].to_dict() == {"FlatMLP": 2, "StatNN": 0} and lengths["epochs"]["FlatMLP"] == 2

    monkeypatch.setattr(MetaNetTask, "step", _diverging_in_epoch(0, "FlatMLP"))  # nothing validated to keep
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path / "again"))  # not the finished runs of the same settings
    with pytest.raises(FloatingPointError, match=r"FlatMLP, seed 0, lr 0.003: FlatMLP s0 diverged at epoch 0"):
        cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP"], splits, [0], RunSettings(**kw))


def test_a_step_with_non_finite_gradients_is_skipped_and_twenty_in_a_row_end_the_run():
    from hgutils.weightspace.tasks import MAX_SKIPPED_IN_A_ROW, MetaNetTask

    zoo = _zoo(n=20, T=2, signal=True)
    y = zoo.meta["label"]
    torch.manual_seed(0)
    model = build_metanet("FlatMLP", zoo, "classification", 2)
    task = MetaNetTask(model, model.prepare(zoo), y, torch.arange(16), torch.arange(16, 20), TrainConfig(lr=1e-2))
    first = next(p for p in model.parameters() if p.requires_grad)
    hook = first.register_hook(lambda g: g * float("nan"))  # a finite loss, an infinite derivative
    before = {k: v.clone() for k, v in model.state_dict().items()}
    out = task.step(torch.arange(8), 0.0)
    assert out["skipped"] == 1.0 and math.isfinite(out["loss"])
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # no update, nothing poisoned
    hook.remove()
    out = task.step(torch.arange(8), 0.0)
    assert "skipped" not in out and not torch.equal(
        before["head.net.0.weight"], model.state_dict()["head.net.0.weight"]
    )
    first.register_hook(lambda g: g * float("nan"))
    for _ in range(MAX_SKIPPED_IN_A_ROW - 1):
        assert task.step(torch.arange(8), 0.0)["skipped"] == 1.0
    with pytest.raises(FloatingPointError, match=f"non-finite gradients in {MAX_SKIPPED_IN_A_ROW} consecutive steps"):
        task.step(torch.arange(8), 0.0)


def test_a_rerun_reads_every_finished_run_from_the_cache_and_trains_nothing(tmp_path, monkeypatch):
    from hgutils.experiments.weightspace_protocol import runner  # the protocol's worker looks fit up here
    from hgutils.weightspace.tasks import predict_outputs

    zoo, y, splits, kw = _cached_setup(tmp_path, monkeypatch, epochs=3)
    names = ["FlatMLP", "StatNN"]
    first = cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0, 1], RunSettings(**kw))
    assert len(list((tmp_path / "comparison_run").glob("*.pt"))) == 4  # one entry per (model, seed)

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(runner, "fit", no_training)
    again = cmp.run_comparison(zoo, "classification", y, 2, names, splits, [0, 1], RunSettings(**kw))
    assert again.table.equals(first.table) and again.curves == first.curves
    for name in names:
        assert all((a == b).all() for a, b in zip(again.outputs[name], first.outputs[name]))
        data, test = again.data_for(name), again.splits.test
        assert torch.equal(
            predict_outputs(again.models[name], data, test), predict_outputs(first.models[name], data, test)
        )
    with pytest.raises(AssertionError, match="trained again"):  # another seed is a run not yet finished
        cmp.run_comparison(zoo, "classification", y, 2, names, splits, [2], RunSettings(**kw))


def test_a_stopped_comparison_resumes_after_its_last_finished_run(tmp_path, monkeypatch):
    from hgutils.experiments.weightspace_protocol import runner  # the protocol's worker looks fit up here

    zoo, y, splits, kw = _cached_setup(tmp_path, monkeypatch, epochs=3)
    fit, calls = runner.fit, []

    def stops_at_the_third_run(model, *a, **k):
        calls.append(type(model).__name__)
        if len(calls) == 3:
            raise KeyboardInterrupt("stopped")
        return fit(model, *a, **k)

    monkeypatch.setattr(runner, "fit", stops_at_the_third_run)
    with pytest.raises(KeyboardInterrupt):
        cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP", "StatNN"], splits, [0, 1], RunSettings(**kw))
    calls.clear()
    monkeypatch.setattr(runner, "fit", lambda model, *a, **k: calls.append(type(model).__name__) or fit(model, *a, **k))
    run = cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP", "StatNN"], splits, [0, 1], RunSettings(**kw))
    assert calls == ["StatNN", "StatNN"] and len(run.table) == 4  # FlatMLP's two seeds were read back


def test_two_variants_with_one_configuration_train_once(tmp_path, monkeypatch):
    from hgutils.experiments.weightspace_protocol import runner  # the protocol's worker looks fit up here

    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    zoo = _zoo(n=24, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.25, 0.25, labels=y)
    frozen = "GTH-GMN (two-stage, frozen)"
    small = dict(dim=8, heads=2, head_dim=4, gru_hidden=8, aux_edges=16, refine_steps=2)
    chosen = {**small, "protocol": "two_stage", "head_networks_per_param": 10.0}  # the grid chose the frozen reading
    assert cmp.variant_config("GTH-GMN", chosen) == cmp.variant_config(frozen, chosen)
    assert cmp.variant_config("GTH-GMN", small) != cmp.variant_config(frozen, small)
    fit, calls = runner.fit, []
    monkeypatch.setattr(runner, "fit", lambda m, *a, **k: calls.append(1) or fit(m, *a, **k))
    kw = dict(train_cfg=TrainConfig(epochs=2, batch_size=6, patience=1000, lr=3e-3), gth_overrides=chosen)
    run = cmp.run_comparison(zoo, "classification", y, 2, ["GTH-GMN", frozen], splits, [0], RunSettings(**kw))
    assert len(calls) == 1 and run.table["model"].tolist() == ["GTH-GMN", frozen]
    a, b = (run.table.iloc[i].drop(["model", "cpu_seconds"]) for i in (0, 1))
    assert a.equals(b) and run.curves["GTH-GMN"] == run.curves[frozen]
    assert set(run.models) == {"GTH-GMN", frozen} and run.models["GTH-GMN"] is not run.models[frozen]


def test_run_comparison_takes_one_settings_object_and_refuses_anything_else():
    zoo = _zoo(n=20, T=2, signal=True)
    y = zoo.meta["label"]
    splits = cmp.make_splits(len(zoo), 0.2, 0.2, labels=y)
    with pytest.raises(TypeError, match="RunSettings"):
        cmp.run_comparison(zoo, "classification", y, 2, ["FlatMLP"], splits, [0], TrainConfig(steps=2))
    for bad, match in (
        (dict(inputs="zscore"), "inputs"),
        (dict(lr_grid=()), "lr_grid"),
        (dict(workers=0), "workers"),
        (dict(recipes="all"), "recipes"),
    ):
        with pytest.raises(ValueError, match=match):
            RunSettings(**bad)
    preset = cmp.ComparisonSettings(lr_grid=(1e-3,), workers=2)
    rs = preset.run_settings("cpu")
    assert rs.lr_grid == (1e-3,) and rs.workers == 2 and rs.train_cfg.batch_size == preset.batch_size
