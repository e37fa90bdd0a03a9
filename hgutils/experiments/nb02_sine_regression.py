"""Notebook 02 -- sine-INR regression (the DWSNets self-supervised protocol) as in the GTH-GMN paper.

The preset (:data:`CONFIG`), the paper's numbers with their source (:data:`PAPER`), the zoo builder
and the paper table; the protocol is :mod:`hgutils.weightspace.comparison`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from torch import Tensor

from hgutils.plotting import pca_2d, use_style
from hgutils.weightspace import comparison
from hgutils.weightspace.comparison import ComparisonSettings
from hgutils.weightspace.metanets.gth_gmn import CITATION

__all__ = ["CONFIG", "PAPER", "PAPER_SOURCE", "SINE_VARIANTS", "SineRegressionConfig", "paper_table", "sine_inr_zoo"]

PAPER_SOURCE = f"{CITATION}, main results table"

#: Test MSE of the linear probe on (a, b); DWSNet and GMN as quoted by the GTH-GMN paper (their
#: numbers come from DWSNets, Navon et al. 2023, arXiv:2301.12780, and GMN, Lim et al. 2024).
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "sine_mse": {"GTH-GMN": (1.06, 0.24), "GMN": (1.13, 0.08), "DWSNet": (1.39, 0.06)},
}

SINE_VARIANTS: tuple[str, ...] = (
    "GTH-GMN",
    "GTH-GMN (small R-step)",
    "DWSNet",
    "GMN",
    "NFN_NP",
    "StatNN",
    "FlatMLP",
    "FlatMLP+aug",
)


@dataclass(frozen=True)
class SineRegressionConfig(ComparisonSettings):
    """Notebook 02: the DWSNets self-supervised sine protocol (self-supervised encoder, linear probe to (a, b))."""

    n_nets: int = 64  # sine INRs (DWSNets: test 1,000 / val 1,000 / rest train)
    T: int = 4  # snapshots per INR, step 0 included
    fit_epochs: int = 150  # full-batch Adam epochs per INR (DWSNets: up to 1,500, stop at loss 1e-4)
    variants: tuple[str, ...] = SINE_VARIANTS  # encoders (all on the same split)
    emb_dim: int = 16  # InfoNCE embedding width (DWSNets: 16)
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    COST_MINUTES: ClassVar[dict[str, float]] = {"medium": 20.9}

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium is sized to the 45-minute CPU budget (README, status table)
        "medium": {
            "n_nets": 800,
            "T": 5,
            "fit_epochs": 300,
            "n_seeds": 3,
            "steps": 400,
            "batch_size": 16,
            "patience": 8,
            "lr_search_steps": 100,
            "pretrain_steps": 200,
            "refine_steps": 5,
            "val_fraction": 0.15,
            "test_fraction": 0.2,
        },
        "paper": {
            "n_nets": 12000,
            "T": 80,
            "fit_epochs": 1500,
            "n_seeds": 5,
            "steps": 12000,
            "patience": 50,
            "batch_size": 512,
            "lr_grid": (1e-3, 5e-3),
            "lr_search_steps": 2000,
            "refine_steps": 100,
            "compile": True,
            "val_fraction": 1000 / 12000,
            "test_fraction": 1000 / 12000,
        },
    }


CONFIG = SineRegressionConfig


def sine_inr_zoo(cfg: SineRegressionConfig, scale: str = "smoke", seed: int = 0, device: str = "cpu") -> Any:
    """The sine zoo of notebook 02 (:func:`hgutils.weightspace.zoo.sine_zoo`, DWSNets protocol)."""
    from hgutils.weightspace.zoo import sine_zoo

    return sine_zoo(scale=scale, n_nets=cfg.n_nets, steps=cfg.fit_epochs, T=cfg.T, seed=seed, device=device)


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
def plot_sine_embedding(emb: Tensor | np.ndarray, targets: Tensor | np.ndarray, title: str = "") -> plt.Figure:
    """PCA of sine-INR embeddings coloured by amplitude ``a`` (left) and frequency ``b`` (right);
    ``targets [n, 2]`` holds ``(a, b)``."""
    use_style()
    p = pca_2d(emb)
    tg = np.asarray(targets, float)
    if tg.ndim != 2 or tg.shape[1] != 2 or tg.shape[0] != p.shape[0]:
        raise ValueError(f"targets must be [n={p.shape[0]}, 2] = (a, b); got shape {tg.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, k, name in zip(axes, (0, 1), ("amplitude a", "frequency b")):
        sc = ax.scatter(p[:, 0], p[:, 1], c=tg[:, k], cmap="viridis", s=8, linewidths=0)
        fig.colorbar(sc, ax=ax, fraction=0.046, pad=0.04)
        ax.set_title(name)
        ax.set_xlabel("PC 1")
        ax.set_ylabel("PC 2")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
