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
from hgutils.manifolds.numerics import ARTANH_EPS, BALL_EPS, MIN_NORM, TANH_MAX, artanh

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


def translated_exp0(y: Tensor, beta: Tensor, c: float) -> tuple[Tensor, Tensor]:
    r""":math:`p = \exp_0(y) \oplus_c \beta` and :math:`\|p\|^2` (``[..., 1]``) for tangent vectors ``y [..., o]``
    and ball points ``beta`` (broadcast), in closed form: with :math:`u = \exp_0(y) = \tau y`,
    :math:`\tau = \tanh(\sqrt c\|y\|)/(\sqrt c\|y\|)`, Möbius addition
    (:func:`~hgutils.manifolds.poincare.mobius_add`) is
    :math:`p = \frac{g_u (u + \beta) + S u}{g_u g_\beta + S}` with :math:`g_u = 1 - c\|u\|^2`,
    :math:`g_\beta = 1 - c\|\beta\|^2`,
    :math:`S = c\|u + \beta\|^2 = c(\tau^2\|y\|^2 + 2\tau\langle y, \beta\rangle + \|\beta\|^2)`,
    so :math:`p = A y + B\beta` with per-row scalars :math:`A = \tau(g_u + S)/D`, :math:`B = g_u/D`,
    :math:`D = g_u g_\beta + S`, and :math:`\|p\|^2 = A^2\|y\|^2 + 2AB\langle y, \beta\rangle + B^2\|\beta\|^2`:
    two reductions over ``o`` and two full-width products. The guards are those of ``expmap0`` and
    ``mobius_add`` (norm floored at ``MIN_NORM``, ``tanh`` input at 15, denominator floored)."""
    yy = (y * y).sum(-1, keepdim=True)
    yb = (y * beta).sum(-1, keepdim=True)
    bb = (beta * beta).sum(-1, keepdim=True)
    sc = c**0.5
    n = sc * yy.sqrt().clamp_min(MIN_NORM)
    tau = torch.tanh(n.clamp_max(TANH_MAX)) / n
    u2 = tau * tau * yy
    S = c * (u2 + 2.0 * tau * yb + bb)
    gu = 1 - c * u2
    inv = 1.0 / (gu * (1 - c * bb) + S).clamp_min(MIN_NORM)
    A, B = tau * (gu + S) * inv, gu * inv
    p2 = (A * A * yy + 2.0 * A * B * yb + B * B * bb).clamp_min(0.0)
    return torch.addcmul(B * beta, A, y), p2


def klein_weighted(v: Tensor, c: float, v2: Tensor | None = None) -> Tensor:
    r"""Node-level factors of the Einstein midpoint: ball points ``v [..., o]`` -> ``[..., o + 1]`` =
    :math:`[\gamma\kappa(v), \gamma]` with the Klein coordinates :math:`\kappa(v) = 2v/(1 + c\|v\|^2)` and
    the Lorentz factor :math:`\gamma = 1/\sqrt{1 - c\|\kappa\|^2}`, in closed form
    :math:`\gamma\kappa = \frac{2v}{1 - c\|v\|^2}`, :math:`\gamma = \frac{1 + c\|v\|^2}{1 - c\|v\|^2}`;
    weights :math:`\alpha` applied to them by one matrix product give the midpoint's numerator and
    denominator (:func:`klein_to_tangent`). ``v2``: :math:`\|v\|^2` ``[..., 1]``, if known."""
    v2 = (v * v).sum(-1, keepdim=True) if v2 is None else v2
    inv = 1.0 / (1 - c * v2).clamp_min(MIN_NORM)
    return torch.cat([(2.0 * inv) * v, (1 + c * v2) * inv], -1)


def klein_to_tangent(nd: Tensor, c: float) -> Tensor:
    r"""Numerator and denominator ``[..., o + 1]`` of an Einstein midpoint (:func:`klein_weighted` under
    weights) -> the tangent vector at the origin of the midpoint, in closed form: with the Klein point
    :math:`m` = numerator / denominator and :math:`\kappa = \sqrt c\|m\| = \tanh(\sqrt c\,\rho)`
    (:math:`\rho` its distance from the origin), the Poincaré point is
    :math:`p = m/(1 + \sqrt{1 - \kappa^2})`, :math:`\sqrt c\|p\| = \tanh(\sqrt c\,\rho/2)`, so
    :math:`\log_0 p = \frac{\operatorname{artanh}\kappa}{2\sqrt c\,\|m\|}\,m`. The ball guard of
    :func:`~hgutils.manifolds.poincare.project` applied to :math:`m` is :math:`\kappa \le 1 - \varepsilon`."""
    m = nd[..., :-1] / nd[..., -1:].clamp_min(torch.finfo(nd.dtype).tiny)
    r = m.norm(dim=-1, keepdim=True).clamp_min(MIN_NORM)
    kappa = (c**0.5 * r).clamp_max(1.0 - BALL_EPS.get(nd.dtype, BALL_EPS[torch.float32]))
    return m * (artanh(kappa) / (2.0 * c**0.5 * r))


def aggregate_dense(v: Tensor, alpha: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r""":func:`aggregate` with dense weights ``alpha [B, H, V, V]`` (row = destination) for values on the
    *source nodes* ``v [B, H, V, o]`` (ball points).

    Klein coordinates :math:`\kappa(v_u)` and Lorentz factors :math:`\gamma_u` are computed once per node;
    the Einstein midpoint :math:`m_v = \sum_u \alpha_{vu}\gamma_u\kappa_u / \sum_u \alpha_{vu}\gamma_u` is
    one batched matrix product (:func:`klein_weighted`); back to the ball and to the tangent space
    with :func:`klein_to_tangent`, returned as ``[B, H, V, o]``. Euclidean: :math:`\sum_u \alpha_{vu} v_u`.
    """
    if euclidean:
        return alpha @ v
    return klein_to_tangent(alpha @ klein_weighted(v, c), c)


def distance_factors(
    q: Tensor, k: Tensor, c: float, q2: Tensor | None = None, k2: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    r"""Node-level factors whose inner products are the arcosh arguments of the Poincaré distance:
    ``q, k [..., V, o]`` -> ``Q, K [..., V, o + 2]`` with :math:`\langle Q_v, K_u\rangle = t_{vu}`,

    .. math::
        t_{vu} = \frac{2c\,\|q_v - k_u\|^2}{(1 - c\|q_v\|^2)(1 - c\|k_u\|^2)},\qquad
        \sqrt c\,d_c(q_v, k_u) = \operatorname{arcosh}(1 + t_{vu}),

    :math:`Q_v = \frac{2c}{1 - c\|q_v\|^2}[-2q_v, \|q_v\|^2, 1]`,
    :math:`K_u = \frac{1}{1 - c\|k_u\|^2}[k_u, 1, \|k_u\|^2]`: one matrix product gives every pair's
    :math:`t` (the squared distance's expansion :math:`\|q\|^2 - 2\langle q, k\rangle + \|k\|^2` and both
    conformal factors folded into the factors). ``q2, k2``: the squared norms ``[..., V, 1]``, if known."""
    q2 = (q * q).sum(-1, keepdim=True) if q2 is None else q2
    k2 = (k * k).sum(-1, keepdim=True) if k2 is None else k2
    one = torch.ones_like(q2)
    a = (2.0 * c) / (1 - c * q2).clamp_min(MIN_NORM)
    b = 1.0 / (1 - c * k2).clamp_min(MIN_NORM)
    return torch.cat([-2.0 * q, q2, one], -1) * a, torch.cat([k, one, k2], -1) * b


class _GatedMidpoint(torch.autograd.Function):
    r"""Dense hyperbolic attention from node-level factors, with a hand-written backward.

    Forward (``Q, K [B, H, V, r]`` of :func:`distance_factors`, ``E [B or 1, H, V, V]`` edge bias plus
    log-gate (``-inf`` off the edges), ``W [B, H, V, o + 1]`` of :func:`klein_weighted`, curvature ``c``):
    with :math:`t = \max(QK^\top, \epsilon)` and :math:`\sqrt c\,d = \operatorname{arcosh}(1 + t)`,

    .. math::
        e^{-d} = \bigl(1 + t + \sqrt{t(t + 2)}\bigr)^{-1/\sqrt c},\qquad
        \alpha_{vu} = \mathrm{softmax}_u(E_{vu} - d_{vu})
        = \frac{e^{-d_{vu}}\,e^{E_{vu} - \max_{u'} E_{vu'}}}{\sum_{u'} e^{-d_{vu'}}\,e^{E_{vu'} - \max E_{v\cdot}}},

    output :math:`\alpha W`. No logarithm or exponential of the ``V x V`` distances is formed (one
    square root and, at :math:`c = 1`, a reciprocal; ``exp`` only of the shared edge terms), and
    :math:`e^{-d} \in (0, 1]` needs no max subtraction. Backward, with :math:`G` the output's gradient:
    :math:`\partial W = \alpha^\top G`, :math:`\partial s = \alpha\odot(GW^\top - \langle G, \alpha W\rangle_{row})`
    for the logits :math:`s = E - d`, :math:`\partial E = \partial s` (summed over a broadcast batch),
    :math:`\partial t = -\partial s / (\sqrt c\,\sqrt{t(t+2)})`, :math:`\partial Q = \partial t\,K`,
    :math:`\partial K = \partial t^\top Q`. Saves :math:`\alpha` and :math:`\sqrt{t(t + 2)}`; every
    other ``V x V`` temporary is freed in the forward.
    """

    @staticmethod
    def forward(ctx: Any, Q: Tensor, K: Tensor, E: Tensor, W: Tensor, c: float) -> Tensor:
        t = (Q @ K.transpose(-1, -2)).clamp_min_(MIN_NORM)
        sq = torch.add(t, 2.0).mul_(t).sqrt_()
        base = t.add_(sq).add_(1.0)  # e^{sqrt(c) d}
        y = base.reciprocal_() if c == 1.0 else base.pow_(-1.0 / c**0.5)  # e^{-d}
        alpha = y.mul_((E - E.amax(-1, keepdim=True)).exp_())
        alpha = alpha.div_(alpha.sum(-1, keepdim=True).clamp_min_(torch.finfo(alpha.dtype).tiny))
        out = _narrow(W, alpha.transpose(-1, -2))  # alpha @ W
        ctx.c, ctx.e_batched = float(c), E.shape[0] != 1 or Q.shape[0] == 1
        ctx.save_for_backward(Q, K, W, alpha, sq, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor | None, ...]:
        Q, K, W, alpha, sq, out = ctx.saved_tensors
        gs = (g @ W.transpose(-1, -2)).sub_((g * out).sum(-1, keepdim=True)).mul_(alpha)
        gE = None
        if ctx.needs_input_grad[2]:
            gE = gs.clone() if ctx.e_batched else gs.sum(0, keepdim=True)
        gt = gs.div_(sq).mul_(-1.0 / ctx.c**0.5)
        return _narrow(K, gt.transpose(-1, -2)), _narrow(Q, gt), gE, _narrow(g, alpha), None


def _narrow(x: Tensor, a: Tensor) -> Tensor:
    r""":math:`a^\top x` for a wide ``a [..., V, V']`` and a narrow ``x [..., V, r]``, evaluated as
    :math:`(x^\top a)^\top`: the narrow side as the rows of the product's output, a layout the CPU's
    batched GEMM runs several times faster for ``r`` of a few columns."""
    return (x.transpose(-1, -2) @ a).transpose(-1, -2).contiguous()


def gated_midpoint(
    q: Tensor, k: Tensor, v: Tensor, edge_term: Tensor, c: float, sqnorms: tuple[Tensor, Tensor, Tensor] | None = None
) -> Tensor:
    r"""Steps 2, 3 and 5 of the module docstring at once, fused: queries ``q``, keys ``k`` and values
    ``v [B, H, V, o]`` (ball points), dense edge terms ``[B or 1, H, V, V]`` -> the tangent vectors
    :math:`\log_0 m_v` ``[B, H, V, o]`` of the Einstein midpoints of the values under
    :math:`\alpha = \mathrm{softmax}_u(-d_c(q_v, k_u) + E_{vu})`. Equal to
    :func:`aggregate_dense` of :func:`dense_gated_attention` of :func:`pairwise_distance` (the distance
    by its arcosh form, :func:`distance_factors`); the ``V x V`` work is one autograd node
    (:class:`_GatedMidpoint`). ``sqnorms``: the squared norms ``[B, H, V, 1]`` of ``q, k, v``, if known."""
    q2, k2, v2 = sqnorms if sqnorms is not None else (None, None, None)
    Q, K = distance_factors(q, k, c, q2, k2)
    return klein_to_tangent(_GatedMidpoint.apply(Q, K, edge_term, klein_weighted(v, c, v2), c), c)


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
