"""Notebook 06's preset (:class:`SymmetryReadoutConfig`), the paper's statements (:data:`PAPER`), the short
encoding labels (:data:`SHORT`) and the three 48-dim encodings (:func:`make_encodings`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from hgutils.presets import Preset
from hgutils.symmetry.domains import DOMAINS
from hgutils.symmetry.encodings import DyadicAxisPE, FourierPE, RandomFourierPE, TriAxisPE
from hgutils.symmetry.shapes import default_shapes
from hgutils.weightspace.stacked_optimizers import OPTIMIZERS

#: The paper's statements tested here (it reports its results qualitatively) and where they are made.
PAPER: dict[str, str] = {
    "source": "arXiv:2607.03108, abstract",
    "dyadic_d4": "DyadicAxisPE supports D4-sensitive readout",
    "dyadic_d3": "DyadicAxisPE structurally suppresses D3 rotations",
    "triaxis": "TriAxisPE gives lower D3/D6 readout scores under the tested Gram observations",
    "rff": "RFF mainly shows a π-rotation response",
    "hierarchy": "G_obs ⊆ G_lift ∩ G_true (Proposition 1, idealised exact hierarchy)",
}

#: Short encoding labels for tables and claim ids.
SHORT = {"DyadicAxisPE": "Dyadic", "TriAxisPE": "TriAxis", "RandomFourierPE": "RFF"}


@dataclass(frozen=True)
class SymmetryReadoutConfig(Preset):
    """Sizes of notebook 06 (smoke defaults; the paper's text gives d = 48 and is cut off before its
    training details, so width, depth, steps, points, optimiser, weight decay and the training domain
    are our documented choices)."""

    n_seeds: int = 1  # networks per (shape, encoding, domain, weight decay)
    hidden: int = 64  # width of every hidden layer
    depth: int = 2  # number of hidden layers (prefix Grams k = 1..depth)
    n_points: int = 16384  # training pool per (seed, domain, shape): half uniform in the domain, half near the boundary
    batch: int = 512  # minibatch per network and step, drawn afresh from the pool
    steps: int = 600  # optimizer steps
    optimizer: str = "adamw"  # "adam" (L2 in the gradient) | "adamw" (decoupled decay) | "sgd"
    lr: float = 2e-3  # learning rate
    domain: str = "disk"  # training domain of the main grid: "disk" (O(2)-invariant) | "square" ([-1, 1]^2, D4)
    weight_decay: float = 1.0  # decay of the main grid: shrinks weight directions the fit does not use
    factor_domains: tuple[str, ...] = ("disk", "square")  # domains of the factor grid (the main domain is added)
    factor_weight_decays: tuple[float, ...] = (0.0, 0.1, 1.0)  # decay ladder of the factor grid (main decay added)
    factor_shapes: tuple[str, ...] = ("square", "triangle", "hexagon")  # shapes of the factor grid
    n_eval: int = 1024  # fresh points (uniform in the unit disk) for the functional score and the fit error
    sweep_num: int = 72  # rotation sweep resolution (72 = 5 degree steps)
    rff_sigma: float = 10.0  # RFF frequency std (see hgutils.symmetry.encodings for why 10)
    threshold: float = 0.7  # "high" readout score in the hierarchy check
    fit_tol: float = 0.1  # a network has fitted its SDF when its relative L2 error on fresh points is below this

    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_seeds": (1, 200),
        "hidden": (1, 4096),
        "depth": (1, 20),
        "n_points": (1, 5_000_000),
        "batch": (1, 100_000),
        "steps": (1, 1_000_000),
        "n_eval": (1, 1_000_000),
        "sweep_num": (1, 100_000),
    }
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"optimizer": OPTIMIZERS}
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 0.8, "medium": 12.9}

    PRESETS: ClassVar[dict] = {
        "smoke": {},
        "medium": {"n_seeds": 5, "n_points": 65536, "steps": 1500, "n_eval": 4096, "sweep_num": 360},
        "paper": {"n_seeds": 20, "n_points": 262144, "batch": 2048, "steps": 10000, "n_eval": 8192, "sweep_num": 720},
    }

    def __post_init__(self) -> None:
        # papermill passes lists: store tuples (the config stays hashable and prints the same)
        object.__setattr__(self, "factor_domains", tuple(str(d) for d in self.factor_domains))
        object.__setattr__(self, "factor_weight_decays", tuple(float(w) for w in self.factor_weight_decays))
        object.__setattr__(self, "factor_shapes", tuple(str(s) for s in self.factor_shapes))
        object.__setattr__(self, "weight_decay", float(self.weight_decay))
        for d in (self.domain, *self.factor_domains):
            if d not in DOMAINS:
                raise ValueError(f"domain must be one of {DOMAINS}; got {d!r}")
        for w in (self.weight_decay, *self.factor_weight_decays):
            if not (math.isfinite(w) and w >= 0):
                raise ValueError(f"weight decays must be finite and >= 0; got {w!r}")
        known = [s.name for s in default_shapes()]
        bad = [s for s in self.factor_shapes if s not in known]
        if bad:
            raise ValueError(f"factor_shapes must be drawn from {known}; got unknown {bad}")

    @property
    def domains(self) -> tuple[str, ...]:
        """The factor grid's domains: ``factor_domains`` with ``domain`` added, in :data:`DOMAINS` order."""
        have = {*self.factor_domains, self.domain}
        return tuple(d for d in DOMAINS if d in have)

    @property
    def weight_decays(self) -> tuple[float, ...]:
        """The factor grid's decay ladder: ``factor_weight_decays`` with ``weight_decay`` added, ascending."""
        return tuple(sorted({*self.factor_weight_decays, self.weight_decay}))


CONFIG = SymmetryReadoutConfig


def make_encodings(cfg: SymmetryReadoutConfig) -> list[FourierPE]:
    """Dyadic (K=12), TriAxis (K=8), RFF (n=24, σ=cfg.rff_sigma, seed 0): all 48-dim (arXiv:2607.03108, §3.2)."""
    return [DyadicAxisPE(12), TriAxisPE(8), RandomFourierPE(24, cfg.rff_sigma, 0)]
