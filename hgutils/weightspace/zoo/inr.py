"""The INR image zoo: one SIREN per image (the DWSNets / NFN protocol), with training snapshots.

DWSNets: Navon et al. (2023), "Equivariant Architectures for Learning in Deep Weight Spaces"
(arXiv:2301.12780); NFN: Zhou et al. (2023), "Permutation Equivariant Neural Functionals"
(arXiv:2302.14040). Both fit 2 -> 32 -> 32 -> 1 SIRENs (omega0 = 30) to every image.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from hgutils.data import load_images
from hgutils.data.images import IMAGE_DATASETS
from hgutils.presets import Preset
from hgutils.weightspace.batched_training import snapshot_schedule
from hgutils.weightspace.zoo.cache import cached_zoo, generate_chunked, net_seeds, storage_dtype
from hgutils.weightspace.zoo.containers import MLPSpec, Zoo
from hgutils.weightspace.zoo.siren import fit_sirens, image_coordinates, psnr

log = logging.getLogger("hgutils")


@dataclass(frozen=True)
class INRZooConfig(Preset):
    """One SIREN INR per image (the DWSNets / NFN protocol). Smoke values are the defaults."""

    n_images: int = 200  # INRs in the zoo (one per image); paper: every image of the dataset
    split: str = "all"  # "train", "test" or "all" (train then test) images of the dataset
    hidden: tuple[int, ...] = (32, 32)  # hidden widths; 2 -> 32 -> 32 -> 1 as DWSNets/NFN
    omega0: float = 30.0  # SIREN frequency (DWSNets/NFN: 30)
    init: str = "siren"  # "siren" (standard, NFN) | "siren_dwsnets" (DWSNets variant, +0.5 output)
    shared_init: bool = False  # every INR starts from one initialisation (seeded by ``seed``); False:
    # network i gets its own (NFN / DWSNets protocol)
    lr: float = 5e-4  # Adam learning rate (DWSNets: 5e-4)
    steps: int = 150  # Adam steps per INR (DWSNets: 1,000)
    T: int = 6  # snapshots per INR (paper: 80-100)
    schedule: str = "uniform"  # snapshot spacing: "uniform" | "log"
    stop_psnr: float | None = None  # freeze an INR once its PSNR >= this (DWSNets: 40 dB); None = never
    snapshot_dtype: str = "float32"  # storage of the snapshots: "float32" | "float16"
    chunk_size: int = 256  # networks per resumable chunk file
    seed: int = 0  # base seed: network i uses seed * 1_000_003 + i
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium: sized by benchmarks/zoo.py (cost per INR-step) to fit the notebook budget
        "medium": {"n_images": 5000, "steps": 100, "T": 20},
        "paper": {"n_images": 70000, "steps": 1000, "T": 100},
    }


def _load_inr_images(dataset: str, cfg: INRZooConfig, data_dir: str | None) -> tuple[Tensor, Tensor, str]:

    if cfg.split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all'; got {cfg.split!r}")
    splits = ["train", "test"] if cfg.split == "all" else [cfg.split]
    imgs, labels, sources = [], [], []
    need = cfg.n_images
    for sp in splits:
        if need <= 0:
            break
        d = load_images(dataset, split=sp, data_dir=data_dir, limit=None, seed=cfg.seed)
        if d.images.shape[0] > need:
            d = load_images(dataset, split=sp, data_dir=data_dir, limit=need, seed=cfg.seed)
        imgs.append(d.images)
        labels.append(d.labels)
        sources.append(d.source)
        need -= d.images.shape[0]
    images = torch.cat(imgs)
    if images.shape[0] < cfg.n_images:
        raise ValueError(f"{dataset} ({cfg.split}) has {images.shape[0]} images; n_images={cfg.n_images} requested")
    return images, torch.cat(labels), "; ".join(sources)


def inr_image_zoo(
    dataset: str,
    config: INRZooConfig | None = None,
    *,
    scale: str = "smoke",
    data_dir: str | None = None,
    cache: bool = True,
    cache_root: str | Path | None = None,
    device: str | torch.device = "cpu",
    workers: int = 1,
    **overrides: Any,
) -> Zoo:
    """A zoo of SIREN INRs, one per image of ``dataset``, with ``T`` snapshots of each fit.

    Each INR maps pixel coordinates ``(x, y) in [-1, 1]^2`` to intensity (``C`` outputs for ``C``
    channels), trained full-batch with Adam on the MSE. ``meta``: ``label`` (image class),
    ``index`` (image index), ``final_loss``, ``psnr`` (dB, of the final INR), ``stopped_at``.

    Parameters
    ----------
    dataset
        ``"mnist"``, ``"fashion_mnist"``, ``"digits"`` (smoke) or ``"cifar10"`` (3 outputs).
    config
        An :class:`INRZooConfig`; default ``INRZooConfig.from_scale(scale, **overrides)``.
    cache
        Store/reuse the zoo under ``cache_root`` (default :func:`hgutils.repro.cache_dir`).
    device
        Where to train (``"cuda"`` for paper scale); the zoo is returned on the CPU. The device type
        is part of the cache key (GPU arithmetic differs in the last bits).
    workers
        Processes that fit the zoo's chunks side by side (one thread each; CPU only, else 1):
        the zoo is the same for every value, which is not part of the cache key.
    """

    if dataset not in IMAGE_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {IMAGE_DATASETS}")
    cfg = config if config is not None else INRZooConfig.from_scale(scale, **overrides)
    if cfg.init not in ("siren", "siren_dwsnets"):
        raise ValueError(f"init must be 'siren' or 'siren_dwsnets'; got {cfg.init!r}")
    sched = snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)
    sdtype = storage_dtype(cfg.snapshot_dtype)
    images, labels, source = _load_inr_images(dataset, cfg, data_dir)
    C, H, W = images.shape[1:]
    spec = MLPSpec((2, *cfg.hidden, C), "sine", cfg.omega0, 0.5 if cfg.init == "siren_dwsnets" else 0.0)
    x = image_coordinates(H, W)
    targets = images.flatten(2).transpose(1, 2)  # [n, H*W, C]
    stop_loss = None if cfg.stop_psnr is None else 10.0 ** (-cfg.stop_psnr / 10.0)
    dev = torch.device(device)
    key = {"dataset": dataset, "config": cfg, "source": source, "version": 2, "device": dev.type}

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        seeds = net_seeds(cfg.seed, 0, 1) * (stop - start) if cfg.shared_init else net_seeds(cfg.seed, start, stop)
        return fit_sirens(
            x,
            targets[start:stop],
            spec,
            init=cfg.init,
            seeds=seeds,
            steps=cfg.steps,
            snapshot_steps=sched,
            lr=cfg.lr,
            stop_loss=stop_loss,
            snapshot_dtype=sdtype,
            device=dev,
            grid=(H, W),
        )

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "inr_zoo",
            key,
            cfg.n_images,
            cfg.chunk_size,
            chunk,
            root=cache_root,
            desc=f"INR zoo {dataset}",
            persist=cache,
            workers=workers if dev.type == "cpu" else 1,
        )

    out = cached_zoo("inr_zoo", key, build, cache_root, cache)
    params = {k: out[k] for k in (f"{p}{l}" for l in range(spec.n_layers) for p in "Wb")}
    meta = {
        "label": labels[: cfg.n_images].clone(),
        "index": torch.arange(cfg.n_images),
        "final_loss": out["final_loss"],
        "psnr": psnr(out["final_loss"]),
        "stopped_at": out["stopped_at"],
    }
    return Zoo(
        spec,
        params,
        torch.tensor(sched, dtype=torch.int64),
        meta,
        {"kind": "inr", "dataset": dataset, "source": source, "config": cfg.to_dict(), "image_shape": (C, H, W)},
    )


def inr_reconstruct(zoo: Zoo, t: int = -1) -> Tensor:
    """Images rendered by the INRs of ``zoo`` at snapshot ``t``: ``[N, C, H, W]``."""
    if zoo.info.get("kind") != "inr":
        raise ValueError("inr_reconstruct needs an INR zoo")
    C, H, W = zoo.info["image_shape"]
    out = zoo.spec.forward(zoo.at(t), image_coordinates(H, W))
    return out.transpose(1, 2).reshape(len(zoo), C, H, W)
