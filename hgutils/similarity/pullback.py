r"""Pullback metrics of network layers on an input manifold (the first half of MSA).

A network layer :math:`\varphi: \mathbb{R}^{n_{in}} \to \mathbb{R}^D` composed with a manifold
embedding :math:`\psi: \mathcal{M} \subset \mathbb{R}^m \to \mathbb{R}^{n_{in}}` induces at each
point :math:`p` the pullback metric

.. math:: G(p) = J(p)^\top J(p), \qquad J(p) = \nabla(\varphi\circ\psi)(p) \in \mathbb{R}^{D\times m},

an :math:`m\times m` positive semi-definite matrix (positive definite where the map is an
immersion). Reference: Cayco-Gajic & Pellegrino, *Geometry-aware similarity metrics for neural
representations on Riemannian and statistical manifolds*, arXiv 2603.28764, §2.

- :func:`pullback_metric` -- ``[P, m, m]`` for any ``f`` (Jacobians batched with ``torch.func``).
- :func:`mlp_pullback_metrics` -- ``[N, P, m, m]`` for a whole stacked zoo of MLPs in one pass.
- :func:`mlp_layer_fn`, :func:`module_layer_fn` -- build ``f`` = "layer k of this stacked MLP /
  this ``nn.Module``".

Jacobian mode: ``jacfwd`` costs ``m`` JVPs per point and ``jacrev`` costs ``D`` VJPs, so
``mode="auto"`` picks ``vmap(jacfwd)`` when ``m <= D`` (always, for 1-3 dimensional manifolds).
``mode="rows"`` is faster still for maps that act row by row on a batch (every MLP / pointwise
network, *not* batch-norm in training mode): ``m`` JVPs of the whole batch, ``torch.func.jvp(f,
(points,), (e_k,))``, give all Jacobian columns at once. :func:`mlp_pullback_metrics` uses it for
stacked zoos (faster than ``vmap`` there, whose batching rule for the stacked matmul is slow).
``benchmarks/similarity.py`` measures the modes against a per-point loop.

"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.func import jacfwd, jacrev, jvp, vmap

from hgutils.weightspace import stacked_mlp

Fn = Callable[[torch.Tensor], torch.Tensor]

__all__ = ["pullback_metric", "pullback_jacobian", "mlp_pullback_metrics", "mlp_layer_fn", "module_layer_fn"]


def _check_points(points: torch.Tensor) -> torch.Tensor:
    if not isinstance(points, torch.Tensor):
        points = torch.as_tensor(points)
    if points.ndim != 2:
        raise ValueError(
            f"points must have shape [P, m] (P points of an m-dim manifold); got shape {tuple(points.shape)}"
        )
    if points.shape[0] == 0:
        raise ValueError("points must contain at least one point; got P = 0")
    if not points.is_floating_point():
        points = points.to(torch.get_default_dtype())
    if not torch.isfinite(points).all():
        raise ValueError("points contain NaN or inf")
    return points


def _compose(f: Fn, embedding: Fn | None) -> Fn:
    if embedding is None:
        return f
    return lambda p: f(embedding(p))


MODES = ("auto", "fwd", "rev", "rows")


def _rows_jacobian(g: Fn, points: torch.Tensor) -> torch.Tensor:
    """Jacobians of a row-wise map ``g: [P, m] -> [..., D]`` via m batched JVPs: ``[..., D, m]``."""
    eye = torch.eye(points.shape[1], dtype=points.dtype, device=points.device)
    cols = [jvp(g, (points,), (eye[k].expand_as(points),))[1] for k in range(points.shape[1])]
    return torch.stack(cols, -1)


def _jac_fn(g: Fn, m: int, d_out: int, mode: str) -> Fn:
    if mode == "auto":
        mode = "fwd" if m <= d_out else "rev"
    return jacfwd(g) if mode == "fwd" else jacrev(g)


def pullback_jacobian(
    f: Fn, points: torch.Tensor, embedding: Fn | None = None, *, mode: str = "auto", chunk_size: int | None = None
) -> torch.Tensor:
    r"""Jacobians :math:`J(p) = \nabla(f\circ\psi)(p)` at every point, shape ``[P, ..., m]``.

    ``f`` must map a single point ``[n_in]`` to ``[D]`` (or to ``[..., D]``); it is evaluated under
    ``torch.func.vmap``, so it must be a pure tensor function (no in-place writes to captured
    state, no ``.item()``).
    """
    points = _check_points(points)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    g = _compose(f, embedding)
    if mode == "rows":  # f and embedding act row-wise on [P, ...] batches
        J = _rows_jacobian(g, points)
        if J.shape[0] != points.shape[0]:
            raise ValueError(f"mode='rows' needs f to map [P, m] to [P, ...]; got output {tuple(J.shape[:-1])}")
        return J
    with torch.no_grad():
        d_out = g(points[0]).numel()
    jac = _jac_fn(g, points.shape[1], d_out, mode)
    return vmap(jac, chunk_size=chunk_size)(points)


def pullback_metric(
    f: Fn, points: torch.Tensor, embedding: Fn | None = None, *, mode: str = "auto", chunk_size: int | None = None
) -> torch.Tensor:
    r"""Pullback metric :math:`G(p) = J(p)^\top J(p)` of ``f ∘ embedding`` at each point.

    Parameters
    ----------
    f
        The layer map; called on a single point ``[n_in]`` returns ``[D]``.
    points
        ``[P, m]`` coordinates on the manifold (``m`` = manifold dimension).
    embedding
        Optional :math:`\psi`: ``[m] -> [n_in]`` (e.g. the swiss roll); ``None`` = identity.
    mode
        ``"fwd"`` (``vmap(jacfwd)``), ``"rev"`` (``vmap(jacrev)``), ``"auto"`` (fwd iff m <= D) or
        ``"rows"`` (m batched JVPs; only for maps that act row-wise on a batch).
    chunk_size
        Passed to ``vmap`` to bound memory for very many points.

    Returns
    -------
    Tensor ``[P, m, m]`` in float64, symmetric positive semi-definite (the Gram product of
    float32 Jacobians is formed in float64: in float32 a singular metric can come out indefinite
    at the 1e-7 level, beyond the spectral ratio's tiny regularisation).
    """
    J = pullback_jacobian(f, points, embedding, mode=mode, chunk_size=chunk_size)
    J = J.reshape(J.shape[0], -1, J.shape[-1]).to(torch.float64)
    return J.transpose(-1, -2) @ J


# --------------------------------------------------------------------------------------------
# building f from a network
# --------------------------------------------------------------------------------------------
def _stacked():

    return stacked_mlp


def mlp_layer_fn(
    params: dict[str, torch.Tensor],
    layer: int,
    *,
    net: int | None = None,
    activation: str = "relu",
    omega0: float | None = None,
) -> Fn:
    """``f`` = post-activation of hidden layer ``layer`` of a stacked MLP (``hgutils.weightspace.stacked_mlp``).

    With ``net=i`` the returned ``f`` maps ``[n_in] -> [D]`` (or ``[P, n_in] -> [P, D]``) for network
    ``i`` only; with ``net=None`` it maps ``[n_in] -> [N, D]`` (all networks at once), which is what
    :func:`mlp_pullback_metrics` uses.
    """
    mlp_forward = _stacked().mlp_forward
    n_layers = sum(1 for k in params if k.startswith("W"))
    if not isinstance(layer, int) or not -n_layers <= layer < n_layers:
        raise ValueError(
            f"layer must be an int in [{-n_layers}, {n_layers}) for an MLP with "
            f"{n_layers} weight matrices; got {layer!r}"
        )
    if layer < 0:
        layer = n_layers + layer
    # layer == n_layers - 1 selects the output layer (no activation); else a hidden layer.
    kw = {"omega0": omega0} if omega0 is not None else {}
    out_layer = layer == n_layers - 1

    def fwd(x: torch.Tensor, **extra) -> torch.Tensor:
        if out_layer:
            return mlp_forward(params, x, activation, **kw, **extra)
        return mlp_forward(params, x, activation, layer=layer, **kw, **extra)

    if net is not None:

        def f(x: torch.Tensor) -> torch.Tensor:
            if x.ndim == 1:
                return fwd(x[None], net=net)[0]
            return fwd(x, net=net)
    else:

        def f(x: torch.Tensor) -> torch.Tensor:
            if x.ndim == 1:
                return fwd(x[None])[:, 0]
            return fwd(x)

    return f


def mlp_pullback_metrics(
    params: dict[str, torch.Tensor],
    points: torch.Tensor,
    layer: int,
    *,
    embedding: Fn | None = None,
    activation: str = "relu",
    omega0: float | None = None,
    chunk_size: int | None = None,
) -> torch.Tensor:
    """Pullback metrics of layer ``layer`` for every network of a stacked zoo: ``[N, P, m, m]`` (float64).

    ``m`` batched JVPs of the whole stacked forward pass (``mode="rows"`` of
    :func:`pullback_jacobian`; an MLP acts row-wise) -- the O(M·P) Jacobian part of
    :func:`~hgutils.similarity.msa_matrix`. ``embedding`` must accept a batch ``[P, m]``;
    ``chunk_size`` bounds memory (points per pass).
    """
    f = mlp_layer_fn(params, layer, activation=activation, omega0=omega0)  # [P, n_in] -> [N, P, D]
    points = _check_points(points)
    g = _compose(f, embedding)
    step = chunk_size or points.shape[0]
    out = []
    for s in range(0, points.shape[0], step):
        J = _rows_jacobian(g, points[s : s + step]).to(torch.float64)  # [N, P, D, m]
        out.append(J.transpose(-1, -2) @ J)
    return torch.cat(out, 1)


def module_layer_fn(module: nn.Module, layer: int | str | None = None) -> Fn:
    """``f`` = the output of part of an ``nn.Module``, for :func:`pullback_metric`.

    - ``layer=None``: the whole module.
    - ``layer=k`` (int) on an ``nn.Sequential``: the output of ``module[:k+1]`` (negative k allowed).
    - ``layer="name"``: the output of the named submodule (``module.get_submodule(name)``),
      captured with a forward hook while the full module runs.

    The returned ``f`` accepts one point ``[n_in]`` (it adds and removes the batch dimension) or a
    batch ``[P, n_in]``.
    """
    if layer is None:
        body: Callable[[torch.Tensor], torch.Tensor] = module
    elif isinstance(layer, int):
        if not isinstance(module, nn.Sequential):
            raise ValueError(
                f"an integer layer needs an nn.Sequential; got {type(module).__name__} (pass a submodule name instead)"
            )
        n = len(module)
        if not -n <= layer < n:
            raise ValueError(f"layer must be in [{-n}, {n}) for this Sequential; got {layer}")
        body = module[: (layer % n) + 1]
    elif isinstance(layer, str):
        try:
            sub = module.get_submodule(layer)
        except AttributeError as exc:
            raise ValueError(f"module has no submodule named {layer!r}") from exc

        def body(x: torch.Tensor) -> torch.Tensor:
            store: list[torch.Tensor] = []
            handle = sub.register_forward_hook(lambda _m, _i, out: store.append(out))
            try:
                module(x)
            finally:
                handle.remove()
            return store[-1]
    else:
        raise ValueError(f"layer must be None, an int or a submodule name; got {layer!r}")

    def f(x: torch.Tensor) -> torch.Tensor:
        if x.ndim == 1:
            return body(x[None])[0].reshape(-1)
        return body(x).reshape(x.shape[0], -1)

    return f
