r"""In-zoo reference points for predictors that read weights: what simple models reach on the same zoo
and split, and what the label noise allows.

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
- :func:`label_noise_ceiling` -- how well any predictor of test accuracy can rank networks when the
  label is measured on a finite test set.
- :func:`kendall_jackknife` -- Kendall's :math:`\tau_b` with its leave-one-network-out standard error.
- :func:`versus_reference` -- a :class:`hgutils.verdicts.Difference` of per-seed values against a
  reference that carries its own standard error (for ``Claims.add(test=...)``).

**Protocol of the trees.** The split is the one every model uses
(:func:`hgutils.weightspace.inputs.make_splits`): trees fit on the training networks; early
stopping watches the loss on *our* validation networks (``fit(X_val=, y_val=)``, not scikit-learn's
internal ``validation_fraction``): it stops after ``patience`` iterations without a better
validation loss, up to ``max_iter`` iterations (a fit that reaches the cap is marked ``capped``). The
learning rate and the number of leaves are chosen from a small grid on the first seed by the same
validation score the neural models are selected by (accuracy; :math:`-`MSE; Kendall :math:`\tau`),
then every seed is fitted with the chosen pair. Seeds vary the trees' random state, which draws the
features considered at each split (``max_features``, as the colsample of the authors' LightGBM runs).

**Label-noise ceiling.** A network's label is its accuracy on :math:`m` test images,
:math:`y_i = p_i + e_i` with :math:`p_i` its accuracy on the image distribution. Two disjoint halves
give :math:`y^a_i, y^b_i` with independent noise of twice the variance. Their Kendall
:math:`\tau_{ab}` is measured without any model. Under a bivariate-normal approximation
(:math:`\tau = \tfrac{2}{\pi}\arcsin\rho`), the halves' correlation is
:math:`\rho_{ab} = \sin(\pi\tau_{ab}/2)`, the full set's reliability is the Spearman--Brown
:math:`R = 2\rho_{ab}/(1+\rho_{ab})`, and a predictor that knew every :math:`p_i` exactly would reach
:math:`\tau^\ast = \tfrac{2}{\pi}\arcsin\sqrt{R}` against the full-set labels: the ceiling.
:math:`\tau_{ab} \le \tau^\ast`; without noise both are 1.
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

from hgutils.verdicts import N_SE, Difference
from hgutils.weightspace.inputs import prepare_inputs
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
    "NoiseCeiling",
    "ReferenceRun",
    "TreeSettings",
    "hyperparameter_features",
    "in_zoo_references",
    "kendall_jackknife",
    "label_noise_ceiling",
    "stat_features",
    "tree_reference",
    "versus_reference",
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


# --------------------------------------------------------------------------------------------
# Kendall tau with its jackknife, the label-noise ceiling
# --------------------------------------------------------------------------------------------
def _as_1d(x: np.ndarray | Tensor) -> np.ndarray:
    return np.asarray(x.cpu() if isinstance(x, Tensor) else x, dtype=np.float64).ravel()


def _tau_b(S: np.ndarray | float, nx: np.ndarray | float, ny: np.ndarray | float, m: int) -> np.ndarray:
    n0 = m * (m - 1) / 2
    den = np.asarray((n0 - nx) * (n0 - ny), dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, S / np.sqrt(np.where(den > 0, den, 1.0)), np.nan)


def _tau_and_leave_one_out(a: np.ndarray, b: np.ndarray, block: int = 1024) -> tuple[float, np.ndarray]:
    """Kendall's tau-b of ``a, b`` and the tau-b of every leave-one-out subset (one pass over the pairs)."""
    n = a.size
    s_row, tx_row, ty_row = np.empty(n), np.empty(n), np.empty(n)
    for s in range(0, n, block):
        sa = np.sign(a[s : s + block, None] - a[None, :])
        sb = np.sign(b[s : s + block, None] - b[None, :])
        s_row[s : s + block] = (sa * sb).sum(1)
        tx_row[s : s + block] = (sa == 0).sum(1) - 1  # ties with the others (not itself)
        ty_row[s : s + block] = (sb == 0).sum(1) - 1
    S, NX, NY = s_row.sum() / 2, tx_row.sum() / 2, ty_row.sum() / 2
    return float(_tau_b(S, NX, NY, n)), _tau_b(S - s_row, NX - tx_row, NY - ty_row, n - 1)


def _jackknife_se(loo: np.ndarray) -> float:
    n = loo.size
    if not np.all(np.isfinite(loo)):
        return math.nan
    return math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))


def kendall_jackknife(x: np.ndarray | Tensor, y: np.ndarray | Tensor, se: bool = True) -> tuple[float, float]:
    r"""Kendall's :math:`\tau_b` of ``x`` and ``y`` and its leave-one-out jackknife standard error.

    :math:`\tau_b = S / \sqrt{(n_0 - n_x)(n_0 - n_y)}` with :math:`S` concordant minus discordant
    pairs, :math:`n_0 = n(n-1)/2` and :math:`n_x, n_y` the tied pairs (scipy's default). Leaving
    network :math:`i` out removes its row of pair signs, so every leave-one-out :math:`\tau_b` comes
    from one pass over the pairs; the standard error is Tukey's
    :math:`\sqrt{\tfrac{n-1}{n}\sum_i (\tau_{(-i)} - \bar\tau)^2}`. ``nan`` when a side is constant;
    with ``se=False`` only :math:`\tau_b` (and ``nan``).
    """
    a, b = _as_1d(x), _as_1d(y)
    if a.size != b.size:
        raise ValueError(f"x and y must have the same size; got {a.size} and {b.size}")
    if a.size < 3:
        raise ValueError(f"Kendall's tau with a jackknife needs at least 3 networks; got {a.size}")
    full, loo = _tau_and_leave_one_out(a, b)
    return full, (_jackknife_se(loo) if se else math.nan)


def _spearman_brown_tau(tau_halves: float | np.ndarray) -> np.ndarray:
    r"""Ceiling :math:`\tfrac{2}{\pi}\arcsin\sqrt{2\rho/(1+\rho)}`, :math:`\rho = \sin(\pi\tau/2)`
    (0 where :math:`\rho \le 0`)."""
    rho = np.sin(np.pi * np.asarray(tau_halves, dtype=np.float64) / 2)
    rel = np.clip(2 * rho / (1 + np.where(rho > -1, rho, 0.0)), 0.0, 1.0)
    return np.where(rho > 0, 2 / np.pi * np.arcsin(np.sqrt(rel)), 0.0)


@dataclasses.dataclass(frozen=True)
class NoiseCeiling:
    r"""The label-noise ceiling of a test-accuracy label (module docstring).

    ``tau_halves`` (``se_halves``): Kendall :math:`\tau_b` between the accuracies on two disjoint
    halves of the test set, with its jackknife standard error over networks; ``tau`` (``se``): the
    ceiling for the full test set (Spearman--Brown, normal approximation; jackknife of the same
    map). ``n_networks``: the networks it was measured on.
    """

    tau_halves: float
    se_halves: float
    tau: float
    se: float
    n_networks: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def label_noise_ceiling(acc_a: np.ndarray | Tensor, acc_b: np.ndarray | Tensor) -> NoiseCeiling:
    r"""The label-noise ceiling from each network's accuracies on two disjoint test halves.

    Pass the test networks of the split (``zoo.meta["test_acc_a"][splits.test]``, ...): the ceiling
    then refers to the networks every model's :math:`\tau` is measured on.
    """
    a, b = _as_1d(acc_a), _as_1d(acc_b)
    if a.shape != b.shape:
        raise ValueError(f"acc_a and acc_b must have one value per network each; got {a.shape} and {b.shape}")
    if a.size < 3:
        raise ValueError(f"the ceiling needs at least 3 networks; got {a.size}")
    if not (np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1))):
        raise ValueError("accuracies must lie in [0, 1]")
    tau_h, loo = _tau_and_leave_one_out(a, b)
    return NoiseCeiling(
        tau_h, _jackknife_se(loo), float(_spearman_brown_tau(tau_h)), _jackknife_se(_spearman_brown_tau(loo)), a.size
    )


# --------------------------------------------------------------------------------------------
# verdicts against a reference
# --------------------------------------------------------------------------------------------
def versus_reference(
    values: Sequence[float],
    reference: float,
    reference_se: float,
    *,
    higher_is_better: bool = True,
    label: str = "model - reference",
    n_se: float = N_SE,
    digits: int = 3,
    unit: str = "",
) -> Difference:
    r"""Judge "per-seed ``values`` beat ``reference``" when the reference is one number with its own
    standard error (the label-noise ceiling, a jackknifed statistic): unpaired,
    :math:`\mathrm{se} = \sqrt{s^2/n + \mathrm{se}_\text{ref}^2}`, the rule of
    :class:`hgutils.verdicts.Difference`. With ``higher_is_better=False`` the claim is "``values``
    below ``reference``" (the difference is ``reference - mean``)."""
    v = np.asarray(list(values), dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be a non-empty list of finite per-seed values; got {list(values)!r}")
    if not (math.isfinite(reference) and math.isfinite(reference_se) and reference_se >= 0):
        raise ValueError(f"reference and its se must be finite (se >= 0); got {reference}, {reference_se}")
    var = float(np.var(v, ddof=1)) if v.size > 1 else math.nan
    se = math.sqrt(var / v.size + reference_se**2) if v.size > 1 else math.nan
    diff = float(v.mean() - reference) if higher_is_better else float(reference - v.mean())
    spread = se * math.sqrt(v.size) if math.isfinite(se) else math.nan
    return Difference(label, diff, se, v.size, 1, False, spread, 0.0, n_se, unit, digits)
