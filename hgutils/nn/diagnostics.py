r"""Initialisation diagnostics of a classifier: feature radii per layer, saturated logits, step sizes.

:func:`init_diagnostics` runs one training-mode forward and backward pass of a model (a deep copy;
the model itself is untouched) on a batch and records, per layer in module order:

* ``radius_p50`` / ``radius_p99`` / ``radius_max`` -- percentiles over all batch positions of the
  layer output's *radius*: for Lorentz features ``[..., n+1]`` the geodesic distance to the origin
  :math:`d(x, o) = \operatorname{arsinh}(\sqrt{c}\,\|x_s\|)/\sqrt{c}`; for Euclidean feature maps
  ``[B, C, *spatial]`` the Euclidean norm of the channel vector at each position (the two are
  comparable near the origin, where :math:`d(x,o) \approx \|x_s\|`);
* ``clamped`` -- for PLFC layers, the fraction of hyperplane logits at or beyond the clamp
  :math:`|v| \ge v_{\max}` (those pass no gradient);
* ``grad_ratio`` -- :math:`\|\nabla_W \mathcal{L}\| / \|W\|` of the layer's weight (PLFC normals
  :math:`z`, convolution / linear weights): the relative size of a plain gradient step.

Layers recorded: convolutions, fully connected layers, batch norms and the head.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from hgutils.nn.lorentz import PLFC, GyroLBN, LorentzConv1d, LorentzConv2d, LorentzMLR
from hgutils.nn.lorentz_baselines import LorentzBN, LorentzConv1dHCNN, LorentzConv2dHCNN, LorentzFC

__all__ = ["feature_radius", "init_diagnostics", "LAYER_KINDS"]

_CONV = (nn.Conv1d, nn.Conv2d, LorentzConv2d, LorentzConv1d, LorentzConv2dHCNN, LorentzConv1dHCNN)
_BN = (nn.BatchNorm1d, nn.BatchNorm2d, GyroLBN, LorentzBN)
_FC = (nn.Linear, PLFC, LorentzFC)
_HEAD = (LorentzMLR,)
#: The ``kind`` column: which module classes count as which layer kind.
LAYER_KINDS: dict[str, tuple[type, ...]] = {"conv": _CONV, "bn": _BN, "fc": _FC, "head": _HEAD}


def feature_radius(out: torch.Tensor, lorentz: bool, c: float = 1.0) -> torch.Tensor:
    r"""Per-position radius of a layer output (module docstring): Lorentz ``[..., n+1]`` →
    :math:`\operatorname{arsinh}(\sqrt c\|x_s\|)/\sqrt c`; Euclidean ``[B, C, *spatial]`` or ``[B, C]``
    → channel-vector norm."""
    if lorentz:
        sc = math.sqrt(c)
        return torch.asinh(sc * out[..., 1:].norm(dim=-1)).flatten() / sc
    if out.dim() < 2:
        raise ValueError(f"Euclidean features must be [B, C, ...]; got {tuple(out.shape)}")
    return out.norm(dim=1).flatten()


def _weight(m: nn.Module) -> torch.Tensor | None:
    if isinstance(m, (PLFC, LorentzMLR)):
        return m.z
    if isinstance(m, (LorentzConv2d, LorentzConv1d)):
        return m.conv.fc.z if isinstance(m, LorentzConv1d) else m.fc.z
    if isinstance(m, LorentzConv1dHCNN):
        return m.conv.weight
    if isinstance(m, LorentzFC):
        return m.linear.weight
    return getattr(m, "weight", None) if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)) else None


def _kind(m: nn.Module) -> str | None:
    for kind, classes in LAYER_KINDS.items():
        if isinstance(m, classes):
            return kind
    return None


def _is_lorentz_out(m: nn.Module, out: torch.Tensor) -> bool:
    return not isinstance(m, (nn.Conv1d, nn.Conv2d, nn.BatchNorm1d, nn.BatchNorm2d, nn.Linear, LorentzMLR))


def init_diagnostics(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    c: float = 1.0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.cross_entropy,
) -> pd.DataFrame:
    """One row per recorded layer (module docstring) of ``model`` on the batch ``(x, y)``.

    Columns: ``layer`` (module name), ``kind`` (conv / bn / fc / head), ``radius_p50``,
    ``radius_p99``, ``radius_max`` (NaN for the head), ``clamped`` (NaN where the layer has no
    clamp), ``grad_ratio`` (NaN for layers without a weight). Runs on a deep copy in training mode
    (batch statistics), so ``model`` and its running statistics are unchanged.
    """
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"need a batch of at least 2 inputs with one label each; got {len(x)} and {len(y)}")
    m = copy.deepcopy(model).train()
    layers = [(name, mod) for name, mod in m.named_modules() if name and _kind(mod) is not None]
    # a module nested in a recorded one (the PLFC inside LorentzConv2d, the conv inside LorentzConv1d)
    # is reported through its parent
    names = [n for n, _ in layers]
    layers = [(n, mod) for n, mod in layers if not any(n.startswith(p + ".") for p in names if p != n)]
    rows: dict[str, dict] = {}
    hooks = []

    def record(name: str, mod: nn.Module) -> Callable:
        def hook(_m: nn.Module, _inp: tuple, out: torch.Tensor) -> None:
            row = rows.setdefault(name, {"layer": name, "kind": _kind(mod)})
            if isinstance(mod, LorentzMLR):
                return
            r = feature_radius(out.detach().float(), _is_lorentz_out(mod, out), c)
            q = torch.quantile(r[: 2**24], torch.tensor([0.5, 0.99]))
            row.update(radius_p50=float(q[0]), radius_p99=float(q[1]), radius_max=float(r.max()))

        return hook

    def record_logits(name: str, mod: nn.Module, clamp: float | None) -> Callable:
        def hook(_m: nn.Module, _inp: tuple, v: torch.Tensor) -> None:
            frac = float((v.detach().abs() >= clamp).float().mean()) if clamp is not None else 0.0
            rows.setdefault(name, {"layer": name, "kind": _kind(mod)})["clamped"] = frac

        return hook

    for name, mod in layers:
        hooks.append(mod.register_forward_hook(record(name, mod)))
        plfc = next((p for p in mod.modules() if isinstance(p, PLFC)), None)
        if plfc is not None:
            hooks.append(plfc.logits.register_forward_hook(record_logits(name, mod, plfc.v_clamp)))
    try:
        loss = loss_fn(m(x), y)
        loss.backward()
    finally:
        for h in hooks:
            h.remove()
    out = []
    for name, mod in layers:
        row = {"radius_p50": math.nan, "radius_p99": math.nan, "radius_max": math.nan, "clamped": math.nan}
        row.update(rows.get(name, {"layer": name, "kind": _kind(mod)}))
        w = _weight(mod)
        g = None if w is None else w.grad
        row["grad_ratio"] = math.nan if g is None else float(g.norm() / w.detach().norm().clamp_min(1e-30))
        out.append(row)
    cols = ["layer", "kind", "radius_p50", "radius_p99", "radius_max", "clamped", "grad_ratio"]
    return pd.DataFrame(out, columns=cols)
