"""Which device each notebook cell computed on, for the claims ledger.

- :class:`DeviceLog` -- records, per executed cell, the accelerators it allocated memory on
  (IPython's ``pre_run_cell`` / ``post_run_cell`` events);
- :func:`start_device_log` -- starts it once per kernel (:func:`hgutils.repro.output_dirs` calls it);
- :func:`device_record` / :func:`device_summary` -- the record a ledger stores and its one-phrase summary.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def accelerator_counts() -> dict[str, int]:
    """Allocations made so far on each accelerator torch has started: ``{"cuda:0": n, "mps": bytes}``.

    CUDA: the allocator's cumulative count of allocations (``allocation.all.allocated``) per device
    CUDA was initialised on; MPS: the bytes allocated now. ``{}`` when torch is not imported or no
    accelerator was touched (nothing is imported or initialised here).
    """
    torch_ = sys.modules.get("torch")
    if torch_ is None:
        return {}
    out: dict[str, int] = {}
    if torch_.cuda.is_initialized():
        for i in range(torch_.cuda.device_count()):
            out[f"cuda:{i}"] = int(torch_.cuda.memory_stats(i).get("allocation.all.allocated", 0))
    mps = getattr(torch_, "mps", None)
    if mps is not None and getattr(torch_.backends, "mps", None) is not None and torch_.backends.mps.is_available():
        out["mps"] = int(mps.current_allocated_memory())
    return out


class DeviceLog:
    """The device each executed cell computed on, from IPython's ``pre_run_cell``/``post_run_cell`` events.

    A cell counts as computing on an accelerator when it allocated memory there
    (:func:`accelerator_counts` changed while it ran), else as a CPU cell. ``requested`` is the
    notebook's ``device`` parameter (its variable in the kernel's namespace). ``counts`` is a
    parameter so the tests can stand in for a GPU.
    """

    def __init__(self, requested: str | None = None, counts: Callable[[], dict[str, int]] = accelerator_counts) -> None:
        self.requested = requested
        self.cells: dict[int, list[str]] = {}
        self._counts = counts
        self._before = counts()

    def pre_run_cell(self, *args: Any) -> None:
        self._before = self._counts()

    def post_run_cell(self, result: Any = None) -> None:
        after = self._counts()
        used = sorted(d for d, n in after.items() if n != self._before.get(d, 0))
        count = getattr(result, "execution_count", None)
        if isinstance(count, int):
            self.cells[count] = used or ["cpu"]
        self._before = after

    def record(self) -> dict[str, Any]:
        """``{"requested", "used", "cells"}``: ``used`` the accelerators any cell used, else ``["cpu"]``."""
        used = sorted({d for devs in self.cells.values() for d in devs if d != "cpu"})
        return {
            "requested": self.requested,
            "used": used or ["cpu"],
            "cells": {str(k): v for k, v in sorted(self.cells.items())},
        }


_DEVICE_LOG: DeviceLog | None = None


def start_device_log() -> DeviceLog | None:
    """Start (once per kernel) the :class:`DeviceLog` of the running notebook; ``None`` outside a kernel."""
    global _DEVICE_LOG
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None else None
    if ip is None:
        return None
    requested = ip.user_ns.get("device")
    requested = str(requested) if requested is not None else None
    if _DEVICE_LOG is None:
        _DEVICE_LOG = DeviceLog(requested)
        ip.events.register("pre_run_cell", _DEVICE_LOG.pre_run_cell)
        ip.events.register("post_run_cell", _DEVICE_LOG.post_run_cell)
    else:
        _DEVICE_LOG.requested = requested or _DEVICE_LOG.requested
    return _DEVICE_LOG


def device_record(requested: str | None = None) -> dict[str, Any] | None:
    """The device record of the running notebook for its ledger (``None`` when nothing is known)."""
    if _DEVICE_LOG is not None:
        rec = _DEVICE_LOG.record()
        if requested is not None:
            rec["requested"] = requested
        return rec
    return None if requested is None else {"requested": requested, "used": None, "cells": None}


def is_accelerator(device: str | None) -> bool:
    """True for ``cuda``, ``cuda:N``, ``mps``."""
    return bool(device) and not str(device).startswith("cpu")


def device_summary(record: dict[str, Any] | None) -> str:
    """One phrase for a ledger's device record: ``"cuda:0"``, ``"cpu"``, ``"cpu, although cuda was asked for"``."""
    if not record:
        return ""
    used, requested = record.get("used"), record.get("requested")
    if not used:
        return f"not recorded (asked: {requested})" if requested else ""
    text = ", ".join(used)
    if is_accelerator(requested) and used == ["cpu"]:
        text += f", although {requested} was asked for"
    return text
