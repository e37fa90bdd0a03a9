"""The optimiser step of N stacked networks at once: ``torch.optim``'s arithmetic on flat ``[N, D]`` buffers.

:func:`update_all` applies Adam, AdamW, SGD (with momentum) or RMSProp to every network's row of one flat
parameter buffer, with per-network learning rates, weight decays and step counts (bias corrections per
network). Adam's state is elementwise, so per-network Adam is the same arithmetic as
``torch.optim.Adam`` on each network alone; likewise RMSProp and ``torch.optim.RMSprop``
(:func:`hgutils.weightspace.batched_training.train_stacked`, which drives it, is tested against them).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["OPTIMIZERS", "update_all"]

OPTIMIZERS: tuple[str, ...] = ("adam", "adamw", "sgd", "rmsprop")


def update_all(
    p: Tensor,
    g: Tensor,
    m: Tensor,
    v: Tensor | None,
    optimizer: str,
    lr_col: Tensor,
    wd: float | Tensor,
    momentum: float,
    beta1: float,
    beta2: float,
    eps: float,
    t: Tensor,
    alpha: float = 0.99,
) -> None:
    """One in-place optimizer step on flat ``[N, D]`` buffers, the arithmetic of ``torch.optim``.

    ``lr_col`` is the ``[N, 1]`` float64 learning rate, ``wd`` a float or the ``[N, 1]`` float64 weight
    decay, ``t`` the ``[N, 1]`` float64 (1-based) step count; bias corrections are computed in float64
    per network, as ``torch.optim.Adam`` does in Python floats. For ``"rmsprop"``, ``v`` is the square
    average and ``m`` the momentum buffer (``torch.optim.RMSprop``, ``centered=False``).
    """
    lr_p = lr_col.to(p.dtype)
    per_net = isinstance(wd, Tensor)

    def l2(grad: Tensor) -> Tensor:  # grad + wd * p
        return grad.addcmul(p, wd.to(p.dtype)) if per_net else grad.add(p, alpha=wd)

    if optimizer == "sgd":
        if per_net or wd:
            g = l2(g)
        if momentum:
            m.mul_(momentum).add_(g)
            g = m
        p.sub_(g * lr_p)
        return
    if optimizer == "rmsprop":
        if per_net or wd:
            g = l2(g)
        v.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        step = g / v.sqrt().add_(eps)
        if momentum:
            m.mul_(momentum).add_(step)
            step = m
        p.sub_(step * lr_p)
        return
    if optimizer == "adamw" and (per_net or wd):
        p.mul_((1 - lr_col * wd).to(p.dtype))
    elif per_net or wd:
        g = l2(g)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    step_size = (lr_col / (1 - beta1**t)).to(p.dtype)
    bc2_sqrt = torch.sqrt(1 - beta2**t).to(p.dtype)
    denom = (v.sqrt() / bc2_sqrt).add_(eps)
    p.sub_(m / denom * step_size)
