"""Network zoos with training trajectories: containers, the three generators, chunked caching.

A zoo holds ``N`` networks of one architecture, each recorded at ``T`` training steps, as stacked
tensors ``params[key] [N, T, ...]`` (see :mod:`hgutils.weightspace.stacked` for the layout) plus
per-network metadata. Three generators, each with scale presets, cached by config hash and
resumable in chunks:

- :func:`inr_image_zoo` -- one SIREN INR per image (2 -> 32 -> 32 -> 1, omega0 = 30), Adam lr 5e-4;
  trained with hand-written SIREN gradients (:func:`siren_mse_value_and_grad`) in cache-sized
  batches whose size is chosen by measurement (:func:`auto_batch_size`).
- :func:`sine_zoo` -- SIRENs 1 -> 32 -> 32 -> 1 fitting ``a sin(b x)``, DWSNets protocol.
- :func:`classifier_zoo` -- small classifiers (Small-CNN-Zoo CNN or an MLP) trained with sampled
  hyperparameters; the test accuracy is the label.

Chunked generation: the networks are generated in chunks of ``chunk_size``; each finished chunk is
written atomically with :func:`hgutils.repro.save_checked` under
``<cache>/<zoo name>/<config hash>.chunks/``. An interrupted run restarts from the chunks on disk
(a truncated or corrupt chunk fails its checksum and is recomputed). Network ``i``'s
initialisation and hyperparameters depend only on ``(seed, i)``, so results do not depend on the
chunking. The assembled zoo is stored with :func:`hgutils.repro.cached`.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

from hgutils.presets import Preset
from hgutils.repro import cache_dir, cached, config_hash, load_checked, progress, save_checked
from hgutils.weightspace.stacked import (
    init_mlp,
    mlp_forward,
    snapshot_schedule,
    train_stacked,
)

log = logging.getLogger("hgutils")

__all__ = [
    "CNNSpec",
    "ClassifierZooConfig",
    "INRZooConfig",
    "MLPSpec",
    "SineZooConfig",
    "Zoo",
    "auto_batch_size",
    "classifier_zoo",
    "image_coordinates",
    "inr_image_zoo",
    "psnr",
    "sine_zoo",
    "siren_mse_value_and_grad",
]


# --------------------------------------------------------------------------------------------
# containers
# --------------------------------------------------------------------------------------------
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
        """:func:`~hgutils.weightspace.stacked.mlp_forward` with this spec's activation and offset."""
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
        return self._replace({k: v[:, sel] for k, v in self.params.items()}, steps, dict(self.meta))

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


# --------------------------------------------------------------------------------------------
# chunked, resumable generation
# --------------------------------------------------------------------------------------------
def _chunk_dir(name: str, config: Any, root: str | Path | None) -> Path:
    return Path(root if root is not None else cache_dir()) / name / f"{config_hash(config)}.chunks"


def generate_chunked(
    name: str,
    config: Any,
    n_total: int,
    chunk_size: int,
    make_chunk: Callable[[int, int], dict[str, Tensor]],
    *,
    root: str | Path | None = None,
    desc: str | None = None,
    persist: bool = True,
) -> dict[str, Tensor]:
    """Run ``make_chunk(start, stop)`` over ``[0, n_total)`` in chunks, resuming from chunks on disk.

    Each chunk's result (a dict of tensors with first dimension ``stop - start``) is written
    atomically with a checksum; existing valid chunks are loaded instead of recomputed, corrupt
    ones are recomputed. Returns the chunks concatenated along dimension 0. ``persist=False`` keeps
    everything in memory (no files).
    """
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive; got {chunk_size}")
    folder = _chunk_dir(name, config, root)
    parts: list[dict[str, Tensor]] = []
    bounds = [(s, min(s + chunk_size, n_total)) for s in range(0, n_total, chunk_size)]
    for c, (start, stop) in enumerate(progress(bounds, desc=desc or name)):
        path = folder / f"chunk_{c:05d}_{start}_{stop}.pt"
        part = None
        if persist and path.exists():
            try:
                part = load_checked(path)
                log.info("zoo chunk %s loaded", path)
            except Exception as exc:  # corrupt or truncated: redo it
                log.warning("zoo chunk %s unreadable (%s); recomputing", path, exc)
        if part is None:
            part = make_chunk(start, stop)
            if persist:
                save_checked(path, part)
        parts.append(part)
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


def _cached_zoo(
    name: str, config: Any, build: Callable[[], dict[str, Any]], root: str | Path | None, use_cache: bool
) -> dict[str, Any]:
    if not use_cache:
        return build()
    out = cached(name, config, build, root=root)
    shutil.rmtree(_chunk_dir(name, config, root), ignore_errors=True)  # assembled entry now on disk
    return out


def net_seeds(seed: int, start: int, stop: int) -> list[int]:
    """Per-network seeds: network ``i`` of a zoo with base ``seed`` uses ``seed * 1_000_003 + i``."""
    return [int(seed) * 1_000_003 + i for i in range(start, stop)]


def _dtype(name: str) -> torch.dtype:
    if name not in ("float32", "float16"):
        raise ValueError(f"snapshot_dtype must be 'float32' or 'float16'; got {name!r}")
    return getattr(torch, name)


# --------------------------------------------------------------------------------------------
# SIREN fitting (hand-written gradients)
# --------------------------------------------------------------------------------------------
def image_coordinates(h: int, w: int) -> Tensor:
    """Pixel coordinates ``[h*w, 2]`` on ``[-1, 1]^2``, row-major (x = column, y = row), as DWSNets."""
    ys = torch.linspace(-1.0, 1.0, h)
    xs = torch.linspace(-1.0, 1.0, w)
    yy, xx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([xx.reshape(-1), yy.reshape(-1)], dim=1)


def psnr(mse: Tensor, peak: float = 1.0) -> Tensor:
    """Peak signal-to-noise ratio :math:`10 \\log_{10}(\\text{peak}^2 / \\text{mse})` in dB."""
    return 10.0 * torch.log10(peak**2 / mse.clamp_min(1e-20))


def siren_mse_value_and_grad(
    x: Tensor, y: Tensor, omega0: float, output_offset: float = 0.0, grid: tuple[int, int] | None = None
) -> Callable[[Mapping[str, Tensor]], tuple[Tensor, Tensor]]:
    """Fused per-network MSE and its gradient for stacked SIRENs, without autograd.

    Forward (hidden layers :math:`l < L-1`, shared inputs ``x [P, in]``, targets ``y [n, P, out]``):

    .. math::
        a_l = \\omega_0 (h_l W_l^\\top + b_l),\\quad h_{l+1} = \\sin a_l,\\quad
        \\hat y = h_{L-1} W_{L-1}^\\top + b_{L-1} + c,\\quad \\ell = \\tfrac{1}{P\\,d_{out}}\\|\\hat y - y\\|^2.

    Backward: :math:`\\delta_{L-1} = \\tfrac{2}{P d_{out}} (\\hat y - y)`, and for hidden layers
    :math:`\\delta_l = (\\delta_{l+1} W_{l+1}) \\odot \\omega_0 \\cos a_l`; then
    :math:`\\partial W_l = \\delta_l^\\top h_l`, :math:`\\partial b_l = \\sum_p \\delta_l`.

    ``grid=(H, W)`` says that ``x`` is :func:`image_coordinates` ``(H, W)``: the first layer's
    argument then separates, :math:`a_0(r, c) = A(c) + B(r)` with :math:`A = \\omega_0(W_{0,:,0} x_c + b_0)`,
    :math:`B = \\omega_0 W_{0,:,1} y_r`, and :math:`\\sin a_0 = \\sin A \\cos B + \\cos A \\sin B`,
    :math:`\\cos a_0 = \\cos A \\cos B - \\sin A \\sin B` need transcendentals on ``H + W`` values
    instead of ``H W`` (the most expensive pass of a step; the identity is also more accurate in
    float32 than ``sin`` of the large rounded argument).

    Returns
    -------
    callable
        ``params -> (losses [n], grads [n, D])`` with ``grads`` flattened in the key order
        ``W0, b0, W1, b1, ...`` (the layout :func:`train_stacked` uses).
    """
    if x.dim() != 2 or y.dim() != 3 or y.shape[1] != x.shape[0]:
        raise ValueError(f"need x [P, in] and y [n, P, out] with the same P; got {tuple(x.shape)}, {tuple(y.shape)}")
    if grid is not None:
        H, Wd = grid
        if x.shape != (H * Wd, 2) or not torch.equal(x, image_coordinates(H, Wd).to(x)):
            raise ValueError(f"grid={grid} needs x = image_coordinates{grid} [{H * Wd}, 2]; got {tuple(x.shape)}")
        xs, ys = x[:Wd, 0], x[::Wd, 1]
    P, d_out = y.shape[1], y.shape[2]
    scale = 2.0 / (P * d_out)
    y_shift = y - output_offset if output_offset else y

    def fn(p: Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
        n = y.shape[0]
        L = len(p) // 2
        if L < 2:
            raise ValueError("a SIREN needs at least one hidden (sine) layer")
        # omega0 is folded into the (small) weights once, saving full passes over the activations:
        # a_l = h_l (w W_l)^T + w b_l, and with delta_l = dL/d(h_l W_l^T + b_l):
        # delta_{l-1} = (delta_l (w W_l)) * cos(a_{l-1}).
        wW = [p[f"W{l}"] * omega0 for l in range(L)]
        w1, d_in = wW[0].shape[1], wW[0].shape[2]
        # layer 0 (shared inputs) in pixel-major layout [P, n, w1]
        if grid is None:  # ONE GEMM for all networks
            a0 = torch.addmm((p["b0"] * omega0).reshape(-1), x, wW[0].reshape(n * w1, d_in).t()).view(P, n, w1)
            s0, c0 = torch.sin(a0), a0.cos_()
        else:  # separable: a0[r, c] = A[c] + B[r]
            A = torch.addmm((p["b0"] * omega0).reshape(1, -1), xs[:, None], wW[0][:, :, 0].reshape(1, -1))
            B = ys[:, None] * wW[0][:, :, 1].reshape(1, -1)
            sA, cA = torch.sin(A).view(1, Wd, n, w1), torch.cos(A).view(1, Wd, n, w1)
            sB, cB = torch.sin(B).view(H, 1, n, w1), torch.cos(B).view(H, 1, n, w1)
            s0 = torch.mul(sA, cB).addcmul_(cA, sB).view(P, n, w1)
            c0 = torch.mul(cA, cB).addcmul_(sA, sB, value=-1.0).view(P, n, w1)
        hs: list[Tensor] = [x, s0.transpose(0, 1)]  # layer inputs, as [n, P, w] views
        cs: list[Tensor] = [c0]  # cos(a_l); cs[0] is pixel-major
        for l in range(1, L - 1):
            a = torch.baddbmm((p[f"b{l}"] * omega0).unsqueeze(1), hs[l], wW[l].transpose(1, 2))
            hs.append(torch.sin(a))
            cs.append(a.cos_())
        W, b = p[f"W{L - 1}"], p[f"b{L - 1}"]
        r = torch.baddbmm(b.unsqueeze(1), hs[L - 1], W.transpose(1, 2)).sub_(y_shift)
        losses = r.square().mean(dim=(1, 2))
        d = r.mul_(scale)
        grads: list[Tensor] = [torch.empty(0)] * (2 * L)
        for l in range(L - 1, 0, -1):
            grads[2 * l] = torch.bmm(d.transpose(1, 2), hs[l]).reshape(n, -1)
            grads[2 * l + 1] = d.sum(dim=1)
            # d/dz of sin(w z) brings one factor w, folded into W_l; one output => a broadcast product
            back = torch.mul(d, wW[l]) if d.shape[2] == 1 else torch.bmm(d, wW[l])
            if l > 1:
                d = back.mul_(cs[l - 1])
            else:
                d = torch.mul(cs[0], back.transpose(0, 1))  # pixel-major [P, n, w1]
        # layer 0: dW0 = delta_0^T x for all networks as ONE GEMM; db0 = sum over pixels
        gW0 = torch.mm(x.t(), d.view(P, n * w1)).view(d_in, n, w1).permute(1, 2, 0)
        grads[0] = gW0.reshape(n, -1)
        grads[1] = d.sum(dim=0)
        return losses, torch.cat(grads, dim=1)

    return fn


_AUTO_BATCH: dict[tuple, int] = {}


def auto_batch_size(
    n_points: int,
    sizes: Sequence[int],
    *,
    candidates: Sequence[int] = (8, 16, 32, 64, 128),
    steps: int = 4,
    omega0: float = 30.0,
    grid: tuple[int, int] | None = None,
) -> int:
    """Fastest SIREN-fitting batch size on this machine, measured (and remembered per process).

    Activations are ``[batch, P, width]``; they must stay in cache, so the best batch is a machine
    property. Each candidate trains ``steps`` Adam steps on random targets; the one with the highest
    network-steps/s wins (per CPU-second with one torch thread, per wall-second otherwise).
    """
    key = (int(n_points), tuple(int(s) for s in sizes), torch.get_num_threads(), tuple(candidates), grid)
    if key in _AUTO_BATCH:
        return _AUTO_BATCH[key]
    x = (
        image_coordinates(*grid)
        if grid is not None
        else torch.rand(int(n_points), int(sizes[0]), generator=torch.Generator().manual_seed(2)) * 2 - 1
    )
    # one thread: CPU time of this process (robust to other jobs on a shared machine); else wall time
    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    best, best_rate = candidates[0], -1.0
    for c in candidates:
        p = init_mlp(c, sizes, scheme="siren", omega0=omega0, generator=torch.Generator().manual_seed(0))
        y = torch.rand(c, x.shape[0], sizes[-1], generator=torch.Generator().manual_seed(1))
        vg = siren_mse_value_and_grad(x, y, omega0, grid=grid)
        train_stacked(p, None, steps=1, value_and_grad=vg, lr=1e-4)  # warm-up
        t0 = clock()
        train_stacked(p, None, steps=steps, value_and_grad=vg, lr=1e-4)
        rate = c * steps / (clock() - t0)
        if rate > best_rate:
            best, best_rate = c, rate
    _AUTO_BATCH[key] = best
    log.info("auto_batch_size(P=%d, sizes=%s) = %d (%.0f network-steps/s)", n_points, sizes, best, best_rate)
    return best


def fit_sirens(
    x: Tensor,
    y: Tensor,
    spec: MLPSpec,
    *,
    init: str,
    seeds: Sequence[int],
    steps: int,
    snapshot_steps: Sequence[int],
    lr: float,
    weight_decay: float = 0.0,
    stop_loss: float | None = None,
    batch_size: int | None = None,
    snapshot_dtype: torch.dtype = torch.float32,
    fused: bool = True,
    desc: str | None = None,
    device: str | torch.device | None = None,
    grid: tuple[int, int] | None = None,
) -> dict[str, Tensor]:
    """Fit one SIREN per target ``y [n, P, out]`` on shared inputs ``x [P, in]`` with Adam.

    Networks are processed in batches of ``batch_size`` (default :func:`auto_batch_size`); a network
    stops (and is frozen) once its MSE is ``<= stop_loss``. Returns ``{"W0": [n, T, ...], ...,
    "final_loss": [n], "stopped_at": [n]}`` (on the CPU). On a GPU (``device="cuda"``) the whole
    target set is one batch unless ``batch_size`` says otherwise; inits are drawn on the CPU, so
    they are identical on every device.
    """
    n = y.shape[0]
    if len(seeds) != n:
        raise ValueError(f"need one seed per target ({n}); got {len(seeds)}")
    dev = torch.device(device) if device is not None else x.device
    x, y = x.to(dev), y.to(dev)
    if batch_size is None:
        if dev.type != "cpu":
            batch_size = n
        else:
            batch_size = auto_batch_size(x.shape[0], spec.sizes, omega0=spec.omega0 or 30.0, grid=grid) if fused else 64
    out: dict[str, list[Tensor]] = {}
    for s in range(0, n, batch_size):
        e = min(s + batch_size, n)
        p = {
            k: v.to(dev)
            for k, v in init_mlp(e - s, spec.sizes, scheme=init, omega0=spec.omega0 or 30.0, seeds=seeds[s:e]).items()
        }
        yb = y[s:e]
        stop_fn = None
        if stop_loss is not None:
            thr = float(stop_loss)
            stop_fn = lambda q, losses, thr=thr: losses <= thr  # noqa: E731
        if fused:
            vg = siren_mse_value_and_grad(x, yb, spec.omega0 or 30.0, spec.output_offset, grid=grid)
            res = train_stacked(
                p,
                None,
                steps=steps,
                lr=lr,
                weight_decay=weight_decay,
                value_and_grad=vg,
                snapshot_steps=snapshot_steps,
                stop_fn=stop_fn,
                snapshot_dtype=snapshot_dtype,
                desc=desc,
            )
        else:

            def loss_fn(q: dict[str, Tensor], yb: Tensor = yb) -> Tensor:
                return (spec.forward(q, x) - yb).square().mean(dim=(1, 2))

            res = train_stacked(
                p,
                loss_fn,
                steps=steps,
                lr=lr,
                weight_decay=weight_decay,
                snapshot_steps=snapshot_steps,
                stop_fn=stop_fn,
                snapshot_dtype=snapshot_dtype,
                desc=desc,
            )
        for k, v in res.snapshots.items():
            out.setdefault(k, []).append(v)
        out.setdefault("final_loss", []).append(res.losses.cpu())
        out.setdefault("stopped_at", []).append(res.stopped_at.cpu())
    return {k: torch.cat(v) for k, v in out.items()}


# --------------------------------------------------------------------------------------------
# INR image zoo
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class INRZooConfig(Preset):
    """One SIREN INR per image (DWSNets / NFN protocol; REFERENCE §1). Smoke values are the defaults."""

    n_images: int = 200  # INRs in the zoo (one per image); paper: every image of the dataset
    split: str = "all"  # "train", "test" or "all" (train then test) images of the dataset
    hidden: tuple[int, ...] = (32, 32)  # hidden widths; 2 -> 32 -> 32 -> 1 as DWSNets/NFN
    omega0: float = 30.0  # SIREN frequency (DWSNets/NFN: 30)
    init: str = "siren"  # "siren" (standard, NFN) | "siren_dwsnets" (DWSNets variant, +0.5 output)
    shared_init: bool = False  # every INR starts from one initialisation (seeded by ``seed``); False:
    # network i gets its own (NFN / DWSNets protocol)
    lr: float = 5e-4  # Adam learning rate (DWSNets: 5e-4)
    steps: int = 150  # Adam steps per INR (DWSNets: 1,000)
    T: int = 6  # snapshots per INR (paper: 80-100)
    schedule: str = "uniform"  # snapshot spacing: "uniform" | "log"
    stop_psnr: float | None = None  # freeze an INR once its PSNR >= this (DWSNets: 40 dB); None = never
    snapshot_dtype: str = "float32"  # storage of the snapshots: "float32" | "float16"
    chunk_size: int = 256  # networks per resumable chunk file
    seed: int = 0  # base seed: network i uses seed * 1_000_003 + i
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium, measured on MNIST (1 thread): 100 steps = 19.6 CPU-s per 256 INRs (~6.4 CPU-min per
        # 5k), median PSNR 27.6 dB; steps=200 gives 36 dB for ~17 CPU-min
        "medium": {"n_images": 5000, "steps": 100, "T": 20},
        "paper": {"n_images": 70000, "steps": 1000, "T": 100},
    }


def _load_inr_images(dataset: str, cfg: INRZooConfig, data_dir: str | None) -> tuple[Tensor, Tensor, str]:
    from hgutils.data import load_images

    if cfg.split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all'; got {cfg.split!r}")
    splits = ["train", "test"] if cfg.split == "all" else [cfg.split]
    imgs, labels, sources = [], [], []
    need = cfg.n_images
    for sp in splits:
        if need <= 0:
            break
        d = load_images(dataset, split=sp, data_dir=data_dir, limit=None, seed=cfg.seed)
        if d.images.shape[0] > need:
            d = load_images(dataset, split=sp, data_dir=data_dir, limit=need, seed=cfg.seed)
        imgs.append(d.images)
        labels.append(d.labels)
        sources.append(d.source)
        need -= d.images.shape[0]
    images = torch.cat(imgs)
    if images.shape[0] < cfg.n_images:
        raise ValueError(f"{dataset} ({cfg.split}) has {images.shape[0]} images; n_images={cfg.n_images} requested")
    return images, torch.cat(labels), "; ".join(sources)


def inr_image_zoo(
    dataset: str,
    config: INRZooConfig | None = None,
    *,
    scale: str = "smoke",
    data_dir: str | None = None,
    cache: bool = True,
    cache_root: str | Path | None = None,
    device: str | torch.device = "cpu",
    **overrides: Any,
) -> Zoo:
    """A zoo of SIREN INRs, one per image of ``dataset``, with ``T`` snapshots of each fit.

    Each INR maps pixel coordinates ``(x, y) in [-1, 1]^2`` to intensity (``C`` outputs for ``C``
    channels), trained full-batch with Adam on the MSE. ``meta``: ``label`` (image class),
    ``index`` (image index), ``final_loss``, ``psnr`` (dB, of the final INR), ``stopped_at``.

    Parameters
    ----------
    dataset
        ``"mnist"``, ``"fashion_mnist"``, ``"digits"`` (smoke) or ``"cifar10"`` (3 outputs).
    config
        An :class:`INRZooConfig`; default ``INRZooConfig.from_scale(scale, **overrides)``.
    cache
        Store/reuse the zoo under ``cache_root`` (default :func:`hgutils.repro.cache_dir`).
    device
        Where to train (``"cuda"`` for paper scale); the zoo is returned on the CPU. The device type
        is part of the cache key (GPU arithmetic differs in the last bits).
    """
    from hgutils.data.images import IMAGE_DATASETS

    if dataset not in IMAGE_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {IMAGE_DATASETS}")
    cfg = config if config is not None else INRZooConfig.from_scale(scale, **overrides)
    if cfg.init not in ("siren", "siren_dwsnets"):
        raise ValueError(f"init must be 'siren' or 'siren_dwsnets'; got {cfg.init!r}")
    sched = snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)
    sdtype = _dtype(cfg.snapshot_dtype)
    images, labels, source = _load_inr_images(dataset, cfg, data_dir)
    C, H, W = images.shape[1:]
    spec = MLPSpec((2, *cfg.hidden, C), "sine", cfg.omega0, 0.5 if cfg.init == "siren_dwsnets" else 0.0)
    x = image_coordinates(H, W)
    targets = images.flatten(2).transpose(1, 2)  # [n, H*W, C]
    stop_loss = None if cfg.stop_psnr is None else 10.0 ** (-cfg.stop_psnr / 10.0)
    dev = torch.device(device)
    key = {"dataset": dataset, "config": cfg, "source": source, "version": 2, "device": dev.type}

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        seeds = net_seeds(cfg.seed, 0, 1) * (stop - start) if cfg.shared_init else net_seeds(cfg.seed, start, stop)
        return fit_sirens(
            x,
            targets[start:stop],
            spec,
            init=cfg.init,
            seeds=seeds,
            steps=cfg.steps,
            snapshot_steps=sched,
            lr=cfg.lr,
            stop_loss=stop_loss,
            snapshot_dtype=sdtype,
            device=dev,
            grid=(H, W),
        )

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "inr_zoo",
            key,
            cfg.n_images,
            cfg.chunk_size,
            chunk,
            root=cache_root,
            desc=f"INR zoo {dataset}",
            persist=cache,
        )

    out = _cached_zoo("inr_zoo", key, build, cache_root, cache)
    params = {k: out[k] for k in (f"{p}{l}" for l in range(spec.n_layers) for p in "Wb")}
    meta = {
        "label": labels[: cfg.n_images].clone(),
        "index": torch.arange(cfg.n_images),
        "final_loss": out["final_loss"],
        "psnr": psnr(out["final_loss"]),
        "stopped_at": out["stopped_at"],
    }
    return Zoo(
        spec,
        params,
        torch.tensor(sched, dtype=torch.int64),
        meta,
        {"kind": "inr", "dataset": dataset, "source": source, "config": cfg.to_dict(), "image_shape": (C, H, W)},
    )


def inr_reconstruct(zoo: Zoo, t: int = -1) -> Tensor:
    """Images rendered by the INRs of ``zoo`` at snapshot ``t``: ``[N, C, H, W]``."""
    if zoo.info.get("kind") != "inr":
        raise ValueError("inr_reconstruct needs an INR zoo")
    C, H, W = zoo.info["image_shape"]
    out = zoo.spec.forward(zoo.at(t), image_coordinates(H, W))
    return out.transpose(1, 2).reshape(len(zoo), C, H, W)


# --------------------------------------------------------------------------------------------
# sine zoo (DWSNets self-supervised task)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SineZooConfig(Preset):
    """SIRENs fitting ``a sin(b x)`` (DWSNets protocol, REFERENCE §1). Smoke values are the defaults."""

    n_nets: int = 128  # INRs in the zoo (DWSNets: test 1,000 / val 1,000 / rest train)
    n_points: int = 200  # x grid on [-pi, pi) (DWSNets: 2,000 points)
    a_range: tuple[float, float] = (0.0, 10.0)  # amplitude a ~ U(a_range) (DWSNets: U(0, 10))
    b_range: tuple[float, float] = (0.0, 10.0)  # frequency b ~ U(b_range) (DWSNets: U(0, 10))
    hidden: tuple[int, ...] = (32, 32)  # 1 -> 32 -> 32 -> 1 as DWSNets
    omega0: float = 30.0  # SIREN frequency (DWSNets: 30)
    init: str = "siren_dwsnets"  # DWSNets INR init (+0.5 output offset); "siren" = standard
    lr: float = 1e-3  # Adam learning rate (DWSNets: 1e-3)
    weight_decay: float = 1e-4  # Adam L2 (DWSNets: 1e-4)
    steps: int = 150  # full-batch epochs (DWSNets: up to 1,500)
    stop_loss: float | None = 1e-4  # freeze a net once its MSE <= this (DWSNets: 1e-4)
    T: int = 6  # snapshots per INR
    schedule: str = "uniform"  # "uniform" | "log"
    snapshot_dtype: str = "float32"  # "float32" | "float16"
    chunk_size: int = 256  # networks per resumable chunk file
    seed: int = 0  # base seed (init of net i and its (a, b) depend only on seed, i)
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        # medium, measured (1 thread): 18.2 CPU-s per 128 nets (~4.7 CPU-min for 2,000), median MSE 1.3e-3;
        # (1000 points, 500 steps) costs ~16 CPU-min
        "medium": {"n_nets": 2000, "n_points": 500, "steps": 300, "T": 20},
        "paper": {"n_nets": 10000, "n_points": 2000, "steps": 1500, "T": 100},
    }


def sine_targets(n_points: int) -> Tensor:
    """The DWSNets grid: ``n_points`` points ``-pi + 2 pi k / n_points`` on ``[-pi, pi)``, as ``[P, 1]``."""
    return (-math.pi + 2 * math.pi * torch.arange(n_points, dtype=torch.float64) / n_points).float()[:, None]


def sine_zoo(
    config: SineZooConfig | None = None,
    *,
    scale: str = "smoke",
    cache: bool = True,
    cache_root: str | Path | None = None,
    device: str | torch.device = "cpu",
    **overrides: Any,
) -> Zoo:
    """A zoo of SIRENs fitting :math:`a \\sin(b x)`; ``meta["target"] = (a, b)`` ``[N, 2]``.

    Also in ``meta``: ``final_loss``, ``stopped_at``. ``a`` and ``b`` of network ``i`` are drawn from a
    generator seeded with the network's seed, so they do not depend on the chunking. ``device``
    as in :func:`inr_image_zoo`.
    """
    cfg = config if config is not None else SineZooConfig.from_scale(scale, **overrides)
    sched = snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)
    sdtype = _dtype(cfg.snapshot_dtype)
    if cfg.init not in ("siren", "siren_dwsnets"):
        raise ValueError(f"init must be 'siren' or 'siren_dwsnets'; got {cfg.init!r}")
    spec = MLPSpec((1, *cfg.hidden, 1), "sine", cfg.omega0, 0.5 if cfg.init == "siren_dwsnets" else 0.0)
    x = sine_targets(cfg.n_points)
    dev = torch.device(device)
    key = {"config": cfg, "version": 1, "device": dev.type}

    def ab(start: int, stop: int) -> Tensor:
        out = []
        for s in net_seeds(cfg.seed, start, stop):
            g = torch.Generator().manual_seed(s + 7_777_777)
            u = torch.rand(2, generator=g, dtype=torch.float64)
            out.append(
                torch.stack(
                    [
                        cfg.a_range[0] + (cfg.a_range[1] - cfg.a_range[0]) * u[0],
                        cfg.b_range[0] + (cfg.b_range[1] - cfg.b_range[0]) * u[1],
                    ]
                )
            )
        return torch.stack(out).float()

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        target = ab(start, stop)
        y = target[:, 0, None, None] * torch.sin(target[:, 1, None, None] * x.unsqueeze(0))
        out = fit_sirens(
            x,
            y,
            spec,
            init=cfg.init,
            seeds=net_seeds(cfg.seed, start, stop),
            steps=cfg.steps,
            snapshot_steps=sched,
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            stop_loss=cfg.stop_loss,
            snapshot_dtype=sdtype,
            device=dev,
        )
        out["target"] = target
        return out

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "sine_zoo", key, cfg.n_nets, cfg.chunk_size, chunk, root=cache_root, desc="sine zoo", persist=cache
        )

    out = _cached_zoo("sine_zoo", key, build, cache_root, cache)
    params = {k: out[k] for k in (f"{p}{l}" for l in range(spec.n_layers) for p in "Wb")}
    meta = {"target": out["target"], "final_loss": out["final_loss"], "stopped_at": out["stopped_at"]}
    return Zoo(
        spec, params, torch.tensor(sched, dtype=torch.int64), meta, {"kind": "sine", "config": cfg.to_dict(), "x": x}
    )


# --------------------------------------------------------------------------------------------
# classifier zoo (Small CNN Zoo recipe, or MLPs)
# --------------------------------------------------------------------------------------------
#: Small CNN Zoo checkpoint epochs (Unterthiner et al. 2020): 86 epochs, these 9 checkpoints.
CNN_ZOO_EPOCHS: tuple[int, ...] = (0, 1, 2, 3, 20, 40, 60, 80, 86)


@dataclass(frozen=True)
class ClassifierZooConfig(Preset):
    """Small classifiers with sampled hyperparameters; the label is the test accuracy.

    Hyperparameter ranges follow the Small CNN Zoo (Unterthiner et al. 2020, "Predicting Neural
    Network Accuracy from Weights", arXiv:2002.11448, §3 / App. A): learning rate log-U[5e-4, 5e-2],
    L2 log-U[1e-8, 1e-2], dropout U[0, 0.7], init std log-U[1e-3, 0.5], train fraction in
    {0.1, 0.25, 0.5, 1.0}, activation and optimizer from a list, init normal/uniform. (The ranges are
    as stated in that paper; the companion's REFERENCE lists the fields only. Its optimizer list also
    has RMSProp, which this trainer does not implement: Adam and SGD are sampled.) Smoke values are
    the defaults.
    """

    arch: str = "mlp"  # "mlp" (GTH-GMN is MLP-only) | "cnn" (Small CNN Zoo: 3 conv x 16, GAP, dense)
    n_nets: int = 64  # classifiers in the zoo (Small CNN Zoo: 30k)
    image_size: int = 8  # inputs average-pooled to image_size x image_size, grayscale
    hidden: tuple[int, ...] = (32, 32)  # MLP hidden widths (arch="mlp")
    channels: int = 16  # CNN channels (Small CNN Zoo: 16)
    n_train: int = 1000  # training pool (each net uses train_fraction of it)
    n_test: int = 300  # test images for the accuracy label
    steps: int = 300  # SGD/Adam steps (minibatches)
    batch_size: int = 32  # minibatch size
    T: int = 6  # snapshots; schedule "cnn_zoo" uses the 9 Small-CNN-Zoo epochs
    schedule: str = "uniform"  # "uniform" | "log" | "cnn_zoo" (epochs 0,1,2,3,20,40,60,80,86 scaled)
    lr_range: tuple[float, float] = (5e-4, 5e-2)  # log-uniform
    l2_range: tuple[float, float] = (1e-8, 1e-2)  # log-uniform, L2 penalty on the weights
    dropout_range: tuple[float, float] = (0.0, 0.7)  # uniform, after each hidden activation
    init_std_range: tuple[float, float] = (1e-3, 0.5)  # log-uniform, weight init std (biases 0)
    train_fractions: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0)
    activations: tuple[str, ...] = ("relu", "tanh")
    optimizers: tuple[str, ...] = ("adam", "sgd")
    w_inits: tuple[str, ...] = ("normal", "uniform")
    snapshot_dtype: str = "float32"
    chunk_size: int = 256
    seed: int = 0
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {"n_nets": 2000, "n_train": 4000, "n_test": 1000, "steps": 1000, "T": 9, "schedule": "cnn_zoo"},
        "paper": {
            "n_nets": 30000,
            "image_size": 32,
            "n_train": 50000,
            "n_test": 10000,
            "steps": 20000,
            "T": 9,
            "schedule": "cnn_zoo",
        },
    }


def _classifier_schedule(cfg: ClassifierZooConfig) -> list[int]:
    if cfg.schedule == "cnn_zoo":
        if cfg.T != len(CNN_ZOO_EPOCHS):
            raise ValueError(f"schedule 'cnn_zoo' has {len(CNN_ZOO_EPOCHS)} snapshots; got T={cfg.T}")
        s = [round(e * cfg.steps / CNN_ZOO_EPOCHS[-1]) for e in CNN_ZOO_EPOCHS]
        if len(set(s)) != len(s):
            raise ValueError(f"steps={cfg.steps} too few to separate the Small CNN Zoo epochs")
        return s
    return snapshot_schedule(cfg.steps, cfg.T, cfg.schedule)


def _sample_hparams(cfg: ClassifierZooConfig, start: int, stop: int) -> dict[str, Tensor]:
    def logu(u: Tensor, r: tuple[float, float]) -> Tensor:
        return torch.exp(math.log(r[0]) + u * (math.log(r[1]) - math.log(r[0])))

    rows = []
    for s in net_seeds(cfg.seed, start, stop):
        g = torch.Generator().manual_seed(s + 3_333_333)
        u = torch.rand(4, generator=g, dtype=torch.float64)
        c = [
            int(torch.randint(n, (1,), generator=g))
            for n in (len(cfg.train_fractions), len(cfg.activations), len(cfg.optimizers), len(cfg.w_inits))
        ]
        rows.append(
            (
                logu(u[0], cfg.lr_range),
                logu(u[1], cfg.l2_range),
                cfg.dropout_range[0] + u[2] * (cfg.dropout_range[1] - cfg.dropout_range[0]),
                logu(u[3], cfg.init_std_range),
                cfg.train_fractions[c[0]],
                *c[1:],
            )
        )
    cols = list(zip(*rows))
    return {
        "lr": torch.tensor(cols[0]).float(),
        "l2": torch.tensor(cols[1]).float(),
        "dropout": torch.tensor(cols[2]).float(),
        "init_std": torch.tensor(cols[3]).float(),
        "train_fraction": torch.tensor(cols[4]).float(),
        "activation": torch.tensor(cols[5]),
        "optimizer": torch.tensor(cols[6]),
        "w_init": torch.tensor(cols[7]),
    }


def _shapes(cfg: ClassifierZooConfig, spec: MLPSpec | CNNSpec) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    if isinstance(spec, MLPSpec):
        s = spec.sizes
        return [((s[l + 1], s[l]), (s[l + 1],)) for l in range(len(s) - 1)]
    k, C = spec.kernel, spec.channels
    convs = [((C, spec.in_channels if l == 0 else C, k, k), (C,)) for l in range(spec.n_conv)]
    return convs + [((spec.n_classes, C), (spec.n_classes,))]


def _init_classifiers(
    cfg: ClassifierZooConfig, spec: MLPSpec | CNNSpec, hp: dict[str, Tensor], seeds: list[int]
) -> dict[str, Tensor]:
    shapes = _shapes(cfg, spec)
    out: dict[str, list[Tensor]] = {}
    for i, s in enumerate(seeds):
        g = torch.Generator().manual_seed(s)
        std = float(hp["init_std"][i])
        uniform = cfg.w_inits[int(hp["w_init"][i])] == "uniform"
        for l, (ws, bs) in enumerate(shapes):
            w = (
                (torch.rand(ws, generator=g) * 2 - 1) * (std * math.sqrt(3.0))
                if uniform
                else torch.randn(ws, generator=g) * std
            )
            out.setdefault(f"W{l}", []).append(w)
            out.setdefault(f"b{l}", []).append(torch.zeros(bs))
    return {k: torch.stack(v) for k, v in out.items()}


def classifier_forward(
    spec: MLPSpec | CNNSpec,
    params: Mapping[str, Tensor],
    x: Tensor,
    activation: str | Sequence[str] | None = None,
    dropout: Tensor | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Logits ``[N, B, n_classes]`` of N stacked classifiers on per-network inputs ``x [N, B, C, H, W]``.

    MLPs flatten the image; CNNs run as one grouped convolution over all networks (``groups=N``).
    ``dropout`` (``[N]`` probabilities, training only) drops hidden activations (MLP) or the pooled
    features (CNN) with inverted scaling.
    """
    act_name = activation if isinstance(activation, str) else (spec.activation if activation is None else None)
    acts = None if act_name is not None else list(activation)  # per-network: handled by groups upstream
    if acts is not None:
        raise ValueError("classifier_forward takes one activation; group networks by activation")
    act = {"relu": torch.relu, "tanh": torch.tanh}.get(act_name)
    if act is None:
        raise ValueError(f"classifier activation must be 'relu' or 'tanh'; got {act_name!r}")
    N = params["W0"].shape[0]

    def drop(h: Tensor) -> Tensor:
        if dropout is None:
            return h
        p = dropout.view(N, *([1] * (h.dim() - 1))).to(h.dtype)
        keep = (torch.rand(h.shape, generator=generator, dtype=h.dtype) >= p).to(h.dtype)
        return h * keep / (1 - p)

    if isinstance(spec, MLPSpec):
        h = x.flatten(2)
        L = spec.n_layers
        for l in range(L):
            h = torch.baddbmm(params[f"b{l}"].unsqueeze(1), h, params[f"W{l}"].transpose(1, 2))
            if l < L - 1:
                h = drop(act(h))
        return h
    B = x.shape[1]
    h = x.transpose(0, 1).reshape(B, N * x.shape[2], *x.shape[3:])
    for l in range(spec.n_conv):
        W = params[f"W{l}"]
        h = torch.nn.functional.conv2d(
            h,
            W.reshape(N * W.shape[1], *W.shape[2:]),
            params[f"b{l}"].reshape(-1),
            stride=spec.stride,
            padding=spec.kernel // 2,
            groups=N,
        )
        h = act(h)
    feats = h.mean(dim=(2, 3)).view(B, N, spec.channels).transpose(0, 1)  # [N, B, C]
    feats = drop(feats)
    Wd, bd = params[f"W{spec.n_conv}"], params[f"b{spec.n_conv}"]
    return torch.baddbmm(bd.unsqueeze(1), feats, Wd.transpose(1, 2))


def _load_classifier_data(
    dataset: str, cfg: ClassifierZooConfig, data_dir: str | None
) -> tuple[Tensor, Tensor, Tensor, Tensor, str]:
    from hgutils.data import load_images

    def prep(d: Any) -> Tensor:
        x = d.images
        if x.shape[1] == 3:  # grayscale (ITU-R 601 luma), as the Small CNN Zoo's CIFAR10-GS
            x = (0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]).unsqueeze(1)
        if x.shape[-1] != cfg.image_size or x.shape[-2] != cfg.image_size:
            x = torch.nn.functional.adaptive_avg_pool2d(x, cfg.image_size)
        return x

    tr = load_images(dataset, split="train", data_dir=data_dir, limit=cfg.n_train, seed=cfg.seed)
    te = load_images(dataset, split="test", data_dir=data_dir, limit=cfg.n_test, seed=cfg.seed)
    if tr.images.shape[0] < cfg.n_train or te.images.shape[0] < cfg.n_test:
        raise ValueError(
            f"{dataset} has {tr.images.shape[0]} train / {te.images.shape[0]} test images; "
            f"n_train={cfg.n_train}, n_test={cfg.n_test} requested"
        )
    return prep(tr), tr.labels, prep(te), te.labels, f"{tr.source} | {te.source}"


def classifier_zoo(
    dataset: str,
    config: ClassifierZooConfig | None = None,
    *,
    scale: str = "smoke",
    data_dir: str | None = None,
    cache: bool = True,
    cache_root: str | Path | None = None,
    **overrides: Any,
) -> Zoo:
    """A zoo of small classifiers on ``dataset`` trained with sampled hyperparameters.

    ``meta``: ``test_acc`` (the label: accuracy of the final snapshot on ``n_test`` test images),
    ``train_acc``, ``final_loss``, and the hyperparameters ``lr``, ``l2``, ``dropout``, ``init_std``,
    ``train_fraction``, ``activation``/``optimizer``/``w_init`` (indices into ``info`` lists).
    Networks with the same (activation, optimizer) train together as one stacked batch.
    """
    from hgutils.data.images import IMAGE_DATASETS

    if dataset not in IMAGE_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {IMAGE_DATASETS}")
    cfg = config if config is not None else ClassifierZooConfig.from_scale(scale, **overrides)
    if cfg.arch not in ("mlp", "cnn"):
        raise ValueError(f"arch must be 'mlp' or 'cnn'; got {cfg.arch!r}")
    for a in cfg.activations:
        if a not in ("relu", "tanh"):
            raise ValueError(f"activations must be 'relu'/'tanh'; got {a!r}")
    for o in cfg.optimizers:
        if o not in ("adam", "sgd"):
            raise ValueError(f"optimizers must be 'adam'/'sgd'; got {o!r}")
    sched = _classifier_schedule(cfg)
    sdtype = _dtype(cfg.snapshot_dtype)
    xtr, ytr, xte, yte, source = _load_classifier_data(dataset, cfg, data_dir)
    n_classes = int(max(ytr.max(), yte.max())) + 1
    act0 = cfg.activations[0] if len(cfg.activations) == 1 else "mixed"
    spec: MLPSpec | CNNSpec
    if cfg.arch == "mlp":
        spec = MLPSpec((cfg.image_size**2, *cfg.hidden, n_classes), act0)
    else:
        spec = CNNSpec(in_channels=1, channels=cfg.channels, n_classes=n_classes, activation=act0)
    key = {"dataset": dataset, "config": cfg, "source": source, "version": 1}

    def chunk(start: int, stop: int) -> dict[str, Tensor]:
        hp = _sample_hparams(cfg, start, stop)
        p0 = _init_classifiers(cfg, spec, hp, net_seeds(cfg.seed, start, stop))
        n = stop - start
        out = {k: torch.empty((n, len(sched), *v.shape[1:]), dtype=sdtype) for k, v in p0.items()}
        final_loss, train_acc, test_acc = torch.empty(n), torch.empty(n), torch.empty(n)
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 999_999_937 + start)
        m_i = (hp["train_fraction"] * cfg.n_train).round().long().clamp_min(1)
        for a_i, act in enumerate(cfg.activations):
            for o_i, opt in enumerate(cfg.optimizers):
                idx = ((hp["activation"] == a_i) & (hp["optimizer"] == o_i)).nonzero().squeeze(1)
                if idx.numel() == 0:
                    continue
                n_g = idx.numel()
                perms = torch.stack([torch.randperm(cfg.n_train, generator=g) for _ in range(n_g)])
                m_g, l2_g, drop_g = m_i[idx], hp["l2"][idx], hp["dropout"][idx]
                pg = {k: v[idx] for k, v in p0.items()}
                wkeys = [k for k in pg if k.startswith("W")]

                def loss_fn(
                    q: dict[str, Tensor],
                    m_g: Tensor = m_g,
                    perms: Tensor = perms,
                    l2_g: Tensor = l2_g,
                    drop_g: Tensor = drop_g,
                    act: str = act,
                    n_g: int = n_g,
                    wkeys: list[str] = wkeys,
                ) -> Tensor:
                    r = (torch.rand(n_g, cfg.batch_size, generator=g) * m_g[:, None]).long()
                    bi = torch.gather(perms, 1, r)
                    logits = classifier_forward(spec, q, xtr[bi], act, drop_g, g)
                    ce = (
                        torch.nn.functional.cross_entropy(
                            logits.reshape(-1, n_classes), ytr[bi].reshape(-1), reduction="none"
                        )
                        .view(n_g, -1)
                        .mean(1)
                    )
                    return ce + l2_g * sum(q[k].square().flatten(1).sum(1) for k in wkeys)

                def eval_loss(q: dict[str, Tensor], act: str = act, n_g: int = n_g) -> Tensor:
                    logits = classifier_forward(spec, q, xtr.expand(n_g, *xtr.shape), act)
                    return (
                        torch.nn.functional.cross_entropy(
                            logits.reshape(-1, n_classes), ytr.repeat(n_g), reduction="none"
                        )
                        .view(n_g, -1)
                        .mean(1)
                    )

                res = train_stacked(
                    pg,
                    loss_fn,
                    steps=cfg.steps,
                    optimizer=opt,
                    lr=hp["lr"][idx],
                    snapshot_steps=sched,
                    final_loss_fn=eval_loss,
                    snapshot_dtype=sdtype,
                )
                for k in out:
                    out[k][idx] = res.snapshots[k]
                final_loss[idx] = res.losses.float()
                with torch.no_grad():
                    pr_tr = classifier_forward(spec, res.params, xtr.expand(n_g, *xtr.shape), act).argmax(-1)
                    pr_te = classifier_forward(spec, res.params, xte.expand(n_g, *xte.shape), act).argmax(-1)
                train_acc[idx] = (pr_tr == ytr).float().mean(1)
                test_acc[idx] = (pr_te == yte).float().mean(1)
        return {**out, **hp, "final_loss": final_loss, "train_acc": train_acc, "test_acc": test_acc}

    def build() -> dict[str, Tensor]:
        return generate_chunked(
            "classifier_zoo",
            key,
            cfg.n_nets,
            cfg.chunk_size,
            chunk,
            root=cache_root,
            desc=f"classifier zoo {dataset}",
            persist=cache,
        )

    out = _cached_zoo("classifier_zoo", key, build, cache_root, cache)
    pkeys = [f"{p}{l}" for l in range(spec.n_layers) for p in "Wb"]
    params = {k: out[k] for k in pkeys}
    meta = {k: v for k, v in out.items() if k not in pkeys}
    return Zoo(
        spec,
        params,
        torch.tensor(sched, dtype=torch.int64),
        meta,
        {
            "kind": "classifier",
            "dataset": dataset,
            "source": source,
            "config": cfg.to_dict(),
            "activations": list(cfg.activations),
            "optimizers": list(cfg.optimizers),
            "w_inits": list(cfg.w_inits),
        },
    )
