"""Timing this checkout side by side with an earlier revision of the library.

The library as it was at ``rev`` is extracted with ``git archive`` into a temporary folder, and child
processes alternate between this checkout and that copy (put first on ``PYTHONPATH``), the order swapped
every round, so that load on a shared machine hits both sides alike. The ratio to the previous revision is
the median of the per-round ratios (paired round by round), reported with their range.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def previous_library(rev: str) -> Iterator[str]:
    """A temporary folder holding ``hgutils`` as it was at ``rev``; removed on exit.

    Raises
    ------
    RuntimeError
        If git cannot extract that revision (not a git checkout, unknown revision).
    """
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "hgutils"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"previous revision {rev} unavailable ({exc})") from exc
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield tmp


def one_thread_env(pythonpath: str) -> dict[str, str]:
    """The environment of a timing child: one BLAS thread, ``pythonpath`` first on the import path."""
    return dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=pythonpath)


def alternate(
    entries: Iterable[Hashable], rounds: int, previous: str, measure: Callable[[str, Any, str], Any]
) -> tuple[dict[Any, list[Any]], dict[Any, list[Any]]]:
    """``measure(pythonpath, entry, side)`` (side ``"now"`` or ``"prev"``) for every entry, ``rounds``
    times on each side, alternating between this checkout and the folder ``previous`` and swapping the
    order every round. Returns the results of this checkout and of the previous revision, per entry."""
    entries = list(entries)
    now: dict[Any, list[Any]] = {e: [] for e in entries}
    prev: dict[Any, list[Any]] = {e: [] for e in entries}
    for r in range(rounds):
        for e in entries:
            sides = ((now, str(REPO), "now"), (prev, previous, "prev"))
            for store, path, side in sides if r % 2 == 0 else sides[::-1]:
                store[e].append(measure(path, e, side))
    return now, prev


def paired_ratio(now: list[float], prev: list[float]) -> tuple[float, float, float]:
    """Median, min and max over rounds of ``prev / now`` (seconds per unit of work: > 1 is faster now)."""
    ratios = [p / n for p, n in zip(prev, now, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)
