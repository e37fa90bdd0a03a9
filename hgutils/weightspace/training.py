"""The one training loop shared by every meta-network (GTH-GMN and all baselines).

:func:`fit` trains a :class:`hgutils.weightspace.metanets.base.MetaNet` on the networks ``train_idx``
of a prepared zoo (``data = model.prepare(zoo)``), with

* epochs of shuffled mini-batches (a seeded generator: same seed, same run on the same machine);
* the model's named loss terms weighted by ``model.loss_weights`` (GTH-GMN's auxiliary losses);
* two-stage optimisation: Adam on the Euclidean parameters; from epoch
  ``round(model.stage1_frac * epochs)`` on, also geoopt ``RiemannianAdam(amsgrad=True)`` on the
  model's ``ManifoldParameter`` s (models without any simply never enter stage 2);
* early stopping on the validation score (accuracy for classification, MSE for regression,
  Kendall tau for accuracy prediction, the InfoNCE loss for the encoder mode), best weights
  restored at the end;
* a progress bar (:func:`hgutils.repro.progress`), and a checkpoint after every epoch
  (:func:`hgutils.repro.save_checked`) from which an interrupted run resumes exactly.

Metrics (:func:`compute_metrics`): accuracy, MSE, and Kendall tau (scipy) of predictions vs targets.
For the InfoNCE encoder mode, :func:`linear_probe` fits a ridge regression from embeddings to targets.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.stats import kendalltau
from torch import Tensor

from hgutils.repro import config_hash, load_checked, progress, save_checked
from hgutils.weightspace.metanets.base import MetaNet, to_device
from hgutils.weightspace.metanets.heads import predict

log = logging.getLogger("hgutils")


@dataclass(frozen=True)
class TrainConfig:
    """Training-loop settings (the same for every model: same budget, same tuning effort)."""

    epochs: int = 30  # maximum epochs
    batch_size: int = 32  # networks per step
    lr: float = 1e-3  # Adam learning rate (Euclidean parameters)
    weight_decay: float = 0.0  # Adam weight decay
    patience: int = 10  # early stopping: epochs without validation improvement
    seed: int = 0  # shuffling / augmentation / sampling seed
    grad_clip: float | None = 5.0  # global gradient-norm clip (None = off)
    max_steps: int | None = None  # hard cap on optimiser steps (smoke tests)
    eval_batch_size: int = 128  # networks per evaluation batch
    temperature: float = 0.1  # InfoNCE temperature
    aug_noise: float = 0.2  # InfoNCE views: Gaussian weight noise sigma (DWSNets protocol [2nd])
    aug_mask: float = 0.5  # InfoNCE views: masking probability (DWSNets protocol [2nd])
    checkpoint_path: str | None = None  # save after each epoch / resume from here (None = off)
    restore_best: bool = True  # end with the weights of the best validation epoch (else: the last)
    device: str = "cpu"  # "cpu" or "cuda": model and each batch are moved there (data stays where it is)


@dataclass
class FitResult:
    """What :func:`fit` returns: per-epoch history, the best epoch, and final metrics per split."""

    history: list[dict[str, float]] = field(default_factory=list)
    best_epoch: int = -1
    best_score: float = float("nan")
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds_per_epoch: float = float("nan")
    steps: int = 0
    resumed_from: int | None = None


# ------------------------------------------------------------------------------------------ metrics
def kendall_tau(pred: Tensor | np.ndarray, target: Tensor | np.ndarray) -> float:
    """Kendall's tau-b between predictions and targets (scipy); NaN when either is constant."""
    p = np.asarray(pred, dtype=np.float64).ravel()
    t = np.asarray(target, dtype=np.float64).ravel()
    if p.size != t.size:
        raise ValueError(f"pred and target must have the same size; got {p.size} and {t.size}")
    return float(kendalltau(p, t).statistic)


def compute_metrics(task: str, out: Tensor, target: Tensor) -> dict[str, float]:
    """Metrics of head outputs ``out`` against targets: accuracy (classification), MSE (regression,
    accuracy prediction), Kendall tau (accuracy prediction, and 1-D regression)."""
    pred = predict(task, out.detach())
    if task == "classification":
        return {"accuracy": float((pred == target).double().mean())}
    if task in ("regression", "accuracy"):
        t = target.to(pred.dtype).view_as(pred)
        res = {"mse": float(((pred - t) ** 2).mean())}
        if pred.dim() == 1 or pred.shape[-1] == 1:
            res["kendall_tau"] = kendall_tau(pred.cpu(), t.cpu())
        return res
    return {}


def _score(task: str, metrics: dict[str, float]) -> float:
    """Validation score, higher is better."""
    if task == "classification":
        return metrics["accuracy"]
    if task == "accuracy":
        tau = metrics.get("kendall_tau", float("nan"))
        return -metrics["mse"] if math.isnan(tau) else tau
    if task == "regression":
        return -metrics["mse"]
    return -metrics["loss"]


# ------------------------------------------------------------------------------------------ helpers
def _batches(n_idx: Tensor, batch_size: int) -> list[Tensor]:
    return [n_idx[i : i + batch_size] for i in range(0, len(n_idx), batch_size)]


def _as_index(idx: Any) -> Tensor:
    t = torch.as_tensor(idx, dtype=torch.long).flatten()
    if t.numel() == 0:
        raise ValueError("an index set (train/val/test) is empty")
    return t


def _device_of(model: MetaNet) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def predict_outputs(model: MetaNet, data: Any, idx: Any, batch_size: int = 128) -> Tensor:
    """Head outputs for the networks ``idx`` (eval mode, on the model's device; returned on the CPU)."""
    was = model.training
    model.eval()
    dev = _device_of(model)
    outs = [model(to_device(data[b], dev)).cpu() for b in _batches(_as_index(idx), batch_size)]
    model.train(was)
    return torch.cat(outs, 0)


@torch.no_grad()
def embeddings(model: MetaNet, data: Any, idx: Any, batch_size: int = 128) -> Tensor:
    """Trajectory embeddings ``[n, D]`` for the networks ``idx`` (eval mode)."""
    was = model.training
    model.eval()
    dev = _device_of(model)
    outs = [model.embed(to_device(data[b], dev)).cpu() for b in _batches(_as_index(idx), batch_size)]
    model.train(was)
    return torch.cat(outs, 0)


def linear_probe(
    train_emb: Tensor, train_y: Tensor, test_emb: Tensor, test_y: Tensor, ridge: float = 1e-3
) -> dict[str, float]:
    r"""Ridge regression (with intercept, standardised inputs) embeddings -> targets; test MSE.

    :math:`\beta = (X^\top X + \lambda I)^{-1} X^\top y` on the training embeddings.
    """
    X, Xt = train_emb.double(), test_emb.double()
    mu, sd = X.mean(0), X.std(0).clamp_min(1e-8)
    X, Xt = (X - mu) / sd, (Xt - mu) / sd
    y = train_y.double().reshape(len(X), -1)
    ym = y.mean(0)
    A = X.T @ X + ridge * len(X) * torch.eye(X.shape[1], dtype=X.dtype)
    beta = torch.linalg.solve(A, X.T @ (y - ym))
    pred = Xt @ beta + ym
    yt = test_y.double().reshape(len(Xt), -1)
    return {"mse": float(((pred - yt) ** 2).mean())}


def _evaluate(model: MetaNet, data: Any, target: Tensor | None, idx: Tensor, cfg: TrainConfig) -> dict[str, float]:
    if model.task == "infonce":
        was = model.training
        model.eval()
        g = torch.Generator().manual_seed(cfg.seed + 12345)  # fixed views: comparable across epochs
        losses, n = 0.0, 0
        with torch.no_grad():
            for b in _batches(idx, cfg.eval_batch_size):
                if len(b) < 2:
                    continue
                batch = to_device(data[b], _device_of(model))
                terms = MetaNet.loss_terms(model, batch, None, 1.0, g, cfg.temperature, cfg.aug_noise, cfg.aug_mask)
                losses += float(terms["task"]) * len(b)
                n += len(b)
        model.train(was)
        return {"loss": losses / max(n, 1)}
    out = predict_outputs(model, data, idx, cfg.eval_batch_size)
    return compute_metrics(model.task, out, target[idx])


# ------------------------------------------------------------------------------------------ the loop
def fit(
    model: MetaNet,
    data: Any,
    target: Tensor | None,
    train_idx: Any,
    val_idx: Any,
    test_idx: Any | None = None,
    cfg: TrainConfig | None = None,
    desc: str | None = None,
) -> FitResult:
    """Train ``model`` on ``data[train_idx]`` (module docstring); returns a :class:`FitResult`.

    Parameters
    ----------
    model : a MetaNet (its ``task`` decides the loss and metrics).
    data : the prepared container (``model.prepare(zoo)``), indexable by network.
    target : ``[N]`` labels / ``[N, k]`` regression targets / ``[N]`` accuracies; may be ``None``
        for the InfoNCE encoder mode.
    train_idx, val_idx, test_idx : network indices of the splits.
    """
    cfg = cfg or TrainConfig()
    if not isinstance(model, MetaNet):
        raise ValueError(f"model must be a MetaNet; got {type(model).__name__}")
    tr, va = _as_index(train_idx), _as_index(val_idx)
    te = _as_index(test_idx) if test_idx is not None else None
    n = len(data)
    for name, ix in (("train", tr), ("val", va), ("test", te)):
        if ix is not None and (int(ix.min()) < 0 or int(ix.max()) >= n):
            raise ValueError(f"{name} indices must lie in [0, {n}); got range [{int(ix.min())}, {int(ix.max())}]")
    if model.task != "infonce":
        if target is None or len(target) != n:
            raise ValueError(
                f"target must have one entry per network ({n}); got {None if target is None else len(target)}"
            )
    if cfg.epochs < 1 or cfg.batch_size < 1:
        raise ValueError(f"epochs and batch_size must be >= 1; got {cfg.epochs}, {cfg.batch_size}")

    import geoopt

    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    dev = torch.device(cfg.device)
    model.to(dev)
    euclid, manifold = model.param_groups()
    opt_e = torch.optim.Adam(euclid, lr=cfg.lr, weight_decay=cfg.weight_decay)
    opt_r = (
        geoopt.optim.RiemannianAdam(manifold, lr=getattr(model, "riemannian_lr", cfg.lr), amsgrad=True)
        if manifold
        else None
    )
    stage2_epoch = round(getattr(model, "stage1_frac", 0.0) * cfg.epochs)
    steps_per_epoch = math.ceil(len(tr) / cfg.batch_size)
    total_steps = cfg.max_steps or cfg.epochs * steps_per_epoch
    res = FitResult()
    best_state, bad, start_epoch = copy.deepcopy(model.state_dict()), 0, 0
    res.best_score = -math.inf

    ckpt = Path(cfg.checkpoint_path) if cfg.checkpoint_path else None
    key = config_hash({"cfg": asdict(cfg), "model": type(model).__name__, "n": n, "train": tr, "val": va})
    if ckpt is not None and ckpt.exists():
        try:
            st = load_checked(ckpt)
            if st.get("key") != key:
                raise ValueError("checkpoint belongs to another configuration")
            model.load_state_dict(st["model"])
            opt_e.load_state_dict(st["opt_e"])
            if opt_r is not None and st["opt_r"] is not None:
                opt_r.load_state_dict(st["opt_r"])
            best_state, bad, res.best_score = st["best_state"], st["bad"], st["best_score"]
            res.best_epoch, res.history, res.steps = st["best_epoch"], st["history"], st["steps"]
            start_epoch = st["epoch"] + 1
            torch.set_rng_state(st["rng"])
            gen.set_state(st["gen"])
            res.resumed_from = start_epoch
            log.info("resumed %s from epoch %d", ckpt, start_epoch)
        except (ValueError, KeyError, RuntimeError) as exc:
            log.warning("checkpoint %s not usable (%s); starting fresh", ckpt, exc)
            start_epoch = 0

    times = []
    bar = progress(
        range(start_epoch, cfg.epochs), desc=desc or type(model).__name__, total=cfg.epochs, initial=start_epoch
    )
    stopped = (
        start_epoch >= cfg.epochs or bad >= cfg.patience or (cfg.max_steps is not None and res.steps >= cfg.max_steps)
    )
    for epoch in bar:
        if stopped:
            break
        t0 = time.perf_counter()
        model.train()
        perm = tr[torch.randperm(len(tr), generator=gen)]
        sums: dict[str, float] = {}
        nb = 0
        for b in _batches(perm, cfg.batch_size):
            if model.task == "infonce" and len(b) < 2:
                continue
            batch = to_device(model.train_transform(data[b], gen), dev)
            prog = res.steps / max(total_steps, 1)
            model.set_progress(prog)
            terms = model.loss_terms(
                batch,
                None if target is None else target[b].to(dev),
                prog,
                gen,
                cfg.temperature,
                cfg.aug_noise,
                cfg.aug_mask,
            )
            loss = sum(model.loss_weights.get(k, 0.0) * v for k, v in terms.items())
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"non-finite loss at step {res.steps}: { {k: float(v) for k, v in terms.items()} }"
                )
            opt_e.zero_grad(set_to_none=True)
            if opt_r is not None:
                opt_r.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(euclid, cfg.grad_clip)
            opt_e.step()
            if opt_r is not None and epoch >= stage2_epoch:
                opt_r.step()
            res.steps += 1
            nb += 1
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach())
            sums["loss"] = sums.get("loss", 0.0) + float(loss.detach())
            if cfg.max_steps is not None and res.steps >= cfg.max_steps:
                stopped = True
                break
        val = _evaluate(model, data, target, va, cfg)
        score = _score(model.task, val)
        row = {
            "epoch": epoch,
            **{f"train_{k}": v / max(nb, 1) for k, v in sums.items()},
            **{f"val_{k}": v for k, v in val.items()},
        }
        res.history.append(row)
        if score > res.best_score or res.best_epoch < 0:
            res.best_score, res.best_epoch, bad = score, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
        times.append(time.perf_counter() - t0)
        if ckpt is not None:
            save_checked(
                ckpt,
                {
                    "key": key,
                    "epoch": epoch,
                    "model": model.state_dict(),
                    "opt_e": opt_e.state_dict(),
                    "opt_r": None if opt_r is None else opt_r.state_dict(),
                    "best_state": best_state,
                    "bad": bad,
                    "best_score": res.best_score,
                    "best_epoch": res.best_epoch,
                    "history": res.history,
                    "steps": res.steps,
                    "rng": torch.get_rng_state(),
                    "gen": gen.get_state(),
                },
            )
        if bad >= cfg.patience:
            stopped = True
    if cfg.restore_best:
        model.load_state_dict(best_state)
    res.seconds_per_epoch = float(np.mean(times)) if times else float("nan")
    for name, ix in (("train", tr), ("val", va), ("test", te)):
        if ix is not None:
            res.metrics[name] = _evaluate(model, data, target, ix, cfg)
    if model.task == "infonce" and target is not None and te is not None:
        res.metrics["test"].update(
            linear_probe(embeddings(model, data, tr), target[tr], embeddings(model, data, te), target[te])
        )
    return res


def train_on_zoo(
    model: MetaNet,
    zoo: Any,
    target_key: str | None,
    train_idx: Any,
    val_idx: Any,
    test_idx: Any | None = None,
    cfg: TrainConfig | None = None,
) -> FitResult:
    """Convenience: ``fit(model, model.prepare(zoo), zoo.meta[target_key], ...)``."""
    target = None
    if target_key is not None:
        if target_key not in zoo.meta:
            raise ValueError(f"zoo.meta has no {target_key!r}; available: {sorted(zoo.meta)}")
        target = zoo.meta[target_key]
    return fit(model, model.prepare(zoo), target, train_idx, val_idx, test_idx, cfg)
