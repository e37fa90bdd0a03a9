"""Training meta-networks (GTH-GMN and every baseline) on a zoo, through the one loop :func:`hgutils.loop.train`.

:func:`fit` trains a :class:`hgutils.weightspace.metanets.base.MetaNet` on the networks ``train_idx``
of a prepared zoo (``data = model.prepare(zoo)``), as up to two tasks of the loop:

* :class:`MetaNetTask` -- the model's task objective: shuffled mini-batches (a seeded generator:
  same seed, same run on the same machine), the named loss terms weighted by ``model.loss_weights``,
  Adam on the Euclidean parameters and -- from epoch ``round(model.stage1_frac * epochs)`` on --
  geoopt ``RiemannianAdam(amsgrad=True)`` on the model's ``ManifoldParameter`` s; early stopping
  on the validation score (accuracy for classification, MSE for regression, Kendall tau for
  accuracy prediction, the InfoNCE loss for the encoder mode), best weights restored;
* :class:`ReconstructionTask` -- GTH-GMN's self-supervised stage 1 (``protocol`` ``"two_stage"``
  or ``"finetune"``), scored on the validation networks' reconstruction loss; then for
  ``"two_stage"`` the stage-2 refined embeddings are frozen and :class:`EmbeddingHeadTask` trains
  only the head on them.

Every stage records its learnability check (``FitResult.gates``), a budget in optimiser steps
(``TrainConfig.steps``) or epochs, a progress bar and, for :class:`MetaNetTask`, a checkpoint after
every epoch from which an interrupted run resumes exactly.

Metrics (:func:`compute_metrics`): accuracy, MSE, and Kendall tau (scipy) of predictions vs targets.
For the InfoNCE encoder mode, :func:`linear_probe` fits a linear regression from the encoder output to targets.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import geoopt
import numpy as np
import torch
from scipy.stats import kendalltau
from torch import Tensor

from hgutils.loop import Budget, GateResult, LearnabilityGate, TrainLog, TrainTask, combine_gates, train
from hgutils.repro import config_hash
from hgutils.weightspace.augment import INRAugmentation, augment_weight_data
from hgutils.weightspace.metanets.base import MetaNet, to_device
from hgutils.weightspace.metanets.gth_gmn.config import frozen_head_components
from hgutils.weightspace.metanets.heads import predict, task_loss

if TYPE_CHECKING:
    from hgutils.weightspace.zoo.containers import Zoo

log = logging.getLogger("hgutils")


#: Euclidean optimisers a :class:`TrainConfig` can ask for
OPTIMIZERS: tuple[str, ...] = ("adam", "adamw")


@dataclass(frozen=True)
class TrainConfig:
    """Training-loop settings (the same for every model: same budget, same tuning effort)."""

    epochs: int = 30  # maximum epochs (ignored when ``steps`` is set)
    steps: int | None = None  # budget in optimiser steps (epochs follow from it; evaluation once per epoch)
    batch_size: int = 32  # networks per step
    lr: float = 1e-3  # learning rate (Euclidean parameters)
    weight_decay: float = 0.0  # weight decay (Adam: L2 in the gradient; AdamW: decoupled)
    optimizer: str = "adam"  # "adam" | "adamw" (Euclidean parameters)
    amsgrad: bool = False  # the AMSGrad variant of Adam / AdamW
    warmup_steps: int = 0  # linear learning-rate warmup from 0 over this many optimiser steps
    patience: int = 10  # plateau rule: epochs in a row without an improvement above min_delta (hgutils.loop)
    min_delta: float | None = None  # plateau rule's minimum improvement (None: hgutils.loop.DEFAULT_MIN_DELTA)
    min_epochs: int = 0  # the plateau rule never stops a run before this many epochs (a flat start)
    seed: int = 0  # shuffling / augmentation / sampling seed
    grad_clip: float | None = 5.0  # global gradient-norm clip (None = off)
    max_steps: int | None = None  # hard cap on optimiser steps (kept for old callers; ``steps`` is the budget)
    eval_batch_size: int = 128  # networks per evaluation batch
    temperature: float = 0.1  # InfoNCE temperature
    aug_shift: float = 0.2  # InfoNCE view: each tensor shifted by this times its std (DWSNets' noise_scale)
    aug_drop: float = 0.5  # InfoNCE view: dropout probability, survivors scaled by 1/(1 - p) (DWSNets' drop_rate)
    checkpoint_path: str | None = None  # save after each epoch / resume from here (None = off)
    restore_best: bool = True  # end with the weights of the best validation epoch (else: the last)
    device: str = "cpu"  # "cpu" or "cuda": model and each batch are moved there (data stays where it is)
    probe_size: int = 256  # training networks on which the loss is measured before/after (learnability check)
    augment: INRAugmentation | None = None  # weight-space augmentation of every training batch (None: off)

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {self.optimizer!r}")
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0; got {self.warmup_steps}")
        if self.augment is not None and not isinstance(self.augment, INRAugmentation):
            raise ValueError(f"augment must be an INRAugmentation or None; got {self.augment!r}")

    def make_optimizer(self, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
        """The Euclidean optimiser of these settings (Adam or AdamW, ``amsgrad``, weight decay)."""
        cls = torch.optim.AdamW if self.optimizer == "adamw" else torch.optim.Adam
        return cls(params, lr=self.lr, weight_decay=self.weight_decay, amsgrad=self.amsgrad)

    def make_warmup(self, opt: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LambdaLR | None:
        r"""Linear warmup :math:`\mathrm{lr}\cdot\min(1, (s + 1)/w)` over ``warmup_steps`` steps (None: off)."""
        if self.warmup_steps <= 0:
            return None
        w = self.warmup_steps
        return torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / w))

    def budget(self) -> Budget:
        """The loop's :class:`hgutils.loop.Budget` for these settings."""
        rule = {"patience": self.patience, "min_delta": self.min_delta, "min_epochs": self.min_epochs}
        if self.steps is not None:
            return Budget(max_steps=self.steps, restore_best=self.restore_best, **rule)
        return Budget(epochs=self.epochs, max_steps=self.max_steps, restore_best=self.restore_best, **rule)


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
    log: TrainLog | None = None  # the loop's record: curves, probes before/after (learnability check)
    gates: dict[str, GateResult] = field(default_factory=dict)  # learnability checks, one per training stage
    pretrain_log: TrainLog | None = None  # two-stage protocol: the self-supervised stage
    recon: dict[str, float] = field(default_factory=dict)  # two-stage: reconstruction metrics (validation)

    stages: dict[str, TrainLog] = field(default_factory=dict)  # per stage ("reconstruction", "task"): its loop record

    @property
    def stopped(self) -> dict[str, str]:
        """Per stage, why the loop stopped, in words (:meth:`hgutils.loop.TrainLog.describe`)."""
        return {k: lg.describe() for k, lg in self.stages.items()}

    @property
    def capped(self) -> bool:
        """True when a stage's budget ended it while its validation score was still improving by more
        than the plateau rule's ``min_delta`` (:attr:`hgutils.loop.TrainLog.capped`): the run had not
        converged, and a claim resting on it must say so."""
        return any(lg.capped for lg in self.stages.values())

    def stage_columns(self) -> dict[str, Any]:
        """Per stage, the results-row columns ``<stage>_stop`` (plateau, budget, diverged, finished),
        ``<stage>_best_epoch``, ``<stage>_window_gain`` (the last patience window's improvement) and
        ``<stage>_capped``."""
        out: dict[str, Any] = {}
        for k, lg in self.stages.items():
            out.update(
                {
                    f"{k}_stop": lg.stopped,
                    f"{k}_best_epoch": lg.best_epoch,
                    f"{k}_window_gain": lg.window_gain,
                    f"{k}_capped": lg.capped,
                }
            )
        return out

    @property
    def diverged(self) -> str:
        """Where a non-finite loss ended a stage early (``"stage: epoch e, step s: why"``; ``""`` when
        none did): that stage kept its best validated epoch (:func:`hgutils.loop.train`)."""
        logs = {"reconstruction": self.pretrain_log, "task": None if self.log is self.pretrain_log else self.log}
        return "; ".join(f"{k}: {lg.diverged}" for k, lg in logs.items() if lg is not None and lg.diverged)

    @property
    def trained(self) -> bool:
        """True when every stage passed its learnability check (and at least one was checked)."""
        return bool(self.gates) and all(g.trained for g in self.gates.values())

    def gate_summary(self) -> dict[str, Any]:
        """``{"trained": bool, "reason": "stage: reason; ..."}`` for the claims ledger."""
        return {"trained": self.trained, "reason": combine_gates(self.gates)["reason"] if self.gates else ""}


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
                terms = MetaNet.loss_terms(model, batch, None, 1.0, g, cfg.temperature, cfg.aug_shift, cfg.aug_drop)
                losses += float(terms["task"]) * len(b)
                n += len(b)
        model.train(was)
        return {"loss": losses / max(n, 1)}
    out = predict_outputs(model, data, idx, cfg.eval_batch_size)
    return compute_metrics(model.task, out, target[idx])


# ------------------------------------------------------------------------------------------ the task
def _grad_norm(params: list[torch.nn.Parameter]) -> Tensor:
    """The global 2-norm of the gradients of ``params`` (0 when none has one)."""
    grads = [p.grad for p in params if p.grad is not None]
    return torch.nn.utils.get_total_norm(grads) if grads else torch.zeros(())


MAX_SKIPPED_IN_A_ROW = 20  # consecutive steps with non-finite gradients that end a run as diverged


class MetaNetTask(TrainTask):
    """A :class:`~hgutils.weightspace.metanets.base.MetaNet` on a prepared zoo, for :func:`hgutils.loop.train`.

    One epoch = shuffled mini-batches of the training networks (a seeded generator, also used for
    augmentation and negative sampling); one step = the model's weighted loss terms, backward,
    gradient clipping, Adam on the Euclidean parameters and -- from epoch
    ``round(model.stage1_frac * epochs)`` on -- ``RiemannianAdam(amsgrad=True)`` on the
    ``ManifoldParameter`` s; evaluation = the validation metrics of the model's task.
    """

    def __init__(
        self, model: MetaNet, data: Any, target: Tensor | None, train_idx: Tensor, val_idx: Tensor, cfg: TrainConfig
    ) -> None:

        self.model, self.data, self.target, self.tr, self.va, self.cfg = model, data, target, train_idx, val_idx, cfg
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.dev = torch.device(cfg.device)
        model.to(self.dev)
        self.euclid, manifold = model.param_groups()
        self.opt_e = cfg.make_optimizer(self.euclid)
        self.warmup = cfg.make_warmup(self.opt_e)
        r_lr = getattr(model, "riemannian_lr", cfg.lr)
        self.opt_r = geoopt.optim.RiemannianAdam(manifold, lr=r_lr, amsgrad=True) if manifold else None
        self.steps_per_epoch = math.ceil(len(train_idx) / cfg.batch_size)
        self.stage2_epoch = round(getattr(model, "stage1_frac", 0.0) * cfg.budget().n_epochs(self.steps_per_epoch))
        self.epoch = 0
        self.skipped_in_a_row = 0  # consecutive steps skipped for a non-finite gradient

    @property
    def improvement(self) -> str:  # type: ignore[override]
        """The plateau rule's units: absolute for accuracy and Kendall tau, relative for MSE and InfoNCE."""
        return _improvement(self.model.task)

    def batches(self, epoch: int) -> Iterable[Tensor]:
        self.epoch = epoch
        self.model.train()
        perm = self.tr[torch.randperm(len(self.tr), generator=self.gen)]
        for b in _batches(perm, self.cfg.batch_size):
            if self.model.task == "infonce" and len(b) < 2:
                continue
            yield b

    def _terms(self, b: Tensor, progress: float) -> tuple[dict[str, Tensor], dict[str, float]]:
        """The named loss terms of batch ``b`` and their weights (the model's task objective)."""
        model, cfg = self.model, self.cfg
        batch = self.data[b]
        if cfg.augment is not None:  # raw weights augmented, then normalised as before (training batches only)
            batch = augment_weight_data(batch, self.gen, cfg.augment)
        batch = to_device(model.train_transform(batch, self.gen), self.dev)
        model.set_progress(progress)
        target = None if self.target is None else self.target[b].to(self.dev)
        terms = model.loss_terms(batch, target, progress, self.gen, cfg.temperature, cfg.aug_shift, cfg.aug_drop)
        return terms, model.loss_weights

    def _riemannian_now(self) -> bool:
        """Whether the Riemannian optimiser steps this epoch (the joint protocol's stage 2)."""
        return self.epoch >= self.stage2_epoch

    def step(self, b: Tensor, progress: float) -> dict[str, float]:
        terms, weights = self._terms(b, progress)
        loss = sum(weights.get(k, 0.0) * v for k, v in terms.items())
        if not torch.isfinite(loss):
            values = {k: float(torch.as_tensor(v).detach()) for k, v in terms.items()}
            raise FloatingPointError(f"non-finite loss: {values}")
        self.opt_e.zero_grad(set_to_none=True)
        if self.opt_r is not None:
            self.opt_r.zero_grad(set_to_none=True)
        loss.backward()
        out = {k: float(torch.as_tensor(v).detach()) for k, v in terms.items()}
        out["loss"] = float(loss.detach())
        norm_e = _grad_norm(self.euclid)  # what the clip reads (clip_grad_norm_'s own first half)
        norm_r = _grad_norm([p for g in self.opt_r.param_groups for p in g["params"]]) if self.opt_r else None
        if not bool(torch.isfinite(norm_e)) or (norm_r is not None and not bool(torch.isfinite(norm_r))):
            return self._skip(out)
        self.skipped_in_a_row = 0
        if self.cfg.grad_clip is not None:
            torch.nn.utils.clip_grads_with_norm_(self.euclid, self.cfg.grad_clip, norm_e)
        self.opt_e.step()
        if self.warmup is not None:
            self.warmup.step()
        if self.opt_r is not None and self._riemannian_now():
            self.opt_r.step()
        return out

    def _skip(self, out: dict[str, float]) -> dict[str, float]:
        """Drop this step's non-finite gradients without an update, as a loss scaler does (a finite loss can
        still back-propagate an infinite derivative, e.g. of a square root or arcosh at the edge of its
        domain; the epoch
        row's ``skipped`` is the share of such steps); :data:`MAX_SKIPPED_IN_A_ROW` in a row end the
        run as diverged (:func:`hgutils.loop.train`)."""
        self.skipped_in_a_row += 1
        if self.skipped_in_a_row >= MAX_SKIPPED_IN_A_ROW:
            raise FloatingPointError(f"non-finite gradients in {self.skipped_in_a_row} consecutive steps")
        log.debug("skipped a step with non-finite gradients (loss %.4g)", out["loss"])
        return {**out, "skipped": 1.0}

    def evaluate(self) -> dict[str, float]:
        return _evaluate(self.model, self.data, self.target, self.va, self.cfg)

    def probe(self) -> dict[str, float]:
        """The task loss (and accuracy) on the first ``cfg.probe_size`` training networks, eval mode."""
        idx = self.tr[: self.cfg.probe_size]
        if self.model.task == "infonce":
            return {"loss": _evaluate(self.model, self.data, None, idx, self.cfg)["loss"]}
        out = predict_outputs(self.model, self.data, idx, self.cfg.eval_batch_size)
        res = {"loss": float(task_loss(self.model.task, out, self.target[idx]))}
        if self.model.task == "classification":
            res["accuracy"] = compute_metrics("classification", out, self.target[idx])["accuracy"]
        return res

    def score(self, metrics: dict[str, float]) -> float:
        return _score(self.model.task, metrics)

    def state_dict(self) -> dict[str, Any]:
        return {
            "model": self.model.state_dict(),
            "opt_e": self.opt_e.state_dict(),
            "warmup": None if self.warmup is None else self.warmup.state_dict(),
            "opt_r": None if self.opt_r is None else self.opt_r.state_dict(),
            "rng": torch.get_rng_state(),
            "gen": self.gen.get_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.opt_e.load_state_dict(state["opt_e"])
        if self.warmup is not None and state.get("warmup") is not None:
            self.warmup.load_state_dict(state["warmup"])
        if self.opt_r is not None and state["opt_r"] is not None:
            self.opt_r.load_state_dict(state["opt_r"])
        torch.set_rng_state(state["rng"])
        self.gen.set_state(state["gen"])

    def snapshot(self) -> dict[str, Tensor]:
        return copy.deepcopy(self.model.state_dict())

    def restore(self, snapshot: dict[str, Tensor]) -> None:
        self.model.load_state_dict(snapshot)


class ReconstructionTask(MetaNetTask):
    """Stage 1 of the two-stage protocol: the model's self-supervised reconstruction objective
    (``model.pretrain_terms``, weighted by ``model.recon_weights()``) on the training networks; the
    task head is not trained. Validation score and probe: the deterministic full-graph
    reconstruction loss (link + magnitude + sign) without refinement."""

    improvement = "relative"  # a loss

    def _terms(self, b: Tensor, progress: float) -> tuple[dict[str, Tensor], dict[str, float]]:
        batch = to_device(self.data[b], self.dev)
        return self.model.pretrain_terms(batch, progress, self.gen), self.model.recon_weights()

    def _riemannian_now(self) -> bool:
        return True  # the base coordinates are refined from the first step

    def _recon_loss(self, idx: Tensor) -> dict[str, float]:
        """The model's full-graph reconstruction loss (``model.recon_loss``) averaged over ``idx``."""
        was = self.model.training
        self.model.eval()
        tot: dict[str, float] = {}
        n = 0
        for b in _batches(idx, self.cfg.eval_batch_size):
            parts = self.model.recon_loss(to_device(self.data[b], self.dev))
            for k, v in parts.items():
                tot[k] = tot.get(k, 0.0) + v * len(b)
            n += len(b)
        self.model.train(was)
        return {k: v / n for k, v in tot.items()}

    def evaluate(self) -> dict[str, float]:
        return self._recon_loss(self.va)

    def score(self, metrics: dict[str, float]) -> float:
        return -metrics["loss"]

    def probe(self) -> dict[str, float]:
        return {"loss": self._recon_loss(self.tr[: self.cfg.probe_size])["loss"]}


class EmbeddingHeadTask(TrainTask):
    """The supervised stage of the two-stage protocol: a model's task head on fixed, standardised
    embeddings ``emb [N, D]`` (Adam on the head's parameters only)."""

    def __init__(
        self, model: MetaNet, emb: Tensor, target: Tensor, train_idx: Tensor, val_idx: Tensor, cfg: TrainConfig
    ) -> None:
        self.model, self.emb, self.target, self.tr, self.va, self.cfg = model, emb, target, train_idx, val_idx, cfg
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.opt = torch.optim.Adam(model.head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.steps_per_epoch = math.ceil(len(train_idx) / cfg.batch_size)
        self.improvement = _improvement(model.task)

    def batches(self, epoch: int) -> Iterable[Tensor]:
        self.model.head.train()
        return _batches(self.tr[torch.randperm(len(self.tr), generator=self.gen)], self.cfg.batch_size)

    def step(self, b: Tensor, progress: float) -> dict[str, float]:
        loss = task_loss(self.model.task, self.model.head(self.emb[b]), self.target[b])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return {"task": float(loss.detach())}

    def _out(self, idx: Tensor) -> Tensor:
        was = self.model.head.training
        self.model.head.eval()
        with torch.no_grad():
            out = self.model.head(self.emb[idx])
        self.model.head.train(was)
        return out

    def evaluate(self) -> dict[str, float]:
        return compute_metrics(self.model.task, self._out(self.va), self.target[self.va])

    def score(self, metrics: dict[str, float]) -> float:
        return _score(self.model.task, metrics)

    def probe(self) -> dict[str, float]:
        idx = self.tr[: self.cfg.probe_size]
        out = self._out(idx)
        res = {"loss": float(task_loss(self.model.task, out, self.target[idx]))}
        if self.model.task == "classification":
            res["accuracy"] = compute_metrics("classification", out, self.target[idx])["accuracy"]
        return res

    def state_dict(self) -> dict[str, Any]:
        return {"head": self.model.head.state_dict(), "opt": self.opt.state_dict(), "gen": self.gen.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.head.load_state_dict(state["head"])
        self.opt.load_state_dict(state["opt"])
        self.gen.set_state(state["gen"])

    def snapshot(self) -> dict[str, Tensor]:
        return copy.deepcopy(self.model.head.state_dict())

    def restore(self, snapshot: dict[str, Tensor]) -> None:
        self.model.head.load_state_dict(snapshot)


def _chance(task: str, target: Tensor | None, idx: Tensor) -> float | None:
    """Chance-level training accuracy for classification (the majority class share), else None."""
    if task != "classification" or target is None:
        return None
    return float(torch.bincount(target[idx].long()).max()) / len(idx)


def fit(
    model: MetaNet,
    data: Any,
    target: Tensor | None,
    train_idx: Any,
    val_idx: Any,
    test_idx: Any | None = None,
    cfg: TrainConfig | None = None,
    desc: str | None = None,
    gate: LearnabilityGate | None = None,
    pretrain_cache: dict[str, Any] | None = None,
) -> FitResult:
    """Train ``model`` on ``data[train_idx]`` with :func:`hgutils.loop.train`; returns a :class:`FitResult`.

    Models with ``cfg.protocol`` ``"two_stage"`` or ``"finetune"`` (GTH-GMN) first train their
    self-supervised reconstruction objective (:class:`ReconstructionTask`); then, for
    ``"two_stage"``, their embeddings of every network are computed once (with the stage-2
    refinement), standardised with the training networks' statistics and frozen, and only the head
    is trained (:class:`EmbeddingHeadTask`; InfoNCE encoders skip it: the linear probe reads the
    embeddings); for ``"finetune"`` the whole model is then trained on the task. Every stage runs
    through the one loop with the same step budget and records its learnability check
    (``FitResult.gates``, ``gate`` = the thresholds). ``pretrain_cache`` (a dict kept by the caller)
    shares stage 1 between models that differ only in their stage-2 settings (``refine_*``): the
    second one starts from the first one's pretrained weights instead of training them again.

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
    if cfg.epochs < 1 or cfg.batch_size < 1 or (cfg.steps is not None and cfg.steps < 1):
        raise ValueError(f"epochs, steps and batch_size must be >= 1; got {cfg.epochs}, {cfg.steps}, {cfg.batch_size}")
    gate = gate or LearnabilityGate()
    model.fit_inputs(data, tr)  # input statistics of the training networks (GMN's per-layer standardisation)
    chance = _chance(model.task, target, tr)
    protocol = getattr(getattr(model, "cfg", None), "protocol", "joint")
    desc = desc or type(model).__name__
    key = config_hash({"cfg": asdict(cfg), "model": type(model).__name__, "n": n, "train": tr, "val": va})
    res = FitResult()
    if protocol in ("two_stage", "finetune"):
        # stage 1 trains to its own plateau on the validation reconstruction loss (the plateau rule, with the
        # run's patience and min_delta); its ceiling is the run's budget, or ``pretrain_steps`` optimiser steps
        # when set. No minimum epochs: a reconstruction loss falls from its first step, the flat start the
        # minimum guards against is a task stage's score at chance. On the first ``pretrain_networks``
        # training networks when set
        pre_steps = model.cfg.pretrain_steps
        if pre_steps is not None and cfg.steps is not None:
            pre_steps = min(pre_steps, cfg.steps)
        pcfg = replace(cfg, steps=pre_steps if pre_steps is not None else cfg.steps, checkpoint_path=None, min_epochs=0)
        k = getattr(model.cfg, "pretrain_networks", None)
        tr1 = tr[:k] if k else tr
        stage1 = {k: v for k, v in asdict(model.cfg).items() if not k.startswith(("refine", "head_"))}

        pkey = config_hash({"model": stage1, "cfg": asdict(pcfg), "n": n, "train": tr1, "val": va, "init": key})
        if pretrain_cache is not None and pkey in pretrain_cache:
            state, pl = pretrain_cache[pkey]
            model.load_state_dict(state)
        else:
            pl = train(ReconstructionTask(model, data, target, tr1, va, pcfg), pcfg.budget(), desc=f"{desc} stage 1")
            if pretrain_cache is not None:
                pretrain_cache[pkey] = (copy.deepcopy(model.state_dict()), pl)
        res.pretrain_log, res.gates["reconstruction"] = pl, pl.gate(gate)
        res.stages["reconstruction"] = pl

    if protocol == "two_stage":
        used = torch.cat([ix for ix in (tr, va, te) if ix is not None])
        emb = torch.zeros(n, model.emb_mu.shape[0])
        emb[used] = embeddings(model, data, used, cfg.eval_batch_size)  # stage 2: refined, then frozen
        mu, sd = emb[tr].mean(0), emb[tr].std(0, unbiased=False).clamp_min(1e-6)
        model.emb_mu.copy_(mu.to(model.emb_mu))
        model.emb_sd.copy_(sd.to(model.emb_sd))
        z = (emb - mu) / sd
        if te is not None:  # reported with the results (not needed while searching a learning rate)
            res.recon = model.recon_metrics(data[va[: cfg.probe_size]])

        rule = getattr(model.cfg, "head_networks_per_param", None)  # the frozen reading's sized head
        if model.task == "infonce":
            tl = None
            if target is not None and te is not None:
                res.metrics["test"] = probe_metrics(model, emb[tr], target[tr], emb[te], target[te])
        else:
            if rule is not None:
                model.size_head(z[tr].to(_device_of(model)))
            htask = EmbeddingHeadTask(model, z.to(_device_of(model)), target.to(_device_of(model)), tr, va, cfg)
            tl = train(htask, cfg.budget(), desc=f"{desc} head")
            res.gates["task"] = tl.gate(gate, chance)
            res.stages["task"] = tl
            for name, ix in (("train", tr), ("val", va), ("test", te)):
                if ix is not None:
                    res.metrics[name] = compute_metrics(model.task, htask._out(ix).cpu(), target[ix])
    else:
        task = MetaNetTask(model, data, target, tr, va, cfg)
        tl = train(task, cfg.budget(), checkpoint=cfg.checkpoint_path, key=key, desc=desc)
        res.gates["task"] = tl.gate(gate, chance)
        res.stages["task"] = tl
        for name, ix in (("train", tr), ("val", va), ("test", te)):
            if ix is not None:
                res.metrics[name] = _evaluate(model, data, target, ix, cfg)
        if model.task == "infonce" and target is not None and te is not None:
            xt, xe = probe_features(model, data, tr), probe_features(model, data, te)
            res.metrics["test"].update(probe_metrics(model, xt, target[tr], xe, target[te]))
    if tl is not None:
        res.history, res.best_epoch, res.best_score = tl.history, tl.best_epoch, tl.best_score
        res.seconds_per_epoch, res.steps, res.resumed_from, res.log = (
            tl.seconds_per_epoch,
            tl.steps,
            tl.resumed_from,
            tl,
        )
    else:  # a self-supervised encoder without a head: its own validation score and curves
        pl = res.pretrain_log
        res.history, res.steps, res.log = pl.history, pl.steps, pl
        res.best_epoch, res.best_score, res.seconds_per_epoch = pl.best_epoch, pl.best_score, pl.seconds_per_epoch

    return res


def train_on_zoo(
    model: MetaNet,
    zoo: Zoo,
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
