r"""The rich-vs-lazy experiment of notebook 05 (MSA paper, arXiv 2603.28764, §4, Figs. 1, 5, 6).

Protocol (the paper's description; its code and exact task are not public). Networks: MLPs
``2 -> H -> H -> K`` (``depth`` hidden layers of width ``hidden``, ``activation`` tanh) with
:math:`W \sim \mathcal N(0, (g/\sqrt{\text{fan\_in}})^2)` and zero (trainable) biases. **Rich** =
small initialisation (``gain_rich`` = 0.1), **lazy** = large initialisation (``gain_lazy`` = 3),
both trained with Adam on the cross-entropy until every training point is classified correctly and
the loss is below ``loss_tol`` (a step cap ``max_steps``; steps used are recorded per network).
**Untrained** networks at ``gain_untrained`` = 1 form their own group; the initial weights of the
lazy networks (same g) are kept as a control, so that the saturation of a large-init tanh network
is not mistaken for learning.

Task: **ring blobs** with ``blobs_per_class`` = 3 interleaved blobs per class on the unit circle
(:func:`hgutils.data.points.ring_blobs`): not linearly separable for any K, and -- unlike two
opposite blobs per class -- learnable by an odd function (a tanh network with zero biases).

Comparison: the last hidden layer of every network, at ``n_heldout`` held-out points scattered
about the ring (:func:`hgutils.data.points.ring_samples`, shared by all networks and all measures)
and, for MSA, also on a ``grid`` x ``grid`` square. Measures: MSA (``1 - d_MSA``), linear CKA,
SVCCA (top directions keeping 99 % of the variance, at most ``svcca_components``: plain CCA of
256 features on a few hundred samples sits at its chance level), RSA (Euclidean RDMs, Pearson) and
Procrustes. Every split is scored three ways (:mod:`hgutils.similarity.scoring`): AUC,
between/within dissimilarity ratio (scale-free) and raw mean similarities.

Regime checks (thresholds are config fields, set before the results): relative change of the
hidden weights, alignment of the neural tangent kernel before and after training (Fort et al.
2020, arXiv:2010.15110), and the rise of the hidden kernel's alignment with the labels.

Ablations (:data:`ABLATIONS`): the recipe this notebook used before -- one hidden ReLU layer, lazy
by Chizat-Bach α-scaling (arXiv:1812.07956; :math:`f_\alpha = \alpha(h(w) - h(w_0))`, loss
:math:`/\alpha^2`), SGD with momentum on the squared loss for a fixed number of steps, two opposite
blobs per class -- and one-factor changes of either recipe.

Hierarchy (documented choice): trained vs untrained at the root (tree distance 4); trained
networks then split by number of classes (3), regime (2) and seed (1); untrained networks depend
only on their seed (siblings, 1). The lazy-init controls are left out of the hierarchy (a lazy
network and its own initialisation are the same function up to a small change, not tree distance
4 apart).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from hgutils.data.points import ring_blobs, ring_samples, square_grid, swiss_roll, unrolled_plane
from hgutils.loop import GateResult, LearnabilityGate
from hgutils.presets import Preset
from hgutils.similarity.baselines import linear_cka_matrix, procrustes_matrix, rsa_matrix, svcca_matrix
from hgutils.similarity.msa import metric_isotropy, msa_matrix_from_metrics
from hgutils.similarity.pullback import mlp_pullback_metrics
from hgutils.similarity.regimes import kernel_alignment, label_alignment, relative_weight_change
from hgutils.similarity.scoring import split_auc, split_scores
from hgutils.verdicts import Combined, all_of, jackknife

REGIMES = ("rich", "lazy")
GROUPS = ("rich", "lazy", "untrained", "lazy init")
HIERARCHY_GROUPS = ("rich", "lazy", "untrained")
MEASURES = ("MSA", "MSA grid", "CKA", "SVCCA", "RSA", "Procrustes")
BASELINES = ("CKA", "SVCCA", "RSA", "Procrustes")
LAZY_MODES = ("init_scale", "alpha")
LOSSES = ("cross_entropy", "mse")
OPTIMIZERS = ("adam", "sgd")
STOPS = ("converged", "fixed")
ACTIVATIONS = ("tanh", "relu", "gelu")
SWEEP_VERSION = 4  # bump when run_experiment's output changes (part of the notebook's cache key)

SRC = "MSA paper, arXiv 2603.28764"
#: The paper's statements (it publishes figures, no numeric tables) and where they are made.
PAPER: dict[str, dict[str, str]] = {
    "swiss": {"value": "MSA ≈ 0; Procrustes and RSA low", "source": f"{SRC} §1, Fig. 1"},
    "procrustes": {"value": "Procrustes similarity ≈ 1 between rich and lazy", "source": f"{SRC} §4, Fig. 5d"},
    "msa_regime": {"value": "MSA separates rich and lazy into clusters", "source": f"{SRC} §4, Fig. 5d"},
    "hierarchy": {"value": "MSA reflects the hierarchy of the sweep", "source": f"{SRC} §4, Fig. 6a"},
    "trained": {"value": "CCA and RSA cannot tell trained from untrained", "source": f"{SRC} §4, Fig. 6a"},
}

#: The recipe this notebook used before (one hidden ReLU layer, α-scaled lazy regime, SGD on the
#: squared loss for a fixed number of steps, two opposite blobs per class).
PREVIOUS_RECIPE: dict[str, Any] = {
    "activation": "relu",
    "depth": 1,
    "blobs_per_class": 2,
    "blob_std": 0.15,
    "lazy_mode": "alpha",
    "gain_rich": 0.01,
    "gain_lazy": 1.0,
    "alpha_lazy": 30.0,
    "loss": "mse",
    "optimizer": "sgd",
    "lr_rich": 0.1,
    "lr_lazy": 0.005,
    "stop": "fixed",
}
#: Named ablations: field overrides of the protocol (sizes stay those of the scale preset).
ABLATIONS: dict[str, dict[str, Any]] = {
    "previous recipe": PREVIOUS_RECIPE,
    "previous recipe, depth 2": {**PREVIOUS_RECIPE, "depth": 2},
    "previous recipe, tanh": {**PREVIOUS_RECIPE, "activation": "tanh"},
    "protocol, ReLU": {"activation": "relu"},
    "protocol, depth 1": {"depth": 1},
}


@dataclass(frozen=True)
class RichLazyConfig(Preset):
    """Sizes and protocol of notebook 05 (smoke values are the defaults; module docstring)."""

    # task
    class_counts: tuple[int, ...] = (2, 5)  # numbers of classes K in the hierarchical sweep
    blobs_per_class: int = 3  # interleaved blobs per class on the unit circle (odd: no same-class antipodes)
    n_per_class: int = 60  # training points per class, split evenly over its blobs
    blob_std: float = 0.07  # std of each Gaussian blob
    # networks
    hidden: int = 256  # width of every hidden layer
    depth: int = 2  # hidden layers; MSA and the baselines compare the last one
    activation: str = "tanh"  # hidden activation (tanh | relu | gelu), used for training, metrics and baselines
    n_seeds: int = 2  # networks per (K, regime) cell
    # regimes
    lazy_mode: str = "init_scale"  # init_scale: lazy = large init (paper); alpha: Chizat output scaling
    gain_rich: float = 0.1  # g of the rich networks, W ~ N(0, (g/sqrt(fan_in))^2)
    gain_lazy: float = 3.0  # g of the lazy networks
    gain_untrained: float = 1.0  # g of the untrained group
    alpha_lazy: float = 1.0  # Chizat alpha of the lazy networks (lazy_mode alpha only; must be 1 otherwise)
    # training
    loss: str = "cross_entropy"  # cross_entropy | mse (one-hot targets)
    optimizer: str = "adam"  # adam | sgd (full batch)
    lr_rich: float = 1e-3  # learning rate, rich networks
    lr_lazy: float = 1e-3  # learning rate, lazy networks
    momentum: float = 0.9  # heavy-ball momentum (sgd only)
    stop: str = "converged"  # converged: 100 % train accuracy and loss < loss_tol; fixed: max_steps steps
    loss_tol: float = 0.01  # training-loss threshold of the convergence rule
    max_steps: int = 1000  # step cap (the step count when stop is fixed)
    # regime checks, fixed before the results are seen
    rich_min_weight_change: float = 0.5  # rich: median relative change of the hidden weights above this
    rich_max_ntk_alignment: float = 0.9  # rich: median tangent-kernel alignment init-trained below this
    rich_min_label_gain: float = 0.01  # rich: median rise of the hidden kernel's label alignment above this
    lazy_max_weight_change: float = 0.1  # lazy: median relative change of the hidden weights below this
    lazy_min_ntk_alignment: float = 0.99  # lazy: median tangent-kernel alignment above this
    # comparison
    n_heldout: int = 200  # held-out points on the ring (MSA reference measure, baselines' samples)
    grid: int = 16  # second MSA reference measure: grid x grid points on [-extent, extent]^2
    extent: float = 1.5  # half-width of the grid
    svcca_components: int = 10  # SVCCA: at most this many top directions per network
    swiss_points: int = 400  # points on the swiss roll / plane
    ablations: tuple[str, ...] = ("previous recipe",)  # names in ABLATIONS run beside the protocol
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "class_counts": (2, 50),
        "blobs_per_class": (1, 50),
        "n_per_class": (1, 10_000),
        "hidden": (1, 10_000),
        "depth": (None, 20),  # depth 0 is refused by __post_init__, which says why
        "n_seeds": (1, 100),
        "max_steps": (1, 1_000_000),
        "n_heldout": (1, 100_000),
        "grid": (1, 1000),
        "svcca_components": (1, 1000),
        "swiss_points": (1, 100_000),
    }
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 0.4, "medium": 2.6}
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu",)  # 2-D inputs, 256-wide networks: everything runs on the CPU

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {
            "n_seeds": 5,
            "n_per_class": 100,
            "max_steps": 3000,
            "n_heldout": 500,
            "grid": 32,
            "swiss_points": 1000,
            # the previous recipe and the protocol's one-factor changes (the previous recipe's one-factor
            # changes train for the full fixed step count: paper scale)
            "ablations": ("previous recipe", "protocol, ReLU", "protocol, depth 1"),
        },
        "paper": {
            "n_seeds": 10,
            "n_per_class": 200,
            "max_steps": 20000,
            "n_heldout": 2000,
            "grid": 64,
            "swiss_points": 2000,
            "ablations": tuple(ABLATIONS),
        },
    }

    def __post_init__(self) -> None:
        choices = {
            "activation": ACTIVATIONS,
            "lazy_mode": LAZY_MODES,
            "loss": LOSSES,
            "optimizer": OPTIMIZERS,
            "stop": STOPS,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        if self.lazy_mode == "init_scale" and self.alpha_lazy != 1.0:
            raise ValueError(f"alpha_lazy applies to lazy_mode 'alpha' only; got {self.alpha_lazy} with 'init_scale'")
        if self.depth < 1 or self.hidden < 1 or self.n_seeds < 1 or self.max_steps < 1:
            raise ValueError(
                "need depth, hidden, n_seeds, max_steps >= 1; got "
                f"{self.depth}, {self.hidden}, {self.n_seeds}, {self.max_steps}"
            )
        if len(self.class_counts) < 1 or min(self.class_counts) < 2:
            raise ValueError(f"class_counts must list numbers of classes >= 2; got {self.class_counts}")
        unknown = [a for a in self.ablations if a not in ABLATIONS]
        if unknown:
            raise ValueError(f"unknown ablations {unknown}; expected names in {list(ABLATIONS)}")


CONFIG = RichLazyConfig


def ablation_config(cfg: RichLazyConfig, name: str) -> RichLazyConfig:
    """``cfg`` with the protocol fields of ablation ``name`` replaced (sizes kept; no nested ablations)."""
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r}; expected one of {list(ABLATIONS)}")
    return dataclasses.replace(cfg, **ABLATIONS[name], ablations=())


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
def cell_seeds(k_index: int, group: str, n_seeds: int, base_seed: int = 0) -> list[int]:
    """Distinct init seeds per (K, group) cell: ``group`` is ``rich``, ``lazy`` or ``untrained``."""
    g = ("rich", "lazy", "untrained").index(group)
    return [base_seed * 100_000 + 1000 * (3 * k_index + g) + s for s in range(n_seeds)]


def regime_setting(cfg: RichLazyConfig, regime: str) -> tuple[float, float, float]:
    """``(gain, alpha, lr)`` of a regime under ``cfg`` (α = 1 unless ``lazy_mode`` is ``alpha``)."""
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}; got {regime!r}")
    if regime == "rich":
        return cfg.gain_rich, 1.0, cfg.lr_rich
    return cfg.gain_lazy, (cfg.alpha_lazy if cfg.lazy_mode == "alpha" else 1.0), cfg.lr_lazy


def classification_loss(f: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    r"""Per-network training loss ``[N]`` of outputs ``f [N, n, K]``: mean cross-entropy or mean
    squared error :math:`\frac1n\sum_i \|f(x_i) - e_{y_i}\|^2` to one-hot targets."""
    if kind == "cross_entropy":
        return torch.nn.functional.cross_entropy(f.transpose(1, 2), y.expand(f.shape[0], -1), reduction="none").mean(-1)
    if kind == "mse":
        return ((f - torch.nn.functional.one_hot(y, f.shape[-1]).to(f.dtype)) ** 2).sum(-1).mean(-1)
    raise ValueError(f"loss must be one of {LOSSES}; got {kind!r}")


def train_cells(
    n_classes: int, seeds: dict[str, list[int]], cfg: RichLazyConfig, X: torch.Tensor, y: torch.Tensor
) -> dict[str, dict[str, Any]]:
    r"""Train the (K, regime) cells of one K in one stacked run: ``seeds = {regime: [seed, ...]}``.

    Each network has its own initial scale, α and learning rate (:func:`regime_setting`); stacked
    networks train independently (``train_stacked``), so this equals one run per cell. The trained
    function is :math:`f = \alpha(h(w) - h(w_0))` where α != 1 (``lazy_mode="alpha"``) and
    :math:`f = h(w)` otherwise; the loss is ``classification_loss(f) / α²``. With
    ``stop="converged"`` a network freezes at the first step where its training accuracy is 1 and
    its loss is below ``loss_tol``; ``steps`` records the steps it used (the cap ``max_steps`` if it
    never converged). Returns per regime: initial and final parameters, accuracy, steps, loss curve
    ``[steps, n]``, learnability checks and regime diagnostics.
    """
    from hgutils.weightspace.stacked import init_mlp, mlp_forward, train_stacked

    regimes = list(seeds)
    settings = {r: regime_setting(cfg, r) for r in regimes}
    sizes = (2, *([cfg.hidden] * cfg.depth), n_classes)
    parts = [init_mlp(len(seeds[r]), sizes, scheme="normal", gain=settings[r][0], seeds=seeds[r]) for r in regimes]
    p0 = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    per_net = [(r, i) for r in regimes for i in range(len(seeds[r]))]
    alpha = torch.tensor([settings[r][1] for r, _ in per_net])
    lr = torch.tensor([settings[r][2] for r, _ in per_net], dtype=torch.float64)
    act = cfg.activation
    centred = (alpha != 1.0)[:, None, None]
    scale = alpha[:, None, None]
    with torch.no_grad():
        out0 = mlp_forward(p0, X, act)
    last: dict[str, torch.Tensor] = {}

    def outputs(p: dict[str, torch.Tensor]) -> torch.Tensor:
        h = mlp_forward(p, X, act)
        return torch.where(centred, scale * (h - out0), h)

    def loss_fn(p: dict[str, torch.Tensor]) -> torch.Tensor:
        f = outputs(p)
        last["f"] = f.detach()  # stop_fn runs next, on the same parameters
        return classification_loss(f, y, cfg.loss) / alpha**2

    def converged(p: dict[str, torch.Tensor], losses: torch.Tensor) -> torch.Tensor:
        acc = (last["f"].argmax(-1) == y).float().mean(-1)
        return (acc >= 1.0) & (losses < cfg.loss_tol)

    res = train_stacked(
        p0,
        loss_fn,
        steps=cfg.max_steps,
        optimizer=cfg.optimizer,
        lr=lr,
        momentum=cfg.momentum if cfg.optimizer == "sgd" else 0.0,
        stop_fn=converged if cfg.stop == "converged" else None,
        desc=f"K={n_classes} {'+'.join(regimes)}",
    )
    p1 = res.params
    steps = torch.where(res.stopped_at >= 0, res.stopped_at, torch.full_like(res.stopped_at, cfg.max_steps))
    with torch.no_grad():
        acc = (outputs(p1).argmax(-1) == y).float().mean(-1)
    loss0, loss1 = res.history[0], res.losses
    gate = LearnabilityGate()
    out, start = {}, 0
    for r in regimes:
        sl = slice(start, start + len(seeds[r]))
        start = sl.stop
        q0 = {k: v[sl] for k, v in p0.items()}
        q1 = {k: v[sl] for k, v in p1.items()}
        n_steps = steps[sl]
        out[r] = {
            "p0": q0,
            "p1": q1,
            "acc": acc[sl],
            "steps": n_steps,
            "history": res.history[: int(n_steps.max()), sl].clone(),
            "loss0": loss0[sl],
            "loss1": loss1[sl],
            "gates": [
                gate.check(float(a), float(b), float(c), 1.0 / n_classes)
                for a, b, c in zip(loss0[sl], loss1[sl], acc[sl])
            ],
            "gain": settings[r][0],
            "alpha": settings[r][1],
            "rwc": relative_weight_change(q0, q1, [f"W{l}" for l in range(cfg.depth)]),
            "ntk_align": kernel_alignment(q0, q1, X, activation=act, kind="tangent"),
            "label_align0": label_alignment(q0, X, y, n_classes, cfg.depth - 1, act),
            "label_align1": label_alignment(q1, X, y, n_classes, cfg.depth - 1, act),
        }
    return out


def train_cell(
    n_classes: int, regime: str, seeds: list[int], cfg: RichLazyConfig, X: torch.Tensor, y: torch.Tensor
) -> dict[str, Any]:
    """One (K, regime) cell alone: :func:`train_cells` with ``{regime: seeds}``."""
    return train_cells(n_classes, {regime: seeds}, cfg, X, y)[regime]


def cell_gate(cell: dict[str, Any]) -> dict[str, Any]:
    """The learnability check of a whole cell: trained iff every network in it passed."""
    gates: list[GateResult] = cell["gates"]
    ok = [g.trained for g in gates]
    worst = min(gates, key=lambda g: (g.trained, -(g.final_loss / max(g.initial_loss, 1e-12))))
    return {"trained": all(ok), "reason": f"{sum(ok)}/{len(ok)} networks passed; weakest: {worst.reason}"}


# --------------------------------------------------------------------------------------------
# the sweep
# --------------------------------------------------------------------------------------------
def hidden_stack(params_list: list[dict[str, torch.Tensor]], depth: int = 1) -> dict[str, torch.Tensor]:
    """Concatenate the first ``depth`` (hidden) layers of several stacked MLPs of equal widths.

    Returns a stacked dict whose output layer is a zero placeholder of width 1, so that
    ``mlp_forward(..., layer=depth-1)`` / ``mlp_pullback_metrics(..., layer=depth-1)`` give the last
    hidden layer of every network (the output layers differ in width across K and are not compared).
    """
    out = {}
    for l in range(depth):
        out[f"W{l}"] = torch.cat([p[f"W{l}"] for p in params_list])
        out[f"b{l}"] = torch.cat([p[f"b{l}"] for p in params_list])
    M, H = out[f"b{depth - 1}"].shape
    dt = out["W0"].dtype
    out[f"W{depth}"] = torch.zeros(M, 1, H, dtype=dt)
    out[f"b{depth}"] = torch.zeros(M, 1, dtype=dt)
    return out


def run_sweep(cfg: RichLazyConfig, seed: int = 0) -> dict[str, Any]:
    """Train every (K, regime) cell and draw the untrained group; return hidden layers, meta and cells.

    Model order (the axis of every similarity matrix): trained cells K x (rich, lazy), then the
    untrained networks (g = ``gain_untrained``) per K, then the lazy networks' initial weights.
    ``meta[i]`` = ``{"group", "classes", "seed", "trained", "gain"}``.
    """
    from hgutils.progress import progress
    from hgutils.weightspace.stacked import init_mlp

    g = torch.Generator().manual_seed(seed)
    cells, trained, untrained, lazy_init = [], [], [], []
    meta_t, meta_u, meta_l = [], [], []
    for ki, K in enumerate(progress(cfg.class_counts, desc="cells")):
        per_blob = max(1, cfg.n_per_class // cfg.blobs_per_class)
        X, y = ring_blobs(K, per_blob, cfg.blob_std, blobs_per_class=cfg.blobs_per_class, generator=g)
        trained_k = train_cells(K, {r: cell_seeds(ki, r, cfg.n_seeds, seed) for r in REGIMES}, cfg, X, y)
        for regime, out in trained_k.items():
            cells.append({"classes": K, "regime": regime, **{k: v for k, v in out.items() if k not in ("p0", "p1")}})
            trained.append(out["p1"])
            meta_t += [
                {"group": regime, "classes": K, "seed": s, "trained": True, "gain": out["gain"]}
                for s in range(cfg.n_seeds)
            ]
            if regime == "lazy":
                lazy_init.append(out["p0"])
                meta_l += [
                    {"group": "lazy init", "classes": K, "seed": s, "trained": False, "gain": out["gain"]}
                    for s in range(cfg.n_seeds)
                ]
        sizes = (2, *([cfg.hidden] * cfg.depth), K)
        seeds = cell_seeds(ki, "untrained", cfg.n_seeds, seed)
        untrained.append(init_mlp(cfg.n_seeds, sizes, scheme="normal", gain=cfg.gain_untrained, seeds=seeds))
        meta_u += [
            {"group": "untrained", "classes": K, "seed": s, "trained": False, "gain": cfg.gain_untrained}
            for s in range(cfg.n_seeds)
        ]
    hidden = hidden_stack(trained + untrained + lazy_init, cfg.depth)
    return {"hidden": hidden, "meta": meta_t + meta_u + meta_l, "cells": cells, "layer": cfg.depth - 1}


def reference_points(cfg: RichLazyConfig, seed: int = 0) -> dict[str, torch.Tensor]:
    """The shared inputs of the comparison: ``held-out`` ring samples and the MSA ``grid``."""
    g = torch.Generator().manual_seed(10_000 + seed)
    return {
        "held-out": ring_samples(cfg.n_heldout, cfg.blob_std, generator=g),
        "grid": square_grid(cfg.grid, cfg.extent),
    }


def similarity_matrices(
    hidden: dict[str, torch.Tensor], points: dict[str, torch.Tensor], layer: int, cfg: RichLazyConfig
) -> tuple[dict[str, np.ndarray], torch.Tensor]:
    """Similarity matrices (1 = same) of all models' last hidden layers for :data:`MEASURES`, and the
    isotropy :func:`~hgutils.similarity.metric_isotropy` of every model's metric at the held-out
    points ``[M, P]``.

    MSA: ``1 - d_MSA`` with the uniform measure on the held-out points (``"MSA"``) or on the grid
    (``"MSA grid"``); CKA, SVCCA, RSA, Procrustes on the activations at the held-out points.
    """
    from hgutils.weightspace.stacked import mlp_forward

    act = cfg.activation
    G = mlp_pullback_metrics(hidden, points["held-out"], layer=layer, activation=act)
    G_grid = mlp_pullback_metrics(hidden, points["grid"], layer=layer, activation=act)
    with torch.no_grad():
        reps = list(mlp_forward(hidden, points["held-out"], act, layer=layer).double().numpy())
    mats = {
        "MSA": 1.0 - msa_matrix_from_metrics(G),
        "MSA grid": 1.0 - msa_matrix_from_metrics(G_grid),
        "CKA": linear_cka_matrix(reps),
        "SVCCA": svcca_matrix(reps, keep=0.99, max_components=cfg.svcca_components),
        "RSA": rsa_matrix(reps),
        "Procrustes": procrustes_matrix(reps, tol=1e-12),  # within 2e-6 of exact (its docstring)
    }
    return mats, metric_isotropy(G)


def run_experiment(cfg: RichLazyConfig, seed: int = 0) -> dict[str, Any]:
    """:func:`run_sweep`, then the similarity matrices of all models (:func:`similarity_matrices`)."""
    sweep = run_sweep(cfg, seed)
    points = reference_points(cfg, seed)
    mats, iso = similarity_matrices(sweep["hidden"], points, sweep["layer"], cfg)
    return {**sweep, "points": points, "mats": mats, "isotropy": iso}


# --------------------------------------------------------------------------------------------
# regime checks and scores
# --------------------------------------------------------------------------------------------
def regime_table(cells: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (K, regime) cell: steps, accuracy, learnability, weight change, kernel alignments."""
    rows = []
    for c in cells:
        ok = sum(g.trained for g in c["gates"])
        rows.append(
            {
                "K": c["classes"],
                "regime": c["regime"],
                "g": c["gain"],
                "α": c["alpha"],
                "steps (median)": int(c["steps"].median()),
                "steps (max)": int(c["steps"].max()),
                "train acc (min)": float(c["acc"].min()),
                "final loss (max)": float(c["loss1"].max()),
                "trained (gate)": f"{ok}/{len(c['gates'])}",
                "weight change": float(c["rwc"].median()),
                "NTK align. init↔trained": float(c["ntk_align"].median()),
                "label align. init": float(c["label_align0"].median()),
                "label align. trained": float(c["label_align1"].median()),
            }
        )
    return pd.DataFrame(rows)


def regime_checks(cells: list[dict[str, Any]], cfg: RichLazyConfig) -> dict[str, bool]:
    """The pre-registered regime checks (medians over each cell's networks), per regime.

    rich: weight change > ``rich_min_weight_change``, tangent-kernel alignment <
    ``rich_max_ntk_alignment`` and label-alignment rise > ``rich_min_label_gain`` in every rich cell;
    lazy: weight change < ``lazy_max_weight_change`` and alignment > ``lazy_min_ntk_alignment`` in
    every lazy cell.
    """
    rich = all(
        float(c["rwc"].median()) > cfg.rich_min_weight_change
        and float(c["ntk_align"].median()) < cfg.rich_max_ntk_alignment
        and float((c["label_align1"] - c["label_align0"]).median()) > cfg.rich_min_label_gain
        for c in cells
        if c["regime"] == "rich"
    )
    lazy = all(
        float(c["rwc"].median()) < cfg.lazy_max_weight_change
        and float(c["ntk_align"].median()) > cfg.lazy_min_ntk_alignment
        for c in cells
        if c["regime"] == "lazy"
    )
    return {"rich": rich, "lazy": lazy}


def regime_criterion(cfg: RichLazyConfig) -> str:
    """The regime checks of :func:`regime_checks` as text, with their thresholds."""
    return (
        f"rich cells: median weight change > {cfg.rich_min_weight_change:g}, NTK alignment init↔trained < "
        f"{cfg.rich_max_ntk_alignment:g}, label-alignment rise > {cfg.rich_min_label_gain:g}; lazy cells: weight "
        f"change < {cfg.lazy_max_weight_change:g}, NTK alignment > {cfg.lazy_min_ntk_alignment:g}"
    )


def tree_distance(meta: list[dict[str, Any]]) -> np.ndarray:
    """Tree distance of the design hierarchy (module docstring): 4 trained/untrained, then 3/2/1."""
    M = len(meta)
    T = np.zeros((M, M))
    for i, a in enumerate(meta):
        for j, b in enumerate(meta):
            if i == j:
                continue
            if a["trained"] != b["trained"]:
                T[i, j] = 4
            elif not a["trained"]:
                T[i, j] = 1
            elif a["classes"] != b["classes"]:
                T[i, j] = 3
            elif a["group"] != b["group"]:
                T[i, j] = 2
            else:
                T[i, j] = 1
    return T


def hierarchy_score(S: np.ndarray, meta: list[dict[str, Any]], groups: tuple[str, ...] = HIERARCHY_GROUPS) -> float:
    """Spearman ρ between dissimilarity ``1 - S`` and :func:`tree_distance` over pairs i < j of the
    models in ``groups`` (``nan`` for a constant ``S``)."""
    idx = [i for i, m in enumerate(meta) if m["group"] in groups]
    sub = [meta[i] for i in idx]
    T = tree_distance(sub)
    Ssub = np.asarray(S)[np.ix_(idx, idx)]
    iu = np.triu_indices(len(idx), k=1)
    d = 1.0 - Ssub[iu]
    if np.ptp(d) == 0:
        return float("nan")  # a constant measure has no rank correlation
    return float(spearmanr(d, T[iu]).statistic)


def score_measures(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> pd.DataFrame:
    """Every split scored for every measure (module docstring), one row per measure.

    - regime: rich vs lazy among trained networks with the same K (AUC, ratio, raw similarities);
    - rich/untrained: trained rich networks vs the untrained group (same K label);
    - lazy/lazy init: trained lazy networks vs the lazy initialisations (the control);
    - classes: K = 2 vs K = 5 among trained networks of one regime (AUC);
    - hierarchy ρ (:func:`hierarchy_score`).
    """
    rows = {}
    for name, S in mats.items():
        reg = split_scores(S, meta, "group", where={"trained": True}, same=("classes",))
        tu = split_scores(S, meta, "group", where={"group": ("rich", "untrained")}, same=("classes",))
        lz = split_scores(S, meta, "group", where={"group": ("lazy", "lazy init")}, same=("classes",))
        multi_k = len({m["classes"] for m in meta}) > 1
        classes = split_auc(S, meta, "classes", where={"trained": True}, same=("group",)) if multi_k else np.nan
        rows[name] = {
            "regime AUC": reg["auc"],
            "regime ratio": reg["ratio"],
            "sim. within regime": reg["sim_within"],
            "sim. rich–lazy": reg["sim_between"],
            "rich/untrained AUC": tu["auc"],
            "rich/untrained ratio": tu["ratio"],
            "lazy/lazy-init AUC": lz["auc"],
            "sim. lazy–lazy init": lz["sim_between"],
            "classes AUC": classes,
            "hierarchy ρ": hierarchy_score(S, meta) if multi_k else np.nan,
        }
    return pd.DataFrame(rows).T


#: a leave-one-seed-out replicate must keep two seeds per group (within-group pairs)
MIN_JACKKNIFE_SEEDS = 3


def jackknife_scores(mats: dict[str, np.ndarray], meta: list[dict[str, Any]]) -> list[pd.DataFrame] | None:
    """:func:`score_measures` with each seed index's networks left out in turn (the jackknife replicates
    behind the comparative claims: every group's ``seed``-th network is dropped together); ``None`` with
    fewer than :data:`MIN_JACKKNIFE_SEEDS` seeds (a replicate would have no within-group pair)."""
    seeds = sorted({m["seed"] for m in meta})
    if len(seeds) < MIN_JACKKNIFE_SEEDS:
        return None
    out = []
    for s in seeds:
        keep = [i for i, m in enumerate(meta) if m["seed"] != s]
        out.append(score_measures({k: S[np.ix_(keep, keep)] for k, S in mats.items()}, [meta[i] for i in keep]))
    return out


def msa_beats_baselines(
    scores: pd.DataFrame, replicates: list[pd.DataFrame], column: str, baselines: tuple[str, ...] = BASELINES
) -> Combined:
    """``MSA − baseline`` on score ``column`` for every baseline, each judged with its leave-one-seed-out
    jackknife standard error (:func:`hgutils.verdicts.jackknife`); holds when every difference does."""
    tests = [
        jackknife(
            float(scores.loc["MSA", column] - scores.loc[b, column]),
            [float(r.loc["MSA", column] - r.loc[b, column]) for r in replicates],
            label=f"MSA − {b} ({column})",
        )
        for b in baselines
    ]
    return all_of(tests)


def isotropy_table(iso: torch.Tensor, meta: list[dict[str, Any]]) -> pd.DataFrame:
    """Quartiles of :math:`\\sqrt{\\lambda_{min}/\\lambda_{max}}` per group, pooled over networks and points."""
    rows = {}
    for grp in GROUPS:
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        v = iso[idx].flatten().numpy()
        rows[grp] = {"q25": np.quantile(v, 0.25), "median": np.median(v), "q75": np.quantile(v, 0.75)}
    return pd.DataFrame(rows).T


def isotropy_bound(iso: torch.Tensor, meta: list[dict[str, Any]], a: str = "rich", b: str = "lazy") -> float:
    r"""Mean over network pairs (group ``a`` x group ``b``, same K) and points of :math:`1 - \iota(G)\iota(G')`,
    the largest spectral-ratio distance their metrics' isotropies allow (``metric_isotropy``): an upper
    bound on their mean MSA distance."""
    ia = [i for i, m in enumerate(meta) if m["group"] == a]
    ib = [j for j, m in enumerate(meta) if m["group"] == b]
    vals = [
        float((1.0 - iso[i].double() * iso[j].double()).mean())
        for i in ia
        for j in ib
        if meta[i]["classes"] == meta[j]["classes"]
    ]
    if not vals:
        raise ValueError(f"no pairs between groups {a!r} and {b!r} with the same number of classes")
    return float(np.mean(vals))


def ablation_row(name: str, exp: dict[str, Any], cfg: RichLazyConfig) -> dict[str, Any]:
    """One summary row of an experiment (the protocol or an ablation): training, checks, key scores."""
    scores = score_measures(exp["mats"], exp["meta"])
    checks = regime_checks(exp["cells"], cfg)
    gates = [cell_gate(c)["trained"] for c in exp["cells"]]
    base = scores.loc[list(BASELINES), "regime ratio"]
    iso = isotropy_table(exp["isotropy"], exp["meta"])["median"]
    return {
        "recipe": name,
        "cells trained": f"{sum(gates)}/{len(gates)}",
        "train acc (min)": min(float(c["acc"].min()) for c in exp["cells"]),
        "steps (max)": max(int(c["steps"].max()) for c in exp["cells"]),
        "rich check": checks["rich"],
        "lazy check": checks["lazy"],
        "MSA regime AUC": scores.loc["MSA", "regime AUC"],
        "MSA grid regime AUC": scores.loc["MSA grid", "regime AUC"],
        "MSA regime ratio": scores.loc["MSA", "regime ratio"],
        "best baseline ratio": f"{base.idxmax()} {base.max():.2f}",
        "Procrustes sim. rich–lazy": scores.loc["Procrustes", "sim. rich–lazy"],
        "MSA dist. rich–lazy": 1.0 - scores.loc["MSA", "sim. rich–lazy"],
        "its bound 1 − ιι'": isotropy_bound(exp["isotropy"], exp["meta"]),
        "isotropy rich": iso["rich"],
        "isotropy lazy": iso["lazy"],
        "isotropy untrained": iso["untrained"],
    }


def activation_stats(
    hidden: dict[str, torch.Tensor], points: torch.Tensor, layer: int, meta: list[dict[str, Any]], activation: str
) -> pd.DataFrame:
    r"""Per group: mean \|h\| of the compared hidden units at ``points`` and, for tanh, the fraction of
    saturated units (\|h\| > 0.95, where tanh' < 0.1) -- the init statistics behind each regime."""
    from hgutils.weightspace.stacked import mlp_forward

    with torch.no_grad():
        H = mlp_forward(hidden, points, activation, layer=layer).abs()
    rows = {}
    for grp in GROUPS:
        idx = [i for i, m in enumerate(meta) if m["group"] == grp]
        rows[grp] = {
            "g": meta[idx[0]]["gain"],
            "mean |h|": float(H[idx].mean()),
            "saturated (|h| > 0.95)": float((H[idx] > 0.95).float().mean()) if activation == "tanh" else np.nan,
        }
    return pd.DataFrame(rows).T


def group_gates(cells: list[dict[str, Any]], regimes: tuple[str, ...] = REGIMES) -> dict[str, dict[str, Any]]:
    """``{"K2 rich": gate, ...}`` for the claims ledger (``trained=``): one learnability check per cell."""
    return {f"K{c['classes']} {c['regime']}": cell_gate(c) for c in cells if c["regime"] in regimes}


def paper_table(swiss: dict[str, float], scores: pd.DataFrame) -> pd.DataFrame:
    """The paper's statements beside our measured values (paper values are quoted, ours computed)."""
    s = scores
    rows = [
        ("plane vs swiss roll: MSA distance", PAPER["swiss"], f"{swiss['MSA distance']:.1e}"),
        (
            "plane vs swiss roll: Procrustes / RSA similarity",
            PAPER["swiss"],
            f"{swiss['Procrustes similarity']:.3f} / {swiss['RSA similarity']:.3f}",
        ),
        ("rich vs lazy: Procrustes similarity", PAPER["procrustes"], f"{s.loc['Procrustes', 'sim. rich–lazy']:.3f}"),
        (
            "rich vs lazy: MSA regime AUC (ratio between/within)",
            PAPER["msa_regime"],
            f"{s.loc['MSA', 'regime AUC']:.3f} ({s.loc['MSA', 'regime ratio']:.2f})",
        ),
        (
            "hierarchy: Spearman ρ with the tree distance",
            PAPER["hierarchy"],
            ", ".join(f"{k} {v:.2f}" for k, v in s["hierarchy ρ"].items()),
        ),
        (
            "trained rich vs untrained: AUC",
            PAPER["trained"],
            ", ".join(f"{k} {v:.2f}" for k, v in s["rich/untrained AUC"].items()),
        ),
    ]
    return pd.DataFrame(
        [{"result": r, "paper": p["value"], "paper's source": p["source"], "ours": o} for r, p, o in rows]
    )


# --------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------
def block_label(m: dict[str, Any]) -> str:
    """The block a model belongs to in the similarity matrices: ``"K2 rich"``, ``"untrained g=1"``, ..."""
    if m["trained"]:
        return f"K{m['classes']} {m['group']}"
    return f"{m['group']} g={m['gain']:g}"


def _blocks(meta: list[dict[str, Any]]) -> list[tuple[str, int, int, bool]]:
    """Contiguous blocks ``(label, start, stop, trained)`` in model order."""
    out: list[tuple[str, int, int, bool]] = []
    for i, m in enumerate(meta):
        lab = block_label(m)
        if out and out[-1][0] == lab:
            out[-1] = (lab, out[-1][1], i + 1, m["trained"])
        else:
            out.append((lab, i, i + 1, m["trained"]))
    return out


def plot_similarity_panels(
    mats: dict[str, np.ndarray],
    meta: list[dict[str, Any]],
    scores: pd.DataFrame | None = None,
    ncols: int = 3,
    own_scale: bool = False,
) -> plt.Figure:
    """Heatmaps of the similarity matrices, labelled by block (K × regime for trained networks,
    untrained group, lazy initialisations), block boundaries drawn (thick between trained and
    untrained groups); the panel titles carry the regime AUC and ratio when ``scores`` is given.

    Colours span [0, 1] for every measure, or with ``own_scale`` each measure's own range
    [min S, 1] (the structure of measures whose similarities are all near 1)."""
    from hgutils.plotting import use_style

    use_style()
    n = len(mats)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.0 * ncols, 4.6 * nrows), squeeze=False)
    blocks = _blocks(meta)
    centres = [(a + b - 1) / 2 for _, a, b, _ in blocks]
    labels = [lab for lab, *_ in blocks]
    for k, (ax, (name, S)) in enumerate(zip(axes.flat, mats.items())):
        vmin = float(np.min(S)) if own_scale else 0.0
        im = ax.imshow(S, vmin=vmin, vmax=1.0, cmap="viridis", interpolation="nearest")
        ax.grid(False)
        for (_, a, _, tr), (_, _, _, tr_prev) in zip(blocks[1:], blocks[:-1]):
            major = tr != tr_prev or not tr
            for f in (ax.axhline, ax.axvline):
                f(a - 0.5, color="w", lw=2.0 if major else 0.7, ls="-" if major else "--")
        ax.set_xticks(centres, labels, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(centres, labels if k % ncols == 0 else [""] * len(labels), fontsize=7)
        title = name
        if scores is not None:
            title += f"\nregime AUC {scores.loc[name, 'regime AUC']:.2f}, ratio {scores.loc[name, 'regime ratio']:.2f}"
        ax.set_title(title, fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="similarity")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_training_curves(cells: list[dict[str, Any]], title: str = "") -> plt.Figure:
    """Training loss per step of every network, one panel per K, rich and lazy in two colours; a dot
    marks the step at which each network met the stopping rule (or the cap)."""
    from hgutils.plotting import use_style

    use_style()
    ks = sorted({c["classes"] for c in cells})
    fig, axes = plt.subplots(1, len(ks), figsize=(5 * len(ks), 3.6), squeeze=False)
    colours = {"rich": "tab:blue", "lazy": "tab:orange"}
    for ax, K in zip(axes.flat, ks):
        for c in (c for c in cells if c["classes"] == K):
            for i in range(c["history"].shape[1]):
                n = int(c["steps"][i])
                h = c["history"][: max(n, 1), i].numpy()
                ax.plot(np.arange(1, len(h) + 1), h, color=colours[c["regime"]], lw=0.8, alpha=0.7)
                ax.plot([len(h)], [h[-1]], "o", color=colours[c["regime"]], ms=3)
        for r, col in colours.items():
            ax.plot([], [], color=col, label=r)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_title(f"K = {K}" + (f" · {title}" if title else ""))
        ax.legend()
    fig.tight_layout()
    return fig


def plot_isotropy(isos: dict[str, tuple[torch.Tensor, list[dict[str, Any]]]], ncols: int = 2) -> plt.Figure:
    r"""Distribution of the metric isotropy :math:`\sqrt{\lambda_{min}/\lambda_{max}}` per group
    (all networks, all held-out points), one panel per recipe (violins, medians marked)."""
    from hgutils.plotting import use_style

    use_style()
    ncols = min(ncols, len(isos))
    nrows = math.ceil(len(isos) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.6 * nrows), squeeze=False, sharey=True)
    colours = {"rich": "tab:blue", "lazy": "tab:orange", "untrained": "tab:gray", "lazy init": "tab:brown"}
    for ax, (name, (iso, meta)) in zip(axes.flat, isos.items()):
        data = [iso[[i for i, m in enumerate(meta) if m["group"] == g]].flatten().numpy() for g in GROUPS]
        parts = ax.violinplot(data, showmedians=True, showextrema=False)
        for body, g in zip(parts["bodies"], GROUPS):
            body.set_facecolor(colours[g])
            body.set_alpha(0.6)
        ax.set_xticks(range(1, len(GROUPS) + 1), GROUPS)
        ax.set_ylim(0, 1)
        ax.set_title(name)
        ax.set_xlabel("group")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"isotropy $\sqrt{\lambda_{min}/\lambda_{max}}$ of $G(p)$")
    for ax in list(axes.flat)[len(isos) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_hidden_pca(reps: dict[str, np.ndarray], color: np.ndarray, cmap: str = "twilight") -> plt.Figure:
    """First two principal components of each hidden representation, coloured by ``color``
    (e.g. the polar angle of each input, with a cyclic colour map)."""
    from hgutils.plotting import use_style

    use_style()
    fig, axes = plt.subplots(1, len(reps), figsize=(4.3 * len(reps), 3.8), layout="constrained")
    for ax, (name, H) in zip(np.atleast_1d(axes), reps.items()):
        Hc = H - H.mean(0)
        U, s, _ = np.linalg.svd(Hc, full_matrices=False)
        Z = U[:, :2] * s[:2]
        sc = ax.scatter(Z[:, 0], Z[:, 1], c=color, cmap=cmap, s=6, linewidths=0)
        ax.set_title(f"{name}: hidden-layer PCA")
        ax.set_xlabel("PC1")
        ax.set_ylabel("PC2")
    fig.colorbar(sc, ax=np.atleast_1d(axes).tolist(), label="polar angle of the input (rad)")
    return fig


def plot_swiss_roll(points: torch.Tensor, color: np.ndarray) -> plt.Figure:
    """The plane (unrolled) and the swiss roll, coloured by the chart coordinate t."""
    from hgutils.plotting import use_style

    use_style()
    A, B = unrolled_plane(points).numpy(), swiss_roll(points).numpy()
    fig = plt.figure(figsize=(9, 4))
    ax1 = fig.add_subplot(1, 2, 1)
    ax1.scatter(A[:, 0], A[:, 1], c=color, s=5, cmap="viridis")
    ax1.set_title("plane (arc-length coordinates)")
    ax1.set_xlabel("s(t)")
    ax1.set_ylabel("h")
    ax2 = fig.add_subplot(1, 2, 2, projection="3d")
    ax2.scatter(B[:, 0], B[:, 1], B[:, 2], c=color, s=5, cmap="viridis")
    ax2.set_title("swiss roll")
    ax2.set_xlabel("x")
    ax2.set_ylabel("y")
    ax2.set_zlabel("z")
    fig.tight_layout()
    return fig


def plot_metric_field(ax: plt.Axes, G: torch.Tensor, points: torch.Tensor, title: str = "", every: int = 1) -> plt.Axes:
    """Ellipses of the pullback metric (unit balls of G^{-1}, normalised) on the input grid."""
    from matplotlib.patches import Ellipse

    from hgutils.plotting import use_style

    use_style()
    G = G.double()
    pts = points.double()
    step = float((pts[:, 0].max() - pts[:, 0].min()) / max(1, int(math.isqrt(len(pts))) - 1)) * every
    lam, V = torch.linalg.eigh(G)
    for k in range(0, len(pts), every):
        r = 1.0 / torch.sqrt(lam[k].clamp_min(1e-12))
        r = 0.45 * step * r / r.max()
        ang = math.degrees(math.atan2(float(V[k, 1, 0]), float(V[k, 0, 0])))
        ax.add_patch(Ellipse(pts[k].tolist(), 2 * float(r[0]), 2 * float(r[1]), angle=ang, fill=False, lw=0.6))
    lim = float(pts.abs().max()) + step
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title)
    return ax
