r"""The point-to-hyperplane Lorentz fully connected layer (PLFC), its gyro-bias and the Lorentz MLR head
(ILNN, arXiv:2602.23981, PLFC; Bdeir et al. 2024, arXiv:2303.15919, Eq. 10). Per output unit the logit is the
signed hyperplane distance :math:`v = \sqrt{k}\|z\|\operatorname{arsinh}(\alpha/(\sqrt{k}\|z\|))`; PLFC maps
it by :math:`y_s = \sqrt{k}\sinh(v/\sqrt{k})` and a gyro-bias (:func:`plfc_from_logits`)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz.points import _check_features, _hyperplane_logits, _sk


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
