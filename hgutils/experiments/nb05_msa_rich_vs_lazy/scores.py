r"""Notebook 05's regime checks and scores: the per-cell regime table and the pre-registered checks, every
split of every similarity matrix scored the same way (:mod:`hgutils.similarity.scoring`), the
leave-one-seed-out jackknife behind the comparative claims, the metric-isotropy statistics and the
summary row of one recipe (the protocol or an ablation)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb05_msa_rich_vs_lazy.preset import BASELINES, GROUPS, RichLazyConfig
from hgutils.experiments.nb05_msa_rich_vs_lazy.runs import cell_gate
from hgutils.similarity.scoring import MIN_JACKKNIFE_SEEDS as MIN_JACKKNIFE_SEEDS  # re-exported: the claims read it
from hgutils.similarity.scoring import hierarchy_score, leave_one_seed_out, split_auc, split_scores
from hgutils.verdicts import Combined, all_of, jackknife
from hgutils.weightspace.stacked_mlp import mlp_forward


# --------------------------------------------------------------------------------------------
# regime checks
# --------------------------------------------------------------------------------------------
def regime_table(cells: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (K, regime) cell: steps, accuracy, learnability, weight change, kernel alignments."""
    rows = []
    for c in cells:
        ok = sum(g.trained for g in c["gates"])
        rows.append(
            {
                "K": c["classes"],
                "regime": c["regime"],
                "g": c["gain"],
                "α": c["alpha"],
                "steps (median)": int(c["steps"].median()),
                "steps (max)": int(c["steps"].max()),
                "train acc (min)": float(c["acc"].min()),
                "final loss (max)": float(c["loss1"].max()),
                "trained (gate)": f"{ok}/{len(c['gates'])}",
                "weight change": float(c["rwc"].median()),
                "NTK align. init↔trained": float(c["ntk_align"].median()),
                "label align. init": float(c["label_align0"].median()),
                "label align. trained": float(c["label_align1"].median()),
            }
        )
    return pd.DataFrame(rows)


def regime_checks(cells: list[dict[str, Any]], cfg: RichLazyConfig) -> dict[str, bool]:
    """The pre-registered regime checks (medians over each cell's networks), per regime.

    rich: weight change > ``rich_min_weight_change``, tangent-kernel alignment <
    ``rich_max_ntk_alignment`` and label-alignment rise > ``rich_min_label_gain`` in every rich cell;
    lazy: weight change < ``lazy_max_weight_change`` and alignment > ``lazy_min_ntk_alignment`` in
    every lazy cell.
    """
    rich = all(
        float(c["rwc"].median()) > cfg.rich_min_weight_change
        and float(c["ntk_align"].median()) < cfg.rich_max_ntk_alignment
        and float((c["label_align1"] - c["label_align0"]).median()) > cfg.rich_min_label_gain
        for c in cells
        if c["regime"] == "rich"
    )
    lazy = all(
        float(c["rwc"].median()) < cfg.lazy_max_weight_change
        and float(c["ntk_align"].median()) > cfg.lazy_min_ntk_alignment
        for c in cells
        if c["regime"] == "lazy"
    )
    return {"rich": rich, "lazy": lazy}


def regime_criterion(cfg: RichLazyConfig) -> str:
    """The regime checks of :func:`regime_checks` as text, with their thresholds."""
    return (
        f"rich cells: median weight change > {cfg.rich_min_weight_change:g}, NTK alignment init↔trained < "
        f"{cfg.rich_max_ntk_alignment:g}, label-alignment rise > {cfg.rich_min_label_gain:g}; lazy cells: weight "
        f"change < {cfg.lazy_max_weight_change:g}, NTK alignment > {cfg.lazy_min_ntk_alignment:g}"
    )


# --------------------------------------------------------------------------------------------
# scores
# --------------------------------------------------------------------------------------------
def score_measures(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> pd.DataFrame:
    """Every split scored for every measure (the package docstring), one row per measure.

    - regime: rich vs lazy among trained networks with the same K (AUC, ratio, raw similarities);
    - rich/untrained: trained rich networks vs the untrained group (same K label);
    - lazy/lazy init: trained lazy networks vs the lazy initialisations (the control);
    - classes: K = 2 vs K = 5 among trained networks of one regime (AUC);
    - hierarchy ρ (:func:`hgutils.similarity.scoring.hierarchy_score`).
    """
    rows = {}
    for name, S in mats.items():
        reg = split_scores(S, meta, "group", where={"trained": True}, same=("classes",))
        tu = split_scores(S, meta, "group", where={"group": ("rich", "untrained")}, same=("classes",))
        lz = split_scores(S, meta, "group", where={"group": ("lazy", "lazy init")}, same=("classes",))
        multi_k = len({m["classes"] for m in meta}) > 1
        classes = split_auc(S, meta, "classes", where={"trained": True}, same=("group",)) if multi_k else np.nan
        rows[name] = {
            "regime AUC": reg["auc"],
            "regime ratio": reg["ratio"],
            "sim. within regime": reg["sim_within"],
            "sim. rich–lazy": reg["sim_between"],
            "rich/untrained AUC": tu["auc"],
            "rich/untrained ratio": tu["ratio"],
            "lazy/lazy-init AUC": lz["auc"],
            "sim. lazy–lazy init": lz["sim_between"],
            "classes AUC": classes,
            "hierarchy ρ": hierarchy_score(S, meta) if multi_k else np.nan,
        }
    return pd.DataFrame(rows).T


def jackknife_scores(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> list[pd.DataFrame] | None:
    """:func:`score_measures` with each seed index's networks left out in turn (the jackknife replicates
    behind the comparative claims: every group's ``seed``-th network is dropped together); ``None`` with
    fewer than :data:`MIN_JACKKNIFE_SEEDS` seeds (a replicate would have no within-group pair)."""
    return leave_one_seed_out(mats, meta, score_measures)


def msa_beats_baselines(
    scores: pd.DataFrame, replicates: list[pd.DataFrame], column: str, baselines: tuple[str, ...] = BASELINES
) -> Combined:
    """``MSA − baseline`` on score ``column`` for every baseline, each judged with its leave-one-seed-out
    jackknife standard error (:func:`hgutils.verdicts.jackknife`); holds when every difference does."""
    tests = [
        jackknife(
            float(scores.loc["MSA", column] - scores.loc[b, column]),
            [float(r.loc["MSA", column] - r.loc[b, column]) for r in replicates],
            label=f"MSA − {b} ({column})",
        )
        for b in baselines
    ]
    return all_of(tests)


# --------------------------------------------------------------------------------------------
# isotropy, hidden-unit statistics, one recipe's summary
# --------------------------------------------------------------------------------------------
def isotropy_table(iso: torch.Tensor, meta: list[dict[str, Any]]) -> pd.DataFrame:
    """Quartiles of :math:`\\sqrt{\\lambda_{min}/\\lambda_{max}}` per group, pooled over networks and points."""
    rows = {}
    for grp in GROUPS:
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        v = iso[idx].flatten().numpy()
        rows[grp] = {"q25": np.quantile(v, 0.25), "median": np.median(v), "q75": np.quantile(v, 0.75)}
    return pd.DataFrame(rows).T


def isotropy_bound(iso: torch.Tensor, meta: list[dict[str, Any]], a: str = "rich", b: str = "lazy") -> float:
    r"""Mean over network pairs (group ``a`` x group ``b``, same K) and points of :math:`1 - \iota(G)\iota(G')`,
    the largest spectral-ratio distance their metrics' isotropies allow (``metric_isotropy``): an upper
    bound on their mean MSA distance."""
    ia = [i for i, m in enumerate(meta) if m["group"] == a]
    ib = [j for j, m in enumerate(meta) if m["group"] == b]
    vals = [
        float((1.0 - iso[i].double() * iso[j].double()).mean())
        for i in ia
        for j in ib
        if meta[i]["classes"] == meta[j]["classes"]
    ]
    if not vals:
        raise ValueError(f"no pairs between groups {a!r} and {b!r} with the same number of classes")
    return float(np.mean(vals))


def ablation_row(name: str, exp: dict[str, Any], cfg: RichLazyConfig) -> dict[str, Any]:
    """One summary row of an experiment (the protocol or an ablation): training, checks, key scores."""
    scores = score_measures(exp["mats"], exp["meta"])
    checks = regime_checks(exp["cells"], cfg)
    gates = [cell_gate(c)["trained"] for c in exp["cells"]]
    base = scores.loc[list(BASELINES), "regime ratio"]
    iso = isotropy_table(exp["isotropy"], exp["meta"])["median"]
    return {
        "recipe": name,
        "cells trained": f"{sum(gates)}/{len(gates)}",
        "train acc (min)": min(float(c["acc"].min()) for c in exp["cells"]),
        "steps (max)": max(int(c["steps"].max()) for c in exp["cells"]),
        "rich check": checks["rich"],
        "lazy check": checks["lazy"],
        "MSA regime AUC": scores.loc["MSA", "regime AUC"],
        "MSA grid regime AUC": scores.loc["MSA grid", "regime AUC"],
        "MSA regime ratio": scores.loc["MSA", "regime ratio"],
        "best baseline ratio": f"{base.idxmax()} {base.max():.2f}",
        "Procrustes sim. rich–lazy": scores.loc["Procrustes", "sim. rich–lazy"],
        "MSA dist. rich–lazy": 1.0 - scores.loc["MSA", "sim. rich–lazy"],
        "its bound 1 − ιι'": isotropy_bound(exp["isotropy"], exp["meta"]),
        "isotropy rich": iso["rich"],
        "isotropy lazy": iso["lazy"],
        "isotropy untrained": iso["untrained"],
    }


def activation_stats(
    hidden: dict[str, torch.Tensor], points: torch.Tensor, layer: int, meta: list[dict[str, Any]], activation: str
) -> pd.DataFrame:
    r"""Per group: mean \|h\| of the compared hidden units at ``points`` and, for tanh, the fraction of
    saturated units (\|h\| > 0.95, where tanh' < 0.1) -- the init statistics behind each regime."""
    with torch.no_grad():
        H = mlp_forward(hidden, points, activation, layer=layer).abs()
    rows = {}
    for grp in GROUPS:
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        rows[grp] = {
            "g": meta[idx[0]]["gain"],
            "mean |h|": float(H[idx].mean()),
            "saturated (|h| > 0.95)": float((H[idx] > 0.95).float().mean()) if activation == "tanh" else np.nan,
        }
    return pd.DataFrame(rows).T
