"""The "as the authors run it" table: each baseline's recipe beside this run's, deviations detected from
the run's rows (batch, lr rule, epoch caps, warm-up, augmentation), measured effects passed through,
and the warm-up coverage arithmetic."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from hgutils.experiments import nb02_sine_regression as nb02
from hgutils.experiments.weightspace_protocol import ComparisonResult, ComparisonSettings
from hgutils.experiments.weightspace_protocol.recipe_deviations import (
    NOT_MEASURED,
    SETTINGS,
    as_the_authors_run_it,
    deviations,
    warmup_coverage,
)
from hgutils.weightspace.inputs import Splits
from hgutils.weightspace.metanets.recipes import (
    fit_recipe_to_run,
    recipe_batch_and_lr,
    recipe_for,
)

N_TRAIN = 300  # >= GMN's batch 128, < DWSNet's 512


def _row(
    model: str, seed: int, *, steps: int, epochs_run: int, capped: bool, augment: str | None = None, best: int = 0
) -> dict:
    """One results row as run_comparison writes it, for a model trained with its classification recipe."""
    r = recipe_for({"DWSNet": "DWSNet", "GMN": "GMN", "StatNN": "StatNN"}.get(model, model), "classification")
    if r is None:
        return {"model": model, "seed": seed, "lr": 1e-3, "batch_size": 8, "recipe": "", "reference_batch": "",
                "reference_lr": "", "inputs": "standardize", "augment": "off", "epochs_run": epochs_run,
                "steps": steps, "capped": capped, "best_epoch": best}  # fmt: skip
    fitted = fit_recipe_to_run(r, N_TRAIN, 10_000, 8, step_share=0.0, warmup_share=1.0)  # no rule but the split
    batch, lr = fitted.batch_size, fitted.lr
    assert (batch, lr) == recipe_batch_and_lr(r, N_TRAIN, "sqrt")
    mode = "; ".join(["optimizer", *fitted.notes])
    aug = augment if augment is not None else ("off" if r.augment is None else r.augment.describe())
    return {
        "model": model,
        "seed": seed,
        "lr": lr,
        "batch_size": batch,
        "recipe": f"{r.source.split(':')[0]} ({mode})",
        "reference_batch": r.batch_size,
        "reference_lr": r.lr,
        "inputs": r.inputs,
        "augment": aug,
        "epochs_run": epochs_run,
        "steps": steps,
        "capped": capped,
        "best_epoch": best,
    }


def _run(rows: list[dict]) -> ComparisonResult:
    splits = Splits(
        torch.arange(N_TRAIN), torch.arange(N_TRAIN, N_TRAIN + 10), torch.arange(N_TRAIN + 10, N_TRAIN + 20)
    )
    return ComparisonResult(pd.DataFrame(rows), splits)


SETTINGS_15 = ComparisonSettings(epochs=100, patience=15, epoch_caps=(("DWSNet", 15), ("GMN", 15)))


def _table(**measured: str) -> pd.DataFrame:
    rows = [
        _row("DWSNet", 0, steps=15, epochs_run=15, capped=True, best=14),
        _row("GMN", 0, steps=30, epochs_run=10, capped=False),
        _row("StatNN", 0, steps=380, epochs_run=10, capped=False),
        _row("StatNN", 1, steps=418, epochs_run=11, capped=False),
        _row("NFN_NP", 0, steps=100, epochs_run=3, capped=False),
    ]
    return as_the_authors_run_it(_run(rows), SETTINGS_15, "classification", measured or None)


def _cell(t: pd.DataFrame, model: str, setting: str, col: str) -> str:
    return t[(t["model"] == model) & (t["setting"] == setting)][col].item()


def test_every_baseline_with_a_recipe_gets_every_setting_and_nfn_np_none():
    t = _table()
    assert list(dict.fromkeys(t["model"])) == ["DWSNet", "GMN", "StatNN"]  # NFN_NP has no reference recipe
    for model in ("DWSNet", "GMN", "StatNN"):
        assert t[t["model"] == model]["setting"].tolist() == list(SETTINGS)
    assert _cell(t, "GMN", "optimizer", "reference") == "AdamW (AMSGrad), weight decay 0.0005"
    assert _cell(t, "GMN", "optimizer", "deviation") == ""
    assert _cell(t, "GMN", "inputs", "this run") == "per_layer" and _cell(t, "GMN", "inputs", "deviation") == ""


def test_a_run_at_the_reference_batch_has_no_batch_deviation_and_a_smaller_one_names_its_lr_rule():
    t = _table()
    # GMN: batch 128 fits in 300 training INRs -> the reference's batch and lr, nothing to name
    assert _cell(t, "GMN", "batch", "this run") == "128" and _cell(t, "GMN", "batch", "deviation") == ""
    assert _cell(t, "GMN", "learning rate", "deviation") == ""
    # DWSNet: 300 < 512 -> the whole split as one batch, lr 5e-3 * sqrt(300 / 512)
    assert _cell(t, "DWSNet", "batch", "this run") == "300"
    assert "300 < 512" in _cell(t, "DWSNet", "batch", "deviation")
    lr_dev = _cell(t, "DWSNet", "learning rate", "deviation")
    assert "sqrt-scaled" in lr_dev and "(B / 512)^1/2" in lr_dev
    assert _cell(t, "DWSNet", "learning rate", "this run") == f"{5e-3 * math.sqrt(300 / 512):.3g}"
    assert _cell(t, "DWSNet", "learning rate", "measured effect") == NOT_MEASURED


def test_epoch_caps_below_the_references_are_named_with_whether_they_bound():
    t = _table()
    assert "below the reference's 100 epochs" in _cell(t, "DWSNet", "epochs", "deviation")
    eff = _cell(t, "DWSNet", "epochs", "measured effect")  # best_epoch 14 counts from 0: the 15th of 15
    assert eff == "1 of 1 seed(s) reached the ceiling still improving (capped); best validation epoch 15 of 15"
    assert "did not bind" in _cell(t, "GMN", "epochs", "measured effect")
    assert _cell(t, "GMN", "epochs", "this run").startswith("cap 15; ran 10")  # patience 15 >= cap: no early stop
    assert "cap 100, the plateau rule; ran" in _cell(t, "StatNN", "epochs", "this run")
    early = _row("DWSNet", 0, steps=15, epochs_run=15, capped=True, best=3)
    eff = _cell(
        as_the_authors_run_it(_run([early]), SETTINGS_15, "classification"), "DWSNet", "epochs", "measured effect"
    )
    assert eff == "1 of 1 seed(s) reached the ceiling still improving (capped); best validation epoch 4 of 15"
    converged = {**early, "capped": False, "task_stop": "budget"}  # the ceiling reached on a plateau
    eff = _cell(
        as_the_authors_run_it(_run([converged]), SETTINGS_15, "classification"), "DWSNet", "epochs", "measured effect"
    )
    assert eff == "1 of 1 seed(s) reached the ceiling on their plateau (converged, not capped)"
    # StatNN's shared cap of 100 is above NFN's 50 epochs: no epoch deviation
    assert _cell(t, "StatNN", "epochs", "deviation") == "" and "cap 100" in _cell(t, "StatNN", "epochs", "this run")
    assert "ran 10.5 (median)" in _cell(t, "StatNN", "epochs", "this run")


def test_warmup_coverage_arithmetic():
    # GMN's 1,000 warm-up steps at batch 32 on 2,400 training INRs (notebook 01 before the reference batch)
    c = warmup_coverage(1000, 32, 128, 2400, steps_run=1125)
    assert c.steps_per_epoch == 75 and c.epochs == pytest.approx(1000 / 75)
    assert c.networks == 32_000 and c.reference_networks == 128_000 and c.networks / c.reference_networks == 0.25
    assert c.completed == 1.0
    assert warmup_coverage(1000, 128, 128, 2400, steps_run=285).completed == pytest.approx(0.285)
    assert warmup_coverage(10, 128, 128, 300).steps_per_epoch == 3  # the last, partial batch is a step
    assert math.isnan(warmup_coverage(1000, 128, 128, 300).completed)  # steps unknown
    for bad in ((0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 1, 0)):
        with pytest.raises(ValueError, match=">= 1"):
            warmup_coverage(*bad)
    with pytest.raises(ValueError, match="steps_run"):
        warmup_coverage(1, 1, 1, 1, steps_run=-1)


def test_the_table_reports_how_far_a_capped_runs_warmup_gets():
    t = _table()
    # GMN at its reference batch: 1,000 steps = 128,000 networks, 1000 / ceil(300/128) = 333 epochs; 30 steps run
    ours = _cell(t, "GMN", "warm-up", "this run")
    assert "1,000 steps = 128,000 networks (333 epochs)" in ours and "took 30 steps: 3 % of the warm-up" in ours
    dev = _cell(t, "GMN", "warm-up", "deviation")
    assert dev == "the run ended at 3 % of the full learning rate"  # the reference's batch: its networks too
    # a batch of 32 on 300 INRs: a quarter of the reference's networks, 1,000 / ceil(300 / 32) = 100 epochs
    small = as_the_authors_run_it(
        _run([{**_row("GMN", 0, steps=2000, epochs_run=5, capped=False), "batch_size": 32}]),
        SETTINGS_15,
        "classification",
    )
    assert "1,000 steps = 32,000 networks (100 epochs)" in _cell(small, "GMN", "warm-up", "this run")
    assert _cell(small, "GMN", "warm-up", "deviation") == "covers 25 % of the reference's networks"
    assert _cell(small, "GMN", "batch", "deviation") == "smaller than the reference's"  # 300 INRs hold 128
    assert _cell(t, "DWSNet", "warm-up", "this run") == "none" and _cell(t, "DWSNet", "warm-up", "deviation") == ""


def test_augmentation_and_selection_deviations_and_measured_effects_pass_through():
    rows = [_row("DWSNet", 0, steps=15, epochs_run=15, capped=False, augment="off")]
    t = as_the_authors_run_it(
        _run(rows), SETTINGS_15, "classification", {("DWSNet", "augmentation"): "+3.0 points (curve)"}
    )
    assert _cell(t, "DWSNet", "augmentation", "deviation") == "not augmented"
    assert _cell(t, "DWSNet", "augmentation", "measured effect") == "+3.0 points (curve)"
    # DWSNets also evaluates every epoch, and a patience of 15 cannot end a run capped at 15 epochs
    assert _cell(t, "DWSNet", "model selection", "deviation") == ""
    gmn = _table()
    assert _cell(gmn, "GMN", "model selection", "deviation") == "evaluated every epoch"  # Neural Graphs: 1,000 steps
    # StatNN: a patience of 15 within a cap of 100 can stop early; NFN names no evaluation cadence
    stat = _cell(gmn, "StatNN", "model selection", "deviation")
    assert stat == "stops on its plateau (the reference trains all its epochs)"
    assert "stops after 15 epochs without an improvement above min_delta" in _cell(
        gmn, "StatNN", "model selection", "this run"
    )
    assert (
        _cell(gmn, "GMN", "augmentation", "deviation") == ""
        and _cell(gmn, "GMN", "augmentation", "measured effect") == ""
    )
    dev = deviations(gmn)
    assert list(dev.columns) == ["model", "setting", "deviation", "measured effect"]
    assert (dev["deviation"] != "").all() and len(dev) == (gmn["deviation"] != "").sum()


def test_recipes_none_names_the_shared_optimiser():
    rows = [_row("GMN", 0, steps=30, epochs_run=3, capped=False)]
    t = as_the_authors_run_it(_run(rows), ComparisonSettings(recipes="none", epochs=3), "classification")
    assert "recipes='none'" in _cell(t, "GMN", "optimizer", "deviation")
    assert _cell(t, "GMN", "optimizer", "this run") == "Adam, weight decay 0"  # TrainConfig's defaults
    assert _cell(t, "GMN", "gradient clip", "this run") == "5" and "recipes='none'" in _cell(
        t, "GMN", "gradient clip", "deviation"
    )
    assert _cell(t, "GMN", "warm-up", "this run") == "none" and "no warm-up" in _cell(t, "GMN", "warm-up", "deviation")


def test_bad_input_is_refused():
    rows = [_row("GMN", 0, steps=30, epochs_run=3, capped=False)]
    with pytest.raises(ValueError, match="lacks column"):
        as_the_authors_run_it(_run([{k: v for k, v in rows[0].items() if k != "steps"}]), SETTINGS_15, "classification")
    with pytest.raises(ValueError, match="keyed"):
        as_the_authors_run_it(_run(rows), SETTINGS_15, "classification", {("GMN", "batch size"): "x"})
    # a model without a row (NFN_NP has no recipe; DWSNet did not run) is left out, not an error
    t = as_the_authors_run_it(_run(rows), SETTINGS_15, "classification", {("NFN_NP", "augmentation"): "x"})
    assert set(t["model"]) == {"GMN"}


def test_a_reference_batch_that_leaves_too_few_steps_is_halved_and_a_long_warmup_is_cut_to_the_run():
    # notebook 02 at medium: 1,600 training INRs, a 150-epoch ceiling, the shared batch 32 (7,500 planned steps)
    dws = recipe_for("DWSNet", "infonce")  # batch 512: 4 steps per epoch, 600 planned
    f = fit_recipe_to_run(dws, 1600, 150, 32)
    assert f.batch_size == 32 and f.planned_steps == 7500 and f.lr == pytest.approx(5e-3 * (32 / 512) ** 0.5)
    assert f.notes[0] == "batch 512 -> 32: its ceiling held 600 steps, under 1 x 7,500"
    assert fit_recipe_to_run(dws, 1600, 150, 32, step_share=0.5).batch_size == 64  # 3,750 >= 0.5 x 7,500
    assert fit_recipe_to_run(dws, 1600, 150, 32, step_share=0.0).batch_size == 512  # the rule off
    gmn = recipe_for("GMN", "infonce")  # batch 128, 1,000 warm-up steps
    g = fit_recipe_to_run(gmn, 1600, 25, 32, step_share=0.0)  # the old 25-epoch cap: 325 planned steps
    assert (g.batch_size, g.planned_steps, g.warmup_steps) == (128, 325, 16)  # 5 % of 325
    assert "warm-up 1,000 -> 16 steps (5 % of 325 planned)" in g.notes
    long = fit_recipe_to_run(gmn, 1600, 150, 32)
    assert long.warmup_steps == 375 and long.planned_steps == 7500
    assert fit_recipe_to_run(gmn, 55_000, 200, 128).warmup_steps == 1000  # the reference's own run: unchanged
    with pytest.raises(ValueError, match="step_share"):
        fit_recipe_to_run(gmn, 1600, 150, 32, step_share=2.0)
    with pytest.raises(ValueError, match="shared_batch"):
        fit_recipe_to_run(gmn, 1600, 150, 0)


def test_gmn_trains_infonce_without_the_classification_scripts_dropout():
    """Model dropout gives the two InfoNCE views of one network different masks; with Neural Graphs' 0.2 GMN sat at
    the chance value on notebook 02 (docs/claims.md), so its InfoNCE recipe runs without it, at the protocol's warm-up."""
    from hgutils.weightspace.metanets.gmn import GMN

    assert recipe_for("GMN", "classification").dropout == 0.2
    gmn = recipe_for("GMN", "infonce")
    assert gmn.dropout == 0.0 and "without its dropout" in gmn.note
    assert GMN("infonce", 4, (1, 6, 1), 2).dropout == 0.0
    assert GMN("classification", 3, (1, 6, 1), 2).dropout == 0.2
    # notebook 02 at medium: 800 training INRs, a 150-epoch ceiling, the shared batch 32 -> 3,750 planned steps
    settings = nb02.CONFIG.from_scale("medium").run_settings("cpu")
    cfg = settings.train_cfg
    f = fit_recipe_to_run(gmn, 800, cfg.epochs, cfg.batch_size, warmup_share=settings.warmup_share)
    assert (f.batch_size, f.planned_steps, f.warmup_steps) == (32, 3_750, 188)  # the protocol's 5 %
