"""Writing files atomically, with the mode a plain ``open()`` gives under the user's umask.

Standard library only, so the command line can use it before any heavy import.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path


@functools.lru_cache(maxsize=1)
def file_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same folder, fsync, ``os.replace``.

    The file gets the mode a plain ``open()`` would give it under the user's umask (``0644`` under
    ``umask 022``), not the ``0600`` of a temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Text version of :func:`atomic_write_bytes` (UTF-8)."""
    atomic_write_bytes(path, text.encode("utf-8"))
