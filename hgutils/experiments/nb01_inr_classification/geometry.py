"""The geometry of GTH-GMN's node embedding: readouts over training against a time-shuffled control,
and the paper's 13-layer figure (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, embedding figure).

The paper shows, for a 13-layer INR MLP at snapshots t = 11 and t = 97, that layers separate
radially and angularly in the ball and that nodes drift toward the boundary. Here the same
statements are read as numbers (:func:`hgutils.weightspace.embedding_geometry.per_network_geometry`)
for every read network, and judged against a control: the same encoder reading the same
trajectories with their snapshots shuffled (:func:`read_geometry`). A trend of the trajectory
disappears under the shuffle; an artefact of the encoder's recurrence (e.g. GRU states drifting
with the number of snapshots read) does not.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from hgutils.experiments.nb01_inr_classification.preset import INRClassificationConfig
from hgutils.weightspace.embedding_geometry import per_network_geometry


@dataclass
class EmbeddingReadout:
    """Node coordinates of some networks in their true and in a shuffled snapshot order, and their readouts.

    ``z``, ``z_shuffled`` ``[B, T, V, d]``; ``perm`` the shuffled order (position ``p`` reads snapshot
    ``perm[p]``); ``readouts``/``control``: :func:`per_network_geometry` of each (``[B, T]`` arrays).
    """

    z: Tensor
    z_shuffled: Tensor
    perm: Tensor
    node_layer: Tensor
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
    batch = data[torch.as_tensor(idx, dtype=torch.long)]
    steps_r = model.cfg.refine_steps if refine_steps is None else refine_steps
    z = model.embed_nodes(batch, refine_steps=steps_r).detach().cpu()
    T = z.shape[1]
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(seed + 7))
    shuffled = dataclasses.replace(batch, edge_weight=batch.edge_weight[:, perm], node_feat=batch.node_feat[:, perm])
    zs = model.embed_nodes(shuffled, refine_steps=steps_r).detach().cpu()
    c = 0.0 if model.euclidean else float(model.c)
    layer = data.node_layer.cpu()
    return EmbeddingReadout(
        z, zs, perm, layer, c, list(steps), per_network_geometry(z, layer, c), per_network_geometry(zs, layer, c)
    )


@dataclass
class DeepFigure:
    """The paper's figure reproduced: the 13-layer zoo, the reconstruction-trained encoder, its
    learnability check and reconstruction metrics on the read networks, and their geometry readout."""

    zoo: Any
    model: Any
    log: Any
    gate: dict[str, Any]
    recon: dict[str, float]
    readout: EmbeddingReadout
    n_train: int


def deep_figure(zoo: Any, cfg: INRClassificationConfig, seed: int = 0, device: str = "cpu") -> DeepFigure:
    """GTH-GMN trained by reconstruction alone (stage 1, early stopping on the held-out half's
    reconstruction loss) on the first half of the 13-layer zoo, then the held-out half read: stage-2
    refinement, reconstruction metrics, geometry in the true and a shuffled snapshot order."""
    from hgutils.loop import train
    from hgutils.repro import seed_everything
    from hgutils.weightspace.metanets import build_metanet
    from hgutils.weightspace.tasks import ReconstructionTask, TrainConfig

    n = len(zoo)
    if n < 4:
        raise ValueError(f"the 13-layer zoo needs at least 4 INRs (half train the encoder); got {n}")
    seed_everything(seed)
    model = build_metanet(
        "GTH-GMN",
        zoo,
        "classification",
        10,
        dim=cfg.gth_dim,
        refine_steps=cfg.refine_steps,
        refine_lr=cfg.refine_lr,
    )
    data = model.prepare(zoo)
    tr, rd = torch.arange(n // 2), torch.arange(n // 2, n)
    tcfg = TrainConfig(
        epochs=cfg.deep_epochs, batch_size=cfg.deep_batch, lr=cfg.deep_encoder_lr, patience=cfg.patience, seed=seed
    )
    tcfg = dataclasses.replace(tcfg, device=device)
    log = train(ReconstructionTask(model, data, None, tr, rd, tcfg), tcfg.budget(), desc="13-layer encoder")
    g = log.gate(cfg.gate())
    gate = {"trained": g.trained, "reason": g.reason, "capped": log.stopped in ("epoch budget spent",)}
    recon = model.recon_metrics(data[rd])
    readout = read_geometry(model, data, rd, [int(s) for s in zoo.steps], seed=seed)
    return DeepFigure(zoo, model, log, gate, recon, readout, len(tr))


def readout_table(readout: EmbeddingReadout, early: int, late: int) -> Any:
    """Mean over the read networks of each readout at ``early`` and ``late``, in the true and in the
    shuffled order (the control), and their changes."""
    import pandas as pd

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
