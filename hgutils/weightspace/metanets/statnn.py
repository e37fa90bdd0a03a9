"""StatNN (Unterthiner et al. 2020, "Predicting Neural Network Accuracy from Weights").

Per weight and bias tensor and per snapshot, seven statistics -- mean, variance and the
0/25/50/75/100 % quantiles -- concatenated over tensors and snapshots, then an MLP. The statistics
are invariant to any permutation of the entries of a tensor, so the model is invariant to hidden
neuron permutations (and to input/output permutations too).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData

_Q = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])


def tensor_stats(x: Tensor) -> Tensor:
    """The 7 statistics of ``x [B, T, ...]`` over its trailing dims -> ``[B, T, 7]``."""
    flat = x.reshape(*x.shape[:2], -1)
    q = torch.quantile(flat, _Q.to(flat), dim=-1).permute(1, 2, 0)
    return torch.cat([flat.mean(-1, keepdim=True), flat.var(-1, unbiased=False, keepdim=True), q], -1)


class StatNN(MetaNet):
    """7 statistics per tensor and snapshot -> per-feature batch norm -> MLP (``hidden`` wide, ``depth`` layers).

    The statistics are standardised feature by feature across networks (batch norm: batch statistics
    in training, running statistics in eval mode), the usual treatment of tabular features; a
    per-sample LayerNorm would mix a SIREN's large first-layer statistics with the ~30x smaller
    hidden-layer ones and hide the small between-network differences that carry the signal.
    """

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 128,
        depth: int = 2,
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, hidden, out_dim, snapshots=snapshots)
        self.sizes, self.n_snapshots = tuple(sizes), n_snapshots
        n_in = 7 * 2 * (len(sizes) - 1) * n_snapshots
        layers: list[nn.Module] = [nn.BatchNorm1d(n_in)]
        for i in range(depth):
            layers += [nn.Linear(n_in if i == 0 else hidden, hidden), nn.SiLU()]
        self.mlp = nn.Sequential(*layers)

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"StatNN built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def features(self, batch: WeightData) -> Tensor:
        """``[B, T * 2L * 7]`` statistics."""
        feats = [tensor_stats(t) for pair in zip(batch.weights, batch.biases) for t in pair]
        return torch.stack(feats, 2).reshape(len(batch), -1)

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        f = self.features(batch)
        norm = self.mlp[0]
        if self.training and len(f) < 2:  # one network: no batch statistics, use the running ones
            h = F.batch_norm(f, norm.running_mean, norm.running_var, norm.weight, norm.bias, False, 0.0, norm.eps)
            return self.mlp[1:](h)
        return self.mlp(f)
