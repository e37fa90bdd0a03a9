r"""A :class:`~hgutils.weightspace.zoo.containers.Zoo` from a researcher's own MLP checkpoints.

:func:`zoo_from_checkpoints` (also :meth:`Zoo.from_checkpoints`) takes ``N`` training trajectories,
each a sequence of ``T`` checkpoints of one MLP, and stacks them into the zoo layout every
meta-network, similarity measure and readout of the library reads:

.. math::
    \texttt{params["W}l\texttt{"]}[i, t] = W_l^{(i)}(s_t) \in \mathbb{R}^{d_{l+1}\times d_l},\qquad
    \texttt{params["b}l\texttt{"]}[i, t] = b_l^{(i)}(s_t) \in \mathbb{R}^{d_{l+1}},\qquad
    \texttt{steps}[t] = s_t,

where :math:`W_l^{(i)}(s_t)` is the weight of the ``l``-th linear layer the network applies, of
network ``i`` after ``s_t`` training steps, and the zoo's
:class:`~hgutils.weightspace.zoo.containers.MLPSpec` computes the network they came from,

.. math::
    f^{(i)}_t(x) = W_{L-1}\,\sigma(\cdots\sigma(W_0 x + b_0)\cdots) + b_{L-1}
    \qquad(\text{no activation after the last layer}).

A checkpoint is one of (:mod:`~hgutils.weightspace.zoo.checkpoint_layers` reads them)

- a ``state_dict`` (any mapping of names to tensors): keys ``<layer>.weight`` ``[out, in]`` and
  ``<layer>.bias`` ``[out]`` listed in the order the network applies the layers, with any prefix
  (``0.weight``, ``net.2.bias``, ``fc1.weight``); a single ``nn.Linear``'s ``weight`` / ``bias``
  also works. It has no ``forward()``: layers that do not chain in the listed order are refused,
  naming the keys (square layers listed out of order cannot be detected: pass the module);
- an ``nn.Sequential`` of ``nn.Linear`` layers separated by one kind of activation module
  (:data:`ACTIVATION_MODULES`; ``nn.Dropout``, ``nn.Identity`` and ``nn.Flatten`` are skipped), whose
  activation is read off the modules;
- any other ``nn.Module`` whose state holds only ``nn.Linear`` weights and biases (its activation
  must be given): its layers are read in the order its ``forward()`` applies them, traced on a small
  random batch, and a module whose order cannot be established is refused, naming the layers;
- the path of a file saved with ``torch.save`` (read with ``weights_only=True``), and, for a whole
  trajectory, a folder of such files sorted by the step in their names
  (:mod:`~hgutils.weightspace.zoo.checkpoint_files`).

Every module checkpoint is checked as a function: the zoo's MLP must compute what ``forward()``
computes. A trajectory may also be a single checkpoint (``T = 1``: the final networks only).
Consecutive snapshots with identical weights (the ``state_dict`` appended without ``clone()``) are
warned about, in one line naming the trajectories. The first problem found is raised as one
``ValueError`` naming the offending argument, or key or module with the trajectory and the snapshot.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from hgutils.weightspace.stacked_mlp import ACTIVATIONS
from hgutils.weightspace.zoo.checkpoint_files import folder_checkpoints, is_path, load_checkpoint
from hgutils.weightspace.zoo.checkpoint_layers import (
    ACTIVATION_MODULES,
    _Layer,
    linear_layers,
    read_checkpoint,
    sequential_activation,
)
from hgutils.weightspace.zoo.containers import Checkpoint, MLPSpec, Zoo, set_checkpoint_loader

__all__ = ["ACTIVATION_MODULES", "Checkpoint", "linear_layers", "sequential_activation", "zoo_from_checkpoints"]

_INT64 = 2**63


def _where(traj: int, snap: int, path: Path | None = None) -> str:
    return f"trajectory {traj}, snapshot {snap}" + (f" ({path})" if path is not None else "")


# --------------------------------------------------------------------------------------------
# the arguments
# --------------------------------------------------------------------------------------------
def _step_value(v: Any, where: str) -> int:
    """One training step as an int (ints, whole floats, 0-d tensors and NumPy scalars)."""
    if isinstance(v, Tensor) and v.dim() == 0:
        v = v.item()
    elif type(v).__module__ == "numpy" and hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}: expected one int per snapshot; got {v!r} ({type(v).__name__})")
    if isinstance(v, float) and not (math.isfinite(v) and v == round(v)):
        raise ValueError(f"{where}: expected whole numbers of training steps; got {v!r}")
    if not -_INT64 <= int(v) < _INT64:
        raise ValueError(f"{where}: {int(v)} does not fit in a 64-bit integer (the zoo's steps are int64)")
    return int(v)


def _step_rows(steps: Any) -> list[list[int]] | None:
    """``steps`` as one list of ints, or one per trajectory; ``None`` stays ``None``."""
    if steps is None:
        return None
    expected = "one int per snapshot (a list of ints, or one list per trajectory)"
    if isinstance(steps, (str, bytes)):
        raise ValueError(f"steps: expected {expected}; got the {type(steps).__name__} {steps!r}")
    if isinstance(steps, Tensor):
        if steps.dim() not in (1, 2):
            raise ValueError(f"steps: expected {expected}; got a tensor of shape {tuple(steps.shape)}")
        steps = steps.tolist()
    elif hasattr(steps, "tolist") and not isinstance(steps, (list, tuple)):  # a NumPy array
        steps = steps.tolist()
    if isinstance(steps, Mapping) or not isinstance(steps, (Sequence, range)):
        raise ValueError(f"steps: expected {expected}; got {type(steps).__name__}")
    steps = list(steps)
    if not steps:
        raise ValueError(f"steps: expected {expected}; got an empty list")
    nested = [isinstance(r, (Sequence, range, Tensor)) and not isinstance(r, (str, bytes)) for r in steps]
    if any(nested) and not all(nested):
        raise ValueError(f"steps: expected {expected}; got a mix of numbers and lists")
    rows = [r.tolist() if isinstance(r, Tensor) else list(r) for r in steps] if all(nested) else [steps]
    return [[_step_value(v, "steps" if len(rows) == 1 else f"steps[{i}]") for v in r] for i, r in enumerate(rows)]


def _steps(rows: list[tuple[int, list[int]]], T: int, what: str = "steps") -> Tensor:
    """The zoo's steps vector ``[T]`` from rows ``(trajectory, steps)`` that must agree and increase."""
    for i, r in rows:
        if len(r) != T:
            name = what if len(rows) == 1 else f"{what} of trajectory {i}"
            raise ValueError(f"{name}: expected {T} steps, one per snapshot; got {len(r)} ({r})")
    i0, first = rows[0]
    for i, r in rows[1:]:
        if r != first:
            raise ValueError(
                f"trajectory {i} was recorded at steps {r}; trajectory {i0} at {first} "
                "(a zoo holds one steps vector: record every network at the same steps)"
            )
    if any(b <= a for a, b in zip(first, first[1:])):
        raise ValueError(f"{what}: must increase strictly; got {first}")
    return torch.tensor(first, dtype=torch.long)


def _trajectories(trajectories: Any, rows: list[list[int]] | None) -> tuple[list[list[Any]], dict[int, list[int]]]:
    """One list of checkpoints (objects or file paths) per network, and the steps each folder's names give."""
    if is_path(trajectories):
        raise ValueError(
            "trajectories must be a list with one entry per network; got the path "
            f"{os.fsdecode(trajectories)!r} (for a folder holding one folder per run, pass "
            f"sorted(Path({os.fsdecode(trajectories)!r}).iterdir()))"
        )
    if isinstance(trajectories, (Mapping, nn.Module)) or not isinstance(trajectories, Sequence):
        raise ValueError(
            "trajectories must be a list with one entry per network (a list of its checkpoints, one "
            f"checkpoint, or a folder of checkpoint files); got {type(trajectories).__name__}"
        )
    if not trajectories:
        raise ValueError("trajectories is empty; give at least one network")
    n = len(trajectories)
    if rows is not None and len(rows) not in (1, n):
        raise ValueError(
            f"steps: expected one list of steps or one list per trajectory ({n} lists); got {len(rows)} lists"
        )
    out: list[list[Any]] = []
    named: dict[int, list[int]] = {}
    for i, tr in enumerate(trajectories):
        if is_path(tr):
            p = Path(os.fsdecode(tr))
            if p.is_dir():
                wanted = None if rows is None else rows[i if len(rows) == n else 0]
                files, named[i] = folder_checkpoints(p, wanted, f"trajectory {i}")
                out.append(files)
            elif p.is_file():
                out.append([p])
            else:
                raise ValueError(f"trajectory {i}: {str(p)!r} does not exist (expected a checkpoint file or a folder)")
        elif isinstance(tr, (Mapping, nn.Module)):
            out.append([tr])
        elif isinstance(tr, Sequence) and len(tr) > 0:
            out.append(list(tr))
        else:
            raise ValueError(
                f"trajectory {i} must be a non-empty list of checkpoints, one checkpoint or a folder; got {tr!r:.80}"
            )
        if len(out[i]) != len(out[0]):
            raise ValueError(
                f"trajectory {i} has {len(out[i])} snapshots; trajectory 0 has {len(out[0])} "
                "(a zoo records every network at the same steps)"
            )
    return out, named


def _meta(meta: Any, n: int) -> dict[str, Tensor]:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise ValueError(f"meta: expected a mapping of names to per-network values; got {type(meta).__name__}")
    out = {}
    for k, v in meta.items():
        try:
            tv = torch.as_tensor(v)
        except (TypeError, ValueError, RuntimeError) as err:
            raise ValueError(f"meta[{k!r}]: expected numbers, one per network; got {v!r:.80} ({err})") from None
        if tv.dim() == 0 or tv.shape[0] != n:
            raise ValueError(
                f"meta[{k!r}] must have one value per network (first dimension {n}); got shape {tuple(tv.shape)}"
            )
        out[str(k)] = tv
    return out


# --------------------------------------------------------------------------------------------
# the zoo
# --------------------------------------------------------------------------------------------
def _warn_identical(params: dict[str, Tensor], steps: Tensor) -> None:
    """One warning naming the trajectories in which two consecutive snapshots hold the same weights."""
    first = next(iter(params.values()))
    n, T = first.shape[:2]
    if T < 2:
        return
    same = torch.ones(n, T - 1, dtype=torch.bool)
    for v in params.values():
        same &= (v[:, 1:] == v[:, :-1]).flatten(2).all(-1)
    bad = same.any(1).nonzero().flatten().tolist()
    if not bad:
        return
    i = bad[0]
    if bool(same[i].all()):
        detail = f"in trajectory {i} all {T} snapshots are the same"
    else:
        t = int(same[i].nonzero()[0])
        detail = f"in trajectory {i} steps {int(steps[t])} and {int(steps[t + 1])}"
    which = f"trajectory {i}" if len(bad) == 1 else f"trajectories {', '.join(map(str, bad[:8]))}"
    more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
    warnings.warn(
        f"Zoo.from_checkpoints: {which}{more} (of {n}): consecutive snapshots hold identical weights ({detail}); "
        "a state_dict's tensors are the live parameters, so appending net.state_dict() without copying makes every "
        "snapshot the final network: append {k: v.detach().clone() for k, v in net.state_dict().items()} instead",
        UserWarning,
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this package (the user's call), seen from ``warnings.warn``."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(2), 2  # 1: the function calling warnings.warn
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    return level


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
        s, ``nn.Module`` s holding only Linear layers, or paths of ``torch.save`` files), a single
        checkpoint (``T = 1``), or a folder of checkpoint files sorted by the step in their names.
    steps
        The training step of each snapshot: one list of ``T`` steps shared by all networks, one list
        per trajectory (they must agree), or ``None`` for ``0, 1, ..., T-1`` -- for folders, the
        steps in the file names, and a given ``steps`` chooses the files of those steps.
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

    Raises
    ------
    ValueError
        One line naming the argument (or the trajectory, snapshot and key or module) and what was expected.
    """
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}")
    if info is not None and not isinstance(info, Mapping):
        raise ValueError(f"info: expected a mapping of free-form details; got {type(info).__name__}")
    rows = _step_rows(steps)
    trajs, named = _trajectories(trajectories, rows)
    n, T = len(trajs), len(trajs[0])
    if rows is not None:
        steps_t = _steps(list(enumerate(rows)), T)
    elif named:
        steps_t = _steps(sorted(named.items()), T, "the steps in the file names")
    else:
        steps_t = torch.arange(T, dtype=torch.long)
    meta_t = _meta(meta, n)
    ref: list[_Layer] | None = None
    acts: dict[str, str] = {}
    weights: list[list[list[Tensor]]] = []  # [layer][network][snapshot], then W and b interleaved
    for i, tr in enumerate(trajs):
        for t, ckpt in enumerate(tr):
            path = Path(os.fsdecode(ckpt)) if is_path(ckpt) else None
            where = _where(i, t, path)
            obj = load_checkpoint(path, _where(i, t)) if path else ckpt  # its errors name the file
            layers, act = read_checkpoint(obj, where, activation)
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
    _warn_identical(params, steps_t)
    sizes = (ref[0].weight.shape[1], *(layer.weight.shape[0] for layer in ref))
    details = {"source": "checkpoints", "layer_keys": [(x.weight_key, x.bias_key) for x in ref], **dict(info or {})}
    return Zoo(MLPSpec(sizes, act_name), params, steps_t, meta_t, details)


set_checkpoint_loader(zoo_from_checkpoints)  # Zoo.from_checkpoints calls it (containers' docstring)
