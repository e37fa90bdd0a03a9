r"""GMN as Neural Graphs runs it: PNA message passing on an MLP's neuron graph, output-neuron readout.

Graph metanetworks (Lim et al., ICLR 2024, arXiv:2312.04501) and Neural Graphs (Kofinas et al.,
ICLR 2024, arXiv:2403.12143) read a network as a graph of its neurons. This model follows the
Neural Graphs code (``mkofinas/neural-graphs``: ``configs/model/pna.yaml``,
``nn/graph_constructor.py``, ``nn/gnn.py``, ``nn/pooling.py``; the INR-classification script
``scripts/mnist_cls_pna.sh``):

* **graph** -- nodes are neurons (no bias nodes); each weight is a forward edge and, with
  ``reverse_edges`` (the script's ``rev_edge_features=True``), also a reversed edge. The edge input
  of ``w`` is ``[w, 0, w]`` forward and ``[0, w, w]`` reversed (the weight, its reverse, their sum);
  a neuron's input is its bias (0 for input neurons). The ``T`` read snapshots are ``T`` channels.
* **input encoding** -- random Fourier features (128, :math:`\sigma = 3`) of edge and node inputs,
  then ``Linear(256, d) -> Linear(d, d)``; plus a learned position embedding: one per input neuron,
  one per hidden layer (shared by its neurons, which are permutable), one per output neuron.
* **backbone** -- ``depth = 4`` PNA layers of width ``d = 32`` (:mod:`.pna`: mean/min/max/std
  aggregators, identity and amplification scalers, messages modulated by the edge state); between
  layers a normalisation (:class:`~.pna.NodeNorm`), SiLU, dropout and an edge update.
* **readout** (``readout``) -- ``"output"``: the output neurons' states concatenated (``d_L * d``),
  then ``Linear -> ReLU -> Linear -> ReLU`` (the embedding) and the last ``Linear`` (the head) --
  Neural Graphs' ``pooling_method: cat``, ``pooling_layer_idx: last`` and ``proj_out``;
  ``"per_layer"``: the mean node state of each layer concatenated (``cat_mean`` over ``all``);
  ``"mean"``: the mean of all node states beside the mean of all edge states -- the readout of this
  project's earlier GMN (an edge-MPNN with bias nodes and per-node LayerNorm, whose pooled vectors
  hardly differed between networks, so it stayed at chance on INR zoos), kept as an ablation.
* **the embedding's last ReLU** (``embed_relu``) -- Neural Graphs' ``proj_out`` ends in a ReLU; ``False`` reads the
  embedding before it (an ablation). On notebook 02's InfoNCE task GMN at first sat at the chance value
  ln(2B - 1) on most seeds whatever this and the warm-up's length were (medium zoo, 2026-12-07): the cause was
  the model's own dropout (the classification script's 0.2), which gives the two InfoNCE views of one network
  different masks while the embeddings of different networks start almost equal (cosine above 0.999). Without
  it, as the InfoNCE recipe now runs, all three seeds left chance at epoch 3 with the ReLU and the 188-step warm-up
  (:data:`~.recipes.RECIPES`).

**input standardisation** (``input_norm``) -- ``"per_layer"``, as the reference: one mean and one
standard deviation per weight tensor and per bias tensor of the training networks (Neural Graphs'
``dataset/compute_mnist_statistics.py``: ``w.mean()``, ``w.std()`` over every entry of every training
INR; the stats of ``configs/data/mnist.yaml``), applied to raw weights inside the model
(``nn/graph_constructor.py``: :math:`(W_l - \mu_{W_l}) / \sigma_{W_l}` on the edges,
:math:`(b_l - \mu_{b_l}) / \sigma_{b_l}` on the nodes; input neurons keep 0). With ``T`` snapshots
each snapshot channel gets its own pair (:func:`layer_stats`); :meth:`GMN.fit_inputs` sets them from
the training networks (:func:`hgutils.weightspace.tasks.fit` calls it). ``"none"`` (default): the
inputs as given -- the shared per-entry standardisation of
``hgutils.weightspace.inputs.prepare_inputs`` when a run gives the model no recipe.

Every step commutes with a permutation of the hidden neurons of any layer, and the
readouts read fixed positions (output neurons) or means, so the model is invariant (tested).
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData
from hgutils.weightspace.metanets.output_heads import reference_output
from hgutils.weightspace.metanets.pna import (
    NORMS,
    EdgeUpdate,
    GaussianFourierFeatures,
    NodeNorm,
    PNALayer,
    forward_degree_histogram,
    mean_log_degree,
)
from hgutils.weightspace.metanets.pna_kernels import fourier_linear
from hgutils.weightspace.metanets.recipes import ReferenceRecipe, recipe_for

READOUTS: tuple[str, ...] = ("output", "per_layer", "mean")
INPUT_NORMS: tuple[str, ...] = ("none", "per_layer")


def layer_stats(data: WeightData, idx: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Neural Graphs' input statistics of networks ``idx`` (default all): for each tensor
    :math:`P \in (W_0, b_0, W_1, b_1, \dots)` and snapshot ``t``, the mean and the (unbiased, as
    ``torch.std``) standard deviation over every entry of every selected network,
    :math:`\mu_{P,t} = \mathrm{mean}_{i,e}\, P_{i,t,e}`, :math:`\sigma_{P,t} = \mathrm{std}_{i,e}\, P_{i,t,e}`.
    Returns ``(mean, std)`` ``[2L, T]`` in float64."""
    sel = slice(None) if idx is None else torch.as_tensor(idx, dtype=torch.long)
    tensors = [x for pair in zip(data.weights, data.biases) for x in pair]
    flat = [x[sel].double().transpose(0, 1).reshape(x.shape[1], -1) for x in tensors]  # [T, n * entries]
    if any(f.shape[1] < 2 for f in flat):
        raise ValueError("per-layer statistics need at least 2 entries per tensor over the selected networks")
    return torch.stack([f.mean(1) for f in flat]), torch.stack([f.std(1) for f in flat])


class GMN(MetaNet):
    """Neural Graphs' PNA GNN on the neuron graph (module docstring). Input: :class:`~.base.WeightData`.

    Options (defaults = the reference INR-classification configuration):

    ``hidden`` 32, ``depth`` 4, ``readout`` ``"output"``, ``reverse_edges`` True, ``fourier_dim`` 128
    (0: a linear input map instead of Fourier features), ``fourier_sigma`` 3, ``norm`` ``"batch"``
    (:class:`~.pna.NodeNorm`), ``edge_updates`` True, ``modulate_edges`` True, ``pos_embed`` True,
    ``dropout`` ``None`` -> the task's recipe (0.2 on classification, 0 on accuracy prediction and InfoNCE),
    ``input_norm`` ``"none"`` (``"per_layer"``: Neural Graphs' per-tensor standardisation of raw
    weights, statistics from :meth:`fit_inputs`), ``embed_relu`` True (the reference's last ReLU; module
    docstring).
    """

    base_name: ClassVar[str] = "GMN"

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 32,
        depth: int = 4,
        readout: str = "output",
        reverse_edges: bool = True,
        fourier_dim: int = 128,
        fourier_sigma: float = 3.0,
        norm: str = "batch",
        dropout: float | None = None,
        edge_updates: bool = True,
        modulate_edges: bool = True,
        pos_embed: bool = True,
        snapshots: Snapshots = "last",
        input_norm: str = "none",
        embed_relu: bool = True,
    ) -> None:
        super().__init__(task, hidden, out_dim, snapshots=snapshots)
        if readout not in READOUTS:
            raise ValueError(f"readout must be one of {READOUTS}; got {readout!r}")
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}; got {norm!r}")
        if input_norm not in INPUT_NORMS:
            raise ValueError(f"input_norm must be one of {INPUT_NORMS}; got {input_norm!r}")
        self.input_norm = input_norm
        sizes = tuple(int(s) for s in sizes)
        if len(sizes) < 2 or min(sizes) < 1 or depth < 1 or hidden < 1 or n_snapshots < 1:
            raise ValueError(f"need sizes of >= 2 positive widths, depth, hidden, n_snapshots >= 1; got {sizes}")
        self.recipe: ReferenceRecipe | None = recipe_for(self.base_name, task)
        self.dropout = float(dropout if dropout is not None else (self.recipe.dropout if self.recipe else 0.0))
        self.sizes, self.n_snapshots, self.readout = sizes, n_snapshots, readout
        self.reverse_edges, self.pos_embed_on = reverse_edges, pos_embed
        L, d, T = len(sizes) - 1, hidden, n_snapshots
        edge_in = 3 * T if reverse_edges else T
        if fourier_dim > 0:
            self.edge_proj = nn.Sequential(
                GaussianFourierFeatures(edge_in, fourier_dim, fourier_sigma), nn.Linear(2 * fourier_dim, d)
            )
            self.node_proj = nn.Sequential(
                GaussianFourierFeatures(T, fourier_dim, fourier_sigma), nn.Linear(2 * fourier_dim, d)
            )
        else:
            self.edge_proj, self.node_proj = nn.Linear(edge_in, d), nn.Linear(T, d)
        self.edge_in, self.node_in = nn.Linear(d, d), nn.Linear(d, d)
        self.pos = nn.Parameter(torch.randn(sizes[0] + (L - 1) + sizes[-1], d))
        delta = mean_log_degree(forward_degree_histogram(sizes))
        self.convs = nn.ModuleList([PNALayer(d, delta, modulate_edges) for _ in range(depth)])
        self.norms = nn.ModuleList([NodeNorm(d, norm) for _ in range(depth - 1)])
        self.edge_mlps = nn.ModuleList([EdgeUpdate(d) for _ in range(depth - 1)]) if edge_updates else None
        n_read = {"output": sizes[-1] * d, "per_layer": (L + 1) * d, "mean": 2 * d}[readout]
        self.embed_relu = bool(embed_relu)
        last = nn.ReLU() if self.embed_relu else nn.Identity()
        self.proj = nn.Sequential(nn.Linear(n_read, d), nn.ReLU(), nn.Linear(d, d), last)
        self.encoder_out, self.head = reference_output(task, d, out_dim)
        self.register_buffer("in_mean", torch.zeros(2 * L, T, dtype=torch.float64))
        self.register_buffer("in_std", torch.ones(2 * L, T, dtype=torch.float64))
        self.register_buffer("in_fitted", torch.zeros((), dtype=torch.bool))

    def fit_inputs(self, data: WeightData, train_idx: Tensor) -> None:
        """With ``input_norm="per_layer"``: the per-tensor statistics of the training networks
        (:func:`layer_stats`), kept as buffers (saved with the model); otherwise nothing."""
        if self.input_norm != "per_layer":
            return
        self.check_data(data)
        mean, std = layer_stats(data, train_idx)
        if not bool((std > 0).all()):
            raise ValueError("a weight or bias tensor is constant over the training networks: its std is 0")
        self.in_mean.copy_(mean)
        self.in_std.copy_(std)
        self.in_fitted.fill_(True)

    def standardize(self, batch: WeightData) -> WeightData:
        r"""The batch the graph is built from: :math:`(P - \mu_P) / \sigma_P` per tensor and snapshot
        with ``input_norm="per_layer"`` (module docstring), else ``batch`` itself."""
        if self.input_norm == "none":
            return batch
        if not bool(self.in_fitted):
            raise ValueError("GMN(input_norm='per_layer') has no statistics: call fit_inputs(data, train_idx) first")
        out = []
        for k, x in enumerate(t for pair in zip(batch.weights, batch.biases) for t in pair):
            shape = (x.shape[1],) + (1,) * (x.dim() - 2)  # [T, 1, ...] against [B, T, *entry]
            mu, sd = self.in_mean[k].reshape(shape).to(x.dtype), self.in_std[k].reshape(shape).to(x.dtype)
            out.append((x - mu) / sd)
        return WeightData(tuple(out[0::2]), tuple(out[1::2]), batch.norm)

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"GMN built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    # ---- the graph's input features ----------------------------------------------------------
    def _positions(self, k: int, n: int) -> Tensor:
        L, n_in = len(self.sizes) - 1, self.sizes[0]
        if k == 0:
            return self.pos[:n_in]
        if k == L:
            return self.pos[n_in + L - 1 :]
        return self.pos[n_in + k - 1].expand(n, -1)

    def _input_map(self, proj: nn.Module, lin_in: nn.Linear, x: Tensor, parts: tuple[int, ...] | None = None) -> Tensor:
        """``lin_in(proj(x'))``, the input encoding, where ``x' = x`` or, with ``parts``, ``x'`` holds ``x`` in
        those ``T``-wide slots of the edge input and zeros elsewhere (``(0, 2)``: ``[w, 0, w]``; ``(1, 2)``:
        ``[0, w, w]``). The zero slots are dropped by summing the matching columns of the first map, and
        the two linear maps after the Fourier features are applied as their product (:func:`~.pna.fourier_linear`)."""
        T = x.shape[-1]

        def cols(M: Tensor) -> Tensor:
            return M if parts is None else sum(M[:, p * T : (p + 1) * T] for p in parts)

        if isinstance(proj, nn.Linear):
            return lin_in(F.linear(x, cols(proj.weight), proj.bias))
        rff, lin = proj
        weight = lin_in.weight @ lin.weight
        bias = F.linear(lin.bias, lin_in.weight, lin_in.bias)
        return fourier_linear(x, 2 * math.pi * cols(rff.B).to(x.dtype), weight, bias)

    def encode_inputs(self, batch: WeightData) -> tuple[list[Tensor], list[Tensor], list[Tensor] | None]:
        """Initial node states ``h[k] [B, d_k, d]`` and edge states ``ef[l]`` (``er[l]``) ``[B, d_{l+1}, d_l, d]``."""
        batch = self.standardize(batch)
        B = len(batch)
        Ws = [W.permute(0, 2, 3, 1) for W in batch.weights]  # [B, out, in, T]
        bias = [batch.weights[0].new_zeros(B, self.sizes[0], self.n_snapshots)]
        bias += [b.permute(0, 2, 1) for b in batch.biases]  # [B, d_k, T]
        h = [self._input_map(self.node_proj, self.node_in, x) for x in bias]
        if self.pos_embed_on:
            h = [x + self._positions(k, x.shape[1]) for k, x in enumerate(h)]
        if not self.reverse_edges:
            return h, [self._input_map(self.edge_proj, self.edge_in, w) for w in Ws], None
        ef = [self._input_map(self.edge_proj, self.edge_in, w, (0, 2)) for w in Ws]
        er = [self._input_map(self.edge_proj, self.edge_in, w, (1, 2)) for w in Ws]
        return h, ef, er

    def _before_last_layer(self, batch: WeightData) -> tuple[list[Tensor], list[Tensor], list[Tensor] | None]:
        """Node states entering the last PNA layer, and the edge states before the last edge update."""
        h, ef, er = self.encode_inputs(batch)
        for i, conv in enumerate(self.convs[:-1]):
            if i > 0 and self.edge_mlps is not None:
                ef, er = self.edge_mlps[i - 1](h, ef, er)
            h = [F.dropout(F.silu(x), self.dropout, self.training) for x in self.norms[i](conv(h, ef, er))]
        return h, ef, er

    def node_states(self, batch: WeightData) -> tuple[list[Tensor], list[Tensor], list[Tensor] | None]:
        """Node and edge states after the last PNA layer (the edges after the last edge update)."""
        h, ef, er = self._before_last_layer(batch)
        if len(self.convs) > 1 and self.edge_mlps is not None:
            ef, er = self.edge_mlps[-1](h, ef, er)
        return self.convs[-1](h, ef, er), ef, er

    def output_states(self, batch: WeightData) -> Tensor:
        """The output neurons' states after the last PNA layer, ``node_states(batch)[0][-1]``, computing
        only what they read: the last layer updates the output neurons alone, from the last forward
        block, so the last edge update renews that block alone."""
        h, ef, er = self._before_last_layer(batch)
        if len(self.convs) > 1 and self.edge_mlps is not None:
            ef = [*ef[:-1], self.edge_mlps[-1].block(h, ef[-1], len(ef) - 1, reverse=False)]
        return self.convs[-1](h, ef, er, layers=[len(h) - 1])[0]

    def pooled(self, batch: WeightData) -> Tensor:
        """The readout vector before the MLP (``readout``; module docstring)."""
        if self.readout == "output":
            return self.output_states(batch).flatten(1)
        h, ef, er = self.node_states(batch)
        if self.readout == "per_layer":
            return torch.cat([x.mean(1) for x in h], -1)
        edges = ef + (er or [])
        n_e = sum(e.shape[1] * e.shape[2] for e in edges)
        e_mean = sum(e.sum((1, 2)) for e in edges) / n_e
        return torch.cat([torch.cat(h, 1).mean(1), e_mean], -1)

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        return self.encoder_out(self.proj(self.pooled(batch)))

    def extra_repr(self) -> str:
        return (
            f"sizes={self.sizes}, T={self.n_snapshots}, readout={self.readout!r}, dropout={self.dropout}, "
            f"input_norm={self.input_norm!r}, embed_relu={self.embed_relu}"
        )
