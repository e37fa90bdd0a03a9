"""``reproduce``: every numbered notebook (or a selection) at one scale, with a plan, progress and resume.

Layout of a run root (``out`` defaults to ``<repo>/results/runs``, ignored by git)::

    <out>/<scale>/<NN_name>.ipynb        executed copy        (<NN_name>.failed.ipynb on error)
    <out>/<scale>/<NN_name>.run.json     run record: key, files, seconds -- written last, on completion
    <out>/<scale>/<NN_name>/claims.json  the ledger (and the notebook's tables)
    <out>/<scale>/CLAIMS.md              all ledgers of that scale as one table
    <out>/figures/<scale>/...            the figures
    <out>/.hgutils.lock                  while a run uses the root: its PID, host, start time, command
    <out>/.cache/                        the notebooks' cache (unless $HGUTILS_CACHE names another folder)

It mirrors the repository's ``results/`` and ``figures/``; nothing tracked is written unless
``publish=True`` (``--publish``) copies the completed notebooks' executed copies (cleaned), ledgers,
tables and figures into ``results/<scale>/`` and ``figures/<scale>/``. A notebook whose record matches this run's key
(scale, parameters, notebook code, hgutils code) is skipped unless ``force``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hgutils.atomic import atomic_write_bytes
from hgutils.presets import SCALES
from hgutils.runner.backends import DaskBackend, LocalBackend, make_backend, new_run_id, run_jobs, runs_here
from hgutils.runner.claims_report import RUN_ROOT, write_claims
from hgutils.runner.datacheck import (
    DatasetFinder,
    check_data_dir,
    check_data_env,
    check_data_env_paths,
    check_data_path,
)
from hgutils.runner.execute import Job, JobResult, NotebookFailure, run_cache
from hgutils.runner.notebook_cleaning import clean_notebook
from hgutils.runner.notebooks import NOTEBOOK_DIR, REPO_ROOT, select_notebooks
from hgutils.runner.params import (
    COMMON_TYPES,
    ParamSpec,
    PresetLookup,
    check_name,
    check_value,
    notebook_params,
    preset_class,
    validate_against_preset,
)
from hgutils.runner.preflight import RunLock, check_device, check_run_folders
from hgutils.runner.records import is_complete, ledger_device, library_fingerprint, read_record, run_key, write_into
from hgutils.runner.republication import mark_republished

DEFAULT_RUN_ROOT = RUN_ROOT


@dataclass
class RunRecord:
    """One notebook of a ``reproduce`` run: ``status`` is ``ran``, ``skipped``, ``failed`` or ``not run``."""

    notebook: str
    seconds: float
    ok: bool
    error: str = ""
    status: str = "ran"
    device: str = ""


@dataclass
class ReproduceResult:
    """What ``reproduce`` did, per notebook, and whether it was interrupted."""

    scale: str
    out: Path
    records: list[RunRecord]
    interrupted: bool = False
    published: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> list[RunRecord]:
        return [r for r in self.records if r.status == "failed"]

    def table(self) -> str:
        """Markdown: notebook, wall time, status, the device its ledger records (``—`` when none ran)."""
        lines = ["| notebook | wall time (s) | status | device |", "|---|---|---|---|"]
        for r in self.records:
            secs = f"{r.seconds:.0f}" if r.status in ("ran", "failed") else "—"
            lines.append(f"| {r.notebook} | {secs} | {r.status} | {r.device or '—'} |")
        return "\n".join(lines) + "\n"


@dataclass
class _Planned:
    notebook: Path
    params: dict[str, Any]
    key: dict[str, Any]
    complete: bool
    estimate_min: float | None
    estimate_origin: str
    device_note: str = ""


def fmt_minutes(minutes: float | None) -> str:
    """``None`` → ``"unknown"``; ``0.4`` → ``"24 s"``; ``95`` → ``"1 h 35 min"``."""
    if minutes is None:
        return "unknown"
    if minutes < 1:
        return f"{minutes * 60:.0f} s"
    if minutes < 60:
        return f"{minutes:.0f} min"
    return f"{int(minutes // 60)} h {minutes % 60:02.0f} min"


def _estimate(preset: Any, scale: str, record: Path) -> tuple[float | None, str]:
    cost = getattr(preset, "COST_MINUTES", {}) if preset is not None else {}
    if scale in cost:
        return float(cost[scale]), "recorded cost"
    rec = read_record(record)
    if rec and isinstance(rec.get("seconds"), (int, float)):
        return rec["seconds"] / 60, "last run"
    return None, ""


def _spec(specs: dict[str, ParamSpec], name: str, notebook: str) -> ParamSpec:
    if name in specs:
        return specs[name]
    if name in COMMON_TYPES:
        raise ValueError(f"{notebook} has no {name!r} parameter, which every numbered notebook needs")
    return check_name(name, specs, notebook)


def _option(name: str) -> str:
    """The command-line option that sets ``name`` (``device`` → ``--device``)."""
    return f"--{name.replace('_', '-')}"


def _values(nb: Path, preset: Any, scale: str, device: str, data_dir: Any, overrides: dict[str, Any]) -> dict[str, Any]:
    """The checked parameters of one notebook: against its parameters cell, then its preset (when given)."""
    specs = notebook_params(nb, preset)
    values: dict[str, Any] = {"scale": scale, "device": device}
    if data_dir:
        values["data_dir"] = str(Path(data_dir).expanduser().resolve())
    values = {k: check_value(_spec(specs, k, nb.name), v, _option(k)) for k, v in values.items()}
    for name, value in overrides.items():
        values[name] = check_value(check_name(name, specs, nb.name), value)
    validate_against_preset(preset, scale, values, nb.stem)
    return values


def _device_note(preset: Any, device: str) -> str:
    """Empty, or why the notebook computes on the CPU although ``device`` asks for an accelerator."""
    if str(device).startswith("cpu") or preset is None or preset.supports_device(device):
        return ""
    return f"runs on the CPU: {preset.__name__}.DEVICES = {tuple(preset.DEVICES)} (asked: {device})"


def reproduce(
    scale: str = "medium",
    only: str | None = None,
    device: str = "cpu",
    out: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    *,
    params: dict[str, Any] | None = None,
    force: bool = False,
    jobs: int = 1,
    cluster: str | None = None,
    scheduler: str | None = None,
    backend: LocalBackend | DaskBackend | None = None,
    publish: bool = False,
    log_output: bool = False,
    notebook_dir: Path = NOTEBOOK_DIR,
    preset_lookup: PresetLookup = preset_class,
    data_finder: DatasetFinder | None = None,
    repo_root: Path = REPO_ROOT,
    echo: Callable[[str], None] = print,
    device_check: Callable[[str], Any] = check_device,
) -> ReproduceResult:
    """Execute the selected notebooks at ``scale``; print the plan and progress; resume; keep going on failure.

    ``params`` are one-off overrides for every selected notebook (``-p NAME VALUE``; each notebook
    must have the parameter). Before the first notebook starts, in this order: every name and value
    against the notebooks' parameters cells (no heavy import), the data locations exist, the device
    is available (:func:`~hgutils.runner.preflight.check_device`), the output root and the cache
    folder can be written (:func:`~hgutils.runner.preflight.check_run_folders`) and no other run
    holds the root (:class:`~hgutils.runner.preflight.RunLock`, held until the end); then the values
    against each notebook's preset (importing its driver module) and the data folders' contents.
    Returns a :class:`ReproduceResult`; the caller decides the exit code.

    Raises
    ------
    ValueError
        For any invalid input (one line), before anything ran; nothing is written.
    """
    if scale not in SCALES:
        raise ValueError(f"--scale must be one of {SCALES}; got {scale!r}")
    out = Path(out) if out else DEFAULT_RUN_ROOT
    books = select_notebooks(only, notebook_dir)
    if not books:
        raise ValueError(f"no numbered notebooks found in {notebook_dir}")
    overrides = dict(params or {})
    for name in ("scale", "device", "data_dir"):
        if name in overrides:
            raise ValueError(f"-p {name}: use --{name.replace('_', '-')} instead")
    for nb in books:  # the parameters cells alone: fast, nothing imported
        _values(nb, None, scale, device, data_dir, overrides)
    backend = backend or make_backend(jobs, cluster, scheduler)
    if data_dir:
        check_data_path(data_dir, "--data-dir")
    check_data_env_paths()
    if isinstance(backend, LocalBackend):
        device_check(device)
    created = check_run_folders(out, cache=runs_here(backend))  # the cache folder too
    command = f"reproduce --scale {scale}" + (f" --only {only}" if only else "") + f" --device {device}"
    with RunLock(out, command, echo, created):
        return _reproduce_locked(
            scale,
            books,
            device,
            out,
            data_dir,
            overrides,
            force,
            backend,
            publish,
            log_output,
            preset_lookup,
            data_finder,
            repo_root,
            echo,
            device_check,
        )


def _reproduce_locked(
    scale: str,
    books: list[Path],
    device: str,
    out: Path,
    data_dir: Any,
    overrides: dict[str, Any],
    force: bool,
    backend: LocalBackend | DaskBackend,
    publish: bool,
    log_output: bool,
    preset_lookup: PresetLookup,
    data_finder: DatasetFinder | None,
    repo_root: Path,
    echo: Callable[[str], None],
    device_check: Callable[[str], Any],
) -> ReproduceResult:
    plan: list[_Planned] = []
    for nb in books:
        preset = preset_lookup(nb)
        values = _values(nb, preset, scale, device, data_dir, overrides)
        key = run_key(nb.stem, nb.read_bytes(), scale, values)
        record = out / scale / f"{nb.stem}.run.json"
        complete = not force and is_complete(record, key, out)
        est, origin = _estimate(preset, scale, record)
        plan.append(_Planned(nb, values, key, complete, est, origin, _device_note(preset, device)))

    parallel = not (isinstance(backend, LocalBackend) and backend.workers == 1)
    run_id = new_run_id()
    todo = [p for p in plan if not p.complete]
    by_label = {p.notebook.stem: p for p in todo}
    records: dict[str, RunRecord] = {
        p.notebook.stem: RunRecord(p.notebook.stem, 0.0, True, status="skipped" if p.complete else "not run")
        for p in plan
    }
    mine = library_fingerprint()
    t_start = time.perf_counter()
    state = {"done": 0}

    def remaining_estimate() -> str:
        left = [p for p in todo if records[p.notebook.stem].status == "not run"]
        return _cost_text(left, "left") if left else "nothing left"

    def on_start(job: Job) -> None:
        p = by_label[job.label]
        i = todo.index(p) + 1
        echo(f"[{i}/{len(todo)}] {job.label} started (estimate {fmt_minutes(p.estimate_min)})")

    def on_done(job: Job, res: JobResult) -> None:
        state["done"] += 1
        rec = records[job.label]
        rec.seconds = res.seconds
        executed = f"{scale}/{job.label}"
        if res.ok and res.library != mine:
            res = JobResult(job.label, False, res.seconds, error=f"worker {res.worker} ran different hgutils code")
        if res.ok:
            rec.device = ledger_device(res.files, device)
            extra = {"seconds": round(res.seconds, 3), "worker": res.worker, "data": res.data, "device": rec.device}
            write_into(out, res.files, f"{executed}.run.json", job.key, extra)
            (out / f"{executed}.failed.ipynb").unlink(missing_ok=True)
            rec.status, rec.ok = "ran", True
        else:
            for rel, data in res.files.items():
                atomic_write_bytes(out / rel, data)
            failed_copy = out / next(iter(res.files)) if res.files else None
            msg = str(NotebookFailure(**res.failure, executed=failed_copy)) if res.failure else res.error
            rec.status, rec.ok, rec.error = "failed", False, f"{job.label}: {msg}" if not res.failure else msg
        elapsed = (time.perf_counter() - t_start) / 60
        verdict = "done" if rec.ok else "FAILED"
        on = f" on {rec.device}" if rec.ok and not str(device).startswith("cpu") else ""
        echo(
            f"[{state['done']}/{len(todo)}] {job.label} {verdict}{on} in {fmt_minutes(res.seconds / 60)}"
            f"; elapsed {fmt_minutes(elapsed)}, {remaining_estimate()}" + ("" if rec.ok else f"\n    {rec.error}")
        )

    interrupted = False
    with backend:
        for path in sorted({str(p.params["data_dir"]) for p in plan if p.params.get("data_dir")}):
            backend.check(check_data_dir, path, "--data-dir", data_finder)
        backend.check(check_data_env, data_finder)
        if not isinstance(backend, LocalBackend):
            backend.check(device_check, device)
        _print_plan(plan, scale, out, backend.describe(), echo)
        if todo:
            jobs_ = [
                Job(
                    p.notebook.stem,
                    str(p.notebook),
                    p.notebook.read_bytes(),
                    p.params,
                    f"{scale}/{p.notebook.stem}.ipynb",
                    p.key,
                    run_id,
                    single_thread=parallel,
                    log_output=log_output,
                    estimate_s=None if p.estimate_min is None else p.estimate_min * 60,
                    cache=run_cache(out),
                )
                for p in todo
            ]
            interrupted = run_jobs(jobs_, backend, on_done, on_start if isinstance(backend, LocalBackend) else None)
    result = ReproduceResult(scale, out, [records[p.notebook.stem] for p in plan], interrupted)
    if publish and not interrupted:
        done = [r.notebook for r in result.records if r.status in ("ran", "skipped")]
        result.published = publish_results(scale, out, done, repo_root)
    return result


def _print_plan(plan: list[_Planned], scale: str, out: Path, where: str, echo: Callable[[str], None]) -> None:
    todo = [p for p in plan if not p.complete]
    echo(f"reproduce at scale {scale}: {len(plan)} notebook(s) -> {out} on {where}")
    width = max(len(p.notebook.stem) for p in plan)
    for i, p in enumerate(plan, 1):
        est = fmt_minutes(p.estimate_min) + (f" ({p.estimate_origin})" if p.estimate_origin else "")
        what = "skip: complete for this scale and code (--force reruns it)" if p.complete else "run"
        if p.device_note and not p.complete:
            what += f" -- {p.device_note}"
        echo(f"  {i}. {p.notebook.stem:<{width}}  {est:<26}  {what}")
    echo(_cost_text(todo, "to run") if todo else "nothing to run: every notebook is complete for this scale and code")


def _cost_text(left: list[_Planned], what: str) -> str:
    """``"about 1 h 20 min left"``, ``"about 44 min + 1 notebook of unknown cost to run"``."""
    known = sum(p.estimate_min or 0.0 for p in left)
    unknown = sum(p.estimate_min is None for p in left)
    parts = [f"about {fmt_minutes(known)}"] if len(left) > unknown else []
    if unknown:
        parts.append(f"{unknown} notebook(s) of unknown cost")
    return " + ".join(parts) + f" {what}"


def publish_results(scale: str, out: Path, notebooks: list[str], repo_root: Path = REPO_ROOT) -> list[Path]:
    """Copy completed notebooks' executed copies, ledgers, tables and figures from a run root into the repository.

    ``<out>/<scale>/<NN>.ipynb`` → ``<repo>/results/<scale>/<NN>.ipynb`` with its outputs kept and
    machine paths, timings and widget state stripped (:func:`hgutils.runner.notebook_cleaning.clean_notebook`),
    ``<out>/<scale>/<NN>/...`` → ``<repo>/results/<scale>/<NN>/...`` and ``<out>/figures/<scale>/...``
    → ``<repo>/figures/<scale>/...``, exactly the files each notebook's record lists; each notebook published
    leaves the list of those awaiting republication (:mod:`hgutils.runner.republication`); then
    ``results/<scale>/CLAIMS.md`` is regenerated (its rows link the published notebooks). Returns
    the written paths.
    """

    written: list[Path] = []
    for stem in notebooks:
        rec = read_record(out / scale / f"{stem}.run.json")
        if not rec:
            continue
        for rel in rec.get("files", {}):
            if rel.startswith("figures/"):
                dst = repo_root / rel
            elif rel.startswith(f"{scale}/"):
                dst = repo_root / "results" / rel
            else:
                continue
            src = out / rel
            if src.resolve() == dst.resolve():
                continue
            data = src.read_bytes()
            atomic_write_bytes(dst, _published_notebook(data) if rel.endswith(".ipynb") else data)
            written.append(dst)
    published = [stem for stem in notebooks if repo_root / "results" / scale / f"{stem}.ipynb" in written]
    mark_republished(repo_root / "results" / scale, published)
    write_claims(scale, repo_root / "results")
    return written


def _published_notebook(data: bytes) -> bytes:
    """An executed notebook as published: outputs kept, machine paths, timings and widget state stripped."""
    import nbformat

    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    return nbformat.writes(nbformat.from_dict(clean_notebook(nb))).encode("utf-8") + b"\n"
