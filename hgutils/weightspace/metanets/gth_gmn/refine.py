r"""Stage 2 of GTH-GMN's training: Riemannian refinement of the node coordinates on the ball.

GTH-GMN paper (ICLR 2026, OpenReview Xq64xkQCak, §method): after the Euclidean stage, the node
coordinates of every snapshot are refined on the ball with RAMSGrad (geoopt's
``RiemannianAdam(amsgrad=True)``: conformal-factor-scaled gradients, moment estimates transported
along the update, exponential-map steps) against the reconstruction loss, the decoder and the node
features :math:`X = \log_0 z^{(0)}` held fixed.

The loss covers **every pair** of every graph (:func:`~.decoders.full_terms`: every edge of the link
reading against every one of its negatives, the magnitude and sign of every nonzero weight) plus the
temporal smoothness :math:`\overline{d_c(z^{(t)}_u, z^{(t-1)}_u)^2}` -- the same objective the metrics
score, so the refinement optimises what is reported (a subset chosen by value would bias it), and a
deterministic function of the graphs, so it is exactly equivariant under hidden-neuron permutations.
Networks are refined in chunks (each network's coordinates are independent) to bound memory.
"""

from __future__ import annotations

import geoopt
import torch
from torch import Tensor

from hgutils.weightspace.metanets.gth_gmn.decoders import Reconstruction, full_terms
from hgutils.weightspace.metanets.gth_gmn.links import PairSets

#: node pairs (graphs x pairs) refined per chunk: ~2e6 keeps each [pairs, d=16] float32 tensor near 128 MB
PAIRS_PER_CHUNK = 2_000_000


def chunk_size(T: int, pairs: PairSets, reading: str, budget: int = PAIRS_PER_CHUNK) -> int:
    """Networks refined at once so that ``networks x T x (P + negatives)`` stays within ``budget``."""
    per_net = T * (pairs.P + pairs.negatives(reading).shape[1])
    return max(1, budget // max(per_net, 1))


def refine_coordinates(
    z0: Tensor,
    X: Tensor,
    w: Tensor,
    rec: Reconstruction,
    weights: dict[str, float],
    steps: int,
    lr: float,
    budget: int = PAIRS_PER_CHUNK,
) -> Tensor:
    """Refine coordinates ``z0 [B, T, V, d]`` (features ``X`` fixed, weights ``w [B, T, P]``, decoders
    and pairs ``rec``) for ``steps`` RiemannianAdam steps of size ``lr`` against
    ``sum(weights[k] * term_k)`` over every pair (``link``, ``mag``, ``sign``) plus ``weights["smooth"]``
    times the temporal smoothness. Returns the refined coordinates (detached); ``steps = 0`` returns
    ``z0``."""
    if steps <= 0:
        return z0
    B, T, V, d = z0.shape
    geom = rec.geom
    man = geoopt.Euclidean(ndim=1) if geom.euclidean else geoopt.PoincareBall(c=geom.c)
    out = []
    n = chunk_size(T, rec.pairs, rec.reading, budget)
    for start in range(0, B, n):
        sl = slice(start, start + n)
        b = z0[sl].shape[0]
        Xf = X[sl].reshape(b * T, V, d).detach()
        wf = w[sl].reshape(b * T, -1)
        with torch.no_grad():
            statics, labels = rec.statics(Xf), rec.labels(wf)
        z = geoopt.ManifoldParameter(z0[sl].detach().clone(), manifold=man)
        opt = geoopt.optim.RiemannianAdam([z], lr=lr, amsgrad=True)
        for _ in range(steps):
            opt.zero_grad()
            terms = full_terms(z.reshape(b * T, V, d), Xf, wf, rec, statics, labels)
            loss = sum(weights.get(k, 0.0) * v for k, v in terms.items())
            if T > 1 and weights.get("smooth", 0.0) > 0:
                loss = loss + weights["smooth"] * (geom.dist(z[:, 1:], z[:, :-1]) ** 2).mean()
            loss.backward()
            opt.step()
        out.append(z.detach())
    return torch.cat(out, 0)
