"""Headless notebook execution: ``reproduce`` (all numbered notebooks at one scale), ``sweep``
(a papermill parameter grid, parallel and resumable) and the claims report.

Layout of what a run writes (``out`` defaults to ``<repo>/results``)::

    results/<scale>/<NN_name>.ipynb          executed copy (never written over notebooks/)
    results/<scale>/<NN_name>/claims.json    the notebook's claims ledger
    results/<scale>/CLAIMS.md                all ledgers of that scale as one table
    results/sweeps/<NN_name>/<point>/run.ipynb and <point>/<scale>/<NN_name>/claims.json

An executed copy is written to a temporary name and renamed only when the notebook completed, so
an existing ``run.ipynb`` always means "this point finished" (that is what ``sweep`` resumes on).
A failed run leaves ``<name>.failed.ipynb`` beside it with the error cell, and raises
:class:`NotebookFailure` naming the notebook and the failing cell.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hgutils.presets import SCALES
from hgutils.repro import REPO_ROOT, Claims, atomic_write_text

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
README_START = "<!-- CLAIMS:START -->"
README_END = "<!-- CLAIMS:END -->"


class NotebookFailure(RuntimeError):
    """A notebook raised during execution; the message names the notebook and the failing cell."""

    def __init__(
        self,
        notebook: str,
        cell_index: int | None,
        ename: str,
        evalue: str,
        executed: Path | None = None,
        source: str = "",
    ) -> None:
        first = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
        where = "kernel start-up"
        if cell_index is not None:
            where = f"cell {cell_index} of the executed copy"
            if first:
                where += f" (first line: `{first[:80]}`)"
        self.notebook, self.cell_index, self.ename, self.evalue = notebook, cell_index, ename, evalue
        self.executed = executed
        extra = f" (executed copy with the error: {executed})" if executed else ""
        super().__init__(f"{notebook}: {where} raised {ename}: {evalue}{extra}")


# --------------------------------------------------------------------------------------------
# discovery
# --------------------------------------------------------------------------------------------
def numbered_notebooks(notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """The companion's notebooks ``NN_name.ipynb`` (NN ≥ 01; the template ``00_`` is excluded)."""
    return sorted(p for p in notebook_dir.glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00_"))


def select_notebooks(only: str | Sequence[str] | None, notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Filter :func:`numbered_notebooks` by number prefixes (``"01,05"``) or names.

    Raises
    ------
    ValueError
        If a requested prefix matches no notebook.
    """
    books = numbered_notebooks(notebook_dir)
    if not only:
        return books
    wanted = [w.strip() for w in (only.split(",") if isinstance(only, str) else only) if w.strip()]
    chosen: list[Path] = []
    for w in wanted:
        hits = [b for b in books if b.stem == w or b.name == w or b.name.startswith(f"{w}_")]
        if not hits:
            have = ", ".join(b.stem for b in books) or "none"
            raise ValueError(f"no notebook matches {w!r}; available: {have}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def resolve_notebook(name: str | os.PathLike, notebook_dir: Path = NOTEBOOK_DIR) -> Path:
    """A notebook path from a path, a stem (``05_msa_rich_vs_lazy``) or a number (``05``)."""
    p = Path(name)
    if p.suffix == ".ipynb" and p.exists():
        return p.resolve()
    hits = select_notebooks(str(name), notebook_dir)
    if len(hits) != 1:
        raise ValueError(f"{name!r} matches {len(hits)} notebooks; give the full name")
    return hits[0]


# --------------------------------------------------------------------------------------------
# executing one notebook
# --------------------------------------------------------------------------------------------
def execute(
    notebook: Path,
    output: Path,
    parameters: dict[str, Any],
    *,
    cwd: Path | None = None,
    log_output: bool = False,
    progress_bar: bool = False,
) -> Path:
    """Execute ``notebook`` with papermill into ``output`` (atomically; see module docstring)."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    output.parent.mkdir(parents=True, exist_ok=True)
    # kernels inherit this: no tqdm bars in executed notebooks (an explicit setting wins)
    os.environ.setdefault("HGUTILS_PROGRESS", "0")
    tmp = output.with_name(f".{output.stem}.running.ipynb")
    failed = output.with_name(f"{output.stem}.failed.ipynb")
    try:
        pm.execute_notebook(
            str(notebook),
            str(tmp),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(cwd or notebook.parent),
            log_output=log_output,
            progress_bar=progress_bar,
        )
    except PapermillExecutionError as err:
        os.replace(tmp, failed)
        raise NotebookFailure(notebook.name, err.cell_index, err.ename, str(err.evalue), failed, err.source) from None
    except Exception as err:  # kernel died, notebook unreadable, ...
        if tmp.exists():
            os.replace(tmp, failed)
        raise NotebookFailure(
            notebook.name, None, type(err).__name__, str(err), failed if failed.exists() else None
        ) from None
    os.replace(tmp, output)
    if failed.exists():
        failed.unlink()
    return output


def _single_thread_env() -> None:
    """Give each worker process (and the kernels it starts) one BLAS/OpenMP thread."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"


# --------------------------------------------------------------------------------------------
# reproduce
# --------------------------------------------------------------------------------------------
@dataclass
class RunRecord:
    notebook: str
    seconds: float
    ok: bool
    error: str = ""


def reproduce(
    scale: str = "medium",
    only: str | None = None,
    device: str = "cpu",
    out: str | os.PathLike | None = None,
    data_dir: str | None = None,
    log_output: bool = False,
    notebook_dir: Path = NOTEBOOK_DIR,
) -> list[RunRecord]:
    """Execute every numbered notebook (or those in ``only``) at ``scale``; keep going on failure.

    Returns one :class:`RunRecord` per notebook; the caller decides the exit code.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda'; got {device!r}")
    out = Path(out) if out else REPO_ROOT / "results"
    books = select_notebooks(only, notebook_dir)
    if not books:
        raise ValueError(f"no numbered notebooks found in {notebook_dir}")
    records = []
    for nb in books:
        params: dict[str, Any] = {"scale": scale, "device": device, "results_dir": str(out.resolve())}
        if data_dir:
            params["data_dir"] = str(Path(data_dir).resolve())
        print(f"[{time.strftime('%H:%M:%S')}] {nb.stem} at scale={scale} ...", flush=True)
        t0 = time.perf_counter()
        try:
            execute(nb, out / scale / nb.name, params, log_output=log_output, progress_bar=True)
            records.append(RunRecord(nb.stem, time.perf_counter() - t0, True))
            print(f"    done in {records[-1].seconds:.0f} s", flush=True)
        except NotebookFailure as err:
            records.append(RunRecord(nb.stem, time.perf_counter() - t0, False, str(err)))
            print(f"    FAILED: {err}", flush=True)
    return records


# --------------------------------------------------------------------------------------------
# claims report
# --------------------------------------------------------------------------------------------
def collect_claims(scale: str, out: str | os.PathLike | None = None) -> list[Claims]:
    """All ``claims.json`` ledgers under ``<out>/<scale>/*/``, sorted by notebook."""
    root = Path(out) if out else REPO_ROOT / "results"
    return [Claims.load(p) for p in sorted((root / scale).glob("*/claims.json"))]


def claims_markdown(ledgers: Iterable[Claims], scale: str) -> str:
    """One Markdown table over all ledgers (notebook column first)."""
    lines = [
        f"Claims ledger at scale `{scale}` (generated by `python -m hgutils claims --scale {scale}`).",
        "",
        "| notebook | claim | statement | paper (source) | ours | criterion | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    from hgutils.repro import _fmt

    n = 0
    for led in ledgers:
        for r in led.rows:
            n += 1
            lines.append(
                f"| {led.notebook} | {r.id} | {r.statement} | {_fmt(r.paper)} ({r.source}) | "
                f"{_fmt(r.ours)} | {r.criterion} | **{r.verdict}** |"
            )
    if n == 0:
        lines.append(
            f"| — | — | no ledgers found for scale `{scale}`; run `make reproduce SCALE={scale}` | — | — | — | — |"
        )
    return "\n".join(lines) + "\n"


def write_claims(
    scale: str,
    out: str | os.PathLike | None = None,
    update_readme: bool = False,
    readme: Path = REPO_ROOT / "README.md",
) -> str:
    """Render ``<out>/<scale>/CLAIMS.md``; optionally replace the README's marked section."""
    root = Path(out) if out else REPO_ROOT / "results"
    md = claims_markdown(collect_claims(scale, root), scale)
    atomic_write_text(root / scale / "CLAIMS.md", md)
    if update_readme:
        text = readme.read_text(encoding="utf-8")
        if README_START not in text or README_END not in text:
            raise ValueError(f"{readme} has no {README_START} ... {README_END} section to update")
        head, rest = text.split(README_START, 1)
        _, tail = rest.split(README_END, 1)
        atomic_write_text(readme, f"{head}{README_START}\n{md}{README_END}{tail}")
    return md


# --------------------------------------------------------------------------------------------
# sweep
# --------------------------------------------------------------------------------------------
def parse_values(text: str) -> list[Any]:
    """``"1,2,0.5,true,none,abc"`` → ``[1, 2, 0.5, True, None, "abc"]`` (YAML scalars; none/None/null → None)."""
    import yaml

    if text.strip() == "":
        raise ValueError("a sweep parameter needs at least one value")
    out = []
    for v in (v.strip() for v in text.split(",")):
        out.append(None if v in ("none", "None", "null", "~") else yaml.safe_load(v))
    return out


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Cartesian product of a parameter grid, in a stable order."""
    if not grid:
        raise ValueError("a sweep needs at least one parameter (-p NAME v1,v2,...)")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def point_slug(point: dict[str, Any]) -> str:
    """A file-system-safe name for one grid point (``scale=smoke__seed=1``)."""
    parts = []
    for k, v in point.items():
        val = re.sub(r"[^A-Za-z0-9._-]+", "-", json.dumps(v) if not isinstance(v, str) else v)
        parts.append(f"{k}={val}")
    return "__".join(parts)


def _run_point(notebook: str, output: str, params: dict[str, Any]) -> tuple[str, float, str]:
    _single_thread_env()
    t0 = time.perf_counter()
    try:
        execute(Path(notebook), Path(output), params)
        return output, time.perf_counter() - t0, ""
    except NotebookFailure as err:
        return output, time.perf_counter() - t0, str(err)


@dataclass
class SweepResult:
    points: list[dict[str, Any]]
    dirs: list[Path]
    ran: list[Path]
    skipped: list[Path]
    failed: dict[Path, str]

    def table(self, metrics: Sequence[str] | None = None) -> str:
        """Markdown summary: one row per point, its parameters and each claim's ours/verdict."""
        rows, claim_ids = [], []
        for point, d in zip(self.points, self.dirs):
            vals: dict[str, str] = {}
            for p in sorted(d.glob("**/claims.json")):
                for r in Claims.load(p).rows:
                    if metrics and r.id not in metrics:
                        continue
                    if r.id not in claim_ids:
                        claim_ids.append(r.id)
                    from hgutils.repro import _fmt

                    vals[r.id] = f"{_fmt(r.ours)} ({r.verdict})"
            status = "failed" if d in self.failed else "ok"
            rows.append((point, status, vals))
        names = list(self.points[0]) if self.points else []
        head = "| " + " | ".join(names + ["status"] + claim_ids) + " |"
        sep = "|" + "---|" * (len(names) + 1 + len(claim_ids))
        body = [
            "| " + " | ".join([str(p[n]) for n in names] + [s] + [v.get(c, "—") for c in claim_ids]) + " |"
            for p, s, v in rows
        ]
        return "\n".join([head, sep, *body]) + "\n"


def sweep(
    notebook: str | os.PathLike,
    grid: dict[str, list[Any]],
    *,
    jobs: int = 1,
    out: str | os.PathLike | None = None,
    base: dict[str, Any] | None = None,
    notebook_dir: Path = NOTEBOOK_DIR,
) -> SweepResult:
    """Execute ``notebook`` at every point of ``grid`` (papermill), ``jobs`` points at a time.

    Each point writes ``<out>/<point>/run.ipynb`` and its ledger under ``<out>/<point>/``;
    points whose ``run.ipynb`` exists (i.e. completed) are skipped, so an interrupted sweep resumes.
    Worker processes and their kernels run with one BLAS thread each.
    """
    nb = resolve_notebook(notebook, notebook_dir)
    out = Path(out) if out else REPO_ROOT / "results" / "sweeps" / nb.stem
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1; got {jobs}")
    points = grid_points(grid)
    dirs = [out / point_slug(p) for p in points]
    todo, skipped = [], []
    for p, d in zip(points, dirs):
        if (d / "run.ipynb").exists():
            skipped.append(d)
        else:
            params = dict(base or {}) | p | {"results_dir": str(d.resolve())}
            todo.append((d, params))
    failed: dict[Path, str] = {}
    ran: list[Path] = []
    if todo:
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
            futs = {pool.submit(_run_point, str(nb), str(d / "run.ipynb"), params): d for d, params in todo}
            from hgutils.repro import progress

            for fut in progress(as_completed(futs), total=len(futs), desc=f"sweep {nb.stem}"):
                d = futs[fut]
                _, secs, err = fut.result()
                if err:
                    failed[d] = err
                    print(f"FAILED {d.name} after {secs:.0f} s: {err}", flush=True)
                else:
                    ran.append(d)
                    print(f"done {d.name} in {secs:.0f} s", flush=True)
    return SweepResult(points, dirs, ran, skipped, failed)
