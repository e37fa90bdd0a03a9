"""The dry runs of notebooks 04, 05 and 06: ResNet-18s and genomic CNNs, and the stacked MLPs.

Holds ``dry_04`` (design-rule checks, ResNet-18 of every flavour and ILNN ablation on CIFAR-10 and
CIFAR-100 or their stand-in, the init diagnostics, the genomic CNNs of every task found, the
batch-norm timing and comparison), ``dry_05`` (the rich / lazy sweep, its scores and every ablation)
and ``dry_06`` (the SDF grid, the readout frame and the rotation sweep); and the two probes of a
classifier, :func:`classifier_step` (for :func:`~.step_memory`; also used by
``benchmarks/gpu_check.py``) and ``_classifier_audit`` (for :func:`~.device_audit`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch

from hgutils.experiments import nb04_ilnn_cifar_genomics as nb04
from hgutils.experiments import nb05_msa_rich_vs_lazy as nb05
from hgutils.experiments import nb06_pe_symmetry_readout as nb06
from hgutils.nn.classifier_training import ClassifierTask
from hgutils.nn.genomics import GenomicCNN
from hgutils.nn.resnets import resnet
from hgutils.nn.training_recipes import GENOMICS_RECIPE, VISION_RECIPE
from hgutils.runner.paper_dryrun.core import CUTS, DryRun, _cfg, n_params
from hgutils.symmetry.groups import candidate_elements, rotation_sweep
from hgutils.symmetry.shapes import default_shapes

__all__ = ["classifier_step", "dry_04", "dry_05", "dry_06"]


def _classifier_audit(build: Callable[[], torch.nn.Module], data: Any):
    """``run(device)`` for :func:`~.device_audit`: a classifier's forward, cross-entropy and backward."""

    def run(device: str) -> None:
        torch.manual_seed(0)
        model = build().to(device).train()
        out = model(data.x_train[:2].to(device))
        torch.nn.functional.cross_entropy(out, data.y_train[:2].to(device)).backward()

    return run


def classifier_step(build: Callable[[], torch.nn.Module], data: Any, recipe: Any, device: str):
    """``make_step(b)`` for :func:`~.step_memory`: one :class:`~hgutils.nn.classifier_training.ClassifierTask` step."""

    def make(b: int) -> Callable[[], Any]:
        torch.manual_seed(0)
        x, y = data.x_train[:b], data.y_train[:b]
        t = ClassifierTask(build(), x, y, data.x_test[:2], data.y_test[:2], recipe, device=device)
        return lambda: t.step(torch.arange(len(y)), 0.0)

    return make


def dry_04(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 04: design-rule checks, ResNet-18 (64/128/256/512) of every flavour on CIFAR-10 and
    CIFAR-100 (or the labelled stand-in), every ILNN ablation, the init diagnostics, the genomic CNNs
    (sequence length up to 1000) of every task found, the batch-norm timing and comparison."""
    cfg = _cfg("04", nb04, False)
    dr.measure("04", "design-rule checks", "nb04.design_rule_checks", lambda: nb04.design_rule_checks(seed))
    cifar = {}
    for name in cfg.cifar_datasets:
        d = dr.measure(
            "04",
            f"{name} data",
            "nb04.load_cifar",
            lambda name=name: nb04.load_cifar(cfg, data_dir, seed, dataset=name),
        )
        if d is not None:
            cifar[name] = d
            dr.records[-1]["data"] = d.source
    if cifar:
        first = cifar[cfg.cifar_datasets[0]] if cfg.cifar_datasets[0] in cifar else next(iter(cifar.values()))
        diag_models = {fl: fl for fl in nb04.FLAVOURS}
        diag_models.update(
            {f"ilnn ({a})": f"ilnn:{a}" for a in dict.fromkeys((*cfg.cifar_ablations, "earlier_defaults"))}
        )
        dr.measure(
            "04",
            f"init diagnostics, ResNet-{cfg.depth} x {len(diag_models)}",
            "nb04.init_table",
            lambda: nb04.init_table(cfg, first, seed, diag_models),
            batch=cfg.diag_batch,
        )
        recipe = VISION_RECIPE.scaled(cfg.cifar_epochs, cfg.batch_size, cfg.cifar_lr, cfg.cifar_schedule)
        runs = [(name, fl, None) for name in cifar for fl in nb04.FLAVOURS]
        runs += [(cfg.cifar_datasets[0], "ilnn", a) for a in cfg.cifar_ablations if cfg.cifar_datasets[0] in cifar]
        for name, fl, abl in runs:
            data = cifar[name]

            def build(fl: str = fl, abl: str | None = abl, data: Any = data) -> torch.nn.Module:
                return resnet(fl, cfg.depth, data.num_classes, cfg.widths, options=nb04.lorentz_options(cfg, abl))

            label = f"ResNet-{cfg.depth} {fl}" + (f" ({abl})" if abl else "") + f" on {name}"
            h = dr.measure(
                "04",
                label,
                "nb04.run_cifar",
                lambda fl=fl, abl=abl, data=data: nb04.run_cifar(cfg, data, seed, device, (fl,), abl),
                params=n_params(build()),
                widths=list(cfg.widths),
                images=f"{tuple(data.x_train.shape[1:])}",
                batch=cfg.batch_size,
            )
            if h is not None and abl is None and name == cfg.cifar_datasets[0]:
                dr.step_memory(classifier_step(build, data, recipe, device), cfg.batch_size)
            if h is not None:
                dr.audit(_classifier_audit(build, data))
    # genomics: every task of the preset whose data is here; the paper's one-hot length otherwise on a stand-in
    geno = {}
    for task in cfg.genomics_tasks:
        d = dr.measure(
            "04",
            f"genomics data {task}",
            "nb04.genomics_task",
            lambda task=task: nb04.genomics_task(cfg, task, data_dir, seed),
        )
        if d is not None:
            geno[task] = d
            dr.records[-1]["length"] = int(d.x_train.shape[-1])
    if not any(d.x_train.shape[-1] == cfg.max_len for d in geno.values()):
        standin = dataclasses.replace(cfg, synth_length=cfg.max_len)
        d = dr.measure(
            "04",
            f"genomics data: synthetic at the paper's max_len {cfg.max_len} (stand-in for TEB/GUE)",
            "nb04.genomics_task",
            lambda: nb04.genomics_task(standin, "synthetic", data_dir, seed),
        )
        if d is not None:
            geno[f"synthetic (length {cfg.max_len})"] = d
    grecipe = GENOMICS_RECIPE.scaled(
        cfg.genomics_epochs, cfg.genomics_batch, cfg.genomics_lr, cfg.genomics_schedule, cfg.genomics_wd
    )
    for task, data in geno.items():
        for fl in nb04.FLAVOURS:

            def gbuild(fl: str = fl, data: Any = data) -> GenomicCNN:
                return nb04.genomic_model(cfg, fl, data)

            h = dr.measure(
                "04",
                f"genomic CNN {fl} on {task}",
                "nb04.run_genomics",
                lambda fl=fl, data=data: nb04.run_genomics(cfg, data, seed, device, (fl,)),
                params=n_params(gbuild()),
                length=int(data.x_train.shape[-1]),
                batch=cfg.genomics_batch,
            )
            if h is not None:
                dr.step_memory(classifier_step(gbuild, data, grecipe, device), cfg.genomics_batch)
                dr.audit(_classifier_audit(gbuild, data))
    if geno:
        last = list(geno)[-1]
        dr.measure(
            "04",
            "init diagnostics, genomic CNN",
            "nb04.init_table",
            lambda: nb04.init_table(cfg, geno[last], seed, kind="genomics"),
        )
    dr.measure(
        "04",
        f"batch-norm timing ({cfg.bn_points} x {cfg.bn_dim + 1})",
        "nb04.bn_timing",
        lambda: nb04.bn_timing(cfg, seed),
    )
    bn_data = geno.get(cfg.bn_task) or next(iter(geno.values()), None)
    if bn_data is not None:
        dr.measure(
            "04",
            f"batch-norm comparison ({'bn_task' if cfg.bn_task in geno else 'stand-in task'})",
            "nb04.bn_comparison",
            lambda: nb04.bn_comparison(cfg, bn_data, seed, device),
        )


# --------------------------------------------------------------------------------------------
# notebooks 05 and 06: stacked MLPs
# --------------------------------------------------------------------------------------------
def dry_05(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 05: the rich / lazy sweep (2 -> 256 -> 256 -> K tanh MLPs, K in {2, 5}) with the
    similarity matrices at the paper's 2,000 held-out points and 64 x 64 grid, then every ablation."""
    cfg = _cfg("05", nb05, False)
    exp = dr.measure(
        "05",
        "protocol sweep + similarity matrices",
        "nb05.run_experiment",
        lambda: nb05.run_experiment(cfg, seed),
        hidden=cfg.hidden,
        depth=cfg.depth,
        heldout=cfg.n_heldout,
        grid=cfg.grid,
    )
    if exp is not None:
        dr.measure(
            "05",
            "scores and seed jackknife",
            "nb05.score_measures + jackknife_scores",
            lambda: (nb05.score_measures(exp["mats"], exp["meta"]), nb05.jackknife_scores(exp["mats"], exp["meta"])),
        )
    for name in cfg.ablations:
        c = dataclasses.replace(nb05.ablation_config(cfg, name), **CUTS["05 ablations"])
        dr.measure(
            "05", f"ablation: {name}", "nb05.run_experiment", lambda c=c: nb05.run_experiment(c, seed), depth=c.depth
        )


def dry_06(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 06: the whole SDF grid (main + factor cells) at the paper's pool (262,144 points),
    batch 2,048 and 8,192 evaluation points, then the readout frame and the 720-step rotation sweep."""
    cfg = _cfg("06", nb06, False)
    shapes, encodings = default_shapes(), nb06.make_encodings(cfg)
    grid = dr.measure(
        "06",
        "SDF grid (every network stacked)",
        "nb06.train_grid",
        lambda: nb06.train_grid(cfg, seed=seed, shapes=shapes, encodings=encodings, device=device),
        hidden=cfg.hidden,
        depth=cfg.depth,
        pool=cfg.n_points,
        batch=cfg.batch,
    )
    if grid is None:
        return
    dr.records[-1]["networks"] = int(len(grid.meta))
    dr.audit(lambda d: nb06.train_grid(cfg, seed=seed, shapes=shapes, encodings=encodings, device=d))
    dr.measure("06", "readout frame", "nb06.readout_frame", lambda: nb06.readout_frame(grid, candidate_elements()))
    dr.measure(
        "06",
        f"rotation sweep ({cfg.sweep_num} angles)",
        "nb06.sweep_frame",
        lambda: nb06.sweep_frame(
            grid.cell(cfg.domain, cfg.weight_decay), rotation_sweep(cfg.sweep_num), "prefix1", "frobenius"
        ),
    )
