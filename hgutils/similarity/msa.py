r"""Spectral-ratio distance between metrics and metric similarity analysis (MSA).

Reference: Cayco-Gajic & Pellegrino, arXiv 2603.28764, §2 (spectral ratio, Prop. 2.2) and §4 (MSA,
Props. 4.1-4.2).

Spectral ratio. For SPD :math:`G, G' \in \mathbb{R}^{m\times m}` let
:math:`\lambda_1 \ge \dots \ge \lambda_m > 0` solve :math:`G v = \lambda G' v`. Then

.. math:: d_{SR}(G, G') = 1 - \sqrt{\lambda_m / \lambda_1} = 1 - e^{-d_H(G,G')/2} \in [0, 1],

with Hilbert's projective metric :math:`d_H = \log(\lambda_1/\lambda_m)`. It is a pseudometric
(symmetric, triangle inequality), zero iff :math:`G' = sG` (scale-blind), invariant to congruence
:math:`T^\top G T` (change of chart) and to output isometries :math:`J \to QJ`.

Regularisation (documented choice). Singular metrics (rank-deficient Jacobians, dead ReLU units)
are made definite by the scale-relative shift :math:`R(G) = G + \varepsilon\,\mathrm{tr}(G)/m\,I`
with a tiny default :math:`\varepsilon = 10^{-10}`; :math:`R(sG) = sR(G)`, so
:math:`d_{SR}(G, sG) = 0` up to rounding (about 1e-15 for well-conditioned G), and well-conditioned
pairs move by O(ε·cond). A rank-deficient metric against a full-rank one gets
:math:`d_{SR} = 1 - O(\sqrt{\varepsilon\,\mathrm{cond}})`, i.e. 1 to about 1e-4. The price of a
smaller ε: the regularised problem has condition ~1/ε, so two scalings of an exactly *singular*
metric come out at d_SR ~ 1e-16/ε (1e-6 at the default) instead of 0. The zero metric
(``tr G = 0``) has no shape: :math:`d_{SR}(0, 0) = 0`, :math:`d_{SR}(0, G) = 1` for ``G != 0``.
Everything is computed in float64 (Cholesky whitening :math:`L^{-1} G L^{-\top}` of the second
argument, then the extreme eigenvalues: closed form for m <= 2, ``eigvalsh`` otherwise).

MSA.

.. math:: d_{MSA}(\varphi^1, \varphi^2) = \frac{1}{\mathrm{Vol}(\mathcal{M})} \int_{\mathcal{M}}
   d_{SR}\big(G^1(p), G^2(p)\big)\, d\mathrm{vol}(p)

estimated on sample points with quadrature ``weights`` (default uniform: the points are samples of
the reference measure). Volume form (``volume=``):

- ``"reference"`` (default): the fixed measure given by ``weights``. Shared by all networks, so
  d_MSA is a pseudometric on networks (symmetric, triangle inequality) -- the right choice for
  similarity matrices.
- ``"first"``: :math:`\sqrt{\det G^1}` times ``weights``, the first network's Riemannian volume.
  Coordinate-free when ``weights`` = 1 / sampling density, but **not symmetric**:
  d(φ1, φ2) != d(φ2, φ1) in general.
- ``"mean"``: :math:`(\sqrt{\det G^1} + \sqrt{\det G^2})/2` times ``weights``: symmetric, but the
  measure changes with the pair, so the triangle inequality is no longer guaranteed.

Degenerate dimension (documented choice). On a 1-dimensional input manifold every pullback metric is
a :math:`1\times1` matrix, any two are proportional, and :math:`d_{SR} = 1 - \sqrt{\lambda/\lambda} = 0`
for every pair of non-zero metrics: MSA reads 0, "the same geometry", whatever the networks. A
comparison of networks on such a manifold (:func:`msa`, :func:`msa_matrix` from models and points)
is therefore refused with a ``ValueError`` -- a number known in advance is not a measurement, and a
warning beside a 0.000 is easily missed. Given ``1 x 1`` metrics directly (:func:`msa_from_metrics`,
:func:`msa_matrix_from_metrics`), the zeros are the spectral ratio's exact values (the caller may
want exactly that, e.g. to show the blindness), so those warn instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from hgutils.similarity.pullback import (
    mlp_pullback_metrics,
    module_layer_fn,
    pullback_metric,
)

DEFAULT_EPS = 1e-10
VOLUMES = ("reference", "first", "mean")

__all__ = [
    "DEFAULT_EPS",
    "VOLUMES",
    "spectral_ratio",
    "msa",
    "msa_from_metrics",
    "msa_matrix",
    "msa_matrix_from_metrics",
    "metric_isotropy",
]


_ONE_DIMENSIONAL = (
    "the input manifold is 1-dimensional, so every pullback metric is 1x1 and any two are proportional: "
    "d_SR = 1 - sqrt(lambda_min/lambda_max) = 0 for every pair (the spectral ratio is scale-blind), and MSA "
    "cannot tell networks apart"
)


def _refuse_one_dimensional(points: torch.Tensor, what: str) -> None:
    """``ValueError`` when ``points [P, m]`` are coordinates of a 1-dimensional manifold (module docstring)."""
    shape = tuple(torch.as_tensor(points).shape)
    if len(shape) == 2 and shape[-1] == 1:
        raise ValueError(
            f"{what}: points have shape {shape}: {_ONE_DIMENSIONAL}; compare on a manifold of dimension >= 2 "
            "(points [P, m >= 2], with embedding= a chart into the input space)"
        )


def _warn_one_dimensional(G: torch.Tensor, what: str) -> None:
    """A warning when the metrics are ``1 x 1`` (module docstring: degenerate dimension)."""
    if G.shape[-1] == 1:
        warnings.warn(
            f"{what}: 1x1 metrics: {_ONE_DIMENSIONAL} (only a zero metric, at distance 1, stands out)",
            UserWarning,
            stacklevel=3,
        )


def _check_metrics(G: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(G, torch.Tensor):
        G = torch.as_tensor(G)
    if G.ndim < 2 or G.shape[-1] != G.shape[-2] or G.shape[-1] == 0:
        raise ValueError(f"{name} must have shape [..., m, m] (square metric matrices); got {tuple(G.shape)}")
    if not torch.isfinite(G).all():
        raise ValueError(f"{name} contains NaN or inf")
    return G


def _regularise(G: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (R(G), tr G) with R(G) = sym(G) + eps·tr(G)/m·I, in float64."""
    G = G.to(torch.float64)
    G = 0.5 * (G + G.transpose(-1, -2))
    m = G.shape[-1]
    tr = G.diagonal(dim1=-2, dim2=-1).sum(-1)
    eye = torch.eye(m, dtype=G.dtype, device=G.device)
    return G + (eps * tr / m)[..., None, None] * eye, tr


def _extreme_eigs(C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(λ_min, λ_max) of symmetric ``[..., m, m]``; closed form for m <= 2."""
    m = C.shape[-1]
    if m == 1:
        v = C[..., 0, 0]
        return v, v
    if m == 2:
        a, b, c = C[..., 0, 0], 0.5 * (C[..., 0, 1] + C[..., 1, 0]), C[..., 1, 1]
        mid = 0.5 * (a + c)
        rad = torch.sqrt((0.5 * (a - c)) ** 2 + b * b)
        return mid - rad, mid + rad
    lam = torch.linalg.eigvalsh(0.5 * (C + C.transpose(-1, -2)))
    return lam[..., 0], lam[..., -1]


def _inv_chol(R: torch.Tensor, name: str) -> torch.Tensor:
    """L⁻¹ for R = L Lᵀ (batched); ValueError if some R is not positive definite."""
    L, info = torch.linalg.cholesky_ex(R)
    if (info != 0).any():
        raise ValueError(
            f"{name} must be positive semi-definite (a pullback metric JᵀJ); "
            f"{int((info != 0).sum())} matrices failed the Cholesky factorisation"
        )
    eye = torch.eye(R.shape[-1], dtype=R.dtype, device=R.device).expand_as(R)
    return torch.linalg.solve_triangular(L, eye, upper=False)


def _sr_from_whitened(A: torch.Tensor, trA: torch.Tensor, Linv_B: torch.Tensor, trB: torch.Tensor) -> torch.Tensor:
    C = Linv_B @ A @ Linv_B.transpose(-1, -2)
    lo, hi = _extreme_eigs(C)
    ratio = (lo.clamp_min(0.0) / hi.clamp_min(torch.finfo(hi.dtype).tiny)).clamp(0.0, 1.0)
    d = 1.0 - torch.sqrt(ratio)
    zA, zB = trA <= 0, trB <= 0
    d = torch.where(zA | zB, (zA ^ zB).to(d.dtype), d)
    return d


def _safe(R: torch.Tensor, tr: torch.Tensor) -> torch.Tensor:
    """Replace zero metrics by I so that factorisations stay finite (their d is set explicitly)."""
    eye = torch.eye(R.shape[-1], dtype=R.dtype, device=R.device)
    return torch.where((tr <= 0)[..., None, None], eye, R)


def spectral_ratio(G1: torch.Tensor, G2: torch.Tensor, eps: float = DEFAULT_EPS) -> torch.Tensor:
    r"""Spectral-ratio distance :math:`d_{SR}(G_1, G_2) = 1 - \sqrt{\lambda_{min}/\lambda_{max}}`.

    ``G1``, ``G2``: ``[..., m, m]`` symmetric PSD (batch dimensions broadcast). Returns ``[...]`` in
    [0, 1] with the dtype of ``G1`` (computed in float64). See the module docstring for the
    regularisation ``eps`` (scale-relative, ``R(G) = G + eps·tr(G)/m·I``).
    """
    G1 = _check_metrics(G1, "G1")
    G2 = _check_metrics(G2, "G2")
    if G1.shape[-1] != G2.shape[-1]:
        raise ValueError(
            f"G1 and G2 must be metrics on the same manifold dimension; got "
            f"{G1.shape[-1]}x{G1.shape[-1]} vs {G2.shape[-1]}x{G2.shape[-1]}"
        )
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0; got {eps}")
    out_dtype = torch.promote_types(G1.dtype, G2.dtype)
    if not out_dtype.is_floating_point:
        out_dtype = torch.get_default_dtype()
    A, trA = _regularise(G1, eps)
    B, trB = _regularise(G2, eps)
    A, B = torch.broadcast_tensors(A, B)
    trA, trB = torch.broadcast_tensors(trA, trB)
    if (trA < 0).any() or (trB < 0).any():
        raise ValueError("metrics must be positive semi-definite; found a negative trace")
    d = _sr_from_whitened(_safe(A, trA), trA, _inv_chol(_safe(B, trB), "G2"), trB)
    return d.to(out_dtype)


def metric_isotropy(G: torch.Tensor) -> torch.Tensor:
    r"""Isotropy :math:`\sqrt{\lambda_{min}(G)/\lambda_{max}(G)} \in [0, 1]` of each metric ``[..., m, m]`` (float64).

    Equals :math:`1 - d_{SR}(G, I)`, the spectral-ratio similarity to the Euclidean metric of the
    chart: 1 = conformal (the layer stretches every direction alike), 0 = singular (some direction
    collapsed). Two nearly isotropic metrics are close under :math:`d_{SR}` whatever their
    orientations -- :math:`d_{SR}(G, G') \le 1 - \iota(G)\,\iota(G')` by the triangle inequality
    of Hilbert's metric -- so the isotropy bounds how much MSA can tell two layers apart. The zero
    metric has isotropy 0.
    """
    G = _check_metrics(G, "G").to(torch.float64)
    lo, hi = _extreme_eigs(0.5 * (G + G.transpose(-1, -2)))
    ratio = lo.clamp_min(0.0) / hi.clamp_min(torch.finfo(torch.float64).tiny)
    return torch.where(hi > 0, ratio.clamp(0.0, 1.0).sqrt(), torch.zeros_like(hi))


def _volume_weights(G1: torch.Tensor, G2: torch.Tensor, weights: torch.Tensor | None, volume: str) -> torch.Tensor:
    P = G1.shape[0]
    if weights is None:
        w = torch.ones(P, dtype=torch.float64, device=G1.device)
    else:
        w = torch.as_tensor(weights, dtype=torch.float64, device=G1.device)
        if w.shape != (P,):
            raise ValueError(f"weights must have shape [P] = [{P}]; got {tuple(w.shape)}")
        if not torch.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
    if volume == "reference":
        return w
    sd1 = torch.sqrt(torch.linalg.det(G1.to(torch.float64)).clamp_min(0.0))
    if volume == "first":
        return w * sd1
    if volume == "mean":
        sd2 = torch.sqrt(torch.linalg.det(G2.to(torch.float64)).clamp_min(0.0))
        return w * 0.5 * (sd1 + sd2)
    raise ValueError(f"volume must be one of {VOLUMES}; got {volume!r}")


def msa_from_metrics(
    G1: torch.Tensor,
    G2: torch.Tensor,
    weights: torch.Tensor | None = None,
    *,
    volume: str = "reference",
    eps: float = DEFAULT_EPS,
) -> float:
    r"""d_MSA from precomputed pullback metrics ``[P, m, m]`` at the same points.

    :math:`\sum_p w_p\, d_{SR}(G^1_p, G^2_p) / \sum_p w_p` with ``w`` from ``volume`` (module docstring).
    """
    G1 = _check_metrics(G1, "G1").detach()
    G2 = _check_metrics(G2, "G2").detach()
    if G1.ndim != 3 or G1.shape != G2.shape:
        raise ValueError(
            f"G1 and G2 must both be [P, m, m] at the same points; got {tuple(G1.shape)} and {tuple(G2.shape)}"
        )
    _warn_one_dimensional(G1, "msa_from_metrics")
    w = _volume_weights(G1, G2, weights, volume)
    if w.sum() <= 0:
        raise ValueError(f"volume={volume!r} gives zero total volume (all metrics singular)")
    d = spectral_ratio(G1, G2, eps).to(torch.float64)
    return float((w * d).sum() / w.sum())


def msa(
    f1: Callable[[torch.Tensor], torch.Tensor],
    f2: Callable[[torch.Tensor], torch.Tensor],
    points: torch.Tensor,
    weights: torch.Tensor | None = None,
    embedding: Callable[[torch.Tensor], torch.Tensor] | None = None,
    *,
    volume: str = "reference",
    eps: float = DEFAULT_EPS,
    mode: str = "auto",
) -> float:
    r"""Metric similarity analysis distance :math:`d_{MSA}(f_1, f_2) \in [0, 1]` (0 = same intrinsic geometry).

    ``f1``, ``f2`` map a batch of points ``[P, n_in]`` to ``[P, D]`` and one point ``[n_in]`` to
    ``[D]`` (the output widths may differ); ``points`` are ``[P, m]`` manifold coordinates,
    ``embedding`` the optional chart map ``[m] -> [n_in]``. ``weights`` are quadrature weights of
    the reference measure (default: uniform over the points). ``1 - msa(...)`` is a similarity.
    Points of a 1-dimensional manifold (``[P, 1]``) are refused: there every pair reads 0 (module
    docstring, degenerate dimension).
    """
    if volume not in VOLUMES:
        raise ValueError(f"volume must be one of {VOLUMES}; got {volume!r}")
    _refuse_one_dimensional(points, "msa")
    G1 = pullback_metric(f1, points, embedding, mode=mode)
    G2 = pullback_metric(f2, points, embedding, mode=mode)
    return msa_from_metrics(G1, G2, weights, volume=volume, eps=eps)


def msa_matrix_from_metrics(
    metrics: torch.Tensor,
    weights: torch.Tensor | None = None,
    *,
    volume: str = "reference",
    eps: float = DEFAULT_EPS,
    pair_chunk: int = 64,
) -> np.ndarray:
    """All-pairs d_MSA ``[M, M]`` from metrics ``[M, P, m, m]`` of M models at the same P points.

    Each model is regularised and Cholesky-whitened once; the pairs then cost one small
    ``m x m`` congruence and extreme-eigenvalue solve per point (O(M²·P) tiny problems, batched
    ``pair_chunk`` pairs at a time). Row i, column j is d(i, j) (``volume="first"`` uses model i's
    volume, so that matrix is not symmetric).
    """
    G = _check_metrics(metrics, "metrics")
    if G.ndim != 4:
        raise ValueError(f"metrics must have shape [M, P, m, m]; got {tuple(G.shape)}")
    if volume not in VOLUMES:
        raise ValueError(f"volume must be one of {VOLUMES}; got {volume!r}")
    _warn_one_dimensional(G, "msa_matrix_from_metrics")
    M, P = G.shape[:2]
    R, tr = _regularise(G, eps)
    if (tr < 0).any():
        raise ValueError("metrics must be positive semi-definite; found a negative trace")
    Rs = _safe(R, tr)
    Linv = _inv_chol(Rs, "metrics")
    sqrt_det = torch.sqrt(torch.linalg.det(G.to(torch.float64)).clamp_min(0.0))  # [M, P]
    base = _volume_weights(G[0], G[0], weights, "reference")
    D = np.zeros((M, M))
    symmetric = volume != "first"
    pairs = [(i, j) for i in range(M) for j in range(M) if (i < j if symmetric else i != j)]
    for s in range(0, len(pairs), pair_chunk):
        chunk = pairs[s : s + pair_chunk]
        ii = torch.tensor([p[0] for p in chunk])
        jj = torch.tensor([p[1] for p in chunk])
        d = _sr_from_whitened(Rs[ii], tr[ii], Linv[jj], tr[jj])  # [C, P]
        if volume == "reference":
            w = base.expand_as(d)
        elif volume == "first":
            w = base * sqrt_det[ii]
        else:
            w = base * 0.5 * (sqrt_det[ii] + sqrt_det[jj])
        vals = (w * d).sum(-1) / w.sum(-1).clamp_min(torch.finfo(torch.float64).tiny)
        for (i, j), v in zip(chunk, vals.tolist()):
            D[i, j] = v
            if symmetric:
                D[j, i] = v
    return D


def msa_matrix(
    models: dict[str, torch.Tensor] | Sequence | torch.Tensor,
    points: torch.Tensor | None = None,
    layer: int | str | None = None,
    *,
    weights: torch.Tensor | None = None,
    embedding: Callable[[torch.Tensor], torch.Tensor] | None = None,
    volume: str = "reference",
    eps: float = DEFAULT_EPS,
    activation: str = "relu",
    mode: str = "auto",
) -> np.ndarray:
    """All-pairs d_MSA matrix ``[M, M]`` (0 on the diagonal; ``1 - D`` is the similarity matrix).

    ``models`` is one of

    - a stacked-MLP parameter dict (``hgutils.weightspace.stacked_mlp``, ``"W0": [M, out, in]``, ...)
      with ``layer`` = hidden-layer index: all M Jacobians come from one batched pass;
    - a sequence of callables ``f`` (``[n_in] -> [D]``) or ``nn.Module`` s (``layer`` selects the
      part, see :func:`~hgutils.similarity.module_layer_fn`);
    - a precomputed metric tensor ``[M, P, m, m]`` (``points`` unused).

    Each model's metrics are computed once (O(M·P) Jacobians), then
    :func:`msa_matrix_from_metrics` does the O(M²·P) small eigenproblems.
    """
    if isinstance(models, torch.Tensor):
        metrics = models
    else:
        if points is None:
            raise ValueError("points [P, m] are required unless models is a metric tensor")
        _refuse_one_dimensional(points, "msa_matrix")
        if isinstance(models, dict):
            if not isinstance(layer, int):
                raise ValueError(f"stacked-MLP models need an integer layer; got {layer!r}")
            metrics = mlp_pullback_metrics(models, points, layer, embedding=embedding, activation=activation)
        else:
            fs = [module_layer_fn(m, layer) if isinstance(m, nn.Module) else m for m in models]
            if not all(callable(f) for f in fs):
                raise ValueError(
                    "models must be callables, nn.Modules, a stacked-MLP dict or a [M, P, m, m] metric tensor"
                )
            metrics = torch.stack([pullback_metric(f, points, embedding, mode=mode) for f in fs])
    return msa_matrix_from_metrics(metrics.detach(), weights, volume=volume, eps=eps)
