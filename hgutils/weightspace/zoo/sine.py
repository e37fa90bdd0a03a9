"""The sine zoo: SIRENs fitting ``a sin(b x)`` -- the self-supervised task of DWSNets
(Navon et al. 2023, arXiv:2301.12780, §7.2), with training snapshots."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from hgutils.presets import Preset
from hgutils.weightspace.batched_training import snapshot_schedule
from hgutils.weightspace.zoo.cache import cached_zoo, generate_chunked, net_seeds, storage_dtype
from hgutils.weightspace.zoo.containers import MLPSpec, Zoo
from hgutils.weightspace.zoo.siren import fit_sirens

log = logging.getLogger("hgutils")


@dataclass(frozen=True)
class SineZooConfig(Preset):
    """SIRENs fitting ``a sin(b x)`` (the DWSNets protocol). Smoke values are the defaults."""

    n_nets: int = 128  # INRs in the zoo (DWSNets: test 1,000 / val 1,000 / rest train)
    n_points: int = 200  # x grid on [-pi, pi) (DWSNets: 2,000 points)
    a_range: tuple[float, float] = (0.0, 10.0)  # amplitude a ~ U(a_range) (DWSNets: U(0, 10))
    b_range: tuple[float, float] = (0.0, 10.0)  # frequency b ~ U(b_range) (DWSNets: U(0, 10))
    hidden: tuple[int, ...] = (32, 32)  # 1 -> 32 -> 32 -> 1 as DWSNets
    omega0: float = 30.0  # SIREN frequency (DWSNets: 30)
    init: str = "siren_dwsnets"  # DWSNets INR init (+0.5 output offset); "siren" = standard
    lr: float = 1e-3  # Adam learning rate (DWSNets: 1e-3)
    weight_decay: float = 1e-4  # Adam L2 (DWSNets: 1e-4)
    steps: int = 150  # full-batch epochs (DWSNets: up to 1,500)
    stop_loss: float | None = 1e-4  # freeze a net once its MSE <= this (DWSNets: 1e-4)
    T: int = 6  # snapshots per INR
    schedule: str = "uniform"  # "uniform" | "log"
    snapshot_dtype: str = "float32"  # "float32" | "float16"
    chunk_size: int = 256  # networks per resumable chunk file
    seed: int = 0  # base seed (init of net i and its (a, b) depend only on seed, i)
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium: sized by benchmarks/zoo.py (cost per INR-step) to fit the notebook budget
        "medium": {"n_nets": 2000, "n_points": 500, "steps": 300, "T": 20},
        "paper": {"n_nets": 10000, "n_points": 2000, "steps": 1500, "T": 100},
    }


def sine_targets(n_points: int) -> Tensor:
    """The DWSNets grid: ``n_points`` points ``-pi + 2 pi k / n_points`` on ``[-pi, pi)``, as ``[P, 1]``."""
    return (-math.pi + 2 * math.pi * torch.arange(n_points, dtype=torch.float64) / n_points).float()[:, None]


def sine_zoo(
    config: SineZooConfig | None = None,
    *,
    scale: str = "smoke",
    cache: bool = True,
    cache_root: str | Path | None = None,
    device: str | torch.device = "cpu",
    workers: int = 1,
    **overrides: Any,
) -> Zoo:
    """A zoo of SIRENs fitting :math:`a \\sin(b x)`; ``meta["target"] = (a, b)`` ``[N, 2]``.

    Also in ``meta``: ``final_loss``, ``stopped_at``. ``a`` and ``b`` of network ``i`` are drawn from a
    generator seeded with the network's seed, so they do not depend on the chunking. ``device``
    and ``workers`` as in :func:`inr_image_zoo`.
    """
    cfg = config if config is not None else SineZooConfig.from_scale(scale, **overrides)
    sched = snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)
    sdtype = storage_dtype(cfg.snapshot_dtype)
    if cfg.init not in ("siren", "siren_dwsnets"):
        raise ValueError(f"init must be 'siren' or 'siren_dwsnets'; got {cfg.init!r}")
    spec = MLPSpec((1, *cfg.hidden, 1), "sine", cfg.omega0, 0.5 if cfg.init == "siren_dwsnets" else 0.0)
    x = sine_targets(cfg.n_points)
    dev = torch.device(device)
    key = {"config": cfg, "version": 1, "device": dev.type}

    def ab(start: int, stop: int) -> Tensor:
        out = []
        for s in net_seeds(cfg.seed, start, stop):
            g = torch.Generator().manual_seed(s + 7_777_777)
            u = torch.rand(2, generator=g, dtype=torch.float64)
            out.append(
                torch.stack(
                    [
                        cfg.a_range[0] + (cfg.a_range[1] - cfg.a_range[0]) * u[0],
                        cfg.b_range[0] + (cfg.b_range[1] - cfg.b_range[0]) * u[1],
                    ]
                )
            )
        return torch.stack(out).float()

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        target = ab(start, stop)
        y = target[:, 0, None, None] * torch.sin(target[:, 1, None, None] * x.unsqueeze(0))
        out = fit_sirens(
            x,
            y,
            spec,
            init=cfg.init,
            seeds=net_seeds(cfg.seed, start, stop),
            steps=cfg.steps,
            snapshot_steps=sched,
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            stop_loss=cfg.stop_loss,
            snapshot_dtype=sdtype,
            device=dev,
        )
        out["target"] = target
        return out

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "sine_zoo",
            key,
            cfg.n_nets,
            cfg.chunk_size,
            chunk,
            root=cache_root,
            desc="sine zoo",
            persist=cache,
            workers=workers if torch.device(device).type == "cpu" else 1,
        )

    out = cached_zoo("sine_zoo", key, build, cache_root, cache)
    params = {k: out[k] for k in (f"{p}{l}" for l in range(spec.n_layers) for p in "Wb")}
    meta = {"target": out["target"], "final_loss": out["final_loss"], "stopped_at": out["stopped_at"]}
    return Zoo(
        spec, params, torch.tensor(sched, dtype=torch.int64), meta, {"kind": "sine", "config": cfg.to_dict(), "x": x}
    )
