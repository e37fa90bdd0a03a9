r"""The linear layers of one MLP checkpoint, in the order its network applies them.

:func:`~hgutils.weightspace.zoo.checkpoints.zoo_from_checkpoints` reads every checkpoint through
:func:`read_checkpoint`:

- a ``state_dict`` has no ``forward()``: its layers are read in the order its keys list them
  (:func:`linear_layers`), and layers that do not chain in that order (each layer's input width the
  previous layer's output width) are refused, naming the keys;
- an ``nn.Sequential`` applies its modules in the order it lists them: ``Linear (act Linear)*`` with
  one kind of activation (:func:`sequential_activation`);
- any other ``nn.Module`` may register its layers in any order (``self.fc2`` before ``self.fc1``):
  :func:`forward_order` runs ``forward()`` once on a small random batch with a forward hook on every
  ``nn.Linear`` and reads the layers in the order they were called, refusing a module whose order it
  cannot establish (a layer called twice or never, a ``forward()`` that does not run on a batch of
  vectors), naming the layers.

Every module checkpoint is then checked as a function (:func:`check_function`): the MLP read from it,
:math:`W_{L-1}\sigma(\cdots\sigma(W_0x+b_0)\cdots)+b_{L-1}`, must give what ``forward()`` gives on
random inputs, so a zoo never holds a different function from the module it was read from (square
layers in another order, a skip connection, another activation, an output nonlinearity).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from hgutils.weightspace.stacked_mlp import mlp_forward

__all__ = [
    "ACTIVATION_MODULES",
    "check_function",
    "forward_order",
    "linear_layers",
    "read_checkpoint",
    "sequential_activation",
]

#: The activation modules an ``nn.Sequential`` may hold, with the zoo's name for each
#: (:data:`hgutils.weightspace.stacked_mlp.ACTIVATIONS`; ``nn.GELU`` only with ``approximate="none"``).
ACTIVATION_MODULES: dict[type[nn.Module], str] = {nn.ReLU: "relu", nn.Tanh: "tanh", nn.GELU: "gelu"}

#: Modules of an ``nn.Sequential`` that leave a batch of vectors unchanged at evaluation.
_NEUTRAL: tuple[type[nn.Module], ...] = (nn.Dropout, nn.Identity, nn.Flatten)

#: Random inputs on which a module's ``forward()`` is traced and checked.
_PROBE_ROWS = 8


@dataclass(frozen=True)
class _Layer:
    """One linear layer of a checkpoint: the keys it was read from and its tensors."""

    weight_key: str
    bias_key: str
    weight: Tensor
    bias: Tensor


def _training_checkpoint_hint(state: Mapping) -> str:
    """A hint when ``state`` is a training checkpoint (``{'model': state_dict, 'optimizer': ...}``)."""
    inner = [
        k for k, v in state.items() if isinstance(v, Mapping) and v and all(isinstance(x, Tensor) for x in v.values())
    ]
    if not inner or all(isinstance(v, Tensor) for v in state.values()):
        return ""
    return (
        f"; this looks like a training checkpoint holding {sorted(map(str, state))}, not a state_dict: "
        f"pass the network's state_dict, ckpt[{inner[0]!r}] (for a file, torch.load(path, weights_only=True)"
        f"[{inner[0]!r}])"
    )


def _layer_parts(state: Mapping[str, Tensor], where: str) -> dict[str, dict[str, tuple[str, Tensor]]]:
    """``{prefix: {"weight": (key, W), "bias": (key, b)}}`` in the order the keys list the weights."""
    if not isinstance(state, Mapping) or not state:
        raise ValueError(f"{where}: expected a non-empty state_dict (names -> tensors); got {type(state).__name__}")
    found: dict[str, dict[str, tuple[str, Tensor]]] = {}
    for key, value in state.items():
        prefix, _, leaf = str(key).rpartition(".")
        if leaf not in ("weight", "bias"):
            raise ValueError(
                f"{where}: key {key!r} is not a Linear weight or bias; an MLP checkpoint holds only "
                "'<layer>.weight' [out, in] and '<layer>.bias' [out] (no convolutions, norms or buffers)"
                + _training_checkpoint_hint(state)
            )
        if not isinstance(value, Tensor) or not value.is_floating_point():
            raise ValueError(
                f"{where}: key {key!r} must be a floating-point tensor; got {type(value).__name__}"
                + _training_checkpoint_hint(state)
            )
        if value.is_meta:
            raise ValueError(
                f"{where}: key {key!r} is on the meta device (a shape without values: a model built under "
                "torch.device('meta') or loaded lazily); load its weights before building the zoo"
            )
        if value.layout != torch.strided:
            raise ValueError(f"{where}: key {key!r} is a {value.layout} tensor; expected a dense tensor")
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
    return found


def _chain(parts: dict[str, dict[str, tuple[str, Tensor]]], order: list[str], where: str, how: str) -> list[_Layer]:
    """The layers ``order`` names, each taking the previous one's outputs (``how`` says whose order)."""
    layers: list[_Layer] = []
    for prefix in order:
        (wk, w), (bk, b) = parts[prefix]["weight"], parts[prefix]["bias"]
        if layers and w.shape[1] != layers[-1].weight.shape[0]:
            prev = layers[-1]
            raise ValueError(
                f"{where}: key {wk!r} takes {w.shape[1]} inputs but the previous layer {prev.weight_key!r} "
                f"gives {prev.weight.shape[0]} outputs; the layers must chain in {how}"
            )
        layers.append(_Layer(wk, bk, w, b))
    return layers


_LISTED = (
    "the order listed (a state_dict is read in the order of its keys; if forward() applies the layers in "
    "another order, pass the module itself, or the state_dict with its keys in that order)"
)


def linear_layers(state: Mapping[str, Tensor], where: str = "checkpoint") -> list[_Layer]:
    """The linear layers of an MLP ``state_dict`` in order: ``<prefix>.weight [out, in]`` and
    ``<prefix>.bias [out]`` per layer, the layers ordered as their weights first appear, each
    layer's input width equal to the previous layer's output width.

    A ``state_dict`` has no ``forward()``: square layers listed in another order than the network
    applies them cannot be told apart here (pass the module to have its order traced).
    Raises ``ValueError`` naming the first key that breaks this (``where`` says which checkpoint).
    """
    parts = _layer_parts(state, where)
    return _chain(parts, list(parts), where, _LISTED)


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


def _probe(width: int, like: Tensor) -> Tensor:
    """A fixed random batch ``[_PROBE_ROWS, width]`` in ``like``'s dtype and device (global RNG untouched)."""
    g = torch.Generator().manual_seed(width)
    return torch.randn(_PROBE_ROWS, width, generator=g, dtype=torch.float64).to(like.dtype).to(like.device)


def _run_eval(module: nn.Module, x: Tensor) -> object:
    """``module(x)`` in evaluation mode without gradients; every module's training flag restored."""
    flags = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        with torch.no_grad():
            return module(x)
    finally:
        for m, flag in flags:
            m.training = flag


def _names(prefixes: list[str]) -> str:
    return ", ".join(repr(p) for p in prefixes)


def forward_order(module: nn.Module, prefixes: list[str], where: str = "checkpoint") -> list[str]:
    """The Linear layers ``prefixes`` (module names) of ``module`` in the order its ``forward()`` applies them.

    ``forward()`` runs once, in evaluation mode and without gradients, on a random batch
    ``[8, in]`` (``in``: the input width of one of the layers, tried in the order they are
    registered), with a forward hook on each layer recording the calls. Raises ``ValueError``
    naming the layers when a prefix is not an ``nn.Linear``, when ``forward()`` runs on no such
    batch, or when a layer is called twice or never.
    """
    mods: dict[str, nn.Linear] = {}
    for p in prefixes:
        try:
            mod = module.get_submodule(p)
        except AttributeError:
            mod = None
        if not isinstance(mod, nn.Linear):
            kind = f"nn.{type(mod).__name__}" if mod is not None else "no submodule"
            raise ValueError(
                f"{where}: {p!r} holds a weight and a bias but is {kind}, not nn.Linear; the order in which "
                "forward() applies it cannot be traced (pass an nn.Sequential or a state_dict in forward order)"
            )
        mods[p] = mod
    if len(prefixes) == 1:
        return list(prefixes)
    calls: list[str] = []
    hooks = [m.register_forward_hook(lambda _m, _i, _o, p=p: calls.append(p)) for p, m in mods.items()]
    failures: list[str] = []
    try:
        widths = list(dict.fromkeys(m.in_features for m in mods.values()))
        for width in widths:
            calls.clear()
            try:
                _run_eval(module, _probe(width, mods[prefixes[0]].weight))
                break
            except Exception as err:  # forward() is the user's code: any error means "not this width"
                first = (str(err).splitlines() or [""])[0][:120]
                failures.append(f"[{_PROBE_ROWS}, {width}]: {type(err).__name__}: {first}")
        else:
            raise ValueError(
                f"{where}: cannot tell in which order forward() applies the Linear layers {_names(prefixes)}: "
                f"forward() fails on a batch of vectors of every input width ({'; '.join(failures)}); pass an "
                "nn.Sequential, or the state_dict with its keys in the order forward() applies the layers"
            )
    finally:
        for h in hooks:
            h.remove()
    for p in prefixes:
        n = calls.count(p)
        if n != 1:
            what = "is not applied by forward()" if n == 0 else f"is applied {n} times by forward()"
            raise ValueError(
                f"{where}: layer {p!r} {what} (calls in order: {_names(calls) or 'none'}); a zoo's MLP applies "
                f"each of its Linear layers {_names(prefixes)} once"
            )
    return calls


def check_function(module: nn.Module, layers: list[_Layer], activation: str, where: str = "checkpoint") -> None:
    """Refuse (``ValueError``) when the MLP read from ``module`` does not compute its ``forward()``.

    Both run on a fixed random batch ``[8, d_0]`` in evaluation mode; they must agree to within
    ``100`` rounding units of the module's dtype (relative to the output's size).
    """
    x = _probe(layers[0].weight.shape[1], layers[0].weight)
    try:
        got = _run_eval(module, x)
    except Exception as err:  # the user's forward()
        raise ValueError(f"{where}: forward() fails on a batch [{x.shape[0]}, {x.shape[1]}] ({err})") from None
    if not isinstance(got, Tensor):
        raise ValueError(f"{where}: forward() returns {type(got).__name__}; a zoo's MLP returns one tensor")
    params = {}
    for l, layer in enumerate(layers):
        params[f"W{l}"] = layer.weight.detach().to("cpu", torch.float64)[None]
        params[f"b{l}"] = layer.bias.detach().to("cpu", torch.float64)[None]
    ours = mlp_forward(params, x.to("cpu", torch.float64), activation)[0]
    theirs = got.detach().to("cpu", torch.float64)
    names = _names([layer.weight_key.rpartition(".")[0] for layer in layers])
    if theirs.shape != ours.shape:
        raise ValueError(
            f"{where}: forward() returns shape {tuple(theirs.shape)} but the layers {names} give "
            f"{tuple(ours.shape)}; forward() does more than apply them in turn"
        )
    diff = float((ours - theirs).abs().max())
    tol = max(1e-6, 100 * torch.finfo(got.dtype).eps) * (1.0 + float(theirs.abs().max()))
    if not diff <= tol:
        raise ValueError(
            f"{where}: the MLP read from the module (layers {names} in the order forward() applies them, "
            f"activation {activation!r}) does not compute what forward() computes (largest difference {diff:.3g} "
            "on random inputs): forward() does more than Linear layers with that activation between them "
            "(a skip connection, another activation or scale, an output nonlinearity?); a zoo holds plain MLPs"
        )


def read_checkpoint(ckpt: object, where: str, activation: str | None = None) -> tuple[list[_Layer], str | None]:
    """The layers of one checkpoint (a ``state_dict`` or an ``nn.Module``) and the activation it shows.

    The activation is read off an ``nn.Sequential`` (``None`` for a ``state_dict`` or another
    module). A module's layers come in the order its ``forward()`` applies them, and the MLP they
    make is checked against ``forward()`` when the activation is known (the Sequential's, else
    ``activation``) -- module docstring.
    """
    if isinstance(ckpt, nn.Module):
        act = sequential_activation(ckpt, where) if isinstance(ckpt, nn.Sequential) else None
        parts = _layer_parts({k: v.detach() for k, v in ckpt.state_dict().items()}, where)
        if act is not None:
            layers = _chain(parts, list(parts), where, "the order the nn.Sequential lists them")
        else:
            layers = _chain(parts, forward_order(ckpt, list(parts), where), where, "the order forward() applies them")
        if (act or activation) is not None:
            check_function(ckpt, layers, act or activation, where)
        return layers, act
    if isinstance(ckpt, Mapping):
        return linear_layers(ckpt, where), None
    raise ValueError(
        f"{where}: a checkpoint is a state_dict, an nn.Module or the path of a file saved with torch.save; "
        f"got {type(ckpt).__name__}"
    )
