"""Peak memory of a block of code, on the CPU or a CUDA device: :class:`PeakMemory`.

Two measures, each with a stated meaning:

* ``tensor_peak_bytes`` -- the largest total size of the torch tensor storages *allocated inside
  the block* that were alive at the same time (storages that existed before the block are not
  counted; views share their base's storage and add nothing). On CUDA it is
  ``torch.cuda.max_memory_allocated`` minus the bytes allocated when the block started (the caching
  allocator's own reserve is not included). On the CPU, where torch keeps no such statistic, it is
  counted by a :class:`~torch.utils._python_dispatch.TorchDispatchMode` that sees every tensor an
  operator returns and a ``weakref.finalize`` on each new storage (so it is the CPU analogue of
  the CUDA figure, and costs Python time per operator: opt in with ``track_tensors=True``).
* ``rss_peak_bytes`` (CPU, Linux) -- the process's peak resident set during the block (``VmHWM``
  in ``/proc/self/status``, reset at the start by writing ``5`` to ``/proc/self/clear_refs``), and
  ``rss_start_bytes`` its resident set when the block started. The peak is absolute: it includes the
  interpreter, the libraries and whatever the process held before (pages freed earlier are reused by
  the allocator, so the growth over the start is not the block's own need). It costs nothing. Where
  the peak cannot be reset it is ``None``.

Example
-------
>>> import torch
>>> with PeakMemory(track_tensors=True) as pm:
...     x = torch.zeros(1024, 1024)  # 4 MiB
...     y = x + 1                    # 4 MiB more, both alive
...     del x, y
>>> round(pm.tensor_peak_bytes / 2**20)
8
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["PeakMemory", "mib", "process_rss_bytes"]


def mib(n: float | None) -> float | None:
    """Bytes as MiB (rounded to 0.1), ``None`` stays ``None``."""
    return None if n is None else round(n / 2**20, 1)


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_rss_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _tensor_tracker(timeline: bool = False) -> Any:
    """A dispatch mode counting the bytes of live storages created while it is active (and, with
    ``timeline``, the live bytes after every operator)."""

    class _Tracker(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.live = 0
            self.peak = 0
            self.seen: dict[tuple[str, int], int] = {}
            self.timeline: list[int] | None = [] if timeline else None

        def _free(self, key: tuple[str, int], n: int) -> None:
            if self.seen.pop(key, None) is not None:
                self.live -= n

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten(out)[0]:
                if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                    continue
                s = t.untyped_storage()
                n = s.nbytes()
                key = (str(t.device), s.data_ptr())
                if n == 0 or key in self.seen:
                    continue
                self.seen[key] = n
                self.live += n
                self.peak = max(self.peak, self.live)
                weakref.finalize(s, self._free, key, n)
            if self.timeline is not None:
                self.timeline.append(self.live)
            return out

    return _Tracker()


class PeakMemory:
    """Context manager: the peak memory of the block (module docstring for what each figure means).

    Parameters
    ----------
    device
        ``"cpu"`` or a CUDA device (``"cuda"``, ``"cuda:1"``); on CUDA the figure comes from the
        caching allocator's statistics and ``track_tensors`` is ignored.
    track_tensors
        On the CPU, count tensor storages (slower: a Python call per operator). Off, only the RSS
        figure is measured there.
    timeline
        With ``track_tensors`` on the CPU: also keep the live tensor bytes after every operator
        (``timeline``, a list of ints), e.g. to compare the same computation at two sizes.

    Attributes (after the block): ``tensor_peak_bytes`` (``None`` when not measured),
    ``rss_peak_bytes`` (``None`` off Linux or when the peak cannot be reset), ``method`` (a short
    description of what was measured).
    """

    def __init__(self, device: str | torch.device = "cpu", track_tensors: bool = False, timeline: bool = False) -> None:
        dev = torch.device(device)
        if dev.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or a CUDA device; got {device!r}")
        self.device = dev
        self.track_tensors = bool(track_tensors)
        self.want_timeline = bool(timeline)
        self.timeline: list[int] | None = None
        self.tensor_peak_bytes: int | None = None
        self.rss_peak_bytes: int | None = None
        self.rss_start_bytes: int | None = None
        self.method = ""
        self._tracker: Any = None
        self._rss0: int | None = None
        self._cuda0 = 0

    def __enter__(self) -> PeakMemory:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self._cuda0 = torch.cuda.memory_allocated(self.device)
            self.method = "torch.cuda.max_memory_allocated over the block"
            return self
        parts = []
        if _reset_rss_peak():
            self._rss0 = _status_kib("VmRSS")
            parts.append("process peak RSS during the block (VmHWM reset via clear_refs)")
        if self.track_tensors:
            self._tracker = _tensor_tracker(self.want_timeline)
            self._tracker.__enter__()
            parts.append("live tensor storages created in the block (dispatch mode)")
        self.method = "; ".join(parts) or "not measured (no /proc and tensor tracking off)"
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.tensor_peak_bytes = max(0, torch.cuda.max_memory_allocated(self.device) - self._cuda0)
            return
        if self._tracker is not None:
            self._tracker.__exit__(*exc)
            self.tensor_peak_bytes = self._tracker.peak
            self.timeline = self._tracker.timeline
            self._tracker = None
        if self._rss0 is not None:
            hwm = _status_kib("VmHWM")
            self.rss_start_bytes = self._rss0 * 1024
            self.rss_peak_bytes = None if hwm is None else hwm * 1024

    def peak_so_far(self) -> int | None:
        """Inside the block: the tensor peak reached so far (``None`` when tensors are not tracked)."""
        if self.device.type == "cuda":
            return max(0, torch.cuda.max_memory_allocated(self.device) - self._cuda0)
        return None if self._tracker is None else self._tracker.peak

    def as_dict(self) -> dict[str, Any]:
        """``{"tensor_peak_mib", "rss_peak_mib", "rss_start_mib", "memory_method"}`` (MiB, to 0.1)."""
        return {
            "tensor_peak_mib": mib(self.tensor_peak_bytes),
            "rss_peak_mib": mib(self.rss_peak_bytes),
            "rss_start_mib": mib(self.rss_start_bytes),
            "memory_method": self.method,
        }


def process_rss_bytes() -> int | None:
    """The process's current resident set (Linux), ``None`` elsewhere."""
    kib = _status_kib("VmRSS")
    return None if kib is None else kib * 1024
