"""The processes of a run: finding and stopping them, signals, and what a killed run leaves behind.

- :func:`descendants` / :func:`terminate_processes` -- every process a run started, stopped with
  everything it started (kernels run in their own sessions, so they are found as descendants);
- :class:`SignalGuard` -- SIGINT and SIGTERM as ``KeyboardInterrupt``, held while a result is written;
- :func:`make_staging` -- the run's staging folder ``$TMPDIR/hgutils-run-*``, with an owner record
  (PID, host, process start time); it first removes the staging folders of runs that no longer run
  (:func:`remove_stale_staging`), so a run killed by SIGKILL, which cannot clean up, leaves nothing
  for good;
- :func:`watch_parent` -- run in each local worker process: when the runner is gone (killed with
  SIGKILL, so it could not stop its workers), the worker stops its kernels, removes the staging
  folder and exits within about a second, instead of finishing its notebook for nobody.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "STAGING_PREFIX",
    "SignalGuard",
    "descendants",
    "make_staging",
    "remove_stale_staging",
    "terminate_processes",
    "watch_parent",
]

#: Name prefix of a run's staging folder in the system's temporary folder.
STAGING_PREFIX = "hgutils-run-"
#: The owner record inside a staging folder.
OWNER_FILE = ".owner.json"
#: An empty staging folder without an owner record (written by an older hgutils) untouched this
#: long belongs to no running run (a live run creates a job folder in it for every notebook).
OWNERLESS_AFTER_S = 3600.0
#: How often a worker checks that its runner is still there.
PARENT_POLL_S = 0.5


def descendants() -> set[int]:
    """PIDs of every live descendant of this process."""
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def terminate_processes(pids: set[int], grace: float = 5.0) -> None:
    """Stop processes and everything they started: freeze, collect descendants, SIGTERM, then SIGKILL.

    Freezing first (SIGSTOP) means a worker caught while starting a kernel cannot hand it off
    unseen; kernels run in their own sessions, so they are found as descendants, not by group.
    """
    import psutil

    procs: dict[int, psutil.Process] = {}
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            procs[pid] = psutil.Process(pid)
    for p in list(procs.values()):
        with contextlib.suppress(psutil.Error):
            p.suspend()
    for p in list(procs.values()):
        with contextlib.suppress(psutil.Error):
            for c in p.children(recursive=True):
                procs.setdefault(c.pid, c)
    for p in procs.values():
        with contextlib.suppress(psutil.Error):
            p.terminate()
            p.resume()
    _, alive = psutil.wait_procs(list(procs.values()), timeout=grace)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace)


class SignalGuard:
    """Turn SIGINT and SIGTERM into ``KeyboardInterrupt``, except inside :meth:`deferred` sections.

    Installed only in the main thread (elsewhere signals cannot be handled and this is a no-op).
    A handler's exception can be lost: one that lands inside an interpreter callback whose errors
    Python only prints (``os.fork``'s at-fork hooks, ``__del__``, weakref callbacks) is swallowed.
    Polling loops therefore call :meth:`check`, which raises again for a signal that was received.
    """

    def __init__(self) -> None:
        self._defer = 0
        self.pending: int | None = None
        self.received: int | None = None
        self._saved: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        self.received = signum
        if self._defer:
            self.pending = signum
            return
        raise KeyboardInterrupt(signal.Signals(signum).name)

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._saved[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        self._saved.clear()

    def ignore(self) -> None:
        """Ignore further signals (while cleaning up after the first one)."""
        for sig in self._saved:
            signal.signal(sig, signal.SIG_IGN)

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a signal came and was not held by :meth:`deferred`.

        Inside the guarded loop a delivered interrupt has already left the loop, so a signal still
        on record here is one whose exception was swallowed.
        """
        if self.received is not None and not self._defer:
            raise KeyboardInterrupt(signal.Signals(self.received).name)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold signals during the block; raise ``KeyboardInterrupt`` after it if one came."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if not self._defer and self.pending is not None:
            sig, self.pending = self.pending, None
            raise KeyboardInterrupt(signal.Signals(sig).name)


# --------------------------------------------------------------------------------------------
# the staging folder, and what a killed run leaves behind
# --------------------------------------------------------------------------------------------
def _owner_is_live(info: dict[str, Any]) -> bool:
    from hgutils.runner.preflight import lock_is_live

    return lock_is_live(info)


def remove_stale_staging(tmp: str | os.PathLike | None = None) -> list[Path]:
    """Remove the staging folders (``hgutils-run-*`` in ``tmp``, default the system's temporary folder)
    of runs that no longer run; return them.

    A folder goes when its owner record names a process on this host that is gone (or whose PID now
    belongs to a later process), or when it has no record, is empty and was untouched for
    :data:`OWNERLESS_AFTER_S`. A folder of a live run, or of a run on another host, is kept.
    """
    root = Path(tmp if tmp is not None else tempfile.gettempdir())
    removed = []
    for folder in sorted(root.glob(f"{STAGING_PREFIX}*")):
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            info = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            info = None
        except (OSError, ValueError):
            continue
        if info is None:
            with contextlib.suppress(OSError):
                if not any(folder.iterdir()) and time.time() - folder.stat().st_mtime > OWNERLESS_AFTER_S:
                    folder.rmdir()
                    removed.append(folder)
            continue
        if isinstance(info, dict) and not _owner_is_live(info):
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(folder)
    return removed


def make_staging() -> Path:
    """A fresh staging folder ``$TMPDIR/hgutils-run-*`` holding its owner record (stale ones removed first)."""
    from hgutils.runner.preflight import _process_started

    remove_stale_staging()
    folder = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX))
    owner = {"pid": os.getpid(), "host": socket.gethostname(), "process_started": _process_started(os.getpid())}
    (folder / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")
    return folder


def _watch(parent: int, staging: str | None) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    with contextlib.suppress(Exception):  # the runner is gone: nobody will read this worker's results
        terminate_processes(descendants(), grace=2.0)
    if staging:
        shutil.rmtree(staging, ignore_errors=True)
    os._exit(1)


def watch_parent(parent: int, staging: str | None = None) -> None:
    """In a worker process: exit, with the kernels it started and the run's ``staging`` folder, once
    process ``parent`` (the runner) is gone -- checked every :data:`PARENT_POLL_S` by a daemon thread
    (a SIGKILLed runner cannot stop its workers; the worker's parent PID then changes)."""
    threading.Thread(target=_watch, args=(parent, staging), name="hgutils-parent-watch", daemon=True).start()
