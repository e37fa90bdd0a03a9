"""Notebook 06's claims: the rows of the paper-vs-ours table (:func:`paper_rows`) and one function per claim id,
each adding its claim to the :class:`~hgutils.ledger.Claims` ledger from the notebook's computed
numbers (:func:`~.readout.claim_metrics` of a cell, their per-seed values, the same-initialisation
control, the hierarchy per cell, the density readout). Every claim names the cells it judges, through
:func:`~.grid.sdf_cell_gates`; every comparison over seeds goes through :mod:`hgutils.verdicts`.

In ledger order: :func:`claim_rff_pi`, :func:`claim_hierarchy`; per training domain
:func:`claim_dyadic_d4`, :func:`claim_dyadic_suppresses_d3`, :func:`claim_triaxis_low_d3_d6`,
:func:`claim_triaxis_below_threshold`, :func:`claim_triaxis_d3_visible`; per domain
:func:`claim_dyadic_d4_control` (main decay, then no decay) and :func:`claim_hierarchy_domain`; per domain
:func:`claim_triaxis_follows_density`.
"""

from __future__ import annotations

import pandas as pd

from hgutils.experiments.nb06_pe_symmetry_readout.factors import density_readout_by_seed
from hgutils.experiments.nb06_pe_symmetry_readout.grid import GridResult, sdf_cell_gates
from hgutils.experiments.nb06_pe_symmetry_readout.preset import PAPER, SymmetryReadoutConfig
from hgutils.ledger import Claims, PaperRow
from hgutils.verdicts import Absolute, all_of, compare_seeds

#: the square, triangle and hexagon: the shapes of the per-domain claims
FACTOR_SHAPES = ("square", "triangle", "hexagon")


def paper_rows(
    by_domain: dict[str, dict[str, float]],
    main: dict[str, float],
    main_prefix2: dict[str, float],
    main_domain: str,
    weight_decay: float,
) -> list[PaperRow]:
    """The rows of the paper's statements (:data:`PAPER`) beside our numbers (for
    :func:`hgutils.ledger.paper_table`), one "ours" column per training domain (``by_domain[domain]`` =
    :func:`claim_metrics` of that domain at ``weight_decay``) for the patterns measured on the square,
    triangle and hexagon, and the main grid's (``main``, ``main_prefix2``, trained on ``main_domain``; "—"
    in the other domains' columns) for the patterns that need all six shapes."""
    doms = list(by_domain)
    cols = {d: f"ours, {d} domain, wd {weight_decay:g}" for d in doms}

    def per_domain(fmt) -> dict[str, str]:
        return {cols[d]: fmt(by_domain[d]) for d in doms}

    def main_only(text: str) -> dict[str, str]:
        return {cols[d]: text if d == main_domain else "—" for d in doms}

    rows = [
        (
            "Dyadic: D4 readout on the square",
            PAPER["dyadic_d4"],
            per_domain(
                lambda m: f"min over D4∖I {m['dy_sq_d4_min']:.2f}; max non-liftable {m['dy_sq_nonlift_max']:.2f}"
            ),
        ),
        (
            "Dyadic: D3 rotations on the triangle",
            PAPER["dyadic_d3"],
            per_domain(
                lambda m: f"Gram max(R120, R240) {m['dy_tri_rot_max']:.2f} vs functional {m['dy_tri_rot_func']:.2f}"
            ),
        ),
        (
            "TriAxis: D3 / D6 readout",
            PAPER["triaxis"],
            per_domain(
                lambda m: (
                    f"triangle {m['tri_tri_mean']:.2f}, hexagon {m['tri_hex_mean']:.2f} "
                    f"(Dyadic square {m['dy_sq_mean']:.2f}; off-group baseline {m['tri_tri_off']:.2f})"
                )
            ),
        ),
        (
            "RFF: π rotation (main grid, six shapes)",
            PAPER["rff"],
            main_only(
                f"R180 top for {main['rff_pi_top']:.0f}/{main['rff_pi_shapes']:.0f} π-symmetric shapes; "
                f"sweep peak |θ−180°| {main['rff_peak_mean_dev']:.1f}°"
            ),
        ),
        (
            "Hierarchy (main grid, six shapes)",
            PAPER["hierarchy"],
            main_only(
                f"prefix1: {main['high']:.0f} high, {main['viol_lift']:.0f} not liftable, "
                f"{main['viol_true']:.0f} not in G_true; prefix2: {main_prefix2['high']:.0f} / "
                f"{main_prefix2['viol_lift']:.0f} / {main_prefix2['viol_true']:.0f}"
            ),
        ),
    ]
    return [PaperRow(what, paper, PAPER["source"], ours) for what, paper, ours in rows]


def claim_rff_pi(claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, m: dict[str, float]) -> None:
    """``rff_pi``: RFF's top non-identity readout is R180 on the main grid (``m``: its
    :func:`~.readout.claim_metrics` with the sweep)."""
    wd = cfg.weight_decay
    claims.add(
        "rff_pi",
        f"RFF responds mainly to the π rotation (main grid: {cfg.domain} domain, weight decay {wd:g})",
        paper=PAPER["rff"],
        ours=f"R180 top for {m['rff_pi_top']:.0f}/{m['rff_pi_shapes']:.0f}; "
        f"sweep peak off by {m['rff_peak_mean_dev']:.1f}°",
        criterion="R180 is the top non-identity element for every π-symmetric shape and the mean sweep peak is "
        "within 10° of 180°",
        holds=m["rff_pi_top"] == m["rff_pi_shapes"] and m["rff_peak_mean_dev"] <= 10.0,
        source=PAPER["source"],
        trained=sdf_cell_gates(
            grid.meta, cfg.fit_tol, [("RandomFourierPE", s.name, cfg.domain, wd) for s in grid.shapes]
        ),
    )


def claim_hierarchy(claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, m: dict[str, float]) -> None:
    """``hierarchy``: no first-layer Gram readout of the main grid is high outside :math:`G_{lift} \\cap
    G_{true}` (``m``: the main grid's :func:`~.readout.claim_metrics`)."""
    wd = cfg.weight_decay
    claims.add(
        "hierarchy",
        "Every element read out high (first-layer Gram) is liftable and in G_true "
        f"(main grid: {cfg.domain}, wd {wd:g})",
        paper=PAPER["hierarchy"],
        ours=f"{m['high']:.0f} high, {m['viol_lift']:.0f}+{m['viol_true']:.0f} violations",
        criterion=f"no cell with score ≥ {cfg.threshold} is non-liftable or outside G_true (and at least one is high)",
        holds=m["viol_lift"] + m["viol_true"] == 0 and m["high"] > 0,
        source="arXiv:2607.03108, Proposition 1",
        trained=sdf_cell_gates(
            grid.meta, cfg.fit_tol, [(e.name, s.name, cfg.domain, wd) for e in grid.encodings for s in grid.shapes]
        ),
    )


def claim_dyadic_d4(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, md: dict[str, float], ps: pd.DataFrame
) -> None:
    """``dyadic_d4@<d>``: Dyadic's D4 readout on the square beats the non-liftable elements, paired over
    seeds (``md``: :func:`~.readout.claim_metrics` of domain ``d`` at the main decay, ``ps`` its
    :func:`~.readout.claim_metrics_by_seed`)."""
    wd = cfg.weight_decay
    claims.add(
        f"dyadic_d4@{d}",
        f"DyadicAxisPE supports D4 readout (square; {d} domain, weight decay {wd:g})",
        paper=PAPER["dyadic_d4"],
        ours=f"min D4∖I {md['dy_sq_d4_min']:.3f} vs max non-liftable {md['dy_sq_nonlift_max']:.3f} (seed means)",
        criterion="per seed, min score over D4∖{I} − max score over non-liftable elements; its mean − 0.1 > 2 se "
        "(paired over seeds)",
        test=compare_seeds(
            ps["dy_sq_d4_min"],
            ps["dy_sq_nonlift_max"],
            paired=True,
            margin=0.1,
            label="D4 min − non-liftable max",
            digits=3,
        ),
        source=PAPER["source"],
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("DyadicAxisPE", "square", d, wd)]),
    )


def claim_dyadic_suppresses_d3(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, md: dict[str, float]
) -> None:
    """``dyadic_suppresses_d3@<d>``: Dyadic's Gram score of the triangle's D3 rotations stays low although
    the function keeps them (``md``: :func:`~.readout.claim_metrics` of domain ``d``)."""
    wd = cfg.weight_decay
    claims.add(
        f"dyadic_suppresses_d3@{d}",
        f"DyadicAxisPE suppresses the triangle's D3 rotations although f is D3-symmetric ({d} domain)",
        paper=PAPER["dyadic_d3"],
        ours=f"Gram {md['dy_tri_rot_max']:.3f}, functional {md['dy_tri_rot_func']:.3f}",
        criterion="max Gram score of R120/R240 < 0.4 and their functional score > 0.8",
        holds=md["dy_tri_rot_max"] < 0.4 and md["dy_tri_rot_func"] > 0.8,
        source=PAPER["source"],
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("DyadicAxisPE", "triangle", d, wd)]),
    )


def claim_triaxis_low_d3_d6(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, md: dict[str, float], ps: pd.DataFrame
) -> None:
    """``triaxis_low_d3_d6@<d>`` (comparative reading): TriAxis's D3 / D6 readout is below Dyadic's D4
    readout of the square, unpaired over seeds (``md``, ``ps`` as for :func:`claim_dyadic_d4`)."""
    wd = cfg.weight_decay
    claims.add(
        f"triaxis_low_d3_d6@{d}",
        f"TriAxisPE gives lower D3/D6 Gram scores (triangle, hexagon) than Dyadic gives D4 (square) ({d} domain)",
        paper=PAPER["triaxis"],
        ours=f"D3 {md['tri_tri_mean']:.3f}, D6 {md['tri_hex_mean']:.3f}, Dyadic D4 {md['dy_sq_mean']:.3f}",
        criterion="comparative: Dyadic square's mean over D4∖{I} − TriAxis's mean over G_true∖{I} > 2 se over seeds "
        "(unpaired), for the triangle and for the hexagon",
        test=all_of(
            [
                compare_seeds(ps["dy_sq_mean"], ps[k], paired=False, label=f"Dyadic D4 − TriAxis {n}", digits=3)
                for k, n in (("tri_tri_mean", "D3"), ("tri_hex_mean", "D6"))
            ]
        ),
        source=PAPER["source"],
        trained=sdf_cell_gates(
            grid.meta,
            cfg.fit_tol,
            [("TriAxisPE", "triangle", d, wd), ("TriAxisPE", "hexagon", d, wd), ("DyadicAxisPE", "square", d, wd)],
        ),
    )


def claim_triaxis_below_threshold(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, md: dict[str, float]
) -> None:
    """``triaxis_below_threshold@<d>`` (absolute reading): TriAxis's D3 / D6 Gram scores stay below the
    readout threshold (``md``: :func:`~.readout.claim_metrics` of domain ``d``)."""
    wd = cfg.weight_decay
    claims.add(
        f"triaxis_below_threshold@{d}",
        f"TriAxisPE's D3 (triangle) and D6 (hexagon) Gram scores stay below the readout threshold ({d} domain)",
        paper=PAPER["triaxis"],
        ours=f"D3 {md['tri_tri_mean']:.3f}, D6 {md['tri_hex_mean']:.3f}",
        criterion=f"absolute: mean TriAxis score over G_true∖{{I}} < {cfg.threshold} for both the triangle and the "
        "hexagon",
        holds=max(md["tri_tri_mean"], md["tri_hex_mean"]) < cfg.threshold,
        source=PAPER["source"],
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("TriAxisPE", s, d, wd) for s in ("triangle", "hexagon")]),
    )


def claim_triaxis_d3_visible(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, md: dict[str, float], ps: pd.DataFrame
) -> None:
    """``triaxis_d3_visible@<d>`` (ours): TriAxis's D3 readout of the triangle is above its off-group
    baseline, paired over seeds (``md``, ``ps`` as for :func:`claim_dyadic_d4`)."""
    wd = cfg.weight_decay
    claims.add(
        f"triaxis_d3_visible@{d}",
        f"(ours) TriAxis D3 readout is above its off-group baseline: the lift is used ({d} domain)",
        paper="—",
        ours=f"D3 {md['tri_tri_mean']:.3f} vs liftable-but-not-symmetric {md['tri_tri_off']:.3f} (seed means)",
        criterion="TriAxis triangle: mean over D3∖{I} − mean over (D6∖D3), minus 0.1, > 2 se (paired over seeds)",
        test=compare_seeds(
            ps["tri_tri_mean"], ps["tri_tri_off"], paired=True, margin=0.1, label="D3 − (D6∖D3)", digits=3
        ),
        source="this notebook",
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("TriAxisPE", "triangle", d, wd)]),
    )


def claim_dyadic_d4_control(
    claims: Claims,
    cfg: SymmetryReadoutConfig,
    grid: GridResult,
    d: str,
    ctrl: pd.DataFrame,
    ctrl_seeds: pd.DataFrame,
    wd0: bool = False,
) -> None:
    """``dyadic_d4_control@<d>`` (at the main decay) or, with ``wd0``, ``dyadic_d4_control_wd0@<d>``
    (without decay): the square's Dyadic D4 readout exceeds its same-initialisation control (triangle),
    paired over seeds (``ctrl``, ``ctrl_seeds``: :func:`~.factors.same_init_control` and its per-seed
    values). Adds nothing when that decay is not in the factor grid's ladder, nor at the main decay when
    it is 0 (the ``_wd0`` claim covers it)."""
    label, w = ("_wd0", 0.0) if wd0 else ("", cfg.weight_decay)
    if w not in cfg.weight_decays or (label == "" and w == 0.0):
        return
    c = ctrl[(ctrl["domain"] == d) & (ctrl["weight_decay"] == w)].iloc[0]
    pair = ctrl_seeds[(ctrl_seeds["domain"] == d) & (ctrl_seeds["weight_decay"] == w)].sort_values("seed")
    claims.add(
        f"dyadic_d4_control{label}@{d}",
        f"(ours) Dyadic D4 readout on the square exceeds its same-initialisation control (triangle), {d} domain, "
        f"weight decay {w:g}",
        paper=PAPER["dyadic_d4"] + " (weight decay not stated)",
        ours=f"square {c['score']:.3f}, control {c['control']:.3f}, init {c['init']:.3f}; paired gap {c['gap']:.3f} "
        f"(smallest seed {c['gap_min']:.3f}, {c['n']:.0f} seeds)",
        criterion="paired gap (square − triangle, same init) over R90,R180,R270,S0,S45,S135: its seed mean − 0.1 "
        "> 2 se (paired over seeds)",
        test=compare_seeds(pair["score"], pair["control"], paired=True, margin=0.1, label="square − control", digits=3),
        source="this notebook",
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("DyadicAxisPE", s, d, w) for s in ("square", "triangle")]),
    )


def claim_hierarchy_domain(
    claims: Claims, cfg: SymmetryReadoutConfig, grid: GridResult, d: str, hcells: pd.DataFrame
) -> None:
    """``hierarchy@<d>``: the hierarchy holds in every weight-decay cell of domain ``d`` on the square,
    triangle and hexagon (``hcells``: :func:`~.readout.hierarchy_by_cell` of those shapes)."""
    wds = cfg.weight_decays
    h = hcells[(hcells["domain"] == d) & (hcells["encoding"].isin([e.name for e in grid.encodings]))]
    per_wd = h.groupby("weight_decay")[["high", "not_liftable", "not_in_G_true"]].sum()
    claims.add(
        f"hierarchy@{d}",
        f"In every weight-decay cell of the {d} domain, every element read out high is liftable and in G_true",
        paper=PAPER["hierarchy"],
        ours="; ".join(
            f"wd {w:g}: {r.high:.0f} high, {r.not_liftable:.0f}+{r.not_in_G_true:.0f} violations"
            for w, r in per_wd.iterrows()
        ),
        criterion=f"first-layer Gram, threshold {cfg.threshold}, square/triangle/hexagon: no high cell is "
        "non-liftable or outside G_true in any cell",
        holds=int(per_wd["not_liftable"].sum() + per_wd["not_in_G_true"].sum()) == 0,
        source="arXiv:2607.03108, Proposition 1",
        trained=sdf_cell_gates(
            grid.meta, cfg.fit_tol, [(e.name, s, d, w) for e in grid.encodings for s in FACTOR_SHAPES for w in wds]
        ),
    )


def claim_triaxis_follows_density(
    claims: Claims,
    cfg: SymmetryReadoutConfig,
    grid: GridResult,
    d: str,
    dens: dict[str, float],
    frame: pd.DataFrame,
) -> None:
    """``triaxis_follows_density@<d>`` (ours): on domain ``d`` TriAxis reads the triangle's and hexagon's
    symmetries the training density respects, not those it breaks, while the function keeps both
    (``dens``: :func:`~.factors.density_readout` of domain ``d`` at the main decay; the paired test
    reads :func:`~.factors.density_readout_by_seed` of ``frame``). Adds nothing when the density breaks
    none of them (the disk)."""
    if dens["n_broken"] == 0:
        return
    wd = cfg.weight_decay
    per = density_readout_by_seed(frame, "TriAxisPE", d, cfg.weight_decay, ["triangle", "hexagon"])
    claims.add(
        f"triaxis_follows_density@{d}",
        f"(ours) On the {d} domain TriAxis reads the triangle's and hexagon's symmetries the density respects, "
        "not those it breaks, although the function keeps both",
        paper="—",
        ours=f"respected {dens['kept_gram']:.3f} (function {dens['kept_functional']:.3f}); "
        f"broken {dens['broken_gram']:.3f} (function {dens['broken_functional']:.3f})",
        criterion="mean Gram score of liftable G_true elements the density respects − of those it breaks, minus 0.2, "
        "> 2 se (paired over seeds); and the function's mean score of the broken ones > 0.8 (absolute)",
        test=all_of(
            [
                compare_seeds(
                    per["kept_gram"], per["broken_gram"], paired=True, margin=0.2, label="respected − broken", digits=3
                ),
                Absolute(
                    "function keeps the broken ones",
                    bool(dens["broken_functional"] > 0.8),
                    f"{dens['broken_functional']:.3f}",
                ),
            ]
        ),
        source="this notebook",
        trained=sdf_cell_gates(grid.meta, cfg.fit_tol, [("TriAxisPE", s, d, wd) for s in ("triangle", "hexagon")]),
    )
