"""Notebook 01's INR zoos: the judging zoo (one shared initialisation below the paper preset), the data curve's
independent-init zoo, their labels in the results, the shared-initialisation check and the curve's fitting time.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pandas as pd
import torch

from hgutils.experiments.nb01_inr_classification.preset import INDEPENDENT, SHARED, INRClassificationConfig
from hgutils.weightspace.zoo import inr_image_zoo

#: how the results name each dataset
DATASET_NAMES: dict[str, str] = {
    "mnist": "MNIST",
    "fashion_mnist": "Fashion-MNIST",
    "digits": "8x8 digits",
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
}


def inr_zoo(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
    n_images: int | None = None,
    shared_init: bool | None = None,
    cache: bool = True,
) -> Any:
    """An INR zoo of ``dataset``: :func:`hgutils.weightspace.zoo.inr_image_zoo` with the notebook's sizes
    (``inr_steps``, ``T``, ``schedule``) and, unless given, its ``n_images`` and ``shared_init`` (the judging
    zoo). INR ``i`` fits image ``i`` of one class-stratified order, so a zoo of ``n`` INRs is the first ``n`` INRs
    of any larger zoo with the same settings."""

    return inr_image_zoo(
        dataset,
        scale=scale,
        data_dir=data_dir,
        n_images=cfg.n_images if n_images is None else int(n_images),
        steps=cfg.inr_steps,
        T=cfg.T,
        schedule=cfg.schedule,
        shared_init=cfg.shared_init if shared_init is None else bool(shared_init),
        seed=seed,
        device=device,
        workers=cfg.workers,
        cache=cache,
    )


def curve_zoo(
    cfg: INRClassificationConfig, scale: str = "smoke", data_dir: str | None = None, seed: int = 0, device: str = "cpu"
) -> Any:
    """The data curve's zoo: ``curve_dataset``, one initialisation per INR (the paper's protocol), as many INRs
    as the largest point needs (``2 curve_holdout + max(curve_sizes)``); every smaller zoo of the curve is a
    prefix of it (:func:`~.curve.curve_splits`)."""
    n = 2 * cfg.curve_holdout + max(cfg.curve_sizes)
    return inr_zoo(cfg.curve_dataset, cfg, scale, data_dir, seed, device, n_images=n, shared_init=False)


def fitting_seconds_per_inr(
    cfg: INRClassificationConfig, scale: str = "smoke", data_dir: str | None = None, seed: int = 0
) -> float:
    """CPU seconds to fit one INR of the data curve's zoo, measured in this process (one thread, no cache): the
    first ``curve_calibration`` INRs fitted afresh as one stacked batch, the process's CPU time divided by their
    number. A zoo of ``n`` INRs takes about ``n`` times this (its chunks of 256 INRs stacked alike)."""
    one = replace(cfg, workers=1)
    t0 = time.process_time()
    zoo = inr_zoo(cfg.curve_dataset, one, scale, data_dir, seed, "cpu", cfg.curve_calibration, False, cache=False)
    return (time.process_time() - t0) / len(zoo)


def zoo_label(dataset: str, shared_init: bool, n: int, train: int | None = None) -> str:
    """How the results name a zoo: ``"MNIST shared-init (3,000 INRs)"``, or with ``train``
    ``"Fashion-MNIST independent-init (1,000 training + 1,000 held-out INRs)"``."""
    kind = SHARED if shared_init else INDEPENDENT
    size = f"{n:,} INRs" if train is None else f"{train:,} training + {n - train:,} held-out INRs"
    return f"{DATASET_NAMES.get(dataset, dataset)} {kind} ({size})"


def shared_init_check(zoo: Any) -> dict[str, float]:
    """Whether the INRs of ``zoo`` share their initialisation: the largest absolute difference of any parameter
    between any INR and the first at the first snapshot (``max |theta_i(0) - theta_0(0)|``: 0 for a shared
    initialisation, the zoo's step 0 being the initialisation) and, after training, the median over INRs of the
    relative distance to the first INR at the last snapshot, ``||theta_i(T) - theta_0(T)|| / ||theta_0(T)||``."""
    if len(zoo) < 2:
        raise ValueError(f"the check compares INRs with the first: the zoo needs >= 2; got {len(zoo)}")
    first = torch.cat([zoo.params[k][:, 0].flatten(1) for k in sorted(zoo.params)], 1).float()
    last = torch.cat([zoo.params[k][:, -1].flatten(1) for k in sorted(zoo.params)], 1).float()
    moved = (last[1:] - last[0]).norm(dim=1) / last[0].norm()
    return {
        "step of the first snapshot": int(zoo.steps[0]),
        "max |theta_i(0) - theta_0(0)|": float((first[1:] - first[0]).abs().max()),
        "median ||theta_i(T) - theta_0(T)|| / ||theta_0(T)||": float(moved.median()),
    }


def _steps_label(steps: Any) -> str:
    """The snapshot steps in full when there are at most five, else the first, the last and the count."""
    s = [int(v) for v in steps]
    if len(s) <= 5:
        return ", ".join(map(str, s))
    return f"{s[0]} to {s[-1]} ({len(s)} snapshots)"


def zoo_summary(zoos: dict[str, Any]) -> pd.DataFrame:
    """One row per zoo: INRs, architecture, snapshots, fit quality (PSNR) and how far the weights moved
    between the first and the last snapshot (:meth:`hgutils.weightspace.zoo.Zoo.movement`)."""
    rows = []
    for name, zoo in zoos.items():
        p = zoo.meta["psnr"]
        mv = zoo.movement(0, -1)
        mv1 = zoo.movement(1, -1) if zoo.T > 2 else mv
        rows.append(
            {
                "zoo": name,
                "INRs": len(zoo),
                "sizes": "-".join(str(s) for s in zoo.spec.sizes),
                "T": zoo.T,
                "steps": _steps_label(zoo.steps),
                "PSNR median (dB)": round(float(p.median()), 1),
                "PSNR p10 (dB)": round(float(p.quantile(0.1)), 1),
                "moved t0 -> last": round(mv["all"], 3),
                "moved t1 -> last": round(mv1["all"], 3),
            }
        )
    return pd.DataFrame(rows)
