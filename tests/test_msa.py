"""Tests for pullback metrics, the spectral-ratio distance and MSA (hgutils.similarity)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.similarity import (
    metric_isotropy,
    mlp_layer_fn,
    mlp_pullback_metrics,
    module_layer_fn,
    msa,
    msa_from_metrics,
    msa_matrix,
    msa_matrix_from_metrics,
    pullback_metric,
    spectral_ratio,
)

torch.set_num_threads(1)
DT = torch.float64


def spd(gen: torch.Generator, m: int, batch: tuple[int, ...] = (), cond: float = 50.0) -> torch.Tensor:
    """Random SPD matrices with eigenvalues in [1, cond]."""
    A = torch.randn(*batch, m, m, generator=gen, dtype=DT)
    Q, _ = torch.linalg.qr(A)
    lam = 1.0 + (cond - 1.0) * torch.rand(*batch, m, generator=gen, dtype=DT)
    return Q @ torch.diag_embed(lam) @ Q.transpose(-1, -2)


def ref_sr(A: torch.Tensor, B: torch.Tensor) -> float:
    """Reference d_SR from scipy's generalized eigensolver."""
    from scipy.linalg import eigh

    lam = eigh(A.numpy(), B.numpy(), eigvals_only=True)
    return 1.0 - math.sqrt(lam.min() / lam.max())


# --------------------------------------------------------------------------------------------
# spectral ratio
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [1, 2, 3, 5])
def test_spectral_ratio_matches_scipy_generalized_eigh(m):
    g = torch.Generator().manual_seed(m)
    A, B = spd(g, m, (6,)), spd(g, m, (6,))
    d = spectral_ratio(A, B)
    ref = torch.tensor([ref_sr(a, b) for a, b in zip(A, B)], dtype=DT)
    assert torch.allclose(d, ref, atol=1e-9)


@pytest.mark.parametrize("m", [2, 3, 4])
def test_spectral_ratio_scale_blind_symmetric_bounded(m):
    g = torch.Generator().manual_seed(10 + m)
    G = spd(g, m, (20,), cond=1e4)
    s = torch.exp(torch.randn(20, generator=g, dtype=DT) * 3)[:, None, None]
    assert spectral_ratio(G, s * G).abs().max() < 1e-8
    H = spd(g, m, (20,))
    d1, d2 = spectral_ratio(G, H), spectral_ratio(H, G)
    assert torch.allclose(d1, d2, atol=1e-10)
    assert ((d1 >= 0) & (d1 <= 1)).all()
    assert (d1 > 1e-3).all()  # generic pairs are not at distance 0


def test_spectral_ratio_congruence_and_output_isometry_invariance():
    g = torch.Generator().manual_seed(3)
    m, D = 3, 7
    J1 = torch.randn(8, D, m, generator=g, dtype=DT)
    J2 = torch.randn(8, D, m, generator=g, dtype=DT)
    G1, G2 = J1.mT @ J1, J2.mT @ J2
    d = spectral_ratio(G1, G2)
    T = torch.randn(8, m, m, generator=g, dtype=DT) + 3 * torch.eye(m, dtype=DT)  # invertible chart change
    assert torch.allclose(spectral_ratio(T.mT @ G1 @ T, T.mT @ G2 @ T), d, atol=1e-9)
    Q, _ = torch.linalg.qr(torch.randn(8, D, D, generator=g, dtype=DT))
    QJ1 = Q @ J1
    assert torch.allclose(spectral_ratio(QJ1.mT @ QJ1, G2), d, atol=1e-10)
    # a non-congruent change (different T per argument) does change it
    T2 = torch.randn(8, m, m, generator=g, dtype=DT) + 3 * torch.eye(m, dtype=DT)
    assert not torch.allclose(spectral_ratio(T.mT @ G1 @ T, T2.mT @ G2 @ T2), d, atol=1e-3)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 4), logcond=st.floats(0.0, 6.0))
def test_spectral_ratio_triangle_inequality(seed, m, logcond):
    g = torch.Generator().manual_seed(seed)
    A, B, C = (spd(g, m, (8,), cond=10**logcond + 1.0) for _ in range(3))
    ab, bc, ac = spectral_ratio(A, B), spectral_ratio(B, C), spectral_ratio(A, C)
    assert (ac <= ab + bc + 1e-10).all()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 4), logcond=st.floats(0.0, 6.0))
def test_metric_isotropy_is_spectral_ratio_to_identity_and_bounds_it(seed, m, logcond):
    """iota(G) = 1 - d_SR(G, I) = sqrt(lmin/lmax), and d_SR(G, G') <= 1 - iota(G) iota(G') (Hilbert's triangle
    inequality through I): near-isotropic metrics cannot be told apart."""
    g = torch.Generator().manual_seed(seed)
    A, B = (spd(g, m, (8,), cond=10**logcond + 1.0) for _ in range(2))
    iA, iB = metric_isotropy(A), metric_isotropy(B)
    eye = torch.eye(m, dtype=DT).expand_as(A)
    assert torch.allclose(iA, 1.0 - spectral_ratio(A, eye), atol=1e-9)
    lam = torch.linalg.eigvalsh(A)
    assert torch.allclose(iA, (lam[:, 0] / lam[:, -1]).sqrt(), atol=1e-9)
    assert (spectral_ratio(A, B) <= 1.0 - iA * iB + 1e-9).all()
    s = torch.exp(torch.randn(8, generator=g, dtype=DT))[:, None, None]
    assert torch.allclose(metric_isotropy(s * A), iA, atol=1e-9)  # scale-blind


def test_metric_isotropy_edge_cases():
    assert metric_isotropy(torch.eye(3, dtype=DT)).item() == pytest.approx(1.0)
    v = torch.tensor([[1.0], [2.0]], dtype=DT)
    assert metric_isotropy(v @ v.T).item() == pytest.approx(0.0, abs=1e-7)  # singular
    assert metric_isotropy(torch.zeros(2, 2, dtype=DT)).item() == 0.0  # the zero metric
    with pytest.raises(ValueError, match="square"):
        metric_isotropy(torch.zeros(2, 3))


def test_spectral_ratio_rank_deficient_vs_full_rank_is_one():
    g = torch.Generator().manual_seed(5)
    v = torch.randn(10, 3, 1, generator=g, dtype=DT)
    rank1 = v @ v.mT
    full = spd(g, 3, (10,))
    d = spectral_ratio(rank1, full)
    assert (d > 1 - 1e-4).all() and (d <= 1).all()
    # two scalings of an exactly singular metric: ~0 up to the documented conditioning 1e-16/eps
    assert spectral_ratio(rank1, 4.0 * rank1).abs().max() < 1e-5
    # but a different rank-1 metric is at distance ~1
    w = torch.randn(10, 3, 1, generator=g, dtype=DT)
    assert (spectral_ratio(rank1, w @ w.mT) > 0.99).all()
    # zero metric conventions
    Z = torch.zeros(2, 3, 3, dtype=DT)
    assert torch.equal(spectral_ratio(Z, Z), torch.zeros(2, dtype=DT))
    assert torch.equal(spectral_ratio(Z, full[:2]), torch.ones(2, dtype=DT))


def test_spectral_ratio_float32_and_broadcast():
    g = torch.Generator().manual_seed(6)
    G = spd(g, 2, (4,))
    d = spectral_ratio(G.float(), G[0].float())  # [4,2,2] vs [2,2] broadcasts
    assert d.dtype == torch.float32 and d.shape == (4,)
    assert d[0].abs() < 1e-6


def test_spectral_ratio_errors():
    with pytest.raises(ValueError, match=r"\[\.\.\., m, m\]"):
        spectral_ratio(torch.ones(3, 2, 3), torch.ones(3, 2, 3))
    with pytest.raises(ValueError, match="same manifold dimension"):
        spectral_ratio(torch.eye(2), torch.eye(3))
    with pytest.raises(ValueError, match="NaN"):
        spectral_ratio(torch.full((2, 2), float("nan")), torch.eye(2))
    with pytest.raises(ValueError, match="semi-definite"):
        spectral_ratio(torch.eye(2), -torch.eye(2))


# --------------------------------------------------------------------------------------------
# pullback metrics
# --------------------------------------------------------------------------------------------
def test_pullback_metric_linear_map_and_modes():
    g = torch.Generator().manual_seed(7)
    W = torch.randn(5, 2, generator=g, dtype=DT)
    pts = torch.randn(9, 2, generator=g, dtype=DT)
    G = pullback_metric(lambda x: x @ W.T, pts)
    assert torch.allclose(G, (W.T @ W).expand(9, 2, 2), atol=1e-12)
    # nonlinear: fwd and rev agree, and agree with finite differences
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4)).double()
    f = module_layer_fn(net)
    Gf, Gr = pullback_metric(f, pts, mode="fwd"), pullback_metric(f, pts, mode="rev")
    assert torch.allclose(Gf, Gr, atol=1e-12)
    h = 1e-6
    Jfd = torch.stack([(f(pts + h * e) - f(pts - h * e)) / (2 * h) for e in torch.eye(2, dtype=DT)], -1)
    assert torch.allclose(Gf, Jfd.mT @ Jfd, atol=1e-6)


def test_pullback_metric_with_embedding_chain_rule():
    # f∘ψ with ψ(u, v) = (u, v, u² + v²): G = Dψᵀ (A) Dψ for a linear f with A = WᵀW
    g = torch.Generator().manual_seed(8)
    W = torch.randn(4, 3, generator=g, dtype=DT)

    def psi(p):
        return torch.stack([p[..., 0], p[..., 1], (p**2).sum(-1)], -1)

    pts = torch.randn(6, 2, generator=g, dtype=DT)
    G = pullback_metric(lambda x: x @ W.T, pts, embedding=psi)
    Dpsi = torch.zeros(6, 3, 2, dtype=DT)
    Dpsi[:, 0, 0] = 1
    Dpsi[:, 1, 1] = 1
    Dpsi[:, 2] = 2 * pts
    assert torch.allclose(G, Dpsi.mT @ (W.T @ W) @ Dpsi, atol=1e-12)


def test_module_layer_fn_int_and_name():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    pts = torch.randn(5, 2, dtype=DT)
    a = pullback_metric(module_layer_fn(net, 1), pts)
    b = pullback_metric(module_layer_fn(net, "1"), pts)
    c = pullback_metric(lambda x: net[1](net[0](x)), pts)
    assert torch.allclose(a, c) and torch.allclose(b, c)
    with pytest.raises(ValueError, match="Sequential"):
        module_layer_fn(torch.nn.Linear(2, 2), 0)
    with pytest.raises(ValueError, match="no submodule"):
        module_layer_fn(net, "nope")
    with pytest.raises(ValueError, match=r"\[P, m\]"):
        pullback_metric(module_layer_fn(net), torch.randn(2, 2, 2))


def test_stacked_mlp_metrics_match_per_network():
    from hgutils.weightspace.stacked_mlp import init_mlp

    params = init_mlp(
        3, (2, 12, 10, 4), scheme="normal", gain=1.3, generator=torch.Generator().manual_seed(1), dtype=DT
    )
    pts = torch.randn(7, 2, dtype=DT)
    for layer in (0, 1, 2):
        G = mlp_pullback_metrics(params, pts, layer)
        assert G.shape == (3, 7, 2, 2)
        for i in range(3):
            Gi = pullback_metric(mlp_layer_fn(params, layer, net=i), pts, mode="rev")
            assert torch.allclose(G[i], Gi, atol=1e-10)
    with pytest.raises(ValueError, match="layer"):
        mlp_layer_fn(params, 5)


# --------------------------------------------------------------------------------------------
# MSA
# --------------------------------------------------------------------------------------------
def _two_nets(seed=0):
    g = torch.Generator().manual_seed(seed)
    W1, W2 = torch.randn(2, 20, 2, generator=g, dtype=DT)
    b1, b2 = torch.randn(2, 20, generator=g, dtype=DT)

    def f1(x):
        return torch.tanh(x @ W1.T + b1)

    def f2(x):
        return torch.tanh(x @ W2.T + b2)

    return f1, f2


def test_msa_self_zero_rotation_invariance_and_range():
    f1, f2 = _two_nets()
    pts = torch.rand(64, 2, dtype=DT, generator=torch.Generator().manual_seed(2)) * 2 - 1
    assert msa(f1, f1, pts) < 1e-10
    d = msa(f1, f2, pts)
    assert 0.01 < d <= 1
    Q, _ = torch.linalg.qr(torch.randn(20, 20, dtype=DT, generator=torch.Generator().manual_seed(3)))
    assert abs(msa(lambda x: f1(x) @ Q.T, f2, pts) - d) < 1e-10
    # scaling the hidden space changes nothing either (scale-blind), a non-isometric linear map does
    A = torch.diag(torch.linspace(0.2, 5, 20, dtype=DT))
    assert abs(msa(lambda x: 3.0 * f1(x), f2, pts) - d) < 1e-10
    assert abs(msa(lambda x: f1(x) @ A, f2, pts) - d) > 1e-3
    # symmetric for the reference and mean volumes
    assert abs(msa(f2, f1, pts) - d) < 1e-10
    assert abs(msa(f1, f2, pts, volume="mean") - msa(f2, f1, pts, volume="mean")) < 1e-10


def test_msa_invariant_to_reparametrising_the_manifold():
    # manifold = a curved surface in R^3 given in chart u; new chart v with u = phi(v)
    f1, f2 = _two_nets(1)
    W = torch.randn(3, 2, dtype=DT, generator=torch.Generator().manual_seed(4))

    def emb(u):  # chart u -> R^3 -> R^2 input of the nets (a nonlinear surface)
        return torch.stack([u[..., 0], u[..., 1], torch.sin(2 * u[..., 0]) * u[..., 1]], -1) @ W

    def phi(v):  # diffeomorphism of the chart: u = (v1 + 0.3 v2^3, sinh(v2))
        return torch.stack([v[..., 0] + 0.3 * v[..., 1] ** 3, torch.sinh(v[..., 1])], -1)

    v = torch.rand(80, 2, dtype=DT, generator=torch.Generator().manual_seed(5)) * 2 - 1
    u = phi(v)
    d_u = msa(f1, f2, u, embedding=emb)
    d_v = msa(f1, f2, v, embedding=lambda q: emb(phi(q)))
    assert abs(d_u - d_v) < 1e-6  # exact up to the O(eps·cond) regularisation
    # the Riemannian volume options are coordinate-free when the weights are 1 / sampling density:
    # v ~ uniform has density 1 in v and 1/|det Dphi| in u
    detphi = torch.stack([torch.linalg.det(torch.func.jacfwd(phi)(q)) for q in v]).abs()
    for vol in ("first", "mean"):
        a = msa(f1, f2, u, weights=detphi, embedding=emb, volume=vol)
        b = msa(f1, f2, v, weights=torch.ones(80, dtype=DT), embedding=lambda q: emb(phi(q)), volume=vol)
        assert abs(a - b) < 1e-6


def test_msa_first_volume_is_not_symmetric():
    f1, f2 = _two_nets(2)
    pts = torch.rand(64, 2, dtype=DT, generator=torch.Generator().manual_seed(6)) * 4 - 2
    assert abs(msa(f1, f2, pts, volume="first") - msa(f2, f1, pts, volume="first")) > 1e-4


def test_msa_matrix_consistent_with_pairwise_and_triangle():
    from hgutils.weightspace.stacked_mlp import init_mlp

    params = init_mlp(5, (2, 16, 16, 3), scheme="normal", generator=torch.Generator().manual_seed(9), dtype=DT)
    pts = torch.rand(40, 2, dtype=DT, generator=torch.Generator().manual_seed(1)) * 2 - 1
    D = msa_matrix(params, pts, layer=1)
    fs = [mlp_layer_fn(params, 1, net=i) for i in range(5)]
    D2 = msa_matrix(fs, pts)
    assert np.allclose(D, D2, atol=1e-10)
    assert np.allclose(D, D.T) and np.allclose(np.diag(D), 0)
    assert abs(D[0, 3] - msa(fs[0], fs[3], pts)) < 1e-10
    for i in range(5):
        for j in range(5):
            for k in range(5):
                assert D[i, k] <= D[i, j] + D[j, k] + 1e-12
    G = mlp_pullback_metrics(params, pts, 1)
    w = torch.rand(40, dtype=DT)
    Dw = msa_matrix_from_metrics(G, w, volume="mean")
    assert abs(Dw[1, 2] - msa_from_metrics(G[1], G[2], w, volume="mean")) < 1e-10
    Df = msa_matrix_from_metrics(G, volume="first")
    assert abs(Df[1, 2] - msa_from_metrics(G[1], G[2], volume="first")) < 1e-10


def test_msa_errors():
    f1, f2 = _two_nets()
    pts = torch.rand(4, 2, dtype=DT)
    with pytest.raises(ValueError, match="volume"):
        msa(f1, f2, pts, volume="riemann")
    with pytest.raises(ValueError, match=r"weights must have shape \[P\]"):
        msa(f1, f2, pts, weights=torch.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        msa(f1, f2, torch.full((4, 2), float("nan")))
    with pytest.raises(ValueError, match="points"):
        msa_matrix([f1, f2], None)
    with pytest.raises(ValueError, match=r"\[M, P, m, m\]"):
        msa_matrix_from_metrics(torch.eye(2).expand(3, 2, 2))


def test_msa_on_a_one_dimensional_manifold_is_refused_because_every_pair_reads_zero():
    """Issue 51: on a 1-D input manifold every pullback metric is 1x1, any two are proportional, and the
    spectral ratio reads 0 for any two networks; a comparison of networks there is refused, saying so."""
    W = torch.randn(2, 6, 1, dtype=DT, generator=torch.Generator().manual_seed(7))

    def f(i):
        return lambda x: torch.tanh(x @ W[i].T)

    t = torch.linspace(-1, 1, 20, dtype=DT)[:, None]  # [P, 1]: a curve's coordinate
    G = torch.stack([pullback_metric(f(i), t) for i in range(2)])  # [2, 20, 1, 1]
    assert float(spectral_ratio(G[0], G[1]).abs().max()) == 0.0  # what made MSA read 0.000 for any pair
    for call in (lambda: msa(f(0), f(1), t), lambda: msa_matrix([f(0), f(1)], t)):
        with pytest.raises(ValueError, match="input manifold is 1-dimensional.*cannot tell networks apart") as e:
            call()
        assert "dimension >= 2" in str(e.value)
    params = {"W0": torch.randn(3, 5, 1, dtype=DT), "b0": torch.zeros(3, 5, dtype=DT)}
    params |= {"W1": torch.randn(3, 2, 5, dtype=DT), "b1": torch.zeros(3, 2, dtype=DT)}
    with pytest.raises(ValueError, match="1-dimensional"):
        msa_matrix(params, t, layer=0)
    # 1x1 metrics given directly: the zeros are exact d_SR values, so a warning, not a refusal
    with pytest.warns(UserWarning, match="1x1 metrics: the input manifold is 1-dimensional"):
        assert msa_from_metrics(G[0], G[1]) == 0.0
    with pytest.warns(UserWarning, match="msa_matrix_from_metrics: 1x1 metrics"):
        assert np.all(msa_matrix_from_metrics(G) == 0.0)
    # a 2-D manifold is not affected
    xy = torch.rand(10, 2, dtype=DT, generator=torch.Generator().manual_seed(8))
    W2 = torch.randn(2, 6, 2, dtype=DT, generator=torch.Generator().manual_seed(9))
    assert msa(lambda x: torch.tanh(x @ W2[0].T), lambda x: torch.tanh(x @ W2[1].T), xy) > 0
