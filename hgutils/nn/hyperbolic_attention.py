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

The layer runs steps 1, 2, 3 and 5 in closed forms that equal the formulas above (float64 tests
to 1e-10): queries, keys and values as :math:`A y + B\exp_0(b)` with per-row scalars
(:func:`translated_exp0`); the distances as :math:`\operatorname{arcosh}(1 + t)` with :math:`t` one
matrix product of node-level factors (:func:`distance_factors`), the gated softmax and the Klein
midpoint as one autograd node over the ``V x V`` work (:func:`gated_midpoint`), and the midpoint's
tangent vector in closed form (:func:`klein_to_tangent`). :meth:`HyperbolicGraphAttention.update`
is the layer on tangent states (GTH-GMN's encoder passes those between layers and snapshots);
:func:`pairwise_distance`, :func:`dense_gated_attention` and :func:`aggregate_dense` stay the explicit
path (attention weights returned, edge-conditioned messages, the Euclidean ablation).

``euclidean=True`` is the ``c -> 0`` limit used for the "Euclidean attention" ablation: the affine
maps become ``W h + b``, the distance :math:`2\|q - k\|` (the ``c -> 0`` limit of ``d_c``), the
midpoint the weighted mean, and the state is the (capped) tangent vector itself. All manifold math
comes from :mod:`hgutils.manifolds.poincare`.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.manifolds import poincare as pm
from hgutils.manifolds.numerics import BALL_EPS, MIN_NORM
from hgutils.nn.attention_kernels import (  # noqa: F401 -- re-exported: the layer's math, one import away
    aggregate,
    aggregate_dense,
    dense_gated_attention,
    distance_factors,
    gated_attention,
    gated_midpoint,
    klein_to_tangent,
    klein_weighted,
    pairwise_distance,
    scatter_softmax,
    translated_exp0,
)

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


def hyperbolic_affine(x: Tensor, W: Tensor, b: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r"""Per-head hyperbolic affine map :math:`(W\otimes_c x)\oplus_c \exp_0(b)`, projected into the ball
    (:func:`~hgutils.manifolds.poincare.project`: where ``tanh`` rounds to 1 the point would lie on the sphere
    at infinity).

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
    return pm.project(pm.mobius_add(pm.expmap0(y, c), pm.expmap0(b, c)[None, :, None, :], c), c)


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
        return self.ball_point(cap_norm(s, self.max_norm))

    def ball_point(self, s: Tensor) -> Tensor:
        r""":math:`\exp_0(s)` of an already capped tangent vector (:meth:`update`'s output), projected into
        the ball (``s`` itself in the Euclidean ablation)."""
        return s if self.euclidean else pm.project(pm.expmap0(s, self.c), self.c)

    @property
    def tangent_is_exact(self) -> bool:
        r"""Whether :math:`\log_0` of :meth:`ball_point` returns every capped state unchanged, i.e. the
        projection never binds: :math:`\tanh(\sqrt c\,\rho) \le 1 - \varepsilon` for the cap :math:`\rho`
        and float32's ball margin :math:`\varepsilon` (always in the Euclidean ablation). Then a stack of
        layers can pass tangent states (:meth:`update`) instead of ball points."""
        eps = BALL_EPS[torch.float32]
        return self.euclidean or math.tanh(self.c**0.5 * self.max_norm) <= 1.0 - eps

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

    def qkv(self, h: Tensor, kernels: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """Queries, keys and values ``[3, B, H, V, head_dim]`` of tangent node states ``h = log_0 x [B, V, d]``
        and their squared norms ``[3, B, H, V, 1]`` (``None`` in the Euclidean ablation): one batched
        product over the stacked kernels, one Möbius translation by the biases (:func:`translated_exp0`)."""
        B, V, d = h.shape
        H, o = self.heads, self.head_dim
        if kernels is None:
            W = self.kernel.reshape(1, 3 * H, o, d).expand(B, -1, -1, -1)
        else:
            W = kernels.reshape(B, 3 * H, o, d)
        # one [V, d] x [d, 3H * o] product per graph (not 3H products with o = head_dim columns each)
        y = torch.bmm(h, W.reshape(B, 3 * H * o, d).transpose(1, 2)).view(B, V, 3 * H, o).transpose(1, 2)
        b = self.bias.reshape(1, 3 * H, 1, o)
        if self.euclidean:
            return (y + b).view(B, 3, H, V, o).transpose(0, 1).contiguous(), None
        y, y2 = translated_exp0(y, pm.expmap0(b, self.c), self.c)
        return y.view(B, 3, H, V, o).transpose(0, 1).contiguous(), y2.view(B, 3, H, V, 1).transpose(0, 1)

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
        if return_attention:
            s, alpha_e = self._step(self.to_tangent(x), edge_index, kernels, edge_terms, True)
            return self.to_ball(s), alpha_e
        return self.to_ball(self._step(self.to_tangent(x), edge_index, kernels, edge_terms))

    def update(self, s: Tensor, edge_index: Tensor, kernels: Tensor | None, edge_terms: tuple[Tensor, Any]) -> Tensor:
        r"""The layer on tangent states: :math:`s = \log_0 x` ``[B, V, d]`` -> :math:`\mathrm{cap}(s'')`, whose
        :meth:`ball_point` is :meth:`forward`'s output (``edge_terms``: :meth:`edge_terms`). When
        :attr:`tangent_is_exact`, this is also :math:`\log_0` of that output, so stacked layers and
        snapshots skip the ``log_0`` / ``exp_0`` round trip between layers."""
        return cap_norm(self._step(s, edge_index, kernels, edge_terms), self.max_norm)

    def _step(
        self,
        s: Tensor,
        edge_index: Tensor,
        kernels: Tensor | None,
        edge_terms: tuple[Tensor, Any],
        return_attention: bool = False,
    ) -> Any:
        r"""Tangent state before the cap, :math:`s'' = s' + \mathrm{FFN}(\mathrm{LN}(s'))`,
        :math:`s' = s + W_o m` (and the attention weights ``[B, H, E]``, ``return_attention``)."""
        B, V, _ = s.shape
        edge_term, ev = edge_terms
        (q, k, v), sq = self.qkv(s, kernels)
        if ev is None and not self.euclidean and not return_attention:
            m_tan = gated_midpoint(q, k, v, edge_term, self.c, tuple(sq))
        else:
            m_tan = self._explicit_messages(q, k, v, edge_index, edge_term, ev, return_attention)
            if return_attention:
                m_tan, alpha_e = m_tan
        H, dh = self.heads, self.head_dim
        s = s + self.drop(self.out(m_tan.permute(0, 2, 1, 3).reshape(B, V, H * dh)))
        s = s + self.drop(self.ffn(self.norm(s)))
        return (s, alpha_e) if return_attention else s

    def _explicit_messages(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        edge_index: Tensor,
        edge_term: Tensor,
        ev: Tensor | None,
        return_attention: bool,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Messages ``[B, H, V, head_dim]`` from explicit attention weights (the Euclidean ablation,
        edge-conditioned messages, or when the weights are returned: ``[B, H, E]`` besides)."""
        B, H, V = q.shape[0], self.heads, q.shape[2]
        alpha = dense_gated_attention(-pairwise_distance(q, k, self.c, self.euclidean), edge_term)  # row = dst
        if ev is not None:  # edge-conditioned message: v_u (+) exp_0(A e_uv), formed per edge
            src, dst = edge_index[0], edge_index[1]
            a_e = alpha.reshape(B, H, V * V)[:, :, dst * V + src]
            vs = v.index_select(2, src)
            ev = ev.expand(B, -1, -1, -1)
            vs = vs + ev if self.euclidean else pm.project(pm.mobius_add(vs, pm.expmap0(ev, self.c), self.c), self.c)
            m_tan = aggregate(vs, a_e, dst, V, self.c, self.euclidean)
        else:
            m_tan = aggregate_dense(v, alpha, self.c, self.euclidean)  # [B, H, V, dh] tangent at 0
        if return_attention:
            src, dst = edge_index[0], edge_index[1]
            return m_tan, alpha.reshape(B, H, V * V)[:, :, dst * V + src]
        return m_tan
