"""hgutils: the library behind the companion notebooks.

Subpackages (dependency direction left to right):

- :mod:`hgutils.manifolds` -- pure tensor functions on the Poincaré ball, Klein model and Lorentz
  hyperboloid (curvature ``-c`` with ``c > 0`` everywhere).
- :mod:`hgutils.nn` -- torch modules built on the manifold functions (hyperbolic attention,
  intrinsic Lorentz layers).
- :mod:`hgutils.weightspace` -- network zoos with training trajectories, parameter graphs and
  meta-networks (GTH-GMN and baselines).
- :mod:`hgutils.similarity` -- metric similarity analysis and classic representation similarity.
- :mod:`hgutils.symmetry` -- positional encodings with exact lifts, SDF shapes, symmetry readout.
- :mod:`hgutils.data`, :mod:`hgutils.repro`, :mod:`hgutils.plotting`, :mod:`hgutils.presets` --
  datasets, reproducibility (seeding, cache, claims ledger), one plotting style, scale presets.
- :mod:`hgutils.loop` -- the one training loop every model trains through (budgets, early
  stopping, checkpoint/resume, curves, the learnability check).
- :mod:`hgutils.experiments` -- one driver module per notebook (its preset, paper numbers, runs,
  figures); :mod:`hgutils.runner` and :mod:`hgutils.notebook_tools` -- running, sweeping,
  publishing and cleaning the notebooks (CLI: ``python -m hgutils``).
"""

__version__ = "0.1.0"
