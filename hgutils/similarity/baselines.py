r"""Classic (extrinsic) representation-similarity measures with one calling convention.

Every measure is ``measure(X, Y, **options) -> float`` with ``X: [n, p]``, ``Y: [n, q]`` the responses
of two systems to the *same* ``n`` samples (features may differ), and returns a **similarity in
[0, 1]** (1 = identical up to the measure's invariances). ``*_matrix(reps)`` computes all pairs of a
list of representations. Inputs are validated once at the top (NumPy arrays or torch tensors; computed
in float64). Definitions (Kornblith et al. 2019, arXiv:1905.00414; Raghu et al. 2017, arXiv:1706.05806;
Kriegeskorte et al. 2008; Williams et al. 2021, arXiv:2110.14739):


================  ============================================================  ==========================
measure           formula (X, Y column-centred)                                 invariant to
================  ============================================================  ==========================
linear_cka        ‖YᵀX‖²_F / (‖XᵀX‖_F ‖YᵀY‖_F)                                  translation, isotropic
                                                                                scaling, orthogonal maps,
                                                                                feature permutation
cca_similarity    mean canonical correlation (or mean ρ²); optional ridge;      translation, any invertible
                  an error when features ≥ samples - 1 without one              linear map per side
svcca             CCA after projecting each side on the top SVD directions      translation, scaling,
                  that keep ``keep`` of the variance (at most                   orthogonal maps
                  ``max_components``)
rsa               correlation (Pearson/Spearman) of the upper triangles of      (euclidean RDM) translation,
                  the two RDMs (Euclidean or 1 − Pearson); negative → 0         isotropic scaling,
                                                                                orthogonal maps, feature
                                                                                permutation
procrustes_sim.   ‖XᵀY‖_* / (‖X‖_F ‖Y‖_F); angular distance = arccos            translation, isotropic
                                                                                scaling, orthogonal maps
================  ============================================================  ==========================

Non-invariances (tested): CKA and Procrustes change under non-orthogonal invertible linear maps,
RSA under anisotropic scaling, CCA under non-linear feature maps.

Chance level of CCA. For independent representations the canonical correlations are not near 0
unless samples far outnumber features. With ``n`` samples of ``p`` and ``q`` independent Gaussian
features and :math:`c_x = p/n`, :math:`c_y = q/n`, :math:`c_x + c_y < 1`, the squared canonical
correlations follow Wachter's (1980) law on :math:`[\lambda_-, \lambda_+]`,
:math:`\lambda_\pm = (\sqrt{c_x(1-c_y)} \pm \sqrt{c_y(1-c_x)})^2`; when ``p + q >= n - 1`` the two
centred column spaces intersect and at least ``p + q - n + 1`` canonical correlations equal 1 (for
n = 400, p = q = 256 the mean ρ of independent noise is about 0.74). A ridge does not cure this when
``n <= p``: isotropic noise then has about the same ridge-CCA similarity with an independent copy as
with itself, whatever the ridge. The remedy is to compare few directions: :func:`svcca` with
``max_components = k`` (Raghu et al. 2017) has a chance level of order :math:`\sqrt{k/n}` (0.12 for
k = 10, n = 400).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from scipy.stats import rankdata

__all__ = [
    "linear_cka",
    "cca_similarity",
    "canonical_correlations",
    "svcca",
    "rsa",
    "rdm",
    "procrustes_similarity",
    "procrustes_distance",
    "linear_cka_matrix",
    "cca_matrix",
    "svcca_matrix",
    "rsa_matrix",
    "procrustes_matrix",
    "similarity_matrix",
]

ArrayLike = np.ndarray


def _as_2d(X, name: str) -> np.ndarray:
    try:
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must have shape [samples, features]; got shape {X.shape}")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {X.shape})")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} contains NaN or inf")
    return X


def _check_pair(X, Y, min_samples: int = 2) -> tuple[np.ndarray, np.ndarray]:
    X, Y = _as_2d(X, "X"), _as_2d(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"X and Y must have the same number of samples (rows, [samples, features]); got X {X.shape} and Y {Y.shape}"
        )
    if X.shape[0] < min_samples:
        raise ValueError(f"need at least {min_samples} samples; got {X.shape[0]}")
    return X, Y


def _check_reps(reps: Sequence, min_samples: int = 2) -> list[np.ndarray]:
    arrs = [_as_2d(R, f"reps[{i}]") for i, R in enumerate(reps)]
    if not arrs:
        raise ValueError("reps must contain at least one representation")
    n = {a.shape[0] for a in arrs}
    if len(n) != 1:
        raise ValueError(f"all representations must have the same number of samples; got {sorted(n)}")
    if arrs[0].shape[0] < min_samples:
        raise ValueError(f"need at least {min_samples} samples; got {arrs[0].shape[0]}")
    return arrs


def _centre(X: np.ndarray) -> np.ndarray:
    return X - X.mean(axis=0, keepdims=True)


# --------------------------------------------------------------------------------------------
# CKA
# --------------------------------------------------------------------------------------------
def linear_cka(X, Y) -> float:
    r"""Linear CKA :math:`\|Y^\top X\|_F^2 / (\|X^\top X\|_F \|Y^\top Y\|_F)` of centred X, Y.

    Uses the feature form or the equivalent Gram form :math:`\langle K_X, K_Y\rangle/(\|K_X\|\|K_Y\|)`,
    whichever is smaller. A constant representation (zero after centring) has similarity 0.
    """
    X, Y = _check_pair(X, Y)
    X, Y = _centre(X), _centre(Y)
    n, p, q = X.shape[0], X.shape[1], Y.shape[1]
    if n < max(p, q):
        KX, KY = X @ X.T, Y @ Y.T
        num, nx, ny = float((KX * KY).sum()), np.linalg.norm(KX), np.linalg.norm(KY)
    else:
        num = float(np.linalg.norm(Y.T @ X) ** 2)
        nx, ny = np.linalg.norm(X.T @ X), np.linalg.norm(Y.T @ Y)
    if nx == 0 or ny == 0:
        return 0.0
    return float(np.clip(num / (nx * ny), 0.0, 1.0))


# --------------------------------------------------------------------------------------------
# CCA family
# --------------------------------------------------------------------------------------------
def _inv_sqrt_psd(C: np.ndarray, floor: float) -> np.ndarray:
    w, V = np.linalg.eigh(C)
    keep = w > floor
    return (V[:, keep] / np.sqrt(w[keep])) @ V[:, keep].T


def _check_reg(n: int, width: int, reg: float) -> float:
    reg = float(reg)
    if not reg >= 0:
        raise ValueError(f"reg must be >= 0; got {reg}")
    if reg == 0 and width >= n - 1:
        raise ValueError(
            f"too few samples for unregularised CCA: need samples - 1 > features, got {n} samples and "
            f"{width} features (every direction would correlate perfectly); pass reg > 0 for ridge CCA, "
            "or compare fewer directions with svcca(..., max_components=k), k < samples - 1"
        )
    return reg


def _cca_whiten(X: np.ndarray, reg: float) -> tuple[np.ndarray, int]:
    """(Z, rank): centred X times (C_xx + ridge)^(-1/2) / sqrt(n - 1), so CCA = svd(Z_xᵀ Z_y)."""
    n, p = X.shape
    Xc = _centre(X)
    C = Xc.T @ Xc / (n - 1)
    t = np.trace(C)
    if t <= 0:
        return np.zeros((n, 0)), 0
    W = _inv_sqrt_psd(C + reg * t / p * np.eye(p), 1e-10 * t / p)
    return Xc @ W / np.sqrt(n - 1), int(np.linalg.matrix_rank(Xc))


def _cca_from_whitened(a: tuple[np.ndarray, int], b: tuple[np.ndarray, int]) -> np.ndarray:
    k = min(a[1], b[1])
    if k == 0:
        return np.zeros(0)
    return np.clip(np.linalg.svd(a[0].T @ b[0], compute_uv=False)[:k], 0.0, 1.0)


def canonical_correlations(X, Y, reg: float = 0.0) -> np.ndarray:
    r"""Canonical correlations :math:`\rho_1 \ge \dots \ge \rho_k`, k = min(rank X, rank Y) of the centred data.

    Singular values of :math:`C_{xx}^{-1/2} C_{xy} C_{yy}^{-1/2}` with ridge
    :math:`C_{xx} + r\,\mathrm{tr}(C_{xx})/p\,I` (``r = reg``; with a ridge, CCA(X, X) < 1).
    Unregularised (``reg=0``) CCA with features ≥ samples - 1 is trivially 1 and raises a
    ``ValueError``. See the module docstring for the chance level. Needs at least 3 samples.
    """
    X, Y = _check_pair(X, Y, min_samples=3)
    reg = _check_reg(X.shape[0], max(X.shape[1], Y.shape[1]), reg)
    return _cca_from_whitened(_cca_whiten(X, reg), _cca_whiten(Y, reg))


def cca_similarity(X, Y, reg: float = 0.0, squared: bool = False) -> float:
    r"""Mean canonical correlation :math:`\frac1k\sum_i \rho_i` (``squared``: mean :math:`\rho_i^2`).

    See :func:`canonical_correlations` for ``reg`` (needed when features ≥ samples - 1).
    """
    rho = canonical_correlations(X, Y, reg)
    if rho.size == 0:
        return 0.0
    return float(np.mean(rho**2 if squared else rho))


def _svd_reduce(X: np.ndarray, keep: float | int, max_components: int | None = None) -> np.ndarray:
    Xc = _centre(X)
    U, s, _ = np.linalg.svd(Xc, full_matrices=False)
    if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool):
        k = int(min(keep, len(s)))
    else:
        var = s**2
        total = var.sum()
        if total == 0:
            return Xc[:, :1]
        k = int(np.searchsorted(np.cumsum(var) / total, keep - 1e-12) + 1)
    if max_components is not None:
        k = min(k, int(max_components))
    return U[:, :k] * s[:k]


def _check_keep(keep: float | int, max_components: int | None) -> None:
    if isinstance(keep, float) and not 0 < keep <= 1:
        raise ValueError(f"keep must be a variance fraction in (0, 1] or an int; got {keep}")
    if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool) and keep < 1:
        raise ValueError(f"keep must be >= 1 directions; got {keep}")
    if max_components is not None and (not isinstance(max_components, (int, np.integer)) or max_components < 1):
        raise ValueError(f"max_components must be a positive int or None; got {max_components!r}")


def svcca(X, Y, keep: float | int = 0.99, reg: float = 0.0, max_components: int | None = None) -> float:
    """SVCCA (Raghu et al. 2017, arXiv:1706.05806): project each side on its top singular directions, then mean CCA.

    ``keep`` in (0, 1] = fraction of variance kept (Raghu et al. keep 0.99); an int = number of
    directions; ``max_components`` caps the number of directions (the chance level of the mean
    canonical correlation grows like the square root of directions / samples: module docstring).
    """
    X, Y = _check_pair(X, Y, min_samples=3)
    _check_keep(keep, max_components)
    return cca_similarity(_svd_reduce(X, keep, max_components), _svd_reduce(Y, keep, max_components), reg=reg)


# --------------------------------------------------------------------------------------------
# RSA
# --------------------------------------------------------------------------------------------
RDMS = ("euclidean", "correlation")
CORRS = ("pearson", "spearman")


def rdm(X, kind: str = "euclidean") -> np.ndarray:
    """Representational dissimilarity matrix ``[n, n]``: Euclidean distances or 1 − Pearson r of rows."""
    X = _as_2d(X, "X")
    if kind == "euclidean":
        sq = (X**2).sum(1)
        D2 = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
        D = np.sqrt(D2)
    elif kind == "correlation":
        Z = X - X.mean(1, keepdims=True)
        nrm = np.linalg.norm(Z, axis=1, keepdims=True)
        Z = np.divide(Z, nrm, out=np.zeros_like(Z), where=nrm > 0)
        D = 1.0 - Z @ Z.T
    else:
        raise ValueError(f"rdm kind must be one of {RDMS}; got {kind!r}")
    np.fill_diagonal(D, 0.0)
    return D


def _corr(a: np.ndarray, b: np.ndarray, method: str) -> float:
    if method == "spearman":
        a, b = rankdata(a), rankdata(b)
    elif method != "pearson":
        raise ValueError(f"corr must be one of {CORRS}; got {method!r}")
    a, b = a - a.mean(), b - b.mean()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0
    return float(a @ b / (na * nb))


def rsa(X, Y, rdm_kind: str = "euclidean", corr: str = "pearson") -> float:
    """RSA: correlation of the upper triangles of the two RDMs, clipped to [0, 1].

    ``rdm_kind``: ``"euclidean"`` or ``"correlation"`` (1 − Pearson r between samples); ``corr``:
    ``"pearson"`` or ``"spearman"``. Negative RDM correlations (anti-related geometry, rare) are
    reported as 0 so that all measures share the [0, 1] range. Needs at least 3 samples.
    """
    X, Y = _check_pair(X, Y, min_samples=3)
    if corr not in CORRS:
        raise ValueError(f"corr must be one of {CORRS}; got {corr!r}")
    iu = np.triu_indices(X.shape[0], k=1)
    return float(np.clip(_corr(rdm(X, rdm_kind)[iu], rdm(Y, rdm_kind)[iu], corr), 0.0, 1.0))


# --------------------------------------------------------------------------------------------
# Procrustes
# --------------------------------------------------------------------------------------------
def procrustes_similarity(X, Y) -> float:
    r"""Procrustes similarity :math:`\|X^\top Y\|_* / (\|X\|_F \|Y\|_F)` of centred X, Y (in [0, 1]).

    Equals :math:`\max_Q \langle X, YQ\rangle/(\|X\|\|Y\|)` over orthogonal Q (widths may differ:
    the narrower side is zero-padded implicitly). A constant representation has similarity 0.
    """
    X, Y = _check_pair(X, Y)
    X, Y = _centre(X), _centre(Y)
    nx, ny = np.linalg.norm(X), np.linalg.norm(Y)
    if nx == 0 or ny == 0:
        return 0.0
    s = np.linalg.svd(X.T @ Y, compute_uv=False)
    return float(np.clip(s.sum() / (nx * ny), 0.0, 1.0))


def procrustes_distance(X, Y) -> float:
    """Angular Procrustes distance ``arccos(procrustes_similarity(X, Y))`` in [0, π/2]."""
    return float(np.arccos(procrustes_similarity(X, Y)))


# --------------------------------------------------------------------------------------------
# all pairs
# --------------------------------------------------------------------------------------------
def similarity_matrix(measure: Callable[..., float], reps: Sequence, symmetric: bool = True, **kwargs) -> np.ndarray:
    """``S[i, j] = measure(reps[i], reps[j], **kwargs)`` for a list of ``[n, p_i]`` representations.

    All representations must share the sample count; they are validated once up front. Symmetric
    measures compute only ``i <= j``.
    """
    arrs = _check_reps(reps)
    M = len(arrs)
    S = np.zeros((M, M))
    for i in range(M):
        for j in range(i if symmetric else 0, M):
            S[i, j] = measure(arrs[i], arrs[j], **kwargs)
            if symmetric:
                S[j, i] = S[i, j]
    return S


def linear_cka_matrix(reps: Sequence) -> np.ndarray:
    """All-pairs :func:`linear_cka` (centred Gram matrices computed once per representation)."""
    arrs = [_centre(a) for a in _check_reps(reps)]
    K = np.stack([a @ a.T for a in arrs]).reshape(len(arrs), -1)
    nrm = np.linalg.norm(K, axis=1)
    inner = K @ K.T
    denom = np.outer(nrm, nrm)
    S = np.divide(inner, denom, out=np.zeros_like(inner), where=denom > 0)
    return np.clip(S, 0.0, 1.0)


def cca_matrix(reps: Sequence, reg: float = 0.0, squared: bool = False) -> np.ndarray:
    """All-pairs :func:`cca_similarity`, whitening each representation once.

    Unregularised (``reg=0``) needs every representation narrower than samples - 1.
    """
    arrs = _check_reps(reps, min_samples=3)
    r = _check_reg(arrs[0].shape[0], max(a.shape[1] for a in arrs), reg)
    white = [_cca_whiten(a, r) for a in arrs]
    M = len(arrs)
    S = np.zeros((M, M))
    for i in range(M):
        for j in range(i, M):
            rho = _cca_from_whitened(white[i], white[j])
            S[i, j] = S[j, i] = 0.0 if rho.size == 0 else float(np.mean(rho**2 if squared else rho))
    return S


def svcca_matrix(
    reps: Sequence, keep: float | int = 0.99, reg: float = 0.0, max_components: int | None = None
) -> np.ndarray:
    """All-pairs :func:`svcca` (each representation SVD-reduced and whitened once)."""
    arrs = _check_reps(reps, min_samples=3)
    _check_keep(keep, max_components)
    return cca_matrix([_svd_reduce(a, keep, max_components) for a in arrs], reg=reg)


def rsa_matrix(reps: Sequence, rdm_kind: str = "euclidean", corr: str = "pearson") -> np.ndarray:
    """All-pairs :func:`rsa` (each RDM computed once)."""
    arrs = _check_reps(reps, min_samples=3)
    if corr not in CORRS:
        raise ValueError(f"corr must be one of {CORRS}; got {corr!r}")
    iu = np.triu_indices(arrs[0].shape[0], k=1)
    V = np.stack([rdm(a, rdm_kind)[iu] for a in arrs])
    if corr == "spearman":
        V = np.stack([rankdata(v) for v in V])
    V = V - V.mean(1, keepdims=True)
    nrm = np.linalg.norm(V, axis=1)
    inner = V @ V.T
    denom = np.outer(nrm, nrm)
    S = np.divide(inner, denom, out=np.zeros_like(inner), where=denom > 0)
    return np.clip(S, 0.0, 1.0)


def _principal_factor(X: np.ndarray, tol: float) -> np.ndarray:
    """``U_k S_k`` of the centred ``X``: its top principal directions, dropping the smallest ones that
    together carry at most ``tol`` of the variance (``tol=0``: the centred data itself)."""
    Xc = _centre(X)
    if tol == 0:
        return Xc
    U, s, _ = np.linalg.svd(Xc, full_matrices=False)
    tail = np.cumsum((s**2)[::-1])[::-1]  # tail[k] = variance in directions k, k+1, ...
    k = max(1, int(np.sum(tail > tol * tail[0]))) if tail[0] > 0 else 1
    return U[:, :k] * s[:k]


def procrustes_matrix(reps: Sequence, tol: float = 0.0) -> np.ndarray:
    r"""All-pairs :func:`procrustes_similarity`.

    With ``tol > 0`` each representation keeps only its top principal directions, dropping those
    that together carry at most a fraction ``tol`` of its variance (each side factored once; the
    pair then costs an SVD of a :math:`k_X \times k_Y` matrix instead of :math:`p \times q`). Since
    :math:`\|X_r^\top Y\|_* \le \|X_r\|_F \|Y\|_F`, every entry moves by at most
    :math:`2\sqrt{\mathrm{tol}}` (the normalisation uses the full norms); ``tol = 1e-12`` keeps the
    error below 2e-6, far below the float32 rounding of typical activations.
    """
    if not 0 <= tol < 1:
        raise ValueError(f"tol must be a variance fraction in [0, 1); got {tol}")
    arrs = _check_reps(reps)
    if tol == 0:
        return similarity_matrix(procrustes_similarity, arrs)
    norms = [float(np.linalg.norm(_centre(a))) for a in arrs]
    Z = [_principal_factor(a, tol) for a in arrs]
    M = len(arrs)
    S = np.zeros((M, M))
    for i in range(M):
        for j in range(i, M):
            if norms[i] == 0 or norms[j] == 0:
                continue
            nuc = np.linalg.svd(Z[i].T @ Z[j], compute_uv=False).sum()
            S[i, j] = S[j, i] = float(np.clip(nuc / (norms[i] * norms[j]), 0.0, 1.0))
    return S
