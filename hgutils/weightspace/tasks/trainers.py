"""The meta-network tasks of the one training loop (:func:`hgutils.loop.train`): :class:`MetaNetTask` (the
model's task objective), :class:`ReconstructionTask` (GTH-GMN's self-supervised stage 1) and
:class:`EmbeddingHeadTask` (a head on frozen embeddings)."""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Iterable
from typing import Any

import geoopt
import torch
from torch import Tensor

from hgutils.loop import TrainTask
from hgutils.weightspace.augment import augment_weight_data
from hgutils.weightspace.metanets.base import MetaNet, to_device
from hgutils.weightspace.metanets.heads import task_loss
from hgutils.weightspace.tasks.config import TrainConfig
from hgutils.weightspace.tasks.metrics import (
    _batches,
    _device_of,
    _improvement,
    _score,
    compute_metrics,
    predict_outputs,
)

log = logging.getLogger("hgutils")


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
