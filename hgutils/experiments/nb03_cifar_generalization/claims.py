"""Notebook 03's claims, one function per claim id, each adding its claim to a :class:`~hgutils.ledger.Claims`
ledger from the run's results (Kendall τ per seed, :func:`tau_by_seed`; every comparison through
:mod:`hgutils.verdicts`, unpaired over seeds).

In ledger order: GTH-GMN against the baselines and trajectory against final checkpoint
(:func:`claim_tau_order`, :func:`claim_gth_below_nfn`, :func:`claim_gap_sizes`,
:func:`claim_trajectory_helps_baselines`, :func:`claim_gth_temporal`), then the claims judged against the
in-zoo yardsticks (``refs``: :func:`~.references.cifar_references`; without them these are recorded
untested): :func:`claim_below_ceiling`, :func:`claim_nfn_above_trees`, :func:`claim_statnn_vs_trees`,
:func:`claim_weights_beyond_hyperparameters`, :func:`claim_position_between_references`.
:func:`cifar_claims` records them all in that order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.nb03_cifar_generalization.preset import PAPER, REFERENCE_SOURCE
from hgutils.experiments.nb03_cifar_generalization.references import CifarReferences
from hgutils.experiments.weightspace_protocol.results import rows_gate
from hgutils.ledger import Claims
from hgutils.verdicts import all_of, compare_ordering, compare_seeds
from hgutils.weightspace.in_zoo_baselines import TREES_HPARAMS, TREES_STATS
from hgutils.weightspace.kendall_ceiling import versus_reference
from hgutils.weightspace.metanets.gth_gmn import CITATION

#: the baselines read on the final checkpoint and on the trajectory
TRAJECTORY_BASELINES: tuple[str, ...] = ("NFN_HNP", "NFN_NP", "StatNN", "GMN", "FlatMLP")
#: the paper's ordering of the models of its table (Kendall τ, higher is better)
TAU_ORDER: tuple[str, ...] = ("NFN_HNP", "NFN_NP", "StatNN", "GTH-GMN")


def tau_by_seed(run: cmp.ComparisonResult) -> dict[str, list[float]]:
    """Test Kendall τ of every model of ``run`` per seed (seeds ascending; models in the table's order): the
    input of the claims."""
    return cmp.per_seed(run.table, "test_kendall_tau", list(dict.fromkeys(run.table["model"])))


def _mean(tau: dict[str, list[float]]) -> dict[str, float]:
    return {k: float(np.mean(v)) for k, v in tau.items()}


def _why(judge: bool) -> str | None:
    return None if judge else "smoke scale: a few dozen classifiers and steps"


def _paper() -> dict[str, float]:
    """The paper's mean τ per model."""
    return {k: mu for k, (mu, _) in PAPER["cifar_tau"].items()}


def _paper_gaps() -> list[float]:
    """The paper's gaps along :data:`TAU_ORDER`."""
    p = _paper()
    return [p[a] - p[b] for a, b in zip(TAU_ORDER, TAU_ORDER[1:])]


def claim_tau_order(
    claims: Claims, run: cmp.ComparisonResult, tau: dict[str, list[float]], dataset: str, judge: bool
) -> None:
    """``tau-order``: NFN_HNP > NFN_NP > StatNN > GTH-GMN, pairwise along the order, with the paper's gaps as
    the effects to resolve."""
    paper, mean, order = _paper(), _mean(tau), list(TAU_ORDER)
    claims.add(
        "tau-order",
        f"Kendall tau: NFN_HNP > NFN_NP > StatNN > GTH-GMN ({dataset})",
        paper=" > ".join(f"{paper[k]}" for k in order),
        ours=" > ".join(f"{mean[k]:.3f}" for k in order),
        criterion="pairwise along NFN_HNP > NFN_NP > StatNN > GTH-GMN: mean tau difference > 2 se over seeds "
        "(unpaired)",
        test=compare_ordering(tau, order, paired=False, digits=3) if judge else None,
        paper_effect=_paper_gaps() if judge else None,
        reason=_why(judge),
        source=f"{CITATION}, CIFAR-10 table (baselines: NFN paper)",
        trained=run.gates(order) if judge else None,
    )


def claim_gth_below_nfn(
    claims: Claims, run: cmp.ComparisonResult, tau: dict[str, list[float]], dataset: str, judge: bool
) -> None:
    """``gth-below-nfn``: NFN_NP's τ above GTH-GMN's."""
    paper, mean = _paper(), _mean(tau)
    below = cmp.difference(run.table, "NFN_NP", "GTH-GMN", "test_kendall_tau")
    claims.add(
        "gth-below-nfn",
        f"GTH-GMN ranks below the neural functionals ({dataset})",
        paper=f"{paper['GTH-GMN']} < {paper['NFN_NP']} (NFN_NP)",
        ours=f"{mean['GTH-GMN']:.3f} vs {mean['NFN_NP']:.3f}",
        criterion="mean tau(NFN_NP) - mean tau(GTH-GMN) > 2 se over seeds (unpaired)",
        test=below if judge else None,
        paper_effect=paper["NFN_NP"] - paper["GTH-GMN"] if judge else None,
        reason=_why(judge),
        source=f"{CITATION}, CIFAR-10 table",
        trained=run.gates(["GTH-GMN", "NFN_NP"]) if judge else None,
    )


def claim_gap_sizes(claims: Claims, tau: dict[str, list[float]]) -> None:
    """``gap-sizes``: the gaps along :data:`TAU_ORDER`, reported beside the paper's (not judged: sizes depend
    on the zoo)."""
    mean = _mean(tau)
    claims.add(
        "gap-sizes",
        "gaps HNP-NP, NP-StatNN, StatNN-GTH-GMN",
        paper=", ".join(f"{g:.3f}" for g in _paper_gaps()),
        ours=", ".join(f"{mean[a] - mean[b]:.3f}" for a, b in zip(TAU_ORDER, TAU_ORDER[1:])),
        criterion="reported only (sizes depend on the zoo)",
        reason="the gap sizes depend on the zoo; the ordering is judged in tau-order",
        source=f"{CITATION}, CIFAR-10 table",
    )


def claim_trajectory_helps_baselines(claims: Claims, run: cmp.ComparisonResult, judge: bool) -> None:
    """``trajectory-helps-baselines``: τ(trajectory) > τ(final) for at least 3 of the 5
    :data:`TRAJECTORY_BASELINES`."""
    traj = [cmp.difference(run.table, f"{b} (traj)", b, "test_kendall_tau") for b in TRAJECTORY_BASELINES]
    claims.add(
        "trajectory-helps-baselines",
        "reading the trajectory raises the baselines' tau (majority of 5)",
        paper="GTH-GMN's premise (not measured for baselines)",
        ours=", ".join(f"{b} {d.diff:+.3f} (se {d.se:.3f})" for b, d in zip(TRAJECTORY_BASELINES, traj)),
        criterion="mean tau(traj) - mean tau(final) > 2 se over seeds (unpaired) for at least 3 of 5 baselines",
        test=all_of(traj, require=3) if judge else None,
        reason=_why(judge),
        source=f"{CITATION} §introduction",
        trained=run.gates([x for b in TRAJECTORY_BASELINES for x in (b, f"{b} (traj)")]) if judge else None,
    )


def claim_gth_temporal(claims: Claims, run: cmp.ComparisonResult, judge: bool) -> None:
    """``gth-temporal``: GTH-GMN's trajectory version above its final-checkpoint version (``GTH-GMN (T=1)``)."""
    gt = cmp.difference(run.table, "GTH-GMN", "GTH-GMN (T=1)", "test_kendall_tau")
    claims.add(
        "gth-temporal",
        "GTH-GMN: trajectory beats its final-checkpoint version",
        paper="temporal > single",
        ours=f"{gt.diff:+.3f} (se {gt.se:.3f})",
        criterion="mean tau(GTH-GMN) - mean tau(GTH-GMN T=1) > 2 se over seeds (unpaired)",
        test=gt if judge else None,
        reason=_why(judge),
        source=f"{CITATION} §method",
        trained=run.gates(["GTH-GMN", "GTH-GMN (T=1)"]) if judge else None,
    )


# --------------------------------------------------------------------------------------------
# against the in-zoo yardsticks
# --------------------------------------------------------------------------------------------
def _no_references(claims: Claims, cid: str) -> None:
    """``cid`` recorded untested: the in-zoo references were not computed in this run."""
    claims.add(
        cid,
        f"{cid} (in-zoo yardsticks)",
        paper="—",
        ours="—",
        criterion="needs the in-zoo references",
        reason="in-zoo references not computed in this run",
        source=REFERENCE_SOURCE,
    )


def _tree_means(refs: CifarReferences) -> dict[str, float]:
    """Mean test τ over seeds of each tree reference."""
    t = refs.trees
    return {n: float(np.mean(t.per_seed(n, "test_kendall_tau"))) for n in dict.fromkeys(t.table["model"])}


def _ref_gate(refs: CifarReferences, name: str) -> dict[str, Any]:
    return rows_gate(refs.trees.table[refs.trees.table["model"] == name])


def claim_below_ceiling(
    claims: Claims,
    run: cmp.ComparisonResult,
    tau: dict[str, list[float]],
    refs: CifarReferences | None,
    dataset: str,
    judge: bool,
) -> None:
    """``below-ceiling``: every model's τ below the label-noise ceiling (a bound: a model above it would signal
    a leak or a bug)."""
    if refs is None:
        return _no_references(claims, "below-ceiling")
    c, models = refs.ceiling, list(tau)
    below = [versus_reference(tau[m], c.tau, c.se, higher_is_better=False, label=f"{m} < ceiling") for m in models]
    claims.add(
        "below-ceiling",
        f"every model's Kendall tau is below the label-noise ceiling ({dataset})",
        paper="a bound (not in the paper): the label is measured on a finite test set",
        ours=f"ceiling {c.tau:.3f} ± {c.se:.3f} (halves {c.tau_halves:.3f}); best model {max(_mean(tau).values()):.3f}",
        criterion="for every model: ceiling - mean tau > 2 se (se: seeds and the ceiling's jackknife, unpaired)",
        test=all_of(below) if judge else None,
        reason=_why(judge),
        source="label-noise ceiling: tau between two disjoint test halves, Spearman-Brown "
        "(hgutils.weightspace.kendall_ceiling)",
        trained=run.gates(models) if judge else None,
    )


def claim_nfn_above_trees(
    claims: Claims,
    run: cmp.ComparisonResult,
    tau: dict[str, list[float]],
    refs: CifarReferences | None,
    dataset: str,
    judge: bool,
) -> None:
    """``nfn-above-trees``: NFN_HNP and NFN_NP each above the trees on the final checkpoint's statistics."""
    if refs is None:
        return _no_references(claims, "nfn-above-trees")
    mean, tmean = _mean(tau), _tree_means(refs)
    trees = refs.trees.per_seed(TREES_STATS, "test_kendall_tau")
    nfn = [
        compare_seeds(tau[m], trees, paired=False, label=f"{m} > {TREES_STATS}", digits=3)
        for m in ("NFN_HNP", "NFN_NP")
    ]
    claims.add(
        "nfn-above-trees",
        f"the neural functionals rank networks better than boosted trees on the weight statistics ({dataset})",
        paper=f"NFN above StatNN ({PAPER['cifar_tau']['NFN_NP'][0]} / {PAPER['cifar_tau']['StatNN'][0]}); boosted "
        "trees on the statistics are a predictor of Unterthiner et al.",
        ours=f"NFN_HNP {mean['NFN_HNP']:.3f}, NFN_NP {mean['NFN_NP']:.3f} vs trees {tmean[TREES_STATS]:.3f}",
        criterion="mean tau(NFN) - mean tau(trees on final-checkpoint statistics) > 2 se over seeds (unpaired), "
        "for NFN_HNP and NFN_NP",
        test=all_of(nfn) if judge else None,
        reason=_why(judge),
        source=f"{CITATION} (NFN rows: NFN paper); {REFERENCE_SOURCE}",
        trained=(run.gates(["NFN_HNP", "NFN_NP"]) | {TREES_STATS: _ref_gate(refs, TREES_STATS)}) if judge else None,
    )


def claim_statnn_vs_trees(
    claims: Claims,
    run: cmp.ComparisonResult,
    tau: dict[str, list[float]],
    refs: CifarReferences | None,
    dataset: str,
    judge: bool,
) -> None:
    """``statnn-vs-trees``: StatNN at least as good as trees on its own statistics (two-sided: holds above,
    contradicted below)."""
    if refs is None:
        return _no_references(claims, "statnn-vs-trees")
    mean, tmean = _mean(tau), _tree_means(refs)
    trees = refs.trees.per_seed(TREES_STATS, "test_kendall_tau")
    st = compare_seeds(tau["StatNN"], trees, paired=False, label=f"StatNN vs {TREES_STATS}", digits=3)
    claims.add(
        "statnn-vs-trees",
        f"StatNN extracts at least what boosted trees extract from the same statistics ({dataset})",
        paper="StatNN 0.915: the statistics carry the accuracy (an MLP and trees both read them in Unterthiner et al.)",
        ours=f"StatNN {mean['StatNN']:.3f} vs trees {tmean[TREES_STATS]:.3f} ({st.diff:+.3f}, se {st.se:.3f})",
        criterion="mean tau(StatNN) - mean tau(trees on the same statistics) > 2 se: holds; < -2 se: contradicted "
        "(unpaired)",
        test=st if judge else None,
        reason=_why(judge),
        source=REFERENCE_SOURCE,
        trained=(run.gates(["StatNN"]) | {TREES_STATS: _ref_gate(refs, TREES_STATS)}) if judge else None,
    )


def claim_weights_beyond_hyperparameters(
    claims: Claims,
    run: cmp.ComparisonResult,
    tau: dict[str, list[float]],
    refs: CifarReferences | None,
    dataset: str,
    judge: bool,
) -> None:
    """``weights-beyond-hyperparameters``: each model of the paper's table above the trees on the
    hyperparameters alone (reading weights beats knowing the recipe); untested on a zoo that records no
    hyperparameters."""
    if refs is None:
        return _no_references(claims, "weights-beyond-hyperparameters")
    if TREES_HPARAMS not in set(refs.trees.table["model"]):
        claims.add(
            "weights-beyond-hyperparameters",
            "the paper's models rank networks better than their hyperparameters do",
            paper="the premise of predicting accuracy from weights",
            ours="—",
            criterion="needs a zoo with sampled hyperparameters",
            reason="this zoo records no hyperparameters",
            source=REFERENCE_SOURCE,
        )
        return
    mean, tmean, order = _mean(tau), _tree_means(refs), list(TAU_ORDER)
    hp = refs.trees.per_seed(TREES_HPARAMS, "test_kendall_tau")
    beyond = [compare_seeds(tau[m], hp, paired=False, label=f"{m} > {TREES_HPARAMS}", digits=3) for m in order]
    claims.add(
        "weights-beyond-hyperparameters",
        f"each model of the paper's table ranks networks better than trees on the hyperparameters alone ({dataset})",
        paper="the premise of predicting accuracy from weights (Unterthiner et al. compare both inputs)",
        ours=", ".join(f"{m} {mean[m] - tmean[TREES_HPARAMS]:+.3f}" for m in order)
        + f" (hyperparameters-only {tmean[TREES_HPARAMS]:.3f})",
        criterion="for each of NFN_HNP, NFN_NP, StatNN, GTH-GMN: mean tau - mean tau(trees on hyperparameters) "
        "> 2 se over seeds (unpaired)",
        test=all_of(beyond) if judge else None,
        reason=_why(judge),
        source=REFERENCE_SOURCE,
        trained=(run.gates(order) | {TREES_HPARAMS: _ref_gate(refs, TREES_HPARAMS)}) if judge else None,
    )


def claim_position_between_references(
    claims: Claims, tau: dict[str, list[float]], refs: CifarReferences | None
) -> None:
    """``position-between-references``: where each model of the paper's table sits between the
    hyperparameters-only τ (0) and the ceiling (1), with the gaps as shares of that room (reported)."""
    if refs is None:
        return _no_references(claims, "position-between-references")
    mean, lo = _mean(tau), _tree_means(refs).get(TREES_HPARAMS)
    room = refs.ceiling.tau - lo if lo is not None else 0.0
    if room > 0:
        where = ", ".join(f"{m} {(mean[m] - lo) / room:.2f}" for m in TAU_ORDER)
        gaps = ", ".join(f"{(mean[a] - mean[b]) / room:.2f}" for a, b in zip(TAU_ORDER, TAU_ORDER[1:]))
        ours = f"{where}; the gaps along the order as shares of that room: {gaps}"
    else:
        ours = "no room: the hyperparameters-only trees reach the ceiling" if lo is not None else "—"
    claims.add(
        "position-between-references",
        "where each model sits between the hyperparameters-only trees (0) and the label-noise ceiling (1)",
        paper="the paper reports absolute tau only (0.846-0.934 on another zoo)",
        ours=ours,
        criterion="reported only: the yardsticks place the models; the orderings are judged in tau-order and above",
        reason="reported beside the paper's gaps; the zoo decides the absolute scale",
        source=REFERENCE_SOURCE,
    )


def cifar_claims(
    claims: Claims,
    run: cmp.ComparisonResult,
    dataset: str,
    judge: bool,
    refs: CifarReferences | None = None,
) -> None:
    """Every claim of notebook 03 in ledger order (the module's docstring), from :func:`tau_by_seed` of ``run``
    and the in-zoo yardsticks ``refs`` (without them their claims are recorded untested)."""
    tau = tau_by_seed(run)
    claim_tau_order(claims, run, tau, dataset, judge)
    claim_gth_below_nfn(claims, run, tau, dataset, judge)
    claim_gap_sizes(claims, tau)
    claim_trajectory_helps_baselines(claims, run, judge)
    claim_gth_temporal(claims, run, judge)
    claim_below_ceiling(claims, run, tau, refs, dataset, judge)
    claim_nfn_above_trees(claims, run, tau, refs, dataset, judge)
    claim_statnn_vs_trees(claims, run, tau, refs, dataset, judge)
    claim_weights_beyond_hyperparameters(claims, run, tau, refs, dataset, judge)
    claim_position_between_references(claims, tau, refs)
