"""Notebook 05's preset (:class:`RichLazyConfig`), the paper's statements, the named ablations and the
names the experiment is built from (regimes, groups, measures)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from hgutils.nn.classifier_training import CLASSIFICATION_LOSSES
from hgutils.presets import Preset

REGIMES = ("rich", "lazy")
GROUPS = ("rich", "lazy", "untrained", "lazy init")
MEASURES = ("MSA", "MSA grid", "CKA", "SVCCA", "RSA", "Procrustes")
BASELINES = ("CKA", "SVCCA", "RSA", "Procrustes")
LAZY_MODES = ("init_scale", "alpha")
OPTIMIZERS = ("adam", "sgd")
STOPS = ("converged", "fixed")
ACTIVATIONS = ("tanh", "relu", "gelu")
SWEEP_VERSION = 4  # bump when run_experiment's output changes (part of the notebook's cache key)

SRC = "MSA paper, arXiv 2603.28764"
#: The paper's statements (it publishes figures, no numeric tables) and where they are made.
PAPER: dict[str, dict[str, str]] = {
    "swiss": {"value": "MSA ≈ 0; Procrustes and RSA low", "source": f"{SRC} §1, Fig. 1"},
    "procrustes": {"value": "Procrustes similarity ≈ 1 between rich and lazy", "source": f"{SRC} §4, Fig. 5d"},
    "msa_regime": {"value": "MSA separates rich and lazy into clusters", "source": f"{SRC} §4, Fig. 5d"},
    "hierarchy": {"value": "MSA reflects the hierarchy of the sweep", "source": f"{SRC} §4, Fig. 6a"},
    "trained": {"value": "CCA and RSA cannot tell trained from untrained", "source": f"{SRC} §4, Fig. 6a"},
}

#: The recipe this notebook used before (one hidden ReLU layer, α-scaled lazy regime, SGD on the
#: squared loss for a fixed number of steps, two opposite blobs per class).
PREVIOUS_RECIPE: dict[str, Any] = {
    "activation": "relu",
    "depth": 1,
    "blobs_per_class": 2,
    "blob_std": 0.15,
    "lazy_mode": "alpha",
    "gain_rich": 0.01,
    "gain_lazy": 1.0,
    "alpha_lazy": 30.0,
    "loss": "mse",
    "optimizer": "sgd",
    "lr_rich": 0.1,
    "lr_lazy": 0.005,
    "stop": "fixed",
}
#: Named ablations: field overrides of the protocol (sizes stay those of the scale preset).
ABLATIONS: dict[str, dict[str, Any]] = {
    "previous recipe": PREVIOUS_RECIPE,
    "previous recipe, depth 2": {**PREVIOUS_RECIPE, "depth": 2},
    "previous recipe, tanh": {**PREVIOUS_RECIPE, "activation": "tanh"},
    "protocol, ReLU": {"activation": "relu"},
    "protocol, depth 1": {"depth": 1},
}


@dataclass(frozen=True)
class RichLazyConfig(Preset):
    """Sizes and protocol of notebook 05 (smoke values are the defaults; the package docstring)."""

    # task
    class_counts: tuple[int, ...] = (2, 5)  # numbers of classes K in the hierarchical sweep
    blobs_per_class: int = 3  # interleaved blobs per class on the unit circle (odd: no same-class antipodes)
    n_per_class: int = 60  # training points per class, split evenly over its blobs
    blob_std: float = 0.07  # std of each Gaussian blob
    # networks
    hidden: int = 256  # width of every hidden layer
    depth: int = 2  # hidden layers; MSA and the baselines compare the last one
    activation: str = "tanh"  # hidden activation (tanh | relu | gelu), used for training, metrics and baselines
    n_seeds: int = 2  # networks per (K, regime) cell
    # regimes
    lazy_mode: str = "init_scale"  # init_scale: lazy = large init (paper); alpha: Chizat output scaling
    gain_rich: float = 0.1  # g of the rich networks, W ~ N(0, (g/sqrt(fan_in))^2)
    gain_lazy: float = 3.0  # g of the lazy networks
    gain_untrained: float = 1.0  # g of the untrained group
    alpha_lazy: float = 1.0  # Chizat alpha of the lazy networks (lazy_mode alpha only; must be 1 otherwise)
    # training
    loss: str = "cross_entropy"  # cross_entropy | mse (one-hot targets)
    optimizer: str = "adam"  # adam | sgd (full batch)
    lr_rich: float = 1e-3  # learning rate, rich networks
    lr_lazy: float = 1e-3  # learning rate, lazy networks
    momentum: float = 0.9  # heavy-ball momentum (sgd only)
    stop: str = "converged"  # converged: 100 % train accuracy and loss < loss_tol; fixed: max_steps steps
    loss_tol: float = 0.01  # training-loss threshold of the convergence rule
    max_steps: int = 1000  # step cap (the step count when stop is fixed)
    # regime checks, fixed before the results are seen
    rich_min_weight_change: float = 0.5  # rich: median relative change of the hidden weights above this
    rich_max_ntk_alignment: float = 0.9  # rich: median tangent-kernel alignment init-trained below this
    rich_min_label_gain: float = 0.01  # rich: median rise of the hidden kernel's label alignment above this
    lazy_max_weight_change: float = 0.1  # lazy: median relative change of the hidden weights below this
    lazy_min_ntk_alignment: float = 0.99  # lazy: median tangent-kernel alignment above this
    # comparison
    n_heldout: int = 200  # held-out points on the ring (MSA reference measure, baselines' samples)
    grid: int = 16  # second MSA reference measure: grid x grid points on [-extent, extent]^2
    extent: float = 1.5  # half-width of the grid
    svcca_components: int = 10  # SVCCA: at most this many top directions per network
    swiss_points: int = 400  # points on the swiss roll / plane
    ablations: tuple[str, ...] = ("previous recipe",)  # names in ABLATIONS run beside the protocol
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "class_counts": (2, 50),
        "blobs_per_class": (1, 50),
        "n_per_class": (1, 10_000),
        "hidden": (1, 10_000),
        "depth": (None, 20),  # depth 0 is refused by __post_init__, which says why
        "n_seeds": (1, 100),
        "max_steps": (1, 1_000_000),
        "n_heldout": (1, 100_000),
        "grid": (1, 1000),
        "svcca_components": (1, 1000),
        "swiss_points": (1, 100_000),
    }
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 0.4, "medium": 2.6}
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu",)  # 2-D inputs, 256-wide networks: everything runs on the CPU

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {
            "n_seeds": 5,
            "n_per_class": 100,
            "max_steps": 3000,
            "n_heldout": 500,
            "grid": 32,
            "swiss_points": 1000,
            # the previous recipe and the protocol's one-factor changes (the previous recipe's one-factor
            # changes train for the full fixed step count: paper scale)
            "ablations": ("previous recipe", "protocol, ReLU", "protocol, depth 1"),
        },
        "paper": {
            "n_seeds": 10,
            "n_per_class": 200,
            "max_steps": 20000,
            "n_heldout": 2000,
            "grid": 64,
            "swiss_points": 2000,
            "ablations": tuple(ABLATIONS),
        },
    }

    def __post_init__(self) -> None:
        choices = {
            "activation": ACTIVATIONS,
            "lazy_mode": LAZY_MODES,
            "loss": CLASSIFICATION_LOSSES,
            "optimizer": OPTIMIZERS,
            "stop": STOPS,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        if self.lazy_mode == "init_scale" and self.alpha_lazy != 1.0:
            raise ValueError(f"alpha_lazy applies to lazy_mode 'alpha' only; got {self.alpha_lazy} with 'init_scale'")
        if self.depth < 1 or self.hidden < 1 or self.n_seeds < 1 or self.max_steps < 1:
            raise ValueError(
                "need depth, hidden, n_seeds, max_steps >= 1; got "
                f"{self.depth}, {self.hidden}, {self.n_seeds}, {self.max_steps}"
            )
        if len(self.class_counts) < 1 or min(self.class_counts) < 2:
            raise ValueError(f"class_counts must list numbers of classes >= 2; got {self.class_counts}")
        unknown = [a for a in self.ablations if a not in ABLATIONS]
        if unknown:
            raise ValueError(f"unknown ablations {unknown}; expected names in {list(ABLATIONS)}")


CONFIG = RichLazyConfig


def ablation_config(cfg: RichLazyConfig, name: str) -> RichLazyConfig:
    """``cfg`` with the protocol fields of ablation ``name`` replaced (sizes kept; no nested ablations)."""
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r}; expected one of {list(ABLATIONS)}")
    return dataclasses.replace(cfg, **ABLATIONS[name], ablations=())
