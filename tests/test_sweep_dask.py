"""Dask: a sweep on a LocalCluster gives the local path's ledgers, and a point whose worker dies is retried."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import psutil
import pytest
from distributed import Client, LocalCluster

from hgutils import runner

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
XS = [0.25, 0.5, 1.0, 2.0]
QUIET = {"echo": lambda s: None}


def _ledgers(res: runner.SweepResult) -> dict[str, str]:
    """Each point's claims.json text, keyed by its x value."""
    out = {}
    for point, d in zip(res.points, res.dirs):
        (ledger,) = d.glob("smoke/99_tiny/claims.json")
        out[str(point["x"])] = ledger.read_text()
    return out


class _KillOneWorkerMidPoint(threading.Thread):
    """Kill (SIGKILL) the first worker seen running a point's kernel; remember the worker and the point."""

    def __init__(self, client: Client) -> None:
        super().__init__(daemon=True)
        self.client, self.killed_pid, self.point, self.error = client, None, None, None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            pids = self.client.run(os.getpid)
            while not self.stop.is_set() and self.killed_pid is None:
                for addr, keys in self.client.processing().items():
                    if not keys or addr not in pids:
                        continue
                    worker = psutil.Process(pids[addr])
                    if any("ipykernel" in " ".join(c.cmdline()) for c in worker.children(recursive=True)):
                        self.point = str(keys[0]).rsplit("-", 1)[0].removeprefix("hgutils-")  # hgutils-<point>-<uuid>
                        worker.kill()
                        self.killed_pid = worker.pid
                        return
                time.sleep(0.1)
        except Exception as err:  # reported by the test
            self.error = err


@pytest.mark.slow
def test_dask_local_cluster_matches_local_path_and_retries_a_killed_worker(tmp_path):
    # the local path (2 worker processes) as the reference
    local = runner.sweep(TINY, {"x": XS}, scale="smoke", fixed={"sleep": 2}, jobs=2, out=tmp_path / "local", **QUIET)
    assert len(local.ran) == 4

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            killer = _KillOneWorkerMidPoint(client)
            killer.start()
            try:
                res = runner.sweep(
                    TINY,
                    {"x": XS},
                    scale="smoke",
                    fixed={"sleep": 2},
                    scheduler=cluster.scheduler_address,
                    out=tmp_path / "dask",
                    **QUIET,
                )
            finally:
                killer.stop.set()
                killer.join(timeout=10)
    assert killer.error is None, killer.error
    assert killer.killed_pid is not None, "no worker was caught mid-point"
    assert not psutil.pid_exists(killer.killed_pid) or psutil.Process(killer.killed_pid).status() == "zombie"

    # every point completed, the killed one included (rescheduled on a live worker), same ledgers
    assert len(res.ran) == 4 and not res.failed, res.failed
    assert _ledgers(res) == _ledgers(local)
    workers = {d.name: json.loads((d / "run.json").read_text())["worker"] for d in res.dirs}
    assert killer.point in workers, (killer.point, workers)
    assert not workers[killer.point].endswith(f":{killer.killed_pid}")
    # the client wrote everything: nothing partial or temporary in the output
    assert not [p for p in (tmp_path / "dask").rglob("*") if p.name.startswith(".")]
