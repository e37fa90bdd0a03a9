"""DWSNet on networks with several output neurons (d_L > 1), as DWSNets builds it: the maps into the last
weight matrix that the reference broadcasts over the outputs, hidden-neuron invariance, output order
kept, and the d_L = 1 model unchanged."""

from __future__ import annotations

import pytest
import torch

from hgutils.weightspace.metanets import DWSNet, WeightData
from hgutils.weightspace.metanets.dws import DWSLayer, DWSMap, broadcast_over_outputs, reduce
from hgutils.weightspace.metanets.flat import permute_hidden_per_network


def make_data(n: int, sizes: tuple[int, ...], T: int = 1, seed: int = 0) -> WeightData:
    g = torch.Generator().manual_seed(seed)
    L = len(sizes) - 1
    return WeightData(
        tuple(torch.randn(n, T, sizes[i + 1], sizes[i], generator=g, dtype=torch.float64) for i in range(L)),
        tuple(torch.randn(n, T, sizes[i + 1], generator=g, dtype=torch.float64) for i in range(L)),
    )


def test_which_maps_are_broadcast_over_the_outputs():
    L = 4
    got = {
        f"{s}{i}_{t}{j}"
        for s in "Wb"
        for t in "Wb"
        for i in range(L)
        for j in range(L)
        if broadcast_over_outputs(s, i, t, j, L)
    }
    assert got == {"b0_W3", "b1_W3", "W2_W3"}
    assert not broadcast_over_outputs("W", 0, "W", 1, 2)  # L = 2 has no reference model: the axis rules


@pytest.mark.parametrize("sizes", [(3, 16, 16, 4), (2, 5, 4, 3, 6)])
def test_last_weight_map_is_the_internal_set_map_repeated_over_the_outputs(sizes):
    """``W_{L-2} -> W_{L-1}``: set attention on ``W_{L-2}`` max-pooled over its rows, the same for every output."""
    torch.manual_seed(0)
    L = len(sizes) - 1
    layer = DWSLayer(sizes, 2, 8).double()
    mp = layer.maps[f"W{L - 2}_W{L - 1}"]
    assert mp.op.q.in_features == 2 and mp.op.q.out_features == 8  # no d_L factor
    x = torch.randn(3, sizes[L - 2], sizes[L - 1], 2, dtype=torch.float64)
    y = mp(x)
    assert y.shape == (3, sizes[L - 1], sizes[L], 8)
    direct = mp.op(x.amax(1))  # [B, d_{L-1}, C']
    assert torch.allclose(y, direct[:, :, None].expand_as(y), atol=1e-12)
    # the maps the reference keeps per output position still are: W_0 -> W_{L-1}, b_{L-2} -> W_{L-1}
    assert layer.maps[f"W0_W{L - 1}"].fixed_out == [L] and layer.maps[f"b{L - 2}_W{L - 1}"].fixed_out == [L]


def test_dwsnet_with_four_outputs_is_invariant_to_hidden_permutations_only():
    torch.manual_seed(1)
    sizes = (3, 16, 16, 4)
    m = DWSNet("classification", 10, sizes, 1, hidden=16, n_hidden=2).double()
    data = make_data(6, sizes)
    m(data)  # a training-mode pass moves the BatchNorm statistics
    m.eval()
    out = m(data)
    p = permute_hidden_per_network(data, torch.Generator().manual_seed(2))
    assert (p.weights[1] - data.weights[1]).abs().max() > 0.1  # the permutation moved something
    assert torch.allclose(out, m(p), atol=1e-8)
    # output neurons keep their order: swapping two of them (rows of W_{L-1}, entries of b_{L-1}) is another network
    perm = torch.tensor([1, 0, 2, 3])
    ws, bs = list(data.weights), list(data.biases)
    ws[-1], bs[-1] = ws[-1][:, :, perm], bs[-1][:, :, perm]
    assert (out - m(WeightData(tuple(ws), tuple(bs)))).abs().max() > 1e-6


def test_at_one_output_the_broadcast_and_per_output_maps_are_the_same_map():
    """With ``d_L = 1`` the reference's broadcast equals the per-position map with the same weights, so the
    d_L = 1 model (INRs) is unchanged: same parameter shapes, same outputs."""
    torch.manual_seed(3)
    sizes = (2, 6, 5, 1)
    layer = DWSLayer(sizes, 2, 8).double()
    x = torch.randn(4, 6, 5, 2, dtype=torch.float64)
    per_out = DWSMap((1, 2), (2, 3), sizes, 2, 8, fixed_out_features=True).double()
    per_out.load_state_dict(layer.maps["W1_W2"].state_dict())  # same parameter shapes
    assert torch.allclose(per_out(x), layer.maps["W1_W2"](x), atol=1e-14)
    assert torch.allclose(per_out(x), per_out.op(reduce(x, 1, "max"))[:, :, None], atol=1e-14)
