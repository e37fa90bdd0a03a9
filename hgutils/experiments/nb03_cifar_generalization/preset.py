"""Notebook 03's preset (:data:`CONFIG`), the paper's numbers with each row's source (:data:`PAPER`,
:data:`PAPER_ROW_SOURCES`), the model list, dataset resolution and the classifier-zoo builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from hgutils.data import DataNotFoundError, load_images
from hgutils.data.images import IMAGE_DATASETS
from hgutils.experiments.weightspace_protocol import ComparisonSettings
from hgutils.weightspace.metanets.gth_gmn import CITATION
from hgutils.weightspace.zoo import classifier_zoo

PAPER_SOURCE = f"{CITATION}, main results table"
#: Where the trees-on-statistics reference comes from.
REFERENCE_SOURCE = (
    "Unterthiner et al. 2020, Predicting Neural Network Accuracy from Weights, arXiv:2002.11448 "
    "(boosted trees on per-layer weight statistics; hyperparameters as inputs)"
)

#: Kendall tau on CIFAR-10, ``PAPER[task][model] = (mean, std)``; each row's source in :data:`PAPER_ROW_SOURCES`
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "cifar_tau": {
        "NFN_HNP": (0.934, 0.001),
        "NFN_NP": (0.922, 0.001),
        "StatNN": (0.915, 0.002),
        "GTH-GMN": (0.846, 0.004),
    },
}
_NFN_ZOO = (
    "NFN paper (Zhou et al. 2023, arXiv:2302.14040) on the Small CNN Zoo, quoted in the GTH-GMN paper's main results "
    "table"
)
#: where each model's row of :data:`PAPER` was measured: the baselines' rows are the NFN paper's numbers on the
#: Small CNN Zoo (CIFAR10-GS CNNs, final checkpoints); GTH-GMN's is its own MLP-on-CIFAR trial
PAPER_ROW_SOURCES: dict[str, str] = {
    "NFN_HNP": _NFN_ZOO,
    "NFN_NP": _NFN_ZOO,
    "StatNN": _NFN_ZOO,
    "GTH-GMN": PAPER_SOURCE,
}

CIFAR_VARIANTS: tuple[str, ...] = (
    "GTH-GMN",
    "GTH-GMN (T=1)",
    "GTH-GMN (two-stage, frozen)",
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
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = ComparisonSettings.BOUNDS | {
        "n_nets": (1, 500_000),
        "T": (1, 1000),
        "zoo_steps": (1, 200_000),
    }
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = ComparisonSettings.CHOICES | {
        "dataset": IMAGE_DATASETS,
        "standin": IMAGE_DATASETS,
    }
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 1.2, "medium": 80.5}  # measured 2026-12-07, docs/claims.md

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {"dataset": "digits", "test_fraction": 0.3},
        # NFN's protocol: Adam 1e-3 (baselines: their reference recipes), batch 8, up to 50 epochs,
        # early stopping on the validation tau; medium fits 2 CPU cores with 2 one-thread workers
        "medium": {
            "standin": "mnist",
            "n_nets": 800,
            "T": 9,
            "zoo_steps": 1000,
            "n_seeds": 3,
            "epochs": 50,
            "patience": 10,
            "min_epochs": 10,
            "batch_size": 8,
            "lr_grid": (1e-3, 3e-3),
            "lr_search_steps": 300,
            # GTH-GMN selection grid: 3 protocols x 2 sizes x the baselines' lr_grid, each cell
            # 300 optimiser steps (the lr search's budget, shorter than the final runs), on the first seed
            "gth_protocols": ("two_stage", "finetune", "joint"),
            "gth_sizes": ("default", "large"),
            "select_lr_grid": (),
            # measured (2026-12-03 republish, 2 workers, the machine shared with test runs): 1,860 CPU-s, 23 min of
            # wall time; 11 of 12 cells trained; finetune / large / 3e-3 diverged (non-finite gradients, recorded,
            # never chosen); chosen finetune / large / 1e-3, validation tau 0.524 at its 300-step budget (still
            # improving). The whole notebook took 111.2 min (over the 90-minute budget; docs/claims.md)
            "select_steps": 300,
            "pretrain_networks": 256,
            "pretrain_steps": 3000,
            # GTH-GMN compiled (same math; per step on one CPU thread 1.1-1.3x eager at the default size, 1.6x at the
            # large one: docs/performance.md): its runs now train to their plateau, long enough to repay each
            # process's compile (0.5-2.5 min default, up to 13 min large on a cold inductor cache)
            "compile": True,
            "refine_steps": 10,
            "refine_lr": 0.3,
            "test_fraction": 0.3,
            "workers": 2,
        },
        "paper": {
            "standin": "mnist",
            "n_nets": 30000,
            "T": 9,
            "zoo_steps": 20000,
            "n_seeds": 5,
            "epochs": 50,
            "patience": 10,
            "batch_size": 8,
            "lr_grid": (3e-4, 1e-3, 3e-3),
            "lr_search_steps": 10000,
            "gth_protocols": ("two_stage", "finetune", "joint"),  # the full selection grid, as medium
            "gth_sizes": ("default", "large"),
            "select_lr_grid": (),
            "select_steps": 10000,
            "refine_steps": 40,
            "refine_lr": 0.3,
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
    Small CNN Zoo's checkpoint epochs (0, 1, 2, 3, 20, 40, 60, 80, 86 of 86, scaled to the steps).
    Labels are accuracies on the whole test split (10,000 images for CIFAR-10), with the two
    half-split accuracies beside them for the label-noise ceiling; the optimisers (Adam, RMSProp,
    SGD) and the weight initialisers (Keras He / Glorot / random / truncated normal) are sampled as in
    the Small CNN Zoo (:class:`~hgutils.weightspace.zoo.ClassifierZooConfig`)."""

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
        n_test=None,
        workers=cfg.workers,
    )


def chance_accuracy(zoo: Any) -> float:
    """The test accuracy of a classifier that guesses: :math:`1 / k` for the zoo's :math:`k` classes."""
    return 1.0 / int(zoo.spec.sizes[-1] if hasattr(zoo.spec, "sizes") else zoo.spec.n_classes)


def hyperparameter_summary(zoo: Any) -> pd.DataFrame:
    """Networks per sampled optimiser / activation / weight initialiser, with their median test
    accuracy and the share that ends more than 2 points above chance (:func:`chance_accuracy`)."""
    acc = zoo.meta["test_acc"]
    chance = chance_accuracy(zoo)
    rows = []
    for key, vocab in (("optimizer", "optimizers"), ("activation", "activations"), ("w_init", "w_inits")):
        for j, name in enumerate(zoo.info[vocab]):
            sel = zoo.meta[key] == j
            n = int(sel.sum())
            rows.append(
                {
                    "hyperparameter": key,
                    "value": name,
                    "networks": n,
                    "median test accuracy": round(float(acc[sel].median()), 3) if n else None,
                    "share > chance + 2 pts": round(float((acc[sel] > chance + 0.02).float().mean()), 2) if n else None,
                }
            )
    return pd.DataFrame(rows)
