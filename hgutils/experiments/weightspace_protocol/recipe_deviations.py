r"""Each baseline's training "as the authors run it" beside how this run trained it, and what still differs.

:func:`as_the_authors_run_it` reads a :func:`~hgutils.experiments.weightspace_protocol.run_comparison` result and
the settings it ran with, and lists, for every model with a reference recipe
(:mod:`hgutils.weightspace.metanets.recipes`), the recipe's optimiser, learning rate, batch, epochs,
warm-up, gradient clip, inputs, augmentation and model selection beside this run's. A setting that
differs is named in ``deviation``; ``measured effect`` says what this run measured about it -- from the
run's own rows (whether an epoch cap bound) or from a measurement passed in (``measured``, e.g. the
augmentation learning curve of notebook 01) -- and ``"not measured at this scale"`` otherwise.

The warm-up arithmetic (:func:`warmup_coverage`). A linear warm-up over :math:`w` optimiser steps at
batch :math:`B` on :math:`n` training networks (the loop keeps the last, partial batch, so an epoch is
:math:`s = \lceil n/B \rceil` steps) spans

.. math::

    e_w = w / \lceil n/B \rceil \ \text{epochs},\qquad N_w = w B \ \text{networks drawn},

against :math:`N_w^{\mathrm{ref}} = w B_{\mathrm{ref}}` in the reference; a run of :math:`S` optimiser
steps completes the fraction :math:`\min(1, S/w)` of it (its learning rate ends at that fraction of the
recipe's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hgutils.experiments.weightspace_protocol.variants import VARIANTS
from hgutils.weightspace.metanets.recipes import ReferenceRecipe, recipe_for
from hgutils.weightspace.tasks import TrainConfig

__all__ = ["NOT_MEASURED", "SETTINGS", "WarmupCoverage", "as_the_authors_run_it", "deviations", "warmup_coverage"]

#: the settings compared, in table order
SETTINGS: tuple[str, ...] = (
    "optimizer",
    "learning rate",
    "batch",
    "epochs",
    "warm-up",
    "gradient clip",
    "inputs",
    "augmentation",
    "model selection",
)
#: the measured-effect text of a setting nothing in the run measured
NOT_MEASURED = "not measured at this scale"
#: the validation score each task selects on (:func:`hgutils.weightspace.tasks.metrics._score`)
_SCORE = {"classification": "accuracy", "regression": "MSE", "accuracy": "Kendall tau", "infonce": "InfoNCE loss"}


@dataclass(frozen=True)
class WarmupCoverage:
    """How far a linear warm-up of ``warmup_steps`` reaches (module docstring): ``epochs`` :math:`e_w`,
    ``networks`` :math:`N_w = wB`, ``reference_networks`` :math:`wB_\\mathrm{ref}`, ``completed``
    :math:`\\min(1, S/w)` of a run of ``steps_run`` steps (``nan`` when ``steps_run`` is unknown)."""

    warmup_steps: int
    batch_size: int
    reference_batch: int
    n_train: int
    steps_run: float

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(self.n_train / self.batch_size)

    @property
    def epochs(self) -> float:
        return self.warmup_steps / self.steps_per_epoch

    @property
    def networks(self) -> int:
        return self.warmup_steps * self.batch_size

    @property
    def reference_networks(self) -> int:
        return self.warmup_steps * self.reference_batch

    @property
    def completed(self) -> float:
        if not math.isfinite(self.steps_run):
            return math.nan
        return min(1.0, self.steps_run / self.warmup_steps)


def warmup_coverage(
    warmup_steps: int, batch_size: int, reference_batch: int, n_train: int, steps_run: float = math.nan
) -> WarmupCoverage:
    """:class:`WarmupCoverage` of a ``warmup_steps`` warm-up at ``batch_size`` on ``n_train`` networks."""
    if warmup_steps < 1 or batch_size < 1 or reference_batch < 1 or n_train < 1:
        raise ValueError(
            f"need warmup_steps, batch sizes and n_train >= 1; got {warmup_steps}, {batch_size}, "
            f"{reference_batch}, {n_train}"
        )
    if math.isfinite(steps_run) and steps_run < 0:
        raise ValueError(f"steps_run must be >= 0; got {steps_run}")
    return WarmupCoverage(int(warmup_steps), int(batch_size), int(reference_batch), int(n_train), float(steps_run))


def _num(x: float) -> str:
    """A count or ratio for the table: whole numbers with thousands separators from 100 on."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _pct(fraction: float) -> str:
    return f"{_num(100 * fraction)} %"


def _optimizer(name: str, weight_decay: float, amsgrad: bool) -> str:
    return f"{'AdamW' if name == 'adamw' else 'Adam'}{' (AMSGrad)' if amsgrad else ''}, weight decay {weight_decay:g}"


def _values(rows: pd.DataFrame, col: str) -> list[Any]:
    return list(dict.fromkeys(rows[col].tolist())) if col in rows else []


def _one(vals: list[Any], fmt: str = "{}") -> str:
    return " / ".join(fmt.format(v) for v in vals) if vals else "?"


def _median(rows: pd.DataFrame, col: str) -> float:
    return float(np.median(rows[col].astype(float))) if col in rows and len(rows) else math.nan


def _note(rows: pd.DataFrame, start: str, marker: str) -> str:
    """The first ``; ``-separated note of the runs' ``recipe`` column that starts with ``start`` and holds
    ``marker`` (:func:`~hgutils.weightspace.metanets.recipes.fit_recipe_to_run`'s notes), without the closing
    parenthesis of the column; ``""`` when none does."""
    for text in _values(rows, "recipe"):
        body = str(text)
        body = body[body.find("(") + 1 : -1] if "(" in body and body.endswith(")") else body
        for part in body.split("; "):
            if part.startswith(start) and marker in part:
                return part
    return ""


def _lr_rule(rows: pd.DataFrame) -> str:
    """The lr rule a run names in its ``recipe`` column ("... sqrt-scaled from batch 512 to 100")."""
    for text in _values(rows, "recipe"):
        for rule in ("sqrt", "linear"):
            if f"({rule} rule" in str(text):
                return rule
    return "none"


def _model_rows(
    model: str, recipe: ReferenceRecipe, rows: pd.DataFrame, settings: Any, task: str, n_train: int
) -> list[dict]:

    mode = settings.recipes
    shared = TrainConfig()  # what a run without a recipe trains with (ComparisonSettings sets none of these)
    cap = dict(settings.epoch_caps).get(model)
    n_seeds, n_capped = len(rows), int(rows["capped"].astype(bool).sum()) if "capped" in rows else 0
    out: list[dict[str, str]] = []

    def add(setting: str, ref: str, ours: str, deviation: str = "", effect: str = "") -> None:
        out.append({"setting": setting, "reference": ref, "this run": ours, "deviation": deviation, "effect": effect})

    # optimiser
    ref_opt = _optimizer(recipe.optimizer, recipe.weight_decay, recipe.amsgrad)
    ours_opt = ref_opt if mode != "none" else _optimizer(shared.optimizer, shared.weight_decay, shared.amsgrad)
    add("optimizer", ref_opt, ours_opt, "" if ours_opt == ref_opt else "the shared optimiser (recipes='none')")
    # batch and learning rate
    batches = [int(b) for b in _values(rows, "batch_size")]
    lrs = [float(v) for v in _values(rows, "lr")]
    small = [b for b in batches if b < recipe.batch_size]
    rule = _lr_rule(rows)
    halved = _note(rows, "batch ", " -> ")  # fit_recipe_to_run's rule 2: the ceiling held too few optimiser steps
    add(
        "batch",
        f"{recipe.batch_size}",
        _one(batches),
        ""
        if not small
        else (
            f"smaller, for enough optimiser steps: {halved}"
            if halved
            else f"smaller: the training split holds {n_train} < {recipe.batch_size} networks"
            if n_train < recipe.batch_size
            else "smaller than the reference's"
        ),
    )
    lr_dev = ""
    if any(not math.isclose(v, recipe.lr, rel_tol=1e-9) for v in lrs):
        power = {"sqrt": "1/2", "linear": "1"}.get(rule, "")
        lr_dev = (
            f"{rule}-scaled to the smaller batch: lr x (B / {recipe.batch_size})^{power}"
            if small and power
            else "the run's own learning rate"
        )
    add("learning rate", f"{recipe.lr:g}", _one(lrs, "{:.3g}"), lr_dev)
    # epochs
    ref_epochs = recipe.epochs
    if settings.steps is not None and cap is None and mode != "full":
        budget, limit = f"{settings.steps} optimiser steps", math.inf
    else:
        limit = cap if cap is not None else (ref_epochs if mode == "full" else settings.epochs)
        budget = f"cap {limit}"
    ran = _median(rows, "epochs_run")
    stops = settings.patience < limit  # early stopping can end a run before its budget
    ours_ep = (
        f"{budget}{', the plateau rule' if stops else ''}; ran {ran:g} (median), {n_capped} of {n_seeds} seed(s) "
        "capped while still improving"
    )
    ep_dev = f"a ceiling below the reference's {ref_epochs} epochs" if limit < ref_epochs else ""
    reached = int((rows["task_stop"] == "budget").sum()) if "task_stop" in rows else n_capped
    ep_eff = "the ceiling did not bind: every seed stopped on its plateau before it"
    if reached and not n_capped:
        ep_eff = f"{reached} of {n_seeds} seed(s) reached the ceiling on their plateau (converged, not capped)"
    if n_capped:
        hit = rows[rows["capped"].astype(bool)]
        ep_eff = f"{n_capped} of {n_seeds} seed(s) reached the ceiling still improving (capped)"
        if "best_epoch" in hit:  # the loop's epochs count from 0
            best = [(int(b) + 1, int(e)) for b, e in zip(hit["best_epoch"], hit["epochs_run"])]
            ep_eff += "; best validation epoch " + ", ".join(f"{b} of {e}" for b, e in best)
    add("epochs", f"{ref_epochs}, all of them", ours_ep, ep_dev, ep_eff if ep_dev else "")
    # warm-up
    if recipe.warmup_steps:
        ours_w = []
        dev = []
        used = [int(v) for v in _values(rows, "warmup_steps")] or [recipe.warmup_steps]
        for b, w in zip(batches or [recipe.batch_size], used * max(1, len(batches))):
            c = warmup_coverage(w, b, recipe.batch_size, n_train, _median(rows, "steps"))
            ours_w.append(
                f"{w:,} steps = {c.networks:,} networks ({_num(c.epochs)} epochs); the run took "
                f"{_num(c.steps_run)} steps: {_pct(c.completed)} of the warm-up"
            )
            cut = _note(rows, "warm-up ", " -> ")
            if cut:
                dev.append(f"cut to fit the run: {cut}")
            elif c.networks < c.reference_networks:
                dev.append(f"covers {_pct(c.networks / c.reference_networks)} of the reference's networks")
            if c.completed < 1:
                dev.append(f"the run ended at {_pct(c.completed)} of the full learning rate")
        if mode == "none":
            ours_w, dev = ["none"], ["no warm-up (recipes='none')"]
        add("warm-up", f"{w:,} steps = {w * recipe.batch_size:,} networks", " / ".join(ours_w), "; ".join(dev))
    else:
        add("warm-up", "none", "none")
    # gradient clip
    ref_clip = "none" if recipe.grad_clip is None else f"{recipe.grad_clip:g}"
    ours_clip = ref_clip if mode != "none" else ("none" if shared.grad_clip is None else f"{shared.grad_clip:g}")
    add("gradient clip", ref_clip, ours_clip, "" if ours_clip == ref_clip else "the shared clip (recipes='none')")
    # inputs
    inputs = [str(v) for v in _values(rows, "inputs")]
    standardised = any("standardised on the training split" in v for v in inputs)
    dev = "" if inputs == [recipe.inputs] else ("statistics standardised" if standardised else "other inputs")
    add("inputs", recipe.inputs, _one(inputs), dev)
    # augmentation
    ref_aug = "off" if recipe.augment is None else recipe.augment.describe()
    augs = [str(v) for v in _values(rows, "augment")]
    aug_dev = ""
    if augs != [ref_aug]:
        aug_dev = "not augmented" if augs == ["off"] else ("augmented" if ref_aug == "off" else "other transforms")
    add("augmentation", ref_aug, _one(augs), aug_dev)
    # model selection
    score = _SCORE.get(task, "score")
    ours_sel = f"best validation {score}, evaluated every epoch" + (
        f"; the plateau rule: stops after {settings.patience} epochs without an improvement above min_delta, not "
        f"before epoch {getattr(settings, 'min_epochs', 0)}"
        if stops
        else ""
    )
    sel_dev = []
    if stops:
        sel_dev.append("stops on its plateau (the reference trains all its epochs)")
    if "every " in recipe.selection and "every epoch" not in recipe.selection:  # the reference names its cadence
        sel_dev.append("evaluated every epoch")
    add("model selection", recipe.selection, ours_sel, "; ".join(sel_dev))
    return sorted(out, key=lambda r: SETTINGS.index(r["setting"]))


def as_the_authors_run_it(
    run: Any, settings: Any, task: str, measured: Mapping[tuple[str, str], str] | None = None
) -> pd.DataFrame:
    """Every model of ``run`` (a :class:`~hgutils.experiments.weightspace_protocol.ComparisonResult`) that has a
    reference recipe on ``task``, trained as ``settings`` (a
    :class:`~hgutils.experiments.weightspace_protocol.ComparisonSettings`: ``recipes``, ``epochs``, ``steps``,
    ``epoch_caps``, ``patience``) said: one row per (model, setting of :data:`SETTINGS`) with
    ``reference`` (the recipe), ``this run`` (read from the run's rows), ``deviation`` (empty where they
    agree) and ``measured effect``: ``measured[(model, setting)]`` where given (text computed from this
    run's data; entries of models without a row here, e.g. NFN_NP's from a learning curve, are left
    out), else what the run's rows show (an epoch cap: whether it bound), else :data:`NOT_MEASURED` for
    a deviation and empty for a setting that agrees.

    Raises ``ValueError`` for a table without the run's columns, or a ``measured`` key that is not a
    ``(model, setting)`` pair with a setting of :data:`SETTINGS`."""

    table = run.table
    need = {"model", "lr", "batch_size", "inputs", "augment", "recipe", "epochs_run", "steps", "capped"}
    missing = sorted(need - set(table.columns))
    if missing:
        raise ValueError(f"the results table lacks column(s) {missing} (a table of run_comparison)")
    measured = dict(measured or {})
    bad = sorted(k for k in measured if not (isinstance(k, tuple) and len(k) == 2 and k[1] in SETTINGS))
    if bad:
        raise ValueError(f"measured effects must be keyed (model, setting) with a setting of {SETTINGS}; got {bad}")
    n_train = len(run.splits.train)
    rows: list[dict[str, str]] = []
    for model in dict.fromkeys(table["model"]):
        recipe = recipe_for(VARIANTS[model].base, task) if model in VARIANTS else None
        if recipe is None:
            continue
        for r in _model_rows(model, recipe, table[table["model"] == model], settings, task, n_train):
            own = r.pop("effect")
            eff = measured.pop((model, r["setting"]), "") or own or (NOT_MEASURED if r["deviation"] else "")
            rows.append({"model": model, **r, "measured effect": eff})
    return pd.DataFrame(rows, columns=["model", "setting", "reference", "this run", "deviation", "measured effect"])


def deviations(authors: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`as_the_authors_run_it` that still deviate from the reference (model, setting,
    deviation, measured effect)."""
    dev = authors[authors["deviation"].astype(str) != ""]
    return dev[["model", "setting", "deviation", "measured effect"]].reset_index(drop=True)
