r"""The verdict rule on a difference of means over seeds (:class:`Difference`, :func:`compare_seeds`), the one
line a ledger prints for a design's power against a gap (:func:`target_power`), and the same rule on a
statistic of all seeds at once with its leave-one-seed-out jackknife standard error (:func:`jackknife`).

With ``d`` the mean difference in the paper's direction, ``m`` the criterion's margin and ``se`` its standard
error, the verdict is ``holds`` when :math:`d - m > k\,\mathrm{se}`, ``contradicted`` when
:math:`d - m < -k\,\mathrm{se}` and ``inconclusive`` otherwise (``k = 2``). Paired:
:math:`\mathrm{se} = \mathrm{sd}(a_i - b_i)/\sqrt{n}`; unpaired: :math:`\mathrm{se} = \sqrt{s_a^2/n_a +
s_b^2/n_b}`. The full statement is the package's docstring (:mod:`hgutils.verdicts`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hgutils.verdicts.power import Power
from hgutils.verdicts.vocabulary import CONTRADICTED, HOLDS, INCONCLUSIVE, N_SE, _num, _values


@dataclasses.dataclass(frozen=True)
class Difference:
    """Mean difference of ``a`` over ``b`` in the paper's direction, with its standard error.

    ``diff > 0`` is the paper's direction; ``margin`` is the criterion's threshold on ``diff``;
    ``spread`` is the per-seed spread used for power (module docstring).
    """

    label: str
    diff: float
    se: float
    n_a: int
    n_b: int
    paired: bool
    spread: float
    margin: float = 0.0
    n_se: float = N_SE
    unit: str = ""
    digits: int = 2
    over: str = "seeds"  # what the repeated measurements are (seeds, timing repetitions)

    @property
    def n(self) -> int:
        return min(self.n_a, self.n_b)

    @property
    def resolvable(self) -> float:
        """The smallest difference this design resolves: ``n_se * se`` (``nan`` with one seed)."""
        return self.n_se * self.se

    @property
    def verdict(self) -> str:
        if not math.isfinite(self.se):
            return INCONCLUSIVE
        excess = self.diff - self.margin
        if excess > self.resolvable:
            return HOLDS
        if excess < -self.resolvable:
            return CONTRADICTED
        return INCONCLUSIVE

    def _seeds(self) -> str:
        if self.paired or self.n_a == self.n_b:
            return f"{self.n} {self.over}"
        return f"{self.n_a} v {self.n_b} {self.over}"

    @property
    def summary(self) -> str:
        """``+1.9 ± 2.2 points; resolvable ≥ 4.4 at 3 seeds`` (± is one standard error)."""
        u = f" {self.unit}" if self.unit else ""
        d = self.digits
        m = f" (margin {_num(self.margin, d)})" if self.margin else ""
        if not math.isfinite(self.se):
            return f"{_num(self.diff, d, True)}{u}{m}; no standard error at {self._seeds()}"
        return (
            f"{_num(self.diff, d, True)} ± {_num(self.se, d)}{u}{m}; "
            f"resolvable ≥ {_num(self.resolvable, d)} at {self._seeds()}"
        )

    @property
    def detail(self) -> str:
        return f"{self.verdict}: {self.summary}"

    def power(self, effect: float) -> Power:
        """Whether ``effect`` (same units as ``diff``) is resolvable at these seeds; seeds needed otherwise."""
        effect = float(effect)
        ok = bool(math.isfinite(self.se) and effect > self.resolvable)
        need = None
        if effect > 0 and math.isfinite(self.spread) and self.spread > 0:
            need = max(2, math.floor((self.n_se * self.spread / effect) ** 2) + 1)
        elif effect > 0 and self.spread == 0:
            need = 2
        return Power(effect, ok, self.n, need)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "difference",
            "label": self.label,
            "diff": self.diff,
            "se": self.se,
            "resolvable": self.resolvable,
            "margin": self.margin,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "paired": self.paired,
            "unit": self.unit,
            "verdict": self.verdict,
        }


def compare_seeds(
    a: Sequence[float],
    b: Sequence[float],
    *,
    paired: bool,
    higher_is_better: bool = True,
    margin: float = 0.0,
    label: str = "a - b",
    unit: str = "",
    scale: float = 1.0,
    n_se: float = N_SE,
    digits: int = 2,
    over: str = "seeds",
) -> Difference:
    """Judge "``a`` beats ``b``" from per-seed values (module docstring for the rule).

    ``a`` and ``b`` are one value per seed (for ``paired``, in the same seed order). With
    ``higher_is_better=False`` the difference is ``b - a`` so that ``> 0`` still means "``a`` is
    better". ``scale`` multiplies the values first (100 for accuracies in points); ``margin`` is in
    the scaled units; ``over`` names the repeated measurements in the ledger text ("seeds").

    Raises
    ------
    ValueError
        If a list is empty or not finite, or ``paired`` lists differ in length.
    """
    xa, xb = scale * _values(a, "a"), scale * _values(b, "b")
    sign = 1.0 if higher_is_better else -1.0
    if paired:
        if len(xa) != len(xb):
            raise ValueError(f"paired comparison needs one value per seed for both; got {len(xa)} and {len(xb)}")
        d = sign * (xa - xb)
        sd = float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
        se = sd / math.sqrt(len(d)) if len(d) > 1 else math.nan
        return Difference(label, float(d.mean()), se, len(d), len(d), True, sd, margin, n_se, unit, digits, over)
    va = float(np.var(xa, ddof=1)) if len(xa) > 1 else math.nan
    vb = float(np.var(xb, ddof=1)) if len(xb) > 1 else math.nan
    se = math.sqrt(va / len(xa) + vb / len(xb)) if len(xa) > 1 and len(xb) > 1 else math.nan
    spread = math.sqrt(va + vb) if math.isfinite(se) else math.nan
    diff = sign * float(xa.mean() - xb.mean())
    return Difference(label, diff, se, len(xa), len(xb), False, spread, margin, n_se, unit, digits, over)


def target_power(d: Difference, gap: float) -> str:
    """One line for a ledger: whether a ``gap`` difference (in ``d``'s units) is resolved at ``d``'s seeds
    and measured spread (:meth:`Difference.power`: resolved when ``gap > n_se se``), or the seeds it would
    need at that spread.

    The design's power against the gap its seeds were chosen to resolve (beside the paper's own effect,
    where it reports one): ``"resolvable at 3 seeds"`` or ``"not resolvable at 3 seeds; needs 5 at this
    spread"`` (``more`` when no spread was measured or ``gap`` is not positive).
    """
    p = d.power(gap)
    if p.resolvable:
        return f"resolvable at {p.seeds_run} seeds"
    return f"not resolvable at {p.seeds_run} seeds; needs {p.seeds_needed or 'more'} at this spread"


def jackknife(
    full: float,
    leave_one_out: Sequence[float],
    *,
    margin: float = 0.0,
    label: str = "statistic",
    unit: str = "",
    n_se: float = N_SE,
    digits: int = 3,
    over: str = "seeds",
) -> Difference:
    r"""Judge a statistic computed from all seeds at once (a ratio, a rank correlation over a similarity
    matrix) with its leave-one-seed-out jackknife standard error.

    ``full`` is the statistic on every seed (in the paper's direction: ``> margin`` is the claim);
    ``leave_one_out[i]`` the same statistic with seed ``i`` left out. Tukey's jackknife:
    :math:`\mathrm{se}^2 = \frac{n-1}{n}\sum_i (\theta_{(-i)} - \bar\theta_{(\cdot)})^2`. The verdict
    rule is :class:`Difference`'s; the per-seed spread for power is :math:`\mathrm{se}\sqrt{n}`.
    """
    loo = _values(leave_one_out, "leave_one_out")
    n = len(loo)
    if n < 2:
        raise ValueError(f"a jackknife needs at least two seeds; got {n}")
    se = math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))
    return Difference(label, float(full), se, n, n, True, se * math.sqrt(n), margin, n_se, unit, digits, over)
