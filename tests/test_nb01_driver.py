"""Notebook 01's driver: zoos, learning curve, claims."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from test_training_loop import make_zoo

from hgutils.experiments import nb01_inr_classification as ex
from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.weightspace_protocol import ComparisonResult, RunSettings
from hgutils.ledger import Claims
from hgutils.weightspace.inputs import Splits


def test_the_medium_zoo_is_the_papers_protocol_at_cpu_size():
    cfg = ex.CONFIG.from_scale("medium")
    assert cfg.n_images >= 3000 and not cfg.shared_init and cfg.T >= 20


def test_zoo_summary_reports_fit_quality_and_movement():
    zoo = make_zoo(6, 3)
    zoo.meta["psnr"] = torch.full((6,), 30.0)
    t = ex.zoo_summary({"z": zoo})
    assert t.loc[0, "INRs"] == 6 and t.loc[0, "T"] == 3
    assert t.loc[0, "moved t0 -> last"] == pytest.approx(zoo.movement(0, -1)["all"], abs=1e-3)
    assert t.loc[0, "steps"] == ", ".join(str(int(s)) for s in zoo.steps)  # short lists in full, no "..."
    assert ex.zoos._steps_label(range(0, 200, 10)) == "0 to 190 (20 snapshots)"


def test_learning_curve_trains_on_growing_prefixes_of_the_training_split():
    zoo = make_zoo(24, 1)
    y = zoo.meta["label"]
    sp = Splits(torch.arange(16), torch.arange(16, 20), torch.arange(20, 24))
    from hgutils.weightspace.tasks import TrainConfig

    curve = ex.learning_curve(
        zoo, y, sp, (4, 8, 99), ("StatNN",), [0], RunSettings(train_cfg=TrainConfig(epochs=1, batch_size=4))
    )
    assert sorted(curve["train_inrs"].unique()) == [4, 8, 16]  # 99 is capped at the split
    assert set(curve.columns) >= {"test_accuracy", "epochs_run", "capped", "trained"}
    assert "16 INRs" in ex.curve_table(curve).columns
    with pytest.raises(ValueError, match="curve sizes"):
        ex.learning_curve(zoo, y, sp, (1,), ("StatNN",), [0])


def test_curve_splits_append_the_curve_zoos_extra_inrs_to_training_only():
    sp = Splits(torch.tensor([0, 2, 3, 5]), torch.tensor([1, 4]), torch.tensor([6, 7]))
    c = ex.curve_splits(sp, 8, 12)
    assert c.train.tolist() == [0, 2, 3, 5, 8, 9, 10, 11]
    assert torch.equal(c.val, sp.val) and torch.equal(c.test, sp.test)
    assert torch.equal(ex.curve_splits(sp, 8, 8).train, sp.train)  # no curve zoo: the main split
    with pytest.raises(ValueError, match="must hold the main zoo"):
        ex.curve_splits(sp, 8, 6)
    with pytest.raises(ValueError, match="outside the main zoo"):
        ex.curve_splits(sp, 7, 12)


def test_the_curve_zoos_first_inrs_are_the_main_zoo(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    cfg = ex.CONFIG.from_scale("smoke", n_images=12, curve_images=20, inr_steps=6, T=2)
    main, curve = ex.inr_zoos("digits", cfg)
    alone = ex.inr_zoo("digits", cfg)  # the main zoo fitted on its own
    assert len(main) == 12 and len(curve) == 20 and "the first 12 INRs of 20" in main.info["source"]
    assert torch.equal(main.meta["label"], alone.meta["label"])  # the same images, in the same order
    for k, v in alone.params.items():
        torch.testing.assert_close(main.params[k], v, rtol=1e-5, atol=1e-6)  # the same initialisations and fits
        torch.testing.assert_close(curve.params[k][:12], v, rtol=1e-5, atol=1e-6)
    assert (
        ex.inr_zoos("digits", ex.CONFIG.from_scale("smoke", n_images=12, curve_images=0, inr_steps=6, T=2))[1] is None
    )
    med = ex.CONFIG.from_scale("medium")  # its curve reaches 4,000 training INRs
    n_train = len(
        cmp.make_splits(med.n_images, med.val_fraction, med.test_fraction, labels=torch.arange(med.n_images) % 10).train
    )
    assert max(med.curve_sizes) >= 4000 and n_train + med.curve_images - med.n_images >= max(med.curve_sizes)


def _recon_run(auc, sign, maj, r2, base):
    rows = [
        {
            "model": "GTH-GMN",
            "seed": s,
            "trained": True,
            "gate": "ok",
            "capped": False,
            "recon_link_auc": auc[s],
            "recon_sign_acc": sign[s],
            "recon_sign_majority": maj[s],
            "recon_mag_r2": r2[s],
            "recon_mag_r2_block_mean": base[s],
        }
        for s in range(3)
    ]
    e = torch.zeros(0, dtype=torch.long)
    return ComparisonResult(pd.DataFrame(rows), Splits(e, e, e))


def test_reconstruction_is_judged_on_the_strong_reading_against_its_baselines():
    ceilings = {"strong": {"all": 0.95}, "literal": {"all": 0.55, "same_layer": 0.45, "bce": 1.3}}
    good = _recon_run([0.85, 0.86, 0.84], [0.6, 0.61, 0.6], [0.5, 0.5, 0.5], [0.6, 0.62, 0.61], [0.5, 0.51, 0.5])
    c = Claims("01_inr_classification", "medium")
    ex.reconstruction_claims(c, "mnist", good, ceilings, True, {"link_auc": 0.54})
    v = {r.id: r for r in c.rows}
    assert v["reconstruction-learned@mnist"].verdict == "holds"
    assert v["reconstruction-literal@mnist"].verdict == "not tested at this scale"
    assert "0.55" in v["reconstruction-literal@mnist"].verdict_detail
    # magnitude R² only equal to the block mean: not learned
    flat = _recon_run([0.85, 0.86, 0.84], [0.6, 0.61, 0.6], [0.5, 0.5, 0.5], [0.5, 0.52, 0.5], [0.5, 0.51, 0.51])
    c2 = Claims("01_inr_classification", "medium")
    ex.reconstruction_claims(c2, "mnist", flat, ceilings, True)
    assert c2.rows[0].verdict == "inconclusive"


def test_the_variant_lists_are_known_and_ablations_run_with_their_own_seeds():
    for names in (ex.INR_VARIANTS, ex.ABLATION_VARIANTS, ex.SIDE_VARIANTS, ex.SHARED_VARIANTS, ex.CURVE_VARIANTS):
        assert set(names) <= set(cmp.VARIANTS)
    zoo = make_zoo(12, 1)
    sp = Splits(torch.arange(8), torch.arange(8, 10), torch.arange(10, 12))
    from hgutils.weightspace.tasks import TrainConfig

    run = cmp.run_comparison(
        zoo,
        "classification",
        zoo.meta["label"],
        2,
        ["StatNN", "FlatMLP"],
        sp,
        [0, 1, 2],
        RunSettings(train_cfg=TrainConfig(epochs=1, batch_size=4), variant_seeds={"FlatMLP": [0]}),
    )
    assert run.table.groupby("model")["seed"].nunique().to_dict() == {"FlatMLP": 1, "StatNN": 3}


def _acc_run(values: dict[str, list[float]]) -> ComparisonResult:
    rows = [
        {"model": m, "seed": s, "test_accuracy": v, "trained": True, "gate": "ok", "capped": False}
        for m, vals in values.items()
        for s, v in enumerate(vals)
    ]
    e = torch.zeros(0, dtype=torch.long)
    return ComparisonResult(pd.DataFrame(rows), Splits(e, e, e))


def test_accuracy_claims_are_one_function_per_claim_id_in_ledger_order():
    run = _acc_run(
        {
            "GTH-GMN": [0.90, 0.91, 0.92],
            "GTH-GMN (T=1)": [0.80, 0.81, 0.82],  # clearly below: the trajectory helps
            "GTH-GMN (Euclidean)": [0.90, 0.92, 0.91],  # the same: inconclusive
            "NFN_NP": [0.70, 0.71, 0.72],
            "StatNN": [0.75, 0.76, 0.77],  # the best symmetry-respecting baseline by mean
        }
    )
    c = Claims("01_inr_classification", "medium")
    ex.claim_temporal(c, "mnist", run, "medium")
    ex.claim_hyperbolic(c, "mnist", run, "medium")
    ex.claim_gru(c, "mnist", run, "medium")  # "GTH-GMN (no GRU)" not run
    ex.claim_vs_best_baseline(c, "mnist", run, "medium")
    ex.claim_absolute(c, "mnist", run, "medium")
    ex.claim_vs_best_baseline(c, "mnist", None, "medium", zoo="@shared-init")  # that zoo not run
    v = {r.id: r for r in c.rows}
    assert list(v) == [
        "mnist-temporal",
        "mnist-hyperbolic",
        "mnist-gru",
        "mnist-vs-best-baseline",
        "mnist-absolute",
        "mnist@shared-init-vs-best-baseline",
    ]
    assert v["mnist-temporal"].verdict == "holds" and v["mnist-hyperbolic"].verdict == "inconclusive"
    assert v["mnist-gru"].verdict == "not tested at this scale" and v["mnist-gru"].detail == "GTH-GMN (no GRU) not run"
    assert "(best: StatNN)" in v["mnist-vs-best-baseline"].statement and v["mnist-vs-best-baseline"].verdict == "holds"
    assert v["mnist-absolute"].verdict == "not tested at this scale" and v["mnist-absolute"].ours == 91.0
    assert "[shared-init zoo]" in v["mnist@shared-init-vs-best-baseline"].statement
    assert v["mnist@shared-init-vs-best-baseline"].detail == "not run at this scale"
    # the aggregate records the same claims (the paper dry run calls it)
    agg = Claims("01_inr_classification", "medium")
    ex.inr_claims(agg, "mnist", run, "medium")
    ex.inr_claims(agg, "mnist", None, "medium", zoo="@shared-init", ablations=False)
    assert agg.to_dict()["claims"] == c.to_dict()["claims"]
    paper = Claims("01_inr_classification", "paper")
    ex.claim_absolute(paper, "mnist", run, "paper")
    assert paper.rows[0].verdict == "contradicted"  # 91.0 % is 4.6 points from the paper's 95.6 %


def test_the_literal_link_aucs_come_from_the_literal_links_run():
    run = _recon_run([0.8] * 3, [0.6] * 3, [0.5] * 3, [0.6] * 3, [0.5] * 3)
    assert ex.literal_link_aucs(_acc_run({"GTH-GMN": [0.9]})) is None  # no reconstruction metrics
    lit = run.table.iloc[:1].assign(model="GTH-GMN (literal links)", recon_link_auc=0.54, recon_link_auc_weak=0.5)
    both = ComparisonResult(pd.concat([run.table, lit], ignore_index=True), run.splits)
    assert ex.literal_link_aucs(both) == {"link_auc": 0.54, "link_auc_weak": 0.5}
