"""GTH-GMN's fast training path (issue 34) equals the formulation it replaced, in float64 to 1e-10.

- the fused dense attention (:func:`~hgutils.nn.hyperbolic_attention.gated_midpoint`) against the
  explicit distance -> gated softmax -> Klein midpoint chain, values and gradients;
- the closed-form Möbius translation of the exponential map (queries, keys, values) against
  ``mobius_add(expmap0(y), beta)``;
- a layer on tangent states (``update``) against the layer on ball points (``forward``) and against a
  reference written out here with the previous formulas (``log_0`` of the input, Möbius affine maps,
  explicit attention, residual stream, ``exp_0`` of the capped state);
- the gathered pair distances and inner products and the consecutive-snapshot distances against the
  Poincaré distance and explicit inner products;
- end to end: the reconstruction (stage-1) and joint training terms and every parameter gradient of
  this checkout against the library at revision ``d8808bb`` (extracted with ``git archive``, run in
  a child process), for the default and a larger configuration.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

from hgutils.manifolds import poincare as pm
from hgutils.nn.hyperbolic_attention import (
    HyperbolicGraphAttention,
    aggregate_dense,
    cap_norm,
    dense_gated_attention,
    gated_midpoint,
    pairwise_distance,
    translated_exp0,
)
from hgutils.weightspace.metanets.gth_gmn.decoders import Geometry, pair_parts

REPO = Path(__file__).resolve().parent.parent
PREVIOUS = "d8808bb"
TOL = 1e-10
LARGE = {"dim": 32, "n_attn_layers": 2, "heads": 4, "head_dim": 8, "gru_hidden": 32}


def _close(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    err = float((a - b).detach().abs().max()) if a.numel() else 0.0
    scale = max(1.0, float(b.detach().abs().max())) if b.numel() else 1.0
    assert err <= TOL * scale, f"{what}: max |new - old| = {err:.3g} (scale {scale:.3g})"


def _reference_midpoint(v: torch.Tensor, alpha: torch.Tensor, c: float) -> torch.Tensor:
    """The Einstein midpoint as written before issue 34: Klein coordinates, Lorentz factors, weighted
    mean, back to the ball (with the ball guards), then log_0."""
    kv = pm.to_klein(v, c)
    gamma = (1 - c * (kv * kv).sum(-1, keepdim=True)).clamp_min(1e-15).rsqrt()
    nd = alpha @ torch.cat([gamma * kv, gamma], -1)
    mid_k = nd[..., :-1] / nd[..., -1:]
    return pm.logmap0(pm.project(pm.from_klein(pm.project(mid_k, c), c), c), c)


def _graph_inputs(B: int, H: int, V: int, o: int, c: float, batched_edges: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (pm.expmap0(torch.randn(B, H, V, o, generator=g, dtype=torch.float64) * 0.6, c) for _ in range(3))
    E = torch.randn(B if batched_edges else 1, H, V, V, generator=g, dtype=torch.float64)
    E = E.masked_fill(torch.rand(E.shape, generator=g, dtype=torch.float64) < 0.5, float("-inf"))
    E[..., range(V), range(V)] = 0.1  # self-loops: every row has an edge
    return [t.requires_grad_() for t in (q, k, v, E)]


@pytest.mark.parametrize("c", [1.0, 0.6])
@pytest.mark.parametrize("batched_edges", [False, True])
def test_fused_attention_equals_the_explicit_chain(c, batched_edges):
    q, k, v, E = _graph_inputs(3, 2, 11, 4, c, batched_edges, seed=int(10 * c) + batched_edges)
    alpha = dense_gated_attention(-pairwise_distance(q, k, c), E)
    ref = _reference_midpoint(v, alpha, c)
    _close(aggregate_dense(v, alpha, c), ref, "aggregate_dense")
    new = gated_midpoint(q, k, v, E, c)
    _close(new, ref, "messages")
    w = torch.randn_like(ref)
    g_ref = torch.autograd.grad((ref * w).sum(), (q, k, v, E))
    g_new = torch.autograd.grad((new * w).sum(), (q, k, v, E))
    for name, a, b in zip("qkvE", g_new, g_ref):
        finite = torch.isfinite(b)
        assert torch.equal(finite, torch.isfinite(a)), name
        _close(a[finite], b[finite], f"d/d{name}")


def test_fused_attention_passes_gradcheck():
    q, k, v, E = _graph_inputs(2, 2, 6, 3, 1.0, True, seed=5)
    E = E.detach().clamp_min(-30.0).requires_grad_()  # finite entries for finite differences
    assert torch.autograd.gradcheck(lambda a, b, x, e: gated_midpoint(a, b, x, e, 1.0), (q, k, v, E))


@pytest.mark.parametrize("c", [1.0, 0.4])
def test_translated_exp0_equals_mobius_addition_of_the_exponential_map(c):
    torch.manual_seed(11)
    y = (torch.randn(5, 3, 7, 4, dtype=torch.float64) * 1.5).requires_grad_()
    beta = pm.expmap0(torch.randn(1, 3, 1, 4, dtype=torch.float64) * 0.7, c).requires_grad_()
    ref = pm.project(pm.mobius_add(pm.expmap0(y, c), beta, c), c)
    new, new2 = translated_exp0(y, beta, c)
    _close(new, ref, "point")
    _close(new2, (ref * ref).sum(-1, keepdim=True), "squared norm")
    w = torch.randn_like(ref)
    g_ref = torch.autograd.grad((ref * w).sum() + (ref * ref).sum(), (y, beta))
    g_new = torch.autograd.grad((new * w).sum() + new2.sum(), (y, beta))
    for a, b in zip(g_new, g_ref):
        _close(a, b, "gradient")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_queries_keys_and_values_stay_inside_the_ball_where_tanh_rounds_to_one(dtype):
    """A tangent vector of norm 20 maps to a point ``tanh`` puts on the sphere at infinity (float32);
    projected, every distance, conformal factor and gradient of the layer stays finite."""
    torch.manual_seed(5)
    c, V = 1.0, 6
    y = torch.randn(2, 3, V, 4, dtype=dtype)
    y = (20.0 * y / y.norm(dim=-1, keepdim=True)).requires_grad_()
    beta = pm.expmap0(0.3 * torch.randn(1, 3, 1, 4, dtype=dtype), c)
    p, p2 = translated_exp0(y, beta, c)
    r_max = 1.0 - (4e-3 if dtype == torch.float32 else 1e-5)
    norm, sq = p.detach().norm(dim=-1), p2.detach().squeeze(-1)
    assert float(norm.max()) <= r_max * (1 + 1e-6) and torch.allclose(sq, norm**2)
    q, k, v = p.unbind(1)
    edge = torch.zeros(1, 1, V, V, dtype=dtype)
    out = gated_midpoint(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), edge, c)
    (g,) = torch.autograd.grad(out.square().sum(), y)
    assert torch.isfinite(out).all() and torch.isfinite(g).all()


def _reference_layer(layer: HyperbolicGraphAttention, x: torch.Tensor, edge_term: torch.Tensor) -> torch.Tensor:
    """The layer as written before issue 34: every step from ball points, explicit attention."""
    c, H, o = layer.c, layer.heads, layer.head_dim
    B, V, d = x.shape
    h = pm.logmap0(x, c)
    y = torch.einsum("rod,bvd->brvo", layer.kernel.reshape(3 * H, o, d), h)
    y = pm.project(pm.mobius_add(pm.expmap0(y, c), pm.expmap0(layer.bias.reshape(1, 3 * H, 1, o), c), c), c)
    q, k, v = y.view(B, 3, H, V, o).unbind(1)
    m = _reference_midpoint(v, dense_gated_attention(-pairwise_distance(q, k, c), edge_term), c)
    s = pm.logmap0(x, c) + layer.out(m.permute(0, 2, 1, 3).reshape(B, V, H * o))
    s = s + layer.ffn(layer.norm(s))
    return pm.project(pm.expmap0(cap_norm(s, layer.max_norm), c), c)


@pytest.mark.parametrize("c", [1.0, 0.5])
def test_layer_on_tangent_states_equals_the_reference_layer(c):
    torch.manual_seed(7)
    V, d = 9, 6
    layer = HyperbolicGraphAttention(d, 2, 3, edge_dim=3, c=c).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.add_(0.3 * torch.randn_like(p))
    src = torch.tensor([i for i in range(V) for j in range(V) if (i + j) % 3 == 0 and i != j])
    dst = torch.tensor([j for i in range(V) for j in range(V) if (i + j) % 3 == 0 and i != j])
    ei = torch.cat([torch.stack([src, dst]), torch.arange(V).repeat(2, 1)], 1)
    terms = layer.edge_terms(torch.randn(1, ei.shape[1], 3, dtype=torch.float64), ei, V)
    x = pm.expmap0(torch.randn(4, V, d, dtype=torch.float64) * 0.8, c).requires_grad_()
    assert layer.tangent_is_exact
    ref = _reference_layer(layer, x, terms[0])
    out = layer(x, ei, edge_terms=terms)
    s = layer.update(pm.logmap0(x, c), ei, None, terms)
    _close(out, ref, "forward")
    _close(layer.ball_point(s), ref, "ball_point(update)")
    _close(s, pm.logmap0(ref, c), "update = log_0 of the output")
    w = torch.randn_like(ref)
    params = [x, *layer.parameters()]
    g_ref = torch.autograd.grad((ref * w).sum(), params, retain_graph=True)
    g_new = torch.autograd.grad((layer.ball_point(s) * w).sum(), params)
    for i, (a, b) in enumerate(zip(g_new, g_ref)):
        _close(a, b, f"gradient {i}")


@pytest.mark.parametrize("eu", [False, True])
def test_gathered_and_consecutive_distances_equal_the_poincare_distance(eu):
    torch.manual_seed(3)
    geom = Geometry(1.4, eu)
    z = pm.expmap0(torch.randn(5, 8, 4, dtype=torch.float64) * 0.9, 1.4).requires_grad_()
    flat = torch.randint(64, (5, 20))
    u, v = flat // 8, flat % 8
    zu = z.gather(1, u[..., None].expand(-1, -1, 4))
    zv = z.gather(1, v[..., None].expand(-1, -1, 4))
    off = u != v  # the distance of a node to itself is 0, where the derivative of |x - y| is undefined
    d, xy, x2, y2, _, _ = pair_parts(z, u, v, geom)
    _close(xy, (zu * zv).sum(-1), "<x, y>")
    _close(x2 + y2, (zu * zu).sum(-1) + (zv * zv).sum(-1), "squared norms")
    ref, new = geom.dist(zu, zv)[off], d[off]
    _close(new, ref, "pair distances")
    _close(torch.autograd.grad(new.sum(), z)[0], torch.autograd.grad(ref.sum(), z)[0], "their gradient")
    zt = z.view(1, 5, 8, 4)
    ref_t = geom.dist(zt[:, 1:], zt[:, :-1])
    _close(geom.consecutive_dist(zt), ref_t, "consecutive distances")


# ---------------------------------------------------------------------------- end to end vs d8808bb
_CHILD = textwrap.dedent(
    """
    import sys, torch
    sys.path.insert(0, {bench!r})
    import hgutils
    assert hgutils.__file__.startswith({root!r}), hgutils.__file__
    from metanets import float64_step

    out = {{}}
    for name, kw in {configs!r}.items():
        for step in ("reconstruction", "joint"):
            kw2 = dict(kw, protocol="joint") if step == "joint" else kw
            out[(name, step)] = float64_step(kw2, step)
    torch.save(out, sys.argv[1])
    """
)


def _terms_and_grads(pythonpath: str, path: Path) -> dict:
    code = _CHILD.format(bench=str(REPO / "benchmarks"), root=pythonpath, configs={"default": {}, "large": LARGE})
    env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS="1")
    # cwd away from the checkout: "python -c" puts the working directory first on sys.path
    subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=True, capture_output=True, cwd=path.parent)
    return torch.load(path)


@pytest.fixture(scope="module")
def previous_library(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("previous")
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", PREVIOUS, "hgutils"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"revision {PREVIOUS} is not available in this checkout")
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    return tmp


def test_training_terms_and_gradients_equal_the_previous_revision(previous_library, tmp_path):
    new = _terms_and_grads(str(REPO), tmp_path / "new.pt")
    old = _terms_and_grads(str(previous_library), tmp_path / "old.pt")
    assert new.keys() == old.keys()
    for key in old:
        (t_old, g_old), (t_new, g_new) = old[key], new[key]
        assert t_new.keys() == t_old.keys() and g_new.keys() == g_old.keys(), key
        for k in t_old:
            _close(t_new[k], t_old[k], f"{key} term {k}")
        for k in g_old:
            _close(g_new[k], g_old[k], f"{key} gradient of {k}")


# ---------------------------------------------------------------------------- compiled vs eager
@pytest.mark.slow
def test_compiled_training_step_equals_eager_float64():
    """``compile=True`` (the recurrence and the stage-1 pair terms through ``torch.compile``) gives the
    eager terms and every parameter gradient, float64 to 1e-10, on the reconstruction step (it runs both
    compiled functions; the joint step adds only eager work: the task head and loss). ~1 min on a CPU."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from metanets import float64_step

    for step in ("reconstruction",):
        t_e, g_e = float64_step({"compile": False}, step)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t_c, g_c = float64_step({"compile": True}, step)
        fallbacks = [str(w.message) for w in caught if "torch.compile of" in str(w.message)]
        assert not fallbacks, f"the compiled path fell back to eager: {fallbacks}"  # else eager vs eager
        assert t_c.keys() == t_e.keys() and g_c.keys() == g_e.keys()
        for k in t_e:
            _close(t_c[k], t_e[k], f"{step} term {k}")
        for n in g_e:
            _close(g_c[n], g_e[n], f"{step} grad {n}")
