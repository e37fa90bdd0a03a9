"""An explicitly given data location must hold data: checked before anything runs.

``--data-dir``, ``-p data_dir`` and ``$HGUTILS_DATA`` are locations the user chose; a wrong one must
stop the run (exit 2) instead of letting the notebooks fall back to a stand-in. A location passes
when it is a folder holding at least one dataset layout the library loads (see
:func:`datasets_present`). Stand-ins happen only when no location was given at all.

The test is a shallow look at file and folder names (no file is opened), mirroring the layouts of
:mod:`hgutils.data` (docs/data.md). When ``hgutils.data.resolve`` provides its own
``datasets_present(folder) -> list[str]``, that one is used instead, so the two cannot drift.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

ENV_VAR = "HGUTILS_DATA"

DatasetFinder = Callable[[Path], list[str]]


def _has(folder: Path, names: list[str]) -> bool:
    return any((folder / n).exists() for n in names)


def _idx_in(folder: Path) -> bool:
    stems = ["train-images-idx3-ubyte", "train-images.idx3-ubyte", "t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"]
    return _has(folder, [s + ext for s in stems for ext in ("", ".gz")])


def _cifar_in(root: Path, n: str) -> bool:
    subs = [f"cifar{n}", f"cifar-{n}", f"CIFAR{n}", f"CIFAR-{n}", f"cifar{n}-images"]
    pickles = "cifar-10-batches-py" if n == "10" else "cifar-100-python"
    zip_pat = re.compile(rf"^cifar-?{n}(?!\d).*\.zip$", re.IGNORECASE)
    for folder in [root] + [root / s for s in subs]:
        if not folder.is_dir():
            continue
        if (folder / pickles).is_dir() or (folder.name == pickles):
            return True
        if any(zip_pat.match(p.name) for p in folder.iterdir() if p.is_file()):
            return True
        if folder is not root and ((folder / "train").is_dir() or (folder / "test").is_dir()):
            return True
    return False


def _builtin_datasets_present(folder: Path) -> list[str]:
    """Names of the dataset layouts found in ``folder`` (shallow: names only, nothing is read)."""
    found = []
    if _cifar_in(folder, "10"):
        found.append("cifar10")
    if _cifar_in(folder, "100"):
        found.append("cifar100")
    fashion = ["fashion_mnist", "fashion-mnist", "FashionMNIST", "FashionMNIST/raw", "fashion"]
    mnist = ["mnist", "MNIST", "MNIST/raw"]
    own_idx = _idx_in(folder)
    if any(_idx_in(folder / s) for s in mnist) or (own_idx and "fashion" not in folder.name.lower()):
        found.append("mnist")
    if any(_idx_in(folder / s) for s in fashion) or (own_idx and "fashion" in folder.name.lower()):
        found.append("fashion_mnist")
    csv = re.compile(r"^(train|valid|test)_.+\.csv$")
    for sub in (folder, folder / "teb", folder / "TEB"):
        if sub.is_dir() and any(csv.match(p.name) for p in sub.iterdir()):
            found.append("teb")
            break
    for sub in (folder / "gue", folder / "GUE"):
        if sub.is_dir() and any(sub.rglob("train.csv")):
            found.append("gue")
            break
    return found


def datasets_present(folder: Path) -> list[str]:
    """The datasets a folder holds: ``hgutils.data.resolve.datasets_present`` if the library has it."""
    try:
        from hgutils.data import resolve

        finder = getattr(resolve, "datasets_present", None)
    except ImportError:  # pragma: no cover - hgutils.data is part of the package
        finder = None
    return list((finder or _builtin_datasets_present)(Path(folder)))


def check_data_dir(
    path: str | os.PathLike, origin: str = "--data-dir", finder: DatasetFinder | None = None
) -> list[str]:
    """Check an explicitly given data location; return the datasets it holds.

    Raises
    ------
    ValueError
        If ``path`` does not exist, is not a folder, or holds none of the datasets the library
        loads (one line saying so, and what would have been accepted).
    """
    finder = finder or datasets_present
    p = check_data_path(path, origin)
    found = finder(p)
    if not found:
        raise ValueError(
            f"{origin} {str(path)!r} holds none of the datasets hgutils loads (CIFAR pickles/zip/image folder, "
            "MNIST/Fashion-MNIST IDX files, teb/*.csv, GUE/<task>/train.csv); "
            "leave it out to use the packaged or generated data"
        )
    return found


def check_data_path(path: str | os.PathLike, origin: str = "--data-dir") -> Path:
    """The quick half of :func:`check_data_dir` (the location exists and is a folder), run before any import.

    Raises
    ------
    ValueError
        If ``path`` does not exist or is not a folder.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ValueError(f"{origin} {str(path)!r} does not exist; give a folder holding the datasets, or leave it out")
    if not p.is_dir():
        raise ValueError(f"{origin} {str(path)!r} is not a folder")
    return p


def check_data_env_paths() -> list[Path]:
    """:func:`check_data_path` for every folder of ``$HGUTILS_DATA``."""
    env = os.environ.get(ENV_VAR, "")
    return [check_data_path(part, ENV_VAR) for part in env.split(os.pathsep) if part.strip()]


def check_data_env(finder: DatasetFinder | None = None) -> dict[str, list[str]]:
    """Check every folder of ``$HGUTILS_DATA`` (``os.pathsep``-separated); ``{}`` when it is unset or empty."""
    env = os.environ.get(ENV_VAR, "")
    return {part: check_data_dir(part, ENV_VAR, finder) for part in env.split(os.pathsep) if part.strip()}


def data_summary(data_dir: str | None, finder: DatasetFinder | None = None) -> dict[str, object]:
    """What a run was given, for its ``run.json``: the explicit folder, ``$HGUTILS_DATA``, datasets found there.

    Never raises (the checks above ran before launch); a folder that cannot be read is reported.
    """
    out: dict[str, object] = {"data_dir": data_dir, ENV_VAR: os.environ.get(ENV_VAR) or None}
    folders = ([data_dir] if data_dir else []) + [
        p for p in (os.environ.get(ENV_VAR) or "").split(os.pathsep) if p.strip()
    ]
    found: dict[str, object] = {}
    for folder in folders:
        try:
            found[folder] = (finder or datasets_present)(Path(folder).expanduser())
        except OSError as err:
            found[folder] = f"unreadable: {err}"
    out["found"] = found
    if not folders:
        out["note"] = "no location given: notebooks use packaged copies or their named stand-ins"
    return out
