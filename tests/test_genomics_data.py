"""Genomics data of notebook 04: the reduced protocol of a task without a train file, the GUE layout a
user fills in, and the structure of the synthetic hierarchy (families -> genes -> variants)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.data import hierarchical_sequences, load_sequences
from hgutils.experiments import nb04_ilnn_cifar_genomics as ex


# --------------------------------------------------------------------------------------------
# reduced protocol: the valid split divided into train / validation, the test split kept
# --------------------------------------------------------------------------------------------
def _write_teb(root: Path, task: str, splits: dict[str, list[int]], seed: int = 0) -> dict[str, list[str]]:
    """TEB CSVs ``<split>_<task>.csv`` with one row per label, distinct random sequences; returns them."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out = {}
    for split, labels in splits.items():
        rows, seqs = ["seq,label,biotype"], []
        for lab in labels:
            s = "".join(rng.choice("ACGT") for _ in range(rng.randint(20, 40)))
            while s in seen:
                s = "".join(rng.choice("ACGT") for _ in range(rng.randint(20, 40)))
            seen.add(s)
            seqs.append(s)
            rows.append(f"{s},{lab},pseudogene")
        (root / f"{split}_{task}.csv").write_text("\n".join(rows) + "\n")
        out[split] = seqs
    return out


def _decode(x: torch.Tensor) -> list[str]:
    """Inverse of one_hot_dna for ACGT sequences (zero padding dropped)."""
    out = []
    for row in x:
        present = row.sum(0) > 0
        out.append("".join("ACGTN"[int(i)] for i in row.argmax(0)[present]))
    return out


def test_reduced_protocol_splits_are_disjoint_and_stratified(tmp_path: Path) -> None:
    valid_labels = [0] * 30 + [1] * 20  # unbalanced: 60 % / 40 %
    test_labels = [0, 1] * 9
    seqs = _write_teb(tmp_path, "processed_pseudogenes", {"valid": valid_labels, "test": test_labels})
    cfg = ex.ILNNConfig.from_scale("smoke", genomics_val_fraction=0.2, max_len=64)
    split = ex.genomics_task(cfg, "teb/processed_pseudogenes", data_dir=str(tmp_path))
    assert split.protocol.startswith("teb/processed_pseudogenes: REDUCED protocol (no train file)")
    assert "40 train / 10 val / 18 test" in split.protocol and "0 test sequences also in train/val" in split.protocol
    tr, va, te = _decode(split.x_train), _decode(split.x_val), _decode(split.x_test)
    # disjoint, and together exactly the valid split; the test split untouched
    assert set(tr).isdisjoint(va) and sorted(tr + va) == sorted(seqs["valid"])
    assert sorted(te) == sorted(seqs["test"]) and set(te).isdisjoint(tr + va)
    # stratified: 20 % of each class held out, the rest trains
    assert split.y_val.bincount().tolist() == [6, 4] and split.y_train.bincount().tolist() == [24, 16]
    assert split.y_test.bincount().tolist() == [9, 9]
    # labels stay attached to their sequences
    label_of = dict(zip(seqs["valid"], valid_labels))
    assert [label_of[s] for s in tr] == split.y_train.tolist() and [label_of[s] for s in va] == split.y_val.tolist()


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(1, 40), min_size=2, max_size=5),
    frac=st.floats(0.05, 0.6),
    seed=st.integers(0, 10_000),
)
def test_reduced_split_property(counts: list[int], frac: float, seed: int) -> None:
    labels = torch.from_numpy(np.repeat(np.arange(len(counts)), counts))
    tr, va = ex.reduced_split(labels, frac, seed)
    assert set(tr.tolist()).isdisjoint(va.tolist()) and sorted([*tr, *va]) == list(range(len(labels)))
    held = np.bincount(labels[va].numpy(), minlength=len(counts))
    assert held.tolist() == [int(round(frac * c)) for c in counts]  # per class, not just overall
    tr2, va2 = ex.reduced_split(labels, frac, seed)
    assert np.array_equal(va, va2)


def test_reduced_split_rejects_bad_fractions() -> None:
    with pytest.raises(ValueError, match="val_fraction"):
        ex.reduced_split(torch.tensor([0, 1, 0, 1]), 1.0)


def test_teb_task_with_train_file_states_the_subset(tmp_path: Path) -> None:
    _write_teb(tmp_path, "dna_cmc", {"train": [0, 1] * 20, "valid": [0, 1] * 5, "test": [0, 1] * 6})
    cfg = ex.ILNNConfig.from_scale("smoke", genomics_train_limit=10, max_len=64)
    split = ex.genomics_task(cfg, "teb/dna_cmc", data_dir=str(tmp_path))
    assert "REDUCED" not in split.protocol and "training set: 10 of 40 sequences" in split.protocol
    assert split.y_train.bincount().tolist() == [5, 5] and len(split.y_val) == 10 and len(split.y_test) == 12


# --------------------------------------------------------------------------------------------
# GUE: the documented layout a user fills in
# --------------------------------------------------------------------------------------------
def _write_gue(root: Path, folder: str, n_classes: int) -> None:
    rng = random.Random(2)
    (root / folder).mkdir(parents=True)
    for split, n in (("train", 12), ("dev", 6), ("test", 9)):
        rows = ["sequence,label"] + [
            "".join(rng.choice("ACGT") for _ in range(25 + i % 3)) + f",{i % n_classes}" for i in range(n)
        ]
        (root / folder / f"{split}.csv").write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("task", sorted(ex.GUE_LAYOUT))
def test_gue_loader_reads_a_tiny_csv_in_the_documented_layout(tmp_path: Path, task: str) -> None:
    folder = ex.GUE_LAYOUT[task]
    assert folder in ex.gue_instructions(task) and "train,dev,test" in ex.gue_instructions(task)
    with pytest.raises(FileNotFoundError):  # nothing placed yet: the notebook records the task as not run
        ex.genomics_task(ex.ILNNConfig.from_scale("smoke"), task, data_dir=str(tmp_path))
    _write_gue(tmp_path, folder, 3)
    s = load_sequences(task, "dev", data_dir=tmp_path)
    assert len(s) == 6 and s.classes == ["0", "1", "2"] and str(tmp_path / folder / "dev.csv") in s.source
    split = ex.genomics_task(ex.ILNNConfig.from_scale("smoke", max_len=26), task, data_dir=str(tmp_path))
    assert split.protocol.startswith(f"{task}: train -> train, valid -> validation, test -> test")
    assert split.x_train.shape == (12, 5, 26) and split.x_val.shape == (6, 5, 26) and split.x_test.shape == (9, 5, 26)
    assert split.num_classes == 3
    with pytest.raises(ValueError, match="gue/covid"):
        ex.gue_instructions("gue/splice")


# --------------------------------------------------------------------------------------------
# synthetic hierarchy: the family -> gene -> variant structure, with shifted windows
# --------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    n_families=st.integers(1, 4),
    genes=st.integers(1, 4),
    variants=st.integers(1, 5),
    length=st.integers(30, 90),
    shift=st.integers(0, 12),
    motif_length=st.integers(2, 8),
    rates=st.tuples(st.floats(0, 0.5), st.floats(0, 0.3), st.floats(0, 0.3)),
    label_level=st.sampled_from(["family", "gene"]),
    seed=st.integers(0, 1000),
)
def test_hierarchy_keeps_family_gene_variant_structure(
    n_families: int,
    genes: int,
    variants: int,
    length: int,
    shift: int,
    motif_length: int,
    rates: tuple[float, float, float],
    label_level: str,
    seed: int,
) -> None:
    d = hierarchical_sequences(
        n_families,
        genes,
        variants,
        length,
        label_level=label_level,
        rates=rates,
        motif_length=motif_length,
        shift=shift,
        seed=seed,
    )
    fam, gene, var, off = (d.meta[k].numpy() for k in ("family", "gene", "variant", "offset"))
    assert len(d) == n_families * genes * variants and all(len(s) == length for s in d.seqs)
    # every variant belongs to one gene, every gene to one family; the tree is complete and balanced
    assert np.array_equal(gene // genes, fam) and sorted(var.tolist()) == list(range(len(d)))
    assert np.bincount(gene, minlength=n_families * genes).tolist() == [variants] * (n_families * genes)
    assert torch.equal(d.labels, d.meta[label_level]) and len(d.classes) == int(d.labels.max()) + 1
    assert ((0 <= off) & (off <= shift)).all()
    # the family's motifs sit in every one of its variants, at the position its window's offset gives
    for i, s in enumerate(d.seqs):
        for pos, motif in d.meta["motifs"][fam[i]]:
            assert s[pos - off[i] : pos - off[i] + len(motif)] == motif
    # variants of one gene agree wherever their windows overlap, up to their own mutations: with no
    # variant-level mutation they are identical windows of one gene ancestor
    if rates[2] == 0:
        for g in np.unique(gene):
            idx = np.flatnonzero(gene == g)
            ref = idx[0]
            for i in idx[1:]:
                lo, hi = max(off[i], off[ref]), min(off[i], off[ref]) + length
                assert d.seqs[i][lo - off[i] : hi - off[i]] == d.seqs[ref][lo - off[ref] : hi - off[ref]]


def test_hierarchy_distances_ordered_after_alignment() -> None:
    d = hierarchical_sequences(4, 3, 8, 150, rates=(0.3, 0.05, 0.08), shift=10, motif_length=6, seed=3)
    off = d.meta["offset"].numpy()
    lo, hi = off.max(), off.min() + 150  # the window every variant covers, in the ancestors' coordinates
    a = np.array([list(s[lo - o : hi - o]) for s, o in zip(d.seqs, off)])
    H = (a[:, None, :] != a[None, :, :]).mean(-1)
    fam, gene = d.meta["family"].numpy(), d.meta["gene"].numpy()
    eye = np.eye(len(d), dtype=bool)
    same_gene = (gene[:, None] == gene[None]) & ~eye
    same_fam = (fam[:, None] == fam[None]) & (gene[:, None] != gene[None])
    other = fam[:, None] != fam[None]
    assert H[same_gene].mean() < H[same_fam].mean() < H[other].mean()
    raw = np.array([list(s) for s in d.seqs])  # unaligned, the windows blur the tree: the task is harder
    R = (raw[:, None, :] != raw[None, :, :]).mean(-1)
    assert R[same_gene].mean() > H[same_gene].mean()


def test_hierarchy_shift_argument_errors() -> None:
    with pytest.raises(ValueError, match="shift"):
        hierarchical_sequences(2, 2, 2, 40, shift=-1)
    with pytest.raises(ValueError, match="length - shift"):
        hierarchical_sequences(2, 2, 2, 40, shift=30, motif_length=8)
    base = hierarchical_sequences(2, 2, 3, 40, seed=5)
    assert base.meta["offset"].eq(0).all() and base.meta["params"]["shift"] == 0
