"""Notebook 01's claims: accuracy comparisons on each zoo and reconstruction under both link readings,
every comparison through :mod:`hgutils.verdicts` (the embedding-geometry claims are notebook 07's)."""

from __future__ import annotations

import numpy as np

from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.nb01_inr_classification.preset import INR_PAPER_KEYS, PAPER
from hgutils.ledger import Claims
from hgutils.verdicts import all_of, compare_seeds
from hgutils.weightspace.metanets.gth_gmn import CITATION

#: the GTH-GMN ablations judged against the full model: (claim id, variant, statement, paper, where)
ABLATION_CLAIMS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "temporal",
        "GTH-GMN (T=1)",
        "reading the trajectory beats the final checkpoint (GTH-GMN vs T=1)",
        "temporal > single (qualitative)",
        "§method/§experiments",
    ),
    (
        "hyperbolic",
        "GTH-GMN (Euclidean)",
        "hyperbolic attention beats its Euclidean twin",
        "hyperbolic > Euclidean (qualitative)",
        "§method",
    ),
    (
        "gru",
        "GTH-GMN (no GRU)",
        "GRU kernel evolution beats encoding snapshots independently",
        "evolved > independent (qualitative)",
        "§method (EvolveGCN-style kernels)",
    ),
)

#: the paper's GTH-GMN advantage over NFN_NP (points; NFN_NP measured by its own paper on other data)
PAPER_GAP = {ds: PAPER[key]["GTH-GMN"][0] - PAPER[key]["NFN_NP"][0] for ds, key in INR_PAPER_KEYS.items()}


def inr_claims(
    claims: Claims,
    ds: str,
    run: cmp.ComparisonResult | None,
    scale: str,
    zoo: str = "",
    ablations: bool = True,
) -> None:
    """Dataset ``ds``'s comparative and absolute accuracy claims on one zoo (``zoo``: the id suffix and
    label, e.g. ``"@shared-init"``; test accuracy per seed, unpaired).

    The ablations (:data:`ABLATION_CLAIMS`, when ``ablations``) and "GTH-GMN beats the best
    symmetry-respecting baseline" go through :mod:`hgutils.verdicts`; the paper's absolute accuracy
    is judged only at ``paper`` scale (within 2 points) on the main zoo. A dataset not run
    (``run is None``) records every claim as not tested.
    """
    judge = scale != "smoke" and run is not None
    why = "not run at this scale" if run is None else (None if judge else "smoke scale: a few hundred INRs")
    label = f" [{zoo.lstrip('@')} zoo]" if zoo else ""
    src = CITATION
    table = run.table if run is not None else None
    have = set(table["model"]) if table is not None else set()
    for cid, other, statement, paper, where in ABLATION_CLAIMS if ablations else ():
        ran = table is not None and other in have
        d = (
            cmp.difference(table, "GTH-GMN", other, "test_accuracy", scale=100, unit="points", digits=2)
            if ran
            else None
        )
        claims.add(
            f"{ds}{zoo}-{cid}",
            f"{ds}{label}: {statement}",
            paper=paper,
            ours={"diff (points)": round(d.diff, 2), "se": round(d.se, 2)} if d is not None else None,
            criterion=f"mean acc(GTH-GMN) - mean acc({other}) > 2 se over seeds (unpaired) [points]",
            test=d if judge and ran else None,
            reason=why if ran or run is None else f"{other} not run",
            source=f"{src} {where}",
            trained=run.gates(["GTH-GMN", other]) if judge and ran else None,
        )
    best = b = None
    if table is not None:
        among = [m for m in cmp.SYMMETRY_RESPECTING if m in have]
        summ = cmp.summarize(table, ["test_accuracy"])
        best = cmp.best_model(summ, "test_accuracy", among)
        b = cmp.difference(table, "GTH-GMN", best, "test_accuracy", scale=100, unit="points", digits=2)
    claims.add(
        f"{ds}{zoo}-vs-best-baseline",
        f"{ds}{label}: GTH-GMN beats the best symmetry-respecting baseline on the same zoo"
        + (f" (best: {best})" if best else ""),
        paper=f"+{PAPER_GAP[ds]:.1f} points vs NFN_NP (other dataset)",
        ours={"diff (points)": round(b.diff, 2), "se": round(b.se, 2)} if b is not None else None,
        criterion="mean acc(GTH-GMN) - mean acc(best by mean of the symmetry-respecting baselines run) > 2 se "
        "over seeds (unpaired) [points]",
        test=b if judge else None,
        paper_effect=PAPER_GAP[ds] if judge else None,
        reason=why,
        source=f"{src}, INR classification table",
        trained=run.gates(["GTH-GMN", best]) if judge else None,
    )
    if zoo:
        return
    mu, sd = PAPER[INR_PAPER_KEYS[ds]]["GTH-GMN"]
    ours = None
    if table is not None:
        ours = 100 * float(np.mean(cmp.per_seed(table, "test_accuracy", ["GTH-GMN"])["GTH-GMN"]))
    claims.add(
        f"{ds}-absolute",
        f"{ds}: GTH-GMN test accuracy {mu} %",
        paper=f"{mu} ± {sd}",
        ours=round(ours, 2) if ours is not None else None,
        criterion="|ours - paper| <= 2 points (paper scale only)",
        holds=(abs(ours - mu) <= 2.0) if (scale == "paper" and ours is not None) else None,
        reason=None
        if scale == "paper" and ours is not None
        else "the paper's data sizes and T run only at paper scale",
        source=f"{src}, INR classification table",
    )


def reconstruction_claims(
    claims: Claims,
    tag: str,
    run: cmp.ComparisonResult,
    ceilings: dict[str, dict[str, float]],
    judge: bool,
    literal: dict[str, float] | None = None,
) -> None:
    """Does stage 1 learn its objective? Judged on the strong-connection reading (GTH-GMN's default,
    whose ceiling is high): per seed, link AUC against 0.5, sign accuracy against the per-block majority
    and magnitude R² against the block-mean baseline, each paired over seeds and all required. The
    literal reading (every nonzero weight an edge) is reported beside its ceiling (``literal``: the
    metrics of the one-seed ``GTH-GMN (literal links)`` run), not judged: its ceiling, measured with
    free node positions, is near 0.5."""
    t = run.table[run.table["model"] == "GTH-GMN"].sort_values("seed")
    col = {k: t[f"recon_{k}"].to_numpy(float) for k in ("link_auc", "sign_acc", "sign_majority", "mag_r2")}
    col["mag_r2_block_mean"] = t["recon_mag_r2_block_mean"].to_numpy(float)
    test = all_of(
        [
            compare_seeds(
                col["link_auc"], np.full_like(col["link_auc"], 0.5), paired=True, label="link AUC - 0.5", digits=3
            ),
            compare_seeds(col["sign_acc"], col["sign_majority"], paired=True, label="sign acc - majority", digits=3),
            compare_seeds(
                col["mag_r2"], col["mag_r2_block_mean"], paired=True, label="magnitude R² - block mean", digits=3
            ),
        ]
    )
    strong = ceilings.get("strong", {})
    claims.add(
        f"reconstruction-learned@{tag}",
        f"{tag}: stage 1 learns to reconstruct the weight graphs (strong-connection link reading)",
        paper="the embedding is trained by reconstruction (method)",
        ours={k: round(float(v.mean()), 3) for k, v in col.items()}
        | {"link AUC ceiling (free positions)": round(strong.get("all", float("nan")), 3)},
        criterion="strong reading (edges: top-q |w| of each layer block): link AUC > 0.5, sign accuracy > per-block "
        "majority, magnitude R² > block-mean R², each by > 2 se over seeds (paired), validation INRs after refinement",
        test=test if judge else None,
        reason=None if judge else "smoke scale",
        source=f"{CITATION} §method",
        trained=run.gates(["GTH-GMN"]) if judge else None,
    )
    lit = ceilings.get("literal", {})
    ours = {"link AUC ceiling (free positions)": round(lit.get("all", float("nan")), 3)}
    ours |= {f"ceiling vs {k}": round(v, 3) for k, v in lit.items() if k not in ("all", "bce") and v == v}
    if literal:
        ours |= {k: round(v, 3) for k, v in literal.items() if k.startswith("link_auc")}
    claims.add(
        f"reconstruction-literal@{tag}",
        f"{tag}: the link decoder separates edges from non-edges on the literal graph (every nonzero weight an edge)",
        paper="Fermi-Dirac link decoder over the parameter graph (method)",
        ours=ours,
        criterion="reported only: link AUC of the literal-links variant beside the decoder's ceiling with node "
        "positions free on the ball",
        reason=f"its ceiling is {lit.get('all', float('nan')):.2f}: on a dense MLP every adjacent-layer pair is an "
        "edge and no same-layer pair is, which no distance threshold separates",
        source=f"{CITATION} §method",
    )
