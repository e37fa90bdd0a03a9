"""Tests for the extrinsic similarity baselines (CKA, CCA, SVCCA, RSA, Procrustes)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from hgutils.similarity import (
    canonical_correlations,
    cca_matrix,
    cca_similarity,
    linear_cka,
    linear_cka_matrix,
    procrustes_distance,
    procrustes_matrix,
    procrustes_similarity,
    rdm,
    rsa,
    rsa_matrix,
    svcca,
    svcca_matrix,
)

MEASURES = {
    "cka": linear_cka,
    "cca": cca_similarity,
    "svcca": svcca,
    "rsa": rsa,
    "rsa_spearman": lambda X, Y: rsa(X, Y, corr="spearman"),
    "procrustes": procrustes_similarity,
}


def data(seed: int, n: int = 60, p: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)) @ rng.standard_normal((p, p))


def related(seed: int, n: int = 60, p: int = 8, noise: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.linspace(3, 0.5, p)
    Y = np.tanh(X @ rng.standard_normal((p, p))) + noise * rng.standard_normal((n, p))
    return X, Y


@pytest.mark.parametrize("name", list(MEASURES))
def test_identity_is_one_and_range(name):
    f = MEASURES[name]
    X, Y = related(1)
    assert f(X, X) == pytest.approx(1.0, abs=1e-8)
    s = f(X, Y)
    assert 0.0 <= s < 0.999
    assert f(Y, X) == pytest.approx(s, abs=1e-8)  # symmetric


# invariances each measure claims: translation, isotropic scaling, rotation, feature permutation
CLAIMED = {
    "cka": ("translate", "scale", "rotate", "permute"),
    "cca": ("translate", "scale", "rotate", "permute", "linear"),
    "svcca": ("translate", "scale", "rotate", "permute"),
    "rsa": ("translate", "scale", "rotate", "permute"),
    "rsa_spearman": ("translate", "scale", "rotate", "permute"),
    "procrustes": ("translate", "scale", "rotate", "permute"),
}
# transformations a measure does NOT claim invariance to (they must change the value)
NOT_CLAIMED = {
    "cka": ("linear",),
    "cca": ("nonlinear",),
    "rsa": ("anisotropic",),
    "rsa_spearman": ("anisotropic",),
    "procrustes": ("linear", "anisotropic"),
}


def transform(kind: str, Y: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = Y.shape[1]
    if kind == "translate":
        return Y + rng.standard_normal(p) * 5
    if kind == "scale":
        return Y * 3.7
    if kind == "rotate":
        return Y @ ortho_group.rvs(p, random_state=seed)
    if kind == "permute":
        return Y[:, rng.permutation(p)]
    if kind == "linear":
        return Y @ (rng.standard_normal((p, p)) + 0.5 * np.eye(p))
    if kind == "anisotropic":
        return Y * np.geomspace(0.1, 10, p)
    if kind == "nonlinear":
        return np.tanh(2 * Y / Y.std()) ** 3
    raise AssertionError(kind)


@pytest.mark.parametrize("name", list(CLAIMED))
def test_claimed_invariances_hold(name):
    f = MEASURES[name]
    X, Y = related(2)
    base = f(X, Y)
    for kind in CLAIMED[name]:
        assert f(X, transform(kind, Y, 3)) == pytest.approx(base, abs=1e-7), kind


@pytest.mark.parametrize("name", list(NOT_CLAIMED))
def test_unclaimed_invariances_fail(name):
    f = MEASURES[name]
    X, Y = related(4)
    base = f(X, Y)
    for kind in NOT_CLAIMED[name]:
        assert abs(f(X, transform(kind, Y, 5)) - base) > 1e-3, kind


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), n=st.integers(14, 40), p=st.integers(1, 6))  # n > 2p + 1: centred Q
def test_closed_forms(seed, n, p):
    rng = np.random.default_rng(seed)
    # Procrustes of centred orthonormal X, Y: mean of the singular values of XᵀY (‖X‖_F = ‖Y‖_F = √p)
    Z = rng.standard_normal((n, 2 * p))
    Z -= Z.mean(0)
    Q, _ = np.linalg.qr(Z)
    X, Y = Q[:, :p], Q[:, :p] @ ortho_group.rvs(p, random_state=seed) if p > 1 else Q[:, :p]
    Y = 0.6 * Y + 0.8 * Q[:, p:]  # still orthonormal columns, centred
    sv = np.linalg.svd(X.T @ Y, compute_uv=False)
    assert procrustes_similarity(X, Y) == pytest.approx(sv.mean(), abs=1e-10)
    # CKA of X and XQ is 1 for orthogonal Q; CKA against a random other rep matches its formula
    if p > 1:
        assert linear_cka(X, X @ ortho_group.rvs(p, random_state=seed)) == pytest.approx(1.0, abs=1e-10)
    A, B = rng.standard_normal((n, p)), rng.standard_normal((n, p + 1))
    Ac, Bc = A - A.mean(0), B - B.mean(0)
    ref = np.linalg.norm(Bc.T @ Ac) ** 2 / (np.linalg.norm(Ac.T @ Ac) * np.linalg.norm(Bc.T @ Bc))
    assert linear_cka(A, B) == pytest.approx(ref, abs=1e-10)
    assert procrustes_distance(A, A) == pytest.approx(0.0, abs=1e-6)


def test_cca_closed_form_one_dimensional():
    # for one feature each, the canonical correlation is |Pearson r|
    rng = np.random.default_rng(0)
    x = rng.standard_normal(50)
    y = -0.7 * x + rng.standard_normal(50)
    r = abs(np.corrcoef(x, y)[0, 1])
    assert cca_similarity(x[:, None], y[:, None]) == pytest.approx(r, abs=1e-10)
    assert cca_similarity(x[:, None], y[:, None], squared=True) == pytest.approx(r**2, abs=1e-10)


def test_cca_matches_sklearn_first_component():
    from sklearn.cross_decomposition import CCA

    X, Y = related(6, n=200, p=4)
    rho = canonical_correlations(X, Y)
    u, v = CCA(n_components=1, max_iter=2000, tol=1e-10).fit(X, Y).transform(X, Y)
    assert rho[0] == pytest.approx(abs(np.corrcoef(u[:, 0], v[:, 0])[0, 1]), abs=1e-4)


def test_cca_without_ridge_refuses_too_few_samples():
    rng = np.random.default_rng(7)
    X, Y = rng.standard_normal((20, 50)), rng.standard_normal((20, 30))
    for f in (lambda: cca_similarity(X, Y), lambda: cca_matrix([X, Y]), lambda: canonical_correlations(X, X)):
        with pytest.raises(ValueError, match=r"too few samples for unregularised CCA.*20 samples and 50 features"):
            f()
    with pytest.raises(ValueError, match="reg must be >= 0"):
        cca_similarity(X, Y, reg=-1.0)
    # with a ridge it runs; self-similarity stays below 1 and above independent noise
    s = cca_similarity(X, Y, reg=0.1)
    assert 0 < s < cca_similarity(X, X, reg=0.1) < 1


def test_cca_chance_level_follows_wachter_and_svcca_removes_it():
    """Independent noise: unregularised CCA is far from 0 when features are a sizeable fraction of samples
    (largest squared canonical correlation at Wachter's edge); a ridge keeps noise as similar to itself as to
    an independent copy when samples <= features; SVCCA with few directions brings the chance level near 0."""
    rng = np.random.default_rng(11)
    n, p = 400, 100
    rho = canonical_correlations(rng.standard_normal((n, p)), rng.standard_normal((n, p)))
    c = p / n
    assert rho[0] ** 2 == pytest.approx((2 * np.sqrt(c * (1 - c))) ** 2, abs=0.05)  # Wachter's upper edge
    p = 256  # p + q > n: the column spaces meet, at least p + q - n + 1 correlations are 1
    X, Y = rng.standard_normal((n, p)), rng.standard_normal((n, p))
    rho = canonical_correlations(X, Y)
    assert (rho > 1 - 1e-6).sum() >= 2 * p - n + 1 and cca_similarity(X, Y) > 0.6
    # samples <= features: a ridge cannot separate noise from itself, SVCCA with k << n can
    Xw, Yw = X[:200], Y[:200]
    assert abs(cca_similarity(Xw, Yw, reg=1.0) - cca_similarity(Xw, Xw, reg=1.0)) < 0.05
    noise = svcca(Xw, Yw, keep=0.99, max_components=5)
    assert noise < 0.2 and svcca(Xw, Xw, keep=0.99, max_components=5) == pytest.approx(1.0)
    assert svcca_matrix([Xw, Yw], max_components=5)[0, 1] == pytest.approx(noise, abs=1e-10)
    # shared low-dimensional signal plus noise is found far above that level
    Z = rng.standard_normal((200, 3))
    A = Z @ rng.standard_normal((3, p)) * 3 + Xw
    B = Z @ rng.standard_normal((3, p)) * 3 + Yw
    assert svcca(A, B, keep=3) > 0.9
    with pytest.raises(ValueError, match="max_components"):
        svcca(Xw, Yw, max_components=0)


def test_rdm_kinds_and_rsa_options():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((12, 5))
    D = rdm(X)
    assert np.allclose(D, np.linalg.norm(X[:, None] - X[None], axis=-1))
    C = rdm(X, "correlation")
    assert np.allclose(C, 1 - np.corrcoef(X))
    # correlation RDM: invariant to per-sample affine changes, not to feature rotations
    Y = X * rng.uniform(0.5, 2, (12, 1)) + rng.standard_normal((12, 1))
    assert rsa(X, Y, rdm_kind="correlation") == pytest.approx(1.0, abs=1e-10)
    assert rsa(X, X @ ortho_group.rvs(5, random_state=1), rdm_kind="correlation") < 0.999
    with pytest.raises(ValueError, match="rdm kind"):
        rdm(X, "cosine")
    with pytest.raises(ValueError, match="corr"):
        rsa(X, X, corr="kendall")


def test_svcca_keep_options():
    X, Y = related(9, n=100, p=10)
    assert 0 < svcca(X, Y, keep=3) <= 1
    assert svcca(X, Y, keep=1.0) == pytest.approx(cca_similarity(X, Y), abs=1e-8)
    with pytest.raises(ValueError, match="keep"):
        svcca(X, Y, keep=1.5)


def test_matrix_helpers_match_pairwise():
    reps = [related(s, n=40, p=5)[k] for s in range(2) for k in range(2)]
    reps.append(torch.as_tensor(reps[0] @ np.diag([1, 2, 3, 4, 5.0])))  # torch input accepted
    for mat, f in [
        (linear_cka_matrix, linear_cka),
        (cca_matrix, cca_similarity),
        (svcca_matrix, svcca),
        (rsa_matrix, rsa),
        (procrustes_matrix, procrustes_similarity),
    ]:
        S = mat(reps)
        assert S.shape == (5, 5) and np.allclose(S, S.T)
        for i, j in [(0, 1), (2, 4), (3, 3)]:
            assert S[i, j] == pytest.approx(f(reps[i], reps[j]), abs=1e-8), mat.__name__
    S = rsa_matrix(reps, corr="spearman", rdm_kind="correlation")
    assert S[1, 2] == pytest.approx(rsa(reps[1], reps[2], rdm_kind="correlation", corr="spearman"), abs=1e-10)


def test_procrustes_matrix_low_rank_factoring_is_within_its_bound():
    rng = np.random.default_rng(12)
    Z = rng.standard_normal((80, 3))
    decay = np.geomspace(1.0, 1e-9, 20)
    reps = [(Z @ rng.standard_normal((3, 20)) + rng.standard_normal((80, 20))) * decay for _ in range(4)]
    exact = procrustes_matrix(reps)
    assert np.allclose(procrustes_matrix(reps, tol=1e-12), exact, atol=2e-6)
    for tol in (1e-4, 1e-2):  # coarser: the error stays within 2 sqrt(tol)
        assert np.abs(procrustes_matrix(reps, tol=tol) - exact).max() <= 2 * np.sqrt(tol)
    assert np.abs(procrustes_matrix(reps, tol=0.3) - exact).max() > 1e-4  # it does drop something
    with pytest.raises(ValueError, match="tol"):
        procrustes_matrix(reps, tol=1.0)


@pytest.mark.parametrize("name", list(MEASURES))
def test_bad_input(name):
    f = MEASURES[name]
    X = np.random.default_rng(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match="same number of samples"):
        f(X, X[:9])
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f(X, Xn)
    with pytest.raises(ValueError, match=r"\[samples, features\]"):
        f(X[:, 0], X)
    with pytest.raises(ValueError, match="samples"):
        f(X[:2], X[:2] + 1) if name not in ("cka", "procrustes") else f(X[:1], X[:1])


def test_too_few_samples_for_cca_and_matrix_errors():
    X = np.random.default_rng(0).standard_normal((2, 3))
    with pytest.raises(ValueError, match="at least 3 samples"):
        cca_similarity(X, X)
    with pytest.raises(ValueError, match="same number of samples"):
        procrustes_matrix([np.ones((4, 2)), np.ones((5, 2))])
    with pytest.raises(ValueError, match="same number of samples"):
        linear_cka_matrix([np.ones((4, 2)), np.ones((5, 2))])
