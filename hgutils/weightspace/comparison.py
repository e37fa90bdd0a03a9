"""The shared comparison protocol of the weight-space notebooks (01-03): one split, every model, same budget.

1. build a zoo (:mod:`hgutils.weightspace.zoo`: INR images, sine INRs, or small classifiers);
2. split it **once** (:func:`make_splits`, class-stratified when there are labels); every model and
   every seed uses these same train / validation / test networks;
3. train every model variant (:data:`VARIANTS`: GTH-GMN, its ablations, the baselines, in
   final-checkpoint and trajectory versions) with the one shared loop
   (:func:`hgutils.weightspace.training.fit`), once per seed -- the seed changes the model's
   initialisation, the batch order and the augmentations, never the split;
4. collect a long results table (one row per model and seed, :func:`run_comparison`), summarise it
   as mean ± std over seeds (:func:`summarize`), compare models (:func:`compare`) and set it beside
   a paper's table (:func:`paper_table`).
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

from hgutils.repro import progress, seed_everything

log = logging.getLogger("hgutils")

__all__ = [
    "VARIANTS",
    "ComparisonResult",
    "Splits",
    "Variant",
    "best_model",
    "build_variant",
    "class_separation",
    "compare",
    "make_splits",
    "node_embeddings",
    "paper_table",
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
        _v("GTH-GMN", "GTH-GMN", "all", True, "full model: whole trajectory, hyperbolic attention, GRU kernels"),
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
            "Riemannian lr / 10 (variance analysis)",
            riemannian_lr=1e-4,
        ),
        _v("StatNN", "StatNN", "last", False, "7 statistics per tensor -> MLP"),
        _v("StatNN (traj)", "StatNN", "all", True, "statistics of every snapshot"),
        _v("FlatMLP", "FlatMLP", "last", False, "flattened weights -> MLP"),
        _v("FlatMLP (traj)", "FlatMLP", "all", True, "flattened trajectory -> MLP"),
        _v("FlatMLP+aug", "FlatMLP+aug", "last", False, "with permutation augmentation"),
        _v("NFN_NP", "NFN_NP", "last", False, "neural functional, NP layers"),
        _v("NFN_NP (traj)", "NFN_NP", "all", True, "snapshots as channels"),
        _v("NFN_HNP", "NFN_HNP", "last", False, "neural functional, HNP layers"),
        _v("NFN_HNP (traj)", "NFN_HNP", "all", True, "snapshots as channels"),
        _v("DWSNet", "DWSNet", "last", False, "equivariant weight-space layers"),
        _v("DWSNet (traj)", "DWSNet", "all", True, "snapshots as channels"),
        _v("GMN", "GMN", "last", False, "Euclidean edge-MPNN on the parameter graph"),
        _v("GMN (traj)", "GMN", "all", True, "snapshots as edge channels"),
    ]
}


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
        One row per (model, seed): ``model, seed, temporal`` and the test metrics
        (``test_accuracy`` / ``test_mse`` / ``test_kendall_tau``), validation metrics (``val_*``),
        ``best_epoch``, ``epochs_run``, ``steps``, ``seconds_per_epoch`` (wall), ``cpu_seconds`` (process
        CPU time of the whole fit: the cost on a quiet machine), ``prepare_seconds``.
    splits
        The one split every model used.
    models
        The trained model of the first seed, per variant (for figures).
    data
        Prepared input containers, keyed by ``(model class, snapshots)`` (shared between variants).
    outputs
        Test-set predictions of the first seed per variant: ``(true, predicted)`` arrays
        (predicted class / value / accuracy; for InfoNCE encoders the test embeddings).
    """

    table: pd.DataFrame
    splits: Splits
    models: dict[str, Any] = field(default_factory=dict)
    data: dict[Any, Any] = field(default_factory=dict)
    outputs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    data_key: dict[str, Any] = field(default_factory=dict)

    def data_for(self, name: str) -> Any:
        """The prepared container variant ``name`` was trained on."""
        return self.data[self.data_key[name]]


def _data_key(model: Any) -> tuple[str, str]:
    return type(model).__name__, repr(model.snapshots)


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
    rescale: bool = False,
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
        A :class:`hgutils.weightspace.training.TrainConfig` (its ``seed`` is replaced per run).
    rescale
        Divide every parameter tensor by its RMS over the *training* networks
        (:meth:`~hgutils.weightspace.zoo.Zoo.rescaled`) before any model sees the zoo -- the same
        inputs for every model. DWSNets' pipeline also normalises its inputs with training-set weight
        statistics (there: mean and std per entry); one scale per tensor keeps every permutation
        symmetry exact.
    """
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
    n = len(zoo)
    allidx = torch.cat([splits.train, splits.val, splits.test])
    if int(allidx.max()) >= n or int(allidx.min()) < 0 or len(allidx.unique()) != len(allidx):
        raise ValueError(f"splits must be disjoint indices into the zoo's {n} networks")
    if target is not None and len(target) != n:
        raise ValueError(f"target must have one entry per network ({n}); got {len(target)}")
    train_cfg = train_cfg or TrainConfig()
    if rescale:
        zoo = zoo.rescaled(zoo.rms_scales(splits.train))
    res = ComparisonResult(pd.DataFrame(), splits)
    rows = []
    prep_time: dict[Any, float] = {}
    for name in progress(list(variants), desc=desc or "models"):
        for si, seed in enumerate(seeds):
            seed_everything(seed)
            model = build_variant(name, zoo, task, out_dim, gth_overrides)
            key = _data_key(model)
            if key not in res.data:
                t0 = time.perf_counter()
                res.data[key] = model.prepare(zoo)
                prep_time[key] = time.perf_counter() - t0
            res.data_key[name] = key
            data = res.data[key]
            cfg = replace(train_cfg, seed=seed)
            c0 = time.process_time()
            fr = fit(model, data, target, splits.train, splits.val, splits.test, cfg, desc=f"{name} s{seed}")
            row: dict[str, Any] = {"model": name, "seed": seed, "temporal": VARIANTS[name].temporal}
            for part in ("test", "val"):
                for k, v in fr.metrics.get(part, {}).items():
                    row[f"{part}_{k}"] = v
            row.update(
                best_epoch=fr.best_epoch,
                epochs_run=len(fr.history),
                steps=fr.steps,
                seconds_per_epoch=fr.seconds_per_epoch,
                cpu_seconds=time.process_time() - c0,
                prepare_seconds=prep_time[key],
            )
            rows.append(row)
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


def compare(summary: pd.DataFrame, a: str, b: str, metric: str, higher_is_better: bool = True) -> dict[str, float]:
    """Mean difference of ``metric`` between models ``a`` and ``b`` (``a - b``, sign-flipped when lower
    is better, so > 0 always means "``a`` is better"); also both means and stds."""
    s = summary.set_index("model")
    for m in (a, b):
        if m not in s.index:
            raise ValueError(f"model {m!r} not in the summary; have {list(s.index)}")
    ma, mb = float(s.loc[a, f"{metric}_mean"]), float(s.loc[b, f"{metric}_mean"])
    diff = ma - mb if higher_is_better else mb - ma
    return {
        "a_mean": ma,
        "b_mean": mb,
        "a_std": float(s.loc[a, f"{metric}_std"]),
        "b_std": float(s.loc[b, f"{metric}_std"]),
        "advantage": diff,
    }


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
