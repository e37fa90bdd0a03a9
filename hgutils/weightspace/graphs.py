"""Parameter graphs of MLP zoos: the GTH-GMN temporal graph and the GMN one-edge-per-parameter graph.

All networks of a zoo share one architecture, so one *topology* (``edge_index``, node labels, edge
attributes) serves the whole zoo, and only the values are per network and snapshot
(``edge_weight [N, T, E]``, ``node_feat [N, T, V, F]``). Indexing a graph (``g[idx]``) slices those
value tensors -- no per-network Python objects.

Node numbering (both graphs), for an MLP with widths ``sizes = (d_0, ..., d_L)``:

- neurons layer by layer: layer ``k`` occupies ``[o_k, o_k + d_k)`` with ``o_k = d_0 + ... + d_{k-1}``;
  ``node_layer = k``; ``node_type`` 0 (input, ``k = 0``), 1 (hidden), 2 (output, ``k = L``);
- then one bias node per linear layer: bias node ``l`` (index ``sum(sizes) + l``) carries ``b_l`` and
  feeds the neurons of layer ``l + 1``; ``node_layer = l + 1`` (the layer its values act on),
  ``node_type = 3``.

Edges in parameter order (the order of :func:`hgutils.weightspace.batched_training.train_stacked`'s flat
layout): for each layer ``l``, ``W_l[i, j]`` is the edge ``(o_l + j) -> (o_{l+1} + i)`` (row-major over
``(i, j)``), then ``b_l[i]`` is the edge ``bias_l -> (o_{l+1} + i)``.

:class:`TemporalParamGraph` (GTH-GMN paper, OpenReview Xq64xkQCak, §method):


- *Symmetrisation*: the paper averages anti-parallel directed pairs and fills a missing direction
  with 0. In an MLP no pair has both directions, so every parameter ``w`` becomes the two directed
  edges ``u -> v`` and ``v -> u``, each with weight ``(w + 0) / 2 = w / 2``. ``edge_index`` lists the
  ``P`` forward edges (parameter order) then the ``P`` reversed ones (same order): ``E = 2P``.
  :meth:`TemporalParamGraph.to_params` returns ``2 x`` the forward half -- an exact inverse (scaling by
  2 is exact in binary floating point).
- *Zero weights*: the paper drops zero-weight edges; with one shared topology we keep every edge,
  so a zero weight is an edge of weight 0 (trained float weights are never exactly 0).
- *Edge attributes* ``[E, 2]``: ``is_bias`` (edge from a bias node) and ``is_cross_layer`` (its
  endpoints have different ``node_layer``: 1 for weight edges, 0 for bias edges, whose bias node
  sits in the layer it feeds).
- *Node features* ``F = 2`` (no raw weights): incident strengths
  :math:`\\mathrm{es}_{abs}(u) = \\sum_{e \\ni u} |w_e|` and :math:`\\mathrm{es}_{sgn}(u) = \\sum_{e \\ni u} w_e`
  over the symmetrised incident edges, each z-scored over the ``V`` nodes of the same network and
  snapshot: :math:`(s - \\bar s) / (\\operatorname{std}(s) + 10^{-8})` (population std). The layer and
  type labels are the separate ``node_layer`` / ``node_type`` tensors.

:class:`GMNGraph` (GMN baseline, Lim et al.): the ``P`` forward edges only, ``edge_weight`` = the raw
parameter values, ``edge_attr [E, 1]`` = ``is_bias``; ``node_pos`` gives input/output neurons their
1-based position in their layer (0 otherwise).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

if TYPE_CHECKING:
    from hgutils.weightspace.zoo.containers import MLPSpec, Zoo

__all__ = ["GMNGraph", "TemporalParamGraph", "mlp_topology", "params_to_flat", "flat_to_params"]

_ZSCORE_EPS = 1e-8  # added to the std of the z-score; keeps constant features finite (-> 0)


def _check_spec(spec: object) -> tuple[int, ...]:
    sizes = getattr(spec, "sizes", None)
    if sizes is None:
        raise ValueError(f"parameter graphs need an MLP zoo (MLPSpec with sizes); got spec {spec!r}")
    return tuple(int(s) for s in sizes)


def mlp_topology(sizes: tuple[int, ...]) -> dict[str, Tensor]:
    """Shared topology of an MLP with widths ``sizes``: forward edges in parameter order.

    Returns ``src``, ``dst`` (``[P]``), ``is_bias`` (``[P]`` bool), ``node_layer``, ``node_type``
    (``[V]`` int64) and ``node_pos`` (``[V]``: 1-based position of input/output neurons, 0 otherwise).
    """
    sizes = tuple(int(s) for s in sizes)
    L = len(sizes) - 1
    offs = [0]
    for s in sizes:
        offs.append(offs[-1] + s)
    n_neurons = offs[-1]
    src, dst, is_bias = [], [], []
    for l in range(L):
        o, i = sizes[l + 1], sizes[l]
        rows = torch.arange(o).repeat_interleave(i)
        cols = torch.arange(i).repeat(o)
        src += [offs[l] + cols, torch.full((o,), n_neurons + l)]
        dst += [offs[l + 1] + rows, offs[l + 1] + torch.arange(o)]
        is_bias += [torch.zeros(o * i, dtype=torch.bool), torch.ones(o, dtype=torch.bool)]
    node_layer = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes)] + [torch.arange(1, L + 1)])
    node_type = torch.cat(
        [torch.zeros(sizes[0])]
        + [torch.ones(s) for s in sizes[1:-1]]
        + [torch.full((sizes[-1],), 2), torch.full((L,), 3)]
    ).long()
    node_pos = torch.zeros(n_neurons + L, dtype=torch.long)
    node_pos[: sizes[0]] = torch.arange(1, sizes[0] + 1)
    node_pos[offs[L] : offs[L + 1]] = torch.arange(1, sizes[-1] + 1)
    return {
        "src": torch.cat(src),
        "dst": torch.cat(dst),
        "is_bias": torch.cat(is_bias),
        "node_layer": node_layer.long(),
        "node_type": node_type,
        "node_pos": node_pos,
    }


def params_to_flat(params: dict[str, Tensor], sizes: tuple[int, ...]) -> Tensor:
    """Concatenate ``W0, b0, W1, b1, ...`` (each ``[*batch, ...]``) into ``[*batch, P]`` in edge order."""
    L = len(sizes) - 1
    batch = params["W0"].shape[:-2]
    parts = []
    for l in range(L):
        W, b = params[f"W{l}"], params[f"b{l}"]
        if tuple(W.shape[-2:]) != (sizes[l + 1], sizes[l]) or b.shape[-1] != sizes[l + 1]:
            raise ValueError(f"layer {l}: W {tuple(W.shape)} / b {tuple(b.shape)} do not match sizes {sizes}")
        parts += [W.reshape(*batch, -1), b.reshape(*batch, -1)]
    return torch.cat(parts, dim=-1)


def flat_to_params(flat: Tensor, sizes: tuple[int, ...]) -> dict[str, Tensor]:
    """Inverse of :func:`params_to_flat`."""
    L = len(sizes) - 1
    batch = flat.shape[:-1]
    out, o = {}, 0
    for l in range(L):
        n = sizes[l + 1] * sizes[l]
        out[f"W{l}"] = flat[..., o : o + n].reshape(*batch, sizes[l + 1], sizes[l])
        o += n
        out[f"b{l}"] = flat[..., o : o + sizes[l + 1]].reshape(*batch, sizes[l + 1])
        o += sizes[l + 1]
    if o != flat.shape[-1]:
        raise ValueError(f"flat parameters have {flat.shape[-1]} entries; sizes {sizes} need {o}")
    return out


def _index(t: Tensor, idx: Any) -> Tensor:
    if isinstance(idx, int):
        return t[idx : idx + 1] if idx != -1 else t[-1:]
    return t[idx]


def _check_trajectory(params: dict[str, Tensor]) -> None:
    """Stacked trajectories have ``W0`` of shape ``[N, T, out, in]``."""
    if params["W0"].dim() != 4:
        raise ValueError(f"params must be [N, T, ...] trajectories; W0 has shape {tuple(params['W0'].shape)}")


@dataclass
class TemporalParamGraph:
    """GTH-GMN temporal parameter graphs of a zoo: one topology + per-network, per-snapshot values.

    See the module docstring for the node/edge layout, symmetrisation and node features.

    Attributes
    ----------
    edge_index : LongTensor [2, E]
        ``E = 2P``: the ``P`` forward (parameter) edges, then the same edges reversed.
    node_layer, node_type : LongTensor [V]
    edge_attr : Tensor [E, 2]
        ``(is_bias, is_cross_layer)``.
    edge_weight : Tensor [N, T, E]
        Symmetrised weights: ``w / 2`` on both directions (float32 for a float16 zoo, so that the
        halving stays exact).
    node_feat : Tensor [N, T, V, 2]
        z-scored ``(es_abs, es_sgn)``.
    spec : MLPSpec
    param_dtype : torch.dtype
        dtype of the zoo parameters, restored by :meth:`to_params`.
    node_pos : LongTensor [V]
        1-based position of input and output neurons in their layer, 0 for every other node (hidden
        neurons and bias nodes are permutable, so they carry no position).
    """

    edge_index: Tensor
    node_layer: Tensor
    node_type: Tensor
    edge_attr: Tensor
    edge_weight: Tensor
    node_feat: Tensor
    spec: MLPSpec
    param_dtype: torch.dtype | None = None
    node_pos: Tensor | None = None

    @classmethod
    def from_params(cls, params: dict[str, Tensor], spec: MLPSpec) -> TemporalParamGraph:
        """Graphs of stacked trajectories ``params[key] [N, T, ...]`` of an MLP with ``spec.sizes``."""
        sizes = _check_spec(spec)
        _check_trajectory(params)
        top = mlp_topology(sizes)
        flat = params_to_flat(params, sizes)
        param_dtype = flat.dtype
        if flat.dtype in (torch.float16, torch.bfloat16):  # w/2 of a half-precision weight may be
            flat = flat.float()  # subnormal there; float32 keeps it exact
        dtype = flat.dtype
        half = flat * 0.5  # (w + 0) / 2: the missing anti-parallel direction is filled with 0
        edge_weight = torch.cat([half, half], dim=-1)
        src = torch.cat([top["src"], top["dst"]])
        dst = torch.cat([top["dst"], top["src"]])
        is_bias = torch.cat([top["is_bias"], top["is_bias"]]).to(dtype)
        cross = (top["node_layer"][src] != top["node_layer"][dst]).to(dtype)
        V = top["node_layer"].shape[0]
        node_feat = node_strength_features(edge_weight, dst, V)
        return cls(
            torch.stack([src, dst]),
            top["node_layer"],
            top["node_type"],
            torch.stack([is_bias, cross], dim=1),
            edge_weight,
            node_feat,
            spec,
            param_dtype,
            top["node_pos"],
        )

    @classmethod
    def from_zoo(cls, zoo: Zoo) -> TemporalParamGraph:
        """Graphs of every network and snapshot of an MLP ``zoo`` (:class:`~hgutils.weightspace.zoo.Zoo`)."""

        return cls.from_params(zoo.params, zoo.spec)

    def to_params(self) -> dict[str, Tensor]:
        """Exact inverse of :meth:`from_params`: ``{"W0": [N, T, out, in], ...}``."""
        sizes = _check_spec(self.spec)
        P = self.edge_weight.shape[-1] // 2
        flat = self.edge_weight[..., :P] * 2
        if self.param_dtype is not None:
            flat = flat.to(self.param_dtype)
        return {k: v.contiguous() for k, v in flat_to_params(flat, sizes).items()}

    def __len__(self) -> int:
        return self.edge_weight.shape[0]

    @property
    def T(self) -> int:
        return self.edge_weight.shape[1]

    def __getitem__(self, idx: Any) -> TemporalParamGraph:
        """Batch view: networks ``idx`` (int, slice, index tensor or mask); the topology is shared."""
        return dataclasses.replace(
            self, edge_weight=_index(self.edge_weight, idx), node_feat=_index(self.node_feat, idx)
        )

    def snapshots(self, idx: Any) -> TemporalParamGraph:
        """Graphs restricted to snapshots ``idx`` (indices into the T axis)."""
        sel = torch.as_tensor(idx).long().reshape(-1) if not isinstance(idx, slice) else idx
        return dataclasses.replace(self, edge_weight=self.edge_weight[:, sel], node_feat=self.node_feat[:, sel])

    def dwsnets_view(
        self, generator: torch.Generator | None, shift: float = 0.2, drop: float = 0.5
    ) -> TemporalParamGraph:
        """DWSNets' self-supervised view of the trained weights
        (:func:`hgutils.weightspace.metanets.base.dwsnets_augment` on each parameter tensor of each
        network and snapshot), symmetrised again and with the node strength features recomputed from
        the augmented weights."""
        from hgutils.weightspace.metanets.base import dwsnets_augment

        sizes = _check_spec(self.spec)
        P = self.edge_weight.shape[-1] // 2
        flat = self.edge_weight[..., :P] * 2
        parts = []
        for key, blk in flat_to_params(flat, sizes).items():
            parts.append(dwsnets_augment(blk, 2 if key.startswith("W") else 1, generator, shift, drop).flatten(2))
        half = torch.cat(parts, -1) * 0.5
        w = torch.cat([half, half], -1)
        feat = node_strength_features(w, self.edge_index[1], self.node_layer.shape[0]).to(self.node_feat.dtype)
        return dataclasses.replace(self, edge_weight=w, node_feat=feat)


def node_strength_features(edge_weight: Tensor, dst: Tensor, n_nodes: int) -> Tensor:
    """z-scored incident strengths ``[..., V, 2]`` from directed edge weights ``[..., E]``.

    Every undirected edge is stored in both directions, so summing over incoming edges (``dst``)
    counts each incident edge of a node once. Computed in float32 at least.
    """
    w = edge_weight.float() if edge_weight.dtype in (torch.float16, torch.bfloat16) else edge_weight
    batch = w.shape[:-1]
    w2 = w.reshape(-1, w.shape[-1])
    s_abs = torch.zeros(w2.shape[0], n_nodes, dtype=w.dtype).index_add_(1, dst, w2.abs())
    s_sgn = torch.zeros(w2.shape[0], n_nodes, dtype=w.dtype).index_add_(1, dst, w2)
    f = torch.stack([s_abs, s_sgn], dim=-1)
    f = (f - f.mean(dim=1, keepdim=True)) / (f.std(dim=1, unbiased=False, keepdim=True) + _ZSCORE_EPS)
    return f.reshape(*batch, n_nodes, 2)


@dataclass
class GMNGraph:
    """GMN-style parameter graphs (one directed edge per parameter, a bias node per layer).

    Attributes
    ----------
    edge_index : LongTensor [2, P]
        Forward edges in parameter order.
    node_layer, node_type, node_pos : LongTensor [V]
    edge_attr : Tensor [P, 1]
        ``is_bias``.
    edge_weight : Tensor [N, T, P]
        The raw parameter values.
    spec : MLPSpec
    """

    edge_index: Tensor
    node_layer: Tensor
    node_type: Tensor
    node_pos: Tensor
    edge_attr: Tensor
    edge_weight: Tensor
    spec: MLPSpec

    @classmethod
    def from_params(cls, params: dict[str, Tensor], spec: MLPSpec) -> GMNGraph:
        sizes = _check_spec(spec)
        _check_trajectory(params)
        top = mlp_topology(sizes)
        flat = params_to_flat(params, sizes)
        dtype = flat.dtype if flat.dtype.is_floating_point else torch.float32
        return cls(
            torch.stack([top["src"], top["dst"]]),
            top["node_layer"],
            top["node_type"],
            top["node_pos"],
            top["is_bias"].to(dtype).unsqueeze(1),
            flat,
            spec,
        )

    @classmethod
    def from_zoo(cls, zoo: Zoo) -> GMNGraph:
        return cls.from_params(zoo.params, zoo.spec)

    def to_params(self) -> dict[str, Tensor]:
        """Exact inverse of :meth:`from_params`."""
        return {k: v.contiguous() for k, v in flat_to_params(self.edge_weight, _check_spec(self.spec)).items()}

    def __len__(self) -> int:
        return self.edge_weight.shape[0]

    @property
    def T(self) -> int:
        return self.edge_weight.shape[1]

    def __getitem__(self, idx: Any) -> GMNGraph:
        return dataclasses.replace(self, edge_weight=_index(self.edge_weight, idx))

    def snapshots(self, idx: Any) -> GMNGraph:
        sel = torch.as_tensor(idx).long().reshape(-1) if not isinstance(idx, slice) else idx
        return dataclasses.replace(self, edge_weight=self.edge_weight[:, sel])
