"""Exact lifts of the Fourier positional encodings (hgutils.symmetry.encodings, groups)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.symmetry.encodings import (
    DyadicAxisPE,
    FourierPE,
    RandomFourierPE,
    TriAxisPE,
    lift_table,
    liftable_set,
)
from hgutils.symmetry.groups import (
    as_matrix,
    candidate_elements,
    compose,
    contains,
    cyclic,
    dihedral,
    element_from_matrix,
    inverse,
    reflection,
    rotation,
    rotation_sweep,
)

DYADIC, TRI, RFF = DyadicAxisPE(), TriAxisPE(), RandomFourierPE()
ENCODINGS = [DYADIC, TRI, RFF]


def _fresh_points(n=512, seed=123, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, 2, generator=g, dtype=dtype) * 2 - 1) * 1.3


# ------------------------------------------------------------------ groups
def test_group_elements_are_orthogonal_and_named():
    for g in candidate_elements():
        m = as_matrix(g)
        assert torch.allclose(m.T @ m, torch.eye(2, dtype=torch.float64), atol=1e-15)
        assert (torch.linalg.det(m) > 0) == (g.kind == "rotation")
    assert [g.name for g in dihedral(3)] == ["R0", "R120", "R240", "S0", "S60", "S120"]
    assert len(candidate_elements()) == 16
    assert [g.angle for g in rotation_sweep(4)] == [0.0, 90.0, 180.0, 270.0]
    # 90-degree multiples are exact integer matrices (snapped)
    assert rotation(90).matrix.tolist() == [[0.0, -1.0], [1.0, 0.0]]
    assert reflection(45).matrix.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_group_laws():
    assert compose(rotation(90), rotation(90)).name == "R180"
    assert compose(reflection(0), reflection(45)).name == "R270"  # S_a S_b = R_{2(a-b)}
    assert compose(reflection(45), reflection(0)).name == "R90"
    assert inverse(rotation(60)).name == "R300"
    assert rotation(60).order == 6 and reflection(30).order == 2 and rotation(0).order == 1
    d4 = dihedral(4)
    for g in d4:
        for h in d4:
            assert contains(d4, compose(g, h))  # closure
    assert not contains(d4, rotation(60))
    assert element_from_matrix(reflection(150).matrix).name == "S150"
    assert [g.name for g in cyclic(3)] == ["R0", "R120", "R240"]


def test_bad_group_elements_raise():
    with pytest.raises(ValueError, match="orthogonal"):
        as_matrix(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="orthogonal"):
        DYADIC.lift(torch.tensor([[1.0, 0.1], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="2x2"):
        as_matrix(torch.eye(3))
    with pytest.raises(ValueError):
        dihedral(0)
    with pytest.raises(ValueError):
        rotation_sweep(0)


# ------------------------------------------------------------------ encodings
def test_shapes_dtypes_and_formula():
    x64 = _fresh_points(7)
    for enc in ENCODINGS:
        assert enc.dim == 48
        assert enc(x64).dtype == torch.float64 and enc(x64).shape == (7, 48)
        assert enc(x64.float()).dtype == torch.float32
        assert enc(x64.reshape(7, 1, 2)).shape == (7, 1, 48)
        om, b = enc.frequencies, enc.phases
        ref = torch.stack((torch.sin(x64 @ om.T + b), torch.cos(x64 @ om.T + b)), -1).flatten(-2)
        assert torch.allclose(enc(x64), ref, atol=1e-12)
    # the paper's feature order for Dyadic: sin(2^k pi x1), cos(2^k pi x1), sin(2^k pi x2), cos(...)
    x = torch.tensor([[0.3, -0.7]], dtype=torch.float64)
    k = 3
    expect = [
        math.sin(8 * math.pi * 0.3),
        math.cos(8 * math.pi * 0.3),
        math.sin(8 * math.pi * -0.7),
        math.cos(8 * math.pi * -0.7),
    ]
    assert torch.allclose(DYADIC(x)[0, 4 * k : 4 * k + 4], torch.tensor(expect, dtype=torch.float64), atol=1e-12)
    assert TRI.frequencies.shape == (24, 2) and RFF.frequencies.shape == (24, 2)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match=r"\[\.\.\., 2\]"):
        DYADIC(torch.zeros(5, 3))
    with pytest.raises(ValueError, match="floating"):
        TRI(torch.zeros(5, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"\[m, 2\]"):
        FourierPE(torch.zeros(4, 3))
    with pytest.raises(ValueError):
        RandomFourierPE(sigma=-1.0)


def _lift_names(enc, elements, tol=1e-10):
    return {g.name for g in elements if enc.lift(g)[1] < tol}


def test_dyadic_lifts_d4_not_d3():
    for g in dihedral(4):
        rho, res = DYADIC.lift(g)
        assert res < 1e-10, g.name
        assert rho.dtype == torch.float64
        # a signed permutation
        assert torch.equal(rho.abs().sum(0), torch.ones(48, dtype=torch.float64))
        assert torch.equal(rho.abs().sum(1), torch.ones(48, dtype=torch.float64))
    for g in [rotation(60), rotation(120), reflection(30)]:
        assert DYADIC.lift(g)[1] > 0.1
        assert DYADIC.exact_lift(g) is None


def test_triaxis_lifts_d6_not_90():
    for g in dihedral(6):  # 60-degree rotations and reflections about 30-degree-multiple axes
        assert TRI.lift(g)[1] < 1e-10, g.name
    for g in [rotation(90), rotation(270), reflection(45)]:
        assert TRI.lift(g)[1] > 0.1


def test_rff_lifts_pi_only():
    assert _lift_names(RFF, candidate_elements()) == {"R0", "R180"}
    _, res = RFF.lift(rotation(180))
    assert res < 1e-10
    for g in [rotation(90), reflection(0), rotation(60)]:
        assert RFF.lift(g)[1] > 0.1


def test_small_sigma_makes_non_liftable_look_liftable():
    """The documented reason for sigma = 10: least squares nearly fits a 90-degree rotation at small sigma."""
    small = RandomFourierPE(sigma=0.3).lift(rotation(90))[1]
    large = RandomFourierPE(sigma=10.0).lift(rotation(90))[1]
    assert small < 1e-6 < 0.1 < large
    assert RandomFourierPE(sigma=0.3).exact_lift(rotation(90)) is None


@settings(max_examples=30, deadline=None)
@given(i=st.integers(0, 15), j=st.integers(0, 15), enc_idx=st.integers(0, 2), seed=st.integers(0, 1000))
def test_lift_homomorphism_and_equivariance(i, j, enc_idx, seed):
    enc = ENCODINGS[enc_idx]
    els = candidate_elements()
    g, h = els[i], els[j]
    x = _fresh_points(64, seed)
    if enc.exact_lift(g) is None or enc.exact_lift(h) is None:
        return
    rg, rh = enc.lift(g)[0], enc.lift(h)[0]
    gh = compose(g, h)
    rgh, res = enc.lift(gh)
    assert res < 1e-10
    assert torch.allclose(rg @ rh, rgh, atol=1e-12)
    # phi(g x) = rho(g) phi(x) on fresh points outside the fitting box too
    assert torch.allclose(enc(x @ g.matrix.T), enc(x) @ rg.T, atol=1e-9)
    # exact lifts are orthogonal
    assert torch.allclose(rg.T @ rg, torch.eye(48, dtype=torch.float64), atol=1e-12)


def test_least_squares_lift_is_not_equivariant():
    x = _fresh_points(256, 7)
    rho, res = DYADIC.lift(rotation(60))
    err = (DYADIC(x @ rotation(60).matrix.T) - DYADIC(x) @ rho.T).norm() / DYADIC(x).norm()
    assert res > 0.1 and err > 0.1


def test_liftable_set_and_table():
    names = {g.name for g in liftable_set(DYADIC, candidate_elements())}
    assert names == {g.name for g in dihedral(4)}
    assert {g.name for g in TRI.liftable_set(candidate_elements())} == {g.name for g in dihedral(6)}
    df = lift_table(ENCODINGS, candidate_elements())
    assert len(df) == 48 and set(df.columns) >= {"encoding", "element", "residual", "liftable"}
    assert (df["liftable"] == df["exact"]).all()


def test_custom_encoding_with_phases_lifts_pi():
    # a hand-made encoding: two frequencies with non-zero phases; pi rotation is a reflection block
    enc = FourierPE(torch.tensor([[3.0, 1.0], [-2.0, 5.0]]), torch.tensor([0.4, 2.0]), name="custom")
    rho, res = enc.lift(rotation(180))
    assert res < 1e-12
    x = _fresh_points(32)
    assert torch.allclose(enc(-x), enc(x) @ rho.T, atol=1e-12)


def test_lift_is_a_homomorphism_on_all_liftable_pairs():
    els = candidate_elements()
    for enc in ENCODINGS:
        rho = {g.name: enc.exact_lift(g) for g in els}
        lifted = [g for g in els if rho[g.name] is not None]
        for g in lifted:
            for h in lifted:
                gh = compose(g, h).name
                assert rho.get(gh) is not None, (enc.name, g.name, h.name)  # closed under products
                assert torch.allclose(rho[g.name] @ rho[h.name], rho[gh], atol=1e-12)
