"""Notebook 04's claims (each criterion is printed with the claim; ``judge`` is False at the smoke
scale): the design rules (:func:`design_claims`), CIFAR (:func:`cifar_claims`), genomics
(:func:`genomics_claims`) and the batch norms (:func:`bn_claims`), every comparison through
:mod:`hgutils.verdicts`; and the checks the claims are conditioned on: the learnability gates over seeds
(:func:`gates`), the task's ceiling (:func:`at_ceiling`) and its difficulty (:func:`hierarchy_difficulty`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hgutils.experiments.nb04_ilnn_cifar_genomics.data import Split
from hgutils.experiments.nb04_ilnn_cifar_genomics.figures import cap_hits
from hgutils.experiments.nb04_ilnn_cifar_genomics.preset import (
    CEILING,
    DIFFICULTY_BAND,
    GUE_LAYOUT,
    PAPER_CIFAR,
    PAPER_GENOMICS_MCC,
    PAPER_SOURCE,
    TARGET_GAP,
    ILNNConfig,
    gue_instructions,
)
from hgutils.experiments.nb04_ilnn_cifar_genomics.runs import init_summary
from hgutils.ledger import Claims
from hgutils.loop import combine_gates
from hgutils.nn.fitting import History
from hgutils.nn.ops import FLAVOURS
from hgutils.verdicts import all_of, compare_ordering, compare_seeds, target_power


def _values(runs: dict[int, dict[str, History]], model: str, metric: str) -> list[float]:
    return [100 * runs[s][model].final(metric) for s in runs]


def at_ceiling(*values: list[float], ceiling: float = CEILING) -> bool:
    """True when every run of every compared model scores ``>= ceiling`` points (nothing to rank)."""
    return all(v >= ceiling for vals in values for v in vals)


def hierarchy_difficulty(runs: dict[int, dict[str, History]]) -> dict[str, Any]:
    """How hard a task is for the models: the Euclidean CNN's and the best model's test MCC (points, mean
    over seeds), whether the Euclidean one lies inside :data:`DIFFICULTY_BAND`, and whether any run reached
    the ceiling."""
    means = {m: float(np.mean(_values(runs, m, "test_mcc"))) for m in next(iter(runs.values()))}
    best = max(means, key=means.get)
    lo, hi = DIFFICULTY_BAND
    return {
        "Euclidean MCC": round(means["euclidean"], 1),
        "best model": best,
        "best MCC": round(means[best], 1),
        "Euclidean in band": lo < means["euclidean"] < hi,
        "band": DIFFICULTY_BAND,
        "any run >= ceiling": any(v >= CEILING for m in means for v in _values(runs, m, "test_mcc")),
    }


def gates(runs: dict[int, dict[str, History]], chance: float) -> dict[str, dict[str, Any]]:
    """Learnability check per model over seeds: each seed's run checked by
    :class:`hgutils.loop.LearnabilityGate` (:meth:`History.gate`), combined by
    :func:`hgutils.loop.combine_gates` (``trained`` iff every seed passed; ``reason`` lists each seed's verdict)."""
    return {
        m: combine_gates({f"seed {s}": runs[s][m].gate(chance) for s in runs}, summary="each")
        for m in next(iter(runs.values()))
    }


def design_claims(claims: Claims, rules: dict[str, float], diag: dict[str, pd.DataFrame]) -> None:
    """The design-rule claims (deterministic, judged at every scale): PLFC's flat limit, GyroLBN's
    statistics, and ILNN's numerical state at init (``diag``: :func:`init_table` per experiment)."""
    claims.add(
        "plfc_flat_limit",
        "PLFC reduces to the Euclidean affine map z x - a|z| + b as c -> 0",
        paper="design rule: every component reduces to its Euclidean counterpart as K -> 0",
        ours=rules["plfc_flat_error"],
        criterion="max |PLFC - affine| at c = 1e-6 < 1e-4 (float64)",
        holds=rules["plfc_flat_error"] < 1e-4,
        source=PAPER_SOURCE,
    )
    claims.add(
        "gyrolbn_statistics",
        "GyroLBN (Fréchet variance) gives its output the target variance about the bias point",
        paper="gyro-scaling normalises by the Fréchet variance",
        ours={"|RMS dist - s|": rules["gyrolbn_rms_error"], "centroid dist": rules["gyrolbn_centroid_dist"]},
        criterion="|RMS distance to the bias point - s| < 1e-5 and centroid-to-bias distance < 0.05 (float64)",
        holds=rules["gyrolbn_rms_error"] < 1e-5 and rules["gyrolbn_centroid_dist"] < 0.05,
        source=PAPER_SOURCE,
    )
    worst = {k: init_summary(t).loc["ilnn"] for k, t in diag.items()}
    p99 = max(float(w["max p99 radius"]) for w in worst.values())
    clamped = max(float(w["max clamped logits"]) for w in worst.values())
    claims.add(
        "ilnn_stable_at_init",
        "ILNN layers start inside float32's range: no radius blow-up, no saturated PLFC logit",
        paper="intrinsic operations keep the network numerically stable",
        ours={"max p99 radius": p99, "max clamped fraction": clamped},
        criterion=f"over every ILNN layer at init ({', '.join(diag)}): p99 radius <= 5 and no logit at the ±10 clamp",
        holds=p99 <= 5.0 and clamped == 0.0,
        source=PAPER_SOURCE,
    )


def cifar_claims(
    claims: Claims, name: str, runs: dict[int, dict[str, History]], data: Split, cfg: ILNNConfig, judge: bool
) -> None:
    """CIFAR claims of dataset ``name``: the paper's 200-epoch ordering (judged only when the run is
    the paper's protocol) and the learning-speed comparisons this scale can test."""
    standin = "STAND-IN" in data.source
    acc = {fl: _values(runs, fl, "test_acc") for fl in FLAVOURS}
    means = {fl: float(np.mean(v)) for fl, v in acc.items()}
    trained = gates(runs, data.chance)
    full = cfg.cifar_epochs >= 200 and cfg.depth == 18 and cfg.cifar_train == 0 and not standin
    p = PAPER_CIFAR[name]
    gaps = p["ilnn"] - p["hcnn"], p["hcnn"] - p["euclidean"]
    why = (
        "mean test acc ILNN >= HCNN >= Euclidean over seeds (final epoch)"
        if full
        else f"not testable at this scale: the paper's gaps ({gaps[0]:.2f} and {gaps[1]:.2f} points) are measured "
        f"after 200 epochs of ResNet-18 on the full set; {cfg.cifar_epochs} epochs of ResNet-{cfg.depth} on "
        f"{len(data.y_train)} images measure learning speed, and early speed does not rank converged accuracy"
    )
    claims.add(
        f"{name}_order",
        f"{name}: ILNN >= HCNN-Lorentz >= Euclidean ResNet-18 after 200 epochs",
        paper=[PAPER_CIFAR[name][k] for k in ("ilnn", "hcnn", "euclidean")],
        ours=[means[k] for k in ("ilnn", "hcnn", "euclidean")],
        criterion="pairwise along ILNN > HCNN > Euclidean: mean test-accuracy difference > 2 se over seeds "
        "(paired, final epoch)"
        if full
        else why,
        test=compare_ordering(acc, ["ilnn", "hcnn", "euclidean"], paired=True, unit="points")
        if full and judge
        else None,
        reason=None if full else "the paper's 200-epoch ResNet-18 protocol is not run at this scale",
        source=PAPER_SOURCE,
        trained=trained if full and judge else None,
    )
    judged = judge and not standin
    for other in ("hcnn", "euclidean"):
        d = compare_seeds(acc["ilnn"], acc[other], paired=True, label=f"ILNN - {other}", unit="points")
        claims.add(
            f"{name}_speed_ilnn_vs_{other}",
            f"{name}: after {cfg.cifar_epochs} epochs (same budget and schedule) ILNN's test accuracy is at least "
            f"{other}'s (learning speed)",
            paper="not reported (the paper compares after 200 epochs)",
            ours={"acc diff (points)": d.diff, "se": d.se, "seeds": d.n},
            criterion=f"acc_ILNN - acc_{other}: > 2 se holds, < -2 se contradicts (paired over seeds, final epoch)"
            + ("; digits stand-in, not judged" if standin else ""),
            test=d if judged else None,
            reason="digits stand-in" if standin else None,
            source=PAPER_SOURCE,
            trained={k: trained[k] for k in ("ilnn", other)} if judged else None,
        )


def genomics_claims(
    claims: Claims,
    runs: dict[str, dict[int, dict[str, History]]],
    data: dict[str, Split],
    cfg: ILNNConfig,
    judge: bool,
) -> None:
    """Genomics claims: ILNN's MCC above the Euclidean CNN's on ``teb/dna_cmc`` (complete splits),
    the paper's TEB pseudogene tasks (reduced protocol here) and GUE tasks, and the synthetic hierarchy.

    Each judged claim states its power: ``paper_effect`` (the paper's gap) where the paper reports one,
    and for every task whether a :data:`TARGET_GAP`-point gap is resolved at the seeds run."""
    tasks = ["teb/dna_cmc", *PAPER_GENOMICS_MCC, "synthetic"]
    for task in tasks:
        key = "genomics_" + task.split("/")[-1] + ("_hierarchy" if task == "synthetic" else "")
        paper = PAPER_GENOMICS_MCC.get(task)
        if paper:
            paper_val = f"+{paper[1] - paper[0]:.2f} MCC ({paper[0]} -> {paper[1]})"
        else:
            paper_val = "not reported (motivation: hierarchical data)" if task == "synthetic" else "not reported"
        reduced = task in data and "REDUCED" in data[task].protocol
        statement = f"{task}{' (REDUCED protocol)' if reduced else ''}: ILNN's MCC well above the Euclidean CNN's"
        if task not in runs:
            presets = [s for s in ILNNConfig.PRESETS if task in ILNNConfig.from_scale(s).genomics_tasks]
            where = f"not run at this scale; in the {' and '.join(presets) or 'no'} preset(s)"
            if task in GUE_LAYOUT:
                where = gue_instructions(task)
            elif task in cfg.genomics_tasks:
                where = "no copy of the task found"
            claims.add(
                key,
                statement,
                paper=paper_val,
                ours=None,
                criterion="MCC_ILNN - MCC_Euclid > 2 se (paired over seeds)",
                reason=where,
                source=PAPER_SOURCE,
            )
            continue
        ilnn, euclid = _values(runs[task], "ilnn", "test_mcc"), _values(runs[task], "euclidean", "test_mcc")
        d = compare_seeds(ilnn, euclid, paired=True, label="ILNN - Euclidean", unit="MCC points")
        ceiling = at_ceiling(ilnn, euclid)
        trained = gates(runs[task], data[task].chance)
        capped = cap_hits(runs[task], ("ilnn", "euclidean")) if cfg.genomics_patience else []
        judged = judge and not ceiling
        claims.add(
            key,
            statement,
            paper=paper_val,
            ours={
                "MCC Euclid / ILNN": f"{np.mean(euclid):.1f} / {np.mean(ilnn):.1f}",
                "MCC diff (points)": d.diff,
                "se": d.se,
                "seeds": d.n,
                f"{TARGET_GAP:g}-point gap": target_power(d, TARGET_GAP),
            },
            criterion="MCC_ILNN - MCC_Euclid > 2 se (paired over seeds; test MCC at the best validation "
            f"epoch; {data[task].protocol})"
            + (f"; runs that reached the epoch cap of {cfg.epochs_for(task)}: {', '.join(capped)}" if capped else "")
            + (f"; not judged: every run scored >= {CEILING} MCC, the task cannot rank the models" if ceiling else ""),
            test=d if judged else None,
            paper_effect=(paper[1] - paper[0]) if paper and judged else None,
            reason=f"every run scored >= {CEILING} MCC: the task cannot rank the models" if ceiling else None,
            source=PAPER_SOURCE,
            trained={k: trained[k] for k in ("ilnn", "euclidean")} if judged else None,
        )


def bn_claims(
    claims: Claims, timing: dict[str, list[float]], runs: dict[int, dict[str, History]], data: Split, judge: bool
) -> None:
    """GyroLBN faster than GyroBN and LBN (timing repetitions, paired), and at least as accurate (the
    ILNN genomic CNN on the comparison task, test MCC paired over seeds; ``runs`` empty: not run)."""
    ms = {k: [1e3 * t for t in v] for k, v in timing.items()}
    speed = all_of(
        [
            compare_seeds(
                ms["GyroLBN"],
                ms[o],
                paired=True,
                higher_is_better=False,
                label=f"GyroLBN faster than {o}",
                unit="ms",
                over="repetitions",
            )
            for o in ("GyroBN", "LBN")
        ]
    )
    med = {k: float(np.median(v)) for k, v in ms.items()}
    claims.add(
        "gyrolbn_speed",
        "GyroLBN is faster than GyroBN (iterative Fréchet mean) and LBN",
        paper="GyroLBN reduces training time compared with GyroBN and LBN",
        ours={f"{k} / GyroLBN (median)": v / med["GyroLBN"] for k, v in med.items()},
        criterion="t_other - t_GyroLBN > 2 se for GyroBN and for LBN (fwd+bwd CPU time of one batch, paired over "
        "interleaved repetitions)",
        test=speed if judge else None,
        source=PAPER_SOURCE,
    )
    if not runs:
        claims.add(
            "gyrolbn_accuracy",
            "GyroLBN outperforms both LBN and GyroBN",
            paper="consistently outperforming both LBN and GyroBN",
            ours=None,
            criterion="MCC_GyroLBN - MCC_other > 2 se for LBN and for GyroBN (paired over seeds; ILNN genomic CNN)",
            reason="the GyroBN / LBN training runs are not in this preset (bn_accuracy=False: the budget goes to the "
            "genomics claims); the smoke and paper presets run them",
            source=PAPER_SOURCE,
        )
        return
    per_seed = {bn: _values(runs, bn, "test_mcc") for bn in ("gyrolbn", "gyrobn", "lbn")}
    mccs = {bn: float(np.mean(v)) for bn, v in per_seed.items()}
    ceiling = at_ceiling(*per_seed.values())
    acc = all_of(
        [
            compare_seeds(per_seed["gyrolbn"], per_seed[o], paired=True, label=f"GyroLBN - {o}", unit="MCC points")
            for o in ("lbn", "gyrobn")
        ]
    )
    claims.add(
        "gyrolbn_accuracy",
        "GyroLBN outperforms both LBN and GyroBN",
        paper="consistently outperforming both LBN and GyroBN",
        ours=mccs,
        criterion=f"MCC_GyroLBN - MCC_other > 2 se for LBN and for GyroBN (paired over seeds; ILNN genomic CNN; "
        f"{data.protocol})"
        + (f"; not judged: every run scored >= {CEILING} MCC, the task cannot rank the models" if ceiling else ""),
        test=acc if judge and not ceiling else None,
        reason=f"every run scored >= {CEILING} MCC: the task cannot rank the models" if ceiling else None,
        source=PAPER_SOURCE,
        trained=gates(runs, data.chance) if judge and not ceiling else None,
    )
