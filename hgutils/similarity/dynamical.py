r"""Dynamical similarity analysis (DSA) through its authors' package, ``dsa-metric`` (import name ``DSA``).

DSA (Ostrow, Eisen, Kozachkov & Fiete, NeurIPS 2023, arXiv:2306.10168) compares *dynamics*, not
geometry. For each system, the states :math:`x_t \in \mathbb{R}^D` of its trials are delay-embedded
(``n_delays`` copies, ``delay_interval`` apart: the Hankel matrix), reduced to the leading ``rank``
singular directions, and a linear operator :math:`A` is fitted to the embedded trajectories by least
squares (HAVOK / Hankel DMD). Two systems are compared by the *Procrustes analysis over vector fields*

.. math:: d(A, B) = \min_{C \in O(r)} \angle\big(A,\ C B C^\top\big)
    = \min_C \arccos \frac{\langle A, C B C^\top\rangle_F}{\|A\|_F\,\|B\|_F} \in [0, \pi]

(the angular variant; the package optimises :math:`C` by gradient descent on the Cayley
parametrisation, ``iters`` Adam steps at rate ``lr``, twice from two starts, and keeps the better). It
is invariant to orthogonal changes of the state space and to a rescaling of either system, and it sees
the operators only, not where the states lie.

:func:`dsa_matrix` calls :class:`DSA.DSA` with these settings and returns the similarity
:math:`1 - d/\pi \in [0, 1]` (1 = the same dynamics up to a rotation), so that ``1 - S`` is
proportional to the authors' angular distance. The package draws the starting point of each
optimisation from torch's global random state; :func:`dsa_matrix` seeds it (``seed``) inside a
forked random state, so the result is reproducible and the caller's random stream untouched.

The ``DSA`` package is imported when :func:`dsa_matrix` is first called (importing it takes several
seconds: it loads PyDMD and POT), not with :mod:`hgutils.similarity`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["DSA_SCORE", "dsa_matrix"]

#: the package's score used here: the angular Procrustes distance over vector fields (Ostrow et al. 2023)
DSA_SCORE = "angular"


def _as_trials(x, i: int) -> np.ndarray:
    a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    if a.ndim != 3 or min(a.shape) < 1:
        raise ValueError(f"system {i}: states must be [trials, T, D]; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"system {i}: states contain NaN or inf")
    return a.astype(np.float32)


def dsa_matrix(
    systems: Sequence,
    *,
    n_delays: int,
    rank: int,
    delay_interval: int = 1,
    iters: int = 1500,
    lr: float = 5e-3,
    seed: int = 0,
) -> np.ndarray:
    """All-pairs DSA similarity ``[M, M]`` (module docstring) of M systems, each ``[trials, T, D]``.

    ``n_delays``, ``delay_interval``, ``rank``: the HAVOK model of each system (``rank`` at most
    ``n_delays * D``); ``iters``, ``lr``: the Procrustes optimisation (the package's defaults for the
    ``DSA`` class are ``iters=1500``, ``lr=5e-3``).
    """
    reps = [_as_trials(x, i) for i, x in enumerate(systems)]
    if len(reps) < 2:
        raise ValueError(f"dsa_matrix needs at least 2 systems; got {len(reps)}")
    for name, v in (("n_delays", n_delays), ("rank", rank), ("delay_interval", delay_interval), ("iters", iters)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be an int >= 1; got {v!r}")
    T = min(r.shape[1] for r in reps)
    if (n_delays - 1) * delay_interval + 2 > T:
        raise ValueError(
            f"n_delays={n_delays} at interval {delay_interval} needs trajectories of at least "
            f"{(n_delays - 1) * delay_interval + 2} steps; the shortest has {T}"
        )
    width = min(n_delays * r.shape[2] for r in reps)
    if rank > width:
        raise ValueError(f"rank must be at most n_delays * D = {width}; got {rank}")
    import DSA  # the authors' package (dsa-metric); imported here: it takes seconds to load

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DSA.DSA(
            reps,
            n_delays=n_delays,
            delay_interval=delay_interval,
            rank=rank,
            score_method=DSA_SCORE,
            iters=iters,
            lr=lr,
            device="cpu",
            verbose=False,
        )
        d = np.asarray(model.fit_score(), dtype=np.float64)
    if d.shape != (len(reps), len(reps)):
        raise RuntimeError(f"DSA returned shape {d.shape}; expected {(len(reps), len(reps))}")
    d = 0.5 * (d + d.T)
    np.fill_diagonal(d, 0.0)
    return 1.0 - d / math.pi
