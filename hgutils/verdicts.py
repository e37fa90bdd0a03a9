r"""Verdicts of comparative claims: a difference over seeds, its standard error, and what it resolves.

Every claim a notebook judges is either *absolute* (our number against the paper's tolerance:
``holds`` / ``contradicted``) or *comparative* (model ``a`` against model ``b``, measured over
seeds). This module judges the comparative ones, with one rule everywhere.

**Differences of means** (:func:`compare_seeds`). With ``d`` the mean difference in the paper's
direction (``> 0`` is what the paper claims), ``m`` the criterion's margin (0 for "``a`` beats
``b``") and ``se`` its standard error,

.. math::

    \text{verdict} = \begin{cases}
        \texttt{holds} & d - m > k\,\mathrm{se} \\
        \texttt{contradicted} & d - m < -k\,\mathrm{se} \\
        \texttt{inconclusive} & \text{otherwise,}
    \end{cases}

with ``k = 2`` (``n_se``). *Paired* over seeds (both models ran on the same seeds and splits):
:math:`\mathrm{se} = \mathrm{sd}(a_i - b_i)/\sqrt{n}`. *Unpaired*:
:math:`\mathrm{se} = \sqrt{s_a^2/n_a + s_b^2/n_b}` (sample variances, ``ddof = 1``). The
*resolvable difference* of the design is ``k se``: a difference smaller than that cannot be told
from the seed noise at these seeds. With one seed there is no standard error and every comparison
is ``inconclusive``.

**Power** (:meth:`Difference.power`). A paper's effect ``E`` is *resolvable at these seeds* when
``E > k se``. At the measured per-seed spread ``s`` (the sd of the paired differences, or
:math:`\sqrt{s_a^2 + s_b^2}` unpaired, equal seeds per arm), the seeds needed are the smallest
``n ≥ 2`` with :math:`k s/\sqrt{n} < E`. This is the normal approximation of the 2-se rule itself: a
true difference equal to the resolvable one is resolved about half the time (80 % needs
``E ≥ 2.8 se``). :func:`target_power` reads it in one line for a gap a design's seeds were chosen to
resolve.

**Orderings** (:func:`compare_ordering`): ``a > b > c`` is judged pairwise along the order with the
same rule; it holds when every step holds, is contradicted when any step is, and is inconclusive
otherwise.

**Statistics of all seeds at once** (:func:`jackknife`): a ratio or a rank correlation computed
over every network is judged with its leave-one-seed-out jackknife standard error, same rule.

**Spread comparisons** (:func:`compare_spread`): "``a`` varies more than ``b`` over seeds" is judged
on the ratio of standard deviations :math:`r = s_a/s_b` with the F-based 95 % interval
:math:`\big[\sqrt{F/F_{0.975}(n_a-1, n_b-1)},\ \sqrt{F/F_{0.025}(n_a-1, n_b-1)}\big]`,
:math:`F = s_a^2/s_b^2` (two-sided 95 %, the analogue of 2 se; assumes normal, independent seed
values). It holds when the interval lies beyond the criterion's threshold in the claimed direction,
is contradicted when it lies beyond it in the other, and is inconclusive otherwise. A bootstrap
over 3-5 seeds has too few resamples to give an interval, hence the F-based rule.

**Runs stopped by their budget** (``inconclusive (capped)``, applied by
:attr:`hgutils.ledger.Claim.verdict`). A model's run is *capped* when it stopped because its epoch or
step budget ran out rather than by early stopping; under early stopping with patience ``p`` that
means its validation score improved within its last ``p`` epochs, i.e. it was still improving. A
claim the criterion contradicts reads ``inconclusive (capped)`` instead when a model that loses it
(the models the claim favours, or, where the ledger does not name them, any judged model) is capped:
longer training could reverse the outcome. The measured difference stays in the ledger's detail.

Each result has ``verdict``, ``detail`` (one line for the ledger, e.g.
``"inconclusive: +1.9 ± 2.2 points; resolvable ≥ 4.4 at 3 seeds"``) and ``to_dict()``; pass it to
:meth:`hgutils.ledger.Claims.add` as ``test=``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

HOLDS = "holds"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTED = "not tested at this scale"
DID_NOT_TRAIN = "inconclusive (did not train)"
#: A claim the criterion contradicts, but whose losing model stopped at its training budget while its
#: validation score was still improving (``Claim.verdict`` in :mod:`hgutils.repro`): more training could
#: change the outcome, so the run cannot contradict the paper. The measured difference stays in the detail.
CAPPED = "inconclusive (capped)"

#: Every verdict a ledger may carry, in the order the README's summary counts them.
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTED, DID_NOT_TRAIN, CAPPED)

#: Background colour of each verdict in a notebook's claims table (one palette everywhere).
VERDICT_COLOURS = {
    HOLDS: "#d4edda",
    CONTRADICTED: "#f8d7da",
    INCONCLUSIVE: "#fff3cd",
    NOT_TESTED: "#e2e3e5",
    DID_NOT_TRAIN: "#e8dcf4",
    CAPPED: "#ffe5cc",
}

N_SE = 2.0


def _values(x: Sequence[float], name: str) -> np.ndarray:
    a = np.asarray(list(x), dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name}: need a non-empty list of per-seed values; got {list(x)!r}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: per-seed values must be finite; got {a.tolist()}")
    return a


def _num(v: float, digits: int, signed: bool = False) -> str:
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


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
