"""Reading the image formats a dataset copy comes in: IDX files (the MNIST format, :func:`read_idx`), the
CIFAR python pickles (read with a restricted unpickler that loads numpy arrays and plain containers only),
and image folders ``<split>/<class>/*.jpg|png`` as a directory or inside a zip (decoded once and cached,
:func:`hgutils.repro.cached`). Where each dataset's copy is looked for, and in which order, is
:mod:`hgutils.data.images`.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import re
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hgutils.data.resolve import first_existing, stratified_order
from hgutils.progress import progress
from hgutils.repro import cache_dir, cached, config_hash

_IMAGE_EXT = (".jpg", ".jpeg", ".png", ".bmp")


# --------------------------------------------------------------------------------------------
# IDX files
# --------------------------------------------------------------------------------------------
_IDX_DTYPES: dict[int, str] = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (the MNIST format), gzipped if the name ends in ``.gz``.

    Format: two zero bytes, a type byte (``0x08`` uint8, ``0x09`` int8, ``0x0B`` int16, ``0x0C``
    int32, ``0x0D`` float32, ``0x0E`` float64), the number of dimensions ``d``, then ``d`` big-endian
    uint32 sizes, then the data in C order, big-endian.

    Raises
    ------
    ValueError
        On a bad magic number, unknown type or a truncated/oversized payload.
    """
    path = Path(path)
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (expected two zero bytes then type and ndim)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise ValueError(
            f"{path}: unknown IDX type byte 0x{code:02x}; expected one of {sorted(hex(c) for c in _IDX_DTYPES)}"
        )
    header = 4 + 4 * ndim
    dims = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_IDX_DTYPES[code])
    count = int(np.prod(dims)) if ndim else 1
    if len(raw) - header != count * dtype.itemsize:
        raise ValueError(
            f"{path}: IDX header says shape {dims} ({count * dtype.itemsize} bytes) but the "
            f"payload has {len(raw) - header} bytes"
        )
    arr = np.frombuffer(raw, dtype=dtype, count=count, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))


def _idx_pair(folder: Path, split: str) -> tuple[Path, Path] | None:
    """``(images, labels)`` IDX paths for ``split`` in ``folder`` (``.gz`` or not), else ``None``."""
    prefix = "train" if split == "train" else "t10k"
    found = []
    for kind, nd in (("images", 3), ("labels", 1)):
        names = [f"{prefix}-{kind}-idx{nd}-ubyte", f"{prefix}-{kind}.idx{nd}-ubyte"]
        p = first_existing(folder / (n + ext) for n in names for ext in ("", ".gz"))
        if p is None:
            return None
        found.append(p)
    return found[0], found[1]


def _load_idx_split(folder: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    pair = _idx_pair(folder, split)
    if pair is None:
        raise FileNotFoundError(f"{folder}: no IDX images/labels files for split {split!r}")
    x, y = read_idx(pair[0]), read_idx(pair[1])
    if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
        raise ValueError(
            f"{folder}: IDX images {x.shape} and labels {y.shape} do not match (expected [N, H, W] and [N])"
        )
    return x[:, None], y.astype(np.int64)


def _idx_dirs(root: Path, name: str) -> list[Path]:
    if name == "mnist":
        subs = ["mnist", "MNIST", "MNIST/raw"]
        own = "fashion" not in root.name.lower()
    else:
        subs = ["fashion_mnist", "fashion-mnist", "FashionMNIST", "FashionMNIST/raw", "fashion"]
        own = "fashion" in root.name.lower()
    return ([root] if own else []) + [root / s for s in subs]


# --------------------------------------------------------------------------------------------
# CIFAR python pickles (read with a restricted unpickler: numpy arrays and plain containers only)
# --------------------------------------------------------------------------------------------
class _NumpyOnlyUnpickler(pickle.Unpickler):
    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refusing to load {module}.{name} from a CIFAR pickle (only numpy arrays and plain containers are allowed)"
        )


def _unpickle(path: Path) -> dict[str, Any]:
    with open(path, "rb") as fh:
        obj = _NumpyOnlyUnpickler(fh, encoding="bytes").load()
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a dict in the CIFAR pickle; got {type(obj).__name__}")
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in obj.items()}


def _names(values: Any) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def _cifar_pickle_dir(root: Path, name: str) -> Path | None:
    folder = "cifar-10-batches-py" if name == "cifar10" else "cifar-100-python"
    cands = [root] if root.name == folder else []
    cands += [root / folder] + [root / sub / folder for sub in _cifar_subdirs(name)]
    marker = "batches.meta" if name == "cifar10" else "meta"
    return first_existing(c for c in cands if (c / marker).exists())


def _load_cifar_pickles(folder: Path, name: str, split: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    if name == "cifar10":
        files = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
        meta, label_key, names_key = _unpickle(folder / "batches.meta"), "labels", "label_names"
    else:
        files = ["train"] if split == "train" else ["test"]
        meta, label_key, names_key = _unpickle(folder / "meta"), "fine_labels", "fine_label_names"
    xs, ys = [], []
    for f in files:
        batch = _unpickle(folder / f)
        data = np.asarray(batch["data"], dtype=np.uint8)
        if data.ndim != 2 or data.shape[1] != 3072:
            raise ValueError(f"{folder / f}: expected data of shape [N, 3072]; got {data.shape}")
        xs.append(data.reshape(-1, 3, 32, 32))
        ys.append(np.asarray(batch[label_key], dtype=np.int64))
    return np.concatenate(xs), np.concatenate(ys), _names(meta[names_key])


# --------------------------------------------------------------------------------------------
# image folders: train/<class>/*.jpg, as a directory or inside a zip
# --------------------------------------------------------------------------------------------
def _cifar_subdirs(name: str) -> list[str]:
    n = name[len("cifar") :]
    return [f"cifar{n}", f"cifar-{n}", f"CIFAR{n}", f"CIFAR-{n}", f"cifar{n}-images"]


def _cifar_zip(root: Path, name: str) -> Path | None:
    n = name[len("cifar") :]
    pat = re.compile(rf"^cifar-?{n}(?!\d).*\.zip$", re.IGNORECASE)
    for folder in [root] + [root / s for s in _cifar_subdirs(name)]:
        if folder.is_dir():
            hits = sorted(p for p in folder.iterdir() if pat.match(p.name) and p.is_file())
            if hits:
                return hits[0]
    return None


def _cifar_folder(root: Path, name: str, split: str) -> Path | None:
    return first_existing(root / s / split for s in _cifar_subdirs(name) if (root / s / split).is_dir())


def _folder_members(names: list[str], split: str) -> list[tuple[str, str]]:
    """``[(member, class)]`` for names ``.../<split>/<class>/<file>.<img>``, sorted by member."""
    out = []
    for member in names:
        parts = member.replace("\\", "/").split("/")
        if (
            len(parts) >= 3
            and parts[-3] == split
            and parts[-1].lower().endswith(_IMAGE_EXT)
            and not parts[-1].startswith(".")
        ):
            out.append((member, parts[-2]))
    return sorted(out)


def _decode(blobs: Callable[[str], bytes], members: list[str]) -> np.ndarray:
    from PIL import Image

    arrays = []
    for m in progress(members, desc="decoding images"):
        with Image.open(io.BytesIO(blobs(m))) as im:
            arr = np.asarray(im.convert("RGB"), dtype=np.uint8)
        if arrays and arr.shape != arrays[0].shape:
            raise ValueError(
                f"image {m} has shape {arr.shape}, the first one {arrays[0].shape}; "
                "an image folder must hold images of one size"
            )
        arrays.append(arr)
    if not arrays:
        return np.zeros((0, 3, 0, 0), dtype=np.uint8)
    return np.stack(arrays).transpose(0, 3, 1, 2).copy()


def _load_image_folder(
    path: Path, split: str, limit: int | None, seed: int
) -> tuple[np.ndarray, np.ndarray, list[str], bool]:
    """Decode an image-folder split from a directory or zip; cached (see :func:`hgutils.repro.cached`).

    Returns ``(uint8 [n, 3, H, W] in stratified order, labels, classes, any_jpeg)``. Without a limit the
    whole split is decoded once (in file-name order) and cached; with a limit, the full cache entry is
    used if it exists, else only the first ``limit`` images of the stratified order are decoded (and
    cached under that limit and seed).
    """

    if path.is_file():
        with zipfile.ZipFile(path) as zf:
            members = _folder_members(zf.namelist(), split)
        stat = path.stat()
        fingerprint: dict[str, Any] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    else:
        names = [str(p.relative_to(path.parent)) for p in sorted(path.rglob("*")) if p.is_file()]
        members = _folder_members(names, split)
        stats = [(path.parent / m).stat() for m, _ in members]
        fingerprint = {
            "n": len(stats),
            "size": sum(s.st_size for s in stats),
            "mtime_ns": max((s.st_mtime_ns for s in stats), default=0),
        }
    if not members:
        raise ValueError(f"{path}: no images under {split}/<class>/ (expected {split}/<class>/*.jpg|png)")
    classes = sorted({c for _, c in members})
    cls_index = {c: i for i, c in enumerate(classes)}
    labels = np.array([cls_index[c] for _, c in members], dtype=np.int64)
    order = stratified_order(labels, seed)
    wanted = order if limit is None else order[:limit]
    any_jpeg = any(m.lower().endswith((".jpg", ".jpeg")) for m, _ in members)

    def decode(idx: np.ndarray) -> torch.Tensor:
        chosen = [members[i][0] for i in idx]
        if path.is_file():
            with zipfile.ZipFile(path) as zf:
                return torch.from_numpy(_decode(zf.read, chosen))
        return torch.from_numpy(_decode(lambda m: (path.parent / m).read_bytes(), chosen))

    key = {"path": str(path.resolve()), "split": split, **fingerprint, "format": 1}
    full_entry = cache_dir() / "image_folder" / f"{config_hash(key)}.pt"  # layout of repro.cached
    if limit is None or full_entry.exists():
        full = cached("image_folder", key, lambda: decode(np.arange(len(members))))
        x = full.numpy()[wanted]
    else:
        x = cached("image_folder", {**key, "limit": int(limit), "seed": seed}, lambda: decode(wanted)).numpy()
    return x, labels[wanted], classes, any_jpeg
