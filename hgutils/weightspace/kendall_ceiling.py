r"""Kendall's :math:`\tau` of predicted against measured accuracies, its jackknife standard error, the
ceiling label noise puts on it, and verdicts against such a reference.

- :func:`kendall_jackknife` -- Kendall's :math:`\tau_b` with its leave-one-network-out standard error.
- :func:`label_noise_ceiling` -- how well any predictor of test accuracy can rank networks when the
  label is measured on a finite test set.
- :func:`versus_reference` -- a :class:`hgutils.verdicts.Difference` of per-seed values against a
  reference that carries its own standard error (for ``Claims.add(test=...)``).

**Label-noise ceiling.** A network's label is its accuracy on :math:`m` test images,
:math:`y_i = p_i + e_i` with :math:`p_i` its accuracy on the image distribution. Two disjoint halves
give :math:`y^a_i, y^b_i` with independent noise of twice the variance. Their Kendall
:math:`\tau_{ab}` is measured without any model. Under a bivariate-normal approximation
(:math:`\tau = \tfrac{2}{\pi}\arcsin\rho`), the halves' correlation is
:math:`\rho_{ab} = \sin(\pi\tau_{ab}/2)`, the full set's reliability is the Spearman--Brown
:math:`R = 2\rho_{ab}/(1+\rho_{ab})`, and a predictor that knew every :math:`p_i` exactly would reach
:math:`\tau^\ast = \tfrac{2}{\pi}\arcsin\sqrt{R}` against the full-set labels: the ceiling.
:math:`\tau_{ab} \le \tau^\ast`; without noise both are 1.

The in-zoo baselines these are compared with (gradient-boosted trees on weight statistics) are
:mod:`hgutils.weightspace.in_zoo_baselines`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from torch import Tensor

from hgutils.verdicts import N_SE, Difference

__all__ = ["NoiseCeiling", "kendall_jackknife", "label_noise_ceiling", "versus_reference"]


# --------------------------------------------------------------------------------------------
# Kendall tau with its jackknife, the label-noise ceiling
# --------------------------------------------------------------------------------------------
def _as_1d(x: np.ndarray | Tensor) -> np.ndarray:
    return np.asarray(x.cpu() if isinstance(x, Tensor) else x, dtype=np.float64).ravel()


def _tau_b(S: np.ndarray | float, nx: np.ndarray | float, ny: np.ndarray | float, m: int) -> np.ndarray:
    n0 = m * (m - 1) / 2
    den = np.asarray((n0 - nx) * (n0 - ny), dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, S / np.sqrt(np.where(den > 0, den, 1.0)), np.nan)


def _tau_and_leave_one_out(a: np.ndarray, b: np.ndarray, block: int = 1024) -> tuple[float, np.ndarray]:
    """Kendall's tau-b of ``a, b`` and the tau-b of every leave-one-out subset (one pass over the pairs)."""
    n = a.size
    s_row, tx_row, ty_row = np.empty(n), np.empty(n), np.empty(n)
    for s in range(0, n, block):
        sa = np.sign(a[s : s + block, None] - a[None, :])
        sb = np.sign(b[s : s + block, None] - b[None, :])
        s_row[s : s + block] = (sa * sb).sum(1)
        tx_row[s : s + block] = (sa == 0).sum(1) - 1  # ties with the others (not itself)
        ty_row[s : s + block] = (sb == 0).sum(1) - 1
    S, NX, NY = s_row.sum() / 2, tx_row.sum() / 2, ty_row.sum() / 2
    return float(_tau_b(S, NX, NY, n)), _tau_b(S - s_row, NX - tx_row, NY - ty_row, n - 1)


def _jackknife_se(loo: np.ndarray) -> float:
    n = loo.size
    if not np.all(np.isfinite(loo)):
        return math.nan
    return math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))


def kendall_jackknife(x: np.ndarray | Tensor, y: np.ndarray | Tensor, se: bool = True) -> tuple[float, float]:
    r"""Kendall's :math:`\tau_b` of ``x`` and ``y`` and its leave-one-out jackknife standard error.

    :math:`\tau_b = S / \sqrt{(n_0 - n_x)(n_0 - n_y)}` with :math:`S` concordant minus discordant
    pairs, :math:`n_0 = n(n-1)/2` and :math:`n_x, n_y` the tied pairs (scipy's default). Leaving
    network :math:`i` out removes its row of pair signs, so every leave-one-out :math:`\tau_b` comes
    from one pass over the pairs; the standard error is Tukey's
    :math:`\sqrt{\tfrac{n-1}{n}\sum_i (\tau_{(-i)} - \bar\tau)^2}`. ``nan`` when a side is constant;
    with ``se=False`` only :math:`\tau_b` (and ``nan``).
    """
    a, b = _as_1d(x), _as_1d(y)
    if a.size != b.size:
        raise ValueError(f"x and y must have the same size; got {a.size} and {b.size}")
    if a.size < 3:
        raise ValueError(f"Kendall's tau with a jackknife needs at least 3 networks; got {a.size}")
    full, loo = _tau_and_leave_one_out(a, b)
    return full, (_jackknife_se(loo) if se else math.nan)


def _spearman_brown_tau(tau_halves: float | np.ndarray) -> np.ndarray:
    r"""Ceiling :math:`\tfrac{2}{\pi}\arcsin\sqrt{2\rho/(1+\rho)}`, :math:`\rho = \sin(\pi\tau/2)`
    (0 where :math:`\rho \le 0`)."""
    rho = np.sin(np.pi * np.asarray(tau_halves, dtype=np.float64) / 2)
    rel = np.clip(2 * rho / (1 + np.where(rho > -1, rho, 0.0)), 0.0, 1.0)
    return np.where(rho > 0, 2 / np.pi * np.arcsin(np.sqrt(rel)), 0.0)


@dataclasses.dataclass(frozen=True)
class NoiseCeiling:
    r"""The label-noise ceiling of a test-accuracy label (module docstring).

    ``tau_halves`` (``se_halves``): Kendall :math:`\tau_b` between the accuracies on two disjoint
    halves of the test set, with its jackknife standard error over networks; ``tau`` (``se``): the
    ceiling for the full test set (Spearman--Brown, normal approximation; jackknife of the same
    map). ``n_networks``: the networks it was measured on.
    """

    tau_halves: float
    se_halves: float
    tau: float
    se: float
    n_networks: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def label_noise_ceiling(acc_a: np.ndarray | Tensor, acc_b: np.ndarray | Tensor) -> NoiseCeiling:
    r"""The label-noise ceiling from each network's accuracies on two disjoint test halves.

    Pass the test networks of the split (``zoo.meta["test_acc_a"][splits.test]``, ...): the ceiling
    then refers to the networks every model's :math:`\tau` is measured on.
    """
    a, b = _as_1d(acc_a), _as_1d(acc_b)
    if a.shape != b.shape:
        raise ValueError(f"acc_a and acc_b must have one value per network each; got {a.shape} and {b.shape}")
    if a.size < 3:
        raise ValueError(f"the ceiling needs at least 3 networks; got {a.size}")
    if not (np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1))):
        raise ValueError("accuracies must lie in [0, 1]")
    tau_h, loo = _tau_and_leave_one_out(a, b)
    return NoiseCeiling(
        tau_h, _jackknife_se(loo), float(_spearman_brown_tau(tau_h)), _jackknife_se(_spearman_brown_tau(loo)), a.size
    )


# --------------------------------------------------------------------------------------------
# verdicts against a reference
# --------------------------------------------------------------------------------------------
def versus_reference(
    values: Sequence[float],
    reference: float,
    reference_se: float,
    *,
    higher_is_better: bool = True,
    label: str = "model - reference",
    n_se: float = N_SE,
    digits: int = 3,
    unit: str = "",
) -> Difference:
    r"""Judge "per-seed ``values`` beat ``reference``" when the reference is one number with its own
    standard error (the label-noise ceiling, a jackknifed statistic): unpaired,
    :math:`\mathrm{se} = \sqrt{s^2/n + \mathrm{se}_\text{ref}^2}`, the rule of
    :class:`hgutils.verdicts.Difference`. With ``higher_is_better=False`` the claim is "``values``
    below ``reference``" (the difference is ``reference - mean``)."""
    v = np.asarray(list(values), dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be a non-empty list of finite per-seed values; got {list(values)!r}")
    if not (math.isfinite(reference) and math.isfinite(reference_se) and reference_se >= 0):
        raise ValueError(f"reference and its se must be finite (se >= 0); got {reference}, {reference_se}")
    var = float(np.var(v, ddof=1)) if v.size > 1 else math.nan
    se = math.sqrt(var / v.size + reference_se**2) if v.size > 1 else math.nan
    diff = float(v.mean() - reference) if higher_is_better else float(reference - v.mean())
    spread = se * math.sqrt(v.size) if math.isfinite(se) else math.nan
    return Difference(label, diff, se, v.size, 1, False, spread, 0.0, n_se, unit, digits)
