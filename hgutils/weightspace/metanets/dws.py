r"""DWSNet as DWSNets runs it: deep weight-space networks for MLP weight spaces (Navon et al., ICML 2023).

Follows the authors' code (``AvivNavon/DWSNets``: ``nn/layers/*.py``, ``nn/models.py``; the
trainers ``experiments/mnist/trainer.py`` and ``experiments/ssl/trainer.py``). Notation: an MLP with
widths ``d_0..d_L`` has ``W_j [d_j, d_{j+1}]`` and ``b_j [d_{j+1}]`` (``j < L``); the neuron sets
``1..L-1`` are hidden and permutable, ``0`` (inputs) and ``L`` (outputs) keep their order.
Features are channels-last: ``W_j [B, d_j, d_{j+1}, C]``, ``b_j [B, d_{j+1}, C]``.

**Equivariant layer** (:class:`DWSLayer`). Every output tensor ``Y`` sums one map from every input
tensor ``X`` (weights and biases), and the sum is divided by ``2L`` (the reference's
``n_matrices``). Each map :class:`DWSMap` is built from how the axes of ``X`` and ``Y`` relate:

* a *hidden* axis of ``X`` absent from ``Y`` is reduced (``reduction``: max in the reference);
* the *fixed* axes (input or output positions) of ``X`` are flattened into the features, and those
  of ``Y`` are produced as features -- positions are mixed by full linear maps;
* the hidden axes ``X`` and ``Y`` share are kept: none -> a ``Linear``; one -> a *set layer* along
  that axis (``set_layer``: ``"sab"`` = set attention, the reference default, or ``"ds"`` =
  DeepSets); two (``W_j -> W_j``, ``j`` internal) -> the four-term Kronecker layer
  ``(A x + B\,\mathrm{pool}_{rows} x + C\,\mathrm{pool}_{cols} x + D\,\mathrm{pool}_{all} x) / 4``;
* a hidden axis of ``Y`` absent from ``X`` is broadcast.

Two exceptions copy the reference (:func:`broadcast_over_outputs`): two maps into the last weight
matrix ``W_{L-1}`` are computed as if its output axis were an internal one and broadcast over the
``d_L`` output positions -- ``b_i -> W_{L-1}`` for ``i <= L-3`` (the reference's
``NonNeighborInternalLayer``) and ``W_{L-2} -> W_{L-1}`` (``WeightToWeightBlock`` builds it as an
internal ``GeneralMatrixSetLayer``: ``W_{L-2}`` max-pooled over its rows, a set layer over the
``d_{L-1}`` neurons with ``C -> C'`` features, repeated over the outputs). At ``d_L = 1`` a broadcast
and a per-position output are the same map; for ``d_L > 1`` (classifiers) the per-position version
has ``d_L`` times the output features and different outputs. With ``L = 2`` (no reference model:
``DWSModel`` asserts ``L > 2``) every map follows the axis rules.

Set attention (:class:`SetAttention`) is the Set Transformer's SAB without layer norm:
``O = Q + \mathrm{softmax}(Q K^T / \sqrt{C'}) V`` per head, then ``O + \mathrm{ReLU}(W_o O)``; the
last layer uses one head. Every ``Linear`` of a layer is initialised as the reference's
``_init_model_params``: Xavier-normal times :math:`\sqrt{2\,\mathrm{fan_{in}}/\mathrm{fan_{out}}}`,
biases :math:`U(-10^{-4}, 10^{-4})`.

**Model** (:class:`DWSNet`): ``DWSLayer(T -> h)``, then ``n_hidden`` times BatchNorm (per tensor,
over the channels), ReLU, dropout, ``DWSLayer(h -> h)``; then ReLU, dropout and the invariant
layer: ``W_0`` reduced over its hidden axis (``d_0 * h``), ``W_{L-1}`` likewise (``d_L * h``), the
internal ``W_j`` and the hidden-layer biases reduced entirely (``h`` each), ``b_{L-1}`` flattened
(``d_L * h``); the concatenation is the embedding and one ``Linear`` the head
(:mod:`.output_heads`; in the InfoNCE mode a ``Linear`` to the 16-d encoder output and the SSL
trainer's projection head). Hidden width 32 (MNIST trainer) and 16 in the InfoNCE mode (SSL
trainer), 4 hidden layers, max reduction, BatchNorm, set attention with 8 heads. The reference
normalises each input entry with the training networks' mean and std (``compute_statistics.py``,
``_normalize``): the shared input preparation does that
(:func:`hgutils.weightspace.inputs.prepare_inputs`, ``inputs="standardize"``).
The ``T`` read snapshots enter as ``T`` input channels. Every map commutes with hidden-neuron
permutations, so layers are equivariant and the model is invariant (tested).

Cost: flattening fixed positions into features makes the maps that touch ``W_0`` grow with
:math:`(d_0 h)^2`: 0.55 M parameters for 2-32-32-1 INRs at ``h = 32``, 132 M for 64-32-32-10
classifiers. ``set_layer="ds"`` (DeepSets) is the reference's cheaper set layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData
from hgutils.weightspace.metanets.output_heads import reference_output
from hgutils.weightspace.metanets.recipes import ReferenceRecipe, recipe_for

Feats = tuple[list[Tensor], list[Tensor]]
REDUCTIONS: tuple[str, ...] = ("max", "mean", "sum")
SET_LAYERS: tuple[str, ...] = ("sab", "ds")


def reduce(x: Tensor, dims: tuple[int, ...] | int, how: str, keepdim: bool = False) -> Tensor:
    """Permutation-invariant reduction of ``x`` over ``dims``: ``"max"``, ``"mean"`` or ``"sum"``.

    Max over adjacent dims goes through ``torch.max`` on the flattened dims (its backward scatters
    the gradient to the arg-max entries instead of comparing every entry with the maximum).
    """
    if how == "max":
        d = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(d) == 1 or (len(d) == 2 and d[1] == d[0] + 1):
            y = x.flatten(d[0], d[-1]).max(d[0]).values
            return y.reshape(*x.shape[: d[0]], *([1] * len(d)), *x.shape[d[-1] + 1 :]) if keepdim else y
        return x.amax(d, keepdim=keepdim)
    if how == "mean":
        return x.mean(dims, keepdim=keepdim)
    if how == "sum":
        return x.sum(dims, keepdim=keepdim)
    raise ValueError(f"reduction must be one of {REDUCTIONS}; got {how!r}")


class SetAttention(nn.Module):
    """Set Transformer SAB without layer norm (Lee et al. 2019, arXiv:1810.00825), on ``[B, n, C_in]``."""

    def __init__(self, cin: int, cout: int, heads: int = 8) -> None:
        super().__init__()
        if heads < 1 or cout % heads:
            raise ValueError(f"set attention needs out features ({cout}) divisible by heads ({heads})")
        self.heads, self.cout = heads, cout
        self.q, self.k, self.v = nn.Linear(cin, cout), nn.Linear(cin, cout), nn.Linear(cin, cout)
        self.o = nn.Linear(cout, cout)

    def forward(self, x: Tensor) -> Tensor:
        B, n, _ = x.shape
        H, s = self.heads, self.cout // self.heads
        q, k, v = (f(x).view(B, n, H, s).transpose(1, 2) for f in (self.q, self.k, self.v))  # [B, H, n, s]
        # softmax(q k^T / sqrt(C')) v, the reference's scale, in one fused kernel with its own backward:
        # a DWSNet training step on 02's shapes takes 0.90-0.97x the explicit bmm / softmax / bmm's CPU
        # time, within the machine's round-to-round spread (benchmarks/dwsnet_attention.py)
        a_v = F.scaled_dot_product_attention(q, k, v, scale=1.0 / math.sqrt(self.cout))
        o = (q + a_v).transpose(1, 2).reshape(B, n, self.cout)
        return o + torch.relu(self.o(o))


class DeepSetsLayer(nn.Module):
    r"""DeepSets layer :math:`\Gamma x - \Lambda\,\mathrm{pool}(x)` along the set axis 1 of ``[B, n, C_in]``."""

    def __init__(self, cin: int, cout: int, reduction: str = "max") -> None:
        super().__init__()
        self.gamma, self.lam, self.reduction = nn.Linear(cin, cout), nn.Linear(cin, cout, bias=False), reduction

    def forward(self, x: Tensor) -> Tensor:
        return self.gamma(x) - self.lam(reduce(x, 1, self.reduction, keepdim=True))


class KroneckerSetLayer(nn.Module):
    """The two-set layer of an internal ``W_j -> W_j`` map on ``[B, n_1, n_2, C_in]`` (module docstring)."""

    def __init__(self, cin: int, cout: int, reduction: str = "max") -> None:
        super().__init__()
        self.reduction = reduction
        self.all, self.rows, self.cols, self.both = (nn.Linear(cin, cout) for _ in range(4))

    def terms(self, x: Tensor, pool: Callable[[tuple[int, ...]], Tensor] | None = None) -> list[Tensor]:
        """The four terms, each divided by 4, broadcastable to ``x``'s shape; ``pool(dims)`` is ``x`` reduced
        over ``dims`` (shared with the layer's other maps; default: computed here)."""
        if pool is None:

            def pool(dims: tuple[int, ...]) -> Tensor:
                return reduce(x, dims, self.reduction)

        rows, cols, both = pool((1,)).unsqueeze(1), pool((2,)).unsqueeze(2), pool((1, 2))[:, None, None]
        full = F.linear(x, self.all.weight / 4.0, self.all.bias / 4.0)  # the /4 on the weights, not the big output
        return [full, self.rows(rows) / 4.0, self.cols(cols) / 4.0, self.both(both) / 4.0]

    def forward(self, x: Tensor) -> Tensor:
        return sum_broadcast(self.terms(x))


class DWSMap(nn.Module):
    """One map from an input tensor with axes ``x_axes`` to an output tensor with axes ``y_axes``.

    Axes are neuron-set indices ``0..L`` (``sizes[a]`` long); ``1..L-1`` are hidden. See the module
    docstring for how the axes decide the map.
    """

    def __init__(
        self,
        x_axes: tuple[int, ...],
        y_axes: tuple[int, ...],
        sizes: tuple[int, ...],
        cin: int,
        cout: int,
        reduction: str = "max",
        set_layer: str = "sab",
        heads: int = 8,
        fixed_out_features: bool = True,
    ) -> None:
        super().__init__()
        L = len(sizes) - 1

        def hidden(a: int) -> bool:
            return 0 < a < L

        self.x_axes, self.y_axes, self.sizes, self.cout, self.reduction = x_axes, y_axes, sizes, cout, reduction
        self.reduce_dims = tuple(1 + p for p, a in enumerate(x_axes) if hidden(a) and a not in y_axes)
        kept = [a for a in x_axes if not (hidden(a) and a not in y_axes)]
        self.shared = [a for a in kept if hidden(a)]
        self.fixed_in = [a for a in kept if not hidden(a)]
        self.perm_in = [0] + [1 + kept.index(a) for a in self.shared + self.fixed_in] + [len(kept) + 1]
        self.fixed_out = [a for a in y_axes if not hidden(a)] if fixed_out_features else []
        f_in = cin * math.prod(sizes[a] for a in self.fixed_in)
        f_out = cout * math.prod(sizes[a] for a in self.fixed_out)
        if len(self.shared) == 0:
            self.op: nn.Module = nn.Linear(f_in, f_out)
        elif len(self.shared) == 1:
            self.op = SetAttention(f_in, f_out, heads) if set_layer == "sab" else DeepSetsLayer(f_in, f_out, reduction)
        else:
            self.op = KroneckerSetLayer(f_in, f_out, reduction)
        have = self.shared + self.fixed_out
        self.missing = [a for a in y_axes if a not in have]
        order = have + self.missing
        self.perm_out = [0] + [1 + order.index(a) for a in y_axes] + [len(order) + 1]

    def terms(self, x: Tensor, pool: Callable[[tuple[int, ...]], Tensor] | None = None) -> list[Tensor]:
        """The map of ``x`` as terms broadcastable to the output shape (size-1 axes where constant).

        ``pool(dims)`` returns ``x`` reduced over ``dims`` (a layer shares these between its maps).
        """
        if pool is None:

            def pool(dims: tuple[int, ...]) -> Tensor:
                return reduce(x, dims, self.reduction)

        if isinstance(self.op, KroneckerSetLayer):  # W_j -> W_j, j internal: axes and layout unchanged
            return self.op.terms(x, pool)
        if self.reduce_dims:
            x = pool(self.reduce_dims)
        x = x.permute(self.perm_in)
        B, shared = x.shape[0], [self.sizes[a] for a in self.shared]
        y = self.op(x.reshape(B, *shared, -1))
        y = y.reshape(B, *shared, *(self.sizes[a] for a in self.fixed_out), self.cout)
        return [y.reshape(*y.shape[:-1], *([1] * len(self.missing)), self.cout).permute(self.perm_out)]

    def forward(self, x: Tensor) -> Tensor:
        """The map of ``x`` at the output's full shape."""
        y = sum_broadcast(self.terms(x))
        return y.expand(x.shape[0], *(self.sizes[a] for a in self.y_axes), self.cout)


def _w_axes(j: int) -> tuple[int, int]:
    return (j, j + 1)


def _b_axes(j: int) -> tuple[int]:
    return (j + 1,)


def broadcast_over_outputs(src: str, i: int, dst: str, j: int, L: int) -> bool:
    """Whether the reference computes the map ``src_i -> dst_j`` (``"W"`` / ``"b"``) without per-output
    positions and broadcasts it over the ``d_L`` outputs of ``W_{L-1}`` (module docstring): ``b_i -> W_{L-1}``
    for ``i <= L-3`` (``nn/layers/bias_to_weight.py``) and ``W_{L-2} -> W_{L-1}`` for ``L >= 3``
    (``nn/layers/weight_to_weight.py``)."""
    if dst != "W" or j != L - 1:
        return False
    return i <= L - 3 if src == "b" else (i == L - 2 and L >= 3)


def init_reference_(module: nn.Module, scale: float = 1.0) -> None:
    r"""The reference DWS-layer init: every ``Linear`` Xavier-normal times :math:`\sqrt{2 n_{in}/n_{out}}` times
    ``scale``, biases :math:`U(-10^{-4}, 10^{-4})`."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            out_c, in_c = m.weight.shape
            with torch.no_grad():
                nn.init.xavier_normal_(m.weight)
                m.weight.mul_(math.sqrt(2 * in_c / out_c) * scale)
                if m.bias is not None:
                    m.bias.uniform_(-1e-4, 1e-4)


class DWSLayer(nn.Module):
    """One equivariant weight-space layer: every (input tensor -> output tensor) map, summed, / ``2L``."""

    def __init__(
        self,
        sizes: tuple[int, ...],
        cin: int,
        cout: int,
        reduction: str = "max",
        set_layer: str = "sab",
        heads: int = 8,
        init_scale: float = 1.0,
    ) -> None:
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}; got {reduction!r}")
        if set_layer not in SET_LAYERS:
            raise ValueError(f"set_layer must be one of {SET_LAYERS}; got {set_layer!r}")
        self.sizes, self.reduction = tuple(sizes), reduction
        L = len(sizes) - 1
        if L < 2:
            raise ValueError(f"DWS layers need at least one hidden layer; got sizes {sizes}")
        self.L = L
        kw = {"sizes": self.sizes, "cin": cin, "cout": cout, "reduction": reduction, "set_layer": set_layer}
        kw["heads"] = heads
        axes = {"W": _w_axes, "b": _b_axes}
        self.maps = nn.ModuleDict()
        for src in ("W", "b"):
            for dst in ("W", "b"):
                for i in range(L):
                    for j in range(L):
                        xa, ya = axes[src](i), axes[dst](j)
                        per_out = not broadcast_over_outputs(src, i, dst, j, L)
                        self.maps[f"{src}{i}_{dst}{j}"] = DWSMap(xa, ya, fixed_out_features=per_out, **kw)
        init_reference_(self, init_scale)

    def forward(self, feats: Feats) -> Feats:
        W, b = feats
        ins = {"W": W, "b": b}
        cache: dict[tuple[str, int, tuple[int, ...]], Tensor] = {}

        def pooler(s: str, i: int) -> Callable[[tuple[int, ...]], Tensor]:
            def pool(dims: tuple[int, ...]) -> Tensor:
                key = (s, i, tuple(dims))
                if key not in cache:
                    cache[key] = reduce(ins[s][i], tuple(dims), self.reduction)
                return cache[key]

            return pool

        outs: dict[str, list[Tensor]] = {}
        for dst in ("W", "b"):
            outs[dst] = []
            for j in range(self.L):
                terms = [
                    t
                    for s in ("W", "b")
                    for i in range(self.L)
                    for t in self.maps[f"{s}{i}_{dst}{j}"].terms(ins[s][i], pooler(s, i))
                ]
                outs[dst].append(sum_broadcast(terms, 1.0 / (2 * self.L)))
        return outs["W"], outs["b"]


def sum_broadcast(terms: list[Tensor], scale: float = 1.0) -> Tensor:
    """``scale`` times the sum of broadcastable terms; terms of one shape are added first, then the
    shapes from the smallest up, so most additions happen at the small (size-1-axis) shapes."""
    groups: dict[tuple[int, ...], Tensor] = {}
    for t in terms:
        k = tuple(t.shape)
        groups[k] = groups[k] + t if k in groups else t
    parts = sorted(groups.values(), key=lambda t: t.numel())
    acc = parts[0]
    for p in parts[1:]:
        acc = acc + p
    return acc * scale if scale != 1.0 else acc


class TensorBatchNorm(nn.Module):
    """BatchNorm over the channels of each weight and bias tensor (the reference's ``BN``).

    A training batch with a single value per channel (one network, a one-entry output bias) uses the
    running statistics instead of failing.
    """

    def __init__(self, channels: int, n_layers: int) -> None:
        super().__init__()
        self.w = nn.ModuleList([nn.BatchNorm1d(channels) for _ in range(n_layers)])
        self.b = nn.ModuleList([nn.BatchNorm1d(channels) for _ in range(n_layers)])

    @staticmethod
    def _norm_one(bn: nn.BatchNorm1d, x: Tensor) -> Tensor:
        flat = x.reshape(x.shape[0], -1, x.shape[-1]).transpose(1, 2)  # [B, C, entries]
        if bn.training and flat.shape[0] * flat.shape[2] < 2:
            out = F.batch_norm(flat, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)
        else:
            out = bn(flat)
        return out.transpose(1, 2).reshape(x.shape)

    def forward(self, feats: Feats) -> Feats:
        W, b = feats
        return [self._norm_one(m, x) for m, x in zip(self.w, W)], [self._norm_one(m, x) for m, x in zip(self.b, b)]


def invariant_pool(feats: Feats, reduction: str = "max") -> Tensor:
    """The reference invariant layer's pooling ``[B, P]`` (module docstring)."""
    W, b = feats
    B = W[0].shape[0]
    out = [reduce(W[0], 2, reduction).reshape(B, -1), reduce(W[-1], 1, reduction).reshape(B, -1)]
    out += [reduce(w, (1, 2), reduction) for w in W[1:-1]]
    out += [reduce(x, 1, reduction) for x in b[:-1]] + [b[-1].reshape(B, -1)]
    return torch.cat(out, -1)


class DWSNet(MetaNet):
    """DWSNets' ``DWSModelForClassification`` (module docstring). Input: :class:`~.base.WeightData`.

    Options (defaults = the reference trainers): ``hidden`` ``None`` -> 32, or 16 in the InfoNCE
    mode; ``n_hidden`` 4 (DWS layers after the first); ``reduction`` ``"max"``; ``set_layer``
    ``"sab"``; ``heads`` 8; ``bn`` True; ``dropout`` 0; ``init_scale`` 1.
    """

    base_name: ClassVar[str] = "DWSNet"

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int | None = None,
        n_hidden: int = 4,
        reduction: str = "max",
        set_layer: str = "sab",
        heads: int = 8,
        bn: bool = True,
        dropout: float | None = None,
        init_scale: float = 1.0,
        snapshots: Snapshots = "last",
    ) -> None:
        h = int(hidden if hidden is not None else (16 if task == "infonce" else 32))
        super().__init__(task, h, out_dim, snapshots=snapshots)
        self.recipe: ReferenceRecipe | None = recipe_for(self.base_name, task)
        self.sizes, self.n_snapshots, self.hidden, self.reduction = tuple(sizes), n_snapshots, h, reduction
        self.dropout = float(dropout if dropout is not None else (self.recipe.dropout if self.recipe else 0.0))
        if n_hidden < 0 or n_snapshots < 1:
            raise ValueError(f"need n_hidden >= 0 and n_snapshots >= 1; got {n_hidden}, {n_snapshots}")
        L = len(self.sizes) - 1
        kw = {"reduction": reduction, "set_layer": set_layer, "init_scale": init_scale}
        self.layers = nn.ModuleList(
            [DWSLayer(self.sizes, n_snapshots, h, heads=heads, **kw)]
            + [DWSLayer(self.sizes, h, h, heads=heads if i < n_hidden - 1 else 1, **kw) for i in range(n_hidden)]
        )
        self.norms = nn.ModuleList([TensorBatchNorm(h, L) for _ in range(n_hidden)]) if bn else None
        n_pool = h * (2 * L - 3 + sizes[0] + 2 * sizes[-1])
        self.encoder_out, self.head = reference_output(task, n_pool, out_dim)

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"DWSNet built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    @staticmethod
    def to_features(batch: WeightData) -> Feats:
        """The reference layout: ``W_j [B, d_j, d_{j+1}, T]``, ``b_j [B, d_{j+1}, T]`` (snapshots as channels)."""
        return [W.permute(0, 3, 2, 1) for W in batch.weights], [b.permute(0, 2, 1) for b in batch.biases]

    def _act(self, feats: Feats) -> Feats:
        p, tr = self.dropout, self.training
        return tuple([F.dropout(torch.relu(x), p, tr) for x in xs] for xs in feats)  # type: ignore[return-value]

    def equivariant_features(self, batch: WeightData) -> Feats:
        """The output of the last DWS layer (equivariant to hidden-neuron permutations)."""
        feats = self.layers[0](self.to_features(batch))
        for i, layer in enumerate(self.layers[1:]):
            if self.norms is not None:
                feats = self.norms[i](feats)
            feats = layer(self._act(feats))
        return feats

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        return self.encoder_out(invariant_pool(self._act(self.equivariant_features(batch)), self.reduction))
