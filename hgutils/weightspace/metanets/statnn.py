"""StatNN (Unterthiner et al. 2020, "Predicting Neural Network Accuracy from Weights", arXiv:2002.11448)
as NFN's StatNet runs it (Zhou et al., NeurIPS 2023, arXiv:2302.14040; ``AllanYangZhou/nfn``:
``nfn/layers/misc_layers.py`` ``StatFeaturizer``, ``experiments/models.py`` ``StatNet``,
``experiments/predict_gen_configs/nfnet/stat.yaml``).

Per weight and bias tensor and per snapshot, seven statistics -- mean, variance and the
0/25/50/75/100 % quantiles (linear interpolation) -- concatenated over tensors and snapshots
(snapshot-major, then tensor ``W_0, b_0, W_1, ...``, then statistic, as ``StatFeaturizer`` over
channels); then ``Linear -> ReLU -> Linear -> ReLU`` of width 1000 (the embedding) and a ``Linear``
head (sigmoid + BCE on the accuracy task through :mod:`.heads`). The reference feeds the raw
statistics (``normalize: false``). The statistics are invariant to any permutation of the entries
of a tensor, so the model is invariant to hidden-neuron permutations (and to input/output ones).

Deviations, each an option: the variance is the population variance (``variance="population"``;
the reference's ``torch.var`` is the sample variance, ``n/(n-1)`` times larger, and undefined for the
one-entry output bias of an INR -- ``variance="sample"`` uses it wherever ``n > 1``);
``feature_norm="batch"`` standardises each statistic across networks (batch norm) before the MLP.
"""

from __future__ import annotations

from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData
from hgutils.weightspace.metanets.output_heads import reference_output
from hgutils.weightspace.metanets.recipes import ReferenceRecipe, recipe_for

_Q = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
N_STATS = 7


def tensor_stats(x: Tensor) -> Tensor:
    """The 7 statistics of ``x [B, T, ...]`` over its trailing dims -> ``[B, T, 7]``.

    Mean, population variance, and the 0/25/50/75/100 % quantiles (linear interpolation, as
    ``torch.quantile`` and ``numpy.quantile``).
    """
    flat = x.reshape(*x.shape[:2], -1)
    q = torch.quantile(flat, _Q.to(flat), dim=-1).permute(1, 2, 0)
    return torch.cat([flat.mean(-1, keepdim=True), flat.var(-1, unbiased=False, keepdim=True), q], -1)


class StatNN(MetaNet):
    """NFN's StatNet on the 7 statistics per tensor and snapshot (module docstring).

    Options (defaults = the reference): ``hidden`` 1000, ``depth`` 2 hidden layers, ``act``
    ``"relu"``, ``dropout`` ``None`` -> the recipe's (0), ``feature_norm`` ``"none"`` (or
    ``"batch"``), ``variance`` ``"population"`` (or ``"sample"``), ``head`` ``"linear"`` (or
    ``"mlp"``: the two-layer :class:`~.heads.TaskHead` of the other meta-networks).
    ``StatNN(hidden=128, act="silu", feature_norm="batch", head="mlp")`` is this project's earlier
    StatNN.
    """

    base_name: ClassVar[str] = "StatNN"

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 1000,
        depth: int = 2,
        act: str = "relu",
        dropout: float | None = None,
        feature_norm: str = "none",
        variance: str = "population",
        head: str = "linear",
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, hidden, out_dim, snapshots=snapshots)
        if act not in ("relu", "silu"):
            raise ValueError(f"act must be 'relu' or 'silu'; got {act!r}")
        if feature_norm not in ("none", "batch"):
            raise ValueError(f"feature_norm must be 'none' or 'batch'; got {feature_norm!r}")
        if variance not in ("population", "sample"):
            raise ValueError(f"variance must be 'population' or 'sample'; got {variance!r}")
        if head not in ("linear", "mlp"):
            raise ValueError(f"head must be 'linear' or 'mlp'; got {head!r}")
        if depth < 1 or hidden < 1:
            raise ValueError(f"need depth >= 1 and hidden >= 1; got {depth}, {hidden}")
        self.recipe: ReferenceRecipe | None = recipe_for(self.base_name, task)
        p = float(dropout if dropout is not None else (self.recipe.dropout if self.recipe else 0.0))
        self.sizes, self.n_snapshots, self.variance = tuple(sizes), n_snapshots, variance
        self.dropout = p
        n_in = N_STATS * 2 * (len(sizes) - 1) * n_snapshots
        self.norm = nn.BatchNorm1d(n_in) if feature_norm == "batch" else None
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [nn.Linear(n_in if i == 0 else hidden, hidden), nn.ReLU() if act == "relu" else nn.SiLU()]
            if p > 0:
                layers.append(nn.Dropout(p))
        self.mlp = nn.Sequential(*layers)
        if head == "linear":
            self.encoder_out, self.head = reference_output(task, hidden, out_dim)
        else:
            self.encoder_out = nn.Identity()  # MetaNet's TaskHead (hidden -> 64 -> out) stays the head

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"StatNN built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def features(self, batch: WeightData) -> Tensor:
        """``[B, T * 2L * 7]`` statistics (snapshot, tensor, statistic)."""
        tensors = [t for pair in zip(batch.weights, batch.biases) for t in pair]
        feats = [tensor_stats(t) for t in tensors]
        if self.variance == "sample":
            for f, t in zip(feats, tensors):
                n = t[0, 0].numel()
                if n > 1:
                    f[..., 1] *= n / (n - 1)
        return torch.stack(feats, 2).reshape(len(batch), -1)

    def _normalise(self, f: Tensor) -> Tensor:
        norm = self.norm
        if norm is None:
            return f
        if self.training and len(f) < 2:  # one network: no batch statistics, use the running ones
            return F.batch_norm(f, norm.running_mean, norm.running_var, norm.weight, norm.bias, False, 0.0, norm.eps)
        return norm(f)

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        return self.encoder_out(self.mlp(self._normalise(self.features(batch))))
