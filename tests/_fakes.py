"""Stand-ins the training-protocol tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def diverging_above(fit: Callable[..., Any], lr_max: float) -> Callable[..., Any]:
    """``fit`` (the ``tasks.fit`` signature) that diverges -- raises the loop's non-finite-loss error --
    whenever its config's learning rate exceeds ``lr_max``, and trains as ``fit`` below it."""

    def fake(model, data, target, tr, va, te, cfg, *a, **k):
        if cfg.lr > lr_max:
            raise FloatingPointError("non-finite loss: {'task': nan}")
        return fit(model, data, target, tr, va, te, cfg, *a, **k)

    return fake
