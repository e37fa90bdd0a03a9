"""GMN, DWSNet and StatNN as their reference code runs them: the block-form PNA against an edge-list
PNA written from the definition, invariance and equivariance, the StatNet features against numpy and
the ``nfn`` package, learning off the plateau on a tiny INR zoo, recipes, options and error paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hgutils.weightspace.metanets import (
    GMN,
    RECIPES,
    DWSNet,
    ReferenceRecipe,
    StatNN,
    WeightData,
    build_metanet,
    random_hidden_perms,
    recipe_for,
)
from hgutils.weightspace.metanets.dws import DWSLayer, DWSMap, SetAttention, invariant_pool
from hgutils.weightspace.metanets.flat import permute_hidden_per_network
from hgutils.weightspace.metanets.output_heads import LinearHead, ProjectionHead, reference_output
from hgutils.weightspace.metanets.pna import (
    GaussianFourierFeatures,
    NodeNorm,
    forward_degree_histogram,
    mean_log_degree,
)
from hgutils.weightspace.metanets.statnn import tensor_stats


def make_data(n=4, T=2, sizes=(2, 5, 4, 1), dtype=torch.float64, seed=0) -> WeightData:
    g = torch.Generator().manual_seed(seed)
    L = len(sizes) - 1
    return WeightData(
        tuple(torch.randn(n, T, sizes[i + 1], sizes[i], generator=g, dtype=dtype) for i in range(L)),
        tuple(torch.randn(n, T, sizes[i + 1], generator=g, dtype=dtype) for i in range(L)),
    )


# ------------------------------------------------------------------------------------------------ GMN
def neuron_edge_list(sizes):
    """Forward edges of every block in row-major (output i, input j) order, then the reversed ones."""
    offs = np.cumsum([0, *sizes])
    src, dst = [], []
    for l in range(len(sizes) - 1):
        for i in range(sizes[l + 1]):
            for j in range(sizes[l]):
                src.append(offs[l] + j)
                dst.append(offs[l + 1] + i)
    src, dst = torch.tensor(src), torch.tensor(dst)
    return torch.cat([src, dst]), torch.cat([dst, src])


def blocks_to_edges(ef, er):
    return torch.cat([e.reshape(e.shape[0], -1, e.shape[-1]) for e in ef + er], 1)


def naive_pna(layer, h, e, src, dst, delta):
    """PNA conv on an edge list, node by node (Corso et al. 2020 as PyG's PNAConv, one tower)."""
    scale, shift = layer.edge_encoder(e).chunk(2, -1)
    m = scale * layer.pre(torch.cat([h[:, dst], h[:, src]], -1)) + shift
    aggs = []
    for v in range(h.shape[1]):
        mv = m[:, dst == v]
        mean = mv.mean(1)
        std = (mv.pow(2).mean(1) - mean**2).clamp_min(1e-5).sqrt()
        std = torch.where(std <= math.sqrt(1e-5), torch.zeros_like(std), std)
        a = torch.cat([mean, mv.amin(1), mv.amax(1), std], -1)
        aggs.append(torch.cat([a, a * math.log(mv.shape[1] + 1) / delta], -1))
    return layer.lin(layer.post(torch.cat([h, torch.stack(aggs, 1)], -1)))


def naive_edge_update(mlp, h, e, src, dst):
    return mlp.lin1(F.silu(mlp.lin_e(e) + mlp.lin_s(h)[:, src] + mlp.lin_t(h)[:, dst]))


def test_block_pna_equals_an_edge_list_pna_written_from_the_definition():
    torch.manual_seed(0)
    sizes = (2, 5, 4, 3)
    m = GMN("classification", 3, sizes, 2, hidden=8, depth=3, dropout=0.0).double().eval()
    data = make_data(3, 2, sizes)
    src, dst = neuron_edge_list(sizes)
    delta = mean_log_degree(forward_degree_histogram(sizes))
    h_blocks, ef, er = m.encode_inputs(data)
    h, e = torch.cat(h_blocks, 1), blocks_to_edges(ef, er)
    for i, conv in enumerate(m.convs):
        h = naive_pna(conv, h, e, src, dst, delta)
        if i == len(m.convs) - 1:
            break
        x = h - h.mean()  # the reference's norm: one mean / std over the whole batch tensor
        h = F.silu(x / (x.std(unbiased=False) + 1e-5) * m.norms[i].weight + m.norms[i].bias)
        e = naive_edge_update(m.edge_mlps[i], h, e, src, dst)
    hb, efb, erb = m.node_states(data)
    assert torch.allclose(torch.cat(hb, 1), h, atol=1e-10)
    assert torch.allclose(blocks_to_edges(efb, erb), e, atol=1e-10)


def test_reference_degree_histogram_and_fourier_features():
    assert forward_degree_histogram((2, 32, 32, 1)).tolist()[:3] == [2, 0, 32]
    hist = forward_degree_histogram((2, 32, 32, 1))
    assert hist[32] == 33 and hist.sum() == 67
    assert mean_log_degree(hist) == pytest.approx((32 * math.log(3) + 33 * math.log(33)) / 67)
    rff = GaussianFourierFeatures(3, 16, sigma=3.0)
    x = torch.randn(5, 3)
    out = rff(x)
    p = 2 * math.pi * x @ rff.B.T
    assert out.shape == (5, 32) and torch.allclose(out, torch.cat([p.cos(), p.sin()], -1))
    assert list(rff.parameters()) == []  # fixed, not trained
    assert 2.8 < float(GaussianFourierFeatures(4, 1000, sigma=3.0).B.std()) < 3.2


@pytest.mark.parametrize("readout", ["output", "per_layer", "mean"])
@pytest.mark.parametrize("norm", ["batch", "graph", "node"])
def test_gmn_is_invariant_to_hidden_permutations_per_network(readout, norm):
    torch.manual_seed(1)
    data = make_data(4, 2)
    m = GMN("classification", 3, (2, 5, 4, 1), 2, hidden=8, depth=3, readout=readout, norm=norm).double().eval()
    same = data.permute_hidden(random_hidden_perms((2, 5, 4, 1), torch.Generator().manual_seed(3)))
    each = permute_hidden_per_network(data, torch.Generator().manual_seed(4))  # a different one per network
    for p in (same, each):
        assert torch.allclose(m(data), m(p), atol=1e-10)
    assert (m(data) - m(make_data(4, 2, seed=9))).abs().max() > 1e-6


def test_gmn_reads_input_and_output_positions():
    """Input and output neurons keep their order: swapping two output neurons is not a symmetry."""
    torch.manual_seed(2)
    sizes = (2, 5, 4, 2)
    data = make_data(3, 1, sizes)
    W, b = list(data.weights), list(data.biases)
    W[-1], b[-1] = W[-1][:, :, [1, 0]], b[-1][:, :, [1, 0]]
    m = GMN("regression", 2, sizes, 1, hidden=8, depth=2).double().eval()
    assert (m(data) - m(WeightData(tuple(W), tuple(b)))).abs().max() > 1e-6


@pytest.mark.parametrize("task", ["infonce", "classification"])
def test_gmn_keeps_the_references_last_relu_and_can_read_before_it(task):
    """Neural Graphs' proj_out ends in a ReLU (every task); ``embed_relu=False`` reads the embedding before it, so
    it takes negative values, and the model stays permutation invariant."""
    torch.manual_seed(5)
    sizes = (1, 6, 6, 1)
    data = make_data(8, 2, sizes)
    out = 4 if task == "infonce" else 3
    m = GMN(task, out, sizes, 2, hidden=8, depth=2).double().eval()
    assert m.embed_relu and isinstance(m.proj[-1], torch.nn.ReLU)
    assert (m.proj(m.pooled(data)) >= 0).all()
    before = GMN(task, out, sizes, 2, hidden=8, depth=2, embed_relu=False).double().eval()
    assert not before.embed_relu and isinstance(before.proj[-1], torch.nn.Identity)
    assert (before.proj(before.pooled(data)) < 0).any()
    same = data.permute_hidden(random_hidden_perms(sizes, torch.Generator().manual_seed(6)))
    assert torch.allclose(before.embed(data), before.embed(same), atol=1e-10)


def tiny_inr_zoo(tmp_path, n=150):
    from hgutils.weightspace.zoo import inr_image_zoo

    z = inr_image_zoo("digits", n_images=n, hidden=(8, 8), steps=80, T=2, cache_root=tmp_path, chunk_size=n)
    # digits 0, 1, 2: 45 INRs
    keep = torch.nonzero(z.meta["label"] < 3).flatten()
    return z.subset(keep)


def test_gmn_with_the_output_readout_leaves_the_plateau_on_a_tiny_inr_zoo(tmp_path, monkeypatch):
    from hgutils.weightspace.inputs import make_splits, prepare_inputs
    from hgutils.weightspace.tasks import TrainConfig, fit

    monkeypatch.setenv("HGUTILS_PROGRESS", "0")
    zoo = tiny_inr_zoo(tmp_path)
    y = zoo.meta["label"]
    splits = make_splits(len(zoo), 0.2, 0.2, seed=0, labels=y)
    z, _ = prepare_inputs(zoo, splits, "standardize")
    torch.manual_seed(0)
    m = build_metanet("GMN", z, "classification", 3, hidden=16, depth=2)
    assert m.readout == "output" and m.dropout == 0.2
    data = m.prepare(z)
    idx = torch.arange(len(zoo))
    cfg = TrainConfig(epochs=40, batch_size=16, lr=3e-3, patience=10**6, restore_best=False)
    res = fit(m, data, y, idx, idx, cfg=cfg)  # the training set: can it leave ln 3? (the earlier GMN stayed there)
    assert res.log.final["loss"] < 0.7 * math.log(3), res.log.final
    assert res.log.final["accuracy"] > 1 / 3 + 0.25, res.log.final


# ------------------------------------------------------------------------------------------------ DWSNet
def as_feats(d: WeightData):
    return DWSNet.to_features(d)


def permute_feats(feats, perms):
    """Hidden permutation ``perms[k-1]`` of neuron set ``k`` on reference-layout features."""
    W, b = [x.clone() for x in feats[0]], [x.clone() for x in feats[1]]
    L = len(W)
    for k in range(1, L):
        p = perms[k - 1]
        W[k - 1], b[k - 1] = W[k - 1][:, :, p], b[k - 1][:, p]
        W[k] = W[k][:, p]
    return W, b


@pytest.mark.parametrize("sizes", [(2, 5, 4, 1), (3, 4, 2), (2, 3, 4, 5, 2)])
@pytest.mark.parametrize("set_layer", ["sab", "ds"])
@pytest.mark.parametrize("reduction", ["max", "mean"])
def test_dws_layer_is_equivariant_to_hidden_permutations(sizes, set_layer, reduction):
    torch.manual_seed(5)
    feats = as_feats(make_data(3, 2, sizes))
    layer = DWSLayer(sizes, 2, 8, reduction=reduction, set_layer=set_layer).double()
    perms = random_hidden_perms(sizes, torch.Generator().manual_seed(6))
    out = layer(feats)
    out_p = layer(permute_feats(feats, perms))
    expect = permute_feats(out, perms)
    for x, y in zip(expect[0] + expect[1], out_p[0] + out_p[1]):
        assert torch.allclose(x, y, atol=1e-10)
    pooled, pooled_p = invariant_pool(out, reduction), invariant_pool(out_p, reduction)
    assert torch.allclose(pooled, pooled_p, atol=1e-10)


def test_dws_layer_is_not_invariant_to_input_or_output_reorderings():
    """Fixed positions are flattened into features, not pooled: reordering inputs changes the output."""
    torch.manual_seed(7)
    sizes = (3, 4, 4, 2)
    feats = as_feats(make_data(2, 1, sizes))
    layer = DWSLayer(sizes, 1, 8).double()
    W, b = [x.clone() for x in feats[0]], [x.clone() for x in feats[1]]
    W[0] = W[0][:, [2, 0, 1]]
    assert (invariant_pool(layer(feats)) - invariant_pool(layer((W, b)))).abs().max() > 1e-6
    W, b = [x.clone() for x in feats[0]], [x.clone() for x in feats[1]]
    W[-1], b[-1] = W[-1][:, :, [1, 0]], b[-1][:, [1, 0]]
    assert (invariant_pool(layer(feats)) - invariant_pool(layer((W, b)))).abs().max() > 1e-6


def test_dws_map_kinds_follow_the_reference():
    sizes = (2, 5, 4, 3, 1)  # L = 4: neuron sets 1..3 hidden
    kinds = {}
    layer = DWSLayer(sizes, 1, 8)
    for key, mp in layer.maps.items():
        kinds[key] = type(mp.op).__name__
    assert kinds["W1_W1"] == "KroneckerSetLayer"  # internal W -> W: two shared hidden sets
    assert kinds["W0_W0"] == "SetAttention" and kinds["W3_W3"] == "SetAttention"  # one shared set
    assert kinds["W0_W1"] == "SetAttention" and kinds["b1_W2"] == "SetAttention" and kinds["b0_b0"] == "SetAttention"
    assert kinds["W0_W2"] == "Linear" and kinds["b3_b3"] == "Linear" and kinds["b3_W3"] == "Linear"
    # fixed positions as features: W0 -> W0 mixes the d0 = 2 input positions, b3 -> b3 the output one
    assert layer.maps["W0_W0"].op.q.in_features == 2 * 1 and layer.maps["W0_W0"].op.q.out_features == 2 * 8
    # the reference's two broadcasts over output positions: b_i -> W_{L-1} for i <= L-3, and W_{L-2} -> W_{L-1}
    assert layer.maps["b0_W3"].fixed_out == [] and layer.maps["b1_W3"].fixed_out == []
    assert layer.maps["W2_W3"].fixed_out == []
    assert layer.maps["b2_W3"].fixed_out == [4] and layer.maps["W0_W3"].fixed_out == [4]


@pytest.mark.parametrize("task,k", [("classification", 3), ("infonce", 16), ("accuracy", 1)])
def test_dwsnet_is_invariant_and_shaped_as_the_reference(task, k):
    torch.manual_seed(8)
    sizes = (2, 5, 4, 1)
    m = DWSNet(task, k, sizes, 2).double()
    assert m.hidden == (16 if task == "infonce" else 32) and len(m.layers) == 5 and len(m.norms) == 4
    assert m.layers[-1].maps["W0_W0"].op.heads == 1 and m.layers[0].maps["W0_W0"].op.heads == 8
    data = make_data(6, 2, sizes)
    m(data)  # one training-mode pass moves the BatchNorm running statistics
    m.eval()
    p = permute_hidden_per_network(data, torch.Generator().manual_seed(9))
    out = m(data)
    assert torch.allclose(out, m(p), atol=1e-8)
    assert out.shape == ((6,) if task == "accuracy" else (6, k))
    emb = m.embed(data)
    assert emb.shape == (6, 16 if task == "infonce" else 32 * (2 * 3 - 3 + 2 + 2 * 1))
    if task == "infonce":
        assert torch.allclose(out.norm(dim=-1), torch.ones(6, dtype=out.dtype))
    assert (out - m(make_data(6, 2, sizes, seed=3))).abs().max() > 1e-6


def test_dwsnet_trains_with_a_single_network_batch():
    m = DWSNet("classification", 2, (2, 3, 3, 1), 1, hidden=8, n_hidden=1)
    out = m(make_data(1, 1, (2, 3, 3, 1), torch.float32))  # one-entry output bias, batch 1
    assert out.shape == (1, 2) and torch.isfinite(out).all()


def test_set_attention_is_permutation_equivariant_and_checks_heads():
    torch.manual_seed(10)
    sab = SetAttention(3, 8, heads=4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    p = torch.randperm(6)
    assert torch.allclose(sab(x)[:, p], sab(x[:, p]), atol=1e-12)
    with pytest.raises(ValueError, match="divisible"):
        SetAttention(3, 6, heads=4)


def test_set_attention_is_the_set_transformer_formula_with_its_gradients():
    # the fused attention kernel computes the reference's explicit SAB: O = Q + softmax(Q K^T / sqrt(C')) V,
    # then O + ReLU(W_o O), with the scale over all C' channels (not per head), values and gradients
    torch.manual_seed(12)
    sab = SetAttention(3, 8, heads=4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64, requires_grad=True)

    def explicit(x: torch.Tensor) -> torch.Tensor:
        q, k, v = (f(x).view(2, 6, 4, 2).transpose(1, 2) for f in (sab.q, sab.k, sab.v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8), -1)
        o = (q + a @ v).transpose(1, 2).reshape(2, 6, 8)
        return o + torch.relu(sab.o(o))

    y, ref = sab(x), explicit(x)
    assert torch.allclose(y, ref, atol=1e-12)
    g = torch.randn_like(y)
    (gx,) = torch.autograd.grad(y, x, g)
    (gr,) = torch.autograd.grad(ref, x, g)
    assert torch.allclose(gx, gr, atol=1e-12)
    assert torch.autograd.gradcheck(sab, (x,))


def test_reference_init_scale_of_dws_linears():
    torch.manual_seed(11)
    layer = DWSLayer((2, 4, 4, 1), 32, 32)
    lin = layer.maps["W1_W1"].op.all  # Linear(32, 32): xavier std sqrt(2/64), times sqrt(2 * 32/32)
    assert float(lin.weight.detach().std()) == pytest.approx(0.25, rel=0.1)
    assert float(lin.bias.detach().abs().max()) <= 1e-4


# ------------------------------------------------------------------------------------------------ StatNN
def numpy_stats(data: WeightData, ddof: int = 0) -> np.ndarray:
    """Direct numpy: per network, snapshot, tensor (W0, b0, W1, ...): mean, var, 5 quantiles."""
    tensors = [t.numpy() for pair in zip(data.weights, data.biases) for t in pair]
    n, T = tensors[0].shape[:2]
    out = np.zeros((n, T, len(tensors), 7))
    for i in range(n):
        for t in range(T):
            for k, x in enumerate(tensors):
                v = x[i, t].ravel()
                var = v.var(ddof=ddof) if v.size > ddof else v.var()
                out[i, t, k] = [v.mean(), var, *np.quantile(v, [0, 0.25, 0.5, 0.75, 1.0])]
    return out.reshape(n, -1)


@pytest.mark.parametrize("variance,ddof", [("population", 0), ("sample", 1)])
def test_statnet_features_match_a_direct_numpy_computation(variance, ddof):
    data = make_data(5, 3, (2, 5, 4, 1))
    m = StatNN("classification", 2, (2, 5, 4, 1), 3, variance=variance).double()
    assert np.allclose(m.features(data).numpy(), numpy_stats(data, ddof), atol=1e-12)
    s = tensor_stats(torch.arange(10.0).view(1, 1, 2, 5))[0, 0]
    assert torch.allclose(s, torch.tensor([4.5, 8.25, 0.0, 2.25, 4.5, 6.75, 9.0]))


def test_statnet_sample_variance_matches_the_nfn_stat_featurizer():
    from nfn.common import WeightSpaceFeatures
    from nfn.layers import StatFeaturizer

    sizes = (3, 5, 4, 2)  # every tensor has >= 2 entries: the reference's sample variance is defined
    data = make_data(4, 2, sizes, torch.float32)  # nfn's quantiles take float32 inputs
    ref = StatFeaturizer()(WeightSpaceFeatures(list(data.weights), list(data.biases))).flatten(1)
    ours = StatNN("accuracy", 1, sizes, 2, variance="sample").features(data)
    assert torch.allclose(ours, ref, atol=1e-6)


def test_statnet_is_the_reference_mlp_and_invariant():
    sizes = (2, 5, 4, 1)
    m = StatNN("accuracy", 1, sizes, 1)
    lins = [x for x in m.mlp if isinstance(x, torch.nn.Linear)]
    assert [x.out_features for x in lins] == [1000, 1000] and lins[0].in_features == 7 * 6
    assert isinstance(m.head, LinearHead) and m.head.net.out_features == 1 and m.norm is None
    assert not any(isinstance(x, torch.nn.Dropout) for x in m.mlp)  # reference dropout 0
    data = make_data(4, 1, sizes, torch.float32)
    p = permute_hidden_per_network(data, torch.Generator().manual_seed(1))
    assert m(data).shape == (4,) and torch.allclose(m(data), m(p), atol=1e-5)
    old = StatNN("classification", 3, sizes, 1, hidden=128, act="silu", feature_norm="batch", head="mlp")
    assert isinstance(old.norm, torch.nn.BatchNorm1d) and old.head.net[0].in_features == 128
    assert old(data[torch.tensor([0])]).shape == (1, 3)  # one network in training mode: running statistics


# ------------------------------------------------------------------------------------------------ recipes, heads
def test_recipes_name_their_source_and_models_read_their_dropout():
    from hgutils.weightspace.metanets import TASKS

    assert set(RECIPES) == {(m, t) for m in ("GMN", "DWSNet", "StatNN") for t in TASKS}
    assert all(r.source and r.optimizer in ("adam", "adamw") for r in RECIPES.values())
    assert recipe_for("GMN", "classification").dropout == 0.2 and recipe_for("GMN", "accuracy").dropout == 0.0
    assert recipe_for("DWSNet", "classification").lr == 5e-3 and recipe_for("DWSNet", "infonce").epochs == 500
    assert recipe_for("StatNN", "accuracy").batch_size == 8 and recipe_for("NFN_NP", "accuracy") is None
    assert GMN("classification", 2, (2, 3, 1), 1).dropout == 0.2 and GMN("accuracy", 1, (2, 3, 1), 1).dropout == 0
    assert GMN("classification", 2, (2, 3, 1), 1, dropout=0.0).dropout == 0.0
    assert DWSNet("classification", 2, (2, 3, 1), 1).recipe.source.startswith("AvivNavon/DWSNets")
    with pytest.raises(ValueError, match="optimizer"):
        ReferenceRecipe("sgd", 1e-3, 0.0, 8, 10)
    with pytest.raises(ValueError, match="dropout"):
        ReferenceRecipe("adam", 1e-3, 0.0, 8, 10, dropout=1.5)
    with pytest.raises(ValueError, match="inputs"):
        ReferenceRecipe("adam", 1e-3, 0.0, 8, 10, inputs="zscore")
    from hgutils.weightspace.metanets.recipes import RECIPE_INPUTS

    assert {r.inputs for r in RECIPES.values()} <= set(RECIPE_INPUTS)
    assert recipe_for("DWSNet", "classification").inputs == "standardize"
    assert (
        recipe_for("StatNN", "accuracy").inputs == "none" and recipe_for("GMN", "classification").inputs == "per_layer"
    )


def test_reference_output_heads():
    enc, head = reference_output("infonce", 10, 16)
    e = enc(torch.randn(4, 10))
    z = head(e)
    assert isinstance(head, ProjectionHead) and z.shape == (4, 16) and torch.allclose(z.norm(dim=-1), torch.ones(4))
    assert torch.equal(head.features(e), e)  # the probe reads the 16-d encoder output, not the projection
    enc, head = reference_output("accuracy", 10, 5)
    assert head(enc(torch.randn(4, 10))).shape == (4,)
    with pytest.raises(ValueError, match="ProjectionHead"):
        LinearHead("infonce", 4, 2)
    with pytest.raises(ValueError, match="out_dim"):
        reference_output("classification", 4, 0)


def test_node_norm_modes():
    h = [torch.randn(3, 4, 5, dtype=torch.float64), torch.randn(3, 2, 5, dtype=torch.float64)]
    x = torch.cat(h, 1)
    g = torch.cat(NodeNorm(5, "graph").double()(h), 1)
    assert torch.allclose(g.mean((1, 2)), torch.zeros(3, dtype=g.dtype), atol=1e-12)
    b = torch.cat(NodeNorm(5, "batch").double()(h), 1)
    assert torch.allclose(b, (x - x.mean()) / (x.std(unbiased=False) + 1e-5))
    assert torch.equal(torch.cat(NodeNorm(5, "none")(h), 1), x)
    with pytest.raises(ValueError, match="norm"):
        NodeNorm(5, "instance")


def test_option_and_shape_errors():
    sizes = (2, 5, 4, 1)
    with pytest.raises(ValueError, match="readout"):
        GMN("classification", 2, sizes, 1, readout="max")
    with pytest.raises(ValueError, match="norm"):
        GMN("classification", 2, sizes, 1, norm="batchnorm")
    with pytest.raises(ValueError, match="reduction"):
        DWSNet("classification", 2, sizes, 1, reduction="min")
    with pytest.raises(ValueError, match="set_layer"):
        DWSNet("classification", 2, sizes, 1, set_layer="transformer")
    with pytest.raises(ValueError, match="hidden layer"):
        DWSLayer((2, 1), 1, 4)
    with pytest.raises(ValueError, match="divisible"):
        DWSNet("classification", 2, sizes, 1, hidden=12)
    for kw in ({"act": "gelu"}, {"feature_norm": "layer"}, {"variance": "robust"}, {"head": "attention"}):
        with pytest.raises(ValueError):
            StatNN("classification", 2, sizes, 1, **kw)
    data = make_data(2, 1, sizes, torch.float32)
    for m in (
        GMN("classification", 2, sizes, 2),
        DWSNet("classification", 2, sizes, 2),
        StatNN("regression", 1, sizes, 2),
    ):
        with pytest.raises(ValueError, match="mismatch"):
            m.embed(data)
    with pytest.raises(ValueError, match="mismatch"):
        GMN("classification", 2, (2, 5, 5, 1), 1).embed(data)
    assert isinstance(DWSMap((0, 1), (1,), sizes, 1, 4, heads=2).op, SetAttention)  # W0 -> b0 shares set 1
