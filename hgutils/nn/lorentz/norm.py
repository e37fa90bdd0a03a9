r"""GyroLBN: gyro Lorentz batch normalisation -- gyro-centring at the closed-form centroid, gyro-scaling by a
dispersion statistic, a gyro-bias (ILNN, arXiv:2602.23981, GyroLBN)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz.points import _centred_polar, _check_features, _rescale_and_bias, _sk

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
