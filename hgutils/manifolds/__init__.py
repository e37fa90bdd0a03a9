"""Manifold math as pure tensor functions, one curvature convention: ``c > 0`` is the magnitude.

- :mod:`hgutils.manifolds.poincare` -- Poincaré ball of radius ``1/sqrt(c)`` and the Klein model
  (Möbius operations, exp/log maps, transport, Einstein midpoint, hyperplane distances).
- :mod:`hgutils.manifolds.lorentz` -- Lorentz hyperboloid ``<x, x>_L = -1/c``, time coordinate
  first (exp/log maps, transport, gyro-operations, closed-form centroid, hyperplane logits).
- :mod:`hgutils.manifolds.numerics` -- the one place where numerical clamps live.

geoopt's ``PoincareBall(c)`` uses the same ``c``; geoopt's ``Lorentz(k)`` uses ``k = 1/c``.
"""

from hgutils.manifolds import lorentz, numerics, poincare

__all__ = ["lorentz", "numerics", "poincare"]
