"""Notebook 04's driver: presets, dataset selection and protocols (CIFAR-10/100, TEB, GUE, stand-ins),
the summaries over seeds and the claims' verdict logic (on hand-made histories)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from hgutils.experiments import nb04_ilnn_cifar_genomics as ex
from hgutils.ledger import Claims, paper_table
from hgutils.nn.classifier_training import History
from hgutils.verdicts import DID_NOT_TRAIN


def test_presets_follow_the_issue_and_the_paper() -> None:
    smoke, medium, paper = (ex.ILNNConfig.from_scale(s) for s in ("smoke", "medium", "paper"))
    assert smoke.cifar_datasets == ("cifar10",) and paper.cifar_datasets == ("cifar10", "cifar100")
    assert all(len(medium.seeds_for(t)) >= 3 for t in medium.genomics_tasks) and "teb/dna_cmc" in medium.genomics_tasks
    assert medium.epochs_for("synthetic") == medium.synth_epochs > medium.genomics_epochs == medium.epochs_for("teb/x")
    # medium tests the paper's headline genomics claims (reduced protocol) on a hierarchy that does not saturate
    assert {"teb/processed_pseudogenes", "teb/unprocessed_pseudogenes", "synthetic"} <= set(medium.genomics_tasks)
    assert medium.genomics_patience > 0 and medium.synth_shift > 0 and medium.synth_label == "gene"
    assert set(medium.genomics_flavours) == {"euclidean", "ilnn"} and paper.genomics_flavours == ex.FLAVOURS
    assert smoke.genomics_tasks == ("synthetic",)  # smoke needs no data copy
    assert set(ex.GUE_TASKS) <= set(paper.genomics_tasks) and "teb/processed_pseudogenes" in paper.genomics_tasks
    assert paper.depth == 18 and paper.cifar_epochs == 200 and paper.cifar_schedule == "milestones"
    assert (paper.fc_dim, paper.channels, paper.genomics_lr) == (528, 32, 8e-4)
    for cfg in (smoke, medium, paper):  # the defaults follow the reference code / the paper at every scale
        opts = ex.lorentz_options(cfg)
        assert (opts.scale_direction, opts.plfc_init_std, opts.bn_dispersion) == ("multiply", 0.02, "frechet")
    assert ex.lorentz_options(medium, "divide").scale_direction == "divide"
    assert set(ex.GUE_TASKS) <= set(ex.PAPER_GENOMICS_MCC) and set(ex.PAPER_CIFAR) == {"cifar10", "cifar100"}
    for euc, ilnn in ex.PAPER_GENOMICS_MCC.values():
        assert ilnn > euc  # the paper's claim: ILNN above Euclidean on every genomics task quoted
    with pytest.raises(ValueError, match="cifar_ablations"):
        ex.ILNNConfig.from_scale("smoke", cifar_ablations=("sqrt",))
    with pytest.raises(ValueError, match="scale_direction"):
        ex.ILNNConfig.from_scale("smoke", scale_direction="sqrt")
    with pytest.raises(ValueError, match="genomics_flavours"):
        ex.ILNNConfig.from_scale("smoke", genomics_flavours=("ilnn", "hcnn"))
    with pytest.raises(ValueError, match="task=n"):
        ex.ILNNConfig.from_scale("smoke", genomics_seeds=("synthetic:4",))
    with pytest.raises(ValueError, match="synth_rates"):
        ex.ILNNConfig.from_scale("smoke", synth_rates=(0.3, 0.1))
    seeded = ex.ILNNConfig.from_scale("smoke", n_seeds=2, genomics_seeds=("synthetic=4",))
    assert seeded.seeds_for("synthetic", 10) == [10, 11, 12, 13] and seeded.seeds_for("teb/dna_cmc", 10) == [10, 11]


def test_load_cifar_selects_dataset_and_falls_back_to_a_labelled_standin(tmp_path: Path) -> None:
    cfg = ex.ILNNConfig.from_scale("smoke", cifar_datasets=("cifar100",), cifar_train=40, cifar_test=20)
    split = ex.load_cifar(cfg, data_dir=str(tmp_path))  # empty folder: no CIFAR-100 copy
    assert "STAND-IN" in split.source and split.x_train.shape[1:] == (3, 32, 32)
    assert len(split.x_train) == 40 and len(split.x_test) == 20 and split.chance == pytest.approx(0.1)
    # channels standardised with the training subset's statistics
    assert split.x_train.mean((0, 2, 3)).abs().max() < 1e-5
    assert (split.x_train.std((0, 2, 3)) - 1).abs().max() < 1e-4
    with pytest.raises(ValueError, match="cifar10"):
        ex.load_cifar(cfg, data_dir=str(tmp_path), dataset="mnist")


def _write_gue(root: Path, task: str, category: str) -> None:
    folder = root / "GUE" / category / task
    folder.mkdir(parents=True)
    rng = random.Random(0)
    for split, n in (("train", 40), ("dev", 10), ("test", 12)):
        rows = ["sequence,label"]
        for i in range(n):
            rows.append("".join(rng.choice("ACGT") for _ in range(30 + i % 5)) + f",{i % 3}")
        (folder / f"{split}.csv").write_text("\n".join(rows) + "\n")


def test_genomics_task_reads_a_gue_copy_with_its_validation_split(tmp_path: Path) -> None:
    _write_gue(tmp_path, "covid", "virus")
    cfg = ex.ILNNConfig.from_scale("smoke", max_len=32)
    split = ex.genomics_task(cfg, "gue/covid", data_dir=str(tmp_path))
    assert split.protocol.startswith("gue/covid: train -> train, valid -> validation, test -> test")
    assert split.x_train.shape == (40, 5, 32) and split.x_test.shape == (12, 5, 32)  # one-hot ACGTN, truncated
    assert split.x_val.shape == (10, 5, 32) and len(split.y_val) == 10
    assert split.num_classes == 3 and torch.equal(split.y_train.unique(), torch.tensor([0, 1, 2]))
    with pytest.raises(FileNotFoundError, match="prom_core_tata"):  # the notebook skips such a task with a note
        ex.genomics_task(cfg, "gue/prom_core_tata", data_dir=str(tmp_path))


def test_teb_task_without_train_file_runs_the_labelled_reduced_protocol(tmp_path: Path) -> None:
    rng = random.Random(1)
    for split, n in (("valid", 50), ("test", 20)):
        rows = ["seq,label,biotype"] + [
            "".join(rng.choice("ACGT") for _ in range(20)) + f",{i % 2},pseudogene" for i in range(n)
        ]
        (tmp_path / f"{split}_processed_pseudogenes.csv").write_text("\n".join(rows) + "\n")
    cfg = ex.ILNNConfig.from_scale("smoke", genomics_val_fraction=0.2)
    split = ex.genomics_task(cfg, "teb/processed_pseudogenes", data_dir=str(tmp_path))
    assert "REDUCED" in split.protocol
    assert len(split.y_train) == 40 and len(split.y_val) == 10 and len(split.y_test) == 20
    assert split.y_val.bincount().tolist() == [5, 5]  # stratified hold-out


def test_synthetic_task_has_stratified_parts() -> None:
    cfg = ex.ILNNConfig.from_scale("smoke")
    s = ex.genomics_task(cfg, "synthetic")
    n = 4 * cfg.synth_genes_per_family * cfg.synth_variants
    assert len(s.y_train) + len(s.y_val) + len(s.y_test) == n and len(s.y_test) == n // 4
    for part in (s.y_train, s.y_val, s.y_test):  # every family in every part, in equal numbers
        counts = part.bincount(minlength=s.num_classes)
        assert counts.min() == counts.max() > 0


def _history(acc: list[float], mcc: list[float] | None = None, trained: bool = True) -> History:
    final = 0.3 if trained else 2.3
    mcc = mcc or acc
    return History(
        train_loss=[2.0] * len(acc),
        test_acc=acc,
        test_mcc=mcc,
        val_mcc=mcc,
        epoch_time=[1.0] * len(acc),
        best_epoch=len(acc) - 1,
        probe_before={"loss": 2.3, "accuracy": 0.1},
        probe_after={"loss": final, "accuracy": 0.9 if trained else 0.1},
    )


def _runs(values: dict[str, list[float]], untrained: tuple[str, ...] = ()) -> dict[int, dict[str, History]]:
    n = len(next(iter(values.values())))
    return {s: {m: _history([0.1, v[s]], trained=m not in untrained) for m, v in values.items()} for s in range(n)}


def test_summaries_over_seeds() -> None:
    runs = _runs({"euclidean": [0.5, 0.6, 0.7], "ilnn": [0.4, 0.4, 0.4]})
    summ = ex.seed_summary(runs)
    assert summ.loc["euclidean", "mean"] == pytest.approx(60) and summ.loc["euclidean", "sd"] == pytest.approx(10)
    assert summ.loc["ilnn", "n"] == 3
    table = ex.results_table(runs)
    assert table.loc["euclidean", "test acc (%)"] == "60.0 ± 10.0" and "selected epoch" in table


def test_gates_list_every_seed_of_each_model() -> None:
    runs = _runs({"euclidean": [0.5, 0.6], "ilnn": [0.4, 0.4]}, untrained=("ilnn",))
    g = ex.gates(runs, chance=0.1)
    assert g["euclidean"]["trained"] and not g["ilnn"]["trained"]
    chance = 0.1
    for m in ("euclidean", "ilnn"):  # "seed 0: <reason>; seed 1: <reason>", each seed's own gate
        assert g[m]["reason"] == "; ".join(f"seed {s}: {runs[s][m].gate(chance).reason}" for s in runs)


def _verdicts(claims: Claims) -> dict[str, str]:
    return {r.id: r.verdict for r in claims.rows}


def test_cifar_claims_judge_speed_and_leave_the_200_epoch_order_untested() -> None:
    cfg = ex.ILNNConfig.from_scale("medium")
    data = ex.Split(torch.zeros(10, 3, 2, 2), torch.arange(10) % 10, torch.zeros(2), torch.zeros(2), 10, "CIFAR", "p")
    runs = _runs({"euclidean": [0.40, 0.42, 0.41], "hcnn": [0.30, 0.31, 0.29], "ilnn": [0.35, 0.36, 0.34]})
    c = Claims("04_ilnn_cifar_genomics", "medium")
    ex.cifar_claims(c, "cifar10", runs, data, cfg, judge=True)
    v = _verdicts(c)
    assert v["cifar10_order"] == "not tested at this scale"
    assert v["cifar10_speed_ilnn_vs_hcnn"] == "holds" and v["cifar10_speed_ilnn_vs_euclidean"] == "contradicted"
    assert "resolvable" in {r.id: r.verdict_detail for r in c.rows}["cifar10_speed_ilnn_vs_euclidean"]
    c2 = Claims("04_ilnn_cifar_genomics", "medium")  # a model that did not train makes the verdict inconclusive
    ex.cifar_claims(c2, "cifar10", _runs({k: [0.4] * 3 for k in ex.FLAVOURS}, ("hcnn",)), data, cfg, judge=True)
    assert _verdicts(c2)["cifar10_speed_ilnn_vs_hcnn"] == DID_NOT_TRAIN
    assert _verdicts(c2)["cifar10_speed_ilnn_vs_euclidean"] == "inconclusive"  # a zero difference
    c3 = Claims("04_ilnn_cifar_genomics", "smoke")
    ex.cifar_claims(c3, "cifar10", runs, data, cfg, judge=False)
    assert set(_verdicts(c3).values()) == {"not tested at this scale"}


def test_genomics_claims_need_a_resolved_gain_and_name_untested_tasks() -> None:
    cfg = ex.ILNNConfig.from_scale("medium")
    data = ex.Split(torch.zeros(4, 5, 3), torch.tensor([0, 1, 0, 1]), torch.zeros(2), torch.zeros(2), 2, "TEB", "p")
    clear = _runs({"euclidean": [0.60, 0.62, 0.61], "hcnn": [0.6] * 3, "ilnn": [0.70, 0.73, 0.71]})
    noisy = _runs({"euclidean": [0.60, 0.70, 0.50], "hcnn": [0.6] * 3, "ilnn": [0.62, 0.61, 0.63]})
    c = Claims("04_ilnn_cifar_genomics", "medium")
    ex.genomics_claims(
        c, {"teb/dna_cmc": clear, "synthetic": noisy}, {"teb/dna_cmc": data, "synthetic": data}, cfg, True
    )
    v = _verdicts(c)
    assert v["genomics_dna_cmc"] == "holds"
    assert v["genomics_synthetic_hierarchy"] == "inconclusive"  # +1 point but within 2 se: not resolved
    assert v["genomics_covid"] == v["genomics_processed_pseudogenes"] == "not tested at this scale"
    why = {r.id: r.verdict_detail for r in c.rows}
    assert "GUE data is not available here" in why["genomics_covid"] and "GUE/virus/covid" in why["genomics_covid"]
    assert "no copy of the task found" in why["genomics_processed_pseudogenes"]  # in the medium preset
    smoke = Claims("04_ilnn_cifar_genomics", "smoke")
    ex.genomics_claims(smoke, {}, {}, ex.ILNNConfig.from_scale("smoke"), False)
    assert "medium and paper preset" in {r.id: r.verdict_detail for r in smoke.rows}["genomics_processed_pseudogenes"]
    power = {r.id: r.power for r in c.rows}
    assert power["genomics_dna_cmc"] is None  # the paper reports no dna_cmc gain
    assert power["genomics_synthetic_hierarchy"] is None
    ours = {r.id: r.ours for r in c.rows}  # every judged task says whether a 5-point gap is resolvable
    assert ours["genomics_dna_cmc"]["5-point gap"] == "resolvable at 3 seeds"
    assert ours["genomics_synthetic_hierarchy"]["5-point gap"].startswith("not resolvable at 3 seeds; needs")


def test_pseudogene_claims_state_power_and_the_reduced_protocol() -> None:
    cfg = ex.ILNNConfig.from_scale("medium")
    reduced = ex.Split(
        torch.zeros(4, 5, 3), torch.tensor([0, 1, 0, 1]), torch.zeros(2), torch.zeros(2), 2, "TEB", "REDUCED protocol"
    )
    gain = _runs({"euclidean": [0.30, 0.34, 0.28], "ilnn": [0.42, 0.47, 0.40]})
    flat = _runs({"euclidean": [0.30, 0.40, 0.25], "ilnn": [0.31, 0.38, 0.27]})
    for h in flat[1].values():
        h.stopped, h.capped = "budget", True  # seed 1's epoch cap ended it while it was still improving
    c = Claims("04_ilnn_cifar_genomics", "medium")
    ex.genomics_claims(
        c,
        {"teb/processed_pseudogenes": gain, "teb/unprocessed_pseudogenes": flat},
        {"teb/processed_pseudogenes": reduced, "teb/unprocessed_pseudogenes": reduced},
        cfg,
        True,
    )
    rows = {r.id: r for r in c.rows}
    pp, up = rows["genomics_processed_pseudogenes"], rows["genomics_unprocessed_pseudogenes"]
    assert "REDUCED protocol" in pp.statement and pp.verdict == "holds"
    assert pp.power["effect"] == pytest.approx(70.26 - 60.66) and pp.power["resolvable"]
    assert up.verdict == "inconclusive" and up.power["effect"] == pytest.approx(64.90 - 51.94)
    assert "epoch cap" in up.criterion and "euclidean (seed 1)" in up.criterion and "ilnn (seed 1)" in up.criterion
    assert "epoch cap" not in pp.criterion
    assert ex.cap_hits(flat) == ["euclidean (seed 1)", "ilnn (seed 1)"]
    assert ex.results_table(flat, "test_mcc").loc["ilnn", "epochs run (* = cap)"] == "2, 2*, 2"


def test_hierarchy_difficulty_and_paper_table_rows() -> None:
    runs = _runs({"euclidean": [0.70, 0.74, 0.72], "ilnn": [0.80, 0.82, 0.81]})
    d = ex.hierarchy_difficulty(runs)
    assert d["Euclidean MCC"] == pytest.approx(72.0) and d["best model"] == "ilnn" and d["Euclidean in band"]
    assert not d["any run >= ceiling"]
    assert not ex.hierarchy_difficulty(_runs({"euclidean": [0.99] * 3, "ilnn": [1.0] * 3}))["Euclidean in band"]
    cfg = ex.ILNNConfig.from_scale("medium")
    summ = ex.seed_summary(runs, "test_mcc")
    rows = ex.paper_rows(
        {},
        {"teb/processed_pseudogenes": summ, "synthetic": summ},
        {"teb/processed_pseudogenes": "REDUCED protocol: x", "synthetic": "s"},
        cfg,
    )
    table = paper_table(rows, what="quantity", ours="ours (mean ± sd)")
    assert list(table.columns) == ["quantity", "paper", "paper's source", "ours (mean ± sd)", "ours: protocol"]
    table = table.set_index("quantity")
    assert table.loc["teb/processed_pseudogenes MCC (%), ILNN", "ours (mean ± sd)"].endswith("(REDUCED protocol)")
    assert table.loc["teb/processed_pseudogenes MCC (%), ILNN", "paper"] == 70.26
    gue = table.loc["gue/covid MCC (%), ILNN", "ours: protocol"]
    assert gue.startswith("GUE data is not available here") and "GUE/virus/covid/{train,dev,test}.csv" in gue
    assert "synthetic MCC (%), HCNN-Lorentz" not in table.index  # a flavour not trained has no row
    assert "synthetic MCC (%), ILNN" in table.index


def test_bn_comparison_reuses_the_ilnn_run() -> None:
    cfg = ex.ILNNConfig.from_scale(
        "smoke", synth_genes_per_family=1, synth_variants=8, synth_length=24, genomics_epochs=1, channels=4, fc_dim=8
    )
    data = ex.genomics_task(cfg, "synthetic")
    first = ex.run_genomics(cfg, data, 0, flavours=("ilnn",))["ilnn"]
    runs = ex.bn_comparison(cfg, data, 0, gyrolbn=first)
    assert runs["gyrolbn"] is first and set(runs) == {"gyrolbn", "gyrobn", "lbn"}
    assert all(len(h.val_mcc) == 1 for h in runs.values())


def test_claims_at_the_tasks_ceiling_are_not_judged() -> None:
    cfg = ex.ILNNConfig.from_scale("medium")
    data = ex.Split(torch.zeros(4, 5, 3), torch.tensor([0, 1, 0, 1]), torch.zeros(2), torch.zeros(2), 2, "TEB", "p")
    perfect = _runs({"euclidean": [1.0] * 3, "hcnn": [1.0] * 3, "ilnn": [1.0] * 3})
    near = _runs({"euclidean": [1.0, 1.0, 0.98], "hcnn": [1.0] * 3, "ilnn": [1.0] * 3})
    c = Claims("04_ilnn_cifar_genomics", "medium")
    ex.genomics_claims(
        c, {"teb/dna_cmc": near, "synthetic": perfect}, {"teb/dna_cmc": data, "synthetic": data}, cfg, True
    )
    v = _verdicts(c)
    assert v["genomics_synthetic_hierarchy"] == "not tested at this scale"  # a tie at 100 % ranks nothing
    assert "cannot rank" in {r.id: r.criterion for r in c.rows}["genomics_synthetic_hierarchy"]
    assert v["genomics_dna_cmc"] == "inconclusive"  # one run below the ceiling: judged (+0.67 within 2 se)
    bn = Claims("04_ilnn_cifar_genomics", "medium")
    timing = {"GyroLBN": [1.0, 1.1, 0.9], "GyroBN": [2.0, 2.2, 1.9], "LBN": [3.0, 3.1, 2.9]}
    ex.bn_claims(
        bn,
        timing,
        _runs({k: [1.0] * 3 for k in ("gyrolbn", "gyrobn", "lbn")}),
        data,
        True,
    )
    assert _verdicts(bn) == {"gyrolbn_speed": "holds", "gyrolbn_accuracy": "not tested at this scale"}
    skipped = Claims("04_ilnn_cifar_genomics", "medium")  # bn_accuracy=False: no accuracy runs
    ex.bn_claims(skipped, timing, {}, data, True)
    assert _verdicts(skipped)["gyrolbn_accuracy"] == "not tested at this scale"
    assert "bn_accuracy=False" in skipped.rows[-1].verdict_detail
    bn = Claims("04_ilnn_cifar_genomics", "medium")
    runs = _runs({"gyrolbn": [0.9] * 3, "gyrobn": [0.8] * 3, "lbn": [0.85] * 3})
    ex.bn_claims(bn, timing, runs, data, True)
    assert _verdicts(bn)["gyrolbn_accuracy"] == "holds"
    slow = Claims("04_ilnn_cifar_genomics", "medium")
    ex.bn_claims(slow, timing | {"LBN": [0.5, 0.6, 0.55]}, runs, data, True)  # LBN faster: resolved against
    assert _verdicts(slow)["gyrolbn_speed"] == "contradicted"
    assert "repetitions" in slow.rows[0].verdict_detail
    assert list(ex.timing_table(timing)["vs GyroLBN"]) == pytest.approx([1.0, 2.0, 3.0])


def test_design_claims_on_the_defaults() -> None:

    cfg = ex.ILNNConfig.from_scale("smoke", diag_batch=16)
    data = ex.Split(torch.randn(16, 3, 32, 32), torch.arange(16) % 10, torch.zeros(2), torch.zeros(2), 10, "x", "p")
    diag = {"CIFAR ResNet": ex.init_table(cfg, data, 0, {"ilnn": "ilnn", "old": "ilnn:earlier_defaults"})}
    assert list(ex.init_summary(diag["CIFAR ResNet"]).index) == ["ilnn", "old"]
    c = Claims("04_ilnn_cifar_genomics", "smoke")
    ex.design_claims(c, ex.design_rule_checks(0), diag)
    assert set(_verdicts(c).values()) == {"holds"}


def test_one_function_per_claim_id_records_what_the_group_functions_record() -> None:
    cfg = ex.ILNNConfig.from_scale("medium")
    cifar = ex.Split(torch.zeros(10, 3, 2, 2), torch.arange(10) % 10, torch.zeros(2), torch.zeros(2), 10, "CIFAR", "p")
    geno = ex.Split(torch.zeros(4, 5, 3), torch.tensor([0, 1, 0, 1]), torch.zeros(2), torch.zeros(2), 2, "TEB", "p")
    runs = _runs({"euclidean": [0.40, 0.42, 0.41], "hcnn": [0.30, 0.31, 0.29], "ilnn": [0.35, 0.36, 0.34]})
    geno_runs = {"teb/dna_cmc": _runs({"euclidean": [0.60, 0.62, 0.61], "ilnn": [0.70, 0.73, 0.71]})}
    timing = {"GyroLBN": [1.0, 1.1, 0.9], "GyroBN": [2.0, 2.2, 1.9], "LBN": [3.0, 3.1, 2.9]}
    bn_runs = _runs({"gyrolbn": [0.9] * 3, "gyrobn": [0.8] * 3, "lbn": [0.85] * 3})
    group, single = Claims("04_ilnn_cifar_genomics", "medium"), Claims("04_ilnn_cifar_genomics", "medium")
    ex.cifar_claims(group, "cifar10", runs, cifar, cfg, True)
    ex.genomics_claims(group, geno_runs, {"teb/dna_cmc": geno}, cfg, True)
    ex.bn_claims(group, timing, bn_runs, geno, True)
    acc, trained = ex.seed_scores(runs, "test_acc"), ex.gates(runs, cifar.chance)
    ex.claim_cifar_order(single, "cifar10", acc, trained, cifar, cfg, True)
    ex.claim_cifar_speed(single, "cifar10", "hcnn", acc, trained, cifar, cfg, True)
    ex.claim_cifar_speed(single, "cifar10", "euclidean", acc, trained, cifar, cfg, True)
    for task in ex.GENOMICS_CLAIM_TASKS:
        ex.claim_genomics_gain(single, task, geno_runs.get(task), {"teb/dna_cmc": geno}.get(task), cfg, True)
    ex.claim_gyrolbn_speed(single, timing, True)
    ex.claim_gyrolbn_accuracy(single, bn_runs, geno, True)
    assert single.to_dict() == group.to_dict()
    assert [r.id for r in single.rows][3:] == [ex.genomics_claim_id(t) for t in ex.GENOMICS_CLAIM_TASKS] + [
        "gyrolbn_speed",
        "gyrolbn_accuracy",
    ]
    assert ex.genomics_claim_id("synthetic") == "genomics_synthetic_hierarchy"
    with pytest.raises(ValueError, match="without their data split"):
        ex.claim_genomics_gain(single, "synthetic", geno_runs["teb/dna_cmc"], None, cfg, True)
