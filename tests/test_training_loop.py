"""The shared training loop: early stopping, seeds, checkpoint/resume, two-stage optimisation, metrics."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from scipy.stats import kendalltau

from hgutils.weightspace.graphs import TemporalParamGraph
from hgutils.weightspace.metanets import GTHGMN, MODELS, GTHGMNConfig, StatNN, WeightData, build_metanet
from hgutils.weightspace.tasks import (
    TrainConfig,
    compute_metrics,
    fit,
    kendall_tau,
    linear_probe,
    train_on_zoo,
)
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (2, 4, 4, 1)
SMALL_GTH = dict(dim=8, heads=2, head_dim=4, gru_hidden=8, aux_edges=16)


def make_zoo(n=12, T=3, seed=0, dtype=torch.float32) -> Zoo:
    g = torch.Generator().manual_seed(seed)
    params = {}
    for i in range(len(SIZES) - 1):
        params[f"W{i}"] = torch.randn(n, T, SIZES[i + 1], SIZES[i], generator=g, dtype=dtype)
        params[f"b{i}"] = torch.randn(n, T, SIZES[i + 1], generator=g, dtype=dtype)
    meta = {
        "label": torch.arange(n) % 2,
        "target": torch.randn(n, 2, generator=g),
        "test_acc": torch.rand(n, generator=g),
    }
    return Zoo(MLPSpec(SIZES, "sine", 30.0), params, torch.arange(T) * 10, meta)


def test_every_model_builds_prepares_and_runs_on_a_zoo():
    zoo = make_zoo()
    for name in MODELS:
        kw = SMALL_GTH if name == "GTH-GMN" else {}
        for snaps in ("last", "all"):
            m = build_metanet(name, zoo, "classification", 2, snapshots=snaps, **kw)
            data = m.prepare(zoo)
            assert len(data) == len(zoo)
            out = m(data[torch.arange(3)])
            assert out.shape == (3, 2) and torch.isfinite(out).all(), name
    gth = build_metanet("GTH-GMN", zoo, "classification", 2, **SMALL_GTH)
    assert gth.prepare(zoo).T == 3  # GTH-GMN reads the whole trajectory by default
    assert build_metanet("StatNN", zoo, "classification", 2).prepare(zoo).T == 1  # baselines: last snapshot


def test_invariance_on_real_parameter_graphs_and_weight_tuples():
    zoo = make_zoo(4, 3, dtype=torch.float64)
    gen = torch.Generator().manual_seed(3)
    perms = [torch.randperm(n, generator=gen) for n in SIZES[1:-1]]
    params = dict(zoo.params)
    for i, p in enumerate(perms):
        params[f"W{i}"], params[f"b{i}"] = params[f"W{i}"][:, :, p], params[f"b{i}"][:, :, p]
        params[f"W{i + 1}"] = params[f"W{i + 1}"][:, :, :, p]
    zp = dataclasses.replace(zoo, params=params)
    torch.manual_seed(0)
    m = build_metanet("GTH-GMN", zoo, "regression", 2, **SMALL_GTH).double().eval()
    g, gp = TemporalParamGraph.from_zoo(zoo), TemporalParamGraph.from_zoo(zp)
    assert torch.allclose(m.embed(g), m.embed(gp), atol=1e-5)
    assert not torch.allclose(g.edge_weight, gp.edge_weight)
    for name in ("GMN", "NFN_HNP", "DWSNet", "StatNN"):  # the baselines on the real containers too
        b = build_metanet(name, zoo, "regression", 2, snapshots="all").double().eval()
        assert torch.allclose(b(b.prepare(zoo)), b(b.prepare(zp)), atol=1e-5), name


def test_early_stopping_and_best_state_restored():
    zoo = make_zoo(16)
    torch.manual_seed(0)
    m = build_metanet("StatNN", zoo, "classification", 2)
    data = m.prepare(zoo)
    res = fit(
        m,
        data,
        zoo.meta["label"],
        torch.arange(12),
        torch.arange(12, 16),
        cfg=TrainConfig(epochs=50, lr=0.0, patience=3),
    )
    assert len(res.history) == 4  # epoch 0 is the best, three more without improvement
    res2 = fit(
        m,
        data,
        zoo.meta["label"],
        torch.arange(12),
        torch.arange(12, 16),
        cfg=TrainConfig(epochs=5, lr=1e-2, patience=100),
    )
    best = res2.history[res2.best_epoch]["val_accuracy"]
    assert res2.metrics["val"]["accuracy"] == pytest.approx(best)


class _Interrupt(Exception):
    pass


class _Flaky(StatNN):
    """StatNN that raises once, in the middle of training, to simulate a killed run."""

    fail_at: int | None = None
    calls = 0

    def set_progress(self, progress: float) -> None:
        type(self).calls += 1
        if self.fail_at is not None and type(self).calls == self.fail_at:
            raise _Interrupt


def test_checkpoint_resume_gives_the_uninterrupted_run(tmp_path):
    zoo = make_zoo(16)
    data = WeightData.from_zoo(zoo)
    y = zoo.meta["label"]

    def run(path, fail_at):
        torch.manual_seed(1)
        m = _Flaky("classification", 2, SIZES, 1)
        _Flaky.calls, m.fail_at = 0, fail_at
        cfg = TrainConfig(epochs=4, batch_size=4, patience=100, checkpoint_path=str(path))
        return m, fit(m, data, y, torch.arange(12), torch.arange(12, 16), cfg=cfg)

    m_ref, ref = run(tmp_path / "a.ckpt", None)
    with pytest.raises(_Interrupt):
        run(tmp_path / "b.ckpt", 7)  # dies in epoch 2 (3 steps per epoch)
    m_res, res = run(tmp_path / "b.ckpt", None)
    assert res.resumed_from == 2
    assert [r["train_loss"] for r in res.history] == pytest.approx([r["train_loss"] for r in ref.history])
    for a, b in zip(m_ref.state_dict().values(), m_res.state_dict().values()):
        assert torch.equal(a, b)
    # a corrupt checkpoint is detected and the run starts fresh
    (tmp_path / "b.ckpt").write_bytes(b"garbage")
    _, fresh = run(tmp_path / "b.ckpt", None)
    assert fresh.resumed_from is None and len(fresh.history) == 4


def test_two_stage_optimisation_moves_ball_coordinates_only_in_stage_two():
    """The joint protocol's split: Euclidean Adam first, Riemannian Adam on the base coordinates later."""
    zoo = make_zoo(8, 2)
    torch.manual_seed(2)
    m = build_metanet(
        "GTH-GMN", zoo, "classification", 2, stage1_frac=0.5, riemannian_lr=0.05, protocol="joint", **SMALL_GTH
    )

    data = m.prepare(zoo)
    a0 = m.anchors.detach().clone()
    fit(
        m,
        data,
        zoo.meta["label"],
        torch.arange(8),
        torch.arange(8),
        cfg=TrainConfig(epochs=2, batch_size=8, max_steps=1, patience=100),
    )
    assert torch.equal(m.anchors.detach(), a0)  # one step in stage 1: coordinates untouched
    feat0 = m.encoder.feat_in.weight.detach().clone()
    fit(
        m,
        data,
        zoo.meta["label"],
        torch.arange(8),
        torch.arange(8),
        cfg=TrainConfig(epochs=2, batch_size=8, patience=100, restore_best=False),
    )
    assert not torch.equal(m.anchors.detach(), a0)  # stage 2 (epoch 1) moved them
    assert not torch.equal(m.encoder.feat_in.weight.detach(), feat0)
    assert float(m.anchors.detach().norm(dim=-1).max()) < 1.0


def test_metrics_match_scipy_and_definitions():
    p, t = torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0.0, 0.5, 0.2, 0.9])
    assert kendall_tau(p, t) == pytest.approx(kendalltau(p.numpy(), t.numpy()).statistic)
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [3.0, 0.0]])
    assert compute_metrics("classification", logits, torch.tensor([0, 1, 1]))["accuracy"] == pytest.approx(2 / 3)
    m = compute_metrics("accuracy", torch.logit(p), t)
    assert m["mse"] == pytest.approx(float(((p - t) ** 2).mean()), rel=1e-5)
    assert m["kendall_tau"] == pytest.approx(kendall_tau(p, t))
    X = torch.randn(50, 3)
    y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 3.0
    assert linear_probe(X[:40], y[:40], X[40:], y[40:], ridge=1e-8)["mse"] < 1e-8
    exact = linear_probe(X[:40], y[:40], X[40:], y[40:])  # least squares, as DWSNets' LinearRegression
    assert exact["mse"] < 1e-10
    assert exact["mean_mse"] == pytest.approx(float(((y[:40].mean() - y[40:]) ** 2).mean()), rel=1e-6)
    wide = torch.cat([X, 1e-3 * torch.randn(50, 7)], 1)  # the signal lives in the leading components
    assert linear_probe(wide[:40], y[:40], wide[40:], y[40:], components=3)["mse"] < 1e-3


def test_tasks_regression_accuracy_and_infonce_run_through_fit():
    zoo = make_zoo(16)
    split = (torch.arange(10), torch.arange(10, 13), torch.arange(13, 16))
    for task, key, metric in (("regression", "target", "mse"), ("accuracy", "test_acc", "kendall_tau")):
        torch.manual_seed(0)
        m = build_metanet("NFN_HNP", zoo, task, 2)
        res = train_on_zoo(m, zoo, key, *split, cfg=TrainConfig(epochs=2, batch_size=5))
        assert metric in res.metrics["test"]
    torch.manual_seed(0)
    m = build_metanet("GTH-GMN", zoo, "infonce", 4, **SMALL_GTH)
    res = train_on_zoo(m, zoo, "target", *split, cfg=TrainConfig(epochs=2, batch_size=5))
    assert res.metrics["test"]["mse"] >= 0 and res.history[0]["val_loss"] > 0
    assert "train_link" in res.history[0]  # GTH-GMN's auxiliary terms are trained in encoder mode too


def test_same_seed_same_run():
    zoo = make_zoo(12)

    def once():
        torch.manual_seed(5)
        m = build_metanet("FlatMLP+aug", zoo, "classification", 2)
        return train_on_zoo(
            m, zoo, "label", torch.arange(8), torch.arange(8, 12), cfg=TrainConfig(epochs=3, batch_size=4, seed=3)
        ).history

    assert once() == once()


def test_bad_input_errors():
    zoo = make_zoo(8)
    m = build_metanet("StatNN", zoo, "classification", 2)
    data = m.prepare(zoo)
    y = zoo.meta["label"]
    with pytest.raises(ValueError, match="empty"):
        fit(m, data, y, torch.arange(0), torch.arange(4))
    with pytest.raises(ValueError, match=r"\[0, 8\)"):
        fit(m, data, y, torch.arange(6), torch.arange(6, 9))
    with pytest.raises(ValueError, match="one entry per network"):
        fit(m, data, y[:5], torch.arange(4), torch.arange(4, 8))
    with pytest.raises(ValueError, match="meta has no"):
        train_on_zoo(m, zoo, "psnr", torch.arange(4), torch.arange(4, 8))
    other = Zoo(
        MLPSpec((2, 3, 1), "sine", 30.0),
        {
            "W0": torch.zeros(8, 3, 3, 2),
            "b0": torch.zeros(8, 3, 3),
            "W1": torch.zeros(8, 3, 1, 3),
            "b1": torch.zeros(8, 3, 1),
        },
        torch.arange(3),
    )
    with pytest.raises(ValueError, match="mismatch"):
        m.prepare(other)
    gth = GTHGMN(task="classification", out_dim=2, n_node_layers=4, node_feat_dim=2, cfg=GTHGMNConfig(**SMALL_GTH))
    with pytest.raises(ValueError, match="mismatch|node_feat"):
        gth.prepare(other)


def test_capped_is_recorded_when_the_budget_ends_the_run_and_not_when_early_stopping_does():
    zoo = make_zoo(12, 1)
    y = zoo.meta["label"]
    m = build_metanet("StatNN", zoo, "classification", 2)
    data = m.prepare(zoo)
    res = fit(m, data, y, torch.arange(8), torch.arange(8, 12), cfg=TrainConfig(epochs=2, batch_size=4, patience=100))
    lg = res.stages["task"]
    assert lg.stopped == "budget" and res.capped == (lg.window_gain > lg.min_delta) == lg.capped
    assert res.stopped["task"].startswith("ceiling reached") and res.stage_columns()["task_stop"] == "budget"
    m = build_metanet("StatNN", zoo, "classification", 2)
    res = fit(
        m, data, y, torch.arange(8), torch.arange(8, 12), cfg=TrainConfig(epochs=500, batch_size=4, patience=1, lr=1e-6)
    )
    assert not res.capped and res.stopped["task"].startswith("plateau") and res.stages["task"].stopped == "plateau"


def test_adamw_and_warmup_follow_the_settings():
    lin = torch.nn.Linear(3, 1)
    cfg = TrainConfig(optimizer="adamw", weight_decay=0.1, amsgrad=True, warmup_steps=4, lr=1.0)
    opt = cfg.make_optimizer(list(lin.parameters()))
    assert isinstance(opt, torch.optim.AdamW) and opt.defaults["amsgrad"] and opt.defaults["weight_decay"] == 0.1
    sched = cfg.make_warmup(opt)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0, 1.0])
    assert TrainConfig().make_warmup(opt) is None
    with pytest.raises(ValueError, match="optimizer"):
        TrainConfig(optimizer="sgd")
