"""Notebook 04's data: :class:`Split` (train / validation / test tensors and where they came from),
:func:`load_cifar` (a CIFAR-10/100 subset standardised per channel, or a clearly labelled stand-in:
scikit-learn 8x8 digits upsampled to 32x32 RGB, when no CIFAR copy is found) and :func:`genomics_task`
(one-hot sequences of the synthetic hierarchy or a TEB / GUE task; TEB pseudogene tasks ship no train
file here: a *reduced* protocol, :func:`reduced_split`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from hgutils.data import DataNotFoundError, hierarchical_sequences, load_images, load_sequences, one_hot_dna
from hgutils.data.resolve import stratified_split
from hgutils.experiments.nb04_ilnn_cifar_genomics.preset import PAPER_CIFAR, ILNNConfig

log = logging.getLogger(__name__)


@dataclass
class Split:
    """Tensors of one task (train / optional validation / test) and where they came from."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    source: str
    protocol: str
    x_val: torch.Tensor | None = None
    y_val: torch.Tensor | None = None

    @property
    def chance(self) -> float:
        """Majority-class fraction of the training labels (chance-level training accuracy)."""
        return float(torch.bincount(self.y_train).max()) / len(self.y_train)


def _standardise(tr: torch.Tensor, *others: torch.Tensor) -> list[torch.Tensor]:
    mean = tr.mean((0, 2, 3), keepdim=True)
    std = tr.std((0, 2, 3), keepdim=True).clamp_min(1e-6)
    return [(t - mean) / std for t in (tr, *others)]


def _digits_standin(n_train: int, n_test: int, seed: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    xs, ys = [], []
    for split, n in (("train", n_train), ("test", n_test)):
        d = load_images("digits", split, limit=n or None, seed=seed)
        x = F.interpolate(d.images, size=(32, 32), mode="bilinear", align_corners=False).repeat(1, 3, 1, 1)
        xs.append(x.clamp(0, 1))
        ys.append(d.labels)
    return xs, ys


def load_cifar(cfg: ILNNConfig, data_dir: str | None = None, seed: int = 0, dataset: str | None = None) -> Split:
    """CIFAR subset per ``cfg`` (class-stratified prefixes) of ``dataset`` (default: the first of
    ``cfg.cifar_datasets``), standardised per channel with the training subset's statistics when
    ``cfg.normalize``; the digits stand-in when no copy is found."""
    name = dataset or cfg.cifar_datasets[0]
    if name not in PAPER_CIFAR:
        raise ValueError(f"CIFAR dataset must be one of {sorted(PAPER_CIFAR)}; got {name!r}")
    try:
        tr = load_images(name, "train", data_dir, limit=cfg.cifar_train or None, seed=seed)
        te = load_images(name, "test", data_dir, limit=cfg.cifar_test or None, seed=seed)
        xs, ys, k = [tr.images, te.images], [tr.labels, te.labels], len(tr.classes)
        source = tr.source
        protocol = f"{name}: {len(tr)} train / {len(te)} test (class-stratified subsets)"
    except DataNotFoundError as err:
        log.info("no %s copy (%s); using the digits stand-in", name, err)
        xs, ys = _digits_standin(cfg.cifar_train, cfg.cifar_test, seed)
        k, source = 10, "STAND-IN (no CIFAR copy found): scikit-learn 8x8 digits upsampled to 32x32 RGB"
        protocol = f"digits stand-in: {len(ys[0])} train / {len(ys[1])} test"
    if cfg.normalize:
        xs = _standardise(*xs)
        protocol += ", channels standardised"
    return Split(xs[0], ys[0], xs[1], ys[1], k, source, protocol)


def _synthetic_task(cfg: ILNNConfig, seed: int) -> Split:
    d = hierarchical_sequences(
        4,
        cfg.synth_genes_per_family,
        cfg.synth_variants,
        cfg.synth_length,
        label_level=cfg.synth_label,
        rates=cfg.synth_rates,
        motif_length=cfg.synth_motif_length,
        shift=cfg.synth_shift,
        seed=seed,
    )
    x = one_hot_dna(d.seqs, cfg.synth_length)
    rest, te = stratified_split(d.labels.numpy(), 0.25, seed=seed)
    tr_i, va_i = stratified_split(d.labels[rest].numpy(), cfg.genomics_val_fraction, seed=seed)
    tr, va = rest[tr_i], rest[va_i]
    shift = f", windows shifted by up to {cfg.synth_shift}" if cfg.synth_shift else ""
    return Split(
        x[tr],
        d.labels[tr],
        x[te],
        d.labels[te],
        len(d.classes),
        d.source,
        f"synthetic hierarchy (4 families x {cfg.synth_genes_per_family} genes x {cfg.synth_variants} variants, "
        f"length {cfg.synth_length}, rates {tuple(cfg.synth_rates)}, motifs of {cfg.synth_motif_length}{shift}, "
        f"label = {cfg.synth_label}, {len(d.classes)} classes): {len(tr)} train / {len(va)} val / {len(te)} test",
        x[va],
        d.labels[va],
    )


def reduced_split(labels: torch.Tensor, val_fraction: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The reduced protocol's division of a task's *valid* split (no train file): disjoint, class-stratified
    index sets ``(train, validation)`` that cover it, ``val_fraction`` of each class held out for validation
    (:func:`hgutils.data.resolve.stratified_split`). The task's test split is kept as it is."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1); got {val_fraction}")
    return stratified_split(labels.numpy(), val_fraction, seed=seed)


def genomics_task(cfg: ILNNConfig, task: str, data_dir: str | None = None, seed: int = 0) -> Split:
    """One-hot sequences of ``task`` with train / validation / test parts.

    * ``"synthetic"``: :func:`hgutils.data.hierarchical_sequences`, stratified 25 % test, then
      ``genomics_val_fraction`` of the rest for validation.
    * ``"teb/<task>"`` / ``"gue/<task>"`` with a train file: train → (``genomics_train_limit``) train,
      valid (dev) → validation, test → test (the reference code's protocol: best validation epoch,
      scored on test).
    * a task without a train file (TEB pseudogenes in this copy): **reduced protocol** -- the valid
      split is divided by :func:`reduced_split` (stratified, ``genomics_val_fraction`` held out) into
      train and validation, and the test split scores. The protocol line names it, gives the sizes and
      counts exact duplicate sequences shared by the parts.

    Raises ``DataNotFoundError`` (a ``FileNotFoundError``) when the task's files are not found.
    """
    if task == "synthetic":
        return _synthetic_task(cfg, seed)
    lim = lambda n: n or None  # noqa: E731
    try:
        train = load_sequences(task, "train", data_dir, limit=lim(cfg.genomics_train_limit), seed=seed)
    except DataNotFoundError:
        train = None
    test = load_sequences(task, "test", data_dir, limit=lim(cfg.genomics_test_limit), seed=seed)
    if train is None:
        pool = load_sequences(task, "valid", data_dir, seed=seed)
        tr, va = reduced_split(pool.labels, cfg.genomics_val_fraction, seed)
        tr_seqs, va_seqs = [pool.seqs[i] for i in tr], [pool.seqs[i] for i in va]
        y_tr, y_va, source, k = pool.labels[tr], pool.labels[va], pool.source, len(pool.classes)
        protocol = (
            f"REDUCED protocol (no train file): the {len(pool)} sequences of the valid split divided into "
            f"train / validation ({100 * cfg.genomics_val_fraction:.0f} % of each class held out), test -> test"
        )
    else:
        val = load_sequences(task, "valid", data_dir, limit=lim(cfg.genomics_val_limit), seed=seed)
        tr_seqs, va_seqs, y_tr, y_va = train.seqs, val.seqs, train.labels, val.labels
        source, k = train.source, len(train.classes)
        protocol = "train -> train, valid -> validation, test -> test"
        full = _count_rows(task, "train", data_dir)
        if full and len(tr_seqs) < full:
            protocol += f" (training set: {len(tr_seqs)} of {full} sequences, a class-balanced subset)"
    lengths = [len(s) for s in tr_seqs + va_seqs + test.seqs]
    n = min(cfg.max_len, max(lengths))
    cut = sum(v > n for v in lengths)
    trunc = f" ({cut} of {len(lengths)} sequences truncated)" if cut else ""
    fit = {s.upper() for s in tr_seqs + va_seqs}
    dup = sum(s.upper() in fit for s in test.seqs)
    return Split(
        one_hot_dna(tr_seqs, n),
        y_tr,
        one_hot_dna(test.seqs, n),
        test.labels,
        k,
        source,
        f"{task}: {protocol}; {len(tr_seqs)} train / {len(va_seqs)} val / {len(test)} test, one-hot length {n}"
        f"{trunc}; {dup} test sequences also in train/val",
        one_hot_dna(va_seqs, n),
        y_va,
    )


def _count_rows(task: str, split: str, data_dir: str | None) -> int:
    """Sequences in ``task``'s ``split`` file (0 when there is none)."""
    try:
        return len(load_sequences(task, split, data_dir))
    except DataNotFoundError:
        return 0
