"""Manifold math as pure tensor functions, one curvature convention: ``c > 0`` is the magnitude.

- :mod:`hgutils.manifolds.poincare` -- Poincaré ball of radius ``1/sqrt(c)`` and the Klein model
  (Möbius operations, exp/log maps, transport, Einstein midpoint, hyperplane distances).
- :mod:`hgutils.manifolds.lorentz` -- Lorentz hyperboloid ``<x, x>_L = -1/c``, time coordinate
  first (exp/log maps, transport, gyro-operations, closed-form centroid, hyperplane logits).
- :mod:`hgutils.manifolds.numerics` -- the one place where numerical clamps live, and the one
  implementation of the curvature convention below (:func:`hgutils.manifolds.numerics.curvature`).

Curvature and broadcasting convention (both models)
---------------------------------------------------
* ``c`` is the curvature *magnitude*: the sectional curvature is ``-c``. Every entry must be finite
  and ``> 0``; ``c <= 0``, NaN or inf raise ``ValueError``.
* Points and tangent vectors are ``[..., d]`` tensors (``d = n`` in the ball, ``d = n + 1`` ambient
  coordinates, time first, on the hyperboloid). Everything but the last axis is the *batch shape*;
  the arguments of a function broadcast over it, and functions returning one number per point
  (distances, conformal factors, inner products, dispersions) return the batch shape, with no
  trailing singleton.
* ``c`` is a Python number or a tensor broadcastable to the batch shape: 0-d (one curvature, the
  common case), ``[B]`` for points ``[B, d]``, ``[B1, B2]`` (or ``[B2]``, or ``[B1, 1]``) for
  ``[B1, B2, d]``. Entry ``c[i]`` applies to batch element ``i``: the result equals calling the
  function on element ``i`` with ``float(c[i])``. A tensor ``c`` may not have more dimensions than
  the batch shape, so geoopt's keep-dim ``[B, 1]`` next to ``[B, d]`` (which would broadcast silently
  to ``[B, B]``) raises ``ValueError``.
* Reductions over an axis of points (``poincare.einstein_midpoint``, ``lorentz.centroid``,
  ``lorentz.frechet_dispersion``) take one curvature per *set* of points: ``c`` broadcastable to
  the output batch shape (the batch shape without the reduced axis). ``poincare.einstein_midpoint_scatter``
  takes a number, a one-element tensor or one curvature per node (``[num_nodes]``).
* ``lorentz.origin(n, c)`` has no point argument: a tensor ``c`` of shape ``S`` gives ``S + (n+1,)``.
* Per-point scalars other than ``c`` follow the same rule: ``r`` of ``poincare.mobius_scalar`` and
  ``lorentz.gyroscalar``.
* A tensor ``c`` may require grad; gradients flow to it. A number and a 0-d tensor take the same code
  path (and give the same bits) as before batch-shaped curvatures were supported.

geoopt's ``PoincareBall(c)`` uses the same ``c``; geoopt's ``Lorentz(k)`` uses ``k = 1/c``.
"""

from hgutils.manifolds import lorentz, numerics, poincare

__all__ = ["lorentz", "numerics", "poincare"]
