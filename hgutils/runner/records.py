"""Run keys and run records: what makes a finished run reusable, and writing its outputs safely.

A run's **key** holds everything its numbers depend on that the runner can see:

- the notebook (stem) and a hash of its code cells (:func:`~hgutils.runner.notebooks.notebook_fingerprint`);
- the scale and every parameter passed to it (fixed and swept; output folders excluded);
- the hgutils version and a hash of the library's source (:func:`library_fingerprint`);
- ``$HGUTILS_DATA`` (which copy of the data an unnamed location resolves to).

A **record** (``run.json``) is written beside the outputs, atomically and last, only when the run
completed: ``{"key": ..., "key_hash": ..., "files": {path: size}, "seconds": ..., "data": ...}``.
A run is complete exactly when its record exists, its key equals the expected key and every file it
lists is present with its recorded size (:func:`is_complete`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from hgutils.atomic import atomic_write_bytes, atomic_write_text
from hgutils.device_log import device_summary
from hgutils.runner.notebooks import REPO_ROOT, notebook_fingerprint
from hgutils.runner.params import to_papermill

PACKAGE_DIR = REPO_ROOT / "hgutils"
#: Parts of the package that do not change any notebook's numbers (the runner itself).
_NOT_FINGERPRINTED = ("runner", "__main__.py")


@lru_cache(maxsize=1)
def library_fingerprint() -> str:
    """sha256 (16 hex) of the hgutils source (every ``*.py`` except the runner) and its version.

    Any change to library code changes it, so results computed by older code are not reused.
    """
    import hgutils

    pkg = Path(hgutils.__file__).resolve().parent
    h = hashlib.sha256(f"hgutils {hgutils.__version__}\n".encode())
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.split("/")[0] in _NOT_FINGERPRINTED or "__pycache__" in rel:
            continue
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def run_key(notebook: str, source: bytes, scale: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The key of one run (see module docstring); JSON-serialisable, order-independent."""
    import hgutils

    params = {k: to_papermill(v) for k, v in sorted(parameters.items()) if k not in ("results_dir", "figures_dir")}
    return {
        "notebook": notebook,
        "notebook_code": notebook_fingerprint(source),
        "scale": scale,
        "parameters": params,
        "hgutils": {"version": hgutils.__version__, "source": library_fingerprint()},
        "HGUTILS_DATA": os.environ.get("HGUTILS_DATA") or None,
    }


def ledger_device(files: dict[str, bytes], requested: str | None = None) -> str:
    """The device the run's ledgers (``*/claims.json`` among ``files``) record, as one phrase; ``""`` if none.

    ``"cuda:0"``, ``"cpu"``, or ``"cpu, although cuda was asked for"`` (see
    :func:`hgutils.device_log.device_summary`); ``requested`` stands in for a ledger that did not record it.
    """

    phrases = []
    for rel, data in sorted(files.items()):
        if not rel.endswith("/claims.json"):
            continue
        try:
            rec = json.loads(data).get("device")
        except (ValueError, AttributeError):
            continue
        if isinstance(rec, dict):
            phrase = device_summary({"requested": requested} | {k: v for k, v in rec.items() if v is not None})
            if phrase and phrase not in phrases:
                phrases.append(phrase)
    return "; ".join(phrases)


def key_hash(key: dict[str, Any]) -> str:
    """sha256 (16 hex) of a key's canonical JSON."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at ``path``, or ``None`` if it is missing or unreadable."""
    try:
        rec = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def is_complete(record_path: Path, key: dict[str, Any], root: Path) -> bool:
    """True when ``record_path`` records ``key`` and every listed file (relative to ``root``) is intact."""
    rec = read_record(record_path)
    if rec is None or rec.get("key_hash") != key_hash(key):
        return False
    files = rec.get("files", {})
    try:
        return all((root / rel).stat().st_size == size for rel, size in files.items())
    except OSError:
        return False


def _safe_rel(rel: str) -> Path:
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"refusing to write outside the output folder: {rel!r}")
    return p


def _record(key: dict[str, Any], files: dict[str, bytes], extra: dict[str, Any]) -> str:
    rec = {
        "key": key,
        "key_hash": key_hash(key),
        "files": {rel: len(data) for rel, data in sorted(files.items())},
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **extra,
    }
    return json.dumps(rec, indent=2, ensure_ascii=False) + "\n"


def write_into(root: Path, files: dict[str, bytes], record: str, key: dict[str, Any], extra: dict[str, Any]) -> None:
    """Write ``files`` under ``root`` (each atomically), then the record ``root/record`` last.

    Any existing record is removed first, so an interruption in between leaves the run incomplete,
    never a record that describes files it did not write.
    """

    root = Path(root)
    (root / record).unlink(missing_ok=True)
    for rel, data in sorted(files.items()):
        atomic_write_bytes(root / _safe_rel(rel), data)
    atomic_write_text(root / record, _record(key, files, extra))


def replace_dir(dest: Path, files: dict[str, bytes], record: str, key: dict[str, Any], extra: dict[str, Any]) -> None:
    """Make ``dest`` hold exactly ``files`` plus the record: written aside, then swapped in by renames.

    Leftovers of an interrupted swap are hidden ``.<name>.incoming-*`` / ``.<name>.old-*`` folders,
    removed by :func:`clean_leftovers`.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:8]
    incoming = dest.parent / f".{dest.name}.incoming-{tag}"
    old = dest.parent / f".{dest.name}.old-{tag}"
    moved = False
    try:
        for rel, data in files.items():
            target = incoming / _safe_rel(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (incoming / record).write_text(_record(key, files, extra), encoding="utf-8")
        if dest.exists():
            os.replace(dest, old)
            moved = True
        os.replace(incoming, dest)
    except BaseException:
        if moved and not dest.exists():
            os.replace(old, dest)
        raise
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def clean_leftovers(folder: Path) -> None:
    """Remove hidden ``.*.incoming-*`` / ``.*.old-*`` folders an interrupted :func:`replace_dir` left."""
    if not Path(folder).is_dir():
        return
    for p in Path(folder).iterdir():
        if p.is_dir() and p.name.startswith(".") and (".incoming-" in p.name or ".old-" in p.name):
            shutil.rmtree(p, ignore_errors=True)
