"""Tests for hgutils.weightspace.graphs: parameter graphs of MLP zoos."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.weightspace.graphs import GMNGraph, TemporalParamGraph, mlp_topology
from hgutils.weightspace.stacked_mlp import mlp_forward
from hgutils.weightspace.zoo import MLPSpec, Zoo

SPEC = MLPSpec((2, 5, 4, 1), "tanh")


def _traj(n: int, T: int, sizes=SPEC.sizes, seed: int = 0, dtype=torch.float32) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out = {}
    for l in range(len(sizes) - 1):
        out[f"W{l}"] = torch.randn(n, T, sizes[l + 1], sizes[l], generator=g).to(dtype)
        out[f"b{l}"] = torch.randn(n, T, sizes[l + 1], generator=g).to(dtype)
    return out


def _zoo(n=3, T=4, seed=0, dtype=torch.float32) -> Zoo:
    return Zoo(SPEC, _traj(n, T, seed=seed, dtype=dtype), torch.arange(T) * 10)


def _permute_hidden(params, perms):
    """Permute hidden layer k's neurons by perms[k] (k = 1..L-1) in every snapshot."""
    out = dict(params)
    for k, p in perms.items():  # hidden layer k = output of linear layer k-1, input of layer k
        out[f"W{k - 1}"] = out[f"W{k - 1}"][..., p, :]
        out[f"b{k - 1}"] = out[f"b{k - 1}"][..., p]
        out[f"W{k}"] = out[f"W{k}"][..., :, p]
    return out


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000), half=st.booleans(), sizes=st.sampled_from([(2, 5, 4, 1), (3, 8, 2), (1, 4, 4, 4, 2)])
)
def test_round_trip_exact(seed, half, sizes):
    dtype = torch.float16 if half else torch.float32
    params = _traj(2, 3, sizes=sizes, seed=seed, dtype=dtype)
    spec = MLPSpec(sizes, "relu")
    for cls in (TemporalParamGraph, GMNGraph):
        g = cls.from_params(params, spec)
        back = g.to_params()
        for k in params:
            assert back[k].dtype == params[k].dtype
            assert torch.equal(back[k], params[k]), (cls.__name__, k)


def test_round_trip_exact_for_half_precision_subnormals():
    params = {k: v * 1e-4 for k, v in _traj(2, 2, dtype=torch.float16).items()}  # w/2 subnormal in fp16
    g = TemporalParamGraph.from_params(params, SPEC)
    assert g.edge_weight.dtype == torch.float32
    for k, v in g.to_params().items():
        assert v.dtype == torch.float16 and torch.equal(v, params[k])


def test_topology_counts_and_labels():
    g = TemporalParamGraph.from_zoo(_zoo())
    n_params = 2 * 5 + 5 + 5 * 4 + 4 + 4 * 1 + 1
    V = 2 + 5 + 4 + 1 + 3
    assert g.edge_index.shape == (2, 2 * n_params)
    assert g.edge_weight.shape == (3, 4, 2 * n_params)
    assert g.node_feat.shape == (3, 4, V, 2)
    assert g.node_layer.tolist() == [0] * 2 + [1] * 5 + [2] * 4 + [3] + [1, 2, 3]
    assert g.node_type.tolist() == [0] * 2 + [1] * 9 + [2] + [3] * 3
    # forward half = reversed second half; symmetrised weights are w / 2 on both directions
    P = n_params
    assert torch.equal(g.edge_index[:, :P], g.edge_index.flip(0)[:, P:])
    assert torch.equal(g.edge_weight[..., :P], g.edge_weight[..., P:])
    torch.testing.assert_close(g.edge_weight[0, 0, 0], _zoo().params["W0"][0, 0, 0, 0] / 2)
    # edge attributes: bias edges are not cross-layer, weight edges are
    is_bias, cross = g.edge_attr[:, 0], g.edge_attr[:, 1]
    assert int(is_bias.sum()) == 2 * (5 + 4 + 1)
    assert torch.equal(cross, 1 - is_bias)
    src_type = g.node_type[g.edge_index[0]]
    dst_type = g.node_type[g.edge_index[1]]
    assert torch.equal(is_bias.bool(), (src_type == 3) | (dst_type == 3))


def test_node_features_are_zscored_strengths_not_weights():
    z = _zoo(n=2, T=2)
    g = TemporalParamGraph.from_zoo(z)
    f = g.node_feat
    torch.testing.assert_close(f.mean(dim=2), torch.zeros(2, 2, 2), atol=1e-5, rtol=0)
    torch.testing.assert_close(f.std(dim=2, unbiased=False), torch.ones(2, 2, 2), atol=1e-4, rtol=0)
    # recompute by hand for one node: hidden neuron 0 of layer 1 (node 2)
    W0, b0, W1 = z.params["W0"][0, 0], z.params["b0"][0, 0], z.params["W1"][0, 0]
    es_abs = torch.stack([W0[0].abs().sum() + b0[0].abs() + W1[:, 0].abs().sum()])
    s_abs = torch.zeros(g.node_layer.numel()).index_add_(0, g.edge_index[1], g.edge_weight[0, 0].abs())
    torch.testing.assert_close(s_abs[2:3], es_abs / 2)
    zs = (s_abs - s_abs.mean()) / s_abs.std(unbiased=False)
    torch.testing.assert_close(f[0, 0, :, 0], zs, atol=1e-5, rtol=1e-4)
    # features change when the weights are rescaled per layer, but are invariant to a global scale
    z2 = Zoo(SPEC, {k: v * 3.0 for k, v in z.params.items()}, z.steps)
    torch.testing.assert_close(TemporalParamGraph.from_zoo(z2).node_feat, f, atol=1e-5, rtol=1e-4)


def test_hidden_permutation_isomorphism_and_recovery():
    torch.manual_seed(0)
    z = _zoo(n=1, T=3, seed=5)
    perms = {1: torch.randperm(5), 2: torch.randperm(4)}
    pz = Zoo(SPEC, _permute_hidden(z.params, perms), z.steps)
    # the function is unchanged at every snapshot
    x = torch.randn(7, 2)
    for t in range(3):
        torch.testing.assert_close(mlp_forward(z.at(t), x, "tanh"), mlp_forward(pz.at(t), x, "tanh"))
    g, gp = TemporalParamGraph.from_zoo(z), TemporalParamGraph.from_zoo(pz)
    V = g.node_layer.numel()
    # same multisets of node and edge features (node strengths are sums over incident edges in a
    # different order, so equal up to float rounding; edge weights are moved, hence bit-equal)
    torch.testing.assert_close(g.node_feat.sort(dim=2).values, gp.node_feat.sort(dim=2).values, atol=1e-5, rtol=0)
    assert torch.equal(g.edge_weight.sort(dim=-1).values, gp.edge_weight.sort(dim=-1).values)

    def dense(graph):
        A = torch.zeros(graph.T, V, V)
        A[:, graph.edge_index[0], graph.edge_index[1]] = graph.edge_weight[0]
        return A

    A, Ap = dense(g), dense(gp)
    fixed = (g.node_type == 0) | (g.node_type == 2) | (g.node_type == 3)
    hidden = (~fixed).nonzero().squeeze(1)

    def same(u, v):  # weights to the nodes permutations cannot move (exact), and node features
        return torch.equal(Ap[:, u, fixed], A[:, v, fixed]) and torch.allclose(
            gp.node_feat[0, :, u], g.node_feat[0, :, v], atol=1e-5, rtol=0
        )

    recovered = torch.arange(V)
    for u in hidden.tolist():
        matches = [v for v in hidden.tolist() if same(u, v)]
        assert len(matches) == 1
        recovered[u] = matches[0]
    # expected node map: permuted node (offset + i) is original node (offset + perm[i])
    expected = torch.arange(V)
    expected[2:7] = 2 + perms[1]
    expected[7:11] = 7 + perms[2]
    assert torch.equal(recovered, expected)
    # the recovered map is an isomorphism of the whole weighted graph and its node features
    assert torch.equal(Ap, A[:, recovered][:, :, recovered])
    torch.testing.assert_close(gp.node_feat, g.node_feat[:, :, recovered], atol=1e-5, rtol=0)
    assert not torch.allclose(gp.node_feat, g.node_feat, atol=1e-3)  # the permutation did move nodes
    # and the round trip returns the permuted weights
    for k in pz.params:
        assert torch.equal(gp.to_params()[k], pz.params[k])


def test_batch_views_match_subsets():
    z = _zoo(n=5, T=3)
    g = TemporalParamGraph.from_zoo(z)
    idx = torch.tensor([4, 1])
    sub = TemporalParamGraph.from_zoo(z.subset(idx))
    b = g[idx]
    assert b.edge_index is g.edge_index and b.node_layer is g.node_layer
    assert torch.equal(b.edge_weight, sub.edge_weight) and torch.equal(b.node_feat, sub.node_feat)
    s = g[1:3]
    assert s.edge_weight.data_ptr() == g.edge_weight[1:3].data_ptr()  # a view, no copy
    assert len(g[2]) == 1 and len(g[-1]) == 1
    assert g.snapshots([0, 2]).T == 2
    gm = GMNGraph.from_zoo(z)
    assert gm.edge_weight.shape == (5, 3, gm.edge_index.shape[1])
    assert torch.equal(gm[idx].edge_weight, GMNGraph.from_zoo(z.subset(idx)).edge_weight)


def test_gmn_graph_one_edge_per_parameter():
    z = _zoo(n=2, T=2)
    gm = GMNGraph.from_zoo(z)
    n_params = sum(v[0, 0].numel() for v in z.params.values())
    assert gm.edge_index.shape == (2, n_params)
    assert int(gm.edge_attr.sum()) == 5 + 4 + 1
    assert gm.node_pos.tolist()[:2] == [1, 2] and gm.node_pos[11].item() == 1
    top = mlp_topology(SPEC.sizes)
    assert torch.equal(gm.edge_index[0], top["src"])
    torch.testing.assert_close(gm.edge_weight[..., -1], z.params["b2"][..., 0])


def test_errors():
    from hgutils.weightspace.zoo import CNNSpec

    z = _zoo()
    with pytest.raises(ValueError, match="MLP zoo"):
        TemporalParamGraph.from_params(z.params, CNNSpec())
    with pytest.raises(ValueError, match=r"\[N, T"):
        TemporalParamGraph.from_params({k: v[:, 0] for k, v in z.params.items()}, SPEC)
    bad = dict(z.params)
    bad["W1"] = torch.randn(3, 4, 4, 6)
    with pytest.raises(ValueError, match="do not match sizes"):
        GMNGraph.from_params(bad, SPEC)
