"""What every meta-network shares: the weight-tuple container, snapshot selection, the model base class.

Every model in :mod:`hgutils.weightspace.metanets` is a :class:`MetaNet`:

* ``prepare(zoo)`` turns a :class:`hgutils.weightspace.zoo.Zoo` into the model's input container
  (done once; the container is indexed by network, ``data[idx]`` is a batch view);
* ``embed(batch) -> [B, D]`` is the trajectory embedding, ``forward(batch)`` the task head on it;
* ``loss_terms(batch, target, progress)`` returns the named loss terms (the task loss, plus the
  auxiliary terms of GTH-GMN), which the one training loop (:mod:`hgutils.weightspace.tasks`)
  weighs with ``loss_weights`` and sums;
* ``augment(batch, generator)`` makes a random view (weight noise + masking, the DWSNets SimCLR
  views) for the InfoNCE encoder mode; FlatMLP also uses it for permutation augmentation;
* ``param_groups()`` splits parameters into Euclidean ones (Adam) and ``ManifoldParameter``\\ s
  (geoopt ``RiemannianAdam(amsgrad=True)``), for GTH-GMN's two-stage optimisation.

All models read the last snapshot by default (``snapshots="last"``) and the whole trajectory on
request (``"all"``, or an int ``k``: ``k`` snapshots evenly spaced, always ending at the last one).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import geoopt
import torch
from torch import Tensor, nn

from hgutils.weightspace.metanets.heads import TaskHead, check_task, info_nce, task_loss

if TYPE_CHECKING:  # for annotations only: importing the zoo package here would load every zoo builder
    from hgutils.weightspace.zoo.containers import Zoo

Snapshots = str | int | list[int] | tuple[int, ...]


def snapshot_index(T: int, snapshots: Snapshots) -> Tensor:
    """Indices of the snapshots a model reads out of a trajectory of length ``T``.

    ``"last"`` -> ``[T-1]``; ``"all"`` -> ``0..T-1``; an int ``k`` -> ``k`` indices evenly spaced
    over ``[0, T-1]`` ending at ``T-1`` (``k=1`` is the last snapshot); a list -> those indices.
    """
    if T < 1:
        raise ValueError(f"the trajectory is empty (T = {T}); need at least one snapshot")
    if snapshots == "last":
        return torch.tensor([T - 1])
    if snapshots == "all":
        return torch.arange(T)
    if isinstance(snapshots, bool):
        raise ValueError(f"snapshots must be 'last', 'all', an int or a list; got {snapshots!r}")
    if isinstance(snapshots, int):
        if not 1 <= snapshots <= T:
            raise ValueError(f"snapshots={snapshots} must be in [1, T={T}]")
        if snapshots == 1:
            return torch.tensor([T - 1])
        return torch.linspace(0, T - 1, snapshots).round().long()
    if isinstance(snapshots, (list, tuple)):
        idx = torch.as_tensor(list(snapshots), dtype=torch.long)
        if idx.numel() == 0 or int(idx.min()) < -T or int(idx.max()) >= T:
            raise ValueError(f"snapshot indices must be non-empty and within [-{T}, {T}); got {list(snapshots)}")
        return idx % T
    raise ValueError(f"snapshots must be 'last', 'all', an int or a list; got {snapshots!r}")


@dataclass
class WeightData:
    """Per-layer weight trajectories: ``weights[i] [N, T, out_i, in_i]``, ``biases[i] [N, T, out_i]``.

    The weight-space tuple view used by StatNN, FlatMLP, NFN and DWSNet. ``data[idx]`` is a batch.
    """

    weights: tuple[Tensor, ...]
    biases: tuple[Tensor, ...]
    #: per tensor (W_0, b_0, W_1, ...): the ``(mean, divisor)`` ``[T, ...]`` the entries were standardised
    #: with (:meth:`hgutils.weightspace.zoo.Zoo.standardized`), ``None`` for raw weights
    norm: tuple[tuple[Tensor, Tensor], ...] | None = None

    def __post_init__(self) -> None:
        if len(self.weights) == 0 or len(self.weights) != len(self.biases):
            raise ValueError(
                f"need one bias per weight and >= 1 layer; got {len(self.weights)} weights, {len(self.biases)} biases"
            )
        N, T = self.weights[0].shape[:2]
        if T < 1 or N < 1:
            raise ValueError(f"empty weight trajectories: N={N}, T={T}")
        for i, (W, b) in enumerate(zip(self.weights, self.biases)):
            if W.dim() != 4 or b.dim() != 3 or W.shape[:2] != (N, T) or b.shape != (N, T, W.shape[2]):
                raise ValueError(
                    f"layer {i}: expected W [N={N}, T={T}, out, in] and b [N, T, out]; got "
                    f"{tuple(W.shape)} and {tuple(b.shape)}"
                )
            if i > 0 and W.shape[3] != self.weights[i - 1].shape[2]:
                raise ValueError(
                    f"layer {i} takes {W.shape[3]} inputs but layer {i - 1} has {self.weights[i - 1].shape[2]} outputs"
                )

    @classmethod
    def from_zoo(cls, zoo: Zoo, snapshots: Snapshots = "last") -> WeightData:
        """Weight tuples of ``zoo`` (via ``zoo.weights()``) restricted to the chosen snapshots."""
        pairs = zoo.weights()
        if not pairs or pairs[0][0].dim() != 4:
            raise ValueError(
                "WeightData needs an MLP zoo: weights [N, T, out, in] per layer; got "
                f"{[tuple(W.shape) for W, _ in pairs]}"
            )
        norm = None
        stats = getattr(zoo, "info", {}).get("standardization")
        if stats is not None:
            norm = tuple(stats[f"{p}{l}"] for l in range(len(pairs)) for p in "Wb")
        data = cls(tuple(_f32(W) for W, _ in pairs), tuple(_f32(b) for _, b in pairs), norm)
        return data.select(snapshot_index(data.T, snapshots))

    @property
    def T(self) -> int:
        return self.weights[0].shape[1]

    @property
    def sizes(self) -> tuple[int, ...]:
        return (self.weights[0].shape[3], *(W.shape[2] for W in self.weights))

    def __len__(self) -> int:
        return self.weights[0].shape[0]

    def __getitem__(self, idx: Any) -> WeightData:
        return WeightData(tuple(W[idx] for W in self.weights), tuple(b[idx] for b in self.biases), self.norm)

    @classmethod
    def cat(cls, parts: Sequence[WeightData]) -> WeightData:
        """The networks of ``parts`` as one container, in order (the parts must share their
        architecture, snapshots and standardisation statistics)."""
        if not parts:
            raise ValueError("need at least one WeightData to concatenate")
        first = parts[0]
        for p in parts[1:]:
            if p.sizes != first.sizes or p.T != first.T:
                raise ValueError(f"cannot concatenate sizes {p.sizes} / T={p.T} with {first.sizes} / T={first.T}")
            if (p.norm is None) != (first.norm is None) or (
                p.norm is not None
                and any(a is not b and not torch.equal(a, b) for x, y in zip(p.norm, first.norm) for a, b in zip(x, y))
            ):
                raise ValueError("cannot concatenate networks standardised with different statistics")
        return cls(
            tuple(torch.cat(ws, 0) for ws in zip(*(p.weights for p in parts))),
            tuple(torch.cat(bs, 0) for bs in zip(*(p.biases for p in parts))),
            first.norm,
        )

    def select(self, t_idx: Tensor) -> WeightData:
        """Keep the snapshots ``t_idx``."""
        norm = None if self.norm is None else tuple((m[t_idx], d[t_idx]) for m, d in self.norm)
        return WeightData(tuple(W[:, t_idx] for W in self.weights), tuple(b[:, t_idx] for b in self.biases), norm)

    def to(self, *args: Any, **kwargs: Any) -> WeightData:
        norm = None
        if self.norm is not None:
            norm = tuple((m.to(*args, **kwargs), d.to(*args, **kwargs)) for m, d in self.norm)
        return WeightData(
            tuple(W.to(*args, **kwargs) for W in self.weights),
            tuple(b.to(*args, **kwargs) for b in self.biases),
            norm,
        )

    def permute_hidden(self, perms: list[Tensor]) -> WeightData:
        """Apply one permutation per hidden layer (consistently over all networks and snapshots).

        ``perms[i]`` permutes the outputs of layer ``i`` (= inputs of layer ``i+1``); the function
        of each network is unchanged.
        """
        if len(perms) != len(self.weights) - 1:
            raise ValueError(f"need {len(self.weights) - 1} hidden permutations; got {len(perms)}")
        Ws, bs = list(self.weights), list(self.biases)
        for i, p in enumerate(perms):
            Ws[i], bs[i] = Ws[i][:, :, p], bs[i][:, :, p]
            Ws[i + 1] = Ws[i + 1][:, :, :, p]
        return WeightData(tuple(Ws), tuple(bs), None if self.norm is None else self._permuted_norm(perms))

    def _permuted_norm(self, perms: list[Tensor]) -> tuple[tuple[Tensor, Tensor], ...]:
        """The standardisation statistics permuted like the weights (:meth:`permute_hidden`)."""
        norm = [list(x) for x in self.norm]
        for i, p in enumerate(perms):
            for j in (2 * i, 2 * i + 1):  # W_i rows, b_i
                norm[j] = [t[:, p] for t in norm[j]]
            norm[2 * i + 2] = [t[:, :, p] for t in norm[2 * i + 2]]  # W_{i+1} columns
        return tuple((m, d) for m, d in norm)

    def dwsnets_view(self, generator: torch.Generator | None, shift: float = 0.2, drop: float = 0.5) -> WeightData:
        """DWSNets' self-supervised view (``experiments/data.py``, ``INRDataset._augment``), applied to the
        weights *before* normalisation: each tensor of each network and snapshot is shifted by
        ``shift`` times its own standard deviation (bias vectors of one entry are left alone), then
        dropout with probability ``drop`` and rescaling by ``1 / (1 - drop)``; the result is standardised
        again with the same statistics (:attr:`norm`; raw weights when ``None``)."""
        tensors = [t for pair in zip(self.weights, self.biases) for t in pair]
        out = []
        for k, t in enumerate(tensors):
            raw = t if self.norm is None else t * self.norm[k][1] + self.norm[k][0]
            out.append(dwsnets_augment(raw, 2 if k % 2 == 0 else 1, generator, shift, drop))
            if self.norm is not None:
                out[-1] = (out[-1] - self.norm[k][0]) / self.norm[k][1]
        return WeightData(tuple(out[0::2]), tuple(out[1::2]), self.norm)

    def noisy_view(self, generator: torch.Generator | None, noise: float, mask: float) -> WeightData:
        """SimCLR view: additive Gaussian noise ``sigma=noise`` plus dropout-style masking with prob ``mask``."""

        def f(x: Tensor) -> Tensor:
            n = torch.randn(x.shape, generator=generator, dtype=x.dtype) * noise
            keep = torch.rand(x.shape, generator=generator) >= mask
            return (x + n.to(x.device)) * keep.to(x.device, x.dtype)

        return WeightData(tuple(f(W) for W in self.weights), tuple(f(b) for b in self.biases), self.norm)


def dwsnets_augment(
    x: Tensor, entry_dims: int, generator: torch.Generator | None, shift: float = 0.2, drop: float = 0.5
) -> Tensor:
    r"""DWSNets' augmentation of one parameter tensor ``x [..., *entries]`` (the last ``entry_dims`` dims
    are one network-snapshot's tensor): :math:`x' = \mathrm{drop}(x + s\,\mathrm{std}(x))`, the standard
    deviation over the tensor's entries (unbiased, as ``torch.std``; no shift for a single entry), then
    entries zeroed with probability ``drop`` and the rest scaled by :math:`1/(1 - \mathrm{drop})`."""
    if not 0.0 <= drop < 1.0:
        raise ValueError(f"drop must be in [0, 1); got {drop}")
    dims = tuple(range(x.dim() - entry_dims, x.dim()))
    n = 1
    for d in dims:
        n *= x.shape[d]
    if shift and n > 1:
        x = x + shift * x.std(dim=dims, keepdim=True)
    if drop > 0:
        keep = (torch.rand(x.shape, generator=generator) >= drop).to(x.device, x.dtype)
        x = x * keep / (1.0 - drop)
    return x


def to_device(batch: Any, device: str | torch.device) -> Any:
    """Move a batch container (anything with ``.to``, or a dataclass of tensors) to ``device``."""
    device = torch.device(device)
    if isinstance(batch, Tensor) or hasattr(batch, "to"):
        return batch.to(device)
    if dataclasses.is_dataclass(batch):
        return dataclasses.replace(
            batch,
            **{
                f.name: getattr(batch, f.name).to(device)
                for f in dataclasses.fields(batch)
                if isinstance(getattr(batch, f.name), Tensor)
            },
        )
    raise ValueError(f"cannot move a {type(batch).__name__} to {device}")


def _f32(x: Tensor) -> Tensor:
    """float16/bfloat16 storage -> float32 compute (zoos may be stored in half precision)."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def random_hidden_perms(sizes: tuple[int, ...], generator: torch.Generator | None = None) -> list[Tensor]:
    """One random permutation per hidden layer of an MLP with layer widths ``sizes``."""
    return [torch.randperm(n, generator=generator) for n in sizes[1:-1]]


class MetaNet(nn.Module, abc.ABC):
    """Base class: task head on an embedding, named loss terms, parameter groups (module docstring)."""

    def __init__(
        self, task: str, emb_dim: int, out_dim: int, snapshots: Snapshots = "last", head_hidden: int = 64
    ) -> None:
        super().__init__()
        self.task = check_task(task)
        self.snapshots = snapshots
        self.head = TaskHead(task, emb_dim, out_dim, hidden=head_hidden)
        self.loss_weights: dict[str, float] = {"task": 1.0}

    # ---- data ---------------------------------------------------------------------------
    def prepare(self, zoo: Zoo) -> Any:
        """Default input container: the weight-tuple view at the chosen snapshots."""
        data = WeightData.from_zoo(zoo, self.snapshots)
        self.check_data(data)
        return data

    def check_data(self, data: Any) -> None:
        """Raise ``ValueError`` when ``data`` does not fit the architecture this model was built for."""

    def fit_inputs(self, data: Any, train_idx: Tensor) -> None:
        """Input statistics a model computes from its training networks before training (GMN's per-layer
        standardisation); nothing by default. :func:`hgutils.weightspace.tasks.fit` calls it."""

    def augment(self, batch: Any, generator: torch.Generator | None, shift: float = 0.2, drop: float = 0.5) -> Any:
        """The self-supervised view of a batch: DWSNets' shift + dropout before normalisation
        (:meth:`WeightData.dwsnets_view`)."""
        return batch.dwsnets_view(generator, shift, drop)

    def train_transform(self, batch: Any, generator: torch.Generator | None) -> Any:
        """Applied to every training batch (identity; FlatMLP's permutation augmentation overrides)."""
        return batch

    # ---- model --------------------------------------------------------------------------
    @abc.abstractmethod
    def embed(self, batch: Any) -> Tensor:
        """Trajectory embedding ``[B, D]`` of a batch (each model defines its own)."""

    def forward(self, batch: Any) -> Tensor:
        return self.head(self.embed(batch))

    def loss_terms(
        self,
        batch: Any,
        target: Tensor | None,
        progress: float = 0.0,
        generator: torch.Generator | None = None,
        temperature: float = 0.1,
        aug_shift: float = 0.2,
        aug_drop: float = 0.5,
    ) -> dict[str, Tensor]:
        """Named loss terms; the training loop computes ``sum(loss_weights[k] * terms[k])``.

        InfoNCE (DWSNets' self-supervised protocol): each network is paired with one augmented view of
        itself (:meth:`augment`). Where the batch container can be concatenated (a ``cat`` classmethod,
        as :meth:`WeightData.cat`), the ``B`` networks and their ``B`` views pass through the model as
        one batch of ``2B``, as DWSNets' trainer does (``torch.cat([w, aug_w])``). For a model with
        BatchNorm this matters: normalised per view, each view's batch statistics remove the
        augmentation's shift of 0.2 std in training, but the running statistics of
        evaluation do not, so the two views stop matching there."""
        if self.task == "infonce":
            view = self.augment(batch, generator, aug_shift, aug_drop)
            cat = getattr(type(batch), "cat", None)
            if cat is None:
                z1, z2 = self(batch), self(view)
            else:
                z1, z2 = self(cat([batch, view])).chunk(2, dim=0)
            return {"task": info_nce(z1, z2, temperature)}
        return {"task": task_loss(self.task, self(batch), target)}

    def param_groups(self) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
        """(Euclidean parameters, manifold parameters)."""

        man = [p for p in self.parameters() if isinstance(p, geoopt.ManifoldParameter)]
        ids = {id(p) for p in man}
        return [p for p in self.parameters() if id(p) not in ids], man

    def set_progress(self, progress: float) -> None:
        """Training progress in [0, 1] (curricula); no-op by default."""
