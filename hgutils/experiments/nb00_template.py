r"""Notebook 00 -- the template: the cell layout every notebook follows, on a small real check.

Copy ``notebooks/00_template.ipynb`` and this module to start notebook NN (see docs/contributing.md,
"Adding a notebook"). A driver holds exactly what its notebook needs and nothing the library should
own: the preset (:data:`CONFIG`), the paper's numbers with their source (:data:`PAPER`), the run
function(s), the rows of the paper-vs-ours table (:func:`paper_rows`, shown by
:func:`hgutils.ledger.paper_table`), one function per claim id (``claim_<id>``: the notebook's claims
cell calls each on one line, in ledger order) and the notebook's figures. Everything reusable lives in
the library and is imported from there. This driver is one module because it is small; a larger one is
a package ``hgutils/experiments/nbNN_<name>/`` with the same parts as modules (``preset``, the runs,
``claims``, ``figures``), re-exported by its ``__init__``.

The example result is real and cheap: the Poincaré-ball exponential and logarithmic maps at the
origin are inverse to each other (Ganea, Bécigneul & Hofmann 2018, "Hyperbolic Neural Networks",
arXiv:1805.09112, Lemma 2 / Eq. 13), checked in float32 on random tangent vectors of growing norm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import pandas as pd
import torch

from hgutils.ledger import Claims, PaperRow
from hgutils.manifolds import poincare as pm
from hgutils.plotting import use_style
from hgutils.presets import Preset

__all__ = [
    "CONFIG",
    "PAPER",
    "TemplateConfig",
    "claim_roundtrip_breakdown",
    "claim_roundtrip_float32",
    "paper_rows",
    "plot_errors",
    "roundtrip_errors",
]

#: The claim's value in the paper and where it is stated.
PAPER: dict[str, Any] = {
    "value": "log_0(exp_0(v)) = v exactly",
    "source": "Ganea et al. 2018 (arXiv:1805.09112), Lemma 2 / Eq. 13",
}


@dataclass(frozen=True)
class TemplateConfig(Preset):
    """Sizes of the template notebook (smoke values are the defaults)."""

    n_points: int = 2000  # random tangent vectors per norm
    dim: int = 8  # dimension of the ball
    c: float = 1.0  # curvature magnitude (sectional curvature -c)
    max_norm: float = 6.0  # largest tangent norm tested (sqrt(c) |v|; tanh saturates near 8.3 in float32)
    n_norms: int = 13  # norms from 0 to max_norm
    #: inclusive ranges of the numeric fields; every count, size and step has an upper bound (a bad or absurd
    #: value is refused by ``from_scale``, so ``reproduce -p`` / ``sweep -p`` refuse it before launch)
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "n_points": (1, 1_000_000),
        "dim": (1, 100),
        "c": (0.0, None),
        "max_norm": (0.0, None),
        "n_norms": (1, 500),
    }
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu",)  # the identity checks run on the CPU whatever `device` says
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 0.5}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {},
        "medium": {"n_points": 20000, "n_norms": 25},
        "paper": {"n_points": 100000, "n_norms": 49},
    }


CONFIG = TemplateConfig


def roundtrip_errors(cfg: TemplateConfig, seed: int = 0) -> pd.DataFrame:
    r"""Relative error :math:`\|\log_0(\exp_0 v) - v\| / \|v\|` in float32, per tangent norm.

    Returns one row per norm: ``norm``, ``median`` and ``max`` relative error over ``n_points``
    random directions.
    """
    if cfg.n_points < 1 or cfg.n_norms < 2 or cfg.max_norm <= 0:
        raise ValueError(f"need n_points >= 1, n_norms >= 2, max_norm > 0; got {cfg}")
    g = torch.Generator().manual_seed(seed)
    rows = []
    for r in torch.linspace(0.0, cfg.max_norm, cfg.n_norms).tolist()[1:]:
        d = torch.randn(cfg.n_points, cfg.dim, generator=g)
        v = r / cfg.c**0.5 * d / d.norm(dim=-1, keepdim=True)
        err = (pm.logmap0(pm.expmap0(v, cfg.c), cfg.c) - v).norm(dim=-1) / v.norm(dim=-1)
        rows.append({"norm": r, "median": float(err.median()), "max": float(err.max())})
    return pd.DataFrame(rows)


def paper_rows(errors: pd.DataFrame) -> list[PaperRow]:
    """The paper's statement beside the largest error we measured (``errors``: :func:`roundtrip_errors`),
    the rows of :func:`hgutils.ledger.paper_table`."""
    return [PaperRow("log_0 inverts exp_0", PAPER["value"], PAPER["source"], f"{errors['max'].max():.2e}")]


# one function per claim id: each adds its claim to the ledger from the run's computed inputs


def claim_roundtrip_float32(claims: Claims, errors: pd.DataFrame) -> None:
    """``roundtrip_float32``: the round trip holds to float32 precision (max relative error < 1e-4) where
    float32 can hold it, sqrt(c)|v| <= 4 (``errors``: :func:`roundtrip_errors`)."""
    small = errors[errors["norm"] <= 4.0]
    claims.add(
        "roundtrip_float32",
        "log_0 inverts exp_0 to float32 precision for sqrt(c)|v| <= 4",
        paper=PAPER["value"],
        ours=float(small["max"].max()),
        criterion="max relative error over sqrt(c)|v| <= 4 is < 1e-4",
        holds=bool(small["max"].max() < 1e-4),
        source=PAPER["source"],
    )


def claim_roundtrip_breakdown(claims: Claims, errors: pd.DataFrame) -> None:
    """``roundtrip_breakdown`` (reported only): the smallest tested norm at which the round trip errs by
    >= 1e-4 (``None`` when none does)."""
    bad = errors[errors["max"] >= 1e-4]
    claims.add(
        "roundtrip_breakdown",
        "smallest tested norm at which the float32 round trip errs by >= 1e-4",
        paper="(not stated)",
        ours=float(bad["norm"].min()) if len(bad) else None,
        criterion="reported only",
        holds=None,
        source=PAPER["source"],
    )


def plot_errors(errors: pd.DataFrame) -> plt.Figure:
    """Median and maximum round-trip error against the tangent norm (log scale)."""
    use_style()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.semilogy(errors["norm"], errors["median"].clip(lower=1e-12), marker="o", label="median")
    ax.semilogy(errors["norm"], errors["max"].clip(lower=1e-12), marker="s", label="max")
    ax.set_xlabel(r"$\sqrt{c}\,\|v\|$")
    ax.set_ylabel("relative error")
    ax.set_title(r"$\log_0(\exp_0 v)$ vs $v$, float32")
    ax.legend()
    fig.tight_layout()
    return fig
