"""Meta-networks that read weight trajectories: GTH-GMN and the baselines it is compared with.

===============  ==========================================================  ======================
name             model                                                       input container
===============  ==========================================================  ======================
``GTH-GMN``      temporal hyperbolic graph attention (:mod:`.gth_gmn`)       TemporalParamGraph
``StatNN``       NFN's StatNet: tensor statistics -> MLP (:mod:`.statnn`)    WeightData
``FlatMLP``      flattened weights -> MLP (:mod:`.flat`)                     WeightData
``FlatMLP+aug``  the same with per-network permutation augmentation          WeightData
``NFN_NP``       neural functional, NP layers (``nfn`` package)              WeightData
``NFN_HNP``      neural functional, HNP layers (``nfn`` package)             WeightData
``DWSNet``       DWSNets' equivariant weight-space network (:mod:`.dws`)     WeightData
``GMN``          Neural Graphs' PNA GNN on the neuron graph (:mod:`.gmn`)    WeightData
===============  ==========================================================  ======================

Every model reads the last snapshot by default and the whole trajectory with ``snapshots="all"``
(GTH-GMN's default is the whole trajectory). Build any of them on a zoo with :func:`build_metanet`
and train them all with the one loop in :mod:`hgutils.weightspace.tasks`. GMN, DWSNet and
StatNN follow their reference code; each carries its reference training recipe as ``model.recipe``
(:mod:`.recipes`: optimiser, learning rate, weight decay, warmup, clipping, batch size, epochs,
dropout, source file), ``None`` where the reference never ran the task.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hgutils.weightspace.graphs import TemporalParamGraph
from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData, random_hidden_perms, snapshot_index
from hgutils.weightspace.metanets.dws import DWSNet
from hgutils.weightspace.metanets.flat import FlatMLP
from hgutils.weightspace.metanets.gmn import GMN
from hgutils.weightspace.metanets.gth_gmn import GTHGMN, GTHGMNConfig
from hgutils.weightspace.metanets.heads import TASKS, TaskHead, info_nce, predict, task_loss
from hgutils.weightspace.metanets.nfn import NFN
from hgutils.weightspace.metanets.recipes import RECIPES, ReferenceRecipe, recipe_for
from hgutils.weightspace.metanets.statnn import StatNN

if TYPE_CHECKING:  # for annotations only: importing the zoo package here would load every zoo builder
    from hgutils.weightspace.zoo.containers import Zoo

MODELS: tuple[str, ...] = ("GTH-GMN", "StatNN", "FlatMLP", "FlatMLP+aug", "NFN_NP", "NFN_HNP", "DWSNet", "GMN")

__all__ = [
    "MODELS",
    "MetaNet",
    "WeightData",
    "Snapshots",
    "snapshot_index",
    "random_hidden_perms",
    "GTHGMN",
    "GTHGMNConfig",
    "StatNN",
    "FlatMLP",
    "NFN",
    "DWSNet",
    "GMN",
    "TaskHead",
    "TASKS",
    "info_nce",
    "predict",
    "task_loss",
    "build_metanet",
    "ReferenceRecipe",
    "RECIPES",
    "recipe_for",
]


def build_metanet(
    name: str, zoo: Zoo, task: str, out_dim: int, snapshots: Snapshots | None = None, **kwargs: Any
) -> MetaNet:
    """Build model ``name`` (one of :data:`MODELS`) sized for ``zoo``.

    ``snapshots`` (``"last"``, ``"all"``, an int or indices) overrides the model's default;
    ``kwargs`` go to the model's constructor (for GTH-GMN: fields of :class:`GTHGMNConfig`).
    """
    if name not in MODELS:
        raise ValueError(f"unknown meta-network {name!r}; choose one of {MODELS}")
    T = len(zoo.steps)
    if T < 1:
        raise ValueError("the zoo has an empty trajectory (T = 0)")
    if name == "GTH-GMN":
        cfg = GTHGMNConfig(**kwargs)
        if snapshots is not None:
            cfg = replace(cfg, snapshots=snapshots)
        probe = TemporalParamGraph.from_zoo(zoo.subset([0]).snapshots([T - 1]))
        return GTHGMN.for_graph(probe, task, out_dim, cfg, n_snapshots=len(snapshot_index(T, cfg.snapshots)))

    snaps = snapshots if snapshots is not None else "last"
    n_t = len(snapshot_index(T, snaps))
    sizes = tuple(zoo.spec.sizes)
    if name == "GMN":
        return GMN(task, out_dim, sizes, n_t, snapshots=snaps, **kwargs)
    if name == "StatNN":
        return StatNN(task, out_dim, sizes, n_t, snapshots=snaps, **kwargs)
    if name in ("FlatMLP", "FlatMLP+aug"):
        return FlatMLP(task, out_dim, sizes, n_t, perm_aug=name == "FlatMLP+aug", snapshots=snaps, **kwargs)
    if name in ("NFN_NP", "NFN_HNP"):
        return NFN(task, out_dim, sizes, n_t, mode="np" if name == "NFN_NP" else "hnp", snapshots=snaps, **kwargs)
    return DWSNet(task, out_dim, sizes, n_t, snapshots=snaps, **kwargs)
