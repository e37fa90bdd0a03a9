r"""ILNN layers: intrinsic Lorentz neural-network components (ILNN, ICLR 2026, arXiv:2602.23981, §4).

Every module takes and returns ambient Lorentz vectors ``[..., n+1]`` (time first) on the
hyperboloid :math:`\langle x,x\rangle_L = -1/c`; feature counts name *space* dimensions. Image
features are channel-last ``[B, H, W, C+1]``, sequence features ``[B, L, C+1]``.

Design rule checked by the tests: as :math:`c \to 0` each component reduces to its Euclidean
counterpart (PLFC → ``z x_s + (b - a‖z‖)``, GyroLBN → isotropic batch norm, see the classes).

Where the paper is silent the defaults follow the authors' released code (github.com/Longchentong/ILNN):
PLFC normals :math:`z \sim N(0, 0.02^2)`, logits clamped to ±10, the log-radius scale *multiplying*
the concatenated patch, GyroLBN scale initialised at 0.5. Each such choice is a constructor argument.

The package, by job: :mod:`.points` (lifting onto the hyperboloid, the boost, ``asinh``, the closed forms the
layers share), :mod:`.concat` (log-radius concatenation), :mod:`.plfc` (PLFC, its gyro-bias, the MLR head),
:mod:`.norm` (GyroLBN), :mod:`.conv` (the Lorentz convolutions) and :mod:`.layers` (activation, dropout,
residuals, pooling); every name is imported from ``hgutils.nn.lorentz`` itself.
"""

from __future__ import annotations

# the underscored helpers (``x as x``) are re-exported for the HCNN/GyroBN baselines of
# hgutils.nn.lorentz_baselines and the tests, which share them with these layers
from hgutils.nn.lorentz.concat import SCALE_DIRECTIONS, concat_factor, log_radius_concat, log_radius_scale
from hgutils.nn.lorentz.conv import LorentzConv1d, LorentzConv2d
from hgutils.nn.lorentz.conv import _conv2d as _conv2d
from hgutils.nn.lorentz.conv import _pair as _pair
from hgutils.nn.lorentz.layers import (
    LorentzActivation,
    LorentzAvgPool1d,
    LorentzDropout,
    LorentzGlobalAvgPool,
    LorentzResidual,
    lorentz_residual,
)
from hgutils.nn.lorentz.norm import DISPERSIONS, GyroLBN
from hgutils.nn.lorentz.plfc import PLFC, GyroBias, LorentzMLR, plfc_from_logits
from hgutils.nn.lorentz.points import _centred_polar as _centred_polar
from hgutils.nn.lorentz.points import _check_features as _check_features
from hgutils.nn.lorentz.points import _hyperplane_logits as _hyperplane_logits
from hgutils.nn.lorentz.points import _rescale_and_bias as _rescale_and_bias
from hgutils.nn.lorentz.points import _sk as _sk
from hgutils.nn.lorentz.points import (
    asinh,
    boost,
    space_to_lorentz,
    to_lorentz,
)

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
