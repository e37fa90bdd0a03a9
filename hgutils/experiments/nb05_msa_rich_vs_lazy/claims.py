"""Notebook 05's claims, one function per claim id (each adds its claim to a :class:`~hgutils.ledger.Claims`
ledger from the run's computed inputs, in the notebook's order), and the rows of the paper-vs-ours table
(:func:`paper_rows`).

Absolute criteria read ``holds`` / ``contradicted``; the two comparisons of MSA with the baselines go
through :mod:`hgutils.verdicts` with leave-one-seed-out jackknife standard errors
(:func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.scores.msa_beats_baselines`). Claims that judge trained
networks carry the learnability check of every cell they use
(:func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.runs.group_gates`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from hgutils.experiments.nb05_msa_rich_vs_lazy.preset import PAPER, RichLazyConfig
from hgutils.experiments.nb05_msa_rich_vs_lazy.runs import group_gates
from hgutils.experiments.nb05_msa_rich_vs_lazy.scores import (
    MIN_JACKKNIFE_SEEDS,
    msa_beats_baselines,
    regime_checks,
    regime_criterion,
    regime_table,
    score_measures,
)
from hgutils.ledger import Claims, PaperRow
from hgutils.verdicts import Absolute, all_of

#: the regime table's columns recorded by ``regimes_verified``
REGIME_COLUMNS = [
    "K",
    "regime",
    "weight change",
    "NTK align. init↔trained",
    "label align. init",
    "label align. trained",
]


def _no_jackknife(replicates: list[pd.DataFrame] | None, cfg: RichLazyConfig) -> str | None:
    """Why a jackknife claim is not tested (``None`` when it is)."""
    return None if replicates else f"needs ≥ {MIN_JACKKNIFE_SEEDS} seeds for the jackknife; {cfg.n_seeds} run"


def claim_swiss_roll_msa_zero(claims: Claims, swiss: dict[str, float]) -> None:
    """``swiss_roll_msa_zero``: the plane and its swiss roll (``swiss``: the sanity check's measures) have
    the same intrinsic geometry (d_MSA < 1e-6) while Procrustes and RSA call them dissimilar (< 0.8)."""
    s_msa, s_pro, s_rsa = swiss["MSA distance"], swiss["Procrustes similarity"], swiss["RSA similarity"]
    claims.add(
        "swiss_roll_msa_zero",
        "plane vs swiss roll: MSA ≈ 0 while Procrustes and RSA report low similarity",
        paper=PAPER["swiss"]["value"],
        ours={"msa": s_msa, "procrustes": s_pro, "rsa": s_rsa},
        criterion="d_MSA < 1e-6 and Procrustes < 0.8 and RSA < 0.8",
        holds=s_msa < 1e-6 and s_pro < 0.8 and s_rsa < 0.8,
        source=PAPER["swiss"]["source"],
    )


def claim_regimes_verified(claims: Claims, cells: list[dict[str, Any]], cfg: RichLazyConfig) -> None:
    """``regimes_verified``: small init gives rich and large init lazy networks -- the pre-registered regime
    checks (:func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.scores.regime_checks`) pass in every cell of the
    protocol's sweep."""
    checks = regime_checks(cells, cfg)
    claims.add(
        "regimes_verified",
        "small init gives rich and large init lazy networks (pre-registered checks, every cell trained)",
        paper="small init ⇒ rich, large ⇒ lazy",
        ours=regime_table(cells)[REGIME_COLUMNS].round(4).to_dict("records"),
        criterion=regime_criterion(cfg),
        holds=checks["rich"] and checks["lazy"],
        source=PAPER["msa_regime"]["source"],
        trained=group_gates(cells),
    )


def claim_rich_lazy_procrustes_high_msa_separates(
    claims: Claims, scores: pd.DataFrame, cells: list[dict[str, Any]]
) -> None:
    """``rich_lazy_procrustes_high_msa_separates``: the paper's two-part statement, literally -- raw
    Procrustes similarity between the regimes ≥ 0.9 and MSA's regime AUC ≥ 0.9 (``scores``:
    :func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.scores.score_measures` of the protocol's sweep)."""
    p_rl, m_auc = scores.loc["Procrustes", "sim. rich–lazy"], scores.loc["MSA", "regime AUC"]
    claims.add(
        "rich_lazy_procrustes_high_msa_separates",
        "rich and lazy networks: Procrustes similarity ≈ 1 while MSA separates the regimes",
        paper=f"{PAPER['procrustes']['value']}; {PAPER['msa_regime']['value']}",
        ours={
            "procrustes_rich_lazy": p_rl,
            "msa_regime_auc": m_auc,
            "msa_grid_regime_auc": scores.loc["MSA grid", "regime AUC"],
        },
        criterion="mean Procrustes similarity over trained rich–lazy pairs (same K) ≥ 0.9 and MSA regime AUC ≥ 0.9",
        holds=p_rl >= 0.9 and m_auc >= 0.9,
        source=PAPER["msa_regime"]["source"],
        trained=group_gates(cells),
    )


def claim_msa_separates_better_than_baselines(
    claims: Claims,
    scores: pd.DataFrame,
    replicates: list[pd.DataFrame] | None,
    cfg: RichLazyConfig,
    cells: list[dict[str, Any]],
) -> None:
    """``msa_separates_better_than_baselines``: MSA's scale-free regime ratio beats every baseline's by
    > 2 jackknife se (``replicates``: :func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.scores.jackknife_scores`;
    not tested when ``None``)."""
    ratios = scores["regime ratio"]
    claims.add(
        "msa_separates_better_than_baselines",
        "MSA separates rich from lazy better than the extrinsic measures (scale-free ratio)",
        paper="MSA separates the regimes where Procrustes does not",
        ours={k: round(float(v), 3) for k, v in ratios.items()},
        criterion="MSA's between/within regime dissimilarity ratio − each baseline's (CKA, SVCCA, RSA, Procrustes) "
        "> 2 se (leave-one-seed-out jackknife) for every baseline",
        test=msa_beats_baselines(scores, replicates, "regime ratio") if replicates else None,
        reason=_no_jackknife(replicates, cfg),
        source=PAPER["msa_regime"]["source"],
        trained=group_gates(cells),
    )


def claim_msa_recovers_hierarchy(
    claims: Claims,
    scores: pd.DataFrame,
    replicates: list[pd.DataFrame] | None,
    cfg: RichLazyConfig,
    cells: list[dict[str, Any]],
) -> None:
    """``msa_recovers_hierarchy``: MSA's Spearman ρ with the design's tree distance is ≥ 0.5 and beats every
    baseline's by > 2 jackknife se (not tested when ``replicates`` is ``None``)."""
    rho = scores["hierarchy ρ"]
    claims.add(
        "msa_recovers_hierarchy",
        "MSA recovers the hierarchy of the sweep best",
        paper=PAPER["hierarchy"]["value"],
        ours={k: round(float(v), 3) for k, v in rho.items()},
        criterion="MSA's Spearman ρ with the tree distance ≥ 0.5, and ρ_MSA − each baseline's ρ > 2 se "
        "(leave-one-seed-out jackknife)",
        test=all_of(
            [
                Absolute("ρ_MSA ≥ 0.5", bool(rho["MSA"] >= 0.5), f"ρ_MSA = {rho['MSA']:.3f}"),
                *msa_beats_baselines(scores, replicates, "hierarchy ρ").tests,
            ]
        )
        if replicates
        else None,
        reason=_no_jackknife(replicates, cfg),
        source=PAPER["hierarchy"]["source"],
        trained=group_gates(cells),
    )


def claim_cca_rsa_blind_to_training(claims: Claims, scores: pd.DataFrame, cells: list[dict[str, Any]]) -> None:
    """``cca_rsa_blind_to_training``: SVCCA and RSA cannot tell trained rich from untrained networks (AUC
    < 0.75) while MSA can (≥ 0.9); judged with the rich cells' learnability checks."""
    auc_tu = scores["rich/untrained AUC"]
    claims.add(
        "cca_rsa_blind_to_training",
        "CCA and RSA cannot tell trained from untrained networks (MSA can)",
        paper=PAPER["trained"]["value"],
        ours=auc_tu.to_dict(),
        criterion="AUC trained rich vs untrained < 0.75 for SVCCA and for RSA, and ≥ 0.9 for MSA",
        holds=auc_tu["SVCCA"] < 0.75 and auc_tu["RSA"] < 0.75 and auc_tu["MSA"] >= 0.9,
        source=PAPER["trained"]["source"],
        trained=group_gates(cells, ("rich",)),
    )


def claim_ablation_previous_recipe(claims: Claims, run: tuple[RichLazyConfig, dict[str, Any]] | None) -> None:
    """``ablation_previous_recipe``: as ``rich_lazy_procrustes_high_msa_separates`` under the previous recipe
    (``run``: its ``(config, experiment)``, or ``None`` when it was not among the ablations run: not tested)."""
    if run is not None:
        c, e = run
        s_prev = score_measures(e["mats"], e["meta"])
        pp, pm = s_prev.loc["Procrustes", "sim. rich–lazy"], s_prev.loc["MSA", "regime AUC"]
        hold_prev, gates_prev = pp >= 0.9 and pm >= 0.9, group_gates(e["cells"])
        checks_prev = regime_checks(e["cells"], c)
    else:
        pp = pm = hold_prev = gates_prev = checks_prev = None
    claims.add(
        "ablation_previous_recipe",
        "ablation: under the previous recipe (one ReLU layer, α-scaled lazy, fixed SGD steps) MSA separates rich "
        "from lazy",
        paper=PAPER["msa_regime"]["value"],
        ours=None if pp is None else {"procrustes_rich_lazy": pp, "msa_regime_auc": pm, "regime_checks": checks_prev},
        criterion="as rich_lazy_procrustes_high_msa_separates, under the previous recipe (not run when absent from "
        "ablations)",
        holds=hold_prev,
        source=PAPER["msa_regime"]["source"],
        trained=gates_prev,
    )


def paper_rows(swiss: dict[str, float], scores: pd.DataFrame) -> list[PaperRow]:
    """The rows of the paper's statements beside our measured values (for :func:`hgutils.ledger.paper_table`;
    paper values are quoted, ours computed: ``swiss`` the sanity check's measures, ``scores``
    :func:`~hgutils.experiments.nb05_msa_rich_vs_lazy.scores.score_measures` of the protocol's sweep)."""
    s = scores
    rows = [
        ("plane vs swiss roll: MSA distance", PAPER["swiss"], f"{swiss['MSA distance']:.1e}"),
        (
            "plane vs swiss roll: Procrustes / RSA similarity",
            PAPER["swiss"],
            f"{swiss['Procrustes similarity']:.3f} / {swiss['RSA similarity']:.3f}",
        ),
        ("rich vs lazy: Procrustes similarity", PAPER["procrustes"], f"{s.loc['Procrustes', 'sim. rich–lazy']:.3f}"),
        (
            "rich vs lazy: MSA regime AUC (ratio between/within)",
            PAPER["msa_regime"],
            f"{s.loc['MSA', 'regime AUC']:.3f} ({s.loc['MSA', 'regime ratio']:.2f})",
        ),
        (
            "hierarchy: Spearman ρ with the tree distance",
            PAPER["hierarchy"],
            ", ".join(f"{k} {v:.2f}" for k, v in s["hierarchy ρ"].items()),
        ),
        (
            "trained rich vs untrained: AUC",
            PAPER["trained"],
            ", ".join(f"{k} {v:.2f}" for k, v in s["rich/untrained AUC"].items()),
        ),
    ]
    return [PaperRow(r, p["value"], p["source"], o) for r, p, o in rows]
