"""FlatMLP: all weights and biases of all read snapshots flattened into one vector, then an MLP.

Not permutation invariant (the test suite shows it); ``perm_aug=True`` applies an independent random
hidden-neuron permutation to every training network (the "MLP + permutation augmentation" row of
the DWSNets tables), which teaches approximate invariance from data.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData


def permute_hidden_per_network(batch: WeightData, generator: torch.Generator | None) -> WeightData:
    """Independent random hidden permutation for each network of ``batch`` (same for all its snapshots)."""
    B, T = len(batch), batch.T
    Ws, bs = list(batch.weights), list(batch.biases)
    for i in range(len(Ws) - 1):
        n = Ws[i].shape[2]
        p = torch.argsort(torch.rand(B, n, generator=generator), dim=1).to(Ws[i].device)
        Ws[i] = torch.gather(Ws[i], 2, p[:, None, :, None].expand(B, T, n, Ws[i].shape[3]))
        bs[i] = torch.gather(bs[i], 2, p[:, None, :].expand(B, T, n))
        Ws[i + 1] = torch.gather(Ws[i + 1], 3, p[:, None, None, :].expand(B, T, Ws[i + 1].shape[2], n))
    return WeightData(tuple(Ws), tuple(bs))


class FlatMLP(MetaNet):
    """Flattened parameters -> LayerNorm -> MLP (``hidden`` wide, ``depth`` layers)."""

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 128,
        depth: int = 2,
        perm_aug: bool = False,
        dropout: float = 0.1,
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, hidden, out_dim, snapshots=snapshots)
        self.sizes, self.n_snapshots, self.perm_aug = tuple(sizes), n_snapshots, perm_aug
        n_params = sum(o * i + o for i, o in zip(sizes[:-1], sizes[1:]))
        n_in = n_params * n_snapshots
        layers: list[nn.Module] = [nn.LayerNorm(n_in)]
        for i in range(depth):
            layers += [nn.Linear(n_in if i == 0 else hidden, hidden), nn.SiLU(), nn.Dropout(dropout)]
        self.mlp = nn.Sequential(*layers)

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"FlatMLP built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def train_transform(self, batch: WeightData, generator: torch.Generator | None) -> WeightData:
        return permute_hidden_per_network(batch, generator) if self.perm_aug else batch

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        B = len(batch)
        flat = [t.reshape(B, batch.T, -1) for pair in zip(batch.weights, batch.biases) for t in pair]
        return self.mlp(torch.cat(flat, -1).reshape(B, -1))
