r"""Notebook 08 -- the library on your own networks: a zoo from checkpoints, GTH-GMN, MSA, PE lifts.

The notebook trains a few small MLPs with plain PyTorch on scikit-learn's 8x8 digits, as a reader
would, and hands the checkpoints to :meth:`hgutils.weightspace.zoo.Zoo.from_checkpoints`. This
module holds what the notebook needs beyond the library calls it shows: the preset
(:data:`CONFIG`), the split of the networks, the per-network reconstruction table, its report against the
baselines and its claims (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak: stage 1 trains the node embedding
by reconstructing the weight graphs), the Poincaré-disk figure of one network's layers over training,
and the table of representation similarities between networks (MSA: arXiv 2603.28764; linear CKA:
Kornblith et al. 2019, arXiv:1905.00414; Procrustes: Williams et al. 2021, arXiv:2110.14739).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.colors import BoundaryNorm
from matplotlib.lines import Line2D
from torch import Tensor

from hgutils.ledger import Claims
from hgutils.loop import TrainLog
from hgutils.plotting import poincare_disk, use_style
from hgutils.presets import Preset
from hgutils.similarity import linear_cka, mlp_layer_fn, msa, procrustes_similarity
from hgutils.verdicts import all_of, compare_seeds
from hgutils.weightspace.embedding_geometry import disk_coordinates, per_network_geometry
from hgutils.weightspace.metanets.gth_gmn import CITATION, baseline_sentence, compare_to_baselines
from hgutils.weightspace.zoo import Zoo

__all__ = [
    "CONFIG",
    "PAPER",
    "YourNetworksConfig",
    "layer_names",
    "network_split",
    "pca_chart",
    "plot_layers_in_ball",
    "geometry_table",
    "reconstruction_claims",
    "reconstruction_report",
    "reconstruction_table",
    "similarity_table",
    "stage1_gate",
]

#: What the papers state that this notebook touches, and where.
PAPER: dict[str, str] = {
    "reconstruction": "the node embedding is trained by reconstructing the weight graphs (method, stage 1)",
    "source": f"{CITATION} §method",
}

#: The reconstruction metrics judged against their trivial baselines (``metric``, ``baseline``).
RECON_PAIRS: tuple[tuple[str, str], ...] = (("link_auc", "chance"), ("mag_r2", "mag_r2_block_mean"))


@dataclass(frozen=True)
class YourNetworksConfig(Preset):
    """Sizes of notebook 08 (smoke values are the defaults)."""

    n_networks: int = 16  # MLPs trained (one seed each)
    hidden: tuple[int, ...] = (32, 16)  # hidden widths of each MLP (64 inputs, 10 classes)
    train_steps: int = 300  # Adam steps per MLP
    every: int = 30  # a checkpoint every this many steps (T = train_steps / every + 1)
    lr: float = 3e-3  # Adam learning rate of the MLPs
    batch: int = 64  # digits per MLP step
    n_val: int = 2  # networks that early-stop GTH-GMN's stage 1
    n_read: int = 6  # held-out networks GTH-GMN reads (reconstruction metrics, figure)
    gth_dim: int = 8  # GTH-GMN node-state dimension
    epochs: int = 60  # stage-1 epoch cap (early stopping on the validation networks)
    gth_batch: int = 4  # networks per stage-1 step
    gth_lr: float = 3e-3  # stage-1 Adam learning rate
    patience: int = 10  # stage-1 epochs without validation improvement before stopping
    refine_steps: int = 5  # stage-2 refinement steps when reading a network
    refine_lr: float = 0.3  # stage-2 step size
    msa_points: int = 200  # test digits at which MSA, CKA and Procrustes compare two networks
    msa_dims: int = 2  # MSA's input manifold: the plane of this many leading principal components
    #: measured: smoke 87 s (reproduce --only 08, 1 thread); medium 685 s, published 2026-12-07 while notebook 01
    #: ran beside it at a higher priority (an upper bound)
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 1.5, "medium": 11.4}
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_networks": (4, None),
        "train_steps": (1, None),
        "every": (1, None),
        "n_val": (1, None),
        "n_read": (2, None),
        "msa_points": (2, None),
        "msa_dims": (2, None),  # MSA refuses a 1-dimensional input manifold (every pullback metric is 1x1)
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {"n_networks": 48, "train_steps": 1000, "every": 50, "n_val": 8, "n_read": 16, "epochs": 200},
        "paper": {"n_networks": 256, "train_steps": 3000, "every": 100, "n_val": 32, "n_read": 64, "gth_dim": 32},
    }


CONFIG = YourNetworksConfig


def network_split(cfg: YourNetworksConfig) -> dict[str, Tensor]:
    """Indices of the networks that train GTH-GMN, early-stop it, and are read (held out from both)."""
    n_train = cfg.n_networks - cfg.n_val - cfg.n_read
    if n_train < 2:
        raise ValueError(
            f"n_networks={cfg.n_networks} leaves {n_train} networks to train GTH-GMN after n_val={cfg.n_val} "
            f"and n_read={cfg.n_read}; need at least 2"
        )
    idx = torch.arange(cfg.n_networks)
    return {"train": idx[:n_train], "val": idx[n_train : n_train + cfg.n_val], "read": idx[n_train + cfg.n_val :]}


def stage1_gate(log: TrainLog) -> dict[str, Any]:
    """The learnability check of GTH-GMN's stage 1 (:meth:`TrainLog.gate`), and whether its epoch cap ended it
    while it was still improving (:attr:`TrainLog.capped`, the plateau rule)."""
    g = log.gate()
    return {"trained": g.trained, "reason": g.reason, "capped": log.capped}


def layer_names(n_layers: int) -> list[str]:
    """Names of the node layers of an MLP with ``n_layers`` linear layers: input, hidden 1.., output."""
    return ["input", *(f"hidden {k}" for k in range(1, n_layers)), "output"]


def reconstruction_table(model: Any, data: Any, idx: Tensor, refine_steps: int | None = None) -> pd.DataFrame:
    """GTH-GMN's reconstruction metrics (``model.recon_metrics``) of each network in ``idx`` on its own,
    each followed by the trivial baseline it must beat: link AUC by chance (0.5), sign accuracy by the
    per-block majority sign, magnitude R² by each layer block's mean log-magnitude (baselines from that
    network's own weights; :mod:`hgutils.weightspace.metanets.gth_gmn.recon_baselines`)."""
    rows = []
    for i in torch.as_tensor(idx).tolist():
        m = model.recon_metrics(data[torch.tensor([i])], refine_steps)
        rows.append(
            {
                "network": i,
                "link_auc": m["link_auc"],
                "chance": 0.5,
                "sign_acc": m["sign_acc"],
                "sign_majority": m["sign_majority"],
                "mag_r2": m["mag_r2"],
                "mag_r2_block_mean": m["mag_r2_block_mean"],
            }
        )
    return pd.DataFrame(rows)


def reconstruction_report(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Each metric of :func:`reconstruction_table` against its baseline over the held-out networks
    (:func:`~hgutils.weightspace.metanets.gth_gmn.recon_baselines.compare_to_baselines`: a paired difference
    beyond 2 standard errors beats it), and the sentence that says which metrics beat their baseline and which
    do not (:func:`~hgutils.weightspace.metanets.gth_gmn.recon_baselines.baseline_sentence`). A reconstruction
    that learned nothing -- link AUC 0.467, sign accuracy 0.456 against a majority of 0.525 -- is said to be
    worse than its baselines, in words."""
    over = "held-out networks"
    comparison = compare_to_baselines(table, over=over, metrics=("link_auc", "sign_acc", "mag_r2"))
    return comparison, baseline_sentence(comparison, "GTH-GMN's reconstruction", over=over)


def reconstruction_claims(claims: Claims, table: pd.DataFrame, gate: dict[str, Any]) -> None:
    """Two claims on the held-out networks of ``table`` (:func:`reconstruction_table`): links and
    magnitudes beat their baselines (both required), and signs beat the per-block majority; each a
    paired comparison over networks (> 2 se)."""
    tests = [
        compare_seeds(table[a], table[b], paired=True, label=f"{a} - {b}", digits=3, over="networks")
        for a, b in RECON_PAIRS
    ]
    mean = {k: round(float(table[k].mean()), 3) for k in ("link_auc", "mag_r2", "mag_r2_block_mean")}
    claims.add(
        "reconstruction-links-magnitudes",
        "GTH-GMN's stage 1 reconstructs which weights are strong and how large they are on networks it never saw",
        paper=PAPER["reconstruction"],
        ours=mean,
        criterion="held-out networks after refinement: link AUC > 0.5 and magnitude R² > block-mean R², "
        "each by > 2 se over networks (paired)",
        test=all_of(tests),
        source=PAPER["source"],
        trained={"GTH-GMN": gate},
    )
    sign = compare_seeds(
        table["sign_acc"], table["sign_majority"], paired=True, label="sign acc - majority", digits=3, over="networks"
    )
    claims.add(
        "reconstruction-signs",
        "GTH-GMN's stage 1 reconstructs the weights' signs on networks it never saw",
        paper=PAPER["reconstruction"],
        ours={k: round(float(table[k].mean()), 3) for k in ("sign_acc", "sign_majority")},
        criterion="held-out networks after refinement: sign accuracy > the per-layer-block majority sign, "
        "by > 2 se over networks (paired)",
        test=sign,
        source=PAPER["source"],
        trained={"GTH-GMN": gate},
    )


def geometry_table(z: Tensor, node_layer: Tensor, steps: Sequence[int], c: float) -> pd.DataFrame:
    """Mean over networks of the geometry readouts (:func:`per_network_geometry`: radial and angular
    separation of the layers, mean hyperbolic radius) at every snapshot of ``z [B, T, V, d]``."""
    g = per_network_geometry(z, node_layer, c)
    return pd.DataFrame({"step": [int(s) for s in steps], **{k: v.mean(0) for k, v in g.items()}})


def plot_layers_in_ball(
    z: Tensor, node_layer: Tensor, node_type: Tensor, steps: Sequence[int], show: Sequence[int], c: float = 1.0
) -> plt.Figure:
    """One network's nodes in the Poincaré disk at the snapshots ``show`` (indices into ``z [T, V, d]``),
    coloured by layer on a sequential colour map (input to output), bias nodes as triangles; ``d > 2``
    is drawn with :func:`disk_coordinates` (radii exact, one shared PCA of all snapshots)."""
    use_style()
    z = torch.as_tensor(z)
    if z.dim() != 3:
        raise ValueError(f"z must be one network's [T, V, d]; got shape {tuple(z.shape)}")
    xy = disk_coordinates(z, c).numpy()
    layer = torch.as_tensor(node_layer).long().numpy()
    bias = torch.as_tensor(node_type).long().numpy() == 3
    n_layers = int(layer.max()) + 1
    fig, axes = plt.subplots(1, len(show), figsize=(3.0 * len(show) + 0.8, 3.4), squeeze=False)
    for ax, t in zip(axes[0], show):
        # neurons of layers 0..L on viridis (every layer has neurons, so the colour of layer k is viridis(k / L))
        poincare_disk(ax, xy[t][~bias], c=c, colors=layer[~bias], cmap="viridis", s=10, title=f"step {int(steps[t])}")
        p = xy[t][bias] * np.sqrt(c)
        ax.scatter(*p.T, c=layer[bias], cmap="viridis", vmin=0, vmax=n_layers - 1, s=40, marker="^", edgecolors="k")
        for sp in ax.spines.values():
            sp.set_visible(False)
    cmap = plt.get_cmap("viridis", n_layers)  # the same colours, one bin per layer
    norm = BoundaryNorm(np.arange(-0.5, n_layers), n_layers)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.subplots_adjust(left=0.01, right=0.9, bottom=0.12, top=0.9, wspace=0.05)
    bar = fig.colorbar(sm, cax=fig.add_axes((0.92, 0.18, 0.012, 0.66)), ticks=range(n_layers))
    bar.ax.set_yticklabels(layer_names(n_layers - 1))
    bar.set_label("layer")
    marks = [
        Line2D([], [], ls="", marker="o", color="0.4", label="neuron"),
        Line2D([], [], ls="", marker="^", color="0.4", markeredgecolor="k", label="bias node"),
    ]
    fig.legend(handles=marks, loc="lower center", ncol=2, fontsize=8, frameon=False)
    return fig


def pca_chart(x: Tensor, m: int) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
    r"""The plane through the mean of ``x [P, n]`` spanned by its ``m`` leading principal axes ``U``:
    coordinates :math:`p = (x - \mu)U` of every row and the chart :math:`\psi(p) = \mu + pU^\top`
    (one point ``[m]`` or a batch ``[P, m]``)."""
    x = torch.as_tensor(x, dtype=torch.float32)
    if x.dim() != 2 or not 1 <= m <= min(x.shape):
        raise ValueError(f"need x [P, n] and 1 <= m <= min(P, n); got shape {tuple(x.shape)} and m={m}")
    mu = x.mean(0)
    _, _, vt = torch.linalg.svd(x - mu, full_matrices=False)
    U = vt[:m].T.contiguous()
    return (x - mu) @ U, lambda p: mu + p @ U.T


def similarity_table(
    zoo: Zoo, x: Tensor, pairs: dict[str, tuple[tuple[int, int], tuple[int, int]]], msa_dims: int = 2
) -> pd.DataFrame:
    """MSA, linear CKA and Procrustes between two networks of ``zoo`` at each layer, on the inputs ``x [P, in]``.

    ``pairs`` names each comparison ``{label: ((net, snapshot), (net, snapshot))}``. CKA and
    Procrustes compare the layer's activations at ``x``. MSA compares the pullback metrics
    :math:`G(p) = J(p)^\top J(p)` of the layer map on a manifold of inputs: here the plane of the
    ``msa_dims`` leading principal components of ``x`` (:func:`pca_chart`), at the coordinates of
    ``x`` in it. (On the full 64-dimensional input space a layer of width 10 has a rank-10 metric,
    whose spectral ratio against any other is 1: MSA needs a manifold no wider than the layer.) MSA
    is reported as the similarity :math:`1 - d_{MSA}`, so all three columns are similarities in
    [0, 1], 1 = the same.
    """
    act = zoo.spec.activation
    points, chart = pca_chart(x, msa_dims)
    rows = []
    for label, ((i, s), (j, t)) in pairs.items():
        for layer, name in enumerate(layer_names(zoo.spec.n_layers)[1:]):
            f = mlp_layer_fn(zoo.at(s), layer, net=i, activation=act)
            g = mlp_layer_fn(zoo.at(t), layer, net=j, activation=act)
            with torch.no_grad():
                a, b = f(x).double().numpy(), g(x).double().numpy()
            rows.append(
                {
                    "pair": label,
                    "layer": name,
                    "MSA (1 - d)": 1.0 - msa(f, g, points, embedding=chart),
                    "linear CKA": linear_cka(a, b),
                    "Procrustes": procrustes_similarity(a, b),
                }
            )
    return pd.DataFrame(rows)
