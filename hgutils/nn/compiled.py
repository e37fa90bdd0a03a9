"""``torch.compile`` with an eager fallback: a compiled training path must never stop a run.

:func:`compiled` wraps a function in ``torch.compile`` (inductor). Compilation happens at the first
call; if it fails there (no C++ compiler, an unsupported operation in this torch build), the wrapper
warns once, names the cause, and runs that call and every later one eagerly. Errors raised by the
function itself (bad input) are raised as they are: the eager call that follows a failed compile
raises them again. The wrapper pickles (a forked worker sends back a model that holds one): it keeps the
function and rebuilds ``torch.compile`` on unpickling.

Compiled and eager paths compute the same formulas; inductor fuses elementwise chains into loops and
may reorder floating-point sums, so float64 results agree to rounding (tests compare them to 1e-10).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["compiled"]


class _Compiled:
    """A callable running ``torch.compile(fn)`` until a compile fails, then ``fn`` (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], dynamic: bool | None) -> None:
        self.fn, self.dynamic = fn, dynamic
        self.compiled: Callable[..., Any] | None = torch.compile(fn, dynamic=dynamic)
        self.checked = False  # whether a compiled call has succeeded once

    def __getstate__(self) -> dict[str, Any]:
        """What pickles (a forked worker sending back a model that holds this wrapper, ``copy.deepcopy``):
        the function and its settings, not the ``torch.compile`` wrapper, which does not pickle."""
        return {"fn": self.fn, "dynamic": self.dynamic, "failed": self.compiled is None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild the wrapper (compiled again at its first call), or stay eager if a compile had failed."""
        self.fn, self.dynamic, self.checked = state["fn"], state["dynamic"], False
        self.compiled = None if state["failed"] else torch.compile(self.fn, dynamic=self.dynamic)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.compiled is None:
            return self.fn(*args, **kwargs)
        if self.checked:
            return self.compiled(*args, **kwargs)
        try:
            out = self.compiled(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 -- any compile failure falls back; the eager call re-raises user errors
            self.compiled = None
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            name = getattr(self.fn, "__qualname__", repr(self.fn))
            warnings.warn(f"torch.compile of {name} failed ({first[:200]}); running it eagerly", stacklevel=2)
            return self.fn(*args, **kwargs)
        self.checked = True
        return out


def compiled(fn: Callable[..., Any], dynamic: bool | None = False) -> Callable[..., Any]:
    """``fn`` compiled with ``torch.compile(fn, dynamic=dynamic)``, falling back to ``fn`` itself (with one
    warning) when the first compile fails. ``dynamic=False`` specialises on shapes: a new batch shape
    compiles once more (torch keeps up to 8 versions per function, then runs eagerly)."""
    return _Compiled(fn, dynamic)
