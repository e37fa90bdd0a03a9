"""Property, reference and stress tests for hgutils.manifolds.lorentz (curvature -c, k = 1/c)."""

from __future__ import annotations

import math

import geoopt
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.manifolds import lorentz as L

D64 = torch.float64
SET = settings(max_examples=30, deadline=None)
curv = st.floats(0.1, 10.0)
seeds = st.integers(0, 2**31 - 1)


def rand_points(gen, shape, n, c, scale=1.0, dtype=D64):
    """Points exp_o(u) with u ~ N(0, scale^2/(n c)) per coordinate: distances O(scale) in units 1/sqrt(c)."""
    u = torch.randn(*shape, n + 1, generator=gen, dtype=dtype) * scale / math.sqrt(c * n)
    u[..., 0] = 0
    return L.expmap0(u, c)


def rand_tangent(gen, x, c, scale=1.0):
    """A tangent vector at x (Gaussian projected onto T_x: v + c<x,v> x) with Lorentz norm
    uniform in [0.2, 1] * scale / sqrt(c)."""
    v = torch.randn(x.shape, generator=gen, dtype=x.dtype)
    v = v + c * L.inner(x, v, keepdim=True) * x
    r = (0.2 + 0.8 * torch.rand(x.shape[:-1] + (1,), generator=gen, dtype=x.dtype)) * scale / math.sqrt(c)
    return v / torch.sqrt(L.inner(v, v, keepdim=True)) * r


def mobius_add(x, y, c):
    """Ganea et al. (2018), Eq. 2 (Möbius addition), written independently of the library."""

    xy = (x * y).sum(-1, keepdim=True)
    x2 = (x * x).sum(-1, keepdim=True)
    y2 = (y * y).sum(-1, keepdim=True)
    num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y
    return num / (1 + 2 * c * xy + c**2 * x2 * y2)


def poincare_dist(x, y, c):
    w = mobius_add(-x, y, c)
    return 2 / math.sqrt(c) * torch.atanh(math.sqrt(c) * w.norm(dim=-1))


def gen_of(seed):
    return torch.Generator().manual_seed(seed)


def close(a, b, rtol=1e-10):
    scale = max(1.0, float(b.abs().max()))
    assert float((a - b).abs().max()) <= rtol * scale, float((a - b).abs().max())


# ---------------------------------------------------------------- identities (hypothesis, float64)


@SET
@given(c=curv, seed=seeds)
def test_points_on_manifold_and_exp_log_inverse(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (6,), 4, c, scale=2.0)
    L.check_point(x, c)
    close(L.expmap0(L.logmap0(x, c), c), x)
    y = rand_points(g, (6,), 4, c, scale=2.0)
    u = L.logmap(x, y, c)
    assert float(L.inner(x, u).abs().max()) < 1e-9 * float(x.abs().max() * u.abs().max() + 1)
    # exp_x(log_x y) rebuilds y from terms of size cosh(sqrt(c) d) |x| that cancel, so in float64 its
    # error grows like (|x| cosh(sqrt(c) d))^2 eps: the bound scales with that, row by row
    err = (L.expmap(x, u, c) - y).abs().amax(-1)
    cond = x.abs().amax(-1) * torch.cosh(math.sqrt(c) * L.dist(x, y, c))
    assert bool((err <= 5e-14 * cond**2 + 1e-12).all()), (err / cond**2).max()
    v = rand_tangent(g, x, c)
    close(L.logmap(x, L.expmap(x, v, c), c), v, 1e-8)


@SET
@given(c=curv, seed=seeds)
def test_dist_of_expmap_is_tangent_norm_and_transport_is_isometric(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (5,), 3, c, scale=1.5)
    y = rand_points(g, (5,), 3, c, scale=1.5)
    u, v = rand_tangent(g, x, c), rand_tangent(g, x, c)
    nu = torch.sqrt(L.inner(u, u))
    close(L.dist(x, L.expmap(x, u, c), c), nu, 1e-9)
    pu, pv = L.transp(x, y, u, c), L.transp(x, y, v, c)
    close(L.inner(pu, pv), L.inner(u, v), 1e-9)
    close(L.inner(y, pu), torch.zeros(5, dtype=D64), 1e-9)
    # transporting the log back gives minus the reverse log
    close(L.transp(x, y, L.logmap(x, y, c), c), -L.logmap(y, x, c), 1e-8)


@SET
@given(c=curv, seed=seeds)
def test_poincare_maps_are_isometries_and_inverse(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (7,), 3, c, scale=2.0)
    y = rand_points(g, (7,), 3, c, scale=2.0)
    p, q = L.to_poincare(x, c), L.to_poincare(y, c)
    assert float((p.norm(dim=-1) * math.sqrt(c)).max()) < 1
    close(poincare_dist(p, q, c), L.dist(x, y, c), 1e-9)
    close(L.from_poincare(p, c), x, 1e-9)


@SET
@given(c=curv, seed=seeds)
def test_gyroadd_is_mobius_addition_through_the_map(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (6,), 4, c, scale=2.0)
    y = rand_points(g, (6,), 4, c, scale=2.0)
    z = L.gyroadd(x, y, c)
    L.check_point(z, c)
    want = mobius_add(L.to_poincare(x, c), L.to_poincare(y, c), c)
    close(L.to_poincare(z, c), want, 1e-9)
    # left cancellation (-x) + (x + y) = y
    close(L.gyroadd(L.gyroinv(x), z, c), y, 1e-8)


@SET
@given(c=curv, seed=seeds)
def test_gyro_identities(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (6,), 3, c, scale=2.0)
    o = L.origin(3, c, dtype=D64).expand_as(x)
    close(L.gyroadd(o, x, c), x)
    close(L.gyroadd(x, o, c), x)
    close(L.gyroadd(L.gyroinv(x), x, c), o, 1e-9)
    close(L.gyroscalar(1.0, x, c), x)
    close(L.gyroscalar(0.0, x, c), o)
    # r (x) x agrees with geoopt's Möbius scalar multiplication through the map
    ball = geoopt.PoincareBall(c=torch.tensor(c, dtype=D64))
    r = torch.tensor(0.37, dtype=D64)
    close(L.to_poincare(L.gyroscalar(r, x, c), c), ball.mobius_scalar_mul(r, L.to_poincare(x, c)), 1e-9)
    # scalar distributivity (r1 + r2) x = r1 x + r2 x
    close(L.gyroscalar(1.7, x, c), L.gyroadd(L.gyroscalar(0.5, x, c), L.gyroscalar(1.2, x, c), c), 1e-8)


@SET
@given(c=curv, seed=seeds)
def test_centroid_on_manifold_and_minimises_squared_lorentz_distance(c, seed):
    g = gen_of(seed)
    x = rand_points(g, (3, 8), 4, c, scale=1.5)
    w = torch.rand(3, 8, generator=g, dtype=D64) + 0.1
    for weights in (None, w):
        mu = L.centroid(x, c, weights)
        assert mu.shape == (3, 5)
        L.check_point(mu, c)
        ww = torch.full((3, 8), 1 / 8, dtype=D64) if weights is None else weights

        def cost(m, ww=ww):
            return (ww * (-2 / c - 2 * L.inner(x, m.unsqueeze(-2)))).sum(-1)

        base = cost(mu)
        for _ in range(5):
            m2 = L.expmap(mu, rand_tangent(g, mu, c, scale=0.05), c)
            assert bool(torch.all(cost(m2) >= base - 1e-12 * base.abs().max()))
    # identical points -> that point; permutation invariance
    same = x[:, :1].expand(3, 5, 5)
    close(L.centroid(same, c), x[:, 0], 1e-10)
    perm = torch.randperm(8, generator=g)
    close(L.centroid(x[:, perm], c, w[:, perm]), L.centroid(x, c, w))


def test_centroid_along_other_dim():
    g = gen_of(3)
    x = rand_points(g, (4, 2), 3, 1.0)
    close(L.centroid(x, 1.0, dim=0), L.centroid(x.transpose(0, 1), 1.0))


@SET
@given(c=curv, seed=seeds)
def test_hyperplane_logits_zero_on_plane_and_match_poincare_dist2plane(c, seed):
    g = gen_of(seed)
    n, out = 3, 4
    z = torch.randn(out, n, generator=g, dtype=D64)
    a = torch.randn(out, generator=g, dtype=D64) / math.sqrt(c)
    sk = 1 / math.sqrt(c)
    zh = z / z.norm(dim=-1, keepdim=True)
    # the plane passes through p = exp_o(a z_hat)
    p = torch.cat([(sk * torch.cosh(a / sk))[:, None], sk * torch.sinh(a / sk)[:, None] * zh], -1)
    v = L.hyperplane_logits(p, z, a, c)  # [out, out]; diagonal is each plane's own point
    assert float(v.diagonal().abs().max()) < 1e-9 * float(v.abs().max() + 1)
    # v / ||z|| equals the Poincaré signed distance to the plane through p_P with normal z
    x = rand_points(g, (6,), n, c, scale=2.0)
    v = L.hyperplane_logits(x, z, a, c)
    pp = L.to_poincare(p, c)  # [out, n]
    xp = L.to_poincare(x, c)[:, None, :]  # [6, 1, n]
    w = mobius_add(-pp, xp, c)
    arg = 2 * math.sqrt(c) * (w * z).sum(-1) / ((1 - c * (w * w).sum(-1)) * z.norm(dim=-1))
    close(v / z.norm(dim=-1), torch.asinh(arg) / math.sqrt(c), 1e-8)


def test_hyperplane_logits_flat_limit_is_euclidean_affine():
    """As c -> 0 with x_s fixed: v -> <z, x_s> - a ||z|| (weight z, bias -a||z||), error O(c)."""
    g = gen_of(0)
    xs = torch.randn(10, 5, generator=g, dtype=D64)
    z = torch.randn(3, 5, generator=g, dtype=D64)
    a = torch.randn(3, generator=g, dtype=D64)
    lin = xs @ z.T - a * z.norm(dim=-1)
    errs = []
    for c in (1e-2, 1e-4, 1e-6):
        x = L.project(torch.cat([torch.zeros(10, 1, dtype=D64), xs], -1), c)
        errs.append(float((L.hyperplane_logits(x, z, a, c) - lin).abs().max()))
    assert errs[2] < 1e-4 and errs[1] < 1e-2
    assert errs[2] < errs[1] / 50 < errs[0] / 2500


def test_frechet_dispersion_matches_definition():
    g = gen_of(1)
    x = rand_points(g, (2, 6), 3, 2.0)
    mu = L.centroid(x, 2.0)
    d = torch.stack([L.dist(x[:, i], mu, 2.0) for i in range(6)], -1)
    close(L.frechet_dispersion(x, mu, 2.0, squared=True), (d**2).mean(-1))
    close(L.frechet_dispersion(x, mu, 2.0, squared=False), d.mean(-1))


# ---------------------------------------------------------------- geoopt agreement (float64)


@SET
@given(c=curv, seed=seeds)
def test_agrees_with_geoopt(c, seed):
    g = gen_of(seed)
    M = geoopt.Lorentz(k=torch.tensor(1 / c, dtype=D64))
    x = rand_points(g, (6,), 4, c, scale=2.0)
    y = rand_points(g, (6,), 4, c, scale=2.0)
    u = torch.randn(6, 5, generator=g, dtype=D64) / math.sqrt(c)
    u[:, 0] = 0
    v = rand_tangent(g, x, c)
    close(L.inner(x, y), M.inner(None, x, y))
    close(L.dist(x, y, c), M.dist(x, y))
    close(L.expmap0(u, c), M.expmap0(u))
    close(L.logmap0(x, c), M.logmap0(x))
    close(L.expmap(x, v, c), M.expmap(x, v))
    close(L.logmap(x, y, c), M.logmap(x, y))
    close(L.transp(x, y, v, c), M.transp(x, y, v))
    close(L.project(x + 0.1 * u, c), M.projx(x + 0.1 * u))
    if abs(c - 1) < 1e-12:  # geoopt's lorentz_to_poincare lands in the unit ball for any k
        close(L.to_poincare(x, c), geoopt.manifolds.lorentz.math.lorentz_to_poincare(x, M.k))


def test_to_poincare_agrees_with_geoopt_at_c1():
    g = gen_of(2)
    x = rand_points(g, (6,), 4, 1.0, scale=2.0)
    close(L.to_poincare(x, 1.0), geoopt.manifolds.lorentz.math.lorentz_to_poincare(x, torch.tensor(1.0, dtype=D64)))


# ---------------------------------------------------------------- gradients


def test_gradcheck_float64():
    g = gen_of(4)
    c = 1.7
    x = rand_points(g, (3,), 3, c).requires_grad_()
    y = rand_points(g, (3,), 3, c).requires_grad_()
    u = torch.randn(3, 4, generator=g, dtype=D64, requires_grad=True)
    xs = rand_points(g, (3, 4), 3, c).requires_grad_()
    w = (torch.rand(3, 4, generator=g, dtype=D64) + 0.2).requires_grad_()
    z = torch.randn(2, 3, generator=g, dtype=D64, requires_grad=True)
    a = torch.randn(2, generator=g, dtype=D64, requires_grad=True)
    r = torch.tensor(0.6, dtype=D64, requires_grad=True)
    cc = torch.tensor(c, dtype=D64, requires_grad=True)
    checks = [
        (lambda x, y: L.inner(x, y), (x, y)),
        (lambda x, y: L.dist(x, y, c), (x, y)),
        (lambda u: L.expmap0(u, c), (u,)),
        (lambda x: L.logmap0(x, c), (x,)),
        (lambda x, u: L.expmap(x, u, c), (x, u)),
        (lambda x, y: L.logmap(x, y, c), (x, y)),
        (lambda x, y, u: L.transp(x, y, u, c), (x, y, u)),
        (lambda u: L.project(u, c), (u,)),
        (lambda x: L.to_poincare(x, c), (x,)),
        (lambda u: L.from_poincare(0.3 * u[:, 1:] / u.norm(), c), (u,)),
        (lambda x, y: L.gyroadd(x, y, c), (x, y)),
        (lambda x: L.gyroinv(x), (x,)),
        (lambda r, x: L.gyroscalar(r, x, c), (r, x)),
        (lambda xs, w: L.centroid(xs, c, w), (xs, w)),
        (lambda x, z, a: L.hyperplane_logits(x, z, a, c), (x, z, a)),
        (lambda xs, y: L.frechet_dispersion(xs, y, c, squared=True), (xs, y)),
        (lambda xs, y: L.frechet_dispersion(xs, y, c, squared=False), (xs, y)),
        (lambda x, y, cc: L.dist(x, y, cc), (x, y, cc)),
    ]
    for fn, args in checks:
        assert torch.autograd.gradcheck(fn, args), fn


def test_zero_vectors_are_safe():
    for dtype in (torch.float32, D64):
        u = torch.zeros(2, 4, dtype=dtype, requires_grad=True)
        x = L.expmap0(u, 2.0)
        assert torch.equal(x.detach(), L.origin(3, 2.0, dtype=dtype).expand(2, 4))
        (x.sum() + L.logmap0(x, 2.0).sum() + L.gyroscalar(0.5, x, 2.0).sum()).backward()
        assert torch.isfinite(u.grad).all()
        # d expmap0 / du_s at 0 is the identity
        jac = torch.autograd.functional.jacobian(lambda v: L.expmap0(v, 2.0)[1:], torch.zeros(4, dtype=dtype))
        assert torch.allclose(jac[:, 1:], torch.eye(3, dtype=dtype))
        o = L.origin(3, 2.0, dtype=dtype).requires_grad_()
        d = L.dist(o, o.detach(), 2.0) + L.logmap(o, o.detach(), 2.0).sum()
        d.backward()
        assert abs(d.item()) < 1e-6 and torch.isfinite(o.grad).all()
        zz = torch.zeros(2, 3, dtype=dtype)
        v = L.hyperplane_logits(L.origin(3, 2.0, dtype=dtype), zz, torch.zeros(2, dtype=dtype), 2.0)
        assert torch.equal(v, torch.zeros(2, dtype=dtype))


def test_float32_stress_large_times():
    """Points with time ~1e4 in float32: every op finite, gradients finite, constraint kept."""
    torch.manual_seed(0)
    c = 1.0
    dirs = torch.randn(16, 8)
    dirs = dirs / dirs.norm(dim=-1, keepdim=True)
    th = torch.linspace(0.0, math.acosh(1e4), 16)[:, None]
    u = torch.cat([torch.zeros(16, 1), th * dirs], -1).requires_grad_()
    x = L.expmap0(u, c)
    assert float(x[:, 0].max()) > 9e3
    y = L.expmap0(u.flip(0), c)
    z = torch.randn(4, 8)
    a = torch.randn(4)
    outs = [
        L.dist(x, y, c),
        L.logmap0(x, c),
        L.logmap(x, y, c),
        L.gyroadd(x, y, c),
        L.gyroscalar(0.5, x, c),
        L.centroid(x[None], c),
        L.hyperplane_logits(x, z, a, c),
        L.transp(x, y, L.logmap0(y, c), c),
        L.to_poincare(x, c),
        L.frechet_dispersion(x[None], y[:1], c),
    ]
    for o in outs:
        assert torch.isfinite(o).all()
    for pt in (L.gyroadd(x, y, c), L.gyroscalar(0.5, x, c), L.centroid(x[None], c), x):
        L.check_point(pt, c)  # float32 tolerance 1e-4 relative to 1/c + x_t^2
    sum(o.float().sum() for o in outs).backward()
    assert torch.isfinite(u.grad).all()


# ---------------------------------------------------------------- errors


def test_bad_input_raises():
    x = L.origin(3, 1.0).expand(2, 4)
    with pytest.raises(ValueError, match="curvature"):
        L.dist(x, x, 0.0)
    with pytest.raises(ValueError, match="curvature"):
        L.expmap0(x, -1.0)
    with pytest.raises(ValueError, match="curvature"):
        L.dist(x, x, torch.tensor([1.0, -2.0])[:, None])
    with pytest.raises(ValueError, match="ambient dimension"):
        L.gyroadd(x, torch.zeros(2, 5), 1.0)
    with pytest.raises(ValueError, match=r"\[\.\.\., n\+1\]"):
        L.logmap0(torch.zeros(3, 1), 1.0)
    with pytest.raises(ValueError, match="hyperboloid"):
        L.check_point(torch.tensor([[1.0, 1.0, 0.0]]), 1.0)
    with pytest.raises(ValueError, match="hyperboloid"):
        L.check_point(-x, 1.0)
    with pytest.raises(ValueError, match="z must be"):
        L.hyperplane_logits(x, torch.zeros(2, 4), torch.zeros(2), 1.0)
    with pytest.raises(ValueError, match="a must be"):
        L.hyperplane_logits(x, torch.zeros(2, 3), torch.zeros(3), 1.0)
    with pytest.raises(ValueError, match="dim"):
        L.centroid(x, 1.0, dim=-1)
    with pytest.raises(ValueError, match="weights"):
        L.centroid(x[None], 1.0, weights=torch.ones(3))
    with pytest.raises(ValueError, match="mu must"):
        L.frechet_dispersion(x[None], x, 1.0)
    # keep-dim (geoopt-style) per-point scalars [B, 1] next to points [B, n+1] are rejected, as in poincare
    with pytest.raises(ValueError, match="c must be a number or a tensor broadcastable"):
        L.expmap0(x, torch.ones(2, 1))
    with pytest.raises(ValueError, match="c must be a number or a tensor broadcastable"):
        L.dist(x, x, torch.ones(2, 1))
    with pytest.raises(ValueError, match="r must be a number or a tensor broadcastable"):
        L.gyroscalar(torch.ones(2, 1), x, 1.0)
    with pytest.raises(ValueError, match="centroid batch shape"):
        L.centroid(x[None], torch.ones(1, 1))
    assert L.gyroscalar(torch.ones(2), x, 1.0).shape == (2, 4)
    assert L.dist(x, x, torch.ones(2)).shape == (2,)
