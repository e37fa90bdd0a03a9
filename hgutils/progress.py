"""Progress bars that stay out of stored outputs, and a stopwatch of a notebook's sections.

- :func:`progress` -- tqdm, silent when not interactive or under CI; a widget in a Jupyter kernel
  with ipywidgets, a text bar otherwise, and never a warning in a stored output.
- :func:`progress_enabled` -- whether a human is watching (``HGUTILS_PROGRESS``, CI, pytest).
- :class:`Stopwatch` -- wall-clock minutes of each section of a notebook, printed as each ends.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")


def progress_enabled() -> bool:
    """True when a human is watching: not under CI/pytest and ``HGUTILS_PROGRESS`` is not ``0``.

    The runner (``python -m hgutils reproduce|sweep``) and ``make test`` set ``HGUTILS_PROGRESS=0``
    for the kernels they start, so executed notebooks carry no progress bars.
    """
    flag = os.environ.get("HGUTILS_PROGRESS")
    if flag is not None:
        return flag not in ("0", "false", "False", "")
    if os.environ.get("CI") or "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return True


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython)."""
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None else None
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def _tqdm_class(enabled: bool) -> type:
    """``tqdm.notebook.tqdm`` in a Jupyter kernel that has ipywidgets, else the text ``tqdm.std.tqdm``.

    ``tqdm.auto`` is never imported: in a kernel without ipywidgets it warns ("IProgress not found")
    on import, even for a disabled bar, and that warning lands in the stored outputs as stderr.
    """
    if enabled and _in_kernel():
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            pass
        else:
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm
    from tqdm.std import tqdm as text_tqdm

    return text_tqdm


def progress(iterable: Iterable[T] | None = None, **kwargs: Any) -> Any:
    """``tqdm(iterable, **kwargs)`` that is disabled automatically (see :func:`progress_enabled`).

    A widget in a Jupyter kernel with ipywidgets, a text bar elsewhere; no warning either way.
    """
    kwargs.setdefault("disable", not progress_enabled())
    kwargs.setdefault("leave", False)
    return _tqdm_class(not kwargs["disable"])(iterable, **kwargs)


class Stopwatch:
    """Wall-clock minutes of each notebook section, measured in this run (``lap`` ends a section)."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.minutes: dict[str, float] = {}

    def lap(self, section: str) -> None:
        """Record and print the minutes since the previous lap (or the start) as ``section``."""
        now = time.perf_counter()
        self.minutes[section] = (now - self.last) / 60
        self.last = now
        print(f"[{section}: {self.minutes[section]:.1f} min wall clock]")

    def table(self) -> pd.DataFrame:
        """Minutes per section and the total since the start (index ``section``, the last row ``total``)."""
        import pandas as pd  # here, not at the top: the training loop imports this module, and pandas is heavy

        rows = dict(self.minutes)
        rows["total"] = (time.perf_counter() - self.start) / 60
        return pd.DataFrame({"minutes": rows}).rename_axis("section")
