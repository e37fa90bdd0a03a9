"""GTH-GMN judged at its best (issue 36): the task objective through the encoder, the frozen reading's
sized head, and the protocol x size x lr grid chosen on validation only."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pandas as pd
import pytest
import torch
from _fakes import diverging_above
from test_training_loop import SMALL_GTH, make_zoo

from hgutils.experiments import gth_selection as gs
from hgutils.experiments.weightspace_protocol import ComparisonSettings, RunSettings, build_variant
from hgutils.repro import seed_everything
from hgutils.weightspace.inputs import make_splits
from hgutils.weightspace.metanets.gth_gmn.config import (
    MIN_HEAD_COMPONENTS,
    SIZES,
    GTHGMNConfig,
    frozen_head_components,
)
from hgutils.weightspace.metanets.gth_gmn.model import ProjectedLinearHead
from hgutils.weightspace.tasks import TrainConfig, fit
from hgutils.weightspace.tasks.trainers import _evaluate


# ------------------------------------------------------------------ 1. InfoNCE through the encoder
def _contrastive_ratio(freeze_encoder: bool) -> float:
    """Contrastive loss on the training networks (fixed views) after / before 40 joint steps."""
    from hgutils.weightspace.zoo import sine_zoo

    zoo = sine_zoo(n_nets=32, steps=100, T=3, hidden=(8, 8), n_points=64, cache=False)
    seed_everything(0)
    m = build_variant("GTH-GMN", zoo, "infonce", 8, {"protocol": "joint", **SMALL_GTH})
    data = m.prepare(zoo)
    if freeze_encoder:
        for p in m.encoder.parameters():
            p.requires_grad_(False)
    tr, va = torch.arange(16), torch.arange(16, 24)
    cfg = TrainConfig(steps=40, batch_size=16, lr=1e-2, patience=1000, restore_best=False, eval_batch_size=16)
    before = _evaluate(m, data, None, tr, cfg)["loss"]
    fit(m, data, None, tr, va, None, cfg)
    after = _evaluate(m, data, None, tr, cfg)["loss"]
    assert math.isclose(before, math.log(2 * 16 - 1), rel_tol=0.05)  # chance: 2B - 1 candidates per view
    return after / before


def test_joint_infonce_lowers_the_contrastive_loss_through_the_encoder():
    # measured: ~0.59 trained end to end, ~0.82 with the encoder frozen (only the head learns)
    assert _contrastive_ratio(freeze_encoder=False) < 0.7
    assert _contrastive_ratio(freeze_encoder=True) > 0.7  # the margin an untrained encoder does not reach


def test_infonce_gradient_reaches_the_encoder_under_joint_but_not_the_decoders():
    zoo = make_zoo(8, 2)
    m = build_variant("GTH-GMN", zoo, "infonce", 8, {"protocol": "joint", **SMALL_GTH, "w_link": 0.0, "w_mag": 0.0})
    data = m.prepare(zoo)
    m.loss_terms(data[torch.arange(8)], None, 0.5, torch.Generator().manual_seed(1))["task"].backward()
    enc = [p.grad for p in m.encoder.parameters() if p.grad is not None]
    assert enc and sum(float(g.norm()) for g in enc) > 0
    assert all(p.grad is None for p in m.decoder.parameters())


# ------------------------------------------------------------------ 2. the frozen reading's head
@pytest.mark.parametrize(
    ("n", "k", "expect"),
    [(440, 1, 43), (2400, 10, 23), (480, 10, 16), (100, 1, 16), (30, 1, 16), (15, 10, 14), (5000, 1, 100)],
)
def test_the_frozen_head_follows_the_sizing_rule(n, k, expect):
    D = 100
    p = frozen_head_components(n, D, k, 10.0)
    assert p == expect
    assert 1 <= p <= min(D, n - 1)
    floor = max(MIN_HEAD_COMPONENTS, k)
    if p > floor:  # at least 10 training networks per head parameter, and the largest such p (up to D)
        assert (p + 1) * k * 10 <= n
        assert p == D or (p + 2) * k * 10 > n
    else:  # never fewer than the floor (16, or one per class) unless the embedding or the zoo is smaller
        assert p == min(D, n - 1, floor)


def test_the_sizing_rule_never_shrinks_to_a_handful_of_components():
    """Issue 50: 480 training INRs and 10 classes gave 3 components (a linear map on 3 numbers for 10 classes);
    the floor keeps 16, while notebook 03's medium setting (440 networks, one output) keeps its 43."""
    assert frozen_head_components(480, 2272, 10, 10.0) == MIN_HEAD_COMPONENTS == 16
    assert frozen_head_components(440, 2272, 1, 10.0) == 43
    assert frozen_head_components(50, 2272, 20, 10.0) == 20  # one component per class at least
    assert frozen_head_components(50, 8, 10, 10.0) == 8  # never more than the embedding holds


def test_frozen_head_components_rejects_bad_input():
    with pytest.raises(ValueError, match="n_train"):
        frozen_head_components(1, 10, 1, 10.0)
    with pytest.raises(ValueError, match="networks_per_param"):
        frozen_head_components(100, 10, 1, 0.0)


def test_the_frozen_variant_trains_a_head_of_the_rules_size():
    zoo = make_zoo(40, 2)
    seed_everything(0)
    m = build_variant("GTH-GMN (two-stage, frozen)", zoo, "classification", 2, SMALL_GTH)
    data = m.prepare(zoo)
    tr, va = torch.arange(30), torch.arange(30, 40)
    fit(m, data, zoo.meta["label"], tr, va, None, TrainConfig(steps=3, batch_size=8))
    assert isinstance(m.head, ProjectedLinearHead)
    p = frozen_head_components(30, m.emb_mu.shape[0], 2, 10.0)
    assert m.head.proj.shape == (m.emb_mu.shape[0], p)
    assert sum(x.numel() for x in m.head.parameters()) == (p + 1) * 2
    assert p == MIN_HEAD_COMPONENTS  # 30 training networks: the rule alone gives 0, the floor keeps 16
    assert m(data[torch.arange(4)]).shape == (4, 2)


def test_sizes_are_named_and_today_is_default():
    assert GTHGMNConfig().size_name() == "default"
    assert GTHGMNConfig(**SIZES["large"]).size_name() == "large"
    assert GTHGMNConfig(dim=24).size_name() == "custom"


# ------------------------------------------------------------------ 3. the selection grid
GRID = gs.SelectionGrid(("two_stage", "joint"), ("default",), (1e-3, 1e-2), steps=4)


def _select(labels, root, cache=True, workers=1):
    zoo = make_zoo(40, 2)
    splits = make_splits(40, 0.25, 0.25, labels=zoo.meta["label"])
    cfg = TrainConfig(epochs=2, batch_size=8)
    return gs.select_gth(
        zoo, "classification", labels, 2, splits, GRID, 0, cfg, SMALL_GTH, cache=cache, cache_root=root, workers=workers
    ), splits


def test_the_choice_ignores_the_test_labels(tmp_path):
    labels = make_zoo(40, 2).meta["label"]
    a, splits = _select(labels, tmp_path, cache=False)
    perm = labels.clone()
    te = splits.test
    perm[te] = 1 - labels[te]  # every test label changed
    b, _ = _select(perm, tmp_path, cache=False)
    assert a.overrides() == b.overrides() and a.chosen()["lr"] == b.chosen()["lr"]
    assert a.table["val_score"].tolist() == b.table["val_score"].tolist()


def test_the_table_lists_every_declared_cell_and_picks_by_validation(tmp_path):
    sel, _ = _select(make_zoo(40, 2).meta["label"], tmp_path)
    t = sel.table
    assert list(zip(t["protocol"], t["size"], t["lr"])) == GRID.cells()
    for col in ("val_score", "steps", "epochs_run", "capped", "cpu_seconds", "chosen", "pretrain_steps"):
        assert col in t
    assert int(t["chosen"].sum()) == 1
    best = t["val_score"].max()
    assert t[t["chosen"]].index[0] == t.index[t["val_score"] == best][0]  # ties: the earliest cell
    assert (t.loc[t["protocol"] == "two_stage", "pretrain_steps"] > 0).all()
    assert sel.overrides()["protocol"] == sel.chosen()["protocol"]
    rs = sel.apply(RunSettings(gth_overrides={"dim": 8}))
    assert rs.family_lr == {"GTH-GMN": sel.chosen()["lr"]} and rs.gth_overrides["dim"] == 8
    assert "validation" in sel.caption and "4 optimiser steps" in sel.caption


def test_forked_workers_give_the_table_one_process_gives(tmp_path):
    labels = make_zoo(40, 2).meta["label"]
    torch.set_num_threads(1)  # the workers' thread count, so both sides run the same kernels
    one, _ = _select(labels, tmp_path, cache=False)
    two, _ = _select(labels, tmp_path, cache=False, workers=2)
    cols = [c for c in one.table.columns if c != "cpu_seconds"]
    pd.testing.assert_frame_equal(one.table[cols], two.table[cols])


def _row(protocol, val, trained):
    return {"protocol": protocol, "size": "default", "lr": 1e-3, "val_score": val, "trained": trained}


def test_an_untrained_cell_never_beats_a_trained_one():
    rows = [_row("two_stage", 0.11, True), _row("finetune", 0.40, False), _row("joint", 0.20, True)]
    best, reason = gs.choose(rows)
    assert best == 2 and "2 of 3 cells that trained" in reason
    rows[0]["val_score"] = 0.20  # a tie among the trained: the earliest cell
    assert gs.choose(rows)[0] == 0


def test_no_trained_cell_keeps_the_declared_first_cell():
    rows = [_row("two_stage", 0.11, False), _row("joint", 0.133, False), _row("finetune", float("-inf"), True)]
    best, reason = gs.choose(rows)
    assert best == 0 and "no cell passed the learnability gate" in reason and "two_stage" in reason
    with pytest.raises(ValueError, match="nothing to choose"):
        gs.choose([])


def test_the_choice_reads_the_cached_rows_through_the_rule(tmp_path):
    labels = make_zoo(40, 2).meta["label"]
    sel, _ = _select(labels, tmp_path)
    rows = sel.table.drop(columns=["chosen"]).to_dict("records")
    assert sel.table["chosen"].tolist() == [i == gs.choose(rows)[0] for i in range(len(rows))]
    assert sel.reason and sel.reason in sel.summary()


def test_a_diverging_cell_is_recorded_and_never_chosen(tmp_path, monkeypatch):
    monkeypatch.setattr(gs.training, "fit", diverging_above(gs.training.fit, 5e-3))
    sel, _ = _select(make_zoo(40, 2).meta["label"], tmp_path, cache=False)
    bad = sel.table[sel.table["lr"] > 5e-3]
    assert len(bad) == 2 and (bad["val_score"] == float("-inf")).all() and not bad["trained"].any()
    assert bad["stopped"].str.startswith("diverged (non-finite loss)").all() and not bad["chosen"].any()
    assert sel.metric == "accuracy"


def test_a_cache_hit_returns_the_same_table_without_training(tmp_path, monkeypatch):
    labels = make_zoo(40, 2).meta["label"]
    first, _ = _select(labels, tmp_path)
    calls = []
    monkeypatch.setattr(gs.training, "fit", lambda *a, **k: calls.append(1))
    second, _ = _select(labels, tmp_path)
    assert calls == []
    cols = [c for c in first.table.columns]
    assert first.table[cols].equals(second.table[cols])


def test_a_new_process_hits_the_cached_table(tmp_path):
    """The cache key is stable across processes (another hash seed, another interpreter): a rerun of the
    notebook reads the grid instead of training it again. The child trains nothing on a hit (``fit``
    replaced by a stand-in that fails)."""
    labels = make_zoo(40, 2).meta["label"]
    first, _ = _select(labels, tmp_path)
    child = (
        f"import sys, torch; sys.path.insert(0, {os.path.dirname(__file__)!r}); import test_gth_selection as t; "
        "t.gs.training.fit = lambda *a, **k: sys.exit('trained: the cache missed'); "
        f"sel, _ = t._select(t.make_zoo(40, 2).meta['label'], {str(tmp_path)!r}); "
        "print(sel.table['val_score'].tolist())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str(first.table["val_score"].tolist())


def test_the_grid_refuses_undeclared_cells():
    with pytest.raises(ValueError, match="protocols"):
        gs.SelectionGrid(("two_stage", "bogus"))
    with pytest.raises(ValueError, match="sizes"):
        gs.SelectionGrid(sizes=("huge",))
    with pytest.raises(ValueError, match="learning rates"):
        gs.SelectionGrid(lrs=(0.0,))


def test_a_preset_declares_its_grid():
    s = ComparisonSettings.from_scale("smoke")
    g = gs.grid_of(s)
    assert len(g.cells()) == 2 and g.steps == s.select_steps
    full = gs.grid_of(
        ComparisonSettings.from_scale(
            "smoke", gth_protocols=("two_stage", "finetune", "joint"), gth_sizes=("default", "large"), select_lr_grid=()
        )
    )
    assert len(full.cells()) == 3 * 2 * len(s.lr_grid)  # empty select_lr_grid: the baselines' grid


def test_gth_gmn_infonce_is_the_baselines_loss_on_the_same_view():
    """GTH-GMN's InfoNCE term equals the base class's (every baseline's): the network and one DWSNets view
    of it, drawn from the same generator, through the same head, at the same temperature."""
    from hgutils.weightspace.metanets.base import MetaNet

    zoo = make_zoo(8, 2)
    seed_everything(0)
    m = build_variant("GTH-GMN", zoo, "infonce", 8, {"protocol": "joint", **SMALL_GTH})
    m.eval()
    batch = m.prepare(zoo)[torch.arange(8)]
    own = m.loss_terms(batch, None, 0.5, torch.Generator().manual_seed(4), 0.1, 0.2, 0.5)["task"]
    base = MetaNet.loss_terms(m, batch, None, 0.5, torch.Generator().manual_seed(4), 0.1, 0.2, 0.5)["task"]
    assert torch.allclose(own, base, atol=1e-6)
    other = MetaNet.loss_terms(m, batch, None, 0.5, torch.Generator().manual_seed(5), 0.1, 0.2, 0.5)["task"]
    assert not torch.allclose(own, other)  # the view matters: the equality above is not vacuous


def test_a_cell_that_kept_an_earlier_epoch_after_diverging_is_still_never_chosen(tmp_path, monkeypatch):
    fit = gs.training.fit

    def late_divergence(model, data, target, tr, va, te, cfg, *a, **k):
        fr = fit(model, data, target, tr, va, te, cfg, *a, **k)
        if cfg.lr > 5e-3:  # as the loop leaves a run whose loss went non-finite after a validated epoch
            fr.log.diverged = "epoch 1, step 4: non-finite loss: {'task': nan}"
        return fr

    monkeypatch.setattr(gs.training, "fit", late_divergence)
    sel, _ = _select(make_zoo(40, 2).meta["label"], tmp_path, cache=False)
    bad = sel.table[sel.table["lr"] > 5e-3]
    assert len(bad) == 2 and (bad["val_score"] == float("-inf")).all() and not bad["chosen"].any()
    assert (bad["stopped"] == "diverged (non-finite loss at epoch 1, step 4)").all()


# ------------------------------------------------------------------ 4. the head choice (issue 50)
HEAD_GRID = gs.SelectionGrid(("two_stage", "joint"), ("default",), (1e-3,), steps=4, heads=("sized", "mlp"))


def test_the_head_choice_reaches_the_grid(tmp_path):
    """A grid that declares heads trains every two_stage cell once per head on one stage 1; its table lists the
    head (and what it read) with each cell's validation score; the chosen head reaches the final runs."""
    zoo = make_zoo(40, 2)
    splits = make_splits(40, 0.25, 0.25, labels=zoo.meta["label"])
    sel = gs.select_gth(
        zoo,
        "classification",
        zoo.meta["label"],
        2,
        splits,
        HEAD_GRID,
        0,
        TrainConfig(epochs=2, batch_size=8),
        SMALL_GTH,
        cache_root=tmp_path,
    )
    t = sel.table
    assert list(zip(t["protocol"], t["size"], t["lr"], t["head"])) == HEAD_GRID.choices()
    assert HEAD_GRID.choices() == [
        ("two_stage", "default", 1e-3, "sized"),
        ("two_stage", "default", 1e-3, "mlp"),
        ("joint", "default", 1e-3, gs.END_TO_END),
    ]
    two = t[t["protocol"] == "two_stage"]
    assert two["head_inputs"].str.endswith("principal components").tolist() == [True, False]
    assert two["head_inputs"].iloc[1].endswith("-d embedding")
    # the heads share the cell's stage 1: the same reconstruction run, read twice
    assert two["pretrain_steps"].nunique() == 1 and two["reconstruction_best_epoch"].nunique() == 1
    assert t["val_score"].notna().all() and int(t["chosen"].sum()) == 1
    for i, row in t.iterrows():  # whatever is chosen, its head reaches the final runs' configuration
        sel.table["chosen"] = t.index == i
        over = sel.apply(RunSettings(gth_overrides={"dim": 8})).gth_overrides
        if row["protocol"] == "two_stage":
            assert over["head_networks_per_param"] == (10.0 if row["head"] == "sized" else None)
        else:
            assert "head_networks_per_param" not in over
    assert "head" in sel.summary()


def test_an_mlp_head_is_the_unsized_taskhead_and_a_sized_one_the_projection():
    zoo = make_zoo(40, 2)
    tr, va = torch.arange(30), torch.arange(30, 40)
    for head, kind in (("sized", ProjectedLinearHead), ("mlp", torch.nn.Module)):
        seed_everything(0)
        over = {**SMALL_GTH, **HEAD_GRID.overrides("two_stage", "default", head)}
        m = build_variant("GTH-GMN", zoo, "classification", 2, over)
        fit(m, m.prepare(zoo), zoo.meta["label"], tr, va, None, TrainConfig(steps=3, batch_size=8))
        assert isinstance(m.head, kind) and (head == "sized") == isinstance(m.head, ProjectedLinearHead)
        assert gs.training.head_inputs(m).endswith("principal components" if head == "sized" else "-d embedding")


def test_the_default_grid_keeps_its_key_and_table_without_a_head_column(tmp_path):
    """02's and 03's grids declare no heads: the sized head, no head column, the cache key of before."""
    g = gs.SelectionGrid(("two_stage", "joint"), ("default",), (1e-3,), steps=4)
    assert g.heads == gs.DEFAULT_HEADS == ("sized",) and not g.has_head_choice
    assert g.choices() == [(p, s, lr, h) for (p, s, lr), h in zip(g.cells(), ("sized", gs.END_TO_END))]
    assert g.cache_key() == {k: v for k, v in vars(g).items() if k != "heads"}
    assert "heads" in HEAD_GRID.cache_key()
    sel, _ = _select(make_zoo(40, 2).meta["label"], tmp_path)
    assert "head" not in sel.table and sel.overrides().get("head_networks_per_param", 10.0) == 10.0


def test_bad_heads_are_refused():
    with pytest.raises(ValueError, match="heads"):
        gs.SelectionGrid(heads=())
    with pytest.raises(ValueError, match="heads"):
        gs.SelectionGrid(heads=("sized", "huge"))
    with pytest.raises(ValueError, match="heads"):
        gs.SelectionGrid(heads=("mlp", "mlp"))
    with pytest.raises(ValueError, match="not one of this grid's heads"):
        gs.SelectionGrid(heads=("sized",)).overrides("two_stage", "default", "mlp")
    with pytest.raises(ValueError, match="networks_per_param"):
        gs.SelectionGrid(networks_per_param=0.0)


def test_a_preset_with_gth_heads_declares_the_head_choice():
    from hgutils.experiments import nb01_inr_classification as nb01

    for scale in ("smoke", "medium"):
        cfg = nb01.CONFIG.from_scale(scale)
        assert gs.grid_of(cfg).heads == tuple(cfg.gth_heads) == ("sized", "mlp")
    assert gs.grid_of(ComparisonSettings.from_scale("smoke")).heads == gs.DEFAULT_HEADS
