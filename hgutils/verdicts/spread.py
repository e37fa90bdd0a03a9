r"""Spread comparisons: "``a`` varies more than ``b`` over seeds", judged on the ratio of standard deviations
:math:`r = s_a/s_b` with the F-based 95 % interval
:math:`\big[\sqrt{F/F_{0.975}(n_a-1, n_b-1)},\ \sqrt{F/F_{0.025}(n_a-1, n_b-1)}\big]`, :math:`F = s_a^2/s_b^2`
(two-sided 95 %, the analogue of 2 se; assumes normal, independent seed values). It holds when the interval
lies beyond the criterion's threshold in the claimed direction, is contradicted when it lies beyond it in the
other, and is inconclusive otherwise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from hgutils.verdicts.power import Power
from hgutils.verdicts.vocabulary import CONTRADICTED, HOLDS, INCONCLUSIVE, _values


@dataclasses.dataclass(frozen=True)
class SpreadRatio:
    """Ratio of standard deviations ``sd_a / sd_b`` over seeds with its F-based 95 % interval."""

    label: str
    ratio: float
    low: float
    high: float
    n_a: int
    n_b: int
    threshold: float
    greater: bool  # the claim: ratio > threshold (True) or ratio < threshold (False)
    f_crit: float  # F_{0.975}(n_a - 1, n_b - 1)
    unit: ClassVar[str] = "x (sd ratio)"

    @property
    def verdict(self) -> str:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return INCONCLUSIVE
        claimed, against = (self.low > self.threshold, self.high < self.threshold)
        if not self.greater:
            claimed, against = (self.high < self.threshold, self.low > self.threshold)
        return HOLDS if claimed else CONTRADICTED if against else INCONCLUSIVE

    @property
    def resolvable(self) -> float:
        """The sd ratio this design would resolve in the claimed direction (threshold × √F_crit or ÷)."""
        s = math.sqrt(self.f_crit)
        return self.threshold * s if self.greater else self.threshold / s

    @property
    def summary(self) -> str:
        rel = "≥" if self.greater else "≤"
        seeds = f"{self.n_a} seeds" if self.n_a == self.n_b else f"{self.n_a} v {self.n_b} seeds"
        return (
            f"sd ratio {self.ratio:.2f} (95 % F interval {self.low:.2f}–{self.high:.2f}); "
            f"resolvable {rel} {self.resolvable:.2f} at {seeds}"
        )

    @property
    def detail(self) -> str:
        return f"{self.verdict}: {self.summary}"

    def seeds_needed(self, ratio: float, max_seeds: int = 1000) -> int | None:
        """Seeds per arm at which a true sd ratio ``ratio`` would clear the interval (``None``: never)."""
        from scipy import stats

        for n in range(2, max_seeds + 1):
            s = math.sqrt(float(stats.f.ppf(0.975, n - 1, n - 1)))
            if (self.greater and ratio > self.threshold * s) or (not self.greater and ratio < self.threshold / s):
                return n
        return None

    def power(self, ratio: float) -> Power:
        """Whether a true sd ratio ``ratio`` is resolvable at these seeds; seeds per arm needed otherwise."""
        ok = (ratio > self.resolvable) if self.greater else (ratio < self.resolvable)
        return Power(float(ratio), bool(ok), min(self.n_a, self.n_b), self.seeds_needed(ratio))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "spread_ratio",
            "label": self.label,
            "ratio": self.ratio,
            "interval": [self.low, self.high],
            "threshold": self.threshold,
            "greater": self.greater,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "resolvable": self.resolvable,
            "verdict": self.verdict,
        }


def compare_spread(
    a: Sequence[float],
    b: Sequence[float],
    *,
    threshold: float = 1.0,
    greater: bool = True,
    label: str = "sd(a) / sd(b)",
) -> SpreadRatio:
    """Judge "``sd(a) / sd(b)`` > ``threshold``" (or ``<`` with ``greater=False``) over seeds (F-based).

    Raises
    ------
    ValueError
        If a list has fewer than two values, or ``b``'s values are all equal (ratio undefined).
    """
    from scipy import stats

    xa, xb = _values(a, "a"), _values(b, "b")
    if len(xa) < 2 or len(xb) < 2:
        raise ValueError(f"a spread needs at least two seeds per model; got {len(xa)} and {len(xb)}")
    if threshold <= 0:
        raise ValueError(f"threshold must be a positive sd ratio; got {threshold}")
    sa, sb = float(np.std(xa, ddof=1)), float(np.std(xb, ddof=1))
    if sb == 0:
        raise ValueError(f"{label}: the second model's values are all equal ({xb[0]}); the sd ratio is undefined")
    d1, d2 = len(xa) - 1, len(xb) - 1
    f = (sa / sb) ** 2
    hi_q, lo_q = float(stats.f.ppf(0.975, d1, d2)), float(stats.f.ppf(0.025, d1, d2))
    low, high = math.sqrt(f / hi_q), math.sqrt(f / lo_q)
    return SpreadRatio(label, sa / sb, low, high, len(xa), len(xb), float(threshold), bool(greater), hi_q)
