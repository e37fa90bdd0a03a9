"""The shared comparison protocol of the weight-space notebooks (01-03): one split, every model, same budget.

1. build a zoo (:mod:`hgutils.weightspace.zoo`: INR images, sine INRs, or small classifiers);
2. split it **once** (:func:`make_splits`, class-stratified when there are labels); every model and
   every seed uses these same train / validation / test networks;
3. train every model variant (:data:`VARIANTS`: GTH-GMN, its ablations, the baselines, in
   final-checkpoint and trajectory versions) with the one shared loop
   (:func:`hgutils.weightspace.tasks.fit`), once per seed -- the seed changes the model's
   initialisation, the batch order and the augmentations, never the split;
4. collect a long results table (one row per model and seed, :func:`run_comparison`), summarise it
   as mean ± std over seeds (:func:`summarize`), compare models over seeds (:func:`difference`, the
   verdict rule of :mod:`hgutils.verdicts`) and set it beside a paper's table (:func:`paper_table`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.parallel import forked_map
from hgutils.presets import Preset
from hgutils.progress import progress
from hgutils.repro import cached, seed_everything, source_fingerprint
from hgutils.verdicts import Difference, compare_seeds
from hgutils.weightspace.metanets.gth_gmn.config import PROTOCOLS, SIZES

log = logging.getLogger("hgutils")

__all__ = [
    "INPUTS",
    "RECIPE_MODES",
    "SYMMETRY_RESPECTING",
    "VARIANTS",
    "ComparisonResult",
    "ComparisonSettings",
    "Splits",
    "Variant",
    "best_model",
    "build_variant",
    "class_separation",
    "constant_snapshots",
    "difference",
    "make_splits",
    "node_embeddings",
    "paper_table",
    "per_seed",
    "prepare_inputs",
    "protocol_table",
    "recon_table",
    "run_comparison",
    "run_lengths",
    "summarize",
    "variant_config",
]


# --------------------------------------------------------------------------------------------
# model variants
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """A named model variant: a base meta-network, the snapshots it reads, constructor overrides."""

    name: str
    base: str  # one of hgutils.weightspace.metanets.MODELS
    snapshots: Any = None  # None = the model's default ("all" for GTH-GMN, "last" for baselines)
    kwargs: tuple[tuple[str, Any], ...] = ()  # constructor overrides (GTH-GMN: GTHGMNConfig fields)
    temporal: bool = False  # reads more than one snapshot
    note: str = ""


def _v(name: str, base: str, snapshots: Any = None, temporal: bool = False, note: str = "", **kw: Any) -> Variant:
    return Variant(name, base, snapshots, tuple(sorted(kw.items())), temporal, note)


#: Every variant a notebook can ask for, by name.
VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        _v("GTH-GMN", "GTH-GMN", "all", True, "the paper's training: reconstruction, Riemannian refinement, head"),
        _v("GTH-GMN (T=1)", "GTH-GMN", 1, False, "ablation: final checkpoint only"),
        _v("GTH-GMN (Euclidean)", "GTH-GMN", "all", True, "ablation: Euclidean attention (c -> 0)", euclidean=True),
        _v(
            "GTH-GMN (no GRU)",
            "GTH-GMN",
            "all",
            True,
            "ablation: static kernels, snapshots encoded independently",
            use_gru=False,
        ),
        _v(
            "GTH-GMN (small R-step)",
            "GTH-GMN",
            "all",
            True,
            "the two-stage, frozen reading with its stage-2 Riemannian step / 10 (the paper's remedy)",
            protocol="two_stage",
            head_networks_per_param=10.0,
            refine_lr_scale=0.1,
        ),
        _v(
            "GTH-GMN (two-stage, frozen)",
            "GTH-GMN",
            "all",
            True,
            "the paper's literal reading: frozen reconstruction embedding, a linear head on its leading principal "
            "components sized for the training set (>= 10 networks per head parameter)",
            protocol="two_stage",
            head_networks_per_param=10.0,
        ),
        _v(
            "GTH-GMN (fine-tuned)",
            "GTH-GMN",
            "all",
            True,
            "reconstruction pretraining, then the whole model on the task",
            protocol="finetune",
        ),
        _v(
            "GTH-GMN (joint)",
            "GTH-GMN",
            "all",
            True,
            "task + small reconstruction terms from the start",
            protocol="joint",
        ),
        _v(
            "GTH-GMN (literal links)",
            "GTH-GMN",
            "all",
            True,
            "link decoder trained on the literal graph (every nonzero weight an edge)",
            link_reading="literal",
        ),
        _v(
            "GTH-GMN (weights as input)",
            "GTH-GMN",
            "all",
            True,
            "signed weights also fed to the attention",
            use_edge_weight=True,
        ),
        _v("StatNN", "StatNN", "last", False, "NFN's StatNet: 7 statistics per tensor -> MLP 1000-1000"),
        _v("StatNN (traj)", "StatNN", "all", True, "statistics of every snapshot"),
        _v(
            "StatNN (batch norm)",
            "StatNN",
            "last",
            False,
            "statistics standardised across networks (batch norm) -> 128-wide SiLU MLP + 2-layer head "
            "(this project's earlier StatNN)",
            hidden=128,
            act="silu",
            feature_norm="batch",
            head="mlp",
        ),
        _v(
            "FlatMLP",
            "FlatMLP",
            "last",
            False,
            "flattened weights -> MLP; exploits the neuron alignment of a shared initialisation",
        ),
        _v("FlatMLP (traj)", "FlatMLP", "all", True, "flattened trajectory -> MLP (exploits alignment too)"),
        _v("FlatMLP+aug", "FlatMLP+aug", "last", False, "random hidden permutation per network and step"),
        _v("FlatMLP+aug (traj)", "FlatMLP+aug", "all", True, "the same, one permutation for all snapshots"),
        _v("NFN_NP", "NFN_NP", "last", False, "neural functional, NP layers"),
        _v("NFN_NP (traj)", "NFN_NP", "all", True, "snapshots as channels"),
        _v("NFN_HNP", "NFN_HNP", "last", False, "neural functional, HNP layers"),
        _v("NFN_HNP (traj)", "NFN_HNP", "all", True, "snapshots as channels"),
        _v("DWSNet", "DWSNet", "last", False, "DWSNets: max-pool equivariant layers, set attention, BatchNorm"),
        _v("DWSNet (traj)", "DWSNet", "all", True, "snapshots as channels"),
        _v(
            "DWSNet (DeepSets)",
            "DWSNet",
            "last",
            False,
            "DeepSets set layers instead of set attention (the reference's set_layer='ds')",
            set_layer="ds",
        ),
        _v("GMN", "GMN", "last", False, "Neural Graphs' PNA GNN on the neuron graph, output-neuron readout"),
        _v("GMN (traj)", "GMN", "all", True, "snapshots as edge and node channels"),
        _v(
            "GMN (global mean)",
            "GMN",
            "last",
            False,
            "ablation: mean of all node and all edge states as the readout (this project's earlier GMN readout)",
            readout="mean",
        ),
        _v(
            "GMN (per-layer)", "GMN", "last", False, "mean node state of each layer as the readout", readout="per_layer"
        ),
        _v(
            "GMN (per-layer, traj)",
            "GMN",
            "all",
            True,
            "per-layer readout, snapshots as channels",
            readout="per_layer",
        ),
    ]
}

#: How :func:`run_comparison` applies the baselines' reference training recipes.
RECIPE_MODES: tuple[str, ...] = ("none", "optimizer", "full")

#: Baselines that respect the networks' hidden-neuron permutation symmetry (by design or, FlatMLP+aug,
#: by augmentation): the fair comparison set for "GTH-GMN beats the best baseline".
SYMMETRY_RESPECTING: tuple[str, ...] = (
    "StatNN",
    "StatNN (batch norm)",
    "NFN_NP",
    "NFN_HNP",
    "DWSNet",
    "DWSNet (DeepSets)",
    "GMN",
    "GMN (global mean)",
    "GMN (per-layer)",
    "FlatMLP+aug",
)
#: How every model's inputs are prepared (:func:`prepare_inputs`).
INPUTS: tuple[str, ...] = ("standardize", "delta", "rms", "none")


def build_variant(name: str, zoo: Any, task: str, out_dim: int, gth_overrides: dict[str, Any] | None = None) -> Any:
    """Build the model of variant ``name`` (a key of :data:`VARIANTS`) sized for ``zoo``.

    ``gth_overrides`` are :class:`~hgutils.weightspace.metanets.GTHGMNConfig` fields applied to every
    GTH-GMN variant (e.g. ``dim``); the variant's own overrides win. A variant's ``refine_lr_scale``
    multiplies the stage-2 step size it would otherwise use (the "step / 10" variant).
    """
    from hgutils.weightspace.metanets import build_metanet

    base, snapshots, kw = variant_config(name, gth_overrides)
    return build_metanet(base, zoo, task, out_dim, snapshots=snapshots, **kw)


def variant_config(name: str, gth_overrides: dict[str, Any] | None = None) -> tuple[str, Any, dict[str, Any]]:
    """What :func:`build_variant` builds for ``name``: ``(base model, snapshots, constructor overrides)``.
    Two variants with equal configurations are the same model (e.g. "GTH-GMN" when the selection grid
    chose the frozen two-stage reading, and "GTH-GMN (two-stage, frozen)")."""
    if name not in VARIANTS:
        raise ValueError(f"unknown model variant {name!r}; choose from {sorted(VARIANTS)}")
    v = VARIANTS[name]
    kw = dict(v.kwargs)
    if v.base == "GTH-GMN":
        kw = {**(gth_overrides or {}), **kw}
        scale = kw.pop("refine_lr_scale", None)
        if scale is not None:
            from hgutils.weightspace.metanets.gth_gmn import GTHGMNConfig

            kw["refine_lr"] = scale * kw.get("refine_lr", GTHGMNConfig.refine_lr)
    return v.base, v.snapshots, kw


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
    from hgutils.data import stratified_split

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


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------
@dataclass
class ComparisonResult:
    """Output of :func:`run_comparison`.

    Attributes
    ----------
    table
        One row per (model, seed): ``model, seed, temporal``, the test metrics (``test_accuracy`` /
        ``test_mse`` / ``test_kendall_tau``), validation metrics (``val_*``), the learning rate used
        (``lr``), the learnability check (``trained``, ``gate``), ``best_epoch``, ``epochs_run``,
        ``steps``, ``seconds_per_epoch`` (wall), ``cpu_seconds`` (process CPU time of the whole fit),
        ``prepare_seconds``, and for two-stage GTH-GMN the reconstruction metrics (``recon_*``).
    splits
        The one split every model used.
    models
        The trained model of the first seed, per variant (for figures).
    data
        Prepared input containers, keyed by ``(model class, snapshots)`` (shared between variants).
    outputs
        Test-set predictions of the first seed per variant: ``(true, predicted)`` arrays
        (predicted class / value / accuracy; for InfoNCE encoders the test embeddings).
    curves
        ``curves[model][seed]``: the loop's per-epoch history (training terms, validation metrics);
        two-stage models also ``curves[model + " (stage 1)"]``.
    lr_search
        ``lr_search[model] = {lr: validation score}`` when a learning-rate grid was searched.
    inputs
        How the inputs were prepared (:func:`prepare_inputs`), and the snapshots dropped as constant.
    """

    table: pd.DataFrame
    splits: Splits
    models: dict[str, Any] = field(default_factory=dict)
    data: dict[Any, Any] = field(default_factory=dict)
    outputs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    data_key: dict[str, Any] = field(default_factory=dict)
    curves: dict[str, dict[int, list[dict[str, float]]]] = field(default_factory=dict)
    lr_search: dict[str, dict[float, float]] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)

    def data_for(self, name: str) -> Any:
        """The prepared container variant ``name`` was trained on."""
        return self.data[self.data_key[name]]

    def gate(self, name: str) -> dict[str, Any]:
        """Learnability check of model ``name`` over all its seeds: ``{"trained", "reason", "capped"}``
        -- trained only if every seed passed (the reason of the first seed that did not, else of seed
        0); capped when any seed's run stopped because its budget ran out."""
        rows = self.table[self.table["model"] == name]
        if rows.empty:
            raise ValueError(f"model {name!r} not in the results; have {sorted(set(self.table['model']))}")
        bad = rows[~rows["trained"].astype(bool)]
        row = bad.iloc[0] if len(bad) else rows.iloc[0]
        capped = bool(rows["capped"].astype(bool).any()) if "capped" in rows else False
        return {"trained": bool(len(bad) == 0), "reason": f"seed {row['seed']}: {row['gate']}", "capped": capped}

    def gates(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        """:meth:`gate` of every model in ``names`` (for ``Claims.add(..., trained=...)``)."""
        return {n: self.gate(n) for n in names}


@dataclass(frozen=True)
class ComparisonSettings(Preset):
    """What every weight-space notebook (01-03) sets the same way: the inputs every model reads, the
    budget in optimiser steps, the learning-rate search, the learnability gate and GTH-GMN's sizes.

    Notebook presets subclass it (and keep these fields' names, so any of them can be overridden
    from the notebook's parameters cell).
    """

    inputs: str = "standardize"  # how every model's inputs are prepared (prepare_inputs): standardize |
    # delta (W_t - W_0, then standardised) | rms | none
    n_seeds: int = 2  # model seeds
    epochs: int = 3  # epoch cap per model and seed (early stopping on validation decides; a run that reaches
    # the cap is marked capped)
    steps: int | None = None  # optimiser-step cap instead of epochs (None: the epoch cap)
    patience: int = 1000  # early stopping: epochs without a better validation score
    batch_size: int = 8  # networks per step
    lr: float = 1e-3  # Adam lr when no grid is searched
    lr_grid: tuple[float, ...] = (1e-3, 3e-3)  # per-model learning rates tried on the first seed (validation)
    lr_search_steps: int = 6  # optimiser steps of each lr-search run
    gth_dim: int = 16  # GTH-GMN node-state dim
    pretrain_steps: int | None = None  # GTH-GMN stage-1 (reconstruction) steps (None: the run's budget)
    pretrain_networks: int | None = None  # GTH-GMN stage 1 on this many training networks (None: all)
    refine_steps: int = 5  # GTH-GMN stage-2 Riemannian refinement steps per snapshot
    refine_lr: float = 1e-2  # GTH-GMN stage-2 Riemannian step size
    compile: bool = False  # torch.compile GTH-GMN's attention layers (pays off only for long runs)
    min_loss_drop: float = 0.05  # learnability gate: training loss must fall by this fraction
    min_accuracy_gain: float = 0.10  # learnability gate: training accuracy must beat chance by this much
    val_fraction: float = 0.15  # share of networks for validation
    test_fraction: float = 0.25  # share of networks for test
    split_seed: int = 0  # seed of the one shared split
    recipes: str = "optimizer"  # baselines' reference training recipes (RECIPE_MODES): "none" | "optimizer" |
    # "full"
    recipe_lr_scaling: str = "sqrt"  # a recipe's lr at a batch the split forces below its own (scaled_lr): "none" |
    # "sqrt" | "linear"
    augment: tuple[str, ...] = ("recipe",)  # models trained with weight-space augmentation: "recipe" (each recipe's
    # own: DWSNet, GMN) and/or model names (opt in); () for none
    workers: int = 1  # processes that fit (model, seed) runs side by side, one thread each (1: in this process)
    epoch_caps: tuple[tuple[str, int], ...] = ()  # (model, epoch cap) pairs that lower the shared cap for a
    # model the budget cannot afford to train to convergence (its capped runs are marked as such)
    # GTH-GMN's selection grid (hgutils.experiments.gth_selection), run on the first seed before the comparison;
    # the chosen (protocol, size, lr) is the base of every GTH-GMN variant. Smoke: 2 protocols x 1 size x 1 lr
    gth_protocols: tuple[str, ...] = ("two_stage", "joint")  # protocols of the grid
    gth_sizes: tuple[str, ...] = ("default",)  # sizes of the grid (SIZES: "default", "large")
    select_lr_grid: tuple[float, ...] = (1e-3,)  # learning rates of the grid (empty: the baselines' lr_grid)
    select_steps: int | None = 6  # optimiser steps per grid cell (None: the final runs' budget)

    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (checked by
    #: ``from_scale``, so ``reproduce -p`` rejects a bad or absurd value before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_seeds": (1, 100),
        "epochs": (1, 10_000),
        "steps": (1, 10_000_000),
        "patience": (1, 10_000),
        "batch_size": (1, 10_000),
        "lr": (0.0, None),
        "lr_grid": (0.0, None),
        "lr_search_steps": (0, 100_000),
        "gth_dim": (2, 1024),
        "pretrain_steps": (0, 1_000_000),
        "pretrain_networks": (1, 1_000_000),
        "refine_steps": (0, 100_000),
        "refine_lr": (0.0, None),
        "min_loss_drop": (0.0, 1.0),
        "min_accuracy_gain": (0.0, 1.0),
        "val_fraction": (0.0, 1.0),
        "test_fraction": (0.0, 1.0),
        "workers": (1, 1024),
        "split_seed": (0, 2**31 - 1),
        "epoch_caps": (1, 10_000),
        "select_lr_grid": (0.0, None),
        "select_steps": (1, 10_000_000),
    }
    #: the values of the name-like fields (each model name of ``variants`` must be one of VARIANTS)
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "inputs": INPUTS,
        "variants": tuple(VARIANTS),
        "augment": ("recipe", *VARIANTS),
        "gth_protocols": PROTOCOLS,
        "gth_sizes": tuple(SIZES),
    }

    def __post_init__(self) -> None:
        if self.val_fraction + self.test_fraction >= 1.0:
            raise ValueError(
                f"val_fraction + test_fraction must be < 1 (the rest trains); got {self.val_fraction} + "
                f"{self.test_fraction}"
            )
        if self.recipes not in RECIPE_MODES:
            raise ValueError(f"recipes must be one of {RECIPE_MODES}; got {self.recipes!r}")
        _check_lr_scaling(self.recipe_lr_scaling)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1; got {self.workers}")
        _check_epoch_caps(dict(self.epoch_caps))

    def gate(self) -> Any:
        """The :class:`hgutils.loop.LearnabilityGate` of these settings."""
        from hgutils.loop import LearnabilityGate

        return LearnabilityGate(self.min_loss_drop, self.min_accuracy_gain)

    def comparison_kwargs(self, device: str = "cpu") -> dict[str, Any]:
        """Keyword arguments of :func:`run_comparison` (training settings, inputs, lr search, gate)."""
        from hgutils.weightspace.tasks import TrainConfig

        cfg = TrainConfig(
            epochs=self.epochs,
            steps=self.steps,
            patience=self.patience,
            batch_size=self.batch_size,
            lr=self.lr,
            device=device,
        )
        gth = {
            "dim": self.gth_dim,
            "pretrain_steps": self.pretrain_steps,
            "pretrain_networks": self.pretrain_networks,
            "refine_steps": self.refine_steps,
            "refine_lr": self.refine_lr,
            "compile": self.compile,
        }
        return {
            "train_cfg": cfg,
            "gth_overrides": gth,
            "inputs": self.inputs,
            "lr_grid": self.lr_grid or None,
            "lr_search_steps": self.lr_search_steps,
            "gate": self.gate(),
            "recipes": self.recipes,
            "recipe_lr_scaling": self.recipe_lr_scaling,
            "augment": self.augment,
            "workers": self.workers,
            "epoch_caps": dict(self.epoch_caps),
        }


def _check_lr_scaling(rule: str) -> None:
    from hgutils.weightspace.metanets.recipes import LR_SCALING_RULES

    if rule not in LR_SCALING_RULES:
        raise ValueError(f"recipe_lr_scaling must be one of {LR_SCALING_RULES}; got {rule!r}")


def _check_epoch_caps(caps: Mapping[str, int]) -> None:
    for name, cap in caps.items():
        if name not in VARIANTS:
            raise ValueError(f"epoch_caps: unknown model {name!r}; known: {sorted(VARIANTS)}")
        if int(cap) < 1:
            raise ValueError(f"epoch_caps: the cap of {name!r} must be >= 1; got {cap}")


def _data_key(model: Any) -> tuple[str, str, bool]:
    return type(model).__name__, repr(model.snapshots), bool(getattr(model, "reads_raw_weights", False))


def constant_snapshots(zoo: Any, idx: Tensor | None = None) -> list[int]:
    """Snapshots at which every network of ``zoo[idx]`` has the same parameters (e.g. step 0 of a
    shared-initialisation zoo): they carry no information about any network."""
    sel = slice(None) if idx is None else idx
    out = []
    for t in range(zoo.T):
        if all(bool((v[sel, t] == v[sel, t][:1]).all()) for v in zoo.params.values()):
            out.append(t)
    return out


def prepare_inputs(
    zoo: Any, splits: Splits, inputs: str = "standardize", drop_constant: bool = True
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


def _fingerprint(zoo: Any) -> str:
    """A cheap content hash of a zoo's parameters (for cache keys)."""
    import hashlib

    h = hashlib.sha256()
    for k in sorted(zoo.params):
        h.update(k.encode())
        h.update(zoo.params[k].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def run_comparison(
    zoo: Any,
    task: str,
    target: Tensor | None,
    out_dim: int,
    variants: Sequence[str],
    splits: Splits,
    seeds: Sequence[int],
    train_cfg: Any = None,
    gth_overrides: dict[str, Any] | None = None,
    desc: str = "",
    inputs: str = "standardize",
    drop_constant: bool = True,
    lr_grid: Sequence[float] | None = None,
    lr_search_steps: int | None = None,
    gate: Any = None,
    variant_seeds: Mapping[str, Sequence[int]] | None = None,
    recipes: str = "none",
    workers: int = 1,
    epoch_caps: Mapping[str, int] | None = None,
    recipe_lr_scaling: str = "sqrt",
    augment: Sequence[str] = ("recipe",),
    family_lr: Mapping[str, float] | None = None,
) -> ComparisonResult:
    """Train every variant on ``zoo`` once per seed with the shared loop; the split never changes.

    Parameters
    ----------
    zoo
        A :class:`~hgutils.weightspace.zoo.Zoo`.
    task
        ``"classification"`` | ``"regression"`` | ``"accuracy"`` | ``"infonce"`` (the head's task).
    target
        ``[N]`` labels / ``[N, k]`` targets / ``[N]`` accuracies; for ``"infonce"`` the regression
        targets of the linear probe (``[N, k]``) or ``None``.
    out_dim
        Classes, regression outputs, or the InfoNCE embedding width.
    variants
        Names from :data:`VARIANTS`.
    seeds
        Model seeds; each seeds the model initialisation (:func:`hgutils.repro.seed_everything`)
        and the loop's batch order (``TrainConfig.seed``).
    train_cfg
        A :class:`hgutils.weightspace.tasks.TrainConfig` (its ``seed`` and ``lr`` are replaced per run).
    inputs, drop_constant
        How every model's inputs are prepared (:func:`prepare_inputs`): the same for every model, except
        that a model which reads the trained weights themselves (``model.reads_raw_weights``: GTH-GMN,
        whose decoder reconstructs them) gets the zoo with only the constant snapshots dropped.
    lr_grid, lr_search_steps
        Per model family (a base model of :data:`VARIANTS`: GTH-GMN and its ablations are one
        family, every baseline its own), each learning rate of ``lr_grid`` is tried with the family's
        first listed variant on the first seed for ``lr_search_steps`` optimiser steps (default: the
        full budget); the one with the best validation score is used for every variant of the family
        and every seed -- the same tuning effort for every model. Results are cached
        (:func:`hgutils.repro.cached`) by zoo content, split, model and settings.

    gate
        The :class:`hgutils.loop.LearnabilityGate` thresholds (default ones if ``None``).
    variant_seeds
        Seeds for particular variants (e.g. ablations on the first two seeds only); the others use
        ``seeds``. The learning-rate search always runs on ``seeds[0]``.
    recipes
        How a baseline with a reference training recipe
        (:func:`hgutils.weightspace.metanets.recipe_for`) is trained (:data:`RECIPE_MODES`):
        ``"none"``: like every model, with ``train_cfg`` and the searched learning rate;
        ``"optimizer"``: with its authors' optimiser, learning rate (no search), weight decay,
        AMSGrad, warmup, gradient clip and batch size (the whole training split when it holds fewer
        networks, :func:`~hgutils.weightspace.metanets.recipes.recipe_batch_and_lr`), input normalisation
        (``Recipe.inputs``: the model gets raw weights for ``"per_layer"`` -- GMN standardises them
        itself -- and ``"none"``) and training augmentation (``augment``), on the shared epoch cap and
        early stopping; ``"full"``: also the authors' epoch cap. The row's ``recipe`` column names what
        was applied; :func:`~hgutils.weightspace.metanets.recipes.as_trained` tabulates batch, lr, inputs
        and augmentation per model.
    recipe_lr_scaling
        How a recipe's learning rate follows a batch size below the recipe's, when the training split
        is smaller than the recipe's batch (:func:`hgutils.weightspace.metanets.recipes.scaled_lr`:
        ``"none"`` keeps it, ``"sqrt"`` and ``"linear"`` scale it by :math:`(B / B_{ref})^{1/2}` or
        :math:`B / B_{ref}`); the row's ``lr`` is the rate used and its ``recipe`` column names the rule.
    augment
        Which models train with weight-space augmentation (:mod:`hgutils.weightspace.augment`, applied
        to the raw weights of every training batch, never to validation or test): ``"recipe"`` --
        every model whose recipe augments (DWSNet, GMN; not with ``recipes="none"``) with the
        recipe's magnitudes -- and/or variant names, which opt in with their recipe's magnitudes or,
        without a recipe, the references' (:data:`~hgutils.weightspace.augment.REFERENCE_DEFAULTS` on
        INR zoos, noise and dropout only -- :data:`~hgutils.weightspace.augment.WEIGHT_NOISE_DEFAULTS`
        -- on others). Empty: no model. On a zoo that is not of INRs (``zoo.info["kind"]``) the coordinate
        transforms are switched off (:func:`~hgutils.weightspace.augment.for_zoo`; the row's ``augment``
        column lists what ran). Refused for GTH-GMN (graph inputs) and for ``inputs`` ``"delta"`` and ``"rms"``.
    workers
        ``1``: every (variant, seed) run in this process. ``k > 1``: the runs are fitted in ``k``
        forked processes with one thread each (after the learning-rate searches, which stay here);
        runs that share GTH-GMN's stage 1 (variants differing only in their stage-2 settings) stay in
        one process, in order. Each run seeds itself, so the results are those of ``workers=1`` up to
        floating-point summation order.
    family_lr
        ``{base model: lr}``: a learning rate already chosen for a family (GTH-GMN's, by the selection
        grid of :mod:`hgutils.experiments.gth_selection`); that family is not searched again.
    epoch_caps
        ``{model: epochs}``: a lower epoch cap for these models (an expensive baseline the budget cannot
        train to convergence); it replaces ``train_cfg.epochs`` (and a step cap) for that model only,
        and a run that reaches it is marked ``capped`` like any other.

    Notes
    -----
    Finished runs are cached (:meth:`_Runner.fit_run`): a rerun after a stop or a failure trains only
    what had not finished, and two variants of one configuration (:func:`variant_config`, e.g. "GTH-GMN"
    when the selection grid chose the frozen two-stage reading, and "GTH-GMN (two-stage, frozen)") train
    once, the second reading the first's run.
    """
    from hgutils.weightspace.tasks import TrainConfig

    seeds = _check_run(zoo, target, variants, splits, seeds, lr_grid)
    if recipes not in RECIPE_MODES:
        raise ValueError(f"recipes must be one of {RECIPE_MODES}; got {recipes!r}")
    _check_epoch_caps(epoch_caps or {})
    _check_lr_scaling(recipe_lr_scaling)
    runner = _Runner(zoo, task, target, out_dim, splits, train_cfg or TrainConfig(), gth_overrides, gate, recipes)
    runner.lr_scaling = recipe_lr_scaling
    runner.epoch_caps = {k: int(v) for k, v in (epoch_caps or {}).items()}
    runner.augment = _check_augment(augment)
    runner.prepare(inputs, drop_constant)
    if workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    for name in variants:  # refuse an augmentation that does not apply before any training starts
        runner.augment_of(name)
    searched: dict[str, str] = {}  # model family -> the variant its learning rate was searched on
    runs: list[tuple[str, int, float, bool]] = []
    for name in list(variants):
        lr = runner.train_cfg.lr
        if runner.recipe(name) is not None:
            lr = runner.recipe_lr(name)
        elif VARIANTS[name].base in (family_lr or {}):
            lr = float(family_lr[VARIANTS[name].base])
        elif lr_grid:
            base = VARIANTS[name].base
            if base not in searched:  # one search per model family: its first variant in the list
                searched[base] = name
                runner.res.lr_search[name] = runner.search_lr(name, seeds[0], lr_grid, lr_search_steps, workers)
            scores = runner.res.lr_search[searched[base]]
            lr = max(scores, key=scores.get)
        runs += [(name, int(seed), lr, si == 0) for si, seed in enumerate((variant_seeds or {}).get(name, seeds))]
    runner.res.table = pd.DataFrame(runner.fit_all(runs, workers, desc or "models"))
    return runner.res


def _check_augment(augment: Sequence[str]) -> tuple[str, ...]:
    if isinstance(augment, str):
        augment = (augment,)
    bad = [a for a in augment if a != "recipe" and a not in VARIANTS]
    if bad:
        raise ValueError(f"augment: unknown entries {bad}; use 'recipe' and/or model variants {sorted(VARIANTS)}")
    return tuple(augment)


#: GTH-GMN settings that act after stage 1: variants differing only in these share their stage 1
_STAGE2_KEYS = frozenset({"refine_lr_scale", "refine_steps", "refine_lr"})


#: bump when a cached final run's payload (:meth:`_Runner.fit_run`) changes its layout
_RUN_CACHE_VERSION = 1


@functools.cache
def _run_code_fingerprint() -> str:
    """The source a final run's outcome depends on: the meta-networks, the layers and manifolds, the
    tasks, graphs and augmentations, the loop and this protocol (an edit to any of them retrains); read
    once per process, not once per run."""
    root = Path(__file__).resolve().parents[1]
    return source_fingerprint([root / "weightspace", root / "nn", root / "manifolds", root / "loop.py"])


def _stage1_groups(runs: Sequence[tuple[str, int, float, bool]]) -> list[list[tuple[str, int, float, bool]]]:
    """``runs`` grouped so that runs which can share a stage 1 (same base, snapshots, seed and
    constructor overrides apart from stage-2 settings) sit in one group, in their listed order."""
    groups: dict[Any, list[tuple[str, int, float, bool]]] = {}
    for r in runs:
        v = VARIANTS[r[0]]
        key = (v.base, repr(v.snapshots), tuple(kv for kv in v.kwargs if kv[0] not in _STAGE2_KEYS), r[1])
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def _fit_group(
    runner: _Runner, group: list[tuple[str, int, float, bool]]
) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """Fit one group of runs (in a forked worker); returns each run's row, curves and kept outputs."""
    out = []
    for name, seed, lr, keep in group:
        row = runner.fit_run(name, seed, lr, keep_outputs=keep)
        curves = {k: {seed: runner.res.curves[k][seed]} for k in (name, f"{name} (stage 1)") if k in runner.res.curves}
        kept = (runner.res.models.pop(name), runner.res.outputs.pop(name)) if keep else None
        out.append((row, curves, kept))
    return out


def _check_run(
    zoo: Any,
    target: Tensor | None,
    variants: Sequence[str],
    splits: Splits,
    seeds: Sequence[int],
    lr_grid: Sequence[float] | None,
) -> list[int]:
    """Validate :func:`run_comparison`'s arguments (one ``ValueError`` naming what was expected); the seeds as ints."""
    if not variants:
        raise ValueError("variants is empty: name at least one model variant")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown model variant(s) {unknown}; choose from {sorted(VARIANTS)}")
    if len(set(variants)) != len(variants):
        raise ValueError(f"variants must be distinct; got {list(variants)}")
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list of distinct ints; got {seeds}")
    if lr_grid is not None and (len(lr_grid) == 0 or any(not lr > 0 for lr in lr_grid)):
        raise ValueError(f"lr_grid must hold positive learning rates; got {lr_grid}")
    n = len(zoo)
    allidx = torch.cat([splits.train, splits.val, splits.test])
    if int(allidx.max()) >= n or int(allidx.min()) < 0 or len(allidx.unique()) != len(allidx):
        raise ValueError(f"splits must be disjoint indices into the zoo's {n} networks")
    if target is not None and len(target) != n:
        raise ValueError(f"target must have one entry per network ({n}); got {len(target)}")
    return seeds


class _Runner:
    """The steps of :func:`run_comparison` on one zoo and split: prepare the inputs once, build and
    prepare each model's container once per kind, search a family's learning rate, fit one (model,
    seed) and record its row, curves and first-seed outputs in a :class:`ComparisonResult`."""

    def __init__(
        self,
        zoo: Any,
        task: str,
        target: Tensor | None,
        out_dim: int,
        splits: Splits,
        train_cfg: Any,
        gth_overrides: dict[str, Any] | None,
        gate: Any,
        recipes: str = "none",
    ) -> None:
        self.zoo = self.raw = zoo
        self.task, self.target, self.out_dim, self.splits = task, target, out_dim, splits
        self.train_cfg, self.gth_overrides, self.gate, self.recipes = train_cfg, gth_overrides, gate, recipes
        self.lr_scaling = "none"  # recipe learning rates at our batch size (run_comparison: recipe_lr_scaling)
        self.res = ComparisonResult(pd.DataFrame(), splits)
        self.prep_time: dict[Any, float] = {}
        self.pretrained: dict[str, Any] = {}  # stage 1 shared by GTH-GMN variants that differ only in stage 2
        self.fingerprint = ""
        self.epoch_caps: dict[str, int] = {}
        self.augment: tuple[str, ...] = ("recipe",)  # run_comparison: augment
        self.inputs = "standardize"  # the shared inputs (prepare)
        self.zoos: dict[str, Any] = {}  # prepared zoos by input normalisation

    def prepare(self, inputs: str, drop_constant: bool) -> None:
        """Every model's inputs (:func:`prepare_inputs`); models that read the trained weights get the
        raw zoo minus the same constant snapshots."""
        self.zoo, record = prepare_inputs(self.raw, self.splits, inputs, drop_constant)
        if record["dropped_snapshots"]:
            self.raw = self.raw.snapshots([t for t in range(self.raw.T) if t not in record["dropped_snapshots"]])
        self.res.inputs = record
        self.fingerprint = _fingerprint(self.zoo)
        self.inputs = inputs
        self.zoos = {inputs: self.zoo, "none": self.raw, "per_layer": self.raw}

    def build(self, name: str) -> Any:
        model = build_variant(name, self.zoo, self.task, self.out_dim, self.gth_overrides)
        if self.inputs_of(name) == "per_layer":  # the model standardises raw weights itself (GMN)
            if not hasattr(model, "input_norm"):
                raise ValueError(f"{name}'s recipe asks for per-layer inputs, which {type(model).__name__} lacks")
            model.input_norm = "per_layer"
        return model

    def inputs_of(self, name: str) -> str:
        """The input normalisation ``name`` trains on: its recipe's (``Recipe.inputs``) or the shared one."""
        r = self.recipe(name)
        return self.inputs if r is None else r.inputs

    def zoo_for(self, inputs: str) -> Any:
        """The zoo normalised as ``inputs`` says (raw for ``"none"`` and ``"per_layer"``), prepared once."""
        if inputs not in self.zoos:
            self.zoos[inputs] = prepare_inputs(self.raw, self.splits, inputs, drop_constant=False)[0]
        return self.zoos[inputs]

    def augment_of(self, name: str) -> Any:
        """The weight-space augmentation of ``name``'s training batches (``None``: none; run_comparison's
        ``augment``); raises ``ValueError`` where it cannot apply."""
        from hgutils.weightspace.augment import REFERENCE_DEFAULTS, WEIGHT_NOISE_DEFAULTS, for_zoo

        r, kind = self.recipe(name), self.raw.info.get("kind")
        if name in self.augment:
            default = REFERENCE_DEFAULTS if kind in ("inr", "sine") else WEIGHT_NOISE_DEFAULTS
            aug = r.augment if r is not None and r.augment is not None else default
        else:
            aug = r.augment if r is not None and "recipe" in self.augment else None
        if aug is None:
            return None
        if VARIANTS[name].base == "GTH-GMN":
            raise ValueError(f"{name} reads graphs, not weight tensors: weight-space augmentation does not apply")
        if self.inputs_of(name) in ("delta", "rms"):
            raise ValueError(
                f"augmenting {name} needs raw or per-entry standardised inputs; its inputs are {self.inputs_of(name)!r}"
            )
        return for_zoo(aug, kind)  # the coordinate transforms only on INR zoos (the row's augment column says)

    def recipe(self, name: str) -> Any:
        """The reference recipe variant ``name`` trains with (``None``: the shared settings)."""
        from hgutils.weightspace.metanets.recipes import recipe_for

        return None if self.recipes == "none" else recipe_for(VARIANTS[name].base, self.task)

    def recipe_lr(self, name: str) -> float:
        """The learning rate of ``name``'s recipe at the batch size its runs use (``lr_scaling``)."""
        from hgutils.weightspace.metanets.recipes import recipe_batch_and_lr

        return recipe_batch_and_lr(self.recipe(name), len(self.splits.train), self.lr_scaling)[1]

    def _batch_of(self, recipe: Any) -> int:
        """The batch size a run with ``recipe`` uses: the recipe's, or the whole training split when smaller."""
        from hgutils.weightspace.metanets.recipes import recipe_batch_and_lr

        return recipe_batch_and_lr(recipe, len(self.splits.train), self.lr_scaling)[0]

    def train_cfg_of(self, name: str, seed: int, lr: float) -> Any:
        """The loop settings of one run: the shared ones, with the reference recipe's optimiser
        (and, ``recipes="full"``, its batch size and epoch cap) applied per :func:`run_comparison`."""
        cfg = replace(self.train_cfg, seed=seed, lr=lr, augment=self.augment_of(name))
        if name in self.epoch_caps:
            cfg = replace(cfg, epochs=self.epoch_caps[name], steps=None)
        r = self.recipe(name)
        if r is None:
            return cfg
        cfg = replace(
            cfg,
            optimizer=r.optimizer,
            weight_decay=r.weight_decay,
            amsgrad=r.amsgrad,
            warmup_steps=r.warmup_steps,
            grad_clip=r.grad_clip,
            batch_size=self._batch_of(r),
        )
        if self.recipes == "full":
            cfg = replace(cfg, epochs=self.epoch_caps.get(name, r.epochs), steps=None)
        return cfg

    def data_of(self, model: Any, name: str) -> Any:
        """The prepared container of ``model``'s kind (built once, shared by variants of that kind)."""
        cls, snaps, raw = _data_key(model)
        key = (cls, snaps, "graph (raw)" if raw else self.inputs_of(name))
        if key not in self.res.data:
            t0 = time.perf_counter()
            self.res.data[key] = model.prepare(self.raw if raw else self.zoo_for(key[2]))
            self.prep_time[key] = time.perf_counter() - t0
        self.res.data_key[name] = key
        return self.res.data[key]

    def search_lr(
        self, name: str, seed: int, grid: Sequence[float], search_steps: int | None, workers: int = 1
    ) -> dict[float, float]:
        """Validation score of variant ``name`` at each learning rate of ``grid`` (first seed, a
        ``search_steps``-step run each, in ``workers`` forked processes when > 1; cached by zoo
        content, split, model and settings)."""

        def run() -> dict[float, float]:
            tries = [(name, seed, float(lr), search_steps) for lr in grid]
            if workers <= 1 or len(tries) <= 1:
                return dict(zip([t[2] for t in tries], [self.search_one(*t) for t in tries]))
            self.data_of(self.build(name), name)
            return dict(zip([t[2] for t in tries], forked_map(lambda t: self.search_one(*t), tries, workers)))

        key = {
            "zoo": self.fingerprint,
            "task": self.task,
            "variant": name,
            "overrides": self.gth_overrides,
            "split": self.splits.train,
            "val": self.splits.val,
            "cfg": replace(self.train_cfg, seed=0),
            "grid": list(grid),
            "steps": search_steps,
            "seed": seed,
            "augment": self.augment_of(name),
            "version": 2,
        }
        return cached("lr_search", key, run)

    def search_one(self, name: str, seed: int, lr: float, search_steps: int | None) -> float:
        """Best validation score of one learning-rate trial (``-inf`` when it never produced one, or its
        training loss went non-finite: a rate the model cannot take loses the search, it does not end it)."""
        from hgutils.weightspace.tasks import fit

        seed_everything(seed)
        model = self.build(name)
        cfg = replace(self.train_cfg, seed=seed, lr=lr, checkpoint_path=None, augment=self.augment_of(name))
        if search_steps:
            cfg = replace(cfg, steps=search_steps)
        sp = self.splits
        data = self.data_of(model, name)
        try:
            fr = fit(model, data, self.target, sp.train, sp.val, None, cfg, desc=f"{name} lr={lr:g}", gate=self.gate)
        except FloatingPointError:
            return float("-inf")
        return float(fr.best_score) if np.isfinite(fr.best_score) and not fr.diverged else float("-inf")

    def _recipe_mode(self, recipe: Any) -> str:
        batch = self._batch_of(recipe)
        if self.lr_scaling == "none" or batch == recipe.batch_size:
            return self.recipes
        return f"{self.recipes}; lr {recipe.lr:g} {self.lr_scaling}-scaled from batch {recipe.batch_size} to {batch}"

    def run_key(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """Everything that decides one final run's outcome (the run cache's key): the prepared zoo's
        content, target, split, the variant and its settings, the training configuration this run gets,
        the gate, and the source of the models, the loop and this protocol."""
        sp = self.splits
        return {
            "zoo": self.fingerprint,
            "task": self.task,
            "target": self.target,
            "out_dim": self.out_dim,
            "splits": [sp.train, sp.val, sp.test],
            "model": variant_config(name, self.gth_overrides),  # by configuration: equal variants share a run
            "seed": int(seed),
            "lr": float(lr),
            "keep": bool(keep_outputs),
            "cfg": self.train_cfg_of(name, seed, lr),
            "inputs": self.inputs_of(name),
            "recipe": self._recipe_mode(self.recipe(name)) if self.recipe(name) is not None else None,
            "gate": None if self.gate is None else asdict(self.gate),
            "code": _run_code_fingerprint(),
            "version": _RUN_CACHE_VERSION,
        }

    def fit_run(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """:meth:`fit_one`, stored once finished (:func:`hgutils.repro.cached`, under ``comparison_run``):
        a rerun of a stopped or failed comparison reads its finished runs -- row, curves, and for the
        first seed the trained weights and test outputs -- instead of training them again."""
        fresh = []

        def run() -> dict[str, Any]:
            fresh.append(True)
            row = self.fit_one(name, seed, lr, keep_outputs)
            curves = {k: self.res.curves[name + k][seed] for k in ("", " (stage 1)") if name + k in self.res.curves}
            kept = None
            if keep_outputs:
                kept = {"state": self.res.models[name].state_dict(), "outputs": self.res.outputs[name]}
            return {"row": row, "curves": curves, "kept": kept}

        out = cached("comparison_run", self.run_key(name, seed, lr, keep_outputs), run)
        if not fresh:  # read back (maybe a run of an equal variant): what the live run would have left behind
            log.info("%s seed %d: read from the run cache (%s, trained before)", name, seed, out["row"]["model"])
            for suffix, history in out["curves"].items():
                self.res.curves.setdefault(name + suffix, {})[seed] = history
            if out["kept"] is not None:
                model = self.build(name)
                self.data_of(model, name)
                model.load_state_dict(out["kept"]["state"])
                self.res.models[name], self.res.outputs[name] = model.eval(), tuple(out["kept"]["outputs"])
        return {**out["row"], "model": name, "temporal": VARIANTS[name].temporal}

    def fit_one(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """Train variant ``name`` with ``seed`` at ``lr`` on the split; returns its results row (and
        keeps curves; the model and test outputs too when ``keep_outputs``)."""
        from hgutils.weightspace.tasks import fit

        seed_everything(seed)
        model = self.build(name)
        data = self.data_of(model, name)
        cfg = self.train_cfg_of(name, seed, lr)
        recipe = self.recipe(name)
        c0 = time.process_time()
        sp = self.splits
        try:
            fr = fit(
                model,
                data,
                self.target,
                sp.train,
                sp.val,
                sp.test,
                cfg,
                desc=f"{name} s{seed}",
                gate=self.gate,
                pretrain_cache=self.pretrained,
            )
        except FloatingPointError as exc:  # diverged before any validated epoch: nothing to keep
            raise FloatingPointError(f"{name}, seed {seed}, lr {lr:g}: {exc}") from exc
        gs = fr.gate_summary()
        row: dict[str, Any] = {
            "model": name,
            "seed": seed,
            "temporal": VARIANTS[name].temporal,
            "lr": lr,
            "recipe": "" if recipe is None else f"{recipe.source.split(':')[0]} ({self._recipe_mode(recipe)})",
            "trained": gs["trained"],
            "gate": gs["reason"],
            "capped": fr.capped,
            "diverged": fr.diverged,
            "stopped": "; ".join(f"{k}: {v}" for k, v in fr.stopped.items()),
            "batch_size": cfg.batch_size,
            "reference_batch": "" if recipe is None else recipe.batch_size,
            "reference_lr": "" if recipe is None else recipe.lr,
            "inputs": "raw" if getattr(model, "reads_raw_weights", False) else self.inputs_of(name),
            "augment": "off" if cfg.augment is None else cfg.augment.describe(),
        }
        for part in ("test", "val", "train"):
            for k, v in fr.metrics.get(part, {}).items():
                row[f"{part}_{k}"] = v
        row.update({f"recon_{k}": v for k, v in fr.recon.items()})
        if VARIANTS[name].base == "GTH-GMN":  # which configuration of the selection grid this row ran
            row.update(protocol=model.cfg.protocol, size=model.cfg.size_name())
        row.update(
            best_epoch=fr.best_epoch,
            epochs_run=len(fr.history),
            steps=fr.steps,
            seconds_per_epoch=fr.seconds_per_epoch,
            cpu_seconds=time.process_time() - c0,
            prepare_seconds=self.prep_time[self.res.data_key[name]],
        )
        self.res.curves.setdefault(name, {})[seed] = fr.history
        if fr.pretrain_log is not None:
            self.res.curves.setdefault(f"{name} (stage 1)", {})[seed] = fr.pretrain_log.history
        if keep_outputs:
            self.keep_outputs(name, model, data)
        log.info("%s seed %d: %s", name, seed, {k: v for k, v in row.items() if k.startswith("test_")})
        return row

    def fit_all(self, runs: Sequence[tuple[str, int, float, bool]], workers: int, desc: str) -> list[dict[str, Any]]:
        """Every ``(variant, seed, lr, keep_outputs)`` run, here or in ``workers`` forked processes
        (:func:`run_comparison`); the rows in the order of ``runs``."""
        if workers <= 1 or len(runs) <= 1:
            return [self.fit_run(n, s, lr, keep_outputs=k) for n, s, lr, k in progress(runs, desc=desc)]
        for name in dict.fromkeys(r[0] for r in runs):  # containers built once, before the fork shares them
            self.data_of(self.build(name), name)
        done: dict[tuple[str, int], dict[str, Any]] = {}
        groups = _stage1_groups(runs)
        for results in forked_map(lambda g: _fit_group(self, g), groups, workers, f"{desc} ({workers} workers)"):
            for row, curves, kept in results:
                done[(row["model"], row["seed"])] = row
                for k, c in curves.items():
                    self.res.curves.setdefault(k, {}).update(c)
                if kept is not None:
                    self.res.models[row["model"]], self.res.outputs[row["model"]] = kept
        for k in self.res.curves:  # seeds ascending, as the sequential order leaves them
            self.res.curves[k] = dict(sorted(self.res.curves[k].items()))
        return [done[(n, s)] for n, s, _, _ in runs]

    def keep_outputs(self, name: str, model: Any, data: Any) -> None:
        """The first seed's model and its test outputs (predictions, or InfoNCE embeddings)."""
        from hgutils.weightspace.metanets.heads import predict
        from hgutils.weightspace.tasks import embeddings, predict_outputs

        test = self.splits.test
        self.res.models[name] = model
        if self.task == "infonce":
            emb = embeddings(model, data, test)
            y = self.target[test] if self.target is not None else torch.zeros(len(test))
            self.res.outputs[name] = (y.numpy(), emb.numpy())
        else:
            out = predict_outputs(model, data, test)
            self.res.outputs[name] = (self.target[test].numpy(), predict(self.task, out).numpy())


def protocol_table(run: ComparisonResult) -> pd.DataFrame:
    """One row per model: the learning rate used (and the grid's validation scores), optimiser steps,
    whether every seed passed the learnability check, and the check's reason for the first seed that
    did not (else for seed 0)."""
    rows = []
    for name in dict.fromkeys(run.table["model"]):
        t = run.table[run.table["model"] == name]
        g = run.gate(name)
        row = {
            "model": name,
            "lr": float(t["lr"].iloc[0]),
            "recipe": str(t["recipe"].iloc[0]) if "recipe" in t else "",
            "steps": int(t["steps"].max()),
            "trained": g["trained"],
            "learnability check": g["reason"],
        }
        if name in run.lr_search:
            row["lr search (val score)"] = ", ".join(f"{lr:g}: {s:.3f}" for lr, s in run.lr_search[name].items())
        rows.append(row)
    return pd.DataFrame(rows)


def recon_table(run: ComparisonResult) -> pd.DataFrame:
    """Reconstruction quality of every two-stage model (validation networks, after the stage-2
    refinement; mean ± std over seeds) beside the baselines a decoder must beat: link BCE against an
    uninformative decoder (2 ln 2 = 1.386), link AUC against 0.5 (overall and against each kind of
    negative pair), sign accuracy against the per-layer-block majority sign, magnitude R² against
    predicting each weight's log-magnitude by its layer block's mean."""
    pairs = [
        ("link_bce", None),
        ("link_auc", None),
        ("link_auc_weak", None),
        ("link_auc_same_layer", None),
        ("link_auc_other", None),
        ("sign_acc", "sign_majority"),
        ("mag_r2", "mag_r2_block_mean"),
    ]
    have = [(m, b) for m, b in pairs if f"recon_{m}" in run.table and run.table[f"recon_{m}"].notna().any()]
    if not have:
        return pd.DataFrame()
    t = run.table.dropna(subset=[f"recon_{have[0][0]}"])
    rows = []
    for name in dict.fromkeys(t["model"]):
        g = t[t["model"] == name]
        row = {"model": name}
        for m, b in have:
            row[m] = f"{g[f'recon_{m}'].mean():.3f} ± {g[f'recon_{m}'].std(ddof=0):.3f}"
            if b is not None and f"recon_{b}" in g:
                row[f"{m} baseline"] = f"{g[f'recon_{b}'].mean():.3f}"
        rows.append(row)
    base = {"model": "uninformative decoder", "link_bce": f"{2 * np.log(2):.3f}"}
    base.update({m: "0.500" for m, _ in have if m.startswith("link_auc")})
    rows.append(base)
    return pd.DataFrame(rows).fillna("—")


def summarize(table: pd.DataFrame, metrics: Sequence[str], digits: int = 3) -> pd.DataFrame:
    """Mean ± std over seeds per model (population std ``ddof=0``; 0 with one seed).

    Returns one row per model (in first-appearance order) with ``n_seeds``, ``<m>_mean``,
    ``<m>_std`` and a formatted ``<m>`` column ``"mean ± std"``.
    """
    if table.empty:
        raise ValueError("the results table is empty")
    missing = [m for m in metrics if m not in table]
    if missing:
        raise ValueError(f"results table has no column(s) {missing}; columns are {list(table.columns)}")
    order = list(dict.fromkeys(table["model"]))
    g = table.groupby("model", sort=False)
    out = pd.DataFrame({"model": order})
    out["n_seeds"] = [int(g.get_group(m)["seed"].nunique()) for m in order]
    for m in metrics:
        mean = g[m].mean().reindex(order).to_numpy()
        std = g[m].std(ddof=0).reindex(order).to_numpy()
        out[f"{m}_mean"], out[f"{m}_std"] = mean, std
        out[m] = [f"{a:.{digits}f} ± {b:.{digits}f}" for a, b in zip(mean, std)]
    return out


def run_lengths(table: pd.DataFrame) -> pd.DataFrame:
    """How each model's runs ended, one row per model (first-appearance order): ``epochs`` (median
    epochs run), ``capped`` (seeds that reached their budget) and ``diverged`` (seeds whose loss went
    non-finite, each kept its best validated epoch; ``0`` for tables from before the column)."""
    t = table.assign(diverged=table["diverged"].fillna("").astype(str).ne("") if "diverged" in table else False)
    return t.groupby("model", sort=False).agg(
        epochs=("epochs_run", "median"), capped=("capped", "sum"), diverged=("diverged", "sum")
    )


def per_seed(table: pd.DataFrame, metric: str, models: Sequence[str]) -> dict[str, list[float]]:
    """``{model: [metric at each seed]}`` from a :func:`run_comparison` results table, seeds ascending.

    Raises
    ------
    ValueError
        If a model or the metric is missing from the table.
    """
    if metric not in table:
        raise ValueError(f"results table has no column {metric!r}; columns are {list(table.columns)}")
    have = list(dict.fromkeys(table["model"]))
    missing = [m for m in models if m not in have]
    if missing:
        raise ValueError(f"model(s) {missing} not in the results table; have {have}")
    out = {}
    for m in models:
        rows = table[table["model"] == m].sort_values("seed")
        out[m] = [float(v) for v in rows[metric]]
    return out


def difference(
    table: pd.DataFrame,
    a: str,
    b: str,
    metric: str,
    higher_is_better: bool = True,
    scale: float = 1.0,
    unit: str = "",
    paired: bool = False,
    digits: int = 3,
) -> Difference:
    """``a`` against ``b`` on ``metric`` over seeds (:func:`hgutils.verdicts.compare_seeds`).

    Different models trained on the same split with the same seed numbers share nothing but the
    split, so the default is unpaired; ``paired=True`` for variants that share a stage per seed
    (e.g. one stage-1 encoder refined two ways).
    """
    v = per_seed(table, metric, [a, b])
    return compare_seeds(
        v[a],
        v[b],
        paired=paired,
        higher_is_better=higher_is_better,
        label=f"{a} vs {b}",
        unit=unit,
        scale=scale,
        digits=digits,
    )


def best_model(summary: pd.DataFrame, metric: str, among: Sequence[str], higher_is_better: bool = True) -> str:
    """Name of the model with the best mean ``metric`` among ``among`` (ties: first listed)."""
    s = summary.set_index("model")
    cand = [m for m in among if m in s.index]
    if not cand:
        raise ValueError(f"none of {list(among)} is in the summary")
    vals = [float(s.loc[m, f"{metric}_mean"]) for m in cand]
    i = int(np.argmax(vals) if higher_is_better else np.argmin(vals))
    return cand[i]


def paper_table(
    paper: Mapping[str, tuple[float, float]],
    ours: pd.DataFrame | None = None,
    metric: str | None = None,
    scale: float = 1.0,
    method: str = "GTH-GMN",
) -> pd.DataFrame:
    """A paper's table (``{model: (mean, std)}``) beside ours on the same protocol.

    ``ours`` is a :func:`summarize` output and ``metric`` its metric (multiplied by ``scale``, e.g.
    100 for accuracy in %); models absent from ``ours`` get ``—``. Rows other than ``method`` are
    marked as measured by the baseline's own paper on its own dataset.
    """
    if not paper:
        raise ValueError("paper table is empty")
    rows = []
    s = ours.set_index("model") if ours is not None else None
    for m, (mu, sd) in paper.items():
        row = {
            "model": m,
            "paper": f"{mu:g} ± {sd:g}",
            "paper's source of this row": f"{method} paper" if m == method else "baseline's own paper/dataset",
        }
        if s is not None and metric is not None:
            row["ours (same zoo)"] = "—"
            if m in s.index:
                mu_o, sd_o = scale * s.loc[m, f"{metric}_mean"], scale * s.loc[m, f"{metric}_std"]
                row["ours (same zoo)"] = f"{mu_o:.3f} ± {sd_o:.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def node_embeddings(
    model: Any, data: Any, idx: Sequence[int] | Tensor, refine_steps: int = 0
) -> tuple[Tensor, Tensor, float]:
    """GTH-GMN node coordinates of networks ``idx`` at every snapshot: ``(z [B, T, V, d], node_layer [V], c)``.

    ``c`` is the curvature of the ball the coordinates live on (0 for the Euclidean ablation).
    ``refine_steps`` > 0 runs the paper's stage-2 Riemannian refinement of the coordinates.
    """
    if not hasattr(model, "embed_nodes"):
        raise ValueError(f"node embeddings need a GTH-GMN model; got {type(model).__name__}")
    from hgutils.weightspace.metanets.base import to_device

    idx = torch.as_tensor(idx, dtype=torch.long)
    dev = next(model.parameters()).device
    z = model.embed_nodes(to_device(data[idx], dev), refine_steps=refine_steps)
    c = 0.0 if model.euclidean else float(model.c)
    return z.detach().cpu(), data.node_layer, c


def class_separation(emb: Tensor | np.ndarray, labels: Tensor | np.ndarray) -> float:
    """Silhouette score of embeddings ``[n, D]`` grouped by ``labels`` (Euclidean; -1..1, higher =
    classes better separated). Needs at least 2 classes and fewer classes than points."""
    from sklearn.metrics import silhouette_score

    x = np.asarray(emb.detach().cpu() if isinstance(emb, Tensor) else emb, dtype=float)
    y = np.asarray(labels.cpu() if isinstance(labels, Tensor) else labels)
    k = len(np.unique(y))
    if x.ndim != 2 or len(y) != len(x) or not 2 <= k < len(x):
        raise ValueError(
            f"need emb [n, D] with n labels from 2..n-1 classes; got {x.shape}, {len(y)} labels, {k} classes"
        )
    return float(silhouette_score(x, y))
