"""Batched training of N stacked networks: each gets exactly its own gradient and optimiser state.

The networks are stacked parameter dicts (:mod:`hgutils.weightspace.stacked_mlp`: ``W_l [N, out, in]``,
``b_l [N, out]``, or any dict of ``[N, ...]`` tensors).

- :func:`train_stacked` -- Adam / AdamW / SGD / RMSProp with per-network state, per-network learning rates and
  weight decays, snapshots on a schedule, and per-network early stopping that freezes a network
  (parameters and optimizer state) while the others continue.
- :class:`StackedTask` -- the same run as a :class:`hgutils.loop.TrainTask`; the optimiser arithmetic is
  :mod:`hgutils.weightspace.stacked_optimizers`.
- :func:`snapshot_schedule` -- uniform or log-spaced snapshot steps, always including 0 and ``steps``.

Why the batch equals N independent runs: ``loss_fn`` returns per-network losses :math:`\\ell_i`, and
the trainer differentiates :math:`\\sum_i \\ell_i`; because network ``i``'s parameters enter only
:math:`\\ell_i`, the gradient of the sum w.r.t. :math:`\\theta_i` is
:math:`\\partial \\ell_i / \\partial \\theta_i`.
Adam's state is elementwise, so per-network Adam is the same arithmetic as ``torch.optim.Adam`` on
each network alone (tested to 1e-4 relative after 100 steps); likewise RMSProp and
``torch.optim.RMSprop`` (tested to 1e-6).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from hgutils.loop import Budget, TrainTask, train
from hgutils.weightspace.stacked_mlp import Params, _check_stacked
from hgutils.weightspace.stacked_optimizers import OPTIMIZERS, update_all

__all__ = [
    "StackedTask",
    "TrainResult",
    "snapshot_schedule",
    "train_stacked",
]


# --------------------------------------------------------------------------------------------
# snapshot schedules
# --------------------------------------------------------------------------------------------
def snapshot_schedule(steps: int, T: int, kind: str = "uniform") -> list[int]:
    """``T`` distinct snapshot steps in ``[0, steps]``, always including ``0`` and ``steps``.

    ``"uniform"``: ``round(linspace(0, steps, T))``; ``"log"``: ``0`` followed by ``T-1`` log-spaced
    steps from 1 to ``steps`` (dense early, where training changes fastest), nudged to be distinct.
    """
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int; got {steps!r}")
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive int; got {T!r}")
    if T > steps + 1:
        raise ValueError(f"T={T} snapshots need at least T-1={T - 1} training steps; got steps={steps}")
    if T == 1:
        if steps != 0:
            raise ValueError(f"a schedule includes step 0 and step {steps}, so T must be >= 2; got T=1")
        return [0]
    if kind == "uniform":
        raw = [round(i * steps / (T - 1)) for i in range(T)]
    elif kind == "log":
        raw = [0] + [round(math.exp(math.log(steps) * i / (T - 2))) if T > 2 else steps for i in range(T - 1)]
    else:
        raise ValueError(f"unknown schedule kind {kind!r}; expected 'uniform' or 'log'")
    out = [0] * T
    for i in range(1, T):  # strictly increasing, then pull back under the upper bound
        out[i] = max(raw[i], out[i - 1] + 1)
    out[-1] = steps
    for i in range(T - 2, -1, -1):
        out[i] = min(out[i], out[i + 1] - 1)
    return out


def _check_snapshot_steps(snapshot_steps: Sequence[int] | None, steps: int) -> list[int]:
    if snapshot_steps is None:
        return [0, steps] if steps > 0 else [0]
    s = [int(v) for v in snapshot_steps]
    if len(s) > steps + 1:
        raise ValueError(f"T={len(s)} snapshots need at least T-1={len(s) - 1} training steps; got steps={steps}")
    if any(v < 0 or v > steps for v in s) or any(b <= a for a, b in zip(s, s[1:])):
        raise ValueError(f"snapshot_steps must be strictly increasing within [0, {steps}]; got {s}")
    return s


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """Output of :func:`train_stacked`.

    Attributes
    ----------
    params
        Final parameters (detached), same layout as the input.
    snapshots
        ``{key: [N, T, ...]}``; snapshot ``t`` holds the parameters at step ``steps[t]``, i.e. *before*
        update ``steps[t] + 1`` (step 0 = the initialisation, step ``steps`` = the final parameters).
    steps
        ``[T]`` int64 snapshot steps.
    losses
        ``[N]`` per-network loss of the final parameters.
    history
        ``[steps, N]`` loss at each step (evaluated on the parameters before that step's update).
    stopped_at
        ``[N]`` int64: the step at which ``stop_fn`` froze the network (its parameters are those of
        that step), ``-1`` if it never stopped.
    """

    params: dict[str, Tensor]
    snapshots: dict[str, Tensor]
    steps: Tensor
    losses: Tensor
    history: Tensor
    stopped_at: Tensor


def _per_net(value: float | Tensor, N: int, name: str, dtype: torch.dtype) -> float | Tensor:
    if isinstance(value, Tensor):
        if value.dim() == 0:
            return float(value)
        if value.shape != (N,):
            raise ValueError(f"{name} must be a float or a [N={N}] tensor; got shape {tuple(value.shape)}")
        return value.to(dtype)
    return float(value)


def _bcast(v: float | Tensor, like: Tensor) -> float | Tensor:
    return v.view(-1, *([1] * (like.dim() - 1))) if isinstance(v, Tensor) else v


def train_stacked(
    params: dict[str, Tensor],
    loss_fn: Callable[[dict[str, Tensor]], Tensor] | None,
    *,
    steps: int,
    optimizer: str = "adam",
    lr: float | Tensor = 1e-3,
    weight_decay: float | Tensor = 0.0,
    momentum: float = 0.0,
    snapshot_steps: Sequence[int] | None = None,
    stop_fn: Callable[[dict[str, Tensor], Tensor], Tensor] | None = None,
    desc: str | None = None,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    value_and_grad: Callable[[Params], tuple[Tensor, Params]] | None = None,
    final_loss_fn: Callable[[dict[str, Tensor]], Tensor] | None = None,
    snapshot_dtype: torch.dtype | None = None,
    alpha: float = 0.99,
) -> TrainResult:
    """Train N stacked networks at once; each network gets exactly its own gradient and optimizer state.

    Parameters
    ----------
    params
        Stacked parameters ``{"W0": [N, out, in], "b0": [N, out], ...}`` (not modified; copied).
    loss_fn
        ``loss_fn(params) -> [N]`` per-network losses; their *sum* is differentiated. Called once per
        step in order (a closure may iterate over minibatches) and once more for the final losses.
    steps
        Number of updates.
    optimizer
        ``"adam"`` (``torch.optim.Adam`` arithmetic, L2 ``weight_decay`` added to the gradient),
        ``"adamw"`` (decoupled decay, ``torch.optim.AdamW``), ``"sgd"`` (``torch.optim.SGD`` with
        ``momentum``, dampening 0) or ``"rmsprop"`` (``torch.optim.RMSprop``, not centred:
        :math:`v \\leftarrow \\alpha v + (1-\\alpha) g^2`, :math:`\\theta \\leftarrow \\theta - \\text{lr}\\,
        g / (\\sqrt{v} + \\epsilon)`, with ``momentum`` applied to :math:`g / (\\sqrt{v} + \\epsilon)`; Keras'
        RMSprop is the same arithmetic with ``alpha = rho``).
    lr
        A float or a per-network ``[N]`` tensor.
    weight_decay
        A float or a per-network ``[N]`` tensor (``>= 0``): the L2 coefficient for ``"adam"`` /
        ``"sgd"``, the decoupled decay for ``"adamw"``; a tensor trains e.g. a weight-decay ladder in
        one run.
    snapshot_steps
        Steps in ``[0, steps]`` at which to record the parameters (see :func:`snapshot_schedule`);
        default ``[0, steps]``.
    stop_fn
        ``stop_fn(params, losses) -> bool [N]``, evaluated each step on the current parameters and
        their losses; a network that becomes ``True`` is frozen from then on (parameters and
        optimizer state untouched; the step's update is not applied to it).
    value_and_grad
        Optional fused ``params -> (losses [N], grads dict)`` replacing autograd (e.g. hand-written
        SIREN gradients). Exactly one of ``loss_fn`` / ``value_and_grad`` is needed per step.
    final_loss_fn
        Loss for the reported final losses (default ``loss_fn``, or ``value_and_grad``'s losses).
    snapshot_dtype
        Storage dtype of the snapshots (e.g. ``torch.float16``); default the parameter dtype.
    alpha
        RMSProp's smoothing constant (``torch.optim.RMSprop``'s ``alpha``, Keras' ``rho``).
    """
    task = StackedTask(
        params,
        loss_fn,
        steps=steps,
        optimizer=optimizer,
        lr=lr,
        weight_decay=weight_decay,
        momentum=momentum,
        snapshot_steps=snapshot_steps,
        stop_fn=stop_fn,
        betas=betas,
        eps=eps,
        value_and_grad=value_and_grad,
        snapshot_dtype=snapshot_dtype,
        alpha=alpha,
    )
    train(task, Budget(epochs=1), desc=desc)
    return task.result(final_loss_fn)


class StackedTask(TrainTask):
    """N stacked networks trained at once (:func:`train_stacked`), for :func:`hgutils.loop.train`.

    All parameters live in one flat ``[N, D]`` buffer, so the optimiser is a handful of tensor ops
    per step (:func:`~hgutils.weightspace.stacked_optimizers.update_all`, the arithmetic of
    ``torch.optim``); each network has its own learning rate, step count and optimiser state, and can
    be frozen by ``stop_fn``. One epoch is the whole run (``steps`` steps); snapshots are recorded
    before the update of their step.
    """

    def __init__(
        self,
        params: dict[str, Tensor],
        loss_fn: Callable[[dict[str, Tensor]], Tensor] | None,
        *,
        steps: int,
        optimizer: str = "adam",
        lr: float | Tensor = 1e-3,
        weight_decay: float | Tensor = 0.0,
        momentum: float = 0.0,
        snapshot_steps: Sequence[int] | None = None,
        stop_fn: Callable[[dict[str, Tensor], Tensor], Tensor] | None = None,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        value_and_grad: Callable[[Params], tuple[Tensor, Params]] | None = None,
        snapshot_dtype: torch.dtype | None = None,
        alpha: float = 0.99,
    ) -> None:
        N = _check_stacked(params)
        if not isinstance(steps, int) or steps < 0:
            raise ValueError(f"steps must be a non-negative int; got {steps!r}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {optimizer!r}; expected one of {OPTIMIZERS}")
        if loss_fn is None and value_and_grad is None:
            raise ValueError("train_stacked needs loss_fn or value_and_grad")
        if not 0.0 <= alpha < 1.0:
            raise ValueError(f"alpha (RMSProp smoothing) must be in [0, 1); got {alpha!r}")
        self.alpha = float(alpha)
        self.snaps = _check_snapshot_steps(snapshot_steps, steps)
        self.N, self.steps, self.steps_per_epoch = N, steps, steps
        self.loss_fn, self.value_and_grad, self.stop_fn = loss_fn, value_and_grad, stop_fn
        wd = _per_net(weight_decay, N, "weight_decay", torch.float64)
        if (wd < 0).any() if isinstance(wd, Tensor) else wd < 0:
            raise ValueError(f"weight_decay must be >= 0; got {weight_decay!r}")
        if isinstance(wd, Tensor):  # an all-zero ladder takes the no-decay path
            wd = wd.to(params[next(iter(params))].device).view(N, 1) if bool((wd != 0).any()) else 0.0
        self.optimizer, self.weight_decay, self.momentum, self.betas, self.eps = (
            optimizer,
            wd,
            momentum,
            betas,
            eps,
        )
        self.keys = list(params)
        first = next(iter(params.values()))
        dtype, device = first.dtype, first.device
        self.device = device
        # one flat [N, D] buffer for all parameters: the optimizer is a handful of ops per step
        self.layout: list[tuple[str, int, int, tuple[int, ...]]] = []
        off = 0
        for k in self.keys:
            shape = tuple(params[k].shape[1:])
            n = math.prod(shape)
            self.layout.append((k, off, n, shape))
            off += n
        self.flat = torch.cat([params[k].detach().reshape(N, -1) for k in self.keys], dim=1).to(dtype).clone()
        lr_ = _per_net(lr, N, "lr", torch.float64)
        lr_vec = (
            lr_.to(device) if isinstance(lr_, Tensor) else torch.full((N,), lr_, dtype=torch.float64, device=device)
        )
        self.lr_col = lr_vec.view(N, 1)
        self.sdtype = snapshot_dtype or dtype
        self.snapshots = {
            k: torch.empty((N, len(self.snaps), *params[k].shape[1:]), dtype=self.sdtype) for k in self.keys
        }
        self.snap_index = {s: i for i, s in enumerate(self.snaps)}
        self.history = torch.empty((steps, N), dtype=dtype)
        self.stopped_at = torch.full((N,), -1, dtype=torch.int64)
        self.active = torch.ones(N, dtype=torch.bool, device=device)
        self.any_frozen = self.all_frozen = False
        self.t = torch.zeros((N, 1), dtype=torch.float64, device=device)  # per-network step counts
        self.m = torch.zeros_like(self.flat)
        self.v = torch.zeros_like(self.flat) if optimizer != "sgd" else None

    def views(self, buf: Tensor) -> dict[str, Tensor]:
        """``{key: [N, ...]}`` views into a flat ``[N, D]`` buffer."""
        return {k: buf[:, o : o + n].view(self.N, *shape) for k, o, n, shape in self.layout}

    def _loss_and_grad(self) -> tuple[Tensor, Tensor]:
        N = self.N
        if self.value_and_grad is not None:
            losses, grads = self.value_and_grad(self.views(self.flat))
            if isinstance(grads, Mapping):
                grads = torch.cat([grads[k].reshape(N, -1) for k in self.keys], dim=1)
            return losses.detach(), grads
        leaf = self.flat.detach().requires_grad_(True)
        losses = self.loss_fn(self.views(leaf))
        if losses.shape != (N,):
            raise ValueError(f"loss_fn must return per-network losses [N={N}]; got shape {tuple(losses.shape)}")
        (grads,) = torch.autograd.grad(losses.sum(), leaf)
        return losses.detach(), grads

    def _record(self, step: int) -> None:
        i = self.snap_index.get(step)
        if i is not None:
            for k, w in self.views(self.flat).items():
                self.snapshots[k][:, i] = w.to(self.sdtype)

    def batches(self, epoch: int) -> Iterable[int]:
        return range(self.steps)

    def step(self, s: int, progress: float) -> dict[str, float]:
        N, device = self.N, self.device
        self._record(s)
        losses, g = self._loss_and_grad()
        self.history[s] = losses.to(self.history.device)
        if self.stop_fn is not None:
            stop = torch.as_tensor(self.stop_fn(self.views(self.flat), losses), dtype=torch.bool, device=device)
            if stop.shape != (N,):
                raise ValueError(f"stop_fn must return bool [N={N}]; got shape {tuple(stop.shape)}")
            newly = stop & self.active
            if bool(newly.any()):
                self.stopped_at[newly.cpu()] = s
                self.active &= ~newly
                self.any_frozen = True
            if not bool(self.active.any()):  # every network converged: fill in the rest and stop
                self.all_frozen = True
                for s2 in range(s + 1, self.steps):
                    self.history[s2] = losses
                for s2 in self.snaps:
                    if s2 > s:
                        self._record(s2)
                return {}
        with torch.no_grad():
            self.t += self.active.to(self.t.dtype).view(N, 1) if self.any_frozen else 1
            if not self.any_frozen:
                self._update(self.flat, g, self.m, self.v, self.t)
            else:  # update a copy, keep the frozen networks' parameters and optimizer state
                col = self.active.view(N, 1)
                new_flat, new_m = self.flat.clone(), self.m.clone()
                new_v = self.v.clone() if self.v is not None else None
                self._update(new_flat, g, new_m, new_v, self.t.clamp(min=1))
                self.flat.copy_(torch.where(col, new_flat, self.flat))
                self.m.copy_(torch.where(col, new_m, self.m))
                if self.v is not None:
                    self.v.copy_(torch.where(col, new_v, self.v))
        return {}

    def _update(self, flat: Tensor, g: Tensor, m: Tensor, v: Tensor | None, t: Tensor) -> None:
        beta1, beta2 = self.betas
        update_all(
            flat,
            g,
            m,
            v,
            self.optimizer,
            self.lr_col,
            self.weight_decay,
            self.momentum,
            beta1,
            beta2,
            self.eps,
            t,
            self.alpha,
        )

    def should_stop(self) -> bool:
        return self.all_frozen

    def finish(self, completed: bool) -> None:
        if completed:
            self._record(self.steps)

    def result(self, final_loss_fn: Callable[[dict[str, Tensor]], Tensor] | None = None) -> TrainResult:
        """The :class:`TrainResult` of the finished run (final losses from ``final_loss_fn`` if given)."""
        final_p = self.views(self.flat.detach())
        with torch.no_grad():
            if final_loss_fn is not None:
                final = final_loss_fn(final_p)
            elif self.value_and_grad is not None:
                final = self.value_and_grad(final_p)[0]
            else:
                final = self.loss_fn(final_p)
        return TrainResult(
            params={k: w.contiguous() for k, w in final_p.items()},
            snapshots=self.snapshots,
            steps=torch.tensor(self.snaps, dtype=torch.int64),
            losses=final.detach(),
            history=self.history,
            stopped_at=self.stopped_at,
        )
