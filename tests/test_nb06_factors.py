"""Notebook 06's training domain × weight decay study (hgutils.experiments.nb06_pe_symmetry_readout)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from hgutils.experiments import nb06_pe_symmetry_readout as ex
from hgutils.ledger import Claims, paper_table
from hgutils.symmetry.domains import stream_seed
from hgutils.symmetry.groups import candidate_elements, rotation_sweep
from hgutils.symmetry.shapes import default_shapes

TINY = dict(hidden=8, n_points=512, batch=32, steps=4, n_eval=64, sweep_num=12)


@pytest.fixture(scope="module")
def tiny():
    cfg = ex.CONFIG.from_scale("smoke", **TINY)
    grid = ex.train_grid(cfg, seed=0)
    frame = ex.readout_frame(grid, candidate_elements())
    return cfg, grid, frame


def test_config_fields_and_validation():
    cfg = ex.CONFIG.from_scale("smoke", factor_weight_decays=[0.5, 0], factor_domains=["square"])
    assert cfg.factor_weight_decays == (0.5, 0.0) and isinstance(cfg.factor_domains, tuple)
    assert cfg.weight_decays == (0.0, 0.5, 1.0)  # the main decay joins the ladder, ascending
    assert cfg.domains == ("disk", "square")  # the main domain joins, in DOMAINS order
    assert ex.CONFIG.from_scale("medium").domain == "disk"
    hash(cfg)  # stays hashable with list overrides
    with pytest.raises(ValueError, match=r"domain must be one of \('disk', 'square'\); got 'torus'"):
        ex.CONFIG.from_scale("smoke", domain="torus")
    with pytest.raises(ValueError, match="domain must be one of"):
        ex.CONFIG.from_scale("smoke", factor_domains=["disk", "box"])
    with pytest.raises(ValueError, match=r"weight decays must be finite and >= 0; got -0.1"):
        ex.CONFIG.from_scale("smoke", weight_decay=-0.1)
    with pytest.raises(ValueError, match=r"factor_shapes must be drawn from .*unknown \['star'\]"):
        ex.CONFIG.from_scale("smoke", factor_shapes=["square", "star"])


def test_stream_seed_keeps_its_formula_and_separates_streams():
    # seed·100003 + s·1009 + shape + 50000017·domain index + 1000003·stream (the seeds 06 always used)
    assert stream_seed(0, 0, "disk", 0, 0) == 0
    assert stream_seed(3, 2, "square", 4, 1) == 3 * 100_003 + 2 * 1009 + 4 + 50_000_017 + 1_000_003 == 51_302_051
    keys = [(s, d, i, k) for s in range(3) for d in ("disk", "square") for i in range(6) for k in (0, 1)]
    assert len({stream_seed(7, *key) for key in keys}) == len(keys)  # every stream its own seed
    assert stream_seed(0, 1, "disk", 2, 0) != stream_seed(0, 1, "square", 2, 0)
    assert stream_seed(0, 1, "disk", 2, 0) != stream_seed(0, 1, "disk", 2, 1)
    with pytest.raises(ValueError, match="domain must be one of"):
        stream_seed(0, 0, "torus", 0, 0)


def test_grid_spec_main_and_factor_cells():
    cfg = ex.CONFIG.from_scale("smoke", n_seeds=2)
    spec = ex.grid_spec(cfg, default_shapes(), ex.make_encodings(cfg))
    # per seed: 6 shapes × 3 encodings in the main cell + 3 shapes × 3 encodings in the 5 other cells
    assert len(spec) == 2 * (18 + 5 * 9)
    main = spec[spec["main"]]
    assert set(main["domain"]) == {"disk"} and set(main["weight_decay"]) == {1.0} and len(main) == 2 * 18
    other = spec[~spec["main"]]
    assert set(other["shape"]) == {"square", "triangle", "hexagon"}
    assert set(zip(spec["domain"], spec["weight_decay"])) == {
        (d, w) for d in ("disk", "square") for w in (0.0, 0.1, 1.0)
    }
    sq = ex.grid_spec(ex.CONFIG.from_scale("smoke", domain="square"), default_shapes(), ex.make_encodings(cfg))
    assert set(sq[sq["main"]]["domain"]) == {"square"} and sq[sq["main"]]["shape"].nunique() == 6


def test_domain_reaches_the_trainer(tiny):
    cfg, grid, _ = tiny
    shapes = {s.name: s for s in grid.shapes}
    for _, r in grid.pool_meta.iterrows():
        x = grid.pools[int(r["pool"])].double()
        bulk = x[: cfg.n_points // 2]  # Shape.sample puts the uniform bulk first
        if r["domain"] == "square":
            assert bulk.abs().max() <= 1.0 and (bulk.norm(dim=-1) > 1.0).any(), "square pools fill the box"
        else:
            assert (bulk.norm(dim=-1) <= 1.0 + 1e-6).all(), "disk pools stay in the unit disk"
        # the pool is exactly the shape's sample on that domain from the pool's own stream
        i = [s.name for s in grid.shapes].index(r["shape"])
        gen = torch.Generator().manual_seed(stream_seed(0, int(r["seed"]), r["domain"], i, 0))
        ref, _ = shapes[r["shape"]].sample(cfg.n_points, gen, domain=r["domain"], dtype=torch.float64)
        assert torch.equal(x, ref.float().double())
    # every network trained on its own cell's pool
    for _, n in grid.meta.iterrows():
        pm = grid.pool_meta.iloc[int(n["pool"])]
        assert (pm["domain"], pm["shape"], pm["seed"]) == (n["domain"], n["shape"], n["seed"])


def test_weight_decay_reaches_the_trainer_with_same_init_and_data(tiny):
    cfg, grid, _ = tiny
    a = grid.select(encoding="DyadicAxisPE", shape="square", domain="square", weight_decay=0.0)[0]
    b = grid.select(encoding="DyadicAxisPE", shape="square", domain="square", weight_decay=1.0)[0]
    c = grid.select(encoding="TriAxisPE", shape="hexagon", domain="disk", weight_decay=0.1)[0]
    # one initialisation per seed across shapes, encodings, domains and decays
    assert torch.equal(grid.init["W0"][a], grid.init["W0"][b]) and torch.equal(grid.init["W0"][a], grid.init["W0"][c])
    # same init + same minibatch: identical loss before the first update, different weights after
    assert grid.history[0, a] == grid.history[0, b]
    assert grid.params["W0"][b].norm() < grid.params["W0"][a].norm()


def test_cells_do_not_depend_on_the_other_cells(tiny):
    cfg, grid, _ = tiny
    alone = ex.train_grid(
        ex.CONFIG.from_scale("smoke", factor_domains=["disk"], factor_weight_decays=[1.0], **TINY), seed=0
    )
    assert len(alone.meta) == 18
    both = grid.cell("disk", 1.0)
    assert list(both.meta["shape"]) == list(alone.meta["shape"])
    torch.testing.assert_close(both.params["W0"], alone.params["W0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(both.meta["eval_rel_err"], alone.meta["eval_rel_err"], rtol=1e-4)


def test_readout_frame_marks_the_density_symmetry(tiny):
    cfg, grid, frame = tiny
    shapes = {s.name: s for s in grid.shapes}
    f = frame[(frame["observation"] == "prefix1") & (frame["variant"] == "frobenius")]
    for (shape, dom, el), flag in f.groupby(["shape", "domain", "element"])["in_G_data"].first().items():
        g = next(e for e in candidate_elements() if e.name == el)
        assert flag == shapes[shape].sampling_symmetry(g, dom)
    tri_sq = f[(f["shape"] == "triangle") & (f["domain"] == "square") & f["in_G_data"]]
    assert set(tri_sq["element"]) == {"R0", "S90"}
    # one-cell functions refuse a frame that mixes cells
    with pytest.raises(ValueError, match=r"one \(domain, weight_decay\) cell"):
        ex.score_table(frame, "prefix1")
    with pytest.raises(ValueError, match=r"one \(domain, weight_decay\) cell"):
        ex.claim_metrics(frame)
    with pytest.raises(ValueError, match="no rows at domain='square', weight_decay=0.3"):
        ex.cell_frame(frame, "square", 0.3)
    with pytest.raises(ValueError, match="no networks at domain='square'"):
        grid.cell("square", 0.3)
    with pytest.raises(ValueError, match="no metadata column 'colour'"):
        grid.select(colour="red")
    main = ex.cell_frame(frame, "disk", 1.0)
    assert ex.score_table(main, "prefix1").shape == (18, 16)
    m = ex.claim_metrics(ex.cell_frame(frame, "square", 1.0), threshold=cfg.threshold)
    assert m["rff_pi_shapes"] == 2.0 and np.isnan(m["rff_peak_mean_dev"])
    with pytest.raises(ValueError, match="needs the square, triangle and hexagon"):
        ex.claim_metrics(main[main["shape"] != "hexagon"])


def test_factor_table_control_and_hierarchy(tiny):
    cfg, grid, frame = tiny
    ftab = ex.factor_table(frame)
    assert set(ftab["shape"]) == {"square", "triangle", "hexagon"}  # the shapes present in every cell
    assert "R0" not in set(ftab["element"]) and len(ftab) == 3 * 6 * (7 + 5 + 11)
    assert set(ftab.columns) >= {"gram", "init", "functional", "liftable", "in_G_data", "n"}
    ctrl = ex.same_init_control(frame)
    assert ctrl["elements"].iloc[0] == "R90,R180,R270,S0,S45,S135" and len(ctrl) == 6
    np.testing.assert_allclose(ctrl["gap"], ctrl["score"] - ctrl["control"])  # one seed: the paired gap
    f = frame[
        (frame["observation"] == "prefix1")
        & (frame["variant"] == "frobenius")
        & (frame["encoding"] == "DyadicAxisPE")
        & (frame["shape"] == "square")
        & (frame["domain"] == "disk")
        & (frame["weight_decay"] == 0.0)
        & frame["element"].isin(["R90", "R180", "R270", "S0", "S45", "S135"])
    ]
    assert ctrl.iloc[0]["score"] == pytest.approx(f["score"].mean())
    with pytest.raises(ValueError, match="no liftable element separates"):
        ex.same_init_control(frame, "DyadicAxisPE", "triangle", "square")
    h = ex.hierarchy_by_cell(frame[frame["shape"].isin(["square", "triangle", "hexagon"])], cfg.threshold)
    assert len(h) == 6 * 3 and (h["cells"] == 3 * 15).all()
    out = ex.hierarchy_outliers(frame, -10.0)  # every cell is "high": the outliers are the non-(lift ∩ true) ones
    assert len(out) and not (out["liftable"] & out["in_G_true"]).any() and out["functional"].notna().all()
    dens = ex.density_readout(ftab, "TriAxisPE", "square", 1.0, ["triangle", "hexagon"])
    assert dens["n_kept"] == 1 + 3 and dens["n_broken"] == 4 + 8  # S90 | R180, S0, S90 kept
    assert np.isnan(ex.density_readout(ftab, "TriAxisPE", "disk", 1.0, ["triangle"])["broken_gram"])


def test_sdf_cell_gates_make_claims_inconclusive(tiny):
    cfg, grid, _ = tiny
    cells = [("DyadicAxisPE", "square", "disk", 1.0)]
    loose = ex.sdf_cell_gates(grid.meta, 10.0, cells)
    strict = ex.sdf_cell_gates(grid.meta, 1e-6, cells)
    key = "Dyadic/square/disk/wd=1"
    assert set(loose) == {key} and "worst relative error" in strict[key]["reason"]
    assert strict[key]["trained"] is False
    claims = Claims("06_pe_symmetry_readout", "smoke")
    claims.add("x", "s", paper="p", ours=1.0, criterion="c", holds=False, source="t", trained=strict)
    assert claims.rows[0].verdict == "inconclusive (did not train)"
    with pytest.raises(ValueError, match="no networks for Dyadic/circle/square/wd=1"):
        ex.sdf_cell_gates(grid.meta, 0.1, [("DyadicAxisPE", "circle", "square", 1.0)])
    fit = ex.fit_table(grid.meta)
    assert len(fit) == 18 + 5 * 9 and (fit["n"] == 1).all()


def test_data_symmetry_tables_and_plots(tiny):
    cfg, grid, frame = tiny
    els = candidate_elements()
    dsym = ex.data_symmetry_table(grid, els)
    assert len(dsym) == len(grid.pool_meta) * len(els)
    assert (dsym[dsym["element"] == "R0"]["z"] == 0.0).all()
    summ = ex.data_symmetry_summary(dsym)
    row = summ[(summ["domain"] == "square") & (summ["shape"] == "triangle")].iloc[0]
    assert row["respected"] == "S90" and row["broken"] == "R120 R240 S30 S150"
    with pytest.raises(ValueError, match="no pools for seed index 3"):
        ex.data_symmetry_table(grid, els, seed_index=3)
    ftab = ex.factor_table(frame)
    with pytest.raises(ValueError, match="value must be a score column"):
        ex.plot_factor_scores(ftab, dsym, "cosine")
    plt.close(ex.plot_factor_scores(ftab, dsym, "functional"))
    plt.close(ex.plot_same_init_control(ex.same_init_control(frame)))
    plt.close(ex.plot_training_curves(grid, smooth=2))
    plt.close(ex.plot_domains(grid, "triangle"))
    main = grid.cell("disk", 1.0)
    sweep = ex.sweep_frame(main, rotation_sweep(cfg.sweep_num))
    assert len(sweep) == 3 * 6 * cfg.sweep_num
    with pytest.raises(ValueError, match=r"one \(domain, weight_decay\) cell"):
        ex.sweep_frame(grid, rotation_sweep(4))
    by_dom = {d: ex.claim_metrics(ex.cell_frame(frame, d, 1.0)) for d in ("disk", "square")}
    m = ex.claim_metrics(ex.cell_frame(frame, "disk", 1.0), sweep)
    tab = paper_table(ex.paper_rows(by_dom, m, m, "disk", 1.0), what="pattern")
    assert list(tab.columns) == [
        "pattern",
        "paper",
        "paper's source",
        "ours, disk domain, wd 1",
        "ours, square domain, wd 1",
    ]  # one column of ours per training domain
    assert (tab.iloc[3:, 4] == "—").all() and (tab.iloc[3:, 3] != "—").all()  # main-grid patterns: main domain only


def test_claim_functions_add_one_claim_each_in_ledger_order(tiny):
    cfg, grid, frame = tiny
    wd = cfg.weight_decay
    main = ex.cell_frame(frame, cfg.domain, wd)
    sweep = ex.sweep_frame(grid.cell(cfg.domain, wd), rotation_sweep(cfg.sweep_num))
    m = ex.claim_metrics(main, sweep, threshold=cfg.threshold)
    by_domain = {d: ex.claim_metrics(ex.cell_frame(frame, d, wd), threshold=cfg.threshold) for d in cfg.domains}
    ctrl = ex.same_init_control(frame)
    ctrl_seeds = ex.same_init_control(frame, per_seed_values=True)
    hcells = ex.hierarchy_by_cell(frame[frame["shape"].isin(ex.FACTOR_SHAPES)], cfg.threshold)
    ftab = ex.factor_table(frame)
    dens = {d: ex.density_readout(ftab, "TriAxisPE", d, wd, ["triangle", "hexagon"]) for d in cfg.domains}
    claims = Claims("06_pe_symmetry_readout", "smoke")
    ex.claim_rff_pi(claims, cfg, grid, m)
    ex.claim_hierarchy(claims, cfg, grid, m)
    for d in cfg.domains:
        ps = ex.claim_metrics_by_seed(ex.cell_frame(frame, d, wd), threshold=cfg.threshold)
        ex.claim_dyadic_d4(claims, cfg, grid, d, by_domain[d], ps)
        ex.claim_dyadic_suppresses_d3(claims, cfg, grid, d, by_domain[d])
        ex.claim_triaxis_low_d3_d6(claims, cfg, grid, d, by_domain[d], ps)
        ex.claim_triaxis_below_threshold(claims, cfg, grid, d, by_domain[d])
        ex.claim_triaxis_d3_visible(claims, cfg, grid, d, by_domain[d], ps)
    for d in cfg.domains:
        ex.claim_dyadic_d4_control(claims, cfg, grid, d, ctrl, ctrl_seeds)
        ex.claim_dyadic_d4_control(claims, cfg, grid, d, ctrl, ctrl_seeds, wd0=True)
        ex.claim_hierarchy_domain(claims, cfg, grid, d, hcells)
    for d in cfg.domains:
        ex.claim_triaxis_follows_density(claims, cfg, grid, d, dens[d], frame)
    per_domain = ["dyadic_d4", "dyadic_suppresses_d3", "triaxis_low_d3_d6", "triaxis_below_threshold"]
    per_domain.append("triaxis_d3_visible")
    want = ["rff_pi", "hierarchy"] + [f"{c}@{d}" for d in cfg.domains for c in per_domain]
    want += [f"{c}@{d}" for d in cfg.domains for c in ("dyadic_d4_control", "dyadic_d4_control_wd0", "hierarchy")]
    want += ["triaxis_follows_density@square"]  # the disk's density breaks no symmetry: no claim
    assert [r.id for r in claims.rows] == want
    row = next(r for r in claims.rows if r.id == "triaxis_low_d3_d6@disk")
    assert list(row.trained) == ["TriAxis/triangle/disk/wd=1", "TriAxis/hexagon/disk/wd=1", "Dyadic/square/disk/wd=1"]
