"""NFN_NP and NFN_HNP: permutation-equivariant neural functionals (Zhou et al., NeurIPS 2023).

Uses the authors' layers from the ``nfn`` package on PyPI (0.1.2, MIT): ``NPLinear`` + ``NPPool``
(the layer that treats *every* neuron, input and output included, as permutable -- "NP" in the
NFN paper) and ``HNPLinear`` + ``HNPPool`` (only hidden neurons permutable, input/output positions
kept -- "HNP"). Both are invariant to hidden-neuron permutations, which is what the tests check.
Trajectories enter as channels: the ``T`` read snapshots of each weight/bias tensor are the
``T`` input channels of the first layer.
"""

from __future__ import annotations

from nfn.common import ArraySpec, NetworkSpec, WeightSpaceFeatures
from nfn.layers import HNPLinear, HNPPool, NPLinear, NPPool, TupleOp
from torch import Tensor, nn

from hgutils.weightspace.metanets.base import MetaNet, Snapshots, WeightData


def network_spec(sizes: tuple[int, ...]) -> NetworkSpec:
    """nfn ``NetworkSpec`` of an MLP with layer widths ``sizes``."""
    return NetworkSpec([ArraySpec((o, i)) for i, o in zip(sizes[:-1], sizes[1:])], [ArraySpec((o,)) for o in sizes[1:]])


class NFN(MetaNet):
    """``mode="np"`` (NFN_NP) or ``"hnp"`` (NFN_HNP): ``depth`` equivariant layers of ``hidden``
    channels with ReLU, invariant pooling, then an MLP to the embedding."""

    def __init__(
        self,
        task: str,
        out_dim: int,
        sizes: tuple[int, ...],
        n_snapshots: int,
        mode: str = "np",
        hidden: int = 16,
        depth: int = 2,
        emb_dim: int = 128,
        snapshots: Snapshots = "last",
    ) -> None:
        super().__init__(task, emb_dim, out_dim, snapshots=snapshots)
        if mode not in ("np", "hnp"):
            raise ValueError(f"mode must be 'np' or 'hnp'; got {mode!r}")
        self.sizes, self.n_snapshots, self.mode = tuple(sizes), n_snapshots, mode
        spec = network_spec(self.sizes)
        Lin, Pool = (NPLinear, NPPool) if mode == "np" else (HNPLinear, HNPPool)
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [Lin(spec, n_snapshots if i == 0 else hidden, hidden), TupleOp(nn.ReLU())]
        self.layers = nn.Sequential(*layers)
        self.pool = Pool(spec)
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(hidden * Pool.get_num_outs(spec), emb_dim), nn.ReLU())

    def check_data(self, data: WeightData) -> None:
        if data.sizes != self.sizes or data.T != self.n_snapshots:
            raise ValueError(
                f"NFN built for sizes {self.sizes} x {self.n_snapshots} snapshots; "
                f"got {data.sizes} x {data.T} (zoo/architecture mismatch)"
            )

    def embed(self, batch: WeightData) -> Tensor:
        self.check_data(batch)
        ws = WeightSpaceFeatures(list(batch.weights), list(batch.biases))  # [B, C=T, out, in], [B, T, out]
        return self.mlp(self.pool(self.layers(ws)))
