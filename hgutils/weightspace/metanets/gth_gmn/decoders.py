r"""GTH-GMN's decoders and reconstruction losses (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, §method).

Node coordinates ``z [M, V, d]`` on the ball (``M`` graphs: networks x snapshots), their tangent
features :math:`X = \log_0 z` and the trained weights ``w [M, P]`` of the ``P`` parameter pairs
(:class:`~.links.PairSets`):

- **signed-weight head** (:class:`SignedWeightHead`): :math:`s_u = f_\sigma(X_u)`, :math:`k_u = f_\kappa(X_u)`,
  :math:`\alpha_{uv} = \alpha_0 + \delta_\alpha\tanh(\mathrm{MLP}([X_u, X_v, e_{uv}]))`,
  :math:`\log|\hat w_{uv}| = \log\nu + s_u + s_v - (1 - \alpha_{uv}/d)(k_u + k_v) - \alpha_{uv}\log d_c(z_u, z_v)`,
  sign logit :math:`\beta\,\lambda_{z_u}\langle\log_{z_u} z_v, \xi_u\rangle` (:math:`\xi_u = f_\xi(X_u)`;
  the conformal factor makes the log map's length the geodesic distance),
  :math:`\hat w = |\hat w|\tanh(\text{sign logit})`;
- **Fermi-Dirac link decoder** (:class:`FermiDirac`): :math:`\psi = 1/(1 + e^{(d_c - R)/T})`,
  learnable ``R, T``, scored by the balanced BCE (:func:`~.links.balanced_bce`) of the reading's
  edges against its negatives (:mod:`.links`);
- **losses**: link BCE, log-magnitude MSE and sign BCE over the nonzero weights, the slope prior
  :math:`(\alpha - \alpha_0)^2`, the ranking hinge "stronger edge => shorter distance" (margin
  annealed from 0), temporal smoothness :math:`d_c(z^{(t)}_u, z^{(t-1)}_u)^2`.
  :func:`~.stage1.sampled_terms` (stage 1: sampled pairs, negatives with a same-layer curriculum) and
  :func:`full_terms` (stage 2 and the metrics: every pair) compute them;
  :func:`reconstruction_metrics` reports them against the baselines a decoder must beat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.manifolds import poincare as pm
from hgutils.manifolds.numerics import MIN_NORM
from hgutils.nn.attention_kernels import distance_from_inner
from hgutils.weightspace.metanets.gth_gmn.links import (
    PairSets,
    auc_by_negative_kind,
    balanced_bce,
    edge_labels,
)


@dataclass(frozen=True)
class Geometry:
    """Distances and maps on the ball of curvature ``-c`` (or, ``euclidean``, their ``c -> 0`` limits)."""

    c: float
    euclidean: bool = False

    def dist(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (x - y).norm(dim=-1) if self.euclidean else pm.dist(x, y, self.c)

    def tangent(self, z: Tensor) -> Tensor:
        return z if self.euclidean else pm.logmap0(z, self.c)

    def dist_from_parts(self, sq: Tensor, x2: Tensor, y2: Tensor) -> Tensor:
        r""":math:`d_c(x, y)` from :math:`\|x - y\|^2` and the squared norms (elementwise):
        :math:`\frac{1}{\sqrt c}\operatorname{arcosh}(1 + t)`, :math:`t = \frac{2c\|x - y\|^2}{(1 - c\|x\|^2)(1 -
        c\|y\|^2)}`, as :math:`\log(1 + t + \sqrt{t(t + 2)})` (accurate for small ``t``). Euclidean:
        :math:`2\|x - y\|`."""
        sq = sq.clamp_min(MIN_NORM)
        if self.euclidean:
            return 2.0 * sq.sqrt()
        c = self.c
        t = 2.0 * c * sq / ((1 - c * x2) * (1 - c * y2)).clamp_min(MIN_NORM)
        return torch.log1p(t + torch.sqrt(t * (t + 2.0))) / c**0.5

    def consecutive_dist(self, z: Tensor) -> Tensor:
        """Distances between consecutive snapshots' coordinates: ``z [B, T, V, d]`` -> ``[B, T - 1, V]``
        (:meth:`dist_from_parts` of the differences and the per-node squared norms)."""
        n2 = (z * z).sum(-1)
        diff = z[:, 1:] - z[:, :-1]
        return self.dist_from_parts((diff * diff).sum(-1), n2[:, 1:], n2[:, :-1])

    def scaled_log(self, x: Tensor, y: Tensor, d: Tensor) -> Tensor:
        r""":math:`\lambda_x \log_x y` given :math:`d = d_c(x, y)`: the log map scaled by the conformal factor
        is :math:`d\,\hat w` with :math:`\hat w` the direction of :math:`(-x)\oplus_c y` (since
        :math:`\|\log_x y\| = d/\lambda_x`), so no artanh or conformal factor is formed. Euclidean:
        :math:`y - x`."""
        if self.euclidean:
            return y - x
        w = pm.mobius_add(-x, y, self.c)
        return w * (d / w.norm(dim=-1).clamp_min(MIN_NORM)).unsqueeze(-1)


def gram(z: Tensor) -> tuple[Tensor, Tensor]:
    r"""Inner products of every node pair and squared norms of graphs ``z [M, V, d]``:
    ``(G [M, V * V], n2 [M, V])``, :math:`G_{uV+v} = \langle z_u, z_v\rangle` (one batched matrix product).
    Chosen pairs then cost one scalar gather each (:func:`gathered_inner`) instead of two gathered
    coordinate vectors."""
    M, V, _ = z.shape
    return torch.bmm(z, z.transpose(1, 2)).reshape(M, V * V), (z * z).sum(-1)


def gathered_inner(G: Tensor, n2: Tensor, u: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r""":math:`(\langle z_u, z_v\rangle, \|z_u\|^2, \|z_v\|^2)`, each ``[M, k]``, of the pairs ``u -> v``
    (``[k]``, shared by the graphs) from :func:`gram`'s ``(G, n2)``."""
    V = n2.shape[-1]
    return G.index_select(1, u * V + v), n2.index_select(1, u), n2.index_select(1, v)


def pair_distances(G: Tensor, n2: Tensor, u: Tensor, v: Tensor, geom: Geometry) -> Tensor:
    """Distances ``[M, k]`` of the pairs ``u -> v`` (``[k]``) from :func:`gram`'s ``(G, n2)``: the ``V x V``
    work is the one product that formed ``G``; the elementwise work covers the ``k`` pairs only
    (:func:`hgutils.nn.attention_kernels.distance_from_inner`)."""
    return distance_from_inner(*gathered_inner(G, n2, u, v), geom.c, geom.euclidean)


def pair_parts(z: Tensor, u: Tensor, v: Tensor, geom: Geometry) -> tuple[Tensor, ...]:
    r"""Distances and inner products of chosen node pairs ``u -> v`` (``[M, k]`` node indices) of graphs
    ``z [M, V, d]``: ``(d, <x, y>, |x|^2, |y|^2, x, y)`` with :math:`x = z_u`, :math:`y = z_v`, the
    coordinate vectors gathered per pair (``[M, k, d]``). The distance is :meth:`Geometry.dist_from_parts`
    of :math:`\|x - y\|^2` formed from the difference (no cancellation for close pairs); only the ``k``
    chosen pairs pay (:func:`pair_distances` reads distances of pairs shared by every graph off one Gram product)."""
    x, y = take(z, u), take(z, v)
    n2 = (z * z).sum(-1)
    x2, y2 = n2.gather(1, u), n2.gather(1, v)
    diff = x - y
    sq = (diff * diff).sum(-1)
    return geom.dist_from_parts(sq, x2, y2), 0.5 * (x2 + y2 - sq), x2, y2, x, y


def take(z: Tensor, idx: Tensor) -> Tensor:
    """Node gather: ``z [M, V, d]`` with ``idx [k]`` (shared) or ``[M, k]`` (per graph) -> ``[M, k, d]``
    (per graph: whole rows of the flattened ``[M V, d]``, a row copy per pair instead of an elementwise gather)."""
    if idx.dim() == 1:
        return z.index_select(1, idx)
    M, V, d = z.shape
    rows = (torch.arange(M, device=idx.device).view(M, 1) * V + idx).reshape(-1)
    return z.reshape(M * V, d).index_select(0, rows).view(M, idx.shape[1], d)


class SignedWeightHead(nn.Module):
    """The signed-weight head (module docstring): per-pair log-magnitude and sign logit."""

    def __init__(self, dim: int, edge_attr_dim: int, alpha0: float = 1.0, delta_alpha: float = 0.5) -> None:
        super().__init__()
        self.dim, self.alpha0, self.delta_alpha = dim, float(alpha0), float(delta_alpha)
        self.f_sigma = nn.Linear(dim, 1)
        self.f_kappa = nn.Linear(dim, 1)
        self.f_xi = nn.Linear(dim, dim)
        self.slope_mlp = nn.Sequential(nn.Linear(2 * dim + edge_attr_dim, dim), nn.SiLU(), nn.Linear(dim, 1))
        self.log_nu = nn.Parameter(torch.zeros(()))
        self.beta = nn.Parameter(torch.ones(()))

    def statics(self, X: Tensor, src: Tensor, dst: Tensor, attr: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r"""The parts that depend on the node features only: ``(base [M, k], alpha [M, k], xi [M, V, d])``,
        :math:`\mathrm{base} = \log\nu + s_u + s_v - (1 - \alpha_{uv}/d)(k_u + k_v)` and the nodes'
        :math:`\xi = f_\xi(X)`; computed once when the coordinates are refined with ``X`` fixed.
        ``src, dst`` are ``[k]`` (shared) or ``[M, k]``.

        The slope MLP's first layer on :math:`[X_u, X_v, a_{uv}]` splits by blocks,
        :math:`W[X_u; X_v; a] + b = (W_u X)_u + (W_v X)_v + W_a a + b`, so it is applied per node
        (``V`` rows) and gathered per pair instead of per pair on a ``2d + F_a`` concatenation."""
        s = self.f_sigma(X).squeeze(-1)
        kap = self.f_kappa(X).squeeze(-1)
        su, sv = (s.gather(1, i) if i.dim() == 2 else s[:, i] for i in (src, dst))
        ku, kv = (kap.gather(1, i) if i.dim() == 2 else kap[:, i] for i in (src, dst))
        a = attr.to(X.dtype)
        a = a.expand(X.shape[0], -1, -1) if a.dim() == 2 else a
        first, act, last = self.slope_mlp
        W, d = first.weight, self.dim
        h = take(X @ W[:, :d].T, src) + take(X @ W[:, d : 2 * d].T, dst) + F.linear(a, W[:, 2 * d :], first.bias)
        alpha = self.alpha0 + self.delta_alpha * torch.tanh(last(act(h)).squeeze(-1))
        base = self.log_nu + su + sv - (1 - alpha / self.dim) * (ku + kv)
        return base, alpha, self.f_xi(X)

    def at(
        self,
        z: Tensor,
        src: Tensor,
        dst: Tensor,
        statics: tuple[Tensor, Tensor, Tensor],
        geom: Geometry,
        d: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(log|w_hat|, sign logit, alpha, distance)`` of pairs ``src -> dst`` at coordinates ``z``
        (``d``: their distances, if already computed), from gathered coordinate vectors: the per-pair
        form that :meth:`at_all_pairs` (which the losses use) is tested against."""
        base, alpha, xi = statics
        zu, zv = take(z, src), take(z, dst)
        d = geom.dist(zu, zv) if d is None else d
        log_mag = base - alpha * torch.log(d.clamp_min(MIN_NORM))
        sign_logit = self.beta * (geom.scaled_log(zu, zv, d) * take(xi, src)).sum(-1)
        return log_mag, sign_logit, alpha, d

    def at_all_pairs(
        self,
        z: Tensor,
        src: Tensor,
        dst: Tensor,
        statics: tuple[Tensor, Tensor, Tensor],
        geom: Geometry,
        d: Tensor,
        inner: tuple[Tensor, Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, Tensor]:
        r"""``(log|w_hat|, sign logit)`` of the shared pairs ``src -> dst`` ``[k]`` from node-level quantities
        and ``V x V`` inner-product matrices, without gathering a coordinate vector per pair.

        ``d [M, k]``: the pairs' distances (:func:`pair_distances`); ``inner``: their
        :func:`gathered_inner` if already formed. With :math:`x = z_u`,
        :math:`y = z_v`,
        :math:`(-x)\oplus_c y = \frac{-(1 - 2c\langle x,y\rangle + c\|y\|^2)\,x + (1 - c\|x\|^2)\,y}
        {1 - 2c\langle x,y\rangle + c^2\|x\|^2\|y\|^2}` and :math:`\|(-x)\oplus_c y\| =
        \tanh(\sqrt c\,d/2)/\sqrt c`, the sign logit :math:`\beta\lambda_x\langle\log_x y, \xi_u\rangle =
        \beta d\,\langle (-x)\oplus_c y, \xi_u\rangle / \|(-x)\oplus_c y\|` needs only
        :math:`\langle x, y\rangle`, :math:`\langle x, \xi_u\rangle` and :math:`\langle y, \xi_u\rangle`
        (two batched matrix products). Euclidean: :math:`\beta(\langle y,\xi_u\rangle - \langle x,\xi_u\rangle)`.
        """
        xi = statics[2]
        M, V, _ = z.shape
        flat = src * V + dst
        y_xi = torch.bmm(xi, z.transpose(1, 2)).reshape(M, V * V).index_select(1, flat)  # <z_v, xi_u>
        x_xi = (xi * z).sum(-1).index_select(1, src)  # <z_u, xi_u>
        xy, x2, y2 = gathered_inner(*gram(z), src, dst) if inner is None else inner
        return self.from_parts(statics, geom, d, xy, x2, y2, x_xi, y_xi)

    def from_parts(
        self,
        statics: tuple[Tensor, Tensor, Tensor],
        geom: Geometry,
        d: Tensor,
        xy: Tensor,
        x2: Tensor,
        y2: Tensor,
        x_xi: Tensor,
        y_xi: Tensor,
    ) -> tuple[Tensor, Tensor]:
        r"""``(log|w_hat|, sign logit)`` of pairs from their distances ``d`` and the inner products
        :math:`\langle x, y\rangle`, :math:`\|x\|^2`, :math:`\|y\|^2`, :math:`\langle x, \xi_u\rangle`,
        :math:`\langle y, \xi_u\rangle` (all ``[M, k]``; the formulas of :meth:`at_all_pairs`)."""
        base, alpha, _ = statics
        log_mag = base - alpha * torch.log(d.clamp_min(MIN_NORM))
        if geom.euclidean:
            return log_mag, self.beta * (y_xi - x_xi)
        c = geom.c
        a = 1 - 2 * c * xy + c * y2
        den = (1 - 2 * c * xy + c * c * x2 * y2).clamp_min(MIN_NORM)
        w_xi = (-a * x_xi + (1 - c * x2) * y_xi) / den
        w_norm = (torch.tanh(0.5 * c**0.5 * d) / c**0.5).clamp_min(MIN_NORM)
        return log_mag, self.beta * d * w_xi / w_norm


class FermiDirac(nn.Module):
    r"""Fermi-Dirac link decoder :math:`\psi(d) = 1/(1 + e^{(d - R)/T})` with learnable ``R`` and ``T > 0``."""

    def __init__(self, r: float = 2.0, t: float = 1.0) -> None:
        super().__init__()
        self.r = nn.Parameter(torch.tensor(float(r)))
        self.t_raw = nn.Parameter(torch.tensor(float(t)).expm1().log())  # softplus^-1

    @property
    def temperature(self) -> Tensor:
        return F.softplus(self.t_raw) + 1e-3

    def logit(self, d: Tensor) -> Tensor:
        r""":math:`(R - d)/T` (``sigmoid`` of it is :math:`\psi`)."""
        return (self.r - d) / self.temperature

    def probability(self, d: Tensor) -> Tensor:
        return pm.fermi_dirac(d, self.r, self.temperature)


def parameter_values(edge_weight: Tensor, P: int) -> Tensor:
    """The trained weights ``[..., P]`` of symmetrised edge weights ``[..., 2P]`` (``2 x`` the forward half;
    exact: scaling by 2 is exact in binary floating point)."""
    return 2.0 * edge_weight[..., :P]


@dataclass(frozen=True)
class Reconstruction:
    """What the decoders reconstruct and with what: the parameter pairs of the graphs (:class:`~.links.PairSets`)
    with their attributes ``attr [P, Fa]``, the two decoders, the geometry of the ball and the link
    reading (``reading``, ``q``: :func:`~.links.edge_labels`). One bundle for the loss, the metrics and
    the stage-2 refinement, which all score the same decoder on the same pairs."""

    pairs: PairSets
    attr: Tensor
    head: SignedWeightHead
    fd: FermiDirac
    geom: Geometry
    reading: str
    q: float

    def statics(self, X: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """:meth:`SignedWeightHead.statics` of node features ``X`` over every parameter pair."""
        return self.head.statics(X, self.pairs.src, self.pairs.dst, self.attr)

    def labels(self, w: Tensor) -> Tensor:
        """The reading's edge labels of the parameter pairs of weights ``w`` (:func:`~.links.edge_labels`)."""
        return edge_labels(w, self.pairs, self.reading, self.q)


def mag_sign(log_mag: Tensor, sign_logit: Tensor, w: Tensor) -> dict[str, Tensor]:
    r"""Magnitude and sign terms over the nonzero weights ``w``: the mean of
    :math:`(\log|\hat w| - \log|w|)^2` and of the BCE of the sign logit against :math:`w > 0`."""
    nz = (w != 0).to(log_mag.dtype)
    n = nz.sum().clamp_min(1.0)
    mag = (((log_mag - torch.log(w.abs().clamp_min(MIN_NORM))) ** 2) * nz).sum() / n
    sign = (F.binary_cross_entropy_with_logits(sign_logit, (w > 0).to(log_mag.dtype), reduction="none") * nz).sum() / n
    return {"mag": mag, "sign": sign}


def full_terms(
    z: Tensor,
    X: Tensor,
    w: Tensor,
    rec: Reconstruction,
    statics: tuple[Tensor, Tensor, Tensor] | None = None,
    labels: Tensor | None = None,
) -> dict[str, Tensor]:
    """Deterministic reconstruction terms of graphs ``z [M, V, d]`` over *every* pair: the link BCE
    of every edge of the reading against every one of its negatives (balanced), and the magnitude and
    sign terms over every nonzero weight -- the stage-2 objective and the metrics' basis.
    ``statics``/``labels``: :meth:`SignedWeightHead.statics` and :func:`~.links.edge_labels`, if
    already computed."""
    pairs, fd = rec.pairs, rec.fd
    statics = statics if statics is not None else rec.statics(X)
    lab = labels if labels is not None else rec.labels(w)
    extra = pairs.negatives(rec.reading)
    P = pairs.P
    # the parameter pairs and the negatives gathered at once, their distances in one elementwise pass
    inner = gathered_inner(*gram(z), torch.cat([pairs.src, extra[0]]), torch.cat([pairs.dst, extra[1]]))
    d, d_neg = distance_from_inner(*inner, rec.geom.c, rec.geom.euclidean).split([P, extra.shape[1]], 1)
    log_mag, sign_logit = rec.head.at_all_pairs(
        z, pairs.src, pairs.dst, statics, rec.geom, d, tuple(t[:, :P] for t in inner)
    )
    lp = fd.logit(d)
    link = balanced_bce(
        lp, lab, torch.cat([lp, fd.logit(d_neg)], 1), torch.cat([~lab, torch.ones_like(d_neg, dtype=torch.bool)], 1)
    )
    return {"link": link, **mag_sign(log_mag, sign_logit, w)}


@torch.no_grad()
def reconstruction_metrics(z: Tensor, X: Tensor, w: Tensor, rec: Reconstruction) -> dict[str, float]:
    """How well coordinates ``z [B, T, V, d]`` reconstruct the weights ``w [B, T, P]``, beside the
    baselines a decoder must beat (over every pair of every graph):

    - ``link_bce`` (uninformative decoder: :math:`2\\ln 2`), ``link_auc`` ("closer = edge"; 0.5 =
      uninformative) and ``link_auc_<kind>`` against each kind of negative (:mod:`.links`);
    - ``sign_acc`` vs ``sign_majority`` (the per-layer-block majority sign at each snapshot, pooled
      over the networks evaluated);
    - ``mag_r2`` (1 - MSE / variance of :math:`\\log|w|`) vs ``mag_r2_block_mean`` (predicting each
      weight's log-magnitude by its layer block's mean at that snapshot, pooled over the networks).
    """
    B, T, V, dim = z.shape
    zf, Xf, wf = z.reshape(B * T, V, dim), X.reshape(B * T, V, dim), w.reshape(B * T, -1)
    pairs = rec.pairs
    lab = rec.labels(wf)
    statics = rec.statics(Xf)
    terms = full_terms(zf, Xf, wf, rec, statics, lab)
    parts = gram(zf)
    inner = gathered_inner(*parts, pairs.src, pairs.dst)
    d = distance_from_inner(*inner, rec.geom.c, rec.geom.euclidean)
    log_mag, sign_logit = rec.head.at_all_pairs(zf, pairs.src, pairs.dst, statics, rec.geom, d, inner)
    d_same, d_other = pair_distances(*parts, *pairs.same, rec.geom), pair_distances(*parts, *pairs.other, rec.geom)
    aucs = auc_by_negative_kind(d, lab, d_same, d_other, rec.reading)
    nz = wf != 0
    sign_acc = float(((sign_logit > 0) == (wf > 0))[nz].double().mean())
    lw = torch.log(wf.abs().clamp_min(MIN_NORM)).double()
    var = float(lw[nz].var(unbiased=False).clamp_min(1e-30))
    mse = float(((log_mag.double() - lw) ** 2)[nz].mean())
    # baselines from the per-(block, snapshot) statistics pooled over the B networks
    wb = w.reshape(B, T, -1)
    lwb = lw.reshape(B, T, -1)
    nzb = nz.reshape(B, T, -1)
    block_mean = torch.zeros_like(lwb)
    majority = torch.zeros_like(lwb, dtype=torch.bool)
    for start, stop in pairs.bounds:
        sl = slice(start, stop)
        m = nzb[:, :, sl].double()
        mean = (lwb[:, :, sl] * m).sum((0, 2)) / m.sum((0, 2)).clamp_min(1.0)  # [T]
        block_mean[:, :, sl] = mean[None, :, None]
        share_pos = ((wb[:, :, sl] > 0).double() * m).sum((0, 2)) / m.sum((0, 2)).clamp_min(1.0)
        majority[:, :, sl] = (share_pos >= 0.5)[None, :, None]
    mse_base = float(((block_mean - lwb) ** 2)[nzb].mean())
    sign_major = float((majority == (wb > 0))[nzb].double().mean())
    out = {
        "link_bce": float(terms["link"]),
        "link_auc": aucs["all"],
        **{f"link_auc_{k}": v for k, v in aucs.items() if k != "all"},
        "sign_acc": sign_acc,
        "sign_majority": sign_major,
        "mag_r2": 1 - mse / var,
        "mag_r2_block_mean": 1 - mse_base / var,
    }
    return {k: (float(v) if not (isinstance(v, float) and math.isnan(v)) else math.nan) for k, v in out.items()}
