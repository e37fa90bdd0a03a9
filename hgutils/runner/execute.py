"""Executing one notebook: papermill into a private staging folder, outputs returned as bytes.

:func:`run_job` is what a worker runs, in a local worker process or on a Dask worker on another
machine: it writes the notebook (sent as bytes) into a fresh staging folder, executes it with
``results_dir``/``figures_dir`` pointing into that folder, and returns every file the run wrote
(executed copy, ledger, tables, figures) as ``{relative path: bytes}``. The client writes them
under the run's output root (:mod:`hgutils.runner.records`), so a worker never writes there, no
shared filesystem is needed beyond the data, and a worker that dies leaves nothing half-written.

Every kernel a job starts carries ``HGUTILS_RUN_ID`` in its environment, so
:func:`kill_run_kernels` can stop exactly the kernels of one run, and ``HGUTILS_CACHE`` pointing
under the run's output root (:func:`run_cache`), so a run's cache entries stay under ``--out``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hgutils.runner.params import to_papermill

RUN_ID_ENV = "HGUTILS_RUN_ID"
CACHE_ENV = "HGUTILS_CACHE"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


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
        self.executed, self.source = executed, source
        extra = f" (executed copy with the error: {executed})" if executed else ""
        super().__init__(f"{notebook}: {where} raised {ename}: {evalue}{extra}")

    def details(self) -> dict[str, Any]:
        """The fields needed to rebuild this failure elsewhere (with another ``executed`` path)."""
        return {
            "notebook": self.notebook,
            "cell_index": self.cell_index,
            "ename": self.ename,
            "evalue": self.evalue,
            "source": self.source,
        }


@functools.lru_cache(maxsize=1)
def _kernel_manager_class() -> type:
    """The kernel manager the runner's kernels start with: connection file in ``$JUPYTER_RUNTIME_DIR``, encrypted.

    Without a connection file name, jupyter_client writes one as ``$TMPDIR/tmp<8 random characters>.json`` (ports
    and the HMAC key), which a kernel killed by Ctrl-C leaves behind; :func:`execute` points
    ``$JUPYTER_RUNTIME_DIR`` at a folder of its own, removed with it. When libzmq has CURVE, the
    manager provisions keys and the kernel's channels are encrypted (so Jupyter does not warn
    "Kernel is running over TCP without encryption").
    """

    import zmq
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.paths import jupyter_runtime_dir
    from traitlets import default

    class RunnerKernelManager(AsyncKernelManager):
        @default("connection_file")
        def _connection_file_default(self) -> str:
            return os.path.join(jupyter_runtime_dir(), f"kernel-{uuid.uuid4().hex}.json")

        @default("transport_encryption")
        def _transport_encryption_default(self) -> str:
            return "required" if zmq.has("curve") else "disabled"

    return RunnerKernelManager


def execute(
    notebook: Path,
    output: Path,
    parameters: dict[str, Any],
    *,
    cwd: Path | None = None,
    log_output: bool = False,
    progress_bar: bool = False,
    runtime_dir: Path | None = None,
) -> Path:
    """Execute ``notebook`` with papermill into ``output``, atomically.

    The executed copy is written to a hidden temporary name and renamed to ``output`` only when
    every cell ran. On an error it is kept as ``<output stem>.failed.ipynb`` and
    :class:`NotebookFailure` is raised naming the notebook and the failing cell. The kernel's
    connection file lies in a fresh folder under ``runtime_dir`` (default: the system's temporary
    folder), removed when the call returns (:func:`_kernel_manager_class`).
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    # kernels inherit this: no tqdm bars in executed notebooks (an explicit setting wins)
    os.environ.setdefault("HGUTILS_PROGRESS", "0")
    tmp = output.with_name(f".{output.stem}.running.ipynb")
    failed = output.with_name(f"{output.stem}.failed.ipynb")
    if runtime_dir is not None:
        Path(runtime_dir).mkdir(parents=True, exist_ok=True)
    runtime = Path(tempfile.mkdtemp(prefix="hgutils-kernel-", dir=runtime_dir))
    try:
        with _environ(JUPYTER_RUNTIME_DIR=str(runtime)):
            pm.execute_notebook(
                str(notebook),
                str(tmp),
                parameters={k: to_papermill(v) for k, v in parameters.items()},
                kernel_name="python3",
                cwd=str(cwd or Path(notebook).parent),
                log_output=log_output,
                progress_bar=progress_bar,
                kernel_manager_class=_kernel_manager_class(),
            )
    except PapermillExecutionError as err:
        os.replace(tmp, failed)
        raise NotebookFailure(
            Path(notebook).name, err.cell_index, err.ename, str(err.evalue), failed, err.source
        ) from None
    except Exception as err:  # kernel died, notebook unreadable, ...
        if tmp.exists():
            os.replace(tmp, failed)
        raise NotebookFailure(
            Path(notebook).name, None, type(err).__name__, str(err), failed if failed.exists() else None
        ) from None
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    os.replace(tmp, output)
    if failed.exists():
        failed.unlink()
    return output


def run_cache(root: str | os.PathLike) -> str | None:
    """The cache folder of a run whose output root is ``root``: ``<root>/.cache``, absolute.

    ``None`` when ``$HGUTILS_CACHE`` is set: an explicit cache folder wins (its kernels inherit it).
    """
    if os.environ.get(CACHE_ENV):
        return None
    return str(Path(root).expanduser().resolve() / ".cache")


# --------------------------------------------------------------------------------------------
# jobs: what a worker receives and returns
# --------------------------------------------------------------------------------------------
@dataclass
class Job:
    """One notebook execution, self-contained so it can be pickled to another machine.

    ``executed`` is the executed copy's path relative to the job's output root (``run.ipynb`` for a
    sweep point, ``<scale>/<stem>.ipynb`` for ``reproduce``); ``params`` are the notebook's
    parameters without the output folders, which :func:`run_job` sets; ``cache`` is the kernel's
    ``$HGUTILS_CACHE`` (:func:`run_cache`; ``None``: the kernel inherits the environment's).
    """

    label: str
    notebook: str
    source: bytes
    params: dict[str, Any]
    executed: str
    key: dict[str, Any]
    run_id: str
    single_thread: bool = True
    log_output: bool = False
    estimate_s: float | None = None
    cache: str | None = None


@dataclass
class JobResult:
    """What came back from a worker: ``files`` (relative path → bytes) and how the run went."""

    label: str
    ok: bool
    seconds: float
    files: dict[str, bytes] = field(default_factory=dict)
    failure: dict[str, Any] | None = None
    error: str = ""
    worker: str = ""
    library: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """Set environment variables for the duration (restored afterwards: tests call jobs in-process)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _collect(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_job(job: Job, staging_root: str | None = None) -> JobResult:
    """Execute ``job`` in a fresh staging folder and return its outputs as bytes (see module docstring).

    A notebook error is returned as ``ok=False`` with the failed executed copy in ``files`` and the
    failing cell in ``failure``; the staging folder is always removed.
    """
    from hgutils.runner.datacheck import data_summary
    from hgutils.runner.records import library_fingerprint

    t0 = time.perf_counter()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    staging = Path(tempfile.mkdtemp(prefix="hgutils-job-", dir=staging_root))
    env = {"HGUTILS_PROGRESS": "0", RUN_ID_ENV: job.run_id, "JUPYTER_RUNTIME_DIR": str(staging / "runtime")}
    if job.single_thread:
        env.update({v: "1" for v in _THREAD_VARS})
    if job.cache:
        env[CACHE_ENV] = job.cache
    if job.log_output:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        src = staging / "input" / Path(job.notebook).name
        src.parent.mkdir(parents=True)
        src.write_bytes(job.source)
        out = staging / "out"
        params = dict(job.params) | {"results_dir": str(out), "figures_dir": str(out / "figures")}
        home = Path(job.notebook).parent
        cwd = home if home.is_dir() else src.parent
        with _environ(**env):
            try:
                execute(
                    src, out / job.executed, params, cwd=cwd, log_output=job.log_output, runtime_dir=staging / "runtime"
                )
            except NotebookFailure as err:
                failed = {}
                if err.executed is not None and err.executed.exists():
                    failed[err.executed.relative_to(out).as_posix()] = err.executed.read_bytes()
                return JobResult(
                    job.label,
                    False,
                    time.perf_counter() - t0,
                    failed,
                    err.details(),
                    str(err),
                    worker,
                    library_fingerprint(),
                )
        return JobResult(
            job.label,
            True,
            time.perf_counter() - t0,
            _collect(out),
            worker=worker,
            library=library_fingerprint(),
            data=data_summary(job.params.get("data_dir")),
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def kill_run_kernels(run_id: str, grace: float = 3.0) -> int:
    """Terminate this process's descendant processes started for ``run_id``; return how many.

    Runs on workers (``client.run``) when a run is cancelled: a Dask task cannot be stopped from
    outside, but killing its kernel makes papermill return at once.
    """
    import psutil

    procs = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.environ().get(RUN_ID_ENV) == run_id:
                procs.append(child)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    return len(procs)
