"""DNA sequence datasets (TEB and GUE CSV layouts) and one-hot encoding.

Layouts (searched in ``data_dir``, then ``$HGUTILS_DATA``; nothing is packaged or downloaded):

- **TEB** (Transposable Elements Benchmark, Khan, Chlenski & Pe'er, "Hyperbolic Genome Embeddings",
  ICLR 2025): files ``<split>_<task>.csv`` with columns ``seq,label,biotype`` and splits
  ``train|valid|test``, in the folder itself or in ``teb/``. Name: ``"teb/<task>"``, e.g.
  ``"teb/dna_cmc"``, ``"teb/processed_pseudogenes"``.
- **GUE** (the DNABERT-2 benchmark): folders ``<task>/{train,dev,test}.csv`` with columns
  ``sequence,label``, in the folder itself, in ``gue/`` or ``GUE/``, or one category level deeper
  (``GUE/virus/covid/``). Name: ``"gue/<task>"``, e.g. ``"gue/covid"``.

The split names ``valid``, ``val`` and ``dev`` are synonyms.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hgutils.data.resolve import Search, check_limit, data_roots, stratified_order

DNA_CHANNELS = "ACGTN"


@dataclass
class SequenceData:
    """A sequence classification split.

    Attributes
    ----------
    seqs:
        The sequences as strings (as stored; :func:`one_hot_dna` is case-insensitive).
    labels:
        ``[N]`` int64 class indices into ``classes``.
    classes:
        Class names (the distinct label values of the file, sorted numerically when they are ints).
    source:
        Which copy was used, human-readable.
    meta:
        Per-sequence extras: TEB ``"biotype"`` (``list[str]``); for
        :func:`~hgutils.data.hierarchical_sequences` the tree ids ``"clade"``, ``"family"``,
        ``"gene"``, ``"variant"`` (int64 ``[N]``) and the generating parameters.
    """

    seqs: list[str]
    labels: torch.Tensor
    classes: list[str]
    source: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.seqs)


# --------------------------------------------------------------------------------------------
# one-hot
# --------------------------------------------------------------------------------------------
_LOOKUP = np.full(256, 4, dtype=np.int64)  # everything unknown -> N
for _i, _b in enumerate("ACGT"):
    _LOOKUP[ord(_b)] = _i
    _LOOKUP[ord(_b.lower())] = _i


def one_hot_dna(seqs: list[str], length: int | None = None) -> torch.Tensor:
    """One-hot encode DNA: ``[N, 5, L]`` float32 with channels ``A, C, G, T, N``.

    ``x[i, k, j] = 1`` iff letter ``j`` of ``seqs[i]`` is base ``k`` (case-insensitive); any other
    letter (``N``, IUPAC codes, gaps, ...) sets the ``N`` channel. Sequences longer than ``length``
    are truncated at the end; shorter ones are zero-padded at the end (all five channels 0, so padding
    is distinguishable from ``N``). ``length=None`` uses the longest sequence.
    """
    if isinstance(seqs, str) or not all(isinstance(s, str) for s in seqs):
        raise ValueError("seqs must be a list of strings (one per sequence)")
    if length is not None and (not isinstance(length, (int, np.integer)) or isinstance(length, bool) or length < 1):
        raise ValueError(f"length must be None or a positive int; got {length!r}")
    L = int(length) if length is not None else max((len(s) for s in seqs), default=0)
    out = np.zeros((len(seqs), 5, L), dtype=np.float32)
    for i, s in enumerate(seqs):
        s = s[:L]
        codes = _LOOKUP[np.frombuffer(s.encode("ascii", errors="replace"), dtype=np.uint8)]
        out[i, codes, np.arange(len(codes))] = 1.0
    return torch.from_numpy(out)


# --------------------------------------------------------------------------------------------
# CSV layouts
# --------------------------------------------------------------------------------------------
_SPLIT_ALIASES = {"train": "train", "valid": "valid", "val": "valid", "dev": "valid", "test": "test"}


def _read_csv(path: Path) -> tuple[list[str], list[str], list[str] | None]:
    """``(seqs, raw_labels, biotypes or None)`` from a CSV with a ``seq``/``sequence`` and ``label`` column."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols = reader.fieldnames or []
        seq_col = next((c for c in ("seq", "sequence") if c in cols), None)
        if seq_col is None or "label" not in cols:
            raise ValueError(f"{path}: expected columns seq (or sequence) and label; got {cols}")
        seqs, labels, bio = [], [], []
        for row in reader:
            seqs.append(row[seq_col].strip())
            labels.append(row["label"].strip())
            bio.append(row.get("biotype") or "")
    return seqs, labels, (bio if "biotype" in cols else None)


def _class_names(raw: list[str]) -> list[str]:
    uniq = set(raw)
    if all(_is_int(v) for v in uniq):
        return [str(v) for v in sorted({int(v) for v in uniq})]
    return sorted(uniq)


def _is_int(v: str) -> bool:
    try:
        int(v)
    except ValueError:
        return False
    return True


def _teb_file(root: Path, task: str, split: str) -> Path | None:
    for folder in (root, root / "teb", root / "TEB"):
        p = folder / f"{split}_{task}.csv"
        if p.is_file():
            return p
    return None


def _gue_file(root: Path, task: str, split: str) -> Path | None:
    fname = {"train": "train.csv", "valid": "dev.csv", "test": "test.csv"}[split]
    for base in (root, root / "gue", root / "GUE"):
        p = base / task / fname
        if p.is_file():
            return p
        if base.is_dir():
            for cat in sorted(d for d in base.iterdir() if d.is_dir()):
                if (cat / task / fname).is_file():
                    return cat / task / fname
    return None


def load_sequences(
    name: str, split: str, data_dir: str | os.PathLike | None = None, limit: int | None = None, seed: int = 0
) -> SequenceData:
    """Load a TEB or GUE sequence classification split from CSV files.

    Parameters
    ----------
    name:
        ``"teb/<task>"`` (files ``<split>_<task>.csv``, columns ``seq,label,biotype``) or
        ``"gue/<task>"`` (files ``<task>/{train,dev,test}.csv``, columns ``sequence,label``).
    split:
        ``"train"``, ``"valid"`` (synonyms ``"val"``, ``"dev"``) or ``"test"``.
    data_dir:
        Folder searched first; then ``$HGUTILS_DATA``. No copy ships with a package and there is no
        download (the benchmarks are distributed by their authors).
    limit:
        Keep the first ``limit`` sequences of the class-stratified order.
    seed:
        Seed of the class-stratified order (the returned order is always stratified, so a prefix is
        balanced).

    Raises
    ------
    ValueError
        Bad ``name``/``split``/``limit`` or a CSV without the expected columns.
    DataNotFoundError
        No such file in ``data_dir`` or ``$HGUTILS_DATA``; the message names all options.
    """
    layout, _, task = name.partition("/")
    if layout not in ("teb", "gue") or not task:
        raise ValueError(f"name must look like 'teb/<task>' or 'gue/<task>'; got {name!r}")
    if split not in _SPLIT_ALIASES:
        raise ValueError(f"split must be one of {sorted(_SPLIT_ALIASES)}; got {split!r}")
    check_limit(limit)
    canon = _SPLIT_ALIASES[split]
    if layout == "teb":
        want = f"{canon}_{task}.csv (in the folder or in teb/; columns seq,label,biotype)"
        finder, release = (
            _teb_file,
            ("the TEB release of Khan, Chlenski & Pe'er, 'Hyperbolic Genome Embeddings' (ICLR 2025)"),
        )
    else:
        fname = {"train": "train", "valid": "dev", "test": "test"}[canon]
        want = f"{task}/{fname}.csv (in the folder, gue/, GUE/ or GUE/<category>/; columns sequence,label)"
        finder, release = _gue_file, "the GUE release of DNABERT-2 (github.com/MAGICS-LAB/DNABERT_2)"
    search = Search(
        dataset=f"{name!r} (split {split!r})",
        data_dir=data_dir,
        layouts=want,
        packaged=f"none: no installed or system package ships {layout.upper()}",
        download=f"not available for {layout.upper()}; get the CSVs from {release} and pass "
        "their folder as data_dir or HGUTILS_DATA",
    )
    for origin, root in data_roots(data_dir):
        path = finder(root, task, canon)
        if path is None:
            search.note(f"{root} ({origin})")
            continue
        seqs, raw, bio = _read_csv(path)
        classes = _class_names(raw)
        index = {c: i for i, c in enumerate(classes)}
        labels = np.array([index[str(int(v))] if _is_int(v) else index[v] for v in raw], dtype=np.int64)
        order = stratified_order(labels, seed)
        if limit is not None:
            order = order[:limit]
        source = f"{layout.upper()} {task} {canon} split from {path} (via {origin})"
        if limit is not None:
            source += f"; first {len(order)} of a class-stratified order (limit={limit}, seed={seed})"
        meta: dict[str, Any] = {}
        if bio is not None:
            meta["biotype"] = [bio[i] for i in order]
        return SequenceData(
            seqs=[seqs[i] for i in order],
            labels=torch.from_numpy(labels[order]),
            classes=classes,
            source=source,
            meta=meta,
        )
    raise search.error()
