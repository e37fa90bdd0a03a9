"""Paper-preset dry run of every notebook: the paper's sizes, a handful of networks and one step.

No notebook's ``paper`` preset has run end to end on a GPU yet. This module takes each notebook's
``CONFIG.from_scale("paper", **CUTS[nb])`` -- the paper preset with only the *counts* cut (networks,
images, seeds, optimiser steps, epochs, repetitions; :data:`CUTS` lists every override and why) -- and
drives it through the same library entry points the notebook calls, so that a shape error, a dtype
or device slip or a memory blow-up at the paper's widths, depths, snapshot counts T, image sizes,
sequence lengths and batch sizes shows up here, on the CPU, before the first GPU run.

Every model (each meta-network variant of notebooks 01-03, each ResNet-18 flavour and ablation and
each genomic CNN of 04, each stacked MLP sweep of 05 and the SDF grid of 06, and each zoo generator)
is one record of the ledger (:func:`run_dryrun` writes ``dryrun.json`` and ``DRYRUN.md``): what ran,
its parameter count, wall and CPU seconds, status (``ok``; ``error`` with the exception;
``skipped`` with the reason, e.g. a dataset that is not on this machine; ``over memory cap``, a call
stopped by :func:`memory_cap`) and its peak memory (:class:`hgutils.memory.PeakMemory`: the
process's peak RSS during the call; with ``track_tensors`` also the live tensor storages). For the
models whose memory grows with the batch (meta-networks, ResNets, genomic CNNs) one training step
(forward, loss, backward, optimiser) is also measured by its live tensor bytes at two small batches
and extrapolated to the paper's batch (:func:`step_memory`, ``step_mib@paper_batch``): the figure to
hold against a GPU's memory.

Device placement (``device="cuda"`` through papermill) cannot be exercised without a GPU, but the
``meta`` device stands in for it: :func:`device_audit` moves each model and its batch there and
runs its training objective and backward, which fails where a tensor created on the CPU would meet
a GPU tensor (``device_audit``: ``ok``, ``slip: ...`` -- an error of the run -- or ``partial: ...``
where an operator needing data, such as ``.item()``, stopped it; everything before was checked).

Deviations from the paper preset other than counts are named in :data:`CUTS` (``compile`` off:
``torch.compile`` takes minutes on a shared 2-core CPU and changes no shape; ``--compile`` keeps it).

Command line (the CI step ``make dryrun``)::

    python -m hgutils.experiments.paper_dryrun --out results/runs/paper_dryrun [--only 01,04] [--device cpu]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from hgutils.memory import PeakMemory, mib

log = logging.getLogger("hgutils")

__all__ = [
    "CUTS",
    "NOTEBOOKS",
    "OVER_CAP",
    "DryRun",
    "classifier_step",
    "device_audit",
    "dryrun_notebook",
    "main",
    "memory_cap",
    "metanet_step",
    "run_dryrun",
    "step_memory",
]

#: The notebooks the dry run covers, by number.
NOTEBOOKS: tuple[str, ...] = ("01", "02", "03", "04", "05", "06", "07")

#: Count overrides applied to each notebook's paper preset (everything else stays the paper's).
#: 01 fits its INRs for T - 1 steps so that T = 100 snapshots are still distinct steps; 02 likewise
#: for T = 80 and 07 its 13-layer INRs for T = 100; 03's zoo keeps the Small CNN Zoo's 86-epoch
#: checkpoint schedule at one step per epoch.
#: ``lr_grid=()`` skips the learning-rate search (it is more fit() calls of the same models). 02 trains
#: two seeds (its claims compare spreads over seeds), 05 three (the seed jackknife needs three); 05's
#: ablations run the protocol's similarity code at fewer reference points (``"05 ablations"``).
CUTS: dict[str, dict[str, Any]] = {
    "01": {
        "n_images": 8,
        "inr_steps": 99,
        "n_seeds": 1,
        "ablation_seeds": 1,
        "steps": 1,
        "lr_grid": (),
        "refine_steps": 1,
        "compile": False,
        "ceiling_networks": 1,
        "ceiling_steps": 2,
        "curve_sizes": (2, 4),
    },
    "02": {
        "n_nets": 8,
        "fit_epochs": 79,
        "n_seeds": 2,
        "steps": 1,
        "lr_grid": (),
        "refine_steps": 1,
        "compile": False,
    },
    "03": {"n_nets": 8, "zoo_steps": 86, "n_seeds": 1, "steps": 1, "lr_grid": (), "refine_steps": 1, "compile": False},
    "03 zoo pool": {"n_train": 2000, "n_test": 500},  # only where the dataset is a stand-in (fewer images)
    "04": {
        "cifar_train": 20,
        "cifar_test": 10,
        "cifar_epochs": 1,
        "diag_batch": 4,
        "synth_variants": 4,
        "genomics_train_limit": 16,
        "genomics_val_limit": 8,
        "genomics_test_limit": 8,
        "genomics_epochs": 1,
        "bn_reps": 1,
        "n_seeds": 1,
    },
    "05": {"n_seeds": 3, "max_steps": 2},
    "05 ablations": {"n_heldout": 200, "grid": 16},
    "06": {"n_seeds": 1, "steps": 2},
    "07": {
        "n_inrs": 6,
        "n_train": 2,
        "n_val": 2,
        "inr_steps": 99,
        "epochs": 1,
        "batch": 2,
        "refine_steps": 1,
        "compile": False,
    },
}
#: status of a call whose allocation was refused under the dry run's memory cap
OVER_CAP = "over memory cap"
#: the two batch sizes of the per-step memory measurement (extrapolated linearly to the paper's batch)
STEP_BATCHES: tuple[int, int] = (2, 4)


# --------------------------------------------------------------------------------------------
# records
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass
class DryRun:
    """The ledger of one dry run: one record (a dict) per model or generator, in the order run."""

    device: str = "cpu"
    track_tensors: bool = False
    max_gib: float | None = 4.0  # address-space cap per call above the process's size (None: no cap)
    records: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    seconds: float = math.nan  # wall time of the whole run (set by run_dryrun)

    def audit(self, run: Callable[[str], Any]) -> None:
        """Add :func:`device_audit` of the last record's model to that record; a slip is an error."""
        rec = self.records[-1]
        rec["device_audit"] = found = device_audit(run)
        if found.startswith("slip") and rec.get("status") == "ok":
            rec["status"], rec["error"] = "error", f"device slip (meta audit): {found[6:]}"

    def step_memory(self, make_step: Callable[[int], Callable[[], Any]], paper_batch: int) -> None:
        """Add :func:`step_memory` of the last record's model to that record (under the memory cap;
        an allocation refused there or an error is recorded on it)."""
        rec = self.records[-1]
        try:
            with memory_cap(None if self.device != "cpu" else self.max_gib):
                rec.update(step_memory(make_step, paper_batch, device=self.device))
        except Exception as err:  # noqa: BLE001 - recorded
            msg = f"training step: {type(err).__name__}: {err}".splitlines()[0][:300]
            if _refused_allocation(err):
                rec["status"], rec["reason"] = OVER_CAP, f"needs more than the {self.max_gib:g} GiB cap: {msg}"
            else:
                rec["status"], rec["error"], rec["traceback"] = "error", msg, traceback.format_exc(limit=-6)

    def measure(self, notebook: str, model: str, call: str, fn: Callable[[], Any], **info: Any) -> Any:
        """Run ``fn()`` under :class:`~hgutils.memory.PeakMemory` (and the memory cap) and append its record.

        A missing dataset (``FileNotFoundError``, which the loaders' ``DataNotFoundError`` is) is
        recorded as ``skipped``; an allocation refused under the cap (:func:`memory_cap`) as
        ``over memory cap`` with the size asked for (a finding to check on the GPU, not a failure of
        the code); any other exception as ``error`` with its message and traceback. The value of
        ``fn()`` is returned (``None`` when it did not complete).
        """
        rec: dict[str, Any] = {"notebook": notebook, "model": model, "call": call, **info}
        t0, c0 = time.perf_counter(), time.process_time()
        out = None
        with PeakMemory(self.device, track_tensors=self.track_tensors) as pm:
            try:
                with memory_cap(None if self.device != "cpu" else self.max_gib):
                    out = fn()
                rec["status"] = "ok"
            except FileNotFoundError as err:
                rec["status"] = "skipped"
                rec["reason"] = f"no copy of the data here ({type(err).__name__}: {str(err).splitlines()[0][:160]})"
            except Exception as err:  # noqa: BLE001 - the ledger records every failure
                msg = f"{type(err).__name__}: {err}".splitlines()[0][:300]
                if _refused_allocation(err):
                    rec["status"] = OVER_CAP
                    rec["reason"] = f"needs more than the dry run's {self.max_gib:g} GiB cap: {msg}"
                else:
                    rec["status"] = "error"
                    rec["error"] = msg
                    rec["traceback"] = traceback.format_exc(limit=-6)
                log.warning("dry run %s %s: %s", notebook, model, msg)
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        rec["cpu_seconds"] = round(time.process_time() - c0, 2)
        rec.update(pm.as_dict())
        self.records.append(rec)
        return out

    def skip(self, notebook: str, model: str, reason: str, **info: Any) -> None:
        """Record a model the paper preset does not run here, with the reason."""
        self.records.append({"notebook": notebook, "model": model, "status": "skipped", "reason": reason, **info})

    def frame(self) -> pd.DataFrame:
        """One row per record: notebook, model, status, seconds, parameters, memory figures."""
        cols = [
            "notebook",
            "model",
            "status",
            "seconds",
            "cpu_seconds",
            "params",
            "rss_peak_mib",
            "tensor_peak_mib",
            "step_mib",
            "paper_batch",
            "step_mib@paper_batch",
            "device_audit",
        ]
        df = pd.DataFrame(self.records)
        if not len(df):
            return df
        df = df[[c for c in cols if c in df and df[c].notna().any()]].copy()
        for c in ("params", "paper_batch"):
            if c in df:
                df[c] = df[c].astype("Int64")
        if "step_mib" in df:
            df["step_mib"] = df["step_mib"].map(
                lambda v: ", ".join(f"b={k}: {x}" for k, x in v.items()) if isinstance(v, dict) else None
            )
        return df

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Records whose call raised (a slip in the code path)."""
        return [r for r in self.records if r.get("status") == "error"]

    @property
    def over_cap(self) -> list[dict[str, Any]]:
        """Records whose call needed more memory than the cap (to be measured on a GPU)."""
        return [r for r in self.records if r.get("status") == OVER_CAP]


@contextlib.contextmanager
def memory_cap(gib: float | None) -> Iterator[None]:
    """Cap the process's address space at its current size + ``gib`` GiB for the block (Linux
    ``RLIMIT_AS``; nothing elsewhere or with ``None``): an allocation beyond it raises inside the
    block (torch: ``RuntimeError ... can't allocate memory``; Python/numpy: ``MemoryError``)
    instead of driving a shared machine into swap or the kernel's OOM killer."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not Linux
        resource = None  # type: ignore[assignment]
    size_kib = _vm_size_kib()
    if gib is None or resource is None or size_kib is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size_kib * 1024 + int(gib * 2**30)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _vm_size_kib() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _refused_allocation(err: BaseException) -> bool:
    """Whether ``err`` (or its cause) is an allocation the memory cap refused."""
    while err is not None:
        text = str(err)
        if isinstance(err, MemoryError) or "can't allocate memory" in text or "Unable to allocate" in text:
            return True
        err = err.__cause__ or err.__context__  # type: ignore[assignment]
    return False


def n_params(model: torch.nn.Module) -> int:
    """Number of parameters of ``model`` (manifold parameters included)."""
    return int(sum(p.numel() for p in model.parameters()))


def step_memory(
    make_step: Callable[[int], Callable[[], Any]],
    paper_batch: int,
    batches: tuple[int, int] = STEP_BATCHES,
    device: str = "cpu",
) -> dict[str, Any]:
    """Tensor memory of one training step at two batch sizes, extrapolated to ``paper_batch``.

    ``make_step(b)`` builds what a step needs for a batch of ``b`` (model, optimiser, batch) and
    returns the step; only the step is measured (:class:`~hgutils.memory.PeakMemory` with tensor
    tracking: activations, gradients, optimiser state and temporaries created in it).

    The step runs the same operators at both batches, and the live bytes after each operator are
    linear in the batch (every tensor is ``a + b k`` bytes), so the live bytes at ``B`` after operator
    ``i`` are ``L1[i] + (L2[i] - L1[i]) (B - b1) / (b2 - b1)``, and the projected peak is their
    maximum. Extrapolating the two peaks instead would be wrong: at small batches the peak sits
    where the gradients or the optimiser's update are alive (batch-independent), at large batches
    where the activations are. Where the two runs' operator sequences differ (data-dependent
    control flow) the two peaks are extrapolated and ``step_projection`` says so. On CUDA only the
    peaks are measured (``torch.cuda.max_memory_allocated``).
    """
    peaks, lines = {}, {}
    for b in batches:
        step = make_step(b)
        with PeakMemory(device, track_tensors=True, timeline=True) as pm:
            step()
        peaks[b], lines[b] = pm.tensor_peak_bytes or 0, pm.timeline
    b1, b2 = batches
    k = (paper_batch - b1) / (b2 - b1)
    l1, l2 = lines[b1], lines[b2]
    if l1 is not None and l2 is not None and len(l1) == len(l2) and l1:
        proj, how = max(x + (y - x) * k for x, y in zip(l1, l2)), "per-operator live bytes, linear in the batch"
    else:
        proj, how = peaks[b1] + (peaks[b2] - peaks[b1]) * k, "the two peaks, linear in the batch"
    return {
        "step_mib": {str(b): mib(v) for b, v in peaks.items()},
        "paper_batch": int(paper_batch),
        "step_mib@paper_batch": mib(max(proj, peaks[b2])),
        "step_projection": how,
    }


#: substrings of the errors torch raises when tensors of two devices meet (CUDA and meta alike)
_DEVICE_SLIP = ("is not on the expected device", "same device", "Expected all tensors to be on the same device")


def device_audit(run: Callable[[str], Any]) -> str:
    """Run ``run("meta")`` -- a forward, loss and backward with the model and its batch moved to the
    ``meta`` device -- and say whether a tensor created on the CPU met them.

    ``meta`` tensors have shapes but no data, and torch refuses to mix them with CPU tensors exactly
    where it refuses to mix CUDA and CPU tensors (a CPU vector in an operator with device tensors; a
    0-dim CPU scalar or a CPU index for advanced indexing is allowed on both), so a model that
    creates a tensor without ``device=`` in its forward or backward fails here as it would on a GPU.
    Returns ``"ok"``, ``"slip: <message>"``, or ``"partial: <message>"`` when the run stopped at an
    operator that needs data (``.item()``, ``nonzero``, boolean masks), which ``meta`` cannot run:
    everything before it was checked.
    """
    try:
        run("meta")
    except Exception as err:  # noqa: BLE001 - classified below
        msg = f"{type(err).__name__}: {err}".splitlines()[0][:240]
        if any(k in str(err) for k in _DEVICE_SLIP):
            return f"slip: {msg}"
        return f"partial: {msg}"
    return "ok"


def _metanet_audit(name: str, zoo: Any, splits: Any, task: str, target: Any, out_dim: int, cfg: Any):
    """``run(device)`` for :func:`device_audit`: variant ``name``'s training objective(s) and
    backward on two networks (GTH-GMN: the stage-1 reconstruction terms and the head's task loss)."""
    from hgutils.experiments import weightspace_protocol as cmp
    from hgutils.weightspace.metanets.base import to_device

    rs = cfg.run_settings("cpu")
    prepared, _ = cmp.prepare_inputs(zoo, splits, cfg.inputs)

    def run(device: str) -> None:
        torch.manual_seed(0)
        model = cmp.build_variant(name, prepared, task, out_dim, rs.gth_overrides)
        data = model.prepare(prepared)
        idx = torch.arange(2)
        model.to(device).train()
        gen = torch.Generator().manual_seed(0)
        batch = to_device(model.train_transform(data[idx], gen), device)
        y = None if target is None else target[idx].to(device)
        terms = []
        if hasattr(model, "pretrain_terms"):
            terms.append(model.pretrain_terms(batch, 0.0, gen))
        terms.append(model.loss_terms(batch, y, 0.0, gen))
        loss = sum(v.float().sum() for t in terms for v in t.values())
        loss.backward()

    return run


def _classifier_audit(build: Callable[[], torch.nn.Module], data: Any):
    """``run(device)`` for :func:`device_audit`: a classifier's forward, cross-entropy and backward."""

    def run(device: str) -> None:
        torch.manual_seed(0)
        model = build().to(device).train()
        out = model(data.x_train[:2].to(device))
        torch.nn.functional.cross_entropy(out, data.y_train[:2].to(device)).backward()

    return run


def _cfg(notebook: str, module: Any, compile_: bool, extra: dict[str, Any] | None = None) -> Any:
    cuts = dict(CUTS[notebook])
    if compile_ and "compile" in cuts:
        cuts.pop("compile")
    cuts.update(extra or {})
    return module.CONFIG.from_scale("paper", **cuts)


# --------------------------------------------------------------------------------------------
# notebooks 01-03: the weight-space comparison (one run_comparison per variant)
# --------------------------------------------------------------------------------------------
def metanet_step(name: str, zoo: Any, splits: Any, task: str, target: Any, out_dim: int, cfg: Any, device: str):
    """``make_step(b)`` for :func:`step_memory`: variant ``name``'s first training stage on ``b`` networks."""
    from hgutils.experiments import weightspace_protocol as cmp
    from hgutils.weightspace.tasks import MetaNetTask, ReconstructionTask

    rs = cfg.run_settings(device)
    prepared, _ = cmp.prepare_inputs(zoo, splits, cfg.inputs)

    def make(b: int) -> Callable[[], Any]:
        torch.manual_seed(0)
        model = cmp.build_variant(name, prepared, task, out_dim, rs.gth_overrides)
        data = model.prepare(prepared)
        protocol = getattr(getattr(model, "cfg", None), "protocol", "joint")
        cls = ReconstructionTask if protocol in ("two_stage", "finetune") else MetaNetTask
        idx = torch.arange(b)
        t = cls(model, data, target, idx, idx, dataclasses.replace(rs.train_cfg, batch_size=b))
        return lambda: t.step(idx, 0.0)

    return make


def _comparison(
    dr: DryRun,
    nb: str,
    zoo: Any,
    task: str,
    target: Any,
    out_dim: int,
    variants: Sequence[str],
    splits: Any,
    cfg: Any,
    seed: int,
    device: str,
) -> Any:
    """Every variant through :func:`~hgutils.experiments.weightspace_protocol.run_comparison` (one call each),
    with its training-step memory; returns the merged :class:`ComparisonResult` (``None`` if none ran)."""
    from hgutils.experiments import weightspace_protocol as cmp

    rs = cfg.run_settings(device)
    tables, models, data, keys = [], {}, {}, {}
    prepared, _ = cmp.prepare_inputs(zoo, splits, cfg.inputs)
    for name in variants:
        info: dict[str, Any] = {"T": int(zoo.T), "networks": int(len(zoo)), "batch": int(cfg.batch_size)}

        extra: dict[str, Any] = {}

        def call(name: str = name, extra: dict[str, Any] = extra) -> Any:
            # built (and counted) inside the measured call: a model too big for the cap is a finding too
            extra["params"] = n_params(cmp.build_variant(name, prepared, task, out_dim, rs.gth_overrides))
            seeds = [seed + i for i in range(cfg.n_seeds)]
            return cmp.run_comparison(zoo, task, target, out_dim, [name], splits, seeds, rs, desc=f"{nb} {name}")

        run = dr.measure(nb, name, "comparison.run_comparison", call, **info)
        dr.records[-1].update(extra)
        if run is None:
            continue
        dr.step_memory(metanet_step(name, zoo, splits, task, target, out_dim, cfg, device), cfg.batch_size)
        dr.audit(_metanet_audit(name, zoo, splits, task, target, out_dim, cfg))
        tables.append(run.table)
        models.update(run.models)
        data.update(run.data)
        keys.update(run.data_key)
    if not tables:
        return None
    return cmp.ComparisonResult(pd.concat(tables, ignore_index=True), splits, models, data, data_key=keys)


def _ledger(dr: DryRun, nb: str, fn: Callable[[Any], None], out: Path | None) -> None:
    """The notebook's claims code at ``scale="paper"`` on the dry-run results, saved under ``out/<nb>``
    (it checks that the paper-only branches run; the verdicts of a one-step run mean nothing)."""
    from hgutils.ledger import Claims

    def run() -> int:
        claims = Claims(f"{nb}_paper_dryrun", "paper")
        fn(claims)
        if out is not None:
            claims.save(out / nb)
        return len(claims.rows)

    n = dr.measure(nb, "claims ledger (paper branches)", "Claims at scale='paper'", run)
    if n is not None:
        dr.records[-1]["claims"] = n


def dry_01(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 01: the INR zoos (one SIREN per image, T = 100, one initialisation per INR) and every
    variant and ablation on a 4 / 2 / 2 split, then the link ceilings and the claims."""
    from hgutils.experiments import nb01_inr_classification as ex
    from hgutils.experiments import weightspace_protocol as cmp

    cfg = _cfg("01", ex, kw.get("compile_", False))
    zoos = {}
    for ds in cfg.datasets:
        z = dr.measure(
            "01",
            f"INR zoo {ds}",
            "nb01.inr_zoo",
            lambda ds=ds: ex.inr_zoo(ds, cfg, scale="paper", data_dir=data_dir, seed=seed, device=device),
            T=cfg.T,
            networks=cfg.n_images,
            shared_init=cfg.shared_init,
        )
        if z is not None:
            zoos[ds] = z
            dr.audit(lambda d, ds=ds: ex.inr_zoo(ds, cfg, scale="paper", data_dir=data_dir, seed=seed, device=d))
    if not zoos:
        return
    ds0, zoo = next(iter(zoos.items()))
    labels = zoo.meta["label"]
    n = len(zoo)
    # make_splits is class-stratified and needs >= 80 INRs at the paper's fractions: fixed parts instead
    splits = cmp.Splits(torch.arange(n // 2), torch.arange(n // 2, 3 * n // 4), torch.arange(3 * n // 4, n))
    variants = list(dict.fromkeys((*cfg.variants, *cfg.ablation_variants, *cfg.side_variants)))
    run = _comparison(dr, "01", zoo, "classification", labels, 10, variants, splits, cfg, seed, device)
    if cfg.shared_images > 0:
        dr.skip("01", "shared-initialisation zoo", "counts only (its code path is the zoo above with one init)")
    else:
        dr.skip(
            "01", "shared-initialisation zoo", "shared_images = 0 in the paper preset (not run, as in the notebook)"
        )
    dr.measure(
        "01",
        "zoo-size learning curve",
        "nb01.learning_curve",
        lambda: ex.learning_curve(
            zoo, labels, splits, cfg.curve_sizes, cfg.curve_variants, [seed], cfg.run_settings(device)
        ),
    )
    if run is None or "GTH-GMN" not in run.models:
        return
    graphs = run.data_for("GTH-GMN")
    dr.measure(
        "01", "link ceilings", "nb01.link_ceilings", lambda: ex.link_ceilings(graphs, splits.val[:1], cfg.gth_dim, 2)
    )

    def ledger(claims: Any) -> None:
        for d in ex.INR_PAPER_KEYS:
            ex.inr_claims(claims, d, run if d == ds0 else None, "paper")

    _ledger(dr, "01", ledger, kw.get("out"))


def dry_02(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 02: the sine zoo (T = 80) and every encoder (InfoNCE, batch 512) on one split."""
    from hgutils.experiments import nb02_sine_regression as ex
    from hgutils.experiments import weightspace_protocol as cmp

    cfg = _cfg("02", ex, kw.get("compile_", False))
    zoo = dr.measure(
        "02",
        "sine zoo",
        "nb02.sine_inr_zoo",
        lambda: ex.sine_inr_zoo(cfg, scale="paper", seed=seed, device=device),
        T=cfg.T,
        networks=cfg.n_nets,
    )
    if zoo is None:
        return
    dr.audit(lambda d: ex.sine_inr_zoo(cfg, scale="paper", seed=seed, device=d))
    splits = cmp.make_splits(len(zoo), cfg.val_fraction, cfg.test_fraction, seed=cfg.split_seed)
    run = _comparison(
        dr, "02", zoo, "infonce", zoo.meta["target"], cfg.emb_dim, cfg.variants, splits, cfg, seed, device
    )
    if run is not None and len(run.table["model"].unique()) == len(cfg.variants):
        _ledger(dr, "02", lambda claims: ex.sine_claims(claims, run, judge=True), kw.get("out"))


def dry_03(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 03: the MLP classifier zoo (T = 9 at the Small CNN Zoo's epochs) and every model."""
    from hgutils.experiments import nb03_cifar_generalization as ex
    from hgutils.experiments import weightspace_protocol as cmp

    cfg = _cfg("03", ex, kw.get("compile_", False))
    dataset, note = ex.resolve_generalization_dataset(cfg, data_dir)
    info = {"T": cfg.T, "networks": cfg.n_nets, "data": note}
    zoo = dr.measure(
        "03",
        f"classifier zoo ({dataset})",
        "nb03.classifier_zoo_for",
        lambda: ex.classifier_zoo_for(dataset, cfg, scale="paper", data_dir=data_dir, seed=seed),
        **info,
    )
    if zoo is None and "requested" in dr.records[-1].get("error", ""):
        # the paper's image pool (50,000 / 10,000) needs the real dataset: a stand-in has fewer images.
        # That is the preset's contract, not a slip: record it, then run the zoo with the pool cut.
        rec = dr.records[-1]
        rec.update(status="skipped", reason=f"the paper's image pool needs the full dataset: {rec.pop('error')}")
        rec.pop("traceback", None)
        from hgutils.weightspace.zoo import ClassifierZooConfig, classifier_zoo

        pool = ClassifierZooConfig.from_scale("paper", **CUTS["03 zoo pool"])
        zoo = dr.measure(
            "03",
            f"classifier zoo ({dataset}, image pool {pool.n_train} / {pool.n_test})",
            "zoo.classifier_zoo (nb03.classifier_zoo_for's arguments)",
            lambda: classifier_zoo(
                dataset,
                scale="paper",
                data_dir=data_dir,
                arch="mlp",
                n_nets=cfg.n_nets,
                T=cfg.T,
                steps=cfg.zoo_steps,
                schedule="cnn_zoo" if cfg.T == 9 else "uniform",  # as nb03.classifier_zoo_for
                seed=seed,
                **CUTS["03 zoo pool"],
            ),
            image_size=pool.image_size,
            **info,
        )
    if zoo is None:
        return
    acc = zoo.meta["test_acc"]
    splits = cmp.make_splits(len(zoo), cfg.val_fraction, cfg.test_fraction, seed=cfg.split_seed)
    run = _comparison(dr, "03", zoo, "accuracy", acc, 1, cfg.variants, splits, cfg, seed, device)
    if run is not None and len(run.table["model"].unique()) == len(cfg.variants):
        _ledger(dr, "03", lambda claims: ex.cifar_claims(claims, run, dataset, judge=True), kw.get("out"))


# --------------------------------------------------------------------------------------------
# notebook 04: ResNet-18 flavours and ablations, genomic CNNs, batch norms
# --------------------------------------------------------------------------------------------
def classifier_step(build: Callable[[], torch.nn.Module], data: Any, recipe: Any, device: str):
    """``make_step(b)`` for :func:`step_memory`: one :class:`~hgutils.nn.fitting.ClassifierTask` step."""
    from hgutils.nn.fitting import ClassifierTask

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
    from hgutils.experiments import nb04_ilnn_cifar_genomics as ex
    from hgutils.nn.fitting import GENOMICS_RECIPE, VISION_RECIPE
    from hgutils.nn.genomics import GenomicCNN
    from hgutils.nn.resnets import resnet

    cfg = _cfg("04", ex, False)
    dr.measure("04", "design-rule checks", "nb04.design_rule_checks", lambda: ex.design_rule_checks(seed))
    cifar = {}
    for name in cfg.cifar_datasets:
        d = dr.measure(
            "04", f"{name} data", "nb04.load_cifar", lambda name=name: ex.load_cifar(cfg, data_dir, seed, dataset=name)
        )
        if d is not None:
            cifar[name] = d
            dr.records[-1]["data"] = d.source
    if cifar:
        first = cifar[cfg.cifar_datasets[0]] if cfg.cifar_datasets[0] in cifar else next(iter(cifar.values()))
        diag_models = {fl: fl for fl in ex.FLAVOURS}
        diag_models.update(
            {f"ilnn ({a})": f"ilnn:{a}" for a in dict.fromkeys((*cfg.cifar_ablations, "earlier_defaults"))}
        )
        dr.measure(
            "04",
            f"init diagnostics, ResNet-{cfg.depth} x {len(diag_models)}",
            "nb04.init_table",
            lambda: ex.init_table(cfg, first, seed, diag_models),
            batch=cfg.diag_batch,
        )
        recipe = VISION_RECIPE.scaled(cfg.cifar_epochs, cfg.batch_size, cfg.cifar_lr, cfg.cifar_schedule)
        runs = [(name, fl, None) for name in cifar for fl in ex.FLAVOURS]
        runs += [(cfg.cifar_datasets[0], "ilnn", a) for a in cfg.cifar_ablations if cfg.cifar_datasets[0] in cifar]
        for name, fl, abl in runs:
            data = cifar[name]

            def build(fl: str = fl, abl: str | None = abl, data: Any = data) -> torch.nn.Module:
                return resnet(fl, cfg.depth, data.num_classes, cfg.widths, options=ex.lorentz_options(cfg, abl))

            label = f"ResNet-{cfg.depth} {fl}" + (f" ({abl})" if abl else "") + f" on {name}"
            h = dr.measure(
                "04",
                label,
                "nb04.run_cifar",
                lambda fl=fl, abl=abl, data=data: ex.run_cifar(cfg, data, seed, device, (fl,), abl),
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
            lambda task=task: ex.genomics_task(cfg, task, data_dir, seed),
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
            lambda: ex.genomics_task(standin, "synthetic", data_dir, seed),
        )
        if d is not None:
            geno[f"synthetic (length {cfg.max_len})"] = d
    grecipe = GENOMICS_RECIPE.scaled(
        cfg.genomics_epochs, cfg.genomics_batch, cfg.genomics_lr, cfg.genomics_schedule, cfg.genomics_wd
    )
    for task, data in geno.items():
        for fl in ex.FLAVOURS:

            def gbuild(fl: str = fl, data: Any = data) -> GenomicCNN:
                return ex.genomic_model(cfg, fl, data)

            h = dr.measure(
                "04",
                f"genomic CNN {fl} on {task}",
                "nb04.run_genomics",
                lambda fl=fl, data=data: ex.run_genomics(cfg, data, seed, device, (fl,)),
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
            lambda: ex.init_table(cfg, geno[last], seed, kind="genomics"),
        )
    dr.measure(
        "04",
        f"batch-norm timing ({cfg.bn_points} x {cfg.bn_dim + 1})",
        "nb04.bn_timing",
        lambda: ex.bn_timing(cfg, seed),
    )
    bn_data = geno.get(cfg.bn_task) or next(iter(geno.values()), None)
    if bn_data is not None:
        dr.measure(
            "04",
            f"batch-norm comparison ({'bn_task' if cfg.bn_task in geno else 'stand-in task'})",
            "nb04.bn_comparison",
            lambda: ex.bn_comparison(cfg, bn_data, seed, device),
        )


# --------------------------------------------------------------------------------------------
# notebooks 05 and 06: stacked MLPs
# --------------------------------------------------------------------------------------------
def dry_05(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 05: the rich / lazy sweep (2 -> 256 -> 256 -> K tanh MLPs, K in {2, 5}) with the
    similarity matrices at the paper's 2,000 held-out points and 64 x 64 grid, then every ablation."""
    from hgutils.experiments import nb05_msa_rich_vs_lazy as ex

    cfg = _cfg("05", ex, False)
    exp = dr.measure(
        "05",
        "protocol sweep + similarity matrices",
        "nb05.run_experiment",
        lambda: ex.run_experiment(cfg, seed),
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
            lambda: (ex.score_measures(exp["mats"], exp["meta"]), ex.jackknife_scores(exp["mats"], exp["meta"])),
        )
    for name in cfg.ablations:
        c = dataclasses.replace(ex.ablation_config(cfg, name), **CUTS["05 ablations"])
        dr.measure(
            "05", f"ablation: {name}", "nb05.run_experiment", lambda c=c: ex.run_experiment(c, seed), depth=c.depth
        )


def dry_06(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 06: the whole SDF grid (main + factor cells) at the paper's pool (262,144 points),
    batch 2,048 and 8,192 evaluation points, then the readout frame and the 720-step rotation sweep."""
    from hgutils.experiments import nb06_pe_symmetry_readout as ex
    from hgutils.symmetry.groups import candidate_elements, rotation_sweep
    from hgutils.symmetry.shapes import default_shapes

    cfg = _cfg("06", ex, False)
    shapes, encodings = default_shapes(), ex.make_encodings(cfg)
    grid = dr.measure(
        "06",
        "SDF grid (every network stacked)",
        "nb06.train_grid",
        lambda: ex.train_grid(cfg, seed=seed, shapes=shapes, encodings=encodings, device=device),
        hidden=cfg.hidden,
        depth=cfg.depth,
        pool=cfg.n_points,
        batch=cfg.batch,
    )
    if grid is None:
        return
    dr.records[-1]["networks"] = int(len(grid.meta))
    dr.audit(lambda d: ex.train_grid(cfg, seed=seed, shapes=shapes, encodings=encodings, device=d))
    dr.measure("06", "readout frame", "nb06.readout_frame", lambda: ex.readout_frame(grid, candidate_elements()))
    dr.measure(
        "06",
        f"rotation sweep ({cfg.sweep_num} angles)",
        "nb06.sweep_frame",
        lambda: ex.sweep_frame(
            grid.cell(cfg.domain, cfg.weight_decay), rotation_sweep(cfg.sweep_num), "prefix1", "frobenius"
        ),
    )


def dry_07(dr: DryRun, seed: int = 0, device: str = "cpu", data_dir: str | None = None, **kw: Any) -> None:
    """Notebook 07: the 13-layer INR zoo at the paper's width and T = 100, GTH-GMN trained on it by
    reconstruction (one epoch), the read INRs refined and read in both snapshot orders, and the claims."""
    from hgutils.experiments import nb07_training_geometry as ex

    cfg = _cfg("07", ex, kw.get("compile_", False))
    zoo = dr.measure(
        "07",
        "13-layer INR zoo",
        "nb07.deep_inr_zoo",
        lambda: ex.deep_inr_zoo(cfg, scale="paper", data_dir=data_dir, seed=seed, device=device),
        T=cfg.T,
        networks=cfg.n_inrs,
        width=cfg.width,
    )
    if zoo is None:
        return
    run = dr.measure(
        "07",
        "13-layer figure",
        "nb07.training_geometry (stage 1, refinement, readouts)",
        lambda: ex.training_geometry(zoo, cfg, seed, device),
    )
    if run is not None:
        _ledger(dr, "07", lambda claims: ex.geometry_claims(claims, run.readout, run.gate, True), kw.get("out"))


DRIVERS: dict[str, Callable[..., None]] = {
    "01": dry_01,
    "02": dry_02,
    "03": dry_03,
    "04": dry_04,
    "05": dry_05,
    "06": dry_06,
    "07": dry_07,
}


# --------------------------------------------------------------------------------------------
# driver and ledger
# --------------------------------------------------------------------------------------------
def dryrun_notebook(
    nb: str,
    dr: DryRun | None = None,
    seed: int = 0,
    device: str = "cpu",
    data_dir: str | None = None,
    out: Path | None = None,
    compile_: bool = False,
) -> DryRun:
    """Dry-run notebook ``nb`` (``"01"`` ... ``"07"``) into ``dr`` (a new :class:`DryRun` if ``None``)."""
    if nb not in DRIVERS:
        raise ValueError(f"notebook must be one of {list(DRIVERS)}; got {nb!r}")
    dr = dr if dr is not None else DryRun(device=device)
    DRIVERS[nb](dr, seed=seed, device=device, data_dir=data_dir, out=out, compile_=compile_)
    return dr


def _markdown(dr: DryRun, seconds: float) -> str:
    df = dr.frame()
    df = df.astype(object).where(df.notna(), "")
    lines = [
        f"# Paper-preset dry run ({dr.device}, {seconds:.0f} s)",
        "",
        "Each notebook's paper preset with only the counts cut (hgutils.experiments.paper_dryrun.CUTS):",
        "",
    ]
    lines += [f"- {nb}: `{json.dumps(c, default=str)}`" for nb, c in CUTS.items()]
    lines += [
        "",
        "rss_peak_mib: the process's peak resident set during the call (absolute); step_mib: peak live tensor "
        "bytes of one training step at the given batches; step_mib@paper_batch: the step's live bytes after every "
        "operator extrapolated linearly to the paper's batch, their maximum (paper_dryrun.step_memory).",
        "",
        "| " + " | ".join(df.columns) + " |",
        "|" + "---|" * len(df.columns),
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    for r in dr.records:
        if r.get("status") != "ok":
            lines.append(f"\n- {r['notebook']} {r['model']}: {r['status']}: {r.get('error') or r.get('reason')}")
    return "\n".join(lines) + "\n"


def run_dryrun(
    notebooks: Sequence[str] = NOTEBOOKS,
    out: str | Path | None = None,
    seed: int = 0,
    device: str = "cpu",
    data_dir: str | None = None,
    track_tensors: bool = False,
    compile_: bool = False,
    max_gib: float | None = 4.0,
) -> DryRun:
    """Dry-run ``notebooks`` and write the ledger ``out/dryrun.json`` + ``out/DRYRUN.md`` (and each
    notebook's paper-branch claims under ``out/<nb>/``). Zoos and lr searches are cached under
    ``$HGUTILS_CACHE`` like any run; point it at a temporary folder to leave nothing behind."""
    unknown = [nb for nb in notebooks if nb not in DRIVERS]
    if unknown or not notebooks:
        raise ValueError(f"notebooks must be a non-empty selection of {list(DRIVERS)}; got {list(notebooks)}")
    out_path = Path(out) if out is not None else None
    dr = DryRun(device=device, track_tensors=track_tensors, max_gib=max_gib)
    t0 = time.perf_counter()
    for nb in notebooks:
        t_nb = time.perf_counter()
        dryrun_notebook(nb, dr, seed, device, data_dir, out_path, compile_)
        log.info("dry run %s: %.0f s", nb, time.perf_counter() - t_nb)
    seconds = time.perf_counter() - t0
    if out_path is not None:
        from hgutils.atomic import atomic_write_text

        out_path.mkdir(parents=True, exist_ok=True)
        payload = {
            "device": device,
            "torch": torch.__version__,
            "seconds": round(seconds, 1),
            "cuts": CUTS,
            "compile": compile_,
            "max_gib": max_gib,
            "records": dr.records,
        }
        atomic_write_text(out_path / "dryrun.json", json.dumps(payload, indent=2, default=str) + "\n")
        atomic_write_text(out_path / "DRYRUN.md", _markdown(dr, seconds))
    dr.seconds = seconds
    return dr


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: run the dry run, print the ledger table; exit 1 if any model failed, 2 on bad arguments."""
    p = argparse.ArgumentParser(prog="python -m hgutils.experiments.paper_dryrun", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=None, help="folder for dryrun.json / DRYRUN.md (default: print only)")
    p.add_argument("--only", default=",".join(NOTEBOOKS), help="comma-separated notebooks, e.g. 01,04")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=None, help="dataset folder (default: $HGUTILS_DATA, then packaged copies)")
    p.add_argument(
        "--track-tensors", action="store_true", help="also count live tensor storages of every call (slower)"
    )
    p.add_argument("--compile", action="store_true", help="keep the paper preset's torch.compile (minutes on a CPU)")
    p.add_argument(
        "--max-gib", type=float, default=4.0, help="address-space cap per call, GiB above the process size (0: none)"
    )
    a = p.parse_args(argv)
    notebooks = [s.strip().zfill(2) for s in a.only.split(",") if s.strip()]
    bad = [nb for nb in notebooks if nb not in DRIVERS]
    if bad or not notebooks:
        print(f"error: --only must name notebooks from {','.join(DRIVERS)}; got {a.only!r}", file=sys.stderr)
        return 2
    if torch.device(a.device).type == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch sees no CUDA device (install a CUDA build of torch)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    dr = run_dryrun(notebooks, a.out, a.seed, a.device, a.data_dir, a.track_tensors, a.compile, a.max_gib or None)
    with pd.option_context("display.width", 250, "display.max_colwidth", 60, "display.max_rows", 500):
        print(dr.frame().to_string(index=False))
    seconds = dr.seconds
    ok = sum(r["status"] == "ok" for r in dr.records)
    skipped = [r for r in dr.records if r["status"] == "skipped"]
    print(
        f"\npaper dry run: {ok} ok, {len(skipped)} skipped, {len(dr.over_cap)} over the memory cap, "
        f"{len(dr.failed)} failed, {seconds:.0f} s on {a.device}"
    )
    for r in skipped + dr.over_cap:
        print(f"  {r['status']} {r['notebook']} {r['model']}: {r['reason']}")
    for r in dr.failed:
        print(f"  FAILED {r['notebook']} {r['model']}: {r['error']}\n{r.get('traceback', '')}")
    return 1 if dr.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
