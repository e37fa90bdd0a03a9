"""The networks every model of a weight-space comparison reads: the one split and the input preparation.

- :class:`Splits` / :func:`make_splits` -- train / validation / test network indices, drawn once
  (class-stratified when there are labels), shared by every model and seed;
- :func:`prepare_inputs` -- constant snapshots dropped (:func:`constant_snapshots`), then the zoo
  standardised, turned into updates :math:`W_t - W_0`, or rescaled (:data:`INPUTS`), with the
  training networks' statistics only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from hgutils.data import stratified_split

if TYPE_CHECKING:  # for annotations only: importing the zoo package here would load every zoo builder
    from hgutils.weightspace.zoo.containers import Zoo

log = logging.getLogger("hgutils")


# --------------------------------------------------------------------------------------------
# splits
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Splits:
    """Network indices of the train / validation / test parts (sorted, disjoint)."""

    train: Tensor
    val: Tensor
    test: Tensor

    def sizes(self) -> dict[str, int]:
        return {"train": len(self.train), "val": len(self.val), "test": len(self.test)}


def make_splits(
    n: int, val_fraction: float, test_fraction: float, seed: int = 0, labels: Tensor | np.ndarray | None = None
) -> Splits:
    """One deterministic train / val / test split of ``n`` networks, shared by every model and seed.

    With ``labels`` the split is class-stratified (:func:`hgutils.data.stratified_split`), else a
    seeded random permutation. Each part gets at least one network.
    """

    if not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"need at least 3 networks to split into train/val/test; got n={n!r}")
    if not (0 < val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ValueError(
            f"val_fraction and test_fraction must be in (0, 1) with sum < 1; got {val_fraction}, {test_fraction}"
        )
    if labels is not None:
        lab = np.asarray(labels.cpu() if isinstance(labels, Tensor) else labels)
        if lab.shape != (n,):
            raise ValueError(f"labels must be [n={n}]; got shape {lab.shape}")
        rest, test = stratified_split(lab, test_fraction, seed=seed)
        tr, va = stratified_split(lab[rest], val_fraction / (1 - test_fraction), seed=seed + 1)
        train, val = rest[tr], rest[va]
    else:
        perm = np.random.default_rng(seed).permutation(n)
        n_te = max(1, int(round(test_fraction * n)))
        n_va = max(1, int(round(val_fraction * n)))
        test, val, train = perm[:n_te], perm[n_te : n_te + n_va], perm[n_te + n_va :]
    parts = [torch.as_tensor(np.sort(p), dtype=torch.long) for p in (train, val, test)]
    if any(len(p) == 0 for p in parts):
        raise ValueError(f"a split part is empty (n={n}, val={val_fraction}, test={test_fraction})")
    return Splits(*parts)


#: How every model's inputs are prepared (:func:`prepare_inputs`).
INPUTS: tuple[str, ...] = ("standardize", "delta", "rms", "none")


def constant_snapshots(zoo: Zoo, idx: Tensor | None = None) -> list[int]:
    """Snapshots at which every network of ``zoo[idx]`` has the same parameters (e.g. step 0 of a
    shared-initialisation zoo): they carry no information about any network."""
    sel = slice(None) if idx is None else idx
    out = []
    for t in range(zoo.T):
        if all(bool((v[sel, t] == v[sel, t][:1]).all()) for v in zoo.params.values()):
            out.append(t)
    return out


def prepare_inputs(
    zoo: Zoo, splits: Splits, inputs: str = "standardize", drop_constant: bool = True
) -> tuple[Any, dict[str, Any]]:
    """The zoo every model reads: constant snapshots dropped, then ``inputs`` applied.

    ``"standardize"``: per entry and snapshot, with the training networks' mean and std
    (:meth:`~hgutils.weightspace.zoo.Zoo.standardized`, the DWSNets pipeline); ``"delta"``: each
    network's update since its initialisation :math:`W_t - W_0` (:meth:`~hgutils.weightspace.zoo.Zoo.updates`),
    then standardised (computed before dropping snapshot 0); ``"rms"``: one scale per tensor
    (:meth:`~hgutils.weightspace.zoo.Zoo.rescaled`); ``"none"``. Returns the zoo and a record of what was done.
    """
    if inputs not in INPUTS:
        raise ValueError(f"inputs must be one of {INPUTS}; got {inputs!r}")
    if inputs == "delta":
        zoo = zoo.updates()
    dropped = constant_snapshots(zoo, splits.train) if drop_constant else []
    if len(dropped) == zoo.T:
        raise ValueError("every snapshot is identical across the training networks: nothing to learn from")
    if dropped:
        zoo = zoo.snapshots([t for t in range(zoo.T) if t not in dropped])
    if inputs in ("standardize", "delta"):
        zoo = zoo.standardized(zoo.entry_stats(splits.train))
    elif inputs == "rms":
        zoo = zoo.rescaled(zoo.rms_scales(splits.train))
    return zoo, {"inputs": inputs, "dropped_snapshots": dropped, "T": zoo.T}
