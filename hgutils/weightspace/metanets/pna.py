r"""Principal neighbourhood aggregation (PNA) on the neuron graph of an MLP, computed block by block.

The GMN of Neural Graphs (Kofinas et al., ICLR 2024, arXiv:2403.12143) runs PNA message passing
(Corso et al. 2020, arXiv:2004.05718) on the graph whose nodes are an MLP's neurons and whose edges
are its weights. That graph is layered and dense: the edges between layers ``l`` and ``l+1`` form a
complete bipartite block. Every tensor here is kept in that block form, so message passing is a
pair of broadcasts and a reduction along one axis -- the same arithmetic as an edge list with
scatter, without the index tensors (tests compare the two):

* node states ``h[k] [B, d_k, F]`` for layers ``k = 0..L`` (inputs, hidden layers, outputs);
* edge states ``ef[l], er[l] [B, d_{l+1}, d_l, F]`` for ``l = 0..L-1``: the forward edges
  ``(l, j) -> (l+1, i)`` and, with reverse edges, the reversed ones ``(l+1, i) -> (l, j)``.

One :class:`PNALayer` (PyG's ``PNAConv`` as Neural Graphs configures it: one tower, one pre- and one
post-layer, edge features modulating the messages) updates node ``v`` from its in-neighbours ``u``:

.. math::
    [\gamma_{uv}, \beta_{uv}] = E\,e_{uv},\quad m_{uv} = \gamma_{uv} \odot P[h_v, h_u] + \beta_{uv},\quad
    h'_v = \Lambda\,Q\big[h_v,\ \textstyle\bigoplus_{u \to v} m_{uv}\big],

with :math:`\bigoplus` = mean, min, max and std over the in-neighbours (std
:math:`= \sqrt{\max(\overline{m^2} - \bar m^2, 10^{-5})}`, set to 0 at the floor, as PyG), each
once as is and once times the amplification scaler :math:`\log(\deg v + 1) / \delta`
(:math:`\delta` = mean of :math:`\log(d + 1)` over the degree histogram the model is given).
:class:`EdgeUpdate` (Neural Graphs' ``EdgeMLP``) renews every edge state between layers:
:math:`e'_{uv} = W_1\,\sigma(W_e e_{uv} + W_s h_u + W_t h_v)`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.pna_kernels import edge_mlp, modulated_moments

AGGREGATORS: tuple[str, ...] = ("mean", "min", "max", "std")
SCALERS: tuple[str, ...] = ("identity", "amplification")
NORMS: tuple[str, ...] = ("batch", "graph", "node", "none")
_STD_FLOOR = 1e-5  # PyG's StdAggregation clamp


class GaussianFourierFeatures(nn.Module):
    r"""Random Fourier features :math:`x \mapsto [\cos 2\pi B x, \sin 2\pi B x]`, ``B [m, in]`` drawn
    once from :math:`N(0, \sigma^2)` and kept fixed (Tancik et al. 2020, arXiv:2006.10739; the
    ``rff`` package's ``GaussianEncoding`` used by Neural Graphs). Output ``2m`` features."""

    def __init__(self, in_dim: int, n_features: int = 128, sigma: float = 3.0) -> None:
        super().__init__()
        if in_dim < 1 or n_features < 1 or sigma <= 0:
            raise ValueError(f"need in_dim >= 1, n_features >= 1, sigma > 0; got {in_dim}, {n_features}, {sigma}")
        self.register_buffer("B", torch.randn(n_features, in_dim) * sigma)

    def forward(self, x: Tensor) -> Tensor:
        p = 2 * math.pi * x @ self.B.T.to(x.dtype)
        return torch.cat([torch.cos(p), torch.sin(p)], -1)


def forward_degree_histogram(sizes: tuple[int, ...]) -> Tensor:
    """In-degree histogram of the forward (input-to-output) neuron graph of an MLP with widths ``sizes``.

    ``hist[d]`` = number of neurons with ``d`` incoming weights: ``d_0`` neurons of degree 0, then the
    ``d_{k+1}`` neurons of layer ``k+1`` with degree ``d_k``. Neural Graphs gives PNA this histogram
    (``GNNForClassification``, ``deg``) also when it adds reverse edges.
    """
    ext = (0, *sizes)
    hist = torch.zeros(max(ext) + 1, dtype=torch.long)
    for a, b in zip(ext[:-1], ext[1:]):
        hist[a] += b
    return hist


def mean_log_degree(hist: Tensor) -> float:
    r""":math:`\delta = \sum_d \mathrm{hist}[d] \log(d + 1) / \sum_d \mathrm{hist}[d]` (PyG's ``avg_deg['log']``)."""
    d = torch.arange(len(hist), dtype=torch.float64)
    return float(((d + 1).log() * hist.double()).sum() / hist.sum())


Moments = tuple[Tensor, Tensor, Tensor, Tensor, int]


def moments(m: Tensor, dim: int) -> Moments:
    """Sum, sum of squares, min and max of messages ``m`` along ``dim``, and their number."""
    return m.sum(dim), (m * m).sum(dim), m.amin(dim), m.amax(dim), m.shape[dim]


def aggregate(parts: list[Moments], n_nodes: int, like: Tensor) -> tuple[Tensor, int]:
    """Mean, min, max and std of the messages whose :func:`moments` are ``parts`` (one per edge block
    a node receives from), concatenated on the feature axis ``[B, n, 4F]``, and the in-degree (the
    same for all nodes of a layer).

    No incoming messages (an input neuron without reverse edges): zeros, degree 0 (as PyG).
    """
    B, Fd = like.shape[0], like.shape[-1]
    if not parts:
        return like.new_zeros(B, n_nodes, 4 * Fd), 0
    s, s2, mn, mx, deg = parts[0]
    for p_s, p_s2, p_mn, p_mx, p_deg in parts[1:]:
        s, s2, deg = s + p_s, s2 + p_s2, deg + p_deg
        mn, mx = torch.minimum(mn, p_mn), torch.maximum(mx, p_mx)
    mean = s / deg
    var = s2 / deg - mean * mean
    std = var.clamp_min(_STD_FLOOR).sqrt()
    std = std.masked_fill(std <= math.sqrt(_STD_FLOOR), 0.0)
    return torch.cat([mean, mn, mx, std], -1), deg


class PNALayer(nn.Module):
    """One PNA convolution on the block-form neuron graph (module docstring)."""

    def __init__(self, dim: int, avg_log_deg: float, modulate_edges: bool = True) -> None:
        super().__init__()
        self.dim, self.avg_log_deg, self.modulate_edges = dim, avg_log_deg, modulate_edges
        self.edge_encoder = nn.Linear(dim, 2 * dim if modulate_edges else dim)
        self.pre = nn.Linear(2 * dim if modulate_edges else 3 * dim, dim)  # on [h_dst, h_src(, e)]
        self.post = nn.Linear((len(AGGREGATORS) * len(SCALERS) + 1) * dim, dim)
        self.lin = nn.Linear(dim, dim)

    def _moments(self, dst: Tensor, src: Tensor, e: Tensor, dst_rows: bool) -> Moments:
        """:func:`moments` of the messages of one edge block; ``dst`` / ``src`` are the pre-layer's
        per-node terms ``[B, n, F]``.

        ``dst_rows``: the receiving nodes index the rows of the block (forward edges) or its columns.
        Modulated messages go through :func:`~.pna_kernels.modulated_moments`, a slice of the batch at a time.
        """
        dim = 2 if dst_rows else 1
        if self.modulate_edges:
            rows, cols = (dst, src) if dst_rows else (src, dst)
            enc = self.edge_encoder
            return (*modulated_moments(e, rows, cols, enc.weight, enc.bias, dim), e.shape[dim])
        d = dst[:, :, None] if dst_rows else dst[:, None]
        s = src[:, None] if dst_rows else src[:, :, None]
        We = self.pre.weight[:, 2 * self.dim :]
        return moments(d + s + F.linear(self.edge_encoder(e), We), dim)

    def forward(
        self, h: list[Tensor], ef: list[Tensor], er: list[Tensor] | None, layers: list[int] | None = None
    ) -> list[Tensor]:
        """The new states of the node layers ``layers`` (default: all), in that order. A layer ``k``
        reads the forward block ``ef[k-1]`` and the reverse block ``er[k]`` only."""
        Fd = self.dim
        Wd, Ws = self.pre.weight[:, :Fd], self.pre.weight[:, Fd : 2 * Fd]
        dst = [F.linear(x, Wd) for x in h]
        src = [F.linear(x, Ws, self.pre.bias) for x in h]
        L, out = len(ef), []
        for k in range(len(h)) if layers is None else layers:
            x = h[k]
            parts: list[Moments] = []
            if k >= 1:  # forward edges (k-1, j) -> (k, i): rows of block k-1
                parts.append(self._moments(dst[k], src[k - 1], ef[k - 1], True))
            if er is not None and k < L:  # reverse edges (k+1, i) -> (k, j): columns of block k
                parts.append(self._moments(dst[k], src[k + 1], er[k], False))
            agg, deg = aggregate(parts, x.shape[1], x)
            amp = math.log(max(deg, 1) + 1) / self.avg_log_deg
            out.append(self.lin(self.post(torch.cat([x, agg, agg * amp], -1))))
        return out


class EdgeUpdate(nn.Module):
    r"""Neural Graphs' ``EdgeMLP``: :math:`e' = W_1\,\mathrm{SiLU}(W_e e + W_s h_{src} + W_t h_{dst})` (no residual)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.lin_e, self.lin_s, self.lin_t, self.lin1 = (nn.Linear(dim, dim) for _ in range(4))

    def block(self, h: list[Tensor], e: Tensor, l: int, reverse: bool) -> Tensor:
        """The new state of edge block ``l`` (``reverse``: the reversed edges ``(l+1, i) -> (l, j)``),
        by :func:`~.pna_kernels.edge_mlp` with the node terms (and ``W_e``'s bias) on the rows and columns."""
        src, dst = (h[l + 1], h[l]) if reverse else (h[l], h[l + 1])
        s, t = self.lin_s(src), self.lin_t(dst) + self.lin_e.bias
        rows, cols = (s, t) if reverse else (t, s)
        return edge_mlp(e, rows, cols, self.lin_e.weight, self.lin1.weight, self.lin1.bias)

    def forward(
        self, h: list[Tensor], ef: list[Tensor], er: list[Tensor] | None
    ) -> tuple[list[Tensor], list[Tensor] | None]:
        ef_new = [self.block(h, e, l, False) for l, e in enumerate(ef)]
        return ef_new, None if er is None else [self.block(h, e, l, True) for l, e in enumerate(er)]


class NodeNorm(nn.Module):
    """Normalisation of the node states between PNA layers, with a per-channel affine map.

    ``"batch"``: one mean and std over every node and channel of every network in the batch --
    what Neural Graphs' ``norm: layernorm`` executes (PyG's graph-mode ``LayerNorm`` called without a
    batch vector: :math:`(x - \\bar x) / (\\mathrm{sd}(x) + \\epsilon)`); ``"graph"``: the same per
    network (PyG's graph-mode ``LayerNorm`` given the batch vector:
    :math:`(x - \\bar x_g) / \\sqrt{\\mathrm{var}_g + \\epsilon}`); ``"node"``: per node
    (``torch.nn.LayerNorm``); ``"none"``.
    """

    def __init__(self, dim: int, mode: str = "batch", eps: float = 1e-5) -> None:
        super().__init__()
        if mode not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}; got {mode!r}")
        self.mode, self.eps = mode, eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, h: list[Tensor]) -> list[Tensor]:
        if self.mode == "none":
            return h
        x = torch.cat(h, 1)  # [B, V, F]
        if self.mode == "batch":
            x = x - x.mean()
            x = x / (x.std(unbiased=False) + self.eps)
        elif self.mode == "graph":
            x = x - x.mean((1, 2), keepdim=True)
            x = x / (x.pow(2).mean((1, 2), keepdim=True) + self.eps).sqrt()
        else:
            x = F.layer_norm(x, x.shape[-1:], eps=self.eps)
        x = x * self.weight + self.bias
        return list(x.split([t.shape[1] for t in h], 1))
