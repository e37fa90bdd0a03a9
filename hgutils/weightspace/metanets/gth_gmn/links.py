r"""What the Fermi-Dirac link decoder reconstructs: two readings of "edge" on a dense MLP graph.

An MLP's parameter graph (:class:`hgutils.weightspace.graphs.TemporalParamGraph`) links every
neuron of layer ``l`` to every neuron of layer ``l + 1``, and each bias node to the layer it feeds.
GTH-GMN's decoder (GTH-GMN paper, ICLR 2026, OpenReview Xq64xkQCak, §method) scores a node pair by
its hyperbolic distance, :math:`\psi(u, v) = 1/(1 + e^{(d_c(z_u, z_v) - R)/T})`. Two readings of what
it should call an edge (``GTHGMNConfig.link_reading``):

- ``"literal"`` -- every nonzero weight is an edge; the negatives are every non-adjacent pair
  (same-layer pairs, and pairs of layers that are not adjacent). The edges then form complete
  bipartite blocks between adjacent layers, which no distance threshold can separate from the
  same-layer pairs: with node positions optimised freely on the ball the link AUC of a trained
  2-32-32-1 SIREN stays near 0.55 (:func:`link_ceiling` measures it).
- ``"strong"`` -- the network-science reading "distance falls with connection strength": an edge is
  one of the top-``q`` pairs by :math:`|w|` *within its layer block* (its parameter tensor
  :math:`W_l` or :math:`b_l`); the negatives are the block's weak pairs and the same-layer pairs.
  This graph is sparse and its ceiling is high (0.87 in 2-d, ~1 in 16-d for the SIREN above).

:class:`PairSets` holds the fixed node-pair sets of one topology; :func:`edge_labels` the per-graph
edge labels of a reading; :func:`masked_auc` the link AUC against each kind of negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import geoopt
import torch
import torch.nn.functional as F
from torch import Tensor

from hgutils.manifolds import poincare as pm
from hgutils.weightspace.metanets.gth_gmn.config import LINK_READINGS

#: kinds of negative pair a link AUC is reported against
NEGATIVE_KINDS: tuple[str, ...] = ("weak", "same_layer", "other")


@dataclass(frozen=True)
class PairSets:
    """The node pairs of one MLP topology (shared by every network and snapshot).

    ``src, dst [P]``: the parameter pairs in parameter order (``W_0`` row-major, ``b_0``, ``W_1``,
    ...; the forward half of ``edge_index``); ``block [P]``: their parameter tensor (``2 l`` for
    :math:`W_l`, ``2 l + 1`` for :math:`b_l`), ``bounds``: each block's ``(start, stop)`` range;
    ``same``: ``[2, S]`` pairs ``u < v`` of one layer label that are not parameter pairs;
    ``other``: ``[2, O]`` every remaining pair ``u < v`` (nodes of layers that are not adjacent).
    """

    src: Tensor
    dst: Tensor
    block: Tensor
    bounds: tuple[tuple[int, int], ...]
    same: Tensor
    other: Tensor
    n_nodes: int

    @property
    def P(self) -> int:
        return int(self.src.shape[0])

    @classmethod
    def from_graph(cls, g: Any) -> PairSets:
        """Pair sets of a :class:`~hgutils.weightspace.graphs.TemporalParamGraph` (or a batch view)."""
        P = g.edge_index.shape[1] // 2
        src, dst = g.edge_index[0, :P], g.edge_index[1, :P]
        layer = g.node_layer
        is_bias = g.edge_attr[:P, 0] > 0.5
        block = 2 * (layer[dst] - 1) + is_bias.long()
        change = torch.nonzero(block[1:] != block[:-1]).flatten() + 1
        starts = [0, *change.tolist()]
        stops = [*change.tolist(), P]
        if len(set(block[starts].tolist())) != len(starts):
            raise ValueError("parameter pairs must be grouped by parameter tensor (parameter order)")
        V = layer.shape[0]
        adj = torch.zeros(V, V, dtype=torch.bool, device=src.device)
        adj[src, dst] = True
        adj = adj | adj.T
        iu = torch.triu_indices(V, V, 1, device=src.device)
        free = ~adj[iu[0], iu[1]]
        same_layer = layer[iu[0]] == layer[iu[1]]
        return cls(
            src,
            dst,
            block,
            tuple(zip(starts, stops)),
            iu[:, free & same_layer],
            iu[:, free & ~same_layer],
            V,
        )

    def to(self, device: torch.device | str) -> PairSets:
        return PairSets(
            self.src.to(device),
            self.dst.to(device),
            self.block.to(device),
            self.bounds,
            self.same.to(device),
            self.other.to(device),
            self.n_nodes,
        )

    def negatives(self, reading: str) -> Tensor:
        """The fixed non-parameter negative pairs ``[2, N]`` of a reading (strong: same-layer pairs;
        literal: every non-adjacent pair)."""
        check_reading(reading)
        return self.same if reading == "strong" else torch.cat([self.same, self.other], 1)


def check_reading(reading: str) -> str:
    if reading not in LINK_READINGS:
        raise ValueError(f"link_reading must be one of {LINK_READINGS}; got {reading!r}")
    return reading


def edge_labels(w: Tensor, pairs: PairSets, reading: str, q: float = 0.2) -> Tensor:
    """Which parameter pairs are edges: ``w [M, P]`` parameter values -> bool ``[M, P]``.

    ``"literal"``: ``w != 0``. ``"strong"``: the ``max(1, round(q * n_b))`` largest :math:`|w|` of
    each block ``b`` of ``n_b`` parameters (ties broken by position; trained float weights have none).
    """
    check_reading(reading)
    if w.dim() != 2 or w.shape[1] != pairs.P:
        raise ValueError(f"w must be [M, P={pairs.P}] parameter values; got {tuple(w.shape)}")
    if reading == "literal":
        return w != 0
    if not 0.0 < q < 1.0:
        raise ValueError(f"link_q must be in (0, 1); got {q}")
    out = torch.zeros_like(w, dtype=torch.bool)
    a = w.abs()
    for start, stop in pairs.bounds:
        k = max(1, round(q * (stop - start)))
        idx = a[:, start:stop].topk(k, dim=1).indices + start
        out.scatter_(1, idx, True)
    return out


def edge_sets(w: Tensor, pairs: PairSets, reading: str, q: float = 0.2) -> tuple[Tensor, Tensor]:
    """Edges of a reading as indices into the pair table ``[parameter pairs, then
    pairs.negatives(reading)]``, and which table entries are negatives: ``(edges [M, K], is_negative
    [M, P + N])``, ``K`` the same for every graph.

    ``"strong"``: per block the top-``q`` pairs by :math:`|w|` are edges; the rest of the block and
    the same-layer pairs are negatives. ``"literal"``: every parameter pair is an edge (a trained float
    weight is never exactly 0) and every non-adjacent pair a negative. Stage 1 samples edges from
    ``edges`` and negatives uniformly from the table, keeping those marked negative.
    """
    check_reading(reading)
    M, P = w.shape
    extra = pairs.negatives(reading).shape[1]
    neg = torch.ones(M, P + extra, dtype=torch.bool, device=w.device)
    if reading == "literal":
        neg[:, :P] = False
        return torch.arange(P, device=w.device).expand(M, P), neg
    a = w.abs()
    pos = []
    for start, stop in pairs.bounds:
        k = max(1, round(q * (stop - start)))
        pos.append(a[:, start:stop].topk(k, dim=1).indices + start)
    edges = torch.cat(pos, 1)
    neg.scatter_(1, edges, False)
    return edges, neg


def balanced_bce(logit_pos: Tensor, mask_pos: Tensor, logit_neg: Tensor, mask_neg: Tensor) -> Tensor:
    r"""Link BCE with both classes weighted equally:
    :math:`-\overline{\log\sigma(\ell^+)} - \overline{\log\sigma(-\ell^-)}` (means over the masked
    entries of all graphs). An uninformative decoder (:math:`\sigma = 1/2`) scores :math:`2\ln 2`."""
    mp, mn = mask_pos.to(logit_pos.dtype), mask_neg.to(logit_neg.dtype)
    lp = -(F.logsigmoid(logit_pos) * mp).sum() / mp.sum().clamp_min(1.0)
    ln = -(F.logsigmoid(-logit_neg) * mn).sum() / mn.sum().clamp_min(1.0)
    return lp + ln


def masked_auc(score: Tensor, label: Tensor) -> Tensor:
    """Per-graph ROC AUC of ``score [M, N]`` for labels ``[M, N]`` in {1 (positive), 0 (negative),
    -1 (ignored)}: the Mann-Whitney statistic from ranks (ties broken arbitrarily). ``nan`` for a
    graph without positives or negatives."""
    s = score.double().masked_fill(label < 0, float("-inf"))
    ranks = s.argsort(1).argsort(1).double() + 1
    n_ign = (label < 0).sum(1).double()
    pos = label == 1
    n_pos, n_neg = pos.sum(1).double(), (label == 0).sum(1).double()
    r = ((ranks - n_ign[:, None]) * pos).sum(1)
    auc = (r - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return torch.where((n_pos > 0) & (n_neg > 0), auc, torch.full_like(auc, math.nan))


def auc_by_negative_kind(
    d_param: Tensor, is_edge: Tensor, d_same: Tensor, d_other: Tensor | None, reading: str
) -> dict[str, float]:
    """Link AUC of "closer = edge" against every negative and against each kind (:data:`NEGATIVE_KINDS`).

    ``d_param [M, P]`` distances of the parameter pairs with edge labels ``is_edge``; ``d_same
    [M, S]`` of the same-layer pairs; ``d_other [M, O]`` of the other non-adjacent pairs (literal
    reading). "weak" is the parameter pairs that are not edges (the strong reading's weak pairs; for
    the literal reading the zero weights, usually none).
    """
    lab_param = is_edge.long()  # 1 edge, 0 weak / zero
    parts = {"weak": (d_param, lab_param), "same_layer": (d_same, torch.zeros_like(d_same, dtype=torch.long))}
    if reading == "literal" and d_other is not None and d_other.shape[1] > 0:
        parts["other"] = (d_other, torch.zeros_like(d_other, dtype=torch.long))
    out = {}

    def auc_of(kinds: tuple[str, ...]) -> float:
        scores, labels = [-d_param], [lab_param.masked_fill(lab_param == 0, -1)]
        for k in kinds:
            if k == "weak":
                labels[0] = lab_param
                continue
            d, lab = parts[k]
            scores.append(-d)
            labels.append(lab)
        a = masked_auc(torch.cat(scores, 1), torch.cat(labels, 1))
        a = a[~torch.isnan(a)]
        return float(a.mean()) if a.numel() else math.nan

    out["all"] = auc_of(tuple(parts))
    for k in parts:
        out[k] = auc_of((k,))
    return out


def link_ceiling(
    w: Tensor,
    pairs: PairSets,
    reading: str,
    dim: int = 16,
    c: float = 1.0,
    q: float = 0.2,
    steps: int = 400,
    lr: float = 5e-2,
    seed: int = 0,
) -> dict[str, float]:
    """The best link AUC a distance-threshold decoder can reach on one graph: node positions free on
    the ball (no encoder), optimised with geoopt's ``RiemannianAdam`` together with the decoder's
    ``R`` and ``T`` against the balanced link BCE of the reading, for ``steps`` steps.

    ``w [P]``: one graph's parameter values. Returns the AUC against every negative and against each
    kind (:func:`auc_by_negative_kind`) and the final BCE: the ceiling of any criterion on the link
    term (an encoder's positions are a constrained special case of free ones).
    """

    check_reading(reading)
    g = torch.Generator().manual_seed(seed)
    w = w.reshape(1, -1).to(torch.float64)
    lab = edge_labels(w, pairs, reading, q)
    neg = pairs.negatives(reading)
    ball = geoopt.PoincareBall(c=c)
    z = geoopt.ManifoldParameter(
        pm.expmap0(0.5 * torch.randn(pairs.n_nodes, dim, generator=g, dtype=torch.float64), c), manifold=ball
    )
    r = torch.nn.Parameter(torch.tensor(2.0, dtype=torch.float64))
    t = torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
    opt = geoopt.optim.RiemannianAdam([z, r, t], lr=lr)

    def logits(u: Tensor, v: Tensor) -> Tensor:
        return (r - pm.dist(z[u], z[v], c)) / (F.softplus(t) + 1e-3)

    for _ in range(steps):
        opt.zero_grad()
        lp, ln = logits(pairs.src, pairs.dst)[None], logits(neg[0], neg[1])[None]
        loss = balanced_bce(
            lp, lab, torch.cat([lp, ln], 1), torch.cat([~lab, torch.ones_like(ln, dtype=torch.bool)], 1)
        )
        loss.backward()
        opt.step()
    with torch.no_grad():
        d_param = pm.dist(z[pairs.src], z[pairs.dst], c)[None]
        d_same = pm.dist(z[pairs.same[0]], z[pairs.same[1]], c)[None]
        d_other = pm.dist(z[pairs.other[0]], z[pairs.other[1]], c)[None]
        out = auc_by_negative_kind(d_param, lab, d_same, d_other, reading)
    out["bce"] = float(loss.detach())
    return out
