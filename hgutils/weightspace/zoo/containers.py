"""Zoo containers: the architecture specs (:class:`MLPSpec`, :class:`CNNSpec`) and :class:`Zoo`.

A zoo holds ``N`` networks of one architecture, each recorded at ``T`` training steps, as stacked
tensors ``params[key] [N, T, ...]`` (see :mod:`hgutils.weightspace.stacked_mlp` for the layout) plus
per-network metadata.

:meth:`Zoo.from_checkpoints` builds a zoo from your own checkpoints with
:func:`hgutils.weightspace.zoo.checkpoints.zoo_from_checkpoints`. The imports run one way: that module
imports this one and installs its loader here when it is imported (:func:`set_checkpoint_loader`; the
package ``hgutils.weightspace.zoo`` imports it, so the loader is in place before any zoo is built);
this module never imports it.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from hgutils.weightspace.stacked_mlp import mlp_forward

log = logging.getLogger("hgutils")

#: One network at one training step: a ``state_dict``, the module itself, or the path of a file
#: saved with ``torch.save`` (a folder of such files is a whole trajectory).
Checkpoint = Mapping[str, Tensor] | nn.Module | str | os.PathLike

#: The function behind :meth:`Zoo.from_checkpoints`, installed by :func:`set_checkpoint_loader`.
_checkpoint_loader: Callable[..., Zoo] | None = None


def set_checkpoint_loader(loader: Callable[..., Zoo]) -> None:
    """Install the function :meth:`Zoo.from_checkpoints` calls (module docstring):
    :mod:`hgutils.weightspace.zoo.checkpoints` installs its ``zoo_from_checkpoints`` when it is imported."""
    global _checkpoint_loader
    _checkpoint_loader = loader


@dataclass(frozen=True)
class MLPSpec:
    """Architecture of an MLP zoo: widths ``sizes = (in, h_1, ..., out)``, hidden activation, omega0.

    ``output_offset`` is a constant added to the output (0.5 for the DWSNets INR).
    """

    sizes: tuple[int, ...]
    activation: str
    omega0: float | None = None
    output_offset: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        if len(self.sizes) < 2 or any(s <= 0 for s in self.sizes):
            raise ValueError(f"MLPSpec.sizes must list >= 2 positive widths; got {self.sizes}")

    @property
    def n_layers(self) -> int:
        return len(self.sizes) - 1

    def forward(self, params: Mapping[str, Tensor], x: Tensor, **kw: Any) -> Tensor:
        """:func:`~hgutils.weightspace.stacked_mlp.mlp_forward` with this spec's activation and offset."""
        return mlp_forward(params, x, self.activation, omega0=self.omega0, output_offset=self.output_offset, **kw)


@dataclass(frozen=True)
class CNNSpec:
    """Small-CNN-Zoo architecture: ``n_conv`` convs (``channels``, ``kernel``, ``stride``, padding
    ``kernel // 2``), global average pooling, one dense layer to ``n_classes``.

    Parameter keys: ``W0..W{n_conv-1}`` ``[out_ch, in_ch, k, k]`` per network, ``W{n_conv}``
    ``[n_classes, channels]``, and the biases ``b*``.
    """

    in_channels: int = 1
    channels: int = 16
    n_conv: int = 3
    kernel: int = 3
    stride: int = 2
    n_classes: int = 10
    activation: str = "relu"

    @property
    def n_layers(self) -> int:
        return self.n_conv + 1


@dataclass
class Zoo:
    """A zoo of ``N`` networks with ``T`` snapshots each, as stacked tensors.

    The library's generators build zoos; :meth:`from_checkpoints` builds one from your own MLP
    checkpoints (``state_dict`` s or ``nn.Sequential`` s over training).

    Attributes
    ----------
    spec
        :class:`MLPSpec` (or :class:`CNNSpec` for the CNN classifier zoo).
    params
        ``{"W0": [N, T, out, in], "b0": [N, T, out], ...}`` (float32, or float16 storage).
    steps
        ``[T]`` int64 training steps of the snapshots (0 = initialisation, last = final).
    meta
        Per-network tensors with first dimension ``N``: ``"label"`` (INR image class),
        ``"target"`` (sine ``(a, b)``), ``"test_acc"`` (classifiers), ``"final_loss"``, ``"psnr"``,
        sampled hyperparameters.
    info
        Non-tensor details: dataset source, config, vocabularies of coded hyperparameters.
    """

    spec: MLPSpec | CNNSpec
    params: dict[str, Tensor]
    steps: Tensor
    meta: dict[str, Tensor] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.params:
            raise ValueError("a Zoo needs parameters")
        N, T = next(iter(self.params.values())).shape[:2]
        if self.steps.dim() != 1 or self.steps.shape[0] != T:
            raise ValueError(f"steps must be [T={T}]; got shape {tuple(self.steps.shape)}")
        for k, v in self.params.items():
            if v.shape[:2] != (N, T):
                raise ValueError(f"params[{k!r}] must start with [N={N}, T={T}]; got {tuple(v.shape)}")
        for k, v in self.meta.items():
            if v.shape[:1] != (N,):
                raise ValueError(f"meta[{k!r}] must start with N={N}; got shape {tuple(v.shape)}")
        if isinstance(self.spec, MLPSpec):
            L = self.spec.n_layers
            if set(self.params) != {f"{p}{l}" for l in range(L) for p in "Wb"}:
                raise ValueError(f"params keys {sorted(self.params)} do not match {L}-layer spec {self.spec}")
            for l in range(L):
                want = (self.spec.sizes[l + 1], self.spec.sizes[l])
                if tuple(self.params[f"W{l}"].shape[2:]) != want or tuple(self.params[f"b{l}"].shape[2:]) != want[:1]:
                    raise ValueError(
                        f"layer {l}: W/b shapes {tuple(self.params[f'W{l}'].shape)} / "
                        f"{tuple(self.params[f'b{l}'].shape)} do not match spec sizes "
                        f"{self.spec.sizes}"
                    )

    @classmethod
    def from_checkpoints(
        cls,
        trajectories: Sequence[Sequence[Checkpoint] | Checkpoint],
        steps: Sequence[int] | Sequence[Sequence[int]] | Tensor | None = None,
        *,
        activation: str | None = None,
        meta: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> Zoo:
        r"""Zoo of your own MLPs: ``N`` trajectories of ``T`` checkpoints (``state_dict`` s,
        ``nn.Sequential`` / Linear-only modules, or ``torch.save`` files) stacked as
        ``params["W{l}"][i, t] = W_l`` of network ``i`` at ``steps[t]``, the layers in the order the
        network applies them. See :func:`hgutils.weightspace.zoo.checkpoints.zoo_from_checkpoints`.

        Example: ``Zoo.from_checkpoints([[a_at_0, a_at_100], [b_at_0, b_at_100]], steps=[0, 100])`` for two
        networks ``a``, ``b`` saved as ``nn.Sequential`` s (or ``state_dict`` s with ``activation="relu"``);
        ``Zoo.from_checkpoints(["runs/a", "runs/b"], activation="relu")`` for two folders of
        ``step_<n>.pt`` files (sorted by the step in their names).
        """
        if _checkpoint_loader is None:
            raise RuntimeError(
                "no checkpoint loader installed: import hgutils.weightspace.zoo (it installs "
                "hgutils.weightspace.zoo.checkpoints.zoo_from_checkpoints)"
            )
        return _checkpoint_loader(trajectories, steps, activation=activation, meta=meta, info=info)

    def __len__(self) -> int:
        return next(iter(self.params.values())).shape[0]

    @property
    def T(self) -> int:
        return int(self.steps.shape[0])

    def _replace(self, params: dict[str, Tensor], steps: Tensor, meta: dict[str, Tensor]) -> Zoo:
        return Zoo(self.spec, params, steps, meta, dict(self.info))

    def subset(self, idx: Sequence[int] | Tensor | slice) -> Zoo:
        """Zoo of the networks ``idx`` (indices, bool mask or slice; all snapshots kept)."""
        if isinstance(idx, slice):
            sel: Any = idx
        else:
            sel = torch.as_tensor(idx)
            if sel.dtype == torch.bool:
                if sel.shape != (len(self),):
                    raise ValueError(f"a boolean mask must be [N={len(self)}]; got {tuple(sel.shape)}")
                sel = sel.nonzero().squeeze(1)
            sel = sel.long()
            if sel.numel() and (sel.min() < -len(self) or sel.max() >= len(self)):
                raise ValueError(f"network indices must lie in [0, {len(self)}); got {sel.min()}..{sel.max()}")
        return self._replace(
            {k: v[sel] for k, v in self.params.items()}, self.steps, {k: v[sel] for k, v in self.meta.items()}
        )

    def snapshots(self, idx: Sequence[int] | Tensor | slice) -> Zoo:
        """Zoo restricted to the snapshots ``idx`` (indices into the ``T`` axis, e.g. ``[-1]``)."""
        if isinstance(idx, slice):
            sel: Any = idx
        else:
            sel = torch.as_tensor(idx).long().reshape(-1)
            if sel.numel() == 0:
                raise ValueError("select at least one snapshot")
            if sel.min() < -self.T or sel.max() >= self.T:
                raise ValueError(f"snapshot indices must lie in [-{self.T}, {self.T}); got {sel.tolist()}")
        steps = self.steps[sel]
        if steps.numel() == 0:
            raise ValueError(f"snapshot selection {idx} is empty")
        z = self._replace({k: v[:, sel] for k, v in self.params.items()}, steps, dict(self.meta))
        if "standardization" in z.info:
            z.info["standardization"] = {k: (m[sel], d[sel]) for k, (m, d) in z.info["standardization"].items()}
        return z

    def weights(self) -> list[tuple[Tensor, Tensor]]:
        """Weight-space tuple view: per layer ``(W [N, T, out, in], b [N, T, out])`` (views, no copy)."""
        L = self.spec.n_layers
        return [(self.params[f"W{l}"], self.params[f"b{l}"]) for l in range(L)]

    def final(self) -> dict[str, Tensor]:
        """Parameters of the last snapshot, ``{key: [N, ...]}`` (float32)."""
        return {k: v[:, -1].float() for k, v in self.params.items()}

    def at(self, t: int) -> dict[str, Tensor]:
        """Parameters of snapshot ``t``, ``{key: [N, ...]}`` (float32)."""
        return {k: v[:, t].float() for k, v in self.params.items()}

    def to(self, dtype: torch.dtype) -> Zoo:
        """Copy with parameters stored as ``dtype`` (e.g. ``torch.float16`` halves the memory)."""
        return self._replace({k: v.to(dtype) for k, v in self.params.items()}, self.steps, dict(self.meta))

    def rms_scales(self, idx: Sequence[int] | Tensor | None = None) -> dict[str, float]:
        r"""Per-tensor scale :math:`\sigma_k = \sqrt{\overline{p_k^2}}` (mean over the networks ``idx``
        -- default all --, every snapshot and every entry of parameter tensor ``k``)."""
        sel = slice(None) if idx is None else torch.as_tensor(idx).long()
        scales = {k: float(v[sel].double().pow(2).mean().sqrt()) for k, v in self.params.items()}
        zero = [k for k, v in scales.items() if not v > 0]
        if zero:
            raise ValueError(f"parameter tensor(s) {zero} are all zero over the selected networks; cannot rescale")
        return scales

    def rescaled(self, scales: dict[str, float]) -> Zoo:
        r"""Copy with every parameter tensor divided by its scale, :math:`\tilde p_k = p_k / \sigma_k`.

        One positive scalar per tensor (the same for every network, snapshot and entry), so each
        network's neuron-permutation symmetries and the signs and zeros of its
        weights are unchanged; only the layers' relative magnitudes are equalised (a SIREN's hidden
        weights are ~30x smaller than its first layer's). The scales are stored in
        ``info["param_scale"]``. Use :meth:`rms_scales` of the *training* networks so no statistic
        of the test networks leaks into the inputs.
        """
        if set(scales) != set(self.params):
            raise ValueError(f"scales must name every parameter tensor {sorted(self.params)}; got {sorted(scales)}")
        bad = {k: v for k, v in scales.items() if not (math.isfinite(v) and v > 0)}
        if bad:
            raise ValueError(f"scales must be finite and positive; got {bad}")
        out = self._replace(
            {k: (v.float() / scales[k]).to(v.dtype) for k, v in self.params.items()}, self.steps, dict(self.meta)
        )
        out.info["param_scale"] = dict(scales)
        return out

    def entry_stats(self, idx: Sequence[int] | Tensor | None = None) -> dict[str, tuple[Tensor, Tensor]]:
        r"""Per-entry, per-snapshot mean and standard deviation over the networks ``idx`` (default all):
        ``{key: (mu [T, ...], sigma [T, ...])}`` with :math:`\mu_{k,t,e} = \mathrm{mean}_i\, p_{k,i,t,e}`
        and :math:`\sigma_{k,t,e}` the population standard deviation (float64)."""
        sel = slice(None) if idx is None else torch.as_tensor(idx).long()
        out = {}
        for k, v in self.params.items():
            x = v[sel].double()
            if x.shape[0] < 2:
                raise ValueError(f"entry statistics need at least 2 networks; got {x.shape[0]}")
            out[k] = (x.mean(0), x.std(0, unbiased=False))
        return out

    def standardized(self, stats: dict[str, tuple[Tensor, Tensor]], rel_floor: float = 1e-6) -> Zoo:
        r"""Copy with every parameter entry standardised, :math:`\tilde p = (p - \mu) / \max(\sigma, f)`.

        As the DWSNets code normalises its inputs (Navon et al. 2023, arXiv:2301.12780): statistics
        per entry (and here per snapshot) of the *training* networks (:meth:`entry_stats`),

        so no test statistic leaks in. Entries that do not vary over the training networks (e.g. the
        first snapshot of a shared-initialisation zoo) map to 0; ``f = rel_floor`` times the tensor's
        RMS keeps the division finite. Permutation consistency: the statistics are a function of the
        zoo, so permuting the hidden neurons of *every* network by the same permutation (relabelling
        the architecture) permutes the statistics with it and the standardised zoo is the permuted
        standardised zoo (tested); per-network permutations (augmentation, the invariance of the
        meta-networks) act on the standardised weights.
        """
        if set(stats) != set(self.params):
            raise ValueError(f"stats must name every parameter tensor {sorted(self.params)}; got {sorted(stats)}")
        out, used = {}, {}
        for k, v in self.params.items():
            mu, sd = stats[k]
            if mu.shape != v.shape[1:] or sd.shape != v.shape[1:]:
                raise ValueError(f"stats[{k!r}] must have shape {tuple(v.shape[1:])}; got {tuple(mu.shape)}")
            floor = rel_floor * float(v.double().pow(2).mean().sqrt()) + 1e-30
            div = sd.clamp_min(floor)
            out[k] = ((v.double() - mu) / div).to(v.dtype)
            used[k] = (mu.float(), div.float())
        z = self._replace(out, self.steps, dict(self.meta))
        z.info["inputs"] = "standardized per entry and snapshot (training networks)"
        z.info["standardization"] = used  # (mean, divisor) per entry: what a view "before normalisation" undoes
        return z

    def updates(self) -> Zoo:
        r"""Copy holding each network's update since its initialisation, :math:`W_t - W_0` (snapshot 0
        becomes zero). Equivariant: a hidden-neuron permutation of a network permutes its ``W_0`` too."""
        z = self._replace({k: v - v[:, :1] for k, v in self.params.items()}, self.steps, dict(self.meta))
        z.info["inputs"] = "updates since initialisation (W_t - W_0)"
        return z

    def movement(self, first: int = 0, last: int = -1) -> dict[str, float]:
        r"""How far the weights move between snapshots ``first`` and ``last``: per tensor and over all
        parameters, the median over networks of :math:`\|W_{last} - W_{first}\| / \|W_{first}\|` (Frobenius
        norms), keys ``W0, b0, ...`` and ``all``."""
        if self.T < 2:
            raise ValueError(f"movement needs at least two snapshots; the zoo has T={self.T}")
        out = {}
        num = torch.zeros(len(self), dtype=torch.float64)
        den = torch.zeros(len(self), dtype=torch.float64)
        for k, v in self.params.items():
            a, b = v[:, first].double().flatten(1), v[:, last].double().flatten(1)
            dn, an = (b - a).pow(2).sum(1), a.pow(2).sum(1)
            num, den = num + dn, den + an
            out[k] = float((dn.sqrt() / an.sqrt().clamp_min(1e-30)).median())
        out["all"] = float((num.sqrt() / den.sqrt().clamp_min(1e-30)).median())
        return out

    def nbytes(self) -> int:
        """Bytes held by the parameter tensors."""
        return sum(v.numel() * v.element_size() for v in self.params.values())

    def split(self, fractions: Sequence[float], seed: int = 0) -> tuple[Zoo, ...]:
        """Deterministic random split into ``len(fractions)`` disjoint zoos.

        Sizes are ``floor(f * N)``; if the fractions sum to 1 the last part takes the remainder.
        """
        fr = [float(f) for f in fractions]
        if not fr or any(f < 0 for f in fr) or sum(fr) > 1 + 1e-9:
            raise ValueError(f"fractions must be non-negative and sum to <= 1; got {fr}")
        N = len(self)
        g = torch.Generator().manual_seed(int(seed))
        perm = torch.randperm(N, generator=g)
        sizes = [int(math.floor(f * N)) for f in fr]
        if abs(sum(fr) - 1) < 1e-9:
            sizes[-1] = N - sum(sizes[:-1])
        out, start = [], 0
        for s in sizes:
            out.append(self.subset(perm[start : start + s].sort().values))
            start += s
        return tuple(out)

    @staticmethod
    def concat(zoos: Sequence[Zoo]) -> Zoo:
        """Concatenate zoos with the same spec and steps along the network axis."""
        if not zoos:
            raise ValueError("concat needs at least one zoo")
        z0 = zoos[0]
        for z in zoos[1:]:
            if z.spec != z0.spec or not torch.equal(z.steps, z0.steps) or set(z.meta) != set(z0.meta):
                raise ValueError("concat needs zoos with the same spec, steps and meta keys")
        return Zoo(
            z0.spec,
            {k: torch.cat([z.params[k] for z in zoos]) for k in z0.params},
            z0.steps,
            {k: torch.cat([z.meta[k] for z in zoos]) for k in z0.meta},
            dict(z0.info),
        )
