r"""In-zoo baselines for predictors that read weights: what gradient-boosted trees reach on the same zoo
and split.

- :func:`tree_reference` / :func:`in_zoo_references` -- gradient-boosted trees (scikit-learn's
  ``HistGradientBoostingRegressor`` / ``HistGradientBoostingClassifier``) on the per-tensor
  statistics of :func:`hgutils.weightspace.metanets.statnn.tensor_stats` (mean, variance and the
  0/25/50/75/100 % quantiles of every weight and bias tensor; Unterthiner et al. 2020, "Predicting
  Neural Network Accuracy from Weights", arXiv:2002.11448, whose released notebook trains boosted
  trees, LightGBM, on these per-layer statistics; here the mean and variance where they use mean and
  std), of the final checkpoint and of every snapshot, and -- for a
  zoo with sampled hyperparameters -- on the hyperparameters alone. The tasks are those of
  :func:`hgutils.experiments.weightspace_protocol.run_comparison`: ``"classification"`` (accuracy),
  ``"regression"`` (MSE over all outputs; one regressor per output) and ``"accuracy"`` (Kendall
  :math:`\tau` of predicted against true test accuracy, and MSE).

**Protocol of the trees.** The split is the one every model uses
(:func:`hgutils.weightspace.inputs.make_splits`): trees fit on the training networks; early
stopping watches the loss on *our* validation networks (``fit(X_val=, y_val=)``, not scikit-learn's
internal ``validation_fraction``): it stops after ``patience`` iterations without a better
validation loss, up to ``max_iter`` iterations (a fit that reaches the cap is marked ``capped``). The
learning rate and the number of leaves are chosen from a small grid on the first seed by the same
validation score the neural models are selected by (accuracy; :math:`-`MSE; Kendall :math:`\tau`),
then every seed is fitted with the chosen pair. Seeds vary the trees' random state, which draws the
features considered at each split (``max_features``, as the colsample of the authors' LightGBM runs).

What the label noise allows (the label-noise ceiling, Kendall's :math:`\tau` with its jackknife) is
:mod:`hgutils.weightspace.kendall_ceiling`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.weightspace.inputs import prepare_inputs
from hgutils.weightspace.kendall_ceiling import kendall_jackknife
from hgutils.weightspace.metanets.statnn import tensor_stats

if TYPE_CHECKING:
    from hgutils.weightspace.zoo.containers import Zoo

__all__ = [
    "HPARAM_CATEGORICAL",
    "HPARAM_CONTINUOUS",
    "REFERENCE_TASKS",
    "TREES_HPARAMS",
    "TREES_STATS",
    "TREES_STATS_TRAJ",
    "ReferenceRun",
    "TreeSettings",
    "hyperparameter_features",
    "in_zoo_references",
    "stat_features",
    "tree_reference",
]

REFERENCE_TASKS: tuple[str, ...] = ("classification", "regression", "accuracy")
#: Names of the references in the results tables.
TREES_STATS = "Trees on statistics"
TREES_STATS_TRAJ = "Trees on statistics (traj)"
TREES_HPARAMS = "Trees on hyperparameters"
#: The classifier zoo's sampled hyperparameters (``Zoo.meta`` keys): continuous, and coded as indices.
HPARAM_CONTINUOUS: tuple[str, ...] = ("lr", "l2", "dropout", "init_std", "train_fraction")
HPARAM_CATEGORICAL: tuple[str, ...] = ("activation", "optimizer", "w_init")


# --------------------------------------------------------------------------------------------
# features
# --------------------------------------------------------------------------------------------
def _param_keys(zoo: Zoo) -> list[str]:
    L = zoo.spec.n_layers
    keys = [f"{p}{l}" for l in range(L) for p in "Wb"]
    missing = [k for k in keys if k not in zoo.params]
    if missing:
        raise ValueError(f"zoo params lack {missing}; have {sorted(zoo.params)}")
    return keys


def stat_features(zoo: Zoo, snapshots: str | Sequence[int] = "final", chunk: int = 512) -> np.ndarray:
    """Per-tensor statistics of every network: ``[N, n_snapshots * n_tensors * 7]`` (float64).

    For each selected snapshot and each tensor ``W0, b0, W1, b1, ...``, the 7 statistics of
    :func:`~hgutils.weightspace.metanets.statnn.tensor_stats` (StatNN's features). ``snapshots``:
    ``"final"`` (the last snapshot), ``"all"`` (the trajectory) or snapshot indices.
    """

    if isinstance(snapshots, str):
        if snapshots not in ("final", "all"):
            raise ValueError(f"snapshots must be 'final', 'all' or indices; got {snapshots!r}")
        sel = [zoo.T - 1] if snapshots == "final" else list(range(zoo.T))
    else:
        sel = [int(t) for t in snapshots]
        if not sel or any(not -zoo.T <= t < zoo.T for t in sel):
            raise ValueError(f"snapshot indices must lie in [-{zoo.T}, {zoo.T}); got {sel}")
    keys = _param_keys(zoo)
    n = len(zoo)
    out = []
    for s in range(0, n, chunk):
        per = [tensor_stats(zoo.params[k][s : s + chunk][:, sel].double()) for k in keys]  # [B, T, 7] each
        out.append(torch.stack(per, 2).reshape(min(chunk, n - s), -1))
    return torch.cat(out).numpy()


def hyperparameter_features(zoo: Zoo) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The sampled hyperparameters of a classifier zoo: ``(X [N, 8], names, categorical mask)``.

    Columns :data:`HPARAM_CONTINUOUS` (as sampled; trees need no scaling) then
    :data:`HPARAM_CATEGORICAL` (the integer codes of ``Zoo.meta``, declared categorical).
    """
    keys = (*HPARAM_CONTINUOUS, *HPARAM_CATEGORICAL)
    missing = [k for k in keys if k not in zoo.meta]
    if missing:
        raise ValueError(
            f"hyperparameter features need a zoo with sampled hyperparameters (the classifier zoo); "
            f"meta lacks {missing}, has {sorted(zoo.meta)}"
        )
    X = np.stack([zoo.meta[k].double().numpy() for k in keys], 1)
    return X, list(keys), np.array([k in HPARAM_CATEGORICAL for k in keys])


# --------------------------------------------------------------------------------------------
# trees
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TreeSettings:
    """Gradient-boosted trees of the references (module docstring for the protocol)."""

    learning_rates: tuple[float, ...] = (0.03, 0.1)  # grid, chosen on the first seed (validation)
    max_leaf_nodes: tuple[int, ...] = (7, 31)  # grid, chosen with the learning rate
    min_samples_leaf: int = 10
    l2_regularization: float = 0.0
    max_features: float = 0.5  # features drawn per split: the random state the seeds vary
    max_iter: int = 5000  # cap on boosting iterations (a fit that reaches it is marked capped)
    patience: int = 50  # iterations without a better validation loss before stopping
    max_bins: int = 255

    def __post_init__(self) -> None:
        if not self.learning_rates or any(not lr > 0 for lr in self.learning_rates):
            raise ValueError(f"learning_rates must be positive; got {self.learning_rates}")
        if not self.max_leaf_nodes or any(k < 2 for k in self.max_leaf_nodes):
            raise ValueError(f"max_leaf_nodes must be >= 2; got {self.max_leaf_nodes}")
        if not 0 < self.max_features <= 1:
            raise ValueError(f"max_features must be in (0, 1]; got {self.max_features}")
        if self.max_iter < 1 or self.patience < 1 or self.min_samples_leaf < 1:
            raise ValueError("max_iter, patience and min_samples_leaf must be >= 1")


@dataclasses.dataclass
class ReferenceRun:
    """Output of :func:`tree_reference` / :func:`in_zoo_references`.

    Attributes
    ----------
    table
        One row per (reference, seed) with :func:`~hgutils.experiments.weightspace_protocol.run_comparison`'s
        columns where they apply: ``model, seed, temporal``, ``test_* / val_* / train_*`` metrics,
        ``lr`` (the trees' learning rate), ``max_leaf_nodes``, ``steps`` (boosting iterations, the
        most over outputs), ``capped``, ``trained`` and ``gate`` (training loss below the constant
        predictor's by 5 %, or training accuracy 10 points above chance), ``n_features``.
    outputs
        ``(true, predicted)`` test arrays of the first seed per reference.
    search
        ``search[reference] = {(learning rate, leaves): validation score}`` on the first seed.
    """

    table: pd.DataFrame
    outputs: dict[str, tuple[np.ndarray, np.ndarray]] = dataclasses.field(default_factory=dict)
    search: dict[str, dict[tuple[float, int], float]] = dataclasses.field(default_factory=dict)

    def per_seed(self, name: str, metric: str) -> list[float]:
        """``metric`` of reference ``name`` per seed (for :func:`hgutils.verdicts.compare_seeds`)."""
        rows = self.table[self.table["model"] == name]
        if rows.empty:
            raise ValueError(f"reference {name!r} not in this run; have {sorted(set(self.table['model']))}")
        return [float(v) for v in rows.sort_values("seed")[metric]]


def _metrics(task: str, pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    if task == "classification":
        return {"accuracy": float(np.mean(pred == y))}
    out = {"mse": float(np.mean((pred - y) ** 2))}
    if task == "accuracy":
        out["kendall_tau"] = kendall_jackknife(pred, y, se=False)[0]
    return out


def _score(task: str, m: dict[str, float]) -> float:
    """Validation score, higher is better (the neural models' selection score)."""
    if task == "classification":
        return m["accuracy"]
    if task == "accuracy" and math.isfinite(m["kendall_tau"]):
        return m["kendall_tau"]
    return -m["mse"]


def _fit_one(
    task: str,
    X: np.ndarray,
    y: np.ndarray,
    splits: Any,
    lr: float,
    leaves: int,
    seed: int,
    st: TreeSettings,
    categorical: np.ndarray | None,
) -> tuple[dict[str, np.ndarray], int, bool]:
    """Fit on the training networks with early stopping on the validation networks; predictions on
    every part, the boosting iterations used (most over outputs) and whether the cap was reached."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    tr, va, te = (np.asarray(p) for p in (splits.train, splits.val, splits.test))
    kw = dict(
        learning_rate=lr,
        max_leaf_nodes=leaves,
        min_samples_leaf=st.min_samples_leaf,
        l2_regularization=st.l2_regularization,
        max_features=st.max_features,
        max_iter=st.max_iter,
        max_bins=st.max_bins,
        early_stopping=True,
        n_iter_no_change=st.patience,
        scoring="loss",
        random_state=seed,
        categorical_features=categorical if categorical is not None and categorical.any() else None,
    )
    parts = {"train": tr, "val": va, "test": te}
    if task == "classification":
        est = HistGradientBoostingClassifier(**kw).fit(X[tr], y[tr], X_val=X[va], y_val=y[va])
        return {k: est.predict(X[i]) for k, i in parts.items()}, int(est.n_iter_), est.n_iter_ >= st.max_iter
    cols = y.reshape(len(y), -1)
    preds = {k: np.empty((len(i), cols.shape[1])) for k, i in parts.items()}
    n_iter = 0
    for j in range(cols.shape[1]):
        est = HistGradientBoostingRegressor(**kw).fit(X[tr], cols[tr, j], X_val=X[va], y_val=cols[va, j])
        for k, i in parts.items():
            preds[k][:, j] = est.predict(X[i])
        n_iter = max(n_iter, int(est.n_iter_))
    shape = y.shape[1:]
    return {k: v.reshape(len(v), *shape) for k, v in preds.items()}, n_iter, n_iter >= st.max_iter


def _gate(task: str, pred_tr: np.ndarray, y_tr: np.ndarray, n_classes: int) -> tuple[bool, str]:
    """The learnability check of the neural models, for trees: training loss 5 % below the constant
    predictor's (regression, accuracy) or training accuracy 10 points above chance (classification)."""
    if task == "classification":
        acc, chance = float(np.mean(pred_tr == y_tr)), 1.0 / n_classes
        ok = acc >= chance + 0.10
        return ok, f"train accuracy {acc:.3f} vs chance {chance:.3f}"
    mse = float(np.mean((pred_tr - y_tr) ** 2))
    const = float(np.mean((y_tr - y_tr.mean(0)) ** 2))
    ok = const > 0 and mse <= 0.95 * const
    return ok, f"train MSE {mse:.4g} vs constant {const:.4g}"


def _check_inputs(features: np.ndarray, target: np.ndarray, task: str, splits: Any, seeds: Sequence[int]) -> None:
    if task not in REFERENCE_TASKS:
        raise ValueError(f"task must be one of {REFERENCE_TASKS}; got {task!r}")
    if features.ndim != 2:
        raise ValueError(f"features must be [N, F]; got shape {features.shape}")
    if len(target) != len(features):
        raise ValueError(f"target must have one entry per network ({len(features)}); got {len(target)}")
    if task != "regression" and target.ndim != 1:
        raise ValueError(f"task {task!r} needs a [N] target; got shape {target.shape}")
    if not np.all(np.isfinite(features)):
        raise ValueError("features must be finite (a network with inf/nan parameters?)")
    for part in ("train", "val", "test"):
        idx = np.asarray(getattr(splits, part))
        if idx.size == 0:
            raise ValueError(f"the {part} split is empty: the trees need training, validation and test networks")
        if idx.min() < 0 or idx.max() >= len(features):
            raise ValueError(f"{part} indices must lie in [0, {len(features)}); got {idx.min()}..{idx.max()}")
    allidx = np.concatenate([np.asarray(splits.train), np.asarray(splits.val), np.asarray(splits.test)])
    if len(np.unique(allidx)) != len(allidx):
        raise ValueError("the train / val / test splits must be disjoint")
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list of distinct ints; got {seeds}")


def tree_reference(
    name: str,
    features: np.ndarray | Tensor,
    target: np.ndarray | Tensor,
    task: str,
    splits: Any,
    seeds: Sequence[int],
    settings: TreeSettings | None = None,
    categorical: np.ndarray | None = None,
    temporal: bool = False,
) -> ReferenceRun:
    """Gradient-boosted trees from ``features [N, F]`` to ``target`` on ``splits``, once per seed.

    ``task``: ``"classification"`` (``target [N]`` int labels), ``"regression"`` (``[N]`` or
    ``[N, k]``, one regressor per output), ``"accuracy"`` (``[N]`` accuracies; Kendall :math:`\\tau`).
    ``categorical`` marks categorical feature columns. The protocol (early stopping on the
    validation split, the grid, the seeds) is the module docstring's.

    Raises
    ------
    ValueError
        Unknown task, an empty or overlapping split, a target that does not match the features.
    """
    st = settings or TreeSettings()
    X = np.asarray(features.cpu() if isinstance(features, Tensor) else features, dtype=np.float64)
    y = np.asarray(target.cpu() if isinstance(target, Tensor) else target)
    _check_inputs(X, y, task, splits, seeds)
    y = y.astype(np.int64) if task == "classification" else y.astype(np.float64)
    if categorical is not None:
        categorical = np.asarray(categorical, dtype=bool)
        if categorical.shape != (X.shape[1],):
            raise ValueError(f"categorical must be a bool mask over the {X.shape[1]} features; got {categorical.shape}")
    seeds = [int(s) for s in seeds]
    n_classes = int(y.max()) + 1 if task == "classification" else 0
    idx = {p: np.asarray(getattr(splits, p)) for p in ("train", "val", "test")}

    def evaluate(preds: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
        return {p: _metrics(task, preds[p], y[idx[p]]) for p in preds}

    search: dict[tuple[float, int], float] = {}
    fits: dict[tuple[float, int], tuple[dict[str, np.ndarray], int, bool]] = {}
    for lr in st.learning_rates:
        for leaves in st.max_leaf_nodes:
            fits[(lr, leaves)] = _fit_one(task, X, y, splits, lr, leaves, seeds[0], st, categorical)
            search[(float(lr), int(leaves))] = _score(task, evaluate(fits[(lr, leaves)][0])["val"])
    best = max(search, key=search.get)
    rows, outputs = [], {}
    for i, seed in enumerate(seeds):
        preds, n_iter, capped = fits[best] if i == 0 else _fit_one(task, X, y, splits, *best, seed, st, categorical)
        m = evaluate(preds)
        ok, why = _gate(task, preds["train"], y[idx["train"]], n_classes)
        row: dict[str, Any] = {"model": name, "seed": seed, "temporal": temporal, "lr": best[0]}
        row["max_leaf_nodes"] = best[1]
        row.update(trained=ok, gate=why, steps=n_iter, capped=bool(capped), n_features=X.shape[1])
        for part in ("test", "val", "train"):
            row.update({f"{part}_{k}": v for k, v in m[part].items()})
        rows.append(row)
        if i == 0:
            outputs[name] = (y[idx["test"]], preds["test"])
    return ReferenceRun(pd.DataFrame(rows), outputs, {name: search})


def in_zoo_references(
    zoo: Zoo,
    task: str,
    target: np.ndarray | Tensor,
    splits: Any,
    seeds: Sequence[int],
    settings: TreeSettings | None = None,
    inputs: str = "none",
    hyperparameters: bool | None = None,
) -> ReferenceRun:
    """The trees references of one zoo and split: :data:`TREES_STATS` (final checkpoint),
    :data:`TREES_STATS_TRAJ` (every snapshot) and, when the zoo has sampled hyperparameters
    (``hyperparameters=None``: detected from ``Zoo.meta``), :data:`TREES_HPARAMS`.

    ``inputs``: how the weights are prepared before the statistics are taken
    (:func:`hgutils.weightspace.inputs.prepare_inputs`; constant snapshots are dropped from the
    trajectory). The default ``"none"`` takes them of the raw weights, as Unterthiner et al. and
    NFN's StatNet do; ``"standardize"`` gives the statistics of the inputs the neural models read.
    """

    if hyperparameters is None:
        hyperparameters = all(k in zoo.meta for k in (*HPARAM_CONTINUOUS, *HPARAM_CATEGORICAL))
    prepared, _ = prepare_inputs(zoo, splits, inputs)
    runs = [
        tree_reference(TREES_STATS, stat_features(prepared, "final"), target, task, splits, seeds, settings),
        tree_reference(
            TREES_STATS_TRAJ, stat_features(prepared, "all"), target, task, splits, seeds, settings, temporal=True
        ),
    ]
    if hyperparameters:
        X, _, cat = hyperparameter_features(zoo)
        runs.append(tree_reference(TREES_HPARAMS, X, target, task, splits, seeds, settings, categorical=cat))
    out = ReferenceRun(pd.concat([r.table for r in runs], ignore_index=True))
    for r in runs:
        out.outputs.update(r.outputs)
        out.search.update(r.search)
    return out
