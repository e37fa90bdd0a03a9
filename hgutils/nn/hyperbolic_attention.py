r"""Hyperbolic graph attention on the Poincaré ball (the spatial layer of GTH-GMN).

One layer, for a batch of ``B`` graphs that share one topology (``edge_index [2, E]``,
messages flow ``src -> dst``), node states ``x [B, V, d]`` on the ball of curvature ``-c``
(GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, §method):

1. hyperbolic affine maps give queries, keys and values per head ``r``
   (:func:`hyperbolic_affine`):
   :math:`\Phi_{W,b}(x) = \exp_{W\otimes_c x}(\mathrm{PT}_{0\to W\otimes_c x}(b)) = (W\otimes_c x)\oplus_c\exp_0(b)`,
   :math:`W\otimes_c x = \exp_0(W\log_0 x)`; the kernels ``W`` may differ per graph (they are
   evolved over the trajectory by GTH-GMN's GRU);
2. score of edge ``u -> v``: :math:`\theta_{u\to v} = -d_c(q_v, k_u) + b_{uv}` with a learned
   edge bias :math:`b_{uv}` computed from the edge features. The distance needs only node-level
   norms and the inner products of the node pairs, one batched matrix product
   (:func:`pairwise_distance`):
   :math:`\|(-q)\oplus_c k\|^2 = (\|q\|^2 - 2\langle q,k\rangle + \|k\|^2) /
   (1 - 2c\langle q,k\rangle + c^2\|q\|^2\|k\|^2)`,
   :math:`d_c = \frac{2}{\sqrt c}\operatorname{artanh}(\sqrt c\,\|(-q)\oplus_c k\|)`;
3. softmax over the *incoming* edges of each node (:func:`scatter_softmax`), multiplied by a learned
   gate :math:`g_{uv}=\sigma(\cdot)` and renormalised (:func:`gated_attention`; the layer uses the
   dense form :func:`dense_gated_attention` over a ``V x V`` edge mask -- on an MLP's graph the edges
   are about half of all node pairs, so dense batched products beat per-edge gathers);
4. (optional, ``edge_messages=True``) edge-conditioned messages: the value sent along ``u -> v`` is
   :math:`v_u \oplus_c \exp_0(A e_{uv})`;
5. aggregation of the values with the Einstein midpoint in the Klein model,
   :math:`m_v = \sum_e \alpha_e\gamma_{u}\kappa(v_u) / \sum_e \alpha_e\gamma_u`,
   :math:`\kappa(p) = 2p/(1 + c\|p\|^2)`, :math:`\gamma = 1/\sqrt{1 - c\|\kappa\|^2}` -- computed from
   node-level Klein coordinates (:func:`aggregate_dense`; :func:`aggregate` is the per-edge form),
   then back to the ball and to the tangent space at the origin;
6. the heads are combined in the tangent space at the origin (concatenation, linear map) and
   added to the node's tangent state :math:`s = \log_0 x` (**pre-LayerNorm** residual stream: the
   LayerNorm sits only in front of the feed-forward block, so it never fixes the norm of the state),
   :math:`s' = s + W_o m`, :math:`s'' = s' + \mathrm{FFN}(\mathrm{LN}(s'))`; the new point is
   :math:`x' = \exp_0(\mathrm{cap}(s''))` with the smooth norm cap of :func:`cap_norm`. So each node's
   hyperbolic radius :math:`2\|\mathrm{cap}(s'')\|` is free to vary (it is what the model learns),
   and stays below ``max_radius`` (float32-safe).

``euclidean=True`` is the ``c -> 0`` limit used for the "Euclidean attention" ablation: the affine
maps become ``W h + b``, the distance :math:`2\|q - k\|` (the ``c -> 0`` limit of ``d_c``), the
midpoint the weighted mean, and the state is the (capped) tangent vector itself. All manifold math
comes from :mod:`hgutils.manifolds.poincare`.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.manifolds import poincare as pm
from hgutils.manifolds.numerics import ARTANH_EPS, MIN_NORM

#: default largest hyperbolic radius of a node state (distance from the origin); at c = 1 the
#: Euclidean norm of such a point is tanh(3) = 0.995, well inside float32's safe range
MAX_RADIUS = 6.0


def cap_norm(v: Tensor, max_norm: float) -> Tensor:
    r"""Smooth norm cap :math:`\mathrm{cap}(v) = \rho\tanh(\|v\|/\rho)\,v/\|v\|`, :math:`\rho` = ``max_norm``.

    Monotone in :math:`\|v\|`, the identity to first order for :math:`\|v\| \ll \rho`, and never
    above :math:`\rho`: radii keep their order and stay bounded without being pinned.
    """
    n = v.norm(dim=-1, keepdim=True).clamp_min(MIN_NORM)
    return v * (max_norm * torch.tanh(n / max_norm) / n)


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

    Returns
    -------
    Tensor
        ``[B, H, V, o]``.
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


class _PairDistance(torch.autograd.Function):
    r"""Poincaré distance from inner products and squared norms, with a hand-written backward.

    Forward (``dot [.., V, V]``, ``q2 [.., V, 1]``, ``k2 [.., 1, V]``, curvature ``c``):
    :math:`n = q_2 + k_2 - 2\,\mathrm{dot}`, :math:`m = 1 - 2c\,\mathrm{dot} + c^2 q_2 k_2`,
    :math:`\rho = \sqrt{c\,n/m}` (clamped below 1), :math:`d = \frac{2}{\sqrt c}\operatorname{artanh}\rho`.
    Backward: with :math:`g' = g\,\frac{\rho}{\sqrt c\,(1-\rho^2)}`,
    :math:`\partial_n = g'/n`, :math:`\partial_m = -g'/m`,
    :math:`\partial\mathrm{dot} = -2\partial_n - 2c\,\partial_m`,
    :math:`\partial q_2 = \sum_{cols}(\partial_n + c^2 k_2\partial_m)`,
    :math:`\partial k_2 = \sum_{rows}(\partial_n + c^2 q_2\partial_m)`. Autograd would record a dozen
    elementwise ops over the ``V x V`` tensors in each direction; this keeps four saved tensors.
    ``c = 0`` is the Euclidean limit :math:`d = 2\sqrt n`.
    """

    @staticmethod
    def forward(ctx: Any, dot: Tensor, q2: Tensor, k2: Tensor, c: float) -> Tensor:
        n = (q2 + k2).sub_(dot, alpha=2.0).clamp_min_(MIN_NORM)
        ctx.c = float(c)
        if c == 0:
            rho = n.sqrt_()
            ctx.save_for_backward(rho)
            return 2.0 * rho
        m = (q2 * k2).mul_(c * c).add_(1.0).sub_(dot, alpha=2.0 * c).clamp_min_(MIN_NORM)
        e = ARTANH_EPS.get(dot.dtype, ARTANH_EPS[torch.float32])
        rho = torch.div(n, m).mul_(c).sqrt_().clamp_max_(1 - e)
        ctx.save_for_backward(rho, n, m, q2, k2)
        return torch.atanh(rho).mul_(2.0 / c**0.5)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor | None, ...]:
        c = ctx.c
        if c == 0:
            (rho,) = ctx.saved_tensors
            gn = g / rho.clamp_min(MIN_NORM)  # d(2 sqrt n)/dn = 1/sqrt n
            return -2 * gn, gn.sum(-1, keepdim=True), gn.sum(-2, keepdim=True), None
        rho, n, m, q2, k2 = ctx.saved_tensors
        t = torch.mul(rho, rho).neg_().add_(1.0).mul_(c**0.5)
        gp = torch.mul(g, rho).div_(t)  # g * d(d)/d(rho) * rho / 2
        a = gp / n  # dL/dn
        b = gp.div_(m)  # -dL/dm
        gdot = torch.mul(b, 2.0 * c).sub_(a, alpha=2.0)
        cc = c * c
        gq2 = a.sum(-1, keepdim=True).sub_(b @ k2.transpose(-1, -2), alpha=cc)
        gk2 = a.sum(-2, keepdim=True).sub_(q2.transpose(-1, -2) @ b, alpha=cc)
        return gdot, gq2, gk2, None


def pairwise_distance(q: Tensor, k: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r"""Distances :math:`d_c(q_v, k_u)` of every node pair: ``q, k [B, H, V, o]`` -> ``[B, H, V, V]``
    (row ``v`` = destination, column ``u`` = source).

    From node-level squared norms and one batched matrix product of inner products (module
    docstring, step 2; :class:`_PairDistance`): no per-edge Möbius addition is formed. Euclidean:
    :math:`2\|q - k\|`.
    """
    q2, k2 = (q * q).sum(-1, keepdim=True), (k * k).sum(-1).unsqueeze(-2)  # [B, H, V, 1], [B, H, 1, V]
    dot = q @ k.transpose(-1, -2)  # [B, H, V, V]
    return _PairDistance.apply(dot, q2, k2, 0.0 if euclidean else float(c))


def dense_gated_attention(scores: Tensor, log_gates: Tensor) -> Tensor:
    r""":func:`gated_attention` on dense ``[..., V, V]`` scores (row = destination), with the gates as
    logarithms: :math:`\alpha_{vu} g_{vu}/\sum_{u'}\alpha_{vu'}g_{vu'} = \mathrm{softmax}_u(s_{vu} + \log g_{vu})`,
    and :math:`\log g = -\infty` off the edges (so the edge mask is part of the gates)."""
    return torch.softmax(scores + log_gates, dim=-1)


def aggregate_dense(v: Tensor, alpha: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r""":func:`aggregate` with dense weights ``alpha [B, H, V, V]`` (row = destination) for values on the
    *source nodes* ``v [B, H, V, o]`` (ball points).

    Klein coordinates :math:`\kappa(v_u)` and Lorentz factors :math:`\gamma_u` are computed once per node;
    the Einstein midpoint :math:`m_v = \sum_u \alpha_{vu}\gamma_u\kappa_u / \sum_u \alpha_{vu}\gamma_u` is
    two batched matrix products; back to the ball with :math:`p = \kappa/(1 + \sqrt{1 - c\|\kappa\|^2})`,
    returned as :math:`\log_0 p` ``[B, H, V, o]``. Euclidean: :math:`\sum_u \alpha_{vu} v_u`.
    """
    if euclidean:
        return alpha @ v
    kv = pm.to_klein(v, c)
    gamma = (1 - c * (kv * kv).sum(-1, keepdim=True)).clamp_min(MIN_NORM).rsqrt()  # [B, H, V, 1]
    nd = alpha @ torch.cat([gamma * kv, gamma], -1)  # numerator and denominator in one product
    mid_k = nd[..., :-1] / nd[..., -1:].clamp_min(torch.finfo(v.dtype).tiny)
    mid = pm.project(pm.from_klein(pm.project(mid_k, c), c), c)
    return pm.logmap0(mid, c)


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
    max_radius : the largest hyperbolic radius of an output state (the norm cap is ``max_radius / 2``).
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
        max_radius: float = MAX_RADIUS,
    ) -> None:
        super().__init__()
        if not euclidean and not c > 0:
            raise ValueError(f"curvature magnitude c must be > 0 for hyperbolic attention; got {c}")
        if not max_radius > 0:
            raise ValueError(f"max_radius must be > 0; got {max_radius}")
        self.dim, self.heads, self.head_dim, self.c, self.euclidean = dim, heads, head_dim, float(c), euclidean
        self.max_norm = max_radius / 2.0  # d(0, exp_0(v)) = 2 |v| for every c
        self.kernel = nn.Parameter(torch.randn(3, heads, head_dim, dim) / dim**0.5)  # q, k, v base kernels
        self.bias = nn.Parameter(torch.zeros(3, heads, head_dim))
        self.edge_bias = nn.Linear(edge_dim, heads)
        self.edge_gate = nn.Linear(edge_dim, heads)
        self.edge_value = nn.Linear(edge_dim, heads * head_dim) if edge_messages else None
        nn.init.zeros_(self.edge_gate.weight)
        nn.init.constant_(self.edge_gate.bias, 2.0)  # gates start near 1 (plain softmax attention)
        self.out = nn.Linear(heads * head_dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def to_tangent(self, x: Tensor) -> Tensor:
        r"""The tangent state :math:`s = \log_0 x` (identity in the Euclidean ablation)."""
        return x if self.euclidean else pm.logmap0(x, self.c)

    def to_ball(self, s: Tensor) -> Tensor:
        r""":math:`\exp_0(\mathrm{cap}(s))`, projected into the ball (the capped tangent vector itself
        in the Euclidean ablation)."""
        s = cap_norm(s, self.max_norm)
        return s if self.euclidean else pm.project(pm.expmap0(s, self.c), self.c)

    def edge_terms(self, edge_feat: Tensor, edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Any]:
        r"""Dense edge terms from edge features ``[B', E, F]`` (``B' = 1`` for features shared by the
        batch: computed once, broadcast over the graphs): the edge bias plus the log-gate,
        :math:`b_{uv} + \log\sigma(\cdot)`, as ``[B', H, V, V]`` (row = destination; ``-inf`` off the
        edges), and (``edge_messages``) the per-edge message offsets ``[B', H, E, head_dim]``.

        Raises
        ------
        ValueError
            If a node has no incoming edge (its attention would be empty) or an ordered pair repeats.
        """
        Bp, E = edge_feat.shape[:2]
        V, H = num_nodes, self.heads
        src, dst = edge_index[0], edge_index[1]
        flat = dst * V + src
        if torch.bincount(dst, minlength=V).min() < 1:
            raise ValueError("every node needs an incoming edge (add self-loops)")
        if flat.unique().numel() != E:
            raise ValueError("edge_index repeats an ordered node pair; the dense attention needs at most one")
        term = (self.edge_bias(edge_feat) + F.logsigmoid(self.edge_gate(edge_feat))).permute(0, 2, 1)  # [B', H, E]
        dense = torch.full((Bp, H, V * V), float("-inf"), dtype=term.dtype, device=term.device)
        dense = dense.scatter(2, flat.expand(Bp, H, E), term).view(Bp, H, V, V)
        ev = None
        if self.edge_value is not None:
            ev = self.edge_value(edge_feat).view(Bp, E, H, self.head_dim).permute(0, 2, 1, 3)
        return dense, ev

    def qkv(self, x: Tensor, kernels: Tensor | None) -> Tensor:
        """Queries, keys and values ``[3, B, H, V, head_dim]`` of node states ``x [B, V, d]``: one
        ``log_0``, one einsum over the stacked kernels, one Möbius translation by the biases."""
        B, V, d = x.shape
        H, o = self.heads, self.head_dim
        if kernels is None:
            W = self.kernel.reshape(1, 3 * H, o, d).expand(B, -1, -1, -1)
        else:
            W = kernels.reshape(B, 3 * H, o, d)
        h = x if self.euclidean else pm.logmap0(x, self.c)
        # one [V, d] x [d, 3H * o] product per graph (not 3H products with o = head_dim columns each)
        y = torch.bmm(h, W.reshape(B, 3 * H * o, d).transpose(1, 2)).view(B, V, 3 * H, o).transpose(1, 2)
        b = self.bias.reshape(1, 3 * H, 1, o)
        if self.euclidean:
            y = y + b
        else:
            y = pm.mobius_add(pm.expmap0(y, self.c), pm.expmap0(b, self.c), self.c)
        return y.view(B, 3, H, V, o).transpose(0, 1).contiguous()  # q, k, v each contiguous

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_feat: Tensor | None = None,
        kernels: Tensor | None = None,
        return_attention: bool = False,
        edge_terms: tuple[Tensor, Any] | None = None,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Update node states.

        Parameters
        ----------
        x : ``[B, V, d]`` node states (ball points; tangent vectors when ``euclidean``).
        edge_index : ``[2, E]`` long, shared by the batch; row 0 = source, row 1 = destination (at most
            one edge per ordered pair).
        edge_feat : ``[B, E, edge_dim]`` (or ``[1, E, edge_dim]``, shared) edge features; not needed
            when ``edge_terms`` (:meth:`edge_terms` of them, computed once) is given.
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
        if edge_terms is None:
            if edge_feat is None or edge_feat.shape[1] != E or edge_feat.shape[0] not in (1, B):
                got = None if edge_feat is None else tuple(edge_feat.shape)
                raise ValueError(f"edge_feat must be [B={B} or 1, E={E}, F]; got {got}")
            edge_terms = self.edge_terms(edge_feat, edge_index, V)
        edge_term, ev = edge_terms
        q, k, v = self.qkv(x, kernels)
        alpha = dense_gated_attention(-pairwise_distance(q, k, self.c, self.euclidean), edge_term)  # row = dst
        if ev is not None:  # edge-conditioned message: v_u (+) exp_0(A e_uv), formed per edge
            src, dst = edge_index[0], edge_index[1]
            a_e = alpha.reshape(B, self.heads, V * V)[:, :, dst * V + src]
            vs = v.index_select(2, src)
            ev = ev.expand(B, -1, -1, -1)
            vs = vs + ev if self.euclidean else pm.project(pm.mobius_add(vs, pm.expmap0(ev, self.c), self.c), self.c)
            m_tan = aggregate(vs, a_e, dst, V, self.c, self.euclidean)
        else:
            m_tan = aggregate_dense(v, alpha, self.c, self.euclidean)  # [B, H, V, dh] tangent at 0
        H, dh = self.heads, self.head_dim
        s = self.to_tangent(x)
        s = s + self.drop(self.out(m_tan.permute(0, 2, 1, 3).reshape(B, V, H * dh)))
        s = s + self.drop(self.ffn(self.norm(s)))
        out = self.to_ball(s)
        if return_attention:
            src, dst = edge_index[0], edge_index[1]
            return out, alpha.reshape(B, self.heads, V * V)[:, :, dst * V + src]
        return out
