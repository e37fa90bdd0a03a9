"""Tests for the rich-vs-lazy experiment of notebook 05 (the package hgutils.experiments.nb05_msa_rich_vs_lazy)
and the library pieces it uses (ring tasks, regime diagnostics, the hierarchy scores, the classification loss)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.data import ring_blobs, square_grid, swiss_roll, unrolled_plane
from hgutils.data.points import ring_samples
from hgutils.experiments import nb05_msa_rich_vs_lazy as ex
from hgutils.experiments.nb05_msa_rich_vs_lazy.figures import _blocks
from hgutils.ledger import paper_table
from hgutils.nn.classifier_training import CLASSIFICATION_LOSSES, classification_loss
from hgutils.similarity import (
    dissimilarity_ratio,
    kernel_alignment,
    linear_cka,
    mean_between,
    metric_isotropy,
    msa,
    msa_from_metrics,
    procrustes_similarity,
    pullback_metric,
    relative_weight_change,
    split_auc,
    split_pairs,
    split_scores,
    tangent_kernel,
)
from hgutils.similarity.scoring import HIERARCHY_GROUPS, hierarchy_score, tree_distance
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward

torch.set_num_threads(1)

#: a tiny version of the protocol (every code path, seconds)
TINY = dict(
    class_counts=(2, 3),
    n_per_class=12,
    hidden=16,
    n_seeds=2,
    max_steps=400,
    n_heldout=24,
    grid=4,
    swiss_points=20,
    ablations=(),
)


def tiny(**kw) -> ex.RichLazyConfig:
    return ex.CONFIG.from_scale("smoke", **{**TINY, **kw})


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def test_ring_blobs_labels_and_geometry():
    X, y = ring_blobs(5, 7, 0.01, generator=torch.Generator().manual_seed(0))
    assert X.shape == (70, 2) and y.shape == (70,)
    assert torch.equal(torch.bincount(y), torch.full((5,), 14))
    assert torch.allclose(X.norm(dim=1), torch.ones(70), atol=0.05)  # centres on the unit circle
    assert torch.equal(y[:7], y[5 * 7 : 6 * 7])  # two blobs per class: opposite blobs share a label
    with pytest.raises(ValueError, match="n_classes"):
        ring_blobs(1, 5)
    with pytest.raises(ValueError, match="blobs_per_class"):
        ring_blobs(2, 5, blobs_per_class=0)


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize("b", [1, 3, 5])
def test_odd_blobs_per_class_never_put_a_class_opposite_itself(K, b):
    """With an odd number of interleaved blobs per class no blob centre's antipode is a centre of the
    same class, so an odd function (a zero-bias tanh network) can fit the task."""
    X, y = ring_blobs(K, 1, 1e-9, blobs_per_class=b, generator=torch.Generator().manual_seed(0))
    d = torch.cdist(-X, X)  # antipode of every centre vs every centre
    i, j = torch.nonzero(d < 1e-6, as_tuple=True)
    assert not (y[i] == y[j]).any()
    assert torch.equal(torch.bincount(y), torch.full((K,), b))


def test_ring_samples_cover_the_circle():
    P = ring_samples(2000, 0.05, generator=torch.Generator().manual_seed(1))
    assert P.shape == (2000, 2)
    r = P.norm(dim=1)
    assert abs(float(r.mean()) - 1.0) < 0.01 and abs(float(r.std()) - 0.05) < 0.01
    ang = torch.atan2(P[:, 1], P[:, 0])
    assert torch.histc(ang, 8, -math.pi, math.pi).min() > 150  # every octant is visited
    with pytest.raises(ValueError, match="n >= 1"):
        ring_samples(0, 0.1)


def test_swiss_roll_and_plane_share_intrinsic_geometry():
    p = torch.rand(50, 2, dtype=torch.float64) * torch.tensor([3 * np.pi, 2.0], dtype=torch.float64) + 4.0
    G1, G2 = pullback_metric(unrolled_plane, p), pullback_metric(swiss_roll, p)
    expected = torch.diag_embed(torch.stack([1 + p[:, 0] ** 2, torch.ones(50, dtype=torch.float64)], -1))
    assert torch.allclose(G1, expected, atol=1e-10) and torch.allclose(G2, expected, atol=1e-10)
    assert msa(unrolled_plane, swiss_roll, p) < 1e-10
    assert procrustes_similarity(unrolled_plane(p), swiss_roll(p)) < 0.8


def test_square_grid():
    g = square_grid(4, 1.5)
    assert g.shape == (16, 2) and g.min() == -1.5 and g.max() == 1.5


# --------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "field, value, match",
    [
        ("activation", "sigmoid", "activation must be one of"),
        ("lazy_mode", "ntk", "lazy_mode must be one of"),
        ("loss", "hinge", "loss must be one of"),
        ("optimizer", "lbfgs", "optimizer must be one of"),
        ("stop", "early", "stop must be one of"),
        ("alpha_lazy", 30.0, "alpha_lazy applies to lazy_mode 'alpha' only"),
        ("depth", 0, "need depth"),
        ("class_counts", (1, 2), "class_counts"),
        ("ablations", ("nonsense",), "unknown ablations"),
    ],
)
def test_config_rejects_bad_values(field, value, match):
    with pytest.raises(ValueError, match=match):
        ex.CONFIG.from_scale("smoke", **{field: value})


def test_presets_change_sizes_not_protocol():
    protocol = ("activation", "depth", "lazy_mode", "loss", "optimizer", "stop", "gain_rich", "gain_lazy")
    smoke, medium = ex.CONFIG.from_scale("smoke"), ex.CONFIG.from_scale("medium")
    assert all(getattr(smoke, f) == getattr(medium, f) for f in protocol)
    assert (smoke.activation, smoke.depth, smoke.hidden, smoke.lazy_mode) == ("tanh", 2, 256, "init_scale")
    prev = ex.ablation_config(medium, "previous recipe")
    assert (prev.activation, prev.depth, prev.lazy_mode, prev.stop) == ("relu", 1, "alpha", "fixed")
    assert prev.hidden == medium.hidden and prev.ablations == ()
    with pytest.raises(ValueError, match="unknown ablation"):
        ex.ablation_config(medium, "nope")


# --------------------------------------------------------------------------------------------
# training: convergence rule, regimes, ablation path
# --------------------------------------------------------------------------------------------
def test_convergence_rule_stops_and_records_steps():
    cfg = tiny(hidden=64, max_steps=600)
    X, y = ring_blobs(2, 6, 0.07, blobs_per_class=3, generator=torch.Generator().manual_seed(1))
    lazy = ex.train_cell(2, "lazy", [0, 1], cfg, X, y)
    assert (lazy["steps"] < cfg.max_steps).all(), "the lazy tiny networks converge well before the cap"
    assert (lazy["acc"] == 1.0).all() and (lazy["loss1"] < cfg.loss_tol).all()
    # frozen at the step it converged: its loss curve is flat from there on
    s = int(lazy["steps"][0])
    assert lazy["history"].shape[0] == int(lazy["steps"].max())
    assert all(g.trained for g in lazy["gates"])
    fixed = ex.train_cell(2, "lazy", [0, 1], dataclasses.replace(cfg, stop="fixed", max_steps=s + 7), X, y)
    assert (fixed["steps"] == s + 7).all() and fixed["history"].shape[0] == s + 7
    with pytest.raises(ValueError, match="regime"):
        ex.train_cell(2, "medium", [0], cfg, X, y)


def test_regime_checks_separate_small_and_large_init():
    cfg = tiny(hidden=64, max_steps=1500)
    X, y = ring_blobs(2, 6, 0.07, blobs_per_class=3, generator=torch.Generator().manual_seed(2))
    rich = ex.train_cell(2, "rich", [0, 1], cfg, X, y)
    lazy = ex.train_cell(2, "lazy", [2, 3], cfg, X, y)
    assert (rich["rwc"] > 10 * lazy["rwc"]).all()
    assert (lazy["ntk_align"] > 0.99).all() and (rich["ntk_align"] < 0.9).all()
    assert (rich["label_align1"] > rich["label_align0"] + 0.01).all()
    cells = [{"classes": 2, "regime": "rich", **rich}, {"classes": 2, "regime": "lazy", **lazy}]
    assert ex.regime_checks(cells, cfg) == {"rich": True, "lazy": True}
    assert ex.regime_checks(cells, dataclasses.replace(cfg, lazy_min_ntk_alignment=1.01))["lazy"] is False
    gates = ex.group_gates(cells)
    assert set(gates) == {"K2 rich", "K2 lazy"} and all(g["trained"] for g in gates.values())


def test_cell_gate_counts_the_networks_and_names_the_weakest():
    from hgutils.loop import GateResult

    ok = GateResult(True, "loss fell 90 %", 1.0, 0.1, 1.0, 0.5)
    slow = GateResult(True, "loss fell 20 %", 1.0, 0.8, 1.0, 0.5)
    bad = GateResult(False, "loss fell 1 %", 1.0, 0.99, 0.5, 0.5)
    assert ex.cell_gate({"gates": [ok, slow]}) == {
        "trained": True,
        "reason": "2/2 networks passed; weakest: loss fell 20 %",
    }
    gate = ex.cell_gate({"gates": [ok, bad, slow]})
    assert gate == {"trained": False, "reason": "2/3 networks passed; weakest: loss fell 1 %"}
    cells = [{"classes": 2, "regime": "rich", "gates": [ok]}, {"classes": 2, "regime": "lazy", "gates": [bad]}]
    assert ex.group_gates(cells, ("rich",)) == {"K2 rich": ex.cell_gate(cells[0])}


def test_classification_loss_matches_its_formulas():
    g = torch.Generator().manual_seed(0)
    f = torch.randn(3, 7, 4, generator=g, dtype=torch.float64)  # 3 networks, 7 points, 4 classes
    y = torch.randint(0, 4, (7,), generator=g)
    ce = classification_loss(f, y, "cross_entropy")
    assert ce.shape == (3,)
    for n in range(3):
        assert ce[n] == pytest.approx(float(torch.nn.functional.cross_entropy(f[n], y)), rel=1e-12)
        logp = torch.log_softmax(f[n], -1)[torch.arange(7), y]
        assert ce[n] == pytest.approx(float(-logp.mean()), rel=1e-12)
    mse = classification_loss(f, y, "mse")
    onehot = torch.eye(4, dtype=torch.float64)[y]
    assert torch.allclose(mse, ((f - onehot) ** 2).sum(-1).mean(-1))
    # the right logits at a large margin: cross-entropy near 0; the one-hot targets themselves: mse 0
    assert classification_loss(50 * onehot[None], y, "cross_entropy").item() < 1e-12
    assert classification_loss(onehot[None], y, "mse").item() == 0.0
    assert set(CLASSIFICATION_LOSSES) == {"cross_entropy", "mse"}
    with pytest.raises(ValueError, match="loss must be one of"):
        classification_loss(f, y, "hinge")


def test_alpha_mode_trains_the_centred_scaled_network():
    """lazy_mode alpha: f = α(h(w) - h(w0)) starts at 0 (loss = that of a zero output) and stays lazy."""
    cfg = tiny(**ex.PREVIOUS_RECIPE, max_steps=50)
    X, y = ring_blobs(2, 6, 0.15, blobs_per_class=2, generator=torch.Generator().manual_seed(3))
    out = ex.train_cell(2, "lazy", [0, 1], cfg, X, y)
    assert out["alpha"] == 30.0 and out["gain"] == 1.0
    assert torch.allclose(out["loss0"], torch.full((2,), 1.0 / 30.0**2))  # mean ||0 - e_y||^2 / α² = 1/α²
    assert (out["steps"] == 50).all() and (out["rwc"] < 0.01).all()


def test_activation_reaches_every_code_path():
    """A tanh config gives tanh networks everywhere: training outputs, pullback metrics (vs autograd JᵀJ of
    a hand-written tanh network), MSA, the baselines' activations and the regime diagnostics."""
    cfg = tiny(max_steps=200)
    exp = ex.run_experiment(cfg, seed=0)
    hid, layer, pts = exp["hidden"], exp["layer"], exp["points"]["held-out"].double()

    def tanh_hidden(i: int, x: torch.Tensor) -> torch.Tensor:
        h = x
        for l in range(cfg.depth):
            h = torch.tanh(h @ hid[f"W{l}"][i].double().T + hid[f"b{l}"][i].double())
        return h

    def metric(i: int) -> torch.Tensor:
        J = torch.stack([torch.autograd.functional.jacobian(lambda x: tanh_hidden(i, x), p) for p in pts])
        return J.transpose(1, 2) @ J

    G0, G1 = metric(0), metric(cfg.n_seeds)  # a rich and a lazy network
    assert torch.allclose(exp["isotropy"][0], metric_isotropy(G0), atol=1e-5)
    msa01 = 1.0 - exp["mats"]["MSA"][0, cfg.n_seeds]
    assert msa01 == pytest.approx(msa_from_metrics(G0, G1), abs=1e-4)
    with torch.no_grad():
        H0, H1 = tanh_hidden(0, pts).numpy(), tanh_hidden(cfg.n_seeds, pts).numpy()
    assert exp["mats"]["CKA"][0, cfg.n_seeds] == pytest.approx(linear_cka(H0, H1), abs=1e-5)
    # a ReLU evaluation of the same weights would give other numbers (the test can fail)
    relu = ex.similarity_matrices(hid, exp["points"], layer, dataclasses.replace(cfg, activation="relu"))[0]
    assert abs(relu["MSA"][0, cfg.n_seeds] - exp["mats"]["MSA"][0, cfg.n_seeds]) > 1e-3
    # the meta and matrix layout
    M = len(exp["meta"])
    assert M == 4 * cfg.n_seeds * len(cfg.class_counts) and all(S.shape == (M, M) for S in exp["mats"].values())
    assert [m["group"] for m in exp["meta"]].count("lazy init") == cfg.n_seeds * len(cfg.class_counts)
    scores = ex.score_measures(exp["mats"], exp["meta"])
    assert list(scores.index) == list(ex.MEASURES) and scores.notna().all().all()
    # MSA between two networks never exceeds what their metrics' isotropy allows, point by point
    assert 1.0 - scores.loc["MSA", "sim. rich–lazy"] <= ex.isotropy_bound(exp["isotropy"], exp["meta"]) + 1e-9


def test_ablation_path_runs_and_reports():
    cfg = tiny(max_steps=30, ablations=("previous recipe",))
    c = ex.ablation_config(cfg, "previous recipe")
    exp = ex.run_experiment(c, seed=0)
    assert all((cell["steps"] == 30).all() for cell in exp["cells"])  # fixed steps
    row = ex.ablation_row("previous recipe", exp, c)
    assert row["recipe"] == "previous recipe" and 0.0 <= row["MSA regime AUC"] <= 1.0
    assert set(row) >= {"rich check", "lazy check", "best baseline ratio", "isotropy rich"}


# --------------------------------------------------------------------------------------------
# regime diagnostics (library)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("act", ["tanh", "relu", "gelu"])
def test_tangent_kernel_matches_autograd(act):
    from torch.func import jacrev

    p = init_mlp(2, (2, 7, 5, 3), scheme="normal", gain=1.3, seeds=[0, 1], dtype=torch.float64)
    p = {k: v + 0.1 * torch.randn_like(v) for k, v in p.items()}  # non-zero biases too
    X = torch.randn(6, 2, dtype=torch.float64)
    T = tangent_kernel(p, X, act)
    for n in range(2):
        J = jacrev(lambda q: mlp_forward(q, X, act)[0])({k: v[n : n + 1] for k, v in p.items()})
        Jf = torch.cat([j.reshape(6, 3, -1) for j in J.values()], -1)
        assert torch.allclose(T[n], torch.einsum("pkd,qkd->pq", Jf, Jf), atol=1e-10)
    with pytest.raises(ValueError, match="X must be"):
        tangent_kernel(p, torch.randn(4, 3), act)


def test_kernel_alignment_and_weight_change_identities():
    p = init_mlp(3, (2, 8, 8, 2), scheme="normal", seeds=[0, 1, 2])
    X = torch.randn(10, 2)
    for kind in ("hidden", "tangent"):
        assert torch.allclose(kernel_alignment(p, p, X, 1, "tanh", kind), torch.ones(3))
        # scaling the readout rescales the tangent kernel's readout part only: alignment stays <= 1
        assert (kernel_alignment(p, {**p, "W2": 2 * p["W2"]}, X, 1, "tanh", kind) <= 1 + 1e-6).all()
    with pytest.raises(ValueError, match="kind"):
        kernel_alignment(p, p, X, kind="conjugate")
    q = {k: 2 * v for k, v in p.items()}
    assert torch.allclose(relative_weight_change(p, q, ("W0", "W1")), torch.ones(3))
    assert torch.allclose(relative_weight_change(p, p), torch.zeros(3))
    with pytest.raises(ValueError, match="missing"):
        relative_weight_change(p, p, ("W0", "W9"))


# --------------------------------------------------------------------------------------------
# hierarchy and scores
# --------------------------------------------------------------------------------------------
def _meta():
    meta = []
    for K in (2, 5):
        for g in ("rich", "lazy"):
            meta += [{"group": g, "classes": K, "seed": s, "trained": True, "gain": 1.0} for s in range(2)]
    for g in ("untrained", "lazy init"):
        meta += [{"group": g, "classes": K, "seed": s, "trained": False, "gain": 1.0} for K in (2, 5) for s in range(2)]
    return meta


def test_tree_distance_and_hierarchy_scores():
    meta = _meta()
    T = tree_distance(meta)
    assert np.allclose(T, T.T) and np.all(np.diag(T) == 0)
    assert T[0, 1] == 1 and T[0, 2] == 2 and T[0, 4] == 3 and T[0, 8] == 4 and T[8, 11] == 1
    S_ideal = 1.0 - T / 4.0
    assert hierarchy_score(S_ideal, meta) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    R = rng.uniform(size=T.shape)
    assert abs(hierarchy_score((R + R.T) / 2, meta)) < 0.3
    # the lazy-init controls are left out of the hierarchy: scrambling their rows changes nothing
    S2 = S_ideal.copy()
    S2[12:, :] = S2[:, 12:] = 0.3
    assert hierarchy_score(S2, meta) == pytest.approx(1.0)
    assert split_auc(S_ideal, meta, "group", where={"trained": True}, same=("classes",)) == pytest.approx(1.0)


def test_hierarchy_score_is_a_rank_correlation_over_the_chosen_groups():
    meta = _meta()
    assert HIERARCHY_GROUPS == ("rich", "lazy", "untrained")
    T = tree_distance(meta)
    # a constant measure has no ranks: nan, not 0
    assert math.isnan(hierarchy_score(np.full(T.shape, 0.7), meta))
    # rank-based: any increasing map of the tree distance scores 1
    assert hierarchy_score(1.0 - np.sqrt(T) / 2.0, meta) == pytest.approx(1.0)
    # a reversed hierarchy scores -1 over the trained groups alone (every distance 1, 2 or 3)
    trained = ("rich", "lazy")
    assert hierarchy_score(T / 4.0, meta, groups=trained) == pytest.approx(-1.0)
    # only the chosen groups count: scrambling the untrained rows changes nothing for trained groups
    S = 1.0 - T / 4.0
    S2 = S.copy()
    S2[8:, :] = S2[:, 8:] = 0.1
    assert hierarchy_score(S2, meta, groups=trained) == pytest.approx(hierarchy_score(S, meta, groups=trained))


def test_score_measures_on_an_ideal_and_a_blind_matrix():
    meta = _meta()
    S_ideal = 1.0 - tree_distance(meta) / 4.0
    S = ex.score_measures({"ideal": S_ideal, "blind": np.full_like(S_ideal, 0.9)}, meta)
    assert S.loc["ideal", "regime AUC"] == 1.0 and S.loc["ideal", "regime ratio"] == pytest.approx(2.0)
    assert S.loc["blind", "regime AUC"] == 0.5 and S.loc["blind", "regime ratio"] == pytest.approx(1.0)
    assert S.loc["blind", "sim. rich–lazy"] == pytest.approx(0.9)


def test_block_labels_and_paper_table():
    meta = _meta()
    blocks = _blocks(meta)
    assert [b[0] for b in blocks] == ["K2 rich", "K2 lazy", "K5 rich", "K5 lazy", "untrained g=1", "lazy init g=1"]
    assert blocks[-1][1:3] == (12, 16)
    S_ideal = 1.0 - tree_distance(meta) / 4.0
    scores = ex.score_measures({m: S_ideal for m in ex.MEASURES}, meta)
    swiss = {"MSA distance": 1e-16, "Procrustes similarity": 0.2, "RSA similarity": 0.3}
    table = paper_table(ex.paper_rows(swiss, scores))
    assert list(table.columns) == ["result", "paper", "paper's source", "ours"] and len(table) == 6
    assert table["paper's source"].str.contains("2603.28764").all()


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1), c=st.floats(0.01, 0.99), power=st.floats(0.3, 3.0))
def test_split_scores_invariances(seed, c, power):
    """The ratio is unchanged when every dissimilarity is scaled by c; the AUC under any increasing map."""
    meta = _meta()
    rng = np.random.default_rng(seed)
    R = rng.uniform(0.05, 1.0, size=(16, 16))
    D = (R + R.T) / 2
    np.fill_diagonal(D, 0.0)
    S = 1.0 - D
    base = split_scores(S, meta, "group", where={"trained": True}, same=("classes",))
    scaled = split_scores(1.0 - c * D, meta, "group", where={"trained": True}, same=("classes",))
    assert scaled["ratio"] == pytest.approx(base["ratio"], rel=1e-9)
    assert scaled["sim_between"] == pytest.approx(1.0 - c * (1.0 - base["sim_between"]), rel=1e-9)
    warped = split_auc(1.0 - D**power, meta, "group", where={"trained": True}, same=("classes",))
    assert warped == pytest.approx(base["auc"], abs=1e-12)


def test_split_where_accepts_a_set_of_values_and_rejects_bad_shapes():
    meta = _meta()
    S = 1.0 - tree_distance(meta) / 4.0
    w, b = split_pairs(S, meta, "group", where={"group": ("rich", "untrained")}, same=("classes",))
    # within: rich-rich and untrained-untrained pairs of the same K (2 + 2 per K); between: 2 x 2 per K
    assert len(w) == 4 and len(b) == 8
    assert mean_between(S, meta, {"group": "rich"}, {"group": ("lazy", "untrained")}) < 1.0
    assert dissimilarity_ratio(np.ones_like(S), meta, "group", where={"trained": True}) == 1.0
    with pytest.raises(ValueError, match="M = len"):
        split_pairs(S[:3, :3], meta, "group")
