"""Notebook 01 -- INR classification from weight trajectories (GTH-GMN paper, MNIST / Fashion-MNIST INRs).

The preset (:data:`CONFIG`), the paper's numbers with their source (:data:`PAPER`), the zoo builder
and the paper table. The protocol itself (split, variants, training) is the library's
:mod:`hgutils.weightspace.comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.plotting import poincare_disk, use_style
from hgutils.repro import Claims
from hgutils.weightspace import comparison
from hgutils.weightspace.comparison import ComparisonSettings
from hgutils.weightspace.metanets.gth_gmn import CITATION

__all__ = [
    "ABLATION_VARIANTS",
    "CONFIG",
    "CONTROL_VARIANTS",
    "INR_PAPER_KEYS",
    "INR_VARIANTS",
    "INRClassificationConfig",
    "PAPER",
    "PAPER_SOURCE",
    "control_zoo",
    "inr_claims",
    "inr_zoo",
    "paper_table",
]

PAPER_SOURCE = f"{CITATION}, main results table"

#: ``PAPER[task][model] = (mean, std)``; NFN_NP's numbers come from the NFN paper on its own SIREN
#: sets (Zhou et al. 2023, arXiv:2302.14040), not from GTH-GMN's trajectories.
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "mnist_acc": {"GTH-GMN": (95.6, 0.18), "NFN_NP": (92.9, 0.22)},
    "fashion_mnist_acc": {"GTH-GMN": (80.72, 0.29), "NFN_NP": (75.6, 1.07)},
}
INR_PAPER_KEYS: dict[str, str] = {"mnist": "mnist_acc", "fashion_mnist": "fashion_mnist_acc"}

INR_VARIANTS: tuple[str, ...] = (
    "GTH-GMN",
    "GTH-GMN (T=1)",
    "GTH-GMN (Euclidean)",
    "GTH-GMN (no GRU)",
    "StatNN",
    "FlatMLP",
    "FlatMLP+aug",
    "NFN_NP",
    "NFN_HNP",
    "DWSNet",
    "GMN",
    "GMN (per-layer)",
)
#: ablations run on the first seed only (their cost would not fit the medium budget for every seed)
ABLATION_VARIANTS: tuple[str, ...] = ("GTH-GMN (fine-tuned)",)
#: the cheap models trained on the one-initialisation-per-INR control zoo
CONTROL_VARIANTS: tuple[str, ...] = ("StatNN", "FlatMLP", "NFN_NP")


@dataclass(frozen=True)
class INRClassificationConfig(ComparisonSettings):
    """Notebook 01: classify INRs (one SIREN per image) from their weight trajectories."""

    datasets: tuple[str, ...] = ("digits",)  # INR zoos to classify; medium: MNIST; paper: + Fashion-MNIST
    n_images: int = 120  # INRs per zoo (one per image, class-balanced)
    inr_steps: int = 200  # Adam steps per INR (DWSNets: 1,000)
    T: int = 5  # snapshots per INR trajectory, step 0 included (paper: 80-100)
    shared_init: bool = True  # one SIREN initialisation for the whole zoo (paper preset: one per INR, as NFN)
    variants: tuple[str, ...] = INR_VARIANTS  # models (all trained on the same split)
    ablation_variants: tuple[str, ...] = ABLATION_VARIANTS  # run on the first seed only
    control_images: int = 60  # INRs of the one-initialisation-per-INR control zoo (0: skip it)
    control_variants: tuple[str, ...] = CONTROL_VARIANTS  # models trained on the control zoo (first seed)
    n_figure_nets: int = 4  # test INRs averaged in the radial/angular statistics
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 1.2, "medium": 22.3}

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium is sized to the 45-minute CPU budget (README, status table); Fashion-MNIST moves to paper
        "medium": {
            "datasets": ("mnist",),
            "n_images": 800,
            "inr_steps": 300,
            "T": 5,
            "n_seeds": 3,
            "steps": 400,
            "batch_size": 8,
            "patience": 8,
            "lr_search_steps": 100,
            "pretrain_steps": 200,
            "refine_steps": 5,
            "val_fraction": 0.1,
            "test_fraction": 0.2,
            "control_images": 400,
            "n_figure_nets": 16,
        },
        "paper": {
            "datasets": ("mnist", "fashion_mnist"),
            "n_images": 70000,
            "inr_steps": 1000,
            "T": 100,
            "shared_init": False,
            "n_seeds": 5,
            "steps": 50000,
            "patience": 15,
            "batch_size": 32,
            "lr_grid": (3e-4, 1e-3, 3e-3),
            "lr_search_steps": 5000,
            "gth_dim": 32,
            "refine_steps": 100,
            "compile": True,
            "val_fraction": 5000 / 70000,
            "test_fraction": 10000 / 70000,
            "control_images": 0,
            "n_figure_nets": 64,
        },
    }


CONFIG = INRClassificationConfig


def inr_zoo(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> Any:
    """The INR zoo of notebook 01: :func:`hgutils.weightspace.zoo.inr_image_zoo` with the notebook's
    sizes (``n_images``, ``inr_steps``, ``T``) and ``shared_init`` on top of the zoo preset of ``scale``."""
    from hgutils.weightspace.zoo import inr_image_zoo

    return inr_image_zoo(
        dataset,
        scale=scale,
        data_dir=data_dir,
        n_images=cfg.n_images,
        steps=cfg.inr_steps,
        T=cfg.T,
        shared_init=cfg.shared_init,
        seed=seed,
        device=device,
    )


def control_zoo(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> Any:
    """The control zoo: the same images and fits, but one SIREN initialisation per INR (the NFN
    protocol) -- ``control_images`` INRs -- to show what a shared initialisation changes."""
    from dataclasses import replace

    return inr_zoo(dataset, replace(cfg, n_images=cfg.control_images, shared_init=False), scale, data_dir, seed, device)


#: the GTH-GMN ablations judged against the full model: (claim id, variant, statement, paper, where)
ABLATION_CLAIMS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "temporal",
        "GTH-GMN (T=1)",
        "reading the trajectory beats the final checkpoint (GTH-GMN vs T=1)",
        "temporal > single (qualitative)",
        "§method/§experiments",
    ),
    (
        "hyperbolic",
        "GTH-GMN (Euclidean)",
        "hyperbolic attention beats its Euclidean twin",
        "hyperbolic > Euclidean (qualitative)",
        "§method",
    ),
    (
        "gru",
        "GTH-GMN (no GRU)",
        "GRU kernel evolution beats encoding snapshots independently",
        "evolved > independent (qualitative)",
        "§method (EvolveGCN-style kernels)",
    ),
)

#: the paper's GTH-GMN advantage over NFN_NP (points; NFN_NP measured by its own paper on other data)
PAPER_GAP = {ds: PAPER[key]["GTH-GMN"][0] - PAPER[key]["NFN_NP"][0] for ds, key in INR_PAPER_KEYS.items()}


def inr_claims(claims: Claims, ds: str, run: comparison.ComparisonResult | None, scale: str) -> None:
    """Dataset ``ds``'s comparative and absolute accuracy claims (test accuracy per seed, unpaired).

    The ablations (:data:`ABLATION_CLAIMS`) and "GTH-GMN beats the best symmetry-respecting baseline"
    go through :mod:`hgutils.verdicts`; the paper's absolute accuracy is judged only at ``paper``
    scale (within 2 points). A dataset not run (``run is None``) records every claim as not tested.
    """
    judge = scale != "smoke" and run is not None
    why = (
        "not run at this scale"
        if run is None
        else (None if judge else "smoke scale: 120 digit INRs, a few dozen steps")
    )
    src = CITATION
    table = run.table if run is not None else None
    for cid, other, statement, paper, where in ABLATION_CLAIMS:
        d = (
            comparison.difference(table, "GTH-GMN", other, "test_accuracy", scale=100, unit="points", digits=2)
            if table is not None
            else None
        )
        claims.add(
            f"{ds}-{cid}",
            f"{ds}: {statement}",
            paper=paper,
            ours={"diff (points)": round(d.diff, 2), "se": round(d.se, 2)} if d is not None else None,
            criterion=f"mean acc(GTH-GMN) - mean acc({other}) > 2 se over seeds (unpaired) [points]",
            test=d if judge else None,
            reason=why,
            source=f"{src} {where}",
            trained=run.gates(["GTH-GMN", other]) if judge else None,
        )
    best = None
    b = None
    if table is not None:
        summ = comparison.summarize(table, ["test_accuracy"])
        best = comparison.best_model(summ, "test_accuracy", comparison.SYMMETRY_RESPECTING)
        b = comparison.difference(table, "GTH-GMN", best, "test_accuracy", scale=100, unit="points", digits=2)
    claims.add(
        f"{ds}-vs-best-baseline",
        f"{ds}: GTH-GMN beats the best symmetry-respecting baseline on the same zoo"
        + (f" (best: {best})" if best else ""),
        paper=f"+{PAPER_GAP[ds]:.1f} points vs NFN_NP (other dataset)",
        ours={"diff (points)": round(b.diff, 2), "se": round(b.se, 2)} if b is not None else None,
        criterion="mean acc(GTH-GMN) - mean acc(best by mean of "
        + ", ".join(comparison.SYMMETRY_RESPECTING)
        + ") > 2 se over seeds (unpaired) [points]",
        test=b if judge else None,
        paper_effect=PAPER_GAP[ds] if judge else None,
        reason=why,
        source=f"{src}, INR classification table",
        trained=run.gates(["GTH-GMN", best]) if judge else None,
    )
    mu, sd = PAPER[INR_PAPER_KEYS[ds]]["GTH-GMN"]
    ours = (
        100 * float(np.mean(comparison.per_seed(table, "test_accuracy", ["GTH-GMN"])["GTH-GMN"]))
        if table is not None
        else None
    )
    claims.add(
        f"{ds}-absolute",
        f"{ds}: GTH-GMN test accuracy {mu} %",
        paper=f"{mu} ± {sd}",
        ours=round(ours, 2) if ours is not None else None,
        criterion="|ours - paper| <= 2 points (paper scale only)",
        holds=(abs(ours - mu) <= 2.0) if (scale == "paper" and ours is not None) else None,
        reason=None
        if scale == "paper" and ours is not None
        else "the paper's data sizes and T run only at paper scale",
        source=f"{src}, INR classification table",
    )


def paper_table(
    task: str, ours: pd.DataFrame | None = None, metric: str | None = None, scale: float = 1.0
) -> pd.DataFrame:
    """:data:`PAPER` ``[task]`` beside ours (:func:`hgutils.weightspace.comparison.paper_table`)."""
    if task not in PAPER:
        raise ValueError(f"unknown paper task {task!r}; have {sorted(PAPER)}")
    return comparison.paper_table(PAPER[task], ours, metric, scale)


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------
def _disk_coords(z: np.ndarray, c: float) -> np.ndarray:
    """2-D view of ball points: the coordinates themselves when d = 2, else PCA of the tangent
    vectors at 0 pushed back onto the 2-D disk (radii preserved: ``exp_0`` of the projected log)."""
    z = np.asarray(z, dtype=float)
    if z.shape[-1] == 2:
        return z
    sc = max(c, 1e-12) ** 0.5
    n = np.linalg.norm(z, axis=-1, keepdims=True).clip(1e-12)
    v = np.arctanh(np.clip(sc * n, 0, 1 - 1e-7)) * z / (sc * n)  # log_0
    flat = v.reshape(-1, v.shape[-1])
    mu = flat.mean(0)
    _, _, vt = np.linalg.svd(flat - mu, full_matrices=False)
    p = (v - mu) @ vt[:2].T
    # rescale so each point keeps its tangent norm (= its hyperbolic radius / 2), then exp_0
    pn = np.linalg.norm(p, axis=-1, keepdims=True).clip(1e-12)
    p = p / pn * np.linalg.norm(v, axis=-1, keepdims=True)
    pn = np.linalg.norm(p, axis=-1, keepdims=True).clip(1e-12)
    return np.tanh(sc * pn) * p / (sc * pn)


def plot_disk_early_late(
    z: Tensor,
    node_layer: Tensor,
    c: float = 1.0,
    early: int = 0,
    late: int = -1,
    steps: Sequence[int] | None = None,
    layer_names: Sequence[str] | None = None,
    title: str = "",
) -> plt.Figure:
    """Two Poincaré disks of one network's node embedding ``z [T, V, d]``: snapshot ``early`` and
    ``late``, nodes coloured by MLP layer (``d > 2`` is shown by a shared radius-preserving PCA)."""
    use_style()
    z = torch.as_tensor(z).detach().double()
    if z.dim() != 3:
        raise ValueError(f"z must be one network's [T, V, d]; got shape {tuple(z.shape)}")
    T = z.shape[0]
    both = _disk_coords(z[[early, late]].numpy(), c)
    lab = torch.as_tensor(node_layer).long().numpy()
    names = list(layer_names) if layer_names is not None else [f"layer {l}" for l in np.unique(lab)]
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    for ax, pts, t in zip(axes, both, (early % T, late % T)):
        lbl = f"t = {t}" if steps is None else f"t = {t} (step {int(steps[t])})"
        poincare_disk(ax, pts, c=c, colors=lab, labels=names, s=12, title=lbl)
        for sp in ax.spines.values():
            sp.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def plot_radial_angular(stats: pd.DataFrame, title: str = "", layer_names: Sequence[str] | None = None) -> plt.Figure:
    """Per-layer mean radius over ``t`` (band = mean within-network std) and the two separation
    indices over ``t`` (output of :func:`radial_angular_stats`); ``layer_names[l]`` labels layer ``l``."""
    use_style()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for l, g in stats.groupby("layer"):
        name = layer_names[int(l)] if layer_names is not None and int(l) < len(layer_names) else f"layer {l}"
        axes[0].plot(g["t"], g["radius_mean"], marker="o", ms=3, label=name)
        axes[0].fill_between(g["t"], g["radius_mean"] - g["radius_std"], g["radius_mean"] + g["radius_std"], alpha=0.15)
    axes[0].set_xlabel("snapshot t")
    axes[0].set_ylabel("hyperbolic radius $d_c(0, z)$")
    axes[0].legend(fontsize=7)
    per_t = stats.groupby("t")[["radial_sep", "angular_sep"]].first()
    axes[1].plot(per_t.index, per_t["radial_sep"], marker="o", ms=3, label=r"radial $\eta^2_r$")
    axes[1].plot(per_t.index, per_t["angular_sep"], marker="s", ms=3, label=r"angular $\eta^2_\theta$")
    axes[1].set_ylim(-0.02, 1.02)
    axes[1].set_xlabel("snapshot t")
    axes[1].set_ylabel("share of variance explained by layer")
    axes[1].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig
