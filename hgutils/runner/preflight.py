"""Pre-flight checks of a run, before any notebook starts: the device, the output root, its lock.

- :func:`check_device` -- the requested device exists here (a CPU-only torch build is recognised
  from ``torch/version.py`` without importing torch, so the common mistake costs no import);
- :func:`check_writable` -- the output root can be created and written (what the check created is
  removed again when it fails, so a refused run leaves nothing behind);
- :func:`check_cache` -- so can the cache folder the kernels will write (``$HGUTILS_CACHE`` or
  ``<out>/.cache``); :func:`check_file_writable` -- a file such as ``claims``' ``CLAIMS.md``;
- :class:`RunLock` -- one ``reproduce`` or ``sweep`` per output root: a lock file holding the
  owner's PID, host, start time and command; a second run on a locked root is refused, a lock whose
  process is gone (or whose PID now belongs to another process) is taken over with a note.

Each check raises ``ValueError`` with one line naming what was asked, what was found and what to do,
which the command line prints as its ``error:`` line (exit status 2).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hgutils.atomic import file_mode

LOCK_NAME = ".hgutils.lock"
_DEVICE = re.compile(r"^(cpu|mps|cuda)(?::(\d+))?$")


# --------------------------------------------------------------------------------------------
# the device
# --------------------------------------------------------------------------------------------
def torch_build() -> dict[str, str | None]:
    """``{"version", "cuda"}`` of the installed torch, read from ``torch/version.py`` without importing torch.

    ``cuda`` is the CUDA version the build was compiled for, ``None`` for a CPU-only build; ``hip`` the
    ROCm version of an AMD build (whose GPUs torch also calls ``cuda``).

    Raises
    ------
    ValueError
        If torch is not installed.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        raise ValueError(f"torch is not installed in {sys.executable}; install the project first (make venv)")
    text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    out: dict[str, str | None] = {}
    for key in ("__version__", "cuda", "hip"):
        m = re.search(rf"^{key}\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\")", text, re.MULTILINE)
        out["version" if key == "__version__" else key] = (m.group(1) or m.group(2)) if m else None
    return out


def cuda_install_hint(version: str | None) -> str:
    """The install step for a CUDA build of the same torch version (PyPI's Linux wheels are CUDA builds)."""
    plain = (version or "").split("+")[0]
    spec = f"torch=={plain}" if plain else "torch"
    return (
        f"install a CUDA build of torch with `make torch-cuda` (= `{sys.executable} -m pip install "
        f"--force-reinstall {spec}` from PyPI; other CUDA versions: https://pytorch.org/get-started/locally/)"
    )


def _cuda_devices() -> int:  # pragma: no cover - needs a CUDA build; replaced in the tests
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _mps_available() -> bool:  # pragma: no cover - needs macOS (other platforms are refused before)
    import torch

    return bool(torch.backends.mps.is_available())


def check_device(
    device: str,
    *,
    build: Callable[[], dict[str, str | None]] | None = None,
    cuda_devices: Callable[[], int] | None = None,
    mps_available: Callable[[], bool] | None = None,
) -> str:
    """Check that ``device`` (``cpu``, ``cuda``, ``cuda:N``, ``mps``) can be used here; return it.

    ``cpu`` needs nothing. For ``cuda`` a CPU-only torch build is refused from its version file
    alone (no import); a CUDA build imports torch and needs ``torch.cuda.is_available()`` and, for
    ``cuda:N``, more than ``N`` devices. The probes (default: :func:`torch_build` and torch's own
    queries) are arguments so the tests can stand in for a GPU.

    Raises
    ------
    ValueError
        One line: the device asked for, what this machine has, the install step or the alternative.
    """
    m = _DEVICE.match(str(device))
    if not m:
        raise ValueError(f"--device must be 'cpu', 'cuda', 'cuda:N' or 'mps'; got {device!r}")
    kind, index = m.group(1), int(m.group(2) or 0)
    if kind == "cpu":
        return device
    info = (build or torch_build)()
    where = f"torch {info.get('version') or '?'} in {sys.executable}"
    if kind == "cuda":
        if not (info.get("cuda") or info.get("hip")):
            raise ValueError(
                f"--device {device}: {where} is a CPU-only build (no CUDA); {cuda_install_hint(info.get('version'))}, "
                "or use --device cpu"
            )
        n = (cuda_devices or _cuda_devices)()
        if n == 0:
            raise ValueError(
                f"--device {device}: {where} is built for CUDA {info.get('cuda') or info.get('hip')} but sees no GPU "
                "(torch.cuda.is_available() is False: no driver, or CUDA_VISIBLE_DEVICES hides the devices); "
                "use --device cpu"
            )
        if index >= n:
            raise ValueError(f"--device {device}: this machine has {n} CUDA device(s), cuda:0 to cuda:{n - 1}")
        return device
    if sys.platform != "darwin" or not (mps_available or _mps_available)():
        raise ValueError(f"--device {device}: {where} has no usable MPS backend (Apple silicon only); use --device cpu")
    return device


# --------------------------------------------------------------------------------------------
# the output root
# --------------------------------------------------------------------------------------------
def check_writable(root: str | os.PathLike, option: str = "--out", hint: str | None = None) -> list[Path]:
    """Create ``root`` if needed and write (then remove) a probe file in it; return the folders it created.

    When the check fails, every folder it created is removed again; a run that stops later before
    writing anything hands the list to :class:`RunLock`, which removes them on a failed exit.

    Raises
    ------
    ValueError
        If ``root`` (or a folder above it) is a file, or the folder cannot be created or written
        (read-only); the message names ``option`` and ends with ``hint`` (default: choose another folder).
    """
    root = Path(root).expanduser().absolute()
    created: list[Path] = []
    try:
        missing = [p for p in [root, *root.parents] if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            created.append(p)
        if not root.is_dir():
            raise NotADirectoryError(f"{root} is a file")
        fd, probe = tempfile.mkstemp(dir=root, prefix=".hgutils-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        for p in reversed(created):
            with contextlib.suppress(OSError):
                p.rmdir()
        reason = err.strerror or str(err)
        hint = hint or f"choose a folder you can write with {option}"
        raise ValueError(f"{option} {str(root)!r} cannot be written ({reason}); {hint}") from None
    return created


def check_cache(out: str | os.PathLike) -> list[Path]:
    """The cache folder a run's kernels will write can be created and written; return the folders created.

    That folder is ``$HGUTILS_CACHE`` when set, else ``<out>/.cache``
    (:func:`~hgutils.runner.execute.run_cache`); a read-only cache would otherwise fail the first
    notebook minutes in, in the middle of a cell.

    Raises
    ------
    ValueError
        One line naming ``HGUTILS_CACHE`` (or ``--out``) when the folder cannot be created or written.
    """
    explicit = os.environ.get("HGUTILS_CACHE")
    if explicit:
        hint = "set HGUTILS_CACHE to a folder you can write, or unset it (the cache is then <out>/.cache)"
        return check_writable(explicit, "HGUTILS_CACHE", hint)
    return check_writable(Path(out) / ".cache", "--out", "its cache folder .cache must be writable too")


def check_run_folders(out: str | os.PathLike, cache: bool = True) -> list[Path]:
    """:func:`check_writable` for the output root, then (with ``cache``) :func:`check_cache`; return
    the folders created. A refusal removes what the checks created: nothing is left behind."""
    created = check_writable(out)
    if not cache:
        return created
    try:
        return created + check_cache(out)
    except ValueError:
        for p in reversed(created):
            with contextlib.suppress(OSError):
                p.rmdir()
        raise


def check_file_writable(path: str | os.PathLike, option: str = "--out") -> None:
    """``path`` can be (re)written in place: a new file can be created beside it and it is not a folder.

    Raises
    ------
    ValueError
        One line naming ``option`` and the path, before anything is written.
    """
    path = Path(path).expanduser().absolute()
    if path.is_dir():
        raise ValueError(f"{option}: {str(path)!r} cannot be written (it is a folder)")
    try:
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=".hgutils-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        reason = err.strerror or str(err)
        raise ValueError(
            f"{option}: {str(path.parent)!r} cannot be written ({reason}), so {path.name} cannot be written there; "
            f"choose a folder you can write with {option}"
        ) from None


# --------------------------------------------------------------------------------------------
# one run per output root
# --------------------------------------------------------------------------------------------
def _process_started(pid: int) -> float | None:
    """The start time of process ``pid`` (``None`` when there is none)."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:  # pragma: no cover - another user's process: it exists
        return -1.0


def lock_is_live(info: dict[str, Any]) -> bool:
    """Whether the process a lock names still runs (on another host: assumed so, it cannot be seen)."""
    if info.get("host") != socket.gethostname():
        return True
    pid = info.get("pid")
    if not isinstance(pid, int):
        return False
    started = _process_started(pid)
    if started is None:
        return False
    recorded = info.get("process_started")
    # a PID reused by a later process is not the owner
    return not (isinstance(recorded, (int, float)) and started >= 0 and abs(started - recorded) > 1.0)


class RunLock:
    """Hold ``<root>/.hgutils.lock`` for the duration of a run (a context manager).

    The lock is created atomically (written aside, then hard-linked into place, which fails when a
    lock exists), holds ``{"pid", "host", "process_started", "started", "command"}`` and is removed
    on exit, also after Ctrl-C. A live lock makes :meth:`acquire` raise; a stale one is taken over
    and ``echo`` prints a note saying whose it was. ``created`` are folders the run created for its
    root (:func:`check_writable`). When the block ends (normally, interrupted or with an error),
    every folder under the root that the run created and that is still empty is removed, and so are
    the ``created`` folders when they are empty: a run refused or interrupted before its first
    result leaves nothing, and an interrupted run leaves no empty folder beside its completed results.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        command: str,
        echo: Callable[[str], None] = print,
        created: list[Path] | None = None,
    ) -> None:
        self.root = Path(root)
        self.path = self.root / LOCK_NAME
        self.command = command
        self.echo = echo
        self.created = list(created or [])
        self.held = False
        self._existing: set[str] = set()

    def _info(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "process_started": _process_started(os.getpid()),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": self.command,
        }

    def _read(self) -> dict[str, Any] | None:
        try:
            info = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return info if isinstance(info, dict) else {}

    def _try_create(self) -> bool:
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".hgutils.lock.")
        try:
            os.fchmod(fd, file_mode())
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._info(), fh)
            os.link(tmp, self.path)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def acquire(self) -> None:
        """Take the lock, or raise ``ValueError`` naming the run that holds it."""
        for _ in range(3):
            if self._try_create():
                self.held = True
                return
            info = self._read()
            if info is None:  # released in between
                continue
            if info and lock_is_live(info):
                raise ValueError(
                    f"{self.root} is in use by another run: `{info.get('command', '?')}` (PID {info.get('pid')} on "
                    f"{info.get('host')}, since {info.get('started')}); wait for it to finish or choose another --out"
                )
            # stale: move it aside (atomic; only one taker succeeds), check it is the one read, drop it
            aside = self.root / f"{LOCK_NAME}.stale-{os.getpid()}"
            try:
                os.replace(self.path, aside)
            except FileNotFoundError:
                continue
            try:
                moved = json.loads(aside.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                moved = {}
            if info and moved != info:  # someone else's fresh lock: put it back
                with contextlib.suppress(OSError):
                    os.link(aside, self.path)
                aside.unlink(missing_ok=True)
                continue
            aside.unlink(missing_ok=True)
            who = f"PID {info.get('pid')} (`{info.get('command', '?')}`, since {info.get('started')})" if info else "?"
            self.echo(f"note: took over the lock of {self.root}: its run, {who}, is no longer running")
        raise ValueError(f"{self.root}: could not take the lock {self.path}; another run keeps taking it")

    def release(self) -> None:
        """Remove the lock if this process holds it."""
        if self.held:
            info = self._read()
            if info and info.get("pid") == os.getpid():
                self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        try:
            self.acquire()
        except BaseException:
            self._remove_created()
            raise
        self._existing = {d for d, _, _ in os.walk(self.root)}
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
        self._remove_new_empty()
        self._remove_created()

    def _remove_new_empty(self) -> None:
        """Remove the empty folders under the root that did not exist when the lock was taken."""
        for d, _, _ in os.walk(self.root, topdown=False):
            if d not in self._existing:
                with contextlib.suppress(OSError):
                    os.rmdir(d)  # only an empty folder goes

    def _remove_created(self) -> None:
        for p in reversed(self.created):
            with contextlib.suppress(OSError):
                p.rmdir()  # only an empty folder goes
