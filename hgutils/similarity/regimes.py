r"""Regime diagnostics of trained networks: did the features move (rich) or stay (lazy)?

- :func:`relative_weight_change` -- :math:`\|W - W_0\|_F / \|W_0\|_F` per network (one or several
  weight matrices taken together);
- :func:`hidden_kernel` -- the centred hidden-layer (conjugate) kernel :math:`K = H_c H_c^\top`;
- :func:`tangent_kernel` -- the empirical neural tangent kernel
  :math:`\Theta(x, x') = \sum_k \langle \nabla_\theta f_k(x), \nabla_\theta f_k(x')\rangle`;
- :func:`kernel_alignment` -- alignment of a kernel before and after training (1 = the kernel did
  not change direction: lazy);
- :func:`label_alignment` -- alignment of a hidden kernel with the label kernel :math:`Y_c Y_c^\top`.

Alignment :math:`A(K, K') = \langle K, K'\rangle_F / (\|K\|_F \|K'\|_F)` (Cristianini et al. 2001).
Lazy training keeps the tangent kernel at its initial value (Jacot et al. 2018, arXiv:1806.07572;
Chizat, Oyallon & Bach 2019, "On Lazy Training in Differentiable Programming", arXiv:1812.07956);
its change over training (1 − alignment, the "kernel distance" of Fort et al. 2020,
arXiv:2010.15110) measures feature learning, and rich training aligns the kernels with the labels
(Baratin et al. 2021, arXiv:2008.00938).

Every function that runs the network takes its ``activation`` (as
:func:`hgutils.weightspace.stacked_mlp.mlp_forward` does); nothing assumes ReLU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from hgutils.weightspace.stacked_mlp import _activation, check_params, mlp_forward

Activation = str | Callable[[torch.Tensor], torch.Tensor]


def relative_weight_change(
    p0: dict[str, torch.Tensor], p1: dict[str, torch.Tensor], key: str | Sequence[str] = "W0"
) -> torch.Tensor:
    r"""Per network :math:`\|W - W_0\|_F / \|W_0\|_F`: ``[N]``.

    ``key`` names one parameter (``"W0"``) or several (``("W0", "W1")``), which are then taken
    together as one vector (e.g. all hidden-layer weights).
    """
    keys = [key] if isinstance(key, str) else list(key)
    missing = [k for k in keys if k not in p0 or k not in p1]
    if not keys or missing:
        raise ValueError(f"key must name parameters present in both dicts; missing {missing or keys}")
    a = torch.cat([p0[k].flatten(1) for k in keys], 1).double()
    b = torch.cat([p1[k].flatten(1) for k in keys], 1).double()
    return ((b - a).norm(dim=1) / a.norm(dim=1)).float()


def hidden_kernel(
    params: dict[str, torch.Tensor], X: torch.Tensor, layer: int = 0, activation: Activation = "relu"
) -> torch.Tensor:
    r"""Centred hidden-layer (conjugate) kernel :math:`K = H_c H_c^\top` per network: ``[N, n, n]``.

    ``H`` = post-activation of hidden layer ``layer`` (``activation`` as in ``mlp_forward``).
    """

    with torch.no_grad():
        H = mlp_forward(params, X, activation, layer=layer).double()
        H = H - H.mean(1, keepdim=True)
        return H @ H.transpose(1, 2)


def _derivative(activation: Activation, z: torch.Tensor) -> torch.Tensor:
    """Elementwise :math:`\\sigma'(z)` of an elementwise activation, by autograd."""

    act = _activation(activation, None)
    with torch.enable_grad():
        z = z.detach().requires_grad_(True)
        (d,) = torch.autograd.grad(act(z).sum(), z)
    return d


def tangent_kernel(params: dict[str, torch.Tensor], X: torch.Tensor, activation: Activation = "relu") -> torch.Tensor:
    r"""Empirical neural tangent kernel of each stacked MLP, traced over outputs: ``[N, n, n]`` (float64).

    .. math:: \Theta(x, x') = \sum_k \langle \nabla_\theta f_k(x), \nabla_\theta f_k(x')\rangle
       = \sum_l \langle D_l(x), D_l(x')\rangle_F\,\big(\langle h_l(x), h_l(x')\rangle + 1\big),

    over all weights and biases, where :math:`h_l` is the input of linear layer ``l`` and
    :math:`D_l = \partial f / \partial z_{l+1}` (``[K, d_{l+1}]``) is back-propagated as
    :math:`D_{l-1} = (D_l W_l) \odot \sigma'(z_l)` from :math:`D_{L-1} = I_K` (Jacot et al. 2018,
    arXiv:1806.07572). ``activation`` must act elementwise.
    """

    N, sizes = check_params(params)
    L = len(sizes) - 1
    P = {k: v.detach().double() for k, v in params.items()}
    x = torch.as_tensor(X).detach().double()
    if x.ndim != 2 or x.shape[1] != sizes[0]:
        raise ValueError(f"X must be [n, {sizes[0]}] (inputs shared by all networks); got {tuple(x.shape)}")
    act = _activation(activation, None)
    hs, zs = [x.expand(N, *x.shape)], []
    for l in range(L):
        z = hs[-1] @ P[f"W{l}"].transpose(1, 2) + P[f"b{l}"][:, None]
        zs.append(z)
        hs.append(act(z) if l < L - 1 else z)
    K = sizes[-1]
    D = torch.eye(K, dtype=torch.float64).expand(N, x.shape[0], K, K)  # df/dz_L
    theta = torch.zeros(N, x.shape[0], x.shape[0], dtype=torch.float64)
    for l in reversed(range(L)):
        gd = torch.einsum("npkd,nqkd->npq", D, D)
        gh = hs[l] @ hs[l].transpose(1, 2) + 1.0
        theta += gd * gh
        if l > 0:
            D = torch.einsum("npkd,nde->npke", D, P[f"W{l}"]) * _derivative(activation, zs[l - 1])[:, :, None, :]
    return theta


def _alignment(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return (A * B).sum((-2, -1)) / (A.flatten(-2).norm(dim=-1) * B.flatten(-2).norm(dim=-1)).clamp_min(1e-300)


def kernel_alignment(
    p0: dict[str, torch.Tensor],
    p1: dict[str, torch.Tensor],
    X: torch.Tensor,
    layer: int = 0,
    activation: Activation = "relu",
    kind: str = "hidden",
) -> torch.Tensor:
    r"""Alignment of each network's kernel before and after training, ``[N]`` in [0, 1].

    :math:`A(K_0, K_1) = \langle K_0, K_1\rangle_F / (\|K_0\|_F \|K_1\|_F)`: 1 = the kernel only
    rescaled (lazy: the features are frozen), smaller = the features moved (rich). ``kind``:
    ``"hidden"`` -- the centred conjugate kernel of hidden layer ``layer`` (:func:`hidden_kernel`);
    ``"tangent"`` -- the neural tangent kernel of the whole network (:func:`tangent_kernel`;
    ``layer`` unused).
    """
    if kind == "hidden":
        return _alignment(hidden_kernel(p0, X, layer, activation), hidden_kernel(p1, X, layer, activation)).float()
    if kind == "tangent":
        return _alignment(tangent_kernel(p0, X, activation), tangent_kernel(p1, X, activation)).float()
    raise ValueError(f"kind must be 'hidden' or 'tangent'; got {kind!r}")


def label_alignment(
    params: dict[str, torch.Tensor],
    X: torch.Tensor,
    y: torch.Tensor,
    n_classes: int,
    layer: int = 0,
    activation: Activation = "relu",
) -> torch.Tensor:
    r"""Alignment of the hidden kernel with the label kernel :math:`Y_cY_c^\top` (centred one-hot), ``[N]``."""
    Yc = torch.nn.functional.one_hot(y, n_classes).double()
    Yc = Yc - Yc.mean(0)
    return _alignment(hidden_kernel(params, X, layer, activation), Yc @ Yc.T).float()
