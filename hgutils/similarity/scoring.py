r"""Scoring a similarity matrix against a known grouping of the models it compares.

``S`` is an ``[M, M]`` similarity matrix (1 = same; dissimilarity :math:`d = 1 - S`) and ``meta`` one
dict of attributes per model. A *split* on ``key`` pairs up the models selected by ``where`` (and
agreeing on every key in ``same``) into within-group pairs (same value of ``key``) and between-group
pairs (different values). Three views of one split:

- :func:`split_auc` -- :math:`P(d_{between} > d_{within})` over all (between, within) pairs (ties
  count 1/2): 0.5 = blind, 1 = every between pair is more dissimilar than every within pair.
  Invariant to any increasing transformation of ``d``.
- :func:`dissimilarity_ratio` -- :math:`\bar d_{between} / \bar d_{within}`: scale-free (unchanged
  when every dissimilarity is multiplied by the same :math:`c > 0`), so measures whose raw values
  live on different scales (a Procrustes gap of 0.02 vs an MSA gap of 0.3) can be compared;
  1 = no separation.
- :func:`split_scores` -- both, with the raw mean similarities within and between.

:func:`mean_between` is the mean similarity between two selections of models. A ``where`` value
that is a tuple, list or set selects models whose attribute is any of its elements.

Against a known *hierarchy* rather than one split: :func:`tree_distance` is the tree distance of the
rich/lazy sweep's design (trained/untrained, number of classes, regime, seed; notebook 05) and
:func:`hierarchy_score` the Spearman correlation of a measure's dissimilarities with it.

:func:`leave_one_seed_out` gives the jackknife replicates of any score of the matrices: the score with
each seed index's models left out in turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from scipy.stats import spearmanr

#: the groups :func:`hierarchy_score` ranks by default: the trained regimes and the untrained networks
#: (the lazy-init controls stay out of the hierarchy: a lazy network and its own initialisation are the
#: same function up to a small change, not tree distance 4 apart)
HIERARCHY_GROUPS = ("rich", "lazy", "untrained")
#: a leave-one-seed-out replicate must keep two seeds per group (within-group pairs)
MIN_JACKKNIFE_SEEDS = 3

_Score = TypeVar("_Score")


def _matches(m: dict[str, Any], where: dict[str, Any] | None) -> bool:
    for k, v in (where or {}).items():
        if isinstance(v, (tuple, list, set, frozenset)):
            if m[k] not in v:
                return False
        elif m[k] != v:
            return False
    return True


def split_pairs(
    S: np.ndarray, meta: list[dict[str, Any]], key: str, where: dict[str, Any] | None = None, same: tuple[str, ...] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Dissimilarities ``1 - S`` of the (within-group, between-group) pairs of a split (module docstring)."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape != (len(meta), len(meta)):
        raise ValueError(f"S must be [M, M] with M = len(meta) = {len(meta)}; got shape {S.shape}")
    idx = [i for i, m in enumerate(meta) if _matches(m, where)]
    within, between = [], []
    for a, i in enumerate(idx):
        for j in idx[a + 1 :]:
            if any(meta[i][k] != meta[j][k] for k in same):
                continue
            (within if meta[i][key] == meta[j][key] else between).append(1.0 - S[i, j])
    if not within or not between:
        raise ValueError(f"split {key!r} with {where} / same={same} has no within or no between pairs")
    return np.asarray(within), np.asarray(between)


def split_auc(
    S: np.ndarray, meta: list[dict[str, Any]], key: str, where: dict[str, Any] | None = None, same: tuple[str, ...] = ()
) -> float:
    """How well a measure separates the groups of ``key``: AUC of between- vs within-group pairs.

    Over pairs of models that match ``where`` (e.g. ``{"trained": True}``) and agree on every key in
    ``same``, returns P(dissimilarity of a between-group pair > that of a within-group pair) (ties
    count 1/2): 0.5 = cannot tell the groups apart, 1 = perfectly separated.
    """
    w, b = split_pairs(S, meta, key, where, same)
    return float((b[:, None] > w[None, :]).mean() + 0.5 * (b[:, None] == w[None, :]).mean())


def dissimilarity_ratio(
    S: np.ndarray, meta: list[dict[str, Any]], key: str, where: dict[str, Any] | None = None, same: tuple[str, ...] = ()
) -> float:
    r"""Mean between-group over mean within-group dissimilarity of a split, :math:`\bar d_b / \bar d_w`.

    Scale-free: multiplying every dissimilarity by :math:`c > 0` leaves it unchanged. 1 = the groups
    are as far apart as two members of one group; ``inf`` when the within-group pairs are identical
    (mean dissimilarity 0) and the between pairs are not.
    """
    w, b = split_pairs(S, meta, key, where, same)
    mw, mb = float(w.mean()), float(b.mean())
    if mw <= 0:
        return float("inf") if mb > 0 else 1.0
    return mb / mw


def split_scores(
    S: np.ndarray, meta: list[dict[str, Any]], key: str, where: dict[str, Any] | None = None, same: tuple[str, ...] = ()
) -> dict[str, float]:
    """``{"auc", "ratio", "sim_within", "sim_between"}`` of one split (module docstring)."""
    w, b = split_pairs(S, meta, key, where, same)
    return {
        "auc": split_auc(S, meta, key, where, same),
        "ratio": dissimilarity_ratio(S, meta, key, where, same),
        "sim_within": float(1.0 - w.mean()),
        "sim_between": float(1.0 - b.mean()),
    }


def mean_between(
    S: np.ndarray, meta: list[dict[str, Any]], a: dict[str, Any], b: dict[str, Any], same: tuple[str, ...] = ()
) -> float:
    """Mean similarity over pairs (i in group ``a``, j in group ``b``, i != j) agreeing on ``same``."""
    ia = [i for i, m in enumerate(meta) if _matches(m, a)]
    ib = [j for j, m in enumerate(meta) if _matches(m, b)]
    vals = [S[i, j] for i in ia for j in ib if i != j and all(meta[i][k] == meta[j][k] for k in same)]
    if not vals:
        raise ValueError(f"no pairs between {a} and {b} with same={same}")
    return float(np.mean(vals))


def tree_distance(meta: list[dict[str, Any]]) -> np.ndarray:
    r"""Tree distance :math:`T` ``[M, M]`` of the design hierarchy of a trained/untrained sweep.

    ``meta[i]`` needs ``"trained"``, ``"classes"`` (number of classes K) and ``"group"`` (the regime).
    Trained vs untrained at the root; trained networks then split by K, regime and seed; untrained
    networks depend only on their seed (siblings):

    .. math::

        T_{ij} = \begin{cases}
            0 & i = j \\
            4 & \text{trained}_i \ne \text{trained}_j \\
            1 & \text{both untrained} \\
            3 & \text{both trained}, K_i \ne K_j \\
            2 & \text{both trained}, K_i = K_j, \text{group}_i \ne \text{group}_j \\
            1 & \text{both trained, same } K \text{ and group (seeds)}
        \end{cases}
    """
    M = len(meta)
    T = np.zeros((M, M))
    for i, a in enumerate(meta):
        for j, b in enumerate(meta):
            if i == j:
                continue
            if a["trained"] != b["trained"]:
                T[i, j] = 4
            elif not a["trained"]:
                T[i, j] = 1
            elif a["classes"] != b["classes"]:
                T[i, j] = 3
            elif a["group"] != b["group"]:
                T[i, j] = 2
            else:
                T[i, j] = 1
    return T


def hierarchy_score(S: np.ndarray, meta: list[dict[str, Any]], groups: tuple[str, ...] = HIERARCHY_GROUPS) -> float:
    r"""How well a measure recovers the design hierarchy: Spearman's rank correlation

    .. math:: \rho = \operatorname{corr}_{\text{rank}}\big(1 - S_{ij},\ T_{ij}\big)_{i < j}

    over the pairs of models whose ``"group"`` is in ``groups``, :math:`T` = :func:`tree_distance` of
    those models. 1 = every pair's dissimilarity ranks as its tree distance; ``nan`` for a constant
    dissimilarity (no ranks to correlate).
    """
    idx = [i for i, m in enumerate(meta) if m["group"] in groups]
    sub = [meta[i] for i in idx]
    T = tree_distance(sub)
    Ssub = np.asarray(S)[np.ix_(idx, idx)]
    iu = np.triu_indices(len(idx), k=1)
    d = 1.0 - Ssub[iu]
    if np.ptp(d) == 0:
        return float("nan")  # a constant measure has no rank correlation
    return float(spearmanr(d, T[iu]).statistic)


def leave_one_seed_out(
    mats: dict[str, np.ndarray],
    meta: list[dict[str, Any]],
    score: Callable[[dict[str, np.ndarray], list[dict[str, Any]]], _Score],
) -> list[_Score] | None:
    """The jackknife replicates of ``score(mats, meta)``: for each seed index :math:`s`, the score of the
    matrices restricted to the models with ``meta["seed"] != s`` (every group's :math:`s`-th model dropped
    together); ``None`` with fewer than :data:`MIN_JACKKNIFE_SEEDS` seeds (a replicate would have no
    within-group pair)."""
    seeds = sorted({m["seed"] for m in meta})
    if len(seeds) < MIN_JACKKNIFE_SEEDS:
        return None
    out = []
    for s in seeds:
        keep = [i for i, m in enumerate(meta) if m["seed"] != s]
        out.append(score({k: S[np.ix_(keep, keep)] for k, S in mats.items()}, [meta[i] for i in keep]))
    return out
