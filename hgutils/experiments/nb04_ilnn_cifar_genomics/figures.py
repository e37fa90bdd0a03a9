"""Notebook 04's tables and figures: summaries over seeds (:func:`seed_summary`, :func:`results_table`,
:func:`cap_hits`), the rows of the paper's numbers beside ours (:func:`paper_rows`, for
:func:`hgutils.ledger.paper_table`), and the figures
(:func:`plot_curves`, :func:`plot_init_diagnostics`, :func:`plot_epoch_times`)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from hgutils.experiments.nb04_ilnn_cifar_genomics.preset import (
    GUE_LAYOUT,
    PAPER_CIFAR,
    PAPER_GENOMICS_MCC,
    PAPER_SOURCE,
    ILNNConfig,
    gue_instructions,
)
from hgutils.ledger import PaperRow
from hgutils.nn.classifier_training import History
from hgutils.plotting import use_style


# ----------------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------------
def seed_summary(runs: dict[int, dict[str, History]], metric: str = "test_acc", scale: float = 100.0) -> pd.DataFrame:
    """Per model: ``metric`` at each run's selected epoch (:meth:`History.final`), ``mean``, ``sd``
    (sample sd, NaN for one seed), ``n`` seeds and the per-seed values; times ``scale`` (percent)."""
    models = list(next(iter(runs.values())))
    rows = []
    for m in models:
        vals = [scale * runs[s][m].final(metric) for s in runs]
        rows.append(
            {
                "model": m,
                "mean": float(np.mean(vals)),
                "sd": float(np.std(vals, ddof=1)) if len(vals) > 1 else math.nan,
                "n": len(vals),
                "per seed": ", ".join(f"{v:.1f}" for v in vals),
            }
        )
    return pd.DataFrame(rows).set_index("model")


def _pm(values: list[float], digits: int = 1) -> str:
    if len(values) < 2:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1):.{digits}f}"


def results_table(runs: dict[int, dict[str, History]], metric: str = "test_acc") -> pd.DataFrame:
    """Per model, mean ± sd over seeds: ``metric`` (%) at the selected epoch, the validation MCC where
    there is one, the final training loss, the selected (1-based) epoch and seconds per epoch. Runs with
    a validation split also list the epochs each seed ran, ``*`` marking a run that reached the epoch cap
    while still improving (:func:`cap_hits`)."""
    rows = {}
    for m in next(iter(runs.values())):
        hs = [runs[s][m] for s in runs]
        row = {metric.replace("_", " ") + " (%)": _pm([100 * h.final(metric) for h in hs])}
        if hs[0].val_mcc:
            row["val mcc (%)"] = _pm([100 * h.final("val_mcc") for h in hs])
        row["final train loss"] = _pm([h.train_loss[-1] for h in hs], 3)
        row["selected epoch"] = ", ".join(str(h.best_epoch + 1) for h in hs)
        if hs[0].val_mcc:
            row["epochs run (* = cap)"] = ", ".join(f"{len(h.train_loss)}{'*' * _hit_cap(h)}" for h in hs)
        row["s / epoch"] = f"{np.mean([np.mean(h.epoch_time) for h in hs]):.1f}"
        rows[m] = row
    return pd.DataFrame(rows).T.rename_axis("model")


def _hit_cap(h: History) -> bool:
    return h.capped


def cap_hits(runs: dict[int, dict[str, History]], models: tuple[str, ...] | None = None) -> list[str]:
    """``"model (seed s)"`` for every run of ``models`` (default all) that its epoch cap ended while its
    validation MCC was still improving (the plateau rule of :mod:`hgutils.loop`): such a run had not converged."""
    return [
        f"{m} (seed {s})"
        for s, by_model in runs.items()
        for m, h in by_model.items()
        if (models is None or m in models) and _hit_cap(h)
    ]


def paper_rows(
    cifar: dict[str, pd.DataFrame],
    genomics: dict[str, pd.DataFrame],
    protocols: dict[str, str],
    cfg: ILNNConfig,
) -> list[PaperRow]:
    """The rows of the paper's numbers beside ours (for :func:`hgutils.ledger.paper_table`): ``cifar`` /
    ``genomics`` map a dataset or task to its :func:`seed_summary` (accuracy or MCC, %; ours as mean ± sd),
    ``protocols`` to the protocol actually run (the extra column ``ours: protocol``)."""
    names = {"euclidean": "Euclidean", "hcnn": "HCNN-Lorentz", "ilnn": "ILNN"}
    rows = []
    for ds, paper in PAPER_CIFAR.items():
        for fl, fl_name in names.items():
            ours = cifar.get(ds)
            rows.append(
                PaperRow(
                    f"{ds} test acc (%), {fl_name}",
                    paper[fl],
                    f"{PAPER_SOURCE}, image classification (ResNet-18, 200 epochs)",
                    "not run" if ours is None else _pm_row(ours.loc[fl]),
                    {
                        "ours: protocol": protocols.get(ds, "not run at this scale")
                        + ("" if ours is None else f"; ResNet-{cfg.depth} {cfg.widths}, {cfg.cifar_epochs} epochs")
                    },
                )
            )
    for task, (p_euc, p_ilnn) in PAPER_GENOMICS_MCC.items():
        ours = genomics.get(task)
        for fl, p in (("euclidean", p_euc), ("ilnn", p_ilnn)):
            label = "Euclidean CNN" if task.startswith("teb") or fl == "ilnn" else "best prior"
            rows.append(
                PaperRow(
                    f"{task} MCC (%), {label if fl == 'euclidean' else 'ILNN'}",
                    p,
                    f"{PAPER_SOURCE}, {task.split('/')[0].upper()} table",
                    "not run"
                    if ours is None
                    else _pm_row(ours.loc[fl]) + (" (REDUCED protocol)" if "REDUCED" in protocols[task] else ""),
                    {
                        "ours: protocol": protocols.get(
                            task, gue_instructions(task) if task in GUE_LAYOUT else "not run at this scale"
                        )
                    },
                )
            )
    for task, summ in genomics.items():
        if task in PAPER_GENOMICS_MCC:
            continue
        for fl, fl_name in names.items():
            if fl not in summ.index:
                continue
            rows.append(
                PaperRow(
                    f"{task} MCC (%), {fl_name}",
                    "not reported",
                    "—",
                    _pm_row(summ.loc[fl]),
                    {"ours: protocol": protocols[task]},
                )
            )
    return rows


def _pm_row(row: pd.Series) -> str:
    return f"{row['mean']:.2f}" if row["n"] < 2 else f"{row['mean']:.2f} ± {row['sd']:.2f}"


# ----------------------------------------------------------------------------------------------
# figures
# ----------------------------------------------------------------------------------------------
def plot_curves(ax: plt.Axes, runs: dict[int, dict[str, History]], metric: str, title: str = "") -> None:
    """``metric`` per epoch, mean over seeds with a ± sd band, one line per model (integer epochs)."""
    use_style()
    for m in next(iter(runs.values())):
        curves = [getattr(runs[s][m], metric) for s in runs]
        n = min(len(c) for c in curves)
        arr = 100 * np.array([c[:n] for c in curves]) if metric.endswith(("acc", "mcc")) else np.array(curves)
        ep = np.arange(1, n + 1)
        mean = arr.mean(0)
        ax.plot(ep, mean, marker="o", label=m)
        if len(curves) > 1:
            sd = arr.std(0, ddof=1)
            ax.fill_between(ep, mean - sd, mean + sd, alpha=0.2)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    unit = " (%)" if metric.endswith(("acc", "mcc")) else ""
    ax.set_ylabel(metric.replace("_", " ").replace("acc", "accuracy").replace("mcc", "MCC") + unit)
    ax.set_title(title)
    ax.legend()


def plot_init_diagnostics(table: pd.DataFrame, title: str = "") -> plt.Figure:
    """Three panels over the layers of each model (:func:`init_table`): p99 feature radius, fraction of
    clamped PLFC logits (Lorentz-PLFC models only), and gradient-to-weight norm ratio (log scale); one
    colour per model in every panel."""
    use_style()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    panels = (
        ("radius_p99", "p99 radius (Lorentz: distance to origin)", False),
        ("clamped", "clamped PLFC logits (fraction)", False),
        ("grad_ratio", "|grad W| / |W| at init", True),
    )
    colours = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(table["model"]))}  # one colour per model
    for ax, (col, label, logy) in zip(axes, panels):
        for model, df in table.groupby("model", sort=False):
            d = df.dropna(subset=[col])
            if len(d):
                ax.plot(d["index"], d[col], marker=".", color=colours[model], label=model)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("layer (module order)")
        ax.set_ylabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].axhline(5.0, color="grey", ls=":", lw=1)
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_epoch_times(ax: plt.Axes, runs: dict[int, dict[str, History]], title: str = "time per epoch") -> None:
    """Bar chart of seconds per training epoch per model (mean over epochs and seeds)."""
    use_style()
    times = {m: float(np.mean([np.mean(runs[s][m].epoch_time) for s in runs])) for m in next(iter(runs.values()))}
    ax.bar(list(times), list(times.values()), color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"][: len(times)])
    ax.set_ylabel("seconds / epoch (wall clock)")
    ax.set_title(title)
