"""Notebook 01's INR zoos: the main zoo (one initialisation per INR) and the shared-initialisation
variant."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from hgutils.experiments.nb01_inr_classification.preset import INRClassificationConfig
from hgutils.weightspace.zoo import inr_image_zoo


def inr_zoo(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> Any:
    """The main INR zoo: :func:`hgutils.weightspace.zoo.inr_image_zoo` with the notebook's sizes
    (``n_images``, ``inr_steps``, ``T``, ``schedule``) and ``shared_init`` on top of the zoo preset."""

    return inr_image_zoo(
        dataset,
        scale=scale,
        data_dir=data_dir,
        n_images=cfg.n_images,
        steps=cfg.inr_steps,
        T=cfg.T,
        schedule=cfg.schedule,
        shared_init=cfg.shared_init,
        seed=seed,
        device=device,
        workers=cfg.workers,
    )


def inr_zoos(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> tuple[Any, Any | None]:
    """The main zoo and the learning curve's zoo: ``(main, curve)``.

    With ``curve_images > n_images`` one zoo of ``curve_images`` INRs is fitted (:func:`inr_zoo`); the
    images come in one class-stratified order and INR ``i`` is fitted from its own seed, so its first
    ``n_images`` INRs are the main zoo :func:`inr_zoo` fits alone (same images, same initialisations),
    and ``curve`` is the whole zoo. Otherwise ``curve`` is ``None`` (the curve reads the main zoo)."""
    if cfg.curve_images <= cfg.n_images:
        return inr_zoo(dataset, cfg, scale, data_dir, seed, device), None
    full = inr_zoo(dataset, replace(cfg, n_images=cfg.curve_images), scale, data_dir, seed, device)
    main = full.subset(slice(0, cfg.n_images))
    main.info["source"] = f"the first {cfg.n_images} INRs of {len(full)}: {full.info.get('source', dataset)}"
    return main, full


def shared_zoo(
    dataset: str,
    cfg: INRClassificationConfig,
    scale: str = "smoke",
    data_dir: str | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> Any:
    """The easier variant: the first ``shared_images`` images, fitted the same way, every INR from
    one shared initialisation (its neurons line up across the zoo)."""
    return inr_zoo(dataset, replace(cfg, n_images=cfg.shared_images, shared_init=True), scale, data_dir, seed, device)


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
