r"""GTH-GMN's encoder: node coordinates on the ball for every snapshot of a weight trajectory.

Per snapshot ``t`` (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, §method):

1. **Tangent-space encoders.**
   :math:`h_u = A x_u + \mathrm{MLP}(A x_u) + E_\ell[\ell(u)] + E_\tau[\tau(u)] (+ E_{pos}[u])`
   (node-strength features through a small MLP with residual; learned layer, type and -- for input and
   output neurons -- position embeddings), then
   :math:`z_u = a_{\ell(u),\tau(u)} \oplus_c \exp_0(\mathrm{cap}(h_u))` with learned base coordinates
   ``a`` on the ball (``ManifoldParameter`` s) and the smooth norm cap of
   :func:`hgutils.nn.hyperbolic_attention.cap_norm`: the radius of every node is free to vary.
2. **Hyperbolic graph attention** (:class:`hgutils.nn.hyperbolic_attention.HyperbolicGraphAttention`,
   pre-LayerNorm residual stream), ``n_attn_layers`` layers with self-loops; edge bias and gate read
   the edge attributes (and, ``use_edge_weight``, the signed weight of the edge at ``t``).
3. **Kernel evolution** (EvolveGCN): per attention layer ``l`` and head ``r``,
   :math:`p_l^{(t-1)}` = per-MLP-layer means of the tangent node states output by attention layer
   ``l`` at snapshot ``t-1`` (concatenated; zeros before the first snapshot),
   :math:`u_{l,r}^{(t)} = \mathrm{GRU}_{l,r}(p_l^{(t-1)}, u_{l,r}^{(t-1)})`,
   :math:`W^{(t)}_{l,r,q/k/v} = W^{base}_{l,r,q/k/v} + \mathrm{MLP}_{l,r}(u_{l,r}^{(t)})`. The
   ``L x H`` GRU cells and kernel MLPs are evaluated together (:class:`GroupedGRUCell`,
   :class:`GroupedMLP`: one batched matrix product per gate instead of a Python loop per head).
"""

from __future__ import annotations

import math
from typing import Any

import geoopt
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from hgutils.manifolds import poincare as pm
from hgutils.nn.compiled import compiled
from hgutils.nn.hyperbolic_attention import HyperbolicGraphAttention, cap_norm
from hgutils.weightspace.metanets.gth_gmn.config import GTHGMNConfig


def _means(h: Tensor, means: Tensor) -> Tensor:
    """Per-MLP-layer means ``[B, n_node_layers * d]`` of node vectors ``h [B, V, d]`` with the
    ``[V, n_node_layers]`` mean matrix (:meth:`TrajectoryEncoder.layer_mean_matrix`)."""
    return torch.einsum("vl,bvd->bld", means, h).reshape(h.shape[0], -1)


class GroupedGRUCell(nn.Module):
    r"""``G`` independent GRU cells applied at once: ``x [B, G, n_in]``, ``h [B, G, n_h]`` -> ``[B, G, n_h]``.

    PyTorch's ``GRUCell`` equations per group :math:`k`:
    :math:`r = \sigma(W_{ir}x + b_{ir} + W_{hr}h + b_{hr})`, :math:`z = \sigma(W_{iz}x + b_{iz} + W_{hz}h + b_{hz})`,
    :math:`n = \tanh(W_{in}x + b_{in} + r \odot (W_{hn}h + b_{hn}))`, :math:`h' = (1 - z)\odot n + z\odot h`;
    initialised like ``GRUCell`` (uniform in :math:`\pm 1/\sqrt{n_h}`).
    """

    def __init__(self, groups: int, n_in: int, n_hidden: int) -> None:
        super().__init__()
        k = 1.0 / math.sqrt(n_hidden)
        self.w_ih = nn.Parameter(torch.empty(groups, 3 * n_hidden, n_in).uniform_(-k, k))
        self.w_hh = nn.Parameter(torch.empty(groups, 3 * n_hidden, n_hidden).uniform_(-k, k))
        self.b_ih = nn.Parameter(torch.empty(groups, 3 * n_hidden).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(groups, 3 * n_hidden).uniform_(-k, k))

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        gi = torch.einsum("bgi,goi->bgo", x, self.w_ih) + self.b_ih
        gh = torch.einsum("bgi,goi->bgo", h, self.w_hh) + self.b_hh
        ir, iz, in_ = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        return (1 - z) * n + z * h


class GroupedMLP(nn.Module):
    """``G`` independent two-layer MLPs ``n_in -> n_hidden -> SiLU -> n_out`` applied at once; the last
    layer starts at zero (so GTH-GMN's evolved kernels start at their static base values)."""

    def __init__(self, groups: int, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        k = 1.0 / math.sqrt(n_in)
        self.w1 = nn.Parameter(torch.empty(groups, n_hidden, n_in).uniform_(-k, k))
        self.b1 = nn.Parameter(torch.empty(groups, n_hidden).uniform_(-k, k))
        self.w2 = nn.Parameter(torch.zeros(groups, n_out, n_hidden))
        self.b2 = nn.Parameter(torch.zeros(groups, n_out))

    def forward(self, x: Tensor) -> Tensor:
        h = F.silu(torch.einsum("bgi,goi->bgo", x, self.w1) + self.b1)
        return torch.einsum("bgi,goi->bgo", h, self.w2) + self.b2


class TrajectoryEncoder(nn.Module):
    """Node coordinates ``[B, V, d]`` of every snapshot of a batch of parameter graphs (module docstring).

    Parameters
    ----------
    n_node_layers, n_node_types, n_positions : label counts of the graphs (``n_positions``: input and
        output neurons, which keep their position; 0 = none).
    node_feat_dim, edge_attr_dim : feature widths of the graphs.
    cfg : the :class:`~.config.GTHGMNConfig` (sizes, curvature, ablation switches).
    """

    def __init__(
        self,
        n_node_layers: int,
        node_feat_dim: int,
        edge_attr_dim: int,
        n_node_types: int,
        n_positions: int,
        cfg: GTHGMNConfig,
    ) -> None:
        super().__init__()
        d, L, H = cfg.dim, cfg.n_attn_layers, cfg.heads
        self.cfg, self.c, self.euclidean = cfg, float(cfg.curvature), cfg.euclidean
        self.n_node_layers, self.n_positions, self.edge_attr_dim = n_node_layers, n_positions, edge_attr_dim
        max_radius = cfg.radius_cap()
        self.max_norm = max_radius / 2.0
        if not self.euclidean and math.sqrt(self.c) * self.max_norm > 3.5:
            raise ValueError(
                f"max_radius={max_radius} at curvature {self.c} puts states at Euclidean norm "
                f"tanh({math.sqrt(self.c) * self.max_norm:.2f}) of the ball radius: float32 cannot resolve it; "
                f"use max_radius <= {7.0 / math.sqrt(self.c):.2f}"
            )
        # 1. tangent-space encoders
        self.feat_in = nn.Linear(node_feat_dim, d)
        self.feat_mlp = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.layer_emb = nn.Embedding(n_node_layers, d)
        self.type_emb = nn.Embedding(n_node_types, d)
        self.pos_emb = nn.Embedding(n_positions + 1, d, padding_idx=0)
        for emb in (self.layer_emb, self.type_emb, self.pos_emb):
            nn.init.normal_(emb.weight, std=0.1)
        with torch.no_grad():
            self.pos_emb.weight[0].zero_()
        manifold = geoopt.Euclidean(ndim=1) if self.euclidean else geoopt.PoincareBall(c=self.c)
        self.anchors = geoopt.ManifoldParameter(torch.zeros(n_node_layers, n_node_types, d), manifold=manifold)
        # 2. attention layers (edge features: attrs, self-loop flag, [w, |w|])
        self.edge_dim = edge_attr_dim + 1 + (2 if cfg.use_edge_weight else 0)
        self.attn = nn.ModuleList(
            [
                HyperbolicGraphAttention(
                    d,
                    H,
                    cfg.head_dim,
                    self.edge_dim,
                    c=self.c if not self.euclidean else 1.0,
                    euclidean=self.euclidean,
                    dropout=cfg.dropout,
                    edge_messages=cfg.edge_messages,
                    max_radius=max_radius,
                )
                for _ in range(L)
            ]
        )
        # torch.compile'd recurrence (one snapshot's GRU update and attention layers), for training steps only
        self._compiled = compiled(self.recurrence) if cfg.compile else None  # pickles (hgutils.nn.compiled)
        # 3. kernel evolution: one GRU cell + kernel MLP per (attention layer, head), evaluated together
        self.pool_dim = n_node_layers * d
        if cfg.use_gru:
            self.gru = GroupedGRUCell(L * H, self.pool_dim, cfg.gru_hidden)
            self.kernel_mlp = GroupedMLP(L * H, cfg.gru_hidden, cfg.gru_hidden, 3 * cfg.head_dim * d)
            self.u0 = nn.Parameter(torch.zeros(L * H, cfg.gru_hidden))
        self._static_cache: tuple[Any, ...] | None = None
        self._means_cache: tuple[Any, Tensor] | None = None

    # ------------------------------------------------------------------ helpers

    def tangent(self, z: Tensor) -> Tensor:
        return z if self.euclidean else pm.logmap0(z, self.c)

    def pos_index(self, g: Any) -> Tensor:
        """Index into ``pos_emb`` per node: input neuron k -> k, output neuron k -> n_in + k, others 0."""
        if getattr(g, "node_pos", None) is None or self.n_positions == 0:
            return torch.zeros_like(g.node_layer)
        n_in = int((g.node_type == 0).sum())
        return g.node_pos + (g.node_type == 2).long() * n_in * (g.node_pos > 0).long()

    def layer_mean_matrix(self, node_layer: Tensor, dtype: torch.dtype) -> Tensor:
        """``[V, n_node_layers]``: ``1/count`` where node ``v`` is in MLP layer ``l``, else 0 (cached per topology)."""
        key = (node_layer.data_ptr(), node_layer.shape[0], str(node_layer.device), dtype)
        if self._means_cache is None or self._means_cache[0] != key:
            oh = F.one_hot(node_layer, self.n_node_layers).to(dtype)
            self._means_cache = (key, oh / oh.sum(0).clamp_min(1.0))
        return self._means_cache[1]

    def _topology(self, g: Any, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """Edge index with self-loops ``[2, E + V]`` and the static edge features ``[1, E + V, Fa + 1]``
        (attributes, self-loop flag): computed once per topology."""
        key = (g.edge_index.data_ptr(), g.edge_index.shape[1], str(g.edge_index.device), dtype)
        if self._static_cache is not None and self._static_cache[0] == key:
            return self._static_cache[1], self._static_cache[2]
        E, V = g.edge_index.shape[1], g.node_layer.shape[0]
        dev = g.edge_index.device
        ar = torch.arange(V, device=dev)
        ei = torch.cat([g.edge_index, torch.stack([ar, ar])], 1)
        attr = torch.cat([g.edge_attr.to(dev, dtype), torch.zeros(V, self.edge_attr_dim, dtype=dtype, device=dev)], 0)
        loop = torch.cat([torch.zeros(E, 1), torch.ones(V, 1)], 0).to(dev, dtype)
        feat = torch.cat([attr, loop], -1).unsqueeze(0)
        self._static_cache = (key, ei, feat)
        return ei, feat

    def initial_points(self, g: Any, feat: Tensor) -> Tensor:
        r""":math:`z_u = a_{\ell(u),\tau(u)} \oplus_c \exp_0(\mathrm{cap}(h_u))` for node features ``[B, V, F]``."""
        h = self.feat_in(feat)
        h = h + self.feat_mlp(h) + self.layer_emb(g.node_layer) + self.type_emb(g.node_type)
        h = cap_norm(h + self.pos_emb(self.pos_index(g)), self.max_norm)
        a = self.anchors[g.node_layer, g.node_type]  # [V, d]
        if self.euclidean:
            return a + h
        return pm.project(pm.mobius_add(a.expand_as(h), pm.expmap0(h, self.c), self.c), self.c)

    def evolve(self, u: Tensor, p_prev: Tensor) -> Tensor:
        """One GRU step of every (attention layer, head): ``u [B, L*H, g]``, ``p_prev [B, L, n_node_layers * d]``."""
        L, H = self.cfg.n_attn_layers, self.cfg.heads
        B = u.shape[0]
        x = p_prev.unsqueeze(2).expand(B, L, H, p_prev.shape[-1]).reshape(B, L * H, -1)
        return self.gru(x, u)

    def kernels(self, u: Tensor) -> list[Tensor]:
        """Per attention layer, the evolved kernels ``[B, 3, H, head_dim, d]`` = base + MLP(u)."""
        cfg, L, H = self.cfg, self.cfg.n_attn_layers, self.cfg.heads
        delta = self.kernel_mlp(u).view(u.shape[0], L, H, 3, cfg.head_dim, cfg.dim).permute(0, 1, 3, 2, 4, 5)
        return [self.attn[l].kernel.unsqueeze(0) + delta[:, l] for l in range(L)]

    # ------------------------------------------------------------------ the trajectory
    def snapshot(
        self, g: Any, t: int, s: Tensor, u: Tensor | None, p_prev: Tensor, edge_terms: list[Any] | None
    ) -> tuple[Tensor, Tensor | None, Tensor]:
        """One snapshot from the tangent states :math:`\\log_0` of its initial points ``s [B, V, d]``: GRU
        update of the kernels, attention layers on tangent states
        (:meth:`~hgutils.nn.hyperbolic_attention.HyperbolicGraphAttention.update`).

        Returns the last layer's capped tangent states ``[B, V, d]`` (the node coordinates are their
        ``ball_point``), the new GRU states and the per-layer means of each attention layer's output
        ``[B, L, n_node_layers * d]`` (the next snapshot's GRU input)."""
        ei, static = self._topology(g, g.node_feat.dtype)
        if self.cfg.use_edge_weight:
            w_t = g.edge_weight[:, t]
            V = g.node_layer.shape[0]
            w = torch.cat([w_t, torch.zeros(w_t.shape[0], V).to(w_t)], 1).unsqueeze(-1)
            ef = torch.cat([static.expand(w.shape[0], -1, -1), w, w.abs()], -1)
            edge_terms = [layer.edge_terms(ef, ei, V) for layer in self.attn]
        means = self.layer_mean_matrix(g.node_layer, s.dtype)
        use_compiled = self._compiled is not None and self.training and torch.is_grad_enabled()
        return (self._compiled if use_compiled else self.recurrence)(s, u, p_prev, ei, edge_terms, means)

    def recurrence(
        self, s: Tensor, u: Tensor | None, p_prev: Tensor, ei: Tensor, edge_terms: list[Any], means: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor]:
        """The recurrent part of :meth:`snapshot`, free of caches (what ``cfg.compile`` compiles): GRU
        update of the kernels, the attention layers on tangent states, and each layer's per-MLP-layer
        means (``means``: :meth:`layer_mean_matrix`)."""
        L = self.cfg.n_attn_layers
        kernels: list[Tensor | None] = [None] * L
        if u is not None:
            u = self.evolve(u, p_prev)
            kernels = self.kernels(u)
        p_cur = []
        for layer in range(L):
            s = self.attn[layer].update(s, ei, kernels[layer], edge_terms[layer])
            if not self.attn[layer].tangent_is_exact:  # the projection may bind: continue from log_0 x
                s = self.tangent(self.attn[layer].ball_point(s))
            p_cur.append(_means(s, means))
        return s, u, torch.stack(p_cur, 1)

    def run(self, g: Any, keep: bool = False) -> tuple[Tensor | None, Tensor]:
        """Encode every snapshot of ``g`` in order. Returns the GRU states after the last snapshot
        (``None`` without GRU) and the node coordinates ``[B, T, V, d]`` of every snapshot (``keep``;
        else ``[B, 1, V, d]``, the last one's). The initial points of all snapshots and the ball points
        of all outputs are computed in one call each (they do not depend on the recurrence); the
        attention layers run snapshot by snapshot on tangent states."""
        B, T = g.edge_weight.shape[:2]
        cfg, L = self.cfg, self.cfg.n_attn_layers
        dtype = g.node_feat.dtype
        u = self.u0.to(dtype).unsqueeze(0).expand(B, -1, -1) if cfg.use_gru else None
        p_prev = torch.zeros(B, L, self.pool_dim, dtype=dtype, device=g.node_feat.device)
        edge_terms = None
        if not cfg.use_edge_weight:
            ei, static = self._topology(g, dtype)
            V = g.node_layer.shape[0]
            edge_terms = [layer.edge_terms(static, ei, V) for layer in self.attn]  # shared by every snapshot
        # [B, T, V, d] -> T views; unbind's backward stacks the T gradients once (not T full-size zero fills)
        s0 = self.tangent(self.initial_points(g, g.node_feat)).unbind(1)
        use_ckpt = cfg.checkpoint_snapshots and torch.is_grad_enabled()
        states: list[Tensor] = []
        for t in range(T):
            if use_ckpt:
                s, u, p_cur = checkpoint(self.snapshot, g, t, s0[t], u, p_prev, edge_terms, use_reentrant=False)
            else:
                s, u, p_cur = self.snapshot(g, t, s0[t], u, p_prev, edge_terms)
            if keep or t == T - 1:
                states.append(s)
            p_prev = p_cur
        if u is not None:  # the last snapshot's states also update the GRU (the trajectory summary)
            u = self.evolve(u, p_prev)
        return u, self.attn[-1].ball_point(torch.stack(states, 1))
