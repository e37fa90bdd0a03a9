"""Torch modules built on :mod:`hgutils.manifolds`.

- :mod:`hgutils.nn.hyperbolic_attention` -- hyperbolic graph attention (GTH-GMN's message passing).
- :mod:`hgutils.nn.lorentz` -- intrinsic Lorentz layers (ILNN): PLFC, GyroLBN, Lorentz convolutions.
- :mod:`hgutils.nn.lorentz_baselines` -- HCNN-style Lorentz layers and Euclidean counterparts.
- :mod:`hgutils.nn.resnets`, :mod:`hgutils.nn.genomics` -- the models of notebook 04.

Import the submodule you need (``from hgutils.nn.lorentz import PLFC``); nothing is imported here
so that ``import hgutils.nn`` stays cheap.
"""
