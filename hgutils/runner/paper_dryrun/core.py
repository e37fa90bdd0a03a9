"""The dry run's ledger and its measuring: :data:`CUTS`, :class:`DryRun`, the memory cap and the probes.

Holds what every notebook's dry run shares: the notebooks covered (:data:`NOTEBOOKS`) and the count
overrides applied to each paper preset (:data:`CUTS`, applied by ``_cfg``); :class:`DryRun`, the
ledger, whose :meth:`DryRun.measure` runs one call under :class:`~hgutils.memory.PeakMemory` and the
address-space cap (:func:`memory_cap`) and records its outcome; the two probes added to a model's
record, :func:`step_memory` (one training step's tensor memory extrapolated to the paper's batch)
and :func:`device_audit` (the ``meta``-device stand-in for a GPU); and ``_ledger``, a notebook's
claims code run at ``scale="paper"`` as one more record. The per-notebook ``dry_NN`` functions live
in :mod:`~hgutils.runner.paper_dryrun.weightspace` (01-03, 07) and
:mod:`~hgutils.runner.paper_dryrun.others` (04-06); writing the ledger files and the command line in
:mod:`~hgutils.runner.paper_dryrun.run`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from hgutils.ledger import Claims
from hgutils.memory import PeakMemory, mib

try:
    import resource
except ImportError:  # pragma: no cover - not Linux
    resource = None  # type: ignore[assignment]

log = logging.getLogger("hgutils")

__all__ = [
    "CUTS",
    "NOTEBOOKS",
    "OVER_CAP",
    "STEP_BATCHES",
    "DryRun",
    "device_audit",
    "memory_cap",
    "n_params",
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


def _cfg(notebook: str, module: Any, compile_: bool, extra: dict[str, Any] | None = None) -> Any:
    """Notebook ``notebook``'s paper preset (``module.CONFIG``) with its :data:`CUTS` (and ``extra``);
    ``compile_`` keeps the preset's ``torch.compile``."""
    cuts = dict(CUTS[notebook])
    if compile_ and "compile" in cuts:
        cuts.pop("compile")
    cuts.update(extra or {})
    return module.CONFIG.from_scale("paper", **cuts)


def _ledger(dr: DryRun, nb: str, fn: Callable[[Any], None], out: Path | None) -> None:
    """The notebook's claims code at ``scale="paper"`` on the dry-run results, saved under ``out/<nb>``
    (it checks that the paper-only branches run; the verdicts of a one-step run mean nothing)."""

    def run() -> int:
        claims = Claims(f"{nb}_paper_dryrun", "paper")
        fn(claims)
        if out is not None:
            claims.save(out / nb)
        return len(claims.rows)

    n = dr.measure(nb, "claims ledger (paper branches)", "Claims at scale='paper'", run)
    if n is not None:
        dr.records[-1]["claims"] = n
