r"""Regime diagnostics of trained networks: did the features move (rich) or stay (lazy)?

- :func:`relative_weight_change` -- :math:`\|W - W_0\|_F / \|W_0\|_F` per network;
- :func:`hidden_kernel` -- the centred hidden-layer (conjugate) kernel :math:`K = H_c H_c^\top`;
- :func:`kernel_alignment` -- alignment of the kernels before and after training (1 = frozen features);
- :func:`label_alignment` -- alignment of a hidden kernel with the label kernel :math:`Y_c Y_c^\top`.

Alignment :math:`A(K, K') = \langle K, K'\rangle_F / (\|K\|_F \|K'\|_F)` (Cristianini et al. 2001);
used as lazy/rich checks by Chizat, Oyallon & Bach (2019), "On Lazy Training in Differentiable
Programming" (arXiv:1812.07956), and Fort et al. (2020).
"""

from __future__ import annotations

import torch


def relative_weight_change(p0: dict[str, torch.Tensor], p1: dict[str, torch.Tensor], key: str = "W0") -> torch.Tensor:
    r"""Per network :math:`\|W - W_0\|_F / \|W_0\|_F` of parameter ``key``: ``[N]``."""
    a, b = p0[key].flatten(1), p1[key].flatten(1)
    return (b - a).norm(dim=1) / a.norm(dim=1)


def hidden_kernel(params: dict[str, torch.Tensor], X: torch.Tensor, layer: int = 0) -> torch.Tensor:
    """Centred hidden-layer (conjugate) kernel :math:`K = H_c H_c^\top` per network: ``[N, n, n]``."""
    from hgutils.weightspace.stacked import mlp_forward

    with torch.no_grad():
        H = mlp_forward(params, X, layer=layer).double()
        H = H - H.mean(1, keepdim=True)
        return H @ H.transpose(1, 2)


def _alignment(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return (A * B).sum((-2, -1)) / (A.flatten(-2).norm(dim=-1) * B.flatten(-2).norm(dim=-1)).clamp_min(1e-300)


def kernel_alignment(
    p0: dict[str, torch.Tensor], p1: dict[str, torch.Tensor], X: torch.Tensor, layer: int = 0
) -> torch.Tensor:
    r"""Alignment of each network's hidden kernel before and after training, ``[N]`` in [0, 1].

    :math:`A(K_0, K_1) = \langle K_0, K_1\rangle_F / (\|K_0\|_F \|K_1\|_F)` of the centred kernels
    (:func:`hidden_kernel`): 1 = the kernel only rescaled (lazy: the features are frozen),
    smaller = the features moved (rich).
    """
    return _alignment(hidden_kernel(p0, X, layer), hidden_kernel(p1, X, layer)).float()


def label_alignment(
    params: dict[str, torch.Tensor], X: torch.Tensor, y: torch.Tensor, n_classes: int, layer: int = 0
) -> torch.Tensor:
    r"""Alignment of the hidden kernel with the label kernel :math:`Y_cY_c^\top` (centred one-hot), ``[N]``."""
    Yc = torch.nn.functional.one_hot(y, n_classes).double()
    Yc = Yc - Yc.mean(0)
    return _alignment(hidden_kernel(params, X, layer), Yc @ Yc.T).float()
