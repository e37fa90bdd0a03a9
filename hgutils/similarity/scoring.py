"""Scoring a similarity matrix against a known grouping of the models it compares.

- :func:`split_auc` -- AUC of between-group vs within-group dissimilarities (0.5 = blind, 1 = separated);
- :func:`mean_between` -- mean similarity between two groups of models.

``S`` is an ``[M, M]`` similarity matrix (1 = same) and ``meta`` one dict of attributes per model.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def split_auc(
    S: np.ndarray, meta: list[dict[str, Any]], key: str, where: dict[str, Any] | None = None, same: tuple[str, ...] = ()
) -> float:
    """How well a measure separates the groups of ``key``: AUC of between- vs within-group pairs.

    Over pairs of models that match ``where`` (e.g. ``{"trained": True}``) and agree on every key in
    ``same``, returns P(dissimilarity of a between-group pair > that of a within-group pair) (ties
    count 1/2): 0.5 = cannot tell the groups apart, 1 = perfectly separated.
    """
    idx = [i for i, m in enumerate(meta) if all(m[k] == v for k, v in (where or {}).items())]
    within, between = [], []
    for a, i in enumerate(idx):
        for j in idx[a + 1 :]:
            if any(meta[i][k] != meta[j][k] for k in same):
                continue
            (within if meta[i][key] == meta[j][key] else between).append(1.0 - S[i, j])
    if not within or not between:
        raise ValueError(f"split {key!r} with {where} / same={same} has no within or no between pairs")
    w, b = np.asarray(within), np.asarray(between)
    return float((b[:, None] > w[None, :]).mean() + 0.5 * (b[:, None] == w[None, :]).mean())


def mean_between(
    S: np.ndarray, meta: list[dict[str, Any]], a: dict[str, Any], b: dict[str, Any], same: tuple[str, ...] = ()
) -> float:
    """Mean similarity over pairs (i in group ``a``, j in group ``b``, i != j) agreeing on ``same``."""
    ia = [i for i, m in enumerate(meta) if all(m[k] == v for k, v in a.items())]
    ib = [j for j, m in enumerate(meta) if all(m[k] == v for k, v in b.items())]
    vals = [S[i, j] for i in ia for j in ib if i != j and all(meta[i][k] == meta[j][k] for k in same)]
    if not vals:
        raise ValueError(f"no pairs between {a} and {b} with same={same}")
    return float(np.mean(vals))
