r"""The one training loop of the companion: every model of every notebook trains through :func:`train`.

What differs between models -- how a batch is drawn, what one optimiser step does, what is
evaluated -- lives in a :class:`TrainTask`; what is common lives here, once:

* a budget in epochs and/or optimiser steps (:class:`Budget`);
* evaluation after every epoch, early stopping on the validation score by the *plateau rule*
  (below), and the best weights restored at the end (when the task has a validation score);
* the training curves: one row per epoch with the mean training terms, the validation metrics, the
  step count and the wall time (:attr:`TrainLog.history`);
* checkpoint / resume: after every epoch the loop's state and the task's state are written
  atomically (:func:`hgutils.repro.save_checked`); a rerun with the same ``key`` resumes exactly;
* divergence: a step that raises ``FloatingPointError`` (a non-finite loss) ends the run; when an
  earlier epoch was validated, the run keeps that best epoch's weights like early stopping does and
  says so (:attr:`TrainLog.diverged`), otherwise the error propagates, naming the run and the step;
* the learnability check (:class:`LearnabilityGate`): the task's training loss on a fixed probe set
  before the first step and after the last (:meth:`TrainTask.probe`); a run whose loss never left
  its initial plateau, or whose training accuracy stayed at chance, is marked *did not train*;
* a progress bar over optimiser steps (:func:`hgutils.progress.progress`).

**The plateau rule.** An epoch counts as *better* only when its validation score beats the reference
score :math:`s_\mathrm{ref}` (the last score that counted as better) by more than ``min_delta``:

.. math::

    g(s, s_\mathrm{ref}) = \begin{cases} (s - s_\mathrm{ref}) / |s_\mathrm{ref}| & \text{relative (losses, MSE)} \\
    s - s_\mathrm{ref} & \text{absolute (accuracy, Kendall } \tau) \end{cases} \; > \; \delta_\min ,

so a score that creeps up by small steps still resets the count once the steps add up to
:math:`\delta_\min`, and a run stops on its *plateau* after ``patience`` consecutive epochs that did not
count -- never before ``min_epochs`` epochs (a flat start is not a plateau). The kind of improvement is
the task's (:attr:`TrainTask.improvement`); :data:`DEFAULT_MIN_DELTA` gives ``min_delta`` per kind when
the budget leaves it unset. A run that ends at its budget is *capped* only when it was still improving:
when the best score of its last ``patience`` epochs beats the best before them by more than
:math:`\delta_\min` (:attr:`TrainLog.window_gain`); a run that reaches its budget on a plateau has
converged. A task without a validation score cannot show a plateau, so its budget always caps it.

The tasks in the library: :class:`hgutils.weightspace.tasks.MetaNetTask` (meta-networks on a
zoo), :class:`hgutils.nn.classifier_training.ClassifierTask` (ILNN / HCNN / Euclidean classifiers) and
:class:`hgutils.weightspace.batched_training.StackedTask` (N small networks trained at once, the zoos).
"""

from __future__ import annotations

import abc
import logging
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from hgutils.progress import progress
from hgutils.repro import load_checked, save_checked

log = logging.getLogger("hgutils")

__all__ = [
    "DEFAULT_MIN_DELTA",
    "IMPROVEMENTS",
    "STOPS",
    "Budget",
    "GateResult",
    "LearnabilityGate",
    "TrainLog",
    "TrainTask",
    "combine_gates",
    "improvement",
    "train",
]

#: how a validation score's improvement is measured (:attr:`TrainTask.improvement`, :func:`improvement`)
IMPROVEMENTS: tuple[str, ...] = ("relative", "absolute")

#: the minimum improvement that counts, per kind, when a :class:`Budget` leaves ``min_delta`` unset.
#: ``relative``, 1 %: a loss (reconstruction, InfoNCE, MSE) that falls by less than 1 % of itself over a
#: whole patience window (10-20 epochs) moves the final metrics by less than their seed-to-seed spread
#: (5-15 % of the mean for the probe MSE of notebook 02 and the reconstruction losses of 01-03 and 07);
#: ``absolute``, 0.005: half a point of accuracy (2 of notebook 01's 400 validation networks) or 0.005 of
#: Kendall tau, below the smallest difference any of our ledgers can resolve (1-4 points, 0.01-0.03 tau).
DEFAULT_MIN_DELTA: dict[str, float] = {"relative": 0.01, "absolute": 0.005}

#: why a run ended (:attr:`TrainLog.stopped`)
STOPS: tuple[str, ...] = ("plateau", "budget", "diverged", "finished")


def improvement(score: float, reference: float, kind: str) -> float:
    r"""The gain of ``score`` over ``reference`` (both higher-is-better): :math:`(s - s_\mathrm{ref})/|s_\mathrm{ref}|`
    for ``kind="relative"``, :math:`s - s_\mathrm{ref}` for ``"absolute"`` (module docstring)."""
    if kind == "relative":
        return (score - reference) / max(abs(reference), 1e-12)
    if kind == "absolute":
        return score - reference
    raise ValueError(f"kind must be one of {IMPROVEMENTS}; got {kind!r}")


@dataclass(frozen=True)
class Budget:
    """How long to train and when to stop.

    ``epochs`` passes over the task's batches, cut at ``max_steps`` optimiser steps when given (at
    least one of the two is required): the ceiling. With ``patience``, training stops on its plateau
    (module docstring): after that many consecutive evaluations none of which beat the reference
    score by more than ``min_delta`` (``None``: :data:`DEFAULT_MIN_DELTA` of the task's kind of
    improvement), but not before ``min_epochs`` epochs; ``restore_best`` then ends with the weights of
    the best evaluation (only for tasks with a validation score).
    """

    epochs: int | None = None
    max_steps: int | None = None
    patience: int | None = None
    restore_best: bool = True
    min_delta: float | None = None
    min_epochs: int = 0

    def __post_init__(self) -> None:
        if self.epochs is None and self.max_steps is None:
            raise ValueError("a budget needs epochs or max_steps")
        for name in ("epochs", "max_steps", "patience"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"Budget.{name} must be a positive int or None; got {v!r}")
        if not isinstance(self.min_epochs, int) or isinstance(self.min_epochs, bool) or self.min_epochs < 0:
            raise ValueError(f"Budget.min_epochs must be an int >= 0; got {self.min_epochs!r}")
        if self.min_delta is not None and not (math.isfinite(self.min_delta) and self.min_delta >= 0):
            raise ValueError(f"Budget.min_delta must be a finite number >= 0 or None; got {self.min_delta!r}")

    def delta(self, kind: str) -> float:
        """The minimum improvement that counts for a score of ``kind`` (:data:`IMPROVEMENTS`)."""
        if kind not in IMPROVEMENTS:
            raise ValueError(f"kind must be one of {IMPROVEMENTS}; got {kind!r}")
        return DEFAULT_MIN_DELTA[kind] if self.min_delta is None else float(self.min_delta)

    def total_steps(self, steps_per_epoch: int) -> int:
        """Optimiser steps this budget allows for a task with ``steps_per_epoch`` steps per epoch."""
        if self.max_steps is not None:
            return self.max_steps
        return self.epochs * steps_per_epoch  # type: ignore[operator]

    def n_epochs(self, steps_per_epoch: int) -> int:
        """Epochs to run: ``epochs``, or enough epochs to spend ``max_steps``."""
        if self.epochs is not None:
            return self.epochs
        return math.ceil(self.max_steps / max(steps_per_epoch, 1))  # type: ignore[operator]


class TrainTask(abc.ABC):
    """What :func:`train` needs from a model: :meth:`batches` and :meth:`step` always; the other
    methods have do-nothing defaults that subclasses override as needed.

    ``steps_per_epoch`` is the number of :meth:`step` calls one epoch makes (for the progress bar
    and the step budget).
    """

    steps_per_epoch: int = 1
    eval_prefix: str = "val_"  # history columns of :meth:`evaluate` (``"test_"`` when it scores the test split)
    #: how :meth:`score` improves (:data:`IMPROVEMENTS`): ``"relative"`` for losses and MSE, ``"absolute"`` for
    #: accuracy and Kendall tau (the plateau rule's ``min_delta`` is read in these units)
    improvement: str = "relative"

    @abc.abstractmethod
    def batches(self, epoch: int) -> Iterable[Any]:
        """The batches of epoch ``epoch`` (each is passed to :meth:`step`)."""

    @abc.abstractmethod
    def step(self, batch: Any, progress: float) -> dict[str, float]:
        """One optimiser step on ``batch``; returns the values to accumulate over the epoch.

        ``progress`` is the fraction of the step budget already spent (curricula and annealing).
        """

    def end_epoch(self, epoch: int, sums: dict[str, float], n_steps: int) -> dict[str, float]:
        """Epoch bookkeeping (schedulers, statistics) and the training row: by default the mean of
        every accumulated value over the epoch's steps, prefixed ``train_``."""
        return {f"train_{k}": v / max(n_steps, 1) for k, v in sums.items()}

    def evaluate(self) -> dict[str, float]:
        """Validation metrics after an epoch (``{}``: nothing to validate)."""
        return {}

    def score(self, metrics: dict[str, float]) -> float | None:
        """Validation score of ``metrics``, higher is better (``None``: no early stopping)."""
        return None

    def probe(self) -> dict[str, float]:
        """Training loss (``"loss"``, and ``"accuracy"`` for classifiers) on a fixed subset of the
        training data, without updating anything; ``{}`` when the task has none. :func:`train` calls
        it before the first step and after the last (best weights restored) for the learnability check."""
        return {}

    def should_stop(self) -> bool:
        """True when the task has nothing left to train (e.g. every network converged)."""
        return False

    def finish(self, completed: bool) -> None:
        """Called once after the last step; ``completed`` is False when the task stopped itself."""
        return None

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume (model, optimisers, random generators)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        return None

    def snapshot(self) -> Any:
        """A copy of the weights to keep as the best so far."""
        return None

    def restore(self, snapshot: Any) -> None:
        """Load weights kept by :meth:`snapshot`."""
        return None


@dataclass(frozen=True)
class GateResult:
    """The learnability check of one run: did it leave its initial plateau?"""

    trained: bool
    reason: str
    initial_loss: float
    final_loss: float
    train_accuracy: float | None = None
    chance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LearnabilityGate:
    """A run *trained* when its training loss fell by at least ``min_loss_drop`` (relative) below
    its value before training (on a fixed probe set) and, for classification, its training accuracy exceeds chance by at
    least ``min_accuracy_gain`` (absolute). Anything else is "did not train": a verdict built on such
    a run is inconclusive, not a failure of the method.
    """

    min_loss_drop: float = 0.05
    min_accuracy_gain: float = 0.10

    def check(
        self,
        initial_loss: float,
        final_loss: float,
        train_accuracy: float | None = None,
        chance: float | None = None,
    ) -> GateResult:
        """Judge one run from its training loss before and after training (and its training accuracy)."""
        if not (math.isfinite(initial_loss) and math.isfinite(final_loss)):
            return GateResult(False, "non-finite training loss", initial_loss, final_loss, train_accuracy, chance)
        drop = (initial_loss - final_loss) / max(abs(initial_loss), 1e-12)
        if drop < self.min_loss_drop:
            reason = (
                f"training loss {initial_loss:.4g} -> {final_loss:.4g} fell {100 * drop:.1f} % "
                f"(< {100 * self.min_loss_drop:.0f} %): still on its initial plateau"
            )
            return GateResult(False, reason, initial_loss, final_loss, train_accuracy, chance)
        if train_accuracy is not None and chance is not None and train_accuracy < chance + self.min_accuracy_gain:
            reason = (
                f"training accuracy {train_accuracy:.3f} is within {self.min_accuracy_gain:.2f} of chance {chance:.3f}"
            )
            return GateResult(False, reason, initial_loss, final_loss, train_accuracy, chance)
        reason = f"training loss {initial_loss:.4g} -> {final_loss:.4g} ({100 * drop:.0f} % lower)"
        if train_accuracy is not None and chance is not None:
            reason += f", training accuracy {train_accuracy:.3f} (chance {chance:.3f})"
        return GateResult(True, reason, initial_loss, final_loss, train_accuracy, chance)


def combine_gates(checks: Mapping[str, GateResult], summary: str = "each", noun: str = "networks") -> dict[str, Any]:
    """The learnability check of a group of runs, for ``Claims.add(trained=...)``: ``trained`` iff every
    run in ``checks`` (label -> :class:`GateResult`) passed.

    ``reason`` with ``summary="each"`` lists every run, ``"<label>: <reason>; ..."``; with
    ``summary="count"`` it counts them and names the weakest (a failing run first, else the one whose
    loss fell least), ``"<k>/<n> <noun> passed; weakest: <reason>"``.
    """
    if not checks:
        raise ValueError("combine_gates needs at least one run's GateResult")
    if summary not in ("each", "count"):
        raise ValueError(f"summary must be 'each' or 'count'; got {summary!r}")
    results = list(checks.values())
    trained = all(g.trained for g in results)
    if summary == "each":
        return {"trained": trained, "reason": "; ".join(f"{k}: {g.reason}" for k, g in checks.items())}
    worst = min(results, key=lambda g: (g.trained, -(g.final_loss / max(g.initial_loss, 1e-12))))
    n_ok = sum(g.trained for g in results)
    return {"trained": trained, "reason": f"{n_ok}/{len(results)} {noun} passed; weakest: {worst.reason}"}


@dataclass
class TrainLog:
    """What :func:`train` returns.

    ``history`` has one row per epoch: ``epoch``, ``step`` (optimiser steps so far), the task's
    training row (:meth:`TrainTask.end_epoch`) and ``val_<metric>`` (:attr:`TrainTask.eval_prefix`);
    it depends only on the seeds, never on the machine's speed. Wall times per epoch are kept apart:
    ``epoch_seconds`` (evaluation included) and ``train_seconds`` (the optimiser steps only).
    ``initial`` and ``final`` are :meth:`TrainTask.probe` before the first step and
    after training: what :meth:`gate` compares.

    Why the run ended: ``stopped`` (:data:`STOPS`: ``"plateau"``, ``"budget"``, ``"diverged"`` or
    ``"finished"`` -- the task had nothing left to train), ``stop_detail`` (the same in words),
    ``window_gain`` (the best score of the last ``patience`` epochs over the best before them, in the
    units of ``improvement``; ``nan`` without a validation score) and ``min_delta`` (the threshold the
    run was held to); :attr:`capped` says whether the budget ended it while it was still improving.
    """

    history: list[dict[str, float]] = field(default_factory=list)
    initial: dict[str, float] = field(default_factory=dict)
    final: dict[str, float] = field(default_factory=dict)
    train_seconds: list[float] = field(default_factory=list)
    epoch_seconds: list[float] = field(default_factory=list)
    steps: int = 0
    best_epoch: int = -1
    best_score: float = -math.inf
    stopped: str = ""
    scores: list[float] = field(default_factory=list)  # the validation score of every evaluated epoch
    resumed_from: int | None = None
    diverged: str = ""  # where and why a non-finite loss ended the run ("" when it did not)
    stop_detail: str = ""
    window_gain: float = math.nan
    min_delta: float = math.nan
    improvement: str = "relative"

    @property
    def capped(self) -> bool:
        """True when the budget ended the run while its validation score was still improving by more
        than ``min_delta`` over the last patience window (or when it had no validation score to tell)."""
        if self.stopped != "budget":
            return False
        return not math.isfinite(self.window_gain) or self.window_gain > self.min_delta

    def describe(self) -> str:
        """Why the run ended, in words, with its best epoch (counted from 1) and its last window's improvement."""
        n = len(self.history)
        best = (
            f"best epoch {self.best_epoch + 1} of {n}" if self.best_epoch >= 0 else f"{n} epochs, no validation score"
        )
        if self.stopped == "budget":
            if not math.isfinite(self.window_gain):
                return f"ceiling reached ({self.stop_detail}) without a validation score: capped; {best}"
            gain, delta = _fmt_gain(self.window_gain, self.improvement), _fmt_gain(self.min_delta, self.improvement)
            if self.capped:
                return f"ceiling reached while still improving: capped (last window {gain} > {delta}); {best}"
            return f"ceiling reached on its plateau: converged (last window {gain} <= {delta}); {best}"
        if self.stopped == "plateau":
            return f"plateau: {self.stop_detail}; {best}"
        if self.stopped == "diverged":
            return f"diverged {self.stop_detail}"
        return f"{self.stopped}: {self.stop_detail}; {best}"

    def curve(self, key: str) -> list[float]:
        """One column of the history (``nan`` where an epoch lacks it)."""
        return [float(r.get(key, math.nan)) for r in self.history]

    def gate(self, gate: LearnabilityGate | None = None, chance: float | None = None) -> GateResult:
        """The learnability check of this run (``chance``: chance-level training accuracy, or None)."""
        if "loss" not in self.initial or "loss" not in self.final:
            raise ValueError("the learnability check needs the task's probe() losses before and after training")
        return (gate or LearnabilityGate()).check(
            self.initial["loss"], self.final["loss"], self.final.get("accuracy"), chance
        )

    @property
    def seconds_per_epoch(self) -> float:
        t = self.epoch_seconds
        return sum(t) / len(t) if t else math.nan


def _fmt_gain(x: float, kind: str) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{100 * x:+.2f} %" if kind == "relative" else f"{x:+.4f}"


def window_gain(scores: list[float], window: int | None, kind: str) -> float:
    """The improvement (:func:`improvement`) of the best of the last ``window`` scores over the best of the
    scores before them; with ``window`` ``None`` or no score before the window, over the first score
    (``nan`` without scores)."""
    s = [x for x in scores if math.isfinite(x)]
    if not s:
        return math.nan
    w = len(s) if window is None else window
    before = s[:-w] if len(s) > w else s[:1]
    recent = s[-w:] if len(s) > w else s[1:] or s[:1]
    return improvement(max(recent), max(before), kind)


def _probe(task: TrainTask) -> dict[str, float]:
    """:meth:`TrainTask.probe` with torch's global random state saved and restored (a probe that
    runs a dropout layer must not change the run it measures)."""

    with torch.random.fork_rng(devices=[]):
        return task.probe()


def train(
    task: TrainTask,
    budget: Budget,
    *,
    checkpoint: str | Path | None = None,
    key: str | None = None,
    desc: str | None = None,
) -> TrainLog:
    """Train ``task`` within ``budget`` (module docstring); returns the :class:`TrainLog`.

    With ``checkpoint`` the state after every epoch is saved there and a matching checkpoint (same
    ``key``, e.g. a :func:`hgutils.repro.config_hash` of everything that defines the run) is
    resumed; a checkpoint of another configuration is ignored with a warning.
    """
    spe = max(int(task.steps_per_epoch), 1)
    total = budget.total_steps(spe)
    n_epochs = budget.n_epochs(spe)
    kind = getattr(task, "improvement", "relative")
    delta = budget.delta(kind)
    res = TrainLog(min_delta=delta, improvement=kind)
    best, bad, start = None, 0, 0
    ref = -math.inf  # the plateau rule's reference score: the last score that counted as better
    ckpt = Path(checkpoint) if checkpoint is not None else None
    if ckpt is not None and ckpt.exists():
        try:
            st = load_checked(ckpt)
            if st.get("key") != key:
                raise ValueError("checkpoint belongs to another configuration")
            task.load_state_dict(st["task"])
            best, bad, ref = st["best"], st["bad"], st["reference"]
            res.history, res.initial, res.steps = st["history"], st["initial"], st["steps"]
            res.train_seconds, res.epoch_seconds = (list(x) for x in st["seconds"])
            res.best_epoch, res.best_score, res.scores = st["best_epoch"], st["best_score"], list(st["scores"])
            start = res.resumed_from = st["epoch"] + 1
            log.info("resumed %s from epoch %d", ckpt, start)
        except (ValueError, KeyError, RuntimeError) as exc:
            log.warning("checkpoint %s not usable (%s); starting fresh", ckpt, exc)
    spent = budget.max_steps is not None and res.steps >= budget.max_steps
    plateau = _on_plateau(budget, bad, start)
    stopped = start >= n_epochs or spent or plateau
    if plateau:
        res.stopped, res.stop_detail = "plateau", _plateau_detail(budget, bad, delta, kind)
    elif spent:
        res.stopped, res.stop_detail = "budget", f"{budget.max_steps} optimiser steps"
    if start == 0:
        res.initial = _probe(task)
    completed = True
    bar = progress(total=total, initial=min(res.steps, total), desc=desc or type(task).__name__)
    try:
        for epoch in range(start, n_epochs):
            if stopped:
                break
            t0 = time.perf_counter()
            sums: dict[str, float] = {}
            n = 0
            try:
                for batch in task.batches(epoch):
                    terms = task.step(batch, res.steps / max(total, 1))
                    res.steps += 1
                    n += 1
                    bar.update(1)
                    for k, v in terms.items():
                        sums[k] = sums.get(k, 0.0) + v
                    if task.should_stop():
                        stopped, completed = True, False
                        res.stopped, res.stop_detail = "finished", "the task had nothing left to train"
                        break
                    if budget.max_steps is not None and res.steps >= budget.max_steps:
                        stopped = True
                        res.stopped, res.stop_detail = "budget", f"{budget.max_steps} optimiser steps"
                        break
            except FloatingPointError as exc:
                where = f"epoch {epoch}, step {res.steps + 1}"
                if best is None or not budget.restore_best:
                    raise FloatingPointError(f"{desc or type(task).__name__} diverged at {where}: {exc}") from exc
                res.diverged = f"{where}: {exc}"
                res.stopped = "diverged"
                res.stop_detail = f"at {where}; kept the best validated epoch {res.best_epoch}"
                log.info("%s diverged %s", desc or type(task).__name__, res.stop_detail)  # the row says it
                break
            t_train = time.perf_counter() - t0
            row: dict[str, float] = {"epoch": epoch, "step": res.steps, **task.end_epoch(epoch, sums, n)}
            val = task.evaluate()
            row.update({f"{task.eval_prefix}{k}": v for k, v in val.items()})
            score = task.score(val)
            if score is not None:
                res.scores.append(float(score))
                if score > res.best_score or res.best_epoch < 0:
                    res.best_score, res.best_epoch = score, epoch
                    best = task.snapshot()
                if ref == -math.inf or improvement(score, ref, kind) > delta:
                    ref, bad = score, 0
                else:
                    bad += 1
                if not stopped and _on_plateau(budget, bad, epoch + 1):
                    stopped = True
                    res.stopped, res.stop_detail = "plateau", _plateau_detail(budget, bad, delta, kind)
            res.history.append(row)
            res.train_seconds.append(t_train)
            res.epoch_seconds.append(time.perf_counter() - t0)
            if ckpt is not None:
                save_checked(
                    ckpt,
                    {
                        "key": key,
                        "epoch": epoch,
                        "task": task.state_dict(),
                        "best": best,
                        "bad": bad,
                        "reference": ref,
                        "scores": res.scores,
                        "history": res.history,
                        "seconds": (res.train_seconds, res.epoch_seconds),
                        "initial": res.initial,
                        "steps": res.steps,
                        "best_epoch": res.best_epoch,
                        "best_score": res.best_score,
                    },
                )
    finally:
        bar.close()
    task.finish(completed)
    if budget.restore_best and best is not None:
        task.restore(best)
    res.final = _probe(task)
    if not res.stopped:
        res.stopped, res.stop_detail = "budget", f"{n_epochs} epochs"
    res.window_gain = window_gain(res.scores, budget.patience, kind)
    return res


def _on_plateau(budget: Budget, bad: int, epochs_done: int) -> bool:
    """Whether the plateau rule ends the run after ``epochs_done`` epochs, ``bad`` of them in a row not better."""
    return budget.patience is not None and bad >= budget.patience and epochs_done >= budget.min_epochs


def _plateau_detail(budget: Budget, bad: int, delta: float, kind: str) -> str:
    return f"{bad} epochs in a row without an improvement above {_fmt_gain(delta, kind).lstrip('+')}"
