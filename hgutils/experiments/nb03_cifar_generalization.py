"""Notebook 03 -- predicting classifiers' generalisation from weights (Kendall tau), GTH-GMN paper, CIFAR-10.

The preset (:data:`CONFIG`), the paper's numbers with their source (:data:`PAPER`), dataset
resolution, the classifier-zoo builder and the paper table; the protocol is
:mod:`hgutils.weightspace.comparison`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from hgutils.weightspace import comparison
from hgutils.weightspace.comparison import ComparisonSettings
from hgutils.weightspace.metanets.gth_gmn import CITATION

__all__ = [
    "CIFAR_VARIANTS",
    "CONFIG",
    "GeneralizationConfig",
    "PAPER",
    "PAPER_SOURCE",
    "classifier_zoo_for",
    "paper_table",
    "resolve_generalization_dataset",
]

PAPER_SOURCE = f"{CITATION}, main results table"

#: Kendall tau on CIFAR-10; the baselines' rows are the NFN paper's numbers on the Small CNN Zoo
#: (Zhou et al. 2023, arXiv:2302.14040), quoted by the GTH-GMN paper.
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "cifar_tau": {
        "NFN_HNP": (0.934, 0.001),
        "NFN_NP": (0.922, 0.001),
        "StatNN": (0.915, 0.002),
        "GTH-GMN": (0.846, 0.004),
    },
}

CIFAR_VARIANTS: tuple[str, ...] = (
    "GTH-GMN",
    "GTH-GMN (T=1)",
    "NFN_HNP",
    "NFN_HNP (traj)",
    "NFN_NP",
    "NFN_NP (traj)",
    "StatNN",
    "StatNN (traj)",
    "GMN",
    "GMN (traj)",
    "FlatMLP",
    "FlatMLP (traj)",
)


@dataclass(frozen=True)
class GeneralizationConfig(ComparisonSettings):
    """Notebook 03: predict classifiers' test accuracy from weights (Kendall tau), NFN protocol."""

    dataset: str = "cifar10"  # classifier zoo data: CIFAR-10 grayscale when present, else the stand-in
    standin: str = "digits"  # offline stand-in (printed when used); medium: "mnist" (5k subset)
    n_nets: int = 80  # classifiers in the zoo (Small CNN Zoo: 30k runs)
    T: int = 4  # snapshots per classifier trajectory (Small CNN Zoo epochs 0,1,2,3,20,40,60,80,86: 9)
    zoo_steps: int = 150  # minibatch steps per classifier (batch 32; Small CNN Zoo: 86 epochs)
    variants: tuple[str, ...] = CIFAR_VARIANTS  # models, final-checkpoint and trajectory versions
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    COST_MINUTES: ClassVar[dict[str, float]] = {"medium": 38.0}

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {"dataset": "digits", "test_fraction": 0.3},
        # medium is sized to the 45-minute CPU budget (README, status table); NFN protocol batch 8
        "medium": {
            "standin": "mnist",
            "n_nets": 800,
            "T": 9,
            "zoo_steps": 1000,
            "n_seeds": 3,
            "steps": 400,
            "batch_size": 8,
            "patience": 8,
            "lr_search_steps": 100,
            "pretrain_steps": 200,
            "refine_steps": 5,
            "test_fraction": 0.3,
        },
        "paper": {
            "standin": "mnist",
            "n_nets": 30000,
            "T": 9,
            "zoo_steps": 20000,
            "n_seeds": 5,
            "steps": 75000,
            "patience": 10,
            "batch_size": 8,
            "lr_grid": (3e-4, 1e-3, 3e-3),
            "lr_search_steps": 10000,
            "refine_steps": 100,
            "compile": True,
            "val_fraction": 0.1,
            "test_fraction": 0.5,
        },
    }


CONFIG = GeneralizationConfig


def resolve_generalization_dataset(cfg: GeneralizationConfig, data_dir: str | None = None) -> tuple[str, str]:
    """Dataset for notebook 03's classifier zoo: ``(name, note)``.

    ``cfg.dataset`` when a copy is found (``data_dir`` / ``$HGUTILS_DATA`` / packaged), else the
    clearly named stand-in ``cfg.standin``; ``note`` says which and why.
    """
    from hgutils.data import DataNotFoundError, load_images

    if cfg.dataset == cfg.standin:
        return cfg.standin, f"{cfg.standin} (stand-in chosen by the preset; CIFAR-10 is not used at this scale)"
    try:
        load_images(cfg.dataset, split="test", data_dir=data_dir, limit=10)
    except DataNotFoundError:
        return cfg.standin, (
            f"{cfg.standin} -- STAND-IN: no {cfg.dataset} copy found in data_dir / $HGUTILS_DATA; "
            f"numbers below are NOT CIFAR-10 numbers"
        )
    return cfg.dataset, f"{cfg.dataset} (grayscale)"


def classifier_zoo_for(
    dataset: str, cfg: GeneralizationConfig, scale: str = "smoke", data_dir: str | None = None, seed: int = 0
) -> Any:
    """The MLP classifier zoo of notebook 03 (GTH-GMN reads MLPs only): the zoo preset of ``scale``
    with the notebook's ``n_nets``, ``T`` and ``zoo_steps``; with ``T = 9`` the snapshots sit at the
    Small CNN Zoo's checkpoint epochs (0, 1, 2, 3, 20, 40, 60, 80, 86 of 86, scaled to the steps)."""
    from hgutils.weightspace.zoo import classifier_zoo

    schedule = "cnn_zoo" if cfg.T == 9 else "uniform"
    return classifier_zoo(
        dataset,
        scale=scale,
        data_dir=data_dir,
        arch="mlp",
        n_nets=cfg.n_nets,
        T=cfg.T,
        steps=cfg.zoo_steps,
        schedule=schedule,
        seed=seed,
    )


def paper_table(
    task: str, ours: pd.DataFrame | None = None, metric: str | None = None, scale: float = 1.0
) -> pd.DataFrame:
    """:data:`PAPER` ``[task]`` beside ours (:func:`hgutils.weightspace.comparison.paper_table`)."""
    if task not in PAPER:
        raise ValueError(f"unknown paper task {task!r}; have {sorted(PAPER)}")
    return comparison.paper_table(PAPER[task], ours, metric, scale)
