"""Independent jobs side by side in processes forked from this one, one thread each.

Every long job of the notebooks on a CPU machine splits into independent items that each seed
themselves: the (model, seed) runs of a comparison, the cells of a selection grid or a learning curve,
the chunks of a zoo. :func:`forked_map` runs them in ``workers`` forked processes. The function is
inherited by the children, not pickled, so it may be a closure over the parent's data (a zoo, a
runner); only the items and the results cross the process boundary. Each child runs one BLAS thread
(several multi-threaded torch processes on two cores oversubscribe them) and no progress bars.

Fork only: never call it from a process that holds a GPU context (the callers pass ``workers=1``
off the CPU).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import torch

from hgutils.progress import progress

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["forked_map", "one_thread_worker"]

#: the function the forked children call (set in the parent just before they are forked)
_TASK: Callable[[Any], Any] | None = None


def one_thread_worker() -> None:
    """A worker's set-up: one torch thread, no progress bars."""
    torch.set_num_threads(1)
    os.environ["HGUTILS_PROGRESS"] = "0"


def _call_task(item: Any) -> Any:
    if _TASK is None:
        raise RuntimeError("_call_task runs in a process forked by forked_map (no function was handed over)")
    return _TASK(item)


def forked_map(fn: Callable[[T], R], items: Sequence[T], workers: int, desc: str | None = None) -> Iterator[R]:
    """``fn(item)`` for every item, yielded in the order of ``items``: in this process when
    ``workers <= 1`` (or there is one item), else in ``min(workers, len(items))`` forked one-thread
    processes, the items handed out in order. ``desc`` labels a progress bar (none without it).
    Items that seed themselves give the same results either way, up to the thread count's effect
    on floating-point sums."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    bar = {"desc": desc} if desc else {"disable": True}
    if workers == 1 or len(items) <= 1:
        for item in progress(items, **bar):
            yield fn(item)
        return
    global _TASK
    _TASK = fn
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(workers, len(items)), mp_context=ctx, initializer=one_thread_worker) as pool:
            futures = [pool.submit(_call_task, item) for item in items]
            for future in progress(futures, **bar):
                yield future.result()
    finally:
        _TASK = None
