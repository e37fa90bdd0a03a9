r"""Notebook 05's runs: training the (K, regime) cells to convergence, the learnability check of a cell,
the hierarchical sweep (trained cells, untrained group, lazy-init controls) and the similarity matrices
of every model's last hidden layer (the protocol: the package docstring)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hgutils.data.points import ring_blobs, ring_samples, square_grid
from hgutils.experiments.nb05_msa_rich_vs_lazy.preset import REGIMES, RichLazyConfig
from hgutils.loop import LearnabilityGate, combine_gates
from hgutils.nn.classifier_training import classification_loss
from hgutils.progress import progress
from hgutils.similarity.baselines import linear_cka_matrix, procrustes_matrix, rsa_matrix, svcca_matrix
from hgutils.similarity.msa import metric_isotropy, msa_matrix_from_metrics
from hgutils.similarity.pullback import mlp_pullback_metrics
from hgutils.similarity.regimes import kernel_alignment, label_alignment, relative_weight_change
from hgutils.weightspace.batched_training import train_stacked
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward


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


def train_cells(
    n_classes: int, seeds: dict[str, list[int]], cfg: RichLazyConfig, X: torch.Tensor, y: torch.Tensor
) -> dict[str, dict[str, Any]]:
    r"""Train the (K, regime) cells of one K in one stacked run: ``seeds = {regime: [seed, ...]}``.

    Each network has its own initial scale, α and learning rate (:func:`regime_setting`); stacked
    networks train independently (``train_stacked``), so this equals one run per cell. The trained
    function is :math:`f = \alpha(h(w) - h(w_0))` where α != 1 (``lazy_mode="alpha"``) and
    :math:`f = h(w)` otherwise; the loss is ``classification_loss(f) / α²``
    (:func:`hgutils.nn.classifier_training.classification_loss`). With ``stop="converged"`` a network freezes at the
    first step where its training accuracy is 1 and its loss is below ``loss_tol``; ``steps`` records
    the steps it used (the cap ``max_steps`` if it never converged). Returns per regime: initial and
    final parameters, accuracy, steps, loss curve ``[steps, n]``, learnability checks and regime
    diagnostics.
    """
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
    """The learnability check of a whole cell: trained iff every network in it passed
    (:func:`hgutils.loop.combine_gates`, ``"k/n networks passed; weakest: ..."``)."""
    return combine_gates({str(i): g for i, g in enumerate(cell["gates"])}, summary="count", noun="networks")


def group_gates(cells: list[dict[str, Any]], regimes: tuple[str, ...] = REGIMES) -> dict[str, dict[str, Any]]:
    """``{"K2 rich": gate, ...}`` for the claims ledger (``trained=``): one learnability check per cell."""
    return {f"K{c['classes']} {c['regime']}": cell_gate(c) for c in cells if c["regime"] in regimes}


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
    """Similarity matrices (1 = same) of all models' last hidden layers for :data:`~.preset.MEASURES`, and
    the isotropy :func:`~hgutils.similarity.metric_isotropy` of every model's metric at the held-out
    points ``[M, P]``.

    MSA: ``1 - d_MSA`` with the uniform measure on the held-out points (``"MSA"``) or on the grid
    (``"MSA grid"``); CKA, SVCCA, RSA, Procrustes on the activations at the held-out points.
    """
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
