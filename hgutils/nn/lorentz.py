r"""ILNN layers: intrinsic Lorentz neural-network components (ILNN, ICLR 2026, arXiv:2602.23981, §4).

Every module takes and returns ambient Lorentz vectors ``[..., n+1]`` (time first) on the
hyperboloid :math:`\langle x,x\rangle_L = -1/c`; feature counts name *space* dimensions. Image
features are channel-last ``[B, H, W, C+1]``, sequence features ``[B, L, C+1]``.

Design rule checked by the tests: as :math:`c \to 0` each component reduces to its Euclidean
counterpart (PLFC → ``z x_s + (b - a‖z‖)``, GyroLBN → isotropic batch norm, see the classes).

Where the paper is silent the defaults follow the authors' released code (github.com/Longchentong/ILNN):
PLFC normals :math:`z \sim N(0, 0.02^2)`, logits clamped to ±10, the log-radius scale *multiplying*
the concatenated patch, GyroLBN scale initialised at 0.5. Each such choice is a constructor argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.manifolds.numerics import check_curvature, clamp_min_norm

__all__ = [
    "asinh",
    "boost",
    "to_lorentz",
    "space_to_lorentz",
    "SCALE_DIRECTIONS",
    "log_radius_scale",
    "concat_factor",
    "log_radius_concat",
    "plfc_from_logits",
    "PLFC",
    "GyroBias",
    "DISPERSIONS",
    "GyroLBN",
    "LorentzConv2d",
    "LorentzConv1d",
    "LorentzActivation",
    "LorentzDropout",
    "lorentz_residual",
    "LorentzResidual",
    "LorentzGlobalAvgPool",
    "LorentzAvgPool1d",
    "LorentzMLR",
]


def _sk(c: float) -> float:
    check_curvature(c)
    return 1.0 / math.sqrt(c)


def _check_features(x: torch.Tensor, n: int, what: str, layout: str = "[..., n+1]") -> None:
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != n + 1:
        raise ValueError(
            f"{what} expects Lorentz features {layout} with n = {n} space dims, time first in the "
            f"LAST axis (channel-last); got shape {tuple(getattr(x, 'shape', ()))}"
        )


class _Asinh(torch.autograd.Function):
    r""":math:`\operatorname{arsinh}` as a composition of vectorised kernels, derivative
    :math:`1/\sqrt{1+x^2}` (see :func:`asinh`)."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        ax = x.abs()
        q = ax / (1 + torch.hypot(ax, torch.ones_like(ax)))  # x^2 / (1 + sqrt(1 + x^2)) = |x| q, q < 1
        # log(1 + |x| + |x| q) = log1p(|x|) + log1p(|x| q / (1 + |x|)): no overflow up to float max
        return torch.copysign(torch.log1p(ax) + torch.log1p(q * (ax / (1 + ax))), x)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return g * torch.rsqrt(1 + x * x)


def asinh(x: torch.Tensor) -> torch.Tensor:
    r""":math:`\operatorname{arsinh}(x) = \operatorname{sign}(x)\,\log(1 + |x| + x^2/(1 + \sqrt{1 + x^2}))`,
    evaluated as :math:`\log(1+|x|) + \log(1 + |x| q/(1+|x|))` with :math:`q = |x|/(1+\sqrt{1+x^2})`.

    The ``log1p`` form keeps full relative precision near 0 (within 2 ulp of ``torch.asinh``, tested)
    and cannot overflow. It exists for speed: ``torch.asinh`` has no vectorised CPU kernel in
    torch 2.13 and dominated the ILNN layers' cost (``benchmarks/lorentz_layers.py`` measures the ratio).
    """
    return _Asinh.apply(x)


def boost(a: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    r"""The Lorentz boost :math:`B_a` ``[n+1, n+1]`` with :math:`B_a x = a \oplus x` for every point ``x``.

    Left gyro-translation by ``a`` (Möbius addition carried to the hyperboloid) is the pure boost
    taking the origin to ``a``, a linear map of the ambient coordinates (Ungar 2008, *Analytic
    Hyperbolic Geometry and Albert Einstein's Special Theory of Relativity*, §3):

    .. math:: B_a = \begin{pmatrix} a_t/\sqrt k & a_s^\top/\sqrt k \\
              a_s/\sqrt k & I + a_s a_s^\top / (\sqrt k(\sqrt k + a_t)) \end{pmatrix}

    (the closed form of :func:`hgutils.manifolds.lorentz.gyroadd`, tested against it). Applying it
    to a batch is one small matrix product. ``a`` is one point ``[n+1]``.
    """
    if a.dim() != 1 or a.shape[0] < 2:
        raise ValueError(f"boost expects one Lorentz point [n+1]; got shape {tuple(a.shape)}")
    sk = _sk(c)
    at, asp = a[:1], a[1:]
    top = torch.cat((at, asp)) / sk
    eye = torch.eye(len(asp), dtype=a.dtype, device=a.device)
    lower = torch.cat((asp[:, None] / sk, eye + asp[:, None] * asp / (sk * (sk + at))), dim=1)
    return torch.cat((top[None], lower), dim=0)


def _hyperplane_logits(x: torch.Tensor, z: torch.Tensor, a: torch.Tensor, c: float) -> torch.Tensor:
    r""":func:`hgutils.manifolds.lorentz.hyperplane_logits` (same formula, tested equal) with the
    vectorised :func:`asinh`: :math:`v = \sqrt{k}\|z\|\operatorname{arsinh}(\alpha/(\sqrt{k}\|z\|))`,
    :math:`\alpha = \cosh(a/\sqrt{k})\langle z, x_s\rangle - \sinh(a/\sqrt{k})\|z\|x_t`."""
    sk = _sk(c)
    zn = clamp_min_norm(z, dim=-1, keepdim=False)
    ta = a / sk
    alpha = torch.cosh(ta) * (x[..., 1:] @ z.transpose(0, 1)) - (torch.sinh(ta) * zn) * x[..., :1]
    skz = sk * zn
    return skz * asinh(alpha / skz)


def _centred_polar(flat: torch.Tensor, mu: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Space parts ``cs`` of :math:`(\ominus\mu) \oplus x_i`, their norms and
    :math:`\theta_i = \operatorname{arsinh}(\|cs_i\|/\sqrt k)` (so :math:`d(x_i, \mu) = \sqrt k\,\theta_i`)."""
    cs = flat @ boost(L.gyroinv(mu), c)[1:].to(flat.dtype).T
    n = clamp_min_norm(cs)
    return cs, n, asinh(n / _sk(c))


def _rescale_and_bias(
    cs: torch.Tensor, n: torch.Tensor, th: torch.Tensor, r: torch.Tensor, b: torch.Tensor, c: float
) -> torch.Tensor:
    r""":math:`b \oplus (r \otimes x)` for the centred points of :func:`_centred_polar` (``b`` a point)."""
    sk = _sk(c)
    rth = r * th
    xh = torch.cat((sk * torch.cosh(rth), sk * torch.sinh(rth) * (cs / n)), dim=-1)
    return space_to_lorentz(xh @ boost(b, c)[1:].to(xh.dtype).T, c)


def space_to_lorentz(xs: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    r"""Attach the time coordinate to space parts: :math:`(\sqrt{1/c + \|x_s\|^2}, x_s)`."""
    sk = _sk(c)
    return torch.cat((torch.sqrt(sk * sk + (xs * xs).sum(-1, keepdim=True)), xs), dim=-1)


def to_lorentz(x: torch.Tensor, c: float = 1.0, channel_dim: int | None = 1, method: str = "expmap0") -> torch.Tensor:
    r"""Lift Euclidean features onto the hyperboloid, moving channels to the last axis.

    ``method="expmap0"``: :math:`\exp_o((0, x))`; ``"project"``: :math:`(\sqrt{1/c + \|x\|^2}, x)`.
    ``channel_dim`` names the channel axis of ``x`` (``1`` for ``[B, C, H, W]`` / ``[B, C, L]``);
    ``None`` means channels are already last.
    """
    if channel_dim is not None and channel_dim % x.dim() != x.dim() - 1:
        x = x.movedim(channel_dim, -1)
    if method == "project":
        return space_to_lorentz(x, c)
    if method == "expmap0":
        return L.expmap0(torch.cat((torch.zeros_like(x[..., :1]), x), dim=-1), c)
    raise ValueError(f"method must be 'expmap0' or 'project'; got {method!r}")


#: How :func:`log_radius_concat` applies the log-radius scale ``s`` to the concatenated space part.
SCALE_DIRECTIONS: tuple[str, ...] = ("multiply", "divide", "none")


def log_radius_scale(n_blocks: int, d: int) -> float:
    r"""Log-radius concatenation scale :math:`s = \exp(\tfrac12[\psi(Nd/2) - \psi(d/2)])` (≈ √N).

    ILNN (arXiv:2602.23981), Lorentz patch concatenation. For an isotropic Gaussian block
    :math:`x \in \mathbb{R}^d` with variance :math:`\sigma^2` per coordinate,
    :math:`\|x\|^2/\sigma^2 \sim \chi^2_d` and :math:`E\log\|x\| = \tfrac12(\psi(d/2) + \log 2\sigma^2)`;
    the plain concatenation of N such blocks is a Gaussian in :math:`\mathbb{R}^{Nd}`, whose expected
    log radius is larger by exactly :math:`\log s`.
    """
    if n_blocks < 1 or d < 1:
        raise ValueError(f"need n_blocks >= 1 and d >= 1; got {n_blocks}, {d}")
    return math.exp(
        0.5
        * (
            torch.special.digamma(torch.tensor(n_blocks * d / 2, dtype=torch.float64))
            - torch.special.digamma(torch.tensor(d / 2, dtype=torch.float64))
        ).item()
    )


def concat_factor(n_blocks: int, d: int, direction: str = "multiply") -> float:
    r"""Factor applied to the concatenated space part of N blocks of d space dims.

    ``"multiply"``: :math:`s` (the ILNN reference code); ``"divide"``: :math:`1/s`; ``"none"``: 1
    (HCNN-style direct concatenation), with :math:`s` = :func:`log_radius_scale`. For Gaussian blocks
    the expected log radius of the result is, relative to one block's
    :math:`E\log\|x_i\|`: :math:`+2\log s` (multiply), :math:`0` (divide), :math:`+\log s` (none).
    """
    if direction not in SCALE_DIRECTIONS:
        raise ValueError(f"direction must be one of {SCALE_DIRECTIONS}; got {direction!r}")
    s = log_radius_scale(n_blocks, d)
    return {"multiply": s, "divide": 1.0 / s, "none": 1.0}[direction]


def log_radius_concat(blocks: torch.Tensor, c: float = 1.0, direction: str = "multiply") -> torch.Tensor:
    r"""Concatenate N Lorentz blocks ``[..., N, d+1]`` into one point ``[..., N d + 1]``.

    Space :math:`f\cdot(x_{1,s}, \dots, x_{N,s})` with :math:`f` = :func:`concat_factor`
    (``direction``; the ILNN reference code multiplies by :math:`s`); time
    :math:`t = \sqrt{k + f^2\sum_i (t_i^2 - k)}` (recomputed from space, so padded origin blocks
    contribute nothing).
    """
    if blocks.dim() < 2 or blocks.shape[-1] < 2:
        raise ValueError(f"blocks must be [..., N, d+1]; got {tuple(blocks.shape)}")
    n, d = blocks.shape[-2], blocks.shape[-1] - 1
    f = concat_factor(n, d, direction)
    xs = blocks[..., 1:].reshape(*blocks.shape[:-2], n * d) * f
    return space_to_lorentz(xs, c)


class _PLFCMap(torch.autograd.Function):
    """The map of :func:`plfc_from_logits` (clamp, sinh, gyro-bias, time) with a hand-written backward:
    one node in the autograd graph instead of about twenty (the tests gradcheck it in float64)."""

    @staticmethod
    def forward(
        ctx: torch.autograd.function.FunctionCtx,
        v: torch.Tensor,
        bp: torch.Tensor | None,
        sk: float,
        vmax: float | None,
    ) -> torch.Tensor:
        vc = v if vmax is None else v.clamp(-vmax, vmax)
        e = vc / sk
        ys = sk * torch.sinh(e)
        if bp is None:
            zs = ys
            saved: tuple = ()
        else:
            bt, bs = bp[:1], bp[1:]
            yt = torch.sqrt(sk * sk + (ys * ys).sum(-1, keepdim=True))
            sdot = (ys * bs).sum(-1, keepdim=True)
            den = sk * (sk + yt)
            lam = bt / sk + sdot / den
            zs = lam * ys + bs
            saved = (bp, yt, sdot, den, lam)
        zt = torch.sqrt(sk * sk + (zs * zs).sum(-1, keepdim=True))
        ctx.sk, ctx.vmax, ctx.has_bias = sk, vmax, bp is not None
        ctx.save_for_backward(v, e, ys, zs, zt, *saved)
        return torch.cat((zt, zs), dim=-1)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> tuple:
        v, e, ys, zs, zt, *saved = ctx.saved_tensors
        sk = ctx.sk
        gz = g[..., 1:] + g[..., :1] * (zs / zt)  # through z_t = sqrt(k + |z_s|^2)
        g_bp = None
        if ctx.has_bias:
            bp, yt, sdot, den, lam = saved
            bs = bp[1:]
            q = (gz * ys).sum(-1, keepdim=True)
            # z_s = lam y_s + b_s,  lam = b_t/sk + <y_s, b_s> / (sk (sk + y_t)),  y_t = sqrt(k + |y_s|^2)
            gy = lam * gz + q * (bs / den - (sdot * sk / (den * den)) * (ys / yt))
            if ctx.needs_input_grad[1]:
                flat = (gz + q * ys / den).reshape(-1, bs.shape[0])
                g_bp = torch.cat(((q.sum() / sk).reshape(1), flat.sum(0)))
        else:
            gy = gz
        gv = gy * torch.cosh(e)
        if ctx.vmax is not None:
            gv = gv * ((v >= -ctx.vmax) & (v <= ctx.vmax))
        return gv, g_bp, None, None


def plfc_from_logits(
    v: torch.Tensor, c: float, bias_point: torch.Tensor | None = None, v_clamp: float | None = 10.0
) -> torch.Tensor:
    r"""PLFC output from hyperplane logits ``v [..., out]``.

    :math:`y_s = \sqrt{k}\sinh(v/\sqrt{k})`, :math:`y_t = \sqrt{k + \|y_s\|^2}`, then the gyro-bias
    :math:`y \oplus b` (:func:`hgutils.manifolds.lorentz.gyroadd` with a fixed point ``b``:
    :math:`(y \oplus b)_s = \lambda y_s + b_s`, :math:`\lambda = b_t/\sqrt{k} + \langle y_s, b_s\rangle
    /(\sqrt{k}(\sqrt{k} + y_t))`), time recomputed. ``v`` is clamped to ``±v_clamp`` (10 in the
    reference code) so ``sinh`` cannot overflow. ``bias_point`` is one point ``[out+1]``.
    """
    if bias_point is not None and bias_point.shape != (v.shape[-1] + 1,):
        raise ValueError(f"bias_point must be one point [{v.shape[-1] + 1}]; got {tuple(bias_point.shape)}")
    return _PLFCMap.apply(v, None if bias_point is None else bias_point.to(v.dtype), _sk(c), v_clamp)


class GyroBias(nn.Module):
    r"""Gyro-additive bias :math:`y = x \oplus \exp_o((0, b))`, ``b`` a Euclidean parameter (init 0)."""

    def __init__(self, num_features: int, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.num_features, self.c = num_features, c
        self.b = nn.Parameter(torch.zeros(num_features))

    def point(self) -> torch.Tensor:
        return L.expmap0(F.pad(self.b, (1, 0)), self.c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.num_features, "GyroBias")
        return L.gyroadd(x, self.point().to(x.dtype), self.c)


class PLFC(nn.Module):
    r"""Point-to-hyperplane Lorentz fully connected layer ``[..., in+1] → [..., out+1]``.

    ILNN (arXiv:2602.23981), PLFC. Per output unit :math:`j` the logit :math:`v_j` is the signed
    hyperplane distance of :func:`hgutils.manifolds.lorentz.hyperplane_logits` (normal :math:`z_j`,
    offset :math:`a_j`); then :func:`plfc_from_logits` (sinh map, time, gyro-bias
    :math:`\oplus \exp_o(0, b)`). Init :math:`z \sim N(0, \text{init\_std}^2)`, :math:`a = 0`,
    :math:`b = 0`; ``init_std=0.02`` is the reference code's value, ``None`` the fan-in scale
    :math:`1/\sqrt{\text{in}}`.

    Logits are clamped to ``|v| <= v_clamp`` (10, reference code): beyond it PLFC saturates and
    passes no gradient. The logits pass through the identity submodule ``logits`` (a hook point for
    diagnostics). ``validate=True`` checks that inputs lie on the hyperboloid (``ValueError`` otherwise).

    Flat limit (:math:`c \to 0`, fixed :math:`x_s`): :math:`y_s \to z x_s - a\|z\| + b`.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        v_clamp: float | None = 10.0,
        validate: bool = False,
    ) -> None:
        super().__init__()
        _sk(c)
        self.in_features, self.out_features, self.c, self.v_clamp = in_features, out_features, c, v_clamp
        self.validate = validate
        std = init_std if init_std is not None else 1.0 / math.sqrt(in_features)
        self.z = nn.Parameter(torch.randn(out_features, in_features) * std)
        self.a = nn.Parameter(torch.zeros(out_features))
        self.b = nn.Parameter(torch.zeros(out_features)) if bias else None
        self.logits = nn.Identity()

    def bias_point(self) -> torch.Tensor | None:
        return None if self.b is None else L.expmap0(F.pad(self.b, (1, 0)), self.c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.in_features, "PLFC")
        if self.validate:
            L.check_point(x, self.c, name="PLFC input")
        v = self.logits(_hyperplane_logits(x, self.z, self.a, self.c))
        return plfc_from_logits(v, self.c, self.bias_point(), self.v_clamp)

    def extra_repr(self) -> str:
        return f"{self.in_features}+1 -> {self.out_features}+1, c={self.c}, bias={self.b is not None}"


class LorentzMLR(nn.Module):
    r"""Lorentz multinomial logistic regression head (Bdeir et al. 2024, arXiv:2303.15919, Eq. 10):
    logits = hyperplane distances :func:`hgutils.manifolds.lorentz.hyperplane_logits`
    ``[..., in+1] → [..., classes]``. Init as in the HCNN and ILNN reference code: :math:`z` and
    :math:`a` uniform in :math:`\pm 1/\sqrt{\text{in}}` (``init_std`` overrides :math:`z` with
    :math:`N(0, \text{init\_std}^2)` and sets :math:`a = 0`)."""

    def __init__(self, in_features: int, num_classes: int, c: float = 1.0, init_std: float | None = None):
        super().__init__()
        _sk(c)
        self.in_features, self.num_classes, self.c = in_features, num_classes, c
        bound = 1.0 / math.sqrt(in_features)
        if init_std is None:
            self.z = nn.Parameter(torch.empty(num_classes, in_features).uniform_(-bound, bound))
            self.a = nn.Parameter(torch.empty(num_classes).uniform_(-bound, bound))
        else:
            self.z = nn.Parameter(torch.randn(num_classes, in_features) * init_std)
            self.a = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.in_features, "LorentzMLR")
        return _hyperplane_logits(x, self.z, self.a, self.c)


#: GyroLBN dispersion statistics (see :class:`GyroLBN`).
DISPERSIONS: tuple[str, ...] = ("frechet", "mean", "reference")


class GyroLBN(nn.Module):
    r"""Gyro Lorentz batch normalisation: gyro-centring at the closed-form centroid, gyro-scaling.

    ILNN (arXiv:2602.23981), GyroLBN. Over all batch positions (every axis but the last):

    1. :math:`\mu` = closed-form Lorentzian centroid (Law et al. 2019), accumulated in ``stats_dtype``
       (float64 by default); the distances :math:`d_i = d(x_i, \mu)` give the dispersion :math:`v`.
    2. :math:`\hat x_i = r \otimes ((\ominus\mu) \oplus x_i)` with :math:`r = \mathrm{clamp}(s, -2.5, 2)
       \cdot g(v)` and ``dispersion``:

       * ``"frechet"`` (the paper's normalisation, default): :math:`v = \overline{d_i^2}` (Fréchet
         variance about the centroid), :math:`g = 1/\sqrt{v + \epsilon}`: the output's RMS distance to
         its centre is :math:`s`;
       * ``"reference"`` (the ILNN reference code): :math:`v = \overline{d_i}` (mean distance),
         :math:`g = 1/\sqrt{v + \epsilon}`: the output's mean distance is :math:`s\sqrt{v}`, so it
         still follows the input's spread;
       * ``"mean"``: :math:`v = \overline{d_i}`, :math:`g = 1/(v + \epsilon)`: mean distance :math:`s`.
         Because :math:`(\ominus\mu)\oplus x = \exp_o(PT_{\mu\to o}\log_\mu x)`,
         :math:`r\otimes\exp_o(u) = \exp_o(r u)` and :math:`b\oplus\exp_o(u) = \exp_b(PT_{o\to b}u)`,
         this mode *is* HCNN's tangent-space :class:`~hgutils.nn.lorentz_baselines.LorentzBN`
         with :math:`\gamma = s` (tested): it differs from LBN only through the statistic.
    3. :math:`y = \exp_o((0, w)) \oplus \hat x` (bias point; ``w`` init 0, ``s`` init ``init_scale``,
       0.5 in the reference code).

    Training mode updates ``running_mean`` along the geodesic
    (:math:`\exp_{m}(\text{momentum}\cdot\log_{m}\mu)`) and ``running_var`` (:math:`v`) by EMA; eval
    mode uses them. Flat limit (``"frechet"``): batch norm with one isotropic variance,
    :math:`y_s \to w + s\,(x_s - \bar x_s)/\sqrt{\overline{\|x_s - \bar x_s\|^2} + \epsilon}`.
    """

    def __init__(
        self,
        num_features: int,
        c: float = 1.0,
        momentum: float = 0.1,
        eps: float = 1e-6,
        dispersion: str = "frechet",
        init_scale: float = 0.5,
        stats_dtype: torch.dtype | None = torch.float64,
        validate: bool = False,
    ) -> None:
        super().__init__()
        _sk(c)
        self.validate = validate
        if dispersion not in DISPERSIONS:
            raise ValueError(f"dispersion must be one of {DISPERSIONS}; got {dispersion!r}")
        self.num_features, self.c, self.momentum, self.eps = num_features, c, momentum, eps
        self.dispersion, self.stats_dtype = dispersion, stats_dtype
        self.s = nn.Parameter(torch.tensor(float(init_scale)))
        self.w = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", L.origin(num_features, c))
        self.register_buffer("running_var", torch.tensor(1.0))

    def batch_mean(self, flat: torch.Tensor) -> torch.Tensor:
        """Closed-form centroid of ``flat [M, n+1]``, accumulated in ``stats_dtype``."""
        m = flat.mean(0, dtype=self.stats_dtype or flat.dtype)
        return L.centroid(m[None], self.c)

    def statistic(self, d: torch.Tensor) -> torch.Tensor:
        """The dispersion :math:`v` of distances ``d`` to the centre (mean square or mean)."""
        dd = d * d if self.dispersion == "frechet" else d
        return dd.mean(dtype=self.stats_dtype or d.dtype)

    def factor(self, v: torch.Tensor) -> torch.Tensor:
        """The gyro-scaling factor :math:`r` for dispersion ``v``."""
        s = self.s.clamp(-2.5, 2.0)
        if self.dispersion == "mean":
            return s / (v + self.eps)
        return s / torch.sqrt(v + self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.num_features, "GyroLBN")
        if self.validate:
            L.check_point(x, self.c, name="GyroLBN input")
        sk = _sk(self.c)
        flat = x.reshape(-1, x.shape[-1])
        if self.training:
            if flat.shape[0] < 2:
                raise ValueError("GyroLBN in training mode needs at least 2 points per batch")
            mu = self.batch_mean(flat)
        else:
            mu = self.running_mean
        # gyro-translation is an isometry, so d(x_i, mu) = sqrt(k) theta_i of the centred point
        cs, n, th = _centred_polar(flat, mu, self.c)
        if self.training:
            v = self.statistic(sk * th)
            with torch.no_grad():
                rm = self.running_mean.to(mu.dtype)
                new = L.expmap(rm, self.momentum * L.logmap(rm, mu.detach(), self.c), self.c)
                self.running_mean.copy_(L.project(new, self.c).to(self.running_mean.dtype))
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * v.detach().to(self.running_var))
        else:
            v = self.running_var
        bias = L.expmap0(F.pad(self.w, (1, 0)), self.c)
        return _rescale_and_bias(cs, n, th, self.factor(v.to(x.dtype)), bias, self.c).reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.num_features}, c={self.c}, dispersion={self.dispersion}, momentum={self.momentum}"


class LorentzActivation(nn.Module):
    r"""Apply ``act`` to the space part and recompute time: :math:`(\sqrt{k + \|f(x_s)\|^2}, f(x_s))`."""

    def __init__(self, act: Callable[[torch.Tensor], torch.Tensor] = F.relu, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.act, self.c = act, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return space_to_lorentz(self.act(x[..., 1:]), self.c)


class LorentzDropout(nn.Module):
    r"""Dropout on the space part, time recomputed (identity in eval mode)."""

    def __init__(self, p: float = 0.5, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        if not 0 <= p < 1:
            raise ValueError(f"dropout p must be in [0, 1); got {p}")
        self.p, self.c = p, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        return space_to_lorentz(F.dropout(x[..., 1:], self.p, True), self.c)


def lorentz_residual(x: torch.Tensor, y: torch.Tensor, c: float = 1.0, mode: str = "space") -> torch.Tensor:
    r"""Residual connection on the hyperboloid.

    ``mode="space"`` (reference code): :math:`(\sqrt{k + \|x_s + y_s\|^2}, x_s + y_s)`;
    ``mode="gyro"``: :math:`x \oplus y`.
    """
    if x.shape != y.shape:
        raise ValueError(f"residual operands must have equal shapes; got {tuple(x.shape)} and {tuple(y.shape)}")
    if mode == "space":
        return space_to_lorentz(x[..., 1:] + y[..., 1:], c)
    if mode == "gyro":
        return L.gyroadd(x, y, c)
    raise ValueError(f"mode must be 'space' or 'gyro'; got {mode!r}")


class LorentzResidual(nn.Module):
    """Module form of :func:`lorentz_residual`: ``forward(x, y)``."""

    def __init__(self, c: float = 1.0, mode: str = "space") -> None:
        super().__init__()
        _sk(c)
        if mode not in ("space", "gyro"):
            raise ValueError(f"mode must be 'space' or 'gyro'; got {mode!r}")
        self.c, self.mode = c, mode

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return lorentz_residual(x, y, self.c, self.mode)


class LorentzGlobalAvgPool(nn.Module):
    r"""Centroid over all positions: ``[B, *spatial, n+1] → [B, n+1]``."""

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.c = c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() < 3:
            raise ValueError(f"LorentzGlobalAvgPool expects [B, *spatial, n+1]; got {tuple(x.shape)}")
        return L.centroid(x.reshape(x.shape[0], -1, x.shape[-1]), self.c)


class LorentzAvgPool1d(nn.Module):
    r"""Centroid over non-overlapping windows of ``kernel_size`` along the length of ``[B, L, n+1]``."""

    def __init__(self, kernel_size: int, c: float = 1.0) -> None:
        super().__init__()
        _sk(c)
        self.k, self.c = kernel_size, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        m = n // self.k
        if m < 1:
            raise ValueError(f"sequence length {n} shorter than pooling window {self.k}")
        return L.centroid(x[:, : m * self.k].reshape(b, m, self.k, d), self.c)


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _conv2d(x: torch.Tensor, w: torch.Tensor, stride: tuple[int, int], padding: tuple[int, int]) -> torch.Tensor:
    """``F.conv2d`` that runs a strided 1x1 convolution as subsampling + stride-1 convolution.

    torch 2.13's CPU backend corrupts the heap in the weight gradient of a 1x1, stride-2 conv2d
    (reproduced in isolation: "double free or corruption" / segfault); the subsampled form is the
    same arithmetic and avoids that kernel.
    """
    if w.shape[-2:] == (1, 1) and padding == (0, 0) and stride != (1, 1):
        return F.conv2d(x[:, :, :: stride[0], :: stride[1]].contiguous(), w)
    return F.conv2d(x, w, stride=stride, padding=padding)


class LorentzConv2d(nn.Module):
    r"""Intrinsic Lorentz convolution ``[B, H, W, in+1] → [B, H', W', out+1]``.

    ILNN (arXiv:2602.23981), Lorentz convolution = log-radius patch concatenation + PLFC. Each
    ``kh x kw`` patch (padding = origin points) is joined by :func:`log_radius_concat` (N = kh kw
    blocks of d = in space dims, ``scale_direction`` as in :func:`concat_factor`; the reference code
    multiplies) and fed to a :class:`PLFC` of ``in*kh*kw → out`` (``init_std`` 0.02 as in the reference
    code, ``None`` = fan-in). Computed with ``conv2d`` on the space part:
    :math:`\langle z, \hat x_s\rangle` is a convolution with kernel :math:`f z` and the patch time
    :math:`\sqrt{k + f^2\|P\|^2}` a box sum of :math:`\|x_s\|^2` -- the same numbers as the explicit
    patch route (tested). The hyperplane logits pass through ``fc.logits`` (a hook point).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        scale_direction: str = "multiply",
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c
        self.kernel_size, self.stride, self.padding = _pair(kernel_size), _pair(stride), _pair(padding)
        kh, kw = self.kernel_size
        self.scale_direction = scale_direction
        self.factor = concat_factor(kh * kw, in_channels, scale_direction)
        self.fc = PLFC(in_channels * kh * kw, out_channels, c, bias, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"LorentzConv2d expects [B, H, W, C+1] (channel-last); got {tuple(x.shape)}")
        _check_features(x, self.in_channels, "LorentzConv2d", "[B, H, W, C+1]")
        sk, kh, kw = _sk(self.c), *self.kernel_size
        xs = x[..., 1:].permute(0, 3, 1, 2).contiguous()  # [B, C, H, W]
        fc, f = self.fc, self.factor
        zw = (fc.z * f).view(self.out_channels, kh, kw, self.in_channels).permute(0, 3, 1, 2).contiguous()
        zx = _conv2d(xs, zw, self.stride, self.padding)  # [B, out, H', W']
        sq = _conv2d((xs * xs).sum(1, keepdim=True), xs.new_ones(1, 1, kh, kw), self.stride, self.padding) * f**2
        t = torch.sqrt(sk * sk + sq)
        zn = clamp_min_norm(fc.z, dim=-1, keepdim=False)[:, None, None]
        ta = (fc.a / sk)[:, None, None]
        alpha = torch.cosh(ta) * zx - torch.sinh(ta) * zn * t
        skz = sk * zn
        v = fc.logits((skz * asinh(alpha / skz)).permute(0, 2, 3, 1))
        return plfc_from_logits(v, self.c, fc.bias_point(), fc.v_clamp)

    def extra_repr(self) -> str:
        return f"{self.in_channels}+1 -> {self.out_channels}+1, kernel={self.kernel_size}, scale={self.scale_direction}"


class LorentzConv1d(nn.Module):
    r"""Intrinsic Lorentz 1-d convolution ``[B, L, in+1] → [B, L', out+1]`` (see :class:`LorentzConv2d`)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        c: float = 1.0,
        bias: bool = True,
        init_std: float | None = 0.02,
        scale_direction: str = "multiply",
    ) -> None:
        super().__init__()
        self.conv = LorentzConv2d(
            in_channels, out_channels, (1, kernel_size), (1, stride), (0, padding), c, bias, init_std, scale_direction
        )
        self.in_channels, self.out_channels, self.c = in_channels, out_channels, c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"LorentzConv1d expects [B, L, C+1] (channel-last); got {tuple(x.shape)}")
        return self.conv(x.unsqueeze(1)).squeeze(1)
