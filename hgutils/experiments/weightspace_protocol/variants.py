"""The model variants of notebooks 01-03 (:data:`VARIANTS`: GTH-GMN, its ablations and the baselines, in
final-checkpoint and trajectory versions) and how each is built.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.metanets.gth_gmn import GTHGMNConfig
from hgutils.weightspace.zoo.containers import Zoo

log = logging.getLogger("hgutils")


# --------------------------------------------------------------------------------------------
# model variants
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """A named model variant: a base meta-network, the snapshots it reads, constructor overrides."""

    name: str
    base: str  # one of hgutils.weightspace.metanets.MODELS
    snapshots: Any = None  # None = the model's default ("all" for GTH-GMN, "last" for baselines)
    kwargs: tuple[tuple[str, Any], ...] = ()  # constructor overrides (GTH-GMN: GTHGMNConfig fields)
    temporal: bool = False  # reads more than one snapshot
    note: str = ""


def _v(name: str, base: str, snapshots: Any = None, temporal: bool = False, note: str = "", **kw: Any) -> Variant:
    return Variant(name, base, snapshots, tuple(sorted(kw.items())), temporal, note)


#: Every variant a notebook can ask for, by name.
VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        _v("GTH-GMN", "GTH-GMN", "all", True, "the paper's training: reconstruction, Riemannian refinement, head"),
        _v("GTH-GMN (T=1)", "GTH-GMN", 1, False, "ablation: final checkpoint only"),
        _v("GTH-GMN (Euclidean)", "GTH-GMN", "all", True, "ablation: Euclidean attention (c -> 0)", euclidean=True),
        _v(
            "GTH-GMN (no GRU)",
            "GTH-GMN",
            "all",
            True,
            "ablation: static kernels, snapshots encoded independently",
            use_gru=False,
        ),
        _v(
            "GTH-GMN (small R-step)",
            "GTH-GMN",
            "all",
            True,
            "the two-stage, frozen reading with its stage-2 Riemannian step / 10 (the paper's remedy)",
            protocol="two_stage",
            head_networks_per_param=10.0,
            refine_lr_scale=0.1,
        ),
        _v(
            "GTH-GMN (two-stage, frozen)",
            "GTH-GMN",
            "all",
            True,
            "the paper's literal reading: frozen reconstruction embedding, a linear head on its leading principal "
            "components sized for the training set (>= 10 networks per head parameter)",
            protocol="two_stage",
            head_networks_per_param=10.0,
        ),
        _v(
            "GTH-GMN (fine-tuned)",
            "GTH-GMN",
            "all",
            True,
            "reconstruction pretraining, then the whole model on the task",
            protocol="finetune",
        ),
        _v(
            "GTH-GMN (joint)",
            "GTH-GMN",
            "all",
            True,
            "task + small reconstruction terms from the start",
            protocol="joint",
        ),
        _v(
            "GTH-GMN (literal links)",
            "GTH-GMN",
            "all",
            True,
            "link decoder trained on the literal graph (every nonzero weight an edge)",
            link_reading="literal",
        ),
        _v(
            "GTH-GMN (weights as input)",
            "GTH-GMN",
            "all",
            True,
            "signed weights also fed to the attention",
            use_edge_weight=True,
        ),
        _v(
            "StatNN",
            "StatNN",
            "last",
            False,
            "NFN's StatNet: 7 statistics per tensor, standardised on the training split -> MLP 1000-1000",
            feature_norm="train",
        ),
        _v(
            "StatNN (raw statistics)",
            "StatNN",
            "last",
            False,
            "NFN's StatNet as its reference feeds it: the raw statistics -> MLP 1000-1000",
        ),
        _v(
            "StatNN (traj)",
            "StatNN",
            "all",
            True,
            "statistics of every snapshot, standardised on the training split",
            feature_norm="train",
        ),
        _v(
            "StatNN (batch norm)",
            "StatNN",
            "last",
            False,
            "statistics standardised across networks (batch norm) -> 128-wide SiLU MLP + 2-layer head "
            "(this project's earlier StatNN)",
            hidden=128,
            act="silu",
            feature_norm="batch",
            head="mlp",
        ),
        _v(
            "FlatMLP",
            "FlatMLP",
            "last",
            False,
            "flattened weights -> MLP; exploits the neuron alignment of a shared initialisation",
        ),
        _v("FlatMLP (traj)", "FlatMLP", "all", True, "flattened trajectory -> MLP (exploits alignment too)"),
        _v("FlatMLP+aug", "FlatMLP+aug", "last", False, "random hidden permutation per network and step"),
        _v("FlatMLP+aug (traj)", "FlatMLP+aug", "all", True, "the same, one permutation for all snapshots"),
        _v("NFN_NP", "NFN_NP", "last", False, "neural functional, NP layers"),
        _v("NFN_NP (traj)", "NFN_NP", "all", True, "snapshots as channels"),
        _v("NFN_HNP", "NFN_HNP", "last", False, "neural functional, HNP layers"),
        _v("NFN_HNP (traj)", "NFN_HNP", "all", True, "snapshots as channels"),
        _v("DWSNet", "DWSNet", "last", False, "DWSNets: max-pool equivariant layers, set attention, BatchNorm"),
        _v("DWSNet (traj)", "DWSNet", "all", True, "snapshots as channels"),
        _v(
            "DWSNet (DeepSets)",
            "DWSNet",
            "last",
            False,
            "DeepSets set layers instead of set attention (the reference's set_layer='ds')",
            set_layer="ds",
        ),
        _v("GMN", "GMN", "last", False, "Neural Graphs' PNA GNN on the neuron graph, output-neuron readout"),
        _v("GMN (traj)", "GMN", "all", True, "snapshots as edge and node channels"),
        _v(
            "GMN (global mean)",
            "GMN",
            "last",
            False,
            "ablation: mean of all node and all edge states as the readout (this project's earlier GMN readout)",
            readout="mean",
        ),
        _v(
            "GMN (per-layer)", "GMN", "last", False, "mean node state of each layer as the readout", readout="per_layer"
        ),
        _v(
            "GMN (per-layer, traj)",
            "GMN",
            "all",
            True,
            "per-layer readout, snapshots as channels",
            readout="per_layer",
        ),
    ]
}


#: How :func:`run_comparison` applies the baselines' reference training recipes.
RECIPE_MODES: tuple[str, ...] = ("none", "optimizer", "full")

#: Baselines that respect the networks' hidden-neuron permutation symmetry (by design or, FlatMLP+aug,
#: by augmentation): the fair comparison set for "GTH-GMN beats the best baseline".
SYMMETRY_RESPECTING: tuple[str, ...] = (
    "StatNN",
    "StatNN (raw statistics)",
    "StatNN (batch norm)",
    "NFN_NP",
    "NFN_HNP",
    "DWSNet",
    "DWSNet (DeepSets)",
    "GMN",
    "GMN (global mean)",
    "GMN (per-layer)",
    "FlatMLP+aug",
)


def build_variant(name: str, zoo: Zoo, task: str, out_dim: int, gth_overrides: dict[str, Any] | None = None) -> Any:
    """Build the model of variant ``name`` (a key of :data:`VARIANTS`) sized for ``zoo``.

    ``gth_overrides`` are :class:`~hgutils.weightspace.metanets.GTHGMNConfig` fields applied to every
    GTH-GMN variant (e.g. ``dim``); the variant's own overrides win. A variant's ``refine_lr_scale``
    multiplies the stage-2 step size it would otherwise use (the "step / 10" variant).
    """

    base, snapshots, kw = variant_config(name, gth_overrides)
    return build_metanet(base, zoo, task, out_dim, snapshots=snapshots, **kw)


def variant_config(name: str, gth_overrides: dict[str, Any] | None = None) -> tuple[str, Any, dict[str, Any]]:
    """What :func:`build_variant` builds for ``name``: ``(base model, snapshots, constructor overrides)``.
    Two variants with equal configurations are the same model (e.g. "GTH-GMN" when the selection grid
    chose the frozen two-stage reading, and "GTH-GMN (two-stage, frozen)")."""
    if name not in VARIANTS:
        raise ValueError(f"unknown model variant {name!r}; choose from {sorted(VARIANTS)}")
    v = VARIANTS[name]
    kw = dict(v.kwargs)
    if v.base == "GTH-GMN":
        kw = {**(gth_overrides or {}), **kw}
        scale = kw.pop("refine_lr_scale", None)
        if scale is not None:
            kw["refine_lr"] = scale * kw.get("refine_lr", GTHGMNConfig.refine_lr)
    return v.base, v.snapshots, kw
