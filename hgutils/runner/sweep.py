"""``sweep``: one notebook over a papermill parameter grid, parallel or on Dask, resumable, interruptible.

Layout (``out`` defaults to ``<repo>/results/sweeps/<notebook>``)::

    <out>/<scale>/<point>/run.ipynb                      the executed copy
    <out>/<scale>/<point>/run.json                       the run record (key, files) -- written last
    <out>/<scale>/<point>/<scale>/<ledger>/claims.json   the ledger (and any tables)
    <out>/<scale>/<point>/figures/<scale>/...            the figures
    <out>/<scale>/<point>/run.failed.ipynb               the executed copy of a failed point
    <out>/.cache/                                        the points' cache (unless $HGUTILS_CACHE is set)

A point's folder names every value exactly (:mod:`hgutils.runner.points`: ``gain_rich=-1`` and
``gain_rich=1`` are two folders). A point is complete only when its ``run.json`` records the same key
(scale, every parameter, notebook code, hgutils code, ``$HGUTILS_DATA``; see
:mod:`hgutils.runner.records`); a completed point's folder is replaced as a whole by renames, so it
is either the old or the new result, and a folder holding the result of other parameters is never
replaced without ``--force``.
Everything is validated before the first point starts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hgutils.atomic import atomic_write_bytes
from hgutils.presets import SCALES
from hgutils.runner.backends import DaskBackend, LocalBackend, make_backend, new_run_id, run_jobs, runs_here
from hgutils.runner.datacheck import (
    DatasetFinder,
    check_data_dir,
    check_data_env,
    check_data_env_paths,
    check_data_path,
)
from hgutils.runner.execute import Job, JobResult, NotebookFailure, run_cache
from hgutils.runner.notebooks import NOTEBOOK_DIR, REPO_ROOT, resolve_notebook
from hgutils.runner.params import (
    PresetLookup,
    check_name,
    check_value,
    grid_product,
    notebook_params,
    preset_class,
    split_values,
    validate_against_preset,
)
from hgutils.runner.points import point_slug
from hgutils.runner.preflight import RunLock, check_device, check_run_folders
from hgutils.runner.records import (
    clean_leftovers,
    is_complete,
    library_fingerprint,
    read_record,
    replace_dir,
    run_key,
)

RECORD = "run.json"
EXECUTED = "run.ipynb"


@dataclass
class SweepResult:
    """What a sweep did: per point its folder and status (``ran``, ``skipped``, ``failed``, ``not run``)."""

    notebook: str
    scale: str
    points: list[dict[str, Any]]
    dirs: list[Path]
    status: dict[Path, str]
    failed: dict[Path, str] = field(default_factory=dict)
    interrupted: bool = False

    def _with(self, state: str) -> list[Path]:
        return [d for d in self.dirs if self.status.get(d) == state]

    @property
    def ran(self) -> list[Path]:
        return self._with("ran")

    @property
    def skipped(self) -> list[Path]:
        return self._with("skipped")

    @property
    def not_run(self) -> list[Path]:
        return self._with("not run")

    def summary(self) -> str:
        """One line: notebook, scale and the counts."""
        line = (
            f"sweep {self.notebook} at scale {self.scale}: {len(self.ran)} ran, "
            f"{len(self.skipped)} skipped (already complete for this scale and code), {len(self.failed)} failed"
        )
        if self.interrupted:
            line += f", {len(self.not_run)} not run (interrupted)"
        return line

    def table(self, metrics: Sequence[str] | None = None) -> str:
        """Markdown summary: one row per point, its scale, parameters, status and each claim's ours/verdict."""
        from hgutils.ledger import Claims, format_value

        rows, claim_ids = [], []
        for point, d in zip(self.points, self.dirs):
            vals: dict[str, str] = {}
            if self.status.get(d) in ("ran", "skipped"):
                for p in sorted(d.glob("**/claims.json")):
                    for r in Claims.load(p).rows:
                        if metrics and r.id not in metrics:
                            continue
                        if r.id not in claim_ids:
                            claim_ids.append(r.id)
                        vals[r.id] = f"{format_value(r.ours)} ({r.verdict})"
            rows.append((point, self.status.get(d, "?"), vals))
        names = list(self.points[0]) if self.points else []
        head = "| " + " | ".join(["scale", *names, "status", *claim_ids]) + " |"
        sep = "|" + "---|" * (len(names) + 2 + len(claim_ids))
        body = [
            "| "
            + " | ".join([self.scale, *(format_value(p[n]) for n in names), s, *(v.get(c, "—") for c in claim_ids)])
            + " |"
            for p, s, v in rows
        ]
        return "\n".join([head, sep, *body]) + "\n"


def _typed_grid(grid: dict[str, Any], specs: dict, notebook: str, sep: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name, values in grid.items():
        if name == "scale":
            raise ValueError("-p scale: use --scale (one scale per sweep)")
        spec = check_name(name, specs, notebook)
        if isinstance(values, str):
            out[name] = [check_value(spec, v) for v in split_values(values, sep)]
        elif isinstance(values, (list, tuple)) and values:
            out[name] = [check_value(spec, v) for v in values]
        else:
            raise ValueError(f"-p {name}: a sweep axis needs a non-empty list of values; got {values!r}")
    return out


def sweep(
    notebook: str | os.PathLike,
    grid: dict[str, Any],
    *,
    scale: str = "smoke",
    fixed: dict[str, Any] | None = None,
    sep: str = ",",
    jobs: int = 1,
    cluster: str | None = None,
    scheduler: str | None = None,
    backend: LocalBackend | DaskBackend | None = None,
    out: str | os.PathLike | None = None,
    force: bool = False,
    notebook_dir: Path = NOTEBOOK_DIR,
    preset_lookup: PresetLookup = preset_class,
    data_finder: DatasetFinder | None = None,
    echo: Callable[[str], None] = print,
    device_check: Callable[[str], Any] = check_device,
) -> SweepResult:
    """Execute ``notebook`` at every point of ``grid``; skip points already complete for the same key.

    ``grid`` maps a parameter to a list of values (checked against the parameter's type) or to
    command-line text ``"v1,v2"`` (split on ``sep``, outside brackets, and parsed by type);
    ``fixed`` holds parameters common to every point (same rules, one value each). Names are
    checked against the notebook's parameters cell, values against its preset (``from_scale``),
    an explicit ``data_dir`` must hold data, an explicit ``device`` must be available, the sweep
    folder and the cache folder must be writable, and the sweep folder not in use by another run
    (its lock is held until the end) -- all before anything runs (the preset last: it imports the
    notebook's driver module).

    Runs on ``backend``, else on :func:`~hgutils.runner.backends.make_backend` ``(jobs, cluster,
    scheduler)``. Returns a :class:`SweepResult`; ``interrupted`` is set when SIGINT/SIGTERM
    stopped the sweep (completed points are kept, the rest did not run).

    Raises
    ------
    ValueError
        For any invalid input (one line each), before anything ran; nothing is written. Also when a
        point's folder holds the result of other parameters (kept; ``force`` replaces it).
    """
    if scale not in SCALES:
        raise ValueError(f"--scale must be one of {SCALES}; got {scale!r}")
    nb = resolve_notebook(notebook, notebook_dir)
    # the parameters cell alone first (fast, nothing imported), the preset once the root is held
    points, params_of = _typed_points(nb, notebook_params(nb, None), grid, fixed, sep, scale)
    backend = backend or make_backend(jobs, cluster, scheduler)
    check_data_env_paths()
    base_root = Path(out) if out else REPO_ROOT / "results" / "sweeps" / nb.stem
    for path in sorted({str(p["data_dir"]) for p in params_of if p.get("data_dir")}):
        check_data_path(path, "data_dir")
    devices = sorted({str(p["device"]) for p in params_of if p.get("device") is not None})
    if isinstance(backend, LocalBackend):
        for d in devices:
            device_check(d)
    created = check_run_folders(base_root, cache=runs_here(backend))  # the cache folder too
    with RunLock(base_root, f"sweep {nb.stem} --scale {scale}", echo, created):
        preset = preset_lookup(nb)
        points, params_of = _typed_points(nb, notebook_params(nb, preset), grid, fixed, sep, scale)
        slugs = [point_slug(p) for p in points]
        for slug, params in zip(slugs, params_of):
            validate_against_preset(preset, scale, params, slug)
        return _sweep_locked(
            nb,
            scale,
            points,
            params_of,
            slugs,
            devices,
            backend,
            base_root / scale,
            force,
            data_finder,
            echo,
            device_check,
        )


def _typed_points(
    nb: Path, specs: dict, grid: dict[str, Any], fixed: dict[str, Any] | None, sep: str, scale: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The grid's points and each point's full parameters (scale, fixed, swept), checked against ``specs``."""
    typed = _typed_grid(grid, specs, nb.name, sep)
    base: dict[str, Any] = {}
    for name, value in (fixed or {}).items():
        if name == "scale":
            raise ValueError("-p scale: use --scale (one scale per sweep)")
        if name in typed:
            raise ValueError(f"-p {name} is both swept and fixed; give it once")
        spec = check_name(name, specs, nb.name)
        option = f"--{name.replace('_', '-')}" if name in ("device", "data_dir") else None
        base[name] = check_value(spec, value, option)
    if "scale" not in specs:
        raise ValueError(f"{nb.name} has no 'scale' parameter; the runner needs one")
    points = grid_product(typed)
    return points, [{"scale": scale} | base | p for p in points]


def _refuse_other_parameters(folder: Path, key: dict[str, Any]) -> None:
    """Refuse to overwrite a point folder whose record holds the result of other parameters.

    Only a folder named by an older hgutils (whose names could lose a value's sign), or a sweep
    with another ``--device`` or ``--data-dir``, can hold one; replacing it would lose that result.
    """
    rec = read_record(folder / RECORD) or {}
    theirs = rec["key"].get("parameters") if isinstance(rec.get("key"), dict) else None
    if not isinstance(theirs, dict) or theirs == key["parameters"]:
        return
    differ = sorted(k for k in set(theirs) | set(key["parameters"]) if theirs.get(k) != key["parameters"].get(k))
    shown = ", ".join(f"{k}={theirs.get(k)!r} (asked: {key['parameters'].get(k)!r})" for k in differ)
    raise ValueError(
        f"{folder} holds the result of other parameters ({shown}); it is kept: choose another --out, "
        "or --force to replace it"
    )


def _sweep_locked(
    nb: Path,
    scale: str,
    points: list[dict[str, Any]],
    params_of: list[dict[str, Any]],
    slugs: list[str],
    devices: list[str],
    backend: LocalBackend | DaskBackend,
    root: Path,
    force: bool,
    data_finder: DatasetFinder | None,
    echo: Callable[[str], None],
    device_check: Callable[[str], Any],
) -> SweepResult:
    data_dirs = sorted({str(p["data_dir"]) for p in params_of if p.get("data_dir")})
    source = nb.read_bytes()
    mine = library_fingerprint()
    run_id = new_run_id()
    parallel = not (isinstance(backend, LocalBackend) and backend.workers == 1)
    dirs = [root / s for s in slugs]
    cache = run_cache(root.parent)
    status: dict[Path, str] = {}
    todo: list[Job] = []
    by_label: dict[str, Path] = {}
    for slug, d, params in zip(slugs, dirs, params_of):
        key = run_key(nb.stem, source, scale, params)
        if not force:
            _refuse_other_parameters(d, key)
        if not force and is_complete(d / RECORD, key, d):
            status[d] = "skipped"
            continue
        status[d] = "not run"
        by_label[slug] = d
        todo.append(Job(slug, str(nb), source, params, EXECUTED, key, run_id, single_thread=parallel, cache=cache))
    result = SweepResult(nb.stem, scale, points, dirs, status)

    def on_done(job: Job, res: JobResult) -> None:
        d = by_label[job.label]
        n_done = sum(s in ("ran", "failed") for s in status.values()) + 1
        if res.ok and res.library != mine:
            res = JobResult(job.label, False, res.seconds, error=f"worker {res.worker} ran different hgutils code")
        if res.ok:
            extra = {"seconds": round(res.seconds, 3), "worker": res.worker, "data": res.data}
            replace_dir(d, res.files, RECORD, job.key, extra)
            status[d] = "ran"
            echo(f"[{n_done}/{len(todo)}] done {job.label} in {res.seconds:.0f} s")
            return

        for rel, data in res.files.items():
            atomic_write_bytes(d / rel, data)
        if res.failure:
            failed_copy = d / next(iter(res.files)) if res.files else None
            msg = str(NotebookFailure(**res.failure, executed=failed_copy))
        else:
            msg = f"{job.label}: {res.error}"
        result.failed[d] = msg
        status[d] = "failed"
        echo(f"[{n_done}/{len(todo)}] FAILED {job.label} after {res.seconds:.0f} s: {msg}")

    with backend:
        for path in data_dirs:
            backend.check(check_data_dir, path, "data_dir", data_finder)
        backend.check(check_data_env, data_finder)
        if not isinstance(backend, LocalBackend):
            for d in devices:
                backend.check(device_check, d)
        clean_leftovers(root)
        echo(
            f"sweep {nb.stem} at scale {scale}: {len(points)} point(s), {len(points) - len(todo)} already complete, "
            f"{len(todo)} to run on {backend.describe()} -> {root}"
        )
        t0 = time.perf_counter()
        result.interrupted = run_jobs(todo, backend, on_done)
    if todo:
        echo(f"sweep wall time {time.perf_counter() - t0:.0f} s")
    return result
