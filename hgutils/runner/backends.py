"""Where jobs run: local worker processes, or a Dask cluster; and how a run stops on Ctrl-C.

- :class:`LocalBackend` -- ``--jobs N`` worker processes (``concurrent.futures``) on this machine;
- :class:`DaskBackend` -- ``--cluster local[:N]`` (a ``dask.distributed.LocalCluster`` of N
  single-threaded worker processes) or ``--scheduler tcp://HOST:8786`` (an existing cluster);
- :func:`run_jobs` -- submits the jobs, hands each result to the caller as it arrives (the caller
  writes it; a completed job is never lost), and on SIGINT/SIGTERM cancels queued jobs, terminates
  the running kernels and the workers this run started, and returns ``interrupted=True``.

Signals that arrive while a result is being written are held until the write finished, so an
interruption never leaves a half-written result.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from hgutils.runner.execute import Job, JobResult, kill_run_kernels, run_job
from hgutils.runner.processes import SignalGuard, descendants, make_staging, terminate_processes, watch_parent


# --------------------------------------------------------------------------------------------
# local worker processes
# --------------------------------------------------------------------------------------------
def _worker_init(parent: int, staging: str) -> None:
    """Workers leave SIGINT to the parent (a terminal Ctrl-C reaches the whole process group), and
    exit with their kernels when the parent is gone (:func:`~hgutils.runner.processes.watch_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    watch_parent(parent, staging)


class LocalBackend:
    """``workers`` processes on this machine, one job at a time each (``concurrent.futures``)."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"--jobs must be an integer >= 1; got {workers!r}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._before: set[int] = set()
        self._staging: Path | None = None

    def describe(self) -> str:
        return f"{self.workers} local worker process{'es' if self.workers > 1 else ''}"

    def __enter__(self) -> LocalBackend:

        self._before = descendants()
        self._staging = make_staging()  # stale staging folders of killed runs are removed first
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers, initializer=_worker_init, initargs=(os.getpid(), str(self._staging))
        )
        return self

    def __exit__(self, *exc: Any) -> None:

        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)

    def check(self, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
        """Run ``fn(*args)`` where the jobs will run (here: this machine)."""
        return {"localhost": fn(*args)}

    def run(
        self,
        jobs: list[Job],
        on_start: Callable[[Job], None] | None = None,
        tick: Callable[[], None] | None = None,
    ) -> Iterator[tuple[Job, JobResult]]:
        """Submit every job; yield ``(job, result)`` as each finishes; call ``tick()`` every poll."""
        assert self._pool is not None, "use the backend as a context manager"
        futs: dict[Future, Job] = {self._pool.submit(run_job, j, str(self._staging)): j for j in jobs}
        order = list(futs)
        pending, started = set(futs), set()
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            if tick is not None:
                tick()
            if on_start is not None:
                # the pool pre-queues one job more than it has workers: "running" is not "started";
                # jobs start in submission order, at most one per worker
                busy = len(started & pending)
                for f in order:
                    if busy >= self.workers:
                        break
                    if f in pending and f not in started and f.running():
                        started.add(f)
                        busy += 1
                        on_start(futs[f])
            for f in done:
                job = futs[f]
                if on_start is not None and f not in started:
                    started.add(f)
                    on_start(job)
                try:
                    yield job, f.result()
                except Exception as err:  # the worker died (BrokenProcessPool) or run_job itself failed
                    yield job, JobResult(job.label, False, 0.0, error=f"{type(err).__name__}: {err}")

    def cancel(self) -> None:
        """Drop queued jobs, terminate the workers and their kernels."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        terminate_processes(descendants() - self._before)


# --------------------------------------------------------------------------------------------
# Dask
# --------------------------------------------------------------------------------------------
def parse_cluster(spec: str) -> int | None:
    """``"local"`` → ``None`` (one worker per CPU), ``"local:4"`` → ``4``.

    Raises
    ------
    ValueError
        For anything else.
    """
    if spec == "local":
        return None
    if spec.startswith("local:") and spec[6:].isdigit() and int(spec[6:]) >= 1:
        return int(spec[6:])
    raise ValueError(f"--cluster must be 'local' or 'local:N' with N >= 1 workers; got {spec!r}")


class DaskBackend:
    """Jobs as Dask tasks: on a ``LocalCluster`` this run starts, or on a cluster at ``scheduler``.

    Each job is one task, so the scheduler's own machinery does the queueing, and a task whose
    worker dies is rescheduled on another worker (up to ``distributed.scheduler.allowed-failures``
    times). Results (the output files as bytes) travel back to the client, which writes them.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, n_workers: int | None = None, timeout: float = 30.0) -> None:
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.timeout = timeout
        self.client: Any = None
        self.cluster: Any = None
        self._futures: list[Any] = []
        self._run_ids: set[str] = set()
        self._before: set[int] = set()

    def describe(self) -> str:
        if self.scheduler:
            return f"the Dask cluster at {self.scheduler}"
        n = self.n_workers or os.cpu_count() or 1
        return f"a Dask LocalCluster of {n} single-threaded worker process{'es' if n > 1 else ''}"

    def __enter__(self) -> DaskBackend:
        try:
            from distributed import Client, LocalCluster
        except ImportError as err:  # pragma: no cover - distributed is a dependency
            raise ValueError(f"Dask is not installed ({err}); pip install 'distributed'") from None
        from hgutils.runner.records import library_fingerprint

        self._before = descendants()
        try:
            if self.scheduler:
                self.client = Client(self.scheduler, timeout=self.timeout)
            else:
                self.cluster = LocalCluster(
                    n_workers=self.n_workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                self.client = Client(self.cluster)
        except OSError as err:
            self.__exit__()
            raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler}: {err}") from None
        try:
            self.client.wait_for_workers(1, timeout=self.timeout)
        except Exception:
            self.__exit__()
            raise ValueError(f"no Dask worker joined {self.describe()} within {self.timeout:.0f} s") from None
        mine = library_fingerprint()
        theirs = self.client.run(library_fingerprint)
        wrong = {w: fp for w, fp in theirs.items() if fp != mine}
        if wrong:
            self.__exit__()
            w, fp = next(iter(wrong.items()))
            raise ValueError(
                f"Dask worker {w} runs different hgutils code (fingerprint {fp}, here {mine}); "
                "install the same version on every worker"
            )
        return self

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):
            if self.client is not None:
                self.client.close(timeout=10)
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close(timeout=10)
        self.client = self.cluster = None

    def check(self, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
        """Run ``fn(*args)`` on every worker (e.g. the data-folder check); ``{worker: result}``.

        A check that raises on a worker raises here, its message prefixed with the worker.
        """
        out = {}
        for worker, value in self.client.run(_capture, fn, *args).items():
            if isinstance(value, tuple) and value and value[0] == "error":
                raise ValueError(f"on Dask worker {worker}: {value[1]}")
            out[worker] = value
        return out

    def run(
        self,
        jobs: list[Job],
        on_start: Callable[[Job], None] | None = None,
        tick: Callable[[], None] | None = None,
    ) -> Iterator[tuple[Job, JobResult]]:
        """Submit every job as a task; yield ``(job, result)`` as each finishes; call ``tick()`` every poll."""
        from distributed import KilledWorker

        futs = {}
        for job in jobs:
            self._run_ids.add(job.run_id)
            key = f"hgutils-{job.label}-{uuid.uuid4().hex[:8]}"
            futs[self.client.submit(run_job, job, None, key=key, pure=False, retries=0)] = job
        self._futures = list(futs)
        pending = set(futs)
        while pending:
            if tick is not None:
                tick()
            done = {f for f in pending if f.done()}
            if not done:
                time.sleep(0.2)
                continue
            pending -= done
            for f in sorted(done, key=lambda f: futs[f].label):
                job = futs[f]
                try:
                    yield job, f.result()
                except KilledWorker as err:
                    yield job, JobResult(job.label, False, 0.0, error=f"its worker died repeatedly ({err})")
                except Exception as err:
                    yield job, JobResult(job.label, False, 0.0, error=f"{type(err).__name__}: {err}")

    def cancel(self) -> None:
        """Cancel queued tasks, stop the running kernels on every worker, close a cluster this run started."""
        with contextlib.suppress(Exception):
            self.client.cancel(self._futures, force=True)
        for run_id in self._run_ids:
            with contextlib.suppress(Exception):
                self.client.run(kill_run_kernels, run_id, wait=True)
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.client.close(timeout=5)
            with contextlib.suppress(Exception):
                self.cluster.close(timeout=5)
            self.client = self.cluster = None
            for run_id in self._run_ids:
                kill_run_kernels(run_id)
            terminate_processes(_workers_left(descendants() - self._before))


def _workers_left(pids: set[int]) -> set[int]:
    """Of ``pids``, the ones that are not multiprocessing's shared helper (the resource tracker)."""
    import psutil

    keep = set()
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            if "resource_tracker" not in " ".join(psutil.Process(pid).cmdline()):
                keep.add(pid)
    return keep


def _capture(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as err:
        return ("error", str(err))


def runs_here(backend: object) -> bool:
    """Whether ``backend``'s jobs run on this machine (local workers, a ``LocalCluster``), so the
    folders they write (the cache) can be checked from here; not so on a ``--scheduler`` cluster."""
    return not (isinstance(backend, DaskBackend) and backend.scheduler)


def make_backend(jobs: int = 1, cluster: str | None = None, scheduler: str | None = None) -> LocalBackend | DaskBackend:
    """The backend for the CLI options ``--jobs``, ``--cluster local[:N]`` and ``--scheduler ADDRESS``.

    Raises
    ------
    ValueError
        For ``--jobs < 1``, a malformed ``--cluster``, or ``--cluster`` and ``--scheduler`` together.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1; got {jobs!r}")
    if cluster and scheduler:
        raise ValueError("give --cluster or --scheduler, not both")
    if scheduler:
        if "://" not in scheduler:
            raise ValueError(f"--scheduler must be an address like tcp://HOST:8786; got {scheduler!r}")
        return DaskBackend(scheduler=scheduler)
    if cluster:
        n = parse_cluster(cluster)
        return DaskBackend(n_workers=n if n is not None else (jobs if jobs > 1 else None))
    return LocalBackend(jobs)


# --------------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------------
def run_jobs(
    jobs: list[Job],
    backend: LocalBackend | DaskBackend,
    on_done: Callable[[Job, JobResult], None],
    on_start: Callable[[Job], None] | None = None,
) -> bool:
    """Run ``jobs`` on an entered ``backend``; call ``on_done`` for each result as it arrives.

    ``on_done`` runs with signals deferred (a result is written whole or not at all). Returns
    ``True`` if the run was interrupted (SIGINT/SIGTERM): queued jobs were cancelled and running
    kernels and workers terminated; results already handed to ``on_done`` are kept.
    """
    if not jobs:
        return False
    with SignalGuard() as guard:
        try:
            for job, result in backend.run(jobs, on_start, tick=guard.check):
                with guard.deferred():
                    on_done(job, result)
            guard.check()
        except KeyboardInterrupt:
            guard.ignore()
            backend.cancel()
            return True
    return False


def new_run_id() -> str:
    """A fresh id marking the kernels of one run (see :func:`~hgutils.runner.execute.kill_run_kernels`)."""
    return uuid.uuid4().hex[:12]
