"""Notebook 07's runs: the 13-layer INR zoo, GTH-GMN trained on it by reconstruction, and the geometry
of its node embedding read in the true and in a time-shuffled snapshot order (the control).

The paper (GTH-GMN, ICLR 2026, OpenReview Xq64xkQCak, embedding figure) shows, for a 13-layer INR MLP
at snapshots t = 11 and t = 97, that layers separate radially and angularly in the ball and that nodes
drift toward the boundary. Here the same statements are read as numbers for every read network
(:func:`hgutils.weightspace.embedding_geometry.per_network_geometry`) and held against a control: the
same encoder reading the same trajectories with their snapshots shuffled (:func:`read_geometry`). A
trend of the trajectory disappears under the shuffle; an artefact of the encoder's recurrence (e.g. GRU
states drifting with the number of snapshots read) does not.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments.nb07_training_geometry.preset import TrainingGeometryConfig
from hgutils.loop import LearnabilityGate, train
from hgutils.repro import seed_everything
from hgutils.weightspace.embedding_geometry import per_network_geometry
from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.metanets.base import to_device
from hgutils.weightspace.metanets.gth_gmn.recon_baselines import baseline_phrase, compare_to_baselines
from hgutils.weightspace.tasks import ReconstructionTask, TrainConfig
from hgutils.weightspace.zoo import inr_image_zoo

#: the readouts of :func:`per_network_geometry`, in the order the notebook shows them
READOUTS: tuple[str, ...] = ("radial_sep", "angular_sep", "mean_radius")


def deep_inr_zoo(
    cfg: TrainingGeometryConfig, scale: str = "smoke", data_dir: str | None = None, seed: int = 0, device: str = "cpu"
) -> Any:
    """The figure's zoo: ``n_inrs`` SIRENs (2 inputs, ``layers - 1`` hidden layers of ``width``, 1 output),
    each fitted to one image of ``dataset`` for ``inr_steps`` Adam steps from its own initialisation,
    with ``T`` log-spaced snapshots (:func:`hgutils.weightspace.zoo.inr_image_zoo`, cached)."""

    return inr_image_zoo(
        cfg.dataset,
        scale=scale,
        data_dir=data_dir,
        n_images=cfg.n_inrs,
        hidden=(cfg.width,) * (cfg.layers - 1),
        steps=cfg.inr_steps,
        T=cfg.T,
        schedule="log",
        lr=cfg.inr_lr,
        shared_init=False,
        seed=seed + 101,
        device=device,
    )


def zoo_table(zoo: Any) -> pd.DataFrame:
    """One row: INRs, architecture, snapshots (first and last step), fit quality (median PSNR, where
    the zoo records it) and how far the weights moved from the first snapshot to the last
    (:meth:`hgutils.weightspace.zoo.Zoo.movement`, the median relative Frobenius change)."""
    steps = [int(s) for s in zoo.steps]
    row = {
        "INRs": len(zoo),
        "sizes": "-".join(str(s) for s in zoo.spec.sizes),
        "T": zoo.T,
        "steps": f"{steps[0]} to {steps[-1]} (log-spaced)",
    }
    if "psnr" in zoo.meta:
        row["PSNR median (dB)"] = round(float(zoo.meta["psnr"].median()), 1)
    row["moved t0 -> last"] = round(zoo.movement(0, -1)["all"], 3)
    return pd.DataFrame([row])


@dataclass
class EmbeddingReadout:
    """Node coordinates of some networks in their true and in a shuffled snapshot order, and their readouts.

    ``z``, ``z_shuffled`` ``[B, T, V, d]``; ``perm`` the shuffled order (position ``p`` reads snapshot
    ``perm[p]``); ``node_layer``/``node_type`` ``[V]`` (type 3: a bias node); ``readouts``/``control``:
    :func:`per_network_geometry` of each (``[B, T]`` arrays).
    """

    z: Tensor
    z_shuffled: Tensor
    perm: Tensor
    node_layer: Tensor
    node_type: Tensor
    c: float
    steps: list[int]
    readouts: dict[str, np.ndarray]
    control: dict[str, np.ndarray]


def read_geometry(
    model: Any, data: Any, idx: Tensor, steps: list[int], refine_steps: int | None = None, seed: int = 0
) -> EmbeddingReadout:
    """GTH-GMN's (stage-2 refined) node coordinates of networks ``idx`` of ``data`` (its prepared
    graphs) in the true snapshot order and in one random order (seeded), with their readouts."""
    if not hasattr(model, "embed_nodes"):
        raise ValueError(f"geometry readouts need a GTH-GMN model; got {type(model).__name__}")

    batch = to_device(data[torch.as_tensor(idx, dtype=torch.long)], next(model.parameters()).device)
    steps_r = model.cfg.refine_steps if refine_steps is None else refine_steps
    z = model.embed_nodes(batch, refine_steps=steps_r).detach().cpu()
    T = z.shape[1]
    if len(steps) != T:
        raise ValueError(f"steps must give one training step per snapshot (T = {T}); got {len(steps)}")
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(seed + 7))
    shuffled = dataclasses.replace(batch, edge_weight=batch.edge_weight[:, perm], node_feat=batch.node_feat[:, perm])
    zs = model.embed_nodes(shuffled, refine_steps=steps_r).detach().cpu()
    c = 0.0 if model.euclidean else float(model.c)
    layer = data.node_layer.cpu()
    geo, control = per_network_geometry(z, layer, c), per_network_geometry(zs, layer, c)
    return EmbeddingReadout(z, zs, perm, layer, data.node_type.cpu(), c, list(steps), geo, control)


@dataclass
class TrainingGeometry:
    """The figure's run: the zoo, the reconstruction-trained encoder and its training log, its
    learnability check, its reconstruction metrics on the read networks, and their geometry readout."""

    zoo: Any
    model: Any
    log: Any
    gate: dict[str, Any]
    recon: dict[str, float]
    readout: EmbeddingReadout
    split: dict[str, Tensor]


def split_networks(cfg: TrainingGeometryConfig) -> dict[str, Tensor]:
    """The zoo's INRs in order: the first ``n_train`` train the encoder, the next ``n_val`` early-stop
    it, the rest (``n_read``) are read."""
    a, b = cfg.n_train, cfg.n_train + cfg.n_val
    return {"train": torch.arange(a), "val": torch.arange(a, b), "read": torch.arange(b, cfg.n_inrs)}


def training_geometry(zoo: Any, cfg: TrainingGeometryConfig, seed: int = 0, device: str = "cpu") -> TrainingGeometry:
    """GTH-GMN (:meth:`TrainingGeometryConfig.gth_kwargs`) trained by reconstruction alone (stage 1)
    on the training INRs, early-stopped on the validation INRs' reconstruction loss, then the read INRs
    embedded (stage-2 refinement) in the true and a shuffled snapshot order."""

    if len(zoo) != cfg.n_inrs:
        raise ValueError(f"the zoo has {len(zoo)} INRs; the preset splits n_inrs = {cfg.n_inrs}")
    seed_everything(seed)
    model = build_metanet("GTH-GMN", zoo, "classification", 10, **cfg.gth_kwargs())
    data = model.prepare(zoo)
    sp = split_networks(cfg)
    tcfg = TrainConfig(
        epochs=cfg.epochs, batch_size=cfg.batch, lr=cfg.lr, patience=cfg.patience, seed=seed, device=device
    )
    task = ReconstructionTask(model, data, None, sp["train"], sp["val"], tcfg)
    log = train(task, tcfg.budget(), desc="13-layer encoder")
    g = log.gate(LearnabilityGate(cfg.min_loss_drop, 0.0))
    gate = {"trained": g.trained, "reason": g.reason, "capped": log.capped}
    recon = model.recon_metrics(data[sp["read"]])
    readout = read_geometry(model, data, sp["read"], [int(s) for s in zoo.steps], seed=seed)
    return TrainingGeometry(zoo, model, log, gate, recon, readout, sp)


def encoder_table(run: TrainingGeometry) -> pd.DataFrame:
    """One row: how the encoder trained (epochs run, best epoch, cap, why it stopped, the learnability
    check), its reconstruction metrics on the read INRs (pooled over them) beside their baselines, and in
    words which metrics do not beat their baseline
    (:func:`~hgutils.weightspace.metanets.gth_gmn.recon_baselines.baseline_phrase`)."""
    log = run.log
    row = {
        "INRs (train / val / read)": "/".join(str(len(run.split[k])) for k in ("train", "val", "read")),
        "epochs run": len(log.history),
        "best epoch": log.best_epoch + 1,  # counted from 1, as "epochs run"
        "stopped": log.describe(),
        "trained": run.gate["trained"],
    }
    row |= {k: round(float(v), 3) for k, v in run.recon.items()}
    row["against the baselines"] = baseline_phrase(compare_to_baselines(run.recon))
    return pd.DataFrame([row])


def readout_table(readout: EmbeddingReadout, early: int, late: int) -> pd.DataFrame:
    """Mean over the read networks of each readout at ``early`` and ``late``, in the true and in the
    shuffled order (the control), and their changes."""
    rows = []
    for k in readout.readouts:
        a, b = readout.readouts[k], readout.control[k]
        rows.append(
            {
                "readout": k,
                f"t={early}": float(a[:, early].mean()),
                f"t={late}": float(a[:, late].mean()),
                "change": float((a[:, late] - a[:, early]).mean()),
                "control change": float((b[:, late] - b[:, early]).mean()),
                "networks": a.shape[0],
            }
        )
    return pd.DataFrame(rows)
