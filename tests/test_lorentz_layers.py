"""Tests for the ILNN layers (hgutils.nn.lorentz) and the HCNN/GyroBN baselines."""

from __future__ import annotations

import math

import pytest
import scipy.special
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz import (
    PLFC,
    GyroBias,
    GyroLBN,
    LorentzActivation,
    LorentzAvgPool1d,
    LorentzConv1d,
    LorentzConv2d,
    LorentzDropout,
    LorentzGlobalAvgPool,
    LorentzMLR,
    LorentzResidual,
    asinh,
    boost,
    concat_factor,
    log_radius_concat,
    log_radius_scale,
    space_to_lorentz,
    to_lorentz,
)
from hgutils.nn.lorentz_baselines import (
    GyroBN,
    LorentzBN,
    LorentzConv2dHCNN,
    LorentzFC,
    PoincareLinear,
    karcher_mean,
)

D64 = torch.float64


def points(shape, n, c=1.0, max_time=1e4, dtype=torch.float32, seed=0):
    """Random points whose times span 1/sqrt(c) .. max_time (log-uniform geodesic radius)."""
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(*shape, n, generator=g, dtype=D64)
    d = d / d.norm(dim=-1, keepdim=True)
    rmax = math.acosh(max_time * math.sqrt(c)) / math.sqrt(c)
    r = torch.rand(*shape, 1, generator=g, dtype=D64) * rmax
    x = L.expmap0(torch.cat([torch.zeros(*shape, 1, dtype=D64), r * d], -1), c)
    return x.to(dtype)


def assert_on_manifold(y, c):
    L.check_point(y, c, rtol=1e-10 if y.dtype == D64 else 1e-4)


def layer_cases(c):
    return [
        ("PLFC", lambda: PLFC(6, 5, c), (16, 6)),
        ("GyroBias", lambda: GyroBias(6, c), (16, 6)),
        ("GyroLBN", lambda: GyroLBN(6, c), (16, 6)),
        ("GyroLBN-mean", lambda: GyroLBN(6, c, dispersion="mean"), (16, 6)),
        ("GyroLBN-ref", lambda: GyroLBN(6, c, dispersion="reference"), (16, 6)),
        ("GyroBN", lambda: GyroBN(6, c, iters=5), (16, 6)),
        ("LorentzBN", lambda: LorentzBN(6, c), (16, 6)),
        ("LorentzFC", lambda: LorentzFC(6, 5, c), (16, 6)),
        ("Act", lambda: LorentzActivation(F.relu, c), (16, 6)),
        ("Dropout", lambda: LorentzDropout(0.3, c), (16, 6)),
        ("GAP", lambda: LorentzGlobalAvgPool(c), (2, 3, 3, 6)),
        ("Pool1d", lambda: LorentzAvgPool1d(2, c), (2, 6, 6)),
        ("Conv2d", lambda: LorentzConv2d(6, 4, 3, padding=1, c=c), (2, 4, 4, 6)),
        ("Conv2d-div", lambda: LorentzConv2d(6, 4, 3, padding=1, c=c, scale_direction="divide"), (2, 4, 4, 6)),
        ("Conv2dHCNN", lambda: LorentzConv2dHCNN(6, 4, 3, padding=1, c=c), (2, 4, 4, 6)),
        ("Conv1d", lambda: LorentzConv1d(6, 4, 3, padding=1, c=c), (2, 7, 6)),
    ]


def perturb(mod):
    """Random non-default parameters so that biases/scales/offsets are exercised."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in mod.named_parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype) if name.split(".")[-1] != "s" else 0.2)


@pytest.mark.parametrize("c", [1.0, 0.3])
@pytest.mark.parametrize("dtype", [torch.float32, D64])
def test_every_layer_outputs_points_on_the_hyperboloid(c, dtype):
    for name, make, shape in layer_cases(c):
        torch.manual_seed(0)
        mod = make().to(dtype)
        perturb(mod)
        x = points(
            shape[:-1], shape[-1], c, max_time=1e4 if dtype == torch.float32 else 1e3, dtype=dtype
        ).requires_grad_()
        for train in (True, False):
            mod.train(train)
            y = mod(x)
            assert_on_manifold(y, c)
            assert torch.isfinite(y).all(), name
            (y[..., 1:].sum() + y[..., 0].mean()).backward()
            assert torch.isfinite(x.grad).all(), name
            for p in mod.parameters():
                assert p.grad is None or torch.isfinite(p.grad).all(), name
            x.grad = None
    res = LorentzResidual(c, "space")
    a, b = points((8,), 4, c, dtype=dtype), points((8,), 4, c, dtype=dtype, seed=2)
    assert_on_manifold(res(a, b), c)
    assert_on_manifold(LorentzResidual(c, "gyro")(a, b), c)


def test_gradcheck_float64():
    torch.manual_seed(0)
    c = 0.7
    x = points((5,), 3, c, max_time=20, dtype=D64).requires_grad_()
    img = points((2, 3, 3), 2, c, max_time=20, dtype=D64).requires_grad_()
    mods = [
        PLFC(3, 2, c),
        GyroBias(3, c),
        GyroLBN(3, c),
        GyroLBN(3, c, dispersion="mean"),
        GyroLBN(3, c, dispersion="reference"),
        LorentzBN(3, c),
        LorentzFC(3, 2, c),
        LorentzMLR(3, 4, c),
        LorentzActivation(torch.tanh, c),
    ]
    for m in mods:
        m = m.double()
        perturb(m)
        assert torch.autograd.gradcheck(lambda t, m=m: m(t), (x,)), m
    for m in (LorentzConv2d(2, 2, 2, c=c), LorentzConv2dHCNN(2, 2, 2, c=c), LorentzGlobalAvgPool(c)):
        m = m.double()
        perturb(m)
        assert torch.autograd.gradcheck(lambda t, m=m: m(t), (img,)), m
    # gradients w.r.t. the PLFC parameters
    m = PLFC(3, 2, c).double()
    perturb(m)

    def f(z, a, b):
        return torch.func.functional_call(m, {"z": z, "a": a, "b": b}, (x.detach(),))

    assert torch.autograd.gradcheck(f, tuple(p.detach().clone().requires_grad_() for p in (m.z, m.a, m.b)))


def test_plfc_flat_limit_is_affine_map():
    """c -> 0: y_s -> z x_s - a||z|| + b (error O(c))."""
    torch.manual_seed(0)
    xs = torch.randn(10, 4, dtype=D64)
    errs = []
    for c in (1e-2, 1e-4, 1e-6):
        m = PLFC(4, 3, c).double()
        with torch.no_grad():
            torch.manual_seed(1)
            m.z.copy_(torch.randn(3, 4))
            m.a.copy_(torch.randn(3))
            m.b.copy_(torch.randn(3))
        want = xs @ m.z.T - m.a * m.z.norm(dim=-1) + m.b
        y = m(space_to_lorentz(xs, c))
        errs.append(float((y[:, 1:] - want).abs().max()))
    assert errs[2] < 1e-4 and errs[2] < errs[1] / 30 < errs[0] / 900


def test_gyrolbn_flat_limit_is_isotropic_batch_norm():
    """c -> 0, Fréchet dispersion: y_s -> w + s (x_s - mean) / sqrt(mean ||x_s - mean||^2 + eps)."""
    torch.manual_seed(0)
    xs = torch.randn(32, 5, dtype=D64) * 2 + 1
    errs = []
    for c in (1e-3, 1e-5):
        bn = GyroLBN(5, c, dispersion="frechet", init_scale=0.8).double()
        with torch.no_grad():
            bn.w.copy_(torch.randn(5))
        y = bn(space_to_lorentz(xs, c))
        cen = xs - xs.mean(0)
        want = bn.w + 0.8 * cen / torch.sqrt((cen**2).sum(-1).mean() + bn.eps)
        errs.append(float((y[:, 1:] - want).abs().max()))
    assert errs[1] < 1e-3 and errs[1] < errs[0] / 30


@pytest.mark.parametrize("dispersion", ["mean", "frechet", "reference"])
def test_gyrolbn_training_statistics(dispersion):
    torch.manual_seed(0)
    c = 1.0
    x = points((256,), 6, c, max_time=3.0, dtype=D64) + 0.0
    x = L.gyroadd(L.expmap0(torch.tensor([0, 1.0, -0.5, 0.2, 0, 0, 0.3], dtype=D64), c).expand_as(x), x, c)
    bn = GyroLBN(6, c, dispersion=dispersion, init_scale=0.5).double()
    with torch.no_grad():
        bn.w.copy_(torch.tensor([0.3, -0.2, 0.1, 0.0, 0.5, -0.4]))
    y = bn(x)
    bias = L.expmap0(F.pad(bn.w.detach(), (1, 0)), c)
    mu = L.centroid(x, c)
    d_in = L.dist(x, mu, c)
    d_out = L.dist(y, bias, c)
    if dispersion == "mean":
        assert abs(float(d_out.mean()) - 0.5) < 1e-6
    elif dispersion == "frechet":  # the output's Fréchet variance about its bias point is s^2
        assert abs(float((d_out**2).mean()) - 0.25) < 1e-6
    else:  # reference code: s / sqrt(mean distance)
        assert abs(float(d_out.mean()) - 0.5 * float(d_in.mean()) ** 0.5) < 1e-5
    # gyro-scaling is not an isometry: the output centroid is the bias point only approximately
    assert float(L.dist(L.centroid(y, c), bias, c)) < 0.05
    # distances to the centre are scaled by one common factor (order preserved exactly)
    ratio = d_out / d_in
    assert float(ratio.max() - ratio.min()) < 1e-8


def test_gyrolbn_running_stats_and_eval_mode():
    torch.manual_seed(0)
    c = 1.0
    bn = GyroLBN(4, c).double()
    shift = L.expmap0(torch.tensor([0, 2.0, 0, 0, 0], dtype=D64), c)
    for i in range(60):
        x = L.gyroadd(shift.expand(64, 5), points((64,), 4, c, max_time=2.0, dtype=D64, seed=i), c)
        bn(x)
    # the running mean has moved along the geodesic to (close to) the data's centroid
    assert float(L.dist(bn.running_mean, L.centroid(x, c), c)) < 0.15
    assert float(L.dist(bn.running_mean, L.origin(4, c, D64), c)) > 1.5
    bn.eval()
    xe = x[:5]
    y = bn(xe)
    want = L.gyroscalar(bn.factor(bn.running_var), L.gyroadd(L.gyroinv(bn.running_mean).expand_as(xe), xe, c), c)
    want = L.gyroadd(L.expmap0(F.pad(bn.w, (1, 0)), c).expand_as(want), want, c)
    assert torch.allclose(y, want, atol=1e-10)
    # eval output of one point does not depend on the rest of the batch
    assert torch.allclose(bn(xe[:1]), y[:1], atol=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        bn.train()(xe[:1])


def test_log_radius_scale_and_concat_expected_log_radius():
    for n, d in [(9, 3), (3, 16), (1, 5)]:
        want = math.exp(0.5 * (scipy.special.digamma(n * d / 2) - scipy.special.digamma(d / 2)))
        assert abs(log_radius_scale(n, d) - want) < 1e-12
    assert abs(log_radius_scale(9, 64) - 3.0) < 0.05  # ≈ sqrt(N) for large d
    g = torch.Generator().manual_seed(0)
    n, d, m = 9, 3, 200_000
    xs = torch.randn(m, n, d, generator=g, dtype=D64) * 0.7
    blocks = space_to_lorentz(xs)
    single = float(xs[:, 0].norm(dim=-1).log().mean())
    log_s = math.log(log_radius_scale(n, d))
    # documented expected log radius, relative to one block: +2 log s / 0 / +log s (Monte-Carlo error ~3e-3)
    for direction, shift in (("multiply", 2 * log_s), ("divide", 0.0), ("none", log_s)):
        cat = log_radius_concat(blocks, direction=direction)
        joined = float(cat[:, 1:].norm(dim=-1).log().mean())
        assert abs(joined - single - shift) < 0.01, direction
        assert_on_manifold(cat, 1.0)
    assert log_s > 0.5  # the three expectations are far apart compared with the tolerance
    assert concat_factor(n, d, "multiply") == pytest.approx(1 / concat_factor(n, d, "divide"))
    with pytest.raises(ValueError, match="direction"):
        concat_factor(n, d, "sqrt")


def test_conv_equals_explicit_patch_route():
    torch.manual_seed(0)
    c = 0.5
    x = to_lorentz(torch.randn(2, 3, 6, 5, dtype=D64), c)
    for (stride, pad), direction in zip([(1, 1), (2, 0)], ["multiply", "divide"]):
        conv = LorentzConv2d(3, 4, 3, stride, pad, c=c, scale_direction=direction).double()
        perturb(conv)
        y = conv(x)
        p = F.unfold(x[..., 1:].permute(0, 3, 1, 2), 3, padding=pad, stride=stride)  # [B, C*9, Lp]
        blocks = space_to_lorentz(p.view(2, 3, 9, -1).permute(0, 3, 2, 1))  # [B, Lp, 9, C+1]
        want = conv.fc(log_radius_concat(blocks, c, direction)).view(y.shape)
        assert torch.allclose(y, want, atol=1e-10)
        hc = LorentzConv2dHCNN(3, 4, 3, stride, pad, c=c).double()
        perturb(hc)
        cat = space_to_lorentz(p.permute(0, 2, 1), c)  # direct concatenation (channel-major order)
        w = torch.cat([hc.w_time[:, None], hc.weight.reshape(4, -1)], 1)
        want = space_to_lorentz(cat @ w.T + hc.bias, c).view(y.shape)
        assert torch.allclose(hc(x), want, atol=1e-10)
    c1 = LorentzConv1d(3, 2, 5, padding=2, c=c).double()
    s = to_lorentz(torch.randn(2, 3, 11, dtype=D64), c)
    assert torch.allclose(c1(s), c1.conv(s.unsqueeze(1)).squeeze(1))


def test_karcher_mean_is_a_critical_point_and_differs_from_centroid():
    x = points((40,), 3, 1.0, max_time=5.0, dtype=D64)
    m = karcher_mean(x, 1.0, iters=200, tol=1e-12)
    grad = L.logmap(m.expand_as(x), x, 1.0).mean(0)
    assert float(grad.norm()) < 1e-9
    assert float(L.dist(m, L.centroid(x, 1.0), 1.0)) > 1e-3


def test_mlr_and_poincare_linear():
    x = points((8,), 4, 1.0, max_time=50)
    assert LorentzMLR(4, 3)(x).shape == (8, 3)
    p = PoincareLinear(4, 6)(L.to_poincare(x))
    assert p.shape == (8, 6) and float(p.norm(dim=-1).max()) < 1


def test_bad_input_raises():
    x = points((4,), 3)
    with pytest.raises(ValueError, match="space dims"):
        PLFC(4, 2)(x)
    with pytest.raises(ValueError, match="channel-last"):
        LorentzConv2d(3, 4, 3)(torch.randn(2, 4, 8, 8))  # channel-first [B, C+1, H, W]
    with pytest.raises(ValueError, match="channel-last"):
        LorentzConv1d(3, 4, 3)(torch.randn(2, 4, 8, 8))
    with pytest.raises(ValueError, match="hyperboloid"):
        PLFC(3, 2, validate=True)(torch.ones(4, 4))
    with pytest.raises(ValueError, match="hyperboloid"):
        GyroLBN(3, validate=True)(-x)
    with pytest.raises(ValueError, match="curvature"):
        PLFC(3, 2, c=0.0)
    with pytest.raises(ValueError, match="dispersion"):
        GyroLBN(3, dispersion="median")
    with pytest.raises(ValueError, match="equal shapes"):
        LorentzResidual()(x, x[:2])
    with pytest.raises(ValueError, match="mode"):
        LorentzResidual(mode="concat")
    with pytest.raises(ValueError, match="method"):
        to_lorentz(torch.randn(2, 3), method="tangent")
    with pytest.raises(ValueError, match="dropout"):
        LorentzDropout(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), min_size=1, max_size=40))
def test_asinh_matches_torch_to_float32_precision(values):
    x = torch.tensor(values, dtype=torch.float32)
    ref = torch.asinh(x.double())
    got = asinh(x).double()
    assert torch.all((got - ref).abs() <= 3e-7 * ref.abs() + 1e-37)  # within 2 ulp, also near 0


def test_asinh_gradient_and_extremes():
    x = torch.linspace(-40, 40, 81, dtype=D64).requires_grad_()
    assert torch.autograd.gradcheck(asinh, (x,))
    assert torch.autograd.gradgradcheck(asinh, (x,))
    big = torch.tensor([3e38, -3e38, 1e-30, 0.0])
    assert torch.isfinite(asinh(big)).all() and float(asinh(big)[3]) == 0.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=4, max_size=4),
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=4, max_size=4),
    st.sampled_from([1.0, 0.3, 2.0]),
)
def test_boost_is_left_gyro_translation(a_tan, x_tan, c):
    a = L.expmap0(torch.tensor([0.0, *a_tan], dtype=D64), c)
    x = L.expmap0(torch.tensor([0.0, *x_tan], dtype=D64), c)
    b = boost(a, c)
    assert torch.allclose(b @ x, L.gyroadd(a, x, c), atol=1e-9 * float(a[0] * x[0]), rtol=1e-9)
    assert torch.allclose(b @ L.origin(4, c, D64), a, atol=1e-12)
    # a Lorentz transformation: it preserves the Minkowski form, B^T J B = J
    j = torch.diag(torch.tensor([-1.0, 1, 1, 1, 1], dtype=D64))
    assert torch.allclose(b.T @ j @ b, j, atol=1e-9 * float(a[0]) ** 2)
    with pytest.raises(ValueError, match="one Lorentz point"):
        boost(a[None], c)


def _tangent_lbn(x, gamma, w, c, eps, stat="mean"):
    """Tangent-space batch norm written with exp/log/transport (the HCNN formulation)."""
    o = L.origin(x.shape[-1] - 1, c, x.dtype)
    mu = L.centroid(x, c)
    u = L.transp(mu.expand_as(x), o.expand_as(x), L.logmap(mu.expand_as(x), x, c), c)
    d = u[:, 1:].norm(dim=-1)
    scale = gamma / (d.mean() + eps) if stat == "mean" else gamma / torch.sqrt((d * d).mean() + eps)
    beta = L.expmap0(F.pad(w, (1, 0)), c).expand_as(x)
    return L.expmap(beta, L.transp(o.expand_as(x), beta, scale * u, c), c)


@pytest.mark.parametrize("c", [1.0, 0.4])
def test_lbn_and_gyrolbn_match_the_tangent_space_route(c):
    x = points((96,), 5, c, max_time=8.0, dtype=D64)
    x = L.gyroadd(L.expmap0(torch.tensor([0, 0.8, -0.3, 0.1, 0, 0.2], dtype=D64), c).expand_as(x), x, c)
    w = torch.tensor([0.2, -0.1, 0.3, 0.0, 0.1], dtype=D64)
    lbn = LorentzBN(5, c).double()
    with torch.no_grad():
        lbn.w.copy_(w)
        lbn.gamma.fill_(0.7)
    assert torch.allclose(lbn(x), _tangent_lbn(x, 0.7, w, c, lbn.eps), atol=1e-9)
    # GyroLBN "mean" mode is LBN with gamma = s; "frechet" mode normalises by the RMS distance instead
    for disp, stat in (("mean", "mean"), ("frechet", "rms")):
        g = GyroLBN(5, c, dispersion=disp, init_scale=0.7, eps=1e-5).double()
        with torch.no_grad():
            g.w.copy_(w)
            g.s.fill_(0.7)
        assert torch.allclose(g(x), _tangent_lbn(x, 0.7, w, c, 1e-5, stat), atol=1e-9), disp
    g = GyroLBN(5, c, dispersion="frechet", init_scale=0.7).double()
    assert float((g(x) - lbn(x)).abs().max()) > 1e-3  # the statistic matters


def test_initialisations_follow_the_reference_code():
    torch.manual_seed(0)
    assert float(PLFC(400, 300).z.std()) == pytest.approx(0.02, rel=0.02)
    assert float(PLFC(400, 300, init_std=None).z.std()) == pytest.approx(400**-0.5, rel=0.02)
    conv = LorentzConv2d(16, 32, 3)
    assert float(conv.fc.z.std()) == pytest.approx(0.02, rel=0.05) and conv.scale_direction == "multiply"
    hc = LorentzConv2dHCNN(16, 32, 3)
    bound = math.sqrt(2 / (16 * 9))
    assert float(hc.weight.abs().max()) <= bound and float(hc.weight.abs().max()) > 0.95 * bound
    mlr = LorentzMLR(64, 10)
    assert float(mlr.z.abs().max()) <= 1 / 8 and float(mlr.a.abs().max()) <= 1 / 8 and float(mlr.a.abs().max()) > 0
    fc = LorentzFC(50, 40)
    assert float(fc.linear.weight.abs().max()) <= 0.02 and float(fc.linear.bias.abs().max()) == 0
    assert float(GyroLBN(4).s) == 0.5 and GyroLBN(4).dispersion == "frechet"


def test_layer_logits_equal_the_manifold_hyperplane_distance():
    from hgutils.nn.lorentz import _hyperplane_logits

    g = torch.Generator().manual_seed(3)
    for c in (1.0, 0.3):
        x = points((50,), 6, c, max_time=30.0, dtype=D64)
        z, a = torch.randn(4, 6, generator=g, dtype=D64), torch.randn(4, generator=g, dtype=D64)
        assert torch.allclose(_hyperplane_logits(x, z, a, c), L.hyperplane_logits(x, z, a, c), atol=1e-10)


def test_fused_plfc_map_matches_its_formula_and_gradients():
    from hgutils.nn.lorentz import plfc_from_logits

    def reference(v, c, bp, vmax):  # the formula step by step, autograd through every op
        sk = 1 / math.sqrt(c)
        ys = sk * torch.sinh(v.clamp(-vmax, vmax) / sk)
        if bp is None:
            return space_to_lorentz(ys, c)
        return L.gyroadd(space_to_lorentz(ys, c), bp.expand(*ys.shape[:-1], -1), c)

    g = torch.Generator().manual_seed(0)
    for c in (1.0, 0.4):
        v = (3 * torch.randn(2, 7, 5, generator=g, dtype=D64)).requires_grad_()
        with torch.no_grad():
            v[0, 0, 0] = 12.0  # beyond the clamp: no gradient
        bp = L.expmap0(F.pad(0.4 * torch.randn(5, generator=g, dtype=D64), (1, 0)), c).requires_grad_()
        for b in (None, bp):
            got, want = plfc_from_logits(v, c, b, 10.0), reference(v, c, b, 10.0)
            assert torch.allclose(got, want, atol=1e-10)
            w = torch.randn(got.shape, generator=g, dtype=D64)
            gr = torch.autograd.grad((got * w).sum(), [v] + ([b] if b is not None else []))
            wr = torch.autograd.grad((want * w).sum(), [v] + ([b] if b is not None else []))
            assert all(torch.allclose(x, y, atol=1e-9) for x, y in zip(gr, wr))
            assert float(gr[0][0, 0, 0]) == 0.0
        fn = lambda t, b, c=c: plfc_from_logits(t, c, b, 10.0)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (v.detach().requires_grad_(), bp))
    with pytest.raises(ValueError, match="bias_point"):
        plfc_from_logits(v, 1.0, bp[None])
