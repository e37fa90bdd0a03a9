"""Notebook 01's preset (:class:`INRClassificationConfig`), the paper's numbers with each row's source and the
model lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from hgutils.data.images import IMAGE_DATASETS
from hgutils.experiments.weightspace_protocol import ComparisonSettings
from hgutils.weightspace.metanets.gth_gmn import CITATION

PAPER_SOURCE = f"{CITATION}, main results table"

#: ``PAPER[task][model] = (mean, std)``, test accuracy in %, each row's source in :data:`PAPER_ROW_SOURCES`
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "mnist_acc": {"GTH-GMN": (95.6, 0.18), "NFN_NP": (92.9, 0.22)},
    "fashion_mnist_acc": {"GTH-GMN": (80.72, 0.29), "NFN_NP": (75.6, 1.07)},
}
#: where each model's row of :data:`PAPER` was measured: NFN_NP's numbers come from the NFN paper on its own
#: SIREN sets, not from GTH-GMN's trajectories
PAPER_ROW_SOURCES: dict[str, str] = {
    "GTH-GMN": PAPER_SOURCE,
    "NFN_NP": "NFN paper (Zhou et al. 2023, arXiv:2302.14040) on its own SIREN sets, quoted in the GTH-GMN paper's "
    "main results table",
}
INR_PAPER_KEYS: dict[str, str] = {"mnist": "mnist_acc", "fashion_mnist": "fashion_mnist_acc"}
#: training INRs behind the paper's numbers (the INR datasets' 45k/5k/10k split)
PAPER_TRAIN_INRS = 45_000

#: every model on the judging zoo (GTH-GMN's ablations included)
INR_VARIANTS: tuple[str, ...] = (
    "GTH-GMN",
    "GTH-GMN (T=1)",
    "GTH-GMN (Euclidean)",
    "GTH-GMN (no GRU)",
    "GTH-GMN (literal links)",
    "StatNN",
    "FlatMLP",
    "FlatMLP+aug",
    "NFN_NP",
    "NFN_HNP",
    "DWSNet",
    "GMN",
)
#: GTH-GMN's ablations, each judged against the chosen configuration (run on the first ``ablation_seeds`` seeds)
ABLATION_VARIANTS: tuple[str, ...] = (
    "GTH-GMN (T=1)",
    "GTH-GMN (Euclidean)",
    "GTH-GMN (no GRU)",
    "GTH-GMN (literal links)",
)
#: one-seed variants shown beside the protocol: the paper's literal (two-stage, frozen, sized head) reading
SIDE_VARIANTS: tuple[str, ...] = ("GTH-GMN (two-stage, frozen)",)
#: the costly reference baselines (tens of CPU-seconds per epoch each at 2,400 training INRs): a preset may run
#: them on fewer seeds, under their own epoch cap (``slow_seeds``, ``epoch_caps``)
SLOW_VARIANTS: tuple[str, ...] = ("DWSNet", "GMN")
#: the models of the data curve (the paper's independent-init protocol at growing zoo sizes)
CURVE_VARIANTS: tuple[str, ...] = ("NFN_NP", "StatNN", "FlatMLP", "GTH-GMN")
#: the heads the selection grid tries on a frozen two-stage embedding (sized linear head, unsized MLP head)
GTH_HEADS: tuple[str, ...] = ("sized", "mlp")
#: the zoo a preset judges on when ``shared_init`` is set: its label in the results (:func:`~.zoos.zoo_label`)
SHARED, INDEPENDENT = "shared-init", "independent-init"


@dataclass(frozen=True)
class INRClassificationConfig(ComparisonSettings):
    """Notebook 01: classify INRs (one SIREN per image) from their weight trajectories.

    The **judging zoo** (``datasets``, ``n_images``) holds one SIREN per image; below the paper preset every INR
    starts from **one shared initialisation** (``shared_init``): with one initialisation per INR, as the papers'
    INR datasets have it, no weight-space model leaves chance from the few thousand INRs a CPU affords
    (docs/claims.md), so the comparative claims are judged where the models learn, and the deviation is declared.
    The paper's protocol (one initialisation per INR) is measured as a **data curve** (``curve_*``): nested
    independent-init zoos of ``curve_dataset`` from ``curve_sizes[0]`` training INRs up. The paper's embedding
    figure (13-layer INRs, ~100 snapshots) is notebook 07's.
    """

    datasets: tuple[str, ...] = ("digits",)  # judging zoos; medium: MNIST; paper: + Fashion-MNIST
    n_images: int = 300  # INRs of a judging zoo (one per image, class-balanced)
    inr_steps: int = 100  # Adam steps per INR (DWSNets: 1,000 with a 40 dB stop)
    T: int = 4  # snapshots per INR trajectory, log-spaced from step 0 through the last step (paper: 80-100)
    schedule: str = "log"  # snapshot spacing: "log" (dense early, where the weights move fastest) | "uniform"
    shared_init: bool = True  # judging zoo: one initialisation shared by every INR (paper preset: one per INR)
    variants: tuple[str, ...] = INR_VARIANTS  # models on the judging zoo (all on the same split)
    ablation_variants: tuple[str, ...] = ABLATION_VARIANTS  # run on the first ablation_seeds seeds
    ablation_seeds: int = 0  # seeds of the GTH-GMN ablations (0: every seed; >= 2 for a standard error)
    side_variants: tuple[str, ...] = SIDE_VARIANTS  # first seed only
    slow_variants: tuple[str, ...] = SLOW_VARIANTS  # run on the first slow_seeds seeds (0: every seed)
    slow_seeds: int = 0  # seeds of the costly message-passing baselines (0: every seed)
    gth_heads: tuple[str, ...] = GTH_HEADS  # heads of the two_stage cells of GTH-GMN's selection grid
    curve_dataset: str = "digits"  # the data curve's independent-init zoo (medium: Fashion-MNIST, 70,000 images)
    curve_sizes: tuple[int, ...] = (30, 60)  # training INRs of the data curve's nested zoos (first seed)
    curve_holdout: int = 40  # validation INRs and, as many, test INRs of every zoo of the data curve
    curve_variants: tuple[str, ...] = CURVE_VARIANTS  # models of the data curve (GTH-GMN: the chosen configuration)
    curve_caps: tuple[tuple[str, int], ...] = ()  # (model, largest training size) for the models the budget stops
    # before the curve's largest size
    curve_calibration: int = 16  # INRs fitted afresh to measure the data curve's zoo-fitting time per INR
    refine_steps: int = 3  # GTH-GMN stage-2 Riemannian refinement steps per snapshot
    lr_grid: tuple[float, ...] = ()  # per-model learning rates tried on the validation split (smoke: none)
    epochs: int = 2  # epoch ceiling per model and seed (the plateau rule decides)
    ceiling_networks: int = 2  # validation INRs whose link ceilings are measured (free node positions)
    ceiling_steps: int = 100  # optimiser steps of each ceiling fit
    recon_networks: int = 32  # validation INRs on which the reconstruction metrics are measured
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = ComparisonSettings.BOUNDS | {
        "n_images": (1, 1_000_000),
        "inr_steps": (1, 10_000),
        "T": (1, 1000),
        "ablation_seeds": (0, 50),
        "slow_seeds": (0, 50),
        "curve_sizes": (2, 500_000),
        "curve_holdout": (2, 100_000),
        "curve_caps": (2, 500_000),
        "curve_calibration": (1, 10_000),
        "ceiling_networks": (1, 500),
        "ceiling_steps": (1, 10_000),
        "recon_networks": (1, 10_000),
    }
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = ComparisonSettings.CHOICES | {
        "datasets": IMAGE_DATASETS,
        "curve_dataset": IMAGE_DATASETS,
        "schedule": ("log", "uniform"),  # snapshot spacings of the zoos
        "gth_heads": GTH_HEADS,
        "curve_variants": ComparisonSettings.CHOICES["variants"],
    }
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale smoke|medium``)
    #: medium: the publication of 2026-12-07 (4,921 s, zoos fitted in the run; other notebooks ran beside it at lower
    #: priority); the README's total reads these numbers
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 1.1, "medium": 82.0}

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {"n_images": 200, "ablation_seeds": 1, "slow_seeds": 1},
        # medium: the comparative claims on a shared-init MNIST zoo, the paper's protocol as a data curve
        # on independent-init Fashion-MNIST zoos. Costs measured 2026-12-06 on the 2-core machine in single-thread
        # processes (OMP_NUM_THREADS=1) while two other medium notebooks and test suites ran (load average 7-12 on 2
        # cores): CPU-seconds, so upper bounds on quiet cores
        "medium": {
            "datasets": ("mnist",),
            # 2,400 / 200 / 200 INRs: stage 1 of GTH-GMN validates on the whole validation split every epoch (4-5
            # CPU-s per 300 INRs of its 6-8 per epoch), so the validation and test splits hold the 200 INRs each the
            # issue asks for, not more. Zoo fit: 185 CPU-s per 3,000 INRs (200 Adam steps, T = 20)
            "n_images": 2800,
            "val_fraction": 200 / 2800,
            "test_fraction": 200 / 2800,
            "inr_steps": 200,
            "T": 20,
            "n_seeds": 3,
            "epochs": 150,  # a ceiling: every run measured on this zoo stopped on its plateau before it
            "patience": 10,
            "min_epochs": 10,
            "batch_size": 32,
            "lr_grid": (1e-3, 3e-3),
            "lr_search_steps": 300,
            # DWSNet (54 CPU-s per epoch on 2,400 training INRs, about 30 CPU-min per seed to a plateau) does not fit
            # the budget; GMN runs its authors' recipe on one seed, reported beside the table (measured on this zoo:
            # 704 CPU-s, plateau at epoch 35, test 20.7 %, training accuracy 18.5 %: did not pass the learnability
            # gate), not compared (no standard error)
            "variants": tuple(v for v in INR_VARIANTS if v != "DWSNet"),
            "slow_seeds": 1,
            "side_variants": (),  # the sized (frozen, linear) head is a row of the selection grid
            # the selection grid: two_stage x {sized, mlp} heads x lr {1e-3, 3e-3}, each cell to its own plateau (two
            # cells, one per worker; each cell's heads share its stage 1). Measured (lr 1e-3, patience 15): stage 1
            # plateaued at 704 of its steps (88 epochs on 256 networks), 560 CPU-s; the embedding of 2,700 INRs
            # (stage-2 refinement included) 120 CPU-s (0.049 s per INR); the heads 5-10 CPU-s; validation accuracy
            # 0.84 (mlp head on the 2,160-d embedding) and 0.69 (sized head, 23 principal components). The end-to-end
            # protocols are not in the medium grid: joint at today's size costs 0.4 CPU-s per optimiser step (32
            # CPU-s per epoch here), and the 12 full-trajectory runs of the chosen configuration would then not fit
            "gth_protocols": ("two_stage",),
            "gth_sizes": ("default",),
            "select_lr_grid": (1e-3, 3e-3),
            "select_steps": None,
            "pretrain_networks": 256,
            "pretrain_steps": 1200,  # a ceiling: stage 1 plateaued at 704 steps
            "refine_steps": 10,
            "refine_lr": 0.3,
            "ceiling_networks": 8,
            "ceiling_steps": 600,
            # the data curve: nested independent-init Fashion-MNIST zoos, 400 validation + 400 test INRs and 1,000 to
            # 8,000 training INRs (zoo fit 0.062 CPU-s per INR: 8,800 INRs, 545 CPU-s); NFN_NP 0.8 and StatNN 1.0
            # CPU-ms per training INR and epoch, FlatMLP 0.1; GTH-GMN about 700 CPU-s of stage 1 per point plus 0.049
            # CPU-s per INR embedded, so it stops at 2,000
            "curve_dataset": "fashion_mnist",
            "curve_sizes": (1000, 2000, 4000, 8000),
            "curve_holdout": 400,
            "curve_caps": (("GTH-GMN", 2000),),
            "curve_calibration": 256,
            "recon_networks": 128,
            "workers": 2,
        },
        "paper": {
            "datasets": ("mnist", "fashion_mnist"),
            "n_images": 70000,
            "inr_steps": 1000,
            "T": 100,
            "shared_init": False,  # the paper's protocol: one initialisation per INR
            "n_seeds": 5,
            "epochs": 200,
            "patience": 20,
            "min_epochs": 20,
            "batch_size": 32,
            "lr_grid": (3e-4, 1e-3, 3e-3),
            "lr_search_steps": 5000,
            "gth_protocols": ("two_stage", "finetune", "joint"),  # the full selection grid, as medium
            "gth_sizes": ("default", "large"),
            "select_lr_grid": (),
            "select_steps": 5000,
            "gth_dim": 32,
            "refine_steps": 40,
            "refine_lr": 0.3,
            "ceiling_networks": 32,
            "ceiling_steps": 1000,
            "compile": True,
            "val_fraction": 5000 / 70000,
            "test_fraction": 10000 / 70000,
            "curve_dataset": "fashion_mnist",
            "curve_sizes": (1000, 4000, 16000, 45000),
            "curve_holdout": 5000,
            "recon_networks": 512,
        },
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.curve_sizes:
            raise ValueError("curve_sizes must hold at least one training-set size")
        unknown = [m for m, _ in self.curve_caps if m not in self.curve_variants]
        if unknown:
            raise ValueError(f"curve_caps names models that are not curve_variants {self.curve_variants}: {unknown}")


CONFIG = INRClassificationConfig
