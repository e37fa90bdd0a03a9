"""Exact SDFs and true symmetry groups of the notebook-06 shapes (hgutils.symmetry.shapes)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.symmetry.domains import (
    DiskDomain,
    SquareDomain,
    default_wavevectors,
    density_symmetry_profile,
    density_symmetry_z,
    get_domain,
)
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


# --------------------------------------------------------------------------------------------
# training domains and the symmetry of the sampling density
# --------------------------------------------------------------------------------------------
def _hist_chi2(a: torch.Tensor, b: torch.Tensor, bins: int = 12, lim: float = 1.5) -> float:
    """Two-sample chi-square per degree of freedom of 2D histograms of two independent samples of equal size
    (about 1 when they come from the same density)."""
    edges = torch.linspace(-lim, lim, bins + 1, dtype=torch.float64)
    ha = torch.histogramdd(a, bins=[edges, edges]).hist.flatten()
    hb = torch.histogramdd(b, bins=[edges, edges]).hist.flatten()
    keep = (ha + hb) > 0
    return float((((ha - hb) ** 2)[keep] / (ha + hb)[keep]).sum() / keep.sum())


def _moments(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mixed moments E[x1^a x2^b], 1 <= a + b <= 4, and their standard errors."""
    cols = [x[:, 0] ** a * x[:, 1] ** b for a in range(5) for b in range(5) if 1 <= a + b <= 4]
    m = torch.stack(cols, dim=1)
    return m.mean(0), m.std(0) / math.sqrt(x.shape[0])


def test_square_sampler_density_is_exactly_d4_invariant():
    """Histograms, moments and Fourier moments of g·X match X for every g in D4 within sampling error; a 30°
    rotation (not in D4) is detectably different by all three."""
    dom = SquareDomain(1.0)
    x = dom.sample(30000, torch.Generator().manual_seed(0))
    y = dom.sample(30000, torch.Generator().manual_seed(1))  # an independent sample for the histogram test
    assert dom.contains(x).all() and x.abs().max() > 0.99
    m0, se0 = _moments(x)
    r30 = rotation(30)
    z = density_symmetry_profile(x, [*dihedral(4), r30])
    for g, zg in zip(dihedral(4), z.tolist()):
        assert _hist_chi2(x, y @ g.matrix.T) < 1.4, g.name
        mg, seg = _moments(y @ g.matrix.T)
        assert ((mg - m0).abs() / (seg**2 + se0**2).sqrt()).max() < 5.0, g.name
        assert zg < 5.5, g.name
    assert _hist_chi2(x, y @ r30.matrix.T) > 20.0
    mg, seg = _moments(y @ r30.matrix.T)
    assert ((mg - m0).abs() / (seg**2 + se0**2).sqrt()).max() > 20.0  # E[x1^4] is 1/5 vs 1/4 after 30°
    assert z[-1] > 20.0


_DISK_X = DiskDomain(1.0).sample(20000, torch.Generator().manual_seed(2))
_DISK_Y = DiskDomain(1.0).sample(20000, torch.Generator().manual_seed(3))


@settings(max_examples=6, deadline=None)
@given(angle=st.floats(0.0, 360.0), reflect=st.booleans())
def test_disk_sampler_density_is_o2_invariant(angle, reflect):
    """The disk's density matches itself under any rotation or reflection (histograms and Fourier moments)."""
    x, y = _DISK_X, _DISK_Y
    g = reflection(angle / 2) if reflect else rotation(angle)
    assert DiskDomain(1.0).is_symmetry(g)
    assert (x.norm(dim=-1) <= 1.0).all()
    assert _hist_chi2(x, y @ g.matrix.T) < 1.4
    assert density_symmetry_z(x, g) < 5.5


def test_shape_sampler_density_group_is_g_true_cap_domain():
    """Shape.sample's density (bulk + jittered boundary) is invariant exactly under sampling_symmetry:
    G_true on the disk, G_true ∩ D4 on the square; the z statistic separates respected from broken elements."""
    els = candidate_elements()
    for name in ("triangle", "hexagon", "square"):
        shape = SHAPES[name]
        for dom in ("disk", "square"):
            x, _ = shape.sample(32768, torch.Generator().manual_seed(4), domain=dom, dtype=torch.float64)
            z = density_symmetry_profile(x, els)
            for g, zg in zip(els, z.tolist()):
                exact = shape.sampling_symmetry(g, dom)
                assert exact == (shape.is_symmetry(g) and (dom == "disk" or SquareDomain().is_symmetry(g)))
                if exact:
                    assert zg < 5.5, (name, dom, g.name, zg)
                else:
                    assert zg > 8.0, (name, dom, g.name, zg)
    # the triangle on the square keeps only the identity and the reflection about the vertical axis
    tri = SHAPES["triangle"]
    assert {g.name for g in els if tri.sampling_symmetry(g, "square")} == {"R0", "S90"}
    # the circle on the disk: any orthogonal map
    assert SHAPES["circle"].sampling_symmetry(rotation(17.3), "disk")
    # with only bulk points (near_fraction 0) the square's density is D4 whatever the shape
    assert SHAPES["asymmetric"].sampling_symmetry(rotation(90), "square", near_fraction=0.0)
    assert not SHAPES["asymmetric"].sampling_symmetry(rotation(90), "square", near_fraction=0.5)


def test_sampler_domain_option_and_disk_default_unchanged():
    gen = lambda: torch.Generator().manual_seed(5)  # noqa: E731
    x_sq, y_sq = SHAPES["triangle"].sample(4000, gen(), domain="square")
    bulk = x_sq[:2000]
    assert (bulk.abs().amax(dim=-1) <= 1.0).all() and (bulk.norm(dim=-1) > 1.0).any()  # corners of the box
    x_d, _ = SHAPES["triangle"].sample(4000, gen())
    assert (x_d[:2000].norm(dim=-1) <= 1.0 + 1e-6).all()
    assert torch.equal(x_d, SHAPES["triangle"].sample(4000, gen(), domain=DiskDomain(1.0))[0])
    assert torch.allclose(y_sq, SHAPES["triangle"].sdf(x_sq.double()).float(), atol=1e-6)


def test_domain_groups_and_helpers():
    sq, disk = SquareDomain(), DiskDomain()
    assert {g.name for g in candidate_elements() if sq.is_symmetry(g)} == {g.name for g in dihedral(4)}
    assert all(disk.is_symmetry(g) for g in candidate_elements())
    assert not sq.is_symmetry(rotation(30)) and sq.is_symmetry(torch.tensor([[0.0, -1.0], [-1.0, 0.0]]))
    assert isinstance(get_domain("square", 2.0), SquareDomain) and get_domain("square", 2.0).half_side == 2.0
    assert get_domain(disk) is disk
    k = default_wavevectors()
    assert k.shape == (120, 2)
    x = disk.sample(500, torch.Generator().manual_seed(0))
    assert density_symmetry_z(x, rotation(0)) == 0.0  # no difference at all under the identity
    prof = density_symmetry_profile(x, [rotation(0), rotation(90)])
    assert prof.shape == (2,) and prof[0] == 0.0
    assert density_symmetry_z(x, rotation(90)) == pytest.approx(float(prof[1]))


def test_domain_bad_inputs():
    with pytest.raises(ValueError, match=r"domain must be one of \('disk', 'square'\)"):
        get_domain("torus")
    with pytest.raises(ValueError, match="domain must be one of"):
        SHAPES["square"].sample(10, domain="annulus")
    with pytest.raises(ValueError, match="radius must be positive"):
        DiskDomain(0.0)
    with pytest.raises(ValueError, match="half side must be positive"):
        SquareDomain(-1.0)
    with pytest.raises(ValueError, match="non-negative int"):
        SquareDomain().sample(-1)
    with pytest.raises(ValueError, match="orthogonal"):
        SquareDomain().is_symmetry(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"\[\.\.\., 2\]"):
        DiskDomain().contains(torch.zeros(4, 3))
    with pytest.raises(ValueError, match=r"sample \[n, 2\]"):
        density_symmetry_z(torch.zeros(2, 3, 2), rotation(90))
    with pytest.raises(ValueError, match="at least 2 points"):
        density_symmetry_z(torch.zeros(1, 2), rotation(90))
    with pytest.raises(ValueError, match=r"wavevectors must be \[m, 2\]"):
        density_symmetry_z(torch.zeros(5, 2), rotation(90), torch.zeros(3))
    with pytest.raises(ValueError, match="radii"):
        default_wavevectors(radii=(1.0, -2.0))
    with pytest.raises(ValueError, match="near_fraction"):
        SHAPES["square"].sampling_symmetry(rotation(90), "disk", near_fraction=1.5)
