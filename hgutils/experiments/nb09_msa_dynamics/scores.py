r"""Notebook 09's scores: every measure's separation of the architectures and of trained from untrained
networks (:mod:`hgutils.similarity.scoring`), their leave-one-seed-out jackknife, and the stability of
each network's coded geometry over the delay (the per-time reading of Fig. 7f).

Splits of a similarity matrix (``meta`` from :func:`~hgutils.experiments.nb09_msa_dynamics.runs.run_experiment`):

- *architecture*: RNN vs SSM among the trained networks;
- *training*: trained vs untrained networks of the same architecture (``same=("arch",)``);
- *architecture (untrained)*: RNN vs SSM among the untrained networks (a control: what the
  architectures look like before any training);
- *training (RNN)*, *training (SSM)*: the training split within one architecture.

Each is scored by the AUC (:func:`~hgutils.similarity.scoring.split_auc`: 0.5 = blind, 1 = every
between-group pair more dissimilar than every within-group pair) and the scale-free ratio of mean
between- to mean within-group dissimilarity (1 = no separation).

Drift of the coded geometry. For a network with time x time matrix :math:`D_{kl}` over the
:math:`T'` delay steps (:func:`hgutils.similarity.input_time.temporal_msa`), its drift is the mean
over pairs :math:`\bar D = \frac{2}{T'(T'-1)} \sum_{k<l} D_{kl}` (0 = the same geometry at every step
of the delay, up to a scale).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hgutils.experiments.nb09_msa_dynamics.preset import ARCH_NAMES, BASELINES
from hgutils.similarity.scoring import MIN_JACKKNIFE_SEEDS, leave_one_seed_out, split_scores
from hgutils.verdicts import Combined, all_of, jackknife

SPLITS = {
    "architecture": {"key": "arch", "where": {"trained": True}, "same": ()},
    "training": {"key": "trained", "where": None, "same": ("arch",)},
    "architecture (untrained)": {"key": "arch", "where": {"trained": False}, "same": ()},
    "training (RNN)": {"key": "trained", "where": {"arch": "rnn"}, "same": ()},
    "training (SSM)": {"key": "trained", "where": {"arch": "ssm"}, "same": ()},
}
#: the splits whose raw within / between similarities the score table shows
MAIN_SPLITS = ("architecture", "training")


def score_measures(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per measure: AUC and ratio of every split in :data:`SPLITS`, and the mean similarity within
    and between the groups of the two main splits."""
    rows = {}
    for name, S in mats.items():
        row: dict[str, float] = {}
        for split, spec in SPLITS.items():
            sc = split_scores(S, meta, spec["key"], spec["where"], spec["same"])
            row[f"{split} AUC"] = sc["auc"]
            row[f"{split} ratio"] = sc["ratio"]
            if split in MAIN_SPLITS:
                row[f"{split}: sim. within"] = sc["sim_within"]
                row[f"{split}: sim. between"] = sc["sim_between"]
        rows[name] = row
    return pd.DataFrame(rows).T


def jackknife_scores(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> list[pd.DataFrame] | None:
    """:func:`score_measures` with each seed index left out in turn (every group's ``seed``-th network
    together); ``None`` with fewer than :data:`MIN_JACKKNIFE_SEEDS` seeds."""
    return leave_one_seed_out(mats, meta, score_measures)


def msa_beats_baselines(
    scores: pd.DataFrame,
    replicates: list[pd.DataFrame],
    columns: tuple[str, ...],
    baselines: tuple[str, ...] = BASELINES,
) -> Combined:
    """``MSA − baseline`` on every score column for every baseline, each judged with its leave-one-seed-out
    jackknife standard error (:func:`hgutils.verdicts.jackknife`); holds when every difference does."""
    return all_of(
        [
            jackknife(
                float(scores.loc["MSA", c] - scores.loc[b, c]),
                [float(r.loc["MSA", c] - r.loc[b, c]) for r in replicates],
                label=f"MSA − {b} ({c})",
            )
            for c in columns
            for b in baselines
        ]
    )


def drift(temporal: np.ndarray) -> np.ndarray:
    """Per network, the mean of its time x time matrix over pairs of delay steps ``[N]`` (module docstring)."""
    if temporal.ndim != 3 or temporal.shape[1] != temporal.shape[2] or temporal.shape[1] < 2:
        raise ValueError(f"temporal must be [N, T', T'] with T' >= 2; got shape {temporal.shape}")
    iu = np.triu_indices(temporal.shape[1], k=1)
    return temporal[:, iu[0], iu[1]].mean(-1)


def drift_table(temporal: np.ndarray, meta: list[dict[str, Any]]) -> pd.DataFrame:
    """Drift of every group's networks: mean, sd, min and max over seeds, and the distance between the
    first and the last step of the delay."""
    d = drift(temporal)
    ends = temporal[:, 0, -1]
    rows = {}
    for grp in dict.fromkeys(m["group"] for m in meta):
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        rows[grp] = {
            "drift (mean)": float(d[idx].mean()),
            "drift (sd)": float(d[idx].std(ddof=1)) if len(idx) > 1 else np.nan,
            "drift (min)": float(d[idx].min()),
            "drift (max)": float(d[idx].max()),
            "first↔last step": float(ends[idx].mean()),
        }
    return pd.DataFrame(rows).T


def group_values(values: np.ndarray, meta: list[dict[str, Any]], group: str) -> list[float]:
    """``values[i]`` of the networks of ``group`` (e.g. ``"rnn trained"``), in seed order."""
    return [float(values[i]) for i, m in enumerate(meta) if m["group"] == group]


def separation_row(name: str, exp: dict[str, Any]) -> dict[str, Any]:
    """One summary row of an experiment (the protocol or a robustness run): training and every measure's
    architecture and training AUC, and the RNN and SSM drift."""
    scores = score_measures(exp["mats"], exp["meta"])
    d = drift(exp["temporal"])
    row: dict[str, Any] = {"run": name}
    for arch, g in exp["gates"].items():
        row[f"{arch.upper()} trained"] = g["reason"].split(";")[0]
    for m in scores.index:
        row[f"{m} arch. AUC"] = scores.loc[m, "architecture AUC"]
        row[f"{m} training AUC"] = scores.loc[m, "training AUC"]
    row["DSA arch. ratio"] = scores.loc["DSA", "architecture ratio"]
    row["DSA training ratio"] = scores.loc["DSA", "training ratio"]
    row["RNN drift"] = float(np.mean(group_values(d, exp["meta"], "rnn trained")))
    row["SSM drift"] = float(np.mean(group_values(d, exp["meta"], "ssm trained")))
    return row


__all__ = [
    "MAIN_SPLITS",
    "MIN_JACKKNIFE_SEEDS",
    "ROLES",
    "SPLITS",
    "drift",
    "drift_table",
    "group_values",
    "jackknife_scores",
    "msa_beats_baselines",
    "score_measures",
    "separation_row",
    "weight_change",
]


#: what each parameter tensor of the two architectures is (hgutils.dynamics.models)
ROLES: dict[str, dict[str, str]] = {
    "rnn": {"W": "recurrent weights", "U": "input weights", "b": "bias", "C": "readout", "d": "readout bias"},
    "ssm": {
        "nu": "eigenvalue moduli |λ| (ν)",
        "phi": "eigenvalue phases arg λ (φ)",
        "B_re": "input B (real)",
        "B_im": "input B (imaginary)",
        "C_re": "output projection C (real)",
        "C_im": "output projection C (imaginary)",
        "D": "skip D",
        "b": "bias",
        "W": "readout",
        "c": "readout bias",
    },
}


def weight_change(stacks: dict[str, Any]) -> pd.DataFrame:
    r"""Relative change of every parameter tensor in training, :math:`\|p_1 - p_0\|_F / \|p_0\|_F`, median over
    each architecture's networks (tensors initialised at zero are left out): which parts of each network
    training moved (the representation compared is upstream of the linear readout)."""
    rows = []
    for arch, st in stacks.items():
        for k, p0 in st.params0.items():
            den = p0.flatten(1).norm(dim=1)
            if not bool((den > 0).all()):
                continue
            rel = (st.params[k] - p0).flatten(1).norm(dim=1) / den
            rows.append(
                {
                    "architecture": ARCH_NAMES[arch],
                    "parameter": k,
                    "role": ROLES[arch].get(k, ""),
                    "relative change (median)": float(rel.median()),
                }
            )
    return pd.DataFrame(rows)
