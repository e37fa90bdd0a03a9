"""The verdict vocabulary of every claims ledger, the 2-standard-error rule's ``k`` (:data:`N_SE`), and the
checks every comparison runs on its per-seed values.

``holds`` / ``contradicted`` / ``inconclusive`` are the verdicts of a measured criterion; ``not tested at this
scale`` and ``inconclusive (did not train)`` say why a claim was not judged; ``inconclusive (capped)`` is a
contradiction by a run that its budget stopped while it was still improving (:mod:`hgutils.verdicts`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

HOLDS = "holds"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTED = "not tested at this scale"
DID_NOT_TRAIN = "inconclusive (did not train)"
#: A claim the criterion contradicts, but whose losing model stopped at its training budget while its
#: validation score was still improving (``Claim.verdict`` in :mod:`hgutils.ledger`): more training could
#: change the outcome, so the run cannot contradict the paper. The measured difference stays in the detail.
CAPPED = "inconclusive (capped)"

#: Every verdict a ledger may carry, in the order the README's summary counts them.
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTED, DID_NOT_TRAIN, CAPPED)

#: Background colour of each verdict in a notebook's claims table (one palette everywhere).
VERDICT_COLOURS = {
    HOLDS: "#d4edda",
    CONTRADICTED: "#f8d7da",
    INCONCLUSIVE: "#fff3cd",
    NOT_TESTED: "#e2e3e5",
    DID_NOT_TRAIN: "#e8dcf4",
    CAPPED: "#ffe5cc",
}

N_SE = 2.0


def _values(x: Sequence[float], name: str) -> np.ndarray:
    a = np.asarray(list(x), dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name}: need a non-empty list of per-seed values; got {list(x)!r}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: per-seed values must be finite; got {a.tolist()}")
    return a


def _num(v: float, digits: int, signed: bool = False) -> str:
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"
