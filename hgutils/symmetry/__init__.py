"""Symmetry readout from weights (notebook 06; arXiv:2607.03108).

- :mod:`~hgutils.symmetry.groups` -- O(2) elements as named 2×2 matrices, ``dihedral(n)``,
  ``rotation_sweep(num)``, orthogonality validation.
- :mod:`~hgutils.symmetry.encodings` -- Fourier positional encodings (DyadicAxisPE, TriAxisPE,
  RandomFourierPE, or your own :class:`FourierPE`) with exact / least-squares lifts
  :math:`\\varphi(gx) = \\rho(g)\\varphi(x)` and ``liftable_set``.
- :mod:`~hgutils.symmetry.shapes` -- exact 2D SDFs with their true symmetry groups and samplers.
- :mod:`~hgutils.symmetry.domains` -- training domains (disk, square) and a test of a sampling density's
  symmetry from one sample.
- :mod:`~hgutils.symmetry.readout` -- prefix-Gram observations, readout scores, functional score.
"""

from hgutils.symmetry.domains import (
    DOMAINS,
    DiskDomain,
    Domain,
    SquareDomain,
    density_symmetry_profile,
    density_symmetry_z,
    get_domain,
)
from hgutils.symmetry.encodings import (
    DyadicAxisPE,
    FourierPE,
    RandomFourierPE,
    TriAxisPE,
    default_encodings,
    lift_table,
    liftable_set,
)
from hgutils.symmetry.groups import (
    GroupElement,
    as_matrix,
    candidate_elements,
    compose,
    cyclic,
    dihedral,
    reflection,
    rotation,
    rotation_sweep,
)
from hgutils.symmetry.readout import (
    functional_profile,
    functional_score,
    gram_observations,
    prefix_gram,
    readout_profile,
    readout_score,
)
from hgutils.symmetry.shapes import CircleShape, PolygonShape, Shape, default_shapes, get_shape, regular_polygon

__all__ = [
    "DOMAINS",
    "CircleShape",
    "DiskDomain",
    "Domain",
    "SquareDomain",
    "DyadicAxisPE",
    "FourierPE",
    "GroupElement",
    "PolygonShape",
    "RandomFourierPE",
    "Shape",
    "TriAxisPE",
    "as_matrix",
    "candidate_elements",
    "compose",
    "cyclic",
    "default_encodings",
    "default_shapes",
    "density_symmetry_profile",
    "density_symmetry_z",
    "dihedral",
    "functional_profile",
    "functional_score",
    "get_domain",
    "get_shape",
    "gram_observations",
    "lift_table",
    "liftable_set",
    "prefix_gram",
    "readout_profile",
    "readout_score",
    "reflection",
    "regular_polygon",
    "rotation",
    "rotation_sweep",
]
