"""Training a meta-network on a zoo in up to two stages (:func:`fit`) and what it returns (:class:`FitResult`)."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from hgutils.loop import GateResult, LearnabilityGate, TrainLog, combine_gates, train
from hgutils.repro import config_hash
from hgutils.weightspace.metanets.base import MetaNet
from hgutils.weightspace.tasks.config import TrainConfig
from hgutils.weightspace.tasks.metrics import (
    _as_index,
    _device_of,
    compute_metrics,
    embeddings,
    probe_features,
    probe_metrics,
)
from hgutils.weightspace.tasks.trainers import (
    EmbeddingHeadTask,
    MetaNetTask,
    ReconstructionTask,
    _chance,
    _evaluate,
)

if TYPE_CHECKING:
    from hgutils.weightspace.zoo.containers import Zoo


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
