"""Notebook 09's preset (:class:`DynamicsConfig`), the paper's statements with their source, and the names
the experiment is built from (architectures, groups, measures, robustness runs)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from hgutils.dynamics.task import AngleMemoryTask
from hgutils.presets import Preset

ARCHS = ("rnn", "ssm")
ARCH_NAMES = {"rnn": "RNN", "ssm": "SSM"}
MEASURES = ("MSA", "RSA", "CKA", "DSA")
BASELINES = ("RSA", "CKA", "DSA")
#: the robustness runs: the protocol again under a second seed set, and under a second hidden size
ROBUSTNESS = ("second seed set", "second hidden size")
EXPERIMENT_VERSION = 1  # bump when run_experiment's output changes (part of the notebook's cache key)

SRC = "MSA paper, arXiv 2603.28764"
FIG = "qualitative: the paper gives a figure, no numbers"
#: The paper's statements (§5, Fig. 7: a figure without numbers) and where they are made.
PAPER: dict[str, dict[str, str]] = {
    "learn": {"value": "RNNs and SSMs both solve the task", "source": f"{SRC} §5, Fig. 7a-b ({FIG})"},
    "arch": {"value": "MSA clusters the architectures", "source": f"{SRC} §5, Fig. 7c-d ({FIG})"},
    "training": {"value": "MSA clearly separates trained from untrained", "source": f"{SRC} §5, Fig. 7c-d ({FIG})"},
    "rsa": {"value": "RSA cannot separate the training stages", "source": f"{SRC} §5, Fig. 7e ({FIG})"},
    "dsa": {"value": "DSA rates all models almost alike", "source": f"{SRC} §5, Fig. 7e ({FIG})"},
    "time": {
        "value": "RNN geometry very stable over the memory period, SSM's changes markedly",
        "source": f"{SRC} §5, Fig. 7f ({FIG})",
    },
}


@dataclass(frozen=True)
class DynamicsConfig(Preset):
    """Sizes and protocol of notebook 09 (smoke values are the defaults; the package docstring)."""

    # task (hgutils.dynamics.AngleMemoryTask): every duration in steps
    n_items: int = 2  # angles presented in sequence (>= 2: the per-time geometry needs a 2-D coded manifold)
    stim_steps: int = 3  # steps each angle is shown
    gap_steps: int = 2  # input-free steps between the two angles
    delay_steps: int = 8  # input-free memory period before the report
    report_steps: int = 3  # report period (go cue on, loss counted)
    # networks
    hidden: int = 32  # RNN units; SSM layer width H (and P = hidden complex modes)
    rnn_gain: float = 1.0  # RNN recurrent weights ~ N(0, g^2/H)
    ssm_r_min: float = 0.9  # LRU ring initialisation: |lambda| in [r_min, r_max]
    ssm_r_max: float = 0.999
    ssm_max_phase: float = math.pi / 10  # LRU: arg(lambda) uniform in [0, max_phase]
    n_seeds: int = 3  # trained networks per architecture (and as many untrained ones: their initialisations)
    # training (hgutils.loop.train through hgutils.dynamics.train_stack)
    n_train: int = 512  # training trials (random angle pairs)
    n_val: int = 128  # validation trials (early stopping)
    batch_size: int = 64
    lr: float = 2e-3  # Adam
    input_noise: float = 0.05  # std of the Gaussian noise added to the inputs while training
    clip: float = 1.0  # per-network gradient-norm clip
    max_epochs: int = 30
    patience: int = 15  # epochs without a better mean validation loss
    max_error_deg: float = 10.0  # learnability: held-out mean circular report error below this (chance 90°)
    # comparison
    grid: int = 8  # held-out angles per item: grid^n_items points (MSA's reference measure)
    time_stride: int = 2  # RSA / CKA samples: the grid points at every time_stride-th delay step
    dsa_trials: int = 32  # DSA: trials (random held-out angle pairs) per network
    dsa_delays: int = 3  # DSA: delay-embedding length
    dsa_rank: int = 6  # DSA: HAVOK rank
    dsa_iters: int = 100  # DSA: Procrustes optimisation steps (the package's DSA default is 1500)
    dsa_lr: float = 5e-3  # DSA: its learning rate (the package's default)
    # robustness: the protocol under a second seed set and a second hidden size
    robustness: tuple[str, ...] = ROBUSTNESS
    robust_hidden: int = 16  # the second hidden size
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_items": (2, 4),
        "stim_steps": (1, 100),
        "gap_steps": (0, 100),
        "delay_steps": (2, 1000),
        "report_steps": (1, 100),
        "hidden": (1, 4096),
        "rnn_gain": (0.0, 10.0),
        "ssm_r_min": (0.0, 1.0),
        "ssm_r_max": (0.0, 1.0),
        "ssm_max_phase": (0.0, 2 * math.pi),
        "n_seeds": (3, 100),
        "n_train": (1, 1_000_000),
        "n_val": (1, 100_000),
        "batch_size": (1, 100_000),
        "lr": (0.0, 1.0),
        "input_noise": (0.0, 10.0),
        "clip": (0.0, None),
        "max_epochs": (1, 100_000),
        "patience": (1, 100_000),
        "max_error_deg": (0.0, 180.0),
        "grid": (2, 100),
        "time_stride": (1, 1000),
        "dsa_trials": (1, 10_000),
        "dsa_delays": (1, 1000),
        "dsa_rank": (1, 10_000),
        "dsa_iters": (1, 100_000),
        "dsa_lr": (0.0, 1.0),
        "robust_hidden": (1, 4096),
    }
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"robustness": ROBUSTNESS}
    #: measured wall minutes of the whole notebook on 2 CPU cores (``reproduce --scale medium``)
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 1.5, "medium": 21.6}
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu",)  # 64-unit recurrent networks: everything runs on the CPU

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {
            "stim_steps": 5,
            "gap_steps": 5,
            "delay_steps": 20,
            "report_steps": 5,
            "hidden": 64,
            "n_seeds": 5,
            "n_train": 2048,
            "n_val": 256,
            "max_epochs": 80,
            "grid": 16,
            "time_stride": 4,
            "dsa_trials": 64,
            "dsa_delays": 5,
            "dsa_rank": 10,
            "dsa_iters": 500,
            "robust_hidden": 128,
        },
        "paper": {
            "stim_steps": 5,
            "gap_steps": 5,
            "delay_steps": 20,
            "report_steps": 5,
            "hidden": 128,
            "n_seeds": 10,
            "n_train": 8192,
            "n_val": 1024,
            "max_epochs": 400,
            "patience": 30,
            "grid": 24,
            "time_stride": 4,
            "dsa_trials": 128,
            "dsa_delays": 5,
            "dsa_rank": 10,
            "dsa_iters": 1500,
            "robust_hidden": 64,
        },
    }

    def __post_init__(self) -> None:
        if not 0.0 < self.ssm_r_min < self.ssm_r_max < 1.0:
            raise ValueError(f"need 0 < ssm_r_min < ssm_r_max < 1; got {self.ssm_r_min}, {self.ssm_r_max}")
        if self.n_items < 2:
            raise ValueError(f"n_items must be >= 2 (the per-time geometry needs two coded angles); got {self.n_items}")
        if self.dsa_delays + 1 > self.delay_steps:
            raise ValueError(f"dsa_delays ({self.dsa_delays}) must leave a step of the {self.delay_steps}-step delay")
        unknown = [r for r in self.robustness if r not in ROBUSTNESS]
        if unknown:
            raise ValueError(f"unknown robustness runs {unknown}; expected names in {list(ROBUSTNESS)}")

    @property
    def task(self) -> AngleMemoryTask:
        """The task of this configuration."""
        return AngleMemoryTask(self.n_items, self.stim_steps, self.gap_steps, self.delay_steps, self.report_steps)


CONFIG = DynamicsConfig


def robustness_config(cfg: DynamicsConfig, name: str) -> tuple[DynamicsConfig, int]:
    """``(config, seed offset)`` of robustness run ``name``: the second seed set keeps ``cfg`` and shifts
    every seed (offset 1); the second hidden size sets ``hidden`` to ``robust_hidden`` (same seeds)."""
    if name not in ROBUSTNESS:
        raise ValueError(f"unknown robustness run {name!r}; expected one of {list(ROBUSTNESS)}")
    base = dataclasses.replace(cfg, robustness=())
    if name == "second seed set":
        return base, 1
    return dataclasses.replace(base, hidden=cfg.robust_hidden), 0
