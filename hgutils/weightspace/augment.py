r"""Weight-space augmentations of INR zoos: the set DWSNets and Neural Graphs train with.

Both references (DWSNets' ``experiments/data.py`` ``INRDataset._augment``, and Neural Graphs'
copy of it, switched on by ``augmentation: True`` in ``configs/data/mnist.yaml``) augment every
training INR, before input standardisation, with five transforms applied in this order. For an
MLP :math:`h_1 = \sigma(W_0 x + b_0)`, :math:`h_{l+1} = \sigma(W_l h_l + b_l)` (``W_l [out, in]``,
the library's layout), with one draw per network:

1. **translation** by :math:`t \sim U(-s_t, s_t)^{d_0}` at a depth :math:`k \sim U\{1, \dots, L-1\}`:

   .. math:: b_{k-1} \leftarrow b_{k-1} + W_{k-1} \cdots W_1 W_0\, t .

   At :math:`k = 1` this is :math:`b_0 \leftarrow b_0 + W_0 t`, so the network computes
   :math:`f'(x) = f(x + t)` exactly: the INR renders its image translated by :math:`-t`. At
   :math:`k > 1` the same vector is pushed through the linear maps only, ignoring the
   activations (the references' choice): not function preserving.
2. **rotation** of 2-d inputs by :math:`\theta \sim U(-\theta_{\max}, \theta_{\max})`:
   :math:`W_0 \leftarrow W_0 R_\theta` with :math:`R_\theta` the rotation matrix, so
   :math:`f'(x) = f(R_\theta x)` exactly.
3. **"noise"**: :math:`W_l \leftarrow W_l + \sigma_{\text{noise}}\,\mathrm{std}(W_l)` and likewise
   every bias with more than one entry. This is what the references' code computes -- a constant
   shift by the tensor's standard deviation, with no random draw -- and it is reproduced as is
   (``noise="reference"``); ``noise="gaussian"`` adds :math:`\sigma_{\text{noise}}\,\mathrm{std}(W_l)\,\epsilon`,
   :math:`\epsilon \sim N(0, I)`, the reading the name suggests.
4. **dropout** of every entry with probability :math:`p`, the survivors scaled by :math:`1/(1-p)`
   (``torch.nn.functional.dropout`` in training mode).
5. **input scaling**: :math:`W_0 \leftarrow a W_0`, :math:`a \sim U(1 - s_a, 1 + s_a)`, so
   :math:`f'(x) = f(a x)` exactly (the bias is not scaled).

Defaults are the references' (:data:`REFERENCE_DEFAULTS`): :math:`s_t = 0.25`,
:math:`\theta_{\max} = 45°`, :math:`\sigma_{\text{noise}} = 0.1`, :math:`p = 0.01`, :math:`s_a = 0.2`.
Transforms 1, 2 and 5 compose to the exact input transform :math:`f'(x) = f(a R_\theta x + t)` at
depth 1 (tested); 3 and 4 perturb the function.

Neural Graphs' CNN-zoo runs (``experiments/data_generalization.py``, ``augmentation: True`` in
``configs/data/zoo_cifar_nfn.yaml``) keep only transforms 3 and 4, with Gaussian noise
(:data:`WEIGHT_NOISE_DEFAULTS`): the coordinate transforms 1, 2 and 5 mean something only for a
network whose input is a coordinate (an INR), so :func:`for_zoo` switches them off on any other
zoo. :func:`augment_weight_data` applies a setting to a training batch of the meta-networks'
:class:`~hgutils.weightspace.metanets.base.WeightData`: it undoes the batch's input
standardisation, augments the raw weights and standardises again with the same statistics, as the
references augment before they normalise.

Parameters are the stacked dict of :mod:`hgutils.weightspace.stacked_mlp`, ``W_l [N, ..., out, in]`` and
``b_l [N, ..., out]``: the first dimension indexes networks (one draw each) and any dimensions between
it and the matrix -- the ``T`` snapshots of a trajectory -- share their network's draw, so a whole
trajectory is augmented as one network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "COORDINATE_ZOO_KINDS",
    "NOISE_KINDS",
    "REFERENCE_DEFAULTS",
    "WEIGHT_NOISE_DEFAULTS",
    "INRAugmentation",
    "augment_inr",
    "augment_weight_data",
    "for_zoo",
    "rotate_inputs",
    "rotation_matrices",
    "scale_inputs",
    "translate_inputs",
]

NOISE_KINDS: tuple[str, ...] = ("reference", "gaussian", "none")


@dataclass(frozen=True)
class INRAugmentation:
    """Magnitudes of the five transforms (module docstring); 0 switches a transform off."""

    translation: float = 0.25  # s_t: half-width of the uniform translation of the input coordinates
    rotation_degrees: float = 45.0  # theta_max, applied only to 2-d inputs
    noise: float = 0.1  # sigma_noise, in units of each tensor's standard deviation
    noise_kind: str = "reference"  # "reference" (constant shift, as the references' code) | "gaussian" | "none"
    dropout: float = 0.01  # p
    input_scale: float = 0.2  # s_a: the first layer's weights are scaled by U(1 - s_a, 1 + s_a)
    max_depth: int | None = None  # translation depth drawn from 1..min(L-1, max_depth); None: up to L-1

    def __post_init__(self) -> None:
        for name in ("translation", "rotation_degrees", "noise", "input_scale"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"INRAugmentation.{name} must be finite and >= 0; got {v!r}")
        if not (0 <= self.dropout < 1):
            raise ValueError(f"INRAugmentation.dropout must lie in [0, 1); got {self.dropout!r}")
        if self.input_scale >= 1:
            raise ValueError(
                f"INRAugmentation.input_scale must be < 1 (a scale factor stays positive); got {self.input_scale!r}"
            )
        if self.noise_kind not in NOISE_KINDS:
            raise ValueError(f"INRAugmentation.noise_kind must be one of {NOISE_KINDS}; got {self.noise_kind!r}")
        if self.max_depth is not None and self.max_depth < 1:
            raise ValueError(f"INRAugmentation.max_depth must be >= 1 or None; got {self.max_depth!r}")

    @property
    def coordinate_transforms(self) -> tuple[str, ...]:
        """The transforms switched on that act on the input coordinates (1, 2 and 5)."""
        on = {"translation": self.translation, "rotation_degrees": self.rotation_degrees}
        on["input_scale"] = self.input_scale
        return tuple(k for k, v in on.items() if v > 0)

    def describe(self) -> str:
        """One line for tables: the transforms switched on and their magnitudes."""
        parts = [f"{k} {v:g}" for k, v in (("translation", self.translation), ("rotation", self.rotation_degrees)) if v]
        if self.noise > 0 and self.noise_kind != "none":
            parts.append(f"{self.noise_kind} noise {self.noise:g} std")
        parts += [f"{k} {v:g}" for k, v in (("dropout", self.dropout), ("input scale", self.input_scale)) if v]
        return ", ".join(parts) or "none"


#: The magnitudes both references train with (DWSNets ``INRDataset`` defaults, kept by Neural Graphs).
REFERENCE_DEFAULTS = INRAugmentation()
#: Neural Graphs' augmentation of its CNN zoo (``experiments/data_generalization.py``): Gaussian noise of
#: 0.1 std per tensor and dropout 0.01, no coordinate transforms (valid on any zoo)
WEIGHT_NOISE_DEFAULTS = INRAugmentation(translation=0.0, rotation_degrees=0.0, noise_kind="gaussian", input_scale=0.0)
#: zoo kinds (``zoo.info["kind"]``) whose networks read input coordinates: the coordinate transforms apply
COORDINATE_ZOO_KINDS: tuple[str, ...] = ("inr", "sine")


def for_zoo(settings: INRAugmentation, zoo_kind: str | None) -> INRAugmentation:
    """``settings`` restricted to the transforms that apply to a zoo of kind ``zoo_kind`` (``zoo.info["kind"]``):
    all of them on a zoo of INRs (:data:`COORDINATE_ZOO_KINDS`); on any other zoo (a classifier zoo, or one
    of unknown kind) the coordinate transforms -- translation, rotation, input scale -- are switched off
    and noise and dropout kept, as Neural Graphs augments its CNN zoo."""
    if zoo_kind in COORDINATE_ZOO_KINDS or not settings.coordinate_transforms:
        return settings
    return replace(settings, translation=0.0, rotation_degrees=0.0, input_scale=0.0)


def _uniform(n: int, half_width: float, g: torch.Generator | None, like: Tensor, centre: float = 0.0) -> Tensor:
    u = torch.rand(n, generator=g, dtype=like.dtype, device=like.device)
    return centre + (2.0 * u - 1.0) * half_width


def _per_network(x: Tensor, target: Tensor, trailing: int) -> Tensor:
    """``x [N, *k]`` with singleton axes for the snapshot dims of ``target [N, ..., *entry]``, whose
    per-entry shape has ``trailing`` dims (2 for a weight matrix, 1 for a bias vector)."""
    extra = target.dim() - 1 - trailing
    return x.reshape(x.shape[0], *([1] * extra), *x.shape[1:])


def _n_layers(params: Mapping[str, Tensor]) -> int:
    L = 0
    while f"W{L}" in params and f"b{L}" in params:
        L += 1
    if L == 0 or len(params) != 2 * L:
        raise ValueError(
            f"augment_inr needs an MLP parameter dict W0, b0, ..., W{{L-1}}, b{{L-1}}; got keys {sorted(params)}"
        )
    return L


def rotation_matrices(theta: Tensor) -> Tensor:
    r"""Rotation matrices ``[N, 2, 2]``,
    :math:`R_\theta = \begin{pmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{pmatrix}`."""
    c, s = torch.cos(theta), torch.sin(theta)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def _layers(params: Mapping[str, Tensor]) -> tuple[list[Tensor], list[Tensor]]:
    L = _n_layers(params)
    W = [params[f"W{l}"] for l in range(L)]
    b = [params[f"b{l}"] for l in range(L)]
    if (
        W[0].dim() < 3
        or any(w.shape[:-2] != W[0].shape[:-2] for w in W)
        or any(x.shape[:-1] != W[0].shape[:-2] for x in b)
    ):
        raise ValueError(
            "weight-space augmentations need W_l [N, ..., out, in] and b_l [N, ..., out] with the same leading "
            "dims; got " + ", ".join(f"W{l} {tuple(W[l].shape)} b{l} {tuple(b[l].shape)}" for l in range(L))
        )
    return W, b


def _as_params(W: list[Tensor], b: list[Tensor]) -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    for l, (w, x) in enumerate(zip(W, b)):
        out[f"W{l}"], out[f"b{l}"] = w, x
    return out


def translate_inputs(params: Mapping[str, Tensor], t: Tensor, depth: Tensor | int = 1) -> dict[str, Tensor]:
    r"""Transform 1: :math:`b_{k-1} \leftarrow b_{k-1} + W_{k-1} \cdots W_0\, t` for each network's
    ``depth`` :math:`k` (``t [N, d_0]``, ``depth`` an int or ``[N]`` in ``1..L-1``). At depth 1 the
    networks compute :math:`f(x + t)`."""
    W, b = _layers(params)
    N, L = W[0].shape[0], len(W)
    depth = torch.full((N,), depth, device=t.device) if isinstance(depth, int) else depth
    if t.shape != (N, W[0].shape[-1]):
        raise ValueError(f"t must be [N={N}, d_0={W[0].shape[-1]}]; got {tuple(t.shape)}")
    if depth.shape != (N,) or int(depth.min()) < 1 or int(depth.max()) > max(L - 1, 1):
        raise ValueError(f"depth must be [N={N}] in 1..{max(L - 1, 1)}; got {depth.tolist()}")
    v = _per_network(t.to(W[0].dtype), W[0], 2)  # [N, ..., d_0]: one vector per network and snapshot
    for k in range(1, int(depth.max()) + 1):
        v = (W[k - 1] @ v.unsqueeze(-1)).squeeze(-1)  # W_{k-1} ... W_0 t
        chosen = _per_network((depth == k).to(v.dtype)[:, None], v, 1)
        b[k - 1] = b[k - 1] + chosen * v
    return _as_params(W, b)


def rotate_inputs(params: Mapping[str, Tensor], theta: Tensor) -> dict[str, Tensor]:
    r"""Transform 2: :math:`W_0 \leftarrow W_0 R_\theta` (``theta [N]`` radians, 2-d inputs): the
    networks compute :math:`f(R_\theta x)`."""
    W, b = _layers(params)
    if W[0].shape[-1] != 2:
        raise ValueError(f"rotate_inputs needs 2-d inputs; W0 has input width {W[0].shape[-1]}")
    W[0] = W[0] @ _per_network(rotation_matrices(theta.to(W[0].dtype)), W[0], 2)
    return _as_params(W, b)


def scale_inputs(params: Mapping[str, Tensor], a: Tensor) -> dict[str, Tensor]:
    r"""Transform 5: :math:`W_0 \leftarrow a W_0` (``a [N]``): the networks compute :math:`f(a x)`."""
    W, b = _layers(params)
    W[0] = W[0] * _per_network(a.to(W[0].dtype)[:, None, None], W[0], 2)
    return _as_params(W, b)


def augment_inr(
    params: Mapping[str, Tensor],
    generator: torch.Generator | None = None,
    settings: INRAugmentation = REFERENCE_DEFAULTS,
) -> dict[str, Tensor]:
    """The five reference transforms in the references' order (module docstring), one draw per
    network shared by its snapshots; returns a new dict.

    Raises
    ------
    ValueError
        If ``params`` is not an MLP dict ``W0, b0, ...`` whose weights are ``[N, ..., out, in]``.
    """
    W, _ = _layers(params)
    N, d_in, L, ref, g = W[0].shape[0], W[0].shape[-1], len(W), W[0], generator
    out = dict(params)
    if settings.translation > 0 and L > 1:
        t = (2.0 * torch.rand(N, d_in, generator=g, dtype=ref.dtype, device=ref.device) - 1.0) * settings.translation
        top = L - 1 if settings.max_depth is None else min(L - 1, settings.max_depth)
        out = translate_inputs(out, t, torch.randint(1, top + 1, (N,), generator=g, device=ref.device))
    if settings.rotation_degrees > 0 and d_in == 2:
        out = rotate_inputs(out, _uniform(N, math.radians(settings.rotation_degrees), g, ref))
    if settings.noise > 0 and settings.noise_kind != "none":
        for l in range(L):
            out[f"W{l}"] = _noisy(out[f"W{l}"], settings, g, stacked_dims=2)
            if out[f"b{l}"].shape[-1] > 1:  # the references leave one-entry biases alone
                out[f"b{l}"] = _noisy(out[f"b{l}"], settings, g, stacked_dims=1)
    if settings.dropout > 0:
        for key in list(out):
            out[key] = _dropout(out[key], settings.dropout, g, stacked_dims=2 if key[0] == "W" else 1)
    if settings.input_scale > 0:
        out = scale_inputs(out, _uniform(N, settings.input_scale, g, ref, centre=1.0))
    return out


def _shared_draw(x: Tensor, stacked_dims: int) -> tuple[int, ...]:
    """The shape of a per-entry draw shared by a network's snapshots: ``[N, 1, ..., *entry]``."""
    return (x.shape[0], *([1] * (x.dim() - 1 - stacked_dims)), *x.shape[x.dim() - stacked_dims :])


def _noisy(x: Tensor, s: INRAugmentation, g: torch.Generator | None, stacked_dims: int) -> Tensor:
    """``x + noise * std(x)`` (reference) or ``x + noise * std(x) * eps`` (gaussian), the std over one
    tensor of one network at one snapshot."""
    std = x.flatten(-stacked_dims).std(-1)
    std = std.reshape(*std.shape, *([1] * stacked_dims))
    if s.noise_kind == "reference":
        return x + s.noise * std
    eps = torch.randn(_shared_draw(x, stacked_dims), generator=g, dtype=x.dtype, device=x.device)
    return x + s.noise * std * eps


def _dropout(x: Tensor, p: float, g: torch.Generator | None, stacked_dims: int) -> Tensor:
    """Inverted dropout: zero each entry w.p. ``p`` (one mask per network, shared by its snapshots),
    scale the rest by ``1/(1-p)``."""
    keep = torch.rand(_shared_draw(x, stacked_dims), generator=g, dtype=x.dtype, device=x.device) >= p
    return x * keep / (1.0 - p)


def augment_weight_data(data: Any, generator: torch.Generator | None, settings: INRAugmentation) -> Any:
    r"""A training batch ``data`` (:class:`~hgutils.weightspace.metanets.base.WeightData`, ``W_l [B, T,
    out, in]``) augmented as the references do, before normalisation: with ``data.norm`` the per-tensor
    ``(\mu, d)`` the entries were normalised with, :math:`\tilde W = (\mathrm{aug}(\tilde W d + \mu) - \mu) / d`
    (:func:`augment_inr`, one draw per network shared by its snapshots); raw weights (``norm`` ``None``)
    are augmented as they are. Returns a new container with the same ``norm``.

    Raises
    ------
    ValueError
        If ``data`` is not a weight-tuple container (GTH-GMN's graphs carry no per-tensor weights).
    """
    from hgutils.weightspace.metanets.base import WeightData

    if not isinstance(data, WeightData):
        raise ValueError(
            f"weight-space augmentation needs a WeightData batch (StatNN, FlatMLP, NFN, DWSNet, GMN); got "
            f"{type(data).__name__}"
        )
    L, norm = len(data.weights), data.norm
    params: dict[str, Tensor] = {}
    for l in range(L):
        for k, (p, x) in enumerate((("W", data.weights[l]), ("b", data.biases[l]))):
            params[f"{p}{l}"] = x if norm is None else x * norm[2 * l + k][1] + norm[2 * l + k][0]
    out = augment_inr(params, generator, settings)
    if norm is not None:
        for l in range(L):
            for k, p in enumerate("Wb"):
                mu, d = norm[2 * l + k]
                out[f"{p}{l}"] = (out[f"{p}{l}"] - mu) / d
    return WeightData(tuple(out[f"W{l}"] for l in range(L)), tuple(out[f"b{l}"] for l in range(L)), norm)
