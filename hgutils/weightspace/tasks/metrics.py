r"""What a fitted meta-network is scored and read by: its metrics (:func:`compute_metrics`: accuracy, MSE,
Kendall tau), its outputs and embeddings for chosen networks, and the linear probe of an InfoNCE encoder
(:func:`linear_probe`, :func:`probe_metrics`: every encoder read at the same width, :data:`PROBE_COMPONENTS`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy.stats import kendalltau
from torch import Tensor

from hgutils.weightspace.metanets.base import MetaNet, to_device
from hgutils.weightspace.metanets.gth_gmn.config import frozen_head_components
from hgutils.weightspace.metanets.heads import predict


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


def _improvement(task: str) -> str:
    """How the validation score of ``task`` improves (:data:`hgutils.loop.IMPROVEMENTS`): absolute for
    accuracy (classification) and Kendall tau (accuracy prediction), relative for MSE and losses."""
    return "absolute" if task in ("classification", "accuracy") else "relative"


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


@torch.no_grad()
def probe_features(model: MetaNet, data: Any, idx: Any, batch_size: int = 128) -> Tensor:
    """What the linear probe reads for networks ``idx``: an InfoNCE-trained head's encoder output
    (:meth:`~hgutils.weightspace.metanets.heads.TaskHead.features`), else the model's embedding."""
    emb = embeddings(model, data, idx, batch_size)
    if model.task == "infonce" and getattr(model.head, "projection", None) is not None and not _two_stage(model):
        was = model.head.training
        model.head.eval()
        out = model.head.features(emb.to(_device_of(model))).cpu()
        model.head.train(was)
        return out
    return emb


def _two_stage(model: MetaNet) -> bool:
    return getattr(getattr(model, "cfg", None), "protocol", "") == "two_stage"


def linear_probe(
    train_x: Tensor,
    train_y: Tensor,
    test_x: Tensor,
    test_y: Tensor,
    ridge: float = 0.0,
    components: int | None = None,
) -> dict[str, float]:
    r"""Linear regression (with intercept) features -> targets, as DWSNets' probe (scikit-learn's
    ``LinearRegression``: least squares); test MSE, the floor ``mean_mse`` (the test MSE of predicting
    the training targets' mean) and ``probe_dim``, the width the regression read.

    ``ridge > 0`` adds :math:`\lambda n I` to :math:`X^\top X` (standardised inputs); ``components``
    first projects the features on their leading principal components (of the training features)
    when they are wider than that.
    """
    X, Xt = train_x.double(), test_x.double()
    mu = X.mean(0)
    X, Xt = X - mu, Xt - mu
    if components is not None and components < X.shape[1]:
        _, _, vh = torch.linalg.svd(X, full_matrices=False)
        X, Xt = X @ vh[:components].T, Xt @ vh[:components].T
    y = train_y.double().reshape(len(X), -1)
    ym = y.mean(0)
    yt = test_y.double().reshape(len(Xt), -1)
    if ridge > 0:
        sd = X.std(0).clamp_min(1e-8)
        X, Xt = X / sd, Xt / sd
        A = X.T @ X + ridge * len(X) * torch.eye(X.shape[1], dtype=X.dtype)
        beta = torch.linalg.solve(A, X.T @ (y - ym))
    else:
        beta = torch.linalg.lstsq(X, y - ym).solution
    pred = Xt @ beta + ym
    mse = float(((pred - yt) ** 2).mean())
    return {"mse": mse, "mean_mse": float(((ym - yt) ** 2).mean()), "probe_dim": int(X.shape[1])}


#: the width every encoder's linear probe reads (notebook 02's claims compare equal widths): DWSNets' 16-d
#: encoder output; a wider embedding (GTH-GMN's reconstruction-trained, frozen one) is read through its leading
#: 16 principal components of the training networks
PROBE_COMPONENTS = 16


def frozen_probe_components(model: MetaNet, n_train: int, target: Tensor) -> int:
    """Principal components of the *wide* probe of a two-stage (frozen) InfoNCE embedding, shown beside the
    equal-width one (:data:`PROBE_COMPONENTS`) and labelled: under ``head_networks_per_param`` the sizing
    rule :func:`~hgutils.weightspace.metanets.gth_gmn.config.frozen_head_components` for the probe's
    ``target.shape[-1]`` outputs, else the head's output width."""

    rule = getattr(model.cfg, "head_networks_per_param", None)
    if rule is None:
        return getattr(model.head.net[-1], "out_features", PROBE_COMPONENTS)
    k = 1 if target.dim() == 1 else int(target.shape[-1])
    return frozen_head_components(n_train, int(model.emb_mu.shape[0]), k, rule)


def probe_metrics(model: MetaNet, train_x: Tensor, train_y: Tensor, test_x: Tensor, test_y: Tensor) -> dict[str, float]:
    """The linear probe of an InfoNCE encoder (or of a frozen two-stage embedding) from its probe features
    (:func:`probe_features`) of the training and the test networks, at the equal width
    :data:`PROBE_COMPONENTS` (``mse``, ``mean_mse``, ``probe_dim``); for a frozen embedding whose sizing
    rule gives another width, that probe too, labelled ``wide_mse`` / ``wide_probe_dim``."""
    out = linear_probe(train_x, train_y, test_x, test_y, components=PROBE_COMPONENTS)
    if _two_stage(model):
        k = frozen_probe_components(model, len(train_x), train_y)
        if min(k, train_x.shape[1]) != out["probe_dim"]:
            wide = linear_probe(train_x, train_y, test_x, test_y, components=k)
            out.update(wide_mse=wide["mse"], wide_probe_dim=wide["probe_dim"])
    return out
