r"""A :class:`~hgutils.weightspace.zoo.containers.Zoo` from a researcher's own MLP checkpoints.

:func:`zoo_from_checkpoints` (also :meth:`Zoo.from_checkpoints`) takes ``N`` training trajectories,
each a sequence of ``T`` checkpoints of one MLP, and stacks them into the zoo layout every
meta-network, similarity measure and readout of the library reads:

.. math::
    \texttt{params["W}l\texttt{"]}[i, t] = W_l^{(i)}(s_t) \in \mathbb{R}^{d_{l+1}\times d_l},\qquad
    \texttt{params["b}l\texttt{"]}[i, t] = b_l^{(i)}(s_t) \in \mathbb{R}^{d_{l+1}},\qquad
    \texttt{steps}[t] = s_t,

where :math:`W_l^{(i)}(s_t)` is the weight of the ``l``-th linear layer (in the order the checkpoint
lists them) of network ``i`` after ``s_t`` training steps, and the zoo's
:class:`~hgutils.weightspace.zoo.containers.MLPSpec` computes the network they came from,

.. math::
    f^{(i)}_t(x) = W_{L-1}\,\sigma(\cdots\sigma(W_0 x + b_0)\cdots) + b_{L-1}
    \qquad(\text{no activation after the last layer}).

A checkpoint is one of

- a ``state_dict`` (any mapping of names to tensors): keys ``<layer>.weight`` ``[out, in]`` and
  ``<layer>.bias`` ``[out]`` in layer order, with any prefix (``0.weight``, ``net.2.bias``,
  ``fc1.weight``); a single ``nn.Linear``'s ``weight`` / ``bias`` also works;
- an ``nn.Sequential`` of ``nn.Linear`` layers separated by one kind of activation module
  (:data:`ACTIVATION_MODULES`; ``nn.Dropout``, ``nn.Identity`` and ``nn.Flatten`` are skipped), whose
  activation is read off the modules;
- any other ``nn.Module`` whose state holds only ``nn.Linear`` weights and biases in order (its
  activation must be given).

A trajectory may also be a single checkpoint (``T = 1``: the final networks only). The first
problem found is raised as one ``ValueError`` naming the offending key (or module), the trajectory
and the snapshot: a tensor that is not a Linear weight or bias (a convolution's 4-D weight, a
BatchNorm buffer), a missing bias, layers that do not chain, networks of different shapes,
trajectories of different lengths or steps, an unsupported or inconsistent activation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from hgutils.weightspace.stacked_mlp import ACTIVATIONS
from hgutils.weightspace.zoo.containers import Checkpoint, MLPSpec, Zoo, set_checkpoint_loader

__all__ = ["ACTIVATION_MODULES", "Checkpoint", "linear_layers", "sequential_activation", "zoo_from_checkpoints"]

#: The activation modules an ``nn.Sequential`` may hold, with the zoo's name for each
#: (:data:`hgutils.weightspace.stacked_mlp.ACTIVATIONS`; ``nn.GELU`` only with ``approximate="none"``).
ACTIVATION_MODULES: dict[type[nn.Module], str] = {nn.ReLU: "relu", nn.Tanh: "tanh", nn.GELU: "gelu"}

#: Modules of an ``nn.Sequential`` that leave a batch of vectors unchanged at evaluation.
_NEUTRAL: tuple[type[nn.Module], ...] = (nn.Dropout, nn.Identity, nn.Flatten)


@dataclass(frozen=True)
class _Layer:
    """One linear layer of a checkpoint: the keys it was read from and its tensors."""

    weight_key: str
    bias_key: str
    weight: Tensor
    bias: Tensor


def _where(traj: int, snap: int) -> str:
    return f"trajectory {traj}, snapshot {snap}"


def linear_layers(state: Mapping[str, Tensor], where: str = "checkpoint") -> list[_Layer]:
    """The linear layers of an MLP ``state_dict`` in order: ``<prefix>.weight [out, in]`` and
    ``<prefix>.bias [out]`` per layer, the layers ordered as their weights first appear, each
    layer's input width equal to the previous layer's output width.

    Raises ``ValueError`` naming the first key that breaks this (``where`` says which checkpoint).
    """
    if not isinstance(state, Mapping) or not state:
        raise ValueError(f"{where}: expected a non-empty state_dict (names -> tensors); got {type(state).__name__}")
    found: dict[str, dict[str, tuple[str, Tensor]]] = {}
    for key, value in state.items():
        prefix, _, leaf = str(key).rpartition(".")
        if leaf not in ("weight", "bias"):
            raise ValueError(
                f"{where}: key {key!r} is not a Linear weight or bias; an MLP checkpoint holds only "
                "'<layer>.weight' [out, in] and '<layer>.bias' [out] (no convolutions, norms or buffers)"
            )
        if not isinstance(value, Tensor) or not value.is_floating_point():
            raise ValueError(f"{where}: key {key!r} must be a floating-point tensor; got {type(value).__name__}")
        want = 2 if leaf == "weight" else 1
        if value.dim() != want:
            kind = "[out, in]" if leaf == "weight" else "[out]"
            raise ValueError(
                f"{where}: key {key!r} has shape {tuple(value.shape)}; a Linear {leaf} is {want}-D {kind} "
                "(convolutional and other layers are not supported)"
            )
        if not torch.isfinite(value).all():
            raise ValueError(f"{where}: key {key!r} holds non-finite values (a diverged run?)")
        found.setdefault(prefix, {})[leaf] = (str(key), value)
    layers: list[_Layer] = []
    for prefix, parts in found.items():
        dot = f"{prefix}." if prefix else ""
        for leaf in ("weight", "bias"):
            if leaf not in parts:
                raise ValueError(
                    f"{where}: key {dot + leaf!r} is missing; every layer needs a weight and a bias "
                    "(nn.Linear(..., bias=True))"
                )
        (wk, w), (bk, b) = parts["weight"], parts["bias"]
        if b.shape[0] != w.shape[0]:
            raise ValueError(f"{where}: key {bk!r} has {b.shape[0]} entries; {wk!r} has {w.shape[0]} outputs")
        if layers and w.shape[1] != layers[-1].weight.shape[0]:
            prev = layers[-1]
            raise ValueError(
                f"{where}: key {wk!r} takes {w.shape[1]} inputs but the previous layer {prev.weight_key!r} "
                f"gives {prev.weight.shape[0]} outputs; the layers must chain in the order listed"
            )
        layers.append(_Layer(wk, bk, w, b))
    return layers


def _flat_modules(seq: nn.Sequential, prefix: str = "") -> list[tuple[str, nn.Module]]:
    out: list[tuple[str, nn.Module]] = []
    for name, mod in seq.named_children():
        if isinstance(mod, nn.Sequential):
            out += _flat_modules(mod, f"{prefix}{name}.")
        else:
            out.append((f"{prefix}{name}", mod))
    return out


def sequential_activation(seq: nn.Sequential, where: str = "checkpoint") -> str:
    """The hidden activation of an MLP written as ``nn.Sequential``: ``Linear (act Linear)*`` with one
    kind of activation (:data:`ACTIVATION_MODULES`) between every two Linears and none after the last
    (``"identity"`` for a single Linear). Raises ``ValueError`` naming the first offending module."""
    names = ", ".join(f"nn.{m.__name__}" for m in ACTIVATION_MODULES)
    seen: list[tuple[str, str | None]] = []  # (module name, activation name or None for a Linear)
    for name, mod in _flat_modules(seq):
        if isinstance(mod, nn.Linear):
            seen.append((name, None))
        elif type(mod) in ACTIVATION_MODULES:
            if isinstance(mod, nn.GELU) and mod.approximate != "none":
                raise ValueError(
                    f"{where}: module {name!r} is nn.GELU(approximate={mod.approximate!r}); "
                    "only the exact GELU is supported"
                )
            seen.append((name, ACTIVATION_MODULES[type(mod)]))
        elif isinstance(mod, _NEUTRAL):
            continue
        else:
            kind = "layer" if any(True for _ in mod.parameters()) else "activation"
            raise ValueError(
                f"{where}: module {name!r} is nn.{type(mod).__name__}, an unsupported {kind}; an MLP zoo "
                f"holds nn.Linear layers and one of {names} between them"
            )
    if not seen or seen[0][1] is not None:
        first = seen[0][0] if seen else "(empty)"
        raise ValueError(f"{where}: the nn.Sequential must start with an nn.Linear; module {first!r} comes first")
    if seen[-1][1] is not None:
        raise ValueError(
            f"{where}: module {seen[-1][0]!r} is an activation after the last nn.Linear; a zoo's MLP has a "
            "linear output (apply the output nonlinearity in the loss)"
        )
    acts = {a for _, a in seen if a is not None}
    for (n0, a0), (n1, a1) in zip(seen, seen[1:]):
        if (a0 is None) == (a1 is None):
            what = "two nn.Linear" if a0 is None else "two activations"
            raise ValueError(
                f"{where}: modules {n0!r} and {n1!r} are {what} in a row; expected Linear, activation, Linear, ..."
            )
    if len(acts) > 1:
        raise ValueError(f"{where}: the nn.Sequential mixes activations {sorted(acts)}; a zoo's MLP has one")
    return acts.pop() if acts else "identity"


def _read(ckpt: Checkpoint, where: str) -> tuple[list[_Layer], str | None]:
    """Layers of one checkpoint and the activation it shows (``None`` for a state_dict / plain module)."""
    if isinstance(ckpt, nn.Module):
        act = sequential_activation(ckpt, where) if isinstance(ckpt, nn.Sequential) else None
        return linear_layers({k: v.detach() for k, v in ckpt.state_dict().items()}, where), act
    if isinstance(ckpt, Mapping):
        return linear_layers(ckpt, where), None
    raise ValueError(f"{where}: a checkpoint is a state_dict or an nn.Module; got {type(ckpt).__name__}")


def _trajectories(trajectories: Any) -> list[list[Checkpoint]]:
    if isinstance(trajectories, (Mapping, nn.Module)) or not isinstance(trajectories, Sequence):
        raise ValueError(
            "trajectories must be a list with one entry per network (a list of its checkpoints, or one "
            f"checkpoint); got {type(trajectories).__name__}"
        )
    if not trajectories:
        raise ValueError("trajectories is empty; give at least one network")
    out = []
    for i, tr in enumerate(trajectories):
        if isinstance(tr, (Mapping, nn.Module)):
            out.append([tr])
        elif isinstance(tr, Sequence) and len(tr) > 0:
            out.append(list(tr))
        else:
            raise ValueError(
                f"trajectory {i} must be a non-empty list of checkpoints or one checkpoint; got {tr!r:.80}"
            )
        if len(out[i]) != len(out[0]):
            raise ValueError(
                f"trajectory {i} has {len(out[i])} snapshots; trajectory 0 has {len(out[0])} "
                "(a zoo records every network at the same steps)"
            )
    return out


def _steps(steps: Any, n: int, T: int) -> Tensor:
    """One steps vector ``[T]``: ``None`` -> ``0..T-1``; shared steps; or per-trajectory steps that agree."""
    if steps is None:
        return torch.arange(T, dtype=torch.long)
    if isinstance(steps, Tensor):
        rows = [steps] if steps.dim() <= 1 else list(steps)
    else:
        steps = list(steps)
        nested = bool(steps) and all(isinstance(r, (Sequence, Tensor)) and not isinstance(r, str) for r in steps)
        rows = steps if nested else [steps]
    if len(rows) not in (1, n):
        raise ValueError(f"steps must be one list of {T} steps or one list per trajectory ({n}); got {len(rows)} lists")
    vecs = [torch.as_tensor(r).reshape(-1) for r in rows]
    first = vecs[0]
    for i, v in enumerate(vecs):
        if v.is_floating_point() and not torch.equal(v, v.round()):
            raise ValueError(f"steps must be whole numbers; got {v.tolist()}")
        if v.numel() != T:
            what = "steps" if len(vecs) == 1 else f"steps of trajectory {i}"
            raise ValueError(f"{what} list {v.numel()} steps; the trajectories have {T} snapshots")
        if not torch.equal(v.long(), first.long()):
            raise ValueError(
                f"trajectory {i} was recorded at steps {v.long().tolist()}; trajectory 0 at {first.long().tolist()} "
                "(a zoo holds one steps vector: record every network at the same steps)"
            )
    out = first.long()
    if T > 1 and not bool((out[1:] > out[:-1]).all()):
        raise ValueError(f"steps must increase strictly; got {out.tolist()}")
    return out


def zoo_from_checkpoints(
    trajectories: Sequence[Sequence[Checkpoint] | Checkpoint],
    steps: Sequence[int] | Sequence[Sequence[int]] | Tensor | None = None,
    *,
    activation: str | None = None,
    meta: Mapping[str, Any] | None = None,
    info: Mapping[str, Any] | None = None,
) -> Zoo:
    """Stack ``N`` trajectories of ``T`` MLP checkpoints into a :class:`Zoo` (module docstring: layout).

    Parameters
    ----------
    trajectories
        One entry per network: its checkpoints in training order (``state_dict`` s, ``nn.Sequential``
        s or ``nn.Module`` s holding only Linear layers), or a single checkpoint (``T = 1``).
    steps
        The training step of each snapshot: one list of ``T`` steps shared by all networks, one list
        per trajectory (they must agree), or ``None`` for ``0, 1, ..., T-1``.
    activation
        The hidden activation, one of :data:`~hgutils.weightspace.stacked_mlp.ACTIVATIONS`. Read off
        ``nn.Sequential`` checkpoints when not given (and checked against them when given); required
        for ``state_dict`` s and other modules.
    meta
        Per-network values (labels, final accuracies, seeds), each with first dimension ``N``.
    info
        Free-form details kept in ``zoo.info`` (the dataset, the training recipe).

    Returns
    -------
    Zoo
        ``params["W{l}"] [N, T, d_{l+1}, d_l]`` and ``params["b{l}"] [N, T, d_{l+1}]`` (float32, CPU),
        ``steps [T]``, ``spec = MLPSpec(sizes=(d_0, ..., d_L), activation)``; ``info["layer_keys"]``
        lists the ``(weight, bias)`` keys each layer was read from (first network, first snapshot).
    """
    trajs = _trajectories(trajectories)
    n, T = len(trajs), len(trajs[0])
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}")
    ref: list[_Layer] | None = None
    acts: dict[str, str] = {}
    weights: list[list[list[Tensor]]] = []  # [layer][network][snapshot], then W and b interleaved
    for i, tr in enumerate(trajs):
        for t, ckpt in enumerate(tr):
            where = _where(i, t)
            layers, act = _read(ckpt, where)
            if act is not None:
                acts.setdefault(act, where)
                if activation is not None and act != activation:
                    raise ValueError(f"{where}: the nn.Sequential uses {act!r} but activation={activation!r} was given")
            if ref is None:
                ref = layers
                weights = [[[] for _ in range(n)] for _ in range(2 * len(ref))]
            elif len(layers) != len(ref):
                raise ValueError(
                    f"{where}: {len(layers)} linear layers (last key {layers[-1].weight_key!r}); "
                    f"{_where(0, 0)} has {len(ref)} (last key {ref[-1].weight_key!r}): networks of different shapes"
                )
            for l, (got, want) in enumerate(zip(layers, ref)):
                if got.weight.shape != want.weight.shape:
                    raise ValueError(
                        f"{where}: key {got.weight_key!r} has shape {tuple(got.weight.shape)}; layer {l} of "
                        f"{_where(0, 0)} ({want.weight_key!r}) has {tuple(want.weight.shape)}: "
                        "networks of different shapes"
                    )
                weights[2 * l][i].append(got.weight.detach().to("cpu", torch.float32))
                weights[2 * l + 1][i].append(got.bias.detach().to("cpu", torch.float32))
    assert ref is not None
    if len(acts) > 1:
        (a0, w0), (a1, w1) = list(acts.items())[:2]
        raise ValueError(f"{w1}: the nn.Sequential uses {a1!r}; {w0} uses {a0!r}: networks with different activations")
    act_name = activation if activation is not None else next(iter(acts), None)
    if act_name is None and len(ref) == 1:
        act_name = "identity"  # a single linear layer has no hidden activation
    if act_name is None:
        raise ValueError(
            "activation is required: a state_dict does not say which nonlinearity sits between the layers; "
            f"pass activation= one of {ACTIVATIONS} (or give nn.Sequential checkpoints)"
        )
    params = {}
    for l in range(len(ref)):
        params[f"W{l}"] = torch.stack([torch.stack(s) for s in weights[2 * l]])
        params[f"b{l}"] = torch.stack([torch.stack(s) for s in weights[2 * l + 1]])
    sizes = (ref[0].weight.shape[1], *(layer.weight.shape[0] for layer in ref))
    meta_t = {}
    for k, v in (meta or {}).items():
        tv = torch.as_tensor(v)
        if tv.dim() == 0 or tv.shape[0] != n:
            raise ValueError(
                f"meta[{k!r}] must have one value per network (first dimension {n}); got shape {tuple(tv.shape)}"
            )
        meta_t[k] = tv
    details = {"source": "checkpoints", "layer_keys": [(x.weight_key, x.bias_key) for x in ref], **dict(info or {})}
    return Zoo(MLPSpec(sizes, act_name), params, _steps(steps, n, T), meta_t, details)


set_checkpoint_loader(zoo_from_checkpoints)  # Zoo.from_checkpoints calls it (containers' docstring)
