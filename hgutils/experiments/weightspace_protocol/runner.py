"""The worker of :func:`~.run.run_comparison`: builds each variant, searches its family's learning rate,
fits it with the shared loop and records its row, curves and kept outputs.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from hgutils.experiments.weightspace_protocol.results import ComparisonResult
from hgutils.experiments.weightspace_protocol.variants import VARIANTS, build_variant, variant_config
from hgutils.parallel import forked_map
from hgutils.progress import progress
from hgutils.repro import cached, seed_everything, source_fingerprint
from hgutils.weightspace.augment import REFERENCE_DEFAULTS, WEIGHT_NOISE_DEFAULTS, for_zoo
from hgutils.weightspace.inputs import Splits, prepare_inputs
from hgutils.weightspace.metanets.heads import predict
from hgutils.weightspace.metanets.recipes import RecipeFit, fit_recipe_to_run, planned_steps, recipe_for
from hgutils.weightspace.tasks import embeddings, fit, predict_outputs
from hgutils.weightspace.zoo.containers import Zoo

log = logging.getLogger("hgutils")


def _data_key(model: Any) -> tuple[str, str, bool]:
    return type(model).__name__, repr(model.snapshots), bool(getattr(model, "reads_raw_weights", False))


def _fingerprint(zoo: Zoo) -> str:
    """A cheap content hash of a zoo's parameters (for cache keys)."""

    h = hashlib.sha256()
    for k in sorted(zoo.params):
        h.update(k.encode())
        h.update(zoo.params[k].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


_RUN_CACHE_VERSION = 1


@functools.cache
def _run_code_fingerprint() -> str:
    """The source a final run's outcome depends on: the meta-networks, the layers and manifolds, the
    tasks, graphs and augmentations, the loop and this protocol (an edit to any of them retrains); read
    once per process, not once per run."""
    here = Path(__file__).resolve().parent
    root = here.parents[1]
    return source_fingerprint([root / "weightspace", root / "nn", root / "manifolds", root / "loop.py", here])


#: GTH-GMN settings that act after stage 1: variants differing only in these share their stage 1
_STAGE2_KEYS = frozenset({"refine_lr_scale", "refine_steps", "refine_lr"})


def _stage1_groups(runs: Sequence[tuple[str, int, float, bool]]) -> list[list[tuple[str, int, float, bool]]]:
    """``runs`` grouped so that runs which can share a stage 1 (same base, snapshots, seed and
    constructor overrides apart from stage-2 settings) sit in one group, in their listed order."""
    groups: dict[Any, list[tuple[str, int, float, bool]]] = {}
    for r in runs:
        v = VARIANTS[r[0]]
        key = (v.base, repr(v.snapshots), tuple(kv for kv in v.kwargs if kv[0] not in _STAGE2_KEYS), r[1])
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def _fit_group(
    runner: _Runner, group: list[tuple[str, int, float, bool]]
) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """Fit one group of runs (in a forked worker); returns each run's row, curves and kept outputs."""
    out = []
    for name, seed, lr, keep in group:
        row = runner.fit_run(name, seed, lr, keep_outputs=keep)
        curves = {k: {seed: runner.res.curves[k][seed]} for k in (name, f"{name} (stage 1)") if k in runner.res.curves}
        kept = (runner.res.models.pop(name), runner.res.outputs.pop(name)) if keep else None
        out.append((row, curves, kept))
    return out


class _Runner:
    """The steps of :func:`run_comparison` on one zoo and split: prepare the inputs once, build and
    prepare each model's container once per kind, search a family's learning rate, fit one (model,
    seed) and record its row, curves and first-seed outputs in a :class:`ComparisonResult`."""

    def __init__(
        self,
        zoo: Zoo,
        task: str,
        target: Tensor | None,
        out_dim: int,
        splits: Splits,
        train_cfg: Any,
        gth_overrides: dict[str, Any] | None,
        gate: Any,
        recipes: str = "none",
    ) -> None:
        self.zoo = self.raw = zoo
        self.task, self.target, self.out_dim, self.splits = task, target, out_dim, splits
        self.train_cfg, self.gth_overrides, self.gate, self.recipes = train_cfg, gth_overrides, gate, recipes
        self.lr_scaling = "none"  # recipe learning rates at our batch size (run_comparison: recipe_lr_scaling)
        self.res = ComparisonResult(pd.DataFrame(), splits)
        self.prep_time: dict[Any, float] = {}
        self.pretrained: dict[str, Any] = {}  # stage 1 shared by GTH-GMN variants that differ only in stage 2
        self.fingerprint = ""
        self.epoch_caps: dict[str, int] = {}
        self.step_share, self.warmup_share = 1.0, 0.05  # run_comparison: recipe_step_share, warmup_share
        self.augment: tuple[str, ...] = ("recipe",)  # run_comparison: augment
        self.inputs = "standardize"  # the shared inputs (prepare)
        self.zoos: dict[str, Any] = {}  # prepared zoos by input normalisation

    def prepare(self, inputs: str, drop_constant: bool) -> None:
        """Every model's inputs (:func:`prepare_inputs`); models that read the trained weights get the
        raw zoo minus the same constant snapshots."""
        self.zoo, record = prepare_inputs(self.raw, self.splits, inputs, drop_constant)
        if record["dropped_snapshots"]:
            self.raw = self.raw.snapshots([t for t in range(self.raw.T) if t not in record["dropped_snapshots"]])
        self.res.inputs = record
        self.fingerprint = _fingerprint(self.zoo)
        self.inputs = inputs
        self.zoos = {inputs: self.zoo, "none": self.raw, "per_layer": self.raw}

    def build(self, name: str) -> Any:
        model = build_variant(name, self.zoo, self.task, self.out_dim, self.gth_overrides)
        if self.inputs_of(name) == "per_layer":  # the model standardises raw weights itself (GMN)
            if not hasattr(model, "input_norm"):
                raise ValueError(f"{name}'s recipe asks for per-layer inputs, which {type(model).__name__} lacks")
            model.input_norm = "per_layer"
        return model

    def inputs_of(self, name: str) -> str:
        """The input normalisation ``name`` trains on: its recipe's (``ReferenceRecipe.inputs``) or the shared one."""
        r = self.recipe(name)
        return self.inputs if r is None else r.inputs

    def zoo_for(self, inputs: str) -> Any:
        """The zoo normalised as ``inputs`` says (raw for ``"none"`` and ``"per_layer"``), prepared once."""
        if inputs not in self.zoos:
            self.zoos[inputs] = prepare_inputs(self.raw, self.splits, inputs, drop_constant=False)[0]
        return self.zoos[inputs]

    def augment_of(self, name: str) -> Any:
        """The weight-space augmentation of ``name``'s training batches (``None``: none; run_comparison's
        ``augment``); raises ``ValueError`` where it cannot apply."""

        r, kind = self.recipe(name), self.raw.info.get("kind")
        if name in self.augment:
            default = REFERENCE_DEFAULTS if kind in ("inr", "sine") else WEIGHT_NOISE_DEFAULTS
            aug = r.augment if r is not None and r.augment is not None else default
        else:
            aug = r.augment if r is not None and "recipe" in self.augment else None
        if aug is None:
            return None
        if VARIANTS[name].base == "GTH-GMN":
            raise ValueError(f"{name} reads graphs, not weight tensors: weight-space augmentation does not apply")
        if self.inputs_of(name) in ("delta", "rms"):
            raise ValueError(
                f"augmenting {name} needs raw or per-entry standardised inputs; its inputs are {self.inputs_of(name)!r}"
            )
        return for_zoo(aug, kind)  # the coordinate transforms only on INR zoos (the row's augment column says)

    def recipe(self, name: str) -> Any:
        """The reference recipe variant ``name`` trains with (``None``: the shared settings)."""

        return None if self.recipes == "none" else recipe_for(VARIANTS[name].base, self.task)

    def recipe_lr(self, name: str) -> float:
        """The learning rate of ``name``'s recipe at the batch size its runs use (:meth:`recipe_fit`)."""

        return self.recipe_fit(name).lr

    def _ceiling(self, name: str) -> tuple[int, int | None]:
        """``(epochs, steps)``: the ceiling of ``name``'s runs -- the shared one, an ``epoch_caps`` entry, or with
        ``recipes="full"`` the recipe's epochs."""
        r = self.recipe(name)
        if self.recipes == "full" and r is not None:
            return self.epoch_caps.get(name, r.epochs), None
        if name in self.epoch_caps:
            return self.epoch_caps[name], None
        return self.train_cfg.epochs, self.train_cfg.steps

    def recipe_fit(self, name: str) -> RecipeFit:
        """``name``'s reference recipe as its runs use it on this split and ceiling
        (:func:`~hgutils.weightspace.metanets.recipes.fit_recipe_to_run`: the whole split when it is smaller
        than the recipe's batch; a smaller batch, its learning rate by ``lr_scaling``, when the recipe's batch
        leaves the ceiling fewer optimiser steps than ``step_share`` of the shared models'; a warm-up cut to
        ``warmup_share`` of the planned steps)."""
        epochs, steps = self._ceiling(name)
        full = self.recipes == "full"  # the authors' batch and epochs: no rule but a warm-up longer than the run
        return fit_recipe_to_run(
            self.recipe(name),
            len(self.splits.train),
            epochs,
            self.train_cfg.batch_size,
            steps,
            self.lr_scaling,
            0.0 if full else self.step_share,
            1.0 if full else self.warmup_share,
        )

    def train_cfg_of(self, name: str, seed: int, lr: float) -> Any:
        """The loop settings of one run: the shared ones, with the reference recipe's optimiser, batch and
        warm-up as this run uses them (:meth:`recipe_fit`; ``recipes="full"``: its epoch cap too) applied per
        :func:`run_comparison`."""
        cfg = replace(self.train_cfg, seed=seed, lr=lr, augment=self.augment_of(name))
        epochs, steps = self._ceiling(name)
        cfg = replace(cfg, epochs=epochs, steps=steps)
        r = self.recipe(name)
        if r is None:
            return cfg
        fitted = self.recipe_fit(name)
        return replace(
            cfg,
            optimizer=r.optimizer,
            weight_decay=r.weight_decay,
            amsgrad=r.amsgrad,
            warmup_steps=fitted.warmup_steps,
            grad_clip=r.grad_clip,
            batch_size=fitted.batch_size,
        )

    def data_of(self, model: Any, name: str) -> Any:
        """The prepared container of ``model``'s kind (built once, shared by variants of that kind)."""
        cls, snaps, raw = _data_key(model)
        key = (cls, snaps, "graph (raw)" if raw else self.inputs_of(name))
        if key not in self.res.data:
            t0 = time.perf_counter()
            self.res.data[key] = model.prepare(self.raw if raw else self.zoo_for(key[2]))
            self.prep_time[key] = time.perf_counter() - t0
        self.res.data_key[name] = key
        return self.res.data[key]

    def search_lr(
        self, name: str, seed: int, grid: Sequence[float], search_steps: int | None, workers: int = 1
    ) -> dict[float, float]:
        """Validation score of variant ``name`` at each learning rate of ``grid`` (first seed, a
        ``search_steps``-step run each, in ``workers`` forked processes when > 1; cached by zoo
        content, split, model and settings)."""

        def run() -> dict[float, float]:
            tries = [(name, seed, float(lr), search_steps) for lr in grid]
            if workers <= 1 or len(tries) <= 1:
                return dict(zip([t[2] for t in tries], [self.search_one(*t) for t in tries]))
            self.data_of(self.build(name), name)
            return dict(zip([t[2] for t in tries], forked_map(lambda t: self.search_one(*t), tries, workers)))

        key = {
            "zoo": self.fingerprint,
            "task": self.task,
            "variant": name,
            "overrides": self.gth_overrides,
            "split": self.splits.train,
            "val": self.splits.val,
            "cfg": replace(self.train_cfg, seed=0),
            "grid": list(grid),
            "steps": search_steps,
            "seed": seed,
            "augment": self.augment_of(name),
            "version": 2,
        }
        return cached("lr_search", key, run)

    def search_one(self, name: str, seed: int, lr: float, search_steps: int | None) -> float:
        """Best validation score of one learning-rate trial (``-inf`` when it never produced one, or its
        training loss went non-finite: a rate the model cannot take loses the search, it does not end it)."""

        seed_everything(seed)
        model = self.build(name)
        cfg = replace(self.train_cfg, seed=seed, lr=lr, checkpoint_path=None, augment=self.augment_of(name))
        if search_steps:
            cfg = replace(cfg, steps=search_steps)
        sp = self.splits
        data = self.data_of(model, name)
        try:
            fr = fit(model, data, self.target, sp.train, sp.val, None, cfg, desc=f"{name} lr={lr:g}", gate=self.gate)
        except FloatingPointError:
            return float("-inf")
        return float(fr.best_score) if np.isfinite(fr.best_score) and not fr.diverged else float("-inf")

    def _recipe_mode(self, name: str) -> str:
        """The recipe mode and every rule that changed the recipe for this run (:meth:`recipe_fit`'s notes)."""
        return "; ".join([self.recipes, *self.recipe_fit(name).notes])

    def run_key(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """Everything that decides one final run's outcome (the run cache's key): the prepared zoo's
        content, target, split, the variant and its settings, the training configuration this run gets,
        the gate, and the source of the models, the loop and this protocol."""
        sp = self.splits
        return {
            "zoo": self.fingerprint,
            "task": self.task,
            "target": self.target,
            "out_dim": self.out_dim,
            "splits": [sp.train, sp.val, sp.test],
            "model": variant_config(name, self.gth_overrides),  # by configuration: equal variants share a run
            "seed": int(seed),
            "lr": float(lr),
            "keep": bool(keep_outputs),
            "cfg": self.train_cfg_of(name, seed, lr),
            "inputs": self.inputs_of(name),
            "recipe": self._recipe_mode(name) if self.recipe(name) is not None else None,
            "gate": None if self.gate is None else asdict(self.gate),
            "code": _run_code_fingerprint(),
            "version": _RUN_CACHE_VERSION,
        }

    def fit_run(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """:meth:`fit_one`, stored once finished (:func:`hgutils.repro.cached`, under ``comparison_run``):
        a rerun of a stopped or failed comparison reads its finished runs -- row, curves, and for the
        first seed the trained weights and test outputs -- instead of training them again."""
        fresh = []

        def run() -> dict[str, Any]:
            fresh.append(True)
            row = self.fit_one(name, seed, lr, keep_outputs)
            curves = {k: self.res.curves[name + k][seed] for k in ("", " (stage 1)") if name + k in self.res.curves}
            kept = None
            if keep_outputs:
                kept = {"state": self.res.models[name].state_dict(), "outputs": self.res.outputs[name]}
            return {"row": row, "curves": curves, "kept": kept}

        out = cached("comparison_run", self.run_key(name, seed, lr, keep_outputs), run)
        if not fresh:  # read back (maybe a run of an equal variant): what the live run would have left behind
            log.info("%s seed %d: read from the run cache (%s, trained before)", name, seed, out["row"]["model"])
            for suffix, history in out["curves"].items():
                self.res.curves.setdefault(name + suffix, {})[seed] = history
            if out["kept"] is not None:
                model = self.build(name)
                self.data_of(model, name)
                model.load_state_dict(out["kept"]["state"])
                self.res.models[name], self.res.outputs[name] = model.eval(), tuple(out["kept"]["outputs"])
        return {**out["row"], "model": name, "temporal": VARIANTS[name].temporal}

    def fit_one(self, name: str, seed: int, lr: float, keep_outputs: bool) -> dict[str, Any]:
        """Train variant ``name`` with ``seed`` at ``lr`` on the split; returns its results row (and
        keeps curves; the model and test outputs too when ``keep_outputs``)."""

        seed_everything(seed)
        model = self.build(name)
        data = self.data_of(model, name)
        cfg = self.train_cfg_of(name, seed, lr)
        recipe = self.recipe(name)
        c0 = time.process_time()
        sp = self.splits
        try:
            fr = fit(
                model,
                data,
                self.target,
                sp.train,
                sp.val,
                sp.test,
                cfg,
                desc=f"{name} s{seed}",
                gate=self.gate,
                pretrain_cache=self.pretrained,
            )
        except FloatingPointError as exc:  # diverged before any validated epoch: nothing to keep
            raise FloatingPointError(f"{name}, seed {seed}, lr {lr:g}: {exc}") from exc
        gs = fr.gate_summary()
        row: dict[str, Any] = {
            "model": name,
            "seed": seed,
            "temporal": VARIANTS[name].temporal,
            "lr": lr,
            "recipe": "" if recipe is None else f"{recipe.source.split(':')[0]} ({self._recipe_mode(name)})",
            "trained": gs["trained"],
            "gate": gs["reason"],
            "capped": fr.capped,
            "diverged": fr.diverged,
            "stopped": "; ".join(f"{k}: {v}" for k, v in fr.stopped.items()),
            **fr.stage_columns(),
            "batch_size": cfg.batch_size,
            "reference_batch": "" if recipe is None else recipe.batch_size,
            "reference_lr": "" if recipe is None else recipe.lr,
            "warmup_steps": cfg.warmup_steps,
            "reference_warmup": "" if recipe is None else recipe.warmup_steps,
            "planned_steps": planned_steps(len(sp.train), cfg.batch_size, cfg.epochs, cfg.steps),
            "inputs": ("raw" if getattr(model, "reads_raw_weights", False) else self.inputs_of(name))
            + (
                ", statistics standardised on the training split"
                if getattr(model, "feature_norm", "") == "train"
                else ""
            ),
            "augment": "off" if cfg.augment is None else cfg.augment.describe(),
        }
        for part in ("test", "val", "train"):
            for k, v in fr.metrics.get(part, {}).items():
                row[f"{part}_{k}"] = v
        if "test_probe_dim" in row:  # the width the linear probe read (equal for every encoder: PROBE_COMPONENTS)
            row["probe_dim"] = int(row.pop("test_probe_dim"))
        row.update({f"recon_{k}": v for k, v in fr.recon.items()})
        if VARIANTS[name].base == "GTH-GMN":  # which configuration of the selection grid this row ran
            row.update(protocol=model.cfg.protocol, size=model.cfg.size_name())
        row.update(
            best_epoch=fr.best_epoch,
            epochs_run=len(fr.history),
            steps=fr.steps,
            seconds_per_epoch=fr.seconds_per_epoch,
            cpu_seconds=time.process_time() - c0,
            prepare_seconds=self.prep_time[self.res.data_key[name]],
        )
        self.res.curves.setdefault(name, {})[seed] = fr.history
        if fr.pretrain_log is not None:
            self.res.curves.setdefault(f"{name} (stage 1)", {})[seed] = fr.pretrain_log.history
        if keep_outputs:
            self.keep_outputs(name, model, data)
        log.info("%s seed %d: %s", name, seed, {k: v for k, v in row.items() if k.startswith("test_")})
        return row

    def fit_all(self, runs: Sequence[tuple[str, int, float, bool]], workers: int, desc: str) -> list[dict[str, Any]]:
        """Every ``(variant, seed, lr, keep_outputs)`` run, here or in ``workers`` forked processes
        (:func:`run_comparison`); the rows in the order of ``runs``."""
        if workers <= 1 or len(runs) <= 1:
            return [self.fit_run(n, s, lr, keep_outputs=k) for n, s, lr, k in progress(runs, desc=desc)]
        for name in dict.fromkeys(r[0] for r in runs):  # containers built once, before the fork shares them
            self.data_of(self.build(name), name)
        done: dict[tuple[str, int], dict[str, Any]] = {}
        groups = _stage1_groups(runs)
        for results in forked_map(lambda g: _fit_group(self, g), groups, workers, f"{desc} ({workers} workers)"):
            for row, curves, kept in results:
                done[(row["model"], row["seed"])] = row
                for k, c in curves.items():
                    self.res.curves.setdefault(k, {}).update(c)
                if kept is not None:
                    self.res.models[row["model"]], self.res.outputs[row["model"]] = kept
        for k in self.res.curves:  # seeds ascending, as the sequential order leaves them
            self.res.curves[k] = dict(sorted(self.res.curves[k].items()))
        return [done[(n, s)] for n, s, _, _ in runs]

    def keep_outputs(self, name: str, model: Any, data: Any) -> None:
        """The first seed's model and its test outputs (predictions, or InfoNCE embeddings)."""

        test = self.splits.test
        self.res.models[name] = model
        if self.task == "infonce":
            emb = embeddings(model, data, test)
            y = self.target[test] if self.target is not None else torch.zeros(len(test))
            self.res.outputs[name] = (y.numpy(), emb.numpy())
        else:
            out = predict_outputs(model, data, test)
            self.res.outputs[name] = (self.target[test].numpy(), predict(self.task, out).numpy())
