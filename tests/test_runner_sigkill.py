"""A runner killed with SIGKILL cannot clean up (issue 51): its local worker notices that its parent is
gone and exits within seconds, with its kernel, and the next run removes the staging folder
(``$TMPDIR/hgutils-run-*``) the killed run left. One kernel starts here (docs/guarantees.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
from _cli_helpers import marked_processes

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
REPO = Path(__file__).resolve().parent.parent


_marked = marked_processes


def _wait_for(condition, timeout: float) -> float:
    t0 = time.monotonic()
    while not condition():
        if time.monotonic() - t0 > timeout:
            return float("inf")
        time.sleep(0.1)
    return time.monotonic() - t0


def _is_kernel(p: psutil.Process) -> bool:
    try:
        return "ipykernel" in " ".join(p.cmdline())
    except psutil.Error:
        return False


def test_a_sigkilled_runners_worker_and_kernel_exit_within_seconds(tmp_path):
    nbdir, tmp, marker = tmp_path / "notebooks", tmp_path / "tmp", uuid.uuid4().hex
    nbdir.mkdir()
    tmp.mkdir()
    shutil.copy(TINY, nbdir / "01_tiny.ipynb")
    cmd = [sys.executable, "-m", "hgutils", "reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke"]
    cmd += ["--out", str(tmp_path / "runs"), "-p", "sleep", "120"]
    env = dict(os.environ, HGUTILS_TEST_MARKER=marker, TMPDIR=str(tmp))
    log = tmp_path / "runner.log"
    with open(log, "w") as fh:
        runner = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT)
    left: list[psutil.Process] = []
    try:  # a loaded machine can take minutes to start a kernel; the wait ends as soon as one runs
        started = _wait_for(lambda: runner.poll() is not None or any(_is_kernel(p) for p in _marked(marker)), 300)
        assert started < 300 and runner.poll() is None, f"no kernel started: {log.read_text()[-2000:]}"
        time.sleep(1.0)  # the kernel is executing the notebook (it sleeps 120 s)
        left = [p for p in _marked(marker) if p.pid != runner.pid]
        assert left and any(_is_kernel(p) for p in left)
        assert len(list(tmp.glob("hgutils-run-*"))) == 1
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
        took = _wait_for(lambda: not _marked(marker), 15)
        assert took < 10, (
            f"the worker or its kernel outlived the killed runner: {[p.cmdline() for p in _marked(marker)]}"
        )
        # the worker removed the run's staging folder on its way out
        assert list(tmp.glob("hgutils-run-*")) == []
    finally:
        if runner.poll() is None:
            runner.kill()
        for p in left:  # processes this test started, by id
            if p.is_running():
                p.kill()


def test_the_next_run_removes_the_staging_folders_of_runs_that_are_gone(tmp_path, monkeypatch):
    import tempfile

    from hgutils.runner import LocalBackend
    from hgutils.runner.processes import OWNER_FILE, OWNERLESS_AFTER_S, remove_stale_staging

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = os.uname().nodename
    stale = tmp_path / "hgutils-run-stale"
    (stale / "hgutils-job-x").mkdir(parents=True)  # what a SIGKILLed run leaves
    (stale / OWNER_FILE).write_text(json.dumps({"pid": dead.pid, "host": host, "process_started": 1.0}))
    live = tmp_path / "hgutils-run-live"
    live.mkdir()
    me = psutil.Process()
    (live / OWNER_FILE).write_text(json.dumps({"pid": me.pid, "host": host, "process_started": me.create_time()}))
    elsewhere = tmp_path / "hgutils-run-elsewhere"  # another host's run cannot be seen: kept
    elsewhere.mkdir()
    (elsewhere / OWNER_FILE).write_text(json.dumps({"pid": dead.pid, "host": "another-host"}))
    old_empty, new_empty = tmp_path / "hgutils-run-old", tmp_path / "hgutils-run-new"  # written by older hgutils
    old_empty.mkdir()
    new_empty.mkdir()
    past = time.time() - OWNERLESS_AFTER_S - 60
    os.utime(old_empty, (past, past))
    with LocalBackend(1) as backend:  # a new run's staging folder, with its owner record
        mine = backend._staging
        assert json.loads((mine / OWNER_FILE).read_text())["pid"] == os.getpid()
        assert not stale.exists() and not old_empty.exists()
        assert live.exists() and elsewhere.exists() and new_empty.exists()
    assert not mine.exists()
    assert remove_stale_staging(tmp_path) == []  # what is left belongs to live runs or cannot be judged
