"""Claims judged from several tests at once: an absolute criterion inside a combined claim (:class:`Absolute`)
and "at least ``require`` of these hold" (:func:`combine`, :class:`Combined`, :func:`all_of`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from hgutils.verdicts.power import Power, _joint_power
from hgutils.verdicts.vocabulary import CONTRADICTED, HOLDS, INCONCLUSIVE


@dataclasses.dataclass(frozen=True)
class Absolute:
    """An absolute criterion inside a combined claim (``holds`` / ``contradicted``, no standard error)."""

    label: str
    holds: bool
    summary: str = ""

    @property
    def verdict(self) -> str:
        return HOLDS if self.holds else CONTRADICTED

    @property
    def detail(self) -> str:
        return f"{self.verdict}: {self.summary}" if self.summary else self.verdict

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "absolute", "label": self.label, "holds": bool(self.holds), "verdict": self.verdict}


def combine(tests: Sequence[Any], require: int | None = None) -> str:
    """Verdict of "at least ``require`` of these comparisons hold" (all, by default).

    ``holds`` when at least ``require`` hold; ``contradicted`` when so many are contradicted that
    ``require`` can no longer be reached; ``inconclusive`` otherwise.
    """
    if not tests:
        raise ValueError("combine needs at least one comparison")
    need = len(tests) if require is None else int(require)
    if not 1 <= need <= len(tests):
        raise ValueError(f"require must be between 1 and {len(tests)}; got {require}")
    verdicts = [t.verdict for t in tests]
    if verdicts.count(HOLDS) >= need:
        return HOLDS
    if len(tests) - verdicts.count(CONTRADICTED) < need:
        return CONTRADICTED
    return INCONCLUSIVE


@dataclasses.dataclass(frozen=True)
class Combined:
    """Several comparisons judged together: at least ``require`` must hold (see :func:`combine`)."""

    tests: tuple[Any, ...]
    require: int

    @property
    def verdict(self) -> str:
        return combine(self.tests, self.require)

    @property
    def summary(self) -> str:
        head = f"{sum(t.verdict == HOLDS for t in self.tests)} of {len(self.tests)} hold (need {self.require})"
        return head + "; " + "; ".join(f"{t.label}: {t.verdict} ({t.summary})" for t in self.tests)

    @property
    def detail(self) -> str:
        return f"{self.verdict}: {self.summary}"

    @property
    def unit(self) -> str:
        return getattr(self.tests[0], "unit", "")

    def power(self, effects: float | Sequence[float]) -> Power:
        """Whether the paper's sizes (one per comparison, or one for all) are resolvable at these seeds."""
        return _joint_power(self.tests, effects)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "combined",
            "require": self.require,
            "tests": [t.to_dict() for t in self.tests],
            "verdict": self.verdict,
        }


def all_of(tests: Sequence[Any], require: int | None = None) -> Combined:
    """:class:`Combined` of ``tests`` (``require`` defaults to all of them)."""
    if not tests:
        raise ValueError("all_of needs at least one comparison")
    need = len(tests) if require is None else int(require)
    combine(tests, need)  # validates require
    return Combined(tuple(tests), need)
