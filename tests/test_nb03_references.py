"""Notebook 03's in-zoo yardsticks and the claims judged against them (hgutils.experiments.nb03),
on a synthetic results table whose verdicts are known."""

from __future__ import annotations

import pandas as pd
import pytest

from hgutils.experiments import nb03_cifar_generalization as nb03
from hgutils.experiments.weightspace_protocol import ComparisonResult, paper_rows, summarize
from hgutils.ledger import Claims, paper_table
from hgutils.verdicts import CONTRADICTED, HOLDS, NOT_TESTED
from hgutils.weightspace.in_zoo_baselines import TREES_HPARAMS, TREES_STATS, TREES_STATS_TRAJ, ReferenceRun
from hgutils.weightspace.inputs import make_splits
from hgutils.weightspace.kendall_ceiling import NoiseCeiling

TAU = {  # per-seed test tau of every variant; NFNs clearly above the trees (0.60), StatNN below them
    "NFN_HNP": [0.75, 0.76, 0.77],
    "NFN_NP": [0.72, 0.73, 0.74],
    "StatNN": [0.50, 0.51, 0.52],
    "GTH-GMN": [0.40, 0.41, 0.42],
}
OLD_IDS = ["tau-order", "gth-below-nfn", "gap-sizes", "trajectory-helps-baselines", "gth-temporal"]
NEW_IDS = [
    "below-ceiling",
    "nfn-above-trees",
    "statnn-vs-trees",
    "weights-beyond-hyperparameters",
    "position-between-references",
]


def _run() -> ComparisonResult:
    rows = []
    for name in nb03.CIFAR_VARIANTS:
        base = TAU.get(name, [0.55, 0.56, 0.57])
        for seed, t in enumerate(base):
            rows.append({"model": name, "seed": seed, "test_kendall_tau": t, "trained": True, "gate": "ok"})
    return ComparisonResult(pd.DataFrame(rows), make_splits(30, 0.2, 0.3))


def _refs(hp: list[float] | None = (0.45, 0.46, 0.47)) -> nb03.CifarReferences:
    rows = []
    for name, vals in [(TREES_STATS, [0.60, 0.61, 0.62]), (TREES_STATS_TRAJ, [0.63, 0.64, 0.65])] + (
        [(TREES_HPARAMS, list(hp))] if hp is not None else []
    ):
        for seed, v in enumerate(vals):
            rows.append(
                {
                    "model": name,
                    "seed": seed,
                    "test_kendall_tau": v,
                    "trained": True,
                    "gate": "train MSE below constant",
                    "steps": 120,
                    "capped": False,
                    "lr": 0.03,
                    "max_leaf_nodes": 7,
                }
            )
    return nb03.CifarReferences(ReferenceRun(pd.DataFrame(rows)), NoiseCeiling(0.88, 0.01, 0.94, 0.005, 240))


def test_reference_claims_verdicts_on_a_known_table():
    claims = Claims("03_cifar_generalization", "medium")
    nb03.cifar_claims(claims, _run(), "cifar10", judge=True, refs=_refs())
    v = {r.id: r.verdict for r in claims.rows}
    assert list(v) == OLD_IDS + NEW_IDS  # the existing ids kept, the new ones after them
    assert v["below-ceiling"] == HOLDS
    assert v["nfn-above-trees"] == HOLDS
    assert v["statnn-vs-trees"] == CONTRADICTED  # the trees beat StatNN on its own statistics
    assert v["weights-beyond-hyperparameters"] == CONTRADICTED  # GTH-GMN 0.41 below 0.46
    assert v["position-between-references"] == NOT_TESTED  # reported only
    pos = next(r for r in claims.rows if r.id == "position-between-references")
    assert "NFN_HNP 0.63" in pos.ours  # (0.76 - 0.46) / (0.94 - 0.46) = 0.625
    # a model above the ceiling (a leak) contradicts the bound
    high = _run()
    high.table.loc[high.table["model"] == "FlatMLP", "test_kendall_tau"] = [0.97, 0.98, 0.99]
    c2 = Claims("03_cifar_generalization", "medium")
    nb03.cifar_claims(c2, high, "cifar10", judge=True, refs=_refs())
    assert {r.id: r.verdict for r in c2.rows}["below-ceiling"] == CONTRADICTED


def test_reference_claims_untested_without_references_or_at_smoke():
    for kw in ({"refs": None, "judge": True}, {"refs": _refs(), "judge": False}):
        claims = Claims("03_cifar_generalization", "smoke")
        nb03.cifar_claims(claims, _run(), "digits", **kw)
        v = {r.id: r.verdict for r in claims.rows}
        assert list(v) == OLD_IDS + NEW_IDS
        assert all(v[i] == NOT_TESTED for i in NEW_IDS)
    claims = Claims("03_cifar_generalization", "medium")
    nb03.cifar_claims(claims, _run(), "cifar10", judge=True, refs=_refs(hp=None))
    assert {r.id: r.verdict for r in claims.rows}["weights-beyond-hyperparameters"] == NOT_TESTED


def test_reference_and_position_tables():
    refs = _refs()
    rt = nb03.reference_table(refs, n_images=10000)
    assert list(rt["yardstick"]) == [TREES_STATS, TREES_STATS_TRAJ, TREES_HPARAMS, "label-noise ceiling"]
    assert rt["test Kendall τ"].iloc[-1] == "0.940 ± 0.005" and "5000 images each" in rt["reads"].iloc[-1]
    summary = summarize(_run().table, ["test_kendall_tau"])
    pt = nb03.position_table(summary, refs, ["NFN_HNP", "GTH-GMN", "absent"]).set_index("model")
    assert list(pt.index) == ["NFN_HNP", "GTH-GMN"]
    assert pt.loc["NFN_HNP", "τ − trees (same snapshots)"] == pytest.approx(0.15)  # final-checkpoint trees
    assert pt.loc["GTH-GMN", "τ − trees (same snapshots)"] == pytest.approx(0.41 - 0.64)  # trajectory trees
    assert pt.loc["NFN_HNP", "ceiling − τ"] == pytest.approx(0.18)
    rows = paper_rows(nb03.PAPER["cifar_tau"], summary, "test_kendall_tau", sources=nb03.PAPER_ROW_SOURCES)
    table = paper_table(rows + nb03.reference_rows(refs), what="model", ours="ours (same zoo)")
    assert list(table["model"]) == [
        *nb03.PAPER["cifar_tau"],
        TREES_STATS,
        TREES_STATS_TRAJ,
        TREES_HPARAMS,
        "label-noise ceiling",
    ]
    assert (table["paper"].iloc[-4:] == "—").all() and (
        table["paper's source"].iloc[-4:] == "in-zoo yardstick (this zoo)"
    ).all()
    assert (
        table["paper's source"].iloc[0].startswith("NFN paper") and table["paper's source"].iloc[3] == nb03.PAPER_SOURCE
    )
    assert table["ours (same zoo)"].iloc[0] == "0.760 ± 0.008"  # NFN_HNP: 0.75, 0.76, 0.77
    assert table["ours (same zoo)"].iloc[4] == "0.610 ± 0.008"  # the trees on the statistics
    assert table["ours (same zoo)"].iloc[-1] == "0.940 ± 0.005 (jackknife se)"
    assert nb03.reference_rows(None) == []


def test_each_claim_function_adds_its_own_claim_in_ledger_order():
    run, refs = _run(), _refs()
    tau = nb03.tau_by_seed(run)
    assert tau["NFN_HNP"] == TAU["NFN_HNP"] and list(tau) == list(nb03.CIFAR_VARIANTS)
    calls = [
        lambda c: nb03.claim_tau_order(c, run, tau, "cifar10", True),
        lambda c: nb03.claim_gth_below_nfn(c, run, tau, "cifar10", True),
        lambda c: nb03.claim_gap_sizes(c, tau),
        lambda c: nb03.claim_trajectory_helps_baselines(c, run, True),
        lambda c: nb03.claim_gth_temporal(c, run, True),
        lambda c: nb03.claim_below_ceiling(c, run, tau, refs, "cifar10", True),
        lambda c: nb03.claim_nfn_above_trees(c, run, tau, refs, "cifar10", True),
        lambda c: nb03.claim_statnn_vs_trees(c, run, tau, refs, "cifar10", True),
        lambda c: nb03.claim_weights_beyond_hyperparameters(c, run, tau, refs, "cifar10", True),
        lambda c: nb03.claim_position_between_references(c, tau, refs),
    ]
    one_by_one = Claims("03_cifar_generalization", "medium")
    for call, cid in zip(calls, OLD_IDS + NEW_IDS):
        c = Claims("03_cifar_generalization", "medium")
        call(c)
        assert [r.id for r in c.rows] == [cid]
        call(one_by_one)
    together = Claims("03_cifar_generalization", "medium")
    nb03.cifar_claims(together, run, "cifar10", judge=True, refs=refs)
    assert together.to_dict()["claims"] == one_by_one.to_dict()["claims"]
