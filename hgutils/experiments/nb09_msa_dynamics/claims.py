"""Notebook 09's claims, one function per claim id (each adds its claim to a :class:`~hgutils.ledger.Claims`
ledger from the run's computed inputs, in the notebook's order), and the rows of the paper-vs-ours table
(:func:`paper_rows`).

The criteria were fixed before any result was seen (:data:`CRITERIA`). Absolute criteria (an AUC above
0.9, below 0.75, a ratio below 1.25) read ``holds`` / ``contradicted``; the comparison of MSA with the
baselines is judged with leave-one-seed-out jackknife standard errors and the RNN-vs-SSM drift with the
standard error over seeds (:mod:`hgutils.verdicts`). Every claim that judges trained networks carries
the learnability check of each architecture's networks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hgutils.experiments.nb09_msa_dynamics.preset import ARCH_NAMES, PAPER, DynamicsConfig
from hgutils.experiments.nb09_msa_dynamics.scores import (
    MIN_JACKKNIFE_SEEDS,
    drift,
    group_values,
    msa_beats_baselines,
    score_measures,
)
from hgutils.ledger import Claims, PaperRow
from hgutils.verdicts import compare_seeds

#: the pre-registered thresholds of the absolute criteria
CRITERIA: dict[str, float] = {
    "separates_auc": 0.9,  # a measure separates two groups: split AUC >= this
    "blind_auc": 0.75,  # a measure cannot separate them: split AUC < this
    "alike_ratio": 1.25,  # "rates all models almost alike": between/within dissimilarity ratio < this
}


def _gates(exp: dict[str, Any]) -> dict[str, Any]:
    return {ARCH_NAMES[a]: g for a, g in exp["gates"].items()}


def _separation_checks(scores: pd.DataFrame) -> dict[str, bool]:
    """The four separation criteria of claims 2-5 on one experiment's scores."""
    c = CRITERIA
    return {
        "msa_architecture": bool(scores.loc["MSA", "architecture AUC"] >= c["separates_auc"]),
        "msa_training": bool(scores.loc["MSA", "training AUC"] >= c["separates_auc"]),
        "rsa_blind": bool(scores.loc["RSA", "training AUC"] < c["blind_auc"]),
        "dsa_alike": bool(
            scores.loc["DSA", "architecture ratio"] < c["alike_ratio"]
            and scores.loc["DSA", "training ratio"] < c["alike_ratio"]
        ),
    }


def claim_both_architectures_learn(claims: Claims, exp: dict[str, Any], cfg: DynamicsConfig) -> None:
    """``both_architectures_learn``: every trained RNN and SSM passes the learnability check on the
    held-out angles (its report loss fell and its held-out report error is below ``max_error_deg``)."""
    ok = {ARCH_NAMES[a]: bool(g["trained"]) for a, g in exp["gates"].items()}
    err = {ARCH_NAMES[a]: round(float(st.heldout_error.max()), 2) for a, st in exp["stacks"].items()}
    claims.add(
        "both_architectures_learn",
        "RNNs and SSMs can both be trained to solve the sequential angle-memory task",
        paper=PAPER["learn"]["value"],
        ours={"worst held-out error (deg)": err, "every network passed": ok},
        criterion=f"every trained network of both architectures passes the learnability check: training loss "
        f"≥ 5 % lower and held-out mean circular report error < {cfg.max_error_deg:g}° (chance 90°)",
        holds=all(ok.values()),
        source=PAPER["learn"]["source"],
    )


def claim_msa_separates_architectures(claims: Claims, scores: pd.DataFrame, exp: dict[str, Any]) -> None:
    """``msa_separates_architectures``: MSA's architecture AUC among trained networks ≥ 0.9."""
    auc = scores["architecture AUC"]
    claims.add(
        "msa_separates_architectures",
        "with time as a coordinate of the manifold, MSA clusters the architectures (trained RNNs vs SSMs)",
        paper=PAPER["arch"]["value"],
        ours={k: round(float(v), 3) for k, v in auc.items()},
        criterion=f"MSA's AUC of the RNN/SSM split among trained networks ≥ {CRITERIA['separates_auc']:g}",
        holds=bool(auc["MSA"] >= CRITERIA["separates_auc"]),
        source=PAPER["arch"]["source"],
        trained=_gates(exp),
    )


def claim_msa_separates_training(claims: Claims, scores: pd.DataFrame, exp: dict[str, Any]) -> None:
    """``msa_separates_training``: MSA's trained/untrained AUC (within each architecture) ≥ 0.9."""
    auc = scores["training AUC"]
    claims.add(
        "msa_separates_training",
        "MSA clearly separates trained from untrained networks",
        paper=PAPER["training"]["value"],
        ours={k: round(float(v), 3) for k, v in auc.items()},
        criterion="MSA's AUC of the trained/untrained split (pairs of one architecture) ≥ "
        f"{CRITERIA['separates_auc']:g}",
        holds=bool(auc["MSA"] >= CRITERIA["separates_auc"]),
        source=PAPER["training"]["source"],
        trained=_gates(exp),
    )


def claim_rsa_blind_to_training(claims: Claims, scores: pd.DataFrame, exp: dict[str, Any]) -> None:
    """``rsa_blind_to_training``: RSA's trained/untrained AUC < 0.75."""
    auc = scores["training AUC"]
    claims.add(
        "rsa_blind_to_training",
        "RSA, which sees only extrinsic geometry, cannot separate the training stages",
        paper=PAPER["rsa"]["value"],
        ours={"RSA training AUC": round(float(auc["RSA"]), 3), "CKA training AUC": round(float(auc["CKA"]), 3)},
        criterion=f"RSA's AUC of the trained/untrained split < {CRITERIA['blind_auc']:g}",
        holds=bool(auc["RSA"] < CRITERIA["blind_auc"]),
        source=PAPER["rsa"]["source"],
        trained=_gates(exp),
    )


def claim_dsa_rates_alike(claims: Claims, scores: pd.DataFrame, exp: dict[str, Any]) -> None:
    """``dsa_rates_alike``: DSA's between/within dissimilarity ratio < 1.25 on both splits."""
    r = CRITERIA["alike_ratio"]
    claims.add(
        "dsa_rates_alike",
        "DSA, which compares only dynamics, rates all models almost alike",
        paper=PAPER["dsa"]["value"],
        ours={
            "DSA architecture ratio": round(float(scores.loc["DSA", "architecture ratio"]), 3),
            "DSA training ratio": round(float(scores.loc["DSA", "training ratio"]), 3),
            "DSA architecture AUC": round(float(scores.loc["DSA", "architecture AUC"]), 3),
            "DSA training AUC": round(float(scores.loc["DSA", "training AUC"]), 3),
        },
        criterion=f"DSA's mean between-group / mean within-group dissimilarity < {r:g} for the RNN/SSM split and "
        "for the trained/untrained split",
        holds=_separation_checks(scores)["dsa_alike"],
        source=PAPER["dsa"]["source"],
        trained=_gates(exp),
    )


def claim_msa_separates_best(
    claims: Claims,
    scores: pd.DataFrame,
    replicates: list[pd.DataFrame] | None,
    cfg: DynamicsConfig,
    exp: dict[str, Any],
) -> None:
    """``msa_separates_best`` (ours): MSA's ratio on both splits beats RSA's, CKA's and DSA's by > 2 jackknife se."""
    cols = ("architecture ratio", "training ratio")
    claims.add(
        "msa_separates_best",
        "(ours) MSA separates the architectures and the training stages better than RSA, CKA and DSA "
        "(scale-free ratio)",
        paper="MSA separates where RSA and DSA do not",
        ours={m: {c: round(float(scores.loc[m, c]), 3) for c in cols} for m in scores.index},
        criterion="MSA's between/within dissimilarity ratio − each baseline's (RSA, CKA, DSA) > 2 se (leave-one-seed-"
        "out jackknife), on both splits",
        test=msa_beats_baselines(scores, replicates, cols) if replicates else None,
        reason=None if replicates else f"needs ≥ {MIN_JACKKNIFE_SEEDS} seeds for the jackknife; {cfg.n_seeds} run",
        source=PAPER["rsa"]["source"],
        trained=_gates(exp),
    )


def claim_rnn_stable_ssm_changes(claims: Claims, exp: dict[str, Any]) -> None:
    """``rnn_stable_ssm_changes``: the trained RNNs' drift of the coded geometry over the delay is lower
    than the trained SSMs' by > 2 se over seeds (unpaired)."""
    d = drift(exp["temporal"])
    rnn, ssm = group_values(d, exp["meta"], "rnn trained"), group_values(d, exp["meta"], "ssm trained")
    claims.add(
        "rnn_stable_ssm_changes",
        "over the memory period an RNN's intrinsic geometry stays stable while an SSM's changes markedly",
        paper=PAPER["time"]["value"],
        ours={"RNN drift": round(float(np.mean(rnn)), 4), "SSM drift": round(float(np.mean(ssm)), 4)},
        criterion="drift (mean MSA between the coded geometries of two delay steps) of trained SSMs − trained RNNs "
        "> 2 se over seeds (unpaired)",
        test=compare_seeds(rnn, ssm, paired=False, higher_is_better=False, label="SSM drift − RNN drift", digits=3),
        source=PAPER["time"]["source"],
        trained=_gates(exp),
    )


def claim_robust_separation(claims: Claims, runs: dict[str, dict[str, Any]]) -> None:
    """``robust_separation``: the four separation criteria (claims ``msa_separates_architectures`` to
    ``dsa_rates_alike``) under each robustness run (``runs``: name -> experiment; not tested when empty)."""
    checks = {n: _separation_checks(score_measures(e["mats"], e["meta"])) for n, e in runs.items()}
    gates = {f"{ARCH_NAMES[a]} ({n})": g for n, e in runs.items() for a, g in e["gates"].items()}
    claims.add(
        "robust_separation",
        "robustness: the separation claims hold under a second seed set and a second hidden size",
        paper="(not stated: robustness of Fig. 7c-e)",
        ours=checks or None,
        criterion="MSA architecture AUC ≥ 0.9, MSA training AUC ≥ 0.9, RSA training AUC < 0.75 and DSA ratios < 1.25, "
        "in every robustness run",
        holds=all(all(c.values()) for c in checks.values()) if checks else None,
        reason=None if checks else "no robustness run in this configuration",
        source=PAPER["arch"]["source"],
        trained=gates or None,
    )


def paper_rows(scores: pd.DataFrame, drift_rnn: float, drift_ssm: float) -> list[PaperRow]:
    """The paper's statements beside our measured values (for :func:`hgutils.ledger.paper_table`; the paper
    gives figures, no numbers)."""
    s = scores

    def per(col: str) -> str:
        return ", ".join(f"{m} {s.loc[m, col]:.2f}" for m in s.index)

    rows = [
        ("RNN vs SSM (trained): AUC", PAPER["arch"], per("architecture AUC")),
        ("trained vs untrained: AUC", PAPER["training"], per("training AUC")),
        ("trained vs untrained: ratio between/within", PAPER["rsa"], per("training ratio")),
        ("RNN vs SSM: ratio between/within", PAPER["dsa"], per("architecture ratio")),
        ("drift of the coded geometry over the delay", PAPER["time"], f"RNN {drift_rnn:.3f}, SSM {drift_ssm:.3f}"),
    ]
    return [PaperRow(r, p["value"], p["source"], o) for r, p, o in rows]


__all__ = [
    "CRITERIA",
    "claim_both_architectures_learn",
    "claim_dsa_rates_alike",
    "claim_msa_separates_architectures",
    "claim_msa_separates_best",
    "claim_msa_separates_training",
    "claim_rnn_stable_ssm_changes",
    "claim_robust_separation",
    "claim_rsa_blind_to_training",
    "paper_rows",
]
