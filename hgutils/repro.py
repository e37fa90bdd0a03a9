"""Reproducibility: seeding, config hashing, an atomic on-disk cache, where a run writes.

- :func:`seed_everything` -- one call seeds Python, NumPy and torch (CPU and CUDA).
- :func:`config_hash` -- a stable short hash of any JSON-like config (dataclasses included).
- :func:`cached` -- ``cached(name, config, fn)`` computes ``fn()`` once per config and stores it
  under ``cache_dir()/name/<hash>.pt``; writes are atomic (temp file + ``os.replace``), entries hold
  tensors and plain data only (:mod:`hgutils.tensorfile`, read without unpickling) and a corrupt or
  partial entry is detected (checksum footer) and recomputed.
- :func:`output_dirs` -- where a notebook run writes; in a Jupyter kernel it also starts the
  :class:`~hgutils.device_log.DeviceLog`, which records the device every later cell computed on.

Progress bars are :mod:`hgutils.progress`; the claims ledger is :mod:`hgutils.ledger`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from hgutils import tensorfile
from hgutils.atomic import atomic_write_bytes
from hgutils.device_log import start_device_log

log = logging.getLogger("hgutils")

REPO_ROOT = Path(__file__).resolve().parent.parent

T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# seeding and hashing
# --------------------------------------------------------------------------------------------
def seed_everything(seed: int) -> torch.Generator:
    """Seed ``random``, ``numpy`` and ``torch`` (all devices); return a seeded CPU generator.

    Same seed and same scale give the same numbers on the same machine. Deterministic CUDA
    kernels are not forced (that would make paper-scale GPU runs much slower).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"__dataclass__": type(obj).__name__, **_jsonable(dataclasses.asdict(obj))}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().tolist()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, (torch.dtype, torch.device)):
        return str(obj)
    raise TypeError(f"config_hash cannot hash a {type(obj).__name__}: {obj!r}")


def config_hash(obj: Any, length: int = 16) -> str:
    """Stable hex digest (sha256, first ``length`` chars) of a JSON-like config.

    Dict key order does not matter; dataclasses hash by class name and fields; tensors and arrays
    by value. Unsupported objects raise ``TypeError`` rather than hashing their ``repr``.
    """
    blob = json.dumps(_jsonable(obj), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def source_fingerprint(paths: Sequence[str | os.PathLike]) -> str:
    """sha256 (16 hex chars) of the Python sources at ``paths`` -- files, or every ``*.py`` below a
    folder -- in sorted order, each with its path relative to the package: a cache key part that
    changes with any edit to the code that computed the cached value."""
    root = Path(__file__).resolve().parent
    files: set[Path] = set()
    for p in map(Path, paths):
        files.update(sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else [])
    h = hashlib.sha256()
    for f in sorted(files):
        rel = f.resolve().relative_to(root) if f.resolve().is_relative_to(root) else Path(f.name)
        h.update(rel.as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# atomic files and the on-disk cache
# --------------------------------------------------------------------------------------------
#: v2: the payload is :mod:`hgutils.tensorfile` (tensors and plain data, loaded without unpickling);
#: a v1 entry (a pickle) is never loaded: it reads as unreadable and is recomputed
_MAGIC = b"HGUTILS-CACHE-v2\n"


def save_checked(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` atomically in the tensor-only format (:mod:`hgutils.tensorfile`), with a header and a
    sha256 footer over the payload.

    Raises
    ------
    TypeError
        If ``obj`` holds something that format cannot store (it holds no code: no arbitrary objects).
    """

    payload = tensorfile.dumps(obj)
    digest = hashlib.sha256(payload).digest()
    atomic_write_bytes(path, _MAGIC + payload + digest)


def load_checked(path: str | os.PathLike) -> Any:
    """Load a file written by :func:`save_checked`: tensors and plain data only, nothing is unpickled.

    Raises
    ------
    ValueError
        If the file is truncated, has a bad header (an older, pickled entry included) or its checksum
        does not match.
    """

    raw = Path(path).read_bytes()
    if not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + 32:
        raise ValueError(f"{path}: not an hgutils cache file (bad header or truncated)")
    payload, digest = raw[len(_MAGIC) : -32], raw[-32:]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError(f"{path}: checksum mismatch (partial or corrupt write)")
    return tensorfile.loads(payload)


def cache_dir() -> Path:
    """Cache root: ``$HGUTILS_CACHE`` if set, else ``<repo>/.cache`` (ignored by git).

    A notebook opened in Jupyter or checked by nbval uses ``<repo>/.cache``; the runner
    (``python -m hgutils reproduce|sweep``) sets ``$HGUTILS_CACHE`` for its kernels to
    ``<output root>/.cache`` unless it is already set (docs/guarantees.md).
    """
    return Path(os.environ.get("HGUTILS_CACHE", REPO_ROOT / ".cache"))


def cached(name: str, config: Any, fn: Callable[[], T], *, root: str | os.PathLike | None = None) -> T:
    """Return ``fn()``, computed once per ``(name, config)`` and stored on disk.

    The entry lives at ``<root>/<name>/<config_hash(config)>.pt``. A missing, truncated or corrupt
    entry is (re)computed; hits and misses are logged to the ``hgutils`` logger, never printed, so
    notebook output does not depend on whether the cache was warm. Entries hold tensors and plain
    data only (:mod:`hgutils.tensorfile`): reading one runs no code.
    """
    if not name or any(ch in name for ch in "/\\"):
        raise ValueError(f"cache name must be a non-empty name without slashes; got {name!r}")
    path = Path(root if root is not None else cache_dir()) / name / f"{config_hash(config)}.pt"
    if path.exists():
        try:
            value = load_checked(path)
            log.info("cache hit %s", path)
            return value
        except Exception as exc:  # corrupt or partial: recompute
            log.warning("cache entry %s unreadable (%s); recomputing", path, exc)
    value = fn()
    save_checked(path, value)
    log.info("cache write %s", path)
    return value


# --------------------------------------------------------------------------------------------
# output locations
# --------------------------------------------------------------------------------------------
def output_dirs(
    notebook: str,
    scale: str,
    results_dir: str | os.PathLike | None = None,
    figures_dir: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """Where a notebook run writes: ``(<results>/<scale>/<notebook>, <figures>/<scale>)``, created.

    With neither folder given (a notebook opened in Jupyter), these are the repository's
    ``results/`` and ``figures/``. A run that names its ``results_dir`` but no ``figures_dir`` keeps
    its figures beside its results (``<results_dir>/figures``), so nothing it writes lands in the
    repository's tracked ``figures/``. The runner (``python -m hgutils``) always passes both.
    """
    res = Path(results_dir) if results_dir else REPO_ROOT / "results"
    if figures_dir:
        fig = Path(figures_dir)
    else:
        fig = Path(results_dir) / "figures" if results_dir else REPO_ROOT / "figures"
    out_res, out_fig = res / scale / notebook, fig / scale
    out_res.mkdir(parents=True, exist_ok=True)
    out_fig.mkdir(parents=True, exist_ok=True)
    start_device_log()
    return out_res, out_fig
