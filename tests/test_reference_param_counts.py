r"""Trainable-parameter counts of our DWSNet and GMN equal the counts of the reference configurations.

The expected counts are computed here from the references' layer definitions, by small counting
functions that never look at our modules. Both references log ``count_parameters(model)`` = the
number of entries of the parameters with ``requires_grad`` (``experiments/utils.py`` in both), and so
do we. Notation: ``lin(i, o) = i*o + o`` (``nn.Linear`` with bias), an MLP with widths ``d_0..d_L``,
``L`` weight matrices, ``C`` / ``C'`` the in / out features of a layer.

**DWSNets** (``AvivNavon/DWSNets``, ``experiments/mnist/trainer.py`` defaults: ``input_features=1``,
``dim_hidden=32``, ``n_hidden=4``, ``reduction=max``, ``set_layer=sab``, ``n_fc_layers=1``,
``n_out_fc=1``, ``add_bn=True``; ``num_heads`` is not passed, so 8, and 1 in the last DWS layer, which
changes no count). Set layers (``nn/layers/base.py``): ``sab(i, o)`` = the Set Transformer's MAB
without layer norm, ``fc_q, fc_k, fc_v = lin(i, o)`` and ``fc_o = lin(o, o)``, so
``3 lin(i, o) + lin(o, o)``; ``ds(i, o)`` = ``Gamma = lin(i, o)`` plus a bias-free
``Lambda = i*o``. A ``DWSLayer`` (``nn/layers/layers.py``) sums four blocks; each map below is one
branch of the block files (``i``/``j`` the source/target tensor index; ``set`` = ``sab`` or ``ds``):

* ``weight_to_weight.py`` (``W_i -> W_j``): ``W_0 -> W_0``: ``set(d_0 C, d_0 C')``;
  ``W_{L-1} -> W_{L-1}``: ``set(d_L C, d_L C')``; internal ``W_i -> W_i``: ``SetKroneckerSetLayer`` =
  ``4 lin(C, C')``; ``W_0 -> W_1``: ``set(d_0 C, C')``; ``W_{L-2} -> W_{L-1}``: ``set(C, C')`` (built
  with ``last_dim_is_input=True``, so the internal branch: pooled over ``d_{L-2}``, repeated over
  ``d_L``); other ``W_{j-1} -> W_j``: ``set(C, C')``; ``W_1 -> W_0``: ``set(C, d_0 C')``;
  ``W_{L-1} -> W_{L-2}``: ``set(d_L C, C')``; other ``W_{j+1} -> W_j``: ``set(C, C')``; non-neighbours
  (``|i-j| > 1``): ``W_0 -> W_{L-1}``: ``lin(d_0 C, d_L C')``, ``W_0 -> W_j``: ``lin(d_0 C, C')``,
  ``W_{L-1} -> W_0``: ``lin(d_L C, d_0 C')``, ``W_i -> W_0``: ``lin(C, d_0 C')``,
  ``W_{L-1} -> W_j``: ``lin(d_L C, C')``, ``W_i -> W_{L-1}``: ``lin(C, d_L C')``, else ``lin(C, C')``.
* ``weight_to_bias.py`` (``W_i -> b_j``): ``W_0 -> b_0``: ``set(d_0 C, C')``; ``W_{L-1} -> b_{L-1}``:
  ``lin(d_L C, d_L C')``; internal ``W_i -> b_i``: ``set(C, C')``; ``W_{L-1} -> b_{L-2}``:
  ``set(d_L C, C')``; other ``W_{j+1} -> b_j``: ``set(C, C')``; otherwise ``W_0 -> b_{L-1}``:
  ``lin(d_0 C, d_L C')``, ``W_0 -> b_j``: ``lin(d_0 C, C')``, ``W_{L-1} -> b_j``: ``lin(d_L C, C')``,
  ``W_i -> b_{L-1}``: ``lin(C, d_L C')``, else ``lin(C, C')``.
* ``bias_to_weight.py`` (``b_i -> W_j``): ``b_0 -> W_0``: ``set(C, d_0 C')``; ``b_{L-1} -> W_{L-1}``:
  ``lin(d_L C, d_L C')``; internal ``b_i -> W_i``: ``set(C, C')``; ``b_{L-2} -> W_{L-1}``:
  ``set(C, d_L C')``; other ``b_{j-1} -> W_j``: ``set(C, C')``; otherwise ``b_{L-1} -> W_0``:
  ``lin(d_L C, d_0 C')``, ``b_{L-1} -> W_j``: ``lin(d_L C, C')``, ``b_i -> W_0``: ``lin(C, d_0 C')``,
  else ``lin(C, C')`` (``b_i -> W_{L-1}``, ``i <= L-3``, included: repeated over ``d_L``).
* ``bias_to_bias.py`` (``b_i -> b_j``): ``b_{L-1} -> b_{L-1}``: ``lin(d_L C, d_L C')``; other
  ``b_i -> b_i``: ``set(C, C')``; ``b_{L-1} -> b_j``: ``lin(d_L C, C')``; ``b_i -> b_{L-1}``:
  ``lin(C, d_L C')``; else ``lin(C, C')``.

``DWSModelForClassification`` (``nn/models.py``) = ``DWSLayer(1 -> h)`` + ``n_hidden`` x
(``BN``: ``2L`` ``BatchNorm1d(h)`` = ``2L * 2h``; ``DWSLayer(h -> h)``) + ``InvariantLayer`` =
``lin(h (2L - 3) + h d_0 + 2 h d_L, n_classes)``. With ``h = 32``, 4 hidden layers:

* 2-32-32-1 INRs, 10 classes (the MNIST-INR run): first DWS layer 32,000, each hidden one 129,216,
  each ``BN`` 384, invariant layer ``lin(32 * 3 + 32 * 2 + 64 * 1, 10)`` = 2,250; total
  32,000 + 4 (384 + 129,216) + 2,250 = 552,650.
* 3-16-16-4, 10 classes: 86,720 + 4 (384 + 389,280) + ``lin(32 * 3 + 32 * 3 + 64 * 4, 10)`` = 4,490;
  total 1,649,866. Here ``W_1 -> W_2`` is ``sab(32, 32)`` = 4,224 per hidden layer; a map with one
  output per output neuron, ``sab(32, 4 * 32)`` = 29,184, would add 4 * 24,960 + 16,032 (first layer,
  ``sab(1, 32)`` against ``sab(1, 128)``) = 115,872.

**Neural Graphs PNA** (``mkofinas/neural-graphs``, ``experiments/inr_classification``: ``configs/model/
pna.yaml`` with ``scripts/mnist_cls_pna.sh`` -- ``d_hid = 32``, 4 layers, aggregators mean/min/max/std,
scalers identity/amplification, ``modulate_edges``, ``update_edge_attr`` without the final update,
``layernorm``, ``rev_edge_features=True``, ``pooling_method=cat`` over the ``last`` layer, random Fourier
features of size 128, one input layer, position embeddings):

* ``nn/graph_constructor.py``: ``pos_embed`` ``(d_0 + (L - 1) + d_L) x d``; ``proj_weight``,
  ``proj_bias`` = ``GaussianEncoding`` (its ``b`` has ``requires_grad=False``) + ``lin(2 * 128, d)``
  each; ``proj_node_in``, ``proj_edge_in`` = ``lin(d, d)`` each.
* ``nn/gnn.py`` ``PNAConv(d, d)``: ``edge_encoder = lin(d, 2d)`` (modulation: scale and shift),
  ``pre_nns = lin(2d, d)``, ``post_nns = lin((4 * 2 + 1) d, d)``, ``lin = lin(d, d)``;
  ``DegreeScalerAggregation`` with ``train_norm=False`` has none. ``PNA``: 4 convs, 3 ``LayerNorm(d)``
  (``2d`` each), 3 ``EdgeMLP`` = ``4 lin(d, d)`` each.
* ``GNNForClassification.proj_out`` = ``lin(d_L d, d)``, ``lin(d, d)``, ``lin(d, n_classes)``.

For 2-32-32-1 and 10 classes: 160 + 2 * 8,224 + 2 * 1,056 + 4 * 14,496 + 3 * 64 + 3 * 4,224 +
(1,056 + 1,056 + 330) = 92,010.
"""

from __future__ import annotations

import pytest
import torch

from hgutils.weightspace.metanets import GMN, DWSNet


def lin(i: int, o: int) -> int:
    """``nn.Linear(i, o)`` with bias."""
    return i * o + o


def set_layer_count(i: int, o: int, kind: str) -> int:
    """DWSNets' ``GeneralSetLayer``: ``sab`` = MAB (q, k, v, o) without layer norm; ``ds`` = Gamma + bias-free Lambda."""
    return 3 * lin(i, o) + lin(o, o) if kind == "sab" else lin(i, o) + i * o


def dwsnets_layer_count(d: tuple[int, ...], c: int, c2: int, kind: str = "sab") -> int:
    """One reference ``DWSLayer`` on an MLP with widths ``d`` (``C = c -> C' = c2``), branch by branch."""
    L = len(d) - 1
    d0, dL = d[0], d[-1]

    def st(i: int, o: int) -> int:
        return set_layer_count(i, o, kind)

    n = 0
    for i in range(L):  # source index
        for j in range(L):  # target index
            # W_i -> W_j (weight_to_weight.py)
            if i == j:
                n += st(d0 * c, d0 * c2) if i == 0 else st(dL * c, dL * c2) if i == L - 1 else 4 * lin(c, c2)
            elif i == j - 1:
                n += st(d0 * c, c2) if i == 0 else st(c, c2)  # W_{L-2} -> W_{L-1}: the internal branch
            elif i == j + 1:
                n += st(c, d0 * c2) if j == 0 else st(dL * c, c2) if i == L - 1 else st(c, c2)
            elif i == 0:
                n += lin(d0 * c, dL * c2) if j == L - 1 else lin(d0 * c, c2)
            elif j == 0:
                n += lin(dL * c, d0 * c2) if i == L - 1 else lin(c, d0 * c2)
            elif i == L - 1:
                n += lin(dL * c, c2)
            elif j == L - 1:
                n += lin(c, dL * c2)
            else:
                n += lin(c, c2)
            # W_i -> b_j (weight_to_bias.py)
            if i == j:
                n += st(d0 * c, c2) if i == 0 else lin(dL * c, dL * c2) if j == L - 1 else st(c, c2)
            elif i == j + 1:
                n += st(dL * c, c2) if i == L - 1 else st(c, c2)
            elif i == 0:
                n += lin(d0 * c, dL * c2) if j == L - 1 else lin(d0 * c, c2)
            elif i == L - 1:
                n += lin(dL * c, c2)
            else:
                n += lin(c, dL * c2) if j == L - 1 else lin(c, c2)
            # b_i -> W_j (bias_to_weight.py)
            if i == j:
                n += st(c, d0 * c2) if i == 0 else lin(dL * c, dL * c2) if i == L - 1 else st(c, c2)
            elif i == j - 1:
                n += st(c, dL * c2) if j == L - 1 else st(c, c2)
            elif i == L - 1:
                n += lin(dL * c, d0 * c2) if j == 0 else lin(dL * c, c2)
            else:
                n += lin(c, d0 * c2) if j == 0 else lin(c, c2)
            # b_i -> b_j (bias_to_bias.py)
            if i == j:
                n += lin(dL * c, dL * c2) if i == L - 1 else st(c, c2)
            elif i == L - 1:
                n += lin(dL * c, c2)
            else:
                n += lin(c, dL * c2) if j == L - 1 else lin(c, c2)
    return n


def dwsnets_classifier_count(
    d: tuple[int, ...], n_classes: int, c_in: int = 1, h: int = 32, n_hidden: int = 4, kind: str = "sab"
) -> int:
    """``DWSModelForClassification`` with BatchNorm (``nn/models.py``, ``nn/layers/layers.py``)."""
    L = len(d) - 1
    bn = 2 * L * 2 * h
    invariant = lin(h * (2 * L - 3) + h * d[0] + 2 * h * d[-1], n_classes)
    return dwsnets_layer_count(d, c_in, h, kind) + n_hidden * (bn + dwsnets_layer_count(d, h, h, kind)) + invariant


def neural_graphs_pna_count(
    layout: tuple[int, ...],
    n_classes: int,
    d: int = 32,
    layers: int = 4,
    rff: int = 128,
    aggregators: int = 4,
    scalers: int = 2,
) -> int:
    """``GNNForClassification`` with ``GraphConstructor`` and ``PNA`` (``nn/gnn.py``, ``nn/graph_constructor.py``)."""
    L = len(layout) - 1
    constructor = (layout[0] + (L - 1) + layout[-1]) * d + 2 * lin(2 * rff, d) + 2 * lin(d, d)
    conv = lin(d, 2 * d) + lin(2 * d, d) + lin((aggregators * scalers + 1) * d, d) + lin(d, d)
    backbone = layers * conv + (layers - 1) * 2 * d + (layers - 1) * 4 * lin(d, d)
    readout = lin(layout[-1] * d, d) + lin(d, d) + lin(d, n_classes)
    return constructor + backbone + readout


def trainable(m: torch.nn.Module) -> int:
    return sum(p.numel() for p in m.parameters() if p.requires_grad)


# ------------------------------------------------------------------ the counting functions themselves
def test_counting_functions_reproduce_the_docstring_arithmetic():
    """The per-layer figures derived in the module docstring, from the counting functions."""
    assert set_layer_count(32, 32, "sab") == 4_224 and set_layer_count(32, 128, "sab") == 29_184
    assert dwsnets_layer_count((2, 32, 32, 1), 1, 32) == 32_000
    assert dwsnets_layer_count((2, 32, 32, 1), 32, 32) == 129_216
    assert dwsnets_classifier_count((2, 32, 32, 1), 10) == 32_000 + 4 * (384 + 129_216) + 2_250 == 552_650
    assert dwsnets_layer_count((3, 16, 16, 4), 1, 32) == 86_720
    assert dwsnets_layer_count((3, 16, 16, 4), 32, 32) == 389_280
    assert dwsnets_classifier_count((3, 16, 16, 4), 10) == 86_720 + 4 * (384 + 389_280) + 4_490 == 1_649_866
    conv = lin(32, 64) + lin(64, 32) + lin(9 * 32, 32) + lin(32, 32)
    assert conv == 14_496
    expect = 160 + 2 * 8_224 + 2 * 1_056 + 4 * conv + 3 * 64 + 3 * 4_224 + (1_056 + 1_056 + 330)
    assert neural_graphs_pna_count((2, 32, 32, 1), 10) == expect == 92_010


# ------------------------------------------------------------------ (a), (c): DWSNets' classifier
@pytest.mark.parametrize(
    "sizes,k,set_layer,T",
    [
        ((2, 32, 32, 1), 10, "sab", 1),  # (a) the MNIST-INR run
        ((3, 16, 16, 4), 10, "sab", 1),  # (c) four output neurons
        ((3, 16, 16, 4), 10, "ds", 2),  # the DeepSets set layer, two input channels
        ((2, 5, 4, 3, 6), 7, "sab", 1),  # L = 4: internal W_1 -> W_1, b_0 -> W_3 broadcast
    ],
)
def test_dwsnet_counts_equal_the_reference_configuration(sizes, k, set_layer, T):
    """Ours built with the MNIST trainer's settings (its defaults are ours too: hidden 32, 4 hidden DWS
    layers, max reduction, 8 heads, BatchNorm), layer by layer and in total."""
    m = DWSNet("classification", k, sizes, T, hidden=32, n_hidden=4, reduction="max", set_layer=set_layer, bn=True)
    assert trainable(m.layers[0]) == dwsnets_layer_count(sizes, T, 32, set_layer)
    assert all(trainable(x) == dwsnets_layer_count(sizes, 32, 32, set_layer) for x in m.layers[1:])
    assert trainable(m) == dwsnets_classifier_count(sizes, k, c_in=T, kind=set_layer)
    assert trainable(DWSNet("classification", k, sizes, T, set_layer=set_layer)) == trainable(m)  # the defaults


def test_dwsnet_accuracy_head_on_03_classifier_shapes():
    """03's accuracy predictor on 64-32-32-10 classifiers: the reference classifier with one output."""
    sizes = (64, 32, 32, 10)
    m = DWSNet("accuracy", 1, sizes, 1, set_layer="ds")
    assert trainable(m) == dwsnets_classifier_count(sizes, 1, kind="ds")


# ------------------------------------------------------------------ (b): Neural Graphs' PNA GMN
def test_gmn_count_equals_the_neural_graphs_mnist_configuration():
    """Ours built with ``pna.yaml`` + ``mnist_cls_pna.sh`` (the same as our defaults), component by component."""
    sizes, d = (2, 32, 32, 1), 32
    m = GMN(
        "classification", 10, sizes, 1, hidden=d, depth=4, readout="output", reverse_edges=True,
        fourier_dim=128, fourier_sigma=3.0, norm="batch", edge_updates=True, modulate_edges=True, pos_embed=True,
    )  # fmt: skip
    assert trainable(m) == neural_graphs_pna_count(sizes, 10) == trainable(GMN("classification", 10, sizes, 1))
    conv = lin(d, 2 * d) + lin(2 * d, d) + lin(9 * d, d) + lin(d, d)
    assert all(trainable(c) == conv for c in m.convs) and len(m.convs) == 4
    assert all(trainable(e) == 4 * lin(d, d) for e in m.edge_mlps) and len(m.edge_mlps) == 3
    assert all(trainable(n) == 2 * d for n in m.norms) and len(m.norms) == 3
    # the Fourier projections are fixed (rff's GaussianEncoding: requires_grad=False), so not counted; the
    # other buffers are the per-layer input statistics (Neural Graphs keeps them in its data config)
    input_stats = {"in_mean", "in_std", "in_fitted"}
    assert {n for n, _ in m.named_buffers()} == {"edge_proj.0.B", "node_proj.0.B"} | input_stats
    # rev_edge_features changes only the fixed projection's input width (3 vs 1), not the count
    assert trainable(GMN("classification", 10, sizes, 1, reverse_edges=False)) == trainable(m)
