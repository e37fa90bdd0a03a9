"""Chunked, resumable zoo generation and the zoo cache.

The networks of a zoo are generated in chunks of ``chunk_size``; each finished chunk is written
atomically with :func:`hgutils.repro.save_checked` under ``<cache>/<zoo name>/<config hash>.chunks/``.
An interrupted run restarts from the chunks on disk (a truncated or corrupt chunk fails its checksum
and is recomputed). Network ``i``'s initialisation and hyperparameters depend only on
``(seed, i)`` (:func:`net_seeds`), so results do not depend on the chunking. The assembled zoo is
stored with :func:`hgutils.repro.cached` (:func:`cached_zoo`).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from hgutils.parallel import forked_map
from hgutils.repro import cache_dir, cached, config_hash, load_checked, save_checked

log = logging.getLogger("hgutils")


def chunk_dir(name: str, config: Any, root: str | Path | None) -> Path:
    return Path(root if root is not None else cache_dir()) / name / f"{config_hash(config)}.chunks"


def generate_chunked(
    name: str,
    config: Any,
    n_total: int,
    chunk_size: int,
    make_chunk: Callable[[int, int], dict[str, Tensor]],
    *,
    root: str | Path | None = None,
    desc: str | None = None,
    persist: bool = True,
    workers: int = 1,
) -> dict[str, Tensor]:
    """Run ``make_chunk(start, stop)`` over ``[0, n_total)`` in chunks, resuming from chunks on disk.

    Each chunk's result (a dict of tensors with first dimension ``stop - start``) is written
    atomically with a checksum; existing valid chunks are loaded instead of recomputed, corrupt
    ones are recomputed. Returns the chunks concatenated along dimension 0. ``persist=False`` keeps
    everything in memory (no files). ``workers > 1`` computes the missing chunks in that many
    processes forked from this one, one thread each (CPU only: never fork a process that holds a GPU
    context); a chunk depends only on its bounds, so the zoo is the same.
    """
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive; got {chunk_size}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    folder = chunk_dir(name, config, root)
    bounds = [(s, min(s + chunk_size, n_total)) for s in range(0, n_total, chunk_size)]
    parts: dict[int, dict[str, Tensor]] = {}
    for c, (start, stop) in enumerate(bounds):
        path = folder / f"chunk_{c:05d}_{start}_{stop}.pt"
        if persist and path.exists():
            try:
                parts[c] = load_checked(path)
                log.info("zoo chunk %s loaded", path)
            except Exception as exc:  # corrupt or truncated: redo it
                log.warning("zoo chunk %s unreadable (%s); recomputing", path, exc)
    todo = [c for c in range(len(bounds)) if c not in parts]
    label = desc or name
    parts_todo = forked_map(lambda b: make_chunk(*b), [bounds[c] for c in todo], workers, label)
    for c, part in zip(todo, parts_todo):
        start, stop = bounds[c]
        if persist:
            save_checked(folder / f"chunk_{c:05d}_{start}_{stop}.pt", part)
        parts[c] = part
    return {k: torch.cat([parts[c][k] for c in range(len(bounds))]) for k in parts[0]}


def cached_zoo(
    name: str, config: Any, build: Callable[[], dict[str, Any]], root: str | Path | None, use_cache: bool
) -> dict[str, Any]:
    if not use_cache:
        return build()
    out = cached(name, config, build, root=root)
    shutil.rmtree(chunk_dir(name, config, root), ignore_errors=True)  # assembled entry now on disk
    return out


def net_seeds(seed: int, start: int, stop: int) -> list[int]:
    """Per-network seeds: network ``i`` of a zoo with base ``seed`` uses ``seed * 1_000_003 + i``."""
    return [int(seed) * 1_000_003 + i for i in range(start, stop)]


def storage_dtype(name: str) -> torch.dtype:
    if name not in ("float32", "float16"):
        raise ValueError(f"snapshot_dtype must be 'float32' or 'float16'; got {name!r}")
    return getattr(torch, name)
