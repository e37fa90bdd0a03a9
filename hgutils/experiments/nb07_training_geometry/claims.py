r"""Notebook 07's claims, one function per claim id: the three statements of the paper's embedding
figure (:func:`claim_layers_separate_radially`, :func:`claim_layers_separate_angularly`,
:func:`claim_nodes_drift_outward`, in ledger order), each judged against the time-shuffled control
through :mod:`hgutils.verdicts`; :func:`geometry_claims` records the three (the paper dry run's entry point).

For a readout :math:`g` (radial separation :math:`\eta^2_r`, angular separation :math:`\eta^2_\theta`,
mean hyperbolic radius) of read network :math:`i` at snapshot :math:`t`, the change
:math:`\Delta_i = g_i(t_\text{late}) - g_i(t_\text{early})` must be above 0 and above the change
:math:`\Delta^\text{shuf}_i` of the same network read with its snapshots shuffled, each paired over
the read networks by more than 2 standard errors
(:func:`hgutils.weightspace.embedding_geometry.trend_against_control`).
"""

from __future__ import annotations

from typing import Any

from hgutils.experiments.nb07_training_geometry.preset import PAPER_SOURCE, snapshot_pair
from hgutils.experiments.nb07_training_geometry.runs import EmbeddingReadout
from hgutils.ledger import Claims
from hgutils.weightspace.embedding_geometry import trend_against_control

#: the geometry statements of the paper's figure: (claim id, readout, statement), in ledger order. The ids are
#: those notebook 01 recorded them under (with the suffix ``@13-layer``) before the figure moved here.
GEOMETRY_CLAIMS: tuple[tuple[str, str, str], ...] = (
    ("layers-separate-radially", "radial_sep", "layers separate radially over training"),
    ("layers-separate-angularly", "angular_sep", "layers separate angularly over training"),
    ("nodes-drift-outward", "mean_radius", "nodes drift toward the boundary over training"),
)


def _check_readouts(readout: EmbeddingReadout, keys: list[str]) -> None:
    missing = [key for key in keys if key not in readout.readouts or key not in readout.control]
    if missing:
        raise ValueError(f"the readout lacks {missing} (need them in both the true and the shuffled order)")


def _geometry_claim(
    claims: Claims,
    cid: str,
    key: str,
    statement: str,
    readout: EmbeddingReadout,
    gate: dict[str, Any] | None,
    judge: bool,
    tag: str,
) -> None:
    """Record claim ``<cid>@<tag>``: readout ``key`` changes between the paper's snapshots
    (:func:`snapshot_pair` of the readout's T) by more than 0 and more than its time-shuffled control."""
    _check_readouts(readout, [key])
    a, b = readout.readouts[key], readout.control[key]
    n, T = a.shape
    early, late = snapshot_pair(T)
    test = trend_against_control(a, b, early, late, key)
    claims.add(
        f"{cid}@{tag}",
        f"{statement} ({tag} INRs, {T} snapshots)",
        paper="visual (13-layer INR MLP, t = 11 vs t = 97)",
        ours={
            f"t={early}": round(float(a[:, early].mean()), 3),
            f"t={late}": round(float(a[:, late].mean()), 3),
            "change": round(float((a[:, late] - a[:, early]).mean()), 3),
            "control change": round(float((b[:, late] - b[:, early]).mean()), 3),
            "networks": n,
        },
        criterion=f"{key}(t={late}) - {key}(t={early}) > 0 and > the time-shuffled control's change, each by "
        "> 2 se over the read networks (paired)",
        test=test if judge else None,
        reason=None if judge else "smoke scale",
        source=PAPER_SOURCE,
        trained={"GTH-GMN": gate} if judge and gate is not None else None,
    )


def claim_layers_separate_radially(
    claims: Claims, readout: EmbeddingReadout, gate: dict[str, Any] | None, judge: bool, tag: str = "13-layer"
) -> None:
    """``layers-separate-radially@<tag>``: the layers' radial separation :math:`\\eta^2_r` (``radial_sep``)
    grows over training beyond the shuffled control (``gate``: the encoder's learnability check, with
    ``capped``; nothing is judged when ``judge`` is false, at smoke)."""
    _geometry_claim(claims, *GEOMETRY_CLAIMS[0], readout, gate, judge, tag)


def claim_layers_separate_angularly(
    claims: Claims, readout: EmbeddingReadout, gate: dict[str, Any] | None, judge: bool, tag: str = "13-layer"
) -> None:
    """``layers-separate-angularly@<tag>``: the layers' angular separation :math:`\\eta^2_\\theta`
    (``angular_sep``) grows over training beyond the shuffled control (arguments as for
    :func:`claim_layers_separate_radially`)."""
    _geometry_claim(claims, *GEOMETRY_CLAIMS[1], readout, gate, judge, tag)


def claim_nodes_drift_outward(
    claims: Claims, readout: EmbeddingReadout, gate: dict[str, Any] | None, judge: bool, tag: str = "13-layer"
) -> None:
    """``nodes-drift-outward@<tag>``: the nodes' mean hyperbolic radius (``mean_radius``) grows over
    training beyond the shuffled control (arguments as for :func:`claim_layers_separate_radially`)."""
    _geometry_claim(claims, *GEOMETRY_CLAIMS[2], readout, gate, judge, tag)


def geometry_claims(
    claims: Claims,
    readout: EmbeddingReadout,
    gate: dict[str, Any] | None,
    judge: bool,
    tag: str = "13-layer",
) -> None:
    """Record the figure's three statements in ledger order (:func:`claim_layers_separate_radially`,
    :func:`claim_layers_separate_angularly`, :func:`claim_nodes_drift_outward`) on one embedding readout;
    a readout lacking any of the three keys is refused before anything is recorded."""
    _check_readouts(readout, [key for _, key, _ in GEOMETRY_CLAIMS])
    claim_layers_separate_radially(claims, readout, gate, judge, tag)
    claim_layers_separate_angularly(claims, readout, gate, judge, tag)
    claim_nodes_drift_outward(claims, readout, gate, judge, tag)
