r"""A sequential angle-memory task: angles presented one after another, held over a delay, reported.

Timeline of one trial (``n_items`` angles :math:`\theta_1, \dots, \theta_K`, all in steps):

.. code-block:: text

    | item 1 (stim) | gap | item 2 (stim) | gap | ... | item K (stim) |    delay    | report |
    0                                                    stim_end      delay_end    T

Inputs :math:`u_t \in \mathbb{R}^{2K+1}`: during item :math:`k`'s presentation, channels
:math:`(2k, 2k+1)` carry :math:`(\cos\theta_k, \sin\theta_k)`; the last channel is a go cue, 1 during
the report and 0 otherwise; everything else is 0 (the delay is input-free, so the network runs
autonomously while it holds the memory). Targets :math:`y^*_t \in \mathbb{R}^{2K}`:
:math:`(\cos\theta_1, \sin\theta_1, \dots, \cos\theta_K, \sin\theta_K)` during the report, and the
loss counts the report steps only (:attr:`AngleMemoryTask.loss_mask`). The angle read out from the
outputs is :math:`\hat\theta_k = \operatorname{atan2}(y_{2k+1}, y_{2k})`, judged by the circular
error :math:`|\operatorname{wrap}(\hat\theta_k - \theta_k)|` (chance: 90° for a uniform guess).

This is the delayed-report layout of the working-memory literature (e.g. the sequence working-memory
task of Xie et al. 2022, *Science* 375:632, monkeys recalling a sequence of locations on a ring; the
NeuroGym delayed tasks, Molano-Mazón et al. 2022, arXiv:2203.15346) with every duration fixed, so that
the hidden state is a function :math:`h(\theta_1, \dots, \theta_K, t)` of the angles and time -- the
input-time manifold of MSA (Cayco-Gajic & Pellegrino, arXiv 2603.28764, §5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["AngleMemoryTask", "angle_grid", "circular_error", "sample_angles", "wrap_angle"]


@dataclass(frozen=True)
class AngleMemoryTask:
    """The timing of the task (module docstring); every duration in steps."""

    n_items: int = 2  # angles presented in sequence
    stim_steps: int = 5  # steps each angle is shown
    gap_steps: int = 5  # input-free steps between two items
    delay_steps: int = 20  # input-free steps between the last item and the report
    report_steps: int = 5  # steps of the report (go cue on, targets on)

    def __post_init__(self) -> None:
        for name in ("n_items", "stim_steps", "delay_steps", "report_steps"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"AngleMemoryTask.{name} must be an int >= 1; got {v!r}")
        if not isinstance(self.gap_steps, int) or self.gap_steps < 0:
            raise ValueError(f"AngleMemoryTask.gap_steps must be an int >= 0; got {self.gap_steps!r}")

    @property
    def n_inputs(self) -> int:
        """Input channels: a (cos, sin) pair per item and the go cue."""
        return 2 * self.n_items + 1

    @property
    def n_outputs(self) -> int:
        """Output channels: a (cos, sin) pair per item."""
        return 2 * self.n_items

    def item_onset(self, k: int) -> int:
        """First step of item ``k`` (0-based)."""
        if not 0 <= k < self.n_items:
            raise ValueError(f"item index must be in [0, {self.n_items}); got {k}")
        return k * (self.stim_steps + self.gap_steps)

    @property
    def stim_end(self) -> int:
        """First step after the last item: the delay starts here."""
        return self.item_onset(self.n_items - 1) + self.stim_steps

    @property
    def delay_end(self) -> int:
        """First step of the report."""
        return self.stim_end + self.delay_steps

    @property
    def n_steps(self) -> int:
        """Length T of a trial."""
        return self.delay_end + self.report_steps

    @property
    def loss_mask(self) -> Tensor:
        """``[T]`` bool: the report steps, where the loss is counted."""
        m = torch.zeros(self.n_steps, dtype=torch.bool)
        m[self.delay_end :] = True
        return m

    def _check_angles(self, angles: Tensor) -> Tensor:
        if not isinstance(angles, Tensor) or angles.ndim < 1 or angles.shape[-1] != self.n_items:
            shape = tuple(angles.shape) if isinstance(angles, Tensor) else type(angles).__name__
            raise ValueError(f"angles must be a tensor [..., n_items={self.n_items}]; got {shape}")
        if not angles.is_floating_point():
            raise ValueError(f"angles must be floating point; got {angles.dtype}")
        return angles

    def inputs(self, angles: Tensor) -> Tensor:
        """Input sequences ``[..., T, 2K+1]`` for angles ``[..., K]`` (differentiable in the angles)."""
        angles = self._check_angles(angles)
        T, K = self.n_steps, self.n_items
        chans = []
        for k in range(K):
            on = torch.zeros(T, dtype=angles.dtype, device=angles.device)
            a = self.item_onset(k)
            on[a : a + self.stim_steps] = 1.0
            th = angles[..., k, None]  # [..., 1]
            chans += [on * torch.cos(th), on * torch.sin(th)]
        go = torch.zeros(T, dtype=angles.dtype, device=angles.device)
        go[self.delay_end :] = 1.0
        chans.append(go.expand(*angles.shape[:-1], T))
        return torch.stack(chans, -1)

    def targets(self, angles: Tensor) -> Tensor:
        """Targets ``[..., T, 2K]``: every item's (cos, sin) during the report, 0 elsewhere."""
        angles = self._check_angles(angles)
        pair = torch.stack([torch.cos(angles), torch.sin(angles)], -1).flatten(-2)  # [..., 2K]
        mask = self.loss_mask.to(device=angles.device, dtype=angles.dtype)
        return mask[:, None] * pair[..., None, :]

    def decode(self, outputs: Tensor) -> Tensor:
        r"""Angles read from outputs ``[..., 2K]``: :math:`\operatorname{atan2}(y_{2k+1}, y_{2k})`, ``[..., K]``."""
        if outputs.shape[-1] != self.n_outputs:
            raise ValueError(f"outputs must end in {self.n_outputs} channels; got shape {tuple(outputs.shape)}")
        y = outputs.unflatten(-1, (self.n_items, 2))
        return torch.atan2(y[..., 1], y[..., 0])

    def report_error(self, outputs: Tensor, angles: Tensor) -> Tensor:
        """Mean circular error (radians) of the report, per trial: outputs ``[..., T, 2K]`` -> ``[...]``.

        Averaged over the report steps and the items.
        """
        angles = self._check_angles(angles)
        rep = outputs[..., self.delay_end :, :]
        est = self.decode(rep)  # [..., R, K]
        return circular_error(est, angles[..., None, :]).mean((-1, -2))


def wrap_angle(x: Tensor) -> Tensor:
    r"""Wrap to :math:`(-\pi, \pi]`."""
    return torch.remainder(x + math.pi, 2 * math.pi) - math.pi


def circular_error(estimate: Tensor, target: Tensor) -> Tensor:
    r"""Absolute circular difference :math:`|\operatorname{wrap}(\hat\theta - \theta)| \in [0, \pi]`."""
    return wrap_angle(estimate - target).abs()


def sample_angles(n: int, n_items: int, generator: torch.Generator | None = None) -> Tensor:
    """``[n, n_items]`` angles, independent and uniform on :math:`[0, 2\\pi)`."""
    if n < 1 or n_items < 1:
        raise ValueError(f"need n >= 1 and n_items >= 1; got n={n}, n_items={n_items}")
    return 2 * math.pi * torch.rand(n, n_items, generator=generator)


def angle_grid(n: int, n_items: int, offset: float = 0.5) -> Tensor:
    r"""The regular grid of ``n`` angles per item, :math:`2\pi(j + \text{offset})/n`, as ``[n^K, K]``.

    With the default half-step offset the grid avoids 0 (the angles are held out from nothing in
    particular: training draws angles at random, so any fixed grid is unseen). The uniform measure on
    these points is the reference measure of MSA on the torus of angles.
    """
    if n < 1 or n_items < 1:
        raise ValueError(f"need n >= 1 and n_items >= 1; got n={n}, n_items={n_items}")
    one = 2 * math.pi * (torch.arange(n, dtype=torch.float64) + offset) / n
    grids = torch.meshgrid(*([one] * n_items), indexing="ij")
    return torch.stack([g.reshape(-1) for g in grids], -1).to(torch.get_default_dtype())
