r"""Reading symmetries out of trained weights: Gram observation functions and readout scores.

Model: :math:`f_\theta(x) = F_\theta(\varphi(x))`, with :math:`F_\theta` an MLP stored as a stacked
parameter dict (``"W0" [N, h_1, d]``, ``"b0"``, ``"W1" [N, h_2, h_1]``, ...; see
:mod:`hgutils.weightspace.stacked_mlp`; a single network's ``[out, in]`` matrices are accepted too).

Observation functions (data-free, in PE-feature space :math:`\mathbb{R}^d`)
---------------------------------------------------------------------------
*Prefix Gram* of depth ``k`` (``k = 1..L``):

.. math::
    A_k = W_{k-1} W_{k-2} \cdots W_0 \in \mathbb{R}^{h_k \times d}, \qquad \Gamma_k = A_k^\top A_k .

:math:`\Gamma_1 = W_0^\top W_0` is the first-layer Gram. The paper's definition of its prefix Grams is
cut off; we take the product of the first ``k`` linear maps and *ignore the nonlinearities*, because
(i) on any ReLU activation region the Jacobian :math:`\partial h_k/\partial\varphi` is
:math:`D_{k-1}W_{k-1}\cdots D_1 W_1 D_0 W_0` with 0/1 diagonal masks :math:`D_l`, and the prefix product
is the data-free version with every unit active (no input points needed, like :math:`\Gamma_1`);
(ii) the product telescopes under hidden-unit permutations :math:`W_l \mapsto P_{l+1} W_l P_l^\top`
(:math:`A_k \mapsto P_k A_k`) and under positive rescalings of inner units
(:math:`W_l \mapsto S_{l+1} W_l S_l^{-1}`, which ReLU tolerates), so :math:`\Gamma_k` is invariant to
hidden-neuron permutations of every layer and to inner rescalings of layers before ``k``; (iii) it lives
in the PE feature space, where the lift :math:`\rho(g)` acts. Biases are left out: they do not
multiply :math:`\varphi(x)`.

Readout score
-------------
If :math:`F` is exactly invariant through its first ``k`` linear maps, :math:`A_k\rho(g) = Q A_k` for an
orthogonal :math:`Q`, hence :math:`\rho(g)^\top\Gamma_k\rho(g) = \Gamma_k`. The scores measure how well
that holds:

.. math::
    s_F(g) = 1 - \frac{\|\rho^\top\Gamma\rho - \Gamma\|_F}{\|\Gamma\|_F},
    \qquad
    s_{\cos}(g) = \frac{\langle\rho^\top\Gamma\rho, \Gamma\rangle_F}{\|\rho^\top\Gamma\rho\|_F\,\|\Gamma\|_F}.

Both are 1 for an exact Gram symmetry and invariant to the scale of :math:`\Gamma`; :math:`s_{\cos}` is
also invariant to the scale of :math:`\rho` (a least-squares lift of a non-liftable element shrinks
towards 0, which drives :math:`s_F` towards 0 even when the *pattern* of :math:`\Gamma` were preserved).
For orthogonal :math:`\rho`, :math:`s_F \in [-1, 1]` and :math:`s_{\cos} \in [-1, 1]`.

Functional score (ground truth)
-------------------------------
:math:`s_f(g) = 1 - \|f(gX) - f(X)\|_2 / \|f(X) - \overline{f(X)}\|_2` over evaluation points
:math:`X` (from an O(2)-invariant distribution): 1 for an exactly ``g``-invariant function, about
:math:`1-\sqrt2` when :math:`f(gx)` and :math:`f(x)` are unrelated draws of the same distribution.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from hgutils.symmetry.encodings import FourierPE
from hgutils.symmetry.groups import GroupElement
from hgutils.weightspace.stacked_mlp import check_params, mlp_forward

__all__ = [
    "VARIANTS",
    "as_stacked",
    "prefix_products",
    "prefix_gram",
    "gram_observations",
    "readout_score",
    "readout_profile",
    "functional_score",
    "functional_profile",
    "permute_hidden",
]

VARIANTS: tuple[str, ...] = ("frobenius", "cosine")


def as_stacked(params: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Accept a stacked dict (``W [N, out, in]``) or one network's (``W [out, in]``); return stacked."""
    if "W0" not in params:
        raise ValueError(f"params must hold keys 'W0', 'b0', ...; got keys {sorted(params)}")
    if params["W0"].dim() == 2:
        out = {k: v.unsqueeze(0) for k, v in params.items()}
    else:
        out = dict(params)
    check_params(out)
    return out


def prefix_products(params: Mapping[str, Tensor]) -> list[Tensor]:
    r"""``[A_1, ..., A_L]`` with :math:`A_k = W_{k-1}\cdots W_0` (``[N, h_k, d]``, float64)."""
    p = as_stacked(params)
    _, sizes = check_params(p)
    out, a = [], None
    for l in range(len(sizes) - 1):
        w = p[f"W{l}"].detach().to(torch.float64)
        a = w if a is None else w @ a
        out.append(a)
    return out


def prefix_gram(params: Mapping[str, Tensor], k: int) -> Tensor:
    r"""Prefix Gram :math:`\Gamma_k = A_k^\top A_k` (``[N, d, d]``, float64), ``1 <= k <= L``."""
    a = prefix_products(params)
    if not isinstance(k, int) or not 1 <= k <= len(a):
        raise ValueError(f"prefix depth k must be an int in [1, {len(a)}]; got {k!r}")
    return a[k - 1].transpose(-1, -2) @ a[k - 1]


def gram_observations(params: Mapping[str, Tensor], ks: Sequence[int] | None = None) -> dict[str, Tensor]:
    """``{"prefix{k}": Γ_k}`` for ``ks`` (default ``1..L-1``, the hidden layers); ``prefix1`` is W₀ᵀW₀."""
    a = prefix_products(params)
    L = len(a)
    ks = list(range(1, max(L, 2))) if ks is None else list(ks)
    for k in ks:
        if not isinstance(k, int) or not 1 <= k <= L:
            raise ValueError(f"prefix depths must be ints in [1, {L}]; got {ks}")
    return {f"prefix{k}": a[k - 1].transpose(-1, -2) @ a[k - 1] for k in ks}


def readout_score(gamma: Tensor, rho: Tensor, variant: str = "frobenius") -> Tensor:
    r"""Score of one lifted element ``rho [d, d]`` on Grams ``gamma [..., d, d]`` → ``[...]`` float64.

    ``"frobenius"``: :math:`1 - \|\rho^\top\Gamma\rho - \Gamma\|_F/\|\Gamma\|_F`;
    ``"cosine"``: :math:`\langle\rho^\top\Gamma\rho, \Gamma\rangle_F/(\|\rho^\top\Gamma\rho\|_F\|\Gamma\|_F)`.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")
    if gamma.dim() < 2 or gamma.shape[-1] != gamma.shape[-2]:
        raise ValueError(f"gamma must be [..., d, d]; got shape {tuple(gamma.shape)}")
    if rho.shape != (gamma.shape[-1], gamma.shape[-1]):
        raise ValueError(f"rho must be [{gamma.shape[-1]}, {gamma.shape[-1]}] to match gamma; got {tuple(rho.shape)}")
    g = gamma.to(torch.float64)
    r = rho.to(torch.float64)
    moved = r.T @ g @ r
    gn = g.flatten(-2).norm(dim=-1)
    if variant == "frobenius":
        return 1.0 - (moved - g).flatten(-2).norm(dim=-1) / gn
    mn = moved.flatten(-2).norm(dim=-1)
    return (moved * g).sum((-1, -2)) / (mn * gn).clamp_min(torch.finfo(torch.float64).tiny)


def readout_profile(
    model: Mapping[str, Tensor],
    encoding: FourierPE,
    elements: Sequence[GroupElement],
    *,
    observation: str = "prefix1",
    variant: str = "frobenius",
) -> Tensor:
    """Readout scores ``[N, len(elements)]`` of stacked networks trained on ``encoding``'s features.

    ``observation`` is ``"prefix{k}"`` (see :func:`prefix_gram`); each element is lifted with
    ``encoding.lift`` (exact when liftable, least squares otherwise).
    """
    if not observation.startswith("prefix") or not observation[6:].isdigit():
        raise ValueError(f"observation must be 'prefix<k>' (e.g. 'prefix1'); got {observation!r}")
    p = as_stacked(model)
    d = p["W0"].shape[-1]
    if d != encoding.dim:
        raise ValueError(f"first layer takes {d} inputs but {encoding} outputs {encoding.dim} features")
    gamma = prefix_gram(p, int(observation[6:]))
    cols = [readout_score(gamma, encoding.lift(g)[0], variant) for g in elements]
    return torch.stack(cols, dim=-1)


def functional_score(f_x: Tensor, f_gx: Tensor) -> Tensor:
    r""":math:`1 - \|f(gX) - f(X)\| / \|f(X) - \overline{f(X)}\|` along the last (point) axis."""
    if f_x.shape != f_gx.shape:
        raise ValueError(f"f(x) and f(gx) must have the same shape; got {tuple(f_x.shape)} vs {tuple(f_gx.shape)}")
    a, b = f_x.to(torch.float64), f_gx.to(torch.float64)
    spread = (a - a.mean(-1, keepdim=True)).norm(dim=-1)
    return 1.0 - (b - a).norm(dim=-1) / spread.clamp_min(torch.finfo(torch.float64).tiny)


def functional_profile(
    model: Mapping[str, Tensor],
    encoding: FourierPE | Sequence[FourierPE],
    elements: Sequence[GroupElement],
    points: Tensor,
    *,
    activation: str = "relu",
) -> Tensor:
    """Functional scores ``[N, len(elements)]``: compare ``f(g x)`` with ``f(x)`` on ``points [P, 2]``.

    ``encoding`` may be one encoding for all ``N`` networks or a list of ``N`` (one per network).
    """
    p = as_stacked(model)
    N = p["W0"].shape[0]
    if points.dim() != 2 or points.shape[-1] != 2:
        raise ValueError(f"points must be [P, 2]; got shape {tuple(points.shape)}")
    encs = [encoding] * N if isinstance(encoding, FourierPE) else list(encoding)
    if len(encs) != N:
        raise ValueError(f"need one encoding per network ({N}); got {len(encs)}")
    dtype = p["W0"].dtype

    def run(x: Tensor) -> Tensor:
        feats = torch.stack([e(x.to(dtype)) for e in encs])  # [N, P, d]
        with torch.no_grad():
            return mlp_forward(p, feats, activation)[..., 0]

    f_x = run(points)
    cols = [functional_score(f_x, run(points @ g.matrix.to(points.dtype).T)) for g in elements]
    return torch.stack(cols, dim=-1)


def permute_hidden(params: Mapping[str, Tensor], perms: Sequence[Tensor]) -> dict[str, Tensor]:
    r"""Apply hidden-unit permutations ``perms[l]`` (for hidden layer ``l``) to a stacked MLP:
    :math:`W_l \mapsto P_{l+1} W_l P_l^\top`, :math:`b_l \mapsto P_{l+1} b_l`. The function is unchanged."""
    p = as_stacked(params)
    _, sizes = check_params(p)
    L = len(sizes) - 1
    if len(perms) != L - 1:
        raise ValueError(f"need one permutation per hidden layer ({L - 1}); got {len(perms)}")
    out = {k: v.clone() for k, v in p.items()}
    for l, perm in enumerate(perms):
        if sorted(perm.tolist()) != list(range(sizes[l + 1])):
            raise ValueError(f"perms[{l}] must be a permutation of range({sizes[l + 1]})")
        out[f"W{l}"] = out[f"W{l}"][:, perm, :]
        out[f"b{l}"] = out[f"b{l}"][:, perm]
        out[f"W{l + 1}"] = out[f"W{l + 1}"][:, :, perm]
    return out
