"""The every-pair reconstruction terms (stage-2 refinement and the metrics) read the distances of the
chosen pairs off one Gram product (:func:`~hgutils.nn.attention_kernels.distance_from_inner`): equal, in
float64 to 1e-10, values and gradients, to the Poincaré distance and to the former all-``V x V`` path."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import torch

from hgutils.manifolds import poincare as pm
from hgutils.nn.attention_kernels import distance_from_inner, pairwise_distance
from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.metanets.gth_gmn.decoders import balanced_bce, full_terms, gathered_inner, gram, mag_sign
from hgutils.weightspace.metanets.gth_gmn.refine import refine_coordinates

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from metanets import synthetic_zoo  # noqa: E402


def _close(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    err = float((a - b).detach().abs().max()) if a.numel() else 0.0
    assert err <= 1e-10 * max(1.0, float(b.abs().max())), f"{what}: max |difference| {err:.3g}"


@pytest.mark.parametrize(("c", "eu"), [(1.0, False), (2.5, False), (1.0, True)])
def test_distance_from_inner_is_the_poincare_distance_of_the_chosen_pairs_and_passes_gradcheck(c, eu):
    g = torch.Generator().manual_seed(0)
    z = pm.expmap0(torch.randn(3, 6, 4, generator=g, dtype=torch.float64) * 0.6, c).requires_grad_()
    u, v = torch.tensor([0, 1, 2, 5, 3]), torch.tensor([1, 0, 4, 2, 5])

    def f(z: torch.Tensor) -> torch.Tensor:
        return distance_from_inner(*gathered_inner(*gram(z), u, v), c, eu)

    zu, zv = z[:, u], z[:, v]
    ref = 2.0 * (zu - zv).norm(dim=-1) if eu else pm.dist(zu, zv, c)
    _close(f(z), ref, "distances")
    assert torch.autograd.gradcheck(f, (z,))


def _dense_terms(z, X, w, rec):
    """The former path: every pair's distance formed (``pairwise_distance`` on all ``V x V``), then the
    chosen pairs' columns taken."""
    pairs, fd, geom = rec.pairs, rec.fd, rec.geom
    statics, lab = rec.statics(X), rec.labels(w)
    M, V, _ = z.shape
    zz = z.unsqueeze(1)
    D = pairwise_distance(zz, zz, geom.c, geom.euclidean).reshape(M, V * V)
    extra = pairs.negatives(rec.reading)
    d, d_neg = D[:, pairs.src * V + pairs.dst], D[:, extra[0] * V + extra[1]]
    log_mag, sign_logit = rec.head.at(z, pairs.src, pairs.dst, statics, geom, d)[:2]
    lp = fd.logit(d)
    neg_mask = torch.cat([~lab, torch.ones_like(d_neg, dtype=torch.bool)], 1)
    link = balanced_bce(lp, lab, torch.cat([lp, fd.logit(d_neg)], 1), neg_mask)
    return {"link": link, **mag_sign(log_mag, sign_logit, w)}


def _float64_model(**kw):
    zoo = synthetic_zoo(2, 3)
    torch.manual_seed(0)
    m = build_metanet("GTH-GMN", zoo, "classification", 10, snapshots="all", **kw).double()
    g = m.prepare(zoo)
    g = dataclasses.replace(
        g, edge_weight=g.edge_weight.double(), node_feat=g.node_feat.double(), edge_attr=g.edge_attr.double()
    )
    return m, g


@pytest.mark.parametrize(
    "kw", [{}, {"euclidean": True}, {"link_reading": "literal"}], ids=["hyperbolic", "euclidean", "literal"]
)
def test_every_pair_terms_and_their_gradients_equal_the_all_pairs_path(kw):
    m, g = _float64_model(**kw)
    with torch.no_grad():
        z0, _ = m.node_states(g)
    B, T, V, d = z0.shape
    w, rec = m._targets(g)
    zf = z0.reshape(B * T, V, d).clone().requires_grad_()
    X, wf = m._tangent(z0).reshape(B * T, V, d), w.reshape(B * T, -1)
    new, ref = full_terms(zf, X, wf, rec), _dense_terms(zf, X, wf, rec)
    assert new.keys() == ref.keys()
    for k in ref:
        _close(new[k], ref[k], f"term {k}")
        g_new, g_ref = (torch.autograd.grad(t[k], zf, retain_graph=True)[0] for t in (new, ref))
        _close(g_new, g_ref, f"gradient of {k}")


def test_refinement_moves_the_coordinates_and_lowers_the_every_pair_loss():
    m, g = _float64_model()
    with torch.no_grad():
        z0, _ = m.node_states(g)
    w, rec = m._targets(g)
    X = m._tangent(z0)
    weights = m.recon_weights()
    B, T, V, d = z0.shape

    def loss(z):
        t = full_terms(z.reshape(B * T, V, d), X.reshape(B * T, V, d), w.reshape(B * T, -1), rec)
        return float(sum(weights.get(k, 0.0) * v for k, v in t.items()))

    with torch.enable_grad():
        z = refine_coordinates(z0, X, w, rec, weights, steps=10, lr=0.05)
    assert (z - z0).abs().max() > 1e-4
    assert loss(z) < loss(z0)


def test_distance_from_inner_refuses_parts_of_different_shapes():
    with pytest.raises(ValueError, match="share one shape"):
        distance_from_inner(torch.zeros(2, 5), torch.zeros(2, 5), torch.zeros(2, 1), 1.0)
