"""Notebook 09's driver: the preset, the scores, the claim functions on synthetic inputs, and one tiny
experiment end to end."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from hgutils.experiments import nb09_msa_dynamics as ex
from hgutils.ledger import Claims
from hgutils.loop import GateResult
from hgutils.verdicts import CONTRADICTED, DID_NOT_TRAIN, HOLDS, NOT_TESTED


def _meta(n_seeds: int = 3) -> list[dict]:
    return [
        {"arch": a, "trained": t, "seed": s, "group": f"{a} {'trained' if t else 'untrained'}"}
        for a in ex.ARCHS
        for t in (True, False)
        for s in range(n_seeds)
    ]


def _block_similarity(meta, within=0.9, between_arch=0.2, between_training=0.5, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    M = len(meta)
    S = np.empty((M, M))
    for i, a in enumerate(meta):
        for j, b in enumerate(meta):
            if a["arch"] != b["arch"]:
                S[i, j] = between_arch
            elif a["trained"] != b["trained"]:
                S[i, j] = between_training
            else:
                S[i, j] = within
    S += noise * rng.standard_normal((M, M))
    S = 0.5 * (S + S.T)
    np.fill_diagonal(S, 1.0)
    return S


def test_preset_scales_and_errors():
    for scale in ("smoke", "medium", "paper"):
        cfg = ex.CONFIG.from_scale(scale)
        assert cfg.task.n_steps == cfg.task.delay_end + cfg.report_steps
        assert cfg.dsa_rank <= cfg.dsa_delays * cfg.hidden
    assert ex.CONFIG.from_scale("medium").hidden == 64
    with pytest.raises(ValueError, match="robustness"):
        ex.CONFIG.from_scale("smoke", robustness=("nope",))
    with pytest.raises(ValueError):
        ex.CONFIG.from_scale("smoke", n_items=1)
    with pytest.raises(ValueError, match="ssm_r_min"):
        ex.CONFIG.from_scale("smoke", ssm_r_min=0.99, ssm_r_max=0.95)
    with pytest.raises(ValueError, match="dsa_delays"):
        ex.CONFIG.from_scale("smoke", dsa_delays=8, delay_steps=8)


def test_robustness_configs_and_seeds():
    cfg = ex.CONFIG.from_scale("smoke")
    c1, o1 = ex.robustness_config(cfg, "second seed set")
    c2, o2 = ex.robustness_config(cfg, "second hidden size")
    assert (o1, o2) == (1, 0) and c1.hidden == cfg.hidden and c2.hidden == cfg.robust_hidden
    assert c1.robustness == () and c2.robustness == ()
    with pytest.raises(ValueError, match="unknown robustness"):
        ex.robustness_config(cfg, "third")
    seeds = {s for a in ex.ARCHS for o in (0, 1) for s in ex.arch_seeds(a, 5, o)}
    assert len(seeds) == 20  # distinct across architectures and seed sets
    with pytest.raises(ValueError, match="arch"):
        ex.arch_seeds("lstm", 3)


def test_scores_on_a_block_matrix():
    meta = _meta()
    S = _block_similarity(meta)
    sc = ex.score_measures({"MSA": S, "RSA": np.ones_like(S)}, meta)
    assert sc.loc["MSA", "architecture AUC"] == 1.0 and sc.loc["MSA", "training AUC"] == 1.0
    assert sc.loc["RSA", "architecture AUC"] == 0.5 and sc.loc["RSA", "training ratio"] == 1.0
    assert sc.loc["MSA", "architecture ratio"] == pytest.approx(0.8 / 0.1)
    reps = ex.jackknife_scores({"MSA": S}, meta)
    assert reps is not None and len(reps) == 3
    assert ex.jackknife_scores({"MSA": S[:8, :8]}, _meta(2)) is None


def test_drift():
    T = np.zeros((4, 5, 5))
    T[1] = 0.3 - 0.3 * np.eye(5)
    d = ex.drift(T)
    assert d[0] == 0 and d[1] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="T'"):
        ex.drift(np.zeros((4, 5, 4)))
    meta = [{"group": g} for g in ("rnn trained", "rnn trained", "ssm trained", "ssm trained")]
    tab = ex.drift_table(T, meta)
    assert tab.loc["rnn trained", "drift (mean)"] == pytest.approx(0.15)


@dataclasses.dataclass
class _Stack:
    heldout_error: torch.Tensor


def _fake_exp(trained=True, ssm_drift=0.3, rnn_drift=0.05):
    meta = _meta()
    S = _block_similarity(meta, noise=0.01)
    mats = {"MSA": S, "RSA": _block_similarity(meta, between_arch=0.7, between_training=0.9, noise=0.02, seed=1)}
    mats["CKA"] = mats["RSA"]
    mats["DSA"] = _block_similarity(meta, within=0.9, between_arch=0.89, between_training=0.89, noise=0.001)
    rng = np.random.default_rng(0)
    temporal = np.zeros((len(meta), 4, 4))
    for i, m in enumerate(meta):
        level = ssm_drift if m["arch"] == "ssm" else rnn_drift
        temporal[i] = (level + 0.01 * rng.standard_normal()) * (1 - np.eye(4))
    gate = GateResult(trained, "ok" if trained else "held-out report error 40°", 1.0, 0.1)
    gates = {a: {"trained": trained, "reason": gate.reason} for a in ex.ARCHS}
    stacks = {a: _Stack(torch.tensor([3.0, 4.0, 5.0])) for a in ex.ARCHS}
    return {"meta": meta, "mats": mats, "temporal": temporal, "gates": gates, "stacks": stacks}


def _ledger(exp, robust=None):
    cfg = ex.CONFIG.from_scale("smoke")
    claims = Claims("09_msa_dynamics", "smoke")
    scores = ex.score_measures(exp["mats"], exp["meta"])
    jack = ex.jackknife_scores(exp["mats"], exp["meta"])
    ex.claim_both_architectures_learn(claims, exp, cfg)
    ex.claim_msa_separates_architectures(claims, scores, exp)
    ex.claim_msa_separates_training(claims, scores, exp)
    ex.claim_rsa_blind_to_training(claims, scores, exp)
    ex.claim_dsa_rates_alike(claims, scores, exp)
    ex.claim_msa_separates_best(claims, scores, jack, cfg, exp)
    ex.claim_rnn_stable_ssm_changes(claims, exp)
    ex.claim_robust_separation(claims, robust or {})
    return {r.id: r.verdict for r in claims.rows}


def test_claims_hold_on_the_papers_picture():
    v = _ledger(_fake_exp(), robust={"second seed set": _fake_exp()})
    assert v == {
        "both_architectures_learn": HOLDS,
        "msa_separates_architectures": HOLDS,
        "msa_separates_training": HOLDS,
        "rsa_blind_to_training": HOLDS,
        "dsa_rates_alike": HOLDS,
        "msa_separates_best": HOLDS,
        "rnn_stable_ssm_changes": HOLDS,
        "robust_separation": HOLDS,
    }


def test_claims_contradicted_and_untrained():
    v = _ledger(_fake_exp(ssm_drift=0.01, rnn_drift=0.4))
    assert v["rnn_stable_ssm_changes"] == CONTRADICTED
    assert v["robust_separation"] == NOT_TESTED
    v = _ledger(_fake_exp(trained=False))
    assert v["both_architectures_learn"] == CONTRADICTED
    assert v["msa_separates_architectures"] == DID_NOT_TRAIN


def test_paper_rows():
    exp = _fake_exp()
    rows = ex.paper_rows(ex.score_measures(exp["mats"], exp["meta"]), 0.05, 0.3)
    assert len(rows) == 5 and "qualitative" in rows[0].source
    assert "RNN 0.050, SSM 0.300" in rows[-1].ours


def test_tiny_experiment_end_to_end():
    cfg = ex.CONFIG.from_scale(
        "smoke",
        hidden=6,
        delay_steps=4,
        stim_steps=2,
        gap_steps=1,
        report_steps=2,
        n_train=64,
        n_val=16,
        batch_size=32,
        max_epochs=2,
        grid=3,
        time_stride=2,
        dsa_trials=4,
        dsa_delays=2,
        dsa_rank=3,
        dsa_iters=3,
        robustness=(),
    )
    exp = ex.run_experiment(cfg, 0)
    M = 4 * cfg.n_seeds
    assert [m["group"] for m in exp["meta"]][:: cfg.n_seeds] == [
        "rnn trained",
        "rnn untrained",
        "ssm trained",
        "ssm untrained",
    ]
    for name in ex.MEASURES:
        S = exp["mats"][name]
        assert S.shape == (M, M) and np.allclose(np.diag(S), 1.0), name
    assert exp["temporal"].shape == (M, cfg.delay_steps, cfg.delay_steps)
    assert set(exp["gates"]) == set(ex.ARCHS) and "capped" in exp["gates"]["rnn"]
    row = ex.separation_row("protocol", exp)
    assert {"MSA arch. AUC", "DSA training ratio", "RNN drift"} <= set(row)
    ceil = ex.ceilings(exp, cfg)
    assert ceil["rnn"]["MSA"] == pytest.approx(1.0, abs=1e-4) and ceil["ssm"]["CKA"] == pytest.approx(1.0, abs=1e-9)
