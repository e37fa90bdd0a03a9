"""Exact SDFs and true symmetry groups of the notebook-06 shapes (hgutils.symmetry.shapes)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.symmetry.groups import candidate_elements, dihedral, reflection, rotation
from hgutils.symmetry.shapes import CircleShape, PolygonShape, default_shapes, get_shape, regular_polygon

SHAPES = {s.name: s for s in default_shapes()}
EXPECTED_GROUPS = {
    "square": {g.name for g in dihedral(4)},
    "triangle": {"R0", "R120", "R240", "S30", "S90", "S150"},
    "hexagon": {g.name for g in dihedral(6)},
    "circle": {g.name for g in candidate_elements()},
    "rectangle": {"R0", "R180", "S0", "S90"},
    "asymmetric": {"R0"},
}


def test_known_distances():
    sq = SHAPES["square"]
    pts = torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.2], [0.3, 0.0]], dtype=torch.float64)
    expect = torch.tensor([-0.5, 0.5, math.sqrt(0.5), 0.0, -0.2], dtype=torch.float64)
    assert torch.allclose(sq.sdf(pts), expect, atol=1e-12)
    circ = SHAPES["circle"]
    assert torch.allclose(circ.sdf(torch.tensor([[0.0, 0.0], [0.0, 2.0]])), torch.tensor([-0.5, 1.5]))
    tri = SHAPES["triangle"]  # inradius = R/2 = 0.3; centre distance -0.3; vertex distance 0
    v = torch.tensor([[0.0, 0.6], [0.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    assert torch.allclose(tri.sdf(v), torch.tensor([0.0, -0.3, 0.4], dtype=torch.float64), atol=1e-12)
    hexa = SHAPES["hexagon"]  # apothem = R cos 30
    assert torch.allclose(
        hexa.sdf(torch.zeros(1, 2, dtype=torch.float64)),
        torch.tensor([-0.6 * math.cos(math.pi / 6)], dtype=torch.float64),
        atol=1e-12,
    )
    rect = SHAPES["rectangle"]
    assert torch.allclose(
        rect.sdf(torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)),
        torch.tensor([-0.35, 0.65, 0.4], dtype=torch.float64),
        atol=1e-12,
    )


@settings(max_examples=30, deadline=None)
@given(x=st.floats(-1.2, 1.2), y=st.floats(-1.2, 1.2), which=st.sampled_from(sorted(SHAPES)))
def test_sdf_is_a_distance(x, y, which):
    """|sdf| equals the distance to a dense boundary sample; 1-Lipschitz; sign matches inside."""
    shape = SHAPES[which]
    p = torch.tensor([[x, y]], dtype=torch.float64)
    bd = shape.boundary_points(20000, torch.Generator().manual_seed(0), torch.float64)
    d = shape.sdf(p)[0].item()
    dense = (bd - p).norm(dim=-1).min().item()
    assert abs(abs(d) - dense) < 0.02
    q = p + torch.tensor([[0.013, -0.007]], dtype=torch.float64)
    assert abs(shape.sdf(q)[0].item() - d) <= q.sub(p).norm().item() + 1e-12


def test_true_groups():
    for name, shape in SHAPES.items():
        got = {g.name for g in shape.symmetry_subset(candidate_elements())}
        assert got == EXPECTED_GROUPS[name], name
    assert SHAPES["circle"].is_symmetry(rotation(17.3))
    assert not SHAPES["square"].is_symmetry(rotation(17.3))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_sdf_symmetric_exactly_under_its_group(name):
    shape = SHAPES[name]
    x = torch.rand(500, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 2 - 1
    f = shape.sdf(x)
    for g in candidate_elements():
        gap = (shape.sdf(x @ g.matrix.T) - f).abs().max().item()
        if shape.is_symmetry(g):
            assert gap < 1e-12, (name, g.name)
        else:
            assert gap > 1e-2, (name, g.name)  # the controls: elements outside G_true move the SDF


def test_sampler():
    gen = torch.Generator().manual_seed(0)
    x, y = SHAPES["triangle"].sample(400, gen, near_fraction=0.5, radius=1.0)
    assert x.shape == (400, 2) and y.shape == (400,) and x.dtype == torch.float32
    assert (x[:200].norm(dim=-1) <= 1.0 + 1e-6).all()
    assert torch.allclose(y, SHAPES["triangle"].sdf(x.double()).float(), atol=1e-6)
    assert y[200:].abs().max() < 0.3  # jittered boundary points stay close
    x2, _ = SHAPES["triangle"].sample(400, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"\[\.\.\., 2\]"):
        SHAPES["square"].sdf(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="orthogonal"):
        SHAPES["hexagon"].is_symmetry(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="orthogonal"):
        SHAPES["circle"].is_symmetry(torch.tensor([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError):
        PolygonShape(torch.zeros(2, 2), "bad")
    with pytest.raises(ValueError):
        regular_polygon(2, 1.0, 0.0, "bad")
    with pytest.raises(ValueError):
        CircleShape(-1.0)
    with pytest.raises(ValueError, match="unknown shape"):
        get_shape("star")
    with pytest.raises(ValueError):
        SHAPES["square"].sample(0)


def test_nonconvex_polygon_symmetry_uses_edges():
    # an L-shaped hexagon, symmetric about the diagonal y = x through the origin
    v = torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 0.3], [0.3, 0.3], [0.3, 1.0], [0.0, 1.0]])
    poly = PolygonShape(v, "L")
    assert poly.is_symmetry(reflection(45))
    assert not poly.is_symmetry(rotation(90))
    assert poly.sdf(torch.tensor([[0.6, 0.6]]))[0] > 0  # the notch is outside
    # same vertex set, different edges (a self-consistent reordering): S45 maps vertices onto
    # vertices but not edges onto edges, so it is not a symmetry of that polygon
    w = v[[0, 1, 2, 4, 3, 5]]
    assert not PolygonShape(w, "bowtie-ish").is_symmetry(reflection(45))
