"""Batched training of N same-architecture MLPs stored as stacked tensors.

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
- :func:`train_stacked` -- Adam / AdamW / SGD / RMSProp with per-network state, per-network learning rates and
  weight decays, snapshots on a schedule, and per-network early stopping that freezes a network
  (parameters and optimizer state) while the others continue.
- :func:`snapshot_schedule` -- uniform or log-spaced snapshot steps, always including 0 and ``steps``.

Why the batch equals N independent runs: ``loss_fn`` returns per-network losses :math:`\\ell_i`, and
the trainer differentiates :math:`\\sum_i \\ell_i`; because network ``i``'s parameters enter only
:math:`\\ell_i`, the gradient of the sum w.r.t. :math:`\\theta_i` is
:math:`\\partial \\ell_i / \\partial \\theta_i`.
Adam's state is elementwise, so per-network Adam is the same arithmetic as ``torch.optim.Adam`` on
each network alone (tested to 1e-4 relative after 100 steps); likewise RMSProp and
``torch.optim.RMSprop`` (tested to 1e-6).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from hgutils.loop import Budget, TrainTask, train

__all__ = [
    "ACTIVATIONS",
    "INIT_SCHEMES",
    "OPTIMIZERS",
    "TrainResult",
    "WEIGHT_INITS",
    "init_mlp",
    "init_weights",
    "mlp_forward",
    "n_layers",
    "snapshot_schedule",
    "train_stacked",
]

INIT_SCHEMES: tuple[str, ...] = ("kaiming_uniform", "normal", "siren", "siren_dwsnets")
ACTIVATIONS: tuple[str, ...] = ("relu", "tanh", "sine", "gelu", "identity")
OPTIMIZERS: tuple[str, ...] = ("adam", "adamw", "sgd", "rmsprop")
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


# --------------------------------------------------------------------------------------------
# snapshot schedules
# --------------------------------------------------------------------------------------------
def snapshot_schedule(steps: int, T: int, kind: str = "uniform") -> list[int]:
    """``T`` distinct snapshot steps in ``[0, steps]``, always including ``0`` and ``steps``.

    ``"uniform"``: ``round(linspace(0, steps, T))``; ``"log"``: ``0`` followed by ``T-1`` log-spaced
    steps from 1 to ``steps`` (dense early, where training changes fastest), nudged to be distinct.
    """
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int; got {steps!r}")
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive int; got {T!r}")
    if T > steps + 1:
        raise ValueError(f"T={T} snapshots need at least T-1={T - 1} training steps; got steps={steps}")
    if T == 1:
        if steps != 0:
            raise ValueError(f"a schedule includes step 0 and step {steps}, so T must be >= 2; got T=1")
        return [0]
    if kind == "uniform":
        raw = [round(i * steps / (T - 1)) for i in range(T)]
    elif kind == "log":
        raw = [0] + [round(math.exp(math.log(steps) * i / (T - 2))) if T > 2 else steps for i in range(T - 1)]
    else:
        raise ValueError(f"unknown schedule kind {kind!r}; expected 'uniform' or 'log'")
    out = [0] * T
    for i in range(1, T):  # strictly increasing, then pull back under the upper bound
        out[i] = max(raw[i], out[i - 1] + 1)
    out[-1] = steps
    for i in range(T - 2, -1, -1):
        out[i] = min(out[i], out[i + 1] - 1)
    return out


def _check_snapshot_steps(snapshot_steps: Sequence[int] | None, steps: int) -> list[int]:
    if snapshot_steps is None:
        return [0, steps] if steps > 0 else [0]
    s = [int(v) for v in snapshot_steps]
    if len(s) > steps + 1:
        raise ValueError(f"T={len(s)} snapshots need at least T-1={len(s) - 1} training steps; got steps={steps}")
    if any(v < 0 or v > steps for v in s) or any(b <= a for a, b in zip(s, s[1:])):
        raise ValueError(f"snapshot_steps must be strictly increasing within [0, {steps}]; got {s}")
    return s


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """Output of :func:`train_stacked`.

    Attributes
    ----------
    params
        Final parameters (detached), same layout as the input.
    snapshots
        ``{key: [N, T, ...]}``; snapshot ``t`` holds the parameters at step ``steps[t]``, i.e. *before*
        update ``steps[t] + 1`` (step 0 = the initialisation, step ``steps`` = the final parameters).
    steps
        ``[T]`` int64 snapshot steps.
    losses
        ``[N]`` per-network loss of the final parameters.
    history
        ``[steps, N]`` loss at each step (evaluated on the parameters before that step's update).
    stopped_at
        ``[N]`` int64: the step at which ``stop_fn`` froze the network (its parameters are those of
        that step), ``-1`` if it never stopped.
    """

    params: dict[str, Tensor]
    snapshots: dict[str, Tensor]
    steps: Tensor
    losses: Tensor
    history: Tensor
    stopped_at: Tensor


def _per_net(value: float | Tensor, N: int, name: str, dtype: torch.dtype) -> float | Tensor:
    if isinstance(value, Tensor):
        if value.dim() == 0:
            return float(value)
        if value.shape != (N,):
            raise ValueError(f"{name} must be a float or a [N={N}] tensor; got shape {tuple(value.shape)}")
        return value.to(dtype)
    return float(value)


def _bcast(v: float | Tensor, like: Tensor) -> float | Tensor:
    return v.view(-1, *([1] * (like.dim() - 1))) if isinstance(v, Tensor) else v


def train_stacked(
    params: dict[str, Tensor],
    loss_fn: Callable[[dict[str, Tensor]], Tensor] | None,
    *,
    steps: int,
    optimizer: str = "adam",
    lr: float | Tensor = 1e-3,
    weight_decay: float | Tensor = 0.0,
    momentum: float = 0.0,
    snapshot_steps: Sequence[int] | None = None,
    stop_fn: Callable[[dict[str, Tensor], Tensor], Tensor] | None = None,
    desc: str | None = None,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    value_and_grad: Callable[[Params], tuple[Tensor, Params]] | None = None,
    final_loss_fn: Callable[[dict[str, Tensor]], Tensor] | None = None,
    snapshot_dtype: torch.dtype | None = None,
    alpha: float = 0.99,
) -> TrainResult:
    """Train N stacked networks at once; each network gets exactly its own gradient and optimizer state.

    Parameters
    ----------
    params
        Stacked parameters ``{"W0": [N, out, in], "b0": [N, out], ...}`` (not modified; copied).
    loss_fn
        ``loss_fn(params) -> [N]`` per-network losses; their *sum* is differentiated. Called once per
        step in order (a closure may iterate over minibatches) and once more for the final losses.
    steps
        Number of updates.
    optimizer
        ``"adam"`` (``torch.optim.Adam`` arithmetic, L2 ``weight_decay`` added to the gradient),
        ``"adamw"`` (decoupled decay, ``torch.optim.AdamW``), ``"sgd"`` (``torch.optim.SGD`` with
        ``momentum``, dampening 0) or ``"rmsprop"`` (``torch.optim.RMSprop``, not centred:
        :math:`v \\leftarrow \\alpha v + (1-\\alpha) g^2`, :math:`\\theta \\leftarrow \\theta - \\text{lr}\\,
        g / (\\sqrt{v} + \\epsilon)`, with ``momentum`` applied to :math:`g / (\\sqrt{v} + \\epsilon)`; Keras'
        RMSprop is the same arithmetic with ``alpha = rho``).
    lr
        A float or a per-network ``[N]`` tensor.
    weight_decay
        A float or a per-network ``[N]`` tensor (``>= 0``): the L2 coefficient for ``"adam"`` /
        ``"sgd"``, the decoupled decay for ``"adamw"``; a tensor trains e.g. a weight-decay ladder in
        one run.
    snapshot_steps
        Steps in ``[0, steps]`` at which to record the parameters (see :func:`snapshot_schedule`);
        default ``[0, steps]``.
    stop_fn
        ``stop_fn(params, losses) -> bool [N]``, evaluated each step on the current parameters and
        their losses; a network that becomes ``True`` is frozen from then on (parameters and
        optimizer state untouched; the step's update is not applied to it).
    value_and_grad
        Optional fused ``params -> (losses [N], grads dict)`` replacing autograd (e.g. hand-written
        SIREN gradients). Exactly one of ``loss_fn`` / ``value_and_grad`` is needed per step.
    final_loss_fn
        Loss for the reported final losses (default ``loss_fn``, or ``value_and_grad``'s losses).
    snapshot_dtype
        Storage dtype of the snapshots (e.g. ``torch.float16``); default the parameter dtype.
    alpha
        RMSProp's smoothing constant (``torch.optim.RMSprop``'s ``alpha``, Keras' ``rho``).
    """
    task = StackedTask(
        params,
        loss_fn,
        steps=steps,
        optimizer=optimizer,
        lr=lr,
        weight_decay=weight_decay,
        momentum=momentum,
        snapshot_steps=snapshot_steps,
        stop_fn=stop_fn,
        betas=betas,
        eps=eps,
        value_and_grad=value_and_grad,
        snapshot_dtype=snapshot_dtype,
        alpha=alpha,
    )
    train(task, Budget(epochs=1), desc=desc)
    return task.result(final_loss_fn)


class StackedTask(TrainTask):
    """N stacked networks trained at once (:func:`train_stacked`), for :func:`hgutils.loop.train`.

    All parameters live in one flat ``[N, D]`` buffer, so the optimiser is a handful of tensor ops
    per step (:func:`_update_all`, the arithmetic of ``torch.optim``); each network has its own
    learning rate, step count and optimiser state, and can be frozen by ``stop_fn``. One epoch is
    the whole run (``steps`` steps); snapshots are recorded before the update of their step.
    """

    def __init__(
        self,
        params: dict[str, Tensor],
        loss_fn: Callable[[dict[str, Tensor]], Tensor] | None,
        *,
        steps: int,
        optimizer: str = "adam",
        lr: float | Tensor = 1e-3,
        weight_decay: float | Tensor = 0.0,
        momentum: float = 0.0,
        snapshot_steps: Sequence[int] | None = None,
        stop_fn: Callable[[dict[str, Tensor], Tensor], Tensor] | None = None,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        value_and_grad: Callable[[Params], tuple[Tensor, Params]] | None = None,
        snapshot_dtype: torch.dtype | None = None,
        alpha: float = 0.99,
    ) -> None:
        N = _check_stacked(params)
        if not isinstance(steps, int) or steps < 0:
            raise ValueError(f"steps must be a non-negative int; got {steps!r}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {optimizer!r}; expected one of {OPTIMIZERS}")
        if loss_fn is None and value_and_grad is None:
            raise ValueError("train_stacked needs loss_fn or value_and_grad")
        if not 0.0 <= alpha < 1.0:
            raise ValueError(f"alpha (RMSProp smoothing) must be in [0, 1); got {alpha!r}")
        self.alpha = float(alpha)
        self.snaps = _check_snapshot_steps(snapshot_steps, steps)
        self.N, self.steps, self.steps_per_epoch = N, steps, steps
        self.loss_fn, self.value_and_grad, self.stop_fn = loss_fn, value_and_grad, stop_fn
        wd = _per_net(weight_decay, N, "weight_decay", torch.float64)
        if (wd < 0).any() if isinstance(wd, Tensor) else wd < 0:
            raise ValueError(f"weight_decay must be >= 0; got {weight_decay!r}")
        if isinstance(wd, Tensor):  # an all-zero ladder takes the no-decay path
            wd = wd.to(params[next(iter(params))].device).view(N, 1) if bool((wd != 0).any()) else 0.0
        self.optimizer, self.weight_decay, self.momentum, self.betas, self.eps = (
            optimizer,
            wd,
            momentum,
            betas,
            eps,
        )
        self.keys = list(params)
        first = next(iter(params.values()))
        dtype, device = first.dtype, first.device
        self.device = device
        # one flat [N, D] buffer for all parameters: the optimizer is a handful of ops per step
        self.layout: list[tuple[str, int, int, tuple[int, ...]]] = []
        off = 0
        for k in self.keys:
            shape = tuple(params[k].shape[1:])
            n = math.prod(shape)
            self.layout.append((k, off, n, shape))
            off += n
        self.flat = torch.cat([params[k].detach().reshape(N, -1) for k in self.keys], dim=1).to(dtype).clone()
        lr_ = _per_net(lr, N, "lr", torch.float64)
        lr_vec = (
            lr_.to(device) if isinstance(lr_, Tensor) else torch.full((N,), lr_, dtype=torch.float64, device=device)
        )
        self.lr_col = lr_vec.view(N, 1)
        self.sdtype = snapshot_dtype or dtype
        self.snapshots = {
            k: torch.empty((N, len(self.snaps), *params[k].shape[1:]), dtype=self.sdtype) for k in self.keys
        }
        self.snap_index = {s: i for i, s in enumerate(self.snaps)}
        self.history = torch.empty((steps, N), dtype=dtype)
        self.stopped_at = torch.full((N,), -1, dtype=torch.int64)
        self.active = torch.ones(N, dtype=torch.bool, device=device)
        self.any_frozen = self.all_frozen = False
        self.t = torch.zeros((N, 1), dtype=torch.float64, device=device)  # per-network step counts
        self.m = torch.zeros_like(self.flat)
        self.v = torch.zeros_like(self.flat) if optimizer != "sgd" else None

    def views(self, buf: Tensor) -> dict[str, Tensor]:
        """``{key: [N, ...]}`` views into a flat ``[N, D]`` buffer."""
        return {k: buf[:, o : o + n].view(self.N, *shape) for k, o, n, shape in self.layout}

    def _loss_and_grad(self) -> tuple[Tensor, Tensor]:
        N = self.N
        if self.value_and_grad is not None:
            losses, grads = self.value_and_grad(self.views(self.flat))
            if isinstance(grads, Mapping):
                grads = torch.cat([grads[k].reshape(N, -1) for k in self.keys], dim=1)
            return losses.detach(), grads
        leaf = self.flat.detach().requires_grad_(True)
        losses = self.loss_fn(self.views(leaf))
        if losses.shape != (N,):
            raise ValueError(f"loss_fn must return per-network losses [N={N}]; got shape {tuple(losses.shape)}")
        (grads,) = torch.autograd.grad(losses.sum(), leaf)
        return losses.detach(), grads

    def _record(self, step: int) -> None:
        i = self.snap_index.get(step)
        if i is not None:
            for k, w in self.views(self.flat).items():
                self.snapshots[k][:, i] = w.to(self.sdtype)

    def batches(self, epoch: int) -> Iterable[int]:
        return range(self.steps)

    def step(self, s: int, progress: float) -> dict[str, float]:
        N, device = self.N, self.device
        self._record(s)
        losses, g = self._loss_and_grad()
        self.history[s] = losses.to(self.history.device)
        if self.stop_fn is not None:
            stop = torch.as_tensor(self.stop_fn(self.views(self.flat), losses), dtype=torch.bool, device=device)
            if stop.shape != (N,):
                raise ValueError(f"stop_fn must return bool [N={N}]; got shape {tuple(stop.shape)}")
            newly = stop & self.active
            if bool(newly.any()):
                self.stopped_at[newly.cpu()] = s
                self.active &= ~newly
                self.any_frozen = True
            if not bool(self.active.any()):  # every network converged: fill in the rest and stop
                self.all_frozen = True
                for s2 in range(s + 1, self.steps):
                    self.history[s2] = losses
                for s2 in self.snaps:
                    if s2 > s:
                        self._record(s2)
                return {}
        with torch.no_grad():
            self.t += self.active.to(self.t.dtype).view(N, 1) if self.any_frozen else 1
            if not self.any_frozen:
                self._update(self.flat, g, self.m, self.v, self.t)
            else:  # update a copy, keep the frozen networks' parameters and optimizer state
                col = self.active.view(N, 1)
                new_flat, new_m = self.flat.clone(), self.m.clone()
                new_v = self.v.clone() if self.v is not None else None
                self._update(new_flat, g, new_m, new_v, self.t.clamp(min=1))
                self.flat.copy_(torch.where(col, new_flat, self.flat))
                self.m.copy_(torch.where(col, new_m, self.m))
                if self.v is not None:
                    self.v.copy_(torch.where(col, new_v, self.v))
        return {}

    def _update(self, flat: Tensor, g: Tensor, m: Tensor, v: Tensor | None, t: Tensor) -> None:
        beta1, beta2 = self.betas
        _update_all(
            flat,
            g,
            m,
            v,
            self.optimizer,
            self.lr_col,
            self.weight_decay,
            self.momentum,
            beta1,
            beta2,
            self.eps,
            t,
            self.alpha,
        )

    def should_stop(self) -> bool:
        return self.all_frozen

    def finish(self, completed: bool) -> None:
        if completed:
            self._record(self.steps)

    def result(self, final_loss_fn: Callable[[dict[str, Tensor]], Tensor] | None = None) -> TrainResult:
        """The :class:`TrainResult` of the finished run (final losses from ``final_loss_fn`` if given)."""
        final_p = self.views(self.flat.detach())
        with torch.no_grad():
            if final_loss_fn is not None:
                final = final_loss_fn(final_p)
            elif self.value_and_grad is not None:
                final = self.value_and_grad(final_p)[0]
            else:
                final = self.loss_fn(final_p)
        return TrainResult(
            params={k: w.contiguous() for k, w in final_p.items()},
            snapshots=self.snapshots,
            steps=torch.tensor(self.snaps, dtype=torch.int64),
            losses=final.detach(),
            history=self.history,
            stopped_at=self.stopped_at,
        )


def _update_all(
    p: Tensor,
    g: Tensor,
    m: Tensor,
    v: Tensor | None,
    optimizer: str,
    lr_col: Tensor,
    wd: float | Tensor,
    momentum: float,
    beta1: float,
    beta2: float,
    eps: float,
    t: Tensor,
    alpha: float = 0.99,
) -> None:
    """One in-place optimizer step on flat ``[N, D]`` buffers, the arithmetic of ``torch.optim``.

    ``lr_col`` is the ``[N, 1]`` float64 learning rate, ``wd`` a float or the ``[N, 1]`` float64 weight
    decay, ``t`` the ``[N, 1]`` float64 (1-based) step count; bias corrections are computed in float64
    per network, as ``torch.optim.Adam`` does in Python floats. For ``"rmsprop"``, ``v`` is the square
    average and ``m`` the momentum buffer (``torch.optim.RMSprop``, ``centered=False``).
    """
    lr_p = lr_col.to(p.dtype)
    per_net = isinstance(wd, Tensor)

    def l2(grad: Tensor) -> Tensor:  # grad + wd * p
        return grad.addcmul(p, wd.to(p.dtype)) if per_net else grad.add(p, alpha=wd)

    if optimizer == "sgd":
        if per_net or wd:
            g = l2(g)
        if momentum:
            m.mul_(momentum).add_(g)
            g = m
        p.sub_(g * lr_p)
        return
    if optimizer == "rmsprop":
        if per_net or wd:
            g = l2(g)
        v.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        step = g / v.sqrt().add_(eps)
        if momentum:
            m.mul_(momentum).add_(step)
            step = m
        p.sub_(step * lr_p)
        return
    if optimizer == "adamw" and (per_net or wd):
        p.mul_((1 - lr_col * wd).to(p.dtype))
    elif per_net or wd:
        g = l2(g)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    step_size = (lr_col / (1 - beta1**t)).to(p.dtype)
    bc2_sqrt = torch.sqrt(1 - beta2**t).to(p.dtype)
    denom = (v.sqrt() / bc2_sqrt).add_(eps)
    p.sub_(m / denom * step_size)
