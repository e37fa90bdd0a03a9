"""Notebook 06's figures of the training domain × weight decay study: the scores of each
:math:`G_{true}` element per cell beside the training density's symmetry (:func:`plot_factor_scores`)
and the Dyadic readout against its same-initialisation control (:func:`plot_same_init_control`)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle

from hgutils.experiments.nb06_pe_symmetry_readout.figures import _cell_label
from hgutils.experiments.nb06_pe_symmetry_readout.preset import SHORT
from hgutils.plotting import use_style

#: the factor table's score columns in words
VALUE_WORDS = {
    "gram": "first-layer Gram score of the trained weights",
    "init": "first-layer Gram score of the initial weights (random baseline)",
    "functional": "the learned function's score, f(g·x) vs f(x)",
}


def plot_factor_scores(
    ftab: pd.DataFrame,
    dsym: pd.DataFrame,
    value: str = "gram",
    shape_order: Sequence[str] | None = None,
    title: str | None = None,
):
    """Scores of each :math:`G_{true}` element (columns) vs (domain, weight decay) (rows), one panel per
    (encoding, shape), under two strips per shape: whether the training density respects the element
    (measured ``z`` of :func:`data_symmetry_table`) and the learned function's own score of it (the lowest
    functional score over encodings and weight decays, per domain).

    ``ftab`` is :func:`factor_table`; ``value`` one of its score columns (``"gram"``, ``"init"``,
    ``"functional"``). Hatched cells: the training density breaks that element; a white dot: the encoding
    cannot lift it.
    """
    use_style()
    if value not in ftab.columns:
        raise ValueError(f"value must be a score column of the factor table {list(ftab.columns)}; got {value!r}")
    encs = list(dict.fromkeys(ftab["encoding"]))
    shps = list(shape_order or dict.fromkeys(ftab["shape"]))
    doms = list(dict.fromkeys(ftab["domain"]))
    wds = sorted(set(ftab["weight_decay"]))
    cells = [(d, w) for d in doms for w in wds]
    n_el = [ftab[ftab["shape"] == s]["element"].nunique() for s in shps]
    n_top = 2
    with plt.rc_context({"hatch.linewidth": 0.4, "hatch.color": "0.9"}):
        fig, axes = plt.subplots(
            n_top + len(encs),
            len(shps),
            figsize=(2.2 + 0.52 * sum(n_el), 2.0 + 0.3 * (2 * len(doms) + len(encs) * len(cells)) + 0.35 * len(encs)),
            gridspec_kw={"width_ratios": n_el, "height_ratios": [len(doms)] * n_top + [len(cells)] * len(encs)},
            squeeze=False,
        )
        # a fixed layout: constrained layout would re-measure the hundreds of cell labels on every pass
        fig.subplots_adjust(left=0.08, right=0.92, top=0.94, bottom=0.05, hspace=0.3, wspace=0.06)
        im = None

        def annotate(ax, v, fmt, rows, els, hatch=None, lift=None):
            for a in range(rows):
                for b in range(len(els)):
                    if not np.isfinite(v[a, b]):
                        continue
                    colour = "w" if v[a, b] < 0.45 else "k"
                    ax.text(b, a, format(v[a, b], fmt), ha="center", va="center", fontsize=6, color=colour)
                    if hatch is not None and not bool(hatch[a, b]):
                        ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, hatch="///", lw=0))
                    if lift is not None and not lift[b]:
                        ax.plot(b + 0.36, a - 0.3, ".", color="w", ms=3)

        for j, shape in enumerate(shps):
            els = list(dict.fromkeys(ftab[ftab["shape"] == shape]["element"]))
            # strip 1: does the training density respect g (exact colour, measured z)?
            ax = axes[0, j]
            d = dsym[(dsym["shape"] == shape) & dsym["element"].isin(els)]
            ex = d.pivot(index="domain", columns="element", values="exact").reindex(index=doms, columns=els)
            zz = d.pivot(index="domain", columns="element", values="z").reindex(index=doms, columns=els)
            ax.imshow(
                ex.to_numpy(dtype=float),
                cmap=ListedColormap(["#d9d9d9", "#8fd18f"]),
                vmin=0,
                vmax=1,
                aspect="auto",
                interpolation="nearest",
            )
            for a in range(len(doms)):
                for b in range(len(els)):
                    ax.text(b, a, f"z={zz.iat[a, b]:.0f}", ha="center", va="center", fontsize=6)
            ax.set_xticks(range(len(els)), [])
            ax.set_yticks(range(len(doms)), [f"{dm} density" for dm in doms] if j == 0 else [], fontsize=7)
            ax.set_title(f"{shape}: density respects g? (green: yes)", fontsize=8)
            ax.grid(False)
            # strip 2: the learned function's own symmetry (lowest functional score over encodings and decays)
            ax = axes[1, j]
            fn = ftab[ftab["shape"] == shape].groupby(["domain", "element"])["functional"].min().unstack()
            v = fn.reindex(index=doms, columns=els).to_numpy(dtype=float)
            ax.imshow(
                np.clip(v, -0.2, 1.0), cmap="viridis", vmin=-0.2, vmax=1.0, aspect="auto", interpolation="nearest"
            )
            annotate(ax, v, ".2f", len(doms), els)
            ax.set_xticks(range(len(els)), [])
            ax.set_yticks(range(len(doms)), [f"{dm}: f(gx) vs f(x)" for dm in doms] if j == 0 else [], fontsize=7)
            ax.set_title(f"{shape}: function's score of g (lowest)", fontsize=8)
            ax.grid(False)
            for i, enc in enumerate(encs):
                ax = axes[n_top + i, j]
                f = ftab[(ftab["encoding"] == enc) & (ftab["shape"] == shape)].set_index(
                    ["domain", "weight_decay", "element"]
                )
                idx = pd.MultiIndex.from_tuples(cells)
                v = f[value].unstack().reindex(index=idx, columns=els).to_numpy(dtype=float)
                dat = f["in_G_data"].unstack().reindex(index=idx, columns=els).to_numpy()
                lift = f["liftable"].groupby(level="element").first().reindex(els).to_numpy()
                im = ax.imshow(
                    np.clip(v, -0.2, 1.0), cmap="viridis", vmin=-0.2, vmax=1.0, aspect="auto", interpolation="nearest"
                )
                annotate(ax, v, ".2f", len(cells), els, hatch=dat, lift=lift)
                last = i == len(encs) - 1
                ax.set_xticks(range(len(els)), els if last else [], fontsize=7)
                if last:
                    ax.set_xlabel("group element g (R: rotation, S: reflection; degrees)", fontsize=8)
                ax.set_yticks(range(len(cells)), [_cell_label(dm, w) for dm, w in cells] if j == 0 else [], fontsize=7)
                ax.set_title(f"{SHORT.get(enc, enc)} · {shape}", fontsize=8)  # the score in words: the suptitle
                ax.grid(False)
        top = axes[1, -1].get_position().y1
        cax = fig.add_axes((0.935, 0.05, 0.012, top - 0.05))
        fig.colorbar(im, cax=cax, label="score (values below -0.2 drawn at -0.2)")
        fig.suptitle(
            title
            or f"{VALUE_WORDS.get(value, value)} of each G_true element vs training domain × weight decay "
            "(hatched: the training density breaks g; dot: the encoding cannot lift g)",
            fontsize=9,
            y=0.985,
        )
    return fig


def plot_same_init_control(
    ctrl: pd.DataFrame, shape: str = "square", control: str = "triangle", encoding: str = "Dyadic"
):
    """Readout of ``shape``'s symmetries vs weight decay, per domain, beside its same-initialisation
    control (trained on ``control``) and the initial weights (:func:`same_init_control`); error bars are
    standard deviations over seeds."""
    use_style()
    doms = list(dict.fromkeys(ctrl["domain"]))
    fig, axes = plt.subplots(1, len(doms), figsize=(4.2 * len(doms), 3.4), sharey=True, squeeze=False)
    for ax, dom in zip(axes[0], doms):
        c = ctrl[ctrl["domain"] == dom].sort_values("weight_decay")
        x = np.arange(len(c))
        ax.errorbar(x, c["score"], yerr=c["score_sd"].fillna(0.0), marker="o", capsize=3, label=f"trained on {shape}")
        ax.errorbar(
            x,
            c["control"],
            yerr=c["control_sd"].fillna(0.0),
            marker="s",
            capsize=3,
            label=f"same init, trained on {control}",
        )
        ax.plot(x, c["init"], marker="^", ls=":", color="0.4", label="initial weights")
        ax.set_xticks(x, [f"{w:g}" for w in c["weight_decay"]])
        ax.set_xlabel("weight decay (AdamW)")
        ax.set_title(f"{dom} domain", fontsize=9)
    axes[0, 0].set_ylabel(f"{encoding} first-layer Gram score")
    axes[0, 0].legend(fontsize=7)
    els = ctrl["elements"].iloc[0] if len(ctrl) else ""
    fig.suptitle(
        f"mean score over {els.replace(',', ', ')} (in D4 of the {shape}, not in G_true of the {control})", fontsize=9
    )
    fig.tight_layout()
    return fig
