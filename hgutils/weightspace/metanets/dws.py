r"""DWSNet: deep weight-space networks (Navon et al., ICML 2023), for MLP weight spaces.

The symmetry is the group of hidden-neuron permutations (input and output neurons stay in place).
An equivariant linear layer maps ``(W_j [B, C, o_j, i_j], b_j [B, C, o_j])_{j<L}`` to the same shapes
with ``C'`` channels and is a sum of four blocks, each a sum of *pool-and-broadcast* terms followed
by a per-layer channel-mixing linear map (one term per way two index sets can share a permuted
dimension; hidden dims are ``o_j = i_{j+1}``):

* **W -> W** into ``W_j``: :math:`W_j`; its row, column and full means broadcast back; the column
  mean of :math:`W_{j-1}` broadcast along the columns of :math:`W_j` (shared dim ``i_j = o_{j-1}``);
  the row mean of :math:`W_{j+1}` broadcast along the rows (shared dim ``o_j = i_{j+1}``); the full
  means of all ``W_k``.
* **B -> W** into ``W_j``: :math:`b_j` along rows, :math:`b_{j-1}` along columns, the means of all ``b_k``.
* **W -> B** into ``b_j``: the column mean of :math:`W_j`, the row mean of :math:`W_{j+1}`, the full
  means of all ``W_k``.
* **B -> B** into ``b_j``: :math:`b_j`, its mean, the means of all ``b_k``.

Input and output neurons are not permuted; the model lets the layers tell them apart by adding
one-hot position channels along the input dimension of ``W_0`` and the output dimension of
``W_{L-1}``, ``b_{L-1}`` (the DWSNets basis also contains maps that mix fixed positions linearly;
the one-hot channels give the same access to positions at lower cost). Every term commutes with
hidden permutations, so each layer is equivariant and the pooled readout invariant (tested).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData

Feats = tuple[list[Tensor], list[Tensor]]


def _chan(lin: nn.Linear, x: Tensor) -> Tensor:
    """Apply ``lin`` to the channel dim (dim 1) of ``x``."""
    return lin(x.movedim(1, -1)).movedim(-1, 1)


def _global(xs: list[Tensor]) -> Tensor:
    """Full means of every tensor, channels concatenated: ``[B, C * len(xs)]``."""
    return torch.cat([x.flatten(2).mean(-1) for x in xs], 1)


class _WtoW(nn.Module):
    def __init__(self, L: int, cin: int, cout: int) -> None:
        super().__init__()
        self.L = L
        self.local = nn.ModuleList([nn.Linear(6 * cin, cout) for _ in range(L)])
        self.glob = nn.ModuleList([nn.Linear(L * cin, cout) for _ in range(L)])

    def forward(self, W: list[Tensor]) -> list[Tensor]:
        g = _global(W)
        out = []
        for j, w in enumerate(W):
            zeros = torch.zeros_like(w)
            terms = [
                w,
                w.mean(3, keepdim=True),
                w.mean(2, keepdim=True),
                w.mean((2, 3), keepdim=True),
                W[j - 1].mean(3).unsqueeze(2) if j > 0 else zeros,
                W[j + 1].mean(2).unsqueeze(3) if j < self.L - 1 else zeros,
            ]
            x = torch.cat([t.expand_as(w) for t in terms], 1)
            out.append(_chan(self.local[j], x) + self.glob[j](g)[:, :, None, None])
        return out


class _BtoW(nn.Module):
    def __init__(self, L: int, cin: int, cout: int) -> None:
        super().__init__()
        self.local = nn.ModuleList([nn.Linear(2 * cin, cout) for _ in range(L)])
        self.glob = nn.ModuleList([nn.Linear(L * cin, cout) for _ in range(L)])

    def forward(self, b: list[Tensor], W: list[Tensor]) -> list[Tensor]:
        g = _global(b)
        out = []
        for j, w in enumerate(W):
            prev = b[j - 1].unsqueeze(2).expand_as(w) if j > 0 else torch.zeros_like(w)
            x = torch.cat([b[j].unsqueeze(3).expand_as(w), prev], 1)
            out.append(_chan(self.local[j], x) + self.glob[j](g)[:, :, None, None])
        return out


class _WtoB(nn.Module):
    def __init__(self, L: int, cin: int, cout: int) -> None:
        super().__init__()
        self.L = L
        self.local = nn.ModuleList([nn.Linear(2 * cin, cout) for _ in range(L)])
        self.glob = nn.ModuleList([nn.Linear(L * cin, cout) for _ in range(L)])

    def forward(self, W: list[Tensor]) -> list[Tensor]:
        g = _global(W)
        out = []
        for j, w in enumerate(W):
            own = w.mean(3)
            nxt = W[j + 1].mean(2) if j < self.L - 1 else torch.zeros_like(own)
            out.append(_chan(self.local[j], torch.cat([own, nxt], 1)) + self.glob[j](g)[:, :, None])
        return out


class _BtoB(nn.Module):
    def __init__(self, L: int, cin: int, cout: int) -> None:
        super().__init__()
        self.local = nn.ModuleList([nn.Linear(2 * cin, cout) for _ in range(L)])
        self.glob = nn.ModuleList([nn.Linear(L * cin, cout) for _ in range(L)])

    def forward(self, b: list[Tensor]) -> list[Tensor]:
        g = _global(b)
        return [
            _chan(self.local[j], torch.cat([x, x.mean(2, keepdim=True).expand_as(x)], 1)) + self.glob[j](g)[:, :, None]
            for j, x in enumerate(b)
        ]


class DWSLayer(nn.Module):
    """One equivariant weight-space layer: the four blocks W->W, B->W, W->B, B->B (module docstring)."""

    def __init__(self, n_layers: int, cin: int, cout: int) -> None:
        super().__init__()
        self.w2w, self.b2w = _WtoW(n_layers, cin, cout), _BtoW(n_layers, cin, cout)
        self.w2b, self.b2b = _WtoB(n_layers, cin, cout), _BtoB(n_layers, cin, cout)

    def forward(self, feats: Feats) -> Feats:
        W, b = feats
        Wn = [x + y for x, y in zip(self.w2w(W), self.b2w(b, W))]
        bn = [x + y for x, y in zip(self.w2b(W), self.b2b(b))]
        return Wn, bn


def dws_pool(feats: Feats) -> Tensor:
    """Hidden-permutation-invariant readout: means over hidden dims, input/output positions kept."""
    W, b = feats
    L, out = len(W), []
    for j in range(L):
        w = W[j]
        if L == 1:
            out.append(w.flatten(2))
        elif j == 0:
            out.append(w.mean(2))  # [B, C, i_0]
        elif j == L - 1:
            out.append(w.mean(3))  # [B, C, o_{L-1}]
        else:
            out.append(w.mean((2, 3)).unsqueeze(-1))
        out.append(b[j] if j == L - 1 else b[j].mean(2, keepdim=True))
    return torch.cat(out, 2).flatten(1)


class DWSNet(MetaNet):
    """Position channels -> ``depth`` DWS layers (ReLU) -> invariant pooling -> MLP embedding."""

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        hidden: int = 16,
        depth: int = 4,
        emb_dim: int = 128,
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, emb_dim, out_dim, snapshots=snapshots)
        self.sizes, self.n_snapshots = tuple(sizes), n_snapshots
        L, n_in, n_out = len(sizes) - 1, sizes[0], sizes[-1]
        cin = n_snapshots + n_in + n_out
        self.layers = nn.ModuleList([DWSLayer(L, cin if i == 0 else hidden, hidden) for i in range(depth)])
        dummy = (
            [torch.zeros(1, 1, o, i) for i, o in zip(sizes[:-1], sizes[1:])],
            [torch.zeros(1, 1, o) for o in sizes[1:]],
        )
        n_pool = dws_pool(dummy).shape[1]
        self.mlp = nn.Sequential(nn.Linear(hidden * n_pool, emb_dim), nn.ReLU())

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"DWSNet built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def _with_positions(self, batch: WeightData) -> Feats:
        n_in, n_out, L = self.sizes[0], self.sizes[-1], len(self.sizes) - 1
        W, b = [], []
        for j, (w, bb) in enumerate(zip(batch.weights, batch.biases)):
            B, _, o, i = w.shape
            kw = {"dtype": w.dtype, "device": w.device}
            pin, pout = torch.zeros(B, n_in, o, i, **kw), torch.zeros(B, n_out, o, i, **kw)
            bout, pb_in = torch.zeros(B, n_out, o, **kw), torch.zeros(B, n_in, o, **kw)
            if j == 0:
                pin += torch.eye(n_in, **kw)[None, :, None, :]
            if j == L - 1:
                pout += torch.eye(n_out, **kw)[None, :, :, None]
                bout += torch.eye(n_out, **kw)[None]
            W.append(torch.cat([w, pin, pout], 1))
            b.append(torch.cat([bb, pb_in, bout], 1))
        return W, b

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        feats = self._with_positions(batch)
        for layer in self.layers:
            W, b = layer(feats)
            feats = ([torch.relu(x) for x in W], [torch.relu(x) for x in b])
        return self.mlp(dws_pool(feats))
