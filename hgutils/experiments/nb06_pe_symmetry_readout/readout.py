r"""Notebook 06's readout tables: the long table of Gram and functional scores of every network
(:func:`readout_frame`), one (domain, weight decay) cell of it (:func:`cell_frame`), the rotation sweep
(:func:`sweep_frame`, :func:`sweep_peaks`), the hierarchy check :math:`G_{obs} \subseteq G_{lift} \cap
G_{true}` (:func:`hierarchy_check`, per cell :func:`hierarchy_by_cell`, its outliers
:func:`hierarchy_outliers`), score tables (:func:`score_table`) and the measured numbers behind the claims
(:func:`claim_metrics`, per seed :func:`claim_metrics_by_seed`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb06_pe_symmetry_readout.grid import GridResult
from hgutils.symmetry.groups import GroupElement
from hgutils.symmetry.readout import VARIANTS, functional_profile, readout_profile


def readout_frame(
    grid: GridResult,
    elements: Sequence[GroupElement],
    *,
    depth: int | None = None,
    variants: Sequence[str] = VARIANTS,
    include_init: bool = True,
    lift_tol: float = 1e-6,
) -> pd.DataFrame:
    """Long table of scores: one row per (network, observation, variant, element).

    Observations: ``prefix1..prefix{depth}`` (trained weights), ``prefix1@init`` (the same network's
    initial weights, the baseline) and ``functional`` (``f(gx)`` vs ``f(x)`` on the eval points;
    its variant column is ``"data"``). Adds ``liftable`` (lift residual < ``lift_tol``), ``residual``,
    ``in_G_true`` (``g`` is a symmetry of the shape) and ``in_G_data`` (the training density of the
    network's (shape, domain) is ``g``-invariant).
    """
    n_linear = sum(1 for k in grid.params if k.startswith("W"))
    depth = n_linear - 1 if depth is None else depth
    shapes = {s.name: s for s in grid.shapes}
    cols = ["net", "shape", "encoding", "seed", "group", "domain", "weight_decay"]
    data_sym = {
        (sh, dom): [shapes[sh].sampling_symmetry(g, dom) for g in elements]
        for sh, dom in set(zip(grid.meta["shape"], grid.meta["domain"]))
    }
    out = []
    for enc in grid.encodings:
        idx = grid.select(encoding=enc.name)
        if len(idx) == 0:
            continue
        meta = grid.meta.iloc[idx].reset_index(drop=True)
        scores: dict[tuple[str, str], torch.Tensor] = {}
        for k in range(1, depth + 1):
            for v in variants:
                scores[(f"prefix{k}", v)] = readout_profile(
                    grid.subset(idx), enc, elements, observation=f"prefix{k}", variant=v
                )
        if include_init:
            for v in variants:
                scores[("prefix1@init", v)] = readout_profile(
                    grid.subset(idx, "init"), enc, elements, observation="prefix1", variant=v
                )
        scores[("functional", "data")] = functional_profile(grid.subset(idx), enc, elements, grid.eval_points)
        lifts = np.array([enc.lift(g)[1] for g in elements])
        n, E = len(meta), len(elements)
        in_true = np.array([[shapes[s].is_symmetry(g) for g in elements] for s in meta["shape"]])
        in_data = np.array([data_sym[(s, dm)] for s, dm in zip(meta["shape"], meta["domain"])])
        base = meta[cols].loc[np.repeat(np.arange(n), E)]
        base = base.reset_index(drop=True)
        base["element"] = np.tile([g.name for g in elements], n)
        base["kind"] = np.tile([g.kind for g in elements], n)
        base["angle"] = np.tile([g.angle for g in elements], n)
        base["residual"] = np.tile(lifts, n)
        base["liftable"] = np.tile(lifts < lift_tol, n)
        base["in_G_true"] = in_true.reshape(-1)
        base["in_G_data"] = in_data.reshape(-1)
        for (obs, var), sc in scores.items():
            df = base.copy()
            df["observation"], df["variant"] = obs, var
            df["score"] = sc.numpy().reshape(-1)  # row-major [net, element] matches repeat/tile above
            out.append(df)
    return pd.concat(out, ignore_index=True)


def cell_frame(frame: pd.DataFrame, domain: str, weight_decay: float) -> pd.DataFrame:
    """The rows of one (domain, weight decay) cell of a :func:`readout_frame` table."""
    f = frame[(frame["domain"] == domain) & (frame["weight_decay"] == float(weight_decay))]
    if f.empty:
        cells = sorted(set(zip(frame["domain"], frame["weight_decay"])))
        raise ValueError(f"no rows at domain={domain!r}, weight_decay={weight_decay!r}; cells are {cells}")
    return f


def _one_cell(frame: pd.DataFrame, who: str) -> None:
    """Seed means over networks of different cells would mix domains or decays: refuse them."""
    if "domain" in frame.columns and frame[["domain", "weight_decay"]].drop_duplicates().shape[0] > 1:
        raise ValueError(f"{who} needs one (domain, weight_decay) cell; select it with cell_frame(frame, ...) first")


def sweep_frame(
    grid: GridResult, elements: Sequence[GroupElement], observation: str = "prefix1", variant: str = "frobenius"
) -> pd.DataFrame:
    """Seed-mean readout score per (encoding, shape, angle) for a rotation sweep, plus lift residuals.
    ``grid`` must hold one (domain, weight decay) cell (:meth:`GridResult.cell`)."""
    _one_cell(grid.meta, "sweep_frame")
    rows = []
    for enc in grid.encodings:
        idx = grid.select(encoding=enc.name)
        sc = readout_profile(grid.subset(idx), enc, elements, observation=observation, variant=variant).numpy()
        res = [enc.lift(g)[1] for g in elements]
        meta = grid.meta.iloc[idx].reset_index(drop=True)
        for shape in meta["shape"].unique():
            m = (meta["shape"] == shape).to_numpy()
            mean = sc[m].mean(0)
            for j, g in enumerate(elements):
                rows.append(
                    {"encoding": enc.name, "shape": shape, "angle": g.angle, "score": mean[j], "residual": res[j]}
                )
    return pd.DataFrame(rows)


def hierarchy_check(frame: pd.DataFrame, threshold: float) -> pd.DataFrame:
    r"""Per (encoding, observation, variant) of one cell: how many (shape, element) cells (seed-mean
    score) are "high" (≥ ``threshold``) and how many of those violate
    :math:`G_{obs} \subseteq G_{lift}\cap G_{true}` (high but not liftable, or high but not in
    :math:`G_{true}`); ``not_in_G_data`` counts high cells whose element the training density breaks
    (allowed by the hierarchy). The identity is excluded."""
    _one_cell(frame, "hierarchy_check")
    f = frame[frame["element"] != "R0"]
    agg = {"score": ("score", "mean"), "liftable": ("liftable", "first"), "in_G_true": ("in_G_true", "first")}
    if "in_G_data" in f.columns:
        agg["in_G_data"] = ("in_G_data", "first")
    cell = f.groupby(["encoding", "observation", "variant", "shape", "element"], sort=False).agg(**agg).reset_index()
    cell["high"] = cell["score"] >= threshold
    cell["viol_lift"] = cell["high"] & ~cell["liftable"]
    cell["viol_true"] = cell["high"] & ~cell["in_G_true"]
    out = {
        "cells": ("high", "size"),
        "high": ("high", "sum"),
        "not_liftable": ("viol_lift", "sum"),
        "not_in_G_true": ("viol_true", "sum"),
    }
    if "in_G_data" in cell.columns:
        cell["off_data"] = cell["high"] & ~cell["in_G_data"].astype(bool)
        out["not_in_G_data"] = ("off_data", "sum")
    return cell.groupby(["encoding", "observation", "variant"], sort=False).agg(**out).reset_index()


def hierarchy_by_cell(
    frame: pd.DataFrame, threshold: float, observation: str = "prefix1", variant: str = "frobenius"
) -> pd.DataFrame:
    """:func:`hierarchy_check` of one observation in every (domain, weight decay) cell, one row per
    (domain, weight_decay, encoding)."""
    f = frame[(frame["observation"] == observation) & (frame["variant"] == variant)]
    if f.empty:
        raise ValueError(f"no rows for observation={observation!r}, variant={variant!r}")
    parts = []
    for (dom, wd), g in f.groupby(["domain", "weight_decay"], sort=False):
        h = hierarchy_check(g, threshold)
        h.insert(0, "weight_decay", wd)
        h.insert(0, "domain", dom)
        parts.append(h.drop(columns=["observation", "variant"]))
    return pd.concat(parts, ignore_index=True)


def hierarchy_outliers(
    frame: pd.DataFrame, threshold: float, observation: str = "prefix1", variant: str = "frobenius"
) -> pd.DataFrame:
    """The (domain, weight decay, encoding, shape, element) cells whose seed-mean score is ≥ ``threshold``
    although the element is not liftable or not in :math:`G_{true}`, with the learned function's own
    (functional) score of that element: a high functional score marks a near-symmetry of the target."""
    keys = ["domain", "weight_decay", "encoding", "shape", "element"]
    f = frame[frame["element"] != "R0"]
    g = f[(f["observation"] == observation) & (f["variant"] == variant)]
    cell = g.groupby(keys, sort=False).agg(
        score=("score", "mean"), liftable=("liftable", "first"), in_G_true=("in_G_true", "first")
    )
    fun = f[f["observation"] == "functional"].groupby(keys, sort=False)["score"].mean().rename("functional")
    cell = cell.join(fun).reset_index()
    bad = (cell["score"] >= threshold) & ~(cell["liftable"] & cell["in_G_true"])
    return cell[bad].reset_index(drop=True)


def score_table(frame: pd.DataFrame, observation: str, variant: str = "frobenius") -> pd.DataFrame:
    """Seed-mean scores of one cell as a table: rows ``(encoding, shape)``, columns the elements (input order)."""
    _one_cell(frame, "score_table")
    var = "data" if observation == "functional" else variant
    f = frame[(frame["observation"] == observation) & (frame["variant"] == var)]
    if f.empty:
        raise ValueError(f"no rows for observation={observation!r}, variant={var!r}")
    els = list(dict.fromkeys(f["element"]))
    encs, shps = list(dict.fromkeys(f["encoding"])), list(dict.fromkeys(f["shape"]))
    tab = f.groupby(["encoding", "shape", "element"])["score"].mean().unstack()[els]
    return tab.reindex(pd.MultiIndex.from_product([encs, shps], names=["encoding", "shape"]))


def sweep_peaks(sweep: pd.DataFrame, exclude_deg: float = 15.0) -> pd.DataFrame:
    """Angle of the highest seed-mean sweep score per (encoding, shape), ignoring angles within
    ``exclude_deg`` of 0/360 (small rotations are close to the identity for any smooth readout)."""
    f = sweep[(sweep["angle"] >= exclude_deg) & (sweep["angle"] <= 360.0 - exclude_deg)]
    idx = f.groupby(["encoding", "shape"], sort=False)["score"].idxmax()
    return f.loc[idx, ["encoding", "shape", "angle", "score"]].reset_index(drop=True)


def _cell(frame: pd.DataFrame, observation: str, variant: str, encoding: str, shape: str) -> pd.DataFrame:
    var = "data" if observation == "functional" else variant
    f = frame[
        (frame["observation"] == observation)
        & (frame["variant"] == var)
        & (frame["encoding"] == encoding)
        & (frame["shape"] == shape)
    ]
    return f.groupby("element", sort=False).agg(
        score=("score", "mean"), liftable=("liftable", "first"), in_G_true=("in_G_true", "first")
    )


def claim_metrics(
    frame: pd.DataFrame,
    sweep: pd.DataFrame | None = None,
    observation: str = "prefix1",
    variant: str = "frobenius",
    threshold: float = 0.7,
) -> dict[str, float]:
    """The measured numbers behind notebook 06's claims in one (domain, weight decay) cell (seed means;
    identity excluded throughout). Needs the square, triangle and hexagon.

    - ``dy_sq_d4_min`` / ``dy_sq_nonlift_max``: Dyadic, square: lowest score over D4∖{I}, highest over
      the non-liftable candidates.
    - ``dy_tri_rot_max`` / ``dy_tri_rot_func``: Dyadic, triangle: highest Gram score and lowest
      functional score of the D3 rotations R120, R240; ``dy_tri_s90``: its one liftable symmetry.
    - ``dy_sq_mean``, ``tri_tri_mean``, ``tri_hex_mean``: mean score over :math:`G_{true}` ∖ {I} for
      (Dyadic, square), (TriAxis, triangle), (TriAxis, hexagon); ``tri_tri_off``: TriAxis, triangle,
      mean over liftable elements outside :math:`G_{true}` (its baseline); ``tri_tri_func``,
      ``tri_hex_func``: the functional scores over the same elements.
    - ``rff_pi_top``: number of shapes with R180 ∈ G_true whose top non-identity RFF score is R180, of
      ``rff_pi_shapes``; ``rff_peak_mean_dev`` (with ``sweep``): mean absolute distance of the sweep's peak
      angle from 180° over them.
    - ``viol_lift`` / ``viol_true`` / ``high``: hierarchy violations and high cells at ``threshold``
      over all encodings.
    """
    _one_cell(frame, "claim_metrics")
    missing = {"square", "triangle", "hexagon"} - set(frame["shape"])
    if missing:
        raise ValueError(f"claim_metrics needs the square, triangle and hexagon; missing {sorted(missing)}")
    m: dict[str, float] = {}
    sq = _cell(frame, observation, variant, "DyadicAxisPE", "square").drop(index="R0")
    m["dy_sq_d4_min"] = float(sq.loc[sq["liftable"] & sq["in_G_true"], "score"].min())
    m["dy_sq_nonlift_max"] = float(sq.loc[~sq["liftable"], "score"].max())
    m["dy_sq_mean"] = float(sq.loc[sq["in_G_true"], "score"].mean())
    tri = _cell(frame, observation, variant, "DyadicAxisPE", "triangle")
    tri_f = _cell(frame, "functional", variant, "DyadicAxisPE", "triangle")
    m["dy_tri_rot_max"] = float(tri.loc[["R120", "R240"], "score"].max())
    m["dy_tri_rot_func"] = float(tri_f.loc[["R120", "R240"], "score"].min())
    m["dy_tri_s90"] = float(tri.loc["S90", "score"])
    tt = _cell(frame, observation, variant, "TriAxisPE", "triangle").drop(index="R0")
    th = _cell(frame, observation, variant, "TriAxisPE", "hexagon").drop(index="R0")
    tt_f = _cell(frame, "functional", variant, "TriAxisPE", "triangle").drop(index="R0")
    th_f = _cell(frame, "functional", variant, "TriAxisPE", "hexagon").drop(index="R0")
    m["tri_tri_mean"] = float(tt.loc[tt["in_G_true"], "score"].mean())
    m["tri_hex_mean"] = float(th.loc[th["in_G_true"], "score"].mean())
    m["tri_tri_func"] = float(tt_f.loc[tt_f["in_G_true"], "score"].mean())
    m["tri_hex_func"] = float(th_f.loc[th_f["in_G_true"], "score"].mean())
    m["tri_tri_off"] = float(tt.loc[tt["liftable"] & ~tt["in_G_true"], "score"].mean())
    top, n, devs = 0, 0, []
    peaks = sweep_peaks(sweep) if sweep is not None else None
    for shape in dict.fromkeys(frame["shape"]):
        c = _cell(frame, observation, variant, "RandomFourierPE", shape).drop(index="R0")
        if c.empty or "R180" not in c.index or not bool(c.loc["R180", "in_G_true"]):
            continue
        n += 1
        top += int(c["score"].idxmax() == "R180")
        if peaks is not None:
            pk = peaks[(peaks["encoding"] == "RandomFourierPE") & (peaks["shape"] == shape)]
            if len(pk):
                devs.append(abs(float(pk["angle"].iloc[0]) - 180.0))
    m["rff_pi_top"], m["rff_pi_shapes"] = float(top), float(n)
    m["rff_peak_mean_dev"] = float(np.mean(devs)) if devs else float("nan")
    h = hierarchy_check(frame[frame["observation"] == observation], threshold)
    h = h[h["variant"] == variant]
    m["viol_lift"], m["viol_true"] = float(h["not_liftable"].sum()), float(h["not_in_G_true"].sum())
    m["high"] = float(h["high"].sum())
    return m


def claim_metrics_by_seed(
    frame: pd.DataFrame, observation: str = "prefix1", variant: str = "frobenius", threshold: float = 0.7
) -> pd.DataFrame:
    """:func:`claim_metrics` of each seed's networks alone (one row per seed, one column per metric):
    the per-seed values that the comparative claims judge over seeds (:mod:`hgutils.verdicts`)."""
    _one_cell(frame, "claim_metrics_by_seed")
    rows = {int(s): claim_metrics(f, None, observation, variant, threshold) for s, f in frame.groupby("seed")}
    return pd.DataFrame(rows).T.sort_index()
