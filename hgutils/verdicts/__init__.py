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

The package, by job: :mod:`.vocabulary` (the verdicts, their colours, ``k``), :mod:`.power`
(:class:`Power`), :mod:`.difference` (:class:`Difference`, :func:`compare_seeds`, :func:`target_power`,
:func:`jackknife`), :mod:`.ordering` (:class:`Ordering`, :func:`compare_ordering`), :mod:`.spread`
(:class:`SpreadRatio`, :func:`compare_spread`) and :mod:`.combined` (:class:`Absolute`, :func:`combine`,
:class:`Combined`, :func:`all_of`); every name is imported from ``hgutils.verdicts`` itself.
"""

from __future__ import annotations

from hgutils.verdicts.combined import Absolute, Combined, all_of, combine
from hgutils.verdicts.difference import Difference, compare_seeds, jackknife, target_power
from hgutils.verdicts.ordering import Ordering, compare_ordering
from hgutils.verdicts.power import Power
from hgutils.verdicts.spread import SpreadRatio, compare_spread
from hgutils.verdicts.vocabulary import (
    CAPPED,
    CONTRADICTED,
    DID_NOT_TRAIN,
    HOLDS,
    INCONCLUSIVE,
    N_SE,
    NOT_TESTED,
    VERDICT_COLOURS,
    VERDICTS,
)

__all__ = [
    "CAPPED",
    "CONTRADICTED",
    "DID_NOT_TRAIN",
    "HOLDS",
    "INCONCLUSIVE",
    "NOT_TESTED",
    "N_SE",
    "VERDICTS",
    "VERDICT_COLOURS",
    "Absolute",
    "Combined",
    "Difference",
    "Ordering",
    "Power",
    "SpreadRatio",
    "all_of",
    "combine",
    "compare_ordering",
    "compare_seeds",
    "compare_spread",
    "jackknife",
    "target_power",
]
