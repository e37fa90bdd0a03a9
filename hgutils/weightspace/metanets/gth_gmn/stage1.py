r"""GTH-GMN's stage-1 reconstruction terms on sampled pairs (GTH-GMN paper, ICLR 2026, §method).

One step draws its pairs (:func:`draw_pairs`, random, eager) and then scores them
(:func:`pair_terms`, a pure function of tensors, compiled with ``torch.compile`` when
``GTHGMNConfig.compile`` is set); :func:`sampled_terms` does both.

Link: ``cfg.aux_edges`` edges per graph of the reading (drawn with replacement) against
``neg_per_pos`` times as many draws of negatives, a share ``neg_hard_max * progress`` of them
same-layer pairs (the curriculum), the rest drawn uniformly from the pair table and kept when they
are negatives of the reading (:func:`~.links.edge_sets`). Its loss is the balanced BCE of the
Fermi-Dirac logits :math:`(R - d_c)/T`.

Magnitude, sign, slope and ranking on ``cfg.aux_edges`` parameter pairs drawn uniformly (one draw
shared by the batch): :math:`(\log|\hat w| - \log|w|)^2` and the sign BCE over the nonzero weights
(:func:`~.decoders.mag_sign`), the slope prior :math:`(\alpha - \alpha_0)^2`, and the ranking hinge
:math:`\mathrm{relu}(m\,p + y\,(d_e - d_{\pi(e)}))|y|`, :math:`y = \mathrm{sign}(|w_e| - |w_{\pi(e)}|)`
against a random partner :math:`\pi(e)`, margin :math:`m` annealed with the progress :math:`p`.
Distances and inner products of all drawn pairs come from their gathered coordinates
(:func:`~.decoders.pair_parts`), the sign logit in closed form (:meth:`~.decoders.SignedWeightHead.from_parts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from hgutils.nn.compiled import compiled
from hgutils.weightspace.metanets.gth_gmn.decoders import Reconstruction, mag_sign, pair_parts, take
from hgutils.weightspace.metanets.gth_gmn.links import balanced_bce, edge_sets

__all__ = ["PairDraws", "draw_pairs", "pair_terms", "sampled_terms"]


@dataclass(frozen=True)
class PairDraws:
    """One step's random pairs for ``M`` graphs of ``V`` nodes.

    ``u, v [M, n_pos + n_neg + n]``: source and destination nodes of the link positives, the link
    negatives and the ``n`` parameter pairs, in that order; ``neg_mask [M, n_neg]``: which negative
    draws count (a drawn edge of the reading does not); ``eid [n]``: the parameter pairs (indices into
    the pair table); ``perm [n]``: each one's ranking partner (a position in ``eid``)."""

    u: Tensor
    v: Tensor
    neg_mask: Tensor
    eid: Tensor
    perm: Tensor
    n_pos: int
    n_neg: int


def draw_pairs(
    w: Tensor,
    rec: Reconstruction,
    cfg: Any,
    progress: float,
    V: int,
    generator: torch.Generator | None = None,
    sets: tuple[Tensor, Tensor] | None = None,
) -> PairDraws:
    """The random pairs of one stage-1 step (module docstring) for weights ``w [M, P]``; ``sets``: the
    reading's :func:`~.links.edge_sets` of ``w``, if precomputed. Samples come from ``generator`` (CPU)."""
    M, dev = w.shape[0], w.device
    pairs = rec.pairs
    P = pairs.P
    prog = min(max(progress, 0.0), 1.0)
    extra = pairs.negatives(rec.reading)
    table = torch.cat([pairs.src * V + pairs.dst, extra[0] * V + extra[1]])
    edges, is_neg = sets if sets is not None else edge_sets(w, pairs, rec.reading, rec.q)
    n_pos = min(cfg.aux_edges, edges.shape[1])
    n_neg = max(1, int(round(cfg.neg_per_pos * n_pos)))
    n_hard = int(round(cfg.neg_hard_max * prog * n_neg)) if pairs.same.shape[1] else 0
    pos_flat = table[edges.gather(1, torch.randint(edges.shape[1], (M, n_pos), generator=generator).to(dev))]
    draw = torch.randint(table.shape[0], (M, n_neg - n_hard), generator=generator).to(dev)
    neg_mask = is_neg.gather(1, draw)
    neg_flat = table[draw]
    if n_hard:
        h = torch.randint(pairs.same.shape[1], (M, n_hard), generator=generator).to(dev)
        neg_flat = torch.cat([neg_flat, (pairs.same[0] * V + pairs.same[1])[h]], 1)
        neg_mask = torch.cat([neg_mask, torch.ones(M, n_hard, dtype=torch.bool, device=dev)], 1)
    n = min(cfg.aux_edges, P)
    eid = torch.randperm(P, generator=generator)[:n].to(dev)
    perm = torch.randperm(n, generator=generator).to(dev)
    flat = torch.cat([pos_flat, neg_flat], 1)
    u = torch.cat([torch.div(flat, V, rounding_mode="floor"), pairs.src[eid].expand(M, n)], 1)
    v = torch.cat([flat % V, pairs.dst[eid].expand(M, n)], 1)
    return PairDraws(u, v, neg_mask, eid, perm, n_pos, neg_flat.shape[1])


def pair_terms(
    z: Tensor,
    X: Tensor,
    w: Tensor,
    rec: Reconstruction,
    u: Tensor,
    v: Tensor,
    neg_mask: Tensor,
    eid: Tensor,
    perm: Tensor,
    n_pos: int,
    n_neg: int,
    alpha0: float,
    margin: Tensor,
) -> dict[str, Tensor]:
    """The link, magnitude, sign, slope and ranking terms (module docstring) of the drawn pairs
    (:class:`PairDraws`' fields) at coordinates ``z [M, V, d]`` with tangent features ``X``; ``margin``:
    the ranking margin at this step's progress (a 0-d tensor, so a compiled version serves every step)."""
    head, fd, geom = rec.head, rec.fd, rec.geom
    src, dst, we = rec.pairs.src[eid], rec.pairs.dst[eid], w[:, eid]
    n = eid.shape[0]
    dist, xy, x2, y2, x, y = pair_parts(z, u, v, geom)
    d_pos, d_neg, d = dist.split([n_pos, n_neg, n], 1)
    terms = {"link": balanced_bce(fd.logit(d_pos), torch.ones_like(d_pos, dtype=torch.bool), fd.logit(d_neg), neg_mask)}
    statics = head.statics(X, src, dst, rec.attr[eid])
    k = n_pos + n_neg  # the parameter pairs follow the link pairs
    xi_u = take(statics[2], src)
    x_xi, y_xi = (x[:, k:] * xi_u).sum(-1), (y[:, k:] * xi_u).sum(-1)
    log_mag, sign_logit = head.from_parts(statics, geom, d, xy[:, k:], x2[:, k:], y2[:, k:], x_xi, y_xi)
    terms.update(mag_sign(log_mag, sign_logit, we))
    terms["slope"] = ((statics[1] - alpha0) ** 2).mean()
    nz = (we != 0).to(z.dtype)
    sgn = torch.sign(we.abs() - we.abs()[:, perm]) * nz * nz[:, perm]
    hinge = F.relu(margin + sgn * (d - d[:, perm])) * sgn.abs()
    terms["rank"] = hinge.sum() / sgn.abs().sum().clamp_min(1.0)
    return terms


_pair_terms_compiled = compiled(pair_terms)


def sampled_terms(
    z: Tensor,
    X: Tensor,
    w: Tensor,
    rec: Reconstruction,
    cfg: Any,
    progress: float,
    z_prev: Tensor | None = None,
    generator: torch.Generator | None = None,
    sets: tuple[Tensor, Tensor] | None = None,
) -> dict[str, Tensor]:
    """Stage-1 reconstruction terms of one snapshot of ``M`` graphs ``z [M, V, d]`` (``cfg``: a
    ``GTHGMNConfig``; module docstring): :func:`draw_pairs` then :func:`pair_terms` (compiled when
    ``cfg.compile`` and gradients are on), plus the smoothness term :math:`d_c(z, z_{prev})^2` when
    ``z_prev`` is given."""
    draws = draw_pairs(w, rec, cfg, progress, z.shape[1], generator, sets)
    prog = min(max(progress, 0.0), 1.0)
    margin = torch.tensor(cfg.rank_margin * prog, dtype=z.dtype, device=z.device)
    use_compiled = getattr(cfg, "compile", False) and torch.is_grad_enabled()
    fn = _pair_terms_compiled if use_compiled else pair_terms
    d = draws
    terms = fn(z, X, w, rec, d.u, d.v, d.neg_mask, d.eid, d.perm, d.n_pos, d.n_neg, cfg.alpha0, margin)
    if z_prev is not None:
        terms["smooth"] = (rec.geom.dist(z, z_prev) ** 2).mean()
    return terms
