"""Test-only reference parameter graph, written directly from the papers' definition.

Nodes: the neurons of every layer, then one bias node per layer. Edges: one per weight (input neuron j
of layer i -> output neuron k of layer i+1) and one per bias (bias node i -> output neuron k of layer
i+1). The library's graph builders (``hgutils.weightspace.graphs``) must agree with this; the GTH-GMN
and GMN test stand-ins are both built from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hgutils.weightspace.metanets.base import WeightData


@dataclass
class ReferenceGraph:
    src: torch.Tensor  # [E] source node of each parameter edge
    dst: torch.Tensor  # [E] target node
    is_bias: torch.Tensor  # [E] bool: the edge carries a bias
    weight: torch.Tensor  # [N, T, E] the parameter on each edge, per network and snapshot
    node_layer: torch.Tensor  # [V] layer of each neuron; a bias node carries the index of the layer it feeds
    node_type: torch.Tensor  # [V] 0 input, 1 hidden, 2 output, 3 bias
    n_nodes: int


def reference_graph(data: WeightData) -> ReferenceGraph:
    sizes = data.sizes
    offs = [0]
    for s in sizes:
        offs.append(offs[-1] + s)
    nb = len(data.weights)
    layer = torch.cat([torch.full((s,), i) for i, s in enumerate(sizes)] + [torch.arange(nb)])
    typ = torch.cat(
        [torch.zeros(sizes[0])]
        + [torch.ones(s) for s in sizes[1:-1]]
        + [torch.full((sizes[-1],), 2), torch.full((nb,), 3)]
    ).long()
    src, dst, bias, cols = [], [], [], []
    for i, (W, b) in enumerate(zip(data.weights, data.biases)):
        o, n = W.shape[2], W.shape[3]
        ii, jj = torch.meshgrid(torch.arange(o), torch.arange(n), indexing="ij")
        src += [offs[i] + jj.reshape(-1), torch.full((o,), offs[-1] + i)]
        dst += [offs[i + 1] + ii.reshape(-1), offs[i + 1] + torch.arange(o)]
        bias += [torch.zeros(o * n, dtype=torch.bool), torch.ones(o, dtype=torch.bool)]
        cols += [W.reshape(*W.shape[:2], -1), b]
    return ReferenceGraph(
        torch.cat(src), torch.cat(dst), torch.cat(bias), torch.cat(cols, -1), layer, typ, offs[-1] + nb
    )
