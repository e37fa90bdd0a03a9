r"""Power: whether a paper's effect is resolvable at the seeds a run had, and the seeds it would need.

A paper's effect ``E`` is *resolvable at these seeds* when ``E > k se``. At the measured per-seed spread ``s``
the seeds needed are the smallest ``n ≥ 2`` with :math:`k s/\sqrt{n} < E` (the normal approximation of the
2-se rule itself; :mod:`hgutils.verdicts`). For several comparisons at once (an ordering, a combined claim)
the design resolves them when it resolves every one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


@dataclasses.dataclass(frozen=True)
class Power:
    """Whether a difference of ``effect`` would be resolved at the seeds run, and the seeds needed.

    For an ordering or several comparisons, ``effect`` lists the paper's size of each step, and the
    design resolves them when it resolves every one (``seeds_needed``: the most any step needs).
    """

    effect: float | tuple[float, ...]
    resolvable: bool
    seeds_run: int
    seeds_needed: int | None  # None when the effect is not positive or no spread was measured

    def text(self, unit: str = "", digits: int = 2) -> str:
        u = f" {unit}" if unit else ""
        if isinstance(self.effect, tuple):
            e = ", ".join(f"{x:.{digits}g}" for x in self.effect) + u
            what = "differences of the paper's size"
        else:
            e = f"{self.effect:.{digits}f}{u}"
            what = "a difference of the paper's size"
        verb = "are" if isinstance(self.effect, tuple) else "is"
        if self.resolvable:
            return f"{what} ({e}) {verb} resolvable at {self.seeds_run} seeds"
        need = f"{self.seeds_needed} seeds" if self.seeds_needed else "more seeds than any budget"
        return f"{what} ({e}) {verb} not resolvable at {self.seeds_run} seeds; at the measured spread it needs {need}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _joint_power(tests: Sequence[Any], effects: float | Sequence[float]) -> Power:
    """Power of several comparisons at once: each against its own paper effect (or one for all)."""
    if isinstance(effects, (int, float)):
        effects = [float(effects)] * len(tests)
    effects = [float(e) for e in effects]
    if len(effects) != len(tests):
        raise ValueError(f"need one paper effect per comparison ({len(tests)}); got {len(effects)}")
    parts = [t.power(e) for t, e in zip(tests, effects)]
    needs = [p.seeds_needed for p in parts]
    need = None if any(n is None for n in needs) else max(needs)
    return Power(tuple(effects), all(p.resolvable for p in parts), min(p.seeds_run for p in parts), need)
