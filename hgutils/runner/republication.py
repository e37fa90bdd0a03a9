"""Which published notebooks await republication, and why.

A published medium run (``results/medium/NN_*.ipynb``) records what the library measured when it ran. When the
library changes under it (a training rule, a protocol, a module renamed), its numbers and its code cells may no
longer be what today's library gives, and it must be run again (``reproduce --scale medium --only NN --publish``).
Until then it is listed, with the reason, in ``results/<scale>/AWAITING_REPUBLICATION.json``
(``{"02_sine_regression": "why ..."}``): the claims report marks its rows, the README says so, and
``tests/test_published_notebooks.py`` holds the list to the truth both ways (a stale notebook not listed fails,
and so does a listed one whose code resolves again). Publishing a notebook removes its entry
(:func:`mark_republished`, called by :func:`hgutils.runner.reproduce.publish_results`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hgutils.atomic import atomic_write_text

LEDGER_NAME = "AWAITING_REPUBLICATION.json"


def awaiting_republication(folder: str | Path) -> dict[str, str]:
    """``{notebook stem: reason}`` of the published notebooks in ``folder`` (``results/<scale>``) that await
    republication; empty when the ledger is absent.

    Raises
    ------
    ValueError
        If the ledger is not a JSON object of non-empty strings (it is edited by hand).
    """
    path = Path(folder) / LEDGER_NAME
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in data.items()):
        raise ValueError(f"{path}: expected a JSON object mapping each notebook ('02_sine_regression') to a reason")
    return dict(data)


def mark_republished(folder: str | Path, stems: Iterable[str]) -> list[str]:
    """Remove ``stems`` from ``folder``'s ledger (they were just published); return the entries removed. The
    ledger is rewritten atomically, and deleted when it empties."""
    path = Path(folder) / LEDGER_NAME
    waiting = awaiting_republication(folder)
    removed = [s for s in stems if s in waiting]
    if not removed:
        return []
    for s in removed:
        del waiting[s]
    if waiting:
        atomic_write_text(path, json.dumps(waiting, indent=1, sort_keys=True) + "\n")
    else:
        path.unlink()
    return removed
