r"""The baselines a weight reconstruction must beat, and a report that says in words whether it beat them.

:func:`~hgutils.weightspace.metanets.gth_gmn.decoders.reconstruction_metrics` measures how well GTH-GMN's node
coordinates reconstruct a network's weights, each metric beside the trivial rule it must beat
(:data:`RECON_BASELINES`):

- link BCE (lower is better) against an uninformative decoder, :math:`2 \ln 2 \approx 1.386`;
- link AUC ("closer = edge"), overall and against each kind of negative pair, against chance, 0.5;
- sign accuracy against the per-layer-block majority sign (predict every weight of a block with the sign most
  of that block's weights have);
- the :math:`R^2` of the log-magnitudes against predicting each weight's log-magnitude by its layer block's
  mean, :math:`R^2_\mathrm{block}`.

A reconstruction that learned nothing reads at or below these numbers -- e.g. link AUC 0.467 and sign accuracy
0.456 against a majority of 0.525 -- and a table of numbers alone does not say so. :func:`compare_to_baselines`
judges each metric against its baseline over repeated measurements (held-out networks, or seeds) with the
verdict rule of :mod:`hgutils.verdicts` (a paired difference beyond 2 standard errors), and
:func:`baseline_sentence` writes the result as one paragraph: which metrics beat their baseline and which do
not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hgutils.verdicts import CONTRADICTED, HOLDS, compare_seeds


@dataclass(frozen=True)
class ReconBaseline:
    """One reconstruction metric and the trivial rule it must beat.

    ``baseline`` is a constant (chance) or the name of the metric holding the baseline measured on the same
    networks (``"sign_majority"``); ``name`` and ``baseline_name`` are the words a report uses."""

    metric: str
    name: str
    baseline: float | str
    baseline_name: str
    higher_is_better: bool = True


#: every metric of :func:`~hgutils.weightspace.metanets.gth_gmn.decoders.reconstruction_metrics` with its baseline
RECON_BASELINES: tuple[ReconBaseline, ...] = (
    ReconBaseline("link_bce", "link BCE", 2 * math.log(2), "an uninformative decoder", higher_is_better=False),
    ReconBaseline("link_auc", "link AUC", 0.5, "chance"),
    ReconBaseline("link_auc_weak", "link AUC against weak pairs", 0.5, "chance"),
    ReconBaseline("link_auc_same_layer", "link AUC against same-layer pairs", 0.5, "chance"),
    ReconBaseline("link_auc_other", "link AUC against other pairs", 0.5, "chance"),
    ReconBaseline("sign_acc", "sign accuracy", "sign_majority", "the per-block majority sign"),
    ReconBaseline("mag_r2", "magnitude R²", "mag_r2_block_mean", "each block's mean log-magnitude"),
)

#: the words of a comparison's outcome
BEATS, WORSE, NOT_RESOLVED, ABOVE, NOT_ABOVE = (
    "beats",
    "is worse than",
    "does not resolve from",
    "is above",
    "does not beat",
)


def _metric_values(values: pd.DataFrame | Mapping[str, float]) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        return values
    return pd.DataFrame([{k: float(v) for k, v in values.items()}])


def compare_to_baselines(
    values: pd.DataFrame | Mapping[str, float],
    *,
    prefix: str = "",
    over: str = "networks",
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Each reconstruction metric against its baseline (:data:`RECON_BASELINES`).

    ``values`` holds one row per measurement (a held-out network, or a seed) with the metrics as columns
    (``prefix`` + metric name, e.g. ``"recon_link_auc"``), or is one metrics dict (one pooled measurement).
    Metrics absent or all-missing are skipped; ``metrics`` restricts the list.

    Returns one row per metric: ``metric`` (its name in words), ``ours`` (mean), ``baseline`` (in words),
    ``baseline value`` (mean), ``difference`` (ours - baseline in the better direction, with its standard error
    over the ``n`` measurements), ``outcome`` -- :data:`BEATS` when the paired difference exceeds 2 standard
    errors, :data:`WORSE` when it is below -2 se, :data:`NOT_RESOLVED` in between (not a win: the difference is
    within 2 standard errors); with a single measurement
    :data:`ABOVE` or :data:`NOT_ABOVE` -- and ``beats`` (bool, True only for :data:`BEATS` and :data:`ABOVE`).
    """
    frame = _metric_values(values)
    rows = []
    for b in RECON_BASELINES:
        col = prefix + b.metric
        if (metrics is not None and b.metric not in metrics) or col not in frame or frame[col].isna().all():
            continue
        if isinstance(b.baseline, str):
            bcol = prefix + b.baseline
            if bcol not in frame or frame[bcol].isna().all():
                continue
            sub = frame[[col, bcol]].dropna()
            ours, base = sub[col].to_numpy(float), sub[bcol].to_numpy(float)
        else:
            ours = frame[col].dropna().to_numpy(float)
            base = np.full_like(ours, float(b.baseline))
        d = compare_seeds(
            ours, base, paired=True, higher_is_better=b.higher_is_better, label=b.metric, digits=3, over=over
        )
        if len(ours) < 2:
            outcome = ABOVE if d.diff > 0 else NOT_ABOVE
        else:
            outcome = {HOLDS: BEATS, CONTRADICTED: WORSE}.get(d.verdict, NOT_RESOLVED)
        se = f" ± {d.se:.3f}" if math.isfinite(d.se) else ""
        rows.append(
            {
                "metric": b.name,
                "ours": round(float(ours.mean()), 3),
                "baseline": b.baseline_name,
                "baseline value": round(float(base.mean()), 3),
                "difference": f"{d.diff:+.3f}{se}",
                "n": len(ours),
                "outcome": outcome,
                "beats": outcome in (BEATS, ABOVE),
            }
        )
    return pd.DataFrame(rows)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def baseline_sentence(comparison: pd.DataFrame, what: str = "The reconstruction", over: str = "networks") -> str:
    """The outcome of :func:`compare_to_baselines` in words: each metric beside its baseline, then which
    metrics beat their baseline and which do not, and -- when none does -- that the reconstruction learned
    nothing the trivial rules do not already give.

    E.g. "Over 6 held-out networks: link AUC 0.467 is worse than chance (0.500); sign accuracy 0.456 is worse
    than the per-block majority sign (0.525); magnitude R² 0.219 beats each block's mean log-magnitude
    (0.090). The reconstruction beats its baseline on magnitude R² only; it does not beat it on link AUC and
    sign accuracy."
    """
    if comparison.empty:
        return f"{what}: no reconstruction metric was measured."
    n = int(comparison["n"].max())
    parts = [
        f"{r['metric']} {r['ours']:.3f} {r['outcome']} {r['baseline']} ({r['baseline value']:.3f})"
        for _, r in comparison.iterrows()
    ]
    head = f"Over {n} {over}: " if n > 1 else "One pooled measurement (no standard error): "
    good = [str(m) for m in comparison.loc[comparison["beats"], "metric"]]
    bad = [str(m) for m in comparison.loc[~comparison["beats"], "metric"]]
    if not bad:
        tail = f"{what} beats every baseline."
    elif not good:
        tail = (
            f"{what} beats none of its baselines: it has learned nothing about these weights that the trivial "
            "rules do not already give."
        )
    else:
        only = " only" if len(good) == 1 else ""
        tail = f"{what} beats its baseline on {_join(good)}{only}; it does not beat it on {_join(bad)}."
    return head + "; ".join(parts) + ". " + tail


def baseline_phrase(comparison: pd.DataFrame) -> str:
    """The outcome of :func:`compare_to_baselines` in a few words for a table cell: ``"beats every baseline"``,
    ``"beats none of its baselines"`` or ``"does not beat its baseline on sign accuracy, magnitude R²"``."""
    if comparison.empty:
        return "—"
    bad = [str(m) for m in comparison.loc[~comparison["beats"], "metric"]]
    if not bad:
        return "beats every baseline"
    if len(bad) == len(comparison):
        return "beats none of its baselines"
    return "does not beat its baseline on " + ", ".join(bad)
