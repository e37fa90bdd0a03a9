r"""Training N recurrent networks of one architecture at once on the angle-memory task, through
:func:`hgutils.loop.train`.

:class:`SequenceTask` is the :class:`~hgutils.loop.TrainTask`: every network sees the same minibatch
of angle sequences (each its own input noise), the loss of network :math:`n` is the mean squared
error of its report,

.. math:: L_n = \frac{1}{|B|\,R\,2K} \sum_{b \in B} \sum_{t \in \text{report}} \| y^{(n)}_t(b) - y^*_t(b) \|^2,

and one Adam step on :math:`\sum_n L_n` is N independent Adam steps (Adam acts element-wise and the
networks share no parameter). Each network's gradient is clipped to norm ``clip`` on its own.
After every epoch the validation split is evaluated; the loop early-stops on the mean validation loss
over the N networks (``patience`` epochs) and restores the best epoch's weights.

The learnability check (:func:`learnability`) is per network, on held-out angles: its training loss
on a fixed probe set fell by at least ``min_loss_drop`` (:class:`hgutils.loop.LearnabilityGate`) and
its mean circular report error on the held-out angles is below ``max_error_deg`` (chance: 90°).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from hgutils.dynamics.models import Params, count_networks, outputs, representation
from hgutils.dynamics.task import AngleMemoryTask
from hgutils.loop import Budget, GateResult, LearnabilityGate, TrainLog, TrainTask, train

__all__ = ["SequenceTask", "TrainedStack", "learnability", "report_loss", "train_stack"]


def report_loss(params: Params, task: AngleMemoryTask, inputs: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
    """Per-network report MSE ``[N]`` (module docstring) and the outputs ``[N, B, T, 2K]``."""
    y = outputs(params, representation(params, inputs))
    mask = task.loss_mask.to(y.device)
    err = (y[:, :, mask] - targets[..., mask, :]) ** 2
    return err.mean((1, 2, 3)), y


class SequenceTask(TrainTask):
    """N stacked networks (``params``: :mod:`hgutils.dynamics.models`) on an :class:`AngleMemoryTask`
    (module docstring). ``train_angles`` / ``val_angles``: ``[n, K]``; ``probe_size`` training trials
    form the fixed probe set of the learnability check."""

    def __init__(
        self,
        params: Params,
        task: AngleMemoryTask,
        train_angles: Tensor,
        val_angles: Tensor,
        *,
        batch_size: int = 64,
        lr: float = 1e-3,
        input_noise: float = 0.0,
        clip: float = 1.0,
        seed: int = 0,
        probe_size: int = 256,
    ) -> None:
        self.N = count_networks(params)
        for name, a in (("train_angles", train_angles), ("val_angles", val_angles)):
            if a.ndim != 2 or a.shape[1] != task.n_items or len(a) < 1:
                raise ValueError(f"{name} must be [n >= 1, n_items={task.n_items}]; got {tuple(a.shape)}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1; got {batch_size!r}")
        if not (lr > 0 and clip > 0 and input_noise >= 0):
            raise ValueError(f"need lr > 0, clip > 0, input_noise >= 0; got {lr}, {clip}, {input_noise}")
        self.task, self.batch_size, self.noise, self.clip = task, batch_size, float(input_noise), float(clip)
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        self.opt = torch.optim.Adam(list(self.params.values()), lr=lr)
        self.gen = torch.Generator().manual_seed(int(seed))
        self.train_angles, self.val_angles = train_angles, val_angles
        self.x_val, self.y_val = task.inputs(val_angles), task.targets(val_angles)
        probe = train_angles[:probe_size]
        self.x_probe, self.y_probe = task.inputs(probe), task.targets(probe)
        n = len(train_angles)
        self.steps_per_epoch = math.ceil(n / batch_size)
        self.val_loss: list[Tensor] = []  # per epoch: [N]
        self.val_error: list[Tensor] = []  # per epoch: [N], degrees
        self.train_loss: list[Tensor] = []  # per epoch: [N]
        self.probes: list[Tensor] = []  # per probe() call: [N]
        self._epoch_sum = torch.zeros(self.N, dtype=torch.float64)

    def batches(self, epoch: int) -> list[Tensor]:
        perm = torch.randperm(len(self.train_angles), generator=self.gen)
        return [perm[i : i + self.batch_size] for i in range(0, len(perm), self.batch_size)]

    def step(self, idx: Tensor, progress: float) -> dict[str, float]:
        angles = self.train_angles[idx]
        x = self.task.inputs(angles).expand(self.N, -1, -1, -1)
        if self.noise > 0:
            x = x + self.noise * torch.randn(x.shape, generator=self.gen, dtype=x.dtype)
        losses, _ = report_loss(self.params, self.task, x, self.task.targets(angles))
        if not torch.isfinite(losses).all():
            bad = torch.nonzero(~torch.isfinite(losses)).flatten().tolist()
            raise FloatingPointError(f"non-finite training loss in networks {bad}")
        self.opt.zero_grad(set_to_none=True)
        losses.sum().backward()
        with torch.no_grad():  # clip each network's gradient norm on its own
            sq = sum(p.grad.flatten(1).pow(2).sum(1) for p in self.params.values())
            scale = (self.clip / sq.sqrt().clamp_min(1e-12)).clamp(max=1.0)
            for p in self.params.values():
                p.grad.mul_(scale.view(-1, *([1] * (p.ndim - 1))))
        self.opt.step()
        self._epoch_sum += losses.detach().double() * len(idx)
        return {"loss": float(losses.detach().mean())}

    def end_epoch(self, epoch: int, sums: dict[str, float], n_steps: int) -> dict[str, float]:
        self.train_loss.append((self._epoch_sum / len(self.train_angles)).float())
        self._epoch_sum.zero_()
        return super().end_epoch(epoch, sums, n_steps)

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        losses, y = report_loss(self.params, self.task, self.x_val, self.y_val)
        err = torch.rad2deg(self.task.report_error(y, self.val_angles)).mean(-1)  # [N]
        self.val_loss.append(losses.detach().clone())
        self.val_error.append(err)
        return {"loss": float(losses.mean()), "loss_max": float(losses.max()), "error_deg": float(err.mean())}

    def score(self, metrics: dict[str, float]) -> float | None:
        return -metrics["loss"]

    @torch.no_grad()
    def probe(self) -> dict[str, float]:
        losses, _ = report_loss(self.params, self.task, self.x_probe, self.y_probe)
        self.probes.append(losses.detach().clone())
        return {"loss": float(losses.mean())}

    def snapshot(self) -> dict[str, Tensor]:
        return {k: v.detach().clone() for k, v in self.params.items()}

    def restore(self, snapshot: dict[str, Tensor]) -> None:
        with torch.no_grad():
            for k, v in snapshot.items():
                self.params[k].copy_(v)

    def state_dict(self) -> dict[str, Any]:
        return {
            "params": self.snapshot(),
            "opt": self.opt.state_dict(),
            "gen": self.gen.get_state(),
            "curves": (self.train_loss, self.val_loss, self.val_error, self.probes),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.restore(state["params"])
        self.opt.load_state_dict(state["opt"])
        self.gen.set_state(state["gen"])
        self.train_loss, self.val_loss, self.val_error, self.probes = (list(c) for c in state["curves"])

    def trained_params(self) -> Params:
        """The current (after :func:`train`: the best epoch's) parameters, detached."""
        return self.snapshot()


def learnability(
    initial_loss: Tensor,
    final_loss: Tensor,
    heldout_error_deg: Tensor,
    *,
    max_error_deg: float,
    gate: LearnabilityGate | None = None,
) -> list[GateResult]:
    """One :class:`~hgutils.loop.GateResult` per network: the loss-drop check of ``gate`` on the probe
    losses ``[N]`` and a held-out mean circular report error below ``max_error_deg`` (module docstring)."""
    gate = gate or LearnabilityGate()
    out = []
    for a, b, e in zip(initial_loss.tolist(), final_loss.tolist(), heldout_error_deg.tolist()):
        g = gate.check(a, b)
        if g.trained and not e < max_error_deg:
            g = GateResult(False, f"held-out report error {e:.1f}° ≥ {max_error_deg:g}° ({g.reason})", a, b)
        elif g.trained:
            g = GateResult(True, f"{g.reason}; held-out report error {e:.1f}° (< {max_error_deg:g}°)", a, b)
        out.append(g)
    return out


@dataclass
class TrainedStack:
    """What :func:`train_stack` returns: initial and trained parameters, the loop's log, per-network
    curves (``[epochs, N]``: training loss, validation loss, validation error in degrees), the held-out
    report error ``[N]`` (degrees), each network's learnability check and whether the run was capped."""

    params0: Params
    params: Params
    log: TrainLog
    train_loss: Tensor
    val_loss: Tensor
    val_error: Tensor
    heldout_error: Tensor
    gates: list[GateResult] = field(default_factory=list)
    capped: bool = False


def train_stack(
    params: Params,
    task: AngleMemoryTask,
    train_angles: Tensor,
    val_angles: Tensor,
    heldout_angles: Tensor,
    budget: Budget,
    *,
    max_error_deg: float,
    desc: str | None = None,
    **task_kw: Any,
) -> TrainedStack:
    """Train the stack through :func:`hgutils.loop.train` (``task_kw``: :class:`SequenceTask` options),
    then score it on ``heldout_angles`` and run :func:`learnability` per network.

    ``capped``: the budget ended the run while its validation loss was still improving
    (:attr:`hgutils.loop.TrainLog.capped`, the loop's plateau rule).
    """
    st = SequenceTask(params, task, train_angles, val_angles, **task_kw)
    log = train(st, budget, desc=desc)
    p1 = st.trained_params()
    with torch.no_grad():
        _, y = report_loss(p1, task, task.inputs(heldout_angles), task.targets(heldout_angles))
        err = torch.rad2deg(task.report_error(y, heldout_angles)).mean(-1)
    gates = learnability(st.probes[0], st.probes[-1], err, max_error_deg=max_error_deg)
    return TrainedStack(
        {k: v.detach().clone() for k, v in params.items()},
        p1,
        log,
        torch.stack(st.train_loss),
        torch.stack(st.val_loss),
        torch.stack(st.val_error),
        err,
        gates,
        log.capped,
    )
