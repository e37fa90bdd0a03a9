r"""Hyperbolic graph attention on the Poincaré ball (the spatial layer of GTH-GMN).

One layer, for a batch of ``B`` graphs that share one topology (``edge_index [2, E]``,
messages flow ``src -> dst``), node states ``x [B, V, d]`` on the ball of curvature ``-c``:

1. hyperbolic affine maps give queries, keys and values per head ``r``
   (:func:`hyperbolic_affine`):
   :math:`\Phi_{W,b}(x) = \exp_{W\otimes_c x}(\mathrm{PT}_{0\to W\otimes_c x}(b)) = (W\otimes_c x)\oplus_c\exp_0(b)`,
   :math:`W\otimes_c x = \exp_0(W\log_0 x)`; the kernels ``W`` may differ per graph (they are
   evolved over the trajectory by GTH-GMN's GRU);
2. score of edge ``u -> v``: :math:`\theta_{u\to v} = -d_c(q_v, k_u) + b_{uv}` with a learned
   edge bias :math:`b_{uv}` computed from the edge features;
3. softmax over the *incoming* edges of each node (scatter, no dense ``V x V``;
   :func:`scatter_softmax`), multiplied by a learned gate :math:`g_{uv}=\sigma(\cdot)` and
   renormalised (:func:`gated_attention`);
4. (optional, ``edge_messages=True``) edge-conditioned messages: the value sent along ``u -> v`` is
   :math:`v_u \oplus_c \exp_0(A e_{uv})`, a hyperbolic translation by a learned map of the edge
   features, so edge values (e.g. the signed weight) reach the aggregated states and not only the
   attention weights;
5. aggregation of the values with the Einstein midpoint in the Klein model
   (:func:`hgutils.manifolds.poincare.einstein_midpoint_scatter`), then back to the ball;
6. the heads are combined in the tangent space at the origin (``log_0``, concatenation, linear map),
   scaled by ``sqrt(d)`` so the residual stream has unit-variance entries,
   residual + LayerNorm + feed-forward stay Euclidean (as the paper prescribes for norm/dropout),
   and the result is mapped back with ``exp_0`` and projected into the ball.

``euclidean=True`` is the ``c -> 0`` limit used for the "Euclidean attention" ablation: the affine
maps become ``W h + b``, the distance :math:`2\|q - k\|` (the ``c -> 0`` limit of ``d_c``) and the
midpoint the weighted mean. All manifold math comes from :mod:`hgutils.manifolds.poincare`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from hgutils.manifolds import poincare as pm


def scatter_softmax(scores: Tensor, index: Tensor, num_nodes: int) -> Tensor:
    r"""Softmax of ``scores [..., E]`` over the groups given by ``index [E]`` (values in ``[0, num_nodes)``).

    :math:`\alpha_e = \exp(s_e - m_{i(e)}) / \sum_{e': i(e')=i(e)} \exp(s_{e'} - m_{i(e)})`, with the
    per-group max :math:`m` subtracted for stability. Groups with no member are simply absent.
    """
    if index.dim() != 1 or index.shape[0] != scores.shape[-1]:
        raise ValueError(f"index must be [E] with E = scores.shape[-1] = {scores.shape[-1]}; got {tuple(index.shape)}")
    idx = index.expand_as(scores)
    shape = (*scores.shape[:-1], num_nodes)
    mx = torch.full(shape, float("-inf"), dtype=scores.dtype, device=scores.device)
    mx = mx.scatter_reduce(-1, idx, scores.detach(), reduce="amax", include_self=True)
    e = torch.exp(scores - mx.gather(-1, idx))
    den = torch.zeros(shape, dtype=scores.dtype, device=scores.device).scatter_add(-1, idx, e)
    return e / den.gather(-1, idx)


def gated_attention(scores: Tensor, gates: Tensor, index: Tensor, num_nodes: int) -> Tensor:
    r"""Softmax over incoming edges, times gates in ``(0, 1)``, renormalised to sum to 1 per node.

    :math:`\tilde\alpha_e = \alpha_e g_e / \sum_{e': i(e') = i(e)} \alpha_{e'} g_{e'}`.
    """
    a = scatter_softmax(scores, index, num_nodes) * gates
    idx = index.expand_as(a)
    den = torch.zeros((*a.shape[:-1], num_nodes), dtype=a.dtype, device=a.device).scatter_add(-1, idx, a)
    return a / den.gather(-1, idx).clamp_min(torch.finfo(a.dtype).tiny)


def hyperbolic_affine(x: Tensor, W: Tensor, b: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r"""Per-head hyperbolic affine map :math:`(W\otimes_c x)\oplus_c \exp_0(b)`.

    Parameters
    ----------
    x : ``[B, V, d]`` points on the ball (``euclidean=True``: tangent vectors at 0).
    W : ``[B, H, o, d]`` (per-graph kernels) or ``[H, o, d]`` (shared).
    b : ``[H, o]`` tangent bias at the origin.

    Returns ``[B, H, V, o]``.
    """
    if x.dim() != 3:
        raise ValueError(f"x must be [B, V, d]; got shape {tuple(x.shape)}")
    if W.dim() == 3:
        W = W.unsqueeze(0).expand(x.shape[0], *W.shape)
    if W.dim() != 4 or W.shape[0] != x.shape[0] or W.shape[-1] != x.shape[-1]:
        raise ValueError(f"W must be [B={x.shape[0]}, H, o, d={x.shape[-1]}]; got {tuple(W.shape)}")
    h = x if euclidean else pm.logmap0(x, c)
    y = torch.einsum("bhod,bvd->bhvo", W, h)
    if euclidean:
        return y + b[None, :, None, :]
    return pm.mobius_add(pm.expmap0(y, c), pm.expmap0(b, c)[None, :, None, :], c)


def aggregate(values: Tensor, alpha: Tensor, dst: Tensor, num_nodes: int, c: float, euclidean: bool = False) -> Tensor:
    r"""Attention-weighted aggregation of per-edge values at their destination nodes.

    ``values [B, H, E, o]`` (the source node's value for each edge, ball points), ``alpha [B, H, E]``
    (weights summing to 1 per destination), ``dst [E]``. Hyperbolic: the Einstein midpoint
    :math:`m_v = \mathrm{midpoint}_K(\{(\mathrm{val}_e, \alpha_e)\}_{e \to v})` computed in the
    Klein model (:func:`hgutils.manifolds.poincare.einstein_midpoint_scatter`), returned as
    :math:`\log_0 m_v`; Euclidean: :math:`\sum_{e\to v}\alpha_e \mathrm{val}_e`. Returns ``[B, H, V, o]``
    tangent vectors at the origin.
    """
    B, H, E, o = values.shape
    offs = (torch.arange(B * H, device=values.device) * num_nodes).view(B, H, 1)
    index = (offs + dst.view(1, 1, E)).reshape(-1)
    if euclidean:
        agg = torch.zeros(B * H * num_nodes, o, dtype=values.dtype, device=values.device)
        agg = agg.index_add(0, index, (alpha.unsqueeze(-1) * values).reshape(-1, o))
        return agg.view(B, H, num_nodes, o)
    mid = pm.einstein_midpoint_scatter(values.reshape(-1, o), alpha.reshape(-1), index, B * H * num_nodes, c)
    return pm.logmap0(pm.project(mid, c), c).view(B, H, num_nodes, o)


class HyperbolicGraphAttention(nn.Module):
    """One multi-head hyperbolic graph-attention layer (see the module docstring for the math).

    Parameters
    ----------
    dim : node state dimension ``d``.
    heads : number of heads ``H``.
    head_dim : per-head dimension of q/k/v.
    edge_dim : number of per-edge features fed to the edge bias ``b_uv`` and gate ``g_uv``.
    c : curvature magnitude (ignored when ``euclidean``).
    euclidean : the ``c -> 0`` ablation (Euclidean attention, weighted-mean aggregation).
    dropout : dropout on the tangent-space update (Euclidean, as in the paper).
    edge_messages : translate each message by a learned function of its edge features (step 4).
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        head_dim: int,
        edge_dim: int,
        c: float = 1.0,
        euclidean: bool = False,
        dropout: float = 0.0,
        edge_messages: bool = False,
    ) -> None:
        super().__init__()
        if not euclidean and not c > 0:
            raise ValueError(f"curvature magnitude c must be > 0 for hyperbolic attention; got {c}")
        self.dim, self.heads, self.head_dim, self.c, self.euclidean = dim, heads, head_dim, float(c), euclidean
        self.kernel = nn.Parameter(torch.randn(3, heads, head_dim, dim) / dim**0.5)  # q, k, v base kernels
        self.bias = nn.Parameter(torch.zeros(3, heads, head_dim))
        self.edge_bias = nn.Linear(edge_dim, heads)
        self.edge_gate = nn.Linear(edge_dim, heads)
        self.edge_value = nn.Linear(edge_dim, heads * head_dim) if edge_messages else None
        nn.init.zeros_(self.edge_gate.weight)
        nn.init.constant_(self.edge_gate.bias, 2.0)  # gates start near 1 (plain softmax attention)
        self.out = nn.Linear(heads * head_dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)

    def to_tangent(self, x: Tensor) -> Tensor:
        """``sqrt(d) log_0(x)`` of ball points (identity in the Euclidean ablation)."""
        return x if self.euclidean else pm.logmap0(x, self.c) * self.dim**0.5

    def to_ball(self, h: Tensor) -> Tensor:
        """``exp_0(h / sqrt(d))``, projected into the ball (identity in the Euclidean ablation).

        The LayerNorm-ed tangent stream has norm ~ sqrt(d); scaling by 1/sqrt(d) keeps the points at
        hyperbolic radius ~ 1 instead of saturating at the ball's boundary (the inverse scaling in
        :meth:`to_tangent` keeps the residual stream consistent).
        """
        return h if self.euclidean else pm.project(pm.expmap0(h / self.dim**0.5, self.c), self.c)

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_feat: Tensor,
        kernels: Tensor | None = None,
        return_attention: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Update node states.

        Parameters
        ----------
        x : ``[B, V, d]`` node states (ball points; tangent vectors when ``euclidean``).
        edge_index : ``[2, E]`` long, shared by the batch; row 0 = source, row 1 = destination.
        edge_feat : ``[B, E, edge_dim]`` edge features (edge bias and gate inputs).
        kernels : optional ``[B, 3, H, head_dim, d]`` per-graph q/k/v kernels (GTH-GMN's evolved
            kernels); ``None`` uses this layer's own static kernels.
        return_attention : also return the attention weights ``[B, H, E]`` (sum to 1 per destination).
        """
        B, V, d = x.shape
        if d != self.dim:
            raise ValueError(f"node states must have dim {self.dim}; got {d}")
        if edge_index.dim() != 2 or edge_index.shape[0] != 2:
            raise ValueError(f"edge_index must be [2, E]; got {tuple(edge_index.shape)}")
        E = edge_index.shape[1]
        if edge_feat.shape[:2] != (B, E):
            raise ValueError(f"edge_feat must be [B={B}, E={E}, F]; got {tuple(edge_feat.shape)}")
        src, dst = edge_index[0], edge_index[1]
        if kernels is None:
            kernels = self.kernel.unsqueeze(0).expand(B, *self.kernel.shape)
        q, k, v = (hyperbolic_affine(x, kernels[:, i], self.bias[i], self.c, self.euclidean) for i in range(3))
        qd, ks = q.index_select(2, dst), k.index_select(2, src)  # [B, H, E, dh]; index_add backward
        if self.euclidean:
            dist = 2.0 * (qd - ks).norm(dim=-1)
        else:
            dist = pm.dist(qd, ks, self.c)
        scores = -dist + self.edge_bias(edge_feat).permute(0, 2, 1)
        gates = torch.sigmoid(self.edge_gate(edge_feat)).permute(0, 2, 1)
        alpha = gated_attention(scores, gates, dst, V)  # [B, H, E]
        vs = v.index_select(2, src)  # [B, H, E, dh]
        if self.edge_value is not None:  # edge-conditioned message: v_u (+) exp_0(A e_uv)
            ev = self.edge_value(edge_feat).view(B, E, self.heads, self.head_dim).permute(0, 2, 1, 3)
            vs = vs + ev if self.euclidean else pm.project(pm.mobius_add(vs, pm.expmap0(ev, self.c), self.c), self.c)
        m_tan = aggregate(vs, alpha, dst, V, self.c, self.euclidean)  # [B, H, V, dh] tangent at 0
        H, dh = self.heads, self.head_dim
        h = self.to_tangent(x)
        h = self.norm1(h + self.drop(self.out(m_tan.permute(0, 2, 1, 3).reshape(B, V, H * dh))))
        h = self.norm2(h + self.drop(self.ffn(h)))
        out = self.to_ball(h)
        return (out, alpha) if return_attention else out
