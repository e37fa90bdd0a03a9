r"""The closed forms and fused kernels of hyperbolic graph attention (:mod:`hgutils.nn.hyperbolic_attention`).

On the Poincaré ball of curvature ``-c``, for queries ``q``, keys ``k`` and values ``v`` per head:

- scores and softmax over incoming edges, per edge (:func:`scatter_softmax`, :func:`gated_attention`) or
  over a dense ``V x V`` edge mask (:func:`dense_gated_attention`);
- the distance :math:`d_c(q, k)` of every node pair from one batched matrix product of inner products
  (:func:`pairwise_distance`), or in its arcosh form :math:`\sqrt c\,d = \operatorname{arcosh}(1 + t)`
  with :math:`t` one product of node-level factors (:func:`distance_factors`);
- the Möbius translation of the exponential map in closed form, :math:`\exp_0(y)\oplus_c\beta = A y + B\beta`
  with per-row scalars (:func:`translated_exp0`);
- the Einstein midpoint in Klein coordinates: node-level factors (:func:`klein_weighted`), the weighted
  sum as one matrix product (:func:`aggregate_dense`; per edge: :func:`aggregate`) and its tangent vector
  at the origin in closed form (:func:`klein_to_tangent`);
- the gated softmax and the midpoint fused into one autograd node with a hand-written backward
  (:func:`gated_midpoint`).

Each fused form equals the explicit chain of :mod:`hgutils.manifolds.poincare` maps in float64 to 1e-10,
values and gradients (``tests/test_gth_gmn_fastpath.py``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from hgutils.manifolds import poincare as pm
from hgutils.manifolds.numerics import ARTANH_EPS, BALL_EPS, MIN_NORM, TANH_MAX, artanh

__all__ = [
    "scatter_softmax",
    "gated_attention",
    "pairwise_distance",
    "distance_from_inner",
    "dense_gated_attention",
    "translated_exp0",
    "klein_weighted",
    "klein_to_tangent",
    "aggregate_dense",
    "distance_factors",
    "gated_midpoint",
    "aggregate",
]


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

    Elementwise form (:func:`distance_from_inner`): ``dot``, ``q2`` and ``k2`` of one shape (chosen pairs,
    norms gathered per pair); the same forward, and the norms' gradients without the sums.
    """

    @staticmethod
    def forward(ctx: Any, dot: Tensor, q2: Tensor, k2: Tensor, c: float) -> Tensor:
        n = (q2 + k2).sub_(dot, alpha=2.0).clamp_min_(MIN_NORM)
        ctx.c, ctx.pairwise = float(c), q2.shape == dot.shape == k2.shape
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
            if ctx.pairwise:
                return -2 * gn, gn, gn, None
            return -2 * gn, gn.sum(-1, keepdim=True), gn.sum(-2, keepdim=True), None
        rho, n, m, q2, k2 = ctx.saved_tensors
        t = torch.mul(rho, rho).neg_().add_(1.0).mul_(c**0.5)
        gp = torch.mul(g, rho).div_(t)  # g * d(d)/d(rho) * rho / 2
        a = gp / n  # dL/dn
        b = gp.div_(m)  # -dL/dm
        gdot = torch.mul(b, 2.0 * c).sub_(a, alpha=2.0)
        cc = c * c
        if ctx.pairwise:
            return gdot, a - cc * b * k2, a.sub_(b * q2, alpha=cc), None
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


def distance_from_inner(dot: Tensor, x2: Tensor, y2: Tensor, c: float, euclidean: bool = False) -> Tensor:
    r"""Distances :math:`d_c(x, y)` of chosen pairs from their inner products ``dot`` and squared norms
    ``x2``, ``y2`` (all of one shape, e.g. ``[M, k]`` gathered off a Gram matrix): the formula of
    :func:`pairwise_distance` (:class:`_PairDistance`, elementwise form), so every elementwise step, forward
    and backward, costs the ``k`` chosen pairs instead of all ``V^2``. Euclidean: :math:`2\|x - y\|`."""
    if not dot.shape == x2.shape == y2.shape:
        raise ValueError(
            f"dot, x2 and y2 must share one shape; got {tuple(dot.shape)}, {tuple(x2.shape)}, {tuple(y2.shape)}"
        )
    return _PairDistance.apply(dot, x2, y2, 0.0 if euclidean else float(c))


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
    ``mobius_add`` (norm floored at ``MIN_NORM``, ``tanh`` input at 15, denominator floored), and the
    ball's, :func:`~hgutils.manifolds.poincare.project`: a point beyond :math:`(1 - \varepsilon)/\sqrt c`
    (where ``tanh`` rounds to 1 the sum lands on the sphere at infinity, and every distance to it, conformal
    factor and gradient overflows) is pulled back onto that radius, a factor folded into ``A`` and ``B``."""
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
    r_max = (1.0 - BALL_EPS.get(y.dtype, BALL_EPS[torch.float32])) / sc
    f = (r_max / p2.sqrt().clamp_min(MIN_NORM)).clamp_max(1.0)  # project's factor
    return torch.addcmul((B * f) * beta, A * f, y), p2 * (f * f)


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
