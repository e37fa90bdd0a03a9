"""N same-architecture MLPs stored as stacked tensors: the layout, initialisation and forward pass.

A zoo of ``N`` MLPs with layer sizes ``(d_0, d_1, ..., d_L)`` is one dict of tensors

.. math::
    W_l \\in \\mathbb{R}^{N \\times d_{l+1} \\times d_l}, \\qquad b_l \\in \\mathbb{R}^{N \\times d_{l+1}},

keys ``"W0", "b0", "W1", "b1", ...`` (the ``nn.Linear`` layout, ``out x in``). The forward pass is a
batched matmul per layer, :math:`h_{l+1} = \\sigma(h_l W_l^\\top + b_l)` for every network at once, so a
32-wide layer -- far too small to fill a CPU on its own -- becomes one GEMM over all networks.

- :func:`init_mlp` -- per-network initialisation (``nn.Linear`` default, scaled normal, SIREN, the
  DWSNets SIREN variant); ``seeds=`` makes network ``i``'s init depend only on ``seeds[i]``.
- :func:`mlp_forward` -- stacked forward pass (or a hidden layer's activations, or one network).
- :func:`init_weights` -- the Keras initialisers of the Small CNN Zoo (He / Glorot normal and uniform,
  random and truncated normal with a given std) for any stacked weight shape.
- :func:`n_layers` / :func:`check_params` -- the layer count and shapes of a stacked parameter dict.

Training N stacked networks at once is :mod:`hgutils.weightspace.batched_training`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

__all__ = [
    "ACTIVATIONS",
    "INIT_SCHEMES",
    "WEIGHT_INITS",
    "check_params",
    "init_mlp",
    "init_weights",
    "mlp_forward",
    "n_layers",
]

INIT_SCHEMES: tuple[str, ...] = ("kaiming_uniform", "normal", "siren", "siren_dwsnets")
ACTIVATIONS: tuple[str, ...] = ("relu", "tanh", "sine", "gelu", "identity")
Activation = str | Callable[[Tensor], Tensor]
Params = dict[str, Tensor]


# --------------------------------------------------------------------------------------------
# initialisation
# --------------------------------------------------------------------------------------------
def _uniform(shape: tuple[int, ...], bound: float, g: torch.Generator | None, dtype: torch.dtype) -> Tensor:
    return (torch.rand(shape, generator=g, dtype=dtype) * 2.0 - 1.0) * bound


def _init_layer(
    scheme: str,
    layer: int,
    n_layers_: int,
    fan_in: int,
    fan_out: int,
    n: int,
    *,
    gain: float,
    omega0: float,
    g: torch.Generator | None,
    dtype: torch.dtype,
) -> tuple[Tensor, Tensor]:
    """Initialise one layer for ``n`` networks: ``(W [n, out, in], b [n, out])``."""
    wshape, bshape = (n, fan_out, fan_in), (n, fan_out)
    linear_bound = 1.0 / math.sqrt(fan_in)  # nn.Linear: kaiming_uniform(a=sqrt(5)) == U(+-1/sqrt(in))
    if scheme == "kaiming_uniform":
        return _uniform(wshape, gain * linear_bound, g, dtype), _uniform(bshape, linear_bound, g, dtype)
    if scheme == "normal":
        w = torch.randn(wshape, generator=g, dtype=dtype) * (gain / math.sqrt(fan_in))
        return w, torch.zeros(bshape, dtype=dtype)
    if scheme == "siren":
        # Sitzmann et al. 2020: first layer U(-1/in, 1/in), later layers U(-sqrt(6/in)/w0, +); the
        # biases keep nn.Linear's default U(-1/sqrt(in), 1/sqrt(in)) (their code re-inits weights only).
        bound = 1.0 / fan_in if layer == 0 else math.sqrt(6.0 / fan_in) / omega0
        return _uniform(wshape, gain * bound, g, dtype), _uniform(bshape, linear_bound, g, dtype)
    if scheme == "siren_dwsnets":
        # DWSNets `INR`: every sine layer (the first included -- `is_first` is never set) gets
        # U(-sqrt(6/in)/w0, +) weights and zero biases; the output layer is a plain nn.Linear.
        # (Its forward also adds 0.5 to the output: pass output_offset=0.5 to mlp_forward.)
        if layer < n_layers_ - 1:
            bound = math.sqrt(6.0 / fan_in) / omega0
            return _uniform(wshape, gain * bound, g, dtype), torch.zeros(bshape, dtype=dtype)
        return _uniform(wshape, gain * linear_bound, g, dtype), _uniform(bshape, linear_bound, g, dtype)
    raise ValueError(f"unknown init scheme {scheme!r}; expected one of {INIT_SCHEMES}")


def init_mlp(
    n_nets: int,
    sizes: Sequence[int],
    *,
    scheme: str = "kaiming_uniform",
    gain: float = 1.0,
    omega0: float = 30.0,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    seeds: Sequence[int] | Tensor | None = None,
) -> dict[str, Tensor]:
    """Initial parameters of ``n_nets`` MLPs with layer widths ``sizes`` as stacked tensors.

    Schemes (``fan_in = sizes[l]`` for layer ``l``):

    - ``"kaiming_uniform"`` -- ``nn.Linear``'s default: :math:`W, b \\sim U(\\pm 1/\\sqrt{\\text{fan\\_in}})`
      (``gain`` scales the weight bound).
    - ``"normal"`` -- :math:`W \\sim \\mathcal{N}(0, (\\text{gain}/\\sqrt{\\text{fan\\_in}})^2)`,
      :math:`b = 0` (``gain`` sets the rich/lazy init scale).
    - ``"siren"`` -- Sitzmann et al. (2020): :math:`W_0 \\sim U(\\pm 1/\\text{fan\\_in})`, later
      :math:`W_l \\sim U(\\pm\\sqrt{6/\\text{fan\\_in}}/\\omega_0)`; biases as ``nn.Linear``.
    - ``"siren_dwsnets"`` -- the DWSNets INR: every sine layer
      :math:`U(\\pm\\sqrt{6/\\text{fan\\_in}}/\\omega_0)` with zero bias,
      output layer ``nn.Linear`` default (its forward adds 0.5: ``mlp_forward(output_offset=0.5)``).

    Parameters
    ----------
    generator
        Random source for all networks at once (draw order: layer by layer, ``W`` then ``b``).
    seeds
        Alternatively one integer seed per network: network ``i`` is then drawn from its own
        generator seeded with ``seeds[i]``, so its init does not depend on ``n_nets`` or on how a
        zoo is chunked. Mutually exclusive with ``generator``.

    Returns
    -------
    dict
        ``"W{l}"`` ``[N, sizes[l+1], sizes[l]]`` and ``"b{l}"`` ``[N, sizes[l+1]]``.
    """
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < 2 or any(s <= 0 for s in sizes):
        raise ValueError(f"sizes must list >= 2 positive layer widths (input, ..., output); got {sizes}")
    if not isinstance(n_nets, int) or n_nets <= 0:
        raise ValueError(f"n_nets must be a positive int; got {n_nets!r}")
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"unknown init scheme {scheme!r}; expected one of {INIT_SCHEMES}")
    if seeds is not None and generator is not None:
        raise ValueError("pass either generator= or seeds=, not both")
    L = len(sizes) - 1

    def draw(n: int, g: torch.Generator | None) -> dict[str, Tensor]:
        out: dict[str, Tensor] = {}
        for l in range(L):
            w, b = _init_layer(scheme, l, L, sizes[l], sizes[l + 1], n, gain=gain, omega0=omega0, g=g, dtype=dtype)
            out[f"W{l}"], out[f"b{l}"] = w, b
        return out

    if seeds is None:
        return draw(n_nets, generator)
    seeds = [int(s) for s in (seeds.tolist() if isinstance(seeds, Tensor) else seeds)]
    if len(seeds) != n_nets:
        raise ValueError(f"seeds must hold one seed per network ({n_nets}); got {len(seeds)}")
    parts = []
    for s in seeds:
        g = torch.Generator()
        g.manual_seed(s)
        parts.append(draw(1, g))
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


#: Weight initialisers of :func:`init_weights` (the Keras initialisers the Small CNN Zoo samples).
WEIGHT_INITS: tuple[str, ...] = (
    "he_normal",
    "he_uniform",
    "glorot_normal",
    "glorot_uniform",
    "random_normal",
    "truncated_normal",
)

_TRUNC_STD = 0.87962566103423978  # std of a standard normal truncated to [-2, 2] (Keras' constant)


def _truncated_normal(shape: tuple[int, ...], g: torch.Generator | None, dtype: torch.dtype) -> Tensor:
    """Standard normal truncated to ``[-2, 2]`` by inverse-CDF sampling (one uniform per entry)."""
    lo = 0.5 * (1.0 + math.erf(-2.0 / math.sqrt(2.0)))  # Phi(-2)
    u = torch.rand(shape, generator=g, dtype=torch.float64) * (1.0 - 2.0 * lo) + lo
    return (math.sqrt(2.0) * torch.erfinv(2.0 * u - 1.0)).clamp_(-2.0, 2.0).to(dtype)


def init_weights(
    scheme: str,
    shape: Sequence[int],
    fan_in: int,
    fan_out: int,
    *,
    std: float = 0.05,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """One weight tensor of ``shape`` drawn with a Keras initialiser (Small CNN Zoo, Unterthiner et al.
    2020, arXiv:2002.11448: ``w_init`` and ``init_std`` are sampled hyperparameters; ``init_std`` is
    used only by the random / truncated normal schemes, as in the zoo's training script).

    With :math:`n_\\text{in}, n_\\text{out}` the fans (``kernel area x channels`` for a convolution):

    - ``"he_normal"`` -- truncated normal (at 2 sd) of std :math:`\\sqrt{2/n_\\text{in}}`;
    - ``"he_uniform"`` -- :math:`U(\\pm\\sqrt{6/n_\\text{in}})`, std :math:`\\sqrt{2/n_\\text{in}}`;
    - ``"glorot_normal"`` -- truncated normal of std :math:`\\sqrt{2/(n_\\text{in}+n_\\text{out})}`;
    - ``"glorot_uniform"`` -- :math:`U(\\pm\\sqrt{6/(n_\\text{in}+n_\\text{out})})`, the same std;
    - ``"random_normal"`` -- :math:`\\mathcal{N}(0, \\text{std}^2)`;
    - ``"truncated_normal"`` -- :math:`\\mathcal{N}(0, \\text{std}^2)` truncated at 2 std (so its std is
      :math:`0.8796\\,\\text{std}`, as Keras' ``TruncatedNormal``).

    The variance-scaling normals divide the pre-truncation std by 0.87962566 (Keras), so the drawn
    weights have exactly the stated std.
    """
    shape = tuple(int(s) for s in shape)
    if scheme not in WEIGHT_INITS:
        raise ValueError(f"unknown weight init {scheme!r}; expected one of {WEIGHT_INITS}")
    if fan_in <= 0 or fan_out <= 0:
        raise ValueError(f"fan_in and fan_out must be positive; got {fan_in}, {fan_out}")
    if scheme in ("random_normal", "truncated_normal") and not std > 0:
        raise ValueError(f"{scheme} needs a positive std; got {std!r}")
    if scheme == "random_normal":
        return torch.randn(shape, generator=generator, dtype=dtype) * std
    if scheme == "truncated_normal":
        return _truncated_normal(shape, generator, dtype) * std
    fan = fan_in if scheme.startswith("he_") else 0.5 * (fan_in + fan_out)
    target = math.sqrt((2.0 if scheme.startswith("he_") else 1.0) / fan)
    if scheme.endswith("_uniform"):
        return _uniform(shape, target * math.sqrt(3.0), generator, dtype)
    return _truncated_normal(shape, generator, dtype) * (target / _TRUNC_STD)


# --------------------------------------------------------------------------------------------
# forward
# --------------------------------------------------------------------------------------------
def n_layers(params: Mapping[str, Tensor]) -> int:
    """Number of linear layers ``L`` in a stacked parameter dict (keys ``W0..W{L-1}``, ``b0..``)."""
    L = 0
    while f"W{L}" in params:
        L += 1
    if L == 0:
        raise ValueError(f"params must hold keys 'W0', 'b0', ...; got keys {sorted(params)}")
    expected = {f"{p}{l}" for l in range(L) for p in "Wb"}
    if set(params) != expected:
        raise ValueError(f"params keys must be exactly {sorted(expected)}; got {sorted(params)}")
    return L


def check_params(params: Mapping[str, Tensor]) -> tuple[int, tuple[int, ...]]:
    """Validate a stacked parameter dict; return ``(N, sizes)``."""
    L = n_layers(params)
    W0 = params["W0"]
    if W0.dim() != 3:
        raise ValueError(f"W0 must be [N, out, in]; got shape {tuple(W0.shape)}")
    N = W0.shape[0]
    sizes = [W0.shape[2]]
    for l in range(L):
        W, b = params[f"W{l}"], params[f"b{l}"]
        if W.dim() != 3 or W.shape[0] != N or W.shape[2] != sizes[-1]:
            raise ValueError(f"W{l} must be [N={N}, out, in={sizes[-1]}]; got shape {tuple(W.shape)}")
        if tuple(b.shape) != (N, W.shape[1]):
            raise ValueError(f"b{l} must be [N={N}, out={W.shape[1]}]; got shape {tuple(b.shape)}")
        sizes.append(W.shape[1])
    return N, tuple(sizes)


def _check_stacked(params: Mapping[str, Tensor]) -> int:
    """Any stacked parameter dict (MLP, CNN, ...): float tensors sharing the first dimension ``N``."""
    if not params:
        raise ValueError("params must be a non-empty dict of stacked tensors")
    if "W0" in params and params["W0"].dim() == 3:
        return check_params(params)[0]  # an MLP: check the layer chain too
    N = None
    for k, v in params.items():
        if not isinstance(v, Tensor) or not v.is_floating_point() or v.dim() < 1:
            raise ValueError(f"params[{k!r}] must be a floating tensor [N, ...]; got {type(v).__name__}")
        if N is None:
            N = v.shape[0]
        elif v.shape[0] != N:
            raise ValueError(f"all params must share the first dimension N={N}; {k!r} has {tuple(v.shape)}")
    return int(N)


def _activation(activation: Activation, omega0: float | None) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return torch.relu
    if activation == "tanh":
        return torch.tanh
    if activation == "gelu":
        return torch.nn.functional.gelu
    if activation == "identity":
        return lambda z: z
    if activation == "sine":
        w = 30.0 if omega0 is None else float(omega0)
        return lambda z: torch.sin(w * z)
    raise ValueError(f"unknown activation {activation!r}; expected one of {ACTIVATIONS} or a callable")


def mlp_forward(
    params: Mapping[str, Tensor],
    x: Tensor,
    activation: Activation = "relu",
    *,
    omega0: float | None = None,
    layer: int | None = None,
    net: int | None = None,
    output_offset: float = 0.0,
) -> Tensor:
    """Stacked forward :math:`h_{l+1} = \\sigma(h_l W_l^\\top + b_l)`, no activation after the last layer.

    Parameters
    ----------
    x
        ``[N, P, in]`` (one input set per network) or ``[P, in]`` (shared by all networks).
    activation
        ``"relu" | "tanh" | "sine" | "gelu" | "identity"`` or a callable; ``"sine"`` is
        :math:`\\sin(\\omega_0 z)` (``omega0`` defaults to 30, the SIREN value) on hidden layers.
    layer
        If given, return the post-activation of hidden layer ``layer`` (0-based) instead of the output.
    net
        If given, run only network ``net`` on ``x [P, in]`` and return ``[P, out]`` (for per-network
        Jacobians with ``torch.func``).
    output_offset
        Constant added to the output (the DWSNets INR adds 0.5).

    Returns
    -------
    Tensor
        ``[N, P, out]`` (or ``[P, out]`` with ``net=``; the hidden width with ``layer=``).
    """
    N, sizes = check_params(params)
    L = len(sizes) - 1
    act = _activation(activation, omega0)
    if layer is not None and not (0 <= layer < L - 1):
        raise ValueError(f"layer must index a hidden layer in [0, {L - 2}]; got {layer}")
    if x.shape[-1] != sizes[0]:
        raise ValueError(f"x must end in the input width {sizes[0]}; got shape {tuple(x.shape)}")
    if net is not None:
        if not (-N <= net < N):
            raise ValueError(f"net must index one of the {N} networks; got {net}")
        if x.dim() != 2:
            raise ValueError(f"with net=, x must be [P, in]; got shape {tuple(x.shape)}")
        h = x
        for l in range(L):
            h = torch.nn.functional.linear(h, params[f"W{l}"][net], params[f"b{l}"][net])
            if l < L - 1:
                h = act(h)
                if layer == l:
                    return h
        return h + output_offset if output_offset else h
    if x.dim() == 2:
        h = None  # shared inputs: first layer is a broadcast matmul [P,in] @ [N,in,out]
    elif x.dim() == 3:
        if x.shape[0] != N:
            raise ValueError(f"x [N, P, in] must have N={N} input sets; got shape {tuple(x.shape)}")
        h = x
    else:
        raise ValueError(f"x must be [N, P, in] or [P, in]; got shape {tuple(x.shape)}")
    for l in range(L):
        W, b = params[f"W{l}"], params[f"b{l}"]
        if h is None:
            h = torch.matmul(x, W.transpose(1, 2)) + b.unsqueeze(1)
        else:
            h = torch.baddbmm(b.unsqueeze(1), h, W.transpose(1, 2))
        if l < L - 1:
            h = act(h)
            if layer == l:
                return h
    return h + output_offset if output_offset else h
