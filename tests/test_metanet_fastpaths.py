"""The restructured GMN computations equal the plain formulas they replace, in float64 to 1e-10,
values and parameter gradients: the GMN against a reference forward written the direct way (the
Fourier features concatenated, the edge inputs ``[w, 0, w]`` / ``[0, w, w]`` built whole, the edge
encoder applied once and chunked, every layer updating every node and edge), and the cache-blocked kernels of
:mod:`hgutils.weightspace.metanets.pna_kernels` against their plain formulas and ``gradcheck``, at
slice sizes from one edge to the whole block, ties of min / max included."""

from __future__ import annotations

import math
from functools import partial

import pytest
import torch
import torch.nn.functional as F

from hgutils.weightspace.metanets import GMN, WeightData, pna_kernels
from hgutils.weightspace.metanets.pna import AGGREGATORS, GaussianFourierFeatures
from hgutils.weightspace.metanets.pna_kernels import edge_mlp, fourier_linear, modulated_moments

TOL = 1e-10


def make_data(n: int, T: int, sizes: tuple[int, ...], seed: int = 0) -> WeightData:
    g = torch.Generator().manual_seed(seed)
    L = len(sizes) - 1
    return WeightData(
        tuple(torch.randn(n, T, sizes[i + 1], sizes[i], generator=g, dtype=torch.float64) for i in range(L)),
        tuple(torch.randn(n, T, sizes[i + 1], generator=g, dtype=torch.float64) for i in range(L)),
    )


# ------------------------------------------------------------------ the GMN written the direct way
def ref_encode(m: GMN, batch: WeightData):
    B, T = len(batch), m.n_snapshots
    Ws = [W.permute(0, 2, 3, 1) for W in batch.weights]
    bias = [batch.weights[0].new_zeros(B, m.sizes[0], T), *(b.permute(0, 2, 1) for b in batch.biases)]
    h = [m.node_in(m.node_proj(x)) for x in bias]
    if m.pos_embed_on:
        h = [x + m._positions(k, x.shape[1]) for k, x in enumerate(h)]
    if not m.reverse_edges:
        return h, [m.edge_in(m.edge_proj(w)) for w in Ws], None
    z = [torch.zeros_like(w) for w in Ws]
    ef = [m.edge_in(m.edge_proj(torch.cat([w, o, w], -1))) for w, o in zip(Ws, z)]
    er = [m.edge_in(m.edge_proj(torch.cat([o, w, w], -1))) for w, o in zip(Ws, z)]
    return h, ef, er


def ref_conv(conv, h, ef, er):
    """One PNA layer: messages of every in-edge of a node side by side on one axis, then reduced."""
    Fd, out = conv.dim, []
    for k, x in enumerate(h):
        msgs = []
        blocks = []
        if k >= 1:  # forward block k-1 [B, d_k, d_{k-1}, F]: sources on axis 2
            blocks.append((ef[k - 1], x[:, :, None], h[k - 1][:, None]))
        if er is not None and k < len(ef):  # reverse block k [B, d_{k+1}, d_k, F]: sources on axis 1
            blocks.append((er[k].transpose(1, 2), x[:, :, None], h[k + 1][:, None]))
        for e, hd, hs in blocks:
            hd, hs = hd.expand(-1, -1, e.shape[2], -1), hs.expand(-1, e.shape[1], -1, -1)
            if conv.modulate_edges:
                scale, shift = conv.edge_encoder(e).chunk(2, -1)
                msgs.append(scale * conv.pre(torch.cat([hd, hs], -1)) + shift)
            else:
                msgs.append(conv.pre(torch.cat([hd, hs, conv.edge_encoder(e)], -1)))
        if not msgs:
            agg, deg = x.new_zeros(*x.shape[:2], len(AGGREGATORS) * Fd), 0
        else:
            mv = torch.cat(msgs, 2)
            deg = mv.shape[2]
            mean = mv.mean(2)
            std = (mv.pow(2).mean(2) - mean**2).clamp_min(1e-5).sqrt()
            std = torch.where(std <= math.sqrt(1e-5), torch.zeros_like(std), std)
            agg = torch.cat([mean, mv.amin(2), mv.amax(2), std], -1)
        amp = math.log(max(deg, 1) + 1) / conv.avg_log_deg
        out.append(conv.lin(conv.post(torch.cat([x, agg, agg * amp], -1))))
    return out


def ref_edge_update(mlp, h, ef, er):
    s, t = [mlp.lin_s(x) for x in h], [mlp.lin_t(x) for x in h]
    new_f = [mlp.lin1(F.silu(mlp.lin_e(e) + s[l][:, None] + t[l + 1][:, :, None])) for l, e in enumerate(ef)]
    if er is None:
        return new_f, None
    return new_f, [mlp.lin1(F.silu(mlp.lin_e(e) + s[l + 1][:, :, None] + t[l][:, None])) for l, e in enumerate(er)]


def ref_embed(m: GMN, batch: WeightData) -> torch.Tensor:
    h, ef, er = ref_encode(m, batch)
    for i, conv in enumerate(m.convs):
        h = ref_conv(conv, h, ef, er)
        if i == len(m.convs) - 1:
            break
        h = [F.silu(x) for x in m.norms[i](h)]
        if m.edge_mlps is not None:
            ef, er = ref_edge_update(m.edge_mlps[i], h, ef, er)
    if m.readout == "output":
        pooled = h[-1].flatten(1)
    elif m.readout == "per_layer":
        pooled = torch.cat([x.mean(1) for x in h], -1)
    else:
        edges = ef + (er or [])
        e_mean = sum(e.sum((1, 2)) for e in edges) / sum(e.shape[1] * e.shape[2] for e in edges)
        pooled = torch.cat([torch.cat(h, 1).mean(1), e_mean], -1)
    return m.encoder_out(m.proj(pooled))


def values_and_grads(m: GMN, f, batch: WeightData):
    m.zero_grad(set_to_none=True)
    z = f(batch)
    (z * torch.linspace(-1, 1, z.numel(), dtype=z.dtype).view_as(z)).sum().backward()
    return z.detach(), {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}


CONFIGS = [
    {},
    {"readout": "per_layer"},
    {"readout": "mean"},
    {"reverse_edges": False},
    {"fourier_dim": 0},
    {"modulate_edges": False},
    {"edge_updates": False, "norm": "graph"},
    {"depth": 1},
]


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
@pytest.mark.parametrize("T", [1, 2])
def test_gmn_equals_the_direct_formulation_values_and_gradients(kw, T):
    torch.manual_seed(0)
    sizes = (2, 5, 4, 3)
    m = GMN("infonce", 4, sizes, T, hidden=8, fourier_dim=kw.pop("fourier_dim", 16), dropout=0.0, **kw).double()
    m.train()
    batch = make_data(6, T, sizes, seed=T)
    z_new, g_new = values_and_grads(m, m.embed, batch)
    z_ref, g_ref = values_and_grads(m, lambda b: ref_embed(m, b), batch)
    assert z_new.shape == (6, 4)
    assert (z_new - z_ref).abs().max() < TOL
    assert g_new.keys() == g_ref.keys() and len(g_ref) > 10
    for n in g_ref:
        assert (g_new[n] - g_ref[n]).abs().max() < TOL, n


def test_the_output_readout_computes_the_output_states_of_the_full_pass():
    torch.manual_seed(1)
    m = GMN("regression", 2, (3, 6, 6, 2), 2, hidden=8, fourier_dim=16, dropout=0.0).double()
    batch = make_data(4, 2, (3, 6, 6, 2))
    assert (m.output_states(batch) - m.node_states(batch)[0][-1]).abs().max() < TOL


# ------------------------------------------------------------------ kernels
def test_fourier_linear_is_the_linear_map_of_the_concatenated_features():
    torch.manual_seed(2)
    rff = GaussianFourierFeatures(3, 8, sigma=3.0).double()
    lin = torch.nn.Linear(16, 5).double()
    x = torch.randn(4, 7, 3, dtype=torch.float64)
    out = fourier_linear(x, 2 * math.pi * rff.B, lin.weight, lin.bias, chunk=5)
    assert out.shape == (4, 7, 5) and (out - lin(rff(x))).abs().max() < TOL


def test_fourier_linear_gradients_in_every_input_and_chunk():
    torch.manual_seed(3)
    x = torch.randn(11, 2, dtype=torch.float64, requires_grad=True)
    f = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 12, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    for chunk in (1, 4, 64):
        assert torch.autograd.gradcheck(partial(fourier_linear, chunk=chunk), (x, f, w, b))
    with pytest.raises(ValueError, match="weight"):
        fourier_linear(x, f, w[:, :10], b)


def _block_inputs(seed: int, B: int = 3, r: int = 4, c: int = 5, Fd: int = 3):
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64).requires_grad_()

    return rnd(B, r, c, Fd), rnd(B, r, Fd), rnd(B, c, Fd)


def _plain_moments(e, rows, cols, weight, bias, dim):
    scale, shift = F.linear(e, weight, bias).chunk(2, -1)
    m = scale * (rows[:, :, None] + cols[:, None]) + shift
    return m.sum(dim), (m * m).sum(dim), m.amin(dim), m.amax(dim)


@pytest.mark.parametrize("dim", [1, 2])
@pytest.mark.parametrize("slice_edges", [1, 7, 10_000])
def test_modulated_moments_equal_the_plain_messages_and_pass_gradcheck(dim, slice_edges, monkeypatch):
    monkeypatch.setattr(pna_kernels, "SLICE_EDGES", slice_edges)
    e, rows, cols = _block_inputs(dim)
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    for new, ref in zip(modulated_moments(e, rows, cols, w, b, dim), _plain_moments(e, rows, cols, w, b, dim)):
        assert new.shape == ref.shape and (new - ref).abs().max() < TOL
    assert torch.autograd.gradcheck(partial(modulated_moments, dim=dim), (e, rows, cols, w, b))
    with pytest.raises(ValueError, match="dim 1 or 2"):
        modulated_moments(e, rows, cols, w, b, 3)


def test_modulated_moments_share_the_gradient_of_tied_extremes_as_amin_and_amax():
    e, rows, cols = _block_inputs(5)
    with torch.no_grad():  # every source of a row sends the same message: all four tie on min and max
        e[:, :, 1:] = e[:, :, :1]
        cols[:, 1:] = cols[:, :1]
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    weights = [torch.randn(3, 4, 3, dtype=torch.float64) for _ in range(4)]
    grads = []
    for f in (modulated_moments, _plain_moments):
        out = f(e, rows, cols, w, b, 2)
        grads.append(torch.autograd.grad(sum((o * k).sum() for o, k in zip(out, weights)), (e, rows, cols, w, b)))
    for new, ref in zip(*grads):
        assert (new - ref).abs().max() < TOL


@pytest.mark.parametrize("slice_edges", [1, 7, 10_000])
def test_edge_mlp_equals_the_plain_formula_and_passes_gradcheck(slice_edges, monkeypatch):
    monkeypatch.setattr(pna_kernels, "SLICE_EDGES", slice_edges)
    e, rows, cols = _block_inputs(7)
    w_e = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    w_1 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    b_1 = torch.randn(2, dtype=torch.float64, requires_grad=True)
    ref = F.linear(F.silu(F.linear(e, w_e) + rows[:, :, None] + cols[:, None]), w_1, b_1)
    assert (edge_mlp(e, rows, cols, w_e, w_1, b_1) - ref).abs().max() < TOL
    assert torch.autograd.gradcheck(edge_mlp, (e, rows, cols, w_e, w_1, b_1))
    with pytest.raises(ValueError, match="rows"):
        edge_mlp(e, cols, rows, w_e, w_1, b_1)


def test_kernels_refuse_a_second_derivative():
    e, rows, cols = _block_inputs(9)
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(modulated_moments(e, rows, cols, w, b, 2)[0].sum(), w, create_graph=True)
    assert not g.requires_grad  # no silent, wrong second-order graph through the kept slices
    with pytest.raises(RuntimeError, match="does not require grad"):
        g.sum().backward()
