"""The one curvature/broadcasting convention of hgutils.manifolds (stated in its package docstring),
checked function by function for both models.

* A batch-shaped tensor ``c`` gives, element by element, what the function gives on that element with
  ``float(c[i])`` (shapes and float64 values), for every public function that takes ``c``; also for
  ``c`` that broadcasts (a trailing ``[B2]`` or ``[B1, 1]`` for a ``[B1, B2]`` batch) and next to
  unbatched companion arguments.
* A keep-dim ``[B, 1]`` curvature (geoopt's convention) and a non-broadcasting one raise ``ValueError``.
* ``c <= 0``, NaN and inf raise, as numbers, 0-d tensors and inside a batch-shaped tensor.
* Gradients with respect to a batch-shaped ``c`` pass ``torch.autograd.gradcheck``.
* Numbers and 0-d tensors give the same bits (values and gradients) as frozen copies of the
  implementations from before the convention was shared.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.manifolds import lorentz as L
from hgutils.manifolds import numerics as nx
from hgutils.manifolds import poincare as P

F64 = torch.float64
# sizes chosen distinct from every batch size used below (2, 7), so that a wrongly aligned broadcast
# cannot pass by coincidence
N_BALL = 4  # Poincaré dimension n; Lorentz points are ambient [..., N_BALL + 1]
N_SET = 6  # points per set in the reductions
OUT = 3  # rows of W / hyperplanes
KEEPDIM_MSG = "c must be a number or a tensor broadcastable"
C7 = [0.3, 1.0, 5.0, 0.15, 2.0, 7.0, 9.5]  # seven distinct curvatures (batch size 7)


# ----------------------------------------------------------------------------------------------
# inputs, built without the library (so the functions under test do not build their own inputs)
# ----------------------------------------------------------------------------------------------
def _ball(g: torch.Generator, shape: tuple[int, ...], c: torch.Tensor, rmax: float = 0.8) -> torch.Tensor:
    """Poincaré points [*shape, n] with sqrt(c)||x|| uniform in [0, rmax]; ``c`` broadcasts to ``shape``."""
    d = torch.randn(*shape, N_BALL, generator=g, dtype=F64)
    d = d / d.norm(dim=-1, keepdim=True)
    return d * torch.rand(*shape, 1, generator=g, dtype=F64) * rmax / c.sqrt().unsqueeze(-1)


def _hyperboloid(g: torch.Generator, shape: tuple[int, ...], c: torch.Tensor, scale: float = 1.5) -> torch.Tensor:
    """Lorentz points [*shape, n+1] on <x, x>_L = -1/c (time first); distances O(scale)/sqrt(c)."""
    ck = c.unsqueeze(-1)
    xs = torch.randn(*shape, N_BALL, generator=g, dtype=F64) * scale / (ck.sqrt() * math.sqrt(N_BALL))
    return torch.cat([torch.sqrt(1 / ck + (xs * xs).sum(-1, keepdim=True)), xs], -1)


def _linner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x[..., 1:] * y[..., 1:]).sum(-1, keepdim=True) - x[..., :1] * y[..., :1]


def _lorentz_tangent(g: torch.Generator, x: torch.Tensor, c: torch.Tensor, speed: float = 0.7) -> torch.Tensor:
    """Tangent vectors at x (<x, v>_L = 0) of Lorentz norm speed/sqrt(c)."""
    ck = c.unsqueeze(-1)
    v = torch.randn(x.shape, generator=g, dtype=F64)
    v = v + ck * _linner(x, v) * x
    return v / torch.sqrt(_linner(v, v)) * speed / ck.sqrt()


@dataclass
class Case:
    """``fn(args, c)``; ``batched`` names the args whose leading dims are the batch shape (sliced per
    element); all other args are shared by every element."""

    name: str
    fn: Callable[[dict[str, torch.Tensor], object], torch.Tensor]
    batched: tuple[str, ...]
    covers: str = ""  # "module.function" this case exercises (default: derived from name)
    extra: dict = field(default_factory=dict)

    def target(self) -> str:
        return self.covers or self.name.split("[")[0]


def make_inputs(g: torch.Generator, S: tuple[int, ...], c_eff: torch.Tensor) -> dict[str, torch.Tensor]:
    """Arguments for every case, each batched arg valid under its own element's curvature ``c_eff`` [S]."""
    c_set = c_eff.unsqueeze(-1).expand(*S, N_SET)
    cmax = torch.tensor(10.0, dtype=F64)  # shared ball points lie inside the ball of every c <= 10
    x = _hyperboloid(g, S, c_eff)
    lu = torch.randn(*S, N_BALL + 1, generator=g, dtype=F64) / c_eff.sqrt().unsqueeze(-1)
    lu[..., 0] = 0
    p = _ball(g, S, c_eff)
    return {
        # Poincaré
        "p": p,
        "q": _ball(g, S, c_eff),
        "q0": _ball(g, (), cmax, 0.9),
        "e": torch.randn(*S, N_BALL, generator=g, dtype=F64) * 0.4 / c_eff.sqrt().unsqueeze(-1),
        "far": torch.randn(*S, N_BALL, generator=g, dtype=F64) * 2.0 / c_eff.sqrt().unsqueeze(-1),
        "a": torch.randn(*S, N_BALL, generator=g, dtype=F64),
        "W": torch.randn(OUT, N_BALL, generator=g, dtype=F64) * 0.5,
        "Wb": torch.randn(*S, OUT, N_BALL, generator=g, dtype=F64) * 0.5,
        "b": torch.randn(OUT, generator=g, dtype=F64) * 0.3,
        "bb": torch.randn(*S, OUT, generator=g, dtype=F64) * 0.3,
        "r": torch.rand(*S, generator=g, dtype=F64) * 3 - 1,
        "pset": _ball(g, (*S, N_SET), c_set),
        "wset": torch.rand(*S, N_SET, generator=g, dtype=F64) + 0.1,
        # Lorentz
        "x": x,
        "y": _hyperboloid(g, S, c_eff),
        "v": _lorentz_tangent(g, x, c_eff),
        "lu": lu,
        "xset": _hyperboloid(g, (*S, N_SET), c_set),
        "mu": _hyperboloid(g, S, c_eff),
        "z": torch.randn(OUT, N_BALL, generator=g, dtype=F64),
        "za": torch.randn(OUT, generator=g, dtype=F64),
    }


CASES: list[Case] = [
    # ---- Poincaré
    Case("poincare.lambda_x", lambda a, c: P.lambda_x(a["p"], c), ("p",)),
    Case("poincare.lambda_x[keepdim]", lambda a, c: P.lambda_x(a["p"], c, keepdim=True), ("p",)),
    Case("poincare.mobius_add", lambda a, c: P.mobius_add(a["p"], a["q"], c), ("p", "q")),
    Case("poincare.mobius_add[shared y]", lambda a, c: P.mobius_add(a["p"], a["q0"], c), ("p",)),
    Case("poincare.mobius_scalar", lambda a, c: P.mobius_scalar(0.4, a["p"], c), ("p",)),
    Case("poincare.mobius_scalar[batched r]", lambda a, c: P.mobius_scalar(a["r"], a["p"], c), ("r", "p")),
    Case("poincare.mobius_matvec", lambda a, c: P.mobius_matvec(a["W"], a["p"], c), ("p",)),
    Case("poincare.mobius_matvec[batched W, shared x]", lambda a, c: P.mobius_matvec(a["Wb"], a["q0"], c), ("Wb",)),
    Case("poincare.expmap0", lambda a, c: P.expmap0(a["e"], c), ("e",)),
    Case("poincare.logmap0", lambda a, c: P.logmap0(a["p"], c), ("p",)),
    Case("poincare.expmap", lambda a, c: P.expmap(a["p"], a["e"], c), ("p", "e")),
    Case("poincare.logmap", lambda a, c: P.logmap(a["p"], a["q"], c), ("p", "q")),
    Case("poincare.dist", lambda a, c: P.dist(a["p"], a["q"], c), ("p", "q")),
    Case("poincare.dist[shared y]", lambda a, c: P.dist(a["p"], a["q0"], c), ("p",)),
    Case("poincare.transp0", lambda a, c: P.transp0(a["p"], a["e"], c), ("p", "e")),
    Case("poincare.project", lambda a, c: P.project(a["far"], c), ("far",)),
    Case("poincare.to_klein", lambda a, c: P.to_klein(a["p"], c), ("p",)),
    Case("poincare.from_klein", lambda a, c: P.from_klein(a["p"], c), ("p",)),
    Case("poincare.einstein_midpoint", lambda a, c: P.einstein_midpoint(a["pset"], a["wset"], c), ("pset", "wset")),
    Case("poincare.einstein_midpoint[no weights]", lambda a, c: P.einstein_midpoint(a["pset"], None, c), ("pset",)),
    Case("poincare.dist2plane", lambda a, c: P.dist2plane(a["p"], a["q"], a["a"], c), ("p", "q", "a")),
    Case(
        "poincare.dist2plane[unsigned]",
        lambda a, c: P.dist2plane(a["p"], a["q"], a["a"], c, signed=False),
        ("p", "q", "a"),
    ),
    Case("poincare.affine", lambda a, c: P.affine(a["p"], a["W"], a["b"], c), ("p",)),
    Case("poincare.affine[batched b]", lambda a, c: P.affine(a["p"], a["W"], a["bb"], c), ("p", "bb")),
    Case("poincare.affine[shared x, batched b]", lambda a, c: P.affine(a["q0"], a["W"], a["bb"], c), ("bb",)),
    # ---- Lorentz
    Case("lorentz.project", lambda a, c: L.project(a["x"] + 0.1 * a["lu"], c), ("x", "lu")),
    Case("lorentz.dist", lambda a, c: L.dist(a["x"], a["y"], c), ("x", "y")),
    Case("lorentz.expmap0", lambda a, c: L.expmap0(a["lu"], c), ("lu",)),
    Case("lorentz.logmap0", lambda a, c: L.logmap0(a["x"], c), ("x",)),
    Case("lorentz.expmap", lambda a, c: L.expmap(a["x"], a["v"], c), ("x", "v")),
    Case("lorentz.logmap", lambda a, c: L.logmap(a["x"], a["y"], c), ("x", "y")),
    Case("lorentz.transp", lambda a, c: L.transp(a["x"], a["y"], a["v"], c), ("x", "y", "v")),
    Case("lorentz.to_poincare", lambda a, c: L.to_poincare(a["x"], c), ("x",)),
    Case("lorentz.from_poincare", lambda a, c: L.from_poincare(a["p"], c), ("p",)),
    Case("lorentz.gyroadd", lambda a, c: L.gyroadd(a["x"], a["y"], c), ("x", "y")),
    Case("lorentz.gyroscalar", lambda a, c: L.gyroscalar(0.4, a["x"], c), ("x",)),
    Case("lorentz.gyroscalar[batched r]", lambda a, c: L.gyroscalar(a["r"], a["x"], c), ("r", "x")),
    Case("lorentz.centroid", lambda a, c: L.centroid(a["xset"], c, a["wset"]), ("xset", "wset")),
    Case("lorentz.centroid[no weights]", lambda a, c: L.centroid(a["xset"], c), ("xset",)),
    Case("lorentz.hyperplane_logits", lambda a, c: L.hyperplane_logits(a["x"], a["z"], a["za"], c), ("x",)),
    Case("lorentz.frechet_dispersion", lambda a, c: L.frechet_dispersion(a["xset"], a["mu"], c), ("xset", "mu")),
    Case(
        "lorentz.frechet_dispersion[mean]",
        lambda a, c: L.frechet_dispersion(a["xset"], a["mu"], c, squared=False),
        ("xset", "mu"),
    ),
]
# functions with their own tests below (no points, a scatter over nodes, or no output)
SEPARATE = {
    "lorentz.origin",
    "lorentz.check_point",
    "poincare.check_point",
    "poincare.einstein_midpoint_scatter",
}


def _element(a: dict[str, torch.Tensor], batched: tuple[str, ...], idx: tuple[int, ...]) -> dict:
    return {k: (v[idx] if k in batched else v) for k, v in a.items()}


def test_every_public_function_with_c_is_covered() -> None:
    """Adding a public function that takes ``c`` without a case here fails this test."""
    want = set()
    for mod, name in ((P, "poincare"), (L, "lorentz")):
        for f in mod.__all__:
            if "c" in inspect.signature(getattr(mod, f)).parameters:
                want.add(f"{name}.{f}")
    have = {case.target() for case in CASES} | SEPARATE
    assert want - have == set(), f"no convention test for {sorted(want - have)}"
    assert have - want == set(), f"cases for unknown functions {sorted(have - want)}"


# ----------------------------------------------------------------------------------------------
# batch-shaped c == per-element float c
# ----------------------------------------------------------------------------------------------
BATCH_SHAPES = [(7,), (2, 7), (1, 2, 7)]


def _c_forms(S: tuple[int, ...], vals: list[float]) -> list[torch.Tensor]:
    """Tensor curvatures for the batch shape S: the full [S] and forms that broadcast to it."""
    full = torch.tensor(vals, dtype=F64).reshape(S)
    forms = [full]
    if len(S) > 1:
        forms.append(full[(0,) * (len(S) - 1)])  # trailing [S[-1]]: one c per last batch index
        forms.append(full[..., :1])  # [..., 1] with as many dims as the batch: per leading index
    return forms


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    S=st.sampled_from(BATCH_SHAPES),
    vals=st.lists(st.floats(0.1, 10.0), min_size=14, max_size=14),
    seed=st.integers(0, 2**31 - 1),
)
def test_batch_c_matches_per_element_float_c(S: tuple[int, ...], vals: list[float], seed: int) -> None:
    numel = math.prod(S)
    for c in _c_forms(S, vals[:numel]):
        c_eff = c.expand(S)
        a = make_inputs(torch.Generator().manual_seed(seed), S, c_eff)
        for case in CASES:
            out = case.fn(a, c)
            ref_elems = []
            for idx in itertools.product(*(range(s) for s in S)):
                ref = case.fn(_element(a, case.batched, idx), float(c_eff[idx]))
                assert out.shape == S + ref.shape, f"{case.name}: c {tuple(c.shape)} gave {tuple(out.shape)}"
                ref_elems.append(ref)
                torch.testing.assert_close(
                    out[idx], ref, rtol=1e-12, atol=1e-12, msg=lambda m, n=case.name, i=idx: f"{n} at {i}: {m}"
                )
            assert len(ref_elems) == numel


def test_reductions_along_other_dims() -> None:
    """c has the *output* batch shape also when the reduced axis is not the one before last."""
    g = torch.Generator().manual_seed(7)
    c = torch.tensor(C7, dtype=F64)
    c_set = c.unsqueeze(0).expand(N_SET, 7)  # points [N_SET, 7, d]: sets along dim 0
    xs, ps = _hyperboloid(g, (N_SET, 7), c_set), _ball(g, (N_SET, 7), c_set)
    mu = _hyperboloid(g, (7,), c)
    w = torch.rand(N_SET, 7, generator=g, dtype=F64) + 0.1
    got = {
        "centroid": L.centroid(xs, c, w, dim=0),
        "frechet_dispersion": L.frechet_dispersion(xs, mu, c, dim=0),
        "einstein_midpoint": P.einstein_midpoint(ps, w, c, dim=0),
    }
    for i in range(7):
        ci = float(c[i])
        torch.testing.assert_close(got["centroid"][i], L.centroid(xs[:, i], ci, w[:, i]), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(
            got["frechet_dispersion"][i], L.frechet_dispersion(xs[:, i], mu[i], ci), rtol=1e-12, atol=1e-12
        )
        torch.testing.assert_close(
            got["einstein_midpoint"][i], P.einstein_midpoint(ps[:, i], w[:, i], ci), rtol=1e-12, atol=1e-12
        )
    assert got["centroid"].shape == (7, N_BALL + 1)
    assert got["frechet_dispersion"].shape == (7,)
    assert got["einstein_midpoint"].shape == (7, N_BALL)


def test_origin_one_per_curvature() -> None:
    c = torch.tensor([[0.2, 1.0, 3.0], [7.0, 0.5, 1.5]], dtype=F64)
    o = L.origin(4, c, dtype=F64)
    assert o.shape == (2, 3, 5)
    for i, j in itertools.product(range(2), range(3)):
        assert torch.equal(o[i, j], L.origin(4, float(c[i, j]), dtype=F64))
    L.check_point(o, c)
    assert L.origin(4, 2.0).shape == (5,) and L.origin(4, torch.tensor(2.0)).shape == (5,)
    # defaults follow torch's, as for a number
    assert L.origin(4, c).dtype == torch.get_default_dtype()


def test_scatter_midpoint_one_curvature_per_node() -> None:
    g = torch.Generator().manual_seed(5)
    num_nodes, E = 5, 20
    index = torch.randint(0, num_nodes - 1, (E,), generator=g)  # the last node has no edge
    c = torch.tensor([0.2, 1.0, 4.0, 9.0, 2.0], dtype=F64)
    p = _ball(g, (E,), c[index])
    w = torch.rand(E, generator=g, dtype=F64) + 0.1
    out = P.einstein_midpoint_scatter(p, w, index, num_nodes, c, validate=True)
    assert out.shape == (num_nodes, N_BALL)
    for j in range(num_nodes):
        ref = P.einstein_midpoint_scatter(p, w, index, num_nodes, float(c[j]))[j]
        torch.testing.assert_close(out[j], ref, rtol=1e-12, atol=1e-12)
    # one-element tensors stay allowed; other shapes are rejected with the accepted forms named
    P.einstein_midpoint_scatter(p, w, index, num_nodes, torch.tensor([2.0], dtype=F64))
    for bad in (torch.ones(num_nodes, 1), torch.ones(E), torch.ones(num_nodes + 1)):
        with pytest.raises(ValueError, match="one-element tensor or a \\[num_nodes\\]"):
            P.einstein_midpoint_scatter(p, w, index, num_nodes, bad)


def test_check_point_uses_each_elements_curvature() -> None:
    g = torch.Generator().manual_seed(6)
    c = torch.tensor(C7, dtype=F64)
    x = _hyperboloid(g, (7,), c)
    L.check_point(x, c)
    with pytest.raises(ValueError, match="hyperboloid"):
        L.check_point(x, c.flip(0))
    with pytest.raises(ValueError, match="per batch element"):
        L.check_point(x, c.flip(0))
    with pytest.raises(ValueError, match="hyperboloid"):
        L.check_point(x, 1.0)
    p = _ball(g, (7,), c, rmax=0.95)
    p = p / p.norm(dim=-1, keepdim=True) * 0.95 / c.sqrt().unsqueeze(-1)  # exactly at sqrt(c)||p|| = 0.95
    P.check_point(p, c)
    with pytest.raises(ValueError, match="ball"):
        P.check_point(p, c.flip(0))
    # validate=True paths see the batch curvature too
    P.dist(p, p, c, validate=True)
    with pytest.raises(ValueError, match="ball"):
        P.dist(p, p, c.flip(0), validate=True)


# ----------------------------------------------------------------------------------------------
# rejected curvatures
# ----------------------------------------------------------------------------------------------
def _all_calls(a: dict[str, torch.Tensor], S: tuple[int, ...]) -> list[tuple[str, Callable]]:
    calls = [(case.name, lambda c, case=case: case.fn(a, c)) for case in CASES]
    calls += [
        ("lorentz.check_point", lambda c: L.check_point(a["x"], c)),
        ("poincare.check_point", lambda c: P.check_point(a["p"], c)),
    ]
    return calls


def test_keepdim_and_non_broadcasting_c_raise() -> None:
    S = (7,)
    c_eff = torch.tensor(C7, dtype=F64)
    a = make_inputs(torch.Generator().manual_seed(1), S, c_eff)
    for name, call in _all_calls(a, S):
        for bad in (c_eff.unsqueeze(-1), torch.ones(8, dtype=F64), torch.ones(2, 7, dtype=F64)):
            with pytest.raises(ValueError, match="c must be a number or a tensor broadcastable"):
                call(bad)
                pytest.fail(f"{name} accepted c of shape {tuple(bad.shape)}")
    # also with a 2-d batch: a [B1, B2, 1] curvature is keep-dim
    S2 = (2, 7)
    a2 = make_inputs(torch.Generator().manual_seed(2), S2, torch.ones(S2, dtype=F64))
    for name, call in _all_calls(a2, S2):
        with pytest.raises(ValueError, match=KEEPDIM_MSG):
            call(torch.ones(2, 7, 1, dtype=F64))
            pytest.fail(f"{name} accepted a keep-dim c")


BAD_VALUES = [0.0, -1.0, float("nan"), float("inf"), -float("inf")]


@pytest.mark.parametrize("bad", BAD_VALUES)
def test_non_positive_nan_inf_c_raise(bad: float) -> None:
    S = (7,)
    a = make_inputs(torch.Generator().manual_seed(3), S, torch.ones(S, dtype=F64))
    one_bad = torch.tensor(C7, dtype=F64)
    one_bad[3] = bad
    forms = [bad, torch.tensor(bad, dtype=F64), one_bad]
    extra = [
        ("lorentz.origin", lambda c: L.origin(3, c)),
        (
            "poincare.einstein_midpoint_scatter",
            lambda c: P.einstein_midpoint_scatter(a["p"], None, torch.arange(7), 7, c),
        ),
    ]
    for name, call in _all_calls(a, S) + extra:
        for c in forms:
            with pytest.raises(ValueError, match="curvature magnitude c must be finite and > 0"):
                call(c)
                pytest.fail(f"{name} accepted c = {c}")


def test_curvature_helpers() -> None:
    x = torch.zeros(4, 3, 2)
    # numbers and 0-d tensors: unchanged objects / plain floats, the same as before the move
    assert nx.curvature(2, x) == (2.0, math.sqrt(2.0)) and isinstance(nx.curvature(2, x)[0], float)
    t = torch.tensor(2.0)
    ck, sc = nx.curvature(t, x)
    assert ck is t and torch.equal(sc, t.sqrt())
    # batch-shaped -> keep-dim
    ck, sc = nx.curvature(torch.ones(4, 3) * 4, x)
    assert ck.shape == (4, 3, 1) and torch.equal(sc, torch.full((4, 3, 1), 2.0))
    assert nx.batch_curvature(torch.ones(3), x).shape == (3,)
    assert nx.as_keepdim(2.0) == 2.0 and nx.as_keepdim(t) is t and nx.as_keepdim(torch.ones(3)).shape == (3, 1)
    c_out, c_in = nx.reduced_curvature(torch.ones(3), (4, 3), 1)
    assert c_out.shape == (1, 3) and c_in.shape == (1, 1, 3)
    with pytest.raises(ValueError, match="reduced axis"):
        nx.reduced_curvature(torch.ones(4, 1), (4,), 1)
    assert nx.broadcastable((4, 1), (3,)) and not nx.broadcastable((4,), (3,))


# ----------------------------------------------------------------------------------------------
# gradients w.r.t. a batch-shaped c
# ----------------------------------------------------------------------------------------------
def test_gradcheck_batch_c_every_case() -> None:
    S = (7,)
    c0 = torch.tensor(C7, dtype=F64)
    a = make_inputs(torch.Generator().manual_seed(4), S, c0)
    for case in CASES:
        c = c0.clone().requires_grad_(True)
        assert torch.autograd.gradcheck(lambda c, case=case: case.fn(a, c), (c,), eps=1e-6, atol=1e-6, rtol=1e-5), (
            case.name
        )
    c = c0.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda c: L.origin(3, c, dtype=F64), (c,))


@pytest.mark.parametrize("S", [(7,), (2, 7)])
def test_gradcheck_dist_expmap0_logmap0_points_and_c(S: tuple[int, ...]) -> None:
    """The learnable-curvature case: gradients w.r.t. the points and a batch-shaped c together."""
    g = torch.Generator().manual_seed(8)
    c0 = torch.rand(S, generator=g, dtype=F64) * 3 + 0.3
    a = make_inputs(g, S, c0)
    checks = [
        (lambda x, y, c: L.dist(x, y, c), (a["x"], a["y"])),
        (lambda u, c: L.expmap0(u, c), (a["lu"],)),
        (lambda x, c: L.logmap0(x, c), (a["x"],)),
        (lambda x, y, c: P.dist(x, y, c), (a["p"], a["q"])),
        (lambda u, c: P.expmap0(u, c), (a["e"],)),
        (lambda y, c: P.logmap0(y, c), (a["p"],)),
    ]
    for fn, pts in checks:
        ins = tuple(t.clone().requires_grad_(True) for t in (*pts, c0))
        assert torch.autograd.gradcheck(fn, ins, eps=1e-6, atol=1e-6, rtol=1e-5)


# ----------------------------------------------------------------------------------------------
# numbers and 0-d tensors: bit-for-bit the pre-convention results (frozen copies below)
# ----------------------------------------------------------------------------------------------
# Verbatim bodies of the functions as they were before the convention was shared (commit 4d52a66),
# for a number or a 0-d tensor c; public helpers that did not change (inner, clamps) are reused.
_SQ_MIN = nx.MIN_NORM**2


def _frozen_sk(c):
    nx.check_curvature(c)
    if isinstance(c, torch.Tensor):
        return c.rsqrt()
    return 1.0 / math.sqrt(c)


def _frozen_origin(n, c=1.0, dtype=None, device=None):
    sk = _frozen_sk(c)
    o = torch.zeros(n + 1, dtype=dtype, device=device)
    o[0] = float(sk) if not isinstance(sk, torch.Tensor) else sk.to(o)
    return o


def _frozen_dist(x, y, c=1.0):
    sk = _frozen_sk(c)
    d2 = (x - y).square()
    q = d2.sum(-1) - 2 * d2[..., 0]
    return 2 * sk * torch.asinh(torch.sqrt(nx.clamp_pos(q, _SQ_MIN)) / (2 * sk))


def _frozen_expmap0(u, c=1.0):
    sk = _frozen_sk(c)
    us = u[..., 1:]
    n = nx.clamp_min_norm(us)
    th = n / sk
    return torch.cat((sk * torch.cosh(th), sk * torch.sinh(th) * us / n), dim=-1)


def _frozen_logmap0(x, c=1.0):
    sk = _frozen_sk(c)
    xs = x[..., 1:]
    n = nx.clamp_min_norm(xs)
    th = torch.asinh(n / sk)
    return torch.cat((torch.zeros_like(x[..., :1]), sk * th * xs / n), dim=-1)


def _frozen_logmap(x, y, c=1.0):
    sk = _frozen_sk(c)
    th = nx.clamp_pos(_frozen_dist(x, y, c).unsqueeze(-1) / sk)
    w = y + L.inner(x, y, keepdim=True) / (sk * sk) * x
    return (th / torch.sinh(th)) * w


def _frozen_gyroscalar(r, x, c=1.0):
    sk = _frozen_sk(c)
    xs = x[..., 1:]
    n = nx.clamp_min_norm(xs)
    rth = r * torch.asinh(n / sk)
    return torch.cat((sk * torch.cosh(rth), sk * torch.sinh(rth) * xs / n), dim=-1)


def _frozen_centroid(x, c=1.0, weights=None, dim=-2):
    d = dim % x.dim()
    sk = _frozen_sk(c)
    m = x.mean(dim=d) if weights is None else (weights.unsqueeze(-1) * x).sum(dim=d)
    nrm = torch.sqrt(nx.clamp_pos(-L.inner(m, m, keepdim=True), _SQ_MIN))
    return sk * m / nrm


def _frozen_hyperplane_logits(x, z, a, c=1.0):
    sk = _frozen_sk(c)
    zn = nx.clamp_min_norm(z, dim=-1, keepdim=False)
    ta = a / sk
    alpha = torch.cosh(ta) * (x[..., 1:] @ z.transpose(0, 1)) - (torch.sinh(ta) * zn) * x[..., :1]
    skz = sk * zn
    return skz * torch.asinh(alpha / skz)


def _frozen_frechet_dispersion(x, mu, c=1.0, squared=True, dim=-2):
    d = dim % x.dim()
    dd = _frozen_dist(x, mu.unsqueeze(d), c)
    return (dd * dd if squared else dd).mean(dim=d)


def _frozen_einstein_midpoint(p, weights=None, c=1.0, dim=-2):
    d = dim if dim >= 0 else p.dim() + dim
    nx.check_curvature(c)
    ck = ck_out = float(c) if not isinstance(c, torch.Tensor) else c
    lam = 2 / nx.clamp_pos(1 - ck * (p * p).sum(-1, keepdim=True))
    if weights is None:
        num, den = (lam * p).sum(d), (lam - 1).sum(d)
    else:
        wl = weights.unsqueeze(-1) * lam
        num, den = (wl * p).sum(d), (wl - weights.unsqueeze(-1)).sum(d)
    k = num / nx.clamp_pos(den)
    return k * (1 / (1 + torch.sqrt(nx.clamp_pos(1 - ck_out * (k * k).sum(-1, keepdim=True)))))


def _frozen_affine(x, W, b, c=1.0):
    # was h = mobius_matvec(W, x, c); _mobius_add(h, expmap0(b, c), c): the public ops composed
    return P.mobius_add(P.mobius_matvec(W, x, c), P.expmap0(b, c), c)


FROZEN = {
    "lorentz.dist": lambda a, c: _frozen_dist(a["x"], a["y"], c),
    "lorentz.expmap0": lambda a, c: _frozen_expmap0(a["lu"], c),
    "lorentz.logmap0": lambda a, c: _frozen_logmap0(a["x"], c),
    "lorentz.logmap": lambda a, c: _frozen_logmap(a["x"], a["y"], c),
    "lorentz.gyroscalar": lambda a, c: _frozen_gyroscalar(0.4, a["x"], c),
    "lorentz.centroid": lambda a, c: _frozen_centroid(a["xset"], c, a["wset"]),
    "lorentz.centroid[dim 0]": lambda a, c: _frozen_centroid(a["xset"], c, None, dim=0),
    "lorentz.hyperplane_logits": lambda a, c: _frozen_hyperplane_logits(a["x"], a["z"], a["za"], c),
    "lorentz.frechet_dispersion": lambda a, c: _frozen_frechet_dispersion(a["xset"], a["mu"], c),
    "lorentz.frechet_dispersion[mean]": lambda a, c: _frozen_frechet_dispersion(a["xset"], a["mu"], c, False),
    "lorentz.origin": lambda a, c: _frozen_origin(N_BALL, c, dtype=F64),
    "poincare.affine": lambda a, c: _frozen_affine(a["p"], a["W"], a["b"], c),
    "poincare.einstein_midpoint": lambda a, c: _frozen_einstein_midpoint(a["pset"], a["wset"], c),
    "poincare.einstein_midpoint[dim 0]": lambda a, c: _frozen_einstein_midpoint(a["pset"], None, c, dim=0),
}

NEW = {
    "lorentz.dist": lambda a, c: L.dist(a["x"], a["y"], c),
    "lorentz.expmap0": lambda a, c: L.expmap0(a["lu"], c),
    "lorentz.logmap0": lambda a, c: L.logmap0(a["x"], c),
    "lorentz.logmap": lambda a, c: L.logmap(a["x"], a["y"], c),
    "lorentz.gyroscalar": lambda a, c: L.gyroscalar(0.4, a["x"], c),
    "lorentz.centroid": lambda a, c: L.centroid(a["xset"], c, a["wset"]),
    "lorentz.centroid[dim 0]": lambda a, c: L.centroid(a["xset"], c, None, dim=0),
    "lorentz.hyperplane_logits": lambda a, c: L.hyperplane_logits(a["x"], a["z"], a["za"], c),
    "lorentz.frechet_dispersion": lambda a, c: L.frechet_dispersion(a["xset"], a["mu"], c),
    "lorentz.frechet_dispersion[mean]": lambda a, c: L.frechet_dispersion(a["xset"], a["mu"], c, squared=False),
    "lorentz.origin": lambda a, c: L.origin(N_BALL, c, dtype=F64),
    "poincare.affine": lambda a, c: P.affine(a["p"], a["W"], a["b"], c),
    "poincare.einstein_midpoint": lambda a, c: P.einstein_midpoint(a["pset"], a["wset"], c),
    "poincare.einstein_midpoint[dim 0]": lambda a, c: P.einstein_midpoint(a["pset"], None, c, dim=0),
}


@pytest.mark.parametrize("cval", [1.0, 0.3, 7.5])
@pytest.mark.parametrize("kind", ["float", "0-d", "0-d requires grad"])
def test_number_and_0d_c_bit_for_bit_unchanged(cval: float, kind: str) -> None:
    S = (5,)
    a = make_inputs(torch.Generator().manual_seed(11), S, torch.full(S, cval, dtype=F64))
    assert FROZEN.keys() == NEW.keys()
    for name, new in NEW.items():
        outs = []
        for fn in (FROZEN[name], new):
            c = cval if kind == "float" else torch.tensor(cval, dtype=F64, requires_grad=kind.endswith("grad"))
            out = fn(a, c)
            grad = torch.autograd.grad(out.sum(), c)[0] if kind.endswith("grad") else None
            outs.append((out.detach(), grad))
        (o_old, g_old), (o_new, g_new) = outs
        assert o_old.shape == o_new.shape and torch.equal(o_old, o_new), name
        if g_old is not None:
            assert torch.equal(g_old, g_new), f"{name}: d/dc changed"
