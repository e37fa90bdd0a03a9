"""Tables of a comparison: the protocol each model ran, reconstruction scores, mean ± sd over seeds,
differences between models (the verdict rule) and the rows of the paper's numbers beside ours
(:func:`paper_rows`, for :func:`hgutils.ledger.paper_table`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hgutils.experiments.weightspace_protocol.results import ComparisonResult
from hgutils.ledger import PaperRow
from hgutils.verdicts import Difference, compare_seeds
from hgutils.weightspace.metanets.gth_gmn.recon_baselines import baseline_phrase, compare_to_baselines

log = logging.getLogger("hgutils")


def protocol_table(run: ComparisonResult) -> pd.DataFrame:
    """One row per model: the learning rate used (and the grid's validation scores), optimiser steps,
    whether every seed passed the learnability check, and the check's reason for the first seed that
    did not (else for seed 0)."""
    rows = []
    for name in dict.fromkeys(run.table["model"]):
        t = run.table[run.table["model"] == name]
        g = run.gate(name)
        row = {
            "model": name,
            "lr": float(t["lr"].iloc[0]),
            "recipe": str(t["recipe"].iloc[0]) if "recipe" in t else "",
            "steps": int(t["steps"].max()),
            "trained": g["trained"],
            "learnability check": g["reason"],
        }
        if name in run.lr_search:
            row["lr search (val score)"] = ", ".join(f"{lr:g}: {s:.3f}" for lr, s in run.lr_search[name].items())
        rows.append(row)
    return pd.DataFrame(rows)


def recon_table(run: ComparisonResult) -> pd.DataFrame:
    """Reconstruction quality of every two-stage model (validation networks, after the stage-2
    refinement; mean ± std over seeds) beside the baselines a decoder must beat: link BCE against an
    uninformative decoder (2 ln 2 = 1.386), link AUC against 0.5 (overall and against each kind of
    negative pair), sign accuracy against the per-layer-block majority sign, magnitude R² against
    predicting each weight's log-magnitude by its layer block's mean. The last column says in words, per
    model, which metrics do not beat their baseline over the seeds
    (:func:`~hgutils.weightspace.metanets.gth_gmn.recon_baselines.compare_to_baselines`: a paired difference
    beyond 2 standard errors beats it; with one seed, being above it)."""
    pairs = [
        ("link_bce", None),
        ("link_auc", None),
        ("link_auc_weak", None),
        ("link_auc_same_layer", None),
        ("link_auc_other", None),
        ("sign_acc", "sign_majority"),
        ("mag_r2", "mag_r2_block_mean"),
    ]
    have = [(m, b) for m, b in pairs if f"recon_{m}" in run.table and run.table[f"recon_{m}"].notna().any()]
    if not have:
        return pd.DataFrame()
    t = run.table.dropna(subset=[f"recon_{have[0][0]}"])
    rows = []
    for name in dict.fromkeys(t["model"]):
        g = t[t["model"] == name]
        row = {"model": name}
        for m, b in have:
            row[m] = f"{g[f'recon_{m}'].mean():.3f} ± {g[f'recon_{m}'].std(ddof=0):.3f}"
            if b is not None and f"recon_{b}" in g:
                row[f"{m} baseline"] = f"{g[f'recon_{b}'].mean():.3f}"
        row["against the baselines"] = baseline_phrase(compare_to_baselines(g, prefix="recon_", over="seeds"))
        rows.append(row)
    base = {"model": "uninformative decoder", "link_bce": f"{2 * np.log(2):.3f}"}
    base.update({m: "0.500" for m, _ in have if m.startswith("link_auc")})
    rows.append(base)
    return pd.DataFrame(rows).fillna("—")


def summarize(table: pd.DataFrame, metrics: Sequence[str], digits: int = 3) -> pd.DataFrame:
    """Mean ± std over seeds per model (population std ``ddof=0``; 0 with one seed).

    Returns one row per model (in first-appearance order) with ``n_seeds``, ``<m>_mean``,
    ``<m>_std`` and a formatted ``<m>`` column ``"mean ± std"``.
    """
    if table.empty:
        raise ValueError("the results table is empty")
    missing = [m for m in metrics if m not in table]
    if missing:
        raise ValueError(f"results table has no column(s) {missing}; columns are {list(table.columns)}")
    order = list(dict.fromkeys(table["model"]))
    g = table.groupby("model", sort=False)
    out = pd.DataFrame({"model": order})
    out["n_seeds"] = [int(g.get_group(m)["seed"].nunique()) for m in order]
    for m in metrics:
        mean = g[m].mean().reindex(order).to_numpy()
        std = g[m].std(ddof=0).reindex(order).to_numpy()
        out[f"{m}_mean"], out[f"{m}_std"] = mean, std
        out[m] = [f"{a:.{digits}f} ± {b:.{digits}f}" for a, b in zip(mean, std)]
    return out


def run_lengths(table: pd.DataFrame) -> pd.DataFrame:
    """How each model's runs ended, one row per model (first-appearance order): ``epochs`` (median
    epochs run), ``plateau`` (seeds whose task stage stopped on its plateau; ``nan`` for tables from before
    the plateau rule), ``capped`` (seeds a stage's ceiling ended while still improving: the plateau rule of
    :mod:`hgutils.loop`) and ``diverged`` (seeds whose loss went non-finite, each kept its best validated
    epoch; ``0`` for tables from before the column)."""
    t = table.assign(diverged=table["diverged"].fillna("").astype(str).ne("") if "diverged" in table else False)
    t = t.assign(plateau=t["task_stop"].eq("plateau") if "task_stop" in t else float("nan"))
    return t.groupby("model", sort=False).agg(
        epochs=("epochs_run", "median"),
        plateau=("plateau", "sum"),
        capped=("capped", "sum"),
        diverged=("diverged", "sum"),
    )


def per_seed(table: pd.DataFrame, metric: str, models: Sequence[str]) -> dict[str, list[float]]:
    """``{model: [metric at each seed]}`` from a :func:`run_comparison` results table, seeds ascending.

    Raises
    ------
    ValueError
        If a model or the metric is missing from the table.
    """
    if metric not in table:
        raise ValueError(f"results table has no column {metric!r}; columns are {list(table.columns)}")
    have = list(dict.fromkeys(table["model"]))
    missing = [m for m in models if m not in have]
    if missing:
        raise ValueError(f"model(s) {missing} not in the results table; have {have}")
    out = {}
    for m in models:
        rows = table[table["model"] == m].sort_values("seed")
        out[m] = [float(v) for v in rows[metric]]
    return out


def difference(
    table: pd.DataFrame,
    a: str,
    b: str,
    metric: str,
    higher_is_better: bool = True,
    scale: float = 1.0,
    unit: str = "",
    paired: bool = False,
    digits: int = 3,
) -> Difference:
    """``a`` against ``b`` on ``metric`` over seeds (:func:`hgutils.verdicts.compare_seeds`).

    Different models trained on the same split with the same seed numbers share nothing but the
    split, so the default is unpaired; ``paired=True`` for variants that share a stage per seed
    (e.g. one stage-1 encoder refined two ways).
    """
    v = per_seed(table, metric, [a, b])
    return compare_seeds(
        v[a],
        v[b],
        paired=paired,
        higher_is_better=higher_is_better,
        label=f"{a} vs {b}",
        unit=unit,
        scale=scale,
        digits=digits,
    )


def best_model(summary: pd.DataFrame, metric: str, among: Sequence[str], higher_is_better: bool = True) -> str:
    """Name of the model with the best mean ``metric`` among ``among`` (ties: first listed)."""
    s = summary.set_index("model")
    cand = [m for m in among if m in s.index]
    if not cand:
        raise ValueError(f"none of {list(among)} is in the summary")
    vals = [float(s.loc[m, f"{metric}_mean"]) for m in cand]
    i = int(np.argmax(vals) if higher_is_better else np.argmin(vals))
    return cand[i]


def paper_rows(
    paper: Mapping[str, tuple[float, float]],
    ours: pd.DataFrame | None = None,
    metric: str | None = None,
    scale: float = 1.0,
    method: str = "GTH-GMN",
    sources: Mapping[str, str] | None = None,
) -> list[PaperRow]:
    """A paper's table (``{model: (mean, std)}``) beside ours on the same protocol, one
    :class:`~hgutils.ledger.PaperRow` per model of ``paper`` for :func:`hgutils.ledger.paper_table`
    (``what="model"``).

    ``ours`` is a :func:`summarize` output and ``metric`` its metric (multiplied by ``scale``, e.g. 100 for
    accuracy in %), shown as ``mean ± std``; models absent from ``ours`` (every model without ``ours``) get
    ``—``. Each row's source is ``sources[model]`` where given, else ``"<method> paper"`` for ``method``'s
    row and "baseline's own paper/dataset" for the others.
    """
    if not paper:
        raise ValueError("paper table is empty")
    if ours is not None and metric is None:
        raise ValueError("ours needs the metric it summarises")
    s = ours.set_index("model") if ours is not None else None
    src = dict(sources or {})
    rows = []
    for m, (mu, sd) in paper.items():
        mine = "—"
        if s is not None and m in s.index:
            mine = f"{scale * s.loc[m, f'{metric}_mean']:.3f} ± {scale * s.loc[m, f'{metric}_std']:.3f}"
        default = f"{method} paper" if m == method else "baseline's own paper/dataset"
        rows.append(PaperRow(m, f"{mu:g} ± {sd:g}", src.get(m, default), mine))
    return rows
