"""The zoo-size learning curve: where each cheap model starts to generalise, how far the CPU regime is
from the paper's 45,000 training INRs, and what a linear read-out of the rendered INRs reaches on the same
INRs (:func:`image_ceiling`: the class is there to be read)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.nb01_inr_classification.preset import INR_PAPER_KEYS, PAPER, PAPER_TRAIN_INRS
from hgutils.parallel import forked_map
from hgutils.plotting import use_style
from hgutils.verdicts import HOLDS, compare_seeds
from hgutils.weightspace.zoo.inr import inr_reconstruct

#: the row name of :func:`image_ceiling` in a curve table or figure
IMAGE_CEILING = "rendered INR pixels (logistic regression)"
#: inverse L2 strengths the image read-out chooses from on the validation INRs
CEILING_C_GRID: tuple[float, ...] = (0.01, 0.1, 1.0)


def curve_splits(splits: cmp.Splits, n_main: int, n_curve: int) -> cmp.Splits:
    """The main zoo's split with the curve zoo's extra INRs ``n_main .. n_curve - 1`` appended to its
    training INRs; the validation and test INRs stay the main table's (:func:`~.zoos.inr_zoos`)."""
    if n_curve < n_main:
        raise ValueError(f"the curve zoo ({n_curve} INRs) must hold the main zoo ({n_main} INRs)")
    used = torch.cat([splits.train, splits.val, splits.test])
    if len(used) and int(used.max()) >= n_main:
        raise ValueError(f"the split names INR {int(used.max())}, outside the main zoo's {n_main}")
    extra = torch.arange(n_main, n_curve, dtype=splits.train.dtype)
    return cmp.Splits(torch.cat([splits.train, extra]), splits.val, splits.test)


def _curve_sizes(sizes: Sequence[int], n_train: int) -> list[int]:
    """The curve's training-set sizes, capped at the ``n_train`` training INRs, repeats merged, ascending."""
    out = sorted({min(int(n), n_train) for n in sizes})
    if not out or out[0] < 2:
        raise ValueError(f"curve sizes must be >= 2 training INRs; got {list(sizes)}")
    return out


def learning_curve(
    zoo: Any,
    labels: torch.Tensor,
    splits: cmp.Splits,
    sizes: Sequence[int],
    variants: Sequence[str],
    seeds: Sequence[int],
    settings: cmp.RunSettings | None = None,
    desc: str = "curve",
    both_ways: bool = False,
) -> pd.DataFrame:
    """Test accuracy of ``variants`` trained on the first ``n`` training INRs of ``splits`` for each
    ``n`` in ``sizes`` (capped at the training split), same validation and test INRs, through
    :func:`hgutils.experiments.weightspace_protocol.run_comparison` (``settings``: its
    :class:`~hgutils.experiments.weightspace_protocol.RunSettings`).
    One row per (size, model, seed) with ``train_inrs``, ``test_accuracy``, ``train_accuracy``,
    ``epochs_run``, ``capped``, ``trained``, ``augment`` (the training augmentation, ``"off"``: none)
    and ``augmented``.

    ``both_ways``: every model runs twice at every size, on the same split, seeds and budget -- without
    weight-space augmentation (``augment=()``) and with it (``augment=variants``: each model opts in with
    its recipe's magnitudes, or the references' where its recipe has none); ``settings.augment`` is
    replaced."""
    settings = settings if settings is not None else cmp.RunSettings()
    sizes = _curve_sizes(sizes, len(splits.train))
    ways = [(False, ()), (True, tuple(variants))] if both_ways else [(None, None)]
    cells = [(n, on, augment) for n in sizes for on, augment in ways]
    workers = settings.workers
    # one process per cell (its runs in order inside it, so workers=1 there), the largest cells handed out first
    ctx = _CurveContext(zoo, labels, splits, tuple(variants), tuple(seeds), desc, replace(settings, workers=1))
    order = sorted(range(len(cells)), key=lambda i: -cells[i][0])
    by_index = dict(zip(order, forked_map(lambda i: _curve_cell(ctx, cells[i]), order, workers)))
    frames = [by_index[i] for i in range(len(cells))]
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class _CurveContext:
    """What every cell of :func:`learning_curve` reads (handed to each cell, here or in forked workers)."""

    zoo: Any
    labels: torch.Tensor
    splits: cmp.Splits
    variants: tuple[str, ...]
    seeds: tuple[int, ...]
    desc: str
    settings: cmp.RunSettings


#: the curve's columns (of the comparison's results table, plus ``train_inrs`` and ``augmented``)
_KEEP = (
    "train_inrs",
    "model",
    "seed",
    "augmented",
    "augment",
    "test_accuracy",
    "train_accuracy",
    "epochs_run",
    "capped",
    "trained",
)


def _curve_cell(ctx: _CurveContext, cell: tuple[int, bool | None, Any]) -> pd.DataFrame:
    """One ``(training INRs, augmented, augment)`` cell of the curve: every model and seed on the first
    ``n`` training INRs, through :func:`~hgutils.experiments.weightspace_protocol.run_comparison`."""
    n, on, augment = cell
    sub = cmp.Splits(ctx.splits.train[:n], ctx.splits.val, ctx.splits.test)
    settings = ctx.settings if augment is None else replace(ctx.settings, augment=augment)
    run = cmp.run_comparison(
        ctx.zoo,
        "classification",
        ctx.labels,
        int(ctx.labels.max()) + 1,
        ctx.variants,
        sub,
        ctx.seeds,
        settings,
        desc=f"{ctx.desc} n={n}" + ("" if on is None else (" aug" if on else " no aug")),
    )
    t = run.table.assign(train_inrs=n)
    t["augmented"] = t["augment"] != "off" if "augment" in t else False
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
    (``model`` = :data:`IMAGE_CEILING`, seed 0, not augmented, ``epochs_run`` = the solver's iterations) plus
    ``C`` (the chosen inverse strength).
    """

    if not c_grid or min(c_grid) <= 0:
        raise ValueError(f"c_grid must hold positive inverse strengths; got {list(c_grid)}")
    sizes = _curve_sizes(sizes, len(splits.train))
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
                "model": IMAGE_CEILING,
                "seed": 0,
                "augmented": False,
                "augment": "off",
                "test_accuracy": float(f.score(z[te], y[te])),
                "train_accuracy": float(f.score(z[tr], y[tr])),
                "epochs_run": int(np.max(f.n_iter_)),
                "capped": bool(np.max(f.n_iter_) >= f.max_iter),
                "trained": True,
                "C": float(c_grid[best]),
            }
        )
    return pd.DataFrame(rows)


def plot_learning_curve(
    curve: pd.DataFrame, dataset: str = "mnist", title: str = "", ceiling: pd.DataFrame | None = None
) -> plt.Figure:
    """Test accuracy (%) against training INRs (log axis), one line per model (mean over seeds),
    chance as a dotted line, the paper's 45k-INR numbers as stars (from other INR sets for NFN_NP) and,
    given ``ceiling`` (:func:`image_ceiling`), the rendered images' read-out as a dashed black line."""
    use_style()
    fig, ax = plt.subplots(figsize=(8, 4))
    for name, g in curve.groupby("model", sort=False):
        m = g.groupby("train_inrs")["test_accuracy"].mean() * 100
        ax.plot(m.index, m.values, marker="o", label=name)
    if ceiling is not None and len(ceiling):
        ax.plot(ceiling["train_inrs"], 100 * ceiling["test_accuracy"], "k--", marker="s", ms=4, label=IMAGE_CEILING)
    ax.axhline(10.0, ls=":", color="grey", lw=1, label="chance (10 %)")
    key = INR_PAPER_KEYS.get(dataset)
    if key:
        for i, (name, (mu, _)) in enumerate(PAPER[key].items()):
            ax.scatter([PAPER_TRAIN_INRS], [mu], marker="*", s=120, zorder=3, color=f"C{6 + i}")
            ax.annotate(
                f"paper {name} {mu}",
                (PAPER_TRAIN_INRS, mu),
                textcoords="offset points",
                xytext=(-10, 6),
                ha="right",
                fontsize=7,
            )
    ax.set_xscale("log")
    ticks = sorted(set(curve["train_inrs"].tolist()) | ({PAPER_TRAIN_INRS} if key else set()))
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("training INRs")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title or f"{dataset}: zoo-size learning curve (one initialisation per INR)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Mean test accuracy (%) per model (rows) and training-set size (columns), with the run counts
    that hit their epoch cap in parentheses when any did. A curve run ``both_ways`` has one row per
    model and way (``"DWSNet (augmented)"`` beside ``"DWSNet"``)."""
    if "augmented" in curve and curve["augmented"].nunique() > 1:
        curve = curve.assign(model=curve["model"] + curve["augmented"].map({True: " (augmented)", False: ""}))
    g = curve.groupby(["model", "train_inrs"], sort=False)
    mean = (100 * g["test_accuracy"].mean()).round(1).unstack()
    capped = g["capped"].sum().unstack() if "capped" in curve else None
    out = mean.astype(object)
    if capped is not None:
        for r in out.index:
            for c in out.columns:
                k = int(capped.loc[r, c]) if not np.isnan(capped.loc[r, c]) else 0
                out.loc[r, c] = f"{mean.loc[r, c]:.1f}" + (f" ({k} capped)" if k else "")
    out.columns = [f"{c} INRs" for c in out.columns]
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
    """Whether each (model, augmentation, size) of a learning curve left chance: every seed's run passed
    the learnability gate (``trained``: its training loss left its plateau and its training accuracy beat
    chance by the gate's margin) *and* its test accuracy is above ``chance`` by the verdict rule of
    :mod:`hgutils.verdicts` -- more than 2 standard errors over the ``n_test`` test INRs (pooled over
    seeds). One row per cell with ``test_accuracy`` (mean, %), ``trained``, ``verdict``, ``detail`` and
    ``above``."""
    if n_test < 2:
        raise ValueError(f"need at least 2 test INRs to judge chance; got {n_test}")
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must be in (0, 1); got {chance}")
    keys = ["model", "augmented", "train_inrs"] if "augmented" in curve else ["model", "train_inrs"]
    rows = []
    for key, g in curve.groupby(keys, sort=False):
        test = _above(g["test_accuracy"].tolist(), n_test, chance)
        trained = bool(g["trained"].astype(bool).all())
        rows.append(
            {
                **dict(zip(keys, key)),
                "test_accuracy": round(100 * float(g["test_accuracy"].mean()), 1),
                "trained": trained,
                "verdict": test.verdict,
                "detail": test.summary,
                "above": trained and test.verdict == HOLDS,
            }
        )
    return pd.DataFrame(rows)


def first_above_chance(curve: pd.DataFrame, n_test: int, chance: float = 0.1) -> pd.DataFrame:
    """Does augmentation move the zoo size at which each model leaves chance? For a curve run
    ``both_ways`` (:func:`learning_curve`): per model, the smallest training-set size at which it is
    :func:`above_chance` without augmentation and with it (``None``: not within the curve's sizes), and
    ``moved``: ``earlier`` / ``later`` / ``no`` / ``only with augmentation`` / ``only without
    augmentation`` / ``neither leaves chance``."""
    if "augmented" not in curve or set(curve["augmented"].astype(bool)) != {False, True}:
        raise ValueError("the curve needs runs with and without augmentation (learning_curve(..., both_ways=True))")
    judged = above_chance(curve, n_test, chance)
    largest = int(curve["train_inrs"].max())
    rows = []
    for model, g in judged.groupby("model", sort=False):
        first = {}
        for on in (False, True):
            sizes = g[(g["augmented"] == on) & g["above"]]["train_inrs"]
            first[on] = int(sizes.min()) if len(sizes) else None
        off, on = first[False], first[True]
        if off is None and on is None:
            moved = f"neither leaves chance by {largest} INRs"
        elif off is None:
            moved = "only with augmentation"
        elif on is None:
            moved = "only without augmentation"
        else:
            moved = "earlier" if on < off else ("later" if on > off else "no")
        rows.append({"model": model, "without augmentation": off, "with augmentation": on, "moved": moved})
    return pd.DataFrame(rows).astype({"without augmentation": object, "with augmentation": object})


def augmentation_effects(curve: pd.DataFrame) -> dict[tuple[str, str], str]:
    """What a curve run ``both_ways`` measured of augmentation, per model: the test-accuracy difference
    (augmented - not, points, mean over seeds) at each size, and at the largest size the paired
    difference over seeds with its standard error (:func:`hgutils.verdicts.compare_seeds`). Keyed
    ``(model, "augmentation")`` for
    :func:`hgutils.experiments.weightspace_protocol.recipe_deviations.as_the_authors_run_it`."""
    if "augmented" not in curve or set(curve["augmented"].astype(bool)) != {False, True}:
        raise ValueError("the curve needs runs with and without augmentation (learning_curve(..., both_ways=True))")
    out = {}
    for model, g in curve.groupby("model", sort=False):
        acc = g.pivot_table(index=["train_inrs", "seed"], columns="augmented", values="test_accuracy").dropna()
        if acc.empty:
            continue
        diff = 100 * (acc[True] - acc[False]).groupby(level="train_inrs").mean()
        sizes = " / ".join(f"{n}" for n in diff.index)
        points = " / ".join(f"{d:+.1f}" for d in diff.values)
        last = acc.loc[diff.index[-1]]
        test = compare_seeds(
            last[True].tolist(), last[False].tolist(), paired=True, unit="points", scale=100.0, digits=1
        )
        out[(model, "augmentation")] = (
            f"augmented - not: {points} points at {sizes} training INRs (notebook 01's curve); "
            f"at {diff.index[-1]}: {test.summary}"
        )
    return out
