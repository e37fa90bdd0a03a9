r"""Training and evaluating the classifiers of the ILNN comparison: augmentation, loop, MCC.

* :func:`random_crop_flip` -- CIFAR augmentation (zero-pad 4, random 32x32 crop, horizontal flip)
  in torch, driven by an explicit ``torch.Generator``.
* :class:`ClassifierTask` / :func:`train_classifier` -- epochs of minibatch training under a
  :class:`~hgutils.nn.training_recipes.ScheduleRecipe` (optimiser and schedule: :mod:`hgutils.nn.training_recipes`)
  through :func:`hgutils.loop.train` with per-epoch evaluation on a validation split (best-epoch
  selection, optional early stopping) and on the test split, resumable checkpoints.
* :func:`mcc` -- multiclass Matthews correlation (Gorodkin's R_K), checked against scikit-learn.
* :func:`classification_loss` -- per-network classification loss of stacked outputs ``[N, n, K]``
  (cross-entropy or squared error to one-hot targets; :data:`CLASSIFICATION_LOSSES`), the loss of the
  stacked MLPs of notebook 05.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hgutils.loop import Budget, GateResult, LearnabilityGate, TrainTask, train
from hgutils.nn.training_recipes import ScheduleRecipe, make_optimizer, make_scheduler
from hgutils.repro import config_hash

__all__ = [
    "random_crop_flip",
    "mcc",
    "evaluate",
    "History",
    "train_classifier",
    "recalibrate_bn",
    "ClassifierTask",
    "CLASSIFICATION_LOSSES",
    "classification_loss",
]

log = logging.getLogger(__name__)


def random_crop_flip(x: torch.Tensor, pad: int = 4, generator: torch.Generator | None = None) -> torch.Tensor:
    """Zero-pad ``x [B, C, H, W]`` by ``pad``, take a random ``H x W`` crop per image, flip half."""
    if x.dim() != 4:
        raise ValueError(f"images must be [B, C, H, W]; got {tuple(x.shape)}")
    b, _, h, w = x.shape
    xp = F.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (b,), generator=generator)
    dx = torch.randint(0, 2 * pad + 1, (b,), generator=generator)
    rows = (dy[:, None] + torch.arange(h)[None]).to(x.device)  # [B, H]
    cols = (dx[:, None] + torch.arange(w)[None]).to(x.device)  # [B, W]
    flip = (torch.rand(b, generator=generator) < 0.5).to(x.device)
    cols = torch.where(flip[:, None], cols.flip(1), cols)
    bi = torch.arange(b, device=x.device)[:, None, None]
    out = xp.permute(0, 2, 3, 1)[bi, rows[:, :, None], cols[:, None, :]]  # [B, H, W, C]
    return out.permute(0, 3, 1, 2).contiguous()


#: the losses :func:`classification_loss` computes
CLASSIFICATION_LOSSES: tuple[str, ...] = ("cross_entropy", "mse")


def classification_loss(f: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    r"""Per-network training loss ``[N]`` of outputs ``f [N, n, K]`` (``N`` stacked networks, ``n`` points,
    ``K`` classes) for labels ``y [n]``: with ``kind="cross_entropy"`` the mean cross-entropy
    :math:`\frac1n\sum_i -\log \operatorname{softmax}(f(x_i))_{y_i}`, with ``kind="mse"`` the mean squared
    error :math:`\frac1n\sum_i \|f(x_i) - e_{y_i}\|^2` to one-hot targets (``kind`` in
    :data:`CLASSIFICATION_LOSSES`; anything else is a ValueError)."""
    if kind == "cross_entropy":
        return F.cross_entropy(f.transpose(1, 2), y.expand(f.shape[0], -1), reduction="none").mean(-1)
    if kind == "mse":
        return ((f - F.one_hot(y, f.shape[-1]).to(f.dtype)) ** 2).sum(-1).mean(-1)
    raise ValueError(f"loss must be one of {CLASSIFICATION_LOSSES}; got {kind!r}")


def mcc(y_true: np.ndarray | torch.Tensor, y_pred: np.ndarray | torch.Tensor) -> float:
    r"""Matthews correlation coefficient, multiclass (Gorodkin's :math:`R_K`).

    With confusion matrix :math:`C`, :math:`t_k` = true counts, :math:`p_k` = predicted counts,
    :math:`c = \operatorname{tr} C`, :math:`s = N`:
    :math:`\mathrm{MCC} = (c s - \sum_k p_k t_k) / \sqrt{(s^2 - \sum p_k^2)(s^2 - \sum t_k^2)}`;
    0 when a denominator factor is 0 (constant predictions). Binary case = the usual MCC.
    """
    yt = np.asarray(y_true.cpu() if isinstance(y_true, torch.Tensor) else y_true).astype(np.int64).ravel()
    yp = np.asarray(y_pred.cpu() if isinstance(y_pred, torch.Tensor) else y_pred).astype(np.int64).ravel()
    if yt.shape != yp.shape or yt.size == 0:
        raise ValueError(f"y_true and y_pred must be equal-length non-empty; got {yt.shape}, {yp.shape}")
    k = int(max(yt.max(), yp.max())) + 1
    cm = np.zeros((k, k), dtype=np.float64)
    np.add.at(cm, (yt, yp), 1)
    t, p = cm.sum(1), cm.sum(0)
    s, c = cm.sum(), np.trace(cm)
    den = np.sqrt((s * s - (p * p).sum()) * (s * s - (t * t).sum()))
    return 0.0 if den == 0 else float((c * s - (p * t).sum()) / den)


@torch.no_grad()
def evaluate(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 256, device: str = "cpu"
) -> tuple[float, float, torch.Tensor]:
    """(accuracy, mean cross-entropy, predictions) of ``model`` in eval mode."""
    model.eval()
    preds, loss = [], 0.0
    for i in range(0, len(y), batch_size):
        out = model(x[i : i + batch_size].to(device))
        loss += float(F.cross_entropy(out, y[i : i + batch_size].to(device), reduction="sum"))
        preds.append(out.argmax(-1).cpu())
    pred = torch.cat(preds)
    return float((pred == y).float().mean()), loss / len(y), pred


@torch.no_grad()
def recalibrate_bn(
    model: nn.Module,
    x: torch.Tensor,
    batch_size: int,
    n_batches: int,
    generator: torch.Generator | None = None,
    device: str = "cpu",
) -> None:
    """Re-estimate every batch norm's running statistics ("precise BN").

    Every module with ``running_mean``/``running_var`` buffers and a ``momentum`` attribute
    (``nn.BatchNorm*``, :class:`~hgutils.nn.lorentz.GyroLBN`, ``GyroBN``, ``LorentzBN``) gets the
    cumulative average of ``n_batches`` training batches (momentum ``1/(i+1)`` at batch ``i``; along
    the geodesic for Lorentz means), in train mode without gradients. Short runs need this: with
    momentum 0.1 the running statistics lag the quickly changing weights, and the Lorentz models'
    eval-mode accuracy suffered most (ILNN genomic CNN: 100 % train-mode vs 67 % eval-mode accuracy
    on its own training set after 4 epochs). Applied identically to every flavour.
    """
    bns = [
        m
        for m in model.modules()
        if hasattr(m, "running_mean")
        and hasattr(m, "momentum")
        and isinstance(getattr(m, "running_mean", None), torch.Tensor)
    ]
    if not bns or n_batches < 1:
        return
    saved = [m.momentum for m in bns]
    was_training = model.training
    model.train()
    perm = torch.randperm(len(x), generator=generator)
    for i in range(min(n_batches, max(1, len(x) // batch_size))):
        for m in bns:
            m.momentum = 1.0 / (i + 1)
        idx = perm[i * batch_size : (i + 1) * batch_size]
        if len(idx) >= 2:
            model(x[idx].to(device))
    for m, mom in zip(bns, saved):
        m.momentum = mom
    model.train(was_training)


@dataclass
class History:
    """Per-epoch record of one training run, and which epoch's weights it ended with.

    ``best_epoch`` is the epoch selected on the validation split (the run ends with its weights), or
    the last epoch when there is no validation split; :meth:`final` reads a curve at that epoch.
    """

    train_loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    val_acc: list[float] = field(default_factory=list)
    val_mcc: list[float] = field(default_factory=list)
    test_acc: list[float] = field(default_factory=list)
    test_mcc: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)  # learning rate of each epoch
    epoch_time: list[float] = field(default_factory=list)  # seconds of training per epoch (wall clock)
    nonfinite_steps: int = 0  # steps skipped for a non-finite loss
    best_epoch: int = -1  # 0-based epoch whose weights the run ended with
    stopped: str = ""  # why training stopped (hgutils.loop.STOPS: plateau, budget, diverged, finished)
    capped: bool = False  # the budget ended the run while it was still improving (hgutils.loop.TrainLog.capped)
    probe_before: dict = field(default_factory=dict)  # training loss/accuracy before the first step
    probe_after: dict = field(default_factory=dict)  # ... and of the final weights (the learnability check)

    def final(self, metric: str = "test_acc") -> float:
        """``metric`` at :attr:`best_epoch` (the weights the run ended with)."""
        curve = getattr(self, metric)
        if not curve:
            raise ValueError(f"History has no {metric!r} values")
        return curve[self.best_epoch if self.best_epoch >= 0 else -1]

    def gate(self, chance: float, gate: LearnabilityGate | None = None) -> GateResult:
        """The learnability check (:class:`hgutils.loop.LearnabilityGate`) of this run's probes."""
        if "loss" not in self.probe_before or "loss" not in self.probe_after:
            raise ValueError("the learnability check needs probe_before and probe_after losses")
        return (gate or LearnabilityGate()).check(
            self.probe_before["loss"], self.probe_after["loss"], self.probe_after.get("accuracy"), chance
        )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class ClassifierTask(TrainTask):
    """An image or sequence classifier under a :class:`ScheduleRecipe`, for :func:`hgutils.loop.train`.

    One epoch = minibatches from a permutation seeded by ``seed`` (a ``torch.Generator``, also used
    for augmentation); one step = cross-entropy, backward, the recipe's optimiser (a step with a
    non-finite loss is skipped and counted); after each epoch the scheduler steps, the batch-norm
    statistics are re-estimated on ``bn_recalibration`` training batches (:func:`recalibrate_bn`;
    0 disables), and the validation split (if given) and the test split are evaluated (accuracy and
    MCC, history columns ``val_*`` / ``test_*``). With a validation split the score is its ``select``
    metric (``"acc"`` or ``"mcc"``): :func:`hgutils.loop.train` keeps the best epoch's weights
    (and stops early with a ``patience``); without one there is no selection (the final epoch counts).
    """

    eval_prefix = ""
    improvement = "absolute"  # the plateau rule reads the validation accuracy or MCC in absolute units

    def __init__(
        self,
        model: nn.Module,
        x_train: torch.Tensor,
        y_train: torch.Tensor,
        x_test: torch.Tensor,
        y_test: torch.Tensor,
        recipe: ScheduleRecipe,
        *,
        x_val: torch.Tensor | None = None,
        y_val: torch.Tensor | None = None,
        select: str = "acc",
        augment: bool = False,
        seed: int = 0,
        device: str = "cpu",
        eval_batch_size: int = 256,
        bn_recalibration: int = 10,
    ) -> None:
        if len(x_train) != len(y_train) or len(x_test) != len(y_test):
            raise ValueError("inputs and labels must have the same length")
        if (x_val is None) != (y_val is None) or (x_val is not None and len(x_val) != len(y_val)):
            raise ValueError("give both x_val and y_val (of the same length) or neither")
        if select not in ("acc", "mcc"):
            raise ValueError(f"select must be 'acc' or 'mcc'; got {select!r}")
        self.model, self.recipe, self.augment, self.device = model, recipe, augment, device
        self.x_train, self.y_train, self.x_test, self.y_test = x_train, y_train, x_test, y_test
        self.x_val, self.y_val, self.select = x_val, y_val, select
        self.eval_batch_size, self.bn_recalibration = eval_batch_size, bn_recalibration
        self.gen = torch.Generator().manual_seed(seed)
        model.to(device)
        self.opt = make_optimizer(model, recipe)
        self.sched = make_scheduler(self.opt, recipe)
        n, bs = len(y_train), recipe.batch_size
        self.steps_per_epoch = sum(1 for i in range(0, n, bs) if min(bs, n - i) >= 2)
        self.nonfinite_steps = 0

    def batches(self, epoch: int) -> Iterable[torch.Tensor]:
        self.model.train()
        n, bs = len(self.y_train), self.recipe.batch_size
        perm = torch.randperm(n, generator=self.gen)
        for i in range(0, n, bs):
            idx = perm[i : i + bs]
            if len(idx) >= 2:
                yield idx

    def step(self, idx: torch.Tensor, progress: float) -> dict[str, float]:
        xb = self.x_train[idx]
        if self.augment:
            xb = random_crop_flip(xb, generator=self.gen)
        xb, yb = xb.to(self.device), self.y_train[idx].to(self.device)
        out = self.model(xb)
        loss = F.cross_entropy(out, yb)
        self.opt.zero_grad(set_to_none=True)
        if not torch.isfinite(loss):
            self.nonfinite_steps += 1
            return {}
        loss.backward()
        self.opt.step()
        return {
            "loss_sum": float(loss.detach()) * len(idx),
            "correct": int((out.argmax(-1) == yb).sum()),
            "seen": len(idx),
        }

    def end_epoch(self, epoch: int, sums: dict[str, float], n_steps: int) -> dict[str, float]:
        lr = float(self.opt.param_groups[0]["lr"])
        self.sched.step()
        recalibrate_bn(self.model, self.x_train, self.recipe.batch_size, self.bn_recalibration, self.gen, self.device)
        seen = max(sums.get("seen", 0), 1)
        return {"train_loss": sums.get("loss_sum", 0.0) / seen, "train_acc": sums.get("correct", 0) / seen, "lr": lr}

    def _scores(self, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        acc, _, pred = evaluate(self.model, x, y, self.eval_batch_size, self.device)
        return acc, mcc(y, pred)

    def evaluate(self) -> dict[str, float]:
        out = {}
        if self.x_val is not None:
            out["val_acc"], out["val_mcc"] = self._scores(self.x_val, self.y_val)
        out["test_acc"], out["test_mcc"] = self._scores(self.x_test, self.y_test)
        return out

    def score(self, metrics: dict[str, float]) -> float | None:
        return metrics.get(f"val_{self.select}") if self.x_val is not None else None

    def snapshot(self) -> dict:
        return copy.deepcopy(self.model.state_dict())

    def restore(self, snapshot: dict) -> None:
        self.model.load_state_dict(snapshot)

    def probe(self, size: int = 512) -> dict[str, float]:
        """Cross-entropy and accuracy on the first ``size`` training examples (no augmentation), in
        eval mode with batch-norm statistics re-estimated on them (a private generator, and the model's
        state restored afterwards: the run itself is untouched)."""
        x, y = self.x_train[:size], self.y_train[:size]
        saved = copy.deepcopy(self.model.state_dict())
        bs, n_bn = self.recipe.batch_size, max(self.bn_recalibration, 1)
        recalibrate_bn(self.model, x, bs, n_bn, torch.Generator().manual_seed(0), self.device)
        acc, loss, _ = evaluate(self.model, x, y, self.eval_batch_size, self.device)
        self.model.load_state_dict(saved)
        return {"loss": loss, "accuracy": acc}

    def state_dict(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "opt": self.opt.state_dict(),
            "sched": self.sched.state_dict(),
            "gen": self.gen.get_state(),
            "nonfinite": self.nonfinite_steps,
        }

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.sched.load_state_dict(state["sched"])
        self.gen.set_state(state["gen"])
        self.nonfinite_steps = state["nonfinite"]


def train_classifier(
    model: nn.Module,
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    recipe: ScheduleRecipe,
    *,
    x_val: torch.Tensor | None = None,
    y_val: torch.Tensor | None = None,
    select: str = "acc",
    patience: int | None = None,
    augment: bool = False,
    seed: int = 0,
    device: str = "cpu",
    checkpoint: str | os.PathLike | None = None,
    desc: str = "train",
    eval_batch_size: int = 256,
    bn_recalibration: int = 10,
) -> History:
    """Train ``model`` with ``recipe`` as a :class:`ClassifierTask` through :func:`hgutils.loop.train`.

    Runs are reproducible (one seeded generator for batches and augmentation). With a validation
    split the run ends with the weights of its best epoch on the ``select`` metric (stopping after
    ``patience`` epochs without improvement, if given). With ``checkpoint``, the state is saved after
    each epoch (atomic, checksummed) and a rerun resumes from the last epoch. Returns the :class:`History`.
    """
    task = ClassifierTask(
        model,
        x_train,
        y_train,
        x_test,
        y_test,
        recipe,
        x_val=x_val,
        y_val=y_val,
        select=select,
        augment=augment,
        seed=seed,
        device=device,
        eval_batch_size=eval_batch_size,
        bn_recalibration=bn_recalibration,
    )
    key = config_hash(
        {
            "recipe": asdict(recipe),
            "model": type(model).__name__,
            "n": len(y_train),
            "n_val": 0 if y_val is None else len(y_val),
            "select": select,
            "augment": augment,
            "seed": seed,
        }
    )
    budget = Budget(epochs=recipe.epochs, patience=patience if x_val is not None else None)
    tl = train(task, budget, checkpoint=checkpoint, key=key, desc=desc)
    return History(
        train_loss=tl.curve("train_loss"),
        train_acc=tl.curve("train_acc"),
        val_acc=tl.curve("val_acc") if x_val is not None else [],
        val_mcc=tl.curve("val_mcc") if x_val is not None else [],
        test_acc=tl.curve("test_acc"),
        test_mcc=tl.curve("test_mcc"),
        lr=tl.curve("lr"),
        epoch_time=list(tl.train_seconds),
        nonfinite_steps=task.nonfinite_steps,
        best_epoch=tl.best_epoch if tl.best_epoch >= 0 else len(tl.history) - 1,
        stopped=tl.stopped,
        capped=tl.capped,
        probe_before=tl.initial,
        probe_after=tl.final,
    )
