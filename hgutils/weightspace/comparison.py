"""The shared comparison protocol of the weight-space notebooks (01-03): one split, every model, same budget.

1. build a zoo (:mod:`hgutils.weightspace.zoo`: INR images, sine INRs, or small classifiers);
2. split it **once** (:func:`make_splits`, class-stratified when there are labels); every model and
   every seed uses these same train / validation / test networks;
3. train every model variant (:data:`VARIANTS`: GTH-GMN, its ablations, the baselines, in
   final-checkpoint and trajectory versions) with the one shared loop
   (:func:`hgutils.weightspace.training.fit`), once per seed -- the seed changes the model's
   initialisation, the batch order and the augmentations, never the split;
4. collect a long results table (one row per model and seed, :func:`run_comparison`), summarise it
   as mean ± std over seeds (:func:`summarize`), compare models over seeds (:func:`difference`, the
   verdict rule of :mod:`hgutils.verdicts`) and set it beside a paper's table (:func:`paper_table`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.presets import Preset
from hgutils.repro import progress, seed_everything
from hgutils.verdicts import Difference, compare_seeds

log = logging.getLogger("hgutils")

__all__ = [
    "INPUTS",
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
    "summarize",
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
            "stage-2 Riemannian step / 10 (the paper's remedy)",
            refine_lr=1e-3,
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
    GTH-GMN variant (e.g. ``dim``); the variant's own overrides win.
    """
    from hgutils.weightspace.metanets import build_metanet

    if name not in VARIANTS:
        raise ValueError(f"unknown model variant {name!r}; choose from {sorted(VARIANTS)}")
    v = VARIANTS[name]
    kw = dict(v.kwargs)
    if v.base == "GTH-GMN":
        kw = {**(gth_overrides or {}), **kw}
    return build_metanet(v.base, zoo, task, out_dim, snapshots=v.snapshots, **kw)


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
        """Learnability check of model ``name`` over all its seeds: ``{"trained", "reason"}`` -- trained
        only if every seed passed (the reason of the first seed that did not, else of seed 0)."""
        rows = self.table[self.table["model"] == name]
        if rows.empty:
            raise ValueError(f"model {name!r} not in the results; have {sorted(set(self.table['model']))}")
        bad = rows[~rows["trained"].astype(bool)]
        row = bad.iloc[0] if len(bad) else rows.iloc[0]
        return {"trained": bool(len(bad) == 0), "reason": f"seed {row['seed']}: {row['gate']}"}

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
    steps: int = 16  # optimiser steps per model and seed (the budget; evaluation once per epoch)
    patience: int = 1000  # early stopping: evaluations without a better validation score
    batch_size: int = 8  # networks per step
    lr: float = 1e-3  # Adam lr when no grid is searched
    lr_grid: tuple[float, ...] = (1e-3, 3e-3)  # per-model learning rates tried on the first seed (validation)
    lr_search_steps: int = 6  # optimiser steps of each lr-search run
    gth_dim: int = 16  # GTH-GMN node-state dim
    pretrain_steps: int | None = None  # GTH-GMN stage-1 (reconstruction) steps (None: the step budget)
    refine_steps: int = 5  # GTH-GMN stage-2 Riemannian refinement steps per snapshot
    refine_lr: float = 1e-2  # GTH-GMN stage-2 Riemannian step size
    compile: bool = False  # torch.compile GTH-GMN's attention layers (pays off only for long runs)
    min_loss_drop: float = 0.05  # learnability gate: training loss must fall by this fraction
    min_accuracy_gain: float = 0.10  # learnability gate: training accuracy must beat chance by this much
    val_fraction: float = 0.15  # share of networks for validation
    test_fraction: float = 0.25  # share of networks for test
    split_seed: int = 0  # seed of the one shared split

    def gate(self) -> Any:
        """The :class:`hgutils.train.LearnabilityGate` of these settings."""
        from hgutils.train import LearnabilityGate

        return LearnabilityGate(self.min_loss_drop, self.min_accuracy_gain)

    def comparison_kwargs(self, device: str = "cpu") -> dict[str, Any]:
        """Keyword arguments of :func:`run_comparison` (training settings, inputs, lr search, gate)."""
        from hgutils.weightspace.training import TrainConfig

        cfg = TrainConfig(
            steps=self.steps, patience=self.patience, batch_size=self.batch_size, lr=self.lr, device=device
        )
        gth = {
            "dim": self.gth_dim,
            "pretrain_steps": self.pretrain_steps,
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
        }


def _data_key(model: Any) -> tuple[str, str]:

    return type(model).__name__, repr(model.snapshots)


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
        A :class:`hgutils.weightspace.training.TrainConfig` (its ``seed`` and ``lr`` are replaced per run).
    inputs, drop_constant
        How every model's inputs are prepared (:func:`prepare_inputs`): the same for every model.
    lr_grid, lr_search_steps
        Per model family (a base model of :data:`VARIANTS`: GTH-GMN and its ablations are one
        family, every baseline its own), each learning rate of ``lr_grid`` is tried with the family's
        first listed variant on the first seed for ``lr_search_steps`` optimiser steps (default: the
        full budget); the one with the best validation score is used for every variant of the family
        and every seed -- the same tuning effort for every model. Results are cached
        (:func:`hgutils.repro.cached`) by zoo content, split, model and settings.

    gate
        The :class:`hgutils.train.LearnabilityGate` thresholds (default ones if ``None``).
    """
    from hgutils.repro import cached
    from hgutils.weightspace.metanets.heads import predict
    from hgutils.weightspace.training import TrainConfig, embeddings, fit, predict_outputs

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
    train_cfg = train_cfg or TrainConfig()
    zoo, record = prepare_inputs(zoo, splits, inputs, drop_constant)
    res = ComparisonResult(pd.DataFrame(), splits, inputs=record)
    rows = []
    prep_time: dict[Any, float] = {}
    fp = _fingerprint(zoo) if lr_grid else ""
    pretrained: dict[str, Any] = {}  # stage 1 shared by GTH-GMN variants that differ only in stage 2

    def data_of(model: Any, name: str) -> Any:
        key = _data_key(model)
        if key not in res.data:
            t0 = time.perf_counter()
            res.data[key] = model.prepare(zoo)
            prep_time[key] = time.perf_counter() - t0
        res.data_key[name] = key
        return res.data[key]

    def search(name: str) -> dict[float, float]:
        def run() -> dict[float, float]:
            scores = {}
            for lr in lr_grid:
                seed_everything(seeds[0])
                model = build_variant(name, zoo, task, out_dim, gth_overrides)
                steps = lr_search_steps or train_cfg.steps
                cfg = replace(train_cfg, seed=seeds[0], lr=float(lr), steps=steps, checkpoint_path=None)
                fr = fit(
                    model,
                    data_of(model, name),
                    target,
                    splits.train,
                    splits.val,
                    None,
                    cfg,
                    desc=f"{name} lr={lr:g}",
                    gate=gate,
                )
                scores[float(lr)] = float(fr.best_score) if np.isfinite(fr.best_score) else float("-inf")
            return scores

        key = {
            "zoo": fp,
            "task": task,
            "variant": name,
            "overrides": gth_overrides,
            "split": splits.train,
            "val": splits.val,
            "cfg": replace(train_cfg, seed=0),
            "grid": list(lr_grid),
            "steps": lr_search_steps,
            "seed": seeds[0],
            "version": 1,
        }
        return cached("lr_search", key, run)

    searched: dict[str, str] = {}  # base model -> the variant its learning rate was searched on
    for name in progress(list(variants), desc=desc or "models"):
        lr = train_cfg.lr
        if lr_grid:
            base = VARIANTS[name].base
            if base not in searched:  # one search per model family: its first variant in the list
                searched[base] = name
                res.lr_search[name] = search(name)
            scores = res.lr_search[searched[base]]
            lr = max(scores, key=scores.get)

        for si, seed in enumerate(seeds):
            seed_everything(seed)
            model = build_variant(name, zoo, task, out_dim, gth_overrides)
            data = data_of(model, name)
            cfg = replace(train_cfg, seed=seed, lr=lr)
            c0 = time.process_time()
            fr = fit(
                model,
                data,
                target,
                splits.train,
                splits.val,
                splits.test,
                cfg,
                desc=f"{name} s{seed}",
                gate=gate,
                pretrain_cache=pretrained,
            )
            gs = fr.gate_summary()
            row: dict[str, Any] = {
                "model": name,
                "seed": seed,
                "temporal": VARIANTS[name].temporal,
                "lr": lr,
                "trained": gs["trained"],
                "gate": gs["reason"],
            }
            for part in ("test", "val", "train"):
                for k, v in fr.metrics.get(part, {}).items():
                    row[f"{part}_{k}"] = v
            row.update({f"recon_{k}": v for k, v in fr.recon.items()})
            row.update(
                best_epoch=fr.best_epoch,
                epochs_run=len(fr.history),
                steps=fr.steps,
                seconds_per_epoch=fr.seconds_per_epoch,
                cpu_seconds=time.process_time() - c0,
                prepare_seconds=prep_time[res.data_key[name]],
            )
            rows.append(row)
            res.curves.setdefault(name, {})[seed] = fr.history
            if fr.pretrain_log is not None:
                res.curves.setdefault(f"{name} (stage 1)", {})[seed] = fr.pretrain_log.history
            if si == 0:
                res.models[name] = model
                if task == "infonce":
                    emb = embeddings(model, data, splits.test)
                    y = target[splits.test] if target is not None else torch.zeros(len(splits.test))
                    res.outputs[name] = (y.numpy(), emb.numpy())
                else:
                    out = predict_outputs(model, data, splits.test)
                    res.outputs[name] = (target[splits.test].numpy(), predict(task, out).numpy())
            log.info("%s seed %d: %s", name, seed, {k: v for k, v in row.items() if k.startswith("test_")})
    res.table = pd.DataFrame(rows)
    return res


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
            "steps": int(t["steps"].max()),
            "trained": g["trained"],
            "learnability check": g["reason"],
        }
        if name in run.lr_search:
            row["lr search (val score)"] = ", ".join(f"{lr:g}: {s:.3f}" for lr, s in run.lr_search[name].items())
        rows.append(row)
    return pd.DataFrame(rows)


def recon_table(run: ComparisonResult) -> pd.DataFrame:
    """Reconstruction quality of every two-stage model (validation networks, mean ± std over seeds)
    beside an uninformative decoder: link BCE (2 ln 2 = 1.386), link AUC (0.5), sign accuracy
    (the majority sign's share), magnitude R² (0)."""
    cols = ["recon_link_bce", "recon_link_auc", "recon_sign_acc", "recon_mag_r2"]
    t = run.table.dropna(subset=[c for c in cols if c in run.table]) if cols[0] in run.table else run.table.iloc[:0]
    rows = []
    for name in dict.fromkeys(t["model"]):
        g = t[t["model"] == name]
        row = {"model": name}
        for c in cols:
            row[c.removeprefix("recon_")] = f"{g[c].mean():.3f} ± {g[c].std(ddof=0):.3f}"
        row["sign majority"] = f"{g['recon_sign_majority'].mean():.3f}"
        rows.append(row)
    if rows:
        rows.append(
            {
                "model": "uninformative decoder",
                "link_bce": f"{2 * np.log(2):.3f}",
                "link_auc": "0.500",
                "sign_acc": "= sign majority",
                "mag_r2": "0.000",
                "sign majority": "—",
            }
        )
    return pd.DataFrame(rows)


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
