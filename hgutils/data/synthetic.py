"""Synthetic hierarchical DNA: motif families -> genes -> variants, a tree-structured class problem."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from hgutils.data.resolve import stratified_order
from hgutils.data.sequences import SequenceData

_BASES = np.array(list("ACGT"))


def _mutate(rng: np.random.Generator, seq: np.ndarray, rate: float, protect: np.ndarray | None) -> np.ndarray:
    """Substitute each (unprotected) position with probability ``rate`` by one of the 3 other bases."""
    hit = rng.random(seq.shape) < rate
    shift = rng.integers(1, 4, size=seq.shape)
    if protect is not None:
        hit &= ~protect
    return np.where(hit, (seq + shift) % 4, seq)


def _check_pos_int(name: str, v: object) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{name} must be a positive int; got {v!r}")
    return int(v)


def hierarchical_sequences(
    n_families: int = 4,
    genes_per_family: int = 4,
    variants_per_gene: int = 16,
    length: int = 200,
    n_classes: int | None = None,
    *,
    label_level: str | None = None,
    rates: Sequence[float] = (0.3, 0.1, 0.02),
    clade_rate: float = 0.4,
    motif_length: int = 8,
    motifs_per_family: int = 2,
    shift: int = 0,
    seed: int = 0,
) -> SequenceData:
    r"""Synthetic DNA whose class structure is a tree: (clades ->) families -> genes -> variants.

    Generative process (all draws from ``numpy.random.default_rng(seed)``; "mutate at rate p" means
    every position, independently with probability ``p``, is replaced by one of the three *other*
    bases chosen uniformly):

    1. A root sequence of ``length + shift`` uniform random bases (the ancestors' coordinates).
    2. Optional clade level: if ``n_classes`` is given it must divide ``n_families``; each of the
       ``n_classes`` clade ancestors is the root mutated at ``clade_rate``, and families
       ``f`` with ``f // (n_families / n_classes) == k`` belong to clade ``k``. Without ``n_classes``
       the root is the single ancestor of all families.
    3. Family ancestors: the clade ancestor mutated at ``rates[0]``, then ``motifs_per_family``
       random motifs of ``motif_length`` bases are written at random non-overlapping positions in
       ``[shift, length)``. Motif positions are *conserved*: later levels never mutate them (a family's
       signature motifs).
    4. Gene ancestors (``genes_per_family`` per family): the family ancestor mutated at ``rates[1]``
       outside the motifs.
    5. Variants (``variants_per_gene`` per gene): the gene ancestor mutated at ``rates[2]`` outside the
       motifs; the returned sequence is its window ``[o, o + length)`` with the offset ``o`` uniform in
       ``0 .. shift`` per variant (``shift = 0``: the whole ancestor). Every window contains all the
       family's motifs, but at positions that move with ``o``: with ``shift > 0`` a model must find
       the motifs wherever they are (as in real sequences, whose homologous sites are not aligned),
       which makes the task harder without changing the tree.

    With decreasing rates, expected normalised Hamming distances are ordered
    within gene (about :math:`2 p_2`) < within family (about :math:`2(p_1 + p_2)`) < across families
    (about :math:`2(p_0 + p_1 + p_2)`, saturating at 3/4), i.e. the data is an ultrametric-like tree
    (distances between variants taken in the ancestors' coordinates, i.e. aligned by their offsets).
    The ordering holds for any ``p_1 > 0``; the task gets harder as ``p_1`` (what separates genes)
    shrinks against ``p_2`` (noise within a gene), as ``shift`` grows and as ``motif_length`` shrinks.

    Labels are the ids at ``label_level``: ``"clade"`` (default when ``n_classes`` is given),
    ``"family"`` (default otherwise) or ``"gene"``. The returned order is the class-stratified order of
    :func:`~hgutils.data.resolve.stratified_order` (seeded by ``seed``), so any prefix is balanced and
    a random split keeps all genes on both sides.

    Returns
    -------
    SequenceData
        ``seqs`` (``n_families * genes_per_family * variants_per_gene`` strings of ``length``),
        ``labels``, ``classes`` and ``meta`` with int64 ``[N]`` tensors ``"clade"``, ``"family"``,
        ``"gene"`` (global gene id ``family * genes_per_family + g``), ``"variant"`` (global) and
        ``"offset"`` (each window's start ``o``), plus ``"motifs"`` (per family: list of ``(position,
        motif)`` in the ancestors' coordinates: variant ``i`` holds a motif at ``position - offset[i]``)
        and ``"params"``.
    """
    n_families = _check_pos_int("n_families", n_families)
    genes_per_family = _check_pos_int("genes_per_family", genes_per_family)
    variants_per_gene = _check_pos_int("variants_per_gene", variants_per_gene)
    length = _check_pos_int("length", length)
    motif_length = _check_pos_int("motif_length", motif_length)
    if not isinstance(motifs_per_family, (int, np.integer)) or motifs_per_family < 0:
        raise ValueError(f"motifs_per_family must be a non-negative int; got {motifs_per_family!r}")
    if not isinstance(shift, (int, np.integer)) or isinstance(shift, bool) or shift < 0:
        raise ValueError(f"shift must be a non-negative int; got {shift!r}")
    shift = int(shift)
    if motif_length * motifs_per_family > length - shift:
        raise ValueError(
            f"motifs need {motif_length * motifs_per_family} positions but only length - shift = "
            f"{length - shift} are inside every window"
        )
    if n_classes is not None:
        n_classes = _check_pos_int("n_classes", n_classes)
        if n_families % n_classes:
            raise ValueError(f"n_classes={n_classes} must divide n_families={n_families} (clades of equal size)")
    rates = tuple(float(r) for r in rates)
    if len(rates) != 3 or not all(0.0 <= r <= 1.0 for r in (*rates, clade_rate)):
        raise ValueError(
            f"rates must be 3 probabilities (family, gene, variant) and clade_rate a "
            f"probability; got rates={rates}, clade_rate={clade_rate}"
        )
    if label_level is None:
        label_level = "clade" if n_classes is not None else "family"
    if label_level not in ("clade", "family", "gene"):
        raise ValueError(f"label_level must be 'clade', 'family' or 'gene'; got {label_level!r}")
    if label_level == "clade" and n_classes is None:
        raise ValueError("label_level='clade' needs n_classes (the number of clades)")

    rng = np.random.default_rng(seed)
    full = length + shift
    root = rng.integers(0, 4, size=full)
    n_clades = n_classes if n_classes is not None else 1
    clades = [_mutate(rng, root, clade_rate, None) if n_classes is not None else root for _ in range(n_clades)]
    fam_per_clade = n_families // n_clades

    seqs: list[np.ndarray] = []
    ids: dict[str, list[int]] = {"clade": [], "family": [], "gene": [], "variant": [], "offset": []}
    motifs: list[list[tuple[int, str]]] = []
    for f in range(n_families):
        clade = f // fam_per_clade
        fam = _mutate(rng, clades[clade], rates[0], None)
        conserved = np.zeros(full, dtype=bool)
        # non-overlapping motif slots in [shift, length): start offsets among length - shift - k*m free positions
        free = length - shift - motif_length * motifs_per_family
        offsets = np.sort(rng.choice(free + motifs_per_family, size=motifs_per_family, replace=False))
        fam_motifs = []
        for j, off in enumerate(offsets):
            start = shift + int(off - j + j * motif_length)
            motif = rng.integers(0, 4, size=motif_length)
            fam[start : start + motif_length] = motif
            conserved[start : start + motif_length] = True
            fam_motifs.append((start, "".join(_BASES[motif])))
        motifs.append(fam_motifs)
        for g in range(genes_per_family):
            gene = _mutate(rng, fam, rates[1], conserved)
            for _ in range(variants_per_gene):
                var = _mutate(rng, gene, rates[2], conserved)
                o = int(rng.integers(0, shift + 1)) if shift else 0
                seqs.append(var[o : o + length])
                ids["offset"].append(o)
                ids["clade"].append(clade)
                ids["family"].append(f)
                ids["gene"].append(f * genes_per_family + g)
                ids["variant"].append(len(ids["variant"]))

    arr = {k: np.asarray(v, dtype=np.int64) for k, v in ids.items()}
    labels = arr[label_level]
    if label_level == "gene":
        classes = [f"gene {f}.{g}" for f in range(n_families) for g in range(genes_per_family)]
    else:
        classes = [f"{label_level} {i}" for i in range(n_clades if label_level == "clade" else n_families)]
    order = stratified_order(labels, seed)
    params = {
        "n_families": n_families,
        "genes_per_family": genes_per_family,
        "variants_per_gene": variants_per_gene,
        "length": length,
        "n_classes": n_classes,
        "label_level": label_level,
        "rates": rates,
        "clade_rate": clade_rate,
        "motif_length": motif_length,
        "motifs_per_family": int(motifs_per_family),
        "shift": shift,
        "seed": seed,
    }
    source = (
        f"synthetic hierarchical DNA ({n_clades} clade(s) x {fam_per_clade} families x {genes_per_family} "
        f"genes x {variants_per_gene} variants, length {length}, rates {rates}, labels by {label_level}, "
        f"seed {seed})"
        if n_classes is not None
        else f"synthetic hierarchical DNA ({n_families} families x {genes_per_family} genes x "
        f"{variants_per_gene} variants, length {length}, rates {rates}, labels by {label_level}, seed {seed})"
    )
    if shift:
        source = source[:-1] + f", motif length {motif_length}, windows shifted by up to {shift})"
    meta = {k: torch.from_numpy(v[order]) for k, v in arr.items()}
    meta["motifs"] = motifs
    meta["params"] = params
    return SequenceData(
        seqs=["".join(_BASES[seqs[i]]) for i in order],
        labels=torch.from_numpy(labels[order]),
        classes=classes,
        source=source,
        meta=meta,
    )
