"""Orderings: ``a > b > c`` judged pairwise along the order with the difference rule
(:func:`~hgutils.verdicts.difference.compare_seeds`); it holds when every step holds, is contradicted when any
step is, and is inconclusive otherwise."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from hgutils.verdicts.difference import Difference, compare_seeds
from hgutils.verdicts.power import Power, _joint_power
from hgutils.verdicts.vocabulary import CONTRADICTED, HOLDS, INCONCLUSIVE, N_SE


@dataclasses.dataclass(frozen=True)
class Ordering:
    """An ordering ``m_1 > m_2 > ...`` judged pairwise along the order."""

    order: tuple[str, ...]
    steps: tuple[Difference, ...]

    @property
    def verdict(self) -> str:
        verdicts = [s.verdict for s in self.steps]
        if all(v == HOLDS for v in verdicts):
            return HOLDS
        if any(v == CONTRADICTED for v in verdicts):
            return CONTRADICTED
        return INCONCLUSIVE

    @property
    def summary(self) -> str:
        return "; ".join(f"{s.label}: {s.verdict} ({s.summary})" for s in self.steps)

    @property
    def detail(self) -> str:
        return f"{self.verdict}: {self.summary}"

    @property
    def unit(self) -> str:
        return self.steps[0].unit

    def power(self, effects: float | Sequence[float]) -> Power:
        """Whether the paper's step sizes (one per step, or one for all) are resolvable at these seeds."""
        return _joint_power(self.steps, effects)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ordering",
            "order": list(self.order),
            "steps": [s.to_dict() for s in self.steps],
            "verdict": self.verdict,
        }


def compare_ordering(
    values: Mapping[str, Sequence[float]],
    order: Sequence[str],
    *,
    paired: bool,
    higher_is_better: bool = True,
    unit: str = "",
    scale: float = 1.0,
    n_se: float = N_SE,
    digits: int = 2,
) -> Ordering:
    """Judge "``order[0]`` better than ``order[1]`` better than ..." pairwise with :func:`compare_seeds`."""
    if len(order) < 2:
        raise ValueError(f"an ordering needs at least two models; got {list(order)}")
    missing = [m for m in order if m not in values]
    if missing:
        raise ValueError(f"no per-seed values for {missing}; have {list(values)}")
    rel = ">" if higher_is_better else "<"
    steps = tuple(
        compare_seeds(
            values[a],
            values[b],
            paired=paired,
            higher_is_better=higher_is_better,
            label=f"{a} {rel} {b}",
            unit=unit,
            scale=scale,
            n_se=n_se,
            digits=digits,
        )
        for a, b in zip(order[:-1], order[1:])
    )
    return Ordering(tuple(order), steps)
