r"""Two recurrent architectures as stacked parameter dicts (``N`` independent networks at once).

Every parameter has a leading network axis ``N``; inputs ``[B, T, n_in]`` are shared by all networks
(or ``[N, B, T, n_in]``, one batch per network); states come out ``[N, B, T, D]``.

**Vanilla RNN** (Elman 1990), the neural-dynamics workhorse:

.. math:: h_t = \tanh(W h_{t-1} + U u_t + b), \qquad h_{-1} = 0, \qquad y_t = C h_t + d,

with :math:`W_{ij} \sim \mathcal N(0, g^2/H)` (``gain`` g; g = 1 is the edge of chaos, Sompolinsky
et al. 1988), :math:`U_{ij} \sim \mathcal N(0, 1/n_{in})`, :math:`C_{ij} \sim \mathcal N(0, 1/H)`,
zero biases. Its representation is :math:`h_t \in \mathbb{R}^H`.

**Structured state-space model**: one LRU layer (Orvieto et al. 2023, arXiv:2303.06349, §3), the
diagonal complex linear recurrence of S4D (Gu et al. 2022, arXiv:2206.11893) with a nonlinear readout:

.. math::

    x_t = \lambda \odot x_{t-1} + \gamma \odot (B u_t) \in \mathbb{C}^P, \quad
    \lambda_j = e^{-e^{\nu_j} + i e^{\phi_j}}, \quad \gamma_j = \sqrt{1 - |\lambda_j|^2},

    z_t = \mathrm{GELU}\big(\mathrm{Re}(C x_t) + D u_t + b\big) \in \mathbb{R}^H, \qquad y_t = W z_t + c.

:math:`|\lambda|` is drawn uniformly on the ring :math:`[r_{min}, r_{max}]` (uniform in
:math:`|\lambda|^2`) and the phase uniformly in :math:`[0, \text{max\_phase}]` (LRU's ring
initialisation), :math:`B \sim \mathcal N(0, 1/(2 n_{in}))` (real and imaginary parts),
:math:`C \sim \mathcal N(0, 1/P)`, :math:`D \sim \mathcal N(0, 1/n_{in})`, :math:`W \sim \mathcal N(0,
1/H)`. Its representation is the layer's output :math:`z_t` (what an SSM layer passes on; the state
:math:`x_t`, as :math:`(\mathrm{Re}\,x, \mathrm{Im}\,x) \in \mathbb{R}^{2P}`, is
:func:`ssm_state`). Complex numbers are carried as (real, imaginary) pairs.

The state has two implementations that agree to rounding (tested): :func:`ssm_scan_loop`, the step-by-step
recurrence, and :func:`ssm_scan`, a parallel (Hillis-Steele) scan computing the S4D/LRU convolution
:math:`x_t = \sum_{k=0}^{t} \lambda^k \odot \gamma \odot B u_{t-k}` in :math:`\lceil\log_2 T\rceil`
steps (for :math:`d = 1, 2, 4, \dots`: :math:`x_t \leftarrow x_t + \lambda^d \odot x_{t-d}`). The
representation uses the loop: for the short trials here it is the faster on a CPU (forward and backward at
N = 5, B = 64, T = 40, P = 64: 29 ms against 66 ms for the scan, measured once on the 2-core machine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "ARCHITECTURES",
    "architecture",
    "count_networks",
    "init_params",
    "init_rnn",
    "init_ssm",
    "outputs",
    "representation",
    "rnn_states",
    "ssm_eigenvalues",
    "ssm_scan",
    "ssm_scan_loop",
    "ssm_state",
    "subset",
]

ARCHITECTURES = ("rnn", "ssm")
Params = dict[str, Tensor]


def _gens(seeds: Sequence[int]) -> list[torch.Generator]:
    if len(seeds) < 1:
        raise ValueError("need at least one seed (one network)")
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


def _normal(gens: list[torch.Generator], shape: tuple[int, ...], std: float, dtype: torch.dtype) -> Tensor:
    return torch.stack([std * torch.randn(shape, generator=g, dtype=dtype) for g in gens])


def _check_sizes(n_in: int, n_out: int, hidden: int) -> None:
    for name, v in (("n_in", n_in), ("n_out", n_out), ("hidden", hidden)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an int >= 1; got {v!r}")


def init_rnn(
    seeds: Sequence[int], n_in: int, n_out: int, hidden: int, *, gain: float = 1.0, dtype: torch.dtype = torch.float32
) -> Params:
    """Stacked vanilla-RNN parameters (module docstring), one network per seed."""
    _check_sizes(n_in, n_out, hidden)
    if not gain > 0:
        raise ValueError(f"gain must be > 0; got {gain}")
    gens = _gens(seeds)
    N = len(gens)
    return {
        "W": _normal(gens, (hidden, hidden), gain / math.sqrt(hidden), dtype),
        "U": _normal(gens, (hidden, n_in), 1 / math.sqrt(n_in), dtype),
        "b": torch.zeros(N, hidden, dtype=dtype),
        "C": _normal(gens, (n_out, hidden), 1 / math.sqrt(hidden), dtype),
        "d": torch.zeros(N, n_out, dtype=dtype),
    }


def init_ssm(
    seeds: Sequence[int],
    n_in: int,
    n_out: int,
    hidden: int,
    *,
    state: int | None = None,
    r_min: float = 0.9,
    r_max: float = 0.999,
    max_phase: float = math.pi / 10,
    dtype: torch.dtype = torch.float32,
) -> Params:
    """Stacked LRU-layer parameters (module docstring); ``state`` = P complex modes (default ``hidden``)."""
    _check_sizes(n_in, n_out, hidden)
    P = hidden if state is None else state
    if not isinstance(P, int) or P < 1:
        raise ValueError(f"state must be an int >= 1; got {state!r}")
    if not 0.0 < r_min < r_max < 1.0:
        raise ValueError(f"need 0 < r_min < r_max < 1; got r_min={r_min}, r_max={r_max}")
    if not max_phase > 0:
        raise ValueError(f"max_phase must be > 0; got {max_phase}")
    gens = _gens(seeds)
    u1 = torch.stack([torch.rand(P, generator=g, dtype=torch.float64) for g in gens])
    u2 = torch.stack([torch.rand(P, generator=g, dtype=torch.float64) for g in gens])
    r2 = u1 * (r_max**2 - r_min**2) + r_min**2  # |λ|² uniform on the ring
    nu = torch.log(-0.5 * torch.log(r2))  # |λ| = exp(-exp(ν))
    phi = torch.log((max_phase * u2).clamp_min(1e-6))  # arg λ = exp(φ)
    N = len(gens)
    return {
        "nu": nu.to(dtype),
        "phi": phi.to(dtype),
        "B_re": _normal(gens, (P, n_in), 1 / math.sqrt(2 * n_in), dtype),
        "B_im": _normal(gens, (P, n_in), 1 / math.sqrt(2 * n_in), dtype),
        "C_re": _normal(gens, (hidden, P), 1 / math.sqrt(P), dtype),
        "C_im": _normal(gens, (hidden, P), 1 / math.sqrt(P), dtype),
        "D": _normal(gens, (hidden, n_in), 1 / math.sqrt(n_in), dtype),
        "b": torch.zeros(N, hidden, dtype=dtype),
        "W": _normal(gens, (n_out, hidden), 1 / math.sqrt(hidden), dtype),
        "c": torch.zeros(N, n_out, dtype=dtype),
    }


def init_params(arch: str, seeds: Sequence[int], n_in: int, n_out: int, hidden: int, **kw: float) -> Params:
    """:func:`init_rnn` or :func:`init_ssm` by name (``arch`` in :data:`ARCHITECTURES`)."""
    if arch == "rnn":
        return init_rnn(seeds, n_in, n_out, hidden, **kw)
    if arch == "ssm":
        return init_ssm(seeds, n_in, n_out, hidden, **kw)
    raise ValueError(f"arch must be one of {ARCHITECTURES}; got {arch!r}")


def architecture(params: Params) -> str:
    """``"rnn"`` or ``"ssm"``, from the parameter names."""
    if "nu" in params:
        return "ssm"
    if "U" in params:
        return "rnn"
    raise ValueError(f"not RNN or SSM parameters; keys {sorted(params)}")


def count_networks(params: Params) -> int:
    """N, the leading axis shared by every parameter."""
    sizes = {v.shape[0] for v in params.values()}
    if len(sizes) != 1:
        raise ValueError(f"parameters must share the leading network axis; got sizes {sorted(sizes)}")
    return sizes.pop()


def subset(params: Params, index: Sequence[int] | slice) -> Params:
    """The networks ``index`` of a stack."""
    idx = index if isinstance(index, slice) else torch.as_tensor(list(index), dtype=torch.long)
    return {k: v[idx] for k, v in params.items()}


def _inputs(params: Params, inputs: Tensor) -> Tensor:
    """Inputs as ``[N, B, T, n_in]`` (shared ``[B, T, n_in]`` broadcast)."""
    N = count_networks(params)
    if inputs.ndim == 3:
        return inputs.expand(N, *inputs.shape)
    if inputs.ndim == 4 and inputs.shape[0] == N:
        return inputs
    raise ValueError(f"inputs must be [B, T, n_in] or [N={N}, B, T, n_in]; got {tuple(inputs.shape)}")


def rnn_states(params: Params, inputs: Tensor) -> Tensor:
    """Hidden states :math:`h_t` ``[N, B, T, H]`` of the vanilla RNN (module docstring)."""
    u = _inputs(params, inputs)
    W, U, b = params["W"], params["U"], params["b"]
    drive = torch.einsum("nhi,nbti->nbth", U, u) + b[:, None, None, :]
    h = torch.zeros(drive.shape[0], drive.shape[1], drive.shape[3], dtype=drive.dtype, device=drive.device)
    out, Wt = [], W.transpose(1, 2)
    for d in drive.unbind(2):  # unbind: its backward is one stack, not T zero-filled slices
        h = torch.tanh(torch.baddbmm(d, h, Wt))
        out.append(h)
    return torch.stack(out, 2)


def ssm_eigenvalues(params: Params) -> tuple[Tensor, Tensor]:
    r"""``(|λ|, arg λ)`` ``[N, P]``: :math:`|\lambda| = e^{-e^{\nu}}`, :math:`\arg\lambda = e^{\phi}`."""
    return torch.exp(-torch.exp(params["nu"])), torch.exp(params["phi"])


def _ssm_drive(params: Params, inputs: Tensor) -> tuple[Tensor, Tensor]:
    r""":math:`\gamma \odot B u_t` as (real, imaginary) parts ``[N, B, T, P]``."""
    u = _inputs(params, inputs)
    r, _ = ssm_eigenvalues(params)
    gamma = torch.sqrt((1 - r**2).clamp_min(0.0))[:, None, None, :]
    return (
        gamma * torch.einsum("npi,nbti->nbtp", params["B_re"], u),
        gamma * torch.einsum("npi,nbti->nbtp", params["B_im"], u),
    )


def ssm_scan(params: Params, inputs: Tensor) -> tuple[Tensor, Tensor]:
    r"""The state :math:`x_t` (real, imaginary) ``[N, B, T, P]`` by the parallel scan (module docstring)."""
    xr, xi = _ssm_drive(params, inputs)
    r, w = ssm_eigenvalues(params)
    T, d = xr.shape[2], 1
    while d < T:
        rd = (r**d)[:, None, None, :]
        cr, ci = rd * torch.cos(d * w)[:, None, None, :], rd * torch.sin(d * w)[:, None, None, :]
        pr, pi = xr[:, :, :-d], xi[:, :, :-d]
        xr = torch.cat([xr[:, :, :d], xr[:, :, d:] + cr * pr - ci * pi], 2)
        xi = torch.cat([xi[:, :, :d], xi[:, :, d:] + cr * pi + ci * pr], 2)
        d *= 2
    return xr, xi


def ssm_scan_loop(params: Params, inputs: Tensor) -> tuple[Tensor, Tensor]:
    r"""The same state by the step-by-step recurrence :math:`x_t = \lambda x_{t-1} + \gamma B u_t` (reference)."""
    br, bi = _ssm_drive(params, inputs)
    r, w = ssm_eigenvalues(params)
    lr, li = (r * torch.cos(w))[:, None, :], (r * torch.sin(w))[:, None, :]
    xr = torch.zeros_like(br[:, :, 0])
    xi = torch.zeros_like(bi[:, :, 0])
    out_r, out_i = [], []
    for b_r, b_i in zip(br.unbind(2), bi.unbind(2)):  # unbind: its backward is one stack, not T zero-filled slices
        xr, xi = lr * xr - li * xi + b_r, lr * xi + li * xr + b_i
        out_r.append(xr)
        out_i.append(xi)
    return torch.stack(out_r, 2), torch.stack(out_i, 2)


def ssm_state(params: Params, inputs: Tensor) -> Tensor:
    r"""The SSM's state as real vectors :math:`(\mathrm{Re}\,x_t, \mathrm{Im}\,x_t)` ``[N, B, T, 2P]``."""
    xr, xi = ssm_scan(params, inputs)
    return torch.cat([xr, xi], -1)


def _ssm_output(params: Params, inputs: Tensor) -> Tensor:
    xr, xi = ssm_scan_loop(params, inputs)
    u = _inputs(params, inputs)
    pre = (
        torch.einsum("nhp,nbtp->nbth", params["C_re"], xr)
        - torch.einsum("nhp,nbtp->nbth", params["C_im"], xi)
        + torch.einsum("nhi,nbti->nbth", params["D"], u)
        + params["b"][:, None, None, :]
    )
    return F.gelu(pre)


def representation(params: Params, inputs: Tensor) -> Tensor:
    """The representation compared across networks, ``[N, B, T, H]``: the RNN's :math:`h_t`, the SSM
    layer's output :math:`z_t` (module docstring)."""
    return rnn_states(params, inputs) if architecture(params) == "rnn" else _ssm_output(params, inputs)


def outputs(params: Params, hidden: Tensor) -> Tensor:
    """Linear readout ``[N, B, T, n_out]`` of :func:`representation` ``[N, B, T, H]``."""
    if architecture(params) == "rnn":
        W, c = params["C"], params["d"]
    else:
        W, c = params["W"], params["c"]
    return torch.einsum("noh,nbth->nbto", W, hidden) + c[:, None, None, :]
