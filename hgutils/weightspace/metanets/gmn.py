r"""GMN: a Euclidean edge-MPNN on the parameter graph (Lim et al., "Graph Metanetworks", ICLR 2024).

Input: :class:`hgutils.weightspace.graphs.GMNGraph` batch views -- one edge per parameter (a bias
node per layer), shared ``edge_index [2, E]``, ``node_layer [V]``, ``node_type [V]`` and
per-network ``edge_weight [B, T, E]`` (the read snapshots are the edge-feature channels).

Node features: learned embeddings of layer and type plus a learned embedding of the *position* of
input and output neurons (their order is fixed by the architecture, as in GMN's
``[layer, position for input/output neurons, type]``); hidden neurons share position 0, so
permuting them permutes nodes and edges only. Each layer (messages flow both ways, with a
direction flag):

.. math::
    e'_{uv} = e_{uv} + \mathrm{MLP}_e([h_u, h_v, e_{uv}]),\quad
    h'_v = h_v + \mathrm{MLP}_h\big([h_v, \tfrac{1}{\deg v}\textstyle\sum_{u\to v}\mathrm{MLP}_m([h_u, e'_{uv}])]\big)

Readout (``readout``): ``"mean"`` -- mean of node states and mean of edge states -> MLP (GMN's);
``"per_layer"`` -- the same means taken per MLP layer (nodes by their layer, edges by the layer they
feed) and concatenated, so a layer's signal is not averaged away among the whole graph's states.
Both are invariant to hidden permutations.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, snapshot_index


def io_positions(node_layer: Tensor, node_type: Tensor) -> Tensor:
    """Position of each input (type 0) / output (type 2) neuron within its layer (in node order), 0 otherwise."""
    pos = torch.zeros_like(node_layer)
    for ty in (0, 2):
        m = node_type == ty
        for lay in node_layer[m].unique():
            sel = torch.nonzero(m & (node_layer == lay)).flatten()
            pos[sel] = torch.arange(1, sel.numel() + 1, device=pos.device)
    return pos


def _positions(g: Any) -> Tensor:
    """``g.node_pos`` when the graph carries it (GMNGraph), else :func:`io_positions`."""
    pos = getattr(g, "node_pos", None)
    return pos.long() if pos is not None else io_positions(g.node_layer, g.node_type)


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.SiLU(), nn.Linear(h, o))


class GMN(MetaNet):
    """Edge-MPNN with ``depth`` layers of width ``hidden``; see the module docstring.

    Defaults (16 wide, 2 layers) are sized for the CPU budget of the medium presets: the edge MLPs
    run on every parameter, so width and depth multiply the cost per step (``benchmarks/metanets.py``).

    """

    def __init__(
        self,
        task: str,
        out_dim: int,
        n_node_layers: int,
        n_snapshots: int,
        max_io: int,
        hidden: int = 16,
        depth: int = 2,
        emb_dim: int = 128,
        n_node_types: int = 4,
        snapshots: Snapshots = "last",
        readout: str = "mean",
    ) -> None:
        super().__init__(task, emb_dim, out_dim, snapshots=snapshots)
        if readout not in ("mean", "per_layer"):
            raise ValueError(f"readout must be 'mean' or 'per_layer'; got {readout!r}")
        self.readout = readout
        self.n_node_layers, self.n_snapshots = n_node_layers, n_snapshots
        self.max_io, self.n_node_types = max_io, n_node_types
        self.layer_emb = nn.Embedding(n_node_layers, hidden)
        self.type_emb = nn.Embedding(n_node_types, hidden)
        self.pos_emb = nn.Embedding(max_io + 1, hidden)
        self.edge_in = nn.Linear(n_snapshots + 1, hidden)  # weights over snapshots + direction flag
        self.edge_mlp = nn.ModuleList([_mlp(3 * hidden, hidden, hidden) for _ in range(depth)])
        self.msg_mlp = nn.ModuleList([_mlp(2 * hidden, hidden, hidden) for _ in range(depth)])
        self.node_mlp = nn.ModuleList([_mlp(2 * hidden, hidden, hidden) for _ in range(depth)])
        self.norm = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(depth)])
        groups = n_node_layers if readout == "per_layer" else 1
        self.out = nn.Sequential(nn.Linear(2 * hidden * groups, emb_dim), nn.SiLU())

    @classmethod
    def for_graph(cls, graph: Any, task: str, out_dim: int, **kw: Any) -> GMN:
        pos = _positions(graph)
        return cls(
            task,
            out_dim,
            n_node_layers=int(graph.node_layer.max()) + 1,
            n_snapshots=graph.edge_weight.shape[1],
            max_io=int(pos.max()),
            n_node_types=max(4, int(graph.node_type.max()) + 1),
            **kw,
        )

    def prepare(self, zoo: Any) -> Any:
        from hgutils.weightspace.graphs import GMNGraph

        idx = snapshot_index(len(zoo.steps), self.snapshots)
        if len(idx) != len(zoo.steps):
            zoo = zoo.snapshots(idx)
        g = GMNGraph.from_zoo(zoo)
        if g.edge_weight.dtype in (torch.float16, torch.bfloat16):
            g = dataclasses.replace(g, edge_weight=g.edge_weight.float())
        self.check_data(g)
        return g

    def check_data(self, g: Any) -> None:
        if g.edge_weight.dim() != 3 or g.edge_weight.shape[1] != self.n_snapshots:
            raise ValueError(
                f"GMN built for {self.n_snapshots} snapshots: edge_weight must be [B, "
                f"{self.n_snapshots}, E]; got {tuple(g.edge_weight.shape)}"
            )
        if g.edge_weight.shape[2] != g.edge_index.shape[1]:
            raise ValueError(f"edge_weight has {g.edge_weight.shape[2]} edges, edge_index {g.edge_index.shape[1]}")
        if int(g.node_layer.max()) + 1 != self.n_node_layers:
            raise ValueError(
                f"graph has {int(g.node_layer.max()) + 1} layer labels, model was built for "
                f"{self.n_node_layers} (zoo/architecture mismatch)"
            )

    def augment(self, batch: Any, generator: torch.Generator | None, noise: float = 0.2, mask: float = 0.5) -> Any:
        w = batch.edge_weight
        keep = (torch.rand(w.shape, generator=generator) >= mask).to(w)
        noise_t = torch.randn(w.shape, generator=generator, dtype=w.dtype).to(w.device)
        return dataclasses.replace(batch, edge_weight=(w + noise * noise_t) * keep)

    def embed(self, g: Any) -> Tensor:
        self.check_data(g)
        B, T, E = g.edge_weight.shape
        V = g.node_layer.shape[0]
        pos = _positions(g).clamp_max(self.max_io)
        h = (self.layer_emb(g.node_layer) + self.type_emb(g.node_type) + self.pos_emb(pos)).expand(B, V, -1)
        src = torch.cat([g.edge_index[0], g.edge_index[1]])
        dst = torch.cat([g.edge_index[1], g.edge_index[0]])
        w = g.edge_weight.permute(0, 2, 1)  # [B, E, T]
        direction = torch.cat([torch.zeros(E), torch.ones(E)]).to(w)
        e = self.edge_in(torch.cat([torch.cat([w, w], 1), direction.expand(B, 2 * E)[..., None]], -1))
        deg = torch.zeros(V).to(w).index_add(0, dst, torch.ones(2 * E).to(w)).clamp_min(1.0)
        for k in range(len(self.edge_mlp)):
            e = e + self.edge_mlp[k](torch.cat([h[:, src], h[:, dst], e], -1))
            m = self.msg_mlp[k](torch.cat([h[:, src], e], -1))
            agg = torch.zeros_like(h).index_add(1, dst, m) / deg[None, :, None]
            h = self.norm[k](h + self.node_mlp[k](torch.cat([h, agg], -1)))
        if self.readout == "mean":
            return self.out(torch.cat([h.mean(1), e.mean(1)], -1))
        nl = self.n_node_layers
        oh_n = torch.nn.functional.one_hot(g.node_layer, nl).to(h)  # [V, nl]
        oh_e = torch.nn.functional.one_hot(g.node_layer[dst], nl).to(h)  # [2E, nl]
        hn = torch.einsum("vl,bvd->bld", oh_n, h) / oh_n.sum(0).clamp_min(1.0)[None, :, None]
        he = torch.einsum("el,bed->bld", oh_e, e) / oh_e.sum(0).clamp_min(1.0)[None, :, None]
        return self.out(torch.cat([hn.reshape(B, -1), he.reshape(B, -1)], -1))
