"""The data curve: the paper's protocol (one initialisation per INR) at growing zoo sizes.

Nested zoos (:func:`curve_splits`: a larger zoo holds every INR of a smaller one, and the same validation and
test INRs), each model trained on each to its plateau (:func:`learning_curve`), where each model leaves chance
(:func:`above_chance`, :func:`first_above_chance`), and what a linear read-out of the rendered INRs reaches on the
same INRs (:func:`image_ceiling`: the class is there to be read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.parallel import forked_map
from hgutils.verdicts import HOLDS, compare_seeds
from hgutils.weightspace.zoo.inr import inr_reconstruct

#: the row name of :func:`image_ceiling` in a curve table or figure
IMAGE_CEILING = "rendered INR pixels (logistic regression)"
#: inverse L2 strengths the image read-out chooses from on the validation INRs
CEILING_C_GRID: tuple[float, ...] = (0.01, 0.1, 1.0)


def curve_splits(n_zoo: int, sizes: Sequence[int], holdout: int) -> tuple[cmp.Splits, dict[int, int]]:
    """The data curve's nested splits of a zoo of ``n_zoo`` INRs in a class-stratified order: the first
    ``holdout`` INRs validate, the next ``holdout`` test, the rest train in their order. The zoo of ``n``
    training INRs is the zoo's first ``2 holdout + n`` INRs (``prefix[n]``), trained on the first ``n`` training
    INRs: every zoo of the curve holds the smaller ones and the same validation and test INRs. Returns the split
    of the whole zoo and ``{n: prefix length}`` for each size (ascending, repeats merged)."""
    if holdout < 2:
        raise ValueError(f"holdout must be >= 2 INRs (validation and test each); got {holdout}")
    if not sizes or min(sizes) < 2:
        raise ValueError(f"curve sizes must be >= 2 training INRs; got {list(sizes)}")
    need = 2 * holdout + max(sizes)
    if n_zoo < need:
        raise ValueError(f"the zoo holds {n_zoo} INRs; the curve needs {need} (2 x {holdout} held out + {max(sizes)})")
    idx = torch.arange(n_zoo)
    splits = cmp.Splits(idx[2 * holdout :], idx[:holdout], idx[holdout : 2 * holdout])
    return splits, {int(n): 2 * holdout + int(n) for n in sorted(set(sizes))}


def curve_cells(
    sizes: Sequence[int], variants: Sequence[str], caps: Mapping[str, int] | None = None
) -> list[tuple[int, str]]:
    """The ``(training INRs, model)`` points of the curve: every size for every model, up to the model's cap
    (``caps[model]``: the largest size the budget affords it; a model without one runs every size)."""
    caps = dict(caps or {})
    unknown = set(caps) - set(variants)
    if unknown:
        raise ValueError(f"caps name models that are not on the curve {list(variants)}: {sorted(unknown)}")
    return [(int(n), v) for n in sorted(set(sizes)) for v in variants if n <= caps.get(v, n)]


def learning_curve(
    zoo: Any,
    labels: torch.Tensor,
    splits: cmp.Splits,
    sizes: Sequence[int],
    variants: Sequence[str],
    seeds: Sequence[int],
    settings: cmp.RunSettings | None = None,
    desc: str = "curve",
    caps: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Test accuracy of ``variants`` trained on the first ``n`` training INRs of ``splits`` for each ``n`` in
    ``sizes`` (capped at the training split, and per model at ``caps``), same validation and test INRs, each run
    through :func:`hgutils.experiments.weightspace_protocol.run_comparison` (``settings``: its
    :class:`~hgutils.experiments.weightspace_protocol.RunSettings`, whose plateau rule ends every run) on the zoo
    of that size -- the zoo's INRs that the split names with the first ``n`` training ones, in the zoo's order.
    One row per (size, model, seed): ``train_inrs``, ``zoo_inrs``, ``model``, ``seed``, ``test_accuracy``,
    ``val_accuracy``, ``train_accuracy``, ``epochs_run``, ``best_epoch``, ``stopped``, ``capped``, ``trained``,
    ``lr``, ``cpu_seconds``. The points run in ``settings.workers`` forked one-thread processes, the largest
    first."""
    settings = settings if settings is not None else cmp.RunSettings()
    top = len(splits.train)
    sizes = sorted({min(int(n), top) for n in sizes})
    if not sizes or sizes[0] < 2:
        raise ValueError(f"curve sizes must be >= 2 training INRs; got {list(sizes)}")
    cells = curve_cells(sizes, variants, {k: min(int(v), top) for k, v in (caps or {}).items()})
    ctx = _CurveContext(zoo, labels, splits, tuple(seeds), desc, replace(settings, workers=1))
    order = sorted(range(len(cells)), key=lambda i: (-cells[i][0], i))
    by_index = dict(zip(order, forked_map(lambda i: _curve_cell(ctx, cells[i]), order, settings.workers)))
    return pd.concat([by_index[i] for i in range(len(cells))], ignore_index=True)


@dataclass(frozen=True)
class _CurveContext:
    """What every point of :func:`learning_curve` reads (handed to each point, here or in forked workers)."""

    zoo: Any
    labels: torch.Tensor
    splits: cmp.Splits
    seeds: tuple[int, ...]
    desc: str
    settings: cmp.RunSettings


#: the curve's columns (of the comparison's results table, plus ``train_inrs`` and ``zoo_inrs``)
_KEEP = (
    "train_inrs",
    "zoo_inrs",
    "model",
    "seed",
    "test_accuracy",
    "val_accuracy",
    "train_accuracy",
    "epochs_run",
    "best_epoch",
    "stopped",
    "capped",
    "trained",
    "lr",
    "cpu_seconds",
)


def _curve_cell(ctx: _CurveContext, cell: tuple[int, str]) -> pd.DataFrame:
    """One ``(training INRs, model)`` point: the model on the zoo of that size, every seed."""
    n, model = cell
    sp = ctx.splits
    keep = torch.cat([sp.val, sp.test, sp.train[:n]]).sort().values  # the zoo of this size, in the zoo's order
    pos = torch.full((len(ctx.zoo),), -1, dtype=torch.long)
    pos[keep] = torch.arange(len(keep))
    sub = cmp.Splits(pos[sp.train[:n]], pos[sp.val], pos[sp.test])
    labels = ctx.labels[keep]
    run = cmp.run_comparison(
        ctx.zoo.subset(keep),
        "classification",
        labels,
        int(ctx.labels.max()) + 1,
        [model],
        sub,
        ctx.seeds,
        ctx.settings,
        desc=f"{ctx.desc} n={n} {model}",
    )
    t = run.table.assign(train_inrs=n, zoo_inrs=len(keep))
    return t[[c for c in _KEEP if c in t]]


def image_ceiling(
    zoo: Any,
    labels: torch.Tensor,
    splits: cmp.Splits,
    sizes: Sequence[int],
    c_grid: Sequence[float] = CEILING_C_GRID,
) -> pd.DataFrame:
    r"""How much of the class the INRs hold, on the curve's INRs and splits: each INR's last snapshot rendered
    on its image grid (:func:`~hgutils.weightspace.zoo.inr.inr_reconstruct`), its pixels standardised with the
    training INRs' statistics and read by a multinomial logistic regression
    :math:`p(y \mid x) = \mathrm{softmax}(Wx + b)`, L2 penalty :math:`\lVert W \rVert^2 / (2C)`, trained on the
    first ``n`` training INRs for each ``n`` in ``sizes`` (capped at the training split). :math:`C` is chosen
    from ``c_grid`` on the validation INRs, per size; the test INRs are scored once.

    A weight-space model sees the same functions through their weights, which hide them behind the
    neuron permutations and the initialisation; a reader compares its curve with this one to tell a zoo whose
    INRs do not encode the class from a model that does not read it. Rows as :func:`learning_curve`'s
    (``model`` = :data:`IMAGE_CEILING`, seed 0, ``epochs_run`` = the solver's iterations) plus ``C`` (the chosen
    inverse strength).
    """

    if not c_grid or min(c_grid) <= 0:
        raise ValueError(f"c_grid must hold positive inverse strengths; got {list(c_grid)}")
    top = len(splits.train)
    sizes = sorted({min(int(n), top) for n in sizes})
    if not sizes or sizes[0] < 2:
        raise ValueError(f"curve sizes must be >= 2 training INRs; got {list(sizes)}")
    with torch.no_grad():
        x = inr_reconstruct(zoo).flatten(1).double().numpy()
    y, va, te = labels.numpy(), splits.val.numpy(), splits.test.numpy()
    rows = []
    for n in sizes:
        tr = splits.train[:n].numpy()
        mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-8
        z = (x - mu) / sd
        fits = [LogisticRegression(C=c, max_iter=2000).fit(z[tr], y[tr]) for c in c_grid]
        val = [f.score(z[va], y[va]) for f in fits]
        best = int(np.argmax(val))
        f = fits[best]
        rows.append(
            {
                "train_inrs": n,
                "zoo_inrs": n + len(va) + len(te),
                "model": IMAGE_CEILING,
                "seed": 0,
                "test_accuracy": float(f.score(z[te], y[te])),
                "val_accuracy": float(val[best]),
                "train_accuracy": float(f.score(z[tr], y[tr])),
                "epochs_run": int(np.max(f.n_iter_)),
                "capped": bool(np.max(f.n_iter_) >= f.max_iter),
                "trained": True,
                "C": float(c_grid[best]),
            }
        )
    return pd.DataFrame(rows)


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Mean test accuracy (%) per model (rows) and training-set size (columns), with the runs that reached their
    ceiling while still improving in parentheses and the runs that did not pass the learnability gate marked
    ``(did not train)``; ``--`` where a model did not run at that size."""
    g = curve.groupby(["model", "train_inrs"], sort=False)
    mean = (100 * g["test_accuracy"].mean()).round(1).unstack()
    capped = g["capped"].sum().unstack() if "capped" in curve else mean * 0
    trained = g["trained"].all().unstack() if "trained" in curve else mean == mean
    out = mean.astype(object)
    for r in out.index:
        for c in out.columns:
            if np.isnan(mean.loc[r, c]):
                out.loc[r, c] = "--"
                continue
            k = int(capped.loc[r, c])
            note = (f" ({k} capped)" if k else "") + ("" if bool(trained.loc[r, c]) else " (did not train)")
            out.loc[r, c] = f"{mean.loc[r, c]:.1f}{note}"
    out.columns = [f"{c:,} INRs" for c in out.columns]
    return out.reset_index()


def _above(accuracies: Sequence[float], n_test: int, chance: float) -> Any:
    r""":func:`hgutils.verdicts.compare_seeds` of "test accuracy > chance" over the test INRs of every seed:
    each seed's accuracy ``p`` read as ``round(p n)`` correct of ``n`` test INRs (paired against
    ``chance``, so the standard error is the binomial :math:`\sqrt{p(1-p)/(n-1)}` pooled over seeds)."""
    hits = []
    for p in accuracies:
        k = int(round(float(p) * n_test))
        hits += [1.0] * k + [0.0] * (n_test - k)
    return compare_seeds(
        hits,
        [chance] * len(hits),
        paired=True,
        label="test accuracy - chance",
        unit="points",
        scale=100.0,
        over="test INRs",
        digits=1,
    )


def above_chance(curve: pd.DataFrame, n_test: int, chance: float = 0.1) -> pd.DataFrame:
    """Whether each (model, size) of a learning curve left chance: every seed's run passed the learnability
    gate (``trained``: its training loss left its plateau and its training accuracy beat chance by the gate's
    margin) *and* its test accuracy is above ``chance`` by the verdict rule of :mod:`hgutils.verdicts` -- more
    than 2 standard errors over the ``n_test`` test INRs (pooled over seeds). One row per point with
    ``test_accuracy`` (mean, %), ``se`` (points), ``trained``, ``verdict``, ``detail`` and ``above``."""
    if n_test < 2:
        raise ValueError(f"need at least 2 test INRs to judge chance; got {n_test}")
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must be in (0, 1); got {chance}")
    rows = []
    for (model, n), g in curve.groupby(["model", "train_inrs"], sort=False):
        test = _above(g["test_accuracy"].tolist(), n_test, chance)
        trained = bool(g["trained"].astype(bool).all())
        rows.append(
            {
                "model": model,
                "train_inrs": n,
                "test_accuracy": round(100 * float(g["test_accuracy"].mean()), 1),
                "se": round(float(test.se), 2),
                "trained": trained,
                "verdict": test.verdict,
                "detail": test.summary,
                "above": trained and test.verdict == HOLDS,
            }
        )
    return pd.DataFrame(rows)


def first_above_chance(curve: pd.DataFrame, n_test: int, chance: float = 0.1) -> pd.DataFrame:
    """Where each model of a data curve leaves chance, stated without extrapolating: per model, the sizes it ran,
    the smallest at which it is :func:`above_chance` and whether it stays above at every larger size it ran.
    ``leaves chance`` reads e.g. ``"at 2,000 training INRs"`` or ``"not within 8,000 training INRs (the largest
    run)"``."""
    judged = above_chance(curve, n_test, chance)
    rows = []
    for model, g in judged.groupby("model", sort=False):
        g = g.sort_values("train_inrs")
        ran = [int(n) for n in g["train_inrs"]]
        above = g[g["above"]]["train_inrs"]
        first = int(above.min()) if len(above) else None
        if first is None:
            says = f"not within {max(ran):,} training INRs (the largest run)"
        else:
            says = f"at {first:,} training INRs"
            later = g[g["train_inrs"] > first]
            if len(later) and not later["above"].all():
                back = ", ".join(f"{int(n):,}" for n in later[~later["above"]]["train_inrs"])
                says += f" (back at chance at {back})"
        best = g.loc[g["test_accuracy"].idxmax()]
        rows.append(
            {
                "model": model,
                "sizes run": ", ".join(f"{n:,}" for n in ran),
                "leaves chance": says,
                "best test accuracy (%)": f"{best['test_accuracy']:.1f} at {int(best['train_inrs']):,}",
            }
        )
    return pd.DataFrame(rows)
